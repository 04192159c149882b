//! Upstream's namespace lifecycle rule for writes: objects are created only in a namespace
//! that exists and is not terminating. (The admission issue turns this into a plugin; the
//! trait is the seam.)

use std::sync::Arc;

use async_trait::async_trait;
use capstan_meta::v1::StatusCause;
use capstan_meta::{ApiError, GroupResource};
use capstan_storage::Store;

use crate::error::Result;
use crate::stored::StorageCodec;

/// Decides whether a namespace takes new objects.
#[async_trait]
pub trait NamespaceGate: Send + Sync + 'static {
    /// Ok when `namespace` exists and is not terminating; otherwise the error for creating
    /// `name` of `gr` there.
    async fn admit_create(&self, namespace: &str, gr: &GroupResource, name: &str) -> Result<()>;
}

/// The gate over stored namespaces (`<prefix>/namespaces/<name>`).
pub struct StoredNamespaces {
    store: Arc<dyn Store>,
    prefix: String,
    codec: StorageCodec,
}

impl StoredNamespaces {
    /// Namespaces stored under `registry_prefix` in `store`, in the form `codec` reads.
    pub fn new(store: Arc<dyn Store>, registry_prefix: &str, codec: StorageCodec) -> Self {
        Self {
            store,
            prefix: format!("{}/namespaces/", registry_prefix.trim_end_matches('/')),
            codec,
        }
    }
}

#[async_trait]
impl NamespaceGate for StoredNamespaces {
    async fn admit_create(&self, namespace: &str, gr: &GroupResource, name: &str) -> Result<()> {
        let (kv, _) = self
            .store
            .get(&format!("{}{namespace}", self.prefix))
            .await?;
        let Some(kv) = kv else {
            return Err(
                ApiError::not_found(&GroupResource::new("", "namespaces"), namespace).into(),
            );
        };
        let doc: serde_json::Value = self
            .codec
            .decode(&kv.key, &kv.value)
            .ok()
            .and_then(|json| serde_json::from_slice(&json).ok())
            .unwrap_or_default();
        let terminating = doc["status"]["phase"] == "Terminating"
            || !doc["metadata"]["deletionTimestamp"].is_null();
        if terminating {
            let mut err = ApiError::forbidden_because(
                gr,
                name,
                &format!(
                    "unable to create new content in namespace {namespace} because it is being terminated"
                ),
            );
            if let Some(details) = err.details.as_mut() {
                details.causes = Some(vec![StatusCause {
                    reason: Some("NamespaceTerminating".into()),
                    message: Some(format!("namespace {namespace} is being terminated")),
                    field: Some("metadata.namespace".into()),
                }]);
            }
            return Err(err.into());
        }
        Ok(())
    }
}
