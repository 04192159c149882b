//! Admission for Capstan: after authorization and decoding, each write passes the enabled
//! plugins, mutating ones first (they may change the object), then, once the object passed
//! its own validation, validating ones; any plugin may refuse with upstream's error.
//!
//! - [`Chain`]: the enabled plugins in upstream's order, behind the [`Plugin`] trait.
//! - [`AdmissionOptions`]: `--enable-admission-plugins`, `--disable-admission-plugins` and
//!   `--admission-control-config-file`.
//! - [`plugins`]: the built-in plugins, reading what they need through a [`Lister`]
//!   ([`MemoryLister`] holds objects in memory, outside a server).

mod attributes;
mod chain;
pub mod config;
mod error;
mod forms;
mod memory;
pub mod plugins;
pub mod quota;

pub use attributes::{Attributes, Feedback, Operation, Reinvocation};
pub use chain::{Chain, Lister, Plugin, PodMutator, TypedObject};
pub use config::{AdmissionOptions, Resolved};
pub use error::{Error, Result};
pub use forms::{Form, Forms};
pub use memory::MemoryLister;
