//! Capstan's scheduler: it watches pods and nodes through the API server, keeps them in a
//! cache, takes pending pods from a priority queue, filters and scores nodes with upstream's
//! default plugins, assumes the pod on the chosen node and binds it.
//!
//! Built so far: the queue (priority order, backoff, unschedulable pods woken by cluster
//! changes), the framework (Filter and Score extension points, weighted scores, upstream's
//! failure summary), the plugins NodeUnschedulable, NodeName, TaintToleration, NodeAffinity,
//! NodePorts, NodeResourcesFit (LeastAllocated), NodeResourcesBalancedAllocation and
//! ImageLocality, and
//! assume-then-bind with `PodScheduled` conditions and events. The scheduler issue lists the
//! rest (preemption, volume and inter-pod plugins, configuration, leader election, serving).

pub mod cache;
pub mod config;
mod error;
pub mod framework;
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
