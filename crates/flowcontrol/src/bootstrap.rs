//! The configuration every server keeps: the mandatory `exempt` and `catch-all` objects and
//! the suggested ones, with the specs upstream's v1.33 servers create.

use k8s_openapi::api::flowcontrol::v1 as api;
use serde_json::{Value, json};

/// The annotation saying whether the server keeps an object's spec (`"true"`) or its users
/// do (`"false"`).
pub const AUTO_UPDATE_ANNOTATION: &str = "apf.kubernetes.io/autoupdate-spec";

fn annotated(mut object: Value) -> Value {
    object["metadata"]["annotations"] = json!({ AUTO_UPDATE_ANNOTATION: "true" });
    object
}

fn level(name: &str, spec: Value) -> api::PriorityLevelConfiguration {
    serde_json::from_value(annotated(json!({"metadata": {"name": name}, "spec": spec})))
        .expect("a valid PriorityLevelConfiguration")
}

fn limited(shares: i32, lendable: i32, queues: i32, hand: i32, length: i32) -> Value {
    json!({"type": "Limited", "limited": {
        "nominalConcurrencyShares": shares,
        "lendablePercent": lendable,
        "limitResponse": {"type": "Queue", "queuing": {
            "queues": queues, "handSize": hand, "queueLengthLimit": length,
        }},
    }})
}

fn everything() -> Value {
    json!({
        "resourceRules": [{
            "verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
            "clusterScope": true, "namespaces": ["*"],
        }],
        "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
    })
}

fn with_subjects(mut rule: Value, subjects: Value) -> Value {
    rule["subjects"] = subjects;
    rule
}

fn groups(names: &[&str]) -> Value {
    names
        .iter()
        .map(|n| json!({"kind": "Group", "group": {"name": n}}))
        .collect()
}

fn users(names: &[&str]) -> Vec<Value> {
    names
        .iter()
        .map(|n| json!({"kind": "User", "user": {"name": n}}))
        .collect()
}

fn kube_system_accounts(names: &[&str]) -> Vec<Value> {
    names
        .iter()
        .map(|n| {
            json!({"kind": "ServiceAccount",
                   "serviceAccount": {"namespace": "kube-system", "name": n}})
        })
        .collect()
}

fn schema(
    name: &str,
    level: &str,
    precedence: i32,
    distinguisher: Option<&str>,
    rules: Value,
) -> api::FlowSchema {
    let mut spec = json!({
        "priorityLevelConfiguration": {"name": level},
        "matchingPrecedence": precedence,
        "rules": rules,
    });
    if let Some(d) = distinguisher {
        spec["distinguisherMethod"] = json!({"type": d});
    }
    serde_json::from_value(annotated(json!({"metadata": {"name": name}, "spec": spec})))
        .expect("a valid FlowSchema")
}

fn resource_rule(verbs: &[&str], group: &str, resources: &[&str], namespaces: &[&str]) -> Value {
    json!({"verbs": verbs, "apiGroups": [group], "resources": resources,
           "namespaces": namespaces, "clusterScope": false})
}

/// `exempt` (requests run at once) and `catch-all` (5 shares, rejecting beyond them).
pub fn mandatory_priority_levels() -> Vec<api::PriorityLevelConfiguration> {
    vec![
        level(
            "exempt",
            json!({"type": "Exempt",
                   "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}}),
        ),
        level(
            "catch-all",
            json!({"type": "Limited", "limited": {
                "nominalConcurrencyShares": 5, "lendablePercent": 0,
                "limitResponse": {"type": "Reject"},
            }}),
        ),
    ]
}

/// `exempt` (system:masters) and `catch-all` (everyone, last).
pub fn mandatory_flow_schemas() -> Vec<api::FlowSchema> {
    vec![
        schema(
            "exempt",
            "exempt",
            1,
            None,
            json!([with_subjects(everything(), groups(&["system:masters"]))]),
        ),
        schema(
            "catch-all",
            "catch-all",
            10000,
            Some("ByUser"),
            json!([with_subjects(
                everything(),
                groups(&["system:unauthenticated", "system:authenticated"])
            )]),
        ),
    ]
}

/// The suggested levels: system, node-high, leader-election, workload-high, workload-low,
/// global-default.
pub fn suggested_priority_levels() -> Vec<api::PriorityLevelConfiguration> {
    vec![
        level("system", limited(30, 33, 64, 6, 50)),
        level("node-high", limited(40, 25, 64, 6, 50)),
        level("leader-election", limited(10, 0, 16, 4, 50)),
        level("workload-high", limited(40, 50, 128, 6, 50)),
        level("workload-low", limited(100, 90, 128, 6, 50)),
        level("global-default", limited(20, 50, 128, 6, 50)),
    ]
}

/// The suggested FlowSchemas, from probes (precedence 2) to global-default (9900).
pub fn suggested_flow_schemas() -> Vec<api::FlowSchema> {
    let everyone = groups(&["system:unauthenticated", "system:authenticated"]);
    let lease_verbs = ["get", "create", "update"];
    let leases = resource_rule(&lease_verbs, "coordination.k8s.io", &["leases"], &["*"]);
    let all_kube_system = Value::Array(kube_system_accounts(&["*"]));
    let mut leader_subjects = users(&["system:kube-controller-manager", "system:kube-scheduler"]);
    leader_subjects.extend(kube_system_accounts(&["*"]));
    let mut endpoint_subjects = users(&["system:kube-controller-manager"]);
    endpoint_subjects.extend(kube_system_accounts(&[
        "endpoint-controller",
        "endpointslicemirroring-controller",
    ]));
    vec![
        schema(
            "probes",
            "exempt",
            2,
            None,
            json!([{
                "subjects": everyone.clone(),
                "nonResourceRules": [{"verbs": ["get"],
                                      "nonResourceURLs": ["/healthz", "/readyz", "/livez"]}],
            }]),
        ),
        schema(
            "system-leader-election",
            "leader-election",
            100,
            Some("ByUser"),
            json!([{"subjects": leader_subjects, "resourceRules": [leases.clone()]}]),
        ),
        schema(
            "endpoint-controller",
            "workload-high",
            150,
            Some("ByUser"),
            json!([{"subjects": endpoint_subjects,
                    "resourceRules": [resource_rule(&lease_verbs, "", &["endpoints"], &["*"])]}]),
        ),
        schema(
            "workload-leader-election",
            "leader-election",
            200,
            Some("ByUser"),
            json!([{"subjects": all_kube_system.clone(), "resourceRules": [
                resource_rule(&lease_verbs, "", &["endpoints", "configmaps"], &["*"]),
                leases,
            ]}]),
        ),
        schema(
            "system-node-high",
            "node-high",
            400,
            Some("ByUser"),
            json!([{"subjects": groups(&["system:nodes"]), "resourceRules": [
                {"verbs": ["*"], "apiGroups": [""], "resources": ["nodes", "nodes/status"],
                 "namespaces": ["*"], "clusterScope": true},
                resource_rule(&["*"], "coordination.k8s.io", &["leases"], &["*"]),
            ]}]),
        ),
        schema(
            "system-nodes",
            "system",
            500,
            Some("ByUser"),
            json!([with_subjects(everything(), groups(&["system:nodes"]))]),
        ),
        schema(
            "kube-controller-manager",
            "workload-high",
            800,
            Some("ByNamespace"),
            json!([with_subjects(
                everything(),
                Value::Array(users(&["system:kube-controller-manager"]))
            )]),
        ),
        schema(
            "kube-scheduler",
            "workload-high",
            800,
            Some("ByNamespace"),
            json!([with_subjects(
                everything(),
                Value::Array(users(&["system:kube-scheduler"]))
            )]),
        ),
        schema(
            "kube-system-service-accounts",
            "workload-high",
            900,
            Some("ByNamespace"),
            json!([with_subjects(everything(), all_kube_system)]),
        ),
        schema(
            "service-accounts",
            "workload-low",
            9000,
            Some("ByUser"),
            json!([with_subjects(
                everything(),
                groups(&["system:serviceaccounts"])
            )]),
        ),
        schema(
            "global-default",
            "global-default",
            9900,
            Some("ByUser"),
            json!([with_subjects(everything(), everyone)]),
        ),
    ]
}

/// Whether the server keeps the spec of an object carrying `annotations` (the annotation
/// says `"true"`); without the annotation its users do (upstream also consults
/// `metadata.generation`, which Capstan does not keep).
pub fn server_keeps_spec(annotations: Option<&std::collections::BTreeMap<String, String>>) -> bool {
    annotations
        .and_then(|a| a.get(AUTO_UPDATE_ANNOTATION))
        .is_some_and(|v| v.eq_ignore_ascii_case("true"))
}
