//! API aggregation: group versions whose APIService names a Service are served by an extension
//! API server behind it. Requests under `/apis/{group}/{version}` are proxied there (after
//! this server's authentication, authorization and fairness), over TLS checked with the
//! APIService's `caBundle` (or not, with `insecureSkipTLSVerify`), presenting
//! `--proxy-client-cert-file`, with the caller's identity in `X-Remote-*` headers and none of
//! its credentials; upgrades (exec, port-forward, attach) are spliced through. Discovery lists
//! the extension servers' groups beside the built-in ones, and the availability controller
//! (one of the [`capstan_control::ControlLoops`]) asks this module whether a backend answers.

use std::cmp::Reverse;
use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use bytes::Bytes;
use capstan_auth::UserInfo;
use capstan_client::ServiceResolver;
use capstan_control::{Availability, Probe};
use capstan_meta::ApiError;
use futures_util::future::BoxFuture;
use http::{HeaderName, HeaderValue, Request, Response, StatusCode, header};
use http_body_util::{BodyExt, Empty};
use hyper::body::Incoming;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
use rustls_pki_types::ServerName;
use serde_json::{Map, Value, json};

use crate::forward::{forward, stream_back, strip, unreachable, wants_upgrade};
use crate::openapi_v2::OpenApiV2;
use crate::response::Body;

/// How long connecting to a backend may take.
const DIAL_TIMEOUT: Duration = Duration::from_secs(30);
/// How long the availability check's discovery request may take (upstream's 5 s).
const DISCOVERY_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a backend's OpenAPI document may take to arrive.
const OPENAPI_TIMEOUT: Duration = Duration::from_secs(30);
/// The largest answer taken from a backend's discovery or OpenAPI endpoints.
const DOCUMENT_LIMIT: usize = 64 << 20;

/// A service-backed group version.
pub(crate) struct Route {
    /// The Service's namespace and name, and the port called.
    namespace: String,
    service: String,
    port: u16,
    /// Whether the APIService's `Available` condition is true.
    available: bool,
    /// TLS to the backend (its CA or none checked; our client certificate), HTTP/1.1: for
    /// upgrades and the availability check, one connection each.
    tls: Arc<rustls::ClientConfig>,
    /// Pooled connections for the other requests (HTTP/2 when the backend offers it).
    client: Option<capstan_client::ServiceClient<Incoming>>,
    /// The trust settings the pool was made with.
    fingerprint: (Option<Vec<u8>>, bool),
}

impl Route {
    /// The name the backend's certificate must carry: `<service>.<namespace>.svc`.
    fn server_name(&self) -> String {
        format!("{}.{}.svc", self.service, self.namespace)
    }
}

/// What discovery needs of an APIService.
#[derive(Debug, Clone)]
struct Listed {
    group: String,
    version: String,
    group_priority: i32,
    version_priority: i32,
    local: bool,
}

/// A merged `/openapi/v2`: the local document it was made from, the generation of the
/// extension definitions it holds, and the merged document.
type MergedV2 = (Arc<OpenApiV2>, u64, Arc<OpenApiV2>);

/// The aggregator: the routes of the service-backed APIServices, and what their backends
/// said in discovery.
pub(crate) struct Aggregator {
    /// Keyed `group/version`, so that a request path's own slice finds its route.
    routes: RwLock<HashMap<String, Arc<Route>>>,
    listed: RwLock<BTreeMap<String, Listed>>,
    /// Each service-backed group version's `APIResourceList`, from the last check that passed.
    resources: RwLock<HashMap<(String, String), Value>>,
    /// Each service-backed group version's entry of its backend's `/openapi/v3` index.
    openapi: RwLock<HashMap<(String, String), Value>>,
    /// Each service-backed group version's backend's OpenAPI v2 definitions.
    definitions: RwLock<HashMap<(String, String), Map<String, Value>>>,
    /// Bumped whenever `definitions` change.
    definitions_generation: AtomicU64,
    /// The last merged `/openapi/v2`: of which local document, at which generation of
    /// `definitions`.
    merged_v2: Mutex<Option<MergedV2>>,
    services: Arc<dyn ServiceResolver>,
    /// `--proxy-client-cert-file` and `--proxy-client-key-file` (PEM).
    identity: Option<(Vec<u8>, Vec<u8>)>,
    /// Bytes per second an upgraded connection carries each way (0: no limit).
    bytes_per_sec: u64,
}

impl Aggregator {
    /// An aggregator resolving Services through `services` and presenting `identity`.
    pub(crate) fn new(
        services: Arc<dyn ServiceResolver>,
        identity: Option<(Vec<u8>, Vec<u8>)>,
        bytes_per_sec: u64,
    ) -> Self {
        Self {
            routes: RwLock::default(),
            listed: RwLock::default(),
            resources: RwLock::default(),
            openapi: RwLock::default(),
            definitions: RwLock::default(),
            definitions_generation: AtomicU64::new(0),
            merged_v2: Mutex::default(),
            services,
            identity,
            bytes_per_sec,
        }
    }

    /// The TLS configuration `api_service` asks for, offering `alpn`.
    fn tls_for(
        &self,
        api_service: &APIService,
        alpn: &[&[u8]],
    ) -> Result<rustls::ClientConfig, String> {
        let spec = api_service.spec.clone().unwrap_or_default();
        let mut config = capstan_client::Config::new("https://backend");
        config.insecure = spec.insecure_skip_tls_verify.unwrap_or(false);
        config.ca_pem = spec.ca_bundle.map(|b| b.0).filter(|b| !b.is_empty());
        config.client_identity = self.identity.clone();
        capstan_client::backend_tls(&config, alpn).map_err(|e| e.to_string())
    }

    /// Follows `api_service` (added or changed): routes to it when it names a Service.
    pub(crate) fn observe(&self, api_service: &APIService) {
        let name = api_service.metadata.name.clone().unwrap_or_default();
        let spec = api_service.spec.clone().unwrap_or_default();
        let group = spec.group.clone().unwrap_or_default();
        let version = spec.version.clone().unwrap_or_default();
        let key = format!("{group}/{version}");
        self.listed
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .insert(
                name.clone(),
                Listed {
                    group,
                    version,
                    group_priority: spec.group_priority_minimum,
                    version_priority: spec.version_priority,
                    local: spec.service.is_none(),
                },
            );
        let mut routes = self.routes.write().unwrap_or_else(|e| e.into_inner());
        let Some(service) = spec.service.as_ref() else {
            routes.remove(&key);
            return;
        };
        let tls = self.tls_for(api_service, &[b"http/1.1"]);
        let pooled = self.tls_for(api_service, &[b"h2", b"http/1.1"]);
        let (tls, pooled) = match (tls, pooled) {
            (Ok(tls), Ok(pooled)) => (Arc::new(tls), pooled),
            (Err(e), _) | (_, Err(e)) => {
                tracing::warn!(apiservice = %name, error = %e, "cannot build its TLS configuration");
                routes.remove(&key);
                return;
            }
        };
        let namespace = service.namespace.clone().unwrap_or_default();
        let service_name = service.name.clone().unwrap_or_default();
        let port = service
            .port
            .and_then(|p| u16::try_from(p).ok())
            .unwrap_or(443);
        // The pool stays while the backend's address and trust do.
        let client = routes
            .get(&key)
            .filter(|r| {
                r.namespace == namespace
                    && r.service == service_name
                    && r.port == port
                    && r.fingerprint == fingerprint(api_service)
            })
            .and_then(|r| r.client.clone())
            .unwrap_or_else(|| {
                capstan_client::ServiceClient::new(
                    pooled,
                    self.services.clone(),
                    &namespace,
                    &service_name,
                    port,
                )
            });
        let available = api_service
            .status
            .as_ref()
            .and_then(|s| s.conditions.as_ref())
            .into_iter()
            .flatten()
            .any(|c| c.type_ == "Available" && c.status == "True");
        let fingerprint = fingerprint(api_service);
        routes.insert(
            key,
            Arc::new(Route {
                namespace,
                service: service_name,
                port,
                available,
                tls,
                client: Some(client),
                fingerprint,
            }),
        );
    }

    /// Forgets the APIService `name` (deleted).
    pub(crate) fn forget(&self, name: &str) {
        let removed = self
            .listed
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(name);
        if let Some(l) = removed {
            self.routes
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&format!("{}/{}", l.group, l.version));
            let key = (l.group, l.version);
            self.resources
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&key);
            self.openapi
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&key);
            let removed = self
                .definitions
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .remove(&key);
            if removed.is_some() {
                self.definitions_generation.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// The route of a request for `path` (`/apis/{group}/{version}[/...]`, or that group
    /// version's OpenAPI v3 document), when an extension server serves that group version.
    /// Every request asks, so the lookup borrows the path's `group/version` (no allocation).
    pub(crate) fn route(&self, path: &str) -> Option<Arc<Route>> {
        let rest = path
            .strip_prefix("/apis/")
            .or_else(|| path.strip_prefix("/openapi/v3/apis/"))?;
        let group_end = rest.find('/')?;
        let version_end = rest[group_end + 1..]
            .find('/')
            .map_or(rest.len(), |i| group_end + 1 + i);
        if version_end == group_end + 1 {
            return None;
        }
        let routes = self.routes.read().unwrap_or_else(|e| e.into_inner());
        routes.get(&rest[..version_end]).cloned()
    }

    /// Proxies `req` (for the group version `route` serves) made by `user`.
    pub(crate) async fn proxy(
        &self,
        route: Arc<Route>,
        mut req: Request<Incoming>,
        user: Option<&UserInfo>,
    ) -> Result<Response<Body>, ApiError> {
        if !route.available {
            return Ok(plain(
                StatusCode::SERVICE_UNAVAILABLE,
                "service unavailable\n",
            ));
        }
        let upgrade = wants_upgrade(req.headers());
        let headers = req.headers_mut();
        strip(headers, upgrade);
        scrub_credentials(headers);
        if let Some(user) = user {
            identify(headers, user);
        }
        let authority = format!("{}:{}", route.server_name(), route.port);
        headers.insert(
            header::HOST,
            HeaderValue::from_str(&authority).map_err(ApiError::internal)?,
        );
        let origin = req
            .uri()
            .path_and_query()
            .map_or("/", |p| p.as_str())
            .to_string();
        match (&route.client, upgrade) {
            (Some(client), false) => {
                // The pool resolves the Service for each new connection itself.
                req.headers_mut().remove(header::HOST);
                *req.uri_mut() = format!("https://{authority}{origin}")
                    .parse()
                    .map_err(ApiError::internal)?;
                let response = client.send(req).await.map_err(unreachable)?;
                Ok(stream_back(response))
            }
            _ => {
                let (host, port) = self
                    .services
                    .resolve(&route.namespace, &route.service, route.port)
                    .await
                    .map_err(unreachable)?;
                *req.uri_mut() = origin.parse().map_err(ApiError::internal)?;
                let stream = connect(&route, &host, port).await?;
                forward(stream, req, self.bytes_per_sec).await
            }
        }
    }

    /// The groups the extension servers serve and this server does not, for `/apis`: each
    /// with its versions by priority, the groups by priority then name.
    fn extension_groups(&self) -> Vec<(String, Vec<String>)> {
        let listed = self.listed.read().unwrap_or_else(|e| e.into_inner());
        let mut groups: BTreeMap<&str, Vec<&Listed>> = BTreeMap::new();
        for l in listed.values() {
            groups.entry(l.group.as_str()).or_default().push(l);
        }
        let mut out: Vec<(i32, String, Vec<String>)> = groups
            .into_iter()
            .filter(|(_, ls)| ls.iter().all(|l| !l.local))
            .map(|(group, mut ls)| {
                ls.sort_by(|a, b| {
                    b.version_priority
                        .cmp(&a.version_priority)
                        .then_with(|| version_order(&a.version, &b.version))
                });
                let priority = ls.iter().map(|l| l.group_priority).max().unwrap_or(0);
                let versions = ls.iter().map(|l| l.version.clone()).collect();
                (priority, group.to_string(), versions)
            })
            .collect();
        out.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        out.into_iter().map(|(_, g, v)| (g, v)).collect()
    }

    /// Where each group ranks in `/apis`, as upstream orders it: the legacy list by the group's
    /// first APIService in (group priority descending, APIService name) order, aggregated
    /// discovery by (highest group priority descending, group name).
    fn ranks(&self, aggregated: bool) -> HashMap<String, (Reverse<i32>, String)> {
        let listed = self.listed.read().unwrap_or_else(|e| e.into_inner());
        let mut ranks: HashMap<String, (Reverse<i32>, String)> = HashMap::new();
        for (name, l) in listed.iter() {
            let by = if aggregated { &l.group } else { name };
            let rank = (Reverse(l.group_priority), by.clone());
            match ranks.get_mut(&l.group) {
                Some(r) if *r <= rank => {}
                Some(r) => *r = rank,
                None => {
                    ranks.insert(l.group.clone(), rank);
                }
            }
        }
        ranks
    }

    /// `/apis` with the extension servers' groups in their places (legacy `APIGroupList`).
    pub(crate) fn merge_group_list(&self, local: Bytes) -> Bytes {
        let extra = self.extension_groups();
        if extra.is_empty() {
            return local;
        }
        let Ok(mut list) = serde_json::from_slice::<Value>(&local) else {
            return local;
        };
        if let Some(groups) = list["groups"].as_array_mut() {
            let extra = extra.iter().map(|(g, v)| (g.clone(), api_group(g, v)));
            insert_ranked(groups, extra, &self.ranks(false), |g| g["name"].as_str());
        }
        serde_json::to_vec(&list).map(Bytes::from).unwrap_or(local)
    }

    /// `/apis/{group}` of an extension server's group.
    pub(crate) fn group(&self, path: &str) -> Option<Bytes> {
        let group = path.strip_prefix("/apis/")?.trim_end_matches('/');
        if group.contains('/') {
            return None;
        }
        let (g, versions) = self
            .extension_groups()
            .into_iter()
            .find(|(g, _)| g == group)?;
        let mut document = api_group(&g, &versions);
        document["kind"] = json!("APIGroup");
        document["apiVersion"] = json!("v1");
        serde_json::to_vec(&document).ok().map(Bytes::from)
    }

    /// The aggregated `/apis` document with the extension servers' groups appended, each
    /// version with the resources its backend listed (none, `Stale`, when it did not answer).
    pub(crate) fn merge_aggregated(&self, local: Bytes) -> Bytes {
        let extra = self.extension_groups();
        if extra.is_empty() {
            return local;
        }
        let Ok(mut list) = serde_json::from_slice::<Value>(&local) else {
            return local;
        };
        let resources = self.resources.read().unwrap_or_else(|e| e.into_inner());
        let items = extra.iter().map(|(group, versions)| {
            let group = group.clone();
            let versions: Vec<Value> = versions
                .iter()
                .map(|v| match resources.get(&(group.clone(), v.clone())) {
                    Some(list) => json!({"version": v, "resources": discovered(list),
                        "freshness": "Current"}),
                    None => json!({"version": v, "resources": [], "freshness": "Stale"}),
                })
                .collect();
            let item = json!({"metadata": {"name": group}, "versions": versions});
            (group, item)
        });
        if let Some(list_items) = list["items"].as_array_mut() {
            insert_ranked(list_items, items, &self.ranks(true), |g| {
                g["metadata"]["name"].as_str()
            });
        }
        serde_json::to_vec(&list).map(Bytes::from).unwrap_or(local)
    }

    /// `/openapi/v3` with the extension servers' group versions added (their documents are
    /// the backends', proxied).
    pub(crate) fn merge_openapi_index(&self, local: Bytes) -> Bytes {
        let entries = self.openapi.read().unwrap_or_else(|e| e.into_inner());
        if entries.is_empty() {
            return local;
        }
        let Ok(mut index) = serde_json::from_slice::<Value>(&local) else {
            return local;
        };
        if let Some(paths) = index["paths"].as_object_mut() {
            for ((group, version), entry) in entries.iter() {
                paths.insert(format!("apis/{group}/{version}"), entry.clone());
            }
        }
        serde_json::to_vec(&index).map(Bytes::from).unwrap_or(local)
    }

    /// `/openapi/v2`: `local` with the extension servers' definitions added, merged again only
    /// when either changed.
    pub(crate) fn merge_openapi_v2(&self, local: Arc<OpenApiV2>) -> Arc<OpenApiV2> {
        let generation = self.definitions_generation.load(Ordering::Relaxed);
        if generation == 0 {
            return local;
        }
        let mut merged = self.merged_v2.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((of, g, doc)) = merged.as_ref()
            && Arc::ptr_eq(of, &local)
            && *g == generation
        {
            return doc.clone();
        }
        let definitions = self.definitions.read().unwrap_or_else(|e| e.into_inner());
        if definitions.is_empty() {
            return local;
        }
        let doc = Arc::new(OpenApiV2::with_definitions(
            &local,
            definitions.values().flatten(),
        ));
        *merged = Some((local, generation, doc.clone()));
        doc
    }

    /// Asks the backend of `api_service` for its discovery document, as `system:kube-aggregator`
    /// in `system:masters` (upstream's availability check), keeping the resources it lists.
    async fn check_discovery(&self, api_service: &APIService) -> Availability {
        let spec = api_service.spec.clone().unwrap_or_default();
        let service = spec.service.clone().unwrap_or_default();
        let (namespace, name) = (
            service.namespace.unwrap_or_default(),
            service.name.unwrap_or_default(),
        );
        let port = service
            .port
            .and_then(|p| u16::try_from(p).ok())
            .unwrap_or(443);
        let (group, version) = (
            spec.group.clone().unwrap_or_default(),
            spec.version.clone().unwrap_or_default(),
        );
        let (host, target) = match self.services.resolve(&namespace, &name, port).await {
            Ok(found) => found,
            Err(e) => return self.missing(&namespace, &name, port, e),
        };
        let path = format!("/apis/{group}/{version}");
        let url = format!("https://{host}:{target}{path}");
        let failed = |why: String| {
            Availability::unavailable(
                "FailedDiscoveryCheck",
                format!("failing or missing response from {url}: {why}"),
            )
        };
        let tls = match self.tls_for(api_service, &[b"http/1.1"]) {
            Ok(tls) => Arc::new(tls),
            Err(e) => return failed(e),
        };
        let route = Route {
            namespace,
            service: name,
            port,
            available: true,
            tls,
            client: None,
            fingerprint: fingerprint(api_service),
        };
        let exchange = async {
            let stream = connect(&route, &host, target)
                .await
                .map_err(|e| e.message.clone())?;
            let (mut sender, connection) =
                hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                    .await
                    .map_err(|e| e.to_string())?;
            tokio::spawn(connection);
            let authority = format!("{}:{}", route.server_name(), route.port);
            let (status, body) = exchange(&mut sender, as_aggregator(&path, &authority)?).await?;
            Ok::<_, String>((status, body, sender, authority))
        };
        let (status, body, mut sender, authority) =
            match tokio::time::timeout(DISCOVERY_TIMEOUT, exchange).await {
                Err(_) => return failed(format!("no answer within {DISCOVERY_TIMEOUT:?}")),
                Ok(Err(e)) => return failed(e),
                Ok(Ok(answer)) => answer,
            };
        if !status.is_success() {
            return failed(format!("bad status from {url}: {}", status.as_u16()));
        }
        let key = (group, version);
        if let Ok(list) = serde_json::from_slice::<Value>(&body) {
            self.resources
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .insert(key.clone(), list);
        }
        // Its OpenAPI v3 index (for `/openapi/v3`) and v2 definitions (for `/openapi/v2`), on
        // the same connection; availability does not depend on them.
        let index = document(&mut sender, "/openapi/v3", &authority).await;
        let v2 = document(&mut sender, "/openapi/v2", &authority).await;
        let entry = index
            .as_ref()
            .map(|i| i["paths"][format!("apis/{}/{}", key.0, key.1)].clone())
            .filter(|e| e["serverRelativeURL"].is_string());
        if let Some(entry) = entry {
            self.openapi
                .write()
                .unwrap_or_else(|e| e.into_inner())
                .insert(key.clone(), entry);
        }
        if let Some(Value::Object(definitions)) = v2.map(|mut doc| doc["definitions"].take()) {
            let mut all = self.definitions.write().unwrap_or_else(|e| e.into_inner());
            if all.get(&key) != Some(&definitions) {
                all.insert(key.clone(), definitions);
                self.definitions_generation.fetch_add(1, Ordering::Relaxed);
            }
        }
        Availability::available("Passed", "all checks passed")
    }

    /// The availability of an APIService whose Service could not be resolved.
    fn missing(&self, namespace: &str, name: &str, port: u16, why: String) -> Availability {
        if why.contains("not found") && why.starts_with("service") {
            Availability::unavailable(
                "ServiceNotFound",
                format!("service/{name} in {namespace:?} is not present"),
            )
        } else if why.starts_with("no service port") {
            Availability::unavailable(
                "ServicePortError",
                format!("service/{name} in {namespace:?} is not listening on port {port}"),
            )
        } else if why.contains("endpoints") {
            Availability::unavailable(
                "MissingEndpoints",
                format!("endpoints for service/{name} in {namespace:?} have no addresses"),
            )
        } else {
            Availability::unavailable("ServiceNotFound", why)
        }
    }
}

impl Probe for Aggregator {
    fn check<'a>(&'a self, api_service: &'a APIService) -> BoxFuture<'a, Availability> {
        Box::pin(self.check_discovery(api_service))
    }

    fn seen(&self, api_service: &APIService) {
        self.observe(api_service);
    }

    fn gone(&self, name: &str) {
        self.forget(name);
    }
}

/// A `GET path` (JSON) to the backend at `authority`, made as `system:kube-aggregator` in
/// `system:masters` (upstream's availability check, which must never be refused).
fn as_aggregator(path: &str, authority: &str) -> Result<Request<Empty<Bytes>>, String> {
    let mut req = Request::get(path)
        .header(header::HOST, authority)
        .header(header::ACCEPT, "application/json")
        .body(Empty::<Bytes>::new())
        .map_err(|e| e.to_string())?;
    identify(
        req.headers_mut(),
        &UserInfo {
            name: "system:kube-aggregator".into(),
            groups: vec![UserInfo::MASTERS.into()],
            ..Default::default()
        },
    );
    Ok(req)
}

/// Sends `req` over `sender` and reads the whole answer.
async fn exchange(
    sender: &mut hyper::client::conn::http1::SendRequest<Empty<Bytes>>,
    req: Request<Empty<Bytes>>,
) -> Result<(StatusCode, Bytes), String> {
    let resp = sender.send_request(req).await.map_err(|e| e.to_string())?;
    let status = resp.status();
    let body = http_body_util::Limited::new(resp.into_body(), DOCUMENT_LIMIT)
        .collect()
        .await
        .map_err(|e| e.to_string())?
        .to_bytes();
    Ok((status, body))
}

/// A JSON document of the backend's, as the aggregator; `None` when it has none, answers with
/// an error, or takes longer than [`OPENAPI_TIMEOUT`].
async fn document(
    sender: &mut hyper::client::conn::http1::SendRequest<Empty<Bytes>>,
    path: &str,
    authority: &str,
) -> Option<Value> {
    let mut req = as_aggregator(path, authority).ok()?;
    req.headers_mut().insert(
        http::header::ACCEPT,
        http::HeaderValue::from_static("application/json"),
    );
    let (status, body) = tokio::time::timeout(OPENAPI_TIMEOUT, exchange(sender, req))
        .await
        .ok()?
        .ok()?;
    status
        .is_success()
        .then(|| serde_json::from_slice(&body).ok())
        .flatten()
}

/// What the backend's trust depends on: its CA bundle and whether it is checked at all.
fn fingerprint(api_service: &APIService) -> (Option<Vec<u8>>, bool) {
    let spec = api_service.spec.as_ref();
    (
        spec.and_then(|s| s.ca_bundle.as_ref()).map(|b| b.0.clone()),
        spec.and_then(|s| s.insecure_skip_tls_verify)
            .unwrap_or(false),
    )
}

/// TCP to `host:port`, then TLS naming the route's Service.
async fn connect(
    route: &Route,
    host: &str,
    port: u16,
) -> Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>, ApiError> {
    let tcp = tokio::time::timeout(DIAL_TIMEOUT, tokio::net::TcpStream::connect((host, port)))
        .await
        .map_err(|_| unreachable(format!("dial tcp {host}:{port}: i/o timeout")))?
        .map_err(|e| unreachable(format!("dial tcp {host}:{port}: {e}")))?;
    let _ = tcp.set_nodelay(true);
    let name = ServerName::try_from(route.server_name()).map_err(unreachable)?;
    tokio_rustls::TlsConnector::from(route.tls.clone())
        .connect(name, tcp)
        .await
        .map_err(unreachable)
}

/// Drops the caller's credentials and any identity headers it sent itself.
fn scrub_credentials(headers: &mut http::HeaderMap) {
    headers.remove(header::AUTHORIZATION);
    let own: Vec<HeaderName> = headers
        .keys()
        .filter(|k| {
            let k = k.as_str();
            k.starts_with("impersonate-") || k.starts_with("x-remote-")
        })
        .cloned()
        .collect();
    for name in own {
        headers.remove(name);
    }
}

/// The `X-Remote-*` headers naming `user`: user, uid, each group, each extra value (keys
/// escaped as upstream's front proxy does).
fn identify(headers: &mut http::HeaderMap, user: &UserInfo) {
    let mut add = |name: &str, value: &str| {
        if let (Ok(n), Ok(v)) = (
            HeaderName::from_bytes(name.as_bytes()),
            HeaderValue::from_str(value),
        ) {
            headers.append(n, v);
        }
    };
    add("x-remote-user", &user.name);
    if !user.uid.is_empty() {
        add("x-remote-uid", &user.uid);
    }
    for group in &user.groups {
        add("x-remote-group", group);
    }
    for (key, values) in &user.extra {
        let name = format!("x-remote-extra-{}", escape_extra_key(key));
        for value in values {
            add(&name, value);
        }
    }
}

/// An extra key as a header name: characters outside a token's, and `%`, percent-encoded.
fn escape_extra_key(key: &str) -> String {
    let mut out = String::new();
    for b in key.bytes() {
        let legal = b.is_ascii_alphanumeric() || b"!#$&'*+-.^_`|~".contains(&b);
        if legal {
            out.push(b.to_ascii_lowercase() as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Inserts each of `extra` (group, entry) into `items` before the first item that ranks after
/// it; items of unranked groups stay where they are.
fn insert_ranked(
    items: &mut Vec<Value>,
    extra: impl IntoIterator<Item = (String, Value)>,
    ranks: &HashMap<String, (Reverse<i32>, String)>,
    name: impl Fn(&Value) -> Option<&str>,
) {
    for (group, entry) in extra {
        let rank = ranks.get(&group);
        let at = items
            .iter()
            .position(|item| name(item).and_then(|n| ranks.get(n)) > rank)
            .unwrap_or(items.len());
        items.insert(at, entry);
    }
}

/// An `APIGroup` of `group` serving `versions` (preferred first).
fn api_group(group: &str, versions: &[String]) -> Value {
    let entries: Vec<Value> = versions
        .iter()
        .map(|v| json!({"groupVersion": format!("{group}/{v}"), "version": v}))
        .collect();
    json!({
        "name": group,
        "versions": entries,
        "preferredVersion": entries.first().cloned().unwrap_or(Value::Null),
    })
}

/// An `APIResourceList`'s resources in aggregated discovery's form: subresources under their
/// resource, in the order the list names them. A subresource whose resource is not listed
/// gets a resource entry of its own with no kind and no verbs, as upstream's aggregator writes.
fn discovered(list: &Value) -> Vec<Value> {
    let kind = |r: &Value| {
        json!({"group": r["group"].as_str().unwrap_or(""),
            "version": r["version"].as_str().unwrap_or(""), "kind": r["kind"]})
    };
    let scope = |r: &Value| {
        if r["namespaced"].as_bool().unwrap_or(false) {
            "Namespaced"
        } else {
            "Cluster"
        }
    };
    let mut out: Vec<Value> = Vec::new();
    let mut position: HashMap<&str, usize> = HashMap::new();
    for r in list["resources"].as_array().into_iter().flatten() {
        let Some(name) = r["name"].as_str() else {
            continue;
        };
        let (parent, sub) = match name.split_once('/') {
            Some((parent, sub)) => (parent, Some(sub)),
            None => (name, None),
        };
        let index = *position.entry(parent).or_insert_with(|| {
            out.push(json!({
                "resource": parent,
                "responseKind": {"group": "", "version": "", "kind": ""},
                "scope": scope(r),
                "singularResource": "",
                "verbs": null,
            }));
            out.len() - 1
        });
        let entry = &mut out[index];
        match sub {
            Some(sub) => {
                let sub = json!({"subresource": sub, "responseKind": kind(r), "verbs": r["verbs"]});
                match entry["subresources"].as_array_mut() {
                    Some(subs) => subs.push(sub),
                    None => entry["subresources"] = json!([sub]),
                }
            }
            None => {
                entry["responseKind"] = kind(r);
                entry["scope"] = json!(scope(r));
                entry["singularResource"] = r["singularName"].clone();
                entry["verbs"] = r["verbs"].clone();
                for key in ["shortNames", "categories"] {
                    if r[key].as_array().is_some_and(|a| !a.is_empty()) {
                        entry[key] = r[key].clone();
                    }
                }
            }
        }
    }
    out
}

/// Kubernetes' version order for equal priorities: GA before beta before alpha, higher
/// numbers first; other names after, alphabetically.
fn version_order(a: &str, b: &str) -> std::cmp::Ordering {
    fn key(v: &str) -> (u8, i64, i64, String) {
        let Some(rest) = v.strip_prefix('v') else {
            return (3, 0, 0, v.to_string());
        };
        let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let Ok(major) = digits.parse::<i64>() else {
            return (3, 0, 0, v.to_string());
        };
        let tail = &rest[digits.len()..];
        let (level, minor) = if tail.is_empty() {
            (0, 0)
        } else if let Some(n) = tail.strip_prefix("beta") {
            (1, n.parse().unwrap_or(-1))
        } else if let Some(n) = tail.strip_prefix("alpha") {
            (2, n.parse().unwrap_or(-1))
        } else {
            return (3, 0, 0, v.to_string());
        };
        (level, -major, -minor, String::new())
    }
    key(a).cmp(&key(b))
}

/// A plain-text answer (upstream's proxy errors are not `Status` objects).
fn plain(status: StatusCode, text: &'static str) -> Response<Body> {
    let mut resp = crate::response::text(status, text.to_string());
    resp.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp.headers_mut().insert(
        "x-content-type-options",
        HeaderValue::from_static("nosniff"),
    );
    resp
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Nowhere;

    impl ServiceResolver for Nowhere {
        fn resolve<'a>(
            &'a self,
            _: &'a str,
            _: &'a str,
            _: u16,
        ) -> BoxFuture<'a, Result<(String, u16), String>> {
            Box::pin(async { Err("nowhere".to_string()) })
        }
    }

    #[test]
    fn requests_are_routed_by_their_group_version_only() {
        let aggregator = Aggregator::new(Arc::new(Nowhere), None, 0);
        let api_service: APIService = serde_json::from_value(json!({
            "metadata": {"name": "v1alpha1.wardle.example.com"},
            "spec": {"group": "wardle.example.com", "version": "v1alpha1",
                "groupPriorityMinimum": 1000, "versionPriority": 15,
                "insecureSkipTLSVerify": true,
                "service": {"namespace": "wardle", "name": "api", "port": 443}}
        }))
        .unwrap();
        aggregator.observe(&api_service);
        for path in [
            "/apis/wardle.example.com/v1alpha1",
            "/apis/wardle.example.com/v1alpha1/namespaces/default/flunders",
            "/openapi/v3/apis/wardle.example.com/v1alpha1",
        ] {
            assert!(aggregator.route(path).is_some(), "{path}");
        }
        for path in [
            "/apis/wardle.example.com",
            "/apis/wardle.example.com/",
            "/apis/wardle.example.com/v1alpha10",
            "/apis/apps/v1alpha1",
            "/api/v1",
        ] {
            assert!(aggregator.route(path).is_none(), "{path}");
        }
        aggregator.forget("v1alpha1.wardle.example.com");
        assert!(
            aggregator
                .route("/apis/wardle.example.com/v1alpha1")
                .is_none()
        );
    }

    #[test]
    fn versions_sort_as_kubernetes_orders_them() {
        let mut versions = vec!["v1alpha1", "v2beta1", "v1", "v1beta2", "foo", "v2"];
        versions.sort_by(|a, b| version_order(a, b));
        assert_eq!(
            versions,
            ["v2", "v1", "v2beta1", "v1beta2", "v1alpha1", "foo"]
        );
    }

    #[test]
    fn identity_headers_replace_what_the_caller_sent() {
        let mut headers = http::HeaderMap::new();
        headers.insert("authorization", "Bearer secret".parse().unwrap());
        headers.insert("x-remote-user", "mallory".parse().unwrap());
        headers.insert("impersonate-user", "root".parse().unwrap());
        scrub_credentials(&mut headers);
        let user = UserInfo {
            name: "alice".into(),
            uid: "42".into(),
            groups: vec!["devs".into(), "system:authenticated".into()],
            extra: BTreeMap::from([("example.org/Team".into(), vec!["a".into()])]),
        };
        identify(&mut headers, &user);
        assert!(headers.get("authorization").is_none());
        assert!(headers.get("impersonate-user").is_none());
        assert_eq!(headers["x-remote-user"], "alice");
        assert_eq!(headers["x-remote-uid"], "42");
        let groups: Vec<_> = headers.get_all("x-remote-group").iter().collect();
        assert_eq!(groups, ["devs", "system:authenticated"]);
        assert_eq!(headers["x-remote-extra-example.org%2fteam"], "a");
    }

    #[test]
    fn resource_lists_become_aggregated_discovery() {
        let list = json!({"resources": [
            {"name": "flunders", "singularName": "flunder", "namespaced": true,
                "kind": "Flunder", "verbs": ["get", "list"]},
            {"name": "flunders/status", "singularName": "", "namespaced": true,
                "kind": "Flunder", "verbs": ["get"]}]});
        let out = discovered(&list);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0]["scope"], "Namespaced");
        assert_eq!(out[0]["subresources"][0]["subresource"], "status");
    }

    #[test]
    fn a_subresource_without_its_resource_gets_an_entry_of_its_own() {
        let list = json!({"resources": [
            {"name": "pods/requests", "singularName": "", "namespaced": true,
                "kind": "MetricValueList", "verbs": ["get"]},
            {"name": "nodes", "singularName": "", "namespaced": false,
                "kind": "NodeMetrics", "verbs": ["list"]}]});
        let out = discovered(&list);
        assert_eq!(out.len(), 2);
        assert_eq!(out[0]["resource"], "pods");
        assert_eq!(out[0]["responseKind"]["kind"], "");
        assert_eq!(out[0]["verbs"], Value::Null);
        assert_eq!(out[0]["scope"], "Namespaced");
        assert_eq!(
            out[0]["subresources"][0]["responseKind"]["kind"],
            "MetricValueList"
        );
        assert_eq!(out[1]["resource"], "nodes");
        assert_eq!(out[1]["scope"], "Cluster");
    }
}
