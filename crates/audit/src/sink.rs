//! Where events go: the log and webhook backends, each blocking (the request waits for the
//! write), blocking-strict (and fails when its RequestReceived event cannot be written) or
//! batched (a bounded buffer emptied by a background task, batches throttled), with
//! truncation of large events and batches, and the `apiserver_audit_*` counters.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use capstan_client::{HttpsClient, RateLimiter};
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use std::sync::atomic::{AtomicBool, Ordering};

use tokio::sync::{Notify, oneshot};

use crate::error::{Error, Result};
use crate::event::{API_VERSION, Event};
use crate::log::{LogFile, LogThread, Rotation};
use crate::policy::Level;

/// How a backend hands events over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Each event is written before the request goes on; failures are counted only.
    Blocking,
    /// As blocking, and a request whose RequestReceived event fails is refused.
    BlockingStrict,
    /// Events are buffered and written in batches in the background.
    Batch,
}

impl Mode {
    /// Parses an option value.
    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        match text {
            "blocking" => Ok(Mode::Blocking),
            "blocking-strict" => Ok(Mode::BlockingStrict),
            "batch" => Ok(Mode::Batch),
            other => Err(format!(
                "invalid audit mode {other:?}, allowed modes are \"batch\", \"blocking\", \"blocking-strict\""
            )),
        }
    }
}

/// The log line format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// One JSON event per line.
    Json,
    /// The one-line text form.
    Legacy,
}

/// The `-batch-*` options of a backend.
#[derive(Debug, Clone)]
pub struct BatchOptions {
    /// Events buffered before new ones are dropped.
    pub buffer_size: usize,
    /// Events per batch at most.
    pub max_size: usize,
    /// How long a short batch waits for more events.
    pub max_wait: Duration,
    /// Whether batches are throttled.
    pub throttle_enable: bool,
    /// Batches per second when throttled.
    pub throttle_qps: f32,
    /// Batches sent at once when the throttle was idle.
    pub throttle_burst: u32,
}

/// The `-truncate-*` options of a backend.
#[derive(Debug, Clone)]
pub struct TruncateOptions {
    /// Whether large events and batches are cut down.
    pub enabled: bool,
    /// Bytes per batch before it is split.
    pub max_batch_size: usize,
    /// Bytes per event before its bodies, then the event itself, are dropped.
    pub max_event_size: usize,
}

/// Where one backend writes.
#[derive(Debug, Clone)]
pub enum Destination {
    /// `--audit-log-path` (`-` for standard output) with its format and rotation.
    Log {
        /// The file.
        path: PathBuf,
        /// The line format.
        format: Format,
        /// Rotation of the file.
        rotation: Rotation,
    },
    /// `--audit-webhook-config-file` (a kubeconfig naming the receiver).
    Webhook {
        /// The kubeconfig.
        config_file: PathBuf,
        /// `--audit-webhook-initial-backoff`: the wait before the first retry.
        initial_backoff: Duration,
    },
}

/// One backend's options.
#[derive(Debug, Clone)]
pub struct BackendOptions {
    /// Where events go.
    pub destination: Destination,
    /// How they are handed over.
    pub mode: Mode,
    /// Batching (batch mode).
    pub batch: BatchOptions,
    /// Truncation.
    pub truncate: TruncateOptions,
}

/// The audit counters, registered by the server.
#[derive(Debug, Clone, Default)]
pub struct AuditMetrics {
    /// `apiserver_audit_event_total`.
    pub events: Counter,
    /// `apiserver_audit_error_total{plugin}`.
    pub errors: Family<Vec<(String, String)>, Counter>,
    /// `apiserver_audit_requests_rejected_total`.
    pub rejected: Counter,
    /// `apiserver_audit_level_total{level}`.
    pub levels: Family<Vec<(String, String)>, Counter>,
    /// The four series of `levels`, looked up once.
    level_series: Arc<std::sync::OnceLock<[Counter; 4]>>,
}

impl AuditMetrics {
    /// Counts one request at `level`.
    pub fn observe_level(&self, level: Level) {
        let series = self.level_series.get_or_init(|| {
            [
                Level::None,
                Level::Metadata,
                Level::Request,
                Level::RequestResponse,
            ]
            .map(|l| {
                self.levels
                    .get_or_create(&vec![("level".into(), l.as_str().into())])
                    .clone()
            })
        });
        series[level as usize].inc();
    }

    fn lost(&self, plugin: &str, events: usize) {
        self.errors
            .get_or_create(&vec![("plugin".into(), plugin.into())])
            .inc_by(events as u64);
    }
}

/// The backends of the server, as one.
pub struct Sink {
    backends: Vec<Backend>,
    metrics: AuditMetrics,
}

struct Backend {
    mode: Mode,
    writer: Arc<Writer>,
    queue: Option<Queue>,
}

/// The buffer of a batched backend. Requests only push (the task is woken when a batch is
/// full or at shutdown); the task takes everything buffered each time it wakes.
struct Queue {
    shared: Arc<Shared>,
    done: Mutex<Option<oneshot::Receiver<()>>>,
}

/// How long a log backend without a batch wait gathers events after the first before
/// writing them: one write (and one wake of the batch task) per millisecond at most,
/// instead of one per event.
const LOG_GATHER: std::time::Duration = std::time::Duration::from_millis(1);

/// Events that wake a gathering log backend at once however young the batch is.
const LOG_GATHER_MAX: usize = 4096;

struct Shared {
    buffer: Mutex<Vec<Arc<Event>>>,
    capacity: usize,
    /// The buffer length that wakes the task.
    max_size: usize,
    /// Whether the first event of an empty buffer wakes the task, which then gathers for
    /// [`LOG_GATHER`] before taking.
    gather: bool,
    wake: Notify,
    stopping: AtomicBool,
}

impl Shared {
    /// Buffers `event`; false when the buffer is full.
    fn push(&self, event: &Arc<Event>) -> bool {
        let mut buffer = self.buffer.lock().unwrap_or_else(|e| e.into_inner());
        if buffer.len() >= self.capacity {
            return false;
        }
        buffer.push(event.clone());
        let wake = buffer.len() >= self.max_size || (self.gather && buffer.len() == 1);
        drop(buffer);
        if wake {
            self.wake.notify_one();
        }
        true
    }

    fn take(&self) -> Vec<Arc<Event>> {
        std::mem::take(&mut *self.buffer.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Sink {
    /// Opens the backends (the log file, the webhook's kubeconfig) and starts the batch
    /// tasks; call from within a tokio runtime.
    pub fn new(options: Vec<BackendOptions>, metrics: AuditMetrics) -> Result<Self> {
        let mut backends = Vec::new();
        for o in options {
            let writer = Arc::new(Writer::open(&o, metrics.clone())?);
            let queue = (o.mode == Mode::Batch).then(|| start_batches(&o, writer.clone()));
            backends.push(Backend {
                mode: o.mode,
                writer,
                queue,
            });
        }
        Ok(Self { backends, metrics })
    }

    /// Whether any backend is configured.
    pub fn is_empty(&self) -> bool {
        self.backends.is_empty()
    }

    /// The counters.
    pub fn metrics(&self) -> &AuditMetrics {
        &self.metrics
    }

    /// Hands `event` to every backend at once when they all buffer it (batch mode), so the
    /// caller need not wait or start a task; gives it back when some backend writes in the
    /// caller's time (blocking modes: use [`Sink::record`]). None when recorded.
    #[must_use = "an event given back is not recorded"]
    pub fn record_buffered(&self, event: Event) -> Option<Event> {
        if self.backends.iter().any(|b| b.queue.is_none()) {
            return Some(event);
        }
        self.metrics.events.inc();
        let event = Arc::new(event);
        for backend in &self.backends {
            if let Some(queue) = &backend.queue {
                self.push(backend, queue, &event);
            }
        }
        None
    }

    fn push(&self, backend: &Backend, queue: &Queue, event: &Arc<Event>) {
        if !queue.shared.push(event) {
            self.metrics.lost(backend.writer.plugin(), 1);
            tracing::warn!(
                plugin = backend.writer.plugin(),
                "audit buffer queue blocked: event dropped"
            );
        }
    }

    /// Hands `event` to every backend; false when a blocking-strict backend failed to
    /// write it.
    pub async fn record(&self, event: Event) -> bool {
        self.metrics.events.inc();
        let event = Arc::new(event);
        let mut ok = true;
        for backend in &self.backends {
            match &backend.queue {
                Some(queue) => self.push(backend, queue, &event),
                None => {
                    let written = backend.writer.write(std::slice::from_ref(&event)).await;
                    if !written && backend.mode == Mode::BlockingStrict {
                        ok = false;
                    }
                }
            }
        }
        ok
    }

    /// Writes out what the batch buffers hold and stops their tasks.
    pub async fn shutdown(&self) {
        for backend in &self.backends {
            if let Some(queue) = &backend.queue {
                queue.shared.stopping.store(true, Ordering::SeqCst);
                queue.shared.wake.notify_one();
                let done = queue.done.lock().unwrap_or_else(|e| e.into_inner()).take();
                if let Some(done) = done {
                    let _ = done.await;
                }
            }
        }
    }
}

fn start_batches(o: &BackendOptions, writer: Arc<Writer>) -> Queue {
    let batch = o.batch.clone();
    let max = batch.max_size.max(1);
    let concurrent = matches!(o.destination, Destination::Webhook { .. });
    // A log file shows no batch boundaries, so without a batch wait its events are gathered
    // briefly instead of written one by one (upstream's defaults make batches of one).
    let gather = !concurrent && batch.max_wait.is_zero();
    let shared = Arc::new(Shared {
        buffer: Mutex::new(Vec::new()),
        capacity: batch.buffer_size.max(1),
        max_size: if gather { LOG_GATHER_MAX } else { max },
        gather,
        wake: Notify::new(),
        stopping: AtomicBool::new(false),
    });
    let (done_tx, done_rx) = oneshot::channel();
    let throttle = batch
        .throttle_enable
        .then(|| RateLimiter::new(batch.throttle_qps, batch.throttle_burst.max(1)));
    let queue = shared.clone();
    tokio::spawn(async move {
        let mut pending = tokio::task::JoinSet::new();
        loop {
            // Read before taking: events pushed before the stop are in this take or a
            // later one.
            let stopping = queue.stopping.load(Ordering::SeqCst);
            let events = queue.take();
            if events.is_empty() {
                if stopping {
                    break;
                }
                if batch.max_wait.is_zero() {
                    queue.wake.notified().await;
                    if gather && !queue.stopping.load(Ordering::SeqCst) {
                        tokio::select! {
                            () = queue.wake.notified() => {}
                            () = tokio::time::sleep(LOG_GATHER) => {}
                        }
                    }
                } else {
                    tokio::select! {
                        () = queue.wake.notified() => {}
                        () = tokio::time::sleep(batch.max_wait) => {}
                    }
                }
                continue;
            }
            if concurrent {
                for chunk in events.chunks(max) {
                    if let Some(t) = &throttle {
                        t.acquire().await;
                    }
                    let writer = writer.clone();
                    let chunk = chunk.to_vec();
                    pending.spawn(async move { writer.write(&chunk).await });
                }
            } else {
                // A file has no batch boundaries to keep: what was taken is written at once
                // (one write, not one per batch of --audit-log-batch-max-size, whose default
                // of 1 would cost a system call per event), once the throttle has let every
                // batch in it pass.
                if let Some(t) = &throttle {
                    for _ in events.chunks(max) {
                        t.acquire().await;
                    }
                }
                writer.write(&events).await;
            }
            // A short batch waits for more events (a full one woke the task early).
            if events.len() < max && !stopping && !batch.max_wait.is_zero() {
                tokio::select! {
                    () = queue.wake.notified() => {}
                    () = tokio::time::sleep(batch.max_wait) => {}
                }
            }
        }
        while pending.join_next().await.is_some() {}
        let _ = done_tx.send(());
    });
    Queue {
        shared,
        done: Mutex::new(Some(done_rx)),
    }
}

/// Writes batches of events to one destination.
struct Writer {
    target: Target,
    truncate: TruncateOptions,
    metrics: AuditMetrics,
}

enum Target {
    Log {
        file: LogThread,
        format: Format,
    },
    Webhook {
        client: Box<HttpsClient>,
        url: String,
        initial_backoff: Duration,
    },
}

/// How long one webhook request may take.
const WEBHOOK_TIMEOUT: Duration = Duration::from_secs(30);
/// Tries of one batch.
const WEBHOOK_TRIES: u32 = 5;

impl Writer {
    fn open(o: &BackendOptions, metrics: AuditMetrics) -> Result<Self> {
        let target = match &o.destination {
            Destination::Log {
                path,
                format,
                rotation,
            } => Target::Log {
                file: LogThread::start(LogFile::open(path, rotation.clone())?)?,
                format: *format,
            },
            Destination::Webhook {
                config_file,
                initial_backoff,
            } => {
                let config = capstan_client::Config::from_kubeconfig(config_file, None)
                    .map_err(|e| Error::Webhook(format!("{}: {e}", config_file.display())))?;
                let client = HttpsClient::new(&config, WEBHOOK_TIMEOUT)
                    .map_err(|e| Error::Webhook(format!("{}: {e}", config_file.display())))?;
                Target::Webhook {
                    client: Box::new(client),
                    url: config.server.clone(),
                    initial_backoff: *initial_backoff,
                }
            }
        };
        Ok(Self {
            target,
            truncate: o.truncate.clone(),
            metrics,
        })
    }

    fn plugin(&self) -> &'static str {
        match self.target {
            Target::Log { .. } => "log",
            Target::Webhook { .. } => "webhook",
        }
    }

    /// Each event's encoding, truncated as configured (events too large even without their
    /// bodies are dropped and counted).
    fn encode(&self, events: &[Arc<Event>], legacy: bool) -> Vec<Vec<u8>> {
        let mut out = Vec::with_capacity(events.len());
        for ev in events {
            let encode = |ev: &Event| {
                if legacy {
                    ev.legacy_line().into_bytes()
                } else {
                    ev.to_json()
                }
            };
            let mut bytes = encode(ev);
            if self.truncate.enabled && bytes.len() > self.truncate.max_event_size {
                bytes = encode(&ev.without_bodies());
                if bytes.len() > self.truncate.max_event_size {
                    self.metrics.lost(self.plugin(), 1);
                    tracing::warn!(
                        plugin = self.plugin(),
                        audit_id = %ev.request.audit_id,
                        "audit event larger than the truncate limit dropped"
                    );
                    continue;
                }
            }
            out.push(bytes);
        }
        out
    }

    /// Writes `events`; false when some were lost (counted).
    async fn write(&self, events: &[Arc<Event>]) -> bool {
        match &self.target {
            Target::Log { file, format } => {
                let encoded = self.encode(events, *format == Format::Legacy);
                let mut lines = Vec::with_capacity(encoded.iter().map(|e| e.len() + 1).sum());
                for e in &encoded {
                    lines.extend_from_slice(e);
                    lines.push(b'\n');
                }
                let written = file.write(lines).await;
                match written {
                    Ok(()) => encoded.len() == events.len(),
                    Err(e) => {
                        self.metrics.lost("log", encoded.len());
                        tracing::error!(error = %e, "writing audit events failed");
                        false
                    }
                }
            }
            Target::Webhook {
                client,
                url,
                initial_backoff,
            } => {
                let encoded = self.encode(events, false);
                let mut all = encoded.len() == events.len();
                for batch in self.split(&encoded) {
                    let body = event_list(batch);
                    if let Err(e) = send(client, url, body, *initial_backoff).await {
                        self.metrics.lost("webhook", batch.len());
                        tracing::error!(error = %e, events = batch.len(), "audit webhook failed");
                        all = false;
                    }
                }
                all
            }
        }
    }

    /// `encoded` in runs whose list stays under the batch size limit (when truncating).
    fn split<'a>(&self, encoded: &'a [Vec<u8>]) -> Vec<&'a [Vec<u8>]> {
        if !self.truncate.enabled {
            return vec![encoded];
        }
        let mut runs = Vec::new();
        let (mut start, mut size) = (0, 0);
        for (i, e) in encoded.iter().enumerate() {
            if i > start && size + e.len() + 1 > self.truncate.max_batch_size {
                runs.push(&encoded[start..i]);
                (start, size) = (i, 0);
            }
            size += e.len() + 1;
        }
        if start < encoded.len() {
            runs.push(&encoded[start..]);
        }
        runs
    }
}

/// An `EventList` of encoded events.
fn event_list(items: &[Vec<u8>]) -> Bytes {
    let mut body = Vec::with_capacity(items.iter().map(|i| i.len() + 1).sum::<usize>() + 80);
    body.extend_from_slice(
        format!(r#"{{"kind":"EventList","apiVersion":"{API_VERSION}","metadata":{{}},"items":["#)
            .as_bytes(),
    );
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            body.push(b',');
        }
        body.extend_from_slice(item);
    }
    body.extend_from_slice(b"]}");
    body.into()
}

/// Posts `body`, retrying connection errors, 429s and 5xx answers with a growing wait.
async fn send(
    client: &HttpsClient,
    url: &str,
    body: Bytes,
    initial_backoff: Duration,
) -> std::result::Result<(), String> {
    let mut wait = initial_backoff;
    let mut last = String::new();
    for attempt in 0..WEBHOOK_TRIES {
        if attempt > 0 {
            tokio::time::sleep(wait).await;
            wait = wait.mul_f64(1.5);
        }
        match client
            .request(
                http::Method::POST,
                url,
                Some("application/json"),
                body.clone(),
            )
            .await
        {
            Ok((status, _)) if status.is_success() => return Ok(()),
            Ok((status, answer)) => {
                last = format!(
                    "{url} answered {status}: {}",
                    String::from_utf8_lossy(&answer[..answer.len().min(256)])
                );
                if !(status.is_server_error() || status.as_u16() == 429) {
                    return Err(last);
                }
            }
            Err(e) => last = e.to_string(),
        }
    }
    Err(last)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Stage;

    fn options(path: PathBuf, mode: Mode, truncate: bool) -> BackendOptions {
        BackendOptions {
            destination: Destination::Log {
                path,
                format: Format::Json,
                rotation: Rotation::default(),
            },
            mode,
            batch: BatchOptions {
                buffer_size: 4,
                max_size: 3,
                max_wait: Duration::from_millis(20),
                throttle_enable: false,
                throttle_qps: 0.0,
                throttle_burst: 0,
            },
            truncate: TruncateOptions {
                enabled: truncate,
                max_batch_size: 10 * 1024 * 1024,
                max_event_size: 900,
            },
        }
    }

    fn lines(path: &std::path::Path) -> Vec<serde_json::Value> {
        std::fs::read_to_string(path)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    #[tokio::test]
    async fn batches_are_written_and_drained_at_shutdown() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.log");
        let sink = Sink::new(
            vec![options(path.clone(), Mode::Batch, false)],
            AuditMetrics::default(),
        )
        .unwrap();
        for _ in 0..3 {
            assert!(
                sink.record(crate::event::tests::sample(Stage::ResponseComplete))
                    .await
            );
        }
        sink.shutdown().await;
        assert_eq!(lines(&path).len(), 3);
        assert_eq!(sink.metrics().events.get(), 3);
    }

    #[tokio::test]
    async fn a_full_buffer_drops_and_counts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.log");
        let sink = Sink::new(
            vec![options(path.clone(), Mode::Batch, false)],
            AuditMetrics::default(),
        )
        .unwrap();
        // No await between the records: the batch task cannot run, the buffer holds 4.
        let events: Vec<_> = (0..10)
            .map(|_| crate::event::tests::sample(Stage::ResponseComplete))
            .collect();
        for ev in events {
            assert!(sink.record(ev).await, "batch mode never refuses a request");
        }
        sink.shutdown().await;
        let lost = sink
            .metrics()
            .errors
            .get_or_create(&vec![("plugin".into(), "log".into())])
            .get();
        assert_eq!(lines(&path).len() as u64 + lost, 10);
        assert!(lost >= 6, "{lost}");
    }

    #[tokio::test]
    async fn truncation_drops_bodies_then_events() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.log");
        let sink = Sink::new(
            vec![options(path.clone(), Mode::Blocking, true)],
            AuditMetrics::default(),
        )
        .unwrap();
        let mut big = crate::event::tests::sample(Stage::ResponseComplete);
        big.request_object =
            crate::event::raw_json(format!(r#"{{"data":"{}"}}"#, "x".repeat(1000)).as_bytes());
        assert!(sink.record(big.clone()).await);
        let written = lines(&path);
        assert_eq!(written.len(), 1);
        assert!(written[0].get("requestObject").is_none());
        assert_eq!(written[0]["auditID"], big.request.audit_id);

        let mut huge = big;
        let record = Arc::make_mut(&mut huge.request);
        record.request_uri = "/".repeat(1000);
        record.encoded = Default::default();
        assert!(sink.record(huge).await, "blocking mode does not refuse");
        assert_eq!(lines(&path).len(), 1);
        assert_eq!(
            sink.metrics()
                .errors
                .get_or_create(&vec![("plugin".into(), "log".into())])
                .get(),
            1
        );
    }

    #[tokio::test]
    async fn only_blocking_strict_refuses_on_a_failed_write() {
        // Writes to /dev/full fail with ENOSPC.
        let full = PathBuf::from("/dev/full");
        for (mode, accepted) in [(Mode::Blocking, true), (Mode::BlockingStrict, false)] {
            let sink = Sink::new(
                vec![options(full.clone(), mode, false)],
                AuditMetrics::default(),
            )
            .unwrap();
            let ev = crate::event::tests::sample(Stage::RequestReceived);
            assert_eq!(sink.record(ev).await, accepted, "{mode:?}");
            let lost = sink
                .metrics()
                .errors
                .get_or_create(&vec![("plugin".into(), "log".into())])
                .get();
            assert_eq!(lost, 1);
        }
    }
}
