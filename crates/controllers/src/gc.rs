//! The garbage collector: objects whose owners (`metadata.ownerReferences`) are all gone are
//! deleted; an owner deleted with `propagationPolicy: Orphan` first has its dependents'
//! references to it removed; one deleted with `Foreground` waits until its dependents that
//! block owner deletion are gone. It works from the watch caches of every served resource
//! (followed through the same calls the handlers make), never by scanning storage.

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::Arc;
use std::time::Duration;

use capstan_apiextensions::CustomResources;
use capstan_meta::Reason;
use capstan_registry::{
    DeleteOptions, Error, FOREGROUND_FINALIZER, GetOptions, ListOptions, ORPHAN_FINALIZER,
    PatchType, Registry, RestStorage, WriteOptions,
};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tracing::debug;

use crate::watching::{Seen, follow};

/// How long a failed step waits before it is tried again.
const RETRY: Duration = Duration::from_secs(1);
/// Objects looked at between two reads of the event stream.
const BATCH: usize = 256;

/// An owner reference.
#[derive(Debug, Clone)]
struct Owner {
    uid: String,
    api_version: String,
    kind: String,
    name: String,
    blocks: bool,
}

/// What the collector keeps of an object.
#[derive(Debug, Clone)]
struct Node {
    resource: usize,
    namespace: String,
    name: String,
    owners: Vec<Owner>,
    finalizers: Vec<String>,
    deleting: bool,
    /// The list generation of its resource it was last seen in.
    generation: u64,
}

impl Node {
    fn read(resource: usize, object: crate::watching::Object) -> Option<(String, Self)> {
        let meta = object.metadata;
        if meta.uid.is_empty() {
            return None;
        }
        let owners = meta
            .owner_references
            .into_iter()
            .map(|r| Owner {
                uid: r.uid,
                api_version: r.api_version,
                kind: r.kind,
                name: r.name,
                blocks: r.block_owner_deletion == Some(true),
            })
            .collect();
        Some((
            meta.uid,
            Self {
                resource,
                namespace: meta.namespace,
                name: meta.name,
                owners,
                finalizers: meta.finalizers,
                deleting: meta.deletion_timestamp.is_some(),
                generation: 0,
            },
        ))
    }

    fn has(&self, finalizer: &str) -> bool {
        self.finalizers.iter().any(|f| f == finalizer)
    }
}

/// What the collector keeps of an object without owners or finalizers that is not being
/// deleted (most objects): only that it exists, as it may own others.
#[derive(Debug, Clone, Copy)]
struct Plain {
    resource: usize,
    /// The list generation of its resource it was last seen in.
    generation: u64,
}

/// A uid in its canonical form (a lowercase hyphenated UUID, as the server makes them) as a
/// number, which a map keeps in 16 bytes; other forms are not read (their text would not
/// come back the same).
fn uid_number(uid: &str) -> Option<u128> {
    let parsed = uuid::Uuid::try_parse(uid).ok()?;
    let mut text = [0u8; uuid::fmt::Hyphenated::LENGTH];
    (parsed.hyphenated().encode_lower(&mut text) == uid).then(|| parsed.as_u128())
}

/// The uid [`uid_number`] read.
fn uid_text(n: u128) -> String {
    uuid::Uuid::from_u128(n).hyphenated().to_string()
}

/// Every object, and who depends on whom.
#[derive(Default)]
struct Graph {
    /// Objects with an owner or a finalizer, or being deleted (and any whose uid is not a
    /// canonical UUID).
    nodes: HashMap<String, Node>,
    /// The other objects, by uid.
    plain: HashMap<u128, Plain>,
    /// Owner uid → dependent uids.
    dependents: HashMap<String, HashSet<String>>,
    /// Owner uid → how many of its dependents block its deletion.
    blocking: HashMap<String, usize>,
}

impl Graph {
    /// Records `node` (or its removal) and returns the uids whose case may have changed.
    fn apply(&mut self, uid: String, node: Option<Node>) -> Vec<String> {
        let mut touched = vec![uid.clone()];
        let number = uid_number(&uid);
        if let Some(n) = number {
            self.plain.remove(&n);
        }
        if let Some(old) = self.nodes.remove(&uid) {
            for o in &old.owners {
                if let Some(d) = self.dependents.get_mut(&o.uid) {
                    d.remove(&uid);
                    if d.is_empty() {
                        self.dependents.remove(&o.uid);
                    }
                }
                if o.blocks
                    && let Some(n) = self.blocking.get_mut(&o.uid)
                {
                    *n = n.saturating_sub(1);
                    if *n == 0 {
                        self.blocking.remove(&o.uid);
                    }
                }
                touched.push(o.uid.clone());
            }
        }
        match node {
            Some(node)
                if node.owners.is_empty()
                    && node.finalizers.is_empty()
                    && !node.deleting
                    && let Some(n) = number =>
            {
                let plain = Plain {
                    resource: node.resource,
                    generation: node.generation,
                };
                self.plain.insert(n, plain);
            }
            Some(node) => {
                for o in &node.owners {
                    self.dependents
                        .entry(o.uid.clone())
                        .or_default()
                        .insert(uid.clone());
                    if o.blocks {
                        *self.blocking.entry(o.uid.clone()).or_default() += 1;
                    }
                }
                self.nodes.insert(uid.clone(), node);
            }
            None => {
                // Its dependents may now be orphans.
                touched.extend(self.dependents.get(&uid).into_iter().flatten().cloned());
            }
        }
        touched
    }

    /// Whether `owner` stands: `None` when the graph does not hold it.
    fn standing(&self, owner: &str) -> Option<Standing> {
        if let Some(o) = self.nodes.get(owner) {
            return Some(if o.deleting && o.has(FOREGROUND_FINALIZER) {
                Standing::Waiting
            } else {
                Standing::Solid
            });
        }
        let held = uid_number(owner).is_some_and(|n| self.plain.contains_key(&n));
        held.then_some(Standing::Solid)
    }

    /// The uids of the objects of `resource` last seen in a list before `generation` (all of
    /// them: `u64::MAX`).
    fn seen_before(&self, resource: usize, generation: u64) -> Vec<String> {
        let nodes = self
            .nodes
            .iter()
            .filter(|(_, n)| n.resource == resource && n.generation < generation)
            .map(|(uid, _)| uid.clone());
        let plain = self
            .plain
            .iter()
            .filter(|(_, p)| p.resource == resource && p.generation < generation)
            .map(|(n, _)| uid_text(*n));
        nodes.chain(plain).collect()
    }
}

/// Whether the collector follows `storage`: a resource it can list, watch, patch and delete.
fn collectable(storage: &Arc<dyn RestStorage>) -> bool {
    let d = storage.descriptor();
    d.subresource.is_empty()
        && ["list", "watch", "delete", "patch"]
            .iter()
            .all(|v| d.verbs.iter().any(|x| x == v))
}

/// The follows of the collected resources, each feeding the one event channel tagged with its
/// resource's slot.
struct Followers {
    tx: mpsc::Sender<(usize, Seen)>,
    synced: mpsc::Sender<usize>,
    tasks: JoinSet<()>,
    running: HashMap<usize, tokio::task::AbortHandle>,
}

impl Followers {
    /// Follows `storage` as slot `slot` (ending the slot's former follow); list generations
    /// count on from `base`, so a relist of a replaced store still finds what went.
    fn start(&mut self, slot: usize, storage: Arc<dyn RestStorage>, base: u64) {
        self.stop(slot);
        let tx = self.tx.clone();
        let synced = self.synced.clone();
        let handle = self.tasks.spawn(async move {
            let (one_tx, mut one) = mpsc::channel(256);
            let follow = follow::<crate::watching::Object>(storage, one_tx);
            let forward = async move {
                let mut announced = false;
                while let Some(mut seen) = one.recv().await {
                    seen.generation += base;
                    if seen.listed && !announced {
                        announced = true;
                        let _ = synced.send(slot).await;
                    }
                    if tx.send((slot, seen)).await.is_err() {
                        return;
                    }
                }
            };
            tokio::join!(follow, forward);
        });
        self.running.insert(slot, handle);
    }

    fn stop(&mut self, slot: usize) {
        if let Some(handle) = self.running.remove(&slot) {
            handle.abort();
        }
    }
}

/// Runs the collector until the task is dropped; `custom`'s resources are followed as they
/// come and go.
pub(crate) async fn run(registry: Arc<Registry>, custom: Option<Arc<CustomResources>>) {
    let resources: Vec<Arc<dyn RestStorage>> = registry
        .resources()
        .filter(|r| collectable(r))
        .cloned()
        .collect();
    let (tx, mut events) = mpsc::channel::<(usize, Seen)>(4096);
    let (synced_tx, mut synced_rx) = mpsc::channel::<usize>(64);
    let mut followers = Followers {
        tx,
        synced: synced_tx,
        tasks: JoinSet::new(),
        running: HashMap::new(),
    };
    for (i, storage) in resources.iter().enumerate() {
        followers.start(i, storage.clone(), 0);
    }
    let mut changes = custom.as_ref().map(|c| c.changes());
    let mut collector = Collector {
        registry,
        custom,
        resources,
        requested: Default::default(),
        started: Default::default(),
    };
    // The slot and store of each custom resource followed, by group and resource.
    let mut custom_slots: HashMap<(String, String), (usize, Arc<dyn RestStorage>)> = HashMap::new();
    // The last list generation seen per slot.
    let mut generations: Vec<u64> = vec![0; collector.resources.len()];
    let mut graph = Graph::default();
    let mut work = Work::default();
    let mut synced: HashSet<usize> = HashSet::new();
    let mut retry_at: Vec<String> = Vec::new();
    let mut tick = tokio::time::interval(RETRY);
    loop {
        let ready = synced.len() >= collector.resources.len();
        tokio::select! {
            biased;
            Some((i, seen)) = events.recv() => {
                generations[i] = generations[i].max(seen.generation);
                if seen.listed {
                    // A (re)list ended: what it did not hold is gone.
                    for uid in graph.seen_before(i, seen.generation) {
                        collector.forget(&uid);
                        work.push(graph.apply(uid, None));
                    }
                    continue;
                }
                let Some((uid, mut node)) = Node::read(i, seen.object) else { continue };
                node.generation = seen.generation;
                if seen.deleted {
                    collector.forget(&uid);
                }
                let node = (!seen.deleted).then_some(node);
                work.push(graph.apply(uid, node));
            }
            Some(()) = async {
                match changes.as_mut() {
                    Some(c) => c.changed().await.ok(),
                    None => std::future::pending().await,
                }
            } => {
                let Some(custom) = collector.custom.clone() else { continue };
                let mut present = HashSet::new();
                for store in custom.stores().into_iter().filter(collectable) {
                    let d = store.descriptor();
                    let key = (d.group.clone(), d.resource.clone());
                    present.insert(key.clone());
                    let slot = match custom_slots.get(&key) {
                        Some((_, followed)) if Arc::ptr_eq(followed, &store) => continue,
                        Some((slot, _)) => *slot,
                        None => {
                            collector.resources.push(store.clone());
                            generations.push(0);
                            collector.resources.len() - 1
                        }
                    };
                    // A new CRD, or a new spec of one (its objects are the same).
                    collector.resources[slot] = store.clone();
                    followers.start(slot, store.clone(), generations[slot]);
                    custom_slots.insert(key, (slot, store));
                }
                let withdrawn: Vec<(String, String)> = custom_slots
                    .keys()
                    .filter(|k| !present.contains(*k))
                    .cloned()
                    .collect();
                for key in withdrawn {
                    // The CRD went after its objects: forget any left in the graph.
                    let Some((slot, _)) = custom_slots.remove(&key) else { continue };
                    followers.stop(slot);
                    synced.insert(slot);
                    for uid in graph.seen_before(slot, u64::MAX) {
                        collector.forget(&uid);
                        work.push(graph.apply(uid, None));
                    }
                }
            }
            Some(i) = synced_rx.recv() => {
                synced.insert(i);
            }
            _ = tick.tick() => {
                work.push(std::mem::take(&mut retry_at));
            }
            // Work is waiting and no event is: go on with it.
            () = std::future::ready(()), if ready && !work.is_empty() => {}
            else => return,
        }
        // Nothing is judged before every resource has been listed once: an owner not seen
        // yet is not gone.
        if synced.len() < collector.resources.len() {
            continue;
        }
        // A bounded batch per turn: steady events neither starve the queue nor wait on it.
        for _ in 0..BATCH {
            let Some(uid) = work.pop() else {
                break;
            };
            if let Err(e) = collector.process(&graph, &uid).await {
                debug!(%uid, error = %e, "garbage collector: will retry");
                retry_at.push(uid);
            }
        }
    }
}

/// The objects waiting to be judged, each once, in arrival order.
#[derive(Default)]
struct Work {
    queue: VecDeque<String>,
    queued: HashSet<String>,
}

impl Work {
    fn push(&mut self, uids: Vec<String>) {
        for uid in uids {
            if self.queued.insert(uid.clone()) {
                self.queue.push_back(uid);
            }
        }
    }

    fn pop(&mut self) -> Option<String> {
        let uid = self.queue.pop_front()?;
        self.queued.remove(&uid);
        Some(uid)
    }

    fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}

struct Collector {
    registry: Arc<Registry>,
    /// The custom resources, whose owners are looked up too.
    custom: Option<Arc<CustomResources>>,
    /// The followed resources, by slot.
    resources: Vec<Arc<dyn RestStorage>>,
    /// Objects this collector has asked to delete and has not yet seen go: not asked again
    /// (a foreground owner is looked at once per change of each of its dependents).
    requested: std::sync::Mutex<HashSet<String>>,
    /// Foreground owners whose dependents have been asked to go (once; dependents that come
    /// later see their owner waiting and go by themselves).
    started: std::sync::Mutex<HashSet<String>>,
}

/// How an owner reference stands.
#[derive(Debug, PartialEq, Eq)]
enum Standing {
    /// The owner exists (or its kind is not served, so it cannot be judged).
    Solid,
    /// The owner is gone.
    Dangling,
    /// The owner is being deleted in the foreground.
    Waiting,
}

impl Collector {
    async fn process(&self, graph: &Graph, uid: &str) -> Result<(), Error> {
        let Some(node) = graph.nodes.get(uid) else {
            return Ok(());
        };
        if node.deleting && node.has(ORPHAN_FINALIZER) {
            return self.orphan_dependents(graph, uid, node).await;
        }
        if node.deleting && node.has(FOREGROUND_FINALIZER) {
            self.delete_dependents_first(graph, uid, node).await?;
        }
        if node.owners.is_empty() || node.deleting {
            return Ok(());
        }
        let mut standings = Vec::new();
        for owner in &node.owners {
            standings.push(self.standing(graph, node, owner).await?);
        }
        let solid = standings.contains(&Standing::Solid);
        if solid {
            let gone: Vec<&str> = node
                .owners
                .iter()
                .zip(&standings)
                .filter(|(_, s)| **s != Standing::Solid)
                .map(|(o, _)| o.uid.as_str())
                .collect();
            if !gone.is_empty() {
                self.remove_owner_refs(node, uid, &gone).await?;
            }
            return Ok(());
        }
        let waiting = standings.contains(&Standing::Waiting);
        let has_dependents = graph.dependents.get(uid).is_some_and(|d| !d.is_empty());
        let policy = if waiting && has_dependents {
            "Foreground"
        } else if node.has(ORPHAN_FINALIZER) {
            "Orphan"
        } else if node.has(FOREGROUND_FINALIZER) {
            "Foreground"
        } else {
            "Background"
        };
        debug!(resource = %self.resources[node.resource].descriptor().resource, name = %node.name, policy, "garbage collector: deleting");
        self.delete(node, uid, policy).await
    }

    /// Whether `owner` exists, is gone, or is being deleted in the foreground; a live read
    /// confirms an owner missing from the caches before it is called gone.
    async fn standing(
        &self,
        graph: &Graph,
        dependent: &Node,
        owner: &Owner,
    ) -> Result<Standing, Error> {
        if let Some(standing) = graph.standing(&owner.uid) {
            return Ok(standing);
        }
        let Some(storage) = self.storage_of(&owner.api_version, &owner.kind) else {
            // A kind Capstan does not serve: it cannot be judged, so it is not gone.
            return Ok(Standing::Solid);
        };
        let namespace = if storage.descriptor().namespaced {
            dependent.namespace.as_str()
        } else {
            ""
        };
        match storage
            .get(namespace, &owner.name, &GetOptions::default())
            .await
        {
            Ok(found) => {
                let doc: Value =
                    serde_json::from_slice(&found.body.into_bytes()).unwrap_or_default();
                let meta = &doc["metadata"];
                if meta["uid"] != owner.uid.as_str() {
                    return Ok(Standing::Dangling);
                }
                let foreground = meta["finalizers"]
                    .as_array()
                    .is_some_and(|f| f.iter().any(|f| f == FOREGROUND_FINALIZER));
                Ok(if !meta["deletionTimestamp"].is_null() && foreground {
                    Standing::Waiting
                } else {
                    Standing::Solid
                })
            }
            Err(Error::Api(e)) if e.reason == Reason::NotFound => Ok(Standing::Dangling),
            Err(e) => Err(e),
        }
    }

    fn storage_of(&self, api_version: &str, kind: &str) -> Option<Arc<dyn RestStorage>> {
        let serves = |r: &Arc<dyn RestStorage>| {
            let d = r.descriptor();
            d.subresource.is_empty() && d.kind == kind && d.api_version() == api_version
        };
        self.registry
            .resources()
            .find(|r| serves(r))
            .cloned()
            .or_else(|| {
                let custom = self.custom.as_ref()?;
                custom.resources_and_subresources().into_iter().find(serves)
            })
    }

    fn forget(&self, uid: &str) {
        if let Ok(mut r) = self.requested.lock() {
            r.remove(uid);
        }
        if let Ok(mut s) = self.started.lock() {
            s.remove(uid);
        }
    }

    async fn delete(&self, node: &Node, uid: &str, policy: &str) -> Result<(), Error> {
        let first = self
            .requested
            .lock()
            .map(|mut r| r.insert(uid.to_string()))
            .unwrap_or(true);
        if !first {
            return Ok(());
        }
        let result = self.delete_now(node, uid, policy).await;
        if result.is_err() {
            self.forget(uid);
        }
        result
    }

    async fn delete_now(&self, node: &Node, uid: &str, policy: &str) -> Result<(), Error> {
        let options = DeleteOptions {
            precondition_uid: Some(uid.to_string()),
            propagation_policy: Some(policy.to_string()),
            ..Default::default()
        };
        match self.resources[node.resource]
            .delete(&node.namespace, &node.name, &options)
            .await
        {
            Ok(_) => Ok(()),
            Err(Error::Api(e)) if matches!(e.reason, Reason::NotFound | Reason::Conflict) => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Removes references to the owners `gone` from `node`, guarded by `test` operations.
    async fn remove_owner_refs(&self, node: &Node, uid: &str, gone: &[&str]) -> Result<(), Error> {
        let mut ops = vec![json!({"op": "test", "path": "/metadata/uid", "value": uid})];
        for (i, owner) in node.owners.iter().enumerate().rev() {
            if gone.contains(&owner.uid.as_str()) {
                let path = format!("/metadata/ownerReferences/{i}");
                ops.push(json!({"op": "test", "path": format!("{path}/uid"), "value": owner.uid}));
                ops.push(json!({"op": "remove", "path": path}));
            }
        }
        self.json_patch(node, &Value::Array(ops)).await
    }

    async fn json_patch(&self, node: &Node, ops: &Value) -> Result<(), Error> {
        let body = serde_json::to_vec(ops).map_err(Error::Encode)?;
        match self.resources[node.resource]
            .patch(
                &node.namespace,
                &node.name,
                PatchType::Json,
                &body,
                &WriteOptions::server(),
            )
            .await
        {
            Ok(_) => Ok(()),
            Err(Error::Api(e)) if e.reason == Reason::NotFound => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Removes `finalizer` from `node`.
    async fn remove_finalizer(&self, node: &Node, uid: &str, finalizer: &str) -> Result<(), Error> {
        let Some(i) = node.finalizers.iter().position(|f| f == finalizer) else {
            return Ok(());
        };
        let path = format!("/metadata/finalizers/{i}");
        let ops = json!([
            {"op": "test", "path": "/metadata/uid", "value": uid},
            {"op": "test", "path": path, "value": finalizer},
            {"op": "remove", "path": path},
        ]);
        self.json_patch(node, &ops).await
    }

    /// Orphan: every dependent loses its reference to the owner, then the owner loses the
    /// `orphan` finalizer. The graph may not hold yet a dependent written just before the
    /// owner's delete (each resource's events come on a stream of their own), and such a
    /// dependent, left pointing at a deleted owner, would later be collected: so the owner's
    /// namespace (every namespace, for a cluster-scoped owner) is read consistently too.
    async fn orphan_dependents(&self, graph: &Graph, uid: &str, owner: &Node) -> Result<(), Error> {
        let mut orphaned = HashSet::new();
        for dependent_uid in graph.dependents.get(uid).into_iter().flatten() {
            if let Some(dependent) = graph.nodes.get(dependent_uid) {
                self.remove_owner_refs(dependent, dependent_uid, &[uid])
                    .await?;
                orphaned.insert(dependent_uid.clone());
            }
        }
        for (slot, storage) in self.resources.iter().enumerate() {
            let namespaced = storage.descriptor().namespaced;
            if !owner.namespace.is_empty() && !namespaced {
                continue;
            }
            // A resource that cannot be listed is left to the graph (the owner must not wait
            // on it forever).
            let Ok(listed) = storage
                .list(&owner.namespace, &ListOptions::default())
                .await
            else {
                debug!(resource = %storage.descriptor().resource, "orphaning: list failed");
                continue;
            };
            let Ok(list) = serde_json::from_slice::<crate::watching::List<crate::watching::Object>>(
                &listed.body.into_bytes(),
            ) else {
                continue;
            };
            for object in list.items {
                let refers = object
                    .metadata
                    .owner_references
                    .iter()
                    .any(|r| r.uid == uid);
                if !refers || orphaned.contains(&object.metadata.uid) {
                    continue;
                }
                if let Some((dependent_uid, dependent)) = Node::read(slot, object) {
                    self.remove_owner_refs(&dependent, &dependent_uid, &[uid])
                        .await?;
                }
            }
        }
        self.remove_finalizer(owner, uid, ORPHAN_FINALIZER).await
    }

    /// Foreground: the dependents are deleted (in the foreground too); once none that blocks
    /// owner deletion is left, the owner loses the `foregroundDeletion` finalizer.
    async fn delete_dependents_first(
        &self,
        graph: &Graph,
        uid: &str,
        owner: &Node,
    ) -> Result<(), Error> {
        let first = self
            .started
            .lock()
            .map(|mut s| s.insert(uid.to_string()))
            .unwrap_or(true);
        if first {
            for dependent_uid in graph.dependents.get(uid).into_iter().flatten() {
                let Some(dependent) = graph.nodes.get(dependent_uid) else {
                    continue;
                };
                if !dependent.deleting
                    && let Err(e) = self.delete(dependent, dependent_uid, "Foreground").await
                {
                    if let Ok(mut s) = self.started.lock() {
                        s.remove(uid);
                    }
                    return Err(e);
                }
            }
        }
        if graph.blocking.get(uid).is_some_and(|n| *n > 0) {
            return Ok(());
        }
        self.remove_finalizer(owner, uid, FOREGROUND_FINALIZER)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_graph_tracks_dependents_and_reports_who_to_look_at() {
        let mut g = Graph::default();
        let dep = json!({"metadata": {"uid": "d", "name": "d", "namespace": "ns",
            "ownerReferences": [{"uid": "o", "apiVersion": "v1", "kind": "ConfigMap", "name": "o",
                "blockOwnerDeletion": true}]}});
        let (uid, node) = Node::read(0, serde_json::from_value(dep).unwrap()).unwrap();
        assert!(node.owners[0].blocks);
        assert_eq!(g.apply(uid, Some(node)), ["d"]);
        assert!(g.dependents["o"].contains("d"));
        let owner = json!({"metadata": {"uid": "o", "name": "o", "namespace": "ns"}});
        let (uid, node) = Node::read(0, serde_json::from_value(owner).unwrap()).unwrap();
        g.apply(uid.clone(), Some(node));
        // The owner goes: its dependent is looked at again.
        let touched = g.apply(uid, None);
        assert!(touched.contains(&"d".to_string()), "{touched:?}");
    }

    /// An object without owners and finalizers is kept as a number (its uid) and stands for
    /// the objects it owns; a relist that misses it reports it by its uid.
    #[test]
    fn plain_objects_are_kept_as_their_uid() {
        let uid = "0f8b3c2a-91d4-4e6f-b7a0-c1d2e3f4a5b6";
        assert_eq!(uid_number(uid).map(uid_text).as_deref(), Some(uid));
        for odd in [
            "0F8B3C2A-91D4-4E6F-B7A0-C1D2E3F4A5B6",
            "o",
            "0f8b3c2a91d44e6fb7a0c1d2e3f4a5b6",
        ] {
            assert_eq!(uid_number(odd), None, "{odd}");
        }
        let mut g = Graph::default();
        let owner = json!({"metadata": {"uid": uid, "name": "o", "namespace": "ns"}});
        let (owner_uid, mut node) = Node::read(3, serde_json::from_value(owner).unwrap()).unwrap();
        node.generation = 1;
        g.apply(owner_uid.clone(), Some(node));
        assert!(g.nodes.is_empty());
        assert_eq!(g.standing(uid), Some(Standing::Solid));
        assert_eq!(g.seen_before(3, 2), [uid]);
        assert!(g.seen_before(3, 1).is_empty());
        // Being deleted with a finalizer, it is a full node again.
        let deleting = json!({"metadata": {"uid": uid, "name": "o", "namespace": "ns",
            "deletionTimestamp": "2026-12-02T00:00:00Z", "finalizers": [FOREGROUND_FINALIZER]}});
        let (_, node) = Node::read(3, serde_json::from_value(deleting).unwrap()).unwrap();
        g.apply(owner_uid.clone(), Some(node));
        assert!(g.plain.is_empty());
        assert_eq!(g.standing(uid), Some(Standing::Waiting));
        g.apply(owner_uid, None);
        assert_eq!(g.standing(uid), None);
    }
}
