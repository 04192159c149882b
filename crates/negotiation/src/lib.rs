//! Representations of API objects and how a client picks one: content negotiation over the
//! Accept header ([`media`]), the Kubernetes protobuf form ([`protobuf`]: the `k8s\0`
//! envelope around a `runtime.Unknown`, with a lossless JSON ↔ protobuf transcoder driven by
//! the upstream [`schema`]s, so every served kind is covered without per-kind code),
//! server-side Tables and `PartialObjectMetadata` ([`table`]) and YAML ([`yaml`]).

mod descriptors;
mod error;
pub mod media;
pub mod protobuf;
pub mod schema;
pub mod table;
pub mod yaml;

pub use error::{Error, Result};
pub use media::{Choice, Endpoint, Format, Offer, Transform};
