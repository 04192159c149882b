//! `RuntimeClass`: a pod naming a RuntimeClass gets its overhead and scheduling constraints
//! (node selector, tolerations); a missing class, or a pod stating another overhead, is
//! refused. (Upstream checks the overhead again in the validating phase; no plugin built
//! here changes it after this one, so the mutating phase alone decides, and pod creates pay
//! for no second serialization.)

use std::any::Any;
use std::sync::Arc;

use async_trait::async_trait;
use capstan_meta::{ApiError, GroupResource};
use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

use super::forbidden;
use crate::attributes::{Attributes, Operation};
use crate::chain::{Lister, Plugin};

/// The `RuntimeClass` plugin.
pub struct RuntimeClass {
    lister: Arc<dyn Lister>,
}

impl RuntimeClass {
    /// Reads RuntimeClasses through `lister`.
    pub fn new(lister: Arc<dyn Lister>) -> Self {
        Self { lister }
    }

    async fn class(&self, a: &Attributes) -> Result<Option<Value>, ApiError> {
        let Some(name) = a
            .object
            .as_ref()
            .and_then(|p| p["spec"]["runtimeClassName"].as_str())
        else {
            return Ok(None);
        };
        if name.is_empty() {
            return Ok(None);
        }
        let class = self
            .lister
            .get(
                &GroupResource::new("node.k8s.io", "runtimeclasses"),
                "",
                name,
            )
            .await?;
        match class {
            Some(class) => Ok(Some(class)),
            None => Err(forbidden(
                a,
                &format!("pod rejected: RuntimeClass {name:?} not found"),
            )),
        }
    }
}

fn is_pod_create(operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
    operation == Operation::Create
        && resource.group.is_empty()
        && resource.resource == "pods"
        && subresource.is_empty()
}

#[async_trait]
impl Plugin for RuntimeClass {
    fn name(&self) -> &'static str {
        "RuntimeClass"
    }

    fn admits(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        is_pod_create(operation, resource, subresource)
    }

    /// A pod naming no class is left as it is, typed or not.
    fn admits_typed(&self, _: &Attributes, object: &dyn Any) -> bool {
        object.downcast_ref::<Pod>().is_some_and(|pod| {
            pod.spec
                .as_ref()
                .and_then(|s| s.runtime_class_name.as_deref())
                .is_none_or(str::is_empty)
        })
    }

    async fn admit(&self, a: &mut Attributes) -> Result<(), ApiError> {
        let Some(class) = self.class(a).await? else {
            return Ok(());
        };
        let mut conflict = None;
        if let Some(pod) = a.object.as_mut() {
            let overhead = &class["overhead"]["podFixed"];
            if overhead.is_object() {
                let given = &pod["spec"]["overhead"];
                if !given.is_null() && given != overhead {
                    return Err(forbidden(
                        a,
                        "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead",
                    ));
                }
                pod["spec"]["overhead"] = overhead.clone();
            }
            let scheduling = &class["scheduling"];
            if let Some(selector) = scheduling["nodeSelector"].as_object() {
                if !pod["spec"]["nodeSelector"].is_object() {
                    pod["spec"]["nodeSelector"] = json!({});
                }
                if let Some(own) = pod["spec"]["nodeSelector"].as_object_mut() {
                    for (k, v) in selector {
                        match own.get(k) {
                            Some(existing) if existing != v => {
                                conflict = Some(format!(
                                    "conflict: runtimeClass.scheduling.nodeSelector[{k}] = {}; pod.spec.nodeSelector[{k}] = {}",
                                    v.as_str().unwrap_or_default(),
                                    existing.as_str().unwrap_or_default()
                                ));
                            }
                            Some(_) => {}
                            None => {
                                own.insert(k.clone(), v.clone());
                            }
                        }
                    }
                }
            }
            if let Some(tolerations) = scheduling["tolerations"].as_array() {
                if !pod["spec"]["tolerations"].is_array() {
                    pod["spec"]["tolerations"] = json!([]);
                }
                if let Some(own) = pod["spec"]["tolerations"].as_array_mut() {
                    for t in tolerations {
                        if !own.contains(t) {
                            own.push(t.clone());
                        }
                    }
                }
            }
        }
        match conflict {
            Some(why) => Err(forbidden(a, &why)),
            None => Ok(()),
        }
    }
}
