//! PodTopologySpread: `whenUnsatisfiable: DoNotSchedule` constraints filter out nodes where
//! placing the pod would make the skew between topology domains exceed `maxSkew`;
//! `ScheduleAnyway` constraints (or the default constraints, for pods that declare none)
//! prefer nodes in domains with fewer matching pods.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use capstan_meta::labels::{LabelSelector, Operator, Requirement};
use k8s_openapi::api::core::v1::TopologySpreadConstraint;

use crate::cache::{Cache, NodeInfo, PlacedPod, PodChange};
use crate::framework::{Filter, MAX_NODE_SCORE, PodInfo, Rejection, Score, StateValue};
use crate::kept::KeptAcrossPods;
use crate::plugins::{required_node_affinity_matches, untolerated_taint};

/// The label that names a node, whose domains are single nodes.
pub const HOSTNAME_KEY: &str = "kubernetes.io/hostname";
/// The label that names a zone.
pub const ZONE_KEY: &str = "topology.kubernetes.io/zone";

/// A constraint applied when a pod declares none (its selector comes from the pod's owners).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DefaultConstraint {
    /// `maxSkew`.
    pub max_skew: i32,
    /// `topologyKey`.
    pub topology_key: String,
    /// `whenUnsatisfiable` (upstream allows only `ScheduleAnyway` here).
    pub when_unsatisfiable: String,
}

/// Upstream's system default constraints: zones (skew 5) and nodes (skew 3), both soft.
pub fn system_default_constraints() -> Vec<DefaultConstraint> {
    vec![
        DefaultConstraint {
            max_skew: 3,
            topology_key: HOSTNAME_KEY.into(),
            when_unsatisfiable: "ScheduleAnyway".into(),
        },
        DefaultConstraint {
            max_skew: 5,
            topology_key: ZONE_KEY.into(),
            when_unsatisfiable: "ScheduleAnyway".into(),
        },
    ]
}

/// The PodTopologySpread plugin.
#[derive(Debug, Clone)]
pub struct PodTopologySpread {
    /// Constraints for pods that declare none.
    default_constraints: Vec<DefaultConstraint>,
    /// Whether those are the system defaults (`defaultingType: System`), under which nodes
    /// missing a topology label still take part in scoring.
    system_defaulted: bool,
    /// Domain counts kept across pods.
    kept: Arc<Mutex<KeptAcrossPods<CountsKey, DomainCounts>>>,
}

impl Default for PodTopologySpread {
    fn default() -> Self {
        Self::new(system_default_constraints(), true)
    }
}

/// A constraint made ready to evaluate.
#[derive(Debug, Clone)]
struct Constraint {
    max_skew: i64,
    topology_key: String,
    /// `None` matches no pod.
    selector: Option<LabelSelector>,
    min_domains: usize,
    honor_node_affinity: bool,
    honor_taints: bool,
}

impl Constraint {
    fn new(c: &TopologySpreadConstraint, pod: &PodInfo) -> Self {
        let mut selector = c
            .label_selector
            .as_ref()
            .and_then(|s| LabelSelector::from_api(s).ok());
        if let Some(selector) = selector.as_mut() {
            for key in c.match_label_keys.iter().flatten() {
                if let Some(v) = pod.labels().and_then(|l| l.get(key)) {
                    selector.requirements.push(Requirement {
                        key: key.clone(),
                        op: Operator::In(vec![v.clone()]),
                    });
                }
            }
        }
        Self {
            max_skew: i64::from(c.max_skew),
            topology_key: c.topology_key.clone(),
            selector,
            min_domains: c.min_domains.map_or(1, |m| m.max(1) as usize),
            honor_node_affinity: c.node_affinity_policy.as_deref() != Some("Ignore"),
            honor_taints: c.node_taints_policy.as_deref() == Some("Honor"),
        }
    }

    /// Whether the node's pods count for this constraint (the inclusion policies).
    fn includes(&self, pod: &PodInfo, node: &NodeInfo) -> bool {
        (!self.honor_node_affinity || required_node_affinity_matches(&pod.pod, node))
            && (!self.honor_taints || untolerated_taint(pod, node).is_none())
    }

    fn matches(&self, namespace: &str, placed: &PlacedPod) -> bool {
        !placed.terminating
            && placed.namespace == namespace
            && self
                .selector
                .as_ref()
                .is_some_and(|s| s.matches(Some(&placed.labels)))
    }

    /// Matching pods on `node`.
    fn count(&self, pod: &PodInfo, node: &NodeInfo) -> i64 {
        let ns = pod.namespace();
        node.pods.values().filter(|p| self.matches(ns, p)).count() as i64
    }
}

/// The pod's constraints with the given `whenUnsatisfiable`.
fn declared(pod: &PodInfo, when: &str) -> Vec<Constraint> {
    pod.pod
        .spec
        .as_ref()
        .and_then(|s| s.topology_spread_constraints.as_ref())
        .into_iter()
        .flatten()
        .filter(|c| c.when_unsatisfiable == when)
        .map(|c| Constraint::new(c, pod))
        .collect()
}

fn has_all_keys(constraints: &[Constraint], node: &NodeInfo) -> bool {
    constraints
        .iter()
        .all(|c| node.label(&c.topology_key).is_some())
}

/// Per constraint, the matching pods in each domain (by the value of its topology label).
type DomainCounts = Vec<HashMap<String, i64>>;

/// Which nodes and constraints domain counts cover.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Coverage {
    /// Only nodes carrying every constraint's topology label (else each constraint counts
    /// the nodes carrying its own).
    require_all: bool,
    /// Whether host-name constraints are counted (scoring counts those node by node).
    hostname: bool,
}

impl Coverage {
    const FILTER: Self = Self {
        require_all: true,
        hostname: true,
    };

    fn counts_node(self, constraints: &[Constraint], node: &NodeInfo) -> bool {
        !self.require_all || has_all_keys(constraints, node)
    }

    fn counts(self, c: &Constraint) -> bool {
        self.hostname || c.topology_key != HOSTNAME_KEY
    }
}

/// The matching pods per domain of each constraint, over every node of the cache.
fn walk(pod: &PodInfo, cache: &Cache, constraints: &[Constraint], cover: Coverage) -> DomainCounts {
    // The label values are borrowed from the nodes while walking (no allocation per node).
    let mut borrowed: Vec<HashMap<&str, i64>> = vec![HashMap::new(); constraints.len()];
    for node in cache.nodes() {
        if !cover.counts_node(constraints, node) {
            continue;
        }
        for (c, domains) in constraints.iter().zip(borrowed.iter_mut()) {
            if !cover.counts(c) {
                continue;
            }
            let Some(value) = node.label(&c.topology_key) else {
                continue;
            };
            if c.includes(pod, node) {
                *domains.entry(value).or_default() += c.count(pod, node);
            }
        }
    }
    borrowed
        .into_iter()
        .map(|m| m.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
        .collect()
}

/// How many (namespace, constraints, coverage) keep their domain counts across pods.
const KEPT_KEYS: usize = 64;

/// What domain counts are kept under: the namespace, each constraint's topology key and
/// selector, and the coverage.
#[derive(Debug)]
struct CountsKey {
    namespace: String,
    constraints: Vec<(String, Option<LabelSelector>)>,
    cover: Coverage,
}

impl CountsKey {
    fn new(namespace: &str, constraints: &[Constraint], cover: Coverage) -> Self {
        Self {
            namespace: namespace.to_string(),
            constraints: constraints
                .iter()
                .map(|c| (c.topology_key.clone(), c.selector.clone()))
                .collect(),
            cover,
        }
    }

    fn is(&self, namespace: &str, constraints: &[Constraint], cover: Coverage) -> bool {
        self.cover == cover
            && self.namespace == namespace
            && self.constraints.len() == constraints.len()
            && self
                .constraints
                .iter()
                .zip(constraints)
                .all(|((key, selector), c)| *key == c.topology_key && *selector == c.selector)
    }
}

/// Counts in (or takes out) a pod that arrived on (or left) a node, for pods of `namespace`.
fn apply(
    counts: &mut DomainCounts,
    (namespace, constraints, cover): (&str, &[Constraint], Coverage),
    cache: &Cache,
    change: &PodChange,
) {
    if change.pod.terminating || change.pod.namespace != namespace {
        return;
    }
    // The node set has not changed since the counts were made: the node is there.
    let Some(node) = cache.node(&change.node) else {
        return;
    };
    if !cover.counts_node(constraints, node) {
        return;
    }
    for (c, domains) in constraints.iter().zip(counts) {
        let matched = c
            .selector
            .as_ref()
            .is_some_and(|s| s.matches(Some(&change.pod.labels)));
        if !cover.counts(c) || !matched {
            continue;
        }
        let Some(value) = node.label(&c.topology_key) else {
            continue;
        };
        let delta = if change.added { 1 } else { -1 };
        match domains.get_mut(value) {
            Some(n) => *n += delta,
            None => {
                domains.insert(value.to_string(), delta);
            }
        }
    }
}

/// Whether the constraints count the same nodes whatever the pod: inclusion policies that
/// honour the pod's node selector and required node affinity include every node when it has
/// neither, and taints are not honoured.
fn counts_every_node(pod: &PodInfo, constraints: &[Constraint]) -> bool {
    let spec = pod.pod.spec.as_ref();
    let anywhere = spec
        .and_then(|s| s.node_selector.as_ref())
        .is_none_or(|s| s.is_empty())
        && spec
            .and_then(|s| s.affinity.as_ref())
            .and_then(|a| a.node_affinity.as_ref())
            .and_then(|a| {
                a.required_during_scheduling_ignored_during_execution
                    .as_ref()
            })
            .is_none();
    constraints
        .iter()
        .all(|c| !c.honor_taints && (anywhere || !c.honor_node_affinity))
}

/// Matching pods per domain of each hard constraint, and each constraint's minimum.
#[derive(Debug)]
struct FilterState {
    constraints: Vec<Constraint>,
    counts: DomainCounts,
    /// Per constraint: the smallest count over its domains (0 when there are fewer domains
    /// than `minDomains`).
    minimums: Vec<i64>,
    /// Per constraint: whether the incoming pod matches its own selector.
    self_match: Vec<i64>,
}

/// Per constraint, the smallest count over its domains (0 when there are fewer domains than
/// `minDomains`).
fn minimums(constraints: &[Constraint], counts: &DomainCounts) -> Vec<i64> {
    constraints
        .iter()
        .zip(counts)
        .map(|(c, domains)| {
            if domains.len() < c.min_domains {
                0
            } else {
                domains.values().copied().min().unwrap_or(0)
            }
        })
        .collect()
}

const MISSING_LABEL: &str =
    "node(s) didn't match pod topology spread constraints (missing required label)";

impl Filter for PodTopologySpread {
    fn name(&self) -> &'static str {
        "PodTopologySpread"
    }

    fn pre_filter(&self, pod: &PodInfo, cache: &Cache) -> Result<Option<StateValue>, Rejection> {
        let (constraints, _) = self.constraints(pod, cache, "DoNotSchedule");
        if constraints.is_empty() {
            return Ok(None);
        }
        let counts = self.domain_counts(pod, cache, &constraints, Coverage::FILTER);
        let minimums = minimums(&constraints, &counts);
        let self_match = constraints
            .iter()
            .map(|c| i64::from(c.selector.as_ref().is_some_and(|s| s.matches(pod.labels()))))
            .collect();
        Ok(Some(Box::new(FilterState {
            constraints,
            counts,
            minimums,
            self_match,
        })))
    }

    fn update_state(&self, pod: &mut PodInfo, placed: &PlacedPod, node: &NodeInfo, added: bool) {
        let ns = pod.namespace().to_string();
        let included: Vec<bool> = match pod.state.get::<FilterState>() {
            Some(s) if has_all_keys(&s.constraints, node) => s
                .constraints
                .iter()
                .map(|c| c.includes(pod, node) && c.matches(&ns, placed))
                .collect(),
            _ => return,
        };
        let Some(s) = pod.state.get_mut::<FilterState>() else {
            return;
        };
        for ((c, domains), counted) in s.constraints.iter().zip(&mut s.counts).zip(included) {
            if counted {
                let value = node.label(&c.topology_key).unwrap_or_default();
                let change = if added { 1 } else { -1 };
                match domains.get_mut(value) {
                    Some(n) => *n += change,
                    None => {
                        domains.insert(value.to_string(), change);
                    }
                }
            }
        }
        s.minimums = minimums(&s.constraints, &s.counts);
    }

    fn filter(&self, pod: &PodInfo, node: &NodeInfo) -> Result<(), Rejection> {
        let Some(state) = pod.state.get::<FilterState>() else {
            return Ok(());
        };
        for (i, c) in state.constraints.iter().enumerate() {
            let Some(value) = node.label(&c.topology_key) else {
                return Err(Rejection::unresolvable(MISSING_LABEL));
            };
            let here = state.counts[i].get(value).copied().unwrap_or(0);
            let skew = here + state.self_match[i] - state.minimums[i];
            if skew > c.max_skew {
                return Err(Rejection::resolvable(
                    "node(s) didn't match pod topology spread constraints",
                ));
            }
        }
        Ok(())
    }
}

/// What scoring needs: soft constraints, their domain counts and weights.
#[derive(Debug)]
struct ScoreState {
    constraints: Vec<Constraint>,
    /// Whether nodes lacking one of the topology labels are left out (always, except for the
    /// system defaults).
    require_all: bool,
    /// Per constraint other than the host name's, the matching pods in each domain.
    counts: DomainCounts,
    /// Per constraint: ln(domains among the feasible nodes + 2).
    weights: Vec<f64>,
}

impl ScoreState {
    /// Whether `node` takes part in scoring (nodes left out score 0).
    fn counted(&self, node: &NodeInfo) -> bool {
        !self.require_all || has_all_keys(&self.constraints, node)
    }
}

impl PodTopologySpread {
    /// The plugin with `default_constraints` for pods that declare none; `system_defaulted`
    /// when those are the system defaults (`defaultingType: System`), under which nodes
    /// missing a topology label still take part in scoring.
    pub fn new(default_constraints: Vec<DefaultConstraint>, system_defaulted: bool) -> Self {
        Self {
            default_constraints,
            system_defaulted,
            kept: Arc::new(Mutex::new(KeptAcrossPods::new(KEPT_KEYS))),
        }
    }

    /// Constraints for pods that declare none.
    pub fn default_constraints(&self) -> &[DefaultConstraint] {
        &self.default_constraints
    }

    /// Whether those are the system defaults.
    pub fn system_defaulted(&self) -> bool {
        self.system_defaulted
    }

    /// The matching pods per domain of each constraint: kept from an earlier pod of the same
    /// namespace and constraints and brought up to date, or walked.
    fn domain_counts(
        &self,
        pod: &PodInfo,
        cache: &Cache,
        constraints: &[Constraint],
        cover: Coverage,
    ) -> DomainCounts {
        if !counts_every_node(pod, constraints) {
            return walk(pod, cache, constraints, cover);
        }
        let namespace = pod.namespace();
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        kept.get(
            cache,
            |key| key.is(namespace, constraints, cover),
            |counts, change| apply(counts, (namespace, constraints, cover), cache, change),
            || {
                let key = CountsKey::new(namespace, constraints, cover);
                (key, walk(pod, cache, constraints, cover))
            },
        )
    }

    /// The pod's constraints with `whenUnsatisfiable` `when`, or the default ones when it
    /// declares no constraint at all (with a selector built from the workloads that own or
    /// select the pod); and whether nodes must carry every topology label to take part.
    fn constraints(&self, pod: &PodInfo, cache: &Cache, when: &str) -> (Vec<Constraint>, bool) {
        let declares_any = pod
            .pod
            .spec
            .as_ref()
            .and_then(|s| s.topology_spread_constraints.as_ref())
            .is_some_and(|c| !c.is_empty());
        if declares_any {
            return (declared(pod, when), true);
        }
        if !self
            .default_constraints
            .iter()
            .any(|c| c.when_unsatisfiable == when)
        {
            return (Vec::new(), false);
        }
        let selector = cache.default_selector(&pod.pod);
        if selector.is_empty() {
            return (Vec::new(), false);
        }
        let defaults = self
            .default_constraints
            .iter()
            .filter(|c| c.when_unsatisfiable == when)
            .map(|c| Constraint {
                max_skew: i64::from(c.max_skew),
                topology_key: c.topology_key.clone(),
                selector: Some(selector.clone()),
                min_domains: 1,
                honor_node_affinity: true,
                honor_taints: false,
            })
            .collect();
        (defaults, !self.system_defaulted)
    }
}

impl Score for PodTopologySpread {
    fn name(&self) -> &'static str {
        "PodTopologySpread"
    }

    fn pre_score(
        &self,
        pod: &PodInfo,
        cache: &Cache,
        feasible: &[&NodeInfo],
    ) -> Option<StateValue> {
        let (constraints, require_all) = self.constraints(pod, cache, "ScheduleAnyway");
        if constraints.is_empty() {
            return None;
        }
        let counted = |n: &NodeInfo| !require_all || has_all_keys(&constraints, n);
        let scored: Vec<&NodeInfo> = feasible.iter().copied().filter(|n| counted(n)).collect();
        let weights = constraints
            .iter()
            .map(|c| {
                let domains = if c.topology_key == HOSTNAME_KEY {
                    scored.len()
                } else {
                    scored
                        .iter()
                        .filter_map(|n| n.label(&c.topology_key))
                        .collect::<HashSet<_>>()
                        .len()
                };
                ((domains + 2) as f64).ln()
            })
            .collect();
        // Domains other than single nodes count pods on every node of the domain, not only
        // the feasible ones (host names are counted node by node in `score`).
        let counts =
            if scored.is_empty() || constraints.iter().all(|c| c.topology_key == HOSTNAME_KEY) {
                vec![HashMap::new(); constraints.len()]
            } else {
                let cover = Coverage {
                    require_all,
                    hostname: false,
                };
                self.domain_counts(pod, cache, &constraints, cover)
            };
        Some(Box::new(ScoreState {
            constraints,
            require_all,
            counts,
            weights,
        }))
    }

    /// Lower is better here; `normalize` turns it around.
    fn score(&self, pod: &PodInfo, node: &NodeInfo) -> i64 {
        let Some(state) = pod.state.get::<ScoreState>() else {
            return 0;
        };
        if !state.counted(node) {
            return 0;
        }
        let mut score = 0.0;
        for ((c, weight), domains) in state
            .constraints
            .iter()
            .zip(&state.weights)
            .zip(&state.counts)
        {
            let Some(value) = node.label(&c.topology_key) else {
                continue;
            };
            let count = if c.topology_key == HOSTNAME_KEY {
                c.count(pod, node)
            } else {
                domains.get(value).copied().unwrap_or(0)
            };
            score += count as f64 * weight + (c.max_skew - 1) as f64;
        }
        score.round() as i64
    }

    /// Fewest matching pods → MAX_NODE_SCORE; nodes without the topology labels → 0.
    fn normalize(&self, pod: &PodInfo, nodes: &[&NodeInfo], scores: &mut [i64]) {
        let Some(state) = pod.state.get::<ScoreState>() else {
            return;
        };
        let counted: Vec<bool> = nodes.iter().map(|n| state.counted(n)).collect();
        let considered = || {
            scores
                .iter()
                .zip(&counted)
                .filter(|(_, c)| **c)
                .map(|(s, _)| *s)
        };
        let (Some(min), Some(max)) = (considered().min(), considered().max()) else {
            scores.iter_mut().for_each(|s| *s = 0);
            return;
        };
        for (s, counted) in scores.iter_mut().zip(counted) {
            *s = if !counted {
                0
            } else if max == 0 {
                MAX_NODE_SCORE
            } else {
                MAX_NODE_SCORE * (max + min - *s) / max
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::test_support::{cluster, feasible, node, pod, rejection, scores};
    use serde_json::json;

    fn zones() -> Vec<k8s_openapi::api::core::v1::Node> {
        vec![
            node("a1", json!({"zone": "a", HOSTNAME_KEY: "a1"})),
            node("a2", json!({"zone": "a", HOSTNAME_KEY: "a2"})),
            node("b1", json!({"zone": "b", HOSTNAME_KEY: "b1"})),
            node("none", json!({HOSTNAME_KEY: "none"})),
        ]
    }

    fn web(name: &str) -> k8s_openapi::api::core::v1::Pod {
        pod(name, json!({"app": "web"}), json!({}))
    }

    fn spread(when: &str, extra: serde_json::Value) -> k8s_openapi::api::core::v1::Pod {
        let mut c = json!({"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": when,
            "labelSelector": {"matchLabels": {"app": "web"}}});
        c.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        pod(
            "new",
            json!({"app": "web"}),
            json!({"topologySpreadConstraints": [c]}),
        )
    }

    #[test]
    fn hard_constraints_keep_the_skew_within_max_skew() {
        let other_ns = {
            let mut p = web("elsewhere");
            p.metadata.namespace = Some("other".into());
            p
        };
        let terminating = {
            let mut p = web("leaving");
            p.metadata.deletion_timestamp = Some(
                k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(jiff::Timestamp::now()),
            );
            p
        };
        let cases = [
            // (placed pods, nodes the new pod may go to)
            (vec![], vec!["a1", "a2", "b1"]),
            (vec![(web("w1"), "a1")], vec!["b1"]),
            (
                vec![(web("w1"), "a1"), (web("w2"), "b1")],
                vec!["a1", "a2", "b1"],
            ),
            // Pods of another namespace, terminating pods and pods the selector does not
            // match do not count.
            (
                vec![
                    (other_ns.clone(), "a1"),
                    (terminating.clone(), "a1"),
                    (pod("db", json!({"app": "db"}), json!({})), "a2"),
                ],
                vec!["a1", "a2", "b1"],
            ),
        ];
        for (placed, want) in cases {
            let cache = cluster(zones(), placed);
            let got = feasible(
                &PodTopologySpread::default(),
                spread("DoNotSchedule", json!({})),
                &cache,
            );
            assert_eq!(got.unwrap(), want);
        }
        let cache = cluster(zones(), vec![(web("w1"), "a1")]);
        assert_eq!(
            rejection(
                &PodTopologySpread::default(),
                spread("DoNotSchedule", json!({})),
                &cache,
                "none"
            )
            .as_deref(),
            Some(MISSING_LABEL)
        );
        assert_eq!(
            rejection(
                &PodTopologySpread::default(),
                spread("DoNotSchedule", json!({})),
                &cache,
                "a2"
            )
            .as_deref(),
            Some("node(s) didn't match pod topology spread constraints")
        );
    }

    #[test]
    fn min_domains_counts_missing_domains_as_empty() {
        // Both existing domains hold one pod: without minDomains every node fits; with
        // minDomains 3 the global minimum is 0, so a second pod in a domain is a skew of 2.
        let placed = vec![(web("w1"), "a1"), (web("w2"), "b1")];
        let cache = cluster(zones(), placed);
        let plugin = PodTopologySpread::default();
        let got = feasible(&plugin, spread("DoNotSchedule", json!({})), &cache).unwrap();
        assert_eq!(got, ["a1", "a2", "b1"]);
        let got = feasible(
            &plugin,
            spread("DoNotSchedule", json!({"minDomains": 3})),
            &cache,
        )
        .unwrap();
        assert!(got.is_empty(), "{got:?}");
    }

    #[test]
    fn node_affinity_policy_limits_the_counted_domains() {
        // Zone b is excluded by the pod's node selector: by default (Honor) it is not a
        // domain, so zone a's single pod is the minimum and a stays open.
        let cache = cluster(
            vec![
                node("a1", json!({"zone": "a", "pool": "x"})),
                node("b1", json!({"zone": "b", "pool": "y"})),
            ],
            vec![(web("w1"), "a1")],
        );
        let mut p = spread("DoNotSchedule", json!({}));
        p.spec.as_mut().unwrap().node_selector =
            Some([("pool".to_string(), "x".to_string())].into());
        let plugin = PodTopologySpread::default();
        assert_eq!(feasible(&plugin, p.clone(), &cache).unwrap(), ["a1", "b1"]);
        let ignore = p
            .spec
            .as_mut()
            .unwrap()
            .topology_spread_constraints
            .as_mut()
            .unwrap();
        ignore[0].node_affinity_policy = Some("Ignore".into());
        assert_eq!(feasible(&plugin, p, &cache).unwrap(), ["b1"]);
    }

    #[test]
    fn soft_constraints_prefer_emptier_domains() {
        let placed = vec![(web("w1"), "a1"), (web("w2"), "a2")];
        let cache = cluster(zones(), placed);
        let got = scores(
            &PodTopologySpread::default(),
            spread("ScheduleAnyway", json!({})),
            &cache,
        );
        // Zone a holds 2 matching pods, zone b none; the node without a zone scores 0.
        let by_node: std::collections::BTreeMap<_, _> = got.into_iter().collect();
        assert_eq!(by_node["b1"], MAX_NODE_SCORE);
        assert!(by_node["a1"] < by_node["b1"]);
        assert_eq!(by_node["a1"], by_node["a2"]);
        assert_eq!(by_node["none"], 0);
    }

    /// The domain counts of a pod's hard and soft constraints.
    fn counts_of(
        plugin: &PodTopologySpread,
        pod: k8s_openapi::api::core::v1::Pod,
        cache: &Cache,
    ) -> (DomainCounts, DomainCounts) {
        let mut info = PodInfo::new(pod);
        let nodes: Vec<&NodeInfo> = cache.nodes().collect();
        if let Some(state) = plugin.pre_filter(&info, cache).unwrap() {
            info.state.insert(state);
        }
        if let Some(state) = plugin.pre_score(&info, cache, &nodes) {
            info.state.insert(state);
        }
        let hard = info.state.get::<FilterState>().map(|s| s.counts.clone());
        let soft = info.state.get::<ScoreState>().map(|s| s.counts.clone());
        (hard.unwrap_or_default(), soft.unwrap_or_default())
    }

    #[test]
    fn counts_kept_across_pods_follow_the_cache() {
        let both = |p: &mut k8s_openapi::api::core::v1::Pod| {
            let constraints = p
                .spec
                .as_mut()
                .unwrap()
                .topology_spread_constraints
                .as_mut();
            let constraints = constraints.unwrap();
            let mut soft = constraints[0].clone();
            soft.when_unsatisfiable = "ScheduleAnyway".into();
            constraints.push(soft);
        };
        let mut incoming = spread("DoNotSchedule", json!({}));
        both(&mut incoming);
        let kept = PodTopologySpread::default();
        let walks = || kept.kept.lock().unwrap().derived();
        // Each step changes the cache, then the kept counts must equal a fresh walk's.
        let check = |cache: &Cache, step: &str| {
            let got = counts_of(&kept, incoming.clone(), cache);
            let want = counts_of(&PodTopologySpread::default(), incoming.clone(), cache);
            assert_eq!(got, want, "after {step}");
        };
        let mut cache = cluster(zones(), vec![(web("w1"), "a1")]);
        check(&cache, "the first pod");
        assert_eq!(walks(), 2, "one walk for filtering, one for scoring");

        cache.assume(&web("w2"), "b1");
        check(&cache, "an assumed pod");
        cache.remove_pod("default/w1");
        check(&cache, "a removed pod");
        let mut elsewhere = web("elsewhere");
        elsewhere.metadata.namespace = Some("other".into());
        cache.assume(&elsewhere, "a1");
        cache.assume(&pod("db", json!({"app": "db"}), json!({})), "a2");
        let mut leaving = web("w2");
        leaving.metadata.deletion_timestamp = Some(
            k8s_openapi::apimachinery::pkg::apis::meta::v1::Time(jiff::Timestamp::now()),
        );
        leaving.spec.as_mut().unwrap().node_name = Some("b1".into());
        cache.set_pod(leaving);
        check(
            &cache,
            "pods of other namespaces or selectors, and a terminating one",
        );
        cache.set_node(node("a1", json!({"zone": "a", HOSTNAME_KEY: "a1"})));
        check(&cache, "a node written again with the same labels");
        assert_eq!(walks(), 2, "pod changes are applied, not walked");

        cache.set_node(node("a2", json!({"zone": "b", HOSTNAME_KEY: "a2"})));
        check(&cache, "a node moved to another zone");
        assert_eq!(walks(), 4);
        cache.set_node(node("c1", json!({"zone": "c", HOSTNAME_KEY: "c1"})));
        check(&cache, "a new node");
        assert_eq!(walks(), 6);
        for i in 0..=crate::cache::KEPT_POD_CHANGES {
            cache.assume(&web(&format!("x{i}")), "c1");
        }
        check(&cache, "more changes than the cache keeps");
        assert_eq!(walks(), 8);
        cache.assume(&web("last"), "b1");
        check(&cache, "one more pod");
        assert_eq!(walks(), 8);
    }

    #[test]
    fn default_constraints_need_a_selecting_workload() {
        let placed = vec![(web("w1"), "a1"), (web("w2"), "a1")];
        let mut cache = cluster(zones(), placed);
        let plugin = PodTopologySpread::default();
        // No Service or controller selects the pod: the defaults do not apply.
        let got = scores(&plugin, web("new"), &cache);
        assert!(got.iter().all(|(_, s)| *s == 0), "{got:?}");
        cache.set_service(
            "default",
            "web",
            Some([("app".to_string(), "web".to_string())].into()),
        );
        let by_node: std::collections::BTreeMap<_, _> =
            scores(&plugin, web("new"), &cache).into_iter().collect();
        // a1 holds both pods: the hostname constraint ranks it last.
        assert!(by_node["a1"] < by_node["a2"], "{by_node:?}");
        assert!(by_node["a1"] < by_node["b1"], "{by_node:?}");
    }
}
