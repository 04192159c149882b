//! Write latency under steady load with compactions and checkpoints: 64 writers rewrite
//! their own keys for a while, the history is compacted every 3 s, and every write's latency
//! is kept. Prints throughput and the latency percentiles per checkpoint interval.
//! `cargo bench -p capstan-storage --bench stalls [-- <seconds>]`; the environment may set
//! `INTERVALS_MS` (checkpoint intervals, comma-separated; 1000,250), `CHECKPOINT_MB` (log
//! bytes that force a checkpoint; the store's default) and `COMPACT_EVERY` (seconds; 3, 0
//! for none).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use capstan_storage::{EmbeddedStore, EmbeddedStoreConfig, Store};

const WRITERS: usize = 64;
const KEYS_PER_WRITER: usize = 100;

/// A number from the environment.
fn env(name: &str) -> Option<u64> {
    std::env::var(name).ok()?.parse().ok()
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 * p).ceil() as usize).clamp(1, sorted.len()) - 1;
    sorted[i].as_secs_f64() * 1e3
}

async fn run(checkpoint_interval: Duration, seconds: u64) {
    let dir = tempfile::tempdir().unwrap();
    let defaults = EmbeddedStoreConfig::new(dir.path().join("db"));
    let config = EmbeddedStoreConfig {
        checkpoint_interval,
        checkpoint_bytes: env("CHECKPOINT_MB").map_or(defaults.checkpoint_bytes, |mb| mb << 20),
        ..defaults
    };
    let store = Arc::new(EmbeddedStore::open(config).unwrap());
    let value = Bytes::from(vec![b'x'; 1000]);
    for w in 0..WRITERS {
        for k in 0..KEYS_PER_WRITER {
            store
                .create(&format!("/registry/things/{w}/{k}"), value.clone())
                .await
                .unwrap();
        }
    }
    let stop = Arc::new(AtomicBool::new(false));
    let compactor = tokio::spawn({
        let store = store.clone();
        let stop = stop.clone();
        async move {
            let mut previous = None;
            let mut compactions = 0;
            let every = env("COMPACT_EVERY").unwrap_or(3);
            while !stop.load(Ordering::Relaxed) && every > 0 {
                tokio::time::sleep(Duration::from_secs(every)).await;
                let now = store.current_revision().await.unwrap();
                if let Some(target) = previous.replace(now) {
                    store.compact(target).await.unwrap();
                    compactions += 1;
                }
            }
            compactions
        }
    });
    let started = Instant::now();
    let writers: Vec<_> = (0..WRITERS)
        .map(|w| {
            let store = store.clone();
            let stop = stop.clone();
            let value = value.clone();
            tokio::spawn(async move {
                let mut latencies = Vec::new();
                let mut revisions = Vec::new();
                for k in 0..KEYS_PER_WRITER {
                    let (kv, _) = store
                        .get(&format!("/registry/things/{w}/{k}"))
                        .await
                        .unwrap();
                    revisions.push(kv.unwrap().mod_revision);
                }
                let mut k = 0;
                while !stop.load(Ordering::Relaxed) {
                    let key = format!("/registry/things/{w}/{k}");
                    let at = Instant::now();
                    let kv = store
                        .update(&key, value.clone(), revisions[k])
                        .await
                        .unwrap();
                    latencies.push(at.elapsed());
                    revisions[k] = kv.mod_revision;
                    k = (k + 1) % KEYS_PER_WRITER;
                }
                latencies
            })
        })
        .collect();
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    stop.store(true, Ordering::Relaxed);
    let mut all = Vec::new();
    for w in writers {
        all.extend(w.await.unwrap());
    }
    let elapsed = started.elapsed();
    let compactions = compactor.await.unwrap();
    all.sort();
    println!(
        "| {checkpoint_interval:?} | {compactions} | {:.0} | {:.2} | {:.2} | {:.2} | {:.2} |",
        all.len() as f64 / elapsed.as_secs_f64(),
        percentile(&all, 0.5),
        percentile(&all, 0.99),
        percentile(&all, 0.999),
        all.last().map_or(0.0, |d| d.as_secs_f64() * 1e3),
    );
}

fn main() {
    let seconds = std::env::args()
        .skip(1)
        .find_map(|a| a.parse().ok())
        .unwrap_or(15);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    println!(
        "| checkpoint interval | compactions | updates/s | p50 ms | p99 ms | p99.9 ms | max ms |"
    );
    println!("|---|---|---|---|---|---|---|");
    let intervals: Vec<u64> = std::env::var("INTERVALS_MS")
        .ok()
        .map(|v| v.split(',').filter_map(|x| x.parse().ok()).collect())
        .unwrap_or(vec![1000, 250]);
    for interval in intervals.into_iter().map(Duration::from_millis) {
        rt.block_on(run(interval, seconds));
    }
}
