//! The `apiserver_flowcontrol_*` metrics. Each schema's series are looked up once, when the
//! configuration is compiled, so a request only touches atomics.

use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;

use crate::config::LevelConfig;

/// Label pairs.
pub type Labels = Vec<(String, String)>;

/// Upstream's buckets of `apiserver_flowcontrol_request_wait_duration_seconds`.
const WAIT_BUCKETS: [f64; 13] = [
    0.0, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 15.0, 30.0,
];

/// The reasons a request is rejected, in the order of [`FlowSeries::rejected`].
pub const REJECT_REASONS: [&str; 4] = ["queue-full", "concurrency-limit", "time-out", "cancelled"];

fn wait_histogram() -> Histogram {
    Histogram::new(WAIT_BUCKETS)
}

/// The metric families, for the server to register under these names.
#[derive(Clone)]
pub struct Metrics {
    /// `apiserver_flowcontrol_dispatched_requests_total{flow_schema,priority_level}`.
    pub dispatched: Family<Labels, Counter>,
    /// `apiserver_flowcontrol_rejected_requests_total{flow_schema,priority_level,reason}`.
    pub rejected: Family<Labels, Counter>,
    /// `apiserver_flowcontrol_current_inqueue_requests{flow_schema,priority_level}`.
    pub inqueue: Family<Labels, Gauge>,
    /// `apiserver_flowcontrol_current_executing_requests{flow_schema,priority_level}`.
    pub executing: Family<Labels, Gauge>,
    /// `apiserver_flowcontrol_current_executing_seats{flow_schema,priority_level}`.
    pub executing_seats: Family<Labels, Gauge>,
    /// `apiserver_flowcontrol_request_wait_duration_seconds{flow_schema,priority_level,execute}`.
    pub wait: Family<Labels, Histogram, fn() -> Histogram>,
    /// `apiserver_flowcontrol_nominal_limit_seats{priority_level}`.
    pub nominal_limit: Family<Labels, Gauge>,
    /// `apiserver_flowcontrol_request_concurrency_limit{priority_level}` (upstream's older
    /// name of the same figure).
    pub concurrency_limit: Family<Labels, Gauge>,
    /// `apiserver_flowcontrol_upper_limit_seats{priority_level}`: nominal plus what the
    /// level may borrow.
    pub upper_limit: Family<Labels, Gauge>,
    /// `apiserver_flowcontrol_lower_limit_seats{priority_level}`: nominal less what it
    /// lends.
    pub lower_limit: Family<Labels, Gauge>,
}

impl Default for Metrics {
    fn default() -> Self {
        Self {
            dispatched: Family::default(),
            rejected: Family::default(),
            inqueue: Family::default(),
            executing: Family::default(),
            executing_seats: Family::default(),
            wait: Family::new_with_constructor(wait_histogram),
            nominal_limit: Family::default(),
            concurrency_limit: Family::default(),
            upper_limit: Family::default(),
            lower_limit: Family::default(),
        }
    }
}

/// One schema's series at its level.
pub(crate) struct FlowSeries {
    pub dispatched: Counter,
    pub rejected: [Counter; 4],
    pub inqueue: Gauge,
    pub executing: Gauge,
    pub executing_seats: Gauge,
    pub waited: Histogram,
    pub waited_rejected: Histogram,
}

impl Metrics {
    pub(crate) fn flow(&self, schema: &str, level: &str) -> FlowSeries {
        let labels = || {
            vec![
                ("flow_schema".to_string(), schema.to_string()),
                ("priority_level".to_string(), level.to_string()),
            ]
        };
        let with = |key: &str, value: &str| {
            let mut l = labels();
            l.push((key.to_string(), value.to_string()));
            l
        };
        // One statement per lookup: a family's read guard lives to the end of its statement,
        // and a second creation in the same family within it would wait for it forever.
        let dispatched = self.dispatched.get_or_create(&labels()).clone();
        let rejected =
            REJECT_REASONS.map(|r| self.rejected.get_or_create(&with("reason", r)).clone());
        let inqueue = self.inqueue.get_or_create(&labels()).clone();
        let executing = self.executing.get_or_create(&labels()).clone();
        let executing_seats = self.executing_seats.get_or_create(&labels()).clone();
        let waited = self.wait.get_or_create(&with("execute", "true")).clone();
        let waited_rejected = self.wait.get_or_create(&with("execute", "false")).clone();
        FlowSeries {
            dispatched,
            rejected,
            inqueue,
            executing,
            executing_seats,
            waited,
            waited_rejected,
        }
    }

    pub(crate) fn set_levels(&self, levels: &[LevelConfig], server_seats: u32) {
        for l in levels {
            let labels = vec![("priority_level".to_string(), l.name.to_string())];
            self.nominal_limit
                .get_or_create(&labels)
                .set(i64::from(l.nominal));
            self.concurrency_limit
                .get_or_create(&labels)
                .set(i64::from(l.nominal));
            self.lower_limit
                .get_or_create(&labels)
                .set(i64::from(l.nominal - l.lendable.min(l.nominal)));
            let upper = l.borrow_limit.map_or(server_seats, |b| {
                l.nominal.saturating_add(b).min(server_seats.max(l.nominal))
            });
            self.upper_limit
                .get_or_create(&labels)
                .set(i64::from(upper));
        }
    }
}
