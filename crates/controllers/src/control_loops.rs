//! The controllers as the server starts them ([`ControlLoops`]).

use std::sync::Arc;

use capstan_admission_webhook::{MutatingPolicyIndex, PolicyIndex, WebhookIndex};
use capstan_apiextensions::{CustomResourceDefinitionStrategy, CustomResources};
use capstan_auth::authz::node::NodeGraph;
use capstan_auth::authz::rbac::RbacIndex;
use capstan_control::{
    ControlLoops, ControllerConfig, FlowControlStores, KubernetesService, KubernetesServiceStores,
    NodeGraphStores, Probe, ServiceStores, Stoppable,
};
use capstan_flowcontrol::FlowControl;
use capstan_registry::builtin::{Builtin, Rbac};
use capstan_registry::{Error, GenericStore, Registry, RestStorage};
use futures_util::future::BoxFuture;
use tokio::sync::Notify;
use tokio::task::JoinHandle;

/// Capstan's own control loops, run in the API server's process: what `capstan-apiserver`
/// hands the server.
#[derive(Debug, Default, Clone, Copy)]
pub struct InProcess;

impl ControlLoops for InProcess {
    fn serve_custom_resources(
        &self,
        crds: Arc<GenericStore<CustomResourceDefinitionStrategy>>,
        served: Arc<CustomResources>,
    ) -> JoinHandle<()> {
        tokio::spawn(crate::crds::run(crds, served))
    }

    fn follow_webhooks(
        &self,
        mutating: Arc<dyn RestStorage>,
        validating: Arc<dyn RestStorage>,
        index: Arc<WebhookIndex>,
    ) -> Vec<JoinHandle<()>> {
        crate::webhooks::start(mutating, validating, index)
    }

    fn follow_validating_policies(
        &self,
        policies: Arc<dyn RestStorage>,
        bindings: Arc<dyn RestStorage>,
        index: Arc<PolicyIndex>,
    ) -> Vec<JoinHandle<()>> {
        crate::webhooks::start_policies(policies, bindings, index)
    }

    fn follow_mutating_policies(
        &self,
        policies: Arc<dyn RestStorage>,
        bindings: Arc<dyn RestStorage>,
        index: Arc<MutatingPolicyIndex>,
    ) -> Vec<JoinHandle<()>> {
        crate::webhooks::start_policies(policies, bindings, index)
    }

    fn follow_node_graph(
        &self,
        stores: NodeGraphStores,
        graph: Arc<NodeGraph>,
    ) -> Vec<JoinHandle<()>> {
        crate::node_graph::start(stores, graph)
    }

    fn ensure_flow_control<'a>(
        &'a self,
        stores: &'a FlowControlStores,
    ) -> BoxFuture<'a, Result<(), Error>> {
        Box::pin(crate::flowcontrol::ensure_configuration(stores))
    }

    fn follow_flow_control(
        &self,
        stores: FlowControlStores,
        control: Arc<FlowControl>,
        loaded: Arc<Notify>,
    ) -> Vec<JoinHandle<()>> {
        crate::flowcontrol::start(stores, control, loaded)
    }

    fn repair_services(
        &self,
        stores: ServiceStores,
        repaired: Box<dyn FnOnce() + Send>,
    ) -> JoinHandle<()> {
        crate::services::start(stores, repaired)
    }

    fn keep_kubernetes_service(
        &self,
        config: KubernetesService,
        stores: KubernetesServiceStores,
    ) -> Box<dyn Stoppable> {
        Box::new(crate::kubernetes_service::start(config, stores))
    }

    fn start_controllers(
        &self,
        registry: Arc<Registry>,
        builtin: &Builtin,
        config: ControllerConfig,
    ) -> Vec<JoinHandle<()>> {
        crate::start(registry, builtin, config)
    }

    fn sync_local_api_services<'a>(
        &'a self,
        store: &'a dyn RestStorage,
        wanted: &'a [(String, String, bool)],
    ) -> BoxFuture<'a, Result<(), Error>> {
        Box::pin(crate::api_services::sync_local(store, wanted))
    }

    fn keep_api_services_available(
        &self,
        api_services: Arc<dyn RestStorage>,
        status: Arc<dyn RestStorage>,
        probe: Arc<dyn Probe>,
    ) -> JoinHandle<()> {
        tokio::spawn(crate::api_services::keep_available(
            api_services,
            status,
            probe,
        ))
    }

    fn follow_rbac(&self, stores: &Rbac, index: Arc<RbacIndex>) -> Vec<JoinHandle<()>> {
        crate::rbac::start(stores, index)
    }
}
