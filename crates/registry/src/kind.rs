//! A store's object type behind `dyn`, so that the store's verbs compile once rather than
//! once per kind.
//!
//! Every verb of [`crate::GenericStore`] is written against [`AnyObject`] and
//! [`KindStrategy`]; only what truly depends on the type (its JSON code, its strategy's
//! hooks) is compiled per kind, where the store is built. With 57 built-in kinds the verbs'
//! code made up a third of the registry's compiled code when it was generic.

use std::any::Any;

use capstan_meta::v1::ObjectMeta;
use capstan_meta::{FieldError, HasMetadata, Strategy};

/// An object of a store's kind; its type is known to the store's [`KindStrategy`].
/// Passed around as an [`Obj`].
pub(crate) trait AnyObject: HasMetadata + Send + Sync + 'static {
    /// A copy of the object, boxed.
    fn boxed_clone(&self) -> Obj;
    /// The object as a JSON tree.
    fn to_value(&self) -> serde_json::Result<serde_json::Value>;
    /// The object's JSON text.
    fn to_vec(&self) -> serde_json::Result<Vec<u8>>;
    /// The object, for downcasting to its type.
    fn as_any(&self) -> &dyn Any;
    /// The object, for downcasting to its type.
    fn as_any_mut(&mut self) -> &mut (dyn Any + Send);
    /// The object, for downcasting to its type.
    fn into_any(self: Box<Self>) -> Box<dyn Any>;
}

/// An object of a store's kind, boxed. A type of its own, not `Box<dyn AnyObject>`: a
/// `&mut Box<dyn AnyObject>` given where a `&mut dyn AnyObject` is wanted is taken for an
/// unsizing of the box itself, so the store's code passes `&Obj` throughout.
pub(crate) struct Obj(Box<dyn AnyObject>);

impl Obj {
    /// `obj`, boxed.
    pub(crate) fn new<T: capstan_meta::ApiObject>(obj: T) -> Self {
        Self(Box::new(obj))
    }
}

impl std::ops::Deref for Obj {
    type Target = dyn AnyObject;

    fn deref(&self) -> &Self::Target {
        &*self.0
    }
}

impl std::ops::DerefMut for Obj {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut *self.0
    }
}

impl<T: capstan_meta::ApiObject> AnyObject for T {
    fn boxed_clone(&self) -> Obj {
        Obj::new(self.clone())
    }

    fn to_value(&self) -> serde_json::Result<serde_json::Value> {
        serde_json::to_value(self)
    }

    fn to_vec(&self) -> serde_json::Result<Vec<u8>> {
        serde_json::to_vec(self)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn as_any_mut(&mut self) -> &mut (dyn Any + Send) {
        self
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

impl Clone for Obj {
    fn clone(&self) -> Self {
        self.boxed_clone()
    }
}

/// An object as admission reads it, as JSON: a store's own, or a subresource's (a Binding, a
/// Scale, ...).
pub(crate) trait AsJson: Sync {
    /// The object as a JSON tree.
    fn as_json(&self) -> serde_json::Result<serde_json::Value>;
}

impl AsJson for Obj {
    fn as_json(&self) -> serde_json::Result<serde_json::Value> {
        self.to_value()
    }
}

/// A subresource's own object, which is not a store's.
pub(crate) struct Foreign<T>(pub(crate) T);

impl<T: serde::Serialize + Sync> AsJson for Foreign<T> {
    fn as_json(&self) -> serde_json::Result<serde_json::Value> {
        serde_json::to_value(&self.0)
    }
}

/// `obj` as the `T` it is. Only a store's own objects reach its strategy, so another type
/// is a bug in the store.
pub(crate) fn typed<T: 'static>(obj: &Obj) -> &T {
    obj.as_any()
        .downcast_ref()
        .expect("an object of the store's own kind")
}

/// [`typed`], to change.
pub(crate) fn typed_mut<T: 'static>(obj: &mut Obj) -> &mut T {
    obj.as_any_mut()
        .downcast_mut()
        .expect("an object of the store's own kind")
}

/// [`typed`], owned.
pub(crate) fn into_typed<T: 'static>(obj: Obj) -> T {
    *obj.0
        .into_any()
        .downcast()
        .expect("an object of the store's own kind")
}

/// A [`Strategy`] over [`AnyObject`]s: each method is the same-named strategy hook.
pub(crate) trait KindStrategy: Send + Sync + 'static {
    fn strategic_merge(&self) -> bool;
    fn prune(&self, obj: &mut Obj) -> Vec<String>;
    fn default(&self, obj: &mut Obj);
    fn on_read(&self, obj: &mut Obj);
    fn prepare_for_create_warned(&self, obj: &mut Obj) -> Vec<String>;
    fn prepare_for_update(&self, new: &mut Obj, old: &Obj);
    fn validate(&self, obj: &Obj) -> Vec<FieldError>;
    fn validate_update(&self, new: &Obj, old: &Obj) -> Vec<FieldError>;
    fn warnings(&self, new: &Obj, old: Option<&Obj>) -> Vec<String>;
    fn name_rule(&self) -> fn(&str) -> Vec<String>;
    fn allow_create_on_update(&self) -> bool;
    fn field(&self, obj: &Obj, field: &str) -> Option<String>;
    fn has_status(&self) -> bool;
    fn copy_status(&self, to: &mut Obj, from: &Obj);
    fn copy_approval(&self, to: &mut Obj, from: &Obj);
    fn status_metadata(&self, sent: &ObjectMeta, stored: &ObjectMeta) -> ObjectMeta;
    fn copy_resize(&self, to: &mut Obj, from: &Obj);
    fn validate_resize_update(&self, new: &Obj, old: &Obj) -> Vec<FieldError>;
    fn copy_ephemeral_containers(&self, to: &mut Obj, from: &Obj);
    fn validate_ephemeral_containers_update(&self, new: &Obj, old: &Obj) -> Vec<FieldError>;
    fn grace_period(&self, obj: &Obj, requested: Option<i64>) -> i64;
    fn awaits_finalization(&self, obj: &Obj) -> bool;
    fn forbid_delete(&self, obj: &Obj) -> Option<String>;
    fn prepare_for_delete(&self, obj: &mut Obj);
    fn returns_deleted_object(&self) -> bool;
    fn deletes_gracefully(&self) -> bool;
    fn own_deletion_rules(&self) -> bool;
    fn orphans_by_default(&self) -> bool;
}

impl<S: Strategy> KindStrategy for S {
    fn strategic_merge(&self) -> bool {
        Strategy::strategic_merge(self)
    }

    fn prune(&self, obj: &mut Obj) -> Vec<String> {
        Strategy::prune(self, typed_mut(obj))
    }

    fn default(&self, obj: &mut Obj) {
        Strategy::default(self, typed_mut(obj))
    }

    fn on_read(&self, obj: &mut Obj) {
        Strategy::on_read(self, typed_mut(obj))
    }

    fn prepare_for_create_warned(&self, obj: &mut Obj) -> Vec<String> {
        Strategy::prepare_for_create_warned(self, typed_mut(obj))
    }

    fn prepare_for_update(&self, new: &mut Obj, old: &Obj) {
        Strategy::prepare_for_update(self, typed_mut(new), typed(old))
    }

    fn validate(&self, obj: &Obj) -> Vec<FieldError> {
        Strategy::validate(self, typed(obj))
    }

    fn validate_update(&self, new: &Obj, old: &Obj) -> Vec<FieldError> {
        Strategy::validate_update(self, typed(new), typed(old))
    }

    fn warnings(&self, new: &Obj, old: Option<&Obj>) -> Vec<String> {
        Strategy::warnings(self, typed(new), old.map(typed))
    }

    fn name_rule(&self) -> fn(&str) -> Vec<String> {
        Strategy::name_rule(self)
    }

    fn allow_create_on_update(&self) -> bool {
        Strategy::allow_create_on_update(self)
    }

    fn field(&self, obj: &Obj, field: &str) -> Option<String> {
        Strategy::field(self, typed(obj), field)
    }

    fn has_status(&self) -> bool {
        Strategy::has_status(self)
    }

    fn copy_status(&self, to: &mut Obj, from: &Obj) {
        Strategy::copy_status(self, typed_mut(to), typed(from))
    }

    fn copy_approval(&self, to: &mut Obj, from: &Obj) {
        Strategy::copy_approval(self, typed_mut(to), typed(from))
    }

    fn status_metadata(&self, sent: &ObjectMeta, stored: &ObjectMeta) -> ObjectMeta {
        Strategy::status_metadata(self, sent, stored)
    }

    fn copy_resize(&self, to: &mut Obj, from: &Obj) {
        Strategy::copy_resize(self, typed_mut(to), typed(from))
    }

    fn validate_resize_update(&self, new: &Obj, old: &Obj) -> Vec<FieldError> {
        Strategy::validate_resize_update(self, typed(new), typed(old))
    }

    fn copy_ephemeral_containers(&self, to: &mut Obj, from: &Obj) {
        Strategy::copy_ephemeral_containers(self, typed_mut(to), typed(from))
    }

    fn validate_ephemeral_containers_update(&self, new: &Obj, old: &Obj) -> Vec<FieldError> {
        Strategy::validate_ephemeral_containers_update(self, typed(new), typed(old))
    }

    fn grace_period(&self, obj: &Obj, requested: Option<i64>) -> i64 {
        Strategy::grace_period(self, typed(obj), requested)
    }

    fn awaits_finalization(&self, obj: &Obj) -> bool {
        Strategy::awaits_finalization(self, typed(obj))
    }

    fn forbid_delete(&self, obj: &Obj) -> Option<String> {
        Strategy::forbid_delete(self, typed(obj))
    }

    fn prepare_for_delete(&self, obj: &mut Obj) {
        Strategy::prepare_for_delete(self, typed_mut(obj))
    }

    fn returns_deleted_object(&self) -> bool {
        Strategy::returns_deleted_object(self)
    }

    fn deletes_gracefully(&self) -> bool {
        Strategy::deletes_gracefully(self)
    }

    fn own_deletion_rules(&self) -> bool {
        Strategy::own_deletion_rules(self)
    }

    fn orphans_by_default(&self) -> bool {
        Strategy::orphans_by_default(self)
    }
}

/// The decoders of a kind, as function pointers taken where its store is built.
///
/// Calling serde for the type from generic code compiled the type's whole deserializing
/// code (every nested type: metadata, pod specs, ...) again in each crate that called it;
/// through these pointers it is compiled once per type, beside the store's constructor.
#[derive(Clone, Copy)]
pub(crate) struct KindJson {
    /// A request body's JSON, telling of the fields the type does not declare; with a callback
    /// that does nothing, any JSON of the kind ([`Self::decode`]).
    pub(crate) checked: crate::codec::Checked<Obj>,
    /// Trees read and kept up to date, for the kinds that compile the code for it (see
    /// [`crate::GenericStore::reading_trees`]); the others read a tree's bytes with
    /// `decode` and make each tree anew.
    pub(crate) trees: Option<Trees>,
}

/// A kind's code between its objects and their JSON trees, and its plain decoder.
#[derive(Clone, Copy)]
pub(crate) struct Trees {
    /// An admitted document straight from its tree.
    pub(crate) read: fn(&serde_json::Value) -> serde_json::Result<Obj>,
    /// Brings a tree made earlier up to date with the object (see
    /// [`crate::tree_sync::sync_tree`]).
    pub(crate) sync: fn(&Obj, &mut serde_json::Value) -> serde_json::Result<()>,
    /// A stored or cached object's JSON, read without the body decoder's unknown-field
    /// tracking (see [`KindJson::decode`]).
    pub(crate) plain: fn(&[u8]) -> serde_json::Result<Obj>,
}

impl Trees {
    /// `T`'s tree code, compiled where this is called.
    pub(crate) fn of<T: capstan_meta::ApiObject>() -> Self {
        Self {
            read: |tree| Ok(Obj::new(T::deserialize(tree)?)),
            sync: |obj, tree| crate::tree_sync::sync_tree(typed::<T>(obj), tree),
            plain: |bytes| Ok(Obj::new(serde_json::from_slice::<T>(bytes)?)),
        }
    }
}

impl KindJson {
    /// A stored or cached object's JSON. The kinds that keep trees (written most) have a
    /// plain decoder for it: a pod with its managedFields read 15% faster than through the
    /// body decoder (`cargo bench -p capstan-registry --bench pod_write`, `stored_to_*`), for
    /// the values the watch cache takes in that no write here primed it with and the reads
    /// from the store (an update or patch from the cache's copy reads it into a tree instead,
    /// see `KindStore::decode_base_tree`). The others use the body decoder with no one told
    /// of unknown fields: a second decoder for every built-in type was its deserializing code
    /// compiled once more (a tenth of the registry's code).
    pub(crate) fn decode(&self, bytes: &[u8]) -> serde_json::Result<Obj> {
        match self.trees {
            Some(trees) => (trees.plain)(bytes),
            None => (self.checked)(bytes, &mut |_| {}),
        }
    }

    /// `T`'s decoders, compiled where this is called.
    pub(crate) fn of<T: capstan_meta::ApiObject>() -> Self {
        Self {
            checked: |bytes, unknown| Ok(Obj::new(crate::codec::checked::<T>(bytes, unknown)?)),
            trees: None,
        }
    }
}
