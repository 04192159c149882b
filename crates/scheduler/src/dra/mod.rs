//! Dynamic Resource Allocation as the scheduler sees it: the claims, device classes and
//! resource slices of the cluster in one index (slices found by node, devices in use
//! counted as claims change), the claims a pod uses, and the allocator that picks devices
//! for a pod's unallocated claims on a node.

pub mod allocator;
pub mod extended;

use std::collections::hash_map::RandomState;
use std::collections::{BTreeSet, HashMap, HashSet};
use std::hash::{BuildHasher, BuildHasherDefault, Hasher};
use std::sync::Arc;

use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::resource::v1::{DeviceClass, ResourceClaim, ResourceSlice};

/// A device: (driver, pool, device name).
pub type DeviceId = (String, String, String);

/// A hasher for keys that are already hashes (made with a keyed hasher), used as they are.
#[derive(Debug, Default)]
pub struct Prehashed(u64);

impl Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// Maps and sets keyed by hashes.
pub type PrehashedState = BuildHasherDefault<Prehashed>;

/// Devices by their [`DraIndex::device_hash`].
pub type DeviceHashes = HashSet<u64, PrehashedState>;

/// Capacity consumed on devices shared between allocations (`allowMultipleAllocations`):
/// device hash → capacity name → amount (in thousandths).
pub type CapacityUse = HashMap<u64, HashMap<String, i128>, PrehashedState>;

/// What allocations hold: whole devices, and capacity of shared ones.
#[derive(Debug, Clone, Default)]
pub struct InUse {
    /// Devices held whole.
    pub devices: DeviceHashes,
    /// Capacity consumed on shared devices.
    pub capacity: CapacityUse,
}

impl InUse {
    /// Adds what `claim`'s allocation holds (devices hashed by `index`).
    pub fn add(&mut self, claim: &ResourceClaim, index: &DraIndex) {
        self.devices
            .extend(allocated_devices(claim).map(|d| index.device_hash(&d)));
        for (device, consumed) in shared_use(claim) {
            let used = self.capacity.entry(index.device_hash(&device)).or_default();
            for (name, amount) in consumed {
                *used.entry(name).or_default() += amount;
            }
        }
    }
}

/// The finalizer the scheduler puts on a claim it allocates (the controller manager takes
/// it off once the claim is deallocated).
pub const CLAIM_FINALIZER: &str = "resource.kubernetes.io/delete-protection";

/// The most consumers a claim may be reserved for.
pub const MAX_CONSUMERS: usize = 256;

/// What the allocator needs of a slice's device besides the device itself, made once per
/// version of the slice (not for every node of every attempt).
#[derive(Debug)]
pub struct DeviceKey {
    /// (driver, pool, device name).
    pub id: DeviceId,
    /// The id's [`DraIndex::device_hash`].
    pub hash: u64,
    /// A hash of (slice name, slice resourceVersion, device name) naming this version of the
    /// device, under which selector verdicts are kept; none for a slice without a
    /// resourceVersion (not read from a server, so its versions cannot be told apart).
    pub version: Option<u64>,
}

impl DeviceKey {
    fn of(slice: &ResourceSlice, hasher: &RandomState) -> Vec<DeviceKey> {
        use std::hash::Hash;
        let version = slice.metadata.resource_version.as_deref();
        slice
            .spec
            .devices
            .iter()
            .flatten()
            .map(|d| {
                let id = (
                    slice.spec.driver.clone(),
                    slice.spec.pool.name.clone(),
                    d.name.clone(),
                );
                (id, d)
            })
            .map(|(id, d)| DeviceKey {
                hash: hasher.hash_one(&id),
                id,
                version: version.map(|v| {
                    let mut h = std::collections::hash_map::DefaultHasher::new();
                    (slice.metadata.name.as_deref(), v, d.name.as_str()).hash(&mut h);
                    h.finish()
                }),
            })
            .collect()
    }
}

/// A slice with its devices' keys (in the order of `spec.devices`).
#[derive(Debug)]
pub struct IndexedSlice {
    /// The slice.
    pub slice: ResourceSlice,
    /// One per device.
    pub keys: Vec<DeviceKey>,
}

/// The claims, classes and slices of the cluster, in three parts shared between copies: the
/// scheduler's cache changes the index while attempts hold earlier copies, and a claim's
/// change then copies the claims' part only (not the slices, which change seldom).
#[derive(Debug, Clone, Default)]
pub struct DraIndex {
    claims: Arc<Claims>,
    classes: Arc<HashMap<String, Arc<DeviceClass>>>,
    slices: Arc<Slices>,
    /// Keys the device hashes (random per process).
    device_hasher: RandomState,
}

/// The claims and the devices they hold.
#[derive(Debug, Clone, Default)]
struct Claims {
    by_name: HashMap<(String, String), Arc<ResourceClaim>>,
    /// Devices of allocated claims (not counting admin access) by [`DraIndex::device_hash`],
    /// with how many claims hold each. Two devices whose hashes collide share a count, so a
    /// collision could only make a free device look held, never the reverse.
    held: HashMap<u64, usize, PrehashedState>,
    /// Capacity the allocated claims consume on shared devices.
    consumed: CapacityUse,
}

/// The slices, found by name, node and pool.
#[derive(Debug, Clone, Default)]
struct Slices {
    by_name: HashMap<String, Arc<IndexedSlice>>,
    /// Node name → the slices of devices local to it.
    by_node: HashMap<String, BTreeSet<String>>,
    /// Slices whose devices are not tied to one node by name (all nodes, a node selector,
    /// or per-device node selection).
    shared: BTreeSet<String>,
    /// Driver → pool → its slices (nested, so a lookup borrows the slice's names).
    pools: HashMap<String, HashMap<String, BTreeSet<String>>>,
}

fn key(ns: Option<&str>, name: Option<&str>) -> (String, String) {
    (
        ns.unwrap_or_default().to_string(),
        name.unwrap_or_default().to_string(),
    )
}

/// The allocation results of a claim (admin access excepted: it holds nothing).
fn holding_results(
    claim: &ResourceClaim,
) -> impl Iterator<Item = &k8s_openapi::api::resource::v1::DeviceRequestAllocationResult> {
    claim
        .status
        .iter()
        .flat_map(|s| s.allocation.iter())
        .flat_map(|a| a.devices.iter())
        .flat_map(|d| d.results.iter().flatten())
        .filter(|r| r.admin_access != Some(true))
}

/// The devices a claim's allocation holds exclusively (admin access and shares of shared
/// devices hold none).
pub fn allocated_devices(claim: &ResourceClaim) -> impl Iterator<Item = DeviceId> + '_ {
    holding_results(claim)
        .filter(|r| r.share_id.is_none())
        .map(|r| (r.driver.clone(), r.pool.clone(), r.device.clone()))
}

/// The shares of shared devices a claim's allocation holds, with the capacity each consumes
/// (name, thousandths).
pub fn shared_use(claim: &ResourceClaim) -> impl Iterator<Item = (DeviceId, Vec<(String, i128)>)> {
    holding_results(claim)
        .filter(|r| r.share_id.is_some())
        .map(|r| {
            let consumed = r
                .consumed_capacity
                .iter()
                .flatten()
                .map(|(name, q)| {
                    let amount = capstan_meta::quantity::parse(&q.0).map_or(0, |m| m.0);
                    (name.clone(), amount)
                })
                .collect();
            (
                (r.driver.clone(), r.pool.clone(), r.device.clone()),
                consumed,
            )
        })
}

impl Claims {
    /// Counts `claim`'s devices and capacity in (`sign` 1) or out (-1).
    fn count(&mut self, claim: &ResourceClaim, hasher: &RandomState, sign: i128) {
        for d in allocated_devices(claim) {
            let hash = hasher.hash_one(&d);
            if sign > 0 {
                *self.held.entry(hash).or_default() += 1;
            } else if let Some(n) = self.held.get_mut(&hash) {
                *n -= 1;
                if *n == 0 {
                    self.held.remove(&hash);
                }
            }
        }
        for (d, consumed) in shared_use(claim) {
            let hash = hasher.hash_one(&d);
            let used = self.consumed.entry(hash).or_default();
            for (name, amount) in consumed {
                *used.entry(name).or_default() += sign * amount;
            }
            used.retain(|_, amount| *amount != 0);
            if used.is_empty() {
                self.consumed.remove(&hash);
            }
        }
    }
}

impl Slices {
    /// Takes the slice `name` out of every index.
    fn remove(&mut self, name: &str) {
        let Some(old) = self.by_name.remove(name) else {
            return;
        };
        let old = &old.slice;
        if let Some(node) = old.spec.node_name.as_deref()
            && let Some(set) = self.by_node.get_mut(node)
        {
            set.remove(name);
            if set.is_empty() {
                self.by_node.remove(node);
            }
        }
        self.shared.remove(name);
        let (driver, pool) = (&old.spec.driver, &old.spec.pool.name);
        if let Some(pools) = self.pools.get_mut(driver)
            && let Some(set) = pools.get_mut(pool)
        {
            set.remove(name);
            if set.is_empty() {
                pools.remove(pool);
                if pools.is_empty() {
                    self.pools.remove(driver);
                }
            }
        }
    }
}

impl DraIndex {
    /// The claim `name` in `namespace`.
    pub fn claim(&self, namespace: &str, name: &str) -> Option<&Arc<ResourceClaim>> {
        self.claims
            .by_name
            .get(&(namespace.to_string(), name.to_string()))
    }

    /// The device class `name`.
    pub fn class(&self, name: &str) -> Option<&Arc<DeviceClass>> {
        self.classes.get(name)
    }

    /// Every device class.
    pub fn classes(&self) -> impl Iterator<Item = &Arc<DeviceClass>> {
        self.classes.values()
    }

    /// The claims in `namespace`.
    pub fn claims_in<'a>(
        &'a self,
        namespace: &'a str,
    ) -> impl Iterator<Item = &'a Arc<ResourceClaim>> {
        self.claims
            .by_name
            .iter()
            .filter(move |((ns, _), _)| ns == namespace)
            .map(|(_, c)| c)
    }

    /// Whether `device` is held by an allocated claim (see [`DraIndex::is_held`]).
    pub fn is_allocated(&self, device: &DeviceId) -> bool {
        self.is_held(self.device_hash(device))
    }

    /// A device's hash, under which [`DraIndex::is_held`] and [`DeviceKey::hash`] know it.
    pub fn device_hash(&self, device: &DeviceId) -> u64 {
        self.device_hasher.hash_one(device)
    }

    /// Whether the device hashed `hash` is held by an allocated claim (or collides with one
    /// that is).
    pub fn is_held(&self, hash: u64) -> bool {
        self.claims.held.contains_key(&hash)
    }

    /// The capacity allocated claims consume on the shared device hashed `hash`.
    pub fn consumed(&self, hash: u64) -> Option<&HashMap<String, i128>> {
        self.claims.consumed.get(&hash)
    }

    /// Adds or replaces a claim.
    pub fn put_claim(&mut self, claim: ResourceClaim) {
        let k = key(
            claim.metadata.namespace.as_deref(),
            claim.metadata.name.as_deref(),
        );
        let hasher = self.device_hasher.clone();
        let claims = Arc::make_mut(&mut self.claims);
        if let Some(old) = claims.by_name.remove(&k) {
            claims.count(&old, &hasher, -1);
        }
        claims.count(&claim, &hasher, 1);
        claims.by_name.insert(k, Arc::new(claim));
    }

    /// Removes a claim.
    pub fn remove_claim(&mut self, claim: &ResourceClaim) {
        let k = key(
            claim.metadata.namespace.as_deref(),
            claim.metadata.name.as_deref(),
        );
        if !self.claims.by_name.contains_key(&k) {
            return;
        }
        let hasher = self.device_hasher.clone();
        let claims = Arc::make_mut(&mut self.claims);
        if let Some(old) = claims.by_name.remove(&k) {
            claims.count(&old, &hasher, -1);
        }
    }

    /// Forgets every claim.
    pub fn clear_claims(&mut self) {
        self.claims = Arc::default();
    }

    /// Adds or replaces a device class.
    pub fn put_class(&mut self, class: DeviceClass) {
        let name = class.metadata.name.clone().unwrap_or_default();
        Arc::make_mut(&mut self.classes).insert(name, Arc::new(class));
    }

    /// Removes a device class.
    pub fn remove_class(&mut self, name: &str) {
        Arc::make_mut(&mut self.classes).remove(name);
    }

    /// Forgets every class.
    pub fn clear_classes(&mut self) {
        self.classes = Arc::default();
    }

    /// Adds or replaces a resource slice.
    pub fn put_slice(&mut self, slice: ResourceSlice) {
        let name = slice.metadata.name.clone().unwrap_or_default();
        let keys = DeviceKey::of(&slice, &self.device_hasher);
        let slices = Arc::make_mut(&mut self.slices);
        slices.remove(&name);
        match slice.spec.node_name.as_deref().filter(|n| !n.is_empty()) {
            Some(node) => {
                slices
                    .by_node
                    .entry(node.to_string())
                    .or_default()
                    .insert(name.clone());
            }
            None => {
                slices.shared.insert(name.clone());
            }
        }
        slices
            .pools
            .entry(slice.spec.driver.clone())
            .or_default()
            .entry(slice.spec.pool.name.clone())
            .or_default()
            .insert(name.clone());
        slices
            .by_name
            .insert(name, Arc::new(IndexedSlice { slice, keys }));
    }

    /// Removes the resource slice `name`.
    pub fn remove_slice(&mut self, name: &str) {
        if self.slices.by_name.contains_key(name) {
            Arc::make_mut(&mut self.slices).remove(name);
        }
    }

    /// Forgets every slice.
    pub fn clear_slices(&mut self) {
        self.slices = Arc::default();
    }

    /// The slices that may offer devices to `node`: its own, and those not tied to one
    /// node.
    pub fn slices_for<'a>(&'a self, node: &str) -> impl Iterator<Item = &'a Arc<IndexedSlice>> {
        let slices = &*self.slices;
        slices
            .by_node
            .get(node)
            .into_iter()
            .flatten()
            .chain(slices.shared.iter())
            .filter_map(|n| slices.by_name.get(n))
    }

    /// Every slice of the pool of `slice`.
    pub fn pool_of<'a>(&'a self, slice: &ResourceSlice) -> impl Iterator<Item = &'a ResourceSlice> {
        let slices = &*self.slices;
        slices
            .pools
            .get(&slice.spec.driver)
            .and_then(|pools| pools.get(&slice.spec.pool.name))
            .into_iter()
            .flatten()
            .filter_map(|n| slices.by_name.get(n))
            .map(|s| &s.slice)
    }

    /// Where `slice` stands in its pool: `None` when a newer generation of the pool
    /// replaces it, else whether the pool's current generation is complete (every slice it
    /// announces is here).
    pub fn pool_state(&self, slice: &ResourceSlice) -> Option<bool> {
        let mut newest = i64::MIN;
        let mut present = 0;
        let mut expected = 0;
        for s in self.pool_of(slice) {
            let pool = &s.spec.pool;
            if pool.generation > newest {
                newest = pool.generation;
                present = 0;
            }
            if pool.generation == newest {
                present += 1;
                expected = pool.resource_slice_count;
            }
        }
        (slice.spec.pool.generation == newest).then_some(present >= expected)
    }
}

/// Why a pod cannot be scheduled yet, from its claims.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClaimProblem(pub String);

/// The claims `pod` uses, in the order of `spec.resourceClaims` (those a template did not
/// need to create are skipped), or why it must wait: a claim not created yet, missing,
/// being deleted, or not made for this pod.
pub fn pod_claims(pod: &Pod, index: &DraIndex) -> Result<Vec<Arc<ResourceClaim>>, ClaimProblem> {
    let ns = pod.metadata.namespace.as_deref().unwrap_or("");
    let pod_name = pod.metadata.name.as_deref().unwrap_or("");
    let mut out = Vec::new();
    for entry in pod
        .spec
        .iter()
        .flat_map(|s| s.resource_claims.iter().flatten())
    {
        let (name, from_template) = if let Some(name) = &entry.resource_claim_name {
            (name.clone(), false)
        } else if entry.resource_claim_template_name.is_some() {
            let generated = pod
                .status
                .as_ref()
                .and_then(|s| s.resource_claim_statuses.as_ref())
                .and_then(|all| all.iter().find(|s| s.name == entry.name));
            match generated {
                None => {
                    return Err(ClaimProblem(format!(
                        "pod \"{ns}/{pod_name}\": ResourceClaim not created yet"
                    )));
                }
                Some(s) => match &s.resource_claim_name {
                    Some(name) => (name.clone(), true),
                    None => continue,
                },
            }
        } else {
            return Err(ClaimProblem(format!(
                "pod \"{ns}/{pod_name}\", spec.resourceClaim {:?}: none of the supported fields are set",
                entry.name
            )));
        };
        let Some(claim) = index.claim(ns, &name) else {
            return Err(ClaimProblem(format!(
                "resourceclaim.resource.k8s.io \"{name}\" not found"
            )));
        };
        if claim.metadata.deletion_timestamp.is_some() {
            return Err(ClaimProblem(format!(
                "resourceclaim \"{name}\" is being deleted"
            )));
        }
        if from_template {
            let owned =
                claim.metadata.owner_references.iter().flatten().any(|o| {
                    o.controller == Some(true) && Some(&o.uid) == pod.metadata.uid.as_ref()
                });
            if !owned {
                return Err(ClaimProblem(format!(
                    "ResourceClaim {ns}/{name} was not created for Pod {ns}/{pod_name} (Pod is not owner)"
                )));
            }
        }
        out.push(claim.clone());
    }
    Ok(out)
}

/// Whether `claim` is reserved for `pod`.
pub fn reserved_for(claim: &ResourceClaim, pod: &Pod) -> bool {
    let uid = pod.metadata.uid.as_deref().unwrap_or("");
    claim
        .status
        .iter()
        .flat_map(|s| s.reserved_for.iter().flatten())
        .any(|r| {
            r.resource == "pods" && r.uid == uid && r.api_group.as_deref().unwrap_or("").is_empty()
        })
}

/// How many consumers `claim` is reserved for.
pub fn consumers(claim: &ResourceClaim) -> usize {
    claim
        .status
        .as_ref()
        .and_then(|s| s.reserved_for.as_ref())
        .map_or(0, Vec::len)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    pub(crate) fn slice(name: &str, node: &str, pool_gen: i64, count: i64) -> ResourceSlice {
        serde_json::from_value(json!({
            "metadata": {"name": name},
            "spec": {"driver": "gpu.example.com", "nodeName": node,
                "pool": {"name": node, "generation": pool_gen, "resourceSliceCount": count},
                "devices": [{"name": "gpu-0"}]}
        }))
        .unwrap()
    }

    #[test]
    fn slices_are_found_by_node_and_pools_by_generation() {
        let mut index = DraIndex::default();
        index.put_slice(slice("a", "n1", 1, 2));
        assert_eq!(index.slices_for("n1").count(), 1);
        assert_eq!(index.slices_for("n2").count(), 0);
        let a = index.slices.by_name["a"].slice.clone();
        assert_eq!(index.pool_state(&a), Some(false), "one of two slices");
        index.put_slice(slice("b", "n1", 1, 2));
        assert_eq!(index.pool_state(&a), Some(true));
        index.put_slice(slice("c", "n1", 2, 1));
        assert_eq!(index.pool_state(&a), None, "replaced by generation 2");
        let c = index.slices.by_name["c"].slice.clone();
        assert_eq!(index.pool_state(&c), Some(true));
        index.remove_slice("c");
        assert_eq!(index.pool_state(&a), Some(true));
        index.remove_slice("a");
        index.remove_slice("b");
        assert_eq!(index.slices_for("n1").count(), 0);
        assert!(index.slices.pools.is_empty() && index.slices.by_node.is_empty());
    }

    #[test]
    fn allocated_devices_are_counted_as_claims_change() {
        let mut index = DraIndex::default();
        let claim = |name: &str, device: &str, admin: bool| -> ResourceClaim {
            serde_json::from_value(json!({
                "metadata": {"name": name, "namespace": "default"},
                "spec": {},
                "status": {"allocation": {"devices": {"results": [
                    {"request": "r", "driver": "d", "pool": "p", "device": device,
                     "adminAccess": admin}]}}}
            }))
            .unwrap()
        };
        let id = |d: &str| ("d".to_string(), "p".to_string(), d.to_string());
        let held = |index: &DraIndex, d: &str| index.is_allocated(&id(d));
        index.put_claim(claim("a", "x", false));
        index.put_claim(claim("b", "y", true));
        assert!(held(&index, "x"));
        assert!(!held(&index, "y"), "admin access holds nothing");
        index.put_claim(claim("a", "z", false));
        assert!(!held(&index, "x") && held(&index, "z"));
        // Counted per claim: z stays held until both claims holding it are gone.
        index.put_claim(claim("c", "z", false));
        index.remove_claim(&claim("a", "z", false));
        assert!(held(&index, "z"));
        index.remove_claim(&claim("c", "z", false));
        assert!(!held(&index, "z"));
        assert!(index.claims.held.is_empty());
    }
}
