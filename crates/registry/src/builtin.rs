//! Every built-in resource, registered in one place, and the objects a cluster has from its
//! first start.

use std::sync::Arc;

use capstan_api::{
    ConfigMapStrategy, CsiNodeStrategy, EventStrategy, LeaseStrategy, NamespaceStrategy,
    NodeStrategy, PersistentVolumeClaimStrategy, PersistentVolumeStrategy,
    PodDisruptionBudgetStrategy, PodStrategy, PriorityClassStrategy, SecretStrategy,
    ServiceAccountStrategy, StorageClassStrategy,
};
use capstan_meta::Reason;

use capstan_auth::authn::jwt::SigningKey;

use crate::authentication::{LegacyTokenFiller, StoreLookup};
use crate::converted::{ConvertedRest, PerObject};
use crate::error::{Error, Result};
use crate::generic::GenericStore;
use crate::options::{GetOptions, WriteOptions};
use crate::registry::Registry;
use crate::subresources::{BindingRest, FinalizeRest, PartRest, ScaleRest};

/// The stores the server's own controllers work with.
pub struct Builtin {
    /// Namespaces (the namespace controller finalizes them).
    pub namespaces: Arc<GenericStore<NamespaceStrategy>>,
    /// Pods.
    pub pods: Arc<GenericStore<PodStrategy>>,
    /// Service accounts (a `default` one per namespace).
    pub service_accounts: Arc<GenericStore<ServiceAccountStrategy>>,
    /// Config maps (a `kube-root-ca.crt` one per namespace).
    pub config_maps: Arc<GenericStore<ConfigMapStrategy>>,
    /// Resource quotas (the quota controller keeps their usage).
    pub quotas: Arc<GenericStore<capstan_api::ResourceQuotaStrategy>>,
    /// Core events (expired after `--event-ttl`).
    pub events: Arc<GenericStore<EventStrategy>>,
    /// Secrets.
    pub secrets: Arc<GenericStore<SecretStrategy>>,
    /// Nodes.
    pub nodes: Arc<GenericStore<NodeStrategy>>,
    /// Persistent volumes (the protection controller finalizes them).
    pub volumes: Arc<GenericStore<PersistentVolumeStrategy>>,
    /// Persistent volume claims (the protection controller finalizes them).
    pub claims: Arc<GenericStore<PersistentVolumeClaimStrategy>>,
    /// Roles, cluster roles and their bindings (the RBAC authorizer follows them).
    pub rbac: Rbac,
    /// Mutating webhook configurations (the webhook index follows them).
    pub mutating_webhooks: Arc<GenericStore<capstan_api::MutatingWebhookConfigurationStrategy>>,
    /// Validating webhook configurations (the webhook index follows them).
    pub validating_webhooks: Arc<GenericStore<capstan_api::ValidatingWebhookConfigurationStrategy>>,
    /// Validating admission policies (the policy index follows them).
    pub admission_policies: Arc<GenericStore<capstan_api::ValidatingAdmissionPolicyStrategy>>,
    /// Their bindings (the policy index follows them).
    pub admission_policy_bindings:
        Arc<GenericStore<capstan_api::ValidatingAdmissionPolicyBindingStrategy>>,
    /// Mutating admission policies (the mutating policy index follows them).
    pub mutating_policies: Arc<GenericStore<capstan_api::MutatingAdmissionPolicyStrategy>>,
    /// Their bindings (likewise).
    pub mutating_policy_bindings:
        Arc<GenericStore<capstan_api::MutatingAdmissionPolicyBindingStrategy>>,
    /// FlowSchemas (API Priority and Fairness follows them).
    pub flow_schemas: Arc<GenericStore<capstan_api::FlowSchemaStrategy>>,
    /// PriorityLevelConfigurations (likewise).
    pub priority_levels: Arc<GenericStore<capstan_api::PriorityLevelConfigurationStrategy>>,
    /// Services (their allocations are repaired from them).
    pub services: Arc<GenericStore<capstan_api::ServiceStrategy>>,
    /// ServiceCIDRs (the default one is kept from `--service-cluster-ip-range`).
    pub service_cidrs: Arc<GenericStore<capstan_api::ServiceCidrStrategy>>,
    /// Allocates the Services' cluster IPs and node ports.
    pub service_allocator: Arc<crate::services::ServiceAllocator>,
    /// Endpoints (the `kubernetes` Service's are kept by the endpoint reconciler).
    pub endpoints: Arc<GenericStore<capstan_api::EndpointsStrategy>>,
    /// EndpointSlices (likewise).
    pub endpoint_slices: Arc<GenericStore<capstan_api::EndpointSliceStrategy>>,
}

/// The RBAC stores.
#[derive(Clone)]
pub struct Rbac {
    /// Roles.
    pub roles: Arc<GenericStore<capstan_api::RoleStrategy>>,
    /// Cluster roles.
    pub cluster_roles: Arc<GenericStore<capstan_api::ClusterRoleStrategy>>,
    /// Role bindings.
    pub role_bindings: Arc<GenericStore<capstan_api::RoleBindingStrategy>>,
    /// Cluster role bindings.
    pub cluster_role_bindings: Arc<GenericStore<capstan_api::ClusterRoleBindingStrategy>>,
}

impl Builtin {
    /// What the token authenticators read.
    pub fn lookup(&self) -> StoreLookup {
        StoreLookup {
            service_accounts: self.service_accounts.clone(),
            pods: self.pods.clone(),
            secrets: self.secrets.clone(),
            nodes: self.nodes.clone(),
        }
    }
}

/// What the built-in resources need beyond the registry's configuration.
#[derive(Default)]
pub struct BuiltinConfig {
    /// Signs the tokens of new `kubernetes.io/service-account-token` Secrets, with the CA
    /// they carry (`--service-account-signing-key-file`).
    pub legacy_tokens: Option<(Arc<SigningKey>, String)>,
    /// RBAC's escalation checks on roles and bindings.
    pub escalation: Option<Arc<crate::rbac::Escalation>>,
    /// The permissions ResourceClaim status writes need (`resourceclaims/binding`,
    /// `resourceclaims/driver`).
    pub claim_status: Option<Arc<crate::resource_claims::ClaimStatusAuthorization>>,
    /// Where LimitRanges are (new ones noted at once).
    pub limit_range_namespaces: Option<Arc<capstan_admission::plugins::NamespaceSet>>,
    /// Where ResourceQuotas are (new ones noted at once).
    pub quota_namespaces: Option<Arc<capstan_admission::plugins::NamespaceSet>>,
    /// The ranges of Service cluster IPs and node ports.
    pub service_network: crate::services::ServiceNetwork,
}

/// Registers every built-in resource with its subresources (set the registry's admission
/// chain first: writes pass it).
pub fn register_builtin(registry: &mut Registry, config: BuiltinConfig) -> Builtin {
    let namespaces = registry.register(NamespaceStrategy);
    registry.add(Arc::new(FinalizeRest::new(namespaces.clone())));
    registry.register(PriorityClassStrategy);
    registry.register(capstan_api::RuntimeClassStrategy);
    registry.register(capstan_api::IngressClassStrategy);
    registry.register(capstan_api::IngressStrategy);
    registry.register(capstan_api::NetworkPolicyStrategy);
    let mutating_webhooks = registry.register(capstan_api::MutatingWebhookConfigurationStrategy);
    let validating_webhooks =
        registry.register(capstan_api::ValidatingWebhookConfigurationStrategy);
    let admission_policies = registry.register(capstan_api::ValidatingAdmissionPolicyStrategy);
    let admission_policy_bindings =
        registry.register(capstan_api::ValidatingAdmissionPolicyBindingStrategy);
    let mutating_policies = registry.register(capstan_api::MutatingAdmissionPolicyStrategy);
    let mutating_policy_bindings =
        registry.register(capstan_api::MutatingAdmissionPolicyBindingStrategy);
    let flow_schemas = registry.register(capstan_api::FlowSchemaStrategy);
    let priority_levels = registry.register(capstan_api::PriorityLevelConfigurationStrategy);
    let pod_strategy = PodStrategy {
        allow_privileged: registry.config().allow_privileged,
    };
    let pods = registry.register_with(pod_strategy, GenericStore::reading_trees);
    registry.add(Arc::new(BindingRest::subresource(pods.clone())));
    registry.add(Arc::new(BindingRest::resource(pods.clone())));
    registry.add(Arc::new(PartRest::ephemeral_containers(pods.clone())));
    registry.add(Arc::new(PartRest::resize(pods.clone())));
    let nodes = registry.register(NodeStrategy);
    let config_maps = registry.register(ConfigMapStrategy);
    let service_accounts = registry.register(ServiceAccountStrategy);
    let secrets = registry.register_with(SecretStrategy, |store| match config.legacy_tokens {
        Some((key, ca)) => store.with_create_hook(Arc::new(LegacyTokenFiller::new(
            key,
            ca,
            service_accounts.clone(),
        ))),
        None => store,
    });
    let events = registry.register(EventStrategy);
    registry.add(Arc::new(ConvertedRest::new(
        capstan_api::events::descriptor(),
        events.clone(),
        Arc::new(PerObject(capstan_api::events::to_core)),
        Arc::new(PerObject(capstan_api::events::from_core)),
        |g| g.subschema_for::<k8s_openapi::api::events::v1::Event>(),
    )));
    let volumes = registry.register(PersistentVolumeStrategy);
    let claims = registry.register(PersistentVolumeClaimStrategy);
    let addresses = registry.register(capstan_api::IpAddressStrategy);
    let service_cidrs = registry.register(capstan_api::ServiceCidrStrategy);
    let service_allocator = Arc::new(
        crate::services::ServiceAllocator::new(
            config.service_network.clone(),
            addresses,
            registry.store_for("", "services"),
            &registry.config().prefix,
        )
        .with_service_cidrs(service_cidrs.clone()),
    );
    let allocations = service_allocator.clone();
    let services = registry.register_with(capstan_api::ServiceStrategy, |s| {
        s.with_allocations(allocations)
    });
    let endpoints = registry.register(capstan_api::EndpointsStrategy);
    let endpoint_slices = registry.register(capstan_api::EndpointSliceStrategy);
    let allow_privileged = registry.config().allow_privileged;
    let deployments = registry.register(capstan_api::DeploymentStrategy { allow_privileged });
    registry.add(Arc::new(ScaleRest::new(deployments)));
    let replica_sets = registry.register(capstan_api::ReplicaSetStrategy { allow_privileged });
    registry.add(Arc::new(ScaleRest::new(replica_sets)));
    let stateful_sets = registry.register(capstan_api::StatefulSetStrategy { allow_privileged });
    registry.add(Arc::new(ScaleRest::new(stateful_sets)));
    registry.register(capstan_api::DaemonSetStrategy { allow_privileged });
    registry.register(capstan_api::ControllerRevisionStrategy);
    let autoscalers = registry.register(capstan_api::HorizontalPodAutoscalerStrategy);
    serve_autoscaling_v1(registry, autoscalers);
    registry.register(capstan_api::JobStrategy { allow_privileged });
    registry.register(capstan_api::PodTemplateStrategy { allow_privileged });
    let controllers =
        registry.register(capstan_api::ReplicationControllerStrategy { allow_privileged });
    registry.add(Arc::new(ScaleRest::new(controllers)));
    registry.register(capstan_api::CronJobStrategy { allow_privileged });
    // Small kinds written often (node heartbeats; the load suite's StorageClasses) keep
    // their trees too: little code to compile.
    registry.register_with(LeaseStrategy, GenericStore::reading_trees);
    registry.register_with(StorageClassStrategy, GenericStore::reading_trees);
    registry.register(CsiNodeStrategy);
    registry.register(capstan_api::CsiDriverStrategy);
    registry.register(capstan_api::VolumeAttachmentStrategy);
    registry.register(capstan_api::CsiStorageCapacityStrategy);
    registry.register(capstan_api::VolumeAttributesClassStrategy);
    registry.register(capstan_api::ApiServiceStrategy);
    registry.register(capstan_api::DeviceClassStrategy);
    let claim_status = config.claim_status.clone();
    let admin_access = crate::resource_claims::AdminAccess::new(namespaces.clone());
    let admin = admin_access.clone();
    registry.register_with(capstan_api::ResourceClaimStrategy, |s| {
        let s = s
            .with_create_hook(admin.clone())
            .with_update_field_check(admin);
        match claim_status {
            Some(check) => s.with_update_field_check(check),
            None => s,
        }
    });
    registry.register_with(capstan_api::ResourceClaimTemplateStrategy, |s| {
        s.with_create_hook(admin_access)
    });
    registry.register(capstan_api::ResourceSliceStrategy);
    let budgets = registry.register(PodDisruptionBudgetStrategy);
    registry.add(Arc::new(crate::eviction::EvictionRest::new(
        pods.clone(),
        budgets,
    )));
    let csrs = registry.register_with(capstan_api::CertificateSigningRequestStrategy, |s| {
        s.with_create_hook(Arc::new(crate::hooks::CsrRequester))
    });
    registry.add(Arc::new(PartRest::approval(csrs)));
    let noted = |set: &Option<Arc<capstan_admission::plugins::NamespaceSet>>| {
        set.clone().map(crate::hooks::NoteNamespace)
    };
    let limit_note = noted(&config.limit_range_namespaces);
    registry.register_with(capstan_api::LimitRangeStrategy, |s| match limit_note {
        Some(note) => s.with_create_hook(Arc::new(note)),
        None => s,
    });
    let quota_note = noted(&config.quota_namespaces);
    let quotas = registry.register_with(capstan_api::ResourceQuotaStrategy, |s| match quota_note {
        Some(note) => s.with_create_hook(Arc::new(note)),
        None => s,
    });
    let escalation = config.escalation.clone();
    let rbac = Rbac {
        roles: registry.register_with(capstan_api::RoleStrategy, |s| match &escalation {
            Some(e) => s.with_write_check(e.clone()),
            None => s,
        }),
        cluster_roles: registry.register_with(capstan_api::ClusterRoleStrategy, |s| {
            match &escalation {
                Some(e) => s.with_write_check(e.clone()),
                None => s,
            }
        }),
        role_bindings: registry.register_with(capstan_api::RoleBindingStrategy, |s| {
            match &escalation {
                Some(e) => s.with_write_check(e.clone()),
                None => s,
            }
        }),
        cluster_role_bindings: registry.register_with(
            capstan_api::ClusterRoleBindingStrategy,
            |s| match &escalation {
                Some(e) => s.with_write_check(e.clone()),
                None => s,
            },
        ),
    };
    Builtin {
        namespaces,
        pods,
        service_accounts,
        config_maps,
        quotas,
        events,
        secrets,
        nodes,
        volumes,
        claims,
        rbac,
        mutating_webhooks,
        validating_webhooks,
        admission_policies,
        admission_policy_bindings,
        mutating_policies,
        mutating_policy_bindings,
        flow_schemas,
        priority_levels,
        services,
        service_cidrs,
        service_allocator,
        endpoints,
        endpoint_slices,
    }
}

/// `autoscaling/v1` HorizontalPodAutoscalers and their status, served by converting to and
/// from the stored `autoscaling/v2` form.
fn serve_autoscaling_v1(
    registry: &mut Registry,
    v2: Arc<GenericStore<capstan_api::HorizontalPodAutoscalerStrategy>>,
) {
    use capstan_api::autoscaling::{to_v1, to_v2, v1_descriptor};
    let schema = |g: &mut schemars::SchemaGenerator| {
        g.subschema_for::<k8s_openapi::api::autoscaling::v1::HorizontalPodAutoscaler>()
    };
    let d = v1_descriptor();
    let status = d.subresource("status", &d.kind, &["get", "patch", "update"]);
    registry.add(Arc::new(ConvertedRest::new(
        d,
        v2.clone(),
        Arc::new(PerObject(to_v2)),
        Arc::new(PerObject(to_v1)),
        schema,
    )));
    registry.add(Arc::new(ConvertedRest::new(
        status,
        Arc::new(PartRest::status(v2)),
        Arc::new(PerObject(to_v2)),
        Arc::new(PerObject(to_v1)),
        schema,
    )));
}

/// What every cluster has, created by the server's post-start hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InitialObjects {
    /// The `default`, `kube-system`, `kube-public` and `kube-node-lease` namespaces.
    Namespaces,
    /// The `system-cluster-critical` and `system-node-critical` priority classes.
    PriorityClasses,
    /// Upstream's default RBAC roles and bindings (reconciled, not only created).
    RbacPolicy,
}

/// Creates `which` initial objects unless they are there already; returns whether it wrote
/// any (on a restart, none).
pub async fn ensure_initial_objects(registry: &Registry, which: InitialObjects) -> Result<bool> {
    let (resource, wanted) = match which {
        InitialObjects::RbacPolicy => return crate::bootstrap_policy::reconcile(registry).await,
        InitialObjects::Namespaces => (
            "namespaces",
            capstan_api::core::INITIAL_NAMESPACES
                .iter()
                .map(|name| serde_json::json!({"metadata": {"name": name}}))
                .collect(),
        ),
        InitialObjects::PriorityClasses => (
            "priorityclasses",
            capstan_api::scheduling::system_priority_classes()
                .into_iter()
                .map(serde_json::to_value)
                .collect::<std::result::Result<Vec<_>, _>>()
                .map_err(Error::Encode)?,
        ),
    };
    let Some(storage) = registry
        .resources()
        .find(|r| r.descriptor().resource == resource && r.descriptor().subresource.is_empty())
    else {
        return Ok(false);
    };
    let created = write_each(wanted, |body| async move {
        let name = body["metadata"]["name"].as_str().unwrap_or_default();
        create_unless_present(&**storage, "", name, &body)
            .await
            .map(|found| found.is_none())
    })
    .await?;
    Ok(created.contains(&true))
}

/// Default objects written at once at start-up.
const CONCURRENT_WRITES: usize = 32;

/// `write` for each of `items`, up to [`CONCURRENT_WRITES`] at once, and their results (in no
/// particular order);
/// the first error ends it. For the default objects a new cluster's first start writes (the
/// namespaces, the RBAC policy, API Priority and Fairness's configuration, the APIServices):
/// written together, their durable writes share the store's commits instead of waiting for
/// one each.
pub async fn write_each<I, F, Fut, T, E>(items: I, write: F) -> std::result::Result<Vec<T>, E>
where
    I: IntoIterator,
    F: FnMut(I::Item) -> Fut,
    Fut: std::future::Future<Output = std::result::Result<T, E>>,
{
    use futures_util::{StreamExt, TryStreamExt};
    futures_util::stream::iter(items)
        .map(write)
        .buffer_unordered(CONCURRENT_WRITES)
        .try_collect()
        .await
}

/// Creates `namespace/name` from `body` unless it is stored; returns the stored object when
/// it was (read first: on a restart every initial object is there, and a read from the watch
/// cache costs a fraction of a refused create).
pub async fn create_unless_present(
    storage: &dyn crate::RestStorage,
    namespace: &str,
    name: &str,
    body: &serde_json::Value,
) -> Result<Option<crate::rest::Encoded>> {
    match storage.get(namespace, name, &GetOptions::default()).await {
        Ok(found) => return Ok(Some(found)),
        Err(Error::Api(e)) if e.reason == Reason::NotFound => {}
        Err(e) => return Err(e),
    }
    let bytes = serde_json::to_vec(body).map_err(Error::Encode)?;
    match storage
        .create(namespace, &bytes, &WriteOptions::server())
        .await
    {
        Ok(_) => Ok(None),
        // Created meanwhile (by another server sharing the storage).
        Err(Error::Api(e)) if e.reason == Reason::AlreadyExists => storage
            .get(namespace, name, &GetOptions::default())
            .await
            .map(Some),
        Err(e) => Err(e),
    }
}

/// The served `configmaps` storage and a ConfigMap's body to write to it.
type ConfigMapWrite = (Arc<dyn crate::RestStorage>, serde_json::Value);

/// The served `configmaps` storage, and the body of ConfigMap `namespace/name` with `data`.
fn config_map(
    registry: &Registry,
    namespace: &str,
    name: &str,
    data: &std::collections::BTreeMap<String, String>,
) -> Option<ConfigMapWrite> {
    let storage = registry.resources().find(|r| {
        r.descriptor().resource == "configmaps" && r.descriptor().subresource.is_empty()
    })?;
    let body = serde_json::json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": data,
    });
    Some((storage.clone(), body))
}

/// Creates the ConfigMap `namespace/name` with `data` unless it exists; whether it wrote.
pub async fn create_config_map(
    registry: &Registry,
    namespace: &str,
    name: &str,
    data: &std::collections::BTreeMap<String, String>,
) -> Result<bool> {
    let Some((storage, body)) = config_map(registry, namespace, name, data) else {
        return Ok(false);
    };
    let found = create_unless_present(&*storage, namespace, name, &body).await?;
    Ok(found.is_none())
}

/// Makes the ConfigMap `namespace/name` hold exactly `data` (created, or replaced when its
/// data differs), as the server's own publishers (authentication info) need; whether it
/// wrote.
pub async fn publish_config_map(
    registry: &Registry,
    namespace: &str,
    name: &str,
    data: &std::collections::BTreeMap<String, String>,
) -> Result<bool> {
    let Some((storage, body)) = config_map(registry, namespace, name, data) else {
        return Ok(false);
    };
    let Some(current) = create_unless_present(&*storage, namespace, name, &body).await? else {
        return Ok(true);
    };
    #[derive(serde::Deserialize)]
    struct Data {
        #[serde(default)]
        data: std::collections::BTreeMap<String, String>,
    }
    let current: Data =
        serde_json::from_slice(&current.body.into_bytes()).map_err(Error::Encode)?;
    if &current.data == data {
        return Ok(false);
    }
    let body = serde_json::to_vec(&body).map_err(Error::Encode)?;
    storage
        .update(namespace, name, &body, &WriteOptions::server())
        .await?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    #[tokio::test]
    async fn write_each_runs_the_writes_together_up_to_its_bound() {
        let (running, most) = (AtomicUsize::new(0), AtomicUsize::new(0));
        let mut done = write_each(0..100, |i| {
            let (running, most) = (&running, &most);
            async move {
                let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                most.fetch_max(now, Ordering::SeqCst);
                tokio::task::yield_now().await;
                running.fetch_sub(1, Ordering::SeqCst);
                Ok::<_, ()>(i)
            }
        })
        .await
        .unwrap();
        done.sort_unstable();
        assert_eq!(done, (0..100).collect::<Vec<_>>());
        assert_eq!(most.load(Ordering::SeqCst), CONCURRENT_WRITES);
    }

    #[tokio::test]
    async fn write_each_ends_at_the_first_error() {
        let started = AtomicUsize::new(0);
        let result = write_each(0..1000, |i| {
            let started = &started;
            async move {
                started.fetch_add(1, Ordering::SeqCst);
                tokio::task::yield_now().await;
                if i == 3 {
                    Err(format!("write {i} failed"))
                } else {
                    Ok(i)
                }
            }
        })
        .await;
        assert_eq!(result, Err("write 3 failed".to_string()));
        assert!(started.load(Ordering::SeqCst) < 1000);
    }
}
