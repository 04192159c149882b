//! Admission in the version each webhook and policy asks for: the same webhooks (served by
//! the test, called by both servers) and the same ValidatingAdmissionPolicy configured in
//! Capstan and in upstream's kube-apiserver, the same writes made in several versions of
//! HorizontalPodAutoscalers, Events and a custom resource; what each webhook was sent
//! (kinds, resources, the object's version and field managers) and what the writes stored are
//! compared.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine;
use capstan_e2e::{HttpsServer, RawClient, Received};
use capstan_testing::TestServer;
use http::{Method, StatusCode};
use serde_json::{Value, json};

use super::{Upstream, capstan};

const SERVERS: [&str; 2] = ["upstream", "capstan"];
const HPAS: &str = "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers";
const HPAS_V2: &str = "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers";

/// What the webhooks were sent, by server: (webhook, the review's gist).
type Seen = Arc<Mutex<BTreeMap<String, Vec<(String, Value)>>>>;

/// A test of a rendered call, and why such calls differ.
type Known = (fn(&str) -> bool, &'static str);

/// Differences in what the webhooks are sent, known and documented (docs/api-behaviour.md,
/// managedFields), each with a test of a rendered call and why; each must still be seen.
const KNOWN: [Known; 1] = [(
    |call| {
        ["h1", "h3", "new-event", "w2"]
            .iter()
            .any(|name| call.contains(&format!("\"name\":\"{name}\"")))
    },
    "managedFields entries name the stored version (autoscaling/v2, v1 Events, a custom \
         resource's storage version) where upstream names the version written through",
)];

/// The parts of a review that depend on versions, and the object's field managers (which
/// validating webhooks see with the request's own entry already recorded).
fn gist(request: &Value) -> Value {
    let version_of = |o: &Value| {
        let managers: Vec<Value> = o["metadata"]["managedFields"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|m| {
                json!([
                    m["manager"],
                    m["operation"],
                    m["apiVersion"],
                    m["subresource"],
                    m["fieldsType"]
                ])
            })
            .collect();
        json!({
            "apiVersion": o["apiVersion"],
            "kind": o["kind"],
            "name": o["metadata"]["name"],
            "managers": managers,
        })
    };
    json!({
        "operation": request["operation"],
        "kind": request["kind"],
        "resource": request["resource"],
        "subResource": request["subResource"],
        "requestKind": request["requestKind"],
        "requestResource": request["requestResource"],
        "requestSubResource": request["requestSubResource"],
        "object": version_of(&request["object"]),
        "oldObject": version_of(&request["oldObject"]),
    })
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The webhooks at `/<server>/<webhook>`: they record what they are sent; the probes refuse
/// objects named for them; `hpa-mutate` sets an autoscaling/v2 CPU target to 42.
fn handle(seen: &Seen, r: Received) -> (StatusCode, Value) {
    let review: Value = serde_json::from_slice(&r.body).unwrap_or_default();
    let request = &review["request"];
    let path = r.path.split('?').next().unwrap_or_default();
    let mut parts = path.trim_start_matches('/').splitn(2, '/');
    let (server, hook) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    let name = request["name"].as_str().unwrap_or_default();
    let mut response = json!({"uid": request["uid"], "allowed": true});
    match hook {
        "probe-mutating" | "probe-validating" => {
            if name.starts_with(&hook[6..7]) {
                response["allowed"] = json!(false);
            }
        }
        _ => {
            seen.lock()
                .unwrap()
                .entry(server.to_string())
                .or_default()
                .push((hook.to_string(), gist(request)));
        }
    }
    if hook == "hpa-mutate"
        && request["object"]["apiVersion"] == "autoscaling/v2"
        && !request["object"]["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"]
            .is_null()
    {
        let patch = json!([{"op": "replace",
            "path": "/spec/metrics/0/resource/target/averageUtilization", "value": 42}]);
        response["patchType"] = json!("JSONPatch");
        response["patch"] = json!(b64(patch.to_string().as_bytes()));
    }
    (
        StatusCode::OK,
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}),
    )
}

fn rule(group: &str, version: &str, resources: &[&str], operations: &[&str]) -> Value {
    json!({"apiGroups": [group], "apiVersions": [version], "resources": resources,
        "operations": operations})
}

fn hook(webhook: &HttpsServer, server: &str, name: &str, rules: Value, policy: &str) -> Value {
    json!({
        "name": format!("{name}.example.com"),
        "clientConfig": {"url": format!("{}/{server}/{name}", webhook.url),
            "caBundle": b64(webhook.ca_pem.as_bytes())},
        "rules": rules,
        "matchPolicy": policy,
        "sideEffects": "None",
        "failurePolicy": "Fail",
        "admissionReviewVersions": ["v1"],
    })
}

/// The configurations for `server`'s webhooks.
fn configurations(webhook: &HttpsServer, server: &str) -> (Value, Value) {
    let hpa = [
        "horizontalpodautoscalers",
        "horizontalpodautoscalers/status",
    ];
    let writes = ["CREATE", "UPDATE", "DELETE"];
    let h = |name: &str, rules: Value, policy: &str| hook(webhook, server, name, rules, policy);
    let validating = json!({
        "metadata": {"name": "versions"},
        "webhooks": [
            h("probe-validating", json!([rule("", "v1", &["configmaps"], &["CREATE"])]), "Exact"),
            h("hpa-v1-exact", json!([rule("autoscaling", "v1", &hpa, &writes)]), "Exact"),
            h("hpa-v1-equivalent", json!([rule("autoscaling", "v1", &hpa, &writes)]), "Equivalent"),
            h("hpa-v2-exact", json!([rule("autoscaling", "v2", &hpa, &writes)]), "Exact"),
            h("hpa-v2-equivalent", json!([rule("autoscaling", "v2", &hpa, &writes)]), "Equivalent"),
            h("events-v1-exact", json!([rule("", "v1", &["events"], &["CREATE"])]), "Exact"),
            h("events-new-equivalent",
                json!([rule("events.k8s.io", "v1", &["events"], &["CREATE"])]), "Equivalent"),
            h("widgets-v2-exact",
                json!([rule("example.com", "v2", &["widgets"], &["CREATE", "UPDATE"])]), "Exact"),
            h("widgets-v2-equivalent",
                json!([rule("example.com", "v2", &["widgets"], &["CREATE", "UPDATE"])]), "Equivalent"),
        ],
    });
    let mutating = json!({
        "metadata": {"name": "versions"},
        "webhooks": [
            h("probe-mutating", json!([rule("", "v1", &["configmaps"], &["CREATE"])]), "Exact"),
            h("hpa-mutate", json!([rule("autoscaling", "v2", &["horizontalpodautoscalers"], &["CREATE"])]), "Equivalent"),
        ],
    });
    (validating, mutating)
}

/// A ValidatingAdmissionPolicy on autoscaling/v2 HPAs (matched in any version) that refuses
/// those labelled `deny`, saying which version it saw.
fn policy() -> (Value, Value) {
    (
        json!({
            "metadata": {"name": "hpa-versions"},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {"resourceRules": [
                    {"apiGroups": ["autoscaling"], "apiVersions": ["v2"],
                        "resources": ["horizontalpodautoscalers"], "operations": ["CREATE"]}]},
                "validations": [{
                    "expression": "!has(object.metadata.labels) || !('deny' in object.metadata.labels)",
                    "messageExpression": "'seen as ' + object.apiVersion + ' with ' + string(size(object.spec.metrics)) + ' metrics, kind ' + request.kind.version + ', requested ' + request.requestKind.version",
                }],
            },
        }),
        json!({
            "metadata": {"name": "hpa-versions"},
            "spec": {"policyName": "hpa-versions", "validationActions": ["Deny"]},
        }),
    )
}

fn hpa_v1(name: &str, labels: Value) -> Value {
    json!({"metadata": {"name": name, "labels": labels}, "spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 1, "maxReplicas": 3, "targetCPUUtilizationPercentage": 50}})
}

fn hpa_v2(name: &str) -> Value {
    json!({"metadata": {"name": name}, "spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 1, "maxReplicas": 3,
        "metrics": [{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 60}}}]}})
}

fn widgets_crd() -> Value {
    let schema = json!({"openAPIV3Schema": {"type": "object",
        "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}});
    json!({
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [
                {"name": "v1", "served": true, "storage": true, "schema": schema},
                {"name": "v2", "served": true, "storage": false, "schema": schema},
            ],
        },
    })
}

/// Sends `body` to one server; status and body.
async fn send(
    client: &RawClient,
    method: Method,
    path: &str,
    content_type: &str,
    body: &Value,
) -> (u16, Value) {
    let r = client
        .request(
            method,
            path,
            &[("content-type", content_type)],
            serde_json::to_vec(body).unwrap(),
        )
        .await;
    (
        r.status.as_u16(),
        serde_json::from_slice(&r.body).unwrap_or(Value::Null),
    )
}

/// Retries `attempt` (given the try's number) until it answers `holds`, up to 30 s.
async fn until<F: std::future::Future<Output = (u16, Value)>>(
    mut attempt: impl FnMut(u32) -> F,
    holds: impl Fn(u16) -> bool,
) -> (u16, Value) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let mut n = 0;
    loop {
        n += 1;
        let answer = attempt(n).await;
        if holds(answer.0) || tokio::time::Instant::now() > deadline {
            return answer;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_and_policies_see_the_versions_they_ask_for() {
    let seen: Seen = Arc::default();
    let record = seen.clone();
    let webhook = HttpsServer::start(move |r| handle(&record, r)).await;
    let upstream = Upstream::start().await;
    let server = TestServer::start().await;
    let clients = [upstream.client.clone(), capstan(&server)];
    let json_type = "application/json";

    // Configure both; wait until each server's webhooks, policy and CRD are in force.
    let (vap, vap_binding) = policy();
    for (client, name) in clients.iter().zip(SERVERS) {
        let (validating, mutating) = configurations(&webhook, name);
        for (path, body) in [
            (
                "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations",
                validating,
            ),
            (
                "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations",
                mutating,
            ),
            (
                "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
                vap.clone(),
            ),
            (
                "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
                vap_binding.clone(),
            ),
            (
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                widgets_crd(),
            ),
        ] {
            let (status, body) = send(client, Method::POST, path, json_type, &body).await;
            assert_eq!(status, 201, "{name}: POST {path}: {body}");
        }
    }
    for (client, name) in clients.iter().zip(SERVERS) {
        for prefix in ["m", "v"] {
            let (status, body) = until(
                |n| {
                    let object = json!({"metadata": {"name": format!("{prefix}-probe-{n}")}});
                    async move {
                        send(
                            client,
                            Method::POST,
                            "/api/v1/namespaces/default/configmaps",
                            json_type,
                            &object,
                        )
                        .await
                    }
                },
                |status| status >= 400,
            )
            .await;
            assert!(
                status >= 400,
                "{name}: the {prefix} probe webhook was never called: {body}"
            );
        }
        let (status, body) = until(
            |n| {
                let object = hpa_v1(&format!("probe-{n}"), json!({"deny": "yes"}));
                async move { send(client, Method::POST, HPAS, json_type, &object).await }
            },
            |status| status >= 400,
        )
        .await;
        assert!(
            status >= 400,
            "{name}: the policy never came into force: {body}"
        );
        let (status, body) = until(
            |_| async move {
                send(
                    client,
                    Method::GET,
                    "/apis/example.com/v2/namespaces/default/widgets",
                    json_type,
                    &Value::Null,
                )
                .await
            },
            |status| status == 200,
        )
        .await;
        assert_eq!(status, 200, "{name}: widgets/v2 never served: {body}");
    }
    seen.lock().unwrap().clear();

    // The same writes to both, in several versions.
    let widget = |version: &str, name: &str| {
        json!({"apiVersion": format!("example.com/{version}"), "kind": "Widget",
            "metadata": {"name": name}, "spec": {"size": 1}})
    };
    let event = json!({"metadata": {"name": "core-event"}, "involvedObject": {"kind": "Pod", "name": "p", "namespace": "default"},
        "reason": "Tested", "message": "m", "type": "Normal", "source": {"component": "test"}});
    let new_event = json!({"metadata": {"name": "new-event"}, "eventTime": "2026-11-28T10:00:00.000000Z",
        "reportingController": "example.com/test", "reportingInstance": "test-1", "action": "Test",
        "reason": "Tested", "type": "Normal", "regarding": {"kind": "Pod", "name": "p", "namespace": "default"}});
    let writes: Vec<(Method, String, &str, Value)> = vec![
        (
            Method::POST,
            HPAS.into(),
            json_type,
            hpa_v1("h1", json!({})),
        ),
        (Method::POST, HPAS_V2.into(), json_type, hpa_v2("h2")),
        (
            Method::POST,
            HPAS.into(),
            json_type,
            hpa_v1("h3", json!({"deny": "yes"})),
        ),
        (Method::POST, HPAS_V2.into(), json_type, {
            let mut h = hpa_v2("h4");
            h["metadata"]["labels"] = json!({"deny": "yes"});
            h
        }),
        (
            Method::PATCH,
            format!("{HPAS}/h1/status"),
            "application/merge-patch+json",
            json!({"status": {"currentReplicas": 1, "desiredReplicas": 2}}),
        ),
        (
            Method::PATCH,
            format!("{HPAS_V2}/h1"),
            "application/merge-patch+json",
            json!({"spec": {"maxReplicas": 4}}),
        ),
        (
            Method::PATCH,
            format!("{HPAS_V2}/h2"),
            "application/merge-patch+json",
            json!({"spec": {"minReplicas": 2}}),
        ),
        (Method::DELETE, format!("{HPAS}/h2"), json_type, Value::Null),
        (
            Method::POST,
            "/api/v1/namespaces/default/events".into(),
            json_type,
            event,
        ),
        (
            Method::POST,
            "/apis/events.k8s.io/v1/namespaces/default/events".into(),
            json_type,
            new_event,
        ),
        (
            Method::POST,
            "/apis/example.com/v1/namespaces/default/widgets".into(),
            json_type,
            widget("v1", "w1"),
        ),
        (
            Method::POST,
            "/apis/example.com/v2/namespaces/default/widgets".into(),
            json_type,
            widget("v2", "w2"),
        ),
        (
            Method::PATCH,
            "/apis/example.com/v1/namespaces/default/widgets/w1".into(),
            "application/merge-patch+json",
            json!({"spec": {"size": 2}}),
        ),
    ];
    let mut differences = Vec::new();
    for (method, path, content_type, body) in &writes {
        let mut answers = Vec::new();
        for client in &clients {
            let (status, body) = send(client, method.clone(), path, content_type, body).await;
            // Denials are compared whole; stored objects by their spec (what deletes answer
            // is `deletes_answer_as_upstream`'s).
            let body = if status >= 400 {
                body
            } else if *method == Method::DELETE {
                Value::Null
            } else {
                body["spec"].clone()
            };
            answers.push((status, body));
        }
        if answers[0] != answers[1] {
            differences.push(format!(
                "{method} {path}:\n  upstream: {:?}\n  capstan:  {:?}",
                answers[0], answers[1]
            ));
        }
    }
    // The mutation made in autoscaling/v2 is read back in autoscaling/v1.
    for client in &clients {
        let (status, h1) = send(
            client,
            Method::GET,
            &format!("{HPAS}/h1"),
            json_type,
            &Value::Null,
        )
        .await;
        assert_eq!(status, 200, "{h1}");
        assert_eq!(h1["spec"]["targetCPUUtilizationPercentage"], 42, "{h1}");
    }

    // Every webhook call, compared (validating webhooks run in parallel: sorted).
    let mut seen = std::mem::take(&mut *seen.lock().unwrap());
    let mut calls: Vec<Vec<(String, Value)>> = SERVERS
        .iter()
        .map(|s| seen.remove(*s).unwrap_or_default())
        .collect();
    for list in &mut calls {
        list.sort_by_key(|(hook, gist)| (hook.clone(), gist.to_string()));
    }
    assert!(!calls[0].is_empty(), "upstream called no webhook");
    let render = |list: &[(String, Value)]| -> Vec<String> {
        list.iter()
            .map(|(hook, gist)| format!("{hook} {gist}"))
            .collect()
    };
    let (theirs, mine) = (render(&calls[0]), render(&calls[1]));
    // Updates through the stored version are among the calls compared (what validating
    // webhooks see of the write's own managedFields entry).
    for name in ["h2", "w1"] {
        let update = format!("\"name\":\"{name}\"");
        assert!(
            theirs
                .iter()
                .any(|c| c.contains(&update) && c.contains("\"operation\":\"UPDATE\"")),
            "no webhook saw the update of {name}: {theirs:#?}"
        );
    }
    let mut known_seen = [false; KNOWN.len()];
    let mut compare =
        |call: &String, side: &str| match KNOWN.iter().position(|(known, _)| known(call)) {
            Some(i) => known_seen[i] = true,
            None => differences.push(format!("only {side} called: {call}")),
        };
    theirs
        .iter()
        .filter(|c| !mine.contains(c))
        .for_each(|c| compare(c, "upstream"));
    mine.iter()
        .filter(|c| !theirs.contains(c))
        .for_each(|c| compare(c, "capstan"));
    for ((_, why), seen) in KNOWN.iter().zip(known_seen) {
        assert!(
            seen,
            "a known difference is gone (take it off KNOWN): {why}"
        );
    }
    assert!(
        differences.is_empty(),
        "{} differences:\n{}",
        differences.len(),
        differences.join("\n")
    );
}
