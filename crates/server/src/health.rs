//! `/healthz`, `/livez` and `/readyz`: named checks, one path per check
//! (`/readyz/etcd`), `?verbose` and `?exclude=<name>`, in upstream's output format.

use std::sync::Arc;
use std::time::Duration;

use std::sync::atomic::{AtomicBool, Ordering};

use capstan_storage::Store;
use http::{Method, StatusCode};

use crate::request_info::RequestInfo;
use crate::response::{self, Body};
use http::Response;

/// The checks the health endpoints run.
pub struct Health {
    store: Arc<dyn Store>,
    /// Set when shutdown begins (the `shutdown` check of `/readyz` fails).
    terminating: Arc<AtomicBool>,
    /// How long the storage check may take (`--etcd-healthcheck-timeout`).
    storage_timeout: Duration,
}

/// The checks of `/healthz` and `/livez`, in the order they are reported.
const CHECKS: &[&str] = &["ping", "etcd"];
/// The checks of `/readyz`: also whether shutdown has begun.
const READY_CHECKS: &[&str] = &["ping", "etcd", "shutdown"];

impl Health {
    /// Checks over `store`.
    pub fn new(
        store: Arc<dyn Store>,
        storage_timeout: Duration,
        terminating: Arc<AtomicBool>,
    ) -> Self {
        Self {
            store,
            terminating,
            storage_timeout,
        }
    }

    /// Runs one check: `Err` carries the reason.
    async fn run(&self, name: &str) -> Result<(), String> {
        match name {
            "ping" => Ok(()),
            "shutdown" if self.terminating.load(Ordering::SeqCst) => {
                Err("the server is shutting down".into())
            }
            "shutdown" => Ok(()),
            "etcd" => match tokio::time::timeout(self.storage_timeout, self.store.ping()).await {
                Ok(Ok(())) => Ok(()),
                Ok(Err(err)) => Err(err.to_string()),
                Err(_) => Err(format!(
                    "the storage did not answer within {:?}",
                    self.storage_timeout
                )),
            },
            _ => Err(format!("no check named {name}")),
        }
    }

    /// The answer to a health path, or `None` for other paths.
    pub async fn serve(&self, info: &RequestInfo, method: &Method) -> Option<Response<Body>> {
        let path = info.path.trim_end_matches('/');
        let (endpoint, check) = ["/healthz", "/livez", "/readyz"].iter().find_map(|e| {
            if path == *e {
                Some((&e[1..], None))
            } else {
                path.strip_prefix(e)
                    .and_then(|rest| rest.strip_prefix('/'))
                    .map(|name| (&e[1..], Some(name)))
            }
        })?;
        if method != Method::GET && method != Method::HEAD {
            return Some(response::text(
                StatusCode::METHOD_NOT_ALLOWED,
                "method not allowed",
            ));
        }
        let checks = if endpoint == "readyz" {
            READY_CHECKS
        } else {
            CHECKS
        };
        if let Some(name) = check {
            if !checks.contains(&name) {
                return Some(response::text(StatusCode::NOT_FOUND, "404 page not found"));
            }
            return Some(match self.run(name).await {
                Ok(()) => response::text(StatusCode::OK, "ok"),
                Err(reason) => response::text(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    format!("internal server error: {reason}\n"),
                ),
            });
        }
        let verbose = info.query.get("verbose").is_some();
        let excluded = info.query.all("exclude");
        let mut lines: Vec<String> = Vec::new();
        let mut failed = false;
        for name in checks {
            if excluded.iter().any(|e| e == name) {
                lines.push(format!("[+]{name} excluded: ok"));
                continue;
            }
            match self.run(name).await {
                Ok(()) => lines.push(format!("[+]{name} ok")),
                Err(reason) => {
                    tracing::warn!(check = name, endpoint, %reason, "health check failed");
                    failed = true;
                    lines.push(format!("[-]{name} failed: reason withheld"));
                }
            }
        }
        Some(if failed {
            lines.push(format!("{endpoint} check failed"));
            response::text(StatusCode::INTERNAL_SERVER_ERROR, lines.join("\n") + "\n")
        } else if verbose {
            lines.push(format!("{endpoint} check passed"));
            response::text(StatusCode::OK, lines.join("\n") + "\n")
        } else {
            response::text(StatusCode::OK, "ok")
        })
    }
}
