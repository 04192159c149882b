//! The shape every filter shares: a [`Filter`] decides what to do with one request and the
//! rest of the chain below it; [`FilterLayer`] makes it a tower layer.

use std::convert::Infallible;
use std::task::{Context, Poll};

use futures_util::future::BoxFuture;
use http::{Request, Response};
use tower::{Layer, Service};

use crate::response::Body;

/// A filter's answer to one request.
pub type Answer = BoxFuture<'static, Result<Response<Body>, Infallible>>;

/// The rest of the chain, as a filter sees it.
pub trait Next<B>:
    Service<Request<B>, Response = Response<Body>, Error = Infallible, Future: Send + 'static>
    + Clone
    + Send
    + 'static
{
}

impl<S, B> Next<B> for S where
    S: Service<Request<B>, Response = Response<Body>, Error = Infallible, Future: Send + 'static>
        + Clone
        + Send
        + 'static
{
}

/// One filter of the chain: it may look at or change the request, answer it itself, or pass
/// it on by calling `next` (ready, as tower requires: call it at once, or clone it and use
/// the clone's `oneshot` when the decision is made later), and look at the answer.
pub trait Filter: Clone + Send + Sync + 'static {
    /// Handles `req`.
    fn filter<S: Next<B>, B: Send + 'static>(&self, req: Request<B>, next: &mut S) -> Answer;
}

/// The tower layer of a [`Filter`].
#[derive(Debug, Clone)]
pub struct FilterLayer<F>(F);

impl<F> FilterLayer<F> {
    /// The layer of `filter`.
    pub fn new(filter: F) -> Self {
        Self(filter)
    }
}

impl<F: Clone, S> Layer<S> for FilterLayer<F> {
    type Service = Filtered<F, S>;

    fn layer(&self, inner: S) -> Self::Service {
        Filtered {
            filter: self.0.clone(),
            inner,
        }
    }
}

/// A service with a [`Filter`] in front of it.
#[derive(Debug, Clone)]
pub struct Filtered<F, S> {
    filter: F,
    inner: S,
}

impl<F, S, B> Service<Request<B>> for Filtered<F, S>
where
    F: Filter,
    S: Service<Request<B>, Response = Response<Body>, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: Send + 'static,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Answer;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Answer {
        self.filter.filter(req, &mut self.inner)
    }
}
