//! Upstream's default RBAC policy, reconciled at every start (post-start hook
//! `rbac/bootstrap-roles`): a missing role or binding is created; an existing one whose
//! `rbac.authorization.kubernetes.io/autoupdate` annotation is not `"false"` gets the rules
//! or subjects it lacks (extras are kept, as upstream's reconciliation keeps them).
//!
//! The policy: the user-facing `admin`, `edit` and `view` with the roles they aggregate,
//! the discovery and self-review roles, the components' roles (nodes, the scheduler, the
//! controller manager, proxies, DNS, monitoring, certificate approvers), every controller's
//! `system:controller:*` role bound to its service account, and the roles and bindings in
//! kube-system and kube-public (leader locking, the authentication ConfigMap's reader,
//! bootstrap tokens).

use std::collections::HashMap;

use bytes::Bytes;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::options::{ListOptions, WriteOptions};
use crate::payload::Payload;
use crate::registry::Registry;

const AUTOUPDATE: &str = "rbac.authorization.kubernetes.io/autoupdate";

fn meta(name: &str) -> Value {
    json!({
        "name": name,
        "annotations": {AUTOUPDATE: "true"},
        "labels": {"kubernetes.io/bootstrapping": "rbac-defaults"},
    })
}

fn cluster_role(name: &str, rules: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": meta(name), "rules": rules})
}

const AGGREGATE_TO: &str = "rbac.authorization.k8s.io/aggregate-to-";

/// A role whose rules are those of the roles labelled `aggregate-to-<to>`; itself labelled
/// to be aggregated into `into`, if given.
fn aggregated_role(name: &str, to: &str, into: Option<&str>) -> Value {
    let mut role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": meta(name),
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {format!("{AGGREGATE_TO}{to}"): "true"}}]}});
    if let Some(into) = into {
        role["metadata"]["labels"][format!("{AGGREGATE_TO}{into}")] = "true".into();
    }
    role
}

/// A role aggregated into `into`.
fn aggregating_role(name: &str, into: &str, rules: Value) -> Value {
    let mut role = cluster_role(name, rules);
    role["metadata"]["labels"][format!("{AGGREGATE_TO}{into}")] = "true".into();
    role
}

/// `rules` with one verb list for several groups' resources.
fn rule(groups: &[&str], resources: &[&str], verbs: &[&str]) -> Value {
    json!({"apiGroups": groups, "resources": resources, "verbs": verbs})
}

const READ: &[&str] = &["get", "list", "watch"];
const WRITE: &[&str] = &["create", "delete", "deletecollection", "patch", "update"];
const ALL: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// The user-facing roles: `admin`, `edit` and `view` aggregate the `system:aggregate-to-*`
/// roles (and anything else labelled for them).
fn user_facing_roles() -> Vec<Value> {
    vec![
        aggregated_role("admin", "admin", None),
        aggregated_role("edit", "edit", Some("admin")),
        aggregated_role("view", "view", Some("edit")),
        aggregating_role(
            "system:aggregate-to-admin",
            "admin",
            json!([
                rule(
                    &["authorization.k8s.io"],
                    &["localsubjectaccessreviews"],
                    &["create"]
                ),
                rule(
                    &["rbac.authorization.k8s.io"],
                    &["rolebindings", "roles"],
                    ALL
                ),
            ]),
        ),
        aggregating_role(
            "system:aggregate-to-edit",
            "edit",
            json!([
                rule(
                    &[""],
                    &[
                        "pods/attach",
                        "pods/exec",
                        "pods/portforward",
                        "pods/proxy",
                        "secrets",
                        "services/proxy"
                    ],
                    READ
                ),
                rule(&[""], &["serviceaccounts"], &["impersonate"]),
                rule(
                    &[""],
                    &[
                        "pods",
                        "pods/attach",
                        "pods/exec",
                        "pods/portforward",
                        "pods/proxy"
                    ],
                    WRITE
                ),
                rule(&[""], &["pods/eviction"], &["create"]),
                rule(&["", "events.k8s.io"], &["events"], WRITE),
                rule(
                    &[""],
                    &[
                        "configmaps",
                        "persistentvolumeclaims",
                        "replicationcontrollers",
                        "replicationcontrollers/scale",
                        "secrets",
                        "serviceaccounts",
                        "services",
                        "services/proxy"
                    ],
                    WRITE
                ),
                rule(&[""], &["serviceaccounts/token"], &["create"]),
                rule(
                    &["apps"],
                    &[
                        "daemonsets",
                        "deployments",
                        "deployments/rollback",
                        "deployments/scale",
                        "replicasets",
                        "replicasets/scale",
                        "statefulsets",
                        "statefulsets/scale"
                    ],
                    WRITE
                ),
                rule(&["autoscaling"], &["horizontalpodautoscalers"], WRITE),
                rule(&["batch"], &["cronjobs", "jobs"], WRITE),
                rule(
                    &["extensions"],
                    &[
                        "daemonsets",
                        "deployments",
                        "deployments/rollback",
                        "deployments/scale",
                        "ingresses",
                        "networkpolicies",
                        "replicasets",
                        "replicasets/scale",
                        "replicationcontrollers/scale"
                    ],
                    WRITE
                ),
                rule(&["policy"], &["poddisruptionbudgets"], WRITE),
                rule(
                    &["networking.k8s.io"],
                    &["ingresses", "networkpolicies"],
                    WRITE
                ),
                rule(&["coordination.k8s.io"], &["leases"], ALL),
                rule(
                    &["resource.k8s.io"],
                    &["resourceclaims", "resourceclaimtemplates"],
                    WRITE
                ),
            ]),
        ),
        aggregating_role(
            "system:aggregate-to-view",
            "view",
            json!([
                rule(
                    &[""],
                    &[
                        "configmaps",
                        "endpoints",
                        "persistentvolumeclaims",
                        "persistentvolumeclaims/status",
                        "pods",
                        "replicationcontrollers",
                        "replicationcontrollers/scale",
                        "serviceaccounts",
                        "services",
                        "services/status"
                    ],
                    READ
                ),
                rule(&["", "events.k8s.io"], &["events"], READ),
                rule(
                    &[""],
                    &[
                        "bindings",
                        "limitranges",
                        "namespaces/status",
                        "pods/log",
                        "pods/status",
                        "replicationcontrollers/status",
                        "resourcequotas",
                        "resourcequotas/status"
                    ],
                    READ
                ),
                rule(&[""], &["namespaces"], READ),
                rule(&["discovery.k8s.io"], &["endpointslices"], READ),
                rule(
                    &["apps"],
                    &[
                        "controllerrevisions",
                        "daemonsets",
                        "daemonsets/status",
                        "deployments",
                        "deployments/scale",
                        "deployments/status",
                        "replicasets",
                        "replicasets/scale",
                        "replicasets/status",
                        "statefulsets",
                        "statefulsets/scale",
                        "statefulsets/status"
                    ],
                    READ
                ),
                rule(
                    &["autoscaling"],
                    &[
                        "horizontalpodautoscalers",
                        "horizontalpodautoscalers/status"
                    ],
                    READ
                ),
                rule(
                    &["batch"],
                    &["cronjobs", "cronjobs/status", "jobs", "jobs/status"],
                    READ
                ),
                rule(
                    &["extensions"],
                    &[
                        "daemonsets",
                        "daemonsets/status",
                        "deployments",
                        "deployments/scale",
                        "deployments/status",
                        "ingresses",
                        "ingresses/status",
                        "networkpolicies",
                        "replicasets",
                        "replicasets/scale",
                        "replicasets/status",
                        "replicationcontrollers/scale"
                    ],
                    READ
                ),
                rule(
                    &["policy"],
                    &["poddisruptionbudgets", "poddisruptionbudgets/status"],
                    READ
                ),
                rule(
                    &["networking.k8s.io"],
                    &["ingresses", "ingresses/status", "networkpolicies"],
                    READ
                ),
                rule(
                    &["resource.k8s.io"],
                    &[
                        "resourceclaims",
                        "resourceclaims/status",
                        "resourceclaimtemplates"
                    ],
                    READ
                ),
            ]),
        ),
    ]
}

fn groups(names: &[&str]) -> Value {
    Value::Array(
        names
            .iter()
            .map(|g| json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": g}))
            .collect(),
    )
}

fn users(names: &[&str]) -> Value {
    Value::Array(
        names
            .iter()
            .map(|u| json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": u}))
            .collect(),
    )
}

fn cluster_role_binding(name: &str, role: &str, subjects: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": meta(name),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": subjects})
}

const EVENTS_WRITE: &[&str] = &["create", "patch", "update"];

/// The node rules as a role's rules.
fn node_rules() -> Value {
    Value::Array(
        capstan_auth::authz::node::node_rules()
            .into_iter()
            .map(|r| json!({"apiGroups": r.api_groups, "resources": r.resources, "verbs": r.verbs}))
            .collect(),
    )
}

/// `approve` on one signer.
fn approver(name: &str, signer: &str) -> Value {
    cluster_role(
        name,
        json!([{"apiGroups": ["certificates.k8s.io"], "resources": ["signers"],
            "resourceNames": [signer], "verbs": ["approve"]}]),
    )
}

/// The roles of cluster components (nodes, the scheduler, the controller manager, proxies,
/// DNS, monitoring, certificate approvers).
fn component_roles() -> Vec<Value> {
    vec![
        cluster_role(
            "system:certificates.k8s.io:certificatesigningrequests:nodeclient",
            json!([rule(
                &["certificates.k8s.io"],
                &["certificatesigningrequests/nodeclient"],
                &["create"]
            )]),
        ),
        cluster_role(
            "system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
            json!([rule(
                &["certificates.k8s.io"],
                &["certificatesigningrequests/selfnodeclient"],
                &["create"]
            )]),
        ),
        approver(
            "system:certificates.k8s.io:kube-apiserver-client-approver",
            "kubernetes.io/kube-apiserver-client",
        ),
        approver(
            "system:certificates.k8s.io:kube-apiserver-client-kubelet-approver",
            "kubernetes.io/kube-apiserver-client-kubelet",
        ),
        approver(
            "system:certificates.k8s.io:kubelet-serving-approver",
            "kubernetes.io/kubelet-serving",
        ),
        approver(
            "system:certificates.k8s.io:legacy-unknown-approver",
            "kubernetes.io/legacy-unknown",
        ),
        cluster_role(
            "system:heapster",
            json!([
                rule(&[""], &["events", "namespaces", "nodes", "pods"], READ),
                rule(&["extensions"], &["deployments"], READ),
            ]),
        ),
        cluster_role(
            "system:kube-aggregator",
            json!([rule(&[""], &["endpoints", "services"], READ)]),
        ),
        cluster_role(
            "system:kube-controller-manager",
            json!([
                rule(&["", "events.k8s.io"], &["events"], EVENTS_WRITE),
                rule(&["coordination.k8s.io"], &["leases"], &["create"]),
                {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                 "resourceNames": ["kube-controller-manager"], "verbs": ["get", "update"]},
                rule(&[""], &["secrets", "serviceaccounts"], &["create"]),
                rule(&[""], &["secrets"], &["delete"]),
                rule(&[""], &["configmaps", "namespaces", "secrets", "serviceaccounts"], &["get"]),
                rule(&[""], &["secrets", "serviceaccounts"], &["update"]),
                rule(&["authentication.k8s.io"], &["tokenreviews"], &["create"]),
                rule(&["authorization.k8s.io"], &["subjectaccessreviews"], &["create"]),
                rule(&["*"], &["*"], &["list", "watch"]),
                rule(&[""], &["serviceaccounts/token"], &["create"]),
            ]),
        ),
        cluster_role(
            "system:kube-dns",
            json!([rule(&[""], &["endpoints", "services"], &["list", "watch"])]),
        ),
        cluster_role(
            "system:kube-scheduler",
            json!([
                rule(&["", "events.k8s.io"], &["events"], EVENTS_WRITE),
                rule(&["coordination.k8s.io"], &["leases"], &["create"]),
                {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                 "resourceNames": ["kube-scheduler"], "verbs": ["get", "list", "update", "watch"]},
                rule(&[""], &["nodes"], READ),
                rule(&[""], &["pods"], &["delete", "get", "list", "watch"]),
                rule(&[""], &["bindings", "pods/binding"], &["create"]),
                rule(&[""], &["pods/status"], &["patch", "update"]),
                rule(&[""], &["replicationcontrollers", "services"], READ),
                rule(&["apps", "extensions"], &["replicasets"], READ),
                rule(&["apps"], &["statefulsets"], READ),
                rule(&["policy"], &["poddisruptionbudgets"], READ),
                rule(&[""], &["persistentvolumeclaims", "persistentvolumes"], READ),
                rule(&["authentication.k8s.io"], &["tokenreviews"], &["create"]),
                rule(&["authorization.k8s.io"], &["subjectaccessreviews"], &["create"]),
                rule(&["storage.k8s.io"], &["csinodes"], READ),
                rule(&[""], &["namespaces"], READ),
                rule(&["storage.k8s.io"], &["csidrivers"], READ),
                rule(&["storage.k8s.io"], &["csistoragecapacities"], READ),
                rule(&["storage.k8s.io"], &["volumeattachments"], READ),
                rule(&[""], &["pods/finalizers"], &["update"]),
                rule(&["coordination.k8s.io"], &["leasecandidates"],
                    &["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]),
                // Dynamic Resource Allocation, as upstream's v1.36 role has it.
                rule(&["resource.k8s.io"], &["deviceclasses"], READ),
                rule(&["resource.k8s.io"], &["resourceslices"], READ),
                rule(&["resource.k8s.io"], &["resourceclaims"], &["create", "delete"]),
                rule(&["resource.k8s.io"], &["resourceclaims"],
                    &["get", "list", "patch", "update", "watch"]),
                rule(&["resource.k8s.io"], &["resourceclaims/status"],
                    &["get", "list", "patch", "update", "watch"]),
                rule(&["resource.k8s.io"], &["resourceclaims/binding"], &["patch", "update"]),
            ]),
        ),
        cluster_role(
            "system:kubelet-api-admin",
            json!([
                rule(&[""], &["nodes"], READ),
                rule(&[""], &["nodes"], &["proxy"]),
                rule(
                    &[""],
                    &["nodes/log", "nodes/metrics", "nodes/proxy", "nodes/stats"],
                    &["*"]
                ),
                rule(
                    &[""],
                    &["nodes/configz", "nodes/healthz", "nodes/pods"],
                    &["*"]
                ),
            ]),
        ),
        cluster_role(
            "system:monitoring",
            json!([{"nonResourceURLs": ["/flagz", "/healthz", "/healthz/*", "/livez", "/livez/*",
                "/metrics", "/metrics/slis", "/readyz", "/readyz/*", "/statusz"], "verbs": ["get"]},
                rule(&[""], &["nodes/metrics"], &["get"])]),
        ),
        // The rules the Node authorizer also grants every node.
        cluster_role("system:node", node_rules()),
        cluster_role(
            "system:node-bootstrapper",
            json!([rule(
                &["certificates.k8s.io"],
                &["certificatesigningrequests"],
                &["create", "get", "list", "watch"]
            )]),
        ),
        cluster_role(
            "system:node-problem-detector",
            json!([
                rule(&[""], &["nodes"], &["get"]),
                rule(&[""], &["nodes/status"], &["patch"]),
                rule(&["", "events.k8s.io"], &["events"], EVENTS_WRITE),
            ]),
        ),
        cluster_role(
            "system:node-proxier",
            json!([
                rule(&[""], &["endpoints", "services"], &["list", "watch"]),
                rule(&[""], &["nodes"], READ),
                rule(&["", "events.k8s.io"], &["events"], EVENTS_WRITE),
                rule(
                    &["discovery.k8s.io"],
                    &["endpointslices"],
                    &["list", "watch"]
                ),
                rule(
                    &["networking.k8s.io"],
                    &["servicecidrs"],
                    &["list", "watch"]
                ),
            ]),
        ),
        cluster_role(
            "system:persistent-volume-provisioner",
            json!([
                rule(
                    &[""],
                    &["persistentvolumes"],
                    &["create", "delete", "get", "list", "watch"]
                ),
                rule(
                    &[""],
                    &["persistentvolumeclaims"],
                    &["get", "list", "update", "watch"]
                ),
                rule(&["storage.k8s.io"], &["storageclasses"], READ),
                rule(&[""], &["events"], &["watch"]),
                rule(&["", "events.k8s.io"], &["events"], EVENTS_WRITE),
            ]),
        ),
        cluster_role(
            "system:service-account-issuer-discovery",
            json!([{"nonResourceURLs": ["/.well-known/openid-configuration",
                "/.well-known/openid-configuration/", "/openid/v1/jwks", "/openid/v1/jwks/"],
                "verbs": ["get"]}]),
        ),
        cluster_role(
            "system:volume-scheduler",
            json!([
                rule(
                    &[""],
                    &["persistentvolumes"],
                    &["get", "list", "patch", "update", "watch"]
                ),
                rule(&["storage.k8s.io"], &["storageclasses"], READ),
                rule(
                    &[""],
                    &["persistentvolumeclaims"],
                    &["get", "list", "patch", "update", "watch"]
                ),
            ]),
        ),
    ]
}

/// `rules` with resource names.
fn named(groups: &[&str], resources: &[&str], names: &[&str], verbs: &[&str]) -> Value {
    json!({"apiGroups": groups, "resources": resources, "resourceNames": names, "verbs": verbs})
}

/// Writing events, in both groups: every controller does.
fn events() -> Value {
    rule(&["", "events.k8s.io"], &["events"], EVENTS_WRITE)
}

const CONTROLLER_PREFIX: &str = "system:controller:";

/// The roles of the controller manager's controllers, each run as the service account
/// `kube-system/<controller>` (`--use-service-account-credentials`).
fn controller_roles() -> Vec<Value> {
    let apps = &["apps", "extensions"];
    let roles: Vec<(&str, Vec<Value>)> = vec![
        (
            "attachdetach-controller",
            vec![
                rule(
                    &[""],
                    &["persistentvolumeclaims", "persistentvolumes"],
                    &["list", "watch"],
                ),
                rule(&[""], &["nodes"], READ),
                rule(&[""], &["nodes/status"], &["patch", "update"]),
                rule(&[""], &["pods"], &["list", "watch"]),
                events(),
                rule(
                    &["storage.k8s.io"],
                    &["volumeattachments"],
                    &["create", "delete", "get", "list", "watch"],
                ),
                rule(&["storage.k8s.io"], &["csidrivers"], READ),
                rule(&["storage.k8s.io"], &["csinodes"], READ),
            ],
        ),
        (
            "certificate-controller",
            vec![
                rule(
                    &["certificates.k8s.io"],
                    &["certificatesigningrequests"],
                    &["delete", "get", "list", "watch"],
                ),
                rule(
                    &["certificates.k8s.io"],
                    &[
                        "certificatesigningrequests/approval",
                        "certificatesigningrequests/status",
                    ],
                    &["update"],
                ),
                named(
                    &["certificates.k8s.io"],
                    &["signers"],
                    &["kubernetes.io/kube-apiserver-client-kubelet"],
                    &["approve"],
                ),
                named(
                    &["certificates.k8s.io"],
                    &["signers"],
                    &[
                        "kubernetes.io/kube-apiserver-client",
                        "kubernetes.io/kube-apiserver-client-kubelet",
                        "kubernetes.io/kubelet-serving",
                        "kubernetes.io/legacy-unknown",
                    ],
                    &["sign"],
                ),
                rule(
                    &["authorization.k8s.io"],
                    &["subjectaccessreviews"],
                    &["create"],
                ),
                events(),
            ],
        ),
        (
            "clusterrole-aggregation-controller",
            vec![rule(
                &["rbac.authorization.k8s.io"],
                &["clusterroles"],
                &["escalate", "get", "list", "patch", "update", "watch"],
            )],
        ),
        (
            "cronjob-controller",
            vec![
                rule(
                    &["batch"],
                    &["cronjobs"],
                    &["get", "list", "update", "watch"],
                ),
                rule(
                    &["batch"],
                    &["jobs"],
                    &[
                        "create", "delete", "get", "list", "patch", "update", "watch",
                    ],
                ),
                rule(&["batch"], &["cronjobs/status"], &["update"]),
                rule(&["batch"], &["cronjobs/finalizers"], &["update"]),
                rule(&[""], &["pods"], &["delete", "list", "watch"]),
                events(),
            ],
        ),
        (
            "daemon-set-controller",
            vec![
                rule(apps, &["daemonsets"], READ),
                rule(apps, &["daemonsets/status"], &["update"]),
                rule(apps, &["daemonsets/finalizers"], &["update"]),
                rule(&[""], &["nodes"], &["list", "watch"]),
                rule(
                    &[""],
                    &["pods"],
                    &["create", "delete", "list", "patch", "watch"],
                ),
                rule(&[""], &["pods/binding"], &["create"]),
                rule(
                    &["apps"],
                    &["controllerrevisions"],
                    &[
                        "create", "delete", "get", "list", "patch", "update", "watch",
                    ],
                ),
                events(),
            ],
        ),
        (
            "deployment-controller",
            vec![
                rule(apps, &["deployments"], &["get", "list", "update", "watch"]),
                rule(apps, &["deployments/status"], &["update"]),
                rule(apps, &["deployments/finalizers"], &["update"]),
                rule(
                    apps,
                    &["replicasets"],
                    &[
                        "create", "delete", "get", "list", "patch", "update", "watch",
                    ],
                ),
                rule(&[""], &["pods"], &["get", "list", "update", "watch"]),
                events(),
            ],
        ),
        (
            "device-taint-eviction-controller",
            vec![
                rule(&[""], &["pods"], &["delete", "get", "list", "watch"]),
                rule(&[""], &["pods/status"], &["patch", "update"]),
                rule(&["resource.k8s.io"], &["resourceclaims"], READ),
                rule(&["resource.k8s.io"], &["resourceslices"], READ),
                rule(&["resource.k8s.io"], &["deviceclasses"], READ),
                events(),
            ],
        ),
        (
            "disruption-controller",
            vec![
                rule(apps, &["deployments"], READ),
                rule(apps, &["replicasets"], READ),
                rule(&[""], &["replicationcontrollers"], READ),
                rule(&["policy"], &["poddisruptionbudgets"], READ),
                rule(&["apps"], &["statefulsets"], READ),
                rule(&["policy"], &["poddisruptionbudgets/status"], &["update"]),
                rule(&[""], &["pods/status"], &["patch", "update"]),
                rule(&["*"], &["*/scale"], &["get"]),
                events(),
            ],
        ),
        (
            "endpoint-controller",
            vec![
                rule(&[""], &["pods", "services"], READ),
                rule(
                    &[""],
                    &["endpoints"],
                    &["create", "delete", "get", "list", "update", "watch"],
                ),
                rule(&[""], &["endpoints/restricted"], &["create"]),
                events(),
            ],
        ),
        (
            "endpointslice-controller",
            vec![
                rule(&[""], &["nodes", "pods", "services"], READ),
                rule(&[""], &["services/finalizers"], &["update"]),
                rule(
                    &["discovery.k8s.io"],
                    &["endpointslices"],
                    &["create", "delete", "get", "list", "update", "watch"],
                ),
                events(),
            ],
        ),
        (
            "endpointslicemirroring-controller",
            vec![
                rule(&[""], &["endpoints", "services"], READ),
                rule(&[""], &["services/finalizers"], &["update"]),
                rule(&[""], &["endpoints/finalizers"], &["update"]),
                rule(
                    &["discovery.k8s.io"],
                    &["endpointslices"],
                    &["create", "delete", "get", "list", "update", "watch"],
                ),
                events(),
            ],
        ),
        (
            "ephemeral-volume-controller",
            vec![
                rule(&[""], &["pods"], READ),
                rule(&[""], &["pods/finalizers"], &["update"]),
                rule(
                    &[""],
                    &["persistentvolumeclaims"],
                    &["create", "get", "list", "watch"],
                ),
                events(),
            ],
        ),
        (
            "expand-controller",
            vec![
                rule(
                    &[""],
                    &["persistentvolumes"],
                    &["get", "list", "patch", "update", "watch"],
                ),
                rule(
                    &[""],
                    &["persistentvolumeclaims/status"],
                    &["patch", "update"],
                ),
                rule(&[""], &["persistentvolumeclaims"], READ),
                events(),
            ],
        ),
        (
            "generic-garbage-collector",
            vec![
                rule(
                    &["*"],
                    &["*"],
                    &["delete", "get", "list", "patch", "update", "watch"],
                ),
                events(),
            ],
        ),
        (
            "horizontal-pod-autoscaler",
            vec![
                rule(&["autoscaling"], &["horizontalpodautoscalers"], READ),
                rule(
                    &["autoscaling"],
                    &["horizontalpodautoscalers/status"],
                    &["update"],
                ),
                rule(&["*"], &["*/scale"], &["get", "update"]),
                rule(&[""], &["pods"], &["list", "watch"]),
                rule(&["metrics.k8s.io"], &["pods"], &["list", "watch"]),
                rule(&["custom.metrics.k8s.io"], &["*"], READ),
                rule(&["external.metrics.k8s.io"], &["*"], READ),
                events(),
            ],
        ),
        (
            "job-controller",
            vec![
                rule(
                    &["batch"],
                    &["jobs"],
                    &["get", "list", "patch", "update", "watch"],
                ),
                rule(&["batch"], &["jobs/status"], &["update"]),
                rule(&["batch"], &["jobs/finalizers"], &["update"]),
                rule(
                    &[""],
                    &["pods"],
                    &["create", "delete", "list", "patch", "watch"],
                ),
                events(),
            ],
        ),
        (
            "legacy-service-account-token-cleaner",
            vec![
                named(
                    &[""],
                    &["configmaps"],
                    &["kube-apiserver-legacy-service-account-token-tracking"],
                    &["get"],
                ),
                rule(&[""], &["secrets"], &["delete", "patch"]),
            ],
        ),
        (
            "namespace-controller",
            vec![
                rule(&[""], &["namespaces"], &["delete", "get", "list", "watch"]),
                rule(
                    &[""],
                    &["namespaces/finalize", "namespaces/status"],
                    &["update"],
                ),
                rule(
                    &["*"],
                    &["*"],
                    &["delete", "deletecollection", "get", "list", "watch"],
                ),
            ],
        ),
        (
            "node-controller",
            vec![
                rule(
                    &[""],
                    &["nodes"],
                    &["delete", "get", "list", "patch", "update", "watch"],
                ),
                rule(&[""], &["nodes/status"], &["patch", "update"]),
                rule(&[""], &["pods/status"], &["patch", "update"]),
                rule(&[""], &["pods"], &["delete", "get", "list", "watch"]),
                events(),
            ],
        ),
        (
            "persistent-volume-binder",
            vec![
                rule(
                    &[""],
                    &["persistentvolumes"],
                    &["create", "delete", "get", "list", "update", "watch"],
                ),
                rule(&[""], &["persistentvolumes/status"], &["update"]),
                rule(
                    &[""],
                    &["persistentvolumeclaims"],
                    &["get", "list", "update", "watch"],
                ),
                rule(&[""], &["persistentvolumeclaims/status"], &["update"]),
                rule(
                    &[""],
                    &["pods"],
                    &["create", "delete", "get", "list", "watch"],
                ),
                rule(&["storage.k8s.io"], &["storageclasses"], READ),
                rule(&[""], &["nodes"], &["list", "watch"]),
                events(),
                rule(&[""], &["events"], &["watch"]),
            ],
        ),
        (
            "pod-garbage-collector",
            vec![
                rule(&[""], &["pods"], &["delete", "list", "watch"]),
                rule(&[""], &["nodes"], READ),
                rule(&[""], &["pods/status"], &["patch"]),
            ],
        ),
        (
            "pv-protection-controller",
            vec![
                rule(
                    &[""],
                    &["persistentvolumes"],
                    &["get", "list", "update", "watch"],
                ),
                events(),
            ],
        ),
        (
            "pvc-protection-controller",
            vec![
                rule(
                    &[""],
                    &["persistentvolumeclaims"],
                    &["get", "list", "update", "watch"],
                ),
                rule(&[""], &["persistentvolumeclaims/status"], &["update"]),
                rule(&[""], &["pods"], READ),
                events(),
            ],
        ),
        (
            "replicaset-controller",
            vec![
                rule(apps, &["replicasets"], &["get", "list", "update", "watch"]),
                rule(apps, &["replicasets/status"], &["update"]),
                rule(apps, &["replicasets/finalizers"], &["update"]),
                rule(
                    &[""],
                    &["pods"],
                    &["create", "delete", "list", "patch", "watch"],
                ),
                events(),
            ],
        ),
        (
            "replication-controller",
            vec![
                rule(
                    &[""],
                    &["replicationcontrollers"],
                    &["get", "list", "update", "watch"],
                ),
                rule(&[""], &["replicationcontrollers/status"], &["update"]),
                rule(&[""], &["replicationcontrollers/finalizers"], &["update"]),
                rule(
                    &[""],
                    &["pods"],
                    &["create", "delete", "list", "patch", "watch"],
                ),
                events(),
            ],
        ),
        (
            "resource-claim-controller",
            vec![
                rule(&[""], &["pods"], READ),
                rule(&[""], &["pods/finalizers"], &["update"]),
                rule(
                    &["resource.k8s.io"],
                    &["resourceclaims"],
                    &["create", "delete", "get", "list", "watch"],
                ),
                rule(
                    &["resource.k8s.io"],
                    &["resourceclaims", "resourceclaims/status"],
                    &["patch", "update"],
                ),
                rule(&[""], &["pods/status"], &["patch", "update"]),
                events(),
                rule(
                    &["resource.k8s.io"],
                    &["resourceclaims/binding"],
                    &["patch", "update"],
                ),
            ],
        ),
        (
            "resourcequota-controller",
            vec![
                rule(&["*"], &["*"], &["list", "watch"]),
                rule(&[""], &["resourcequotas/status"], &["update"]),
                events(),
            ],
        ),
        (
            "root-ca-cert-publisher",
            vec![
                rule(&[""], &["configmaps"], &["create", "update"]),
                events(),
            ],
        ),
        (
            "route-controller",
            vec![
                rule(&[""], &["nodes"], &["list", "watch"]),
                rule(&[""], &["nodes/status"], &["patch"]),
                events(),
            ],
        ),
        (
            "selinux-warning-controller",
            vec![
                events(),
                rule(&[""], &["persistentvolumes"], READ),
                rule(&[""], &["persistentvolumeclaims"], READ),
                rule(&[""], &["pods"], READ),
                rule(&["storage.k8s.io"], &["csidrivers"], READ),
            ],
        ),
        (
            "service-account-controller",
            vec![rule(&[""], &["serviceaccounts"], &["create"]), events()],
        ),
        (
            "service-cidrs-controller",
            vec![
                rule(
                    &["networking.k8s.io"],
                    &["servicecidrs"],
                    &["get", "list", "patch", "update", "watch"],
                ),
                rule(
                    &["networking.k8s.io"],
                    &["servicecidrs/finalizers"],
                    &["patch", "update"],
                ),
                rule(
                    &["networking.k8s.io"],
                    &["servicecidrs/status"],
                    &["patch", "update"],
                ),
                rule(&["networking.k8s.io"], &["ipaddresses"], READ),
                events(),
            ],
        ),
        (
            "service-controller",
            vec![
                rule(&[""], &["services"], READ),
                rule(&[""], &["services/status"], &["patch", "update"]),
                rule(&[""], &["nodes"], &["list", "watch"]),
                events(),
            ],
        ),
        (
            "statefulset-controller",
            vec![
                rule(&[""], &["pods"], &["list", "watch"]),
                rule(&["apps"], &["statefulsets"], READ),
                rule(&["apps"], &["statefulsets/status"], &["update"]),
                rule(&["apps"], &["statefulsets/finalizers"], &["update"]),
                rule(
                    &[""],
                    &["pods"],
                    &["create", "delete", "get", "patch", "update"],
                ),
                rule(
                    &["apps"],
                    &["controllerrevisions"],
                    &[
                        "create", "delete", "get", "list", "patch", "update", "watch",
                    ],
                ),
                rule(
                    &[""],
                    &["persistentvolumeclaims"],
                    &["create", "get", "list", "watch"],
                ),
                rule(&[""], &["persistentvolumeclaims"], &["delete", "update"]),
                rule(&[""], &["pods/finalizers"], &["update"]),
                events(),
            ],
        ),
        (
            "ttl-after-finished-controller",
            vec![
                rule(&["batch"], &["jobs"], &["delete", "get", "list", "watch"]),
                events(),
            ],
        ),
        (
            "ttl-controller",
            vec![
                rule(&[""], &["nodes"], &["list", "patch", "update", "watch"]),
                events(),
            ],
        ),
        (
            "validatingadmissionpolicy-status-controller",
            vec![
                rule(
                    &["admissionregistration.k8s.io"],
                    &["validatingadmissionpolicies"],
                    READ,
                ),
                rule(
                    &["admissionregistration.k8s.io"],
                    &["validatingadmissionpolicies/status"],
                    &["get", "patch", "update"],
                ),
                events(),
            ],
        ),
        (
            "volumeattributesclass-protection-controller",
            vec![
                rule(&[""], &["persistentvolumeclaims"], READ),
                rule(&[""], &["persistentvolumes"], READ),
                rule(
                    &["storage.k8s.io"],
                    &["volumeattributesclasses"],
                    &["get", "list", "update", "watch"],
                ),
                events(),
            ],
        ),
    ];
    roles
        .into_iter()
        .map(|(name, rules)| {
            cluster_role(&format!("{CONTROLLER_PREFIX}{name}"), Value::Array(rules))
        })
        .collect()
}

/// Each controller role bound to the controller's service account in kube-system.
/// Each controller's role (the `system:controller:` ClusterRoles of `cluster_roles`) bound
/// to its service account.
fn controller_role_bindings(cluster_roles: &[Value]) -> Vec<Value> {
    cluster_roles
        .iter()
        .filter_map(|role| role["metadata"]["name"].as_str())
        .filter(|name| name.starts_with(CONTROLLER_PREFIX))
        .map(|name| {
            let account = &name[CONTROLLER_PREFIX.len()..];
            cluster_role_binding(name, name, service_accounts("kube-system", &[account]))
        })
        .collect()
}

fn service_accounts(namespace: &str, names: &[&str]) -> Value {
    Value::Array(
        names
            .iter()
            .map(|n| json!({"kind": "ServiceAccount", "name": n, "namespace": namespace}))
            .collect(),
    )
}

fn namespaced_meta(name: &str, namespace: &str) -> Value {
    let mut meta = meta(name);
    meta["namespace"] = namespace.into();
    meta
}

fn role(namespace: &str, name: &str, rules: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": namespaced_meta(name, namespace), "rules": rules})
}

fn role_binding(namespace: &str, name: &str, role: &str, subjects: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": namespaced_meta(name, namespace),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": role},
        "subjects": subjects})
}

const LEADER_LOCKING: &[&str] = &["create", "get", "list", "update", "watch"];

/// The default roles in kube-system and kube-public.
pub fn roles() -> Vec<Value> {
    let leader_locking = json!([
        rule(&["coordination.k8s.io"], &["leases"], LEADER_LOCKING),
        rule(
            &["coordination.k8s.io"],
            &["leasecandidates"],
            LEADER_LOCKING
        ),
    ]);
    vec![
        role(
            "kube-public",
            "system:controller:bootstrap-signer",
            json!([
                rule(&[""], &["configmaps"], READ),
                named(&[""], &["configmaps"], &["cluster-info"], &["update"]),
                events(),
            ]),
        ),
        role(
            "kube-system",
            "extension-apiserver-authentication-reader",
            json!([named(
                &[""],
                &["configmaps"],
                &["extension-apiserver-authentication"],
                READ
            ),]),
        ),
        role(
            "kube-system",
            "system::leader-locking-kube-controller-manager",
            leader_locking.clone(),
        ),
        role(
            "kube-system",
            "system::leader-locking-kube-scheduler",
            leader_locking,
        ),
        role(
            "kube-system",
            "system:controller:bootstrap-signer",
            json!([rule(&[""], &["secrets"], READ),]),
        ),
        role(
            "kube-system",
            "system:controller:cloud-provider",
            json!([rule(
                &[""],
                &["configmaps"],
                &["create", "get", "list", "watch"]
            ),]),
        ),
        role(
            "kube-system",
            "system:controller:token-cleaner",
            json!([
                rule(&[""], &["secrets"], &["delete", "get", "list", "watch"]),
                events(),
            ]),
        ),
    ]
}

/// The default role bindings in kube-system and kube-public.
pub fn role_bindings() -> Vec<Value> {
    let with_accounts = |mut subjects: Value, accounts: &[&str]| {
        if let (Some(list), Value::Array(more)) = (
            subjects.as_array_mut(),
            service_accounts("kube-system", accounts),
        ) {
            list.extend(more);
        }
        subjects
    };
    vec![
        role_binding(
            "kube-public",
            "system:controller:bootstrap-signer",
            "system:controller:bootstrap-signer",
            service_accounts("kube-system", &["bootstrap-signer"]),
        ),
        role_binding(
            "kube-system",
            "system::extension-apiserver-authentication-reader",
            "extension-apiserver-authentication-reader",
            users(&["system:kube-controller-manager", "system:kube-scheduler"]),
        ),
        role_binding(
            "kube-system",
            "system::leader-locking-kube-controller-manager",
            "system::leader-locking-kube-controller-manager",
            with_accounts(
                users(&["system:kube-controller-manager"]),
                &["kube-controller-manager", "leader-election-controller"],
            ),
        ),
        role_binding(
            "kube-system",
            "system::leader-locking-kube-scheduler",
            "system::leader-locking-kube-scheduler",
            with_accounts(users(&["system:kube-scheduler"]), &["kube-scheduler"]),
        ),
        role_binding(
            "kube-system",
            "system:controller:bootstrap-signer",
            "system:controller:bootstrap-signer",
            service_accounts("kube-system", &["bootstrap-signer"]),
        ),
        role_binding(
            "kube-system",
            "system:controller:cloud-provider",
            "system:controller:cloud-provider",
            service_accounts("kube-system", &["cloud-provider"]),
        ),
        role_binding(
            "kube-system",
            "system:controller:token-cleaner",
            "system:controller:token-cleaner",
            service_accounts("kube-system", &["token-cleaner"]),
        ),
    ]
}

/// The default cluster roles.
pub fn cluster_roles() -> Vec<Value> {
    let mut roles = user_facing_roles();
    roles.extend(component_roles());
    roles.extend(controller_roles());
    roles.extend([
        cluster_role(
            "cluster-admin",
            json!([
                {"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]},
                {"nonResourceURLs": ["*"], "verbs": ["*"]},
            ]),
        ),
        cluster_role(
            "system:discovery",
            json!([{"nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*", "/healthz",
                "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"],
                "verbs": ["get"]}]),
        ),
        cluster_role(
            "system:basic-user",
            json!([
                {"apiGroups": ["authorization.k8s.io"],
                 "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"],
                 "verbs": ["create"]},
                {"apiGroups": ["authentication.k8s.io"], "resources": ["selfsubjectreviews"],
                 "verbs": ["create"]},
            ]),
        ),
        cluster_role(
            "system:public-info-viewer",
            json!([{"nonResourceURLs": ["/healthz", "/livez", "/readyz", "/version", "/version/"],
                "verbs": ["get"]}]),
        ),
        cluster_role(
            "system:auth-delegator",
            json!([
                {"apiGroups": ["authentication.k8s.io"], "resources": ["tokenreviews"],
                 "verbs": ["create"]},
                {"apiGroups": ["authorization.k8s.io"], "resources": ["subjectaccessreviews"],
                 "verbs": ["create"]},
            ]),
        ),
    ]);
    roles
}

/// The default cluster role bindings.
pub fn cluster_role_bindings() -> Vec<Value> {
    cluster_role_bindings_for(&cluster_roles())
}

/// [`cluster_role_bindings`], the controllers' named by `cluster_roles` (built once at a
/// start for both).
fn cluster_role_bindings_for(cluster_roles: &[Value]) -> Vec<Value> {
    let mut bindings = vec![
        cluster_role_binding(
            "cluster-admin",
            "cluster-admin",
            groups(&["system:masters"]),
        ),
        cluster_role_binding(
            "system:discovery",
            "system:discovery",
            groups(&["system:authenticated"]),
        ),
        cluster_role_binding(
            "system:basic-user",
            "system:basic-user",
            groups(&["system:authenticated"]),
        ),
        cluster_role_binding(
            "system:public-info-viewer",
            "system:public-info-viewer",
            groups(&["system:authenticated", "system:unauthenticated"]),
        ),
        cluster_role_binding(
            "system:kube-controller-manager",
            "system:kube-controller-manager",
            users(&["system:kube-controller-manager"]),
        ),
        cluster_role_binding(
            "system:kube-dns",
            "system:kube-dns",
            service_accounts("kube-system", &["kube-dns"]),
        ),
        cluster_role_binding(
            "system:kube-scheduler",
            "system:kube-scheduler",
            users(&["system:kube-scheduler"]),
        ),
        cluster_role_binding(
            "system:volume-scheduler",
            "system:volume-scheduler",
            users(&["system:kube-scheduler"]),
        ),
        cluster_role_binding(
            "system:monitoring",
            "system:monitoring",
            groups(&["system:monitoring"]),
        ),
        // Without subjects: nodes are authorized by the Node authorizer.
        cluster_role_binding("system:node", "system:node", json!(null)),
        cluster_role_binding(
            "system:node-proxier",
            "system:node-proxier",
            users(&["system:kube-proxy"]),
        ),
        cluster_role_binding(
            "system:service-account-issuer-discovery",
            "system:service-account-issuer-discovery",
            groups(&["system:serviceaccounts"]),
        ),
    ];
    bindings.extend(controller_role_bindings(cluster_roles));
    bindings
}

/// Adds to `current[field]` (a list) the items of `wanted[field]` it lacks; whether any were.
fn add_missing(current: &mut Value, wanted: &Value, field: &str) -> bool {
    let want = wanted[field].as_array().cloned().unwrap_or_default();
    if !current[field].is_array() {
        current[field] = Value::Array(Vec::new());
    }
    let Some(have) = current[field].as_array_mut() else {
        return false;
    };
    let mut changed = false;
    for item in want {
        if !have.contains(&item) {
            have.push(item);
            changed = true;
        }
    }
    changed
}

/// Creates or completes the default policy; returns whether it wrote anything (on a restart
/// of a server whose policy is complete, nothing).
pub async fn reconcile(registry: &Registry) -> Result<bool> {
    let mut wrote = false;
    let cluster_roles = cluster_roles();
    let cluster_role_bindings = cluster_role_bindings_for(&cluster_roles);
    let sets = [
        ("clusterroles", cluster_roles, "rules"),
        ("clusterrolebindings", cluster_role_bindings, "subjects"),
        ("roles", roles(), "rules"),
        ("rolebindings", role_bindings(), "subjects"),
    ];
    for (resource, objects, field) in sets {
        let Some(storage) = registry
            .resources()
            .find(|r| r.descriptor().resource == resource && r.descriptor().subresource.is_empty())
        else {
            continue;
        };
        let storage = &**storage;
        let mut stored = stored_by_name(storage).await?;
        let key = |wanted: &Value| {
            let text = |field: &str| wanted["metadata"][field].as_str().unwrap_or_default();
            (text("namespace").to_owned(), text("name").to_owned())
        };
        let mut present = Vec::new();
        let mut missing = Vec::new();
        for wanted in objects {
            match stored.remove(&key(&wanted)) {
                Some(current) => present.push((current, wanted)),
                None => missing.push(wanted),
            }
        }
        let created = crate::builtin::write_each(missing, |wanted| {
            let (namespace, name) = key(&wanted);
            async move {
                crate::builtin::create_unless_present(storage, &namespace, &name, &wanted)
                    .await
                    .map(|found| (found, wanted))
            }
        })
        .await?;
        for (found, wanted) in created {
            match found {
                None => wrote = true,
                // Created by another server since the list.
                Some(found) => present.push((Stored::read(found.body.into_bytes())?.1, wanted)),
            }
        }
        for (current, wanted) in present {
            if !current.autoupdate || holds_all(&current.json, &wanted[field]) {
                continue;
            }
            let (namespace, name) = key(&wanted);
            let mut current: Value =
                serde_json::from_slice(&current.json).map_err(Error::Encode)?;
            if add_missing(&mut current, &wanted, field) {
                let body = serde_json::to_vec(&current).map_err(Error::Encode)?;
                storage
                    .update(&namespace, &name, &body, &WriteOptions::server())
                    .await?;
                wrote = true;
                tracing::info!(resource, namespace, name, "completed a default RBAC object");
            }
        }
    }
    Ok(wrote)
}

/// A stored role or binding as the reconciliation first reads it: its JSON, and whether it
/// may be completed (its autoupdate annotation is not `"false"`).
struct Stored {
    json: Bytes,
    autoupdate: bool,
}

impl Stored {
    /// `json`'s namespace and name, and the object; only its metadata is parsed.
    fn read(json: Bytes) -> Result<((String, String), Stored)> {
        #[derive(Deserialize)]
        struct Object {
            #[serde(default)]
            metadata: Metadata,
        }
        #[derive(Default, Deserialize)]
        #[serde(default)]
        struct Metadata {
            name: String,
            namespace: String,
            annotations: Annotations,
        }
        #[derive(Default, Deserialize)]
        struct Annotations {
            #[serde(rename = "rbac.authorization.kubernetes.io/autoupdate")]
            autoupdate: Option<String>,
        }
        let object: Object = serde_json::from_slice(&json).map_err(Error::Encode)?;
        let meta = object.metadata;
        let autoupdate = meta.annotations.autoupdate.as_deref() != Some("false");
        Ok(((meta.namespace, meta.name), Stored { json, autoupdate }))
    }
}

/// The objects `storage` holds, by namespace and name: one list of the collection (after the
/// first start every default object is there), each item parsed no further than its
/// metadata.
async fn stored_by_name(
    storage: &dyn crate::RestStorage,
) -> Result<HashMap<(String, String), Stored>> {
    let items = match storage.list("", &ListOptions::default()).await?.body {
        Payload::List { items, .. } => items,
        Payload::Whole(body) => {
            #[derive(Deserialize)]
            struct List<'a> {
                #[serde(borrow, default)]
                items: Vec<&'a serde_json::value::RawValue>,
            }
            let list: List = serde_json::from_slice(&body).map_err(Error::Encode)?;
            list.items
                .iter()
                .map(|item| Bytes::copy_from_slice(item.get().as_bytes()).into())
                .collect()
        }
    };
    items.iter().map(|i| Stored::read(i.to_bytes())).collect()
}

/// Whether `json`, a stored object as the server writes it (compact, keys in order), holds
/// each of `items` as written. Each item is one whole JSON object whose text begins with its
/// first key, so text found as written is one of the object's rules or subjects, equal to
/// the item; text not found sends the object to the exact comparison ([`add_missing`]),
/// which also takes items the object holds in another form.
fn holds_all(json: &[u8], items: &Value) -> bool {
    let Some(items) = items.as_array() else {
        return true;
    };
    let mut text = Vec::with_capacity(256);
    items.iter().all(|item| {
        text.clear();
        // Looked for where an object opens (a searcher built for each short item would cost
        // more than the search).
        item.is_object()
            && serde_json::to_writer(&mut text, item).is_ok()
            && memchr::memchr_iter(b'{', json).any(|at| json[at..].starts_with(&text))
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    fn key(object: &Value) -> (String, String, String) {
        let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
        (
            text(&object["kind"]),
            text(&object["metadata"]["namespace"]),
            text(&object["metadata"]["name"]),
        )
    }

    /// The text check finds an item only where the object holds that very item: not a rule
    /// with more verbs or another key, not a subject of another kind.
    #[test]
    fn holds_all_finds_only_whole_equal_items() {
        let typed = |v: Value| serde_json::to_vec(&v).unwrap();
        let role = typed(
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "r", "annotations": {"note": "{\"apiGroups\":[\"\"]}"}},
            "rules": [
                {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]},
                {"apiGroups": ["apps"], "resourceNames": ["x"], "resources": ["deployments"], "verbs": ["get"]},
            ]}),
        );
        let held = rule(&[""], &["pods"], &["get", "list"]);
        assert!(holds_all(&role, &json!([held])));
        assert!(holds_all(&role, &json!(null)), "nothing wanted");
        for missing in [
            rule(&[""], &["pods"], &["get"]),
            rule(&["apps"], &["deployments"], &["get"]),
            rule(&[""], &[""], &["get"]),
        ] {
            assert!(!holds_all(&role, &json!([held, missing])), "{missing}");
        }
        let binding = typed(json!({"roleRef": {"apiGroup": "rbac.authorization.k8s.io",
            "kind": "ClusterRole", "name": "system:node"},
            "subjects": [{"kind": "ServiceAccount", "name": "a", "namespace": "kube-system"}]}));
        assert!(holds_all(
            &binding,
            &service_accounts("kube-system", &["a"])
        ));
        assert!(!holds_all(
            &binding,
            &service_accounts("kube-system", &["b"])
        ));
        assert!(!holds_all(&binding, &users(&["system:node"])));
    }

    /// Every default object, as the server stores and serves it (through its type), holds
    /// its own rules or subjects as the text check looks for them: a restart reads no more
    /// than the metadata of what is in place.
    #[test]
    fn served_default_objects_hold_their_items_as_written() {
        use k8s_openapi::api::rbac::v1 as rbac;
        fn served<T: serde::de::DeserializeOwned + serde::Serialize>(v: &Value) -> Vec<u8> {
            serde_json::to_vec(&serde_json::from_value::<T>(v.clone()).unwrap()).unwrap()
        }
        for role in cluster_roles() {
            assert!(
                holds_all(&served::<rbac::ClusterRole>(&role), &role["rules"]),
                "{role}"
            );
        }
        for role in roles() {
            assert!(
                holds_all(&served::<rbac::Role>(&role), &role["rules"]),
                "{role}"
            );
        }
        for b in cluster_role_bindings() {
            let json = served::<rbac::ClusterRoleBinding>(&b);
            assert!(holds_all(&json, &b["subjects"]), "{b}");
        }
        for b in role_bindings() {
            assert!(
                holds_all(&served::<rbac::RoleBinding>(&b), &b["subjects"]),
                "{b}"
            );
        }
    }

    #[test]
    fn names_are_unique_and_every_binding_names_a_default_role() {
        let cluster_roles = cluster_roles();
        let roles = roles();
        let mut seen = BTreeSet::new();
        for object in cluster_roles
            .iter()
            .chain(&roles)
            .chain(&cluster_role_bindings())
            .chain(&role_bindings())
        {
            assert!(seen.insert(key(object)), "twice: {:?}", key(object));
        }
        for binding in cluster_role_bindings().iter().chain(&role_bindings()) {
            let kind = binding["roleRef"]["kind"].as_str().unwrap();
            let namespace = &binding["metadata"]["namespace"];
            let wanted = (
                kind.to_owned(),
                namespace.as_str().unwrap_or_default().to_owned(),
                binding["roleRef"]["name"].as_str().unwrap().to_owned(),
            );
            assert!(seen.contains(&wanted), "{:?} names no role", key(binding));
        }
    }

    #[test]
    fn every_controller_role_is_bound_to_its_service_account() {
        let bindings = cluster_role_bindings();
        let controllers: Vec<_> = cluster_roles()
            .into_iter()
            .filter(|r| {
                r["metadata"]["name"]
                    .as_str()
                    .unwrap()
                    .starts_with(CONTROLLER_PREFIX)
            })
            .collect();
        assert!(
            controllers.len() > 30,
            "{} controller roles",
            controllers.len()
        );
        for role in controllers {
            let name = role["metadata"]["name"].as_str().unwrap();
            let binding = bindings
                .iter()
                .find(|b| b["metadata"]["name"] == name)
                .unwrap_or_else(|| panic!("{name} is not bound"));
            assert_eq!(
                binding["subjects"],
                json!([{"kind": "ServiceAccount", "namespace": "kube-system",
                    "name": &name[CONTROLLER_PREFIX.len()..]}])
            );
        }
    }
}
