//! Keeps the RBAC authorizer's index current: every Role, ClusterRole, RoleBinding and
//! ClusterRoleBinding is listed, then followed through the watch caches.

use std::sync::Arc;

use capstan_auth::authz::rbac::{Kind, RbacIndex};
use capstan_registry::RestStorage;
use capstan_registry::builtin::Rbac;
use capstan_registry::rbac::{binding, policy_rules};
use k8s_openapi::api::rbac::v1 as api;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use serde::Deserialize;

use crate::watching::{Metadata, Seen, follow};

/// Feeds one collection into the index: `apply` for what is seen, then `listed`.
fn feed<T>(
    storage: Arc<dyn RestStorage>,
    index: Arc<RbacIndex>,
    kind: Kind,
    apply: fn(&RbacIndex, T, bool, u64),
) -> [JoinHandle<()>; 2]
where
    T: serde::de::DeserializeOwned + Default + Send + 'static,
{
    let listing = index.clone();
    crate::watching::feed(
        storage,
        move |generation| listing.listed(kind, generation),
        move |object, deleted, generation| apply(&index, object, deleted, generation),
    )
}

/// A Role or ClusterRole as the index reads it: the rest of the object (its labels,
/// annotations and managedFields) is skipped unparsed.
#[derive(Default, Deserialize)]
#[serde(default)]
struct Role {
    metadata: Metadata,
    rules: Option<Vec<api::PolicyRule>>,
}

/// A RoleBinding or ClusterRoleBinding as the index reads it.
#[derive(Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Binding {
    metadata: Metadata,
    role_ref: api::RoleRef,
    subjects: Option<Vec<api::Subject>>,
}

/// Starts following the four collections of `stores` into `index`.
pub fn start(stores: &Rbac, index: Arc<RbacIndex>) -> Vec<JoinHandle<()>> {
    let mut tasks = Vec::new();
    tasks.extend(feed::<Role>(
        stores.roles.clone(),
        index.clone(),
        Kind::Role,
        |index, role, deleted, generation| {
            let Metadata {
                namespace: ns,
                name,
                ..
            } = role.metadata;
            if deleted {
                index.remove_role(&ns, &name);
            } else {
                index.put_role(&ns, &name, policy_rules(role.rules.as_deref()), generation);
            }
        },
    ));
    tasks.extend(feed::<Role>(
        stores.cluster_roles.clone(),
        index.clone(),
        Kind::ClusterRole,
        |index, role, deleted, generation| {
            let name = role.metadata.name;
            if deleted {
                index.remove_role("", &name);
            } else {
                index.put_role("", &name, policy_rules(role.rules.as_deref()), generation);
            }
        },
    ));
    tasks.extend(feed::<Binding>(
        stores.role_bindings.clone(),
        index.clone(),
        Kind::RoleBinding,
        |index, b, deleted, generation| {
            let Metadata {
                namespace: ns,
                name,
                ..
            } = b.metadata;
            if deleted {
                index.remove_binding(&ns, &name);
            } else if !ns.is_empty() {
                index.put_binding(
                    binding(&ns, &name, &b.role_ref, b.subjects.as_deref()),
                    generation,
                );
            }
        },
    ));
    tasks.extend(feed::<Binding>(
        stores.cluster_role_bindings.clone(),
        index,
        Kind::ClusterRoleBinding,
        |index, b, deleted, generation| {
            let name = b.metadata.name;
            if deleted {
                index.remove_binding("", &name);
            } else {
                index.put_binding(
                    binding("", &name, &b.role_ref, b.subjects.as_deref()),
                    generation,
                );
            }
        },
    ));
    tasks
}

/// Aggregated ClusterRoles (`aggregationRule`): their rules become those of every ClusterRole
/// a selector matches, in name order without repeats, as upstream's clusterrole-aggregation
/// controller keeps them; recomputed whenever a ClusterRole changes.
pub async fn aggregate(storage: Arc<dyn RestStorage>) {
    let (tx, mut rx) = mpsc::channel::<Seen<api::ClusterRole>>(256);
    // Aborted with this task (a JoinSet aborts its tasks when dropped).
    let mut follower = tokio::task::JoinSet::new();
    follower.spawn(follow(storage.clone(), tx));
    let mut roles: std::collections::BTreeMap<String, (u64, api::ClusterRole)> =
        std::collections::BTreeMap::new();
    let mut loaded = false;
    while let Some(seen) = rx.recv().await {
        let name = seen.object.metadata.name.clone().unwrap_or_default();
        if seen.listed {
            roles.retain(|_, (g, _)| *g >= seen.generation);
            loaded = true;
        } else if seen.deleted {
            roles.remove(&name);
        } else {
            roles.insert(name, (seen.generation, seen.object));
        }
        // Recompute once the backlog is read, not once per queued event.
        if !loaded || !rx.is_empty() {
            continue;
        }
        for (name, wanted) in aggregated_rules(&roles) {
            let Some((_, role)) = roles.get(&name) else {
                continue;
            };
            if role.rules.as_ref() == Some(&wanted) {
                continue;
            }
            let mut updated = role.clone();
            updated.rules = Some(wanted);
            let mut body = match serde_json::to_value(&updated) {
                Ok(body) => body,
                Err(_) => continue,
            };
            body["apiVersion"] = "rbac.authorization.k8s.io/v1".into();
            body["kind"] = "ClusterRole".into();
            let Ok(bytes) = serde_json::to_vec(&body) else {
                continue;
            };
            let options = capstan_registry::WriteOptions::server();
            // A conflict means a newer version is on its way: it is recomputed then.
            if let Err(err) = storage.update("", &name, &bytes, &options).await {
                tracing::debug!(%err, role = %name, "aggregating a cluster role failed");
            }
        }
    }
}

/// The rules each aggregated role should have.
fn aggregated_rules(
    roles: &std::collections::BTreeMap<String, (u64, api::ClusterRole)>,
) -> Vec<(String, Vec<api::PolicyRule>)> {
    let mut out = Vec::new();
    for (name, (_, role)) in roles {
        let Some(rule) = &role.aggregation_rule else {
            continue;
        };
        let selectors: Vec<_> = rule
            .cluster_role_selectors
            .iter()
            .flatten()
            .filter_map(|s| capstan_meta::labels::LabelSelector::from_api(s).ok())
            .collect();
        let mut rules: Vec<api::PolicyRule> = Vec::new();
        for (other_name, (_, other)) in roles {
            if other_name == name
                || !selectors
                    .iter()
                    .any(|s| s.matches(other.metadata.labels.as_ref()))
            {
                continue;
            }
            for r in other.rules.iter().flatten() {
                if !rules.contains(r) {
                    rules.push(r.clone());
                }
            }
        }
        out.push((name.clone(), rules));
    }
    out
}
