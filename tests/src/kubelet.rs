//! A kubelet stand-in for the API server's connections to kubelets: HTTPS on a loopback
//! port with a certificate from its own authority, a client certificate asked for (and
//! remembered), and the kubelet endpoints the server reaches:
//!
//! - `/containerLogs/{ns}/{pod}/{container}`: five lines `<container> line <i>`, `tailLines`
//!   and `timestamps` honoured; `follow=true` adds a `<container> tick <i>` line every
//!   50 ms until the reader goes away (counted in [`Seen::follows_ended`]). A container
//!   named `waiting` has not started: 400 with the kubelet's message.
//! - `/exec/{ns}/{pod}/{container}` and `/attach/…`: as a v1.36 kubelet declaring
//!   `ExtendWebSocketsToKubelet` ([`Transport::WebSocket`]), the WebSocket protocols
//!   `v5.channel.k8s.io` and `v4.channel.k8s.io` (channel byte first: 0 stdin, 1 stdout,
//!   2 stderr, 3 the final Status, 4 resize; 255 closes a stream in v5); as an older kubelet
//!   ([`Transport::Spdy`]), SPDY/3.1 with `v4.channel.k8s.io` streams (`streamType` error,
//!   stdin, stdout, stderr, resize). Commands: `echo <words>`, `cat` (stdin to stdout until
//!   stdin ends; attach behaves as `cat`), `exit <n>`, `stderr <words>`, `size` (waits for a
//!   resize and prints `<width>x<height>`).
//! - `/portForward/{ns}/{pod}` (SPDY, `portforward.k8s.io`): each forwarded connection's
//!   data stream is echoed back, as a TCP echo server in the pod would.
//! - `/healthz`, `/configz`, and anything else: 404.

use std::sync::{Arc, Mutex};

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, Full, StreamBody};
use hyper::body::Frame;
use hyper_util::rt::TokioIo;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};
use tokio::sync::mpsc;
use tokio_tungstenite::WebSocketStream;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role};
use tokio_tungstenite::tungstenite::{Message, handshake::derive_accept_key};

type Body = http_body_util::combinators::BoxBody<Bytes, std::convert::Infallible>;

/// What the stand-in has seen.
#[derive(Debug, Clone, Default)]
pub struct Seen {
    /// Each request's path and query, in order.
    pub requests: Vec<String>,
    /// The client certificate of each connection that presented one (DER).
    pub client_certificates: Vec<Vec<u8>>,
    /// Followed log streams whose reader went away.
    pub follows_ended: usize,
    /// The WebSocket subprotocol of each stream opened.
    pub protocols: Vec<String>,
    /// Files copied into the pod (`kubectl cp`): path and contents.
    pub files: Vec<(String, Vec<u8>)>,
}

/// How the stand-in speaks its streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// WebSocket (and the node declares `ExtendWebSocketsToKubelet`).
    WebSocket,
    /// SPDY only, as kubelets before v1.36.
    Spdy,
}

/// A running stand-in; stops when dropped.
pub struct KubeletStandIn {
    /// How it speaks its streams.
    pub transport: Transport,
    /// Its port on 127.0.0.1.
    pub port: u16,
    /// The authority of its serving certificate (PEM).
    pub ca_pem: String,
    seen: Arc<Mutex<Seen>>,
    task: tokio::task::JoinHandle<()>,
}

fn full(status: StatusCode, text: impl Into<Bytes>) -> Response<Body> {
    Response::builder()
        .status(status)
        .header("content-type", "text/plain")
        .body(Full::new(text.into()).boxed())
        .expect("a response")
}

impl KubeletStandIn {
    /// Starts a WebSocket stand-in that asks for client certificates signed by
    /// `client_ca_pem`.
    pub async fn start(client_ca_pem: &str) -> Self {
        Self::start_speaking(client_ca_pem, Transport::WebSocket).await
    }

    /// Starts a stand-in speaking `transport`.
    pub async fn start_speaking(client_ca_pem: &str, transport: Transport) -> Self {
        let authority = crate::TestCa::new("kubelet-stand-in-ca");
        let params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_string()]).expect("names");
        let (cert, key) = authority.sign(params);
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = rustls::RootCertStore::empty();
        for ca in CertificateDer::pem_slice_iter(client_ca_pem.as_bytes()) {
            roots.add(ca.expect("a CA")).expect("a usable CA");
        }
        let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
            Arc::new(roots),
            provider.clone(),
        )
        .allow_unauthenticated()
        .build()
        .expect("a client verifier");
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_client_cert_verifier(verifier)
            .with_single_cert(
                vec![CertificateDer::from_pem_slice(cert.as_bytes()).expect("a certificate")],
                PrivateKeyDer::from_pem_slice(key.as_bytes()).expect("a key"),
            )
            .expect("a server configuration");
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind(("127.0.0.1", 0))
            .await
            .expect("a port");
        let port = listener.local_addr().expect("an address").port();
        let seen = Arc::new(Mutex::new(Seen::default()));
        let task = tokio::spawn({
            let seen = seen.clone();
            async move {
                while let Ok((tcp, _)) = listener.accept().await {
                    let _ = tcp.set_nodelay(true);
                    let acceptor = acceptor.clone();
                    let seen = seen.clone();
                    tokio::spawn(async move {
                        let Ok(tls) = acceptor.accept(tcp).await else {
                            return;
                        };
                        if let Some(chain) = tls.get_ref().1.peer_certificates() {
                            let mut s = seen.lock().expect("not poisoned");
                            s.client_certificates
                                .extend(chain.first().map(|c| c.to_vec()));
                        }
                        let service = hyper::service::service_fn(move |req| {
                            let seen = seen.clone();
                            async move {
                                Ok::<_, std::convert::Infallible>(answer(req, seen, transport))
                            }
                        });
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(TokioIo::new(tls), service)
                            .with_upgrades()
                            .await;
                    });
                }
            }
        });
        Self {
            transport,
            port,
            ca_pem: authority.pem,
            seen,
            task,
        }
    }

    /// What it has seen so far.
    pub fn seen(&self) -> Seen {
        self.seen.lock().expect("not poisoned").clone()
    }

    /// A Node named `name` whose kubelet is this stand-in (InternalIP 127.0.0.1).
    pub fn node(&self, name: &str) -> serde_json::Value {
        let mut node = serde_json::json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name},
            "status": {
                "addresses": [{"type": "InternalIP", "address": "127.0.0.1"},
                              {"type": "Hostname", "address": format!("{name}.invalid")}],
                "daemonEndpoints": {"kubeletEndpoint": {"Port": self.port}}}});
        if self.transport == Transport::WebSocket {
            node["status"]["declaredFeatures"] = serde_json::json!(["ExtendWebSocketsToKubelet"]);
        }
        node
    }
}

impl KubeletStandIn {
    /// Registers Node `name` served by this stand-in through `client` (status included).
    pub async fn register(&self, client: &crate::RawClient, name: &str) {
        let node = self.node(name);
        let r = client
            .send_json(http::Method::POST, "/api/v1/nodes", &node)
            .await;
        assert_eq!(r.status, 201, "{:?}", r.body);
        let mut stored = r.json();
        stored["status"] = node["status"].clone();
        let r = client
            .send_json(
                http::Method::PUT,
                &format!("/api/v1/nodes/{name}/status"),
                &stored,
            )
            .await;
        assert_eq!(r.status, 200, "{:?}", r.body);
    }

    /// The cluster the kubelet tests share, through `client`: the default service account
    /// (upstream admits pods only once it exists), node `n1` served by this stand-in, and
    /// pods on it: `p` (Running, one container `app`), `two` (`app`, `sidecar`, init
    /// `setup`), `waiter` (container `waiting`), and `pending` on no node.
    pub async fn populate(&self, client: &crate::RawClient) {
        const PODS: &str = "/api/v1/namespaces/default/pods";
        let sa = serde_json::json!({"apiVersion": "v1", "kind": "ServiceAccount",
            "metadata": {"name": "default"}});
        client
            .send_json(
                http::Method::POST,
                "/api/v1/namespaces/default/serviceaccounts",
                &sa,
            )
            .await;
        self.register(client, "n1").await;
        for p in [
            pod("p", Some("n1"), &["app"], &[]),
            pod("two", Some("n1"), &["app", "sidecar"], &["setup"]),
            pod("waiter", Some("n1"), &["waiting"], &[]),
            pod("pending", None, &["app"], &[]),
        ] {
            let r = client.send_json(http::Method::POST, PODS, &p).await;
            assert_eq!(r.status, 201, "{:?}", r.body);
        }
        // kubectl port-forward wants a running pod.
        let mut running = client.get(&format!("{PODS}/p")).await.json();
        running["status"] = serde_json::json!({"phase": "Running", "podIP": "10.0.0.7"});
        let r = client
            .send_json(http::Method::PUT, &format!("{PODS}/p/status"), &running)
            .await;
        assert_eq!(r.status, 200, "{:?}", r.body);
    }
}

/// A pod named `name` (on `node`, if any) with `containers` and `init` containers.
pub fn pod(
    name: &str,
    node: Option<&str>,
    containers: &[&str],
    init: &[&str],
) -> serde_json::Value {
    let named = |names: &[&str]| {
        names
            .iter()
            .map(|n| serde_json::json!({"name": n, "image": "busybox"}))
            .collect::<Vec<_>>()
    };
    let mut pod = serde_json::json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"containers": named(containers), "initContainers": named(init),
            "automountServiceAccountToken": false}});
    if let Some(node) = node {
        pod["spec"]["nodeName"] = node.into();
    }
    pod
}

impl Drop for KubeletStandIn {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn query_values(query: &str, key: &str) -> Vec<String> {
    query
        .split('&')
        .filter_map(|pair| pair.split_once('='))
        .filter(|(k, _)| *k == key)
        .map(|(_, v)| percent_decode(v))
        .collect()
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && i + 2 < bytes.len()
            && let Ok(b) = u8::from_str_radix(&s[i + 1..i + 3], 16)
        {
            out.push(b);
            i += 3;
            continue;
        }
        out.push(if bytes[i] == b'+' { b' ' } else { bytes[i] });
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn answer(
    mut req: Request<hyper::body::Incoming>,
    seen: Arc<Mutex<Seen>>,
    transport: Transport,
) -> Response<Body> {
    let path = req.uri().path().to_string();
    let query = req.uri().query().unwrap_or_default().to_string();
    seen.lock()
        .expect("not poisoned")
        .requests
        .push(req.uri().to_string());
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match segments.as_slice() {
        ["healthz"] => full(StatusCode::OK, "ok"),
        ["configz"] => full(
            StatusCode::OK,
            r#"{"kubeletconfig":{"kind":"KubeletConfiguration","maxPods":110}}"#,
        ),
        ["containerLogs", _, pod, container] => logs(pod, container, &query, seen),
        [kind @ ("exec" | "attach"), _, _, _] => {
            let command = if *kind == "attach" {
                vec!["cat".to_string()]
            } else {
                query_values(&query, "command")
            };
            let flag = |key: &str| !query_values(&query, key).is_empty();
            let wanted = Wanted {
                stdin: flag("input"),
                stdout: flag("output"),
                stderr: flag("error"),
                tty: flag("tty"),
            };
            if transport == Transport::Spdy {
                let files = seen.clone();
                return spdy_upgrade(&mut req, "v4.channel.k8s.io", seen, move |session| {
                    spdy_command(session, command, wanted, files)
                });
            }
            let Some(key) = req.headers().get("sec-websocket-key").cloned() else {
                return full(
                    StatusCode::BAD_REQUEST,
                    "this kubelet stand-in speaks WebSocket streams only",
                );
            };
            let offered = req
                .headers()
                .get_all("sec-websocket-protocol")
                .iter()
                .filter_map(|v| v.to_str().ok())
                .flat_map(|v| v.split(','))
                .map(|p| p.trim().to_string())
                .collect::<Vec<_>>();
            let Some(protocol) = ["v5.channel.k8s.io", "v4.channel.k8s.io"]
                .into_iter()
                .find(|p| offered.iter().any(|o| o == p))
            else {
                return full(StatusCode::BAD_REQUEST, "no supported protocol offered");
            };
            seen.lock()
                .expect("not poisoned")
                .protocols
                .push(protocol.to_string());
            let upgrade = hyper::upgrade::on(&mut req);
            let files = seen.clone();
            tokio::spawn(async move {
                let Ok(upgraded) = upgrade.await else {
                    return;
                };
                let ws =
                    WebSocketStream::from_raw_socket(TokioIo::new(upgraded), Role::Server, None)
                        .await;
                run(ws, command, protocol == "v5.channel.k8s.io", files).await;
            });
            Response::builder()
                .status(StatusCode::SWITCHING_PROTOCOLS)
                .header("connection", "Upgrade")
                .header("upgrade", "websocket")
                .header("sec-websocket-accept", derive_accept_key(key.as_bytes()))
                .header("sec-websocket-protocol", protocol)
                .body(Full::new(Bytes::new()).boxed())
                .expect("a response")
        }
        ["portForward", _, _] if transport == Transport::Spdy => {
            spdy_upgrade(&mut req, "portforward.k8s.io", seen, spdy_port_forward)
        }
        _ => full(StatusCode::NOT_FOUND, "404 page not found\n"),
    }
}

/// The streams a remote command asked for.
#[derive(Debug, Clone, Copy)]
struct Wanted {
    stdin: bool,
    stdout: bool,
    stderr: bool,
    tty: bool,
}

/// Switches to SPDY with `protocol` (which the client must offer) and runs `serve` on the
/// session.
fn spdy_upgrade<F, Fut>(
    req: &mut Request<hyper::body::Incoming>,
    protocol: &'static str,
    seen: Arc<Mutex<Seen>>,
    serve: F,
) -> Response<Body>
where
    F: FnOnce(mpsc::Receiver<capstan_spdy::Stream>) -> Fut + Send + 'static,
    Fut: std::future::Future<Output = ()> + Send,
{
    let upgrade = req
        .headers()
        .get("upgrade")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let offered = req
        .headers()
        .get_all("x-stream-protocol-version")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .any(|p| p.trim() == protocol);
    if !upgrade.eq_ignore_ascii_case("SPDY/3.1") || !offered {
        return full(
            StatusCode::BAD_REQUEST,
            format!("this kubelet stand-in speaks SPDY/3.1 with {protocol} only"),
        );
    }
    seen.lock()
        .expect("not poisoned")
        .protocols
        .push(format!("SPDY/3.1+{protocol}"));
    let upgrade = hyper::upgrade::on(req);
    tokio::spawn(async move {
        if let Ok(upgraded) = upgrade.await {
            let (session, incoming) = capstan_spdy::Session::server(TokioIo::new(upgraded));
            serve(incoming).await;
            session.close().await;
        }
    });
    Response::builder()
        .status(StatusCode::SWITCHING_PROTOCOLS)
        .header("connection", "Upgrade")
        .header("upgrade", "SPDY/3.1")
        .header("x-stream-protocol-version", protocol)
        .body(Full::new(Bytes::new()).boxed())
        .expect("a response")
}

/// A remote command over SPDY streams (`v4.channel.k8s.io`).
async fn spdy_command(
    mut incoming: mpsc::Receiver<capstan_spdy::Stream>,
    command: Vec<String>,
    wanted: Wanted,
    seen: Arc<Mutex<Seen>>,
) {
    let expected = 1
        + usize::from(wanted.stdin)
        + usize::from(wanted.stdout)
        + usize::from(wanted.stderr && !wanted.tty)
        + usize::from(wanted.tty);
    let mut streams = std::collections::HashMap::new();
    while streams.len() < expected {
        let Some(stream) = incoming.recv().await else {
            return;
        };
        let kind = stream.header("streamtype").unwrap_or_default().to_string();
        streams.insert(kind, stream);
    }
    let (stdin_tx, stdin_rx) = mpsc::channel::<Bytes>(16);
    if let Some(stdin) = streams.remove("stdin") {
        let (mut data, _) = stdin.split();
        tokio::spawn(async move {
            while let Some(chunk) = data.recv().await {
                if stdin_tx.send(chunk).await.is_err() {
                    break;
                }
            }
        });
    } else {
        drop(stdin_tx);
    }
    let (resize_tx, resize_rx) = mpsc::channel::<serde_json::Value>(4);
    if let Some(resize) = streams.remove("resize") {
        let (mut data, _) = resize.split();
        tokio::spawn(async move {
            while let Some(chunk) = data.recv().await {
                let size = serde_json::from_slice(&chunk).unwrap_or_default();
                if resize_tx.send(size).await.is_err() {
                    break;
                }
            }
        });
    }
    let (out_tx, mut out_rx) = mpsc::channel::<(u8, Bytes)>(16);
    let stdout = streams.get("stdout").map(|s| s.sender());
    let stderr = streams.get("stderr").map(|s| s.sender());
    let writer = tokio::spawn(async move {
        while let Some((channel, data)) = out_rx.recv().await {
            let target = if channel == 1 { &stdout } else { &stderr };
            if let Some(target) = target {
                let _ = target.send(data).await;
            }
        }
        for target in [stdout, stderr].into_iter().flatten() {
            let _ = target.finish().await;
        }
    });
    let code = execute(&command, stdin_rx, resize_rx, out_tx, &seen).await;
    let _ = writer.await;
    if let Some(error) = streams.get("error") {
        // v4 writes the final Status whatever the outcome.
        let _ = error
            .sender()
            .send(Bytes::from(status(&command, code)))
            .await;
        let _ = error.sender().finish().await;
    }
}

/// Port-forward over SPDY: each data stream echoed back.
async fn spdy_port_forward(mut incoming: mpsc::Receiver<capstan_spdy::Stream>) {
    while let Some(stream) = incoming.recv().await {
        if stream.header("streamtype") != Some("data") {
            continue;
        }
        tokio::spawn(async move {
            let (mut data, sender) = stream.split();
            while let Some(chunk) = data.recv().await {
                if sender.send(chunk).await.is_err() {
                    return;
                }
            }
            let _ = sender.finish().await;
        });
    }
}

/// The final Status of `command` ending with `code`.
fn status(command: &[String], code: i32) -> String {
    if code == 0 {
        return serde_json::json!({"metadata": {}, "status": "Success"}).to_string();
    }
    serde_json::json!({"metadata": {}, "status": "Failure",
        "message": format!("command terminated with non-zero exit code: error executing command {command:?}, exit code {code}"),
        "reason": "NonZeroExitCode",
        "details": {"causes": [{"reason": "ExitCode", "message": code.to_string()}]}})
    .to_string()
}

/// Runs one of the stand-in's commands: input from `stdin` (closed at its end), terminal
/// sizes from `resize`, output as (1 stdout | 2 stderr, bytes); the exit code.
async fn execute(
    command: &[String],
    mut stdin: mpsc::Receiver<Bytes>,
    mut resize: mpsc::Receiver<serde_json::Value>,
    out: mpsc::Sender<(u8, Bytes)>,
    seen: &Mutex<Seen>,
) -> i32 {
    // A container runtime takes milliseconds to start a process, and client-go's WebSocket
    // client relies on it: it sets up its streams on a goroutine of their own once the
    // connection is up, and fails the command (kubectl cp's `test -d` among them) when a
    // status and the connection's close arrive first, as an instant answer can on a
    // loaded machine.
    tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    let words = command.get(1..).unwrap_or_default().join(" ");
    let args: Vec<&str> = command.iter().map(String::as_str).collect();
    match args.as_slice() {
        // kubectl cp: is the destination a directory (`/tmp` is)?
        ["test", "-d", path] => return i32::from(*path != "/tmp" && *path != "/tmp/"),
        // kubectl cp into the pod: the archive on stdin, extracted into `seen.files`.
        ["tar", options @ ..] if options.iter().any(|o| o.starts_with("-x")) => {
            let dir = options
                .iter()
                .position(|o| *o == "-C")
                .and_then(|i| options.get(i + 1))
                .map(|d| d.trim_end_matches('/').to_string())
                .unwrap_or_default();
            let mut archive = Vec::new();
            while let Some(chunk) = stdin.recv().await {
                archive.extend_from_slice(&chunk);
            }
            let files = tar::read(&archive);
            let mut seen = seen.lock().expect("not poisoned");
            for (name, data) in files {
                seen.files.push((format!("{dir}/{name}"), data));
            }
            return 0;
        }
        // kubectl cp out of the pod: a file of known content at any path.
        ["tar", "cf", "-", path] => {
            let name = path.trim_start_matches('/');
            let archive = tar::write(name, &cp_content(path));
            let _ = out.send((1, Bytes::from(archive))).await;
            return 0;
        }
        _ => {}
    }
    match command.first().map(String::as_str) {
        Some("echo") => {
            let _ = out.send((1, Bytes::from(format!("{words}\n")))).await;
            0
        }
        Some("stderr") => {
            let _ = out.send((2, Bytes::from(format!("{words}\n")))).await;
            0
        }
        Some("exit") => words.parse().unwrap_or(1),
        Some("cat") => {
            while let Some(chunk) = stdin.recv().await {
                if out.send((1, chunk)).await.is_err() {
                    break;
                }
            }
            0
        }
        Some("size") => {
            if let Some(size) = resize.recv().await {
                let text = format!("{}x{}\n", size["Width"], size["Height"]);
                let _ = out.send((1, Bytes::from(text))).await;
            }
            0
        }
        _ => {
            let _ = out
                .send((
                    2,
                    Bytes::from(format!("{}: not found\n", command.join(" "))),
                ))
                .await;
            127
        }
    }
}

fn logs(pod: &str, container: &str, query: &str, seen: Arc<Mutex<Seen>>) -> Response<Body> {
    if container == "waiting" {
        return full(
            StatusCode::BAD_REQUEST,
            format!(
                "container \"waiting\" in pod \"{pod}\" is waiting to start: ContainerCreating"
            ),
        );
    }
    let timestamps = query_values(query, "timestamps")
        .first()
        .map(String::as_str)
        == Some("true");
    let container = container.to_string();
    let line = move |i: usize, what: &str| {
        let stamp = if timestamps {
            format!("2026-11-29T00:00:{i:02}.000000000Z ")
        } else {
            String::new()
        };
        format!("{stamp}{container} {what} {i}\n")
    };
    let mut lines: Vec<String> = (1..=5).map(|i| line(i, "line")).collect();
    if let Some(tail) = query_values(query, "tailLines")
        .first()
        .and_then(|t| t.parse::<usize>().ok())
    {
        lines.drain(..lines.len().saturating_sub(tail));
    }
    let follow = query_values(query, "follow").first().map(String::as_str) == Some("true");
    if !follow {
        return full(StatusCode::OK, lines.concat());
    }
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Frame<Bytes>, std::convert::Infallible>>(1);
    tokio::spawn(async move {
        for l in lines {
            if tx.send(Ok(Frame::data(Bytes::from(l)))).await.is_err() {
                return;
            }
        }
        for i in 1.. {
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            if tx
                .send(Ok(Frame::data(Bytes::from(line(i, "tick")))))
                .await
                .is_err()
            {
                seen.lock().expect("not poisoned").follows_ended += 1;
                return;
            }
        }
    });
    Response::builder()
        .header("content-type", "text/plain")
        .body(BodyExt::boxed(StreamBody::new(tokio_stream_from(rx))))
        .expect("a response")
}

fn tokio_stream_from<T: Send + 'static>(
    mut rx: tokio::sync::mpsc::Receiver<T>,
) -> impl futures_util::Stream<Item = T> + Send {
    futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx))
}

/// One exec or attach session over `ws`.
async fn run<S>(ws: WebSocketStream<S>, command: Vec<String>, v5: bool, seen: Arc<Mutex<Seen>>)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let frame = |channel: u8, data: &[u8]| {
        let mut bytes = vec![channel];
        bytes.extend_from_slice(data);
        Message::Binary(bytes.into())
    };
    let (mut sink, mut source) = ws.split();
    let (stdin_tx, stdin_rx) = mpsc::channel::<Bytes>(16);
    let (resize_tx, resize_rx) = mpsc::channel::<serde_json::Value>(4);
    let reader = tokio::spawn(async move {
        let mut stdin_tx = Some(stdin_tx);
        while let Some(Ok(message)) = source.next().await {
            let data = match message {
                Message::Binary(data) => data,
                Message::Close(_) => break,
                _ => continue,
            };
            match data.split_first() {
                Some((0, rest)) if !rest.is_empty() => {
                    if let Some(tx) = &stdin_tx {
                        let _ = tx.send(Bytes::copy_from_slice(rest)).await;
                    }
                }
                Some((4, rest)) => {
                    let _ = resize_tx
                        .send(serde_json::from_slice(rest).unwrap_or_default())
                        .await;
                }
                // v5's close signal for stdin.
                Some((255, [0])) if v5 => stdin_tx = None,
                _ => {}
            }
        }
    });
    let (out_tx, mut out_rx) = mpsc::channel::<(u8, Bytes)>(16);
    let execution = execute(&command, stdin_rx, resize_rx, out_tx, &seen);
    let forward = async {
        while let Some((channel, data)) = out_rx.recv().await {
            let _ = sink.send(frame(channel, &data)).await;
        }
    };
    let (code, ()) = tokio::join!(execution, forward);
    reader.abort();
    let _ = sink.send(frame(3, status(&command, code).as_bytes())).await;
    // A normal closure (1000), as the kubelet's WebSocket server ends a stream.
    let _ = sink
        .send(Message::Close(Some(CloseFrame {
            code: CloseCode::Normal,
            reason: "".into(),
        })))
        .await;
}

/// What the pod's file at `path` holds for `kubectl cp` out of it.
pub fn cp_content(path: &str) -> Vec<u8> {
    (0..70_000u32)
        .map(|i| path.as_bytes()[i as usize % path.len()] ^ (i % 7) as u8)
        .collect()
}

/// The little of the tar format `kubectl cp` needs: one-file archives out, plain files in.
mod tar {
    const BLOCK: usize = 512;

    fn octal(field: &mut [u8], value: u64) {
        let text = format!("{value:0width$o}", width = field.len() - 1);
        field[..text.len()].copy_from_slice(text.as_bytes());
    }

    /// An archive holding `data` as the regular file `name`.
    pub fn write(name: &str, data: &[u8]) -> Vec<u8> {
        let mut header = [0u8; BLOCK];
        header[..name.len()].copy_from_slice(name.as_bytes());
        octal(&mut header[100..108], 0o644);
        octal(&mut header[108..116], 0);
        octal(&mut header[116..124], 0);
        octal(&mut header[124..136], data.len() as u64);
        octal(&mut header[136..148], 1_764_374_400);
        header[156] = b'0';
        header[257..263].copy_from_slice(b"ustar\0");
        header[263..265].copy_from_slice(b"00");
        header[148..156].fill(b' ');
        let sum: u32 = header.iter().map(|b| u32::from(*b)).sum();
        let text = format!("{sum:06o}\0 ");
        header[148..156].copy_from_slice(text.as_bytes());
        let mut out = header.to_vec();
        out.extend_from_slice(data);
        out.resize(out.len().div_ceil(BLOCK) * BLOCK, 0);
        out.extend_from_slice(&[0; 2 * BLOCK]);
        out
    }

    /// The regular files of an archive: name and contents.
    pub fn read(archive: &[u8]) -> Vec<(String, Vec<u8>)> {
        let mut files = Vec::new();
        let mut at = 0;
        while at + BLOCK <= archive.len() {
            let header = &archive[at..at + BLOCK];
            if header.iter().all(|b| *b == 0) {
                break;
            }
            let text = |range: std::ops::Range<usize>| {
                let field = &header[range];
                let end = field.iter().position(|b| *b == 0).unwrap_or(field.len());
                String::from_utf8_lossy(&field[..end]).trim().to_string()
            };
            let size = usize::from_str_radix(&text(124..136), 8).unwrap_or(0);
            let mut name = text(0..100);
            let prefix = text(345..500);
            if !prefix.is_empty() {
                name = format!("{prefix}/{name}");
            }
            let start = at + BLOCK;
            if matches!(header[156], b'0' | 0) && start + size <= archive.len() {
                files.push((name, archive[start..start + size].to_vec()));
            }
            at = start + size.div_ceil(BLOCK) * BLOCK;
        }
        files
    }

    #[cfg(test)]
    mod tests {
        #[test]
        fn an_archive_reads_back() {
            let data = vec![9u8; 1_000];
            let archive = super::write("data/f.bin", &data);
            assert_eq!(archive.len() % 512, 0);
            assert_eq!(
                super::read(&archive),
                vec![("data/f.bin".to_string(), data)]
            );
        }
    }
}
