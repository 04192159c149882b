//! The Node authorizer (`--authorization-mode=Node`): a kubelet, user `system:node:<name>` in
//! group `system:nodes`, reads only the secrets, config maps, claims and volumes of the pods
//! bound to its node and asks tokens only for their service accounts; it reaches only its
//! own Lease and CSINode; everything else it may do is what the node rules (those of the
//! `system:node` cluster role) allow. Who references what is kept in a [`NodeGraph`], fed
//! from the watch caches of pods, claims and volumes.

use std::collections::HashMap;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

use async_trait::async_trait;

use super::rbac::PolicyRule;
use super::{Attributes, Authorizer, Decision, RuleSet};
use crate::user::UserInfo;

/// The group of every node's user.
pub const NODES_GROUP: &str = "system:nodes";
/// The prefix of a node's user name.
pub const NODE_USER_PREFIX: &str = "system:node:";

/// The node a user is, if it is one (`None` for other users; `Some("")` for a node user
/// without a node name).
pub fn node_name(user: &UserInfo) -> Option<&str> {
    if !user.in_group(NODES_GROUP) {
        return None;
    }
    user.name.strip_prefix(NODE_USER_PREFIX)
}

/// What one pod references, and the node it is bound to.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodRefs {
    /// `spec.nodeName` (pods not yet bound reach nothing).
    pub node: String,
    /// `spec.serviceAccountName`.
    pub service_account: String,
    /// Secrets of volumes, environment and image pulls.
    pub secrets: Vec<String>,
    /// Config maps of volumes and environment.
    pub config_maps: Vec<String>,
    /// Persistent volume claims (ephemeral volumes' claims included).
    pub claims: Vec<String>,
    /// Resource claims (`status.resourceClaimStatuses`).
    pub resource_claims: Vec<String>,
}

/// The kinds of objects a node may reach.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reachable {
    /// Secrets.
    Secret,
    /// Config maps.
    ConfigMap,
    /// Persistent volume claims.
    Claim,
    /// Service accounts (for tokens).
    ServiceAccount,
    /// Persistent volumes (cluster-scoped: the namespace is empty).
    Volume,
    /// Pods (bound to the node).
    Pod,
    /// Resource claims.
    ResourceClaim,
    /// Volume attachments (cluster-scoped, naming the node).
    Attachment,
    /// Resource slices (cluster-scoped, naming the node).
    ResourceSlice,
}

/// The collections the graph is fed from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// Pods.
    Pods,
    /// Persistent volume claims.
    Claims,
    /// Persistent volumes.
    Volumes,
    /// Volume attachments.
    Attachments,
    /// Resource slices.
    Slices,
}

type Key = (String, String);
type Vertex = (Reachable, String, String);

#[derive(Default)]
struct Graph {
    /// Pods by (namespace, name), with the generation of the list that last saw them.
    pods: HashMap<Key, (u64, PodRefs)>,
    /// Node → what its pods reference directly, with reference counts.
    by_node: HashMap<String, HashMap<Vertex, u32>>,
    /// Claim → the volume it is bound to.
    claims: HashMap<Key, (u64, String)>,
    /// Volume → the claims bound to it.
    claims_of_volume: HashMap<String, Vec<Key>>,
    /// Volume → the secrets it names.
    volumes: HashMap<String, (u64, Vec<Key>)>,
    /// Secret → the volumes naming it.
    volumes_of_secret: HashMap<Key, Vec<String>>,
    /// Volume attachment → its node.
    attachments: HashMap<String, (u64, String)>,
    /// Resource slice name → (generation seen, its node).
    slices: HashMap<String, (u64, String)>,
}

fn slot(source: Source) -> usize {
    match source {
        Source::Pods => 0,
        Source::Claims => 1,
        Source::Volumes => 2,
        Source::Attachments => 3,
        Source::Slices => 4,
    }
}

fn vertices(namespace: &str, refs: &PodRefs) -> Vec<Vertex> {
    let mut out = Vec::new();
    let mut add = |kind: Reachable, names: &[String]| {
        out.extend(
            names
                .iter()
                .filter(|n| !n.is_empty())
                .map(|n| (kind, namespace.to_string(), n.clone())),
        );
    };
    add(Reachable::Secret, &refs.secrets);
    add(Reachable::ConfigMap, &refs.config_maps);
    add(Reachable::Claim, &refs.claims);
    add(Reachable::ResourceClaim, &refs.resource_claims);
    add(
        Reachable::ServiceAccount,
        std::slice::from_ref(&refs.service_account),
    );
    out
}

impl Graph {
    fn unlink_pod(&mut self, key: &Key) {
        let Some((_, old)) = self.pods.remove(key) else {
            return;
        };
        if old.node.is_empty() {
            return;
        }
        if let Some(reached) = self.by_node.get_mut(&old.node) {
            for v in vertices(&key.0, &old) {
                if let Some(count) = reached.get_mut(&v) {
                    *count -= 1;
                    if *count == 0 {
                        reached.remove(&v);
                    }
                }
            }
            if reached.is_empty() {
                self.by_node.remove(&old.node);
            }
        }
    }

    fn unlink_claim(&mut self, key: &Key) {
        if let Some((_, volume)) = self.claims.remove(key)
            && let Some(list) = self.claims_of_volume.get_mut(&volume)
        {
            list.retain(|k| k != key);
            if list.is_empty() {
                self.claims_of_volume.remove(&volume);
            }
        }
    }

    fn unlink_volume(&mut self, name: &str) {
        let Some((_, secrets)) = self.volumes.remove(name) else {
            return;
        };
        for secret in secrets {
            if let Some(list) = self.volumes_of_secret.get_mut(&secret) {
                list.retain(|v| v != name);
                if list.is_empty() {
                    self.volumes_of_secret.remove(&secret);
                }
            }
        }
    }

    fn direct(&self, node: &str, kind: Reachable, namespace: &str, name: &str) -> bool {
        // Lookups allocate one key; the graph is asked only for the kinds it guards.
        self.by_node.get(node).is_some_and(|reached| {
            reached.contains_key(&(kind, namespace.to_string(), name.to_string()))
        })
    }

    fn volume_reached(&self, node: &str, volume: &str) -> bool {
        self.claims_of_volume.get(volume).is_some_and(|claims| {
            claims
                .iter()
                .any(|(ns, claim)| self.direct(node, Reachable::Claim, ns, claim))
        })
    }
}

/// Who references what: pods (bound to nodes), claims (bound to volumes), volumes (naming
/// secrets).
#[derive(Default)]
pub struct NodeGraph {
    graph: RwLock<Graph>,
    loaded: crate::loaded::Loaded<5>,
}

impl NodeGraph {
    /// An empty graph.
    pub fn new() -> Self {
        Self::default()
    }

    fn read(&self) -> RwLockReadGuard<'_, Graph> {
        self.graph.read().unwrap_or_else(|e| e.into_inner())
    }

    fn write(&self) -> RwLockWriteGuard<'_, Graph> {
        self.graph.write().unwrap_or_else(|e| e.into_inner())
    }

    /// Adds or replaces a pod, seen in list generation `generation`.
    pub fn put_pod(&self, namespace: &str, name: &str, refs: PodRefs, generation: u64) {
        let key = (namespace.to_string(), name.to_string());
        let mut g = self.write();
        g.unlink_pod(&key);
        if !refs.node.is_empty() {
            let reached = g.by_node.entry(refs.node.clone()).or_default();
            for v in vertices(namespace, &refs) {
                *reached.entry(v).or_default() += 1;
            }
        }
        g.pods.insert(key, (generation, refs));
    }

    /// Removes a pod.
    pub fn remove_pod(&self, namespace: &str, name: &str) {
        self.write()
            .unlink_pod(&(namespace.to_string(), name.to_string()));
    }

    /// Adds or replaces a claim and the volume it is bound to (empty: none).
    pub fn put_claim(&self, namespace: &str, name: &str, volume: &str, generation: u64) {
        let key = (namespace.to_string(), name.to_string());
        let mut g = self.write();
        g.unlink_claim(&key);
        if volume.is_empty() {
            return;
        }
        g.claims_of_volume
            .entry(volume.to_string())
            .or_default()
            .push(key.clone());
        g.claims.insert(key, (generation, volume.to_string()));
    }

    /// Removes a claim.
    pub fn remove_claim(&self, namespace: &str, name: &str) {
        self.write()
            .unlink_claim(&(namespace.to_string(), name.to_string()));
    }

    /// Adds or replaces a volume and the secrets (namespace, name) it names.
    pub fn put_volume(&self, name: &str, secrets: Vec<(String, String)>, generation: u64) {
        let mut g = self.write();
        g.unlink_volume(name);
        for secret in &secrets {
            g.volumes_of_secret
                .entry(secret.clone())
                .or_default()
                .push(name.to_string());
        }
        g.volumes.insert(name.to_string(), (generation, secrets));
    }

    /// Removes a volume.
    pub fn remove_volume(&self, name: &str) {
        self.write().unlink_volume(name);
    }

    /// Adds or replaces a volume attachment and the node it attaches to.
    pub fn put_attachment(&self, name: &str, node: &str, generation: u64) {
        self.write()
            .attachments
            .insert(name.to_string(), (generation, node.to_string()));
    }

    /// Removes a volume attachment.
    pub fn remove_attachment(&self, name: &str) {
        self.write().attachments.remove(name);
    }

    /// Adds or replaces a resource slice and the node whose devices it lists (empty: none).
    pub fn put_slice(&self, name: &str, node: &str, generation: u64) {
        self.write()
            .slices
            .insert(name.to_string(), (generation, node.to_string()));
    }

    /// Removes a resource slice.
    pub fn remove_slice(&self, name: &str) {
        self.write().slices.remove(name);
    }

    /// A list of `source` in generation `generation` is complete: what it did not see is
    /// gone.
    pub fn listed(&self, source: Source, generation: u64) {
        let mut g = self.write();
        match source {
            Source::Pods => {
                let stale: Vec<Key> = g
                    .pods
                    .iter()
                    .filter(|(_, (gen_seen, _))| *gen_seen < generation)
                    .map(|(k, _)| k.clone())
                    .collect();
                stale.iter().for_each(|k| g.unlink_pod(k));
            }
            Source::Claims => {
                let stale: Vec<Key> = g
                    .claims
                    .iter()
                    .filter(|(_, (gen_seen, _))| *gen_seen < generation)
                    .map(|(k, _)| k.clone())
                    .collect();
                stale.iter().for_each(|k| g.unlink_claim(k));
            }
            Source::Volumes => {
                let stale: Vec<String> = g
                    .volumes
                    .iter()
                    .filter(|(_, (gen_seen, _))| *gen_seen < generation)
                    .map(|(k, _)| k.clone())
                    .collect();
                stale.iter().for_each(|k| g.unlink_volume(k));
            }
            Source::Attachments => g
                .attachments
                .retain(|_, (gen_seen, _)| *gen_seen >= generation),
            Source::Slices => g.slices.retain(|_, (gen_seen, _)| *gen_seen >= generation),
        }
        drop(g);
        self.loaded.set(slot(source));
    }

    /// Whether every collection has been listed once.
    pub fn is_loaded(&self) -> bool {
        self.loaded.is_loaded()
    }

    /// Returns once every collection has been listed once.
    pub async fn wait_loaded(&self) {
        self.loaded.wait().await
    }

    /// Whether a pod bound to `node` reaches the object (through a volume for secrets named
    /// by persistent volumes, and for volumes through their claims).
    pub fn reaches(&self, node: &str, kind: Reachable, namespace: &str, name: &str) -> bool {
        let g = self.read();
        match kind {
            Reachable::Volume => g.volume_reached(node, name),
            Reachable::Secret => {
                g.direct(node, kind, namespace, name)
                    || g.volumes_of_secret
                        .get(&(namespace.to_string(), name.to_string()))
                        .is_some_and(|vols| vols.iter().any(|v| g.volume_reached(node, v)))
            }
            Reachable::Pod => g
                .pods
                .get(&(namespace.to_string(), name.to_string()))
                .is_some_and(|(_, refs)| refs.node == node),
            Reachable::Attachment => g.attachments.get(name).is_some_and(|(_, n)| n == node),
            Reachable::ResourceSlice => g.slices.get(name).is_some_and(|(_, n)| n == node),
            _ => g.direct(node, kind, namespace, name),
        }
    }
}

fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> PolicyRule {
    let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect();
    PolicyRule {
        verbs: owned(verbs),
        api_groups: owned(groups),
        resources: owned(resources),
        ..Default::default()
    }
}

/// What every node may do (upstream's node rules; the `system:node` cluster role holds the
/// same rules).
pub fn node_rules() -> Vec<PolicyRule> {
    const READ: &[&str] = &["get", "list", "watch"];
    vec![
        rule(&["authentication.k8s.io"], &["tokenreviews"], &["create"]),
        rule(
            &["authorization.k8s.io"],
            &["localsubjectaccessreviews", "subjectaccessreviews"],
            &["create"],
        ),
        rule(&[""], &["services"], READ),
        rule(&[""], &["nodes"], &["create", "get", "list", "watch"]),
        rule(&[""], &["nodes/status"], &["patch", "update"]),
        rule(&[""], &["nodes"], &["patch", "update"]),
        rule(
            &["", "events.k8s.io"],
            &["events"],
            &["create", "patch", "update"],
        ),
        rule(&[""], &["pods"], READ),
        rule(&[""], &["pods"], &["create", "delete"]),
        rule(&[""], &["pods/status"], &["patch", "update"]),
        rule(&[""], &["pods/eviction"], &["create"]),
        rule(&[""], &["configmaps", "secrets"], READ),
        rule(
            &[""],
            &["persistentvolumeclaims", "persistentvolumes"],
            &["get"],
        ),
        rule(&[""], &["endpoints"], &["get"]),
        rule(
            &["certificates.k8s.io"],
            &["certificatesigningrequests"],
            &["create", "get", "list", "watch"],
        ),
        rule(
            &["coordination.k8s.io"],
            &["leases"],
            &["create", "delete", "get", "patch", "update"],
        ),
        rule(&["storage.k8s.io"], &["volumeattachments"], &["get"]),
        rule(&[""], &["serviceaccounts/token"], &["create"]),
        rule(
            &[""],
            &["persistentvolumeclaims/status"],
            &["get", "patch", "update"],
        ),
        rule(&["storage.k8s.io"], &["csidrivers"], READ),
        rule(
            &["storage.k8s.io"],
            &["csinodes"],
            &["create", "delete", "get", "patch", "update"],
        ),
        rule(&["node.k8s.io"], &["runtimeclasses"], READ),
        rule(&[""], &["serviceaccounts"], &["get"]),
        rule(&["resource.k8s.io"], &["resourceclaims"], &["get"]),
        rule(
            &["resource.k8s.io"],
            &["resourceslices"],
            &["deletecollection"],
        ),
    ]
}

/// The `Node` authorization mode.
pub struct NodeAuthorizer {
    graph: Arc<NodeGraph>,
    rules: Vec<PolicyRule>,
}

const NODE_LEASE_NAMESPACE: &str = "kube-node-lease";

fn no(reason: impl Into<String>) -> Decision {
    Decision::NoOpinion(reason.into())
}

impl NodeAuthorizer {
    /// Decides with `graph`.
    pub fn new(graph: Arc<NodeGraph>) -> Self {
        Self {
            graph,
            rules: node_rules(),
        }
    }

    fn related(&self, node: &str, kind: Reachable, a: &Attributes) -> Decision {
        if a.name.is_empty() {
            return no("No Object name found");
        }
        if self.graph.reaches(node, kind, &a.namespace, &a.name) {
            Decision::Allow
        } else {
            no(format!(
                "no relationship found between node '{node}' and this object"
            ))
        }
    }

    /// Secrets and config maps: read, one object at a time, when a pod uses it.
    fn read_namespaced(&self, node: &str, kind: Reachable, a: &Attributes) -> Decision {
        if !matches!(a.verb.as_str(), "get" | "list" | "watch") {
            return no("can only read resources of this type");
        }
        if !a.subresource.is_empty() {
            return no("cannot read subresource");
        }
        if a.namespace.is_empty() {
            return no("can only read namespaced object of this type");
        }
        self.related(node, kind, a)
    }

    /// Claims and volumes: `get` only.
    fn get_only(&self, node: &str, kind: Reachable, a: &Attributes) -> Decision {
        if a.verb != "get" {
            return no("can only get individual resources of this type");
        }
        if !a.subresource.is_empty() {
            return no("cannot get subresource");
        }
        self.related(node, kind, a)
    }

    fn claim(&self, node: &str, a: &Attributes) -> Decision {
        if a.subresource != "status" {
            return self.get_only(node, Reachable::Claim, a);
        }
        if !matches!(a.verb.as_str(), "update" | "patch") {
            return no("can only get/update/patch this type");
        }
        self.related(node, Reachable::Claim, a)
    }

    fn token(&self, node: &str, a: &Attributes) -> Decision {
        if a.verb != "create" || a.subresource != "token" || a.name.is_empty() {
            return no("can only create tokens for individual service accounts");
        }
        self.related(node, Reachable::ServiceAccount, a)
    }

    /// Pods: those bound to the node read one by one, lists and watches only of the node's
    /// (`spec.nodeName=<node>`), mirror pods made and removed, status written, evictions
    /// asked (NodeRestriction admission limits the writes to the node's pods).
    fn pod(&self, node: &str, a: &Attributes) -> Decision {
        match (a.subresource.as_str(), a.verb.as_str()) {
            ("", "get") => self.get_only(node, Reachable::Pod, a),
            ("", "list" | "watch") if a.selects("spec.nodeName", node) => Decision::Allow,
            ("", "list" | "watch") if !a.name.is_empty() => self.related(node, Reachable::Pod, a),
            ("", "list" | "watch") => {
                no("can only list/watch pods with spec.nodeName field selector")
            }
            ("", "create" | "delete") | ("status", "update" | "patch") | ("eviction", "create") => {
                Decision::Allow
            }
            _ => no(""),
        }
    }

    /// Nodes: any node object written (NodeRestriction admission keeps a node to its own),
    /// only its own read (by name, so that a kubelet can look before it registers).
    fn node(&self, node: &str, a: &Attributes) -> Decision {
        match (a.subresource.as_str(), a.verb.as_str()) {
            ("", "create" | "update" | "patch") | ("status", "update" | "patch") => Decision::Allow,
            ("", "get" | "list" | "watch") if a.name == node => Decision::Allow,
            ("", "get" | "list" | "watch") if a.name.is_empty() => no(format!(
                "node '{node}' cannot read all nodes, only its own Node object"
            )),
            ("", "get" | "list" | "watch") => no(format!(
                "node '{node}' cannot read '{}', only its own Node object",
                a.name
            )),
            _ => no(""),
        }
    }

    /// ResourceSlices: created freely (NodeRestriction admission checks `spec.nodeName`),
    /// listed, watched and deleted as a collection only with `spec.nodeName=<node>`, one
    /// object read or written only when the stored slice names the node.
    fn slice(&self, node: &str, a: &Attributes) -> Decision {
        if !a.subresource.is_empty() {
            return no("cannot authorize ResourceSlice subresources");
        }
        match a.verb.as_str() {
            "create" => Decision::Allow,
            "get" | "update" | "patch" | "delete" => {
                self.related(node, Reachable::ResourceSlice, a)
            }
            "list" | "watch" | "deletecollection" if a.selects("spec.nodeName", node) => {
                Decision::Allow
            }
            "list" | "watch" | "deletecollection" => no(
                "can only list/watch/deletecollection resourceslices with nodeName field selector",
            ),
            _ => no(
                "only the following verbs are allowed for a ResourceSlice: get, watch, list, create, update, patch, delete, deletecollection",
            ),
        }
    }

    /// Its own object of a type named after nodes (Leases in kube-node-lease, CSINodes).
    fn own(&self, node: &str, a: &Attributes, lease: bool) -> Decision {
        if !matches!(
            a.verb.as_str(),
            "get" | "create" | "update" | "patch" | "delete"
        ) {
            return no(format!(
                "can only get, create, update, patch, or delete a node {}",
                if lease { "lease" } else { "CSINode" }
            ));
        }
        if !a.subresource.is_empty() {
            return no("cannot modify subresource");
        }
        if lease && a.namespace != NODE_LEASE_NAMESPACE {
            return no(format!(
                "can only access leases in the {NODE_LEASE_NAMESPACE} namespace"
            ));
        }
        // A create names its object in the body (NodeRestriction admission checks it).
        if a.verb != "create" && a.name != node {
            return no(format!(
                "can only access {} with the same name as the requesting node",
                if lease { "node lease" } else { "CSINode" }
            ));
        }
        Decision::Allow
    }
}

impl NodeAuthorizer {
    /// This authorizer's decision, made in memory.
    fn decide(&self, a: &Attributes) -> Decision {
        let Some(node) = node_name(&a.user) else {
            return no("");
        };
        if node.is_empty() {
            return no("unknown node");
        }
        if a.resource_request {
            match (a.api_group.as_str(), a.resource.as_str()) {
                ("", "secrets") => return self.read_namespaced(node, Reachable::Secret, a),
                ("", "configmaps") => return self.read_namespaced(node, Reachable::ConfigMap, a),
                ("", "persistentvolumeclaims") => return self.claim(node, a),
                ("", "persistentvolumes") => return self.get_only(node, Reachable::Volume, a),
                ("", "serviceaccounts") => return self.token(node, a),
                ("coordination.k8s.io", "leases") => return self.own(node, a, true),
                ("storage.k8s.io", "csinodes") => return self.own(node, a, false),
                ("storage.k8s.io", "volumeattachments") => {
                    return self.get_only(node, Reachable::Attachment, a);
                }
                ("resource.k8s.io", "resourceclaims") => {
                    return self.get_only(node, Reachable::ResourceClaim, a);
                }
                ("resource.k8s.io", "resourceslices") => return self.slice(node, a),
                ("", "pods") => return self.pod(node, a),
                ("", "nodes") => return self.node(node, a),
                _ => {}
            }
        }
        if self.rules.iter().any(|r| r.allows(a)) {
            Decision::Allow
        } else {
            no("")
        }
    }
}

#[async_trait]
impl Authorizer for NodeAuthorizer {
    fn authorize_now(&self, a: &Attributes) -> Option<Decision> {
        Some(self.decide(a))
    }

    async fn rules_for(&self, user: &UserInfo, _namespace: &str) -> RuleSet {
        // As upstream: a node's permissions depend on each object, so none are listed.
        if node_name(user).is_none() {
            return RuleSet::default();
        }
        RuleSet {
            incomplete: true,
            evaluation_error: "node authorizer does not support user rule resolution".into(),
            ..Default::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node_user(name: &str) -> UserInfo {
        UserInfo {
            name: format!("{NODE_USER_PREFIX}{name}"),
            groups: vec![NODES_GROUP.into(), "system:authenticated".into()],
            ..Default::default()
        }
    }

    fn ask(user: &UserInfo, verb: &str, resource: &str, ns: &str, name: &str) -> Attributes {
        let (resource, subresource) = resource.split_once('/').unwrap_or((resource, ""));
        let (resource, group) = resource.split_once('.').unwrap_or((resource, ""));
        Attributes {
            user: user.clone(),
            verb: verb.into(),
            resource_request: true,
            api_group: group.into(),
            resource: resource.into(),
            subresource: subresource.into(),
            namespace: ns.into(),
            name: name.into(),
            ..Default::default()
        }
    }

    fn pod(node: &str) -> PodRefs {
        PodRefs {
            node: node.into(),
            service_account: "runner".into(),
            secrets: vec!["creds".into()],
            config_maps: vec!["settings".into()],
            claims: vec!["data".into()],
            resource_claims: vec!["gpu".into()],
        }
    }

    #[tokio::test]
    async fn nodes_reach_what_their_pods_use_and_no_more() {
        let graph = Arc::new(NodeGraph::new());
        let authz = NodeAuthorizer::new(graph.clone());
        graph.put_pod("apps", "web", pod("n1"), 1);
        graph.put_claim("apps", "data", "pv-1", 1);
        graph.put_volume("pv-1", vec![("storage".into(), "pv-key".into())], 1);
        let n1 = node_user("n1");
        let n2 = node_user("n2");
        let allowed = |a: Attributes| {
            let authz = &authz;
            async move { authz.authorize(&a).await == Decision::Allow }
        };
        for (verb, resource, ns, name) in [
            ("get", "secrets", "apps", "creds"),
            ("watch", "configmaps", "apps", "settings"),
            ("get", "persistentvolumeclaims", "apps", "data"),
            ("patch", "persistentvolumeclaims/status", "apps", "data"),
            ("get", "persistentvolumes", "", "pv-1"),
            ("get", "secrets", "storage", "pv-key"),
            ("create", "serviceaccounts/token", "apps", "runner"),
        ] {
            assert!(
                allowed(ask(&n1, verb, resource, ns, name)).await,
                "n1 {verb} {resource} {name}"
            );
            assert!(
                !allowed(ask(&n2, verb, resource, ns, name)).await,
                "n2 {verb} {resource} {name}"
            );
        }
        for (verb, resource, ns, name) in [
            ("get", "secrets", "apps", "other"),
            ("get", "secrets", "elsewhere", "creds"),
            ("list", "secrets", "apps", ""),
            ("update", "secrets", "apps", "creds"),
            ("delete", "persistentvolumeclaims", "apps", "data"),
            ("get", "serviceaccounts", "apps", "runner"),
        ] {
            assert!(
                !allowed(ask(&n1, verb, resource, ns, name)).await,
                "n1 {verb} {resource} {name}"
            );
        }
        let refused = authz
            .authorize(&ask(&n2, "get", "secrets", "apps", "creds"))
            .await;
        assert_eq!(
            refused,
            Decision::NoOpinion("no relationship found between node 'n2' and this object".into())
        );

        // Moving and deleting pods, unbinding claims.
        graph.put_pod("apps", "web", pod("n2"), 2);
        assert!(allowed(ask(&n2, "get", "secrets", "apps", "creds")).await);
        assert!(!allowed(ask(&n1, "get", "secrets", "apps", "creds")).await);
        graph.put_claim("apps", "data", "", 2);
        assert!(!allowed(ask(&n2, "get", "persistentvolumes", "", "pv-1")).await);
        graph.remove_pod("apps", "web");
        assert!(!allowed(ask(&n2, "get", "configmaps", "apps", "settings")).await);
        assert!(graph.read().by_node.is_empty());
    }

    #[tokio::test]
    async fn relists_drop_what_they_did_not_see_and_shared_references_are_counted() {
        let graph = Arc::new(NodeGraph::new());
        graph.put_pod("a", "one", pod("n"), 1);
        graph.put_pod("a", "two", pod("n"), 1);
        graph.remove_pod("a", "one");
        assert!(
            graph.reaches("n", Reachable::Secret, "a", "creds"),
            "two still uses it"
        );
        assert!(!graph.is_loaded());
        graph.put_pod(
            "a",
            "three",
            PodRefs {
                node: "n".into(),
                ..Default::default()
            },
            2,
        );
        graph.listed(Source::Pods, 2);
        assert!(
            !graph.reaches("n", Reachable::Secret, "a", "creds"),
            "two went in a gap"
        );
        graph.listed(Source::Claims, 1);
        graph.listed(Source::Volumes, 1);
        assert!(!graph.is_loaded());
        graph.listed(Source::Attachments, 1);
        assert!(!graph.is_loaded());
        graph.listed(Source::Slices, 1);
        assert!(graph.is_loaded());
    }

    fn selecting(mut a: Attributes, selector: &str) -> Attributes {
        a.field_selector = capstan_meta::fields::FieldSelector::parse(selector)
            .unwrap()
            .requirements;
        a
    }

    #[tokio::test]
    async fn pods_nodes_and_slices_are_read_by_selector_attachments_by_the_graph() {
        let graph = Arc::new(NodeGraph::new());
        let authz = NodeAuthorizer::new(graph.clone());
        graph.put_pod("apps", "web", pod("n1"), 1);
        graph.put_attachment("va-1", "n1", 1);
        let n1 = node_user("n1");
        let allow = |a: Attributes| {
            let authz = &authz;
            async move { authz.authorize(&a).await == Decision::Allow }
        };
        // Pods: its own one by one, lists only of its own.
        assert!(allow(ask(&n1, "get", "pods", "apps", "web")).await);
        assert!(!allow(ask(&n1, "get", "pods", "apps", "other")).await);
        assert!(!allow(ask(&n1, "list", "pods", "", "")).await);
        assert!(
            allow(selecting(
                ask(&n1, "watch", "pods", "", ""),
                "spec.nodeName=n1"
            ))
            .await
        );
        assert!(
            allow(selecting(
                ask(&n1, "list", "pods", "", ""),
                "a=b,spec.nodeName==n1"
            ))
            .await
        );
        assert!(
            !allow(selecting(
                ask(&n1, "list", "pods", "", ""),
                "spec.nodeName!=n1"
            ))
            .await
        );
        assert!(
            !allow(selecting(
                ask(&n1, "list", "pods", "", ""),
                "spec.nodeName=n2"
            ))
            .await
        );
        assert!(allow(ask(&n1, "create", "pods/eviction", "apps", "web")).await);
        assert!(!allow(ask(&n1, "get", "pods/log", "apps", "web")).await);
        // Nodes: only its own read, any written (NodeRestriction narrows writes).
        assert!(allow(ask(&n1, "watch", "nodes", "", "n1")).await);
        assert!(!allow(ask(&n1, "list", "nodes", "", "")).await);
        assert!(!allow(ask(&n1, "get", "nodes", "", "n2")).await);
        assert!(allow(ask(&n1, "update", "nodes/status", "", "n2")).await);
        // ResourceSlices: collections only by the node's name.
        assert!(allow(ask(&n1, "create", "resourceslices.resource.k8s.io", "", "")).await);
        assert!(!allow(ask(&n1, "list", "resourceslices.resource.k8s.io", "", "")).await);
        assert!(
            allow(selecting(
                ask(
                    &n1,
                    "deletecollection",
                    "resourceslices.resource.k8s.io",
                    "",
                    ""
                ),
                "spec.nodeName=n1"
            ))
            .await
        );
        // Volume attachments: get of the node's own.
        assert!(
            allow(ask(
                &n1,
                "get",
                "volumeattachments.storage.k8s.io",
                "",
                "va-1"
            ))
            .await
        );
        assert!(!allow(ask(&n1, "get", "volumeattachments.storage.k8s.io", "", "")).await);
        assert!(!allow(ask(&n1, "list", "volumeattachments.storage.k8s.io", "", "")).await);
        assert!(
            !allow(ask(
                &node_user("n2"),
                "get",
                "volumeattachments.storage.k8s.io",
                "",
                "va-1"
            ))
            .await
        );
        // Resource claims: those its pods use.
        assert!(
            allow(ask(
                &n1,
                "get",
                "resourceclaims.resource.k8s.io",
                "apps",
                "gpu"
            ))
            .await
        );
        assert!(
            !allow(ask(
                &n1,
                "get",
                "resourceclaims.resource.k8s.io",
                "apps",
                "cpu"
            ))
            .await
        );
    }

    #[tokio::test]
    async fn leases_csinodes_and_the_node_rules() {
        let authz = NodeAuthorizer::new(Arc::new(NodeGraph::new()));
        let n1 = node_user("n1");
        let allow = |a: Attributes| {
            let authz = &authz;
            async move { authz.authorize(&a).await == Decision::Allow }
        };
        assert!(
            allow(ask(
                &n1,
                "update",
                "leases.coordination.k8s.io",
                "kube-node-lease",
                "n1"
            ))
            .await
        );
        assert!(
            allow(ask(
                &n1,
                "create",
                "leases.coordination.k8s.io",
                "kube-node-lease",
                ""
            ))
            .await
        );
        assert!(
            !allow(ask(
                &n1,
                "update",
                "leases.coordination.k8s.io",
                "kube-node-lease",
                "n2"
            ))
            .await
        );
        assert!(
            !allow(ask(
                &n1,
                "get",
                "leases.coordination.k8s.io",
                "kube-system",
                "n1"
            ))
            .await
        );
        assert!(allow(ask(&n1, "patch", "csinodes.storage.k8s.io", "", "n1")).await);
        assert!(!allow(ask(&n1, "patch", "csinodes.storage.k8s.io", "", "n2")).await);
        assert!(allow(ask(&n1, "patch", "nodes/status", "", "n1")).await);
        assert!(allow(ask(&n1, "create", "events", "default", "")).await);
        assert!(!allow(ask(&n1, "delete", "nodes", "", "n1")).await);
        // Not nodes: no opinion at all.
        let other = UserInfo {
            name: "system:node:n1".into(),
            ..Default::default()
        };
        assert_eq!(
            authz
                .authorize(&ask(&other, "get", "nodes", "", "n1"))
                .await,
            Decision::NoOpinion(String::new())
        );
    }
}
