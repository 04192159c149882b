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
