//! `--goaway-chance`: a random fraction of HTTP/2 requests closes its connection gracefully
//! (GOAWAY after the response; streams in flight finish), so that clients behind a load
//! balancer reconnect and spread over the servers again.

use std::sync::Arc;

use http::{Request, Version};
use rand::Rng;
use tokio::sync::Notify;

use super::filter::{Answer, Filter, Next};

/// The request extension through which a filter asks the connection to send GOAWAY.
#[derive(Debug, Clone, Default)]
pub struct CloseConnection(pub Arc<Notify>);

/// Asks the connection to close after the response for a `chance` of HTTP/2 requests.
#[derive(Debug, Clone, Copy)]
pub struct Goaway {
    chance: f64,
}

impl Goaway {
    /// The filter for `chance` (0 disables it).
    pub fn new(chance: f64) -> Self {
        Self { chance }
    }
}

impl Filter for Goaway {
    fn filter<S: Next<B>, B: Send + 'static>(&self, req: Request<B>, next: &mut S) -> Answer {
        let close = (self.chance > 0.0
            && req.version() == Version::HTTP_2
            && rand::rng().random_bool(self.chance.min(1.0)))
        .then(|| req.extensions().get::<CloseConnection>().cloned())
        .flatten();
        let fut = next.call(req);
        Box::pin(async move {
            let resp = fut.await?;
            if let Some(close) = close {
                close.0.notify_one();
            }
            Ok(resp)
        })
    }
}
