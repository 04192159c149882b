//! The registry's side of admission: a [`Lister`] over the served resources for the
//! plugins (the watch caches, and a consistent read when the cache has not seen an object
//! yet, so a namespace created a moment ago is found).

use std::collections::HashMap;
use std::sync::{Arc, RwLock, Weak};

use async_trait::async_trait;
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
}

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
    ) -> Result<Option<Value>, ApiError> {
        let Some(store) = self.find(resource) else {
            return Ok(None);
        };
        for options in attempts {
            match store.get(namespace, name, options).await {
                Ok(found) => {
                    return serde_json::from_slice(&found.body.into_bytes())
                        .map(Some)
                        .map_err(ApiError::internal);
                }
                Err(Error::Api(e)) if e.code() == 404 => continue,
                Err(e) => return Err(e.into()),
            }
        }
        Ok(None)
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
        self.read(resource, namespace, name, &[GetOptions::default()])
            .await
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
