//! Capstan storage: a versioned key-value store over bytes, in the model of etcd v3.
//!
//! Every successful write gets the next [`Revision`]; the value of a key at revision R is its
//! last write at or before R; deletes leave tombstones in the history; compaction drops the
//! history older than a revision, after which older revisions answer [`Error::Compacted`].
//! This crate knows nothing of Kubernetes objects: keys are strings and values are bytes.
//!
//! [`Store`] is the boundary trait; [`EmbeddedStore`] is the default backend (one file on
//! local disk, crash-safe, group-committed). [`conformance`] is the test suite every backend
//! must pass.

mod compactor;
pub mod conformance;
mod embedded;
mod error;
mod fanout;
mod live;
#[cfg(test)]
mod power_loss;
mod repair;
mod store;
mod wal;

pub use compactor::spawn_compactor;
pub use embedded::{EmbeddedStore, EmbeddedStoreConfig};
pub use error::{Error, Result};
pub use repair::{Damage, SalvageReport, StoreReport, check, salvage};
pub use store::{
    CompactionTurn, Event, EventKind, KeyValue, ListRequest, ListResponse, Revision, Store,
    WatchStream, WriteNotice,
};
