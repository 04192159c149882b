//! The registry's side of admission: a [`Lister`] over the served resources for the
//! plugins (the watch caches, and a consistent read when the cache has not seen an object
//! yet, so a namespace created a moment ago is found).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock, Weak};

use async_trait::async_trait;
use bytes::Bytes;
use capstan_admission::Lister;
use capstan_meta::{ApiError, GroupResource};
use serde_json::Value;

use crate::error::Error;
use crate::options::{GetOptions, ListOptions, WriteOptions};
use crate::rest::RestStorage;

/// Reads the registry's resources for admission plugins. It holds them weakly: the stores
/// hold the chain whose plugins hold the lister.
#[derive(Default)]
pub struct StoreLister {
    stores: RwLock<Stores>,
    /// Objects parsed for plugins by resource, namespace and name, with the JSON they were
    /// parsed from: while a read returns the same JSON, the parsed object is handed out again
    /// (a pod create reads its namespace and service account in three plugins).
    parsed: Mutex<HashMap<String, (Bytes, Arc<Value>)>>,
}

/// Parsed objects [`StoreLister`] keeps at most (all are let go when it is full).
const PARSED_KEPT: usize = 1024;

/// The stores in the order they were added, and by resource name (a pod create looks up a
/// namespace and a service account three times: a scan of a hundred stores showed in its
/// profile).
#[derive(Default)]
struct Stores {
    all: Vec<Weak<dyn RestStorage>>,
    by_resource: HashMap<String, Vec<Weak<dyn RestStorage>>>,
}

impl StoreLister {
    /// A lister of no resources yet (the registry adds them as it serves them).
    pub fn new() -> Self {
        Self::default()
    }

    pub(crate) fn add(&self, storage: Arc<dyn RestStorage>) {
        if matches!(storage.descriptor().subresource.as_str(), "" | "status") {
            let mut stores = self.stores.write().unwrap_or_else(|e| e.into_inner());
            stores.all.push(Arc::downgrade(&storage));
            stores
                .by_resource
                .entry(storage.descriptor().resource.clone())
                .or_default()
                .push(Arc::downgrade(&storage));
        }
    }

    fn find(&self, resource: &GroupResource) -> Option<Arc<dyn RestStorage>> {
        self.find_sub(resource, "")
    }

    fn find_sub(
        &self,
        resource: &GroupResource,
        subresource: &str,
    ) -> Option<Arc<dyn RestStorage>> {
        self.stores
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .by_resource
            .get(&resource.resource)?
            .iter()
            .filter_map(Weak::upgrade)
            .find(|s| {
                let d = s.descriptor();
                d.group == resource.group && d.subresource == subresource
            })
    }
}

impl StoreLister {
    /// The object read with each of `attempts` in turn until one finds it.
    async fn read(
        &self,
        resource: &GroupResource,
        namespace: &str,
        name: &str,
        attempts: &[GetOptions],
    ) -> Result<Option<Arc<Value>>, ApiError> {
        let Some(store) = self.find(resource) else {
            return Ok(None);
        };
        for options in attempts {
            match store.get(namespace, name, options).await {
                Ok(found) => {
                    return self.parsed(resource, namespace, name, found.body.into_bytes());
                }
                Err(Error::Api(e)) if e.code() == 404 => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Ok(None)
    }

    /// `json` parsed, or the object parsed from the same JSON before.
    fn parsed(
        &self,
        resource: &GroupResource,
        namespace: &str,
        name: &str,
        json: Bytes,
    ) -> Result<Option<Arc<Value>>, ApiError> {
        let key = format!(
            "{}/{}/{namespace}/{name}",
            resource.group, resource.resource
        );
        let mut parsed = self.parsed.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((seen, object)) = parsed.get(&key)
            && *seen == json
        {
            return Ok(Some(object.clone()));
        }
        let object = Arc::new(serde_json::from_slice::<Value>(&json).map_err(ApiError::internal)?);
        if parsed.len() >= PARSED_KEPT {
            parsed.clear();
        }
        parsed.insert(key, (json, object.clone()));
        Ok(Some(object))
    }
}

#[async_trait]
impl Lister for StoreLister {
    async fn get(
        &self,
        resource: &GroupResource,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Value>, ApiError> {
        let shared = self.get_shared(resource, namespace, name).await?;
        Ok(shared.map(Arc::unwrap_or_clone))
    }

    async fn get_shared(
        &self,
        resource: &GroupResource,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Arc<Value>>, ApiError> {
        let cached = GetOptions {
            any_version: true,
            ..Default::default()
        };
        // Not in the cache: perhaps created a moment ago, so storage is asked too.
        self.read(resource, namespace, name, &[cached, GetOptions::default()])
            .await
    }

    async fn get_current(
        &self,
        resource: &GroupResource,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Value>, ApiError> {
        let current = self
            .read(resource, namespace, name, &[GetOptions::default()])
            .await?;
        Ok(current.map(Arc::unwrap_or_clone))
    }

    async fn list(
        &self,
        resource: &GroupResource,
        namespace: &str,
    ) -> Result<Vec<Value>, ApiError> {
        let Some(store) = self.find(resource) else {
            return Ok(Vec::new());
        };
        let options = ListOptions {
            resource_version: "0".into(),
            ..Default::default()
        };
        let listed = store
            .list(namespace, &options)
            .await
            .map_err(ApiError::from)?;
        let mut list: Value =
            serde_json::from_slice(&listed.body.into_bytes()).map_err(ApiError::internal)?;
        Ok(match list["items"].take() {
            Value::Array(items) => items,
            _ => Vec::new(),
        })
    }

    fn changed_at(&self, resource: &GroupResource) -> Option<u64> {
        self.find(resource)?.changed_at()
    }

    fn is_namespaced(&self, resource: &GroupResource) -> Option<bool> {
        self.find(resource).map(|s| s.descriptor().namespaced)
    }

    fn resource_for_kind(&self, group: &str, kind: &str) -> Option<GroupResource> {
        self.stores
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .all
            .iter()
            .filter_map(Weak::upgrade)
            .map(|s| s.descriptor().clone())
            .find(|d| d.group == group && d.kind == kind && d.subresource.is_empty())
            .map(|d| GroupResource::new(d.group, d.resource))
    }
}

#[async_trait]
impl capstan_admission::plugins::NamespaceCreator for StoreLister {
    async fn ensure(&self, name: &str, dry_run: bool) -> Result<(), ApiError> {
        let Some(store) = self.find(&GroupResource::new("", "namespaces")) else {
            return Ok(());
        };
        let body = serde_json::to_vec(&serde_json::json!({"metadata": {"name": name}}))
            .map_err(ApiError::internal)?;
        let options = WriteOptions {
            dry_run,
            ..WriteOptions::server()
        };
        match store.create("", &body, &options).await {
            Ok(_) => Ok(()),
            Err(Error::Api(e)) if e.code() == 409 => Ok(()),
            Err(e) => Err(e.into()),
        }
    }
}

#[async_trait]
impl capstan_admission::plugins::StatusWriter for StoreLister {
    async fn read(
        &self,
        resource: &GroupResource,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Value>, ApiError> {
        let Some(store) = self.find(resource) else {
            return Ok(None);
        };
        match store.get(namespace, name, &GetOptions::default()).await {
            Ok(found) => serde_json::from_slice(&found.body.into_bytes())
                .map(Some)
                .map_err(ApiError::internal),
            Err(Error::Api(e)) if e.code() == 404 => Ok(None),
            Err(e) => Err(e.into()),
        }
    }

    async fn write_status(
        &self,
        resource: &GroupResource,
        namespace: &str,
        object: &Value,
    ) -> Result<(), ApiError> {
        let Some(store) = self.find_sub(resource, "status") else {
            return Err(ApiError::internal(format!("{resource:?} has no status")));
        };
        let name = object["metadata"]["name"].as_str().unwrap_or_default();
        let body = serde_json::to_vec(object).map_err(ApiError::internal)?;
        store
            .update(namespace, name, &body, &WriteOptions::server())
            .await
            .map(|_| ())
            .map_err(ApiError::from)
    }
}

#[cfg(test)]
mod tests {
    use capstan_api::StorageClassStrategy;
    use capstan_storage::{EmbeddedStore, EmbeddedStoreConfig};
    use serde_json::json;

    use super::*;
    use crate::generic::GenericStore;

    #[tokio::test]
    async fn a_parsed_object_is_shared_until_it_changes() {
        let dir = tempfile::tempdir().unwrap();
        let store = EmbeddedStore::open(EmbeddedStoreConfig::new(dir.path().join("db"))).unwrap();
        let classes: Arc<dyn RestStorage> = Arc::new(GenericStore::new(
            StorageClassStrategy,
            Arc::new(store),
            "/registry",
            None,
        ));
        let lister = StoreLister::new();
        lister.add(classes.clone());
        let resource = GroupResource::new("storage.k8s.io", "storageclasses");
        let class = |provisioner: &str| {
            serde_json::to_vec(&json!({
                "apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                "metadata": {"name": "fast"}, "provisioner": provisioner,
            }))
            .unwrap()
        };
        assert!(
            lister
                .get_shared(&resource, "", "fast")
                .await
                .unwrap()
                .is_none()
        );
        classes
            .create("", &class("example.com/a"), &WriteOptions::default())
            .await
            .unwrap();
        let first = lister
            .get_shared(&resource, "", "fast")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(first["provisioner"], "example.com/a");
        let again = lister
            .get_shared(&resource, "", "fast")
            .await
            .unwrap()
            .unwrap();
        assert!(Arc::ptr_eq(&first, &again), "parsed once while unchanged");
        // An owned copy is the same object.
        let owned = lister.get(&resource, "", "fast").await.unwrap().unwrap();
        assert_eq!(owned, *first);

        let mut changed: Value = serde_json::from_slice(&class("example.com/a")).unwrap();
        changed["metadata"]["labels"] = json!({"tier": "gold"});
        classes
            .update(
                "",
                "fast",
                &serde_json::to_vec(&changed).unwrap(),
                &WriteOptions::default(),
            )
            .await
            .unwrap();
        let current = lister
            .get_current(&resource, "", "fast")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(current["metadata"]["labels"]["tier"], "gold");
        let shared = lister
            .get_shared(&resource, "", "fast")
            .await
            .unwrap()
            .unwrap();
        assert!(!Arc::ptr_eq(&first, &shared), "a change is parsed anew");
        assert_eq!(*shared, current);
    }
}
