//! The server's connections to kubelets, for logs, exec, attach, port-forward and the node
//! proxy: the address is chosen from the Node's status by `--kubelet-preferred-address-types`,
//! the port is the Node's `status.daemonEndpoints.kubeletEndpoint.Port` (10250 when unset),
//! TLS is verified with `--kubelet-certificate-authority` (not verified without one, as
//! upstream), and the client certificate of `--kubelet-client-certificate` is presented.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use capstan_meta::{ApiError, Reason};
use capstan_registry::{GetOptions, Registry};
use http::{Request, Response};
use hyper::body::Incoming;
use serde_json::Value;
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

use crate::forward::forward;
use crate::response::Body;

/// The kubelet port of a Node that does not report one.
pub const DEFAULT_KUBELET_PORT: u16 = 10250;

/// How the server reaches kubelets (the `--kubelet-*` options).
#[derive(Debug, Clone)]
pub struct KubeletClientConfig {
    /// Node address types tried, in order (`--kubelet-preferred-address-types`).
    pub preferred_address_types: Vec<String>,
    /// The CA bundle (PEM file) kubelets' serving certificates must chain to; without one
    /// they are not verified (`--kubelet-certificate-authority`).
    pub certificate_authority: Option<PathBuf>,
    /// The client certificate presented to kubelets (`--kubelet-client-certificate`).
    pub client_certificate: Option<PathBuf>,
    /// Its key (`--kubelet-client-key`).
    pub client_key: Option<PathBuf>,
    /// How long connecting (TCP and TLS) and waiting for a kubelet's response headers may
    /// take (`--kubelet-timeout`); a stream, once answered, lasts as long as it lasts.
    pub timeout: Duration,
}

impl Default for KubeletClientConfig {
    fn default() -> Self {
        Self {
            preferred_address_types: [
                "Hostname",
                "InternalDNS",
                "InternalIP",
                "ExternalDNS",
                "ExternalIP",
            ]
            .map(String::from)
            .to_vec(),
            certificate_authority: None,
            client_certificate: None,
            client_key: None,
            timeout: Duration::from_secs(5),
        }
    }
}

/// Where a node's kubelet listens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KubeletLocation {
    /// A host name or an IP address.
    pub host: String,
    /// The kubelet's port.
    pub port: u16,
    /// Whether the node declares `ExtendWebSocketsToKubelet` (its kubelet takes WebSocket
    /// streams itself, so they are passed through untranslated).
    pub websockets: bool,
}

impl KubeletLocation {
    /// `host:port`, an IPv6 address in brackets.
    pub fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

/// An upgraded connection to a kubelet, throttled by `--max-connection-bytes-per-sec`.
pub(crate) type KubeletStream =
    crate::throttle::Throttled<hyper_util::rt::TokioIo<hyper::upgrade::Upgraded>>;

/// Opens connections to kubelets.
pub(crate) struct KubeletClient {
    preferred: Vec<String>,
    /// `--max-connection-bytes-per-sec` for upgraded streams (0: no limit).
    bytes_per_sec: u64,
    timeout: Duration,
    /// Verifies kubelets' certificates with the configured CA (or not, without one).
    tls: Arc<rustls::ClientConfig>,
    /// Never verifies (a log request's `insecureSkipTLSVerifyBackend`).
    unverified: Arc<rustls::ClientConfig>,
}

impl KubeletClient {
    /// Reads the files `config` names (a missing or unusable one is a startup error);
    /// upgraded streams carry at most `bytes_per_sec` each way (0: no limit).
    pub fn new(config: &KubeletClientConfig, bytes_per_sec: u64) -> Result<Self, String> {
        let read = |path: &PathBuf| {
            std::fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))
        };
        let identity = match (&config.client_certificate, &config.client_key) {
            (Some(cert), Some(key)) => Some((read(cert)?, read(key)?)),
            (None, None) => None,
            _ => {
                return Err(
                    "--kubelet-client-certificate and --kubelet-client-key go together".into(),
                );
            }
        };
        let mut client = capstan_client::Config::new("https://kubelet");
        client.client_identity = identity;
        match &config.certificate_authority {
            Some(ca) => client.ca_pem = Some(read(ca)?),
            None => client.insecure = true,
        }
        let alpn: &[&[u8]] = &[b"http/1.1"];
        let tls = capstan_client::client_tls(&client, alpn).map_err(|e| e.to_string())?;
        client.insecure = true;
        let unverified = capstan_client::client_tls(&client, alpn).map_err(|e| e.to_string())?;
        Ok(Self {
            preferred: config.preferred_address_types.clone(),
            bytes_per_sec,
            timeout: config.timeout,
            tls: Arc::new(tls),
            unverified: Arc::new(unverified),
        })
    }

    /// `--max-connection-bytes-per-sec` (0: no limit).
    pub fn bytes_per_sec(&self) -> u64 {
        self.bytes_per_sec
    }

    /// Where the kubelet of the node named `node` listens.
    pub async fn locate(
        &self,
        registry: &Registry,
        node: &str,
    ) -> Result<KubeletLocation, ApiError> {
        let storage = registry
            .get("", "v1", "nodes", "")
            .ok_or_else(ApiError::path_not_found)?;
        let found = storage
            .get("", node, &GetOptions::default())
            .await
            .map_err(ApiError::from)?;
        let node: Value =
            serde_json::from_slice(&found.body.into_bytes()).map_err(ApiError::internal)?;
        self.locate_in(&node)
    }

    /// Where the kubelet of `node` (a Node object) listens.
    pub fn locate_in(&self, node: &Value) -> Result<KubeletLocation, ApiError> {
        let addresses = node["status"]["addresses"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let of_type = |kind: &str| {
            addresses
                .iter()
                .find(|a| a["type"] == kind)
                .and_then(|a| a["address"].as_str())
                .filter(|a| !a.is_empty())
                .map(str::to_string)
        };
        let host = self.preferred.iter().find_map(|kind| {
            of_type(kind).or_else(|| {
                // A node that reports no Hostname address is known by its hostname label.
                (kind == "Hostname")
                    .then(|| node["metadata"]["labels"]["kubernetes.io/hostname"].as_str())
                    .flatten()
                    .filter(|h| !h.is_empty())
                    .map(str::to_string)
            })
        });
        let Some(host) = host else {
            let known: Vec<String> = addresses
                .iter()
                .map(|a| {
                    format!(
                        "{{{} {}}}",
                        a["type"].as_str().unwrap_or_default(),
                        a["address"].as_str().unwrap_or_default()
                    )
                })
                .collect();
            return Err(ApiError::new(
                Reason::Unknown,
                format!(
                    "no preferred addresses found; known addresses: [{}]",
                    known.join(" ")
                ),
            ));
        };
        let port = node["status"]["daemonEndpoints"]["kubeletEndpoint"]["Port"]
            .as_u64()
            .and_then(|p| u16::try_from(p).ok())
            .filter(|p| *p > 0)
            .unwrap_or(DEFAULT_KUBELET_PORT);
        let websockets = node["status"]["declaredFeatures"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|f| f == "ExtendWebSocketsToKubelet");
        Ok(KubeletLocation {
            host,
            port,
            websockets,
        })
    }

    /// A TLS connection to the kubelet at `location`, verified unless `skip_verify`.
    pub async fn connect(
        &self,
        location: &KubeletLocation,
        skip_verify: bool,
    ) -> Result<TlsStream<TcpStream>, ApiError> {
        let authority = location.authority();
        let failed = |e: &dyn std::fmt::Display| {
            ApiError::new(Reason::Unknown, format!("dial tcp {authority}: {e}"))
        };
        let tcp = tokio::time::timeout(
            self.timeout,
            TcpStream::connect((location.host.as_str(), location.port)),
        )
        .await
        .map_err(|_| failed(&"i/o timeout"))?
        .map_err(|e| failed(&e))?;
        // Streams carry small writes (keystrokes, echoes): no Nagle delays, as Go's dialer.
        let _ = tcp.set_nodelay(true);
        let name = rustls_pki_types::ServerName::try_from(location.host.clone())
            .map_err(|e| failed(&e))?;
        let config = if skip_verify {
            self.unverified.clone()
        } else {
            self.tls.clone()
        };
        tokio::time::timeout(
            self.timeout,
            tokio_rustls::TlsConnector::from(config).connect(name, tcp),
        )
        .await
        .map_err(|_| failed(&"TLS handshake timeout"))?
        .map_err(|e| failed(&format!("tls: {e}")))
    }

    /// Sends the upgrade request `req` to the kubelet at `location` and, once it switches
    /// protocols, the connection; the kubelet's refusal (its status and body) otherwise.
    pub async fn upgrade(
        &self,
        location: &KubeletLocation,
        req: Request<http_body_util::Empty<bytes::Bytes>>,
    ) -> Result<(http::response::Parts, KubeletStream), ApiError> {
        let stream = self.connect(location, false).await?;
        let (mut sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .map_err(|e| ApiError::new(Reason::Unknown, e.to_string()))?;
        tokio::spawn(async move {
            if let Err(err) = connection.with_upgrades().await {
                tracing::debug!(%err, "kubelet upgrade connection ended");
            }
        });
        let answer = tokio::time::timeout(self.timeout, sender.send_request(req))
            .await
            .map_err(|_| {
                ApiError::new(
                    Reason::Unknown,
                    "net/http: timeout awaiting response headers",
                )
            })?
            .map_err(|e| ApiError::new(Reason::Unknown, e.to_string()))?;
        if answer.status() != http::StatusCode::SWITCHING_PROTOCOLS {
            use http_body_util::BodyExt;
            let status = answer.status();
            let body = answer
                .into_body()
                .collect()
                .await
                .map(|b| b.to_bytes())
                .unwrap_or_default();
            return Err(ApiError::new(
                Reason::Unknown,
                format!(
                    "unable to upgrade connection: {} ({})",
                    String::from_utf8_lossy(&body).trim(),
                    status.as_u16()
                ),
            ));
        }
        let mut answer = answer;
        let upgraded = hyper::upgrade::on(&mut answer)
            .await
            .map_err(|e| ApiError::new(Reason::Unknown, e.to_string()))?;
        let throttled = crate::throttle::Throttled::new(
            hyper_util::rt::TokioIo::new(upgraded),
            self.bytes_per_sec,
        );
        Ok((answer.into_parts().0, throttled))
    }

    /// Sends `req` (its path already the kubelet's) to the kubelet at `location` and
    /// answers with the kubelet's response, streamed or upgraded.
    pub async fn send(
        &self,
        location: &KubeletLocation,
        skip_verify: bool,
        req: Request<Incoming>,
    ) -> Result<Response<Body>, ApiError> {
        let stream = self.connect(location, skip_verify).await?;
        let target = format!("https://{}{}", location.authority(), req.uri());
        tokio::time::timeout(self.timeout, forward(stream, req, self.bytes_per_sec))
            .await
            .map_err(|_| {
                ApiError::new(
                    Reason::Unknown,
                    format!("Get {target:?}: net/http: timeout awaiting response headers"),
                )
            })?
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn client(types: &[&str]) -> KubeletClient {
        KubeletClient::new(
            &KubeletClientConfig {
                preferred_address_types: types.iter().map(|t| t.to_string()).collect(),
                ..Default::default()
            },
            0,
        )
        .unwrap()
    }

    #[test]
    fn the_first_preferred_address_type_the_node_reports_wins() {
        let node = json!({"metadata": {"labels": {"kubernetes.io/hostname": "n1.example"}},
            "status": {
            "addresses": [{"type": "InternalIP", "address": "10.0.0.7"},
                          {"type": "ExternalIP", "address": "192.0.2.7"}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10351}}}});
        let at = client(&["ExternalIP", "InternalIP"])
            .locate_in(&node)
            .unwrap();
        assert_eq!(at.authority(), "192.0.2.7:10351");
        // No Hostname address: the hostname label stands in.
        let at = client(&["Hostname", "InternalIP"])
            .locate_in(&node)
            .unwrap();
        assert_eq!(at.host, "n1.example");
        let err = client(&["InternalDNS"]).locate_in(&node).unwrap_err();
        assert_eq!(
            err.to_string()
                .split(": ")
                .skip(1)
                .collect::<Vec<_>>()
                .join(": "),
            "no preferred addresses found; known addresses: [{InternalIP 10.0.0.7} {ExternalIP 192.0.2.7}]"
        );
        let v6 = json!({"status": {"addresses": [{"type": "InternalIP", "address": "fd00::7"}]}});
        assert_eq!(
            client(&["InternalIP"]).locate_in(&v6).unwrap().authority(),
            "[fd00::7]:10250"
        );
    }

    #[test]
    fn a_client_certificate_needs_its_key() {
        let err = KubeletClient::new(
            &KubeletClientConfig {
                client_certificate: Some("/nonexistent".into()),
                ..Default::default()
            },
            0,
        )
        .err()
        .unwrap();
        assert!(err.contains("go together"), "{err}");
    }
}
