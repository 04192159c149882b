//! Capstan's generic REST store: every served resource is a [`GenericStore`] over the
//! [`Store`](capstan_storage::Store) trait, shaped by its [`Strategy`](capstan_meta::Strategy).
//!
//! It owns the request semantics that do not depend on HTTP: decoding and checking bodies,
//! metadata stamping (uid, creationTimestamp, generateName), validation, optimistic
//! concurrency, patches, two-phase deletion, label and field selection, chunked lists and
//! resourceVersion rules. The server turns requests into calls on [`RestStorage`] and writes
//! out what comes back; the [`Registry`] is the set of served resources.

pub mod admission;
pub mod authentication;
pub mod authorization;
pub mod bootstrap_policy;
pub mod builtin;
mod codec;
pub mod converted;
mod error;
pub mod eviction;
pub mod forms;
mod generic;
pub mod hooks;
mod kind;
mod managed;
pub mod options;
pub mod patch;
pub mod payload;
pub mod rbac;
mod registry;
pub mod resource_claims;
mod rest;
pub mod runtime_config;
pub mod services;
pub mod stored;
pub mod subresources;
pub mod tree_sync;
pub mod watching;

pub use capstan_watch::{CachedJson, CachedObject};
pub use error::{Error, Result};
pub use generic::{FOREGROUND_FINALIZER, GenericStore, ORPHAN_FINALIZER};
pub use options::{
    CreateAuthorization, CreateCheck, DeleteOptions, FieldValidation, GetOptions, ListOptions,
    WriteOptions,
};
pub use patch::PatchType;
pub use payload::Payload;
pub use registry::{Registry, RegistryConfig, group_versions};
pub use rest::{Encoded, InitializationGuard, ResponseStatus, RestStorage, SchemaFn, WatchOptions};
pub use stored::StorageMediaType;
pub use watching::EventStream;
