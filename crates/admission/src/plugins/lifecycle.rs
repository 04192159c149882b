//! `NamespaceLifecycle`: objects are created only in namespaces that exist and are not
//! terminating; the system namespaces cannot be deleted.

use std::sync::Arc;

use async_trait::async_trait;
use capstan_meta::v1::StatusCause;
use capstan_meta::{ApiError, GroupResource};

use super::{core, forbidden};
use crate::attributes::{Attributes, Operation};
use crate::chain::{Lister, Plugin};

/// Namespaces that cannot be deleted.
const IMMORTAL: &[&str] = &["default", "kube-system", "kube-public"];

/// The `NamespaceLifecycle` plugin.
pub struct NamespaceLifecycle {
    lister: Arc<dyn Lister>,
}

impl NamespaceLifecycle {
    /// Reads namespaces through `lister`.
    pub fn new(lister: Arc<dyn Lister>) -> Self {
        Self { lister }
    }
}

fn is_namespace(resource: &GroupResource) -> bool {
    resource.group.is_empty() && resource.resource == "namespaces"
}

#[async_trait]
impl Plugin for NamespaceLifecycle {
    fn name(&self) -> &'static str {
        "NamespaceLifecycle"
    }

    fn validates(&self, operation: Operation, resource: &GroupResource, _: &str) -> bool {
        match operation {
            Operation::Create => true,
            Operation::Delete => is_namespace(resource),
            _ => false,
        }
    }

    fn validation_reads_objects(&self) -> bool {
        false
    }

    async fn validate(&self, a: &Attributes) -> Result<(), ApiError> {
        if is_namespace(&a.resource) {
            if a.operation == Operation::Delete && IMMORTAL.contains(&a.name.as_str()) {
                return Err(forbidden(a, "this namespace may not be deleted"));
            }
            return Ok(());
        }
        if a.namespace.is_empty() {
            return Ok(());
        }
        let Some(namespace) = self
            .lister
            .get(&core("namespaces"), "", &a.namespace)
            .await?
        else {
            return Err(ApiError::not_found(&core("namespaces"), &a.namespace));
        };
        let terminating = namespace["status"]["phase"] == "Terminating"
            || !namespace["metadata"]["deletionTimestamp"].is_null();
        // Access reviews are answered in any namespace (they create nothing).
        let review = a.resource.group == "authorization.k8s.io";
        if terminating && !review {
            let ns = &a.namespace;
            let mut err = forbidden(
                a,
                &format!(
                    "unable to create new content in namespace {ns} because it is being terminated"
                ),
            );
            if let Some(details) = err.details.as_mut() {
                details.causes = Some(vec![StatusCause {
                    reason: Some("NamespaceTerminating".into()),
                    message: Some(format!("namespace {ns} is being terminated")),
                    field: Some("metadata.namespace".into()),
                }]);
            }
            return Err(err);
        }
        Ok(())
    }
}
