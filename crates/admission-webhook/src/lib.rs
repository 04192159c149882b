//! Admission webhooks: the `MutatingAdmissionWebhook` and `ValidatingAdmissionWebhook`
//! plugins of the admission chain.
//!
//! - [`WebhookIndex`]: every webhook of the Mutating- and ValidatingWebhookConfigurations,
//!   compiled (rules, selectors, CEL match conditions, an HTTPS client trusting the
//!   `caBundle`) as the watch cache delivers them; requests read a snapshot.
//! - [`MutatingWebhooks`] and [`ValidatingWebhooks`]: the plugins. A request is matched
//!   against each webhook (rules and scope, namespace and object selectors, match
//!   conditions), sent as an `admission.k8s.io` AdmissionReview (`v1` or `v1beta1`), and the
//!   answer applied: a JSONPatch, a denial, warnings, audit annotations. Mutating webhooks
//!   run in order (and again, once, when `reinvocationPolicy: IfNeeded` asks); validating
//!   webhooks run in parallel.
//! - [`ValidatingAdmissionPolicies`]: the `ValidatingAdmissionPolicy` plugin, CEL
//!   validations of ValidatingAdmissionPolicies evaluated in process, compiled into a
//!   [`PolicyIndex`] as their objects change.
//! - [`MutatingAdmissionPolicies`]: the `MutatingAdmissionPolicy` plugin, CEL mutations
//!   (apply configurations and JSON patches) of MutatingAdmissionPolicies, compiled into a
//!   [`MutatingPolicyIndex`].
//! - [`ImagePolicyWebhook`]: pods' images reviewed by a backend named in the plugin's
//!   configuration.

mod dispatch;
mod image_policy;
mod index;
mod matching;
mod mutating_policy;
mod policy;
mod review;

pub use dispatch::{MutatingWebhooks, ValidatingWebhooks};
pub use image_policy::ImagePolicyWebhook;
pub use index::{Kind, WebhookIndex};
pub use mutating_policy::{
    MutatingAdmissionPolicies, MutatingBinding, MutatingPolicy, MutatingPolicyIndex,
};
pub use policy::{
    Binding, Compiled, CompiledBinding, Index, Policy, PolicyIndex, PolicyKind,
    VALIDATION_FAILURE_ANNOTATION, ValidatingAdmissionPolicies,
};

/// How long admission waits for the webhook and policy configurations to be listed before it
/// refuses a request (upstream's 10 s).
const READY_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// Waits until `loaded` (the index's wait) returns, at most [`READY_WAIT`]; refuses `a` as
/// upstream does when the configurations are not known by then (admitting it would skip
/// every webhook and policy).
async fn wait_ready(
    loaded: impl std::future::Future<Output = ()>,
    a: &capstan_admission::Attributes,
) -> Result<(), capstan_meta::ApiError> {
    tokio::time::timeout(READY_WAIT, loaded).await.map_err(|_| {
        capstan_meta::ApiError::forbidden_because(
            &a.resource,
            &a.name,
            "not yet ready to handle request",
        )
    })
}
