//! MutatingAdmissionPolicies against upstream's: the same policies and bindings created in
//! Capstan and in upstream's kube-apiserver (invalid ones too), then the same writes; the
//! refusals and the stored objects are compared. Apply configurations (merged by the schema:
//! labels, data, a Deployment's containers by name and their env by name), JSON patches
//! (`jsonpatch.escapeKey`, a `test` that makes a patch conditional), parameters, match
//! conditions, failure policies, atomic fields, and reinvocation.

use std::time::Duration;

use capstan_e2e::RawClient;
use capstan_testing::TestServer;
use http::Method;
use serde_json::{Value, json};

use super::{Upstream, capstan, masked};

const SERVERS: [&str; 2] = ["upstream", "capstan"];
const POLICIES: &str = "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies";
const BINDINGS: &str = "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings";
const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";
const SECRETS: &str = "/api/v1/namespaces/default/secrets";
const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";

async fn send(client: &RawClient, method: Method, path: &str, body: &Value) -> (u16, Value) {
    let r = client
        .request(
            method,
            path,
            &[("content-type", "application/json")],
            serde_json::to_vec(body).unwrap(),
        )
        .await;
    (
        r.status.as_u16(),
        serde_json::from_slice(&r.body).unwrap_or(Value::Null),
    )
}

fn rules(group: &str, resources: &str) -> Value {
    json!({"resourceRules": [{"apiGroups": [group], "apiVersions": ["v1"],
        "operations": ["CREATE"], "resources": [resources]}]})
}

fn apply(expression: &str) -> Value {
    json!({"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": expression}})
}

fn patch(expression: &str) -> Value {
    json!({"patchType": "JSONPatch", "jsonPatch": {"expression": expression}})
}

/// A policy on objects of `resources` whose name starts with `prefix`.
fn policy(name: &str, group: &str, resources: &str, prefix: &str, spec: Value) -> Value {
    let mut spec = spec;
    spec["matchConstraints"] = rules(group, resources);
    spec["matchConditions"] = json!([{"name": "prefix",
        "expression": format!("object.metadata.name.startsWith('{prefix}')")}]);
    spec.as_object_mut()
        .unwrap()
        .entry("reinvocationPolicy")
        .or_insert(json!("Never"));
    json!({"metadata": {"name": name}, "spec": spec})
}

fn binding(name: &str, spec: Value) -> Value {
    let mut spec = spec;
    spec["policyName"] = json!(name);
    json!({"metadata": {"name": name}, "spec": spec})
}

/// The policies and their bindings, in creation order (`map`, whose effect the test waits
/// for, last).
fn configuration() -> Vec<(&'static str, Value)> {
    let container = "Object.spec.template.spec.containers";
    vec![
        (
            POLICIES,
            policy(
                "deployments",
                "apps",
                "deployments",
                "dep-",
                json!({
                    "mutations": [apply(&format!(
                        "Object{{spec: Object.spec{{replicas: 3, template: Object.spec.template{{spec: Object.spec.template.spec{{containers: [{container}{{name: 'app', env: [{container}.env{{name: 'INJECTED', value: 'yes'}}]}}]}}}}}}}}"
                    ))],
                }),
            ),
        ),
        (BINDINGS, binding("deployments", json!({}))),
        (
            POLICIES,
            policy(
                "params",
                "",
                "secrets",
                "param-",
                json!({
                    "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                    "variables": [{"name": "team", "expression": "params.data.team"}],
                    "mutations": [apply("Object{metadata: Object.metadata{labels: {'team': variables.team}}}")],
                }),
            ),
        ),
        (
            BINDINGS,
            binding(
                "params",
                json!({"paramRef": {"name": "defaults",
            "namespace": "default", "parameterNotFoundAction": "Deny"}}),
            ),
        ),
        (
            POLICIES,
            policy(
                "errors",
                "",
                "secrets",
                "err-",
                json!({
                    "mutations": [
                        patch("object.metadata.name == 'err-eval' ? [JSONPatch{op: 'add', path: '/data/a', value: object.missing}] : []"),
                        apply("object.metadata.name == 'err-atomic' ? Object{metadata: Object.metadata{ownerReferences: [Object.metadata.ownerReferences{apiVersion: 'v1', kind: 'X', name: 'n', uid: 'u'}]}} : Object{}"),
                        patch("object.metadata.name == 'err-path' ? [JSONPatch{op: 'replace', path: '/nothing/here', value: 1}] : []"),
                    ],
                }),
            ),
        ),
        (BINDINGS, binding("errors", json!({}))),
        (
            POLICIES,
            policy(
                "ignored",
                "",
                "secrets",
                "ign-",
                json!({
                    "failurePolicy": "Ignore",
                    "mutations": [patch("[JSONPatch{op: 'add', path: '/data/a', value: object.missing}]")],
                }),
            ),
        ),
        (BINDINGS, binding("ignored", json!({}))),
        (
            POLICIES,
            policy(
                "a-copy",
                "",
                "configmaps",
                "reinvoke-",
                json!({
                    "reinvocationPolicy": "IfNeeded",
                    "mutations": [apply("Object{metadata: Object.metadata{labels: {'copy': has(object.metadata.labels) && 'source' in object.metadata.labels ? object.metadata.labels['source'] : 'none'}}}")],
                }),
            ),
        ),
        (BINDINGS, binding("a-copy", json!({}))),
        (
            POLICIES,
            policy(
                "b-source",
                "",
                "configmaps",
                "reinvoke-",
                json!({
                    "mutations": [apply("Object{metadata: Object.metadata{labels: {'source': 'b'}}}")],
                }),
            ),
        ),
        (BINDINGS, binding("b-source", json!({}))),
        (
            POLICIES,
            policy(
                "map",
                "",
                "configmaps",
                "map-",
                json!({
                    "mutations": [
                        apply("Object{metadata: Object.metadata{labels: {'mutated': 'yes'}}, data: {'seen': object.metadata.name}}"),
                        patch("[JSONPatch{op: 'add', path: '/metadata/annotations', value: {}}, JSONPatch{op: 'add', path: '/metadata/annotations/' + jsonpatch.escapeKey('example.com/by'), value: 'map'}]"),
                        patch("[JSONPatch{op: 'test', path: '/data/color', value: 'red'}, JSONPatch{op: 'replace', path: '/data/color', value: 'green'}]"),
                    ],
                }),
            ),
        ),
        (BINDINGS, binding("map", json!({}))),
    ]
}

/// Policies and bindings both servers refuse, with every cause.
fn invalid() -> Vec<(&'static str, Value)> {
    vec![
        (POLICIES, json!({"metadata": {"name": "empty"}, "spec": {}})),
        (
            POLICIES,
            json!({"metadata": {"name": "bad"}, "spec": {
                "failurePolicy": "Maybe",
                "paramKind": {"apiVersion": "a/b/c"},
                "reinvocationPolicy": "Sometimes",
                "matchConstraints": {"matchPolicy": "Fuzzy", "resourceRules": [{"apiGroups": ["*"],
                    "apiVersions": ["*"], "operations": ["CREATE", "DELETE"], "resources": ["pods"]}]},
                "mutations": [
                    {"patchType": "Weird"},
                    {"patchType": "ApplyConfiguration"},
                    {"patchType": "JSONPatch", "applyConfiguration": {"expression": "Object{}"}},
                    {"patchType": "JSONPatch", "jsonPatch": {"expression": ""}},
                ],
                "variables": [{"name": "1x", "expression": ""}],
            }}),
        ),
        (
            BINDINGS,
            json!({"metadata": {"name": "nameless"}, "spec": {"paramRef": {"name": "x"}}}),
        ),
        (
            BINDINGS,
            json!({"metadata": {"name": "bad"}, "spec": {
                "policyName": "Bad_Name",
                "paramRef": {"name": "x", "selector": {}, "parameterNotFoundAction": "Maybe"},
                "matchResources": {"matchPolicy": "Fuzzy", "resourceRules": [{"apiGroups": ["*"],
                    "apiVersions": ["*"], "operations": ["DELETE"], "resources": ["pods"]}]},
            }}),
        ),
    ]
}

/// The writes the policies act on.
fn writes() -> Vec<(&'static str, Value)> {
    let deployment = |name: &str, container: &str| {
        json!({"metadata": {"name": name}, "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [
                {"name": container, "image": "nginx", "env": [{"name": "OWN", "value": "1"}]}]}}}})
    };
    let secret = |name: &str| json!({"metadata": {"name": name}, "data": {"k": "dg=="}});
    vec![
        (
            CONFIGMAPS,
            json!({"metadata": {"name": "map-red"}, "data": {"color": "red"}}),
        ),
        (
            CONFIGMAPS,
            json!({"metadata": {"name": "map-blue"}, "data": {"color": "blue"}}),
        ),
        (
            CONFIGMAPS,
            json!({"metadata": {"name": "other"}, "data": {"color": "red"}}),
        ),
        (CONFIGMAPS, json!({"metadata": {"name": "reinvoke-1"}})),
        (DEPLOYMENTS, deployment("dep-app", "app")),
        (DEPLOYMENTS, deployment("dep-other", "web")),
        (SECRETS, secret("param-1")),
        (SECRETS, secret("err-eval")),
        (SECRETS, secret("err-atomic")),
        (SECRETS, secret("err-path")),
        (SECRETS, secret("err-none")),
        (SECRETS, secret("ign-1")),
    ]
}

/// A refusal or a stored object, with what must differ masked (managedFields dropped:
/// upstream records a create's before admission, so an object whose client set no field has
/// none there; see `masked`). A policy's error message
/// names the CEL engine's or the JSON patch library's own words after `denied request: `:
/// that part is compared for the atomic-field refusal only, which is Capstan's and
/// upstream's rule rather than a library's text.
fn comparable((status, body): (u16, Value)) -> (u16, Value) {
    let mut body = masked(body);
    if let Some(metadata) = body["metadata"].as_object_mut() {
        metadata.remove("managedFields");
    }
    if body["kind"] == "Status"
        && let Some(message) = body["message"].as_str()
        && let Some((head, _)) = message.split_once("denied request: ")
        && !message.contains("atomic")
    {
        let head = format!("{head}denied request: …");
        body["message"] = json!(head.clone());
        if let Some(causes) = body["details"]["causes"].as_array_mut() {
            for cause in causes {
                cause["message"] = json!(head.clone());
            }
        }
    }
    (status, body)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutating_admission_policies_act_as_upstreams() {
    let upstream = Upstream::start().await;
    let server = TestServer::start().await;
    let clients = [upstream.client.clone(), capstan(&server)];

    let mut refusals = Vec::new();
    for client in &clients {
        let (status, body) = send(
            client,
            Method::POST,
            CONFIGMAPS,
            &json!({"metadata": {"name": "defaults"}, "data": {"team": "blue"}}),
        )
        .await;
        assert_eq!(status, 201, "{body}");
        for (path, object) in configuration() {
            let (status, body) = send(client, Method::POST, path, &object).await;
            assert_eq!(status, 201, "POST {path}: {body}");
        }
        let mut answers = Vec::new();
        for (path, object) in invalid() {
            answers.push(masked(send(client, Method::POST, path, &object).await.1));
        }
        refusals.push(answers);
    }
    for (upstream, ours) in refusals[0].iter().zip(&refusals[1]) {
        assert_eq!(ours, upstream, "an invalid policy or binding");
    }

    // Policies come into force when the server has read them: upstream refreshes its
    // policies about once a second, all at once; `map` was created last.
    for (client, name) in clients.iter().zip(SERVERS) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
        for n in 0.. {
            let probe = json!({"metadata": {"name": format!("map-probe-{n}")}});
            let (_, body) = send(client, Method::POST, CONFIGMAPS, &probe).await;
            if body["metadata"]["labels"]["mutated"] == "yes" {
                break;
            }
            assert!(
                tokio::time::Instant::now() < deadline,
                "{name}: the policies never came into force: {body}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    let mut stored = std::collections::BTreeMap::new();
    for (path, object) in writes() {
        let name = object["metadata"]["name"].as_str().unwrap().to_string();
        let mut answers = Vec::new();
        for client in &clients {
            answers.push(comparable(send(client, Method::POST, path, &object).await));
        }
        assert_eq!(answers[1], answers[0], "POST {path} {name}");
        stored.insert(name, answers.pop().unwrap());
    }
    // The policies did act (the comparison alone would pass if neither server applied them).
    let dep = &stored["dep-app"].1["spec"];
    assert_eq!(dep["replicas"], 3);
    assert_eq!(
        dep["template"]["spec"]["containers"][0]["env"],
        json!([{"name": "OWN", "value": "1"}, {"name": "INJECTED", "value": "yes"}])
    );
    assert_eq!(stored["dep-other"].0, 422, "a container without an image");
    assert_eq!(stored["map-red"].1["data"]["color"], "green");
    assert_eq!(stored["map-blue"].1["data"]["color"], "blue");
    assert_eq!(
        stored["map-red"].1["metadata"]["annotations"]["example.com/by"],
        "map"
    );
    assert_eq!(stored["reinvoke-1"].1["metadata"]["labels"]["copy"], "b");
    assert_eq!(stored["param-1"].1["metadata"]["labels"]["team"], "blue");
    assert_eq!(stored["err-atomic"].0, 403);
    assert_eq!(stored["err-none"].0, 201);
    assert_eq!(stored["ign-1"].0, 201);
}
