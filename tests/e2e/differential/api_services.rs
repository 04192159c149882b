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

/// What an extension server written here serves: two groups (`metrics.k8s.io/v1beta1`, as
/// metrics-server, and `custom.metrics.k8s.io/v1beta2`), their discovery, and OpenAPI v2 and v3
/// documents, in JSON (legacy discovery only, as most extension servers).
fn extension_answer(path: &str) -> (http::StatusCode, Value) {
    use http::StatusCode;
    let group = |name: &str, version: &str| {
        json!({"name": name, "versions": [{"groupVersion": format!("{name}/{version}"),
            "version": version}], "preferredVersion": {"groupVersion": format!("{name}/{version}"),
            "version": version}})
    };
    let resource = |name: &str, kind: &str, namespaced: bool| {
        json!({"name": name, "singularName": "", "namespaced": namespaced, "kind": kind,
            "verbs": ["get", "list"]})
    };
    let schema = json!({"type": "object", "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"},
        "timestamp": {"type": "string", "format": "date-time"}}});
    let path = path.split('?').next().unwrap_or("");
    let ok = |body| (StatusCode::OK, body);
    match path {
        "/apis" => ok(
            json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": [
            group("metrics.k8s.io", "v1beta1"), group("custom.metrics.k8s.io", "v1beta2")]}),
        ),
        "/apis/metrics.k8s.io" => ok(group("metrics.k8s.io", "v1beta1")),
        "/apis/custom.metrics.k8s.io" => ok(group("custom.metrics.k8s.io", "v1beta2")),
        "/apis/metrics.k8s.io/v1beta1" => ok(json!({"kind": "APIResourceList",
            "apiVersion": "v1", "groupVersion": "metrics.k8s.io/v1beta1", "resources": [
                resource("nodes", "NodeMetrics", false), resource("pods", "PodMetrics", true)]})),
        "/apis/custom.metrics.k8s.io/v1beta2" => ok(json!({"kind": "APIResourceList",
            "apiVersion": "v1", "groupVersion": "custom.metrics.k8s.io/v1beta2", "resources": [
                resource("pods/requests_per_second", "MetricValueList", true)]})),
        "/openapi/v2" => ok(json!({"swagger": "2.0",
            "info": {"title": "metrics", "version": "v0.8.0"},
            "paths": {"/apis/metrics.k8s.io/v1beta1/nodes": {"get": {
                "operationId": "listMetricsV1beta1NodeMetrics",
                "responses": {"200": {"description": "OK"}}}}},
            "definitions": {
                "io.k8s.metrics.pkg.apis.metrics.v1beta1.NodeMetrics": schema.clone(),
                "io.k8s.metrics.pkg.apis.metrics.v1beta1.PodMetrics": schema.clone()}})),
        "/openapi/v3" => ok(json!({"paths": {
            "apis/metrics.k8s.io/v1beta1": {"serverRelativeURL":
                "/openapi/v3/apis/metrics.k8s.io/v1beta1?hash=0123456789ABCDEF"},
            "apis/custom.metrics.k8s.io/v1beta2": {"serverRelativeURL":
                "/openapi/v3/apis/custom.metrics.k8s.io/v1beta2?hash=FEDCBA9876543210"}}})),
        p if p.starts_with("/openapi/v3/apis/") => ok(json!({"openapi": "3.0.0",
            "info": {"title": "metrics", "version": "v0.8.0"}, "paths": {},
            "components": {"schemas": {
                "io.k8s.metrics.pkg.apis.metrics.v1beta1.NodeMetrics": schema}}})),
        _ => (
            StatusCode::NOT_FOUND,
            json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                "reason": "NotFound", "code": 404}),
        ),
    }
}

/// One extension server behind both servers through the same Service and APIServices, with
/// custom resource groups of the same priority around one of its groups: `/apis` (legacy and
/// aggregated), the group documents, and OpenAPI v2 and v3 compared.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_extension_server_is_discovered_as_upstream_discovers_it() {
    use capstan_e2e::HttpsServer;

    let (pair, _upstream, _server) = start_pair().await;
    let extension = HttpsServer::start_at(
        "127.0.0.1".parse().unwrap(),
        &["metrics.kube-system.svc"],
        |received| {
            let answer = extension_answer(&received.path);
            Box::pin(async move { answer })
        },
    )
    .await;
    let port: u16 = extension.url.rsplit(':').next().unwrap().parse().unwrap();
    let ca_bundle = {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(&extension.ca_pem)
    };
    for group in ["aaa.example.com", "zzz.example.com"] {
        let crd = json!({"apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition", "metadata": {"name": format!("things.{group}")},
            "spec": {"group": group, "scope": "Namespaced",
                "names": {"plural": "things", "singular": "thing", "kind": "Thing"},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object"}}}]}});
        pair.create(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            crd,
        )
        .await;
    }
    pair.create(
        "/api/v1/namespaces/kube-system/services",
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "metrics"},
            "spec": {"type": "ExternalName", "externalName": "localhost"}}),
    )
    .await;
    // metrics.k8s.io below the custom resources' 1000, custom.metrics.k8s.io at 1000 (its place
    // among them by name).
    for (group, version, priority) in [
        ("metrics.k8s.io", "v1beta1", 100),
        ("custom.metrics.k8s.io", "v1beta2", 1000),
    ] {
        pair.create(
            "/apis/apiregistration.k8s.io/v1/apiservices",
            json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                "metadata": {"name": format!("{version}.{group}")},
                "spec": {"group": group, "version": version,
                    "groupPriorityMinimum": priority, "versionPriority": 100,
                    "caBundle": ca_bundle,
                    "service": {"namespace": "kube-system", "name": "metrics", "port": port}}}),
        )
        .await;
    }

    let aggregated = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
    // What is compared: group order and versions, the extension groups' documents, their
    // resources in aggregated discovery, their OpenAPI v3 index entries and v2 definitions.
    let view = |legacy: &Value, aggregated: &Value, groups: [&Value; 2], v3: &Value, v2: &Value| {
        let names = |list: &Value, key: &str| -> Vec<Value> {
            list[key]
                .as_array()
                .into_iter()
                .flatten()
                .map(|g| {
                    if key == "groups" {
                        json!([g["name"], g["preferredVersion"]["version"]])
                    } else {
                        g["metadata"]["name"].clone()
                    }
                })
                .collect()
        };
        let extension_items: Vec<Value> = aggregated["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|g| {
                g["metadata"]["name"]
                    .as_str()
                    .is_some_and(|n| n.ends_with("metrics.k8s.io"))
            })
            .cloned()
            .collect();
        let v3_entries: Vec<(&String, bool)> = v3["paths"]
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| k.contains("metrics.k8s.io"))
            .map(|(k, v)| (k, v["serverRelativeURL"].is_string()))
            .collect();
        let v2_definitions: Vec<&String> = v2["definitions"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k)
            .filter(|k| k.contains(".metrics."))
            .collect();
        // How a described reference is written in v2 (kubectl's v2 reader needs `$ref`
        // beside the description, not an `allOf`).
        let pod_spec = &v2["definitions"]["io.k8s.api.core.v1.Pod"]["properties"]["spec"];
        let reference: Vec<&String> = pod_spec
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, _)| k)
            .collect();
        json!({"legacy": names(legacy, "groups"), "aggregated": names(aggregated, "items"),
            "groups": groups, "extension items": extension_items, "v3": v3_entries,
            "v2": v2_definitions, "v2 reference": [reference, pod_spec["$ref"]]})
    };
    let mut seen = [Value::Null, Value::Null];
    for attempt in 0..150 {
        for (i, client) in [&pair.upstream, &pair.capstan].into_iter().enumerate() {
            let get = |path: &'static str, accept: &'static str| async move {
                let r = client
                    .request(Method::GET, path, &[("accept", accept)], Vec::new())
                    .await;
                serde_json::from_slice::<Value>(&r.body).unwrap_or(Value::Null)
            };
            let legacy = get("/apis", "application/json").await;
            let aggregated = get("/apis", aggregated).await;
            let metrics = get("/apis/metrics.k8s.io", "application/json").await;
            let custom = get("/apis/custom.metrics.k8s.io", "application/json").await;
            let v3 = get("/openapi/v3", "application/json").await;
            let v2 = get("/openapi/v2", "application/json").await;
            seen[i] = view(&legacy, &aggregated, [&metrics, &custom], &v3, &v2);
        }
        // Both settle asynchronously (availability checks, discovery and OpenAPI refreshes).
        let settled = seen.iter().all(|v| {
            v["v2"].as_array().is_some_and(|d| !d.is_empty())
                && v["extension items"]
                    .as_array()
                    .is_some_and(|i| i.len() == 2)
        });
        if settled && seen[0] == seen[1] || attempt == 149 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let [theirs, mine] = &seen;
    assert_eq!(
        theirs,
        mine,
        "upstream:\n{}\ncapstan:\n{}",
        serde_json::to_string_pretty(theirs).unwrap(),
        serde_json::to_string_pretty(mine).unwrap()
    );
}
