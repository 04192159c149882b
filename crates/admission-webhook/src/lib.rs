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
//! - [`ImagePolicyWebhook`]: pods' images reviewed by a backend named in the plugin's
//!   configuration.

mod dispatch;
mod image_policy;
mod index;
mod matching;
mod policy;
mod review;

pub use dispatch::{MutatingWebhooks, ValidatingWebhooks};
pub use image_policy::ImagePolicyWebhook;
pub use index::{Kind, WebhookIndex};
pub use policy::{
    PolicyIndex, PolicyKind, VALIDATION_FAILURE_ANNOTATION, ValidatingAdmissionPolicies,
};
