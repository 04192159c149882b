//! `NamespaceExists` (creates only in existing namespaces, and nothing else of the
//! lifecycle) and `NamespaceAutoProvision` (a create in a missing namespace creates it).

use std::sync::Arc;

use async_trait::async_trait;
use capstan_meta::{ApiError, GroupResource};

use super::core;
use crate::attributes::{Attributes, Operation};
use crate::chain::{Lister, Plugin};

/// Whether the request's namespace exists (or it has none).
async fn exists(lister: &dyn Lister, a: &Attributes) -> Result<bool, ApiError> {
    Ok(a.namespace.is_empty()
        || lister
            .get(&core("namespaces"), "", &a.namespace)
            .await?
            .is_some())
}

fn namespaced_create(operation: Operation, resource: &GroupResource) -> bool {
    operation == Operation::Create
        && !(resource.group.is_empty() && resource.resource == "namespaces")
}

/// `NamespaceExists`.
pub struct NamespaceExists {
    lister: Arc<dyn Lister>,
}

impl NamespaceExists {
    /// Reads namespaces through `lister`.
    pub fn new(lister: Arc<dyn Lister>) -> Self {
        Self { lister }
    }
}

#[async_trait]
impl Plugin for NamespaceExists {
    fn name(&self) -> &'static str {
        "NamespaceExists"
    }

    fn validates(&self, operation: Operation, resource: &GroupResource, _: &str) -> bool {
        namespaced_create(operation, resource)
    }

    fn validation_reads_objects(&self) -> bool {
        false
    }

    async fn validate(&self, a: &Attributes) -> Result<(), ApiError> {
        if exists(&*self.lister, a).await? {
            return Ok(());
        }
        Err(ApiError::not_found(&core("namespaces"), &a.namespace))
    }
}

/// Creates a namespace (the registry's side of `NamespaceAutoProvision`).
#[async_trait]
pub trait NamespaceCreator: Send + Sync + 'static {
    /// Creates `name` unless it exists (a dry run creates nothing).
    async fn ensure(&self, name: &str, dry_run: bool) -> Result<(), ApiError>;
}

/// `NamespaceAutoProvision`.
pub struct NamespaceAutoProvision {
    lister: Arc<dyn Lister>,
    creator: Arc<dyn NamespaceCreator>,
}

impl NamespaceAutoProvision {
    /// Reads namespaces through `lister`, creates them through `creator`.
    pub fn new(lister: Arc<dyn Lister>, creator: Arc<dyn NamespaceCreator>) -> Self {
        Self { lister, creator }
    }
}

#[async_trait]
impl Plugin for NamespaceAutoProvision {
    fn name(&self) -> &'static str {
        "NamespaceAutoProvision"
    }

    fn admits(&self, operation: Operation, resource: &GroupResource, _: &str) -> bool {
        namespaced_create(operation, resource)
    }

    async fn admit(&self, a: &mut Attributes) -> Result<(), ApiError> {
        if exists(&*self.lister, a).await? {
            return Ok(());
        }
        self.creator.ensure(&a.namespace, a.dry_run).await
    }
}
