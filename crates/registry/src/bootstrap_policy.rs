//! Upstream's default RBAC policy, reconciled at every start (post-start hook
//! `rbac/bootstrap-roles`): a missing role or binding is created; an existing one whose
//! `rbac.authorization.kubernetes.io/autoupdate` annotation is not `"false"` gets the rules
//! or subjects it lacks (extras are kept, as upstream's reconciliation keeps them).
//!
//! This is the first part of the policy: the roles and bindings every client needs (cluster
//! administrators, discovery, the self-reviews, public information, delegated auth checks).

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
    vec![
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
    ]
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
            match storage.create("", &body, &WriteOptions::default()).await {
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
                    .update("", name, &body, &WriteOptions::default())
                    .await?;
                tracing::info!(resource, name, "completed a default RBAC object");
            }
        }
    }
    Ok(())
}
