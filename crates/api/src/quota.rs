//! Core `ResourceQuota`: hard limits on what a namespace may hold, with the usage the
//! quota controller and the ResourceQuota admission plugin keep in its status.

use capstan_meta::quantity;
use capstan_meta::validation::qualified_name;
use capstan_meta::{FieldError, FieldErrors, ResourceDescriptor, Strategy};
use k8s_openapi::api::core::v1::ResourceQuota;

use crate::describe::Names;

/// The scopes a quota may name.
const SCOPES: [&str; 6] = [
    "BestEffort",
    "CrossNamespacePodAffinity",
    "NotBestEffort",
    "NotTerminating",
    "PriorityClass",
    "Terminating",
];

/// The strategy of ResourceQuota (status written through `resourcequotas/status`).
#[derive(Debug, Default, Clone, Copy)]
pub struct ResourceQuotaStrategy;

impl Strategy for ResourceQuotaStrategy {
    fn returns_deleted_object(&self) -> bool {
        true
    }

    type Object = ResourceQuota;

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: "",
            kind: "ResourceQuota",
            resource: "resourcequotas",
            short_names: &["quota"],
            namespaced: true,
        }
        .v1()
    }

    fn prepare_for_create(&self, quota: &mut ResourceQuota) {
        quota.status = None;
    }

    fn validate(&self, quota: &ResourceQuota) -> FieldErrors {
        let mut errs = Vec::new();
        let spec = quota.spec.clone().unwrap_or_default();
        for (resource, q) in spec.hard.iter().flatten() {
            let at = format!("spec.hard[{resource}]");
            let name = resource.strip_prefix("count/").unwrap_or(resource);
            if !qualified_name(name).is_empty() && !name.contains('.') {
                errs.push(FieldError::invalid(
                    &at,
                    resource,
                    "must be a standard resource for quota",
                ));
            }
            match quantity::parse(&q.0) {
                None => errs.push(FieldError::invalid(&at, &q.0, quantity::QUANTITY_ERROR)),
                Some(m) if m.0 < 0 => errs.push(FieldError::invalid(
                    &at,
                    &q.0,
                    "must be greater than or equal to 0",
                )),
                Some(_) => {}
            }
        }
        let mut named: Vec<String> = Vec::new();
        for (i, scope) in spec.scopes.iter().flatten().enumerate() {
            if !SCOPES.contains(&scope.as_str()) {
                errs.push(FieldError::not_supported(
                    format!("spec.scopes[{i}]"),
                    scope,
                    &SCOPES,
                ));
            }
            named.push(scope.clone());
        }
        let expressions = spec
            .scope_selector
            .as_ref()
            .and_then(|s| s.match_expressions.clone())
            .unwrap_or_default();
        for (i, e) in expressions.iter().enumerate() {
            let at = format!("spec.scopeSelector.matchExpressions[{i}]");
            if !SCOPES.contains(&e.scope_name.as_str()) {
                errs.push(FieldError::not_supported(
                    format!("{at}.scopeName"),
                    &e.scope_name,
                    &SCOPES,
                ));
            }
            let values = e.values.as_deref().unwrap_or_default();
            match e.operator.as_str() {
                "In" | "NotIn" if values.is_empty() => errs.push(FieldError::required(
                    format!("{at}.values"),
                    "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
                )),
                "Exists" | "DoesNotExist" if !values.is_empty() => errs.push(FieldError::invalid(
                    format!("{at}.values"),
                    &values.join(","),
                    "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
                )),
                "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
                other => errs.push(FieldError::not_supported(
                    format!("{at}.operator"),
                    other,
                    &["DoesNotExist", "Exists", "In", "NotIn"],
                )),
            }
            named.push(e.scope_name.clone());
        }
        let has = |s: &str| named.iter().any(|n| n == s);
        for (a, b) in [
            ("BestEffort", "NotBestEffort"),
            ("Terminating", "NotTerminating"),
        ] {
            if has(a) && has(b) {
                errs.push(FieldError::invalid(
                    "spec.scopes",
                    &named.join(","),
                    format!("conflicting scopes: {a} and {b}"),
                ));
            }
        }
        if has("BestEffort") {
            for resource in spec.hard.iter().flatten().map(|(k, _)| k) {
                if !matches!(resource.as_str(), "pods" | "count/pods") {
                    errs.push(FieldError::invalid(
                        format!("spec.hard[{resource}]"),
                        resource,
                        "unsupported scope applied to resource",
                    ));
                }
            }
        }
        errs
    }

    fn validate_update(&self, new: &ResourceQuota, _old: &ResourceQuota) -> FieldErrors {
        self.validate(new)
    }

    fn has_status(&self) -> bool {
        true
    }

    fn copy_status(&self, to: &mut ResourceQuota, from: &ResourceQuota) {
        to.status = from.status.clone();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn hard_limits_and_scopes_are_checked() {
        let quota: ResourceQuota = serde_json::from_value(json!({
            "metadata": {"name": "q"},
            "spec": {"hard": {"pods": "-1", "cpu": "x", "requests.memory": "1Gi", "count/deployments.apps": "3"}, "scopes": ["BestEffort", "NotBestEffort", "Sometimes"]}
        }))
        .unwrap();
        let errs = ResourceQuotaStrategy.validate(&quota);
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        for f in [
            "spec.hard[pods]",
            "spec.hard[cpu]",
            "spec.scopes[2]",
            "spec.scopes",
            "spec.hard[requests.memory]",
        ] {
            assert!(fields.contains(&f), "{f} not in {fields:?}");
        }
        let ok: ResourceQuota = serde_json::from_value(json!({
            "metadata": {"name": "q"},
            "spec": {"hard": {"pods": "10", "requests.cpu": "4", "count/deployments.apps": "3"}}
        }))
        .unwrap();
        assert!(ResourceQuotaStrategy.validate(&ok).is_empty());
    }
}
