//! The volume plugins: VolumeRestrictions (disks that cannot be shared, ReadWriteOncePod
//! claims), NodeVolumeLimits (CSI attach limits from CSINode), VolumeZone (zone labels of
//! bound volumes) and VolumeBinding (claims bound, or bindable on the node: a matching
//! PersistentVolume or dynamic provisioning within the class's allowed topologies).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use capstan_meta::labels::LabelSelector;
use k8s_openapi::api::core::v1::{NodeSelector, PersistentVolume, PersistentVolumeClaim};

use std::time::Duration;

use capstan_client::PatchType;
use k8s_openapi::api::core::v1::ObjectReference;

use crate::cache::{Cache, NodeInfo};
use crate::framework::{
    BindContext, BoxFuture, Filter, PodInfo, PreBind, Rejection, Reserve, StateValue,
};
use crate::plugins::node_selector_matches;
use crate::volumes::{PodVolume, VolumeIndex, pod_volumes, storage_bytes};

/// The labels whose values on a volume must match the node's.
const ZONE_LABELS: &[&str] = &[
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
];

/// The provisioner of classes that cannot provision.
const NO_PROVISIONER: &str = "kubernetes.io/no-provisioner";

fn claim_names(volumes: &[PodVolume]) -> impl Iterator<Item = &str> {
    volumes.iter().filter_map(|v| match v {
        PodVolume::Claim(name) => Some(name.as_str()),
        _ => None,
    })
}

/// The VolumeRestrictions plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct VolumeRestrictions;

struct RestrictionsState {
    disks: Vec<PodVolume>,
}

impl Filter for VolumeRestrictions {
    fn name(&self) -> &'static str {
        "VolumeRestrictions"
    }

    fn pre_filter(&self, pod: &PodInfo, cache: &Cache) -> Result<Option<StateValue>, Rejection> {
        let volumes = pod_volumes(&pod.pod);
        if volumes.is_empty() {
            return Ok(None);
        }
        let index = cache.volume_index();
        let ns = pod.namespace();
        let once: Vec<&str> = claim_names(&volumes)
            .filter(|name| {
                index.claim(ns, name).is_some_and(|c| {
                    c.spec
                        .as_ref()
                        .and_then(|s| s.access_modes.as_ref())
                        .is_some_and(|m| m.iter().any(|m| m == "ReadWriteOncePod"))
                })
            })
            .collect();
        if !once.is_empty() {
            let taken = cache.placed_pods().any(|(key, p)| {
                *key != pod.key
                    && p.namespace == ns
                    && claim_names(&p.volumes).any(|c| once.contains(&c))
            });
            if taken {
                return Err(Rejection::resolvable(
                    "node has pod using PersistentVolumeClaim with the same name and ReadWriteOncePod access mode",
                ));
            }
        }
        let disks: Vec<PodVolume> = volumes
            .into_iter()
            .filter(|v| !matches!(v, PodVolume::Claim(_)))
            .collect();
        Ok((!disks.is_empty()).then(|| Box::new(RestrictionsState { disks }) as StateValue))
    }

    fn filter(&self, pod: &PodInfo, node: &NodeInfo) -> Result<(), Rejection> {
        let Some(state) = pod.state.get::<RestrictionsState>() else {
            return Ok(());
        };
        let conflict = node.pods.values().any(|p| {
            p.volumes
                .iter()
                .any(|theirs| state.disks.iter().any(|mine| mine.conflicts_with(theirs)))
        });
        if conflict {
            Err(Rejection::resolvable("node(s) had no available disk"))
        } else {
            Ok(())
        }
    }
}

/// The NodeVolumeLimits plugin (CSI volumes against CSINode's `allocatable.count`).
#[derive(Debug, Clone, Copy, Default)]
pub struct NodeVolumeLimits;

struct LimitsState {
    /// The pod's CSI volumes: (driver, volume handle).
    volumes: Vec<(String, String)>,
    index: Arc<VolumeIndex>,
}

/// The CSI driver and handle of claim `name` in `namespace`: from its bound volume, or, when
/// unbound, its class's provisioner with a placeholder handle.
fn csi_volume(index: &VolumeIndex, namespace: &str, name: &str) -> Option<(String, String)> {
    let claim = index.claim(namespace, name)?;
    if let Some(volume) = index.bound_volume(claim) {
        let csi = volume.spec.as_ref()?.csi.as_ref()?;
        return Some((csi.driver.clone(), csi.volume_handle.clone()));
    }
    let class = index.classes.get(VolumeIndex::class_name(claim))?;
    Some((class.provisioner.clone(), format!("{namespace}/{name}")))
}

impl Filter for NodeVolumeLimits {
    fn name(&self) -> &'static str {
        "NodeVolumeLimits"
    }

    fn pre_filter(&self, pod: &PodInfo, cache: &Cache) -> Result<Option<StateValue>, Rejection> {
        let volumes = pod_volumes(&pod.pod);
        if !volumes.iter().any(|v| matches!(v, PodVolume::Claim(_))) {
            return Ok(None);
        }
        let index = cache.volume_index();
        let csi: Vec<(String, String)> = claim_names(&volumes)
            .filter_map(|name| csi_volume(&index, pod.namespace(), name))
            .collect();
        Ok((!csi.is_empty()).then(|| {
            Box::new(LimitsState {
                volumes: csi,
                index,
            }) as StateValue
        }))
    }

    fn filter(&self, pod: &PodInfo, node: &NodeInfo) -> Result<(), Rejection> {
        let Some(state) = pod.state.get::<LimitsState>() else {
            return Ok(());
        };
        let Some(csi_node) = state.index.csi_nodes.get(node.name()) else {
            return Ok(());
        };
        let limit = |driver: &str| {
            csi_node
                .spec
                .drivers
                .iter()
                .find(|d| d.name == driver)
                .and_then(|d| d.allocatable.as_ref()?.count)
        };
        let mut attached: HashMap<&str, HashSet<String>> = HashMap::new();
        for placed in node.pods.values() {
            for name in claim_names(&placed.volumes) {
                if let Some((driver, handle)) = csi_volume(&state.index, &placed.namespace, name)
                    && let Some(d) = state.volumes.iter().find(|(d, _)| *d == driver)
                {
                    attached.entry(d.0.as_str()).or_default().insert(handle);
                }
            }
        }
        let mut new: HashMap<&str, HashSet<&str>> = HashMap::new();
        for (driver, handle) in &state.volumes {
            if !attached
                .get(driver.as_str())
                .is_some_and(|a| a.contains(handle))
            {
                new.entry(driver).or_default().insert(handle);
            }
        }
        for (driver, handles) in new {
            if let Some(max) = limit(driver) {
                let used = attached.get(driver).map_or(0, HashSet::len);
                if used + handles.len() > max.max(0) as usize {
                    return Err(Rejection::resolvable("node(s) exceed max volume count"));
                }
            }
        }
        Ok(())
    }
}

/// The VolumeZone plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct VolumeZone;

struct ZoneState {
    /// (label, allowed values) of the pod's bound volumes.
    required: Vec<(String, Vec<String>)>,
}

impl Filter for VolumeZone {
    fn name(&self) -> &'static str {
        "VolumeZone"
    }

    fn pre_filter(&self, pod: &PodInfo, cache: &Cache) -> Result<Option<StateValue>, Rejection> {
        let volumes = pod_volumes(&pod.pod);
        let index = cache.volume_index();
        let mut required = Vec::new();
        for name in claim_names(&volumes) {
            let Some(volume) = index
                .claim(pod.namespace(), name)
                .and_then(|c| index.bound_volume(c))
            else {
                continue;
            };
            for key in ZONE_LABELS {
                if let Some(value) = volume.metadata.labels.as_ref().and_then(|l| l.get(*key)) {
                    let values = value.split("__").map(str::to_string).collect();
                    required.push((key.to_string(), values));
                }
            }
        }
        Ok((!required.is_empty()).then(|| Box::new(ZoneState { required }) as StateValue))
    }

    fn filter(&self, pod: &PodInfo, node: &NodeInfo) -> Result<(), Rejection> {
        let Some(state) = pod.state.get::<ZoneState>() else {
            return Ok(());
        };
        // A node without any zone label takes any volume, as upstream.
        if !ZONE_LABELS.iter().any(|k| node.label(k).is_some()) {
            return Ok(());
        }
        for (key, values) in &state.required {
            if !node
                .label(key)
                .is_some_and(|v| values.iter().any(|x| x == v))
            {
                return Err(Rejection::unresolvable(
                    "node(s) had no available volume zone",
                ));
            }
        }
        Ok(())
    }
}

/// The VolumeBinding plugin.
#[derive(Debug, Clone, Copy)]
pub struct VolumeBinding {
    /// How long PreBind waits for the claims to be bound (`bindTimeoutSeconds`).
    pub bind_timeout: Duration,
}

impl Default for VolumeBinding {
    fn default() -> Self {
        Self {
            bind_timeout: Duration::from_secs(600),
        }
    }
}

/// What Reserve decided for the pod's unbound claims, carried to PreBind.
#[derive(Debug)]
struct BindingPlan {
    actions: Vec<VolumeAction>,
}

/// What VolumeBinding found for the pod's claims.
#[derive(Debug)]
pub struct BindingState {
    /// Node affinity of the volumes of bound claims.
    bound_affinity: Vec<NodeSelector>,
    /// A bound claim names a volume that does not exist.
    missing_volume: bool,
    /// Unbound claims of WaitForFirstConsumer classes.
    to_bind: Vec<PersistentVolumeClaim>,
    index: Arc<VolumeIndex>,
}

/// How a claim gets its volume once the node is chosen.
#[derive(Debug, Clone, PartialEq)]
pub enum VolumeAction {
    /// Bind this existing volume to the claim (its `claimRef`).
    Bind {
        /// The claim.
        claim: PersistentVolumeClaim,
        /// The volume.
        volume: Box<PersistentVolume>,
    },
    /// Have the class's provisioner create a volume on the node (the claim's
    /// `volume.kubernetes.io/selected-node` annotation).
    Provision {
        /// The claim.
        claim: PersistentVolumeClaim,
    },
}

fn volume_fits_node(volume: &PersistentVolume, node: &NodeInfo) -> bool {
    volume
        .spec
        .as_ref()
        .and_then(|s| s.node_affinity.as_ref())
        .and_then(|a| a.required.as_ref())
        .is_none_or(|r| node_selector_matches(&r.node_selector_terms, node))
}

/// The smallest available volume that satisfies `claim` on `node` (a volume pre-bound to
/// the claim first), skipping `taken`.
fn matching_volume<'a>(
    index: &'a VolumeIndex,
    claim: &PersistentVolumeClaim,
    node: &NodeInfo,
    taken: &HashSet<String>,
) -> Option<&'a PersistentVolume> {
    let spec = claim.spec.as_ref()?;
    let ns = claim.metadata.namespace.as_deref().unwrap_or("");
    let name = claim.metadata.name.as_deref().unwrap_or("");
    let wanted = storage_bytes(spec.resources.as_ref().and_then(|r| r.requests.as_ref()));
    let class = VolumeIndex::class_name(claim);
    let mode = spec.volume_mode.as_deref().unwrap_or("Filesystem");
    let modes = spec.access_modes.clone().unwrap_or_default();
    let selector = spec
        .selector
        .as_ref()
        .and_then(|s| LabelSelector::from_api(s).ok());
    let mut best: Option<(&PersistentVolume, i64)> = None;
    for volume in index.volumes.values() {
        let vname = volume.metadata.name.as_deref().unwrap_or("");
        let Some(vs) = volume.spec.as_ref() else {
            continue;
        };
        if taken.contains(vname) || volume.metadata.deletion_timestamp.is_some() {
            continue;
        }
        let pre_bound = vs
            .claim_ref
            .as_ref()
            .is_some_and(|r| r.namespace.as_deref() == Some(ns) && r.name.as_deref() == Some(name));
        if vs.claim_ref.is_some() && !pre_bound {
            continue;
        }
        let capacity = storage_bytes(vs.capacity.as_ref());
        let fits = vs.storage_class_name.as_deref().unwrap_or("") == class
            && vs.volume_mode.as_deref().unwrap_or("Filesystem") == mode
            && capacity >= wanted
            && modes
                .iter()
                .all(|m| vs.access_modes.iter().flatten().any(|v| v == m))
            && selector
                .as_ref()
                .is_none_or(|s| s.matches(volume.metadata.labels.as_ref()))
            && volume_fits_node(volume, node);
        if !fits {
            continue;
        }
        if pre_bound {
            return Some(volume);
        }
        if best.is_none_or(|(_, c)| capacity < c) {
            best = Some((volume, capacity));
        }
    }
    best.map(|(v, _)| v)
}

/// Whether the claim's class can provision a volume reachable from `node`.
fn can_provision(index: &VolumeIndex, claim: &PersistentVolumeClaim, node: &NodeInfo) -> bool {
    let Some(class) = index.classes.get(VolumeIndex::class_name(claim)) else {
        return false;
    };
    if class.provisioner == NO_PROVISIONER {
        return false;
    }
    class.allowed_topologies.as_ref().is_none_or(|terms| {
        terms.is_empty()
            || terms.iter().any(|t| {
                t.match_label_expressions.iter().flatten().all(|r| {
                    node.label(&r.key)
                        .is_some_and(|v| r.values.iter().any(|x| x == v))
                })
            })
    })
}

impl BindingState {
    /// What to do for each unbound claim if the pod goes to `node` (`None`: some claim
    /// cannot get a volume there).
    fn actions(&self, node: &NodeInfo) -> Option<Vec<VolumeAction>> {
        let mut taken = HashSet::new();
        let mut out = Vec::new();
        for claim in &self.to_bind {
            match matching_volume(&self.index, claim, node, &taken) {
                Some(volume) => {
                    taken.insert(volume.metadata.name.clone().unwrap_or_default());
                    out.push(VolumeAction::Bind {
                        claim: claim.clone(),
                        volume: Box::new(volume.clone()),
                    });
                }
                None if can_provision(&self.index, claim, node) => {
                    out.push(VolumeAction::Provision {
                        claim: claim.clone(),
                    });
                }
                None => return None,
            }
        }
        Some(out)
    }
}

impl Reserve for VolumeBinding {
    fn name(&self) -> &'static str {
        "VolumeBinding"
    }

    fn reserve(&self, pod: &PodInfo, node: &NodeInfo) -> Result<Option<StateValue>, Rejection> {
        let Some(state) = pod.state.get::<BindingState>() else {
            return Ok(None);
        };
        let actions = state.actions(node).ok_or_else(|| {
            Rejection::resolvable("node(s) didn't find available persistent volumes to bind")
        })?;
        Ok((!actions.is_empty()).then(|| Box::new(BindingPlan { actions }) as StateValue))
    }
}

impl PreBind for VolumeBinding {
    fn name(&self) -> &'static str {
        "VolumeBinding"
    }

    /// Binds the chosen volumes to their claims (`claimRef`) and asks for provisioning on the
    /// node (`volume.kubernetes.io/selected-node`), then waits for every claim to be bound
    /// (by the volume controller and provisioners) for at most `bind_timeout`.
    fn pre_bind<'a>(
        &'a self,
        cx: &'a dyn BindContext,
        pod: &'a PodInfo,
        node: &'a str,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let Some(plan) = pod.state.get::<BindingPlan>() else {
                return Ok(());
            };
            for action in &plan.actions {
                carry_out(cx, action, node).await?;
            }
            let claims: Vec<(String, String)> = plan
                .actions
                .iter()
                .map(|a| {
                    let claim = a.claim();
                    (
                        claim.metadata.namespace.clone().unwrap_or_default(),
                        claim.metadata.name.clone().unwrap_or_default(),
                    )
                })
                .collect();
            let deadline = tokio::time::Instant::now() + self.bind_timeout;
            loop {
                let index = cx.volume_index();
                let all_bound = claims.iter().all(|(ns, name)| {
                    index.claim(ns, name).is_some_and(|c| {
                        c.spec
                            .as_ref()
                            .and_then(|s| s.volume_name.as_deref())
                            .is_some_and(|v| !v.is_empty())
                            && c.status.as_ref().and_then(|s| s.phase.as_deref()) == Some("Bound")
                    })
                });
                if all_bound {
                    return Ok(());
                }
                if tokio::time::Instant::now() >= deadline {
                    return Err("the pod's volumes were not bound in time".into());
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        })
    }
}

impl VolumeAction {
    /// The claim the action is for.
    pub fn claim(&self) -> &PersistentVolumeClaim {
        match self {
            VolumeAction::Bind { claim, .. } | VolumeAction::Provision { claim } => claim,
        }
    }
}

/// One action through the API: the volume's `claimRef` (annotated
/// `pv.kubernetes.io/bound-by-controller`), or the claim's selected-node annotation.
async fn carry_out(cx: &dyn BindContext, action: &VolumeAction, node: &str) -> Result<(), String> {
    match action {
        VolumeAction::Bind { claim, volume } => {
            let mut volume = (**volume).clone();
            let spec = volume.spec.get_or_insert_with(Default::default);
            spec.claim_ref = Some(ObjectReference {
                api_version: Some("v1".into()),
                kind: Some("PersistentVolumeClaim".into()),
                namespace: claim.metadata.namespace.clone(),
                name: claim.metadata.name.clone(),
                uid: claim.metadata.uid.clone(),
                resource_version: claim.metadata.resource_version.clone(),
                ..Default::default()
            });
            volume
                .metadata
                .annotations
                .get_or_insert_with(Default::default)
                .insert("pv.kubernetes.io/bound-by-controller".into(), "yes".into());
            let name = volume.metadata.name.clone().unwrap_or_default();
            cx.client()
                .replace(None, &name, &volume)
                .await
                .map(|_: PersistentVolume| ())
                .map_err(|e| format!("binding volume {name}: {e}"))
        }
        VolumeAction::Provision { claim } => {
            let patch = serde_json::json!({"metadata": {"annotations": {
                "volume.kubernetes.io/selected-node": node}}});
            let name = claim.metadata.name.as_deref().unwrap_or("");
            cx.client()
                .patch::<PersistentVolumeClaim>(
                    claim.metadata.namespace.as_deref(),
                    name,
                    PatchType::Merge,
                    &patch,
                )
                .await
                .map(|_| ())
                .map_err(|e| format!("annotating claim {name}: {e}"))
        }
    }
}

impl Filter for VolumeBinding {
    fn name(&self) -> &'static str {
        "VolumeBinding"
    }

    fn pre_filter(&self, pod: &PodInfo, cache: &Cache) -> Result<Option<StateValue>, Rejection> {
        let volumes = pod_volumes(&pod.pod);
        if !volumes.iter().any(|v| matches!(v, PodVolume::Claim(_))) {
            return Ok(None);
        }
        let index = cache.volume_index();
        let mut state = BindingState {
            bound_affinity: Vec::new(),
            missing_volume: false,
            to_bind: Vec::new(),
            index: index.clone(),
        };
        for name in claim_names(&volumes) {
            let Some(claim) = index.claim(pod.namespace(), name) else {
                return Err(Rejection::unresolvable(format!(
                    "persistentvolumeclaim \"{name}\" not found"
                )));
            };
            if claim.metadata.deletion_timestamp.is_some() {
                return Err(Rejection::unresolvable(format!(
                    "persistentvolumeclaim \"{name}\" is being deleted"
                )));
            }
            let bound_to = claim
                .spec
                .as_ref()
                .and_then(|s| s.volume_name.as_deref())
                .filter(|v| !v.is_empty());
            match bound_to {
                Some(volume) => match index.volumes.get(volume) {
                    Some(v) => {
                        if let Some(required) = v
                            .spec
                            .as_ref()
                            .and_then(|s| s.node_affinity.as_ref())
                            .and_then(|a| a.required.clone())
                        {
                            state.bound_affinity.push(required);
                        }
                    }
                    None => state.missing_volume = true,
                },
                None if index.waits_for_consumer(claim) => state.to_bind.push(claim.clone()),
                None => {
                    return Err(Rejection::unresolvable(
                        "pod has unbound immediate PersistentVolumeClaims",
                    ));
                }
            }
        }
        Ok(Some(Box::new(state)))
    }

    fn filter(&self, pod: &PodInfo, node: &NodeInfo) -> Result<(), Rejection> {
        let Some(state) = pod.state.get::<BindingState>() else {
            return Ok(());
        };
        if state.missing_volume {
            return Err(Rejection::unresolvable(
                "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)",
            ));
        }
        if !state
            .bound_affinity
            .iter()
            .all(|r| node_selector_matches(&r.node_selector_terms, node))
        {
            return Err(Rejection::unresolvable(
                "node(s) had volume node affinity conflict",
            ));
        }
        if state.actions(node).is_none() {
            return Err(Rejection::unresolvable(
                "node(s) didn't find available persistent volumes to bind",
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::test_support::{cluster, feasible, node, pod};
    use serde_json::{Value, json};

    fn object<T: serde::de::DeserializeOwned>(v: Value) -> T {
        serde_json::from_value(v).unwrap()
    }

    fn with_claim(name: &str, claim: &str) -> k8s_openapi::api::core::v1::Pod {
        pod(
            name,
            json!({}),
            json!({"volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": claim}}]}),
        )
    }

    fn zoned_nodes() -> Vec<k8s_openapi::api::core::v1::Node> {
        vec![
            node("a1", json!({"topology.kubernetes.io/zone": "a"})),
            node("b1", json!({"topology.kubernetes.io/zone": "b"})),
        ]
    }

    fn claim(name: &str, class: &str, volume: Option<&str>) -> PersistentVolumeClaim {
        object(json!({"metadata": {"name": name, "namespace": "default"},
            "spec": {"storageClassName": class, "accessModes": ["ReadWriteOnce"],
                "volumeName": volume, "resources": {"requests": {"storage": "1Gi"}}},
            "status": {"phase": if volume.is_some() { "Bound" } else { "Pending" }}}))
    }

    fn volume(name: &str, class: &str, size: &str, zone: Option<&str>) -> PersistentVolume {
        let affinity = zone.map(|z| {
            json!({"required": {"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "topology.kubernetes.io/zone", "operator": "In", "values": [z]}]}]}})
        });
        object(
            json!({"metadata": {"name": name, "labels": zone.map(|z| json!({"topology.kubernetes.io/zone": z}))},
            "spec": {"storageClassName": class, "accessModes": ["ReadWriteOnce"],
                "capacity": {"storage": size}, "nodeAffinity": affinity,
                "hostPath": {"path": "/tmp"}}}),
        )
    }

    fn class(
        name: &str,
        provisioner: &str,
        mode: &str,
        zones: Option<&[&str]>,
    ) -> k8s_openapi::api::storage::v1::StorageClass {
        let topologies = zones.map(|z| {
            json!([{"matchLabelExpressions": [
            {"key": "topology.kubernetes.io/zone", "values": z}]}])
        });
        object(
            json!({"metadata": {"name": name}, "provisioner": provisioner,
            "volumeBindingMode": mode, "allowedTopologies": topologies}),
        )
    }

    fn with_index(mut cache: Cache, f: impl FnOnce(&mut VolumeIndex)) -> Cache {
        f(cache.volume_index_mut());
        cache
    }

    fn put_claim(index: &mut VolumeIndex, c: PersistentVolumeClaim) {
        let name = c.metadata.name.clone().unwrap();
        index.claims.insert(("default".into(), name), c);
    }

    #[test]
    fn wait_for_first_consumer_claims_go_where_a_volume_or_provisioning_can_follow() {
        let plugin = VolumeBinding::default();
        let cache = with_index(cluster(zoned_nodes(), vec![]), |ix| {
            ix.classes.insert(
                "local".into(),
                class("local", NO_PROVISIONER, "WaitForFirstConsumer", None),
            );
            ix.classes.insert(
                "zonal".into(),
                class(
                    "zonal",
                    "example.com/csi",
                    "WaitForFirstConsumer",
                    Some(&["b"]),
                ),
            );
            ix.classes.insert(
                "now".into(),
                class("now", "example.com/csi", "Immediate", None),
            );
            // Two local volumes in zone a: the smaller one that fits is chosen.
            ix.volumes
                .insert("small".into(), volume("small", "local", "512Mi", Some("a")));
            ix.volumes
                .insert("fits".into(), volume("fits", "local", "2Gi", Some("a")));
            ix.volumes
                .insert("big".into(), volume("big", "local", "10Gi", Some("a")));
            put_claim(ix, claim("static", "local", None));
            put_claim(ix, claim("dynamic", "zonal", None));
            put_claim(ix, claim("immediate", "now", None));
        });
        assert_eq!(
            feasible(&plugin, with_claim("p", "static"), &cache).unwrap(),
            ["a1"]
        );
        assert_eq!(
            feasible(&plugin, with_claim("p", "dynamic"), &cache).unwrap(),
            ["b1"]
        );
        assert_eq!(
            feasible(&plugin, with_claim("p", "immediate"), &cache).unwrap_err(),
            "pod has unbound immediate PersistentVolumeClaims"
        );
        assert_eq!(
            feasible(&plugin, with_claim("p", "missing"), &cache).unwrap_err(),
            "persistentvolumeclaim \"missing\" not found"
        );
        // Reserving a1 plans to bind the 2Gi volume.
        let mut info = PodInfo::new(with_claim("p", "static"));
        info.state
            .insert(plugin.pre_filter(&info, &cache).unwrap().unwrap());
        let plan = plugin
            .reserve(&info, cache.node("a1").unwrap())
            .unwrap()
            .unwrap();
        let plan = plan.downcast::<BindingPlan>().unwrap();
        let [VolumeAction::Bind { volume, .. }] = &plan.actions[..] else {
            panic!("{:?}", plan.actions)
        };
        assert_eq!(volume.metadata.name.as_deref(), Some("fits"));
    }

    #[test]
    fn bound_volumes_pin_pods_by_affinity_and_zone() {
        let cache = with_index(cluster(zoned_nodes(), vec![]), |ix| {
            ix.volumes
                .insert("pv-b".into(), volume("pv-b", "", "1Gi", Some("b")));
            put_claim(ix, claim("bound", "", Some("pv-b")));
            put_claim(ix, claim("dangling", "", Some("gone")));
        });
        assert_eq!(
            feasible(&VolumeBinding::default(), with_claim("p", "bound"), &cache).unwrap(),
            ["b1"]
        );
        assert_eq!(
            feasible(&VolumeZone, with_claim("p", "bound"), &cache).unwrap(),
            ["b1"]
        );
        assert!(
            feasible(
                &VolumeBinding::default(),
                with_claim("p", "dangling"),
                &cache
            )
            .unwrap()
            .is_empty()
        );
    }

    #[test]
    fn disks_conflict_and_csi_limits_count() {
        let disk = |name: &str, read_only: bool| {
            pod(
                name,
                json!({}),
                json!({"volumes": [{"name": "d",
                "gcePersistentDisk": {"pdName": "disk-1", "readOnly": read_only}}]}),
            )
        };
        let cache = cluster(zoned_nodes(), vec![(disk("writer", false), "a1")]);
        assert_eq!(
            feasible(&VolumeRestrictions, disk("reader", true), &cache).unwrap(),
            ["b1"]
        );
        let cache = cluster(zoned_nodes(), vec![(disk("reader", true), "a1")]);
        assert_eq!(
            feasible(&VolumeRestrictions, disk("other", true), &cache)
                .unwrap()
                .len(),
            2
        );

        // CSI: a1 allows one volume of the driver and already has one attached.
        let placed = with_claim("old", "c1");
        let cache = with_index(cluster(zoned_nodes(), vec![(placed, "a1")]), |ix| {
            for (name, handle) in [("v1", "h1"), ("v2", "h2")] {
                let mut v = volume(name, "", "1Gi", None);
                v.spec.as_mut().unwrap().host_path = None;
                v.spec.as_mut().unwrap().csi = Some(object(
                    json!({"driver": "example.com/csi", "volumeHandle": handle}),
                ));
                ix.volumes.insert(name.into(), v);
            }
            put_claim(ix, claim("c1", "", Some("v1")));
            put_claim(ix, claim("c2", "", Some("v2")));
            ix.csi_nodes.insert("a1".into(), object(json!({"metadata": {"name": "a1"},
                "spec": {"drivers": [{"name": "example.com/csi", "nodeID": "a1", "allocatable": {"count": 1}}]}})));
        });
        assert_eq!(
            feasible(&NodeVolumeLimits, with_claim("new", "c2"), &cache).unwrap(),
            ["b1"]
        );
        // The same volume again needs no new attachment.
        assert_eq!(
            feasible(&NodeVolumeLimits, with_claim("again", "c1"), &cache)
                .unwrap()
                .len(),
            2
        );
    }
}
