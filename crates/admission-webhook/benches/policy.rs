//! What an admission policy costs a write in process: the ValidatingAdmissionPolicy of
//! `capstan-load --admission-policy` (a variable and two validations) evaluated for a
//! StorageClass create, a MutatingAdmissionPolicy (an apply configuration merged by the
//! schema and a JSON patch) on the same create, and the test a write their rules do not
//! cover pays.

use std::sync::Arc;

use capstan_admission::{Attributes, MemoryLister, Operation, Plugin};
use capstan_admission_webhook::{
    MutatingAdmissionPolicies, MutatingPolicyIndex, PolicyIndex, PolicyKind,
    ValidatingAdmissionPolicies,
};
use capstan_auth::UserInfo;
use capstan_meta::GroupResource;
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::json;

fn plugin() -> ValidatingAdmissionPolicies {
    let index = Arc::new(PolicyIndex::new());
    let policy = serde_json::from_value(json!({
        "metadata": {"name": "load"},
        "spec": {
            "matchConstraints": {"resourceRules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["storage.k8s.io"], "apiVersions": ["v1"], "resources": ["storageclasses"], "scope": "*"}]},
            "variables": [{"name": "labels", "expression": "has(object.metadata.labels) ? object.metadata.labels : {}"}],
            "validations": [
                {"expression": "!('capstan-load-deny' in variables.labels)", "messageExpression": "'refused: ' + object.metadata.name"},
                {"expression": "object.provisioner.size() > 0 && object.parameters.all(k, k.size() < 64)"},
            ],
        },
    }))
    .expect("a policy");
    let binding = serde_json::from_value(json!({
        "metadata": {"name": "load"},
        "spec": {"policyName": "load", "validationActions": ["Deny"]},
    }))
    .expect("a binding");
    index.put_policy(&policy, 1);
    index.put_binding(&binding, 1);
    index.listed(PolicyKind::Policy, 1);
    index.listed(PolicyKind::Binding, 1);
    ValidatingAdmissionPolicies::new(index, Arc::new(MemoryLister::new()))
}

/// A mutating policy on the same StorageClasses: a label and a parameter through an apply
/// configuration, an annotation through a JSON patch.
fn mutating_plugin() -> MutatingAdmissionPolicies {
    let index = Arc::new(MutatingPolicyIndex::new());
    let policy = serde_json::from_value(json!({
        "metadata": {"name": "load"},
        "spec": {
            "matchConstraints": {"resourceRules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["storage.k8s.io"], "apiVersions": ["v1"], "resources": ["storageclasses"], "scope": "*"}]},
            "reinvocationPolicy": "Never",
            "mutations": [
                {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "Object{metadata: Object.metadata{labels: {'tier': object.parameters.type}}, parameters: {'checked': 'yes'}}"}},
                {"patchType": "JSONPatch", "jsonPatch": {"expression": "[JSONPatch{op: 'add', path: '/metadata/annotations', value: {'example.com/by': 'policy'}}]"}},
            ],
        },
    }))
    .expect("a policy");
    let binding = serde_json::from_value(json!({
        "metadata": {"name": "load"},
        "spec": {"policyName": "load"},
    }))
    .expect("a binding");
    index.put_policy(&policy, 1);
    index.put_binding(&binding, 1);
    index.listed(PolicyKind::Policy, 1);
    index.listed(PolicyKind::Binding, 1);
    MutatingAdmissionPolicies::new(index, Arc::new(MemoryLister::new()))
}

fn storage_class() -> Attributes {
    let mut a = Attributes::new(
        Operation::Create,
        GroupResource::new("storage.k8s.io", "storageclasses"),
        UserInfo {
            name: "capstan-admin".into(),
            groups: vec!["system:masters".into(), "system:authenticated".into()],
            ..Default::default()
        },
    );
    a.version = "v1".into();
    a.kind = "StorageClass".into();
    a.name = "fast".into();
    a.object = Some(json!({
        "apiVersion": "storage.k8s.io/v1",
        "kind": "StorageClass",
        "metadata": {"name": "fast", "labels": {"capstan-load": "run", "generation": "0"}},
        "provisioner": "example.com/load",
        "parameters": {"type": "ssd", "iops": "3000"},
    }));
    a
}

fn bench(c: &mut Criterion) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    let plugin = plugin();
    let a = storage_class();
    c.bench_function("admission policy: StorageClass create", |b| {
        b.iter(|| runtime.block_on(plugin.validate(&a)).expect("admitted"))
    });
    let mutating = mutating_plugin();
    let mut once = storage_class();
    runtime
        .block_on(mutating.admit(&mut once))
        .expect("admitted");
    let mutated = once.object.expect("an object");
    assert_eq!(mutated["metadata"]["labels"]["tier"], "ssd");
    assert_eq!(
        mutated["metadata"]["annotations"]["example.com/by"],
        "policy"
    );
    c.bench_function("mutating admission policy: StorageClass create", |b| {
        b.iter_batched(
            storage_class,
            |mut a| {
                runtime.block_on(mutating.admit(&mut a)).expect("admitted");
                a
            },
            criterion::BatchSize::SmallInput,
        )
    });
    let configmaps = GroupResource::new("", "configmaps");
    c.bench_function("admission policy: a write it does not cover", |b| {
        b.iter(|| plugin.validates(Operation::Create, &configmaps, ""))
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
