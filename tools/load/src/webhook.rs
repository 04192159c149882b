//! `--validating-webhook`: a local HTTPS admission webhook that allows everything, registered
//! for StorageClass creates and updates, so that the operations measure what a webhook adds.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use base64::Engine;
use bytes::Bytes;
use http::{Method, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls_pki_types::pem::PemObject;

use crate::{SC, Target};

const CONFIGURATIONS: &str =
    "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";

/// A running webhook and its configuration.
pub(crate) struct Webhook {
    /// Reviews answered.
    pub calls: Arc<AtomicU64>,
    configuration: String,
    task: tokio::task::JoinHandle<()>,
}

/// How a webhook answers a review.
pub(crate) type Answer = fn(&serde_json::Value) -> serde_json::Value;

/// The validating webhook's answer: allowed.
fn allow(review: &serde_json::Value) -> serde_json::Value {
    serde_json::json!({
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {"uid": review["request"]["uid"], "allowed": true},
    })
}

/// Starts a webhook answering with `answer` on a loopback port, counting its calls in
/// `calls`; its URL (with `path`) and the CA (PEM) that signed it.
pub(crate) async fn serve(
    calls: Arc<AtomicU64>,
    path: &str,
    answer: Answer,
) -> Result<(String, String, tokio::task::JoinHandle<()>), String> {
    use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().map_err(|e| e.to_string())?;
    let mut ca = CertificateParams::default();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "capstan-load webhook CA");
    let ca_pem = ca.self_signed(&ca_key).map_err(|e| e.to_string())?.pem();
    let issuer = Issuer::new(ca, ca_key);
    let key = KeyPair::generate().map_err(|e| e.to_string())?;
    let leaf = CertificateParams::new(vec!["127.0.0.1".into()])
        .map_err(|e| e.to_string())?
        .signed_by(&key, &issuer)
        .map_err(|e| e.to_string())?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut tls = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(
            vec![leaf.der().clone()],
            rustls_pki_types::PrivateKeyDer::from_pem_slice(key.serialize_pem().as_bytes())
                .map_err(|e| e.to_string())?,
        )
        .map_err(|e| e.to_string())?;
    tls.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(tls));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .map_err(|e| e.to_string())?;
    let url = format!(
        "https://{}{path}",
        listener.local_addr().map_err(|e| e.to_string())?
    );
    let task = tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let _ = tcp.set_nodelay(true);
            let acceptor = acceptor.clone();
            let calls = calls.clone();
            tokio::spawn(async move {
                let Ok(stream) = acceptor.accept(tcp).await else {
                    return;
                };
                let service =
                    hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                        let calls = calls.clone();
                        async move {
                            let body = req
                                .into_body()
                                .collect()
                                .await
                                .map(|b| b.to_bytes())
                                .unwrap_or_default();
                            let review: serde_json::Value =
                                serde_json::from_slice(&body).unwrap_or_default();
                            calls.fetch_add(1, Ordering::Relaxed);
                            let answer = answer(&review);
                            Ok::<_, std::convert::Infallible>(
                                http::Response::builder()
                                    .status(StatusCode::OK)
                                    .header("content-type", "application/json")
                                    .body(Full::new(Bytes::from(answer.to_string())))
                                    .expect("a response"),
                            )
                        }
                    });
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(stream), service)
                    .await;
            });
        }
    });
    Ok((url, ca_pem, task))
}

/// Starts the webhook, registers it, and waits until the server calls it.
pub(crate) async fn install(target: &Target, run: &str) -> Result<Webhook, String> {
    let calls = Arc::new(AtomicU64::new(0));
    let (url, ca_pem, task) = serve(calls.clone(), "/validate", allow).await?;
    let configuration = format!("capstan-load-{run}");
    let body = serde_json::json!({
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingWebhookConfiguration",
        "metadata": {"name": configuration},
        "webhooks": [{
            "name": "allow.capstan-load.test",
            "clientConfig": {
                "url": url,
                "caBundle": base64::engine::general_purpose::STANDARD.encode(ca_pem),
            },
            "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["storage.k8s.io"], "apiVersions": ["v1"], "resources": ["storageclasses"]}],
            "sideEffects": "None",
            "admissionReviewVersions": ["v1"],
        }],
    });
    let mut conn = target.connect().await?;
    let (status, answer) = conn
        .send(target.request(
            Method::POST,
            CONFIGURATIONS,
            Some(body.to_string().into_bytes()),
        ))
        .await?;
    if status != StatusCode::CREATED {
        return Err(format!(
            "registering the webhook: {status} {}",
            String::from_utf8_lossy(&answer)
        ));
    }
    // The server follows configurations asynchronously: probe with dry runs.
    let probe = crate::object(run, &format!("probe-{run}"), 0);
    let deadline = Instant::now() + Duration::from_secs(10);
    while calls.load(Ordering::Relaxed) == 0 {
        if Instant::now() > deadline {
            return Err("the server never called the webhook".into());
        }
        let req = target.request(
            Method::POST,
            &format!("{SC}?dryRun=All"),
            Some(probe.clone()),
        );
        conn.send(req).await?;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(Webhook {
        calls,
        configuration,
        task,
    })
}

impl Webhook {
    /// Unregisters and stops the webhook.
    pub(crate) async fn remove(self, target: &Target) {
        let path = format!("{CONFIGURATIONS}/{}", self.configuration);
        match target.connect().await {
            Ok(mut conn) => {
                if let Err(e) = conn.send(target.request(Method::DELETE, &path, None)).await {
                    eprintln!("capstan-load: removing the webhook: {e}");
                }
            }
            Err(e) => eprintln!("capstan-load: removing the webhook: {e}"),
        }
        self.task.abort();
    }
}
