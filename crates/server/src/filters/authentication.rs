use std::sync::Arc;

use capstan_auth::authn::{AuthenticatorChain, Credentials, PeerCertificates};
use capstan_meta::ApiError;
use http::{Request, header};
use tower::ServiceExt;

use super::filter::{Answer, Filter, Next};
use crate::response::{self};

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

impl Filter for Authentication {
    fn filter<S: Next<B>, B: Send + 'static>(&self, mut req: Request<B>, next: &mut S) -> Answer {
        let inner = next.clone();
        let chain = self.chain.clone();
        Box::pin(async move {
            let outcome = {
                let certificates = req.extensions().get::<Arc<PeerCertificates>>();
                let credentials = match bearer_token(&req) {
                    Some(token) => Credentials::bearer(token),
                    None => Credentials::default(),
                }
                .with_client_certificates(certificates.map(|c| &**c))
                .with_headers(req.headers());
                chain.authenticate(&credentials).await
            };
            match outcome {
                Ok(user) => {
                    req.extensions_mut().insert(user);
                    inner.oneshot(req).await
                }
                Err(why) => {
                    tracing::debug!(reason = %why, "authentication failed");
                    super::audit::note_failed_authentication(&req);
                    Ok(response::error(&ApiError::unauthorized()))
                }
            }
        })
    }
}
