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

/// A StorageClass as `capstan-load` creates it (760 bytes; its `fieldsV1` 169).
fn storage_class(i: usize) -> Vec<u8> {
    format!(
        r#"{{"kind":"StorageClass","apiVersion":"storage.k8s.io/v1","metadata":{{"name":"load-{i:06}","uid":"0b9f3f1e-5d1c-4a57-9a43-{i:012}","resourceVersion":"{i}","creationTimestamp":"2026-12-05T03:28:11Z","labels":{{"app":"load","capstan-load":"1796441291"}},"managedFields":[{{"manager":"capstan-load","operation":"Update","apiVersion":"storage.k8s.io/v1","time":"2026-12-05T03:28:11Z","fieldsType":"FieldsV1","fieldsV1":{{"f:metadata":{{"f:labels":{{".":{{}},"f:app":{{}},"f:capstan-load":{{}}}}}},"f:parameters":{{".":{{}},"f:type":{{}}}},"f:provisioner":{{}},"f:reclaimPolicy":{{}},"f:volumeBindingMode":{{}}}}}}]}},"provisioner":"example.com/load","parameters":{{"type":"fast"}},"reclaimPolicy":"Delete","volumeBindingMode":"Immediate"}}"#
    )
    .into_bytes()
}

/// A page of a list as the server sends it: 500 cached StorageClasses' JSON taken from the
/// cache (cloned) and written into one body.
fn list_page(c: &mut Criterion) {
    let mut values = SharedValues::default();
    let whole: Vec<CachedJson> = (0..500).map(|i| storage_class(i).into()).collect();
    let shared: Vec<CachedJson> = whole.iter().map(|j| values.share(j.clone())).collect();
    let mut out = Vec::with_capacity(500 * 800);
    for (name, page) in [("whole", &whole), ("shared", &shared)] {
        c.bench_function(&format!("a page of 500 StorageClasses, {name}"), |b| {
            b.iter(|| {
                let items: Vec<CachedJson> = black_box(page).to_vec();
                out.clear();
                for item in &items {
                    item.write_to(&mut out);
                }
                black_box(&out);
            })
        });
    }
}

criterion_group!(benches, shared_json, list_page);
criterion_main!(benches);
