use std::convert::Infallible;
use std::task::{Context, Poll};

use http::{Request, Response};
use tower::{Layer, Service};

use crate::request_info::RequestInfo;
use crate::response::Body;

/// Attaches the request's [`RequestInfo`] as an extension.
#[derive(Debug, Clone, Copy, Default)]
pub struct RequestInfoLayer;

impl<S> Layer<S> for RequestInfoLayer {
    type Service = AttachRequestInfo<S>;

    fn layer(&self, inner: S) -> Self::Service {
        AttachRequestInfo { inner }
    }
}

/// See [`RequestInfoLayer`].
#[derive(Debug, Clone)]
pub struct AttachRequestInfo<S> {
    inner: S,
}

impl<S, B> Service<Request<B>> for AttachRequestInfo<S>
where
    S: Service<Request<B>, Response = Response<Body>, Error = Infallible>,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = S::Future;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request<B>) -> Self::Future {
        let info = RequestInfo::parse(req.method(), req.uri().path(), req.uri().query());
        req.extensions_mut().insert(info);
        self.inner.call(req)
    }
}
