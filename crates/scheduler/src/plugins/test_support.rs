//! Small builders for the plugins' table-driven tests.

use k8s_openapi::api::core::v1::{Node, Pod};
use serde_json::{Value, json};

use crate::cache::{Cache, NodeInfo};
use crate::framework::{Filter, PodInfo, Score};

/// A node with `labels` and room for 110 pods.
pub fn node(name: &str, labels: Value) -> Node {
    serde_json::from_value(json!({
        "metadata": {"name": name, "labels": labels},
        "status": {"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}
    }))
    .unwrap()
}

/// A pod in `default` with `labels` and `spec` (containers added).
pub fn pod(name: &str, labels: Value, mut spec: Value) -> Pod {
    spec["containers"] = json!([{"name": "c", "image": "app"}]);
    serde_json::from_value(json!({
        "metadata": {"name": name, "namespace": "default", "labels": labels},
        "spec": spec
    }))
    .unwrap()
}

/// A cache with `nodes`, and `pods` bound to the named nodes.
pub fn cluster(nodes: Vec<Node>, pods: Vec<(Pod, &str)>) -> Cache {
    let mut cache = Cache::default();
    nodes.into_iter().for_each(|n| cache.set_node(n));
    for (mut p, node) in pods {
        p.spec.as_mut().unwrap().node_name = Some(node.into());
        cache.set_pod(p);
    }
    cache
}

/// The names of the nodes `plugin` lets `pod` onto, or the rejection of every node by its
/// PreFilter.
pub fn feasible(plugin: &dyn Filter, pod: Pod, cache: &Cache) -> Result<Vec<String>, String> {
    let mut info = PodInfo::new(pod);
    match plugin.pre_filter(&info, cache) {
        Ok(Some(v)) => info.state.insert(v),
        Ok(None) => {}
        Err(r) => return Err(r.reason.into_owned()),
    }
    Ok(cache
        .nodes()
        .filter(|n| plugin.filter(&info, n).is_ok())
        .map(|n| n.name().to_string())
        .collect())
}

/// The reason `plugin` gives for keeping `pod` off `node`.
pub fn rejection(plugin: &dyn Filter, pod: Pod, cache: &Cache, node: &str) -> Option<String> {
    let mut info = PodInfo::new(pod);
    if let Some(v) = plugin.pre_filter(&info, cache).unwrap() {
        info.state.insert(v);
    }
    let node = cache.nodes().find(|n| n.name() == node).unwrap();
    plugin
        .filter(&info, node)
        .err()
        .map(|r| r.reason.into_owned())
}

/// Normalized scores of every node for `pod`, by node name.
pub fn scores(plugin: &dyn Score, pod: Pod, cache: &Cache) -> Vec<(String, i64)> {
    let mut info = PodInfo::new(pod);
    let nodes: Vec<&NodeInfo> = cache.nodes().collect();
    if let Some(v) = plugin.pre_score(&info, cache, &nodes) {
        info.state.insert(v);
    }
    let mut s: Vec<i64> = nodes.iter().map(|n| plugin.score(&info, n)).collect();
    plugin.normalize(&info, &nodes, &mut s);
    nodes.iter().map(|n| n.name().to_string()).zip(s).collect()
}
