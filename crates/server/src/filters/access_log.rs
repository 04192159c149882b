//! One log line per request (at `-v=2` and above, as upstream's HTTP log, with its keys):
//! `verb`, `URI`, `latency`, `userAgent`, `srcIP` (address and port) and `resp` (the status).
//! Bodies and headers carrying credentials are never logged.

use std::convert::Infallible;
use std::task::{Context, Poll};
use std::time::Instant;

use futures_util::future::BoxFuture;
use http::{Request, Response, header};
use tower::{Layer, Service};

use crate::response::Body;

/// Logs every request when enabled.
#[derive(Debug, Clone, Copy)]
pub struct AccessLogLayer {
    enabled: bool,
}

impl AccessLogLayer {
    /// The layer; `enabled` from the verbosity.
    pub fn new(enabled: bool) -> Self {
        Self { enabled }
    }
}

impl<S> Layer<S> for AccessLogLayer {
    type Service = AccessLog<S>;

    fn layer(&self, inner: S) -> Self::Service {
        AccessLog {
            inner,
            enabled: self.enabled,
        }
    }
}

/// See [`AccessLogLayer`].
#[derive(Debug, Clone)]
pub struct AccessLog<S> {
    inner: S,
    enabled: bool,
}

/// The client's address, set by the connection (absent in in-process calls).
#[derive(Debug, Clone, Copy)]
pub struct ClientAddr(pub std::net::SocketAddr);

impl<S, B> Service<Request<B>> for AccessLog<S>
where
    S: Service<Request<B>, Response = Response<Body>, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: Send + 'static,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response<Body>, Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        if !self.enabled {
            return Box::pin(self.inner.call(req));
        }
        let verb = req.method().to_string();
        let uri = req
            .uri()
            .path_and_query()
            .map(|p| p.as_str().to_string())
            .unwrap_or_default();
        let user_agent = req
            .headers()
            .get(header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let source = req
            .extensions()
            .get::<ClientAddr>()
            .map(|a| a.0.to_string())
            .unwrap_or_default();
        let started = Instant::now();
        let fut = self.inner.call(req);
        Box::pin(async move {
            let resp = fut.await?;
            // Upstream's httplog keys, so that log queries written for it keep working.
            tracing::info!(
                target: "capstan::httplog",
                verb,
                URI = uri,
                latency = ?started.elapsed(),
                userAgent = user_agent,
                srcIP = source,
                resp = resp.status().as_u16(),
                "HTTP"
            );
            Ok(resp)
        })
    }
}
