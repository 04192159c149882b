//! Authenticators and authorizers that ask other servers, behind the traits of
//! `capstan-auth`:
//!
//! - [`TokenWebhook`]: `--authentication-token-webhook-*`, a TokenReview posted to the server
//!   a kubeconfig-format file names; answers cached.
//! - [`AuthorizationWebhook`]: `--authorization-mode=Webhook`, a SubjectAccessReview per
//!   request to the server a kubeconfig-format file names; answers cached.
//! - [`Delegated`]: a component's authentication and authorization delegated to the API
//!   server (TokenReview, SubjectAccessReview, the published client and front-proxy
//!   authorities), as the scheduler's secure port uses them.
//! - [`Oidc`]: `--oidc-*`, ID tokens of an OpenID Connect issuer, whose discovery document and
//!   keys are fetched over HTTPS.
//!
//! [`Authenticator`]: capstan_auth::authn::Authenticator

mod authz_webhook;
mod delegated;
mod error;
mod oidc;
mod webhook;

pub use authz_webhook::{AuthorizationWebhook, AuthorizationWebhookConfig};
pub use delegated::{Delegated, DelegatedConfig, Refusal};
pub use error::{Error, Result};
pub use oidc::{Oidc, OidcConfig};
pub use webhook::{TokenWebhook, TokenWebhookConfig};
