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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugins::test_support::{cluster, feasible, node, pod};
    use serde_json::json;

    fn with_port(
        name: &str,
        port: i64,
        protocol: &str,
        host_ip: Option<&str>,
    ) -> k8s_openapi::api::core::v1::Pod {
        let mut p = pod(name, json!({}), json!({}));
        p.spec.as_mut().unwrap().containers[0].ports = Some(vec![
            serde_json::from_value(json!({"containerPort": 80, "hostPort": port,
                "protocol": protocol, "hostIP": host_ip}))
            .unwrap(),
        ]);
        p
    }

    #[test]
    fn host_ports_conflict_per_protocol_and_address() {
        let placed = vec![(with_port("web", 8080, "TCP", Some("10.0.0.1")), "n1")];
        let cache = cluster(vec![node("n1", json!({})), node("n2", json!({}))], placed);
        let cases = [
            (with_port("same", 8080, "TCP", Some("10.0.0.1")), vec!["n2"]),
            // 0.0.0.0 conflicts with every address.
            (with_port("any", 8080, "TCP", None), vec!["n2"]),
            (
                with_port("other-ip", 8080, "TCP", Some("10.0.0.2")),
                vec!["n1", "n2"],
            ),
            (
                with_port("udp", 8080, "UDP", Some("10.0.0.1")),
                vec!["n1", "n2"],
            ),
            (with_port("other-port", 9090, "TCP", None), vec!["n1", "n2"]),
        ];
        for (p, want) in cases {
            let name = p.metadata.name.clone().unwrap();
            assert_eq!(feasible(&NodePorts, p, &cache).unwrap(), want, "{name}");
        }
    }

    #[test]
    fn node_name_and_unschedulable_nodes() {
        let mut closed = node("closed", json!({}));
        closed.spec = Some(serde_json::from_value(json!({"unschedulable": true})).unwrap());
        let cache = cluster(vec![node("open", json!({})), closed], vec![]);
        let named = pod("p", json!({}), json!({"nodeName": "closed"}));
        assert_eq!(feasible(&NodeName, named, &cache).unwrap(), ["closed"]);
        assert_eq!(
            feasible(&NodeUnschedulable, pod("p", json!({}), json!({})), &cache).unwrap(),
            ["open"]
        );
        let tolerant = pod(
            "p",
            json!({}),
            json!({"tolerations": [
            {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]}),
        );
        assert_eq!(
            feasible(&NodeUnschedulable, tolerant, &cache)
                .unwrap()
                .len(),
            2
        );
    }
}
