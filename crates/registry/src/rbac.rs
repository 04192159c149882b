//! RBAC's escalation prevention, as upstream's RBAC storage does it: a user may write a role
//! only with rules it holds itself (or with the `escalate` verb on it), and may bind a role
//! only if it holds the role's rules (or has the `bind` verb on it). Members of
//! `system:masters` may do both. Also the conversions of the RBAC objects into the
//! authorizer's terms.

use std::sync::Arc;

use async_trait::async_trait;
use capstan_auth::UserInfo;
use capstan_auth::authz::rbac::{
    Binding, PolicyRule, RbacIndex, RoleRef, Subject, describe_missing, uncovered,
};
use capstan_auth::authz::{Attributes, AuthorizerChain};
use capstan_meta::{ApiError, GroupResource};
use k8s_openapi::api::rbac::v1 as api;

use crate::error::Result;
use crate::hooks::WriteCheck;

const GROUP: &str = "rbac.authorization.k8s.io";

/// The rules of a role, in the authorizer's terms.
pub fn policy_rules(rules: Option<&[api::PolicyRule]>) -> Vec<PolicyRule> {
    rules
        .unwrap_or_default()
        .iter()
        .map(|r| PolicyRule {
            verbs: r.verbs.clone(),
            api_groups: r.api_groups.clone().unwrap_or_default(),
            resources: r.resources.clone().unwrap_or_default(),
            resource_names: r.resource_names.clone().unwrap_or_default(),
            non_resource_urls: r.non_resource_urls.clone().unwrap_or_default(),
        })
        .collect()
}

/// The role a binding refers to.
pub fn role_ref(role_ref: &api::RoleRef) -> RoleRef {
    match role_ref.kind.as_str() {
        "Role" => RoleRef::Role(role_ref.name.clone()),
        _ => RoleRef::ClusterRole(role_ref.name.clone()),
    }
}

/// A binding in the authorizer's terms (service accounts without a namespace are in the
/// binding's).
pub fn binding(
    namespace: &str,
    name: &str,
    role: &api::RoleRef,
    subjects: Option<&[api::Subject]>,
) -> Binding {
    let subjects = subjects
        .unwrap_or_default()
        .iter()
        .filter_map(|s| match s.kind.as_str() {
            "User" => Some(Subject::User(s.name.clone())),
            "Group" => Some(Subject::Group(s.name.clone())),
            "ServiceAccount" => Some(Subject::ServiceAccount {
                namespace: s
                    .namespace
                    .clone()
                    .filter(|n| !n.is_empty())
                    .unwrap_or_else(|| namespace.to_string()),
                name: s.name.clone(),
            }),
            _ => None,
        })
        .collect();
    Binding {
        namespace: namespace.to_string(),
        name: name.to_string(),
        role: role_ref(role),
        subjects,
    }
}

/// The escalation checks of the four RBAC kinds.
pub struct Escalation {
    authorizers: Arc<AuthorizerChain>,
    index: Arc<RbacIndex>,
}

impl Escalation {
    /// Checks with `authorizers` (the `escalate` and `bind` verbs) and the rules `index`
    /// holds for the writer.
    pub fn new(authorizers: Arc<AuthorizerChain>, index: Arc<RbacIndex>) -> Arc<Self> {
        Arc::new(Self { authorizers, index })
    }

    async fn may(&self, user: &UserInfo, verb: &str, resource: &str, ns: &str, name: &str) -> bool {
        let attrs = Attributes {
            user: user.clone(),
            verb: verb.into(),
            resource_request: true,
            api_group: GROUP.into(),
            api_version: "v1".into(),
            resource: resource.into(),
            namespace: ns.into(),
            name: name.into(),
            ..Default::default()
        };
        self.authorizers.authorize(&attrs).await.is_ok()
    }

    /// Refuses unless `user` holds every rule of `wanted` in `namespace`.
    fn confirm_no_escalation(
        &self,
        user: &UserInfo,
        namespace: &str,
        wanted: &[PolicyRule],
        gr: (&str, &str),
    ) -> Result<()> {
        let held = self.index.user_rules(user, namespace);
        let missing = uncovered(&held, wanted);
        if missing.is_empty() {
            return Ok(());
        }
        let groups = user
            .groups
            .iter()
            .map(|g| format!("{g:?}"))
            .collect::<Vec<_>>()
            .join(" ");
        let rules = describe_missing(&missing);
        let why = format!(
            "user {:?} (groups=[{groups}]) is attempting to grant RBAC permissions not currently held:\n{rules}",
            user.name
        );
        Err(ApiError::forbidden_because(&GroupResource::new(GROUP, gr.0), gr.1, &why).into())
    }

    async fn check_role(
        &self,
        user: &UserInfo,
        resource: &str,
        namespace: &str,
        name: &str,
        rules: &[PolicyRule],
    ) -> Result<()> {
        if user.in_group(UserInfo::MASTERS)
            || self.may(user, "escalate", resource, namespace, name).await
        {
            return Ok(());
        }
        self.confirm_no_escalation(user, namespace, rules, (resource, name))
    }

    async fn check_binding(
        &self,
        user: &UserInfo,
        resource: &str,
        namespace: &str,
        name: &str,
        role: &api::RoleRef,
    ) -> Result<()> {
        if user.in_group(UserInfo::MASTERS) {
            return Ok(());
        }
        let role_resource = if role.kind == "Role" {
            "roles"
        } else {
            "clusterroles"
        };
        if self
            .may(user, "bind", role_resource, namespace, &role.name)
            .await
        {
            return Ok(());
        }
        // Without the role (not there yet), nothing it grants can be confirmed as held: not
        // found, named as upstream's role lookup names it (the binding's resource).
        let Some(rules) = self.index.role_rules(namespace, &role_ref(role)) else {
            return Err(
                ApiError::not_found(&GroupResource::new(GROUP, resource), &role.name).into(),
            );
        };
        self.confirm_no_escalation(user, namespace, &rules, (resource, name))
    }
}

fn meta_of(meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta) -> (&str, &str) {
    (
        meta.namespace.as_deref().unwrap_or_default(),
        meta.name.as_deref().unwrap_or_default(),
    )
}

#[async_trait]
impl WriteCheck<api::Role> for Escalation {
    async fn check(&self, new: &api::Role, old: Option<&api::Role>, user: &UserInfo) -> Result<()> {
        if old.is_some_and(|old| old.rules == new.rules) {
            return Ok(());
        }
        let (ns, name) = meta_of(&new.metadata);
        let rules = policy_rules(new.rules.as_deref());
        self.check_role(user, "roles", ns, name, &rules).await
    }
}

/// Every permission there is: what an aggregation rule can gather.
fn full_authority() -> Vec<PolicyRule> {
    let all = || vec!["*".to_string()];
    vec![
        PolicyRule {
            verbs: all(),
            api_groups: all(),
            resources: all(),
            ..Default::default()
        },
        PolicyRule {
            verbs: all(),
            non_resource_urls: all(),
            ..Default::default()
        },
    ]
}

/// Whether an update changes no more than what the garbage collector writes (owner references
/// and finalizers) and the server's bookkeeping.
fn only_collector_fields(new: &api::ClusterRole, old: &api::ClusterRole) -> bool {
    let strip = |role: &api::ClusterRole| {
        let mut role = role.clone();
        let meta = &mut role.metadata;
        meta.owner_references = None;
        meta.finalizers = None;
        meta.managed_fields = None;
        meta.resource_version = None;
        meta.generation = None;
        role
    };
    strip(new) == strip(old)
}

#[async_trait]
impl WriteCheck<api::ClusterRole> for Escalation {
    async fn check(
        &self,
        new: &api::ClusterRole,
        old: Option<&api::ClusterRole>,
        user: &UserInfo,
    ) -> Result<()> {
        let aggregating =
            new.aggregation_rule.is_some() || old.is_some_and(|old| old.aggregation_rule.is_some());
        let unchanged_rules = old.is_some_and(|old| old.rules == new.rules);
        if unchanged_rules && !aggregating {
            return Ok(());
        }
        if old.is_some_and(|old| only_collector_fields(new, old)) {
            return Ok(());
        }
        let (_, name) = meta_of(&new.metadata);
        if user.in_group(UserInfo::MASTERS)
            || self.may(user, "escalate", "clusterroles", "", name).await
        {
            return Ok(());
        }
        if !unchanged_rules {
            let rules = policy_rules(new.rules.as_deref());
            self.confirm_no_escalation(user, "", &rules, ("clusterroles", name))?;
        }
        // An aggregation rule gathers whatever roles it selects, today's and tomorrow's: setting,
        // changing or keeping one needs every permission there is, as upstream.
        if aggregating
            && self
                .confirm_no_escalation(user, "", &full_authority(), ("clusterroles", name))
                .is_err()
        {
            return Err(ApiError::forbidden_because(
                &GroupResource::new(GROUP, "clusterroles"),
                name,
                "must have cluster-admin privileges to use the aggregationRule",
            )
            .into());
        }
        Ok(())
    }
}

#[async_trait]
impl WriteCheck<api::RoleBinding> for Escalation {
    async fn check(
        &self,
        new: &api::RoleBinding,
        old: Option<&api::RoleBinding>,
        user: &UserInfo,
    ) -> Result<()> {
        if old.is_some_and(|old| old.role_ref == new.role_ref && old.subjects == new.subjects) {
            return Ok(());
        }
        let (ns, name) = meta_of(&new.metadata);
        self.check_binding(user, "rolebindings", ns, name, &new.role_ref)
            .await
    }
}

#[async_trait]
impl WriteCheck<api::ClusterRoleBinding> for Escalation {
    async fn check(
        &self,
        new: &api::ClusterRoleBinding,
        old: Option<&api::ClusterRoleBinding>,
        user: &UserInfo,
    ) -> Result<()> {
        if old.is_some_and(|old| old.role_ref == new.role_ref && old.subjects == new.subjects) {
            return Ok(());
        }
        let (_, name) = meta_of(&new.metadata);
        self.check_binding(user, "clusterrolebindings", "", name, &new.role_ref)
            .await
    }
}
