//! The `kubernetes` Service, through which pods reach the API servers, and its Endpoints and
//! EndpointSlice (upstream's kubernetes service controller and endpoint reconcilers).
//!
//! Every 10 s the Service is created or put back as it should be (port 443 `https` to the
//! secure port, the first address of the primary service range, NodePort when
//! `--kubernetes-service-node-port` is set), and its endpoints are reconciled:
//!
//! - `lease`: each server keeps a record that expires 15 s after its last renewal under
//!   `masterleases/<ip>`; the endpoints are the addresses of the live records.
//! - `master-count`: each server adds its address; beyond `--apiserver-count` addresses, the
//!   others go.
//! - `none`: the endpoints are left alone.
//!
//! When the server stops, it takes itself out of the endpoints (its lease record goes, or its
//! address under `master-count`), unless it is the last server: the endpoints are never
//! emptied, as upstream's reconcilers refuse to.

use std::net::IpAddr;
use std::time::Duration;

use bytes::Bytes;
use capstan_meta::Reason;
use capstan_registry::{Error, RestStorage, WriteOptions};
use capstan_storage::ListRequest;
use serde_json::{Value, json};
use tracing::warn;

/// The Service's name.
pub const SERVICE_NAME: &str = "kubernetes";
/// The Service's port.
const SERVICE_PORT: i32 = 443;
/// How often the Service and endpoints are reconciled.
const INTERVAL: Duration = Duration::from_secs(10);
/// How long a server's lease lasts after its last renewal.
const LEASE_TTL: Duration = Duration::from_secs(15);

pub use capstan_control::{
    KubernetesService as Config, KubernetesServiceStores as Stores, Reconciler,
};

fn json<T: serde::Serialize>(value: &T) -> capstan_registry::Result<Vec<u8>> {
    serde_json::to_vec(value).map_err(Error::Encode)
}

/// Creates `body` as `name`, or replaces the stored object when `differs` says it should.
async fn ensure(
    storage: &dyn RestStorage,
    namespace: &str,
    name: &str,
    mut body: Value,
    differs: impl Fn(&Value) -> bool,
) -> capstan_registry::Result<()> {
    let options = WriteOptions::server();
    let current = match storage.get(namespace, name, &Default::default()).await {
        Ok(found) => {
            Some(serde_json::from_slice::<Value>(&found.body.into_bytes()).map_err(Error::Encode)?)
        }
        Err(Error::Api(e)) if e.reason == Reason::NotFound => None,
        Err(e) => return Err(e),
    };
    match current {
        None => match storage.create(namespace, &json(&body)?, &options).await {
            Ok(_) => Ok(()),
            Err(Error::Api(e)) if e.reason == Reason::AlreadyExists => Ok(()),
            Err(e) => Err(e),
        },
        Some(current) if differs(&current) => {
            body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"].clone();
            storage
                .update(namespace, name, &json(&body)?, &options)
                .await
                .map(|_| ())
        }
        Some(_) => Ok(()),
    }
}

/// One pass: the namespace, the Service, the endpoints.
pub async fn reconcile(config: &Config, stores: &Stores) -> capstan_registry::Result<()> {
    let ns = config.namespace.as_str();
    let namespace = json(&json!({"metadata": {"name": ns}}))?;
    match stores
        .namespaces
        .create("", &namespace, &WriteOptions::server())
        .await
    {
        Ok(_) => {}
        Err(Error::Api(e)) if e.reason == Reason::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let mut port = json!({"name": "https", "protocol": "TCP", "port": SERVICE_PORT,
                          "targetPort": config.port});
    let kind = if config.node_port == 0 {
        "ClusterIP"
    } else {
        "NodePort"
    };
    if config.node_port != 0 {
        port["nodePort"] = json!(config.node_port);
    }
    let mut spec = json!({"type": kind, "ports": [port.clone()], "sessionAffinity": "None"});
    if let Some(ip) = config.cluster_ip {
        spec["clusterIP"] = json!(ip.to_string());
    }
    let service = json!({
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": SERVICE_NAME, "namespace": ns,
                     "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": spec,
    });
    ensure(&*stores.services, ns, SERVICE_NAME, service, |current| {
        let ports = &current["spec"]["ports"];
        current["spec"]["type"] != kind
            || ports.as_array().map(Vec::len) != Some(1)
            || ports[0]["port"] != SERVICE_PORT
            || ports[0]["targetPort"] != config.port
            || (config.node_port != 0 && ports[0]["nodePort"] != config.node_port)
    })
    .await?;
    let Some(address) = config.address else {
        return Ok(());
    };
    let addresses = match config.reconciler {
        Reconciler::None => return Ok(()),
        Reconciler::Lease => renew_lease(stores, address).await?,
        Reconciler::MasterCount(count) => master_count(stores, ns, address, count).await?,
    };
    write_endpoints(config, stores, &addresses).await
}

/// Renews this server's lease and answers the addresses of the live ones. The record is
/// upstream's: an Endpoints named after the address, in the endpoints' storage form, under
/// `masterleases/<ip>`, written with an etcd lease of 15 s, so that a kube-apiserver on the
/// same etcd reads it and nobody's clock decides when it expires.
async fn renew_lease(stores: &Stores, own: IpAddr) -> capstan_registry::Result<Vec<IpAddr>> {
    let key = format!("{}{own}", lease_prefix(stores));
    let record = json!({
        "apiVersion": "v1", "kind": "Endpoints",
        "metadata": {"name": own.to_string(), "namespace": "default"},
        "subsets": [{"addresses": [{"ip": own.to_string()}]}],
    });
    let value = stores
        .endpoints
        .storage_codec()
        .encode(&key, json(&record)?)
        .map_err(|e| Error::Encode(serde::ser::Error::custom(e)))?;
    stores
        .store
        .put_with_ttl(&key, Bytes::from(value), LEASE_TTL)
        .await?;
    let mut live = live_leases(stores, Some(own)).await?;
    if !live.contains(&own) {
        live.push(own);
        live.sort();
    }
    Ok(live)
}

fn lease_prefix(stores: &Stores) -> String {
    format!("{}/masterleases/", stores.prefix.trim_end_matches('/'))
}

/// The addresses of the lease records, sorted. On etcd every record is live (etcd removes it
/// when its lease ends). A store without expiry has one server, this one: the records of other
/// addresses (an earlier address of this server) are removed. Records in the form Capstan
/// wrote before (`{"expires": <ms>}`) count until they expire, then go.
async fn live_leases(
    stores: &Stores,
    own: Option<IpAddr>,
) -> capstan_registry::Result<Vec<IpAddr>> {
    #[derive(serde::Deserialize)]
    struct Legacy {
        expires: i64,
    }
    let prefix = lease_prefix(stores);
    let listed = stores
        .store
        .list(ListRequest {
            prefix: &prefix,
            ..Default::default()
        })
        .await?;
    let codec = stores.endpoints.storage_codec();
    let mut live = Vec::new();
    for kv in listed.items {
        let Some(ip) = kv.key.strip_prefix(&prefix).and_then(|ip| ip.parse().ok()) else {
            continue;
        };
        let alive = if let Ok(legacy) = serde_json::from_slice::<Legacy>(&kv.value) {
            legacy.expires > jiff::Timestamp::now().as_millisecond()
        } else if !stores.store.expires_keys() {
            Some(ip) == own
        } else {
            // Upstream's record names its address in the Endpoints; one that does not
            // decode is another writer's and left alone.
            let addressed = codec.decode(&kv.key, &kv.value).ok().and_then(|json| {
                let doc: Value = serde_json::from_slice(&json).ok()?;
                doc["subsets"][0]["addresses"][0]["ip"]
                    .as_str()?
                    .parse::<IpAddr>()
                    .ok()
            });
            if let Some(named) = addressed {
                live.push(named);
            }
            continue;
        };
        if alive {
            live.push(ip);
        } else {
            let _ = stores.store.delete(&kv.key, Some(kv.mod_revision)).await;
        }
    }
    live.sort();
    live.dedup();
    Ok(live)
}

/// The addresses the stored Endpoints list.
async fn stored_addresses(stores: &Stores, ns: &str) -> capstan_registry::Result<Vec<IpAddr>> {
    Ok(
        match stores.endpoints.cached_json(ns, SERVICE_NAME).await? {
            Some(body) => {
                let ep: Value = serde_json::from_slice(&body).map_err(Error::Encode)?;
                ep["subsets"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .flat_map(|s| s["addresses"].as_array().cloned().unwrap_or_default())
                    .filter_map(|a| a["ip"].as_str()?.parse().ok())
                    .collect()
            }
            None => Vec::new(),
        },
    )
}

/// The addresses of the stored Endpoints with this server's added, at most `count`.
async fn master_count(
    stores: &Stores,
    ns: &str,
    own: IpAddr,
    count: u32,
) -> capstan_registry::Result<Vec<IpAddr>> {
    let mut addresses = stored_addresses(stores, ns).await?;
    addresses.retain(|a| *a != own);
    addresses.sort();
    addresses.truncate(count.saturating_sub(1) as usize);
    addresses.push(own);
    addresses.sort();
    Ok(addresses)
}

/// Writes the Endpoints and the EndpointSlice of `addresses`.
async fn write_endpoints(
    config: &Config,
    stores: &Stores,
    addresses: &[IpAddr],
) -> capstan_registry::Result<()> {
    let ns = config.namespace.as_str();
    let ips: Vec<Value> = addresses
        .iter()
        .map(|ip| json!({"ip": ip.to_string()}))
        .collect();
    let endpoints = json!({
        "apiVersion": "v1", "kind": "Endpoints",
        "metadata": {"name": SERVICE_NAME, "namespace": ns,
                     "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
        "subsets": [{"addresses": ips,
                     "ports": [{"name": "https", "port": config.port, "protocol": "TCP"}]}],
    });
    let want = endpoints["subsets"].clone();
    ensure(&*stores.endpoints, ns, SERVICE_NAME, endpoints, |current| {
        current["subsets"] != want
    })
    .await?;
    let family = if addresses.first().is_some_and(IpAddr::is_ipv6) {
        "IPv6"
    } else {
        "IPv4"
    };
    let endpoints: Vec<Value> = addresses
        .iter()
        .map(|ip| json!({"addresses": [ip.to_string()], "conditions": {"ready": true}}))
        .collect();
    let slice = json!({
        "apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": SERVICE_NAME, "namespace": ns,
                     "labels": {"kubernetes.io/service-name": SERVICE_NAME}},
        "addressType": family,
        "endpoints": endpoints,
        "ports": [{"name": "https", "port": config.port, "protocol": "TCP"}],
    });
    let want = slice["endpoints"].clone();
    ensure(&*stores.slices, ns, SERVICE_NAME, slice, |current| {
        current["endpoints"] != want || current["addressType"] != family
    })
    .await
}

/// The running controller; stopping it ([`capstan_control::Stoppable`]) takes this server out
/// of the endpoints.
pub struct Running {
    task: tokio::task::JoinHandle<()>,
    config: Config,
    stores: Stores,
}

impl capstan_control::Stoppable for Running {
    /// Stops reconciling and removes this server from the endpoints (given at most two
    /// intervals, as upstream).
    fn stop(self: Box<Self>) -> futures_util::future::BoxFuture<'static, ()> {
        Box::pin(async move {
            self.task.abort();
            match tokio::time::timeout(2 * INTERVAL, remove(&self.config, &self.stores)).await {
                Ok(Ok(())) => {}
                Ok(Err(err)) => {
                    warn!(%err, "this server could not be removed from the kubernetes endpoints")
                }
                Err(_) => warn!("removing this server from the kubernetes endpoints timed out"),
            }
        })
    }
}

/// Takes this server out of the endpoints: its lease record is deleted (`lease`) or its
/// address dropped (`master-count`); the endpoints are rewritten with the servers left, and
/// kept as they are when none is.
pub async fn remove(config: &Config, stores: &Stores) -> capstan_registry::Result<()> {
    let Some(own) = config.address else {
        return Ok(());
    };
    let ns = config.namespace.as_str();
    let others = match config.reconciler {
        Reconciler::None => return Ok(()),
        Reconciler::Lease => {
            let key = format!("{}/masterleases/{own}", stores.prefix.trim_end_matches('/'));
            match stores.store.delete(&key, None).await {
                Ok(_) | Err(capstan_storage::Error::NotFound { .. }) => {}
                Err(err) => return Err(err.into()),
            }
            live_leases(stores, None)
                .await?
                .into_iter()
                .filter(|a| *a != own)
                .collect()
        }
        Reconciler::MasterCount(_) => {
            let mut addresses = stored_addresses(stores, ns).await?;
            addresses.retain(|a| *a != own);
            addresses
        }
    };
    if others.is_empty() {
        return Ok(());
    }
    write_endpoints(config, stores, &others).await
}

/// Reconciles now and every 10 s; a failure is logged and retried at the next pass.
pub fn start(config: Config, stores: Stores) -> Running {
    let task = {
        let (config, stores) = (config.clone(), stores.clone());
        tokio::spawn(async move {
            let mut warned = false;
            loop {
                match reconcile(&config, &stores).await {
                    Ok(()) => warned = false,
                    Err(err) if !warned => {
                        warn!(%err, "the kubernetes Service or its endpoints could not be reconciled");
                        warned = true;
                    }
                    Err(_) => {}
                }
                tokio::time::sleep(INTERVAL).await;
            }
        })
    };
    Running {
        task,
        config,
        stores,
    }
}
