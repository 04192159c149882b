//! Inter-pod affinity terms made ready to match: selectors parsed once, namespaces resolved
//! against the namespaces' labels when a term is evaluated (they can change).

use std::collections::{BTreeMap, HashMap};

use capstan_meta::labels::LabelSelector;
use k8s_openapi::api::core::v1::{Pod, PodAffinityTerm, WeightedPodAffinityTerm};

/// Labels of every namespace, by name.
pub type NamespaceLabels = HashMap<String, BTreeMap<String, String>>;

/// One pod (anti-)affinity term.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AffinityTerm {
    /// The node label whose value is the topology domain.
    pub topology_key: String,
    /// The weight of a preferred term (0 for a required one).
    pub weight: i64,
    /// The pod selector; `None` matches no pod (an absent or invalid selector).
    selector: Option<LabelSelector>,
    /// Namespaces named by the term (the owner's own when the term names none and has no
    /// namespace selector).
    namespaces: Vec<String>,
    /// Namespaces chosen by their labels (`{}` chooses every namespace).
    namespace_selector: Option<LabelSelector>,
}

impl AffinityTerm {
    /// Reads `term` of a pod in namespace `owner_namespace`.
    pub fn new(term: &PodAffinityTerm, owner_namespace: &str, weight: i64) -> Self {
        let selector = term
            .label_selector
            .as_ref()
            .and_then(|s| LabelSelector::from_api(s).ok());
        let namespace_selector = term
            .namespace_selector
            .as_ref()
            .and_then(|s| LabelSelector::from_api(s).ok());
        let mut namespaces = term.namespaces.clone().unwrap_or_default();
        if namespaces.is_empty() && namespace_selector.is_none() {
            namespaces.push(owner_namespace.to_string());
        }
        Self {
            topology_key: term.topology_key.clone(),
            weight,
            selector,
            namespaces,
            namespace_selector,
        }
    }

    /// Whether a pod in `namespace` with `labels` matches the term.
    pub fn matches(
        &self,
        namespace: &str,
        labels: Option<&BTreeMap<String, String>>,
        namespace_labels: &NamespaceLabels,
    ) -> bool {
        let Some(selector) = &self.selector else {
            return false;
        };
        let in_namespace = self.namespaces.iter().any(|n| n == namespace)
            || self
                .namespace_selector
                .as_ref()
                .is_some_and(|s| s.matches(namespace_labels.get(namespace)));
        in_namespace && selector.matches(labels)
    }
}

/// A pod's inter-pod affinity, parsed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodAffinityTerms {
    /// Required affinity: every term must be satisfied.
    pub required_affinity: Vec<AffinityTerm>,
    /// Required anti-affinity: no term may be violated.
    pub required_anti_affinity: Vec<AffinityTerm>,
    /// Preferred affinity, weighted.
    pub preferred_affinity: Vec<AffinityTerm>,
    /// Preferred anti-affinity, weighted.
    pub preferred_anti_affinity: Vec<AffinityTerm>,
}

impl PodAffinityTerms {
    /// Reads `pod`'s terms; `None` when it has none.
    pub fn of(pod: &Pod) -> Option<Self> {
        let affinity = pod.spec.as_ref()?.affinity.as_ref()?;
        let ns = pod.metadata.namespace.as_deref().unwrap_or("");
        let required = |terms: Option<&Vec<PodAffinityTerm>>| -> Vec<AffinityTerm> {
            terms
                .into_iter()
                .flatten()
                .map(|t| with_label_keys(AffinityTerm::new(t, ns, 0), t, pod))
                .collect()
        };
        let preferred = |terms: Option<&Vec<WeightedPodAffinityTerm>>| -> Vec<AffinityTerm> {
            terms
                .into_iter()
                .flatten()
                .map(|w| {
                    let t = &w.pod_affinity_term;
                    with_label_keys(AffinityTerm::new(t, ns, i64::from(w.weight)), t, pod)
                })
                .collect()
        };
        let a = affinity.pod_affinity.as_ref();
        let anti = affinity.pod_anti_affinity.as_ref();
        let terms = Self {
            required_affinity: required(a.and_then(|a| {
                a.required_during_scheduling_ignored_during_execution
                    .as_ref()
            })),
            required_anti_affinity: required(anti.and_then(|a| {
                a.required_during_scheduling_ignored_during_execution
                    .as_ref()
            })),
            preferred_affinity: preferred(a.and_then(|a| {
                a.preferred_during_scheduling_ignored_during_execution
                    .as_ref()
            })),
            preferred_anti_affinity: preferred(anti.and_then(|a| {
                a.preferred_during_scheduling_ignored_during_execution
                    .as_ref()
            })),
        };
        (!terms.is_empty()).then_some(terms)
    }

    /// Whether there are no terms at all.
    pub fn is_empty(&self) -> bool {
        self.required_affinity.is_empty()
            && self.required_anti_affinity.is_empty()
            && self.preferred_affinity.is_empty()
            && self.preferred_anti_affinity.is_empty()
    }
}

/// Adds the requirements of `matchLabelKeys` (label equals the owner's value) and
/// `mismatchLabelKeys` (label differs from it) to the term's selector.
fn with_label_keys(mut term: AffinityTerm, api: &PodAffinityTerm, owner: &Pod) -> AffinityTerm {
    use capstan_meta::labels::{Operator, Requirement};
    let labels = owner.metadata.labels.as_ref();
    if let Some(selector) = term.selector.as_mut() {
        let value = |k: &String| labels.and_then(|l| l.get(k)).cloned();
        for key in api.match_label_keys.iter().flatten() {
            if let Some(v) = value(key) {
                selector.requirements.push(Requirement {
                    key: key.clone(),
                    op: Operator::In(vec![v]),
                });
            }
        }
        for key in api.mismatch_label_keys.iter().flatten() {
            if let Some(v) = value(key) {
                selector.requirements.push(Requirement {
                    key: key.clone(),
                    op: Operator::NotIn(vec![v]),
                });
            }
        }
    }
    term
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(json: serde_json::Value) -> Pod {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn terms_match_in_their_namespaces() {
        let p = pod(serde_json::json!({
            "metadata": {"name": "p", "namespace": "a", "labels": {"app": "web"}},
            "spec": {"containers": [], "affinity": {"podAntiAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "zone"},
                    {"labelSelector": {"matchLabels": {"app": "db"}}, "topologyKey": "zone",
                     "namespaceSelector": {"matchLabels": {"team": "x"}}},
                    {"topologyKey": "zone"}
                ]}}}
        }));
        let terms = PodAffinityTerms::of(&p).unwrap();
        let [own, by_label, nothing] = &terms.required_anti_affinity[..] else {
            panic!("three terms")
        };
        let web: BTreeMap<_, _> = [("app".to_string(), "web".to_string())].into();
        let db: BTreeMap<_, _> = [("app".to_string(), "db".to_string())].into();
        let namespaces: NamespaceLabels = [
            (
                "b".to_string(),
                [("team".to_string(), "x".to_string())].into(),
            ),
            ("c".to_string(), BTreeMap::new()),
        ]
        .into();
        assert!(own.matches("a", Some(&web), &namespaces));
        assert!(!own.matches("b", Some(&web), &namespaces));
        assert!(by_label.matches("b", Some(&db), &namespaces));
        assert!(!by_label.matches("c", Some(&db), &namespaces));
        assert!(!nothing.matches("a", Some(&web), &namespaces));
        assert!(
            PodAffinityTerms::of(&pod(
                serde_json::json!({"metadata": {}, "spec": {"containers": []}})
            ))
            .is_none()
        );
    }

    #[test]
    fn match_label_keys_take_the_owners_values() {
        let p = pod(serde_json::json!({
            "metadata": {"name": "p", "namespace": "a", "labels": {"app": "web", "rev": "2"}},
            "spec": {"containers": [], "affinity": {"podAffinity": {
                "requiredDuringSchedulingIgnoredDuringExecution": [
                    {"labelSelector": {"matchLabels": {"app": "web"}}, "topologyKey": "zone",
                     "matchLabelKeys": ["rev"]}
                ]}}}
        }));
        let terms = PodAffinityTerms::of(&p).unwrap();
        let term = &terms.required_affinity[0];
        let labels = |rev: &str| -> BTreeMap<String, String> {
            [
                ("app".to_string(), "web".to_string()),
                ("rev".to_string(), rev.to_string()),
            ]
            .into()
        };
        assert!(term.matches("a", Some(&labels("2")), &NamespaceLabels::new()));
        assert!(!term.matches("a", Some(&labels("1")), &NamespaceLabels::new()));
    }
}
