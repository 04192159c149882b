//! `networking.k8s.io/v1`: IngressClass, naming the controller that implements a class of
//! Ingresses (the DefaultIngressClass admission plugin picks the default one).

use capstan_meta::validation::dns1123_subdomain;
use capstan_meta::{FieldError, FieldErrors, ResourceDescriptor, Strategy};
use k8s_openapi::api::networking::v1::IngressClass;

use crate::describe::Names;

/// Longest controller name.
const MAX_CONTROLLER: usize = 250;

/// The strategy of IngressClass: `spec.controller` a domain-prefixed path, immutable;
/// parameters with a kind and name, and a namespace exactly when their scope is `Namespace`.
#[derive(Debug, Default, Clone, Copy)]
pub struct IngressClassStrategy;

fn domain_prefixed_path(value: &str) -> Option<String> {
    let Some((domain, path)) = value.split_once('/') else {
        return Some("must be a domain-prefixed path (such as \"acme.io/foo\")".into());
    };
    if domain.is_empty() || path.is_empty() || !dns1123_subdomain(domain).is_empty() {
        return Some("must be a domain-prefixed path (such as \"acme.io/foo\")".into());
    }
    None
}

impl Strategy for IngressClassStrategy {
    type Object = IngressClass;

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: "networking.k8s.io",
            kind: "IngressClass",
            resource: "ingressclasses",
            short_names: &[],
            namespaced: false,
        }
        .v1()
    }

    fn validate(&self, class: &IngressClass) -> FieldErrors {
        let mut errs = Vec::new();
        let spec = class.spec.clone().unwrap_or_default();
        let controller = spec.controller.unwrap_or_default();
        if controller.is_empty() {
            errs.push(FieldError::required("spec.controller", ""));
        } else if controller.len() > MAX_CONTROLLER {
            errs.push(FieldError::too_long("spec.controller", MAX_CONTROLLER));
        } else if let Some(why) = domain_prefixed_path(&controller) {
            errs.push(FieldError::invalid("spec.controller", &controller, why));
        }
        if let Some(p) = spec.parameters {
            if p.kind.is_empty() {
                errs.push(FieldError::required("spec.parameters.kind", ""));
            }
            if p.name.is_empty() {
                errs.push(FieldError::required("spec.parameters.name", ""));
            }
            match p.scope.as_deref() {
                Some("Cluster") | None if p.namespace.is_some() => {
                    errs.push(FieldError::forbidden(
                        "spec.parameters.namespace",
                        "`parameters.scope` is set to 'Cluster'",
                    ))
                }
                Some("Namespace") if p.namespace.as_deref().unwrap_or("").is_empty() => {
                    errs.push(FieldError::required(
                        "spec.parameters.namespace",
                        "`parameters.scope` is set to 'Namespace'",
                    ))
                }
                Some("Cluster" | "Namespace") | None => {}
                Some(other) => errs.push(FieldError::not_supported(
                    "spec.parameters.scope",
                    other,
                    &["Cluster", "Namespace"],
                )),
            }
        }
        errs
    }

    fn validate_update(&self, new: &IngressClass, old: &IngressClass) -> FieldErrors {
        let mut errs = self.validate(new);
        let controller = |c: &IngressClass| c.spec.as_ref().and_then(|s| s.controller.clone());
        if controller(new) != controller(old) {
            errs.push(FieldError::invalid(
                "spec.controller",
                controller(new).as_deref().unwrap_or(""),
                "field is immutable",
            ));
        }
        errs
    }
}
