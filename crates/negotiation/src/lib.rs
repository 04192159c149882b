//! Representations of API objects and how a client picks one: content negotiation over the
//! Accept header, the Kubernetes protobuf form (`application/vnd.kubernetes.protobuf`: the
//! `k8s\0` envelope around a `runtime.Unknown`, with a lossless JSON ↔ protobuf transcoder
//! driven by the upstream schemas, so every served kind is covered without per-kind code),
//! server-side Tables and YAML.

mod error;
pub mod protobuf;
pub mod schema;

pub use error::{Error, Result};
