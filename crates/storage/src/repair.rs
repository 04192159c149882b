//! Checking and salvaging an embedded store whose write-ahead log is damaged.
//!
//! The log's records are written one after another, each synced before the next is written,
//! so a crash can tear only the last one. Damage followed by intact records of the same round
//! is a media fault: the store refuses to start on it (a restart would otherwise drop every
//! acknowledged write after the damage and reuse their revisions). [`check`] reports what the
//! files hold; [`salvage`] keeps a copy of both files and rebuilds the store from every intact
//! record, moving the revision past everything ever written and compacting the history up to
//! it, so that clients relist instead of resuming from a history with holes.

use std::fmt;
use std::path::{Path, PathBuf};

use redb::{Database, Durability, ReadableTable};

use crate::embedded::{META_COMPACTED, META_EPOCH, META_REVISION, Tables, compact_range};
use crate::error::{Error, Result};
use crate::live::LiveKeys;
use crate::store::Event;
use crate::wal::{LogScan, Wal};

/// What [`check`] finds in an embedded store's files.
#[derive(Debug, Clone)]
pub struct StoreReport {
    /// The database file.
    pub path: PathBuf,
    /// The revision of the database's last durable commit.
    pub durable_revision: u64,
    /// The revision the store opens at after replaying the log.
    pub revision: u64,
    /// The revision history is compacted to.
    pub compacted: u64,
    /// Keys in the durable state.
    pub keys: u64,
    /// Changes kept in the durable history.
    pub history: u64,
    /// The log file's size.
    pub log_bytes: u64,
    /// Batches of the log a start replays.
    pub replayable_batches: usize,
    /// Where the intact records of the log end.
    pub log_end: u64,
    /// What lies there.
    pub log_stop: String,
    /// Damage a start refuses, if any.
    pub damage: Option<Damage>,
}

/// A damaged record followed by intact ones.
#[derive(Debug, Clone)]
pub struct Damage {
    /// Where the damaged record starts in the log.
    pub offset: u64,
    /// What was found there.
    pub what: String,
    /// The revisions no intact record holds (first and last of each range).
    pub missing: Vec<(u64, u64)>,
    /// Intact batches beyond the damage, and the revisions they span.
    pub stranded_batches: usize,
    /// The first and last revision of those batches.
    pub stranded_revisions: (u64, u64),
    /// The keys those batches write.
    pub stranded_keys: Vec<String>,
}

impl StoreReport {
    /// Whether the store starts as it is.
    pub fn healthy(&self) -> bool {
        self.damage.is_none()
    }
}

impl fmt::Display for StoreReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "database {}", self.path.display())?;
        writeln!(
            f,
            "  durable revision {}, compacted {}, {} keys, {} history entries",
            self.durable_revision, self.compacted, self.keys, self.history
        )?;
        writeln!(
            f,
            "log {} ({} bytes)",
            self.path.with_extension("wal").display(),
            self.log_bytes
        )?;
        writeln!(
            f,
            "  {} batches to replay, up to revision {}; intact records end at offset {} ({})",
            self.replayable_batches, self.revision, self.log_end, self.log_stop
        )?;
        match &self.damage {
            None => writeln!(f, "healthy: the store starts as it is"),
            Some(damage) => {
                writeln!(
                    f,
                    "DAMAGED: {} at offset {}, followed by {} intact batches (revisions {} to {})",
                    damage.what,
                    damage.offset,
                    damage.stranded_batches,
                    damage.stranded_revisions.0,
                    damage.stranded_revisions.1
                )?;
                for (first, last) in &damage.missing {
                    writeln!(f, "  revisions {first} to {last} are lost")?;
                }
                writeln!(
                    f,
                    "  keys written after the damage: {}",
                    damage.stranded_keys.join(", ")
                )?;
                writeln!(
                    f,
                    "`salvage` keeps a copy of both files and rebuilds the store from every intact \
                     record; the keys changed in the lost revisions keep their earlier value"
                )
            }
        }
    }
}

/// What [`salvage`] did.
#[derive(Debug, Clone)]
pub struct SalvageReport {
    /// The store as it was found.
    pub before: StoreReport,
    /// The copies of the damaged files (none when there was nothing to salvage).
    pub backups: Vec<PathBuf>,
    /// The revision the store now opens at; history before it is compacted.
    pub revision: u64,
}

impl fmt::Display for SalvageReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.backups.is_empty() {
            return write!(f, "{}nothing to salvage", self.before);
        }
        write!(f, "{}", self.before)?;
        for backup in &self.backups {
            writeln!(f, "kept the damaged file as {}", backup.display())?;
        }
        write!(
            f,
            "salvaged: the store opens at revision {}, history compacted to it (clients relist)",
            self.revision
        )
    }
}

/// The error a start fails with on a damaged log.
pub(crate) fn damage_message(path: &Path, durable: u64, scan: &LogScan) -> String {
    let damage = damage(durable, scan).expect("stranded records");
    format!(
        "the write-ahead log {} is damaged at offset {} ({}), and {} intact batches of \
         acknowledged writes (revisions {} to {}) follow it: a media fault, not a write cut \
         short by a crash. Nothing was changed. `capstan-storeutl check --data-dir {}` reports \
         the damage and `capstan-storeutl salvage` rebuilds the store from every intact record",
        path.with_extension("wal").display(),
        damage.offset,
        damage.what,
        damage.stranded_batches,
        damage.stranded_revisions.0,
        damage.stranded_revisions.1,
        path.parent().unwrap_or(Path::new(".")).display(),
    )
}

fn last_revision(durable: u64, batches: &[Vec<Event>]) -> u64 {
    batches
        .iter()
        .flatten()
        .map(|e| e.kv.mod_revision.0)
        .last()
        .unwrap_or(durable)
}

fn damage(durable: u64, scan: &LogScan) -> Option<Damage> {
    if scan.stranded.is_empty() {
        return None;
    }
    let mut missing = Vec::new();
    let mut next = last_revision(durable, &scan.batches) + 1;
    let mut keys = std::collections::BTreeSet::new();
    let mut span = (u64::MAX, 0);
    for (_, events) in &scan.stranded {
        let (lo, hi) = (
            events[0].kv.mod_revision.0,
            events[events.len() - 1].kv.mod_revision.0,
        );
        if hi < next {
            continue;
        }
        if lo > next {
            missing.push((next, lo - 1));
        }
        next = hi + 1;
        span = (span.0.min(lo), span.1.max(hi));
        keys.extend(events.iter().map(|e| e.kv.key.clone()));
    }
    if span.0 == u64::MAX {
        span = (0, 0);
    }
    Some(Damage {
        offset: scan.end,
        what: scan.stop.to_string(),
        missing,
        stranded_batches: scan.stranded.len(),
        stranded_revisions: span,
        stranded_keys: keys.into_iter().collect(),
    })
}

fn open(path: &Path) -> Result<Database> {
    if !path.exists() {
        return Err(Error::io(
            format!("opening {}", path.display()),
            std::io::Error::from(std::io::ErrorKind::NotFound),
        ));
    }
    Ok(Database::builder().set_cache_size(16 << 20).open(path)?)
}

/// Reads the store at `path` (the database file; the log beside it) and reports its state and
/// any damage. Opening the database rolls it back to its last durable commit, as a start does
/// (the log holds everything after it); nothing else is written.
pub fn check(path: &Path) -> Result<StoreReport> {
    let db = open(path)?;
    Ok(inspect(path, &db)?.0)
}

fn inspect(path: &Path, db: &Database) -> Result<(StoreReport, LogScan, Option<u64>)> {
    let txn = db.begin_write()?;
    // In this transaction only (it is aborted): a database of the earlier layout is read as
    // the next start will upgrade it.
    Tables::upgrade(&txn)?;
    let (durable_revision, compacted, epoch, keys, history) = {
        let t = Tables::open(&txn)?;
        let get = |name| -> Result<Option<u64>> { Ok(t.meta.get(name)?.map(|g| g.value())) };
        let (revision, compacted, epoch) = (
            get(META_REVISION)?.unwrap_or(0),
            get(META_COMPACTED)?.unwrap_or(0),
            get(META_EPOCH)?,
        );
        // Every entry is read, so that a damaged page shows here.
        let keys = LiveKeys::load(&t.log, revision)?.len() as u64;
        let mut history = 0;
        for entry in t.log.iter()? {
            entry?;
            history += 1;
        }
        (revision, compacted, epoch, keys, history)
    };
    txn.abort()?;
    let wal_path = path.with_extension("wal");
    let scan = if wal_path.exists() {
        Wal::open(&wal_path)?.scan(crate::Revision(durable_revision), epoch)?
    } else {
        LogScan::default()
    };
    let report = StoreReport {
        path: path.to_path_buf(),
        durable_revision,
        revision: last_revision(durable_revision, &scan.batches),
        compacted,
        keys,
        history,
        log_bytes: scan.log_bytes,
        replayable_batches: scan.batches.len(),
        log_end: scan.end,
        log_stop: scan.stop.to_string(),
        damage: damage(durable_revision, &scan),
    };
    Ok((report, scan, epoch))
}

/// Rebuilds a store whose log is damaged (see [`check`]) from every intact record: both files
/// are copied beside themselves first, then the records before the damage and the intact ones
/// after it are applied in revision order, the revision moves past the last one written, and
/// history is compacted to it so that no client resumes a watch across the lost revisions.
/// Changes held only by the damaged records are lost; their keys keep their earlier value.
pub fn salvage(path: &Path) -> Result<SalvageReport> {
    let db = open(path)?;
    let (before, scan, epoch) = inspect(path, &db)?;
    if before.damage.is_none() {
        return Ok(SalvageReport {
            revision: before.revision,
            before,
            backups: Vec::new(),
        });
    }
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut backups = Vec::new();
    for file in [path.to_path_buf(), path.with_extension("wal")] {
        let mut name = file.as_os_str().to_owned();
        name.push(format!(".damaged-{stamp}"));
        let backup = PathBuf::from(name);
        copy_durably(&file, &backup)?;
        backups.push(backup);
    }
    let mut revision = before.durable_revision;
    let mut txn = db.begin_write()?;
    txn.set_durability(Durability::Immediate)?;
    Tables::upgrade(&txn)?;
    {
        let mut t = Tables::open(&txn)?;
        let mut live = LiveKeys::load(&t.log, revision)?;
        let stranded = scan.stranded.iter().map(|(_, events)| events);
        for event in scan.batches.iter().chain(stranded).flatten() {
            if event.kv.mod_revision.0 > revision {
                t.replay(&mut live, event)?;
                revision = event.kv.mod_revision.0;
            }
        }
        compact_range(&mut t.log, before.compacted, revision)?;
        t.meta.insert(META_REVISION, revision)?;
        t.meta.insert(META_COMPACTED, revision)?;
        t.meta
            .insert(META_EPOCH, crate::embedded::next_epoch(epoch))?;
    }
    txn.commit()?;
    Ok(SalvageReport {
        before,
        backups,
        revision,
    })
}

fn copy_durably(from: &Path, to: &Path) -> Result<()> {
    let io = |e| Error::io(format!("copying {} to {}", from.display(), to.display()), e);
    let mut source = std::fs::File::open(from).map_err(io)?;
    let mut target = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(to)
        .map_err(io)?;
    std::io::copy(&mut source, &mut target).map_err(io)?;
    target.sync_all().map_err(io)?;
    if let Some(dir) = to.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::File::open(dir)
            .and_then(|d| d.sync_all())
            .map_err(io)?;
    }
    Ok(())
}
