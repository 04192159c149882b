//! Request metrics: `apiserver_request_total` and `apiserver_request_duration_seconds`, labelled as upstream labels them.

use std::sync::Arc;
use std::time::Instant;

use http::{Request, header};

use super::filter::{Answer, Filter, Next};
use crate::metrics::Metrics;
use crate::request_info::RequestInfo;

/// Whether a request names a resource the server serves.
pub type Served = Arc<dyn Fn(&RequestInfo) -> bool + Send + Sync>;

/// Counts and times every request below the request-info filter. Label values come from
/// what the server knows, never from the request as written: a resource it does not serve,
/// an unknown method or a malformed `dryRun` cannot add series (this filter runs before
/// authentication, so anyone could otherwise).
#[derive(Clone)]
pub struct Instrument {
    metrics: Arc<Metrics>,
    served: Served,
}

impl Instrument {
    /// The filter recording into `metrics`; `served` recognises the resources served.
    pub fn new(metrics: Arc<Metrics>, served: Served) -> Self {
        Self { metrics, served }
    }
}

/// Upstream's `dry_run` label: the sorted distinct values when they are valid (`All`), empty
/// without any, `invalid` otherwise.
fn dry_run_label(info: &RequestInfo) -> &'static str {
    match info.query.get("dryRun") {
        None | Some("") => "",
        Some("All") => "All",
        Some(_) => "invalid",
    }
}

/// Upstream's verb label: LIST, WATCH, GET, POST, PUT, PATCH, APPLY, DELETE; the method of
/// other requests when it is a standard one, `other` otherwise.
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
        "head" => "HEAD",
        "options" => "OPTIONS",
        "connect" | "proxy" => "CONNECT",
        "post" => "POST",
        "put" => "PUT",
        // Any other method is one label, as upstream's.
        _ => "other",
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
        let served = info.is_resource_request && (self.served)(info);
        let scope = if !served {
            ""
        } else if !info.name.is_empty() {
            "resource"
        } else if !info.namespace.is_empty() {
            "namespace"
        } else {
            "cluster"
        };
        let known = |value: &String| if served { value.clone() } else { String::new() };
        let labels: Vec<(String, String)> = vec![
            ("component".into(), "apiserver".into()),
            ("dry_run".into(), dry_run_label(info).into()),
            ("group".into(), known(&info.api_group)),
            ("resource".into(), known(&info.resource)),
            ("scope".into(), scope.into()),
            ("subresource".into(), known(&info.subresource)),
            ("verb".into(), verb.clone()),
            ("version".into(), known(&info.api_version)),
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
