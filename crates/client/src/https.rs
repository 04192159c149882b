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
use futures_util::future::BoxFuture;
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
        Self::build(config, timeout, None)
    }

    fn build(config: &Config, timeout: Duration, route: Option<Arc<Route>>) -> Result<Self> {
        let tls = tls_config(config, &[b"h2", b"http/1.1"], true)?;
        let connector = Connector {
            tls: tokio_rustls::TlsConnector::from(Arc::new(tls)),
            route,
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
    /// `clientConfig`, and the URL to call: `target`'s, trusting the PEM `ca_bundle` (the
    /// host's roots without one), with the API server's user agent. A Service's webhook is
    /// called at `https://<name>.<namespace>.svc:<port><path>` (the name its certificate
    /// must have), each new connection going where `services` resolves the Service's port.
    pub fn for_webhook(
        target: WebhookTarget<'_>,
        ca_bundle: Option<&[u8]>,
        timeout: Duration,
        services: Option<Arc<dyn ServiceResolver>>,
    ) -> std::result::Result<(Self, String), String> {
        let (url, route) = match target {
            WebhookTarget::Url(url) => (url.to_string(), None),
            WebhookTarget::Service {
                namespace,
                name,
                port,
                path,
            } => {
                let resolver = services
                    .ok_or("service references cannot be resolved by this client: use a url")?;
                let route = Route {
                    resolver,
                    namespace: namespace.to_string(),
                    name: name.to_string(),
                    port,
                };
                let path = path.unwrap_or_default();
                (
                    format!("https://{name}.{namespace}.svc:{port}{path}"),
                    Some(Arc::new(route)),
                )
            }
        };
        let mut config = Config::new(url.clone());
        config.ca_pem = ca_bundle.map(<[u8]>::to_vec);
        config.user_agent = format!("capstan-apiserver/{}", env!("CARGO_PKG_VERSION"));
        let client = Self::build(&config, timeout, route).map_err(|e| e.to_string())?;
        Ok((client, url))
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

/// A pooled HTTPS client to the backend of one Service port that sends requests as they come,
/// bodies streamed both ways (the aggregator's proxy): HTTP/2 when the backend agrees, else
/// HTTP/1.1 with kept-alive connections. Requests name the Service
/// (`https://<name>.<namespace>.svc:<port>/...`, the name the certificate must carry); each
/// new connection goes where the resolver says the port is served.
pub struct ServiceClient<B> {
    client: hyper_util::client::legacy::Client<Connector, B>,
}

impl<B> Clone for ServiceClient<B> {
    fn clone(&self) -> Self {
        Self {
            client: self.client.clone(),
        }
    }
}

impl<B> ServiceClient<B>
where
    B: hyper::body::Body + Send + Unpin + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    /// A client with `tls` (its ALPN decides the protocol) to `port` of the Service
    /// `namespace/name`, found through `resolver`.
    pub fn new(
        tls: rustls::ClientConfig,
        resolver: Arc<dyn ServiceResolver>,
        namespace: &str,
        name: &str,
        port: u16,
    ) -> Self {
        let connector = Connector {
            tls: tokio_rustls::TlsConnector::from(Arc::new(tls)),
            route: Some(Arc::new(Route {
                resolver,
                namespace: namespace.to_string(),
                name: name.to_string(),
                port,
            })),
        };
        Self {
            client: hyper_util::client::legacy::Client::builder(TokioExecutor::new())
                .pool_idle_timeout(Duration::from_secs(90))
                .build(connector),
        }
    }

    /// Sends `req` (its URI absolute, naming the Service); the backend's response, its body
    /// still arriving, or the connection's error with its causes.
    pub async fn send(
        &self,
        req: Request<B>,
    ) -> std::result::Result<http::Response<hyper::body::Incoming>, String> {
        self.client.request(req).await.map_err(|e| error_chain(&e))
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

/// Where a webhook is: a URL, or a Service of the cluster (`clientConfig.service`).
#[derive(Debug, Clone, Copy)]
pub enum WebhookTarget<'a> {
    /// `clientConfig.url`.
    Url(&'a str),
    /// `clientConfig.service`.
    Service {
        /// The Service's namespace.
        namespace: &'a str,
        /// The Service's name.
        name: &'a str,
        /// The Service's port (443 unless the configuration says otherwise).
        port: u16,
        /// The URL path, if any.
        path: Option<&'a str>,
    },
}

impl<'a> WebhookTarget<'a> {
    /// The target of a webhook's `clientConfig`: its `url`, else its `service` (namespace,
    /// name, port (443 when not given) and path).
    pub fn of(
        url: Option<&'a str>,
        service: Option<(&'a str, &'a str, Option<i32>, Option<&'a str>)>,
    ) -> std::result::Result<Self, String> {
        match (url, service) {
            (Some(url), _) => Ok(Self::Url(url)),
            (None, Some((namespace, name, port, path))) => Ok(Self::Service {
                namespace,
                name,
                port: port.and_then(|p| u16::try_from(p).ok()).unwrap_or(443),
                path,
            }),
            (None, None) => Err("the webhook has neither a url nor a service".into()),
        }
    }
}

/// Finds where a port of a Service is served, for webhooks named by a `service` reference.
pub trait ServiceResolver: Send + Sync {
    /// The host and port serving `port` of the Service `namespace/name`, or why none does.
    fn resolve<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
        port: u16,
    ) -> BoxFuture<'a, std::result::Result<(String, u16), String>>;
}

/// The Service port a client's connections go to, resolved for each new connection.
struct Route {
    resolver: Arc<dyn ServiceResolver>,
    namespace: String,
    name: String,
    port: u16,
}

/// TCP (to the URL's host, or where the route resolves), then TLS with the client's
/// configuration and the URL's host name.
#[derive(Clone)]
struct Connector {
    tls: tokio_rustls::TlsConnector,
    route: Option<Arc<Route>>,
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
        let route = self.route.clone();
        Box::pin(async move {
            let invalid =
                |what: &str| io::Error::new(io::ErrorKind::InvalidInput, what.to_string());
            let host = uri
                .host()
                .ok_or_else(|| invalid("no host"))?
                .trim_matches(['[', ']'])
                .to_string();
            let (address, port) = match &route {
                None => (host.clone(), uri.port_u16().unwrap_or(443)),
                Some(r) => r
                    .resolver
                    .resolve(&r.namespace, &r.name, r.port)
                    .await
                    .map_err(io::Error::other)?,
            };
            let tcp = TcpStream::connect((address.as_str(), port)).await?;
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
