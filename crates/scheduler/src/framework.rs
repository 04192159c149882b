//! The plugin framework: filters decide which nodes can take a pod, scores rank those that
//! can, and a profile runs its plugins in order and picks the node. A pod that fits nowhere
//! gets upstream's summary of why (`0/3 nodes are available: 1 Insufficient cpu, ...`).

use std::any::{Any, TypeId};
use std::collections::{BTreeMap, HashMap};

use k8s_openapi::api::core::v1::Pod;

use crate::cache::{Cache, HostPort, NodeInfo, PlacedPod, host_ports, pod_key};
use crate::resources::{Resources, pod_requests};

/// The highest score a plugin gives a node.
pub const MAX_NODE_SCORE: i64 = 100;

/// What plugins compute once per scheduling attempt (upstream's CycleState), one value per
/// type: each plugin keeps its own state type.
#[derive(Default)]
pub struct CycleState {
    values: HashMap<TypeId, Box<dyn Any + Send + Sync>>,
}

impl std::fmt::Debug for CycleState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CycleState")
            .field("values", &self.values.len())
            .finish()
    }
}

/// A plugin's per-attempt state, as PreFilter and PreScore return it.
pub type StateValue = Box<dyn Any + Send + Sync>;

impl CycleState {
    /// Keeps `value` for the rest of the attempt.
    pub fn insert(&mut self, value: StateValue) {
        self.values.insert((*value).type_id(), value);
    }

    /// The value of type `T`, if a plugin stored one.
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.values.get(&TypeId::of::<T>())?.downcast_ref()
    }

    /// The value of type `T`, to change it.
    pub fn get_mut<T: Any>(&mut self) -> Option<&mut T> {
        self.values.get_mut(&TypeId::of::<T>())?.downcast_mut()
    }

    /// Forgets everything (a new attempt).
    pub fn clear(&mut self) {
        self.values.clear();
    }
}

/// A pod with what the plugins read from it often, computed once, and the attempt's state.
#[derive(Debug)]
pub struct PodInfo {
    /// The pod.
    pub pod: Pod,
    /// `namespace/name`.
    pub key: String,
    /// Its requests.
    pub requests: Resources,
    /// The host ports it asks for.
    pub ports: Vec<HostPort>,
    /// What the plugins computed for the current attempt.
    pub state: CycleState,
}

impl PodInfo {
    /// Reads `pod`.
    pub fn new(pod: Pod) -> Self {
        Self {
            key: pod_key(&pod),
            requests: pod_requests(&pod),
            ports: host_ports(&pod),
            state: CycleState::default(),
            pod,
        }
    }

    /// The pod's namespace.
    pub fn namespace(&self) -> &str {
        self.pod.metadata.namespace.as_deref().unwrap_or("")
    }

    /// The pod's labels.
    pub fn labels(&self) -> Option<&BTreeMap<String, String>> {
        self.pod.metadata.labels.as_ref()
    }
}

/// Why a node cannot take a pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rejection {
    /// The reason as upstream words it (`Insufficient cpu`).
    pub reason: String,
    /// Whether preempting other pods could not help.
    pub unresolvable: bool,
}

impl Rejection {
    /// A rejection preemption might resolve.
    pub fn resolvable(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
            unresolvable: false,
        }
    }

    /// A rejection no preemption resolves.
    pub fn unresolvable(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
            unresolvable: true,
        }
    }
}

/// A Filter plugin (with its PreFilter stage).
pub trait Filter: Send + Sync {
    /// The plugin's name.
    fn name(&self) -> &'static str;
    /// Reads what the filter needs of the whole cluster, once per attempt; the value returned
    /// is kept in the pod's [`CycleState`]. A rejection here rejects every node.
    fn pre_filter(&self, _pod: &PodInfo, _cache: &Cache) -> Result<Option<StateValue>, Rejection> {
        Ok(None)
    }
    /// Ok when `node` can take `pod`.
    fn filter(&self, pod: &PodInfo, node: &NodeInfo) -> Result<(), Rejection>;
    /// Updates the PreFilter state for `placed` joining (`added`) or leaving `node`, for
    /// preemption's what-ifs (upstream's AddPod / RemovePod).
    fn update_state(
        &self,
        _pod: &mut PodInfo,
        _placed: &PlacedPod,
        _node: &NodeInfo,
        _added: bool,
    ) {
    }
}

/// A Score plugin (with its PreScore stage).
pub trait Score: Send + Sync {
    /// The plugin's name.
    fn name(&self) -> &'static str;
    /// Reads what scoring needs, once per attempt, knowing the feasible nodes; the value
    /// returned is kept in the pod's [`CycleState`].
    fn pre_score(
        &self,
        _pod: &PodInfo,
        _cache: &Cache,
        _feasible: &[&NodeInfo],
    ) -> Option<StateValue> {
        None
    }
    /// The node's raw score for the pod.
    fn score(&self, pod: &PodInfo, node: &NodeInfo) -> i64;
    /// Brings the raw scores of `nodes` into 0..=MAX_NODE_SCORE (the default: they already
    /// are).
    fn normalize(&self, _pod: &PodInfo, _nodes: &[&NodeInfo], _scores: &mut [i64]) {}
}

/// A pod's priority (0 when unset).
pub fn pod_priority(pod: &Pod) -> i32 {
    pod.spec.as_ref().and_then(|s| s.priority).unwrap_or(0)
}

/// Scales scores so the highest is MAX_NODE_SCORE; `reverse` turns high raw scores into low
/// ones (a count of bad things).
pub fn default_normalize(scores: &mut [i64], reverse: bool) {
    let max = scores.iter().copied().max().unwrap_or(0);
    for s in scores.iter_mut() {
        if max == 0 {
            if reverse {
                *s = MAX_NODE_SCORE;
            }
            continue;
        }
        let scaled = MAX_NODE_SCORE * *s / max;
        *s = if reverse {
            MAX_NODE_SCORE - scaled
        } else {
            scaled
        };
    }
}

/// A pod that fits on no node, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FitError {
    /// Nodes considered.
    pub nodes: usize,
    /// Each reason with the number of nodes it rejected.
    pub reasons: BTreeMap<String, usize>,
    /// The nodes rejected only for reasons preemption might resolve.
    pub resolvable_nodes: Vec<String>,
}

impl FitError {
    /// `0/3 nodes are available: 1 Insufficient cpu, 2 node(s) were unschedulable.`
    pub fn message(&self) -> String {
        let mut reasons: Vec<String> = self
            .reasons
            .iter()
            .map(|(reason, n)| format!("{n} {reason}"))
            .collect();
        reasons.sort();
        if reasons.is_empty() {
            return format!("0/{} nodes are available.", self.nodes);
        }
        format!(
            "0/{} nodes are available: {}.",
            self.nodes,
            reasons.join(", ")
        )
    }
}

/// Below this many nodes every node is evaluated.
const MIN_FEASIBLE_NODES: usize = 100;

/// How many feasible nodes to find among `all` before scoring (`percentageOfNodesToScore`;
/// 0 is upstream's adaptive default: 50% less 1% per 125 nodes, at least 5%, at least 100).
pub fn feasible_nodes_to_find(percentage: u32, all: usize) -> usize {
    if all < MIN_FEASIBLE_NODES || percentage >= 100 {
        return all;
    }
    let pct = if percentage == 0 {
        (50 - (all / 125) as i64).max(5) as usize
    } else {
        percentage as usize
    };
    (all * pct / 100).max(MIN_FEASIBLE_NODES)
}

/// One scheduling profile: a scheduler name and its plugins.
pub struct Profile {
    /// The `spec.schedulerName` it serves.
    pub scheduler_name: String,
    /// `percentageOfNodesToScore` (0: adaptive).
    pub percentage_of_nodes_to_score: u32,
    /// DefaultPreemption's parameters, when the profile preempts.
    pub preemption: Option<crate::preemption::PreemptionParams>,
    /// How long binding waits for the pod's claims to be bound (VolumeBinding).
    pub volume_bind_timeout: std::time::Duration,
    /// Whether pods with `spec.schedulingGates` wait (SchedulingGates, PreEnqueue).
    pub scheduling_gates: bool,
    filters: Vec<Box<dyn Filter>>,
    scores: Vec<(Box<dyn Score>, i64)>,
    next_start: std::sync::atomic::AtomicUsize,
}

impl Profile {
    /// A profile running `filters` and weighted `scores`.
    pub fn new(
        scheduler_name: impl Into<String>,
        filters: Vec<Box<dyn Filter>>,
        scores: Vec<(Box<dyn Score>, i64)>,
    ) -> Self {
        Self {
            scheduler_name: scheduler_name.into(),
            percentage_of_nodes_to_score: 0,
            preemption: None,
            volume_bind_timeout: std::time::Duration::from_secs(600),
            scheduling_gates: true,
            filters,
            scores,
            next_start: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// The names of the filter plugins, in order.
    pub fn filter_names(&self) -> Vec<&'static str> {
        self.filters.iter().map(|f| f.name()).collect()
    }

    /// The score plugins with their weights, in order.
    pub fn score_names(&self) -> Vec<(&'static str, i64)> {
        self.scores.iter().map(|(s, w)| (s.name(), *w)).collect()
    }

    /// The node for `pod` among the cache's nodes: PreFilter, then Filter (from where the
    /// previous pod stopped, until enough feasible nodes are found), then PreScore and the
    /// best total weighted score (ties broken at random).
    pub fn select(&self, pod: &mut PodInfo, cache: &Cache) -> Result<String, FitError> {
        use std::sync::atomic::Ordering;
        pod.state.clear();
        let nodes: Vec<&NodeInfo> = cache.nodes().collect();
        for f in &self.filters {
            match f.pre_filter(pod, cache) {
                Ok(Some(value)) => pod.state.insert(value),
                Ok(None) => {}
                Err(r) => {
                    return Err(FitError {
                        nodes: nodes.len(),
                        reasons: [(r.reason, nodes.len())].into(),
                        resolvable_nodes: Vec::new(),
                    });
                }
            }
        }
        let wanted = feasible_nodes_to_find(self.percentage_of_nodes_to_score, nodes.len());
        let start = match nodes.len() {
            0 => 0,
            n => self.next_start.load(Ordering::Relaxed) % n,
        };
        let mut feasible = Vec::new();
        let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
        let mut resolvable_nodes = Vec::new();
        let mut processed = 0;
        for node in nodes.iter().cycle().skip(start).take(nodes.len()) {
            if feasible.len() >= wanted {
                break;
            }
            processed += 1;
            let verdict = match cache.nominated_on(node.name()) {
                // Pods that preemption nominated here, of at least this pod's priority,
                // count as placed: the room was made for them.
                Some(nominated) => {
                    let mut with = (*node).clone();
                    for (key, p) in nominated {
                        if *key != pod.key && p.priority >= pod_priority(&pod.pod) {
                            with.add_pod(key.clone(), p.clone());
                        }
                    }
                    self.filter_node(pod, &with)
                }
                None => self.filter_node(pod, node),
            };
            match verdict {
                Ok(()) => feasible.push(*node),
                Err(r) => {
                    if !r.unresolvable {
                        resolvable_nodes.push(node.name().to_string());
                    }
                    *reasons.entry(r.reason).or_default() += 1;
                }
            }
        }
        if !nodes.is_empty() {
            self.next_start
                .store((start + processed) % nodes.len(), Ordering::Relaxed);
        }
        if feasible.is_empty() {
            return Err(FitError {
                nodes: nodes.len(),
                reasons,
                resolvable_nodes,
            });
        }
        if feasible.len() == 1 {
            return Ok(feasible[0].name().to_string());
        }
        let totals = self.score(pod, cache, &feasible);
        let best = totals.iter().copied().max().unwrap_or(0);
        let tied: Vec<usize> = (0..feasible.len()).filter(|i| totals[*i] == best).collect();
        let pick = tied[rand::random_range(0..tied.len())];
        Ok(feasible[pick].name().to_string())
    }

    /// Runs every filter on `node` (the PreFilter state must be in `pod`).
    pub fn filter_node(&self, pod: &PodInfo, node: &NodeInfo) -> Result<(), Rejection> {
        self.filters.iter().try_for_each(|f| f.filter(pod, node))
    }

    /// Tells the filters that `placed` joins (`added`) or leaves `node`.
    pub fn update_state(
        &self,
        pod: &mut PodInfo,
        placed: &PlacedPod,
        node: &NodeInfo,
        added: bool,
    ) {
        for f in &self.filters {
            f.update_state(pod, placed, node, added);
        }
    }

    /// The weighted total score of each of `feasible`.
    fn score(&self, pod: &mut PodInfo, cache: &Cache, feasible: &[&NodeInfo]) -> Vec<i64> {
        let values: Vec<StateValue> = self
            .scores
            .iter()
            .filter_map(|(plugin, _)| plugin.pre_score(pod, cache, feasible))
            .collect();
        values.into_iter().for_each(|v| pod.state.insert(v));
        let mut totals = vec![0i64; feasible.len()];
        for (plugin, weight) in &self.scores {
            let mut scores: Vec<i64> = feasible.iter().map(|n| plugin.score(pod, n)).collect();
            plugin.normalize(pod, feasible, &mut scores);
            for (t, s) in totals.iter_mut().zip(scores) {
                *t += s * weight;
            }
        }
        totals
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_summary_counts_reasons_in_order() {
        let err = FitError {
            nodes: 3,
            reasons: [
                ("node(s) were unschedulable".to_string(), 2),
                ("Insufficient cpu".to_string(), 1),
            ]
            .into(),
            resolvable_nodes: Vec::new(),
        };
        assert_eq!(
            err.message(),
            "0/3 nodes are available: 1 Insufficient cpu, 2 node(s) were unschedulable."
        );
    }

    #[test]
    fn the_share_of_nodes_evaluated_follows_upstream() {
        assert_eq!(feasible_nodes_to_find(0, 50), 50);
        assert_eq!(feasible_nodes_to_find(0, 1000), 420);
        assert_eq!(feasible_nodes_to_find(0, 5000), 500);
        assert_eq!(feasible_nodes_to_find(0, 6000), 300);
        assert_eq!(feasible_nodes_to_find(0, 200), 100);
        assert_eq!(feasible_nodes_to_find(10, 5000), 500);
        assert_eq!(feasible_nodes_to_find(100, 5000), 5000);
    }

    #[test]
    fn normalizing_scales_to_the_maximum() {
        let mut s = vec![0, 5, 10];
        default_normalize(&mut s, false);
        assert_eq!(s, [0, 50, 100]);
        let mut s = vec![0, 5, 10];
        default_normalize(&mut s, true);
        assert_eq!(s, [100, 50, 0]);
        let mut s = vec![0, 0];
        default_normalize(&mut s, true);
        assert_eq!(s, [100, 100]);
    }
}
