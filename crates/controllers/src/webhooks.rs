//! Keeps the admission webhook index current: every Mutating- and
//! ValidatingWebhookConfiguration is listed, then followed through the watch caches.

use std::sync::Arc;

use capstan_admission_webhook::{Kind, WebhookIndex};
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
