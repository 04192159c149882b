//! API aggregation with upstream's own extension server: `sample-apiserver` (wardle.example.com,
//! on its own etcd, both from `../shared/k8s/`) registered through an APIService and driven with
//! kubectl and raw requests through Capstan.

use std::time::Duration;

use capstan_e2e::upstream::{Process, binaries, start_etcd, start_on_free_port};
use capstan_e2e::{RawClient, TestCa, kubectl};
use http::Method;
use serde_json::{Value, json};

use super::{ok, server_with_tokens};

const WARDLE: &str = "/apis/wardle.example.com/v1alpha1";
const WARDLE_API_SERVICE: &str = "v1alpha1.wardle.example.com";

/// Creates each `(collection path, object)` in turn; each must be created.
async fn create_all(admin: &RawClient, objects: Vec<(&str, Value)>) {
    for (path, body) in objects {
        let resp = admin
            .request(
                Method::POST,
                path,
                &[("content-type", "application/json")],
                body.to_string().into_bytes(),
            )
            .await;
        assert_eq!(resp.status, 201, "POST {path}: {}", resp.json());
    }
}

/// The server settings of a front proxy, its files written in `dir`: a front-proxy CA that
/// extension servers trust (through the published `extension-apiserver-authentication`), the
/// client certificate the server presents to them, upstream's header names.
fn front_proxy(dir: &std::path::Path) -> impl FnOnce(&mut capstan_server::ServerConfig) {
    let ca = TestCa::new("front-proxy-ca");
    let bundle = dir.join("front-proxy-ca.crt");
    std::fs::write(&bundle, &ca.pem).unwrap();
    let (cert, key) = ca.client("front-proxy-client", &[]);
    let (cert_file, key_file) = (dir.join("proxy.crt"), dir.join("proxy.key"));
    std::fs::write(&cert_file, cert).unwrap();
    std::fs::write(&key_file, key).unwrap();
    move |c| {
        c.requestheader_client_ca_file = Some(bundle);
        c.requestheader = capstan_server::RequestHeaderConfig {
            allowed_names: vec!["front-proxy-client".into()],
            username_headers: vec!["X-Remote-User".into()],
            group_headers: vec!["X-Remote-Group".into()],
            extra_headers_prefix: vec!["X-Remote-Extra-".into()],
        };
        c.proxy_client_cert_file = Some(cert_file);
        c.proxy_client_key_file = Some(key_file);
    }
}

/// Polls the APIService until its `Available` condition has `status`; the condition.
async fn wait_available(admin: &RawClient, name: &str, status: &str) -> Value {
    let path = format!("/apis/apiregistration.k8s.io/v1/apiservices/{name}");
    let mut last = Value::Null;
    for _ in 0..600 {
        let resp = admin.request(Method::GET, &path, &[], Vec::new()).await;
        last = resp.json();
        let condition = last["status"]["conditions"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["type"] == "Available"))
            .cloned();
        if let Some(c) = condition
            && c["status"] == status
        {
            return c;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{name} never became Available={status}: {last}");
}

/// Changes a label of the APIService, which has its availability checked again.
async fn touch(admin: &RawClient, value: &str) {
    let path = format!("/apis/apiregistration.k8s.io/v1/apiservices/{WARDLE_API_SERVICE}");
    let patch = json!({"metadata": {"labels": {"touched": value}}});
    let resp = admin
        .request(
            Method::PATCH,
            &path,
            &[("content-type", "application/merge-patch+json")],
            patch.to_string().into_bytes(),
        )
        .await;
    assert_eq!(resp.status, 200, "{}", resp.json());
}

/// sample-apiserver's arguments for serving on a port with a certificate for
/// `api.wardle.svc`, trusting Capstan (its kubeconfig) for delegated authentication and
/// authorization.
fn sample_apiserver_args(
    dir: &std::path::Path,
    etcd_url: &str,
    kubeconfig: &std::path::Path,
) -> impl Fn(u16) -> Vec<String> {
    let file = |name: &str| dir.join(name).display().to_string();
    let (cert, key) = (file("wardle.crt"), file("wardle.key"));
    let kubeconfig = kubeconfig.display().to_string();
    let etcd_url = etcd_url.to_string();
    move |port| {
        vec![
            format!("--etcd-servers={etcd_url}"),
            "--bind-address=127.0.0.1".into(),
            format!("--secure-port={port}"),
            format!("--tls-cert-file={cert}"),
            format!("--tls-private-key-file={key}"),
            format!("--kubeconfig={kubeconfig}"),
            format!("--authentication-kubeconfig={kubeconfig}"),
            format!("--authorization-kubeconfig={kubeconfig}"),
        ]
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sample_apiserver_serves_flunders_through_capstan() {
    let dir = tempfile::tempdir().unwrap();
    let front_proxy = front_proxy(dir.path());
    let server = server_with_tokens("viewer-token,viewer,1001\n", move |c| {
        c.authorization_modes = vec!["RBAC".into()];
        front_proxy(c);
    })
    .await;
    let admin = RawClient::new(&server.url(), server.ca_pem(), Some(server.token()));
    let kubeconfig = server.kubeconfig_path();

    // Every built-in group version has its Local APIService, available.
    let local = admin
        .request(
            Method::GET,
            "/apis/apiregistration.k8s.io/v1/apiservices/v1.apps",
            &[],
            Vec::new(),
        )
        .await
        .json();
    assert_eq!(local["spec"]["groupPriorityMinimum"], 17800, "{local}");
    assert!(local["spec"]["service"].is_null(), "{local}");

    // The extension server: its own etcd, a serving certificate for the Service's name.
    let bin = binaries();
    let (_etcd, etcd_url) = start_etcd(&bin);
    let serving_ca = TestCa::new("wardle-ca");
    let mut params = rcgen::CertificateParams::new(vec!["api.wardle.svc".to_string()]).unwrap();
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, "api.wardle.svc");
    let (cert, key) = serving_ca.sign(params);
    std::fs::write(dir.path().join("wardle.crt"), cert).unwrap();
    std::fs::write(dir.path().join("wardle.key"), key).unwrap();
    let args = sample_apiserver_args(dir.path(), &etcd_url, &kubeconfig);
    let program = binaries().join("sample-apiserver");
    // On a free port (another when a test beside this one takes it first), blocking this
    // worker while the other serves Capstan, which sample-apiserver reads as it starts.
    let (mut sample, port) = tokio::task::block_in_place(|| {
        start_on_free_port(
            "sample-apiserver",
            &program,
            &args,
            "Serving securely on",
            dir.path(),
        )
    });

    // Registered as upstream's docs do: a Service (here an ExternalName naming this machine,
    // so that traffic stays on loopback) and an APIService trusting the serving CA.
    create_all(
        &admin,
        vec![
            (
                "/api/v1/namespaces",
                json!({"metadata": {"name": "wardle"}}),
            ),
            (
                "/api/v1/namespaces/wardle/services",
                json!({"metadata": {"name": "api"},
                "spec": {"type": "ExternalName", "externalName": "localhost"}}),
            ),
            (
                "/apis/apiregistration.k8s.io/v1/apiservices",
                json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                "metadata": {"name": "v1alpha1.wardle.example.com"},
                "spec": {"group": "wardle.example.com", "version": "v1alpha1",
                    "groupPriorityMinimum": 1000, "versionPriority": 15,
                    "caBundle": base64_of(&serving_ca.pem),
                    "service": {"namespace": "wardle", "name": "api", "port": port}}}),
            ),
        ],
    )
    .await;
    let condition = wait_available(&admin, WARDLE_API_SERVICE, "True").await;
    assert_eq!(condition["reason"], "Passed", "{condition}");

    // kubectl finds the resources through discovery and works with them.
    let manifest = dir.path().join("flunder.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: wardle.example.com/v1alpha1\nkind: Flunder\nmetadata:\n  name: fl\n  namespace: default\n",
    )
    .unwrap();
    ok(kubectl(
        &kubeconfig,
        &["apply", "-f", manifest.to_str().unwrap()],
    ));
    let listed = ok(kubectl(&kubeconfig, &["get", "flunders", "-o", "name"]));
    assert_eq!(listed.trim(), "flunder.wardle.example.com/fl");
    // A watch streams through the proxy until the backend ends it.
    let watched = admin
        .request(
            Method::GET,
            &format!("{WARDLE}/namespaces/default/flunders?watch=1&timeoutSeconds=1"),
            &[],
            Vec::new(),
        )
        .await;
    let events = watched.json_lines();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["type"], "ADDED");
    assert_eq!(events[0]["object"]["metadata"]["name"], "fl");
    let resources = ok(kubectl(
        &kubeconfig,
        &[
            "api-resources",
            "--api-group=wardle.example.com",
            "-o",
            "name",
        ],
    ));
    assert!(
        resources.contains("flunders.wardle.example.com"),
        "{resources}"
    );
    // kubectl explain reads the extension's OpenAPI v3 document through Capstan.
    let explained = ok(kubectl(&kubeconfig, &["explain", "flunders.spec"]));
    assert!(explained.contains("reference"), "{explained}");
    // And its OpenAPI v2 definitions, merged into Capstan's `/openapi/v2` (protobuf).
    let explained = ok(kubectl(
        &kubeconfig,
        &["explain", "flunders.spec", "--output=plaintext-openapiv2"],
    ));
    assert!(
        explained.contains("RESOURCE: spec") && explained.contains("referenceType\t<string>"),
        "{explained}"
    );
    let groups = admin
        .request(Method::GET, "/apis", &[], Vec::new())
        .await
        .json();
    let names: Vec<&str> = groups["groups"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|g| g["name"].as_str())
        .collect();
    assert!(names.contains(&"wardle.example.com"), "{names:?}");

    // The backend sees the caller's identity, not its credentials: the object records who
    // made it only through the server's own authorization, and a caller Capstan does not
    // authorize never reaches it.
    let viewer = RawClient::new(&server.url(), server.ca_pem(), Some("viewer-token"));
    let refused = viewer
        .request(
            Method::GET,
            &format!("{WARDLE}/namespaces/default/flunders"),
            &[],
            Vec::new(),
        )
        .await;
    assert_eq!(refused.status, 403, "{}", refused.json());
    assert_eq!(refused.json()["kind"], "Status");

    // A backend that stops answering is marked unavailable and its requests refused with
    // 503; started again, it serves again.
    sample.kill();
    touch(&admin, "1").await;
    let condition = wait_available(&admin, WARDLE_API_SERVICE, "False").await;
    assert_eq!(condition["reason"], "FailedDiscoveryCheck", "{condition}");
    let down = admin
        .request(
            Method::GET,
            &format!("{WARDLE}/namespaces/default/flunders"),
            &[],
            Vec::new(),
        )
        .await;
    assert_eq!(down.status, 503);
    let (listed_down, _, _) = kubectl(&kubeconfig, &["get", "flunders"]);
    assert!(!listed_down);
    // Again on its port, which the APIService names.
    let _sample = Process::start("sample-apiserver", &program, &args(port), &[], dir.path());
    let mut round = 2;
    loop {
        touch(&admin, &round.to_string()).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        let resp = admin
            .request(
                Method::GET,
                "/apis/apiregistration.k8s.io/v1/apiservices/v1alpha1.wardle.example.com",
                &[],
                Vec::new(),
            )
            .await
            .json();
        let available = resp["status"]["conditions"][0]["status"] == "True";
        if available {
            break;
        }
        round += 1;
        assert!(round < 120, "never available again: {resp}");
    }
    let listed = ok(kubectl(&kubeconfig, &["get", "flunders", "-o", "name"]));
    assert_eq!(listed.trim(), "flunder.wardle.example.com/fl");
}

fn base64_of(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(text)
}

/// The Service (an ExternalName naming this machine) and APIService through which Capstan
/// reaches a `metrics.k8s.io` server written here, as metrics-server is registered.
fn metrics_registration(metrics: &capstan_e2e::HttpsServer) -> Vec<(&'static str, Value)> {
    let port: u16 = metrics.url.rsplit(':').next().unwrap().parse().unwrap();
    vec![
        (
            "/api/v1/namespaces/kube-system/services",
            json!({"metadata": {"name": "metrics-server"},
                "spec": {"type": "ExternalName", "externalName": "localhost"}}),
        ),
        (
            "/apis/apiregistration.k8s.io/v1/apiservices",
            json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                "metadata": {"name": "v1beta1.metrics.k8s.io"},
                "spec": {"group": "metrics.k8s.io", "version": "v1beta1",
                    "groupPriorityMinimum": 100, "versionPriority": 100,
                    "caBundle": base64_of(&metrics.ca_pem),
                    "service": {"namespace": "kube-system", "name": "metrics-server",
                        "port": port}}}),
        ),
    ]
}

/// A `metrics.k8s.io` server written here (as metrics-server answers), registered through an
/// APIService: `kubectl top` reads node and pod usage through Capstan, and the server sees the
/// caller's identity in `X-Remote-*` headers and none of its credentials.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_top_reads_a_metrics_server_through_capstan() {
    use std::sync::{Arc, Mutex};

    use capstan_e2e::HttpsServer;
    use http::StatusCode;

    let dir = tempfile::tempdir().unwrap();
    let server = capstan_testing::TestServer::start_with(front_proxy(dir.path())).await;
    let admin = RawClient::new(&server.url(), server.ca_pem(), Some(server.token()));
    let kubeconfig = server.kubeconfig_path();

    let seen: Arc<Mutex<Vec<http::HeaderMap>>> = Arc::default();
    let record = seen.clone();
    let metrics = HttpsServer::start_at(
        "127.0.0.1".parse().unwrap(),
        &["metrics-server.kube-system.svc"],
        move |received| {
            if received.path.contains("/nodes") || received.path.contains("/pods") {
                record.lock().unwrap().push(received.headers.clone());
            }
            let now = "2026-11-29T10:00:00Z";
            let path = received.path.split('?').next().unwrap_or("").to_string();
            let answer = match path.as_str() {
                "/apis/metrics.k8s.io/v1beta1" => (
                    StatusCode::OK,
                    json!({"kind": "APIResourceList", "apiVersion": "v1",
                        "groupVersion": "metrics.k8s.io/v1beta1", "resources": [
                        {"name": "nodes", "singularName": "", "namespaced": false,
                            "kind": "NodeMetrics", "verbs": ["get", "list"]},
                        {"name": "pods", "singularName": "", "namespaced": true,
                            "kind": "PodMetrics", "verbs": ["get", "list"]}]}),
                ),
                "/apis/metrics.k8s.io/v1beta1/nodes" => (
                    StatusCode::OK,
                    json!({"kind": "NodeMetricsList", "apiVersion": "metrics.k8s.io/v1beta1",
                        "metadata": {}, "items": [{"metadata": {"name": "n1"},
                        "timestamp": now, "window": "10s",
                        "usage": {"cpu": "500m", "memory": "1Gi"}}]}),
                ),
                "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods" => (
                    StatusCode::OK,
                    json!({"kind": "PodMetricsList", "apiVersion": "metrics.k8s.io/v1beta1",
                        "metadata": {}, "items": [{"metadata": {"name": "web",
                        "namespace": "default"}, "timestamp": now, "window": "10s",
                        "containers": [{"name": "c",
                            "usage": {"cpu": "25m", "memory": "64Mi"}}]}]}),
                ),
                _ => (
                    StatusCode::NOT_FOUND,
                    json!({"kind": "Status", "code": 404}),
                ),
            };
            Box::pin(async move { answer })
        },
    )
    .await;
    let node = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
        "status": {"capacity": {"cpu": "4", "memory": "8Gi"},
            "allocatable": {"cpu": "4", "memory": "8Gi"}}});
    create_all(
        &admin,
        [
            vec![("/api/v1/nodes", node)],
            metrics_registration(&metrics),
        ]
        .concat(),
    )
    .await;
    let condition = wait_available(&admin, "v1beta1.metrics.k8s.io", "True").await;
    assert_eq!(condition["reason"], "Passed", "{condition}");

    let nodes = ok(kubectl(&kubeconfig, &["top", "nodes", "--no-headers"]));
    let row: Vec<&str> = nodes.split_whitespace().collect();
    assert_eq!(row[0], "n1", "{nodes}");
    assert_eq!(row[1], "500m", "{nodes}");
    assert_eq!(row[2], "12%", "{nodes}");
    let pods = ok(kubectl(&kubeconfig, &["top", "pods", "--no-headers"]));
    let row: Vec<&str> = pods.split_whitespace().collect();
    assert_eq!(row[..3], ["web", "25m", "64Mi"], "{pods}");

    let seen = seen.lock().unwrap();
    assert!(!seen.is_empty());
    for headers in seen.iter() {
        assert!(headers.get("authorization").is_none(), "{headers:?}");
        assert!(headers.get("x-remote-user").is_some(), "{headers:?}");
        let groups: Vec<_> = headers.get_all("x-remote-group").iter().collect();
        assert!(
            groups.iter().any(|g| *g == "system:authenticated"),
            "{headers:?}"
        );
    }
}

/// Upstream's HorizontalPodAutoscaler controller (kube-controller-manager v1.36, with the
/// deployment and ReplicaSet controllers) reading pod CPU through Capstan's aggregator from a
/// `metrics.k8s.io` server written here, which reports each pod of the Deployment at twice its
/// CPU request: the HPA (target 50 %) scales the Deployment to its maximum of 3 and records
/// the utilization. The test stands in for kubelets, marking the pods Running and Ready.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_hpa_scales_a_deployment_on_cpu_read_through_the_aggregator() {
    use capstan_e2e::HttpsServer;
    use http::StatusCode;

    let dir = tempfile::tempdir().unwrap();
    let server = capstan_testing::TestServer::start_with(front_proxy(dir.path())).await;
    let admin = RawClient::new(&server.url(), server.ca_pem(), Some(server.token()));
    let pods_of = admin.clone();
    let metrics = HttpsServer::start_at(
        "127.0.0.1".parse().unwrap(),
        &["metrics-server.kube-system.svc"],
        move |received| {
            let admin = pods_of.clone();
            Box::pin(async move {
                let (path, query) = received
                    .path
                    .split_once('?')
                    .unwrap_or((received.path.as_str(), ""));
                match path {
                    "/apis/metrics.k8s.io/v1beta1" => (
                        StatusCode::OK,
                        json!({"kind": "APIResourceList", "apiVersion": "v1",
                            "groupVersion": "metrics.k8s.io/v1beta1", "resources": [
                            {"name": "pods", "singularName": "", "namespaced": true,
                                "kind": "PodMetrics", "verbs": ["get", "list"]}]}),
                    ),
                    // Every pod the selector picks uses 200m, its request being 100m.
                    "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods" => {
                        let selector = query
                            .split('&')
                            .find_map(|kv| kv.strip_prefix("labelSelector="))
                            .unwrap_or("");
                        let pods = admin
                            .request(
                                Method::GET,
                                &format!(
                                    "/api/v1/namespaces/default/pods?labelSelector={selector}"
                                ),
                                &[],
                                Vec::new(),
                            )
                            .await
                            .json();
                        let items: Vec<Value> = pods["items"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|pod| {
                                json!({"metadata": {"name": pod["metadata"]["name"],
                                    "namespace": "default"},
                                    "timestamp": "2026-11-29T10:00:00Z", "window": "15s",
                                    "containers": [{"name": "web",
                                        "usage": {"cpu": "200m", "memory": "10Mi"}}]})
                            })
                            .collect();
                        (
                            StatusCode::OK,
                            json!({"kind": "PodMetricsList",
                                "apiVersion": "metrics.k8s.io/v1beta1", "metadata": {},
                                "items": items}),
                        )
                    }
                    _ => (
                        StatusCode::NOT_FOUND,
                        json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                            "reason": "NotFound", "code": 404}),
                    ),
                }
            })
        },
    )
    .await;
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx",
                    "resources": {"requests": {"cpu": "100m"}}}]}}}});
    let hpa = json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "web"},
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1, "maxReplicas": 3,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 50}}}]}});
    create_all(
        &admin,
        [
            metrics_registration(&metrics),
            vec![
                ("/apis/apps/v1/namespaces/default/deployments", deployment),
                (
                    "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers",
                    hpa,
                ),
            ],
        ]
        .concat(),
    )
    .await;
    wait_available(&admin, "v1beta1.metrics.k8s.io", "True").await;

    let kcm = Process::start(
        "kube-controller-manager",
        &binaries().join("kube-controller-manager"),
        &[
            format!("--kubeconfig={}", server.kubeconfig_path().display()),
            "--controllers=horizontalpodautoscaling,deployment,replicaset".into(),
            "--horizontal-pod-autoscaler-sync-period=1s".into(),
            "--leader-elect=false".into(),
            "--secure-port=0".into(),
        ],
        &[],
        dir.path(),
    );
    // Long started and Ready, so that the HPA counts every pod's usage.
    let running = json!({"status": {"phase": "Running", "startTime": "2026-01-01T00:00:00Z",
        "conditions": [{"type": "Ready", "status": "True",
            "lastTransitionTime": "2026-01-01T00:00:00Z"}]}});
    let mut last = Value::Null;
    for _ in 0..600 {
        let pods = admin
            .request(
                Method::GET,
                "/api/v1/namespaces/default/pods",
                &[],
                Vec::new(),
            )
            .await
            .json();
        for pod in pods["items"].as_array().into_iter().flatten() {
            if pod["status"]["phase"] != "Running" {
                let name = pod["metadata"]["name"].as_str().unwrap();
                let resp = admin
                    .request(
                        Method::PATCH,
                        &format!("/api/v1/namespaces/default/pods/{name}/status"),
                        &[("content-type", "application/merge-patch+json")],
                        running.to_string().into_bytes(),
                    )
                    .await;
                assert_eq!(resp.status, 200, "{}", resp.json());
            }
        }
        last = admin
            .request(
                Method::GET,
                "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/web",
                &[],
                Vec::new(),
            )
            .await
            .json();
        if last["status"]["desiredReplicas"] == 3 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let status = &last["status"];
    assert_eq!(status["desiredReplicas"], 3, "{last}\n{}", kcm.log_text());
    assert_eq!(
        status["currentMetrics"][0]["resource"]["current"]["averageUtilization"], 200,
        "{last}"
    );
    let limited = status["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "ScalingLimited");
    assert_eq!(
        limited.map(|c| (c["status"].clone(), c["reason"].clone())),
        Some((json!("True"), json!("TooManyReplicas"))),
        "{last}"
    );
    let deployment = admin
        .request(
            Method::GET,
            "/apis/apps/v1/namespaces/default/deployments/web",
            &[],
            Vec::new(),
        )
        .await
        .json();
    assert_eq!(deployment["spec"]["replicas"], 3, "{deployment}");
    // Error lines allowed: the controller manager's empty static manifest path (a flag
    // default); client-go's read-after-write check in the ReplicaSet controller, which
    // requeues until its cache has seen its own write (upstream's API server gives it too);
    // optimistic concurrency between the controllers writing one object.
    let errors = kcm.errors(&[
        "The manifest file is empty",
        "is not as new as written version",
        "the object has been modified; please apply your changes to the latest version",
    ]);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}
