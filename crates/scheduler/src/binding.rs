//! DefaultBinder: binds a pod by creating its `binding` subresource, as upstream's does.

use k8s_openapi::api::core::v1::{Binding, ObjectReference, Pod};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::framework::{Bind, BindContext, BindOutcome, BoxFuture, PodInfo};

/// The DefaultBinder plugin.
#[derive(Debug, Clone, Copy, Default)]
pub struct DefaultBinder;

impl Bind for DefaultBinder {
    fn name(&self) -> &'static str {
        "DefaultBinder"
    }

    fn bind<'a>(
        &'a self,
        cx: &'a dyn BindContext,
        pod: &'a PodInfo,
        node: &'a str,
    ) -> BoxFuture<'a, BindOutcome> {
        Box::pin(async move {
            let meta = &pod.pod.metadata;
            let ns = meta.namespace.as_deref();
            let name = meta.name.as_deref().unwrap_or("");
            let binding = Binding {
                metadata: ObjectMeta {
                    name: Some(name.into()),
                    namespace: ns.map(str::to_string),
                    uid: meta.uid.clone(),
                    ..Default::default()
                },
                target: ObjectReference {
                    kind: Some("Node".into()),
                    name: Some(node.into()),
                    ..Default::default()
                },
            };
            match cx
                .client()
                .create_subresource::<Pod, _>(ns, name, "binding", &binding)
                .await
            {
                Ok(_) => BindOutcome::Bound,
                // Bound already, or gone: nothing more to do for this pod.
                Err(e) if matches!(e.code(), Some(404 | 409)) => BindOutcome::Gone,
                Err(e) => BindOutcome::Failed(e.to_string()),
            }
        })
    }
}
