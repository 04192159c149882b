use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use capstan_auth::UserInfo;
use capstan_auth::authz::{Attributes, AuthorizerChain};
use capstan_meta::{ApiError, GroupResource, Reason};
use futures_util::future::BoxFuture;
use http::{Request, Response};
use tower::{Layer, Service, ServiceExt};

use crate::request_info::RequestInfo;
use crate::response::{self, Body};

/// Asks the authorizers whether the authenticated user may make the request; answers 403
/// otherwise.
#[derive(Clone)]
pub struct AuthorizationLayer {
    chain: Arc<AuthorizerChain>,
}

impl AuthorizationLayer {
    /// A layer over `chain`.
    pub fn new(chain: Arc<AuthorizerChain>) -> Self {
        Self { chain }
    }
}

impl<S> Layer<S> for AuthorizationLayer {
    type Service = Authorization<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Authorization {
            inner,
            chain: self.chain.clone(),
        }
    }
}

/// See [`AuthorizationLayer`].
#[derive(Clone)]
pub struct Authorization<S> {
    inner: S,
    chain: Arc<AuthorizerChain>,
}

fn attributes(user: UserInfo, info: &RequestInfo) -> Attributes {
    Attributes {
        user,
        verb: info.verb.clone(),
        resource_request: info.is_resource_request,
        api_group: info.api_group.clone(),
        api_version: info.api_version.clone(),
        resource: info.resource.clone(),
        subresource: info.subresource.clone(),
        namespace: info.namespace.clone(),
        name: info.name.clone(),
        path: info.path.clone(),
    }
}

fn forbidden(attrs: &Attributes, why: &str) -> ApiError {
    if attrs.resource_request {
        let mut resource = attrs.resource.clone();
        if !attrs.subresource.is_empty() {
            resource = format!("{resource}/{}", attrs.subresource);
        }
        let gr = GroupResource::new(attrs.api_group.clone(), resource);
        ApiError::forbidden(
            &attrs.user.name,
            &attrs.verb,
            &gr,
            &attrs.name,
            &attrs.namespace,
            why,
        )
    } else {
        let mut msg = format!(
            "forbidden: User \"{}\" cannot {} path \"{}\"",
            attrs.user.name, attrs.verb, attrs.path
        );
        if !why.is_empty() {
            msg.push_str(&format!(": {why}"));
        }
        ApiError::new(Reason::Forbidden, msg)
    }
}

impl<S, B> Service<Request<B>> for Authorization<S>
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

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let inner = self.inner.clone();
        let chain = self.chain.clone();
        Box::pin(async move {
            let (Some(user), Some(info)) = (
                req.extensions().get::<UserInfo>(),
                req.extensions().get::<RequestInfo>(),
            ) else {
                return Ok(response::error(&ApiError::internal(
                    "the request reached authorization unauthenticated",
                )));
            };
            let attrs = attributes(user.clone(), info);
            match chain.authorize(&attrs).await {
                Ok(()) => inner.oneshot(req).await,
                Err(why) => Ok(response::error(&forbidden(&attrs, &why))),
            }
        })
    }
}
