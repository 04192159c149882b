//! TaintToleration: NoSchedule and NoExecute taints keep out pods that do not tolerate them;
//! PreferNoSchedule taints lower a node's score.

use k8s_openapi::api::core::v1::{Taint, Toleration};

use crate::cache::NodeInfo;
use crate::framework::{Filter, PodInfo, Rejection, Score, default_normalize};

/// Whether `toleration` tolerates `taint` (upstream's matching: empty key with `Exists`
/// matches every key; empty effect matches every effect; `Equal` compares values).
pub fn tolerates(toleration: &Toleration, taint: &Taint) -> bool {
    if let Some(effect) = toleration.effect.as_deref().filter(|e| !e.is_empty())
        && effect != taint.effect
    {
        return false;
    }
    let key = toleration.key.as_deref().unwrap_or("");
    let operator = toleration.operator.as_deref().unwrap_or("Equal");
    if key.is_empty() {
        return operator == "Exists";
    }
    if key != taint.key {
        return false;
    }
    match operator {
        "Exists" => true,
        "Equal" | "" => {
            toleration.value.as_deref().unwrap_or("") == taint.value.as_deref().unwrap_or("")
        }
        _ => false,
    }
}

fn tolerations(pod: &PodInfo) -> &[Toleration] {
    pod.pod
        .spec
        .as_ref()
        .and_then(|s| s.tolerations.as_deref())
        .unwrap_or(&[])
}

fn taints(node: &NodeInfo) -> &[Taint] {
    node.node
        .spec
        .as_ref()
        .and_then(|s| s.taints.as_deref())
        .unwrap_or(&[])
}

/// The TaintToleration plugin.
pub struct TaintToleration;

impl Filter for TaintToleration {
    fn name(&self) -> &'static str {
        "TaintToleration"
    }

    fn filter(&self, pod: &PodInfo, node: &NodeInfo) -> Result<(), Rejection> {
        match untolerated_taint(pod, node) {
            None => Ok(()),
            Some(taint) => Err(Rejection::unresolvable(format!(
                "node(s) had untolerated taint {{{}: {}}}",
                taint.key,
                taint.value.as_deref().unwrap_or("")
            ))),
        }
    }
}

/// The first `NoSchedule` or `NoExecute` taint of `node` that the pod does not tolerate.
pub fn untolerated_taint<'a>(pod: &PodInfo, node: &'a NodeInfo) -> Option<&'a Taint> {
    let tolerations = tolerations(pod);
    taints(node).iter().find(|taint| {
        matches!(taint.effect.as_str(), "NoSchedule" | "NoExecute")
            && !tolerations.iter().any(|t| tolerates(t, taint))
    })
}

impl Score for TaintToleration {
    fn name(&self) -> &'static str {
        "TaintToleration"
    }

    fn score(&self, pod: &PodInfo, node: &NodeInfo) -> i64 {
        let soft: Vec<&Toleration> = tolerations(pod)
            .iter()
            .filter(|t| {
                matches!(
                    t.effect.as_deref(),
                    None | Some("") | Some("PreferNoSchedule")
                )
            })
            .collect();
        taints(node)
            .iter()
            .filter(|t| t.effect == "PreferNoSchedule")
            .filter(|t| !soft.iter().any(|tol| tolerates(tol, t)))
            .count() as i64
    }

    fn normalize(&self, _pod: &PodInfo, _nodes: &[&NodeInfo], scores: &mut [i64]) {
        default_normalize(scores, true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toleration(key: &str, op: &str, value: &str, effect: &str) -> Toleration {
        Toleration {
            key: Some(key.into()).filter(|k: &String| !k.is_empty()),
            operator: Some(op.into()),
            value: Some(value.into()).filter(|v: &String| !v.is_empty()),
            effect: Some(effect.into()).filter(|e: &String| !e.is_empty()),
            ..Default::default()
        }
    }

    #[test]
    fn toleration_matching_follows_upstream() {
        let taint = Taint {
            key: "dedicated".into(),
            value: Some("gpu".into()),
            effect: "NoSchedule".into(),
            ..Default::default()
        };
        assert!(tolerates(
            &toleration("dedicated", "Equal", "gpu", "NoSchedule"),
            &taint
        ));
        assert!(tolerates(
            &toleration("dedicated", "Exists", "", ""),
            &taint
        ));
        assert!(tolerates(&toleration("", "Exists", "", ""), &taint));
        assert!(!tolerates(
            &toleration("dedicated", "Equal", "cpu", "NoSchedule"),
            &taint
        ));
        assert!(!tolerates(
            &toleration("dedicated", "Equal", "gpu", "NoExecute"),
            &taint
        ));
        assert!(!tolerates(&toleration("", "Equal", "", ""), &taint));
    }
}
