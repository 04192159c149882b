//! NodeUnschedulable, NodeName and NodePorts.

use crate::cache::NodeInfo;
use crate::framework::{Filter, PodInfo, Rejection};
use crate::plugins::tolerates;
use k8s_openapi::api::core::v1::Taint;

/// Nodes marked `spec.unschedulable` take only pods that tolerate the
/// `node.kubernetes.io/unschedulable:NoSchedule` taint.
pub struct NodeUnschedulable;

impl Filter for NodeUnschedulable {
    fn name(&self) -> &'static str {
        "NodeUnschedulable"
    }

    fn filter(&self, pod: &PodInfo, node: &NodeInfo) -> Result<(), Rejection> {
        let unschedulable = node.node.spec.as_ref().and_then(|s| s.unschedulable) == Some(true);
        if !unschedulable {
            return Ok(());
        }
        let taint = Taint {
            key: "node.kubernetes.io/unschedulable".into(),
            effect: "NoSchedule".into(),
            ..Default::default()
        };
        let tolerations = pod
            .pod
            .spec
            .as_ref()
            .and_then(|s| s.tolerations.as_deref())
            .unwrap_or(&[]);
        if tolerations.iter().any(|t| tolerates(t, &taint)) {
            return Ok(());
        }
        Err(Rejection::unresolvable("node(s) were unschedulable"))
    }
}

/// A pod that names its node (`spec.nodeName` before binding) fits only there.
pub struct NodeName;

impl Filter for NodeName {
    fn name(&self) -> &'static str {
        "NodeName"
    }

    fn filter(&self, pod: &PodInfo, node: &NodeInfo) -> Result<(), Rejection> {
        match pod.pod.spec.as_ref().and_then(|s| s.node_name.as_deref()) {
            Some(wanted) if !wanted.is_empty() && wanted != node.name() => Err(
                Rejection::unresolvable("node(s) didn't match the requested node name"),
            ),
            _ => Ok(()),
        }
    }
}

/// Host ports are taken once per node (per protocol; a port on 0.0.0.0 conflicts with every
/// address).
pub struct NodePorts;

impl Filter for NodePorts {
    fn name(&self) -> &'static str {
        "NodePorts"
    }

    fn filter(&self, pod: &PodInfo, node: &NodeInfo) -> Result<(), Rejection> {
        let conflict = pod.ports.iter().any(|(proto, ip, port)| {
            node.used_ports.iter().any(|(p, i, n)| {
                p == proto && n == port && (i == ip || i == "0.0.0.0" || ip == "0.0.0.0")
            })
        });
        if conflict {
            Err(Rejection::resolvable(
                "node(s) didn't have free ports for the requested pod ports",
            ))
        } else {
            Ok(())
        }
    }
}
