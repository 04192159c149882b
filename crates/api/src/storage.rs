//! `storage.k8s.io/v1`: StorageClass, CSINode, CSIDriver, VolumeAttachment,
//! CSIStorageCapacity.

use std::collections::{BTreeMap, BTreeSet};

use capstan_meta::resource::STANDARD_VERBS;
use capstan_meta::validation;
use capstan_meta::{FieldError, FieldErrors, ResourceDescriptor, Strategy};
use k8s_openapi::api::core::v1::TopologySelectorTerm;
use k8s_openapi::api::storage::v1::{StorageClass, VolumeAttributesClass};

use crate::describe::Names;

/// Reclaim policies a StorageClass may name.
pub const RECLAIM_POLICIES: &[&str] = &["Delete", "Retain"];
/// Volume binding modes a StorageClass may name.
pub const BINDING_MODES: &[&str] = &["Immediate", "WaitForFirstConsumer"];
/// Upper bound of the total size of `parameters` (keys and values).
pub const MAX_PARAMETERS_BYTES: usize = 256 * 1024;

/// The strategy of `storage.k8s.io/v1` StorageClass: cluster-scoped, short name `sc`.
#[derive(Debug, Default, Clone, Copy)]
pub struct StorageClassStrategy;

impl Strategy for StorageClassStrategy {
    fn returns_deleted_object(&self) -> bool {
        true
    }

    type Object = StorageClass;

    fn descriptor(&self) -> ResourceDescriptor {
        ResourceDescriptor {
            group: "storage.k8s.io".into(),
            version: "v1".into(),
            kind: "StorageClass".into(),
            resource: "storageclasses".into(),
            singular: "storageclass".into(),
            short_names: vec!["sc".into()],
            categories: vec![],
            namespaced: false,
            verbs: STANDARD_VERBS.iter().map(|v| v.to_string()).collect(),
            columns: crate::printers::storage_classes(),
            ..Default::default()
        }
    }

    fn default(&self, sc: &mut StorageClass) {
        sc.reclaim_policy.get_or_insert_with(|| "Delete".into());
        sc.volume_binding_mode
            .get_or_insert_with(|| "Immediate".into());
    }

    fn validate(&self, sc: &StorageClass) -> FieldErrors {
        let mut errs = Vec::new();
        validate_provisioner(&sc.provisioner, &mut errs);
        if let Some(params) = &sc.parameters {
            validate_parameters(params, &mut errs);
        }
        match sc.reclaim_policy.as_deref() {
            None => errs.push(FieldError::required("reclaimPolicy", "")),
            Some(p) if !RECLAIM_POLICIES.contains(&p) => errs.push(FieldError::not_supported(
                "reclaimPolicy",
                p,
                RECLAIM_POLICIES,
            )),
            Some(_) => {}
        }
        match sc.volume_binding_mode.as_deref() {
            None => errs.push(FieldError::required("volumeBindingMode", "")),
            Some(m) if !BINDING_MODES.contains(&m) => errs.push(FieldError::not_supported(
                "volumeBindingMode",
                m,
                BINDING_MODES,
            )),
            Some(_) => {}
        }
        if let Some(terms) = &sc.allowed_topologies {
            validate_allowed_topologies(terms, &mut errs);
        }
        errs
    }

    fn validate_update(&self, new: &StorageClass, old: &StorageClass) -> FieldErrors {
        let mut errs = self.validate(new);
        if new.parameters.clone().unwrap_or_default() != old.parameters.clone().unwrap_or_default()
        {
            errs.push(FieldError::forbidden(
                "parameters",
                "updates to parameters are forbidden.",
            ));
        }
        if new.provisioner != old.provisioner {
            errs.push(FieldError::forbidden(
                "provisioner",
                "updates to provisioner are forbidden.",
            ));
        }
        if new.reclaim_policy != old.reclaim_policy {
            errs.push(FieldError::forbidden(
                "reclaimPolicy",
                "updates to reclaimPolicy are forbidden.",
            ));
        }
        if new.volume_binding_mode != old.volume_binding_mode {
            errs.push(FieldError::invalid(
                "volumeBindingMode",
                new.volume_binding_mode.as_deref().unwrap_or(""),
                "field is immutable",
            ));
        }
        errs
    }
}

fn validate_provisioner(provisioner: &str, errs: &mut FieldErrors) {
    if provisioner.is_empty() {
        errs.push(FieldError::required("provisioner", ""));
        return;
    }
    for msg in validation::qualified_name(&provisioner.to_ascii_lowercase()) {
        errs.push(FieldError::invalid("provisioner", provisioner, msg));
    }
}

fn validate_parameters(params: &BTreeMap<String, String>, errs: &mut FieldErrors) {
    let mut total = 0;
    for (k, v) in params {
        if k.is_empty() {
            errs.push(FieldError::invalid("parameters", k, "key may not be empty"));
        }
        total += k.len() + v.len();
    }
    if total > MAX_PARAMETERS_BYTES {
        errs.push(FieldError::too_long("parameters", MAX_PARAMETERS_BYTES));
    }
}

/// Each term's requirements need a valid label key, at least one value, no repeated values
/// and no repeated keys; no two terms may be the same.
fn validate_allowed_topologies(terms: &[TopologySelectorTerm], errs: &mut FieldErrors) {
    let mut seen: Vec<BTreeMap<String, BTreeSet<String>>> = Vec::new();
    for (i, term) in terms.iter().enumerate() {
        let term_path = format!("allowedTopologies[{i}]");
        let mut by_key: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (j, req) in term.match_label_expressions.iter().flatten().enumerate() {
            let path = format!("{term_path}.matchLabelExpressions[{j}]");
            if req.values.is_empty() {
                errs.push(FieldError::required(format!("{path}.values"), ""));
            }
            let mut values = BTreeSet::new();
            for (k, value) in req.values.iter().enumerate() {
                if !values.insert(value.clone()) {
                    errs.push(FieldError::duplicate(format!("{path}.values[{k}]"), value));
                }
            }
            for msg in validation::qualified_name(&req.key) {
                errs.push(FieldError::invalid(format!("{path}.key"), &req.key, msg));
            }
            if by_key.insert(req.key.clone(), values).is_some() {
                errs.push(FieldError::duplicate(format!("{path}.key"), &req.key));
            }
        }
        if seen.contains(&by_key) {
            errs.push(FieldError::duplicate(
                format!("{term_path}.matchLabelExpressions"),
                "",
            ));
        }
        seen.push(by_key);
    }
}

/// The strategy of VolumeAttributesClass: a CSI driver's name and the parameters it applies
/// to volumes of the class, neither of which may change.
#[derive(Debug, Default, Clone, Copy)]
pub struct VolumeAttributesClassStrategy;

impl Strategy for VolumeAttributesClassStrategy {
    type Object = VolumeAttributesClass;

    fn descriptor(&self) -> ResourceDescriptor {
        let mut d = Names {
            group: "storage.k8s.io",
            kind: "VolumeAttributesClass",
            resource: "volumeattributesclasses",
            short_names: &["vac"],
            namespaced: false,
        }
        .v1();
        d.columns = crate::printers::volume_attributes_classes();
        d
    }

    fn validate(&self, vac: &VolumeAttributesClass) -> FieldErrors {
        let mut errs = Vec::new();
        let mut driver = Vec::new();
        validate_provisioner(&vac.driver_name, &mut driver);
        errs.extend(driver.into_iter().map(|mut e| {
            e.field = "driverName".into();
            e
        }));
        validate_parameters(
            vac.parameters.as_ref().unwrap_or(&BTreeMap::new()),
            &mut errs,
        );
        errs
    }

    fn validate_update(
        &self,
        new: &VolumeAttributesClass,
        old: &VolumeAttributesClass,
    ) -> FieldErrors {
        let mut errs = Vec::new();
        if new.driver_name != old.driver_name {
            errs.push(FieldError::forbidden(
                "driverName",
                "updates to driverName are forbidden.",
            ));
        }
        if new.parameters != old.parameters {
            errs.push(FieldError::forbidden(
                "parameters",
                "updates to parameters are forbidden.",
            ));
        }
        errs.extend(self.validate(new));
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sc(json: serde_json::Value) -> StorageClass {
        let mut sc: StorageClass = serde_json::from_value(json).unwrap();
        StorageClassStrategy.default(&mut sc);
        sc
    }

    fn fields(errs: &FieldErrors) -> Vec<String> {
        errs.iter()
            .map(|e| format!("{}:{}", e.field, e.kind.reason()))
            .collect()
    }

    #[test]
    fn defaults_reclaim_policy_and_binding_mode() {
        let s = sc(serde_json::json!({"metadata": {"name": "a"}, "provisioner": "x.io/y"}));
        assert_eq!(s.reclaim_policy.as_deref(), Some("Delete"));
        assert_eq!(s.volume_binding_mode.as_deref(), Some("Immediate"));
        assert!(StorageClassStrategy.validate(&s).is_empty());
    }

    #[test]
    fn rejects_bad_fields_with_one_cause_each() {
        let s = sc(serde_json::json!({
            "metadata": {"name": "a"},
            "provisioner": "not a/valid/name",
            "reclaimPolicy": "Recycle",
            "volumeBindingMode": "Later",
            "parameters": {"": "x"},
            "allowedTopologies": [
                {"matchLabelExpressions": [{"key": "zone", "values": []}, {"key": "zone", "values": ["a", "a"]}]},
                {"matchLabelExpressions": [{"key": "bad key!", "values": ["a"]}]},
                {"matchLabelExpressions": [{"key": "bad key!", "values": ["a"]}]}
            ]
        }));
        let got = fields(&StorageClassStrategy.validate(&s));
        for want in [
            "provisioner:FieldValueInvalid",
            "reclaimPolicy:FieldValueNotSupported",
            "volumeBindingMode:FieldValueNotSupported",
            "parameters:FieldValueInvalid",
            "allowedTopologies[0].matchLabelExpressions[0].values:FieldValueRequired",
            "allowedTopologies[0].matchLabelExpressions[1].values[1]:FieldValueDuplicate",
            "allowedTopologies[0].matchLabelExpressions[1].key:FieldValueDuplicate",
            "allowedTopologies[1].matchLabelExpressions[0].key:FieldValueInvalid",
            "allowedTopologies[2].matchLabelExpressions:FieldValueDuplicate",
        ] {
            assert!(got.contains(&want.to_string()), "missing {want} in {got:?}");
        }
        let missing = sc(serde_json::json!({"metadata": {"name": "a"}}));
        assert_eq!(
            fields(&StorageClassStrategy.validate(&missing)),
            ["provisioner:FieldValueRequired"]
        );
    }

    #[test]
    fn immutable_fields() {
        let old = sc(
            serde_json::json!({"metadata": {"name": "a"}, "provisioner": "x.io/y", "parameters": {"t": "1"}}),
        );
        let mut new = old.clone();
        new.allow_volume_expansion = Some(true);
        new.mount_options = Some(vec!["ro".into()]);
        assert!(
            StorageClassStrategy.validate_update(&new, &old).is_empty(),
            "mutable fields may change"
        );
        new.provisioner = "x.io/z".into();
        new.parameters = None;
        new.reclaim_policy = Some("Retain".into());
        new.volume_binding_mode = Some("WaitForFirstConsumer".into());
        let got = fields(&StorageClassStrategy.validate_update(&new, &old));
        assert_eq!(
            got,
            [
                "parameters:FieldValueForbidden",
                "provisioner:FieldValueForbidden",
                "reclaimPolicy:FieldValueForbidden",
                "volumeBindingMode:FieldValueInvalid"
            ]
        );
    }
}

/// The strategy of `storage.k8s.io/v1` CSINode: cluster-scoped, one object per node naming
/// its CSI drivers (and their volume limits).
#[derive(Debug, Default, Clone, Copy)]
pub struct CsiNodeStrategy;

impl Strategy for CsiNodeStrategy {
    type Object = k8s_openapi::api::storage::v1::CSINode;

    fn descriptor(&self) -> ResourceDescriptor {
        crate::describe::Names {
            group: "storage.k8s.io",
            kind: "CSINode",
            resource: "csinodes",
            short_names: &[],
            namespaced: false,
        }
        .v1()
    }

    fn validate(&self, node: &Self::Object) -> FieldErrors {
        let mut errs = Vec::new();
        let mut seen = BTreeSet::new();
        for (i, d) in node.spec.drivers.iter().enumerate() {
            let path = format!("spec.drivers[{i}]");
            if d.name.is_empty() {
                errs.push(FieldError::required(format!("{path}.name"), ""));
            } else if !seen.insert(d.name.as_str()) {
                errs.push(FieldError::duplicate(format!("{path}.name"), &d.name));
            }
            if d.node_id.is_empty() {
                errs.push(FieldError::required(format!("{path}.nodeID"), ""));
            }
            if let Some(count) = d.allocatable.as_ref().and_then(|a| a.count)
                && count < 0
            {
                errs.push(FieldError::negative(
                    format!("{path}.allocatable.count"),
                    i64::from(count),
                ));
            }
        }
        errs
    }

    fn validate_update(&self, new: &Self::Object, _old: &Self::Object) -> FieldErrors {
        self.validate(new)
    }
}

/// The strategy of CSIDriver: upstream's defaults, known policies and modes, and the fields
/// fixed at create.
#[derive(Debug, Default, Clone, Copy)]
pub struct CsiDriverStrategy;

impl Strategy for CsiDriverStrategy {
    fn returns_deleted_object(&self) -> bool {
        true
    }

    type Object = k8s_openapi::api::storage::v1::CSIDriver;

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: "storage.k8s.io",
            kind: "CSIDriver",
            resource: "csidrivers",
            short_names: &[],
            namespaced: false,
        }
        .v1()
    }

    fn default(&self, d: &mut Self::Object) {
        let spec = &mut d.spec;
        spec.attach_required.get_or_insert(true);
        spec.pod_info_on_mount.get_or_insert(false);
        spec.storage_capacity.get_or_insert(false);
        spec.requires_republish.get_or_insert(false);
        spec.se_linux_mount.get_or_insert(false);
        spec.fs_group_policy
            .get_or_insert_with(|| "ReadWriteOnceWithFSType".into());
        spec.volume_lifecycle_modes
            .get_or_insert_with(|| vec!["Persistent".into()]);
    }

    fn name_rule(&self) -> fn(&str) -> Vec<String> {
        |name| {
            let mut why = validation::dns1123_subdomain(name);
            if name.len() > 63 {
                why.push("must be no more than 63 characters".into());
            }
            why
        }
    }

    fn validate(&self, d: &Self::Object) -> FieldErrors {
        let mut errs = Vec::new();
        let spec = &d.spec;
        if let Some(p) = spec.fs_group_policy.as_deref()
            && !matches!(p, "ReadWriteOnceWithFSType" | "File" | "None")
        {
            errs.push(FieldError::not_supported(
                "spec.fsGroupPolicy",
                p,
                &["File", "None", "ReadWriteOnceWithFSType"],
            ));
        }
        for (i, mode) in spec.volume_lifecycle_modes.iter().flatten().enumerate() {
            if !matches!(mode.as_str(), "Persistent" | "Ephemeral") {
                errs.push(FieldError::not_supported(
                    format!("spec.volumeLifecycleModes[{i}]"),
                    mode,
                    &["Ephemeral", "Persistent"],
                ));
            }
        }
        let mut audiences = Vec::new();
        for (i, t) in spec.token_requests.iter().flatten().enumerate() {
            if audiences.contains(&t.audience) {
                errs.push(FieldError::duplicate(
                    format!("spec.tokenRequests[{i}].audience"),
                    &t.audience,
                ));
            }
            audiences.push(t.audience.clone());
            if let Some(s) = t.expiration_seconds
                && s < 600
            {
                errs.push(FieldError::invalid_raw(
                    format!("spec.tokenRequests[{i}].expirationSeconds"),
                    s.to_string(),
                    "may not specify a duration less than 10 minutes",
                ));
            }
        }
        errs
    }

    fn validate_update(&self, new: &Self::Object, old: &Self::Object) -> FieldErrors {
        let mut errs = self.validate(new);
        if new.spec.attach_required != old.spec.attach_required {
            errs.push(FieldError::invalid(
                "spec.attachRequired",
                "",
                "field is immutable",
            ));
        }
        if new.spec.volume_lifecycle_modes != old.spec.volume_lifecycle_modes {
            errs.push(FieldError::invalid(
                "spec.volumeLifecycleModes",
                "",
                "field is immutable",
            ));
        }
        errs
    }
}

/// The strategy of VolumeAttachment: an attacher, a node and one source; the spec fixed.
#[derive(Debug, Default, Clone, Copy)]
pub struct VolumeAttachmentStrategy;

impl Strategy for VolumeAttachmentStrategy {
    type Object = k8s_openapi::api::storage::v1::VolumeAttachment;

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: "storage.k8s.io",
            kind: "VolumeAttachment",
            resource: "volumeattachments",
            short_names: &[],
            namespaced: false,
        }
        .v1()
    }

    fn prepare_for_create(&self, va: &mut Self::Object) {
        va.status = None;
    }

    fn validate(&self, va: &Self::Object) -> FieldErrors {
        let mut errs = Vec::new();
        let spec = &va.spec;
        if spec.attacher.is_empty() {
            errs.push(FieldError::required("spec.attacher", ""));
        } else {
            for why in validation::dns1123_subdomain(&spec.attacher) {
                errs.push(FieldError::invalid("spec.attacher", &spec.attacher, why));
            }
        }
        if spec.node_name.is_empty() {
            errs.push(FieldError::required("spec.nodeName", ""));
        } else {
            for why in validation::dns1123_subdomain(&spec.node_name) {
                errs.push(FieldError::invalid("spec.nodeName", &spec.node_name, why));
            }
        }
        let source = &spec.source;
        match (
            source
                .persistent_volume_name
                .as_deref()
                .filter(|n| !n.is_empty()),
            &source.inline_volume_spec,
        ) {
            (Some(_), Some(_)) => errs.push(FieldError::forbidden(
                "spec.source",
                "must specify exactly one of inlineVolumeSpec and persistentVolumeName",
            )),
            (None, None) => errs.push(FieldError::required(
                "spec.source",
                "must specify exactly one of inlineVolumeSpec and persistentVolumeName",
            )),
            _ => {}
        }
        errs
    }

    fn validate_update(&self, new: &Self::Object, old: &Self::Object) -> FieldErrors {
        let mut errs = self.validate(new);
        if new.spec != old.spec {
            errs.push(FieldError::invalid("spec", "", "field is immutable"));
        }
        errs
    }

    fn has_status(&self) -> bool {
        true
    }

    fn copy_status(&self, to: &mut Self::Object, from: &Self::Object) {
        to.status = from.status.clone();
    }
}

/// The strategy of CSIStorageCapacity: a storage class and non-negative sizes.
#[derive(Debug, Default, Clone, Copy)]
pub struct CsiStorageCapacityStrategy;

impl Strategy for CsiStorageCapacityStrategy {
    type Object = k8s_openapi::api::storage::v1::CSIStorageCapacity;

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: "storage.k8s.io",
            kind: "CSIStorageCapacity",
            resource: "csistoragecapacities",
            short_names: &[],
            namespaced: true,
        }
        .v1()
    }

    fn validate(&self, c: &Self::Object) -> FieldErrors {
        let mut errs = Vec::new();
        if c.storage_class_name.is_empty() {
            errs.push(FieldError::required("storageClassName", ""));
        } else {
            for why in validation::dns1123_subdomain(&c.storage_class_name) {
                errs.push(FieldError::invalid(
                    "storageClassName",
                    &c.storage_class_name,
                    why,
                ));
            }
        }
        crate::admissionregistration::validate_selector(
            &mut errs,
            "nodeTopology",
            c.node_topology.as_ref(),
        );
        for (field, q) in [
            ("capacity", &c.capacity),
            ("maximumVolumeSize", &c.maximum_volume_size),
        ] {
            if let Some(q) = q
                && capstan_meta::quantity::parse(&q.0).is_none_or(|m| m.0 < 0)
            {
                errs.push(FieldError::invalid(
                    field,
                    &q.0,
                    "must be greater than or equal to 0",
                ));
            }
        }
        errs
    }

    fn validate_update(&self, new: &Self::Object, old: &Self::Object) -> FieldErrors {
        let mut errs = self.validate(new);
        if new.storage_class_name != old.storage_class_name {
            errs.push(FieldError::invalid(
                "storageClassName",
                &new.storage_class_name,
                "field is immutable",
            ));
        }
        if new.node_topology != old.node_topology {
            errs.push(FieldError::invalid(
                "nodeTopology",
                "",
                "field is immutable",
            ));
        }
        errs
    }
}

#[cfg(test)]
mod csi_tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn csi_drivers_default_and_attachments_name_one_source() {
        let mut d: k8s_openapi::api::storage::v1::CSIDriver =
            serde_json::from_value(json!({"metadata": {"name": "ebs.csi.aws.com"}, "spec": {}}))
                .unwrap();
        CsiDriverStrategy.default(&mut d);
        assert_eq!(d.spec.attach_required, Some(true));
        assert_eq!(
            d.spec.volume_lifecycle_modes.as_deref(),
            Some(&["Persistent".to_string()][..])
        );
        assert!(CsiDriverStrategy.validate(&d).is_empty());
        let va: k8s_openapi::api::storage::v1::VolumeAttachment = serde_json::from_value(json!({
            "metadata": {"name": "a"},
            "spec": {"attacher": "ebs.csi.aws.com", "nodeName": "n1", "source": {}},
        }))
        .unwrap();
        let fields: Vec<String> = VolumeAttachmentStrategy
            .validate(&va)
            .into_iter()
            .map(|e| e.field)
            .collect();
        assert_eq!(fields, ["spec.source"]);
    }
}
