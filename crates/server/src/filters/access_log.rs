//! One log line per request (at `-v=2` and above, as upstream's HTTP log, with its keys):
//! `verb`, `URI`, `latency`, `userAgent`, `srcIP` (address and port) and `resp` (the status).
//! Bodies and headers carrying credentials are never logged.

use std::time::Instant;

use http::{Request, header};

use super::filter::{Answer, Filter, Next};

/// Logs every request when enabled.
#[derive(Debug, Clone, Copy)]
pub struct AccessLog {
    enabled: bool,
}

impl AccessLog {
    /// The filter; `enabled` from the verbosity.
    pub fn new(enabled: bool) -> Self {
        Self { enabled }
    }
}

/// The client's address, set by the connection (absent in in-process calls).
#[derive(Debug, Clone, Copy)]
pub struct ClientAddr(pub std::net::SocketAddr);

impl Filter for AccessLog {
    fn filter<S: Next<B>, B: Send + 'static>(&self, req: Request<B>, next: &mut S) -> Answer {
        if !self.enabled {
            return Box::pin(next.call(req));
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
        let fut = next.call(req);
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
