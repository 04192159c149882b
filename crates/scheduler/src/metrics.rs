//! The scheduler's metrics, with upstream's names, in the Prometheus text format.

use std::collections::BTreeMap;
use std::fmt::Write;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::time::Duration;

/// A histogram with fixed bucket bounds.
#[derive(Debug)]
struct Histogram {
    bounds: Vec<f64>,
    counts: Vec<u64>,
    sum: f64,
    count: u64,
}

impl Histogram {
    fn exponential(start: f64, factor: f64, n: usize) -> Self {
        let bounds: Vec<f64> = (0..n).map(|i| start * factor.powi(i as i32)).collect();
        Self {
            counts: vec![0; bounds.len()],
            bounds,
            sum: 0.0,
            count: 0,
        }
    }

    fn observe(&mut self, value: f64) {
        for (bound, count) in self.bounds.iter().zip(&mut self.counts) {
            if value <= *bound {
                *count += 1;
            }
        }
        self.sum += value;
        self.count += 1;
    }

    fn render(&self, out: &mut String, name: &str, labels: &str) {
        let sep = if labels.is_empty() { "" } else { "," };
        for (bound, count) in self.bounds.iter().zip(&self.counts) {
            let _ = writeln!(out, "{name}_bucket{{{labels}{sep}le=\"{bound}\"}} {count}");
        }
        let _ = writeln!(
            out,
            "{name}_bucket{{{labels}{sep}le=\"+Inf\"}} {}",
            self.count
        );
        let braces = if labels.is_empty() {
            String::new()
        } else {
            format!("{{{labels}}}")
        };
        let _ = writeln!(out, "{name}_sum{braces} {}", self.sum);
        let _ = writeln!(out, "{name}_count{braces} {}", self.count);
    }
}

/// How a scheduling attempt ended, as the `result` label says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AttemptResult {
    /// A node was chosen.
    Scheduled,
    /// No node fits.
    Unschedulable,
    /// Something failed.
    Error,
}

impl AttemptResult {
    fn label(self) -> &'static str {
        match self {
            Self::Scheduled => "scheduled",
            Self::Unschedulable => "unschedulable",
            Self::Error => "error",
        }
    }
}

/// The scheduler's counters, gauges and histograms.
#[derive(Debug)]
pub struct Metrics {
    attempts: Mutex<BTreeMap<(String, AttemptResult), (u64, Histogram)>>,
    preemption_attempts: AtomicU64,
    preemption_victims: Mutex<Histogram>,
    pending: [AtomicI64; 4],
    leader: AtomicI64,
    lease_name: String,
    started: f64,
}

impl Metrics {
    /// Metrics of a scheduler whose lock is called `lease_name`.
    pub fn new(lease_name: impl Into<String>) -> Self {
        Self {
            attempts: Mutex::new(BTreeMap::new()),
            preemption_attempts: AtomicU64::new(0),
            preemption_victims: Mutex::new(Histogram::exponential(1.0, 2.0, 7)),
            pending: Default::default(),
            leader: AtomicI64::new(0),
            lease_name: lease_name.into(),
            started: std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0.0, |d| d.as_secs_f64()),
        }
    }

    /// Counts an attempt of `profile` that took `took`.
    pub fn attempt(&self, profile: &str, result: AttemptResult, took: Duration) {
        let mut attempts = self.attempts.lock().unwrap_or_else(|p| p.into_inner());
        let entry = attempts
            .entry((profile.to_string(), result))
            .or_insert_with(|| (0, Histogram::exponential(0.001, 2.0, 15)));
        entry.0 += 1;
        entry.1.observe(took.as_secs_f64());
    }

    /// Counts a preemption attempt and its victims.
    pub fn preemption(&self, victims: usize) {
        self.preemption_attempts.fetch_add(1, Ordering::Relaxed);
        if victims > 0 {
            self.preemption_victims
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .observe(victims as f64);
        }
    }

    /// Sets the pending pods: active, backoff, unschedulable, gated.
    pub fn pending(&self, active: usize, backoff: usize, unschedulable: usize, gated: usize) {
        for (gauge, n) in self
            .pending
            .iter()
            .zip([active, backoff, unschedulable, gated])
        {
            gauge.store(n as i64, Ordering::Relaxed);
        }
    }

    /// Whether this replica leads.
    pub fn set_leader(&self, leading: bool) {
        self.leader.store(i64::from(leading), Ordering::Relaxed);
    }

    /// The `schedule_attempts_total` count of `profile` and `result`.
    pub fn attempts(&self, profile: &str, result: AttemptResult) -> u64 {
        let attempts = self.attempts.lock().unwrap_or_else(|p| p.into_inner());
        attempts
            .get(&(profile.to_string(), result))
            .map_or(0, |(n, _)| *n)
    }

    /// Everything in the Prometheus text format (version 0.0.4).
    pub fn render(&self) -> String {
        let mut out = String::new();
        let attempts = self.attempts.lock().unwrap_or_else(|p| p.into_inner());
        out.push_str("# HELP scheduler_schedule_attempts_total Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem.\n");
        out.push_str("# TYPE scheduler_schedule_attempts_total counter\n");
        for ((profile, result), (n, _)) in attempts.iter() {
            let _ = writeln!(
                out,
                "scheduler_schedule_attempts_total{{profile=\"{profile}\",result=\"{}\"}} {n}",
                result.label()
            );
        }
        out.push_str("# HELP scheduler_scheduling_attempt_duration_seconds Scheduling attempt latency in seconds (scheduling algorithm + binding)\n");
        out.push_str("# TYPE scheduler_scheduling_attempt_duration_seconds histogram\n");
        for ((profile, result), (_, h)) in attempts.iter() {
            let labels = format!("profile=\"{profile}\",result=\"{}\"", result.label());
            h.render(
                &mut out,
                "scheduler_scheduling_attempt_duration_seconds",
                &labels,
            );
        }
        drop(attempts);
        out.push_str("# HELP scheduler_pending_pods Number of pending pods, by the queue type.\n");
        out.push_str("# TYPE scheduler_pending_pods gauge\n");
        for (queue, gauge) in ["active", "backoff", "unschedulable", "gated"]
            .iter()
            .zip(&self.pending)
        {
            let _ = writeln!(
                out,
                "scheduler_pending_pods{{queue=\"{queue}\"}} {}",
                gauge.load(Ordering::Relaxed)
            );
        }
        out.push_str("# HELP scheduler_preemption_attempts_total Total preemption attempts in the cluster till now\n");
        out.push_str("# TYPE scheduler_preemption_attempts_total counter\n");
        let _ = writeln!(
            out,
            "scheduler_preemption_attempts_total {}",
            self.preemption_attempts.load(Ordering::Relaxed)
        );
        out.push_str("# HELP scheduler_preemption_victims Number of selected preemption victims\n");
        out.push_str("# TYPE scheduler_preemption_victims histogram\n");
        self.preemption_victims
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .render(&mut out, "scheduler_preemption_victims", "");
        out.push_str("# HELP leader_election_master_status Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.\n");
        out.push_str("# TYPE leader_election_master_status gauge\n");
        let _ = writeln!(
            out,
            "leader_election_master_status{{name=\"{}\"}} {}",
            self.lease_name,
            self.leader.load(Ordering::Relaxed)
        );
        process_metrics(&mut out, self.started);
        out
    }
}

/// `process_*` metrics from /proc (Linux).
fn process_metrics(out: &mut String, started: f64) {
    let page = 4096.0;
    let ticks = 100.0;
    if let Ok(statm) = std::fs::read_to_string("/proc/self/statm")
        && let Some(rss) = statm
            .split_whitespace()
            .nth(1)
            .and_then(|v| v.parse::<f64>().ok())
    {
        out.push_str("# HELP process_resident_memory_bytes Resident memory size in bytes.\n");
        out.push_str("# TYPE process_resident_memory_bytes gauge\n");
        let _ = writeln!(out, "process_resident_memory_bytes {}", rss * page);
    }
    if let Ok(stat) = std::fs::read_to_string("/proc/self/stat")
        && let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r)
    {
        let fields: Vec<&str> = rest.split_whitespace().collect();
        // After the command: state is field 0, utime 11 and stime 12 (in clock ticks).
        let time = |i: usize| {
            fields
                .get(i)
                .and_then(|v| v.parse::<f64>().ok())
                .unwrap_or(0.0)
        };
        out.push_str(
            "# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.\n",
        );
        out.push_str("# TYPE process_cpu_seconds_total counter\n");
        let _ = writeln!(
            out,
            "process_cpu_seconds_total {}",
            (time(11) + time(12)) / ticks
        );
    }
    out.push_str("# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.\n");
    out.push_str("# TYPE process_start_time_seconds gauge\n");
    let _ = writeln!(out, "process_start_time_seconds {started}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn attempts_render_as_prometheus_text() {
        let m = Metrics::new("kube-scheduler");
        m.attempt(
            "default-scheduler",
            AttemptResult::Scheduled,
            Duration::from_millis(3),
        );
        m.attempt(
            "default-scheduler",
            AttemptResult::Scheduled,
            Duration::from_millis(30),
        );
        m.attempt(
            "default-scheduler",
            AttemptResult::Unschedulable,
            Duration::from_millis(1),
        );
        m.preemption(2);
        m.set_leader(true);
        m.pending(4, 1, 2, 0);
        let text = m.render();
        for line in [
            "scheduler_schedule_attempts_total{profile=\"default-scheduler\",result=\"scheduled\"} 2",
            "scheduler_schedule_attempts_total{profile=\"default-scheduler\",result=\"unschedulable\"} 1",
            "scheduler_scheduling_attempt_duration_seconds_bucket{profile=\"default-scheduler\",result=\"scheduled\",le=\"0.004\"} 1",
            "scheduler_scheduling_attempt_duration_seconds_count{profile=\"default-scheduler\",result=\"scheduled\"} 2",
            "scheduler_pending_pods{queue=\"active\"} 4",
            "scheduler_preemption_attempts_total 1",
            "scheduler_preemption_victims_bucket{le=\"2\"} 1",
            "leader_election_master_status{name=\"kube-scheduler\"} 1",
            "# TYPE process_resident_memory_bytes gauge",
        ] {
            assert!(
                text.lines().any(|l| l == line),
                "missing {line:?} in\n{text}"
            );
        }
    }
}
