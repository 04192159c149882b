//! CustomResourceDefinitions: a CRD whose names conflict with no other gets them accepted,
//! its resources served and `Established`; a deleted CRD is `Terminating` while its objects
//! are deleted, then its finalizer goes, then its resources (upstream's naming, establishing
//! and finalizing controllers, in kube-apiserver's apiextensions server).

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use capstan_apiextensions::definition::CLEANUP_FINALIZER;
use capstan_apiextensions::{CustomResourceDefinitionStrategy, CustomResources};
use capstan_registry::{DeleteOptions, GenericStore, ListOptions, RestStorage};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    CustomResourceDefinition, CustomResourceDefinitionCondition, CustomResourceDefinitionNames,
    CustomResourceDefinitionStatus,
};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tracing::debug;

use crate::watching::{Seen, follow};

/// How often CRDs whose objects are being deleted are looked at again.
const RETRY: Duration = Duration::from_secs(1);

/// Follows the CRDs in `crds`, serving their resources through `served`.
pub async fn run(
    crds: Arc<GenericStore<CustomResourceDefinitionStrategy>>,
    served: Arc<CustomResources>,
) {
    let (tx, mut events) = mpsc::channel::<Seen<CustomResourceDefinition>>(256);
    let mut tasks = JoinSet::new();
    tasks.spawn(follow::<CustomResourceDefinition>(crds.clone(), tx));
    let mut known: BTreeMap<String, CustomResourceDefinition> = BTreeMap::new();
    let mut generations: BTreeMap<String, u64> = BTreeMap::new();
    let mut terminating: HashSet<String> = HashSet::new();
    // The names each CRD holds, by CRD name, with its group: the first to have them keeps
    // them.
    let mut accepted: Accepted = BTreeMap::new();
    let mut retry = tokio::time::interval(RETRY);
    loop {
        tokio::select! {
            Some(seen) = events.recv() => {
                if seen.listed {
                    let gone: Vec<String> = generations
                        .iter()
                        .filter(|(_, g)| **g < seen.generation)
                        .map(|(n, _)| n.clone())
                        .collect();
                    for name in gone {
                        forget(&name, &mut generations, &mut known, &mut terminating, &mut accepted);
                        served.remove(&name);
                    }
                    continue;
                }
                let name = seen.object.metadata.name.clone().unwrap_or_default();
                if seen.deleted {
                    forget(&name, &mut generations, &mut known, &mut terminating, &mut accepted);
                    served.remove(&name);
                    continue;
                }
                if let Some(names) = seen
                    .object
                    .status
                    .as_ref()
                    .and_then(|s| s.accepted_names.clone())
                    .filter(|n| !n.plural.is_empty())
                {
                    accepted
                        .entry(name.clone())
                        .or_insert((seen.object.spec.group.clone(), names));
                }
                generations.insert(name.clone(), seen.generation);
                known.insert(name.clone(), seen.object);
                if reconcile(&crds, &served, &known, &mut accepted, &name).await {
                    terminating.insert(name);
                }
            }
            _ = retry.tick() => {
                for name in terminating.clone() {
                    if !reconcile(&crds, &served, &known, &mut accepted, &name).await {
                        terminating.remove(&name);
                    }
                }
            }
            else => return,
        }
    }
}

/// Drops what the controller keeps of a CRD that is gone.
fn forget(
    name: &str,
    generations: &mut BTreeMap<String, u64>,
    known: &mut BTreeMap<String, CustomResourceDefinition>,
    terminating: &mut HashSet<String>,
    accepted: &mut Accepted,
) {
    generations.remove(name);
    known.remove(name);
    terminating.remove(name);
    accepted.remove(name);
}

/// The names CRDs hold, by CRD name, with their group.
type Accepted = BTreeMap<String, (String, CustomResourceDefinitionNames)>;

/// Brings one CRD's status and serving in line; true while it is being finalized.
async fn reconcile(
    crds: &GenericStore<CustomResourceDefinitionStrategy>,
    served: &CustomResources,
    known: &BTreeMap<String, CustomResourceDefinition>,
    accepted: &mut Accepted,
    name: &str,
) -> bool {
    let Some(crd) = known.get(name) else {
        return false;
    };
    if crd.metadata.deletion_timestamp.is_some() {
        return finalize(crds, served, crd).await;
    }
    let held = accepted
        .iter()
        .filter(|(n, (group, _))| n.as_str() != name && *group == crd.spec.group)
        .map(|(_, (_, names))| names);
    let conflict = conflicting_name(&crd.spec.names, held);
    if conflict.is_none() {
        accepted.insert(
            name.to_string(),
            (crd.spec.group.clone(), crd.spec.names.clone()),
        );
    }
    let accepted = conflict.is_none();
    let mut conditions = vec![match &conflict {
        None => condition("NamesAccepted", "True", "NoConflicts", "no conflicts found"),
        Some(message) => condition("NamesAccepted", "False", "NameConflict", message),
    }];
    if accepted {
        served.install(crd);
        conditions.push(condition(
            "Established",
            "True",
            "InitialNamesAccepted",
            "the initial names have been accepted",
        ));
    } else if !capstan_apiextensions::definition::established(crd) {
        conditions.push(condition(
            "Established",
            "False",
            "NotAccepted",
            "not all names are accepted",
        ));
    }
    let accepted_names = accepted.then(|| crd.spec.names.clone());
    write_status(crds, crd, conditions, accepted_names).await;
    false
}

/// The first of `names` that a CRD of the same group already holds, as upstream words it.
fn conflicting_name<'a>(
    names: &CustomResourceDefinitionNames,
    held: impl Iterator<Item = &'a CustomResourceDefinitionNames>,
) -> Option<String> {
    for taken in held {
        let mut resource_names: Vec<&str> = vec![&taken.plural];
        resource_names.extend(taken.singular.as_deref());
        resource_names.extend(taken.short_names.iter().flatten().map(String::as_str));
        let mut asked: Vec<&str> = vec![&names.plural];
        asked.extend(names.singular.as_deref());
        asked.extend(names.short_names.iter().flatten().map(String::as_str));
        if let Some(n) = asked.iter().find(|n| resource_names.contains(n)) {
            return Some(format!("\"{n}\" is already in use"));
        }
        let kinds = [Some(taken.kind.as_str()), taken.list_kind.as_deref()];
        for kind in [Some(names.kind.as_str()), names.list_kind.as_deref()] {
            if kind.is_some() && kinds.contains(&kind) {
                return Some(format!(
                    "\"{}\" is already in use",
                    kind.unwrap_or_default()
                ));
            }
        }
    }
    None
}

fn condition(
    type_: &str,
    status: &str,
    reason: &str,
    message: &str,
) -> CustomResourceDefinitionCondition {
    CustomResourceDefinitionCondition {
        type_: type_.into(),
        status: status.into(),
        reason: Some(reason.into()),
        message: Some(message.into()),
        last_transition_time: Some(capstan_meta::time::now()),
        observed_generation: None,
    }
}

/// `status` with `conditions` set (keeping the transition time of those whose status
/// stays) and the accepted names; `None` when that changes nothing.
fn merged_status(
    status: Option<&CustomResourceDefinitionStatus>,
    conditions: &[CustomResourceDefinitionCondition],
    accepted_names: Option<&CustomResourceDefinitionNames>,
) -> Option<CustomResourceDefinitionStatus> {
    let mut status = status.cloned().unwrap_or_default();
    let mut changed = false;
    let current = status.conditions.get_or_insert_with(Vec::new);
    for wanted in conditions {
        let mut wanted = wanted.clone();
        match current.iter_mut().find(|c| c.type_ == wanted.type_) {
            Some(c)
                if c.status == wanted.status
                    && c.reason == wanted.reason
                    && c.message == wanted.message => {}
            Some(c) => {
                if c.status == wanted.status {
                    wanted.last_transition_time = c.last_transition_time.clone();
                }
                *c = wanted;
                changed = true;
            }
            None => {
                current.push(wanted);
                changed = true;
            }
        }
    }
    if let Some(names) = accepted_names
        && status.accepted_names.as_ref() != Some(names)
    {
        status.accepted_names = Some(names.clone());
        changed = true;
    }
    changed.then_some(status)
}

/// Writes [`merged_status`] of the stored CRD, when it changes something of `seen`.
async fn write_status(
    crds: &GenericStore<CustomResourceDefinitionStrategy>,
    seen: &CustomResourceDefinition,
    conditions: Vec<CustomResourceDefinitionCondition>,
    accepted_names: Option<CustomResourceDefinitionNames>,
) {
    if merged_status(seen.status.as_ref(), &conditions, accepted_names.as_ref()).is_none() {
        return;
    }
    let name = seen.metadata.name.as_deref().unwrap_or_default();
    let result = crds
        .update_with("", name, false, |crd| {
            if let Some(status) =
                merged_status(crd.status.as_ref(), &conditions, accepted_names.as_ref())
            {
                crd.status = Some(status);
            }
            Ok(())
        })
        .await;
    if let Err(err) = result {
        debug!(%err, crd = name, "crd controller: status not written");
    }
}

/// Deletes a terminating CRD's objects, then lets the CRD go; true while objects remain.
async fn finalize(
    crds: &GenericStore<CustomResourceDefinitionStrategy>,
    served: &CustomResources,
    crd: &CustomResourceDefinition,
) -> bool {
    let name = crd.metadata.name.clone().unwrap_or_default();
    if !crd
        .metadata
        .finalizers
        .iter()
        .flatten()
        .any(|f| f == CLEANUP_FINALIZER)
    {
        return false;
    }
    // The condition is stored before creates are refused, so a client refused
    // always reads the reason, as with upstream (whose handler reads the condition).
    write_status(
        crds,
        crd,
        vec![condition(
            "Terminating",
            "True",
            "InstanceDeletionInProgress",
            "CustomResource deletion is in progress",
        )],
        None,
    )
    .await;
    served.terminate(&name);
    if let Some(store) = served.store(&name) {
        let remaining = match store.list("", &ListOptions::default()).await {
            Ok(list) => {
                let list: serde_json::Value =
                    serde_json::from_slice(&list.body.into_bytes()).unwrap_or_default();
                list["items"].as_array().map_or(0, Vec::len)
            }
            Err(err) => {
                debug!(%err, crd = %name, "crd controller: objects not listed");
                return true;
            }
        };
        if remaining > 0 {
            let deleted = store
                .delete_collection("", &ListOptions::default(), &DeleteOptions::default())
                .await;
            if let Err(err) = deleted {
                debug!(%err, crd = %name, "crd controller: objects not deleted");
            }
            return true;
        }
    }
    served.remove(&name);
    let released = crds
        .update_with("", &name, false, |crd| {
            if let Some(f) = crd.metadata.finalizers.as_mut() {
                f.retain(|f| f != CLEANUP_FINALIZER);
            }
            Ok(())
        })
        .await;
    if let Err(err) = released {
        debug!(%err, crd = %name, "crd controller: finalizer not removed");
        return true;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn crd(name: &str, plural: &str, kind: &str) -> CustomResourceDefinition {
        serde_json::from_value(json!({
            "metadata": {"name": name},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": plural, "singular": plural.trim_end_matches('s'), "kind": kind, "listKind": format!("{kind}List"), "shortNames": ["sh"]},
                     "versions": []}
        }))
        .unwrap()
    }

    #[test]
    fn names_another_crd_holds_conflict() {
        let shop = crd("shops.example.com", "shops", "Shop");
        let store = crd("stores.example.com", "stores", "Store");
        let same_kind = crd("items.example.com", "items", "Shop");
        let held = [&shop.spec.names];
        // `sh`, the short name both ask for.
        assert_eq!(
            conflicting_name(&store.spec.names, held.into_iter()).as_deref(),
            Some("\"sh\" is already in use")
        );
        let mut other = same_kind.spec.names.clone();
        other.short_names = None;
        assert_eq!(
            conflicting_name(&other, held.into_iter()).as_deref(),
            Some("\"Shop\" is already in use")
        );
        let mut free = store.spec.names.clone();
        free.short_names = None;
        assert_eq!(conflicting_name(&free, held.into_iter()), None);
    }
}
