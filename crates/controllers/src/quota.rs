//! The resource quota controller: each quota's `status.hard` follows its `spec.hard`, and
//! `status.used` is recounted from what its namespace holds: when a quota is new or its
//! `spec.hard` changes (not when the admission plugin charges it), soon after an object it
//! may count is deleted (which releases what the plugin charged for it), and every ten
//! seconds. A recount reads the quotas, then the plugin's charges in flight, then the
//! objects, all current (not from a cache that may lag): a charged object that is not
//! stored yet is counted from its charge.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use capstan_admission::plugins::{Charge, ChargesInFlight, NamespaceSet};
use capstan_admission::quota::{self, Usage};
use capstan_apiextensions::CustomResources;
use capstan_meta::quantity::{self, Milli};
use capstan_registry::{ListOptions, Registry, RestStorage, WriteOptions};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tracing::debug;

use crate::watching::{Metadata, Object, Seen, follow, follow_deletions};

/// What the controller follows of a quota.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(default)]
struct Quota {
    metadata: Metadata,
    spec: Hard,
    status: Hard,
}

/// `hard` of a quota's spec or status.
#[derive(Debug, Default, PartialEq, serde::Deserialize)]
#[serde(default)]
struct Hard {
    hard: Option<BTreeMap<String, String>>,
}

/// How often every namespace with quotas is recounted.
const RESYNC: Duration = Duration::from_secs(10);
/// How soon a namespace marked for a recount is recounted.
const SOON: Duration = Duration::from_millis(200);

/// The resources deletions of which release quota.
const RELEASING: [&str; 5] = [
    "pods",
    "persistentvolumeclaims",
    "configmaps",
    "secrets",
    "services",
];

fn store(
    registry: &Registry,
    group: &str,
    resource: &str,
    subresource: &str,
) -> Option<Arc<dyn RestStorage>> {
    registry
        .resources()
        .find(|r| {
            let d = r.descriptor();
            d.group == group && d.resource == resource && d.subresource == subresource
        })
        .cloned()
}

/// The storage of the objects a quota counts: a built-in resource, or a custom one (whose
/// storage version holds every object).
fn counted_store(
    registry: &Registry,
    custom: Option<&CustomResources>,
    group: &str,
    resource: &str,
) -> Option<Arc<dyn RestStorage>> {
    store(registry, group, resource, "").or_else(|| {
        custom?.stores().into_iter().find(|s| {
            let d = s.descriptor();
            d.group == group && d.resource == resource
        })
    })
}

/// The resource (group, plural) a quota's resource name counts.
fn counted(name: &str) -> Option<(String, String)> {
    if let Some(rest) = name.strip_prefix("count/") {
        return Some(match rest.split_once('.') {
            Some((resource, group)) => (group.to_string(), resource.to_string()),
            None => (String::new(), rest.to_string()),
        });
    }
    let core = |r: &str| Some((String::new(), r.to_string()));
    match name {
        "pods" | "cpu" | "memory" | "ephemeral-storage" => core("pods"),
        n if n.starts_with("requests.") && n != "requests.storage" => core("pods"),
        n if n.starts_with("limits.") => core("pods"),
        "persistentvolumeclaims" | "requests.storage" => core("persistentvolumeclaims"),
        n if n.contains(".storageclass.storage.k8s.io/") => core("persistentvolumeclaims"),
        "services" | "configmaps" | "secrets" | "replicationcontrollers" | "resourcequotas" => {
            core(name)
        }
        "services.nodeports" | "services.loadbalancers" => core("services"),
        _ => None,
    }
}

/// The objects of `namespace` as stored now.
async fn list(storage: &Arc<dyn RestStorage>, namespace: &str) -> Option<Vec<Value>> {
    let listed = storage
        .list(namespace, &ListOptions::default())
        .await
        .ok()?;
    let mut list: Value = serde_json::from_slice(&listed.body.into_bytes()).ok()?;
    match list["items"].take() {
        Value::Array(items) => Some(items),
        _ => Some(Vec::new()),
    }
}

/// Adds to `stored` (objects of `group`/`resource`) the objects charged in flight that are
/// not among them yet.
fn add_unstored(stored: &mut Vec<Value>, charges: &[Charge], group: &str, resource: &str) {
    let name = |o: &Value| o["metadata"]["name"].as_str().map(str::to_string);
    let names: HashSet<String> = stored.iter().filter_map(name).collect();
    stored.extend(
        charges
            .iter()
            .filter(|c| c.resource.group == group && c.resource.resource == resource)
            .filter(|c| name(&c.object).is_some_and(|n| !names.contains(&n)))
            .map(|c| c.object.clone()),
    );
}

/// Recounts every quota of `namespace`; false when a write lost a race, or an update the
/// plugin charged is in flight (try again).
async fn recount(
    registry: &Registry,
    custom: Option<&CustomResources>,
    namespace: &str,
    in_flight: &ChargesInFlight,
) -> bool {
    let (Some(quotas), Some(status)) = (
        store(registry, "", "resourcequotas", ""),
        store(registry, "", "resourcequotas", "status"),
    ) else {
        return true;
    };
    let Some(items) = list(&quotas, namespace).await else {
        return false;
    };
    // After the quotas: every charge they hold has either ended or is in this list.
    let charges = in_flight.in_namespace(namespace);
    if charges.iter().any(|c| c.update || !c.written) {
        // Whether the stored object has its old size or its new one, or whether a charge
        // being written lands, is not known.
        return false;
    }
    let mut objects: HashMap<(String, String), Vec<Value>> = HashMap::new();
    let mut settled = true;
    for mut q in items {
        let hard: BTreeMap<String, Value> = q["spec"]["hard"]
            .as_object()
            .map(|m| m.clone().into_iter().collect())
            .unwrap_or_default();
        let mut used = Usage::new();
        for name in hard.keys() {
            used.insert(name.clone(), Milli(0));
        }
        let kinds: HashSet<(String, String)> = hard.keys().filter_map(|k| counted(k)).collect();
        for (group, resource) in kinds {
            let key = (group.clone(), resource.clone());
            if !objects.contains_key(&key) {
                let mut found = match counted_store(registry, custom, &group, &resource) {
                    Some(s) => match list(&s, namespace).await {
                        Some(found) => found,
                        None => return false,
                    },
                    None => Vec::new(),
                };
                add_unstored(&mut found, &charges, &group, &resource);
                objects.insert(key.clone(), found);
            }
            for object in &objects[&key] {
                if !quota::covers(&q, &resource, object) {
                    continue;
                }
                for (name, amount) in quota::usage(&group, &resource, object) {
                    if let Some(total) = used.get_mut(&name) {
                        total.0 += amount.0;
                    }
                }
            }
        }
        let used: serde_json::Map<String, Value> = used
            .into_iter()
            .map(|(k, v)| (k, json!(quota::show(v))))
            .collect();
        let same = |a: &Value, b: &serde_json::Map<String, Value>| {
            let a = a.as_object().cloned().unwrap_or_default();
            a.len() == b.len()
                && a.iter().all(|(k, v)| {
                    let parse = |v: &Value| v.as_str().and_then(quantity::parse);
                    b.get(k).is_some_and(|w| parse(v) == parse(w))
                })
        };
        let hard_map: serde_json::Map<String, Value> = hard.into_iter().collect();
        if same(&q["status"]["used"], &used) && same(&q["status"]["hard"], &hard_map) {
            continue;
        }
        q["status"] = json!({"hard": hard_map, "used": used});
        let name = q["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let Ok(body) = serde_json::to_vec(&q) else {
            continue;
        };
        if let Err(err) = status
            .update(namespace, &name, &body, &WriteOptions::server())
            .await
        {
            debug!(%err, namespace, quota = %name, "quota controller: status not written");
            settled = false;
        }
    }
    settled
}

/// Follows quotas and the deletions that release quota; recounts as described above.
pub(crate) async fn run(
    registry: Arc<Registry>,
    custom: Option<Arc<CustomResources>>,
    namespaces: Arc<NamespaceSet>,
    in_flight: Arc<ChargesInFlight>,
) {
    let Some(quotas) = store(&registry, "", "resourcequotas", "") else {
        // No quotas are served: none can hold a namespace.
        namespaces.set_listed();
        return;
    };
    let (quota_tx, mut quota_events) = mpsc::channel::<Seen<Quota>>(256);
    let (object_tx, mut object_events) = mpsc::channel::<Seen<Object>>(1024);
    let mut tasks = JoinSet::new();
    tasks.spawn(follow::<Quota>(quotas, quota_tx));
    for resource in RELEASING {
        if let Some(s) = store(&registry, "", resource, "") {
            tasks.spawn(follow_deletions::<Object>(s, object_tx.clone()));
        }
    }
    drop(object_tx);
    // Quota names by namespace, with the list generation they were seen in.
    let mut held: HashMap<String, HashMap<String, u64>> = HashMap::new();
    let mut dirty: HashSet<String> = HashSet::new();
    let mut resync = tokio::time::interval(RESYNC);
    let mut soon = tokio::time::interval(SOON);
    loop {
        tokio::select! {
            Some(seen) = quota_events.recv() => {
                if seen.listed {
                    for (ns, names) in held.iter_mut() {
                        names.retain(|_, g| *g >= seen.generation);
                        namespaces.set(ns, names.len());
                    }
                    held.retain(|_, names| !names.is_empty());
                    namespaces.set_listed();
                } else {
                    let m = &seen.object.metadata;
                    let names = held.entry(m.namespace.clone()).or_default();
                    if seen.deleted {
                        names.remove(&m.name);
                    } else {
                        names.insert(m.name.clone(), seen.generation);
                    }
                    namespaces.set(&m.namespace, names.len());
                    // A charge changes only `status.used`: no recount for it.
                    if !seen.deleted && seen.object.spec != seen.object.status {
                        dirty.insert(m.namespace.clone());
                    }
                    held.retain(|_, names| !names.is_empty());
                }
            }
            Some(seen) = object_events.recv() => {
                let ns = &seen.object.metadata.namespace;
                if seen.deleted && held.contains_key(ns) {
                    dirty.insert(ns.clone());
                }
            }
            _ = soon.tick() => {
                for ns in std::mem::take(&mut dirty) {
                    if held.contains_key(&ns) && !recount(&registry, custom.as_deref(), &ns, &in_flight).await {
                        dirty.insert(ns);
                    }
                }
            }
            _ = resync.tick() => {
                dirty.extend(held.keys().cloned());
            }
        }
    }
}

/// Keeps `namespaces` to the namespaces that hold objects of `storage` (LimitRanges).
pub(crate) async fn follow_namespaces(
    storage: Arc<dyn RestStorage>,
    namespaces: Arc<NamespaceSet>,
) {
    let (tx, mut events) = mpsc::channel::<Seen<Object>>(256);
    let mut tasks = JoinSet::new();
    tasks.spawn(follow::<Object>(storage, tx));
    let mut held: HashMap<String, HashMap<String, u64>> = HashMap::new();
    while let Some(seen) = events.recv().await {
        if seen.listed {
            for (ns, names) in held.iter_mut() {
                names.retain(|_, g| *g >= seen.generation);
                namespaces.set(ns, names.len());
            }
            namespaces.set_listed();
        } else {
            let m = &seen.object.metadata;
            let names = held.entry(m.namespace.clone()).or_default();
            if seen.deleted {
                names.remove(&m.name);
            } else {
                names.insert(m.name.clone(), seen.generation);
            }
            namespaces.set(&m.namespace, names.len());
        }
        held.retain(|_, names| !names.is_empty());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charged_objects_not_stored_yet_are_counted_once() {
        let pod = |name: &str| json!({"metadata": {"name": name}});
        let charge = |resource: &str, name: &str| Charge {
            resource: capstan_meta::GroupResource::new("", resource),
            object: pod(name),
            update: false,
            written: true,
        };
        let mut stored = vec![pod("a"), pod("b")];
        let charges = [
            charge("pods", "b"),       // stored already: not again
            charge("pods", "c"),       // not stored yet: counted
            charge("configmaps", "d"), // another resource
        ];
        add_unstored(&mut stored, &charges, "", "pods");
        let names: Vec<&str> = stored
            .iter()
            .map(|o| o["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["a", "b", "c"]);
    }

    #[test]
    fn quota_names_map_to_the_resources_they_count() {
        let pair = |g: &str, r: &str| Some((g.to_string(), r.to_string()));
        assert_eq!(counted("requests.cpu"), pair("", "pods"));
        assert_eq!(counted("limits.memory"), pair("", "pods"));
        assert_eq!(
            counted("requests.storage"),
            pair("", "persistentvolumeclaims")
        );
        assert_eq!(
            counted("gold.storageclass.storage.k8s.io/requests.storage"),
            pair("", "persistentvolumeclaims")
        );
        assert_eq!(
            counted("count/deployments.apps"),
            pair("apps", "deployments")
        );
        assert_eq!(counted("count/configmaps"), pair("", "configmaps"));
        assert_eq!(counted("secrets"), pair("", "secrets"));
        assert_eq!(counted("example.com/gpu"), None);
    }
}
