//! `policy/v1`: PodDisruptionBudget.

use capstan_meta::{FieldError, FieldErrors, ResourceDescriptor, Strategy};
use k8s_openapi::api::policy::v1::PodDisruptionBudget;

use crate::apps::int_or_percent;
use crate::describe::Names;

/// The strategy of PodDisruptionBudget: `status` subresource; `minAvailable` and
/// `maxUnavailable` are exclusive; `metadata.generation` counts spec changes (evictions wait
/// for the disruption controller to have observed the latest).
#[derive(Debug, Default, Clone, Copy)]
pub struct PodDisruptionBudgetStrategy;

impl Strategy for PodDisruptionBudgetStrategy {
    type Object = PodDisruptionBudget;

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: "policy",
            kind: "PodDisruptionBudget",
            resource: "poddisruptionbudgets",
            short_names: &["pdb"],
            namespaced: true,
        }
        .v1()
    }

    fn prepare_for_create(&self, pdb: &mut PodDisruptionBudget) {
        pdb.status = None;
        pdb.metadata.generation = Some(1);
    }

    fn prepare_for_update(&self, new: &mut PodDisruptionBudget, old: &PodDisruptionBudget) {
        crate::apps::bump_generation(&mut new.metadata, &old.metadata, new.spec != old.spec);
    }

    fn validate(&self, pdb: &PodDisruptionBudget) -> FieldErrors {
        let mut errs = Vec::new();
        let spec = pdb.spec.clone().unwrap_or_default();
        if spec.min_available.is_some() && spec.max_unavailable.is_some() {
            errs.push(FieldError::invalid(
                "spec",
                "",
                "minAvailable and maxUnavailable cannot be both set",
            ));
        }
        if let Some(v) = &spec.min_available {
            int_or_percent(&mut errs, "spec.minAvailable", Some(v));
        }
        if let Some(v) = &spec.max_unavailable {
            int_or_percent(&mut errs, "spec.maxUnavailable", Some(v));
        }
        let policies = ["IfHealthyBudget", "AlwaysAllow"];
        if let Some(p) = spec.unhealthy_pod_eviction_policy.as_deref()
            && !policies.contains(&p)
        {
            errs.push(FieldError::not_supported(
                "spec.unhealthyPodEvictionPolicy",
                p,
                &policies,
            ));
        }
        errs
    }

    fn validate_update(
        &self,
        new: &PodDisruptionBudget,
        _old: &PodDisruptionBudget,
    ) -> FieldErrors {
        self.validate(new)
    }

    fn has_status(&self) -> bool {
        true
    }

    fn copy_status(&self, to: &mut PodDisruptionBudget, from: &PodDisruptionBudget) {
        to.status = from.status.clone();
    }
}
