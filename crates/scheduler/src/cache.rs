//! The scheduler's view of the cluster: every node with the pods bound (or assumed) to it and
//! what they use. A pod is assumed on its node as soon as it is chosen, before the binding
//! call returns, so the next pod sees the space taken; a failed binding forgets it.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use k8s_openapi::api::core::v1::{Namespace, Node, Pod};

use crate::dra::DraIndex;
use crate::resources::{Resources, node_allocatable, pod_requests};
use crate::terms::{NamespaceLabels, PodAffinityTerms};
use crate::volumes::{PodVolume, VolumeIndex, pod_volumes};
use capstan_meta::labels::{LabelSelector, Operator, Requirement};

/// `namespace/name`.
pub fn pod_key(pod: &Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or(""),
        pod.metadata.name.as_deref().unwrap_or("")
    )
}

/// A host port a pod uses: (protocol, host IP, port).
pub type HostPort = (String, String, i32);

/// The host ports `pod` asks for.
pub fn host_ports(pod: &Pod) -> Vec<HostPort> {
    let mut out = Vec::new();
    for c in pod.spec.iter().flat_map(|s| &s.containers) {
        for p in c.ports.iter().flatten() {
            if let Some(port) = p.host_port.filter(|p| *p > 0) {
                let ip = p
                    .host_ip
                    .clone()
                    .filter(|ip| !ip.is_empty())
                    .unwrap_or_else(|| "0.0.0.0".into());
                out.push((p.protocol.clone().unwrap_or_else(|| "TCP".into()), ip, port));
            }
        }
    }
    out
}

/// An image name with `:latest` added when it has neither tag nor digest, as upstream
/// compares them.
pub fn normalized_image(name: &str) -> String {
    let last = name.rsplit('/').next().unwrap_or(name);
    if last.contains(':') || last.contains('@') {
        name.to_string()
    } else {
        format!("{name}:latest")
    }
}

/// What the cache keeps of a placed pod: what the plugins read, not the whole object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlacedPod {
    /// Its namespace.
    pub namespace: String,
    /// Its labels.
    pub labels: BTreeMap<String, String>,
    /// Its requests.
    pub requests: Resources,
    /// Its host ports.
    pub ports: Vec<HostPort>,
    /// Whether it is being deleted.
    pub terminating: bool,
    /// Its inter-pod affinity terms, parsed, if it has any.
    pub affinity: Option<Arc<PodAffinityTerms>>,
    /// Its volumes the volume plugins look at (claims and disks).
    pub volumes: Arc<[PodVolume]>,
    /// Its priority.
    pub priority: i32,
    /// When it started (or was created), in seconds since the epoch: preemption spares
    /// older pods first.
    pub started: i64,
}

impl PlacedPod {
    /// Keeps what the plugins read of `pod`.
    pub fn new(pod: &Pod) -> Self {
        Self {
            namespace: pod.metadata.namespace.clone().unwrap_or_default(),
            labels: pod.metadata.labels.clone().unwrap_or_default(),
            requests: pod_requests(pod),
            ports: host_ports(pod),
            terminating: pod.metadata.deletion_timestamp.is_some(),
            affinity: PodAffinityTerms::of(pod).map(Arc::new),
            volumes: pod_volumes(pod).into(),
            priority: pod.spec.as_ref().and_then(|s| s.priority).unwrap_or(0),
            started: pod
                .status
                .as_ref()
                .and_then(|s| s.start_time.as_ref())
                .or(pod.metadata.creation_timestamp.as_ref())
                .map_or(0, |t| t.0.as_second()),
        }
    }

    /// Whether it has terms that score other pods: required affinity (`hardPodAffinityWeight`),
    /// preferred affinity or anti-affinity.
    pub fn has_scoring_terms(&self) -> bool {
        self.affinity.as_ref().is_some_and(|a| {
            !a.required_affinity.is_empty()
                || !a.preferred_affinity.is_empty()
                || !a.preferred_anti_affinity.is_empty()
        })
    }

    /// Whether it has required anti-affinity terms.
    pub fn has_required_anti_affinity(&self) -> bool {
        self.affinity
            .as_ref()
            .is_some_and(|a| !a.required_anti_affinity.is_empty())
    }
}

/// One node and what is placed on it.
#[derive(Debug, Clone)]
pub struct NodeInfo {
    /// The node.
    pub node: Node,
    /// What it offers.
    pub allocatable: Resources,
    /// What its pods request.
    pub requested: Resources,
    /// Its pods (bound or assumed), by key.
    pub pods: BTreeMap<String, PlacedPod>,
    /// Host ports in use.
    pub used_ports: Vec<HostPort>,
    /// Image names present on the node, with their sizes.
    pub images: HashMap<String, i64>,
    /// How many of its pods have terms that score other pods (required affinity, preferred
    /// affinity or anti-affinity).
    pub pods_with_scoring_terms: usize,
    /// How many of its pods have required anti-affinity terms.
    pub pods_with_required_anti_affinity: usize,
}

impl NodeInfo {
    fn new(node: Node) -> Self {
        let mut images = HashMap::new();
        for image in node.status.iter().flat_map(|s| s.images.iter().flatten()) {
            for name in image.names.iter().flatten() {
                images.insert(normalized_image(name), image.size_bytes.unwrap_or(0));
            }
        }
        Self {
            allocatable: node_allocatable(&node),
            node,
            requested: Resources::default(),
            pods: BTreeMap::new(),
            used_ports: Vec::new(),
            images,
            pods_with_scoring_terms: 0,
            pods_with_required_anti_affinity: 0,
        }
    }

    /// The value of the node's label `key`.
    pub fn label(&self, key: &str) -> Option<&str> {
        self.node
            .metadata
            .labels
            .as_ref()?
            .get(key)
            .map(String::as_str)
    }

    /// Adjusts the affinity counters for `pod` arriving (`+1`) or leaving (`-1`).
    fn count_affinity(&mut self, pod: &PlacedPod, delta: isize) {
        if pod.has_scoring_terms() {
            self.pods_with_scoring_terms =
                self.pods_with_scoring_terms.saturating_add_signed(delta);
        }
        if pod.has_required_anti_affinity() {
            self.pods_with_required_anti_affinity = self
                .pods_with_required_anti_affinity
                .saturating_add_signed(delta);
        }
    }

    /// The node's name.
    pub fn name(&self) -> &str {
        self.node.metadata.name.as_deref().unwrap_or("")
    }

    /// Places `pod` here (also preemption's what-if on a copy).
    pub fn add_pod(&mut self, key: String, pod: PlacedPod) {
        self.requested.add(&pod.requests);
        self.used_ports.extend(pod.ports.iter().cloned());
        self.count_affinity(&pod, 1);
        if let Some(old) = self.pods.insert(key, pod) {
            // Callers remove first; keep the counters right if one did not.
            self.requested.sub(&old.requests);
            self.count_affinity(&old, -1);
        }
    }

    /// Takes the pod `key` away (also preemption's what-if on a copy).
    pub fn remove_pod(&mut self, key: &str) -> Option<PlacedPod> {
        let pod = self.pods.remove(key)?;
        self.requested.sub(&pod.requests);
        self.count_affinity(&pod, -1);
        for port in &pod.ports {
            if let Some(i) = self.used_ports.iter().position(|p| p == port) {
                self.used_ports.swap_remove(i);
            }
        }
        Some(pod)
    }
}

/// A pod arriving on or leaving a known node, as [`Cache::pod_changes_since`] tells it.
#[derive(Debug, Clone)]
pub struct PodChange {
    /// The node's name.
    pub node: String,
    /// The pod.
    pub pod: PlacedPod,
    /// Whether it arrived (`false`: it left).
    pub added: bool,
}

/// A point in a cache's history: what a plugin derived from the cache there can be brought
/// up to date with the pod changes since ([`Cache::pod_changes_since`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    cache: u64,
    layout: u64,
    changes: u64,
}

/// How many pod changes a cache keeps: a mark older than that is derived again.
pub(crate) const KEPT_POD_CHANGES: usize = 4096;

/// The recent pod changes on known nodes, and a count of the changes to the nodes and
/// namespaces.
#[derive(Debug)]
struct History {
    /// Tells this cache from others (a mark from another cache is never applied).
    cache: u64,
    /// Moves when a node arrives, leaves or changes its labels, or a namespace's labels change.
    layout: u64,
    /// The number of the first kept change.
    first: u64,
    changes: VecDeque<PodChange>,
}

impl Default for History {
    fn default() -> Self {
        static CACHES: AtomicU64 = AtomicU64::new(0);
        Self {
            cache: CACHES.fetch_add(1, Ordering::Relaxed),
            layout: 0,
            first: 0,
            changes: VecDeque::new(),
        }
    }
}

impl History {
    fn note(&mut self, node: &str, pod: &PlacedPod, added: bool) {
        if self.changes.len() == KEPT_POD_CHANGES {
            self.changes.pop_front();
            self.first += 1;
        }
        self.changes.push_back(PodChange {
            node: node.to_string(),
            pod: pod.clone(),
            added,
        });
    }
}

/// The pods on known nodes with inter-pod affinity terms, and with required anti-affinity
/// terms: while there are none, the affinity plugins need not visit every node.
#[derive(Debug, Default)]
struct AffinityTotals {
    with_scoring_terms: usize,
    with_required_anti_affinity: usize,
}

impl AffinityTotals {
    fn add(&mut self, node: &NodeInfo) {
        self.with_scoring_terms += node.pods_with_scoring_terms;
        self.with_required_anti_affinity += node.pods_with_required_anti_affinity;
    }

    fn sub(&mut self, node: &NodeInfo) {
        self.with_scoring_terms -= node.pods_with_scoring_terms;
        self.with_required_anti_affinity -= node.pods_with_required_anti_affinity;
    }
}

/// Nodes and the pods placed on them.
#[derive(Debug, Default)]
pub struct Cache {
    nodes: BTreeMap<String, NodeInfo>,
    history: History,
    affinity: AffinityTotals,
    /// Pod key → node name, for every placed pod.
    placed: HashMap<String, String>,
    /// Pods placed on nodes the cache does not know (yet, or any more), by node name: a
    /// node that arrives after its pods takes them in.
    orphans: HashMap<String, BTreeMap<String, PlacedPod>>,
    assumed: HashSet<String>,
    /// How many nodes have each image.
    image_nodes: HashMap<String, usize>,
    /// Every namespace's labels.
    namespaces: Arc<NamespaceLabels>,
    /// Service selectors, by namespace then name.
    services: HashMap<String, HashMap<String, BTreeMap<String, String>>>,
    /// Selectors of the controllers that own pods: (kind, namespace, name).
    controllers: HashMap<(String, String, String), LabelSelector>,
    /// PodDisruptionBudgets, by namespace and name.
    budgets: BTreeMap<(String, String), Budget>,
    /// Pending pods nominated to a node by preemption: node name → pod key → pod.
    nominated: HashMap<String, BTreeMap<String, PlacedPod>>,
    /// Pod key → the node it is nominated to.
    nominations: HashMap<String, String>,
    /// Claims, volumes, classes and CSI nodes.
    volumes: Arc<VolumeIndex>,
    /// Resource claims, device classes and resource slices.
    dra: Arc<DraIndex>,
}

/// What preemption reads of a PodDisruptionBudget.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Budget {
    /// The pods it covers (`None`: none).
    pub selector: Option<LabelSelector>,
    /// `status.disruptionsAllowed`.
    pub disruptions_allowed: i32,
    /// `status.disruptedPods`: names already being disrupted (not counted again).
    pub disrupted: HashSet<String>,
}

impl Cache {
    /// Adds or replaces a node (keeping its pods).
    pub fn set_node(&mut self, node: Node) {
        let name = node.metadata.name.clone().unwrap_or_default();
        let mut info = NodeInfo::new(node);
        let pods = match self.nodes.remove(&name) {
            Some(old) => {
                self.count_images(&old, false);
                self.affinity.sub(&old);
                if old.node.metadata.labels != info.node.metadata.labels {
                    self.history.layout += 1;
                }
                old.pods
            }
            None => {
                self.history.layout += 1;
                self.orphans.remove(&name).unwrap_or_default()
            }
        };
        for (key, pod) in pods {
            info.add_pod(key, pod);
        }
        self.count_images(&info, true);
        self.affinity.add(&info);
        self.nodes.insert(name, info);
    }

    fn count_images(&mut self, node: &NodeInfo, add: bool) {
        for image in node.images.keys() {
            let n = self.image_nodes.entry(image.clone()).or_default();
            if add {
                *n += 1;
            } else {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    self.image_nodes.remove(image);
                }
            }
        }
    }

    /// Records a namespace's labels (inter-pod affinity terms select namespaces by them).
    pub fn set_namespace(&mut self, namespace: &Namespace) {
        let name = namespace.metadata.name.clone().unwrap_or_default();
        let labels = namespace.metadata.labels.clone().unwrap_or_default();
        if self.namespaces.get(&name) != Some(&labels) {
            self.history.layout += 1;
            Arc::make_mut(&mut self.namespaces).insert(name, labels);
        }
    }

    /// Forgets a namespace.
    pub fn remove_namespace(&mut self, name: &str) {
        self.history.layout += 1;
        Arc::make_mut(&mut self.namespaces).remove(name);
    }

    /// Replaces every namespace (after a list).
    pub fn reset_namespaces(&mut self, namespaces: &[Namespace]) {
        self.history.layout += 1;
        Arc::make_mut(&mut self.namespaces).clear();
        namespaces.iter().for_each(|n| self.set_namespace(n));
    }

    /// Every namespace's labels.
    pub fn namespace_labels(&self) -> &NamespaceLabels {
        &self.namespaces
    }

    /// Every namespace's labels, shared (for state kept across an attempt).
    pub fn namespace_labels_shared(&self) -> Arc<NamespaceLabels> {
        self.namespaces.clone()
    }

    /// Records a Service's selector (`None` selects nothing and is forgotten).
    pub fn set_service(
        &mut self,
        namespace: &str,
        name: &str,
        selector: Option<BTreeMap<String, String>>,
    ) {
        let services = self.services.entry(namespace.to_string()).or_default();
        match selector {
            Some(s) => services.insert(name.to_string(), s),
            None => services.remove(name),
        };
    }

    /// Records the selector of a controller (`ReplicaSet`, `StatefulSet` or
    /// `ReplicationController`); `None` forgets it.
    pub fn set_controller(
        &mut self,
        kind: &str,
        namespace: &str,
        name: &str,
        selector: Option<LabelSelector>,
    ) {
        let key = (kind.to_string(), namespace.to_string(), name.to_string());
        match selector {
            Some(s) => self.controllers.insert(key, s),
            None => self.controllers.remove(&key),
        };
    }

    /// Forgets every Service and controller of `kind` (`Service` for services), before a
    /// relist.
    pub fn clear_workloads(&mut self, kind: &str) {
        if kind == "Service" {
            self.services.clear();
        } else {
            self.controllers.retain(|(k, _, _), _| k != kind);
        }
    }

    /// The selector the default spread constraints use for `pod`: the labels of the
    /// Services that select it, and the selector of the controller that owns it (empty when
    /// there are none).
    pub fn default_selector(&self, pod: &Pod) -> LabelSelector {
        let ns = pod.metadata.namespace.as_deref().unwrap_or("");
        let labels = pod.metadata.labels.as_ref();
        let mut merged: BTreeMap<&str, &str> = BTreeMap::new();
        for selector in self.services.get(ns).into_iter().flat_map(|s| s.values()) {
            if selector
                .iter()
                .all(|(k, v)| labels.and_then(|l| l.get(k)) == Some(v))
            {
                merged.extend(selector.iter().map(|(k, v)| (k.as_str(), v.as_str())));
            }
        }
        let mut requirements: Vec<Requirement> = merged
            .into_iter()
            .map(|(k, v)| Requirement {
                key: k.to_string(),
                op: Operator::In(vec![v.to_string()]),
            })
            .collect();
        let owner = pod
            .metadata
            .owner_references
            .iter()
            .flatten()
            .find(|o| o.controller == Some(true));
        if let Some(owner) = owner {
            let known = matches!(
                (owner.api_version.as_str(), owner.kind.as_str()),
                ("v1", "ReplicationController") | ("apps/v1", "ReplicaSet" | "StatefulSet")
            );
            let key = (owner.kind.clone(), ns.to_string(), owner.name.clone());
            if known && let Some(selector) = self.controllers.get(&key) {
                requirements.extend(selector.requirements.iter().cloned());
            }
        }
        LabelSelector { requirements }
    }

    /// Records a PodDisruptionBudget (`None`: it is gone).
    pub fn set_budget(&mut self, namespace: &str, name: &str, budget: Option<Budget>) {
        let key = (namespace.to_string(), name.to_string());
        match budget {
            Some(b) => self.budgets.insert(key, b),
            None => self.budgets.remove(&key),
        };
    }

    /// Forgets every PodDisruptionBudget (before a relist).
    pub fn clear_budgets(&mut self) {
        self.budgets.clear();
    }

    /// The PodDisruptionBudgets of `namespace`.
    pub fn budgets_in<'a>(&'a self, namespace: &'a str) -> impl Iterator<Item = &'a Budget> {
        self.budgets
            .iter()
            .filter(move |((ns, _), _)| ns == namespace)
            .map(|(_, b)| b)
    }

    /// Records that the pending `pod` is nominated to `node` (`None`: to no node).
    pub fn nominate(&mut self, pod: &Pod, node: Option<&str>) {
        let key = pod_key(pod);
        if let Some(old) = self.nominations.remove(&key)
            && let Some(pods) = self.nominated.get_mut(&old)
        {
            pods.remove(&key);
            if pods.is_empty() {
                self.nominated.remove(&old);
            }
        }
        if let Some(node) = node.filter(|n| !n.is_empty()) {
            self.nominated
                .entry(node.to_string())
                .or_default()
                .insert(key.clone(), PlacedPod::new(pod));
            self.nominations.insert(key, node.to_string());
        }
    }

    /// The pods nominated to `node`.
    pub fn nominated_on(&self, node: &str) -> Option<&BTreeMap<String, PlacedPod>> {
        self.nominated.get(node)
    }

    /// The volume index, shared (for state kept across an attempt).
    pub fn volume_index(&self) -> Arc<VolumeIndex> {
        self.volumes.clone()
    }

    /// The Dynamic Resource Allocation index, shared (for state kept across an attempt).
    pub fn dra_index(&self) -> Arc<DraIndex> {
        self.dra.clone()
    }

    /// The Dynamic Resource Allocation index, to change it.
    pub fn dra_index_mut(&mut self) -> &mut DraIndex {
        Arc::make_mut(&mut self.dra)
    }

    /// The volume index, to change it.
    pub fn volume_index_mut(&mut self) -> &mut VolumeIndex {
        Arc::make_mut(&mut self.volumes)
    }

    /// Every placed pod (bound or assumed) with its key, on known nodes and others.
    pub fn placed_pods(&self) -> impl Iterator<Item = (&String, &PlacedPod)> {
        self.nodes
            .values()
            .flat_map(|n| n.pods.iter())
            .chain(self.orphans.values().flat_map(|p| p.iter()))
    }

    /// How many nodes have `image` (normalized).
    pub fn nodes_with_image(&self, image: &str) -> usize {
        self.image_nodes.get(image).copied().unwrap_or(0)
    }

    /// Removes a node (its pods stay known, waiting for a node of that name).
    pub fn remove_node(&mut self, name: &str) {
        if let Some(old) = self.nodes.remove(name) {
            self.history.layout += 1;
            self.affinity.sub(&old);
            self.count_images(&old, false);
            if !old.pods.is_empty() {
                self.orphans.insert(name.to_string(), old.pods);
            }
        }
    }

    /// Places `pod` on `node`, known or not.
    fn place(&mut self, key: String, node: &str, pod: PlacedPod) {
        match self.nodes.get_mut(node) {
            Some(info) => {
                self.history.note(node, &pod, true);
                self.affinity.sub(info);
                info.add_pod(key.clone(), pod);
                self.affinity.add(info);
            }
            None => {
                self.orphans
                    .entry(node.to_string())
                    .or_default()
                    .insert(key.clone(), pod);
            }
        }
        self.placed.insert(key, node.to_string());
    }

    /// Replaces every node (after a list).
    pub fn reset_nodes(&mut self, nodes: Vec<Node>) {
        let names: HashSet<String> = nodes
            .iter()
            .filter_map(|n| n.metadata.name.clone())
            .collect();
        let gone: Vec<String> = self
            .nodes
            .keys()
            .filter(|n| !names.contains(*n))
            .cloned()
            .collect();
        for name in gone {
            self.remove_node(&name);
        }
        for node in nodes {
            self.set_node(node);
        }
    }

    /// Records a pod as the API server has it: placed when bound, and an assumption about it
    /// is confirmed.
    pub fn set_pod(&mut self, pod: Pod) {
        let key = pod_key(&pod);
        self.remove_pod(&key);
        let node = pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.clone())
            .unwrap_or_default();
        let finished = matches!(
            pod.status.as_ref().and_then(|s| s.phase.as_deref()),
            Some("Succeeded" | "Failed")
        );
        if node.is_empty() || finished {
            return;
        }
        self.place(key, &node, PlacedPod::new(&pod));
    }

    /// Forgets a pod (deleted, or an assumption undone).
    pub fn remove_pod(&mut self, key: &str) {
        self.assumed.remove(key);
        if let Some(node) = self.nominations.remove(key)
            && let Some(pods) = self.nominated.get_mut(&node)
        {
            pods.remove(key);
            if pods.is_empty() {
                self.nominated.remove(&node);
            }
        }
        let Some(node) = self.placed.remove(key) else {
            return;
        };
        if let Some(info) = self.nodes.get_mut(&node) {
            self.affinity.sub(info);
            if let Some(pod) = info.remove_pod(key) {
                self.history.note(&node, &pod, false);
            }
            self.affinity.add(info);
        } else if let Some(pods) = self.orphans.get_mut(&node) {
            pods.remove(key);
            if pods.is_empty() {
                self.orphans.remove(&node);
            }
        }
    }

    /// Places `pod` on `node` before its binding is confirmed.
    pub fn assume(&mut self, pod: &Pod, node: &str) {
        let key = pod_key(pod);
        self.remove_pod(&key);
        self.place(key.clone(), node, PlacedPod::new(pod));
        self.assumed.insert(key);
    }

    /// Undoes an assumption (the binding failed).
    pub fn forget(&mut self, key: &str) {
        if self.assumed.contains(key) {
            self.remove_pod(key);
        }
    }

    /// Whether `key` is placed (bound or assumed).
    pub fn is_placed(&self, key: &str) -> bool {
        self.placed.contains_key(key)
    }

    /// The node called `name`.
    pub fn node(&self, name: &str) -> Option<&NodeInfo> {
        self.nodes.get(name)
    }

    /// The nodes.
    pub fn nodes(&self) -> impl Iterator<Item = &NodeInfo> {
        self.nodes.values()
    }

    /// Every node once, in name order from `first` (or the first name after it) and around.
    pub fn nodes_from<'a>(&'a self, first: &'a str) -> impl Iterator<Item = &'a NodeInfo> {
        use std::ops::Bound::{Excluded, Included, Unbounded};
        self.nodes
            .range::<str, _>((Included(first), Unbounded))
            .chain(self.nodes.range::<str, _>((Unbounded, Excluded(first))))
            .map(|(_, node)| node)
    }

    /// How many nodes there are.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }

    /// How many pods on known nodes have terms that score other pods.
    pub fn pods_with_scoring_terms(&self) -> usize {
        self.affinity.with_scoring_terms
    }

    /// How many pods on known nodes have required anti-affinity terms.
    pub fn pods_with_required_anti_affinity(&self) -> usize {
        self.affinity.with_required_anti_affinity
    }

    /// This point of the cache's history.
    pub fn mark(&self) -> Mark {
        Mark {
            cache: self.history.cache,
            layout: self.history.layout,
            changes: self.history.first + self.history.changes.len() as u64,
        }
    }

    /// The pods that arrived on or left known nodes since `mark`, in order; `None` when that
    /// is not known: the mark is another cache's, a node arrived, left or changed its labels
    /// since, a namespace's labels changed, or more changes were made than the cache keeps.
    pub fn pod_changes_since(&self, mark: Mark) -> Option<impl Iterator<Item = &PodChange>> {
        let h = &self.history;
        let skip = mark.changes.checked_sub(h.first)?;
        (mark.cache == h.cache && mark.layout == h.layout && skip <= h.changes.len() as u64)
            .then(|| h.changes.iter().skip(skip as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::test_support::{node, pod};
    use serde_json::json;

    fn bound(name: &str, node: &str) -> Pod {
        let mut p = pod(name, json!({}), json!({}));
        p.spec.as_mut().unwrap().node_name = Some(node.into());
        p.spec.as_mut().unwrap().containers[0].resources =
            Some(serde_json::from_value(json!({"requests": {"cpu": "1"}})).unwrap());
        p
    }

    fn used_cpu(cache: &Cache, node: &str) -> Option<i64> {
        cache
            .nodes()
            .find(|n| n.name() == node)
            .map(|n| n.requested.milli_cpu)
    }

    #[test]
    fn pods_seen_before_their_node_are_counted_when_it_arrives() {
        let mut cache = Cache::default();
        cache.set_pod(bound("early", "n1"));
        cache.assume(&bound("assumed", "n1"), "n1");
        assert!(cache.is_placed("default/early"));
        cache.set_node(node("n1", json!({})));
        assert_eq!(used_cpu(&cache, "n1"), Some(2000));
        // A node that goes away and comes back keeps its pods.
        cache.remove_node("n1");
        assert_eq!(used_cpu(&cache, "n1"), None);
        cache.remove_pod("default/early");
        cache.set_node(node("n1", json!({})));
        assert_eq!(used_cpu(&cache, "n1"), Some(1000));
        cache.forget("default/assumed");
        assert_eq!(used_cpu(&cache, "n1"), Some(0));
    }

    #[test]
    fn affinity_totals_count_the_pods_on_known_nodes() {
        let term = json!({"labelSelector": {"matchLabels": {"app": "x"}},
            "topologyKey": "kubernetes.io/hostname"});
        let with_terms = |name: &str, node: &str, affinity: serde_json::Value| {
            let mut p = bound(name, node);
            p.spec.as_mut().unwrap().affinity = Some(serde_json::from_value(affinity).unwrap());
            p
        };
        // Required anti-affinity, and a preferred affinity term (which scores).
        let anti = |name: &str, node: &str| {
            let affinity = json!({
                "podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]},
                "podAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                    {"weight": 1, "podAffinityTerm": term}]}});
            with_terms(name, node, affinity)
        };
        let totals = |cache: &Cache| {
            let sum = |f: fn(&NodeInfo) -> usize| cache.nodes().map(f).sum::<usize>();
            let want = (
                sum(|n| n.pods_with_scoring_terms),
                sum(|n| n.pods_with_required_anti_affinity),
            );
            let got = (
                cache.pods_with_scoring_terms(),
                cache.pods_with_required_anti_affinity(),
            );
            assert_eq!(got, want);
            got
        };
        let mut cache = Cache::default();
        cache.set_pod(anti("early", "n1"));
        cache.set_pod(bound("plain", "n1"));
        assert_eq!(totals(&cache), (0, 0), "n1 is not known yet");
        cache.set_node(node("n1", json!({})));
        assert_eq!(totals(&cache), (1, 1));
        cache.assume(&anti("assumed", "n2"), "n1");
        cache.set_pod(anti("early", "n1"));
        assert_eq!(totals(&cache), (2, 2));
        cache.set_node(node("n1", json!({"zone": "a"})));
        assert_eq!(totals(&cache), (2, 2));
        cache.remove_node("n1");
        assert_eq!(totals(&cache), (0, 0));
        cache.set_node(node("n1", json!({})));
        cache.forget("default/assumed");
        assert_eq!(totals(&cache), (1, 1));
        cache.remove_pod("default/early");
        assert_eq!(totals(&cache), (0, 0));
        // Required anti-affinity alone scores nothing.
        let affinity =
            json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}});
        cache.set_pod(with_terms("apart", "n1", affinity));
        assert_eq!(totals(&cache), (0, 1));
    }
}
