//! The scheduling queue: pods waiting to be scheduled in priority order (then arrival), pods
//! backing off after an error (1 s, doubling up to 10 s), and unschedulable pods, which wait
//! for a change in the cluster that could make them fit (or at most 5 minutes).

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::Pod;
use tokio::sync::Notify;

use crate::cache::pod_key;

/// First backoff after a failed attempt.
pub const INITIAL_BACKOFF: Duration = Duration::from_secs(1);
/// Longest backoff.
pub const MAX_BACKOFF: Duration = Duration::from_secs(10);
/// Longest stay among the unschedulable pods without a cluster change.
pub const MAX_UNSCHEDULABLE: Duration = Duration::from_secs(300);

#[derive(Debug, PartialEq, Eq)]
struct Entry {
    priority: i32,
    seq: u64,
    key: String,
}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        self.priority
            .cmp(&other.priority)
            .then_with(|| other.seq.cmp(&self.seq))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// How an attempt ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Bound (or no longer to be scheduled).
    Done,
    /// No node fits: wait for a cluster change.
    Unschedulable,
    /// Something failed (e.g. the binding call): try again after a backoff.
    Error,
}

#[derive(Debug)]
struct State {
    pods: HashMap<String, Pod>,
    active: BinaryHeap<Entry>,
    queued: HashSet<String>,
    backoff: Vec<(Instant, String)>,
    unschedulable: HashMap<String, Instant>,
    /// Pods being scheduled, with the cluster changes counted when each was taken.
    in_flight: HashMap<String, u64>,
    /// Cluster changes so far: a pod found unschedulable while one happened is retried
    /// (after its backoff), since the change may have come too late for its attempt.
    changes: u64,
    attempts: HashMap<String, u32>,
    /// Pods held back by `spec.schedulingGates` (upstream's SchedulingGates PreEnqueue).
    gated: HashSet<String>,
    seq: u64,
    initial_backoff: Duration,
    max_backoff: Duration,
}

impl Default for State {
    fn default() -> Self {
        Self {
            pods: HashMap::new(),
            active: BinaryHeap::new(),
            queued: HashSet::new(),
            backoff: Vec::new(),
            unschedulable: HashMap::new(),
            in_flight: HashMap::new(),
            changes: 0,
            attempts: HashMap::new(),
            gated: HashSet::new(),
            seq: 0,
            initial_backoff: INITIAL_BACKOFF,
            max_backoff: MAX_BACKOFF,
        }
    }
}

impl State {
    fn push(&mut self, key: &str) {
        if self.queued.contains(key) || self.in_flight.contains_key(key) {
            return;
        }
        let Some(pod) = self.pods.get(key) else {
            return;
        };
        let priority = pod.spec.as_ref().and_then(|s| s.priority).unwrap_or(0);
        self.seq += 1;
        self.active.push(Entry {
            priority,
            seq: self.seq,
            key: key.to_string(),
        });
        self.queued.insert(key.to_string());
    }

    fn backoff_for(&self, key: &str) -> Duration {
        let n = self.attempts.get(key).copied().unwrap_or(1).max(1);
        self.initial_backoff
            .saturating_mul(1 << (n - 1).min(16))
            .min(self.max_backoff)
    }
}

/// The queue.
#[derive(Debug, Default)]
pub struct Queue {
    state: Mutex<State>,
    wake: Notify,
}

impl Queue {
    /// A queue whose backoff starts at `initial` and doubles up to `max`
    /// (`podInitialBackoffSeconds`, `podMaxBackoffSeconds`).
    pub fn with_backoff(initial: Duration, max: Duration) -> Self {
        let q = Self::default();
        {
            let mut s = q.lock();
            s.initial_backoff = initial;
            s.max_backoff = max.max(initial);
        }
        q
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Adds a pod to schedule, or takes its new state (an unschedulable pod that changed is
    /// tried again).
    pub fn add(&self, pod: Pod) {
        self.add_gated(pod, true);
    }

    /// [`Queue::add`], where `honour_gates` says whether `spec.schedulingGates` hold the pod
    /// back (the profile's SchedulingGates plugin).
    pub fn add_gated(&self, pod: Pod, honour_gates: bool) {
        let key = pod_key(&pod);
        let mut s = self.lock();
        let gated = honour_gates
            && pod
                .spec
                .as_ref()
                .and_then(|p| p.scheduling_gates.as_ref())
                .is_some_and(|g| !g.is_empty());
        if gated {
            // Not scheduled until its gates are removed; it waits outside the queues.
            s.pods.insert(key.clone(), pod);
            s.queued.remove(&key);
            s.backoff.retain(|(_, k)| *k != key);
            s.unschedulable.remove(&key);
            s.gated.insert(key);
            return;
        }
        let was_gated = s.gated.remove(&key);
        // Only a change the scheduler could act on (spec, labels, annotations) sends an
        // unschedulable pod back; its own status update, for one, does not.
        let relevant = s.pods.get(&key).is_none_or(|old| {
            old.spec != pod.spec
                || old.metadata.labels != pod.metadata.labels
                || old.metadata.annotations != pod.metadata.annotations
        });
        s.pods.insert(key.clone(), pod);
        if !relevant && !was_gated && s.unschedulable.contains_key(&key) {
            return;
        }
        if s.unschedulable.remove(&key).is_some() || !s.backoff.iter().any(|(_, k)| *k == key) {
            s.push(&key);
        }
        drop(s);
        self.wake.notify_one();
    }

    /// Forgets a pod (deleted, or bound by someone else).
    pub fn remove(&self, key: &str) {
        let mut s = self.lock();
        s.pods.remove(key);
        s.queued.remove(key);
        s.backoff.retain(|(_, k)| k != key);
        s.unschedulable.remove(key);
        s.attempts.remove(key);
        s.gated.remove(key);
    }

    /// A change in the cluster (a node added or changed, a pod deleted) may let
    /// unschedulable pods fit: they go back to the queue (after their backoff).
    pub fn cluster_changed(&self) {
        let mut s = self.lock();
        s.changes += 1;
        let keys: Vec<String> = s.unschedulable.drain().map(|(k, _)| k).collect();
        let now = Instant::now();
        for key in keys {
            let wait = s.backoff_for(&key);
            s.backoff.push((now + wait, key));
        }
        drop(s);
        self.wake.notify_one();
    }

    /// How many pods wait (active, backing off, unschedulable).
    pub fn len(&self) -> (usize, usize, usize) {
        let s = self.lock();
        (s.active.len(), s.backoff.len(), s.unschedulable.len())
    }

    /// How many pods wait for their scheduling gates to be removed.
    pub fn gated(&self) -> usize {
        self.lock().gated.len()
    }

    /// Whether no pod waits.
    pub fn is_empty(&self) -> bool {
        self.len() == (0, 0, 0)
    }

    /// The next pod to schedule, waiting for one.
    pub async fn pop(&self) -> Pod {
        loop {
            let next_wake = {
                let mut s = self.lock();
                let now = Instant::now();
                let (ready, waiting): (Vec<_>, Vec<_>) =
                    s.backoff.drain(..).partition(|(at, _)| *at <= now);
                s.backoff = waiting;
                for (_, key) in ready {
                    s.push(&key);
                }
                let stale: Vec<String> = s
                    .unschedulable
                    .iter()
                    .filter(|(_, since)| now.duration_since(**since) >= MAX_UNSCHEDULABLE)
                    .map(|(k, _)| k.clone())
                    .collect();
                for key in stale {
                    s.unschedulable.remove(&key);
                    s.push(&key);
                }
                while let Some(entry) = s.active.pop() {
                    s.queued.remove(&entry.key);
                    if let Some(pod) = s.pods.get(&entry.key).cloned() {
                        let changes = s.changes;
                        s.in_flight.insert(entry.key, changes);
                        return pod;
                    }
                }
                let soonest = s.backoff.iter().map(|(at, _)| *at).min();
                soonest.map(|at| at.saturating_duration_since(now))
            };
            match next_wake {
                Some(wait) => {
                    let _ = tokio::time::timeout(wait, self.wake.notified()).await;
                }
                None => {
                    let _ =
                        tokio::time::timeout(Duration::from_secs(30), self.wake.notified()).await;
                }
            }
        }
    }

    /// Records how the attempt on `key` ended.
    pub fn done(&self, key: &str, outcome: Outcome) {
        let mut s = self.lock();
        let taken_at = s.in_flight.remove(key);
        if !s.pods.contains_key(key) {
            return;
        }
        // A change during the attempt may be what the pod waited for: retry it.
        let outcome = match outcome {
            Outcome::Unschedulable if taken_at.is_some_and(|c| c != s.changes) => Outcome::Error,
            other => other,
        };
        match outcome {
            Outcome::Done => {
                s.pods.remove(key);
                s.attempts.remove(key);
            }
            Outcome::Unschedulable => {
                *s.attempts.entry(key.to_string()).or_default() += 1;
                s.unschedulable.insert(key.to_string(), Instant::now());
            }
            Outcome::Error => {
                *s.attempts.entry(key.to_string()).or_default() += 1;
                let wait = s.backoff_for(key);
                s.backoff.push((Instant::now() + wait, key.to_string()));
            }
        }
        drop(s);
        self.wake.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, priority: i32) -> Pod {
        serde_json::from_value(
            serde_json::json!({"metadata": {"name": name, "namespace": "ns"},
            "spec": {"containers": [], "priority": priority}}),
        )
        .unwrap()
    }

    #[tokio::test]
    async fn higher_priority_first_then_arrival_order() {
        let q = Queue::default();
        q.add(pod("a", 0));
        q.add(pod("b", 10));
        q.add(pod("c", 0));
        let order: Vec<String> = [q.pop().await, q.pop().await, q.pop().await]
            .iter()
            .map(|p| p.metadata.name.clone().unwrap())
            .collect();
        assert_eq!(order, ["b", "a", "c"]);
    }

    #[tokio::test]
    async fn unschedulable_pods_wait_for_a_cluster_change() {
        let q = Queue::default();
        q.add(pod("a", 0));
        let p = q.pop().await;
        q.done(&pod_key(&p), Outcome::Unschedulable);
        assert_eq!(q.len(), (0, 0, 1));
        q.cluster_changed();
        assert_eq!(q.len(), (0, 1, 0));
        assert_eq!(q.pop().await.metadata.name.as_deref(), Some("a"));
        // A status-only update leaves an unschedulable pod waiting; a spec change sends it
        // back at once.
        q.done("ns/a", Outcome::Unschedulable);
        let mut status_only = pod("a", 0);
        status_only.status = Some(Default::default());
        q.add(status_only);
        assert_eq!(q.len(), (0, 0, 1));
        q.add(pod("a", 5));
        assert_eq!(q.len(), (1, 0, 0));
    }

    #[tokio::test]
    async fn a_change_during_an_attempt_retries_the_pod() {
        let q = Queue::default();
        q.add(pod("a", 0));
        let p = q.pop().await;
        // The node the pod waits for changes while the pod is being scheduled.
        q.cluster_changed();
        q.done(&pod_key(&p), Outcome::Unschedulable);
        assert_eq!(
            q.len(),
            (0, 1, 0),
            "backing off, not waiting for another change"
        );
    }

    #[test]
    fn gated_pods_wait_until_their_gates_are_removed() {
        let q = Queue::default();
        let mut p = pod("a", 0);
        p.spec.as_mut().unwrap().scheduling_gates = Some(vec![
            serde_json::from_value(serde_json::json!({"name": "example.com/wait"})).unwrap(),
        ]);
        q.add(p.clone());
        assert_eq!((q.len(), q.gated()), ((0, 0, 0), 1));
        p.spec.as_mut().unwrap().scheduling_gates = None;
        q.add(p);
        assert_eq!((q.len(), q.gated()), ((1, 0, 0), 0));
    }

    #[test]
    fn backoff_doubles_up_to_the_maximum() {
        let mut s = State::default();
        let waits: Vec<u64> = (1..=6)
            .map(|n| {
                s.attempts.insert("k".into(), n);
                s.backoff_for("k").as_secs()
            })
            .collect();
        assert_eq!(waits, [1, 2, 4, 8, 10, 10]);
        s.initial_backoff = Duration::from_secs(3);
        s.max_backoff = Duration::from_secs(20);
        s.attempts.insert("k".into(), 3);
        assert_eq!(s.backoff_for("k").as_secs(), 12);
    }
}
