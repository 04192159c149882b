//! A [`Lister`] over objects held in memory.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use async_trait::async_trait;
use capstan_meta::{ApiError, GroupResource};
use serde_json::Value;

use crate::chain::Lister;

/// A [`Lister`] over objects held in memory: for tools that run admission plugins outside a
/// server, for benchmarks and for tests. Every [`MemoryLister::put`] moves one change mark,
/// which [`Lister::changed_at`] reports for every resource; [`MemoryLister::lists`] counts
/// the lists served.
#[derive(Default)]
pub struct MemoryLister {
    state: Mutex<State>,
    lists: AtomicUsize,
}

#[derive(Default)]
struct State {
    objects: Vec<Stored>,
    kinds: Vec<ServedKind>,
    changed_at: u64,
}

struct Stored {
    resource: GroupResource,
    namespace: String,
    object: Value,
}

struct ServedKind {
    group: String,
    kind: String,
    resource: GroupResource,
    namespaced: bool,
}

impl MemoryLister {
    /// A lister holding nothing and serving no kind.
    pub fn new() -> Self {
        Self::default()
    }

    /// This lister with `object` put in (see [`MemoryLister::put`]).
    pub fn with(self, resource: GroupResource, namespace: &str, object: Value) -> Self {
        self.put(resource, namespace, object);
        self
    }

    /// This lister mapping `kind` of `group` to `resource`, whose objects live in namespaces
    /// when `namespaced`.
    pub fn serving(
        self,
        group: &str,
        kind: &str,
        resource: GroupResource,
        namespaced: bool,
    ) -> Self {
        self.state().kinds.push(ServedKind {
            group: group.into(),
            kind: kind.into(),
            resource,
            namespaced,
        });
        self
    }

    /// Stores `object` of `resource` in `namespace` (empty for a cluster-scoped object),
    /// replacing the one of the same `metadata.name` there, and moves the change mark.
    pub fn put(&self, resource: GroupResource, namespace: &str, object: Value) {
        let mut state = self.state();
        let name = object["metadata"]["name"].clone();
        let same = state.objects.iter_mut().find(|s| {
            s.resource == resource
                && s.namespace == namespace
                && s.object["metadata"]["name"] == name
        });
        match same {
            Some(stored) => stored.object = object,
            None => state.objects.push(Stored {
                resource,
                namespace: namespace.into(),
                object,
            }),
        }
        state.changed_at += 1;
    }

    /// How many lists this lister served.
    pub fn lists(&self) -> usize {
        self.lists.load(Ordering::Relaxed)
    }

    fn state(&self) -> std::sync::MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

#[async_trait]
impl Lister for MemoryLister {
    async fn get(
        &self,
        resource: &GroupResource,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Value>, ApiError> {
        Ok(self
            .state()
            .objects
            .iter()
            .find(|s| {
                s.resource == *resource
                    && s.namespace == namespace
                    && s.object["metadata"]["name"] == name
            })
            .map(|s| s.object.clone()))
    }

    async fn list(
        &self,
        resource: &GroupResource,
        namespace: &str,
    ) -> Result<Vec<Value>, ApiError> {
        self.lists.fetch_add(1, Ordering::Relaxed);
        Ok(self
            .state()
            .objects
            .iter()
            .filter(|s| {
                s.resource == *resource && (namespace.is_empty() || s.namespace == namespace)
            })
            .map(|s| s.object.clone())
            .collect())
    }

    fn changed_at(&self, _resource: &GroupResource) -> Option<u64> {
        Some(self.state().changed_at)
    }

    fn resource_for_kind(&self, group: &str, kind: &str) -> Option<GroupResource> {
        let state = self.state();
        let served = state
            .kinds
            .iter()
            .find(|k| k.group == group && k.kind == kind)?;
        Some(served.resource.clone())
    }

    fn is_namespaced(&self, resource: &GroupResource) -> Option<bool> {
        let state = self.state();
        let served = state.kinds.iter().find(|k| k.resource == *resource)?;
        Some(served.namespaced)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn configmaps() -> GroupResource {
        GroupResource::new("", "configmaps")
    }

    #[tokio::test]
    async fn objects_are_found_by_namespace_and_name_and_replaced_by_name() {
        let lister = MemoryLister::new()
            .with(
                configmaps(),
                "a",
                json!({"metadata": {"name": "x"}, "data": {"v": "1"}}),
            )
            .with(
                configmaps(),
                "b",
                json!({"metadata": {"name": "x"}, "data": {"v": "2"}}),
            );
        let before = lister.changed_at(&configmaps()).unwrap();
        lister.put(
            configmaps(),
            "a",
            json!({"metadata": {"name": "x"}, "data": {"v": "3"}}),
        );
        assert!(lister.changed_at(&configmaps()).unwrap() > before);

        let got = lister.get(&configmaps(), "a", "x").await.unwrap().unwrap();
        assert_eq!(got["data"]["v"], "3");
        assert!(lister.get(&configmaps(), "c", "x").await.unwrap().is_none());
        assert_eq!(lister.list(&configmaps(), "b").await.unwrap().len(), 1);
        assert_eq!(lister.list(&configmaps(), "").await.unwrap().len(), 2);
        let secrets = GroupResource::new("", "secrets");
        assert!(lister.list(&secrets, "").await.unwrap().is_empty());
        assert_eq!(lister.lists(), 3);
    }

    #[test]
    fn kinds_map_to_resources_only_when_served() {
        let lister = MemoryLister::new().serving("", "ConfigMap", configmaps(), true);
        assert_eq!(
            lister.resource_for_kind("", "ConfigMap"),
            Some(configmaps())
        );
        assert_eq!(lister.resource_for_kind("apps", "ConfigMap"), None);
        assert_eq!(lister.is_namespaced(&configmaps()), Some(true));
        assert_eq!(lister.is_namespaced(&GroupResource::new("", "nodes")), None);
    }
}
