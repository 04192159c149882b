//! Client-side rate limiting: a token bucket of `burst` tokens refilled at `qps` per second,
//! as client-go limits its requests.

use std::time::{Duration, Instant};

use tokio::sync::Mutex;

/// The bucket's state at an instant.
#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

/// A token bucket; every request takes one token, waiting for it when none is left.
#[derive(Debug)]
pub struct RateLimiter {
    qps: f64,
    burst: f64,
    bucket: Mutex<Bucket>,
}

impl RateLimiter {
    /// `qps` tokens per second, at most `burst` saved up; `qps <= 0` means no limit.
    pub fn new(qps: f32, burst: u32) -> Self {
        Self {
            qps: f64::from(qps),
            burst: f64::from(burst.max(1)),
            bucket: Mutex::new(Bucket {
                tokens: f64::from(burst.max(1)),
                at: Instant::now(),
            }),
        }
    }

    /// How long to wait for a token taken at `now`, updating `bucket` (tokens may go negative:
    /// the debt is what later callers wait for).
    fn take(&self, bucket: &mut Bucket, now: Instant) -> Duration {
        let elapsed = now.saturating_duration_since(bucket.at).as_secs_f64();
        bucket.tokens = (bucket.tokens + elapsed * self.qps).min(self.burst);
        bucket.at = now;
        bucket.tokens -= 1.0;
        if bucket.tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_secs_f64(-bucket.tokens / self.qps)
        }
    }

    /// Waits until the request may go.
    pub async fn acquire(&self) {
        if self.qps <= 0.0 {
            return;
        }
        let wait = {
            let mut bucket = self.bucket.lock().await;
            self.take(&mut bucket, Instant::now())
        };
        if !wait.is_zero() {
            tokio::time::sleep(wait).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_goes_at_once_then_requests_are_spaced_by_the_rate() {
        let limiter = RateLimiter::new(10.0, 3);
        let start = Instant::now();
        let mut bucket = Bucket {
            tokens: 3.0,
            at: start,
        };
        let waits: Vec<Duration> = (0..5).map(|_| limiter.take(&mut bucket, start)).collect();
        assert_eq!(&waits[..3], [Duration::ZERO; 3]);
        assert_eq!(waits[3], Duration::from_millis(100));
        assert_eq!(waits[4], Duration::from_millis(200));
        // A second later the debt is paid and tokens have come back, up to the burst.
        let later = start + Duration::from_secs(1);
        assert_eq!(limiter.take(&mut bucket, later), Duration::ZERO);
        let much_later = start + Duration::from_secs(60);
        let waits: Vec<Duration> = (0..4)
            .map(|_| limiter.take(&mut bucket, much_later))
            .collect();
        assert_eq!(&waits[..3], [Duration::ZERO; 3]);
        assert!(waits[3] > Duration::ZERO);
    }
}
