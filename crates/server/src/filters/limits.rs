//! Limits on the work a request may cause: [`MaxInFlight`] bounds how many requests run at once
//! (`--max-requests-inflight`, `--max-mutating-requests-inflight`), [`RequestDeadline`] ends
//! requests that run too long (`--request-timeout`, the `timeout` query parameter).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::Poll;
use std::time::Duration;

use capstan_auth::UserInfo;
use capstan_meta::{ApiError, Reason};
use http::Request;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::gauge::Gauge;

use super::filter::{Answer, Filter, Next};
use crate::request_info::RequestInfo;
use crate::response;

/// Whether a request may stay open for long (watches, proxies, exec, attach, logs, port
/// forwarding): such requests hold no in-flight seat and have no deadline, as upstream's.
pub(crate) fn is_long_running(info: &RequestInfo) -> bool {
    matches!(info.verb.as_str(), "watch" | "proxy")
        || (info.is_resource_request
            && matches!(
                info.subresource.as_str(),
                "attach" | "exec" | "proxy" | "log" | "portforward"
            ))
}

/// Whether a request only reads (upstream counts every verb but get, list and watch as
/// mutating, non-resource POSTs included).
pub(crate) fn is_read_only(info: &RequestInfo) -> bool {
    matches!(info.verb.as_str(), "get" | "list" | "watch")
}

/// One kind's seats: a count against a limit.
struct Seats {
    limit: usize,
    taken: AtomicUsize,
    current: Gauge,
    dropped: Counter,
}

impl Seats {
    /// Takes a seat; none when all are taken.
    fn take(self: &Arc<Self>) -> Option<Seat> {
        let taken = self
            .taken
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (self.limit == 0 || n < self.limit).then_some(n + 1)
            })
            .ok()?;
        self.current.set(taken as i64 + 1);
        Some(Seat(self.clone()))
    }
}

/// A taken seat, given back when the request ends, however it ends (a client that goes
/// away drops the request's future, and with it the seat).
struct Seat(Arc<Seats>);

impl Drop for Seat {
    fn drop(&mut self) {
        let before = self.0.taken.fetch_sub(1, Ordering::AcqRel);
        self.0.current.set(before as i64 - 1);
    }
}

/// The metrics of the in-flight limit, labelled by `request_kind` (`readOnly`, `mutating`).
#[derive(Clone, Default)]
pub struct InFlightMetrics {
    /// `apiserver_current_inflight_requests`.
    pub current: [Gauge; 2],
    /// `apiserver_dropped_requests_total`.
    pub dropped: [Counter; 2],
}

/// The request kinds, in the order of [`InFlightMetrics`]' arrays.
pub const REQUEST_KINDS: [&str; 2] = ["readOnly", "mutating"];

/// Bounds the requests in flight, read-only and mutating apart; beyond a bound a request is
/// refused with 429 and `Retry-After: 1`. Long-running requests and members of
/// `system:masters` are not bounded, as upstream.
#[derive(Clone)]
pub struct MaxInFlight {
    kinds: [Arc<Seats>; 2],
}

impl MaxInFlight {
    /// At most `read_only` and `mutating` requests at once (0: no bound).
    pub fn new(read_only: usize, mutating: usize, metrics: &InFlightMetrics) -> Self {
        let seats = |i: usize, limit| {
            Arc::new(Seats {
                limit,
                taken: AtomicUsize::new(0),
                current: metrics.current[i].clone(),
                dropped: metrics.dropped[i].clone(),
            })
        };
        Self {
            kinds: [seats(0, read_only), seats(1, mutating)],
        }
    }
}

/// The answer to a request beyond the in-flight limit.
pub(crate) fn too_many_requests() -> ApiError {
    let mut err = ApiError::new(
        Reason::TooManyRequests,
        "Too many requests, please try again later.",
    );
    err.retry_after_seconds = Some(1);
    err
}

impl Filter for MaxInFlight {
    fn filter<S: Next<B>, B: Send + 'static>(&self, req: Request<B>, next: &mut S) -> Answer {
        let Some(info) = req.extensions().get::<RequestInfo>() else {
            return Box::pin(next.call(req));
        };
        if is_long_running(info) {
            return Box::pin(next.call(req));
        }
        let seats = &self.kinds[usize::from(!is_read_only(info))];
        match seats.take() {
            Some(seat) => {
                let fut = next.call(req);
                // The seat lasts while the response is written, as upstream's handlers write
                // theirs before they return.
                Box::pin(async move { Ok(response::hold_until_sent(fut.await?, seat)) })
            }
            None => {
                let privileged = req
                    .extensions()
                    .get::<UserInfo>()
                    .is_some_and(|u| u.groups.iter().any(|g| g == UserInfo::MASTERS));
                if privileged {
                    return Box::pin(next.call(req));
                }
                seats.dropped.inc();
                let resp = response::error(&too_many_requests());
                Box::pin(async move { Ok(resp) })
            }
        }
    }
}

/// Ends requests that run past their deadline with upstream's 504 Timeout: `--request-timeout`,
/// or the shorter `timeout` a client asks for. Long-running requests have none. The handler
/// of a timed-out request runs to its end in the background, so a write it started is
/// completed (or refused) whole, never cut in the middle; only its answer is lost.
#[derive(Clone)]
pub struct RequestDeadline {
    limit: Duration,
}

impl RequestDeadline {
    /// Deadlines of at most `limit` (zero: none).
    pub fn new(limit: Duration) -> Self {
        Self { limit }
    }

    /// The deadline of a request asking for `timeout`: the client's when positive and
    /// shorter than the limit.
    fn deadline(&self, info: &RequestInfo) -> Result<Option<Duration>, ApiError> {
        let limit = (!self.limit.is_zero()).then_some(self.limit);
        let Some(raw) = info.query.get("timeout").filter(|v| !v.is_empty()) else {
            return Ok(limit);
        };
        let nanos = capstan_meta::duration::parse_go_duration(raw).ok_or_else(|| {
            ApiError::bad_request(format!(
                "invalid timeout specified in the request URL - time: invalid duration {raw:?}"
            ))
        })?;
        if nanos <= 0 {
            return Ok(limit);
        }
        let asked = Duration::from_nanos(nanos as u64);
        Ok(Some(limit.map_or(asked, |l| l.min(asked))))
    }
}

/// Upstream's answer to a request that ran past its deadline.
fn timed_out() -> ApiError {
    ApiError::new(
        Reason::Timeout,
        "Timeout: request did not complete within requested timeout - context deadline exceeded",
    )
}

impl Filter for RequestDeadline {
    fn filter<S: Next<B>, B: Send + 'static>(&self, req: Request<B>, next: &mut S) -> Answer {
        let Some(info) = req.extensions().get::<RequestInfo>() else {
            return Box::pin(next.call(req));
        };
        if is_long_running(info) {
            return Box::pin(next.call(req));
        }
        let deadline = match self.deadline(info) {
            Ok(Some(deadline)) => deadline,
            Ok(None) => return Box::pin(next.call(req)),
            Err(err) => {
                let resp = response::error(&err);
                return Box::pin(async move { Ok(resp) });
            }
        };
        let ends = tokio::time::Instant::now() + deadline;
        let mut handler = Some(Box::pin(next.call(req)));
        // The timer is set only once the handler has to wait: most reads finish on their
        // first poll, and a timer per request costs more than they do.
        let mut timer: Option<Pin<Box<tokio::time::Sleep>>> = None;
        Box::pin(std::future::poll_fn(move |cx| {
            let Some(running) = handler.as_mut() else {
                return Poll::Ready(Ok(response::error(&timed_out())));
            };
            if let Poll::Ready(resp) = running.as_mut().poll(cx) {
                handler = None;
                return Poll::Ready(resp);
            }
            let timer = timer.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(ends)));
            if timer.as_mut().poll(cx).is_pending() {
                return Poll::Pending;
            }
            if let Some(rest) = handler.take() {
                tokio::spawn(async move {
                    let _ = rest.await;
                });
            }
            Poll::Ready(Ok(response::error(&timed_out())))
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(method: &str, path: &str, query: Option<&str>) -> RequestInfo {
        RequestInfo::parse(&method.parse().unwrap(), path, query)
    }

    #[test]
    fn long_running_requests_are_watches_proxies_and_streams() {
        assert!(is_long_running(&info(
            "GET",
            "/api/v1/pods",
            Some("watch=true")
        )));
        assert!(is_long_running(&info(
            "GET",
            "/api/v1/namespaces/a/pods/p/log",
            None
        )));
        assert!(is_long_running(&info(
            "POST",
            "/api/v1/namespaces/a/pods/p/exec",
            None
        )));
        assert!(!is_long_running(&info("GET", "/api/v1/pods", None)));
        assert!(!is_long_running(&info(
            "POST",
            "/api/v1/namespaces/a/pods",
            None
        )));
        // A non-resource path named like a subresource is not one.
        assert!(!is_long_running(&info("GET", "/logs/exec", None)));
    }

    #[test]
    fn read_only_is_get_list_and_watch() {
        assert!(is_read_only(&info("GET", "/api/v1/pods", None)));
        assert!(is_read_only(&info("GET", "/healthz", None)));
        assert!(!is_read_only(&info(
            "DELETE",
            "/api/v1/namespaces/a/pods/p",
            None
        )));
        assert!(!is_read_only(&info("POST", "/apis/x/v1/things", None)));
    }

    #[test]
    fn seats_are_bounded_and_given_back_on_drop() {
        let metrics = InFlightMetrics::default();
        let limit = MaxInFlight::new(2, 0, &metrics);
        let a = limit.kinds[0].take().expect("first seat");
        let b = limit.kinds[0].take().expect("second seat");
        assert!(limit.kinds[0].take().is_none(), "the third is refused");
        assert_eq!(metrics.current[0].get(), 2);
        drop(a);
        assert_eq!(metrics.current[0].get(), 1);
        let c = limit.kinds[0]
            .take()
            .expect("a seat given back is taken again");
        drop((b, c));
        assert_eq!(metrics.current[0].get(), 0);
        // 0 is no bound.
        let many: Vec<_> = (0..1000).map(|_| limit.kinds[1].take().unwrap()).collect();
        assert_eq!(metrics.current[1].get(), 1000);
        drop(many);
        assert_eq!(metrics.current[1].get(), 0);
    }

    #[test]
    fn the_deadline_is_the_shorter_of_the_limit_and_the_clients() {
        let d = RequestDeadline::new(Duration::from_secs(60));
        let at = |q: &str| d.deadline(&info("GET", "/api/v1/pods", Some(q)));
        assert_eq!(at("").unwrap(), Some(Duration::from_secs(60)));
        assert_eq!(at("timeout=5s").unwrap(), Some(Duration::from_secs(5)));
        assert_eq!(at("timeout=1h").unwrap(), Some(Duration::from_secs(60)));
        assert_eq!(at("timeout=0s").unwrap(), Some(Duration::from_secs(60)));
        assert_eq!(at("timeout=-3s").unwrap(), Some(Duration::from_secs(60)));
        let err = at("timeout=soon").unwrap_err();
        assert_eq!(err.code(), 400);
        assert!(err.message.contains("invalid timeout"), "{}", err.message);
        let none = RequestDeadline::new(Duration::ZERO);
        assert_eq!(
            none.deadline(&info("GET", "/api/v1/pods", Some("timeout=2s")))
                .unwrap(),
            Some(Duration::from_secs(2))
        );
    }
}
