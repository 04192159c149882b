//! Request metrics: `apiserver_request_total` and `apiserver_request_duration_seconds`, labelled as upstream labels them.

use std::sync::Arc;
use std::time::Instant;

use http::{Request, header};

use super::filter::{Answer, Filter, Next};
use crate::metrics::Metrics;
use crate::request_info::RequestInfo;

/// Counts and times every request below the request-info filter.
#[derive(Clone)]
pub struct Instrument {
    metrics: Arc<Metrics>,
}

impl Instrument {
    /// The filter recording into `metrics`.
    pub fn new(metrics: Arc<Metrics>) -> Self {
        Self { metrics }
    }
}

/// Upstream's verb label: LIST, WATCH, GET, POST, PUT, PATCH, APPLY, DELETE; the method for
/// other requests.
fn verb_label(info: &RequestInfo, apply: bool) -> String {
    match info.verb.as_str() {
        "get" => "GET",
        "list" => "LIST",
        "watch" => "WATCH",
        "create" => "POST",
        "update" => "PUT",
        "patch" if apply => "APPLY",
        "patch" => "PATCH",
        "delete" | "deletecollection" => "DELETE",
        other => return other.to_ascii_uppercase(),
    }
    .to_string()
}

impl Filter for Instrument {
    fn filter<S: Next<B>, B: Send + 'static>(&self, req: Request<B>, next: &mut S) -> Answer {
        let Some(info) = req.extensions().get::<RequestInfo>() else {
            return Box::pin(next.call(req));
        };
        let apply = req
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.starts_with("application/apply-patch"));
        let verb = verb_label(info, apply);
        let scope = if !info.is_resource_request {
            ""
        } else if !info.name.is_empty() {
            "resource"
        } else if !info.namespace.is_empty() {
            "namespace"
        } else {
            "cluster"
        };
        let labels: Vec<(String, String)> = vec![
            ("component".into(), "apiserver".into()),
            (
                "dry_run".into(),
                info.query.get("dryRun").unwrap_or_default().to_string(),
            ),
            ("group".into(), info.api_group.clone()),
            ("resource".into(), info.resource.clone()),
            ("scope".into(), scope.into()),
            ("subresource".into(), info.subresource.clone()),
            ("verb".into(), verb.clone()),
            ("version".into(), info.api_version.clone()),
        ];
        let long_running = verb == "WATCH";
        let started = Instant::now();
        let metrics = self.metrics.clone();
        let fut = next.call(req);
        Box::pin(async move {
            let resp = fut.await?;
            if !long_running {
                metrics
                    .durations
                    .get_or_create(
                        &metrics.allowed("apiserver_request_duration_seconds", labels.clone()),
                    )
                    .observe(started.elapsed().as_secs_f64());
            }
            let mut counted = labels;
            counted.push(("code".into(), resp.status().as_u16().to_string()));
            let counted = metrics.allowed("apiserver_request_total", counted);
            metrics.requests.get_or_create(&counted).inc();
            Ok(resp)
        })
    }
}
