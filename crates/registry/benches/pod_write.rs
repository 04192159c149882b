//! The conversions a Pod create makes between a ~2.5 KB pod's typed form and its JSON, each
//! timed alone: the request body read, the tree made for managedFields and admission, the
//! admitted tree read back (through its bytes, as most kinds do, or straight from the tree,
//! as pods do), the admitted tree brought up to date after the create's own changes (rather
//! than made again), the managedFields of a create and of an update, the tree stored as
//! protobuf, the response written, and the stored pod an update replaces read back.

use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

/// The load harness's pod as mutating admission leaves it (service account token volume,
/// default tolerations, priority).
fn admitted_pod() -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "load-1-64-3-17", "namespace": "default",
            "labels": {"app": "load", "pod-template-hash": "5d8f7c9b6", "capstan-load": "1",
                "generation": "0"},
            "annotations": {"example.com/owner": "capstan-load", "example.com/revision": "3"}},
        "spec": {
            "containers": [{
                "name": "app", "image": "registry.example.com/team/app:1.27.3",
                "args": ["--port=8080", "--log-level=info", "--config=/etc/app/config.yaml"],
                "ports": [{"containerPort": 8080, "name": "http", "protocol": "TCP"},
                    {"containerPort": 9090, "name": "metrics", "protocol": "TCP"}],
                "env": [
                    {"name": "POD_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.name"}}},
                    {"name": "POD_NAMESPACE", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}},
                    {"name": "GOMAXPROCS", "value": "2"}],
                "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}, "limits": {"cpu": "1", "memory": "512Mi"}},
                "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080, "scheme": "HTTP"},
                    "initialDelaySeconds": 10, "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3},
                "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080, "scheme": "HTTP"},
                    "timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3},
                "volumeMounts": [{"name": "config", "mountPath": "/etc/app"}, {"name": "tmp", "mountPath": "/tmp"},
                    {"name": "kube-api-access-x7k2p", "readOnly": true, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}],
                "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
                "imagePullPolicy": "IfNotPresent",
                "securityContext": {"runAsNonRoot": true, "allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}}
            }],
            "volumes": [{"name": "config", "configMap": {"name": "app-config", "defaultMode": 420}},
                {"name": "tmp", "emptyDir": {}},
                {"name": "kube-api-access-x7k2p", "projected": {"defaultMode": 420, "sources": [
                    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                    {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}}],
            "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
                {"weight": 100, "podAffinityTerm": {"labelSelector": {"matchLabels": {"app": "load"}}, "topologyKey": "kubernetes.io/hostname"}}]}},
            "tolerations": [{"key": "dedicated", "operator": "Equal", "value": "load", "effect": "NoSchedule"},
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}],
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default", "serviceAccount": "default", "securityContext": {},
            "schedulerName": "default-scheduler", "priority": 0, "enableServiceLinks": true,
            "preemptionPolicy": "PreemptLowerPriority"
        },
        "status": {"phase": "Pending", "qosClass": "Burstable"}
    })
}

fn bench(c: &mut Criterion) {
    let tree = admitted_pod();
    let bytes = serde_json::to_vec(&tree).unwrap();
    let typed: Pod = serde_json::from_slice(&bytes).unwrap();
    eprintln!("pod: {} bytes of JSON", bytes.len());
    let mut group = c.benchmark_group("pod_write_2kb");
    group.bench_function("body_to_typed", |b| {
        b.iter(|| serde_json::from_slice::<Pod>(&bytes).unwrap())
    });
    group.bench_function("body_to_typed_checked", |b| {
        b.iter(|| {
            let mut de = serde_json::Deserializer::from_slice(&bytes);
            let mut n = 0;
            let pod: Pod = serde_ignored::deserialize(&mut de, |_| n += 1).unwrap();
            (pod, n)
        })
    });
    group.bench_function("body_to_tree", |b| {
        b.iter(|| serde_json::from_slice::<Value>(&bytes).unwrap())
    });
    group.bench_function("typed_to_tree", |b| {
        b.iter(|| serde_json::to_value(&typed).unwrap())
    });
    group.bench_function("admitted_tree_to_typed_through_bytes", |b| {
        b.iter_batched(
            || tree.clone(),
            |tree| serde_json::from_slice::<Pod>(&serde_json::to_vec(&tree).unwrap()).unwrap(),
            criterion::BatchSize::SmallInput,
        )
    });
    group.bench_function("admitted_tree_to_typed_straight", |b| {
        b.iter_batched(
            || tree.clone(),
            |tree| serde_json::from_value::<Pod>(tree).unwrap(),
            criterion::BatchSize::SmallInput,
        )
    });
    group.bench_function("admitted_tree_to_typed_by_reference", |b| {
        b.iter(|| <Pod as serde::Deserialize>::deserialize(&tree).unwrap())
    });
    // What a create changes between mutating and validating admission: the system fields
    // and the status; the admitted tree is brought up to date instead of made again.
    let mut created = typed.clone();
    created.metadata.uid = Some("6f1c2d4e-0b7a-4c59-9a51-3e8d2f7b1c60".into());
    created.metadata.creation_timestamp =
        Some(k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(
            "2026-12-06T01:00:00Z".parse().unwrap(),
        ));
    created.status.as_mut().unwrap().phase = Some("Pending".into());
    group.bench_function("created_typed_to_tree", |b| {
        b.iter(|| serde_json::to_value(&created).unwrap())
    });
    group.bench_function("admitted_tree_synced_with_created", |b| {
        b.iter_batched(
            || tree.clone(),
            |mut tree| {
                capstan_registry::tree_sync::sync_tree(&created, &mut tree).unwrap();
                tree
            },
            criterion::BatchSize::SmallInput,
        )
    });
    // managedFields of a create: every field the pod sets, as one entry's fieldsV1.
    let schema = capstan_negotiation::schema::Schema::upstream();
    let typed_schema = capstan_merge::Typed::at(schema, schema.kind("v1", "Pod").unwrap());
    let ignored = capstan_merge::managed::Ignored::identity().with_top_level(&["status"]);
    let writer = capstan_merge::managed::Writer {
        manager: "capstan-load",
        api_version: "v1",
        subresource: "",
        now: "2026-12-06T01:00:00Z",
    };
    group.bench_function("managed_fields_of_a_create", |b| {
        b.iter(|| {
            let mut entries = capstan_merge::ManagedFields::decode(None).unwrap();
            capstan_merge::managed::update(
                &typed_schema,
                &mut entries,
                None,
                &tree,
                &ignored,
                &writer,
            )
            .unwrap();
            entries.encode()
        })
    });
    group.bench_function("managed_fields_of_a_create_straight", |b| {
        b.iter(|| capstan_merge::managed::created(&typed_schema, &tree, &ignored, &writer).unwrap())
    });
    group.bench_function("typed_to_response_bytes", |b| {
        b.iter(|| serde_json::to_vec(&typed).unwrap())
    });
    let codec = capstan_registry::stored::StorageCodec {
        media_type: capstan_registry::StorageMediaType::Protobuf,
        transformer: None,
    };
    group.bench_function("tree_to_stored_protobuf", |b| {
        b.iter_batched(
            || tree.clone(),
            |tree| {
                codec
                    .encode_exact(
                        "/registry/pods/default/p",
                        capstan_registry::stored::Plain::Document(tree),
                    )
                    .unwrap()
            },
            criterion::BatchSize::SmallInput,
        )
    });
    // managedFields of an update that relabels a stored pod (as controllers write one back):
    // the stored entries read, old and new compared, the entries written again.
    let mut stored = tree.clone();
    stored["metadata"]["managedFields"] =
        capstan_merge::managed::created(&typed_schema, &tree, &ignored, &writer)
            .unwrap()
            .unwrap();
    let mut relabelled = stored.clone();
    relabelled["metadata"]["labels"]["generation"] = "1".into();
    let stored_entries = stored["metadata"]["managedFields"].clone();
    // The stored pod (managedFields included) read back from the watch cache's JSON, as an
    // update reads the object it replaces: with and without the unknown-field tracking a
    // request body gets.
    let stored_bytes = serde_json::to_vec(&stored).unwrap();
    group.bench_function("stored_to_typed", |b| {
        b.iter(|| serde_json::from_slice::<Pod>(&stored_bytes).unwrap())
    });
    let stored_typed: Pod = serde_json::from_slice(&stored_bytes).unwrap();
    group.bench_function("stored_typed_to_tree", |b| {
        b.iter(|| serde_json::to_value(&stored_typed).unwrap())
    });
    group.bench_function("stored_to_tree", |b| {
        b.iter(|| serde_json::from_slice::<Value>(&stored_bytes).unwrap())
    });
    // As the registry reads it (`parse_own_json`): the text's UTF-8 checked once, in one pass.
    group.bench_function("stored_to_tree_as_text", |b| {
        b.iter(|| {
            let text = std::str::from_utf8(&stored_bytes).unwrap();
            serde_json::from_str::<Value>(text).unwrap()
        })
    });
    let stored_tree: Value = serde_json::from_slice(&stored_bytes).unwrap();
    group.bench_function("stored_tree_to_typed_by_reference", |b| {
        b.iter(|| <Pod as serde::Deserialize>::deserialize(&stored_tree).unwrap())
    });
    // The same with the entries left in the tree (the field tracker reads them there).
    let mut stored_tree_bare = stored_tree.clone();
    stored_tree_bare["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("managedFields");
    group.bench_function("stored_tree_to_typed_without_entries", |b| {
        b.iter(|| <Pod as serde::Deserialize>::deserialize(&stored_tree_bare).unwrap())
    });
    // A patch's document: the stored tree copied, against the stored object made a tree.
    group.bench_function("stored_tree_cloned", |b| b.iter(|| stored_tree.clone()));
    group.bench_function("stored_to_typed_checked", |b| {
        b.iter(|| {
            let mut de = serde_json::Deserializer::from_slice(&stored_bytes);
            let pod: Pod = serde_ignored::deserialize(&mut de, |_| {}).unwrap();
            pod
        })
    });
    group.bench_function("managed_fields_of_a_relabelling_update", |b| {
        b.iter(|| {
            let mut entries = capstan_merge::ManagedFields::decode(Some(&stored_entries)).unwrap();
            capstan_merge::managed::update(
                &typed_schema,
                &mut entries,
                Some(&stored),
                &relabelled,
                &ignored,
                &writer,
            )
            .unwrap();
            entries.encode()
        })
    });
    group.bench_function("managed_fields_of_a_relabelling_update_in_place", |b| {
        b.iter(|| {
            capstan_merge::managed::Changes::of(&typed_schema, Some(&stored), &relabelled, &ignored)
                .unwrap()
                .record_in_place(&stored_entries, &writer)
                .unwrap()
        })
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
