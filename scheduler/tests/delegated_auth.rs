//! The real scheduler under its own identity (`system:kube-scheduler`) against an API server
//! with RBAC on: it binds pods, takes its lease and writes events without a 403; its secure
//! port authenticates through the API server (tokens reviewed, client certificates of the
//! authority the server publishes) and authorizes through it.

use std::process::{Command, Stdio};
use std::time::Duration;

use capstan_client::{Client, Config, ListParams};
use capstan_e2e::TestCa;
use capstan_testing::TestServer;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Node, Pod};
use k8s_openapi::api::events::v1::Event;
use serde_json::json;

mod common;

use common::{Running, free_port, node_of};

/// A client of the scheduler's secure port (its certificate is self-signed).
fn port_client(port: u16, token: Option<&str>, identity: Option<&(String, String)>) -> Client {
    let mut config = Config::new(format!("https://127.0.0.1:{port}"));
    config.insecure = true;
    config.token = token.map(String::from);
    config.client_identity =
        identity.map(|(c, k)| (c.clone().into_bytes(), k.clone().into_bytes()));
    Client::new(config).unwrap()
}

/// Status code and body of `GET path`.
async fn get(client: &Client, path: &str) -> (u16, String) {
    let (status, _, body) = client
        .send(http::Method::GET, path, None, Default::default())
        .await
        .unwrap();
    (status.as_u16(), String::from_utf8_lossy(&body).into_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn under_rbac_the_scheduler_works_as_itself_and_delegates_its_port() {
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(
        &tokens,
        "sched-token,system:kube-scheduler,uid-s\n\
         mon-token,prom,uid-p,\"system:monitoring\"\n\
         eve-token,eve,uid-e\n",
    )
    .unwrap();
    let clients = TestCa::new("clients");
    let ca_file = dir.path().join("client-ca.crt");
    std::fs::write(&ca_file, &clients.pem).unwrap();
    let server = TestServer::start_with(move |c| {
        c.token_auth_file = Some(tokens);
        c.client_ca_file = Some(ca_file);
        c.authorization_modes = vec!["RBAC".into()];
    })
    .await;
    let identity = dir.path().join("scheduler.kubeconfig");
    std::fs::write(
        &identity,
        server.kubeconfig().replace(server.token(), "sched-token"),
    )
    .unwrap();
    let port = free_port();
    let log_path = dir.path().join("scheduler.log");
    let log = std::fs::File::create(&log_path).unwrap();
    let _running = Running(
        Command::new(env!("CARGO_BIN_EXE_capstan-scheduler"))
            .arg(format!("--kubeconfig={}", identity.display()))
            .arg(format!(
                "--authentication-kubeconfig={}",
                identity.display()
            ))
            .arg(format!("--authorization-kubeconfig={}", identity.display()))
            .arg(format!("--secure-port={port}"))
            .args(["--bind-address=127.0.0.1", "--port=0"])
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .unwrap(),
    );

    // It schedules as itself.
    let admin =
        Client::new(Config::from_kubeconfig(&server.kubeconfig_path(), None).unwrap()).unwrap();
    let node: Node = serde_json::from_value(json!({"metadata": {"name": "n"}})).unwrap();
    let mut with_status = admin.create(None, &node).await.unwrap();
    with_status.status = Some(
        serde_json::from_value(
            json!({"allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True"}]}),
        )
        .unwrap(),
    );
    admin.replace_status(None, "n", &with_status).await.unwrap();
    let pod: Pod = serde_json::from_value(
        json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}),
    )
    .unwrap();
    admin.create(Some("default"), &pod).await.unwrap();
    assert_eq!(node_of(&admin, "p").await.as_deref(), Some("n"));
    let lease: Lease = admin
        .get(Some("kube-system"), "kube-scheduler")
        .await
        .unwrap();
    let holder = lease
        .spec
        .and_then(|s| s.holder_identity)
        .unwrap_or_default();
    assert!(!holder.is_empty(), "the scheduler holds its lease");
    let mut scheduled = false;
    for _ in 0..50 {
        let events = admin
            .list::<Event>(Some("default"), &ListParams::default())
            .await
            .unwrap();
        if events
            .items
            .iter()
            .any(|e| e.reason.as_deref() == Some("Scheduled"))
        {
            scheduled = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(scheduled, "the scheduler wrote its event");

    // Its port: health for everyone; metrics for those the API server authorizes.
    let anonymous = port_client(port, None, None);
    assert_eq!(get(&anonymous, "/healthz").await, (200, "ok".into()));
    let (status, body) = get(&anonymous, "/metrics").await;
    assert_eq!(status, 403, "{body}");
    let doc: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(
        doc["message"],
        r#"forbidden: User "system:anonymous" cannot get path "/metrics""#
    );
    let (status, body) = get(&port_client(port, Some("eve-token"), None), "/metrics").await;
    assert_eq!(status, 403, "{body}");
    assert!(
        body.contains(r#"User \"eve\" cannot get path \"/metrics\""#),
        "{body}"
    );
    let (status, body) = get(&port_client(port, Some("mon-token"), None), "/metrics").await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains("scheduler_schedule_attempts_total"), "{body}");
    let (status, _) = get(&port_client(port, Some("wrong-token"), None), "/healthz").await;
    assert_eq!(status, 401, "a token the API server does not know");
    // Certificates of the authority published in extension-apiserver-authentication.
    let monitor = clients.client("watcher", &["system:monitoring"]);
    let (status, body) = get(&port_client(port, None, Some(&monitor)), "/metrics").await;
    assert_eq!(status, 200, "{body}");
    let stranger = TestCa::new("elsewhere").client("watcher", &["system:monitoring"]);
    let (status, _) = get(&port_client(port, None, Some(&stranger)), "/metrics").await;
    assert_eq!(status, 401, "a certificate of an unknown authority");

    let log = std::fs::read_to_string(&log_path).unwrap();
    assert!(
        !log.to_lowercase().contains("forbidden"),
        "the scheduler was refused something:\n{log}"
    );
}
