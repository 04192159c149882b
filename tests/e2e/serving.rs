//! HTTPS serving: ALPN, HTTP/2, and certificates given as files.

use std::sync::Arc;

use bytes::Bytes;
use capstan_e2e::{RawClient, tls_config};
use capstan_testing::TestServer;
use http_body_util::{BodyExt, Empty, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls_pki_types::ServerName;
use rustls_pki_types::pem::PemObject;

use crate::SC;

#[tokio::test]
async fn http2_is_negotiated_by_alpn() {
    let server = TestServer::start().await;
    let addr = server.url().trim_start_matches("https://").to_string();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(tls_config(
        server.ca_pem(),
        &[b"h2", b"http/1.1"],
    )));
    let tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let tls = connector
        .connect(ServerName::try_from("127.0.0.1").unwrap(), tcp)
        .await
        .unwrap();
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let (mut send, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tls))
            .await
            .unwrap();
    tokio::spawn(conn);
    // Several streams on one connection.
    for _ in 0..3 {
        let req = http::Request::get(format!("https://{addr}{SC}"))
            .header("authorization", format!("Bearer {}", server.token()))
            .body(Empty::<Bytes>::new())
            .unwrap();
        let resp = send.send_request(req).await.unwrap();
        assert_eq!(resp.version(), http::Version::HTTP_2);
        assert_eq!(resp.status(), 200);
        let body = resp.into_body().collect().await.unwrap().to_bytes();
        let list: serde_json::Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(list["kind"], "StorageClassList");
    }
}

#[tokio::test]
async fn certificate_files_are_served() {
    // The first server generates a pair; the second is given it as files.
    let first = TestServer::start().await;
    let pki = first.data_dir().join("pki");
    let (cert, key) = (pki.join("apiserver.crt"), pki.join("apiserver.key"));
    assert!(
        cert.exists() && key.exists(),
        "the generated pair is kept in --cert-dir"
    );
    let second = TestServer::start_with(move |c| {
        c.tls_cert_file = Some(cert);
        c.tls_private_key_file = Some(key);
    })
    .await;
    assert_eq!(second.ca_pem(), first.ca_pem());
    let client = RawClient::new(&second.url(), first.ca_pem(), Some(second.token()));
    assert_eq!(client.get(SC).await.status, 200);
    assert!(
        !second.data_dir().join("pki").exists(),
        "nothing is generated when files are given"
    );
}

#[tokio::test]
async fn hsts_and_cors_headers_as_configured() {
    let server = TestServer::start_with(|config| {
        config.hsts_directives = vec![
            "max-age=31536000".into(),
            "includeSubDomains".into(),
            "preload".into(),
        ];
        config.cors_allowed_origins = vec![r"^https://dash\.example\.com$".into()];
    })
    .await;
    let authed = crate::admin(&server);
    let anonymous = RawClient::new(&server.url(), server.ca_pem(), None);
    let res = authed.get("/api").await;
    assert_eq!(
        res.headers["strict-transport-security"],
        "max-age=31536000; includeSubDomains; preload"
    );
    // Errors carry it too.
    let res = authed
        .get("/api/v1/namespaces/default/configmaps/missing")
        .await;
    assert_eq!(res.status.as_u16(), 404);
    assert!(res.headers.contains_key("strict-transport-security"));

    // A preflight from an allowed origin is answered before authentication.
    let origin = [
        ("origin", "https://dash.example.com"),
        ("access-control-request-method", "GET"),
    ];
    let res = anonymous
        .request(
            http::Method::OPTIONS,
            "/api/v1/namespaces",
            &origin,
            Vec::new(),
        )
        .await;
    assert_eq!(res.status.as_u16(), 204);
    assert_eq!(
        res.headers["access-control-allow-origin"],
        "https://dash.example.com"
    );
    assert_eq!(res.headers["access-control-allow-credentials"], "true");
    assert!(
        res.headers["access-control-allow-methods"]
            .to_str()
            .unwrap()
            .contains("PATCH")
    );
    // A real request from it gets the headers on its answer.
    let res = authed
        .request(
            http::Method::GET,
            "/api/v1/namespaces",
            &origin[..1],
            Vec::new(),
        )
        .await;
    assert_eq!(res.status.as_u16(), 200);
    assert_eq!(
        res.headers["access-control-allow-origin"],
        "https://dash.example.com"
    );
    // Another origin gets nothing (and its preflight is an ordinary, unauthenticated request).
    let other = [("origin", "https://evil.example.com")];
    let res = authed
        .request(http::Method::GET, "/api/v1/namespaces", &other, Vec::new())
        .await;
    assert!(!res.headers.contains_key("access-control-allow-origin"));
}

/// The samples of a `/metrics` page, read by an independent Prometheus text parser.
fn scrape(body: &[u8]) -> Vec<prometheus_parse::Sample> {
    let text = String::from_utf8_lossy(body).into_owned();
    let lines = text.lines().map(|l| Ok(l.to_string()));
    prometheus_parse::Scrape::parse(lines)
        .expect("the metrics page parses")
        .samples
}

fn value(sample: &prometheus_parse::Sample) -> f64 {
    match &sample.value {
        prometheus_parse::Value::Counter(v)
        | prometheus_parse::Value::Gauge(v)
        | prometheus_parse::Value::Untyped(v) => *v,
        _ => f64::NAN,
    }
}

#[tokio::test]
async fn metrics_count_the_requests_made() {
    let server = TestServer::start().await;
    let c = crate::admin(&server);
    let path = "/api/v1/namespaces/default/configmaps";
    for i in 0..3 {
        let res = c
            .send_json(
                http::Method::POST,
                path,
                &serde_json::json!({"metadata": {"name": format!("m{i}")}}),
            )
            .await;
        assert_eq!(res.status.as_u16(), 201);
    }
    assert_eq!(c.get(&format!("{path}/m0")).await.status.as_u16(), 200);
    assert_eq!(c.get(&format!("{path}/nope")).await.status.as_u16(), 404);
    assert_eq!(c.get(path).await.status.as_u16(), 200);

    let res = c.get("/metrics").await;
    assert_eq!(res.status.as_u16(), 200);
    let samples = scrape(&res.body);
    let count = |verb: &str, scope: &str, code: &str| -> f64 {
        samples
            .iter()
            .filter(|s| s.metric == "apiserver_request_total")
            .filter(|s| {
                s.labels.get("verb") == Some(verb)
                    && s.labels.get("resource") == Some("configmaps")
                    && s.labels.get("scope") == Some(scope)
                    && s.labels.get("code") == Some(code)
                    && s.labels.get("version") == Some("v1")
                    && s.labels.get("component") == Some("apiserver")
            })
            .map(value)
            .sum()
    };
    assert_eq!(count("POST", "namespace", "201"), 3.0);
    assert_eq!(count("GET", "resource", "200"), 1.0);
    assert_eq!(count("GET", "resource", "404"), 1.0);
    assert_eq!(count("LIST", "namespace", "200"), 1.0);
    let observed: f64 = samples
        .iter()
        .filter(|s| s.metric == "apiserver_request_duration_seconds_count")
        .filter(|s| {
            s.labels.get("verb") == Some("POST") && s.labels.get("resource") == Some("configmaps")
        })
        .map(value)
        .sum();
    assert_eq!(observed, 3.0);
    let rss = samples
        .iter()
        .find(|s| s.metric == "process_resident_memory_bytes")
        .map(value)
        .expect("process metrics");
    assert!(rss > 1_000_000.0, "{rss}");
    assert!(
        samples
            .iter()
            .any(|s| s.metric == "apiserver_current_inflight_requests")
    );
}

#[tokio::test]
async fn two_instances_share_a_port_with_port_sharing() {
    // RBAC, so that anonymous requests are served (the public health checks).
    let first = TestServer::start_with(|config| {
        config.permit_port_sharing = true;
        config.authorization_modes = vec!["RBAC".into()];
    })
    .await;
    let port: u16 = first.url().rsplit(':').next().unwrap().parse().unwrap();
    // The second instance serves the first one's certificate, as replicas behind one
    // address would.
    let pki = first.data_dir().join("pki");
    let second = TestServer::start_with(move |config| {
        config.permit_port_sharing = true;
        config.authorization_modes = vec!["RBAC".into()];
        config.secure_port = port;
        config.cert_dir = pki;
    })
    .await;
    assert_eq!(second.url(), first.url());
    assert_eq!(second.ca_pem(), first.ca_pem());
    // Both answer on the port (the kernel spreads connections between them), each ready
    // once its post-start hooks have run; anonymous requests, since each instance knows
    // only its own admin token.
    let anonymous = RawClient::new(&first.url(), first.ca_pem(), None);
    let mut in_a_row = 0;
    for _ in 0..300 {
        if anonymous.get("/readyz").await.status.as_u16() == 200 {
            in_a_row += 1;
            if in_a_row == 8 {
                break;
            }
        } else {
            in_a_row = 0;
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }
    assert_eq!(in_a_row, 8, "both instances ready");
    // Without the option the port is taken.
    let taken = tokio::spawn(async move {
        TestServer::start_with(move |config| config.secure_port = port).await
    })
    .await;
    assert!(
        taken.is_err(),
        "a third instance without port sharing must not bind"
    );
    // With the first gone, the second alone still serves the port.
    first.stop().await;
    assert_eq!(anonymous.get("/readyz").await.status.as_u16(), 200);
    drop(second);
}

/// An HTTP/2 connection to `server` over TLS (ALPN offering h2 only), driven by a spawned
/// task; with the address it dialed.
async fn http2_connection(
    server: &TestServer,
) -> (
    hyper::client::conn::http2::SendRequest<Full<Bytes>>,
    String,
    tokio::task::JoinHandle<hyper::Result<()>>,
) {
    let addr = server.url().trim_start_matches("https://").to_string();
    let connector =
        tokio_rustls::TlsConnector::from(Arc::new(tls_config(server.ca_pem(), &[b"h2"])));
    let tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let tls = connector
        .connect(ServerName::try_from("127.0.0.1").unwrap(), tcp)
        .await
        .unwrap();
    let (send, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tls))
            .await
            .unwrap();
    (send, addr, tokio::spawn(conn))
}

#[tokio::test]
async fn goaway_closes_http2_connections_gracefully() {
    // Every request (chance 1; the command line allows at most 0.02) closes its connection.
    let server = TestServer::start_with(|config| config.goaway_chance = 1.0).await;
    let (mut send, addr, connection) = http2_connection(&server).await;
    let request = || {
        http::Request::get(format!("https://{addr}/api"))
            .header("authorization", format!("Bearer {}", server.token()))
            .body(Full::new(Bytes::new()))
            .unwrap()
    };
    // The first request is answered in full...
    let resp = send.send_request(request()).await.unwrap();
    assert_eq!(resp.status(), 200);
    let body = resp.into_body().collect().await.unwrap().to_bytes();
    assert!(!body.is_empty());
    // ... then the server says GOAWAY and the connection ends cleanly.
    tokio::time::timeout(std::time::Duration::from_secs(5), connection)
        .await
        .expect("the connection ends")
        .unwrap()
        .expect("without a protocol error");
    assert!(send.send_request(request()).await.is_err());
}

/// Many watches and the requests beside them on one HTTP/2 connection: the server holds a
/// connection's output back for a turn while several responses are in flight (to write the
/// frames of one event to all its watchers at once); every event still reaches every watch,
/// and each create on the same connection is answered.
#[tokio::test]
async fn watches_sharing_an_http2_connection_each_get_every_event() {
    const WATCHES: usize = 40;
    const EVENTS: usize = 25;
    let server = TestServer::start().await;
    let (send, addr, _connection) = http2_connection(&server).await;
    let request = |method: http::Method, path: String, body: Option<serde_json::Value>| {
        let body = body.map_or_else(Bytes::new, |b| Bytes::from(serde_json::to_vec(&b).unwrap()));
        http::Request::builder()
            .method(method)
            .uri(format!("https://{addr}{path}"))
            .header("authorization", format!("Bearer {}", server.token()))
            .header("content-type", "application/json")
            .body(Full::new(body))
            .unwrap()
    };
    let mut watches = Vec::new();
    for _ in 0..WATCHES {
        let mut send = send.clone();
        let path = format!("{SC}?watch=1&labelSelector=shared%3Dh2&timeoutSeconds=60");
        let resp = send
            .send_request(request(http::Method::GET, path, None))
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
        watches.push(tokio::spawn(async move {
            let mut body = resp.into_body();
            let mut names = Vec::new();
            let mut buf = Vec::new();
            while names.len() < EVENTS {
                let Some(frame) = body.frame().await else {
                    break;
                };
                buf.extend_from_slice(&frame.unwrap().into_data().unwrap_or_default());
                while let Some(end) = buf.iter().position(|&b| b == b'\n') {
                    let line: Vec<u8> = buf.drain(..=end).collect();
                    let event: serde_json::Value = serde_json::from_slice(&line).unwrap();
                    assert_eq!(event["type"], "ADDED");
                    names.push(
                        event["object"]["metadata"]["name"]
                            .as_str()
                            .unwrap()
                            .to_owned(),
                    );
                }
            }
            names
        }));
    }
    let mut expected = Vec::new();
    for i in 0..EVENTS {
        let name = format!("shared-h2-{i:02}");
        let object = serde_json::json!({
            "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": name, "labels": {"shared": "h2"}},
            "provisioner": "example.com/shared",
        });
        let mut send = send.clone();
        let resp = tokio::time::timeout(
            std::time::Duration::from_secs(10),
            send.send_request(request(http::Method::POST, SC.to_string(), Some(object))),
        )
        .await
        .expect("a create beside the watches is answered")
        .unwrap();
        assert_eq!(resp.status(), 201);
        expected.push(name);
    }
    for watch in watches {
        let names = tokio::time::timeout(std::time::Duration::from_secs(20), watch)
            .await
            .expect("every event reaches the watch")
            .unwrap();
        assert_eq!(names, expected);
    }
}

/// Whether a TLS handshake with `server` succeeds for a client limited to `version` and (if
/// given) one suite.
async fn handshake(
    server: &TestServer,
    version: &'static rustls::SupportedProtocolVersion,
    suite: Option<rustls::CipherSuite>,
) -> bool {
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_pki_types::CertificateDer::pem_slice_iter(server.ca_pem().as_bytes()) {
        roots.add(cert.unwrap()).unwrap();
    }
    let mut provider = rustls::crypto::ring::default_provider();
    if let Some(suite) = suite {
        provider.cipher_suites.retain(|s| s.suite() == suite);
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(&[version])
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    let addr = server.url().trim_start_matches("https://").to_string();
    let tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
    tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("127.0.0.1").unwrap(), tcp)
        .await
        .is_ok()
}

#[tokio::test]
async fn tls_versions_and_cipher_suites_as_configured() {
    use rustls::CipherSuite as C;
    use rustls::version::{TLS12, TLS13};
    let suites = TestServer::start_with(|config| {
        config.tls.cipher_suites = vec!["TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384".into()];
    })
    .await;
    assert!(
        handshake(
            &suites,
            &TLS12,
            Some(C::TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384)
        )
        .await
    );
    assert!(
        !handshake(
            &suites,
            &TLS12,
            Some(C::TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256)
        )
        .await,
        "a suite not allowed fails the handshake"
    );
    assert!(
        handshake(&suites, &TLS13, None).await,
        "TLS 1.3 suites stay on"
    );

    let modern = TestServer::start_with(|config| {
        config.tls.min_version = Some("VersionTLS13".into());
    })
    .await;
    assert!(handshake(&modern, &TLS13, None).await);
    assert!(
        !handshake(&modern, &TLS12, None).await,
        "TLS 1.2 is refused"
    );
}

/// A test CA and certificates it signs for `names`, written to `dir/<file>.{crt,key}`.
struct TestCa {
    issuer: rcgen::Issuer<'static, rcgen::KeyPair>,
    pem: String,
}

impl TestCa {
    fn new() -> Self {
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        Self {
            pem: cert.pem(),
            issuer: rcgen::Issuer::new(params, key),
        }
    }

    /// Writes a pair for `names`; returns the certificate's DER.
    fn pair(&self, dir: &std::path::Path, file: &str, names: &[&str]) -> Vec<u8> {
        let params =
            rcgen::CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>())
                .unwrap();
        let key = rcgen::KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        std::fs::write(dir.join(format!("{file}.crt")), cert.pem()).unwrap();
        std::fs::write(dir.join(format!("{file}.key")), key.serialize_pem()).unwrap();
        cert.der().to_vec()
    }
}

/// The certificate the server presents for `name` (a DNS name sent by SNI, or an IP: none).
async fn served(server: &TestServer, cas: &[&str], name: &str) -> Option<Vec<u8>> {
    let mut roots = rustls::RootCertStore::empty();
    for ca in cas {
        for cert in rustls_pki_types::CertificateDer::pem_slice_iter(ca.as_bytes()) {
            roots.add(cert.unwrap()).unwrap();
        }
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .with_root_certificates(roots)
    .with_no_client_auth();
    let addr = server.url().trim_start_matches("https://").to_string();
    let tcp = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from(name.to_string()).unwrap(), tcp)
        .await
        .ok()?;
    Some(tls.get_ref().1.peer_certificates()?[0].to_vec())
}

#[tokio::test]
async fn sni_picks_certificates_by_name_and_reloads_them() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new();
    let alpha = ca.pair(dir.path(), "alpha", &["alpha.example.com"]);
    let beta = ca.pair(dir.path(), "beta", &["*.beta.example.com"]);
    let gamma = ca.pair(dir.path(), "gamma", &["alpha.example.com"]);
    let d = dir.path().to_path_buf();
    let server = TestServer::start_with(move |config| {
        let pair = |f: &str, names: &[&str]| capstan_serving::sni::SniCertKey {
            cert_file: d.join(format!("{f}.crt")),
            key_file: d.join(format!("{f}.key")),
            names: names.iter().map(|n| n.to_string()).collect(),
        };
        config.tls_sni_cert_key = vec![
            pair("alpha", &[]),
            pair("beta", &["*.beta.example.com"]),
            pair("gamma", &["alpha.example.com"]),
        ];
    })
    .await;
    let cas = [ca.pem.as_str(), server.ca_pem()];
    // Explicit names beat the names in a certificate (gamma over alpha, though alpha came
    // first); wildcards cover one label.
    assert_eq!(
        served(&server, &cas, "alpha.example.com").await,
        Some(gamma)
    );
    assert_eq!(
        served(&server, &cas, "x.beta.example.com").await,
        Some(beta)
    );
    assert!(
        served(&server, &cas, "y.x.beta.example.com")
            .await
            .is_none(),
        "one label only: the default does not cover it"
    );
    // No SNI (an IP): the default serving certificate.
    let default = served(&server, &cas, "127.0.0.1")
        .await
        .expect("the default certificate");
    assert_ne!(default, alpha);
    // New files are served without a restart.
    let beta2 = ca.pair(dir.path(), "beta", &["*.beta.example.com"]);
    let reloaded = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        loop {
            if served(&server, &cas, "x.beta.example.com").await.as_ref() == Some(&beta2) {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        }
    })
    .await;
    assert!(reloaded.is_ok(), "the changed pair is served");
}

#[tokio::test]
async fn discovery_advertises_the_configured_address() {
    let by_name = TestServer::start_with(|config| {
        config.external_hostname = Some("api.example.com".into());
        config.advertise_address = Some("10.0.0.5".parse().unwrap());
    })
    .await;
    let port = by_name.url().rsplit(':').next().unwrap().to_string();
    let api = crate::admin(&by_name).get("/api").await.json();
    assert_eq!(
        api["serverAddressByClientCIDRs"][0]["serverAddress"],
        format!("api.example.com:{port}")
    );
    let by_address = TestServer::start_with(|config| {
        config.advertise_address = Some("10.0.0.5".parse().unwrap());
    })
    .await;
    let port = by_address.url().rsplit(':').next().unwrap().to_string();
    let api = crate::admin(&by_address).get("/api").await.json();
    assert_eq!(
        api["serverAddressByClientCIDRs"][0]["serverAddress"],
        format!("10.0.0.5:{port}")
    );
}

#[tokio::test]
async fn metrics_can_be_disabled_and_labels_bounded() {
    let server = TestServer::start_with(|config| {
        config.metrics = capstan_server::MetricsOptions {
            disabled: vec![
                "process_open_fds".into(),
                "apiserver_request_duration_seconds".into(),
            ],
            allowed_labels: vec![(
                ("apiserver_request_total".into(), "verb".into()),
                vec!["GET".into(), "LIST".into()],
            )],
        };
    })
    .await;
    let c = crate::admin(&server);
    let res = c
        .send_json(
            http::Method::POST,
            "/api/v1/namespaces/default/configmaps",
            &serde_json::json!({"metadata": {"name": "x"}}),
        )
        .await;
    assert_eq!(res.status.as_u16(), 201);
    let samples = scrape(&c.get("/metrics").await.body);
    assert!(!samples.iter().any(|s| s.metric == "process_open_fds"));
    assert!(
        !samples
            .iter()
            .any(|s| s.metric.starts_with("apiserver_request_duration_seconds"))
    );
    assert!(
        samples
            .iter()
            .any(|s| s.metric == "process_resident_memory_bytes")
    );
    let verbs: Vec<&str> = samples
        .iter()
        .filter(|s| {
            s.metric == "apiserver_request_total" && s.labels.get("resource") == Some("configmaps")
        })
        .filter_map(|s| s.labels.get("verb"))
        .collect();
    assert_eq!(verbs, ["unexpected"], "POST is outside the allow-list");
}

#[tokio::test]
async fn ip_patterns_match_the_address_a_client_reached() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new();
    let given = ca.pair(dir.path(), "given", &["ip.example.com"]);
    let extracted = ca.pair(dir.path(), "extracted", &["127.0.0.1"]);
    let start = |file: &'static str, names: &'static [&'static str]| {
        let d = dir.path().to_path_buf();
        TestServer::start_with(move |config| {
            config.tls_sni_cert_key = vec![capstan_serving::sni::SniCertKey {
                cert_file: d.join(format!("{file}.crt")),
                key_file: d.join(format!("{file}.key")),
                names: names.iter().map(|n| n.to_string()).collect(),
            }];
        })
    };
    // An explicit IP pattern: a client connecting to 127.0.0.1 sends no name and gets it.
    let server = start("given", &["127.0.0.1"]).await;
    let cas = [ca.pem.as_str(), server.ca_pem()];
    let presented = served_raw(&server, "127.0.0.1").await;
    assert_eq!(presented, given);
    // An IP address taken from the certificate's names works the same way.
    let server = start("extracted", &[]).await;
    assert_eq!(served_raw(&server, "127.0.0.1").await, extracted);
    // A client sending a name nothing covers still gets the default certificate.
    assert!(
        served(&server, &cas, "other.example.com").await.is_none(),
        "the default certificate does not name other.example.com"
    );
}

/// The certificate presented to a client that connects to `ip` (no SNI), whatever it is.
async fn served_raw(server: &TestServer, ip: &str) -> Vec<u8> {
    #[derive(Debug)]
    struct AnyCertificate;
    impl rustls::client::danger::ServerCertVerifier for AnyCertificate {
        fn verify_server_cert(
            &self,
            _: &rustls_pki_types::CertificateDer<'_>,
            _: &[rustls_pki_types::CertificateDer<'_>],
            _: &ServerName<'_>,
            _: &[u8],
            _: rustls_pki_types::UnixTime,
        ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
            Ok(rustls::client::danger::ServerCertVerified::assertion())
        }
        fn verify_tls12_signature(
            &self,
            _: &[u8],
            _: &rustls_pki_types::CertificateDer<'_>,
            _: &rustls::DigitallySignedStruct,
        ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
            Ok(rustls::client::danger::HandshakeSignatureValid::assertion())
        }
        fn verify_tls13_signature(
            &self,
            _: &[u8],
            _: &rustls_pki_types::CertificateDer<'_>,
            _: &rustls::DigitallySignedStruct,
        ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
            Ok(rustls::client::danger::HandshakeSignatureValid::assertion())
        }
        fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
            rustls::crypto::ring::default_provider()
                .signature_verification_algorithms
                .supported_schemes()
        }
    }
    let config = rustls::ClientConfig::builder_with_provider(Arc::new(
        rustls::crypto::ring::default_provider(),
    ))
    .with_safe_default_protocol_versions()
    .unwrap()
    .dangerous()
    .with_custom_certificate_verifier(Arc::new(AnyCertificate))
    .with_no_client_auth();
    let port = server.url().rsplit(':').next().unwrap().to_string();
    let tcp = tokio::net::TcpStream::connect(format!("{ip}:{port}"))
        .await
        .unwrap();
    let tls = tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from(ip.to_string()).unwrap(), tcp)
        .await
        .unwrap();
    tls.get_ref().1.peer_certificates().unwrap()[0].to_vec()
}

/// Write requests are announced to the embedded store as they arrive, and each notice is
/// withdrawn when its write is handed over (or when the request ends without one): with a
/// commit delay of two minutes, writes one after another, writes side by side, a refused
/// write, a delete and a POST that stores nothing are all answered at once.
#[tokio::test]
async fn announced_writes_do_not_hold_the_commit_they_join() {
    let server = TestServer::start_with(|c| {
        c.storage_commit_delay = std::time::Duration::from_secs(120);
    })
    .await;
    let c = crate::admin(&server);
    let sc = |name: &str| serde_json::json!({"metadata": {"name": name}, "provisioner": "p"});
    let post = http::Method::POST;
    let soon = std::time::Duration::from_secs(60);
    tokio::time::timeout(soon, async {
        for i in 0..3 {
            let created = c
                .send_json(post.clone(), SC, &sc(&format!("one-{i}")))
                .await;
            assert_eq!(created.status, 201, "{}", created.message());
        }
        let side_by_side = (0..8).map(|i| {
            let c = c.clone();
            let body = sc(&format!("many-{i}"));
            async move { c.send_json(http::Method::POST, SC, &body).await }
        });
        for created in futures_util::future::join_all(side_by_side).await {
            assert_eq!(created.status, 201, "{}", created.message());
        }
        let refused = c.send_json(post.clone(), SC, &sc("one-0")).await;
        assert_eq!(refused.status, 409);
        let review = serde_json::json!({
            "apiVersion": "authorization.k8s.io/v1",
            "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {"verb": "get", "resource": "pods"}},
        });
        let reviewed = c
            .send_json(
                post.clone(),
                "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
                &review,
            )
            .await;
        assert_eq!(reviewed.status, 201, "{}", reviewed.message());
        let deleted = c
            .request(
                http::Method::DELETE,
                &format!("{SC}/one-1"),
                &[],
                Vec::new(),
            )
            .await;
        assert_eq!(deleted.status, 200, "{}", deleted.message());
        let last = c.send_json(post.clone(), SC, &sc("last")).await;
        assert_eq!(last.status, 201, "{}", last.message());
    })
    .await
    .expect("no write waited for the commit delay");
}
