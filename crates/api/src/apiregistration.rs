//! `apiregistration.k8s.io/v1` APIServices: which server serves one group version, either this
//! one (`Local`, no service) or an extension API server behind a Service, reached through the
//! aggregator.

use capstan_meta::validation::{dns1035_label, dns1123_subdomain};
use capstan_meta::{FieldError, FieldErrors, ResourceDescriptor, Strategy};

use crate::describe::Names;
use k8s_openapi::kube_aggregator::pkg::apis::apiregistration::v1::{APIService, APIServiceSpec};

/// The port an APIService's service is called on when it names none.
pub const DEFAULT_SERVICE_PORT: i32 = 443;

/// The strategy of APIService: named `version.group`, with priorities among the group's and
/// the server's other versions, and TLS settings only for a service-backed one.
#[derive(Debug, Default, Clone, Copy)]
pub struct ApiServiceStrategy;

impl Strategy for ApiServiceStrategy {
    type Object = APIService;

    fn descriptor(&self) -> ResourceDescriptor {
        let mut d = Names {
            group: "apiregistration.k8s.io",
            kind: "APIService",
            resource: "apiservices",
            short_names: &[],
            namespaced: false,
        }
        .v1();
        d.categories = vec!["api-extensions".into()];
        d.columns = crate::printers::api_services();
        d
    }

    fn default(&self, api_service: &mut APIService) {
        if let Some(service) = api_service.spec.as_mut().and_then(|s| s.service.as_mut()) {
            service.port.get_or_insert(DEFAULT_SERVICE_PORT);
        }
    }

    fn prepare_for_create(&self, api_service: &mut APIService) {
        api_service.status = None;
    }

    fn name_rule(&self) -> fn(&str) -> Vec<String> {
        crate::rbac::path_segment_name
    }

    fn validate(&self, api_service: &APIService) -> FieldErrors {
        let default = APIServiceSpec::default();
        let spec = api_service.spec.as_ref().unwrap_or(&default);
        validate_spec(&api_service.metadata.name, spec)
    }

    fn validate_update(&self, new: &APIService, _old: &APIService) -> FieldErrors {
        self.validate(new)
    }

    fn has_status(&self) -> bool {
        true
    }

    fn copy_status(&self, to: &mut APIService, from: &APIService) {
        to.status = from.status.clone();
    }
}

/// The name of the APIService serving `version` of `group`: `version.group`.
pub fn api_service_name(group: &str, version: &str) -> String {
    format!("{version}.{group}")
}

fn validate_spec(name: &Option<String>, spec: &APIServiceSpec) -> FieldErrors {
    let mut errs = Vec::new();
    let group = spec.group.as_deref().unwrap_or("");
    let version = spec.version.as_deref().unwrap_or("");
    let name = name.as_deref().unwrap_or("");
    let required = api_service_name(group, version);
    if !name.is_empty() && crate::rbac::path_segment_name(name).is_empty() && name != required {
        errs.push(FieldError::invalid(
            "metadata.name",
            name,
            format!("must be `spec.version+\".\"+spec.group`: {required:?}"),
        ));
    }
    if group.is_empty() && version != "v1" {
        errs.push(FieldError::required(
            "spec.group",
            "only v1 may have an empty group and it better be legacy kube",
        ));
    }
    if !group.is_empty() {
        for why in dns1123_subdomain(group) {
            errs.push(FieldError::invalid("spec.group", group, why));
        }
    }
    for why in dns1035_label(version) {
        errs.push(FieldError::invalid("spec.version", version, why));
    }
    if !(1..=20000).contains(&spec.group_priority_minimum) {
        errs.push(FieldError::invalid_raw(
            "spec.groupPriorityMinimum",
            spec.group_priority_minimum.to_string(),
            "must be positive and less than 20000",
        ));
    }
    if !(1..=1000).contains(&spec.version_priority) {
        errs.push(FieldError::invalid_raw(
            "spec.versionPriority",
            spec.version_priority.to_string(),
            "must be positive and less than 1000",
        ));
    }
    let ca_bundle = spec.ca_bundle.as_ref().map_or(0, |b| b.0.len());
    let skip_verify = spec.insecure_skip_tls_verify.unwrap_or(false);
    let Some(service) = spec.service.as_ref() else {
        if ca_bundle > 0 {
            errs.push(FieldError::invalid(
                "spec.caBundle",
                &format!("{ca_bundle} bytes"),
                "local APIServices may not have a caBundle",
            ));
        }
        if skip_verify {
            errs.push(FieldError::invalid_raw(
                "spec.insecureSkipTLSVerify",
                "true",
                "local APIServices may not have insecureSkipTLSVerify",
            ));
        }
        return errs;
    };
    if service.namespace.as_deref().unwrap_or("").is_empty() {
        errs.push(FieldError::required("spec.service.namespace", ""));
    }
    if service.name.as_deref().unwrap_or("").is_empty() {
        errs.push(FieldError::required("spec.service.name", ""));
    }
    let port = service.port.unwrap_or(DEFAULT_SERVICE_PORT);
    if !(1..=65535).contains(&port) {
        errs.push(FieldError::invalid_raw(
            "spec.service.port",
            port.to_string(),
            "port is not valid: must be between 1 and 65535, inclusive",
        ));
    }
    if skip_verify && ca_bundle > 0 {
        errs.push(FieldError::invalid_raw(
            "spec.insecureSkipTLSVerify",
            "true",
            "may not be true if caBundle is present",
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn errors(object: serde_json::Value) -> Vec<String> {
        let mut api_service: APIService = serde_json::from_value(object).unwrap();
        ApiServiceStrategy.default(&mut api_service);
        ApiServiceStrategy
            .validate(&api_service)
            .iter()
            .map(|e| format!("{}: {}", e.field, e.detail))
            .collect()
    }

    #[test]
    fn a_service_backed_api_service_is_accepted_and_gets_port_443() {
        let mut api_service: APIService = serde_json::from_value(json!({
            "metadata": {"name": "v1alpha1.wardle.example.com"},
            "spec": {"group": "wardle.example.com", "version": "v1alpha1",
                "groupPriorityMinimum": 1000, "versionPriority": 15,
                "service": {"namespace": "wardle", "name": "api"}}
        }))
        .unwrap();
        ApiServiceStrategy.default(&mut api_service);
        assert!(ApiServiceStrategy.validate(&api_service).is_empty());
        let port = api_service.spec.unwrap().service.unwrap().port;
        assert_eq!(port, Some(443));
    }

    #[test]
    fn the_name_must_be_version_dot_group() {
        let errs = errors(json!({
            "metadata": {"name": "v1.other.io"},
            "spec": {"group": "wardle.example.com", "version": "v1",
                "groupPriorityMinimum": 1, "versionPriority": 1}
        }));
        assert_eq!(
            errs,
            ["metadata.name: must be `spec.version+\".\"+spec.group`: \"v1.wardle.example.com\""]
        );
    }

    #[test]
    fn a_local_api_service_has_no_tls_settings_and_priorities_are_bounded() {
        let errs = errors(json!({
            "metadata": {"name": "v2."},
            "spec": {"version": "v2", "groupPriorityMinimum": 0, "versionPriority": 1001,
                "caBundle": "YWJj", "insecureSkipTLSVerify": true}
        }));
        assert_eq!(
            errs,
            [
                "spec.group: only v1 may have an empty group and it better be legacy kube",
                "spec.groupPriorityMinimum: must be positive and less than 20000",
                "spec.versionPriority: must be positive and less than 1000",
                "spec.caBundle: local APIServices may not have a caBundle",
                "spec.insecureSkipTLSVerify: local APIServices may not have insecureSkipTLSVerify",
            ]
        );
    }
}
