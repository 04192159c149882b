//! Helpers for end-to-end tests: a raw HTTPS client for the edge cases typed clients refuse
//! to send, and a kubectl runner.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};

/// A response: status, headers and body.
#[derive(Debug)]
pub struct RawResponse {
    /// Status code.
    pub status: StatusCode,
    /// Headers.
    pub headers: HeaderMap,
    /// Body bytes.
    pub body: Bytes,
}

impl RawResponse {
    /// The body as JSON lines (a watch's events; panics on a line that is not JSON).
    pub fn json_lines(&self) -> Vec<serde_json::Value> {
        self.body
            .split(|b| *b == b'\n')
            .filter(|l| !l.is_empty())
            .map(|l| {
                serde_json::from_slice(l).unwrap_or_else(|e| {
                    panic!("a line is not JSON ({e}): {}", String::from_utf8_lossy(l))
                })
            })
            .collect()
    }

    /// The body as JSON (panics when it is not).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "body is not JSON ({e}): {}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// The `message` of the Status the body holds (panics when there is none).
    pub fn message(&self) -> String {
        match self.json()["message"].as_str() {
            Some(m) => m.to_string(),
            None => panic!("no Status message: {}", String::from_utf8_lossy(&self.body)),
        }
    }
}

/// A minimal HTTPS client: one HTTP/1.1 connection per request, trusting one CA.
#[derive(Clone)]
pub struct RawClient {
    host: String,
    port: u16,
    connector: tokio_rustls::TlsConnector,
    token: Option<String>,
}

/// The TLS client configuration trusting `ca_pem`, offering `alpn`.
pub fn tls_config(ca_pem: &str, alpn: &[&[u8]]) -> rustls::ClientConfig {
    let mut roots = rustls::RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
        roots
            .add(cert.expect("a PEM certificate"))
            .expect("a usable CA certificate");
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    config
}

impl RawClient {
    /// A client for `url` (`https://host:port`) trusting `ca_pem`, sending `token` if given.
    pub fn new(url: &str, ca_pem: &str, token: Option<&str>) -> Self {
        let authority = url.strip_prefix("https://").expect("an https URL");
        let (host, port) = authority.rsplit_once(':').expect("host:port");
        Self {
            host: host.trim_matches(['[', ']']).to_string(),
            port: port.parse().expect("a port"),
            connector: tokio_rustls::TlsConnector::from(Arc::new(tls_config(
                ca_pem,
                &[b"http/1.1"],
            ))),
            token: token.map(str::to_string),
        }
    }

    /// The same client with another bearer token (or none).
    pub fn with_token(&self, token: Option<&str>) -> Self {
        Self {
            token: token.map(str::to_string),
            ..self.clone()
        }
    }

    /// The same client presenting the client certificate `cert` with `key` (PEM).
    pub fn with_client_certificate(&self, ca_pem: &str, cert: &str, key: &str) -> Self {
        let mut roots = rustls::RootCertStore::empty();
        for c in CertificateDer::pem_slice_iter(ca_pem.as_bytes()) {
            roots.add(c.expect("a PEM certificate")).expect("a CA");
        }
        let chain = CertificateDer::pem_slice_iter(cert.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .expect("a PEM certificate chain");
        let key = rustls_pki_types::PrivateKeyDer::from_pem_slice(key.as_bytes())
            .expect("a PEM private key");
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_root_certificates(roots)
            .with_client_auth_cert(chain, key)
            .expect("a usable client certificate");
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Self {
            connector: tokio_rustls::TlsConnector::from(Arc::new(config)),
            ..self.clone()
        }
    }

    /// Sends one request; panics when the server can not be reached.
    pub async fn request(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> RawResponse {
        self.try_request(method, path, headers, body)
            .await
            .unwrap_or_else(|e| panic!("request failed: {e}"))
    }

    /// Sends one request; an error when the connection fails (e.g. the server died).
    pub async fn try_request(
        &self,
        method: Method,
        path: &str,
        headers: &[(&str, &str)],
        body: Vec<u8>,
    ) -> Result<RawResponse, String> {
        let tcp = tokio::net::TcpStream::connect((self.host.as_str(), self.port))
            .await
            .map_err(|e| format!("connect: {e}"))?;
        let name = ServerName::try_from(self.host.clone()).map_err(|e| e.to_string())?;
        let tls = self
            .connector
            .connect(name, tcp)
            .await
            .map_err(|e| format!("TLS: {e}"))?;
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
            .await
            .map_err(|e| format!("HTTP: {e}"))?;
        tokio::spawn(conn);
        let mut req = Request::builder()
            .method(method)
            .uri(path)
            .header("host", format!("{}:{}", self.host, self.port));
        if let Some(token) = &self.token {
            req = req.header("authorization", format!("Bearer {token}"));
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = req
            .body(Full::new(Bytes::from(body)))
            .map_err(|e| e.to_string())?;
        let resp = sender
            .send_request(req)
            .await
            .map_err(|e| format!("send: {e}"))?;
        let (parts, body) = resp.into_parts();
        let body = body
            .collect()
            .await
            .map_err(|e| format!("body: {e}"))?
            .to_bytes();
        Ok(RawResponse {
            status: parts.status,
            headers: parts.headers,
            body,
        })
    }

    /// Sends `GET path` with `Connection: close` on a connection whose receive buffer is
    /// `recv_buffer` bytes, and returns the connection unread: a client that stops reading
    /// (e.g. a slow watcher). Read it to the end with [`read_to_end`].
    pub async fn stalled_get(&self, path: &str, recv_buffer: u32) -> StalledConnection {
        let addr = tokio::net::lookup_host((self.host.as_str(), self.port))
            .await
            .expect("resolve")
            .next()
            .expect("an address");
        let socket = if addr.is_ipv4() {
            tokio::net::TcpSocket::new_v4()
        } else {
            tokio::net::TcpSocket::new_v6()
        }
        .expect("socket");
        socket
            .set_recv_buffer_size(recv_buffer)
            .expect("receive buffer");
        let tcp = socket.connect(addr).await.expect("connect");
        let name = ServerName::try_from(self.host.clone()).expect("server name");
        let mut tls = self.connector.connect(name, tcp).await.expect("TLS");
        let head = self.head("GET", path, "connection: close\r\n");
        tokio::io::AsyncWriteExt::write_all(&mut tls, head.as_bytes())
            .await
            .expect("send");
        StalledConnection(tls)
    }

    /// Sends `method path` announcing a body of `length` bytes and only `sent` of them: a
    /// request that stays in the server's hands until the connection closes or the server
    /// answers without the rest. Read the answer with [`read_response`].
    pub async fn unfinished_request(
        &self,
        method: &str,
        path: &str,
        length: usize,
        sent: &[u8],
    ) -> StalledConnection {
        let head = self.head(
            method,
            path,
            &format!("content-type: application/json\r\ncontent-length: {length}\r\n"),
        );
        let mut conn = self.connection().await;
        conn.send(&[head.as_bytes(), sent].concat()).await;
        conn
    }

    /// An HTTP/1.1 request head with this client's host and token and `headers` (each line
    /// ending in CRLF).
    fn head(&self, method: &str, path: &str, headers: &str) -> String {
        let mut head = format!(
            "{method} {path} HTTP/1.1\r\nhost: {}:{}\r\n{headers}",
            self.host, self.port
        );
        if let Some(token) = &self.token {
            head.push_str(&format!("authorization: Bearer {token}\r\n"));
        }
        head.push_str("\r\n");
        head
    }

    /// A TLS connection to the server on which nothing has been sent yet.
    pub async fn connection(&self) -> StalledConnection {
        let tcp = tokio::net::TcpStream::connect((self.host.as_str(), self.port))
            .await
            .expect("connect");
        let name = ServerName::try_from(self.host.clone()).expect("server name");
        StalledConnection(self.connector.connect(name, tcp).await.expect("TLS"))
    }

    /// GET `path`.
    pub async fn get(&self, path: &str) -> RawResponse {
        self.request(Method::GET, path, &[], Vec::new()).await
    }

    /// Sends a JSON body with `method`.
    pub async fn send_json(
        &self,
        method: Method,
        path: &str,
        body: &serde_json::Value,
    ) -> RawResponse {
        let bytes = serde_json::to_vec(body).expect("JSON");
        self.request(method, path, &[("content-type", "application/json")], bytes)
            .await
    }
}

/// Runs kubectl with `kubeconfig` and a private cache directory; returns (success, stdout,
/// stderr). Fails the test with a clear message when kubectl is not installed.
pub fn kubectl(kubeconfig: &Path, args: &[&str]) -> (bool, String, String) {
    kubectl_with_env(kubeconfig, args, &[])
}

/// [`kubectl`] with extra environment variables (e.g. `EDITOR`).
pub fn kubectl_with_env(
    kubeconfig: &Path,
    args: &[&str],
    env: &[(&str, &str)],
) -> (bool, String, String) {
    let cache = kubeconfig.with_file_name("kubectl-cache");
    let mut cmd = Command::new("kubectl");
    cmd.arg("--kubeconfig")
        .arg(kubeconfig)
        .arg("--cache-dir")
        .arg(&cache)
        .args(args);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap_or_else(|e| {
        panic!("running kubectl failed ({e}); install it (Debian: apt-get install kubernetes-client) or use the README's test command")
    });
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A connection whose response has not been read yet (see [`RawClient::stalled_get`]).
pub struct StalledConnection(tokio_rustls::client::TlsStream<tokio::net::TcpStream>);

/// Reads everything the server sends until it closes the connection: the raw response
/// (status line, headers, and the body in its transfer encoding).
pub async fn read_to_end(conn: StalledConnection) -> Vec<u8> {
    let mut tls = conn.0;
    let mut out = Vec::new();
    // A peer that closes without TLS close_notify is still the end of the response here.
    let _ = tokio::io::AsyncReadExt::read_to_end(&mut tls, &mut out).await;
    out
}

impl StalledConnection {
    /// Sends `bytes` as they are.
    pub async fn send(&mut self, bytes: &[u8]) {
        tokio::io::AsyncWriteExt::write_all(&mut self.0, bytes)
            .await
            .expect("send");
        tokio::io::AsyncWriteExt::flush(&mut self.0)
            .await
            .expect("flush");
    }

    /// Whether the server closes the connection within `within` (reading and dropping
    /// whatever it sends before).
    pub async fn closed_within(&mut self, within: std::time::Duration) -> bool {
        closed_within(&mut self.0, within).await
    }
}

/// Whether the peer of `stream` closes it within `within`.
pub async fn closed_within(
    stream: &mut (impl tokio::io::AsyncRead + Unpin),
    within: std::time::Duration,
) -> bool {
    let mut chunk = [0u8; 4096];
    tokio::time::timeout(within, async {
        loop {
            match tokio::io::AsyncReadExt::read(stream, &mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await
    .is_ok()
}

/// Reads one response with a `Content-Length` body from `conn`: its status and body.
pub async fn read_response(conn: &mut StalledConnection) -> (u16, Vec<u8>) {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_string();
            let status = head
                .split_whitespace()
                .nth(1)
                .and_then(|s| s.parse().ok())
                .expect("a status line");
            let length: usize = head
                .lines()
                .find_map(|l| {
                    let (k, v) = l.split_once(':')?;
                    k.eq_ignore_ascii_case("content-length")
                        .then(|| v.trim().parse().ok())?
                })
                .unwrap_or(0);
            while buf.len() < end + 4 + length {
                let n = tokio::io::AsyncReadExt::read(&mut conn.0, &mut chunk)
                    .await
                    .expect("read");
                assert!(n > 0, "the connection closed inside the body");
                buf.extend_from_slice(&chunk[..n]);
            }
            return (status, buf[end + 4..end + 4 + length].to_vec());
        }
        let n = tokio::io::AsyncReadExt::read(&mut conn.0, &mut chunk)
            .await
            .expect("read");
        assert!(n > 0, "the connection closed before a response");
        buf.extend_from_slice(&chunk[..n]);
    }
}

pub mod kubelet;
pub mod upstream;

/// The specification's option tables, for checking the daemons' `--help`.
pub mod spec_options {
    /// Spec 1.5: the logging and metric options of both daemons.
    pub const LOGGING_AND_METRICS: &[&str] = &[
        "logging-format",
        "logtostderr",
        "alsologtostderr",
        "stderrthreshold",
        "log-dir",
        "log-file",
        "log-file-max-size",
        "log-flush-frequency",
        "log-backtrace-at",
        "v",
        "vmodule",
        "add-dir-header",
        "skip-headers",
        "skip-log-headers",
        "one-output",
        "experimental-logging-sanitization",
        "allow-metric-labels",
        "disabled-metrics",
        "show-hidden-metrics-for-version",
    ];

    /// The options of `names` that `help` does not list as `--name` (or `--name[=...]`).
    pub fn missing_from_help<'a>(help: &str, names: &[&'a str]) -> Vec<&'a str> {
        names
            .iter()
            .copied()
            .filter(|name| {
                ![" ", "\n", "[="]
                    .iter()
                    .any(|after| help.contains(&format!("--{name}{after}")))
            })
            .collect()
    }
}

/// What a [`HttpsServer`] handler gets: method, path and query, headers, body.
pub struct Received {
    /// The method.
    pub method: Method,
    /// Path and query.
    pub path: String,
    /// The headers.
    pub headers: HeaderMap,
    /// The body.
    pub body: Bytes,
}

/// What an asynchronous handler returns.
pub type Answer =
    std::pin::Pin<Box<dyn std::future::Future<Output = (StatusCode, serde_json::Value)> + Send>>;

type Handler = dyn Fn(Received) -> Answer + Send + Sync;

/// A small HTTPS server standing for a webhook or an identity provider: its own authority
/// and a certificate for 127.0.0.1 and localhost, HTTP/2 or HTTP/1.1, every request answered
/// with JSON by the handler. Stops when dropped.
pub struct HttpsServer {
    /// `https://127.0.0.1:<port>`.
    pub url: String,
    /// The authority that signed its certificate (PEM).
    pub ca_pem: String,
    task: tokio::task::JoinHandle<()>,
}

impl HttpsServer {
    /// Starts a server on an ephemeral loopback port.
    pub async fn start(
        handler: impl Fn(Received) -> (StatusCode, serde_json::Value) + Send + Sync + 'static,
    ) -> Self {
        Self::start_async(move |received| {
            let answer = handler(received);
            Box::pin(async move { answer })
        })
        .await
    }

    /// Starts a server whose handler answers asynchronously (it may wait).
    pub async fn start_async(handler: impl Fn(Received) -> Answer + Send + Sync + 'static) -> Self {
        Self::start_at("127.0.0.1".parse().expect("an address"), &[], move |r| {
            handler(r)
        })
        .await
    }

    /// Starts a server on an ephemeral port of `ip` whose certificate also names `names`
    /// (a Service's `<name>.<namespace>.svc`, say).
    pub async fn start_at(
        ip: std::net::IpAddr,
        names: &[&str],
        handler: impl Fn(Received) -> Answer + Send + Sync + 'static,
    ) -> Self {
        use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
        let ca_key = KeyPair::generate().expect("a key");
        let mut ca = CertificateParams::default();
        ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        ca.distinguished_name
            .push(DnType::CommonName, "test-https-ca");
        let ca_pem = ca.self_signed(&ca_key).expect("a CA").pem();
        let issuer = Issuer::new(ca, ca_key);
        let key = KeyPair::generate().expect("a key");
        let mut san = vec![
            "127.0.0.1".to_string(),
            "localhost".to_string(),
            ip.to_string(),
        ];
        san.extend(names.iter().map(|n| n.to_string()));
        san.dedup();
        let leaf = CertificateParams::new(san)
            .expect("names")
            .signed_by(&key, &issuer)
            .expect("a certificate");
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_no_client_auth()
            .with_single_cert(
                vec![leaf.der().clone()],
                rustls_pki_types::PrivateKeyDer::from_pem_slice(key.serialize_pem().as_bytes())
                    .expect("a key"),
            )
            .expect("a server configuration");
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind((ip, 0))
            .await
            .expect("a port");
        let url = format!("https://{}", listener.local_addr().expect("an address"));
        let handler: Arc<Handler> = Arc::new(handler);
        let task = tokio::spawn(async move {
            while let Ok((tcp, _)) = listener.accept().await {
                let acceptor = acceptor.clone();
                let handler = handler.clone();
                tokio::spawn(async move {
                    let Ok(tls) = acceptor.accept(tcp).await else {
                        return;
                    };
                    let service =
                        hyper::service::service_fn(move |req: Request<hyper::body::Incoming>| {
                            let handler = handler.clone();
                            async move {
                                let (parts, body) = req.into_parts();
                                let body = body
                                    .collect()
                                    .await
                                    .map(|b| b.to_bytes())
                                    .unwrap_or_default();
                                let (status, answer) = handler(Received {
                                    method: parts.method,
                                    path: parts
                                        .uri
                                        .path_and_query()
                                        .map(|p| p.to_string())
                                        .unwrap_or_default(),
                                    headers: parts.headers,
                                    body,
                                })
                                .await;
                                let resp = hyper::Response::builder()
                                    .status(status)
                                    .header("content-type", "application/json")
                                    .body(Full::new(Bytes::from(answer.to_string())))
                                    .expect("a response");
                                Ok::<_, std::convert::Infallible>(resp)
                            }
                        });
                    let _ = hyper_util::server::conn::auto::Builder::new(
                        hyper_util::rt::TokioExecutor::new(),
                    )
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
                });
            }
        });
        Self { url, ca_pem, task }
    }
}

impl Drop for HttpsServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// An authority and its client certificates (for `--client-ca-file` tests).
pub struct TestCa {
    /// The authority's certificate.
    pub pem: String,
    issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
}

impl TestCa {
    /// A new self-signed authority named `name`.
    pub fn new(name: &str) -> Self {
        use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::default();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let cert = params.self_signed(&key).unwrap();
        Self {
            pem: cert.pem(),
            issuer: rcgen::Issuer::new(params, key),
        }
    }

    /// A client certificate and key (PEM) for `cn` in up to two organizations.
    pub fn client(&self, cn: &str, orgs: &[&str]) -> (String, String) {
        use rcgen::{CertificateParams, DnType, ExtendedKeyUsagePurpose, KeyPair};
        let key = KeyPair::generate().unwrap();
        let mut params = CertificateParams::default();
        params.distinguished_name.push(DnType::CommonName, cn);
        // rcgen keeps one value per attribute type: a second O goes in under O's OID.
        let types = [
            DnType::OrganizationName,
            DnType::CustomDnType(vec![2, 5, 4, 10]),
        ];
        for (ty, o) in types.into_iter().zip(orgs) {
            params.distinguished_name.push(ty, *o);
        }
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        (cert.pem(), key.serialize_pem())
    }

    /// A certificate of `params` with a new key, signed by the authority (PEM, key PEM).
    pub fn sign(&self, params: rcgen::CertificateParams) -> (String, String) {
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        (cert.pem(), key.serialize_pem())
    }
}

/// Writes, in `dir`, a kubeconfig for the server at `url` (trusting `ca_pem`) whose user is
/// the client certificate `cert` with `key`; its path.
pub fn certificate_kubeconfig(
    dir: &Path,
    name: &str,
    url: &str,
    ca_pem: &str,
    (cert, key): &(String, String),
) -> std::path::PathBuf {
    let file = |suffix: &str, contents: &str| {
        let path = dir.join(format!("{name}.{suffix}"));
        std::fs::write(&path, contents).unwrap();
        path.display().to_string()
    };
    let config = serde_json::json!({
        "apiVersion": "v1", "kind": "Config", "current-context": "c",
        "clusters": [{"name": "c", "cluster": {
            "server": url, "certificate-authority": file("server-ca.crt", ca_pem)}}],
        "users": [{"name": "u", "user": {
            "client-certificate": file("crt", cert), "client-key": file("key", key)}}],
        "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
    });
    let path = dir.join(format!("{name}.kubeconfig"));
    std::fs::write(&path, config.to_string()).unwrap();
    path
}
