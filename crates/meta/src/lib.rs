//! Capstan apimachinery: the vocabulary every other crate speaks.
//!
//! The object types themselves (`ObjectMeta`, `ListMeta`, `Status`, ...) are the upstream
//! definitions from `k8s-openapi`, re-exported here so that every crate agrees on one set of
//! types and every field a client sends round-trips. On top of them this crate adds what the
//! server needs and `k8s-openapi` does not have: `Status` errors in upstream form
//! ([`ApiError`]), field error lists ([`FieldError`]), name and metadata validation, label and
//! field selectors, `generateName`, and the clock. It knows nothing of HTTP or storage.

mod attributes;
pub mod columns;
pub mod duration;
mod error;
pub mod field;
pub mod fields;
pub mod labels;
pub mod names;
pub mod quantity;
mod redacted;
pub mod resource;
pub mod status;
pub mod time;
pub mod validation;

pub use attributes::RequestAttributes;
pub use error::{Error, Result};
pub use field::{FieldError, FieldErrorKind, FieldErrors};
pub use fields::{FieldLabels, FieldSelector, Refusal};
pub use labels::LabelSelector;
pub use redacted::Redacted;
pub use resource::{ApiObject, HasMetadata, ResourceDescriptor, STANDARD_VERBS, Strategy};
pub use status::{ApiError, GroupResource, Reason};

/// The upstream apimachinery types (`meta/v1`), shared by every crate.
pub mod v1 {
    pub use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
        APIGroup, APIGroupList, APIResource, APIResourceList, APIVersions, DeleteOptions, FieldsV1,
        GroupVersionForDiscovery, ListMeta, ManagedFieldsEntry, ObjectMeta, OwnerReference,
        Preconditions, ServerAddressByClientCIDR, Status, StatusCause, StatusDetails, Time,
    };
}
