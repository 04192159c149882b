//! Storage object protection (upstream's pvc-protection and pv-protection controllers, in
//! kube-controller-manager): the finalizers the StorageObjectInUseProtection admission plugin
//! puts on claims and volumes go once a deleted claim has no pod using it any more, and once
//! a deleted volume is no longer bound.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use capstan_api::{PersistentVolumeClaimStrategy, PersistentVolumeStrategy, PodStrategy};
use capstan_meta::Strategy;
use capstan_registry::{GenericStore, RestStorage};
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use serde::Deserialize;
use tokio::sync::mpsc;

use crate::watching::{Seen, follow, follow_mentioning, nullable};

/// The finalizer of protected claims.
pub const CLAIM_FINALIZER: &str = "kubernetes.io/pvc-protection";
/// The finalizer of protected volumes.
pub const VOLUME_FINALIZER: &str = "kubernetes.io/pv-protection";

type Key = (String, String);

/// What the controller reads of a pod: its name, phase and volumes. The rest of the pod
/// (containers, managed fields, most of the status) is skipped while parsing.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ClaimingPod {
    metadata: crate::watching::Metadata,
    #[serde(deserialize_with = "nullable")]
    spec: ClaimingSpec,
    #[serde(deserialize_with = "nullable")]
    status: PodPhase,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ClaimingSpec {
    #[serde(deserialize_with = "nullable")]
    volumes: Vec<ClaimingVolume>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct ClaimingVolume {
    #[serde(deserialize_with = "nullable")]
    name: String,
    persistent_volume_claim: Option<ClaimSource>,
    ephemeral: Option<serde::de::IgnoredAny>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct ClaimSource {
    #[serde(deserialize_with = "nullable")]
    claim_name: String,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct PodPhase {
    phase: Option<String>,
}

/// The claims a pod that has not terminated uses (volumes and ephemeral volumes).
fn claims_of(pod: &ClaimingPod) -> Vec<String> {
    if matches!(pod.status.phase.as_deref(), Some("Succeeded" | "Failed")) {
        return Vec::new();
    }
    let name = &pod.metadata.name;
    pod.spec
        .volumes
        .iter()
        .filter_map(|v| match (&v.persistent_volume_claim, &v.ephemeral) {
            (Some(claim), _) => Some(claim.claim_name.clone()),
            (None, Some(_)) => Some(format!("{name}-{}", v.name)),
            _ => None,
        })
        .collect()
}

fn finalizing(
    meta: &k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta,
    finalizer: &str,
) -> bool {
    meta.deletion_timestamp.is_some() && meta.finalizers.iter().flatten().any(|f| f == finalizer)
}

/// Removes `finalizer` from the stored object.
async fn release<S>(store: &GenericStore<S>, namespace: &str, name: &str, finalizer: &str)
where
    S: Strategy,
    S::Object: schemars::JsonSchema,
{
    let removed = store
        .update_with(namespace, name, false, |obj| {
            let meta = capstan_meta::HasMetadata::metadata_mut(obj);
            if let Some(list) = meta.finalizers.as_mut() {
                list.retain(|f| f != finalizer);
            }
            Ok(())
        })
        .await;
    if let Err(err) = removed {
        tracing::debug!(namespace, name, %err, "removing a protection finalizer failed; the next change retries");
    }
}

/// Follows pods, claims and volumes and releases what is no longer in use, until stopped.
pub async fn run(
    pods: Arc<GenericStore<PodStrategy>>,
    claims: Arc<GenericStore<PersistentVolumeClaimStrategy>>,
    volumes: Arc<GenericStore<PersistentVolumeStrategy>>,
) {
    let (pods_tx, mut pod_events) = mpsc::channel::<Seen<ClaimingPod>>(256);
    let (claims_tx, mut claim_events) = mpsc::channel::<Seen<PersistentVolumeClaim>>(256);
    let (volumes_tx, mut volume_events) = mpsc::channel::<Seen<PersistentVolume>>(256);
    let mut followers = tokio::task::JoinSet::new();
    let source: Arc<dyn RestStorage> = pods.clone();
    // Only pods that use claims matter, and their volumes never change: the others'
    // events (most of a create burst) are not parsed.
    followers.spawn(follow_mentioning(
        source,
        pods_tx,
        &["\"persistentVolumeClaim\"", "\"ephemeral\""],
    ));
    let source: Arc<dyn RestStorage> = claims.clone();
    followers.spawn(follow(source, claims_tx));
    let source: Arc<dyn RestStorage> = volumes.clone();
    followers.spawn(follow(source, volumes_tx));

    // Claim → the pods using it; pod → the claims it uses; claims waiting for their users.
    let mut users: HashMap<Key, HashSet<String>> = HashMap::new();
    let mut used_by: HashMap<Key, Vec<String>> = HashMap::new();
    let mut waiting: HashSet<Key> = HashSet::new();
    // Claims are finalized only once every pod has been listed.
    let mut pods_listed = false;
    loop {
        tokio::select! {
            Some(seen) = pod_events.recv() => {
                if seen.listed {
                    pods_listed = true;
                } else {
                    let now = if seen.deleted { Vec::new() } else { claims_of(&seen.object) };
                    let crate::watching::Metadata { namespace: ns, name, .. } = seen.object.metadata;
                    let key = (ns.clone(), name.clone());
                    let before = used_by.remove(&key).unwrap_or_default();
                    for claim in &before {
                        if let Some(set) = users.get_mut(&(ns.clone(), claim.clone())) {
                            set.remove(&name);
                        }
                    }
                    for claim in &now {
                        users.entry((ns.clone(), claim.clone())).or_default().insert(name.clone());
                    }
                    if !now.is_empty() {
                        used_by.insert(key, now);
                    }
                    for claim in before {
                        let claim_key = (ns.clone(), claim);
                        let unused = users.get(&claim_key).is_none_or(HashSet::is_empty);
                        if unused && waiting.remove(&claim_key) {
                            release(&claims, &claim_key.0, &claim_key.1, CLAIM_FINALIZER).await;
                        }
                    }
                }
                if pods_listed {
                    let ready: Vec<Key> = waiting
                        .iter()
                        .filter(|k| users.get(*k).is_none_or(HashSet::is_empty))
                        .cloned()
                        .collect();
                    for key in ready {
                        waiting.remove(&key);
                        release(&claims, &key.0, &key.1, CLAIM_FINALIZER).await;
                    }
                }
            }
            Some(seen) = claim_events.recv() => {
                if seen.listed || seen.deleted {
                    continue;
                }
                let meta = &seen.object.metadata;
                if !finalizing(meta, CLAIM_FINALIZER) {
                    continue;
                }
                let key = (meta.namespace.clone().unwrap_or_default(), meta.name.clone().unwrap_or_default());
                if pods_listed && users.get(&key).is_none_or(HashSet::is_empty) {
                    release(&claims, &key.0, &key.1, CLAIM_FINALIZER).await;
                } else {
                    waiting.insert(key);
                }
            }
            Some(seen) = volume_events.recv() => {
                if seen.listed || seen.deleted {
                    continue;
                }
                let volume = &seen.object;
                let bound = volume.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Bound");
                if finalizing(&volume.metadata, VOLUME_FINALIZER) && !bound {
                    let name = volume.metadata.name.clone().unwrap_or_default();
                    release(&volumes, "", &name, VOLUME_FINALIZER).await;
                }
            }
            else => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn running_pods_use_their_claims_and_finished_ones_do_not() {
        let pod = |phase: &str| -> ClaimingPod {
            serde_json::from_value(
                json!({"metadata": {"name": "web"}, "spec": {"containers": [],
                "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": "db"}},
                            {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
                            {"name": "tmp", "emptyDir": {}}]},
                "status": {"phase": phase}}),
            )
            .unwrap()
        };
        assert_eq!(claims_of(&pod("Running")), ["db", "web-scratch"]);
        assert!(claims_of(&pod("Succeeded")).is_empty());
        // What a server may send as null reads as absent.
        let bare: ClaimingPod = serde_json::from_value(json!({"metadata": {"name": "web"},
            "spec": {"volumes": [{"name": "v", "persistentVolumeClaim": null}]}, "status": null}))
        .unwrap();
        assert!(claims_of(&bare).is_empty());
    }
}
