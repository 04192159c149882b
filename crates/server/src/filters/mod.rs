//! The filter chain in front of the handlers: tower layers, each passing what it learns to
//! the next as a typed request extension. [`chain`] is the one place that orders them.

mod access_log;
mod audit;
mod authentication;
mod authorization;
mod fairness;
mod filter;
mod goaway;
mod headers;
mod impersonation;
mod instrument;
mod limits;
mod panic;
mod request_info;

use std::convert::Infallible;
use std::sync::Arc;

use capstan_auth::authn::AuthenticatorChain;
use capstan_auth::authz::AuthorizerChain;
use http::{Request, Response};
use hyper::body::Incoming;
use tower::util::BoxCloneSyncService;
use tower::{Service, ServiceBuilder};

pub use access_log::{AccessLog, ClientAddr};
pub use audit::{Audit, AuditStart, Auditor};
pub use authentication::Authentication;
pub use authorization::Authorization;
pub use fairness::{PriorityAndFairness, WatchSeat, Width, list_width};
pub use filter::FilterLayer;
pub use goaway::{CloseConnection, Goaway};
pub use headers::{Cors, hsts, nosniff};
pub use impersonation::Impersonation;
pub use instrument::Instrument;
pub use limits::{InFlightMetrics, MaxInFlight, REQUEST_KINDS, RequestDeadline};
pub use panic::CatchPanic;
pub use request_info::RequestInfoLayer;

use crate::response::Body;

/// The service every connection serves.
pub type ApiService = BoxCloneSyncService<Request<Incoming>, Response<Body>, Infallible>;

/// The configured filters besides security: response headers (HSTS, CORS) and metrics.
#[derive(Clone)]
pub struct Filters {
    /// `--strict-transport-security-directives`, joined.
    pub hsts_directives: Vec<String>,
    /// `--cors-allowed-origins`.
    pub cors: Cors,
    /// Request metrics.
    pub instrument: Instrument,
    /// `--goaway-chance`.
    pub goaway: Goaway,
    /// The request log (`-v=2` and above).
    pub access_log: AccessLog,
    /// Audit (`--audit-policy-file` with a backend), when configured.
    pub auditor: Option<Arc<Auditor>>,
    /// `--max-requests-inflight`, `--max-mutating-requests-inflight`, when API Priority and
    /// Fairness is off.
    pub max_in_flight: Option<MaxInFlight>,
    /// API Priority and Fairness (`--enable-priority-and-fairness`), which divides the same
    /// seats between priority levels.
    pub fairness: Option<PriorityAndFairness>,
    /// `--request-timeout`.
    pub deadline: RequestDeadline,
}

/// Wraps `handler` in the filters, outermost first.
pub fn chain<S>(
    handler: S,
    filters: Filters,
    authn: Arc<AuthenticatorChain>,
    authz: Arc<AuthorizerChain>,
) -> ApiService
where
    S: Service<Request<Incoming>, Response = Response<Body>, Error = Infallible>
        + Clone
        + Send
        + Sync
        + 'static,
    S::Future: Send + 'static,
{
    let service = ServiceBuilder::new()
        // On every response, a panic's 500 included.
        .layer(headers::cache_control())
        // Outermost but for that, so that a panic anywhere below becomes a 500 Status, not a
        // dropped connection.
        .layer(FilterLayer::new(CatchPanic))
        // Sees every answer, panics turned into 500s included.
        .layer(FilterLayer::new(filters.access_log))
        // On every response, errors included.
        .layer(hsts(&filters.hsts_directives))
        // Decides before anything else may answer, so any request can close its connection.
        .layer(FilterLayer::new(filters.goaway))
        // Before authentication: a browser's preflight carries no credentials.
        .layer(FilterLayer::new(filters.cors))
        // Parses what the request is about once; everything below reads the extension.
        .layer(RequestInfoLayer)
        // Every request gets its audit ID; the stages after the handler (and panics, and
        // failed authentications) are recorded here.
        .layer(FilterLayer::new(Audit::new(filters.auditor.clone())))
        // Counts and times every request, refused ones included.
        .layer(FilterLayer::new(filters.instrument))
        // A 504 for what runs past its deadline, authentication's work included.
        .layer(FilterLayer::new(filters.deadline))
        // Who is asking: 401 before any work is done for an unknown caller.
        .layer(FilterLayer::new(Authentication::new(authn)))
        // The audit level, by the policy, for the user as authenticated (RequestReceived).
        .option_layer(
            filters
                .auditor
                .map(|a| FilterLayer::new(AuditStart::new(a))),
        )
        // Acting as another user, when allowed to (`kubectl --as`).
        .layer(FilterLayer::new(Impersonation::new(authz.clone())))
        // A 429 beyond the requests in flight (system:masters excepted, so it follows
        // authentication and impersonation); or, with API Priority and Fairness, a seat of
        // the request's priority level, after a fair wait in its queue.
        .option_layer(filters.max_in_flight.map(FilterLayer::new))
        .option_layer(filters.fairness.map(FilterLayer::new))
        // May they: 403 before the request reaches a handler.
        .layer(FilterLayer::new(Authorization::new(authz)))
        .service(handler);
    BoxCloneSyncService::new(service)
}
