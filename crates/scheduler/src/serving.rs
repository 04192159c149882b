//! What the scheduler serves: `/healthz`, `/livez` and `/readyz` with their named checks, and
//! `/metrics`. On the secure port only the always-allowed paths are open (there is no
//! delegated authorization yet, so everything else is forbidden, as upstream does with an
//! empty `--authorization-kubeconfig`); the deprecated insecure port serves everything.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use http::{Method, Response, StatusCode, header};
use http_body_util::Full;

use crate::metrics::Metrics;

/// Upstream's default `--authorization-always-allow-paths`.
pub const DEFAULT_ALWAYS_ALLOW: &[&str] = &["/healthz", "/readyz", "/livez"];

/// The scheduler's HTTP endpoints.
#[derive(Clone)]
pub struct Endpoints {
    metrics: Arc<Metrics>,
    synced: Arc<AtomicBool>,
    always_allow: Vec<String>,
    metrics_filter: Option<MetricsFilter>,
}

/// Rewrites the metrics page (`--disabled-metrics`, `--allow-metric-labels`).
pub type MetricsFilter = Arc<dyn Fn(&str) -> String + Send + Sync>;

fn text(status: StatusCode, content_type: &str, body: String) -> Response<Full<Bytes>> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, content_type)
        .header("X-Content-Type-Options", "nosniff")
        .body(Full::new(Bytes::from(body)))
        .unwrap_or_default()
}

impl std::fmt::Debug for Endpoints {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Endpoints")
            .field("always_allow", &self.always_allow)
            .finish_non_exhaustive()
    }
}

impl Endpoints {
    /// Endpoints reporting `metrics`, ready once `synced` is true; on the secure port, the
    /// paths of `always_allow` (exact, or a prefix ending in `*`) are open.
    pub fn new(metrics: Arc<Metrics>, synced: Arc<AtomicBool>, always_allow: Vec<String>) -> Self {
        Self {
            metrics,
            synced,
            always_allow,
            metrics_filter: None,
        }
    }

    /// Passes the metrics page through `filter` before serving it.
    pub fn with_metrics_filter(mut self, filter: MetricsFilter) -> Self {
        self.metrics_filter = Some(filter);
        self
    }

    /// Whether the secure port serves `path` (`--authorization-always-allow-paths`).
    pub fn allowed(&self, path: &str) -> bool {
        self.always_allow.iter().any(|p| match p.strip_suffix('*') {
            Some(prefix) => path.starts_with(prefix),
            None => p == path,
        })
    }

    /// The answer to `method path?query`; `secure` tells the secure port from the insecure.
    pub fn answer(
        &self,
        method: &Method,
        path_and_query: &str,
        secure: bool,
    ) -> Response<Full<Bytes>> {
        let (path, query) = path_and_query
            .split_once('?')
            .unwrap_or((path_and_query, ""));
        if secure && !self.allowed(path) {
            let verb = method.as_str().to_ascii_lowercase();
            let message =
                format!("forbidden: User \"system:anonymous\" cannot {verb} path \"{path}\"");
            let status = serde_json::json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
                "status": "Failure", "message": message, "reason": "Forbidden",
                "details": {}, "code": 403});
            return text(
                StatusCode::FORBIDDEN,
                "application/json",
                status.to_string(),
            );
        }
        if method != Method::GET && method != Method::HEAD {
            return text(
                StatusCode::METHOD_NOT_ALLOWED,
                "text/plain; charset=utf-8",
                "method not allowed\n".into(),
            );
        }
        match path {
            "/metrics" => text(
                StatusCode::OK,
                "text/plain; version=0.0.4; charset=utf-8",
                match &self.metrics_filter {
                    Some(filter) => filter(&self.metrics.render()),
                    None => self.metrics.render(),
                },
            ),
            _ => match health_endpoint(path) {
                Some((kind, check)) => self.health(kind, check, query),
                None => text(
                    StatusCode::NOT_FOUND,
                    "text/plain; charset=utf-8",
                    "404 page not found\n".into(),
                ),
            },
        }
    }

    /// The checks of `/healthz`, `/livez` or `/readyz`, with whether each passes.
    fn checks(&self, kind: &str) -> Vec<(&'static str, bool)> {
        let mut checks = vec![("ping", true)];
        if kind == "readyz" {
            checks.push(("sched-handler-sync", self.synced.load(Ordering::Relaxed)));
        }
        checks
    }

    fn health(&self, kind: &str, check: Option<&str>, query: &str) -> Response<Full<Bytes>> {
        let plain = "text/plain; charset=utf-8";
        let checks = self.checks(kind);
        if let Some(name) = check {
            return match checks.iter().find(|(n, _)| *n == name) {
                Some((_, true)) => text(StatusCode::OK, plain, "ok".into()),
                Some((_, false)) => text(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    plain,
                    "internal server error: not synced yet\n".into(),
                ),
                None => text(StatusCode::NOT_FOUND, plain, "404 page not found\n".into()),
            };
        }
        let params: Vec<(&str, &str)> = query
            .split('&')
            .filter(|p| !p.is_empty())
            .map(|p| p.split_once('=').unwrap_or((p, "")))
            .collect();
        let verbose = params.iter().any(|(k, _)| *k == "verbose");
        let excluded = |name: &str| params.iter().any(|(k, v)| *k == "exclude" && *v == name);
        let mut lines = String::new();
        let mut ok = true;
        for (name, passed) in &checks {
            if excluded(name) {
                lines.push_str(&format!("[+]{name} excluded: ok\n"));
                continue;
            }
            ok &= passed;
            if *passed {
                lines.push_str(&format!("[+]{name} ok\n"));
            } else {
                lines.push_str(&format!("[-]{name} failed: reason withheld\n"));
            }
        }
        if ok && !verbose {
            return text(StatusCode::OK, plain, "ok".into());
        }
        let verdict = if ok { "passed" } else { "failed" };
        lines.push_str(&format!("{kind} check {verdict}\n"));
        let status = if ok {
            StatusCode::OK
        } else {
            StatusCode::INTERNAL_SERVER_ERROR
        };
        text(status, plain, lines)
    }
}

/// `/readyz/ping` → (`readyz`, `Some("ping")`).
fn health_endpoint(path: &str) -> Option<(&str, Option<&str>)> {
    let trimmed = path.trim_start_matches('/');
    let (kind, check) = match trimmed.split_once('/') {
        Some((k, c)) => (k, Some(c)),
        None => (trimmed, None),
    };
    matches!(kind, "healthz" | "livez" | "readyz").then_some((kind, check))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn endpoints(synced: bool) -> Endpoints {
        Endpoints::new(
            Arc::new(Metrics::new("kube-scheduler")),
            Arc::new(AtomicBool::new(synced)),
            DEFAULT_ALWAYS_ALLOW.iter().map(|s| s.to_string()).collect(),
        )
    }

    async fn body(r: Response<Full<Bytes>>) -> String {
        use http_body_util::BodyExt;
        let bytes = r.into_body().collect().await.unwrap().to_bytes();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn health_checks_answer_as_upstream() {
        let e = endpoints(false);
        let r = e.answer(&Method::GET, "/healthz", true);
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(body(r).await, "ok");
        let r = e.answer(&Method::GET, "/readyz?verbose", true);
        assert_eq!(r.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(
            body(r).await,
            "[+]ping ok\n[-]sched-handler-sync failed: reason withheld\nreadyz check failed\n"
        );
        let r = e.answer(&Method::GET, "/readyz?exclude=sched-handler-sync", true);
        assert_eq!(r.status(), StatusCode::OK);
        let e = endpoints(true);
        let r = e.answer(&Method::GET, "/readyz?verbose", true);
        assert_eq!(
            body(r).await,
            "[+]ping ok\n[+]sched-handler-sync ok\nreadyz check passed\n"
        );
    }

    #[tokio::test]
    async fn the_secure_port_forbids_what_is_not_always_allowed() {
        let e = endpoints(true);
        let r = e.answer(&Method::GET, "/metrics", true);
        assert_eq!(r.status(), StatusCode::FORBIDDEN);
        assert!(body(r).await.contains("cannot get path \\\"/metrics\\\""));
        // Sub-paths need their own entry (or a `*` pattern).
        assert_eq!(
            e.answer(&Method::GET, "/readyz/ping", true).status(),
            StatusCode::FORBIDDEN
        );
        let r = e.answer(&Method::GET, "/metrics", false);
        assert_eq!(r.status(), StatusCode::OK);
        assert!(body(r).await.contains("scheduler_pending_pods"));
        let open = Endpoints::new(
            Arc::new(Metrics::new("x")),
            Arc::new(AtomicBool::new(true)),
            vec!["/metrics".into(), "/readyz/*".into()],
        );
        assert_eq!(
            open.answer(&Method::GET, "/metrics", true).status(),
            StatusCode::OK
        );
        assert_eq!(
            open.answer(&Method::GET, "/readyz/ping", true).status(),
            StatusCode::OK
        );
        assert_eq!(
            open.answer(&Method::GET, "/readyz/nope", true).status(),
            StatusCode::NOT_FOUND
        );
    }
}
