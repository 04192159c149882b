//! `storage.k8s.io/v1`: StorageClass.

use std::collections::{BTreeMap, BTreeSet};

use capstan_meta::resource::STANDARD_VERBS;
use capstan_meta::validation;
use capstan_meta::{FieldError, FieldErrors, ResourceDescriptor, Strategy};
use k8s_openapi::api::core::v1::TopologySelectorTerm;
use k8s_openapi::api::storage::v1::StorageClass;

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
                errs.push(FieldError::invalid(
                    format!("{path}.allocatable.count"),
                    &count.to_string(),
                    "must be greater than or equal to 0",
                ));
            }
        }
        errs
    }

    fn validate_update(&self, new: &Self::Object, _old: &Self::Object) -> FieldErrors {
        self.validate(new)
    }
}
