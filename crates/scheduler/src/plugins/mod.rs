//! The default plugins, as upstream's scheduler runs them.

mod affinity;
mod basic;
mod images;
mod interpod;
mod resources;
mod spread;
mod taints;

pub use affinity::{NodeAffinity, node_selector_matches, required_node_affinity_matches};
pub use basic::{NodeName, NodePorts, NodeUnschedulable};
pub use images::ImageLocality;
pub use interpod::{DEFAULT_HARD_POD_AFFINITY_WEIGHT, InterPodAffinity};
pub use resources::{
    BalancedAllocation, MAX_SHAPE_SCORE, NodeResourcesFit, ScoringStrategy, WeightedResource,
    default_scored_resources,
};
pub use spread::{
    DefaultConstraint, HOSTNAME_KEY, PodTopologySpread, ZONE_KEY, system_default_constraints,
};
pub use taints::{TaintToleration, tolerates, untolerated_taint};

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
            Box::new(NodeResourcesFit::default()),
            Box::new(PodTopologySpread::default()),
            Box::new(InterPodAffinity::default()),
        ],
        vec![
            (Box::new(TaintToleration), 3),
            (Box::new(NodeAffinity), 2),
            (Box::new(PodTopologySpread::default()), 2),
            (Box::new(InterPodAffinity::default()), 2),
            (Box::new(NodeResourcesFit::default()), 1),
            (Box::new(BalancedAllocation::default()), 1),
            (Box::new(ImageLocality), 1),
        ],
    )
}

#[cfg(test)]
mod test_support;
