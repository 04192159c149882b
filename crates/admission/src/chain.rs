//! The plugin traits and the ordered chain: every mutating plugin in order, then (after the
//! object's own validation) every validating plugin in order.

use std::sync::Arc;

use async_trait::async_trait;
use capstan_meta::{ApiError, GroupResource};
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
    /// Every object of the resource in `namespace` (every namespace when empty).
    async fn list(&self, resource: &GroupResource, namespace: &str)
    -> Result<Vec<Value>, ApiError>;
}

/// One admission plugin. A plugin mutates, validates, or both; the chain asks
/// [`Plugin::handles`] first, so that requests no plugin cares about cost nothing.
#[async_trait]
pub trait Plugin: Send + Sync + 'static {
    /// Upstream's name.
    fn name(&self) -> &'static str;

    /// Whether the plugin looks at this operation on this resource (and subresource).
    fn handles(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool;

    /// Changes the request's object, or refuses the request.
    async fn admit(&self, _attributes: &mut Attributes) -> Result<(), ApiError> {
        Ok(())
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

    /// Whether any plugin looks at this operation (when none does, the caller may skip
    /// building the attributes).
    pub fn handles(
        &self,
        operation: Operation,
        resource: &GroupResource,
        subresource: &str,
    ) -> bool {
        self.plugins
            .iter()
            .any(|p| p.handles(operation, resource, subresource))
    }

    /// The mutating phase: each plugin that handles the request may change the object; the
    /// first refusal ends it.
    pub async fn admit(&self, attributes: &mut Attributes) -> Result<(), ApiError> {
        for plugin in &self.plugins {
            if plugin.handles(
                attributes.operation,
                &attributes.resource,
                &attributes.subresource,
            ) {
                plugin.admit(attributes).await?;
            }
        }
        Ok(())
    }

    /// The validating phase: the first refusal ends it.
    pub async fn validate(&self, attributes: &Attributes) -> Result<(), ApiError> {
        for plugin in &self.plugins {
            if plugin.handles(
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
