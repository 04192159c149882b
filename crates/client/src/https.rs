//! HTTPS calls to servers other than the API server: webhooks named by kubeconfig-format
//! files (token review, and later authorization, admission and audit) and OIDC issuers. The
//! server may speak HTTP/2 or HTTP/1.1 (ALPN decides); connections are pooled; the URL is
//! the whole address, path included, as a webhook kubeconfig's `server` is.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http::{Method, Request, StatusCode, Uri, header};
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls::pki_types::ServerName;
use tokio::net::TcpStream;

use crate::config::Config;
use crate::error::{Error, Result};
use crate::transport::tls_config;

/// A pooled HTTPS client with one identity (the kubeconfig user's certificate or token).
#[derive(Clone)]
pub struct HttpsClient {
    client: hyper_util::client::legacy::Client<Connector, Full<Bytes>>,
    token: Option<String>,
    user_agent: String,
    timeout: Duration,
}

impl HttpsClient {
    /// A client trusting `config`'s authorities (the host's root certificates when it names
    /// none), presenting its client certificate and bearer token; each call may take
    /// `timeout`.
    pub fn new(config: &Config, timeout: Duration) -> Result<Self> {
        let tls = tls_config(config, &[b"h2", b"http/1.1"], true)?;
        let connector = Connector {
            tls: tokio_rustls::TlsConnector::from(Arc::new(tls)),
        };
        Ok(Self {
            client: hyper_util::client::legacy::Client::builder(TokioExecutor::new())
                .pool_idle_timeout(Duration::from_secs(90))
                .build(connector),
            token: config.token.clone(),
            user_agent: config.user_agent.clone(),
            timeout,
        })
    }

    /// A client for a webhook the API server calls (admission, CRD conversion), from its
    /// `clientConfig`: the `url`, trusting the PEM `ca_bundle` (the host's roots without
    /// one), with the API server's user agent. A webhook named by a `service` reference
    /// (no `url`) cannot be called yet: the error says so.
    pub fn for_webhook(
        url: Option<&str>,
        ca_bundle: Option<&[u8]>,
        timeout: Duration,
    ) -> std::result::Result<Self, String> {
        let Some(url) = url else {
            return Err(
                "service references are not supported yet (Services' cluster IPs \
                 are not routed to from the API server here): use clientConfig.url"
                    .into(),
            );
        };
        let mut config = Config::new(url.to_string());
        config.ca_pem = ca_bundle.map(<[u8]>::to_vec);
        config.user_agent = format!("capstan-apiserver/{}", env!("CARGO_PKG_VERSION"));
        Self::new(&config, timeout).map_err(|e| e.to_string())
    }

    /// Sends `body` to `url` (an `https://` URL); the status and the body of the answer.
    pub async fn request(
        &self,
        method: Method,
        url: &str,
        content_type: Option<&str>,
        body: Bytes,
    ) -> Result<(StatusCode, Bytes)> {
        let broken = |message: String| Error::Connection {
            server: url.to_string(),
            message,
        };
        let uri: Uri = url
            .parse()
            .map_err(|e| Error::Config(format!("{url:?} is not a URL: {e}")))?;
        if uri.scheme_str() != Some("https") {
            return Err(Error::Config(format!("{url:?} is not an https:// URL")));
        }
        let mut req = Request::builder()
            .method(method)
            .uri(uri)
            .header(header::ACCEPT, "application/json")
            .header(header::USER_AGENT, &self.user_agent);
        if let Some(token) = &self.token {
            req = req.header(header::AUTHORIZATION, format!("Bearer {token}"));
        }
        if let Some(ct) = content_type {
            req = req.header(header::CONTENT_TYPE, ct);
        }
        let req = req
            .body(Full::new(body))
            .map_err(|e| Error::Config(e.to_string()))?;
        let exchange = async {
            let resp = self
                .client
                .request(req)
                .await
                .map_err(|e| broken(error_chain(&e)))?;
            let status = resp.status();
            let body = resp
                .into_body()
                .collect()
                .await
                .map_err(|e| broken(e.to_string()))?
                .to_bytes();
            Ok((status, body))
        };
        tokio::time::timeout(self.timeout, exchange)
            .await
            .map_err(|_| broken(format!("no answer within {:?}", self.timeout)))?
    }
}

/// An error with its causes (hyper's top-level errors say little).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// TCP, then TLS with the client's configuration.
#[derive(Clone)]
struct Connector {
    tls: tokio_rustls::TlsConnector,
}

impl tower::Service<Uri> for Connector {
    type Response = Tls;
    type Error = io::Error;
    type Future = Pin<Box<dyn Future<Output = io::Result<Tls>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: Uri) -> Self::Future {
        let tls = self.tls.clone();
        Box::pin(async move {
            let invalid =
                |what: &str| io::Error::new(io::ErrorKind::InvalidInput, what.to_string());
            let host = uri
                .host()
                .ok_or_else(|| invalid("no host"))?
                .trim_matches(['[', ']'])
                .to_string();
            let port = uri.port_u16().unwrap_or(443);
            let tcp = TcpStream::connect((host.as_str(), port)).await?;
            let _ = tcp.set_nodelay(true);
            let name = ServerName::try_from(host).map_err(|_| invalid("bad host name"))?;
            Ok(Tls(TokioIo::new(tls.connect(name, tcp).await?)))
        })
    }
}

/// A TLS connection, telling the pool whether HTTP/2 was agreed.
struct Tls(TokioIo<tokio_rustls::client::TlsStream<TcpStream>>);

impl Connection for Tls {
    fn connected(&self) -> Connected {
        let connected = Connected::new();
        if self.0.inner().get_ref().1.alpn_protocol() == Some(b"h2") {
            connected.negotiated_h2()
        } else {
            connected
        }
    }
}

impl hyper::rt::Read for Tls {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_read(cx, buf)
    }
}

impl hyper::rt::Write for Tls {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().0).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().0).poll_shutdown(cx)
    }
}
