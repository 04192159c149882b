//! Upstream's default RBAC policy, reconciled at every start (post-start hook
//! `rbac/bootstrap-roles`): a missing role or binding is created; an existing one whose
//! `rbac.authorization.kubernetes.io/autoupdate` annotation is not `"false"` gets the rules
//! or subjects it lacks (extras are kept, as upstream's reconciliation keeps them).
//!
//! This is the first part of the policy: the roles and bindings every client needs (cluster
//! administrators, discovery, the self-reviews, public information, delegated auth checks)
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

fn cluster_role_binding(name: &str, role: &str, subjects: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": meta(name),
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
        "subjects": subjects})
}

/// The default cluster roles.
pub fn cluster_roles() -> Vec<Value> {
    let mut roles = user_facing_roles();
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
