//! Keeps each node's `NoSchedule` condition taints in step with its conditions and
//! `spec.unschedulable` (the part of upstream's node lifecycle controller that taints nodes
//! by condition; the `TaintNodesByCondition` admission plugin adds the first
//! `not-ready` taint to every new node, this removes it once the node is ready).

use std::sync::Arc;

use capstan_registry::{GenericStore, RestStorage};
use k8s_openapi::api::core::v1::{Node, Taint};
use tokio::sync::mpsc;

use crate::watching::{Seen, follow};

/// Condition type and status → the taint key it calls for.
const CONDITION_TAINTS: &[(&str, &str, &str)] = &[
    ("Ready", "False", "node.kubernetes.io/not-ready"),
    ("Ready", "Unknown", "node.kubernetes.io/unreachable"),
    (
        "MemoryPressure",
        "True",
        "node.kubernetes.io/memory-pressure",
    ),
    ("DiskPressure", "True", "node.kubernetes.io/disk-pressure"),
    (
        "NetworkUnavailable",
        "True",
        "node.kubernetes.io/network-unavailable",
    ),
    ("PIDPressure", "True", "node.kubernetes.io/pid-pressure"),
];
const UNSCHEDULABLE: &str = "node.kubernetes.io/unschedulable";
const NO_SCHEDULE: &str = "NoSchedule";

/// Whether `key` is one of the taints this controller keeps.
fn managed(key: &str) -> bool {
    key == UNSCHEDULABLE || CONDITION_TAINTS.iter().any(|(_, _, k)| *k == key)
}

/// The node's taints with the managed `NoSchedule` ones as its conditions call for; `None`
/// when they already are, or when the node has not reported readiness yet (it keeps the
/// taint it was created with: upstream would mark it unreachable after a grace period, to
/// the same effect, while Capstan has no node health monitor).
pub(crate) fn wanted_taints(node: &Node) -> Option<Vec<Taint>> {
    let conditions = node
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .filter(|c| c.iter().any(|c| c.type_ == "Ready"))?;
    let mut keys: Vec<&str> = conditions
        .iter()
        .filter_map(|c| {
            CONDITION_TAINTS
                .iter()
                .find(|(t, s, _)| *t == c.type_ && *s == c.status)
                .map(|(_, _, key)| *key)
        })
        .collect();
    if node.spec.as_ref().and_then(|s| s.unschedulable) == Some(true) {
        keys.push(UNSCHEDULABLE);
    }
    let current = node
        .spec
        .as_ref()
        .and_then(|s| s.taints.clone())
        .unwrap_or_default();
    let is_managed = |t: &Taint| t.effect == NO_SCHEDULE && managed(&t.key);
    let have: Vec<&str> = current
        .iter()
        .filter(|t| is_managed(t))
        .map(|t| t.key.as_str())
        .collect();
    if have.len() == keys.len() && keys.iter().all(|k| have.contains(k)) {
        return None;
    }
    let mut taints: Vec<Taint> = current.into_iter().filter(|t| !is_managed(t)).collect();
    taints.extend(keys.into_iter().map(|key| Taint {
        key: key.into(),
        effect: NO_SCHEDULE.into(),
        time_added: None,
        value: None,
    }));
    Some(taints)
}

/// Follows the nodes and corrects their taints until stopped.
pub async fn run(nodes: Arc<GenericStore<capstan_api::NodeStrategy>>) {
    let (tx, mut rx) = mpsc::channel::<Seen<Node>>(256);
    let storage: Arc<dyn RestStorage> = nodes.clone();
    let mut follower = tokio::task::JoinSet::new();
    follower.spawn(follow(storage, tx));
    while let Some(seen) = rx.recv().await {
        if seen.deleted || seen.listed || wanted_taints(&seen.object).is_none() {
            continue;
        }
        let name = seen.object.metadata.name.clone().unwrap_or_default();
        let written = nodes
            .update_with("", &name, false, |node| {
                if let Some(taints) = wanted_taints(node) {
                    node.spec.get_or_insert_with(Default::default).taints =
                        (!taints.is_empty()).then_some(taints);
                }
                Ok(())
            })
            .await;
        if let Err(err) = written {
            tracing::debug!(node = %name, %err, "correcting node taints failed; the next change retries");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn node(value: serde_json::Value) -> Node {
        serde_json::from_value(value).unwrap()
    }

    #[test]
    fn taints_follow_conditions() {
        let ready = node(json!({"metadata": {"name": "n"},
            "spec": {"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"},
                                {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}}));
        let taints = wanted_taints(&ready).unwrap();
        assert_eq!(taints.len(), 1);
        assert_eq!(taints[0].key, "dedicated");

        let pressed = node(
            json!({"metadata": {"name": "n"}, "spec": {"unschedulable": true},
            "status": {"conditions": [{"type": "Ready", "status": "Unknown"},
                                      {"type": "DiskPressure", "status": "True"}]}}),
        );
        let keys: Vec<String> = wanted_taints(&pressed)
            .unwrap()
            .into_iter()
            .map(|t| t.key)
            .collect();
        assert_eq!(
            keys,
            [
                "node.kubernetes.io/unreachable",
                "node.kubernetes.io/disk-pressure",
                UNSCHEDULABLE
            ]
        );

        let settled = node(json!({"metadata": {"name": "n"},
            "spec": {"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]},
            "status": {"conditions": [{"type": "Ready", "status": "False"}]}}));
        assert!(wanted_taints(&settled).is_none());
        // Before the node reports readiness, its taints stay.
        let fresh = node(json!({"metadata": {"name": "n"},
            "spec": {"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]}}));
        assert!(wanted_taints(&fresh).is_none());
        // The NoExecute taints are another controller's (eviction), left alone.
        let evicting = node(json!({"metadata": {"name": "n"},
            "spec": {"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}}));
        assert!(wanted_taints(&evicting).is_none());
    }
}
