//! Service-account tokens: the bound tokens TokenRequest issues (audiences, expiry, a
//! bound pod, secret or node) and the legacy tokens of `kubernetes.io/service-account-token`
//! Secrets, with upstream's claims so that tokens move between Capstan and upstream servers
//! that share a key.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use super::cache::TokenCache;
use super::jwt::{self, JwtError, PublicKey, SigningKey};
use super::x509::CREDENTIAL_ID;
use super::{Authenticator, Credentials, Outcome};
use crate::user::UserInfo;

/// The issuer of legacy (Secret-based) tokens.
pub const LEGACY_ISSUER: &str = "kubernetes/serviceaccount";
/// The group of every service account.
pub const ALL_SERVICE_ACCOUNTS: &str = "system:serviceaccounts";
/// The expiry kubelet asks for when it projects a token it will refresh: with
/// `--service-account-extend-token-expiration`, such tokens live a year and only warn after
/// this many seconds.
pub const WARN_ONLY_EXPIRATION_SECONDS: i64 = 3607;
/// How long an extended token lives (a year).
pub const EXTENDED_EXPIRATION_SECONDS: i64 = 365 * 24 * 3600;
/// Clock skew tolerated on `exp`, `nbf` and `iat`.
const LEEWAY: i64 = 60;

const POD_NAME: &str = "authentication.kubernetes.io/pod-name";
const POD_UID: &str = "authentication.kubernetes.io/pod-uid";
const NODE_NAME: &str = "authentication.kubernetes.io/node-name";
const NODE_UID: &str = "authentication.kubernetes.io/node-uid";

/// An object's identity and whether it is going away, as the lookups need it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ObjectState {
    /// `metadata.uid`.
    pub uid: String,
    /// `metadata.deletionTimestamp`, Unix seconds.
    pub deleting_since: Option<i64>,
}

/// A Secret as the lookups need it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecretState {
    /// Identity.
    pub object: ObjectState,
    /// `type`.
    pub type_: String,
    /// `data`, decoded.
    pub data: BTreeMap<String, Vec<u8>>,
    /// `metadata.labels`.
    pub labels: BTreeMap<String, String>,
}

/// The label upstream's legacy token cleaner puts on a token Secret it invalidates.
pub const LEGACY_TOKEN_INVALID_SINCE: &str = "kubernetes.io/legacy-token-invalid-since";

/// Reads the objects tokens are bound to (the API server implements it over its watch
/// caches). `Err` is a failed read, not an absent object.
#[async_trait]
pub trait ObjectLookup: Send + Sync + 'static {
    /// A service account.
    async fn service_account(
        &self,
        namespace: &str,
        name: &str,
    ) -> Result<Option<ObjectState>, String>;
    /// A pod.
    async fn pod(&self, namespace: &str, name: &str) -> Result<Option<ObjectState>, String>;
    /// A secret.
    async fn secret(&self, namespace: &str, name: &str) -> Result<Option<SecretState>, String>;
    /// A node.
    async fn node(&self, name: &str) -> Result<Option<ObjectState>, String>;
}

/// `--service-account-*` and `--api-audiences`.
#[derive(Debug, Clone, Default)]
pub struct ServiceAccountConfig {
    /// `--service-account-issuer`: accepted issuers, the first one signs.
    pub issuers: Vec<String>,
    /// `--api-audiences`; empty: the issuers.
    pub api_audiences: Vec<String>,
    /// `--service-account-key-file` (and the signing key's public half).
    pub keys: Vec<PublicKey>,
    /// `--service-account-signing-key-file`.
    pub signing_key: Option<Arc<SigningKey>>,
    /// `--service-account-max-token-expiration`.
    pub max_expiration: Option<Duration>,
    /// `--service-account-extend-token-expiration`.
    pub extend_expiration: bool,
    /// `--service-account-lookup` (legacy tokens; bound tokens are always checked).
    pub lookup: bool,
    /// `--service-account-jwks-uri`.
    pub jwks_uri: Option<String>,
}

impl ServiceAccountConfig {
    /// The audiences tokens are for when nobody says otherwise.
    pub fn audiences(&self) -> &[String] {
        if self.api_audiences.is_empty() {
            &self.issuers
        } else {
            &self.api_audiences
        }
    }
}

/// A name and uid, as the private claims carry them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ref {
    /// Name.
    pub name: String,
    /// UID.
    pub uid: String,
}

/// The `kubernetes.io` claim of bound tokens.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Private {
    /// The service account's namespace.
    pub namespace: String,
    /// The service account.
    pub serviceaccount: Ref,
    /// The pod the token is bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<Ref>,
    /// The secret the token is bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<Ref>,
    /// The node the token (or its pod) is bound to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<Ref>,
    /// An extended token's real expiry, after which its use is only reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warnafter: Option<i64>,
}

/// The claims of a bound token.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// Audiences.
    #[serde(default, deserialize_with = "one_or_many")]
    pub aud: Vec<String>,
    /// Expiry, Unix seconds.
    #[serde(default)]
    pub exp: Option<i64>,
    /// Issued at.
    #[serde(default)]
    pub iat: Option<i64>,
    /// Issuer.
    #[serde(default)]
    pub iss: String,
    /// Token id (the credential id).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jti: Option<String>,
    /// Kubernetes' private claims.
    #[serde(
        rename = "kubernetes.io",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub kubernetes: Option<Private>,
    /// Not before.
    #[serde(default)]
    pub nbf: Option<i64>,
    /// `system:serviceaccount:<namespace>:<name>`.
    #[serde(default)]
    pub sub: String,
}

/// The claims of a legacy token.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct LegacyClaims {
    iss: String,
    #[serde(rename = "kubernetes.io/serviceaccount/namespace", default)]
    namespace: String,
    #[serde(rename = "kubernetes.io/serviceaccount/secret.name", default)]
    secret_name: String,
    #[serde(rename = "kubernetes.io/serviceaccount/service-account.name", default)]
    service_account_name: String,
    #[serde(rename = "kubernetes.io/serviceaccount/service-account.uid", default)]
    service_account_uid: String,
    #[serde(default)]
    sub: String,
}

fn one_or_many<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match Option::<OneOrMany>::deserialize(d)? {
        None => Vec::new(),
        Some(OneOrMany::One(s)) => vec![s],
        Some(OneOrMany::Many(v)) => v,
    })
}

/// What a TokenRequest asks for, after its checks.
#[derive(Debug, Clone, Default)]
pub struct TokenSpec {
    /// The service account's namespace.
    pub namespace: String,
    /// The service account.
    pub service_account: Ref,
    /// Audiences; empty: the API's.
    pub audiences: Vec<String>,
    /// Requested lifetime in seconds.
    pub expiration_seconds: i64,
    /// Bound pod.
    pub pod: Option<Ref>,
    /// Bound secret.
    pub secret: Option<Ref>,
    /// Bound node (or the node of the bound pod).
    pub node: Option<Ref>,
}

/// An issued token.
#[derive(Debug, Clone)]
pub struct IssuedToken {
    /// The JWT.
    pub token: String,
    /// Expiry, Unix seconds.
    pub expires: i64,
    /// The lifetime actually granted (capped by `--service-account-max-token-expiration`).
    pub expiration_seconds: i64,
}

fn now() -> i64 {
    SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or_default()
}

/// Issues and verifies service-account tokens.
pub struct ServiceAccountTokens {
    config: ServiceAccountConfig,
    lookup: Arc<dyn ObjectLookup>,
    cache: TokenCache<Arc<Verified>>,
}

/// A token whose signature checked out.
#[derive(Debug)]
enum Verified {
    Bound(Box<BoundToken>),
    Legacy(LegacyClaims),
}

/// A bound token whose signature and claims checked out, reduced to what every request
/// still has to check (its time window, audiences and objects) and the user it names.
#[derive(Debug)]
struct BoundToken {
    /// Usable until: `exp` plus the leeway.
    until: i64,
    /// Usable from: the later of `nbf` and `iat`, less the leeway.
    from: i64,
    audiences: Vec<String>,
    /// The audiences shared with the configured ones: the answer when a request names none.
    default_audiences: Vec<String>,
    namespace: String,
    account: Ref,
    pod: Option<Ref>,
    secret: Option<Ref>,
    /// A node the token is bound to directly (a pod's node is only informational).
    node: Option<Ref>,
    user: UserInfo,
}

impl BoundToken {
    /// Checks what does not change with time and builds the user.
    fn new(claims: Claims, configured: &[String]) -> Result<Self, String> {
        let Some(exp) = claims.exp else {
            return Err("service account token has no expiry".into());
        };
        let Some(private) = claims.kubernetes else {
            return Err("service account token claims lack the kubernetes.io claim".into());
        };
        let namespace = private.namespace;
        let account = private.serviceaccount;
        if claims.sub != service_account_user(&namespace, &account.name) {
            return Err("service account token subject does not match its claims".into());
        }
        let mut user = account_user(&namespace, &account);
        if let Some(pod) = &private.pod {
            user.extra.insert(POD_NAME.into(), vec![pod.name.clone()]);
            user.extra.insert(POD_UID.into(), vec![pod.uid.clone()]);
        }
        if let Some(node) = &private.node {
            user.extra.insert(NODE_NAME.into(), vec![node.name.clone()]);
            if !node.uid.is_empty() {
                user.extra.insert(NODE_UID.into(), vec![node.uid.clone()]);
            }
        }
        if let Some(jti) = &claims.jti {
            user.extra
                .insert(CREDENTIAL_ID.into(), vec![format!("JTI={jti}")]);
        }
        let from = claims.nbf.into_iter().chain(claims.iat).max();
        Ok(Self {
            until: exp + LEEWAY,
            from: from.map_or(i64::MIN, |t| t - LEEWAY),
            default_audiences: shared(&claims.aud, configured),
            audiences: claims.aud,
            namespace,
            account,
            node: private.node.filter(|_| private.pod.is_none()),
            pod: private.pod,
            secret: private.secret,
            user,
        })
    }
}

/// The audiences of `token` that are also in `wanted`.
fn shared(token: &[String], wanted: &[String]) -> Vec<String> {
    token
        .iter()
        .filter(|a| wanted.contains(a))
        .cloned()
        .collect()
}

impl ServiceAccountTokens {
    /// Tokens of `config`, checked against the objects `lookup` reads.
    pub fn new(config: ServiceAccountConfig, lookup: Arc<dyn ObjectLookup>) -> Self {
        Self {
            config,
            lookup,
            cache: TokenCache::new(Duration::from_secs(10)),
        }
    }

    /// The configuration.
    pub fn config(&self) -> &ServiceAccountConfig {
        &self.config
    }

    /// Whether tokens can be issued (a signing key and an issuer are configured).
    pub fn can_issue(&self) -> bool {
        self.config.signing_key.is_some() && !self.config.issuers.is_empty()
    }

    /// The lifetime a request for `requested` seconds gets, and when an extended token
    /// starts warning: `(lifetime, warn_after_lifetime)`.
    pub fn lifetime(
        &self,
        requested: i64,
        pod_bound: bool,
        audiences: &[String],
    ) -> (i64, Option<i64>) {
        let mut lifetime = requested;
        if let Some(max) = self.config.max_expiration
            && lifetime > max.as_secs() as i64
        {
            lifetime = max.as_secs() as i64;
        }
        let kube_audiences = audiences.is_empty() || audiences == self.config.audiences();
        if self.config.extend_expiration
            && pod_bound
            && requested == WARN_ONLY_EXPIRATION_SECONDS
            && kube_audiences
        {
            return (EXTENDED_EXPIRATION_SECONDS, Some(requested));
        }
        (lifetime, None)
    }

    /// Signs a bound token for `spec`.
    pub fn issue(&self, spec: &TokenSpec) -> Result<IssuedToken, String> {
        let (Some(key), Some(issuer)) = (&self.config.signing_key, self.config.issuers.first())
        else {
            return Err(
                "no --service-account-signing-key-file and --service-account-issuer".into(),
            );
        };
        let audiences = if spec.audiences.is_empty() {
            self.config.audiences().to_vec()
        } else {
            spec.audiences.clone()
        };
        let (lifetime, warn) =
            self.lifetime(spec.expiration_seconds, spec.pod.is_some(), &spec.audiences);
        let iat = now();
        let claims = Claims {
            aud: audiences,
            exp: Some(iat + lifetime),
            iat: Some(iat),
            iss: issuer.clone(),
            jti: Some(capstan_meta::names::uid()),
            kubernetes: Some(Private {
                namespace: spec.namespace.clone(),
                serviceaccount: spec.service_account.clone(),
                pod: spec.pod.clone(),
                secret: spec.secret.clone(),
                node: spec.node.clone(),
                warnafter: warn.map(|w| iat + w),
            }),
            nbf: Some(iat),
            sub: service_account_user(&spec.namespace, &spec.service_account.name),
        };
        Ok(IssuedToken {
            token: key.sign(&claims)?,
            expires: iat + lifetime,
            expiration_seconds: lifetime,
        })
    }

    /// Signs a legacy token for the Secret `secret` of the service account.
    pub fn issue_legacy(
        &self,
        namespace: &str,
        account: &Ref,
        secret: &str,
    ) -> Result<String, String> {
        let Some(key) = &self.config.signing_key else {
            return Err("no --service-account-signing-key-file".into());
        };
        key.sign(&LegacyClaims {
            iss: LEGACY_ISSUER.into(),
            namespace: namespace.into(),
            secret_name: secret.into(),
            service_account_name: account.name.clone(),
            service_account_uid: account.uid.clone(),
            sub: service_account_user(namespace, &account.name),
        })
    }

    /// `/.well-known/openid-configuration`, when the first issuer is an HTTPS URL.
    pub fn openid_configuration(&self) -> Option<serde_json::Value> {
        let issuer = self.config.issuers.first()?;
        if !issuer.starts_with("https://") {
            return None;
        }
        let jwks_uri = self
            .config
            .jwks_uri
            .clone()
            .unwrap_or_else(|| format!("{}/openid/v1/jwks", issuer.trim_end_matches('/')));
        let mut algs: Vec<&str> = self
            .config
            .keys
            .iter()
            .map(|k| k.algorithm().name())
            .collect();
        algs.sort();
        algs.dedup();
        Some(serde_json::json!({
            "issuer": issuer,
            "jwks_uri": jwks_uri,
            "response_types_supported": ["id_token"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": algs,
        }))
    }

    /// `/openid/v1/jwks`: every verification key.
    pub fn jwks(&self) -> serde_json::Value {
        let mut seen = std::collections::HashSet::new();
        let keys: Vec<serde_json::Value> = self
            .config
            .keys
            .iter()
            .filter(|k| seen.insert(k.key_id().to_string()))
            .map(PublicKey::jwk)
            .collect();
        serde_json::json!({ "keys": keys })
    }

    fn verified(&self, token: &str) -> Result<Option<Arc<Verified>>, String> {
        if let Some(hit) = self.cache.get(token) {
            return Ok(Some(hit));
        }
        // Whose token is it? Tokens of other issuers are for other authenticators.
        #[derive(Deserialize)]
        struct Issuer {
            #[serde(default)]
            iss: String,
        }
        let payload = match jwt::unverified_payload(token) {
            Ok(p) => p,
            Err(_) => return Ok(None),
        };
        let Ok(Issuer { iss }) = serde_json::from_slice(&payload) else {
            return Ok(None);
        };
        let legacy = iss == LEGACY_ISSUER;
        if !legacy && !self.config.issuers.contains(&iss) {
            return Ok(None);
        }
        let payload = jwt::verify(token, &self.config.keys).map_err(|e| match e {
            JwtError::Signature => "invalid signature".to_string(),
            other => other.to_string(),
        })?;
        let verified = if legacy {
            Verified::Legacy(
                serde_json::from_slice(&payload).map_err(|e| format!("malformed claims: {e}"))?,
            )
        } else {
            let claims =
                serde_json::from_slice(&payload).map_err(|e| format!("malformed claims: {e}"))?;
            Verified::Bound(Box::new(BoundToken::new(claims, self.config.audiences())?))
        };
        let verified = Arc::new(verified);
        self.cache.insert(token, verified.clone());
        Ok(Some(verified))
    }

    async fn bound(
        &self,
        token: &BoundToken,
        credentials: &Credentials<'_>,
    ) -> Result<Outcome, String> {
        let now = now();
        if now > token.until {
            return Err("service account token has expired".into());
        }
        if now < token.from {
            return Err("service account token is not valid yet".into());
        }
        let audiences = match credentials.audiences {
            None => token.default_audiences.clone(),
            Some(wanted) => shared(&token.audiences, wanted),
        };
        if audiences.is_empty() {
            return Err("token audiences are invalid for the target audiences".into());
        }
        let ns = &token.namespace;
        let invalidated = || "service account token has been invalidated".to_string();
        live(
            self.lookup.service_account(ns, &token.account.name).await?,
            &token.account.uid,
            now,
        )
        .ok_or_else(invalidated)?;
        if let Some(pod) = &token.pod {
            live(self.lookup.pod(ns, &pod.name).await?, &pod.uid, now).ok_or_else(invalidated)?;
        }
        if let Some(secret) = &token.secret {
            let found = self
                .lookup
                .secret(ns, &secret.name)
                .await?
                .map(|s| s.object);
            live(found, &secret.uid, now).ok_or_else(invalidated)?;
        }
        if let Some(node) = &token.node {
            live(self.lookup.node(&node.name).await?, &node.uid, now).ok_or_else(invalidated)?;
        }
        Ok(Outcome::Authenticated {
            user: token.user.clone(),
            audiences,
        })
    }

    async fn legacy(&self, claims: &LegacyClaims, token: &str) -> Result<Outcome, String> {
        let ns = &claims.namespace;
        if ns.is_empty() || claims.service_account_name.is_empty() || claims.secret_name.is_empty()
        {
            return Err("legacy service account token lacks its claims".into());
        }
        if claims.sub != service_account_user(ns, &claims.service_account_name) {
            return Err("service account token subject does not match its claims".into());
        }
        let sa = Ref {
            name: claims.service_account_name.clone(),
            uid: claims.service_account_uid.clone(),
        };
        if self.config.lookup {
            let now = now();
            let invalid = |what: &str| format!("legacy service account token: {what}");
            let secret = self
                .lookup
                .secret(ns, &claims.secret_name)
                .await?
                .ok_or_else(|| invalid("its secret no longer exists"))?;
            if secret.object.deleting_since.is_some_and(|t| t <= now) {
                return Err(invalid("its secret is being deleted"));
            }
            if secret.data.get("token").map(Vec::as_slice) != Some(token.as_bytes()) {
                return Err(invalid("it is no longer its secret's token"));
            }
            if secret
                .labels
                .get(LEGACY_TOKEN_INVALID_SINCE)
                .is_some_and(|since| !since.is_empty())
            {
                return Err(invalid(&format!(
                    "the token in secret {ns}/{} has been marked invalid; use tokens from the \
                     TokenRequest API, or remove the {LEGACY_TOKEN_INVALID_SINCE} label from the \
                     secret to enable it again",
                    claims.secret_name
                )));
            }
            live(
                self.lookup.service_account(ns, &sa.name).await?,
                &sa.uid,
                now,
            )
            .ok_or_else(|| invalid("its service account no longer exists"))?;
        }
        Ok(Outcome::authenticated(account_user(ns, &sa)))
    }
}

/// The object exists, has `uid` (when one is expected), and is not past its deletion.
fn live(found: Option<ObjectState>, uid: &str, now: i64) -> Option<()> {
    let found = found?;
    if !uid.is_empty() && found.uid != uid {
        return None;
    }
    if found.deleting_since.is_some_and(|t| t <= now) {
        return None;
    }
    Some(())
}

/// `system:serviceaccount:<namespace>:<name>`.
pub fn service_account_user(namespace: &str, name: &str) -> String {
    format!("system:serviceaccount:{namespace}:{name}")
}

fn account_user(namespace: &str, sa: &Ref) -> UserInfo {
    UserInfo {
        name: service_account_user(namespace, &sa.name),
        uid: sa.uid.clone(),
        groups: vec![
            ALL_SERVICE_ACCOUNTS.into(),
            format!("{ALL_SERVICE_ACCOUNTS}:{namespace}"),
        ],
        extra: BTreeMap::new(),
    }
}

#[async_trait]
impl Authenticator for ServiceAccountTokens {
    async fn authenticate(&self, credentials: &Credentials<'_>) -> Outcome {
        let Some(token) = credentials.bearer_token else {
            return Outcome::NoOpinion;
        };
        let result = match self.verified(token) {
            Ok(None) => return Outcome::NoOpinion,
            Ok(Some(verified)) => match &*verified {
                Verified::Bound(token) => self.bound(token, credentials).await,
                Verified::Legacy(claims) => self.legacy(claims, token).await,
            },
            Err(why) => Err(why),
        };
        result.unwrap_or_else(Outcome::Rejected)
    }

    /// Known at once for tokens that are not this issuer's (or do not verify); a token that
    /// does needs its service account (and pod or secret) looked up.
    fn authenticate_now(&self, credentials: &Credentials<'_>) -> Option<Outcome> {
        let Some(token) = credentials.bearer_token else {
            return Some(Outcome::NoOpinion);
        };
        match self.verified(token) {
            Ok(None) => Some(Outcome::NoOpinion),
            Ok(Some(_)) => None,
            Err(why) => Some(Outcome::Rejected(why)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    #[derive(Default)]
    struct Objects {
        accounts: Mutex<BTreeMap<(String, String), ObjectState>>,
        pods: Mutex<BTreeMap<(String, String), ObjectState>>,
        secrets: Mutex<BTreeMap<(String, String), SecretState>>,
    }

    #[async_trait]
    impl ObjectLookup for Objects {
        async fn service_account(
            &self,
            ns: &str,
            name: &str,
        ) -> Result<Option<ObjectState>, String> {
            Ok(self
                .accounts
                .lock()
                .unwrap()
                .get(&(ns.into(), name.into()))
                .cloned())
        }
        async fn pod(&self, ns: &str, name: &str) -> Result<Option<ObjectState>, String> {
            Ok(self
                .pods
                .lock()
                .unwrap()
                .get(&(ns.into(), name.into()))
                .cloned())
        }
        async fn secret(&self, ns: &str, name: &str) -> Result<Option<SecretState>, String> {
            Ok(self
                .secrets
                .lock()
                .unwrap()
                .get(&(ns.into(), name.into()))
                .cloned())
        }
        async fn node(&self, _: &str) -> Result<Option<ObjectState>, String> {
            Ok(None)
        }
    }

    fn state(uid: &str) -> ObjectState {
        ObjectState {
            uid: uid.into(),
            deleting_since: None,
        }
    }

    fn setup(pem: &str) -> (ServiceAccountTokens, Arc<Objects>) {
        let key = Arc::new(SigningKey::from_pem(pem.as_bytes()).unwrap());
        let objects = Arc::new(Objects::default());
        objects
            .accounts
            .lock()
            .unwrap()
            .insert(("ns".into(), "robot".into()), state("sa-uid"));
        let config = ServiceAccountConfig {
            issuers: vec![
                "https://issuer.example".into(),
                "https://old.example".into(),
            ],
            keys: vec![key.public_key().clone()],
            signing_key: Some(key),
            extend_expiration: true,
            lookup: true,
            ..Default::default()
        };
        (ServiceAccountTokens::new(config, objects.clone()), objects)
    }

    fn spec() -> TokenSpec {
        TokenSpec {
            namespace: "ns".into(),
            service_account: Ref {
                name: "robot".into(),
                uid: "sa-uid".into(),
            },
            expiration_seconds: 3600,
            ..Default::default()
        }
    }

    async fn who(tokens: &ServiceAccountTokens, token: &str) -> Outcome {
        tokens.authenticate(&Credentials::bearer(token)).await
    }

    #[tokio::test]
    async fn bound_tokens_name_the_account_until_it_or_its_pod_goes() {
        for pem in [
            crate::authn::jwt::tests::RSA_PKCS1,
            crate::authn::jwt::tests::EC_SEC1,
        ] {
            let (tokens, objects) = setup(pem);
            let mut spec = spec();
            spec.pod = Some(Ref {
                name: "p".into(),
                uid: "pod-uid".into(),
            });
            objects
                .pods
                .lock()
                .unwrap()
                .insert(("ns".into(), "p".into()), state("pod-uid"));
            let issued = tokens.issue(&spec).unwrap();
            let Outcome::Authenticated { user, audiences } = who(&tokens, &issued.token).await
            else {
                panic!("not authenticated");
            };
            assert_eq!(user.name, "system:serviceaccount:ns:robot");
            assert_eq!(user.uid, "sa-uid");
            assert_eq!(
                user.groups,
                ["system:serviceaccounts", "system:serviceaccounts:ns"]
            );
            assert_eq!(user.extra[POD_NAME], ["p"]);
            assert!(user.extra[CREDENTIAL_ID][0].starts_with("JTI="));
            assert_eq!(audiences, ["https://issuer.example", "https://old.example"]);

            // The pod replaced by another of the same name: the token is dead.
            objects
                .pods
                .lock()
                .unwrap()
                .insert(("ns".into(), "p".into()), state("other"));
            assert!(matches!(
                who(&tokens, &issued.token).await,
                Outcome::Rejected(_)
            ));
            objects.pods.lock().unwrap().clear();
            assert!(matches!(
                who(&tokens, &issued.token).await,
                Outcome::Rejected(_)
            ));

            let plain = tokens.issue(&self::spec()).unwrap();
            assert!(matches!(
                who(&tokens, &plain.token).await,
                Outcome::Authenticated { .. }
            ));
            objects.accounts.lock().unwrap().clear();
            assert!(matches!(
                who(&tokens, &plain.token).await,
                Outcome::Rejected(_)
            ));
        }
    }

    #[tokio::test]
    async fn audiences_expiry_and_foreign_issuers() {
        let (tokens, _) = setup(crate::authn::jwt::tests::RSA_PKCS1);
        let mut spec = spec();
        spec.audiences = vec!["vault".into()];
        let vault = tokens.issue(&spec).unwrap();
        assert!(
            matches!(who(&tokens, &vault.token).await, Outcome::Rejected(_)),
            "not for the API"
        );
        let auds = ["vault".to_string()];
        let creds = Credentials {
            audiences: Some(&auds),
            ..Credentials::bearer(&vault.token)
        };
        assert!(matches!(
            tokens.authenticate(&creds).await,
            Outcome::Authenticated { .. }
        ));

        let key = tokens.config.signing_key.clone().unwrap();
        let sign = |claims: &Claims| key.sign(claims).unwrap();
        let good = Claims {
            aud: vec!["https://issuer.example".into()],
            exp: Some(now() + 600),
            iss: "https://old.example".into(),
            kubernetes: Some(Private {
                namespace: "ns".into(),
                serviceaccount: Ref {
                    name: "robot".into(),
                    uid: "sa-uid".into(),
                },
                ..Default::default()
            }),
            sub: "system:serviceaccount:ns:robot".into(),
            ..Default::default()
        };
        assert!(
            matches!(
                who(&tokens, &sign(&good)).await,
                Outcome::Authenticated { .. }
            ),
            "any configured issuer is accepted"
        );
        let expired = Claims {
            exp: Some(now() - 3600),
            ..good.clone()
        };
        assert!(matches!(
            who(&tokens, &sign(&expired)).await,
            Outcome::Rejected(_)
        ));
        let foreign = Claims {
            iss: "https://elsewhere".into(),
            ..good.clone()
        };
        assert_eq!(who(&tokens, &sign(&foreign)).await, Outcome::NoOpinion);
        let lying = Claims {
            sub: "system:serviceaccount:kube-system:admin".into(),
            ..good
        };
        assert!(matches!(
            who(&tokens, &sign(&lying)).await,
            Outcome::Rejected(_)
        ));
        assert_eq!(who(&tokens, "not-a-jwt").await, Outcome::NoOpinion);
    }

    #[tokio::test]
    async fn legacy_tokens_live_as_long_as_their_secret() {
        let (tokens, objects) = setup(crate::authn::jwt::tests::RSA_PKCS1);
        let sa = Ref {
            name: "robot".into(),
            uid: "sa-uid".into(),
        };
        let token = tokens.issue_legacy("ns", &sa, "robot-token").unwrap();
        let mut secret = SecretState {
            object: state("s"),
            type_: "kubernetes.io/service-account-token".into(),
            data: [("token".to_string(), token.clone().into_bytes())].into(),
            labels: BTreeMap::new(),
        };
        let put = |secret: &SecretState| {
            objects
                .secrets
                .lock()
                .unwrap()
                .insert(("ns".into(), "robot-token".into()), secret.clone());
        };
        put(&secret);
        let Outcome::Authenticated { user, .. } = who(&tokens, &token).await else {
            panic!("not authenticated");
        };
        assert_eq!(user.name, "system:serviceaccount:ns:robot");
        // Marked invalid by upstream's legacy token cleaner: refused until the label goes.
        secret
            .labels
            .insert(LEGACY_TOKEN_INVALID_SINCE.into(), "2026-11-01".into());
        put(&secret);
        let Outcome::Rejected(why) = who(&tokens, &token).await else {
            panic!("an invalidated token was accepted");
        };
        assert!(why.contains("marked invalid"), "{why}");
        secret.labels.clear();
        put(&secret);
        assert!(matches!(
            who(&tokens, &token).await,
            Outcome::Authenticated { .. }
        ));
        objects.secrets.lock().unwrap().clear();
        assert!(matches!(who(&tokens, &token).await, Outcome::Rejected(_)));
    }

    #[test]
    fn lifetimes() {
        let (mut tokens, _) = setup(crate::authn::jwt::tests::RSA_PKCS1);
        assert_eq!(tokens.lifetime(3600, false, &[]), (3600, None));
        assert_eq!(
            tokens.lifetime(3607, true, &[]),
            (EXTENDED_EXPIRATION_SECONDS, Some(3607))
        );
        assert_eq!(tokens.lifetime(3607, false, &[]), (3607, None));
        tokens.config.max_expiration = Some(Duration::from_secs(1800));
        assert_eq!(tokens.lifetime(7200, false, &[]), (1800, None));
        tokens.config.extend_expiration = false;
        assert_eq!(tokens.lifetime(3607, true, &[]), (1800, None));
    }
}
