//! Where webhooks named by a `service` reference (admission and CRD conversion webhooks) are
//! reached, as upstream's API server resolves them: at the Service's cluster IP and port, or
//! with `--enable-aggregator-routing` at one of its endpoints' addresses and target port; an
//! `ExternalName` Service at its host name. The connection still names the Service
//! (`<name>.<namespace>.svc`) for TLS.

use std::sync::Arc;

use capstan_admission::Lister;
use capstan_client::ServiceResolver;
use capstan_meta::GroupResource;
use futures_util::future::BoxFuture;
use serde_json::Value;

/// Resolves Services from the server's own objects.
pub(crate) struct WebhookServices {
    lister: Arc<dyn Lister>,
    /// `--enable-aggregator-routing`: endpoints' addresses rather than the cluster IP.
    endpoints: bool,
}

impl WebhookServices {
    /// Resolves through `lister`, to endpoints when `endpoints`.
    pub(crate) fn new(lister: Arc<dyn Lister>, endpoints: bool) -> Self {
        Self { lister, endpoints }
    }

    async fn read(&self, resource: &str, namespace: &str, name: &str) -> Result<Value, String> {
        self.lister
            .get(&GroupResource::new("", resource), namespace, name)
            .await
            .map_err(|e| e.to_string())?
            .ok_or_else(|| format!("{} {name:?} not found", resource.trim_end_matches('s')))
    }

    async fn resolve_port(
        &self,
        namespace: &str,
        name: &str,
        port: u16,
    ) -> Result<(String, u16), String> {
        let svc = self.read("services", namespace, name).await?;
        let kind = svc["spec"]["type"].as_str().unwrap_or("ClusterIP");
        if kind == "ExternalName" && !self.endpoints {
            let host = svc["spec"]["externalName"].as_str().unwrap_or_default();
            return Ok((host.to_string(), port));
        }
        if !matches!(kind, "ClusterIP" | "NodePort" | "LoadBalancer") {
            return Err(format!("unsupported service type {kind:?}"));
        }
        let declared = service_port(&svc, u64::from(port))
            .ok_or_else(|| format!("no service port {port} found for service {name:?}"))?;
        if !self.endpoints {
            let ip = svc["spec"]["clusterIP"].as_str().unwrap_or_default();
            if ip == "None" {
                return Err("cannot route to service with ClusterIP \"None\"".into());
            }
            return Ok((ip.to_string(), port));
        }
        let port_name = declared["name"].as_str().unwrap_or_default();
        let endpoints = self.read("endpoints", namespace, name).await?;
        let subsets = endpoints["subsets"]
            .as_array()
            .map_or(&[][..], Vec::as_slice);
        let start = rand::random_range(0..subsets.len().max(1));
        for subset in subsets.iter().cycle().skip(start).take(subsets.len()) {
            let addresses = subset["addresses"]
                .as_array()
                .map_or(&[][..], Vec::as_slice);
            if addresses.is_empty() {
                continue;
            }
            let target = subset["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .find(|p| p["name"].as_str().unwrap_or_default() == port_name)
                .and_then(|p| p["port"].as_u64())
                .and_then(|p| u16::try_from(p).ok());
            if let Some(target) = target {
                let address = &addresses[rand::random_range(0..addresses.len())];
                let ip = address["ip"].as_str().unwrap_or_default();
                return Ok((ip.to_string(), target));
            }
        }
        Err(format!("no endpoints available for service {name:?}"))
    }
}

/// The port of the Service `svc` whose number is `number`, as clients name it.
pub(crate) fn service_port(svc: &Value, number: u64) -> Option<&Value> {
    svc["spec"]["ports"]
        .as_array()?
        .iter()
        .find(|p| p["port"].as_u64() == Some(number))
}

impl ServiceResolver for WebhookServices {
    fn resolve<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
        port: u16,
    ) -> BoxFuture<'a, Result<(String, u16), String>> {
        Box::pin(self.resolve_port(namespace, name, port))
    }
}

#[cfg(test)]
mod tests {
    use capstan_admission::MemoryLister;
    use serde_json::json;

    use super::*;

    fn services() -> Arc<dyn Lister> {
        let service = json!({"metadata": {"name": "api"},
            "spec": {"type": "ClusterIP", "clusterIP": "10.0.0.7",
            "ports": [{"name": "https", "port": 443, "targetPort": 8443},
                {"name": "metrics", "port": 9090}]}});
        let endpoints = json!({"metadata": {"name": "api"}, "subsets": [
            {"notReadyAddresses": [{"ip": "10.1.0.9"}], "ports": [{"name": "https", "port": 8443}]},
            {"addresses": [{"ip": "10.1.0.5"}],
                "ports": [{"name": "metrics", "port": 9100}, {"name": "https", "port": 8443}]}]});
        let external = json!({"metadata": {"name": "ext"},
            "spec": {"type": "ExternalName", "externalName": "api.example"}});
        let services = GroupResource::new("", "services");
        Arc::new(
            MemoryLister::new()
                .with(services.clone(), "ns", service)
                .with(GroupResource::new("", "endpoints"), "ns", endpoints)
                .with(services, "ns", external),
        )
    }

    #[tokio::test]
    async fn cluster_ip_without_routing_an_endpoint_with_it() {
        let by_cluster_ip = WebhookServices::new(services(), false);
        assert_eq!(
            by_cluster_ip.resolve("ns", "api", 443).await,
            Ok(("10.0.0.7".to_string(), 443))
        );
        assert_eq!(
            by_cluster_ip.resolve("ns", "ext", 443).await,
            Ok(("api.example".to_string(), 443))
        );
        let routed = WebhookServices::new(services(), true);
        // The ready address of the subset serving the port's name, at its target port.
        assert_eq!(
            routed.resolve("ns", "api", 443).await,
            Ok(("10.1.0.5".to_string(), 8443))
        );
        assert_eq!(
            routed.resolve("ns", "api", 9090).await,
            Ok(("10.1.0.5".to_string(), 9100))
        );
        assert!(routed.resolve("ns", "api", 80).await.is_err());
        assert!(routed.resolve("ns", "ext", 443).await.is_err());
        assert!(routed.resolve("ns", "missing", 443).await.is_err());
    }
}
