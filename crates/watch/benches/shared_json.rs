//! What keeping a Pod's managedFields `fieldsV1` once costs and gives: splitting a served Pod
//! (5.3 KB, from `capstan-load --resource pods`) as the cache keeps it, and writing it out
//! whole and in pieces, against the same Pod kept in one buffer.
//!
//! `cargo bench -p capstan-watch --bench shared_json`

use std::hint::black_box;

use bytes::Bytes;
use capstan_watch::{CachedJson, SharedValues};
use criterion::{Criterion, criterion_group, criterion_main};

const POD: &[u8] = include_bytes!("pod.json");

fn shared_json(c: &mut Criterion) {
    let mut values = SharedValues::default();
    let whole = CachedJson::from(Bytes::from_static(POD));
    let shared = values.share(whole.clone());
    assert_eq!(shared, whole);
    println!(
        "a Pod of {} bytes keeps {} of its own",
        whole.len(),
        shared.own_len()
    );
    c.bench_function("share a pod (its fieldsV1 already kept)", |b| {
        b.iter(|| values.share(CachedJson::from(black_box(POD).to_vec())))
    });
    let mut out = Vec::with_capacity(2 * POD.len());
    for (name, json) in [("whole", &whole), ("shared", &shared)] {
        c.bench_function(&format!("write out a pod, {name}"), |b| {
            b.iter(|| {
                out.clear();
                black_box(json).write_to(&mut out);
            })
        });
        c.bench_function(&format!("a pod in one buffer, {name}"), |b| {
            b.iter(|| black_box(json).to_bytes())
        });
    }
}

criterion_group!(benches, shared_json);
criterion_main!(benches);
