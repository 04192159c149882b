//! `authorization.k8s.io/v1`: the access reviews. SubjectAccessReview (any user, cluster
//! wide), LocalSubjectAccessReview (any user, one namespace), SelfSubjectAccessReview (the
//! caller: `kubectl auth can-i`) and SelfSubjectRulesReview (the caller's rules in a namespace:
//! `kubectl auth can-i --list`), each answered by the server's authorizer chain.

use std::sync::Arc;

use async_trait::async_trait;
use capstan_auth::UserInfo;
use capstan_auth::authz::{Attributes, AuthorizerChain, Verdict};
use capstan_meta::{ApiError, FieldError, ResourceDescriptor};
use k8s_openapi::api::authorization::v1::{
    LocalSubjectAccessReview, NonResourceAttributes, NonResourceRule, ResourceAttributes,
    ResourceRule, SelfSubjectAccessReview, SelfSubjectRulesReview, SubjectAccessReview,
    SubjectAccessReviewSpec, SubjectAccessReviewStatus, SubjectRulesReviewStatus,
};

use crate::codec::decode;
use crate::error::Result;
use crate::options::WriteOptions;
use crate::rest::{Encoded, ResponseStatus, RestStorage};

const GROUP: &str = "authorization.k8s.io";

fn descriptor(resource: &str, kind: &str, namespaced: bool) -> ResourceDescriptor {
    ResourceDescriptor {
        group: GROUP.into(),
        version: "v1".into(),
        kind: kind.into(),
        resource: resource.into(),
        singular: kind.to_ascii_lowercase(),
        namespaced,
        verbs: vec!["create".into()],
        ..Default::default()
    }
}

fn created<T: serde::Serialize>(obj: &T) -> Result<Encoded> {
    Ok(Encoded {
        body: serde_json::to_vec(obj)
            .map_err(crate::error::Error::Encode)?
            .into(),
        warnings: Vec::new(),
        status: ResponseStatus::Created,
    })
}

/// The request a review asks about, as the authorizers see it.
fn attributes(
    user: UserInfo,
    resource: Option<&ResourceAttributes>,
    non_resource: Option<&NonResourceAttributes>,
) -> Attributes {
    let text = |v: &Option<String>| v.clone().unwrap_or_default();
    match (resource, non_resource) {
        (Some(r), _) => Attributes {
            user,
            verb: text(&r.verb),
            resource_request: true,
            api_group: text(&r.group),
            // An empty version matches every version, as upstream.
            api_version: r
                .version
                .clone()
                .filter(|v| !v.is_empty())
                .unwrap_or_else(|| "*".into()),
            resource: text(&r.resource),
            subresource: text(&r.subresource),
            namespace: text(&r.namespace),
            name: text(&r.name),
            path: String::new(),
            field_selector: r
                .field_selector
                .as_ref()
                .map(review_field_selector)
                .unwrap_or_default(),
        },
        (None, Some(n)) => Attributes {
            user,
            verb: text(&n.verb),
            path: text(&n.path),
            ..Default::default()
        },
        (None, None) => Attributes {
            user,
            ..Default::default()
        },
    }
}

/// A review's field selector as the authorizers see it: the raw form parsed, or each
/// requirement with one value (`In` is `=`, `NotIn` is `!=`); anything else, or a raw form
/// that does not parse, is no selector, as upstream.
fn review_field_selector(
    selector: &k8s_openapi::api::authorization::v1::FieldSelectorAttributes,
) -> Vec<capstan_meta::fields::FieldRequirement> {
    if let Some(raw) = selector.raw_selector.as_deref().filter(|r| !r.is_empty()) {
        return capstan_meta::fields::FieldSelector::parse(raw)
            .map(|s| s.requirements)
            .unwrap_or_default();
    }
    let mut out = Vec::new();
    for r in selector.requirements.iter().flatten() {
        let negated = match r.operator.as_str() {
            "In" => false,
            "NotIn" => true,
            _ => return Vec::new(),
        };
        let [value] = r.values.as_deref().unwrap_or_default() else {
            return Vec::new();
        };
        out.push(capstan_meta::fields::FieldRequirement {
            field: r.key.clone(),
            value: value.clone(),
            negated,
        });
    }
    out
}

fn status(verdict: Verdict) -> SubjectAccessReviewStatus {
    SubjectAccessReviewStatus {
        allowed: verdict.allowed,
        denied: verdict.denied.then_some(true),
        reason: (!verdict.reason.is_empty()).then_some(verdict.reason),
        evaluation_error: None,
    }
}

/// Exactly one of the attribute kinds (upstream's wording and fields).
fn one_kind(resource: bool, non_resource: bool, errors: &mut Vec<FieldError>) {
    if resource && non_resource {
        errors.push(FieldError::invalid_raw(
            "spec.nonResourceAttributes",
            "{}",
            "cannot be specified in combination with resourceAttributes",
        ));
    }
    if !resource && !non_resource {
        errors.push(FieldError::invalid_raw(
            "spec.resourceAttributes",
            "null",
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        ));
    }
}

/// The subject a (Local)SubjectAccessReview names, after upstream's checks.
fn subject(spec: &SubjectAccessReviewSpec, errors: &mut Vec<FieldError>) -> UserInfo {
    let user = spec.user.clone().unwrap_or_default();
    let groups = spec.groups.clone().unwrap_or_default();
    if user.is_empty() && groups.is_empty() {
        errors.push(FieldError::invalid(
            "spec.user",
            "",
            "at least one of user or group must be specified",
        ));
    }
    UserInfo {
        name: user,
        uid: spec.uid.clone().unwrap_or_default(),
        groups,
        extra: spec.extra.clone().unwrap_or_default(),
    }
}

/// `POST subjectaccessreviews`.
pub struct SubjectAccessReviewRest {
    authorizers: Arc<AuthorizerChain>,
    descriptor: ResourceDescriptor,
}

impl SubjectAccessReviewRest {
    /// Reviews with `authorizers`.
    pub fn new(authorizers: Arc<AuthorizerChain>) -> Self {
        Self {
            authorizers,
            descriptor: descriptor("subjectaccessreviews", "SubjectAccessReview", false),
        }
    }
}

#[async_trait]
impl RestStorage for SubjectAccessReviewRest {
    fn descriptor(&self) -> &ResourceDescriptor {
        &self.descriptor
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<SubjectAccessReview>()
    }

    async fn create(&self, _: &str, body: &[u8], options: &WriteOptions) -> Result<Encoded> {
        let (mut review, _) =
            decode::<SubjectAccessReview>(body, &self.descriptor, options.field_validation)?;
        let spec = &review.spec;
        let mut errors = Vec::new();
        one_kind(
            spec.resource_attributes.is_some(),
            spec.non_resource_attributes.is_some(),
            &mut errors,
        );
        let user = subject(spec, &mut errors);
        if !errors.is_empty() {
            return Err(ApiError::invalid(GROUP, "SubjectAccessReview", "", &errors).into());
        }
        let attrs = attributes(
            user,
            spec.resource_attributes.as_ref(),
            spec.non_resource_attributes.as_ref(),
        );
        review.status = Some(status(self.authorizers.review(&attrs).await));
        created(&review)
    }
}

/// `POST namespaces/{namespace}/localsubjectaccessreviews`.
pub struct LocalSubjectAccessReviewRest {
    authorizers: Arc<AuthorizerChain>,
    descriptor: ResourceDescriptor,
}

impl LocalSubjectAccessReviewRest {
    /// Reviews with `authorizers`.
    pub fn new(authorizers: Arc<AuthorizerChain>) -> Self {
        Self {
            authorizers,
            descriptor: descriptor(
                "localsubjectaccessreviews",
                "LocalSubjectAccessReview",
                true,
            ),
        }
    }
}

#[async_trait]
impl RestStorage for LocalSubjectAccessReviewRest {
    fn descriptor(&self) -> &ResourceDescriptor {
        &self.descriptor
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<LocalSubjectAccessReview>()
    }

    async fn create(
        &self,
        namespace: &str,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        let (mut review, _) =
            decode::<LocalSubjectAccessReview>(body, &self.descriptor, options.field_validation)?;
        match review.metadata.namespace.as_deref() {
            None | Some("") => review.metadata.namespace = Some(namespace.to_string()),
            Some(ns) if ns == namespace => {}
            Some(_) => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                )
                .into());
            }
        }
        let spec = &review.spec;
        let mut errors = Vec::new();
        one_kind(
            spec.resource_attributes.is_some(),
            spec.non_resource_attributes.is_some(),
            &mut errors,
        );
        let user = subject(spec, &mut errors);
        if let Some(r) = &spec.resource_attributes {
            let asked = r.namespace.as_deref().unwrap_or_default();
            if asked != namespace {
                errors.push(FieldError::invalid(
                    "spec.resourceAttributes.namespace",
                    asked,
                    "must match metadata.namespace",
                ));
            }
        }
        if spec.non_resource_attributes.is_some() {
            errors.push(FieldError::invalid_raw(
                "spec.nonResourceAttributes",
                "{}",
                "disallowed on this kind of request",
            ));
        }
        if !errors.is_empty() {
            return Err(ApiError::invalid(GROUP, "LocalSubjectAccessReview", "", &errors).into());
        }
        let attrs = attributes(user, spec.resource_attributes.as_ref(), None);
        review.status = Some(status(self.authorizers.review(&attrs).await));
        created(&review)
    }
}

/// `POST selfsubjectaccessreviews`: may the caller (`kubectl auth can-i`).
pub struct SelfSubjectAccessReviewRest {
    authorizers: Arc<AuthorizerChain>,
    descriptor: ResourceDescriptor,
}

impl SelfSubjectAccessReviewRest {
    /// Reviews with `authorizers`.
    pub fn new(authorizers: Arc<AuthorizerChain>) -> Self {
        Self {
            authorizers,
            descriptor: descriptor("selfsubjectaccessreviews", "SelfSubjectAccessReview", false),
        }
    }
}

#[async_trait]
impl RestStorage for SelfSubjectAccessReviewRest {
    fn descriptor(&self) -> &ResourceDescriptor {
        &self.descriptor
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<SelfSubjectAccessReview>()
    }

    async fn create(&self, _: &str, body: &[u8], options: &WriteOptions) -> Result<Encoded> {
        let (mut review, _) =
            decode::<SelfSubjectAccessReview>(body, &self.descriptor, options.field_validation)?;
        let spec = &review.spec;
        let mut errors = Vec::new();
        one_kind(
            spec.resource_attributes.is_some(),
            spec.non_resource_attributes.is_some(),
            &mut errors,
        );
        if !errors.is_empty() {
            return Err(ApiError::invalid(GROUP, "SelfSubjectAccessReview", "", &errors).into());
        }
        let attrs = attributes(
            options.user.clone(),
            spec.resource_attributes.as_ref(),
            spec.non_resource_attributes.as_ref(),
        );
        review.status = Some(status(self.authorizers.review(&attrs).await));
        created(&review)
    }
}

/// `POST selfsubjectrulesreviews`: what the caller may do in a namespace
/// (`kubectl auth can-i --list`).
pub struct SelfSubjectRulesReviewRest {
    authorizers: Arc<AuthorizerChain>,
    descriptor: ResourceDescriptor,
}

impl SelfSubjectRulesReviewRest {
    /// Lists with `authorizers`.
    pub fn new(authorizers: Arc<AuthorizerChain>) -> Self {
        Self {
            authorizers,
            descriptor: descriptor("selfsubjectrulesreviews", "SelfSubjectRulesReview", false),
        }
    }
}

#[async_trait]
impl RestStorage for SelfSubjectRulesReviewRest {
    fn descriptor(&self) -> &ResourceDescriptor {
        &self.descriptor
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<SelfSubjectRulesReview>()
    }

    async fn create(&self, _: &str, body: &[u8], options: &WriteOptions) -> Result<Encoded> {
        let (mut review, _) =
            decode::<SelfSubjectRulesReview>(body, &self.descriptor, options.field_validation)?;
        let namespace = review.spec.namespace.clone().unwrap_or_default();
        if namespace.is_empty() {
            return Err(ApiError::bad_request("no namespace on request").into());
        }
        let rules = self.authorizers.rules_for(&options.user, &namespace).await;
        let list = |v: Vec<String>| (!v.is_empty()).then_some(v);
        review.status = Some(SubjectRulesReviewStatus {
            resource_rules: rules
                .resource_rules
                .into_iter()
                .map(|r| ResourceRule {
                    verbs: r.verbs,
                    api_groups: list(r.api_groups),
                    resources: list(r.resources),
                    resource_names: list(r.resource_names),
                })
                .collect(),
            non_resource_rules: rules
                .non_resource_rules
                .into_iter()
                .map(|r| NonResourceRule {
                    verbs: r.verbs,
                    non_resource_urls: list(r.non_resource_urls),
                })
                .collect(),
            incomplete: rules.incomplete,
            evaluation_error: (!rules.evaluation_error.is_empty())
                .then_some(rules.evaluation_error),
        });
        created(&review)
    }
}
