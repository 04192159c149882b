//! One HTTP/2 connection over TLS to the API server, shared by every request (as client-go
//! multiplexes), made again when it breaks.

use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response};
use http_body_util::Full;
use hyper::body::Incoming;
use hyper::client::conn::http2::SendRequest;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio::sync::Mutex;

use crate::config::Config;
use crate::error::{Error, Result};

pub(crate) struct Transport {
    server: String,
    host: String,
    port: u16,
    tls: tokio_rustls::TlsConnector,
    connection: Mutex<Option<SendRequest<Full<Bytes>>>>,
}

impl Transport {
    pub(crate) fn new(config: &Config) -> Result<Self> {
        let authority = config
            .server
            .strip_prefix("https://")
            .ok_or_else(|| {
                Error::Config(format!(
                    "the server {:?} is not an https:// URL",
                    config.server
                ))
            })?
            .trim_end_matches('/');
        let (host, port) = match authority.rsplit_once(':') {
            Some((h, p)) if !h.ends_with(']') || authority.starts_with('[') => (
                h.trim_matches(['[', ']']).to_string(),
                p.parse()
                    .map_err(|_| Error::Config(format!("bad port in {:?}", config.server)))?,
            ),
            _ => (authority.trim_matches(['[', ']']).to_string(), 443),
        };
        Ok(Self {
            server: config.server.clone(),
            host,
            port,
            tls: tokio_rustls::TlsConnector::from(Arc::new(tls_config(config, &[b"h2"], false)?)),
            connection: Mutex::new(None),
        })
    }

    fn broken(&self, message: impl std::fmt::Display) -> Error {
        Error::Connection {
            server: self.server.clone(),
            message: message.to_string(),
        }
    }

    async fn connect(&self) -> Result<SendRequest<Full<Bytes>>> {
        let tcp = tokio::net::TcpStream::connect((self.host.as_str(), self.port))
            .await
            .map_err(|e| self.broken(e))?;
        let _ = tcp.set_nodelay(true);
        let name = ServerName::try_from(self.host.clone()).map_err(|e| self.broken(e))?;
        let tls = self
            .tls
            .connect(name, tcp)
            .await
            .map_err(|e| self.broken(format!("TLS: {e}")))?;
        if tls.get_ref().1.alpn_protocol() != Some(b"h2") {
            return Err(self.broken("the server does not offer HTTP/2"));
        }
        let (sender, connection) =
            hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tls))
                .await
                .map_err(|e| self.broken(e))?;
        tokio::spawn(async move {
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, "API server connection ended");
            }
        });
        Ok(sender)
    }

    /// Sends `request`, connecting first when there is no live connection; a request that
    /// fails on a connection that had broken is tried once more on a new one.
    pub(crate) async fn send(
        &self,
        request: impl Fn() -> Request<Full<Bytes>>,
    ) -> Result<Response<Incoming>> {
        let mut retried = false;
        loop {
            let mut sender = {
                let mut slot = self.connection.lock().await;
                match slot.as_ref() {
                    Some(s) if !s.is_closed() => s.clone(),
                    _ => {
                        let s = self.connect().await?;
                        *slot = Some(s.clone());
                        s
                    }
                }
            };
            let sent = match sender.ready().await {
                Ok(()) => sender.send_request(request()).await,
                Err(e) => Err(e),
            };
            match sent {
                Ok(response) => return Ok(response),
                Err(e) => {
                    *self.connection.lock().await = None;
                    if retried || !(e.is_closed() || e.is_canceled()) {
                        return Err(self.broken(e));
                    }
                    retried = true;
                }
            }
        }
    }
}

/// The TLS configuration of `config` (its authorities, or none verified when `insecure`;
/// its client certificate), offering `alpn`.
pub fn client_tls(config: &Config, alpn: &[&[u8]]) -> Result<rustls::ClientConfig> {
    tls_config(config, alpn, false)
}

/// [`client_tls`] for a server the API server calls (an extension API server): without a
/// CA, the host's root certificates are trusted, as upstream's aggregator does.
pub fn backend_tls(config: &Config, alpn: &[&[u8]]) -> Result<rustls::ClientConfig> {
    tls_config(config, alpn, true)
}

/// The TLS configuration of `config`, offering `alpn`; without a CA, `host_roots` trusts the
/// host's root certificates (for servers with public certificates), else it is an error.
pub(crate) fn tls_config(
    config: &Config,
    alpn: &[&[u8]],
    host_roots: bool,
) -> Result<rustls::ClientConfig> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Config(e.to_string()))?;
    let builder = if config.insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(AnyServer(provider)))
    } else {
        let mut roots = rustls::RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(config.ca_pem.as_deref().unwrap_or_default()) {
            let cert = cert.map_err(|e| Error::Config(format!("the CA is not PEM: {e}")))?;
            roots
                .add(cert)
                .map_err(|e| Error::Config(format!("the CA is unusable: {e}")))?;
        }
        if roots.is_empty() && host_roots {
            let found = rustls_native_certs::load_native_certs();
            for cert in found.certs {
                let _ = roots.add(cert);
            }
        }
        if roots.is_empty() {
            return Err(Error::Config(
                "no CA certificate to verify the server with (certificate-authority or insecure-skip-tls-verify)".into(),
            ));
        }
        builder.with_root_certificates(roots)
    };
    let mut tls = match &config.client_identity {
        Some((cert, key)) => {
            let chain = CertificateDer::pem_slice_iter(cert)
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(|e| Error::Config(format!("the client certificate is not PEM: {e}")))?;
            let key = PrivateKeyDer::from_pem_slice(key)
                .map_err(|e| Error::Config(format!("the client key is not PEM: {e}")))?;
            builder
                .with_client_auth_cert(chain, key)
                .map_err(|e| Error::Config(format!("the client certificate is unusable: {e}")))?
        }
        None => builder.with_no_client_auth(),
    };
    tls.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(tls)
}

/// `insecure-skip-tls-verify`: any certificate is accepted (signatures are still checked, so
/// the connection is encrypted to whoever holds the presented key).
#[derive(Debug)]
struct AnyServer(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AnyServer {
    fn verify_server_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: &ServerName<'_>,
        _: &[u8],
        _: rustls::pki_types::UnixTime,
    ) -> std::result::Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
