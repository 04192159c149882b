//! The `proxy` subresources of services and pods (`/api/v1/namespaces/{ns}/services/{name}/
//! proxy/{path}`, and the same for pods): the request is forwarded over HTTP/1.1 to a pod
//! the Service's endpoints name, or to the pod itself, and the answer streamed back, as
//! upstream's API server proxies them. The name may carry a scheme and a port
//! (`https:web:8443`). Authorization has already decided (`get services/proxy` for a GET);
//! the client's credentials are not passed on.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use capstan_meta::{ApiError, Reason};
use capstan_registry::{GetOptions, Registry};
use http::{Request, Response};
use hyper::body::Incoming;
use serde_json::Value;

use crate::forward::{backend_request, forward, unreachable};
use crate::request_info::RequestInfo;
use crate::response::Body;

/// How long connecting to the backend may take.
const DIAL_TIMEOUT: Duration = Duration::from_secs(30);

/// Whether the request is for a proxy subresource this module serves.
pub(crate) fn is_proxy(info: &RequestInfo) -> bool {
    info.is_resource_request
        && info.subresource == "proxy"
        && info.api_group.is_empty()
        && matches!(info.resource.as_str(), "services" | "pods")
}

/// Where a proxied request goes.
#[derive(Debug, PartialEq, Eq)]
struct Backend {
    https: bool,
    address: SocketAddr,
}

/// `name`, `name:port` or `scheme:name:port`, as upstream splits them.
pub(crate) fn split_name(raw: &str) -> Result<(bool, &str, &str), ApiError> {
    let parts: Vec<&str> = raw.split(':').collect();
    let (scheme, name, port) = match parts.as_slice() {
        [name] => ("", *name, ""),
        [name, port] => ("", *name, *port),
        [scheme, name, port] => (*scheme, *name, *port),
        _ => return Err(ApiError::bad_request(format!("invalid request {raw:?}"))),
    };
    let https = match scheme {
        "" | "http" => false,
        "https" => true,
        other => {
            return Err(ApiError::bad_request(format!(
                "unsupported scheme {other:?}"
            )));
        }
    };
    if name.is_empty() {
        return Err(ApiError::bad_request(format!("invalid request {raw:?}")));
    }
    Ok((https, name, port))
}

/// An address the server may proxy to: not loopback, link-local, multicast or unspecified
/// (upstream's check keeps the server's own and its node's addresses out of reach).
fn proxyable(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            !(v4.is_loopback()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_multicast()
                || v4.is_broadcast())
        }
        // `::ffff:127.0.0.1` is 127.0.0.1: judged as the IPv4 address it maps.
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => proxyable(IpAddr::V4(v4)),
            None => {
                !(v6.is_loopback()
                    || v6.is_unspecified()
                    || v6.is_multicast()
                    || v6.is_unicast_link_local())
            }
        },
    }
}

/// The stored object `namespace/name` of `resource` (a core v1 one), as JSON.
pub(crate) async fn read(
    registry: &Registry,
    resource: &str,
    namespace: &str,
    name: &str,
) -> Result<Value, ApiError> {
    let storage = registry
        .get("", "v1", resource, "")
        .ok_or_else(ApiError::path_not_found)?;
    let found = storage
        .get(namespace, name, &GetOptions::default())
        .await
        .map_err(ApiError::from)?;
    serde_json::from_slice(&found.body.into_bytes()).map_err(ApiError::internal)
}

/// The pod's address and the port asked for (or its first container port).
async fn pod_backend(registry: &Registry, namespace: &str, raw: &str) -> Result<Backend, ApiError> {
    let (https, name, port) = split_name(raw)?;
    let pod = read(registry, "pods", namespace, name).await?;
    let ip = pod["status"]["podIP"]
        .as_str()
        .and_then(|ip| ip.parse::<IpAddr>().ok())
        .filter(|ip| proxyable(*ip))
        .ok_or_else(|| ApiError::bad_request("address not allowed"))?;
    let first_port = || {
        pod["spec"]["containers"]
            .as_array()?
            .iter()
            .find_map(|c| c["ports"][0]["containerPort"].as_u64())
    };
    let port = match port {
        "" => first_port().unwrap_or(if https { 443 } else { 80 }),
        given => given.parse().map_err(|_| {
            ApiError::new(
                Reason::ServiceUnavailable,
                format!("error trying to reach service: unknown port {given:?}"),
            )
        })?,
    };
    Ok(Backend {
        https,
        address: SocketAddr::new(ip, u16::try_from(port).unwrap_or(80)),
    })
}

/// An endpoint of the Service serving the port asked for, whose address is a pod's.
async fn service_backend(
    registry: &Registry,
    namespace: &str,
    raw: &str,
) -> Result<Backend, ApiError> {
    let (https, name, port) = split_name(raw)?;
    let svc = read(registry, "services", namespace, name).await?;
    let mut port_name = port.to_string();
    if let Ok(number) = port.parse::<u64>() {
        match crate::webhook_services::service_port(&svc, number) {
            Some(p) => port_name = p["name"].as_str().unwrap_or_default().to_string(),
            None => {
                return Err(ApiError::new(
                    Reason::ServiceUnavailable,
                    format!("no service port {number} found for service {name:?}"),
                ));
            }
        }
    }
    let unavailable = || {
        ApiError::new(
            Reason::ServiceUnavailable,
            format!("no endpoints available for service {name:?}"),
        )
    };
    let endpoints = read(registry, "endpoints", namespace, name)
        .await
        .map_err(|e| if e.code() == 404 { unavailable() } else { e })?;
    let subsets = endpoints["subsets"].as_array().cloned().unwrap_or_default();
    let start = rand::random_range(0..subsets.len().max(1));
    for subset in subsets.iter().cycle().skip(start).take(subsets.len()) {
        let Some(port) = subset["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|p| p["name"].as_str().unwrap_or_default() == port_name)
            .and_then(|p| p["port"].as_u64())
        else {
            continue;
        };
        let addresses = subset["addresses"].as_array().cloned().unwrap_or_default();
        let first = rand::random_range(0..addresses.len().max(1));
        for address in addresses.iter().cycle().skip(first).take(addresses.len()) {
            // Only an address that is a pod's, as upstream checks.
            let target = &address["targetRef"];
            if target["kind"] != "Pod" {
                continue;
            }
            let Some(ip) = address["ip"]
                .as_str()
                .and_then(|ip| ip.parse::<IpAddr>().ok())
            else {
                continue;
            };
            let pod_ns = target["namespace"].as_str().unwrap_or(namespace);
            let pod_name = target["name"].as_str().unwrap_or_default();
            let Ok(pod) = read(registry, "pods", pod_ns, pod_name).await else {
                continue;
            };
            let has_ip = pod["status"]["podIPs"]
                .as_array()
                .into_iter()
                .flatten()
                .chain(std::iter::once(&pod["status"]["podIP"]))
                .filter_map(|p| p.as_str().or_else(|| p["ip"].as_str()))
                .any(|p| p.parse::<IpAddr>().ok() == Some(ip));
            if !has_ip || !proxyable(ip) {
                continue;
            }
            return Ok(Backend {
                https,
                address: SocketAddr::new(ip, u16::try_from(port).unwrap_or(80)),
            });
        }
    }
    Err(unavailable())
}

/// The answer of a proxied request: the backend's, streamed; a 503 when it cannot be
/// reached.
pub(crate) async fn serve(
    registry: &Registry,
    info: &RequestInfo,
    req: Request<Incoming>,
    bytes_per_sec: u64,
) -> Result<Response<Body>, ApiError> {
    let backend = match info.resource.as_str() {
        "services" => service_backend(registry, &info.namespace, &info.name).await?,
        _ => pod_backend(registry, &info.namespace, &info.name).await?,
    };
    let request = backend_request(req, &info.extra, &backend.address.to_string())?;
    dial(backend.address, backend.https, request, bytes_per_sec).await
}

/// `request` sent to `address` over HTTP, or HTTPS when `https` (unverified: the backend's
/// certificate is not for its address), and the answer.
pub(crate) async fn dial(
    address: SocketAddr,
    https: bool,
    request: Request<Incoming>,
    bytes_per_sec: u64,
) -> Result<Response<Body>, ApiError> {
    let tcp = tokio::time::timeout(DIAL_TIMEOUT, tokio::net::TcpStream::connect(address))
        .await
        .map_err(|_| unreachable(format!("dial tcp {}: i/o timeout", address)))?
        .map_err(|e| unreachable(format!("dial tcp {}: {e}", address)))?;
    let _ = tcp.set_nodelay(true);
    if https {
        let mut config = capstan_client::Config::new(format!("https://{}", address));
        // Pods' certificates are not for their addresses: upstream does not verify them.
        config.insecure = true;
        let tls = capstan_client::client_tls(&config, &[b"http/1.1"]).map_err(unreachable)?;
        let name = rustls_pki_types::ServerName::IpAddress(address.ip().into());
        let stream = tokio_rustls::TlsConnector::from(Arc::new(tls))
            .connect(name, tcp)
            .await
            .map_err(unreachable)?;
        forward(stream, request, bytes_per_sec).await
    } else {
        forward(tcp, request, bytes_per_sec).await
    }
}

/// The address of `host` (a name is resolved) at `port`, when it is one the server may
/// proxy to.
pub(crate) async fn resolve_proxyable(host: &str, port: u16) -> Result<SocketAddr, ApiError> {
    let mut addresses = tokio::net::lookup_host((host, port))
        .await
        .map_err(|e| ApiError::bad_request(format!("lookup {host}: {e}")))?;
    let address = addresses
        .next()
        .ok_or_else(|| ApiError::bad_request(format!("lookup {host}: no such host")))?;
    if !proxyable(address.ip()) {
        return Err(ApiError::bad_request("address not allowed"));
    }
    Ok(address)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_carry_a_scheme_and_a_port() {
        assert_eq!(split_name("web").unwrap(), (false, "web", ""));
        assert_eq!(split_name("web:8080").unwrap(), (false, "web", "8080"));
        assert_eq!(
            split_name("https:web:metrics").unwrap(),
            (true, "web", "metrics")
        );
        assert!(split_name("ftp:web:21").is_err());
        assert!(split_name("a:b:c:d").is_err());
    }

    #[test]
    fn the_servers_own_addresses_are_out_of_reach() {
        for ip in [
            "127.0.0.1",
            "169.254.169.254",
            "0.0.0.0",
            "::1",
            "fe80::1",
            "224.0.0.1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
        ] {
            assert!(!proxyable(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["10.0.0.7", "192.0.2.10", "2001:db8::1", "::ffff:10.0.0.7"] {
            assert!(proxyable(ip.parse().unwrap()), "{ip}");
        }
    }
}
