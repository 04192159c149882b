//! Response headers set by configuration: HSTS (`--strict-transport-security-directives`) and
//! CORS (`--cors-allowed-origins`, with preflight requests answered before authentication).

use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures_util::future::BoxFuture;
use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use regex::Regex;
use tower::util::MapResponseLayer;
use tower::{Layer, Service};

use crate::response::{self, Body};

/// Adds `Strict-Transport-Security` with the configured directives (joined by `; `, as
/// upstream does) to every response; none configured, no header.
pub fn hsts(
    directives: &[String],
) -> MapResponseLayer<impl Fn(Response<Body>) -> Response<Body> + Clone + use<>> {
    let value = (!directives.is_empty())
        .then(|| HeaderValue::from_str(&directives.join("; ")).ok())
        .flatten();
    MapResponseLayer::new(move |mut resp: Response<Body>| {
        if let Some(value) = &value {
            resp.headers_mut()
                .insert(header::STRICT_TRANSPORT_SECURITY, value.clone());
        }
        resp
    })
}

/// Answers cross-origin requests from allowed origins (regular expressions matched against
/// the `Origin` header) with upstream's CORS headers; a preflight (`OPTIONS`) from an allowed
/// origin is answered at once with 204.
#[derive(Debug, Clone)]
pub struct CorsLayer {
    origins: Arc<Vec<Regex>>,
}

impl CorsLayer {
    /// The layer for `origins` (none: CORS off).
    pub fn new(origins: Vec<Regex>) -> Self {
        Self {
            origins: Arc::new(origins),
        }
    }
}

impl<S> Layer<S> for CorsLayer {
    type Service = Cors<S>;

    fn layer(&self, inner: S) -> Self::Service {
        Cors {
            inner,
            origins: self.origins.clone(),
        }
    }
}

/// See [`CorsLayer`].
#[derive(Debug, Clone)]
pub struct Cors<S> {
    inner: S,
    origins: Arc<Vec<Regex>>,
}

const ALLOW_METHODS: &str = "POST, GET, OPTIONS, PUT, DELETE, PATCH";
const ALLOW_HEADERS: &str = "Content-Type, Content-Length, Accept-Encoding, X-CSRF-Token, Authorization, X-Requested-With, If-Modified-Since";

fn add_cors(resp: &mut Response<Body>, origin: HeaderValue) {
    let h = resp.headers_mut();
    h.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, origin);
    h.insert(
        header::ACCESS_CONTROL_ALLOW_METHODS,
        HeaderValue::from_static(ALLOW_METHODS),
    );
    h.insert(
        header::ACCESS_CONTROL_ALLOW_HEADERS,
        HeaderValue::from_static(ALLOW_HEADERS),
    );
    h.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static("Date"),
    );
    h.insert(
        header::ACCESS_CONTROL_ALLOW_CREDENTIALS,
        HeaderValue::from_static("true"),
    );
}

impl<S, B> Service<Request<B>> for Cors<S>
where
    S: Service<Request<B>, Response = Response<Body>, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send + 'static,
    B: Send + 'static,
{
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response<Body>, Infallible>>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request<B>) -> Self::Future {
        let allowed = req
            .headers()
            .get(header::ORIGIN)
            .filter(|o| {
                o.to_str()
                    .is_ok_and(|o| self.origins.iter().any(|re| re.is_match(o)))
            })
            .cloned();
        let Some(origin) = allowed else {
            return Box::pin(self.inner.call(req));
        };
        if req.method() == Method::OPTIONS {
            let mut resp = response::text(StatusCode::NO_CONTENT, "");
            resp.headers_mut().remove(header::CONTENT_TYPE);
            add_cors(&mut resp, origin);
            return Box::pin(async move { Ok(resp) });
        }
        let fut = self.inner.call(req);
        Box::pin(async move {
            let mut resp = fut.await?;
            add_cors(&mut resp, origin);
            Ok(resp)
        })
    }
}
