//! Request options (the query parameters of each verb), parsed and checked, and the one
//! conversion between storage revisions and `resourceVersion` strings.

use base64::Engine;
use capstan_meta::{ApiError, FieldError, FieldSelector, LabelSelector};
use capstan_storage::Revision;
use serde::{Deserialize, Serialize};

/// The `resourceVersion` string of a revision.
pub fn resource_version(revision: Revision) -> String {
    revision.0.to_string()
}

/// Parses a `resourceVersion` a client sent; the empty string is "unset".
pub fn parse_resource_version(value: &str) -> Result<Option<Revision>, ApiError> {
    if value.is_empty() {
        return Ok(None);
    }
    value
        .parse::<u64>()
        .map(|v| Some(Revision(v)))
        .map_err(|_| {
            ApiError::bad_request(format!(
                "invalid resource version {value:?}: not a resource version this server issued"
            ))
        })
}

/// How unknown or duplicate fields in a body are treated (`fieldValidation`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum FieldValidation {
    /// Drop them silently.
    Ignore,
    /// Drop them and warn (the default).
    #[default]
    Warn,
    /// Reject the request.
    Strict,
}

impl FieldValidation {
    /// Parses the query value.
    pub fn parse(value: Option<&str>) -> Result<Self, ApiError> {
        match value.unwrap_or("") {
            "" | "Warn" => Ok(Self::Warn),
            "Ignore" => Ok(Self::Ignore),
            "Strict" => Ok(Self::Strict),
            other => Err(ApiError::bad_request(format!(
                "fieldValidation parameter unsupported: {other}. Supported values are: Strict, Warn, Ignore"
            ))),
        }
    }
}

/// Parses `dryRun`: absent or empty means a real request; `All` a dry run.
pub fn parse_dry_run(values: &[&str]) -> Result<bool, ApiError> {
    let mut dry = false;
    for v in values {
        match *v {
            "All" => dry = true,
            "" => {}
            other => {
                let e = FieldError::not_supported("dryRun", other, &["All"]);
                return Err(ApiError::bad_request(format!("Invalid dry run: {e}")));
            }
        }
    }
    Ok(dry)
}

/// Options of get.
#[derive(Debug, Clone, Default)]
pub struct GetOptions {
    /// `resourceVersion`: unset means the latest.
    pub resource_version: Option<Revision>,
    /// `resourceVersion=0`: any version is fine.
    pub any_version: bool,
}

impl GetOptions {
    /// From the `resourceVersion` query value.
    pub fn parse(resource_version: Option<&str>) -> Result<Self, ApiError> {
        let raw = resource_version.unwrap_or("");
        Ok(Self {
            any_version: raw == "0",
            resource_version: parse_resource_version(raw)?,
        })
    }
}

/// `resourceVersionMatch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResourceVersionMatch {
    /// Exactly the given version.
    Exact,
    /// The given version or newer.
    NotOlderThan,
}

/// Options of list and deletecollection.
#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    /// `labelSelector`.
    pub label_selector: LabelSelector,
    /// `fieldSelector`.
    pub field_selector: FieldSelector,
    /// `limit`: 0 means everything.
    pub limit: usize,
    /// The decoded `continue` token.
    pub continue_token: Option<ContinueToken>,
    /// `resourceVersion` as sent (empty when unset).
    pub resource_version: String,
    /// `resourceVersionMatch`.
    pub resource_version_match: Option<ResourceVersionMatch>,
}

/// `options` with the field selector's labels resolved by `descriptor` to the fields they
/// select (`spec.host` is `spec.nodeName`; events.k8s.io's `regarding.name` is the stored
/// `v1` Event's `involvedObject.name`), or the resource's refusal of a label.
pub fn resolved<'a>(
    descriptor: &capstan_meta::ResourceDescriptor,
    options: &'a ListOptions,
) -> Result<std::borrow::Cow<'a, ListOptions>, capstan_meta::ApiError> {
    use std::borrow::Cow;
    Ok(
        match descriptor.resolve_field_selector(&options.field_selector)? {
            Cow::Borrowed(_) => Cow::Borrowed(options),
            Cow::Owned(field_selector) => Cow::Owned(ListOptions {
                field_selector,
                ..options.clone()
            }),
        },
    )
}

/// Raw list query values, before checking.
#[derive(Debug, Clone, Default)]
pub struct ListQuery<'a> {
    /// `labelSelector`.
    pub label_selector: Option<&'a str>,
    /// `fieldSelector`.
    pub field_selector: Option<&'a str>,
    /// `limit`.
    pub limit: Option<&'a str>,
    /// `continue`.
    pub continue_token: Option<&'a str>,
    /// `resourceVersion`.
    pub resource_version: Option<&'a str>,
    /// `resourceVersionMatch`.
    pub resource_version_match: Option<&'a str>,
}

fn invalid_list_options(errors: &[FieldError]) -> ApiError {
    ApiError::invalid("meta.k8s.io", "ListOptions", "", errors)
}

impl ListOptions {
    /// Parses and checks list parameters with the upstream rules for combining
    /// `resourceVersion`, `resourceVersionMatch`, `limit` and `continue`.
    pub fn parse(q: &ListQuery<'_>) -> Result<Self, ApiError> {
        let label_selector = LabelSelector::parse(q.label_selector.unwrap_or(""))
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        let field_selector = FieldSelector::parse(q.field_selector.unwrap_or(""))
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        let limit = match q.limit.unwrap_or("") {
            "" => 0,
            raw => match raw.parse::<i64>() {
                Ok(n) if n > 0 => n as usize,
                Ok(_) => 0,
                Err(_) => {
                    return Err(ApiError::bad_request(format!(
                        "invalid limit {raw:?}: not an integer"
                    )));
                }
            },
        };
        let resource_version = q.resource_version.unwrap_or("").to_string();
        parse_resource_version(&resource_version)?;
        let resource_version_match = match q.resource_version_match.unwrap_or("") {
            "" => None,
            "Exact" => Some(ResourceVersionMatch::Exact),
            "NotOlderThan" => Some(ResourceVersionMatch::NotOlderThan),
            other => {
                return Err(invalid_list_options(&[FieldError::not_supported(
                    "resourceVersionMatch",
                    other,
                    &["Exact", "NotOlderThan"],
                )]));
            }
        };
        let continue_token = match q.continue_token.unwrap_or("") {
            "" => None,
            raw => Some(ContinueToken::decode(raw)?),
        };
        if let Some(m) = resource_version_match {
            if resource_version.is_empty() {
                return Err(invalid_list_options(&[FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden unless resourceVersion is provided",
                )]));
            }
            if continue_token.is_some() {
                return Err(invalid_list_options(&[FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch is forbidden when continue is provided",
                )]));
            }
            if m == ResourceVersionMatch::Exact && resource_version == "0" {
                return Err(invalid_list_options(&[FieldError::forbidden(
                    "resourceVersionMatch",
                    "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
                )]));
            }
        }
        if continue_token.is_some() && !resource_version.is_empty() && resource_version != "0" {
            return Err(ApiError::bad_request(
                "specifying resource version is not allowed when using continue",
            ));
        }
        Ok(Self {
            label_selector,
            field_selector,
            limit,
            continue_token,
            resource_version,
            resource_version_match,
        })
    }
}

/// The state a `continue` token carries: the list's revision and the next key, relative to
/// the resource's key prefix. Encoded as upstream does (base64url of a small JSON object).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContinueToken {
    /// Format version, `meta.k8s.io/v1`.
    pub v: String,
    /// The revision of the first chunk.
    pub rv: i64,
    /// The key to continue from (inclusive), relative to the resource prefix.
    pub start: String,
}

impl ContinueToken {
    /// A token for `start` at `revision`.
    pub fn new(revision: Revision, start: String) -> Self {
        Self {
            v: "meta.k8s.io/v1".into(),
            rv: revision.0 as i64,
            start,
        }
    }

    /// The string sent to clients.
    pub fn encode(&self) -> String {
        let json = serde_json::to_vec(self).unwrap_or_default();
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
    }

    /// Parses a client's token.
    pub fn decode(raw: &str) -> Result<Self, ApiError> {
        let bad = || ApiError::bad_request("continue key is not valid: malformed token");
        let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(raw.trim_end_matches('='))
            .map_err(|_| bad())?;
        let token: Self = serde_json::from_slice(&bytes).map_err(|_| bad())?;
        if token.v != "meta.k8s.io/v1"
            || token.rv <= 0
            || token.start.starts_with('/')
            || token.start.contains("..")
        {
            return Err(bad());
        }
        Ok(token)
    }
}

/// Options of create, update and patch.
#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    /// `dryRun=All`.
    pub dry_run: bool,
    /// `fieldManager`.
    pub field_manager: Option<String>,
    /// The manager of a write that names none: the product of the client's `User-Agent`.
    pub default_manager: String,
    /// `force`: an apply takes over the fields other managers own.
    pub force: bool,
    /// `fieldValidation`.
    pub field_validation: FieldValidation,
    /// Who writes.
    pub user: capstan_auth::UserInfo,
    /// The verb the request was authorized as (`create`, `update`, `patch`); empty for the
    /// server's own writes, taken as the operation's own verb.
    pub verb: String,
    /// Where admission leaves its warnings and audit annotations.
    pub feedback: std::sync::Arc<capstan_admission::Feedback>,
    /// Asked before an update or a patch creates the object it names.
    pub create_check: CreateCheck,
    /// The form the client wrote in, when a converted version passes the write on.
    pub served_as: Option<capstan_admission::Form>,
}

/// Whether the caller of an update or a patch may create the object it names. Asked only when
/// the write would create it (a PUT of a missing Lease, an apply patch of a new ConfigMap):
/// the request was authorized as an update or a patch, and upstream authorizes the create
/// with verb `create` at that point.
#[async_trait::async_trait]
pub trait CreateAuthorization: Send + Sync {
    /// `Ok` when the caller may create the object; the refusal (a 403) otherwise.
    async fn check(&self) -> Result<(), capstan_meta::ApiError>;
}

/// The [`CreateAuthorization`] of a write; none for the server's own writes.
#[derive(Clone, Default)]
pub struct CreateCheck(pub Option<std::sync::Arc<dyn CreateAuthorization>>);

impl CreateCheck {
    /// `Ok` when there is no check or it passes.
    pub async fn check(&self) -> Result<(), capstan_meta::ApiError> {
        match &self.0 {
            Some(authorization) => authorization.check().await,
            None => Ok(()),
        }
    }
}

impl std::fmt::Debug for CreateCheck {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "CreateCheck(authorizer)"
        } else {
            "CreateCheck(none)"
        })
    }
}

impl WriteOptions {
    /// Options of the server's own writes (post-start hooks, controllers): made by
    /// `system:apiserver` in `system:masters`, as upstream's loopback client.
    pub fn server() -> Self {
        Self {
            user: capstan_auth::UserInfo {
                name: "system:apiserver".into(),
                groups: vec![
                    capstan_auth::UserInfo::MASTERS.into(),
                    capstan_auth::UserInfo::AUTHENTICATED.into(),
                ],
                ..Default::default()
            },
            ..Default::default()
        }
    }

    /// The field manager the write is recorded under.
    pub fn manager(&self) -> &str {
        match self.field_manager.as_deref() {
            Some(m) => m,
            None if self.default_manager.is_empty() => "unknown",
            None => &self.default_manager,
        }
    }

    /// The manager taken from a `User-Agent` (`kubectl/v1.33.0 (linux/amd64) ...` →
    /// `kubectl`), as upstream does for writes without `fieldManager`.
    pub fn manager_from_user_agent(user_agent: &str) -> String {
        let product = user_agent.split('/').next().unwrap_or_default().trim();
        product
            .chars()
            .take(crate::managed::MAX_MANAGER_LENGTH)
            .collect()
    }
}

/// Options of delete and deletecollection (query and body merged).
#[derive(Debug, Clone, Default)]
pub struct DeleteOptions {
    /// `dryRun=All`.
    pub dry_run: bool,
    /// Only delete if the object still has this uid.
    pub precondition_uid: Option<String>,
    /// Only delete if the object is still at this resourceVersion.
    pub precondition_resource_version: Option<String>,
    /// `gracePeriodSeconds`.
    pub grace_period_seconds: Option<i64>,
    /// `propagationPolicy`.
    pub propagation_policy: Option<String>,
    /// The deprecated `orphanDependents` (body only); `false` turns the answer to a delete
    /// that is not finished at once into 202, as upstream.
    pub orphan_dependents: Option<bool>,
    /// Who deletes.
    pub user: capstan_auth::UserInfo,
    /// Where admission leaves its warnings and audit annotations.
    pub feedback: std::sync::Arc<capstan_admission::Feedback>,
    /// The form the client deleted in, when a converted version passes the delete on.
    pub served_as: Option<capstan_admission::Form>,
}

impl DeleteOptions {
    /// Merges an optional JSON `DeleteOptions` body over the query values.
    pub fn parse(
        body: &[u8],
        dry_run: &[&str],
        grace_period_seconds: Option<&str>,
        propagation_policy: Option<&str>,
    ) -> Result<Self, ApiError> {
        let mut out = Self {
            dry_run: parse_dry_run(dry_run)?,
            grace_period_seconds: match grace_period_seconds {
                None | Some("") => None,
                Some(raw) => Some(raw.parse().map_err(|_| {
                    ApiError::bad_request(format!(
                        "invalid gracePeriodSeconds {raw:?}: not an integer"
                    ))
                })?),
            },
            propagation_policy: propagation_policy
                .filter(|p| !p.is_empty())
                .map(str::to_string),
            ..Default::default()
        };
        // No body, or a JSON `null` (which upstream takes as no options).
        let parsed: Option<capstan_meta::v1::DeleteOptions> = if body
            .iter()
            .all(u8::is_ascii_whitespace)
        {
            None
        } else {
            serde_json::from_slice(body).map_err(|e| {
                ApiError::bad_request(format!("the body of a delete must be DeleteOptions: {e}"))
            })?
        };
        if let Some(parsed) = parsed {
            if let Some(values) = &parsed.dry_run {
                let refs: Vec<&str> = values.iter().map(String::as_str).collect();
                out.dry_run |= parse_dry_run(&refs)?;
            }
            if parsed.grace_period_seconds.is_some() {
                out.grace_period_seconds = parsed.grace_period_seconds;
            }
            if parsed.propagation_policy.is_some() {
                out.propagation_policy = parsed.propagation_policy;
            }
            out.orphan_dependents = parsed.orphan_dependents;
            if let Some(pre) = parsed.preconditions {
                out.precondition_uid = pre.uid;
                out.precondition_resource_version = pre.resource_version;
            }
        }
        if let Some(p) = &out.propagation_policy
            && !matches!(p.as_str(), "Orphan" | "Background" | "Foreground")
        {
            let e = FieldError::not_supported(
                "propagationPolicy",
                p,
                &["Foreground", "Background", "Orphan"],
            );
            return Err(ApiError::invalid("meta.k8s.io", "DeleteOptions", "", &[e]));
        }
        Ok(out)
    }
}

/// What admission needs of a write's options: who writes, whether for real, and where the
/// plugins leave their feedback.
pub trait Writer {
    /// Who writes.
    fn user(&self) -> &capstan_auth::UserInfo;
    /// `dryRun=All`.
    fn dry_run(&self) -> bool;
    /// Where admission leaves its warnings and audit annotations.
    fn feedback(&self) -> &std::sync::Arc<capstan_admission::Feedback>;
    /// The form the client wrote in, when it is not the stored one.
    fn served_as(&self) -> Option<&capstan_admission::Form>;
}

/// Both option types carry the four fields under the same names.
macro_rules! writer {
    ($($options:ty),*) => {$(
        impl Writer for $options {
            fn user(&self) -> &capstan_auth::UserInfo {
                &self.user
            }
            fn dry_run(&self) -> bool {
                self.dry_run
            }
            fn feedback(&self) -> &std::sync::Arc<capstan_admission::Feedback> {
                &self.feedback
            }
            fn served_as(&self) -> Option<&capstan_admission::Form> {
                self.served_as.as_ref()
            }
        }
    )*};
}

writer!(WriteOptions, DeleteOptions);

#[cfg(test)]
mod tests {
    use super::*;

    fn list(q: ListQuery<'_>) -> Result<ListOptions, ApiError> {
        ListOptions::parse(&q)
    }

    #[test]
    fn continue_tokens_round_trip() {
        let t = ContinueToken::new(Revision(42), "fast\u{0}".into());
        assert_eq!(ContinueToken::decode(&t.encode()).unwrap(), t);
        assert_eq!(
            ContinueToken::decode("not a token").unwrap_err().code(),
            400
        );
    }

    #[test]
    fn invalid_combinations() {
        let token = ContinueToken::new(Revision(3), "a".into()).encode();
        let cases = [
            (
                ListQuery {
                    resource_version_match: Some("Exact"),
                    ..Default::default()
                },
                422,
            ),
            (
                ListQuery {
                    resource_version_match: Some("NotOlderThan"),
                    ..Default::default()
                },
                422,
            ),
            (
                ListQuery {
                    resource_version: Some("0"),
                    resource_version_match: Some("Exact"),
                    ..Default::default()
                },
                422,
            ),
            (
                ListQuery {
                    resource_version: Some("5"),
                    resource_version_match: Some("Sometime"),
                    ..Default::default()
                },
                422,
            ),
            (
                ListQuery {
                    resource_version: Some("5"),
                    continue_token: Some(&token),
                    limit: Some("1"),
                    ..Default::default()
                },
                400,
            ),
            (
                ListQuery {
                    resource_version: Some("abc"),
                    ..Default::default()
                },
                400,
            ),
            (
                ListQuery {
                    label_selector: Some("a in b"),
                    ..Default::default()
                },
                400,
            ),
            (
                ListQuery {
                    field_selector: Some("nonsense"),
                    ..Default::default()
                },
                400,
            ),
            (
                ListQuery {
                    limit: Some("ten"),
                    ..Default::default()
                },
                400,
            ),
        ];
        for (q, code) in cases {
            let dbg = format!("{q:?}");
            assert_eq!(list(q).unwrap_err().code(), code, "{dbg}");
        }
        // rv=0 with a continue token is tolerated (treated as the token's version).
        assert!(
            list(ListQuery {
                resource_version: Some("0"),
                continue_token: Some(&token),
                ..Default::default()
            })
            .is_ok()
        );
    }

    #[test]
    fn dry_run_values() {
        assert!(parse_dry_run(&["All"]).unwrap());
        assert!(!parse_dry_run(&[]).unwrap());
        assert_eq!(parse_dry_run(&["Some"]).unwrap_err().code(), 400);
    }

    #[test]
    fn delete_options_from_body() {
        let body = br#"{"kind":"DeleteOptions","apiVersion":"v1","preconditions":{"uid":"u1"},"dryRun":["All"]}"#;
        let o = DeleteOptions::parse(body, &[], None, None).unwrap();
        assert!(o.dry_run);
        assert_eq!(o.precondition_uid.as_deref(), Some("u1"));
        assert_eq!(
            DeleteOptions::parse(b"", &[], None, Some("Sideways"))
                .unwrap_err()
                .code(),
            422
        );
        // A JSON null is no options, as upstream takes it; other non-objects are refused.
        let o = DeleteOptions::parse(b"null", &["All"], Some("5"), None).unwrap();
        assert!(o.dry_run);
        assert_eq!(o.grace_period_seconds, Some(5));
        assert_eq!(
            DeleteOptions::parse(b"[]", &[], None, None)
                .unwrap_err()
                .code(),
            400
        );
    }
}
