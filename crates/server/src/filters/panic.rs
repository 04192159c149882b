use std::convert::Infallible;
use std::panic::AssertUnwindSafe;
use std::task::{Context, Poll};

use capstan_meta::ApiError;
use futures_util::FutureExt;
use futures_util::future::BoxFuture;
use http::{Request, Response};
use tower::{Layer, Service};

use crate::response::{self, Body};

/// Turns a panic in any layer below into a 500 `Status` response.
#[derive(Debug, Clone, Copy, Default)]
pub struct CatchPanicLayer;

impl<S> Layer<S> for CatchPanicLayer {
    type Service = CatchPanic<S>;

    fn layer(&self, inner: S) -> Self::Service {
        CatchPanic { inner }
    }
}

/// See [`CatchPanicLayer`].
#[derive(Debug, Clone)]
pub struct CatchPanic<S> {
    inner: S,
}

impl<S, B> Service<Request<B>> for CatchPanic<S>
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
        let path = req.uri().path().to_string();
        let fut = AssertUnwindSafe(self.inner.call(req)).catch_unwind();
        Box::pin(async move {
            match fut.await {
                Ok(resp) => resp,
                Err(panic) => {
                    let what = panic
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| panic.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "unknown panic".into());
                    tracing::error!(%path, panic = %what, "handler panicked");
                    Ok(response::error(&ApiError::internal(format!(
                        "the server panicked serving {path}"
                    ))))
                }
            }
        })
    }
}
