//! Keeps the admission webhook index current: every Mutating- and
//! ValidatingWebhookConfiguration is listed, then followed through the watch caches; so is
//! every ValidatingAdmissionPolicy and binding for the policy index.

use std::sync::Arc;

use capstan_admission_webhook::{Kind, PolicyIndex, PolicyKind, WebhookIndex};
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

/// Starts following ValidatingAdmissionPolicies and their bindings into `index`.
pub fn start_policies(
    policies: Arc<dyn RestStorage>,
    bindings: Arc<dyn RestStorage>,
    index: Arc<PolicyIndex>,
) -> Vec<JoinHandle<()>> {
    let mut tasks = Vec::new();
    let (listing, applying) = (index.clone(), index.clone());
    tasks.extend(crate::watching::feed::<api::ValidatingAdmissionPolicy>(
        policies,
        move |generation| listing.listed(PolicyKind::Policy, generation),
        move |policy, deleted, generation| {
            if deleted {
                applying.remove(
                    PolicyKind::Policy,
                    policy.metadata.name.as_deref().unwrap_or(""),
                );
            } else {
                applying.put_policy(&policy, generation);
            }
        },
    ));
    let (listing, applying) = (index.clone(), index);
    tasks.extend(
        crate::watching::feed::<api::ValidatingAdmissionPolicyBinding>(
            bindings,
            move |generation| listing.listed(PolicyKind::Binding, generation),
            move |binding, deleted, generation| {
                if deleted {
                    applying.remove(
                        PolicyKind::Binding,
                        binding.metadata.name.as_deref().unwrap_or(""),
                    );
                } else {
                    applying.put_binding(&binding, generation);
                }
            },
        ),
    );
    tasks
}
