//! NodeAffinity: `nodeSelector` and required node affinity filter; preferred node affinity
//! scores by the weights of the terms a node matches.

use k8s_openapi::api::core::v1::{
    NodeAffinity as ApiNodeAffinity, NodeSelectorRequirement, NodeSelectorTerm, Pod,
};

use crate::cache::NodeInfo;
use crate::framework::{Filter, PodInfo, Rejection, Score, default_normalize};

fn label<'a>(node: &'a NodeInfo, key: &str) -> Option<&'a str> {
    node.node
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(key))
        .map(String::as_str)
}

fn requirement_matches(r: &NodeSelectorRequirement, value: Option<&str>) -> bool {
    let values = r.values.as_deref().unwrap_or(&[]);
    match r.operator.as_str() {
        "In" => value.is_some_and(|v| values.iter().any(|x| x == v)),
        "NotIn" => value.is_none_or(|v| !values.iter().any(|x| x == v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" | "Lt" => {
            let (Some(v), Some(bound)) = (
                value.and_then(|v| v.parse::<i64>().ok()),
                values.first().and_then(|b| b.parse::<i64>().ok()),
            ) else {
                return false;
            };
            if r.operator == "Gt" {
                v > bound
            } else {
                v < bound
            }
        }
        _ => false,
    }
}

fn term_matches(term: &NodeSelectorTerm, node: &NodeInfo) -> bool {
    let exprs = term.match_expressions.as_deref().unwrap_or(&[]);
    let fields = term.match_fields.as_deref().unwrap_or(&[]);
    if exprs.is_empty() && fields.is_empty() {
        return false;
    }
    exprs
        .iter()
        .all(|r| requirement_matches(r, label(node, &r.key)))
        && fields
            .iter()
            .all(|r| r.key == "metadata.name" && requirement_matches(r, Some(node.name())))
}

/// Whether any of `terms` matches the node (terms are ORed, their requirements ANDed; an
/// empty term matches nothing).
pub fn node_selector_matches(terms: &[NodeSelectorTerm], node: &NodeInfo) -> bool {
    terms.iter().any(|t| term_matches(t, node))
}

/// The NodeAffinity plugin.
#[derive(Debug, Clone, Default)]
pub struct NodeAffinity {
    /// Affinity every pod gets on top of its own (`addedAffinity`).
    pub added: Option<ApiNodeAffinity>,
}

impl Filter for NodeAffinity {
    fn name(&self) -> &'static str {
        "NodeAffinity"
    }

    fn filter(&self, pod: &PodInfo, node: &NodeInfo) -> Result<(), Rejection> {
        let added_ok = self
            .added
            .as_ref()
            .and_then(|a| {
                a.required_during_scheduling_ignored_during_execution
                    .as_ref()
            })
            .is_none_or(|r| node_selector_matches(&r.node_selector_terms, node));
        if added_ok && required_node_affinity_matches(&pod.pod, node) {
            Ok(())
        } else {
            Err(Rejection::unresolvable(
                "node(s) didn't match Pod's node affinity/selector",
            ))
        }
    }
}

/// Whether `node` satisfies the pod's `nodeSelector` and required node affinity.
pub fn required_node_affinity_matches(pod: &Pod, node: &NodeInfo) -> bool {
    let spec = pod.spec.as_ref();
    let selector_ok = spec
        .and_then(|s| s.node_selector.as_ref())
        .is_none_or(|sel| sel.iter().all(|(k, v)| label(node, k) == Some(v.as_str())));
    let required = spec
        .and_then(|s| s.affinity.as_ref())
        .and_then(|a| a.node_affinity.as_ref())
        .and_then(|a| {
            a.required_during_scheduling_ignored_during_execution
                .as_ref()
        });
    selector_ok && required.is_none_or(|r| node_selector_matches(&r.node_selector_terms, node))
}

impl Score for NodeAffinity {
    fn name(&self) -> &'static str {
        "NodeAffinity"
    }

    fn score(&self, pod: &PodInfo, node: &NodeInfo) -> i64 {
        let own = pod
            .pod
            .spec
            .as_ref()
            .and_then(|s| s.affinity.as_ref())
            .and_then(|a| a.node_affinity.as_ref());
        [own, self.added.as_ref()]
            .into_iter()
            .flatten()
            .filter_map(|a| {
                a.preferred_during_scheduling_ignored_during_execution
                    .as_ref()
            })
            .flatten()
            .filter(|t| t.weight != 0 && term_matches(&t.preference, node))
            .map(|t| i64::from(t.weight))
            .sum()
    }

    fn normalize(&self, _pod: &PodInfo, _nodes: &[&NodeInfo], scores: &mut [i64]) {
        default_normalize(scores, false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::test_support::{cluster, feasible, node, pod, scores};
    use serde_json::json;

    fn nodes() -> Vec<k8s_openapi::api::core::v1::Node> {
        vec![
            node("a", json!({"zone": "a", "disk": "ssd", "gen": "3"})),
            node("b", json!({"zone": "b", "gen": "5"})),
            node("c", json!({})),
        ]
    }

    fn required(terms: serde_json::Value) -> serde_json::Value {
        json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
            {"nodeSelectorTerms": terms}}}})
    }

    #[test]
    fn selectors_and_required_terms_filter() {
        let cache = cluster(nodes(), vec![]);
        let cases = [
            (json!({"nodeSelector": {"disk": "ssd"}}), vec!["a"]),
            (
                required(
                    json!([{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]),
                ),
                vec!["a", "b"],
            ),
            (
                required(
                    json!([{"matchExpressions": [{"key": "zone", "operator": "NotIn", "values": ["a"]}]}]),
                ),
                vec!["b", "c"],
            ),
            (
                required(
                    json!([{"matchExpressions": [{"key": "disk", "operator": "DoesNotExist"}]}]),
                ),
                vec!["b", "c"],
            ),
            (
                required(
                    json!([{"matchExpressions": [{"key": "gen", "operator": "Gt", "values": ["4"]}]}]),
                ),
                vec!["b"],
            ),
            (
                required(
                    json!([{"matchExpressions": [{"key": "gen", "operator": "Lt", "values": ["4"]}]}]),
                ),
                vec!["a"],
            ),
            // Terms are ORed; an empty term matches nothing.
            (
                required(
                    json!([{}, {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["c"]}]}]),
                ),
                vec!["c"],
            ),
        ];
        for (spec, want) in cases {
            let got = feasible(
                &NodeAffinity::default(),
                pod("p", json!({}), spec.clone()),
                &cache,
            )
            .unwrap();
            assert_eq!(got, want, "{spec}");
        }
    }

    #[test]
    fn preferred_terms_and_added_affinity_score() {
        let cache = cluster(nodes(), vec![]);
        let spec = json!({"affinity": {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
            {"weight": 10, "preference": {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["b"]}]}},
            {"weight": 5, "preference": {"matchExpressions": [{"key": "disk", "operator": "Exists"}]}}
        ]}}});
        let by_node: std::collections::BTreeMap<_, _> =
            scores(&NodeAffinity::default(), pod("p", json!({}), spec), &cache)
                .into_iter()
                .collect();
        assert_eq!((by_node["a"], by_node["b"], by_node["c"]), (50, 100, 0));
        // addedAffinity (profile-wide) keeps every pod off nodes without a zone.
        let added: ApiNodeAffinity = serde_json::from_value(json!({
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                {"matchExpressions": [{"key": "zone", "operator": "Exists"}]}]}}))
        .unwrap();
        let plugin = NodeAffinity { added: Some(added) };
        assert_eq!(
            feasible(&plugin, pod("p", json!({}), json!({})), &cache).unwrap(),
            ["a", "b"]
        );
    }
}
