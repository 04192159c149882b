use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use capstan_auth::authn::{AuthenticatorChain, Credentials};
use capstan_meta::ApiError;
use futures_util::future::BoxFuture;
use http::{Request, Response, header};
use tower::{Layer, Service, ServiceExt};

use crate::response::{self, Body};

/// Authenticates the caller and attaches its [`UserInfo`](capstan_auth::UserInfo); answers
/// 401 for invalid or (without anonymous access) missing credentials.
#[derive(Clone)]
pub struct AuthenticationLayer {
    chain: Arc<AuthenticatorChain>,
}

impl AuthenticationLayer {
    /// A layer over `chain`.
    pub fn new(chain: Arc<AuthenticatorChain>) -> Self {
        Self { chain }
    }
}

impl<S> Layer<S> for AuthenticationLayer {
    type Service = Authentication<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Authentication {
            inner,
            chain: self.chain.clone(),
        }
    }
}

/// See [`AuthenticationLayer`].
#[derive(Clone)]
pub struct Authentication<S> {
    inner: S,
    chain: Arc<AuthenticatorChain>,
}

fn bearer_token<B>(req: &Request<B>) -> Option<&str> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

impl<S, B> Service<Request<B>> for Authentication<S>
where
    S: Service<Request<B>, Response = Response<Body>, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: Send + 'static,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response<Body>, Infallible>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut req: Request<B>) -> Self::Future {
        let inner = self.inner.clone();
        let chain = self.chain.clone();
        Box::pin(async move {
            let outcome = {
                let credentials = match bearer_token(&req) {
                    Some(token) => Credentials::bearer(token),
                    None => Credentials::default(),
                };
                chain.authenticate(&credentials).await
            };
            match outcome {
                Ok(user) => {
                    req.extensions_mut().insert(user);
                    inner.oneshot(req).await
                }
                Err(why) => {
                    tracing::debug!(reason = %why, "authentication failed");
                    Ok(response::error(&ApiError::unauthorized()))
                }
            }
        })
    }
}
