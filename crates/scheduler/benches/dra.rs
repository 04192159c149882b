//! One scheduling cycle (PreFilter, Filter until enough feasible nodes, Score) of a pod on a
//! cluster of 1,000 nodes with eight GPUs each published in ResourceSlices: a plain pod, a
//! pod whose claim asks for one GPU of a model (DeviceClass CEL selector), and one asking for
//! two GPUs on the same NUMA node (a request selector and a matchAttribute constraint), with
//! half of every node's GPUs already allocated.
//!
//! `cargo bench -p capstan-scheduler --bench dra`

use capstan_scheduler::cache::Cache;
use capstan_scheduler::framework::PodInfo;
use capstan_scheduler::plugins::default_profile;
use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::resource::v1::{DeviceClass, ResourceClaim, ResourceSlice};
use serde_json::{Value, json};

const NODES: usize = 1000;

fn from<T: for<'de> k8s_openapi::serde::Deserialize<'de>>(v: Value) -> T {
    serde_json::from_value(v).unwrap()
}

fn cluster(claims: &[(&str, Value)]) -> Cache {
    let mut cache = Cache::default();
    for n in 0..NODES {
        let name = format!("node-{n}");
        cache.set_node(from::<Node>(json!({"metadata": {"name": name}, "status": {
            "allocatable": {"cpu": "32", "memory": "128Gi", "pods": "110"}}})));
        let devices: Vec<Value> = (0..8)
            .map(|i| {
                json!({"name": format!("gpu-{i}"), "attributes": {
                "model": {"string": if i % 2 == 0 { "a100" } else { "h100" }},
                "numa": {"int": i / 4}}, "capacity": {"memory": {"value": "80Gi"}}})
            })
            .collect();
        let index = cache.dra_index_mut();
        index.put_slice(from::<ResourceSlice>(
            json!({"metadata": {"name": format!("{name}-gpus"), "resourceVersion": "1"},
            "spec": {"driver": "gpu.example.com", "nodeName": name,
                "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                "devices": devices}}),
        ));
        // Half of the node's GPUs are held by running pods' claims: two a100s and two
        // h100s, leaving one NUMA node with a free pair.
        let results: Vec<Value> = [0, 1, 2, 5]
            .iter()
            .map(|i| {
                json!({"request": "r", "driver": "gpu.example.com", "pool": name,
                "device": format!("gpu-{i}")})
            })
            .collect();
        index.put_claim(from::<ResourceClaim>(
            json!({"metadata": {"name": format!("held-{n}"),
            "namespace": "default", "uid": format!("held-{n}")}, "spec": {},
            "status": {"allocation": {"devices": {"results": results}}}}),
        ));
    }
    let index = cache.dra_index_mut();
    for model in ["a100", "h100"] {
        index.put_class(from::<DeviceClass>(json!({"metadata": {"name": model}, "spec": {
            "selectors": [{"cel": {"expression": format!(
                "device.driver == 'gpu.example.com' && device.attributes['gpu.example.com'].model == '{model}'")}}]}})));
    }
    for (name, devices) in claims {
        index.put_claim(from::<ResourceClaim>(json!({"metadata": {"name": name,
            "namespace": "default", "uid": name}, "spec": {"devices": devices}})));
    }
    cache
}

fn pod(claim: Option<&str>) -> Pod {
    let claims = claim.map(|c| json!([{"name": "gpu", "resourceClaimName": c}]));
    from(
        json!({"metadata": {"name": "p", "namespace": "default", "uid": "p"}, "spec": {
        "containers": [{"name": "c", "image": "app", "resources": {"requests": {"cpu": "1"}}}],
        "resourceClaims": claims}}),
    )
}

fn cycle(c: &mut Criterion) {
    let one = json!({"requests": [{"name": "r", "exactly": {"deviceClassName": "h100"}}]});
    let pair = json!({"requests": [
            {"name": "a", "exactly": {"deviceClassName": "a100", "selectors": [{"cel": {"expression":
                "device.capacity['gpu.example.com'].memory.compareTo(quantity('40Gi')) >= 0"}}]}},
            {"name": "b", "exactly": {"deviceClassName": "h100"}}],
        "constraints": [{"matchAttribute": "gpu.example.com/numa"}]});
    let cache = cluster(&[("one", one), ("pair", pair)]);
    let profile = default_profile("default-scheduler");
    let mut group = c.benchmark_group("schedule one pod on 1,000 nodes");
    for (label, claim) in [
        ("plain pod", None),
        ("one GPU by class", Some("one")),
        ("two GPUs on one NUMA node", Some("pair")),
    ] {
        let p = pod(claim);
        group.bench_function(label, |b| {
            b.iter(|| {
                let mut info = PodInfo::new(p.clone());
                profile.select(&mut info, &cache).unwrap()
            })
        });
    }
    group.finish();
}

criterion_group!(benches, cycle);
criterion_main!(benches);
