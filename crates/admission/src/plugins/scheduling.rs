//! Plugins that steer where pods run: `ExtendedResourceToleration` (pods asking for an
//! extended resource tolerate the taint of nodes that have it) and `PodNodeSelector` (the
//! namespace's node selector joins the pod's).

use std::collections::BTreeMap;
use std::sync::Arc;

use async_trait::async_trait;
use capstan_meta::{ApiError, GroupResource};
use serde_json::{Value, json};

use super::{core, forbidden};
use crate::attributes::{Attributes, Operation};
use crate::chain::{Lister, Plugin};
use crate::error::{Error, Result};

fn is_pod_create(operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
    operation == Operation::Create
        && resource.group.is_empty()
        && resource.resource == "pods"
        && subresource.is_empty()
}

/// Whether `name` is an extended resource: qualified by a domain other than kubernetes.io,
/// and not a quota's `requests.` name.
fn extended(name: &str) -> bool {
    let Some((domain, _)) = name.split_once('/') else {
        return false;
    };
    let kubernetes = domain == "kubernetes.io" || domain.ends_with(".kubernetes.io");
    !(kubernetes || name.starts_with("requests."))
}

/// `ExtendedResourceToleration`.
pub struct ExtendedResourceToleration;

#[async_trait]
impl Plugin for ExtendedResourceToleration {
    fn name(&self) -> &'static str {
        "ExtendedResourceToleration"
    }

    fn admits(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        is_pod_create(operation, resource, subresource)
    }

    async fn admit(&self, a: &mut Attributes) -> std::result::Result<(), ApiError> {
        let Some(pod) = a.object.as_mut() else {
            return Ok(());
        };
        let mut wanted: Vec<String> = Vec::new();
        for list in ["initContainers", "containers"] {
            for c in pod["spec"][list].as_array().into_iter().flatten() {
                for kind in ["requests", "limits"] {
                    for name in c["resources"][kind]
                        .as_object()
                        .into_iter()
                        .flatten()
                        .map(|(k, _)| k)
                    {
                        if extended(name) && !wanted.contains(name) {
                            wanted.push(name.clone());
                        }
                    }
                }
            }
        }
        if wanted.is_empty() {
            return Ok(());
        }
        wanted.sort();
        if !pod["spec"]["tolerations"].is_array() {
            pod["spec"]["tolerations"] = json!([]);
        }
        if let Some(tolerations) = pod["spec"]["tolerations"].as_array_mut() {
            for name in wanted {
                let toleration = json!({"key": name, "operator": "Exists", "effect": "NoSchedule"});
                if !tolerations.contains(&toleration) {
                    tolerations.push(toleration);
                }
            }
        }
        Ok(())
    }
}

const NODE_SELECTOR_ANNOTATION: &str = "scheduler.alpha.kubernetes.io/node-selector";

/// Parses `k=v,k2=v2` (empty: none).
fn parse_selector(text: &str) -> std::result::Result<BTreeMap<String, String>, String> {
    text.split(',')
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .map(|term| match term.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                Ok((k.trim().to_string(), v.trim().to_string()))
            }
            _ => Err(format!("{term:?} is not a key=value label selector term")),
        })
        .collect()
}

/// `PodNodeSelector`, with its configuration (`podNodeSelectorPluginConfig`: the
/// `clusterDefaultNodeSelector` and, per namespace, a whitelist selector).
pub struct PodNodeSelector {
    lister: Arc<dyn Lister>,
    cluster_default: BTreeMap<String, String>,
    whitelists: BTreeMap<String, BTreeMap<String, String>>,
}

impl PodNodeSelector {
    /// From the plugin's configuration (YAML or JSON as read from the configuration file).
    pub fn new(lister: Arc<dyn Lister>, config: Option<&Value>) -> Result<Self> {
        let bad = |reason: String| Error::Plugin {
            plugin: "PodNodeSelector",
            reason,
        };
        let mut cluster_default = BTreeMap::new();
        let mut whitelists = BTreeMap::new();
        if let Some(config) = config {
            let map = config["podNodeSelectorPluginConfig"]
                .as_object()
                .ok_or_else(|| {
                    bad("the configuration needs a podNodeSelectorPluginConfig map".into())
                })?;
            for (key, value) in map {
                let text = value
                    .as_str()
                    .ok_or_else(|| bad(format!("{key}: not a string")))?;
                let selector = parse_selector(text).map_err(|e| bad(format!("{key}: {e}")))?;
                if key == "clusterDefaultNodeSelector" {
                    cluster_default = selector;
                } else {
                    whitelists.insert(key.clone(), selector);
                }
            }
        }
        Ok(Self {
            lister,
            cluster_default,
            whitelists,
        })
    }
}

#[async_trait]
impl Plugin for PodNodeSelector {
    fn name(&self) -> &'static str {
        "PodNodeSelector"
    }

    fn admits(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        is_pod_create(operation, resource, subresource)
    }

    fn validates(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        is_pod_create(operation, resource, subresource)
    }

    async fn admit(&self, a: &mut Attributes) -> std::result::Result<(), ApiError> {
        let namespace = self
            .lister
            .get(&core("namespaces"), "", &a.namespace)
            .await?;
        let annotation = namespace
            .as_ref()
            .and_then(|ns| ns["metadata"]["annotations"][NODE_SELECTOR_ANNOTATION].as_str());
        let selector = match annotation {
            Some(text) => parse_selector(text).map_err(|e| forbidden(a, &e))?,
            None => self.cluster_default.clone(),
        };
        let Some(pod) = a.object.as_mut() else {
            return Ok(());
        };
        if !pod["spec"]["nodeSelector"].is_object() {
            pod["spec"]["nodeSelector"] = json!({});
        }
        let mut conflict = false;
        if let Some(own) = pod["spec"]["nodeSelector"].as_object_mut() {
            for (k, v) in &selector {
                match own.get(k).and_then(Value::as_str) {
                    Some(existing) if existing != v => conflict = true,
                    Some(_) => {}
                    None => {
                        own.insert(k.clone(), v.clone().into());
                    }
                }
            }
            if own.is_empty() {
                pod["spec"]["nodeSelector"] = Value::Null;
            }
        }
        if conflict {
            return Err(forbidden(
                a,
                "pod node label selector conflicts with its namespace node label selector",
            ));
        }
        Ok(())
    }

    async fn validate(&self, a: &Attributes) -> std::result::Result<(), ApiError> {
        let Some(whitelist) = self.whitelists.get(&a.namespace) else {
            return Ok(());
        };
        let Some(pod) = &a.object else {
            return Ok(());
        };
        let own = pod["spec"]["nodeSelector"].as_object();
        let outside = own
            .into_iter()
            .flatten()
            .any(|(k, v)| whitelist.get(k).map(String::as_str) != v.as_str());
        if outside {
            return Err(forbidden(
                a,
                "pod node label selector labels conflict with its namespace whitelist",
            ));
        }
        Ok(())
    }
}
