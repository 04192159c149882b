//! What audit costs a request in process: the policy decision and the encoding of its
//! events (the work a batch task does off the request path).

use std::sync::Arc;

use capstan_audit::event::raw_json;
use capstan_audit::{
    Event, Level, ObjectRef, Policy, RequestAttributes, RequestRecord, Stage, User,
};
use criterion::{Criterion, criterion_group, criterion_main};

const POLICY: &str = r#"
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  users: ["system:kube-proxy"]
  verbs: ["watch"]
- level: None
  nonResourceURLs: ["/healthz*", "/version", "/readyz*", "/livez*"]
- level: Metadata
  resources:
  - group: ""
    resources: ["secrets", "configmaps", "serviceaccounts/token"]
- level: Request
  resources:
  - group: ""
  - group: "apps"
  - group: "rbac.authorization.k8s.io"
- level: Metadata
"#;

fn event(level: Level) -> Event {
    let now = jiff::Timestamp::now();
    Event {
        request: Arc::new(RequestRecord {
            level,
            audit_id: "6f0c2d1e-8a44-4c61-9b1f-2a9e0e7c5d10".into(),
            request_uri: "/api/v1/namespaces/default/configmaps".into(),
            verb: "create".into(),
            user: User {
                username: "system:admin".into(),
                groups: vec!["system:masters".into(), "system:authenticated".into()],
                ..User::default()
            },
            impersonated_user: None,
            source_ips: vec!["127.0.0.1".into()],
            user_agent: "capstan-load/0.1".into(),
            object_ref: Some(ObjectRef {
                resource: "configmaps".into(),
                namespace: "default".into(),
                api_version: "v1".into(),
                ..ObjectRef::default()
            }),
            received: now,
            encoded: Default::default(),
        }),
        stage: Stage::ResponseComplete,
        stage_timestamp: now,
        response_status: Some(capstan_audit::ResponseStatus::code(201)),
        request_object: (level >= Level::Request).then(|| {
            raw_json(br#"{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"load-1","namespace":"default"},"data":{"key":"value"}}"#)
        }).flatten(),
        response_object: None,
        annotations: None,
    }
}

fn bench(c: &mut Criterion) {
    let policy = Policy::parse(POLICY).unwrap();
    let groups = vec![
        "system:masters".to_string(),
        "system:authenticated".to_string(),
    ];
    let attributes = RequestAttributes {
        user: "system:admin",
        groups: &groups,
        verb: "create",
        resource_request: true,
        api_group: "storage.k8s.io",
        resource: "storageclasses",
        subresource: "",
        namespace: "",
        name: "",
        path: "/apis/storage.k8s.io/v1/storageclasses",
    };
    c.bench_function("audit policy: decide (last rule)", |b| {
        b.iter(|| policy.decide(std::hint::black_box(&attributes)))
    });
    let metadata = event(Level::Metadata);
    c.bench_function("audit event: JSON, Metadata", |b| {
        b.iter(|| metadata.to_json())
    });
    let request = event(Level::Request);
    c.bench_function("audit event: JSON, Request", |b| {
        b.iter(|| request.to_json())
    });
    c.bench_function("audit event: legacy line", |b| {
        b.iter(|| metadata.legacy_line())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
