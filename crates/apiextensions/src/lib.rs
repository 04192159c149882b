//! `apiextensions.k8s.io`: CustomResourceDefinitions and the resources they define.
//!
//! - [`definition`]: the CRD strategy (defaults, validation, update rules).
//! - [`structural`]: whether a CRD's schema is structural, with upstream's causes.
//! - [`fields`]: a version's merge schema, for server-side apply and managedFields.
//! - [`rules`]: CEL validation rules (`x-kubernetes-validations`).
//! - [`schema`]: a version's schema compiled for objects: pruning, defaulting, validation.
//! - [`conversion`]: objects converted between versions (`None`, or the CRD's webhook).
//! - [`custom`]: custom objects and their strategy.
//! - [`served`]: the custom resources served now, added and removed as CRDs come and go.

pub mod conversion;
pub mod custom;
pub mod definition;
pub mod fields;
pub mod formats;
pub mod rules;
pub mod schema;
pub mod served;
pub mod structural;

pub use custom::{CustomObject, CustomStrategy};
pub use definition::CustomResourceDefinitionStrategy;
pub use schema::Schema;
pub use served::CustomResources;
