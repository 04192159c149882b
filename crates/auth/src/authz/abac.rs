//! ABAC (`--authorization-mode=ABAC`, `--authorization-policy-file`): a file of policies, one
//! JSON object per line (`abac.authorization.kubernetes.io/v1beta1` Policy, or the
//! unversioned v0 form), each allowing a subject some requests; a request is allowed when a
//! policy matches it.

use std::path::Path;

use async_trait::async_trait;
use serde::Deserialize;

use super::{Attributes, Authorizer, Decision, NonResourceRule, ResourceRule, RuleSet};
use crate::error::{Error, Result};
use crate::user::UserInfo;

const OPTION: &str = "--authorization-policy-file";

/// One policy's `spec`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Policy {
    /// A user name, or `*`.
    pub user: String,
    /// A group, or `*`.
    pub group: String,
    /// Only get, list and watch.
    pub readonly: bool,
    /// An API group, or `*`.
    pub api_group: String,
    /// A resource, or `*`.
    pub resource: String,
    /// A namespace, or `*`.
    pub namespace: String,
    /// A non-resource path, `*`, or a prefix ending in `*`.
    pub non_resource_path: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Line {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    #[serde(default)]
    spec: Option<Policy>,
    // The v0 form's fields.
    #[serde(default)]
    user: String,
    #[serde(default)]
    group: String,
    #[serde(default)]
    readonly: bool,
    #[serde(default)]
    resource: String,
    #[serde(default)]
    namespace: String,
}

impl Policy {
    fn subject_matches(&self, user: &UserInfo) -> bool {
        let mut matched = false;
        if !self.user.is_empty() {
            if self.user != "*" && self.user != user.name {
                return false;
            }
            matched = true;
        }
        if !self.group.is_empty() {
            if self.group != "*" && !user.in_group(&self.group) {
                return false;
            }
            matched = true;
        }
        matched
    }

    fn matches(&self, a: &Attributes) -> bool {
        if !self.subject_matches(&a.user) {
            return false;
        }
        if self.readonly && !matches!(a.verb.as_str(), "get" | "list" | "watch") {
            return false;
        }
        let any = |spec: &str, v: &str| spec == "*" || spec == v;
        if a.resource_request {
            any(&self.namespace, &a.namespace)
                && any(&self.resource, &a.resource)
                && any(&self.api_group, &a.api_group)
        } else {
            any(&self.non_resource_path, &a.path)
                || self
                    .non_resource_path
                    .strip_suffix('*')
                    .is_some_and(|prefix| a.path.starts_with(prefix))
        }
    }
}

/// The policies of a file.
#[derive(Debug, Clone, Default)]
pub struct Abac {
    policies: Vec<Policy>,
}

impl Abac {
    /// Reads the policy file at `path`; a bad line fails naming the option and the line.
    pub fn load(path: &Path) -> Result<Self> {
        let text = std::fs::read_to_string(path).map_err(|source| Error::File {
            option: OPTION,
            path: path.into(),
            source,
        })?;
        Self::parse(&text).map_err(|reason| Error::Invalid {
            option: OPTION,
            reason: format!("{}: {reason}", path.display()),
        })
    }

    /// Parses policy lines; blank lines and `#` comments are skipped.
    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        let mut policies = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let bad = |why: String| format!("line {}: {why}", i + 1);
            let parsed: Line = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
            let policy = if parsed.api_version.is_empty() && parsed.kind.is_empty() {
                // v0: unset fields mean everything; no subject means every authenticated user.
                let all = |v: String| if v.is_empty() { "*".to_string() } else { v };
                let (user, group) = if parsed.user.is_empty() && parsed.group.is_empty() {
                    (String::new(), UserInfo::AUTHENTICATED.to_string())
                } else {
                    (parsed.user, parsed.group)
                };
                Policy {
                    user,
                    group,
                    readonly: parsed.readonly,
                    api_group: "*".into(),
                    resource: all(parsed.resource),
                    namespace: all(parsed.namespace),
                    non_resource_path: "*".into(),
                }
            } else if parsed.api_version == "abac.authorization.kubernetes.io/v1beta1"
                && parsed.kind == "Policy"
            {
                parsed
                    .spec
                    .ok_or_else(|| bad("a Policy without a spec".into()))?
            } else {
                return Err(bad(format!(
                    "unknown apiVersion {:?} and kind {:?} (abac.authorization.kubernetes.io/v1beta1 Policy, or the unversioned form)",
                    parsed.api_version, parsed.kind
                )));
            };
            policies.push(policy);
        }
        Ok(Self { policies })
    }

    /// The policies, in file order.
    pub fn policies(&self) -> &[Policy] {
        &self.policies
    }
}

impl Abac {
    /// This authorizer's decision, made in memory.
    fn decide(&self, attributes: &Attributes) -> Decision {
        if self.policies.iter().any(|p| p.matches(attributes)) {
            Decision::Allow
        } else {
            Decision::NoOpinion("No policy matched.".into())
        }
    }
}

#[async_trait]
impl Authorizer for Abac {
    fn authorize_now(&self, attributes: &Attributes) -> Option<Decision> {
        Some(self.decide(attributes))
    }

    async fn rules_for(&self, user: &UserInfo, namespace: &str) -> RuleSet {
        let mut set = RuleSet::default();
        for p in self.policies.iter().filter(|p| p.subject_matches(user)) {
            let verbs = if p.readonly {
                vec!["get".into(), "list".into(), "watch".into()]
            } else {
                vec!["*".into()]
            };
            if p.namespace == "*" || p.namespace == namespace {
                set.resource_rules.push(ResourceRule {
                    verbs: verbs.clone(),
                    api_groups: vec![p.api_group.clone()],
                    resources: vec![p.resource.clone()],
                    resource_names: Vec::new(),
                });
            }
            if !p.non_resource_path.is_empty() {
                set.non_resource_rules.push(NonResourceRule {
                    verbs,
                    non_resource_urls: vec![p.non_resource_path.clone()],
                });
            }
        }
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"
# admins
{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"user": "alice", "namespace": "*", "resource": "*", "apiGroup": "*", "nonResourcePath": "*"}}
{"apiVersion": "abac.authorization.kubernetes.io/v1beta1", "kind": "Policy", "spec": {"group": "readers", "readonly": true, "namespace": "projectx", "resource": "pods", "apiGroup": ""}}
{"user": "legacy", "resource": "events"}
"#;

    fn ask(user: &str, groups: &[&str], verb: &str, resource: &str, ns: &str) -> Attributes {
        Attributes {
            user: UserInfo {
                name: user.into(),
                groups: groups.iter().map(|g| g.to_string()).collect(),
                ..Default::default()
            },
            verb: verb.into(),
            resource_request: true,
            resource: resource.into(),
            namespace: ns.into(),
            ..Default::default()
        }
    }

    #[tokio::test]
    async fn policies_match_subject_verb_and_resource() {
        let abac = Abac::parse(FILE).unwrap();
        let allowed = async |a: Attributes| abac.authorize(&a).await == Decision::Allow;
        assert!(allowed(ask("alice", &[], "delete", "nodes", "")).await);
        assert!(allowed(ask("bob", &["readers"], "list", "pods", "projectx")).await);
        assert!(!allowed(ask("bob", &["readers"], "delete", "pods", "projectx")).await);
        assert!(!allowed(ask("bob", &["readers"], "list", "pods", "other")).await);
        assert!(allowed(ask("legacy", &[], "create", "events", "any")).await);
        assert!(!allowed(ask("legacy", &[], "create", "pods", "any")).await);
        let err = Abac::parse("{\"kind\": \"Other\"}").unwrap_err();
        assert!(err.starts_with("line 1:"), "{err}");
    }
}
