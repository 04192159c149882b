//! Faults injected on a real file system: the embedded store runs in a child process with a
//! small `LD_PRELOAD` library (`faults/shim.c`, built here with the machine's C compiler) that
//! fails one chosen write, sync, truncation or rename of the store's files with `EIO` or
//! `ENOSPC`, or kills the process at it, leaving a torn write behind. Between rounds this
//! process opens the store without faults and checks it against what the child was told:
//! every acknowledged write is there with its revision and its history, no write refused
//! before it was logged came back, nothing was invented, and no revision is ever reused.
//!
//! A process crash keeps what reached the page cache; what a power loss drops is covered by
//! the simulated disk of the crate's own tests (`power_loss.rs`).

use std::collections::{BTreeMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use bytes::Bytes;
use capstan_storage::{EmbeddedStore, EmbeddedStoreConfig, Error, ListRequest, Revision, Store};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// Seeds in a run; `CAPSTAN_FAULT_SEEDS` asks for more.
const SEEDS: u64 = 40;
const ROUNDS: u32 = 3;
const OPS_PER_ROUND: usize = 120;
const PREFIX: &str = "/k/";

fn main() {
    if let Ok(dir) = std::env::var("CAPSTAN_FAULT_CHILD") {
        let seed = std::env::var("CAPSTAN_FAULT_WORKLOAD").unwrap();
        child(Path::new(&dir), seed.parse().unwrap());
        return;
    }
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    if !filter.is_empty() && !filter.iter().any(|f| "real_fs_faults".contains(f.as_str())) {
        return;
    }
    let built = build_shim();
    let shim = built.path();
    let ops = dry_run(&shim);
    assert!(ops > 100, "the dry run counted only {ops} file operations");
    let seeds = std::env::var("CAPSTAN_FAULT_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(SEEDS);
    let mut faults = 0;
    for seed in 0..seeds {
        faults += run_seed(&shim, seed, ops);
    }
    // Most runs must have met their fault, or the test checked little.
    assert!(
        faults * 2 > seeds * u64::from(ROUNDS),
        "only {faults} rounds met their fault"
    );
    println!(
        "real_fs_faults: {seeds} seeds, {faults} faults injected over {ops} operations a round: ok"
    );
}

fn config(dir: &Path) -> EmbeddedStoreConfig {
    let mut config = EmbeddedStoreConfig::new(dir.join("store").join("capstan.db"));
    // Small enough that each round checkpoints, shrinks the log and renames files.
    config.checkpoint_bytes = 32 << 10;
    config.checkpoint_interval = Duration::from_millis(50);
    config
}

/// The shim compiled into a temporary directory.
struct Shim(tempfile::TempDir);

impl Shim {
    fn path(&self) -> PathBuf {
        self.0.path().join("shim.so")
    }
}

fn build_shim() -> Shim {
    let out = tempfile::tempdir().unwrap();
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/faults/shim.c");
    let status = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args(["-shared", "-fPIC", "-O1", "-o"])
        .arg(out.path().join("shim.so"))
        .arg(&source)
        .arg("-ldl")
        .status()
        .expect("a C compiler (cc) builds the fault shim");
    assert!(status.success(), "building {}", source.display());
    Shim(out)
}

/// How the child was told each planned write ended.
#[derive(Debug, Clone, PartialEq)]
enum Outcome {
    /// Acknowledged, with the revision it got (a delete's own revision).
    Acked(u64),
    /// Refused before it was logged: it must never show up.
    Refused,
    /// Its outcome is unknown (an indeterminate error, or the process died first).
    Unknown,
}

#[derive(Debug, Clone)]
struct Planned {
    key: String,
    /// The value's tag, or None for a delete.
    tag: Option<String>,
    outcome: Outcome,
}

/// What a key may hold now: one known state, or (after a write of unknown outcome) either.
#[derive(Debug, Clone, Default)]
struct KeyModel {
    /// Acceptable tags (None: absent).
    states: Vec<Option<String>>,
    /// The mod revision when the state is known and present.
    revision: Option<u64>,
}

struct Round {
    planned: Vec<Planned>,
    died: bool,
    met_fault: bool,
}

/// A fault: the operation it hits, its kind, and a later operation that kills the process.
type Fault<'a> = (u64, &'a str, Option<u64>);

/// This program as the child of a round: the store in `dir`, the shim counting its files.
fn child_command(shim: &Path, dir: &Path, workload: u64) -> Command {
    let mut command = Command::new(std::env::current_exe().unwrap());
    command
        .env("CAPSTAN_FAULT_CHILD", dir)
        .env("CAPSTAN_FAULT_WORKLOAD", workload.to_string())
        .env("LD_PRELOAD", shim)
        .env("CAPSTAN_FAULT_DIR", dir)
        .env("CAPSTAN_FAULT_SEED", workload.to_string());
    command
}

fn run_child(shim: &Path, dir: &Path, workload: u64, fault: Fault) -> Round {
    let mut command = child_command(shim, dir, workload);
    command.stdout(Stdio::piped()).stderr(Stdio::piped());
    let (at, kind, crash_at) = fault;
    command
        .env("CAPSTAN_FAULT_AT", at.to_string())
        .env("CAPSTAN_FAULT_KIND", kind);
    if let Some(crash_at) = crash_at {
        command.env("CAPSTAN_FAULT_CRASH_AT", crash_at.to_string());
    }
    let mut child = command.spawn().unwrap();
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let mut planned: Vec<Planned> = Vec::new();
    for line in stdout.lines() {
        let line = line.unwrap();
        let words: Vec<&str> = line.split(' ').collect();
        match words.as_slice() {
            ["plan", key, tag] => planned.push(Planned {
                key: key.to_string(),
                tag: (*tag != "-").then(|| tag.to_string()),
                outcome: Outcome::Unknown,
            }),
            ["ack", i, revision] => {
                planned[i.parse::<usize>().unwrap()].outcome =
                    Outcome::Acked(revision.parse().unwrap())
            }
            ["refused", i] => planned[i.parse::<usize>().unwrap()].outcome = Outcome::Refused,
            ["unknown", i] => planned[i.parse::<usize>().unwrap()].outcome = Outcome::Unknown,
            ["open-failed", ..] | ["done"] => {}
            _ => panic!("unexpected line from the child: {line}"),
        }
    }
    let output = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    let died = match output.status.code() {
        Some(0) => false,
        None => true, // killed by the shim
        Some(code) => panic!("the child failed ({code}): {stderr}"),
    };
    let counted: u64 = stderr
        .lines()
        .find_map(|l| l.strip_prefix("capstan-fault-ops "))
        .map_or(0, |n| n.parse().unwrap());
    let met_fault = died || counted >= at;
    Round {
        planned,
        died,
        met_fault,
    }
}

fn dry_run(shim: &Path) -> u64 {
    let dir = tempfile::tempdir().unwrap();
    let output = child_command(shim, dir.path(), 0).output().unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8_lossy(&output.stderr)
        .lines()
        .find_map(|l| l.strip_prefix("capstan-fault-ops "))
        .expect("the shim reports its count")
        .parse()
        .unwrap()
}

/// Rounds of one seed, each with its own fault; returns how many met their fault.
fn run_seed(shim: &Path, seed: u64, ops: u64) -> u64 {
    let mut rng = StdRng::seed_from_u64(seed);
    let dir = tempfile::tempdir().unwrap();
    let mut model: BTreeMap<String, KeyModel> = BTreeMap::new();
    let mut seen_revisions = HashSet::new();
    let mut met = 0;
    for round in 0..ROUNDS {
        let at = rng.random_range(1..=ops + ops / 5);
        let kind = match rng.random_range(0..4) {
            0 | 1 => "crash",
            2 => "eio",
            _ => "enospc",
        };
        // Half the failed operations are followed by a crash before a checkpoint repairs them.
        let crash_at =
            (kind != "crash" && rng.random_ratio(1, 2)).then(|| at + rng.random_range(1..40));
        let workload = seed * 100 + u64::from(round) + 1;
        let result = run_child(shim, dir.path(), workload, (at, kind, crash_at));
        met += u64::from(result.met_fault);
        let context = format!(
            "seed {seed}, round {round}: {kind} at operation {at}, crash at {crash_at:?} (died: {})",
            result.died
        );
        apply(&mut model, &result.planned, &mut seen_revisions, &context);
        verify(dir.path(), &mut model, &result.planned, &context);
    }
    met
}

/// Folds a round's outcomes into the model.
fn apply(
    model: &mut BTreeMap<String, KeyModel>,
    planned: &[Planned],
    seen_revisions: &mut HashSet<u64>,
    context: &str,
) {
    for write in planned {
        let entry = model.entry(write.key.clone()).or_insert_with(|| KeyModel {
            states: vec![None],
            revision: None,
        });
        match write.outcome {
            Outcome::Acked(revision) => {
                assert!(
                    seen_revisions.insert(revision),
                    "{context}: revision {revision} acknowledged twice"
                );
                entry.states = vec![write.tag.clone()];
                entry.revision = write.tag.as_ref().map(|_| revision);
            }
            Outcome::Refused => {}
            Outcome::Unknown => {
                if !entry.states.contains(&write.tag) {
                    entry.states.push(write.tag.clone());
                }
                entry.revision = None;
            }
        }
    }
}

/// Opens the store without faults and checks it against the model, which it then settles.
fn verify(dir: &Path, model: &mut BTreeMap<String, KeyModel>, planned: &[Planned], context: &str) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async {
        let store = EmbeddedStore::open(config(dir))
            .unwrap_or_else(|e| panic!("{context}: the store does not open: {e}"));
        let listed = store
            .list(ListRequest {
                prefix: PREFIX,
                start: None,
                limit: 0,
                revision: None,
            })
            .await
            .unwrap();
        let mut stored: BTreeMap<String, (String, u64)> = BTreeMap::new();
        for kv in &listed.items {
            let tag = String::from_utf8_lossy(&kv.value)
                .split('|')
                .next()
                .unwrap()
                .to_string();
            stored.insert(kv.key.clone(), (tag, kv.mod_revision.0));
        }
        for key in stored.keys() {
            assert!(
                model.contains_key(key),
                "{context}: {key} was never written"
            );
        }
        let mut highest = 0;
        for (key, expected) in model.iter_mut() {
            let found = stored.get(key);
            let state = found.map(|(tag, _)| tag.clone());
            assert!(
                expected.states.contains(&state),
                "{context}: {key} holds {state:?}, expected one of {:?}",
                expected.states
            );
            if let (Some(revision), Some((_, stored_revision))) = (expected.revision, found) {
                assert_eq!(
                    *stored_revision, revision,
                    "{context}: {key} at another revision than acknowledged"
                );
            }
            if let Some((_, revision)) = found {
                highest = highest.max(*revision);
            }
            expected.states = vec![state];
            expected.revision = found.map(|(_, r)| *r);
        }
        let current = store.current_revision().await.unwrap().0;
        assert!(
            current >= highest,
            "{context}: revision {current} < {highest}"
        );
        // Each acknowledged write of the round is in the history at its revision.
        for write in planned {
            if let (Outcome::Acked(revision), Some(tag)) = (&write.outcome, &write.tag) {
                let past = store
                    .list(ListRequest {
                        prefix: &write.key,
                        start: None,
                        limit: 1,
                        revision: Some(Revision(*revision)),
                    })
                    .await
                    .unwrap_or_else(|e| panic!("{context}: history at {revision}: {e}"));
                let value = past
                    .items
                    .first()
                    .filter(|kv| kv.key == write.key)
                    .map(|kv| kv.value.clone());
                assert!(
                    value
                        .as_ref()
                        .is_some_and(|v| v.starts_with(tag.as_bytes())),
                    "{context}: {} at revision {revision} is {value:?}, acknowledged {tag}",
                    write.key
                );
            }
        }
        // The next write gets a revision never handed out before.
        let next = store
            .create(&format!("/probe/{current}"), Bytes::from_static(b"probe"))
            .await
            .unwrap();
        assert!(next.mod_revision.0 > current, "{context}: revision reused");
        store.delete(&next.key, None).await.unwrap();
    });
}

/// The child: opens the store and writes what the workload seed says, telling the parent
/// each plan before it is sent and each outcome as it is known.
fn child(dir: &Path, workload: u64) {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    runtime.block_on(async move {
        let mut out = std::io::stdout().lock();
        let store = match EmbeddedStore::open(config(dir)) {
            Ok(store) => store,
            Err(err) => {
                writeln!(out, "open-failed {}", err.to_string().replace('\n', " ")).unwrap();
                return;
            }
        };
        let mut rng = StdRng::seed_from_u64(workload);
        let current = store
            .list(ListRequest {
                prefix: PREFIX,
                start: None,
                limit: 0,
                revision: None,
            })
            .await;
        let Ok(current) = current else {
            writeln!(out, "open-failed list").unwrap();
            return;
        };
        let mut live: Vec<(String, Revision)> = current
            .items
            .into_iter()
            .map(|kv| (kv.key, kv.mod_revision))
            .collect();
        let mut index = 0;
        let mut next_key = 0;
        while index < OPS_PER_ROUND {
            let group = rng.random_range(1..=4).min(OPS_PER_ROUND - index);
            let mut writes = Vec::new();
            for _ in 0..group {
                let tag = format!("w{workload}o{index}");
                let choice = if live.is_empty() {
                    0
                } else {
                    rng.random_range(0..10)
                };
                let size = if rng.random_ratio(1, 20) {
                    40_000
                } else {
                    rng.random_range(1..3000)
                };
                let value = Bytes::from(format!("{tag}|{}", "x".repeat(size)));
                let write = match choice {
                    0..=4 => {
                        let key = format!("{PREFIX}{workload}-{next_key}");
                        next_key += 1;
                        (key, Some(value), None)
                    }
                    5..=7 => {
                        let (key, revision) = live.swap_remove(rng.random_range(0..live.len()));
                        (key, Some(value), Some(revision))
                    }
                    _ => {
                        let (key, revision) = live.swap_remove(rng.random_range(0..live.len()));
                        (key, None, Some(revision))
                    }
                };
                let tag = if write.1.is_some() { tag } else { "-".into() };
                writeln!(out, "plan {} {tag}", write.0).unwrap();
                out.flush().unwrap();
                writes.push((index, write));
                index += 1;
            }
            let results = futures_util::future::join_all(writes.into_iter().map(
                |(i, (key, value, expected))| {
                    let store = &store;
                    let deleting = value.is_none();
                    async move {
                        let result = match (value, expected) {
                            (Some(value), None) => store.create(&key, value).await,
                            (Some(value), Some(revision)) => {
                                store.update(&key, value, revision).await
                            }
                            (None, revision) => store.delete(&key, revision).await,
                        };
                        (i, key, deleting, result)
                    }
                },
            ))
            .await;
            for (i, key, deleting, result) in results {
                match result {
                    Ok(kv) => {
                        writeln!(out, "ack {i} {}", kv.mod_revision.0).unwrap();
                        if !deleting {
                            live.push((key, kv.mod_revision));
                        }
                    }
                    Err(Error::Indeterminate(_)) => writeln!(out, "unknown {i}").unwrap(),
                    Err(_) => writeln!(out, "refused {i}").unwrap(),
                }
                out.flush().unwrap();
            }
        }
        writeln!(out, "done").unwrap();
        out.flush().unwrap();
    });
}
