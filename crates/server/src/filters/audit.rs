//! Audit: [`Audit`] gives every request its audit ID (the `Audit-ID` header, a client's own
//! honoured) and records its later stages (ResponseStarted for watches, ResponseComplete,
//! Panic, and failed authentications); [`AuditStart`], once the user is known, asks the
//! policy for the request's level and records RequestReceived.

use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use capstan_audit::{
    Level, ObjectRef, Policy, RequestAttributes, RequestContext, RequestRecord, ResponseStatus,
    Sink, Stage, User,
};
use capstan_auth::UserInfo;
use capstan_meta::ApiError;
use futures_util::FutureExt;
use http::{HeaderMap, HeaderValue, Request, Response, header};
use http_body::{Body as HttpBody, Frame, SizeHint};
use tower::ServiceExt;

use super::ClientAddr;
use super::filter::{Answer, Filter, Next};
use crate::request_info::RequestInfo;
use crate::response::{self, Body, ErrorStatus};

/// The audit policy and backends (`--audit-policy-file`, `--audit-log-*`,
/// `--audit-webhook-*`).
pub struct Auditor {
    policy: Policy,
    sink: Sink,
}

impl Auditor {
    /// Audits by `policy` into `sink`.
    pub fn new(policy: Policy, sink: Sink) -> Self {
        Self { policy, sink }
    }

    /// The backends.
    pub fn sink(&self) -> &Sink {
        &self.sink
    }
}

/// The header carrying a request's audit ID.
pub const AUDIT_ID: &str = "audit-id";

/// Sets the audit ID of every request and records the stages after the handler.
#[derive(Clone)]
pub struct Audit {
    auditor: Option<Arc<Auditor>>,
}

impl Audit {
    /// The filter; without an auditor it only sets audit IDs.
    pub fn new(auditor: Option<Arc<Auditor>>) -> Self {
        Self { auditor }
    }
}

static FORWARDED_FOR: http::HeaderName = http::HeaderName::from_static("x-forwarded-for");
static REAL_IP: http::HeaderName = http::HeaderName::from_static("x-real-ip");

/// The client's addresses as upstream lists them: `X-Forwarded-For`, then `X-Real-Ip`,
/// then the connection's peer.
fn source_ips<B>(req: &Request<B>) -> Vec<String> {
    let headers = req.headers();
    let mut ips: Vec<String> = Vec::with_capacity(1);
    for value in headers.get_all(&FORWARDED_FOR) {
        let Ok(value) = value.to_str() else { continue };
        for ip in value.split(',').map(str::trim) {
            if ip.parse::<std::net::IpAddr>().is_ok() {
                ips.push(ip.to_string());
            }
        }
    }
    if let Some(real) = headers
        .get(&REAL_IP)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .filter(|ip| ip.parse::<std::net::IpAddr>().is_ok())
        && !ips.iter().any(|ip| ip == real)
    {
        ips.push(real.to_string());
    }
    if let Some(addr) = req.extensions().get::<ClientAddr>() {
        let remote = addr.0.ip().to_string();
        if !ips.contains(&remote) {
            ips.push(remote);
        }
    }
    ips
}

fn user_agent(headers: &HeaderMap) -> String {
    headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string()
}

fn request_uri<B>(req: &Request<B>) -> String {
    req.uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| req.uri().path().to_string())
}

/// What a failed authentication tried, as upstream reports it.
fn auth_methods<B>(req: &Request<B>) -> String {
    let mut methods = Vec::new();
    let authorization = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .trim();
    if authorization
        .split_once(' ')
        .is_some_and(|(s, _)| s.eq_ignore_ascii_case("basic"))
    {
        methods.push("basic");
    }
    if authorization
        .split_once(' ')
        .is_some_and(|(s, _)| s.eq_ignore_ascii_case("bearer"))
    {
        methods.push("bearer");
    }
    if req.uri().query().is_some_and(|q| {
        q.split('&')
            .any(|kv| kv.starts_with("access_token=") && kv.len() > 13)
    }) {
        methods.push("access_token");
    }
    if req
        .extensions()
        .get::<Arc<capstan_auth::authn::PeerCertificates>>()
        .is_some()
    {
        methods.push("x509");
    }
    if methods.is_empty() {
        "Authentication failed, no credentials provided".into()
    } else {
        format!("Authentication failed, attempted: {}", methods.join(", "))
    }
}

fn object_ref(info: &RequestInfo) -> Option<ObjectRef> {
    info.is_resource_request.then(|| ObjectRef {
        resource: info.resource.clone(),
        namespace: info.namespace.clone(),
        name: info.name.clone(),
        api_group: info.api_group.clone(),
        api_version: info.api_version.clone(),
        subresource: info.subresource.clone(),
        ..ObjectRef::default()
    })
}

/// What an event records of `req` (made by `user`; none when not authenticated).
fn record_of<B>(
    req: &Request<B>,
    ctx: &RequestContext,
    level: Level,
    info: Option<&RequestInfo>,
    user: Option<&UserInfo>,
) -> RequestRecord {
    RequestRecord {
        level,
        audit_id: ctx.audit_id().to_string(),
        request_uri: request_uri(req),
        verb: match info {
            Some(i) if !i.verb.is_empty() => i.verb.clone(),
            _ => req.method().as_str().to_ascii_lowercase(),
        },
        user: user.map(User::from).unwrap_or_default(),
        impersonated_user: None,
        source_ips: source_ips(req),
        user_agent: user_agent(req.headers()),
        object_ref: info.and_then(object_ref),
        received: ctx.received(),
        encoded: Default::default(),
    }
}

/// Notes, for the audit filter, a request refused for its credentials (called by
/// authentication as it answers 401; nothing without audit).
pub fn note_failed_authentication<B>(req: &Request<B>) {
    if let Some(ctx) = req.extensions().get::<Arc<RequestContext>>() {
        let record = record_of(
            req,
            ctx,
            Level::None,
            req.extensions().get::<RequestInfo>(),
            None,
        );
        ctx.note_unauthenticated(record, auth_methods(req));
    }
}

/// The status an event records for `resp`: an error's Status fields, or the code.
fn response_status(resp: &Response<Body>) -> ResponseStatus {
    let code = resp.status().as_u16();
    match resp.extensions().get::<ErrorStatus>() {
        Some(ErrorStatus(body)) => ResponseStatus::from_status_body(code, body),
        None => ResponseStatus::code(code),
    }
}

impl Filter for Audit {
    fn filter<S: Next<B>, B: Send + 'static>(&self, mut req: Request<B>, next: &mut S) -> Answer {
        let audit_id = req
            .headers()
            .get(AUDIT_ID)
            .and_then(|v| v.to_str().ok())
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
            .unwrap_or_else(capstan_meta::names::uid);
        // Never indexed by HTTP/2's header compression: every value is new, so indexing would
        // only search and churn the connection's table (pushing out the headers that repeat).
        let header_value = HeaderValue::from_str(&audit_id).ok().map(|mut v| {
            v.set_sensitive(true);
            v
        });
        let Some(auditor) = self.auditor.clone() else {
            let fut = next.call(req);
            return Box::pin(async move {
                let mut resp = fut.await?;
                if let Some(v) = header_value {
                    resp.headers_mut().insert(AUDIT_ID, v);
                }
                Ok(resp)
            });
        };
        let ctx = Arc::new(RequestContext::new(audit_id, jiff::Timestamp::now()));
        let is_watch = req
            .extensions()
            .get::<RequestInfo>()
            .is_some_and(|i| i.verb == "watch");
        req.extensions_mut().insert(ctx.clone());
        let fut = AssertUnwindSafe(next.call(req)).catch_unwind();
        Box::pin(async move {
            let mut resp = match fut.await {
                Ok(resp) => resp?,
                Err(panic) => {
                    let what = super::panic::panic_message(&*panic);
                    let status = ResponseStatus {
                        status: "Failure".into(),
                        reason: "InternalError".into(),
                        message: format!("APIServer panic'd: {what}"),
                        ..ResponseStatus::code(500)
                    };
                    if let Some(ev) = ctx.event(Stage::Panic, Some(status)) {
                        auditor.sink.record(ev).await;
                    }
                    std::panic::resume_unwind(panic);
                }
            };
            if let Some(v) = header_value {
                resp.headers_mut().insert(AUDIT_ID, v);
            }
            match ctx.decision() {
                None => {
                    // Refused before the user was known: a failed authentication.
                    if let Some((record, message)) = ctx.take_unauthenticated() {
                        let code = resp.status().as_u16();
                        failed_authentication(&auditor, &ctx, record, message, code).await;
                    }
                    return Ok(resp);
                }
                Some(d) if d.level == Level::None => return Ok(resp),
                Some(_) => {}
            }
            let status = response_status(&resp);
            if is_watch && resp.status().is_success() {
                if let Some(ev) = ctx.event(Stage::ResponseStarted, Some(status.clone())) {
                    auditor.sink.record(ev).await;
                }
                let (parts, body) = resp.into_parts();
                let body = AuditedBody {
                    inner: body,
                    finish: Some((auditor, ctx, status)),
                };
                return Ok(Response::from_parts(
                    parts,
                    http_body_util::BodyExt::boxed_unsync(body),
                ));
            }
            if let Some(ev) = ctx.event(Stage::ResponseComplete, Some(status)) {
                auditor.sink.record(ev).await;
            }
            Ok(resp)
        })
    }
}

async fn failed_authentication(
    auditor: &Auditor,
    ctx: &RequestContext,
    mut record: RequestRecord,
    message: String,
    code: u16,
) {
    let nobody: [String; 0] = [];
    let path = record.request_uri.split('?').next().unwrap_or_default();
    let object = record.object_ref.clone().unwrap_or_default();
    let decision = auditor.policy.decide(&RequestAttributes {
        user: "",
        groups: &nobody,
        verb: &record.verb,
        resource_request: record.object_ref.is_some(),
        api_group: &object.api_group,
        resource: &object.resource,
        subresource: &object.subresource,
        namespace: &object.namespace,
        name: &object.name,
        path,
    });
    auditor.sink.metrics().observe_level(decision.level);
    if decision.level == Level::None {
        return;
    }
    record.level = decision.level;
    ctx.start(decision, Some(record));
    let status = ResponseStatus {
        message,
        ..ResponseStatus::code(code)
    };
    if let Some(ev) = ctx.event(Stage::ResponseStarted, Some(status)) {
        auditor.sink.record(ev).await;
    }
}

/// A watch's body: records ResponseComplete when it ends or the client goes away.
struct AuditedBody {
    inner: Body,
    finish: Option<(Arc<Auditor>, Arc<RequestContext>, ResponseStatus)>,
}

impl AuditedBody {
    fn finish(&mut self) {
        if let Some((auditor, ctx, status)) = self.finish.take()
            && let Some(ev) = ctx.event(Stage::ResponseComplete, Some(status))
            && let Some(ev) = auditor.sink.record_buffered(ev)
            && let Ok(runtime) = tokio::runtime::Handle::try_current()
        {
            // A blocking backend writes in a task of its own: the body has been sent.
            runtime.spawn(async move {
                auditor.sink.record(ev).await;
            });
        }
    }
}

impl HttpBody for AuditedBody {
    type Data = Bytes;
    type Error = std::convert::Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(None) = polled {
            self.finish();
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

impl Drop for AuditedBody {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Decides the request's level once the user is known and records RequestReceived.
#[derive(Clone)]
pub struct AuditStart {
    auditor: Arc<Auditor>,
}

impl AuditStart {
    /// The filter of `auditor`.
    pub fn new(auditor: Arc<Auditor>) -> Self {
        Self { auditor }
    }
}

impl Filter for AuditStart {
    fn filter<S: Next<B>, B: Send + 'static>(&self, req: Request<B>, next: &mut S) -> Answer {
        let (Some(ctx), Some(user), Some(info)) = (
            req.extensions().get::<Arc<RequestContext>>(),
            req.extensions().get::<UserInfo>(),
            req.extensions().get::<RequestInfo>(),
        ) else {
            return Box::pin(next.call(req));
        };
        let decision = self.auditor.policy.decide(&info.attributes(Some(user)));
        self.auditor.sink.metrics().observe_level(decision.level);
        if decision.level == Level::None {
            ctx.start(decision, None);
            return Box::pin(next.call(req));
        }
        ctx.start(
            decision,
            Some(record_of(&req, ctx, decision.level, Some(info), Some(user))),
        );
        let event = ctx.event(Stage::RequestReceived, None);
        let auditor = self.auditor.clone();
        let inner = next.clone();
        Box::pin(async move {
            if let Some(ev) = event
                && !auditor.sink.record(ev).await
            {
                auditor.sink.metrics().rejected.inc();
                return Ok(response::error(&ApiError::internal(
                    "failed to store audit event",
                )));
            }
            inner.oneshot(req).await
        })
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;

    use capstan_audit::{BackendOptions, BatchOptions, Destination, Format, Mode, TruncateOptions};
    use tower::ServiceBuilder;

    use super::*;
    use crate::filters::{CatchPanic, FilterLayer};

    #[tokio::test]
    async fn a_panic_is_recorded_and_answered_with_a_500() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.log");
        let sink = Sink::new(
            vec![BackendOptions {
                destination: Destination::Log {
                    path: path.clone(),
                    format: Format::Json,
                    rotation: Default::default(),
                },
                mode: Mode::Blocking,
                batch: BatchOptions {
                    buffer_size: 1,
                    max_size: 1,
                    max_wait: std::time::Duration::ZERO,
                    throttle_enable: false,
                    throttle_qps: 0.0,
                    throttle_burst: 0,
                },
                truncate: TruncateOptions {
                    enabled: false,
                    max_batch_size: 0,
                    max_event_size: 0,
                },
            }],
            Default::default(),
        )
        .unwrap();
        let auditor = Arc::new(Auditor::new(Policy::everything(Level::Metadata), sink));
        let handler = tower::service_fn(|req: Request<()>| async move {
            if req.uri().path().ends_with("/boom") {
                panic!("the handler broke");
            }
            Ok::<_, Infallible>(Response::new(response::full("fine")))
        });
        let service = ServiceBuilder::new()
            .layer(FilterLayer::new(CatchPanic))
            .layer(FilterLayer::new(Audit::new(Some(auditor.clone()))))
            .layer(FilterLayer::new(AuditStart::new(auditor)))
            .service(handler);
        let path_of = "/api/v1/namespaces/default/configmaps/boom";
        let mut req = Request::get(path_of).body(()).unwrap();
        req.extensions_mut()
            .insert(RequestInfo::parse(&http::Method::GET, path_of, None));
        req.extensions_mut().insert(UserInfo {
            name: "alice".into(),
            ..UserInfo::default()
        });
        let resp = service.oneshot(req).await.unwrap();
        assert_eq!(resp.status(), 500);
        let events: Vec<serde_json::Value> = std::fs::read_to_string(&path)
            .unwrap()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        let stages: Vec<_> = events
            .iter()
            .map(|e| e["stage"].as_str().unwrap())
            .collect();
        assert_eq!(stages, ["RequestReceived", "Panic"]);
        let status = &events[1]["responseStatus"];
        assert_eq!(status["code"], 500);
        assert_eq!(status["reason"], "InternalError");
        assert_eq!(status["message"], "APIServer panic'd: the handler broke");
        assert_eq!(events[1]["objectRef"]["name"], "boom");
        assert_eq!(events[1]["user"]["username"], "alice");
    }
}
