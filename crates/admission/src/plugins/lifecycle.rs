//! `NamespaceLifecycle`: objects are created only in namespaces that exist and are not
//! terminating; the system namespaces cannot be deleted.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use capstan_meta::v1::StatusCause;
use capstan_meta::{ApiError, GroupResource};

use super::{core, forbidden};
use crate::attributes::{Attributes, Operation};
use crate::chain::{Lister, Plugin};

/// Namespaces that cannot be deleted.
const IMMORTAL: &[&str] = &["default", "kube-system", "kube-public"];

/// How long after admitting a namespace's deletion creates in it read the namespace from
/// storage rather than the lister's cache, which may not have seen the deletion yet
/// (upstream's 30 seconds).
const READ_CURRENT_FOR: Duration = Duration::from_secs(30);

/// The `NamespaceLifecycle` plugin.
pub struct NamespaceLifecycle {
    lister: Arc<dyn Lister>,
    /// Namespaces whose deletion was admitted, and when.
    deleted: Mutex<HashMap<String, Instant>>,
}

impl NamespaceLifecycle {
    /// Reads namespaces through `lister`.
    pub fn new(lister: Arc<dyn Lister>) -> Self {
        Self {
            lister,
            deleted: Mutex::default(),
        }
    }

    /// Remembers that `namespace`'s deletion was admitted.
    fn deleting(&self, namespace: &str) {
        let now = Instant::now();
        let mut deleted = self.deleted.lock().unwrap_or_else(|e| e.into_inner());
        deleted.retain(|_, at| now.duration_since(*at) < READ_CURRENT_FOR);
        deleted.insert(namespace.to_string(), now);
    }

    /// Whether `namespace`'s deletion was admitted within [`READ_CURRENT_FOR`].
    fn recently_deleted(&self, namespace: &str) -> bool {
        let deleted = self.deleted.lock().unwrap_or_else(|e| e.into_inner());
        deleted
            .get(namespace)
            .is_some_and(|at| at.elapsed() < READ_CURRENT_FOR)
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
            if a.operation == Operation::Delete {
                if IMMORTAL.contains(&a.name.as_str()) {
                    return Err(forbidden(a, "this namespace may not be deleted"));
                }
                self.deleting(&a.name);
            }
            return Ok(());
        }
        if a.namespace.is_empty() {
            return Ok(());
        }
        let namespaces = core("namespaces");
        let namespace = if self.recently_deleted(&a.namespace) {
            self.lister
                .get_current(&namespaces, "", &a.namespace)
                .await?
                .map(std::sync::Arc::new)
        } else {
            self.lister
                .get_shared(&namespaces, "", &a.namespace)
                .await?
        };
        let Some(namespace) = namespace else {
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

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_auth::UserInfo;
    use serde_json::{Value, json};

    /// A lister whose cache has not seen the namespace's deletion that storage holds.
    struct Lagging;

    #[async_trait]
    impl Lister for Lagging {
        async fn get(
            &self,
            _: &GroupResource,
            _: &str,
            name: &str,
        ) -> Result<Option<Value>, ApiError> {
            Ok(Some(
                json!({"metadata": {"name": name}, "status": {"phase": "Active"}}),
            ))
        }

        async fn list(&self, _: &GroupResource, _: &str) -> Result<Vec<Value>, ApiError> {
            Ok(Vec::new())
        }

        async fn get_current(
            &self,
            _: &GroupResource,
            _: &str,
            name: &str,
        ) -> Result<Option<Value>, ApiError> {
            Ok(Some(
                json!({"metadata": {"name": name, "deletionTimestamp": "2026-12-03T10:00:00Z"},
                "status": {"phase": "Terminating"}}),
            ))
        }
    }

    fn create_in(namespace: &str) -> Attributes {
        let mut a = Attributes::new(
            Operation::Create,
            GroupResource::new("", "configmaps"),
            UserInfo::default(),
        );
        a.namespace = namespace.into();
        a.name = "new".into();
        a
    }

    #[tokio::test]
    async fn creates_right_after_a_namespace_deletion_read_it_from_storage() {
        let plugin = NamespaceLifecycle::new(Arc::new(Lagging));
        // The cache says Active: without a deletion seen here, the create goes on.
        plugin.validate(&create_in("held")).await.unwrap();
        let mut delete = Attributes::new(
            Operation::Delete,
            GroupResource::new("", "namespaces"),
            UserInfo::default(),
        );
        delete.name = "held".into();
        plugin.validate(&delete).await.unwrap();
        let err = plugin.validate(&create_in("held")).await.unwrap_err();
        assert_eq!(err.code(), 403);
        assert!(err.message.contains("being terminated"), "{}", err.message);
        // Other namespaces still read the cache.
        plugin.validate(&create_in("other")).await.unwrap();
    }
}
