//! What an object uses of a ResourceQuota, and whether a quota's scopes cover it: shared by
//! the `ResourceQuota` plugin (which charges new objects) and the quota controller (which
//! adds up what a namespace holds).

use std::collections::BTreeMap;

use capstan_meta::quantity::{self, Milli};
use serde_json::Value;

/// Resource names and amounts (`pods`, `requests.cpu`, `count/configmaps`).
pub type Usage = BTreeMap<String, Milli>;

/// The names under which an object of `resource` in `group` is counted: `count/<resource>`
/// (with `.<group>` outside the core group) and, for the core kinds that had one, the
/// legacy name (`pods`, `configmaps`, ...).
fn count_names(group: &str, resource: &str) -> Vec<String> {
    let mut names = vec![if group.is_empty() {
        format!("count/{resource}")
    } else {
        format!("count/{resource}.{group}")
    }];
    if group.is_empty()
        && matches!(
            resource,
            "pods"
                | "services"
                | "configmaps"
                | "secrets"
                | "persistentvolumeclaims"
                | "replicationcontrollers"
                | "resourcequotas"
        )
    {
        names.push(resource.to_string());
    }
    names
}

fn amounts(v: &Value) -> BTreeMap<&str, Milli> {
    v.as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, q)| Some((k.as_str(), quantity::parse(q.as_str()?)?)))
        .collect()
}

/// A pod's requests or limits: the containers' sum, at least any init container's, plus
/// the overhead.
fn pod_amounts(spec: &Value, field: &str) -> BTreeMap<String, Milli> {
    let mut sum: BTreeMap<String, Milli> = BTreeMap::new();
    for c in spec["containers"].as_array().into_iter().flatten() {
        for (k, v) in amounts(&c["resources"][field]) {
            sum.entry(k.to_string()).or_insert(Milli(0)).0 += v.0;
        }
    }
    for c in spec["initContainers"].as_array().into_iter().flatten() {
        for (k, v) in amounts(&c["resources"][field]) {
            let e = sum.entry(k.to_string()).or_insert(Milli(0));
            *e = (*e).max(v);
        }
    }
    for (k, v) in amounts(&spec["overhead"]) {
        sum.entry(k.to_string()).or_insert(Milli(0)).0 += v.0;
    }
    sum
}

/// Whether a pod has finished (it no longer counts).
pub fn pod_terminal(pod: &Value) -> bool {
    matches!(
        pod["status"]["phase"].as_str(),
        Some("Succeeded" | "Failed")
    )
}

/// What `object` of `resource` in `group` uses: one of its count, and for pods and claims
/// their compute and storage amounts.
pub fn usage(group: &str, resource: &str, object: &Value) -> Usage {
    let mut used = Usage::new();
    if group.is_empty() && resource == "pods" && pod_terminal(object) {
        return used;
    }
    for name in count_names(group, resource) {
        used.insert(name, Milli(1000));
    }
    if group.is_empty() && resource == "pods" {
        let spec = &object["spec"];
        for (field, prefix) in [("requests", "requests."), ("limits", "limits.")] {
            for (k, v) in pod_amounts(spec, field) {
                if field == "requests"
                    && matches!(k.as_str(), "cpu" | "memory" | "ephemeral-storage")
                {
                    used.insert(k.clone(), v);
                }
                used.insert(format!("{prefix}{k}"), v);
            }
        }
    }
    if group.is_empty() && resource == "services" {
        // Node ports count by intent (they are not allocated when quota judges): every port
        // of a NodePort or LoadBalancer Service, or for a LoadBalancer that allocates none,
        // the ports that name one.
        let ports = object["spec"]["ports"].as_array().map_or(0, Vec::len) as i128;
        let named = object["spec"]["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|p| p["nodePort"].as_i64().unwrap_or(0) != 0)
            .count() as i128;
        let (node_ports, balancers) = match object["spec"]["type"].as_str() {
            Some("NodePort") => (ports, 0),
            Some("LoadBalancer")
                if object["spec"]["allocateLoadBalancerNodePorts"] == Value::Bool(false) =>
            {
                (named, 1)
            }
            Some("LoadBalancer") => (ports, 1),
            _ => (0, 0),
        };
        used.insert("services.nodeports".into(), Milli(node_ports * 1000));
        used.insert("services.loadbalancers".into(), Milli(balancers * 1000));
    }
    if group.is_empty() && resource == "persistentvolumeclaims" {
        if let Some(storage) = amounts(&object["spec"]["resources"]["requests"]).get("storage") {
            used.insert("requests.storage".into(), *storage);
            if let Some(class) = object["spec"]["storageClassName"].as_str() {
                used.insert(
                    format!("{class}.storageclass.storage.k8s.io/requests.storage"),
                    *storage,
                );
            }
        }
        if let Some(class) = object["spec"]["storageClassName"].as_str() {
            used.insert(
                format!("{class}.storageclass.storage.k8s.io/persistentvolumeclaims"),
                Milli(1000),
            );
        }
    }
    used
}

/// The compute resources a pod must state when a quota limits them.
pub const COMPUTE: [&str; 6] = [
    "cpu",
    "memory",
    "requests.cpu",
    "requests.memory",
    "limits.cpu",
    "limits.memory",
];

/// Whether a quota with `scopes` (and a `scopeSelector`'s expressions) covers `pod`; other
/// objects are covered only by quotas without scopes.
pub fn covers(quota: &Value, resource: &str, object: &Value) -> bool {
    let spec = &quota["spec"];
    let scopes: Vec<&str> = spec["scopes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let expressions: Vec<&Value> = spec["scopeSelector"]["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
        .collect();
    if scopes.is_empty() && expressions.is_empty() {
        return true;
    }
    if resource != "pods" {
        return false;
    }
    let pod_spec = &object["spec"];
    let best_effort = object["status"]["qosClass"] == "BestEffort";
    let terminating = pod_spec["activeDeadlineSeconds"]
        .as_i64()
        .is_some_and(|s| s >= 0);
    let priority_class = pod_spec["priorityClassName"].as_str().unwrap_or_default();
    let holds = |scope: &str| match scope {
        "BestEffort" => best_effort,
        "NotBestEffort" => !best_effort,
        "Terminating" => terminating,
        "NotTerminating" => !terminating,
        "PriorityClass" => !priority_class.is_empty(),
        "CrossNamespacePodAffinity" => false,
        _ => false,
    };
    if !scopes.iter().all(|s| holds(s)) {
        return false;
    }
    expressions.iter().all(|e| {
        let scope = e["scopeName"].as_str().unwrap_or_default();
        let values: Vec<&str> = e["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        match (scope, e["operator"].as_str().unwrap_or_default()) {
            ("PriorityClass", "In") => values.contains(&priority_class),
            ("PriorityClass", "NotIn") => !values.contains(&priority_class),
            ("PriorityClass", "Exists") => !priority_class.is_empty(),
            ("PriorityClass", "DoesNotExist") => priority_class.is_empty(),
            (scope, "Exists") => holds(scope),
            (scope, "DoesNotExist") => !holds(scope),
            _ => false,
        }
    })
}

/// A quantity in a plain form for messages (`500m`, `2`).
pub fn show(m: Milli) -> String {
    if m.0 % 1000 == 0 {
        (m.0 / 1000).to_string()
    } else {
        format!("{}m", m.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn services_use_node_ports_by_intent_and_load_balancers() {
        let ports = json!([{"port": 80}, {"port": 443, "nodePort": 30443}]);
        let of = |spec: Value| usage("", "services", &json!({"spec": spec}));
        let plain = of(json!({"type": "ClusterIP", "ports": ports}));
        assert_eq!(plain["services"], Milli(1000));
        assert_eq!(plain["services.nodeports"], Milli(0));
        let node = of(json!({"type": "NodePort", "ports": ports}));
        assert_eq!(node["services.nodeports"], Milli(2000));
        assert_eq!(node["services.loadbalancers"], Milli(0));
        let lb = of(json!({"type": "LoadBalancer", "ports": ports}));
        assert_eq!(
            (lb["services.nodeports"], lb["services.loadbalancers"]),
            (Milli(2000), Milli(1000))
        );
        let lb = of(
            json!({"type": "LoadBalancer", "ports": ports, "allocateLoadBalancerNodePorts": false}),
        );
        assert_eq!(lb["services.nodeports"], Milli(1000));
    }

    #[test]
    fn pods_use_their_count_and_compute() {
        let pod = json!({"spec": {"containers": [
            {"name": "a", "resources": {"requests": {"cpu": "250m", "memory": "64Mi"}, "limits": {"cpu": "500m"}}},
            {"name": "b", "resources": {"requests": {"cpu": "250m"}}},
        ]}});
        let u = usage("", "pods", &pod);
        assert_eq!(u["pods"], Milli(1000));
        assert_eq!(u["count/pods"], Milli(1000));
        assert_eq!(u["requests.cpu"], Milli(500));
        assert_eq!(u["cpu"], Milli(500));
        assert_eq!(u["limits.cpu"], Milli(500));
        assert_eq!(u["requests.memory"], Milli(64 * 1024 * 1024 * 1000));
        let mut done = pod.clone();
        done["status"] = json!({"phase": "Succeeded"});
        assert!(usage("", "pods", &done).is_empty());
        assert_eq!(
            usage("apps", "deployments", &json!({}))["count/deployments.apps"],
            Milli(1000)
        );
    }

    #[test]
    fn scopes_pick_pods() {
        let quota = |spec: Value| json!({"spec": spec});
        let best = json!({"spec": {}, "status": {"qosClass": "BestEffort"}});
        let burst = json!({"spec": {"priorityClassName": "high", "activeDeadlineSeconds": 10}, "status": {"qosClass": "Burstable"}});
        assert!(covers(
            &quota(json!({"scopes": ["BestEffort"]})),
            "pods",
            &best
        ));
        assert!(!covers(
            &quota(json!({"scopes": ["BestEffort"]})),
            "pods",
            &burst
        ));
        assert!(covers(
            &quota(json!({"scopes": ["Terminating", "NotBestEffort"]})),
            "pods",
            &burst
        ));
        let high = quota(
            json!({"scopeSelector": {"matchExpressions": [{"scopeName": "PriorityClass", "operator": "In", "values": ["high"]}]}}),
        );
        assert!(covers(&high, "pods", &burst));
        assert!(!covers(&high, "pods", &best));
        assert!(!covers(&high, "configmaps", &json!({})));
        assert!(covers(
            &quota(json!({"hard": {"pods": "1"}})),
            "configmaps",
            &json!({})
        ));
    }
}
