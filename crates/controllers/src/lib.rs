//! Controllers that run inside the API server process, working from the watch cache through
//! the same [`RestStorage`](capstan_registry::RestStorage) calls the HTTP handlers make:
//!
//! - **namespaces**: a deleted namespace's content is deleted, resource by resource; when
//!   nothing is left, the `kubernetes` finalizer is removed and the namespace goes away. New
//!   namespaces get a `default` ServiceAccount and, given the cluster's CA, the
//!   `kube-root-ca.crt` ConfigMap the pods' `kube-api-access-*` volumes read (upstream's
//!   service account and root CA publisher controllers, in kube-controller-manager).
//! - **resource quotas**: each quota's usage is recounted from what its namespace holds
//!   (upstream's resource quota controller, in kube-controller-manager).
//! - **events**: core events expire `--event-ttl` after their last activity.
//! - **rbac**: the RBAC authorizer's index follows the roles and bindings; aggregated
//!   ClusterRoles get the rules of the roles their selectors match (upstream runs that one in
//!   kube-controller-manager).
//! - **node taints**: each node's `NoSchedule` taints follow its conditions and
//!   `spec.unschedulable` (upstream's node lifecycle controller, in kube-controller-manager),
//!   so that the `not-ready` taint `TaintNodesByCondition` puts on new nodes goes once they
//!   are ready.
//! - **storage protection**: the `kubernetes.io/pvc-protection` and `pv-protection`
//!   finalizers go once a deleted claim has no running pod using it, and once a deleted volume
//!   is no longer bound (upstream's controllers of those names).
//! - **the `kubernetes` Service** and its Endpoints and EndpointSlice, by
//!   `--endpoint-reconciler-type` (upstream's kubernetes service controller).
//! - **service allocations**: the default ServiceCIDR is kept, and Service cluster IPs and
//!   node ports are repaired from the Services (upstream's repair controllers).
//! - **custom resource definitions**: names accepted, resources served, `Established`;
//!   deleted CRDs' objects deleted before the CRD goes (upstream's apiextensions controllers).
//! - **garbage collector** (`--enable-garbage-collector`): dependents whose owners are gone
//!   are deleted; `Orphan` and `Foreground` deletions are carried out.

pub mod api_services;
mod control_loops;
pub mod crds;
mod events;
pub mod flowcontrol;
mod gc;
pub mod kubernetes_service;
mod namespaces;
pub mod node_graph;
mod node_taints;
pub mod protection;
mod quota;
pub mod rbac;
pub mod services;
mod watching;
pub mod webhooks;

use std::sync::Arc;

use capstan_registry::Registry;
use capstan_registry::builtin::Builtin;
use tokio::task::JoinHandle;

pub use events::expire_events;
pub use namespaces::finalize_namespace;

pub use capstan_control::ControllerConfig;
pub use control_loops::InProcess;

/// Starts every controller that needs nothing but the stores; they run on the tasks
/// returned.
pub fn start(
    registry: Arc<Registry>,
    builtin: &Builtin,
    config: ControllerConfig,
) -> Vec<JoinHandle<()>> {
    let mut tasks = vec![
        tokio::spawn(namespaces::run(
            registry.clone(),
            config.custom.clone(),
            builtin.namespaces.clone(),
            builtin.service_accounts.clone(),
            config
                .root_ca
                .clone()
                .map(|ca| (builtin.config_maps.clone(), ca)),
        )),
        tokio::spawn(events::run(builtin.events.clone(), config.event_ttl)),
        tokio::spawn(rbac::aggregate(builtin.rbac.cluster_roles.clone())),
        tokio::spawn(node_taints::run(builtin.nodes.clone())),
        tokio::spawn(protection::run(
            builtin.pods.clone(),
            builtin.claims.clone(),
            builtin.volumes.clone(),
        )),
    ];
    if let Some(namespaces) = config.quota_namespaces {
        tasks.push(tokio::spawn(quota::run(
            registry.clone(),
            config.custom.clone(),
            namespaces,
            config.quota_charges.clone(),
        )));
    }
    if let Some(namespaces) = config.limit_range_namespaces {
        let ranges = registry
            .resources()
            .find(|r| {
                r.descriptor().resource == "limitranges" && r.descriptor().subresource.is_empty()
            })
            .cloned();
        match ranges {
            Some(ranges) => tasks.push(tokio::spawn(quota::follow_namespaces(ranges, namespaces))),
            // No LimitRanges are served: none can hold a namespace.
            None => namespaces.set_listed(),
        }
    }
    if config.garbage_collector {
        tasks.push(tokio::spawn(gc::run(
            registry.clone(),
            config.custom.clone(),
        )));
    }
    tasks
}
