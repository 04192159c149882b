//! Structured merges over the upstream schemas.
//!
//! The schemas of the served types (`capstan-negotiation`'s, with their merge markers) say
//! which lists merge by key or by value and which values are atomic. On that this crate
//! builds strategic merge patch ([`strategic`]) and server-side apply: field sets
//! ([`fieldset`]), typed comparison and merge ([`typed`]), and the managedFields bookkeeping
//! of every write with apply's conflicts ([`managed`]).

pub mod fieldset;
pub mod json_patch;
pub mod managed;
pub mod strategic;
pub mod typed;

pub use fieldset::{FieldSet, Path, PathElement};
pub use managed::{Conflict, ManagedFields, Writer};
pub use typed::{Comparison, Ty, Typed};

/// Errors of merges and patches.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The patch document is malformed (a 400).
    #[error("{0}")]
    BadPatch(String),
    /// The patch or the merged object breaks a rule of the schema or the patch format (a 422).
    #[error("{0}")]
    Invalid(String),
    /// A stored `fieldsV1` document cannot be read.
    #[error("invalid FieldsV1: {0}")]
    FieldsV1(String),
    /// An apply would change fields other managers own (a 409).
    #[error("{}", managed::conflict_message(.0))]
    Conflicts(Vec<Conflict>),
}
