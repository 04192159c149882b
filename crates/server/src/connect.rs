//! The subresources served by a node's kubelet: `pods/log`, `pods/exec`, `pods/attach`,
//! `pods/portforward` and `nodes/proxy`. The server finds the pod's node (or the node),
//! checks the options as upstream does, runs admission's `CONNECT` phase, and hands the
//! request to the kubelet ([`crate::kubelet`]): logs are streamed back as the kubelet
//! writes them, and exec, attach and port-forward upgrades (SPDY, WebSocket) are spliced
//! through once the kubelet accepts them.

use std::sync::Arc;

use capstan_admission::{Attributes as AdmissionAttributes, Operation};
use capstan_auth::UserInfo;
use capstan_meta::{ApiError, FieldError, GroupResource, Reason, ResourceDescriptor};
use capstan_registry::{Registry, RestStorage};

use crate::proxy::read;
use http::{Request, Response, header};
use http_body_util::BodyExt;
use hyper::body::Incoming;
use serde_json::{Value, json};

use crate::forward::{backend_request, wants_upgrade};
use crate::kubelet::{KubeletClient, KubeletLocation};
use crate::query::{Query, encode};
use crate::request_info::RequestInfo;
use crate::response::Body;

/// The most of a kubelet's error body read into the error returned.
const ERROR_BODY_LIMIT: usize = 50_000;

/// Whether the request is for a subresource a kubelet serves.
pub(crate) fn is_connect(info: &RequestInfo) -> bool {
    info.is_resource_request
        && info.api_group.is_empty()
        && match info.resource.as_str() {
            "pods" => matches!(
                info.subresource.as_str(),
                "log" | "exec" | "attach" | "portforward"
            ),
            "nodes" => info.subresource == "proxy",
            _ => false,
        }
}

/// The discovery entry of a subresource served by a handler rather than by storage (the
/// proxies and the kubelet's subresources).
pub(crate) struct ConnectDescriptor(ResourceDescriptor);

impl ConnectDescriptor {
    /// `resource/subresource` of kind `kind`, with `verbs`.
    pub(crate) fn new(
        resource: &str,
        subresource: &str,
        kind: &str,
        namespaced: bool,
        verbs: &[&str],
    ) -> Self {
        Self(ResourceDescriptor {
            group: String::new(),
            version: "v1".into(),
            kind: kind.into(),
            resource: resource.into(),
            subresource: subresource.into(),
            namespaced,
            verbs: verbs.iter().map(|v| v.to_string()).collect(),
            ..Default::default()
        })
    }

    /// Every subresource of this kind the server serves.
    pub(crate) fn all() -> Vec<Self> {
        let proxy = ["create", "delete", "get", "patch", "update"];
        let stream = ["create", "get"];
        vec![
            Self::new("services", "proxy", "ServiceProxyOptions", true, &proxy),
            Self::new("pods", "proxy", "PodProxyOptions", true, &proxy),
            Self::new("nodes", "proxy", "NodeProxyOptions", false, &proxy),
            Self::new("pods", "attach", "PodAttachOptions", true, &stream),
            Self::new("pods", "exec", "PodExecOptions", true, &stream),
            Self::new(
                "pods",
                "portforward",
                "PodPortForwardOptions",
                true,
                &stream,
            ),
            Self::new("pods", "log", "Pod", true, &["get"]),
        ]
    }
}

#[async_trait::async_trait]
impl RestStorage for ConnectDescriptor {
    fn descriptor(&self) -> &ResourceDescriptor {
        &self.0
    }

    fn schema(&self, _generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "object"})
    }
}

/// Every container name of `pod`: init containers, containers, ephemeral containers.
fn container_names(pod: &Value) -> Vec<&str> {
    ["initContainers", "containers", "ephemeralContainers"]
        .iter()
        .flat_map(|list| pod["spec"][*list].as_array().into_iter().flatten())
        .filter_map(|c| c["name"].as_str())
        .collect()
}

/// The container asked for, or the pod's only one.
fn container<'a>(pod: &'a Value, asked: &'a str) -> Result<&'a str, ApiError> {
    let name = pod["metadata"]["name"].as_str().unwrap_or_default();
    if !asked.is_empty() {
        if !container_names(pod).contains(&asked) {
            return Err(ApiError::bad_request(format!(
                "container {asked} is not valid for pod {name}"
            )));
        }
        return Ok(asked);
    }
    let containers = pod["spec"]["containers"].as_array();
    match containers.map_or(0, Vec::len) {
        1 => Ok(pod["spec"]["containers"][0]["name"]
            .as_str()
            .unwrap_or_default()),
        0 => Err(ApiError::bad_request(format!(
            "a container name must be specified for pod {name}"
        ))),
        _ => Err(ApiError::bad_request(format!(
            "a container name must be specified for pod {name}, choose one of: [{}]",
            container_names(pod).join(" ")
        ))),
    }
}

/// An integer query parameter.
fn integer(query: &Query, key: &str) -> Result<Option<i64>, ApiError> {
    query
        .get(key)
        .map(|v| {
            v.parse().map_err(|_| {
                ApiError::bad_request(format!(
                    "couldn't parse parameter {key}: strconv.ParseInt: parsing {v:?}: invalid syntax"
                ))
            })
        })
        .transpose()
}

/// The kubelet query of a log request, after checking the options as upstream's
/// `PodLogOptions` validation does.
fn log_query(pod_name: &str, query: &Query) -> Result<Vec<(String, String)>, ApiError> {
    let tail_lines = integer(query, "tailLines")?;
    let limit_bytes = integer(query, "limitBytes")?;
    let since_seconds = integer(query, "sinceSeconds")?;
    let since_time = query.get("sinceTime");
    let stream = query.get("stream");
    let mut errors = Vec::new();
    if let Some(n) = tail_lines.filter(|n| *n < 0) {
        errors.push(FieldError::invalid_raw(
            "tailLines",
            n.to_string(),
            "must be greater than or equal to 0",
        ));
    }
    if let Some(n) = limit_bytes.filter(|n| *n < 1) {
        errors.push(FieldError::invalid_raw(
            "limitBytes",
            n.to_string(),
            "must be greater than 0",
        ));
    }
    match (since_seconds, since_time) {
        (Some(_), Some(_)) => errors.push(FieldError::forbidden(
            "",
            "at most one of `sinceTime` or `sinceSeconds` may be specified",
        )),
        (Some(n), None) if n < 1 => errors.push(FieldError::invalid_raw(
            "sinceSeconds",
            n.to_string(),
            "must be greater than 0",
        )),
        _ => {}
    }
    if let Some(s) = stream {
        if !matches!(s, "All" | "Stdout" | "Stderr") {
            errors.push(FieldError::not_supported(
                "stream",
                s,
                &["All", "Stderr", "Stdout"],
            ));
        } else if s != "All" && tail_lines.is_some() {
            errors.push(FieldError::forbidden(
                "",
                "`tailLines` and specific `stream` are mutually exclusive for now",
            ));
        }
    }
    if !errors.is_empty() {
        return Err(ApiError::invalid("", "PodLogOptions", pod_name, &errors));
    }
    let since_time = since_time
        .map(|t| {
            t.parse::<jiff::Timestamp>()
                .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
                .map_err(|e| ApiError::bad_request(format!("invalid sinceTime {t:?}: {e}")))
        })
        .transpose()?;
    let mut out = Vec::new();
    for flag in ["follow", "previous", "timestamps"] {
        if query.flag(flag) {
            out.push((flag.to_string(), "true".to_string()));
        }
    }
    let numbers = [
        ("sinceSeconds", since_seconds),
        ("tailLines", tail_lines),
        ("limitBytes", limit_bytes),
    ];
    if let Some(t) = since_time {
        out.push(("sinceTime".into(), t));
    }
    for (key, value) in numbers {
        if let Some(n) = value {
            out.push((key.into(), n.to_string()));
        }
    }
    if let Some(s) = stream {
        out.push(("stream".into(), s.into()));
    }
    Ok(out)
}

/// The kubelet query of an exec or attach (`command`, `input`, `output`, `error`, `tty`) or
/// of a port-forward (`port`), and the options object admission sees.
fn stream_query(
    subresource: &str,
    query: &Query,
) -> Result<(Vec<(String, String)>, Value), ApiError> {
    let mut out = Vec::new();
    if subresource == "portforward" {
        let mut ports = Vec::new();
        for p in query.all("ports") {
            let port: u16 = p.parse().ok().filter(|p| *p > 0).ok_or_else(|| {
                ApiError::bad_request(format!("invalid port {p:?}: must be 1-65535"))
            })?;
            ports.push(port);
            out.push(("port".into(), port.to_string()));
        }
        let mut options = json!({"kind": "PodPortForwardOptions", "apiVersion": "v1"});
        if !ports.is_empty() {
            options["ports"] = json!(ports);
        }
        return Ok((out, options));
    }
    let kind = if subresource == "exec" {
        "PodExecOptions"
    } else {
        "PodAttachOptions"
    };
    let mut options = json!({"kind": kind, "apiVersion": "v1"});
    if subresource == "exec" {
        let command: Vec<&str> = query.all("command");
        for c in &command {
            out.push(("command".into(), c.to_string()));
        }
        options["command"] = json!(command);
    }
    for (key, kubelet_key) in [
        ("stdin", "input"),
        ("stdout", "output"),
        ("stderr", "error"),
        ("tty", "tty"),
    ] {
        if query.flag(key) {
            out.push((kubelet_key.into(), "1".into()));
            options[key] = true.into();
        }
    }
    if let Some(c) = query.get("container") {
        options["container"] = c.into();
    }
    Ok((out, options))
}

/// `path` with `pairs` as its query, keys in order (as Go encodes a query: the kubelet sees
/// what upstream's server sends), values of a key in the order given.
fn with_query(path: String, pairs: &[(String, String)]) -> String {
    if pairs.is_empty() {
        return path;
    }
    let mut sorted: Vec<&(String, String)> = pairs.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(&b.0));
    let query: Vec<String> = sorted
        .into_iter()
        .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
        .collect();
    format!("{path}?{}", query.join("&"))
}

/// The error of a log request the kubelet refused, as upstream turns the kubelet's answer
/// into one.
async fn kubelet_refusal(response: Response<Body>, name: &str) -> ApiError {
    let code = response.status().as_u16();
    let mut body = response
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    body.truncate(ERROR_BODY_LIMIT);
    let text = String::from_utf8_lossy(&body).into_owned();
    match code {
        400 => ApiError::bad_request(text),
        500 => ApiError::internal(text),
        403 => ApiError::new(Reason::Forbidden, text),
        404 => ApiError::new(
            Reason::NotFound,
            format!("the server could not find the requested resource ( pods/log {name})"),
        ),
        _ => {
            let mut err = ApiError::new(
                Reason::Unknown,
                format!(
                    "the server responded with the status code {code} but did not return more information ( pods/log {name})"
                ),
            );
            err.status_code = Some(code);
            err
        }
    }
}

/// Runs admission's `CONNECT` phase for an exec, attach or port-forward with `options`.
async fn admit_connect(
    registry: &Registry,
    info: &RequestInfo,
    user: UserInfo,
    options: Value,
) -> Result<(), ApiError> {
    let Some(chain) = registry.admission() else {
        return Ok(());
    };
    let mut attributes =
        AdmissionAttributes::new(Operation::Connect, GroupResource::new("", "pods"), user);
    attributes.version = "v1".into();
    attributes.subresource = info.subresource.clone();
    attributes.namespace = info.namespace.clone();
    attributes.name = info.name.clone();
    attributes.kind = options["kind"].as_str().unwrap_or_default().into();
    attributes.object = Some(options);
    chain.admit(&mut attributes).await?;
    chain.validate(&attributes).await
}

/// The answer of a kubelet subresource.
pub(crate) async fn serve(
    registry: &Registry,
    kubelet: &Arc<KubeletClient>,
    info: &RequestInfo,
    req: Request<Incoming>,
) -> Result<Response<Body>, ApiError> {
    if info.resource == "nodes" {
        return node_proxy(registry, kubelet, info, req).await;
    }
    let query = Query::parse(req.uri().query());
    let pod = read(registry, "pods", &info.namespace, &info.name).await?;
    let node = pod["spec"]["nodeName"].as_str().unwrap_or_default();
    let (namespace, name) = (&info.namespace, &info.name);
    if info.subresource == "log" {
        let container = container(&pod, query.get("container").unwrap_or_default())?;
        let pairs = log_query(name, &query)?;
        if node.is_empty() {
            // Nothing has run yet: no logs.
            return Ok(Response::new(
                http_body_util::Empty::new()
                    .map_err(|never| match never {})
                    .boxed_unsync(),
            ));
        }
        let location = kubelet.locate(registry, node).await?;
        let path = with_query(
            format!("/containerLogs/{namespace}/{name}/{container}"),
            &pairs,
        );
        let skip_verify = query.flag("insecureSkipTLSVerifyBackend");
        let request = backend_request(req, &[], &location.authority())?;
        let request = at_path(request, &path)?;
        let response = kubelet.send(&location, skip_verify, request).await?;
        if !response.status().is_success() {
            return Err(kubelet_refusal(response, name).await);
        }
        let (mut parts, body) = response.into_parts();
        parts
            .headers
            .insert(header::CONTENT_TYPE, "text/plain".parse().expect("static"));
        return Ok(Response::from_parts(parts, body));
    }
    if !wants_upgrade(req.headers()) {
        return Err(ApiError::bad_request("Upgrade request required"));
    }
    let (pairs, options) = stream_query(&info.subresource, &query)?;
    let user = req
        .extensions()
        .get::<UserInfo>()
        .cloned()
        .unwrap_or_default();
    admit_connect(registry, info, user, options).await?;
    let path = if info.subresource == "portforward" {
        format!("/portForward/{namespace}/{name}")
    } else {
        let container = container(&pod, query.get("container").unwrap_or_default())?;
        format!("/{}/{namespace}/{name}/{container}", info.subresource)
    };
    if node.is_empty() {
        return Err(ApiError::bad_request(format!(
            "pod {name} does not have a host assigned"
        )));
    }
    let location = kubelet.locate(registry, node).await?;
    let path_and_query = with_query(path, &pairs);
    // A kubelet that does not take WebSocket streams itself gets SPDY, as upstream bridges
    // it: remote commands over `v5.channel.k8s.io` are translated, port-forward SPDY
    // carried in a WebSocket is tunnelled.
    let offered = crate::translate::offered(req.headers());
    let offers = |protocol: &str| offered.iter().any(|p| p == protocol);
    if !location.websockets && req.headers().contains_key(header::SEC_WEBSOCKET_KEY) {
        if info.subresource == "portforward" && offers(crate::translate::PORT_FORWARD_TUNNEL) {
            return crate::translate::port_forward_tunnel(
                kubelet.clone(),
                location,
                path_and_query,
                req,
            );
        }
        if info.subresource != "portforward" && offers(crate::translate::V5) {
            let streams = crate::translate::Streams {
                stdin: query.flag("stdin"),
                stdout: query.flag("stdout"),
                stderr: query.flag("stderr"),
                tty: query.flag("tty"),
            };
            return crate::translate::remote_command(
                kubelet.clone(),
                location,
                path_and_query,
                streams,
                req,
            );
        }
    }
    let request = backend_request(req, &[], &location.authority())?;
    let request = at_path(request, &path_and_query)?;
    kubelet.send(&location, false, request).await
}

/// `req` sent to `path_and_query` instead.
fn at_path(req: Request<Incoming>, path_and_query: &str) -> Result<Request<Incoming>, ApiError> {
    let (mut parts, body) = req.into_parts();
    parts.uri = path_and_query
        .parse()
        .map_err(|e| ApiError::bad_request(format!("invalid path: {e}")))?;
    Ok(Request::from_parts(parts, body))
}

/// `nodes/<name>/proxy/<path>`: to the kubelet when no port (or the kubelet's) is named,
/// else to that port of the node's address; either way only to an address the server may
/// proxy to (not loopback, link-local, multicast), as upstream v1.36 checks.
async fn node_proxy(
    registry: &Registry,
    kubelet: &Arc<KubeletClient>,
    info: &RequestInfo,
    req: Request<Incoming>,
) -> Result<Response<Body>, ApiError> {
    let (https, name, port) = crate::proxy::split_name(&info.name)
        .map_err(|_| ApiError::bad_request(format!("invalid node request {:?}", info.name)))?;
    let location = kubelet.locate(registry, name).await?;
    crate::proxy::resolve_proxyable(&location.host, location.port).await?;
    if port.is_empty() || port == location.port.to_string() {
        let request = backend_request(req, &info.extra, &location.authority())?;
        return kubelet.send(&location, false, request).await;
    }
    let port: u16 = port
        .parse()
        .map_err(|_| ApiError::bad_request(format!("invalid node request {:?}", info.name)))?;
    let target = KubeletLocation { port, ..location };
    let address = crate::proxy::resolve_proxyable(&target.host, port).await?;
    let request = backend_request(req, &info.extra, &target.authority())?;
    crate::proxy::dial(address, https, request, kubelet.bytes_per_sec()).await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(containers: &[&str], init: &[&str]) -> Value {
        let named = |names: &[&str]| names.iter().map(|n| json!({"name": n})).collect::<Vec<_>>();
        json!({"metadata": {"name": "p"},
            "spec": {"containers": named(containers), "initContainers": named(init)}})
    }

    #[test]
    fn the_container_is_the_one_named_or_the_only_one() {
        assert_eq!(container(&pod(&["app"], &[]), "").unwrap(), "app");
        let two = pod(&["app", "sidecar"], &["setup"]);
        assert_eq!(container(&two, "setup").unwrap(), "setup");
        assert_eq!(
            container(&two, "").unwrap_err().to_status().message,
            Some(
                "a container name must be specified for pod p, choose one of: [setup app sidecar]"
                    .into()
            )
        );
        assert_eq!(
            container(&two, "db").unwrap_err().to_status().message,
            Some("container db is not valid for pod p".into())
        );
    }

    #[test]
    fn log_options_are_checked_as_upstream_checks_them() {
        let q = |s: &str| Query::parse(Some(s));
        let ok = log_query(
            "p",
            &q("follow=true&tailLines=10&sinceTime=2026-11-29T03:00:00%2B01:00"),
        )
        .unwrap();
        assert_eq!(
            ok,
            vec![
                ("follow".to_string(), "true".to_string()),
                ("sinceTime".into(), "2026-11-29T02:00:00Z".into()),
                ("tailLines".into(), "10".into()),
            ]
        );
        let err = log_query(
            "p",
            &q("tailLines=-1&limitBytes=0&sinceSeconds=5&sinceTime=2026-11-29T03:00:00Z"),
        )
        .unwrap_err();
        assert_eq!(err.code(), 422);
        assert_eq!(
            err.to_status().message,
            Some("PodLogOptions \"p\" is invalid: [tailLines: Invalid value: -1: must be greater than or equal to 0, limitBytes: Invalid value: 0: must be greater than 0, : Forbidden: at most one of `sinceTime` or `sinceSeconds` may be specified]".into())
        );
        assert_eq!(log_query("p", &q("tailLines=x")).unwrap_err().code(), 400);
    }

    #[test]
    fn stream_options_become_the_kubelets_query() {
        let q = Query::parse(Some(
            "command=sh&command=-c&command=echo+hi&stdin=true&stdout=true&tty=true&container=app",
        ));
        let (pairs, options) = stream_query("exec", &q).unwrap();
        assert_eq!(
            with_query("/exec/ns/p/app".into(), &pairs),
            "/exec/ns/p/app?command=sh&command=-c&command=echo%20hi&input=1&output=1&tty=1"
        );
        assert_eq!(options["command"], json!(["sh", "-c", "echo hi"]));
        assert_eq!(options["kind"], "PodExecOptions");
        let (pairs, options) =
            stream_query("portforward", &Query::parse(Some("ports=8080"))).unwrap();
        assert_eq!(pairs, vec![("port".to_string(), "8080".to_string())]);
        assert_eq!(options["ports"], json!([8080]));
        assert!(stream_query("portforward", &Query::parse(Some("ports=0"))).is_err());
    }
}
