//! The embedded backend: one redb file, one writer thread that group-commits.
//!
//! Layout (two tables):
//! - `log`: revision → (key, kind, create revision, previous revision, value): every change,
//!   for watches and for reads at older revisions. A delete records the last value. The
//!   previous revision is the key's change before this one (0 for a create): each key's
//!   changes form a chain back through the log, which reads at a revision and compaction
//!   follow.
//! - `meta`: `revision` (last committed) and `compacted`.
//!
//! The keys that exist now, with their create and mod revisions, are kept in memory
//! ([`LiveKeys`], made from the log at open). A key's value is the `log` entry at its mod
//! revision (compaction always keeps a live key's last revision), so each value is written
//! once, and a write adds one entry at the log's end. Readers take the live keys' read lock
//! while they begin their read transaction and the writer records a batch there after its
//! commit, so every revision a reader finds in memory is in its snapshot.
//!
//! Writers send their operation to the writer thread and wait. The thread takes every
//! operation that is waiting (up to a batch limit), applies them in one write transaction,
//! appends their effects to the write-ahead log with one `fdatasync` (see [`crate::wal`]),
//! commits the transaction, publishes the events, and only then answers each writer. So an
//! acknowledged write is on disk, and concurrent writers share the cost of the sync. A
//! durable checkpoint of the database every few seconds lets the log start over.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::Bytes;
use redb::{Database, Durability, ReadableDatabase, ReadableTable, TableDefinition, TableHandle};
use tokio::sync::{mpsc, oneshot};
use tracing::{error, info, warn};

use crate::error::{Error, Result};
use crate::fanout::{Bounds, Ended, Fanout, Subscription};
use crate::live::LiveKeys;
use crate::store::{
    Event, EventKind, KeyValue, ListRequest, ListResponse, Revision, Store, WatchStream,
    WriteNotice,
};
use crate::wal::{Stop, Wal};

/// The live keys on disk, in the layouts before [`LiveKeys`]; dropped by the upgrade.
const LIVE: TableDefinition<&str, (u64, u64)> = TableDefinition::new("live");
/// The layout before `live` (kept each current value a second time); [`Tables::upgrade`]
/// moves a database off it.
const KV_WITH_VALUES: TableDefinition<&str, (u64, u64, &[u8])> = TableDefinition::new("kv");
/// A log entry: key, kind, create revision, the key's previous revision (0 for a create),
/// value.
pub(crate) type LogEntry = (&'static str, u8, u64, u64, &'static [u8]);
const LOG: TableDefinition<u64, LogEntry> = TableDefinition::new("log");
/// The log of the layout before the chains (its entries without the previous revision),
/// and the index of every key's revisions it needed; [`Tables::upgrade`] moves a database
/// off both. Keeping the name `log` for the new type makes versions of that layout stop
/// (the table's type does not match) instead of reading a database they do not know.
const UNCHAINED_LOG: TableDefinition<u64, (&str, u8, u64, &[u8])> = TableDefinition::new("log");
const HIST: TableDefinition<(&str, u64), ()> = TableDefinition::new("hist");
/// Where the upgrade writes the chained log before it takes the name `log`.
const CHAINED_LOG_STAGED: TableDefinition<u64, LogEntry> = TableDefinition::new("log-chained");
const META: TableDefinition<&str, u64> = TableDefinition::new("meta");

pub(crate) const META_REVISION: &str = "revision";
pub(crate) const META_COMPACTED: &str = "compacted";
/// The epoch of the write-ahead log's current round (see [`crate::wal`]).
pub(crate) const META_EPOCH: &str = "wal-epoch";
/// Written by the checkpoint of a store that closes: the epoch of the round it began and
/// never wrote to. When it matches the current epoch, the log holds nothing the database
/// lacks and the next open does not read it; that open removes it before any new record.
const META_CLOSED_CLEANLY: &str = "wal-closed-cleanly";
const PUT: u8 = 0;
pub(crate) const DELETE: u8 = 1;

/// Tuning of the embedded store.
#[derive(Debug, Clone)]
pub struct EmbeddedStoreConfig {
    /// The database file; the write-ahead log sits beside it with the extension `wal`.
    pub path: PathBuf,
    /// Most operations committed in one transaction.
    pub max_batch: usize,
    /// A batch takes no more operations once their keys and values reach this many bytes;
    /// one key and value larger than this is refused (`TooLarge`).
    pub max_batch_bytes: u64,
    /// How many committed batches a watcher may fall behind before it is dropped.
    pub watch_buffer: usize,
    /// How many bytes of keys and values a watcher may fall behind before it is dropped.
    pub watch_buffer_bytes: usize,
    /// Checkpoint when the log has grown this large.
    pub checkpoint_bytes: u64,
    /// Checkpoint at least this often while writes come in.
    pub checkpoint_interval: Duration,
    /// Memory for redb's page cache. Reads of current objects (GETs and lists) are served by
    /// the watch cache above, leaving writes' reads of the current value and the caches'
    /// initial lists: this stays small (redb's own default is 1 GiB; 64 MiB, then 16 MiB
    /// here held pages the watch caches had read once at start, and 8 MiB writes as fast on
    /// 33,000 stored objects).
    pub cache_bytes: usize,
    /// How long a batch may wait for writes announced with [`Store::expect_write`] to join
    /// it (and share its sync). A batch starts waiting only when such writes are out, and
    /// goes on while they are or while its last look found new operations; a lone writer
    /// never waits. Zero turns the wait off.
    pub commit_delay: Duration,
}

impl EmbeddedStoreConfig {
    /// Defaults for a database file at `path`.
    pub fn new(path: impl AsRef<Path>) -> Self {
        Self {
            path: path.as_ref().to_path_buf(),
            max_batch: 512,
            max_batch_bytes: 64 << 20,
            watch_buffer: 4096,
            watch_buffer_bytes: 128 << 20,
            checkpoint_bytes: 16 << 20,
            checkpoint_interval: Duration::from_secs(1),
            cache_bytes: 8 << 20,
            commit_delay: Duration::from_millis(1),
        }
    }
}

enum Op {
    Create {
        key: String,
        value: Bytes,
    },
    Update {
        key: String,
        value: Bytes,
        expected: Revision,
    },
    Delete {
        key: String,
        expected: Option<Revision>,
    },
    Compact {
        revision: Revision,
    },
    /// Answered by the writer after a write transaction, changing nothing: proves the
    /// writer is alive and accepting writes.
    Ping,
}

impl Op {
    /// The key the operation writes ("" for those that write none).
    fn key(&self) -> &str {
        match self {
            Op::Create { key, .. } | Op::Update { key, .. } | Op::Delete { key, .. } => key,
            Op::Compact { .. } | Op::Ping => "",
        }
    }

    /// The key and value bytes the operation writes.
    fn bytes(&self) -> u64 {
        match self {
            Op::Create { key, value } | Op::Update { key, value, .. } => {
                (key.len() + value.len()) as u64
            }
            Op::Delete { key, .. } => key.len() as u64,
            Op::Compact { .. } | Op::Ping => 0,
        }
    }
}

struct Request {
    op: Op,
    reply: oneshot::Sender<Result<Option<KeyValue>>>,
}

struct Shared {
    db: Database,
    /// The keys that exist, as of the last commit recorded (see the module's notes).
    live: RwLock<LiveKeys>,
    revision: AtomicU64,
    compacted: AtomicU64,
    events: Fanout,
    /// Writes announced and not yet handed over ([`WriteNotice`]).
    announced: Arc<AtomicUsize>,
    #[cfg(test)]
    faults: tests::Faults,
}

impl Shared {
    /// The live keys, for a reader: its read transaction, begun while this is held, holds
    /// every revision found here.
    fn live(&self) -> RwLockReadGuard<'_, LiveKeys> {
        self.live.read().unwrap_or_else(PoisonError::into_inner)
    }

    /// Records a committed batch's changes in the live keys.
    fn record(&self, events: &[Event]) {
        let mut live = self.live.write().unwrap_or_else(PoisonError::into_inner);
        for event in events {
            live.record(event);
        }
    }
}

/// The default backend: a crash-safe database file on local disk with group commit.
pub struct EmbeddedStore {
    shared: Arc<Shared>,
    /// The database file (the log sits beside it).
    path: PathBuf,
    writer: Option<mpsc::Sender<Request>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for EmbeddedStore {
    /// Closes the queue and waits for the writer to finish its last batch, so that the file
    /// can be opened again as soon as the store is dropped.
    fn drop(&mut self) {
        self.writer.take();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

impl EmbeddedStore {
    /// Opens (or creates) the database at `config.path` and starts its writer thread.
    pub fn open(config: EmbeddedStoreConfig) -> Result<Self> {
        if let Some(parent) = config.path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| Error::io(format!("creating {}", parent.display()), e))?;
        }
        if !config.path.exists() {
            create_database(&config.path)?;
        }
        let db = Database::builder()
            .set_cache_size(config.cache_bytes)
            .create(&config.path)?;
        let wal = Wal::open(&config.path.with_extension("wal"))?;
        // A log never grown may have just been created: its name must survive a power loss
        // as its contents will (a new database's name was synced as it was created). One that
        // has been grown was synced by the open that created it, before its first record.
        if wal.capacity() == 0 {
            sync_directories(&config.path)?;
        }
        Self::start(&config, db, wal)
    }

    /// Brings `db` up to the last acknowledged write from `wal` and starts the writer.
    pub(crate) fn start(config: &EmbeddedStoreConfig, db: Database, mut wal: Wal) -> Result<Self> {
        // One durable commit: the tables (on a new database), what the log holds beyond the
        // database, and the next round's epoch, durable before any record of it is written.
        let mut txn = db.begin_write()?;
        txn.set_durability(Durability::Immediate)?;
        Tables::upgrade(&txn)?;
        let (revision, compacted, epoch, replayed, live) = {
            let mut tables = Tables::open(&txn)?;
            let meta =
                |key| -> Result<Option<u64>> { Ok(tables.meta.get(key)?.map(|g| g.value())) };
            let mut revision = meta(META_REVISION)?.unwrap_or(0);
            let compacted = meta(META_COMPACTED)?.unwrap_or(0);
            let epoch = meta(META_EPOCH)?;
            let closed_cleanly = epoch.is_some() && meta(META_CLOSED_CLEANLY)? == epoch;
            // After a clean close the round is empty: nothing to replay, nothing stranded.
            let batches = if closed_cleanly {
                Vec::new()
            } else {
                let scan = wal.scan(Revision(revision), epoch)?;
                if !scan.stranded.is_empty() {
                    return Err(Error::Corrupt(crate::repair::damage_message(
                        &config.path,
                        revision,
                        &scan,
                    )));
                }
                if matches!(scan.stop, Stop::Checksum | Stop::Truncated) {
                    warn!(
                        offset = scan.end,
                        "the write-ahead log ends with {}: a write cut short by a crash, \
                         never acknowledged",
                        scan.stop
                    );
                }
                scan.batches
            };
            let mut live = LiveKeys::load(&tables.log, revision)?;
            for event in batches.iter().flatten() {
                tables.replay(&mut live, event)?;
                revision = event.kv.mod_revision.0;
            }
            let epoch = next_epoch(epoch);
            tables.meta.insert(META_REVISION, revision)?;
            tables.meta.insert(META_EPOCH, epoch)?;
            tables.meta.remove(META_CLOSED_CLEANLY)?;
            (revision, compacted, epoch, batches.len(), live)
        };
        txn.commit()?;
        if replayed > 0 {
            info!(batches = replayed, revision, "replayed the write-ahead log");
        }
        wal.reset(epoch);
        info!(
            path = %config.path.display(),
            revision,
            compacted,
            keys = live.len(),
            "embedded store opened"
        );
        let events = Fanout::new(Bounds {
            batches: config.watch_buffer,
            bytes: config.watch_buffer_bytes,
        });
        let shared = Arc::new(Shared {
            db,
            live: RwLock::new(live),
            revision: AtomicU64::new(revision),
            compacted: AtomicU64::new(compacted),
            events,
            announced: Arc::default(),
            #[cfg(test)]
            faults: tests::Faults::default(),
        });
        let (tx, rx) = mpsc::channel(config.max_batch * 4);
        let writer_shared = shared.clone();
        let writer = Writer {
            shared: writer_shared,
            wal,
            max_batch: config.max_batch,
            max_batch_bytes: config.max_batch_bytes,
            checkpoint_bytes: config.checkpoint_bytes,
            checkpoint_interval: config.checkpoint_interval,
            commit_delay: config.commit_delay,
            last_checkpoint: Instant::now(),
            fenced: None,
            epoch,
            compaction: None,
        };
        let thread = std::thread::Builder::new()
            .name("capstan-store-writer".into())
            .spawn(move || writer.run(rx))
            .map_err(|e| Error::io("spawning the writer thread", e))?;
        Ok(Self {
            shared,
            path: config.path.clone(),
            writer: Some(tx),
            thread: Some(thread),
        })
    }

    async fn submit(&self, op: Op) -> Result<Option<KeyValue>> {
        // The request's write is here: the batch it joins need not wait for it.
        WriteNotice::withdraw_current();
        let (reply, rx) = oneshot::channel();
        let writer = self.writer.as_ref().ok_or(Error::Closed)?;
        writer
            .send(Request { op, reply })
            .await
            .map_err(|_| Error::Closed)?;
        rx.await.map_err(|_| Error::Closed)?
    }
}

/// The writer thread's state.
struct Writer {
    shared: Arc<Shared>,
    wal: Wal,
    max_batch: usize,
    max_batch_bytes: u64,
    checkpoint_bytes: u64,
    checkpoint_interval: Duration,
    commit_delay: Duration,
    last_checkpoint: Instant,
    /// Why the writer refuses writes: a batch failed after its log record may have been
    /// written, so it may reappear after a restart and no later batch may reuse its
    /// revisions.
    fenced: Option<String>,
    /// The log round's epoch.
    epoch: u64,
    /// The compaction under way, done a step at a time.
    compaction: Option<Compaction>,
}

/// How a batch failed.
enum BatchError {
    /// Before anything was logged: nothing of it survives.
    Rejected(Error),
    /// After its log record was (perhaps) written: a restart may replay it.
    Indeterminate(Error),
}

/// An error for one writer of a failed batch (I/O errors keep their kind, so a full disk
/// stays visible as such).
fn error_for_writer(err: &Error) -> Error {
    match err {
        Error::Io { what, source } => Error::io(
            what.clone(),
            std::io::Error::new(source.kind(), source.to_string()),
        ),
        Error::Unavailable(why) => Error::Unavailable(why.clone()),
        Error::TooLarge { bytes, limit } => Error::TooLarge {
            bytes: *bytes,
            limit: *limit,
        },
        other => Error::Corrupt(format!("commit failed: {other}")),
    }
}

/// The tables, open in one write transaction.
pub(crate) struct Tables<'t> {
    pub(crate) log: redb::Table<'t, u64, LogEntry>,
    pub(crate) meta: redb::Table<'t, &'static str, u64>,
}

impl<'t> Tables<'t> {
    /// Opens the tables of a database in the current layout (see [`Tables::upgrade`]).
    pub(crate) fn open(txn: &'t redb::WriteTransaction) -> Result<Self> {
        Ok(Self {
            log: txn.open_table(LOG)?,
            meta: txn.open_table(META)?,
        })
    }

    /// Moves a database of an earlier layout to the current one, in `txn`; nothing to do on
    /// a database already there.
    pub(crate) fn upgrade(txn: &redb::WriteTransaction) -> Result<()> {
        Self::upgrade_values_kept_twice(txn)?;
        Self::upgrade_unchained_log(txn)?;
        // The live keys are made from the log at open now.
        txn.delete_table(LIVE)?;
        Ok(())
    }

    /// The layout before `live` kept each current value in `kv` as well as in the log: moved
    /// to the unchained layout ([`UNCHAINED_LOG`]). A current value the log lacks (compacted
    /// away by a version that did not keep live keys' last revisions) is logged at its
    /// revision.
    fn upgrade_values_kept_twice(txn: &redb::WriteTransaction) -> Result<()> {
        let old = KV_WITH_VALUES.name();
        if !txn.list_tables()?.any(|t| t.name() == old) {
            return Ok(());
        }
        {
            let kv = txn.open_table(KV_WITH_VALUES)?;
            let mut log = txn.open_table(UNCHAINED_LOG)?;
            let mut hist = txn.open_table(HIST)?;
            for entry in kv.iter()? {
                let (k, v) = entry?;
                let (key, (create, rev, value)) = (k.value(), v.value());
                if log.get(rev)?.is_none() {
                    log.insert(rev, (key, PUT, create, value))?;
                    hist.insert((key, rev), ())?;
                }
            }
        }
        txn.delete_table(KV_WITH_VALUES)?;
        info!("the embedded store's current values now live in its log only");
        Ok(())
    }

    /// The unchained layout's log entries get their key's previous revision (the entry
    /// before in the log for the same key, unless that one was a delete), and its index of
    /// every key's revisions goes.
    fn upgrade_unchained_log(txn: &redb::WriteTransaction) -> Result<()> {
        if !txn.list_tables()?.any(|t| t.name() == HIST.name()) {
            return Ok(());
        }
        let mut entries = 0u64;
        {
            let old = txn.open_table(UNCHAINED_LOG)?;
            let mut chained = txn.open_table(CHAINED_LOG_STAGED)?;
            // Each key's last revision so far, while it exists.
            let mut last: HashMap<String, u64> = HashMap::new();
            for entry in old.iter()? {
                let (r, v) = entry?;
                let (rev, (key, kind, create, value)) = (r.value(), v.value());
                let prev = if kind == DELETE {
                    last.remove(key)
                } else {
                    last.insert(key.to_string(), rev)
                };
                chained.insert(rev, (key, kind, create, prev.unwrap_or(0), value))?;
                entries += 1;
            }
        }
        txn.delete_table(UNCHAINED_LOG)?;
        txn.delete_table(HIST)?;
        txn.rename_table(CHAINED_LOG_STAGED, LOG)?;
        info!(
            entries,
            "the embedded store's log entries now name the revision each follows"
        );
        Ok(())
    }

    /// Writes one change at the log's end; `prev`: the key's revision before it (0 for a
    /// create).
    fn log(&mut self, event: &Event, prev: u64) -> Result<()> {
        let kv = &event.kv;
        let kind = match event.kind {
            EventKind::Put => PUT,
            EventKind::Delete => DELETE,
            EventKind::Progress => return Ok(()),
        };
        let entry = (
            kv.key.as_str(),
            kind,
            kv.create_revision.0,
            prev,
            kv.value.as_ref(),
        );
        self.log.insert(kv.mod_revision.0, entry)?;
        Ok(())
    }

    /// Writes a change replayed from the write-ahead log, and records it in `live`.
    pub(crate) fn replay(&mut self, live: &mut LiveKeys, event: &Event) -> Result<()> {
        let prev = live.get(&event.kv.key).map_or(0, |(_, rev)| rev);
        self.log(event, prev)?;
        live.record(event);
        Ok(())
    }
}

/// The live keys as a batch sees them: the store's, with the batch's own changes over them.
struct BatchView<'a> {
    live: &'a LiveKeys,
    changed: HashMap<&'a str, Option<(u64, u64)>>,
}

impl<'a> BatchView<'a> {
    /// The create and mod revisions of `key`'s current value.
    fn revisions(&self, key: &str) -> Option<(u64, u64)> {
        match self.changed.get(key) {
            Some(revs) => *revs,
            None => self.live.get(key),
        }
    }

    /// Logs `event` and sees it from here on.
    fn apply(&mut self, t: &mut Tables<'_>, key: &'a str, event: &Event) -> Result<()> {
        let prev = self.revisions(key).map_or(0, |(_, rev)| rev);
        t.log(event, prev)?;
        let now = (event.kind == EventKind::Put)
            .then_some((event.kv.create_revision.0, event.kv.mod_revision.0));
        self.changed.insert(key, now);
        Ok(())
    }
}

impl Writer {
    fn run(mut self, mut rx: mpsc::Receiver<Request>) {
        let mut batch = Vec::with_capacity(self.max_batch);
        loop {
            // With a compaction under way the writer does not wait: it compacts a step
            // between batches, and whenever no write is waiting.
            let first = if self.compaction.is_some() {
                match rx.try_recv() {
                    Ok(req) => Some(req),
                    Err(mpsc::error::TryRecvError::Empty) => None,
                    Err(mpsc::error::TryRecvError::Disconnected) => break,
                }
            } else {
                match rx.blocking_recv() {
                    Some(req) => Some(req),
                    None => break,
                }
            };
            let Some(first) = first else {
                self.compact_step();
                continue;
            };
            let mut bytes = first.op.bytes();
            batch.push(first);
            self.take_waiting(&mut rx, &mut batch, &mut bytes);
            self.await_announced(&mut rx, &mut batch, &mut bytes);
            #[cfg(test)]
            if self.shared.faults.kill_writer.load(Ordering::Acquire) {
                panic!("the writer thread was killed by a test");
            }
            if let Some(reason) = &self.fenced {
                for req in batch.drain(..) {
                    let _ = req.reply.send(Err(Error::Fenced(reason.clone())));
                }
                continue;
            }
            self.take_compactions(&mut batch);
            self.compact_step();
            if batch.is_empty() {
                continue;
            }
            let start = self.shared.revision.load(Ordering::Acquire);
            match self.commit_batch(&batch, start) {
                Ok((results, events, revision)) => {
                    self.shared.revision.store(revision, Ordering::Release);
                    if !events.is_empty() {
                        self.shared.events.publish(events.into());
                    }
                    for (req, result) in batch.drain(..).zip(results) {
                        let _ = req.reply.send(result);
                    }
                }
                Err(BatchError::Rejected(err)) => {
                    error!(%err, "embedded store commit failed; the batch is rejected");
                    for req in batch.drain(..) {
                        let _ = req.reply.send(Err(error_for_writer(&err)));
                    }
                }
                Err(BatchError::Indeterminate(err)) => {
                    error!(
                        %err,
                        "embedded store commit failed after the batch was logged; the store \
                         refuses writes until a restart replays the log"
                    );
                    let reason = err.to_string();
                    for req in batch.drain(..) {
                        let _ = req.reply.send(Err(Error::Indeterminate(reason.clone())));
                    }
                    self.fenced = Some(reason);
                    continue;
                }
            }
            let due =
                self.last_checkpoint.elapsed() >= self.checkpoint_interval && self.wal.len() > 0;
            if due || self.wal.len() >= self.checkpoint_bytes {
                self.checkpoint(false);
            }
        }
        if self.fenced.is_none() {
            self.checkpoint(true);
        }
    }

    /// Adds the operations waiting in `rx` to `batch`, up to the batch limits.
    fn take_waiting(
        &self,
        rx: &mut mpsc::Receiver<Request>,
        batch: &mut Vec<Request>,
        bytes: &mut u64,
    ) {
        while batch.len() < self.max_batch && *bytes < self.max_batch_bytes {
            match rx.try_recv() {
                Ok(req) => {
                    *bytes += req.op.bytes();
                    batch.push(req);
                }
                Err(_) => break,
            }
        }
    }

    /// While writes announced with [`Store::expect_write`] are still being prepared, waits up
    /// to the commit delay for them, adding what arrives to `batch`: under concurrent writes
    /// one sync then serves many of them, where it served the one or two that arrived
    /// during the previous sync.
    fn await_announced(
        &self,
        rx: &mut mpsc::Receiver<Request>,
        batch: &mut Vec<Request>,
        bytes: &mut u64,
    ) {
        /// How often the queue is looked at while waiting.
        const STEP: Duration = Duration::from_micros(100);
        let announced = || self.shared.announced.load(Ordering::Acquire) > 0;
        if !announced() {
            return;
        }
        let deadline = Instant::now() + self.commit_delay;
        // Writes keep coming while some are announced, or while the last look found some.
        let mut arriving = true;
        while batch.len() < self.max_batch && *bytes < self.max_batch_bytes && arriving {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            std::thread::sleep(left.min(STEP));
            let before = batch.len();
            self.take_waiting(rx, batch, bytes);
            arriving = announced() || batch.len() > before;
        }
    }

    /// Takes the compactions out of `batch`: a target beyond the current revision is refused,
    /// one already reached answered, the others joined to the compaction under way (answered
    /// when it reaches them).
    fn take_compactions(&mut self, batch: &mut Vec<Request>) {
        let current = self.shared.revision.load(Ordering::Acquire);
        let compacted = self.shared.compacted.load(Ordering::Acquire);
        let mut i = 0;
        while i < batch.len() {
            let Op::Compact { revision } = batch[i].op else {
                i += 1;
                continue;
            };
            let req = batch.remove(i);
            if revision.0 > current {
                let _ = req.reply.send(Err(Error::FutureRevision {
                    requested: revision.0,
                    current,
                }));
            } else if revision.0 <= compacted {
                let _ = req.reply.send(Ok(None));
            } else {
                let pending = self.compaction.get_or_insert_with(|| Compaction {
                    target: revision.0,
                    waiting: Vec::new(),
                });
                pending.target = pending.target.max(revision.0);
                pending.waiting.push(req.reply);
            }
        }
    }

    /// Compacts at most [`COMPACTION_STEP`] revisions of the compaction under way, in a
    /// transaction of its own (not synced: a compaction lost in a crash is done again), so
    /// that writes wait for one step at most instead of the whole compaction.
    fn compact_step(&mut self) {
        let Some(pending) = &mut self.compaction else {
            return;
        };
        if let Some(reason) = &self.fenced {
            for reply in pending.waiting.drain(..) {
                let _ = reply.send(Err(Error::Fenced(reason.clone())));
            }
            self.compaction = None;
            return;
        }
        let from = self.shared.compacted.load(Ordering::Acquire);
        let to = pending.target.min(from + COMPACTION_STEP);
        let result = (|| -> Result<()> {
            let mut txn = self.shared.db.begin_write()?;
            txn.set_durability(Durability::None)?;
            {
                let mut t = Tables::open(&txn)?;
                compact_range(&mut t.log, from, to)?;
                t.meta.insert(META_COMPACTED, to)?;
            }
            txn.commit()?;
            Ok(())
        })();
        match result {
            Ok(()) => {
                self.shared.compacted.store(to, Ordering::Release);
                if to >= pending.target {
                    for reply in pending.waiting.drain(..) {
                        let _ = reply.send(Ok(None));
                    }
                    self.compaction = None;
                }
            }
            Err(err) => {
                error!(%err, "compaction failed");
                for reply in pending.waiting.drain(..) {
                    let _ = reply.send(Err(error_for_writer(&err)));
                }
                self.compaction = None;
            }
        }
    }

    /// Makes every commit so far durable in the database, so the log can start over under
    /// the next epoch; `closing`: the last one, and the next round stays empty.
    fn checkpoint(&mut self, closing: bool) {
        let next = next_epoch(Some(self.epoch));
        let result = (|| -> Result<()> {
            let mut txn = self.shared.db.begin_write()?;
            txn.set_durability(Durability::Immediate)?;
            let mut meta = txn.open_table(META)?;
            meta.insert(META_EPOCH, next)?;
            if closing {
                meta.insert(META_CLOSED_CLEANLY, next)?;
            }
            drop(meta);
            txn.commit()?;
            Ok(())
        })();
        match result {
            Ok(()) => {
                self.epoch = next;
                self.wal.reset(next);
                self.last_checkpoint = Instant::now();
                // Everything is in the database now: space a long round took is given back.
                if let Err(err) = self
                    .wal
                    .shrink(self.checkpoint_bytes + self.max_batch_bytes)
                {
                    error!(%err, "giving back the write-ahead log's space failed");
                }
            }
            // An I/O error leaves redb unusable until it is reopened (every later write would
            // fail): refuse writes as after any failed commit. The log holds every
            // acknowledged write for the restart.
            Err(err @ (Error::Io { .. } | Error::Unavailable(_))) => {
                error!(
                    %err,
                    "checkpoint failed; the store refuses writes until a restart replays the log"
                );
                self.fenced = Some(format!("checkpoint failed: {err}"));
            }
            // The log keeps growing and stays authoritative; try again after the next batch.
            Err(err) => error!(%err, "checkpoint failed"),
        }
    }

    fn commit_batch(
        &mut self,
        batch: &[Request],
        start: u64,
    ) -> std::result::Result<BatchOutcome, BatchError> {
        let (txn, results, events, rev) = self
            .apply_batch(batch, start)
            .map_err(BatchError::Rejected)?;
        if events.is_empty() {
            // Nothing logged: a failed commit leaves nothing behind.
            txn.commit()
                .map_err(|e| BatchError::Rejected(Error::from(e)))?;
        } else {
            // Nothing is written until the record is ready and has room.
            let record = self.wal.prepare(&events).map_err(BatchError::Rejected)?;
            // Durable before anyone is answered; from here on a failure may be replayed.
            self.wal.write(&record).map_err(BatchError::Indeterminate)?;
            #[cfg(test)]
            if self
                .shared
                .faults
                .fail_after_log
                .swap(false, Ordering::AcqRel)
            {
                return Err(BatchError::Indeterminate(Error::io(
                    "committing the embedded database",
                    std::io::Error::from(std::io::ErrorKind::StorageFull),
                )));
            }
            txn.commit()
                .map_err(|e| BatchError::Indeterminate(Error::from(e)))?;
            self.shared.record(&events);
        }
        Ok((results, events, rev))
    }

    /// Applies `batch` in a new write transaction, returned uncommitted with what each
    /// request gets, the batch's events, and the revision and compaction after it.
    fn apply_batch(&mut self, batch: &[Request], start: u64) -> Result<AppliedBatch> {
        let shared = &self.shared;
        let mut txn = shared.db.begin_write()?;
        // The log makes batches durable.
        txn.set_durability(Durability::None)?;
        let mut results = Vec::with_capacity(batch.len());
        let mut events = Vec::new();
        let mut rev = start;
        {
            let mut t = Tables::open(&txn)?;
            let live = shared.live();
            let mut view = BatchView {
                live: &live,
                changed: HashMap::new(),
            };
            for req in batch {
                let bytes = req.op.bytes();
                if bytes > self.max_batch_bytes {
                    results.push(Err(Error::TooLarge {
                        bytes,
                        limit: self.max_batch_bytes,
                    }));
                    continue;
                }
                let event = match &req.op {
                    Op::Create { key, value } => match view.revisions(key) {
                        Some(_) => Err(Error::AlreadyExists { key: key.clone() }),
                        None => Ok(Event {
                            kind: EventKind::Put,
                            kv: KeyValue {
                                key: key.clone(),
                                value: value.clone(),
                                create_revision: Revision(rev + 1),
                                mod_revision: Revision(rev + 1),
                            },
                        }),
                    },
                    Op::Update {
                        key,
                        value,
                        expected,
                    } => match view.revisions(key) {
                        None => Err(Error::NotFound { key: key.clone() }),
                        Some((create, current)) if current != expected.0 => Err(Error::Conflict {
                            key: key.clone(),
                            current: Box::new(current_value(&t.log, key, create, current)?),
                        }),
                        Some((create, _)) => Ok(Event {
                            kind: EventKind::Put,
                            kv: KeyValue {
                                key: key.clone(),
                                value: value.clone(),
                                create_revision: Revision(create),
                                mod_revision: Revision(rev + 1),
                            },
                        }),
                    },
                    Op::Delete { key, expected } => match view
                        .revisions(key)
                        .map(|(create, rev)| current_value(&t.log, key, create, rev))
                        .transpose()?
                    {
                        None => Err(Error::NotFound { key: key.clone() }),
                        Some(cur) if expected.is_some_and(|e| e != cur.mod_revision) => {
                            Err(Error::Conflict {
                                key: key.clone(),
                                current: Box::new(cur),
                            })
                        }
                        Some(cur) => Ok(Event {
                            kind: EventKind::Delete,
                            kv: KeyValue {
                                mod_revision: Revision(rev + 1),
                                ..cur
                            },
                        }),
                    },
                    // Taken out of the batch before it is applied.
                    Op::Compact { .. } => {
                        results.push(Ok(None));
                        continue;
                    }
                    Op::Ping => {
                        results.push(Ok(None));
                        continue;
                    }
                };
                results.push(match event {
                    Ok(event) => {
                        view.apply(&mut t, req.op.key(), &event)?;
                        rev += 1;
                        let kv = event.kv.clone();
                        events.push(event);
                        Ok(Some(kv))
                    }
                    Err(err) => Err(err),
                });
            }
            if rev != start {
                t.meta.insert(META_REVISION, rev)?;
            }
        }
        Ok((txn, results, events, rev))
    }
}

/// The epoch of the next round of the log: random, so that no record of another round, nor
/// bytes a client stored that imitate a record, can pass for one of the new round's.
pub(crate) fn next_epoch(current: Option<u64>) -> u64 {
    use std::hash::{BuildHasher, RandomState};
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let mut salt = 0u64;
    loop {
        let epoch = RandomState::new().hash_one((current, nanos, salt));
        if epoch != 0 && Some(epoch) != current {
            return epoch;
        }
        salt += 1;
    }
}

/// Creates an empty database at `path` atomically: made and synced under another name, then
/// renamed. A crash while redb writes a new file's header would otherwise leave a file that
/// is not a database, and the server would never start again.
fn create_database(path: &Path) -> Result<()> {
    let mut fresh = path.as_os_str().to_owned();
    fresh.push(".new");
    let fresh = PathBuf::from(fresh);
    let made = (|| -> Result<()> {
        drop(Database::builder().create(&fresh)?);
        std::fs::File::open(&fresh)
            .and_then(|f| f.sync_all())
            .map_err(|e| Error::io("syncing the new database", e))?;
        std::fs::rename(&fresh, path).map_err(|e| Error::io("naming the new database", e))
    })();
    if made.is_err() {
        let _ = std::fs::remove_file(&fresh);
    }
    made?;
    sync_directories(path)
}

/// Syncs the directory holding `file` and the one above it (which holds the first, when it
/// was created with the data directory).
fn sync_directories(file: &Path) -> Result<()> {
    let Some(dir) = file.parent().filter(|d| !d.as_os_str().is_empty()) else {
        return Ok(());
    };
    for dir in [
        Some(dir),
        dir.parent().filter(|d| !d.as_os_str().is_empty()),
    ]
    .into_iter()
    .flatten()
    {
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(|e| Error::io(format!("syncing the directory {}", dir.display()), e))?;
    }
    Ok(())
}

type BatchOutcome = (Vec<Result<Option<KeyValue>>>, Vec<Event>, u64);
type AppliedBatch = (
    redb::WriteTransaction,
    Vec<Result<Option<KeyValue>>>,
    Vec<Event>,
    u64,
);

/// Revisions one compaction step covers at most.
const COMPACTION_STEP: u64 = 1000;

/// A compaction under way: the revision it goes to, and who waits for it.
struct Compaction {
    target: u64,
    waiting: Vec<oneshot::Sender<Result<Option<KeyValue>>>>,
}

/// Removes history entries in `(from, to]` that no read after `to` needs: the entry each
/// change there follows (the key's previous revision, before `to`), and each delete there
/// with it. So a key's last revision at or before `to` stays unless it deleted the key, and
/// a live key's last revision, which holds its current value, is never removed.
pub(crate) fn compact_range(
    log: &mut redb::Table<u64, LogEntry>,
    from: u64,
    to: u64,
) -> Result<()> {
    let mut gone = Vec::new();
    for entry in log.range(from + 1..=to)? {
        let (r, v) = entry?;
        let (_, kind, _, prev, _) = v.value();
        if prev != 0 {
            gone.push(prev);
        }
        if kind == DELETE {
            gone.push(r.value());
        }
    }
    for rev in gone {
        log.remove(rev)?;
    }
    Ok(())
}

/// The current value of `key`, last written at `rev`: the log's entry there.
fn current_value(
    log: &impl ReadableTable<u64, LogEntry>,
    key: impl Into<String>,
    create: u64,
    rev: u64,
) -> Result<KeyValue> {
    let key = key.into();
    let entry = log.get(rev)?.ok_or_else(|| missing_entry(&key, rev))?;
    Ok(KeyValue {
        key,
        value: Bytes::copy_from_slice(entry.value().4),
        create_revision: Revision(create),
        mod_revision: Revision(rev),
    })
}

fn missing_entry(key: &str, rev: u64) -> Error {
    Error::Corrupt(format!(
        "the log has no entry at revision {rev}, where {key} was written"
    ))
}

/// The value `key` had at revision `at`, following its chain back from its change at `rev`;
/// `None` when it did not exist then.
fn value_at(
    log: &impl ReadableTable<u64, LogEntry>,
    key: &str,
    mut rev: u64,
    at: u64,
) -> Result<Option<KeyValue>> {
    while rev != 0 {
        let entry = log.get(rev)?.ok_or_else(|| missing_entry(key, rev))?;
        let (_, kind, create, prev, value) = entry.value();
        if rev <= at {
            return Ok((kind == PUT).then(|| KeyValue {
                key: key.to_string(),
                value: Bytes::copy_from_slice(value),
                create_revision: Revision(create),
                mod_revision: Revision(rev),
            }));
        }
        rev = prev;
    }
    Ok(None)
}

fn read_revision(meta: &impl ReadableTable<&'static str, u64>) -> Result<(u64, u64)> {
    let rev = meta.get(META_REVISION)?.map(|g| g.value()).unwrap_or(0);
    let compacted = meta.get(META_COMPACTED)?.map(|g| g.value()).unwrap_or(0);
    Ok((rev, compacted))
}

impl EmbeddedStore {
    fn list_current(&self, req: &ListRequest<'_>) -> Result<ListResponse> {
        let at = req.revision.map(|r| r.0);
        // The keys, and a snapshot holding their values, as of one revision.
        let (txn, revision, keys) = {
            let live = self.shared.live();
            if let Some(at) = at
                && at > live.revision
            {
                return Err(Error::FutureRevision {
                    requested: at,
                    current: live.revision,
                });
            }
            let txn = self.shared.db.begin_read()?;
            let past = at.is_some_and(|at| at != live.revision);
            // A page takes one key past its limit, to tell whether more follow; a read at an
            // older revision takes them all (some did not exist then).
            let take = match req.limit {
                0 => usize::MAX,
                _ if past => usize::MAX,
                limit => limit + 1,
            };
            let keys: Vec<_> = live
                .under(req.prefix, req.start)
                .take(take)
                .map(|(key, create, rev)| (key.to_string(), create, rev))
                .collect();
            (txn, live.revision, keys)
        };
        let log = txn.open_table(LOG)?;
        if let Some(at) = at
            && at != revision
        {
            let (_, compacted) = read_revision(&txn.open_table(META)?)?;
            if at < compacted {
                return Err(Error::Compacted {
                    requested: at,
                    compacted,
                });
            }
            return list_at(req, at, revision, &log, keys);
        }
        let more = req.limit > 0 && keys.len() > req.limit;
        let items = keys
            .into_iter()
            .take(if more { req.limit } else { usize::MAX })
            .map(|(key, create, rev)| current_value(&log, key, create, rev))
            .collect::<Result<_>>()?;
        Ok(ListResponse {
            items,
            revision: Revision(revision),
            more,
        })
    }
}

/// A read at `at`, before `current`: `live`, the keys under the prefix from the request's
/// start on as of `current`, and `log` a snapshot holding every revision up to it.
fn list_at(
    req: &ListRequest<'_>,
    at: u64,
    current: u64,
    log: &redb::ReadOnlyTable<u64, LogEntry>,
    live: Vec<(String, u64, u64)>,
) -> Result<ListResponse> {
    let start = req.start.filter(|s| *s > req.prefix).unwrap_or(req.prefix);
    let wanted = |key: &str| key.starts_with(req.prefix) && key >= start;
    // The keys deleted since `at` that existed then (at most one of a key's deletes since
    // follows a value from before).
    let mut deleted_since = BTreeMap::new();
    for entry in log.range(at + 1..=current)? {
        let (r, v) = entry?;
        let (key, kind, ..) = v.value();
        if kind == DELETE
            && wanted(key)
            && let Some(kv) = value_at(log, key, r.value(), at)?
        {
            deleted_since.insert(kv.key.clone(), kv);
        }
    }
    let mut deleted_since = deleted_since.into_values().peekable();
    // Merged in key order with the keys that exist now, at their value then.
    let full = |items: &Vec<KeyValue>| req.limit > 0 && items.len() == req.limit;
    let mut items = Vec::new();
    let mut more = false;
    'keys: for (key, create, rev) in live {
        while let Some(gone) = deleted_since.next_if(|kv| kv.key < key) {
            if full(&items) {
                more = true;
                break 'keys;
            }
            items.push(gone);
        }
        let then = if rev <= at {
            Some(current_value(log, key, create, rev)?)
        } else {
            value_at(log, &key, rev, at)?
        };
        if let Some(kv) = then {
            if full(&items) {
                more = true;
                break;
            }
            items.push(kv);
        }
    }
    if !more {
        for gone in deleted_since {
            if full(&items) {
                more = true;
                break;
            }
            items.push(gone);
        }
    }
    Ok(ListResponse {
        items,
        revision: Revision(at),
        more,
    })
}

impl EmbeddedStore {
    pub(crate) fn history_since(&self, prefix: &str, from: u64) -> Result<(Vec<Event>, u64)> {
        let txn = self.shared.db.begin_read()?;
        let (revision, compacted) = read_revision(&txn.open_table(META)?)?;
        if from < compacted {
            return Err(Error::Compacted {
                requested: from,
                compacted,
            });
        }
        let log = txn.open_table(LOG)?;
        let mut events = Vec::new();
        for entry in log.range(from + 1..)? {
            let (r, v) = entry?;
            let (key, kind, c, _, value) = v.value();
            if key.starts_with(prefix) {
                events.push(Event {
                    kind: if kind == PUT {
                        EventKind::Put
                    } else {
                        EventKind::Delete
                    },
                    kv: KeyValue {
                        key: key.to_string(),
                        value: Bytes::copy_from_slice(value),
                        create_revision: Revision(c),
                        mod_revision: Revision(r.value()),
                    },
                });
            }
        }
        Ok((events, revision.max(from)))
    }
}

fn map_write(result: Result<Option<KeyValue>>) -> Result<KeyValue> {
    result?.ok_or_else(|| Error::Corrupt("the writer returned no value".into()))
}

struct WatchState {
    pending: VecDeque<Event>,
    live: Subscription,
    prefix: String,
    last: u64,
    done: bool,
}

#[async_trait]
impl Store for EmbeddedStore {
    fn expect_write(&self) -> WriteNotice {
        WriteNotice::counted(self.shared.announced.clone())
    }

    async fn get(&self, key: &str) -> Result<(Option<KeyValue>, Revision)> {
        let (txn, found, revision) = {
            let live = self.shared.live();
            let txn = self.shared.db.begin_read()?;
            (txn, live.get(key), live.revision)
        };
        let found = match found {
            Some((create, rev)) => Some(current_value(&txn.open_table(LOG)?, key, create, rev)?),
            None => None,
        };
        Ok((found, Revision(revision)))
    }

    async fn list(&self, request: ListRequest<'_>) -> Result<ListResponse> {
        self.list_current(&request)
    }

    async fn count(&self, prefix: &str) -> Result<u64> {
        Ok(self.shared.live().under(prefix, None).count() as u64)
    }

    async fn size_bytes(&self) -> Result<Option<u64>> {
        let len = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        Ok(Some(
            len(&self.path) + len(&self.path.with_extension("wal")),
        ))
    }

    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue> {
        map_write(
            self.submit(Op::Create {
                key: key.to_string(),
                value,
            })
            .await,
        )
    }

    async fn update(&self, key: &str, value: Bytes, expected: Revision) -> Result<KeyValue> {
        map_write(
            self.submit(Op::Update {
                key: key.to_string(),
                value,
                expected,
            })
            .await,
        )
    }

    async fn delete(&self, key: &str, expected: Option<Revision>) -> Result<KeyValue> {
        map_write(
            self.submit(Op::Delete {
                key: key.to_string(),
                expected,
            })
            .await,
        )
    }

    async fn current_revision(&self) -> Result<Revision> {
        Ok(Revision(self.shared.revision.load(Ordering::Acquire)))
    }

    fn knows_current_revision(&self) -> bool {
        true
    }

    /// A no-op through the writer thread and a write transaction: fails when the thread is
    /// gone or the store has stopped accepting writes.
    async fn ping(&self) -> Result<()> {
        self.submit(Op::Ping).await.map(|_| ())
    }

    async fn watch(&self, prefix: &str, from: Revision) -> Result<WatchStream> {
        // Subscribe before reading history so that no commit falls between the two.
        let live = self.shared.events.subscribe();
        let (history, last) = self.history_since(prefix, from.0)?;
        let newest = history.last().map(|e| e.kv.mod_revision.0);
        let last = newest.unwrap_or(last).max(last);
        let mut pending: VecDeque<Event> = history.into();
        // Writes elsewhere committed before the watch began move it on at once: without
        // this, a quiet prefix would stay behind until the next commit anywhere.
        if last > newest.unwrap_or(from.0) {
            pending.push_back(Event::progress(Revision(last)));
        }
        let state = WatchState {
            pending,
            live,
            prefix: prefix.to_string(),
            last,
            done: false,
        };
        let stream = futures_util::stream::unfold(state, |mut st| async move {
            loop {
                if st.done {
                    return None;
                }
                if let Some(ev) = st.pending.pop_front() {
                    return Some((Ok(ev), st));
                }
                match st.live.recv().await {
                    Ok(batch) => {
                        let before = st.pending.len();
                        for ev in batch.iter() {
                            if ev.kv.mod_revision.0 > st.last && ev.kv.key.starts_with(&st.prefix) {
                                st.pending.push_back(ev.clone());
                            }
                        }
                        if let Some(ev) = batch.last() {
                            // A batch ending with writes elsewhere still moves the watch to
                            // its last revision: after its own events, a progress report
                            // (otherwise a cache would stay behind until the next commit).
                            let last = ev.kv.mod_revision.0;
                            let reported = if st.pending.len() > before {
                                st.pending.back().map_or(st.last, |e| e.kv.mod_revision.0)
                            } else {
                                st.last
                            };
                            if last > reported {
                                st.pending.push_back(Event::progress(Revision(last)));
                            }
                            st.last = st.last.max(last);
                        }
                    }
                    Err(Ended::Lagged(missed)) => {
                        st.done = true;
                        return Some((Err(Error::WatchLagged { missed }), st));
                    }
                    Err(Ended::Closed) => return None,
                }
            }
        });
        Ok(Box::pin(stream))
    }

    async fn compact(&self, revision: Revision) -> Result<()> {
        self.submit(Op::Compact { revision }).await.map(|_| ())
    }

    async fn compacted_revision(&self) -> Result<Revision> {
        Ok(Revision(self.shared.compacted.load(Ordering::Acquire)))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use std::os::unix::fs::FileExt;

    use super::*;
    use crate::conformance;
    use crate::repair::{check, salvage};

    /// Failures a test can inject into the writer.
    #[derive(Default)]
    pub(super) struct Faults {
        /// The next batch's commit fails after its log record was synced.
        pub fail_after_log: AtomicBool,
        /// The writer thread panics at its next batch.
        pub kill_writer: AtomicBool,
    }

    fn value(s: &'static str) -> Bytes {
        Bytes::from_static(s.as_bytes())
    }

    /// A batch waits for writes announced with `expect_write` (up to the commit delay), and
    /// only for them: a lone write, or one whose own notice is out, is answered at once
    /// whatever the delay.
    #[tokio::test]
    async fn a_batch_waits_for_announced_writes_only() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = EmbeddedStoreConfig::new(dir.path().join("db"));
        config.commit_delay = Duration::from_secs(120);
        let store = Arc::new(EmbeddedStore::open(config).unwrap());
        let soon = Duration::from_secs(30);
        tokio::time::timeout(soon, store.create("/k/alone", value("0")))
            .await
            .expect("a write with nothing announced is not held")
            .unwrap();
        // A request's own notice is withdrawn as its write is handed over.
        let own = Arc::new(store.expect_write());
        tokio::time::timeout(soon, own.scope(store.create("/k/own", value("o"))))
            .await
            .expect("a request's own notice does not hold its write")
            .unwrap();

        let notice = store.expect_write();
        let first = tokio::spawn({
            let store = store.clone();
            async move { store.create("/k/first", value("1")).await }
        });
        tokio::time::sleep(Duration::from_millis(300)).await;
        assert!(
            !first.is_finished(),
            "held while another write is announced"
        );
        notice.withdraw();
        let second = tokio::time::timeout(soon, store.create("/k/second", value("2")))
            .await
            .expect("the announced write is not held once it is handed over")
            .unwrap();
        let first = tokio::time::timeout(soon, first)
            .await
            .expect("the held write is answered once the announced one came")
            .unwrap()
            .unwrap();
        assert!(first.mod_revision < second.mod_revision);

        // A notice that never turns into a write holds a batch no longer than the delay.
        drop(store);
        let mut config = EmbeddedStoreConfig::new(dir.path().join("db"));
        config.commit_delay = Duration::from_millis(200);
        let store = EmbeddedStore::open(config).unwrap();
        let _never = store.expect_write();
        tokio::time::timeout(soon, store.create("/k/third", value("3")))
            .await
            .expect("held no longer than the commit delay")
            .unwrap();
    }

    /// A commit that fails once its batch is logged has an unknown outcome: the writer
    /// says so and refuses every later write (whose revisions would collide with the
    /// logged batch on replay), health checks fail, reads go on; a restart replays the log
    /// and writes are accepted again. No acknowledged write is lost on the way.
    #[tokio::test]
    async fn a_commit_failing_after_its_log_record_fences_the_store() {
        let dir = tempfile::tempdir().unwrap();
        let store = open(&dir);
        store.create("/k/acked", value("1")).await.unwrap();
        store.ping().await.unwrap();
        store
            .shared
            .faults
            .fail_after_log
            .store(true, Ordering::Release);
        let err = store.create("/k/unknown", value("2")).await.unwrap_err();
        assert!(matches!(err, Error::Indeterminate(_)), "{err}");
        let err = store.create("/k/later", value("3")).await.unwrap_err();
        assert!(matches!(err, Error::Fenced(_)), "{err}");
        assert!(matches!(store.ping().await, Err(Error::Fenced(_))));
        assert!(
            store.get("/k/acked").await.unwrap().0.is_some(),
            "reads go on"
        );
        drop(store);

        let store = open(&dir);
        store.ping().await.unwrap();
        assert!(store.get("/k/acked").await.unwrap().0.is_some());
        assert!(store.get("/k/later").await.unwrap().0.is_none());
        // The logged batch may come back; a new write follows whatever is there.
        let replayed = store.get("/k/unknown").await.unwrap().0;
        let next = store.create("/k/next", value("4")).await.unwrap();
        let expected = if replayed.is_some() { 3 } else { 2 };
        assert_eq!(next.mod_revision, Revision(expected));
    }

    /// A compaction is done a step at a time: a write made while a long compaction runs is
    /// answered before the compaction ends, and the compaction's result is the whole one.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn writes_go_on_while_a_long_compaction_runs() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(open(&dir));
        let revisions = 20 * COMPACTION_STEP;
        for chunk in 0..revisions / 100 {
            let writes = (0..100).map(|i| {
                let store = store.clone();
                async move {
                    // A hundred keys, rewritten over and over: history to compact away.
                    let key = format!("/k/{i}");
                    let value = Bytes::from(format!("{chunk}-{i}"));
                    match store.get(&key).await.unwrap().0 {
                        Some(kv) => store.update(&key, value, kv.mod_revision).await,
                        None => store.create(&key, value).await,
                    }
                    .unwrap();
                }
            });
            futures_util::future::join_all(writes).await;
        }
        let target = store.current_revision().await.unwrap();
        let compaction = tokio::spawn({
            let store = store.clone();
            async move { store.compact(target).await }
        });
        while store.compacted_revision().await.unwrap().0 == 0 {
            tokio::task::yield_now().await;
        }
        store.create("/k/during", value("x")).await.unwrap();
        let compacted = store.compacted_revision().await.unwrap();
        assert!(
            compacted < target,
            "the write waited for the whole compaction ({compacted:?} of {target:?})"
        );
        compaction.await.unwrap().unwrap();
        assert_eq!(store.compacted_revision().await.unwrap(), target);
        let old = store
            .list(ListRequest {
                prefix: "/k/",
                revision: Some(Revision(target.0 - 1)),
                ..Default::default()
            })
            .await;
        assert!(matches!(old, Err(Error::Compacted { .. })), "{old:?}");
    }

    #[tokio::test]
    async fn a_dead_writer_thread_fails_the_ping() {
        let dir = tempfile::tempdir().unwrap();
        let store = open(&dir);
        store.ping().await.unwrap();
        store
            .shared
            .faults
            .kill_writer
            .store(true, Ordering::Release);
        assert!(matches!(store.ping().await, Err(Error::Closed)));
        assert!(matches!(
            store.create("/k/a", value("1")).await,
            Err(Error::Closed)
        ));
        assert!(matches!(store.ping().await, Err(Error::Closed)));
    }

    fn open(dir: &tempfile::TempDir) -> EmbeddedStore {
        EmbeddedStore::open(EmbeddedStoreConfig::new(dir.path().join("db.redb"))).unwrap()
    }

    /// Writes `/k/1`..=`/k/{count}` one batch each, then takes an image of the files as a
    /// crash would leave them (the database never closed, so at its last durable commit when
    /// opened) into `path`; returns the offsets of the writes' log records.
    async fn crash_after_writes(path: &Path, count: u64) -> Vec<u64> {
        let running = tempfile::tempdir().unwrap();
        let live = running.path().join("db.redb");
        let mut config = EmbeddedStoreConfig::new(&live);
        config.checkpoint_interval = Duration::from_secs(3600);
        let store = EmbeddedStore::open(config).unwrap();
        for i in 1..=count {
            store
                .create(&format!("/k/{i}"), Bytes::from(format!("v{i}")))
                .await
                .unwrap();
        }
        store
            .shared
            .faults
            .kill_writer
            .store(true, Ordering::Release);
        assert!(store.ping().await.is_err());
        // The database is never closed: closing it would make its last commits durable.
        std::mem::forget(store.shared.clone());
        drop(store);
        std::fs::copy(&live, path).unwrap();
        std::fs::copy(live.with_extension("wal"), path.with_extension("wal")).unwrap();
        let log = std::fs::read(path.with_extension("wal")).unwrap();
        let mut offsets = Vec::new();
        let mut at = 0usize;
        while log[at..at + 4] == crate::wal::MAGIC.to_le_bytes() {
            offsets.push(at as u64);
            at += 12 + u32::from_le_bytes(log[at + 4..at + 8].try_into().unwrap()) as usize;
        }
        assert_eq!(offsets.len() as u64, count);
        offsets
    }

    /// A record damaged in the middle of the log is not taken for its end: the store refuses
    /// to start and says why; `check` reports what is lost and what follows; `salvage` keeps
    /// every intact record, never reuses a revision, and compacts history so that no client
    /// resumes across the hole.
    #[tokio::test]
    async fn damage_in_the_middle_of_the_log_stops_the_start_until_salvaged() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.redb");
        let offsets = crash_after_writes(&path, 6).await;
        let wal = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(path.with_extension("wal"))
            .unwrap();
        // A bit flipped in the value of the third record.
        let mut byte = [0u8];
        let at = offsets[3] - 1;
        FileExt::read_exact_at(&wal, &mut byte, at).unwrap();
        FileExt::write_all_at(&wal, &[byte[0] ^ 1], at).unwrap();

        let err = EmbeddedStore::open(EmbeddedStoreConfig::new(&path))
            .err()
            .expect("refused");
        let message = err.to_string();
        assert!(matches!(err, Error::Corrupt(_)), "{message}");
        assert!(
            message.contains(&format!("damaged at offset {}", offsets[2]))
                && message.contains("revisions 4 to 6")
                && message.contains("capstan-storeutl"),
            "{message}"
        );
        let report = check(&path).unwrap();
        let damage = report.damage.clone().expect("damage reported");
        assert_eq!(damage.missing, [(3, 3)]);
        assert_eq!(damage.stranded_keys, ["/k/4", "/k/5", "/k/6"]);
        assert!(!report.healthy());
        // Checking changed nothing: the start still refuses.
        assert!(EmbeddedStore::open(EmbeddedStoreConfig::new(&path)).is_err());

        let salvaged = salvage(&path).unwrap();
        assert_eq!(salvaged.revision, 6);
        assert_eq!(salvaged.backups.len(), 2);
        for backup in &salvaged.backups {
            assert!(backup.exists(), "{}", backup.display());
        }
        assert!(check(&path).unwrap().healthy());
        let store = EmbeddedStore::open(EmbeddedStoreConfig::new(&path)).unwrap();
        for (key, present) in [
            ("/k/1", true),
            ("/k/2", true),
            ("/k/3", false),
            ("/k/6", true),
        ] {
            assert_eq!(store.get(key).await.unwrap().0.is_some(), present, "{key}");
        }
        let next = store.create("/k/7", value("v7")).await.unwrap();
        assert_eq!(next.mod_revision, Revision(7), "no revision is reused");
        let old = store.watch("/k/", Revision(4)).await;
        assert!(
            matches!(old, Err(Error::Compacted { .. })),
            "history was compacted"
        );
        drop(store);
        // Salvaging a healthy store does nothing.
        assert!(salvage(&path).unwrap().backups.is_empty());
    }

    /// A log file on a disk with room for `room` bytes.
    struct SmallDisk {
        file: std::fs::File,
        room: u64,
    }

    impl crate::wal::LogFile for SmallDisk {
        fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
            FileExt::read_exact_at(&self.file, buf, offset)
        }
        fn write_all_at(&self, buf: &[u8], offset: u64) -> std::io::Result<()> {
            let room = self.room.saturating_sub(offset) as usize;
            FileExt::write_all_at(&self.file, &buf[..buf.len().min(room)], offset)?;
            if buf.len() > room {
                return Err(std::io::ErrorKind::StorageFull.into());
            }
            Ok(())
        }
        fn sync_data(&self) -> std::io::Result<()> {
            self.file.sync_data()
        }
        fn len(&self) -> std::io::Result<u64> {
            Ok(self.file.metadata()?.len())
        }
        fn set_len(&self, len: u64) -> std::io::Result<()> {
            self.file.set_len(len)
        }
    }

    /// A full disk met while making room for a record refuses that batch only: nothing of it
    /// was written, so the store goes on (it used to fence itself until a restart), the file
    /// gives the failed growth back, and smaller writes that fit are accepted.
    #[tokio::test]
    async fn a_full_disk_before_the_record_is_written_refuses_the_write_only() {
        let dir = tempfile::tempdir().unwrap();
        let config = EmbeddedStoreConfig::new(dir.path().join("db.redb"));
        let db = Database::create(&config.path).unwrap();
        let log = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(dir.path().join("db.wal"))
            .unwrap();
        let disk = SmallDisk {
            file: log.try_clone().unwrap(),
            room: 6 << 20,
        };
        let store =
            EmbeddedStore::start(&config, db, Wal::with_file(Box::new(disk)).unwrap()).unwrap();
        store
            .create("/k/a", Bytes::from(vec![b'a'; 3 << 20]))
            .await
            .unwrap();
        let err = store
            .create("/k/b", Bytes::from(vec![b'b'; 2 << 20]))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, Error::Io { source, .. } if source.kind() == std::io::ErrorKind::StorageFull),
            "{err}"
        );
        assert_eq!(log.metadata().unwrap().len(), 4 << 20, "growth given back");
        store.ping().await.unwrap();
        store.create("/k/c", value("small")).await.unwrap();
        assert!(store.get("/k/b").await.unwrap().0.is_none());
    }

    /// After a checkpoint the log gives back space a long round took; a write larger than
    /// the batch limit is refused alone.
    #[tokio::test]
    async fn the_log_shrinks_after_a_checkpoint_and_huge_writes_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.redb");
        let mut config = EmbeddedStoreConfig::new(&path);
        config.checkpoint_interval = Duration::from_secs(3600);
        config.checkpoint_bytes = 1 << 30;
        let store = EmbeddedStore::open(config.clone()).unwrap();
        for i in 0..12 {
            let key = format!("/k/{i}");
            store
                .create(&key, Bytes::from(vec![b'x'; 1 << 20]))
                .await
                .unwrap();
        }
        drop(store);
        let wal = path.with_extension("wal");
        assert!(std::fs::metadata(&wal).unwrap().len() >= 12 << 20);

        config.checkpoint_interval = Duration::ZERO;
        config.checkpoint_bytes = 1 << 20;
        config.max_batch_bytes = 2 << 20;
        let store = EmbeddedStore::open(config).unwrap();
        store.create("/k/small", value("v")).await.unwrap();
        store.ping().await.unwrap();
        assert_eq!(std::fs::metadata(&wal).unwrap().len(), 4 << 20);
        let err = store
            .create("/k/huge", Bytes::from(vec![b'x'; 3 << 20]))
            .await
            .unwrap_err();
        assert!(matches!(err, Error::TooLarge { .. }), "{err}");
        store.create("/k/after", value("v")).await.unwrap();
        assert_eq!(
            store.get("/k/0").await.unwrap().0.unwrap().value.len(),
            1 << 20
        );
    }

    /// A watcher that falls behind by more bytes than the bound is cut off (its stream ends
    /// with `WatchLagged` after what was queued), however few batches that is; a watcher that
    /// keeps up goes on.
    #[tokio::test]
    async fn a_watcher_behind_by_more_bytes_than_the_bound_is_cut_off() {
        use futures_util::StreamExt;
        let dir = tempfile::tempdir().unwrap();
        let mut config = EmbeddedStoreConfig::new(dir.path().join("db.redb"));
        config.watch_buffer_bytes = 1 << 20;
        let store = EmbeddedStore::open(config).unwrap();
        let mut slow = store.watch("/k/", Revision(0)).await.unwrap();
        let mut fast = store.watch("/k/", Revision(0)).await.unwrap();
        async fn next_put(stream: &mut WatchStream) -> Option<Result<Event>> {
            tokio::time::timeout(Duration::from_secs(5), stream.next())
                .await
                .expect("an item in time")
        }
        for i in 0..20 {
            let key = format!("/k/{i:02}");
            store
                .create(&key, Bytes::from(vec![b'x'; 100 << 10]))
                .await
                .unwrap();
            loop {
                let event = next_put(&mut fast).await.unwrap().unwrap();
                if event.kind == EventKind::Put {
                    assert_eq!(event.kv.key, key);
                    break;
                }
            }
        }
        let mut seen = 0;
        loop {
            match next_put(&mut slow).await {
                Some(Ok(event)) if event.kind == EventKind::Put => seen += 1,
                Some(Ok(_)) => {}
                Some(Err(Error::WatchLagged { .. })) => break,
                other => panic!("{other:?}"),
            }
        }
        assert!((9..=11).contains(&seen), "{seen} puts before the cut");
    }

    /// A torn last record (the crash cut the write) is the end of the log, as before.
    #[tokio::test]
    async fn a_torn_last_record_is_the_end_of_the_log() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.redb");
        let offsets = crash_after_writes(&path, 4).await;
        let wal = std::fs::OpenOptions::new()
            .write(true)
            .open(path.with_extension("wal"))
            .unwrap();
        FileExt::write_all_at(&wal, &[0u8; 4], offsets[3] + 14).unwrap();
        let store = EmbeddedStore::open(EmbeddedStoreConfig::new(&path)).unwrap();
        assert!(store.get("/k/3").await.unwrap().0.is_some());
        assert!(store.get("/k/4").await.unwrap().0.is_none());
        assert_eq!(store.current_revision().await.unwrap(), Revision(3));
    }

    #[tokio::test]
    async fn conformance_suite() {
        let dir = tempfile::tempdir().unwrap();
        conformance::run_all(&open(&dir)).await;
    }

    #[tokio::test]
    async fn a_watch_behind_writes_elsewhere_catches_up_at_once() {
        use futures_util::StreamExt;
        let dir = tempfile::tempdir().unwrap();
        let store = open(&dir);
        store
            .create("/a/1", Bytes::from_static(b"x"))
            .await
            .unwrap();
        store
            .create("/b/1", Bytes::from_static(b"y"))
            .await
            .unwrap();
        // Started from revision 1 on a prefix the second write did not touch.
        let mut watch = store.watch("/a/", Revision(1)).await.unwrap();
        let first = tokio::time::timeout(std::time::Duration::from_secs(1), watch.next())
            .await
            .expect("no wait for a later commit")
            .unwrap()
            .unwrap();
        assert_eq!(first.kv.mod_revision, Revision(2));
        assert!(first.kv.key.is_empty(), "a progress notification");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_watch_reaches_the_end_of_a_batch_that_ends_elsewhere() {
        use futures_util::StreamExt;
        let dir = tempfile::tempdir().unwrap();
        let store = open(&dir);
        let mut watch = store.watch("/a/", Revision(0)).await.unwrap();
        for round in 0..20 {
            // The first write keeps the writer busy, so the next two share a commit: one
            // on the watched prefix, then one elsewhere.
            let value = || Bytes::from_static(b"x");
            let keys = [
                format!("/c/{round}"),
                format!("/a/{round}"),
                format!("/b/{round}"),
            ];
            let (c, a, b) = tokio::join!(
                store.create(&keys[0], value()),
                store.create(&keys[1], value()),
                store.create(&keys[2], value()),
            );
            let last = [c, a, b]
                .map(|r| r.unwrap().mod_revision.0)
                .into_iter()
                .max()
                .unwrap();
            let reached = tokio::time::timeout(std::time::Duration::from_secs(2), async {
                loop {
                    let ev = watch.next().await.unwrap().unwrap();
                    if ev.kv.mod_revision.0 >= last {
                        return;
                    }
                }
            })
            .await;
            assert!(
                reached.is_ok(),
                "round {round}: the watch stayed behind {last}"
            );
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_writers_share_commits() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(open(&dir));
        let mut tasks = Vec::new();
        for i in 0..200 {
            let store = store.clone();
            tasks.push(tokio::spawn(async move {
                store
                    .create(&format!("/c/{i:03}"), Bytes::from(vec![b'x'; 64]))
                    .await
                    .unwrap()
            }));
        }
        let mut revs = std::collections::BTreeSet::new();
        for t in tasks {
            revs.insert(t.await.unwrap().mod_revision.0);
        }
        assert_eq!(revs.len(), 200, "every write has its own revision");
        assert_eq!(store.current_revision().await.unwrap(), Revision(200));
    }

    #[tokio::test]
    async fn state_survives_reopen() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = open(&dir);
            store.create("/a", Bytes::from_static(b"1")).await.unwrap();
            store.create("/b", Bytes::from_static(b"2")).await.unwrap();
            store.delete("/a", None).await.unwrap();
        }
        let store = open(&dir);
        assert_eq!(store.current_revision().await.unwrap(), Revision(3));
        assert!(store.get("/a").await.unwrap().0.is_none());
        assert_eq!(
            store.get("/b").await.unwrap().0.unwrap().value,
            Bytes::from_static(b"2")
        );
        let next = store.create("/c", Bytes::from_static(b"3")).await.unwrap();
        assert_eq!(next.mod_revision, Revision(4));
    }

    /// Log entries of the layout before the chains: (revision, key, kind, create revision,
    /// value), each in `hist` too.
    fn log_unchained(txn: &redb::WriteTransaction, entries: &[(u64, &str, u8, u64, &[u8])]) {
        let mut log = txn.open_table(UNCHAINED_LOG).unwrap();
        let mut hist = txn.open_table(HIST).unwrap();
        for &(rev, key, kind, create, value) in entries {
            log.insert(rev, (key, kind, create, value)).unwrap();
            hist.insert((key, rev), ()).unwrap();
        }
    }

    /// A new database with what `fill` writes in one transaction.
    fn write_database(path: &Path, fill: impl FnOnce(&redb::WriteTransaction)) {
        create_database(path).unwrap();
        let db = Database::create(path).unwrap();
        let txn = db.begin_write().unwrap();
        fill(&txn);
        txn.commit().unwrap();
    }

    /// A database written in the earlier layout (each current value in `kv` too): `/a` at
    /// revision 1, updated at 2, `/b` at 3 with its log entry compacted away, `/c` created at 4
    /// and deleted at 5.
    fn write_earlier_layout(path: &Path) {
        write_database(path, |txn| {
            let mut kv = txn.open_table(KV_WITH_VALUES).unwrap();
            kv.insert("/k/a", (1, 2, b"a2".as_slice())).unwrap();
            kv.insert("/k/b", (3, 3, b"b3".as_slice())).unwrap();
            log_unchained(
                txn,
                &[
                    (1, "/k/a", PUT, 1, b"a1".as_slice()),
                    (2, "/k/a", PUT, 1, b"a2"),
                    (4, "/k/c", PUT, 4, b"c4"),
                    (5, "/k/c", DELETE, 4, b"c4"),
                ],
            );
            let mut meta = txn.open_table(META).unwrap();
            meta.insert(META_REVISION, 5).unwrap();
        });
    }

    #[tokio::test]
    async fn a_database_of_the_earlier_layout_is_upgraded_at_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.redb");
        write_earlier_layout(&path);
        // The check reads it as the start will upgrade it, and changes nothing.
        let report = check(&path).unwrap();
        assert_eq!((report.keys, report.revision), (2, 5));
        {
            let store = open(&dir);
            let (a, rev) = store.get("/k/a").await.unwrap();
            assert_eq!(rev, Revision(5));
            let a = a.unwrap();
            assert_eq!(
                (a.value, a.create_revision, a.mod_revision),
                (value("a2"), Revision(1), Revision(2))
            );
            // Its value only in the old table: logged at its revision.
            let b = store.get("/k/b").await.unwrap().0.unwrap();
            assert_eq!((b.value, b.mod_revision), (value("b3"), Revision(3)));
            assert!(store.get("/k/c").await.unwrap().0.is_none());
            let all = store
                .list(ListRequest {
                    prefix: "/k/",
                    ..Default::default()
                })
                .await
                .unwrap();
            let keys: Vec<_> = all.items.iter().map(|kv| kv.key.as_str()).collect();
            assert_eq!(keys, ["/k/a", "/k/b"]);
            assert_eq!(store.count("/k/").await.unwrap(), 2);
            let at_3 = store
                .list(ListRequest {
                    prefix: "/k/",
                    revision: Some(Revision(3)),
                    ..Default::default()
                })
                .await
                .unwrap();
            assert_eq!(at_3.items.len(), 2, "{at_3:?}");
            let next = store
                .update("/k/b", value("b6"), Revision(3))
                .await
                .unwrap();
            assert_eq!(next.mod_revision, Revision(6));
        }
        // The old table is gone, and the upgraded store opens again as it was left.
        let db = Database::open(&path).unwrap();
        let txn = db.begin_read().unwrap();
        assert!(txn.list_tables().unwrap().all(|t| t.name() != "kv"));
        drop((txn, db));
        let store = open(&dir);
        let b = store.get("/k/b").await.unwrap().0.unwrap();
        assert_eq!((b.value, b.create_revision), (value("b6"), Revision(3)));
    }

    #[tokio::test]
    async fn a_value_logged_once_survives_compaction_past_it() {
        let dir = tempfile::tempdir().unwrap();
        let store = open(&dir);
        store.create("/k/a", value("1")).await.unwrap();
        store.create("/k/b", value("2")).await.unwrap();
        store.update("/k/b", value("3"), Revision(2)).await.unwrap();
        store.delete("/k/a", None).await.unwrap();
        store.compact(Revision(4)).await.unwrap();
        let b = store.get("/k/b").await.unwrap().0.unwrap();
        assert_eq!((b.value, b.mod_revision), (value("3"), Revision(3)));
        let err = store
            .update("/k/b", value("4"), Revision(2))
            .await
            .unwrap_err();
        match err {
            Error::Conflict { current, .. } => assert_eq!(current.value, value("3")),
            other => panic!("expected a conflict, got {other:?}"),
        }
        let gone = store.delete("/k/b", None).await.unwrap();
        assert_eq!(gone.value, value("3"));
    }

    /// Readers running beside writes and compactions see one state: every revision a read
    /// is given is in its snapshot.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn reads_beside_writes_and_compactions_see_one_state() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(open(&dir));
        for i in 0..20 {
            store
                .create(&format!("/k/{i:02}"), value("0"))
                .await
                .unwrap();
        }
        let stop = Arc::new(AtomicBool::new(false));
        let writer = tokio::spawn({
            let (store, stop) = (store.clone(), stop.clone());
            async move {
                let mut round = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    round += 1;
                    let updates = (0..20).map(|i| {
                        let store = store.clone();
                        async move {
                            let key = format!("/k/{i:02}");
                            let cur = store.get(&key).await.unwrap().0.unwrap();
                            store
                                .update(&key, value("n"), cur.mod_revision)
                                .await
                                .unwrap();
                        }
                    });
                    futures_util::future::join_all(updates).await;
                    let now = store.current_revision().await.unwrap().0;
                    store.compact(Revision(now - 5)).await.unwrap();
                }
                round
            }
        });
        let readers: Vec<_> = (0..2)
            .map(|_| {
                let (store, stop) = (store.clone(), stop.clone());
                tokio::spawn(async move {
                    let mut reads = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        let all = store
                            .list(ListRequest {
                                prefix: "/k/",
                                ..Default::default()
                            })
                            .await
                            .unwrap();
                        assert_eq!(all.items.len(), 20);
                        // The 20 keys were created at revisions 1 to 20.
                        let at = all.revision.0.saturating_sub(3).max(20);
                        match store
                            .list(ListRequest {
                                prefix: "/k/",
                                revision: Some(Revision(at)),
                                ..Default::default()
                            })
                            .await
                        {
                            Ok(old) => assert_eq!(old.items.len(), 20),
                            Err(Error::Compacted { .. }) => {}
                            Err(other) => panic!("a read at {at}: {other:?}"),
                        }
                        store.get("/k/07").await.unwrap().0.unwrap();
                        reads += 1;
                        tokio::task::yield_now().await;
                    }
                    reads
                })
            })
            .collect();
        tokio::time::sleep(Duration::from_millis(1500)).await;
        stop.store(true, Ordering::Relaxed);
        let rounds = writer.await.unwrap();
        for reader in readers {
            assert!(reader.await.unwrap() > 0);
        }
        assert!(rounds > 5, "{rounds} rounds of writes");
    }

    /// The keys and values at every revision, kept beside the store: revision → key →
    /// (value, create revision, mod revision).
    type Model = Vec<BTreeMap<String, (Bytes, u64, u64)>>;

    async fn list_at(store: &EmbeddedStore, at: u64, limit: usize) -> Vec<KeyValue> {
        let mut items = Vec::new();
        let mut start = None::<String>;
        loop {
            let page = store
                .list(ListRequest {
                    prefix: "/k/",
                    start: start.as_deref(),
                    limit,
                    revision: Some(Revision(at)),
                })
                .await
                .unwrap();
            assert_eq!(page.revision, Revision(at));
            assert!(limit == 0 || page.items.len() <= limit);
            let more = page.more;
            items.extend(page.items);
            if !more {
                return items;
            }
            start = Some(format!("{}\0", items.last().unwrap().key));
        }
    }

    async fn check_every_revision(store: &EmbeddedStore, model: &Model, from: u64) {
        for at in from..model.len() as u64 {
            let want: Vec<_> = model[at as usize]
                .iter()
                .map(|(k, (v, c, m))| (k.clone(), v.clone(), *c, *m))
                .collect();
            for limit in [0, 1, 3] {
                let got: Vec<_> = list_at(store, at, limit)
                    .await
                    .into_iter()
                    .map(|kv| (kv.key, kv.value, kv.create_revision.0, kv.mod_revision.0))
                    .collect();
                assert_eq!(got, want, "at revision {at}, pages of {limit}");
            }
        }
    }

    /// Creates, updates, deletes and creates again over a few keys, compacting now and then:
    /// every revision not compacted away reads as it was, whole and in pages, and the
    /// current state as it is.
    #[tokio::test]
    async fn reads_at_every_revision_follow_the_chains_through_compactions() {
        let dir = tempfile::tempdir().unwrap();
        let store = open(&dir);
        // Outside the prefix: reads at a revision must skip it.
        store.create("/j/x", value("x")).await.unwrap();
        let mut model: Model = vec![BTreeMap::new(), BTreeMap::new()];
        let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
        let mut compacted = 0;
        for step in 0..240 {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let key = format!("/k/{}", (seed >> 33) % 6);
            let now = model.last().unwrap().clone();
            let value = Bytes::from(format!("{key}@{step}"));
            let mut next = now.clone();
            let kv = match now.get(&key) {
                None => store.create(&key, value.clone()).await.unwrap(),
                Some((_, _, m)) if (seed >> 20).is_multiple_of(3) => {
                    let gone = store.delete(&key, Some(Revision(*m))).await.unwrap();
                    next.remove(&key);
                    model.push(next);
                    assert_eq!(gone.mod_revision.0, model.len() as u64 - 1);
                    continue;
                }
                Some((_, _, m)) => store
                    .update(&key, value.clone(), Revision(*m))
                    .await
                    .unwrap(),
            };
            next.insert(key, (value, kv.create_revision.0, kv.mod_revision.0));
            model.push(next);
            assert_eq!(kv.mod_revision.0, model.len() as u64 - 1);
            if step % 60 == 59 {
                check_every_revision(&store, &model, compacted.max(1)).await;
                compacted = model.len() as u64 - 1 - (seed >> 40) % 8;
                store.compact(Revision(compacted)).await.unwrap();
            }
        }
        check_every_revision(&store, &model, compacted).await;
        let err = store
            .list(ListRequest {
                prefix: "/k/",
                revision: Some(Revision(compacted - 1)),
                ..Default::default()
            })
            .await
            .unwrap_err();
        assert!(matches!(err, Error::Compacted { .. }), "{err:?}");
        // Compaction left what the reads after it need, and nothing more of a key than its
        // last value at the compacted revision and its changes since.
        let txn = store.shared.db.begin_read().unwrap();
        let log = txn.open_table(LOG).unwrap();
        let kept = log.range(..=compacted).unwrap().count();
        let live_then = model[compacted as usize].len() + 1;
        assert_eq!(kept, live_then, "entries at or before {compacted}");
    }

    /// A database of the layout before the chains: `/k/a` created at 1, updated at 2 and 4;
    /// `/k/b` created at 3, deleted at 5, created again at 6; `/k/c` created at 7; `/j/x`
    /// at 8. Compacted at 2 (so `/k/a`'s entry at 1 is gone).
    fn write_unchained_layout(path: &Path) {
        write_database(path, |txn| {
            let mut live = txn.open_table(LIVE).unwrap();
            log_unchained(
                txn,
                &[
                    (2, "/k/a", PUT, 1, b"a2".as_slice()),
                    (3, "/k/b", PUT, 3, b"b3"),
                    (4, "/k/a", PUT, 1, b"a4"),
                    (5, "/k/b", DELETE, 3, b"b3"),
                    (6, "/k/b", PUT, 6, b"b6"),
                    (7, "/k/c", PUT, 7, b"c7"),
                    (8, "/j/x", PUT, 8, b"x8"),
                ],
            );
            let mut meta = txn.open_table(META).unwrap();
            for (key, create, rev) in [
                ("/k/a", 1, 4),
                ("/k/b", 6, 6),
                ("/k/c", 7, 7),
                ("/j/x", 8, 8),
            ] {
                live.insert(key, (create, rev)).unwrap();
            }
            meta.insert(META_REVISION, 8).unwrap();
            meta.insert(META_COMPACTED, 2).unwrap();
        });
    }

    async fn at(store: &EmbeddedStore, rev: u64) -> Vec<(String, Bytes)> {
        let list = store
            .list(ListRequest {
                prefix: "/k/",
                revision: Some(Revision(rev)),
                ..Default::default()
            })
            .await
            .unwrap();
        list.items
            .into_iter()
            .map(|kv| (kv.key, kv.value))
            .collect()
    }

    #[tokio::test]
    async fn a_database_of_the_unchained_layout_is_upgraded_at_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db.redb");
        write_unchained_layout(&path);
        let report = check(&path).unwrap();
        assert_eq!((report.keys, report.history, report.revision), (4, 7, 8));
        {
            let store = open(&dir);
            let k = |s: &str| s.to_string();
            assert_eq!(at(&store, 2).await, [(k("/k/a"), value("a2"))]);
            assert_eq!(
                at(&store, 3).await,
                [(k("/k/a"), value("a2")), (k("/k/b"), value("b3"))]
            );
            assert_eq!(at(&store, 5).await, [(k("/k/a"), value("a4"))]);
            assert_eq!(
                at(&store, 8).await,
                [
                    (k("/k/a"), value("a4")),
                    (k("/k/b"), value("b6")),
                    (k("/k/c"), value("c7"))
                ]
            );
            let b = store.get("/k/b").await.unwrap().0.unwrap();
            assert_eq!(
                (b.create_revision, b.mod_revision),
                (Revision(6), Revision(6))
            );
            // The chains the upgrade made are what compaction follows.
            store.compact(Revision(6)).await.unwrap();
            assert_eq!(
                at(&store, 6).await,
                [(k("/k/a"), value("a4")), (k("/k/b"), value("b6"))]
            );
            let txn = store.shared.db.begin_read().unwrap();
            let revs: Vec<u64> = txn
                .open_table(LOG)
                .unwrap()
                .iter()
                .unwrap()
                .map(|e| e.unwrap().0.value())
                .collect();
            assert_eq!(revs, [4, 6, 7, 8]);
            drop(txn);
            store
                .update("/k/a", value("a9"), Revision(4))
                .await
                .unwrap();
        }
        let db = Database::open(&path).unwrap();
        let txn = db.begin_write().unwrap();
        let names: Vec<String> = txn
            .list_tables()
            .unwrap()
            .map(|t| t.name().to_string())
            .collect();
        assert!(
            names.iter().all(|n| n != "hist" && n != "log-chained"),
            "{names:?}"
        );
        // A version of the earlier layout stops at the log instead of reading it wrongly.
        let err = txn.open_table(UNCHAINED_LOG).map(|_| ()).unwrap_err();
        assert!(
            matches!(err, redb::TableError::TableTypeMismatch { .. }),
            "{err:?}"
        );
        txn.abort().unwrap();
        drop(db);
        let store = open(&dir);
        let a = store.get("/k/a").await.unwrap().0.unwrap();
        assert_eq!((a.value, a.create_revision), (value("a9"), Revision(1)));
    }
}
