use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};
use std::sync::{Arc, Mutex, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::time::{Duration, Instant};

use bytes::Bytes;
use capstan_storage::{EventKind, KeyValue, ListRequest, Revision, Store};
use futures_util::StreamExt;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tracing::{debug, warn};

use crate::error::{Error, Result};
use crate::fields::Fields;
use crate::json::{CachedJson, SharedValues};
use crate::pairs::Pairs;

/// One object as the cache keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedObject {
    /// The storage key.
    pub key: String,
    /// The revision of the object's last change (its resourceVersion).
    pub revision: Revision,
    /// The object as the API serves it, resourceVersion included (long values it holds
    /// alike with other objects of the cache are shared with them).
    pub json: CachedJson,
    /// Its labels.
    pub labels: Pairs,
    /// Its selectable fields (`metadata.name`, `metadata.namespace`, ...).
    pub fields: Fields,
    /// Its protobuf encoding (the message, without the envelope), made the first time a
    /// client reads it in protobuf and kept with it from then on.
    pub protobuf: std::sync::OnceLock<Bytes>,
    /// The CRC-32 of the stored value the object stands for, set by the cache as it takes
    /// the object in (`None` before): a write that starts from the cached object tells by
    /// it that its own value differs (equal CRCs tell nothing for sure).
    pub stored_crc: Option<u32>,
}

/// Turns a stored value into a [`CachedObject`] (the registry knows the type).
pub type Decode = Arc<dyn Fn(&KeyValue) -> std::result::Result<CachedObject, String> + Send + Sync>;

/// Whether an object is selected (label and field selectors).
pub type Filter = Arc<dyn Fn(&CachedObject) -> bool + Send + Sync>;

/// The type of a watch event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// Created, or started to match.
    Added,
    /// Updated and still matching.
    Modified,
    /// Deleted, or stopped matching.
    Deleted,
}

impl EventType {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
        }
    }
}

/// An event as one watcher sees it.
#[derive(Debug, Clone)]
pub struct WatchEvent {
    /// Its type for this watcher (selectors turn updates into additions or deletions).
    pub kind: EventType,
    /// The object: the new state, or the last state for a deletion.
    pub object: Arc<CachedObject>,
}

/// One change in the window.
#[derive(Debug)]
struct Change {
    revision: u64,
    /// When the cache saw it.
    at: Instant,
    /// The object after the change; for a deletion, its last state (at its own revision).
    object: Arc<CachedObject>,
    what: What,
}

/// What a change did.
#[derive(Debug)]
enum What {
    /// A creation or an update, with the state before it if there was one.
    Put(Option<Arc<CachedObject>>),
    /// A deletion. Its event serves the last state at the deletion's revision, made from
    /// `object` when asked for (the window holds one copy of a deleted object, not two); the
    /// decoded form is kept only when it cannot be made so.
    Deleted(Option<Arc<CachedObject>>),
}

impl Change {
    /// The state before the change (absent when it created the object).
    fn before(&self) -> Option<&Arc<CachedObject>> {
        match &self.what {
            What::Put(previous) => previous.as_ref(),
            What::Deleted(_) => Some(&self.object),
        }
    }

    /// The object a deletion's event carries.
    fn deleted_object(&self) -> Arc<CachedObject> {
        match &self.what {
            What::Deleted(Some(kept)) => kept.clone(),
            _ => deleted_at(&self.object, self.revision)
                .map(Arc::new)
                .unwrap_or_else(|| self.object.clone()),
        }
    }

    /// What this change means to a watcher with `filter`; `deleted` gives the object a
    /// deletion's event carries.
    fn for_watcher_with(
        &self,
        filter: &Filter,
        deleted: impl FnOnce() -> Arc<CachedObject>,
    ) -> Option<WatchEvent> {
        match &self.what {
            What::Put(previous) => classify(false, &self.object, previous.as_ref(), filter),
            What::Deleted(_) => {
                classify(true, &self.object, None, filter).map(|event| WatchEvent {
                    object: deleted(),
                    ..event
                })
            }
        }
    }

    /// What this change means to a watcher with `filter`.
    fn for_watcher(&self, filter: &Filter) -> Option<WatchEvent> {
        self.for_watcher_with(filter, || self.deleted_object())
    }

    /// The JSON bytes this change counts against the window's size: its object's, and a
    /// deletion's decoded form when one is kept.
    fn bytes(&self) -> usize {
        let kept = match &self.what {
            What::Deleted(Some(kept)) => kept.json.len(),
            _ => 0,
        };
        self.object.json.len() + kept
    }
}

/// `object`, the last state of a deleted object, as its deletion at `revision` serves it:
/// the same with the deletion's resourceVersion. `None` unless its JSON holds its
/// resourceVersion (`"resourceVersion":"<revision>"`) exactly once.
fn deleted_at(object: &CachedObject, revision: u64) -> Option<CachedObject> {
    let version = object.revision.0.to_string();
    let needle = format!("\"resourceVersion\":\"{version}\"");
    let at = object.json.find_once(needle.as_bytes())?;
    let digits = at + needle.len() - 1 - version.len()..at + needle.len() - 1;
    Some(CachedObject {
        key: object.key.clone(),
        revision: Revision(revision),
        json: with_revision(&object.json, digits, Revision(revision)),
        labels: object.labels.clone(),
        fields: object.fields.clone(),
        protobuf: Default::default(),
        stored_crc: None,
    })
}

/// What a change means to a watcher with `filter`, as upstream defines it: an update that
/// makes an object match is an addition, one that makes it stop matching is a deletion (with
/// the new state). `object` is the new state, or the last state for a deletion; `previous` the
/// state before the change, if known.
pub fn classify(
    deleted: bool,
    object: &Arc<CachedObject>,
    previous: Option<&Arc<CachedObject>>,
    filter: &Filter,
) -> Option<WatchEvent> {
    let now = !deleted && filter(object);
    let before = previous.is_some_and(|p| filter(p));
    let kind = match (deleted, before, now) {
        (true, _, _) => filter(object).then_some(EventType::Deleted)?,
        (false, false, true) => EventType::Added,
        (false, true, true) => EventType::Modified,
        (false, true, false) => EventType::Deleted,
        (false, false, false) => return None,
    };
    Some(WatchEvent {
        kind,
        object: object.clone(),
    })
}

/// Sizes of the cache.
///
/// The window of changes kept for watches that resume from a resourceVersion is sized by
/// time, as upstream's: every change of the last `fresh` (75 s) is kept, and at least `window`
/// changes whatever their age, up to `window_max` changes or `window_bytes` of objects, the
/// oldest dropped first. A watch resuming from before the window gets 410 and relists.
#[derive(Debug, Clone)]
pub struct WatchCacheConfig {
    /// Changes always kept, whatever their age (`--default-watch-cache-size`).
    pub window: usize,
    /// Changes younger than this are kept beyond `window`.
    pub fresh: Duration,
    /// Most changes kept.
    pub window_max: usize,
    /// Most bytes of changed objects kept (their JSON).
    pub window_bytes: usize,
    /// Events a watcher may have queued before it is dropped as too slow.
    pub watcher_queue: usize,
    /// Decode every primed change too and panic when the two differ (see
    /// [`WatchCache::prime`]); on in debug builds, so that every test checks it.
    pub verify_primed: bool,
}

impl Default for WatchCacheConfig {
    fn default() -> Self {
        Self {
            window: 100,
            fresh: Duration::from_secs(75),
            window_max: 100 * 1024,
            window_bytes: 64 << 20,
            watcher_queue: 1024,
            verify_primed: cfg!(debug_assertions),
        }
    }
}

struct Watcher {
    /// Watches of one group (one client connection) are kept together, in the order they
    /// came ([`WatchCache::watch_in_group`]).
    group: u64,
    prefix: String,
    filter: Filter,
    after: u64,
    tx: mpsc::Sender<WatchEvent>,
}

/// A cached object in [`Objects`], ordered and found by its key (which the object holds: the
/// map keeps no copy of it).
#[derive(Debug, Clone)]
struct Entry(Arc<CachedObject>);

impl PartialEq for Entry {
    fn eq(&self, other: &Self) -> bool {
        self.0.key == other.0.key
    }
}

impl Eq for Entry {}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.key.cmp(&other.0.key)
    }
}

impl std::borrow::Borrow<str> for Entry {
    fn borrow(&self) -> &str {
        &self.0.key
    }
}

/// The current objects, in key order.
type Objects = BTreeSet<Entry>;

#[derive(Default)]
struct State {
    ready: bool,
    objects: Objects,
    revision: u64,
    /// The revision of the last change to `objects` (the load's revision after a load).
    changed: u64,
    /// Every change after `oldest` is in `window`.
    oldest: u64,
    window: VecDeque<Arc<Change>>,
    /// The JSON bytes of the objects in `window`.
    window_bytes: usize,
    watchers: Vec<Watcher>,
}

/// The state is behind a reader-writer lock held only for map and window operations:
/// decoding happens before a change takes the lock, and selectors run after a list or a new
/// watch has taken its snapshot, so a large list holds up neither other lists nor changes.
struct Shared {
    state: RwLock<State>,
    revision: watch::Sender<u64>,
    config: WatchCacheConfig,
    /// Objects this process is writing, by key, waiting for their change to arrive.
    primed: Mutex<HashMap<String, PrimedWrite>>,
}

/// Most primed objects waiting at once; beyond it, priming is skipped (the change decodes).
const PRIMED_MAX: usize = 4096;

impl Shared {
    fn primed(&self) -> std::sync::MutexGuard<'_, HashMap<String, PrimedWrite>> {
        self.primed.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The primed object of the change `kv`, if one was primed with the value it stores.
    fn take_primed(&self, kv: &KeyValue) -> Option<CachedObject> {
        let write = {
            let mut primed = self.primed();
            if primed.get(&kv.key)?.value != kv.value {
                return None; // another write of the key, or a change this process did not make
            }
            primed.remove(&kv.key)?
        };
        let mut object = write.object;
        object.json = with_revision(&object.json, write.placeholder, kv.mod_revision);
        object.revision = kv.mod_revision;
        Some(object)
    }
}

/// An object a write of this process is about to store, as the cache is to keep it once the
/// change arrives (see [`WatchCache::prime`]).
#[derive(Debug, Clone)]
pub struct PrimedWrite {
    /// The object. Its `revision` is not known yet (the cache sets it), and its `json` holds
    /// a placeholder where the resourceVersion goes.
    pub object: CachedObject,
    /// Where the placeholder lies in `object.json`: the characters between the quotes.
    pub placeholder: std::ops::Range<usize>,
    /// The value the write stores: the change that stores it is this object.
    pub value: Bytes,
}

/// `json` with `revision` written in place of the characters at `placeholder`.
fn with_revision(
    json: &CachedJson,
    placeholder: std::ops::Range<usize>,
    revision: Revision,
) -> CachedJson {
    json.replaced(placeholder, revision.0.to_string().as_bytes())
}

/// A write the cache was primed with (see [`WatchCache::prime`]). Dropped before the write
/// is acknowledged (it failed or was given up), it takes the priming back.
#[must_use = "dropping it takes the priming back"]
pub struct Priming<'a> {
    shared: Option<&'a Shared>,
    key: String,
    value: Bytes,
    json: CachedJson,
    placeholder: std::ops::Range<usize>,
}

impl Priming<'_> {
    /// The write was stored at `revision`: the priming stays for its change, and the object's
    /// JSON at that revision (the write's response) is returned.
    pub fn written(mut self, revision: Revision) -> Bytes {
        self.shared = None;
        with_revision(&self.json, self.placeholder.clone(), revision).to_bytes()
    }

    /// The write was stored, and its answer is not needed (a deletion's marking write, say,
    /// whose removal answers): the priming stays for its change.
    pub fn kept(mut self) {
        self.shared = None;
    }
}

impl Drop for Priming<'_> {
    fn drop(&mut self) {
        let Some(shared) = self.shared else { return };
        let mut primed = shared.primed();
        // Only this write's priming: a later write of the key may have replaced it.
        if primed
            .get(&self.key)
            .is_some_and(|w| w.value.as_ptr() == self.value.as_ptr())
        {
            primed.remove(&self.key);
        }
    }
}

/// A started watch: the events to send first (synthetic additions or replayed history), then
/// everything that arrives on `events`. When `events` ends, the watcher was too slow or the
/// cache restarted; the client should resume from the last revision it saw.
pub struct Watch {
    /// Events to send before the live ones.
    pub initial: Vec<WatchEvent>,
    /// Live events.
    pub events: mpsc::Receiver<WatchEvent>,
    /// The revision the watch started at.
    pub revision: Revision,
}

/// The cache of one resource (all keys under one prefix).
pub struct WatchCache {
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl Drop for WatchCache {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn lock(shared: &Shared) -> RwLockWriteGuard<'_, State> {
    shared
        .state
        .write()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn read(shared: &Shared) -> RwLockReadGuard<'_, State> {
    shared
        .state
        .read()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl WatchCache {
    /// Starts filling the cache with the keys under `prefix` and following their changes.
    pub fn start(
        store: Arc<dyn Store>,
        prefix: String,
        decode: Decode,
        config: WatchCacheConfig,
    ) -> Self {
        let (revision, _) = watch::channel(0);
        let shared = Arc::new(Shared {
            state: RwLock::new(State::default()),
            revision,
            config,
            primed: Mutex::default(),
        });
        let task = tokio::spawn(run(store, prefix, decode, shared.clone()));
        Self { shared, task }
    }

    /// Hands the cache the object a write of this process is about to store, before it
    /// stores it: when the change that stores exactly `write.value` under its key arrives,
    /// the cache keeps the object (its revision filled in) instead of decoding the value. The
    /// caller vouches that the object is what decoding the value gives;
    /// [`WatchCacheConfig::verify_primed`] checks it. Primed before the write, the object is
    /// there whichever comes first, the change or the write's acknowledgement.
    pub fn prime(&self, write: PrimedWrite) -> Priming<'_> {
        let mut priming = Priming {
            shared: None,
            key: write.object.key.clone(),
            value: write.value.clone(),
            json: write.object.json.clone(),
            placeholder: write.placeholder.clone(),
        };
        let mut primed = self.shared.primed();
        if primed.len() < PRIMED_MAX || primed.contains_key(&priming.key) {
            primed.insert(priming.key.clone(), write);
            priming.shared = Some(&self.shared);
        }
        priming
    }

    /// The revision the cache has caught up to.
    pub fn revision(&self) -> Revision {
        Revision(*self.shared.revision.borrow())
    }

    /// Waits until the cache has caught up to `revision`, at most `timeout`.
    pub async fn wait_for(&self, revision: Revision, timeout: Duration) -> Result<()> {
        let mut rx = self.shared.revision.subscribe();
        let reached = tokio::time::timeout(timeout, rx.wait_for(|r| *r >= revision.0))
            .await
            .map(|r| r.is_ok());
        match reached {
            Ok(true) if read(&self.shared).ready => Ok(()),
            Ok(true) => Err(Error::NotReady),
            _ => Err(Error::TooLarge {
                requested: revision.0,
                current: *rx.borrow(),
            }),
        }
    }

    /// Waits until the cache has loaded (or reloaded), at most `timeout`; whether it has.
    pub async fn wait_ready(&self, timeout: Duration) -> bool {
        // Subscribed before the state is read: a load that ends in between still wakes it.
        let mut rx = self.shared.revision.subscribe();
        let loaded = rx.wait_for(|_| read(&self.shared).ready);
        tokio::time::timeout(timeout, loaded)
            .await
            .is_ok_and(|r| r.is_ok())
    }

    /// The revision of the cache's last change to its objects (or of its last load): equal
    /// between two calls only when the cache's objects are the same. `None` before the
    /// first load.
    pub fn changed_at(&self) -> Option<Revision> {
        let state = read(&self.shared);
        state.ready.then_some(Revision(state.changed))
    }

    /// How many objects the cache holds now (none before it has its first list).
    pub fn object_count(&self) -> Option<usize> {
        let state = read(&self.shared);
        state.ready.then(|| state.objects.len())
    }

    /// The object at `key`, as the cache has it now.
    pub fn get(&self, key: &str) -> Result<Option<Arc<CachedObject>>> {
        let state = read(&self.shared);
        if !state.ready {
            return Err(Error::NotReady);
        }
        Ok(state.objects.get(key).map(|e| e.0.clone()))
    }

    /// The selected objects under `prefix`, in key order, and the revision they are at.
    pub fn list(
        &self,
        prefix: &str,
        filter: &Filter,
    ) -> Result<(Vec<Arc<CachedObject>>, Revision)> {
        let (mut items, revision) = {
            let state = read(&self.shared);
            if !state.ready {
                return Err(Error::NotReady);
            }
            (in_range(&state.objects, prefix), state.revision)
        };
        items.retain(|o| filter(o));
        Ok((items, Revision(revision)))
    }

    /// A page of the objects under `prefix` as they were at `revision`, from key `start`
    /// (inclusive) on: at most `limit` (0: no limit) selected by `filter` (`None`: every
    /// object). The state at `revision` is the current one with the window's later changes
    /// undone, so a paged list resumes where its last page ended without rescanning from the
    /// prefix, and stays consistent while objects change. `None` when the cache cannot tell
    /// (the revision is older than the window, or newer than the cache).
    pub fn page_at(
        &self,
        prefix: &str,
        start: &str,
        revision: Revision,
        limit: usize,
        filter: Option<&Filter>,
    ) -> Result<Option<Page>> {
        let mut candidates = Vec::new();
        let mut page = Page::default();
        {
            let state = read(&self.shared);
            if !state.ready {
                return Err(Error::NotReady);
            }
            if revision.0 < state.oldest || revision.0 > state.revision {
                return Ok(None);
            }
            let objects = at_revision(&state, prefix, start, revision.0);
            match filter {
                // Without selectors, the page and a count of the rest, under the lock: no
                // object past the page is cloned.
                None => {
                    for object in objects {
                        if limit > 0 && page.items.len() == limit {
                            page.next = Some(object.key.clone());
                            break;
                        }
                        page.items.push(object.clone());
                    }
                    if let Some(next) = &page.next {
                        page.remaining = count_at_revision(&state, prefix, next, revision.0);
                    }
                    return Ok(Some(page));
                }
                // Selectors run once the lock is released, on cheap clones.
                Some(_) => candidates.extend(objects.cloned()),
            }
        }
        let filter = filter.expect("selectors");
        for object in candidates {
            if !filter(&object) {
                continue;
            }
            if limit > 0 && page.items.len() == limit {
                page.next = Some(object.key.clone());
                break;
            }
            page.items.push(object);
        }
        Ok(Some(page))
    }

    /// Starts a watch of the selected keys under `prefix`. Without `from`, it begins with an
    /// addition for every selected object; with `from`, it replays the changes after it (an
    /// [`Error::Expired`] when they are no longer in the window).
    pub fn watch(&self, prefix: &str, from: Option<Revision>, filter: Filter) -> Result<Watch> {
        self.watch_in_group(prefix, from, filter, 0)
    }

    /// [`watch`](Self::watch), sent each change right after the other watches of `group`
    /// (0: none), e.g. the watches sharing one HTTP/2 connection: their stream tasks are
    /// woken one after another, so the connection writes their frames together.
    pub fn watch_in_group(
        &self,
        prefix: &str,
        from: Option<Revision>,
        filter: Filter,
        group: u64,
    ) -> Result<Watch> {
        let mut state = lock(&self.shared);
        if !state.ready {
            return Err(Error::NotReady);
        }
        let mut initial = Vec::new();
        // The objects of a watch from now: selected once the lock is released.
        let mut snapshot = Vec::new();
        let after = match from {
            None => {
                snapshot = in_range(&state.objects, prefix);
                state.revision
            }
            Some(Revision(from)) => {
                // Changes up to a revision the cache has not seen would be skipped unseen.
                if from > state.revision {
                    return Err(Error::TooLarge {
                        requested: from,
                        current: state.revision,
                    });
                }
                if from < state.oldest {
                    return Err(Error::Expired {
                        requested: from,
                        oldest: state.oldest,
                    });
                }
                for change in state
                    .window
                    .iter()
                    .filter(|c| c.revision > from && c.object.key.starts_with(prefix))
                {
                    initial.extend(change.for_watcher(&filter));
                }
                from.max(state.revision)
            }
        };
        let (tx, events) = mpsc::channel(self.shared.config.watcher_queue);
        let revision = Revision(state.revision.max(from.map_or(0, |r| r.0)));
        let watcher = Watcher {
            group,
            prefix: prefix.to_string(),
            filter: filter.clone(),
            after,
            tx,
        };
        let last_of_group = match group {
            0 => None,
            _ => state.watchers.iter().rposition(|w| w.group == group),
        };
        match last_of_group {
            Some(last) => state.watchers.insert(last + 1, watcher),
            None => state.watchers.push(watcher),
        }
        drop(state);
        initial.extend(
            snapshot
                .into_iter()
                .filter(|o| filter(o))
                .map(|object| WatchEvent {
                    kind: EventType::Added,
                    object,
                }),
        );
        Ok(Watch {
            initial,
            events,
            revision,
        })
    }

    /// A receiver of the cache's revision: when it reads R and a watcher's queue is empty,
    /// that watcher has been sent every change up to R.
    pub fn revision_receiver(&self) -> watch::Receiver<u64> {
        self.shared.revision.subscribe()
    }

    /// Number of watchers registered.
    pub fn watchers(&self) -> usize {
        read(&self.shared).watchers.len()
    }
}

/// A page of a list at an earlier revision ([`WatchCache::page_at`]).
#[derive(Debug, Default)]
pub struct Page {
    /// The page's objects, in key order.
    pub items: Vec<Arc<CachedObject>>,
    /// The key of the first selected object after the page, when there is one.
    pub next: Option<String>,
    /// How many objects follow the page (counted only without selectors).
    pub remaining: usize,
}

/// The objects under `prefix` from `start` on, in key order, as they were at `revision`
/// (which the window covers): for a key changed since, the state before its first later
/// change (absent if it was created since); otherwise the current object.
fn at_revision<'s>(
    state: &'s State,
    prefix: &str,
    start: &str,
    revision: u64,
) -> impl Iterator<Item = &'s Arc<CachedObject>> + 's {
    let first_later = state.window.partition_point(|c| c.revision <= revision);
    let mut before: BTreeMap<&'s str, Option<&'s Arc<CachedObject>>> = BTreeMap::new();
    for change in state.window.range(first_later..) {
        let key = change.object.key.as_str();
        if key >= start && key.starts_with(prefix) {
            before.entry(key).or_insert(change.before());
        }
    }
    let prefix = prefix.to_string();
    let current = state
        .objects
        .range::<str, _>((std::ops::Bound::Included(start), std::ops::Bound::Unbounded))
        .take_while(move |e| e.0.key.starts_with(&prefix))
        .map(|e| (e.0.key.as_str(), Some(&e.0)));
    let mut current = current.peekable();
    let mut undone = before.into_iter().peekable();
    std::iter::from_fn(move || {
        loop {
            let (key, object) = match (current.peek(), undone.peek()) {
                (None, None) => return None,
                (Some(_), None) => current.next()?,
                (None, Some(_)) => undone.next()?,
                (Some((c, _)), Some((u, _))) => match c.cmp(u) {
                    std::cmp::Ordering::Less => current.next()?,
                    std::cmp::Ordering::Greater => undone.next()?,
                    std::cmp::Ordering::Equal => {
                        current.next();
                        undone.next()?
                    }
                },
            };
            if let (_, Some(object)) = (key, object) {
                return Some(object);
            }
        }
    })
}

/// How many objects under `prefix` from `start` on there were at `revision`. Without later
/// changes in that range, the map's entries are counted without reading the objects (a page
/// of a large list counts the rest of it); otherwise the objects at `revision` are walked.
// See `in_range` on the lint.
#[allow(clippy::mutable_key_type)]
fn count_at_revision(state: &State, prefix: &str, start: &str, revision: u64) -> usize {
    let first_later = state.window.partition_point(|c| c.revision <= revision);
    let changed_since = state.window.range(first_later..).any(|c| {
        let key = c.object.key.as_str();
        key >= start && key.starts_with(prefix)
    });
    match prefix_end(prefix) {
        Some(end) if !changed_since && start < end.as_str() => state
            .objects
            .range::<str, _>((
                std::ops::Bound::Included(start),
                std::ops::Bound::Excluded(end.as_str()),
            ))
            .count(),
        _ => at_revision(state, prefix, start, revision).count(),
    }
}

/// The first key after every key under `prefix`, when the prefix's last character is ASCII
/// (the resources' prefixes end in `/`).
fn prefix_end(prefix: &str) -> Option<String> {
    let last = *prefix.as_bytes().last()?;
    if !last.is_ascii() || last == 0x7f {
        return None;
    }
    let mut end = prefix[..prefix.len() - 1].to_string();
    end.push(char::from(last + 1));
    Some(end)
}

/// The objects under `prefix`, in key order (cheap clones of their `Arc`s).
// An entry is ordered by its object's key, which never changes; the interior mutability the
// lint sees is the object's protobuf form, made once when first asked for.
#[allow(clippy::mutable_key_type)]
fn in_range(objects: &Objects, prefix: &str) -> Vec<Arc<CachedObject>> {
    objects
        .range::<str, _>((
            std::ops::Bound::Included(prefix),
            std::ops::Bound::Unbounded,
        ))
        .take_while(|e| e.0.key.starts_with(prefix))
        .map(|e| e.0.clone())
        .collect()
}

/// Loads the state, then follows the store's watch; starts over when the watch fails.
async fn run(store: Arc<dyn Store>, prefix: String, decode: Decode, shared: Arc<Shared>) {
    let mut backoff = Duration::from_millis(100);
    let mut values = SharedValues::default();
    loop {
        match follow(&store, &prefix, &decode, &shared, &mut values).await {
            Ok(()) => backoff = Duration::from_millis(100),
            Err(err) => {
                warn!(%prefix, %err, "watch cache: reloading");
                backoff = (backoff * 2).min(Duration::from_secs(5));
            }
        }
        {
            let mut state = lock(&shared);
            state.ready = false;
            // Dropping the senders ends every watch; clients resume or relist.
            state.watchers.clear();
        }
        tokio::time::sleep(backoff).await;
    }
}

/// Objects per read while the cache loads.
const LOAD_PAGE: usize = 1000;

async fn follow(
    store: &Arc<dyn Store>,
    prefix: &str,
    decode: &Decode,
    shared: &Shared,
    values: &mut SharedValues,
) -> capstan_storage::Result<()> {
    // Read in pages at the first page's revision: the stored values of a large collection
    // are never all in memory at once beside their decoded forms.
    #[allow(clippy::mutable_key_type)] // ordered by key alone (see `in_range`)
    let mut objects = Objects::new();
    let mut from: Option<String> = None;
    let mut listed_at = None;
    loop {
        let page = store
            .list(ListRequest {
                prefix,
                start: from.as_deref(),
                limit: LOAD_PAGE,
                revision: listed_at,
            })
            .await?;
        listed_at = Some(page.revision);
        for kv in &page.items {
            match decode(kv) {
                Ok(o) => {
                    objects.replace(Entry(Arc::new(taken_in(values, kv, o))));
                }
                Err(err) => {
                    warn!(key = %kv.key, %err, "watch cache: skipping an object that does not decode")
                }
            }
        }
        match page.items.last() {
            Some(last) if page.more => from = Some(format!("{}\0", last.key)),
            _ => break,
        }
    }
    let listed_at = listed_at.unwrap_or_default();
    let start = listed_at.0;
    let mut stream = store.watch(prefix, listed_at).await?;
    {
        let mut state = lock(shared);
        *state = State {
            ready: true,
            objects,
            revision: start,
            changed: start,
            oldest: start,
            window: VecDeque::new(),
            window_bytes: 0,
            watchers: Vec::new(),
        };
    }
    // Writes whose changes the list took in would wait for them forever; those still on
    // their way decode.
    shared.primed().clear();
    shared.revision.send_replace(start);
    debug!(%prefix, revision = start, "watch cache loaded");
    while let Some(item) = stream.next().await {
        let event = item?;
        let revision = event.kv.mod_revision.0;
        // Decoded before the lock is taken. A put that does not decode cannot be served, and
        // serving the old object as current would be wrong: the watch ends and the cache
        // reloads (its clients' watches end; they resume or relist). A delete needs no
        // decoding: the cached object is its last state.
        let object = match event.kind {
            EventKind::Progress => None,
            EventKind::Put => match shared.take_primed(&event.kv) {
                Some(primed) => {
                    if shared.config.verify_primed {
                        assert_eq!(
                            Ok(&primed),
                            decode(&event.kv).as_ref(),
                            "a primed object differs from its stored value"
                        );
                    }
                    Some(Arc::new(taken_in(values, &event.kv, primed)))
                }
                None => match decode(&event.kv) {
                    Ok(o) => Some(Arc::new(taken_in(values, &event.kv, o))),
                    Err(err) => {
                        return Err(capstan_storage::Error::Corrupt(format!(
                            "the change of {} at revision {revision} does not decode: {err}",
                            event.kv.key
                        )));
                    }
                },
            },
            // A deletion's object is the cached last state (below).
            EventKind::Delete => None,
        };
        let deletion = match event.kind {
            EventKind::Delete => deletion_of(shared, decode, &event.kv),
            _ => None,
        };
        let mut state = lock(shared);
        let previous = match event.kind {
            EventKind::Progress => None,
            EventKind::Delete => state.objects.take(event.kv.key.as_str()).map(|e| e.0),
            EventKind::Put => {
                let object = object.clone().expect("decoded above");
                state.objects.replace(Entry(object)).map(|e| e.0)
            }
        };
        if event.kind != EventKind::Progress {
            state.changed = revision;
        }
        let change = match (object, deletion) {
            (Some(object), _) => Some((object, What::Put(previous), None)),
            (None, Some(d)) => Some((d.last, What::Deleted(d.kept), Some(d.served))),
            (None, None) => None,
        };
        if let Some((object, what, served)) = change {
            let change = Arc::new(Change {
                revision,
                at: Instant::now(),
                object,
                what,
            });
            // A deletion's object is made once for every watcher.
            let deleted = || served.clone().unwrap_or_else(|| change.deleted_object());
            state.watchers.retain(|w| {
                if revision <= w.after || !change.object.key.starts_with(&w.prefix) {
                    return !w.tx.is_closed();
                }
                match change.for_watcher_with(&w.filter, deleted) {
                    None => true,
                    // A full queue drops the watcher: it must not hold up the others.
                    Some(ev) => w.tx.try_send(ev).is_ok(),
                }
            });
            state.window_bytes += change.bytes();
            state.window.push_back(change);
        }
        // Progress reports trim too: a resource whose writes stopped lets its aged changes go.
        trim(&mut state, &shared.config);
        state.revision = state.revision.max(revision);
        drop(state);
        shared.revision.send_replace(revision);
    }
    Ok(())
}

/// `object`, decoded from (or primed with) `kv`, as the cache keeps it: the long values of
/// its JSON shared through `values`, the CRC of `kv`'s value with it.
fn taken_in(values: &mut SharedValues, kv: &KeyValue, mut object: CachedObject) -> CachedObject {
    object.json = values.share(std::mem::take(&mut object.json));
    object.stored_crc = Some(crc32fast::hash(&kv.value));
    object
}

/// A deletion's change, made before the cache's lock is taken (only the cache's own task
/// changes its objects, so the last state read here is the one the change removes).
struct Deletion {
    /// The last state: the cached object, or the stored value decoded when the cache did
    /// not hold it.
    last: Arc<CachedObject>,
    /// The stored value decoded, when the last state's resourceVersion cannot be rewritten.
    kept: Option<Arc<CachedObject>>,
    /// What the event carries: the last state at the deletion's resourceVersion.
    served: Arc<CachedObject>,
}

/// The change of the deletion `kv` (its value is the last stored one); `None` when the cache
/// held no state of it and the value does not decode.
fn deletion_of(shared: &Shared, decode: &Decode, kv: &KeyValue) -> Option<Deletion> {
    let cached = read(shared)
        .objects
        .get(kv.key.as_str())
        .map(|e| e.0.clone());
    let Some(last) = cached else {
        let decoded = Arc::new(decode(kv).ok()?);
        return Some(Deletion {
            last: decoded.clone(),
            kept: None,
            served: decoded,
        });
    };
    match deleted_at(&last, kv.mod_revision.0) {
        Some(served) => {
            if shared.config.verify_primed {
                assert_eq!(
                    Ok(&served),
                    decode(kv).as_ref(),
                    "a deleted object differs from its stored last state"
                );
            }
            Some(Deletion {
                last,
                kept: None,
                served: Arc::new(served),
            })
        }
        None => {
            let kept = decode(kv).ok().map(Arc::new);
            let served = kept.clone().unwrap_or_else(|| last.clone());
            Some(Deletion { last, kept, served })
        }
    }
}

/// Drops the window's oldest changes beyond its sizes (see [`WatchCacheConfig`]).
fn trim(state: &mut State, config: &WatchCacheConfig) {
    let now = Instant::now();
    while let Some(front) = state.window.front() {
        let over = state.window.len() > config.window_max
            || state.window_bytes > config.window_bytes
            || (state.window.len() > config.window && now.duration_since(front.at) > config.fresh);
        if !over {
            break;
        }
        let (revision, bytes) = (front.revision, front.bytes());
        state.window.pop_front();
        state.window_bytes -= bytes;
        state.oldest = revision;
    }
}

#[cfg(test)]
mod tests;
