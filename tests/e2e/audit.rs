//! Audit: the log read back per level and stage, the webhook backend with a receiver served
//! by the test (and one that is down), and the audit counters.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use capstan_audit::{
    BackendOptions, BatchOptions, Destination, Format, Mode, Policy, Rotation, TruncateOptions,
};
use capstan_e2e::RawClient;
use capstan_testing::TestServer;
use http::Method;
use serde_json::{Value, json};

use crate::admin;

const POLICY: &str = r#"
apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: None
  nonResourceURLs: ["/readyz*", "/livez*", "/healthz*"]
- level: RequestResponse
  resources: [{group: "", resources: ["configmaps"]}]
  omitManagedFields: true
- level: Request
  resources: [{group: "", resources: ["secrets"]}]
  omitStages: [RequestReceived]
- level: Metadata
"#;

fn batch() -> BatchOptions {
    BatchOptions {
        buffer_size: 10_000,
        max_size: 400,
        max_wait: Duration::from_millis(50),
        throttle_enable: false,
        throttle_qps: 0.0,
        throttle_burst: 0,
    }
}

fn no_truncation() -> TruncateOptions {
    TruncateOptions {
        enabled: false,
        max_batch_size: 10 << 20,
        max_event_size: 100 << 10,
    }
}

fn log_backend(path: &Path, mode: Mode) -> BackendOptions {
    BackendOptions {
        destination: Destination::Log {
            path: path.to_path_buf(),
            format: Format::Json,
            rotation: Rotation::default(),
        },
        mode,
        batch: batch(),
        truncate: no_truncation(),
    }
}

fn webhook_backend(config_file: PathBuf) -> BackendOptions {
    BackendOptions {
        destination: Destination::Webhook {
            config_file,
            initial_backoff: Duration::from_millis(20),
        },
        mode: Mode::Batch,
        batch: batch(),
        truncate: no_truncation(),
    }
}

fn read_events(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The events of one audit ID, in order.
fn of(events: &[Value], audit_id: &str) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e["auditID"] == audit_id)
        .cloned()
        .collect()
}

fn stages(events: &[Value]) -> Vec<&str> {
    events
        .iter()
        .map(|e| e["stage"].as_str().unwrap())
        .collect()
}

fn audit_id(resp: &capstan_e2e::RawResponse) -> String {
    resp.headers
        .get("audit-id")
        .expect("every answer has an Audit-ID")
        .to_str()
        .unwrap()
        .to_string()
}

/// Polls `check` for up to ten seconds.
async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    for _ in 0..200 {
        if check() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

/// The value of one sample of `/metrics` (0 when absent).
async fn metric(client: &RawClient, sample: &str) -> f64 {
    let text = String::from_utf8(client.get("/metrics").await.body.to_vec()).unwrap();
    text.lines()
        .find_map(|l| l.strip_prefix(sample)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or(0.0)
}

#[tokio::test]
async fn the_log_records_each_level_and_stage() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit").join("audit.log");
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "alice-token,alice,1001,dev\n").unwrap();
    let backend = log_backend(&log, Mode::Blocking);
    let server = TestServer::start_with(move |c| {
        c.token_auth_file = Some(tokens);
        c.authorization_modes = vec!["RBAC".into()];
        c.admission.enable = vec!["PodSecurity".into()];
        c.audit = Some(capstan_server::AuditConfig {
            policy: Policy::parse(POLICY).unwrap(),
            backends: vec![backend],
        });
    })
    .await;
    let admin = admin(&server);

    // A create at RequestResponse, under the client's own audit ID.
    let created = admin
        .request(
            Method::POST,
            "/api/v1/namespaces/default/configmaps",
            &[
                ("content-type", "application/json"),
                ("audit-id", "client-chosen-id"),
            ],
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "audited"}, "data": {"k": "v"}})
            .to_string()
            .into_bytes(),
        )
        .await;
    assert_eq!(created.status, 201);
    assert_eq!(audit_id(&created), "client-chosen-id");
    let events = of(&read_events(&log), "client-chosen-id");
    assert_eq!(stages(&events), ["RequestReceived", "ResponseComplete"]);
    let received = &events[0];
    assert_eq!(received["level"], "RequestResponse");
    assert_eq!(received["verb"], "create");
    assert!(received.get("requestObject").is_none());
    assert!(received.get("annotations").is_none(), "{received}");
    let done = &events[1];
    assert_eq!(done["kind"], "Event");
    assert_eq!(done["apiVersion"], "audit.k8s.io/v1");
    assert_eq!(done["requestURI"], "/api/v1/namespaces/default/configmaps");
    assert_eq!(done["user"]["username"], server_admin_name(&admin).await);
    assert_eq!(done["sourceIPs"][0], "127.0.0.1");
    assert_eq!(
        received["objectRef"],
        json!({"resource": "configmaps", "namespace": "default", "apiVersion": "v1"}),
        "the body is not read yet"
    );
    assert_eq!(
        done["objectRef"],
        json!({"resource": "configmaps", "namespace": "default", "name": "audited",
               "apiVersion": "v1"}),
        "completed from the body"
    );
    assert_eq!(done["responseStatus"], json!({"metadata": {}, "code": 201}));
    assert_eq!(done["requestObject"]["data"]["k"], "v");
    assert_eq!(done["responseObject"]["metadata"]["name"], "audited");
    assert!(done["responseObject"]["metadata"]["uid"].is_string());
    assert!(
        done["responseObject"]["metadata"]
            .get("managedFields")
            .is_none(),
        "omitManagedFields"
    );
    assert_eq!(
        done["annotations"]["authorization.k8s.io/decision"],
        "allow"
    );
    assert!(
        done["requestReceivedTimestamp"]
            .as_str()
            .unwrap()
            .ends_with('Z')
    );

    // An update's reference takes the UID and resourceVersion its body sends.
    let mut object: serde_json::Value = serde_json::from_slice(&created.body).unwrap();
    object["data"]["k"] = json!("w");
    let updated = admin
        .send_json(
            Method::PUT,
            "/api/v1/namespaces/default/configmaps/audited",
            &object,
        )
        .await;
    assert_eq!(updated.status, 200);
    let events = of(&read_events(&log), &audit_id(&updated));
    let reference = &events[1]["objectRef"];
    assert_eq!(reference["name"], "audited");
    assert_eq!(reference["uid"], object["metadata"]["uid"]);
    assert_eq!(
        reference["resourceVersion"],
        object["metadata"]["resourceVersion"]
    );

    // A secret at Request, its RequestReceived stage omitted; a generated audit ID.
    let secret = admin
        .send_json(
            Method::POST,
            "/api/v1/namespaces/default/secrets",
            &json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"},
                    "stringData": {"password": "hunter2"}}),
        )
        .await;
    assert_eq!(secret.status, 201);
    let id = audit_id(&secret);
    assert_eq!(id.len(), 36, "a UUID: {id}");
    let events = of(&read_events(&log), &id);
    assert_eq!(stages(&events), ["ResponseComplete"]);
    assert_eq!(events[0]["level"], "Request");
    assert_eq!(
        events[0]["requestObject"]["stringData"]["password"],
        "hunter2"
    );
    assert!(events[0].get("responseObject").is_none());

    // Admission's annotations: PodSecurity names the level it enforced.
    let pod = admin
        .send_json(
            Method::POST,
            "/api/v1/namespaces/default/pods",
            &json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                    "spec": {"containers": [{"name": "c", "image": "busybox"}]}}),
        )
        .await;
    assert_eq!(pod.status, 201, "{}", String::from_utf8_lossy(&pod.body));
    let events = of(&read_events(&log), &audit_id(&pod));
    assert_eq!(
        events[1]["annotations"]["pod-security.kubernetes.io/enforce-policy"],
        "privileged:latest"
    );
    assert_eq!(
        events[1]["annotations"]["authorization.k8s.io/decision"],
        "allow"
    );

    // Everything else at Metadata: no bodies.
    let list = admin.get("/api/v1/namespaces/default/pods").await;
    let events = of(&read_events(&log), &audit_id(&list));
    assert_eq!(stages(&events), ["RequestReceived", "ResponseComplete"]);
    assert_eq!(events[1]["level"], "Metadata");
    assert_eq!(events[1]["verb"], "list");
    assert!(events[1].get("responseObject").is_none());

    // A 403: the decision and the status with its reason.
    let alice = RawClient::new(&server.url(), server.ca_pem(), Some("alice-token"));
    let refused = alice.get("/api/v1/namespaces/default/configmaps").await;
    assert_eq!(refused.status, 403);
    let events = of(&read_events(&log), &audit_id(&refused));
    assert_eq!(stages(&events), ["RequestReceived", "ResponseComplete"]);
    let done = &events[1];
    assert_eq!(done["user"]["username"], "alice");
    assert_eq!(
        done["annotations"]["authorization.k8s.io/decision"],
        "forbid"
    );
    assert_eq!(done["responseStatus"]["code"], 403);
    assert_eq!(done["responseStatus"]["reason"], "Forbidden");
    assert_eq!(done["responseStatus"]["status"], "Failure");
    assert!(
        done["responseStatus"]["message"]
            .as_str()
            .unwrap()
            .contains("User \"alice\" cannot list resource \"configmaps\""),
        "{done}"
    );
    assert!(
        done.get("responseObject").is_none(),
        "no body for a refusal"
    );

    // A 401: one ResponseStarted event saying what was tried, with no user.
    let stranger = RawClient::new(&server.url(), server.ca_pem(), Some("wrong-token"));
    let unknown = stranger.get("/api/v1/namespaces/default/pods").await;
    assert_eq!(unknown.status, 401);
    let events = of(&read_events(&log), &audit_id(&unknown));
    assert_eq!(stages(&events), ["ResponseStarted"]);
    assert_eq!(events[0]["user"], json!({}));
    assert_eq!(
        events[0]["responseStatus"],
        json!({"metadata": {}, "message": "Authentication failed, attempted: bearer", "code": 401})
    );

    // A watch: ResponseStarted when its answer begins, ResponseComplete when it ends.
    let watch = admin
        .get("/api/v1/namespaces/default/configmaps?watch=1&timeoutSeconds=1")
        .await;
    assert_eq!(watch.status, 200);
    let id = audit_id(&watch);
    eventually("the watch's last event", || {
        of(&read_events(&log), &id).len() == 3
    })
    .await;
    let events = of(&read_events(&log), &id);
    assert_eq!(
        stages(&events),
        ["RequestReceived", "ResponseStarted", "ResponseComplete"]
    );
    assert_eq!(events[1]["verb"], "watch");
    assert_eq!(events[2]["responseStatus"]["code"], 200);

    // Level None: health checks leave no trace, but still get an audit ID.
    let before = read_events(&log).len();
    let ready = admin.get("/readyz").await;
    assert_eq!(ready.status, 200);
    assert_eq!(audit_id(&ready).len(), 36);
    assert_eq!(read_events(&log).len(), before);

    assert!(metric(&admin, "apiserver_audit_event_total").await >= 10.0);
    assert!(metric(&admin, "apiserver_audit_level_total{level=\"None\"}").await >= 1.0);
    assert!(
        metric(
            &admin,
            "apiserver_audit_level_total{level=\"RequestResponse\"}"
        )
        .await
            >= 2.0
    );
    server.stop().await;
}

/// The admin's user name, as the server reports it.
async fn server_admin_name(admin: &RawClient) -> String {
    let review = admin
        .send_json(
            Method::POST,
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}),
        )
        .await
        .json();
    review["status"]["userInfo"]["username"]
        .as_str()
        .unwrap()
        .to_string()
}

fn write_kubeconfig(dir: &Path, url: &str, ca_pem: &str) -> PathBuf {
    let ca = dir.join("receiver-ca.crt");
    std::fs::write(&ca, ca_pem).unwrap();
    let config = json!({
        "apiVersion": "v1", "kind": "Config", "current-context": "audit",
        "clusters": [{"name": "audit", "cluster": {"server": format!("{url}/audit"),
            "certificate-authority": ca.display().to_string()}}],
        "contexts": [{"name": "audit", "context": {"cluster": "audit"}}],
    });
    let path = dir.join("audit-webhook.kubeconfig");
    std::fs::write(&path, config.to_string()).unwrap();
    path
}

#[tokio::test]
async fn the_webhook_gets_batches_and_a_receiver_that_is_down_costs_no_request() {
    let dir = tempfile::tempdir().unwrap();
    let received = Arc::new(Mutex::new(Vec::<Value>::new()));
    let seen = received.clone();
    let receiver = capstan_e2e::HttpsServer::start(move |req| {
        assert_eq!(req.path, "/audit");
        let list: Value = serde_json::from_slice(&req.body).unwrap();
        seen.lock().unwrap().push(list);
        (http::StatusCode::OK, json!({}))
    })
    .await;
    let config = write_kubeconfig(dir.path(), &receiver.url, &receiver.ca_pem);
    let log = dir.path().join("audit.log");
    let backends = vec![log_backend(&log, Mode::Batch), webhook_backend(config)];
    let server = TestServer::start_with(move |c| {
        c.audit = Some(capstan_server::AuditConfig {
            policy: Policy::parse(POLICY).unwrap(),
            backends,
        });
    })
    .await;
    let admin = admin(&server);
    let mut ids = Vec::new();
    for i in 0..20 {
        let resp = admin
            .send_json(
                Method::POST,
                "/api/v1/namespaces/default/configmaps",
                &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("cm-{i}")}}),
            )
            .await;
        assert_eq!(resp.status, 201);
        ids.push(audit_id(&resp));
    }
    let items = || -> Vec<Value> {
        received
            .lock()
            .unwrap()
            .iter()
            .flat_map(|list| list["items"].as_array().unwrap().clone())
            .collect()
    };
    eventually("every create's two events at the receiver", || {
        ids.iter().all(|id| of(&items(), id).len() == 2)
    })
    .await;
    {
        let lists = received.lock().unwrap();
        assert!(
            lists
                .iter()
                .all(|l| l["kind"] == "EventList" && l["apiVersion"] == "audit.k8s.io/v1")
        );
        assert!(
            lists.len() < 40,
            "events travel in batches, not one by one: {} lists",
            lists.len()
        );
    }
    // Both backends at once: the log holds the same events.
    eventually("the batched log", || {
        ids.iter().all(|id| of(&read_events(&log), id).len() == 2)
    })
    .await;
    let from_log = of(&read_events(&log), &ids[0]);
    let from_webhook = of(&items(), &ids[0]);
    assert_eq!(from_log, from_webhook);
    server.stop().await;

    // A receiver that is down: every request still succeeds; the lost events are counted.
    let down = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("https://{}", listener.local_addr().unwrap())
    };
    let config = write_kubeconfig(dir.path(), &down, &receiver.ca_pem);
    let only_configmaps = "apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n\
        - level: Metadata\n  resources: [{group: \"\", resources: [configmaps]}]\n";
    let server = TestServer::start_with(move |c| {
        c.audit = Some(capstan_server::AuditConfig {
            policy: Policy::parse(only_configmaps).unwrap(),
            backends: vec![webhook_backend(config)],
        });
    })
    .await;
    let admin = crate::admin(&server);
    for i in 0..5 {
        let resp = admin
            .send_json(
                Method::POST,
                "/api/v1/namespaces/default/configmaps",
                &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("cm-{i}")}}),
            )
            .await;
        assert_eq!(resp.status, 201);
        assert_eq!(
            admin
                .get(&format!("/api/v1/namespaces/default/configmaps/cm-{i}"))
                .await
                .status,
            200
        );
    }
    let lost = "apiserver_audit_error_total{plugin=\"webhook\"}";
    let mut errors = 0.0;
    for _ in 0..200 {
        errors = metric(&admin, lost).await;
        if errors >= 20.0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(errors, 20.0, "the 20 events of 10 requests counted as lost");
    assert_eq!(metric(&admin, "apiserver_audit_event_total").await, 20.0);
    server.stop().await;
}
