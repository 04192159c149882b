//! The default plugins, as upstream's scheduler runs them.

mod affinity;
mod basic;
mod images;
mod resources;
mod taints;

pub use affinity::{NodeAffinity, node_selector_matches};
pub use basic::{NodeName, NodePorts, NodeUnschedulable};
pub use images::ImageLocality;
pub use resources::{BalancedAllocation, NodeResourcesFit};
pub use taints::{TaintToleration, tolerates};

use crate::framework::Profile;

/// The default profile: the filters and weighted scores of upstream's default plugin set
/// (those built so far).
pub fn default_profile(scheduler_name: &str) -> Profile {
    Profile::new(
        scheduler_name,
        vec![
            Box::new(NodeUnschedulable),
            Box::new(NodeName),
            Box::new(TaintToleration),
            Box::new(NodeAffinity),
            Box::new(NodePorts),
            Box::new(NodeResourcesFit),
        ],
        vec![
            (Box::new(TaintToleration), 3),
            (Box::new(NodeAffinity), 2),
            (Box::new(NodeResourcesFit), 1),
            (Box::new(BalancedAllocation), 1),
            (Box::new(ImageLocality), 1),
        ],
    )
}
