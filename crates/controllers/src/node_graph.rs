//! Keeps the Node authorizer's graph current: pods (with what they reference and where they
//! run), persistent volume claims (with their volumes), persistent volumes (with the
//! secrets they name), volume attachments and resource slices (with their nodes) are listed,
//! then followed through the watch caches.

use std::sync::Arc;

use capstan_api::pod_references;
use capstan_auth::authz::node::{NodeGraph, PodRefs, Source};
use capstan_control::NodeGraphStores;
use capstan_registry::RestStorage;
use k8s_openapi::api::core::v1::PersistentVolumeClaim;
use serde::Deserialize;
use serde_json::Value;
use tokio::task::JoinHandle;

/// Feeds one collection into the graph.
fn feed<T>(
    storage: Arc<dyn RestStorage>,
    graph: Arc<NodeGraph>,
    source: Source,
    apply: fn(&NodeGraph, T, bool, u64),
) -> [JoinHandle<()>; 2]
where
    T: serde::de::DeserializeOwned + Default + Send + 'static,
{
    feed_mentioning(storage, &[], graph, source, apply)
}

/// [`feed`], of the objects whose JSON has one of `needles` only.
fn feed_mentioning<T>(
    storage: Arc<dyn RestStorage>,
    needles: &'static [&'static str],
    graph: Arc<NodeGraph>,
    source: Source,
    apply: fn(&NodeGraph, T, bool, u64),
) -> [JoinHandle<()>; 2]
where
    T: serde::de::DeserializeOwned + Default + Send + 'static,
{
    let listing = graph.clone();
    crate::watching::feed_mentioning(
        storage,
        needles,
        move |generation| listing.listed(source, generation),
        move |object, deleted, generation| apply(&graph, object, deleted, generation),
    )
}

/// Starts following pods, claims, volumes, volume attachments and resource slices into `graph`; a missing
/// store leaves its part empty (and counts as listed).
pub fn start(stores: NodeGraphStores, graph: Arc<NodeGraph>) -> Vec<JoinHandle<()>> {
    let NodeGraphStores {
        pods,
        claims,
        volumes,
        attachments,
        slices,
    } = stores;
    let mut tasks = Vec::new();
    // A pod reaches nothing before it is bound to a node, and its node never changes once
    // set: pods without `nodeName` (a create burst, pending pods) are not parsed or kept.
    tasks.extend(feed_mentioning::<GraphPod>(
        pods,
        &["\"nodeName\""],
        graph.clone(),
        Source::Pods,
        |graph, pod, deleted, generation| {
            let (ns, name) = (&pod.metadata.namespace, &pod.metadata.name);
            if deleted {
                graph.remove_pod(ns, name);
            } else {
                graph.put_pod(ns, name, pod.refs(), generation);
            }
        },
    ));
    match claims {
        Some(claims) => tasks.extend(feed::<PersistentVolumeClaim>(
            claims,
            graph.clone(),
            Source::Claims,
            |graph, claim, deleted, generation| {
                let ns = claim.metadata.namespace.clone().unwrap_or_default();
                let name = claim.metadata.name.clone().unwrap_or_default();
                if deleted {
                    graph.remove_claim(&ns, &name);
                } else {
                    let volume = claim.spec.and_then(|s| s.volume_name).unwrap_or_default();
                    graph.put_claim(&ns, &name, &volume, generation);
                }
            },
        )),
        None => graph.listed(Source::Claims, 0),
    }
    match attachments {
        Some(attachments) => tasks.extend(feed::<Value>(
            attachments,
            graph.clone(),
            Source::Attachments,
            |graph, attachment, deleted, generation| {
                let name = attachment["metadata"]["name"].as_str().unwrap_or_default();
                if deleted {
                    graph.remove_attachment(name);
                } else {
                    let node = attachment["spec"]["nodeName"].as_str().unwrap_or_default();
                    graph.put_attachment(name, node, generation);
                }
            },
        )),
        None => graph.listed(Source::Attachments, 0),
    }
    match slices {
        Some(slices) => tasks.extend(feed::<Value>(
            slices,
            graph.clone(),
            Source::Slices,
            |graph, slice, deleted, generation| {
                let name = slice["metadata"]["name"].as_str().unwrap_or_default();
                if deleted {
                    graph.remove_slice(name);
                } else {
                    let node = slice["spec"]["nodeName"].as_str().unwrap_or_default();
                    graph.put_slice(name, node, generation);
                }
            },
        )),
        None => graph.listed(Source::Slices, 0),
    }
    match volumes {
        Some(volumes) => tasks.extend(feed::<Value>(
            volumes,
            graph,
            Source::Volumes,
            |graph, volume, deleted, generation| {
                let name = volume["metadata"]["name"].as_str().unwrap_or_default();
                if deleted {
                    graph.remove_volume(name);
                } else {
                    graph.put_volume(name, volume_secrets(&volume), generation);
                }
            },
        )),
        None => graph.listed(Source::Volumes, 0),
    }
    tasks
}

fn push(list: &mut Vec<String>, name: Option<&String>) {
    if let Some(name) = name.filter(|n| !n.is_empty())
        && !list.contains(name)
    {
        list.push(name.clone());
    }
}

/// What the graph reads of a pod: its name, its spec and the claims its status names. The
/// rest (managed fields, most of the status) is skipped while parsing.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct GraphPod {
    metadata: crate::watching::Metadata,
    #[serde(deserialize_with = "referencing_spec")]
    spec: Value,
    #[serde(deserialize_with = "crate::watching::nullable")]
    status: GraphPodStatus,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct GraphPodStatus {
    resource_claim_statuses: Value,
}

/// The part of a pod's spec that names other objects: its node, account, pull secrets,
/// volumes and its containers' environment. The rest (images, probes, resources, ...) is
/// skipped, not built into a tree.
fn referencing_spec<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Value, D::Error> {
    struct Referencing;
    impl<'de> serde::de::Visitor<'de> for Referencing {
        type Value = Value;

        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a pod spec")
        }

        fn visit_unit<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }

        fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
            let mut kept = serde_json::Map::new();
            while let Some(key) = map.next_key::<String>()? {
                let key_is = |names: &[&str]| names.contains(&key.as_str());
                if key_is(&["nodeName", "serviceAccountName"])
                    || key_is(&pod_references::SPEC_FIELDS)
                {
                    let value = map.next_value()?;
                    kept.insert(key, value);
                } else if key_is(&pod_references::CONTAINER_LISTS) {
                    let list: Option<Vec<Environment>> = map.next_value()?;
                    let list = list.into_iter().flatten().map(Environment::into_tree);
                    kept.insert(key, Value::Array(list.collect()));
                } else {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
            Ok(Value::Object(kept))
        }
    }
    d.deserialize_any(Referencing)
}

/// A container's environment ([`pod_references::CONTAINER_FIELDS`]), the only part of it
/// that names other objects.
#[derive(Debug, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
struct Environment {
    env: Value,
    env_from: Value,
}

impl Environment {
    fn into_tree(self) -> Value {
        let [env, env_from] = pod_references::CONTAINER_FIELDS;
        serde_json::json!({env: self.env, env_from: self.env_from})
    }
}

impl GraphPod {
    /// The secrets, config maps, claims and account the pod uses; the secrets and config
    /// maps as NodeRestriction and the ServiceAccount plugin see them
    /// (`capstan_api::pod_references`).
    pub(crate) fn refs(&self) -> PodRefs {
        let spec = &self.spec;
        let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
        let owned = |names: Vec<&str>| names.into_iter().map(String::from).collect();
        let mut refs = PodRefs {
            node: text(&spec["nodeName"]),
            service_account: text(&spec["serviceAccountName"]),
            secrets: owned(pod_references::secret_names(spec)),
            config_maps: owned(pod_references::config_map_names(spec)),
            ..Default::default()
        };
        let pod_name = &self.metadata.name;
        for volume in spec["volumes"].as_array().into_iter().flatten() {
            let claim = if volume["ephemeral"].is_object() {
                format!("{pod_name}-{}", text(&volume["name"]))
            } else {
                text(&volume["persistentVolumeClaim"]["claimName"])
            };
            push(&mut refs.claims, Some(&claim));
        }
        for status in self
            .status
            .resource_claim_statuses
            .as_array()
            .into_iter()
            .flatten()
        {
            push(
                &mut refs.resource_claims,
                Some(&text(&status["resourceClaimName"])),
            );
        }
        refs
    }
}

/// The secrets (namespace, name) a persistent volume names; a reference without a
/// namespace is in the namespace of the claim the volume is bound to.
pub(crate) fn volume_secrets(volume: &Value) -> Vec<(String, String)> {
    let claim_ns = volume["spec"]["claimRef"]["namespace"]
        .as_str()
        .unwrap_or_default();
    let mut out = Vec::new();
    let Some(spec) = volume["spec"].as_object() else {
        return out;
    };
    for source in spec.values().filter_map(Value::as_object) {
        for (key, value) in source {
            let (ns, name) = if key.ends_with("ecretRef") {
                (value["namespace"].as_str(), value["name"].as_str())
            } else if key == "secretName" {
                (source["secretNamespace"].as_str(), value.as_str())
            } else {
                continue;
            };
            let Some(name) = name.filter(|n| !n.is_empty()) else {
                continue;
            };
            let ns = ns.filter(|n| !n.is_empty()).unwrap_or(claim_ns);
            let pair = (ns.to_string(), name.to_string());
            if !out.contains(&pair) {
                out.push(pair);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_pods_references_are_found_wherever_they_are() {
        let pod = json!({
            "metadata": {"name": "web", "namespace": "apps"},
            "spec": {
                "nodeName": "n1", "serviceAccountName": "runner",
                "imagePullSecrets": [{"name": "pull"}],
                "containers": [{"name": "c", "image": "i",
                    "env": [{"name": "A", "valueFrom": {"secretKeyRef": {"name": "env-secret", "key": "k"}}},
                            {"name": "B", "valueFrom": {"configMapKeyRef": {"name": "env-map", "key": "k"}}}],
                    "envFrom": [{"configMapRef": {"name": "all-map"}}]}],
                "initContainers": [{"name": "i", "image": "i",
                    "envFrom": [{"secretRef": {"name": "init-secret"}}]}],
                "ephemeralContainers": [{"name": "debug", "image": "i", "env": null,
                    "envFrom": [{"secretRef": {"name": "debug-secret"}}]}],
                "volumes": [
                    {"name": "s", "secret": {"secretName": "vol-secret"}},
                    {"name": "m", "configMap": {"name": "vol-map"}},
                    {"name": "d", "persistentVolumeClaim": {"claimName": "data"}},
                    {"name": "e", "ephemeral": {"volumeClaimTemplate": {"spec": {}}}},
                    {"name": "p", "projected": {"sources": [
                        {"secret": {"name": "proj-secret"}}, {"configMap": {"name": "proj-map"}}]}},
                    {"name": "x", "csi": {"driver": "d", "nodePublishSecretRef": {"name": "csi-secret"}}},
                    {"name": "f", "azureFile": {"secretName": "azure-secret", "shareName": "s"}},
                ],
            },
        });
        // Parsed from bytes, as the watch delivers pods.
        let refs = serde_json::from_slice::<GraphPod>(&serde_json::to_vec(&pod).unwrap())
            .unwrap()
            .refs();
        assert_eq!(refs.node, "n1");
        assert_eq!(refs.service_account, "runner");
        let mut secrets = refs.secrets.clone();
        secrets.sort();
        assert_eq!(
            secrets,
            [
                "azure-secret",
                "csi-secret",
                "debug-secret",
                "env-secret",
                "init-secret",
                "proj-secret",
                "pull",
                "vol-secret"
            ]
        );
        let mut maps = refs.config_maps.clone();
        maps.sort();
        assert_eq!(maps, ["all-map", "env-map", "proj-map", "vol-map"]);
        assert_eq!(refs.claims, ["data", "web-e"]);
    }

    #[test]
    fn a_pod_without_a_spec_references_nothing() {
        for body in [
            r#"{"metadata": {"name": "p"}, "spec": null}"#,
            r#"{"metadata": {"name": "p"}, "spec": {"containers": null, "volumes": null}}"#,
        ] {
            let refs = serde_json::from_str::<GraphPod>(body).unwrap().refs();
            assert!(refs.node.is_empty() && refs.secrets.is_empty() && refs.claims.is_empty());
        }
    }

    #[test]
    fn a_volumes_secrets_default_to_its_claims_namespace() {
        let volume = json!({"metadata": {"name": "pv"}, "spec": {
            "claimRef": {"namespace": "apps", "name": "data"},
            "csi": {"driver": "d", "volumeHandle": "h",
                "nodeStageSecretRef": {"name": "stage", "namespace": "storage"},
                "nodePublishSecretRef": {"name": "publish"}},
            "capacity": {"storage": "1Gi"},
        }});
        let mut found = volume_secrets(&volume);
        found.sort();
        assert_eq!(
            found,
            [
                ("apps".to_string(), "publish".to_string()),
                ("storage".into(), "stage".into())
            ]
        );
    }
}
