//! `PodTolerationRestriction`: a namespace's (or the configuration's) default tolerations join
//! a new pod's, and its whitelist bounds what pods may tolerate; pods that are not
//! BestEffort tolerate memory pressure.

use std::sync::Arc;

use async_trait::async_trait;
use capstan_meta::{ApiError, GroupResource};
use serde_json::{Value, json};

use super::{core, forbidden};
use crate::attributes::{Attributes, Operation};
use crate::chain::{Lister, Plugin};
use crate::error::{Error, Result};

const DEFAULTS: &str = "scheduler.alpha.kubernetes.io/defaultTolerations";
const WHITELIST: &str = "scheduler.alpha.kubernetes.io/tolerationsWhitelist";
const MEMORY_PRESSURE: &str = "node.kubernetes.io/memory-pressure";

/// The `PodTolerationRestriction` plugin.
pub struct PodTolerationRestriction {
    lister: Arc<dyn Lister>,
    default: Vec<Value>,
    whitelist: Vec<Value>,
}

fn field(t: &Value, name: &str) -> String {
    t[name].as_str().unwrap_or_default().to_string()
}

/// Whether toleration `wide` tolerates everything `narrow` does.
fn covers(wide: &Value, narrow: &Value) -> bool {
    let (wk, nk) = (field(wide, "key"), field(narrow, "key"));
    let (we, ne) = (field(wide, "effect"), field(narrow, "effect"));
    let exists = field(wide, "operator") == "Exists";
    (wk.is_empty() && exists || wk == nk)
        && (we.is_empty() || we == ne)
        && (exists
            || (field(narrow, "operator") != "Exists"
                && field(wide, "value") == field(narrow, "value")))
}

/// `ours` with the `more` tolerations none of `ours` already covers.
fn merge(ours: &mut Vec<Value>, more: &[Value]) {
    for t in more {
        if !ours.iter().any(|o| {
            covers(o, t)
                || (field(o, "key") == field(t, "key") && field(o, "effect") == field(t, "effect"))
        }) {
            ours.push(t.clone());
        }
    }
}

fn best_effort(pod: &Value) -> bool {
    ["initContainers", "containers"].iter().all(|list| {
        pod["spec"][*list]
            .as_array()
            .into_iter()
            .flatten()
            .all(|c| {
                ["requests", "limits"]
                    .iter()
                    .all(|k| c["resources"][*k].as_object().is_none_or(|m| m.is_empty()))
            })
    })
}

impl PodTolerationRestriction {
    /// From the plugin's configuration (`default` and `whitelist` toleration lists).
    pub fn new(lister: Arc<dyn Lister>, config: Option<&Value>) -> Result<Self> {
        let list = |name: &str| -> Result<Vec<Value>> {
            match config.map(|c| &c[name]) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Array(items)) => Ok(items.clone()),
                Some(_) => Err(Error::Plugin {
                    plugin: "PodTolerationRestriction",
                    reason: format!("{name}: not a list of tolerations"),
                }),
            }
        };
        Ok(Self {
            lister,
            default: list("default")?,
            whitelist: list("whitelist")?,
        })
    }

    /// A namespace annotation's tolerations, or `None` when the namespace has no such annotation.
    async fn annotation(
        &self,
        a: &Attributes,
        key: &str,
    ) -> std::result::Result<Option<Vec<Value>>, ApiError> {
        let namespace = self
            .lister
            .get(&core("namespaces"), "", &a.namespace)
            .await?;
        let Some(text) = namespace
            .as_ref()
            .and_then(|ns| ns["metadata"]["annotations"][key].as_str())
        else {
            return Ok(None);
        };
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Array(items)) => Ok(Some(items)),
            _ => Err(forbidden(
                a,
                &format!("the namespace's {key} annotation is not a JSON list of tolerations"),
            )),
        }
    }
}

fn is_pods(resource: &GroupResource, subresource: &str) -> bool {
    resource.group.is_empty() && resource.resource == "pods" && subresource.is_empty()
}

#[async_trait]
impl Plugin for PodTolerationRestriction {
    fn name(&self) -> &'static str {
        "PodTolerationRestriction"
    }

    fn admits(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        operation == Operation::Create && is_pods(resource, subresource)
    }

    fn validates(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        matches!(operation, Operation::Create | Operation::Update) && is_pods(resource, subresource)
    }

    async fn admit(&self, a: &mut Attributes) -> std::result::Result<(), ApiError> {
        let defaults = self
            .annotation(a, DEFAULTS)
            .await?
            .unwrap_or_else(|| self.default.clone());
        let Some(pod) = a.object.as_mut() else {
            return Ok(());
        };
        let mut tolerations = pod["spec"]["tolerations"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        merge(&mut tolerations, &defaults);
        if !best_effort(pod) {
            merge(
                &mut tolerations,
                &[json!({"key": MEMORY_PRESSURE, "operator": "Exists", "effect": "NoSchedule"})],
            );
        }
        if !tolerations.is_empty() {
            pod["spec"]["tolerations"] = Value::Array(tolerations);
        }
        Ok(())
    }

    async fn validate(&self, a: &Attributes) -> std::result::Result<(), ApiError> {
        let whitelist = self
            .annotation(a, WHITELIST)
            .await?
            .unwrap_or_else(|| self.whitelist.clone());
        if whitelist.is_empty() {
            return Ok(());
        }
        let Some(pod) = &a.object else {
            return Ok(());
        };
        let allowed = pod["spec"]["tolerations"]
            .as_array()
            .into_iter()
            .flatten()
            .all(|t| whitelist.iter().any(|w| covers(w, t)));
        if allowed {
            Ok(())
        } else {
            Err(forbidden(
                a,
                "pod tolerations (possibly merged with namespace default tolerations) conflict with its namespace whitelist",
            ))
        }
    }
}
