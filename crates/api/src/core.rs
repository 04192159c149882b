//! Core (`v1`) kinds other than pods: namespaces, nodes, config maps, secrets, service
//! accounts, events, persistent volumes and claims.

use std::collections::BTreeMap;

use capstan_meta::{
    FieldError, FieldErrors, FieldLabels, ResourceDescriptor, Strategy, quantity, validation,
};
use k8s_openapi::api::core::v1::{
    ConfigMap, Event, Namespace, NamespaceStatus, Node, PersistentVolume, PersistentVolumeClaim,
    PersistentVolumeClaimStatus, PersistentVolumeStatus, Secret, ServiceAccount,
};

use crate::describe::Names;

/// The finalizer every namespace carries until its content is gone.
pub const NAMESPACE_FINALIZER: &str = "kubernetes";
/// The label every namespace carries with its own name.
pub const NAMESPACE_NAME_LABEL: &str = "kubernetes.io/metadata.name";
/// Namespaces that may not be deleted.
pub const IMMORTAL_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public"];
/// Namespaces that exist from the first start.
pub const INITIAL_NAMESPACES: &[&str] =
    &["default", "kube-system", "kube-public", "kube-node-lease"];
/// Most bytes of data a ConfigMap or Secret may hold.
pub const MAX_DATA_BYTES: usize = 1024 * 1024;
/// Access modes a volume or claim may name.
pub const ACCESS_MODES: &[&str] = &[
    "ReadWriteOnce",
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOncePod",
];

/// `v1` Namespace: cluster-scoped, `status` and `finalize` subresources, two-phase deletion
/// through `spec.finalizers`.
#[derive(Debug, Default, Clone, Copy)]
pub struct NamespaceStrategy;

impl Strategy for NamespaceStrategy {
    fn own_deletion_rules(&self) -> bool {
        true
    }

    fn returns_deleted_object(&self) -> bool {
        true
    }

    type Object = Namespace;

    fn descriptor(&self) -> ResourceDescriptor {
        let mut d = Names {
            group: "",
            kind: "Namespace",
            resource: "namespaces",
            short_names: &["ns"],
            namespaced: false,
        }
        .v1();
        d.verbs.retain(|v| v != "deletecollection");
        d.field_labels = FieldLabels::of_kind(&["status.phase"]).without_namespace();
        d
    }

    fn field(&self, ns: &Namespace, field: &str) -> Option<String> {
        let phase = ns.status.as_ref().and_then(|s| s.phase.clone());
        (field == "status.phase").then(|| phase.unwrap_or_default())
    }

    fn default(&self, ns: &mut Namespace) {
        if let Some(name) = ns.metadata.name.clone().filter(|n| !n.is_empty()) {
            ns.metadata
                .labels
                .get_or_insert_with(BTreeMap::new)
                .insert(NAMESPACE_NAME_LABEL.into(), name);
        }
    }

    fn prepare_for_create(&self, ns: &mut Namespace) {
        let finalizers = ns
            .spec
            .get_or_insert_with(Default::default)
            .finalizers
            .get_or_insert_with(Vec::new);
        if !finalizers.iter().any(|f| f == NAMESPACE_FINALIZER) {
            finalizers.push(NAMESPACE_FINALIZER.into());
        }
        ns.status = Some(NamespaceStatus {
            phase: Some("Active".into()),
            conditions: None,
        });
    }

    fn prepare_for_update(&self, new: &mut Namespace, old: &Namespace) {
        // spec.finalizers change through the finalize subresource only.
        let finalizers = old.spec.as_ref().and_then(|s| s.finalizers.clone());
        new.spec.get_or_insert_with(Default::default).finalizers = finalizers;
    }

    fn validate(&self, ns: &Namespace) -> FieldErrors {
        let mut errs = Vec::new();
        for (i, f) in ns
            .spec
            .iter()
            .flat_map(|s| s.finalizers.iter().flatten())
            .enumerate()
        {
            for why in validation::qualified_name(f) {
                errs.push(FieldError::invalid(format!("spec.finalizers[{i}]"), f, why));
            }
        }
        errs
    }

    fn validate_update(&self, new: &Namespace, _old: &Namespace) -> FieldErrors {
        self.validate(new)
    }

    fn name_rule(&self) -> fn(&str) -> Vec<String> {
        validation::dns1123_label
    }

    fn has_status(&self) -> bool {
        true
    }

    fn copy_status(&self, to: &mut Namespace, from: &Namespace) {
        to.status = from.status.clone();
    }

    fn awaits_finalization(&self, ns: &Namespace) -> bool {
        ns.spec
            .as_ref()
            .and_then(|s| s.finalizers.as_ref())
            .is_some_and(|f| !f.is_empty())
    }

    fn prepare_for_delete(&self, ns: &mut Namespace) {
        ns.status.get_or_insert_with(Default::default).phase = Some("Terminating".into());
    }
}

/// `v1` Node: cluster-scoped, `status` subresource, selectable by `spec.unschedulable`.
#[derive(Debug, Default, Clone, Copy)]
pub struct NodeStrategy;

/// A Node's pod ranges (`podCIDRs`, or the `podCIDR` it mirrors), each a range with no host
/// bits; ranges the stored Node had keep the rule they were accepted under.
fn validate_pod_cidrs(node: &Node, old: Option<&Node>, errs: &mut FieldErrors) {
    fn ranges(node: &Node) -> Vec<String> {
        let spec = node.spec.clone().unwrap_or_default();
        match spec.pod_cidrs.filter(|c| !c.is_empty()) {
            Some(cidrs) => cidrs,
            None => spec
                .pod_cidr
                .into_iter()
                .filter(|c| !c.is_empty())
                .collect(),
        }
    }
    let before = old.map(ranges).unwrap_or_default();
    let before: Vec<&str> = before.iter().map(String::as_str).collect();
    for (i, cidr) in ranges(node).iter().enumerate() {
        if let Some(why) = crate::service::strict_cidr_problem(cidr, &before) {
            errs.push(FieldError::invalid(
                format!("spec.podCIDRs[{i}]"),
                cidr,
                why,
            ));
        }
    }
}

impl Strategy for NodeStrategy {
    type Object = Node;

    fn descriptor(&self) -> ResourceDescriptor {
        let mut d = Names {
            group: "",
            kind: "Node",
            resource: "nodes",
            short_names: &["no"],
            namespaced: false,
        }
        .v1();
        d.field_labels = FieldLabels::of_kind(&["spec.unschedulable"]).without_namespace();
        d
    }

    fn validate(&self, node: &Node) -> FieldErrors {
        let mut errs = Vec::new();
        validate_pod_cidrs(node, None, &mut errs);
        errs
    }

    fn validate_update(&self, new: &Node, old: &Node) -> FieldErrors {
        let mut errs = Vec::new();
        validate_pod_cidrs(new, Some(old), &mut errs);
        let old_spec = old.spec.clone().unwrap_or_default();
        let new_spec = new.spec.clone().unwrap_or_default();
        if let Some(cidr) = old_spec.pod_cidr.filter(|c| !c.is_empty())
            && new_spec.pod_cidr.as_deref() != Some(cidr.as_str())
        {
            errs.push(FieldError::forbidden(
                "spec.podCIDR",
                "node updates may not change podCIDR except from \"\" to valid",
            ));
        }
        if let Some(id) = old_spec.provider_id.filter(|c| !c.is_empty())
            && new_spec.provider_id.as_deref() != Some(id.as_str())
        {
            errs.push(FieldError::forbidden(
                "spec.providerID",
                "node updates may not change providerID except from \"\" to valid",
            ));
        }
        errs
    }

    fn field(&self, node: &Node, field: &str) -> Option<String> {
        match field {
            "spec.unschedulable" => Some(
                node.spec
                    .as_ref()
                    .and_then(|s| s.unschedulable)
                    .unwrap_or(false)
                    .to_string(),
            ),
            _ => None,
        }
    }

    fn has_status(&self) -> bool {
        true
    }

    fn copy_status(&self, to: &mut Node, from: &Node) {
        to.status = from.status.clone();
        node_status_structs(to);
    }

    fn default(&self, node: &mut Node) {
        node_status_structs(node);
    }
}

/// A Node's status always has its kubelet endpoint and system info, zero when unknown: Go
/// writes these structs whole (a hand-made Node reads `kubeletEndpoint: {Port: 0}` and
/// empty versions upstream).
fn node_status_structs(node: &mut Node) {
    use k8s_openapi::api::core::v1::{DaemonEndpoint, NodeDaemonEndpoints};
    let status = node.status.get_or_insert_with(Default::default);
    let endpoints = status
        .daemon_endpoints
        .get_or_insert_with(NodeDaemonEndpoints::default);
    endpoints
        .kubelet_endpoint
        .get_or_insert_with(DaemonEndpoint::default);
    status.node_info.get_or_insert_with(Default::default);
}

/// Checks the keys of a ConfigMap or Secret and their total size.
fn validate_data_keys<'a>(
    keys: impl Iterator<Item = (&'a str, &'a str, usize)>,
    errs: &mut FieldErrors,
) {
    let mut total = 0;
    let mut seen = std::collections::BTreeSet::new();
    for (field, key, size) in keys {
        total += size;
        let path = format!("{field}[{key}]");
        let well_formed = !key.is_empty()
            && key.len() <= 253
            && key
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
        if !well_formed {
            errs.push(FieldError::invalid(
                path.clone(),
                key,
                "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
            ));
        } else if key == "." || key == ".." {
            errs.push(FieldError::invalid(
                path.clone(),
                key,
                "must not be '.' or '..'",
            ));
        }
        if !seen.insert(key) {
            errs.push(FieldError::invalid(
                path,
                key,
                "duplicate of key present in data or binaryData",
            ));
        }
    }
    if total > MAX_DATA_BYTES {
        errs.push(FieldError::too_long("", MAX_DATA_BYTES));
    }
}

/// Once `immutable` is set it stays set, and none of `fields` (name, changed) may change.
fn check_immutable(
    old: Option<bool>,
    new: Option<bool>,
    fields: &[(&str, bool)],
    errs: &mut FieldErrors,
) {
    if old != Some(true) {
        return;
    }
    const WHY: &str = "field is immutable when `immutable` is set";
    if new != Some(true) {
        errs.push(FieldError::forbidden("immutable", WHY));
    }
    for (field, changed) in fields {
        if *changed {
            errs.push(FieldError::forbidden(*field, WHY));
        }
    }
}

/// `v1` ConfigMap.
#[derive(Debug, Default, Clone, Copy)]
pub struct ConfigMapStrategy;

impl Strategy for ConfigMapStrategy {
    type Object = ConfigMap;

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: "",
            kind: "ConfigMap",
            resource: "configmaps",
            short_names: &["cm"],
            namespaced: true,
        }
        .v1()
    }

    fn validate(&self, cm: &ConfigMap) -> FieldErrors {
        let mut errs = Vec::new();
        let data = cm
            .data
            .iter()
            .flatten()
            .map(|(k, v)| ("data", k.as_str(), k.len() + v.len()));
        let binary = cm
            .binary_data
            .iter()
            .flatten()
            .map(|(k, v)| ("binaryData", k.as_str(), k.len() + v.0.len()));
        validate_data_keys(data.chain(binary), &mut errs);
        errs
    }

    fn validate_update(&self, new: &ConfigMap, old: &ConfigMap) -> FieldErrors {
        let mut errs = self.validate(new);
        check_immutable(
            old.immutable,
            new.immutable,
            &[
                ("data", new.data != old.data),
                ("binaryData", new.binary_data != old.binary_data),
            ],
            &mut errs,
        );
        errs
    }
}

/// Keys a Secret of a given type must carry.
fn required_secret_keys(kind: &str) -> &'static [&'static str] {
    match kind {
        "kubernetes.io/dockercfg" => &[".dockercfg"],
        "kubernetes.io/dockerconfigjson" => &[".dockerconfigjson"],
        "kubernetes.io/ssh-auth" => &["ssh-privatekey"],
        "kubernetes.io/tls" => &["tls.crt", "tls.key"],
        _ => &[],
    }
}

/// `v1` Secret: `stringData` is folded into `data` on every write, `type` defaults to `Opaque`
/// and cannot change. Contents are never logged.
#[derive(Debug, Default, Clone, Copy)]
pub struct SecretStrategy;

impl Strategy for SecretStrategy {
    type Object = Secret;

    fn descriptor(&self) -> ResourceDescriptor {
        let mut d = Names {
            group: "",
            kind: "Secret",
            resource: "secrets",
            short_names: &[],
            namespaced: true,
        }
        .v1();
        d.field_labels = FieldLabels::of_kind(&["type"]);
        d
    }

    fn field(&self, secret: &Secret, field: &str) -> Option<String> {
        (field == "type").then(|| secret.type_.clone().unwrap_or_default())
    }

    fn default(&self, secret: &mut Secret) {
        if secret.type_.as_deref().is_none_or(str::is_empty) {
            secret.type_ = Some("Opaque".into());
        }
        if let Some(strings) = secret.string_data.take() {
            let data = secret.data.get_or_insert_with(BTreeMap::new);
            for (k, v) in strings {
                data.insert(k, k8s_openapi::ByteString(v.into_bytes()));
            }
        }
    }

    fn validate(&self, secret: &Secret) -> FieldErrors {
        let mut errs = Vec::new();
        let keys = secret
            .data
            .iter()
            .flatten()
            .map(|(k, v)| ("data", k.as_str(), k.len() + v.0.len()));
        validate_data_keys(keys, &mut errs);
        let kind = secret.type_.as_deref().unwrap_or("Opaque");
        for key in required_secret_keys(kind) {
            if !secret.data.as_ref().is_some_and(|d| d.contains_key(*key)) {
                errs.push(FieldError::required(format!("data[{key}]"), ""));
            }
        }
        if kind == "kubernetes.io/service-account-token"
            && !secret
                .metadata
                .annotations
                .as_ref()
                .is_some_and(|a| a.contains_key("kubernetes.io/service-account.name"))
        {
            errs.push(FieldError::required(
                "metadata.annotations[kubernetes.io/service-account.name]",
                "",
            ));
        }
        errs
    }

    fn validate_update(&self, new: &Secret, old: &Secret) -> FieldErrors {
        let mut errs = self.validate(new);
        if new.type_ != old.type_ {
            errs.push(FieldError::invalid(
                "type",
                new.type_.as_deref().unwrap_or(""),
                "field is immutable",
            ));
        }
        check_immutable(
            old.immutable,
            new.immutable,
            &[("data", new.data != old.data)],
            &mut errs,
        );
        errs
    }
}

/// `v1` ServiceAccount.
#[derive(Debug, Default, Clone, Copy)]
pub struct ServiceAccountStrategy;

impl Strategy for ServiceAccountStrategy {
    fn returns_deleted_object(&self) -> bool {
        true
    }

    type Object = ServiceAccount;

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: "",
            kind: "ServiceAccount",
            resource: "serviceaccounts",
            short_names: &["sa"],
            namespaced: true,
        }
        .v1()
    }

    fn validate(&self, _sa: &ServiceAccount) -> FieldErrors {
        Vec::new()
    }

    fn validate_update(&self, _new: &ServiceAccount, _old: &ServiceAccount) -> FieldErrors {
        Vec::new()
    }
}

/// Fields of `v1` Event usable in field selectors.
pub const EVENT_FIELDS: &[&str] = &[
    "involvedObject.kind",
    "involvedObject.namespace",
    "involvedObject.name",
    "involvedObject.uid",
    "involvedObject.apiVersion",
    "involvedObject.resourceVersion",
    "involvedObject.fieldPath",
    "reason",
    "reportingComponent",
    "source",
    "type",
];

/// `v1` Event.
#[derive(Debug, Default, Clone, Copy)]
pub struct EventStrategy;

impl Strategy for EventStrategy {
    type Object = Event;

    fn descriptor(&self) -> ResourceDescriptor {
        let mut d = Names {
            group: "",
            kind: "Event",
            resource: "events",
            short_names: &["ev"],
            namespaced: true,
        }
        .v1();
        d.field_labels = FieldLabels::of_kind(EVENT_FIELDS);
        d
    }

    /// PUT of a missing Event creates it, as upstream's event strategy allows.
    fn allow_create_on_update(&self) -> bool {
        true
    }

    fn validate(&self, ev: &Event) -> FieldErrors {
        let mut errs = Vec::new();
        let namespace = ev.metadata.namespace.as_deref().unwrap_or("");
        if let Some(involved) = ev.involved_object.namespace.as_deref()
            && !involved.is_empty()
            && involved != namespace
        {
            errs.push(FieldError::invalid(
                "involvedObject.namespace",
                involved,
                "does not match event.namespace",
            ));
        }
        errs
    }

    fn validate_update(&self, new: &Event, _old: &Event) -> FieldErrors {
        self.validate(new)
    }

    fn field(&self, ev: &Event, field: &str) -> Option<String> {
        let o = &ev.involved_object;
        let v = |s: &Option<String>| Some(s.clone().unwrap_or_default());
        match field {
            "involvedObject.kind" => v(&o.kind),
            "involvedObject.namespace" => v(&o.namespace),
            "involvedObject.name" => v(&o.name),
            "involvedObject.uid" => v(&o.uid),
            "involvedObject.apiVersion" => v(&o.api_version),
            "involvedObject.resourceVersion" => v(&o.resource_version),
            "involvedObject.fieldPath" => v(&o.field_path),
            "reason" => v(&ev.reason),
            "reportingComponent" => v(&ev.reporting_component),
            "source" => Some(
                ev.source
                    .as_ref()
                    .and_then(|s| s.component.clone())
                    .unwrap_or_default(),
            ),
            "type" => v(&ev.type_),
            _ => None,
        }
    }
}

fn validate_access_modes(path: &str, modes: Option<&Vec<String>>, errs: &mut FieldErrors) {
    let modes = modes.map(Vec::as_slice).unwrap_or_default();
    if modes.is_empty() {
        errs.push(FieldError::required(
            path,
            "at least 1 access mode is required",
        ));
    }
    for m in modes {
        if !ACCESS_MODES.contains(&m.as_str()) {
            errs.push(FieldError::not_supported(path, m, ACCESS_MODES));
        }
    }
}

fn validate_storage_quantity(path: &str, value: Option<&String>, errs: &mut FieldErrors) {
    match value {
        None => errs.push(FieldError::required(path, "")),
        Some(q) => match quantity::parse(q) {
            None => errs.push(FieldError::invalid(path, q, quantity::QUANTITY_ERROR)),
            Some(v) if v.0 <= 0 => {
                errs.push(FieldError::invalid(path, q, "must be greater than zero"))
            }
            Some(_) => {}
        },
    }
}

/// `v1` PersistentVolume: cluster-scoped, `status` subresource.
#[derive(Debug, Default, Clone, Copy)]
pub struct PersistentVolumeStrategy;

impl Strategy for PersistentVolumeStrategy {
    fn returns_deleted_object(&self) -> bool {
        true
    }

    type Object = PersistentVolume;

    fn warnings(&self, new: &PersistentVolume, _old: Option<&PersistentVolume>) -> Vec<String> {
        crate::warnings::persistent_volume(new)
    }

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: "",
            kind: "PersistentVolume",
            resource: "persistentvolumes",
            short_names: &["pv"],
            namespaced: false,
        }
        .v1()
    }

    fn default(&self, pv: &mut PersistentVolume) {
        let spec = pv.spec.get_or_insert_with(Default::default);
        spec.persistent_volume_reclaim_policy
            .get_or_insert_with(|| "Retain".into());
        spec.volume_mode.get_or_insert_with(|| "Filesystem".into());
        if let Some(host_path) = spec.host_path.as_mut() {
            host_path.type_.get_or_insert_with(String::new);
        }
    }

    fn prepare_for_create(&self, pv: &mut PersistentVolume) {
        pv.status = Some(PersistentVolumeStatus {
            phase: Some("Pending".into()),
            last_phase_transition_time: Some(capstan_meta::time::now()),
            ..Default::default()
        });
    }

    fn validate(&self, pv: &PersistentVolume) -> FieldErrors {
        let mut errs = Vec::new();
        let spec = pv.spec.clone().unwrap_or_default();
        validate_access_modes("spec.accessModes", spec.access_modes.as_ref(), &mut errs);
        let storage = spec
            .capacity
            .as_ref()
            .and_then(|c| c.get("storage"))
            .map(|q| q.0.clone());
        validate_storage_quantity("spec.capacity[storage]", storage.as_ref(), &mut errs);
        let policies = ["Retain", "Delete", "Recycle"];
        if let Some(p) = spec.persistent_volume_reclaim_policy.as_deref()
            && !policies.contains(&p)
        {
            errs.push(FieldError::not_supported(
                "spec.persistentVolumeReclaimPolicy",
                p,
                &policies,
            ));
        }
        errs
    }

    fn validate_update(&self, new: &PersistentVolume, old: &PersistentVolume) -> FieldErrors {
        let mut errs = self.validate(new);
        let mode = |pv: &PersistentVolume| pv.spec.as_ref().and_then(|s| s.volume_mode.clone());
        if mode(new) != mode(old) {
            errs.push(FieldError::invalid(
                "spec.volumeMode",
                &mode(new).unwrap_or_default(),
                "field is immutable",
            ));
        }
        errs
    }

    fn has_status(&self) -> bool {
        true
    }

    fn copy_status(&self, to: &mut PersistentVolume, from: &PersistentVolume) {
        to.status = from.status.clone();
    }
}

/// `v1` PersistentVolumeClaim: `status` subresource; the spec is immutable except
/// `resources.requests`, `volumeAttributesClassName` and a first `volumeName`.
#[derive(Debug, Default, Clone, Copy)]
pub struct PersistentVolumeClaimStrategy;

impl Strategy for PersistentVolumeClaimStrategy {
    fn returns_deleted_object(&self) -> bool {
        true
    }

    type Object = PersistentVolumeClaim;

    fn warnings(
        &self,
        new: &PersistentVolumeClaim,
        _old: Option<&PersistentVolumeClaim>,
    ) -> Vec<String> {
        crate::warnings::persistent_volume_claim(new)
    }

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: "",
            kind: "PersistentVolumeClaim",
            resource: "persistentvolumeclaims",
            short_names: &["pvc"],
            namespaced: true,
        }
        .v1()
    }

    fn default(&self, pvc: &mut PersistentVolumeClaim) {
        let spec = pvc.spec.get_or_insert_with(Default::default);
        spec.volume_mode.get_or_insert_with(|| "Filesystem".into());
    }

    fn prepare_for_create(&self, pvc: &mut PersistentVolumeClaim) {
        pvc.status = Some(PersistentVolumeClaimStatus {
            phase: Some("Pending".into()),
            ..Default::default()
        });
    }

    fn validate(&self, pvc: &PersistentVolumeClaim) -> FieldErrors {
        let mut errs = Vec::new();
        let spec = pvc.spec.clone().unwrap_or_default();
        validate_access_modes("spec.accessModes", spec.access_modes.as_ref(), &mut errs);
        let storage = spec
            .resources
            .as_ref()
            .and_then(|r| r.requests.as_ref())
            .and_then(|r| r.get("storage"))
            .map(|q| q.0.clone());
        validate_storage_quantity("spec.resources[storage]", storage.as_ref(), &mut errs);
        errs
    }

    fn validate_update(
        &self,
        new: &PersistentVolumeClaim,
        old: &PersistentVolumeClaim,
    ) -> FieldErrors {
        let mut errs = self.validate(new);
        let mut comparable = new.spec.clone().unwrap_or_default();
        let old_spec = old.spec.clone().unwrap_or_default();
        comparable.resources = old_spec.resources.clone();
        comparable.volume_attributes_class_name = old_spec.volume_attributes_class_name.clone();
        if old_spec.volume_name.as_deref().unwrap_or("").is_empty() {
            comparable.volume_name = old_spec.volume_name.clone();
        }
        if comparable != old_spec {
            errs.push(FieldError::forbidden(
                "spec",
                "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims",
            ));
        }
        errs
    }

    fn has_status(&self) -> bool {
        true
    }

    fn copy_status(&self, to: &mut PersistentVolumeClaim, from: &PersistentVolumeClaim) {
        to.status = from.status.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cm(v: serde_json::Value) -> ConfigMap {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn immutable_config_maps_keep_their_data_and_the_flag() {
        let old = cm(
            serde_json::json!({"metadata": {"name": "c"}, "data": {"a": "1"}, "immutable": true}),
        );
        assert!(ConfigMapStrategy.validate_update(&old, &old).is_empty());
        let changed = cm(serde_json::json!({"metadata": {"name": "c"}, "data": {"a": "2"}}));
        let fields: Vec<String> = ConfigMapStrategy
            .validate_update(&changed, &old)
            .into_iter()
            .map(|e| e.field)
            .collect();
        assert_eq!(fields, ["immutable", "data"]);
        let mutable = cm(serde_json::json!({"metadata": {"name": "c"}, "data": {"a": "1"}}));
        assert!(
            ConfigMapStrategy
                .validate_update(&changed, &mutable)
                .is_empty()
        );
        let bad_key =
            cm(serde_json::json!({"metadata": {"name": "c"}, "data": {"a b": "1", "..": "x"}}));
        assert_eq!(ConfigMapStrategy.validate(&bad_key).len(), 2);
    }

    #[test]
    fn secrets_fold_string_data_and_require_their_type_keys() {
        let mut s: Secret = serde_json::from_value(serde_json::json!({
            "metadata": {"name": "s"}, "type": "kubernetes.io/tls", "stringData": {"tls.crt": "c"}
        }))
        .unwrap();
        SecretStrategy.default(&mut s);
        assert!(s.string_data.is_none());
        assert_eq!(s.data.as_ref().unwrap()["tls.crt"].0, b"c");
        let errs = SecretStrategy.validate(&s);
        assert_eq!(errs.len(), 1);
        assert_eq!(errs[0].field, "data[tls.key]");
    }
}
