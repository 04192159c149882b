//! The API server's connections to kubelets, against a kubelet stand-in on loopback
//! (`capstan_e2e::kubelet`): `kubectl logs` (tail, timestamps, follow until the reader goes
//! away, the kubelet's refusals), `kubectl exec` and the `kube` crate's WebSocket client
//! (stdin both ways, exit codes, resize), the node proxy, the kubelet client's TLS, and
//! who may open a stream.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use capstan_e2e::kubelet::{KubeletStandIn, Transport, pod};
use capstan_e2e::{RawClient, TestCa, kubectl};
use capstan_testing::TestServer;
use http::Method;
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, AttachParams, TerminalSize};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::ok;

const PODS: &str = "/api/v1/namespaces/default/pods";

/// A server whose kubelet connections verify the stand-in's certificate and present a
/// client certificate, a node `n1` served by the stand-in, and pods on it.
async fn cluster() -> (TestServer, KubeletStandIn, String, tempfile::TempDir) {
    cluster_of(Transport::WebSocket).await
}

/// [`cluster`] with a kubelet speaking `transport`; pod `p` is Running.
async fn cluster_of(
    transport: Transport,
) -> (TestServer, KubeletStandIn, String, tempfile::TempDir) {
    cluster_limited(transport, 0).await
}

/// [`cluster_of`] with `--max-connection-bytes-per-sec` at `bytes_per_sec`.
async fn cluster_limited(
    transport: Transport,
    bytes_per_sec: u64,
) -> (TestServer, KubeletStandIn, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let client_ca = TestCa::new("kubelet-client-ca");
    let (cert, key) = client_ca.client("kube-apiserver-kubelet-client", &["system:masters"]);
    let kubelet = KubeletStandIn::start_speaking(&client_ca.pem, transport).await;
    let file = |name: &str, contents: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, contents).unwrap();
        path
    };
    let (ca_file, cert_file, key_file) = (
        file("kubelet-ca.crt", &kubelet.ca_pem),
        file("client.crt", &cert),
        file("client.key", &key),
    );
    let server = TestServer::start_with(move |c| {
        c.max_connection_bytes_per_sec = bytes_per_sec;
        c.kubelet.preferred_address_types = vec!["InternalIP".into()];
        c.kubelet.certificate_authority = Some(ca_file);
        c.kubelet.client_certificate = Some(cert_file);
        c.kubelet.client_key = Some(key_file);
    })
    .await;
    let raw = RawClient::new(&server.url(), server.ca_pem(), Some(server.token()));
    kubelet.populate(&raw).await;
    (server, kubelet, cert, dir)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn logs_stream_from_the_kubelet() {
    let (server, kubelet, client_cert, _dir) = cluster().await;
    let kc = server.kubeconfig_path();
    let raw = RawClient::new(&server.url(), server.ca_pem(), Some(server.token()));
    let kc2 = kc.clone();
    tokio::task::spawn_blocking(move || {
        let kc = kc2;
        let all: String = (1..=5).map(|i| format!("app line {i}\n")).collect();
        assert_eq!(ok(kubectl(&kc, &["logs", "p"])), all);
        assert_eq!(
            ok(kubectl(&kc, &["logs", "p", "--tail=2"])),
            "app line 4\napp line 5\n"
        );
        assert_eq!(
            ok(kubectl(&kc, &["logs", "p", "--tail=1", "--timestamps"])),
            "2026-11-29T00:00:05.000000000Z app line 5\n"
        );
        assert!(ok(kubectl(&kc, &["logs", "two", "-c", "sidecar"])).starts_with("sidecar line 1\n"));
        // Nothing has run on no node yet: no logs, no error.
        assert_eq!(ok(kubectl(&kc, &["logs", "pending"])), "");
        let (success, _, err) = kubectl(&kc, &["logs", "waiter"]);
        assert!(!success);
        assert!(
            err.contains("Error from server (BadRequest): container \"waiting\" in pod \"waiter\" is waiting to start: ContainerCreating"),
            "{err}"
        );

        // Following: lines arrive as the kubelet writes them, and the kubelet's stream ends
        // when the reader goes away.
        let mut child = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kc)
            .args(["logs", "-f", "p"])
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut seen_ticks = 0;
        for line in lines.by_ref() {
            if line.unwrap().starts_with("app tick ") {
                seen_ticks += 1;
                if seen_ticks == 3 {
                    break;
                }
            }
        }
        assert_eq!(seen_ticks, 3);
        child.kill().unwrap();
        child.wait().unwrap();
    })
    .await
    .unwrap();
    let mut ended = false;
    for _ in 0..100 {
        if kubelet.seen().follows_ended >= 1 {
            ended = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(ended, "the kubelet's stream outlived its reader");

    // The options reach the kubelet as its query; bad ones never leave the server.
    let seen = kubelet.seen();
    assert!(
        seen.requests
            .iter()
            .any(|r| r == "/containerLogs/default/p/app?tailLines=2"),
        "{:?}",
        seen.requests
    );
    use rustls_pki_types::pem::PemObject;
    let der = rustls_pki_types::CertificateDer::from_pem_slice(client_cert.as_bytes()).unwrap();
    assert!(
        seen.client_certificates.iter().any(|c| c[..] == der[..]),
        "the kubelet client certificate was not presented"
    );
    let r = raw.get(&format!("{PODS}/two/log")).await;
    assert_eq!(r.status, 400);
    assert_eq!(
        r.message(),
        "a container name must be specified for pod two, choose one of: [setup app sidecar]"
    );
    let r = raw.get(&format!("{PODS}/p/log?container=db")).await;
    assert_eq!(r.message(), "container db is not valid for pod p");
    let r = raw
        .get(&format!("{PODS}/p/log?tailLines=-1&limitBytes=0"))
        .await;
    assert_eq!(r.status, 422);
    assert_eq!(r.json()["details"]["kind"], "PodLogOptions");
    assert_eq!(
        r.message(),
        "PodLogOptions \"p\" is invalid: [tailLines: Invalid value: -1: must be greater than or equal to 0, limitBytes: Invalid value: 0: must be greater than 0]"
    );
    let r = raw.get(&format!("{PODS}/missing/log")).await;
    assert_eq!(r.status, 404);
    assert_eq!(r.message(), "pods \"missing\" not found");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn exec_and_attach_reach_the_container() {
    let (server, kubelet, _cert, _dir) = cluster().await;
    let kc = server.kubeconfig_path();
    let kc2 = kc.clone();
    tokio::task::spawn_blocking(move || {
        let kc = kc2;
        assert_eq!(
            ok(kubectl(&kc, &["exec", "p", "--", "echo", "hello", "world"])),
            "hello world\n"
        );
        // stdin in, stdout out, and the end of stdin reaches the command.
        let mut child = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kc)
            .args(["exec", "-i", "p", "--", "cat"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"one\ntwo\n").unwrap();
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), "one\ntwo\n");
        // Megabytes both ways through the WebSocket spliced to the kubelet's.
        let payload = large_payload();
        assert!(exec_cat(&kc, &[], &payload) == payload, "large exec");
        // The command's exit code becomes kubectl's.
        let out = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kc)
            .args(["exec", "p", "--", "exit", "3"])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(3),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let (success, _, err) = kubectl(&kc, &["exec", "pending", "--", "echo"]);
        assert!(
            !success && err.contains("pod pending does not have a host assigned"),
            "{err}"
        );
        let (success, _, err) = kubectl(&kc, &["exec", "two", "-c", "db", "--", "echo"]);
        assert!(
            !success && err.contains("container db is not valid for pod two"),
            "{err}"
        );
    })
    .await
    .unwrap();
    assert!(
        kubelet
            .seen()
            .protocols
            .iter()
            .all(|p| p == "v5.channel.k8s.io")
    );

    // The kube crate's WebSocket client.
    let pods: Api<Pod> = Api::namespaced(server.client().await, "default");
    exec_through_the_kube_crate(&pods).await;

    let mut attached = pods
        .attach("p", &AttachParams::default().stdin(true).stderr(false))
        .await
        .unwrap();
    let mut stdin = attached.stdin().unwrap();
    stdin.write_all(b"attached\n").await.unwrap();
    let mut line = vec![0; 9];
    attached
        .stdout()
        .unwrap()
        .read_exact(&mut line)
        .await
        .unwrap();
    assert_eq!(line, b"attached\n");
    drop(stdin);
    assert!(
        kubelet
            .seen()
            .requests
            .iter()
            .any(|r| r.starts_with("/attach/default/p/app?input=1&output=1")),
        "{:?}",
        kubelet.seen().requests
    );

    // Not an upgrade: refused before the kubelet is dialled.
    let raw = RawClient::new(&server.url(), server.ca_pem(), Some(server.token()));
    let r = raw
        .request(
            Method::POST,
            &format!("{PODS}/p/exec?command=echo&stdout=true"),
            &[],
            Vec::new(),
        )
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.message(), "Upgrade request required");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_node_proxy_refuses_the_servers_own_addresses() {
    // As upstream v1.36: a node whose address is loopback is not proxied to, whatever the
    // port (the stand-in's node is on 127.0.0.1; logs and exec reach it all the same).
    let (server, kubelet, _cert, _dir) = cluster().await;
    let raw = RawClient::new(&server.url(), server.ca_pem(), Some(server.token()));
    for path in [
        "/api/v1/nodes/n1/proxy/configz".to_string(),
        format!("/api/v1/nodes/n1:{}/proxy/healthz", kubelet.port),
        "/api/v1/nodes/n1:8080/proxy/".to_string(),
    ] {
        let r = raw.get(&path).await;
        assert_eq!(r.status, 400, "{path}");
        assert_eq!(r.message(), "address not allowed");
    }
    assert!(kubelet.seen().requests.is_empty());
    let r = raw.get("/api/v1/nodes/missing/proxy/healthz").await;
    assert_eq!(r.status, 404);
    assert_eq!(r.message(), "nodes \"missing\" not found");
    let r = raw.get("/api/v1/nodes/a:b:c:d/proxy/").await;
    assert_eq!(r.status, 400);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubelet_certificates_are_verified() {
    // A server trusting another authority refuses the stand-in's certificate.
    let dir = tempfile::tempdir().unwrap();
    let kubelet = KubeletStandIn::start(&TestCa::new("unused").pem).await;
    let wrong = dir.path().join("wrong-ca.crt");
    std::fs::write(&wrong, TestCa::new("another-ca").pem).unwrap();
    let server = TestServer::start_with(move |c| {
        c.kubelet.preferred_address_types = vec!["InternalIP".into()];
        c.kubelet.certificate_authority = Some(wrong);
    })
    .await;
    let raw = RawClient::new(&server.url(), server.ca_pem(), Some(server.token()));
    kubelet.register(&raw, "n1").await;
    raw.send_json(Method::POST, PODS, &pod("p", Some("n1"), &["app"], &[]))
        .await;
    let r = raw.get(&format!("{PODS}/p/log")).await;
    assert_eq!(r.status, 500);
    assert!(r.message().contains("certificate"), "{}", r.message());
    // Unless the request itself asks not to verify (logs only).
    let r = raw
        .get(&format!(
            "{PODS}/p/log?insecureSkipTLSVerifyBackend=true&tailLines=1"
        ))
        .await;
    assert_eq!(
        (r.status.as_u16(), &r.body[..]),
        (200, &b"app line 5\n"[..])
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stream_into_a_pod_needs_create() {
    // RBAC, and a user who may only `get` pods/exec.
    let dir = tempfile::tempdir().unwrap();
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "reader-token,reader,1001\n").unwrap();
    let client_ca = TestCa::new("kubelet-client-ca");
    let kubelet = KubeletStandIn::start(&client_ca.pem).await;
    let server = TestServer::start_with(move |c| {
        c.kubelet.preferred_address_types = vec!["InternalIP".into()];
        c.token_auth_file = Some(tokens);
        c.authorization_modes = vec!["RBAC".into()];
    })
    .await;
    let raw = RawClient::new(&server.url(), server.ca_pem(), Some(server.token()));
    kubelet.register(&raw, "n1").await;
    raw.send_json(Method::POST, PODS, &pod("p", Some("n1"), &["app"], &[]))
        .await;
    let role = json!({"metadata": {"name": "exec-get"}, "rules": [
        {"apiGroups": [""], "resources": ["pods", "pods/exec"], "verbs": ["get"]}]});
    raw.send_json(
        Method::POST,
        "/apis/rbac.authorization.k8s.io/v1/clusterroles",
        &role,
    )
    .await;
    let binding = json!({"metadata": {"name": "reader"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "exec-get"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "reader"}]});
    raw.send_json(
        Method::POST,
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        &binding,
    )
    .await;
    let reader = raw.with_token(Some("reader-token"));
    let upgrade = [
        ("connection", "Upgrade"),
        ("upgrade", "websocket"),
        ("sec-websocket-version", "13"),
        ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
        ("sec-websocket-protocol", "v5.channel.k8s.io"),
    ];
    let path = format!("{PODS}/p/exec?command=echo&stdout=true");
    let mut r = reader
        .request(
            Method::GET,
            "/api/v1/namespaces/default/pods/p",
            &[],
            Vec::new(),
        )
        .await;
    for _ in 0..100 {
        if r.status == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
        r = reader
            .request(
                Method::GET,
                "/api/v1/namespaces/default/pods/p",
                &[],
                Vec::new(),
            )
            .await;
    }
    assert_eq!(r.status, 200, "the binding took effect");
    let r = reader
        .request(Method::GET, &path, &upgrade, Vec::new())
        .await;
    assert_eq!(r.status, 403, "{:?}", r.body);
    assert_eq!(
        r.message(),
        "pods \"p\" is forbidden: User \"reader\" cannot create resource \"pods/exec\" in API group \"\" in the namespace \"default\""
    );
}

/// Exec into pod `p` with the kube crate's WebSocket client: megabytes both ways through
/// `cat` (stdin closed at the end), an exit code in the final Status, a terminal resize.
async fn exec_through_the_kube_crate(pods: &Api<Pod>) {
    let mut cat = pods
        .exec(
            "p",
            ["cat"],
            &AttachParams::default().stdin(true).stderr(false),
        )
        .await
        .unwrap();
    let mut stdin = cat.stdin().unwrap();
    let mut stdout = cat.stdout().unwrap();
    let payload = large_payload();
    let sent = payload.clone();
    let writer = tokio::spawn(async move {
        stdin.write_all(&sent).await.unwrap();
        stdin.shutdown().await.unwrap();
    });
    let mut echoed = Vec::new();
    stdout.read_to_end(&mut echoed).await.unwrap();
    writer.await.unwrap();
    assert!(echoed == payload, "{} bytes echoed", echoed.len());
    let status = cat.take_status().unwrap().await.unwrap();
    assert_eq!(status.status.as_deref(), Some("Success"));

    let mut failing = pods
        .exec("p", ["exit", "7"], &AttachParams::default())
        .await
        .unwrap();
    let status = failing.take_status().unwrap().await.unwrap();
    assert_eq!(status.reason.as_deref(), Some("NonZeroExitCode"));
    let causes = status.details.unwrap().causes.unwrap();
    assert_eq!(causes[0].message.as_deref(), Some("7"));

    let mut sized = pods
        .exec(
            "p",
            ["size"],
            &AttachParams::interactive_tty().stderr(false),
        )
        .await
        .unwrap();
    let mut resize = sized.terminal_size().unwrap();
    use futures_util::SinkExt;
    resize
        .send(TerminalSize {
            width: 120,
            height: 40,
        })
        .await
        .unwrap();
    let mut out = String::new();
    sized
        .stdout()
        .unwrap()
        .read_to_string(&mut out)
        .await
        .unwrap();
    assert_eq!(out, "120x40\n");
}

/// A large `payload` through `kubectl exec -i p -- cat` (with `env`), written while read.
fn exec_cat(kc: &std::path::Path, env: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    use std::io::Read;
    let mut child = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kc)
        .args(["exec", "-i", "p", "--", "cat"])
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let sent = payload.to_vec();
    let thread = std::thread::spawn(move || stdin.write_all(&sent).unwrap());
    let mut echoed = Vec::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_end(&mut echoed)
        .unwrap();
    thread.join().unwrap();
    assert!(child.wait().unwrap().success());
    echoed
}

/// Megabytes of varied bytes, for the large transfers.
fn large_payload() -> Vec<u8> {
    (0..4_000_000u32).map(|i| (i % 251) as u8).collect()
}

/// A TCP round trip through `kubectl port-forward` (with `env`) to the stand-in's echo.
fn port_forward_echo(kc: &std::path::Path, env: &[(&str, &str)], payload: &[u8]) -> Vec<u8> {
    port_forward_echo_read_at(kc, env, payload, Duration::ZERO)
}

/// [`port_forward_echo`] read by a slow reader: a pause of `pause` after each 64 KiB taken, so
/// that every hop on the way back fills up and must hold the rest without losing any.
fn port_forward_echo_read_at(
    kc: &std::path::Path,
    env: &[(&str, &str)],
    payload: &[u8],
    pause: Duration,
) -> Vec<u8> {
    use std::io::Read;
    let mut child = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kc)
        .args(["port-forward", "pod/p", ":8080", "--address", "127.0.0.1"])
        .envs(env.iter().copied())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let line = lines.next().unwrap().unwrap();
    // "Forwarding from 127.0.0.1:43127 -> 8080"
    let port: u16 = line
        .split_whitespace()
        .nth(2)
        .and_then(|a| a.rsplit(':').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("unexpected kubectl output: {line}"));
    let mut tcp = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    // Written while read: an echo holds back what its reader has not taken.
    let mut writer = tcp.try_clone().unwrap();
    let sent = payload.to_vec();
    let thread = std::thread::spawn(move || writer.write_all(&sent).unwrap());
    let mut echoed = vec![0; payload.len()];
    for chunk in echoed.chunks_mut(64 << 10) {
        tcp.read_exact(chunk).unwrap();
        std::thread::sleep(pause);
    }
    thread.join().unwrap();
    drop(tcp);
    child.kill().unwrap();
    child.wait().unwrap();
    echoed
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn streams_reach_a_kubelet_that_speaks_only_spdy() {
    let (server, kubelet, _cert, _dir) = cluster_of(Transport::Spdy).await;
    let kc = server.kubeconfig_path();
    let kc2 = kc.clone();
    tokio::task::spawn_blocking(move || {
        let kc = kc2;
        // kubectl's WebSocket (v5), translated by the server into SPDY streams.
        assert_eq!(
            ok(kubectl(&kc, &["exec", "p", "--", "echo", "hello", "world"])),
            "hello world\n"
        );
        let mut child = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kc)
            .args(["exec", "-i", "p", "--", "cat"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"one\ntwo\n").unwrap();
        drop(stdin);
        let out = child.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), "one\ntwo\n");
        let out = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kc)
            .args(["exec", "p", "--", "exit", "3"])
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(3),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kc)
            .args(["exec", "p", "--", "stderr", "oops"])
            .output()
            .unwrap();
        assert_eq!(String::from_utf8_lossy(&out.stderr), "oops\n");
        // kubectl's own SPDY, spliced through to the kubelet's.
        let spdy = [("KUBECTL_REMOTE_COMMAND_WEBSOCKETS", "false")];
        let out = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kc)
            .args(["exec", "p", "--", "echo", "over", "spdy"])
            .envs(spdy)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout), "over spdy\n");
        // Port-forward: the WebSocket tunnel, then kubectl's SPDY.
        // Megabytes each way (beyond every buffer on the path, and the server's bulk-lane
        // budget, which once held upgraded connections back after 256 KiB).
        let payload = large_payload();
        let spdy = [("KUBECTL_PORT_FORWARD_WEBSOCKETS", "false")];
        assert!(port_forward_echo(&kc, &spdy, &payload) == payload, "spdy");
        assert!(port_forward_echo(&kc, &[], &payload) == payload, "tunnel");
        let slowly = Duration::from_millis(15);
        assert!(
            port_forward_echo_read_at(&kc, &[], &payload, slowly) == payload,
            "slow reader"
        );
        let spdy = [("KUBECTL_REMOTE_COMMAND_WEBSOCKETS", "false")];
        assert!(exec_cat(&kc, &[], &payload) == payload, "exec translated");
        assert!(exec_cat(&kc, &spdy, &payload) == payload, "exec over spdy");
    })
    .await
    .unwrap();
    let protocols = kubelet.seen().protocols;
    assert!(
        protocols.iter().all(|p| p.starts_with("SPDY/3.1+")),
        "{protocols:?}"
    );
    assert!(protocols.iter().any(|p| p == "SPDY/3.1+portforward.k8s.io"));

    // The kube crate's WebSocket client, translated into SPDY streams.
    let pods: Api<Pod> = Api::namespaced(server.client().await, "default");
    exec_through_the_kube_crate(&pods).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn upgraded_streams_keep_to_the_byte_rate_limit() {
    // 2,000 bytes per second each way, a second's worth as a burst: 8,000 bytes echoed
    // need three seconds, however fast the machine (checked as a lower bound, with room
    // for rounding, which no slowness can break; unthrottled it takes milliseconds).
    for transport in [Transport::WebSocket, Transport::Spdy] {
        let (server, _kubelet, _cert, _dir) = cluster_limited(transport, 2_000).await;
        let pods: Api<Pod> = Api::namespaced(server.client().await, "default");
        let start = std::time::Instant::now();
        let mut cat = pods
            .exec(
                "p",
                ["cat"],
                &AttachParams::default().stdin(true).stderr(false),
            )
            .await
            .unwrap();
        let mut stdin = cat.stdin().unwrap();
        let mut stdout = cat.stdout().unwrap();
        let writer = tokio::spawn(async move {
            stdin.write_all(&[b'z'; 8_000]).await.unwrap();
            stdin.shutdown().await.unwrap();
        });
        let mut echoed = Vec::new();
        stdout.read_to_end(&mut echoed).await.unwrap();
        writer.await.unwrap();
        assert_eq!(echoed.len(), 8_000);
        assert!(
            start.elapsed() >= Duration::from_millis(2_500),
            "{transport:?}: {:?}",
            start.elapsed()
        );
    }
}

/// `kubectl cp` into the pod and out of it, through a kubelet speaking `transport`.
async fn copies_both_ways(transport: Transport) {
    let (server, kubelet, _cert, dir) = cluster_of(transport).await;
    let kc = server.kubeconfig_path();
    let local = dir.path().join("notes.txt");
    let contents: Vec<u8> = (0..100_000u32).map(|i| b'a' + (i % 26) as u8).collect();
    std::fs::write(&local, &contents).unwrap();
    let out = dir.path().join("copied.bin");
    let (local2, out2) = (local.clone(), out.clone());
    // kubectl's requests are logged (-v=6): a copy that lands under the wrong name is one
    // whose `test -d` failed, and the log says how.
    let copy_in_log = tokio::task::spawn_blocking(move || {
        let copy_in = kubectl(&kc, &["cp", "-v=6", local2.to_str().unwrap(), "p:/tmp/"]);
        let log = copy_in.2.clone();
        ok(copy_in);
        ok(kubectl(
            &kc,
            &["cp", "p:/data/report.bin", out2.to_str().unwrap()],
        ));
        log
    })
    .await
    .unwrap();
    let files = kubelet.seen().files;
    assert_eq!(
        files.len(),
        1,
        "{:?}",
        files.iter().map(|f| &f.0).collect::<Vec<_>>()
    );
    assert_eq!(
        files[0].0, "/tmp/notes.txt",
        "{transport:?}: kubectl cp said:\n{copy_in_log}"
    );
    assert!(files[0].1 == contents, "the copy into the pod differs");
    assert!(
        std::fs::read(&out).unwrap() == capstan_e2e::kubelet::cp_content("/data/report.bin"),
        "the copy out of the pod differs"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_cp_copies_both_ways() {
    copies_both_ways(Transport::WebSocket).await;
    copies_both_ways(Transport::Spdy).await;
}
