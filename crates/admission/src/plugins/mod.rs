//! The built-in plugins. [`build`] makes one by name, or says it is not built yet (`None`):
//! [`chain`] reports those to the caller (and `--help` says so).

mod always;
mod certificates;
mod event_rate_limit;
mod ingress;
mod lifecycle;
mod limit_ranger;
mod namespaces;
mod node_restriction;
mod owner_references;
mod pod_security;
mod pods;
mod priority;
mod resource_quota;
mod runtime_class;
mod scheduling;
mod security_context;
mod service_account;
mod storage;
mod tolerations;

pub use namespaces::NamespaceCreator;
pub use resource_quota::{Charge, ChargesInFlight, NamespaceSet, StatusWriter};

use std::sync::Arc;

use capstan_meta::{ApiError, GroupResource};
use serde_json::Value;

use crate::attributes::Attributes;
use crate::chain::{Lister, Plugin};
use crate::error::Result;

/// What plugins are built with.
#[derive(Clone)]
pub struct Context {
    /// Reads stored objects.
    pub lister: Arc<dyn Lister>,
    /// `--default-not-ready-toleration-seconds` (DefaultTolerationSeconds).
    pub not_ready_toleration_seconds: i64,
    /// `--default-unreachable-toleration-seconds` (DefaultTolerationSeconds).
    pub unreachable_toleration_seconds: i64,
    /// Creates namespaces (NamespaceAutoProvision; without it the plugin is not built).
    pub namespace_creator: Option<Arc<dyn NamespaceCreator>>,
    /// Plugins built outside this crate (the admission webhooks), by name.
    pub external: Vec<Arc<dyn Plugin>>,
    /// Writes quota status (ResourceQuota; without it the plugin is not built).
    pub status_writer: Option<Arc<dyn StatusWriter>>,
    /// The namespaces holding ResourceQuotas.
    pub quota_namespaces: Arc<NamespaceSet>,
    /// The quota charges whose requests have not ended (the quota controller reads them).
    pub quota_charges: Arc<ChargesInFlight>,
    /// The namespaces holding LimitRanges.
    pub limit_range_namespaces: Arc<NamespaceSet>,
    /// Asks whether a user may do something (CertificateApproval, CertificateSigning; without
    /// it they are not built; NodeRestriction asks it about token audiences).
    pub authorizer: Option<Arc<dyn capstan_auth::authz::Authorizer>>,
}

/// The plugin `name` with its configuration (from the configuration file), or `None` when
/// it is not built yet.
pub fn build(
    name: &'static str,
    config: Option<&Value>,
    ctx: &Context,
) -> Result<Option<Arc<dyn Plugin>>> {
    if let Some(plugin) = ctx.external.iter().find(|p| p.name() == name) {
        return Ok(Some(plugin.clone()));
    }
    let plugin: Arc<dyn Plugin> = match name {
        "AlwaysAdmit" => Arc::new(always::AlwaysAdmit),
        "AlwaysDeny" => Arc::new(always::AlwaysDeny),
        "AlwaysPullImages" => Arc::new(pods::AlwaysPullImages),
        "DefaultTolerationSeconds" => Arc::new(pods::DefaultTolerationSeconds {
            not_ready: ctx.not_ready_toleration_seconds,
            unreachable: ctx.unreachable_toleration_seconds,
        }),
        "LimitPodHardAntiAffinityTopology" => Arc::new(pods::LimitPodHardAntiAffinityTopology),
        "NamespaceLifecycle" => Arc::new(lifecycle::NamespaceLifecycle::new(ctx.lister.clone())),
        "NodeRestriction" => Arc::new(node_restriction::NodeRestriction::new(
            ctx.lister.clone(),
            ctx.authorizer.clone(),
        )),
        "Priority" => Arc::new(priority::Priority::new(ctx.lister.clone())),
        "TaintNodesByCondition" => Arc::new(pods::TaintNodesByCondition),
        "DefaultStorageClass" => Arc::new(storage::DefaultStorageClass::new(ctx.lister.clone())),
        "PersistentVolumeClaimResize" => Arc::new(storage::PersistentVolumeClaimResize::new(
            ctx.lister.clone(),
        )),
        "StorageObjectInUseProtection" => Arc::new(storage::StorageObjectInUseProtection),
        "PersistentVolumeLabel" => Arc::new(storage::PersistentVolumeLabel),
        "DefaultIngressClass" => Arc::new(ingress::DefaultIngressClass::new(ctx.lister.clone())),
        "RuntimeClass" => Arc::new(runtime_class::RuntimeClass::new(ctx.lister.clone())),
        "NamespaceExists" => Arc::new(namespaces::NamespaceExists::new(ctx.lister.clone())),
        "NamespaceAutoProvision" => match &ctx.namespace_creator {
            Some(creator) => Arc::new(namespaces::NamespaceAutoProvision::new(
                ctx.lister.clone(),
                creator.clone(),
            )),
            None => return Ok(None),
        },
        "LimitRanger" => Arc::new(limit_ranger::LimitRanger::new(
            ctx.lister.clone(),
            ctx.limit_range_namespaces.clone(),
        )),
        "ResourceQuota" => match &ctx.status_writer {
            Some(writer) => Arc::new(resource_quota::ResourceQuota::new(
                ctx.lister.clone(),
                writer.clone(),
                ctx.quota_namespaces.clone(),
                ctx.quota_charges.clone(),
            )),
            None => return Ok(None),
        },
        "CertificateApproval" => match &ctx.authorizer {
            Some(authz) => Arc::new(certificates::CertificateApproval(authz.clone())),
            None => return Ok(None),
        },
        "CertificateSigning" => match &ctx.authorizer {
            Some(authz) => Arc::new(certificates::CertificateSigning(authz.clone())),
            None => return Ok(None),
        },
        "CertificateSubjectRestriction" => Arc::new(certificates::CertificateSubjectRestriction),
        "OwnerReferencesPermissionEnforcement" => match &ctx.authorizer {
            Some(authz) => Arc::new(owner_references::OwnerReferencesPermissionEnforcement {
                authorizer: authz.clone(),
                lister: ctx.lister.clone(),
            }),
            None => return Ok(None),
        },
        "EventRateLimit" => Arc::new(event_rate_limit::EventRateLimit::new(config)?),
        "PodSecurity" => Arc::new(pod_security::PodSecurity::new(ctx.lister.clone(), config)?),
        "SecurityContextDeny" => Arc::new(security_context::SecurityContextDeny),
        "DenyServiceExternalIPs" => Arc::new(security_context::DenyServiceExternalIPs),
        "ServiceAccount" => Arc::new(service_account::ServiceAccount::new(ctx.lister.clone())),
        "ExtendedResourceToleration" => Arc::new(scheduling::ExtendedResourceToleration),
        "PodNodeSelector" => Arc::new(scheduling::PodNodeSelector::new(
            ctx.lister.clone(),
            config,
        )?),
        "PodTolerationRestriction" => Arc::new(tolerations::PodTolerationRestriction::new(
            ctx.lister.clone(),
            config,
        )?),
        _ => return Ok(None),
    };
    Ok(Some(plugin))
}

/// The chain of the enabled plugins, and the enabled plugins not built yet.
pub fn chain(
    resolved: &crate::config::Resolved,
    ctx: &Context,
) -> Result<(crate::Chain, Vec<&'static str>)> {
    let mut plugins = Vec::new();
    let mut missing = Vec::new();
    for &name in &resolved.enabled {
        match build(name, resolved.configurations.get(name), ctx)? {
            Some(plugin) => plugins.push(plugin),
            None => missing.push(name),
        }
    }
    Ok((crate::Chain::new(plugins), missing))
}

/// 403 `<resource> "<name>" is forbidden: <why>` for the request.
pub(crate) fn forbidden(a: &Attributes, why: &str) -> ApiError {
    ApiError::forbidden_because(&a.resource, a.display_name(), why)
}

/// The core group's `resource`.
pub(crate) fn core(resource: &str) -> GroupResource {
    GroupResource::new("", resource)
}
