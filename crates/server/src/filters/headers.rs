//! Response headers: `Cache-Control` on every answer, and those set by configuration: HSTS
//! (`--strict-transport-security-directives`) and CORS (`--cors-allowed-origins`, with
//! preflight requests answered before authentication).

use std::sync::Arc;

use http::{HeaderValue, Method, Request, Response, StatusCode, header};
use regex::Regex;
use tower::util::MapResponseLayer;

use super::filter::{Answer, Filter, Next};
use crate::response::{self, Body};

/// Marks every response `Cache-Control: no-cache, private` unless its handler said otherwise
/// (an OpenAPI document under its hash is immutable), as upstream does: an answer is for the
/// caller who was authorized to get it, never for a shared cache to hand to someone else.
pub fn cache_control() -> MapResponseLayer<impl Fn(Response<Body>) -> Response<Body> + Clone + use<>>
{
    MapResponseLayer::new(|mut resp: Response<Body>| {
        resp.headers_mut()
            .entry(header::CACHE_CONTROL)
            .or_insert(HeaderValue::from_static("no-cache, private"));
        resp
    })
}

/// Adds `X-Content-Type-Options: nosniff` to `resp` (upstream's refusals by authorization and
/// its health endpoints' text carry it).
pub fn nosniff(mut resp: Response<Body>) -> Response<Body> {
    resp.headers_mut().insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    resp
}

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
pub struct Cors {
    origins: Arc<Vec<Regex>>,
}

impl Cors {
    /// The filter for `origins` (none: CORS off).
    pub fn new(origins: Vec<Regex>) -> Self {
        Self {
            origins: Arc::new(origins),
        }
    }
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

impl Filter for Cors {
    fn filter<S: Next<B>, B: Send + 'static>(&self, req: Request<B>, next: &mut S) -> Answer {
        let allowed = req
            .headers()
            .get(header::ORIGIN)
            .filter(|o| {
                o.to_str()
                    .is_ok_and(|o| self.origins.iter().any(|re| re.is_match(o)))
            })
            .cloned();
        let Some(origin) = allowed else {
            return Box::pin(next.call(req));
        };
        if req.method() == Method::OPTIONS {
            let mut resp = response::text(StatusCode::NO_CONTENT, "");
            resp.headers_mut().remove(header::CONTENT_TYPE);
            add_cors(&mut resp, origin);
            return Box::pin(async move { Ok(resp) });
        }
        let fut = next.call(req);
        Box::pin(async move {
            let mut resp = fut.await?;
            add_cors(&mut resp, origin);
            Ok(resp)
        })
    }
}
