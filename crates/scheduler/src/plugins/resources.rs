//! NodeResourcesFit (filter on requests against allocatable; scored by the LeastAllocated,
//! MostAllocated or RequestedToCapacityRatio strategy) and NodeResourcesBalancedAllocation.

use crate::cache::{Cache, NodeInfo};
use crate::dra::extended::backed_resources;
use crate::framework::{Filter, MAX_NODE_SCORE, PodInfo, Rejection, Score, StateValue};

/// CPU assumed for scoring a container that requests none (upstream's value).
const DEFAULT_MILLI_CPU: i64 = 100;
/// Memory assumed for scoring a container that requests none (upstream's value).
const DEFAULT_MEMORY: i64 = 200 * 1024 * 1024;
/// The highest score of a RequestedToCapacityRatio shape point.
pub const MAX_SHAPE_SCORE: i64 = 10;

/// A resource and its weight in a score.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WeightedResource {
    /// The resource name (`cpu`, `memory`, `example.com/gpu`).
    pub name: String,
    /// Its weight (1–100).
    pub weight: i64,
}

/// CPU and memory, weight 1 each: upstream's default scored resources.
pub fn default_scored_resources() -> Vec<WeightedResource> {
    ["cpu", "memory"]
        .into_iter()
        .map(|name| WeightedResource {
            name: name.into(),
            weight: 1,
        })
        .collect()
}

/// How NodeResourcesFit scores nodes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScoringStrategy {
    /// Prefer nodes with the most free room (spread).
    LeastAllocated,
    /// Prefer nodes with the least free room (bin packing).
    MostAllocated,
    /// A piecewise linear function of utilization: (utilization %, score 0–10) points in
    /// increasing utilization.
    RequestedToCapacityRatio(Vec<(i64, i64)>),
}

/// The NodeResourcesFit plugin.
#[derive(Debug, Clone)]
pub struct NodeResourcesFit {
    /// How nodes are scored.
    pub strategy: ScoringStrategy,
    /// The resources scored, with their weights.
    pub resources: Vec<WeightedResource>,
    /// Extended resources the filter does not check.
    pub ignored_resources: Vec<String>,
    /// Extended resource groups (the part before `/`) the filter does not check.
    pub ignored_resource_groups: Vec<String>,
}

impl Default for NodeResourcesFit {
    fn default() -> Self {
        Self {
            strategy: ScoringStrategy::LeastAllocated,
            resources: default_scored_resources(),
            ignored_resources: Vec::new(),
            ignored_resource_groups: Vec::new(),
        }
    }
}

impl NodeResourcesFit {
    fn ignored(&self, name: &str) -> bool {
        self.ignored_resources.iter().any(|r| r == name)
            || name
                .split_once('/')
                .is_some_and(|(group, _)| self.ignored_resource_groups.iter().any(|g| g == group))
    }
}

/// The pod's extended resources that device classes back: a node without them in its
/// allocatable leaves them to DynamicResources.
struct BackedByDevices(Vec<String>);

impl Filter for NodeResourcesFit {
    fn name(&self) -> &'static str {
        "NodeResourcesFit"
    }

    fn pre_filter(&self, pod: &PodInfo, cache: &Cache) -> Result<Option<StateValue>, Rejection> {
        if pod.requests.scalar.is_empty() {
            return Ok(None);
        }
        let backed = backed_resources(&pod.requests, &cache.dra_index());
        Ok((!backed.is_empty())
            .then(|| Box::new(BackedByDevices(backed.into_keys().collect())) as StateValue))
    }

    fn filter(&self, pod: &PodInfo, node: &NodeInfo) -> Result<(), Rejection> {
        let (want, used, have) = (&pod.requests, &node.requested, &node.allocatable);
        if used.pods + 1 > have.pods {
            return Err(Rejection::resolvable("Too many pods"));
        }
        let short = |name: &str, want: i64, used: i64, have: i64| {
            (want > 0 && used + want > have)
                .then(|| Rejection::resolvable(format!("Insufficient {name}")))
        };
        if let Some(r) = short("cpu", want.milli_cpu, used.milli_cpu, have.milli_cpu)
            .or_else(|| short("memory", want.memory, used.memory, have.memory))
            .or_else(|| {
                short(
                    "ephemeral-storage",
                    want.ephemeral_storage,
                    used.ephemeral_storage,
                    have.ephemeral_storage,
                )
            })
        {
            return Err(r);
        }
        let backed = pod.state.get::<BackedByDevices>();
        for (name, amount) in &want.scalar {
            if self.ignored(name) {
                continue;
            }
            let used = used.scalar.get(name).copied().unwrap_or(0);
            let have = have.scalar.get(name).copied().unwrap_or(0);
            if have == 0 && backed.is_some_and(|b| b.0.contains(name)) {
                continue;
            }
            if let Some(r) = short(name, *amount, used, have) {
                return Err(r);
            }
        }
        Ok(())
    }
}

/// (requested after placing the pod, allocatable) of resource `name`, with the scoring
/// defaults for CPU and memory of pods that request none.
fn requested_and_allocatable(pod: &PodInfo, node: &NodeInfo, name: &str) -> (i64, i64) {
    let mut want = pod.requests.get(name);
    if want == 0 {
        want = match name {
            "cpu" => DEFAULT_MILLI_CPU,
            "memory" => DEFAULT_MEMORY,
            _ => 0,
        };
    }
    (node.requested.get(name) + want, node.allocatable.get(name))
}

/// The value of the piecewise linear `shape` at `utilization`.
fn broken_linear(shape: &[(i64, i64)], utilization: i64) -> i64 {
    let Some(first) = shape.first() else {
        return 0;
    };
    if utilization <= first.0 {
        return first.1;
    }
    for pair in shape.windows(2) {
        let ((u0, s0), (u1, s1)) = (pair[0], pair[1]);
        if utilization <= u1 {
            return s0 + (s1 - s0) * (utilization - u0) / (u1 - u0);
        }
    }
    shape.last().map_or(0, |p| p.1)
}

impl Score for NodeResourcesFit {
    fn name(&self) -> &'static str {
        "NodeResourcesFit"
    }

    fn score(&self, pod: &PodInfo, node: &NodeInfo) -> i64 {
        let mut total = 0;
        let mut weights = 0;
        for r in &self.resources {
            let (requested, capacity) = requested_and_allocatable(pod, node, &r.name);
            if capacity == 0 {
                continue;
            }
            let score = match &self.strategy {
                ScoringStrategy::LeastAllocated if requested > capacity => 0,
                ScoringStrategy::LeastAllocated => {
                    (capacity - requested) * MAX_NODE_SCORE / capacity
                }
                ScoringStrategy::MostAllocated => {
                    requested.min(capacity) * MAX_NODE_SCORE / capacity
                }
                ScoringStrategy::RequestedToCapacityRatio(shape) => {
                    let utilization = if requested > capacity {
                        100
                    } else {
                        requested * 100 / capacity
                    };
                    broken_linear(shape, utilization) * (MAX_NODE_SCORE / MAX_SHAPE_SCORE)
                }
            };
            total += score * r.weight;
            weights += r.weight;
        }
        if weights == 0 {
            return 0;
        }
        match self.strategy {
            ScoringStrategy::RequestedToCapacityRatio(_) => {
                (total as f64 / weights as f64).round() as i64
            }
            _ => total / weights,
        }
    }
}

/// Prefers nodes whose resources would be used in equal shares.
#[derive(Debug, Clone)]
pub struct BalancedAllocation {
    /// The resources compared.
    pub resources: Vec<String>,
}

impl Default for BalancedAllocation {
    fn default() -> Self {
        Self {
            resources: vec!["cpu".into(), "memory".into()],
        }
    }
}

impl Score for BalancedAllocation {
    fn name(&self) -> &'static str {
        "NodeResourcesBalancedAllocation"
    }

    fn score(&self, pod: &PodInfo, node: &NodeInfo) -> i64 {
        let fractions: Vec<f64> = self
            .resources
            .iter()
            .filter_map(|name| {
                let (r, c) = requested_and_allocatable(pod, node, name);
                (c > 0).then(|| (r as f64 / c as f64).min(1.0))
            })
            .collect();
        if fractions.is_empty() {
            return MAX_NODE_SCORE;
        }
        let mean = fractions.iter().sum::<f64>() / fractions.len() as f64;
        let variance =
            fractions.iter().map(|f| (f - mean).powi(2)).sum::<f64>() / fractions.len() as f64;
        ((1.0 - variance.sqrt()) * MAX_NODE_SCORE as f64) as i64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::test_support::{cluster, feasible, node, pod, scores};
    use serde_json::json;

    fn busy_and_idle() -> crate::cache::Cache {
        // Both nodes: 4 CPUs, 8 GiB. "busy" already runs 3 CPUs / 6 GiB of requests.
        let mut heavy = pod("heavy", json!({}), json!({}));
        heavy.spec.as_mut().unwrap().containers[0].resources = Some(
            serde_json::from_value(json!({"requests": {"cpu": "3", "memory": "6Gi"}})).unwrap(),
        );
        cluster(
            vec![node("busy", json!({})), node("idle", json!({}))],
            vec![(heavy, "busy")],
        )
    }

    fn by_node(plugin: &dyn Score) -> std::collections::BTreeMap<String, i64> {
        let p = pod("p", json!({}), json!({}));
        scores(plugin, p, &busy_and_idle()).into_iter().collect()
    }

    #[test]
    fn each_strategy_ranks_the_nodes_its_way() {
        let least = by_node(&NodeResourcesFit::default());
        assert!(least["idle"] > least["busy"], "{least:?}");
        let most = by_node(&NodeResourcesFit {
            strategy: ScoringStrategy::MostAllocated,
            ..Default::default()
        });
        assert!(most["busy"] > most["idle"], "{most:?}");
        // busy after the pod: 3.1/4 CPU (77%), 6.2/8 GiB (77%): 77 with MostAllocated.
        assert_eq!(most["busy"], 77);
        // A shape that rewards utilization up to 50% and punishes it beyond.
        let shape = vec![(0, 0), (50, 10), (100, 0)];
        let ratio = by_node(&NodeResourcesFit {
            strategy: ScoringStrategy::RequestedToCapacityRatio(shape),
            ..Default::default()
        });
        // idle: 2% → 0.4 of 10 → 0 (integer steps); busy: 77% → 10 − 10×27/50 = 5 → 50.
        assert_eq!(ratio["busy"], 50);
        assert!(ratio["busy"] > ratio["idle"], "{ratio:?}");
    }

    #[test]
    fn broken_linear_interpolates_and_clamps() {
        let shape = [(10, 2), (50, 10), (90, 6)];
        assert_eq!(broken_linear(&shape, 0), 2);
        assert_eq!(broken_linear(&shape, 30), 6);
        assert_eq!(broken_linear(&shape, 70), 8);
        assert_eq!(broken_linear(&shape, 100), 6);
    }

    #[test]
    fn ignored_extended_resources_are_not_checked() {
        let cache = cluster(vec![node("n", json!({}))], vec![]);
        let mut gpu = pod("p", json!({}), json!({}));
        gpu.spec.as_mut().unwrap().containers[0].resources =
            Some(serde_json::from_value(json!({"requests": {"example.com/gpu": "1"}})).unwrap());
        assert!(
            feasible(&NodeResourcesFit::default(), gpu.clone(), &cache)
                .unwrap()
                .is_empty()
        );
        let by_group = NodeResourcesFit {
            ignored_resource_groups: vec!["example.com".into()],
            ..Default::default()
        };
        assert_eq!(feasible(&by_group, gpu.clone(), &cache).unwrap(), ["n"]);
        let by_name = NodeResourcesFit {
            ignored_resources: vec!["example.com/gpu".into()],
            ..Default::default()
        };
        assert_eq!(feasible(&by_name, gpu, &cache).unwrap(), ["n"]);
    }
}
