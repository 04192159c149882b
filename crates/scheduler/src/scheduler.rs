//! The scheduling loop: informers keep the cache and the queue current; each pod popped from
//! the queue is placed by the profile, assumed on its node, and bound through
//! `pods/{name}/binding` while the next pod is scheduled. Outcomes are reported as upstream
//! does: the `PodScheduled` condition and `Scheduled` / `FailedScheduling` events.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use capstan_client::{Change, Client, ListParams, PatchType, Reflector};
use capstan_meta::labels::LabelSelector;
use k8s_openapi::api::apps::v1::{ReplicaSet, StatefulSet};
use k8s_openapi::api::core::v1::{
    Namespace, Node, ObjectReference, Pod, PodCondition, ReplicationController, Service,
};
use k8s_openapi::api::core::v1::{PersistentVolume, PersistentVolumeClaim};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use k8s_openapi::api::resource::v1::{DeviceClass, ResourceClaim, ResourceSlice};
use k8s_openapi::api::storage::v1::{CSINode, StorageClass};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector as ApiLabelSelector;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{MicroTime, ObjectMeta, Time};
use k8s_openapi::{ListableResource, Metadata, Resource};
use serde::de::DeserializeOwned;
use tokio::sync::mpsc;
use tokio::task::JoinSet;

use crate::cache::{Budget, Cache, pod_key};
use crate::dra::DraIndex;
use crate::framework::BindContext;
use crate::framework::{PodInfo, Profile};
use crate::metrics::{AttemptResult, Metrics};
use crate::preemption;
use crate::queue::{Outcome, Queue};
use crate::volumes::VolumeIndex;

/// A running scheduler's shared parts.
pub struct Scheduler {
    client: Client,
    profiles: Vec<Profile>,
    cache: Mutex<Cache>,
    queue: Queue,
    host: String,
    metrics: Arc<Metrics>,
    synced: Arc<AtomicBool>,
}

impl Scheduler {
    /// A scheduler using `client`, serving the pods of each of `profiles` (by
    /// `spec.schedulerName`), with `queue`.
    pub fn new(
        client: Client,
        profiles: Vec<Profile>,
        queue: Queue,
        metrics: Arc<Metrics>,
    ) -> Arc<Self> {
        let host = std::env::var("HOSTNAME").unwrap_or_else(|_| "capstan".into());
        Arc::new(Self {
            client,
            host,
            profiles,
            cache: Mutex::new(Cache::default()),
            queue,
            metrics,
            synced: Arc::new(AtomicBool::new(false)),
        })
    }

    /// Turns true once the informers have listed everything (the `sched-handler-sync`
    /// readiness check).
    pub fn synced(&self) -> Arc<AtomicBool> {
        self.synced.clone()
    }

    fn profile_for(&self, pod: &Pod) -> Option<&Profile> {
        let name = pod
            .spec
            .as_ref()
            .and_then(|s| s.scheduler_name.as_deref())
            .unwrap_or("default-scheduler");
        self.profiles.iter().find(|p| p.scheduler_name == name)
    }

    fn cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn ours(&self, pod: &Pod) -> bool {
        let spec = pod.spec.as_ref();
        self.profile_for(pod).is_some()
            && spec
                .and_then(|s| s.node_name.as_deref())
                .is_none_or(str::is_empty)
            && pod.metadata.deletion_timestamp.is_none()
            && !matches!(
                pod.status.as_ref().and_then(|s| s.phase.as_deref()),
                Some("Succeeded" | "Failed")
            )
    }

    fn pod_seen(&self, pod: Pod) {
        let key = pod_key(&pod);
        let bound = pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.as_deref())
            .is_some_and(|n| !n.is_empty());
        if bound {
            self.queue.remove(&key);
            self.cache().set_pod(pod);
        } else if self.ours(&pod) {
            let nominated = pod
                .status
                .as_ref()
                .and_then(|s| s.nominated_node_name.clone());
            self.cache().nominate(&pod, nominated.as_deref());
            let gates = self.profile_for(&pod).is_none_or(|p| p.scheduling_gates);
            self.queue.add_gated(pod, gates);
        } else {
            self.queue.remove(&key);
        }
    }

    fn pod_gone(&self, pod: &Pod) {
        let key = pod_key(pod);
        self.queue.remove(&key);
        let was_placed = {
            let mut cache = self.cache();
            let placed = cache.is_placed(&key);
            cache.remove_pod(&key);
            placed
        };
        if was_placed {
            self.queue.cluster_changed();
        }
    }

    /// Follows `K` with a reflector, handing each change to `apply`; the receiver turns true
    /// once the collection has been listed.
    fn follow<K>(
        self: &Arc<Self>,
        tasks: &mut JoinSet<()>,
        apply: fn(&Self, Change<K>),
    ) -> tokio::sync::watch::Receiver<bool>
    where
        K: ListableResource + Metadata<Ty = ObjectMeta> + DeserializeOwned + Send + 'static,
    {
        let (tx, mut changes) = mpsc::channel(1024);
        tasks.spawn(Reflector::<K>::new(self.client.clone(), None, ListParams::default()).run(tx));
        let (synced_tx, synced) = tokio::sync::watch::channel(false);
        let me = self.clone();
        tasks.spawn(async move {
            while let Some(change) = changes.recv().await {
                let listed = matches!(change, Change::Listed(_));
                apply(&me, change);
                if listed {
                    synced_tx.send_replace(true);
                }
            }
        });
        synced
    }

    fn node_changed(&self, change: Change<Node>) {
        match change {
            Change::Listed(all) => self.cache().reset_nodes(all),
            Change::Applied(node) => self.cache().set_node(node),
            Change::Deleted(node) => self
                .cache()
                .remove_node(node.metadata.name.as_deref().unwrap_or("")),
        }
        self.queue.cluster_changed();
    }

    fn pod_changed(&self, change: Change<Pod>) {
        match change {
            Change::Listed(all) => all.into_iter().for_each(|p| self.pod_seen(p)),
            Change::Applied(pod) => self.pod_seen(pod),
            Change::Deleted(pod) => self.pod_gone(&pod),
        }
    }

    fn namespace_changed(&self, change: Change<Namespace>) {
        match change {
            Change::Listed(all) => self.cache().reset_namespaces(&all),
            Change::Applied(ns) => self.cache().set_namespace(&ns),
            Change::Deleted(ns) => self
                .cache()
                .remove_namespace(ns.metadata.name.as_deref().unwrap_or("")),
        }
        self.queue.cluster_changed();
    }

    fn service_changed(&self, change: Change<Service>) {
        let mut cache = self.cache();
        let (items, deleted) = workload_change(&mut cache, "Service", change);
        for svc in items {
            let selector = svc.spec.and_then(|s| s.selector).filter(|_| !deleted);
            let (ns, name) = namespace_and_name(&svc.metadata);
            cache.set_service(ns, name, selector);
        }
    }

    fn controller_changed<K: Resource + Metadata<Ty = ObjectMeta> + HasSelector>(
        &self,
        change: Change<K>,
    ) {
        let mut cache = self.cache();
        let (items, deleted) = workload_change(&mut cache, K::KIND, change);
        for item in items {
            let selector = item.pod_selector().filter(|_| !deleted);
            let (ns, name) = namespace_and_name(item.metadata());
            cache.set_controller(K::KIND, ns, name, selector);
        }
    }

    fn budget_changed(&self, change: Change<PodDisruptionBudget>) {
        let mut cache = self.cache();
        let (items, deleted) = match change {
            Change::Listed(all) => {
                cache.clear_budgets();
                (all, false)
            }
            Change::Applied(b) => (vec![b], false),
            Change::Deleted(b) => (vec![b], true),
        };
        for pdb in items {
            let (ns, name) = namespace_and_name(&pdb.metadata);
            let budget = (!deleted).then(|| Budget {
                selector: pdb
                    .spec
                    .as_ref()
                    .and_then(|s| s.selector.as_ref())
                    .and_then(|s| LabelSelector::from_api(s).ok()),
                disruptions_allowed: pdb
                    .status
                    .as_ref()
                    .and_then(|s| s.disruptions_allowed)
                    .unwrap_or(0),
                disrupted: pdb
                    .status
                    .as_ref()
                    .and_then(|s| s.disrupted_pods.as_ref())
                    .map(|d| d.keys().cloned().collect())
                    .unwrap_or_default(),
            });
            cache.set_budget(ns, name, budget);
        }
    }

    fn volume_object_changed<K: Clone + VolumeObject>(&self, change: Change<K>) {
        {
            let mut cache = self.cache();
            let index = cache.volume_index_mut();
            match change {
                Change::Listed(all) => {
                    K::clear(index);
                    all.into_iter().for_each(|o| o.put(index));
                }
                Change::Applied(o) => o.put(index),
                Change::Deleted(o) => o.remove(index),
            }
        }
        self.queue.cluster_changed();
    }

    fn dra_object_changed<K: DraObject>(&self, change: Change<K>) {
        {
            let mut cache = self.cache();
            let index = cache.dra_index_mut();
            match change {
                Change::Listed(all) => {
                    K::clear(index);
                    all.into_iter().for_each(|o| o.put(index));
                }
                Change::Applied(o) => o.put(index),
                Change::Deleted(o) => o.remove(index),
            }
        }
        self.queue.cluster_changed();
    }

    /// Runs until the task is dropped: informers, then the scheduling loop.
    pub async fn run(self: Arc<Self>) {
        let mut tasks = JoinSet::new();
        // Nothing is scheduled before nodes, pods and namespaces have been listed once (a
        // pod scheduled against an empty cache would see no nodes).
        let mut synced = vec![
            self.follow(&mut tasks, Self::node_changed),
            self.follow(&mut tasks, Self::pod_changed),
            self.follow(&mut tasks, Self::namespace_changed),
            self.follow::<PersistentVolumeClaim>(&mut tasks, Self::volume_object_changed),
            self.follow::<PersistentVolume>(&mut tasks, Self::volume_object_changed),
            self.follow::<StorageClass>(&mut tasks, Self::volume_object_changed),
        ];
        if self.client.serves::<CSINode>().await.unwrap_or(false) {
            synced.push(self.follow::<CSINode>(&mut tasks, Self::volume_object_changed));
        }
        // Dynamic Resource Allocation, when the server serves resource.k8s.io/v1.
        if self.client.serves::<ResourceClaim>().await.unwrap_or(false) {
            synced.push(self.follow::<ResourceClaim>(&mut tasks, Self::dra_object_changed));
            synced.push(self.follow::<ResourceSlice>(&mut tasks, Self::dra_object_changed));
            synced.push(self.follow::<DeviceClass>(&mut tasks, Self::dra_object_changed));
        }
        // The workloads that select pods feed the default spread constraints; followed
        // when the server serves them.
        // Preemption honours PodDisruptionBudgets.
        if self
            .client
            .serves::<PodDisruptionBudget>()
            .await
            .unwrap_or(false)
        {
            self.follow(&mut tasks, Self::budget_changed);
        }
        if self.client.serves::<Service>().await.unwrap_or(false) {
            self.follow(&mut tasks, Self::service_changed);
        }
        if self.client.serves::<ReplicaSet>().await.unwrap_or(false) {
            self.follow::<ReplicaSet>(&mut tasks, Self::controller_changed);
        }
        if self.client.serves::<StatefulSet>().await.unwrap_or(false) {
            self.follow::<StatefulSet>(&mut tasks, Self::controller_changed);
        }
        if self
            .client
            .serves::<ReplicationController>()
            .await
            .unwrap_or(false)
        {
            self.follow::<ReplicationController>(&mut tasks, Self::controller_changed);
        }
        for s in &mut synced {
            if s.wait_for(|done| *done).await.is_err() {
                return;
            }
        }
        self.synced.store(true, Ordering::Relaxed);
        loop {
            let (active, backoff, unschedulable) = self.queue.len();
            self.metrics
                .pending(active, backoff, unschedulable, self.queue.gated());
            let pod = self.queue.pop().await;
            self.clone().schedule_one(pod, &mut tasks);
            while tasks.try_join_next().is_some() {}
        }
    }

    fn schedule_one(self: Arc<Self>, pod: Pod, tasks: &mut JoinSet<()>) {
        let started = std::time::Instant::now();
        let mut info = PodInfo::new(pod);
        let key = info.key.clone();
        let placed = {
            let mut cache = self.cache();
            if cache.is_placed(&key) {
                None
            } else {
                let Some(profile) = self.profile_for(&info.pod) else {
                    // Its scheduler name changed: no longer ours.
                    drop(cache);
                    self.queue.done(&key, Outcome::Done);
                    return;
                };
                let choice = profile.select(&mut info, &cache);
                match &choice {
                    Ok(node) => {
                        // Reserve (which also drops the scheduling cycle's state and the
                        // snapshots it holds), then assume.
                        let reserved = match cache.node(node) {
                            Some(n) => profile.reserve(&mut info, n),
                            None => Err(crate::framework::Rejection::resolvable("node is gone")),
                        };
                        match reserved {
                            Ok(()) => {
                                cache.assume(&info.pod, node);
                                Some(Ok(node.clone()))
                            }
                            Err(r) => {
                                tracing::warn!(pod = %key, reason = %r.reason, "reserving failed");
                                drop(cache);
                                self.queue.done(&key, Outcome::Error);
                                return;
                            }
                        }
                    }
                    Err(fit) if fit.waiting => {
                        // Not an attempt: the pod waits, quietly, for a cluster change.
                        tracing::debug!(pod = %key, reason = %fit.message(), "waiting");
                        drop(cache);
                        self.queue.done(&key, Outcome::Unschedulable);
                        return;
                    }
                    Err(fit) => {
                        let preemption = profile.preemption.map(|params| {
                            preemption::preempt(profile, params, &mut info, &cache, fit)
                        });
                        if let Some(preemption::Outcome::Preempt(c)) = &preemption {
                            // The room is held for this pod until it is bound.
                            cache.nominate(&info.pod, Some(&c.node));
                            self.metrics.preemption(c.victims.len());
                        } else if preemption.is_some() {
                            self.metrics.preemption(0);
                        }
                        Some(Err((fit.clone(), preemption)))
                    }
                }
            }
        };
        let profile_name = self
            .profile_for(&info.pod)
            .map_or_else(String::new, |p| p.scheduler_name.clone());
        match placed {
            None => self.queue.done(&key, Outcome::Done),
            Some(Ok(node)) => {
                tasks.spawn(async move {
                    let outcome = self.bind(&info, &node).await;
                    let result = if outcome == Outcome::Done {
                        AttemptResult::Scheduled
                    } else {
                        AttemptResult::Error
                    };
                    self.metrics
                        .attempt(&profile_name, result, started.elapsed());
                    if outcome != Outcome::Done {
                        self.cache().forget(&key);
                    }
                    self.queue.done(&key, outcome);
                });
            }
            Some(Err((fit, preemption))) => {
                self.metrics.attempt(
                    &profile_name,
                    AttemptResult::Unschedulable,
                    started.elapsed(),
                );
                self.queue.done(&key, Outcome::Unschedulable);
                tasks.spawn(async move {
                    // The PostFilter plugins' reasons, then preemption's, as upstream joins
                    // them: `<why no node fits>. <reason>, <reason>, preemption: ...`.
                    let mut reasons = Vec::new();
                    if let Some(profile) = self.profile_for(&info.pod) {
                        for p in &profile.post_filters {
                            match p.post_filter(&*self, &info).await {
                                Ok(reason) => reasons.push(reason),
                                Err(e) => {
                                    tracing::warn!(pod = %key, plugin = p.name(), error = %e, "PostFilter failed");
                                    reasons.push(format!("running PostFilter plugin {:?}: {e}", p.name()));
                                }
                            }
                        }
                    }
                    if let Some(preemption::Outcome::Nothing(why)) = &preemption {
                        reasons.push(why.clone());
                    }
                    let mut message = fit.message();
                    // A preemption that found victims succeeds: upstream then reports only
                    // why no node fits.
                    let preempting = matches!(preemption, Some(preemption::Outcome::Preempt(_)));
                    if !reasons.is_empty() && !preempting {
                        message = format!("{message} {}", reasons.join(", "));
                    }
                    tracing::info!(pod = %key, %message, "unschedulable");
                    if let Some(preemption::Outcome::Preempt(c)) = preemption {
                        self.carry_out(&info.pod, &c).await;
                    }
                    self.report_unschedulable(&info.pod, &message).await
                });
            }
        }
    }

    /// Evicts the victims, each with a `Preempted` event, then records the node on the
    /// preemptor (`status.nominatedNodeName`), in upstream's order: a client that sees the
    /// nomination sees the victims going.
    async fn carry_out(&self, pod: &Pod, c: &preemption::Candidate) {
        let ns = pod.metadata.namespace.as_deref();
        let name = pod.metadata.name.as_deref().unwrap_or("");
        tracing::info!(pod = name, node = %c.node, victims = c.victims.len(), "preempting");
        for v in &c.victims {
            let (vns, vname) = v.key.split_once('/').unwrap_or(("", &v.key));
            let victim: Pod = match self.client.get(Some(vns), vname).await {
                Ok(p) => p,
                Err(_) => continue,
            };
            match self.client.delete::<Pod>(Some(vns), vname).await {
                Ok(_) => {
                    let note = format!(
                        "Preempted by {}/{name} on node {}",
                        ns.unwrap_or(""),
                        c.node
                    );
                    self.event(&victim, "Normal", "Preempted", "Preempting", &note)
                        .await;
                }
                Err(e) if e.code() == Some(404) => {}
                Err(e) => tracing::warn!(victim = %v.key, error = %e, "evicting a victim failed"),
            }
        }
        let patch = serde_json::json!({"status": {"nominatedNodeName": c.node}});
        if let Err(e) = self
            .client
            .patch_status::<Pod>(ns, name, PatchType::Merge, &patch)
            .await
        {
            tracing::warn!(pod = name, error = %e, "recording the nominated node failed");
        }
    }

    /// The binding cycle of the pod's profile, then the `Scheduled` event.
    async fn bind(&self, info: &PodInfo, node: &str) -> Outcome {
        let Some(profile) = self.profile_for(&info.pod) else {
            return Outcome::Done;
        };
        let pod = &info.pod;
        let ns = pod.metadata.namespace.as_deref().unwrap_or("");
        let name = pod.metadata.name.as_deref().unwrap_or("");
        match profile.bind(self, info, node).await {
            Ok(true) => {
                let note = format!("Successfully assigned {ns}/{name} to {node}");
                self.event(pod, "Normal", "Scheduled", "Binding", &note)
                    .await;
                Outcome::Done
            }
            Ok(false) => Outcome::Done,
            Err(e) => {
                tracing::warn!(pod = name, error = %e, "binding failed");
                Outcome::Error
            }
        }
    }

    /// Sets `PodScheduled=False` (reason `Unschedulable`) and records `FailedScheduling`.
    async fn report_unschedulable(&self, pod: &Pod, message: &str) {
        let ns = pod.metadata.namespace.as_deref();
        let name = pod.metadata.name.as_deref().unwrap_or("");
        for _ in 0..3 {
            let Ok(mut current) = self.client.get::<Pod>(ns, name).await else {
                return;
            };
            let status = current.status.get_or_insert_with(Default::default);
            let conditions = status.conditions.get_or_insert_with(Vec::new);
            let same = conditions.iter().any(|c| {
                c.type_ == "PodScheduled"
                    && c.status == "False"
                    && c.message.as_deref() == Some(message)
            });
            if same {
                break;
            }
            conditions.retain(|c| c.type_ != "PodScheduled");
            conditions.push(PodCondition {
                type_: "PodScheduled".into(),
                status: "False".into(),
                reason: Some("Unschedulable".into()),
                message: Some(message.into()),
                last_transition_time: Some(Time(jiff::Timestamp::now())),
                ..Default::default()
            });
            match self.client.replace_status(ns, name, &current).await {
                Err(e) if e.code() == Some(409) => continue,
                _ => break,
            }
        }
        self.event(pod, "Warning", "FailedScheduling", "Scheduling", message)
            .await;
    }

    async fn event(&self, pod: &Pod, kind: &str, reason: &str, action: &str, note: &str) {
        let now = jiff::Timestamp::now();
        let name = pod.metadata.name.clone().unwrap_or_default();
        let scheduler_name = self.profile_for(pod).map_or_else(
            || "default-scheduler".to_string(),
            |p| p.scheduler_name.clone(),
        );
        let event = Event {
            metadata: ObjectMeta {
                name: Some(format!("{name}.{:x}", now.as_nanosecond())),
                namespace: pod.metadata.namespace.clone(),
                ..Default::default()
            },
            event_time: Some(MicroTime(now)),
            reporting_controller: Some(scheduler_name.clone()),
            reporting_instance: Some(format!("{scheduler_name}-{}", self.host)),
            action: Some(action.into()),
            reason: Some(reason.into()),
            type_: Some(kind.into()),
            note: Some(note.into()),
            regarding: Some(ObjectReference {
                kind: Some("Pod".into()),
                api_version: Some("v1".into()),
                namespace: pod.metadata.namespace.clone(),
                name: Some(name),
                uid: pod.metadata.uid.clone(),
                resource_version: pod.metadata.resource_version.clone(),
                ..Default::default()
            }),
            ..Default::default()
        };
        if let Err(e) = self
            .client
            .create(pod.metadata.namespace.as_deref(), &event)
            .await
        {
            tracing::debug!(error = %e, "recording an event failed");
        }
    }
}

fn namespace_and_name(meta: &ObjectMeta) -> (&str, &str) {
    (
        meta.namespace.as_deref().unwrap_or(""),
        meta.name.as_deref().unwrap_or(""),
    )
}

/// The objects a change carries, and whether they were deleted; a list first forgets every
/// object of `kind`.
fn workload_change<K>(cache: &mut Cache, kind: &str, change: Change<K>) -> (Vec<K>, bool) {
    match change {
        Change::Listed(all) => {
            cache.clear_workloads(kind);
            (all, false)
        }
        Change::Applied(item) => (vec![item], false),
        Change::Deleted(item) => (vec![item], true),
    }
}

/// A controller whose pod selector the default spread constraints use.
trait HasSelector {
    fn pod_selector(&self) -> Option<LabelSelector>;
}

impl HasSelector for ReplicaSet {
    fn pod_selector(&self) -> Option<LabelSelector> {
        LabelSelector::from_api(&self.spec.as_ref()?.selector).ok()
    }
}

impl HasSelector for StatefulSet {
    fn pod_selector(&self) -> Option<LabelSelector> {
        LabelSelector::from_api(&self.spec.as_ref()?.selector).ok()
    }
}

/// A ReplicationController's selector is a plain map, read as `matchLabels`.
impl HasSelector for ReplicationController {
    fn pod_selector(&self) -> Option<LabelSelector> {
        let labels = self.spec.as_ref()?.selector.clone()?;
        LabelSelector::from_api(&ApiLabelSelector {
            match_labels: Some(labels),
            match_expressions: None,
        })
        .ok()
    }
}

/// An object of the volume index.
trait VolumeObject: Sized {
    /// Forgets every object of this kind.
    fn clear(index: &mut VolumeIndex);
    /// Adds or replaces it.
    fn put(self, index: &mut VolumeIndex);
    /// Removes it.
    fn remove(self, index: &mut VolumeIndex);
}

impl VolumeObject for PersistentVolumeClaim {
    fn clear(index: &mut VolumeIndex) {
        index.claims.clear();
    }
    fn put(self, index: &mut VolumeIndex) {
        let (ns, name) = namespace_and_name(&self.metadata);
        let key = (ns.to_string(), name.to_string());
        index.claims.insert(key, self);
    }
    fn remove(self, index: &mut VolumeIndex) {
        let (ns, name) = namespace_and_name(&self.metadata);
        index.claims.remove(&(ns.to_string(), name.to_string()));
    }
}

impl VolumeObject for PersistentVolume {
    fn clear(index: &mut VolumeIndex) {
        index.volumes.clear();
    }
    fn put(self, index: &mut VolumeIndex) {
        let name = self.metadata.name.clone().unwrap_or_default();
        index.volumes.insert(name, self);
    }
    fn remove(self, index: &mut VolumeIndex) {
        index
            .volumes
            .remove(self.metadata.name.as_deref().unwrap_or(""));
    }
}

impl VolumeObject for StorageClass {
    fn clear(index: &mut VolumeIndex) {
        index.classes.clear();
    }
    fn put(self, index: &mut VolumeIndex) {
        let name = self.metadata.name.clone().unwrap_or_default();
        index.classes.insert(name, self);
    }
    fn remove(self, index: &mut VolumeIndex) {
        index
            .classes
            .remove(self.metadata.name.as_deref().unwrap_or(""));
    }
}

impl VolumeObject for CSINode {
    fn clear(index: &mut VolumeIndex) {
        index.csi_nodes.clear();
    }
    fn put(self, index: &mut VolumeIndex) {
        let name = self.metadata.name.clone().unwrap_or_default();
        index.csi_nodes.insert(name, self);
    }
    fn remove(self, index: &mut VolumeIndex) {
        index
            .csi_nodes
            .remove(self.metadata.name.as_deref().unwrap_or(""));
    }
}

/// An object of the Dynamic Resource Allocation index.
trait DraObject: Sized {
    /// Forgets every object of this kind.
    fn clear(index: &mut DraIndex);
    /// Adds or replaces it.
    fn put(self, index: &mut DraIndex);
    /// Removes it.
    fn remove(self, index: &mut DraIndex);
}

impl DraObject for ResourceClaim {
    fn clear(index: &mut DraIndex) {
        index.clear_claims();
    }
    fn put(self, index: &mut DraIndex) {
        index.put_claim(self);
    }
    fn remove(self, index: &mut DraIndex) {
        index.remove_claim(&self);
    }
}

impl DraObject for ResourceSlice {
    fn clear(index: &mut DraIndex) {
        index.clear_slices();
    }
    fn put(self, index: &mut DraIndex) {
        index.put_slice(self);
    }
    fn remove(self, index: &mut DraIndex) {
        index.remove_slice(self.metadata.name.as_deref().unwrap_or(""));
    }
}

impl DraObject for DeviceClass {
    fn clear(index: &mut DraIndex) {
        index.clear_classes();
    }
    fn put(self, index: &mut DraIndex) {
        index.put_class(self);
    }
    fn remove(self, index: &mut DraIndex) {
        index.remove_class(self.metadata.name.as_deref().unwrap_or(""));
    }
}

impl BindContext for Scheduler {
    fn client(&self) -> &Client {
        &self.client
    }

    fn volume_index(&self) -> Arc<VolumeIndex> {
        self.cache().volume_index()
    }

    fn dra_index(&self) -> Arc<DraIndex> {
        self.cache().dra_index()
    }

    fn record<'a>(
        &'a self,
        pod: &'a Pod,
        kind: &'a str,
        reason: &'a str,
        action: &'a str,
        note: &'a str,
    ) -> crate::framework::BoxFuture<'a, ()> {
        Box::pin(self.event(pod, kind, reason, action, note))
    }
}
