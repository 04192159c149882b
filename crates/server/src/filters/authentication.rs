use std::sync::Arc;

use capstan_auth::authn::{AuthenticatorChain, Credentials, PeerCertificates};
use capstan_meta::ApiError;
use http::{Request, Response, header};
use tower::ServiceExt;

use super::filter::{Answer, Filter, Next};
use crate::response::{self, Body};

/// Authenticates the caller and attaches its [`UserInfo`](capstan_auth::UserInfo); answers
/// 401 for invalid or (without anonymous access) missing credentials.
#[derive(Clone)]
pub struct Authentication {
    chain: Arc<AuthenticatorChain>,
}

impl Authentication {
    /// The filter over `chain`.
    pub fn new(chain: Arc<AuthenticatorChain>) -> Self {
        Self { chain }
    }
}

fn bearer_token<B>(req: &Request<B>) -> Option<&str> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

fn credentials<B>(req: &Request<B>) -> Credentials<'_> {
    let certificates = req.extensions().get::<Arc<PeerCertificates>>();
    match bearer_token(req) {
        Some(token) => Credentials::bearer(token),
        None => Credentials::default(),
    }
    .with_client_certificates(certificates.map(|c| &**c))
    .with_headers(req.headers())
}

impl Filter for Authentication {
    fn filter<S: Next<B>, B: Send + 'static>(&self, mut req: Request<B>, next: &mut S) -> Answer {
        // Credentials checked in memory are decided at once, and the request passed on.
        if let Some(outcome) = self.chain.authenticate_now(&credentials(&req)) {
            return match outcome {
                Ok(user) => {
                    req.extensions_mut().insert(user);
                    Box::pin(next.call(req))
                }
                Err(why) => Box::pin(std::future::ready(Ok(refuse(&req, &why)))),
            };
        }
        let inner = next.clone();
        let chain = self.chain.clone();
        Box::pin(async move {
            let outcome = chain.authenticate(&credentials(&req)).await;
            match outcome {
                Ok(user) => {
                    req.extensions_mut().insert(user);
                    inner.oneshot(req).await
                }
                Err(why) => Ok(refuse(&req, &why)),
            }
        })
    }
}

/// The 401 of a request whose credentials were refused.
fn refuse<B>(req: &Request<B>, why: &str) -> Response<Body> {
    tracing::debug!(reason = %why, "authentication failed");
    super::audit::note_failed_authentication(req);
    response::error(&ApiError::unauthorized())
}
