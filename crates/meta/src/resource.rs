//! What a resource is to the server: its descriptor (names, scope, verbs) and its strategy
//! (defaulting, validation, update rules). Adding a resource type is one registration of a
//! [`Strategy`]; routes, discovery, OpenAPI, storage keys and codecs follow from it.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::field::FieldErrors;
use crate::validation;

/// The verbs a collection of this resource serves.
pub const STANDARD_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// Names, scope and verbs of a served resource, as discovery and routing need them.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ResourceDescriptor {
    /// API group; empty for the core group.
    pub group: String,
    /// API version, e.g. `v1`.
    pub version: String,
    /// Kind, e.g. `StorageClass`.
    pub kind: String,
    /// Plural resource name used in paths, e.g. `storageclasses`.
    pub resource: String,
    /// The subresource (`status`, `binding`, ...), empty for the resource itself.
    pub subresource: String,
    /// Singular name, e.g. `storageclass`.
    pub singular: String,
    /// Short names kubectl accepts, e.g. `sc`.
    pub short_names: Vec<String>,
    /// Categories (e.g. `all`) for kubectl.
    pub categories: Vec<String>,
    /// Whether objects live in namespaces.
    pub namespaced: bool,
    /// Served verbs.
    pub verbs: Vec<String>,
    /// The labels its field selectors accept.
    pub field_labels: crate::FieldLabels,
    /// The columns of its Table; empty for the default table (Name, Created At).
    pub columns: Vec<crate::columns::Column>,
    /// The group and version of `kind` when they are not the resource's own (a workload's
    /// `scale` answers `autoscaling/v1` Scales).
    pub response_group_version: Option<(String, String)>,
    /// The warning every request to a deprecated resource gets, in upstream's words
    /// (`v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice`).
    pub deprecation: Option<String>,
    /// Whether a CustomResourceDefinition defines the resource: it takes no strategic merge
    /// patch and has no protobuf form.
    pub custom: bool,
}

impl ResourceDescriptor {
    /// `group/version`, or `version` alone for the core group.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The kind of the list, e.g. `StorageClassList`.
    pub fn list_kind(&self) -> String {
        format!("{}List", self.kind)
    }

    /// The group and resource, for error messages.
    pub fn group_resource(&self) -> crate::GroupResource {
        crate::GroupResource::new(self.group.clone(), self.resource.clone())
    }

    /// The name discovery lists: `pods`, or `pods/status` for a subresource.
    pub fn path_name(&self) -> String {
        if self.subresource.is_empty() {
            self.resource.clone()
        } else {
            format!("{}/{}", self.resource, self.subresource)
        }
    }

    /// The same resource's `subresource`, serving `verbs` with objects of `kind`.
    pub fn subresource(&self, subresource: &str, kind: &str, verbs: &[&str]) -> Self {
        Self {
            subresource: subresource.into(),
            kind: kind.into(),
            verbs: verbs.iter().map(|v| v.to_string()).collect(),
            short_names: Vec::new(),
            categories: Vec::new(),
            field_labels: Default::default(),
            columns: Vec::new(),
            ..self.clone()
        }
    }

    /// `selector` with its labels resolved to the fields they select, or upstream's
    /// 400 for the first label this resource does not support.
    pub fn resolve_field_selector<'a>(
        &self,
        selector: &'a crate::FieldSelector,
    ) -> Result<std::borrow::Cow<'a, crate::FieldSelector>, crate::ApiError> {
        match self.field_labels.resolve(selector) {
            Ok(None) => Ok(std::borrow::Cow::Borrowed(selector)),
            Ok(Some(resolved)) => Ok(std::borrow::Cow::Owned(resolved)),
            Err(label) => Err(crate::ApiError::bad_request(
                self.field_labels
                    .refusal_message(label, &self.api_version(), &self.kind),
            )),
        }
    }

    /// Whether `verb` is served.
    pub fn serves(&self, verb: &str) -> bool {
        self.verbs.iter().any(|v| v == verb)
    }
}

/// Standard object metadata, read and written: every upstream type has it (through
/// `k8s_openapi::Metadata`), and so do custom objects, whose kind is known only at run time.
pub trait HasMetadata {
    /// The object's metadata.
    fn metadata(&self) -> &ObjectMeta;
    /// The object's metadata, to change.
    fn metadata_mut(&mut self) -> &mut ObjectMeta;
}

impl<T: k8s_openapi::Metadata<Ty = ObjectMeta>> HasMetadata for T {
    fn metadata(&self) -> &ObjectMeta {
        k8s_openapi::Metadata::metadata(self)
    }

    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        k8s_openapi::Metadata::metadata_mut(self)
    }
}

/// The typed object a strategy handles: an upstream resource type, or a custom object, with
/// standard metadata.
pub trait ApiObject:
    HasMetadata + Serialize + DeserializeOwned + Clone + PartialEq + Send + Sync + 'static
{
}

impl<T> ApiObject for T where
    T: HasMetadata + Serialize + DeserializeOwned + Clone + PartialEq + Send + Sync + 'static
{
}

/// How the generic store treats one resource type. Every method has the upstream meaning of
/// the same-named strategy hook; the defaults suit most types.
pub trait Strategy: Send + Sync + 'static {
    /// The typed object.
    type Object: ApiObject;

    /// Names, scope and verbs.
    fn descriptor(&self) -> ResourceDescriptor;

    /// Whether strategic merge patches apply (custom resources have no patch strategies,
    /// and refuse them as upstream does).
    fn strategic_merge(&self) -> bool {
        true
    }

    /// Removes from a decoded object the fields its type does not declare (custom resources
    /// prune by their schema) and returns their paths, reported as unknown fields.
    fn prune(&self, _obj: &mut Self::Object) -> Vec<String> {
        Vec::new()
    }

    /// Fills defaults, as upstream does when it decodes any write (create, update, patch).
    fn default(&self, _obj: &mut Self::Object) {}

    /// Adjusts an object read from storage, before it is served or changed: custom resources
    /// fill the defaults their schema has now, as upstream defaults on read. Nothing else
    /// changes on read.
    fn on_read(&self, _obj: &mut Self::Object) {}

    /// Clears or sets fields on create (e.g. status) before validation.
    fn prepare_for_create(&self, _obj: &mut Self::Object) {}

    /// [`Strategy::prepare_for_create`], with the warnings preparing gives (a pod's
    /// deprecated AppArmor annotations, warned about as they become fields).
    fn prepare_for_create_warned(&self, obj: &mut Self::Object) -> Vec<String> {
        self.prepare_for_create(obj);
        Vec::new()
    }

    /// Carries over or resets fields on update (e.g. status) before validation.
    fn prepare_for_update(&self, _new: &mut Self::Object, _old: &Self::Object) {}

    /// Checks a new object (metadata is checked by the store).
    fn validate(&self, obj: &Self::Object) -> FieldErrors;

    /// Checks an update: the new object itself and what may not change.
    fn validate_update(&self, new: &Self::Object, old: &Self::Object) -> FieldErrors;

    /// Warnings about a valid object written (`old` is the stored one on update): deprecated
    /// fields, likely mistakes. They go back with the answer as `Warning` headers.
    fn warnings(&self, _new: &Self::Object, _old: Option<&Self::Object>) -> Vec<String> {
        Vec::new()
    }

    /// The rule object names must follow.
    fn name_rule(&self) -> fn(&str) -> Vec<String> {
        validation::dns1123_subdomain
    }

    /// Whether PUT of a missing object creates it.
    fn allow_create_on_update(&self) -> bool {
        false
    }

    /// The value of a selectable field beyond `metadata.name`/`metadata.namespace`, or `None`
    /// when the field is not selectable.
    fn field(&self, _obj: &Self::Object, _field: &str) -> Option<String> {
        None
    }

    /// Whether the type has a `status` subresource: writes to the resource keep the stored
    /// status, and writes to `<resource>/status` change only the status.
    fn has_status(&self) -> bool {
        false
    }

    /// Copies the status of `from` into `to` (for the `status` subresource).
    fn copy_status(&self, _to: &mut Self::Object, _from: &Self::Object) {}

    /// Copies what an `approval` subresource writes (CertificateSigningRequests' approval
    /// conditions) from `from` into `to`.
    fn copy_approval(&self, _to: &mut Self::Object, _from: &Self::Object) {}

    /// The metadata a write through `status` or `approval` stores, from the `sent` and the
    /// `stored` metadata. Upstream's built-in kinds take the sent metadata (a controller
    /// writes annotations and finalizers with the status: the deployment controller's
    /// revision annotation), some putting part of the stored one back; custom resources keep
    /// the stored metadata. The system fields (uid, creation and deletion) are guarded after.
    fn status_metadata(&self, sent: &ObjectMeta, _stored: &ObjectMeta) -> ObjectMeta {
        sent.clone()
    }

    /// Copies what a `resize` subresource writes (a pod's containers' resources and resize
    /// policies) from `from` into `to`.
    fn copy_resize(&self, _to: &mut Self::Object, _from: &Self::Object) {}

    /// Checks an update made through the `resize` subresource.
    fn validate_resize_update(&self, new: &Self::Object, old: &Self::Object) -> FieldErrors {
        self.validate_update(new, old)
    }

    /// Copies what an `ephemeralcontainers` subresource writes (a pod's
    /// `spec.ephemeralContainers`) from `from` into `to`.
    fn copy_ephemeral_containers(&self, _to: &mut Self::Object, _from: &Self::Object) {}

    /// Checks an update made through the `ephemeralcontainers` subresource.
    fn validate_ephemeral_containers_update(
        &self,
        new: &Self::Object,
        old: &Self::Object,
    ) -> FieldErrors {
        self.validate_update(new, old)
    }

    /// The grace period of a delete (`requested` is the client's `gracePeriodSeconds`): a
    /// positive value keeps the object, marked with a deletionTimestamp that many seconds
    /// ahead, until something finishes it (upstream's graceful deletion of bound pods);
    /// 0 deletes at once.
    fn grace_period(&self, _obj: &Self::Object, _requested: Option<i64>) -> i64 {
        0
    }

    /// Whether a deleted object must wait for its own finalization besides
    /// `metadata.finalizers` (a namespace's `spec.finalizers`): it is kept, marked deleting,
    /// until this turns false.
    fn awaits_finalization(&self, _obj: &Self::Object) -> bool {
        false
    }

    /// Why this object may not be deleted at all (a 403), e.g. the `default` namespace.
    fn forbid_delete(&self, _obj: &Self::Object) -> Option<String> {
        None
    }

    /// Changes made when deletion starts and the object is kept (a namespace turns
    /// `Terminating`).
    fn prepare_for_delete(&self, _obj: &mut Self::Object) {}

    /// Whether a delete that removes the object at once answers with the object (upstream's
    /// `ReturnDeletedObject`: pods, services, namespaces, …) rather than a `Status` of
    /// success naming it. An object that stays to be finalized is always answered.
    fn returns_deleted_object(&self) -> bool {
        false
    }

    /// Whether deletes are graceful (pods): even one without a grace period first marks the
    /// object deleting (stored, so watchers see it) before it is removed.
    fn deletes_gracefully(&self) -> bool {
        false
    }

    /// Whether the kind is deleted by its own rules upstream (namespaces,
    /// CustomResourceDefinitions): a kept object gets its deletionTimestamp only, no
    /// `deletionGracePeriodSeconds` and no new generation.
    fn own_deletion_rules(&self) -> bool {
        false
    }

    /// Whether a delete that names no propagation policy orphans dependents (upstream keeps
    /// this for core `v1` ReplicationControllers and `batch/v1` Jobs; every other kind
    /// deletes them in the background).
    fn orphans_by_default(&self) -> bool {
        false
    }
}
