//! What the default admission chain costs a pod create in process: the JSON round trip of
//! the object plus NamespaceLifecycle, ServiceAccount, Priority and DefaultTolerationSeconds,
//! with the namespace, its account and the classes in memory (the server reads them from its
//! watch caches). Once with the pod as a JSON tree (each pod plugin then reads it typed and
//! writes it back), once with the typed pod, as the server's registry lends it (the tree
//! made after the mutating phase, for the validating one).

use std::any::Any;
use std::sync::Arc;

use capstan_admission::plugins::{Context, chain};
use capstan_admission::{AdmissionOptions, Attributes, MemoryLister, Operation, TypedObject};
use capstan_auth::UserInfo;
use capstan_meta::{ApiError, GroupResource};
use criterion::{Criterion, criterion_group, criterion_main};
use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

fn pod() -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "web-5d8f7c9b6-x2x7q", "namespace": "default",
            "labels": {"app": "web", "pod-template-hash": "5d8f7c9b6"}},
        "spec": {"containers": [{"name": "app", "image": "registry.example.com/team/app:1.27.3",
            "args": ["--port=8080"], "ports": [{"containerPort": 8080}],
            "resources": {"requests": {"cpu": "250m", "memory": "256Mi"}},
            "env": [{"name": "A", "value": "b"}]}],
            "volumes": [{"name": "config", "configMap": {"name": "app-config"}}]}})
}

/// The create's attributes, without its object.
fn create() -> Attributes {
    let mut a = Attributes::new(
        Operation::Create,
        GroupResource::new("", "pods"),
        UserInfo::default(),
    );
    a.namespace = "default".into();
    a.name = "web-5d8f7c9b6-x2x7q".into();
    a
}

/// The pod lent typed.
struct Typed(Pod);

impl TypedObject for Typed {
    fn as_any(&self) -> &dyn Any {
        &self.0
    }

    fn as_any_mut(&mut self) -> &mut (dyn Any + Send) {
        &mut self.0
    }

    fn to_tree(&mut self) -> Result<Value, ApiError> {
        serde_json::to_value(&self.0).map_err(ApiError::internal)
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    let classes = GroupResource::new("scheduling.k8s.io", "priorityclasses");
    let mut objects = MemoryLister::new().with(
        GroupResource::new("", "namespaces"),
        "",
        json!({"metadata": {"name": "default"}, "status": {"phase": "Active"}}),
    );
    objects = objects.with(
        GroupResource::new("", "serviceaccounts"),
        "default",
        json!({"metadata": {"name": "default", "namespace": "default"}}),
    );
    for (name, value) in [
        ("system-cluster-critical", 2_000_000_000),
        ("system-node-critical", 2_000_001_000),
    ] {
        objects = objects.with(
            classes.clone(),
            "",
            json!({"metadata": {"name": name}, "value": value}),
        );
    }
    let ctx = Context {
        lister: Arc::new(objects),
        not_ready_toleration_seconds: 300,
        unreachable_toleration_seconds: 300,
        namespace_creator: None,
        external: Vec::new(),
        status_writer: None,
        quota_namespaces: Default::default(),
        quota_charges: Default::default(),
        limit_range_namespaces: Default::default(),
        authorizer: None,
    };
    let resolved = AdmissionOptions::default().resolve().expect("the defaults");
    let (chain, _) = chain(&resolved, &ctx).expect("a chain");
    let base = pod();
    c.bench_function("default chain: admit and validate a pod create", |b| {
        b.iter(|| {
            rt.block_on(async {
                let mut a = create();
                a.object = Some(base.clone());
                chain.admit(&mut a).await.expect("admitted");
                chain.validate(&a).await.expect("valid");
                a.object
            })
        })
    });
    let typed: Pod = serde_json::from_value(base.clone()).expect("a pod");
    c.bench_function(
        "default chain: admit a typed pod create, validate its tree",
        |b| {
            b.iter(|| {
                rt.block_on(async {
                    let mut a = create();
                    let mut pod = Typed(typed.clone());
                    chain.admit_typed(&mut a, &mut pod).await.expect("admitted");
                    assert!(a.object.is_none(), "no plugin read the tree");
                    a.object = Some(pod.to_tree().expect("a tree"));
                    chain.validate(&a).await.expect("valid");
                    a.object
                })
            })
        },
    );
}

criterion_group!(benches, bench);
criterion_main!(benches);
