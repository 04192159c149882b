//! DynamicResources: pods that use ResourceClaims go where their claims can be met. An
//! allocated claim limits the pod to the nodes its allocation names; an unallocated one is
//! allocated on each node considered (the structured-parameters allocator) and, once a node
//! is chosen, the allocation is held in memory (Reserve) so that the next pods do not take
//! the same devices, then written with the pod's reservation before the pod is bound
//! (PreBind). Pods whose claims do not exist yet, are being deleted, or are reserved by as
//! many consumers as a claim allows, wait.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use capstan_client::PatchType;

use k8s_openapi::api::core::v1::{ContainerExtendedResourceRequest, NodeSelector, Pod};
use k8s_openapi::api::resource::v1::{
    AllocationResult, DeviceClaim, DeviceRequest, ResourceClaim, ResourceClaimConsumerReference,
    ResourceClaimSpec,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};

use crate::cache::{Cache, NodeInfo};
use crate::dra::allocator::{Allocator, Selectors};
use crate::dra::extended::{EXTENDED_CLAIM_ANNOTATION, backed_resources, requests_and_mappings};
use crate::dra::{
    CLAIM_FINALIZER, DraIndex, InUse, MAX_CONSUMERS, consumers, pod_claims, reserved_for,
};
use crate::framework::{
    BindContext, BoxFuture, Filter, PodInfo, PostFilter, PreBind, Rejection, Reserve, StateValue,
};
use crate::plugins::node_selector_matches;

/// Allocations this scheduler made that its informer has not shown yet.
#[derive(Debug, Default)]
struct InFlight {
    /// Claim uid → an allocation reserved for a pod being bound, not written yet.
    pending: HashMap<String, AllocationResult>,
    /// Claim uid → (namespace, name, the allocation written, the resourceVersion the write
    /// returned): kept until the informer's copy of the claim is that new.
    written: HashMap<String, (String, String, AllocationResult, u64)>,
}

/// The DynamicResources plugin.
#[derive(Debug, Clone)]
pub struct DynamicResources {
    selectors: Arc<Selectors>,
    in_flight: Arc<Mutex<InFlight>>,
    /// How long the device search may take on one node (`filterTimeout`; `None`: no limit).
    filter_timeout: Option<Duration>,
    /// How long PreBind waits for devices' binding conditions (`bindingTimeout`).
    binding_timeout: Duration,
}

impl Default for DynamicResources {
    fn default() -> Self {
        Self::new(Some(Duration::from_secs(10)), Duration::from_secs(600))
    }
}

/// What PreFilter learns of the pod's claims.
struct DraState {
    index: Arc<DraIndex>,
    /// The pod's claims, with allocations written by this scheduler but not seen yet.
    claims: Vec<Arc<ResourceClaim>>,
    /// Where each allocated claim can be used (`None`: anywhere, or not allocated).
    available_on: Vec<Option<NodeSelector>>,
    /// The claims to allocate (indexes into `claims`).
    to_allocate: Vec<usize>,
    /// What allocations this scheduler made that the index does not show yet hold (the
    /// index's own are asked of it, not copied).
    in_flight: InUse,
    /// The pod's extended resources backed by device classes, if any.
    extended: Option<Extended>,
    /// The allocations found for each node that can take the pod.
    found: Mutex<HashMap<String, NodeAllocation>>,
    /// Allocated claims (indexes into `claims`) that kept a node out: their allocation is
    /// for other nodes, or their devices failed (or timed out) binding. PostFilter may
    /// deallocate one.
    unavailable: Mutex<BTreeSet<usize>>,
}

/// A pod's extended resources backed by device classes.
enum Extended {
    /// The resources (name → units) to allocate devices for, on nodes that lack them.
    Wanted(BTreeMap<String, i64>),
    /// The claim an earlier attempt wrote for them (it failed after that): deleted by
    /// PostFilter, then the pod starts afresh.
    Stale(Arc<ResourceClaim>),
}

/// The claim for a pod's extended resources on one node, before it is written.
#[derive(Clone)]
struct ExtendedClaim {
    claim: ResourceClaim,
    /// Which request serves each container's resource (`status.extendedResourceClaimStatus`).
    mappings: Vec<ContainerExtendedResourceRequest>,
}

/// What a node's Filter found: an allocation per claim to allocate, and the claim for the
/// pod's extended resources with its allocation (last), if the node needs one.
struct NodeAllocation {
    allocations: Vec<AllocationResult>,
    extended: Option<ExtendedClaim>,
}

/// What Reserve hands the binding cycle.
struct DraBinding {
    claims: Vec<Arc<ResourceClaim>>,
    /// The allocation to write for each claim (`None`: already allocated).
    allocations: Vec<Option<AllocationResult>>,
    /// The claims PreBind reserved for the pod (indexes into `claims`), to release if the
    /// binding cycle fails.
    reserved: Mutex<Vec<usize>>,
    /// The claim to write for the pod's extended resources, with its allocation.
    extended: Option<(ExtendedClaim, AllocationResult)>,
    /// That claim once written (namespace, name), to delete if the binding cycle fails.
    created: Mutex<Option<(String, String)>>,
}

/// The name of the claim for a pod's extended resources until it is written (not a valid
/// object name, so no real claim has it).
const EXTENDED_IN_MEMORY: &str = "<extended-resources>";

/// The claim for `pod`'s extended resources with `requests`, as it will be written.
fn extended_claim(pod: &Pod, requests: Vec<DeviceRequest>) -> ResourceClaim {
    let name = pod.metadata.name.clone().unwrap_or_default();
    ResourceClaim {
        metadata: ObjectMeta {
            name: Some(EXTENDED_IN_MEMORY.into()),
            generate_name: Some(format!("{name}-extended-resources-")),
            namespace: pod.metadata.namespace.clone(),
            // Stands for the claim in in-flight allocations until it has its own.
            uid: Some(format!(
                "extended-resources/{}",
                pod.metadata.uid.as_deref().unwrap_or("")
            )),
            annotations: Some([(EXTENDED_CLAIM_ANNOTATION.to_string(), "true".to_string())].into()),
            owner_references: Some(vec![OwnerReference {
                api_version: "v1".into(),
                kind: "Pod".into(),
                name,
                uid: pod.metadata.uid.clone().unwrap_or_default(),
                controller: Some(true),
                ..Default::default()
            }]),
            ..Default::default()
        },
        spec: ResourceClaimSpec {
            devices: Some(DeviceClaim {
                requests: Some(requests),
                ..Default::default()
            }),
        },
        status: None,
    }
}

fn rv(claim: &ResourceClaim) -> u64 {
    claim
        .metadata
        .resource_version
        .as_deref()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn uid(claim: &ResourceClaim) -> &str {
    claim.metadata.uid.as_deref().unwrap_or("")
}

fn is_allocated(claim: &ResourceClaim) -> bool {
    claim
        .status
        .as_ref()
        .is_some_and(|s| s.allocation.is_some())
}

/// Whether the devices of `claim` that have binding conditions are ready: `Ok(true)` when
/// every binding condition is true in the claim's device status, `Err` when a binding
/// failure condition is (or is the claim is not allocated any more).
fn binding_ready(claim: &ResourceClaim) -> Result<bool, String> {
    let Some(allocation) = claim.status.as_ref().and_then(|s| s.allocation.as_ref()) else {
        return Ok(false);
    };
    let statuses = claim.status.as_ref().and_then(|s| s.devices.as_ref());
    let results = allocation
        .devices
        .iter()
        .flat_map(|d| d.results.iter().flatten());
    let mut ready = true;
    for result in results {
        let wanted = result.binding_conditions.as_deref().unwrap_or_default();
        if wanted.is_empty() {
            continue;
        }
        let conditions = statuses
            .into_iter()
            .flatten()
            .find(|d| {
                d.driver == result.driver && d.pool == result.pool && d.device == result.device
            })
            .and_then(|d| d.conditions.as_deref())
            .unwrap_or_default();
        let is_true = |kind: &str| {
            conditions
                .iter()
                .find(|c| c.type_ == kind)
                .filter(|c| c.status == "True")
        };
        for failure in result.binding_failure_conditions.iter().flatten() {
            if let Some(c) = is_true(failure) {
                return Err(format!(
                    "claim {} binding failed: reason={}, message={:?}",
                    claim.metadata.name.as_deref().unwrap_or(""),
                    c.reason,
                    c.message
                ));
            }
        }
        ready &= wanted.iter().all(|w| is_true(w).is_some());
    }
    Ok(ready)
}

/// Whether `claim` has devices with binding conditions.
fn has_binding_conditions(claim: &ResourceClaim) -> bool {
    claim
        .status
        .as_ref()
        .and_then(|s| s.allocation.as_ref())
        .and_then(|a| a.devices.as_ref())
        .into_iter()
        .flat_map(|d| d.results.iter().flatten())
        .any(|r| r.binding_conditions.as_ref().is_some_and(|b| !b.is_empty()))
}

impl DynamicResources {
    /// The plugin with DynamicResourcesArgs' `filterTimeout` (`None` or zero: no limit) and
    /// `bindingTimeout`.
    pub fn new(filter_timeout: Option<Duration>, binding_timeout: Duration) -> Self {
        Self {
            selectors: Arc::default(),
            in_flight: Arc::default(),
            filter_timeout: filter_timeout.filter(|t| !t.is_zero()),
            binding_timeout,
        }
    }

    /// Whether `claim`'s devices gave up binding: a failure condition is true, or binding
    /// conditions are still unmet `bindingTimeout` after the allocation.
    fn binding_gave_up(&self, claim: &ResourceClaim) -> bool {
        match binding_ready(claim) {
            Err(_) => true,
            Ok(true) => false,
            Ok(false) => {
                let allocated = claim
                    .status
                    .as_ref()
                    .and_then(|s| s.allocation.as_ref())
                    .and_then(|a| a.allocation_timestamp.as_ref());
                has_binding_conditions(claim)
                    && allocated.is_some_and(|t| {
                        let waited = jiff::Timestamp::now().duration_since(t.0);
                        waited.as_secs_f64() > self.binding_timeout.as_secs_f64()
                    })
            }
        }
    }

    fn in_flight(&self) -> std::sync::MutexGuard<'_, InFlight> {
        self.in_flight.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The pod's claims as this scheduler knows them (its own writes included), and the
    /// devices other claims hold.
    fn claims_and_devices(
        &self,
        claims: Vec<Arc<ResourceClaim>>,
        index: &DraIndex,
    ) -> Result<(Vec<Arc<ResourceClaim>>, InUse), Rejection> {
        let mut in_flight = self.in_flight();
        // Writes the informer has caught up with (or whose claim is gone) are forgotten.
        in_flight.written.retain(|_, (ns, name, _, written)| {
            index
                .claim(ns, name)
                .is_some_and(|c| !is_allocated(c) && rv(c) < *written)
        });
        let mut out = Vec::with_capacity(claims.len());
        for claim in claims {
            let id = uid(&claim);
            if in_flight.pending.contains_key(id) {
                return Err(Rejection::unresolvable(format!(
                    "resource claim {}/{} is in the process of being allocated",
                    claim.metadata.namespace.as_deref().unwrap_or(""),
                    claim.metadata.name.as_deref().unwrap_or("")
                )));
            }
            match in_flight.written.get(id) {
                Some((_, _, allocation, _)) if !is_allocated(&claim) => {
                    let mut known = (*claim).clone();
                    known.status.get_or_insert_with(Default::default).allocation =
                        Some(allocation.clone());
                    out.push(Arc::new(known));
                }
                _ => out.push(claim),
            }
        }
        let mut in_use = InUse::default();
        let extra = in_flight
            .pending
            .values()
            .chain(in_flight.written.values().map(|w| &w.2));
        for allocation in extra {
            let claim = ResourceClaim {
                status: Some(k8s_openapi::api::resource::v1::ResourceClaimStatus {
                    allocation: Some(allocation.clone()),
                    ..Default::default()
                }),
                ..Default::default()
            };
            in_use.add(&claim, index);
        }
        Ok((out, in_use))
    }
}

impl Filter for DynamicResources {
    fn name(&self) -> &'static str {
        "DynamicResources"
    }

    fn pre_filter(&self, pod: &PodInfo, cache: &Cache) -> Result<Option<StateValue>, Rejection> {
        let uses_claims = pod
            .pod
            .spec
            .as_ref()
            .and_then(|s| s.resource_claims.as_ref())
            .is_some_and(|c| !c.is_empty());
        if !uses_claims && pod.requests.scalar.is_empty() {
            return Ok(None);
        }
        let index = cache.dra_index();
        let backed = backed_resources(&pod.requests, &index);
        let extended = match index.extended_claim_of(&pod.pod) {
            _ if backed.is_empty() => None,
            Some(stale) => Some(Extended::Stale(stale.clone())),
            None => Some(Extended::Wanted(backed)),
        };
        let claims = match uses_claims {
            true => pod_claims(&pod.pod, &index).map_err(|p| Rejection::waiting(p.0))?,
            false => Vec::new(),
        };
        if claims.is_empty() && extended.is_none() {
            return Ok(None);
        }
        let (claims, in_flight) = self.claims_and_devices(claims, &index)?;
        let mut available_on = Vec::with_capacity(claims.len());
        let mut to_allocate = Vec::new();
        for (i, claim) in claims.iter().enumerate() {
            let allocation = claim.status.as_ref().and_then(|s| s.allocation.as_ref());
            match allocation {
                Some(a) => {
                    if consumers(claim) >= MAX_CONSUMERS && !reserved_for(claim, &pod.pod) {
                        return Err(Rejection::unresolvable("resourceclaim in use"));
                    }
                    available_on.push(a.node_selector.clone());
                }
                None => {
                    available_on.push(None);
                    to_allocate.push(i);
                }
            }
        }
        if !to_allocate.is_empty() {
            // Checks the requests and their classes once, for every node.
            let pending: Vec<&ResourceClaim> =
                to_allocate.iter().map(|i| claims[*i].as_ref()).collect();
            Allocator::new(&index, pending, &in_flight, &self.selectors)
                .map_err(Rejection::unresolvable)?;
        }
        Ok(Some(Box::new(DraState {
            index,
            claims,
            available_on,
            to_allocate,
            in_flight,
            extended,
            found: Mutex::default(),
            unavailable: Mutex::default(),
        })))
    }

    fn filter(&self, pod: &PodInfo, node: &NodeInfo) -> Result<(), Rejection> {
        let Some(state) = pod.state.get::<DraState>() else {
            return Ok(());
        };
        if let Some(Extended::Stale(_)) = &state.extended {
            return Err(Rejection::unresolvable(
                "cannot schedule extended resource claim",
            ));
        }
        let mut unavailable = Vec::new();
        for (i, claim) in state.claims.iter().enumerate() {
            let elsewhere = state.available_on[i]
                .as_ref()
                .is_some_and(|s| !node_selector_matches(&s.node_selector_terms, node));
            if elsewhere || (is_allocated(claim) && self.binding_gave_up(claim)) {
                unavailable.push(i);
            }
        }
        if !unavailable.is_empty() {
            state
                .unavailable
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .extend(unavailable);
            return Err(Rejection::unresolvable(
                "resourceclaim not available on the node",
            ));
        }
        // The extended resources this node does not offer itself come from devices.
        let extended = match &state.extended {
            Some(Extended::Wanted(backed)) => {
                let needed: BTreeMap<String, i64> = backed
                    .iter()
                    .filter(|(name, _)| node.allocatable.scalar.get(*name).is_none_or(|n| *n == 0))
                    .map(|(name, n)| (name.clone(), *n))
                    .collect();
                (!needed.is_empty()).then(|| {
                    let (requests, mappings) =
                        requests_and_mappings(&pod.pod, &needed, &state.index);
                    ExtendedClaim {
                        claim: extended_claim(&pod.pod, requests),
                        mappings,
                    }
                })
            }
            _ => None,
        };
        if state.to_allocate.is_empty() && extended.is_none() {
            return Ok(());
        }
        let mut pending: Vec<&ResourceClaim> = state
            .to_allocate
            .iter()
            .map(|i| state.claims[*i].as_ref())
            .collect();
        pending.extend(extended.as_ref().map(|e| &e.claim));
        let allocator = Allocator::new(&state.index, pending, &state.in_flight, &self.selectors)
            .map_err(Rejection::unresolvable)?;
        let deadline = self.filter_timeout.map(|t| std::time::Instant::now() + t);
        match allocator
            .allocate(node, deadline)
            .map_err(Rejection::unresolvable)?
        {
            Some(allocations) => {
                state
                    .found
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(
                        node.name().to_string(),
                        NodeAllocation {
                            allocations,
                            extended,
                        },
                    );
                Ok(())
            }
            None => Err(Rejection::unresolvable("cannot allocate all claims")),
        }
    }
}

impl Reserve for DynamicResources {
    fn name(&self) -> &'static str {
        "DynamicResources"
    }

    fn reserve(&self, pod: &PodInfo, node: &NodeInfo) -> Result<Option<StateValue>, Rejection> {
        let Some(state) = pod.state.get::<DraState>() else {
            return Ok(None);
        };
        let mut allocations: Vec<Option<AllocationResult>> = vec![None; state.claims.len()];
        let found = state
            .found
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(node.name());
        let mut extended = None;
        if let Some(found) = found {
            let mut in_flight = self.in_flight();
            let mut results = found.allocations.into_iter();
            let now = jiff::Timestamp::now();
            for (i, mut allocation) in state.to_allocate.iter().zip(results.by_ref()) {
                allocation.allocation_timestamp = Some(Time(now));
                in_flight
                    .pending
                    .insert(uid(&state.claims[*i]).to_string(), allocation.clone());
                allocations[*i] = Some(allocation);
            }
            if let (Some(claim), Some(mut allocation)) = (found.extended, results.next()) {
                allocation.allocation_timestamp = Some(Time(now));
                in_flight
                    .pending
                    .insert(uid(&claim.claim).to_string(), allocation.clone());
                extended = Some((claim, allocation));
            }
        } else if !state.to_allocate.is_empty() {
            return Err(Rejection::unresolvable(
                "claim allocation not found for node",
            ));
        }
        Ok(Some(Box::new(DraBinding {
            claims: state.claims.clone(),
            allocations,
            reserved: Mutex::default(),
            extended,
            created: Mutex::default(),
        })))
    }

    fn unreserve(&self, pod: &PodInfo, _node: &str) {
        let (claims, extended) = match (pod.state.get::<DraBinding>(), pod.state.get::<DraState>())
        {
            (Some(b), _) => (&b.claims, b.extended.as_ref().map(|e| &e.0.claim)),
            (None, Some(s)) => (&s.claims, None),
            (None, None) => return,
        };
        let mut in_flight = self.in_flight();
        for claim in claims.iter().map(|c| c.as_ref()).chain(extended) {
            in_flight.pending.remove(uid(claim));
        }
    }

    /// Takes the pod out of `reservedFor` of the claims PreBind reserved for it, with a
    /// strategic merge patch that needs no fresh copy of the claim (a failure is logged:
    /// the next attempt finds the claim reserved for the pod and goes on from there).
    fn unreserve_written<'a>(
        &'a self,
        cx: &'a dyn BindContext,
        pod: &'a PodInfo,
    ) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            let Some(binding) = pod.state.get::<DraBinding>() else {
                return;
            };
            let created = binding
                .created
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .take();
            if let Some((ns, name)) = created
                && let Err(e) = delete_claim(cx, &ns, &name).await
            {
                tracing::warn!(claim = name, error = %e, "deleting the extended resource claim failed");
            }
            let reserved =
                std::mem::take(&mut *binding.reserved.lock().unwrap_or_else(|p| p.into_inner()));
            let pod_uid = pod.pod.metadata.uid.as_deref().unwrap_or("");
            for i in reserved {
                let claim = &binding.claims[i];
                let ns = claim.metadata.namespace.as_deref();
                let name = claim.metadata.name.as_deref().unwrap_or("");
                let patch = serde_json::json!({"metadata": {"uid": uid(claim)},
                    "status": {"reservedFor": [{"$patch": "delete", "uid": pod_uid}]}});
                let patched = cx
                    .client()
                    .patch_status::<ResourceClaim>(ns, name, PatchType::Strategic, &patch)
                    .await;
                if let Err(e) = patched {
                    tracing::warn!(claim = name, error = %e, "unreserving a claim failed");
                }
            }
        })
    }
}

impl PostFilter for DynamicResources {
    fn name(&self) -> &'static str {
        "DynamicResources"
    }

    /// Deallocates one claim that kept nodes out (allocated elsewhere, or its devices gave
    /// up binding) when no other pod uses it, so that the next attempt allocates it afresh.
    fn post_filter<'a>(
        &'a self,
        cx: &'a dyn BindContext,
        pod: &'a PodInfo,
    ) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let Some(state) = pod.state.get::<DraState>() else {
                return Ok("no new claims to deallocate".into());
            };
            let unavailable = state
                .unavailable
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            let pod_uid = pod.pod.metadata.uid.as_deref().unwrap_or("");
            for i in unavailable {
                let claim = &state.claims[i];
                let users = claim
                    .status
                    .as_ref()
                    .and_then(|s| s.reserved_for.as_deref())
                    .unwrap_or_default();
                if users.len() > 1 || users.first().is_some_and(|u| u.uid != pod_uid) {
                    continue;
                }
                let mut freed = (**claim).clone();
                if let Some(status) = freed.status.as_mut() {
                    status.reserved_for = None;
                    status.allocation = None;
                    status.devices = None;
                }
                let ns = freed.metadata.namespace.clone();
                let name = freed.metadata.name.clone().unwrap_or_default();
                cx.client()
                    .replace_status(ns.as_deref(), &name, &freed)
                    .await
                    .map_err(|e| e.to_string())?;
                return Ok("deallocation of ResourceClaim completed".into());
            }
            if let Some(Extended::Stale(claim)) = &state.extended {
                let ns = claim.metadata.namespace.as_deref().unwrap_or("");
                let name = claim.metadata.name.as_deref().unwrap_or("");
                delete_claim(cx, ns, name).await?;
                return Ok("deletion of ResourceClaim completed".into());
            }
            Ok("still not schedulable".into())
        })
    }
}

impl DynamicResources {
    /// Writes `allocation` (when the claim is not allocated yet) and the pod's reservation
    /// into the claim's status, retrying on conflicts.
    async fn bind_claim(
        &self,
        cx: &dyn BindContext,
        pod: &PodInfo,
        mut claim: ResourceClaim,
        allocation: Option<&AllocationResult>,
    ) -> Result<(), String> {
        let client = cx.client();
        let ns = claim.metadata.namespace.clone().unwrap_or_default();
        let name = claim.metadata.name.clone().unwrap_or_default();
        let mut attempt = 0;
        loop {
            if attempt > 0 {
                claim = client
                    .get(Some(&ns), &name)
                    .await
                    .map_err(|e| format!("get updated claim {ns}/{name} after conflict: {e}"))?;
            }
            attempt += 1;
            if claim.metadata.deletion_timestamp.is_some() {
                return Err(format!("claim {ns}/{name} got deleted in the meantime"));
            }
            if let Some(allocation) = allocation {
                if is_allocated(&claim) {
                    return Err(format!(
                        "claim {ns}/{name} got allocated elsewhere in the meantime"
                    ));
                }
                let finalizers = claim.metadata.finalizers.get_or_insert_with(Vec::new);
                if !finalizers.iter().any(|f| f == CLAIM_FINALIZER) {
                    finalizers.push(CLAIM_FINALIZER.to_string());
                    match client.replace(Some(&ns), &name, &claim).await {
                        Ok(updated) => claim = updated,
                        Err(e) if e.code() == Some(409) && attempt < 5 => continue,
                        Err(e) => return Err(format!("add finalizer to claim {ns}/{name}: {e}")),
                    }
                }
                claim.status.get_or_insert_with(Default::default).allocation =
                    Some(allocation.clone());
            }
            let status = claim.status.get_or_insert_with(Default::default);
            status
                .reserved_for
                .get_or_insert_with(Vec::new)
                .push(ResourceClaimConsumerReference {
                    api_group: None,
                    resource: "pods".into(),
                    name: pod.pod.metadata.name.clone().unwrap_or_default(),
                    uid: pod.pod.metadata.uid.clone().unwrap_or_default(),
                });
            match client.replace_status(Some(&ns), &name, &claim).await {
                Ok(updated) => {
                    if let Some(allocation) = allocation {
                        let mut in_flight = self.in_flight();
                        in_flight.pending.remove(uid(&updated));
                        in_flight.written.insert(
                            uid(&updated).to_string(),
                            (ns.clone(), name.clone(), allocation.clone(), rv(&updated)),
                        );
                    }
                    return Ok(());
                }
                Err(e) if e.code() == Some(409) && attempt < 5 => continue,
                Err(e) if allocation.is_some() => {
                    return Err(format!(
                        "add allocation and reservation to claim {ns}/{name}: {e}"
                    ));
                }
                Err(e) => return Err(format!("add reservation to claim {ns}/{name}: {e}")),
            }
        }
    }
}

/// Deletes claim `ns/name` once the scheduler's finalizer is off it (a claim that is gone
/// already is no error).
async fn delete_claim(cx: &dyn BindContext, ns: &str, name: &str) -> Result<(), String> {
    let client = cx.client();
    for attempt in 1.. {
        let mut claim: ResourceClaim = match client.get(Some(ns), name).await {
            Ok(c) => c,
            Err(e) if e.code() == Some(404) => return Ok(()),
            Err(e) => return Err(format!("get resourceclaim {ns}/{name}: {e}")),
        };
        let finalizers = claim.metadata.finalizers.get_or_insert_with(Vec::new);
        if let Some(at) = finalizers.iter().position(|f| f == CLAIM_FINALIZER) {
            finalizers.remove(at);
            match client.replace(Some(ns), name, &claim).await {
                Ok(_) => {}
                Err(e) if e.code() == Some(409) && attempt < 5 => continue,
                Err(e) => return Err(format!("update resourceclaim {ns}/{name}: {e}")),
            }
        }
        break;
    }
    match client.delete::<ResourceClaim>(Some(ns), name).await {
        Err(e) if e.code() != Some(404) => Err(format!("delete resourceclaim {ns}/{name}: {e}")),
        _ => Ok(()),
    }
}

impl DynamicResources {
    /// Writes the claim for the pod's extended resources (a generated name), its allocation
    /// and reservation, then the pod's `status.extendedResourceClaimStatus`.
    async fn write_extended_claim(
        &self,
        cx: &dyn BindContext,
        pod: &PodInfo,
        binding: &DraBinding,
        extended: &ExtendedClaim,
        allocation: &AllocationResult,
    ) -> Result<(), String> {
        let mut claim = extended.claim.clone();
        let in_memory = uid(&claim).to_string();
        claim.metadata.name = None;
        claim.metadata.uid = None;
        let ns = claim.metadata.namespace.clone().unwrap_or_default();
        let created = cx.client().create(Some(&ns), &claim).await;
        self.in_flight().pending.remove(&in_memory);
        let created: ResourceClaim = created.map_err(|e| {
            format!("create claim for extended resources {ns}/{EXTENDED_IN_MEMORY}: {e}")
        })?;
        let name = created.metadata.name.clone().unwrap_or_default();
        *binding.created.lock().unwrap_or_else(|p| p.into_inner()) =
            Some((ns.clone(), name.clone()));
        self.bind_claim(cx, pod, created, Some(allocation)).await?;
        let patch = serde_json::json!({"status": {"extendedResourceClaimStatus": {
            "requestMappings": extended.mappings, "resourceClaimName": name}}});
        let pod_name = pod.pod.metadata.name.as_deref().unwrap_or("");
        cx.client()
            .patch_status::<Pod>(Some(&ns), pod_name, PatchType::Merge, &patch)
            .await
            .map(|_| ())
            .map_err(|e| format!("update pod {ns}/{pod_name} ExtendedResourceClaimStatus: {e}"))
    }

    /// Waits until the devices of the pod's claims that have binding conditions are ready
    /// (every binding condition true in the claims' device status, as the scheduler's copy
    /// of the claims shows it), failing when a binding failure condition is true or after
    /// `bindingTimeout`.
    async fn wait_for_binding_conditions(
        &self,
        cx: &dyn BindContext,
        pod: &PodInfo,
        node: &str,
    ) -> Result<(), String> {
        let note = format!("waiting for binding conditions for device on node {node}");
        cx.record(
            &pod.pod,
            "Normal",
            "BindingConditionsPending",
            "Scheduling",
            &note,
        )
        .await;
        let Some(binding) = pod.state.get::<DraBinding>() else {
            return Ok(());
        };
        let deadline = std::time::Instant::now() + self.binding_timeout;
        loop {
            let index = cx.dra_index();
            let mut ready = true;
            let created = binding
                .created
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .clone();
            let names = binding
                .claims
                .iter()
                .map(|c| {
                    let ns = c.metadata.namespace.clone().unwrap_or_default();
                    (ns, c.metadata.name.clone().unwrap_or_default())
                })
                .chain(created);
            for (ns, name) in names {
                let (ns, name) = (ns.as_str(), name.as_str());
                let Some(current) = index.claim(ns, name) else {
                    return Err(format!("resourceclaim {ns}/{name} not found"));
                };
                if !binding_ready(current)? {
                    if self.binding_gave_up(current) {
                        return Err(format!("claim {name} binding timeout"));
                    }
                    ready = false;
                }
            }
            if ready {
                return Ok(());
            }
            if std::time::Instant::now() >= deadline {
                return Err("device binding timeout".into());
            }
            tokio::time::sleep(BINDING_POLL).await;
        }
    }
}

/// How often PreBind looks at the claims while devices bind (the scheduler's own copy of
/// them: no API request).
const BINDING_POLL: Duration = Duration::from_millis(200);

impl PreBind for DynamicResources {
    fn name(&self) -> &'static str {
        "DynamicResources"
    }

    fn pre_bind<'a>(
        &'a self,
        cx: &'a dyn BindContext,
        pod: &'a PodInfo,
        node: &'a str,
    ) -> BoxFuture<'a, Result<(), String>> {
        Box::pin(async move {
            let Some(binding) = pod.state.get::<DraBinding>() else {
                return Ok(());
            };
            for (i, (claim, allocation)) in
                binding.claims.iter().zip(&binding.allocations).enumerate()
            {
                if allocation.is_none() && reserved_for(claim, &pod.pod) {
                    continue;
                }
                // A claim known allocated only from this scheduler's own write is older
                // than the server's copy: the write conflicts and is retried on a fresh one.
                self.bind_claim(cx, pod, (**claim).clone(), allocation.as_ref())
                    .await?;
                binding
                    .reserved
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push(i);
            }
            if let Some((extended, allocation)) = &binding.extended {
                self.write_extended_claim(cx, pod, binding, extended, allocation)
                    .await?;
            }
            let conditions = |a: &AllocationResult| {
                a.devices
                    .iter()
                    .flat_map(|d| d.results.iter().flatten())
                    .any(|r| r.binding_conditions.as_ref().is_some_and(|b| !b.is_empty()))
            };
            let waits = binding
                .claims
                .iter()
                .zip(&binding.allocations)
                .any(|(c, a)| has_binding_conditions(c) || a.as_ref().is_some_and(conditions))
                || binding
                    .extended
                    .as_ref()
                    .is_some_and(|(_, a)| conditions(a));
            if waits {
                self.wait_for_binding_conditions(cx, pod, node).await?;
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::test_support::{cluster, feasible, node, rejection};
    use k8s_openapi::api::core::v1::Pod;
    use k8s_openapi::api::resource::v1::{DeviceClass, ResourceSlice};
    use serde_json::{Value, json};

    fn gpus(node: &str, models: &[&str]) -> ResourceSlice {
        let devices: Vec<Value> = models
            .iter()
            .enumerate()
            .map(|(i, m)| {
                json!({"name": format!("gpu-{i}"), "attributes": {
                    "model": {"string": m}, "index": {"int": i},
                    "numa": {"int": i / 2}}, "capacity": {"memory": {"value": "40Gi"}}})
            })
            .collect();
        serde_json::from_value(json!({
            "metadata": {"name": format!("{node}-gpus")},
            "spec": {"driver": "gpu.example.com", "nodeName": node,
                "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                "devices": devices}
        }))
        .unwrap()
    }

    fn class(name: &str, selector: &str) -> DeviceClass {
        serde_json::from_value(json!({"metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": selector}}],
                "config": [{"opaque": {"driver": "gpu.example.com", "parameters": {"mode": "x"}}}]}}))
        .unwrap()
    }

    fn claim(name: &str, devices: Value) -> ResourceClaim {
        serde_json::from_value(json!({"metadata": {"name": name, "namespace": "default",
            "uid": format!("uid-{name}"), "resourceVersion": "1"}, "spec": {"devices": devices}}))
        .unwrap()
    }

    fn pod_with(claims: &[&str]) -> Pod {
        let refs: Vec<Value> = claims
            .iter()
            .map(|c| json!({"name": c, "resourceClaimName": c}))
            .collect();
        serde_json::from_value(
            json!({"metadata": {"name": "p", "namespace": "default", "uid": "pod-uid"},
            "spec": {"containers": [{"name": "c", "image": "app"}], "resourceClaims": refs}}),
        )
        .unwrap()
    }

    fn cache_with(claims: Vec<ResourceClaim>) -> Cache {
        let mut cache = cluster(
            vec![
                node("n1", json!({})),
                node("n2", json!({})),
                node("n3", json!({})),
            ],
            vec![],
        );
        let index = cache.dra_index_mut();
        index.put_slice(gpus("n1", &["a100", "a100"]));
        index.put_slice(gpus("n2", &["h100", "a100", "h100", "h100"]));
        index.put_class(class("gpu", "device.driver == 'gpu.example.com'"));
        index.put_class(class(
            "h100",
            "device.attributes['gpu.example.com'].model == 'h100'",
        ));
        claims.into_iter().for_each(|c| index.put_claim(c));
        cache
    }

    fn exactly(class: &str, count: i64) -> Value {
        json!({"requests": [{"name": "r", "exactly": {"deviceClassName": class, "count": count}}]})
    }

    #[test]
    fn nodes_with_enough_matching_devices_are_feasible() {
        let plugin = DynamicResources::default();
        for (devices, want) in [
            (exactly("gpu", 1), vec!["n1", "n2"]),
            (exactly("gpu", 3), vec!["n2"]),
            (exactly("h100", 3), vec!["n2"]),
            (exactly("h100", 4), vec![]),
            (
                json!({"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu",
                    "selectors": [{"cel": {"expression":
                        "device.capacity['gpu.example.com'].memory.compareTo(quantity('32Gi')) >= 0 && device.attributes['gpu.example.com'].model == 'a100'"}}],
                    "allocationMode": "All"}}]}),
                vec!["n1", "n2"],
            ),
        ] {
            let cache = cache_with(vec![claim("c", devices.clone())]);
            let got = feasible(&plugin, pod_with(&["c"]), &cache).unwrap();
            assert_eq!(got, want, "{devices}");
        }
    }

    #[test]
    fn constraints_and_alternatives_are_searched() {
        let plugin = DynamicResources::default();
        // Two devices of the same model: only n2's h100s pair up with a NUMA match.
        let same_numa = json!({"requests": [
                {"name": "a", "exactly": {"deviceClassName": "h100"}},
                {"name": "b", "exactly": {"deviceClassName": "gpu"}}],
            "constraints": [{"matchAttribute": "gpu.example.com/numa"}]});
        let cache = cache_with(vec![claim("c", same_numa)]);
        assert_eq!(feasible(&plugin, pod_with(&["c"]), &cache).unwrap(), ["n2"]);
        // Three distinct models do not exist anywhere.
        let distinct = json!({"requests": [{"name": "a", "exactly": {"deviceClassName": "gpu", "count": 2}}],
            "constraints": [{"distinctAttribute": "gpu.example.com/model"}]});
        let cache = cache_with(vec![claim("c", distinct)]);
        assert_eq!(feasible(&plugin, pod_with(&["c"]), &cache).unwrap(), ["n2"]);
        // The first alternative (4 h100s) fits nowhere, the second (2 of any) on both.
        let prioritized = json!({"requests": [{"name": "r", "firstAvailable": [
            {"name": "big", "deviceClassName": "h100", "count": 4},
            {"name": "small", "deviceClassName": "gpu", "count": 2}]}]});
        let cache = cache_with(vec![claim("c", prioritized)]);
        assert_eq!(
            feasible(&plugin, pod_with(&["c"]), &cache).unwrap(),
            ["n1", "n2"]
        );
    }

    #[test]
    fn selector_verdicts_are_kept_per_slice_version() {
        // One plugin, so one set of kept verdicts, across both attempts.
        let plugin = DynamicResources::default();
        let versioned = |models: &[&str], version: &str| {
            let mut slice = gpus("n1", models);
            slice.metadata.resource_version = Some(version.into());
            slice
        };
        let mut cache = cache_with(vec![claim("c", exactly("h100", 1))]);
        cache
            .dra_index_mut()
            .put_slice(versioned(&["a100", "a100"], "1"));
        assert_eq!(feasible(&plugin, pod_with(&["c"]), &cache).unwrap(), ["n2"]);
        // The driver republishes n1's devices as h100s: a new version, judged afresh.
        cache
            .dra_index_mut()
            .put_slice(versioned(&["h100", "h100"], "2"));
        assert_eq!(
            feasible(&plugin, pod_with(&["c"]), &cache).unwrap(),
            ["n1", "n2"]
        );
    }

    #[test]
    fn devices_held_by_other_claims_are_not_allocated_again() {
        let plugin = DynamicResources::default();
        let mut taken = claim("taken", exactly("gpu", 2));
        taken.status = serde_json::from_value(json!({"allocation": {"devices": {"results": [
            {"request": "r", "driver": "gpu.example.com", "pool": "n1", "device": "gpu-0"},
            {"request": "r", "driver": "gpu.example.com", "pool": "n2", "device": "gpu-0"}]}}}))
        .unwrap();
        let cache = cache_with(vec![taken, claim("c", exactly("gpu", 2))]);
        // n1 has one free device left, n2 three.
        assert_eq!(feasible(&plugin, pod_with(&["c"]), &cache).unwrap(), ["n2"]);
    }

    #[test]
    fn waiting_pods_get_upstreams_reasons() {
        let plugin = DynamicResources::default();
        let cache = cache_with(vec![]);
        assert_eq!(
            feasible(&plugin, pod_with(&["gone"]), &cache).unwrap_err(),
            "resourceclaim.resource.k8s.io \"gone\" not found"
        );
        let mut from_template = pod_with(&[]);
        from_template.spec.as_mut().unwrap().resource_claims = Some(vec![
            serde_json::from_value(json!({"name": "gpu", "resourceClaimTemplateName": "t"}))
                .unwrap(),
        ]);
        assert_eq!(
            feasible(&plugin, from_template, &cache).unwrap_err(),
            "pod \"default/p\": ResourceClaim not created yet"
        );
        let cache = cache_with(vec![claim("c", exactly("missing", 1))]);
        assert_eq!(
            feasible(&plugin, pod_with(&["c"]), &cache).unwrap_err(),
            "request r: device class missing does not exist"
        );
        let cache = cache_with(vec![claim("c", exactly("gpu", 9))]);
        assert_eq!(
            rejection(&plugin, pod_with(&["c"]), &cache, "n1").as_deref(),
            Some("cannot allocate all claims")
        );
    }

    #[test]
    fn an_allocation_is_held_from_reserve_on_and_limits_the_pod_to_its_node() {
        let plugin = DynamicResources::default();
        let cache = cache_with(vec![
            claim("c", exactly("gpu", 2)),
            claim("d", exactly("gpu", 2)),
        ]);
        let mut info = PodInfo::new(pod_with(&["c"]));
        info.state
            .insert(plugin.pre_filter(&info, &cache).unwrap().unwrap());
        plugin.filter(&info, cache.node("n1").unwrap()).unwrap();
        let binding = plugin.reserve(&info, cache.node("n1").unwrap()).unwrap();
        let binding = binding.unwrap();
        let b = binding.downcast_ref::<DraBinding>().unwrap();
        let allocation = b.allocations[0].as_ref().unwrap();
        let results = allocation
            .devices
            .as_ref()
            .unwrap()
            .results
            .as_ref()
            .unwrap();
        assert_eq!(results.len(), 2);
        assert_eq!(results[0].pool, "n1");
        let config = allocation
            .devices
            .as_ref()
            .unwrap()
            .config
            .as_ref()
            .unwrap();
        assert_eq!(config[0].source, "FromClass");
        let selector = allocation.node_selector.as_ref().unwrap();
        assert_eq!(
            selector.node_selector_terms[0]
                .match_fields
                .as_ref()
                .unwrap()[0]
                .values,
            Some(vec!["n1".to_string()])
        );
        // The same claim waits; another claim no longer finds room on n1.
        assert!(
            feasible(&plugin, pod_with(&["c"]), &cache)
                .unwrap_err()
                .contains("in the process of being allocated")
        );
        let mut other = pod_with(&["d"]);
        other.metadata.uid = Some("other".into());
        assert_eq!(feasible(&plugin, other.clone(), &cache).unwrap(), ["n2"]);
        info.state.insert(binding);
        plugin.unreserve(&info, "n1");
        assert_eq!(feasible(&plugin, other, &cache).unwrap(), ["n1", "n2"]);
    }

    /// A fabric-attached device any node can use, bound to the node it is allocated for
    /// once its driver reports it attached.
    fn attachable() -> ResourceSlice {
        serde_json::from_value(json!({"metadata": {"name": "fabric"},
            "spec": {"driver": "cxl.example.com", "allNodes": true,
                "pool": {"name": "fabric", "generation": 1, "resourceSliceCount": 1},
                "devices": [{"name": "mem-0", "bindsToNode": true,
                    "bindingConditions": ["cxl.example.com/Attached"],
                    "bindingFailureConditions": ["cxl.example.com/AttachFailed"]}]}}))
        .unwrap()
    }

    /// Claim `c` allocated the fabric device on `node` at `at`, its device status `conditions`.
    fn attached_claim(node: &str, at: jiff::Timestamp, conditions: Value) -> ResourceClaim {
        let mut c = claim("c", exactly("cxl", 1));
        c.status = serde_json::from_value(json!({
            "allocation": {"devices": {"results": [{"request": "r", "driver": "cxl.example.com",
                "pool": "fabric", "device": "mem-0",
                "bindingConditions": ["cxl.example.com/Attached"],
                "bindingFailureConditions": ["cxl.example.com/AttachFailed"]}]},
                "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                    {"key": "metadata.name", "operator": "In", "values": [node]}]}]},
                "allocationTimestamp": at.to_string()},
            "devices": [{"driver": "cxl.example.com", "pool": "fabric", "device": "mem-0",
                "conditions": conditions}]}))
        .unwrap();
        c
    }

    fn condition(kind: &str) -> Value {
        json!({"type": kind, "status": "True", "reason": "Driver", "message": "set",
            "lastTransitionTime": "2026-11-29T00:00:00Z"})
    }

    #[test]
    fn devices_with_binding_conditions_are_allocated_with_them_for_one_node() {
        let plugin = DynamicResources::default();
        let mut cache = cache_with(vec![claim("c", exactly("cxl", 1))]);
        let index = cache.dra_index_mut();
        index.put_slice(attachable());
        index.put_class(class("cxl", "device.driver == 'cxl.example.com'"));
        let mut info = PodInfo::new(pod_with(&["c"]));
        info.state
            .insert(plugin.pre_filter(&info, &cache).unwrap().unwrap());
        plugin.filter(&info, cache.node("n2").unwrap()).unwrap();
        let binding = plugin.reserve(&info, cache.node("n2").unwrap()).unwrap();
        let binding = binding.unwrap();
        let b = binding.downcast_ref::<DraBinding>().unwrap();
        let allocation = b.allocations[0].as_ref().unwrap();
        let result = &allocation
            .devices
            .as_ref()
            .unwrap()
            .results
            .as_ref()
            .unwrap()[0];
        assert_eq!(
            result.binding_conditions.as_deref(),
            Some(&["cxl.example.com/Attached".to_string()][..])
        );
        assert_eq!(
            result.binding_failure_conditions.as_deref(),
            Some(&["cxl.example.com/AttachFailed".to_string()][..])
        );
        // bindsToNode: the allocation is for n2 alone, though the slice serves all nodes.
        let terms = &allocation
            .node_selector
            .as_ref()
            .unwrap()
            .node_selector_terms;
        assert_eq!(
            terms[0].match_fields.as_ref().unwrap()[0].values,
            Some(vec!["n2".to_string()])
        );
    }

    #[test]
    fn claims_whose_devices_failed_or_timed_out_binding_keep_their_node_out() {
        let plugin = DynamicResources::new(None, Duration::from_secs(60));
        let now = jiff::Timestamp::now();
        let long_ago = now - jiff::SignedDuration::from_secs(120);
        for (claim, n1_ok, why) in [
            (attached_claim("n1", now, json!([])), true, "still binding"),
            (
                attached_claim(
                    "n1",
                    long_ago,
                    json!([condition("cxl.example.com/Attached")]),
                ),
                true,
                "attached",
            ),
            (
                attached_claim(
                    "n1",
                    now,
                    json!([condition("cxl.example.com/AttachFailed")]),
                ),
                false,
                "failed",
            ),
            (
                attached_claim("n1", long_ago, json!([])),
                false,
                "timed out",
            ),
        ] {
            let mut cache = cache_with(vec![claim]);
            cache.dra_index_mut().put_slice(attachable());
            let mut info = PodInfo::new(pod_with(&["c"]));
            info.state
                .insert(plugin.pre_filter(&info, &cache).unwrap().unwrap());
            let n1 = plugin.filter(&info, cache.node("n1").unwrap());
            assert_eq!(n1.is_ok(), n1_ok, "{why}: {n1:?}");
            // Elsewhere the allocation's node selector keeps the pod out either way.
            let n2 = plugin.filter(&info, cache.node("n2").unwrap()).unwrap_err();
            assert_eq!(
                n2.reason, "resourceclaim not available on the node",
                "{why}"
            );
            // Either way the claim is PostFilter's to deallocate.
            let state = info.state.get::<DraState>().unwrap();
            assert_eq!(
                *state.unavailable.lock().unwrap(),
                BTreeSet::from([0]),
                "{why}"
            );
        }
        let failed = attached_claim(
            "n1",
            now,
            json!([condition("cxl.example.com/AttachFailed")]),
        );
        assert!(
            binding_ready(&failed)
                .unwrap_err()
                .contains("binding failed: reason=Driver")
        );
        let attached = attached_claim("n1", now, json!([condition("cxl.example.com/Attached")]));
        assert_eq!(binding_ready(&attached), Ok(true));
    }

    /// Reserves claim `name` asking `memory` of the shared NIC for a pod on n1 and records
    /// the allocation in the index, as the informer would; the allocation result.
    fn share_nic(
        plugin: &DynamicResources,
        cache: &mut Cache,
        name: &str,
        memory: &str,
    ) -> Option<k8s_openapi::api::resource::v1::DeviceRequestAllocationResult> {
        let devices = json!({"requests": [{"name": "r", "exactly": {"deviceClassName": "nic",
            "capacity": {"requests": {"bandwidth": memory}}}}]});
        let mut c = claim(name, devices);
        c.metadata.uid = Some(format!("uid-{name}"));
        cache.dra_index_mut().put_claim(c.clone());
        let mut pod = pod_with(&[name]);
        pod.metadata.uid = Some(format!("pod-{name}"));
        let mut info = PodInfo::new(pod);
        info.state.insert(plugin.pre_filter(&info, cache).unwrap()?);
        plugin.filter(&info, cache.node("n1").unwrap()).ok()?;
        let binding = plugin.reserve(&info, cache.node("n1").unwrap()).unwrap()?;
        let b = binding.downcast_ref::<DraBinding>().unwrap();
        let allocation = b.allocations[0].clone().unwrap();
        plugin.unreserve(&info, "n1");
        c.status = Some(k8s_openapi::api::resource::v1::ResourceClaimStatus {
            allocation: Some(allocation.clone()),
            ..Default::default()
        });
        cache.dra_index_mut().put_claim(c);
        let results = allocation.devices.unwrap().results.unwrap();
        Some(results[0].clone())
    }

    #[test]
    fn a_shared_device_is_allocated_to_several_claims_while_its_capacity_lasts() {
        let plugin = DynamicResources::default();
        let mut cache = cache_with(vec![]);
        let nic: ResourceSlice = serde_json::from_value(json!({"metadata": {"name": "n1-nic"},
            "spec": {"driver": "nic.example.com", "nodeName": "n1",
                "pool": {"name": "n1-nic", "generation": 1, "resourceSliceCount": 1},
                "devices": [{"name": "eth0", "allowMultipleAllocations": true,
                    "capacity": {"bandwidth": {"value": "40G", "requestPolicy": {
                        "default": "1G",
                        "validRange": {"min": "10G", "step": "10G"}}}}}]}}))
        .unwrap();
        let index = cache.dra_index_mut();
        index.put_slice(nic);
        index.put_class(class("nic", "device.driver == 'nic.example.com'"));
        // 15G rounds up to the next step, 20G: a share with its own id.
        let first = share_nic(&plugin, &mut cache, "a", "15G").unwrap();
        assert_eq!(first.device, "eth0");
        assert!(first.share_id.as_ref().is_some_and(|id| id.len() == 36));
        let consumed = first.consumed_capacity.unwrap();
        // Written as upstream writes a rounded quantity (binary suffixes).
        assert_eq!(consumed["bandwidth"].0, "19531250Ki");
        // 25G rounds up to 30G: with the first share's 20G, above 40G.
        assert_eq!(share_nic(&plugin, &mut cache, "b", "25G"), None);
        // 20G fits beside it: the same device, another share.
        let third = share_nic(&plugin, &mut cache, "c", "20G").unwrap();
        assert_eq!(third.device, "eth0");
        assert_ne!(third.share_id, first.share_id);
        assert_eq!(third.consumed_capacity.unwrap()["bandwidth"].0, "20G");
        // Now full; and a request above the range's steps is refused whatever the room.
        assert_eq!(share_nic(&plugin, &mut cache, "d", "10G"), None);
        cache.dra_index_mut().remove_claim(&claim("a", json!({})));
        assert_eq!(share_nic(&plugin, &mut cache, "e", "50G"), None);
        assert!(share_nic(&plugin, &mut cache, "f", "10G").is_some());
    }

    #[test]
    fn a_selector_that_fails_is_reported() {
        let plugin = DynamicResources::default();
        let devices = json!({"requests": [{"name": "r", "exactly": {"deviceClassName": "gpu",
            "selectors": [{"cel": {"expression": "device.attributes['gpu.example.com'].color == 'red'"}}]}}]});
        let cache = cache_with(vec![claim("c", devices)]);
        let reason = rejection(&plugin, pod_with(&["c"]), &cache, "n1").unwrap();
        assert!(
            reason.starts_with("claim default/c: selector #0: CEL runtime error"),
            "{reason}"
        );
    }
}
