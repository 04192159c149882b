//! What a ResourceClaim's status write needs beyond `update` on `resourceclaims/status`, as
//! upstream v1.36 checks it (the `DRAResourceClaimGranularStatusAuthorization` gate, beta and
//! on by default): changing the allocation or the reservations needs the request's verb on
//! the synthetic subresource `resourceclaims/binding` (cluster-wide, what the scheduler
//! holds); changing the devices' status needs, for each driver whose entries change,
//! `arbitrary-node:<verb>` on `resourceclaims/driver` named after the driver, or
//! `associated-node:<verb>` when the writer is a service account whose token is bound to the
//! node the claim is allocated on (a driver's kubelet plugin). Refusals are field errors of
//! the update, reported with its validation errors.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use async_trait::async_trait;
use capstan_auth::UserInfo;
use capstan_auth::authz::{Attributes, AuthorizerChain};
use capstan_meta::{ApiError, FieldError, GroupResource};
use k8s_openapi::api::resource::v1::{
    AllocatedDeviceStatus, AllocationResult, DeviceRequest, ResourceClaim, ResourceClaimStatus,
    ResourceClaimTemplate,
};

use crate::generic::GenericStore;
use crate::hooks::{CreateHook, UpdateFieldCheck};
use crate::options::WriteOptions;

const GROUP: &str = "resource.k8s.io";
/// The token claim naming the node a service account's token is bound to.
const NODE_NAME: &str = "authentication.kubernetes.io/node-name";

/// The status permission checks of ResourceClaims, answered by the server's authorizers.
pub struct ClaimStatusAuthorization {
    authorizers: Arc<AuthorizerChain>,
}

impl ClaimStatusAuthorization {
    /// Checks with `authorizers`.
    pub fn new(authorizers: Arc<AuthorizerChain>) -> Arc<Self> {
        Arc::new(Self { authorizers })
    }

    /// `Ok`, or upstream's 403 message for `verb` on `resourceclaims/<subresource>`.
    async fn may(
        &self,
        user: &UserInfo,
        verb: &str,
        subresource: &str,
        namespace: &str,
        name: &str,
    ) -> Result<(), String> {
        let asked = Attributes {
            user: user.clone(),
            verb: verb.into(),
            resource_request: true,
            api_group: GROUP.into(),
            api_version: "v1".into(),
            resource: "resourceclaims".into(),
            subresource: subresource.into(),
            namespace: namespace.into(),
            name: name.into(),
            ..Default::default()
        };
        self.authorizers.authorize(&asked).await.map_err(|why| {
            let claims = GroupResource::new(GROUP, "resourceclaims");
            ApiError::forbidden(
                &user.name,
                verb,
                &claims,
                subresource,
                name,
                namespace,
                &why,
            )
            .message
        })
    }
}

#[async_trait]
impl UpdateFieldCheck<ResourceClaim> for ClaimStatusAuthorization {
    async fn field_errors(
        &self,
        new: &ResourceClaim,
        old: &ResourceClaim,
        writer: &WriteOptions,
    ) -> Vec<FieldError> {
        let empty = ResourceClaimStatus::default();
        let after = new.status.as_ref().unwrap_or(&empty);
        let before = old.status.as_ref().unwrap_or(&empty);
        let verb = if writer.verb.is_empty() {
            "update"
        } else {
            writer.verb.as_str()
        };
        let user = &writer.user;
        let mut errors = Vec::new();
        let reserved = |s: &ResourceClaimStatus| s.reserved_for.clone().unwrap_or_default();
        let binding_changed =
            after.allocation != before.allocation || reserved(after) != reserved(before);
        if binding_changed && let Err(denied) = self.may(user, verb, "binding", "", "").await {
            errors.push(FieldError::forbidden(
                "status.allocation",
                format!(
                    "changing status.allocation or status.reservedFor requires resource=\"resourceclaims/binding\", verb=\"{verb}\" permission: {denied}"
                ),
            ));
        }
        let drivers = modified_drivers(after, before);
        if drivers.is_empty() {
            return errors;
        }
        let on_its_node =
            allocated_node(after.allocation.as_ref()).is_some_and(|node| bound_to_node(user, node));
        let verbs: Vec<String> = if on_its_node {
            vec![
                format!("associated-node:{verb}"),
                format!("arbitrary-node:{verb}"),
            ]
        } else {
            vec![format!("arbitrary-node:{verb}")]
        };
        let namespace = new.metadata.namespace.as_deref().unwrap_or_default();
        for driver in drivers {
            let mut first_denial = None;
            for verb in &verbs {
                match self.may(user, verb, "driver", namespace, driver).await {
                    Ok(()) => {
                        first_denial = None;
                        break;
                    }
                    Err(denied) => {
                        first_denial.get_or_insert(denied);
                    }
                }
            }
            if let Some(denied) = first_denial {
                errors.push(FieldError::forbidden(
                    "status.devices",
                    format!(
                        "changing status.devices requires resource=\"resourceclaims/driver\", verb=\"[{}]\" permission: {denied}",
                        verbs.join(" ")
                    ),
                ));
            }
        }
        errors
    }
}

/// The drivers whose device status entries were added, removed or changed, in order.
fn modified_drivers<'a>(
    after: &'a ResourceClaimStatus,
    before: &'a ResourceClaimStatus,
) -> BTreeSet<&'a str> {
    type Key<'a> = (&'a str, &'a str, &'a str, &'a str);
    fn key(d: &AllocatedDeviceStatus) -> Key<'_> {
        (
            &d.driver,
            &d.pool,
            &d.device,
            d.share_id.as_deref().unwrap_or_default(),
        )
    }
    let mut earlier: BTreeMap<Key<'a>, &'a AllocatedDeviceStatus> = before
        .devices
        .iter()
        .flatten()
        .map(|d| (key(d), d))
        .collect();
    let mut drivers = BTreeSet::new();
    for device in after.devices.iter().flatten() {
        if earlier.remove(&key(device)) != Some(device) {
            drivers.insert(device.driver.as_str());
        }
    }
    drivers.extend(earlier.values().map(|d| d.driver.as_str()));
    drivers
}

/// The one node an allocation is for, when its node selector names exactly one node by
/// `metadata.name` and nothing else.
fn allocated_node(allocation: Option<&AllocationResult>) -> Option<&str> {
    let terms = &allocation?.node_selector.as_ref()?.node_selector_terms;
    let [term] = terms.as_slice() else {
        return None;
    };
    if !term
        .match_expressions
        .as_deref()
        .unwrap_or_default()
        .is_empty()
    {
        return None;
    }
    let [field] = term.match_fields.as_deref().unwrap_or_default() else {
        return None;
    };
    let values = field.values.as_deref().unwrap_or_default();
    match values {
        [node] if field.key == "metadata.name" && field.operator == "In" => Some(node),
        _ => None,
    }
}

/// Whether `user` is a service account whose token is bound to `node`.
fn bound_to_node(user: &UserInfo, node: &str) -> bool {
    let Some(account) = user.name.strip_prefix("system:serviceaccount:") else {
        return false;
    };
    let Some((namespace, name)) = account.split_once(':') else {
        return false;
    };
    if name.contains(':')
        || !capstan_meta::validation::dns1123_label(namespace).is_empty()
        || !capstan_meta::validation::dns1123_subdomain(name).is_empty()
    {
        return false;
    }
    match user.extra.get(NODE_NAME).map(Vec::as_slice) {
        Some([bound]) => {
            capstan_meta::validation::dns1123_subdomain(bound).is_empty() && bound == node
        }
        _ => false,
    }
}

/// The namespace label that allows claims in it to ask admin access to devices.
const ADMIN_ACCESS_LABEL: &str = "resource.kubernetes.io/admin-access";

/// Admin access to devices (`adminAccess: true`: a device in use by others, for monitoring
/// or maintenance) only in namespaces labelled `resource.kubernetes.io/admin-access: "true"`,
/// as upstream (`DRAAdminAccess`, GA in v1.36): checked on new claims and claim templates,
/// and on allocations that grant it.
pub struct AdminAccess {
    namespaces: Arc<GenericStore<capstan_api::NamespaceStrategy>>,
}

impl AdminAccess {
    /// Reads namespaces' labels from `namespaces`.
    pub fn new(namespaces: Arc<GenericStore<capstan_api::NamespaceStrategy>>) -> Arc<Self> {
        Arc::new(Self { namespaces })
    }

    /// Whether `namespace` allows admin access.
    async fn allowed_in(&self, namespace: &str) -> Result<bool, String> {
        let found = self
            .namespaces
            .cached_json("", namespace)
            .await
            .map_err(|e| e.to_string())?;
        let Some(json) = found else {
            return Ok(false);
        };
        let ns: serde_json::Value = serde_json::from_slice(&json).map_err(|e| e.to_string())?;
        Ok(ns["metadata"]["labels"][ADMIN_ACCESS_LABEL] == "true")
    }

    /// The refusal of admin access at `path` in `namespace`, if it is not allowed there.
    async fn refusal(&self, namespace: &str, path: String) -> Option<FieldError> {
        match self.allowed_in(namespace).await {
            Ok(true) => None,
            Ok(false) => Some(FieldError::forbidden(
                path,
                format!(
                    "admin access to devices requires the `{ADMIN_ACCESS_LABEL}: true` label on the containing namespace"
                ),
            )),
            Err(err) => Some(FieldError::forbidden(
                path,
                format!("could not retrieve namespace to verify admin access: {err}"),
            )),
        }
    }

    /// The check of a new claim's (or template's) requests.
    async fn check_requests(
        &self,
        namespace: &str,
        requests: &[DeviceRequest],
        kind: &str,
        name: &str,
    ) -> crate::error::Result<()> {
        let asked = requests.iter().position(|r| {
            r.exactly
                .as_ref()
                .is_some_and(|e| e.admin_access == Some(true))
        });
        let Some(i) = asked else {
            return Ok(());
        };
        // Upstream names the request's path in the claim spec, for templates too.
        let path = format!("spec.devices.requests[{i}].adminAccess");
        match self.refusal(namespace, path).await {
            None => Ok(()),
            Some(refused) => Err(ApiError::invalid(GROUP, kind, name, &[refused]).into()),
        }
    }
}

#[async_trait]
impl CreateHook<ResourceClaim> for AdminAccess {
    async fn on_create(
        &self,
        claim: &mut ResourceClaim,
        _user: &UserInfo,
    ) -> crate::error::Result<()> {
        let namespace = claim.metadata.namespace.clone().unwrap_or_default();
        let name = claim.metadata.name.clone().unwrap_or_default();
        let requests = claim
            .spec
            .devices
            .as_ref()
            .and_then(|d| d.requests.clone())
            .unwrap_or_default();
        self.check_requests(&namespace, &requests, "ResourceClaim", &name)
            .await
    }
}

#[async_trait]
impl CreateHook<ResourceClaimTemplate> for AdminAccess {
    async fn on_create(
        &self,
        template: &mut ResourceClaimTemplate,
        _user: &UserInfo,
    ) -> crate::error::Result<()> {
        let namespace = template.metadata.namespace.clone().unwrap_or_default();
        let name = template.metadata.name.clone().unwrap_or_default();
        let requests = template
            .spec
            .spec
            .devices
            .as_ref()
            .and_then(|d| d.requests.clone())
            .unwrap_or_default();
        self.check_requests(&namespace, &requests, "ResourceClaimTemplate", &name)
            .await
    }
}

#[async_trait]
impl UpdateFieldCheck<ResourceClaim> for AdminAccess {
    async fn field_errors(
        &self,
        new: &ResourceClaim,
        old: &ResourceClaim,
        _writer: &WriteOptions,
    ) -> Vec<FieldError> {
        let granted = |c: &ResourceClaim| {
            c.status
                .as_ref()
                .and_then(|s| s.allocation.as_ref())
                .and_then(|a| a.devices.as_ref())
                .and_then(|d| d.results.as_ref())
                .and_then(|r| r.iter().position(|r| r.admin_access == Some(true)))
        };
        if granted(old).is_some() {
            // The allocation cannot change once written.
            return Vec::new();
        }
        let Some(i) = granted(new) else {
            return Vec::new();
        };
        let namespace = new.metadata.namespace.as_deref().unwrap_or_default();
        let path = format!("status.allocation.devices.results[{i}].adminAccess");
        self.refusal(namespace, path).await.into_iter().collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn status(value: serde_json::Value) -> ResourceClaimStatus {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn drivers_whose_entries_change_are_the_ones_checked() {
        let before = status(json!({"devices": [
            {"driver": "a.example.com", "pool": "p", "device": "x"},
            {"driver": "b.example.com", "pool": "p", "device": "y"},
            {"driver": "c.example.com", "pool": "p", "device": "z"}]}));
        let after = status(json!({"devices": [
            {"driver": "a.example.com", "pool": "p", "device": "x"},
            {"driver": "b.example.com", "pool": "p", "device": "y", "conditions": [
                {"type": "Ready", "status": "True", "reason": "Up", "message": "",
                 "lastTransitionTime": "2026-11-29T00:00:00Z"}]},
            {"driver": "d.example.com", "pool": "p", "device": "w"}]}));
        let drivers: Vec<&str> = modified_drivers(&after, &before).into_iter().collect();
        // b changed, c removed, d added; a untouched.
        assert_eq!(drivers, ["b.example.com", "c.example.com", "d.example.com"]);
        assert!(modified_drivers(&after, &after).is_empty());
    }

    #[test]
    fn only_a_single_named_node_is_an_allocations_node() {
        let allocation = |selector: serde_json::Value| -> AllocationResult {
            serde_json::from_value(json!({"nodeSelector": selector})).unwrap()
        };
        let by_name = |values: serde_json::Value| {
            json!({"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": values}]}]})
        };
        let one = allocation(by_name(json!(["n1"])));
        assert_eq!(allocated_node(Some(&one)), Some("n1"));
        let two = allocation(by_name(json!(["n1", "n2"])));
        assert_eq!(allocated_node(Some(&two)), None);
        let by_label = allocation(json!({"nodeSelectorTerms": [{"matchExpressions": [
            {"key": "zone", "operator": "In", "values": ["a"]}]}]}));
        assert_eq!(allocated_node(Some(&by_label)), None);
        assert_eq!(allocated_node(None), None);
    }

    #[test]
    fn a_plugin_is_bound_to_its_node_by_its_token() {
        let user = |name: &str, nodes: &[&str]| UserInfo {
            name: name.into(),
            extra: [(
                NODE_NAME.to_string(),
                nodes.iter().map(|n| n.to_string()).collect(),
            )]
            .into(),
            ..Default::default()
        };
        assert!(bound_to_node(
            &user("system:serviceaccount:kube-system:plugin", &["n1"]),
            "n1"
        ));
        assert!(!bound_to_node(
            &user("system:serviceaccount:kube-system:plugin", &["n2"]),
            "n1"
        ));
        assert!(!bound_to_node(
            &user("system:serviceaccount:kube-system:plugin", &["n1", "n1"]),
            "n1"
        ));
        // Not a service account, however its extras read.
        assert!(!bound_to_node(&user("plugin", &["n1"]), "n1"));
        assert!(!bound_to_node(
            &user("system:serviceaccount:a:b:c", &["n1"]),
            "n1"
        ));
    }
}
