//! Admission webhooks served by the test over HTTPS: a JSONPatch applied, a denial returned,
//! reinvocation, match conditions, a dry run, timeouts and garbage under both failure
//! policies.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use base64::Engine;
use capstan_e2e::{HttpsServer, RawClient, RawResponse, Received, kubectl};
use capstan_testing::TestServer;
use http::{Method, StatusCode};
use serde_json::{Value, json};

use crate::{admin, ok};

const PODS: &str = "/api/v1/namespaces/default/pods";
const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";
const MUTATING: &str = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";
const VALIDATING: &str = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";

/// What the test's webhook server saw.
#[derive(Default)]
struct Seen {
    first_calls: AtomicUsize,
    dry_runs: AtomicUsize,
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// The AdmissionReview answering `request`.
fn answer(request: &Value, response: Value) -> Value {
    let mut response = response;
    response["uid"] = request["uid"].clone();
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})
}

fn patch(ops: Value) -> Value {
    json!({"allowed": true, "patchType": "JSONPatch", "patch": b64(ops.to_string().as_bytes())})
}

/// The webhooks, by path.
fn handle(seen: &Seen, r: Received) -> (StatusCode, Value) {
    let review: Value = serde_json::from_slice(&r.body).unwrap_or_default();
    let request = &review["request"];
    let object = &request["object"];
    let path = r.path.split('?').next().unwrap_or_default();
    if request["dryRun"] == true {
        seen.dry_runs.fetch_add(1, Ordering::SeqCst);
    }
    let response = match path {
        // Counts its calls in an annotation; asks to be called again after later changes.
        "/first" => {
            let calls = seen.first_calls.fetch_add(1, Ordering::SeqCst) + 1;
            let mut ops = vec![];
            if object["metadata"]["annotations"].is_null() {
                ops.push(json!({"op": "add", "path": "/metadata/annotations", "value": {}}));
            }
            ops.push(json!({"op": "add", "path": "/metadata/annotations/first-calls", "value": calls.to_string()}));
            patch(json!(ops))
        }
        // Labels the pod, once.
        "/second" => {
            if object["metadata"]["labels"]["mutated"] == "yes" {
                json!({"allowed": true})
            } else {
                let mut p = if object["metadata"]["labels"].is_null() {
                    patch(
                        json!([{"op": "add", "path": "/metadata/labels", "value": {"mutated": "yes"}}]),
                    )
                } else {
                    patch(
                        json!([{"op": "add", "path": "/metadata/labels/mutated", "value": "yes"}]),
                    )
                };
                p["warnings"] = json!(["labelled by the test webhook"]);
                p
            }
        }
        "/validate" => {
            if object["metadata"]["labels"]["deny"] == "true" {
                json!({"allowed": false, "status": {"code": 403, "reason": "Forbidden", "message": "pods labelled deny=true are refused"}})
            } else {
                json!({"allowed": true, "auditAnnotations": {"checked": "yes"}})
            }
        }
        "/garbage" => return (StatusCode::OK, json!("not a review")),
        _ => return (StatusCode::NOT_FOUND, json!({})),
    };
    (StatusCode::OK, answer(request, response))
}

fn rule(operations: &[&str], resources: &[&str]) -> Value {
    json!({"operations": operations, "apiGroups": [""], "apiVersions": ["v1"], "resources": resources})
}

fn hook(name: &str, url: &str, ca: &str, rules: Value) -> Value {
    json!({
        "name": name,
        "clientConfig": {"url": url, "caBundle": b64(ca.as_bytes())},
        "rules": rules,
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    })
}

async fn created(raw: &RawClient, path: &str, body: Value) -> RawResponse {
    let r = raw.send_json(Method::POST, path, &body).await;
    assert_eq!(r.status, 201, "{}: {:?}", path, r.body);
    r
}

/// Posts the bodies `body` makes to `path` (the webhook index follows the configurations
/// asynchronously) until the response `holds`, up to 10 s; the last response.
async fn post_until(
    raw: &RawClient,
    path: &str,
    mut body: impl FnMut() -> Value,
    holds: impl Fn(&RawResponse) -> bool,
) -> RawResponse {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let r = raw.send_json(Method::POST, path, &body()).await;
        if holds(&r) || tokio::time::Instant::now() > deadline {
            return r;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Creates config maps `c<n+1>`, `c<n+2>`, … (the webhook index follows the configurations
/// asynchronously) until one is answered with `status`, up to 10 s; the last response.
async fn new_maps_until(raw: &RawClient, n: &mut u32, status: u16) -> RawResponse {
    post_until(
        raw,
        CONFIGMAPS,
        || {
            *n += 1;
            json!({"metadata": {"name": format!("c{n}")}})
        },
        |r| r.status == status,
    )
    .await
}

fn pod(name: &str, labels: Value) -> Value {
    json!({"metadata": {"name": name, "labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_patch_deny_reinvoke_and_see_dry_runs() {
    let server = TestServer::start().await;
    let raw = admin(&server);
    let seen = Arc::new(Seen::default());
    let state = seen.clone();
    let webhook = HttpsServer::start(move |r| handle(&state, r)).await;
    let url = |path: &str| format!("{}{path}", webhook.url);
    let ca = webhook.ca_pem.clone();

    let mut first = hook(
        "first.capstan.test",
        &url("/first"),
        &ca,
        json!([rule(&["CREATE"], &["pods"])]),
    );
    first["reinvocationPolicy"] = json!("IfNeeded");
    let mut skip = hook(
        "second.capstan.test",
        &url("/second"),
        &ca,
        json!([rule(&["CREATE"], &["pods"])]),
    );
    skip["matchConditions"] =
        json!([{"name": "not-skipped", "expression": "!object.metadata.name.startsWith('skip-')"}]);
    created(
        &raw,
        MUTATING,
        json!({"metadata": {"name": "a-first"}, "webhooks": [first]}),
    )
    .await;
    created(
        &raw,
        MUTATING,
        json!({"metadata": {"name": "b-second"}, "webhooks": [skip]}),
    )
    .await;
    let mut validate = hook(
        "deny.capstan.test",
        &url("/validate"),
        &ca,
        json!([rule(&["CREATE", "UPDATE"], &["pods"])]),
    );
    validate["sideEffects"] = json!("NoneOnDryRun");
    let v = created(
        &raw,
        VALIDATING,
        json!({"metadata": {"name": "deny"}, "webhooks": [validate]}),
    )
    .await;
    // Upstream's defaults.
    let v = v.json();
    assert_eq!(v["webhooks"][0]["failurePolicy"], "Fail");
    assert_eq!(v["webhooks"][0]["timeoutSeconds"], 10);
    assert_eq!(v["webhooks"][0]["matchPolicy"], "Equivalent");

    // The patch of the second webhook is applied, its warning returned, and the first
    // webhook, which asked for it, called again after that change.
    let mut n = 0;
    let r = post_until(
        &raw,
        PODS,
        || {
            n += 1;
            pod(&format!("p{n}"), json!({"app": "x"}))
        },
        |r| r.status == 201 && r.json()["metadata"]["labels"]["mutated"] == "yes",
    )
    .await;
    let p = r.json();
    assert_eq!(
        p["metadata"]["labels"],
        json!({"app": "x", "mutated": "yes"}),
        "{p}"
    );
    assert_eq!(
        p["metadata"]["annotations"]["first-calls"],
        format!("{}", seen.first_calls.load(Ordering::SeqCst))
    );
    let warning = r
        .headers
        .get("warning")
        .expect("a Warning header")
        .to_str()
        .unwrap();
    assert_eq!(warning, r#"299 - "labelled by the test webhook""#);
    // Reinvocation: the last pod's create called the first webhook twice.
    let before = seen.first_calls.load(Ordering::SeqCst);
    let r = created(&raw, PODS, pod("twice", json!({}))).await.json();
    assert_eq!(seen.first_calls.load(Ordering::SeqCst), before + 2);
    assert_eq!(
        r["metadata"]["annotations"]["first-calls"],
        (before + 2).to_string()
    );

    // A match condition keeps the second webhook away from skip-* pods.
    let r = created(&raw, PODS, pod("skip-me", json!({"app": "x"})))
        .await
        .json();
    assert_eq!(r["metadata"]["labels"], json!({"app": "x"}));

    // The validating webhook's denial, with its code and message.
    let r = post_until(
        &raw,
        PODS,
        || pod("denied", json!({"deny": "true"})),
        |r| r.status == 403,
    )
    .await;
    assert_eq!(r.status, 403, "{:?}", r.body);
    let status = r.json();
    assert_eq!(status["reason"], "Forbidden");
    assert_eq!(
        status["message"],
        "admission webhook \"deny.capstan.test\" denied the request: pods labelled deny=true are refused"
    );
    // kubectl shows the same refusal.
    let manifest = server.data_dir().join("denied.json");
    let mut denied = pod("denied", json!({"deny": "true"}));
    denied["apiVersion"] = json!("v1");
    denied["kind"] = json!("Pod");
    std::fs::write(&manifest, denied.to_string()).unwrap();
    let (success, _, err) = kubectl(
        &server.kubeconfig_path(),
        &["create", "-f", manifest.to_str().unwrap()],
    );
    assert!(!success);
    assert!(err.contains("admission webhook \"deny.capstan.test\" denied the request: pods labelled deny=true are refused"), "{err}");

    // A dry run reaches the webhooks (with dryRun set) and stores nothing.
    let dry_before = seen.dry_runs.load(Ordering::SeqCst);
    let r = raw
        .send_json(
            Method::POST,
            &format!("{PODS}?dryRun=All"),
            &pod("dry", json!({})),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    assert_eq!(r.json()["metadata"]["labels"]["mutated"], "yes");
    assert!(
        seen.dry_runs.load(Ordering::SeqCst) >= dry_before + 3,
        "every webhook saw the dry run"
    );
    assert_eq!(raw.get(&format!("{PODS}/dry")).await.status, 404);

    // kubectl lists the configurations with their webhook counts.
    let out = ok(kubectl(
        &server.kubeconfig_path(),
        &["get", "validatingwebhookconfigurations"],
    ));
    assert!(out.starts_with("NAME") && out.contains("WEBHOOKS"), "{out}");
    assert!(
        out.lines()
            .any(|l| l.starts_with("deny ") && l.split_whitespace().nth(1) == Some("1")),
        "{out}"
    );

    // Deleting a configuration takes its webhook out.
    let r = raw
        .request(
            Method::DELETE,
            &format!("{VALIDATING}/deny"),
            &[],
            Vec::new(),
        )
        .await;
    assert_eq!(r.status, 200);
    let r = post_until(
        &raw,
        PODS,
        || pod("allowed-now", json!({"deny": "true"})),
        |r| r.status == 201,
    )
    .await;
    assert_eq!(r.status, 201, "{:?}", r.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failing_webhooks_fail_closed_or_open_by_policy() {
    let server = TestServer::start().await;
    let raw = admin(&server);
    // One endpoint that never answers in time, one that answers garbage.
    let webhook = HttpsServer::start_async(|r: Received| {
        Box::pin(async move {
            if r.path.starts_with("/slow") {
                tokio::time::sleep(Duration::from_secs(5)).await;
                return (StatusCode::OK, json!({}));
            }
            (StatusCode::OK, json!({"garbage": true}))
        })
    })
    .await;
    let mut slow = hook(
        "slow.capstan.test",
        &format!("{}/slow", webhook.url),
        &webhook.ca_pem,
        json!([rule(&["CREATE"], &["configmaps"])]),
    );
    slow["timeoutSeconds"] = json!(1);
    let garbage = hook(
        "garbage.capstan.test",
        &format!("{}/garbage", webhook.url),
        &webhook.ca_pem,
        json!([rule(&["CREATE"], &["secrets"])]),
    );
    created(
        &raw,
        VALIDATING,
        json!({"metadata": {"name": "failing"}, "webhooks": [slow, garbage]}),
    )
    .await;

    let cm = |name: &str| json!({"metadata": {"name": name}});
    let mut n = 0;
    let r = new_maps_until(&raw, &mut n, 500).await;
    assert_eq!(r.status, 500, "{:?}", r.body);
    let message = r.json()["message"].as_str().unwrap().to_string();
    assert!(
        message.starts_with("Internal error occurred: failed calling webhook \"slow.capstan.test\": failed to call webhook: Post \"")
            && message.ends_with("/slow?timeout=1s\": context deadline exceeded"),
        "{message}"
    );
    let r = raw
        .send_json(
            Method::POST,
            "/api/v1/namespaces/default/secrets",
            &cm("s1"),
        )
        .await;
    assert_eq!(r.status, 500);
    let message = r.json()["message"].as_str().unwrap().to_string();
    assert!(
        message.contains("failed calling webhook \"garbage.capstan.test\": received invalid webhook response: expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview"),
        "{message}"
    );

    // failurePolicy Ignore: both are skipped.
    let mut config = raw.get(&format!("{VALIDATING}/failing")).await.json();
    for w in config["webhooks"].as_array_mut().unwrap() {
        w["failurePolicy"] = json!("Ignore");
    }
    let r = raw
        .send_json(Method::PUT, &format!("{VALIDATING}/failing"), &config)
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let r = new_maps_until(&raw, &mut n, 201).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
    let r = raw
        .send_json(
            Method::POST,
            "/api/v1/namespaces/default/secrets",
            &cm("s2"),
        )
        .await;
    assert_eq!(r.status, 201, "{:?}", r.body);

    // A broken catch-all webhook that fails closed refuses everything but the admission
    // configuration: it can be removed, as upstream lets it be.
    let mut everything = hook(
        "everything.capstan.test",
        &format!("{}/garbage", webhook.url),
        &webhook.ca_pem,
        json!([{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"],
            "resources": ["*/*"]}]),
    );
    everything["failurePolicy"] = json!("Fail");
    created(
        &raw,
        VALIDATING,
        json!({"metadata": {"name": "catch-all"}, "webhooks": [everything]}),
    )
    .await;
    let r = new_maps_until(&raw, &mut n, 500).await;
    assert_eq!(r.status, 500, "{:?}", r.body);
    let r = raw
        .request(
            Method::DELETE,
            &format!("{VALIDATING}/catch-all"),
            &[],
            Vec::new(),
        )
        .await;
    assert_eq!(r.status, 200, "{:?}", r.body);
    let r = new_maps_until(&raw, &mut n, 201).await;
    assert_eq!(r.status, 201, "{:?}", r.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_configurations_are_refused_with_field_paths() {
    let server = TestServer::start().await;
    let raw = admin(&server);
    let r = raw
        .send_json(
            Method::POST,
            VALIDATING,
            &json!({"metadata": {"name": "bad"}, "webhooks": [{
                "name": "bad",
                "clientConfig": {"url": "http://example.com/"},
                "rules": [rule(&["CREATE"], &["pods"])],
                "sideEffects": "Some",
                "timeoutSeconds": 60,
                "admissionReviewVersions": ["v1"],
                "matchConditions": [{"name": "c", "expression": "object.metadata.name =="}],
            }]}),
        )
        .await;
    assert_eq!(r.status, 422, "{:?}", r.body);
    let status = r.json();
    let fields: Vec<&str> = status["details"]["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["field"].as_str().unwrap())
        .collect();
    for f in [
        "webhooks[0].name",
        "webhooks[0].clientConfig.url",
        "webhooks[0].sideEffects",
        "webhooks[0].timeoutSeconds",
        "webhooks[0].matchConditions[0].expression",
    ] {
        assert!(fields.contains(&f), "{f} not in {fields:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn switched_off_webhook_plugins_call_nothing() {
    let server = TestServer::start_with(|c| {
        c.admission.disable = vec![
            "MutatingAdmissionWebhook".into(),
            "ValidatingAdmissionWebhook".into(),
        ];
    })
    .await;
    let raw = admin(&server);
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let webhook = HttpsServer::start(move |_| {
        counted.fetch_add(1, Ordering::SeqCst);
        (StatusCode::OK, json!({}))
    })
    .await;
    let h = hook(
        "off.capstan.test",
        &webhook.url,
        &webhook.ca_pem,
        json!([rule(&["*"], &["*"])]),
    );
    created(
        &raw,
        VALIDATING,
        json!({"metadata": {"name": "off"}, "webhooks": [h.clone()]}),
    )
    .await;
    created(
        &raw,
        MUTATING,
        json!({"metadata": {"name": "off"}, "webhooks": [h]}),
    )
    .await;
    // With the plugins on, the index follows a new configuration within milliseconds;
    // forty writes later, nothing was called.
    for n in 0..40 {
        created(
            &raw,
            CONFIGMAPS,
            json!({"metadata": {"name": format!("c{n}")}}),
        )
        .await;
    }
    assert_eq!(calls.load(Ordering::SeqCst), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scale_writes_are_admitted_as_scales() {
    // The webhook caps replicas at 5 by patching the Scale, and records what it saw.
    let seen: Arc<std::sync::Mutex<Vec<Value>>> = Arc::default();
    let record = seen.clone();
    let webhook = HttpsServer::start(move |r: Received| {
        let review: Value = serde_json::from_slice(&r.body).unwrap();
        let request = review["request"].clone();
        record.lock().unwrap().push(request.clone());
        let replicas = request["object"]["spec"]["replicas"].as_i64().unwrap_or(0);
        let response = if replicas > 5 {
            json!({"allowed": true, "patchType": "JSONPatch",
                "patch": b64(json!([{"op": "replace", "path": "/spec/replicas", "value": 5}]).to_string().as_bytes())})
        } else {
            json!({"allowed": true})
        };
        (StatusCode::OK, answer(&request, response))
    })
    .await;
    let server = TestServer::start().await;
    let raw = admin(&server);
    let rules = json!([{"operations": ["UPDATE"], "apiGroups": ["apps"], "apiVersions": ["v1"],
        "resources": ["deployments/scale"]}]);
    let mut config = hook("cap.example.com", &webhook.url, &webhook.ca_pem, rules);
    config["reinvocationPolicy"] = json!("Never");
    created(
        &raw,
        MUTATING,
        json!({"metadata": {"name": "cap"}, "webhooks": [config]}),
    )
    .await;
    let kc = server.kubeconfig_path();
    ok(kubectl(
        &kc,
        &["create", "deployment", "web", "--image=nginx"],
    ));

    // The webhook index follows the configuration asynchronously: scale until it answers.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let deployment = loop {
        ok(kubectl(
            &kc,
            &["scale", "deployment", "web", "--replicas=9"],
        ));
        let d = raw
            .get("/apis/apps/v1/namespaces/default/deployments/web")
            .await
            .json();
        if d["spec"]["replicas"] == 5 || tokio::time::Instant::now() > deadline {
            break d;
        }
    };
    assert_eq!(deployment["spec"]["replicas"], 5);
    let request = seen.lock().unwrap().last().unwrap().clone();
    assert_eq!(
        request["kind"],
        json!({"group": "autoscaling", "version": "v1", "kind": "Scale"})
    );
    assert_eq!(
        request["resource"],
        json!({"group": "apps", "version": "v1", "resource": "deployments"})
    );
    assert_eq!(request["subResource"], "scale");
    assert_eq!(request["object"]["kind"], "Scale");
    assert_eq!(request["oldObject"]["spec"]["replicas"], 1);
    // A write to the deployment itself is not the scale subresource's: the webhook is silent.
    let calls = seen.lock().unwrap().len();
    ok(kubectl(&kc, &["label", "deployment", "web", "touched=yes"]));
    assert_eq!(seen.lock().unwrap().len(), calls);
    // The scale's managedFields entry names the subresource.
    let managers = deployment["metadata"]["managedFields"].as_array().unwrap();
    assert!(
        managers.iter().any(|m| m["subresource"] == "scale"),
        "{managers:?}"
    );
}

/// A webhook that refuses ConfigMaps, saying which route reached it.
fn refusing(route: &'static str) -> impl Fn(Received) -> capstan_e2e::Answer + Send + Sync {
    move |r: Received| {
        let review: Value = serde_json::from_slice(&r.body).unwrap_or_default();
        let response = json!({"allowed": false, "status": {"code": 403, "reason": "Forbidden",
            "message": format!("refused by the webhook reached {route}")}});
        let answer = answer(&review["request"], response);
        Box::pin(async move { (StatusCode::OK, answer) })
    }
}

/// A validating webhook of ConfigMaps labelled `route=<label>`, named by a Service reference.
fn service_hook(label: &str, service: &str, port: u16, ca: &str) -> Value {
    json!({"metadata": {"name": format!("by-{label}")}, "webhooks": [{
        "name": format!("{label}.capstan.test"),
        "clientConfig": {"service": {"namespace": "default", "name": service, "port": port,
            "path": "/refuse"}, "caBundle": b64(ca.as_bytes())},
        "rules": [rule(&["CREATE"], &["configmaps"])],
        "objectSelector": {"matchLabels": {"route": label}},
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    }]})
}

fn labelled_map(name: &str, label: &str) -> Value {
    json!({"metadata": {"name": name, "labels": {"route": label}}})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn webhooks_named_by_services_are_reached_as_upstream_resolves_them() {
    // By default a Service reference resolves to the cluster IP, or an ExternalName
    // Service's host; the connection names the Service for TLS.
    let server = TestServer::start().await;
    let raw = admin(&server);
    let local = "127.0.0.1".parse().unwrap();
    let webhook = HttpsServer::start_at(local, &["hooks.default.svc"], refusing("by name")).await;
    let port: u16 = webhook.url.rsplit(':').next().unwrap().parse().unwrap();
    created(
        &raw,
        "/api/v1/namespaces/default/services",
        json!({"metadata": {"name": "hooks"}, "spec": {"type": "ExternalName", "externalName": "localhost"}}),
    )
    .await;
    created(
        &raw,
        "/api/v1/namespaces/default/services",
        json!({"metadata": {"name": "elsewhere"}, "spec": {"ports": [{"port": 443}]}}),
    )
    .await;
    created(
        &raw,
        VALIDATING,
        service_hook("external", "hooks", port, &webhook.ca_pem),
    )
    .await;
    created(
        &raw,
        VALIDATING,
        service_hook("missing", "elsewhere", 8443, &webhook.ca_pem),
    )
    .await;
    let r = post_until(
        &raw,
        CONFIGMAPS,
        || labelled_map("a", "external"),
        |r| r.status == 403,
    )
    .await;
    assert_eq!(r.status, 403, "{:?}", r.body);
    assert_eq!(
        r.json()["message"],
        "admission webhook \"external.capstan.test\" denied the request: refused by the webhook reached by name"
    );
    // A port the Service does not have: the call fails, and the write with it (Fail).
    let r = post_until(
        &raw,
        CONFIGMAPS,
        || labelled_map("b", "missing"),
        |r| r.status == 500,
    )
    .await;
    let message = r.json()["message"].as_str().unwrap_or_default().to_string();
    assert!(
        message.contains("https://elsewhere.default.svc:8443/refuse")
            && message.contains("no service port 8443 found for service \"elsewhere\""),
        "{message}"
    );
    server.stop().await;

    // With --enable-aggregator-routing, at an address of the Service's endpoints.
    let server = TestServer::start_with(|c| c.aggregator_routing = true).await;
    let raw = admin(&server);
    let ip = crate::proxy::own_address();
    let webhook =
        HttpsServer::start_at(ip, &["hooks.default.svc"], refusing("by its endpoints")).await;
    let port: u16 = webhook.url.rsplit(':').next().unwrap().parse().unwrap();
    created(
        &raw,
        "/api/v1/namespaces/default/services",
        json!({"metadata": {"name": "hooks"}, "spec": {"ports": [{"name": "https", "port": 443}]}}),
    )
    .await;
    created(
        &raw,
        "/api/v1/namespaces/default/endpoints",
        json!({"metadata": {"name": "hooks"}, "subsets": [{"addresses": [{"ip": ip.to_string()}],
            "ports": [{"name": "https", "port": port}]}]}),
    )
    .await;
    created(
        &raw,
        VALIDATING,
        service_hook("endpoints", "hooks", 443, &webhook.ca_pem),
    )
    .await;
    let r = post_until(
        &raw,
        CONFIGMAPS,
        || labelled_map("c", "endpoints"),
        |r| r.status == 403,
    )
    .await;
    assert_eq!(r.status, 403, "{:?}", r.body);
    assert!(
        r.json()["message"]
            .as_str()
            .is_some_and(|m| m.ends_with("refused by the webhook reached by its endpoints")),
        "{:?}",
        r.body
    );
}
