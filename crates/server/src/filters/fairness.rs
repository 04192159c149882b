//! API Priority and Fairness in the chain (`--enable-priority-and-fairness`): each request is
//! classified by the FlowSchemas and runs on a seat of its priority level, after waiting in
//! its flow's queue if need be, or is refused with 429. Every response says where the request
//! was classified (`X-Kubernetes-PF-FlowSchema-UID`, `X-Kubernetes-PF-PriorityLevel-UID`).
//! A seat is held until the response has been written (or the client has gone), as upstream's
//! handlers write theirs before returning. Long-running requests are classified but hold no
//! seat.

use std::sync::Arc;

use capstan_auth::UserInfo;
use capstan_flowcontrol::{Classification, Decision, FlowControl, RequestDigest};
use http::{HeaderValue, Request, Response};
use tower::ServiceExt;

use super::filter::{Answer, Filter, Next};
use super::limits::{is_long_running, too_many_requests};
use crate::request_info::RequestInfo;
use crate::response::{self, Body};

/// The filter, over the server's flow controller.
#[derive(Clone)]
pub struct PriorityAndFairness {
    control: Arc<FlowControl>,
}

impl PriorityAndFairness {
    /// The filter of `control`.
    pub fn new(control: Arc<FlowControl>) -> Self {
        Self { control }
    }
}

fn mark(resp: &mut Response<Body>, class: &Classification) {
    let headers = resp.headers_mut();
    for (name, uid) in [
        ("x-kubernetes-pf-flowschema-uid", &class.schema_uid),
        ("x-kubernetes-pf-prioritylevel-uid", &class.level_uid),
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
        let (user, groups) = req
            .extensions()
            .get::<UserInfo>()
            .map_or(("", &[][..]), |u| (u.name.as_str(), u.groups.as_slice()));
        let digest = RequestDigest {
            user,
            groups,
            verb: &info.verb,
            is_resource_request: info.is_resource_request,
            api_group: &info.api_group,
            resource: &info.resource,
            subresource: &info.subresource,
            namespace: &info.namespace,
            name: &info.name,
            path: &info.path,
        };
        if is_long_running(info) {
            let class = self.control.classify(&digest);
            let fut = next.call(req);
            return Box::pin(async move {
                let mut resp = fut.await?;
                if let Some(class) = class {
                    mark(&mut resp, &class);
                }
                Ok(resp)
            });
        }
        let Some(pending) = self.control.admit(&digest, 1) else {
            return Box::pin(next.call(req));
        };
        let class = pending.classification().clone();
        match pending.decided() {
            Decision::Admitted(ticket) => {
                let fut = next.call(req);
                Box::pin(async move {
                    let mut resp = fut.await?;
                    mark(&mut resp, &class);
                    Ok(response::hold_until_sent(resp, ticket))
                })
            }
            Decision::Rejected(_) => refused(&class),
            Decision::Waiting(waiting) => {
                let next = next.clone();
                Box::pin(async move {
                    let Ok(ticket) = waiting.admitted().await else {
                        return refused(&class).await;
                    };
                    let mut resp = next.oneshot(req).await?;
                    mark(&mut resp, &class);
                    Ok(response::hold_until_sent(resp, ticket))
                })
            }
        }
    }
}
