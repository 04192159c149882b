//! APIServices beside upstream's kube-apiserver: the Local ones each server keeps for what it
//! serves (names, priorities, labels, availability), and the answers to APIServices written
//! to both, valid and not.

use std::collections::BTreeMap;
use std::time::Duration;

use http::Method;
use serde_json::{Value, json};

use super::authorization::start_pair;

/// What is compared of an APIService: its spec, its automanaged label and its condition.
fn summary(api_service: &Value) -> Value {
    let condition = api_service["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Available"))
        .map(|c| json!([c["status"], c["reason"], c["message"]]))
        .unwrap_or(Value::Null);
    json!({
        "spec": api_service["spec"],
        "label": api_service["metadata"]["labels"]["kube-aggregator.kubernetes.io/automanaged"],
        "available": condition,
    })
}

async fn api_services(client: &capstan_e2e::RawClient) -> BTreeMap<String, Value> {
    let list = client
        .request(
            Method::GET,
            "/apis/apiregistration.k8s.io/v1/apiservices",
            &[],
            Vec::new(),
        )
        .await
        .json();
    list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| {
            (
                a["metadata"]["name"].as_str().unwrap().to_string(),
                summary(a),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn local_api_services_and_validation_match_upstream() {
    let (pair, _upstream, _server) = start_pair().await;
    // A custom resource's group version gets its own Local APIService on both.
    let crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [
                {"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object"}}},
                {"name": "v2beta1", "served": true, "storage": false,
                    "schema": {"openAPIV3Schema": {"type": "object"}}}]}});
    pair.create(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        crd,
    )
    .await;
    let mut differences = Vec::new();
    let (mut theirs, mut mine) = (BTreeMap::new(), BTreeMap::new());
    // Both servers create them asynchronously and mark them available soon after.
    for _ in 0..100 {
        theirs = api_services(&pair.upstream).await;
        mine = api_services(&pair.capstan).await;
        let settled = |m: &BTreeMap<String, Value>| {
            m.contains_key("v2beta1.example.com") && m.values().all(|a| !a["available"].is_null())
        };
        if settled(&theirs) && settled(&mine) && theirs == mine {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    for (name, upstream) in &theirs {
        match mine.get(name) {
            Some(capstan) if capstan == upstream => {}
            Some(capstan) => differences.push(format!(
                "{name}\n  upstream {upstream}\n  capstan  {capstan}"
            )),
            None => differences.push(format!("{name}: only upstream has it: {upstream}")),
        }
    }
    for name in mine.keys().filter(|n| !theirs.contains_key(*n)) {
        differences.push(format!("{name}: only Capstan has it"));
    }

    let api_service = |name: &str, spec: Value| {
        json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
            "metadata": {"name": name}, "spec": spec})
    };
    let cases = [
        (
            "service-backed",
            api_service(
                "v1.wardle.example.com",
                json!({"group": "wardle.example.com", "version": "v1",
                    "groupPriorityMinimum": 100, "versionPriority": 10,
                    "service": {"namespace": "w", "name": "api"}}),
            ),
        ),
        (
            "name not version.group",
            api_service(
                "v1.other.example.com",
                json!({"group": "wardle.example.com", "version": "v1",
                    "groupPriorityMinimum": 100, "versionPriority": 10}),
            ),
        ),
        (
            "priorities out of range",
            api_service(
                "v1.wardle.example.com",
                json!({"group": "wardle.example.com", "version": "v1",
                    "groupPriorityMinimum": 20001, "versionPriority": 0}),
            ),
        ),
        (
            "empty group, not v1",
            api_service(
                "v2.",
                json!({"version": "v2", "groupPriorityMinimum": 1, "versionPriority": 1}),
            ),
        ),
        (
            "local with TLS settings",
            api_service(
                "v1.wardle.example.com",
                json!({"group": "wardle.example.com", "version": "v1",
                    "groupPriorityMinimum": 1, "versionPriority": 1,
                    "caBundle": "YWJj", "insecureSkipTLSVerify": true}),
            ),
        ),
        (
            "service without a name, bad port, both TLS settings",
            api_service(
                "v1.wardle.example.com",
                json!({"group": "wardle.example.com", "version": "v1",
                    "groupPriorityMinimum": 1, "versionPriority": 1,
                    "caBundle": "YWJj", "insecureSkipTLSVerify": true,
                    "service": {"namespace": "w", "port": 70000}}),
            ),
        ),
        (
            "bad group and version",
            api_service(
                "V1.Bad_Group",
                json!({"group": "Bad_Group", "version": "V1",
                    "groupPriorityMinimum": 1, "versionPriority": 1}),
            ),
        ),
    ];
    for (name, body) in cases {
        let path = "/apis/apiregistration.k8s.io/v1/apiservices?dryRun=All";
        let [theirs, mine] = pair.send(Method::POST, path, &[], &body).await;
        let seen = |(code, answer): &(u16, Value)| {
            if *code == 201 {
                (*code, answer["spec"].clone())
            } else {
                (*code, answer["message"].clone())
            }
        };
        let (theirs, mine) = (seen(&theirs), seen(&mine));
        if theirs != mine {
            differences.push(format!(
                "{name}\n  upstream {theirs:?}\n  capstan  {mine:?}"
            ));
        }
    }
    assert!(differences.is_empty(), "{}", differences.join("\n"));
}
