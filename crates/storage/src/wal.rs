//! The write-ahead log of the embedded store.
//!
//! A redb commit that is durable on its own costs several syncs; an append to a
//! preallocated file costs one. So each batch is committed to redb without a sync and its
//! effects are written here and synced before any writer is answered. Every few seconds (or
//! 64 MiB) a durable redb commit makes everything before it permanent and the log starts
//! over at offset 0. After a crash, redb is at its last durable commit and the log holds
//! every acknowledged batch since: replay applies the records with newer revisions.
//!
//! The file is zero-filled ahead of use, so that a write and its `fdatasync` never change the
//! file's size. Each round has a random epoch, kept in the database by the durable commit
//! that starts the round, and written into every record of the round: replay takes only
//! records of the database's epoch, so records of earlier rounds that lie past the current
//! end are never replayed, whatever their revisions (and bytes a client stored cannot pass
//! for a record: the epoch is never shown).
//!
//! Records are written one after another, each synced before the next, so only the last can
//! be torn by a crash. Replay ends at the first record that is not an intact continuation;
//! if an intact record of the round lies beyond it, the record there was damaged after it was
//! synced, and the store refuses to start rather than drop what follows (see
//! [`crate::repair`]).
//!
//! Record: magic `CWA2` (u32 LE), payload length (u32), CRC32 of the payload (u32), then the
//! payload: epoch (u64), entry count (u32) and per entry kind (u8), revision (u64), create
//! revision (u64), key length (u32), key, value length (u32), value. Logs written before
//! epochs (magic `CWAL`, no epoch) are replayed by revision alone, for databases that have no
//! epoch yet.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;

use bytes::Bytes;

use crate::error::{Error, Result};
use crate::store::{Event, EventKind, KeyValue, Revision};

/// `CWA2`: records with an epoch.
pub(crate) const MAGIC: u32 = 0x3241_5743;
/// `CWAL`: records from before epochs.
const LEGACY_MAGIC: u32 = 0x4C41_5743;
const HEADER: usize = 12;
/// The file grows by this much at a time, zero-filled.
const GROWTH: u64 = 4 << 20;

/// What the log needs of its file: a real file, or a simulated disk in tests.
pub(crate) trait LogFile: Send + Sync {
    /// Reads exactly `buf.len()` bytes at `offset`.
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
    /// Writes all of `buf` at `offset`.
    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()>;
    /// Makes the data written so far (and the length) durable.
    fn sync_data(&self) -> io::Result<()>;
    /// The file's length.
    fn len(&self) -> io::Result<u64>;
    /// Cuts the file to `len` bytes.
    fn set_len(&self, len: u64) -> io::Result<()>;
}

impl LogFile for File {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        FileExt::read_exact_at(self, buf, offset)
    }

    fn write_all_at(&self, buf: &[u8], offset: u64) -> io::Result<()> {
        FileExt::write_all_at(self, buf, offset)
    }

    fn sync_data(&self) -> io::Result<()> {
        File::sync_data(self)
    }

    fn len(&self) -> io::Result<u64> {
        Ok(self.metadata()?.len())
    }

    fn set_len(&self, len: u64) -> io::Result<()> {
        File::set_len(self, len)
    }
}

/// An open log.
pub(crate) struct Wal {
    file: Box<dyn LogFile>,
    /// Where the next record goes.
    offset: u64,
    /// Bytes zero-filled and synced so far.
    capacity: u64,
    /// The epoch of the current round.
    epoch: u64,
}

fn io(what: &str, err: std::io::Error) -> Error {
    Error::io(format!("write-ahead log: {what}"), err)
}

impl Wal {
    /// Opens (or creates) the log at `path`, positioned at the start.
    pub fn open(path: &Path) -> Result<Self> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(path)
            .map_err(|e| io("open", e))?;
        Self::with_file(Box::new(file))
    }

    /// The log kept in `file`, positioned at the start.
    pub fn with_file(file: Box<dyn LogFile>) -> Result<Self> {
        let capacity = file.len().map_err(|e| io("stat", e))?;
        Ok(Self {
            file,
            offset: 0,
            capacity,
            epoch: 0,
        })
    }

    /// Bytes written since the last [`reset`](Self::reset).
    pub fn len(&self) -> u64 {
        self.offset
    }

    /// The file's size: the space zero-filled and synced so far (0 for a new log).
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    /// Starts a new round at the start of the file, its records marked `epoch` (after the
    /// durable commit that recorded that epoch in the database).
    pub fn reset(&mut self, epoch: u64) {
        self.offset = 0;
        self.epoch = epoch;
    }

    fn grow_to(&mut self, needed: u64) -> Result<()> {
        if needed <= self.capacity {
            return Ok(());
        }
        let target = needed.div_ceil(GROWTH) * GROWTH;
        let zeros = vec![0u8; GROWTH as usize];
        let filled = (|| {
            for at in (self.capacity..target).step_by(GROWTH as usize) {
                self.file
                    .write_all_at(&zeros, at)
                    .map_err(|e| io("zero-fill", e))?;
            }
            // fdatasync covers the new length (needed to read the data back).
            self.file
                .sync_data()
                .map_err(|e| io("sync after growth", e))
        })();
        if filled.is_err() {
            // Give back what the failed growth took (a full disk most often); nothing of a
            // record was written.
            let _ = self.file.set_len(self.capacity);
            return filled;
        }
        self.capacity = target;
        Ok(())
    }

    /// Encodes the effects of one batch as a record and makes room for it. Nothing of the
    /// record is written yet: a failure here (a full disk while zero-filling, a batch too large
    /// for a record) leaves the log as it was.
    pub fn prepare(&mut self, events: &[Event]) -> Result<Vec<u8>> {
        let too_large = || {
            Error::io(
                "write-ahead log: encoding",
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "a batch too large for one record",
                ),
            )
        };
        let len32 = |len: usize| u32::try_from(len).map_err(|_| too_large());
        let mut record = Vec::with_capacity(
            HEADER
                + 12
                + events
                    .iter()
                    .map(|e| 29 + e.kv.key.len() + e.kv.value.len())
                    .sum::<usize>(),
        );
        record.extend_from_slice(&MAGIC.to_le_bytes());
        record.extend_from_slice(&[0; 8]);
        record.extend_from_slice(&self.epoch.to_le_bytes());
        record.extend_from_slice(&len32(events.len())?.to_le_bytes());
        for e in events {
            record.push(match e.kind {
                EventKind::Put => 0,
                EventKind::Delete => 1,
                // Never logged: batches carry changes only.
                EventKind::Progress => 2,
            });
            record.extend_from_slice(&e.kv.mod_revision.0.to_le_bytes());
            record.extend_from_slice(&e.kv.create_revision.0.to_le_bytes());
            record.extend_from_slice(&len32(e.kv.key.len())?.to_le_bytes());
            record.extend_from_slice(e.kv.key.as_bytes());
            record.extend_from_slice(&len32(e.kv.value.len())?.to_le_bytes());
            record.extend_from_slice(&e.kv.value);
        }
        let payload_len = len32(record.len() - HEADER)?;
        let crc = crc32fast::hash(&record[HEADER..]);
        record[4..8].copy_from_slice(&payload_len.to_le_bytes());
        record[8..12].copy_from_slice(&crc.to_le_bytes());
        // Keep zeros after the record, so that replay stops there.
        self.grow_to(self.offset + record.len() as u64 + HEADER as u64)?;
        Ok(record)
    }

    /// Writes a record made by [`prepare`](Self::prepare) and syncs it. A failure here may
    /// leave the record (or part of it) on disk.
    pub fn write(&mut self, record: &[u8]) -> Result<()> {
        self.file
            .write_all_at(record, self.offset)
            .map_err(|e| io("write", e))?;
        self.file.sync_data().map_err(|e| io("sync", e))?;
        self.offset += record.len() as u64;
        Ok(())
    }

    /// Appends the effects of one batch and syncs them.
    #[cfg(test)]
    pub fn append(&mut self, events: &[Event]) -> Result<()> {
        let record = self.prepare(events)?;
        self.write(&record)
    }

    /// Gives back the space beyond `keep` bytes (rounded up to the growth step), after a
    /// checkpoint: a round that grew the file past what rounds normally need (a checkpoint
    /// that failed for a while, a large batch) does not hold the disk for good.
    pub fn shrink(&mut self, keep: u64) -> Result<()> {
        let keep = keep.div_ceil(GROWTH) * GROWTH;
        if self.capacity <= keep || self.offset + HEADER as u64 > keep {
            return Ok(());
        }
        self.file.set_len(keep).map_err(|e| io("truncate", e))?;
        self.file
            .sync_data()
            .map_err(|e| io("sync after truncating", e))?;
        self.capacity = keep;
        Ok(())
    }

    /// Reads the log against a database at revision `after` whose round is `epoch` (None: a
    /// log from before epochs): the batches to replay, where the intact records end, and any
    /// intact records of the round that lie beyond that end (see [`LogScan`]).
    pub fn scan(&self, after: Revision, epoch: Option<u64>) -> Result<LogScan> {
        let mut image = vec![0u8; self.capacity as usize];
        self.file
            .read_exact_at(&mut image, 0)
            .map_err(|e| io("read", e))?;
        let mut scan = LogScan {
            log_bytes: self.capacity,
            ..LogScan::default()
        };
        let mut offset = 0usize;
        let mut expected = after.0 + 1;
        loop {
            let (len, events) = match parse(&image, offset, epoch) {
                Ok(record) => record,
                Err(what) => {
                    scan.stop = what;
                    break;
                }
            };
            let (first, last) = revisions(&events);
            if last < expected {
                // Already durable in the database.
            } else if first == expected {
                expected = last + 1;
                scan.batches.push(events);
            } else {
                scan.stop = Stop::Gap { expected };
                break;
            }
            offset += HEADER + len;
        }
        scan.end = offset as u64;
        // Records are written one after another, each synced before the next is written, so
        // only the last one can be torn. An intact record of this round beyond the end was
        // written after the one there: that one was damaged after it was synced.
        let magic = if epoch.is_some() { MAGIC } else { LEGACY_MAGIC }.to_le_bytes();
        let mut at = offset;
        while let Some(found) = memchr::memmem::find(&image[at..], &magic) {
            let candidate = at + found;
            match parse(&image, candidate, epoch) {
                // Damage to records the database holds already loses nothing.
                Ok((len, events)) if revisions(&events).1 >= expected => {
                    scan.stranded.push((candidate as u64, events));
                    at = candidate + HEADER + len;
                }
                _ => at = candidate + 1,
            }
        }
        Ok(scan)
    }
}

/// What a log holds, read against the database it belongs to.
#[derive(Debug, Default)]
pub(crate) struct LogScan {
    /// The log file's size.
    pub log_bytes: u64,
    /// The batches newer than the database, in order: what replay applies.
    pub batches: Vec<Vec<Event>>,
    /// Where the intact, continuous records of the round end.
    pub end: u64,
    /// What lies at `end`.
    pub stop: Stop,
    /// Intact records of the round found beyond `end`, with their offsets. Their presence
    /// means the record at `end` was damaged after it was written and synced (a media
    /// fault): those records hold acknowledged writes that replay cannot reach.
    pub stranded: Vec<(u64, Vec<Event>)>,
}

/// What ends the intact records of a log.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) enum Stop {
    /// Zeros: space never written in this file, the clean end.
    #[default]
    Zeros,
    /// A record of an earlier round: the clean end after a shorter round.
    EarlierRound,
    /// Bytes that are not a record header: a torn write, or an earlier round's data.
    NotARecord,
    /// A record whose length runs past the end of the file.
    Truncated,
    /// A record whose payload does not match its checksum: a torn or damaged record.
    Checksum,
    /// A record whose checksum matches but whose payload does not decode.
    Undecodable,
    /// An intact record of the round that does not continue the one before: records are
    /// missing.
    Gap {
        /// The revision the next record should have started at.
        expected: u64,
    },
}

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Stop::Zeros => f.write_str("unwritten space"),
            Stop::EarlierRound => f.write_str("a record of an earlier round"),
            Stop::NotARecord => f.write_str("bytes that are not a record header"),
            Stop::Truncated => f.write_str("a record that runs past the end of the file"),
            Stop::Checksum => f.write_str("a record whose checksum does not match"),
            Stop::Undecodable => f.write_str("a record whose payload does not decode"),
            Stop::Gap { expected } => write!(
                f,
                "a record that does not continue the log (revision {expected} is missing)"
            ),
        }
    }
}

fn revisions(events: &[Event]) -> (u64, u64) {
    let first = events.first().map_or(0, |e| e.kv.mod_revision.0);
    let last = events.last().map_or(0, |e| e.kv.mod_revision.0);
    (first, last)
}

/// The record at `offset` of `image`: its payload length and its events, when it is an intact
/// record of the round `epoch`; otherwise what is there instead.
fn parse(image: &[u8], offset: usize, epoch: Option<u64>) -> Result<(usize, Vec<Event>), Stop> {
    let Some(header) = image.get(offset..offset + HEADER) else {
        return Err(Stop::Zeros);
    };
    let word = |i: usize| u32::from_le_bytes(header[i..i + 4].try_into().expect("4 bytes"));
    let (magic, len, crc) = (word(0), word(4) as usize, word(8));
    let wanted = if epoch.is_some() { MAGIC } else { LEGACY_MAGIC };
    if magic != wanted {
        return Err(if header.iter().all(|&b| b == 0) {
            Stop::Zeros
        } else {
            Stop::NotARecord
        });
    }
    let Some(payload) = image.get(offset + HEADER..offset + HEADER + len) else {
        return Err(Stop::Truncated);
    };
    if crc32fast::hash(payload) != crc {
        return Err(Stop::Checksum);
    }
    let entries = match epoch {
        Some(epoch) => match payload.split_first_chunk::<8>() {
            Some((round, rest)) if u64::from_le_bytes(*round) == epoch => rest,
            Some(_) => return Err(Stop::EarlierRound),
            None => return Err(Stop::Undecodable),
        },
        None => payload,
    };
    match decode(entries) {
        Some(events) if !events.is_empty() => Ok((len, events)),
        _ => Err(Stop::Undecodable),
    }
}

fn decode(mut p: &[u8]) -> Option<Vec<Event>> {
    fn take<'a>(p: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
        if p.len() < n {
            return None;
        }
        let (head, tail) = p.split_at(n);
        *p = tail;
        Some(head)
    }
    let u32_ =
        |p: &mut &[u8]| take(p, 4).map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")));
    let u64_ =
        |p: &mut &[u8]| take(p, 8).map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")));
    let count = u32_(&mut p)?;
    let mut events = Vec::with_capacity(count as usize);
    for _ in 0..count {
        let kind = match take(&mut p, 1)?[0] {
            0 => EventKind::Put,
            1 => EventKind::Delete,
            _ => return None,
        };
        let rev = u64_(&mut p)?;
        let create = u64_(&mut p)?;
        let klen = u32_(&mut p)? as usize;
        let key = String::from_utf8(take(&mut p, klen)?.to_vec()).ok()?;
        let vlen = u32_(&mut p)? as usize;
        let value = Bytes::copy_from_slice(take(&mut p, vlen)?);
        events.push(Event {
            kind,
            kv: KeyValue {
                key,
                value,
                create_revision: Revision(create),
                mod_revision: Revision(rev),
            },
        });
    }
    p.is_empty().then_some(events)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put(rev: u64, key: &str) -> Event {
        Event {
            kind: EventKind::Put,
            kv: KeyValue {
                key: key.into(),
                value: Bytes::from_static(b"v"),
                create_revision: Revision(rev),
                mod_revision: Revision(rev),
            },
        }
    }

    #[test]
    fn replays_what_is_newer_and_stops_at_damage() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("wal");
        let mut wal = Wal::open(&path).unwrap();
        wal.reset(1);
        wal.append(&[put(1, "a"), put(2, "b")]).unwrap();
        wal.append(&[put(3, "c")]).unwrap();
        let end = wal.len();
        wal.append(&[put(4, "d")]).unwrap();
        assert_eq!(wal.scan(Revision(0), Some(1)).unwrap().batches.len(), 3);
        assert_eq!(wal.scan(Revision(2), Some(1)).unwrap().batches.len(), 2);
        assert_eq!(wal.scan(Revision(4), Some(1)).unwrap().batches.len(), 0);
        // A torn last record is ignored.
        wal.file
            .write_all_at(&[0xff; 4], end + HEADER as u64 + 2)
            .unwrap();
        let again = Wal::open(&path).unwrap();
        let scan = again.scan(Revision(0), Some(1)).unwrap();
        assert_eq!(scan.batches.len(), 2);
        assert_eq!(scan.batches[1][0].kv.key, "c");
        assert_eq!((scan.end, &scan.stop), (end, &Stop::Checksum));
        assert!(scan.stranded.is_empty(), "a torn tail is not damage");
    }

    /// Damage anywhere in a record followed by intact records of the round: the records
    /// beyond are found and reported, never taken for the end of the log.
    #[test]
    fn damage_before_intact_records_is_reported_with_what_follows() {
        let dir = tempfile::tempdir().unwrap();
        let mut wal = Wal::open(&dir.path().join("wal")).unwrap();
        wal.reset(9);
        let mut offsets = Vec::new();
        for rev in 1..=6 {
            offsets.push(wal.len());
            wal.append(&[put(rev, &format!("k{rev}"))]).unwrap();
        }
        let record_len = offsets[1] - offsets[0];
        // Every byte of the third record in turn: the magic, the length, the checksum, the
        // epoch, an entry.
        for at in 0..record_len {
            let mut byte = [0u8];
            wal.file.read_exact_at(&mut byte, offsets[2] + at).unwrap();
            wal.file
                .write_all_at(&[byte[0] ^ 0x10], offsets[2] + at)
                .unwrap();
            let scan = wal.scan(Revision(0), Some(9)).unwrap();
            assert_eq!(scan.batches.len(), 2, "byte {at}");
            assert_eq!(scan.end, offsets[2], "byte {at}");
            let stranded: Vec<u64> = scan.stranded.iter().map(|(o, _)| *o).collect();
            assert_eq!(stranded, offsets[3..], "byte {at}: {:?}", scan.stop);
            wal.file.write_all_at(&byte, offsets[2] + at).unwrap();
        }
        // A record missing altogether (its bytes those of an earlier round): a gap.
        let mut third = vec![0u8; record_len as usize];
        wal.file.read_exact_at(&mut third, offsets[2]).unwrap();
        third[HEADER..HEADER + 8].copy_from_slice(&8u64.to_le_bytes());
        let crc = crc32fast::hash(&third[HEADER..]);
        third[8..12].copy_from_slice(&crc.to_le_bytes());
        wal.file.write_all_at(&third, offsets[2]).unwrap();
        let scan = wal.scan(Revision(0), Some(9)).unwrap();
        assert_eq!(scan.stop, Stop::EarlierRound);
        assert_eq!(scan.stranded.len(), 3);
        // Intact records that skip revisions.
        let mut wal2 = Wal::open(&dir.path().join("wal2")).unwrap();
        wal2.reset(3);
        wal2.append(&[put(1, "a")]).unwrap();
        wal2.append(&[put(3, "c")]).unwrap();
        let gap = wal2.scan(Revision(0), Some(3)).unwrap();
        assert_eq!(gap.stop, Stop::Gap { expected: 2 });
        assert_eq!((gap.batches.len(), gap.stranded.len()), (1, 1));
    }

    #[test]
    fn a_new_round_ignores_the_previous_one() {
        let dir = tempfile::tempdir().unwrap();
        let mut wal = Wal::open(&dir.path().join("wal")).unwrap();
        wal.reset(1);
        for rev in 1..=5 {
            wal.append(&[put(rev, "k")]).unwrap();
        }
        // Checkpoint at 5, then a shorter round overwrites the start.
        wal.reset(2);
        wal.append(&[put(6, "k")]).unwrap();
        let batches = wal.scan(Revision(5), Some(2)).unwrap().batches;
        assert_eq!(batches.len(), 1);
        assert_eq!(batches[0][0].kv.mod_revision, Revision(6));
        assert!(wal.scan(Revision(6), Some(2)).unwrap().batches.is_empty());
    }

    /// A record of an earlier round is not replayed even where its revisions would follow
    /// on: here round 1's second record sits right after round 2's first, and continues it.
    #[test]
    fn records_of_an_earlier_round_are_never_replayed() {
        let dir = tempfile::tempdir().unwrap();
        let mut wal = Wal::open(&dir.path().join("wal")).unwrap();
        wal.reset(1);
        wal.append(&[put(1, "a")]).unwrap();
        wal.append(&[put(2, "b")]).unwrap();
        assert!(wal.scan(Revision(0), Some(2)).unwrap().batches.is_empty());
        wal.reset(2);
        wal.append(&[put(1, "c")]).unwrap();
        let batches = wal.scan(Revision(0), Some(2)).unwrap().batches;
        let keys: Vec<&str> = batches
            .iter()
            .flatten()
            .map(|e| e.kv.key.as_str())
            .collect();
        assert_eq!(keys, ["c"]);
    }

    /// A log written before epochs is replayed by revision for a database without an epoch.
    #[test]
    fn a_log_from_before_epochs_is_replayed() {
        let dir = tempfile::tempdir().unwrap();
        let mut wal = Wal::open(&dir.path().join("wal")).unwrap();
        wal.reset(7);
        wal.append(&[put(1, "a")]).unwrap();
        // Rewrite the record in the old form: the old magic, no epoch in the payload.
        let mut header = [0u8; HEADER];
        wal.file.read_exact_at(&mut header, 0).unwrap();
        let len = u32::from_le_bytes(header[4..8].try_into().unwrap()) as usize;
        let mut payload = vec![0u8; len];
        wal.file.read_exact_at(&mut payload, HEADER as u64).unwrap();
        let legacy = &payload[8..];
        let mut record = Vec::new();
        record.extend_from_slice(&LEGACY_MAGIC.to_le_bytes());
        record.extend_from_slice(&(legacy.len() as u32).to_le_bytes());
        record.extend_from_slice(&crc32fast::hash(legacy).to_le_bytes());
        record.extend_from_slice(legacy);
        record.extend_from_slice(&[0u8; 8]);
        wal.file.write_all_at(&record, 0).unwrap();
        let batches = wal.scan(Revision(0), None).unwrap().batches;
        assert_eq!(batches.len(), 1);
        assert_eq!(batches[0][0].kv.key, "a");
        assert!(wal.scan(Revision(0), Some(7)).unwrap().batches.is_empty());
    }
}
