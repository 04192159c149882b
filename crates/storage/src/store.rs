use std::fmt;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use async_trait::async_trait;
use bytes::Bytes;
use futures_util::Stream;

use crate::error::{Error, Result};

/// A position in the store's history. Revisions increase by one with every write and are
/// never reused; 0 means "before any write".
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Revision(pub u64);

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// A key with its value and the revisions that created and last modified it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyValue {
    /// The key.
    pub key: String,
    /// The value bytes.
    pub value: Bytes,
    /// The revision of the write that created the key.
    pub create_revision: Revision,
    /// The revision of the last write to the key (for a delete event, the deletion).
    pub mod_revision: Revision,
}

/// What happened to a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// Created or updated.
    Put,
    /// Deleted.
    Delete,
    /// No change to a watched key, but every change up to `kv.mod_revision` has been
    /// delivered (etcd's progress notification). `kv.key` and `kv.value` are empty.
    Progress,
}

/// One change, as a watch delivers it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// Put or delete.
    pub kind: EventKind,
    /// The new value for a put; the last value before deletion for a delete. `mod_revision`
    /// is the revision of this change either way.
    pub kv: KeyValue,
}

impl Event {
    /// A progress notification at `revision`.
    pub fn progress(revision: Revision) -> Self {
        Self {
            kind: EventKind::Progress,
            kv: KeyValue {
                key: String::new(),
                value: Bytes::new(),
                create_revision: Revision(0),
                mod_revision: revision,
            },
        }
    }

    /// Whether this put created the key (as opposed to updating it).
    pub fn is_create(&self) -> bool {
        self.kind == EventKind::Put && self.kv.create_revision == self.kv.mod_revision
    }
}

/// A range read: keys starting with `prefix`, from `start` (inclusive) on, in key order.
#[derive(Debug, Clone, Default)]
pub struct ListRequest<'a> {
    /// Only keys with this prefix.
    pub prefix: &'a str,
    /// Start at this key (inclusive) instead of the first key of the prefix.
    pub start: Option<&'a str>,
    /// At most this many items; 0 means no limit.
    pub limit: usize,
    /// Read the state at this revision instead of the current one.
    pub revision: Option<Revision>,
}

/// The answer to a range read.
#[derive(Debug, Clone, Default)]
pub struct ListResponse {
    /// The items, in key order.
    pub items: Vec<KeyValue>,
    /// The revision the read was served at.
    pub revision: Revision,
    /// Whether more items remain after the last one returned.
    pub more: bool,
}

tokio::task_local! {
    /// The notice of the request this task serves ([`WriteNotice::scope`]).
    static REQUEST_NOTICE: Arc<WriteNotice>;
}

/// A write on its way to a store: taken when a write request arrives, withdrawn when the
/// request hands a write to the store (or ends without one). A store that commits writes in
/// groups may hold a commit briefly while notices are out, so that the writes they announce
/// share its sync ([`Store::expect_write`]). Dropping a notice withdraws it.
#[derive(Debug, Default)]
pub struct WriteNotice {
    outstanding: Option<Arc<AtomicUsize>>,
    withdrawn: AtomicBool,
}

impl WriteNotice {
    /// A notice counted in `outstanding` until it is withdrawn.
    pub fn counted(outstanding: Arc<AtomicUsize>) -> Self {
        outstanding.fetch_add(1, Ordering::AcqRel);
        Self {
            outstanding: Some(outstanding),
            withdrawn: AtomicBool::new(false),
        }
    }

    /// Withdraws the notice. Later calls do nothing.
    pub fn withdraw(&self) {
        if let Some(outstanding) = &self.outstanding
            && !self.withdrawn.swap(true, Ordering::AcqRel)
        {
            outstanding.fetch_sub(1, Ordering::AcqRel);
        }
    }

    /// Runs `request` (a request's whole handling) with `self` as its notice: the first write
    /// it hands to a store withdraws it ([`WriteNotice::withdraw_current`]), whichever path
    /// the write takes; the notice goes at the latest with the request.
    pub async fn scope<F: std::future::Future>(self: Arc<Self>, request: F) -> F::Output {
        REQUEST_NOTICE.scope(self, request).await
    }

    /// Withdraws the notice of the request being served, if any: stores call it as a write
    /// is handed to them, handlers for a request that turns out to write nothing.
    pub fn withdraw_current() {
        let _ = REQUEST_NOTICE.try_with(|notice| notice.withdraw());
    }
}

impl Drop for WriteNotice {
    fn drop(&mut self) {
        self.withdraw();
    }
}

/// A stream of changes, in revision order. It ends with an error when the watcher can not be
/// kept up to date (for example [`Error::WatchLagged`](crate::Error::WatchLagged)).
pub type WatchStream = Pin<Box<dyn Stream<Item = Result<Event>> + Send>>;

/// A versioned key-value store. Implementations are shared between tasks and must be cheap
/// to call concurrently.
#[async_trait]
pub trait Store: Send + Sync + 'static {
    /// The current value of `key` (or `None`) and the revision the read was served at.
    async fn get(&self, key: &str) -> Result<(Option<KeyValue>, Revision)>;

    /// A range read, at the current revision or at `request.revision`. Fails with
    /// `Compacted` for a revision older than the history, `FutureRevision` for one newer
    /// than the store.
    async fn list(&self, request: ListRequest<'_>) -> Result<ListResponse>;

    /// Announces a write on its way (see [`WriteNotice`]). Stores that do not group commits
    /// return an inert notice (the default).
    fn expect_write(&self) -> WriteNotice {
        WriteNotice::default()
    }

    /// Writes `key` if it does not exist. Fails with `AlreadyExists` otherwise.
    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue>;

    /// Replaces `key` if its last modification is `expected`. Fails with `NotFound`, or with
    /// `Conflict` carrying the current value.
    async fn update(&self, key: &str, value: Bytes, expected: Revision) -> Result<KeyValue>;

    /// Deletes `key` (if `expected` is given, only if it was last modified then). Returns the
    /// last value, with `mod_revision` set to the deletion's revision. Fails with `NotFound`
    /// or `Conflict`.
    async fn delete(&self, key: &str, expected: Option<Revision>) -> Result<KeyValue>;

    /// Writes `key` whatever is there, to expire `ttl` after this write unless written again
    /// (etcd: a lease). A backend without expiry, which only this process uses, keeps the
    /// key until it is deleted (the default); [`Store::expires_keys`] says which.
    async fn put_with_ttl(&self, key: &str, value: Bytes, ttl: Duration) -> Result<KeyValue> {
        let _ = ttl;
        loop {
            let written = match self.get(key).await?.0 {
                Some(current) => self.update(key, value.clone(), current.mod_revision).await,
                None => self.create(key, value.clone()).await,
            };
            match written {
                Err(
                    Error::Conflict { .. } | Error::AlreadyExists { .. } | Error::NotFound { .. },
                ) => {
                    continue;
                }
                other => return other,
            }
        }
    }

    /// Whether keys written by [`Store::put_with_ttl`] expire.
    fn expires_keys(&self) -> bool {
        false
    }

    /// The revision of the last committed write.
    async fn current_revision(&self) -> Result<Revision>;

    /// Whether [`Store::current_revision`] is read from memory, without a round trip (the
    /// embedded store): a consistent read of one object may then wait for a watch cache to
    /// reach that revision instead of reading storage. False by default (etcd's costs a
    /// request, so its reads of one object go to etcd, as upstream's do).
    fn knows_current_revision(&self) -> bool {
        false
    }

    /// Whether the backend answers (health checks). The default reads the current revision;
    /// a backend whose `current_revision` does more than read (etcd's asks watches for
    /// progress) answers with a plain read instead.
    async fn ping(&self) -> Result<()> {
        self.current_revision().await.map(|_| ())
    }

    /// How many keys start with `prefix` now (the object-count metric). The default lists
    /// them.
    async fn count(&self, prefix: &str) -> Result<u64> {
        let listed = self
            .list(ListRequest {
                prefix,
                ..Default::default()
            })
            .await?;
        Ok(listed.items.len() as u64)
    }

    /// Whether watch progress notifications never run ahead of the events they follow, so
    /// that a cache fed by a watch may serve consistent reads once it has seen the current
    /// revision. True unless a backend knows otherwise (etcd before 3.4.31 and 3.5.13 may
    /// report progress for a watch still catching up on history).
    fn consistent_progress(&self) -> bool {
        true
    }

    /// The size of the backend's database in bytes, when it knows it (the size metric).
    async fn size_bytes(&self) -> Result<Option<u64>> {
        Ok(None)
    }

    /// The changes to keys with `prefix` after revision `from`, first from history, then live,
    /// interleaved with `Progress` events when writes to other keys advance the revision.
    /// Fails with `Compacted` when `from` is older than the history.
    async fn watch(&self, prefix: &str, from: Revision) -> Result<WatchStream>;

    /// Drops the history at and before `revision` that no read at a later revision needs.
    async fn compact(&self, revision: Revision) -> Result<()>;

    /// The oldest revision that reads and watches can still start after.
    async fn compacted_revision(&self) -> Result<Revision>;

    /// Asks the backend's watches to report their progress soon (etcd's progress requests),
    /// for a reader waiting for a watch to reach a revision. Nothing by default: the
    /// embedded store's watches report every commit.
    fn request_progress(&self) {}

    /// Takes this process's turn at the periodic compaction, for backends that several API
    /// servers share: `seen` is the last round this process knows of and `target` the
    /// revision it means to compact to. A backend only this process uses (the default)
    /// always grants the turn.
    async fn compaction_turn(&self, seen: u64, target: Revision) -> Result<CompactionTurn> {
        let _ = target;
        Ok(CompactionTurn {
            granted: true,
            round: seen + 1,
            current: self.current_revision().await?,
        })
    }
}

/// What [`Store::compaction_turn`] answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompactionTurn {
    /// Whether this process compacts this round (another one did when not).
    pub granted: bool,
    /// The latest round, counting this one.
    pub round: u64,
    /// The revision current when the turn was taken: the target of the next round.
    pub current: Revision,
}
