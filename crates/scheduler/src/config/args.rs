//! Plugin arguments (`<Plugin>Args`): their defaults, validation, and the plugins built from
//! them.

use k8s_openapi::api::core::v1::{NodeAffinity as ApiNodeAffinity, TopologySpreadConstraint};
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{GoDuration, V1};
use crate::error::{Error, Result};
use crate::plugins::{
    self, BalancedAllocation, DefaultConstraint, InterPodAffinity, NodeResourcesFit,
    PodTopologySpread, ScoringStrategy, WeightedResource,
};

/// The default plugins that take arguments (upstream's defaulting adds theirs).
pub const WITH_ARGS: &[&str] = &[
    "DefaultPreemption",
    "DynamicResources",
    "InterPodAffinity",
    "NodeAffinity",
    "NodeResourcesBalancedAllocation",
    "NodeResourcesFit",
    "PodTopologySpread",
    "VolumeBinding",
];

/// A resource and its weight.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ResourceSpec {
    /// The resource.
    pub name: String,
    /// Its weight.
    #[serde(default)]
    pub weight: i64,
}

fn default_resources() -> Vec<ResourceSpec> {
    ["cpu", "memory"]
        .into_iter()
        .map(|name| ResourceSpec {
            name: name.into(),
            weight: 1,
        })
        .collect()
}

/// A point of a utilization → score shape.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ShapePoint {
    /// Utilization, 0–100.
    pub utilization: i32,
    /// Score, 0–10.
    pub score: i32,
}

/// `NodeResourcesFitArgs`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct NodeResourcesFitArgs {
    /// Extended resources the filter ignores.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignored_resources: Vec<String>,
    /// Extended resource groups the filter ignores.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub ignored_resource_groups: Vec<String>,
    /// How nodes are scored.
    pub scoring_strategy: ScoringStrategyArgs,
}

/// `scoringStrategy`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct ScoringStrategyArgs {
    /// `LeastAllocated`, `MostAllocated` or `RequestedToCapacityRatio`.
    #[serde(rename = "type")]
    pub type_: String,
    /// The resources scored.
    pub resources: Vec<ResourceSpec>,
    /// The shape, for `RequestedToCapacityRatio`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested_to_capacity_ratio: Option<RequestedToCapacityRatioArgs>,
}

impl Default for ScoringStrategyArgs {
    fn default() -> Self {
        Self {
            type_: "LeastAllocated".into(),
            resources: default_resources(),
            requested_to_capacity_ratio: None,
        }
    }
}

/// `requestedToCapacityRatio`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct RequestedToCapacityRatioArgs {
    /// The shape.
    pub shape: Vec<ShapePoint>,
}

/// `NodeResourcesBalancedAllocationArgs`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct BalancedAllocationArgs {
    /// The resources compared.
    pub resources: Vec<ResourceSpec>,
}

impl Default for BalancedAllocationArgs {
    fn default() -> Self {
        Self {
            resources: default_resources(),
        }
    }
}

/// `InterPodAffinityArgs`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct InterPodAffinityArgs {
    /// Score per placed pod whose required affinity the incoming pod matches.
    pub hard_pod_affinity_weight: i32,
    /// Leave the preferred terms of placed pods out of scoring.
    pub ignore_preferred_terms_of_existing_pods: bool,
}

impl Default for InterPodAffinityArgs {
    fn default() -> Self {
        Self {
            hard_pod_affinity_weight: 1,
            ignore_preferred_terms_of_existing_pods: false,
        }
    }
}

/// `PodTopologySpreadArgs`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct PodTopologySpreadArgs {
    /// Constraints for pods that declare none (with `defaultingType: List`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub default_constraints: Vec<TopologySpreadConstraint>,
    /// `System` (upstream's built-in defaults) or `List`.
    pub defaulting_type: String,
}

impl Default for PodTopologySpreadArgs {
    fn default() -> Self {
        Self {
            default_constraints: Vec::new(),
            defaulting_type: "System".into(),
        }
    }
}

/// `NodeAffinityArgs`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct NodeAffinityArgs {
    /// Node affinity every pod of the profile gets on top of its own.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub added_affinity: Option<ApiNodeAffinity>,
}

/// `DefaultPreemptionArgs` (read and validated; preemption is not built yet).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct DefaultPreemptionArgs {
    /// Share of nodes to find preemption candidates on.
    pub min_candidate_nodes_percentage: i32,
    /// Least number of candidate nodes.
    pub min_candidate_nodes_absolute: i32,
}

impl Default for DefaultPreemptionArgs {
    fn default() -> Self {
        Self {
            min_candidate_nodes_percentage: 10,
            min_candidate_nodes_absolute: 100,
        }
    }
}

/// `VolumeBindingArgs` (`shape` is read and validated; it scores by storage capacity,
/// behind a feature gate upstream, and is not used).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct VolumeBindingArgs {
    /// How long binding volumes may take.
    pub bind_timeout_seconds: i64,
    /// Score shape by utilization.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub shape: Vec<ShapePoint>,
}

impl Default for VolumeBindingArgs {
    fn default() -> Self {
        Self {
            bind_timeout_seconds: 600,
            shape: Vec::new(),
        }
    }
}

/// `DynamicResourcesArgs`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct DynamicResourcesArgs {
    /// How long the device search may take on one node (zero: no limit).
    pub filter_timeout: GoDuration,
    /// How long PreBind waits for devices' binding conditions.
    pub binding_timeout: GoDuration,
}

impl Default for DynamicResourcesArgs {
    fn default() -> Self {
        Self {
            filter_timeout: GoDuration(std::time::Duration::from_secs(10)),
            binding_timeout: GoDuration(std::time::Duration::from_secs(600)),
        }
    }
}

fn typed<T: DeserializeOwned + Default>(args: &Value, field: &str) -> Result<T> {
    if args.is_null() {
        return Ok(T::default());
    }
    let mut args = args.clone();
    if let Some(map) = args.as_object_mut() {
        map.remove("kind");
        map.remove("apiVersion");
    }
    serde_json::from_value(args)
        .map_err(|e| Error::invalid(field, format!("strict decoding error: {e}")))
}

fn with_kind<T: Serialize>(name: &str, value: &T) -> Value {
    let mut doc = serde_json::to_value(value).unwrap_or(Value::Null);
    if let Some(map) = doc.as_object_mut() {
        map.insert("apiVersion".into(), V1.into());
        map.insert("kind".into(), format!("{name}Args").into());
    }
    doc
}

/// `args` of plugin `name` with every default filled in (and `kind`, `apiVersion` set).
pub fn complete(name: &str, args: &Value, field: &str) -> Result<Value> {
    Ok(match name {
        "NodeResourcesFit" => {
            let mut a: NodeResourcesFitArgs = typed(args, field)?;
            if a.scoring_strategy.resources.is_empty() {
                a.scoring_strategy.resources = default_resources();
            }
            with_kind(name, &a)
        }
        "NodeResourcesBalancedAllocation" => {
            with_kind(name, &typed::<BalancedAllocationArgs>(args, field)?)
        }
        "InterPodAffinity" => with_kind(name, &typed::<InterPodAffinityArgs>(args, field)?),
        "PodTopologySpread" => with_kind(name, &typed::<PodTopologySpreadArgs>(args, field)?),
        "NodeAffinity" => with_kind(name, &typed::<NodeAffinityArgs>(args, field)?),
        "DefaultPreemption" => with_kind(name, &typed::<DefaultPreemptionArgs>(args, field)?),
        "VolumeBinding" => with_kind(name, &typed::<VolumeBindingArgs>(args, field)?),
        "DynamicResources" => with_kind(name, &typed::<DynamicResourcesArgs>(args, field)?),
        _ if args.is_null() => Value::Null,
        _ => {
            return Err(Error::invalid(
                field,
                format!("plugin {name:?} takes no arguments"),
            ));
        }
    })
}

fn range(field: String, value: i64, lo: i64, hi: i64) -> Result<()> {
    if (lo..=hi).contains(&value) {
        Ok(())
    } else {
        Err(Error::invalid(
            field,
            format!("Invalid value: {value}: not in valid range [{lo}-{hi}]"),
        ))
    }
}

fn check_resources(field: &str, resources: &[ResourceSpec]) -> Result<()> {
    for (i, r) in resources.iter().enumerate() {
        range(format!("{field}[{i}].weight"), r.weight, 1, 100)?;
    }
    Ok(())
}

fn check_shape(field: &str, shape: &[ShapePoint]) -> Result<()> {
    if shape.is_empty() {
        return Err(Error::invalid(field, "Required value: at least one point"));
    }
    for (i, p) in shape.iter().enumerate() {
        range(
            format!("{field}[{i}].utilization"),
            i64::from(p.utilization),
            0,
            100,
        )?;
        range(format!("{field}[{i}].score"), i64::from(p.score), 0, 10)?;
        if i > 0 && p.utilization <= shape[i - 1].utilization {
            return Err(Error::invalid(
                format!("{field}[{i}].utilization"),
                format!(
                    "Invalid value: {}: utilization values must be sorted in increasing order",
                    p.utilization
                ),
            ));
        }
    }
    Ok(())
}

/// Checks the (completed) `args` of plugin `name`; errors name the field.
pub fn validate(name: &str, args: &Value, field: &str) -> Result<()> {
    match name {
        "NodeResourcesFit" => {
            let a: NodeResourcesFitArgs = typed(args, field)?;
            let s = &a.scoring_strategy;
            let sf = format!("{field}.scoringStrategy");
            check_resources(&format!("{sf}.resources"), &s.resources)?;
            match s.type_.as_str() {
                "LeastAllocated" | "MostAllocated" => Ok(()),
                "RequestedToCapacityRatio" => check_shape(
                    &format!("{sf}.requestedToCapacityRatio.shape"),
                    s.requested_to_capacity_ratio
                        .as_ref()
                        .map_or(&[][..], |r| &r.shape),
                ),
                other => Err(Error::invalid(
                    format!("{sf}.type"),
                    format!(
                        "Unsupported value: {other:?}: supported values: \"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\""
                    ),
                )),
            }
        }
        "NodeResourcesBalancedAllocation" => {
            let a: BalancedAllocationArgs = typed(args, field)?;
            check_resources(&format!("{field}.resources"), &a.resources)
        }
        "InterPodAffinity" => {
            let a: InterPodAffinityArgs = typed(args, field)?;
            range(
                format!("{field}.hardPodAffinityWeight"),
                i64::from(a.hard_pod_affinity_weight),
                0,
                100,
            )
        }
        "PodTopologySpread" => {
            let a: PodTopologySpreadArgs = typed(args, field)?;
            match a.defaulting_type.as_str() {
                "System" if !a.default_constraints.is_empty() => Err(Error::invalid(
                    format!("{field}.defaultConstraints"),
                    "Invalid value: when .defaultingType is \"System\", .defaultConstraints must be empty",
                )),
                "System" | "List" => Ok(()),
                other => Err(Error::invalid(
                    format!("{field}.defaultingType"),
                    format!("Unsupported value: {other:?}: supported values: \"List\", \"System\""),
                )),
            }?;
            for (i, c) in a.default_constraints.iter().enumerate() {
                let cf = format!("{field}.defaultConstraints[{i}]");
                if c.max_skew <= 0 {
                    return Err(Error::invalid(
                        format!("{cf}.maxSkew"),
                        format!("Invalid value: {}: must be greater than zero", c.max_skew),
                    ));
                }
                if c.topology_key.is_empty() {
                    return Err(Error::invalid(
                        format!("{cf}.topologyKey"),
                        "Required value",
                    ));
                }
                if !matches!(
                    c.when_unsatisfiable.as_str(),
                    "DoNotSchedule" | "ScheduleAnyway"
                ) {
                    return Err(Error::invalid(
                        format!("{cf}.whenUnsatisfiable"),
                        format!(
                            "Unsupported value: {:?}: supported values: \"DoNotSchedule\", \"ScheduleAnyway\"",
                            c.when_unsatisfiable
                        ),
                    ));
                }
                if c.label_selector.is_some() {
                    return Err(Error::invalid(
                        format!("{cf}.labelSelector"),
                        "Forbidden: constraint must not define a selector, as they deduced for each pod",
                    ));
                }
            }
            Ok(())
        }
        "NodeAffinity" => typed::<NodeAffinityArgs>(args, field).map(|_| ()),
        "DefaultPreemption" => {
            let a: DefaultPreemptionArgs = typed(args, field)?;
            range(
                format!("{field}.minCandidateNodesPercentage"),
                i64::from(a.min_candidate_nodes_percentage),
                0,
                100,
            )?;
            if a.min_candidate_nodes_absolute < 0 {
                return Err(Error::invalid(
                    format!("{field}.minCandidateNodesAbsolute"),
                    "Invalid value: must be non-negative",
                ));
            }
            if a.min_candidate_nodes_absolute == 0 && a.min_candidate_nodes_percentage == 0 {
                return Err(Error::invalid(
                    field,
                    "both minCandidateNodesPercentage and minCandidateNodesAbsolute cannot be zero",
                ));
            }
            Ok(())
        }
        "DynamicResources" => {
            let a: DynamicResourcesArgs = typed(args, field)?;
            if a.binding_timeout.0 < std::time::Duration::from_secs(1) {
                return Err(Error::invalid(
                    format!("{field}.bindingTimeout"),
                    format!(
                        "Invalid value: {:?}: must be at least 1 second",
                        super::go_duration(a.binding_timeout.0.as_nanos() as i64)
                    ),
                ));
            }
            Ok(())
        }
        "VolumeBinding" => {
            let a: VolumeBindingArgs = typed(args, field)?;
            if a.bind_timeout_seconds < 0 {
                return Err(Error::invalid(
                    format!("{field}.bindTimeoutSeconds"),
                    "Invalid value: must be non-negative",
                ));
            }
            if a.shape.is_empty() {
                Ok(())
            } else {
                check_shape(&format!("{field}.shape"), &a.shape)
            }
        }
        _ => Ok(()),
    }
}

/// The arguments of `name` in `configs` (defaults when absent).
fn find<T: DeserializeOwned + Default>(configs: &[super::PluginConfig], name: &str) -> T {
    configs
        .iter()
        .find(|pc| pc.name == name)
        .and_then(|pc| typed(&pc.args, "").ok())
        .unwrap_or_default()
}

fn weighted(resources: &[ResourceSpec]) -> Vec<WeightedResource> {
    resources
        .iter()
        .map(|r| WeightedResource {
            name: r.name.clone(),
            weight: r.weight.max(1),
        })
        .collect()
}

/// NodeResourcesFit as `configs` set it up.
pub fn node_resources_fit(configs: &[super::PluginConfig]) -> NodeResourcesFit {
    let a: NodeResourcesFitArgs = find(configs, "NodeResourcesFit");
    let s = &a.scoring_strategy;
    let strategy = match s.type_.as_str() {
        "MostAllocated" => ScoringStrategy::MostAllocated,
        "RequestedToCapacityRatio" => ScoringStrategy::RequestedToCapacityRatio(
            s.requested_to_capacity_ratio
                .iter()
                .flat_map(|r| &r.shape)
                .map(|p| (i64::from(p.utilization), i64::from(p.score)))
                .collect(),
        ),
        _ => ScoringStrategy::LeastAllocated,
    };
    let resources = if s.resources.is_empty() {
        plugins::default_scored_resources()
    } else {
        weighted(&s.resources)
    };
    NodeResourcesFit {
        strategy,
        resources,
        ignored_resources: a.ignored_resources,
        ignored_resource_groups: a.ignored_resource_groups,
    }
}

/// NodeResourcesBalancedAllocation as `configs` set it up.
pub fn balanced_allocation(configs: &[super::PluginConfig]) -> BalancedAllocation {
    let a: BalancedAllocationArgs = find(configs, "NodeResourcesBalancedAllocation");
    BalancedAllocation {
        resources: a.resources.into_iter().map(|r| r.name).collect(),
    }
}

/// InterPodAffinity as `configs` set it up.
pub fn inter_pod_affinity(configs: &[super::PluginConfig]) -> InterPodAffinity {
    let a: InterPodAffinityArgs = find(configs, "InterPodAffinity");
    InterPodAffinity::new(
        i64::from(a.hard_pod_affinity_weight),
        a.ignore_preferred_terms_of_existing_pods,
    )
}

/// PodTopologySpread as `configs` set it up.
pub fn pod_topology_spread(configs: &[super::PluginConfig]) -> PodTopologySpread {
    let a: PodTopologySpreadArgs = find(configs, "PodTopologySpread");
    if a.defaulting_type == "List" {
        let defaults = a
            .default_constraints
            .iter()
            .map(|c| DefaultConstraint {
                max_skew: c.max_skew,
                topology_key: c.topology_key.clone(),
                when_unsatisfiable: c.when_unsatisfiable.clone(),
            })
            .collect();
        PodTopologySpread::new(defaults, false)
    } else {
        PodTopologySpread::default()
    }
}

/// The node affinity NodeAffinity adds to every pod, as `configs` set it up.
pub fn added_affinity(configs: &[super::PluginConfig]) -> Option<ApiNodeAffinity> {
    find::<NodeAffinityArgs>(configs, "NodeAffinity").added_affinity
}

/// DefaultPreemption's parameters as `configs` set them up.
pub fn preemption(configs: &[super::PluginConfig]) -> crate::preemption::PreemptionParams {
    let a: DefaultPreemptionArgs = find(configs, "DefaultPreemption");
    crate::preemption::PreemptionParams {
        min_candidate_nodes_percentage: a.min_candidate_nodes_percentage.clamp(0, 100) as u32,
        min_candidate_nodes_absolute: a.min_candidate_nodes_absolute.max(0) as u32,
    }
}

/// DynamicResources as `configs` set it up.
pub fn dynamic_resources(configs: &[super::PluginConfig]) -> crate::plugins::DynamicResources {
    let a: DynamicResourcesArgs = find(configs, "DynamicResources");
    crate::plugins::DynamicResources::new(Some(a.filter_timeout.0), a.binding_timeout.0)
}

/// How long VolumeBinding waits for claims to be bound, as `configs` set it up.
pub fn volume_bind_timeout(configs: &[super::PluginConfig]) -> std::time::Duration {
    let a: VolumeBindingArgs = find(configs, "VolumeBinding");
    std::time::Duration::from_secs(a.bind_timeout_seconds.max(0) as u64)
}
