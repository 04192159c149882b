//! What bounds connections once accepted: how many a listener keeps open at once
//! ([`ConnectionLimit`]) and when an idle one is closed ([`Activity`]).

use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use http::Response;
use http_body::{Body, Frame, SizeHint};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How long a connection with no request in flight stays open: upstream's servers close
/// idle connections after 90 s (their `IdleTimeout`), HTTP/2 ones included.
pub const IDLE_TIMEOUT: Duration = Duration::from_secs(90);

/// File descriptors kept for everything but client connections (the store's files, etcd
/// and webhook connections, logs) when the limit comes from the open-file limit.
const RESERVED_FILES: u64 = 256;

/// The connections a listener keeps open at once; beyond them it stops accepting, and new
/// clients wait in the kernel's backlog until one closes.
#[derive(Clone, Debug)]
pub struct ConnectionLimit {
    permits: Arc<Semaphore>,
    max: usize,
    /// When the last "limit reached" warning was logged (one per ten seconds at most).
    warned: Arc<Mutex<Option<Instant>>>,
}

/// One open connection's place under a [`ConnectionLimit`], given back on drop.
#[derive(Debug)]
pub struct ConnectionPermit {
    _permit: OwnedSemaphorePermit,
}

impl ConnectionLimit {
    /// At most `max` connections (at least one).
    pub fn new(max: usize) -> Self {
        let max = max.clamp(1, Semaphore::MAX_PERMITS);
        Self {
            permits: Arc::new(Semaphore::new(max)),
            max,
            warned: Arc::default(),
        }
    }

    /// The limit the process's open files allow: the soft open-file limit is first raised to
    /// the hard one (as Go programs do at start, so a daemon moving from upstream gets the
    /// same headroom), then all but a reserve of it goes to connections. `ulimit -n` is the
    /// knob.
    pub fn from_open_files() -> Self {
        let files = raise_open_file_limit();
        let max = files.saturating_sub(RESERVED_FILES).max(RESERVED_FILES);
        Self::new(usize::try_from(max).unwrap_or(usize::MAX))
    }

    /// The most connections open at once.
    pub fn max(&self) -> usize {
        self.max
    }

    /// Connections open now.
    pub fn open(&self) -> usize {
        self.max - self.permits.available_permits()
    }

    /// Waits for a place for one more connection.
    pub async fn acquire(&self) -> ConnectionPermit {
        if self.permits.available_permits() == 0 {
            let mut warned = self.warned.lock().unwrap_or_else(|e| e.into_inner());
            if warned.is_none_or(|at| at.elapsed() >= Duration::from_secs(10)) {
                *warned = Some(Instant::now());
                tracing::warn!(
                    max = self.max,
                    "the connection limit is reached; new connections wait until one closes"
                );
            }
        }
        let permits = self.permits.clone();
        match permits.acquire_owned().await {
            Ok(permit) => ConnectionPermit { _permit: permit },
            Err(_) => unreachable!("the connection semaphore is never closed"),
        }
    }
}

/// Raises the soft open-file limit to the hard limit (as far as the kernel allows) and
/// returns the limit in force.
pub fn raise_open_file_limit() -> u64 {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    // None is unlimited.
    let soft = limit.current.unwrap_or(u64::MAX);
    let hard = limit.maximum.unwrap_or(u64::MAX);
    if hard <= soft {
        return soft;
    }
    let raised = Rlimit {
        current: limit.maximum,
        maximum: limit.maximum,
    };
    match setrlimit(Resource::Nofile, raised) {
        Ok(()) => hard,
        Err(e) => {
            tracing::debug!(error = %e, soft, "could not raise the open-file limit");
            soft
        }
    }
}

/// The requests in flight on one connection, for closing it once idle. A request counts
/// from [`Activity::begin`] until its response body is sent or dropped. Requests only
/// update two counters; the idle check runs on its own timer, so nothing is woken per
/// request.
#[derive(Clone, Debug)]
pub struct Activity {
    inner: Arc<ActivityState>,
}

#[derive(Debug)]
struct ActivityState {
    in_flight: AtomicUsize,
    /// Requests begun since the connection opened.
    begun: AtomicU64,
    /// When the last request ended (or the connection opened), in milliseconds after
    /// `opened`.
    last_end: AtomicU64,
    opened: Instant,
}

impl ActivityState {
    fn now_ms(&self) -> u64 {
        u64::try_from(self.opened.elapsed().as_millis()).unwrap_or(u64::MAX)
    }
}

impl Default for Activity {
    fn default() -> Self {
        Self {
            inner: Arc::new(ActivityState {
                in_flight: AtomicUsize::new(0),
                begun: AtomicU64::new(0),
                last_end: AtomicU64::new(0),
                opened: Instant::now(),
            }),
        }
    }
}

/// One request in flight on a connection ([`Activity::begin`]), until dropped.
#[derive(Debug)]
pub struct InFlight(Arc<ActivityState>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.last_end.store(self.0.now_ms(), Ordering::Relaxed);
        self.0.in_flight.fetch_sub(1, Ordering::Release);
    }
}

impl InFlight {
    /// Keeps the request in flight until `response`'s body has been sent or dropped.
    pub fn hold<B>(self, response: Response<B>) -> Response<TrackedBody<B>> {
        response.map(|inner| TrackedBody {
            inner,
            in_flight: Some(self),
        })
    }
}

/// A response body that keeps its request in flight until it ends or is dropped.
pub struct TrackedBody<B> {
    inner: B,
    in_flight: Option<InFlight>,
}

impl Activity {
    /// Counts a request as in flight from its arrival; the result goes with its response.
    pub fn begin(&self) -> InFlight {
        self.inner.in_flight.fetch_add(1, Ordering::Acquire);
        self.inner.begun.fetch_add(1, Ordering::Relaxed);
        InFlight(self.inner.clone())
    }

    /// Requests begun since the connection opened.
    pub fn begun(&self) -> u64 {
        self.inner.begun.load(Ordering::Relaxed)
    }

    /// Requests in flight now.
    pub fn in_flight(&self) -> usize {
        self.inner.in_flight.load(Ordering::Acquire)
    }

    /// How long the connection has been without a request in flight (None while one is).
    fn idle(&self) -> Option<Duration> {
        if self.in_flight() > 0 {
            return None;
        }
        let since = self.inner.last_end.load(Ordering::Relaxed);
        Some(Duration::from_millis(
            self.inner.now_ms().saturating_sub(since),
        ))
    }

    /// Resolves once no request has been in flight for `timeout` (checked when the
    /// timeout could have passed: between `timeout` and twice it after the last request).
    pub async fn idle_for(&self, timeout: Duration) {
        loop {
            let wait = match self.idle() {
                Some(idle) if idle >= timeout => return,
                Some(idle) => timeout - idle,
                None => timeout,
            };
            tokio::time::sleep(wait).await;
        }
    }
}

impl<B: Body + Unpin> Body for TrackedBody<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(None) = polled {
            self.in_flight = None;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::{BodyExt, Full};

    use super::*;

    const SHORT: Duration = Duration::from_millis(50);
    const PATIENCE: Duration = Duration::from_secs(10);

    #[tokio::test]
    async fn a_connection_is_idle_only_once_its_last_response_body_is_sent() {
        let activity = Activity::default();
        let in_flight = activity.begin();
        assert_eq!(activity.in_flight(), 1);
        assert!(
            tokio::time::timeout(SHORT * 4, activity.idle_for(SHORT))
                .await
                .is_err(),
            "idle with a request in flight"
        );
        let response = in_flight.hold(Response::new(Full::new(bytes::Bytes::from("body"))));
        assert_eq!(activity.in_flight(), 1, "the body is not sent yet");
        let body = response.into_body().collect().await.unwrap().to_bytes();
        assert_eq!(body, "body");
        assert_eq!(activity.in_flight(), 0);
        tokio::time::timeout(PATIENCE, activity.idle_for(SHORT))
            .await
            .expect("idle once the body is sent");

        // A response dropped unsent (the client went away) ends the request too.
        drop(
            activity
                .begin()
                .hold(Response::new(Full::new(bytes::Bytes::new()))),
        );
        assert_eq!(activity.in_flight(), 0);
    }

    #[tokio::test]
    async fn the_limit_holds_new_connections_until_one_closes() {
        let limit = ConnectionLimit::new(2);
        let first = limit.acquire().await;
        let _second = limit.acquire().await;
        assert_eq!(limit.open(), 2);
        let third = tokio::spawn({
            let limit = limit.clone();
            async move { limit.acquire().await }
        });
        tokio::time::sleep(SHORT).await;
        assert!(!third.is_finished(), "a third place under a limit of two");
        drop(first);
        let _third = tokio::time::timeout(PATIENCE, third)
            .await
            .expect("a place is free once a connection closes")
            .unwrap();
        assert_eq!(limit.open(), 2);
    }

    #[test]
    fn the_open_file_limit_is_raised_to_the_hard_limit() {
        let raised = raise_open_file_limit();
        let now = rustix::process::getrlimit(rustix::process::Resource::Nofile);
        assert_eq!(now.current.unwrap_or(u64::MAX), raised);
        assert_eq!(now.current, now.maximum, "the soft limit is the hard one");
        assert!(ConnectionLimit::from_open_files().max() >= 1);
    }
}
