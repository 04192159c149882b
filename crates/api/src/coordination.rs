//! `coordination.k8s.io/v1`: Lease (leader election, node heartbeats).

use capstan_meta::{FieldError, FieldErrors, ResourceDescriptor, Strategy};
use k8s_openapi::api::coordination::v1::Lease;

use crate::apps::non_negative;
use crate::describe::Names;

/// The strategy of Lease.
#[derive(Debug, Default, Clone, Copy)]
pub struct LeaseStrategy;

impl Strategy for LeaseStrategy {
    type Object = Lease;

    fn descriptor(&self) -> ResourceDescriptor {
        Names {
            group: "coordination.k8s.io",
            kind: "Lease",
            resource: "leases",
            short_names: &[],
            namespaced: true,
        }
        .v1()
    }

    /// PUT of a missing Lease creates it, as upstream's lease strategy allows.
    fn allow_create_on_update(&self) -> bool {
        true
    }

    fn validate(&self, lease: &Lease) -> FieldErrors {
        let mut errs = Vec::new();
        let spec = lease.spec.clone().unwrap_or_default();
        non_negative(
            &mut errs,
            "spec.leaseDurationSeconds",
            spec.lease_duration_seconds,
        );
        non_negative(&mut errs, "spec.leaseTransitions", spec.lease_transitions);
        if field_is_zero(spec.lease_duration_seconds) {
            errs.push(FieldError::invalid(
                "spec.leaseDurationSeconds",
                "0",
                "must be greater than 0",
            ));
        }
        errs
    }

    fn validate_update(&self, new: &Lease, _old: &Lease) -> FieldErrors {
        self.validate(new)
    }
}

fn field_is_zero(v: Option<i32>) -> bool {
    v == Some(0)
}
