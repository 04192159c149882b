//! Relists saved by the time-sized window: watchers that disconnect and resume from the last
//! revision they saw, while a writer churns the resource, against the cache with the old fixed
//! window of 100 changes and with the window sized by time (75 s, upstream's). Prints, for
//! each change rate, how many resumes carried on and how many got 410 (a relist).
//!
//! `cargo bench -p capstan-watch --bench resumes` (`RESUMES_SECONDS` sets each run's length,
//! 20 s by default). It counts; it does not time.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use capstan_storage::{EmbeddedStore, EmbeddedStoreConfig, KeyValue, Store};
use capstan_watch::{
    CachedObject, Decode, Error, Fields, Filter, Pairs, WatchCache, WatchCacheConfig,
};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

const WATCHERS: u64 = 50;
const KEYS: usize = 1000;

fn decode() -> Decode {
    Arc::new(|kv: &KeyValue| {
        Ok(CachedObject {
            key: kv.key.clone(),
            revision: kv.mod_revision,
            json: kv.value.clone().into(),
            labels: Pairs::default(),
            fields: Fields::default(),
            protobuf: Default::default(),
            stored_crc: None,
        })
    })
}

#[derive(Default)]
struct Counts {
    resumed: AtomicU64,
    expired: AtomicU64,
}

/// Runs one configuration: (watches started, 410s, changes written per second).
async fn run(rate: u64, config: WatchCacheConfig, seconds: u64) -> (u64, u64, u64) {
    let dir = tempfile::tempdir().unwrap();
    let store: Arc<dyn Store> =
        Arc::new(EmbeddedStore::open(EmbeddedStoreConfig::new(dir.path().join("db"))).unwrap());
    let value = Bytes::from(vec![b'x'; 1000]);
    for i in 0..KEYS {
        store
            .create(&format!("/r/{i}"), value.clone())
            .await
            .unwrap();
    }
    let cache = Arc::new(WatchCache::start(
        store.clone(),
        "/r/".into(),
        decode(),
        config,
    ));
    cache
        .wait_for(
            store.current_revision().await.unwrap(),
            Duration::from_secs(10),
        )
        .await
        .unwrap();
    let first = store.current_revision().await.unwrap().0;
    let started = Instant::now();
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (store, stop, value) = (store.clone(), stop.clone(), value.clone());
        tokio::spawn(async move {
            // Writes in ticks of 10 ms, each tick's share at once.
            let per_tick = (rate / 100).max(1);
            let mut tick = tokio::time::interval(Duration::from_millis(1000 * per_tick / rate));
            let mut i = 0usize;
            while !stop.load(Ordering::Relaxed) {
                tick.tick().await;
                let writes = (0..per_tick).map(|_| {
                    i += 1;
                    let store = store.clone();
                    let key = format!("/r/{}", i % KEYS);
                    let value = value.clone();
                    async move {
                        let (current, _) = store.get(&key).await.unwrap();
                        let _ = store
                            .update(&key, value, current.unwrap().mod_revision)
                            .await;
                    }
                });
                futures_util::future::join_all(writes).await;
            }
        })
    };
    let counts = Arc::new(Counts::default());
    let all: Filter = Arc::new(|_| true);
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let watchers: Vec<_> = (0..WATCHERS)
        .map(|n| {
            let (cache, counts, all) = (cache.clone(), counts.clone(), all.clone());
            tokio::spawn(async move {
                let mut rng = StdRng::seed_from_u64(n);
                let mut from = cache.revision();
                while Instant::now() < deadline {
                    let mut watch = match cache.watch("/r/", Some(from), all.clone()) {
                        Ok(watch) => {
                            counts.resumed.fetch_add(1, Ordering::Relaxed);
                            watch
                        }
                        Err(Error::Expired { .. }) => {
                            counts.expired.fetch_add(1, Ordering::Relaxed);
                            // A relist: start again from the present.
                            from = cache.revision();
                            continue;
                        }
                        Err(err) => panic!("{err}"),
                    };
                    for event in &watch.initial {
                        from = event.object.revision;
                    }
                    // Connected for a while, then the connection breaks.
                    let connected = Duration::from_millis(rng.random_range(500..3000));
                    let _ = tokio::time::timeout(connected, async {
                        while let Some(event) = watch.events.recv().await {
                            from = event.object.revision;
                        }
                    })
                    .await;
                    drop(watch);
                    // Gone for a reconnect, a backoff, or a longer outage.
                    let gap = match rng.random_range(0..3) {
                        0 => Duration::from_millis(50),
                        1 => Duration::from_secs(1),
                        _ => Duration::from_secs(10),
                    };
                    tokio::time::sleep(gap).await;
                }
            })
        })
        .collect();
    for watcher in watchers {
        watcher.await.unwrap();
    }
    stop.store(true, Ordering::Relaxed);
    writer.await.unwrap();
    let elapsed = started.elapsed().as_secs_f64();
    let written = store.current_revision().await.unwrap().0 - first;
    (
        counts.resumed.load(Ordering::Relaxed),
        counts.expired.load(Ordering::Relaxed),
        (written as f64 / elapsed) as u64,
    )
}

fn main() {
    let seconds = std::env::var("RESUMES_SECONDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    println!(
        "{WATCHERS} watchers, connected 0.5-3 s, then gone 50 ms, 1 s or 10 s; {seconds} s a run"
    );
    println!("| changes/s asked (made) | window | watches started | 410s (relists) |");
    println!("|---|---|---|---|");
    for rate in [20, 200, 2000] {
        for (name, config) in [
            (
                "100 changes (before)",
                WatchCacheConfig {
                    fresh: Duration::ZERO,
                    ..WatchCacheConfig::default()
                },
            ),
            ("75 s (now)", WatchCacheConfig::default()),
        ] {
            let (started, expired, made) = runtime.block_on(run(rate, config, seconds));
            println!("| {rate} ({made}) | {name} | {started} | {expired} |");
        }
    }
}
