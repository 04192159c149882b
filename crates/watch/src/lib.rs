//! Capstan's watch cache: for one resource, the current state and a window of recent events,
//! kept in memory from a [`Store`](capstan_storage::Store) watch, so that lists and watches are
//! served without touching storage.
//!
//! Objects are held as [`CachedObject`]s: the JSON the API serves (resourceVersion included)
//! plus the labels and fields selectors look at, decoded once when the change arrives. A list
//! writes out stored bytes; an event is encoded once and shared by every watcher. Each watcher
//! has a bounded queue; one that falls behind is dropped (its client resumes or relists) and
//! never holds the others back. It knows nothing of Kubernetes types: the caller decodes.

mod cache;
mod error;
mod fields;
mod json;
mod pairs;

pub use cache::{
    CachedObject, Decode, EventType, Filter, Page, PrimedWrite, Priming, Watch, WatchCache,
    WatchCacheConfig, WatchEvent, classify,
};
pub use error::{Error, Result};
pub use fields::{FieldNames, Fields};
pub use json::{CachedJson, SharedValues};
pub use pairs::Pairs;
