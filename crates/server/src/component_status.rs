//! `v1` ComponentStatus (deprecated upstream since v1.19 and still served): the health of the
//! scheduler, the controller manager and each etcd server, probed when a client asks, as
//! upstream probes them (the components' secure `/healthz` on localhost, each etcd server on
//! its own). With the embedded store there is no etcd server to list.

use std::time::Duration;

use async_trait::async_trait;
use capstan_client::{Config as ClientConfig, HttpsClient};
use capstan_etcd::{EtcdConfig, EtcdStore};
use capstan_meta::{ApiError, GroupResource, ResourceDescriptor};
use capstan_registry::{Encoded, GetOptions, ListOptions, Payload, ResponseStatus, RestStorage};
use capstan_storage::Store;
use http::Method;
use serde_json::{Value, json};

/// The components upstream reports besides etcd, with their health URLs.
pub const DEFAULT_COMPONENTS: &[(&str, &str)] = &[
    ("scheduler", "https://127.0.0.1:10259/healthz"),
    ("controller-manager", "https://127.0.0.1:10257/healthz"),
];
/// How long one probe may take (upstream's probe timeout).
const PROBE_TIMEOUT: Duration = Duration::from_secs(20);
/// The warning every answer carries, as upstream's.
const DEPRECATED: &str = "v1 ComponentStatus is deprecated in v1.19+";

/// How one component is asked for its health.
enum Probe {
    /// `GET` of an HTTPS health endpoint (the certificate is not verified, as upstream).
    Healthz(String),
    /// A request to one etcd server.
    Etcd(EtcdConfig),
}

/// The outcome of a probe: healthy with a message, or failed with an error.
type Outcome = Result<String, String>;

impl Probe {
    async fn run(&self) -> Outcome {
        match self {
            Probe::Healthz(url) => {
                let mut config = ClientConfig::new(url.clone());
                config.insecure = true;
                let client = HttpsClient::new(&config, PROBE_TIMEOUT).map_err(|e| e.to_string())?;
                let (status, body) = client
                    .request(Method::GET, url, None, Default::default())
                    .await
                    .map_err(|e| e.to_string())?;
                if status.is_success() || status.is_redirection() {
                    Ok(String::from_utf8_lossy(&body).into_owned())
                } else {
                    Err(format!(
                        "HTTP probe failed with statuscode: {}",
                        status.as_u16()
                    ))
                }
            }
            Probe::Etcd(config) => {
                let check = async {
                    let store = EtcdStore::connect(config)
                        .await
                        .map_err(|e| e.to_string())?;
                    store.ping().await.map_err(|e| e.to_string())
                };
                match tokio::time::timeout(PROBE_TIMEOUT, check).await {
                    Ok(Ok(())) => Ok("ok".into()),
                    Ok(Err(e)) => Err(e),
                    Err(_) => Err(format!("no answer within {PROBE_TIMEOUT:?}")),
                }
            }
        }
    }
}

/// `componentstatuses`: get and list, each answer probed afresh.
pub struct ComponentStatusRest {
    descriptor: ResourceDescriptor,
    components: Vec<(String, Probe)>,
}

impl ComponentStatusRest {
    /// The components of `health_urls` (name and health URL), and each server of `etcd` (none
    /// for the embedded store).
    pub fn new(health_urls: &[(String, String)], etcd: Option<&EtcdConfig>) -> Self {
        let mut components: Vec<(String, Probe)> = health_urls
            .iter()
            .map(|(name, url)| (name.clone(), Probe::Healthz(url.clone())))
            .collect();
        for (i, endpoint) in etcd.iter().flat_map(|c| c.endpoints.iter()).enumerate() {
            let mut one = etcd.cloned().expect("an endpoint comes from a config");
            one.endpoints = vec![endpoint.clone()];
            components.push((format!("etcd-{i}"), Probe::Etcd(one)));
        }
        let descriptor = ResourceDescriptor {
            group: String::new(),
            version: "v1".into(),
            kind: "ComponentStatus".into(),
            resource: "componentstatuses".into(),
            singular: "componentstatus".into(),
            short_names: vec!["cs".into()],
            namespaced: false,
            verbs: vec!["get".into(), "list".into()],
            columns: capstan_api::printers::for_kind("", "ComponentStatus"),
            deprecation: Some(DEPRECATED.into()),
            ..Default::default()
        };
        Self {
            descriptor,
            components,
        }
    }

    async fn status(name: &str, probe: &Probe) -> Value {
        let condition = match probe.run().await {
            Ok(message) => json!({"type": "Healthy", "status": "True", "message": message}),
            Err(error) => json!({"type": "Healthy", "status": "False", "error": error}),
        };
        json!({"kind": "ComponentStatus", "apiVersion": "v1",
            "metadata": {"name": name}, "conditions": [condition]})
    }

    fn answer(doc: &Value) -> capstan_registry::Result<Encoded> {
        Ok(Encoded {
            body: Payload::Whole(serde_json::to_vec(doc).unwrap_or_default().into()),
            warnings: Vec::new(),
            status: ResponseStatus::Ok,
        })
    }
}

#[async_trait]
impl RestStorage for ComponentStatusRest {
    fn descriptor(&self) -> &ResourceDescriptor {
        &self.descriptor
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        generator.subschema_for::<k8s_openapi::api::core::v1::ComponentStatus>()
    }

    async fn get(
        &self,
        _namespace: &str,
        name: &str,
        _options: &GetOptions,
    ) -> capstan_registry::Result<Encoded> {
        let Some((_, probe)) = self.components.iter().find(|(n, _)| n == name) else {
            return Err(
                ApiError::not_found(&GroupResource::new("", "componentstatuses"), name).into(),
            );
        };
        Self::answer(&Self::status(name, probe).await)
    }

    async fn list(
        &self,
        _namespace: &str,
        _options: &ListOptions,
    ) -> capstan_registry::Result<Encoded> {
        let items = futures_util::future::join_all(
            self.components
                .iter()
                .map(|(name, probe)| Self::status(name, probe)),
        )
        .await;
        Self::answer(&json!({"kind": "ComponentStatusList", "apiVersion": "v1",
            "metadata": {}, "items": items}))
    }
}
