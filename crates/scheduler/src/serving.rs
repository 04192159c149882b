//! What the scheduler serves: `/healthz`, `/livez` and `/readyz` with their named checks, and
//! `/metrics`; and the Status answers of refused requests. Who may ask is decided before
//! (on the secure port, by delegated authentication and authorization).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use http::{Method, Response, StatusCode, header};
use http_body_util::Full;

use crate::metrics::Metrics;

/// The scheduler's HTTP endpoints.
#[derive(Clone)]
pub struct Endpoints {
    metrics: Arc<Metrics>,
    synced: Arc<AtomicBool>,
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
        f.debug_struct("Endpoints").finish_non_exhaustive()
    }
}

impl Endpoints {
    /// Endpoints reporting `metrics`, ready once `synced` is true.
    pub fn new(metrics: Arc<Metrics>, synced: Arc<AtomicBool>) -> Self {
        Self {
            metrics,
            synced,
            metrics_filter: None,
        }
    }

    /// Passes the metrics page through `filter` before serving it.
    pub fn with_metrics_filter(mut self, filter: MetricsFilter) -> Self {
        self.metrics_filter = Some(filter);
        self
    }

    /// The answer to `method path?query`.
    pub fn answer(&self, method: &Method, path_and_query: &str) -> Response<Full<Bytes>> {
        let (path, query) = path_and_query
            .split_once('?')
            .unwrap_or((path_and_query, ""));
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
/// A refused request's Status: 401 (`Unauthorized`) or 403 (`Forbidden`) with `message`.
pub fn refusal(forbidden: bool, message: &str) -> Response<Full<Bytes>> {
    let (code, reason) = if forbidden {
        (StatusCode::FORBIDDEN, "Forbidden")
    } else {
        (StatusCode::UNAUTHORIZED, "Unauthorized")
    };
    let status = serde_json::json!({"kind": "Status", "apiVersion": "v1", "metadata": {},
        "status": "Failure", "message": message, "reason": reason, "details": {},
        "code": code.as_u16()});
    text(code, "application/json", status.to_string())
}

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
        let r = e.answer(&Method::GET, "/healthz");
        assert_eq!(r.status(), StatusCode::OK);
        assert_eq!(body(r).await, "ok");
        let r = e.answer(&Method::GET, "/readyz?verbose");
        assert_eq!(r.status(), StatusCode::INTERNAL_SERVER_ERROR);
        assert_eq!(
            body(r).await,
            "[+]ping ok\n[-]sched-handler-sync failed: reason withheld\nreadyz check failed\n"
        );
        let r = e.answer(&Method::GET, "/readyz?exclude=sched-handler-sync");
        assert_eq!(r.status(), StatusCode::OK);
        let e = endpoints(true);
        let r = e.answer(&Method::GET, "/readyz?verbose");
        assert_eq!(
            body(r).await,
            "[+]ping ok\n[+]sched-handler-sync ok\nreadyz check passed\n"
        );
    }

    #[tokio::test]
    async fn metrics_and_refusals() {
        let e = endpoints(true);
        let r = e.answer(&Method::GET, "/metrics");
        assert_eq!(r.status(), StatusCode::OK);
        assert!(body(r).await.contains("scheduler_pending_pods"));
        assert_eq!(
            e.answer(&Method::GET, "/readyz/nope").status(),
            StatusCode::NOT_FOUND
        );
        let r = refusal(true, "forbidden: User \"x\" cannot get path \"/metrics\"");
        assert_eq!(r.status(), StatusCode::FORBIDDEN);
        let doc: serde_json::Value = serde_json::from_str(&body(r).await).unwrap();
        assert_eq!(
            (doc["reason"].as_str(), doc["code"].as_u64()),
            (Some("Forbidden"), Some(403))
        );
        let r = refusal(false, "Unauthorized");
        assert_eq!(r.status(), StatusCode::UNAUTHORIZED);
    }
}
