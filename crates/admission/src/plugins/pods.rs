//! Plugins that change or check one pod (or node) by itself: `AlwaysPullImages`,
//! `DefaultTolerationSeconds`, `LimitPodHardAntiAffinityTopology`, `TaintNodesByCondition`.

use async_trait::async_trait;
use capstan_meta::{ApiError, GroupResource};
use k8s_openapi::api::core::v1::{Pod, Toleration};
use serde_json::{Value, json};

use super::forbidden;
use crate::attributes::{Attributes, Operation};
use crate::chain::{Plugin, PodMutator};

fn is_pods(resource: &GroupResource, subresource: &str) -> bool {
    resource.group.is_empty() && resource.resource == "pods" && subresource.is_empty()
}

const CONTAINER_LISTS: &[&str] = &["initContainers", "containers", "ephemeralContainers"];

/// `AlwaysPullImages`: every container of a new pod, and every container whose image an
/// update changes, pulls its image (`imagePullPolicy: Always`), so that a node's cached
/// image is not used by pods without the credentials to pull it.
pub struct AlwaysPullImages;

/// The image of container `name` of list `list` in `pod`.
fn image_of<'a>(pod: &'a Value, list: &str, name: &str) -> Option<&'a str> {
    pod["spec"][list]
        .as_array()?
        .iter()
        .find(|c| c["name"] == name)?["image"]
        .as_str()
}

impl AlwaysPullImages {
    /// Whether the container is new or changed its image.
    fn fresh(a: &Attributes, list: &str, container: &Value) -> bool {
        let Some(old) = &a.old_object else {
            return true;
        };
        let name = container["name"].as_str().unwrap_or_default();
        image_of(old, list, name) != container["image"].as_str()
    }
}

#[async_trait]
impl Plugin for AlwaysPullImages {
    fn name(&self) -> &'static str {
        "AlwaysPullImages"
    }

    fn admits(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        matches!(operation, Operation::Create | Operation::Update)
            && resource.group.is_empty()
            && resource.resource == "pods"
            && (subresource.is_empty() || subresource == "ephemeralcontainers")
    }

    fn validates(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        self.admits(operation, resource, subresource)
    }

    async fn admit(&self, a: &mut Attributes) -> Result<(), ApiError> {
        let Some(mut pod) = a.object.take() else {
            return Ok(());
        };
        for list in CONTAINER_LISTS {
            // Looked up, not indexed: indexing would add the absent lists as nulls.
            let Some(containers) = pod
                .get_mut("spec")
                .and_then(|s| s.get_mut(*list))
                .and_then(Value::as_array_mut)
            else {
                continue;
            };
            for c in containers.iter_mut() {
                if Self::fresh(a, list, c) {
                    c["imagePullPolicy"] = "Always".into();
                }
            }
        }
        a.object = Some(pod);
        Ok(())
    }

    async fn validate(&self, a: &Attributes) -> Result<(), ApiError> {
        let Some(pod) = &a.object else {
            return Ok(());
        };
        for list in CONTAINER_LISTS {
            for (i, c) in pod["spec"][list]
                .as_array()
                .into_iter()
                .flatten()
                .enumerate()
            {
                let policy = c["imagePullPolicy"].as_str().unwrap_or_default();
                if policy != "Always" && Self::fresh(a, list, c) {
                    return Err(forbidden(
                        a,
                        &format!(
                            "spec.{list}[{i}].imagePullPolicy: Unsupported value: {policy:?}: supported values: \"Always\""
                        ),
                    ));
                }
            }
        }
        Ok(())
    }
}

/// `DefaultTolerationSeconds`: a new pod that does not tolerate the not-ready and
/// unreachable `NoExecute` taints itself gets tolerations of them for the configured
/// seconds (`--default-not-ready-toleration-seconds`,
/// `--default-unreachable-toleration-seconds`).
pub struct DefaultTolerationSeconds {
    /// Seconds for `node.kubernetes.io/not-ready`.
    pub not_ready: i64,
    /// Seconds for `node.kubernetes.io/unreachable`.
    pub unreachable: i64,
}

#[async_trait]
impl Plugin for DefaultTolerationSeconds {
    fn name(&self) -> &'static str {
        "DefaultTolerationSeconds"
    }

    fn admits(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        operation == Operation::Create && is_pods(resource, subresource)
    }

    fn pod_mutator(&self) -> Option<&dyn PodMutator> {
        Some(self)
    }
}

#[async_trait]
impl PodMutator for DefaultTolerationSeconds {
    async fn mutate(&self, _: &Attributes, pod: &mut Pod) -> Result<(), ApiError> {
        self.tolerate(pod);
        Ok(())
    }
}

impl DefaultTolerationSeconds {
    /// Adds the tolerations `pod` lacks.
    fn tolerate(&self, pod: &mut Pod) {
        let Some(spec) = pod.spec.as_mut() else {
            return;
        };
        let list = spec.tolerations.get_or_insert_with(Vec::new);
        for (key, seconds) in [
            ("node.kubernetes.io/not-ready", self.not_ready),
            ("node.kubernetes.io/unreachable", self.unreachable),
        ] {
            // Any toleration of the taint's NoExecute effect (or of every effect) counts.
            let tolerated = list.iter().any(|t| {
                let effect = t.effect.as_deref().unwrap_or_default();
                let own_key = t.key.as_deref().unwrap_or_default();
                let key_matches = own_key == key
                    || (own_key.is_empty() && t.operator.as_deref() == Some("Exists"));
                key_matches && (effect.is_empty() || effect == "NoExecute")
            });
            if !tolerated {
                list.push(Toleration {
                    key: Some(key.into()),
                    operator: Some("Exists".into()),
                    effect: Some("NoExecute".into()),
                    toleration_seconds: Some(seconds),
                    value: None,
                });
            }
        }
    }
}

/// `LimitPodHardAntiAffinityTopology`: required pod anti-affinity only per node.
pub struct LimitPodHardAntiAffinityTopology;

const HOSTNAME: &str = "kubernetes.io/hostname";

#[async_trait]
impl Plugin for LimitPodHardAntiAffinityTopology {
    fn name(&self) -> &'static str {
        "LimitPodHardAntiAffinityTopology"
    }

    fn validates(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        matches!(operation, Operation::Create | Operation::Update) && is_pods(resource, subresource)
    }

    async fn validate(&self, a: &Attributes) -> Result<(), ApiError> {
        let Some(pod) = &a.object else {
            return Ok(());
        };
        let terms = &pod["spec"]["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
        for term in terms.as_array().into_iter().flatten() {
            let key = term["topologyKey"].as_str().unwrap_or_default();
            if key != HOSTNAME {
                return Err(forbidden(
                    a,
                    &format!(
                        "affinity.PodAntiAffinity.RequiredDuringScheduling has TopologyKey {key} but only key {HOSTNAME} is allowed"
                    ),
                ));
            }
        }
        Ok(())
    }
}

/// `TaintNodesByCondition`: a new node is tainted `node.kubernetes.io/not-ready:NoSchedule`
/// until the node lifecycle controller sees it ready.
pub struct TaintNodesByCondition;

const NOT_READY: &str = "node.kubernetes.io/not-ready";

#[async_trait]
impl Plugin for TaintNodesByCondition {
    fn name(&self) -> &'static str {
        "TaintNodesByCondition"
    }

    fn admits(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        operation == Operation::Create
            && resource.group.is_empty()
            && resource.resource == "nodes"
            && subresource.is_empty()
    }

    async fn admit(&self, a: &mut Attributes) -> Result<(), ApiError> {
        let Some(node) = a.object.as_mut() else {
            return Ok(());
        };
        if !node["spec"].is_object() {
            node["spec"] = json!({});
        }
        let spec = &mut node["spec"];
        if !spec["taints"].is_array() {
            spec["taints"] = json!([]);
        }
        if let Some(taints) = spec["taints"].as_array_mut()
            && !taints
                .iter()
                .any(|t| t["key"] == NOT_READY && t["effect"] == "NoSchedule")
        {
            taints.push(json!({"key": NOT_READY, "effect": "NoSchedule"}));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::any::Any;
    use std::sync::Arc;

    use super::*;
    use capstan_auth::UserInfo;

    fn create(resource: &str, object: Value) -> Attributes {
        let mut a = Attributes::new(
            Operation::Create,
            GroupResource::new("", resource),
            UserInfo::default(),
        );
        a.name = object["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .into();
        a.namespace = "default".into();
        a.object = Some(object);
        a
    }

    #[tokio::test]
    async fn images_are_always_pulled_for_new_and_changed_containers() {
        let pod = json!({"metadata": {"name": "p"}, "spec": {
            "initContainers": [{"name": "i", "image": "busybox", "imagePullPolicy": "IfNotPresent"}],
            "containers": [{"name": "c", "image": "nginx", "imagePullPolicy": "Never"}]}});
        let mut a = create("pods", pod.clone());
        AlwaysPullImages.admit(&mut a).await.unwrap();
        let got = a.object.clone().unwrap();
        assert_eq!(
            got["spec"]["initContainers"][0]["imagePullPolicy"],
            "Always"
        );
        assert_eq!(got["spec"]["containers"][0]["imagePullPolicy"], "Always");
        AlwaysPullImages.validate(&a).await.unwrap();
        // Validation alone refuses what a later mutation undid.
        let err = AlwaysPullImages
            .validate(&create("pods", pod.clone()))
            .await
            .unwrap_err();
        assert_eq!(
            err.message,
            "pods \"p\" is forbidden: spec.initContainers[0].imagePullPolicy: Unsupported value: \"IfNotPresent\": supported values: \"Always\""
        );
        // An update keeping the images keeps the policies.
        let mut update = create("pods", pod.clone());
        update.operation = Operation::Update;
        update.old_object = Some(pod);
        AlwaysPullImages.admit(&mut update).await.unwrap();
        assert_eq!(
            update.object.unwrap()["spec"]["containers"][0]["imagePullPolicy"],
            "Never"
        );
    }

    #[tokio::test]
    async fn default_tolerations_are_added_unless_the_pod_has_its_own() {
        let plugin = DefaultTolerationSeconds {
            not_ready: 300,
            unreachable: 60,
        };
        let mut a = create(
            "pods",
            json!({"metadata": {"name": "p"}, "spec": {"tolerations": [
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5}]}}),
        );
        plugin.admit(&mut a).await.unwrap();
        let tolerations = a.object.unwrap()["spec"]["tolerations"].clone();
        assert_eq!(
            tolerations,
            json!([
                {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 5},
                {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            ])
        );
    }

    /// A pod held typed, counting the trees the chain asks of it.
    struct HeldPod {
        pod: Pod,
        trees: usize,
    }

    impl crate::TypedObject for HeldPod {
        fn as_any(&self) -> &dyn Any {
            &self.pod
        }

        fn as_any_mut(&mut self) -> &mut (dyn Any + Send) {
            &mut self.pod
        }

        fn to_tree(&mut self) -> Result<Value, ApiError> {
            self.trees += 1;
            Ok(serde_json::to_value(&self.pod).unwrap())
        }
    }

    /// A plugin that reads the tree: it labels the pod with its number of tolerations.
    struct CountsTolerations;

    #[async_trait]
    impl Plugin for CountsTolerations {
        fn name(&self) -> &'static str {
            "CountsTolerations"
        }

        fn admits(&self, _: Operation, resource: &GroupResource, _: &str) -> bool {
            resource.resource == "pods"
        }

        async fn admit(&self, a: &mut Attributes) -> Result<(), ApiError> {
            let pod = a.object.as_mut().unwrap();
            let n = pod["spec"]["tolerations"].as_array().map_or(0, Vec::len);
            pod["metadata"]["labels"] = json!({"tolerations": n.to_string()});
            Ok(())
        }
    }

    #[tokio::test]
    async fn a_typed_pod_stays_typed_until_a_plugin_needs_its_tree() {
        let defaults = || -> Arc<dyn Plugin> {
            Arc::new(DefaultTolerationSeconds {
                not_ready: 300,
                unreachable: 60,
            })
        };
        let held = || HeldPod {
            pod: serde_json::from_value(
                json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c"}]}}),
            )
            .unwrap(),
            trees: 0,
        };
        let typed_only = crate::Chain::new(vec![defaults()]);
        let mut a = create("pods", Value::Null);
        a.object = None;
        let mut pod = held();
        typed_only.admit_typed(&mut a, &mut pod).await.unwrap();
        assert!(a.object.is_none(), "no plugin needed the tree");
        assert_eq!(pod.trees, 0);
        let tolerations = pod.pod.spec.as_ref().unwrap().tolerations.as_ref().unwrap();
        assert_eq!(tolerations.len(), 2);
        assert_eq!(tolerations[1].toleration_seconds, Some(60));

        // A plugin that reads the tree after it sees the typed plugin's changes; one that
        // changes pods typed after it works on the tree (which stays the object).
        let mixed = crate::Chain::new(vec![defaults(), Arc::new(CountsTolerations), defaults()]);
        let mut a = create("pods", Value::Null);
        a.object = None;
        let mut pod = held();
        mixed.admit_typed(&mut a, &mut pod).await.unwrap();
        assert_eq!(pod.trees, 1);
        let tree = a.object.expect("the tree is the object");
        assert_eq!(tree["metadata"]["labels"]["tolerations"], "2");
        assert_eq!(tree["spec"]["tolerations"].as_array().unwrap().len(), 2);
    }

    #[tokio::test]
    async fn hard_anti_affinity_is_per_node_only() {
        let pod = |key: &str| {
            json!({"metadata": {"name": "p"}, "spec": {"affinity": {"podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [{"topologyKey": key, "labelSelector": {}}]}}}})
        };
        let plugin = LimitPodHardAntiAffinityTopology;
        plugin
            .validate(&create("pods", pod(HOSTNAME)))
            .await
            .unwrap();
        let err = plugin
            .validate(&create("pods", pod("topology.kubernetes.io/zone")))
            .await
            .unwrap_err();
        assert!(err.message.ends_with("has TopologyKey topology.kubernetes.io/zone but only key kubernetes.io/hostname is allowed"), "{}", err.message);
    }

    #[tokio::test]
    async fn new_nodes_are_tainted_not_ready() {
        let mut a = create("nodes", json!({"metadata": {"name": "n"}}));
        TaintNodesByCondition.admit(&mut a).await.unwrap();
        assert_eq!(
            a.object.unwrap()["spec"]["taints"],
            json!([{"key": NOT_READY, "effect": "NoSchedule"}])
        );
    }
}
