//! `/healthz`, `/livez` and `/readyz`: named checks, one path per check
//! (`/readyz/etcd`), `?verbose` and `?exclude=<name>`, in upstream's output format.

use std::sync::Arc;
use std::time::{Duration, Instant};

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
    /// Start-up work still running or done.
    hooks: Vec<PostStartHook>,
    started: Instant,
    /// How long after start `/livez` reports unfinished hooks as healthy.
    livez_grace_period: Duration,
}

/// Start-up work that may finish after the server begins to serve (upstream's post-start
/// hooks), reported as the check `poststarthook/<name>`.
#[derive(Debug, Clone)]
pub struct PostStartHook {
    name: &'static str,
    done: Arc<AtomicBool>,
}

impl PostStartHook {
    /// An unfinished hook.
    pub fn new(name: &'static str) -> Self {
        Self {
            name,
            done: Arc::new(AtomicBool::new(false)),
        }
    }

    /// Marks the work done.
    pub fn finish(&self) {
        self.done.store(true, Ordering::SeqCst);
    }

    /// Whether the work is done.
    pub fn is_done(&self) -> bool {
        self.done.load(Ordering::SeqCst)
    }
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
            hooks: Vec::new(),
            started: Instant::now(),
            livez_grace_period: Duration::ZERO,
        }
    }

    /// Adds post-start hooks; `/livez` treats unfinished ones as healthy for
    /// `livez_grace_period` after this call (`--livez-grace-period`).
    pub fn with_hooks(mut self, hooks: Vec<PostStartHook>, livez_grace_period: Duration) -> Self {
        self.hooks = hooks;
        self.started = Instant::now();
        self.livez_grace_period = livez_grace_period;
        self
    }

    /// The checks of `endpoint`, in the order they are reported.
    fn checks(&self, endpoint: &str) -> Vec<String> {
        let fixed = if endpoint == "readyz" {
            READY_CHECKS
        } else {
            CHECKS
        };
        let mut names: Vec<String> = fixed.iter().map(|n| n.to_string()).collect();
        names.extend(
            self.hooks
                .iter()
                .map(|h| format!("poststarthook/{}", h.name)),
        );
        names
    }

    /// Runs one check of `endpoint`: `Err` carries the reason.
    async fn run(&self, endpoint: &str, name: &str) -> Result<(), String> {
        if let Some(hook) = name.strip_prefix("poststarthook/") {
            let hook = self.hooks.iter().find(|h| h.name == hook);
            return match hook {
                Some(h) if h.is_done() => Ok(()),
                Some(_)
                    if endpoint == "livez" && self.started.elapsed() < self.livez_grace_period =>
                {
                    Ok(())
                }
                Some(_) => Err("not finished".into()),
                None => Err(format!("no check named {name}")),
            };
        }
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
        // As upstream's: plain-text errors and the endpoints' own answers say `nosniff`; a
        // single check's success does not.
        let nosniff = crate::filters::nosniff;
        if method != Method::GET && method != Method::HEAD {
            return Some(nosniff(response::text(
                StatusCode::METHOD_NOT_ALLOWED,
                "method not allowed",
            )));
        }
        let checks = self.checks(endpoint);
        if let Some(name) = check {
            if !checks.iter().any(|c| c == name) {
                return Some(nosniff(response::text(
                    StatusCode::NOT_FOUND,
                    "404 page not found",
                )));
            }
            return Some(match self.run(endpoint, name).await {
                Ok(()) => response::text(StatusCode::OK, "ok"),
                Err(reason) => nosniff(response::text(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    format!("internal server error: {reason}\n"),
                )),
            });
        }
        let verbose = info.query.get("verbose").is_some();
        let excluded = info.query.all("exclude");
        let mut lines: Vec<String> = Vec::new();
        let mut failed = false;
        for name in &checks {
            if excluded.iter().any(|e| e == name) {
                lines.push(format!("[+]{name} excluded: ok"));
                continue;
            }
            match self.run(endpoint, name).await {
                Ok(()) => lines.push(format!("[+]{name} ok")),
                Err(reason) => {
                    tracing::warn!(check = %name, endpoint, %reason, "health check failed");
                    failed = true;
                    lines.push(format!("[-]{name} failed: reason withheld"));
                }
            }
        }
        Some(nosniff(if failed {
            lines.push(format!("{endpoint} check failed"));
            response::text(StatusCode::INTERNAL_SERVER_ERROR, lines.join("\n") + "\n")
        } else if verbose {
            lines.push(format!("{endpoint} check passed"));
            response::text(StatusCode::OK, lines.join("\n") + "\n")
        } else {
            response::text(StatusCode::OK, "ok")
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_storage::{EmbeddedStore, EmbeddedStoreConfig};

    async fn get(health: &Health, path: &str) -> (StatusCode, String) {
        let (path, query) = path.split_once('?').unwrap_or((path, ""));
        let info = RequestInfo::parse(&Method::GET, path, Some(query));
        let resp = health
            .serve(&info, &Method::GET)
            .await
            .expect("a health path");
        let status = resp.status();
        let body = http_body_util::BodyExt::collect(resp.into_body())
            .await
            .unwrap()
            .to_bytes();
        (status, String::from_utf8_lossy(&body).into_owned())
    }

    #[tokio::test]
    async fn unfinished_hooks_fail_readyz_and_livez_after_the_grace_period() {
        let dir = tempfile::tempdir().unwrap();
        let store = EmbeddedStore::open(EmbeddedStoreConfig::new(dir.path().join("db"))).unwrap();
        let hook = PostStartHook::new("start-system-namespaces-controller");
        let terminating = Arc::new(AtomicBool::new(false));
        let graceful = Health::new(Arc::new(store), Duration::from_secs(2), terminating)
            .with_hooks(vec![hook.clone()], Duration::from_secs(3600));

        let (status, body) = get(&graceful, "/readyz?verbose").await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
        assert!(
            body.contains("[-]poststarthook/start-system-namespaces-controller failed"),
            "{body}"
        );
        let (status, body) = get(&graceful, "/livez?verbose").await;
        assert_eq!(status, StatusCode::OK, "within the grace period: {body}");
        assert!(body.contains("[+]poststarthook/start-system-namespaces-controller ok"));
        let (status, _) = get(
            &graceful,
            "/healthz/poststarthook/start-system-namespaces-controller",
        )
        .await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);

        let store = graceful.store.clone();
        let strict = Health::new(
            store,
            Duration::from_secs(2),
            Arc::new(AtomicBool::new(false)),
        )
        .with_hooks(vec![hook.clone()], Duration::ZERO);
        let (status, body) = get(&strict, "/livez?verbose").await;
        assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR, "{body}");
        let (status, _) = get(
            &strict,
            "/livez?exclude=poststarthook/start-system-namespaces-controller",
        )
        .await;
        assert_eq!(status, StatusCode::OK);

        hook.finish();
        for health in [&graceful, &strict] {
            for path in ["/readyz", "/livez", "/healthz"] {
                assert_eq!(get(health, path).await.0, StatusCode::OK, "{path}");
            }
        }
    }
}
