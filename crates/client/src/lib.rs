//! A small Kubernetes API client for Capstan's own daemons and tools: typed REST calls over
//! one HTTP/2 connection (rustls), bodies in protobuf (default) or JSON, the server's errors
//! as `Status`, client-side rate limits (QPS and burst), kubeconfig loading, and a
//! [`Reflector`] that lists and watches a collection, resuming and relisting as informers do.

mod client;
mod config;
mod error;
mod https;
mod leader;
mod limiter;
mod reflector;
mod transport;
mod watch;

pub use client::{Client, ListParams, PatchType, WatchEvent, collection_path};
pub use config::{Config, ContentType};
pub use error::{Error, Result};
pub use https::{HttpsClient, ServiceClient, ServiceResolver, WebhookTarget};
pub use leader::{LEADER_ANNOTATION, LeaderElection, LeaderElector, LeaderRecord, LockKind};
pub use limiter::RateLimiter;
pub use reflector::{Change, Reflector};
pub use transport::{backend_tls, client_tls};
