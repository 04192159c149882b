//! Embedded store: durable creates with one writer and with many concurrent writers (group
//! commit), the writer's own cost per create (on a file system in memory), and point reads.
//! `cargo bench -p capstan-storage`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use capstan_storage::{EmbeddedStore, EmbeddedStoreConfig, Store};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};

fn value() -> Bytes {
    Bytes::from(vec![b'x'; 400])
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let store =
        Arc::new(EmbeddedStore::open(EmbeddedStoreConfig::new(dir.path().join("db"))).unwrap());
    let counter = Arc::new(AtomicU64::new(0));

    let mut group = c.benchmark_group("embedded_create");
    group.measurement_time(Duration::from_secs(5));
    for writers in [1u64, 16, 64] {
        group.throughput(Throughput::Elements(writers));
        group.bench_function(format!("{writers}_concurrent"), |b| {
            b.to_async(&rt).iter_custom(|iters| {
                let store = store.clone();
                let counter = counter.clone();
                async move {
                    let start = Instant::now();
                    let mut tasks = Vec::new();
                    for _ in 0..writers {
                        let store = store.clone();
                        let counter = counter.clone();
                        tasks.push(tokio::spawn(async move {
                            for _ in 0..iters {
                                let n = counter.fetch_add(1, Ordering::Relaxed);
                                store
                                    .create(&format!("/registry/storageclasses/sc-{n}"), value())
                                    .await
                                    .unwrap();
                            }
                        }));
                    }
                    for t in tasks {
                        t.await.unwrap();
                    }
                    start.elapsed()
                }
            })
        });
    }
    group.finish();

    // On a file system in memory the sync is nearly free, so the figure is the writer's own
    // cost per write: 64 writers on a store of 51,200 keys, each creating its own run of
    // keys, as a loaded server's clients do (their keys land all over the key space).
    if let Ok(shm) = tempfile::tempdir_in("/dev/shm") {
        let store =
            Arc::new(EmbeddedStore::open(EmbeddedStoreConfig::new(shm.path().join("db"))).unwrap());
        // A store of a loaded server's size first: 51,200 keys.
        rt.block_on(async {
            let tasks: Vec<_> = (0..64)
                .map(|writer| {
                    let store = store.clone();
                    tokio::spawn(async move {
                        for i in 0..800 {
                            let key = format!("/registry/pods/ns-{writer}/loaded-{i}");
                            store.create(&key, value()).await.unwrap();
                        }
                    })
                })
                .collect();
            for t in tasks {
                t.await.unwrap();
            }
        });
        let mut group = c.benchmark_group("embedded_create_in_memory_fs");
        group.measurement_time(Duration::from_secs(5));
        group.throughput(Throughput::Elements(64));
        let round = AtomicU64::new(0);
        group.bench_function("64_concurrent", |b| {
            b.to_async(&rt).iter_custom(|iters| {
                let store = store.clone();
                let first = round.fetch_add(iters, Ordering::Relaxed);
                async move {
                    let start = Instant::now();
                    let tasks: Vec<_> = (0..64)
                        .map(|writer| {
                            let store = store.clone();
                            tokio::spawn(async move {
                                for i in first..first + iters {
                                    let key = format!("/registry/pods/ns-{writer}/pod-{i}");
                                    store.create(&key, value()).await.unwrap();
                                }
                            })
                        })
                        .collect();
                    for t in tasks {
                        t.await.unwrap();
                    }
                    start.elapsed()
                }
            })
        });
        group.finish();
    }

    let mut group = c.benchmark_group("embedded_get");
    group.bench_function("point_read", |b| {
        b.to_async(&rt).iter(|| {
            let store = store.clone();
            async move { store.get("/registry/storageclasses/sc-1").await.unwrap() }
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
