//! The seam between the API server and the control loops that run in its process.
//!
//! The server starts each loop at its place in its start-up order (the admission indexes'
//! followers before it admits anything, API Priority and Fairness's configuration before it
//! is ready, the RBAC index before it serves, ...) through [`ControlLoops`], and hands it the
//! stores and indexes it works with. `capstan-controllers` implements the trait; the binary
//! (or an embedding tool) chooses the implementation. The server names only this crate, so
//! that it and the controllers compile side by side.

use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use capstan_admission::plugins::{ChargesInFlight, NamespaceSet};
use capstan_admission_webhook::{MutatingPolicyIndex, PolicyIndex, WebhookIndex};
use capstan_api::{EndpointSliceStrategy, EndpointsStrategy, ServiceCidrStrategy, ServiceStrategy};
use capstan_apiextensions::{CustomResourceDefinitionStrategy, CustomResources};
use capstan_auth::authz::node::NodeGraph;
use capstan_auth::authz::rbac::RbacIndex;
use capstan_flowcontrol::FlowControl;
use capstan_registry::builtin::{Builtin, Rbac};
use capstan_registry::services::ServiceAllocator;
use capstan_registry::{Error, GenericStore, Registry, RestStorage};
use capstan_storage::Store;
use futures_util::future::BoxFuture;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::APIService;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// The control loops an API server runs in its process, each started by the server when its
/// start-up reaches it. Every method returns at once: the loops run on the tasks it returns
/// (aborted when the server stops). `Debug`, so that the server's configuration prints.
pub trait ControlLoops: Send + Sync + std::fmt::Debug {
    /// Serves the custom resources the CRDs in `crds` define, through `served`, and carries out
    /// their deletion.
    fn serve_custom_resources(
        &self,
        crds: Arc<GenericStore<CustomResourceDefinitionStrategy>>,
        served: Arc<CustomResources>,
    ) -> JoinHandle<()>;

    /// Follows the Mutating- and ValidatingWebhookConfigurations into `index`.
    fn follow_webhooks(
        &self,
        mutating: Arc<dyn RestStorage>,
        validating: Arc<dyn RestStorage>,
        index: Arc<WebhookIndex>,
    ) -> Vec<JoinHandle<()>>;

    /// Follows the ValidatingAdmissionPolicies and their bindings into `index`.
    fn follow_validating_policies(
        &self,
        policies: Arc<dyn RestStorage>,
        bindings: Arc<dyn RestStorage>,
        index: Arc<PolicyIndex>,
    ) -> Vec<JoinHandle<()>>;

    /// Follows the MutatingAdmissionPolicies and their bindings into `index`.
    fn follow_mutating_policies(
        &self,
        policies: Arc<dyn RestStorage>,
        bindings: Arc<dyn RestStorage>,
        index: Arc<MutatingPolicyIndex>,
    ) -> Vec<JoinHandle<()>>;

    /// Follows what the Node authorizer reasons about into `graph`.
    fn follow_node_graph(
        &self,
        stores: NodeGraphStores,
        graph: Arc<NodeGraph>,
    ) -> Vec<JoinHandle<()>>;

    /// Creates API Priority and Fairness's mandatory and suggested configuration where it is
    /// missing (once; the server retries a failure).
    fn ensure_flow_control<'a>(
        &'a self,
        stores: &'a FlowControlStores,
    ) -> BoxFuture<'a, Result<(), Error>>;

    /// Follows API Priority and Fairness's configuration into `control`, notifying `loaded`
    /// once it has been listed.
    fn follow_flow_control(
        &self,
        stores: FlowControlStores,
        control: Arc<FlowControl>,
        loaded: Arc<Notify>,
    ) -> Vec<JoinHandle<()>>;

    /// Keeps the default ServiceCIDR and repairs the Services' allocations, calling `repaired`
    /// after the first repair that succeeds.
    fn repair_services(
        &self,
        stores: ServiceStores,
        repaired: Box<dyn FnOnce() + Send>,
    ) -> JoinHandle<()>;

    /// Keeps the `kubernetes` Service and its endpoints.
    fn keep_kubernetes_service(
        &self,
        config: KubernetesService,
        stores: KubernetesServiceStores,
    ) -> Box<dyn Stoppable>;

    /// Starts the controllers that need nothing from the start-up but the stores (namespaces,
    /// quotas, events, garbage collection, ...).
    fn start_controllers(
        &self,
        registry: Arc<Registry>,
        builtin: &Builtin,
        config: ControllerConfig,
    ) -> Vec<JoinHandle<()>>;

    /// Makes the automanaged (`Local`) APIServices in `store` exactly `wanted` (group, version,
    /// whether a custom resource's).
    fn sync_local_api_services<'a>(
        &'a self,
        store: &'a dyn RestStorage,
        wanted: &'a [(String, String, bool)],
    ) -> BoxFuture<'a, Result<(), Error>>;

    /// Keeps every APIService's `Available` condition, asking `probe` about service-backed
    /// ones and telling it of every APIService.
    fn keep_api_services_available(
        &self,
        api_services: Arc<dyn RestStorage>,
        status: Arc<dyn RestStorage>,
        probe: Arc<dyn Probe>,
    ) -> JoinHandle<()>;

    /// Follows the roles and bindings into the RBAC authorizer's `index`.
    fn follow_rbac(&self, stores: &Rbac, index: Arc<RbacIndex>) -> Vec<JoinHandle<()>>;
}

/// A loop with something to do when the server stops.
pub trait Stoppable: Send + Sync {
    /// Stops the loop and does its last work.
    fn stop(self: Box<Self>) -> BoxFuture<'static, ()>;
}

/// What the Node authorizer's graph is made of; a missing store (its resource not served)
/// leaves its part empty.
#[derive(Clone)]
pub struct NodeGraphStores {
    /// Pods.
    pub pods: Arc<dyn RestStorage>,
    /// PersistentVolumeClaims.
    pub claims: Option<Arc<dyn RestStorage>>,
    /// PersistentVolumes.
    pub volumes: Option<Arc<dyn RestStorage>>,
    /// VolumeAttachments.
    pub attachments: Option<Arc<dyn RestStorage>>,
    /// ResourceSlices.
    pub slices: Option<Arc<dyn RestStorage>>,
}

/// The stores API Priority and Fairness's configuration lives in.
#[derive(Clone)]
pub struct FlowControlStores {
    /// `flowschemas`.
    pub schemas: Arc<dyn RestStorage>,
    /// `flowschemas/status`.
    pub schema_status: Arc<dyn RestStorage>,
    /// `prioritylevelconfigurations`.
    pub levels: Arc<dyn RestStorage>,
}

/// What the Services' allocation repair works with.
#[derive(Clone)]
pub struct ServiceStores {
    /// Services.
    pub services: Arc<GenericStore<ServiceStrategy>>,
    /// ServiceCIDRs.
    pub cidrs: Arc<GenericStore<ServiceCidrStrategy>>,
    /// The allocator whose records are repaired.
    pub allocator: Arc<ServiceAllocator>,
}

/// How the `kubernetes` Service's endpoints are kept (`--endpoint-reconciler-type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Reconciler {
    /// Expiring records per server.
    #[default]
    Lease,
    /// Up to `--apiserver-count` addresses.
    MasterCount(u32),
    /// Not at all.
    None,
}

/// What the `kubernetes` Service's controller is told.
#[derive(Debug, Clone)]
pub struct KubernetesService {
    /// `--master-service-namespace`.
    pub namespace: String,
    /// `--kubernetes-service-node-port` (0: a ClusterIP Service).
    pub node_port: u16,
    /// `--endpoint-reconciler-type` (and `--apiserver-count`).
    pub reconciler: Reconciler,
    /// The address other servers and pods reach this one at; none: no endpoints.
    pub address: Option<IpAddr>,
    /// The secure port.
    pub port: u16,
    /// The Service's cluster IP: the primary range's first address.
    pub cluster_ip: Option<IpAddr>,
}

/// The address a server bound to `bind` is reached at when none is advertised: the bound
/// address, or for a wildcard or loopback bind the address of the interface of the default
/// route (no packet is sent), as upstream picks it (a loopback address is no endpoint pods
/// can reach, and Endpoints refuse it).
pub fn default_address(bind: IpAddr) -> Option<IpAddr> {
    if !bind.is_unspecified() && !bind.is_loopback() {
        return Some(bind);
    }
    let probe = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    probe.connect("192.0.2.1:9").ok()?;
    Some(probe.local_addr().ok()?.ip()).filter(|ip| !ip.is_unspecified())
}

/// The stores the `kubernetes` Service's controller writes.
#[derive(Clone)]
pub struct KubernetesServiceStores {
    /// Namespaces (`--master-service-namespace` is created when missing).
    pub namespaces: Arc<dyn RestStorage>,
    /// Services.
    pub services: Arc<GenericStore<ServiceStrategy>>,
    /// Endpoints.
    pub endpoints: Arc<GenericStore<EndpointsStrategy>>,
    /// EndpointSlices.
    pub slices: Arc<GenericStore<EndpointSliceStrategy>>,
    /// Where the lease records are.
    pub store: Arc<dyn Store>,
    /// The registry's key prefix.
    pub prefix: String,
}

/// Settings of the controllers [`ControlLoops::start_controllers`] starts.
#[derive(Debug, Clone)]
pub struct ControllerConfig {
    /// How long an event lives after its last activity (`--event-ttl`).
    pub event_ttl: Duration,
    /// Whether the garbage collector runs (`--enable-garbage-collector`).
    pub garbage_collector: bool,
    /// The CA (PEM) published in every namespace as `kube-root-ca.crt`; none publishes
    /// nothing.
    pub root_ca: Option<String>,
    /// Where the quota controller says which namespaces hold quotas (the ResourceQuota
    /// admission plugin reads it); none runs no quota controller.
    pub quota_namespaces: Option<Arc<NamespaceSet>>,
    /// The ResourceQuota plugin's charges in flight (a recount adds those not stored yet).
    pub quota_charges: Arc<ChargesInFlight>,
    /// Kept to the namespaces that hold LimitRanges (the LimitRanger plugin reads it).
    pub limit_range_namespaces: Option<Arc<NamespaceSet>>,
    /// The custom resources served (a deleted namespace's custom objects go with it).
    pub custom: Option<Arc<CustomResources>>,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        Self {
            event_ttl: Duration::from_secs(3600),
            garbage_collector: true,
            root_ca: None,
            quota_namespaces: None,
            quota_charges: Default::default(),
            limit_range_namespaces: None,
            custom: None,
        }
    }
}

/// An APIService's availability, as its `Available` condition says it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Availability {
    /// Whether the group version can be served.
    pub available: bool,
    /// The condition's reason (`Local`, `Passed`, `ServiceNotFound`, `MissingEndpoints`,
    /// `FailedDiscoveryCheck`, ...).
    pub reason: String,
    /// The condition's message.
    pub message: String,
}

impl Availability {
    /// Available, for `reason`, saying `message`.
    pub fn available(reason: &str, message: impl Into<String>) -> Self {
        Self {
            available: true,
            reason: reason.into(),
            message: message.into(),
        }
    }

    /// Unavailable, for `reason`, saying `message`.
    pub fn unavailable(reason: &str, message: impl Into<String>) -> Self {
        Self {
            available: false,
            reason: reason.into(),
            message: message.into(),
        }
    }
}

/// The aggregator, as the availability controller sees it: told of every APIService, asked
/// whether a service-backed one's backend can serve it.
pub trait Probe: Send + Sync {
    /// The availability of `api_service`, which names a service.
    fn check<'a>(&'a self, api_service: &'a APIService) -> BoxFuture<'a, Availability>;
    /// `api_service` as stored now (added or changed, its status included).
    fn seen(&self, api_service: &APIService);
    /// The APIService `name` was deleted.
    fn gone(&self, name: &str);
}
