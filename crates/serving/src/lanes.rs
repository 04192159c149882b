//! Two lanes for connection tasks. A connection that moves bulk data (a client listing
//! thousands of objects over and over) spends its CPU encrypting and framing megabytes; on
//! the same worker threads as everyone else, a small request waits behind those polls
//! whatever its priority level. Such a connection is moved to the bulk lane: a second
//! runtime whose threads run at a lower OS scheduling priority, so when the cores are busy
//! the kernel runs the small requests' work first, and when they are not, bulk work gets
//! all of them. A connection moves back once its output slows down. Its HTTP/2 requests are
//! handled where it is (a handler for a bulk connection runs on the bulk lane), and its
//! socket is registered with the I/O driver of its lane ([`LaneStream`]), so a bulk
//! connection's work rarely wakes a thread of the other runtime. docs/performance.md
//! ("Fairness under overload") has the measurements behind these choices.
//!
//! The measure is the bytes a connection writes ([`Metered`]) for its requests: more than
//! [`BULK_BYTES`] within a [`WINDOW`], in responses of [`BULK_RESPONSE`] or more on average,
//! make it bulk (a client sending thousands of small requests a second stays interactive);
//! output below that over a [`BULK_PERIOD`] makes it interactive again.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::connections::Activity;

/// The period over which a connection's output is measured.
pub const WINDOW: Duration = Duration::from_millis(100);

/// Output within one [`WINDOW`] beyond which a connection is bulk (2.5 MB/s: a list of a
/// few hundred objects, far beyond a stream of single-object requests).
pub const BULK_BYTES: u64 = 256 << 10;

/// The average response size beyond which output counts as bulk.
pub const BULK_RESPONSE: u64 = 64 << 10;

/// How long a bulk connection's output must stay below the budget (scaled to one
/// [`WINDOW`]) before it moves back.
pub const BULK_PERIOD: Duration = Duration::from_secs(1);

/// The nice value of the bulk lane's threads (the interactive ones keep the process's).
const BULK_NICE: i32 = 19;

/// The bulk lane's runtime, started on first use and kept for the life of the process
/// (dropping a runtime from async code is not allowed, and its threads are idle when no
/// connection is bulk).
fn bulk_runtime() -> Option<&'static tokio::runtime::Handle> {
    static BULK: OnceLock<Option<tokio::runtime::Runtime>> = OnceLock::new();
    BULK.get_or_init(|| {
        let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
        let built = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads)
            .thread_name("capstan-bulk")
            .on_thread_start(|| {
                if let Err(e) = rustix::process::setpriority_process(None, BULK_NICE) {
                    tracing::debug!(error = %e, "could not lower a bulk thread's priority");
                }
            })
            .enable_all()
            .build();
        match built {
            Ok(runtime) => Some(runtime),
            Err(e) => {
                tracing::warn!(error = %e, "no bulk lane: every connection stays interactive");
                None
            }
        }
    })
    .as_ref()
    .map(|runtime| runtime.handle())
}

/// What a connection has written and how many requests it has had, shared between its
/// I/O ([`Metered`]) and the task that moves it between lanes ([`run`]).
#[derive(Debug)]
pub struct Meter {
    activity: Activity,
    written: AtomicU64,
    /// `written` and the requests begun when the current window began.
    window_written: AtomicU64,
    window_requests: AtomicU64,
    bulk: AtomicBool,
    /// Whether a task moves the connection (without a bulk lane, writes never yield).
    movable: AtomicBool,
}

impl Meter {
    /// The meter of the connection whose requests `activity` counts.
    pub fn new(activity: &Activity) -> Self {
        Self {
            activity: activity.clone(),
            written: AtomicU64::new(0),
            window_written: AtomicU64::new(0),
            window_requests: AtomicU64::new(0),
            bulk: AtomicBool::new(false),
            movable: AtomicBool::new(false),
        }
    }

    /// The output and the requests begun (at least one) in the current window.
    fn in_window(&self) -> (u64, u64) {
        let written = self.written.load(Ordering::Relaxed);
        let requests = self.activity.begun();
        (
            written - self.window_written.load(Ordering::Relaxed),
            (requests - self.window_requests.load(Ordering::Relaxed)).max(1),
        )
    }

    /// Whether `bytes` written for `requests` within a window make bulk output: beyond the
    /// budget, and in large responses (many small ones are interactive however fast).
    fn is_bulk_output(bytes: u64, requests: u64) -> bool {
        bytes > BULK_BYTES && bytes / requests > BULK_RESPONSE
    }

    fn over_budget(&self) -> bool {
        let (bytes, requests) = self.in_window();
        Self::is_bulk_output(bytes, requests)
    }

    fn new_window(&self) {
        let written = self.written.load(Ordering::Relaxed);
        self.window_written.store(written, Ordering::Relaxed);
        let requests = self.activity.begun();
        self.window_requests.store(requests, Ordering::Relaxed);
    }

    /// Whether the connection is on the bulk lane now.
    pub fn is_bulk(&self) -> bool {
        self.bulk.load(Ordering::Relaxed)
    }

    /// The requests of the connection.
    pub fn activity(&self) -> &Activity {
        &self.activity
    }
}

/// A connection's socket, registered with the I/O driver of the lane its connection is on:
/// readiness then wakes the connection's task on its own lane's threads, without a hop
/// through the other runtime. It moves on its first use after the connection has.
#[derive(Debug)]
pub struct LaneStream {
    stream: Option<tokio::net::TcpStream>,
    /// The lane `stream` is registered on.
    bulk: bool,
    meter: Arc<Meter>,
}

impl LaneStream {
    /// `stream` (registered with the caller's runtime, the interactive lane), following the
    /// lane `meter` says.
    pub fn new(stream: tokio::net::TcpStream, meter: Arc<Meter>) -> Self {
        Self {
            stream: Some(stream),
            bulk: false,
            meter,
        }
    }

    /// The socket, registered with the current runtime if its connection changed lanes.
    fn follow(&mut self) -> std::io::Result<Pin<&mut tokio::net::TcpStream>> {
        let bulk = self.meter.is_bulk();
        if bulk != self.bulk
            && let Some(registered) = self.stream.take()
        {
            // Deregistered from the old lane's driver, still non-blocking.
            let socket = registered.into_std()?;
            self.stream = Some(tokio::net::TcpStream::from_std(socket)?);
            self.bulk = bulk;
        }
        match self.stream.as_mut() {
            Some(stream) => Ok(Pin::new(stream)),
            None => Err(std::io::Error::other("the socket was lost changing lanes")),
        }
    }

    /// `op` on the socket, once it is registered where the connection is.
    fn on_socket<T>(
        mut self: Pin<&mut Self>,
        op: impl FnOnce(Pin<&mut tokio::net::TcpStream>) -> Poll<std::io::Result<T>>,
    ) -> Poll<std::io::Result<T>> {
        match self.follow() {
            Ok(stream) => op(stream),
            Err(e) => Poll::Ready(Err(e)),
        }
    }
}

impl tokio::io::AsyncRead for LaneStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        self.on_socket(|socket| socket.poll_read(cx, buf))
    }
}

impl tokio::io::AsyncWrite for LaneStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.on_socket(|socket| socket.poll_write(cx, buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        self.on_socket(|socket| socket.poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.on_socket(|socket| socket.poll_flush(cx))
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        self.on_socket(|socket| socket.poll_shutdown(cx))
    }
}

/// A connection's I/O, counting what is written. On the interactive lane, a write beyond
/// the window's budget yields instead (the connection's task is woken at once), so the
/// task can move to the bulk lane before doing the rest of the work there.
#[derive(Debug)]
pub struct Metered<I> {
    io: I,
    meter: Arc<Meter>,
}

impl<I> Metered<I> {
    /// Counts `io`'s output in `meter`.
    pub fn new(io: I, meter: Arc<Meter>) -> Self {
        Self { io, meter }
    }

    fn must_yield(&self, cx: &Context<'_>) -> bool {
        let meter = &self.meter;
        if meter.movable.load(Ordering::Relaxed) && !meter.is_bulk() && meter.over_budget() {
            cx.waker().wake_by_ref();
            return true;
        }
        false
    }

    /// One write through `write`: held back when the connection must move first, counted
    /// when done.
    fn metered_write(
        &mut self,
        cx: &mut Context<'_>,
        write: impl FnOnce(Pin<&mut I>, &mut Context<'_>) -> Poll<std::io::Result<usize>>,
    ) -> Poll<std::io::Result<usize>>
    where
        I: Unpin,
    {
        if self.must_yield(cx) {
            return Poll::Pending;
        }
        let polled = write(Pin::new(&mut self.io), cx);
        if let Poll::Ready(Ok(n)) = &polled {
            self.meter.written.fetch_add(*n as u64, Ordering::Relaxed);
        }
        polled
    }
}

impl<I: hyper::rt::Read + Unpin> hyper::rt::Read for Metered<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<I: hyper::rt::Write + Unpin> hyper::rt::Write for Metered<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.metered_write(cx, |io, cx| io.poll_write(cx, buf))
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        self.metered_write(cx, |io, cx| io.poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        self.io.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

/// The window bookkeeping of one connection, kept by the task that moves it.
struct Lane {
    meter: Arc<Meter>,
    window_start: Instant,
}

impl Lane {
    /// Whether the connection should change lanes now (checked around each poll).
    fn should_move(&mut self) -> bool {
        let meter = &self.meter;
        if !meter.is_bulk() && meter.over_budget() {
            return true;
        }
        let elapsed = self.window_start.elapsed();
        // A bulk connection is judged over a longer period: one that lists in a loop
        // pauses between its lists, and should not move back for each of them.
        let period = if meter.is_bulk() { BULK_PERIOD } else { WINDOW };
        if elapsed < period {
            return false;
        }
        // The output over the period just ended, scaled to one window: after a long pause,
        // a bulk connection's rate is low however much it wrote before the pause.
        let (bytes, requests) = meter.in_window();
        let scaled = u128::from(bytes) * WINDOW.as_nanos() / elapsed.as_nanos().max(1);
        let scaled = u64::try_from(scaled).unwrap_or(u64::MAX);
        self.window_start = Instant::now();
        meter.new_window();
        meter.is_bulk() && !Meter::is_bulk_output(scaled, requests)
    }

    fn moved(&mut self, bulk: bool) {
        self.meter.bulk.store(bulk, Ordering::Relaxed);
        self.window_start = Instant::now();
        self.meter.new_window();
    }
}

/// Polls `task` until it ends or should change lanes.
async fn until_move<F: Future + Unpin>(task: &mut F, lane: &mut Lane) -> Option<F::Output> {
    std::future::poll_fn(|cx| {
        // Woken after a pause: the connection may have calmed down before this poll's work.
        if lane.meter.is_bulk() && lane.should_move() {
            return Poll::Ready(None);
        }
        match Pin::new(&mut *task).poll(cx) {
            Poll::Ready(out) => Poll::Ready(Some(out)),
            Poll::Pending if lane.should_move() => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    })
    .await
}

/// Aborts the bulk lane's task when the interactive side is dropped (at shutdown).
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Runs one request's heavy `work` (producing a large list, say) on the bulk lane and waits
/// for it, so that it does not hold up the interactive workers while it runs; where there
/// is no bulk lane, or the caller is on it already, it runs in place. Dropping the returned
/// future aborts the work.
pub async fn on_bulk<F>(work: F) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let Some(bulk) = bulk_runtime() else {
        return work.await;
    };
    if tokio::runtime::Handle::try_current().is_ok_and(|here| here.id() == bulk.id()) {
        return work.await;
    }
    let mut guard = AbortOnDrop(bulk.spawn(work));
    match (&mut guard.0).await {
        Ok(out) => out,
        Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
        // Cancelled: the bulk runtime is shutting down, and so is the process.
        Err(_) => std::future::pending().await,
    }
}

/// Runs a connection's `task`, whose I/O counts into `meter`, on the lane its output calls
/// for; it starts on the caller's runtime (the interactive lane). Once `task` ends, its I/O
/// may live on elsewhere (an upgraded connection spliced by another task): nothing moves it
/// any more, so its writes no longer wait for a move and its socket follows whichever
/// runtime polls it.
pub async fn run<F>(task: F, meter: Arc<Meter>) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let out = run_moving(task, meter.clone()).await;
    meter.movable.store(false, Ordering::Relaxed);
    meter.bulk.store(false, Ordering::Relaxed);
    out
}

async fn run_moving<F>(task: F, meter: Arc<Meter>) -> F::Output
where
    F: Future + Send + 'static,
    F::Output: Send + 'static,
{
    let mut task = Box::pin(task);
    let Some(bulk) = bulk_runtime() else {
        return task.await;
    };
    meter.movable.store(true, Ordering::Relaxed);
    let mut lane = Lane {
        meter,
        window_start: Instant::now(),
    };
    loop {
        if let Some(out) = until_move(&mut task, &mut lane).await {
            return out;
        }
        lane.moved(true);
        tracing::trace!("a connection moves to the bulk lane");
        let mut guard = AbortOnDrop(bulk.spawn(async move {
            let out = until_move(&mut task, &mut lane).await;
            (task, lane, out)
        }));
        let (back, mut back_lane, out) = match (&mut guard.0).await {
            Ok(moved) => moved,
            Err(e) if e.is_panic() => std::panic::resume_unwind(e.into_panic()),
            // Cancelled: the bulk runtime is shutting down, and so is the process.
            Err(_) => std::future::pending().await,
        };
        if let Some(out) = out {
            return out;
        }
        back_lane.moved(false);
        tracing::trace!("a connection moves back to the interactive lane");
        task = back;
        lane = back_lane;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on_bulk_thread() -> bool {
        std::thread::current()
            .name()
            .is_some_and(|name| name == "capstan-bulk")
    }

    /// A connection that writes `chunks` of `size` bytes through its meter (each its own
    /// request when `requests`), and reports on which lane each write happened.
    async fn write_chunks(
        meter: Arc<Meter>,
        chunks: usize,
        size: usize,
        requests: bool,
    ) -> Vec<bool> {
        let (near, mut far) = tokio::io::duplex(1 << 20);
        let drain = tokio::spawn(async move {
            let mut sink = Vec::new();
            let _ = tokio::io::AsyncReadExt::read_to_end(&mut far, &mut sink).await;
            sink.len()
        });
        let activity = meter.activity().clone();
        let mut io = Metered::new(hyper_util::rt::TokioIo::new(near), meter);
        let chunk = vec![7u8; size];
        let mut lanes = Vec::new();
        for _ in 0..chunks {
            let _request = requests.then(|| activity.begin());
            write_all(&mut io, &chunk).await;
            lanes.push(on_bulk_thread());
        }
        drop(io);
        assert_eq!(drain.await.unwrap(), chunks * size);
        lanes
    }

    async fn write_all<W: hyper::rt::Write + Unpin>(io: &mut W, mut left: &[u8]) {
        while !left.is_empty() {
            let n = std::future::poll_fn(|cx| hyper::rt::Write::poll_write(Pin::new(io), cx, left))
                .await
                .unwrap();
            left = &left[n..];
        }
    }

    #[tokio::test]
    async fn many_small_responses_stay_interactive_however_fast() {
        let meter = Arc::new(Meter::new(&Activity::default()));
        // 2 MiB in 2 KiB responses, far beyond the budget's bytes in a window.
        let lanes = run(
            write_chunks(meter.clone(), 1024, 2 << 10, true),
            meter.clone(),
        )
        .await;
        assert!(lanes.iter().all(|bulk| !bulk));
        assert!(!meter.is_bulk());
    }

    /// A loopback connection: the client's end, and the server's end on a lane with its meter.
    async fn metered_socket() -> (tokio::net::TcpStream, LaneStream, Arc<Meter>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = tokio::net::TcpStream::connect(listener.local_addr().unwrap());
        let (client, accepted) = tokio::join!(client, listener.accept());
        let meter = Arc::new(Meter::new(&Activity::default()));
        let stream = LaneStream::new(accepted.unwrap().0, meter.clone());
        (client.unwrap(), stream, meter)
    }

    #[tokio::test]
    async fn a_socket_follows_its_connection_to_the_bulk_lane() {
        let (mut client, stream, meter) = metered_socket().await;
        let mut io = Metered::new(hyper_util::rt::TokioIo::new(stream), meter.clone());
        let total = 4usize << 20;
        let task = async move {
            let chunk: Vec<u8> = (0..16 << 10).map(|i| (i % 251) as u8).collect();
            for _ in 0..total / chunk.len() {
                write_all(&mut io, &chunk).await;
            }
            let registered_on_bulk = io.io.inner().bulk;
            (on_bulk_thread(), registered_on_bulk)
        };
        let reader = tokio::spawn(async move {
            let mut got = Vec::new();
            tokio::io::AsyncReadExt::read_to_end(&mut client, &mut got)
                .await
                .unwrap();
            got
        });
        let (ended_on_bulk, registered_on_bulk) = run(task, meter.clone()).await;
        assert!(ended_on_bulk && registered_on_bulk, "moved with its socket");
        let got = reader.await.unwrap();
        assert_eq!(got.len(), total, "every byte arrives across the move");
        assert!(
            got.iter()
                .enumerate()
                .all(|(i, b)| *b == ((i % (16 << 10)) % 251) as u8)
        );
    }

    #[tokio::test]
    async fn a_connection_writing_in_bulk_moves_to_the_bulk_lane_and_back() {
        let meter = Arc::new(Meter::new(&Activity::default()));
        // Small responses stay interactive.
        let lanes = run(write_chunks(meter.clone(), 16, 1024, false), meter.clone()).await;
        assert!(lanes.iter().all(|bulk| !bulk), "{lanes:?}");
        // A megabyte moves once the budget is spent.
        let lanes = run(
            write_chunks(meter.clone(), 64, 16 << 10, false),
            meter.clone(),
        )
        .await;
        let first_bulk = lanes.iter().position(|bulk| *bulk).expect("moved to bulk");
        assert!(
            first_bulk as u64 * (16 << 10) <= BULK_BYTES + (16 << 10),
            "moved only after {first_bulk} chunks"
        );
        assert!(
            !meter.is_bulk(),
            "nothing left on the bulk lane once it ended"
        );

        // After a quiet window, the next output is interactive again.
        let meter = Arc::new(Meter::new(&Activity::default()));
        let task = {
            let meter = meter.clone();
            async move {
                write_chunks(meter.clone(), 64, 16 << 10, false).await;
                assert!(meter.is_bulk());
                tokio::time::sleep(BULK_PERIOD * 3).await;
                write_chunks(meter, 2, 1024, false).await
            }
        };
        let lanes = run(task, meter.clone()).await;
        assert_eq!(lanes, [false, false], "back on the interactive lane");
    }

    #[tokio::test]
    async fn io_that_outlives_its_connection_task_keeps_writing() {
        // An upgrade hands the connection's I/O to another task when the HTTP connection
        // ends: the bulk budget spent there must not hold its writes back (nothing would
        // ever move it).
        let (mut client, stream, meter) = metered_socket().await;
        let io = Metered::new(hyper_util::rt::TokioIo::new(stream), meter.clone());
        let mut io = run(async move { io }, meter.clone()).await;
        let total = 2usize << 20;
        let reader = tokio::spawn(async move {
            let mut got = Vec::new();
            tokio::io::AsyncReadExt::read_to_end(&mut client, &mut got)
                .await
                .unwrap();
            got.len()
        });
        tokio::time::timeout(Duration::from_secs(30), async {
            let chunk = vec![5u8; 64 << 10];
            for _ in 0..total / chunk.len() {
                write_all(&mut io, &chunk).await;
            }
        })
        .await
        .expect("writes beyond the budget go on after the connection task ended");
        drop(io);
        assert_eq!(reader.await.unwrap(), total);
    }

    #[tokio::test]
    async fn output_outside_the_lanes_is_counted_but_never_held_back() {
        let meter = Arc::new(Meter::new(&Activity::default()));
        let lanes = tokio::time::timeout(
            Duration::from_secs(10),
            write_chunks(meter.clone(), 64, 16 << 10, false),
        )
        .await
        .expect("writes beyond the budget go on when nothing moves the connection");
        assert!(lanes.iter().all(|bulk| !bulk));
        assert_eq!(meter.written.load(Ordering::Relaxed), 64 * (16 << 10));
    }

    #[tokio::test]
    async fn heavy_work_runs_on_the_bulk_lane_and_panics_come_back() {
        let name = || {
            std::thread::current()
                .name()
                .unwrap_or_default()
                .to_string()
        };
        let (there, nested) = on_bulk(async move {
            // Already on the bulk lane: no second hop.
            let nested = on_bulk(async move { name() }).await;
            (name(), nested)
        })
        .await;
        assert_eq!(there, "capstan-bulk");
        assert_eq!(nested, "capstan-bulk");
        assert_ne!(name(), "capstan-bulk");
        let panicked = tokio::spawn(on_bulk(async { panic!("heavy work failed") })).await;
        assert!(panicked.unwrap_err().is_panic());
    }

    #[test]
    fn bulk_threads_run_at_a_lower_priority() {
        let bulk = bulk_runtime().expect("a bulk lane");
        let nice = bulk.block_on(async {
            tokio::spawn(async { rustix::process::getpriority_process(None).unwrap() })
                .await
                .unwrap()
        });
        let ours = rustix::process::getpriority_process(None).unwrap();
        assert!(nice > ours, "bulk nice {nice}, interactive {ours}");
    }
}
