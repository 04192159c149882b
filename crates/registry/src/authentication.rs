//! The resources of authentication: `serviceaccounts/token` (TokenRequest),
//! `authentication.k8s.io/v1` TokenReviews and SelfSubjectReviews, the lookups the token
//! authenticators make, and the filling of legacy service-account token Secrets.

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use base64::Engine;
use capstan_api::{NodeStrategy, PodStrategy, SecretStrategy, ServiceAccountStrategy};
use capstan_auth::UserInfo;
use capstan_auth::authn::AuthenticatorChain;
use capstan_auth::authn::jwt::SigningKey;
use capstan_auth::authn::serviceaccount::{
    LEGACY_ISSUER, ObjectLookup, ObjectState, Ref, SecretState, ServiceAccountTokens, TokenSpec,
    service_account_user,
};
use capstan_meta::{ApiError, FieldError, GroupResource, ResourceDescriptor};
use k8s_openapi::api::authentication::v1::{
    BoundObjectReference, SelfSubjectReview, SelfSubjectReviewStatus, TokenRequest,
    TokenRequestStatus, TokenReview, TokenReviewStatus, UserInfo as ApiUserInfo,
};
use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use serde::Deserialize;

use crate::codec::{decode, decode_value};
use crate::error::{Error, Result};
use crate::generic::GenericStore;
use crate::hooks::CreateHook;
use crate::options::WriteOptions;
use crate::rest::{Encoded, ResponseStatus, RestStorage};

/// The type of legacy service-account token Secrets.
pub const SERVICE_ACCOUNT_TOKEN_TYPE: &str = "kubernetes.io/service-account-token";
const SA_NAME_ANNOTATION: &str = "kubernetes.io/service-account.name";
const SA_UID_ANNOTATION: &str = "kubernetes.io/service-account.uid";
const GROUP: &str = "authentication.k8s.io";

/// The fields of stored objects the lookups read.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct Peek {
    #[serde(default)]
    metadata: PeekMeta,
    #[serde(default)]
    spec: PeekSpec,
    #[serde(default, rename = "type")]
    type_: String,
    #[serde(default)]
    data: BTreeMap<String, String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct PeekMeta {
    #[serde(default)]
    uid: String,
    #[serde(default)]
    deletion_timestamp: Option<String>,
    #[serde(default)]
    labels: BTreeMap<String, String>,
}

#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct PeekSpec {
    #[serde(default)]
    service_account_name: Option<String>,
    #[serde(default)]
    node_name: Option<String>,
}

impl Peek {
    fn state(&self) -> ObjectState {
        ObjectState {
            uid: self.metadata.uid.clone(),
            deleting_since: self
                .metadata
                .deletion_timestamp
                .as_deref()
                .and_then(|t| t.parse::<jiff::Timestamp>().ok())
                .map(|t| t.as_second()),
        }
    }
}

async fn peek<S>(store: &GenericStore<S>, namespace: &str, name: &str) -> Result<Option<Peek>>
where
    S: capstan_meta::Strategy,
    S::Object: schemars::JsonSchema,
{
    match store.cached_json(namespace, name).await? {
        None => Ok(None),
        Some(json) => Ok(Some(serde_json::from_slice(&json).map_err(Error::Encode)?)),
    }
}

/// Reads service accounts, pods, secrets and nodes for the authenticators (through the watch
/// caches: no storage read per request).
#[derive(Clone)]
pub struct StoreLookup {
    /// Service accounts.
    pub service_accounts: Arc<GenericStore<ServiceAccountStrategy>>,
    /// Pods.
    pub pods: Arc<GenericStore<PodStrategy>>,
    /// Secrets.
    pub secrets: Arc<GenericStore<SecretStrategy>>,
    /// Nodes.
    pub nodes: Arc<GenericStore<NodeStrategy>>,
}

fn lookup_error(e: Error) -> String {
    format!("looking up a bound object: {e}")
}

#[async_trait]
impl ObjectLookup for StoreLookup {
    async fn service_account(
        &self,
        namespace: &str,
        name: &str,
    ) -> std::result::Result<Option<ObjectState>, String> {
        let found = peek(&self.service_accounts, namespace, name).await;
        Ok(found.map_err(lookup_error)?.map(|p| p.state()))
    }

    async fn pod(
        &self,
        namespace: &str,
        name: &str,
    ) -> std::result::Result<Option<ObjectState>, String> {
        let found = peek(&self.pods, namespace, name).await;
        Ok(found.map_err(lookup_error)?.map(|p| p.state()))
    }

    async fn secret(
        &self,
        namespace: &str,
        name: &str,
    ) -> std::result::Result<Option<SecretState>, String> {
        let Some(found) = peek(&self.secrets, namespace, name)
            .await
            .map_err(lookup_error)?
        else {
            return Ok(None);
        };
        let b64 = base64::engine::general_purpose::STANDARD;
        Ok(Some(SecretState {
            object: found.state(),
            data: found
                .data
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), b64.decode(v).ok()?)))
                .collect(),
            labels: found.metadata.labels.clone(),
            type_: found.type_,
        }))
    }

    async fn node(&self, name: &str) -> std::result::Result<Option<ObjectState>, String> {
        let found = peek(&self.nodes, "", name).await;
        Ok(found.map_err(lookup_error)?.map(|p| p.state()))
    }
}

fn created<T: serde::Serialize>(obj: &T) -> Result<Encoded> {
    Ok(Encoded {
        body: serde_json::to_vec(obj).map_err(Error::Encode)?.into(),
        warnings: Vec::new(),
        status: ResponseStatus::Created,
    })
}

fn api_user(user: &UserInfo) -> ApiUserInfo {
    ApiUserInfo {
        username: Some(user.name.clone()),
        uid: (!user.uid.is_empty()).then(|| user.uid.clone()),
        groups: (!user.groups.is_empty()).then(|| user.groups.clone()),
        extra: (!user.extra.is_empty()).then(|| user.extra.clone()),
    }
}

fn review_descriptor(resource: &str, kind: &str) -> ResourceDescriptor {
    ResourceDescriptor {
        group: GROUP.into(),
        version: "v1".into(),
        kind: kind.into(),
        resource: resource.into(),
        singular: kind.to_ascii_lowercase(),
        namespaced: false,
        verbs: vec!["create".into()],
        ..Default::default()
    }
}

/// `POST serviceaccounts/{name}/token`: a bound token for the account.
pub struct TokenRequestRest {
    lookup: StoreLookup,
    tokens: Arc<ServiceAccountTokens>,
    descriptor: ResourceDescriptor,
    body: ResourceDescriptor,
}

impl TokenRequestRest {
    /// The subresource, issuing with `tokens` and checking bound objects through `lookup`.
    pub fn new(lookup: StoreLookup, tokens: Arc<ServiceAccountTokens>) -> Self {
        let mut descriptor =
            lookup
                .service_accounts
                .descriptor()
                .subresource("token", "TokenRequest", &["create"]);
        let body = ResourceDescriptor {
            group: GROUP.into(),
            ..descriptor.clone()
        };
        descriptor.response_group_version = Some((GROUP.into(), "v1".into()));
        Self {
            lookup,
            tokens,
            descriptor,
            body,
        }
    }

    /// The bound object's reference for the claims (and the node of a bound pod).
    async fn bind(
        &self,
        namespace: &str,
        account: &str,
        bound: &BoundObjectReference,
        spec: &mut TokenSpec,
    ) -> Result<()> {
        let kind = bound.kind.as_deref().unwrap_or_default();
        let name = bound.name.as_deref().unwrap_or_default();
        let api_version = bound.api_version.as_deref().unwrap_or("v1");
        let not_found = |resource: &str| -> Error {
            ApiError::not_found(&GroupResource::new("", resource), name).into()
        };
        let uid = match (api_version, kind) {
            ("v1", "Pod") => {
                let pod = peek(&self.lookup.pods, namespace, name)
                    .await?
                    .ok_or_else(|| not_found("pods"))?;
                let pod_account = pod
                    .spec
                    .service_account_name
                    .as_deref()
                    .unwrap_or("default");
                if pod_account != account {
                    return Err(ApiError::bad_request(format!(
                        "cannot bind token for serviceaccount {account:?} to pod running with different serviceaccount name."
                    ))
                    .into());
                }
                if let Some(node) = pod.spec.node_name.as_deref().filter(|n| !n.is_empty()) {
                    let uid = peek(&self.lookup.nodes, "", node)
                        .await?
                        .map(|n| n.metadata.uid)
                        .unwrap_or_default();
                    spec.node = Some(Ref {
                        name: node.into(),
                        uid,
                    });
                }
                let uid = pod.metadata.uid.clone();
                spec.pod = Some(Ref {
                    name: name.into(),
                    uid: uid.clone(),
                });
                uid
            }
            ("v1", "Secret") => {
                let secret = peek(&self.lookup.secrets, namespace, name)
                    .await?
                    .ok_or_else(|| not_found("secrets"))?;
                let uid = secret.metadata.uid;
                spec.secret = Some(Ref {
                    name: name.into(),
                    uid: uid.clone(),
                });
                uid
            }
            ("v1", "Node") => {
                let node = peek(&self.lookup.nodes, "", name)
                    .await?
                    .ok_or_else(|| not_found("nodes"))?;
                let uid = node.metadata.uid;
                spec.node = Some(Ref {
                    name: name.into(),
                    uid: uid.clone(),
                });
                uid
            }
            _ => {
                let group_version = if api_version.contains('/') {
                    api_version.to_string()
                } else {
                    format!("/{api_version}")
                };
                return Err(ApiError::bad_request(format!(
                    "cannot bind token to object of type {group_version}, Kind={kind}"
                ))
                .into());
            }
        };
        if let Some(want) = bound.uid.as_deref().filter(|u| !u.is_empty())
            && want != uid
        {
            return Err(ApiError::conflict(
                &GroupResource::new("", kind),
                name,
                &format!(
                    "the UID in the bound object reference ({want}) does not match the UID in record. The object might have been deleted and then recreated"
                ),
            )
            .into());
        }
        Ok(())
    }
}

#[async_trait]
impl RestStorage for TokenRequestRest {
    fn descriptor(&self) -> &ResourceDescriptor {
        &self.descriptor
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<TokenRequest>()
    }

    async fn create_for(
        &self,
        namespace: &str,
        name: &str,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        // The status is the server's to fill: kubectl sends an empty one that the typed
        // status (whose fields are required) would refuse.
        let (mut value, _) =
            decode::<serde_json::Value>(body, &self.body, options.field_validation)?;
        if let Some(object) = value.as_object_mut() {
            object.remove("status");
        }
        let (mut request, _) =
            decode_value::<TokenRequest>(value, &self.body, options.field_validation)?;
        // Validation errors name the request as it named itself (usually not at all).
        let own_name = request.metadata.name.clone().unwrap_or_default();
        match request.metadata.name.as_deref() {
            None | Some("") => request.metadata.name = Some(name.to_string()),
            Some(given) if given != name => {
                return Err(ApiError::bad_request(
                    "name in URL does not match name in TokenRequest object",
                )
                .into());
            }
            Some(_) => {}
        }
        let requested = request
            .spec
            .get_or_insert_with(Default::default)
            .expiration_seconds
            .unwrap_or(3600);
        let mut errors = Vec::new();
        if requested < 600 {
            errors.push(FieldError::invalid_raw(
                "spec.expirationSeconds",
                requested.to_string(),
                "may not specify a duration less than 10 minutes",
            ));
        }
        if requested > 1 << 32 {
            errors.push(FieldError::invalid_raw(
                "spec.expirationSeconds",
                requested.to_string(),
                "may not specify a duration larger than 2^32 seconds",
            ));
        }
        if !errors.is_empty() {
            return Err(ApiError::invalid(GROUP, "TokenRequest", &own_name, &errors).into());
        }
        let mut request = self
            .lookup
            .service_accounts
            .admit_subresource(
                "token",
                "TokenRequest",
                Some(("authentication.k8s.io", "v1")),
                namespace,
                name,
                request,
                options,
            )
            .await?;
        let account = peek(&self.lookup.service_accounts, namespace, name)
            .await?
            .ok_or_else(|| ApiError::not_found(&GroupResource::new("", "serviceaccounts"), name))?;
        if account.metadata.deletion_timestamp.is_some() {
            return Err(
                ApiError::not_found(&GroupResource::new("", "serviceaccounts"), name).into(),
            );
        }
        let asked = request.spec.get_or_insert_with(Default::default);
        let mut spec = TokenSpec {
            namespace: namespace.into(),
            service_account: Ref {
                name: name.into(),
                uid: account.metadata.uid.clone(),
            },
            audiences: asked.audiences.clone().unwrap_or_default(),
            expiration_seconds: requested,
            ..Default::default()
        };
        if let Some(bound) = &asked.bound_object_ref {
            self.bind(namespace, name, bound, &mut spec).await?;
        }
        if asked.audiences.as_ref().is_none_or(Vec::is_empty) {
            asked.audiences = Some(self.tokens.config().audiences().to_vec());
        }
        request.metadata.namespace = Some(namespace.into());
        request.metadata.creation_timestamp = Some(capstan_meta::time::now());
        if options.dry_run {
            asked.expiration_seconds = Some(requested);
            return created(&request);
        }
        let issued = self.tokens.issue(&spec).map_err(ApiError::internal)?;
        if issued.expiration_seconds
            != capstan_auth::authn::serviceaccount::EXTENDED_EXPIRATION_SECONDS
        {
            asked.expiration_seconds = Some(issued.expiration_seconds);
        }
        request.status = Some(TokenRequestStatus {
            token: Some(issued.token),
            expiration_timestamp: Some(Time(
                jiff::Timestamp::from_second(issued.expires).map_err(ApiError::internal)?,
            )),
        });
        created(&request)
    }
}

/// `POST authentication.k8s.io/v1 tokenreviews`: who a token belongs to.
pub struct TokenReviewRest {
    authenticators: Arc<AuthenticatorChain>,
    descriptor: ResourceDescriptor,
}

impl TokenReviewRest {
    /// Reviews tokens with `authenticators`.
    pub fn new(authenticators: Arc<AuthenticatorChain>) -> Self {
        Self {
            authenticators,
            descriptor: review_descriptor("tokenreviews", "TokenReview"),
        }
    }
}

#[async_trait]
impl RestStorage for TokenReviewRest {
    fn descriptor(&self) -> &ResourceDescriptor {
        &self.descriptor
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<TokenReview>()
    }

    async fn create(
        &self,
        _namespace: &str,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        let (mut review, _) =
            decode::<TokenReview>(body, &self.descriptor, options.field_validation)?;
        let token = review.spec.token.clone();
        if token.is_empty() {
            return Err(ApiError::bad_request(
                "token is required for TokenReview in authentication",
            )
            .into());
        }
        let audiences = review.spec.audiences.clone().unwrap_or_default();
        let mut status = TokenReviewStatus::default();
        match self.authenticators.review_token(&token, &audiences).await {
            Ok(Some((user, audiences))) => {
                status.authenticated = Some(true);
                status.user = Some(api_user(&user));
                status.audiences = (!audiences.is_empty()).then_some(audiences);
            }
            Ok(None) => status.authenticated = Some(false),
            Err(why) => {
                status.authenticated = Some(false);
                status.error = Some(why);
            }
        }
        review.metadata.creation_timestamp = None;
        review.status = Some(status);
        created(&review)
    }
}

/// `POST authentication.k8s.io/v1 selfsubjectreviews`: who the caller is
/// (`kubectl auth whoami`).
pub struct SelfSubjectReviewRest {
    descriptor: ResourceDescriptor,
}

impl Default for SelfSubjectReviewRest {
    fn default() -> Self {
        Self {
            descriptor: review_descriptor("selfsubjectreviews", "SelfSubjectReview"),
        }
    }
}

#[async_trait]
impl RestStorage for SelfSubjectReviewRest {
    fn descriptor(&self) -> &ResourceDescriptor {
        &self.descriptor
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<SelfSubjectReview>()
    }

    async fn create(
        &self,
        _namespace: &str,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        let (mut review, _) =
            decode::<SelfSubjectReview>(body, &self.descriptor, options.field_validation)?;
        review.metadata.creation_timestamp = Some(capstan_meta::time::now());
        review.status = Some(SelfSubjectReviewStatus {
            user_info: Some(api_user(&options.user)),
        });
        created(&review)
    }
}

/// Fills new Secrets of type `kubernetes.io/service-account-token` that name an existing
/// service account (`kubernetes.io/service-account.name`) with a legacy token, the cluster's
/// CA and the namespace, as upstream's token controller does.
pub struct LegacyTokenFiller {
    key: Arc<SigningKey>,
    ca_pem: String,
    service_accounts: Arc<GenericStore<ServiceAccountStrategy>>,
}

impl LegacyTokenFiller {
    /// Signs with `key`; `ca_pem` goes into `ca.crt`.
    pub fn new(
        key: Arc<SigningKey>,
        ca_pem: String,
        service_accounts: Arc<GenericStore<ServiceAccountStrategy>>,
    ) -> Self {
        Self {
            key,
            ca_pem,
            service_accounts,
        }
    }
}

#[derive(serde::Serialize)]
struct LegacyClaims<'a> {
    iss: &'a str,
    #[serde(rename = "kubernetes.io/serviceaccount/namespace")]
    namespace: &'a str,
    #[serde(rename = "kubernetes.io/serviceaccount/secret.name")]
    secret_name: &'a str,
    #[serde(rename = "kubernetes.io/serviceaccount/service-account.name")]
    service_account_name: &'a str,
    #[serde(rename = "kubernetes.io/serviceaccount/service-account.uid")]
    service_account_uid: &'a str,
    sub: &'a str,
}

#[async_trait]
impl CreateHook<Secret> for LegacyTokenFiller {
    async fn on_create(&self, secret: &mut Secret, _user: &capstan_auth::UserInfo) -> Result<()> {
        if secret.type_.as_deref() != Some(SERVICE_ACCOUNT_TOKEN_TYPE) {
            return Ok(());
        }
        let meta = &secret.metadata;
        let namespace = meta.namespace.clone().unwrap_or_default();
        let name = meta.name.clone().unwrap_or_default();
        let annotations = meta.annotations.clone().unwrap_or_default();
        let Some(account) = annotations
            .get(SA_NAME_ANNOTATION)
            .filter(|a| !a.is_empty())
        else {
            // Validation refuses it, as upstream.
            return Ok(());
        };
        if name.is_empty()
            || secret
                .data
                .as_ref()
                .is_some_and(|d| d.contains_key("token"))
        {
            return Ok(());
        }
        let Some(found) = peek(&self.service_accounts, &namespace, account).await? else {
            return Ok(());
        };
        let uid = found.metadata.uid;
        if let Some(want) = annotations.get(SA_UID_ANNOTATION)
            && !want.is_empty()
            && *want != uid
        {
            return Ok(());
        }
        let sub = service_account_user(&namespace, account);
        let token = self
            .key
            .sign(&LegacyClaims {
                iss: LEGACY_ISSUER,
                namespace: &namespace,
                secret_name: &name,
                service_account_name: account,
                service_account_uid: &uid,
                sub: &sub,
            })
            .map_err(ApiError::internal)?;
        let data = secret.data.get_or_insert_with(Default::default);
        use k8s_openapi::ByteString;
        data.insert("token".into(), ByteString(token.into_bytes()));
        data.insert("namespace".into(), ByteString(namespace.into_bytes()));
        data.insert(
            "ca.crt".into(),
            ByteString(self.ca_pem.clone().into_bytes()),
        );
        secret
            .metadata
            .annotations
            .get_or_insert_with(Default::default)
            .insert(SA_UID_ANNOTATION.into(), uid);
        Ok(())
    }
}
