//! InterPodAffinity: required pod affinity and anti-affinity (the incoming pod's, and the
//! anti-affinity of pods already placed) filter nodes by topology domain; preferred terms, and
//! the required affinity of placed pods weighted by `hardPodAffinityWeight`, score them.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use crate::cache::{Cache, NodeInfo, PlacedPod, PodChange};
use crate::framework::{Filter, MAX_NODE_SCORE, PodInfo, Rejection, Score, StateValue};
use crate::kept::KeptAcrossPods;
use crate::terms::{AffinityTerm, NamespaceLabels, PodAffinityTerms};

/// Upstream's default `hardPodAffinityWeight`.
pub const DEFAULT_HARD_POD_AFFINITY_WEIGHT: i64 = 1;

/// The InterPodAffinity plugin.
#[derive(Debug, Clone)]
pub struct InterPodAffinity {
    /// The score a node gets per placed pod whose required affinity the incoming pod matches
    /// (0–100).
    pub hard_pod_affinity_weight: i64,
    /// Leave placed pods' preferred terms out of scoring.
    pub ignore_preferred_terms_of_existing_pods: bool,
    /// The filter's domain counts kept across pods.
    kept: Arc<Mutex<KeptAcrossPods<DomainsKey, Domains>>>,
}

impl Default for InterPodAffinity {
    fn default() -> Self {
        Self::new(DEFAULT_HARD_POD_AFFINITY_WEIGHT, false)
    }
}

impl InterPodAffinity {
    /// The plugin with its two arguments.
    pub fn new(
        hard_pod_affinity_weight: i64,
        ignore_preferred_terms_of_existing_pods: bool,
    ) -> Self {
        Self {
            hard_pod_affinity_weight,
            ignore_preferred_terms_of_existing_pods,
            kept: Arc::new(Mutex::new(KeptAcrossPods::new(KEPT_KEYS))),
        }
    }

    /// The filter's domains for `pod`: kept from an earlier pod of the same namespace, labels
    /// and terms and brought up to date, or counted over every node.
    fn domains(&self, pod: &PodInfo, terms: &PodAffinityTerms, cache: &Cache) -> Domains {
        let namespaces = cache.namespace_labels();
        let incoming = (pod.namespace(), pod.labels());
        let walk = || {
            let has_required =
                !terms.required_affinity.is_empty() || !terms.required_anti_affinity.is_empty();
            let mut domains = Domains::default();
            for node in cache.nodes() {
                if !has_required && node.pods_with_required_anti_affinity == 0 {
                    continue;
                }
                for placed in node.pods.values() {
                    domains.count(incoming, terms, placed, node, true, namespaces);
                }
            }
            let key = DomainsKey {
                namespace: pod.namespace().to_string(),
                labels: pod.labels().cloned(),
                terms: terms.clone(),
            };
            (key, domains)
        };
        let apply = |domains: &mut Domains, change: &PodChange| {
            if let Some(node) = cache.node(&change.node) {
                domains.count(incoming, terms, &change.pod, node, change.added, namespaces);
            }
        };
        let mut kept = self.kept.lock().unwrap_or_else(|p| p.into_inner());
        kept.get(cache, |key| key.is(pod, terms), apply, walk)
    }
}

/// How many (namespace, labels, terms) of incoming pods keep their domain counts.
const KEPT_KEYS: usize = 128;

/// What the filter's domains are kept under: the incoming pod's namespace, labels and terms.
#[derive(Debug)]
struct DomainsKey {
    namespace: String,
    labels: Option<BTreeMap<String, String>>,
    terms: PodAffinityTerms,
}

impl DomainsKey {
    fn is(&self, pod: &PodInfo, terms: &PodAffinityTerms) -> bool {
        self.namespace == pod.namespace()
            && self.labels.as_ref() == pod.labels()
            && self.terms == *terms
    }
}

/// Pods counted per topology domain: label key → label value → count (looked up by the
/// node's borrowed label value, so counting and filtering allocate only for a new domain).
type Counts = HashMap<String, HashMap<String, u32>>;

/// The domains of the placed pods that bear on an incoming pod.
#[derive(Debug, Default, Clone)]
struct Domains {
    /// Domains holding a placed pod whose required anti-affinity the incoming pod matches.
    existing_anti: Counts,
    /// Domains holding a placed pod that matches all of the incoming pod's affinity terms.
    affinity: Counts,
    /// Domains holding a placed pod that one of its anti-affinity terms matches.
    anti: Counts,
}

impl Domains {
    /// Counts `placed`, on `node`, in (`added`) or out, for an incoming pod of `namespace`
    /// and `labels` with `terms`.
    fn count(
        &mut self,
        (namespace, labels): (&str, Option<&BTreeMap<String, String>>),
        terms: &PodAffinityTerms,
        placed: &PlacedPod,
        node: &NodeInfo,
        added: bool,
        namespaces: &NamespaceLabels,
    ) {
        if let Some(theirs) = &placed.affinity {
            for term in &theirs.required_anti_affinity {
                if term.matches(namespace, labels, namespaces) {
                    change(&mut self.existing_anti, &term.topology_key, node, added);
                }
            }
        }
        let affinity = &terms.required_affinity;
        if !affinity.is_empty() && affinity.iter().all(|t| matches(t, placed, namespaces)) {
            for term in affinity {
                change(&mut self.affinity, &term.topology_key, node, added);
            }
        }
        for term in &terms.required_anti_affinity {
            if matches(term, placed, namespaces) {
                change(&mut self.anti, &term.topology_key, node, added);
            }
        }
    }
}

/// What the filter needs, counted once per attempt over every placed pod.
#[derive(Debug, Default)]
struct FilterState {
    terms: PodAffinityTerms,
    namespaces: std::sync::Arc<NamespaceLabels>,
    domains: Domains,
    /// Whether the incoming pod matches all of its own affinity terms (the first pod of a
    /// group that wants to be together may go anywhere).
    self_affinity: bool,
}

/// Counts one more (`up`) or one less pod in the node's domain of `key`.
fn change(counts: &mut Counts, key: &str, node: &NodeInfo, up: bool) {
    let Some(value) = node.label(key) else {
        return;
    };
    if up {
        if !counts.contains_key(key) {
            counts.insert(key.to_string(), HashMap::new());
        }
        let Some(values) = counts.get_mut(key) else {
            return;
        };
        match values.get_mut(value) {
            Some(n) => *n += 1,
            None => {
                values.insert(value.to_string(), 1);
            }
        }
    } else if let Some(values) = counts.get_mut(key)
        && let Some(n) = values.get_mut(value)
    {
        *n = n.saturating_sub(1);
        if *n == 0 {
            values.remove(value);
            if values.is_empty() {
                counts.remove(key);
            }
        }
    }
}

fn count_of(counts: &Counts, key: &str, node: &NodeInfo) -> u32 {
    node.label(key)
        .and_then(|v| counts.get(key)?.get(v))
        .copied()
        .unwrap_or(0)
}

fn matches(term: &AffinityTerm, pod: &PlacedPod, namespaces: &NamespaceLabels) -> bool {
    term.matches(&pod.namespace, Some(&pod.labels), namespaces)
}

fn matches_incoming(term: &AffinityTerm, pod: &PodInfo, namespaces: &NamespaceLabels) -> bool {
    term.matches(pod.namespace(), pod.labels(), namespaces)
}

impl Filter for InterPodAffinity {
    fn name(&self) -> &'static str {
        "InterPodAffinity"
    }

    fn pre_filter(&self, pod: &PodInfo, cache: &Cache) -> Result<Option<StateValue>, Rejection> {
        let namespaces = cache.namespace_labels();
        let terms = PodAffinityTerms::of(&pod.pod).unwrap_or_default();
        let has_required =
            !terms.required_affinity.is_empty() || !terms.required_anti_affinity.is_empty();
        if !has_required && cache.pods_with_required_anti_affinity() == 0 {
            return Ok(None);
        }
        let domains = self.domains(pod, &terms, cache);
        if !has_required && domains.existing_anti.is_empty() {
            return Ok(None);
        }
        let mut state = FilterState {
            domains,
            ..FilterState::default()
        };
        state.self_affinity = terms
            .required_affinity
            .iter()
            .all(|t| matches_incoming(t, pod, namespaces));
        state.terms = terms;
        state.namespaces = cache.namespace_labels_shared();
        Ok(Some(Box::new(state)))
    }

    fn update_state(&self, pod: &mut PodInfo, placed: &PlacedPod, node: &NodeInfo, added: bool) {
        let PodInfo {
            pod: incoming,
            state,
            ..
        } = pod;
        let Some(s) = state.get_mut::<FilterState>() else {
            return;
        };
        let incoming = (
            incoming.metadata.namespace.as_deref().unwrap_or(""),
            incoming.metadata.labels.as_ref(),
        );
        let (terms, namespaces) = (&s.terms, &s.namespaces);
        s.domains
            .count(incoming, terms, placed, node, added, namespaces);
    }

    fn filter(&self, pod: &PodInfo, node: &NodeInfo) -> Result<(), Rejection> {
        let Some(state) = pod.state.get::<FilterState>() else {
            return Ok(());
        };
        let affinity = &state.terms.required_affinity;
        let satisfied = affinity
            .iter()
            .all(|t| count_of(&state.domains.affinity, &t.topology_key, node) > 0);
        // No pod anywhere matches yet: a pod that matches its own terms may start the group
        // on any node that has the topology labels.
        let first_of_group = state.domains.affinity.is_empty()
            && state.self_affinity
            && affinity
                .iter()
                .all(|t| node.label(&t.topology_key).is_some());
        if !satisfied && !first_of_group {
            return Err(Rejection::unresolvable(
                "node(s) didn't match pod affinity rules",
            ));
        }
        if state
            .terms
            .required_anti_affinity
            .iter()
            .any(|t| count_of(&state.domains.anti, &t.topology_key, node) > 0)
        {
            return Err(Rejection::resolvable(
                "node(s) didn't match pod anti-affinity rules",
            ));
        }
        if state.domains.existing_anti.iter().any(|(key, values)| {
            node.label(key)
                .and_then(|v| values.get(v))
                .is_some_and(|n| *n > 0)
        }) {
            return Err(Rejection::resolvable(
                "node(s) didn't satisfy existing pods anti-affinity rules",
            ));
        }
        Ok(())
    }
}

/// Score per topology key and value, summed over the placed pods.
#[derive(Debug, Default)]
struct ScoreState {
    domains: HashMap<String, HashMap<String, i64>>,
}

impl ScoreState {
    fn add(&mut self, key: &str, node: &NodeInfo, weight: i64) {
        if weight == 0 {
            return;
        }
        let Some(value) = node.label(key) else {
            return;
        };
        if !self.domains.contains_key(key) {
            self.domains.insert(key.to_string(), HashMap::new());
        }
        let Some(values) = self.domains.get_mut(key) else {
            return;
        };
        match values.get_mut(value) {
            Some(n) => *n += weight,
            None => {
                values.insert(value.to_string(), weight);
            }
        }
    }
}

impl Score for InterPodAffinity {
    fn name(&self) -> &'static str {
        "InterPodAffinity"
    }

    fn pre_score(&self, pod: &PodInfo, cache: &Cache, _: &[&NodeInfo]) -> Option<StateValue> {
        let namespaces = cache.namespace_labels();
        let terms = PodAffinityTerms::of(&pod.pod).unwrap_or_default();
        let has_preferred =
            !terms.preferred_affinity.is_empty() || !terms.preferred_anti_affinity.is_empty();
        if !has_preferred && cache.pods_with_scoring_terms() == 0 {
            return None;
        }
        let mut state = ScoreState::default();
        for node in cache.nodes() {
            if !has_preferred && node.pods_with_scoring_terms == 0 {
                continue;
            }
            for placed in node.pods.values() {
                for t in &terms.preferred_affinity {
                    if matches(t, placed, namespaces) {
                        state.add(&t.topology_key, node, t.weight);
                    }
                }
                for t in &terms.preferred_anti_affinity {
                    if matches(t, placed, namespaces) {
                        state.add(&t.topology_key, node, -t.weight);
                    }
                }
                let Some(theirs) = &placed.affinity else {
                    continue;
                };
                if self.hard_pod_affinity_weight > 0 {
                    for t in &theirs.required_affinity {
                        if matches_incoming(t, pod, namespaces) {
                            state.add(&t.topology_key, node, self.hard_pod_affinity_weight);
                        }
                    }
                }
                if self.ignore_preferred_terms_of_existing_pods {
                    continue;
                }
                for t in &theirs.preferred_affinity {
                    if matches_incoming(t, pod, namespaces) {
                        state.add(&t.topology_key, node, t.weight);
                    }
                }
                for t in &theirs.preferred_anti_affinity {
                    if matches_incoming(t, pod, namespaces) {
                        state.add(&t.topology_key, node, -t.weight);
                    }
                }
            }
        }
        (!state.domains.is_empty()).then(|| Box::new(state) as StateValue)
    }

    fn score(&self, pod: &PodInfo, node: &NodeInfo) -> i64 {
        let Some(state) = pod.state.get::<ScoreState>() else {
            return 0;
        };
        state
            .domains
            .iter()
            .filter_map(|(key, values)| values.get(node.label(key)?))
            .sum()
    }

    /// Scales from the lowest (0) to the highest (MAX_NODE_SCORE) raw score.
    fn normalize(&self, _pod: &PodInfo, _nodes: &[&NodeInfo], scores: &mut [i64]) {
        let (Some(min), Some(max)) = (scores.iter().min().copied(), scores.iter().max().copied())
        else {
            return;
        };
        for s in scores.iter_mut() {
            *s = if max > min {
                MAX_NODE_SCORE * (*s - min) / (max - min)
            } else {
                0
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::test_support::{cluster, feasible, node, pod, rejection, scores};
    use serde_json::{Value, json};

    fn zones() -> Vec<k8s_openapi::api::core::v1::Node> {
        vec![
            node("a1", json!({"zone": "a"})),
            node("a2", json!({"zone": "a"})),
            node("b1", json!({"zone": "b"})),
            node("none", json!({})),
        ]
    }

    fn term(app: &str) -> Value {
        json!({"labelSelector": {"matchLabels": {"app": app}}, "topologyKey": "zone"})
    }

    fn with(
        kind: &str,
        rule: &str,
        terms: Value,
        labels: Value,
    ) -> k8s_openapi::api::core::v1::Pod {
        pod("new", labels, json!({"affinity": {kind: {rule: terms}}}))
    }

    const REQUIRED: &str = "requiredDuringSchedulingIgnoredDuringExecution";
    const PREFERRED: &str = "preferredDuringSchedulingIgnoredDuringExecution";

    #[test]
    fn required_terms_filter_by_domain() {
        let db = pod("db", json!({"app": "db"}), json!({}));
        let plugin = InterPodAffinity::default();
        let cache = cluster(zones(), vec![(db.clone(), "b1")]);
        let cases = [
            // Affinity to db: only zone b.
            (
                with("podAffinity", REQUIRED, json!([term("db")]), json!({})),
                vec!["b1"],
            ),
            // Anti-affinity to db: zone a, and the node without a zone.
            (
                with("podAntiAffinity", REQUIRED, json!([term("db")]), json!({})),
                vec!["a1", "a2", "none"],
            ),
            // Affinity to a group nobody belongs to yet, which the pod itself matches: any
            // node with the topology label.
            (
                with(
                    "podAffinity",
                    REQUIRED,
                    json!([term("web")]),
                    json!({"app": "web"}),
                ),
                vec!["a1", "a2", "b1"],
            ),
            // ... and which it does not match: nowhere.
            (
                with("podAffinity", REQUIRED, json!([term("web")]), json!({})),
                vec![],
            ),
        ];
        for (p, want) in cases {
            assert_eq!(feasible(&plugin, p, &cache).unwrap(), want);
        }
        assert_eq!(
            rejection(
                &plugin,
                with("podAffinity", REQUIRED, json!([term("db")]), json!({})),
                &cache,
                "a1"
            )
            .as_deref(),
            Some("node(s) didn't match pod affinity rules")
        );
    }

    /// The filter's domains for `pod`.
    fn domains_of(
        plugin: &InterPodAffinity,
        pod: k8s_openapi::api::core::v1::Pod,
        cache: &Cache,
    ) -> Option<(Counts, Counts, Counts)> {
        let info = PodInfo::new(pod);
        let state = plugin.pre_filter(&info, cache).unwrap()?;
        let d = &state.downcast_ref::<FilterState>().unwrap().domains;
        Some((d.existing_anti.clone(), d.affinity.clone(), d.anti.clone()))
    }

    #[test]
    fn domains_kept_across_pods_follow_the_cache() {
        // Web pods keep apart by zone and like to be near a cache pod.
        let web = |name: &str| {
            let mut p = with(
                "podAntiAffinity",
                REQUIRED,
                json!([term("web")]),
                json!({"app": "web"}),
            );
            p.metadata.name = Some(name.into());
            p.spec
                .as_mut()
                .unwrap()
                .affinity
                .as_mut()
                .unwrap()
                .pod_affinity =
                Some(serde_json::from_value(json!({REQUIRED: [term("cache")]})).unwrap());
            p
        };
        let kept = InterPodAffinity::default();
        let walks = || kept.kept.lock().unwrap().derived();
        let check = |cache: &Cache, step: &str| {
            let got = domains_of(&kept, web("new"), cache);
            let want = domains_of(&InterPodAffinity::default(), web("new"), cache);
            assert_eq!(got, want, "after {step}");
        };
        let mut cache = cluster(zones(), vec![(web("w1"), "a1")]);
        check(&cache, "the first pod");
        assert_eq!(walks(), 1);
        cache.assume(&web("w2"), "b1");
        cache.assume(&pod("c1", json!({"app": "cache"}), json!({})), "a2");
        check(&cache, "assumed pods");
        cache.remove_pod("default/w1");
        let loner = with(
            "podAntiAffinity",
            REQUIRED,
            json!([term("web")]),
            json!({"app": "db"}),
        );
        cache.assume(&loner, "none");
        check(
            &cache,
            "a removed pod and one whose anti-affinity keeps web pods away",
        );
        assert_eq!(walks(), 1, "pod changes are applied, not walked");
        cache.set_node(node("a2", json!({"zone": "b"})));
        check(&cache, "a node moved to another zone");
        assert_eq!(walks(), 2);
        let namespace = serde_json::from_value(json!({"metadata": {"name": "default",
            "labels": {"team": "a"}}}))
        .unwrap();
        cache.set_namespace(&namespace);
        check(&cache, "a namespace's new labels");
        assert_eq!(walks(), 3);
        cache.set_namespace(&namespace);
        check(&cache, "a namespace written again with the same labels");
        assert_eq!(walks(), 3);
    }

    #[test]
    fn placed_pods_anti_affinity_keeps_matching_pods_out() {
        let loner = with(
            "podAntiAffinity",
            REQUIRED,
            json!([term("web")]),
            json!({"app": "db"}),
        );
        let cache = cluster(zones(), vec![(loner, "a1")]);
        let plugin = InterPodAffinity::default();
        let web = pod("web", json!({"app": "web"}), json!({}));
        assert_eq!(
            feasible(&plugin, web.clone(), &cache).unwrap(),
            ["b1", "none"]
        );
        assert_eq!(
            rejection(&plugin, web, &cache, "a2").as_deref(),
            Some("node(s) didn't satisfy existing pods anti-affinity rules")
        );
        // A pod of another namespace is not what the term (own namespace) means.
        let mut other = pod("web", json!({"app": "web"}), json!({}));
        other.metadata.namespace = Some("other".into());
        assert_eq!(feasible(&plugin, other, &cache).unwrap().len(), 4);
    }

    #[test]
    fn preferred_terms_and_hard_weight_score_domains() {
        let db = pod("db", json!({"app": "db"}), json!({}));
        let cache = cluster(zones(), vec![(db, "b1")]);
        let preferred = json!([{"weight": 50, "podAffinityTerm": term("db")}]);
        let by_node = |p| -> std::collections::BTreeMap<String, i64> {
            scores(&InterPodAffinity::default(), p, &cache)
                .into_iter()
                .collect()
        };
        let near = by_node(with("podAffinity", PREFERRED, preferred.clone(), json!({})));
        assert_eq!(near["b1"], MAX_NODE_SCORE);
        assert_eq!(near["a1"], 0);
        let far = by_node(with("podAntiAffinity", PREFERRED, preferred, json!({})));
        assert_eq!(far["b1"], 0);
        assert_eq!(far["a1"], MAX_NODE_SCORE);
        // A placed pod that requires affinity to web draws web pods by hardPodAffinityWeight.
        let wants_web = with(
            "podAffinity",
            REQUIRED,
            json!([term("web")]),
            json!({"app": "x"}),
        );
        let cache = cluster(zones(), vec![(wants_web, "a2")]);
        let web = pod("web", json!({"app": "web"}), json!({}));
        let weighted: std::collections::BTreeMap<_, _> =
            scores(&InterPodAffinity::default(), web.clone(), &cache)
                .into_iter()
                .collect();
        assert_eq!(weighted["a1"], MAX_NODE_SCORE);
        assert_eq!(weighted["b1"], 0);
        let off = InterPodAffinity {
            hard_pod_affinity_weight: 0,
            ..Default::default()
        };
        assert!(scores(&off, web, &cache).iter().all(|(_, s)| *s == 0));
    }
}
