use std::collections::HashMap;
use std::sync::Arc;

use capstan_meta::{ResourceDescriptor, Strategy};
use capstan_storage::Store;
use capstan_watch::WatchCacheConfig;

use crate::admission::StoreLister;
use crate::generic::GenericStore;
use crate::rest::RestStorage;
use crate::subresources::PartRest;

/// How the registry stores and caches resources.
#[derive(Debug, Clone)]
pub struct RegistryConfig {
    /// Prefix of every storage key (`--etcd-prefix`).
    pub prefix: String,
    /// Serve lists and watches from a watch cache (`--watch-cache`).
    pub watch_cache: bool,
    /// Changes kept per resource whatever their age (`--default-watch-cache-size`).
    pub default_watch_cache_size: usize,
    /// Changes younger than this are kept too (see [`WatchCacheConfig`]).
    pub watch_cache_fresh: std::time::Duration,
    /// Per-resource sizes, keyed `resource` (core) or `resource.group`
    /// (`--watch-cache-sizes`); 0 turns the cache off for that resource.
    pub watch_cache_sizes: HashMap<String, usize>,
    /// Deletes one deletecollection runs at once (`--delete-collection-workers`).
    pub delete_collection_workers: usize,
    /// The form objects are written in (`--storage-media-type`).
    pub storage_media_type: crate::stored::StorageMediaType,
    /// Encryption at rest (`--encryption-provider-config`).
    pub encryption: Option<capstan_encryption::EncryptionConfig>,
    /// Accept privileged containers (`--allow-privileged`; upstream's default is false).
    pub allow_privileged: bool,
    /// Which group versions and resources are served (`--runtime-config`); the stores of
    /// the others exist for the server's own use but are not served.
    pub runtime_config: crate::runtime_config::RuntimeConfig,
}

impl Default for RegistryConfig {
    fn default() -> Self {
        Self {
            prefix: "/registry".into(),
            watch_cache: true,
            default_watch_cache_size: 100,
            watch_cache_fresh: WatchCacheConfig::default().fresh,
            watch_cache_sizes: HashMap::new(),
            delete_collection_workers: 1,
            storage_media_type: crate::stored::StorageMediaType::default(),
            encryption: None,
            allow_privileged: false,
            runtime_config: Default::default(),
        }
    }
}

/// The set of served resources, looked up by group, version and plural name.
pub struct Registry {
    store: Arc<dyn Store>,
    /// Stores for single resources (`--etcd-servers-overrides`), keyed (group, resource).
    overrides: HashMap<(String, String), Arc<dyn Store>>,
    config: RegistryConfig,
    resources: Vec<Arc<dyn RestStorage>>,
    /// Positions in `resources` by plural name: every request looks one up.
    by_name: HashMap<String, Vec<usize>>,
    /// What admission plugins read (every served resource).
    lister: Arc<StoreLister>,
    /// The admission chain of every store registered after it is set.
    admission: Option<Arc<capstan_admission::Chain>>,
}

impl Registry {
    /// Keeps the objects of `group`/`resource` in `store` instead of the shared one (call
    /// before registering that resource).
    pub fn with_store_for(mut self, group: &str, resource: &str, store: Arc<dyn Store>) -> Self {
        self.overrides
            .insert((group.to_string(), resource.to_string()), store);
        self
    }

    /// The store of `group`/`resource`.
    pub fn store_for(&self, group: &str, resource: &str) -> Arc<dyn Store> {
        self.overrides
            .get(&(group.to_string(), resource.to_string()))
            .unwrap_or(&self.store)
            .clone()
    }

    /// How the objects of `group`/`resource` are stored, in `media_type`.
    fn codec(
        &self,
        group: &str,
        resource: &str,
        media_type: crate::stored::StorageMediaType,
    ) -> crate::stored::StorageCodec {
        crate::stored::StorageCodec {
            media_type,
            transformer: self
                .config
                .encryption
                .as_ref()
                .and_then(|e| e.for_resource(group, resource)),
        }
    }

    /// The configuration the registry was made with.
    pub fn config(&self) -> &RegistryConfig {
        &self.config
    }

    /// An empty registry over `store`.
    pub fn new(store: Arc<dyn Store>, mut config: RegistryConfig) -> Self {
        config.prefix = config.prefix.trim_end_matches('/').to_string();
        Self {
            store,
            overrides: HashMap::new(),
            config,
            resources: Vec::new(),
            by_name: HashMap::new(),
            lister: Arc::new(StoreLister::new()),
            admission: None,
        }
    }

    /// What admission plugins read: every resource this registry serves, as it serves it.
    pub fn lister(&self) -> Arc<StoreLister> {
        self.lister.clone()
    }

    /// The admission chain, once set (for the requests served outside the stores: the
    /// `CONNECT` operations).
    pub fn admission(&self) -> Option<&Arc<capstan_admission::Chain>> {
        self.admission.as_ref()
    }

    /// Admits every write of the resources registered from now on through `chain`.
    pub fn set_admission(&mut self, chain: Arc<capstan_admission::Chain>) {
        self.admission = Some(chain);
    }

    /// Serves the resource of `strategy` through a [`GenericStore`], with its `status`
    /// subresource when the strategy has one; returns the store (for further subresources).
    /// Writes pass the admission chain, if one is set.
    pub fn register<S>(&mut self, strategy: S) -> Arc<GenericStore<S>>
    where
        S: Strategy,
        S::Object: schemars::JsonSchema,
    {
        self.register_with(strategy, |store| store)
    }

    /// [`Registry::register`], with `configure` finishing the store (e.g. adding create
    /// hooks) before it is served.
    pub fn register_with<S>(
        &mut self,
        strategy: S,
        configure: impl FnOnce(GenericStore<S>) -> GenericStore<S>,
    ) -> Arc<GenericStore<S>>
    where
        S: Strategy,
        S::Object: schemars::JsonSchema,
    {
        let has_status = strategy.has_status();
        let store = self.make_store(
            strategy,
            &self.config.prefix.clone(),
            self.config.storage_media_type,
        );
        let store = Arc::new(configure(store));
        self.add(store.clone());
        if has_status {
            self.add(Arc::new(PartRest::status(store.clone())));
        }
        store
    }

    /// A store for a custom resource, `strategy`'s, as this registry makes them (its
    /// storage, encryption, watch cache and admission), with keys under
    /// `<key_prefix>/<resource>/` and objects stored as JSON (as upstream stores custom
    /// objects, which have no protobuf form); not served: resources that come and go are
    /// served elsewhere.
    pub fn build_custom_store<S>(&self, strategy: S, key_prefix: &str) -> GenericStore<S>
    where
        S: Strategy,
        S::Object: schemars::JsonSchema,
    {
        self.make_store(strategy, key_prefix, crate::stored::StorageMediaType::Json)
    }

    fn make_store<S>(
        &self,
        strategy: S,
        key_prefix: &str,
        media_type: crate::stored::StorageMediaType,
    ) -> GenericStore<S>
    where
        S: Strategy,
        S::Object: schemars::JsonSchema,
    {
        let d = strategy.descriptor();
        let key = if d.group.is_empty() {
            d.resource.clone()
        } else {
            format!("{}.{}", d.resource, d.group)
        };
        let size = self
            .config
            .watch_cache_sizes
            .get(&key)
            .copied()
            .unwrap_or(self.config.default_watch_cache_size);
        let cache = (self.config.watch_cache && size > 0).then(|| WatchCacheConfig {
            window: size,
            fresh: self.config.watch_cache_fresh,
            ..WatchCacheConfig::default()
        });
        let codec = self.codec(&d.group, &d.resource, media_type);
        let mut store = GenericStore::with_codec(
            strategy,
            self.store_for(&d.group, &d.resource),
            key_prefix,
            cache,
            codec,
        )
        .with_delete_workers(self.config.delete_collection_workers);
        if let Some(chain) = &self.admission {
            store = store.with_admission(chain.clone());
        }
        store
    }

    /// Serves a resource with its own [`RestStorage`] (unless `--runtime-config` turns it
    /// off).
    pub fn add(&mut self, storage: Arc<dyn RestStorage>) {
        if !self.config.runtime_config.serves(storage.descriptor()) {
            return;
        }
        storage.on_served();
        self.lister.add(storage.clone());
        self.by_name
            .entry(storage.descriptor().resource.to_string())
            .or_default()
            .push(self.resources.len());
        self.resources.push(storage);
    }

    /// The resource (with an empty `subresource`) or subresource served at
    /// `group`/`version`/`resource`/`subresource`.
    pub fn get(
        &self,
        group: &str,
        version: &str,
        resource: &str,
        subresource: &str,
    ) -> Option<&Arc<dyn RestStorage>> {
        self.by_name
            .get(resource)?
            .iter()
            .map(|&i| &self.resources[i])
            .find(|r| {
                let d = r.descriptor();
                d.group == group && d.version == version && d.subresource == subresource
            })
    }

    /// The store everything is kept in.
    pub fn store(&self) -> &Arc<dyn Store> {
        &self.store
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
        group_versions(self.descriptors())
    }
}

/// The groups of `descriptors`, each with its versions, in the order they first appear.
pub fn group_versions<'a>(
    descriptors: impl IntoIterator<Item = &'a ResourceDescriptor>,
) -> Vec<(String, Vec<String>)> {
    let mut out: Vec<(String, Vec<String>)> = Vec::new();
    for d in descriptors {
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
