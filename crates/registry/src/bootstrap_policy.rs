//! Upstream's default RBAC policy, reconciled at every start (post-start hook
//! `rbac/bootstrap-roles`): a missing role or binding is created; an existing one whose
//! `rbac.authorization.kubernetes.io/autoupdate` annotation is not `"false"` gets the rules
//! or subjects it lacks (extras are kept, as upstream's reconciliation keeps them).
//!
//! Held so far: every cluster role of upstream's policy but the controllers' own
//! (`system:controller:*`), with the bindings of the users, groups and accounts they name,
//! and the user-facing `admin`, `edit` and `view` with the roles they aggregate.

use capstan_meta::Reason;
use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::options::{GetOptions, WriteOptions};
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
                rule(
                    &[""],
                    &[
                        "configmaps",
                        "events",
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
                rule(
                    &[""],
                    &[
                        "bindings",
                        "events",
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
                 "resourceNames": ["kube-scheduler"], "verbs": ["get", "update"]},
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
            ]),
        ),
        cluster_role(
            "system:monitoring",
            json!([{"nonResourceURLs": ["/healthz", "/healthz/*", "/livez", "/livez/*",
                "/metrics", "/metrics/slis", "/readyz", "/readyz/*"], "verbs": ["get"]}]),
        ),
        cluster_role(
            "system:node",
            json!([
                rule(&["authentication.k8s.io"], &["tokenreviews"], &["create"]),
                rule(
                    &["authorization.k8s.io"],
                    &["localsubjectaccessreviews", "subjectaccessreviews"],
                    &["create"]
                ),
                rule(&[""], &["services"], READ),
                rule(&[""], &["nodes"], &["create", "get", "list", "watch"]),
                rule(&[""], &["nodes/status"], &["patch", "update"]),
                rule(&[""], &["nodes"], &["patch", "update"]),
                rule(&[""], &["events"], EVENTS_WRITE),
                rule(&[""], &["pods"], READ),
                rule(&[""], &["pods"], &["create", "delete"]),
                rule(&[""], &["pods/status"], &["patch", "update"]),
                rule(&[""], &["pods/eviction"], &["create"]),
                rule(&[""], &["configmaps", "secrets"], READ),
                rule(
                    &[""],
                    &["persistentvolumeclaims", "persistentvolumes"],
                    &["get"]
                ),
                rule(&[""], &["endpoints"], &["get"]),
                rule(
                    &["certificates.k8s.io"],
                    &["certificatesigningrequests"],
                    &["create", "get", "list", "watch"]
                ),
                rule(
                    &["coordination.k8s.io"],
                    &["leases"],
                    &["create", "delete", "get", "patch", "update"]
                ),
                rule(&["storage.k8s.io"], &["volumeattachments"], &["get"]),
                rule(&[""], &["serviceaccounts/token"], &["create"]),
                rule(
                    &[""],
                    &["persistentvolumeclaims/status"],
                    &["get", "patch", "update"]
                ),
                rule(&["storage.k8s.io"], &["csidrivers"], READ),
                rule(
                    &["storage.k8s.io"],
                    &["csinodes"],
                    &["create", "delete", "get", "patch", "update"]
                ),
                rule(&["node.k8s.io"], &["runtimeclasses"], READ),
            ]),
        ),
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
            json!([{"nonResourceURLs": ["/.well-known/openid-configuration", "/openid/v1/jwks"],
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

/// The default cluster roles.
pub fn cluster_roles() -> Vec<Value> {
    let mut roles = user_facing_roles();
    roles.extend(component_roles());
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
    vec![
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
            json!([{"kind": "ServiceAccount", "name": "kube-dns", "namespace": "kube-system"}]),
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
    ]
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

/// Creates or completes the default policy.
pub async fn reconcile(registry: &Registry) -> Result<()> {
    let sets = [
        ("clusterroles", cluster_roles(), "rules"),
        ("clusterrolebindings", cluster_role_bindings(), "subjects"),
    ];
    for (resource, objects, field) in sets {
        let Some(storage) = registry
            .resources()
            .find(|r| r.descriptor().resource == resource && r.descriptor().subresource.is_empty())
        else {
            continue;
        };
        for wanted in objects {
            let name = wanted["metadata"]["name"].as_str().unwrap_or_default();
            let body = serde_json::to_vec(&wanted).map_err(Error::Encode)?;
            match storage.create("", &body, &WriteOptions::server()).await {
                Ok(_) => continue,
                Err(Error::Api(e)) if e.reason == Reason::AlreadyExists => {}
                Err(e) => return Err(e),
            }
            let found = storage.get("", name, &GetOptions::default()).await?;
            let mut current: Value =
                serde_json::from_slice(&found.body.into_bytes()).map_err(Error::Encode)?;
            if current["metadata"]["annotations"][AUTOUPDATE] == "false" {
                continue;
            }
            if add_missing(&mut current, &wanted, field) {
                let body = serde_json::to_vec(&current).map_err(Error::Encode)?;
                storage
                    .update("", name, &body, &WriteOptions::server())
                    .await?;
                tracing::info!(resource, name, "completed a default RBAC object");
            }
        }
    }
    Ok(())
}
