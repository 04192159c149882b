//! `scheduling.k8s.io/v1`: PriorityClass, with the two built-in system classes.

use capstan_meta::{FieldError, FieldErrors, ResourceDescriptor, Strategy};
use k8s_openapi::api::scheduling::v1::PriorityClass;

use crate::describe::Names;
use crate::pod::SYSTEM_PRIORITY_CLASSES;

/// The highest value a user-defined class may have.
pub const HIGHEST_USER_PRIORITY: i32 = 1_000_000_000;

/// The built-in classes as objects, created at the first start.
pub fn system_priority_classes() -> Vec<PriorityClass> {
    SYSTEM_PRIORITY_CLASSES
        .iter()
        .map(|(name, value)| PriorityClass {
            metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
                name: Some(name.to_string()),
                ..Default::default()
            },
            value: Some(*value),
            description: Some(
                "Used for system critical pods that must not be moved from their current node."
                    .into(),
            ),
            ..Default::default()
        })
        .collect()
}

/// The strategy of PriorityClass: `value` and `preemptionPolicy` are immutable; values above
/// one billion and names starting with `system-` are reserved for the built-in classes.
#[derive(Debug, Default, Clone, Copy)]
pub struct PriorityClassStrategy;

impl Strategy for PriorityClassStrategy {
    type Object = PriorityClass;

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: "scheduling.k8s.io",
            kind: "PriorityClass",
            resource: "priorityclasses",
            short_names: &["pc"],
            namespaced: false,
        }
        .v1()
    }

    fn default(&self, pc: &mut PriorityClass) {
        // Go's non-pointer `value`: always written, 0 when absent.
        pc.value.get_or_insert(0);
        pc.preemption_policy
            .get_or_insert_with(|| "PreemptLowerPriority".into());
    }

    fn validate(&self, pc: &PriorityClass) -> FieldErrors {
        let mut errs = Vec::new();
        let name = pc.metadata.name.as_deref().unwrap_or("");
        let builtin = SYSTEM_PRIORITY_CLASSES
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| *v);
        match builtin {
            Some(value) if pc.value.unwrap_or(0) != value => errs.push(FieldError::forbidden(
                "metadata.name",
                format!("{name} is a system-reserved class name; its value must be {value}"),
            )),
            Some(_) => {}
            None if name.starts_with("system-") => errs.push(FieldError::forbidden(
                "metadata.name",
                "priority class names with 'system-' prefix are reserved for system use only",
            )),
            None if pc.value.unwrap_or(0) > HIGHEST_USER_PRIORITY => errs.push(FieldError::forbidden(
                "value",
                format!(
                    "maximum allowed value of a user defined priority is {HIGHEST_USER_PRIORITY}"
                ),
            )),
            None => {}
        }
        let policies = ["PreemptLowerPriority", "Never"];
        if let Some(p) = pc.preemption_policy.as_deref()
            && !policies.contains(&p)
        {
            errs.push(FieldError::not_supported("preemptionPolicy", p, &policies));
        }
        errs
    }

    fn validate_update(&self, new: &PriorityClass, old: &PriorityClass) -> FieldErrors {
        let mut errs = self.validate(new);
        if new.value != old.value {
            errs.push(FieldError::forbidden(
                "value",
                "may not be changed in an update.",
            ));
        }
        if new.preemption_policy != old.preemption_policy {
            errs.push(FieldError::invalid(
                "preemptionPolicy",
                new.preemption_policy.as_deref().unwrap_or(""),
                "field is immutable",
            ));
        }
        errs
    }
}
