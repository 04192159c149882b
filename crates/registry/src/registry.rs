use std::sync::Arc;

use capstan_meta::{ResourceDescriptor, Strategy};
use capstan_storage::Store;

use crate::generic::GenericStore;
use crate::rest::RestStorage;

/// The set of served resources, looked up by group, version and plural name.
pub struct Registry {
    store: Arc<dyn Store>,
    prefix: String,
    resources: Vec<Arc<dyn RestStorage>>,
}

impl Registry {
    /// An empty registry over `store`, with storage keys under `prefix` (e.g. `/registry`).
    pub fn new(store: Arc<dyn Store>, prefix: &str) -> Self {
        Self {
            store,
            prefix: prefix.trim_end_matches('/').to_string(),
            resources: Vec::new(),
        }
    }

    /// Serves the resource of `strategy` through a [`GenericStore`].
    pub fn register<S>(&mut self, strategy: S)
    where
        S: Strategy,
        S::Object: schemars::JsonSchema,
    {
        let store = GenericStore::new(strategy, self.store.clone(), &self.prefix);
        self.add(Arc::new(store));
    }

    /// Serves a resource with its own [`RestStorage`].
    pub fn add(&mut self, storage: Arc<dyn RestStorage>) {
        self.resources.push(storage);
    }

    /// The resource served at `group`/`version`/`resource`.
    pub fn get(&self, group: &str, version: &str, resource: &str) -> Option<&Arc<dyn RestStorage>> {
        self.resources.iter().find(|r| {
            let d = r.descriptor();
            d.group == group && d.version == version && d.resource == resource
        })
    }

    /// Every served resource, in registration order.
    pub fn resources(&self) -> impl Iterator<Item = &Arc<dyn RestStorage>> {
        self.resources.iter()
    }

    /// Every descriptor, in registration order.
    pub fn descriptors(&self) -> impl Iterator<Item = &ResourceDescriptor> {
        self.resources.iter().map(|r| r.descriptor())
    }

    /// The groups served, each with its versions, in registration order (core group first
    /// when present, as "").
    pub fn groups(&self) -> Vec<(String, Vec<String>)> {
        let mut out: Vec<(String, Vec<String>)> = Vec::new();
        for d in self.descriptors() {
            match out.iter_mut().find(|(g, _)| *g == d.group) {
                Some((_, versions)) if !versions.contains(&d.version) => {
                    versions.push(d.version.clone())
                }
                Some(_) => {}
                None => out.push((d.group.clone(), vec![d.version.clone()])),
            }
        }
        out
    }

    /// The storage all resources share.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
    }
}
