//! DefaultPreemption (the PostFilter stage): when a pod fits nowhere, find nodes where
//! evicting pods of lower priority would make it fit, keep as many of those pods as still
//! allows it (PodDisruptionBudget-protected ones first), and pick the node whose eviction
//! hurts least, as upstream ranks them.

use std::collections::BTreeMap;

use crate::cache::{Cache, NodeInfo, PlacedPod};
use crate::framework::{FitError, PodInfo, Profile, pod_priority};

/// How many candidate nodes preemption looks for (`DefaultPreemptionArgs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreemptionParams {
    /// Share of the nodes, in percent.
    pub min_candidate_nodes_percentage: u32,
    /// Least number of nodes.
    pub min_candidate_nodes_absolute: u32,
}

impl Default for PreemptionParams {
    fn default() -> Self {
        Self {
            min_candidate_nodes_percentage: 10,
            min_candidate_nodes_absolute: 100,
        }
    }
}

/// A pod preemption would evict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Victim {
    /// `namespace/name`.
    pub key: String,
    /// Its priority.
    pub priority: i32,
    /// When it started.
    pub started: i64,
}

/// A node where preemption makes room, and at what cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// The node.
    pub node: String,
    /// The pods to evict.
    pub victims: Vec<Victim>,
    /// How many of them a PodDisruptionBudget protects.
    pub pdb_violations: usize,
}

/// Why preemption found nothing, per node, in upstream's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// Evict these pods on this node.
    Preempt(Candidate),
    /// Nothing to do; the summary to add to the failure message
    /// (`preemption: 0/3 nodes are available: ...`).
    Nothing(String),
}

/// Why `pod` may not preempt at all, in upstream's words: `preemptionPolicy: Never`, or pods
/// it already preempted on its nominated node still terminating. `None` when it may.
pub fn not_eligible(pod: &PodInfo, cache: &Cache) -> Option<&'static str> {
    let spec = pod.pod.spec.as_ref();
    if spec.and_then(|s| s.preemption_policy.as_deref()) == Some("Never") {
        return Some("not eligible due to preemptionPolicy=Never.");
    }
    let nominated = pod
        .pod
        .status
        .as_ref()
        .and_then(|s| s.nominated_node_name.as_deref())
        .filter(|n| !n.is_empty())?;
    let priority = pod_priority(&pod.pod);
    let terminating = cache.node(nominated).is_some_and(|node| {
        node.pods
            .values()
            .any(|p| p.terminating && p.priority < priority)
    });
    terminating.then_some("not eligible due to a terminating pod on the nominated node.")
}

/// Finds where evicting lower-priority pods lets `pod` in (its PreFilter state must be in
/// place, as `Profile::select` leaves it).
pub fn preempt(
    profile: &Profile,
    params: PreemptionParams,
    pod: &mut PodInfo,
    cache: &Cache,
    fit: &FitError,
) -> Outcome {
    let unresolvable = fit.nodes.saturating_sub(fit.resolvable_nodes.len());
    let summary = |no_victims: usize| {
        let mut parts = Vec::new();
        if no_victims > 0 {
            parts.push(format!(
                "{no_victims} No preemption victims found for incoming pod"
            ));
        }
        if unresolvable > 0 {
            parts.push(format!(
                "{unresolvable} Preemption is not helpful for scheduling"
            ));
        }
        parts.sort();
        format!(
            "preemption: 0/{} nodes are available: {}.",
            fit.nodes,
            parts.join(", ")
        )
    };
    if let Some(why) = not_eligible(pod, cache) {
        return Outcome::Nothing(format!("preemption: {why}"));
    }
    let potential: Vec<&NodeInfo> = fit
        .resolvable_nodes
        .iter()
        .filter_map(|name| cache.node(name))
        .collect();
    if potential.is_empty() {
        return Outcome::Nothing(summary(0));
    }
    let wanted = (cache.node_count() * params.min_candidate_nodes_percentage as usize / 100)
        .max(params.min_candidate_nodes_absolute as usize)
        .min(potential.len())
        .max(1);
    let offset = rand::random_range(0..potential.len());
    let mut candidates = Vec::new();
    for node in potential.iter().cycle().skip(offset).take(potential.len()) {
        if let Some(c) = victims_on(profile, pod, cache, node) {
            candidates.push(c);
            if candidates.len() >= wanted {
                break;
            }
        }
    }
    match pick(candidates) {
        Some(best) => Outcome::Preempt(best),
        None => Outcome::Nothing(summary(potential.len())),
    }
}

/// The fewest lower-priority pods on `node` whose eviction lets `pod` in, or `None`.
fn victims_on(
    profile: &Profile,
    pod: &mut PodInfo,
    cache: &Cache,
    node: &NodeInfo,
) -> Option<Candidate> {
    let priority = pod_priority(&pod.pod);
    let mut lower: Vec<Keyed> = node
        .pods
        .iter()
        .filter(|(_, p)| p.priority < priority)
        .map(|(k, p)| (k.clone(), p.clone()))
        .collect();
    if lower.is_empty() {
        return None;
    }
    let mut what_if = node.clone();
    for (key, p) in &lower {
        what_if.remove_pod(key);
        profile.update_state(pod, p, node, false);
    }
    let restore = |pod: &mut PodInfo, evicted: &[Keyed]| {
        for (_, p) in evicted {
            profile.update_state(pod, p, node, true);
        }
    };
    if profile.filter_node(pod, &what_if).is_err() {
        restore(pod, &lower);
        return None;
    }
    // The most important first: they get the first chance to stay.
    lower.sort_by(|(_, a), (_, b)| {
        b.priority
            .cmp(&a.priority)
            .then_with(|| a.started.cmp(&b.started))
    });
    let (protected, unprotected) = split_by_budgets(lower, cache);
    let mut victims: Vec<Keyed> = Vec::new();
    let mut pdb_violations = 0;
    for (group, is_protected) in [(protected, true), (unprotected, false)] {
        for (key, p) in group {
            what_if.add_pod(key.clone(), p.clone());
            profile.update_state(pod, &p, node, true);
            if profile.filter_node(pod, &what_if).is_err() {
                what_if.remove_pod(&key);
                profile.update_state(pod, &p, node, false);
                pdb_violations += usize::from(is_protected);
                victims.push((key, p));
            }
        }
    }
    restore(pod, &victims);
    Some(Candidate {
        node: node.name().to_string(),
        victims: victims
            .into_iter()
            .map(|(key, p)| Victim {
                key,
                priority: p.priority,
                started: p.started,
            })
            .collect(),
        pdb_violations,
    })
}

/// A placed pod with its key.
type Keyed = (String, PlacedPod);

/// Splits pods (in order) into those whose eviction would exceed a PodDisruptionBudget's
/// allowed disruptions and the others.
fn split_by_budgets(pods: Vec<Keyed>, cache: &Cache) -> (Vec<Keyed>, Vec<Keyed>) {
    let mut allowed: BTreeMap<(String, usize), i32> = BTreeMap::new();
    let mut protected = Vec::new();
    let mut unprotected = Vec::new();
    for (key, p) in pods {
        let name = key.split_once('/').map_or(key.as_str(), |(_, n)| n);
        let mut violates = false;
        for (i, budget) in cache.budgets_in(&p.namespace).enumerate() {
            let Some(selector) = budget.selector.as_ref().filter(|s| !s.is_empty()) else {
                continue;
            };
            if !selector.matches(Some(&p.labels)) || budget.disrupted.contains(name) {
                continue;
            }
            let left = allowed
                .entry((p.namespace.clone(), i))
                .or_insert(budget.disruptions_allowed);
            *left -= 1;
            violates |= *left < 0;
        }
        if violates {
            protected.push((key, p));
        } else {
            unprotected.push((key, p));
        }
    }
    (protected, unprotected)
}

/// Upstream's ranking: fewest budget violations, then the lowest highest victim priority,
/// the smallest sum of priorities, the fewest victims, the latest start among the highest
/// priority victims; then the first.
fn pick(mut candidates: Vec<Candidate>) -> Option<Candidate> {
    if let Some(i) = candidates.iter().position(|c| c.victims.is_empty()) {
        return Some(candidates.swap_remove(i));
    }
    let key = |c: &Candidate| {
        let highest = c
            .victims
            .iter()
            .map(|v| v.priority)
            .max()
            .unwrap_or(i32::MIN);
        let sum: i64 = c
            .victims
            .iter()
            .map(|v| i64::from(v.priority) + i64::from(i32::MAX) + 1)
            .sum();
        let earliest_of_highest = c
            .victims
            .iter()
            .filter(|v| v.priority == highest)
            .map(|v| v.started)
            .min()
            .unwrap_or(0);
        (
            c.pdb_violations,
            highest,
            sum,
            c.victims.len(),
            std::cmp::Reverse(earliest_of_highest),
        )
    };
    let best = candidates
        .iter()
        .enumerate()
        .min_by_key(|(i, c)| (key(c), *i))
        .map(|(i, _)| i)?;
    Some(candidates.swap_remove(best))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::default_profile;
    use crate::plugins::test_support::{cluster, node, pod};
    use serde_json::json;

    fn with_priority(
        name: &str,
        priority: i32,
        cpu: &str,
        labels: serde_json::Value,
    ) -> k8s_openapi::api::core::v1::Pod {
        let mut p = pod(name, labels, json!({"priority": priority}));
        p.spec.as_mut().unwrap().containers[0].resources =
            Some(serde_json::from_value(json!({"requests": {"cpu": cpu}})).unwrap());
        p
    }

    fn run(cache: &Cache, incoming: k8s_openapi::api::core::v1::Pod) -> Outcome {
        let profile = default_profile("default-scheduler");
        let mut info = PodInfo::new(incoming);
        let fit = profile
            .select(&mut info, cache)
            .expect_err("it does not fit");
        preempt(
            &profile,
            PreemptionParams::default(),
            &mut info,
            cache,
            &fit,
        )
    }

    #[test]
    fn the_cheapest_node_is_chosen_and_needless_victims_are_spared() {
        // Nodes of 4 CPUs. n1: two low pods (1 and 3 CPUs); n2: one mid pod of 3 CPUs and
        // one low pod of 1 CPU. A 3-CPU pod of priority 100 needs 3 CPUs freed.
        let cache = cluster(
            vec![node("n1", json!({})), node("n2", json!({}))],
            vec![
                (with_priority("small", 1, "1", json!({})), "n1"),
                (with_priority("big", 1, "3", json!({})), "n1"),
                (with_priority("mid", 50, "3", json!({})), "n2"),
                (with_priority("tiny", 1, "1", json!({})), "n2"),
            ],
        );
        let outcome = run(&cache, with_priority("urgent", 100, "3", json!({})));
        let Outcome::Preempt(c) = outcome else {
            panic!("{outcome:?}")
        };
        // On n1 evicting "big" (priority 1) suffices and "small" stays; n2 would cost the
        // priority-50 pod.
        assert_eq!(c.node, "n1");
        let keys: Vec<&str> = c.victims.iter().map(|v| v.key.as_str()).collect();
        assert_eq!(keys, ["default/big"]);
    }

    #[test]
    fn budgets_steer_the_choice_and_equal_priorities_are_never_victims() {
        let mut cache = cluster(
            vec![node("n1", json!({})), node("n2", json!({}))],
            vec![
                (with_priority("guarded", 1, "3", json!({"app": "db"})), "n1"),
                (with_priority("free", 1, "3", json!({"app": "web"})), "n2"),
            ],
        );
        cache.set_budget(
            "default",
            "db",
            Some(crate::cache::Budget {
                selector: Some(capstan_meta::labels::LabelSelector::parse("app=db").unwrap()),
                disruptions_allowed: 0,
                disrupted: Default::default(),
            }),
        );
        let Outcome::Preempt(c) = run(&cache, with_priority("urgent", 100, "3", json!({}))) else {
            panic!("no preemption")
        };
        assert_eq!(c.node, "n2");
        assert_eq!(c.pdb_violations, 0);
        // A pod of the same priority as everyone else preempts nobody.
        let outcome = run(&cache, with_priority("peer", 1, "3", json!({})));
        assert_eq!(
            outcome,
            Outcome::Nothing(
                "preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod."
                    .into()
            )
        );
        // preemptionPolicy Never: not eligible.
        let mut never = with_priority("polite", 100, "3", json!({}));
        never.spec.as_mut().unwrap().preemption_policy = Some("Never".into());
        assert_eq!(
            run(&cache, never),
            Outcome::Nothing("preemption: not eligible due to preemptionPolicy=Never.".into())
        );
    }

    #[test]
    fn evicting_a_pod_can_lift_anti_affinity() {
        // n1's only pod repels web pods; evicting it (lower priority) lets a web pod in.
        let repels = with_priority("repels", 1, "100m", json!({"app": "db"}));
        let mut repels = repels;
        repels.spec.as_mut().unwrap().affinity = Some(
            serde_json::from_value(json!({"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
                {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "kubernetes.io/hostname"}]}}))
            .unwrap(),
        );
        let cache = cluster(
            vec![node("n1", json!({"kubernetes.io/hostname": "n1"}))],
            vec![(repels, "n1")],
        );
        let Outcome::Preempt(c) = run(
            &cache,
            with_priority("web", 10, "100m", json!({"app": "web"})),
        ) else {
            panic!("no preemption")
        };
        assert_eq!(c.victims[0].key, "default/repels");
    }
}
