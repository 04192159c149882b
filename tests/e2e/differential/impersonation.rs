//! Impersonation against upstream v1.36's, constrained impersonation included (KEP-5284,
//! beta and on by default): the same callers, with the same grants, ask both servers to act
//! as others, and the answers (allowed, or the 403 and its message) must be the same.

use http::Method;
use serde_json::{Value, json};

use super::{Upstream, capstan, create_on};
use capstan_e2e::RawClient;
use capstan_testing::TestServer;

const RBAC: &str = "/apis/rbac.authorization.k8s.io/v1";
/// Impersonation headers.
type Headers = Vec<(&'static str, &'static str)>;

/// The callers, each with a static token of the same name (frank has no grant at all).
const CALLERS: [&str; 5] = ["alice", "carol", "dave", "erin", "frank"];

fn rule(groups: &[&str], resources: &[&str], verbs: &[&str], names: &[&str]) -> Value {
    let mut rule = json!({"apiGroups": groups, "resources": resources, "verbs": verbs});
    if !names.is_empty() {
        rule["resourceNames"] = json!(names);
    }
    rule
}

/// The grants: alice may impersonate bob the old way; carol may impersonate bob (and his
/// group `devs`) only to list pods; dave may be any node, only to get nodes; erin may be
/// service account `default/robot`, only to list configmaps. bob and devs may list pods and
/// configmaps; the robot may list configmaps.
fn grants() -> Vec<(String, Value)> {
    let role = |name: &str, rules: Vec<Value>| {
        (
            format!("{RBAC}/clusterroles"),
            json!({"metadata": {"name": name}, "rules": rules}),
        )
    };
    let bind = |name: &str, subject: Value| {
        (
            format!("{RBAC}/clusterrolebindings"),
            json!({"metadata": {"name": name},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
                "subjects": [subject]}),
        )
    };
    let user =
        |name: &str| json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": name});
    let auth = "authentication.k8s.io";
    vec![
        role(
            "alice",
            vec![rule(&[""], &["users"], &["impersonate"], &["bob"])],
        ),
        bind("alice", user("alice")),
        role(
            "carol",
            vec![
                rule(&[auth], &["users"], &["impersonate:user-info"], &["bob"]),
                rule(&[auth], &["groups"], &["impersonate:user-info"], &["devs"]),
                rule(&[""], &["pods"], &["impersonate-on:user-info:list"], &[]),
            ],
        ),
        bind("carol", user("carol")),
        role(
            "dave",
            vec![
                rule(&[auth], &["nodes"], &["impersonate:arbitrary-node"], &[]),
                rule(
                    &[""],
                    &["nodes"],
                    &["impersonate-on:arbitrary-node:get"],
                    &[],
                ),
            ],
        ),
        bind("dave", user("dave")),
        role(
            "erin",
            vec![
                rule(
                    &[auth],
                    &["serviceaccounts"],
                    &["impersonate:serviceaccount"],
                    &["robot"],
                ),
                rule(
                    &[""],
                    &["configmaps"],
                    &["impersonate-on:serviceaccount:list"],
                    &[],
                ),
            ],
        ),
        bind("erin", user("erin")),
        role(
            "readers",
            vec![rule(&[""], &["pods", "configmaps"], &["list"], &[])],
        ),
        bind("readers", user("bob")),
        role(
            "robot-reads",
            vec![rule(&[""], &["configmaps"], &["list"], &[])],
        ),
        bind(
            "robot-reads",
            json!({"kind": "ServiceAccount", "name": "robot", "namespace": "default"}),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn impersonation_is_allowed_and_refused_as_upstream() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    let lines: Vec<String> = CALLERS
        .iter()
        .enumerate()
        .map(|(i, name)| format!("{name}-token,{name},uid-{i}"))
        .collect();
    std::fs::write(&tokens, lines.join("\n")).unwrap();
    let flag = format!("--token-auth-file={}", tokens.display());
    let upstream = Upstream::start_with(&[&flag]).await;
    let file = tokens.clone();
    let server = TestServer::start_with(move |c| {
        c.authorization_modes = vec!["Node".into(), "RBAC".into()];
        c.token_auth_file = Some(file);
    })
    .await;
    let admins = [upstream.client.clone(), capstan(&server)];
    for admin in &admins {
        create_on(admin, "/api/v1/nodes", &json!({"metadata": {"name": "n1"}})).await;
        for (path, body) in grants() {
            create_on(admin, &path, &body).await;
        }
    }
    let as_caller = |caller: &str| {
        [
            RawClient::new(
                &upstream.url,
                &upstream.ca_pem,
                Some(&format!("{caller}-token")),
            ),
            RawClient::new(
                &server.url(),
                server.ca_pem(),
                Some(&format!("{caller}-token")),
            ),
        ]
    };
    let pods = "/api/v1/namespaces/default/pods";
    let configmaps = "/api/v1/namespaces/default/configmaps";
    let robot = "system:serviceaccount:default:robot";
    let cases: Vec<(&str, &str, Headers)> = vec![
        ("alice", pods, vec![("impersonate-user", "bob")]),
        ("alice", pods, vec![("impersonate-user", "eve")]),
        (
            "alice",
            pods,
            vec![("impersonate-user", "bob"), ("impersonate-group", "devs")],
        ),
        ("carol", pods, vec![("impersonate-user", "bob")]),
        (
            "carol",
            pods,
            vec![("impersonate-user", "bob"), ("impersonate-group", "devs")],
        ),
        ("carol", configmaps, vec![("impersonate-user", "bob")]),
        ("carol", pods, vec![("impersonate-user", "eve")]),
        (
            "carol",
            pods,
            vec![
                ("impersonate-user", "bob"),
                ("impersonate-group", "system:masters"),
            ],
        ),
        (
            "carol",
            pods,
            vec![("impersonate-user", "bob"), ("impersonate-uid", "u-1")],
        ),
        (
            "dave",
            "/api/v1/nodes/n1",
            vec![("impersonate-user", "system:node:n1")],
        ),
        (
            "dave",
            "/api/v1/nodes",
            vec![("impersonate-user", "system:node:n1")],
        ),
        (
            "dave",
            "/api/v1/nodes/n1",
            vec![
                ("impersonate-user", "system:node:n1"),
                ("impersonate-group", "system:nodes"),
            ],
        ),
        ("erin", configmaps, vec![("impersonate-user", robot)]),
        ("erin", pods, vec![("impersonate-user", robot)]),
        (
            "erin",
            configmaps,
            vec![("impersonate-user", "system:serviceaccount:default:other")],
        ),
        (
            "dave",
            "/version",
            vec![("impersonate-user", "system:node:n1")],
        ),
        // Never allowed any way: the first way tried refuses.
        ("frank", pods, vec![("impersonate-user", "system:node:n1")]),
        ("frank", pods, vec![("impersonate-user", "bob")]),
        ("frank", pods, vec![("impersonate-user", robot)]),
        (
            "frank",
            pods,
            vec![
                ("impersonate-user", "bob"),
                ("impersonate-extra-scopes", "x"),
            ],
        ),
    ];
    let mut differences = Vec::new();
    let mut allowed = 0;
    for (caller, path, headers) in &cases {
        let [theirs, mine] = as_caller(caller);
        let answer = |r: capstan_e2e::RawResponse| {
            let body: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
            let message = if r.status == 200 {
                Value::Null
            } else {
                body["message"].clone()
            };
            (r.status.as_u16(), message)
        };
        let theirs = answer(theirs.request(Method::GET, path, headers, Vec::new()).await);
        let mine = answer(mine.request(Method::GET, path, headers, Vec::new()).await);
        assert_ne!(theirs.0, 401, "{caller} is authenticated");
        if theirs.0 == 200 {
            allowed += 1;
        }
        if theirs != mine {
            differences.push(format!(
                "{caller} GET {path} {headers:?}\n  upstream {theirs:?}\n  capstan  {mine:?}"
            ));
        }
    }
    assert!(allowed >= 4, "the grants allow ({allowed})");
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}

/// A node agent (a service account whose token is bound to a pod on node n1) acting as its
/// own node with `associated-node`, and refused as another node, as upstream answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_agent_acts_as_its_own_node_as_upstream() {
    let upstream = Upstream::start().await;
    let server = TestServer::start_with(|c| {
        c.authorization_modes = vec!["Node".into(), "RBAC".into()];
    })
    .await;
    let auth = "authentication.k8s.io";
    let setup = vec![
        (
            "/api/v1/nodes".to_string(),
            json!({"metadata": {"name": "n1"}}),
        ),
        (
            "/api/v1/nodes".to_string(),
            json!({"metadata": {"name": "n2"}}),
        ),
        (
            "/api/v1/namespaces/default/serviceaccounts".to_string(),
            json!({"metadata": {"name": "agent"}}),
        ),
        (
            "/api/v1/namespaces/default/pods".to_string(),
            json!({"metadata": {"name": "agent-n1"}, "spec": {"nodeName": "n1",
                "serviceAccountName": "agent", "containers": [{"name": "c", "image": "agent"}]}}),
        ),
        (
            format!("{RBAC}/clusterroles"),
            json!({"metadata": {"name": "node-agent"}, "rules": [
                rule(&[auth], &["nodes"], &["impersonate:associated-node"], &[]),
                rule(&[""], &["nodes"], &["impersonate-on:associated-node:get"], &[])]}),
        ),
        (
            format!("{RBAC}/clusterrolebindings"),
            json!({"metadata": {"name": "node-agent"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "node-agent"},
                "subjects": [{"kind": "ServiceAccount", "name": "agent", "namespace": "default"}]}),
        ),
    ];
    let mut answers = Vec::new();
    for (admin, url, ca) in [
        (
            upstream.client.clone(),
            upstream.url.clone(),
            upstream.ca_pem.clone(),
        ),
        (capstan(&server), server.url(), server.ca_pem().to_string()),
    ] {
        for (path, body) in &setup {
            create_on(&admin, path, body).await;
        }
        let pod = admin
            .get("/api/v1/namespaces/default/pods/agent-n1")
            .await
            .json();
        let request = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
            "spec": {"boundObjectRef": {"apiVersion": "v1", "kind": "Pod", "name": "agent-n1",
                "uid": pod["metadata"]["uid"]}}});
        let issued = admin
            .request(
                Method::POST,
                "/api/v1/namespaces/default/serviceaccounts/agent/token",
                &[("content-type", "application/json")],
                serde_json::to_vec(&request).unwrap(),
            )
            .await;
        assert_eq!(issued.status, 201);
        let token = issued.json()["status"]["token"]
            .as_str()
            .unwrap()
            .to_string();
        let agent = RawClient::new(&url, &ca, Some(&token));
        let mut seen = Vec::new();
        for (path, node) in [
            ("/api/v1/nodes/n1", "system:node:n1"),
            ("/api/v1/nodes/n2", "system:node:n2"),
            ("/api/v1/nodes", "system:node:n1"),
        ] {
            let r = agent
                .request(Method::GET, path, &[("impersonate-user", node)], Vec::new())
                .await;
            let body: Value = serde_json::from_slice(&r.body).unwrap_or(Value::Null);
            let message = if r.status == 200 {
                Value::Null
            } else {
                body["message"].clone()
            };
            seen.push((path, node, r.status.as_u16(), message));
        }
        answers.push(seen);
    }
    assert_eq!(
        answers[0][0].2, 200,
        "upstream lets the agent be its node: {answers:?}"
    );
    assert_eq!(answers[0], answers[1], "upstream, then Capstan");
}
