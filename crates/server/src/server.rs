//! Assembling the server from its configuration, the accept loop, and graceful shutdown.

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use capstan_auth::UserInfo;
use capstan_auth::authn::serviceaccount::{ObjectLookup, ServiceAccountTokens};
use capstan_auth::authn::{AuthenticatorChain, PeerCertificates, StaticTokens};
use capstan_auth::authz::abac::Abac;
use capstan_auth::authz::rbac::RbacIndex;
use capstan_auth::authz::{AuthorizerChain, ModeParts};
use capstan_auth_remote::AuthorizationWebhook;
use capstan_control::{
    ControllerConfig, FlowControlStores, KubernetesService, KubernetesServiceStores,
    NodeGraphStores, ServiceStores, Stoppable,
};
use capstan_registry::authentication::{SelfSubjectReviewRest, TokenRequestRest, TokenReviewRest};
use capstan_registry::authorization::{
    LocalSubjectAccessReviewRest, SelfSubjectAccessReviewRest, SelfSubjectRulesReviewRest,
    SubjectAccessReviewRest,
};
use capstan_registry::builtin::{
    BuiltinConfig, InitialObjects, ensure_initial_objects, register_builtin,
};
use capstan_registry::rbac::Escalation;
use capstan_registry::resource_claims::ClaimStatusAuthorization;
use capstan_registry::{Registry, RegistryConfig};
use capstan_storage::{EmbeddedStore, EmbeddedStoreConfig, Store, WriteNotice, spawn_compactor};
use futures_util::future::BoxFuture;
use hyper_util::rt::TokioIo;

use rand::Rng;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;
use tracing::{debug, info, warn};

use crate::authn;
use crate::config::ServerConfig;
use crate::discovery::Discovery;
use crate::error::{Error, Result};
use crate::filters::{self, ApiService};
use crate::handler::{self, State};
use crate::health::PostStartHook;
use crate::kubeconfig;

/// How long in-flight requests may take to finish after shutdown begins.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

/// A server that is accepting connections.
pub struct RunningServer {
    local_addr: SocketAddr,
    ca_pem: String,
    admin_token: Option<String>,
    shutdown: watch::Sender<bool>,
    accept_loop: JoinHandle<()>,
    background: Vec<JoinHandle<()>>,
    /// Set when shutdown begins: `/readyz` fails from then on.
    terminating: Arc<std::sync::atomic::AtomicBool>,
    /// Audit, flushed at shutdown.
    auditor: Option<Arc<filters::Auditor>>,
    /// The kubernetes Service's controller, which takes this server out of the endpoints
    /// at shutdown.
    kubernetes_service: Option<Box<dyn Stoppable>>,
    /// The control loops' tasks, aborted when the server goes.
    _controllers: AbortOnDrop,
}

/// Tasks aborted when this is dropped.
struct AbortOnDrop(Vec<JoinHandle<()>>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        for task in &self.0 {
            task.abort();
        }
    }
}

impl RunningServer {
    /// The address the server listens on (the real port when configured with 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// An `https://` URL clients on this machine can use.
    pub fn url(&self) -> String {
        let ip = match self.local_addr.ip() {
            ip if ip.is_unspecified() && ip.is_ipv4() => IpAddr::from([127, 0, 0, 1]),
            ip if ip.is_unspecified() => IpAddr::from(std::net::Ipv6Addr::LOCALHOST),
            ip => ip,
        };
        match ip {
            IpAddr::V4(v4) => format!("https://{v4}:{}", self.local_addr.port()),
            IpAddr::V6(v6) => format!("https://[{v6}]:{}", self.local_addr.port()),
        }
    }

    /// The certificate clients should trust (PEM).
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// The generated admin token (group `system:masters`), when one was asked for.
    pub fn admin_token(&self) -> Option<&str> {
        self.admin_token.as_deref()
    }

    /// A kubeconfig for the admin user (requires an admin token).
    pub fn admin_kubeconfig(&self) -> Option<String> {
        self.admin_token
            .as_deref()
            .map(|t| kubeconfig::render(&self.url(), &self.ca_pem, t))
    }

    /// Marks the server as shutting down: `/readyz` fails at once, everything else serves.
    pub fn begin_shutdown(&self) {
        self.terminating
            .store(true, std::sync::atomic::Ordering::SeqCst);
    }

    /// Stops accepting, lets in-flight requests finish, and closes the store.
    pub async fn shutdown(mut self) {
        // First out of the kubernetes endpoints, while the store is still at hand.
        if let Some(controller) = self.kubernetes_service.take() {
            controller.stop().await;
        }
        let _ = self.shutdown.send(true);
        for task in &self.background {
            task.abort();
        }
        let _ = self.accept_loop.await;
        // After the last request: what the batch buffers hold is written out.
        if let Some(auditor) = &self.auditor {
            auditor.sink().shutdown().await;
        }
    }
}

fn random_token() -> String {
    use base64::Engine;
    let bytes: [u8; 32] = rand::rng().random();
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Begins, on a thread of its own, the work every start needs that no option changes: the
/// protobuf schemas, which every store and the watch caches' first loads need and which take
/// milliseconds to build. A binary calls it first thing, so that the build runs on the other
/// core while the options are read and the runtime starts; [`start`] calls it too.
pub fn prepare() {
    capstan_negotiation::schema::Schema::build_upstream_in_background();
}

/// Opens the store, builds the registry and the filter chain, binds the port and starts
/// serving in the background.
///
/// The future is boxed here so that the server's whole start-up (every store, controller and
/// connection task it spawns) is compiled once, in this crate: an `async fn` body is compiled
/// in the crate that first polls it, which was every binary and test that starts a server.
pub fn start(config: ServerConfig) -> BoxFuture<'static, Result<RunningServer>> {
    Box::pin(start_server(config))
}

async fn start_server(config: ServerConfig) -> Result<RunningServer> {
    step("options read, runtime started");
    // Options read before anything starts: a bad one fails the start at once.
    let admission_plan = config.admission.resolve()?;
    // Unless `prepare` began it already.
    prepare();

    let store: Arc<dyn Store> = match &config.etcd {
        Some(etcd) => Arc::new(
            capstan_etcd::EtcdStore::connect(etcd)
                .await
                .map_err(|e| Error::Startup(e.to_string()))?,
        ),
        None => {
            let mut store_config = EmbeddedStoreConfig::new(config.data_dir.join("capstan.redb"));
            store_config.commit_delay = config.storage_commit_delay;
            let store = tokio::task::spawn_blocking(move || EmbeddedStore::open(store_config))
                .await
                .map_err(|e| Error::Startup(format!("opening the store panicked: {e}")))??;
            Arc::new(store)
        }
    };
    let store_for_health = store.clone();
    step("store opened");
    let terminating = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let compactor = (!config.compaction_interval.is_zero())
        .then(|| spawn_compactor(store.clone(), config.compaction_interval));

    // Write requests are announced to the store as they arrive (see `announce_write`).
    let writes = store.clone();
    let mut registry = Registry::new(
        store,
        RegistryConfig {
            prefix: config.storage_prefix.clone(),
            watch_cache: config.watch_cache,
            default_watch_cache_size: config.default_watch_cache_size,
            watch_cache_fresh: config.watch_cache_fresh,
            watch_cache_sizes: config.watch_cache_sizes.clone(),
            delete_collection_workers: config.delete_collection_workers,
            storage_media_type: config.storage_media_type,
            encryption: config.encryption.clone(),
            allow_privileged: config.allow_privileged,
            runtime_config: config.runtime_config.clone(),
        },
    );
    let rbac_index = Arc::new(RbacIndex::new());
    let node_graph = Arc::new(capstan_auth::authz::node::NodeGraph::new());
    let parts = ModeParts {
        rbac: rbac_index.clone(),
        node: node_graph.clone(),
        abac: match &config.authorization_policy_file {
            Some(path) => Some(Arc::new(Abac::load(path)?)),
            None => None,
        },
        webhook: match &config.authorization_webhook {
            Some(webhook) => Some(Arc::new(AuthorizationWebhook::new(webhook.clone())?)),
            None => None,
        },
    };
    let authz = Arc::new(AuthorizerChain::from_modes(
        &config.authorization_modes,
        &parts,
    )?);
    let services: Arc<dyn capstan_client::ServiceResolver> = Arc::new(
        crate::webhook_services::WebhookServices::new(registry.lister(), config.aggregator_routing),
    );
    let aggregator_services = services.clone();
    let webhook_index = Arc::new(capstan_admission_webhook::WebhookIndex::with_services(
        services.clone(),
    ));
    let mut webhooks: Vec<Arc<dyn capstan_admission::Plugin>> = vec![
        Arc::new(capstan_admission_webhook::MutatingWebhooks::new(
            webhook_index.clone(),
            registry.lister(),
        )),
        Arc::new(capstan_admission_webhook::ValidatingWebhooks::new(
            webhook_index.clone(),
            registry.lister(),
        )),
    ];
    let uses_webhooks = webhooks
        .iter()
        .any(|w| admission_plan.enabled.contains(&w.name()));
    let policy_index = Arc::new(capstan_admission_webhook::PolicyIndex::new());
    let uses_policies = admission_plan
        .enabled
        .contains(&"ValidatingAdmissionPolicy");
    let mutating_policy_index = Arc::new(capstan_admission_webhook::MutatingPolicyIndex::new());
    let uses_mutating_policies = admission_plan.enabled.contains(&"MutatingAdmissionPolicy");
    webhooks.push(Arc::new(
        capstan_admission_webhook::MutatingAdmissionPolicies::new(
            mutating_policy_index.clone(),
            registry.lister(),
        ),
    ));
    webhooks.push(Arc::new(
        capstan_admission_webhook::ValidatingAdmissionPolicies::new(
            policy_index.clone(),
            registry.lister(),
        ),
    ));
    if admission_plan.enabled.contains(&"ImagePolicyWebhook") {
        let Some(settings) = admission_plan.configurations.get("ImagePolicyWebhook") else {
            return Err(Error::Startup(
                "admission plugin ImagePolicyWebhook: a configuration (imagePolicy) is required in --admission-control-config-file".into(),
            ));
        };
        // Relative paths are read from the configuration file's directory.
        let base = config
            .admission
            .config_file
            .as_deref()
            .and_then(std::path::Path::parent)
            .unwrap_or(std::path::Path::new("."));
        let plugin = capstan_admission_webhook::ImagePolicyWebhook::new(settings, base)
            .map_err(Error::Startup)?;
        webhooks.push(Arc::new(plugin));
    }
    // The namespaces holding quotas and limit ranges: complete once their followers (started
    // with the controllers) have listed them, which the plugins wait for.
    let namespace_set = |plugin: &str| {
        Arc::new(if admission_plan.enabled.contains(&plugin) {
            capstan_admission::plugins::NamespaceSet::until_listed()
        } else {
            capstan_admission::plugins::NamespaceSet::default()
        })
    };
    let quota_namespaces = namespace_set("ResourceQuota");
    let limit_range_namespaces = namespace_set("LimitRanger");
    let quota_charges = Arc::new(capstan_admission::plugins::ChargesInFlight::default());
    let (admission, not_built) = capstan_admission::plugins::chain(
        &admission_plan,
        &capstan_admission::plugins::Context {
            lister: registry.lister(),
            not_ready_toleration_seconds: config.default_not_ready_toleration_seconds,
            unreachable_toleration_seconds: config.default_unreachable_toleration_seconds,
            namespace_creator: Some(registry.lister()),
            external: webhooks,
            status_writer: Some(registry.lister()),
            quota_namespaces: quota_namespaces.clone(),
            quota_charges: quota_charges.clone(),
            limit_range_namespaces: limit_range_namespaces.clone(),
            authorizer: Some(authz.clone()),
        },
    )?;
    info!(plugins = ?admission.names(), "admission chain");
    if !not_built.is_empty() {
        warn!(plugins = ?not_built, "enabled admission plugins without effect (see --help)");
    }
    registry.set_admission(Arc::new(admission));
    step("admission chain built");
    let mut compactors: Vec<JoinHandle<()>> = compactor.into_iter().collect();
    let main_cluster = match &config.etcd {
        Some(etcd) => etcd.endpoints.join(","),
        None => "embedded".to_string(),
    };
    let mut clusters = vec![(main_cluster, store_for_health.clone())];
    for (group, resource, endpoints) in &config.etcd_overrides {
        let Some(main) = &config.etcd else {
            return Err(Error::Startup(
                "--etcd-servers-overrides needs --etcd-servers".into(),
            ));
        };
        let mut etcd = main.clone();
        etcd.endpoints = endpoints.clone();
        let store: Arc<dyn Store> = Arc::new(
            capstan_etcd::EtcdStore::connect(&etcd)
                .await
                .map_err(|e| Error::Startup(format!("{group}/{resource}: {e}")))?,
        );
        if !config.compaction_interval.is_zero() {
            compactors.push(spawn_compactor(store.clone(), config.compaction_interval));
        }
        clusters.push((endpoints.join(","), store.clone()));
        registry = registry.with_store_for(group, resource, store);
    }
    let bind = SocketAddr::new(config.bind_address, config.secure_port);
    // --permit-address-sharing asks for nothing more: address reuse is always on.
    let listener = capstan_serving::listen(bind, config.permit_port_sharing).map_err(|source| {
        Error::Bind {
            addr: bind.to_string(),
            source,
        }
    })?;
    let local_addr = listener.local_addr().map_err(|source| Error::Bind {
        addr: bind.to_string(),
        source,
    })?;

    let mut hosts = Vec::new();
    if !config.bind_address.is_unspecified() {
        hosts.push(config.bind_address.to_string());
    }
    if let Ok(name) = std::fs::read_to_string("/etc/hostname") {
        let name = name.trim();
        if !name.is_empty() {
            hosts.push(name.to_string());
        }
    }
    let cert = capstan_serving::tls::load_or_generate(
        "apiserver",
        config.tls_cert_file.as_deref(),
        config.tls_private_key_file.as_deref(),
        &config.cert_dir,
        &hosts,
    )?;
    let (acceptor, cert_watch) = {
        let default_files = match (&config.tls_cert_file, &config.tls_private_key_file) {
            (Some(cert), Some(key)) => (cert.clone(), key.clone()),
            _ => (
                config.cert_dir.join("apiserver.crt"),
                config.cert_dir.join("apiserver.key"),
            ),
        };
        let resolver = capstan_serving::sni::CertResolver::new(
            Some(default_files),
            None,
            &config.tls_sni_cert_key,
        )?;
        let watch = resolver.watch(Duration::from_secs(1));
        let acceptor = capstan_serving::sni::Acceptor::new(
            capstan_serving::tls::server_config_with_resolver(
                resolver.clone(),
                &config.tls,
                config.client_ca_file.is_some() || config.requestheader_client_ca_file.is_some(),
            )?,
            resolver,
        );
        (acceptor, watch)
    };

    // What clients are told to use: --external-hostname, else --advertise-address, else the
    // bound address (loopback for a wildcard bind).
    let advertised = match (&config.external_hostname, config.advertise_address) {
        (Some(host), _) => format!("{host}:{}", local_addr.port()),
        (None, Some(ip)) => SocketAddr::new(ip, local_addr.port()).to_string(),
        (None, None) if config.bind_address.is_unspecified() => {
            format!("127.0.0.1:{}", local_addr.port())
        }
        (None, None) => local_addr.to_string(),
    };
    let kubelet = Arc::new(
        crate::kubelet::KubeletClient::new(&config.kubelet, config.max_connection_bytes_per_sec)
            .map_err(|e| Error::Startup(format!("kubelet client: {e}")))?,
    );
    let proxy_identity = authn::load_proxy_client_cert(
        config.proxy_client_cert_file.as_deref(),
        config.proxy_client_key_file.as_deref(),
    )?;
    let sa_config = authn::service_account_config(
        &config.service_accounts,
        &config.data_dir,
        config.tls_private_key_file.as_deref(),
        &advertised,
    )?;
    let legacy_tokens = sa_config
        .signing_key
        .clone()
        .map(|key| (key, cert.ca_pem.clone()));
    let builtin = register_builtin(
        &mut registry,
        BuiltinConfig {
            legacy_tokens,
            escalation: Some(Escalation::new(authz.clone(), rbac_index.clone())),
            claim_status: Some(ClaimStatusAuthorization::new(authz.clone())),
            limit_range_namespaces: Some(limit_range_namespaces.clone()),
            quota_namespaces: Some(quota_namespaces.clone()),
            service_network: config.service_network.clone(),
        },
    );
    let lookup: Arc<dyn ObjectLookup> = Arc::new(builtin.lookup());
    step("built-in kinds registered");
    let service_accounts = Arc::new(ServiceAccountTokens::new(sa_config, lookup.clone()));
    let mut tokens = match &config.token_auth_file {
        Some(path) => StaticTokens::load(path)?,
        None => StaticTokens::new(),
    };
    let admin_token = match &config.admin_token_value {
        Some(token) => Some(token.0.clone()),
        None if config.admin_token || config.admin_kubeconfig.is_some() => {
            Some(kubeconfig::admin_token(&config.data_dir, random_token)?)
        }
        None => None,
    };
    if let Some(token) = &admin_token {
        tokens.insert(
            token.clone(),
            UserInfo {
                name: "capstan-admin".into(),
                groups: vec![UserInfo::MASTERS.into()],
                ..Default::default()
            },
        );
    }
    let authenticators = authn::authenticators(&config, tokens, service_accounts.clone(), lookup)?;
    let authn = Arc::new(
        AuthenticatorChain::new(authenticators.chain, anonymous_allowed(&config))
            .with_implicit_audiences(authenticators.implicit_audiences),
    );
    registry.add(Arc::new(TokenRequestRest::new(
        builtin.lookup(),
        service_accounts.clone(),
    )));
    registry.add(Arc::new(TokenReviewRest::new(authn.clone())));
    for descriptor in crate::connect::ConnectDescriptor::all() {
        registry.add(Arc::new(descriptor));
    }
    registry.add(Arc::new(crate::component_status::ComponentStatusRest::new(
        &config.component_health_urls,
        config.etcd.as_ref(),
    )));
    registry.add(Arc::new(SelfSubjectReviewRest::default()));
    registry.add(Arc::new(SubjectAccessReviewRest::new(authz.clone())));
    registry.add(Arc::new(LocalSubjectAccessReviewRest::new(authz.clone())));
    registry.add(Arc::new(SelfSubjectAccessReviewRest::new(authz.clone())));
    registry.add(Arc::new(SelfSubjectRulesReviewRest::new(authz.clone())));
    let crds = registry.register(capstan_apiextensions::CustomResourceDefinitionStrategy);
    for (group, version) in config.runtime_config.enabled_group_versions() {
        if !registry
            .descriptors()
            .any(|d| d.group == group && d.version == version)
        {
            let gv = if group.is_empty() {
                version
            } else {
                format!("{group}/{version}")
            };
            return Err(Error::Startup(format!(
                "--runtime-config: {gv} is not served by Capstan"
            )));
        }
    }
    let registry = Arc::new(registry);
    let custom = Arc::new(
        capstan_apiextensions::CustomResources::new(registry.clone()).with_services(services),
    );
    let loops = config.control_loops.clone();
    compactors.push(loops.serve_custom_resources(crds, custom.clone()));
    // The followers admission reads load side by side; nothing is admitted before the
    // configurations are known (the post-start hooks' writes go through admission too, and
    // admission waits for them).
    let mut admission_loads: Vec<BoxFuture<'static, ()>> = Vec::new();
    if uses_webhooks {
        compactors.extend(loops.follow_webhooks(
            builtin.mutating_webhooks.clone(),
            builtin.validating_webhooks.clone(),
            webhook_index.clone(),
        ));
        let index = webhook_index.clone();
        admission_loads.push(Box::pin(async move { loaded(index.wait_loaded()).await }));
    }
    if uses_policies {
        compactors.extend(loops.follow_validating_policies(
            builtin.admission_policies.clone(),
            builtin.admission_policy_bindings.clone(),
            policy_index.clone(),
        ));
        let index = policy_index.clone();
        admission_loads.push(Box::pin(async move { loaded(index.wait_loaded()).await }));
    }
    if uses_mutating_policies {
        compactors.extend(loops.follow_mutating_policies(
            builtin.mutating_policies.clone(),
            builtin.mutating_policy_bindings.clone(),
            mutating_policy_index.clone(),
        ));
        let index = mutating_policy_index.clone();
        admission_loads.push(Box::pin(async move { loaded(index.wait_loaded()).await }));
    }
    // The Node authorizer's graph loads meanwhile; the server waits for it before serving.
    let node_graph_loaded = if config.authorization_modes.iter().any(|m| m == "Node") {
        let store = |resource: &str| {
            registry
                .resources()
                .find(|r| {
                    r.descriptor().resource == resource && r.descriptor().subresource.is_empty()
                })
                .cloned()
        };
        compactors.extend(loops.follow_node_graph(
            NodeGraphStores {
                pods: builtin.pods.clone(),
                claims: store("persistentvolumeclaims"),
                volumes: store("persistentvolumes"),
                attachments: store("volumeattachments"),
                slices: store("resourceslices"),
            },
            node_graph.clone(),
        ));
        let graph = node_graph.clone();
        Some(async move { loaded(graph.wait_loaded()).await })
    } else {
        None
    };
    futures_util::future::join_all(admission_loads).await;
    step("admission's indexes loaded");
    // Discovery is built on another thread while the post-start hooks run and the indexes
    // below load (it is about 1.5 ms of a start). Custom resources that change from here on
    // rebuild it (the follower below starts from this subscription, so no change is missed
    // between).
    let custom_changes = custom.changes();
    let discovery = tokio::task::spawn_blocking({
        let served = handler::served(&registry, &custom);
        let advertised = advertised.clone();
        move || Discovery::build(&served, &advertised)
    });
    let metrics = Arc::new(crate::metrics::Metrics::with_options(
        config.metrics.clone(),
    ));
    // API Priority and Fairness divides the two in-flight limits' seats between priority
    // levels; with no limits at all there is nothing to divide.
    let seats = config.max_requests_inflight + config.max_mutating_requests_inflight;
    let flowcontrol_served = registry
        .get("flowcontrol.apiserver.k8s.io", "v1", "flowschemas", "")
        .is_some();
    if config.enable_priority_and_fairness && !flowcontrol_served {
        tracing::warn!(
            "flowcontrol.apiserver.k8s.io/v1 is turned off (--runtime-config): API Priority and Fairness is off, the max-in-flight limits apply"
        );
    }
    let flow_control = (config.enable_priority_and_fairness && seats > 0 && flowcontrol_served)
        .then(|| {
            let wait = if config.request_timeout.is_zero() {
                Duration::from_secs(15)
            } else {
                (config.request_timeout / 4).max(Duration::from_secs(1))
            };
            capstan_flowcontrol::FlowControl::new(
                u32::try_from(seats).unwrap_or(u32::MAX),
                wait,
                metrics.flowcontrol.clone(),
            )
        });
    // API Priority and Fairness's configuration: the defaults ensured, then loaded (requests
    // are classified by the stored configuration from the first on), on a task of its own
    // beside the post-start hooks, so that the two use both cores (about 3 ms of a start).
    let flow_control_stores = match &flow_control {
        Some(_) => {
            let group = "flowcontrol.apiserver.k8s.io";
            Some(FlowControlStores {
                schemas: builtin.flow_schemas.clone(),
                schema_status: registry
                    .get(group, "v1", "flowschemas", "status")
                    .cloned()
                    .ok_or_else(|| Error::Startup("flowschemas/status is not served".into()))?,
                levels: builtin.priority_levels.clone(),
            })
        }
        None => None,
    };
    let configure_flow_control = tokio::spawn({
        let flow_control = flow_control.clone();
        let loops = loops.clone();
        async move {
            let (Some(control), Some(stores)) = (flow_control, flow_control_stores) else {
                return (None, Vec::new());
            };
            let mut tasks = Vec::new();
            let producer = PostStartHook::new("priority-and-fairness-config-producer");
            if loops.ensure_flow_control(&stores).await.is_ok() {
                producer.finish();
            } else {
                let stores = stores.clone();
                let producer = producer.clone();
                let loops = loops.clone();
                tasks.push(tokio::spawn(async move {
                    while loops.ensure_flow_control(&stores).await.is_err() {
                        tokio::time::sleep(Duration::from_secs(1)).await;
                    }
                    producer.finish();
                }));
            }
            let loaded = Arc::new(tokio::sync::Notify::new());
            tasks.extend(loops.follow_flow_control(stores, control, loaded.clone()));
            let _ = tokio::time::timeout(Duration::from_secs(10), loaded.notified()).await;
            (Some(producer), tasks)
        }
    });
    // The RBAC index loads beside the default policy's reconciliation (see below).
    let rbac_authorizes = config.authorization_modes.iter().any(|m| m == "RBAC");
    let mut rbac_tasks = if rbac_authorizes {
        loops.follow_rbac(&builtin.rbac, rbac_index.clone())
    } else {
        Vec::new()
    };
    let (mut hooks, hook_tasks, policy_tried) = start_post_start_hooks(&registry).await;
    step("post-start hooks started");
    let (producer, flow_control_tasks) = configure_flow_control.await.map_err(|e| {
        Error::Startup(format!("configuring API Priority and Fairness failed: {e}"))
    })?;
    compactors.extend(hook_tasks);
    compactors.extend(flow_control_tasks);
    step("flow control configured");
    compactors.extend(authenticators.tasks);
    let repaired = PostStartHook::new("start-service-ip-repair-controllers");
    hooks.push(repaired.clone());
    compactors.push(loops.repair_services(
        ServiceStores {
            services: builtin.services.clone(),
            cidrs: builtin.service_cidrs.clone(),
            allocator: builtin.service_allocator.clone(),
        },
        Box::new(move || repaired.finish()),
    ));
    let kubernetes_service = {
        let namespaces = registry
            .get("", "v1", "namespaces", "")
            .cloned()
            .ok_or_else(|| Error::Startup("namespaces are not served".into()))?;
        Some(
            loops.keep_kubernetes_service(
                KubernetesService {
                    namespace: config.master_service_namespace.clone(),
                    node_port: config.kubernetes_service_node_port,
                    reconciler: config.endpoint_reconciler,
                    address: config
                        .advertise_address
                        .or_else(|| capstan_control::default_address(config.bind_address)),
                    port: local_addr.port(),
                    cluster_ip: config.service_network.first_address(),
                },
                KubernetesServiceStores {
                    namespaces,
                    services: builtin.services.clone(),
                    endpoints: builtin.endpoints.clone(),
                    slices: builtin.endpoint_slices.clone(),
                    store: registry.store_for("", "endpoints"),
                    prefix: registry.config().prefix.clone(),
                },
            ),
        )
    };
    let published = PostStartHook::new("start-cluster-authentication-info-controller");
    hooks.push(published.clone());
    compactors.push(
        authn::keep_authentication_info(
            registry.clone(),
            authenticators.client_ca.clone(),
            authenticators.request_header.clone(),
            published,
        )
        .await,
    );
    step("authentication info published");
    compactors.push(authn::keep_legacy_token_tracking(registry.clone()));
    hooks.extend(producer);
    compactors.extend(metrics.start_storage_polls(
        registry.clone(),
        config.storage_prefix.trim_end_matches('/').to_string(),
        config.etcd_count_metric_poll_period,
        config.etcd_db_metric_poll_interval,
        clusters,
    ));
    let controllers = loops.start_controllers(
        registry.clone(),
        &builtin,
        ControllerConfig {
            event_ttl: config.event_ttl,
            garbage_collector: config.garbage_collector,
            root_ca: Some(cert.ca_pem.clone()),
            quota_namespaces: admission_plan
                .enabled
                .contains(&"ResourceQuota")
                .then(|| quota_namespaces.clone()),
            quota_charges,
            limit_range_namespaces: admission_plan
                .enabled
                .contains(&"LimitRanger")
                .then(|| limit_range_namespaces.clone()),
            custom: Some(custom.clone()),
        },
    );

    let aggregator = Arc::new(crate::aggregator::Aggregator::new(
        aggregator_services,
        proxy_identity,
        config.max_connection_bytes_per_sec,
    ));
    let api_service_stores = (
        registry
            .get("apiregistration.k8s.io", "v1", "apiservices", "")
            .cloned(),
        registry
            .get("apiregistration.k8s.io", "v1", "apiservices", "status")
            .cloned(),
    );
    // Synced while the indexes below load.
    if let (Some(api_services), Some(status)) = api_service_stores.clone() {
        // The Local APIServices of what is served now (custom resources' follow below), and
        // every APIService's availability.
        let wanted = local_group_versions(&registry, &custom);
        let registered = PostStartHook::new("apiservice-registration-controller");
        hooks.push(registered.clone());
        if loops
            .sync_local_api_services(&*api_services, &wanted)
            .await
            .is_ok()
        {
            registered.finish();
        } else {
            let api_services = api_services.clone();
            let loops = loops.clone();
            compactors.push(tokio::spawn(async move {
                while let Err(e) = loops.sync_local_api_services(&*api_services, &wanted).await {
                    tracing::warn!(error = %e, "could not keep the local APIServices");
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
                registered.finish();
            }));
        }
        compactors.push(loops.keep_api_services_available(
            api_services,
            status,
            aggregator.clone(),
        ));
    }

    step("APIServices synced");
    // A reconciliation that wrote (a new cluster's first start, a new version's roles) may
    // have done so after the index listed: the index then loads again, so that the server
    // serves with the whole policy in it (on a restart nothing is written).
    let policy_changed = policy_tried.await.unwrap_or(true);
    step("default RBAC policy reconciled");
    if rbac_authorizes && policy_changed {
        for task in &rbac_tasks {
            task.abort();
        }
        for task in rbac_tasks.drain(..) {
            let _ = task.await;
        }
        rbac_index.reset();
        rbac_tasks = loops.follow_rbac(&builtin.rbac, rbac_index.clone());
    }
    compactors.extend(rbac_tasks);
    if let Some(node_graph_loaded) = node_graph_loaded {
        node_graph_loaded.await;
    }
    step("node graph loaded");
    // Serve with the namespaces holding quotas and limit ranges known (their plugins would
    // otherwise make the first requests wait).
    loaded(quota_namespaces.wait_listed()).await;
    loaded(limit_range_namespaces.wait_listed()).await;
    if rbac_authorizes {
        // Serve with the roles and bindings loaded (as upstream waits for its informers),
        // unless the storage keeps them from loading.
        loaded(rbac_index.wait_loaded()).await;
    }
    step("quota, limit ranges and RBAC loaded");
    let (shutdown, shutdown_rx) = watch::channel(false);
    let state = Arc::new(State {
        aggregator,
        discovery: std::sync::RwLock::new(Arc::new(discovery.await.map_err(|e| {
            Error::Startup(format!("building the discovery documents failed: {e}"))
        })?)),
        custom: custom.clone(),
        openapi: Default::default(),
        openapi_v2: Default::default(),
        registry: registry.clone(),
        max_body: config.max_request_body_bytes,
        min_request_timeout: config.min_request_timeout,
        shutdown: shutdown_rx.clone(),
        health: crate::health::Health::new(
            store_for_health,
            config.etcd_healthcheck_timeout,
            terminating.clone(),
        )
        .with_hooks(hooks, config.livez_grace_period),
        metrics: metrics.clone(),
        profiling: config.profiling,
        flow_control: flow_control.clone(),
        kubelet,
        max_connection_bytes_per_sec: config.max_connection_bytes_per_sec,
        service_accounts,
    });
    // Discovery follows the custom resources.
    compactors.push(tokio::spawn({
        let state = state.clone();
        let mut changes = custom_changes;
        async move {
            while changes.changed().await.is_ok() {
                let rebuilt = Discovery::build(&state.served(), &advertised);
                *state.discovery.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(rebuilt);
                if let (Some(api_services), _) = &api_service_stores {
                    let wanted = local_group_versions(&state.registry, &state.custom);
                    if let Err(e) = loops
                        .sync_local_api_services(&**api_services, &wanted)
                        .await
                    {
                        tracing::warn!(error = %e, "could not keep the local APIServices");
                    }
                }
            }
        }
    }));
    let handler = tower::service_fn(move |req| handler::handle(state.clone(), req));
    let origins = config
        .cors_allowed_origins
        .iter()
        .map(|o| {
            regex::Regex::new(o).map_err(|e| {
                Error::Startup(format!(
                    "--cors-allowed-origins: {o:?} is not a regular expression: {e}"
                ))
            })
        })
        .collect::<Result<Vec<_>>>()?;
    let auditor = match &config.audit {
        Some(audit) => {
            let sink = capstan_audit::Sink::new(audit.backends.clone(), metrics.audit.clone())
                .map_err(|e| Error::Startup(e.to_string()))?;
            Some(Arc::new(filters::Auditor::new(audit.policy.clone(), sink)))
        }
        None => None,
    };
    let layers = filters::Filters {
        hsts_directives: config.hsts_directives.clone(),
        cors: filters::Cors::new(origins),
        instrument: filters::Instrument::new(metrics.clone(), {
            let registry = registry.clone();
            let custom = custom.clone();
            Arc::new(move |info: &crate::request_info::RequestInfo| {
                let (g, v, r, sub) = (
                    &info.api_group,
                    &info.api_version,
                    &info.resource,
                    &info.subresource,
                );
                registry.get(g, v, r, sub).is_some() || custom.get(g, v, r, sub).is_some()
            })
        }),
        goaway: filters::Goaway::new(config.goaway_chance),
        access_log: filters::AccessLog::new(config.request_log),
        auditor: auditor.clone(),
        max_in_flight: flow_control.is_none().then(|| {
            filters::MaxInFlight::new(
                config.max_requests_inflight,
                config.max_mutating_requests_inflight,
                &metrics.inflight,
            )
        }),
        fairness: flow_control.map(|control| {
            let metrics = metrics.clone();
            let registry = registry.clone();
            let width: filters::Width = Arc::new(move |info: &crate::request_info::RequestInfo| {
                // The watch cache's count, exact and current; else the storage count poll's.
                filters::list_width(info, || {
                    registry
                        .get(&info.api_group, &info.api_version, &info.resource, "")
                        .and_then(|r| r.cached_count())
                        .or_else(|| metrics.stored_objects(&info.api_group, &info.resource))
                })
            });
            filters::PriorityAndFairness::new(control, width)
        }),
        deadline: filters::RequestDeadline::new(config.request_timeout),
    };
    let service = filters::chain(handler, layers, authn, authz);

    let running_url = RunningServer {
        local_addr,
        ca_pem: cert.ca_pem.clone(),
        admin_token: admin_token.clone(),
        shutdown,
        accept_loop: tokio::spawn(accept_loop(
            listener,
            acceptor,
            service,
            shutdown_rx,
            capstan_serving::ConnectionTimeouts {
                handshake: config.tls_handshake_timeout,
                headers: config.request_header_timeout,
                idle: config.idle_connection_timeout,
            },
            match config.max_connections {
                Some(max) => capstan_serving::ConnectionLimit::new(max),
                None => capstan_serving::ConnectionLimit::from_open_files(),
            },
            config.http2_max_streams_per_connection,
            writes,
        )),
        background: compactors
            .into_iter()
            .chain(std::iter::once(cert_watch))
            .collect(),
        terminating,
        auditor,
        kubernetes_service,
        _controllers: AbortOnDrop(controllers),
    };
    if let Some(path) = &config.admin_kubeconfig
        && let Some(contents) = running_url.admin_kubeconfig()
    {
        kubeconfig::write(path, &contents)?;
        info!(path = %path.display(), "wrote the admin kubeconfig");
    }
    info!(address = %local_addr, "serving");
    Ok(running_url)
}

/// Notes a step of the start (`--v=4`): the log's time stamps say where a start's time goes
/// (docs/performance.md).
fn step(done: &'static str) {
    debug!(step = done, "start-up");
}

/// Waits until an index has listed what it follows (`wait_loaded`), at most 10 s: a storage
/// that keeps it from loading does not keep the server from serving (admission and
/// authorization then wait or refuse on their own).
async fn loaded(wait_loaded: impl std::future::Future<Output = ()>) {
    let _ = tokio::time::timeout(Duration::from_secs(10), wait_loaded).await;
}

/// Creates the objects every cluster has (upstream's post-start hooks of the same names):
/// the namespaces, then the priority classes, then the default RBAC policy (it has roles in
/// namespaces the first makes); the objects of each are written together. The policy's
/// reconciliation (about 3 ms of a restart) runs on a task of its own beside the rest of the
/// start; the returned signal says that its first attempt is over, and whether it may have
/// written (it wrote, or it failed). Every first attempt finishes before the server serves;
/// when the storage refuses, the server serves anyway and the hooks keep trying in the
/// background, failing `/readyz` (and, after `--livez-grace-period`, `/livez`) until they
/// succeed.
async fn start_post_start_hooks(
    registry: &Arc<Registry>,
) -> (
    Vec<PostStartHook>,
    Vec<JoinHandle<()>>,
    tokio::sync::oneshot::Receiver<bool>,
) {
    let mut hooks = Vec::new();
    let mut tasks = Vec::new();
    for (name, which) in [
        (
            "start-system-namespaces-controller",
            InitialObjects::Namespaces,
        ),
        (
            "scheduling/bootstrap-system-priority-classes",
            InitialObjects::PriorityClasses,
        ),
    ] {
        let hook = PostStartHook::new(name);
        hooks.push(hook.clone());
        if ensure_initial_objects(registry, which).await.is_ok() {
            hook.finish();
        } else {
            tasks.push(tokio::spawn(retry_hook(
                registry.clone(),
                name,
                which,
                hook,
            )));
        }
    }
    let (name, which) = ("rbac/bootstrap-roles", InitialObjects::RbacPolicy);
    let hook = PostStartHook::new(name);
    hooks.push(hook.clone());
    let (tried, policy_tried) = tokio::sync::oneshot::channel();
    let registry = registry.clone();
    tasks.push(tokio::spawn(async move {
        let result = ensure_initial_objects(&registry, which).await;
        let _ = tried.send(!matches!(result, Ok(false)));
        if result.is_ok() {
            hook.finish();
        } else {
            retry_hook(registry, name, which, hook).await;
        }
    }));
    (hooks, tasks, policy_tried)
}

/// Tries the post-start hook `name` again, with a growing pause, until it succeeds.
async fn retry_hook(
    registry: Arc<Registry>,
    name: &'static str,
    which: InitialObjects,
    hook: PostStartHook,
) {
    let mut backoff = Duration::from_millis(100);
    loop {
        match ensure_initial_objects(&registry, which).await {
            Ok(_) => {
                tracing::info!(hook = name, "post-start hook finished");
                hook.finish();
                return;
            }
            Err(e) => tracing::warn!(hook = name, error = %e, "post-start hook failed; retrying"),
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(5));
    }
}

/// The notice to `store` of a write `req` may bring, taken as the request arrives (a task per
/// request is spawned then, and may wait for a turn on a busy server): the store may then
/// hold a group commit until such writes join it. Served under [`WriteNotice::scope`], the
/// request withdraws it when it hands a write over; one that ends without writing drops it.
fn announce_write<B>(store: &dyn Store, req: &http::Request<B>) -> Option<Arc<WriteNotice>> {
    let writes = matches!(
        *req.method(),
        http::Method::POST | http::Method::PUT | http::Method::PATCH | http::Method::DELETE
    );
    writes.then(|| Arc::new(store.expect_write()))
}

/// Serves the connections `listener` accepts. `writes`: the store that write requests are
/// announced to as they arrive ([`announce_write`]).
#[allow(clippy::too_many_arguments)]
async fn accept_loop(
    listener: TcpListener,
    acceptor: capstan_serving::sni::Acceptor,
    service: ApiService,
    mut shutdown: watch::Receiver<bool>,
    timeouts: capstan_serving::ConnectionTimeouts,
    limit: capstan_serving::ConnectionLimit,
    max_streams: u32,
    writes: Arc<dyn Store>,
) {
    let mut builder = capstan_serving::http_builder(timeouts, max_streams);
    // Large windows: request and response bodies flow without waiting for WINDOW_UPDATEs.
    builder
        .http2()
        .initial_stream_window_size(1 << 20)
        .initial_connection_window_size(16 << 20);
    let builder = Arc::new(builder);
    // Every connection task holds a sender; when all are gone, the drain is complete.
    let (alive, mut drained) = mpsc::channel::<()>(1);
    let mut backoff = Duration::ZERO;
    loop {
        let capstan_serving::Accepted {
            stream: tcp,
            peer,
            permit,
        } = tokio::select! {
            accepted = capstan_serving::accept(&listener, &limit, &mut backoff) => accepted,
            _ = shutdown.changed() => break,
        };
        let _ = tcp.set_nodelay(true);
        let acceptor = match tcp.local_addr() {
            Ok(local) => acceptor.for_connection(local.ip()),
            Err(_) => continue,
        };
        let service = service.clone();
        let writes = writes.clone();
        let builder = builder.clone();
        let mut shutdown = shutdown.clone();
        let alive = alive.clone();
        tokio::spawn(async move {
            let _alive = alive;
            let _permit = permit;
            let activity = capstan_serving::Activity::default();
            let meter = Arc::new(capstan_serving::lanes::Meter::new(&activity));
            let tcp = capstan_serving::lanes::LaneStream::new(tcp, meter.clone());
            let Some(tls) =
                capstan_serving::handshake(acceptor, tcp, peer, timeouts.handshake).await
            else {
                return;
            };
            // Filters may ask this connection to close (GOAWAY) through the extension.
            let close = filters::CloseConnection::default();
            // The client's certificates, checked once for all the connection's requests.
            let certificates = tls
                .get_ref()
                .1
                .peer_certificates()
                .and_then(|chain| PeerCertificates::new(chain.to_vec()))
                .map(Arc::new);
            let tagged = {
                let close = close.clone();
                let activity = activity.clone();
                hyper::service::service_fn(move |mut req: http::Request<hyper::body::Incoming>| {
                    let in_flight = activity.begin();
                    req.extensions_mut().insert(close.clone());
                    req.extensions_mut().insert(filters::ClientAddr(peer));
                    if let Some(certificates) = &certificates {
                        req.extensions_mut().insert(certificates.clone());
                    }
                    let notice = announce_write(&*writes, &req);
                    let answer = tower::ServiceExt::oneshot(service.clone(), req);
                    async move {
                        let answer = match notice {
                            Some(notice) => notice.scope(answer).await,
                            None => answer.await,
                        };
                        answer.map(|resp| in_flight.hold(resp))
                    }
                })
            };
            let stop = async move {
                tokio::select! {
                    _ = close.0.notified() => debug!(%peer, "closing the connection (goaway chance)"),
                    _ = shutdown.changed() => {}
                }
            };
            let io = TokioIo::new(tls);
            let idle = timeouts.idle;
            if let Err(err) =
                capstan_serving::serve_connection(builder, io, tagged, meter, idle, stop).await
            {
                debug!(%peer, %err, "connection ended with an error");
            }
        });
    }
    drop(listener);
    drop(alive);
    if tokio::time::timeout(DRAIN_TIMEOUT, drained.recv())
        .await
        .is_err()
    {
        warn!("in-flight requests did not finish in time; closing anyway");
    }
}

/// Starts the server and serves until SIGINT or SIGTERM, then shuts down gracefully (boxed
/// for the reason [`start`] is).
pub fn run(config: ServerConfig) -> BoxFuture<'static, Result<()>> {
    Box::pin(run_server(config))
}

async fn run_server(config: ServerConfig) -> Result<()> {
    let delay = config.shutdown_delay;
    // The handlers come first: a signal that arrives once the server answers (or while it
    // starts) is a shutdown, never the default action's immediate exit.
    use tokio::signal::unix::{SignalKind, signal};
    let handler = |kind: SignalKind, name: &str| {
        signal(kind).map_err(|e| Error::Startup(format!("installing the {name} handler: {e}")))
    };
    let mut term = handler(SignalKind::terminate(), "SIGTERM")?;
    let mut interrupt = handler(SignalKind::interrupt(), "SIGINT")?;
    let server = start(config).await?;
    // Start-up ran code the serving path never runs again; let its pages go, a second after
    // the server began to serve: the first requests (readiness probes, clients that waited
    // for the server) find the code they run still mapped, and the work is off their path.
    tokio::spawn(async {
        tokio::time::sleep(Duration::from_secs(1)).await;
        match tokio::task::spawn_blocking(capstan_serving::memory::release_startup_code).await {
            Ok(Ok(bytes)) => tracing::debug!(bytes, "released the pages of start-up code"),
            Ok(Err(e)) => warn!(error = %e, "could not release the pages of start-up code"),
            Err(e) => warn!(error = %e, "releasing the pages of start-up code panicked"),
        }
    });
    tokio::select! {
        _ = interrupt.recv() => info!("interrupted; shutting down"),
        _ = term.recv() => info!("terminated; shutting down"),
    }
    server.begin_shutdown();
    if !delay.is_zero() {
        info!(
            ?delay,
            "readyz fails; serving on until the shutdown delay ends"
        );
        tokio::time::sleep(delay).await;
    }
    server.shutdown().await;
    Ok(())
}
/// Whether requests without credentials are served as `system:anonymous`: as asked, except
/// with an `AlwaysAllow` authorizer, which would let anyone who reaches the port do anything
/// (upstream turns it off then too, and says so).
fn anonymous_allowed(config: &ServerConfig) -> bool {
    let always_allow = config
        .authorization_modes
        .iter()
        .any(|m| m == "AlwaysAllow");
    if config.anonymous_auth && always_allow {
        warn!(
            "anonymous requests are refused with the AlwaysAllow authorizer (--anonymous-auth is \
             reset to false); choose another --authorization-mode to serve anonymous users"
        );
        return false;
    }
    config.anonymous_auth
}

/// The group versions served here, each with whether custom resources serve it (their
/// Local APIServices rank lower).
fn local_group_versions(
    registry: &capstan_registry::Registry,
    custom: &capstan_apiextensions::CustomResources,
) -> Vec<(String, String, bool)> {
    let mut out: Vec<(String, String, bool)> = Vec::new();
    let builtin = registry
        .descriptors()
        .map(|d| (d.group.clone(), d.version.clone(), false));
    let custom = custom
        .resources_and_subresources()
        .into_iter()
        .map(|r| {
            (
                r.descriptor().group.clone(),
                r.descriptor().version.clone(),
                true,
            )
        })
        .collect::<Vec<_>>();
    for (group, version, is_custom) in builtin.chain(custom) {
        // The aggregator's own group has no APIService, as upstream's.
        if group == "apiregistration.k8s.io" {
            continue;
        }
        if !out.iter().any(|(g, v, _)| *g == group && *v == version) {
            out.push((group, version, is_custom));
        }
    }
    out
}
