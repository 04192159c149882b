//! The forms a resource is served in: the group, version, resource and kind of each API
//! version (and group) whose objects share one storage, and the conversions between them.
//! Webhooks and policies name the versions they want to see; admission runs on the stored
//! form and converts for them (upstream's `matchPolicy` and versioned attributes).

use async_trait::async_trait;
use capstan_meta::ApiError;
use serde_json::Value;

/// One group, version, resource and subresource a stored resource is served as, with the
/// kind its objects have there.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct Form {
    /// The API group (empty for the core group).
    pub group: String,
    /// The API version.
    pub version: String,
    /// The plural resource name.
    pub resource: String,
    /// The subresource (`status`), empty for the resource itself.
    pub subresource: String,
    /// The kind of the objects in this form.
    pub kind: String,
}

/// The forms of one stored resource and the conversions between its stored form and each.
#[async_trait]
pub trait Forms: Send + Sync + std::fmt::Debug {
    /// The forms `subresource` (empty: the resource) is served in: the stored form first,
    /// then the others in the order they were served.
    fn served(&self, subresource: &str) -> Vec<Form>;

    /// `object`, in the stored form, as `form` has it.
    async fn to_form(&self, object: Value, form: &Form) -> Result<Value, ApiError>;

    /// `object`, in `form`, back in the stored form.
    async fn back_from_form(&self, object: Value, form: &Form) -> Result<Value, ApiError>;
}
