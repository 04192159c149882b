//! The plugin framework: filters decide which nodes can take a pod, scores rank those that
//! can, and a profile runs its plugins in order and picks the node. A pod that fits nowhere
//! gets upstream's summary of why (`0/3 nodes are available: 1 Insufficient cpu, ...`).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;

use crate::cache::{Cache, HostPort, NodeInfo, host_ports, normalized_image, pod_key};
use crate::resources::{Resources, pod_requests};

/// The highest score a plugin gives a node.
pub const MAX_NODE_SCORE: i64 = 100;

/// A pod with what the plugins read from it often, computed once.
#[derive(Debug, Clone)]
pub struct PodInfo {
    /// The pod.
    pub pod: Pod,
    /// `namespace/name`.
    pub key: String,
    /// Its requests.
    pub requests: Resources,
    /// The host ports it asks for.
    pub ports: Vec<HostPort>,
    /// Its container images (normalized) with the number of nodes that have each: computed
    /// once per attempt (what upstream's PreScore does).
    pub image_spread: Vec<(String, usize)>,
    /// Nodes in the cluster when the attempt started.
    pub total_nodes: usize,
}

impl PodInfo {
    /// Reads `pod`.
    pub fn new(pod: Pod) -> Self {
        Self {
            key: pod_key(&pod),
            requests: pod_requests(&pod),
            ports: host_ports(&pod),
            image_spread: Vec::new(),
            total_nodes: 0,
            pod,
        }
    }

    /// Reads what the score plugins need of the cluster for this pod.
    pub fn prepare(&mut self, cache: &Cache) {
        self.total_nodes = cache.node_count();
        let spec = self.pod.spec.as_ref();
        self.image_spread = spec
            .into_iter()
            .flat_map(|s| s.init_containers.iter().flatten().chain(&s.containers))
            .filter_map(|c| c.image.as_deref())
            .map(|image| {
                let name = normalized_image(image);
                let n = cache.nodes_with_image(&name);
                (name, n)
            })
            .collect();
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

/// A Filter plugin.
pub trait Filter: Send + Sync {
    /// The plugin's name.
    fn name(&self) -> &'static str;
    /// Ok when `node` can take `pod`.
    fn filter(&self, pod: &PodInfo, node: &NodeInfo) -> Result<(), Rejection>;
}

/// A Score plugin.
pub trait Score: Send + Sync {
    /// The plugin's name.
    fn name(&self) -> &'static str;
    /// The node's raw score for the pod.
    fn score(&self, pod: &PodInfo, node: &NodeInfo) -> i64;
    /// Brings raw scores into 0..=MAX_NODE_SCORE (the default: they already are).
    fn normalize(&self, _scores: &mut [i64]) {}
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
            filters,
            scores,
            next_start: std::sync::atomic::AtomicUsize::new(0),
        }
    }

    /// The names of the filter plugins, in order.
    pub fn filter_names(&self) -> Vec<&'static str> {
        self.filters.iter().map(|f| f.name()).collect()
    }

    /// The node for `pod` among `nodes`: filters (from where the previous pod stopped, until
    /// enough feasible nodes are found), then the best total weighted score (ties broken at
    /// random).
    pub fn select(&self, pod: &PodInfo, nodes: &[&NodeInfo]) -> Result<String, FitError> {
        use std::sync::atomic::Ordering;
        let wanted = feasible_nodes_to_find(self.percentage_of_nodes_to_score, nodes.len());
        let start = match nodes.len() {
            0 => 0,
            n => self.next_start.load(Ordering::Relaxed) % n,
        };
        let mut feasible = Vec::new();
        let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
        let mut processed = 0;
        'nodes: for node in nodes.iter().cycle().skip(start).take(nodes.len()) {
            if feasible.len() >= wanted {
                break;
            }
            processed += 1;
            for f in &self.filters {
                if let Err(r) = f.filter(pod, node) {
                    *reasons.entry(r.reason).or_default() += 1;
                    continue 'nodes;
                }
            }
            feasible.push(*node);
        }
        if !nodes.is_empty() {
            self.next_start
                .store((start + processed) % nodes.len(), Ordering::Relaxed);
        }
        if feasible.is_empty() {
            return Err(FitError {
                nodes: nodes.len(),
                reasons,
            });
        }
        if feasible.len() == 1 {
            return Ok(feasible[0].name().to_string());
        }
        let mut totals = vec![0i64; feasible.len()];
        for (plugin, weight) in &self.scores {
            let mut scores: Vec<i64> = feasible.iter().map(|n| plugin.score(pod, n)).collect();
            plugin.normalize(&mut scores);
            for (t, s) in totals.iter_mut().zip(scores) {
                *t += s * weight;
            }
        }
        let best = totals.iter().copied().max().unwrap_or(0);
        let tied: Vec<usize> = (0..feasible.len()).filter(|i| totals[*i] == best).collect();
        let pick = tied[rand::random_range(0..tied.len())];
        Ok(feasible[pick].name().to_string())
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
