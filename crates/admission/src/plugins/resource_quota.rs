//! `ResourceQuota`: a new object (and a claim that grows) is charged to every quota of its
//! namespace whose scopes cover it; what would pass a quota's hard limit is refused, and what
//! passes is added to the quota's `status.used` at once (a write guarded by the quota's
//! resourceVersion, retried on conflict), so concurrent creates cannot overshoot. The quota
//! controller recounts `used` from what the namespace holds (releasing deleted objects); the
//! charges whose requests have not ended yet ([`ChargesInFlight`]) tell it what it cannot
//! see stored yet.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use async_trait::async_trait;
use capstan_meta::quantity::{self, Milli};
use capstan_meta::status::Reason;
use capstan_meta::{ApiError, GroupResource};
use serde_json::{Value, json};

use super::{core, forbidden};
use crate::attributes::{Attributes, Operation};
use crate::chain::{Lister, Plugin};
use crate::quota::{self, COMPUTE, Usage};

/// Writes objects' status for a plugin (the registry implements it).
#[async_trait]
pub trait StatusWriter: Send + Sync + 'static {
    /// Reads the object as stored now (not from a cache).
    async fn read(
        &self,
        resource: &GroupResource,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Value>, ApiError>;
    /// Replaces the object's status; its `resourceVersion` guards the write (409 when
    /// another write came first).
    async fn write_status(
        &self,
        resource: &GroupResource,
        namespace: &str,
        object: &Value,
    ) -> Result<(), ApiError>;
}

/// How long a plugin waits for a [`NamespaceSet`]'s first list before it refuses the
/// request (upstream's admission waits as long for its informers).
pub const WAIT_FOR_LISTED: std::time::Duration = std::time::Duration::from_secs(10);

/// The namespaces that hold objects of one kind (quotas, limit ranges), so that requests
/// elsewhere cost the plugins that read them nothing. The registry adds a namespace as an
/// object is created there (before it is stored: never later than the object); the
/// controllers add and remove them as they follow the objects.
///
/// A set made by [`NamespaceSet::until_listed`] knows nothing of stored objects until its
/// follower has listed them once ([`NamespaceSet::set_listed`]): until then
/// [`NamespaceSet::may_hold`] waits, so that a request right after a restart is not let through
/// a namespace whose quota was not loaded yet.
#[derive(Debug)]
pub struct NamespaceSet {
    counts: RwLock<HashMap<String, usize>>,
    listed: tokio::sync::watch::Sender<bool>,
}

impl Default for NamespaceSet {
    /// A set that needs no first list (filled only as objects are created, or by hand).
    fn default() -> Self {
        Self {
            counts: RwLock::default(),
            listed: tokio::sync::watch::Sender::new(true),
        }
    }
}

impl NamespaceSet {
    /// A set whose follower has yet to list the stored objects.
    pub fn until_listed() -> Self {
        Self {
            counts: RwLock::default(),
            listed: tokio::sync::watch::Sender::new(false),
        }
    }

    /// The stored objects have been listed once: the set is complete from now on.
    pub fn set_listed(&self) {
        self.listed
            .send_if_modified(|l| !std::mem::replace(l, true));
    }

    /// Returns once the stored objects have been listed.
    pub async fn wait_listed(&self) {
        let mut listed = self.listed.subscribe();
        // The sender lives as long as `self`, so the wait cannot fail.
        let _ = listed.wait_for(|l| *l).await;
    }

    /// Whether `namespace` may hold objects, once the set is complete; None when it is not
    /// within [`WAIT_FOR_LISTED`].
    pub async fn may_hold(&self, namespace: &str) -> Option<bool> {
        if !*self.listed.borrow() {
            tokio::time::timeout(WAIT_FOR_LISTED, self.wait_listed())
                .await
                .ok()?;
        }
        Some(self.contains(namespace))
    }

    /// One more object in `namespace`.
    pub fn insert(&self, namespace: &str) {
        *self
            .counts
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .entry(namespace.to_string())
            .or_default() += 1;
    }

    /// Sets how many objects `namespace` holds (0 removes it).
    pub fn set(&self, namespace: &str, count: usize) {
        let mut map = self.counts.write().unwrap_or_else(|e| e.into_inner());
        if count == 0 {
            map.remove(namespace);
        } else {
            map.insert(namespace.to_string(), count);
        }
    }

    /// Whether `namespace` may hold objects.
    pub fn contains(&self, namespace: &str) -> bool {
        self.counts
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .contains_key(namespace)
    }

    /// Whether no namespace holds any.
    pub fn is_empty(&self) -> bool {
        self.counts
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
    }
}

/// A charge whose request has not ended: its object may not be stored yet.
#[derive(Debug, Clone)]
pub struct Charge {
    /// The charged object's resource.
    pub resource: GroupResource,
    /// The object (its name, and what it uses).
    pub object: Value,
    /// Whether the request updates an object that is already stored (and counted at its
    /// old size).
    pub update: bool,
    /// Whether every quota's write of the charge has succeeded. Until then a quota may or
    /// may not hold it (the write may land, or be refused on a retry).
    pub written: bool,
}

/// The charges of this server's requests that have not ended, by namespace. A recount of
/// `status.used` that reads the quota, then these, then the objects, counts every charged
/// object exactly once: a charge the quota holds either ended before (its object stored
/// or refused) or is listed here.
#[derive(Debug, Default)]
pub struct ChargesInFlight {
    next: AtomicU64,
    charges: Mutex<HashMap<String, BTreeMap<u64, Charge>>>,
}

impl ChargesInFlight {
    /// Records `charge` in `namespace` until the returned guard is dropped.
    fn begin(self: &Arc<Self>, namespace: &str, charge: Charge) -> ChargeGuard {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.charges
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .entry(namespace.to_string())
            .or_default()
            .insert(id, charge);
        ChargeGuard {
            charges: self.clone(),
            namespace: namespace.to_string(),
            id,
        }
    }

    /// The charges in flight in `namespace`.
    pub fn in_namespace(&self, namespace: &str) -> Vec<Charge> {
        self.charges
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(namespace)
            .map(|c| c.values().cloned().collect())
            .unwrap_or_default()
    }
}

/// Removes its charge from [`ChargesInFlight`] when the request ends.
struct ChargeGuard {
    charges: Arc<ChargesInFlight>,
    namespace: String,
    id: u64,
}

impl ChargeGuard {
    /// Marks the charge as held by every quota it was judged against.
    fn written(&self) {
        let mut map = self
            .charges
            .charges
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(charge) = map
            .get_mut(&self.namespace)
            .and_then(|c| c.get_mut(&self.id))
        {
            charge.written = true;
        }
    }
}

impl Drop for ChargeGuard {
    fn drop(&mut self) {
        let mut map = self
            .charges
            .charges
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(charges) = map.get_mut(&self.namespace) {
            charges.remove(&self.id);
            if charges.is_empty() {
                map.remove(&self.namespace);
            }
        }
    }
}

/// Tries of a charge that lost a race with another write of the quota.
const CHARGE_TRIES: usize = 16;

/// The `ResourceQuota` plugin.
pub struct ResourceQuota {
    lister: Arc<dyn Lister>,
    writer: Arc<dyn StatusWriter>,
    namespaces: Arc<NamespaceSet>,
    in_flight: Arc<ChargesInFlight>,
}

impl ResourceQuota {
    /// Reads quotas through `lister`, charges them through `writer`; looks only in
    /// `namespaces`; keeps its charges in `in_flight` until their requests end.
    pub fn new(
        lister: Arc<dyn Lister>,
        writer: Arc<dyn StatusWriter>,
        namespaces: Arc<NamespaceSet>,
        in_flight: Arc<ChargesInFlight>,
    ) -> Self {
        Self {
            lister,
            writer,
            namespaces,
            in_flight,
        }
    }
}

fn amounts(v: &Value) -> BTreeMap<String, Milli> {
    v.as_object()
        .into_iter()
        .flatten()
        .filter_map(|(k, q)| Some((k.clone(), quantity::parse(q.as_str()?)?)))
        .collect()
}

fn listed(resources: &[&String], amounts: &BTreeMap<String, Milli>) -> String {
    resources
        .iter()
        .map(|r| {
            format!(
                "{r}={}",
                quota::show(amounts.get(*r).copied().unwrap_or(Milli(0)))
            )
        })
        .collect::<Vec<_>>()
        .join(",")
}

/// What the request adds: the new object's usage, less the old one's for updates.
fn delta(a: &Attributes) -> Usage {
    let new = a
        .object
        .as_ref()
        .map(|o| quota::usage(&a.resource.group, &a.resource.resource, o))
        .unwrap_or_default();
    let old = a
        .old_object
        .as_ref()
        .map(|o| quota::usage(&a.resource.group, &a.resource.resource, o))
        .unwrap_or_default();
    new.into_iter()
        .filter_map(|(k, v)| {
            let grown = v.0 - old.get(&k).map_or(0, |o| o.0);
            (grown > 0).then_some((k, Milli(grown)))
        })
        .collect()
}

/// The quota's verdict on `delta`: nothing to charge (`None`), the charged quota, or a
/// refusal.
fn judge(a: &Attributes, quota: &Value, delta: &Usage) -> Result<Option<Value>, ApiError> {
    let object = a.object.as_ref().unwrap_or(&Value::Null);
    if !quota::covers(quota, &a.resource.resource, object) {
        return Ok(None);
    }
    let name = quota["metadata"]["name"].as_str().unwrap_or_default();
    let hard = amounts(&quota["spec"]["hard"]);
    if a.resource.group.is_empty()
        && a.resource.resource == "pods"
        && a.operation == Operation::Create
    {
        let mut missing: Vec<&str> = COMPUTE
            .iter()
            .copied()
            .filter(|r| hard.contains_key(*r) && !delta.contains_key(*r))
            .collect();
        missing.sort_unstable();
        if !missing.is_empty() {
            return Err(forbidden(
                a,
                &format!("failed quota: {name}: must specify {}", missing.join(",")),
            ));
        }
    }
    let relevant: Vec<&String> = delta.keys().filter(|r| hard.contains_key(*r)).collect();
    if relevant.is_empty() {
        return Ok(None);
    }
    let used = amounts(&quota["status"]["used"]);
    let exceeded: Vec<&String> = relevant
        .iter()
        .copied()
        .filter(|r| used.get(*r).map_or(0, |u| u.0) + delta[*r].0 > hard[*r].0)
        .collect();
    if !exceeded.is_empty() {
        return Err(forbidden(
            a,
            &format!(
                "exceeded quota: {name}, requested: {}, used: {}, limited: {}",
                listed(&exceeded, delta),
                listed(&exceeded, &used),
                listed(&exceeded, &hard)
            ),
        ));
    }
    let mut charged = quota.clone();
    let status = &mut charged["status"];
    if !status["used"].is_object() {
        status["used"] = json!({});
    }
    for r in relevant {
        let total = Milli(used.get(r).map_or(0, |u| u.0) + delta[r].0);
        status["used"][r.as_str()] = json!(quota::show(total));
    }
    if !status["hard"].is_object() {
        status["hard"] = quota["spec"]["hard"].clone();
    }
    Ok(Some(charged))
}

#[async_trait]
impl Plugin for ResourceQuota {
    fn name(&self) -> &'static str {
        "ResourceQuota"
    }

    fn validates(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        if self.namespaces.is_empty() {
            return false;
        }
        // A pod's resize changes what it requests: charged as upstream charges it.
        if subresource == "resize" {
            return operation == Operation::Update
                && resource.group.is_empty()
                && resource.resource == "pods";
        }
        if !subresource.is_empty() {
            return false;
        }
        match operation {
            Operation::Create => true,
            Operation::Update => {
                resource.group.is_empty()
                    && matches!(
                        resource.resource.as_str(),
                        "persistentvolumeclaims" | "services"
                    )
            }
            _ => false,
        }
    }

    async fn validate(&self, a: &Attributes) -> Result<(), ApiError> {
        if a.namespace.is_empty() {
            return Ok(());
        }
        match self.namespaces.may_hold(&a.namespace).await {
            Some(true) => {}
            Some(false) => return Ok(()),
            None => return Err(forbidden(a, "not yet ready to handle request")),
        }
        let delta = delta(a);
        if delta.is_empty() {
            return Ok(());
        }
        let resource = core("resourcequotas");
        let mut quotas = self.lister.list(&resource, &a.namespace).await?;
        quotas.sort_by(|x, y| {
            x["metadata"]["name"]
                .as_str()
                .cmp(&y["metadata"]["name"].as_str())
        });
        // Every quota judges first: nothing is charged unless all of them allow it.
        let mut charges = Vec::new();
        for quota in &quotas {
            if let Some(charged) = judge(a, quota, &delta)? {
                charges.push(charged);
            }
        }
        if a.dry_run || charges.is_empty() {
            return Ok(());
        }
        // Recorded before the quota changes, so that a recount which sees the charge also
        // sees it in flight (or its object stored).
        let charge = Charge {
            resource: a.resource.clone(),
            object: a.object.clone().unwrap_or_default(),
            update: a.operation == Operation::Update,
            written: false,
        };
        // Marked written only once every quota holds it: a recount that finds a charge not
        // written cannot tell whether to count it, and tries again later (a charge refused
        // on a retry must not be counted, one that lands must).
        let guard = self.in_flight.begin(&a.namespace, charge);
        for mut charged in charges {
            let name = charged["metadata"]["name"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let mut tries = 0;
            loop {
                match self
                    .writer
                    .write_status(&resource, &a.namespace, &charged)
                    .await
                {
                    Ok(()) => break,
                    Err(e) if e.reason == Reason::Conflict && tries < CHARGE_TRIES => {
                        tries += 1;
                        let Some(fresh) = self.writer.read(&resource, &a.namespace, &name).await?
                        else {
                            break;
                        };
                        match judge(a, &fresh, &delta)? {
                            Some(again) => charged = again,
                            None => break,
                        }
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        guard.written();
        a.feedback.hold(guard);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A set that awaits its first list answers only after it, and not at all when the list
    /// takes longer than the plugins wait; a set that needs no list answers at once.
    #[tokio::test(start_paused = true)]
    async fn a_namespace_set_answers_once_listed() {
        assert_eq!(NamespaceSet::default().may_hold("q").await, Some(false));
        let set = Arc::new(NamespaceSet::until_listed());
        let asking = tokio::spawn({
            let set = set.clone();
            async move { set.may_hold("q").await }
        });
        tokio::time::sleep(WAIT_FOR_LISTED / 2).await;
        assert!(!asking.is_finished());
        set.set("q", 1);
        set.set_listed();
        assert_eq!(asking.await.unwrap(), Some(true));
        let never = NamespaceSet::until_listed();
        assert_eq!(never.may_hold("q").await, None);
    }
    use crate::MemoryLister;
    use capstan_auth::UserInfo;

    fn pod_create(cpu: Option<&str>) -> Attributes {
        let mut a = Attributes::new(Operation::Create, core("pods"), UserInfo::default());
        a.namespace = "ns".into();
        a.name = "p".into();
        let resources = match cpu {
            Some(c) => json!({"requests": {"cpu": c}, "limits": {"cpu": c}}),
            None => json!({}),
        };
        a.object = Some(
            json!({"spec": {"containers": [{"name": "c", "resources": resources}]}, "status": {"qosClass": "Burstable"}}),
        );
        a
    }

    fn quota(hard: Value, used: Value) -> Value {
        json!({"metadata": {"name": "q", "resourceVersion": "5"}, "spec": {"hard": hard}, "status": {"hard": hard, "used": used}})
    }

    #[test]
    fn charges_within_the_limit_and_refuses_beyond_it() {
        let a = pod_create(Some("500m"));
        let q = quota(
            json!({"pods": "2", "requests.cpu": "1"}),
            json!({"pods": "1", "requests.cpu": "250m"}),
        );
        let charged = judge(&a, &q, &delta(&a)).unwrap().unwrap();
        assert_eq!(
            charged["status"]["used"],
            json!({"pods": "2", "requests.cpu": "750m"})
        );
        assert_eq!(charged["metadata"]["resourceVersion"], "5");
        let full = quota(
            json!({"pods": "2", "requests.cpu": "1"}),
            json!({"pods": "2", "requests.cpu": "750m"}),
        );
        let err = judge(&a, &full, &delta(&a)).unwrap_err();
        assert_eq!(err.code(), 403);
        assert_eq!(
            err.message,
            "pods \"p\" is forbidden: exceeded quota: q, requested: pods=1,requests.cpu=500m, used: pods=2,requests.cpu=750m, limited: pods=2,requests.cpu=1"
        );
    }

    #[test]
    fn a_charge_stays_in_flight_until_its_request_ends() {
        let in_flight = Arc::new(ChargesInFlight::default());
        let charge = |name: &str| Charge {
            resource: core("pods"),
            object: json!({"metadata": {"name": name}}),
            update: false,
            written: false,
        };
        let feedback = Arc::new(crate::Feedback::default());
        feedback.hold(in_flight.begin("ns", charge("a")));
        let other = in_flight.begin("ns", charge("b"));
        other.written();
        let written: Vec<bool> = in_flight
            .in_namespace("ns")
            .iter()
            .map(|c| c.written)
            .collect();
        assert_eq!(written, [false, true]);
        let names = |ns: &str| {
            in_flight
                .in_namespace(ns)
                .iter()
                .map(|c| c.object["metadata"]["name"].as_str().unwrap().to_string())
                .collect::<Vec<_>>()
        };
        assert_eq!(names("ns"), ["a", "b"]);
        assert!(names("elsewhere").is_empty());
        drop(other);
        assert_eq!(names("ns"), ["a"]);
        // The request's feedback goes when the request ends, and the charge with it.
        drop(feedback);
        assert!(names("ns").is_empty());
        assert!(in_flight.charges.lock().unwrap().is_empty());
    }

    /// Quotas as stored: the list shows room, every read a full quota, and every
    /// write loses its race. Notes what a recount would find in flight during each write.
    struct Contended {
        reads: Mutex<u32>,
        in_flight: Arc<ChargesInFlight>,
        written_during_writes: Mutex<Vec<bool>>,
    }

    #[async_trait]
    impl StatusWriter for Contended {
        async fn read(
            &self,
            _: &GroupResource,
            _: &str,
            _: &str,
        ) -> Result<Option<Value>, ApiError> {
            *self.reads.lock().unwrap() += 1;
            Ok(Some(quota(json!({"pods": "2"}), json!({"pods": "2"}))))
        }
        async fn write_status(
            &self,
            _: &GroupResource,
            _: &str,
            _: &Value,
        ) -> Result<(), ApiError> {
            let seen = self.in_flight.in_namespace("ns");
            let mut noted = self.written_during_writes.lock().unwrap();
            noted.extend(seen.iter().map(|c| c.written));
            Err(ApiError::new(Reason::Conflict, "modified"))
        }
    }

    #[tokio::test]
    async fn a_charge_refused_on_retry_leaves_nothing_in_flight() {
        let in_flight = Arc::new(ChargesInFlight::default());
        let store = Arc::new(Contended {
            reads: Mutex::new(0),
            in_flight: in_flight.clone(),
            written_during_writes: Mutex::new(Vec::new()),
        });
        let namespaces = Arc::new(NamespaceSet::default());
        namespaces.insert("ns");
        let quotas = MemoryLister::new().with(
            GroupResource::new("", "resourcequotas"),
            "ns",
            quota(json!({"pods": "2"}), json!({"pods": "1"})),
        );
        let plugin = ResourceQuota::new(
            Arc::new(quotas),
            store.clone(),
            namespaces,
            in_flight.clone(),
        );
        let a = pod_create(Some("100m"));
        let err = plugin.validate(&a).await.unwrap_err();
        assert_eq!(err.code(), 403, "{}", err.message);
        assert_eq!(*store.reads.lock().unwrap(), 1);
        // While its write was being tried, a recount saw the charge, marked as not written
        // (so it waits instead of counting a charge that is then refused).
        assert_eq!(*store.written_during_writes.lock().unwrap(), [false]);
        // The request is still alive (its feedback with it), but nothing of it is in flight.
        assert!(in_flight.in_namespace("ns").is_empty());
        drop(a);
    }

    #[test]
    fn compute_quotas_need_pods_to_state_their_resources() {
        let a = pod_create(None);
        let q = quota(json!({"requests.cpu": "1", "limits.cpu": "2"}), json!({}));
        let err = judge(&a, &q, &delta(&a)).unwrap_err();
        assert_eq!(
            err.message,
            "pods \"p\" is forbidden: failed quota: q: must specify limits.cpu,requests.cpu"
        );
        // A quota on other resources does not care.
        assert!(
            judge(
                &a,
                &quota(json!({"configmaps": "1"}), json!({})),
                &delta(&a)
            )
            .unwrap()
            .is_none()
        );
    }
}
