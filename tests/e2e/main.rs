//! End-to-end tests against real in-process servers (capstan-testing), driven by the kube
//! client, kubectl and raw HTTPS.

mod admission;
mod aggregation;
mod apply;
mod apps;
mod audit;
mod auth;
mod autoscaling;
mod bad_input;
mod consistency;
mod core;
mod crds;
mod differential;
mod discovery;
mod etcd;
mod eviction;
mod gc;
mod kube_client;
mod kubectl;
mod kubelet;
mod limits;
mod operations;
mod policies;
mod proxy;
mod representations;
mod services;
mod serving;
mod watch;
mod webhooks;

use capstan_e2e::RawClient;
use capstan_testing::TestServer;

/// The stdout of a kubectl run that must succeed (its output in the failure otherwise).
fn ok(result: (bool, String, String)) -> String {
    let (success, out, err) = result;
    assert!(success, "kubectl failed:\nstdout: {out}\nstderr: {err}");
    out
}

/// A server that also authenticates the users of `tokens` (static token file lines,
/// `token,user,uid[,"groups"]`; the file is read at start), configured further by `configure`.
async fn server_with_tokens(
    tokens: &str,
    configure: impl FnOnce(&mut capstan_server::ServerConfig),
) -> TestServer {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("tokens.csv");
    std::fs::write(&file, tokens).unwrap();
    TestServer::start_with(move |c| {
        c.token_auth_file = Some(file);
        configure(c);
    })
    .await
}

/// A raw client authenticated as admin.
fn admin(server: &TestServer) -> RawClient {
    RawClient::new(&server.url(), server.ca_pem(), Some(server.token()))
}

/// Waits until `/readyz` answers 200: every post-start hook has run once (a server serves
/// before its hooks finish, as upstream's does).
async fn wait_ready(server: &TestServer) {
    let raw = admin(server);
    for _ in 0..300 {
        if raw.get("/readyz").await.status == 200 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let why = raw.get("/readyz?verbose").await;
    panic!(
        "the server is not ready after six seconds:\n{}",
        String::from_utf8_lossy(&why.body)
    );
}

const SC: &str = "/apis/storage.k8s.io/v1/storageclasses";
