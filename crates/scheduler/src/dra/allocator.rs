//! The structured-parameters allocator: for a pod's unallocated claims and one node, picks
//! devices from the ResourceSlices the node can use, or finds there are not enough.
//!
//! A request (or, for `firstAvailable`, the first of its subrequests that can be met) gets
//! `count` devices (`ExactCount`) or every matching device (`All`) that its DeviceClass's and
//! its own CEL selectors accept, whose taints it tolerates, that no other claim holds (admin
//! access may share) and whose shared counters have room. `matchAttribute` and
//! `distinctAttribute` constraints hold across the requests they name. The search
//! backtracks: an early choice that leaves a later request short is undone. Devices from a
//! pool whose newest generation is incomplete serve counted requests but not `All` ones.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use capstan_cel::device::{Device as CelDevice, DeviceAttribute as CelAttribute};
use capstan_cel::{Activation, Program};
use k8s_openapi::api::core::v1::{NodeSelector, NodeSelectorRequirement, NodeSelectorTerm};
use k8s_openapi::api::resource::v1::{
    AllocationResult, CapacityRequestPolicy, Device, DeviceAllocationConfiguration,
    DeviceAllocationResult, DeviceAttribute, DeviceCapacity, DeviceClass,
    DeviceRequestAllocationResult, DeviceToleration, ResourceClaim, ResourceSlice,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use super::{DeviceId, DraIndex, InUse, PrehashedState};
use crate::cache::NodeInfo;
use crate::plugins::node_selector_matches;

/// How many placements one node's search may try before giving up on the node.
const SEARCH_BUDGET: usize = 200_000;

/// How many selector verdicts [`Selectors`] keeps before starting again.
const VERDICTS_KEPT: usize = 1 << 20;

/// Compiled selector expressions and their verdicts on devices, shared by attempts: an
/// expression is compiled once, and run once per device of each version of its slice.
#[derive(Debug, Default)]
pub struct Selectors {
    programs: Mutex<HashMap<String, Result<Arc<Program>, String>>>,
    /// Verdicts keyed by a 64-bit hash of (expression, slice name, slice resourceVersion,
    /// device name): a slice's new version makes new keys, so nothing is invalidated. Two
    /// keys colliding is as likely as 2^-64 per pair (a wrong verdict would then be served).
    /// The device part is hashed once per slice version ([`super::DeviceKey`]).
    verdicts: Mutex<HashMap<u64, bool, PrehashedState>>,
}

impl Selectors {
    /// The key of the verdict of the expression hashed `expression` on the device version
    /// hashed `device`: both are already SipHash outputs, so mixing them (the device's rotated
    /// so that the two roles do not cancel) keeps the key uniform without hashing again.
    fn verdict_key(expression: u64, device: u64) -> u64 {
        expression ^ device.rotate_left(29)
    }

    fn verdict(&self, key: u64) -> Option<bool> {
        let verdicts = self.verdicts.lock().unwrap_or_else(|p| p.into_inner());
        verdicts.get(&key).copied()
    }

    fn remember(&self, key: u64, verdict: bool) {
        let mut verdicts = self.verdicts.lock().unwrap_or_else(|p| p.into_inner());
        if verdicts.len() >= VERDICTS_KEPT {
            verdicts.clear();
        }
        verdicts.insert(key, verdict);
    }

    /// The compiled `expression`, or its compile error.
    fn get(&self, expression: &str) -> Result<Arc<Program>, String> {
        let mut programs = self.programs.lock().unwrap_or_else(|p| p.into_inner());
        if programs.len() > 4096 {
            programs.clear();
        }
        programs
            .entry(expression.to_string())
            .or_insert_with(|| {
                Program::compile(expression)
                    .map(Arc::new)
                    .map_err(|e| e.to_string())
            })
            .clone()
    }
}

/// The hash of a selector expression, the expression part of a kept verdict's key.
fn expression_hash(expression: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    expression.hash(&mut hasher);
    hasher.finish()
}

/// Why allocation could not even be tried: a claim or class that cannot work, a selector
/// that does not evaluate.
pub type AllocError = String;

/// One way to meet a request: the request itself, or one of its subrequests.
#[derive(Debug)]
struct Alternative<'a> {
    /// `request` or `request/subrequest`.
    name: String,
    class: &'a DeviceClass,
    class_name: &'a str,
    request_selectors: Vec<&'a str>,
    /// `None`: all matching devices.
    count: Option<usize>,
    admin: bool,
    tolerations: &'a [DeviceToleration],
    /// The capacity asked of each device (`capacity.requests`).
    capacity: Option<&'a BTreeMap<String, Quantity>>,
}

/// A request of a claim to allocate, with its alternatives in order of preference.
#[derive(Debug)]
struct Request<'a> {
    claim: usize,
    /// The request's own name (constraints and configuration name it).
    name: &'a str,
    alternatives: Vec<Alternative<'a>>,
}

/// Where a device may be used.
#[derive(Debug, Clone, Copy)]
enum Scope<'a> {
    Node,
    Selector(&'a NodeSelector),
    All,
}

/// A device the node can use.
struct Candidate<'a> {
    slice: &'a ResourceSlice,
    device: &'a Device,
    id: &'a DeviceId,
    /// The id's hash ([`DraIndex::device_hash`]).
    hash: u64,
    /// Names this version of the device for kept selector verdicts
    /// ([`super::DeviceKey::version`]).
    version: Option<u64>,
    scope: Scope<'a>,
    pool_complete: bool,
}

/// A constraint of a claim across some of its requests.
#[derive(Debug)]
struct Constraint<'a> {
    claim: usize,
    /// Empty: every request of the claim.
    requests: Vec<&'a str>,
    attribute: &'a str,
    distinct: bool,
}

/// The allocator of one pod's unallocated claims, built once per scheduling attempt and
/// asked about each node.
pub struct Allocator<'a> {
    index: &'a DraIndex,
    claims: Vec<&'a ResourceClaim>,
    requests: Vec<Request<'a>>,
    constraints: Vec<Constraint<'a>>,
    /// What allocations made but not in the index yet hold.
    in_flight: &'a InUse,
    selectors: &'a Selectors,
    /// Counter room per (driver, pool, counter set, counter), computed once per pool.
    counters: Mutex<HashMap<(String, String), CounterRoom>>,
}

type CounterRoom = HashMap<(String, String), i128>;

fn claim_ref(claim: &ResourceClaim) -> String {
    format!(
        "{}/{}",
        claim.metadata.namespace.as_deref().unwrap_or(""),
        claim.metadata.name.as_deref().unwrap_or("")
    )
}

fn quantity(q: &k8s_openapi::apimachinery::pkg::api::resource::Quantity) -> i128 {
    capstan_meta::quantity::parse(&q.0).map_or(0, |m| m.0)
}

impl<'a> Allocator<'a> {
    /// An allocator for `claims` (unallocated); the devices other claims hold are those the
    /// index counts as allocated and `in_flight` (allocations made but not seen in the index
    /// yet). A request naming a class that does not exist is an error, and so is a request of
    /// no supported kind.
    pub fn new(
        index: &'a DraIndex,
        claims: Vec<&'a ResourceClaim>,
        in_flight: &'a InUse,
        selectors: &'a Selectors,
    ) -> Result<Self, AllocError> {
        let mut requests = Vec::new();
        let mut constraints = Vec::new();
        for (c, claim) in claims.iter().enumerate() {
            let Some(devices) = claim.spec.devices.as_ref() else {
                continue;
            };
            for r in devices.requests.iter().flatten() {
                let mut alternatives = Vec::new();
                if let Some(e) = &r.exactly {
                    alternatives.push(alternative(
                        index,
                        r.name.clone(),
                        &e.device_class_name,
                        e.selectors.as_deref(),
                        e.allocation_mode.as_deref(),
                        e.count,
                        e.admin_access == Some(true),
                        e.tolerations.as_deref(),
                        e.capacity.as_ref().and_then(|c| c.requests.as_ref()),
                    )?);
                } else if let Some(subs) = r.first_available.as_ref().filter(|s| !s.is_empty()) {
                    for s in subs {
                        alternatives.push(alternative(
                            index,
                            format!("{}/{}", r.name, s.name),
                            &s.device_class_name,
                            s.selectors.as_deref(),
                            s.allocation_mode.as_deref(),
                            s.count,
                            false,
                            s.tolerations.as_deref(),
                            s.capacity.as_ref().and_then(|c| c.requests.as_ref()),
                        )?);
                    }
                } else {
                    return Err(format!("request {}: unsupported request type", r.name));
                }
                requests.push(Request {
                    claim: c,
                    name: &r.name,
                    alternatives,
                });
            }
            for k in devices.constraints.iter().flatten() {
                let (attribute, distinct) = match (&k.match_attribute, &k.distinct_attribute) {
                    (Some(a), _) => (a.as_str(), false),
                    (None, Some(a)) => (a.as_str(), true),
                    (None, None) => continue,
                };
                constraints.push(Constraint {
                    claim: c,
                    requests: k.requests.iter().flatten().map(String::as_str).collect(),
                    attribute,
                    distinct,
                });
            }
        }
        Ok(Self {
            index,
            claims,
            requests,
            constraints,
            in_flight,
            selectors,
            counters: Mutex::default(),
        })
    }

    /// Whether another claim holds the device hashed `hash` ([`DraIndex::device_hash`]),
    /// allocated or being allocated.
    fn held(&self, hash: u64) -> bool {
        self.index.is_held(hash) || self.in_flight.devices.contains(&hash)
    }

    /// The capacity `name` of the shared device hashed `hash` that allocations consume.
    fn consumed(&self, hash: u64, name: &str) -> i128 {
        let of = |used: Option<&HashMap<String, i128>>| {
            used.and_then(|u| u.get(name)).copied().unwrap_or(0)
        };
        of(self.index.consumed(hash)) + of(self.in_flight.capacity.get(&hash))
    }

    /// Whether allocations hold the device hashed `hash`, whole or a share of it.
    fn in_use(&self, hash: u64) -> bool {
        self.held(hash)
            || self.index.consumed(hash).is_some()
            || self.in_flight.capacity.contains_key(&hash)
    }

    /// The claims being allocated, in order.
    pub fn claims(&self) -> &[&'a ResourceClaim] {
        &self.claims
    }

    /// One allocation per claim on `node`, `Ok(None)` when the node does not have the
    /// devices, an error when a selector fails to evaluate or the search is still going at
    /// `deadline` (`filterTimeout`).
    pub fn allocate(
        &self,
        node: &NodeInfo,
        deadline: Option<Instant>,
    ) -> Result<Option<Vec<AllocationResult>>, AllocError> {
        let candidates = self.candidates(node);
        let mut search = Search {
            allocator: self,
            candidates: &candidates,
            activations: (0..candidates.len()).map(|_| None).collect(),
            verdicts: HashMap::new(),
            taken: HashSet::new(),
            counters_taken: HashMap::new(),
            picks: Vec::new(),
            values: vec![Vec::new(); self.constraints.len()],
            steps: 0,
            deadline,
            capacity_taken: HashMap::new(),
            shares_taken: HashMap::new(),
        };
        if !search.place(0)? {
            return Ok(None);
        }
        Ok(Some(self.results(&search.picks, &candidates, node.name())))
    }

    /// The devices `node` can use, from the newest generation of each pool.
    fn candidates(&self, node: &NodeInfo) -> Vec<Candidate<'a>> {
        let mut out = Vec::new();
        for indexed in self.index.slices_for(node.name()) {
            let slice = &indexed.slice;
            let Some(pool_complete) = self.index.pool_state(slice) else {
                continue;
            };
            let spec = &slice.spec;
            let slice_scope = if spec.node_name.as_deref().is_some_and(|n| !n.is_empty()) {
                Some(Scope::Node)
            } else if spec.all_nodes == Some(true) {
                Some(Scope::All)
            } else if let Some(selector) = &spec.node_selector {
                if !node_selector_matches(&selector.node_selector_terms, node) {
                    continue;
                }
                Some(Scope::Selector(selector))
            } else {
                None
            };
            for (device, key) in spec.devices.iter().flatten().zip(&indexed.keys) {
                let scope = match slice_scope {
                    Some(s) => s,
                    None => match device_scope(device, node) {
                        Some(s) => s,
                        None => continue,
                    },
                };
                out.push(Candidate {
                    slice,
                    device,
                    id: &key.id,
                    hash: key.hash,
                    version: key.version,
                    scope,
                    pool_complete,
                });
            }
        }
        out
    }

    /// The room left in each counter of the pool of `slice`: its counter sets less what
    /// devices in use consume.
    fn counter_room(&self, slice: &ResourceSlice) -> CounterRoom {
        let pool = (slice.spec.driver.clone(), slice.spec.pool.name.clone());
        let mut cache = self.counters.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(room) = cache.get(&pool) {
            return room.clone();
        }
        let mut room = CounterRoom::new();
        let current: Vec<&ResourceSlice> = self
            .index
            .pool_of(slice)
            .filter(|s| s.spec.pool.generation == slice.spec.pool.generation)
            .collect();
        for s in &current {
            for set in s.spec.shared_counters.iter().flatten() {
                for (name, c) in &set.counters {
                    room.insert((set.name.clone(), name.clone()), quantity(&c.value));
                }
            }
        }
        for s in &current {
            for d in s.spec.devices.iter().flatten() {
                let id = (pool.0.clone(), pool.1.clone(), d.name.clone());
                if self.in_use(self.index.device_hash(&id)) {
                    for (key, amount) in consumption(d) {
                        *room.entry(key).or_default() -= amount;
                    }
                }
            }
        }
        cache.insert(pool, room.clone());
        room
    }

    /// The allocation results of the picks on `node`, claim by claim.
    fn results(
        &self,
        picks: &[Pick],
        candidates: &[Candidate<'_>],
        node: &str,
    ) -> Vec<AllocationResult> {
        let mut out = Vec::new();
        for (c, claim) in self.claims.iter().enumerate() {
            let mut results = Vec::new();
            let mut config = Vec::new();
            let mut scopes = Vec::new();
            let mut chosen_names = Vec::new();
            for pick in picks.iter().filter(|p| self.requests[p.request].claim == c) {
                let request = &self.requests[pick.request];
                let alt = &request.alternatives[pick.alternative];
                if !chosen_names.contains(&alt.name) {
                    chosen_names.push(alt.name.clone());
                    for cfg in alt.class.spec.config.iter().flatten() {
                        config.push(DeviceAllocationConfiguration {
                            source: "FromClass".into(),
                            requests: Some(vec![alt.name.clone()]),
                            opaque: cfg.opaque.clone(),
                        });
                    }
                }
                let cand = &candidates[pick.candidate];
                // A device bound to the node it was allocated for limits the claim to it.
                scopes.push(match cand.device.binds_to_node {
                    Some(true) => Scope::Node,
                    _ => cand.scope,
                });
                let conditions = |c: &Option<Vec<String>>| c.clone().filter(|c| !c.is_empty());
                results.push(DeviceRequestAllocationResult {
                    request: alt.name.clone(),
                    driver: cand.id.0.clone(),
                    pool: cand.id.1.clone(),
                    device: cand.id.2.clone(),
                    admin_access: alt.admin.then_some(true),
                    tolerations: (!alt.tolerations.is_empty()).then(|| alt.tolerations.to_vec()),
                    binding_conditions: conditions(&cand.device.binding_conditions),
                    binding_failure_conditions: conditions(&cand.device.binding_failure_conditions),
                    share_id: pick.share.as_ref().map(|_| capstan_meta::names::uid()),
                    consumed_capacity: pick.share.as_ref().map(|share| {
                        share
                            .iter()
                            .map(|(name, q, _)| (name.clone(), q.clone()))
                            .collect()
                    }),
                });
            }
            let devices = claim.spec.devices.as_ref();
            for cfg in devices.iter().flat_map(|d| d.config.iter().flatten()) {
                let applies = cfg.requests.as_ref().is_none_or(|names| {
                    names.is_empty()
                        || names.iter().any(|n| {
                            chosen_names
                                .iter()
                                .any(|c| c == n || c.split('/').next() == Some(n.as_str()))
                        })
                });
                if applies {
                    config.push(DeviceAllocationConfiguration {
                        source: "FromClaim".into(),
                        requests: cfg.requests.clone(),
                        opaque: cfg.opaque.clone(),
                    });
                }
            }
            out.push(AllocationResult {
                devices: Some(DeviceAllocationResult {
                    results: Some(results),
                    config: (!config.is_empty()).then_some(config),
                }),
                node_selector: allocation_scope(&scopes, node),
                allocation_timestamp: None,
            });
        }
        out
    }
}

/// Where a claim's devices can be used: the node, when one of them is local to it; else
/// where every node selector of them holds; else everywhere.
fn allocation_scope(scopes: &[Scope<'_>], node: &str) -> Option<NodeSelector> {
    if scopes.iter().any(|s| matches!(s, Scope::Node)) {
        return Some(NodeSelector {
            node_selector_terms: vec![NodeSelectorTerm {
                match_fields: Some(vec![NodeSelectorRequirement {
                    key: "metadata.name".into(),
                    operator: "In".into(),
                    values: Some(vec![node.to_string()]),
                }]),
                match_expressions: None,
            }],
        });
    }
    let mut selectors: Vec<&NodeSelector> = Vec::new();
    for s in scopes {
        if let Scope::Selector(sel) = s
            && !selectors.contains(sel)
        {
            selectors.push(sel);
        }
    }
    let (first, rest) = selectors.split_first()?;
    // Several selectors must all hold: each term of the result ANDs one term of each.
    let mut terms = first.node_selector_terms.clone();
    for sel in rest {
        let mut combined = Vec::new();
        for a in &terms {
            for b in &sel.node_selector_terms {
                let mut t = a.clone();
                let join = |x: &mut Option<Vec<NodeSelectorRequirement>>,
                            y: &Option<Vec<NodeSelectorRequirement>>| {
                    if let Some(y) = y {
                        x.get_or_insert_with(Vec::new).extend(y.iter().cloned());
                    }
                };
                join(&mut t.match_expressions, &b.match_expressions);
                join(&mut t.match_fields, &b.match_fields);
                combined.push(t);
            }
        }
        terms = combined;
    }
    Some(NodeSelector {
        node_selector_terms: terms,
    })
}

/// Where a device of a slice with per-device node selection may be used by `node`.
fn device_scope<'d>(device: &'d Device, node: &NodeInfo) -> Option<Scope<'d>> {
    if let Some(name) = device.node_name.as_deref().filter(|n| !n.is_empty()) {
        return (name == node.name()).then_some(Scope::Node);
    }
    if device.all_nodes == Some(true) {
        return Some(Scope::All);
    }
    let selector = device.node_selector.as_ref()?;
    node_selector_matches(&selector.node_selector_terms, node).then_some(Scope::Selector(selector))
}

#[allow(clippy::too_many_arguments)]
fn alternative<'a>(
    index: &'a DraIndex,
    name: String,
    class_name: &'a str,
    selectors: Option<&'a [k8s_openapi::api::resource::v1::DeviceSelector]>,
    mode: Option<&str>,
    count: Option<i64>,
    admin: bool,
    tolerations: Option<&'a [DeviceToleration]>,
    capacity: Option<&'a BTreeMap<String, Quantity>>,
) -> Result<Alternative<'a>, AllocError> {
    if class_name.is_empty() {
        return Err(format!("request {name}: unsupported request type"));
    }
    let class = index
        .class(class_name)
        .ok_or_else(|| format!("request {name}: device class {class_name} does not exist"))?;
    let count = match mode {
        Some("All") => None,
        _ => Some(usize::try_from(count.unwrap_or(1)).unwrap_or(1)),
    };
    Ok(Alternative {
        name,
        class,
        class_name,
        request_selectors: selectors
            .unwrap_or(&[])
            .iter()
            .filter_map(|s| s.cel.as_ref().map(|c| c.expression.as_str()))
            .collect(),
        count,
        admin,
        tolerations: tolerations.unwrap_or(&[]),
        capacity,
    })
}

/// What a request for `asked` (none: the policy's default, else the whole capacity)
/// consumes of `capacity`: rounded up to the policy's valid range (from its minimum, in
/// steps) or to its next valid value. The quantity as written to the allocation, and its
/// thousandths.
fn consumed_capacity(asked: Option<&Quantity>, capacity: &DeviceCapacity) -> (Quantity, i128) {
    let policy = capacity.request_policy.as_ref();
    let Some(asked) = asked else {
        let q = policy
            .and_then(|p| p.default.clone())
            .unwrap_or_else(|| capacity.value.clone());
        let amount = quantity(&q);
        return (q, amount);
    };
    let amount = quantity(asked);
    let Some(policy) = policy else {
        return (asked.clone(), amount);
    };
    if let Some(range) = policy.valid_range.as_ref() {
        let min = quantity(&range.min);
        if amount < min {
            return (range.min.clone(), min);
        }
        let Some(step) = range.step.as_ref().map(quantity).filter(|s| *s > 0) else {
            return (asked.clone(), amount);
        };
        let steps = (amount - min + step - 1) / step;
        let rounded = min + steps * step;
        if rounded == amount {
            return (asked.clone(), amount);
        }
        return (Quantity(format_binary(rounded)), rounded);
    }
    if let Some(v) = policy
        .valid_values
        .iter()
        .flatten()
        .find(|v| amount <= quantity(v))
    {
        return (v.clone(), quantity(v));
    }
    (asked.clone(), amount)
}

/// Whether consuming `amount` breaks the request policy: above its range's maximum, off its
/// steps, or not one of its valid values (its default always passes).
fn violates_policy(amount: i128, policy: Option<&CapacityRequestPolicy>) -> bool {
    let Some(policy) = policy else {
        return false;
    };
    if policy
        .default
        .as_ref()
        .is_some_and(|d| quantity(d) == amount)
    {
        return false;
    }
    if let Some(range) = policy.valid_range.as_ref() {
        if range.max.as_ref().is_some_and(|m| amount > quantity(m)) {
            return true;
        }
        let min = quantity(&range.min);
        let step = range.step.as_ref().map(quantity).filter(|s| *s > 0);
        return step.is_some_and(|s| (amount - min) % s != 0);
    }
    match policy.valid_values.as_deref() {
        Some(valid) if !valid.is_empty() => !valid.iter().any(|v| quantity(v) == amount),
        _ => false,
    }
}

/// A quantity of `milli` thousandths in the binary-suffixed form (`20Gi`, `1536`, `500m`).
fn format_binary(milli: i128) -> String {
    if milli % 1000 != 0 {
        return format!("{milli}m");
    }
    let units = milli / 1000;
    let suffixes = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"];
    let mut value = units;
    let mut power = 0;
    while value != 0 && value % 1024 == 0 && power + 1 < suffixes.len() {
        value /= 1024;
        power += 1;
    }
    format!("{value}{}", suffixes[power])
}

/// What a device consumes of its pool's counters: ((counter set, counter), amount).
fn consumption(device: &Device) -> Vec<((String, String), i128)> {
    device
        .consumes_counters
        .iter()
        .flatten()
        .flat_map(|c| {
            c.counters
                .iter()
                .map(|(name, v)| ((c.counter_set.clone(), name.clone()), quantity(&v.value)))
        })
        .collect()
}

/// Whether the tolerations tolerate every taint of the device that keeps devices from
/// being allocated.
fn tolerated(device: &Device, tolerations: &[DeviceToleration]) -> bool {
    device
        .taints
        .iter()
        .flatten()
        .filter(|t| t.effect == "NoSchedule" || t.effect == "NoExecute")
        .all(|t| {
            tolerations.iter().any(|tol| {
                let effect_ok = tol
                    .effect
                    .as_deref()
                    .is_none_or(|e| e.is_empty() || e == t.effect);
                let key = tol.key.as_deref().unwrap_or("");
                match tol.operator.as_deref().unwrap_or("Equal") {
                    "Exists" => effect_ok && (key.is_empty() || key == t.key),
                    _ => {
                        effect_ok
                            && key == t.key
                            && tol.value.as_deref().unwrap_or("")
                                == t.value.as_deref().unwrap_or("")
                    }
                }
            })
        })
}

/// The value of the (qualified) attribute `name` of a device of `driver`.
fn attribute<'d>(device: &'d Device, driver: &str, name: &str) -> Option<&'d DeviceAttribute> {
    let attrs = device.attributes.as_ref()?;
    if let Some(v) = attrs.get(name) {
        return Some(v);
    }
    let (domain, short) = name.rsplit_once('/')?;
    (domain == driver).then(|| attrs.get(short)).flatten()
}

fn same_attribute(a: &DeviceAttribute, b: &DeviceAttribute) -> bool {
    a.int == b.int && a.bool == b.bool && a.string == b.string && a.version == b.version
}

/// The device as CEL sees it.
fn cel_device<'d>(driver: &'d str, device: &'d Device) -> CelDevice<'d> {
    CelDevice {
        driver,
        attributes: device
            .attributes
            .iter()
            .flatten()
            .filter_map(|(name, v)| {
                let value = if let Some(i) = v.int {
                    CelAttribute::Int(i)
                } else if let Some(b) = v.bool {
                    CelAttribute::Bool(b)
                } else if let Some(s) = &v.string {
                    CelAttribute::String(s.clone())
                } else if let Some(s) = &v.version {
                    CelAttribute::Version(s.clone())
                } else {
                    return None;
                };
                Some((name.as_str(), value))
            })
            .collect(),
        capacity: device
            .capacity
            .iter()
            .flatten()
            .map(|(name, c)| (name.as_str(), c.value.0.as_str()))
            .collect(),
        allow_multiple_allocations: device.allow_multiple_allocations == Some(true),
    }
}

/// A device picked for a request.
#[derive(Debug, Clone)]
struct Pick {
    request: usize,
    alternative: usize,
    candidate: usize,
    /// For a share of a shared device: the capacity it consumes (name, quantity,
    /// thousandths).
    share: Option<Vec<(String, Quantity, i128)>>,
}

/// One node's backtracking search.
struct Search<'s, 'a> {
    allocator: &'s Allocator<'a>,
    candidates: &'s [Candidate<'a>],
    activations: Vec<Option<Activation>>,
    /// (candidate, expression) → whether it selects the device, for slices whose verdicts
    /// [`Selectors`] cannot keep.
    verdicts: HashMap<(usize, String), bool>,
    taken: HashSet<usize>,
    counters_taken: HashMap<(String, String, String, String), i128>,
    picks: Vec<Pick>,
    /// The attribute values each constraint has seen so far.
    values: Vec<Vec<DeviceAttribute>>,
    steps: usize,
    deadline: Option<Instant>,
    /// (candidate, capacity name) → what this search's shares of the shared device consume.
    capacity_taken: HashMap<(usize, String), i128>,
    /// Candidate → how many shares of the shared device this search took.
    shares_taken: HashMap<usize, usize>,
}

impl Search<'_, '_> {
    /// Places requests from `request` on: true when all are met (the picks hold them).
    fn place(&mut self, request: usize) -> Result<bool, AllocError> {
        let a = self.allocator;
        let Some(r) = a.requests.get(request) else {
            return Ok(true);
        };
        for alt in 0..r.alternatives.len() {
            let matching = self.matching(request, alt)?;
            match r.alternatives[alt].count {
                Some(n) => {
                    if matching.len() >= n && self.choose(request, alt, &matching, 0, n)? {
                        return Ok(true);
                    }
                }
                None => {
                    if self.take_all(request, alt, &matching)? {
                        return Ok(true);
                    }
                }
            }
        }
        Ok(false)
    }

    /// Picks `left` more devices from `matching[from..]` for the alternative, then goes on
    /// to the next request.
    fn choose(
        &mut self,
        request: usize,
        alt: usize,
        matching: &[usize],
        from: usize,
        left: usize,
    ) -> Result<bool, AllocError> {
        if left == 0 {
            return self.place(request + 1);
        }
        for i in from..matching.len() {
            if matching.len() - i < left {
                break;
            }
            self.steps += 1;
            if self.steps > SEARCH_BUDGET {
                return Ok(false);
            }
            // The clock is read once every 256 steps.
            if self.steps.is_multiple_of(256) && self.deadline.is_some_and(|d| Instant::now() >= d)
            {
                return Err("timed out trying to allocate devices".into());
            }
            let cand = matching[i];
            if !self.push(request, alt, cand) {
                continue;
            }
            if self.choose(request, alt, matching, i + 1, left - 1)? {
                return Ok(true);
            }
            self.pop();
        }
        Ok(false)
    }

    /// Picks every matching device (all must be free, from complete pools, and at least
    /// one must exist), then goes on to the next request.
    fn take_all(
        &mut self,
        request: usize,
        alt: usize,
        matching: &[usize],
    ) -> Result<bool, AllocError> {
        let admin = self.allocator.requests[request].alternatives[alt].admin;
        let usable = !matching.is_empty()
            && matching.iter().all(|c| {
                let cand = &self.candidates[*c];
                cand.pool_complete && (admin || !self.allocator.held(cand.hash))
            });
        if !usable {
            return Ok(false);
        }
        let mut pushed = 0;
        for c in matching {
            if !self.push(request, alt, *c) {
                break;
            }
            pushed += 1;
        }
        if pushed == matching.len() && self.place(request + 1)? {
            return Ok(true);
        }
        (0..pushed).for_each(|_| self.pop());
        Ok(false)
    }

    /// The candidates an alternative's selectors accept, that it tolerates and may use.
    fn matching(&mut self, request: usize, alt: usize) -> Result<Vec<usize>, AllocError> {
        let a = self.allocator;
        let r = &a.requests[request];
        let alternative = &r.alternatives[alt];
        let claim = a.claims[r.claim];
        // The selectors with their hashes, once for every candidate.
        let class_selectors: Vec<(&str, u64)> = alternative
            .class
            .spec
            .selectors
            .iter()
            .flatten()
            .filter_map(|s| s.cel.as_ref().map(|c| c.expression.as_str()))
            .map(|e| (e, expression_hash(e)))
            .collect();
        let request_selectors: Vec<(&str, u64)> = alternative
            .request_selectors
            .iter()
            .map(|e| (*e, expression_hash(e)))
            .collect();
        let mut out = Vec::new();
        for c in 0..self.candidates.len() {
            let cand = &self.candidates[c];
            if !alternative.admin && a.held(cand.hash) && alternative.count.is_some() {
                continue;
            }
            if !tolerated(cand.device, alternative.tolerations) {
                continue;
            }
            let capacities = cand.device.capacity.as_ref();
            let asks_unknown = alternative.capacity.is_some_and(|asked| {
                asked
                    .keys()
                    .any(|name| !capacities.is_some_and(|c| c.contains_key(name)))
            });
            if asks_unknown {
                continue;
            }
            let mut accepted = true;
            for (i, (expr, hash)) in class_selectors.iter().enumerate() {
                let ok = self
                    .selects(c, expr, *hash)
                    .map_err(|e| format!("class {}: selector #{i}: {e}", alternative.class_name))?;
                if !ok {
                    accepted = false;
                    break;
                }
            }
            if accepted {
                for (i, (expr, hash)) in request_selectors.iter().enumerate() {
                    let ok = self
                        .selects(c, expr, *hash)
                        .map_err(|e| format!("claim {}: selector #{i}: {e}", claim_ref(claim)))?;
                    if !ok {
                        accepted = false;
                        break;
                    }
                }
            }
            if accepted {
                out.push(c);
            }
        }
        Ok(out)
    }

    /// Whether `expression` selects candidate `c` (evaluated once per search).
    fn selects(&mut self, c: usize, expression: &str, hash: u64) -> Result<bool, String> {
        let cand = &self.candidates[c];
        let shared = cand
            .version
            .map(|device| Selectors::verdict_key(hash, device));
        let known = match shared {
            Some(key) => self.allocator.selectors.verdict(key),
            None => self.verdicts.get(&(c, expression.to_string())).copied(),
        };
        if let Some(verdict) = known {
            return Ok(verdict);
        }
        let program = self
            .allocator
            .selectors
            .get(expression)
            .map_err(|e| format!("CEL compile error: {e}"))?;
        let cand = &self.candidates[c];
        if self.activations[c].is_none() {
            let mut activation = Activation::new();
            activation
                .bind_device(&cel_device(&cand.slice.spec.driver, cand.device))
                .map_err(|e| format!("CEL runtime error: {e}"))?;
            self.activations[c] = Some(activation);
        }
        let activation = self.activations[c].as_ref().expect("bound above");
        let verdict = program
            .run_bool(activation)
            .map_err(|e| format!("CEL runtime error: {e}"))?;
        match shared {
            Some(key) => self.allocator.selectors.remember(key, verdict),
            None => {
                self.verdicts.insert((c, expression.to_string()), verdict);
            }
        }
        Ok(verdict)
    }

    /// Takes candidate `cand` for the request when it is free, its counters have room and
    /// the claim's constraints hold.
    fn push(&mut self, request: usize, alt: usize, cand: usize) -> bool {
        let a = self.allocator;
        let r = &a.requests[request];
        let alternative = &r.alternatives[alt];
        let candidate = &self.candidates[cand];
        if !alternative.admin && self.taken.contains(&cand) {
            return false;
        }
        let shared = candidate.device.allow_multiple_allocations == Some(true);
        let share = if shared || alternative.capacity.is_some() {
            match self.share_of(cand, alternative, shared) {
                Some(share) => shared.then_some(share),
                None => return false,
            }
        } else {
            None
        };
        // A shared device consumes its pool's counters once, with its first share.
        let first_use =
            !shared || (!a.in_use(candidate.hash) && !self.shares_taken.contains_key(&cand));
        let consumed = if first_use {
            consumption(candidate.device)
        } else {
            Vec::new()
        };
        if !consumed.is_empty() && !alternative.admin {
            let room = a.counter_room(candidate.slice);
            let (driver, pool, _) = &candidate.id;
            for ((set, counter), amount) in &consumed {
                let left = room.get(&(set.clone(), counter.clone())).copied();
                let taken = self
                    .counters_taken
                    .get(&(driver.clone(), pool.clone(), set.clone(), counter.clone()))
                    .copied()
                    .unwrap_or(0);
                match left {
                    Some(left) if left - taken >= *amount => {}
                    _ => return false,
                }
            }
        }
        // Constraints naming this request (or all of the claim's).
        let mut checked = Vec::new();
        for (k, constraint) in a.constraints.iter().enumerate() {
            if constraint.claim != r.claim
                || !(constraint.requests.is_empty()
                    || constraint
                        .requests
                        .iter()
                        .any(|n| *n == r.name || *n == alternative.name))
            {
                continue;
            }
            let Some(value) = attribute(
                candidate.device,
                &candidate.slice.spec.driver,
                constraint.attribute,
            ) else {
                return false;
            };
            let seen = &self.values[k];
            let ok = if constraint.distinct {
                !seen.iter().any(|v| same_attribute(v, value))
            } else {
                seen.first().is_none_or(|v| same_attribute(v, value))
            };
            if !ok {
                return false;
            }
            checked.push((k, value.clone()));
        }
        for (k, value) in checked {
            self.values[k].push(value);
        }
        if !alternative.admin {
            if let Some(share) = &share {
                *self.shares_taken.entry(cand).or_default() += 1;
                for (name, _, amount) in share {
                    *self.capacity_taken.entry((cand, name.clone())).or_default() += amount;
                }
            } else {
                self.taken.insert(cand);
            }
            let (driver, pool, _) = &candidate.id;
            for ((set, counter), amount) in consumed {
                *self
                    .counters_taken
                    .entry((driver.clone(), pool.clone(), set, counter))
                    .or_default() += amount;
            }
        }
        self.picks.push(Pick {
            request,
            alternative: alt,
            candidate: cand,
            share,
        });
        true
    }

    /// What a share of candidate `cand` for `alternative` consumes of each of the device's
    /// capacities (its request rounded up as the capacity's request policy asks), when that
    /// is allowed and, for a `shared` device, fits beside the shares allocations hold;
    /// `None` when it does not.
    fn share_of(
        &self,
        cand: usize,
        alternative: &Alternative<'_>,
        shared: bool,
    ) -> Option<Vec<(String, Quantity, i128)>> {
        let candidate = &self.candidates[cand];
        let mut share = Vec::new();
        for (name, capacity) in candidate.device.capacity.iter().flatten() {
            let asked = alternative.capacity.and_then(|c| c.get(name));
            let (q, amount) = consumed_capacity(asked, capacity);
            if violates_policy(amount, capacity.request_policy.as_ref()) {
                return None;
            }
            let mut total = amount;
            if shared {
                total += self.allocator.consumed(candidate.hash, name)
                    + self
                        .capacity_taken
                        .get(&(cand, name.clone()))
                        .copied()
                        .unwrap_or(0);
            }
            if total > quantity(&capacity.value) {
                return None;
            }
            share.push((name.clone(), q, amount));
        }
        Some(share)
    }

    /// Undoes the last `push`.
    fn pop(&mut self) {
        let Some(pick) = self.picks.pop() else {
            return;
        };
        let a = self.allocator;
        let r = &a.requests[pick.request];
        let alternative = &r.alternatives[pick.alternative];
        let candidate = &self.candidates[pick.candidate];
        for (k, constraint) in a.constraints.iter().enumerate() {
            if constraint.claim == r.claim
                && (constraint.requests.is_empty()
                    || constraint
                        .requests
                        .iter()
                        .any(|n| *n == r.name || *n == alternative.name))
            {
                self.values[k].pop();
            }
        }
        if !alternative.admin {
            let mut consumed = consumption(candidate.device);
            if let Some(share) = &pick.share {
                if let Some(n) = self.shares_taken.get_mut(&pick.candidate) {
                    *n -= 1;
                    if *n == 0 {
                        self.shares_taken.remove(&pick.candidate);
                    }
                }
                for (name, _, amount) in share {
                    if let Some(t) = self.capacity_taken.get_mut(&(pick.candidate, name.clone())) {
                        *t -= amount;
                    }
                }
                // Counters were consumed with the device's first share only.
                let first = !self.allocator.in_use(candidate.hash)
                    && !self.shares_taken.contains_key(&pick.candidate);
                if !first {
                    consumed.clear();
                }
            } else {
                self.taken.remove(&pick.candidate);
            }
            let (driver, pool, _) = &candidate.id;
            for ((set, counter), amount) in consumed {
                if let Some(t) =
                    self.counters_taken
                        .get_mut(&(driver.clone(), pool.clone(), set, counter))
                {
                    *t -= amount;
                }
            }
        }
    }
}
