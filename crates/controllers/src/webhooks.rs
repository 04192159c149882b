//! Keeps the admission webhook index current: every Mutating- and
//! ValidatingWebhookConfiguration is listed, then followed through the watch caches; so is
//! every Validating- and MutatingAdmissionPolicy and binding for the policy indexes.

use std::sync::Arc;

use capstan_admission_webhook::{Compiled, CompiledBinding, Index, Kind, PolicyKind, WebhookIndex};
use capstan_registry::RestStorage;
use k8s_openapi::api::admissionregistration::v1 as api;
use tokio::task::JoinHandle;

/// Starts following both kinds of configuration into `index`.
pub fn start(
    mutating: Arc<dyn RestStorage>,
    validating: Arc<dyn RestStorage>,
    index: Arc<WebhookIndex>,
) -> Vec<JoinHandle<()>> {
    let mut tasks = Vec::new();
    let (listing, applying) = (index.clone(), index.clone());
    tasks.extend(crate::watching::feed::<api::MutatingWebhookConfiguration>(
        mutating,
        move |generation| listing.listed(Kind::Mutating, generation),
        move |config, deleted, generation| {
            if deleted {
                applying.remove(
                    Kind::Mutating,
                    config.metadata.name.as_deref().unwrap_or(""),
                );
            } else {
                applying.put_mutating(&config, generation);
            }
        },
    ));
    let (listing, applying) = (index.clone(), index);
    tasks.extend(
        crate::watching::feed::<api::ValidatingWebhookConfiguration>(
            validating,
            move |generation| listing.listed(Kind::Validating, generation),
            move |config, deleted, generation| {
                if deleted {
                    applying.remove(
                        Kind::Validating,
                        config.metadata.name.as_deref().unwrap_or(""),
                    );
                } else {
                    applying.put_validating(&config, generation);
                }
            },
        ),
    );
    tasks
}

/// Starts following admission policies of one kind (Validating- or Mutating-) and their
/// bindings into `index`.
pub fn start_policies<P, B>(
    policies: Arc<dyn RestStorage>,
    bindings: Arc<dyn RestStorage>,
    index: Arc<Index<P, B>>,
) -> Vec<JoinHandle<()>>
where
    P: Compiled<Source: Named>,
    B: CompiledBinding<Source: Named>,
{
    let mut tasks = Vec::new();
    let (listing, applying) = (index.clone(), index.clone());
    tasks.extend(crate::watching::feed::<P::Source>(
        policies,
        move |generation| listing.listed(PolicyKind::Policy, generation),
        move |policy, deleted, generation| {
            if deleted {
                applying.remove(PolicyKind::Policy, policy.name());
            } else {
                applying.put_policy(&policy, generation);
            }
        },
    ));
    let (listing, applying) = (index.clone(), index);
    tasks.extend(crate::watching::feed::<B::Source>(
        bindings,
        move |generation| listing.listed(PolicyKind::Binding, generation),
        move |binding, deleted, generation| {
            if deleted {
                applying.remove(PolicyKind::Binding, binding.name());
            } else {
                applying.put_binding(&binding, generation);
            }
        },
    ));
    tasks
}

/// An object of a followed kind: decodable, with a name.
pub trait Named: serde::de::DeserializeOwned + Default + Send + 'static {
    /// `metadata.name`.
    fn name(&self) -> &str;
}

impl<T> Named for T
where
    T: k8s_openapi::Metadata<Ty = k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta>
        + serde::de::DeserializeOwned
        + Default
        + Send
        + 'static,
{
    fn name(&self) -> &str {
        self.metadata().name.as_deref().unwrap_or("")
    }
}
