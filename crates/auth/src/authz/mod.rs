//! Authorization: may this user do this.

pub mod abac;
pub mod node;
pub mod rbac;

use std::sync::Arc;

use async_trait::async_trait;

use crate::error::{Error, Result};
use crate::user::UserInfo;

/// What a request asks to do, as upstream's authorizer attributes.
#[derive(Debug, Clone, Default)]
pub struct Attributes {
    /// Who asks.
    pub user: UserInfo,
    /// The verb: get, list, watch, create, update, patch, delete, deletecollection; for
    /// non-resource requests the lower-case HTTP method.
    pub verb: String,
    /// Whether this is a request for an API resource (as opposed to e.g. `/version`).
    pub resource_request: bool,
    /// API group (resource requests).
    pub api_group: String,
    /// API version (resource requests).
    pub api_version: String,
    /// Plural resource (resource requests).
    pub resource: String,
    /// Subresource, if any.
    pub subresource: String,
    /// Namespace, if any.
    pub namespace: String,
    /// Object name, if any.
    pub name: String,
    /// The request path (non-resource requests).
    pub path: String,
    /// The field selector of a list, watch or deletecollection, parsed (empty when there is
    /// none or it does not parse), as upstream's authorize-with-selectors passes it on.
    pub field_selector: Vec<capstan_meta::fields::FieldRequirement>,
}

impl Attributes {
    /// Whether the field selector requires `field` to equal `value` (an `=` or `==` term).
    pub fn selects(&self, field: &str, value: &str) -> bool {
        self.field_selector
            .iter()
            .any(|r| !r.negated && r.field == field && r.value == value)
    }
}

/// An authorizer's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Allowed.
    Allow,
    /// Denied, and no later authorizer is asked.
    Deny(String),
    /// Neither; ask the next one.
    NoOpinion(String),
}

/// Verbs on resources a rule allows (`*` matches everything in its list).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ResourceRule {
    /// Verbs.
    pub verbs: Vec<String>,
    /// API groups.
    pub api_groups: Vec<String>,
    /// Resources (`resource/subresource` for subresources).
    pub resources: Vec<String>,
    /// Object names; empty: all.
    pub resource_names: Vec<String>,
}

/// Verbs on non-resource paths a rule allows (a trailing `*` is a prefix match).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NonResourceRule {
    /// Verbs.
    pub verbs: Vec<String>,
    /// Paths.
    pub non_resource_urls: Vec<String>,
}

/// What a user may do in a namespace, as far as the authorizers can list it (a
/// SelfSubjectRulesReview, `kubectl auth can-i --list`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RuleSet {
    /// Rules on resources.
    pub resource_rules: Vec<ResourceRule>,
    /// Rules on non-resource paths.
    pub non_resource_rules: Vec<NonResourceRule>,
    /// Whether some authorizer could not list everything it would allow.
    pub incomplete: bool,
    /// Why the list may be wrong, if it may.
    pub evaluation_error: String,
}

impl RuleSet {
    /// Every verb on everything.
    pub fn everything() -> Self {
        let all = || vec!["*".to_string()];
        Self {
            resource_rules: vec![ResourceRule {
                verbs: all(),
                api_groups: all(),
                resources: all(),
                resource_names: Vec::new(),
            }],
            non_resource_rules: vec![NonResourceRule {
                verbs: all(),
                non_resource_urls: all(),
            }],
            ..Default::default()
        }
    }
}

/// What a review of the chain found (a SubjectAccessReview's status).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Allowed.
    pub allowed: bool,
    /// Denied outright by an authorizer (not only not allowed).
    pub denied: bool,
    /// The deciding authorizer's reason, or every reason when none decided.
    pub reason: String,
}

/// One authorization mode.
#[async_trait]
pub trait Authorizer: Send + Sync + 'static {
    /// Decides on one request; by default [`Self::authorize_now`]'s decision (an authorizer
    /// that has to wait, a remote webhook, implements this instead).
    async fn authorize(&self, attributes: &Attributes) -> Decision {
        self.authorize_now(attributes)
            .unwrap_or_else(|| Decision::NoOpinion(String::new()))
    }

    /// The decision when it is known without waiting (an index in memory), or `None` when
    /// only [`Self::authorize`] can tell. The request path asks this first.
    fn authorize_now(&self, _attributes: &Attributes) -> Option<Decision> {
        None
    }

    /// What allowed a request this authorizer allows, for access reviews (not asked on the
    /// request path); by default nothing is said.
    async fn why_allowed(&self, _attributes: &Attributes) -> String {
        String::new()
    }

    /// What `user` may do in `namespace` (cluster-wide rules included); by default the
    /// authorizer cannot say (incomplete).
    async fn rules_for(&self, _user: &UserInfo, _namespace: &str) -> RuleSet {
        RuleSet {
            incomplete: true,
            ..Default::default()
        }
    }
}

/// `AlwaysAllow`: everything is allowed.
#[derive(Debug, Clone, Copy, Default)]
pub struct AlwaysAllow;

#[async_trait]
impl Authorizer for AlwaysAllow {
    fn authorize_now(&self, _: &Attributes) -> Option<Decision> {
        Some(Decision::Allow)
    }

    async fn rules_for(&self, _: &UserInfo, _: &str) -> RuleSet {
        RuleSet::everything()
    }
}

/// `AlwaysDeny`: nothing is allowed (it has no opinion, so a later mode may still allow).
#[derive(Debug, Clone, Copy, Default)]
pub struct AlwaysDeny;

#[async_trait]
impl Authorizer for AlwaysDeny {
    fn authorize_now(&self, _: &Attributes) -> Option<Decision> {
        Some(Decision::NoOpinion("Everything is forbidden.".into()))
    }

    async fn rules_for(&self, _: &UserInfo, _: &str) -> RuleSet {
        RuleSet::default()
    }
}

/// Allows members of `system:masters` everything, ahead of every configured mode.
#[derive(Debug, Clone, Copy, Default)]
pub struct PrivilegedGroups;

#[async_trait]
impl Authorizer for PrivilegedGroups {
    fn authorize_now(&self, attributes: &Attributes) -> Option<Decision> {
        Some(if attributes.user.in_group(UserInfo::MASTERS) {
            Decision::Allow
        } else {
            Decision::NoOpinion(String::new())
        })
    }

    async fn rules_for(&self, user: &UserInfo, _: &str) -> RuleSet {
        if user.in_group(UserInfo::MASTERS) {
            RuleSet::everything()
        } else {
            RuleSet::default()
        }
    }
}

/// What the modes that need more than their name are made of.
#[derive(Clone, Default)]
pub struct ModeParts {
    /// The index `RBAC` reads.
    pub rbac: Arc<rbac::RbacIndex>,
    /// The graph `Node` reads.
    pub node: Arc<node::NodeGraph>,
    /// `ABAC`'s policies (`--authorization-policy-file`).
    pub abac: Option<Arc<dyn Authorizer>>,
    /// The `Webhook` authorizer (`--authorization-webhook-config-file`).
    pub webhook: Option<Arc<dyn Authorizer>>,
}

/// One authorizer's part in the chain's decision: allowed (`Ok`) or denied with its reason,
/// which ends the chain; or no opinion, whose reason, if any, joins `reasons`.
fn settle(
    decision: Decision,
    reasons: &mut Vec<String>,
) -> Option<std::result::Result<(), String>> {
    match decision {
        Decision::Allow => Some(Ok(())),
        Decision::Deny(reason) => Some(Err(reason)),
        Decision::NoOpinion(why) => {
            if !why.is_empty() {
                reasons.push(why);
            }
            None
        }
    }
}

/// The configured modes, asked in order: the first allow or deny decides.
#[derive(Clone)]
pub struct AuthorizerChain {
    authorizers: Vec<Arc<dyn Authorizer>>,
}

impl AuthorizerChain {
    /// A chain of the given authorizers, behind [`PrivilegedGroups`].
    pub fn new(mut authorizers: Vec<Arc<dyn Authorizer>>) -> Self {
        authorizers.insert(0, Arc::new(PrivilegedGroups));
        Self { authorizers }
    }

    /// Builds the chain of `--authorization-mode` (comma-separated mode names) from `parts`.
    pub fn from_modes(modes: &[String], parts: &ModeParts) -> Result<Self> {
        let needs = |mode: &str, given: bool, what: &str, option: &'static str| -> Result<()> {
            match (modes.iter().any(|m| m == mode), given) {
                (true, false) => Err(Error::Invalid {
                    option: "--authorization-mode",
                    reason: format!("authorization-mode {mode}'s {what} not passed"),
                }),
                (false, true) => Err(Error::Invalid {
                    option,
                    reason: format!("cannot specify {option} without mode {mode}"),
                }),
                _ => Ok(()),
            }
        };
        needs(
            "ABAC",
            parts.abac.is_some(),
            "authorization policy file",
            "--authorization-policy-file",
        )?;
        needs(
            "Webhook",
            parts.webhook.is_some(),
            "authorization config file",
            "--authorization-webhook-config-file",
        )?;
        let mut seen: Vec<&str> = Vec::new();
        let mut authorizers: Vec<Arc<dyn Authorizer>> = Vec::new();
        for mode in modes {
            if seen.contains(&mode.as_str()) {
                return Err(Error::DuplicateMode(mode.clone()));
            }
            seen.push(mode);
            authorizers.push(match mode.as_str() {
                "AlwaysAllow" => Arc::new(AlwaysAllow),
                "AlwaysDeny" => Arc::new(AlwaysDeny),
                "RBAC" => Arc::new(rbac::Rbac::new(parts.rbac.clone())),
                "Node" => Arc::new(node::NodeAuthorizer::new(parts.node.clone())),
                "ABAC" => parts.abac.clone().ok_or(Error::UnknownMode(mode.clone()))?,
                "Webhook" => parts
                    .webhook
                    .clone()
                    .ok_or(Error::UnknownMode(mode.clone()))?,
                other => return Err(Error::UnknownMode(other.to_string())),
            });
        }
        Ok(Self::new(authorizers))
    }

    /// Allowed, or the reason it is not (403).
    pub async fn authorize(&self, attributes: &Attributes) -> std::result::Result<(), String> {
        let verdict = self.decide(attributes, false).await;
        if verdict.allowed {
            Ok(())
        } else {
            Err(verdict.reason)
        }
    }

    /// The chain's decision with its reason, as a SubjectAccessReview reports it (an allow
    /// says what allowed it, where the authorizer can tell).
    pub async fn review(&self, attributes: &Attributes) -> Verdict {
        self.decide(attributes, true).await
    }

    /// [`Self::authorize`]'s answer when every authorizer it asks decides without waiting
    /// (`None` as soon as one cannot: the caller then awaits [`Self::authorize`]).
    pub fn authorize_now(
        &self,
        attributes: &Attributes,
    ) -> Option<std::result::Result<(), String>> {
        let mut reasons = Vec::new();
        for a in &self.authorizers {
            if let Some(decided) = settle(a.authorize_now(attributes)?, &mut reasons) {
                return Some(decided);
            }
        }
        Some(Err(reasons.join("; ")))
    }

    async fn decide(&self, attributes: &Attributes, explain: bool) -> Verdict {
        let mut reasons = Vec::new();
        for a in &self.authorizers {
            match settle(a.authorize(attributes).await, &mut reasons) {
                Some(Ok(())) => {
                    return Verdict {
                        allowed: true,
                        reason: if explain {
                            a.why_allowed(attributes).await
                        } else {
                            String::new()
                        },
                        ..Default::default()
                    };
                }
                Some(Err(reason)) => {
                    return Verdict {
                        denied: true,
                        reason,
                        ..Default::default()
                    };
                }
                None => {}
            }
        }
        Verdict {
            reason: reasons.join("; "),
            ..Default::default()
        }
    }

    /// Every authorizer's rules for `user` in `namespace`, together.
    pub async fn rules_for(&self, user: &UserInfo, namespace: &str) -> RuleSet {
        let mut all = RuleSet::default();
        let mut errors = Vec::new();
        for a in &self.authorizers {
            let rules = a.rules_for(user, namespace).await;
            all.resource_rules.extend(rules.resource_rules);
            all.non_resource_rules.extend(rules.non_resource_rules);
            all.incomplete |= rules.incomplete;
            if !rules.evaluation_error.is_empty() {
                errors.push(rules.evaluation_error);
            }
        }
        all.evaluation_error = errors.join("; ");
        all
    }
}

/// The chain as one authorizer (for admission plugins that ask about other verbs): allowed,
/// or denied with the chain's reason.
#[async_trait]
impl Authorizer for AuthorizerChain {
    fn authorize_now(&self, attributes: &Attributes) -> Option<Decision> {
        Some(match AuthorizerChain::authorize_now(self, attributes)? {
            Ok(()) => Decision::Allow,
            Err(reason) => Decision::Deny(reason),
        })
    }

    async fn authorize(&self, attributes: &Attributes) -> Decision {
        match self.decide(attributes, false).await {
            verdict if verdict.allowed => Decision::Allow,
            verdict => Decision::Deny(verdict.reason),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn attrs(groups: &[&str]) -> Attributes {
        Attributes {
            user: UserInfo {
                name: "u".into(),
                groups: groups.iter().map(|g| g.to_string()).collect(),
                ..Default::default()
            },
            verb: "get".into(),
            ..Default::default()
        }
    }

    #[tokio::test]
    async fn modes() {
        let index = ModeParts::default();
        let allow = AuthorizerChain::from_modes(&["AlwaysAllow".into()], &index).unwrap();
        assert!(allow.authorize(&attrs(&[])).await.is_ok());
        let deny = AuthorizerChain::from_modes(&["AlwaysDeny".into()], &index).unwrap();
        assert_eq!(
            deny.authorize(&attrs(&[])).await.unwrap_err(),
            "Everything is forbidden."
        );
        assert!(
            deny.authorize(&attrs(&[UserInfo::MASTERS])).await.is_ok(),
            "system:masters is always allowed"
        );
        let both =
            AuthorizerChain::from_modes(&["AlwaysDeny".into(), "AlwaysAllow".into()], &index)
                .unwrap();
        assert!(
            both.authorize(&attrs(&[])).await.is_ok(),
            "a later mode may allow"
        );
        assert!(AuthorizerChain::from_modes(&["RBAC2".into()], &index).is_err());
        assert!(
            AuthorizerChain::from_modes(&["AlwaysAllow".into(), "AlwaysAllow".into()], &index)
                .is_err()
        );
    }

    /// Stands for a remote authorizer: it decides only when awaited.
    struct Remote;

    #[async_trait]
    impl Authorizer for Remote {
        async fn authorize(&self, _: &Attributes) -> Decision {
            Decision::Deny("remote says no".into())
        }
    }

    #[tokio::test]
    async fn decisions_at_once_agree_with_the_awaited_ones() {
        let index = ModeParts::default();
        let both =
            AuthorizerChain::from_modes(&["AlwaysDeny".into(), "AlwaysAllow".into()], &index)
                .unwrap();
        let deny = AuthorizerChain::from_modes(&["AlwaysDeny".into()], &index).unwrap();
        for chain in [&both, &deny] {
            for groups in [&[][..], &[UserInfo::MASTERS][..]] {
                let a = attrs(groups);
                assert_eq!(chain.authorize_now(&a), Some(chain.authorize(&a).await));
            }
        }
        let remote = AuthorizerChain::new(vec![Arc::new(AlwaysDeny), Arc::new(Remote)]);
        assert_eq!(
            remote.authorize_now(&attrs(&[UserInfo::MASTERS])),
            Some(Ok(())),
            "decided before the remote authorizer is reached"
        );
        assert_eq!(
            remote.authorize_now(&attrs(&[])),
            None,
            "the remote one must be awaited"
        );
        assert_eq!(
            remote.authorize(&attrs(&[])).await.unwrap_err(),
            "remote says no"
        );
    }
}
