use std::panic::AssertUnwindSafe;

use capstan_meta::ApiError;
use futures_util::FutureExt;
use http::Request;

use super::filter::{Answer, Filter, Next};
use crate::response::{self};

/// Turns a panic in any layer below into a 500 `Status` response.
#[derive(Debug, Clone, Copy, Default)]
pub struct CatchPanic;

impl Filter for CatchPanic {
    fn filter<S: Next<B>, B: Send + 'static>(&self, req: Request<B>, next: &mut S) -> Answer {
        let path = req.uri().path().to_string();
        let fut = AssertUnwindSafe(next.call(req)).catch_unwind();
        Box::pin(async move {
            match fut.await {
                Ok(resp) => resp,
                Err(panic) => {
                    let what = panic_message(&*panic);
                    tracing::error!(%path, panic = %what, "handler panicked");
                    Ok(response::error(&ApiError::internal(format!(
                        "the server panicked serving {path}"
                    ))))
                }
            }
        })
    }
}

/// The message a panic was raised with.
pub(crate) fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}
