//! `node.k8s.io/v1`: RuntimeClass, the container runtime configuration a pod names
//! (`spec.runtimeClassName`), with its pod overhead and scheduling constraints.

use capstan_meta::validation::{dns1123_label, labels};
use capstan_meta::{FieldError, FieldErrors, ResourceDescriptor, Strategy};
use k8s_openapi::api::node::v1::RuntimeClass;

use crate::describe::Names;

/// The strategy of RuntimeClass: `handler` is a DNS label and immutable; overhead quantities
/// and scheduling node selectors are checked.
#[derive(Debug, Default, Clone, Copy)]
pub struct RuntimeClassStrategy;

impl Strategy for RuntimeClassStrategy {
    type Object = RuntimeClass;

    fn warnings(&self, new: &RuntimeClass, _old: Option<&RuntimeClass>) -> Vec<String> {
        let selector = new
            .scheduling
            .as_ref()
            .and_then(|s| s.node_selector.as_ref());
        selector
            .into_iter()
            .flatten()
            .filter_map(|(key, _)| crate::warnings::deprecated_node_label(key))
            .map(|why| format!("scheduling.nodeSelector: {why}"))
            .collect()
    }

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: "node.k8s.io",
            kind: "RuntimeClass",
            resource: "runtimeclasses",
            short_names: &[],
            namespaced: false,
        }
        .v1()
    }

    fn validate(&self, rc: &RuntimeClass) -> FieldErrors {
        let mut errs = Vec::new();
        if rc.handler.is_empty() {
            errs.push(FieldError::required("handler", ""));
        } else {
            for msg in dns1123_label(&rc.handler) {
                errs.push(FieldError::invalid("handler", &rc.handler, msg));
            }
        }
        for (name, quantity) in rc
            .overhead
            .iter()
            .flat_map(|o| o.pod_fixed.iter().flatten())
        {
            if capstan_meta::quantity::parse(&quantity.0).is_none() {
                errs.push(FieldError::invalid(
                    format!("overhead.podFixed[{name}]"),
                    &quantity.0,
                    capstan_meta::quantity::QUANTITY_ERROR,
                ));
            }
        }
        if let Some(selector) = rc
            .scheduling
            .as_ref()
            .and_then(|s| s.node_selector.as_ref())
        {
            errs.extend(labels("scheduling.nodeSelector", selector));
        }
        errs
    }

    fn validate_update(&self, new: &RuntimeClass, old: &RuntimeClass) -> FieldErrors {
        let mut errs = self.validate(new);
        if new.handler != old.handler {
            errs.push(FieldError::invalid(
                "handler",
                &new.handler,
                "field is immutable",
            ));
        }
        errs
    }
}
