//! Request metrics: `apiserver_request_total` and `apiserver_request_duration_seconds`, labelled as upstream labels them.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, RwLock};
use std::time::Instant;

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::histogram::Histogram;

use http::{Request, header};

use super::filter::{Answer, Filter, Next};
use crate::metrics::{Labels, Metrics};
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
    series: Arc<SeriesCache>,
}

impl Instrument {
    /// The filter recording into `metrics`; `served` recognises the resources served.
    pub fn new(metrics: Arc<Metrics>, served: Served) -> Self {
        Self {
            metrics,
            served,
            series: Arc::default(),
        }
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
fn verb_label(info: &RequestInfo, apply: bool) -> &'static str {
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
}

/// What names a request's series, all labels but the code: the verb, dry-run and scope
/// labels, and the resource's when it is served (empty otherwise).
#[derive(Hash, PartialEq, Eq)]
struct SeriesKey<'a> {
    verb: &'static str,
    dry_run: &'static str,
    scope: &'static str,
    group: &'a str,
    resource: &'a str,
    subresource: &'a str,
    version: &'a str,
}

impl SeriesKey<'_> {
    fn hash64(&self) -> u64 {
        let mut hasher = std::hash::DefaultHasher::new();
        self.hash(&mut hasher);
        hasher.finish()
    }

    /// The label set, names in upstream's order (the caller applies the allow list).
    fn labels(&self) -> Labels {
        [
            ("component", "apiserver"),
            ("dry_run", self.dry_run),
            ("group", self.group),
            ("resource", self.resource),
            ("scope", self.scope),
            ("subresource", self.subresource),
            ("verb", self.verb),
            ("version", self.version),
        ]
        .into_iter()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect()
    }
}

/// One series' metrics, kept so that a request finds them without building, hashing and
/// comparing its label set in each family (that was 2–3% of a GET's CPU). The families still
/// own the metrics: these are handles to the same values.
struct Series {
    labels: Labels,
    /// `apiserver_request_duration_seconds`; none for watches, which upstream does not time.
    duration: Option<Histogram>,
    /// `apiserver_request_total` by response code.
    counts: RwLock<Vec<(u16, Counter)>>,
}

impl Series {
    fn same(&self, key: &SeriesKey<'_>) -> bool {
        // The values at the positions `SeriesKey::labels` writes them.
        let value = |i: usize| self.labels[i].1.as_str();
        (
            value(1),
            value(2),
            value(3),
            value(4),
            value(5),
            value(6),
            value(7),
        ) == (
            key.dry_run,
            key.group,
            key.resource,
            key.scope,
            key.subresource,
            key.verb,
            key.version,
        )
    }

    fn count(&self, metrics: &Metrics, code: u16) {
        if let Some((_, counter)) = read(&self.counts).iter().find(|(c, _)| *c == code) {
            counter.inc();
            return;
        }
        let mut labels = self.labels.clone();
        labels.push(("code".into(), code.to_string()));
        let labels = metrics.allowed("apiserver_request_total", labels);
        let counter = metrics.requests.get_or_create(&labels).clone();
        counter.inc();
        let mut counts = self.counts.write().unwrap_or_else(|p| p.into_inner());
        if !counts.iter().any(|(c, _)| *c == code) {
            counts.push((code, counter));
        }
    }
}

fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(|p| p.into_inner())
}

/// The series requests have counted into, by their key's hash. Its size is bounded by the
/// label values the server allows: served resources, the verbs, scopes and dry-run values.
#[derive(Default)]
pub(crate) struct SeriesCache {
    by_hash: RwLock<HashMap<u64, Vec<Arc<Series>>>>,
}

impl SeriesCache {
    fn series(&self, metrics: &Metrics, key: &SeriesKey<'_>) -> Arc<Series> {
        let hash = key.hash64();
        let found = read(&self.by_hash)
            .get(&hash)
            .and_then(|all| all.iter().find(|s| s.same(key)).cloned());
        if let Some(series) = found {
            return series;
        }
        let labels = key.labels();
        let allowed = metrics.allowed("apiserver_request_duration_seconds", labels.clone());
        let series = Arc::new(Series {
            duration: (key.verb != "WATCH")
                .then(|| metrics.durations.get_or_create(&allowed).clone()),
            labels,
            counts: RwLock::default(),
        });
        let mut all = self.by_hash.write().unwrap_or_else(|p| p.into_inner());
        let entry = all.entry(hash).or_default();
        if let Some(existing) = entry.iter().find(|s| s.same(key)) {
            return existing.clone();
        }
        entry.push(series.clone());
        series
    }
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
        let key = SeriesKey {
            verb,
            dry_run: dry_run_label(info),
            scope,
            group: if served { &info.api_group } else { "" },
            resource: if served { &info.resource } else { "" },
            subresource: if served { &info.subresource } else { "" },
            version: if served { &info.api_version } else { "" },
        };
        let series = self.series.series(&self.metrics, &key);
        let started = Instant::now();
        let metrics = self.metrics.clone();
        let fut = next.call(req);
        Box::pin(async move {
            let resp = fut.await?;
            if let Some(duration) = &series.duration {
                duration.observe(started.elapsed().as_secs_f64());
            }
            series.count(&metrics, resp.status().as_u16());
            Ok(resp)
        })
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use http::{Method, Response, StatusCode};
    use tower::{Layer, ServiceExt, service_fn};

    use super::super::filter::FilterLayer;
    use super::*;
    use crate::response;

    fn request(path: &str, query: Option<&str>) -> Request<()> {
        let uri = match query {
            Some(q) => format!("{path}?{q}"),
            None => path.to_string(),
        };
        let mut req = Request::get(uri).body(()).unwrap();
        req.extensions_mut()
            .insert(RequestInfo::parse(&Method::GET, path, query));
        req
    }

    fn series_line<'a>(page: &'a str, prefix: &str, labels: &str) -> Option<&'a str> {
        page.lines()
            .find(|l| l.starts_with(&format!("{prefix}{{{labels}}} ")))
            .and_then(|l| l.rsplit(' ').next())
    }

    #[tokio::test]
    async fn requests_count_and_time_into_their_series() {
        let metrics = Arc::new(Metrics::new());
        let served: Served = Arc::new(|info: &RequestInfo| info.resource == "pods");
        let layer = FilterLayer::new(Instrument::new(metrics.clone(), served));
        let service = layer.layer(service_fn(|req: Request<()>| async move {
            let status = if req.uri().path().ends_with("/missing") {
                StatusCode::NOT_FOUND
            } else {
                StatusCode::OK
            };
            Ok::<_, Infallible>(
                Response::builder()
                    .status(status)
                    .body(response::full(""))
                    .unwrap(),
            )
        }));
        for (path, query) in [
            ("/api/v1/namespaces/a/pods/x", None),
            ("/api/v1/namespaces/a/pods/y", None),
            ("/api/v1/namespaces/a/pods/missing", None),
            ("/api/v1/namespaces/a/widgets/x", None),
            ("/api/v1/pods", Some("watch=true")),
        ] {
            service.clone().oneshot(request(path, query)).await.unwrap();
        }
        let (page, _) = metrics.render();
        let pods = r#"component="apiserver",dry_run="",group="",resource="pods",scope="resource",subresource="",verb="GET",version="v1""#;
        let total = "apiserver_request_total";
        assert_eq!(
            series_line(&page, total, &format!(r#"{pods},code="200""#)),
            Some("2"),
            "{page}"
        );
        assert_eq!(
            series_line(&page, total, &format!(r#"{pods},code="404""#)),
            Some("1")
        );
        let unserved = r#"component="apiserver",dry_run="",group="",resource="",scope="",subresource="",verb="GET",version="""#;
        assert_eq!(
            series_line(&page, total, &format!(r#"{unserved},code="200""#)),
            Some("1")
        );
        let durations = "apiserver_request_duration_seconds_count";
        assert_eq!(series_line(&page, durations, pods), Some("3"));
        let watch = r#"component="apiserver",dry_run="",group="",resource="pods",scope="cluster",subresource="",verb="WATCH",version="v1""#;
        assert_eq!(
            series_line(&page, total, &format!(r#"{watch},code="200""#)),
            Some("1")
        );
        assert!(
            !page
                .lines()
                .any(|l| l.starts_with("apiserver_request_duration")
                    && l.contains(r#"verb="WATCH""#))
        );
    }
}
