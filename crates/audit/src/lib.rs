//! Capstan audit: which requests are recorded and how much of them ([`Policy`]), the events
//! of each request's stages ([`Event`]), and where they go ([`Sink`]: a rotated log file and
//! a webhook, each blocking or batched). The server's audit filter drives these per request.

pub mod context;
mod error;
pub mod event;
pub mod log;
pub mod policy;
pub mod sink;

pub use context::RequestContext;
pub use error::{Error, Result};
pub use event::{Event, ObjectRef, RequestRecord, ResponseStatus, User};
pub use log::Rotation;
pub use policy::{Decision, Level, Policy, RequestAttributes, Stage, Stages};
pub use sink::{
    AuditMetrics, BackendOptions, BatchOptions, Destination, Format, Mode, Sink, TruncateOptions,
};
