//! NodeResourcesFit (filter on requests against allocatable; LeastAllocated score) and
//! NodeResourcesBalancedAllocation.

use crate::cache::NodeInfo;
use crate::framework::{Filter, MAX_NODE_SCORE, PodInfo, Rejection, Score};

/// CPU assumed for scoring a container that requests none (upstream's value).
const DEFAULT_MILLI_CPU: i64 = 100;
/// Memory assumed for scoring a container that requests none (upstream's value).
const DEFAULT_MEMORY: i64 = 200 * 1024 * 1024;

/// The NodeResourcesFit plugin.
pub struct NodeResourcesFit;

impl Filter for NodeResourcesFit {
    fn name(&self) -> &'static str {
        "NodeResourcesFit"
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
        for (name, amount) in &want.scalar {
            let used = used.scalar.get(name).copied().unwrap_or(0);
            let have = have.scalar.get(name).copied().unwrap_or(0);
            if let Some(r) = short(name, *amount, used, have) {
                return Err(r);
            }
        }
        Ok(())
    }
}

/// (requested after placing the pod, allocatable) for CPU and memory, with the scoring
/// defaults for pods that request nothing.
fn cpu_memory(pod: &PodInfo, node: &NodeInfo) -> [(i64, i64); 2] {
    let cpu = if pod.requests.milli_cpu == 0 {
        DEFAULT_MILLI_CPU
    } else {
        pod.requests.milli_cpu
    };
    let memory = if pod.requests.memory == 0 {
        DEFAULT_MEMORY
    } else {
        pod.requests.memory
    };
    [
        (node.requested.milli_cpu + cpu, node.allocatable.milli_cpu),
        (node.requested.memory + memory, node.allocatable.memory),
    ]
}

impl Score for NodeResourcesFit {
    fn name(&self) -> &'static str {
        "NodeResourcesFit"
    }

    /// LeastAllocated: the free share of CPU and memory after placing the pod, averaged.
    fn score(&self, pod: &PodInfo, node: &NodeInfo) -> i64 {
        let parts = cpu_memory(pod, node);
        let sum: i64 = parts
            .iter()
            .map(|(requested, capacity)| {
                if *capacity == 0 || requested > capacity {
                    0
                } else {
                    (capacity - requested) * MAX_NODE_SCORE / capacity
                }
            })
            .sum();
        sum / parts.len() as i64
    }
}

/// Prefers nodes whose CPU and memory would be used in equal shares.
pub struct BalancedAllocation;

impl Score for BalancedAllocation {
    fn name(&self) -> &'static str {
        "NodeResourcesBalancedAllocation"
    }

    fn score(&self, pod: &PodInfo, node: &NodeInfo) -> i64 {
        let fractions: Vec<f64> = cpu_memory(pod, node)
            .iter()
            .map(|(r, c)| {
                if *c == 0 {
                    1.0
                } else {
                    (*r as f64 / *c as f64).min(1.0)
                }
            })
            .collect();
        let mean = fractions.iter().sum::<f64>() / fractions.len() as f64;
        let variance =
            fractions.iter().map(|f| (f - mean).powi(2)).sum::<f64>() / fractions.len() as f64;
        ((1.0 - variance.sqrt()) * MAX_NODE_SCORE as f64) as i64
    }
}
