//! What pods request and nodes offer: CPU in millicores, memory and ephemeral storage in
//! bytes, the pod count, and extended resources by name.

use std::collections::BTreeMap;

use capstan_meta::quantity;
use k8s_openapi::api::core::v1::{Container, Node, Pod};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

/// Amounts of resources.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resources {
    /// CPU in millicores.
    pub milli_cpu: i64,
    /// Memory in bytes.
    pub memory: i64,
    /// Ephemeral storage in bytes.
    pub ephemeral_storage: i64,
    /// Pods.
    pub pods: i64,
    /// Extended resources (`example.com/gpu`), in units.
    pub scalar: BTreeMap<String, i64>,
}

fn amount(name: &str, q: &Quantity) -> i64 {
    let Some(milli) = quantity::parse(&q.0) else {
        return 0;
    };
    let value = if name == "cpu" {
        milli.0
    } else {
        milli.units_ceil()
    };
    i64::try_from(value).unwrap_or(i64::MAX)
}

impl Resources {
    /// The amount of the resource called `name` (`cpu` in millicores).
    pub fn get(&self, name: &str) -> i64 {
        match name {
            "cpu" => self.milli_cpu,
            "memory" => self.memory,
            "ephemeral-storage" => self.ephemeral_storage,
            "pods" => self.pods,
            other => self.scalar.get(other).copied().unwrap_or(0),
        }
    }

    /// Reads a resource list (`requests`, `allocatable`).
    pub fn from_list(list: Option<&BTreeMap<String, Quantity>>) -> Self {
        let mut out = Resources::default();
        for (name, q) in list.into_iter().flatten() {
            out.set(name, amount(name, q));
        }
        out
    }

    fn set(&mut self, name: &str, value: i64) {
        match name {
            "cpu" => self.milli_cpu = value,
            "memory" => self.memory = value,
            "ephemeral-storage" => self.ephemeral_storage = value,
            "pods" => self.pods = value,
            // Hugepages and extended resources: counted by name.
            other => {
                self.scalar.insert(other.to_string(), value);
            }
        }
    }

    /// Adds `other`.
    pub fn add(&mut self, other: &Resources) {
        self.milli_cpu += other.milli_cpu;
        self.memory += other.memory;
        self.ephemeral_storage += other.ephemeral_storage;
        self.pods += other.pods;
        for (k, v) in &other.scalar {
            *self.scalar.entry(k.clone()).or_default() += v;
        }
    }

    /// Subtracts `other`.
    pub fn sub(&mut self, other: &Resources) {
        self.milli_cpu -= other.milli_cpu;
        self.memory -= other.memory;
        self.ephemeral_storage -= other.ephemeral_storage;
        self.pods -= other.pods;
        for (k, v) in &other.scalar {
            *self.scalar.entry(k.clone()).or_default() -= v;
        }
    }

    fn max_with(&mut self, other: &Resources) {
        self.milli_cpu = self.milli_cpu.max(other.milli_cpu);
        self.memory = self.memory.max(other.memory);
        self.ephemeral_storage = self.ephemeral_storage.max(other.ephemeral_storage);
        for (k, v) in &other.scalar {
            let e = self.scalar.entry(k.clone()).or_default();
            *e = (*e).max(*v);
        }
    }
}

fn requests(c: &Container) -> Resources {
    Resources::from_list(c.resources.as_ref().and_then(|r| r.requests.as_ref()))
}

/// What a pod asks of its node, as upstream computes it: the sum of its containers' requests,
/// at least each init container's (sidecars, `restartPolicy: Always`, add to both), plus the
/// pod overhead; one pod.
pub fn pod_requests(pod: &Pod) -> Resources {
    let mut total = Resources::default();
    let Some(spec) = &pod.spec else {
        return total;
    };
    for c in &spec.containers {
        total.add(&requests(c));
    }
    let mut sidecars = Resources::default();
    for c in spec.init_containers.iter().flatten() {
        let r = requests(c);
        if c.restart_policy.as_deref() == Some("Always") {
            sidecars.add(&r);
            total.add(&r);
        } else {
            let mut with_sidecars = r;
            with_sidecars.add(&sidecars);
            total.max_with(&with_sidecars);
        }
    }
    total.add(&Resources::from_list(spec.overhead.as_ref()));
    total.pods = 1;
    total
}

/// What a node offers pods (`status.allocatable`, else `status.capacity`).
pub fn node_allocatable(node: &Node) -> Resources {
    let status = node.status.as_ref();
    Resources::from_list(
        status
            .and_then(|s| s.allocatable.as_ref())
            .or_else(|| status.and_then(|s| s.capacity.as_ref())),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_sum_containers_and_take_the_largest_init_container() {
        let pod: Pod = serde_json::from_value(serde_json::json!({"spec": {
            "initContainers": [{"name": "i", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}}],
            "containers": [
                {"name": "a", "resources": {"requests": {"cpu": "500m", "memory": "100Mi", "example.com/gpu": "1"}}},
                {"name": "b", "resources": {"requests": {"cpu": "250m"}}}],
            "overhead": {"cpu": "10m"}}}))
        .unwrap();
        let r = pod_requests(&pod);
        assert_eq!(r.milli_cpu, 2010);
        assert_eq!(r.memory, 1 << 30);
        assert_eq!(r.scalar["example.com/gpu"], 1);
        assert_eq!(r.pods, 1);
    }
}
