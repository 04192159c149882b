//! `/metrics` in the Prometheus text format, and the storage metrics polled from the store:
//! `apiserver_storage_objects{resource}` (every `--etcd-count-metric-poll-period`) and
//! `apiserver_storage_size_bytes{storage_cluster_id}` (every `--etcd-db-metric-poll-interval`).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use capstan_registry::Registry;
use capstan_storage::Store;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use tokio::task::JoinHandle;

/// A label set: (name, value) pairs in the order they are written.
pub(crate) type Labels = Vec<(String, String)>;

/// Upstream's buckets of `apiserver_request_duration_seconds`.
const DURATION_BUCKETS: [f64; 23] = [
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0,
    10.0, 15.0, 20.0, 30.0, 45.0, 60.0,
];

/// The server's metrics.
pub struct Metrics {
    registry: prometheus_client::registry::Registry,
    storage_objects: Family<Labels, Gauge>,
    /// The last counts of stored objects: resource → (group, count).
    object_counts: std::sync::RwLock<HashMap<String, Vec<(String, u64)>>>,
    storage_size: Family<Labels, Gauge>,
    /// `apiserver_request_total`.
    pub requests: Family<Labels, Counter>,
    /// `apiserver_request_duration_seconds`.
    pub durations: Family<Labels, Histogram, fn() -> Histogram>,
    /// `apiserver_current_inflight_requests` and `apiserver_dropped_requests_total`.
    pub inflight: crate::filters::InFlightMetrics,
    /// `apiserver_watch_events_total`.
    pub watch_events: Family<Labels, Counter>,
    /// The `apiserver_audit_*` counters.
    pub audit: capstan_audit::AuditMetrics,
    /// The `apiserver_flowcontrol_*` families (API Priority and Fairness).
    pub flowcontrol: capstan_flowcontrol::Metrics,
    process: ProcessMetrics,
    allowed_labels: LabelAllowList,
}

/// `process_*` metrics, read from `/proc/self` at each scrape.
struct ProcessMetrics {
    resident: Gauge,
    virtual_memory: Gauge,
    cpu_seconds: Counter<f64, std::sync::atomic::AtomicU64>,
    /// The CPU seconds already added to the counter.
    cpu_seen: std::sync::Mutex<f64>,
    open_fds: Gauge,
    start_time: Gauge<f64, std::sync::atomic::AtomicU64>,
}

/// Registers families unless disabled (`--disabled-metrics`, by exposed name).
struct Registrar<'a> {
    registry: &'a mut prometheus_client::registry::Registry,
    disabled: &'a [String],
}

impl Registrar<'_> {
    fn register(
        &mut self,
        name: &str,
        help: &str,
        metric: impl prometheus_client::registry::Metric,
        counter: bool,
    ) {
        let exposed = if counter {
            format!("{name}_total")
        } else {
            name.to_string()
        };
        if self.disabled.iter().any(|d| *d == exposed || d == name) {
            return;
        }
        self.registry.register(name, help, metric);
    }
}

/// The Content-Type of the Prometheus text format, with the escaping of metric names that
/// are not legacy Prometheus names (upstream's client names it).
pub const TEXT_0_0_4: &str = "text/plain; version=0.0.4; charset=utf-8; escaping=underscores";

/// OpenMetrics text as the Prometheus 0.0.4 text format: counter families are named after
/// their `_total` samples in `# HELP` and `# TYPE`, and the `# EOF` and `# UNIT` lines go.
fn openmetrics_to_text(page: &str) -> String {
    let mut out = String::with_capacity(page.len());
    let mut help: Option<&str> = None;
    for line in page.lines() {
        if line == "# EOF" || line.starts_with("# UNIT ") {
            continue;
        }
        if line.starts_with("# HELP ") {
            // Held until the TYPE line says whether the family is a counter.
            help = Some(line);
            continue;
        }
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap_or((rest, ""));
            let exposed = if kind == "counter" && !name.ends_with("_total") {
                format!("{name}_total")
            } else {
                name.to_string()
            };
            if let Some(help) = help.take() {
                let text = help
                    .strip_prefix("# HELP ")
                    .and_then(|h| h.split_once(' '))
                    .map_or("", |(_, t)| t);
                out.push_str(&format!("# HELP {exposed} {text}\n"));
            }
            out.push_str(&format!("# TYPE {exposed} {kind}\n"));
            continue;
        }
        if let Some(help) = help.take() {
            out.push_str(help);
            out.push('\n');
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// Allowed label values: ((metric, label), values).
pub type LabelAllowList = Vec<((String, String), Vec<String>)>;

/// The metric options: `--disabled-metrics`, `--allow-metric-labels`.
#[derive(Debug, Clone, Default)]
pub struct MetricsOptions {
    /// Exposed names of metrics not to serve.
    pub disabled: Vec<String>,
    /// (metric, label) → the values kept; others become `unexpected`.
    pub allowed_labels: LabelAllowList,
}

impl ProcessMetrics {
    fn register(registry: &mut Registrar<'_>) -> Self {
        let m = Self {
            resident: Gauge::default(),
            virtual_memory: Gauge::default(),
            cpu_seconds: Counter::default(),
            cpu_seen: std::sync::Mutex::new(0.0),
            open_fds: Gauge::default(),
            start_time: Gauge::default(),
        };
        registry.register(
            "process_resident_memory_bytes",
            "Resident memory size in bytes",
            m.resident.clone(),
            false,
        );
        registry.register(
            "process_virtual_memory_bytes",
            "Virtual memory size in bytes",
            m.virtual_memory.clone(),
            false,
        );
        registry.register(
            "process_cpu_seconds",
            "Total user and system CPU time spent in seconds",
            m.cpu_seconds.clone(),
            true,
        );
        registry.register(
            "process_open_fds",
            "Number of open file descriptors",
            m.open_fds.clone(),
            false,
        );
        registry.register(
            "process_start_time_seconds",
            "Start time of the process since unix epoch in seconds",
            m.start_time.clone(),
            false,
        );
        m
    }

    /// Reads `/proc/self` (Linux); elsewhere the values stay 0.
    fn refresh(&self) {
        let page = 4096.0;
        let ticks = 100.0;
        if let Ok(stat) = std::fs::read_to_string("/proc/self/stat")
            && let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r)
        {
            let f: Vec<&str> = rest.split_whitespace().collect();
            // Fields after the command: state is index 0, utime 11, stime 12, starttime 19,
            // vsize 20, rss 21.
            let num = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
            let total = (num(11) + num(12)) / ticks;
            if let Ok(mut seen) = self.cpu_seen.lock()
                && total > *seen
            {
                self.cpu_seconds.inc_by(total - *seen);
                *seen = total;
            }
            self.virtual_memory.set(num(20) as i64);
            self.resident.set((num(21) * page) as i64);
            if let Some(boot) = boot_time() {
                self.start_time.set(boot + num(19) / ticks);
            }
        }
        if let Ok(dir) = std::fs::read_dir("/proc/self/fd") {
            self.open_fds.set(dir.count() as i64);
        }
    }
}

/// The machine's boot time (seconds since the epoch), from `/proc/stat`.
fn boot_time() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    stat.lines()
        .find_map(|l| l.strip_prefix("btime "))
        .and_then(|v| v.trim().parse().ok())
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// The metric families, registered and empty.
    pub fn new() -> Self {
        Self::with_options(MetricsOptions::default())
    }

    /// [`Metrics::new`] with disabled metrics and label allow-lists.
    pub fn with_options(options: MetricsOptions) -> Self {
        let mut inner = prometheus_client::registry::Registry::default();
        let mut registry = Registrar {
            registry: &mut inner,
            disabled: &options.disabled,
        };
        let storage_objects = Family::<Labels, Gauge>::default();
        registry.register(
            "apiserver_storage_objects",
            "[STABLE] Number of stored objects at the time of last check split by kind",
            storage_objects.clone(),
            false,
        );
        let storage_size = Family::<Labels, Gauge>::default();
        registry.register(
            "apiserver_storage_size_bytes",
            "[ALPHA] Size of the storage database file physically allocated in bytes",
            storage_size.clone(),
            false,
        );
        let requests = Family::<Labels, Counter>::default();
        registry.register(
            "apiserver_request",
            "[STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code",
            requests.clone(),
            true,
        );
        let durations: Family<Labels, Histogram, fn() -> Histogram> =
            Family::new_with_constructor(|| Histogram::new(DURATION_BUCKETS));
        registry.register(
            "apiserver_request_duration_seconds",
            "[STABLE] Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component",
            durations.clone(),
            false,
        );
        let current = Family::<Labels, Gauge>::default();
        registry.register(
            "apiserver_current_inflight_requests",
            "[STABLE] Maximal number of currently used inflight request limit of this apiserver per request kind in last second",
            current.clone(),
            false,
        );
        let dropped = Family::<Labels, Counter>::default();
        registry.register(
            "apiserver_dropped_requests",
            "[ALPHA] Number of requests dropped with 'Try again later' response",
            dropped.clone(),
            true,
        );
        // One family lookup per statement: a lookup's guard lives to the end of its
        // statement, and a second lookup that inserts would wait for it forever.
        let handles = |family: &Family<Labels, Gauge>| {
            crate::filters::REQUEST_KINDS.map(|k| {
                let gauge = family.get_or_create(&vec![("request_kind".into(), k.into())]);
                gauge.clone()
            })
        };
        let counters = |family: &Family<Labels, Counter>| {
            crate::filters::REQUEST_KINDS.map(|k| {
                let counter = family.get_or_create(&vec![("request_kind".into(), k.into())]);
                counter.clone()
            })
        };
        let inflight = crate::filters::InFlightMetrics {
            current: handles(&current),
            dropped: counters(&dropped),
        };
        let watch_events = Family::<Labels, Counter>::default();
        registry.register(
            "apiserver_watch_events",
            "[ALPHA] Number of events sent in watch clients",
            watch_events.clone(),
            true,
        );
        let flowcontrol = capstan_flowcontrol::Metrics::default();
        {
            let f = &flowcontrol;
            let mut add = |name: &str, help: &str, metric: Family<Labels, Gauge>| {
                registry.register(name, help, metric, false);
            };
            add(
                "apiserver_flowcontrol_current_inqueue_requests",
                "[BETA] Number of requests currently pending in queues of the API Priority and Fairness subsystem",
                f.inqueue.clone(),
            );
            add(
                "apiserver_flowcontrol_current_executing_requests",
                "[BETA] Number of requests in initial (for a WATCH) or any (for a non-WATCH) execution stage in the API Priority and Fairness subsystem",
                f.executing.clone(),
            );
            add(
                "apiserver_flowcontrol_current_executing_seats",
                "[BETA] Concurrency (number of seats) occupied by the currently executing (initial stage for a WATCH, any stage otherwise) requests in the API Priority and Fairness subsystem",
                f.executing_seats.clone(),
            );
            add(
                "apiserver_flowcontrol_nominal_limit_seats",
                "[BETA] Nominal number of execution seats configured for each priority level",
                f.nominal_limit.clone(),
            );
            add(
                "apiserver_flowcontrol_request_concurrency_limit",
                "[ALPHA] Nominal number of execution seats configured for each priority level",
                f.concurrency_limit.clone(),
            );
            add(
                "apiserver_flowcontrol_upper_limit_seats",
                "[ALPHA] Configured upper bound on number of execution seats available to each priority level",
                f.upper_limit.clone(),
            );
            add(
                "apiserver_flowcontrol_lower_limit_seats",
                "[ALPHA] Configured lower bound on number of execution seats available to each priority level",
                f.lower_limit.clone(),
            );
        }
        registry.register(
            "apiserver_flowcontrol_dispatched_requests",
            "[BETA] Number of requests executed by API Priority and Fairness subsystem",
            flowcontrol.dispatched.clone(),
            true,
        );
        registry.register(
            "apiserver_flowcontrol_rejected_requests",
            "[BETA] Number of requests rejected by API Priority and Fairness subsystem",
            flowcontrol.rejected.clone(),
            true,
        );
        registry.register(
            "apiserver_flowcontrol_request_wait_duration_seconds",
            "[BETA] Length of time a request spent waiting in its queue",
            flowcontrol.wait.clone(),
            false,
        );
        let audit = capstan_audit::AuditMetrics::default();
        registry.register(
            "apiserver_audit_event",
            "[ALPHA] Audit events generated and handed to the audit backends",
            audit.events.clone(),
            true,
        );
        registry.register(
            "apiserver_audit_error",
            "[ALPHA] Audit events a backend (plugin) lost to an error",
            audit.errors.clone(),
            true,
        );
        registry.register(
            "apiserver_audit_requests_rejected",
            "[ALPHA] Requests refused because their audit event could not be recorded",
            audit.rejected.clone(),
            true,
        );
        registry.register(
            "apiserver_audit_level",
            "[ALPHA] Requests by the audit policy level chosen for them",
            audit.levels.clone(),
            true,
        );
        let process = ProcessMetrics::register(&mut registry);
        Self {
            audit,
            flowcontrol,
            registry: inner,
            allowed_labels: options.allowed_labels,
            storage_objects,
            object_counts: Default::default(),
            storage_size,
            requests,
            durations,
            inflight,
            watch_events,
            process,
        }
    }

    /// `labels` of `metric` with every value outside its allow-list (`--allow-metric-labels`)
    /// replaced by `unexpected`, as upstream does.
    pub fn allowed(&self, metric: &str, mut labels: Labels) -> Labels {
        for ((m, label), values) in &self.allowed_labels {
            if m != metric {
                continue;
            }
            for (name, value) in labels.iter_mut() {
                if name == label && !values.contains(value) {
                    *value = "unexpected".into();
                }
            }
        }
        labels
    }

    /// Every metric in the Prometheus text format 0.0.4, the only one upstream serves (a
    /// scraper asking for OpenMetrics gets it too). Returns the body and its Content-Type.
    pub fn render(&self) -> (String, &'static str) {
        self.process.refresh();
        let mut out = String::new();
        if encode(&mut out, &self.registry).is_err() {
            out.clear();
        }
        (openmetrics_to_text(&out), TEXT_0_0_4)
    }

    /// Starts the storage pollers; a zero period disables one. The tasks end when the
    /// handles are aborted.
    pub fn start_storage_polls(
        self: &Arc<Self>,
        registry: Arc<Registry>,
        prefix: String,
        count_period: Duration,
        size_period: Duration,
        stores: Vec<(String, Arc<dyn Store>)>,
    ) -> Vec<JoinHandle<()>> {
        let mut tasks = Vec::new();
        if !count_period.is_zero() {
            let metrics = self.clone();
            tasks.push(tokio::spawn(async move {
                let mut ticker = tokio::time::interval(count_period);
                loop {
                    ticker.tick().await;
                    metrics.count_objects(&registry, &prefix).await;
                }
            }));
        }
        if !size_period.is_zero() {
            let metrics = self.clone();
            tasks.push(tokio::spawn(async move {
                let mut ticker = tokio::time::interval(size_period);
                loop {
                    ticker.tick().await;
                    for (cluster, store) in &stores {
                        match store.size_bytes().await {
                            Ok(Some(bytes)) => {
                                let labels = metrics.allowed(
                                    "apiserver_storage_size_bytes",
                                    vec![("storage_cluster_id".into(), cluster.clone())],
                                );
                                metrics
                                    .storage_size
                                    .get_or_create(&labels)
                                    .set(bytes as i64);
                            }
                            Ok(None) => {}
                            Err(err) => tracing::debug!(%err, "storage size poll failed"),
                        }
                    }
                }
            }));
        }
        tasks
    }

    /// The stored objects of `resource` in `group` at the last count, if counted.
    pub fn stored_objects(&self, group: &str, resource: &str) -> Option<u64> {
        let counts = self.object_counts.read().unwrap_or_else(|e| e.into_inner());
        counts
            .get(resource)?
            .iter()
            .find(|(g, _)| g == group)
            .map(|(_, n)| *n)
    }

    /// Counts every served resource's stored objects.
    async fn count_objects(&self, registry: &Registry, prefix: &str) {
        // One count per stored collection (a resource served in two versions counts once).
        let mut collections = BTreeMap::new();
        for d in registry.descriptors() {
            if !d.subresource.is_empty() {
                continue;
            }
            let label = if d.group.is_empty() {
                d.resource.clone()
            } else {
                format!("{}.{}", d.resource, d.group)
            };
            let key = format!("{prefix}/{}/", d.resource);
            collections
                .entry(label)
                .or_insert((key, registry.store_for(&d.group, &d.resource)));
        }
        for (label, (key, store)) in collections {
            match store.count(&key).await {
                Ok(n) => {
                    let labels = self.allowed(
                        "apiserver_storage_objects",
                        vec![("resource".into(), label.clone())],
                    );
                    self.storage_objects.get_or_create(&labels).set(n as i64);
                    let (resource, group) = label.split_once('.').unwrap_or((&label, ""));
                    let mut counts = self
                        .object_counts
                        .write()
                        .unwrap_or_else(|e| e.into_inner());
                    let groups = counts.entry(resource.to_string()).or_default();
                    match groups.iter_mut().find(|(g, _)| g == group) {
                        Some(entry) => entry.1 = n,
                        None => groups.push((group.to_string(), n)),
                    }
                }
                Err(err) => tracing::debug!(%err, resource = label, "object count poll failed"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_are_named_after_their_samples_in_the_text_format() {
        let page = "# HELP a_requests Requests.\n# TYPE a_requests counter\n\
                    a_requests_total{code=\"200\"} 3\n# HELP b Bytes.\n# TYPE b gauge\n# UNIT b bytes\nb 1\n# EOF\n";
        assert_eq!(
            openmetrics_to_text(page),
            "# HELP a_requests_total Requests.\n# TYPE a_requests_total counter\n\
             a_requests_total{code=\"200\"} 3\n# HELP b Bytes.\n# TYPE b gauge\nb 1\n"
        );
    }

    #[test]
    fn process_metrics_have_upstream_types() {
        let metrics = Metrics::with_options(MetricsOptions::default());
        let (text, content_type) = metrics.render();
        assert_eq!(content_type, TEXT_0_0_4);
        assert!(
            text.contains("# TYPE process_cpu_seconds_total counter\n"),
            "{text}"
        );
        assert!(text.contains("# TYPE process_resident_memory_bytes gauge\n"));
        assert!(
            !text.contains(".."),
            "help texts end with one period: {text}"
        );
        assert!(!text.contains("# EOF"));
    }
}
