//! Patch throughput: JSON patch, merge patch and strategic merge patch on a ~2 KB pod;
//! server-side apply (with its managedFields) on a ~10 KB pod; and the managedFields
//! bookkeeping every update pays.

use capstan_merge::Typed;
use capstan_merge::managed::{self, Ignored, ManagedFields, Writer};
use capstan_negotiation::schema::Schema;
use capstan_registry::PatchType;
use capstan_registry::patch;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

fn container(i: usize) -> Value {
    json!({"name": format!("app-{i}"), "image": format!("registry.example.com/team/app-{i}:1.27.3"),
        "ports": [{"containerPort": 8080 + i, "protocol": "TCP", "name": "http"}],
        "env": [{"name": "MODE", "value": "production"}, {"name": "LOG_LEVEL", "value": "info"},
                {"name": "POD_NAME", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}}],
        "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}, "limits": {"cpu": "500m", "memory": "128Mi"}},
        "livenessProbe": {"httpGet": {"path": "/healthz", "port": 8080 + i, "scheme": "HTTP"}, "periodSeconds": 10},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8080 + i, "scheme": "HTTP"}, "periodSeconds": 5},
        "volumeMounts": [{"name": "config", "mountPath": "/etc/app", "readOnly": true}],
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File",
        "imagePullPolicy": "IfNotPresent"})
}

fn pod(containers: usize) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web", "tier": "frontend"},
            "annotations": {"example.com/owner": "team-web"}},
        "spec": {"containers": (0..containers).map(container).collect::<Vec<_>>(),
            "volumes": [{"name": "config", "configMap": {"name": "web-config"}}],
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30, "dnsPolicy": "ClusterFirst",
            "serviceAccountName": "default", "schedulerName": "default-scheduler",
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}]}
    })
}

fn bench(c: &mut Criterion) {
    let typed = Typed::for_kind(Schema::upstream(), "v1", "Pod").unwrap();
    let small = pod(2);
    let large = pod(14);
    eprintln!(
        "pod sizes: {} bytes and {} bytes",
        serde_json::to_vec(&small).unwrap().len(),
        serde_json::to_vec(&large).unwrap().len()
    );
    let mut group = c.benchmark_group("patch_2kb_pod");
    let cases: [(&str, PatchType, Value); 3] = [
        (
            "json_patch",
            PatchType::Json,
            json!([
            {"op": "test", "path": "/metadata/labels/tier", "value": "frontend"},
            {"op": "replace", "path": "/spec/containers/0/image", "value": "registry.example.com/team/app-0:1.28"},
            {"op": "add", "path": "/metadata/labels/release", "value": "stable"}]),
        ),
        (
            "merge_patch",
            PatchType::Merge,
            json!({"metadata": {"labels": {"release": "stable"}},
            "spec": {"activeDeadlineSeconds": 600}}),
        ),
        (
            "strategic_merge_patch",
            PatchType::Strategic,
            json!({"metadata": {"labels": {"release": "stable"}},
            "spec": {"containers": [{"name": "app-0", "image": "registry.example.com/team/app-0:1.28"}]}}),
        ),
    ];
    for (name, kind, body) in cases {
        let body = serde_json::to_vec(&body).unwrap();
        group.bench_function(name, |b| {
            b.iter(|| {
                let mut doc = small.clone();
                patch::apply(kind, Some(&typed), &mut doc, &body).unwrap();
                doc
            })
        });
    }
    group.bench_function("managed_fields_update", |b| {
        let mut edited = small.clone();
        edited["spec"]["containers"][0]["image"] = json!("registry.example.com/team/app-0:1.28");
        let mut base = ManagedFields::default();
        managed::update(
            &typed,
            &mut base,
            None,
            &small,
            &Ignored::identity(),
            &writer("creator"),
        )
        .unwrap();
        b.iter(|| {
            let mut m = base.clone();
            managed::update(
                &typed,
                &mut m,
                Some(&small),
                &edited,
                &Ignored::identity(),
                &writer("editor"),
            )
            .unwrap();
            m.encode()
        })
    });
    group.finish();

    let mut group = c.benchmark_group("apply_10kb_pod");
    let mut managed_fields = ManagedFields::default();
    let live = managed::apply(
        &typed,
        &mut managed_fields,
        None,
        &large,
        &Ignored::identity(),
        &writer("deployer"),
        false,
    )
    .unwrap();
    let mut next = large.clone();
    next["spec"]["containers"][7]["image"] = json!("registry.example.com/team/app-7:1.28");
    group.bench_function("server_side_apply_one_change", |b| {
        b.iter(|| {
            let mut m = managed_fields.clone();
            let merged = managed::apply(
                &typed,
                &mut m,
                Some(live.clone()),
                &next,
                &Ignored::identity(),
                &writer("deployer"),
                false,
            )
            .unwrap();
            (merged, m.encode())
        })
    });
    group.bench_function("server_side_apply_conflict", |b| {
        b.iter(|| {
            let mut m = managed_fields.clone();
            managed::apply(
                &typed,
                &mut m,
                Some(live.clone()),
                &next,
                &Ignored::identity(),
                &writer("other"),
                false,
            )
            .unwrap_err()
        })
    });
    group.finish();
}

fn writer(manager: &'static str) -> Writer<'static> {
    Writer {
        manager,
        api_version: "v1",
        subresource: "",
        now: "2026-11-23T17:00:00Z",
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
