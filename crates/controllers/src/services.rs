//! Service IP and port allocations: the default ServiceCIDR `kubernetes` is kept from
//! `--service-cluster-ip-range`, and the allocations are repaired from the Services at start
//! and every three minutes (upstream's `start-service-ip-repair-controllers`).

use capstan_registry::Error;
use capstan_registry::services::REPAIR_INTERVAL;
use tracing::{info, warn};

/// The name of the default ServiceCIDR.
pub const DEFAULT_SERVICE_CIDR: &str = "kubernetes";

/// What the repair works with.
pub use capstan_control::ServiceStores as Stores;

/// Creates the default ServiceCIDR (Ready) unless it exists; an existing one with other
/// ranges is left as it is, with a warning, as upstream does when the flags change.
async fn ensure_default_cidr(stores: &Stores) -> capstan_registry::Result<()> {
    let cidrs: Vec<String> = stores
        .allocator
        .network()
        .cidrs
        .iter()
        .map(ToString::to_string)
        .collect();
    let now = capstan_meta::time::now();
    let body = serde_json::json!({
        "apiVersion": "networking.k8s.io/v1",
        "kind": "ServiceCIDR",
        "metadata": {"name": DEFAULT_SERVICE_CIDR},
        "spec": {"cidrs": cidrs},
    });
    // Read first: a restart finds it there.
    capstan_registry::builtin::create_unless_present(
        &*stores.cidrs,
        "",
        DEFAULT_SERVICE_CIDR,
        &body,
    )
    .await?;
    stores
        .cidrs
        .update_with("", DEFAULT_SERVICE_CIDR, false, |cidr| {
            let stored = cidr.spec.as_ref().and_then(|s| s.cidrs.clone()).unwrap_or_default();
            if stored != cidrs {
                warn!(?stored, flags = ?cidrs, "the default ServiceCIDR differs from --service-cluster-ip-range; allocating from the flags");
            }
            let status = cidr.status.get_or_insert_with(Default::default);
            let conditions = status.conditions.get_or_insert_with(Vec::new);
            if !conditions.iter().any(|c| c.type_ == "Ready" && c.status == "True") {
                conditions.retain(|c| c.type_ != "Ready");
                conditions.push(k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition {
                    type_: "Ready".into(),
                    status: "True".into(),
                    reason: String::new(),
                    message: "Kubernetes Service CIDR is ready".into(),
                    last_transition_time: serde_json::from_value(serde_json::json!(now))
                        .map_err(Error::Encode)?,
                    observed_generation: None,
                });
            }
            Ok(())
        })
        .await?;
    Ok(())
}

/// One pass: the default ServiceCIDR, then the repair.
pub async fn repair_once(stores: &Stores) -> capstan_registry::Result<()> {
    ensure_default_cidr(stores).await?;
    let (created, removed) = stores.allocator.repair(&stores.services).await?;
    if created + removed > 0 {
        info!(created, removed, "service allocations repaired");
    }
    Ok(())
}

/// Runs [`repair_once`] until it succeeds (then calls `started`), and again every three
/// minutes.
pub fn start(
    stores: Stores,
    started: impl FnOnce() + Send + 'static,
) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        let mut backoff = std::time::Duration::from_millis(100);
        while let Err(err) = repair_once(&stores).await {
            warn!(%err, "service allocation repair failed; retrying");
            tokio::time::sleep(backoff).await;
            backoff = (backoff * 2).min(std::time::Duration::from_secs(5));
        }
        started();
        loop {
            tokio::time::sleep(REPAIR_INTERVAL).await;
            if let Err(err) = repair_once(&stores).await {
                warn!(%err, "service allocation repair failed");
            }
        }
    })
}
