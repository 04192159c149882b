//! CPU time spent per request over a measured phase: the servers' (the processes named with
//! `--cpu-of`, e.g. kube-apiserver and its etcd) and the harness's own. On a machine whose
//! cores the harness shares with the server, a rate is the cores divided by both figures
//! together: they tell which side a row's ceiling is on.

use std::time::Duration;

/// The unit of `/proc/<pid>/stat`'s times (USER_HZ): 100 per second on Linux, whatever
/// the kernel's own tick rate.
const USER_HZ: f64 = 100.0;

/// The user and system CPU time of process `pid` (all its threads) so far; `None` when
/// `/proc` does not have it.
pub fn used(pid: u32) -> Option<Duration> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    ticks(&stat).map(|t| Duration::from_secs_f64(t as f64 / USER_HZ))
}

/// `utime + stime` of a `/proc/<pid>/stat` line. The command name (in parentheses) may hold
/// spaces and parentheses: the fields are counted after its last `)`.
fn ticks(stat: &str) -> Option<u64> {
    let (_, rest) = stat.rsplit_once(')')?;
    let mut fields = rest.split_whitespace().skip(11);
    let user: u64 = fields.next()?.parse().ok()?;
    let system: u64 = fields.next()?.parse().ok()?;
    Some(user + system)
}

/// The CPU time used so far by the servers (together) and by this process.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    servers: Option<Duration>,
    harness: Option<Duration>,
}

impl Sample {
    /// Now, for the processes `servers` (none: no servers' figure).
    pub fn take(servers: &[u32]) -> Self {
        let servers = if servers.is_empty() {
            None
        } else {
            servers.iter().map(|&p| used(p)).sum()
        };
        Self {
            servers,
            harness: used(std::process::id()),
        }
    }

    /// Microseconds of CPU per request from `self` to `later` over `requests`: the servers',
    /// the harness's.
    pub fn per_request(&self, later: &Sample, requests: usize) -> (Option<f64>, Option<f64>) {
        let each = |a: Option<Duration>, b: Option<Duration>| {
            let spent = b?.checked_sub(a?)?;
            (requests > 0).then(|| spent.as_secs_f64() * 1e6 / requests as f64)
        };
        (
            each(self.servers, later.servers),
            each(self.harness, later.harness),
        )
    }
}

/// A table cell: microseconds with one decimal, or `-`.
pub fn cell(us: Option<f64>) -> String {
    us.map_or_else(|| "-".into(), |us| format!("{us:.1}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_times_are_read_after_the_command_name() {
        let stat = "4242 (a (b) c) R 1 4242 4242 0 -1 4194560 5 0 0 0 731 112 0 0 20 0 9 0";
        assert_eq!(ticks(stat), Some(843));
        assert_eq!(ticks("4242 (x) R 1"), None);
    }

    #[test]
    fn this_process_is_measured_and_the_figures_are_per_request() {
        let me = std::process::id();
        let before = Sample::take(&[me]);
        // Spin until this process has used 60 ms more CPU time (whatever the wall time).
        let start = used(me).unwrap();
        let mut x = 0u64;
        while used(me).unwrap() < start + Duration::from_millis(60) {
            for _ in 0..10_000 {
                x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
            }
        }
        let after = Sample::take(&[me]);
        let (servers, harness) = before.per_request(&after, 10);
        // Both read this process: at least 60 ms over 10 requests.
        assert!(servers.unwrap() >= 6_000.0, "{servers:?}");
        assert!(harness.unwrap() >= 6_000.0, "{harness:?}");
        assert_eq!(before.per_request(&after, 0), (None, None));
        let none = Sample::take(&[]);
        assert_eq!(none.per_request(&none, 10).0, None);
        assert_eq!(cell(None), "-");
        assert_eq!(cell(Some(12.345)), "12.3");
    }
}
