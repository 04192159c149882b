//! Simulated power losses: the embedded store runs on a disk that keeps only what was synced
//! (and a random part of what was not) when the power goes, at a random point of a workload,
//! of a checkpoint or of the replay that follows a restart. Over many seeds: no acknowledged
//! write is lost, and no write refused before it was logged comes back.

use std::collections::{BTreeMap, HashMap};
use std::io;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use redb::{Database, StorageBackend};

use crate::embedded::{EmbeddedStore, EmbeddedStoreConfig};
use crate::error::Error;
use crate::store::{ListRequest, Revision, Store};
use crate::wal::{LogFile, Wal};

/// A disk holding named files; the power goes after a set number of writes and syncs.
#[derive(Clone, Debug, Default)]
struct SimDisk(Arc<Mutex<Disk>>);

#[derive(Debug, Default)]
struct Disk {
    files: HashMap<&'static str, SimFileState>,
    /// Writes and syncs left before the power goes (None: it stays on).
    countdown: Option<u64>,
    down: bool,
    /// Writes and syncs left before one fails on its own (a full disk, say), the disk
    /// working on after it.
    failing: Option<u64>,
}

#[derive(Debug, Default)]
struct SimFileState {
    /// What survives a power loss for sure.
    durable: Vec<u8>,
    /// What reads see.
    current: Vec<u8>,
    /// Changes since the last sync, in order.
    unsynced: Vec<Change>,
    /// Bytes read so far.
    bytes_read: u64,
}

#[derive(Debug, Clone)]
enum Change {
    Write { offset: u64, data: Vec<u8> },
    SetLen(u64),
}

impl Change {
    fn apply(&self, image: &mut Vec<u8>) {
        match self {
            Change::Write { offset, data } => {
                let start = *offset as usize;
                if image.len() < start + data.len() {
                    image.resize(start + data.len(), 0);
                }
                image[start..start + data.len()].copy_from_slice(data);
            }
            Change::SetLen(len) => image.resize(*len as usize, 0),
        }
    }
}

fn power_lost() -> io::Error {
    io::Error::other("simulated power loss")
}

impl SimDisk {
    fn lock(&self) -> MutexGuard<'_, Disk> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The power goes after `ops` more writes and syncs.
    fn arm(&self, ops: u64) {
        self.lock().countdown = Some(ops);
    }

    /// One write or sync fails after `ops` more, and the disk works on.
    fn fail_once(&self, ops: u64) {
        self.lock().failing = Some(ops);
    }

    /// Bytes read from the file `name` so far.
    fn bytes_read(&self, name: &str) -> u64 {
        self.lock().files.get(name).map_or(0, |f| f.bytes_read)
    }

    fn disarm(&self) {
        let mut disk = self.lock();
        disk.countdown = None;
        disk.failing = None;
    }

    /// The power goes now (if it has not) and comes back: each file keeps what was synced,
    /// and each later change survives whole, not at all, torn after a prefix, or torn
    /// anywhere (any of its 16-byte pieces written or not), at random.
    fn power_loss(&self, rng: &mut StdRng) {
        let mut disk = self.lock();
        for file in disk.files.values_mut() {
            let mut image = std::mem::take(&mut file.durable);
            for change in file.unsynced.drain(..) {
                match (rng.random_range(0..4), &change) {
                    (0, _) => {}
                    (1, Change::Write { offset, data }) if data.len() > 1 => {
                        let kept = rng.random_range(1..data.len());
                        Change::Write {
                            offset: *offset,
                            data: data[..kept].to_vec(),
                        }
                        .apply(&mut image);
                    }
                    (2, Change::Write { offset, data }) => {
                        for (i, piece) in data.chunks(16).enumerate() {
                            if rng.random_ratio(1, 2) {
                                Change::Write {
                                    offset: offset + 16 * i as u64,
                                    data: piece.to_vec(),
                                }
                                .apply(&mut image);
                            }
                        }
                    }
                    _ => change.apply(&mut image),
                }
            }
            file.current = image.clone();
            file.durable = image;
        }
        disk.down = false;
        disk.countdown = None;
        disk.failing = None;
    }

    fn file(&self, name: &'static str) -> SimFile {
        self.lock().files.entry(name).or_default();
        SimFile {
            disk: self.clone(),
            name,
        }
    }
}

#[derive(Debug)]
struct SimFile {
    disk: SimDisk,
    name: &'static str,
}

impl SimFile {
    /// Reads `self` (fails once the power is gone).
    fn read<T>(&self, f: impl FnOnce(&SimFileState) -> io::Result<T>) -> io::Result<T> {
        let disk = self.disk.lock();
        if disk.down {
            return Err(power_lost());
        }
        f(&disk.files[self.name])
    }

    /// Changes `self`, counting one operation toward the power loss.
    fn change(&self, f: impl FnOnce(&mut SimFileState)) -> io::Result<()> {
        let mut disk = self.disk.lock();
        match disk.countdown {
            _ if disk.down => return Err(power_lost()),
            Some(0) => {
                disk.down = true;
                return Err(power_lost());
            }
            Some(n) => disk.countdown = Some(n - 1),
            None => {}
        }
        match disk.failing {
            Some(0) => {
                disk.failing = None;
                return Err(io::Error::from(io::ErrorKind::StorageFull));
            }
            Some(n) => disk.failing = Some(n - 1),
            None => {}
        }
        f(disk.files.get_mut(self.name).expect("the file exists"));
        Ok(())
    }

    fn record(&self, change: Change) -> io::Result<()> {
        self.change(|file| {
            change.apply(&mut file.current);
            file.unsynced.push(change);
        })
    }

    fn sync(&self) -> io::Result<()> {
        self.change(|file| {
            for change in file.unsynced.drain(..) {
                change.apply(&mut file.durable);
            }
        })
    }

    fn read_at(&self, out: &mut [u8], offset: u64) -> io::Result<()> {
        let mut disk = self.disk.lock();
        if disk.down {
            return Err(power_lost());
        }
        let file = disk.files.get_mut(self.name).expect("the file exists");
        let start = offset as usize;
        let bytes = file
            .current
            .get(start..start + out.len())
            .ok_or_else(|| io::Error::from(io::ErrorKind::UnexpectedEof))?;
        out.copy_from_slice(bytes);
        file.bytes_read += out.len() as u64;
        Ok(())
    }
}

impl StorageBackend for SimFile {
    fn len(&self) -> io::Result<u64> {
        self.read(|file| Ok(file.current.len() as u64))
    }

    fn read(&self, offset: u64, out: &mut [u8]) -> io::Result<()> {
        self.read_at(out, offset)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        self.record(Change::SetLen(len))
    }

    fn sync_data(&self) -> io::Result<()> {
        self.sync()
    }

    fn write(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        self.record(Change::Write {
            offset,
            data: data.to_vec(),
        })
    }
}

impl LogFile for SimFile {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.read_at(buf, offset)
    }

    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        self.write(offset, buf)
    }

    fn sync_data(&self) -> io::Result<()> {
        self.sync()
    }

    fn len(&self) -> io::Result<u64> {
        StorageBackend::len(self)
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        StorageBackend::set_len(self, len)
    }
}

/// Opens the embedded store on `disk`.
fn open(disk: &SimDisk, config: &EmbeddedStoreConfig) -> crate::Result<EmbeddedStore> {
    let db = Database::builder()
        .set_cache_size(config.cache_bytes)
        .create_with_backend(disk.file("db"))?;
    let wal = Wal::with_file(Box::new(disk.file("wal")))?;
    EmbeddedStore::start(config, db, wal)
}

/// What a key may hold: its last acknowledged state, or the effect of a write whose
/// outcome is unknown.
#[derive(Debug, Default)]
struct Expected {
    state: Option<(Bytes, Revision)>,
    unknown: Option<Option<Bytes>>,
}

/// One write of the workload and what it would leave in its key.
enum Write {
    Create(String, Bytes),
    Update(String, Bytes, Revision),
    Delete(String, Revision),
}

impl Write {
    fn key(&self) -> &str {
        match self {
            Write::Create(k, _) | Write::Update(k, _, _) | Write::Delete(k, _) => k,
        }
    }

    fn effect(&self) -> Option<Bytes> {
        match self {
            Write::Create(_, v) | Write::Update(_, v, _) => Some(v.clone()),
            Write::Delete(..) => None,
        }
    }

    async fn run(&self, store: &EmbeddedStore) -> crate::Result<Option<Revision>> {
        match self {
            Write::Create(k, v) => store
                .create(k, v.clone())
                .await
                .map(|kv| Some(kv.mod_revision)),
            Write::Update(k, v, rev) => store
                .update(k, v.clone(), *rev)
                .await
                .map(|kv| Some(kv.mod_revision)),
            Write::Delete(k, rev) => store
                .delete(k, Some(*rev))
                .await
                .map(|kv| Some(kv.mod_revision)),
        }
    }
}

/// What the store's history may hold: each acknowledged write at the revision it was given,
/// and the effects of writes of unknown outcome (at revisions nobody was told).
#[derive(Debug, Default)]
struct History {
    acked: BTreeMap<u64, (String, Option<Bytes>)>,
    unknown: std::collections::HashSet<(String, Option<Bytes>)>,
}

/// Checks the revisions and the history after a restart: the revision never goes back below
/// an acknowledged one; the history since the compaction is in strictly increasing revisions,
/// holds every acknowledged write at its revision, and nothing that was not written.
async fn verify_history(store: &EmbeddedStore, history: &History, seed: u64) {
    let current = store.current_revision().await.unwrap().0;
    if let Some((&highest, _)) = history.acked.last_key_value() {
        assert!(
            current >= highest,
            "seed {seed}: the revision went back to {current} after {highest} was acknowledged"
        );
    }
    let compacted = store.compacted_revision().await.unwrap().0;
    let (events, _) = store.history_since("/k/", compacted).unwrap();
    let mut last = compacted;
    for event in &events {
        let revision = event.kv.mod_revision.0;
        assert!(
            revision > last,
            "seed {seed}: revision {revision} after {last}"
        );
        last = revision;
        let effect = (event.kind == crate::EventKind::Put).then(|| event.kv.value.clone());
        let written = (event.kv.key.clone(), effect);
        match history.acked.get(&revision) {
            Some(acked) => assert!(
                *acked == written,
                "seed {seed}: revision {revision} holds another write than the one acknowledged"
            ),
            None => assert!(
                history.unknown.contains(&written),
                "seed {seed}: revision {revision} of {} was never written",
                written.0
            ),
        }
    }
    let seen: std::collections::HashSet<u64> = events.iter().map(|e| e.kv.mod_revision.0).collect();
    for (revision, (key, _)) in history.acked.range(compacted + 1..) {
        assert!(
            seen.contains(revision),
            "seed {seed}: the acknowledged write of {key} at {revision} is missing from history"
        );
    }
}

/// Checks the store against `model` and takes what it holds as the new acknowledged state.
async fn verify(store: &EmbeddedStore, model: &mut BTreeMap<String, Expected>, seed: u64) {
    let listed = store
        .list(ListRequest {
            prefix: "/k/",
            ..Default::default()
        })
        .await
        .unwrap();
    let mut found: BTreeMap<&str, (Bytes, Revision)> = listed
        .items
        .iter()
        .map(|kv| (kv.key.as_str(), (kv.value.clone(), kv.mod_revision)))
        .collect();
    for (key, expected) in model.iter_mut() {
        let actual = found.remove(key.as_str());
        let acked = expected.state.as_ref().map(|(v, _)| v.clone());
        let now = actual.as_ref().map(|(v, _)| v.clone());
        let allowed = now == acked || expected.unknown.as_ref().is_some_and(|u| *u == now);
        let short = |v: &Option<Bytes>| {
            v.as_ref()
                .map(|b| String::from_utf8_lossy(&b[..b.len().min(12)]).into_owned())
        };
        assert!(
            allowed,
            "seed {seed}: {key} holds {:?}; acknowledged {:?}, unknown {:?}",
            short(&now),
            short(&acked),
            expected.unknown.as_ref().map(short)
        );
        expected.state = actual;
        expected.unknown = None;
    }
    assert!(
        found.is_empty(),
        "seed {seed}: keys no acknowledged or unknown write made: {:?}",
        found.keys().collect::<Vec<_>>()
    );
    model.retain(|_, e| e.state.is_some());
}

/// Random writes (a few at once, on distinct keys, so that batches form); after a failure
/// they stop or, half the time, go on (after a failure that left the disk working, a store
/// that accepted more writes could lose them).
async fn workload(
    store: &EmbeddedStore,
    model: &mut BTreeMap<String, Expected>,
    history: &mut History,
    rng: &mut StdRng,
    next_key: &mut u64,
) {
    for _ in 0..60 {
        if rng.random_ratio(1, 20) {
            let now = store.current_revision().await.unwrap();
            if store.compact(now).await.is_err() {
                return;
            }
        }
        let mut writes = Vec::new();
        let existing: Vec<(String, Revision)> = model
            .iter()
            .filter_map(|(k, e)| e.state.as_ref().map(|(_, r)| (k.clone(), *r)))
            .collect();
        for _ in 0..rng.random_range(1..=4) {
            let value = Bytes::from(
                format!("v{next_key}-")
                    .into_bytes()
                    .into_iter()
                    .chain(std::iter::repeat_n(b'x', rng.random_range(0..1500)))
                    .collect::<Vec<u8>>(),
            );
            let pick =
                (!existing.is_empty()).then(|| &existing[rng.random_range(0..existing.len())]);
            let write = match (rng.random_range(0..4), pick) {
                (2, Some((k, r))) => Write::Update(k.clone(), value, *r),
                (3, Some((k, r))) => Write::Delete(k.clone(), *r),
                _ => {
                    *next_key += 1;
                    Write::Create(format!("/k/{next_key:06}"), value)
                }
            };
            if !writes.iter().any(|w: &Write| w.key() == write.key()) {
                writes.push(write);
            }
        }
        let outcomes = futures_util::future::join_all(writes.iter().map(|w| w.run(store))).await;
        let mut failed = false;
        for (write, outcome) in writes.iter().zip(outcomes) {
            let expected = model.entry(write.key().to_string()).or_default();
            match outcome {
                Ok(revision) => {
                    expected.state = write.effect().zip(revision);
                    if let Some(revision) = revision {
                        history
                            .acked
                            .insert(revision.0, (write.key().to_string(), write.effect()));
                    }
                }
                Err(Error::Indeterminate(_)) => {
                    expected.unknown = Some(write.effect());
                    history
                        .unknown
                        .insert((write.key().to_string(), write.effect()));
                    failed = true;
                }
                Err(_) => failed = true,
            }
        }
        if failed && rng.random_ratio(1, 2) {
            return;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_acknowledged_write_is_lost_and_no_refused_write_returns_after_power_losses() {
    const SEEDS: u64 = 150;
    const LIVES: usize = 6;
    for seed in 0..SEEDS {
        let mut rng = StdRng::seed_from_u64(seed);
        let disk = SimDisk::default();
        let mut model = BTreeMap::new();
        let mut history = History::default();
        let mut next_key = 0;
        // The database is created whole (the real store creates it under another name and
        // renames it, which this disk does not model).
        drop(open(&disk, &EmbeddedStoreConfig::new("simulated")).unwrap());
        for _ in 0..LIVES {
            // Checkpoints now after every batch, now after many: the power goes in the
            // middle of either, or of the workload, or of the replay at the next start.
            let config = EmbeddedStoreConfig {
                checkpoint_interval: Duration::from_millis(rng.random_range(0..3)),
                checkpoint_bytes: rng.random_range(256..(32 << 10)),
                ..EmbeddedStoreConfig::new("simulated")
            };
            // The power goes, or one operation fails and the disk works on.
            if rng.random_ratio(1, 3) {
                disk.fail_once(rng.random_range(0..300));
            } else {
                disk.arm(rng.random_range(0..300));
            }
            let store = match open(&disk, &config) {
                Ok(store) => store,
                Err(_) => {
                    disk.power_loss(&mut rng);
                    continue;
                }
            };
            verify(&store, &mut model, seed).await;
            verify_history(&store, &history, seed).await;
            workload(&store, &mut model, &mut history, &mut rng, &mut next_key).await;
            drop(store);
            disk.power_loss(&mut rng);
        }
        disk.disarm();
        let store = open(&disk, &EmbeddedStoreConfig::new("simulated")).unwrap();
        verify(&store, &mut model, seed).await;
        verify_history(&store, &history, seed).await;
    }
}

impl SimDisk {
    /// Flips one bit in a record of the log's first run of records that is not the run's last
    /// (a media fault: the record was synced before the next was written); the offset and the
    /// byte it held, or None when the run has fewer than two records.
    fn flip_mid_log(&self, rng: &mut StdRng) -> Option<(usize, u8)> {
        let mut disk = self.lock();
        let file = disk.files.get_mut("wal")?;
        let image = &file.durable;
        let word = |at: usize| -> Option<u32> {
            Some(u32::from_le_bytes(image.get(at..at + 4)?.try_into().ok()?))
        };
        let (mut at, mut records) = (0usize, Vec::new());
        let epoch = image.get(12..20)?.to_vec();
        while word(at) == Some(crate::wal::MAGIC) && image.get(at + 12..at + 20)? == epoch {
            let len = word(at + 4)? as usize;
            let payload = image.get(at + 12..at + 12 + len)?;
            if crc32fast::hash(payload) != word(at + 8)? {
                break;
            }
            records.push((at, 12 + len));
            at += 12 + len;
        }
        if records.len() < 2 {
            return None;
        }
        let (start, len) = records[rng.random_range(0..records.len() - 1)];
        let offset = start + rng.random_range(0..len);
        let byte = file.durable[offset];
        let flipped = byte ^ (1 << rng.random_range(0..8));
        file.durable[offset] = flipped;
        file.current[offset] = flipped;
        Some((offset, byte))
    }

    /// Puts back a byte [`flip_mid_log`](Self::flip_mid_log) changed.
    fn restore(&self, (offset, byte): (usize, u8)) {
        let mut disk = self.lock();
        let file = disk.files.get_mut("wal").expect("the log");
        file.durable[offset] = byte;
        file.current[offset] = byte;
    }
}

/// Media faults: after a power loss, one bit flips in a log record that has another record
/// after it. The store then either starts with every acknowledged write and a consistent
/// history (the record was already in the database, or of an earlier round), or refuses to
/// start saying the log is damaged; it never starts having lost an acknowledged write.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flipped_bit_mid_log_refuses_the_start_or_loses_nothing() {
    let (mut refused, mut started) = (0, 0);
    for seed in 0..60 {
        let mut rng = StdRng::seed_from_u64(1000 + seed);
        let disk = SimDisk::default();
        let (mut model, mut history, mut next_key) = (BTreeMap::new(), History::default(), 0);
        drop(open(&disk, &EmbeddedStoreConfig::new("simulated")).unwrap());
        for _ in 0..4 {
            let config = EmbeddedStoreConfig {
                checkpoint_interval: Duration::from_secs(3600),
                checkpoint_bytes: rng.random_range((8 << 10)..(256 << 10)),
                ..EmbeddedStoreConfig::new("simulated")
            };
            let store = open(&disk, &config).unwrap();
            verify(&store, &mut model, seed).await;
            verify_history(&store, &history, seed).await;
            disk.arm(rng.random_range(50..400));
            workload(&store, &mut model, &mut history, &mut rng, &mut next_key).await;
            drop(store);
            disk.power_loss(&mut rng);
            let Some(flip) = disk.flip_mid_log(&mut rng) else {
                continue;
            };
            match open(&disk, &config) {
                Ok(store) => {
                    started += 1;
                    verify(&store, &mut model, seed).await;
                    verify_history(&store, &history, seed).await;
                }
                Err(Error::Corrupt(message)) => {
                    refused += 1;
                    assert!(message.contains("damaged"), "seed {seed}: {message}");
                    disk.restore(flip);
                }
                Err(other) => panic!("seed {seed}: {other}"),
            }
        }
    }
    assert!(
        refused > 0 && started > 0,
        "refused {refused}, started {started}"
    );
}

/// A checkpoint whose durable commit fails leaves redb unusable until it is reopened: writes
/// are then refused as after any failed commit (`Fenced`, a 503), reads answer `Unavailable`
/// (a 503) rather than an I/O error, the health check fails, and a restart loses nothing
/// acknowledged.
#[tokio::test]
async fn a_failed_checkpoint_fences_writes_and_reads_say_unavailable() {
    let mut seen = 0;
    for ops in 0..16 {
        let disk = SimDisk::default();
        drop(open(&disk, &EmbeddedStoreConfig::new("simulated")).unwrap());
        let config = EmbeddedStoreConfig {
            checkpoint_bytes: 1,
            checkpoint_interval: Duration::from_secs(3600),
            ..EmbeddedStoreConfig::new("simulated")
        };
        let store = open(&disk, &config).unwrap();
        store
            .create("/k/a", Bytes::from_static(b"a"))
            .await
            .unwrap();
        store.ping().await.unwrap();
        disk.fail_once(ops);
        // The batch's own log write and commit, then the checkpoint that follows it.
        if store
            .create("/k/b", Bytes::from_static(b"b"))
            .await
            .is_err()
            || store.ping().await.is_ok()
        {
            continue;
        }
        seen += 1;
        let write = store.create("/k/c", Bytes::from_static(b"c")).await;
        assert!(matches!(write, Err(Error::Fenced(_))), "{ops}: {write:?}");
        let read = store.get("/k/a").await;
        assert!(
            matches!(read, Ok(_) | Err(Error::Unavailable(_))),
            "{ops}: {read:?}"
        );
        drop(store);
        disk.disarm();
        let store = open(&disk, &EmbeddedStoreConfig::new("simulated")).unwrap();
        for key in ["/k/a", "/k/b"] {
            assert!(store.get(key).await.unwrap().0.is_some(), "{ops}: {key}");
        }
    }
    assert!(seen > 0, "no failure fell in a checkpoint");
}

/// A store that closed leaves a log the next open does not read; the open after a crash
/// reads and replays it, also when the crash follows an open that came after a clean close
/// (the mark of a clean close names the round it began, and every open begins another).
#[tokio::test]
async fn the_log_is_read_after_a_crash_and_not_after_a_clean_close() {
    let disk = SimDisk::default();
    let config = EmbeddedStoreConfig {
        checkpoint_interval: Duration::from_secs(3600),
        ..EmbeddedStoreConfig::new("simulated")
    };
    let value = |v: &'static str| Bytes::from_static(v.as_bytes());
    let store = open(&disk, &config).unwrap();
    store.create("/k/a", value("a")).await.unwrap();
    drop(store);
    let read = disk.bytes_read("wal");
    let store = open(&disk, &config).unwrap();
    assert_eq!(
        disk.bytes_read("wal"),
        read,
        "a clean close's log is not read"
    );
    assert_eq!(
        store.get("/k/a").await.unwrap().0.unwrap().value,
        value("a")
    );
    store.create("/k/b", value("b")).await.unwrap();
    // The power goes before the store closes: its last write is in the log only.
    disk.arm(0);
    drop(store);
    disk.power_loss(&mut StdRng::seed_from_u64(1));
    let store = open(&disk, &config).unwrap();
    assert!(
        disk.bytes_read("wal") > read,
        "the log is read after a crash"
    );
    for (key, v) in [("/k/a", "a"), ("/k/b", "b")] {
        assert_eq!(store.get(key).await.unwrap().0.unwrap().value, value(v));
    }
}
