//! What authorization costs a request: the RBAC authorizer with 1,000 RoleBindings and 100
//! ClusterRoleBindings, for a user one ClusterRoleBinding allows, one nothing allows, and a
//! member of `system:masters` (decided before RBAC); and `Node,RBAC` (kubeadm's modes) with a
//! graph of 10,000 pods on 100 nodes, for a node and for an RBAC user.

use std::sync::Arc;

use capstan_auth::UserInfo;
use capstan_auth::authz::node::{NodeGraph, PodRefs};
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

/// 10,000 pods on 100 nodes, each with two secrets, a config map and a claim bound to a
/// volume naming a secret.
fn graph() -> Arc<NodeGraph> {
    let graph = Arc::new(NodeGraph::new());
    for i in 0..10_000 {
        let ns = format!("ns-{}", i % 200);
        graph.put_pod(
            &ns,
            &format!("pod-{i}"),
            PodRefs {
                node: format!("node-{}", i % 100),
                service_account: "default".into(),
                secrets: vec![format!("secret-{i}"), "shared".into()],
                config_maps: vec![format!("config-{i}")],
                claims: vec![format!("claim-{i}")],
                resource_claims: Vec::new(),
            },
            1,
        );
        graph.put_claim(&ns, &format!("claim-{i}"), &format!("pv-{i}"), 1);
        graph.put_volume(
            &format!("pv-{i}"),
            vec![("storage".into(), format!("pv-secret-{i}"))],
            1,
        );
    }
    graph
}

fn get_secret(node: &str, namespace: &str, name: &str) -> Attributes {
    Attributes {
        user: UserInfo {
            name: format!("system:node:{node}"),
            groups: vec!["system:nodes".into(), "system:authenticated".into()],
            ..Default::default()
        },
        verb: "get".into(),
        resource_request: true,
        api_version: "v1".into(),
        resource: "secrets".into(),
        namespace: namespace.into(),
        name: name.into(),
        ..Default::default()
    }
}

fn node(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    let parts = ModeParts {
        rbac: index(),
        node: graph(),
        ..Default::default()
    };
    let chain =
        AuthorizerChain::from_modes(&["Node".into(), "RBAC".into()], &parts).expect("a chain");
    let mut group = c.benchmark_group("authorize Node,RBAC (10,000 pods on 100 nodes)");
    for (name, attrs) in [
        (
            "a node reads its pod's secret",
            get_secret("node-7", "ns-7", "secret-7"),
        ),
        (
            "a node reads a secret through a volume",
            get_secret("node-7", "storage", "pv-secret-7"),
        ),
        (
            "a node is refused another node's secret",
            get_secret("node-8", "ns-7", "secret-7"),
        ),
        (
            "an RBAC user (the Node authorizer passes)",
            get_storage_class("reader", &["team-x", "system:authenticated"]),
        ),
    ] {
        group.bench_function(name, |b| b.iter(|| rt.block_on(chain.authorize(&attrs))));
    }
    group.finish();
}

criterion_group!(benches, rbac, node);
criterion_main!(benches);
