//! The RBAC authorizer: roles and bindings held in an index by subject, so that a request
//! reads only the bindings of its user, its groups and (for service accounts) its account,
//! never every binding. The API server keeps the index current from its watch caches.

use std::collections::HashMap;
use std::sync::{Arc, RwLock};

use async_trait::async_trait;

use super::{Attributes, Authorizer, Decision, NonResourceRule, ResourceRule, RuleSet};
use crate::user::UserInfo;

/// One rule of a role (upstream's PolicyRule).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicyRule {
    /// Verbs (`*`: all).
    pub verbs: Vec<String>,
    /// API groups (`*`: all).
    pub api_groups: Vec<String>,
    /// Resources, `resource/subresource`, `*/subresource` or `*`.
    pub resources: Vec<String>,
    /// Object names; empty: all.
    pub resource_names: Vec<String>,
    /// Non-resource paths; a trailing `*` matches a prefix.
    pub non_resource_urls: Vec<String>,
}

impl PolicyRule {
    /// Whether the rule allows the request.
    pub(crate) fn allows(&self, a: &Attributes) -> bool {
        let has = |list: &[String], v: &str| list.iter().any(|x| x == "*" || same(x, v));
        if !has(&self.verbs, &a.verb) {
            return false;
        }
        if !a.resource_request {
            return self.non_resource_urls.iter().any(|url| {
                url == "*"
                    || *url == a.path
                    || url
                        .strip_suffix('*')
                        .is_some_and(|prefix| a.path.starts_with(prefix))
            });
        }
        if !has(&self.api_groups, &a.api_group) {
            return false;
        }
        // `resource`, `resource/subresource`, `*/subresource` or `*`, compared in place.
        let resource = self.resources.iter().any(|r| {
            if r == "*" {
                return true;
            }
            match r.split_once('/') {
                None => a.subresource.is_empty() && same(r, &a.resource),
                Some((res, sub)) => {
                    !a.subresource.is_empty()
                        && sub == a.subresource
                        && (res == "*" || res == a.resource)
                }
            }
        });
        resource && (self.resource_names.is_empty() || self.resource_names.contains(&a.name))
    }
}

/// The role a binding grants.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RoleRef {
    /// A Role in the binding's namespace.
    Role(String),
    /// A ClusterRole.
    ClusterRole(String),
}

/// Who a binding grants its role to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Subject {
    /// A user, by name.
    User(String),
    /// A group.
    Group(String),
    /// A service account (the namespace defaults to the binding's).
    ServiceAccount {
        /// Its namespace.
        namespace: String,
        /// Its name.
        name: String,
    },
}

impl Subject {
    /// The user name or group name the subject matches, and whether it is a group.
    fn matched_name(&self) -> (String, bool) {
        match self {
            Subject::User(name) => (name.clone(), false),
            Subject::Group(name) => (name.clone(), true),
            Subject::ServiceAccount { namespace, name } => {
                (format!("system:serviceaccount:{namespace}:{name}"), false)
            }
        }
    }

    fn describe(&self) -> String {
        match self {
            Subject::User(name) => format!("User {name:?}"),
            Subject::Group(name) => format!("Group {name:?}"),
            Subject::ServiceAccount { namespace, name } => {
                format!("ServiceAccount \"{name}/{namespace}\"")
            }
        }
    }
}

/// A RoleBinding (with a namespace) or ClusterRoleBinding (without).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Binding {
    /// The namespace of a RoleBinding; empty for a ClusterRoleBinding.
    pub namespace: String,
    /// Its name.
    pub name: String,
    /// The role granted.
    pub role: RoleRef,
    /// To whom.
    pub subjects: Vec<Subject>,
}

/// Which collection an entry came from (for relists).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// Roles.
    Role,
    /// ClusterRoles.
    ClusterRole,
    /// RoleBindings.
    RoleBinding,
    /// ClusterRoleBindings.
    ClusterRoleBinding,
}

const KINDS: usize = 4;

fn slot(kind: Kind) -> usize {
    match kind {
        Kind::Role => 0,
        Kind::ClusterRole => 1,
        Kind::RoleBinding => 2,
        Kind::ClusterRoleBinding => 3,
    }
}

/// Entries by scope (the namespace, or [`CLUSTER`]) and name, with the generation of the
/// list that last saw them; looked up by `&str`, without allocating.
type Entries<T> = HashMap<String, HashMap<String, (u64, Arc<T>)>>;

/// The scope key of cluster objects. Not the empty string: comparing an empty `String`
/// (whose pointer dangles) costs glibc's AVX-512 `memcmp` a fault-suppression assist, about
/// 80 ns, on every lookup; no namespace contains NUL.
const CLUSTER: &str = "\0";

/// The key of `namespace`'s entries.
fn scope(namespace: &str) -> &str {
    if namespace.is_empty() {
        CLUSTER
    } else {
        namespace
    }
}

/// String equality without calling `memcmp` on empty strings (see [`CLUSTER`]).
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && (a.is_empty() || a == b)
}

/// A binding naming a subject: the binding and which of its subjects it is.
type Grant = (Arc<Binding>, usize);

#[derive(Default)]
struct State {
    /// Roles and cluster roles (namespace "").
    roles: Entries<[PolicyRule]>,
    /// Role bindings and cluster role bindings (namespace "").
    bindings: Entries<Binding>,
    /// User name (service accounts by their user name) → the bindings naming it.
    by_user: HashMap<String, Vec<Grant>>,
    /// Group name → the bindings naming it.
    by_group: HashMap<String, Vec<Grant>>,
}

impl State {
    fn get<'a, T: ?Sized>(entries: &'a Entries<T>, ns: &str, name: &str) -> Option<&'a Arc<T>> {
        entries.get(scope(ns))?.get(name).map(|(_, v)| v)
    }

    fn unindex(&mut self, ns: &str, name: &str) {
        let Some(old) = Self::get(&self.bindings, ns, name).cloned() else {
            return;
        };
        for subject in &old.subjects {
            let (key, group) = subject.matched_name();
            let map = if group {
                &mut self.by_group
            } else {
                &mut self.by_user
            };
            if let Some(list) = map.get_mut(&key) {
                list.retain(|(b, _)| !Arc::ptr_eq(b, &old));
                if list.is_empty() {
                    map.remove(&key);
                }
            }
        }
    }

    fn remove_binding(&mut self, ns: &str, name: &str) {
        self.unindex(ns, name);
        let ns = scope(ns);
        if let Some(names) = self.bindings.get_mut(ns) {
            names.remove(name);
            if names.is_empty() {
                self.bindings.remove(ns);
            }
        }
    }
}

/// Roles and bindings, indexed by subject.
#[derive(Default)]
pub struct RbacIndex {
    state: RwLock<State>,
    loaded: crate::loaded::Loaded<KINDS>,
}

impl RbacIndex {
    /// An empty index (nothing is allowed until the collections are loaded).
    pub fn new() -> Self {
        Self::default()
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, State> {
        self.state.write().unwrap_or_else(|e| e.into_inner())
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, State> {
        self.state.read().unwrap_or_else(|e| e.into_inner())
    }

    /// A Role (with its namespace) or ClusterRole (empty namespace) seen in list `generation`.
    pub fn put_role(&self, namespace: &str, name: &str, rules: Vec<PolicyRule>, generation: u64) {
        self.write()
            .roles
            .entry(scope(namespace).to_string())
            .or_default()
            .insert(name.to_string(), (generation, rules.into()));
    }

    /// A Role or ClusterRole is gone.
    pub fn remove_role(&self, namespace: &str, name: &str) {
        let mut state = self.write();
        let namespace = scope(namespace);
        if let Some(names) = state.roles.get_mut(namespace) {
            names.remove(name);
            if names.is_empty() {
                state.roles.remove(namespace);
            }
        }
    }

    /// A binding seen in list `generation` (replacing its former self).
    pub fn put_binding(&self, binding: Binding, generation: u64) {
        let binding = Arc::new(binding);
        let mut state = self.write();
        state.unindex(&binding.namespace, &binding.name);
        for (i, subject) in binding.subjects.iter().enumerate() {
            let (key, group) = subject.matched_name();
            let map = if group {
                &mut state.by_group
            } else {
                &mut state.by_user
            };
            map.entry(key).or_default().push((binding.clone(), i));
        }
        state
            .bindings
            .entry(scope(&binding.namespace).to_string())
            .or_default()
            .insert(binding.name.clone(), (generation, binding));
    }

    /// A binding is gone.
    pub fn remove_binding(&self, namespace: &str, name: &str) {
        self.write().remove_binding(namespace, name);
    }

    /// A full list of `kind` ended: entries not seen in it are gone; the kind is loaded.
    pub fn listed(&self, kind: Kind, generation: u64) {
        let mut state = self.write();
        let cluster = matches!(kind, Kind::ClusterRole | Kind::ClusterRoleBinding);
        let in_scope = |ns: &str| (ns == CLUSTER) == cluster;
        match kind {
            Kind::Role | Kind::ClusterRole => {
                for (ns, names) in state.roles.iter_mut() {
                    if in_scope(ns) {
                        names.retain(|_, (g, _)| *g >= generation);
                    }
                }
                state.roles.retain(|_, names| !names.is_empty());
            }
            Kind::RoleBinding | Kind::ClusterRoleBinding => {
                let stale: Vec<(String, String)> = state
                    .bindings
                    .iter()
                    .filter(|(ns, _)| in_scope(ns))
                    .flat_map(|(ns, names)| {
                        names
                            .iter()
                            .filter(|(_, (g, _))| *g < generation)
                            .map(|(name, _)| (ns.clone(), name.clone()))
                    })
                    .collect();
                for (ns, name) in stale {
                    state.remove_binding(&ns, &name);
                }
            }
        }
        drop(state);
        self.loaded.set(slot(kind));
    }

    /// Forgets every role and binding, for a load that starts over: nothing is allowed until
    /// the collections are listed again.
    pub fn reset(&self) {
        *self.write() = State::default();
        self.loaded.clear();
    }

    /// Whether every collection has been listed once.
    pub fn is_loaded(&self) -> bool {
        self.loaded.is_loaded()
    }

    /// Returns once every collection has been listed once.
    pub async fn wait_loaded(&self) {
        self.loaded.wait().await
    }

    /// The bindings that apply to `user` in `namespace` (cluster bindings always), with
    /// the rules of their roles (`Err` naming a missing role); `each` returns whether to go
    /// on.
    fn visit(
        &self,
        user: &UserInfo,
        namespace: &str,
        mut each: impl FnMut(&Binding, &Subject, Result<&[PolicyRule], String>) -> bool,
    ) {
        let state = self.read();
        let grants = state
            .by_user
            .get(&user.name)
            .into_iter()
            .chain(user.groups.iter().filter_map(|g| state.by_group.get(g)))
            .flatten();
        // Many bindings name one role (each authenticated user's, say): a role already
        // visited is skipped without looking it up again. The list is bounded, so users with
        // many distinct roles pay no quadratic cost.
        let mut visited: Vec<(&str, &RoleRef)> = Vec::new();
        for (binding, subject) in grants {
            if !binding.namespace.is_empty() && !same(&binding.namespace, namespace) {
                continue;
            }
            let role_scope = match binding.role {
                RoleRef::Role(_) => scope(&binding.namespace),
                RoleRef::ClusterRole(_) => CLUSTER,
            };
            if visited.contains(&(role_scope, &binding.role)) {
                continue;
            }
            if visited.len() < 32 {
                visited.push((role_scope, &binding.role));
            }
            let rules = match &binding.role {
                RoleRef::ClusterRole(role) => State::get(&state.roles, "", role)
                    .map(|r| &**r)
                    .ok_or_else(|| {
                        format!("clusterrole.rbac.authorization.k8s.io {role:?} not found")
                    }),
                RoleRef::Role(role) => State::get(&state.roles, &binding.namespace, role)
                    .map(|r| &**r)
                    .ok_or_else(|| format!("role.rbac.authorization.k8s.io {role:?} not found")),
            };
            if !each(binding, &binding.subjects[*subject], rules) {
                return;
            }
        }
    }
}

impl RbacIndex {
    /// Every rule `user` holds through RBAC in `namespace` (cluster-wide rules included;
    /// `namespace` empty: cluster-wide only).
    pub fn user_rules(&self, user: &UserInfo, namespace: &str) -> Vec<PolicyRule> {
        let mut all = Vec::new();
        self.visit(user, namespace, |_, _, rules| {
            if let Ok(rules) = rules {
                all.extend(rules.iter().cloned());
            }
            true
        });
        all
    }

    /// The rules of the role `role` refers to from `namespace` (a Role there, or a
    /// ClusterRole); `None` when there is no such role.
    pub fn role_rules(&self, namespace: &str, role: &RoleRef) -> Option<Arc<[PolicyRule]>> {
        let state = self.read();
        match role {
            RoleRef::Role(name) => State::get(&state.roles, namespace, name).cloned(),
            RoleRef::ClusterRole(name) => State::get(&state.roles, "", name).cloned(),
        }
    }
}

/// The parts of `wanted` that `held` does not cover, each as a rule of one verb on one
/// resource (or URL), in upstream's breakdown order: by rule, then group, resource, verb
/// and name; the URLs of a rule after its resources.
pub fn uncovered(held: &[PolicyRule], wanted: &[PolicyRule]) -> Vec<PolicyRule> {
    let one = |v: &str| vec![v.to_string()];
    let mut missing = Vec::new();
    let mut check = |atom: PolicyRule| {
        if !held.iter().any(|h| covers(h, &atom)) {
            missing.push(atom);
        }
    };
    for rule in wanted {
        for group in &rule.api_groups {
            for resource in &rule.resources {
                for verb in &rule.verbs {
                    let names: Vec<Vec<String>> = if rule.resource_names.is_empty() {
                        vec![Vec::new()]
                    } else {
                        rule.resource_names.iter().map(|n| one(n)).collect()
                    };
                    for resource_names in names {
                        check(PolicyRule {
                            verbs: one(verb),
                            api_groups: one(group),
                            resources: one(resource),
                            resource_names,
                            ..Default::default()
                        });
                    }
                }
            }
        }
        for url in &rule.non_resource_urls {
            for verb in &rule.verbs {
                check(PolicyRule {
                    verbs: one(verb),
                    non_resource_urls: one(url),
                    ..Default::default()
                });
            }
        }
    }
    missing
}

/// Upstream's description of missing rules: those on one resource (and name) merged, their
/// verbs in the order they were found, then each rendered, sorted and listed once per line.
pub fn describe_missing(missing: &[PolicyRule]) -> String {
    let mut merged: Vec<PolicyRule> = Vec::new();
    for rule in missing {
        let simple = rule.non_resource_urls.is_empty()
            && rule.api_groups.len() == 1
            && rule.resources.len() == 1
            && rule.resource_names.len() <= 1;
        let same = |m: &PolicyRule| {
            m.non_resource_urls.is_empty()
                && m.api_groups == rule.api_groups
                && m.resources == rule.resources
                && m.resource_names == rule.resource_names
        };
        match merged.iter_mut().find(|m| simple && same(m)) {
            Some(m) => m.verbs.extend(rule.verbs.iter().cloned()),
            None => merged.push(rule.clone()),
        }
    }
    let lines: std::collections::BTreeSet<String> = merged.iter().map(render_rule).collect();
    lines.into_iter().collect::<Vec<_>>().join("\n")
}

/// Whether `owner` grants everything the single-verb, single-resource `atom` does.
fn covers(owner: &PolicyRule, atom: &PolicyRule) -> bool {
    let has = |list: &[String], v: &str| list.iter().any(|x| x == "*" || x == v);
    if !has(&owner.verbs, &atom.verbs[0]) {
        return false;
    }
    if let Some(url) = atom.non_resource_urls.first() {
        return owner.non_resource_urls.iter().any(|o| {
            o == "*" || o == url || o.strip_suffix('*').is_some_and(|p| url.starts_with(p))
        });
    }
    if !has(&owner.api_groups, &atom.api_groups[0]) {
        return false;
    }
    let resource = &atom.resources[0];
    let resource_ok = owner.resources.iter().any(|o| {
        o == "*"
            || o == resource
            // `*/sub` covers every resource's `sub`; `res/*` is no wildcard (the authorizer
            // matches it only literally), so it covers nothing more.
            || resource
                .split_once('/')
                .is_some_and(|(_, sub)| o.strip_prefix("*/") == Some(sub))
    });
    if !resource_ok {
        return false;
    }
    owner.resource_names.is_empty()
        || atom
            .resource_names
            .first()
            .is_some_and(|n| owner.resource_names.contains(n))
}

/// Upstream's rendering of rules in escalation errors:
/// `{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}`.
pub fn render_rule(rule: &PolicyRule) -> String {
    let list = |v: &[String]| {
        v.iter()
            .map(|x| format!("{x:?}"))
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut parts = Vec::new();
    if !rule.api_groups.is_empty() {
        parts.push(format!("APIGroups:[{}]", list(&rule.api_groups)));
    }
    if !rule.resources.is_empty() {
        parts.push(format!("Resources:[{}]", list(&rule.resources)));
    }
    if !rule.resource_names.is_empty() {
        parts.push(format!("ResourceNames:[{}]", list(&rule.resource_names)));
    }
    if !rule.non_resource_urls.is_empty() {
        parts.push(format!(
            "NonResourceURLs:[{}]",
            list(&rule.non_resource_urls)
        ));
    }
    parts.push(format!("Verbs:[{}]", list(&rule.verbs)));
    format!("{{{}}}", parts.join(", "))
}

fn describe(binding: &Binding, subject: &Subject) -> String {
    let (kind, role) = match &binding.role {
        RoleRef::Role(r) => ("Role", r),
        RoleRef::ClusterRole(r) => ("ClusterRole", r),
    };
    if binding.namespace.is_empty() {
        format!(
            "RBAC: allowed by ClusterRoleBinding {:?} of {kind} {role:?} to {}",
            binding.name,
            subject.describe()
        )
    } else {
        format!(
            "RBAC: allowed by RoleBinding \"{}/{}\" of {kind} {role:?} to {}",
            binding.name,
            binding.namespace,
            subject.describe()
        )
    }
}

/// `--authorization-mode=RBAC` over an [`RbacIndex`].
pub struct Rbac {
    index: Arc<RbacIndex>,
}

impl Rbac {
    /// The authorizer reading `index`.
    pub fn new(index: Arc<RbacIndex>) -> Self {
        Self { index }
    }
}

impl Rbac {
    /// This authorizer's decision, made in memory.
    fn decide(&self, attributes: &Attributes) -> Decision {
        let mut allowed = false;
        let mut missing = Vec::new();
        self.index.visit(
            &attributes.user,
            &attributes.namespace,
            |_, _, rules| match rules {
                Ok(rules) => {
                    allowed = rules.iter().any(|r| r.allows(attributes));
                    !allowed
                }
                Err(why) => {
                    missing.push(why);
                    true
                }
            },
        );
        if allowed {
            return Decision::Allow;
        }
        if missing.is_empty() {
            Decision::NoOpinion(String::new())
        } else {
            Decision::NoOpinion(format!("RBAC: {}", missing.join(", ")))
        }
    }
}

#[async_trait]
impl Authorizer for Rbac {
    fn authorize_now(&self, attributes: &Attributes) -> Option<Decision> {
        Some(self.decide(attributes))
    }

    async fn why_allowed(&self, attributes: &Attributes) -> String {
        let mut why = String::new();
        self.index.visit(
            &attributes.user,
            &attributes.namespace,
            |binding, subject, rules| {
                if rules.is_ok_and(|rules| rules.iter().any(|r| r.allows(attributes))) {
                    why = describe(binding, subject);
                    return false;
                }
                true
            },
        );
        why
    }

    async fn rules_for(&self, user: &UserInfo, namespace: &str) -> RuleSet {
        let mut set = RuleSet::default();
        let mut errors = Vec::new();
        self.index.visit(user, namespace, |_, _, rules| {
            match rules {
                Ok(rules) => {
                    for r in rules {
                        if r.non_resource_urls.is_empty() {
                            set.resource_rules.push(ResourceRule {
                                verbs: r.verbs.clone(),
                                api_groups: r.api_groups.clone(),
                                resources: r.resources.clone(),
                                resource_names: r.resource_names.clone(),
                            });
                        } else {
                            set.non_resource_rules.push(NonResourceRule {
                                verbs: r.verbs.clone(),
                                non_resource_urls: r.non_resource_urls.clone(),
                            });
                        }
                    }
                }
                Err(why) => errors.push(why),
            }
            true
        });
        set.evaluation_error = errors.join(", ");
        set.incomplete = !errors.is_empty();
        set
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(verbs: &[&str], groups: &[&str], resources: &[&str]) -> PolicyRule {
        let v = |s: &[&str]| s.iter().map(|x| x.to_string()).collect();
        PolicyRule {
            verbs: v(verbs),
            api_groups: v(groups),
            resources: v(resources),
            ..Default::default()
        }
    }

    fn request(user: &str, groups: &[&str], verb: &str, resource: &str, ns: &str) -> Attributes {
        let (resource, subresource) = resource.split_once('/').unwrap_or((resource, ""));
        Attributes {
            user: UserInfo {
                name: user.into(),
                groups: groups.iter().map(|g| g.to_string()).collect(),
                ..Default::default()
            },
            verb: verb.into(),
            resource_request: true,
            resource: resource.into(),
            subresource: subresource.into(),
            namespace: ns.into(),
            ..Default::default()
        }
    }

    async fn allowed(rbac: &Rbac, a: &Attributes) -> bool {
        rbac.authorize(a).await == Decision::Allow
    }

    #[tokio::test]
    async fn bindings_grant_their_roles_rules_in_their_scope() {
        let index = Arc::new(RbacIndex::new());
        index.put_role(
            "",
            "pod-reader",
            vec![rule(&["get", "list"], &[""], &["pods", "*/log"])],
            1,
        );
        index.put_role(
            "team",
            "deployer",
            vec![rule(&["*"], &["apps"], &["deployments"])],
            1,
        );
        index.put_binding(
            Binding {
                namespace: "team".into(),
                name: "readers".into(),
                role: RoleRef::ClusterRole("pod-reader".into()),
                subjects: vec![Subject::Group("dev".into())],
            },
            1,
        );
        index.put_binding(
            Binding {
                namespace: "".into(),
                name: "robots".into(),
                role: RoleRef::ClusterRole("pod-reader".into()),
                subjects: vec![Subject::ServiceAccount {
                    namespace: "ci".into(),
                    name: "bot".into(),
                }],
            },
            1,
        );
        index.put_binding(
            Binding {
                namespace: "team".into(),
                name: "deployers".into(),
                role: RoleRef::Role("deployer".into()),
                subjects: vec![Subject::User("ann".into())],
            },
            1,
        );
        let rbac = Rbac::new(index.clone());
        assert!(allowed(&rbac, &request("x", &["dev"], "list", "pods", "team")).await);
        assert!(allowed(&rbac, &request("x", &["dev"], "get", "pods/log", "team")).await);
        assert!(!allowed(&rbac, &request("x", &["dev"], "list", "pods", "other")).await);
        assert!(!allowed(&rbac, &request("x", &["dev"], "delete", "pods", "team")).await);
        assert!(!allowed(&rbac, &request("x", &["dev"], "get", "pods/exec", "team")).await);
        assert!(
            allowed(
                &rbac,
                &request("system:serviceaccount:ci:bot", &[], "get", "pods", "any")
            )
            .await
        );
        let mut deploy = request("ann", &[], "create", "deployments", "team");
        deploy.api_group = "apps".into();
        assert!(allowed(&rbac, &deploy).await);
        // Access reviews say what allowed a request.
        assert_eq!(
            rbac.why_allowed(&deploy).await,
            r#"RBAC: allowed by RoleBinding "deployers/team" of Role "deployer" to User "ann""#
        );
        assert_eq!(
            rbac.why_allowed(&request(
                "system:serviceaccount:ci:bot",
                &[],
                "get",
                "pods",
                "any"
            ))
            .await,
            r#"RBAC: allowed by ClusterRoleBinding "robots" of ClusterRole "pod-reader" to ServiceAccount "bot/ci""#
        );

        // Changing a binding's subjects re-indexes it; deleting it drops it.
        index.put_binding(
            Binding {
                namespace: "team".into(),
                name: "readers".into(),
                role: RoleRef::ClusterRole("pod-reader".into()),
                subjects: vec![Subject::User("bo".into())],
            },
            1,
        );
        assert!(!allowed(&rbac, &request("x", &["dev"], "list", "pods", "team")).await);
        assert!(allowed(&rbac, &request("bo", &[], "list", "pods", "team")).await);
        index.remove_binding("team", "readers");
        assert!(!allowed(&rbac, &request("bo", &[], "list", "pods", "team")).await);

        // A relist drops what it no longer saw.
        index.listed(Kind::ClusterRoleBinding, 2);
        assert!(
            !allowed(
                &rbac,
                &request("system:serviceaccount:ci:bot", &[], "get", "pods", "any")
            )
            .await
        );
        // A binding to a missing role says so.
        index.remove_role("team", "deployer");
        assert_eq!(
            rbac.authorize(&deploy).await,
            Decision::NoOpinion(
                "RBAC: role.rbac.authorization.k8s.io \"deployer\" not found".into()
            )
        );
    }

    #[tokio::test]
    async fn a_reset_index_forgets_everything_until_listed_again() {
        // One load: a role, a binding of it, then the end of each kind's list.
        let load = |index: &RbacIndex| {
            index.put_role("", "pod-reader", vec![rule(&["get"], &[""], &["pods"])], 1);
            index.put_binding(
                Binding {
                    namespace: "".into(),
                    name: "readers".into(),
                    role: RoleRef::ClusterRole("pod-reader".into()),
                    subjects: vec![Subject::User("ann".into())],
                },
                1,
            );
            for kind in [
                Kind::Role,
                Kind::ClusterRole,
                Kind::RoleBinding,
                Kind::ClusterRoleBinding,
            ] {
                index.listed(kind, 1);
            }
        };
        let index = Arc::new(RbacIndex::new());
        load(&index);
        let rbac = Rbac::new(index.clone());
        let get = request("ann", &[], "get", "pods", "any");
        assert!(index.is_loaded());
        assert!(allowed(&rbac, &get).await);

        index.reset();
        assert!(!index.is_loaded());
        assert!(!allowed(&rbac, &get).await);
        // A new load (its generations counted from 1 again) restores it.
        load(&index);
        assert!(index.is_loaded());
        assert!(allowed(&rbac, &get).await);
    }

    #[test]
    fn coverage_is_checked_verb_by_verb_and_resource_by_resource() {
        let held = vec![
            rule(&["get", "list"], &[""], &["pods", "*/status"]),
            rule(&["*"], &["apps"], &["deployments"]),
        ];
        assert!(uncovered(&held, &[rule(&["get"], &[""], &["pods"])]).is_empty());
        assert!(uncovered(&held, &[rule(&["get"], &[""], &["nodes/status"])]).is_empty());
        assert!(uncovered(&held, &[rule(&["delete"], &["apps"], &["deployments"])]).is_empty());
        let missing = uncovered(&held, &[rule(&["get", "delete"], &["", "apps"], &["pods"])]);
        assert_eq!(
            missing.iter().map(render_rule).collect::<Vec<_>>(),
            [
                r#"{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}"#,
                r#"{APIGroups:["apps"], Resources:["pods"], Verbs:["get"]}"#,
                r#"{APIGroups:["apps"], Resources:["pods"], Verbs:["delete"]}"#,
            ]
        );
        // Described as upstream: one line per resource, verbs in the order found, sorted.
        let wanted = [
            rule(&["watch", "get"], &["apps"], &["pods"]),
            rule(&["delete"], &["", "apps"], &["pods", "nodes"]),
        ];
        assert_eq!(
            describe_missing(&uncovered(&held, &wanted)),
            [
                r#"{APIGroups:[""], Resources:["nodes"], Verbs:["delete"]}"#,
                r#"{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}"#,
                r#"{APIGroups:["apps"], Resources:["nodes"], Verbs:["delete"]}"#,
                r#"{APIGroups:["apps"], Resources:["pods"], Verbs:["watch" "get" "delete"]}"#,
            ]
            .join("\n")
        );
    }

    #[test]
    fn a_resource_wildcard_covers_only_what_the_authorizer_grants() {
        // `pods/*` is matched literally by the authorizer: holding it grants no subresource,
        // so it may not be written into a role granting one.
        let held = vec![rule(&["get"], &[""], &["pods/*"])];
        assert_eq!(
            uncovered(&held, &[rule(&["get"], &[""], &["pods/log"])]).len(),
            1
        );
        assert!(uncovered(&held, &[rule(&["get"], &[""], &["pods/*"])]).is_empty());
        let authorizer_says = |resource: &str, sub: &str| {
            held[0].allows(&Attributes {
                verb: "get".into(),
                resource_request: true,
                resource: resource.into(),
                subresource: sub.into(),
                ..Default::default()
            })
        };
        assert!(!authorizer_says("pods", "log"));
    }

    #[test]
    fn non_resource_urls_match_exactly_or_by_prefix() {
        let r = PolicyRule {
            verbs: vec!["get".into()],
            non_resource_urls: vec!["/healthz".into(), "/metrics/*".into()],
            ..Default::default()
        };
        let path = |p: &str| Attributes {
            verb: "get".into(),
            path: p.into(),
            ..Default::default()
        };
        assert!(r.allows(&path("/healthz")));
        assert!(r.allows(&path("/metrics/cadvisor")));
        assert!(!r.allows(&path("/healthz/etcd")));
        assert!(!r.allows(&path("/metrics")));
    }
}
