//! Capstan's HTTP serving: HTTPS with HTTP/1.1 and HTTP/2, the filter chain (request info,
//! authentication, authorization), routing from resource descriptors, discovery, OpenAPI
//! and the handlers that call the registry.
//!
//! [`start`] builds everything from a [`ServerConfig`] and serves until
//! [`RunningServer::shutdown`]; [`run`] does the same until SIGINT or SIGTERM. This is the only
//! crate that knows HTTP.

mod aggregator;
mod authn;
mod component_status;
mod config;
mod connect;
mod discovery;
mod error;
mod filters;
mod forward;
mod handler;
mod health;
mod kubeconfig;
mod kubelet;
pub use kubelet::{DEFAULT_KUBELET_PORT, KubeletClientConfig};
mod metrics;
pub use metrics::{LabelAllowList, MetricsOptions};
mod openapi;
mod openapi_v2;
mod proxy;
mod query;
mod render;
mod request_info;
mod response;
mod server;
mod throttle;
mod translate;
mod webhook_services;

pub use authn::{AUTHENTICATION_INFO, DEFAULT_ISSUER};
pub use capstan_auth::authn::RequestHeaderConfig;
pub use capstan_auth_remote::{AuthorizationWebhookConfig, OidcConfig, TokenWebhookConfig};
pub use capstan_control::{ControlLoops, Reconciler};
pub use config::{AuditConfig, ServerConfig, ServiceAccountOptions};
pub use error::{Error, Result};
pub use request_info::RequestInfo;
pub use server::{RunningServer, prepare, run, start};

/// The Kubernetes version whose API Capstan serves.
pub use capstan_serving::options::KUBERNETES_VERSION;
