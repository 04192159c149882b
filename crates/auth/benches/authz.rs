//! What authorization costs a request: the RBAC authorizer with 1,000 RoleBindings and 100
//! ClusterRoleBindings, for a user one ClusterRoleBinding allows, one nothing allows, and a
//! member of `system:masters` (decided before RBAC).

use std::sync::Arc;

use capstan_auth::UserInfo;
use capstan_auth::authz::rbac::{Binding, PolicyRule, RbacIndex, RoleRef, Subject};
use capstan_auth::authz::{Attributes, AuthorizerChain, ModeParts};
use criterion::{Criterion, criterion_group, criterion_main};

fn index() -> Arc<RbacIndex> {
    let index = Arc::new(RbacIndex::new());
    let all = |v: &str| vec![v.to_string()];
    index.put_role(
        "",
        "sc-all",
        vec![PolicyRule {
            verbs: all("*"),
            api_groups: all("storage.k8s.io"),
            resources: all("storageclasses"),
            ..Default::default()
        }],
        1,
    );
    index.put_role(
        "",
        "system:basic-user",
        vec![PolicyRule {
            verbs: all("create"),
            api_groups: all("authorization.k8s.io"),
            resources: vec![
                "selfsubjectaccessreviews".into(),
                "selfsubjectrulesreviews".into(),
            ],
            ..Default::default()
        }],
        1,
    );
    for i in 0..1000 {
        index.put_binding(
            Binding {
                namespace: "default".into(),
                name: format!("rb-{i}"),
                role: RoleRef::ClusterRole("sc-all".into()),
                subjects: vec![
                    Subject::User(format!("user-{i}")),
                    Subject::Group(format!("group-{}", i % 50)),
                ],
            },
            1,
        );
    }
    for i in 0..100 {
        index.put_binding(
            Binding {
                namespace: String::new(),
                name: format!("crb-{i}"),
                role: RoleRef::ClusterRole("system:basic-user".into()),
                subjects: vec![Subject::Group("system:authenticated".into())],
            },
            1,
        );
    }
    index.put_binding(
        Binding {
            namespace: String::new(),
            name: "reader-sc".into(),
            role: RoleRef::ClusterRole("sc-all".into()),
            subjects: vec![Subject::User("reader".into())],
        },
        1,
    );
    index
}

fn get_storage_class(name: &str, groups: &[&str]) -> Attributes {
    Attributes {
        user: UserInfo {
            name: name.into(),
            groups: groups.iter().map(|g| g.to_string()).collect(),
            ..Default::default()
        },
        verb: "get".into(),
        resource_request: true,
        api_group: "storage.k8s.io".into(),
        api_version: "v1".into(),
        resource: "storageclasses".into(),
        name: "load-1".into(),
        ..Default::default()
    }
}

fn rbac(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let parts = ModeParts {
        rbac: index(),
        ..Default::default()
    };
    let chain = AuthorizerChain::from_modes(&["RBAC".into()], &parts).expect("a chain");
    let mut group = c.benchmark_group("authorize (1,000 RoleBindings, 101 ClusterRoleBindings)");
    for (name, attrs) in [
        (
            "system:masters",
            get_storage_class("admin", &["system:masters", "system:authenticated"]),
        ),
        (
            "allowed by a ClusterRoleBinding",
            get_storage_class("reader", &["team-x", "system:authenticated"]),
        ),
        (
            "not allowed (100 bindings of its group looked at)",
            get_storage_class("nobody", &["system:authenticated"]),
        ),
    ] {
        group.bench_function(name, |b| b.iter(|| rt.block_on(chain.authorize(&attrs))));
    }
    group.finish();
}

criterion_group!(benches, rbac);
criterion_main!(benches);
