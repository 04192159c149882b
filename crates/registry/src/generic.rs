//! The generic store: one implementation of every verb, for every resource, shaped by its
//! strategy.

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use capstan_meta::v1::{FieldsV1, ManagedFieldsEntry, ObjectMeta};
use capstan_meta::{
    ApiError, FieldError, GroupResource, Reason, ResourceDescriptor, Strategy, names, time,
    validation,
};
use capstan_storage::{KeyValue, ListRequest, Revision, Store};
use capstan_watch::{
    CachedJson, CachedObject, Decode, FieldNames, Fields, PrimedWrite, Priming, WatchCache,
    WatchCacheConfig,
};
use futures_util::StreamExt;

use crate::codec;
use crate::error::{Error, Result};
use crate::hooks::{Allocations, CreateHook, OnKind, Reserved, UpdateFieldCheck, WriteCheck};
use crate::kind::{self, AsJson, Foreign, KindJson, KindStrategy, Obj};
use crate::managed::{FieldTracker, put_managed_fields, take_managed_fields};
use crate::options::{
    ContinueToken, DeleteOptions, FieldValidation, GetOptions, ListOptions, ResourceVersionMatch,
    WriteOptions, parse_resource_version, resource_version,
};
use crate::patch::{self, PatchType};
use crate::rest::{Encoded, ResponseStatus, RestStorage, WatchOptions};
use crate::stored::{Plain, StorageCodec, Stored};
use crate::watching::{self, EventStream, StreamParams};
use capstan_admission::{Attributes, Operation, TypedObject};

/// How many times a write that lost a race is retried before the client gets a 409.
const MAX_RETRIES: usize = 16;
/// How many names are tried for one `generateName` before giving up.
const GENERATE_NAME_ATTEMPTS: usize = 8;
/// How long a read waits for a resourceVersion the server has not reached yet.
const FRESHNESS_WAIT: std::time::Duration = std::time::Duration::from_secs(3);
/// How often a reader waiting on the watch cache asks storage's watches for progress.
const PROGRESS_REQUEST_EVERY: std::time::Duration = std::time::Duration::from_millis(100);
/// Events a watch served from storage may have queued before it is ended as too slow.
const STORAGE_WATCH_QUEUE: usize = 1024;

/// The REST store of one resource type over the shared [`Store`]: the typed face of a
/// [`KindStore`], which does the work for every kind alike.
pub struct GenericStore<S: Strategy> {
    kind: KindStore,
    strategy: std::marker::PhantomData<fn() -> S>,
}

/// A store's verbs over objects of any kind, shaped by its [`KindStrategy`]: compiled once,
/// not once per kind (see [`crate::kind`]).
pub(crate) struct KindStore {
    strategy: Arc<dyn KindStrategy>,
    /// What does not depend on the object type, with the paths that need nothing else.
    core: StoreCore,
    create_hooks: Vec<Arc<dyn CreateHook<Obj>>>,
    write_checks: Vec<Arc<dyn WriteCheck<Obj>>>,
    update_field_checks: Vec<Arc<dyn UpdateFieldCheck<Obj>>>,
    /// Takes and gives back what objects claim from shared pools.
    allocations: Option<Arc<dyn Allocations<Obj>>>,
    /// The object type's decoders.
    json: KindJson,
}

/// `obj` as a JSON tree.
fn value_of(obj: &Obj) -> Result<serde_json::Value> {
    obj.to_value().map_err(Error::Encode)
}

/// What admission reads of an object, as JSON.
fn json_of(obj: &dyn AsJson) -> Result<serde_json::Value> {
    obj.as_json().map_err(Error::Encode)
}

/// The object a write replaces, as admission and managedFields read it: its tree is made
/// at most once per write and lent to each step that reads it.
struct Prior<'a> {
    object: &'a dyn AsJson,
    tree: Option<serde_json::Value>,
}

impl<'a> Prior<'a> {
    fn new(object: &'a dyn AsJson) -> Self {
        Prior { object, tree: None }
    }

    /// The tree, made now unless it was made before; give it back with [`Self::give_back`].
    fn lend(&mut self) -> Result<serde_json::Value> {
        match self.tree.take() {
            Some(tree) => {
                debug_assert!(
                    tree_of(&tree, self.object),
                    "a tree given back differs from the old object"
                );
                Ok(tree)
            }
            None => json_of(self.object),
        }
    }

    /// Takes back a tree [`Self::lend`] gave, unchanged.
    fn give_back(&mut self, tree: serde_json::Value) {
        self.tree = Some(tree);
    }
}

/// A write's new object lent to the mutating plugins in its typed form (see
/// [`TypedObject`]), with the tree made of it for managedFields: the first plugin that needs
/// a tree gets that one, unless a plugin changed the object before (then it is made anew).
struct Lent<'o> {
    obj: &'o mut Obj,
    tree: Option<serde_json::Value>,
    changed: bool,
}

impl TypedObject for Lent<'_> {
    fn as_any(&self) -> &dyn std::any::Any {
        self.obj.as_any()
    }

    fn as_any_mut(&mut self) -> &mut (dyn std::any::Any + Send) {
        self.changed = true;
        self.obj.as_any_mut()
    }

    fn to_tree(&mut self) -> std::result::Result<serde_json::Value, ApiError> {
        match self.tree.take() {
            Some(tree) if !self.changed => Ok(tree),
            _ => Ok(json_of(&*self.obj)?),
        }
    }
}

/// A subresource's object (a Binding, a Scale, ...) lent to the mutating plugins.
impl<T: serde::Serialize + Send + 'static> TypedObject for Foreign<T> {
    fn as_any(&self) -> &dyn std::any::Any {
        &self.0
    }

    fn as_any_mut(&mut self) -> &mut (dyn std::any::Any + Send) {
        &mut self.0
    }

    fn to_tree(&mut self) -> std::result::Result<serde_json::Value, ApiError> {
        Ok(serde_json::to_value(&self.0).map_err(Error::Encode)?)
    }
}

/// How the mutating phase left a write's object.
enum Admitted {
    /// No mutating plugin looks at the request.
    Skipped,
    /// The plugins changed the typed object, if anything, and made no tree of it.
    InPlace,
    /// A plugin needed the tree: the object as the plugins left it.
    Tree(serde_json::Value),
}

/// Whether `tree` is `object`'s, but for managedFields it may hold where the object has none
/// (see `KindStore::decode_base_tree`).
fn tree_of(tree: &serde_json::Value, object: &dyn AsJson) -> bool {
    let Ok(made) = json_of(object) else {
        return false;
    };
    if made
        .get("metadata")
        .and_then(|m| m.get("managedFields"))
        .is_some()
    {
        return *tree == made;
    }
    let mut bare = tree.clone();
    take_managed_fields(&mut bare);
    bare == made
}

/// `obj`'s JSON text.
fn bytes_of(obj: &Obj) -> Result<Vec<u8>> {
    obj.to_vec().map_err(Error::Encode)
}

/// The part of a [`GenericStore`] that does not depend on its object type: names, storage,
/// the watch cache and codecs, and the reads served from them (gets and lists from the cache,
/// freshness waits). Kept apart so that this code is compiled once, not once per kind (57
/// built-in kinds, and again in every crate that uses a typed store).
struct StoreCore {
    descriptor: ResourceDescriptor,
    gr: GroupResource,
    store: Arc<dyn Store>,
    prefix: String,
    schema: crate::rest::SchemaFn,
    /// Stored value → cache entry (served JSON, labels, selectable fields).
    decode: Decode,
    /// Lists and watches are served from here when present.
    cache: Option<WatchCache>,
    /// The admission chain writes pass.
    admission: Option<Arc<capstan_admission::Chain>>,
    /// The forms its objects are served in (its own, and converted versions').
    forms: Arc<crate::forms::StoreForms>,
    /// Deletes a deletecollection runs at once (`--delete-collection-workers`).
    delete_workers: usize,
    /// Keeps managedFields and runs server-side apply.
    tracker: FieldTracker,
    /// The form objects are stored in (media type, encryption).
    codec: StorageCodec,
    /// The names of the selectable fields the cache keeps with each object.
    field_names: FieldNames,
}

/// What a write addresses: the resource, or its `status` subresource.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    Resource,
    Status,
    /// `certificatesigningrequests/approval`: the approval conditions only.
    Approval,
    /// `pods/ephemeralcontainers`: the ephemeral containers only.
    EphemeralContainers,
    /// `pods/resize`: the containers' resources only.
    Resize,
    /// A workload written through its `scale` subresource, whose admission ran on the Scale.
    Scale,
}

impl Target {
    /// Whether the write's admission is the store's to run (a scale's ran on the Scale).
    fn admitted_here(self) -> bool {
        self != Self::Scale
    }

    pub(crate) fn subresource(self) -> &'static str {
        match self {
            Self::Resource => "",
            Self::Status => "status",
            Self::Approval => "approval",
            Self::EphemeralContainers => "ephemeralcontainers",
            Self::Resize => "resize",
            Self::Scale => "scale",
        }
    }
}

enum Attempt<T> {
    Done(T),
    Retry,
    /// The write was tried (it may have gone through) and failed, or its answer could not be
    /// made: an error not to be tried again from the store.
    Final(Error),
}

impl<T> Attempt<T> {
    /// The answer of a write that went through.
    fn answered(answer: Result<T>) -> Self {
        answer.map_or_else(Self::Final, Self::Done)
    }

    /// What a write's retry loop does with an attempt's `outcome`: stop with an answer, or
    /// try again from the store (after a lost race, or any error of an attempt made from a
    /// `cached` copy, which may have been behind).
    fn next(outcome: Result<Self>, cached: bool) -> std::ops::ControlFlow<Result<T>> {
        use std::ops::ControlFlow::{Break, Continue};
        match outcome {
            Ok(Self::Done(out)) => Break(Ok(out)),
            Ok(Self::Retry) => Continue(()),
            Ok(Self::Final(err)) => Break(Err(err)),
            Err(_) if cached => Continue(()),
            Err(err) => Break(Err(err)),
        }
    }
}

/// The stored object an update starts from.
enum Base {
    /// The store's current value, as read.
    Read(KeyValue),
    /// The watch cache's copy (which knows the CRC of the value it stands for): current
    /// unless a write has just overtaken the cache. The write is guarded by its revision, and
    /// an attempt that comes to anything else (an error, a lost race, no change) is made
    /// again from the store, as upstream's update from its cached object is.
    Cached(Arc<CachedObject>),
}

impl Base {
    fn key(&self) -> &str {
        match self {
            Self::Read(kv) => &kv.key,
            Self::Cached(copy) => &copy.key,
        }
    }

    fn revision(&self) -> Revision {
        match self {
            Self::Read(kv) => kv.mod_revision,
            Self::Cached(copy) => copy.revision,
        }
    }

    fn is_cached(&self) -> bool {
        matches!(self, Self::Cached(..))
    }
}

/// Whether a write still has to record its field manager in managedFields.
#[derive(Clone, Copy)]
enum Tracking<'a> {
    /// Record this manager's changes.
    Record(&'a str),
    /// Already recorded (server-side apply computed them).
    Done,
}

impl<S> GenericStore<S>
where
    S: Strategy,
    S::Object: schemars::JsonSchema,
{
    /// A store for `strategy`'s resource, with keys under `<registry_prefix>/<resource>/`;
    /// with `cache`, lists and watches are served from a watch cache of that size.
    pub fn new(
        strategy: S,
        store: Arc<dyn Store>,
        registry_prefix: &str,
        cache: Option<WatchCacheConfig>,
    ) -> Self {
        Self::with_codec(
            strategy,
            store,
            registry_prefix,
            cache,
            StorageCodec::default(),
        )
    }

    /// [`GenericStore::new`], with objects stored by `codec` (media type, encryption).
    pub fn with_codec(
        strategy: S,
        store: Arc<dyn Store>,
        registry_prefix: &str,
        cache: Option<WatchCacheConfig>,
        codec: StorageCodec,
    ) -> Self {
        let descriptor = strategy.descriptor();
        let prefix = format!(
            "{}/{}/",
            registry_prefix.trim_end_matches('/'),
            descriptor.resource
        );
        let strategy: Arc<dyn KindStrategy> = Arc::new(strategy);
        let json = KindJson::of::<S::Object>();
        let field_names = selectable_names(&descriptor.field_labels.fields);
        let decode: Decode = {
            let strategy = strategy.clone();
            let names = field_names.clone();
            let codec = codec.clone();
            Arc::new(move |kv: &KeyValue| to_cached(&*strategy, json, &codec, &names, kv))
        };
        let cache = cache
            .map(|config| WatchCache::start(store.clone(), prefix.clone(), decode.clone(), config));
        let tracker = FieldTracker::new(&descriptor, strategy.has_status());
        let forms = Arc::new(crate::forms::StoreForms::new(
            &descriptor,
            strategy.has_status(),
        ));
        let kind = KindStore {
            core: StoreCore {
                tracker,
                forms,
                codec,
                gr: descriptor.group_resource(),
                descriptor,
                store,
                prefix,
                schema: Arc::new(|g| g.subschema_for::<S::Object>()),
                decode,
                cache,
                admission: None,
                delete_workers: 1,
                field_names,
            },
            strategy,
            create_hooks: Vec::new(),
            write_checks: Vec::new(),
            update_field_checks: Vec::new(),
            allocations: None,
            json,
        };
        Self {
            kind,
            strategy: std::marker::PhantomData,
        }
    }

    /// Reads the objects mutating admission gives back straight from their JSON tree,
    /// rather than through the tree's bytes, and brings that tree up to date for validating
    /// admission and the stored encoding rather than making it again: the code for it is then
    /// compiled for this kind, worth its build time for the kinds written most (pods: 7.5% of
    /// the server's work on a create went to reading the admitted pod back, 5.9% to making
    /// its tree again). Such kinds also read their stored and cached JSON with a decoder of
    /// their own (see [`crate::kind::KindJson::decode`]).
    pub fn reading_trees(mut self) -> Self {
        self.kind.json.trees = Some(crate::kind::Trees::of::<S::Object>());
        self
    }

    /// Tracks field managers (and applies) by `schema`, which knows the resource's kind (a
    /// custom resource's schema, built from its CRD).
    pub fn with_field_schema(mut self, schema: Arc<capstan_negotiation::schema::Schema>) -> Self {
        self.kind.core.tracker = self.kind.core.tracker.with_schema(schema);
        self
    }

    /// Describes the objects in OpenAPI with `schema` instead of their type's (a custom
    /// resource's schema comes from its CRD).
    pub fn with_openapi_schema(
        mut self,
        schema: impl Fn(&mut schemars::SchemaGenerator) -> schemars::Schema + Send + Sync + 'static,
    ) -> Self {
        self.kind.core.schema = Arc::new(schema);
        self
    }

    /// Runs up to `workers` deletes of a deletecollection at once.
    pub fn with_delete_workers(mut self, workers: usize) -> Self {
        self.kind.core.delete_workers = workers.max(1);
        self
    }

    /// Runs `hook` on every new object after defaulting and before validation (it may
    /// change the object or refuse it). Hooks run in the order they were added.
    pub fn with_create_hook(mut self, hook: Arc<dyn CreateHook<S::Object>>) -> Self {
        self.kind.create_hooks.push(Arc::new(OnKind(hook)));
        self
    }

    /// Runs `check` on every valid new or changed object, with its author, before it is
    /// written (dry runs included): RBAC's escalation checks.
    pub fn with_write_check(mut self, check: Arc<dyn WriteCheck<S::Object>>) -> Self {
        self.kind.write_checks.push(Arc::new(OnKind(check)));
        self
    }

    /// Runs `check` on every update (dry runs included), its refusals reported with the
    /// object's validation errors, before them: a ResourceClaim's status permissions.
    pub fn with_update_field_check(mut self, check: Arc<dyn UpdateFieldCheck<S::Object>>) -> Self {
        self.kind.update_field_checks.push(Arc::new(OnKind(check)));
        self
    }

    /// Reserves what new and changed objects claim with `allocations` (after admission's
    /// mutating phase, before validation), and gives it back when an object is removed.
    pub fn with_allocations(mut self, allocations: Arc<dyn Allocations<S::Object>>) -> Self {
        self.kind.allocations = Some(Arc::new(OnKind(allocations)));
        self
    }

    /// Passes every create, update and delete through `chain`: its mutating plugins after
    /// defaulting, its validating plugins after the object's own validation (dry runs too).
    pub fn with_admission(mut self, chain: Arc<capstan_admission::Chain>) -> Self {
        self.kind.core.admission = Some(chain);
        self
    }
}

impl<S: Strategy> GenericStore<S> {
    /// Admits the create of a subresource with its own object (`pods/binding`,
    /// `pods/eviction`, `serviceaccounts/token`), of `kind` in `kind_group_version` when that
    /// is not the resource's: the mutating plugins, then the validating ones; the object as
    /// they left it.
    #[allow(clippy::too_many_arguments)]
    pub async fn admit_subresource<T>(
        &self,
        subresource: &str,
        kind: &str,
        kind_group_version: Option<(&str, &str)>,
        namespace: &str,
        name: &str,
        object: T,
        options: &WriteOptions,
    ) -> Result<T>
    where
        T: serde::Serialize + serde::de::DeserializeOwned + Send + Sync + 'static,
    {
        self.kind
            .admit_subresource_write(
                Operation::Create,
                (subresource, kind, kind_group_version),
                namespace,
                name,
                (object, None),
                options,
            )
            .await
    }

    /// Admits an update through a subresource whose object is not the stored one (a
    /// workload's `scale`): `object` replacing `old`, both of `kind`.
    #[allow(clippy::too_many_arguments)]
    pub async fn admit_subresource_update<T>(
        &self,
        subresource: &str,
        kind: &str,
        kind_group_version: Option<(&str, &str)>,
        namespace: &str,
        name: &str,
        object: T,
        old: T,
        options: &WriteOptions,
    ) -> Result<T>
    where
        T: serde::Serialize + serde::de::DeserializeOwned + Send + Sync + 'static,
    {
        self.kind
            .admit_subresource_write(
                Operation::Update,
                (subresource, kind, kind_group_version),
                namespace,
                name,
                (object, Some(old)),
                options,
            )
            .await
    }

    /// Changes one object with `change` and writes it, retrying when the write loses a race.
    /// No strategy hook runs: this is for the server's own writes that bypass the update
    /// rules (a binding setting `spec.nodeName`, a namespace's finalize), as upstream's
    /// guaranteed updates do. A change that leaves a deleted object with nothing to wait for
    /// removes it.
    pub async fn update_with<F>(
        &self,
        namespace: &str,
        name: &str,
        dry_run: bool,
        mut change: F,
    ) -> Result<S::Object>
    where
        F: FnMut(&mut S::Object) -> Result<()> + Send,
    {
        let mut change = |obj: &mut Obj| change(kind::typed_mut(obj));
        let obj = self
            .kind
            .update_with(namespace, name, dry_run, &mut change)
            .await?;
        Ok(kind::into_typed(obj))
    }

    /// The object's JSON as the watch cache has it (it may lag storage by the time an event
    /// takes to arrive), or as storage has it when there is no cache; `None` when there is
    /// no such object. For the server's own lookups (tokens, bound objects), not for clients.
    pub async fn cached_json(&self, namespace: &str, name: &str) -> Result<Option<Bytes>> {
        self.kind.cached_json(namespace, name).await
    }

    /// How this store's objects are written (media type, encryption).
    pub fn storage_codec(&self) -> &StorageCodec {
        &self.kind.core.codec
    }

    /// The group and resource, for errors about this store's objects.
    pub fn group_resource(&self) -> &GroupResource {
        &self.kind.core.gr
    }

    /// PUT of the resource or of a subresource.
    pub(crate) async fn update_target(
        &self,
        target: Target,
        namespace: &str,
        name: &str,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        self.kind
            .update_target(target, namespace, name, body, options)
            .await
    }

    /// PATCH of the resource or of a subresource.
    pub(crate) async fn patch_target(
        &self,
        target: Target,
        namespace: &str,
        name: &str,
        patch_type: PatchType,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        self.kind
            .patch_target(target, namespace, name, patch_type, body, options)
            .await
    }
}

impl KindStore {
    async fn admit_subresource_write<T>(
        &self,
        operation: Operation,
        (subresource, kind, kind_group_version): (&str, &str, Option<(&str, &str)>),
        namespace: &str,
        name: &str,
        (object, old): (T, Option<T>),
        options: &WriteOptions,
    ) -> Result<T>
    where
        T: serde::Serialize + serde::de::DeserializeOwned + Send + Sync + 'static,
    {
        let attributes = || {
            let mut a = self
                .core
                .attributes(operation, Target::Resource, namespace, name, options);
            a.subresource = subresource.to_string();
            a.kind = kind.to_string();
            a.kind_group_version = kind_group_version.map(|(g, v)| (g.to_string(), v.to_string()));
            // The subresource's own object has no other forms.
            a.forms = None;
            a
        };
        let mut object = Foreign(object);
        let old = old.map(Foreign);
        let mut old = old.as_ref().map(|o| Prior::new(o));
        // Subresource answers carry no warnings.
        let mut warnings = Vec::new();
        let lent = (&mut object as &mut dyn TypedObject, old.as_mut());
        if let Admitted::Tree(admitted) =
            self.admit_object(attributes(), lent, &mut warnings).await?
        {
            object = Foreign(codec::from_document(&admitted).map_err(Error::Encode)?);
        }
        self.validate_object(
            attributes(),
            (Some(&object), old.as_mut()),
            &mut warnings,
            None,
        )
        .await?;
        Ok(object.0)
    }

    /// The admission chain when one of its mutating plugins looks at `a`.
    fn mutating_chain(&self, a: &Attributes) -> Option<&capstan_admission::Chain> {
        let chain = self.core.admission.as_deref()?;
        let admits = |gr: &GroupResource| chain.admits(a.operation, gr, &a.subresource);
        let aliased =
            || self.core.forms.has_aliases() && self.core.forms.aliases().iter().any(admits);
        (admits(&self.core.gr) || aliased()).then_some(chain)
    }

    /// The mutating phase for `a` on `object`, lent to the plugins typed (see
    /// [`TypedObject`]); their warnings are added to `warnings`.
    async fn admit_object(
        &self,
        mut a: Attributes,
        (object, mut old): (&mut dyn TypedObject, Option<&mut Prior<'_>>),
        warnings: &mut Vec<String>,
    ) -> Result<Admitted> {
        let Some(chain) = self.mutating_chain(&a) else {
            return Ok(Admitted::Skipped);
        };
        a.old_object = old.as_deref_mut().map(Prior::lend).transpose()?;
        let admitted = chain.admit_typed(&mut a, object).await;
        warnings.extend(a.feedback.take_warnings());
        admitted?;
        if let (Some(old), Some(tree)) = (old, a.old_object.take()) {
            old.give_back(tree);
        }
        Ok(a.object.map_or(Admitted::InPlace, Admitted::Tree))
    }

    /// The mutating phase of a write whose managedFields are recorded (`tree`: `obj` as a
    /// tree with them, when made): the plugins see the write's own entry, and what they set
    /// belongs to no entry, as upstream's. managedFields a plugin left invalid go back to
    /// what was recorded, with upstream's warning. Gives back a tree close to the object
    /// (the given one, or the plugins' result), to be brought up to date before it is used
    /// (see [`KindStore::synced`]).
    ///
    /// The plugins get the object typed (see [`TypedObject`]): when none of them needs its
    /// tree, the object is changed in place and the tree given back is the one made before
    /// (the admitted tree is not read back into the object).
    async fn admit_written(
        &self,
        a: Attributes,
        (obj, old): (&mut Obj, Option<&mut Prior<'_>>),
        warnings: &mut Vec<String>,
        tree: Option<serde_json::Value>,
    ) -> Result<Option<serde_json::Value>> {
        let mut lent = Lent {
            obj,
            tree,
            changed: false,
        };
        let admitted = self.admit_object(a, (&mut lent, old), warnings).await?;
        let Lent { obj, tree, .. } = lent;
        let Admitted::Tree(mut admitted) = admitted else {
            return Ok(tree);
        };
        // The entries the plugins left are read only when they changed them.
        let meta = admitted
            .get_mut("metadata")
            .and_then(serde_json::Value::as_object_mut);
        let left = meta
            .and_then(|m| m.remove("managedFields"))
            .filter(|f| !f.is_null());
        let mut new = self.read_document(&admitted)?;
        let recorded = obj.metadata_mut().managed_fields.take();
        // The tree goes on with the entries the typed object has, in their serialized form
        // (see `KindStore::synced`, which relies on it).
        let (entries, tree_entries) = match left {
            None => (None, None),
            Some(left) if same_entries(recorded.as_deref(), &left) => (recorded, Some(left)),
            Some(left) => {
                let entries = match capstan_merge::ManagedFields::decode(Some(&left)) {
                    Ok(_) => Some(
                        managed_entries(left)
                            .map_err(|e| ApiError::bad_request(format!("managedFields: {e}")))?,
                    ),
                    Err(err) => {
                        warnings.push(format!(
                            ".metadata.managedFields was in an invalid state after admission; this could be caused by an outdated mutating admission controller; please fix your requests: {err}"
                        ));
                        recorded
                    }
                };
                let tree_entries = entries
                    .as_ref()
                    .map(serde_json::to_value)
                    .transpose()
                    .map_err(Error::Encode)?;
                (entries, tree_entries)
            }
        };
        new.metadata_mut().managed_fields = entries;
        *obj = new;
        if let (Some(entries), Some(meta)) = (
            tree_entries,
            admitted
                .get_mut("metadata")
                .and_then(serde_json::Value::as_object_mut),
        ) {
            meta.insert("managedFields".into(), entries);
        }
        Ok(Some(admitted))
    }

    /// The validating phase for `a`, with the objects as JSON only when a plugin reads them;
    /// the plugins' warnings added to `warnings`. `tree`, when given, is `obj` as a tree: it
    /// is used instead of serializing `obj`, and given back (or the tree made here) for the
    /// stored encoding.
    async fn validate_object(
        &self,
        mut a: Attributes,
        (obj, mut old): (Option<&dyn AsJson>, Option<&mut Prior<'_>>),
        warnings: &mut Vec<String>,
        tree: Option<serde_json::Value>,
    ) -> Result<Option<serde_json::Value>> {
        let Some(chain) = self.core.admission.as_deref() else {
            return Ok(tree);
        };
        let mut reads = chain.validates(a.operation, &self.core.gr, &a.subresource);
        if self.core.forms.has_aliases() {
            for alias in self.core.forms.aliases() {
                reads = match (reads, chain.validates(a.operation, &alias, &a.subresource)) {
                    (Some(one), Some(other)) => Some(one || other),
                    (one, other) => one.or(other),
                };
            }
        }
        let Some(reads) = reads else {
            return Ok(tree);
        };
        let mut kept = None;
        if reads {
            a.object = match tree {
                Some(tree) => Some(tree),
                None => obj.map(json_of).transpose()?,
            };
            a.old_object = old.as_deref_mut().map(Prior::lend).transpose()?;
        } else {
            kept = tree;
        }
        let validated = chain.validate(&a).await;
        warnings.extend(a.feedback.take_warnings());
        validated.map_err(|e| e.with_warnings(warnings))?;
        if let (Some(old), Some(tree)) = (old, a.old_object.take()) {
            old.give_back(tree);
        }
        Ok(kept.or_else(|| a.object.take()))
    }
}

/// A stored object as the watch cache keeps it: the served JSON (with its resourceVersion),
/// its labels and its selectable fields.
fn to_cached(
    strategy: &dyn KindStrategy,
    json: KindJson,
    codec: &StorageCodec,
    fields: &FieldNames,
    kv: &KeyValue,
) -> std::result::Result<CachedObject, String> {
    let text = codec.decode(&kv.key, &kv.value)?;
    let mut obj = json.decode(&text).map_err(|e| e.to_string())?;
    strategy.on_read(&mut obj);
    obj.metadata_mut().resource_version = Some(resource_version(kv.mod_revision));
    let mut json = obj.to_vec().map_err(|e| e.to_string())?;
    // The cache keeps this for the object's lifetime: no spare capacity.
    json.shrink_to_fit();
    Ok(cached_object(
        strategy,
        fields,
        &kv.key,
        kv.mod_revision,
        &obj,
        json.into(),
    ))
}

/// `obj`, stored under `key` at `revision` and served as `json`, as the watch cache keeps it.
fn cached_object(
    strategy: &dyn KindStrategy,
    fields: &FieldNames,
    key: &str,
    revision: Revision,
    obj: &Obj,
    json: Bytes,
) -> CachedObject {
    let meta = obj.metadata();
    let values = fields.iter().map(|f| match f.as_str() {
        "metadata.name" => Some(meta.name.clone().unwrap_or_default()),
        "metadata.namespace" => Some(meta.namespace.clone().unwrap_or_default()),
        f => strategy.field(obj, f),
    });
    CachedObject {
        key: key.to_string(),
        revision,
        json: json.into(),
        labels: meta.labels.iter().flatten().collect(),
        fields: Fields::new(fields, values),
        protobuf: Default::default(),
        stored_crc: None,
    }
}

/// `metadata.name` and `metadata.namespace`, then a resource's other selectable fields.
fn selectable_names(fields: &[String]) -> FieldNames {
    let meta = ["metadata.name", "metadata.namespace"].map(String::from);
    let rest = fields.iter().filter(|f| !meta.contains(f)).cloned();
    meta.iter().cloned().chain(rest).collect()
}

/// Whether `entries` are, field for field, the managedFields `json` holds.
fn same_entries(entries: Option<&[ManagedFieldsEntry]>, json: &serde_json::Value) -> bool {
    let Some(items) = json.as_array() else {
        return false;
    };
    let entries = entries.unwrap_or_default();
    let text = |item: &serde_json::Value, key: &str, value: &Option<String>| {
        item.get(key).and_then(serde_json::Value::as_str) == value.as_deref()
    };
    items.len() == entries.len()
        && items.iter().zip(entries).all(|(item, entry)| {
            text(item, "manager", &entry.manager)
                && text(item, "operation", &entry.operation)
                && text(item, "apiVersion", &entry.api_version)
                && text(item, "fieldsType", &entry.fields_type)
                && text(item, "subresource", &entry.subresource)
                && item.get("fieldsV1").filter(|f| !f.is_null())
                    == entry.fields_v1.as_ref().map(|f| &f.0)
                && item.get("time").filter(|t| !t.is_null()).cloned()
                    == entry
                        .time
                        .as_ref()
                        .and_then(|t| serde_json::to_value(t).ok())
                && item.as_object().is_some_and(|o| {
                    o.iter()
                        .all(|(k, v)| ENTRY_KEYS.contains(&k.as_str()) && !v.is_null())
                })
        })
}

/// The fields of a managedFields entry.
const ENTRY_KEYS: [&str; 7] = [
    "manager",
    "operation",
    "apiVersion",
    "fieldsType",
    "fieldsV1",
    "subresource",
    "time",
];

/// managedFields as typed entries. Each entry's `fieldsV1` tree (most of an entry) is moved
/// into it, not serialized and parsed again, and so are its strings when they are all it
/// has (as entries recorded here always are).
fn managed_entries(
    fields: serde_json::Value,
) -> std::result::Result<Vec<ManagedFieldsEntry>, serde_json::Error> {
    let serde_json::Value::Array(entries) = fields else {
        return codec::from_document(&fields);
    };
    entries.into_iter().map(managed_entry).collect()
}

/// The tree of JSON this server wrote (the watch cache's copy of an object): its UTF-8
/// checked once, in one pass, rather than string by string as `from_slice` does (a stored pod
/// of 5.3 KB read 10–20% faster). Text that is not UTF-8 gets `from_slice`'s error.
fn parse_own_json(json: &[u8]) -> serde_json::Result<serde_json::Value> {
    match std::str::from_utf8(json) {
        Ok(text) => serde_json::from_str(text),
        Err(_) => serde_json::from_slice(json),
    }
}

/// One managedFields entry as a typed entry (see [`managed_entries`]). An entry with any
/// other member, or a member of another type, is decoded as a document instead, for the same
/// outcome (an error included).
fn managed_entry(
    mut entry: serde_json::Value,
) -> std::result::Result<ManagedFieldsEntry, serde_json::Error> {
    let tree = entry
        .as_object_mut()
        .and_then(|e| e.remove("fieldsV1"))
        .filter(|tree| !tree.is_null());
    let strings_only = entry.as_object().is_some_and(|members| {
        members.iter().all(|(key, value)| {
            ENTRY_KEYS.contains(&key.as_str()) && (value.is_string() || value.is_null())
        })
    });
    let mut typed = match entry {
        serde_json::Value::Object(members) if strings_only => {
            let mut typed = ManagedFieldsEntry::default();
            for (key, value) in members {
                let serde_json::Value::String(text) = value else {
                    continue;
                };
                match key.as_str() {
                    "manager" => typed.manager = Some(text),
                    "operation" => typed.operation = Some(text),
                    "apiVersion" => typed.api_version = Some(text),
                    "fieldsType" => typed.fields_type = Some(text),
                    "subresource" => typed.subresource = Some(text),
                    "time" => typed.time = Some(serde_json::from_value(text.into())?),
                    _ => {}
                }
            }
            typed
        }
        entry => codec::from_document(&entry)?,
    };
    if tree.is_some() {
        typed.fields_v1 = tree.map(FieldsV1);
    }
    Ok(typed)
}

/// A write about to be stored: its value and, when the watch cache was primed with its
/// object, the priming (dropped, it takes the priming back).
struct Outgoing<'a> {
    value: Bytes,
    priming: Option<Priming<'a>>,
}

/// The resourceVersion a primed object carries until its revision is known: random per
/// process, so that no stored object holds it.
/// The resourceVersion a primed write's object is serialized with before storage gives it
/// its revision: random per process, so no client-chosen value can be taken for it.
struct PendingVersion {
    version: String,
    /// The JSON member as the serializer writes it, found with a prepared search.
    member: memchr::memmem::Finder<'static>,
}

fn pending_version() -> &'static PendingVersion {
    static PENDING: std::sync::OnceLock<PendingVersion> = std::sync::OnceLock::new();
    PENDING.get_or_init(|| {
        let version = format!("capstan-pending-{:016x}", rand::random::<u64>());
        let member = format!("\"resourceVersion\":\"{version}\"");
        PendingVersion {
            version,
            member: memchr::memmem::Finder::new(member.as_bytes()).into_owned(),
        }
    })
}

/// The response to a primed write that storage acknowledged as `kv`: the priming's JSON with
/// the revision in it.
fn primed_answer(
    kv: &KeyValue,
    priming: Priming<'_>,
    warnings: Vec<String>,
    status: ResponseStatus,
) -> Encoded {
    Encoded {
        body: crate::payload::Payload::Whole(priming.written(kv.mod_revision)),
        warnings,
        status,
    }
}

fn meta_name(meta: &ObjectMeta) -> &str {
    meta.name.as_deref().unwrap_or("")
}

impl KindStore {
    /// A request body as the resource's object, pruned by the strategy.
    fn decode_body(
        &self,
        body: &[u8],
        validation: FieldValidation,
    ) -> std::result::Result<(Obj, Vec<String>), ApiError> {
        codec::decode_pruned(
            body,
            &self.core.descriptor,
            validation,
            |o| self.strategy.prune(o),
            self.json.checked,
        )
    }

    /// A patched or applied document as the resource's object, pruned by the strategy.
    fn decode_doc(
        &self,
        doc: serde_json::Value,
        validation: FieldValidation,
    ) -> std::result::Result<(Obj, Vec<String>), ApiError> {
        codec::decode_value_pruned(
            doc,
            &self.core.descriptor,
            validation,
            |o| self.strategy.prune(o),
            self.json.checked,
        )
    }

    /// The object `kv` stores, as served (read-time defaults, its resourceVersion). The watch
    /// cache's JSON of it is taken when the cache holds that very revision: it is what
    /// decoding the value gives, and reading it skips the stored form's decoding.
    fn decode_stored(&self, kv: &KeyValue) -> Result<Obj> {
        self.decode_stored_seen(kv, |_| ()).map(|(obj, ())| obj)
    }

    /// [`Self::decode_stored`], also showing the object's JSON to `look`.
    fn decode_stored_seen<R>(
        &self,
        kv: &KeyValue,
        look: impl FnOnce(&[u8]) -> R,
    ) -> Result<(Obj, R)> {
        let cached = self
            .core
            .cache
            .as_ref()
            .and_then(|c| c.get(&kv.key).ok().flatten())
            .filter(|o| o.revision == kv.mod_revision);
        if let Some(Ok((obj, json))) = cached.as_deref().map(|c| self.read_copy(c)) {
            return Ok((obj, look(&json)));
        }
        let json = self
            .core
            .codec
            .decode(&kv.key, &kv.value)
            .map_err(|message| Error::Unreadable {
                key: kv.key.clone(),
                message,
            })?;
        let mut obj = self.json.decode(&json).map_err(|source| Error::Decode {
            key: kv.key.clone(),
            source,
        })?;
        self.strategy.on_read(&mut obj);
        obj.metadata_mut().resource_version = Some(resource_version(kv.mod_revision));
        Ok((obj, look(&json)))
    }

    /// The object's JSON as stored: empty metadata omitted, no resourceVersion (the revision is
    /// the version); as a tree when the stored form is made from one, then from `tree` (`obj`
    /// as a tree made earlier) when given.
    fn stored_json(&self, obj: &mut Obj, tree: Option<serde_json::Value>) -> Result<Plain> {
        omit_empty_metadata(obj.metadata_mut());
        let rv = obj.metadata_mut().resource_version.take();
        let out = match tree {
            _ if !self.core.codec.takes_documents() => bytes_of(obj).map(Plain::Bytes),
            Some(mut tree) => {
                stored_metadata(&mut tree);
                debug_assert_eq!(
                    Some(&tree),
                    value_of(obj).ok().as_ref(),
                    "the tree handed to the stored encoding is not the object's"
                );
                Ok(Plain::Document(tree))
            }
            None => value_of(obj).map(Plain::Document),
        };
        obj.metadata_mut().resource_version = rv;
        out
    }

    /// The stored value of `obj` under `key`, and whether it decodes back to `obj` exactly.
    /// `tree`: `obj` as a tree, if one was made since its last change.
    fn encode_stored(
        &self,
        key: &str,
        obj: &mut Obj,
        tree: Option<serde_json::Value>,
    ) -> Result<Stored> {
        let json = self.stored_json(obj, tree)?;
        self.core
            .codec
            .encode_exact(key, json)
            .map_err(|message| Error::Unreadable {
                key: key.to_string(),
                message,
            })
    }

    /// [`Self::encode_stored`], or `None` when `current` already holds this object (from
    /// the cache's copy: most likely holds it).
    fn encode_if_changed(
        &self,
        current: &Base,
        obj: &mut Obj,
        tree: Option<serde_json::Value>,
    ) -> Result<Option<Stored>> {
        let json = self.stored_json(obj, tree)?;
        let key = current.key();
        match current {
            Base::Read(kv) => self.core.codec.encode_if_changed(key, json, &kv.value),
            Base::Cached(copy) => self
                .core
                .codec
                .encode_unless_crc(key, json, copy.stored_crc),
        }
        .map_err(|message| Error::Unreadable {
            key: key.to_string(),
            message,
        })
    }

    /// Where an update of `key` starts: the watch cache's copy when `cached` allows one and
    /// the write can check it (values stored unsealed, so that their CRCs compare), else
    /// the store's current value; `None` when there is no object.
    async fn update_base(&self, key: &str, cached: bool) -> Result<Option<Base>> {
        if cached && !self.core.codec.seals() {
            let copy = self
                .core
                .cache
                .as_ref()
                .and_then(|c| c.get(key).ok().flatten());
            if let Some(copy) = copy.filter(|c| c.stored_crc.is_some()) {
                return Ok(Some(Base::Cached(copy)));
            }
        }
        let (kv, _) = self.core.store.get(key).await?;
        Ok(kv.map(Base::Read))
    }

    /// [`Self::decode_stored_seen`] of where an update starts.
    fn decode_base_seen<R>(&self, base: &Base, look: impl FnOnce(&[u8]) -> R) -> Result<(Obj, R)> {
        match base {
            Base::Read(kv) => self.decode_stored_seen(kv, look),
            Base::Cached(copy) => {
                let (obj, json) = self.read_copy(copy).map_err(|source| Error::Decode {
                    key: copy.key.clone(),
                    source,
                })?;
                Ok((obj, look(&json)))
            }
        }
    }

    /// [`Self::decode_base_seen`], with the object as a tree too when the kind keeps trees and
    /// the base is the watch cache's copy: its JSON read into the tree, the object read from
    /// the tree (a stored pod with its managedFields: 49.4 µs, against 53.9 µs for the object
    /// from the JSON and then a tree of it, as the field tracker would make it).
    ///
    /// The managedFields stay in the tree only, where the field tracker and admission read
    /// them: the object has none (reading them into it too took 10.5 of the 19.0 µs of a
    /// stored pod's read from its tree). A write puts its own entries on the new object.
    fn decode_base_tree<R>(
        &self,
        base: &Base,
        look: impl FnOnce(&[u8]) -> R,
    ) -> Result<(Obj, Option<serde_json::Value>, R)> {
        if let (Base::Cached(copy), Some(trees)) = (base, self.json.trees) {
            let json = copy.json.contiguous();
            let (obj, tree) = parse_own_json(&json)
                .and_then(|mut tree| {
                    let entries = take_managed_fields(&mut tree);
                    let obj = (trees.read)(&tree);
                    put_managed_fields(&mut tree, entries);
                    Ok((obj?, tree))
                })
                .map_err(|source| Error::Decode {
                    key: copy.key.clone(),
                    source,
                })?;
            return Ok((obj, Some(tree), look(&json)));
        }
        let (obj, seen) = self.decode_base_seen(base, look)?;
        Ok((obj, None, seen))
    }

    /// The object of the watch cache's `copy`, and the JSON it was read from.
    fn read_copy<'c>(
        &self,
        copy: &'c CachedObject,
    ) -> serde_json::Result<(Obj, std::borrow::Cow<'c, [u8]>)> {
        let json = copy.json.contiguous();
        Ok((self.json.decode(&json)?, json))
    }

    fn encode(&self, obj: &Obj, warnings: Vec<String>, status: ResponseStatus) -> Result<Encoded> {
        let body = bytes_of(obj)?;
        Ok(Encoded {
            body: body.into(),
            warnings,
            status,
        })
    }

    /// What a write of `obj` under `key` is about to store. When the stored value decodes
    /// back to `obj` exactly, the watch cache is primed with the object as served (see
    /// [`WatchCache::prime`]), so that it need not decode the value when the change arrives;
    /// the priming then also gives the write's response.
    fn outgoing(&self, key: &str, stored: Stored, obj: &mut Obj) -> Result<Outgoing<'_>> {
        let value = Bytes::from(stored.value);
        let Some(cache) = self.core.cache.as_ref().filter(|_| stored.exact) else {
            return Ok(Outgoing {
                value,
                priming: None,
            });
        };
        self.strategy.on_read(obj);
        let pending = pending_version();
        obj.metadata_mut().resource_version = Some(pending.version.clone());
        let json = bytes_of(obj)?;
        let Some(at) = pending.member.find(&json) else {
            return Ok(Outgoing {
                value,
                priming: None,
            });
        };
        let end = at + pending.member.needle().len() - 1;
        let start = end - pending.version.len();
        let object = cached_object(
            &*self.strategy,
            &self.core.field_names,
            key,
            Revision(0),
            obj,
            json.into(),
        );
        let priming = cache.prime(PrimedWrite {
            object,
            placeholder: start..end,
            value: value.clone(),
        });
        Ok(Outgoing {
            value,
            priming: Some(priming),
        })
    }

    /// The response to a write of `obj` that storage acknowledged as `kv`.
    fn written(
        &self,
        kv: &KeyValue,
        obj: &mut Obj,
        priming: Option<Priming<'_>>,
        warnings: Vec<String>,
        status: ResponseStatus,
    ) -> Result<Encoded> {
        if let Some(priming) = priming {
            return Ok(primed_answer(kv, priming, warnings, status));
        }
        self.strategy.on_read(obj);
        obj.metadata_mut().resource_version = Some(resource_version(kv.mod_revision));
        Ok(Encoded {
            body: crate::payload::Payload::Whole(bytes_of(obj)?.into()),
            warnings,
            status,
        })
    }

    fn field_value(&self, obj: &Obj, field: &str) -> Option<String> {
        let meta = obj.metadata();
        match field {
            "metadata.name" => Some(meta.name.clone().unwrap_or_default()),
            "metadata.namespace" => Some(meta.namespace.clone().unwrap_or_default()),
            other => self.strategy.field(obj, other),
        }
    }

    fn matches(&self, obj: &Obj, options: &ListOptions) -> bool {
        options
            .label_selector
            .matches(obj.metadata().labels.as_ref())
            && options.field_selector.matches(|f| self.field_value(obj, f))
    }

    /// Reserves what `new` claims, when the type has allocations.
    async fn reserve(
        &self,
        new: &mut Obj,
        old: Option<&Obj>,
        dry_run: bool,
    ) -> Result<Option<Reserved>> {
        match &self.allocations {
            Some(a) => a.reserve(new, old, dry_run).await.map(Some),
            None => Ok(None),
        }
    }

    /// Settles a reservation once the write is known to have landed or not.
    async fn settle(&self, reserved: Option<Reserved>, written: bool) {
        if let (Some(a), Some(r)) = (&self.allocations, reserved) {
            a.settle(r, written).await;
        }
    }

    /// Gives back what an object removed from storage held.
    async fn released(&self, removed: &Obj) {
        if let Some(a) = &self.allocations {
            a.release(removed).await;
        }
    }

    /// The shared tail of update and patch: system fields, checks, the guarded write.
    #[allow(clippy::too_many_arguments)]
    async fn write_update(
        &self,
        target: Target,
        current: &Base,
        (old, old_tree): (Obj, Option<serde_json::Value>),
        mut new: Obj,
        explicit_version: bool,
        mut warnings: Vec<String>,
        options: &WriteOptions,
        tracking: Tracking<'_>,
    ) -> Result<Attempt<Encoded>> {
        if target != Target::Resource && target != Target::Scale {
            // Only the subresource's part changes; the rest stays as stored (the given
            // resourceVersion still guards the write).
            let given = new.metadata_mut().resource_version.take();
            let mut merged = old.clone();
            if matches!(target, Target::Status | Target::Approval) {
                *merged.metadata_mut() = self
                    .strategy
                    .status_metadata(new.metadata(), old.metadata());
            }
            match target {
                Target::Status => self.strategy.copy_status(&mut merged, &new),
                Target::Approval => self.strategy.copy_approval(&mut merged, &new),
                Target::EphemeralContainers => {
                    self.strategy.copy_ephemeral_containers(&mut merged, &new)
                }
                Target::Resize => self.strategy.copy_resize(&mut merged, &new),
                Target::Resource | Target::Scale => {}
            }
            merged.metadata_mut().resource_version = given;
            new = merged;
        }
        let name = meta_name(old.metadata()).to_string();
        self.strategy.default(&mut new);
        let old_meta = old.metadata();
        let mut errors = Vec::new();
        {
            let meta = new.metadata_mut();
            match meta.uid.as_deref() {
                None | Some("") => meta.uid = old_meta.uid.clone(),
                Some(uid) if Some(uid) != old_meta.uid.as_deref() => {
                    errors.push(FieldError::invalid(
                        "metadata.uid",
                        uid,
                        "field is immutable",
                    ));
                }
                Some(_) => {}
            }
            meta.creation_timestamp = old_meta.creation_timestamp.clone();
            meta.deletion_timestamp = old_meta.deletion_timestamp.clone();
            meta.deletion_grace_period_seconds = old_meta.deletion_grace_period_seconds;
            let given = meta.resource_version.take().unwrap_or_default();
            if !given.is_empty() && Some(given.as_str()) != old_meta.resource_version.as_deref() {
                return Err(ApiError::conflict(&self.core.gr, &name, ApiError::MODIFIED).into());
            }
            if old_meta.deletion_timestamp.is_some() {
                let before: Vec<&String> = old_meta.finalizers.iter().flatten().collect();
                if meta
                    .finalizers
                    .iter()
                    .flatten()
                    .any(|f| !before.contains(&f))
                {
                    errors.push(FieldError::forbidden(
                        "metadata.finalizers",
                        "no new finalizers can be added if the object is being deleted",
                    ));
                }
            }
        }
        if self.strategy.has_status() && matches!(target, Target::Resource | Target::Scale) {
            // The status is written through `<resource>/status` only.
            self.strategy.copy_status(&mut new, &old);
        }
        let namespace = old_meta.namespace.clone().unwrap_or_default();
        let attributes = || {
            self.core
                .attributes(Operation::Update, target, &namespace, &name, options)
        };
        let mut prior = Prior {
            object: &old,
            tree: old_tree,
        };
        // Managed fields before mutating admission, which sees them (as upstream's does).
        let tree = match tracking {
            Tracking::Record(manager) => {
                self.record_managers(target, Some((&old, &mut prior)), &mut new, manager)?
            }
            Tracking::Done => None,
        };
        let tree = if target.admitted_here() {
            self.admit_written(
                attributes(),
                (&mut new, Some(&mut prior)),
                &mut warnings,
                tree,
            )
            .await?
        } else {
            tree
        };
        self.strategy.prepare_for_update(&mut new, &old);
        let reserved = if target == Target::Resource {
            self.reserve(&mut new, Some(&old), options.dry_run).await?
        } else {
            None
        };
        let old_tree = prior.tree;
        let result = self
            .store_update(
                target,
                current,
                (old, old_tree),
                new,
                explicit_version,
                warnings,
                options,
                errors,
                tree,
            )
            .await;
        let written = matches!(result, Ok(Attempt::Done(_))) && !options.dry_run;
        self.settle(reserved, written).await;
        result
    }

    /// The tail of an update once its object is complete: validation, checks, the write.
    /// `tree`: a tree close to `new`, to be brought up to date rather than made anew.
    #[allow(clippy::too_many_arguments)]
    async fn store_update(
        &self,
        target: Target,
        current: &Base,
        (old, old_tree): (Obj, Option<serde_json::Value>),
        mut new: Obj,
        explicit_version: bool,
        mut warnings: Vec<String>,
        options: &WriteOptions,
        mut errors: Vec<FieldError>,
        tree: Option<serde_json::Value>,
    ) -> Result<Attempt<Encoded>> {
        let name = meta_name(old.metadata()).to_string();
        let old_meta = old.metadata();
        let namespace = old_meta.namespace.clone().unwrap_or_default();
        let attributes = || {
            self.core
                .attributes(Operation::Update, target, &namespace, &name, options)
        };
        errors.extend(validation::object_meta(
            new.metadata(),
            self.core.descriptor.namespaced,
            self.strategy.name_rule(),
        ));
        errors.extend(validation::object_meta_update(new.metadata(), old_meta));
        for check in &self.update_field_checks {
            errors.extend(check.field_errors(&new, &old, options).await);
        }
        errors.extend(match target {
            Target::EphemeralContainers => self
                .strategy
                .validate_ephemeral_containers_update(&new, &old),
            Target::Resize => self.strategy.validate_resize_update(&new, &old),
            _ => self.strategy.validate_update(&new, &old),
        });
        if !errors.is_empty() {
            return Err(self.core.invalid(&name, &errors));
        }
        if target == Target::Resource {
            warnings.extend(self.strategy.warnings(&new, Some(&old)));
        }
        for check in &self.write_checks {
            check.check(&new, Some(&old), &options.user).await?;
        }
        let mut tree = self.synced(&mut new, tree);
        if target.admitted_here() {
            let mut prior = Prior {
                object: &old,
                tree: old_tree,
            };
            tree = self
                .validate_object(
                    attributes(),
                    (Some(&new), Some(&mut prior)),
                    &mut warnings,
                    tree,
                )
                .await?;
        }
        let key = current.key();
        // A lost race is run again, from the store (an explicit resourceVersion then fails
        // unless it came from a cached copy that was behind; an object deleted behind such a
        // copy is then missing, or created by a kind that creates on update).
        let lost_race = |err: capstan_storage::Error| -> Result<Attempt<Encoded>> {
            match err {
                capstan_storage::Error::Conflict { .. }
                    if !explicit_version || current.is_cached() =>
                {
                    Ok(Attempt::Retry)
                }
                capstan_storage::Error::NotFound { .. } if current.is_cached() => {
                    Ok(Attempt::Retry)
                }
                other => Ok(Attempt::Final(self.core.storage_error(other, &name))),
            }
        };
        if self.completes_deletion(&old, &new) {
            if options.dry_run {
                new.metadata_mut().resource_version = old_meta.resource_version.clone();
                return self
                    .encode(&new, warnings, ResponseStatus::Ok)
                    .map(Attempt::Done);
            }
            return match self.core.store.delete(key, Some(current.revision())).await {
                Ok(kv) => {
                    self.released(&new).await;
                    new.metadata_mut().resource_version = Some(resource_version(kv.mod_revision));
                    Ok(Attempt::answered(self.encode(
                        &new,
                        warnings,
                        ResponseStatus::Ok,
                    )))
                }
                Err(err) => lost_race(err),
            };
        }
        let stored = self.encode_if_changed(current, &mut new, tree)?;
        let Some(stored) = stored.filter(|_| !options.dry_run) else {
            if current.is_cached() {
                // Only the store's value tells whether nothing changed.
                return Ok(Attempt::Retry);
            }
            // Nothing changed (no write, no new version), or a dry run.
            new.metadata_mut().resource_version = old_meta.resource_version.clone();
            return self
                .encode(&new, warnings, ResponseStatus::Ok)
                .map(Attempt::Done);
        };
        let Outgoing { value, priming } = self.outgoing(key, stored, &mut new)?;
        // What the answer does not need is freed before the durable write, while it is still
        // in the processor's caches: the replaced object, and the new one when the priming
        // answers (a Pod create or update at 64 clients: ~10% less server CPU).
        drop(old);
        if let Some(priming) = priming {
            drop(new);
            return match self.core.store.update(key, value, current.revision()).await {
                Ok(kv) => Ok(Attempt::Done(primed_answer(
                    &kv,
                    priming,
                    warnings,
                    ResponseStatus::Ok,
                ))),
                Err(err) => lost_race(err),
            };
        }
        match self.core.store.update(key, value, current.revision()).await {
            Ok(kv) => Ok(Attempt::answered(self.written(
                &kv,
                &mut new,
                priming,
                warnings,
                ResponseStatus::Ok,
            ))),
            Err(err) => lost_race(err),
        }
    }

    /// PUT of the resource or of its status.
    async fn update_target(
        &self,
        target: Target,
        namespace: &str,
        name: &str,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        let original = body;
        let decode = |body: &[u8]| -> Result<(Obj, Vec<String>)> {
            let (mut new, warnings) = self.decode_body(body, options.field_validation)?;
            let body_name = meta_name(new.metadata());
            if body_name != name {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({body_name}) does not match the name on the URL ({name})"
                ))
                .into());
            }
            self.core.settle_namespace(new.metadata_mut(), namespace)?;
            Ok((new, warnings))
        };
        let key = self.core.key(namespace, name);
        for attempt in 0..MAX_RETRIES {
            // The first attempt starts from the watch cache's copy (a dry run is not
            // checked by a write: from the store).
            let current = self
                .update_base(&key, attempt == 0 && !options.dry_run)
                .await?;
            let cached = current.as_ref().is_some_and(Base::is_cached);
            let outcome: Result<Attempt<Encoded>> = async {
                // The body is decoded once the stored object is known (again for a retry,
                // which is rare, rather than copied for every attempt): managedFields sent
                // back as stored are not read (see `codec::without_echoed_managed_fields`).
                // Only where managedFields are recorded: elsewhere the entries sent are kept
                // as sent.
                let tracked = self.core.tracker.typed().is_some();
                let (old, old_tree, body) = match &current {
                    Some(base) if tracked => {
                        let (old, tree, body) = self.decode_base_tree(base, |stored| {
                            codec::without_echoed_managed_fields(original, stored)
                        })?;
                        (Some(old), tree, body)
                    }
                    Some(base) => (
                        Some(self.decode_base_seen(base, |_| ())?.0),
                        None,
                        std::borrow::Cow::Borrowed(original),
                    ),
                    None => (None, None, std::borrow::Cow::Borrowed(original)),
                };
                let (new, warnings) = match decode(&body) {
                    Ok(decoded) => decoded,
                    // The error as the client's own text places it.
                    Err(_) if matches!(body, std::borrow::Cow::Owned(_)) => decode(original)?,
                    Err(err) => return Err(err),
                };
                let (Some(current), Some(old)) = (&current, old) else {
                    if self.strategy.allow_create_on_update() && target == Target::Resource {
                        options.create_check.check().await?;
                        let tracking = Tracking::Record(options.manager());
                        return self
                            .create_object(namespace, new, warnings, options, tracking)
                            .await
                            .map(Attempt::Done);
                    }
                    return Err(ApiError::not_found(&self.core.gr, name).into());
                };
                let explicit = new
                    .metadata()
                    .resource_version
                    .as_deref()
                    .is_some_and(|v| !v.is_empty());
                let tracking = Tracking::Record(options.manager());
                self.write_update(
                    target,
                    current,
                    (old, old_tree),
                    new,
                    explicit,
                    warnings,
                    options,
                    tracking,
                )
                .await
            }
            .await;
            if let std::ops::ControlFlow::Break(answer) = Attempt::next(outcome, cached) {
                return answer;
            }
        }
        Err(ApiError::conflict(&self.core.gr, name, ApiError::MODIFIED).into())
    }

    /// PATCH of the resource or of its status.
    async fn patch_target(
        &self,
        target: Target,
        namespace: &str,
        name: &str,
        patch_type: PatchType,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        if patch_type == PatchType::Apply {
            return self
                .apply_target(target, namespace, name, body, options)
                .await;
        }
        if patch_type == PatchType::Strategic && !self.strategy.strategic_merge() {
            return Err(ApiError::unsupported_media_type(PatchType::CUSTOM_MEDIA_TYPES).into());
        }
        if options.force {
            return Err(ApiError::new(
                Reason::Invalid,
                "PatchOptions.meta.k8s.io \"\" is invalid: force: Forbidden: may not be specified for non-apply patch",
            )
            .into());
        }
        let explicit = patch::sets_resource_version(patch_type, body);
        let tracking = Tracking::Record(options.manager());
        let key = self.core.key(namespace, name);
        for attempt in 0..MAX_RETRIES {
            // As for an update: first from the watch cache's copy.
            let Some(current) = self
                .update_base(&key, attempt == 0 && !options.dry_run)
                .await?
            else {
                return Err(ApiError::not_found(&self.core.gr, name).into());
            };
            let outcome: Result<Attempt<Encoded>> = async {
                let (old, old_tree, ()) = self.decode_base_tree(&current, |_| ())?;
                let mut doc = match &old_tree {
                    Some(tree) => tree.clone(),
                    None => value_of(&old)?,
                };
                patch::apply(
                    patch_type,
                    self.core.tracker.typed().as_ref(),
                    &mut doc,
                    body,
                )?;
                codec::check_type_value(&doc, &self.core.descriptor)?;
                let (new, warnings) = self.decode_doc(doc, options.field_validation)?;
                self.write_update(
                    target,
                    &current,
                    (old, old_tree),
                    new,
                    explicit,
                    warnings,
                    options,
                    tracking,
                )
                .await
            }
            .await;
            // From a cached copy, a failed JSON patch `test` (say) is tried on the store's.
            if let std::ops::ControlFlow::Break(answer) =
                Attempt::next(outcome, current.is_cached())
            {
                return answer;
            }
        }
        Err(ApiError::conflict(&self.core.gr, name, ApiError::MODIFIED).into())
    }

    /// Server-side apply (PATCH with `application/apply-patch+yaml`): the applied
    /// configuration merged over the live object, or a new object when there is none.
    async fn apply_target(
        &self,
        target: Target,
        namespace: &str,
        name: &str,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        let Some(manager) = options.field_manager.as_deref().filter(|m| !m.is_empty()) else {
            return Err(ApiError::bad_request(
                "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
            )
            .into());
        };
        let mut config: serde_json::Value = serde_json::from_slice(body)
            .map_err(|e| ApiError::bad_request(format!("the apply patch is malformed: {e}")))?;
        if !config.is_object() {
            return Err(ApiError::bad_request("an apply patch must be an object").into());
        }
        for field in ["apiVersion", "kind"] {
            if config
                .get(field)
                .and_then(serde_json::Value::as_str)
                .is_none_or(str::is_empty)
            {
                return Err(
                    ApiError::bad_request(format!("an apply patch must set {field}")).into(),
                );
            }
        }
        codec::check_type_value(&config, &self.core.descriptor)?;
        let meta = config
            .as_object_mut()
            .map(|m| m.entry("metadata").or_insert_with(|| serde_json::json!({})))
            .and_then(serde_json::Value::as_object_mut)
            .ok_or_else(|| ApiError::bad_request("metadata must be an object"))?;
        match meta.get("name").and_then(serde_json::Value::as_str) {
            Some(given) if given != name => {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({given}) does not match the name on the URL ({name})"
                ))
                .into());
            }
            _ => {
                meta.insert("name".into(), name.into());
            }
        }
        let explicit = meta
            .get("resourceVersion")
            .and_then(serde_json::Value::as_str)
            .is_some_and(|v| !v.is_empty());
        for _ in 0..MAX_RETRIES {
            let (current, _) = self.core.store.get(&self.core.key(namespace, name)).await?;
            let old = current
                .as_ref()
                .map(|kv| self.decode_stored(kv))
                .transpose()?;
            let live = old.as_ref().map(value_of).transpose()?;
            let merged = self
                .core
                .tracker
                .apply(target, live, &config, manager, options.force)?;
            let (new, warnings) = self.decode_doc(merged, options.field_validation)?;
            let (Some(current), Some(old)) = (current.map(Base::Read), old) else {
                if target != Target::Resource {
                    return Err(ApiError::not_found(&self.core.gr, name).into());
                }
                options.create_check.check().await?;
                return self
                    .create_object(namespace, new, warnings, options, Tracking::Done)
                    .await;
            };
            let outcome = self
                .write_update(
                    target,
                    &current,
                    (old, None),
                    new,
                    explicit,
                    warnings,
                    options,
                    Tracking::Done,
                )
                .await;
            if let std::ops::ControlFlow::Break(answer) = Attempt::next(outcome, false) {
                return answer;
            }
        }
        Err(ApiError::conflict(&self.core.gr, name, ApiError::MODIFIED).into())
    }

    /// Records `manager`'s changes from `old` (`None`: a create) to `new` in `new`'s
    /// managedFields.
    /// Records `manager`'s write of `new` in its managedFields; `new` as a tree (with those
    /// managedFields), which later steps take instead of serializing the object again as
    /// long as nothing else changes it.
    fn record_managers(
        &self,
        target: Target,
        old: Option<(&Obj, &mut Prior<'_>)>,
        new: &mut Obj,
        manager: &str,
    ) -> Result<Option<serde_json::Value>> {
        if self.core.tracker.typed().is_none() {
            return Ok(None);
        }
        // The entries the client sent are replaced below: they go into the tree only when
        // they differ from the stored ones (a hand-over of ownership), as the tracker reads
        // them then.
        let given = new.metadata_mut().managed_fields.take();
        // An old object read with its tree has its entries in the tree only (see
        // `KindStore::decode_base_tree`).
        let stored_again = |given: &Vec<ManagedFieldsEntry>| match &old {
            Some((o, prior)) => match &o.metadata().managed_fields {
                Some(stored) => stored == given,
                None => prior
                    .tree
                    .as_ref()
                    .and_then(|t| t.get("metadata")?.get("managedFields"))
                    .is_some_and(|stored| same_entries(Some(given), stored)),
            },
            None => false,
        };
        let mut doc = value_of(new)?;
        if let Some(given) = given.filter(|g| !stored_again(g)) {
            let given = serde_json::to_value(given).map_err(Error::Encode)?;
            if let Some(meta) = doc.get_mut("metadata").and_then(|m| m.as_object_mut()) {
                meta.insert("managedFields".into(), given);
            }
        }
        match old {
            Some((_, old)) => {
                let mut tree = old.lend()?;
                let recorded = self
                    .core
                    .tracker
                    .record(target, Some(&mut tree), &mut doc, manager);
                old.give_back(tree);
                recorded?;
            }
            None => self.core.tracker.record(target, None, &mut doc, manager)?,
        }
        let fields = doc
            .get("metadata")
            .and_then(|m| m.get("managedFields"))
            .filter(|f| !f.is_null())
            .cloned();
        new.metadata_mut().managed_fields = fields
            .map(managed_entries)
            .transpose()
            .map_err(|e| ApiError::internal(format!("managedFields: {e}")))?;
        Ok(Some(doc))
    }

    /// Whether writing `new` over `old` finishes a deletion: `old` was being deleted without
    /// a pending grace period, and nothing is left to finalize (upstream deletes during the
    /// update then).
    fn completes_deletion(&self, old: &Obj, new: &Obj) -> bool {
        let old_meta = old.metadata();
        let finalizers_left = new
            .metadata()
            .finalizers
            .as_ref()
            .is_some_and(|f| !f.is_empty());
        old_meta.deletion_timestamp.is_some()
            && old_meta.deletion_grace_period_seconds.unwrap_or(0) == 0
            && !finalizers_left
            && !self.strategy.awaits_finalization(new)
    }

    /// [`GenericStore::update_with`].
    async fn update_with(
        &self,
        namespace: &str,
        name: &str,
        dry_run: bool,
        change: &mut (dyn FnMut(&mut Obj) -> Result<()> + Send),
    ) -> Result<Obj> {
        for _ in 0..MAX_RETRIES {
            let current = self.core.current(namespace, name).await?;
            let old = self.decode_stored(&current)?;
            let mut new = old.clone();
            change(&mut new)?;
            if dry_run {
                return Ok(new);
            }
            let removes = self.completes_deletion(&old, &new);
            let written = if removes {
                self.core
                    .store
                    .delete(&current.key, Some(current.mod_revision))
                    .await
            } else {
                let stored = self.encode_stored(&current.key, &mut new, None)?;
                self.core
                    .store
                    .update(&current.key, stored.value.into(), current.mod_revision)
                    .await
            };
            match written {
                Ok(kv) => {
                    if removes {
                        self.released(&new).await;
                    }
                    new.metadata_mut().resource_version = Some(resource_version(kv.mod_revision));
                    return Ok(new);
                }
                Err(capstan_storage::Error::Conflict { .. }) => continue,
                Err(err) => return Err(self.core.storage_error(err, name)),
            }
        }
        Err(ApiError::conflict(&self.core.gr, name, ApiError::MODIFIED).into())
    }

    /// [`GenericStore::cached_json`].
    async fn cached_json(&self, namespace: &str, name: &str) -> Result<Option<Bytes>> {
        let key = self.core.key(namespace, name);
        if let Some(cache) = &self.core.cache
            && let Ok(found) = cache.get(&key)
        {
            return Ok(found.map(|o| o.json.to_bytes()));
        }
        let (kv, _) = self.core.store.get(&key).await?;
        let Some(kv) = kv else {
            return Ok(None);
        };
        let obj = self.decode_stored(&kv)?;
        Ok(Some(bytes_of(&obj)?.into()))
    }

    /// A typed object from a JSON document (an admitted one): straight from the tree for
    /// the kinds that read trees, through its bytes for the others (see
    /// [`codec::from_document`]).
    fn read_document(&self, doc: &serde_json::Value) -> Result<Obj> {
        if let Some(trees) = self.json.trees {
            return (trees.read)(doc).map_err(Error::Encode);
        }
        let bytes = serde_json::to_vec(doc).map_err(Error::Encode)?;
        self.json.decode(&bytes).map_err(Error::Encode)
    }

    /// `tree`, a tree made of `obj` before its last changes, brought up to date with it: for
    /// the kinds that keep trees; `None` for the others (the tree is made anew where needed).
    ///
    /// The managedFields are left out of the walk: the tree has had the typed object's own, in
    /// serialized form, since the managedFields step (`record_managers`, `admit_written`), and
    /// nothing after changes them.
    fn synced(&self, obj: &mut Obj, tree: Option<serde_json::Value>) -> Option<serde_json::Value> {
        let (Some(trees), Some(mut tree)) = (self.json.trees, tree) else {
            return None;
        };
        let typed = obj.metadata_mut().managed_fields.take();
        let kept = take_managed_fields(&mut tree);
        debug_assert_eq!(
            kept,
            typed.as_ref().and_then(|t| serde_json::to_value(t).ok()),
            "the tree's managedFields are not the object's"
        );
        if kept.is_some() != typed.is_some() {
            obj.metadata_mut().managed_fields = typed;
            return None;
        }
        let synced = (trees.sync)(obj, &mut tree);
        obj.metadata_mut().managed_fields = typed;
        synced.ok()?;
        if let Some(kept) = kept {
            tree.get_mut("metadata")?
                .as_object_mut()?
                .insert("managedFields".into(), kept);
        }
        Some(tree)
    }

    async fn create_object(
        &self,
        namespace: &str,
        mut obj: Obj,
        mut warnings: Vec<String>,
        options: &WriteOptions,
        tracking: Tracking<'_>,
    ) -> Result<Encoded> {
        self.core.settle_namespace(obj.metadata_mut(), namespace)?;
        self.strategy.default(&mut obj);
        for hook in &self.create_hooks {
            hook.on_create(&mut obj, &options.user).await?;
        }
        let attributes = |name: &str| {
            self.core.attributes(
                Operation::Create,
                Target::Resource,
                namespace,
                name,
                options,
            )
        };
        let name = meta_name(obj.metadata()).to_string();
        // Managed fields before mutating admission, which sees them (as upstream's does).
        let tree = match tracking {
            Tracking::Record(manager) => {
                self.record_managers(Target::Resource, None, &mut obj, manager)?
            }
            Tracking::Done => None,
        };
        let tree = self
            .admit_written(attributes(&name), (&mut obj, None), &mut warnings, tree)
            .await?;
        {
            let meta = obj.metadata_mut();
            meta.uid = Some(names::uid());
            meta.creation_timestamp = Some(time::now());
            meta.resource_version = None;
            meta.deletion_timestamp = None;
            meta.deletion_grace_period_seconds = None;
        }
        warnings.extend(self.strategy.prepare_for_create_warned(&mut obj));
        let reserved = self.reserve(&mut obj, None, options.dry_run).await?;
        let result = self
            .store_new(namespace, obj, warnings, options, tree)
            .await;
        self.settle(reserved, result.is_ok() && !options.dry_run)
            .await;
        result
    }

    /// The tail of a create once its object is complete: validation, checks, the write
    /// (under new names while a generated one is taken). `tree`: a tree close to `obj`, to
    /// be brought up to date rather than made anew.
    async fn store_new(
        &self,
        namespace: &str,
        mut obj: Obj,
        mut warnings: Vec<String>,
        options: &WriteOptions,
        mut tree: Option<serde_json::Value>,
    ) -> Result<Encoded> {
        let attributes = |name: &str| {
            self.core.attributes(
                Operation::Create,
                Target::Resource,
                namespace,
                name,
                options,
            )
        };
        let generate = obj
            .metadata()
            .generate_name
            .clone()
            .filter(|g| !g.is_empty());
        let generated = meta_name(obj.metadata()).is_empty() && generate.is_some();
        let attempts = if generated { GENERATE_NAME_ATTEMPTS } else { 1 };
        for attempt in 0..attempts {
            if generated {
                let prefix = generate.as_deref().unwrap_or_default();
                obj.metadata_mut().name = Some(names::generate(prefix));
            }
            let name = meta_name(obj.metadata()).to_string();
            let mut errors = validation::object_meta(
                obj.metadata(),
                self.core.descriptor.namespaced,
                self.strategy.name_rule(),
            );
            errors.extend(self.strategy.validate(&obj));
            if !errors.is_empty() {
                let invalid = ApiError::invalid(
                    &self.core.descriptor.group,
                    &self.core.descriptor.kind,
                    &name,
                    &errors,
                );
                return Err(invalid.with_warnings(&warnings).into());
            }
            if attempt == 0 {
                warnings.extend(self.strategy.warnings(&obj, None));
            }
            for check in &self.write_checks {
                check.check(&obj, None, &options.user).await?;
            }
            let tree = self.synced(&mut obj, tree.take());
            let tree = self
                .validate_object(attributes(&name), (Some(&obj), None), &mut warnings, tree)
                .await?;
            if options.dry_run {
                return self.encode(&obj, warnings, ResponseStatus::Created);
            }
            let key = self.core.key(namespace, &name);
            let stored = self.encode_stored(&key, &mut obj, tree)?;
            let Outgoing { value, priming } = self.outgoing(&key, stored, &mut obj)?;
            if !generated && let Some(priming) = priming {
                // The priming answers: the object is freed now, while it is still in the
                // processor's caches, not after the durable write.
                drop(obj);
                let kv = self
                    .core
                    .store
                    .create(&key, value)
                    .await
                    .map_err(|err| self.core.storage_error(err, &name))?;
                return Ok(primed_answer(
                    &kv,
                    priming,
                    warnings,
                    ResponseStatus::Created,
                ));
            }
            match self.core.store.create(&key, value).await {
                Ok(kv) => {
                    let status = ResponseStatus::Created;
                    return self.written(&kv, &mut obj, priming, warnings, status);
                }
                Err(capstan_storage::Error::AlreadyExists { .. })
                    if generated && attempt + 1 < attempts =>
                {
                    continue;
                }
                Err(err) => return Err(self.core.storage_error(err, &name)),
            }
        }
        unreachable!("the last attempt returns")
    }

    async fn delete_one(
        &self,
        namespace: &str,
        name: &str,
        options: &DeleteOptions,
    ) -> Result<Encoded> {
        for _ in 0..MAX_RETRIES {
            let current = self.core.current(namespace, name).await?;
            let mut obj = self.decode_stored(&current)?;
            check_delete_preconditions(&self.core.gr, name, obj.metadata(), options)?;
            if let Some(reason) = self.strategy.forbid_delete(&obj) {
                return Err(ApiError::forbidden_because(&self.core.gr, name, &reason).into());
            }
            let attributes = || {
                self.core.attributes(
                    Operation::Delete,
                    Target::Resource,
                    namespace,
                    name,
                    options,
                )
            };
            // A delete has no new object: the mutating phase sees the stored one only.
            let mut prior = Prior::new(&obj);
            if let Some(chain) = self.core.admission.as_deref()
                && chain.admits(Operation::Delete, &self.core.gr, "")
            {
                let mut a = attributes();
                a.old_object = Some(prior.lend()?);
                chain.admit(&mut a).await?;
                if let Some(tree) = a.old_object.take() {
                    prior.give_back(tree);
                }
            }
            // Delete answers carry no admission warnings.
            let attributes = attributes();
            self.validate_object(attributes, (None, Some(&mut prior)), &mut Vec::new(), None)
                .await?;
            let finalizers_change = set_propagation_finalizers(
                obj.metadata_mut(),
                options,
                self.strategy.orphans_by_default(),
            );
            let rules = DeletionRules {
                awaits_finalization: self.strategy.awaits_finalization(&obj),
                grace: self
                    .strategy
                    .grace_period(&obj, options.grace_period_seconds)
                    .max(0),
                graceful: self.strategy.deletes_gracefully(),
                own_rules: self.strategy.own_deletion_rules(),
                finalizers_change,
            };
            let (step, newly_marked) = plan_deletion(obj.metadata_mut(), &rules);
            if newly_marked {
                self.strategy.prepare_for_delete(&mut obj);
            }
            // Not finished at once: 200 with the object, or 202 when the client asked for
            // `orphanDependents: false` (upstream keeps 200 otherwise for compatibility).
            let pending = if options.orphan_dependents == Some(false) {
                ResponseStatus::Accepted
            } else {
                ResponseStatus::Ok
            };
            let mut revision = current.mod_revision;
            match step {
                DeletionStep::Unchanged => return self.encode(&obj, Vec::new(), pending),
                DeletionStep::Keep => {
                    // Phase one: mark for deletion; the object goes when its last finalizer
                    // does (or when whatever honours the grace period finishes it).
                    if options.dry_run {
                        return self.encode(&obj, Vec::new(), pending);
                    }
                    let Some((kv, priming)) = self.mark_deleting(&current, &mut obj, name).await?
                    else {
                        continue;
                    };
                    return self.written(&kv, &mut obj, priming, Vec::new(), pending);
                }
                DeletionStep::Remove { mark_first } => {
                    if mark_first && !options.dry_run {
                        // Stored marked first (watchers see it), then removed.
                        let Some((kv, priming)) =
                            self.mark_deleting(&current, &mut obj, name).await?
                        else {
                            continue;
                        };
                        // The removal answers: the marked object's JSON is not needed.
                        if let Some(priming) = priming {
                            priming.kept();
                        }
                        revision = kv.mod_revision;
                        obj.metadata_mut().resource_version = Some(resource_version(revision));
                    }
                    if options.dry_run {
                        return self.deleted(&obj);
                    }
                    let Some(kv) = self.core.remove(&current.key, revision, name).await? else {
                        continue;
                    };
                    self.released(&obj).await;
                    obj.metadata_mut().resource_version = Some(resource_version(kv.mod_revision));
                    return self.deleted(&obj);
                }
            }
        }
        Err(ApiError::conflict(&self.core.gr, name, ApiError::MODIFIED).into())
    }

    /// Stores `obj`, marked for deletion, over `current` (`None` when it changed meanwhile:
    /// the caller retries). The watch cache is primed with the marked object as for any
    /// write, so the change needs no decoding; the priming comes back for the caller to
    /// answer with ([`Self::written`]) or keep.
    async fn mark_deleting(
        &self,
        current: &KeyValue,
        obj: &mut Obj,
        name: &str,
    ) -> Result<Option<(KeyValue, Option<Priming<'_>>)>> {
        let stored = self.encode_stored(&current.key, obj, None)?;
        let Outgoing { value, priming } = self.outgoing(&current.key, stored, obj)?;
        let Some(kv) = self
            .core
            .replace(current, value, current.mod_revision, name)
            .await?
        else {
            return Ok(None);
        };
        Ok(Some((kv, priming)))
    }

    /// The answer to a delete that removed `obj`: the object, for the kinds that return it,
    /// else a `Status` of success naming it (upstream's `finalizeDelete`).
    fn deleted(&self, obj: &Obj) -> Result<Encoded> {
        if self.strategy.returns_deleted_object() {
            return self.encode(obj, Vec::new(), ResponseStatus::Ok);
        }
        let meta = obj.metadata();
        let mut status = capstan_meta::status::success();
        status.details = Some(capstan_meta::v1::StatusDetails {
            name: meta.name.clone(),
            group: Some(self.core.gr.group.clone()),
            kind: Some(self.core.gr.resource.clone()),
            uid: meta.uid.clone(),
            ..Default::default()
        });
        Ok(Encoded {
            body: capstan_meta::status::status_json(&status).into(),
            warnings: Vec::new(),
            status: ResponseStatus::Ok,
        })
    }
}

impl StoreCore {
    /// Writes `bytes` over `current` if it is still at `revision`; `None` when it is not
    /// (the caller retries).
    async fn replace(
        &self,
        current: &KeyValue,
        bytes: Bytes,
        revision: Revision,
        name: &str,
    ) -> Result<Option<KeyValue>> {
        match self.store.update(&current.key, bytes, revision).await {
            Ok(kv) => Ok(Some(kv)),
            Err(capstan_storage::Error::Conflict { .. }) => Ok(None),
            Err(err) => Err(self.storage_error(err, name)),
        }
    }

    /// Deletes `key` if it is still at `revision`; `None` when it is not (the caller
    /// retries).
    async fn remove(&self, key: &str, revision: Revision, name: &str) -> Result<Option<KeyValue>> {
        match self.store.delete(key, Some(revision)).await {
            Ok(kv) => Ok(Some(kv)),
            Err(capstan_storage::Error::Conflict { .. }) => Ok(None),
            Err(err) => Err(self.storage_error(err, name)),
        }
    }

    /// The admission attributes of a write of this store's objects.
    fn attributes(
        &self,
        operation: Operation,
        target: Target,
        namespace: &str,
        name: &str,
        options: &impl crate::options::Writer,
    ) -> Attributes {
        let mut a = Attributes::new(operation, self.gr.clone(), options.user().clone());
        a.feedback = options.feedback().clone();
        let dry_run = options.dry_run();
        a.version = self.descriptor.version.clone();
        a.kind = self.descriptor.kind.clone();
        a.subresource = target.subresource().to_string();
        a.namespace = namespace.to_string();
        a.name = name.to_string();
        a.dry_run = dry_run;
        a.forms = Some(self.forms.clone());
        a.served_as = options.served_as().cloned();
        a
    }

    fn key(&self, namespace: &str, name: &str) -> String {
        if self.descriptor.namespaced {
            format!("{}{namespace}/{name}", self.prefix)
        } else {
            format!("{}{name}", self.prefix)
        }
    }

    fn collection_prefix(&self, namespace: &str) -> String {
        if self.descriptor.namespaced && !namespace.is_empty() {
            format!("{}{namespace}/", self.prefix)
        } else {
            self.prefix.clone()
        }
    }

    fn storage_error(&self, err: capstan_storage::Error, name: &str) -> Error {
        use capstan_storage::Error as E;
        match err {
            E::NotFound { .. } => ApiError::not_found(&self.gr, name).into(),
            E::AlreadyExists { .. } => ApiError::already_exists(&self.gr, name).into(),
            E::Conflict { .. } => ApiError::conflict(&self.gr, name, ApiError::MODIFIED).into(),
            E::Compacted {
                requested,
                compacted,
            } => ApiError::new(
                Reason::Expired,
                format!("too old resource version: {requested} ({compacted})"),
            )
            .into(),
            E::FutureRevision { requested, current } => {
                ApiError::resource_version_too_large(requested, current).into()
            }
            other => Error::Storage(other),
        }
    }

    fn invalid(&self, name: &str, errors: &[FieldError]) -> Error {
        ApiError::invalid(&self.descriptor.group, &self.descriptor.kind, name, errors).into()
    }

    /// Sets the namespace of a new object from the request, as upstream does: filled in
    /// when absent, cleared for cluster-scoped resources, a 400 when it differs.
    fn settle_namespace(&self, meta: &mut ObjectMeta, namespace: &str) -> Result<()> {
        if !self.descriptor.namespaced {
            meta.namespace = None;
            return Ok(());
        }
        match meta.namespace.as_deref() {
            None | Some("") => meta.namespace = Some(namespace.to_string()),
            Some(ns) if ns == namespace => {}
            Some(_) => {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                )
                .into());
            }
        }
        Ok(())
    }

    async fn current(&self, namespace: &str, name: &str) -> Result<KeyValue> {
        let (kv, _) = self.store.get(&self.key(namespace, name)).await?;
        kv.ok_or_else(|| ApiError::not_found(&self.gr, name).into())
    }

    /// Which revision a list reads at and where it starts, by the rules of resourceVersion,
    /// resourceVersionMatch, limit and continue.
    async fn list_start(
        &self,
        prefix: &str,
        options: &ListOptions,
    ) -> Result<(Option<Revision>, String)> {
        if let Some(token) = &options.continue_token {
            return Ok((
                Some(Revision(token.rv as u64)),
                format!("{prefix}{}", token.start),
            ));
        }
        let requested = parse_resource_version(&options.resource_version)?;
        let revision = match (requested, options.resource_version_match) {
            (None, _) => None,
            (Some(Revision(0)), _) => None,
            (Some(rev), Some(ResourceVersionMatch::Exact)) => Some(rev),
            (Some(rev), None) if options.limit > 0 => Some(rev),
            (Some(rev), _) => {
                self.wait_for_store(rev).await?;
                None
            }
        };
        Ok((revision, prefix.to_string()))
    }

    /// Waits (briefly) until storage has reached `revision`; 504 "Too large resource version"
    /// otherwise. With a watch cache the wait is on the cache, which follows storage (every
    /// write, and progress on request), asking for progress every 100 ms as upstream's
    /// cacher does; storage is read once, not polled.
    async fn wait_for_store(&self, revision: Revision) -> Result<()> {
        let deadline = tokio::time::Instant::now() + FRESHNESS_WAIT;
        let mut current = self.store.current_revision().await?;
        if current >= revision {
            return Ok(());
        }
        if let Some(cache) = &self.cache {
            match self.wait_for_cache(cache, revision).await {
                Ok(()) => return Ok(()),
                Err(capstan_watch::Error::TooLarge { current, .. }) => {
                    return Err(ApiError::resource_version_too_large(revision.0, current).into());
                }
                // Not loaded yet: ask storage instead.
                Err(_) => {}
            }
        }
        loop {
            if current >= revision {
                return Ok(());
            }
            if tokio::time::Instant::now() >= deadline {
                return Err(ApiError::resource_version_too_large(revision.0, current.0).into());
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            current = self.store.current_revision().await?;
        }
    }

    /// Waits (at most [`FRESHNESS_WAIT`]) until the cache has reached `revision`, asking
    /// storage for progress every [`PROGRESS_REQUEST_EVERY`] meanwhile, as upstream's cacher
    /// does: a single request made before the target was read can be answered below it (etcd
    /// 3.5.13 and later report progress only for watchers already caught up), and the next
    /// periodic report comes after the wait is over.
    async fn wait_for_cache(
        &self,
        cache: &WatchCache,
        revision: Revision,
    ) -> std::result::Result<(), capstan_watch::Error> {
        let deadline = tokio::time::Instant::now() + FRESHNESS_WAIT;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            match cache
                .wait_for(revision, left.min(PROGRESS_REQUEST_EVERY))
                .await
            {
                Err(capstan_watch::Error::TooLarge { .. }) if !left.is_zero() => {
                    self.store.request_progress()
                }
                done => return done,
            }
        }
    }

    /// A later page of a list, served from the watch cache at the token's revision when its
    /// window still covers it (as upstream's cache serves continuations from its snapshots):
    /// the page starts where the last one ended, without rescanning or reading storage.
    /// `None` sends the page to storage (which also answers tokens older than its
    /// compaction: 410 with a fresh token).
    async fn continue_from_cache(
        &self,
        cache: &WatchCache,
        prefix: &str,
        token: &ContinueToken,
        options: &ListOptions,
    ) -> Option<Encoded> {
        let revision = Revision(u64::try_from(token.rv).ok()?);
        if revision < self.store.compacted_revision().await.ok()? {
            return None;
        }
        let start = format!("{prefix}{}", token.start);
        let selected = !options.label_selector.is_empty() || !options.field_selector.is_empty();
        let filter = selected.then(|| watching::filter(options));
        let page = cache
            .page_at(prefix, &start, revision, options.limit, filter.as_ref())
            .ok()??;
        // Upstream's form: the page's last key, and a NUL to start just after it.
        let next = page.next.is_some().then(|| {
            let last = page.items.last().map_or("", |o| &o.key[prefix.len()..]);
            ContinueToken::new(revision, format!("{last}\u{0}")).encode()
        });
        // Counted without selectors only, as on the first page.
        let remaining = (next.is_some() && !selected).then_some(page.remaining);
        let jsons = page.items.iter().map(|o| o.json.clone()).collect();
        let body = codec::encode_list(
            &self.descriptor,
            &resource_version(revision),
            next.as_deref(),
            remaining,
            jsons,
            page.items,
        );
        Some(Encoded {
            body,
            warnings: Vec::new(),
            status: ResponseStatus::Ok,
        })
    }

    /// One object from the watch cache, whose JSON is already encoded, once the cache has
    /// caught up with what the read asks for: with no resourceVersion, the store's current
    /// revision (as consistent as a read of storage, when the store knows that revision
    /// without a round trip); with one, that revision or later (`0`: whatever the cache
    /// holds). `None` sends the read to storage (the cache not loaded yet, or a store whose
    /// current revision costs a request).
    async fn get_from_cache(
        &self,
        cache: &WatchCache,
        namespace: &str,
        name: &str,
        options: &GetOptions,
    ) -> Result<Option<Encoded>> {
        let at_least = match (options.resource_version, options.any_version) {
            (_, true) => Revision(0),
            (Some(rev), false) => rev,
            (None, false) if self.store.knows_current_revision() => {
                self.store.current_revision().await?
            }
            (None, false) => return Ok(None),
        };
        match self.wait_for_cache(cache, at_least).await {
            Ok(()) => {}
            Err(capstan_watch::Error::TooLarge { requested, current }) => {
                return Err(ApiError::resource_version_too_large(requested, current).into());
            }
            Err(_) => return Ok(None),
        }
        let Ok(found) = cache.get(&self.key(namespace, name)) else {
            return Ok(None);
        };
        let object = found.ok_or_else(|| ApiError::not_found(&self.gr, name))?;
        Ok(Some(Encoded {
            body: crate::payload::Payload::Whole(object.json.to_bytes()),
            warnings: Vec::new(),
            status: ResponseStatus::Ok,
        }))
    }

    /// The list served from the watch cache, when the options allow it and the cache is ready.
    async fn list_from_cache(
        &self,
        cache: &WatchCache,
        prefix: &str,
        options: &ListOptions,
    ) -> Result<Option<Encoded>> {
        if let Some(token) = &options.continue_token {
            return Ok(self
                .continue_from_cache(cache, prefix, token, options)
                .await);
        }
        let requested = parse_resource_version(&options.resource_version)?;
        let at_least = match (requested, options.resource_version_match) {
            // Most recent: a consistent read, once the cache has caught up with storage. A
            // first page too (as upstream); later pages read storage at the page's revision.
            // When the store's progress reports cannot be trusted, storage answers instead.
            (None, _) if !self.store.consistent_progress() => return Ok(None),
            (None, _) => self.store.current_revision().await?,
            (Some(Revision(0)), _) => Revision(0),
            (Some(rev), Some(ResourceVersionMatch::NotOlderThan)) => rev,
            (Some(rev), None) if options.limit == 0 => rev,
            _ => return Ok(None),
        };
        match self.wait_for_cache(cache, at_least).await {
            Ok(()) => {}
            Err(capstan_watch::Error::TooLarge { requested, current }) => {
                return Err(ApiError::resource_version_too_large(requested, current).into());
            }
            Err(_) => return Ok(None),
        }
        let filter = watching::filter(options);
        let Ok((items, revision)) = cache.list(prefix, &filter) else {
            return Ok(None);
        };
        let (page, token) = if options.limit > 0 && items.len() > options.limit {
            // Upstream's form: the page's last key, and a NUL to start just after it.
            let last = &items[options.limit - 1].key[prefix.len()..];
            (
                &items[..options.limit],
                Some(ContinueToken::new(revision, format!("{last}\u{0}")).encode()),
            )
        } else {
            (&items[..], None)
        };
        let jsons = page.iter().map(|o| o.json.clone()).collect();
        // Exact from the cache; reported without selectors only, as upstream.
        let remaining = (token.is_some()
            && options.label_selector.is_empty()
            && options.field_selector.is_empty())
        .then(|| items.len() - options.limit);
        let body = codec::encode_list(
            &self.descriptor,
            &resource_version(revision),
            token.as_deref(),
            remaining,
            jsons,
            page.to_vec(),
        );
        Ok(Some(Encoded {
            body,
            warnings: Vec::new(),
            status: ResponseStatus::Ok,
        }))
    }
}

#[async_trait]
impl RestStorage for KindStore {
    fn descriptor(&self) -> &ResourceDescriptor {
        &self.core.descriptor
    }

    fn forms(&self) -> Option<Arc<crate::forms::StoreForms>> {
        Some(self.core.forms.clone())
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        (self.core.schema)(generator)
    }

    fn cached_count(&self) -> Option<u64> {
        Some(self.core.cache.as_ref()?.object_count()? as u64)
    }

    fn changed_at(&self) -> Option<u64> {
        Some(self.core.cache.as_ref()?.changed_at()?.0)
    }

    async fn get(&self, namespace: &str, name: &str, options: &GetOptions) -> Result<Encoded> {
        if let Some(cache) = &self.core.cache
            && let Some(found) = self
                .core
                .get_from_cache(cache, namespace, name, options)
                .await?
        {
            return Ok(found);
        }
        if let (Some(rev), false) = (options.resource_version, options.any_version) {
            self.core.wait_for_store(rev).await?;
        }
        let kv = self.core.current(namespace, name).await?;
        let obj = self.decode_stored(&kv)?;
        self.encode(&obj, Vec::new(), ResponseStatus::Ok)
    }

    async fn list(&self, namespace: &str, options: &ListOptions) -> Result<Encoded> {
        let resolved = crate::options::resolved(&self.core.descriptor, options)?;
        let options = &*resolved;
        let prefix = self.core.collection_prefix(namespace);
        if let Some(cache) = &self.core.cache
            && let Some(listed) = self.core.list_from_cache(cache, &prefix, options).await?
        {
            return Ok(listed);
        }
        let (mut revision, mut start) = self.core.list_start(&prefix, options).await?;
        let mut items = Vec::new();
        let mut next: Option<String> = None;
        let fetch = if options.limit > 0 {
            options.limit.max(64)
        } else {
            0
        };
        let list_revision = loop {
            let resp = self
                .core
                .store
                .list(ListRequest {
                    prefix: &prefix,
                    start: Some(&start),
                    limit: fetch,
                    revision,
                })
                .await;
            let resp = match resp {
                Ok(resp) => resp,
                Err(capstan_storage::Error::Compacted { .. })
                    if options.continue_token.is_some() =>
                {
                    // Offer a token that continues from the same place at the current revision,
                    // for clients that accept an inconsistent list (as upstream).
                    let current = self.core.store.current_revision().await?;
                    let relative = start
                        .strip_prefix(prefix.as_str())
                        .unwrap_or("")
                        .to_string();
                    let mut err = ApiError::new(
                        Reason::Expired,
                        "The provided continue parameter is too old to display a consistent list result. \
                         Start a new list without the continue parameter, or use the continue token in this \
                         response to retrieve the remainder of the results (which may then be inconsistent).",
                    );
                    err.continue_token = Some(ContinueToken::new(current, relative).encode());
                    return Err(err.into());
                }
                Err(other) => return Err(self.core.storage_error(other, "")),
            };
            revision = Some(resp.revision);
            let mut filled = false;
            for (i, kv) in resp.items.iter().enumerate() {
                let obj = self.decode_stored(kv)?;
                if !self.matches(&obj, options) {
                    continue;
                }
                items.push(Bytes::from(bytes_of(&obj)?).into());
                if options.limit > 0 && items.len() == options.limit {
                    if i + 1 < resp.items.len() || resp.more {
                        next = Some(format!("{}\u{0}", &kv.key[prefix.len()..]));
                    }
                    filled = true;
                    break;
                }
            }
            match resp.items.last() {
                Some(last) if !filled && resp.more => start = format!("{}\u{0}", last.key),
                _ => break resp.revision,
            }
        };
        let rv = resource_version(list_revision);
        let token = next.map(|start| ContinueToken::new(list_revision, start).encode());
        let body = codec::encode_list(
            &self.core.descriptor,
            &rv,
            token.as_deref(),
            None,
            items,
            Vec::new(),
        );
        Ok(Encoded {
            body,
            warnings: Vec::new(),
            status: ResponseStatus::Ok,
        })
    }

    async fn watch(&self, namespace: &str, options: &WatchOptions) -> Result<EventStream> {
        let list = crate::options::resolved(&self.core.descriptor, &options.list)?;
        let prefix = self.core.collection_prefix(namespace);
        let filter = watching::filter(&list);
        let params = StreamParams {
            descriptor: self.core.descriptor.clone(),
            bookmarks: options.allow_bookmarks,
            deadline: tokio::time::Instant::now() + options.timeout,
            initialization: options.initialization.clone(),
        };
        let error_stream = |err: ApiError| -> EventStream {
            Box::pin(futures_util::stream::iter([watching::error_line(&err)]))
        };
        // A watch opened while the cache loads (a control loop's, as the server starts)
        // waits for it: served from storage it would decode every change on its own for as
        // long as it lasts.
        if let Some(cache) = &self.core.cache {
            cache.wait_ready(FRESHNESS_WAIT).await;
        }
        // Unset: state at the most recent revision first; "0": any state first; other:
        // exactly the changes after it.
        let from = match parse_resource_version(&options.list.resource_version)? {
            None => {
                let current = self.core.store.current_revision().await?;
                if let Some(cache) = &self.core.cache {
                    let _ = self.core.wait_for_cache(cache, current).await;
                }
                None
            }
            Some(Revision(0)) => None,
            Some(rev) => Some(rev),
        };
        if let Some(cache) = &self.core.cache {
            // A revision ahead of the cache: wait for it, then refuse as storage does.
            if let Some(rev) = from
                && let Err(capstan_watch::Error::TooLarge { requested, current }) =
                    self.core.wait_for_cache(cache, rev).await
            {
                return Err(ApiError::resource_version_too_large(requested, current).into());
            }
            match cache.watch_in_group(&prefix, from, filter.clone(), options.connection) {
                Ok(w) => {
                    return Ok(watching::line_stream(
                        w.initial,
                        w.events,
                        cache.revision_receiver(),
                        params,
                    ));
                }
                Err(capstan_watch::Error::Expired { requested, oldest }) => {
                    return Ok(error_stream(watching::expired(requested, oldest)));
                }
                // Still not loaded (or reloading): serve this watch from storage.
                Err(err) => tracing::debug!(%prefix, %err, "a watch served from storage"),
            }
        }
        if let Some(rev) = from {
            self.core.wait_for_store(rev).await?;
        }
        let selective = !list.label_selector.is_empty() || !list.field_selector.is_empty();
        match watching::storage_watch(
            self.core.store.clone(),
            prefix,
            from,
            selective.then_some(filter),
            self.core.decode.clone(),
            STORAGE_WATCH_QUEUE,
        )
        .await
        {
            Ok((initial, events, progress)) => {
                Ok(watching::line_stream(initial, events, progress, params))
            }
            Err(capstan_storage::Error::Compacted {
                requested,
                compacted,
            }) => Ok(error_stream(watching::expired(requested, compacted))),
            Err(err) => Err(self.core.storage_error(err, "")),
        }
    }

    async fn create(
        &self,
        namespace: &str,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        let (obj, warnings) = self.decode_body(body, options.field_validation)?;
        self.create_object(
            namespace,
            obj,
            warnings,
            options,
            Tracking::Record(options.manager()),
        )
        .await
    }

    async fn update(
        &self,
        namespace: &str,
        name: &str,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        self.update_target(Target::Resource, namespace, name, body, options)
            .await
    }

    async fn patch(
        &self,
        namespace: &str,
        name: &str,
        patch_type: PatchType,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        self.patch_target(Target::Resource, namespace, name, patch_type, body, options)
            .await
    }

    async fn delete(
        &self,
        namespace: &str,
        name: &str,
        options: &DeleteOptions,
    ) -> Result<Encoded> {
        self.delete_one(namespace, name, options).await
    }

    async fn delete_collection(
        &self,
        namespace: &str,
        list: &ListOptions,
        options: &DeleteOptions,
    ) -> Result<Encoded> {
        let resolved = crate::options::resolved(&self.core.descriptor, list)?;
        let list = &*resolved;
        let prefix = self.core.collection_prefix(namespace);
        let resp = self
            .core
            .store
            .list(ListRequest {
                prefix: &prefix,
                ..Default::default()
            })
            .await?;
        let mut selected = Vec::new();
        // The answer, as upstream's: the list of what was selected, as it was listed.
        let mut items: Vec<CachedJson> = Vec::new();
        for kv in &resp.items {
            let obj = self.decode_stored(kv)?;
            if !self.matches(&obj, list) {
                continue;
            }
            items.push(bytes_of(&obj)?.into());
            let meta = obj.metadata();
            let ns = meta
                .namespace
                .clone()
                .unwrap_or_else(|| namespace.to_string());
            selected.push((ns, meta_name(meta).to_string()));
        }
        let mut deletes = futures_util::stream::iter(selected)
            .map(|(ns, name)| async move { self.delete_one(&ns, &name, options).await })
            .buffer_unordered(self.core.delete_workers);
        while let Some(outcome) = deletes.next().await {
            match outcome {
                Ok(_) => {}
                Err(Error::Api(e)) if e.reason == Reason::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        let body = codec::encode_list(
            &self.core.descriptor,
            &resource_version(resp.revision),
            None,
            None,
            items,
            Vec::new(),
        );
        Ok(Encoded {
            body,
            warnings: Vec::new(),
            status: ResponseStatus::Ok,
        })
    }
}

/// The typed store serves as its [`KindStore`] does.
#[async_trait]
impl<S: Strategy> RestStorage for GenericStore<S> {
    fn descriptor(&self) -> &ResourceDescriptor {
        self.kind.descriptor()
    }

    fn forms(&self) -> Option<Arc<crate::forms::StoreForms>> {
        self.kind.forms()
    }

    fn schema(&self, generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        self.kind.schema(generator)
    }

    fn cached_count(&self) -> Option<u64> {
        self.kind.cached_count()
    }

    fn changed_at(&self) -> Option<u64> {
        self.kind.changed_at()
    }

    async fn get(&self, namespace: &str, name: &str, options: &GetOptions) -> Result<Encoded> {
        self.kind.get(namespace, name, options).await
    }

    async fn list(&self, namespace: &str, options: &ListOptions) -> Result<Encoded> {
        self.kind.list(namespace, options).await
    }

    async fn watch(&self, namespace: &str, options: &WatchOptions) -> Result<EventStream> {
        self.kind.watch(namespace, options).await
    }

    async fn create(
        &self,
        namespace: &str,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        self.kind.create(namespace, body, options).await
    }

    async fn update(
        &self,
        namespace: &str,
        name: &str,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        self.kind.update(namespace, name, body, options).await
    }

    async fn patch(
        &self,
        namespace: &str,
        name: &str,
        patch_type: PatchType,
        body: &[u8],
        options: &WriteOptions,
    ) -> Result<Encoded> {
        self.kind
            .patch(namespace, name, patch_type, body, options)
            .await
    }

    async fn delete(
        &self,
        namespace: &str,
        name: &str,
        options: &DeleteOptions,
    ) -> Result<Encoded> {
        self.kind.delete(namespace, name, options).await
    }

    async fn delete_collection(
        &self,
        namespace: &str,
        list: &ListOptions,
        options: &DeleteOptions,
    ) -> Result<Encoded> {
        self.kind.delete_collection(namespace, list, options).await
    }
}

#[cfg(test)]
mod tests;

/// The garbage collector's finalizer for orphaning dependents.
pub const ORPHAN_FINALIZER: &str = "orphan";
/// The garbage collector's finalizer for deleting dependents first.
pub const FOREGROUND_FINALIZER: &str = "foregroundDeletion";

/// A delete's preconditions (`preconditions.uid`, `preconditions.resourceVersion`) against
/// the stored object's metadata: a 409 when one does not hold.
fn check_delete_preconditions(
    gr: &GroupResource,
    name: &str,
    meta: &ObjectMeta,
    options: &DeleteOptions,
) -> Result<()> {
    let checks = [
        ("UID", &options.precondition_uid, &meta.uid),
        (
            "ResourceVersion",
            &options.precondition_resource_version,
            &meta.resource_version,
        ),
    ];
    for (what, wanted, actual) in checks {
        if let Some(wanted) = wanted
            && actual.as_deref() != Some(wanted.as_str())
        {
            let why = format!(
                "Precondition failed: {what} in precondition: {wanted}, {what} in object meta: {}",
                actual.as_deref().unwrap_or("")
            );
            return Err(ApiError::conflict(gr, name, &why).into());
        }
    }
    Ok(())
}

/// Sets the garbage collector's finalizers (`orphan`, `foregroundDeletion`) the delete's
/// propagation policy asks for (Background, the default, clears them); whether they changed.
fn set_propagation_finalizers(
    meta: &mut ObjectMeta,
    options: &DeleteOptions,
    orphans_by_default: bool,
) -> bool {
    let wanted = propagation_finalizers(options, meta.finalizers.as_deref(), orphans_by_default);
    let changes = wanted.as_ref() != meta.finalizers.as_ref()
        && !(wanted.as_ref().is_none_or(Vec::is_empty)
            && meta.finalizers.as_ref().is_none_or(Vec::is_empty));
    if changes {
        meta.finalizers = wanted;
    }
    changes
}

/// What a delete of one object depends on besides its metadata: its kind's rules, and what
/// the strategy says of the object.
struct DeletionRules {
    /// The object waits for its own finalization (a namespace's `spec.finalizers`).
    awaits_finalization: bool,
    /// The grace period, in seconds (0: at once).
    grace: i64,
    /// The kind is deleted gracefully (pods): marked deleting even when it goes at once.
    graceful: bool,
    /// The kind marks only a deletionTimestamp (namespaces, CRDs).
    own_rules: bool,
    /// The delete changed the object's finalizers.
    finalizers_change: bool,
}

/// What a delete does to the stored object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum DeletionStep {
    /// Already marked: a repeated delete changes nothing.
    Unchanged,
    /// Stored marked deleting, kept for its finalizers or grace period.
    Keep,
    /// Removed (stored marked first when `mark_first`, so watchers see it).
    Remove { mark_first: bool },
}

/// Decides a delete from the stored object's metadata and `rules`, and marks the metadata
/// for it (deletionTimestamp, grace period, generation); also whether the deletion starts
/// now (the strategy's `prepare_for_delete` runs then).
fn plan_deletion(meta: &mut ObjectMeta, rules: &DeletionRules) -> (DeletionStep, bool) {
    let has_finalizers = meta.finalizers.as_ref().is_some_and(|f| !f.is_empty());
    let finalizing = has_finalizers || rules.awaits_finalization;
    let grace = rules.grace;
    let deleting = meta.deletion_timestamp.is_some();
    let shortens = deleting
        && meta
            .deletion_grace_period_seconds
            .is_some_and(|current| grace < current);
    let keep = finalizing || grace > 0;
    if deleting && keep && !shortens && !rules.finalizers_change {
        return (DeletionStep::Unchanged, false);
    }
    let mark_first = !keep && !deleting && rules.graceful;
    let mut newly_marked = false;
    if keep || mark_first {
        let generic_marks = !rules.own_rules;
        if !deleting || shortens {
            meta.deletion_timestamp = Some(time::seconds_from_now(grace));
            if generic_marks {
                meta.deletion_grace_period_seconds = Some(grace);
            }
        }
        if !deleting {
            // Marking a deletion is a change of the object's intent.
            if let Some(generation) = meta.generation.filter(|g| *g > 0 && generic_marks) {
                meta.generation = Some(generation + 1);
            }
            newly_marked = true;
        }
    }
    let step = if keep {
        DeletionStep::Keep
    } else {
        DeletionStep::Remove { mark_first }
    };
    (step, newly_marked)
}

/// The finalizers an object gets when deleted with `options`: `orphan` for Orphan (or
/// `orphanDependents: true`), `foregroundDeletion` for Foreground, neither for Background
/// (or `orphanDependents: false`); without a policy they stay as they are, unless the kind
/// orphans by default and they name neither.
fn propagation_finalizers(
    options: &DeleteOptions,
    current: Option<&[String]>,
    orphans_by_default: bool,
) -> Option<Vec<String>> {
    let policy = match (
        options.propagation_policy.as_deref(),
        options.orphan_dependents,
    ) {
        (Some(p), _) => p,
        (None, Some(true)) => "Orphan",
        (None, Some(false)) => "Background",
        // No policy: the object's own finalizers decide, else the kind's default.
        (None, None)
            if orphans_by_default
                && !current
                    .unwrap_or_default()
                    .iter()
                    .any(|f| f == ORPHAN_FINALIZER || f == FOREGROUND_FINALIZER) =>
        {
            "Orphan"
        }
        (None, None) => return current.map(<[String]>::to_vec),
    };
    let mut out: Vec<String> = current
        .unwrap_or_default()
        .iter()
        .filter(|f| *f != ORPHAN_FINALIZER && *f != FOREGROUND_FINALIZER)
        .cloned()
        .collect();
    match policy {
        "Orphan" => out.push(ORPHAN_FINALIZER.into()),
        "Foreground" => out.push(FOREGROUND_FINALIZER.into()),
        _ => {}
    }
    (!out.is_empty() || current.is_some()).then_some(out)
}

/// Empty metadata lists and maps are absent, as upstream's encoding omits them (a client that
/// removes the last finalizer or owner reference reads the field as gone).
/// [`omit_empty_metadata`] and no resourceVersion, on an object's tree.
fn stored_metadata(tree: &mut serde_json::Value) {
    let Some(meta) = tree.get_mut("metadata").and_then(|m| m.as_object_mut()) else {
        return;
    };
    meta.remove("resourceVersion");
    meta.retain(|field, value| match field.as_str() {
        "labels" | "annotations" => value.as_object().is_none_or(|m| !m.is_empty()),
        "finalizers" | "ownerReferences" | "managedFields" => {
            value.as_array().is_none_or(|a| !a.is_empty())
        }
        _ => true,
    });
}

fn omit_empty_metadata(meta: &mut ObjectMeta) {
    if meta.labels.as_ref().is_some_and(|l| l.is_empty()) {
        meta.labels = None;
    }
    if meta.annotations.as_ref().is_some_and(|a| a.is_empty()) {
        meta.annotations = None;
    }
    if meta.finalizers.as_ref().is_some_and(Vec::is_empty) {
        meta.finalizers = None;
    }
    if meta.owner_references.as_ref().is_some_and(Vec::is_empty) {
        meta.owner_references = None;
    }
    if meta.managed_fields.as_ref().is_some_and(Vec::is_empty) {
        meta.managed_fields = None;
    }
}
