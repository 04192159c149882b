//! Capstan's scheduler: it watches pods, nodes, namespaces, the volume objects and the Dynamic
//! Resource Allocation objects (claims, device classes, resource slices) through the
//! API server, keeps them in a cache, takes pending pods from a priority queue, and runs
//! upstream's scheduling framework on them: PreEnqueue (scheduling gates), PreFilter and
//! Filter, PostFilter (preemption), PreScore and Score in the scheduling cycle; Reserve,
//! Permit, PreBind, Bind and PostBind in the binding cycle, which runs while the next pod is
//! scheduled (the pod is assumed on its node meanwhile). Every plugin of upstream's default
//! set is here, configured by `KubeSchedulerConfiguration` profiles ([`config`]).

pub mod binding;
pub mod cache;
pub mod config;
pub mod dra;
mod error;
pub mod framework;
pub mod kept;
pub mod metrics;
pub mod plugins;
pub mod preemption;
pub mod queue;
pub mod resources;
mod scheduler;
pub mod serving;
pub mod terms;
pub mod volumes;

pub use error::{Error, Result};
pub use scheduler::Scheduler;
