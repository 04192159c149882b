//! API Priority and Fairness (`flowcontrol.apiserver.k8s.io/v1`): [`FlowControl`] classifies
//! each request by the FlowSchemas into a priority level and a flow, runs it on one of the
//! level's seats, queues it fairly when there is none, or rejects it.
//!
//! The server's seats (`--max-requests-inflight` plus `--max-mutating-requests-inflight`)
//! are divided between the levels by their nominal concurrency shares; idle lendable seats
//! are borrowed at once by levels that need more (upstream rebalances every 10 seconds).

pub mod bootstrap;
mod classify;
mod config;
mod dispatch;
mod dump;
mod metrics;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use k8s_openapi::api::flowcontrol::v1 as api;
use tokio::sync::oneshot;

pub use capstan_meta::RequestAttributes;
pub use classify::Distinguisher;
pub use config::{LevelConfig, Queuing};
pub use metrics::{Labels, Metrics, REJECT_REASONS};

use config::Config;
use dispatch::{Dispatch, Grant, RequestSummary, Waiter};
use metrics::FlowSeries;

/// Where a request was classified.
#[derive(Debug, Clone)]
pub struct Classification {
    /// The FlowSchema's name.
    pub schema: Arc<str>,
    /// Its UID (`X-Kubernetes-PF-FlowSchema-UID`).
    pub schema_uid: Arc<str>,
    /// The priority level's name.
    pub level: Arc<str>,
    /// Its UID (`X-Kubernetes-PF-PriorityLevel-UID`).
    pub level_uid: Arc<str>,
    /// Whether the level is exempt from limits.
    pub exempt: bool,
}

/// Why a request was not run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    /// Its queue was full.
    QueueFull,
    /// No seat was free and the level does not queue.
    ConcurrencyLimit,
    /// It waited in its queue longer than allowed.
    TimedOut,
}

impl Rejection {
    /// Upstream's `reason` label.
    pub fn reason(self) -> &'static str {
        match self {
            Rejection::QueueFull => REJECT_REASONS[0],
            Rejection::ConcurrencyLimit => REJECT_REASONS[1],
            Rejection::TimedOut => REJECT_REASONS[2],
        }
    }
}

/// The stored configuration objects.
#[derive(Default)]
struct Objects {
    schemas: BTreeMap<String, api::FlowSchema>,
    levels: BTreeMap<String, api::PriorityLevelConfiguration>,
}

/// The flow controller of one server.
pub struct FlowControl {
    config: RwLock<Arc<Config>>,
    objects: Mutex<Objects>,
    dispatch: Mutex<Dispatch>,
    metrics: Metrics,
    server_seats: u32,
    wait_limit: Duration,
    next_id: AtomicU64,
}

/// A request admitted to run; its seats are given back when it is dropped.
pub struct Ticket {
    control: Arc<FlowControl>,
    slot: usize,
    queue: usize,
    width: u32,
    borrowed: bool,
    charged: f64,
    started: Instant,
    series: Arc<FlowSeries>,
    exempt: bool,
}

impl Drop for Ticket {
    fn drop(&mut self) {
        self.series.executing.dec();
        self.series
            .executing_seats
            .dec_by(i64::from(if self.exempt { 1 } else { self.width }));
        let mut dispatch = self.control.lock_dispatch();
        dispatch.finish(
            self.slot,
            self.queue,
            self.width,
            self.borrowed,
            self.charged,
            self.started.elapsed(),
        );
        dispatch.dispatch_waiting();
    }
}

/// Where a request stands once classified.
pub enum Decision {
    /// It runs now.
    Admitted(Ticket),
    /// It does not run.
    Rejected(Rejection),
    /// It waits in a queue: [`Pending::admitted`] says how that ends.
    Waiting(Pending),
}

/// A request on its way to a seat: run at once, rejected, or waiting in a queue.
pub struct Pending {
    classification: Arc<Classification>,
    state: PendingState,
}

enum PendingState {
    Done(Result<Ticket, Rejection>),
    Waiting(Wait),
}

/// A request waiting in a queue; dropped before it gets its seats, it leaves the queue.
struct Wait {
    control: Arc<FlowControl>,
    slot: usize,
    queue: usize,
    id: u64,
    width: u32,
    series: Arc<FlowSeries>,
    rx: Option<oneshot::Receiver<Grant>>,
}

impl Wait {
    fn ticket(&self, grant: Grant) -> Ticket {
        Ticket {
            control: self.control.clone(),
            slot: self.slot,
            queue: self.queue,
            width: self.width,
            borrowed: grant.borrowed,
            charged: grant.virtual_cost,
            started: Instant::now(),
            series: self.series.clone(),
            exempt: false,
        }
    }

    async fn wait(mut self) -> Result<Ticket, Rejection> {
        let limit = self.control.wait_limit;
        let rx = self.rx.as_mut().expect("waited once");
        let outcome = tokio::time::timeout(limit, rx).await;
        match outcome {
            Ok(Ok(grant)) => {
                self.rx = None;
                Ok(self.ticket(grant))
            }
            Ok(Err(_)) => {
                self.rx = None;
                Err(Rejection::TimedOut)
            }
            Err(_) => {
                let mut dispatch = self.control.lock_dispatch();
                if let Some(waiter) = dispatch.withdraw(self.slot, self.queue, self.id) {
                    if let Some(level) = dispatch.level_mut(self.slot) {
                        level.counters.timed_out += 1;
                        level.counters.rejected += 1;
                    }
                    drop(dispatch);
                    self.rx = None;
                    waiter.series.rejected[2].inc();
                    waiter
                        .series
                        .waited_rejected
                        .observe(waiter.arrived.elapsed().as_secs_f64());
                    return Err(Rejection::TimedOut);
                }
                drop(dispatch);
                // Granted as the wait ran out: the seats are ours.
                let mut rx = self.rx.take().expect("still held");
                match rx.try_recv() {
                    Ok(grant) => Ok(self.ticket(grant)),
                    Err(_) => Err(Rejection::TimedOut),
                }
            }
        }
    }
}

impl Drop for Wait {
    fn drop(&mut self) {
        let Some(mut rx) = self.rx.take() else {
            return;
        };
        let mut dispatch = self.control.lock_dispatch();
        if let Some(waiter) = dispatch.withdraw(self.slot, self.queue, self.id) {
            if let Some(level) = dispatch.level_mut(self.slot) {
                level.counters.cancelled += 1;
            }
            waiter.series.rejected[3].inc();
        } else if let Ok(grant) = rx.try_recv() {
            // Granted but never taken up: give the seats back.
            self.series.executing.dec();
            self.series.executing_seats.dec_by(i64::from(self.width));
            dispatch.finish(
                self.slot,
                self.queue,
                self.width,
                grant.borrowed,
                grant.virtual_cost,
                Duration::ZERO,
            );
            dispatch.dispatch_waiting();
        }
    }
}

impl Pending {
    /// Where the request was classified (for the response headers).
    pub fn classification(&self) -> &Arc<Classification> {
        &self.classification
    }

    /// The outcome when it is already decided (seats free, or a rejection); otherwise the
    /// request is waiting and comes back.
    pub fn decided(self) -> Decision {
        match self.state {
            PendingState::Done(Ok(ticket)) => Decision::Admitted(ticket),
            PendingState::Done(Err(why)) => Decision::Rejected(why),
            state => Decision::Waiting(Pending {
                classification: self.classification,
                state,
            }),
        }
    }

    /// Waits for the request's seats.
    pub async fn admitted(self) -> Result<Ticket, Rejection> {
        match self.state {
            PendingState::Done(outcome) => outcome,
            PendingState::Waiting(wait) => wait.wait().await,
        }
    }
}

impl FlowControl {
    /// A controller for a server of `server_seats` seats whose requests wait in queues at
    /// most `wait_limit`, recording into `metrics`, with the mandatory configuration until
    /// [`Self::put_schema`] and [`Self::put_level`] bring the stored one.
    pub fn new(server_seats: u32, wait_limit: Duration, metrics: Metrics) -> Arc<Self> {
        let control = Arc::new(FlowControl {
            config: RwLock::new(Arc::new(Config::default())),
            objects: Mutex::new(Objects::default()),
            dispatch: Mutex::new(Dispatch::default()),
            metrics,
            server_seats: server_seats.max(1),
            wait_limit,
            next_id: AtomicU64::new(0),
        });
        control.rebuild(&Objects::default());
        control
    }

    /// The metric families.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    fn lock_dispatch(&self) -> std::sync::MutexGuard<'_, Dispatch> {
        self.dispatch.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn current(&self) -> Arc<Config> {
        self.config
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn change(&self, edit: impl FnOnce(&mut Objects)) {
        let mut objects = self.objects.lock().unwrap_or_else(|e| e.into_inner());
        edit(&mut objects);
        self.rebuild(&objects);
    }

    fn rebuild(&self, objects: &Objects) {
        let mut config = Config::build(
            &objects.schemas,
            &objects.levels,
            self.server_seats,
            &self.metrics,
        );
        let mut dispatch = self.lock_dispatch();
        config.slots = dispatch.configure(&config.levels);
        dispatch.dispatch_waiting();
        *self.config.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(config);
    }

    /// A FlowSchema stored or changed.
    pub fn put_schema(&self, schema: &api::FlowSchema) {
        let name = schema.metadata.name.clone().unwrap_or_default();
        self.change(|o| {
            o.schemas.insert(name, schema.clone());
        });
    }

    /// A FlowSchema deleted.
    pub fn remove_schema(&self, name: &str) {
        self.change(|o| {
            o.schemas.remove(name);
        });
    }

    /// A PriorityLevelConfiguration stored or changed.
    pub fn put_level(&self, level: &api::PriorityLevelConfiguration) {
        let name = level.metadata.name.clone().unwrap_or_default();
        self.change(|o| {
            o.levels.insert(name, level.clone());
        });
    }

    /// A PriorityLevelConfiguration deleted.
    pub fn remove_level(&self, name: &str) {
        self.change(|o| {
            o.levels.remove(name);
        });
    }

    /// Whether the priority level `level` is configured (a FlowSchema naming a missing one
    /// is dangling).
    pub fn level_exists(&self, level: &str) -> bool {
        self.current().levels.iter().any(|l| *l.name == *level)
    }

    /// The schema and level of `req`, without taking seats (for long-running requests).
    pub fn classify(&self, req: &RequestAttributes) -> Option<Arc<Classification>> {
        let config = self.current();
        config
            .classify(req)
            .map(|c| c.schema.classification.clone())
    }

    /// Classifies `req` and takes `width` seats for it: at once when free, else after
    /// waiting in its flow's queue (limited by the wait limit), or not at all. `None` when
    /// no schema matches (the request runs without limits, as it would upstream only if the
    /// mandatory catch-all were gone).
    pub fn admit(self: &Arc<Self>, req: &RequestAttributes, width: u32) -> Option<Pending> {
        let config = self.current();
        let classified = config.classify(req)?;
        let schema = classified.schema;
        let level_config = classified.level;
        let classification = schema.classification.clone();
        let series = &schema.series;
        let mut dispatch = self.lock_dispatch();
        let slot = dispatch.slot_of(level_config, classified.slot)?;
        if level_config.exempt {
            let charged = dispatch.start(slot, 0, 1);
            drop(dispatch);
            series.dispatched.inc();
            series.executing.inc();
            series.executing_seats.inc();
            series.waited.observe(0.0);
            let ticket = Ticket {
                control: self.clone(),
                slot,
                queue: 0,
                width: 1,
                borrowed: false,
                charged,
                started: Instant::now(),
                series: series.clone(),
                exempt: true,
            };
            return Some(Pending {
                classification,
                state: PendingState::Done(Ok(ticket)),
            });
        }
        let distinguisher = schema.distinguisher.of(req);
        let hash = classify::flow_hash(&schema.name, distinguisher);
        let level = dispatch.level(slot)?;
        let width = width.clamp(1, level.max_width());
        let queue = level.choose_queue(hash);
        let queuing = level.config.queuing;
        let nobody_waiting = level.waiting == 0;
        if nobody_waiting && let Some(borrowed) = dispatch.try_take(slot, width) {
            let charged = dispatch.start(slot, queue, width);
            drop(dispatch);
            series.dispatched.inc();
            series.executing.inc();
            series.executing_seats.inc_by(i64::from(width));
            series.waited.observe(0.0);
            let ticket = Ticket {
                control: self.clone(),
                slot,
                queue,
                width,
                borrowed,
                charged,
                started: Instant::now(),
                series: series.clone(),
                exempt: false,
            };
            return Some(Pending {
                classification,
                state: PendingState::Done(Ok(ticket)),
            });
        }
        let reject = |dispatch: &mut Dispatch, why: Rejection| {
            if let Some(level) = dispatch.level_mut(slot) {
                level.counters.rejected += 1;
            }
            series.rejected[if why == Rejection::QueueFull { 0 } else { 1 }].inc();
            series.waited_rejected.observe(0.0);
            Some(Pending {
                classification: classification.clone(),
                state: PendingState::Done(Err(why)),
            })
        };
        let Some(queuing) = queuing else {
            return reject(&mut dispatch, Rejection::ConcurrencyLimit);
        };
        let level = dispatch.level(slot).expect("the level just read");
        if level.queues[queue].waiting.len() >= queuing.queue_length_limit as usize {
            return reject(&mut dispatch, Rejection::QueueFull);
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = oneshot::channel();
        let waiter = Waiter {
            id,
            width,
            arrived: Instant::now(),
            tx,
            series: series.clone(),
            summary: RequestSummary {
                schema: schema.name.clone(),
                distinguisher: distinguisher.to_string(),
                user: req.user.to_string(),
                verb: req.verb.to_string(),
                path: req.path.to_string(),
            },
        };
        dispatch.enqueue(slot, queue, waiter);
        // Seats may have been freed by a level that lends, with nobody to pick them up.
        dispatch.dispatch_waiting();
        Some(Pending {
            classification,
            state: PendingState::Waiting(Wait {
                control: self.clone(),
                slot,
                queue,
                id,
                width,
                series: series.clone(),
                rx: Some(rx),
            }),
        })
    }

    /// `/debug/api_priority_and_fairness/dump_priority_levels`.
    pub fn dump_priority_levels(&self) -> String {
        dump::priority_levels(&self.lock_dispatch())
    }

    /// `/debug/api_priority_and_fairness/dump_queues`.
    pub fn dump_queues(&self) -> String {
        dump::queues(&self.lock_dispatch())
    }

    /// `/debug/api_priority_and_fairness/dump_requests` (`details`: user, verb, path too).
    pub fn dump_requests(&self, details: bool) -> String {
        dump::requests(&self.lock_dispatch(), details)
    }
}

#[cfg(test)]
mod tests;
