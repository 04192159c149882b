//! [`EtcdStore`]: the storage trait over etcd's KV, Watch and Maintenance services.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use bytes::Bytes;
use capstan_storage::{
    CompactionTurn, Error as StoreError, Event, EventKind, KeyValue, ListRequest, ListResponse,
    Result, Revision, Store, WatchStream,
};
use etcd_client::{
    Certificate, Client, CompactionOptions, Compare, CompareOp, ConnectOptions, DeleteOptions,
    EventType, GetOptions, Identity, KvClient, PutOptions, TlsOptions, Txn, TxnOp, TxnOpResponse,
    WatchClient, WatchOptions,
};
use futures_util::StreamExt;
use tokio::sync::{Notify, mpsc};
use tracing::debug;

use crate::{Error, EtcdConfig};

/// How often a watch asks etcd for a progress notification when nothing else asked.
const PROGRESS_INTERVAL: Duration = Duration::from_secs(5);
/// Events a watch may have buffered before its reader is too slow.
const WATCH_BUFFER: usize = 1024;
/// A watch that has heard nothing from etcd for this long (two progress requests unanswered)
/// fails the readiness check.
const WATCH_SILENT: Duration = Duration::from_secs(10);
/// A watch that has heard nothing for this long ends (its reader starts over, through another
/// member if the one it was on is cut off).
const WATCH_STALLED: Duration = Duration::from_secs(15);

/// When each live watch last heard from etcd, for the readiness check.
#[derive(Default)]
struct WatchHealth {
    next: AtomicU64,
    heard: std::sync::Mutex<std::collections::HashMap<u64, (String, Instant)>>,
}

impl WatchHealth {
    fn lock(&self) -> std::sync::MutexGuard<'_, std::collections::HashMap<u64, (String, Instant)>> {
        self.heard.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn register(&self, prefix: &str) -> u64 {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        self.lock().insert(id, (prefix.to_string(), Instant::now()));
        id
    }

    fn heard(&self, id: u64) {
        if let Some(entry) = self.lock().get_mut(&id) {
            entry.1 = Instant::now();
        }
    }

    fn forget(&self, id: u64) {
        self.lock().remove(&id);
    }

    /// The prefix of a watch silent for longer than `limit`, if any.
    fn silent(&self, limit: Duration) -> Option<(String, Duration)> {
        self.lock()
            .values()
            .map(|(prefix, at)| (prefix.clone(), at.elapsed()))
            .find(|(_, silent)| *silent > limit)
    }
}

/// Removes a watch from [`WatchHealth`] when its task ends.
struct Forget<'a>(&'a WatchHealth, u64);

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        self.0.forget(self.1);
    }
}

/// The largest answer taken from etcd: its Go client's default (`math.MaxInt32`), which
/// upstream's kube-apiserver keeps. gRPC's own default, 4 MiB, refuses a range read of a few
/// thousand pods, and with it the watch cache's list of them.
const MAX_ANSWER_BYTES: usize = i32::MAX as usize;

/// A [`Store`] on an etcd v3 cluster.
#[derive(Clone)]
pub struct EtcdStore {
    client: Client,
    /// The client's key-value and watch services, taking answers up to [`MAX_ANSWER_BYTES`].
    kv: KvClient,
    watch: WatchClient,
    /// The newest compaction this process made or observed.
    compacted: Arc<AtomicU64>,
    /// Woken when a reader wants every watch to report its progress.
    progress_wanted: Arc<Notify>,
    timeout: Duration,
    /// Whether the server's progress notifications can be trusted (its version).
    consistent_progress: bool,
    /// When each watch last heard from etcd.
    watches: Arc<WatchHealth>,
}

impl std::fmt::Debug for EtcdStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EtcdStore").finish_non_exhaustive()
    }
}

impl EtcdStore {
    /// Connects to the cluster of `config` (TLS when a CA or a client certificate is given).
    pub async fn connect(config: &EtcdConfig) -> Result<Self, Error> {
        if config.endpoints.is_empty() {
            return Err(Error::Config("no etcd endpoints".into()));
        }
        let mut options = ConnectOptions::new()
            .with_connect_timeout(config.dial_timeout)
            .with_timeout(config.request_timeout)
            .with_keep_alive(Duration::from_secs(30), Duration::from_secs(10))
            // A member cut off from its peers refuses requests and ends watches ("no
            // leader") instead of serving stale reads and silent watches (upstream sets it on
            // its watches).
            .with_require_leader(true);
        let tls_wanted = config.ca_file.is_some()
            || config.cert_file.is_some()
            || config.endpoints.iter().any(|e| e.starts_with("https://"));
        if tls_wanted {
            let mut tls = TlsOptions::new();
            if let Some(ca) = &config.ca_file {
                tls = tls.ca_certificate(Certificate::from_pem(read(ca)?));
            }
            match (&config.cert_file, &config.key_file) {
                (Some(cert), Some(key)) => {
                    tls = tls.identity(Identity::from_pem(read(cert)?, read(key)?));
                }
                (None, None) => {}
                _ => {
                    return Err(Error::Config(
                        "--etcd-certfile and --etcd-keyfile must be given together".into(),
                    ));
                }
            }
            options = options.with_tls(tls);
        }
        let client = Client::connect(&config.endpoints, Some(options))
            .await
            .map_err(|e| Error::Connect {
                endpoints: config.endpoints.join(","),
                message: e.to_string(),
            })?;
        let mut store = Self {
            kv: client
                .kv_client()
                .max_decoding_message_size(MAX_ANSWER_BYTES),
            watch: client
                .watch_client()
                .max_decoding_message_size(MAX_ANSWER_BYTES),
            client,
            compacted: Arc::new(AtomicU64::new(0)),
            progress_wanted: Arc::new(Notify::new()),
            timeout: config.request_timeout,
            consistent_progress: false,
            watches: Arc::default(),
        };
        // Unknown (etcd unreachable for now) counts as not reliable: reads stay correct.
        let mut maintenance = store.client.maintenance_client();
        if let Ok(status) = store.call("status", maintenance.status()).await {
            store.consistent_progress = progress_is_consistent(status.version());
            if !store.consistent_progress {
                tracing::info!(
                    version = status.version(),
                    "etcd may report watch progress ahead of events (fixed in 3.4.31 and 3.5.13): \
                     consistent lists read etcd instead of the watch cache"
                );
            }
        }
        Ok(store)
    }

    /// Runs one request with the configured timeout.
    async fn call<T>(
        &self,
        what: &str,
        request: impl Future<Output = std::result::Result<T, etcd_client::Error>>,
    ) -> Result<T> {
        match tokio::time::timeout(self.timeout, request).await {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(err)) => Err(self.classify(what, err)),
            Err(_) => Err(StoreError::Timeout(format!(
                "etcd did not answer {what} within {:?}",
                self.timeout
            ))),
        }
    }

    /// The storage error of an etcd failure.
    fn classify(&self, what: &str, err: etcd_client::Error) -> StoreError {
        let message = err.to_string();
        if let etcd_client::Error::GRpcStatus(status) = &err {
            use tonic_code::*;
            match status.code() as i32 {
                // etcd's two revision errors share a code and differ in their fixed
                // descriptions (what etcd's own client compares, too).
                OUT_OF_RANGE if status.message() == COMPACTED => {
                    return StoreError::Compacted {
                        requested: 0,
                        compacted: self.compacted.load(Ordering::Relaxed),
                    };
                }
                OUT_OF_RANGE if status.message() == FUTURE_REVISION => {
                    return StoreError::FutureRevision {
                        requested: 0,
                        current: 0,
                    };
                }
                DEADLINE_EXCEEDED => {
                    return StoreError::Timeout(format!("etcd {what}: {}", status.message()));
                }
                UNAVAILABLE | CANCELLED | UNKNOWN | RESOURCE_EXHAUSTED => {
                    return StoreError::Unavailable(format!("etcd {what}: {}", status.message()));
                }
                _ => {}
            }
        }
        match err {
            etcd_client::Error::TransportError(_) | etcd_client::Error::IoError(_) => {
                StoreError::Unavailable(format!("etcd {what}: {message}"))
            }
            _ => StoreError::Backend(format!("etcd {what}: {message}")),
        }
    }

    fn revision_of(header: Option<&etcd_client::ResponseHeader>) -> Revision {
        Revision(header.map_or(0, |h| h.revision()).max(0) as u64)
    }

    fn key_value(kv: &etcd_client::KeyValue) -> Result<KeyValue> {
        let key = std::str::from_utf8(kv.key())
            .map_err(|_| StoreError::Corrupt("an etcd key is not UTF-8".into()))?;
        Ok(KeyValue {
            key: key.to_string(),
            value: Bytes::copy_from_slice(kv.value()),
            create_revision: Revision(kv.create_revision().max(0) as u64),
            mod_revision: Revision(kv.mod_revision().max(0) as u64),
        })
    }

    /// The current value of `key` read inside a failed transaction's else branch.
    /// A failed guarded write: `Conflict` with the value its else-branch read (or the
    /// error reading it, e.g. `NotFound`).
    fn conflict(response: etcd_client::TxnResponse, key: &str) -> StoreError {
        match Self::current_from(response.op_responses(), key) {
            Ok(current) => StoreError::Conflict {
                key: key.into(),
                current: Box::new(current),
            },
            Err(err) => err,
        }
    }

    fn current_from(responses: Vec<TxnOpResponse>, key: &str) -> Result<KeyValue> {
        for response in responses {
            if let TxnOpResponse::Get(get) = response {
                return match get.kvs().first() {
                    Some(kv) => Self::key_value(kv),
                    None => Err(StoreError::NotFound { key: key.into() }),
                };
            }
        }
        Err(StoreError::NotFound { key: key.into() })
    }

    /// Errors for a revision outside the history: too old or too new.
    async fn check_revision(&self, requested: Revision, err: StoreError) -> StoreError {
        match err {
            StoreError::Compacted { compacted, .. } => StoreError::Compacted {
                requested: requested.0,
                compacted,
            },
            StoreError::FutureRevision { .. } => {
                let current = self.current_revision_quiet().await.unwrap_or_default();
                StoreError::FutureRevision {
                    requested: requested.0,
                    current: current.0,
                }
            }
            other => other,
        }
    }

    async fn current_revision_quiet(&self) -> Result<Revision> {
        let mut kv = self.kv.clone();
        let response = self
            .call(
                "reading the revision",
                kv.get(
                    "\u{0}",
                    Some(GetOptions::new().with_count_only().with_limit(1)),
                ),
            )
            .await?;
        Ok(Self::revision_of(response.header()))
    }
}

/// gRPC status codes, by number (tonic's `Code` is not re-exported by etcd-client).
mod tonic_code {
    pub const CANCELLED: i32 = 1;
    pub const UNKNOWN: i32 = 2;
    pub const DEADLINE_EXCEEDED: i32 = 4;
    pub const RESOURCE_EXHAUSTED: i32 = 8;
    pub const OUT_OF_RANGE: i32 = 11;
    pub const UNAVAILABLE: i32 = 14;
    /// etcd's `ErrGRPCCompacted` description.
    pub const COMPACTED: &str = "etcdserver: mvcc: required revision has been compacted";
    /// etcd's `ErrGRPCFutureRev` description.
    pub const FUTURE_REVISION: &str = "etcdserver: mvcc: required revision is a future revision";
}

/// Whether an etcd server version sends progress notifications only for watches that are
/// in sync (etcd-io/etcd#15220, fixed in 3.4.31, 3.5.13 and 3.6).
fn progress_is_consistent(version: &str) -> bool {
    let mut parts = version
        .trim_start_matches('v')
        .split(['.', '-'])
        .map(|p| p.parse::<u64>().unwrap_or(0));
    let (major, minor, patch) = (
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
        parts.next().unwrap_or(0),
    );
    match (major, minor) {
        (3, 4) => patch >= 31,
        (3, 5) => patch >= 13,
        (3, m) => m >= 6,
        (m, _) => m > 3,
    }
}

fn read(path: &std::path::Path) -> Result<Vec<u8>, Error> {
    std::fs::read(path).map_err(|source| Error::File {
        path: path.to_path_buf(),
        source,
    })
}

/// The first key after every key with `prefix` (etcd's range end for a prefix).
fn prefix_end(prefix: &str) -> Vec<u8> {
    let mut end = prefix.as_bytes().to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    vec![0]
}

#[async_trait]
impl Store for EtcdStore {
    async fn get(&self, key: &str) -> Result<(Option<KeyValue>, Revision)> {
        let mut kv = self.kv.clone();
        let response = self.call("get", kv.get(key, None)).await?;
        let value = response.kvs().first().map(Self::key_value).transpose()?;
        Ok((value, Self::revision_of(response.header())))
    }

    async fn list(&self, request: ListRequest<'_>) -> Result<ListResponse> {
        let mut options = GetOptions::new().with_range(prefix_end(request.prefix));
        if request.limit > 0 {
            options = options.with_limit(request.limit as i64);
        }
        if let Some(revision) = request.revision {
            options = options.with_revision(revision.0 as i64);
        }
        let start = request.start.unwrap_or(request.prefix);
        let mut kv = self.kv.clone();
        let response = match self.call("list", kv.get(start, Some(options))).await {
            Ok(response) => response,
            Err(err) => {
                return Err(match request.revision {
                    Some(revision) => self.check_revision(revision, err).await,
                    None => err,
                });
            }
        };
        let items = response
            .kvs()
            .iter()
            .map(Self::key_value)
            .collect::<Result<Vec<_>>>()?;
        Ok(ListResponse {
            items,
            revision: request
                .revision
                .unwrap_or_else(|| Self::revision_of(response.header())),
            more: response.more(),
        })
    }

    async fn create(&self, key: &str, value: Bytes) -> Result<KeyValue> {
        let txn = Txn::new()
            .when([Compare::create_revision(key, CompareOp::Equal, 0)])
            .and_then([TxnOp::put(key, value.to_vec(), None)]);
        let mut kv = self.kv.clone();
        let response = self.call("create", kv.txn(txn)).await?;
        if !response.succeeded() {
            return Err(StoreError::AlreadyExists { key: key.into() });
        }
        let revision = Self::revision_of(response.header());
        Ok(KeyValue {
            key: key.into(),
            value,
            create_revision: revision,
            mod_revision: revision,
        })
    }

    /// A put attached to a new lease of `ttl` (at least a second), as upstream writes its
    /// master leases.
    async fn put_with_ttl(&self, key: &str, value: Bytes, ttl: Duration) -> Result<KeyValue> {
        let mut leases = self.client.lease_client();
        let lease = self
            .call(
                "lease grant",
                leases.grant(ttl.as_secs().max(1) as i64, None),
            )
            .await?;
        let mut kv = self.kv.clone();
        let options = PutOptions::new().with_lease(lease.id()).with_prev_key();
        let response = self
            .call("put", kv.put(key, value.to_vec(), Some(options)))
            .await?;
        let revision = Self::revision_of(response.header());
        let created = response.prev_key().map_or(revision, |prev| {
            Revision(prev.create_revision().max(0) as u64)
        });
        Ok(KeyValue {
            key: key.into(),
            value,
            create_revision: created,
            mod_revision: revision,
        })
    }

    fn expires_keys(&self) -> bool {
        true
    }

    async fn update(&self, key: &str, value: Bytes, expected: Revision) -> Result<KeyValue> {
        let txn = Txn::new()
            .when([Compare::mod_revision(
                key,
                CompareOp::Equal,
                expected.0 as i64,
            )])
            .and_then([
                TxnOp::put(key, value.to_vec(), None),
                TxnOp::get(key, Some(GetOptions::new().with_keys_only())),
            ])
            .or_else([TxnOp::get(key, None)]);
        let mut kv = self.kv.clone();
        let response = self.call("update", kv.txn(txn)).await?;
        let revision = Self::revision_of(response.header());
        if !response.succeeded() {
            return Err(Self::conflict(response, key));
        }
        let written = Self::current_from(response.op_responses(), key)?;
        Ok(KeyValue {
            key: key.into(),
            value,
            create_revision: written.create_revision,
            mod_revision: revision,
        })
    }

    async fn delete(&self, key: &str, expected: Option<Revision>) -> Result<KeyValue> {
        let compare = match expected {
            Some(rev) => Compare::mod_revision(key, CompareOp::Equal, rev.0 as i64),
            None => Compare::create_revision(key, CompareOp::Greater, 0),
        };
        let txn = Txn::new()
            .when([compare])
            .and_then([TxnOp::delete(
                key,
                Some(DeleteOptions::new().with_prev_key()),
            )])
            .or_else([TxnOp::get(key, None)]);
        let mut kv = self.kv.clone();
        let response = self.call("delete", kv.txn(txn)).await?;
        let revision = Self::revision_of(response.header());
        if !response.succeeded() {
            return Err(Self::conflict(response, key));
        }
        for op in response.op_responses() {
            if let TxnOpResponse::Delete(deleted) = op
                && let Some(prev) = deleted.prev_kvs().first()
            {
                let mut kv = Self::key_value(prev)?;
                kv.mod_revision = revision;
                return Ok(kv);
            }
        }
        Err(StoreError::NotFound { key: key.into() })
    }

    async fn ping(&self) -> Result<()> {
        if let Some((prefix, silent)) = self.watches.silent(WATCH_SILENT) {
            return Err(StoreError::Unavailable(format!(
                "the etcd watch of {prefix} has heard nothing for {} s",
                silent.as_secs()
            )));
        }
        self.current_revision_quiet().await.map(|_| ())
    }

    async fn count(&self, prefix: &str) -> Result<u64> {
        let options = GetOptions::new()
            .with_range(prefix_end(prefix))
            .with_count_only();
        let mut kv = self.kv.clone();
        let response = self.call("count", kv.get(prefix, Some(options))).await?;
        Ok(response.count().max(0) as u64)
    }

    async fn size_bytes(&self) -> Result<Option<u64>> {
        let mut maintenance = self.client.maintenance_client();
        let status = self.call("status", maintenance.status()).await?;
        Ok(Some(status.db_size().max(0) as u64))
    }

    fn consistent_progress(&self) -> bool {
        self.consistent_progress
    }

    async fn current_revision(&self) -> Result<Revision> {
        // A reader that asks is about to wait for watches to catch up: ask them to report.
        self.request_progress();
        self.current_revision_quiet().await
    }

    fn request_progress(&self) {
        self.progress_wanted.notify_waiters();
    }

    async fn watch(&self, prefix: &str, from: Revision) -> Result<WatchStream> {
        // etcd reports a compacted start only after the watch is created: a read at `from`
        // answers the same question up front (it fails exactly when `from` is compacted).
        if from.0 > 0 {
            let mut kv = self.kv.clone();
            let probe = GetOptions::new()
                .with_count_only()
                .with_revision(from.0 as i64);
            if let Err(err) = self.call("watch", kv.get(prefix, Some(probe))).await {
                return Err(self.check_revision(from, err).await);
            }
        }
        let options = WatchOptions::new()
            .with_range(prefix_end(prefix))
            .with_start_revision(from.0 as i64 + 1)
            .with_prev_key()
            .with_progress_notify();
        let mut client = self.watch.clone();
        let stream = self
            .call("watch", client.watch(prefix, Some(options)))
            .await?;
        let (mut requests, mut responses) = stream.split();
        let (tx, rx) = mpsc::channel::<Result<Event>>(WATCH_BUFFER);
        let wanted = self.progress_wanted.clone();
        let compacted = self.compacted.clone();
        let prefix = prefix.to_string();
        let health = self.watches.clone();
        let id = health.register(&prefix);
        tokio::spawn(async move {
            let _registered = Forget(&health, id);
            let mut ticker = tokio::time::interval(PROGRESS_INTERVAL);
            ticker.tick().await;
            let mut heard = Instant::now();
            loop {
                let response = tokio::select! {
                    response = responses.next() => response,
                    () = wanted.notified() => {
                        let _ = requests.request_progress().await;
                        continue;
                    }
                    _ = ticker.tick() => {
                        if heard.elapsed() > WATCH_STALLED {
                            let _ = tx
                                .send(Err(StoreError::Unavailable(format!(
                                    "the etcd watch of {prefix} heard nothing for {} s",
                                    heard.elapsed().as_secs()
                                ))))
                                .await;
                            return;
                        }
                        let _ = requests.request_progress().await;
                        continue;
                    }
                    () = tx.closed() => return,
                };
                heard = Instant::now();
                health.heard(id);
                let response = match response {
                    Some(Ok(response)) => response,
                    Some(Err(err)) => {
                        let _ = tx
                            .send(Err(StoreError::Unavailable(format!(
                                "etcd watch of {prefix}: {err}"
                            ))))
                            .await;
                        return;
                    }
                    None => {
                        let _ = tx
                            .send(Err(StoreError::Unavailable(format!(
                                "etcd ended the watch of {prefix}"
                            ))))
                            .await;
                        return;
                    }
                };
                if response.compact_revision() > 0 {
                    let at = response.compact_revision() as u64;
                    compacted.fetch_max(at, Ordering::Relaxed);
                    let _ = tx
                        .send(Err(StoreError::Compacted {
                            requested: from.0,
                            compacted: at,
                        }))
                        .await;
                    return;
                }
                if response.canceled() {
                    let _ = tx
                        .send(Err(StoreError::Unavailable(format!(
                            "etcd canceled the watch of {prefix}: {}",
                            response.cancel_reason()
                        ))))
                        .await;
                    return;
                }
                let revision = EtcdStore::revision_of(response.header());
                if response.events().is_empty() {
                    if !response.created() && tx.send(Ok(Event::progress(revision))).await.is_err()
                    {
                        return;
                    }
                    continue;
                }
                for event in response.events() {
                    let converted = match (event.event_type(), event.kv()) {
                        (EventType::Put, Some(kv)) => EtcdStore::key_value(kv).map(|kv| Event {
                            kind: EventKind::Put,
                            kv,
                        }),
                        (EventType::Delete, Some(kv)) => {
                            let deleted_at = Revision(kv.mod_revision().max(0) as u64);
                            match event.prev_kv() {
                                Some(prev) => EtcdStore::key_value(prev).map(|mut prev| {
                                    prev.mod_revision = deleted_at;
                                    Event {
                                        kind: EventKind::Delete,
                                        kv: prev,
                                    }
                                }),
                                // etcd gives no previous value when it was compacted away
                                // before the watcher read the delete: not an empty object.
                                None => Err(StoreError::Corrupt(format!(
                                    "etcd sent the delete of {:?} at revision {} without its \
                                     previous value",
                                    String::from_utf8_lossy(kv.key()),
                                    deleted_at.0
                                ))),
                            }
                        }
                        _ => continue,
                    };
                    if tx.send(converted).await.is_err() {
                        return;
                    }
                }
            }
        });
        debug!(from = from.0, "etcd watch started");
        Ok(tokio_stream_from(rx))
    }

    async fn compact(&self, revision: Revision) -> Result<()> {
        let mut kv = self.kv.clone();
        match self
            .call(
                "compact",
                kv.compact(
                    revision.0 as i64,
                    Some(CompactionOptions::new().with_physical()),
                ),
            )
            .await
        {
            Ok(_) | Err(StoreError::Compacted { .. }) => {
                self.compacted.fetch_max(revision.0, Ordering::Relaxed);
                Ok(())
            }
            Err(err) => Err(err),
        }
    }

    async fn compacted_revision(&self) -> Result<Revision> {
        Ok(Revision(self.compacted.load(Ordering::Relaxed)))
    }

    /// Upstream's protocol, so that Capstan and kube-apiservers on one etcd take turns with
    /// each other: the version of the key `compact_rev_key` counts the rounds; whoever
    /// raises it from the round it last saw (a compare-and-swap that also stores the target)
    /// compacts, the others learn the new round.
    async fn compaction_turn(&self, seen: u64, target: Revision) -> Result<CompactionTurn> {
        let txn = Txn::new()
            .when([Compare::version(
                COMPACT_REV_KEY,
                CompareOp::Equal,
                seen as i64,
            )])
            .and_then([TxnOp::put(COMPACT_REV_KEY, target.0.to_string(), None)])
            .or_else([TxnOp::get(COMPACT_REV_KEY, None)]);
        let mut kv = self.kv.clone();
        let response = self.call("taking the compaction turn", kv.txn(txn)).await?;
        let current = Self::revision_of(response.header());
        if response.succeeded() {
            return Ok(CompactionTurn {
                granted: true,
                round: seen + 1,
                current,
            });
        }
        let round = response
            .op_responses()
            .into_iter()
            .find_map(|op| match op {
                TxnOpResponse::Get(get) => get.kvs().first().map(|kv| kv.version()),
                _ => None,
            })
            .unwrap_or(0);
        Ok(CompactionTurn {
            granted: false,
            round: round.max(0) as u64,
            current,
        })
    }
}

/// The key whose version counts compaction rounds (upstream's name, outside any prefix).
const COMPACT_REV_KEY: &str = "compact_rev_key";

/// A receiver as a boxed stream.
fn tokio_stream_from(mut rx: mpsc::Receiver<Result<Event>>) -> WatchStream {
    Box::pin(futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx)))
}

#[cfg(test)]
mod version_tests {
    #[test]
    fn progress_fix_versions() {
        for (version, fixed) in [
            ("3.4.23", false),
            ("3.4.31", true),
            ("3.5.12", false),
            ("3.5.13", true),
            ("3.6.0", true),
            ("v3.5.17", true),
            ("3.3.27", false),
            ("", false),
        ] {
            assert_eq!(super::progress_is_consistent(version), fixed, "{version}");
        }
    }
}
