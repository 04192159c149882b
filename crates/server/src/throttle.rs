//! `--max-connection-bytes-per-sec`: a connection the server proxies (an upgraded exec,
//! attach or port-forward stream, a proxied request) carries at most that many bytes per
//! second each way, as upstream wraps the backend connection.

use std::pin::Pin;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::time::{Instant, Sleep};

/// Bytes allowed at a rate, with up to one second's worth saved up.
struct Bucket {
    rate: f64,
    available: f64,
    last: Instant,
    wait: Option<Pin<Box<Sleep>>>,
}

impl Bucket {
    fn new(rate: u64) -> Self {
        Self {
            rate: rate as f64,
            available: rate as f64,
            last: Instant::now(),
            wait: None,
        }
    }

    /// How many of `want` bytes may pass now; pending until at least one may.
    fn poll_allow(&mut self, cx: &mut Context<'_>, want: usize) -> Poll<usize> {
        loop {
            if let Some(wait) = &mut self.wait {
                ready!(wait.as_mut().poll(cx));
                self.wait = None;
            }
            let now = Instant::now();
            let earned = now.duration_since(self.last).as_secs_f64() * self.rate;
            self.available = (self.available + earned).min(self.rate);
            self.last = now;
            if self.available >= 1.0 {
                return Poll::Ready(want.min(self.available as usize).max(1));
            }
            // Wait for a worthwhile amount (a tenth of a second's worth, or what is wanted).
            let needed = (self.rate / 10.0).min(want as f64).max(1.0) - self.available;
            let delay = Duration::from_secs_f64(needed / self.rate);
            self.wait = Some(Box::pin(tokio::time::sleep(delay)));
        }
    }

    fn consume(&mut self, n: usize) {
        self.available -= n as f64;
    }
}

/// `inner` throttled to a rate each way (no limit when the rate is 0).
pub(crate) struct Throttled<T> {
    inner: T,
    read: Option<Bucket>,
    write: Option<Bucket>,
}

impl<T> Throttled<T> {
    /// `inner` carrying at most `bytes_per_sec` each way; 0 for no limit.
    pub(crate) fn new(inner: T, bytes_per_sec: u64) -> Self {
        let bucket = || (bytes_per_sec > 0).then(|| Bucket::new(bytes_per_sec));
        Self {
            inner,
            read: bucket(),
            write: bucket(),
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Throttled<T> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let Some(bucket) = &mut this.read else {
            return Pin::new(&mut this.inner).poll_read(cx, buf);
        };
        let allowed = ready!(bucket.poll_allow(cx, buf.remaining()));
        let n = {
            let mut limited = ReadBuf::new(buf.initialize_unfilled_to(allowed));
            ready!(Pin::new(&mut this.inner).poll_read(cx, &mut limited))?;
            limited.filled().len()
        };
        buf.advance(n);
        bucket.consume(n);
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Throttled<T> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        let Some(bucket) = &mut this.write else {
            return Pin::new(&mut this.inner).poll_write(cx, data);
        };
        let allowed = ready!(bucket.poll_allow(cx, data.len()));
        let n = ready!(Pin::new(&mut this.inner).poll_write(cx, &data[..allowed.min(data.len())]))?;
        bucket.consume(n);
        Poll::Ready(Ok(n))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test(start_paused = true)]
    async fn a_throttled_connection_keeps_to_its_rate() {
        let (a, mut b) = tokio::io::duplex(1 << 20);
        let mut slow = Throttled::new(a, 10_000);
        let start = Instant::now();
        let writer = tokio::spawn(async move {
            slow.write_all(&[1u8; 50_000]).await.unwrap();
            slow.shutdown().await.unwrap();
        });
        let mut got = Vec::new();
        b.read_to_end(&mut got).await.unwrap();
        writer.await.unwrap();
        assert_eq!(got.len(), 50_000);
        // One second's burst, then 10 kB/s: about four seconds (virtual time).
        let took = start.elapsed();
        assert!(
            took >= Duration::from_secs(3) && took < Duration::from_secs(6),
            "{took:?}"
        );
    }

    #[tokio::test]
    async fn no_rate_is_no_limit() {
        let (a, mut b) = tokio::io::duplex(1 << 20);
        let mut fast = Throttled::new(a, 0);
        fast.write_all(&[2u8; 100_000]).await.unwrap();
        drop(fast);
        let mut got = Vec::new();
        b.read_to_end(&mut got).await.unwrap();
        assert_eq!(got.len(), 100_000);
    }
}
