//! What priority and fairness costs a request that finds a free seat: classification by the
//! mandatory and suggested FlowSchemas, taking the seat and giving it back, for an RBAC-bound
//! user (the `global-default` level, limited and queuing) and a member of `system:masters`
//! (the exempt level).

use std::sync::Arc;
use std::time::Duration;

use capstan_flowcontrol::{Decision, FlowControl, Metrics, RequestAttributes, bootstrap};
use criterion::{Criterion, criterion_group, criterion_main};

fn control() -> Arc<FlowControl> {
    let control = FlowControl::new(600, Duration::from_secs(15), Metrics::default());
    for level in bootstrap::suggested_priority_levels() {
        control.put_level(&level);
    }
    for schema in bootstrap::suggested_flow_schemas() {
        control.put_schema(&schema);
    }
    control
}

fn get<'a>(user: &'a str, groups: &'a [String]) -> RequestAttributes<'a> {
    RequestAttributes {
        user,
        groups,
        verb: "get",
        resource_request: true,
        api_group: "storage.k8s.io",
        resource: "storageclasses",
        name: "sc-1",
        path: "/apis/storage.k8s.io/v1/storageclasses/sc-1",
        ..RequestAttributes::default()
    }
}

fn admit_and_release(c: &mut Criterion) {
    let control = control();
    let cases = [
        (
            "rbac user",
            "global-default",
            "reader",
            vec!["system:authenticated".to_string()],
        ),
        (
            "system:masters",
            "exempt",
            "admin",
            vec![
                "system:masters".to_string(),
                "system:authenticated".to_string(),
            ],
        ),
    ];
    for (case, level, user, groups) in &cases {
        let req = get(user, groups);
        let pending = control.admit(&req, 1).expect("classified");
        assert_eq!(&*pending.classification().level, *level);
        assert!(
            matches!(pending.decided(), Decision::Admitted(_)),
            "a free seat"
        );
        c.bench_function(&format!("admit and release, {case}"), |b| {
            b.iter(|| {
                let pending = control.admit(&req, 1).expect("classified");
                match pending.decided() {
                    Decision::Admitted(ticket) => drop(ticket),
                    _ => panic!("no free seat"),
                }
            })
        });
    }
}

criterion_group!(benches, admit_and_release);
criterion_main!(benches);
