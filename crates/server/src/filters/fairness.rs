//! API Priority and Fairness in the chain (`--enable-priority-and-fairness`): each request is
//! classified by the FlowSchemas and runs on a seat of its priority level, after waiting in
//! its flow's queue if need be, or is refused with 429. Every response says where the request
//! was classified (`X-Kubernetes-PF-FlowSchema-UID`, `X-Kubernetes-PF-PriorityLevel-UID`).
//! A seat is held until the response has been written (or the client has gone), as upstream's
//! handlers write theirs before returning. A watch holds its seats until its initial events
//! have been handed on (as upstream's watch initialization), and is as wide as a LIST of its
//! collection when it starts with the collection's state. Other long-running requests are
//! classified but hold no seat.

use std::sync::Arc;

use capstan_auth::UserInfo;
use capstan_flowcontrol::{Classification, Decision, FlowControl, Ticket};
use http::{HeaderName, HeaderValue, Request, Response};
use tower::ServiceExt;

use super::filter::{Answer, Filter, Next};
use super::limits::{is_long_running, too_many_requests};
use crate::request_info::RequestInfo;
use crate::response::{self, Body};

/// The seats a request needs (its width).
pub type Width = Arc<dyn Fn(&RequestInfo) -> u32 + Send + Sync>;

/// The filter, over the server's flow controller.
#[derive(Clone)]
pub struct PriorityAndFairness {
    control: Arc<FlowControl>,
    width: Width,
}

impl PriorityAndFairness {
    /// The filter of `control`, giving each request `width` seats.
    pub fn new(control: Arc<FlowControl>, width: Width) -> Self {
        Self { control, width }
    }
}

/// Objects a LIST seat stands for, and the most seats a LIST takes (upstream's figures).
const OBJECTS_PER_SEAT: u64 = 100;
const MAX_LIST_SEATS: u64 = 10;

/// Upstream's width of a request: one seat, and for a LIST one per 100 objects it may return
/// (`stored`: the collection's last count; a `limit` bounds it), at most 10. A WATCH that
/// starts with the collection's state (no resourceVersion, or "0") sends as much as a LIST
/// while it initializes, and is as wide.
pub fn list_width(info: &RequestInfo, stored: impl FnOnce() -> Option<u64>) -> u32 {
    let initial_state = || {
        info.query
            .get("resourceVersion")
            .is_none_or(|rv| rv.is_empty() || rv == "0")
    };
    let lists = info.verb == "list" || (info.verb == "watch" && initial_state());
    if !lists {
        return 1;
    }
    let mut objects = stored().unwrap_or(0);
    if let Some(limit) = info
        .query
        .get("limit")
        .and_then(|l| l.parse::<u64>().ok())
        .filter(|l| *l > 0)
    {
        objects = objects.min(limit);
    }
    objects.div_ceil(OBJECTS_PER_SEAT).clamp(1, MAX_LIST_SEATS) as u32
}

const FLOW_SCHEMA_UID: HeaderName = HeaderName::from_static("x-kubernetes-pf-flowschema-uid");
const PRIORITY_LEVEL_UID: HeaderName = HeaderName::from_static("x-kubernetes-pf-prioritylevel-uid");

fn mark(resp: &mut Response<Body>, class: &Classification) {
    let headers = resp.headers_mut();
    for (name, uid) in [
        (FLOW_SCHEMA_UID, &class.schema_uid),
        (PRIORITY_LEVEL_UID, &class.level_uid),
    ] {
        if let Ok(value) = HeaderValue::from_str(uid) {
            headers.insert(name, value);
        }
    }
}

fn refused(class: &Classification) -> Answer {
    let mut resp = response::error(&too_many_requests());
    mark(&mut resp, class);
    Box::pin(async move { Ok(resp) })
}

impl Filter for PriorityAndFairness {
    fn filter<S: Next<B>, B: Send + 'static>(&self, req: Request<B>, next: &mut S) -> Answer {
        let Some(info) = req.extensions().get::<RequestInfo>() else {
            return Box::pin(next.call(req));
        };
        let attributes = info.attributes(req.extensions().get::<UserInfo>());
        // Watches take their seats while they initialize; other long-running requests none.
        if is_long_running(info) && info.verb != "watch" {
            let class = self.control.classify(&attributes);
            let fut = next.call(req);
            return Box::pin(async move {
                let mut resp = fut.await?;
                if let Some(class) = class {
                    mark(&mut resp, &class);
                }
                Ok(resp)
            });
        }
        let Some(pending) = self.control.admit(&attributes, (self.width)(info)) else {
            return Box::pin(next.call(req));
        };
        let watch = info.verb == "watch";
        let class = pending.classification().clone();
        match pending.decided() {
            Decision::Admitted(ticket) => {
                let ticket = Arc::new(ticket);
                let fut = next.call(seated(req, &ticket, watch));
                Box::pin(async move {
                    let mut resp = fut.await?;
                    mark(&mut resp, &class);
                    Ok(release(resp, ticket, watch))
                })
            }
            Decision::Rejected(_) => refused(&class),
            Decision::Waiting(waiting) => {
                let next = next.clone();
                Box::pin(async move {
                    let Ok(ticket) = waiting.admitted().await else {
                        return refused(&class).await;
                    };
                    let ticket = Arc::new(ticket);
                    let mut resp = next.oneshot(seated(req, &ticket, watch)).await?;
                    mark(&mut resp, &class);
                    Ok(release(resp, ticket, watch))
                })
            }
        }
    }
}

/// A request extension for a watch's handler: its seat, to keep until the initial events
/// have been handed on (the filter's own hold ends with the response's headers).
#[derive(Clone)]
pub struct WatchSeat(pub capstan_registry::InitializationGuard);

fn seated<B>(mut req: Request<B>, ticket: &Arc<Ticket>, watch: bool) -> Request<B> {
    if watch {
        let guard: capstan_registry::InitializationGuard = ticket.clone();
        req.extensions_mut().insert(WatchSeat(guard));
    }
    req
}

/// Lets go of the filter's hold on the seat: a watch's once its handler has answered (the
/// handler keeps it while the initial events go out), anything else's once the response
/// body has been sent.
fn release(resp: Response<Body>, ticket: Arc<Ticket>, watch: bool) -> Response<Body> {
    if watch {
        drop(ticket);
        return resp;
    }
    response::hold_until_sent(resp, ticket)
}

#[cfg(test)]
mod tests {
    use http::Method;

    use super::*;

    fn info(path: &str, query: Option<&str>) -> RequestInfo {
        RequestInfo::parse(&Method::GET, path, query)
    }

    #[test]
    fn lists_take_a_seat_per_hundred_objects_up_to_ten() {
        let list = info("/api/v1/configmaps", None);
        assert_eq!(list_width(&list, || Some(0)), 1);
        assert_eq!(list_width(&list, || None), 1);
        assert_eq!(list_width(&list, || Some(250)), 3);
        assert_eq!(list_width(&list, || Some(20_000)), 10);
        let limited = info("/api/v1/configmaps", Some("limit=100"));
        assert_eq!(list_width(&limited, || Some(20_000)), 1);
        let get = info("/api/v1/namespaces/default/configmaps/x", None);
        assert_eq!(list_width(&get, || Some(20_000)), 1);
        let watch = info("/api/v1/configmaps", Some("watch=true"));
        assert_eq!(list_width(&watch, || Some(250)), 3, "the initial state");
        let from_zero = info("/api/v1/configmaps", Some("watch=true&resourceVersion=0"));
        assert_eq!(list_width(&from_zero, || Some(250)), 3);
        let resumed = info("/api/v1/configmaps", Some("watch=true&resourceVersion=12"));
        assert_eq!(list_width(&resumed, || Some(250)), 1, "changes only");
    }
}
