//! `--goaway-chance`: a random fraction of HTTP/2 requests closes its connection gracefully
//! (GOAWAY after the response; streams in flight finish), so that clients behind a load
//! balancer reconnect and spread over the servers again.

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_util::future::BoxFuture;
use http::{Request, Response, Version};
use rand::Rng;
use tokio::sync::Notify;
use tower::{Layer, Service};

use crate::response::Body;

/// The request extension through which a filter asks the connection to send GOAWAY.
#[derive(Debug, Clone, Default)]
pub struct CloseConnection(pub Arc<Notify>);

/// Asks the connection to close after the response for a `chance` of HTTP/2 requests.
#[derive(Debug, Clone, Copy)]
pub struct GoawayLayer {
    chance: f64,
}

impl GoawayLayer {
    /// The layer for `chance` (0 disables it).
    pub fn new(chance: f64) -> Self {
        Self { chance }
    }
}

impl<S> Layer<S> for GoawayLayer {
    type Service = Goaway<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Goaway {
            inner,
            chance: self.chance,
        }
    }
}

/// See [`GoawayLayer`].
#[derive(Debug, Clone)]
pub struct Goaway<S> {
    inner: S,
    chance: f64,
}

impl<S, B> Service<Request<B>> for Goaway<S>
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
        let close = (self.chance > 0.0
            && req.version() == Version::HTTP_2
            && rand::rng().random_bool(self.chance.min(1.0)))
        .then(|| req.extensions().get::<CloseConnection>().cloned())
        .flatten();
        let fut = self.inner.call(req);
        Box::pin(async move {
            let resp = fut.await?;
            if let Some(close) = close {
                close.0.notify_one();
            }
            Ok(resp)
        })
    }
}
