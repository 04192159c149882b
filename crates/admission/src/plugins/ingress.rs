//! `DefaultIngressClass`: an Ingress naming no class gets the default IngressClass
//! (`ingressclass.kubernetes.io/is-default-class: "true"`; of several, the newest).

use std::sync::Arc;

use async_trait::async_trait;
use capstan_meta::{ApiError, GroupResource};
use serde_json::Value;

use crate::attributes::{Attributes, Operation};
use crate::chain::{Lister, Plugin};

const DEFAULT_CLASS: &str = "ingressclass.kubernetes.io/is-default-class";
/// The deprecated annotation that names a class.
const CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";

/// The `DefaultIngressClass` plugin.
pub struct DefaultIngressClass {
    lister: Arc<dyn Lister>,
}

impl DefaultIngressClass {
    /// Reads IngressClasses through `lister`.
    pub fn new(lister: Arc<dyn Lister>) -> Self {
        Self { lister }
    }
}

#[async_trait]
impl Plugin for DefaultIngressClass {
    fn name(&self) -> &'static str {
        "DefaultIngressClass"
    }

    fn admits(&self, operation: Operation, resource: &GroupResource, subresource: &str) -> bool {
        operation == Operation::Create
            && subresource.is_empty()
            && resource.group == "networking.k8s.io"
            && resource.resource == "ingresses"
    }

    async fn admit(&self, a: &mut Attributes) -> Result<(), ApiError> {
        let Some(ingress) = &a.object else {
            return Ok(());
        };
        let named = !ingress["spec"]["ingressClassName"].is_null()
            || !ingress["metadata"]["annotations"][CLASS_ANNOTATION].is_null();
        if named {
            return Ok(());
        }
        let default = self
            .lister
            .list(
                &GroupResource::new("networking.k8s.io", "ingressclasses"),
                "",
            )
            .await?
            .into_iter()
            .filter(|c| c["metadata"]["annotations"][DEFAULT_CLASS] == "true")
            .max_by(|x, y| {
                let key = |c: &Value| {
                    (
                        c["metadata"]["creationTimestamp"]
                            .as_str()
                            .unwrap_or_default()
                            .to_string(),
                        std::cmp::Reverse(
                            c["metadata"]["name"]
                                .as_str()
                                .unwrap_or_default()
                                .to_string(),
                        ),
                    )
                };
                key(x).cmp(&key(y))
            });
        if let Some(name) = default
            .as_ref()
            .and_then(|c| c["metadata"]["name"].as_str())
            && let Some(ingress) = a.object.as_mut()
        {
            if !ingress["spec"].is_object() {
                ingress["spec"] = Value::Object(Default::default());
            }
            ingress["spec"]["ingressClassName"] = name.into();
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::MemoryLister;
    use capstan_auth::UserInfo;
    use serde_json::json;

    fn class(name: &str, created: &str, default: bool) -> Value {
        json!({"metadata": {"name": name, "creationTimestamp": created,
            "annotations": {DEFAULT_CLASS: if default { "true" } else { "false" }}}})
    }

    async fn admitted(plugin: &DefaultIngressClass, ingress: Value) -> Value {
        let mut a = Attributes::new(
            Operation::Create,
            GroupResource::new("networking.k8s.io", "ingresses"),
            UserInfo::default(),
        );
        a.object = Some(ingress);
        plugin.admit(&mut a).await.unwrap();
        a.object.unwrap()
    }

    #[tokio::test]
    async fn the_newest_default_class_is_given_to_ingresses_naming_none() {
        let classes = GroupResource::new("networking.k8s.io", "ingressclasses");
        let plugin = DefaultIngressClass::new(Arc::new(
            MemoryLister::new()
                .with(
                    classes.clone(),
                    "",
                    class("old", "2026-01-01T00:00:00Z", true),
                )
                .with(
                    classes.clone(),
                    "",
                    class("new", "2026-06-01T00:00:00Z", true),
                )
                .with(classes, "", class("other", "2026-09-01T00:00:00Z", false)),
        ));
        let got = admitted(&plugin, json!({"metadata": {"name": "web"}, "spec": {}})).await;
        assert_eq!(got["spec"]["ingressClassName"], "new");
        let named = admitted(
            &plugin,
            json!({"metadata": {"name": "web"}, "spec": {"ingressClassName": "other"}}),
        )
        .await;
        assert_eq!(named["spec"]["ingressClassName"], "other");
        let annotated = admitted(
            &plugin,
            json!({"metadata": {"name": "web",
            "annotations": {CLASS_ANNOTATION: "nginx"}}, "spec": {}}),
        )
        .await;
        assert!(annotated["spec"]["ingressClassName"].is_null());
    }
}
