//! Capstan authentication and authorization, without HTTP.
//!
//! [`authn`]: who is asking. Authenticators turn credentials (client certificates, static,
//! service-account and bootstrap tokens) into a [`UserInfo`]; the chain adds `system:authenticated`, falls back to the anonymous user when
//! allowed, and refuses a credential that no authenticator accepts.
//!
//! [`authz`]: may they. Authorizers answer allow, deny or no opinion for request
//! [`Attributes`](authz::Attributes); the chain asks them in `--authorization-mode` order.
//! Members of `system:masters` are always allowed, as upstream.

pub mod authn;
pub mod authz;
mod error;
pub mod loaded;
mod user;

pub use error::{Error, Result};
pub use user::UserInfo;
