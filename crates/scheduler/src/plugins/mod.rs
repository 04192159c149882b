//! The default plugins, as upstream's scheduler runs them.

mod affinity;
mod basic;
mod dynamic_resources;
mod images;
mod interpod;
mod resources;
mod spread;
mod taints;
mod volumes;

pub use affinity::{NodeAffinity, node_selector_matches, required_node_affinity_matches};
pub use basic::{NodeName, NodePorts, NodeUnschedulable};
pub use dynamic_resources::DynamicResources;
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
pub use volumes::{NodeVolumeLimits, VolumeAction, VolumeBinding, VolumeRestrictions, VolumeZone};

use crate::config::{Configuration, ProfileConfig, args, effective_plugins};
use crate::error::Result;
use crate::framework::{Bind, BindCycle, Filter, PostFilter, PreBind, Profile, Reserve, Score};

/// The profile `profile` of `config` describes, with a warning for each enabled plugin
/// Capstan has not built yet (it is skipped).
pub fn build_profile(
    config: &Configuration,
    profile: &ProfileConfig,
) -> Result<(Profile, Vec<String>)> {
    let effective = effective_plugins(&profile.plugins, "profile")?;
    let pc = &profile.plugin_config;
    let volume_binding = VolumeBinding {
        bind_timeout: args::volume_bind_timeout(pc),
    };
    // One instance for every point: Reserve's in-memory allocations are what later
    // PreFilters must see.
    let dynamic_resources = args::dynamic_resources(pc);
    let filter = |name: &str| -> Option<Box<dyn Filter>> {
        Some(match name {
            "NodeUnschedulable" => Box::new(NodeUnschedulable),
            "NodeName" => Box::new(NodeName),
            "TaintToleration" => Box::new(TaintToleration),
            "NodeAffinity" => Box::new(NodeAffinity {
                added: args::added_affinity(pc),
            }),
            "NodePorts" => Box::new(NodePorts),
            "NodeResourcesFit" => Box::new(args::node_resources_fit(pc)),
            "PodTopologySpread" => Box::new(args::pod_topology_spread(pc)),
            "InterPodAffinity" => Box::new(args::inter_pod_affinity(pc)),
            "VolumeRestrictions" => Box::new(VolumeRestrictions),
            "NodeVolumeLimits" => Box::new(NodeVolumeLimits),
            "VolumeBinding" => Box::new(volume_binding),
            "VolumeZone" => Box::new(VolumeZone),
            "DynamicResources" => Box::new(dynamic_resources.clone()),
            _ => return None,
        })
    };
    let score = |name: &str| -> Option<Box<dyn Score>> {
        Some(match name {
            "TaintToleration" => Box::new(TaintToleration),
            "NodeAffinity" => Box::new(NodeAffinity {
                added: args::added_affinity(pc),
            }),
            "NodeResourcesFit" => Box::new(args::node_resources_fit(pc)),
            "PodTopologySpread" => Box::new(args::pod_topology_spread(pc)),
            "InterPodAffinity" => Box::new(args::inter_pod_affinity(pc)),
            "NodeResourcesBalancedAllocation" => Box::new(args::balanced_allocation(pc)),
            "ImageLocality" => Box::new(ImageLocality),
            _ => return None,
        })
    };
    let filters = effective.filter.iter().filter_map(|n| filter(n)).collect();
    let scores = effective
        .score
        .iter()
        .filter_map(|(n, w)| Some((score(n)?, *w)))
        .collect();
    let mut built = Profile::new(&profile.scheduler_name, filters, scores);
    built.percentage_of_nodes_to_score = config.percentage_for(profile);
    built.bind_cycle = BindCycle {
        reserve: effective
            .reserve
            .iter()
            .filter_map(|n| match n.as_str() {
                "VolumeBinding" => Some(Box::new(volume_binding) as Box<dyn Reserve>),
                "DynamicResources" => Some(Box::new(dynamic_resources.clone())),
                _ => None,
            })
            .collect(),
        permit: Vec::new(),
        pre_bind: effective
            .pre_bind
            .iter()
            .filter_map(|n| match n.as_str() {
                "VolumeBinding" => Some(Box::new(volume_binding) as Box<dyn PreBind>),
                "DynamicResources" => Some(Box::new(dynamic_resources.clone())),
                _ => None,
            })
            .collect(),
        bind: effective
            .bind
            .iter()
            .filter(|n| *n == "DefaultBinder")
            .map(|_| Box::new(crate::binding::DefaultBinder) as Box<dyn Bind>)
            .collect(),
        post_bind: Vec::new(),
    };
    built.scheduling_gates = effective.pre_enqueue.iter().any(|n| n == "SchedulingGates");
    built.post_filters = effective
        .post_filter
        .iter()
        .filter(|n| *n == "DynamicResources")
        .map(|_| Box::new(dynamic_resources.clone()) as Box<dyn PostFilter>)
        .collect();
    if effective
        .post_filter
        .iter()
        .any(|n| n == "DefaultPreemption")
    {
        built.preemption = Some(args::preemption(pc));
    }
    let warnings = if effective.not_built.is_empty() {
        Vec::new()
    } else {
        vec![format!(
            "profile {:?}: plugins not built in Capstan yet are skipped: {}",
            profile.scheduler_name,
            effective.not_built.join(", ")
        )]
    };
    Ok((built, warnings))
}

/// The default profile under `scheduler_name`: upstream's default plugins with their
/// default arguments (those built so far).
pub fn default_profile(scheduler_name: &str) -> Profile {
    let mut config = Configuration::default();
    config.profiles.push(ProfileConfig {
        scheduler_name: scheduler_name.into(),
        ..Default::default()
    });
    let (profile, _) =
        build_profile(&config, &config.profiles[0]).expect("the default configuration is valid");
    profile
}

#[cfg(test)]
pub(crate) mod test_support;
