//! The innermost service: routes a request (already authenticated and authorized) to
//! discovery, OpenAPI, health or a resource's [`RestStorage`], and writes the answer.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use capstan_meta::ApiError;
use capstan_negotiation::protobuf::Codec;
use capstan_negotiation::table::IncludeObject;
use capstan_negotiation::{Endpoint, Offer, Transform, media};
use capstan_registry::options::{ListQuery, parse_dry_run};
use capstan_registry::{
    DeleteOptions, Encoded, FieldValidation, GetOptions, ListOptions, PatchType, Payload, Registry,
    ResponseStatus, RestStorage, WatchOptions, WriteOptions,
};
use http::{HeaderMap, Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Limited};
use hyper::body::Incoming;

use crate::discovery::Discovery;
use crate::openapi::OpenApi;
use crate::openapi_v2::{self, OpenApiV2};
use crate::render::{self, Renderer};
use crate::request_info::RequestInfo;
use crate::response::{self, Body};

/// What the handlers share.
pub struct State {
    /// Extension API servers' group versions, proxied.
    pub(crate) aggregator: Arc<crate::aggregator::Aggregator>,
    /// The served resources.
    pub registry: Arc<Registry>,
    /// Discovery documents, swapped whole when custom resources come or go.
    pub discovery: std::sync::RwLock<Arc<Discovery>>,
    /// The custom resources served now.
    pub custom: Arc<capstan_apiextensions::CustomResources>,
    /// OpenAPI v3 documents, built on first use (they cost tens of milliseconds and
    /// megabytes that a server nobody asks for them need not spend), again after custom
    /// resources come or go; with the custom set's generation they were built from.
    pub openapi: Built<OpenApi>,
    /// The OpenAPI v2 document, built likewise.
    pub openapi_v2: Built<OpenApiV2>,
    /// Largest accepted request body.
    pub max_body: usize,
    /// Lower bound of a watch's duration when the client sets none.
    pub min_request_timeout: std::time::Duration,
    /// Fires when the server shuts down (ends watches).
    pub shutdown: tokio::sync::watch::Receiver<bool>,
    /// `/healthz`, `/livez`, `/readyz` and their checks.
    pub health: crate::health::Health,
    /// `/metrics`.
    pub metrics: Arc<crate::metrics::Metrics>,
    /// Whether `/debug/pprof/` is served.
    pub profiling: bool,
    /// API Priority and Fairness, when on (its `/debug/api_priority_and_fairness/` pages).
    pub flow_control: Option<Arc<capstan_flowcontrol::FlowControl>>,
    /// Connections to kubelets (logs, exec, attach, port-forward, the node proxy).
    pub kubelet: Arc<crate::kubelet::KubeletClient>,
    /// Bytes per second an upgraded proxied connection carries each way (0: no limit).
    pub max_connection_bytes_per_sec: u64,
    /// Service-account tokens: the issuer's discovery document and keys.
    pub service_accounts: Arc<capstan_auth::authn::serviceaccount::ServiceAccountTokens>,
}

/// Every resource `registry` and `custom` serve: the built-in ones, then the custom ones
/// (discovery's and OpenAPI's order).
pub(crate) fn served(
    registry: &Registry,
    custom: &capstan_apiextensions::CustomResources,
) -> Vec<Arc<dyn RestStorage>> {
    let mut all: Vec<Arc<dyn RestStorage>> = registry.resources().cloned().collect();
    all.extend(custom.resources_and_subresources());
    all
}

/// A document built from the served set, with the custom set's generation it was built at.
pub type Built<T> = std::sync::RwLock<Option<(u64, Arc<T>)>>;

/// `slot`'s document when it was built at `generation`, else one `build` makes now. A
/// document built while the set changed keeps the older generation, so the next request
/// builds again.
fn current<T>(slot: &Built<T>, generation: u64, build: impl FnOnce() -> T) -> Arc<T> {
    if let Some((built_at, doc)) = &*slot.read().unwrap_or_else(|e| e.into_inner())
        && *built_at == generation
    {
        return doc.clone();
    }
    let doc = Arc::new(build());
    *slot.write().unwrap_or_else(|e| e.into_inner()) = Some((generation, doc.clone()));
    doc
}

impl State {
    /// Every served resource: the built-in ones, then the custom ones.
    pub fn served(&self) -> Vec<Arc<dyn RestStorage>> {
        served(&self.registry, &self.custom)
    }

    /// The OpenAPI v3 documents of the resources served now (each built when first asked
    /// for).
    pub fn openapi(&self) -> Arc<OpenApi> {
        current(&self.openapi, self.custom.generation(), || {
            OpenApi::new(self.served())
        })
    }

    /// The OpenAPI v2 document, built now if it is not current. On a thread of its own:
    /// building makes megabytes of short-lived schema trees (docs/performance.md, "Idle
    /// memory").
    pub fn openapi_v2(&self) -> Arc<OpenApiV2> {
        current(&self.openapi_v2, self.custom.generation(), || {
            capstan_serving::memory::on_own_thread(|| OpenApiV2::build(&self.served()))
        })
    }

    /// The discovery documents served now.
    pub fn discovery(&self) -> Arc<Discovery> {
        self.discovery
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }
}

/// Serves one request.
pub async fn handle(
    state: Arc<State>,
    mut req: Request<Incoming>,
) -> Result<Response<Body>, Infallible> {
    // The filters above have read it; the handler takes it over.
    let info = match req.extensions_mut().remove::<RequestInfo>() {
        Some(info) => info,
        None => RequestInfo::parse(req.method(), req.uri().path(), req.uri().query()),
    };
    let route = state.aggregator.route(&info.path);
    if route.is_some() || !may_store(&info) {
        // Only a write of stored objects keeps its notice to the store: an exec or a proxied
        // request may stay open for minutes (see `announce_write`).
        capstan_storage::WriteNotice::withdraw_current();
    }
    let pretty = wants_pretty(&info, req.headers());
    let mut error_headers = HeaderMap::new();
    if let Some(accept) = req.headers().get(header::ACCEPT) {
        error_headers.insert(header::ACCEPT, accept.clone());
    }
    // Only the resource path's future is kept inline: the others, rarer and larger, are
    // boxed so that every request's future is not as large as theirs.
    let result = if let Some(route) = route {
        let user = req.extensions().get::<capstan_auth::UserInfo>().cloned();
        Box::pin(state.aggregator.proxy(route, req, user.as_ref())).await
    } else if info.is_resource_request {
        resource(&state, &info, req, pretty).await
    } else if let Some(answer) = Box::pin(state.health.serve(&info, req.method())).await {
        Ok(answer)
    } else if state.profiling && is_pprof(&info.path) {
        Box::pin(profile(req.method(), req.uri())).await
    } else if is_openapi(&info.path) {
        Box::pin(openapi(&state, &info, req.method(), req.headers(), pretty)).await
    } else {
        non_resource(&state, &info, req.method(), req.headers(), pretty)
    };
    Ok(result.unwrap_or_else(|e| render::error(&e, &error_headers)))
}

/// Whether the request may write stored objects: a write verb on a resource, other than
/// the streams (exec, attach, port-forward) and proxies.
fn may_store(info: &RequestInfo) -> bool {
    info.is_resource_request
        && matches!(
            info.verb.as_str(),
            "create" | "update" | "patch" | "delete" | "deletecollection"
        )
        && !matches!(
            info.subresource.as_str(),
            "exec" | "attach" | "portforward" | "proxy"
        )
}

fn is_openapi(path: &str) -> bool {
    path.trim_end_matches('/') == "/openapi/v2" || path.starts_with("/openapi/v3")
}

/// `/openapi/v2` and `/openapi/v3/...`. A document not built yet is built on a blocking
/// thread, off the runtime's workers. As upstream's: a v3 document carries its hash as its
/// `ETag`; asked for under its current hash (`?hash=`, the index's URL) it may be cached for a
/// year, under another one it has moved to the current URL (301).
async fn openapi(
    state: &Arc<State>,
    info: &RequestInfo,
    method: &Method,
    headers: &HeaderMap,
    pretty: bool,
) -> Result<Response<Body>, ApiError> {
    if method != Method::GET && method != Method::HEAD {
        return Err(ApiError::method_not_allowed());
    }
    enum Answer {
        V2(Arc<OpenApiV2>),
        Index(Bytes),
        Document { body: Bytes, hash: String },
        Moved { hash: String },
        NotModified { hash: String },
        NotFound,
    }
    let asked = info.query.get("hash").map(str::to_string);
    let matched = headers
        .get(header::IF_NONE_MATCH)
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    let path = info.path.clone();
    let state_ = state.clone();
    let answer = tokio::task::spawn_blocking(move || {
        let state = state_;
        if path.trim_end_matches('/') == "/openapi/v2" {
            return Answer::V2(state.aggregator.merge_openapi_v2(state.openapi_v2()));
        }
        let openapi = state.openapi();
        if path.trim_end_matches('/') == "/openapi/v3" {
            return match openapi.get(&path) {
                Some(index) => Answer::Index(state.aggregator.merge_openapi_index(index)),
                None => Answer::NotFound,
            };
        }
        let Some(hash) = openapi.hash(&path).map(str::to_string) else {
            return Answer::NotFound;
        };
        if asked.as_ref().is_some_and(|a| *a != hash) {
            return Answer::Moved { hash };
        }
        if matched.is_some_and(|m| etag_matches(&m, &hash)) {
            return Answer::NotModified { hash };
        }
        match openapi.get(&path) {
            Some(body) => Answer::Document { body, hash },
            None => Answer::NotFound,
        }
    })
    .await
    .map_err(|e| ApiError::internal(format!("building the OpenAPI document: {e}")))?;
    let etag = |hash: &str| http::HeaderValue::from_str(&format!("\"{hash}\""));
    match answer {
        Answer::V2(doc) => openapi_v2_response(&doc, headers, pretty),
        Answer::Index(index) => document(index, headers, pretty, false),
        Answer::NotFound => Err(ApiError::path_not_found()),
        Answer::Moved { hash } => {
            let location = format!("{}?hash={hash}", info.path.trim_end_matches('/'));
            let mut resp = Response::new(response::full(Bytes::new()));
            *resp.status_mut() = StatusCode::MOVED_PERMANENTLY;
            let headers = resp.headers_mut();
            if let Ok(v) = http::HeaderValue::from_str(&location) {
                headers.insert(header::LOCATION, v);
            }
            if let Ok(v) = etag(&hash) {
                headers.insert(header::ETAG, v);
            }
            Ok(resp)
        }
        Answer::NotModified { hash } => {
            let mut resp = Response::new(response::full(Bytes::new()));
            *resp.status_mut() = StatusCode::NOT_MODIFIED;
            if let Ok(v) = etag(&hash) {
                resp.headers_mut().insert(header::ETAG, v);
            }
            Ok(resp)
        }
        Answer::Document { body, hash } => {
            let mut resp = document(body, headers, pretty, false)?;
            let headers = resp.headers_mut();
            if let Ok(v) = etag(&hash) {
                headers.insert(header::ETAG, v);
            }
            // Served as JSON or protobuf by the Accept header, as upstream says.
            headers.insert(header::VARY, http::HeaderValue::from_static("Accept"));
            if info.query.get("hash").is_some() {
                // Found under its current hash: that URL's content never changes.
                headers.insert(
                    header::CACHE_CONTROL,
                    http::HeaderValue::from_static("public, immutable"),
                );
                let expires = jiff::Timestamp::now()
                    .checked_add(jiff::SignedDuration::from_hours(365 * 24))
                    .ok()
                    .and_then(http_date);
                if let Some(expires) = expires {
                    headers.insert(header::EXPIRES, expires);
                }
            }
            Ok(resp)
        }
    }
}

/// Whether an `If-None-Match` value names `hash`'s entity tag (or any, `*`).
fn etag_matches(if_none_match: &str, hash: &str) -> bool {
    if_none_match
        .split(',')
        .map(str::trim)
        .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag).trim_matches('"') == hash)
}

fn is_pprof(path: &str) -> bool {
    path == "/debug/pprof" || path.starts_with("/debug/pprof/")
}

/// `/debug/pprof/...` (GET only).
async fn profile(method: &Method, uri: &http::Uri) -> Result<Response<Body>, ApiError> {
    if method != Method::GET && method != Method::HEAD {
        return Err(ApiError::method_not_allowed());
    }
    let answer = capstan_serving::profiling::answer(uri.path(), uri.query().unwrap_or("")).await;
    let mut resp = response::text(answer.status, answer.body);
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        http::HeaderValue::from_static(answer.content_type),
    );
    Ok(resp)
}

/// `pretty=true`, or a human's tool (curl, wget, a browser) that did not ask otherwise.
fn wants_pretty(info: &RequestInfo, headers: &HeaderMap) -> bool {
    match info.query.get("pretty") {
        Some(v) => matches!(v, "true" | "1" | ""),
        None => headers
            .get(header::USER_AGENT)
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ua| {
                ua.starts_with("curl") || ua.starts_with("Wget") || ua.starts_with("Mozilla/")
            }),
    }
}

/// A discovery or OpenAPI document (JSON) in the representation the client accepts: JSON,
/// YAML, or protobuf for the discovery kinds that have one.
fn document(
    document: Bytes,
    headers: &HeaderMap,
    pretty: bool,
    protobuf: bool,
) -> Result<Response<Body>, ApiError> {
    let choice = media::negotiate(
        render::accept(headers),
        Offer {
            endpoint: Endpoint::Document,
            protobuf,
        },
    )?;
    let renderer = Renderer {
        choice,
        endpoint: Endpoint::Document,
        columns: Vec::new(),
        include: IncludeObject::default(),
        pretty,
    };
    renderer.render(StatusCode::OK, Payload::Whole(document))
}

fn non_resource(
    state: &State,
    info: &RequestInfo,
    method: &Method,
    headers: &HeaderMap,
    pretty: bool,
) -> Result<Response<Body>, ApiError> {
    let path = info.path.as_str();
    let document = match path.trim_end_matches('/') {
        "/debug/api_priority_and_fairness/dump_priority_levels"
        | "/debug/api_priority_and_fairness/dump_queues"
        | "/debug/api_priority_and_fairness/dump_requests"
            if state.flow_control.is_some() =>
        {
            if method != Method::GET && method != Method::HEAD {
                return Err(ApiError::method_not_allowed());
            }
            let control = state.flow_control.as_ref().expect("checked");
            let page = match path.trim_end_matches('/').rsplit('/').next() {
                Some("dump_priority_levels") => control.dump_priority_levels(),
                Some("dump_queues") => control.dump_queues(),
                _ => control.dump_requests(info.query.get("includeRequestDetails") == Some("1")),
            };
            return Ok(response::text(StatusCode::OK, page));
        }
        "/version" => {
            if method != Method::GET && method != Method::HEAD {
                return Err(ApiError::method_not_allowed());
            }
            // Upstream writes this one indented, and as JSON whatever the client accepts.
            let document = state
                .discovery()
                .get("/version")
                .ok_or_else(ApiError::path_not_found)?;
            return Ok(response::json_as_it_is(StatusCode::OK, document));
        }
        "/metrics" => {
            if method != Method::GET && method != Method::HEAD {
                return Err(ApiError::method_not_allowed());
            }
            let (page, content_type) = state.metrics.render();
            // Compressed whatever its size when the scraper accepts gzip, as upstream's.
            let gzip = response::accepts_gzip(headers);
            let mut resp = if gzip {
                response::text(StatusCode::OK, response::gzip_whole(page.as_bytes()))
            } else {
                response::text(StatusCode::OK, page)
            };
            resp.headers_mut().insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static(content_type),
            );
            if gzip {
                resp.headers_mut().insert(
                    header::CONTENT_ENCODING,
                    http::HeaderValue::from_static("gzip"),
                );
            }
            return Ok(resp);
        }
        "/.well-known/openid-configuration" | "/openid/v1/jwks" => {
            if method != Method::GET && method != Method::HEAD {
                return Err(ApiError::method_not_allowed());
            }
            let (document, content_type) = if path == "/openid/v1/jwks" {
                (state.service_accounts.jwks(), "application/jwk-set+json")
            } else {
                let document = state
                    .service_accounts
                    .openid_configuration()
                    .ok_or_else(ApiError::path_not_found)?;
                (document, "application/json")
            };
            let mut resp = response::json(StatusCode::OK, document.to_string().into(), pretty);
            resp.headers_mut().insert(
                header::CONTENT_TYPE,
                http::HeaderValue::from_static(content_type),
            );
            resp.headers_mut().insert(
                header::CACHE_CONTROL,
                http::HeaderValue::from_static("public, max-age=3600"),
            );
            return Ok(resp);
        }
        p @ ("/api" | "/apis") if method == Method::GET || method == Method::HEAD => {
            if let Some(version) = aggregated_discovery_version(headers) {
                let mut document = state.discovery().aggregated(p, version).unwrap_or_default();
                if p == "/apis" {
                    document = state.aggregator.merge_aggregated(document);
                }
                let mut resp = response::json(StatusCode::OK, document, pretty);
                let ct = format!(
                    "application/json;g=apidiscovery.k8s.io;v={version};as=APIGroupDiscoveryList"
                );
                if let Ok(v) = http::HeaderValue::from_str(&ct) {
                    resp.headers_mut().insert(header::CONTENT_TYPE, v);
                }
                resp.headers_mut()
                    .insert(header::VARY, http::HeaderValue::from_static("Accept"));
                return Ok(resp);
            }
            let document = state.discovery().get(p);
            match document {
                Some(d) if p == "/apis" => Some(state.aggregator.merge_group_list(d)),
                other => other,
            }
        }
        p => state
            .discovery()
            .get(p)
            .or_else(|| state.aggregator.group(p)),
    };
    let Some(document) = document else {
        return Err(ApiError::path_not_found());
    };
    if method != Method::GET && method != Method::HEAD {
        return Err(ApiError::method_not_allowed());
    }
    self::document(document, headers, pretty, true)
}

/// The aggregated discovery version (`v2`, `v2beta1`) when the client prefers it: the first
/// Accept entry the server can serve decides.
fn aggregated_discovery_version(headers: &HeaderMap) -> Option<&'static str> {
    let accept = headers.get(header::ACCEPT)?.to_str().ok()?;
    for entry in accept.split(',') {
        let mut parts = entry.split(';').map(str::trim);
        let media = parts.next().unwrap_or("").to_ascii_lowercase();
        if !matches!(media.as_str(), "application/json" | "application/*" | "*/*") {
            continue;
        }
        let params: Vec<(String, String)> = parts
            .filter_map(|p| p.split_once('='))
            .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
            .filter(|(k, _)| k != "q")
            .collect();
        if params.is_empty() {
            return None;
        }
        let get = |key: &str| {
            params
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.as_str())
        };
        if get("g") == Some("apidiscovery.k8s.io") && get("as") == Some("APIGroupDiscoveryList") {
            match get("v") {
                Some("v2") => return Some("v2"),
                Some("v2beta1") => return Some("v2beta1"),
                _ => {}
            }
        }
    }
    None
}

/// `/openapi/v2` in protobuf when asked for, else JSON; as upstream's, with its `ETag` and
/// `Last-Modified` (304 when asked with its entity tag, or since a time it has not changed),
/// gzip-compressed for a client that accepts it.
fn openapi_v2_response(
    doc: &OpenApiV2,
    headers: &HeaderMap,
    pretty: bool,
) -> Result<Response<Body>, ApiError> {
    let etag = http::HeaderValue::from_str(&format!("\"{}\"", doc.etag))
        .map_err(|e| ApiError::internal(e.to_string()))?;
    let header_text = |name| headers.get(name).and_then(|v| v.to_str().ok());
    // As Go's `http.ServeContent`: the entity tag when given, else the modification time
    // (whole seconds, as the header carries them).
    let unchanged = match header_text(header::IF_NONE_MATCH) {
        Some(m) => etag_matches(m, &doc.etag),
        None => header_text(header::IF_MODIFIED_SINCE)
            .and_then(|t| {
                jiff::fmt::rfc2822::DateTimeParser::new()
                    .parse_timestamp(t)
                    .ok()
            })
            .is_some_and(|since| doc.built.as_second() <= since.as_second()),
    };
    if unchanged {
        let mut resp = Response::new(response::full(Bytes::new()));
        *resp.status_mut() = StatusCode::NOT_MODIFIED;
        resp.headers_mut().insert(header::ETAG, etag);
        return Ok(resp);
    }
    let accept = headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let wants_protobuf = accept.split(',').any(|entry| {
        let media = entry.split(';').next().unwrap_or("").trim();
        media.starts_with("application/com.github.proto-openapi.spec.v2")
    });
    let mut resp = if wants_protobuf {
        let mut resp = Response::new(response::full(doc.protobuf.clone()));
        resp.headers_mut().insert(
            header::CONTENT_TYPE,
            http::HeaderValue::from_static(openapi_v2::PROTOBUF),
        );
        resp
    } else {
        self::document(doc.json.clone(), headers, pretty, false)?
    };
    resp.headers_mut().insert(header::ETAG, etag);
    if let Some(v) = http_date(doc.built) {
        resp.headers_mut().insert(header::LAST_MODIFIED, v);
    }
    if response::accepts_gzip(headers) {
        resp = response::gzip_large(resp);
    }
    Ok(resp)
}

/// `t` as an HTTP date (`Tue, 01 Dec 2026 10:00:00 GMT`).
fn http_date(t: jiff::Timestamp) -> Option<http::HeaderValue> {
    let text = jiff::fmt::rfc2822::DateTimePrinter::new()
        .timestamp_to_rfc9110_string(&t)
        .ok()?;
    http::HeaderValue::from_str(&text).ok()
}

async fn read_body(req: Request<Incoming>, max: usize) -> Result<Bytes, ApiError> {
    let declared = req
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok());
    if declared.is_some_and(|n| n > max) {
        return Err(ApiError::too_large(max));
    }
    match Limited::new(req.into_body(), max).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(e) if e.is::<http_body_util::LengthLimitError>() => Err(ApiError::too_large(max)),
        Err(e) => Err(ApiError::bad_request(format!(
            "reading the request body failed: {e}"
        ))),
    }
}

fn content_type(headers: &HeaderMap) -> String {
    headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string()
}

fn write_options<B>(info: &RequestInfo, req: &Request<B>) -> Result<WriteOptions, ApiError> {
    let headers = req.headers();
    let field_manager = info.query.get("fieldManager").map(str::to_string);
    if let Some(manager) = &field_manager
        && manager.chars().count() > 128
    {
        return Err(ApiError::new(
            capstan_meta::Reason::Invalid,
            "fieldManager: Too long: may not be more than 128 bytes",
        ));
    }
    let user_agent = headers
        .get(header::USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    Ok(WriteOptions {
        dry_run: parse_dry_run(&info.query.all("dryRun"))?,
        field_manager,
        default_manager: WriteOptions::manager_from_user_agent(user_agent),
        force: match info.query.get("force") {
            None | Some("false") => false,
            Some("true") => true,
            Some(other) => {
                return Err(ApiError::bad_request(format!(
                    "force: invalid value {other:?}: must be true or false"
                )));
            }
        },
        field_validation: FieldValidation::parse(info.query.get("fieldValidation"))?,
        feedback: Default::default(),
        create_check: req
            .extensions()
            .get::<capstan_registry::CreateCheck>()
            .cloned()
            .unwrap_or_default(),
        user: req
            .extensions()
            .get::<capstan_auth::UserInfo>()
            .cloned()
            .unwrap_or_default(),
        verb: info.verb.clone(),
        served_as: None,
    })
}

/// The options of a list or watch. A named one (`GET …/secrets/x?watch=1`, or a field
/// selector naming one object, which the request info took as the name) is restricted to
/// that object: the name authorized is the only one served.
fn list_options(info: &RequestInfo) -> Result<ListOptions, ApiError> {
    let q = &info.query;
    let given = q.get("fieldSelector").filter(|s| !s.trim().is_empty());
    let named;
    let field_selector = match given {
        _ if info.name.is_empty() => given,
        None => {
            let mut escaped = String::new();
            for c in info.name.chars() {
                if matches!(c, '\\' | ',' | '=' | '!') {
                    escaped.push('\\');
                }
                escaped.push(c);
            }
            named = format!("metadata.name={escaped}");
            Some(named.as_str())
        }
        Some(selector) => {
            // A selector that does not parse is refused below, in the list options' words.
            let parsed = capstan_meta::FieldSelector::parse(selector);
            if parsed.is_ok_and(|p| p.requires_exact("metadata.name") != Some(&info.name)) {
                return Err(ApiError::bad_request(
                    "fieldSelector metadata.name doesn't match requested name",
                ));
            }
            given
        }
    };
    ListOptions::parse(&ListQuery {
        label_selector: q.get("labelSelector"),
        field_selector,
        limit: q.get("limit"),
        continue_token: q.get("continue"),
        resource_version: q.get("resourceVersion"),
        resource_version_match: q.get("resourceVersionMatch"),
    })
}

/// `timeoutSeconds`, or a random time between the minimum and twice it, so that clients that
/// set none do not all reconnect at once.
/// A watch's group in the watch cache: its client's address and port, which name one
/// connection (never 0, which means none).
fn connection_group(peer: std::net::SocketAddr) -> u64 {
    use std::hash::{BuildHasher, BuildHasherDefault, DefaultHasher};
    BuildHasherDefault::<DefaultHasher>::default()
        .hash_one(peer)
        .max(1)
}

fn watch_timeout(
    info: &RequestInfo,
    min: std::time::Duration,
) -> Result<std::time::Duration, ApiError> {
    // Far beyond any connection's life, and within what the timers and the clock can add.
    const LONGEST: std::time::Duration = std::time::Duration::from_secs(365 * 24 * 3600);
    let asked = match info.query.get("timeoutSeconds").filter(|v| !v.is_empty()) {
        Some(raw) => match raw.parse::<i64>() {
            Ok(secs) if secs >= 0 => secs as u64,
            _ => {
                return Err(ApiError::bad_request(format!(
                    "invalid timeoutSeconds {raw:?}: not a non-negative integer"
                )));
            }
        },
        None => 0,
    };
    if asked > 0 {
        return Ok(std::time::Duration::from_secs(asked).min(LONGEST));
    }
    // None or 0: upstream's default, spread over [min, 2·min) so that watches started
    // together do not all end together; no end at all with --min-request-timeout=0.
    if min.is_zero() {
        return Ok(LONGEST);
    }
    let factor: f64 = rand::Rng::random_range(&mut rand::rng(), 1.0..2.0);
    Ok(min.mul_f64(factor).min(LONGEST))
}

/// Copies admission's audit annotations into the request's audit state.
fn annotate(
    audit: &Option<Arc<capstan_audit::RequestContext>>,
    feedback: &capstan_admission::Feedback,
) {
    if let Some(a) = audit {
        for (k, v) in feedback.annotations() {
            a.annotate(k, v);
        }
    }
}

fn respond(encoded: Encoded, renderer: &Renderer) -> Result<Response<Body>, ApiError> {
    let status = match encoded.status {
        ResponseStatus::Ok => StatusCode::OK,
        ResponseStatus::Created => StatusCode::CREATED,
        ResponseStatus::Accepted => StatusCode::ACCEPTED,
    };
    let mut resp = renderer.render(status, encoded.body)?;
    response::add_warnings(&mut resp, &encoded.warnings);
    Ok(resp)
}

fn lookup(state: &State, info: &RequestInfo) -> Result<Arc<dyn RestStorage>, ApiError> {
    let (group, version, resource, sub) = (
        &info.api_group,
        &info.api_version,
        &info.resource,
        &info.subresource,
    );
    let storage = match state.registry.get(group, version, resource, sub) {
        Some(storage) => storage.clone(),
        None => state
            .custom
            .get(group, version, resource, sub)
            .ok_or_else(ApiError::path_not_found)?,
    };
    let d = storage.descriptor();
    let scoped_wrong = if d.namespaced {
        info.namespace.is_empty() && !matches!(info.verb.as_str(), "list" | "watch")
    } else {
        !info.namespace.is_empty()
    };
    if scoped_wrong {
        return Err(ApiError::path_not_found());
    }
    Ok(storage)
}

/// Lists of collections this large are produced on the bulk lane.
const LARGE_LIST: u64 = 500;

/// A resource request's answer, with the resource's deprecation warning when it has one.
async fn resource(
    state: &State,
    info: &RequestInfo,
    req: Request<Incoming>,
    pretty: bool,
) -> Result<Response<Body>, ApiError> {
    // Rare requests with large futures go in boxes of their own, so that the future of every
    // request is not as large as theirs.
    if crate::proxy::is_proxy(info) {
        let proxied = crate::proxy::serve(
            &state.registry,
            info,
            req,
            state.max_connection_bytes_per_sec,
        );
        return Box::pin(proxied).await;
    }
    if crate::connect::is_connect(info) {
        return Box::pin(crate::connect::serve(
            &state.registry,
            &state.kubelet,
            info,
            req,
        ))
        .await;
    }
    let storage = lookup(state, info)?;
    // As upstream's: a large answer is compressed for a client that accepts gzip; a watch's
    // stream is not.
    let gzip = info.verb != "watch" && response::accepts_gzip(req.headers());
    let mut resp = resource_answer(state, &storage, info, req, pretty).await?;
    if let Some(warning) = &storage.descriptor().deprecation {
        response::add_warnings(&mut resp, std::slice::from_ref(warning));
    }
    Ok(if gzip {
        response::gzip_large(resp)
    } else {
        resp
    })
}

async fn resource_answer(
    state: &State,
    storage: &Arc<dyn RestStorage>,
    info: &RequestInfo,
    req: Request<Incoming>,
    pretty: bool,
) -> Result<Response<Body>, ApiError> {
    let misplaced = match info.verb.as_str() {
        "create" => !info.name.is_empty() && info.subresource.is_empty(),
        "update" | "patch" => info.name.is_empty(),
        _ => false,
    };
    if misplaced || !storage.descriptor().serves(&info.verb) {
        return Err(ApiError::method_not_allowed());
    }
    let endpoint = match info.verb.as_str() {
        "list" | "deletecollection" => Endpoint::List,
        "watch" => Endpoint::Watch,
        _ => Endpoint::Object,
    };
    let descriptor = storage.descriptor();
    // Whether the kind has a protobuf form is a schema lookup: asked only when the client
    // names protobuf, or when nothing it accepts fits (the 406 lists what is offered).
    let accept = render::accept(req.headers());
    let names_protobuf = accept.is_some_and(|a| {
        a.as_bytes()
            .windows(b"protobuf".len())
            .any(|w| w.eq_ignore_ascii_case(b"protobuf"))
    });
    let knows = || Codec::default().knows(&descriptor.api_version(), &descriptor.kind);
    let offer = |protobuf| Offer { endpoint, protobuf };
    let choice = match media::negotiate(accept, offer(names_protobuf && knows())) {
        Err(_) if !names_protobuf => media::negotiate(accept, offer(knows()))?,
        chosen => chosen?,
    };
    let renderer = Renderer {
        choice,
        endpoint,
        columns: match choice.transform {
            Transform::Table(_) => descriptor.columns.clone(),
            _ => Vec::new(),
        },
        include: IncludeObject::parse(info.query.get("includeObject"))?,
        pretty,
    };
    let ns = info.namespace.as_str();
    let name = info.name.as_str();
    let q = &info.query;
    // Audited: admission's annotations go into the events, and at level Request or above
    // the bodies too.
    let req_audit = req
        .extensions()
        .get::<Arc<capstan_audit::RequestContext>>()
        .filter(|a| a.level() != capstan_audit::Level::None)
        .cloned();
    let audit = req
        .extensions()
        .get::<Arc<capstan_audit::RequestContext>>()
        .filter(|a| a.level() >= capstan_audit::Level::Request)
        .cloned();
    let log_request = |body: &[u8]| {
        if let Some(a) = &audit {
            a.log_request_object(body);
        }
    };
    let encoded = match info.verb.as_str() {
        "get" => {
            storage
                .get(ns, name, &GetOptions::parse(q.get("resourceVersion"))?)
                .await?
        }
        "list" if storage.cached_count().is_some_and(|n| n >= LARGE_LIST) => {
            // Taken from the cache and rendered on the bulk lane: milliseconds of work (tens
            // of them for a Table) that would hold up every small request on its worker.
            let (storage, ns, options) = (storage.clone(), ns.to_string(), list_options(info)?);
            let listed = capstan_serving::lanes::on_bulk(async move {
                answer(storage.list(&ns, &options).await?, audit, &renderer)
            });
            return Box::pin(listed).await;
        }
        "list" => storage.list(ns, &list_options(info)?).await?,
        "watch" => {
            let options = WatchOptions {
                list: list_options(info)?,
                allow_bookmarks: q.flag("allowWatchBookmarks"),
                timeout: watch_timeout(info, state.min_request_timeout)?,
                initialization: req
                    .extensions()
                    .get::<crate::filters::WatchSeat>()
                    .map(|seat| seat.0.clone()),
                connection: req
                    .extensions()
                    .get::<crate::filters::ClientAddr>()
                    .map_or(0, |addr| connection_group(addr.0)),
            };
            let lines = storage.watch(ns, &options).await?;
            let labels = state.metrics.allowed(
                "apiserver_watch_events_total",
                vec![
                    ("group".into(), descriptor.group.clone()),
                    ("kind".into(), descriptor.kind.clone()),
                    ("version".into(), descriptor.version.clone()),
                ],
            );
            let sent = state.metrics.watch_events.get_or_create(&labels).clone();
            let lines: capstan_registry::EventStream =
                Box::pin(futures_util::StreamExt::inspect(lines, move |_| {
                    sent.inc();
                }));
            return Ok(renderer.watch(lines, state.shutdown.clone()));
        }
        "create" | "update" => {
            let options = write_options(info, &req)?;
            let feedback = options.feedback.clone();
            let headers = req.headers().clone();
            let body = render::body_to_json(&headers, read_body(req, state.max_body).await?)?;
            if let Some(a) = &req_audit {
                a.complete_object_ref(&body);
            }
            log_request(&body);
            let written = if info.verb == "create" && !info.subresource.is_empty() {
                storage.create_for(ns, name, &body, &options).await
            } else if info.verb == "create" {
                storage.create(ns, &body, &options).await
            } else {
                storage.update(ns, name, &body, &options).await
            };
            annotate(&req_audit, &feedback);
            written?
        }
        "patch" => {
            let ct = content_type(req.headers());
            let patch_type = PatchType::from_content_type(&ct).ok_or_else(|| {
                // Built-in resources are refused by upstream's router; a custom resource's
                // handler names the patch types it takes.
                if descriptor.custom {
                    ApiError::unsupported_media_type(PatchType::CUSTOM_MEDIA_TYPES)
                } else {
                    ApiError::unsupported_media_type_by_route()
                }
            })?;
            let options = write_options(info, &req)?;
            let feedback = options.feedback.clone();
            let mut body = read_body(req, state.max_body).await?;
            if patch_type == PatchType::Apply
                && serde_json::from_slice::<serde::de::IgnoredAny>(&body).is_err()
            {
                // An apply patch is YAML (JSON is YAML too, and read as it is).
                let doc = capstan_negotiation::yaml::to_json(&body).map_err(|e| {
                    ApiError::bad_request(format!("the apply patch is malformed: {e}"))
                })?;
                body = serde_json::to_vec(&doc).map_err(ApiError::internal)?.into();
            }
            log_request(&body);
            let patched = storage.patch(ns, name, patch_type, &body, &options).await;
            annotate(&req_audit, &feedback);
            patched?
        }
        "delete" | "deletecollection" => {
            let list = if info.verb == "deletecollection" {
                Some(list_options(info)?)
            } else {
                None
            };
            let dry_run = q.all("dryRun");
            let user = req
                .extensions()
                .get::<capstan_auth::UserInfo>()
                .cloned()
                .unwrap_or_default();
            let grace = q.get("gracePeriodSeconds").map(str::to_string);
            let propagation = q.get("propagationPolicy").map(str::to_string);
            let headers = req.headers().clone();
            let body = read_body(req, state.max_body).await?;
            let body = if body.is_empty() {
                body
            } else {
                render::body_to_json(&headers, body)?
            };
            if !body.is_empty() {
                log_request(&body);
            }
            let options = DeleteOptions {
                user,
                ..DeleteOptions::parse(&body, &dry_run, grace.as_deref(), propagation.as_deref())?
            };
            let feedback = options.feedback.clone();
            let deleted = match list {
                Some(list) => storage.delete_collection(ns, &list, &options).await,
                None => storage.delete(ns, name, &options).await,
            };
            annotate(&req_audit, &feedback);
            deleted?
        }
        _ => return Err(ApiError::method_not_allowed()),
    };
    answer(encoded, audit, &renderer)
}

/// The response to `encoded`, its body in the audit event at level RequestResponse.
fn answer(
    encoded: Encoded,
    audit: Option<Arc<capstan_audit::RequestContext>>,
    renderer: &Renderer,
) -> Result<Response<Body>, ApiError> {
    if let Some(a) = audit.filter(|a| a.level() == capstan_audit::Level::RequestResponse) {
        a.log_response_object(&encoded.body.clone().into_bytes());
    }
    respond(encoded, renderer)
}

#[cfg(test)]
mod future_size {
    use super::*;

    /// The size of the futures `f` returns.
    fn size<A, B, F: Future>(_: impl Fn(A, B) -> F) -> usize {
        std::mem::size_of::<F>()
    }

    fn info() -> &'static RequestInfo {
        Box::leak(Box::new(RequestInfo::parse(&http::Method::GET, "/", None)))
    }

    /// Every request's future is moved into a box by the filters: the rare requests' large
    /// futures (a proxy to a node or service, a stream into a pod) are boxed apart so that
    /// the others' stay small.
    #[test]
    fn the_handlers_future_is_smaller_than_the_rare_requests_ones() {
        let handle = size(handle);
        let proxy = size(|s: &'static State, r: Request<Incoming>| {
            crate::proxy::serve(&s.registry, info(), r, 0)
        });
        let connect = size(|s: &'static State, r: Request<Incoming>| {
            crate::connect::serve(&s.registry, &s.kubelet, info(), r)
        });
        assert!(
            handle < proxy && handle < connect,
            "{handle} {proxy} {connect}"
        );
    }
}
