//! The legacy scheduling `Policy` (`--policy-config-file`, `--policy-configmap`): its
//! predicates and priorities mapped onto the plugins that replaced them, as upstream's
//! conversion did.

use serde::Deserialize;
use serde_json::{Value, json};

use super::{Configuration, PluginConfig, PluginRef, PluginSet, Plugins};
use crate::error::{Error, Result};

/// The ConfigMap key that holds a policy.
pub const CONFIG_MAP_KEY: &str = "policy.cfg";

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Policy {
    #[serde(default)]
    kind: String,
    #[serde(default)]
    api_version: String,
    predicates: Option<Vec<Predicate>>,
    priorities: Option<Vec<Priority>>,
    #[serde(default)]
    extenders: Vec<Value>,
    hard_pod_affinity_symmetric_weight: Option<i32>,
    #[serde(default)]
    always_check_all_predicates: bool,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Predicate {
    name: String,
    argument: Option<Value>,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Priority {
    name: String,
    #[serde(default)]
    weight: i32,
    argument: Option<Value>,
}

/// The plugins each predicate became.
fn predicate_plugins(name: &str) -> Option<&'static [&'static str]> {
    Some(match name {
        "PodFitsResources" => &["NodeResourcesFit"],
        "PodFitsHostPorts" | "PodFitsPorts" => &["NodePorts"],
        "HostName" | "PodFitsHost" => &["NodeName"],
        "MatchNodeSelector" => &["NodeAffinity"],
        "PodToleratesNodeTaints" => &["TaintToleration"],
        "CheckNodeUnschedulable" => &["NodeUnschedulable"],
        "MatchInterPodAffinity" => &["InterPodAffinity"],
        "EvenPodsSpread" => &["PodTopologySpread"],
        "NoVolumeZoneConflict" => &["VolumeZone"],
        "NoDiskConflict" => &["VolumeRestrictions"],
        "MaxCSIVolumeCountPred" => &["NodeVolumeLimits"],
        "CheckVolumeBinding" => &["VolumeBinding"],
        "GeneralPredicates" => &["NodeResourcesFit", "NodeName", "NodePorts", "NodeAffinity"],
        _ => return None,
    })
}

/// Upstream's default predicates (when a policy lists none).
const DEFAULT_PREDICATES: &[&str] = &[
    "CheckNodeUnschedulable",
    "GeneralPredicates",
    "PodToleratesNodeTaints",
    "NoVolumeZoneConflict",
    "MaxCSIVolumeCountPred",
    "MatchInterPodAffinity",
    "NoDiskConflict",
    "CheckVolumeBinding",
    "EvenPodsSpread",
];

/// Predicates every policy gets.
const MANDATORY_PREDICATES: &[&str] = &["CheckNodeUnschedulable", "PodToleratesNodeTaints"];

/// Upstream's default priorities with their weights (when a policy lists none).
const DEFAULT_PRIORITIES: &[(&str, i32)] = &[
    ("BalancedResourceAllocation", 1),
    ("ImageLocalityPriority", 1),
    ("InterPodAffinityPriority", 1),
    ("LeastRequestedPriority", 1),
    ("NodeAffinityPriority", 1),
    ("TaintTolerationPriority", 1),
    ("EvenPodsSpreadPriority", 2),
];

/// Priorities of plugins upstream has removed since: skipped with a warning.
const RETIRED_PRIORITIES: &[&str] = &[
    "SelectorSpreadPriority",
    "ServiceSpreadingPriority",
    "NodePreferAvoidPodsPriority",
    "EqualPriority",
    "ResourceLimitsPriority",
];

/// The plugin a priority became, with the NodeResourcesFit strategy it implies.
fn priority_plugin(name: &str) -> Option<(&'static str, Option<&'static str>)> {
    Some(match name {
        "LeastRequestedPriority" => ("NodeResourcesFit", Some("LeastAllocated")),
        "MostRequestedPriority" => ("NodeResourcesFit", Some("MostAllocated")),
        "RequestedToCapacityRatioPriority" => {
            ("NodeResourcesFit", Some("RequestedToCapacityRatio"))
        }
        "BalancedResourceAllocation" => ("NodeResourcesBalancedAllocation", None),
        "ImageLocalityPriority" => ("ImageLocality", None),
        "InterPodAffinityPriority" => ("InterPodAffinity", None),
        "NodeAffinityPriority" => ("NodeAffinity", None),
        "TaintTolerationPriority" => ("TaintToleration", None),
        "EvenPodsSpreadPriority" => ("PodTopologySpread", None),
        _ => return None,
    })
}

/// Replaces the plugins of `config`'s single profile by what the policy in `text` (JSON or
/// YAML) amounts to; returns warnings. A configuration that sets plugins itself, or has
/// several profiles, cannot take a policy (upstream's rule).
pub fn apply_policy(config: &mut Configuration, text: &str, source: &str) -> Result<Vec<String>> {
    let bad = |m: String| Error::invalid(source, m);
    let doc: Value = serde_saphyr::from_str(text).map_err(|e| bad(format!("not a Policy: {e}")))?;
    let policy: Policy =
        serde_json::from_value(doc).map_err(|e| bad(format!("strict decoding error: {e}")))?;
    if !policy.kind.is_empty() && policy.kind != "Policy" {
        return Err(bad(format!("kind {:?} is not Policy", policy.kind)));
    }
    if !matches!(
        policy.api_version.as_str(),
        "" | "v1" | "kubescheduler.config.k8s.io/v1"
    ) {
        return Err(bad(format!(
            "apiVersion {:?} is not v1",
            policy.api_version
        )));
    }
    if !policy.extenders.is_empty() {
        return Err(bad(
            "scheduler extenders are not supported by Capstan".into()
        ));
    }
    let [profile] = &mut config.profiles[..] else {
        return Err(bad(
            "a scheduling policy applies to a single profile; the configuration has several".into(),
        ));
    };
    let defaults_only = profile.plugins == Plugins::default()
        && profile.plugin_config.iter().all(|pc| {
            super::args::WITH_ARGS.contains(&pc.name.as_str())
                && pc.args == super::args::complete(&pc.name, &Value::Null, "").unwrap_or_default()
        });
    if !defaults_only {
        return Err(bad(
            "a scheduling policy cannot be combined with plugin configuration in the profile"
                .into(),
        ));
    }
    let mut warnings = Vec::new();
    if policy.always_check_all_predicates {
        warnings.push(format!(
            "{source}: alwaysCheckAllPredicates is ignored (every filter runs until one rejects)"
        ));
    }
    let mut filters: Vec<&'static str> = Vec::new();
    let mut add_filter = |plugin: &'static str| {
        if !filters.contains(&plugin) {
            filters.push(plugin);
        }
    };
    let predicates: Vec<(String, Option<Value>)> = match &policy.predicates {
        None => DEFAULT_PREDICATES
            .iter()
            .map(|n| (n.to_string(), None))
            .collect(),
        Some(list) => list
            .iter()
            .map(|p| (p.name.clone(), p.argument.clone()))
            .collect(),
    };
    for name in MANDATORY_PREDICATES {
        predicate_plugins(name)
            .into_iter()
            .flatten()
            .for_each(|p| add_filter(p));
    }
    for (i, (name, argument)) in predicates.iter().enumerate() {
        if argument.is_some() {
            return Err(Error::invalid(
                format!("{source}: predicates[{i}]"),
                format!(
                    "predicate {name:?} with an argument (labelsPresence, serviceAffinity) is not supported: those plugins are gone upstream"
                ),
            ));
        }
        match predicate_plugins(name) {
            Some(plugins) => plugins.iter().for_each(|p| add_filter(p)),
            None => {
                return Err(Error::invalid(
                    format!("{source}: predicates[{i}]"),
                    format!("predicate {name:?} is not known or not supported"),
                ));
            }
        }
    }
    let priorities: Vec<(String, i32, Option<Value>)> = match &policy.priorities {
        None => DEFAULT_PRIORITIES
            .iter()
            .map(|(n, w)| (n.to_string(), *w, None))
            .collect(),
        Some(list) => list
            .iter()
            .map(|p| (p.name.clone(), p.weight, p.argument.clone()))
            .collect(),
    };
    let mut scores: Vec<PluginRef> = Vec::new();
    let mut strategy: Option<Value> = None;
    for (i, (name, weight, argument)) in priorities.iter().enumerate() {
        let field = format!("{source}: priorities[{i}]");
        if RETIRED_PRIORITIES.contains(&name.as_str()) {
            warnings.push(format!("{field}: {name} is gone upstream and is skipped"));
            continue;
        }
        let Some((plugin, kind)) = priority_plugin(name) else {
            return Err(Error::invalid(
                field,
                format!("priority {name:?} is not known or not supported"),
            ));
        };
        if !(1..=100).contains(weight) {
            return Err(Error::invalid(
                format!("{field}.weight"),
                format!("Invalid value: {weight}: must be in 1-100"),
            ));
        }
        if let Some(kind) = kind {
            if strategy.is_some() {
                warnings.push(format!(
                    "{field}: {name} also scores by resources; only the first such priority is used"
                ));
                continue;
            }
            let mut s = json!({"type": kind});
            if let Some(arg) = argument
                .as_ref()
                .and_then(|a| a.get("requestedToCapacityRatioArguments"))
            {
                if let Some(shape) = arg.get("shape") {
                    s["requestedToCapacityRatio"] = json!({"shape": shape});
                }
                if let Some(resources) = arg.get("resources") {
                    s["resources"] = resources.clone();
                }
            }
            strategy = Some(s);
        } else if argument.is_some() {
            return Err(Error::invalid(
                field,
                format!(
                    "priority {name:?} takes no argument here (serviceAntiAffinity and labelPreference are gone upstream)"
                ),
            ));
        }
        if !scores.iter().any(|p| p.name == plugin) {
            scores.push(PluginRef {
                name: plugin.into(),
                weight: *weight,
            });
        }
    }
    let binds_volumes: &[&str] = if filters.contains(&"VolumeBinding") {
        &["VolumeBinding"]
    } else {
        &[]
    };
    let enabled = |names: &[&str]| PluginSet {
        enabled: names
            .iter()
            .map(|n| PluginRef {
                name: n.to_string(),
                weight: 0,
            })
            .collect(),
        disabled: Vec::new(),
    };
    profile.plugins = Plugins {
        multi_point: PluginSet {
            enabled: Vec::new(),
            disabled: enabled(&["*"]).enabled,
        },
        filter: enabled(&filters),
        score: PluginSet {
            enabled: scores,
            disabled: Vec::new(),
        },
        post_filter: enabled(&["DefaultPreemption"]),
        reserve: enabled(binds_volumes),
        pre_bind: enabled(binds_volumes),
        bind: enabled(&["DefaultBinder"]),
        queue_sort: enabled(&["PrioritySort"]),
        ..Default::default()
    };
    let mut args = Vec::new();
    if let Some(s) = strategy {
        args.push(PluginConfig {
            name: "NodeResourcesFit".into(),
            args: json!({"scoringStrategy": s}),
        });
    }
    if let Some(w) = policy.hard_pod_affinity_symmetric_weight {
        args.push(PluginConfig {
            name: "InterPodAffinity".into(),
            args: json!({"hardPodAffinityWeight": w}),
        });
    }
    for pc in args {
        profile.plugin_config.retain(|c| c.name != pc.name);
        profile.plugin_config.push(pc);
    }
    config.complete()?;
    config.validate()?;
    Ok(warnings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::build_profile;

    fn default_config() -> Configuration {
        let mut c = Configuration::default();
        c.complete().unwrap();
        c
    }

    #[test]
    fn predicates_and_priorities_become_plugins() {
        let mut config = default_config();
        let warnings = apply_policy(
            &mut config,
            r#"{"kind": "Policy", "apiVersion": "v1",
                "predicates": [{"name": "PodFitsResources"}, {"name": "MatchNodeSelector"}, {"name": "PodFitsResources"}],
                "priorities": [{"name": "MostRequestedPriority", "weight": 3},
                               {"name": "SelectorSpreadPriority", "weight": 1},
                               {"name": "ImageLocalityPriority", "weight": 2}],
                "hardPodAffinitySymmetricWeight": 5}"#,
            "--policy-config-file",
        )
        .unwrap();
        assert!(
            warnings
                .iter()
                .any(|w| w.contains("SelectorSpreadPriority")),
            "{warnings:?}"
        );
        let profile = &config.profiles[0];
        let (built, _) = build_profile(&config, profile).unwrap();
        assert_eq!(
            built.filter_names(),
            [
                "NodeUnschedulable",
                "TaintToleration",
                "NodeResourcesFit",
                "NodeAffinity"
            ]
        );
        assert_eq!(
            built.score_names(),
            [("NodeResourcesFit", 3), ("ImageLocality", 2)]
        );
        assert!(built.preemption.is_some());
        let fit = crate::config::args::node_resources_fit(&profile.plugin_config);
        assert_eq!(fit.strategy, crate::plugins::ScoringStrategy::MostAllocated);
        assert_eq!(
            crate::config::args::inter_pod_affinity(&profile.plugin_config)
                .hard_pod_affinity_weight,
            5
        );
    }

    #[test]
    fn a_policy_without_lists_gets_the_defaults_and_bad_ones_are_refused() {
        let mut config = default_config();
        apply_policy(&mut config, "kind: Policy\napiVersion: v1\n", "policy").unwrap();
        let (built, _) = build_profile(&config, &config.profiles[0]).unwrap();
        assert!(built.filter_names().contains(&"VolumeBinding"));
        assert!(built.score_names().contains(&("PodTopologySpread", 2)));
        let err = |text: &str| {
            apply_policy(&mut default_config(), text, "policy")
                .unwrap_err()
                .to_string()
        };
        assert!(err(r#"{"predicates": [{"name": "Nope"}]}"#).contains("predicates[0]"));
        assert!(
            err(r#"{"priorities": [{"name": "ImageLocalityPriority", "weight": 0}]}"#)
                .contains("priorities[0].weight")
        );
        assert!(err(r#"{"extenders": [{"urlPrefix": "http://x"}]}"#).contains("extenders"));
        assert!(err(r#"{"predicats": []}"#).contains("unknown field"));
        // A profile that configures plugins cannot take a policy.
        let (mut custom, _) = Configuration::load(
            "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\nprofiles:\n- schedulerName: a\n  plugins:\n    score:\n      disabled:\n      - name: ImageLocality\n",
        )
        .unwrap();
        assert!(
            apply_policy(&mut custom, "{}", "policy")
                .unwrap_err()
                .to_string()
                .contains("cannot be combined")
        );
    }
}
