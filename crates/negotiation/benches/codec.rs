//! Encode and decode throughput of JSON and protobuf: one pod, and a list of 10,000
//! StorageClasses (the list the load harness serves).

use capstan_negotiation::protobuf::Codec;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use serde_json::{Value, json};

fn pod() -> Value {
    json!({
        "kind": "Pod", "apiVersion": "v1",
        "metadata": {"name": "web-7d4b9c8f5-abcde", "namespace": "default", "uid": "3611f40e-c1fb-4576-a42d-6cfb3dbe8408",
            "resourceVersion": "123456", "creationTimestamp": "2026-11-22T07:00:00Z",
            "labels": {"app": "web", "pod-template-hash": "7d4b9c8f5"},
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-7d4b9c8f5",
                "uid": "0a8fe3f4-ca1f-4d4e-8f90-09d785c4d514", "controller": true, "blockOwnerDeletion": true}]},
        "spec": {
            "containers": [{"name": "app", "image": "nginx:1.27", "ports": [{"containerPort": 80, "protocol": "TCP"}],
                "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "500m", "memory": "128Mi"}},
                "livenessProbe": {"httpGet": {"path": "/healthz", "port": 80, "scheme": "HTTP"}, "periodSeconds": 10},
                "volumeMounts": [{"name": "kube-api-access", "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount", "readOnly": true}],
                "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}],
            "volumes": [{"name": "kube-api-access", "projected": {"defaultMode": 420, "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}}]}}],
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default", "nodeName": "node-1", "schedulerName": "default-scheduler",
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
            "priority": 0, "enableServiceLinks": true, "preemptionPolicy": "PreemptLowerPriority"},
        "status": {"phase": "Running", "podIP": "10.244.1.5", "startTime": "2026-11-22T07:00:01Z", "qosClass": "Burstable",
            "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-11-22T07:00:03Z"}],
            "containerStatuses": [{"name": "app", "ready": true, "restartCount": 0, "image": "nginx:1.27",
                "imageID": "docker.io/library/nginx@sha256:abc", "started": true,
                "state": {"running": {"startedAt": "2026-11-22T07:00:02Z"}}}]}
    })
}

fn storage_class(i: usize) -> Vec<u8> {
    serde_json::to_vec(
        &json!({"kind": "StorageClass", "apiVersion": "storage.k8s.io/v1",
        "metadata": {"name": format!("load-{i}"), "uid": "3611f40e-c1fb-4576-a42d-6cfb3dbe8408",
            "resourceVersion": format!("{}", 1000 + i), "creationTimestamp": "2026-11-22T07:00:00Z",
            "labels": {"run": "bench", "index": format!("{i}")}},
        "provisioner": "example.com/ssd", "parameters": {"type": "ssd", "iops": "3000"},
        "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate", "allowVolumeExpansion": true}),
    )
    .unwrap()
}

fn single(c: &mut Criterion) {
    let codec = Codec::default();
    let doc = pod();
    let json = serde_json::to_vec(&doc).unwrap();
    let proto = codec.encode_object(&doc).unwrap();
    let mut g = c.benchmark_group("pod");
    g.throughput(Throughput::Elements(1));
    g.bench_function("json encode", |b| {
        b.iter(|| serde_json::to_vec(&doc).unwrap())
    });
    g.bench_function("json decode", |b| {
        b.iter(|| serde_json::from_slice::<Value>(&json).unwrap())
    });
    g.bench_function("protobuf encode", |b| {
        b.iter(|| codec.encode_object(&doc).unwrap())
    });
    g.bench_function("protobuf decode", |b| {
        b.iter(|| codec.decode_object(&proto).unwrap())
    });
    g.bench_function("protobuf from json bytes", |b| {
        b.iter(|| codec.encode_object_bytes(&json).unwrap())
    });
    // Stored protobuf to JSON bytes, as a watch cache loads it: through the tree, and direct.
    g.bench_function("protobuf to json bytes through the tree", |b| {
        b.iter(|| serde_json::to_vec(&codec.decode_object(&proto).unwrap()).unwrap())
    });
    g.bench_function("protobuf to json bytes direct", |b| {
        b.iter(|| codec.decode_object_json(&proto).unwrap())
    });
    g.finish();
    println!(
        "pod: {} bytes JSON, {} bytes protobuf",
        json.len(),
        proto.len()
    );
}

fn list(c: &mut Criterion) {
    let codec = Codec::default();
    let items: Vec<Vec<u8>> = (0..10_000).map(storage_class).collect();
    let meta = json!({"resourceVersion": "20000"});
    let raws: Vec<Vec<u8>> = items
        .iter()
        .map(|j| {
            codec
                .encode_item("storage.k8s.io/v1", "StorageClass", j)
                .unwrap()
        })
        .collect();
    let mut json_list = br#"{"kind":"StorageClassList","apiVersion":"storage.k8s.io/v1","metadata":{"resourceVersion":"20000"},"items":["#.to_vec();
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            json_list.push(b',');
        }
        json_list.extend_from_slice(item);
    }
    json_list.extend_from_slice(b"]}");
    let proto_list = codec
        .assemble_list("storage.k8s.io/v1", "StorageClassList", &meta, &raws)
        .unwrap();
    println!(
        "10,000 StorageClasses: {:.2} MB JSON, {:.2} MB protobuf",
        json_list.len() as f64 / 1e6,
        proto_list.len() as f64 / 1e6
    );
    let mut g = c.benchmark_group("list 10000");
    g.sample_size(10);
    g.throughput(Throughput::Elements(10_000));
    g.bench_function("json decode", |b| {
        b.iter(|| serde_json::from_slice::<Value>(&json_list).unwrap())
    });
    g.bench_function("protobuf decode", |b| {
        b.iter(|| codec.decode_object(&proto_list).unwrap())
    });
    g.bench_function("protobuf encode from json items", |b| {
        b.iter(|| {
            codec
                .encode_list(
                    "storage.k8s.io/v1",
                    "StorageClassList",
                    "StorageClass",
                    &meta,
                    items.iter().map(Vec::as_slice),
                )
                .unwrap()
        })
    });
    g.bench_function("protobuf assemble from cached items", |b| {
        b.iter(|| {
            codec
                .assemble_list("storage.k8s.io/v1", "StorageClassList", &meta, &raws)
                .unwrap()
        })
    });
    g.finish();
}

/// Building the upstream schemas from the embedded descriptor set (once per process, at
/// start-up).
fn schema(c: &mut Criterion) {
    c.bench_function("schema/load upstream", |b| {
        b.iter(capstan_negotiation::schema::Schema::load_upstream)
    });
}

criterion_group!(benches, single, list, schema);
criterion_main!(benches);
