//! The plugin traits and the ordered chain: every mutating plugin in order, then (after the
//! object's own validation) every validating plugin in order.

use std::any::Any;
use std::sync::Arc;

use async_trait::async_trait;
use capstan_meta::{ApiError, GroupResource};
use k8s_openapi::api::core::v1::Pod;
use serde_json::Value;

use crate::attributes::{Attributes, Operation};

/// Reads the stored objects plugins need (namespaces, classes, nodes), from the server's
/// watch caches.
#[async_trait]
pub trait Lister: Send + Sync + 'static {
    /// The object, or `None` when there is none.
    async fn get(
        &self,
        resource: &GroupResource,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Value>, ApiError>;
    /// [`get`](Lister::get)'s object, shared: a lister that keeps the objects it has parsed
    /// hands them out without a copy (plugins reading a namespace or a service account on
    /// every pod create use this).
    async fn get_shared(
        &self,
        resource: &GroupResource,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Arc<Value>>, ApiError> {
        Ok(self.get(resource, namespace, name).await?.map(Arc::new))
    }

    /// Every object of the resource in `namespace` (every namespace when empty).
    async fn list(&self, resource: &GroupResource, namespace: &str)
    -> Result<Vec<Value>, ApiError>;

    /// The object as storage holds it now, where [`get`](Lister::get) may answer from a
    /// cache that has not seen the latest write yet.
    async fn get_current(
        &self,
        resource: &GroupResource,
        namespace: &str,
        name: &str,
    ) -> Result<Option<Value>, ApiError> {
        self.get(resource, namespace, name).await
    }

    /// A number that changes whenever an object of the resource does, when known (`None`:
    /// unknown, read again): what a plugin derives from a list may be kept while it stays.
    fn changed_at(&self, _resource: &GroupResource) -> Option<u64> {
        None
    }

    /// The resource serving `kind` in `group` (a REST mapping), if one does.
    fn resource_for_kind(&self, _group: &str, _kind: &str) -> Option<GroupResource> {
        None
    }

    /// Whether the resource's objects live in namespaces (`None` when nothing serves it).
    fn is_namespaced(&self, _resource: &GroupResource) -> Option<bool> {
        None
    }
}

/// The request's object in its typed form (a `Pod`), lent to the mutating phase by the
/// caller: plugins that can work on it ([`Plugin::admits_typed`]) change it without a JSON
/// tree of it being made, and read back. The chain asks for the tree when the first plugin
/// that cannot comes; from then on [`Attributes::object`] is the object.
pub trait TypedObject: Send {
    /// The object, to downcast.
    fn as_any(&self) -> &dyn Any;
    /// The object, to downcast and change.
    fn as_any_mut(&mut self) -> &mut (dyn Any + Send);
    /// The object as a JSON tree (asked for once, when a plugin needs the tree).
    fn to_tree(&mut self) -> Result<Value, ApiError>;
}

/// A plugin's changes to pods, made on the typed `Pod` (see [`Plugin::pod_mutator`]).
#[async_trait]
pub trait PodMutator: Send + Sync {
    /// Changes `pod`, or refuses the request.
    async fn mutate(&self, attributes: &Attributes, pod: &mut Pod) -> Result<(), ApiError>;
}

/// One admission plugin. A plugin takes part in the mutating phase, the validating phase,
/// or both; the chain asks [`Plugin::admits`] and [`Plugin::validates`] first, so that
/// requests no plugin cares about cost nothing (not even the object's JSON form).
#[async_trait]
pub trait Plugin: Send + Sync + 'static {
    /// Upstream's name.
    fn name(&self) -> &'static str;

    /// Whether [`Plugin::admit`] looks at this operation on this resource (and subresource).
    fn admits(&self, _operation: Operation, _resource: &GroupResource, _subresource: &str) -> bool {
        false
    }

    /// Whether [`Plugin::validate`] looks at this operation on this resource.
    fn validates(
        &self,
        _operation: Operation,
        _resource: &GroupResource,
        _subresource: &str,
    ) -> bool {
        false
    }

    /// Whether validation reads the objects (not only the request's names and user).
    fn validation_reads_objects(&self) -> bool {
        true
    }

    /// The plugin's changes to pods when it makes them on the typed `Pod`: then the
    /// defaults of [`Plugin::admit`], [`Plugin::admits_typed`] and [`Plugin::admit_typed`]
    /// run it, on the typed pod or on the tree read as one and written back.
    fn pod_mutator(&self) -> Option<&dyn PodMutator> {
        None
    }

    /// Changes the request's object, or refuses the request.
    async fn admit(&self, attributes: &mut Attributes) -> Result<(), ApiError> {
        let Some(mutator) = self.pod_mutator() else {
            return Ok(());
        };
        let Some(tree) = attributes.object.take() else {
            return Ok(());
        };
        let mut pod: Pod = serde_json::from_value(tree)
            .map_err(|e| ApiError::bad_request(format!("the pod admitted is not a Pod: {e}")))?;
        let mutated = mutator.mutate(attributes, &mut pod).await;
        attributes.object = Some(serde_json::to_value(&pod).map_err(ApiError::internal)?);
        mutated
    }

    /// Whether [`Plugin::admit_typed`] does this plugin's part on `object`, the request's
    /// object in its typed form (see [`TypedObject`]), rather than [`Plugin::admit`] on its
    /// tree.
    fn admits_typed(&self, _attributes: &Attributes, object: &dyn Any) -> bool {
        self.pod_mutator().is_some() && object.is::<Pod>()
    }

    /// [`Plugin::admit`] on the typed object, which it may change ([`Attributes::object`]
    /// is not set).
    async fn admit_typed(
        &self,
        attributes: &mut Attributes,
        object: &mut (dyn Any + Send),
    ) -> Result<(), ApiError> {
        match (self.pod_mutator(), object.downcast_mut::<Pod>()) {
            (Some(mutator), Some(pod)) => mutator.mutate(attributes, pod).await,
            _ => Ok(()),
        }
    }

    /// Refuses the request, or lets it through, without changing it.
    async fn validate(&self, _attributes: &Attributes) -> Result<(), ApiError> {
        Ok(())
    }
}

/// The enabled plugins, in upstream's order.
#[derive(Clone, Default)]
pub struct Chain {
    plugins: Vec<Arc<dyn Plugin>>,
}

impl std::fmt::Debug for Chain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.plugins.iter().map(|p| p.name()))
            .finish()
    }
}

impl Chain {
    /// A chain of `plugins`, asked in this order.
    pub fn new(plugins: Vec<Arc<dyn Plugin>>) -> Self {
        Self { plugins }
    }

    /// The plugins' names, in order.
    pub fn names(&self) -> Vec<&'static str> {
        self.plugins.iter().map(|p| p.name()).collect()
    }

    /// Whether a mutating plugin looks at this operation.
    pub fn admits(
        &self,
        operation: Operation,
        resource: &GroupResource,
        subresource: &str,
    ) -> bool {
        self.plugins
            .iter()
            .any(|p| p.admits(operation, resource, subresource))
    }

    /// Whether a validating plugin looks at this operation: `Some(true)` when one reads the
    /// objects, `Some(false)` when they only read names and the user.
    pub fn validates(
        &self,
        operation: Operation,
        resource: &GroupResource,
        subresource: &str,
    ) -> Option<bool> {
        self.plugins
            .iter()
            .filter(|p| p.validates(operation, resource, subresource))
            .map(|p| p.validation_reads_objects())
            .reduce(|a, b| a || b)
    }

    /// The mutating phase: each plugin that admits the request may change the object; the
    /// first refusal ends it. When a plugin asks for reinvocation, or a later plugin changed
    /// what a watching one produced, every mutating plugin runs once more.
    pub async fn admit(&self, attributes: &mut Attributes) -> Result<(), ApiError> {
        self.admit_held(attributes, None).await
    }

    /// [`Chain::admit`] of a request whose object is `typed` ([`Attributes::object`] unset):
    /// when it ends with [`Attributes::object`] unset, no plugin needed the tree and `typed`
    /// holds the result; otherwise the tree does.
    pub async fn admit_typed(
        &self,
        attributes: &mut Attributes,
        typed: &mut dyn TypedObject,
    ) -> Result<(), ApiError> {
        self.admit_held(attributes, Some(typed)).await
    }

    async fn admit_held<'t>(
        &self,
        attributes: &mut Attributes,
        mut typed: Option<&mut (dyn TypedObject + 't)>,
    ) -> Result<(), ApiError> {
        self.admit_once(attributes, typed.as_deref_mut()).await?;
        if !attributes.reinvocation.watched.is_empty()
            && attributes.object.is_none()
            && let Some(typed) = typed.as_deref_mut()
        {
            attributes.object = Some(typed.to_tree()?);
        }
        if attributes.reinvocation.requested
            || attributes
                .reinvocation
                .watched_changed(attributes.object.as_ref())
        {
            attributes.reinvocation.requested = false;
            attributes.reinvocation.round = 1;
            self.admit_once(attributes, typed).await?;
        }
        Ok(())
    }

    async fn admit_once<'t>(
        &self,
        attributes: &mut Attributes,
        mut typed: Option<&mut (dyn TypedObject + 't)>,
    ) -> Result<(), ApiError> {
        for plugin in &self.plugins {
            if !plugin.admits(
                attributes.operation,
                &attributes.resource,
                &attributes.subresource,
            ) {
                continue;
            }
            match typed.as_deref_mut() {
                Some(object)
                    if attributes.object.is_none()
                        && plugin.admits_typed(attributes, object.as_any()) =>
                {
                    plugin.admit_typed(attributes, object.as_any_mut()).await?;
                }
                Some(object) => {
                    if attributes.object.is_none() {
                        attributes.object = Some(object.to_tree()?);
                    }
                    plugin.admit(attributes).await?;
                }
                None => plugin.admit(attributes).await?,
            }
        }
        Ok(())
    }

    /// The validating phase: the first refusal ends it.
    pub async fn validate(&self, attributes: &Attributes) -> Result<(), ApiError> {
        for plugin in &self.plugins {
            if plugin.validates(
                attributes.operation,
                &attributes.resource,
                &attributes.subresource,
            ) {
                plugin.validate(attributes).await?;
            }
        }
        Ok(())
    }
}
