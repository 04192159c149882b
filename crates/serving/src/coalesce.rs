//! Coalesced output for connections that carry several responses at once (HTTP/2 streams).
//!
//! A watch event sent to many watchers sharing a connection wakes each watcher's stream task
//! in turn; each one hands its frame to the connection task, which runs right after it (the
//! runtime runs a task woken by the running one next) and flushes that one frame: one TLS
//! record and one `writev` per watcher per event, and as many reads on the client's side.
//! [`Coalescing`] holds such output back for two turns of the scheduler instead: a flush
//! while other requests are in flight on the connection only wakes the connection task
//! again, so the frames of the other streams woken by the same event join the buffer before
//! it is written, in one record and one system call. The held output is written when the
//! connection reads after a second turn (the connection task reads on every poll, and each
//! turn's wake makes sure it is polled), when it writes more than a record's worth, or when it
//! shuts down.
//!
//! A connection with at most one request in flight (HTTP/1.1, a client's single GET)
//! writes through as before: nothing could join its output.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use crate::connections::Activity;

/// Turns a due flush waits after the first, while requests are still in flight: stream tasks
/// woken by one event also sit on the other worker's queue or in the runtime's overflow
/// queue, behind the connection task's first wake-up (one more turn: 500 watchers on 50
/// connections, 112 writes per event before, 61 after).
const EXTRA_TURNS: u8 = 1;

/// Output held back beyond which it is written at once (a TLS record's worth of plaintext).
const HOLD_LIMIT: usize = 16 << 10;

/// A held buffer grown beyond this is released once written, so idle connections keep
/// little memory.
const KEPT_CAPACITY: usize = 4 << 10;

/// A connection's I/O whose flushes are held for two scheduler turns while more than one
/// request is in flight on it (see the module's documentation).
#[derive(Debug)]
pub struct Coalescing<I> {
    io: I,
    activity: Activity,
    /// Output accepted but not yet written to `io`.
    held: Vec<u8>,
    /// Of `held`, what is already written.
    written: usize,
    /// A flush was asked for and put off: `held` (and then `io`) is flushed next time.
    flush_due: bool,
    /// Extra turns the due flush has waited.
    turns: u8,
    /// `io` took output but has not been flushed since.
    io_dirty: bool,
}

impl<I> Coalescing<I> {
    /// Wraps `io`, the connection whose requests `activity` counts.
    pub fn new(io: I, activity: Activity) -> Self {
        Self {
            io,
            activity,
            held: Vec::new(),
            written: 0,
            flush_due: false,
            turns: 0,
            io_dirty: false,
        }
    }

    fn may_hold(&self) -> bool {
        self.activity.in_flight() > 1
    }
}

impl<I: hyper::rt::Write + Unpin> Coalescing<I> {
    /// Writes what is held to `io`; Ready once all of it is.
    fn poll_write_held(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        while self.written < self.held.len() {
            let n = ready!(Pin::new(&mut self.io).poll_write(cx, &self.held[self.written..]))?;
            if n == 0 {
                return Poll::Ready(Err(std::io::ErrorKind::WriteZero.into()));
            }
            self.written += n;
            self.io_dirty = true;
        }
        self.written = 0;
        self.held.clear();
        if self.held.capacity() > KEPT_CAPACITY {
            self.held = Vec::new();
        }
        Poll::Ready(Ok(()))
    }

    /// Writes what is held and flushes `io`.
    fn poll_flush_all(&mut self, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        ready!(self.poll_write_held(cx))?;
        self.flush_due = false;
        self.turns = 0;
        if self.io_dirty {
            ready!(Pin::new(&mut self.io).poll_flush(cx))?;
            self.io_dirty = false;
        }
        Poll::Ready(Ok(()))
    }

    /// One write through `write` (given `len` bytes): held when the connection may coalesce
    /// and the held output stays within a record, else written after what is held.
    fn poll_write_with(
        &mut self,
        cx: &mut Context<'_>,
        len: usize,
        hold: impl FnOnce(&mut Vec<u8>),
        write: impl FnOnce(Pin<&mut I>, &mut Context<'_>) -> Poll<std::io::Result<usize>>,
    ) -> Poll<std::io::Result<usize>> {
        if self.held.len() + len <= HOLD_LIMIT && (self.flush_due || self.may_hold()) {
            hold(&mut self.held);
            return Poll::Ready(Ok(len));
        }
        ready!(self.poll_write_held(cx))?;
        let n = ready!(write(Pin::new(&mut self.io), cx))?;
        self.io_dirty = true;
        Poll::Ready(Ok(n))
    }
}

impl<I: hyper::rt::Read + hyper::rt::Write + Unpin> hyper::rt::Read for Coalescing<I> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.flush_due && self.turns < EXTRA_TURNS && self.may_hold() {
            self.turns += 1;
            cx.waker().wake_by_ref();
        } else if self.flush_due || !self.held.is_empty() {
            // A full socket is no reason not to read: its writability wakes the task.
            if let Poll::Ready(Err(e)) = self.poll_flush_all(cx) {
                return Poll::Ready(Err(e));
            }
        }
        Pin::new(&mut self.io).poll_read(cx, buf)
    }
}

impl<I: hyper::rt::Write + Unpin> hyper::rt::Write for Coalescing<I> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.poll_write_with(
            cx,
            buf.len(),
            |held| held.extend_from_slice(buf),
            |io, cx| io.poll_write(cx, buf),
        )
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        let len = bufs.iter().map(|b| b.len()).sum();
        self.poll_write_with(
            cx,
            len,
            |held| bufs.iter().for_each(|b| held.extend_from_slice(b)),
            |io, cx| io.poll_write_vectored(cx, bufs),
        )
    }

    fn is_write_vectored(&self) -> bool {
        true
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        if self.flush_due {
            return Poll::Ready(Ok(()));
        }
        if !self.held.is_empty() && self.may_hold() {
            // Put off: the task runs again after the tasks already queued.
            self.flush_due = true;
            cx.waker().wake_by_ref();
            return Poll::Ready(Ok(()));
        }
        self.poll_flush_all(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        ready!(self.poll_flush_all(cx))?;
        Pin::new(&mut self.io).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::task::{Wake, Waker};

    use hyper::rt::{Read, Write};

    use super::*;

    /// I/O that keeps each write call's bytes and counts flushes.
    #[derive(Default)]
    struct Recorder {
        writes: Vec<Vec<u8>>,
        flushes: usize,
        shut: bool,
    }

    impl Read for Recorder {
        fn poll_read(
            self: Pin<&mut Self>,
            _: &mut Context<'_>,
            _: hyper::rt::ReadBufCursor<'_>,
        ) -> Poll<std::io::Result<()>> {
            Poll::Pending
        }
    }

    impl Write for Recorder {
        fn poll_write(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
            buf: &[u8],
        ) -> Poll<std::io::Result<usize>> {
            self.writes.push(buf.to_vec());
            Poll::Ready(Ok(buf.len()))
        }

        fn poll_flush(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<std::io::Result<()>> {
            self.flushes += 1;
            Poll::Ready(Ok(()))
        }

        fn poll_shutdown(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<std::io::Result<()>> {
            self.shut = true;
            Poll::Ready(Ok(()))
        }
    }

    /// Counts wake-ups.
    #[derive(Default)]
    struct Wakes(AtomicUsize);

    impl Wake for Wakes {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
        fn wake_by_ref(self: &Arc<Self>) {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
    }

    struct Harness {
        io: Coalescing<Recorder>,
        wakes: Arc<Wakes>,
        waker: Waker,
    }

    impl Harness {
        fn new(in_flight: usize) -> (Self, Vec<crate::InFlight>) {
            let activity = Activity::default();
            let requests = (0..in_flight).map(|_| activity.begin()).collect();
            let wakes = Arc::new(Wakes::default());
            let waker = Waker::from(wakes.clone());
            let io = Coalescing::new(Recorder::default(), activity);
            (Self { io, wakes, waker }, requests)
        }

        fn write(&mut self, bytes: &[u8]) {
            let mut cx = Context::from_waker(&self.waker);
            let polled = Pin::new(&mut self.io).poll_write(&mut cx, bytes);
            assert!(matches!(polled, Poll::Ready(Ok(n)) if n == bytes.len()));
        }

        fn flush(&mut self) {
            let mut cx = Context::from_waker(&self.waker);
            let polled = Pin::new(&mut self.io).poll_flush(&mut cx);
            assert!(matches!(polled, Poll::Ready(Ok(()))));
        }

        /// Polls a read, as the connection task does on each poll.
        fn read(&mut self) {
            let mut cx = Context::from_waker(&self.waker);
            let mut storage = [std::mem::MaybeUninit::uninit(); 16];
            let mut buf = hyper::rt::ReadBuf::uninit(&mut storage);
            let polled = Pin::new(&mut self.io).poll_read(&mut cx, buf.unfilled());
            assert!(polled.is_pending());
        }

        fn writes(&self) -> &[Vec<u8>] {
            &self.io.io.writes
        }

        fn wakes(&self) -> usize {
            self.wakes.0.load(Ordering::Relaxed)
        }
    }

    #[test]
    fn a_lone_response_is_written_and_flushed_at_once() {
        let (mut h, _requests) = Harness::new(1);
        h.write(b"one");
        h.flush();
        h.write(b"two");
        h.flush();
        assert_eq!(h.writes(), [b"one".to_vec(), b"two".to_vec()]);
        assert_eq!(h.io.io.flushes, 2);
        assert_eq!(h.wakes(), 0, "nothing put off");
    }

    #[test]
    fn output_of_concurrent_responses_is_written_together_two_turns_later() {
        let (mut h, requests) = Harness::new(3);
        h.write(b"frame 1;");
        h.flush();
        assert!(h.writes().is_empty(), "the first flush is put off");
        assert_eq!(h.wakes(), 1, "the connection task is woken to write it");
        // Other streams add frames before the task runs again; their flushes wake no more.
        h.write(b"frame 2;");
        h.flush();
        assert_eq!(h.wakes(), 1);
        // The next poll waits one more turn; streams queued further back add theirs.
        h.read();
        assert!(h.writes().is_empty());
        assert_eq!(h.wakes(), 2);
        h.write(b"frame 3;");
        h.flush();
        h.read();
        assert_eq!(h.writes(), [b"frame 1;frame 2;frame 3;".to_vec()]);
        assert_eq!(h.io.io.flushes, 1);
        assert_eq!(h.wakes(), 2);
        // Once the requests are done, a due flush waits no further turn.
        h.write(b"frame 4;");
        h.flush();
        drop(requests);
        h.write(b"frame 5;");
        h.read();
        assert_eq!(h.writes()[1], b"frame 4;frame 5;");
        assert_eq!(h.wakes(), 3);
        // Nothing due and one request or none: written through.
        h.write(b"frame 6;");
        h.flush();
        assert_eq!(h.writes()[2], b"frame 6;");
        assert_eq!(h.io.io.flushes, 3);
    }

    #[test]
    fn more_than_a_record_is_written_without_waiting() {
        let (mut h, _requests) = Harness::new(2);
        h.write(b"head;");
        let big = vec![b'x'; HOLD_LIMIT];
        h.write(&big);
        assert_eq!(h.writes(), [b"head;".to_vec(), big]);
        h.write(b"tail;");
        h.flush();
        assert_eq!(h.writes().len(), 2, "a small write after it is held again");
        let mut cx = Context::from_waker(&h.waker);
        assert!(Pin::new(&mut h.io).poll_shutdown(&mut cx).is_ready());
        assert_eq!(h.writes()[2], b"tail;", "shutting down writes what is held");
        assert!(h.io.io.shut);
    }

    #[test]
    fn vectored_writes_are_held_whole() {
        let (mut h, _requests) = Harness::new(2);
        let mut cx = Context::from_waker(&h.waker);
        let bufs = [std::io::IoSlice::new(b"abc"), std::io::IoSlice::new(b"def")];
        let polled = Pin::new(&mut h.io).poll_write_vectored(&mut cx, &bufs);
        assert!(matches!(polled, Poll::Ready(Ok(6))));
        h.flush();
        h.read();
        h.read();
        assert_eq!(h.writes(), [b"abcdef".to_vec()]);
    }
}
