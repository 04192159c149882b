//! JSON values read through the upstream schema: which parts are structs merged field by
//! field, maps merged by entry, lists merged by key or by value, and which are atomic leaves.
//! On top of that: the field set a value sets, the comparison of two values, the apply merge
//! and the removal of a field set.

use capstan_negotiation::schema::{Field, FieldType, ListType, Message, Schema, Shape};
use serde_json::{Map, Value};

use crate::Error;
use crate::fieldset::{FieldSet, PathElement, canonical, canonical_object, prefixed};

/// How a value at some place in an object merges.
#[derive(Debug, Clone, Copy)]
pub enum Ty<'s> {
    /// One value, owned and replaced whole: scalars, atomic lists, maps and structs, and
    /// fields the schema does not know.
    Leaf,
    /// A struct: merged field by field.
    Struct(&'s Message),
    /// A map field: merged entry by entry, the entries' type given by the field.
    Map(&'s Field),
    /// A list that is a set or an associative list.
    List(&'s Field),
}

/// The schema and the root type of one kind.
#[derive(Debug, Clone, Copy)]
pub struct Typed<'s> {
    schema: &'s Schema,
    root: &'s Message,
}

impl<'s> Typed<'s> {
    /// The typed view of `api_version`/`kind`, when the schema knows the kind.
    pub fn for_kind(schema: &'s Schema, api_version: &str, kind: &str) -> Option<Self> {
        let index = schema.kind(api_version, kind)?;
        Some(Self {
            schema,
            root: schema.message(index),
        })
    }

    /// The typed view of the message at `index` of `schema`.
    pub fn at(schema: &'s Schema, index: usize) -> Self {
        Self {
            schema,
            root: schema.message(index),
        }
    }

    /// The kind's message type.
    pub fn root(&self) -> Ty<'s> {
        Ty::Struct(self.root)
    }

    /// The root message.
    pub fn message(&self) -> &'s Message {
        self.root
    }

    /// The schema.
    pub fn schema(&self) -> &'s Schema {
        self.schema
    }

    /// The type of the values of a message type.
    fn element(&self, ty: FieldType) -> Ty<'s> {
        match ty {
            FieldType::Message(i) => {
                let message = self.schema.message(i);
                if message.special.is_some() || message.atomic {
                    Ty::Leaf
                } else {
                    Ty::Struct(message)
                }
            }
            _ => Ty::Leaf,
        }
    }

    /// The type of a field's value.
    pub fn field_type(&self, field: &'s Field) -> Ty<'s> {
        match field.shape {
            Shape::Repeated if field.list_type == ListType::Atomic => Ty::Leaf,
            Shape::Repeated => Ty::List(field),
            Shape::Map(..) if field.atomic => Ty::Leaf,
            Shape::Map(..) => Ty::Map(field),
            Shape::Single => match field.ty {
                FieldType::Message(i) => {
                    let message = self.schema.message(i);
                    if message.special.is_some() || field.atomic {
                        Ty::Leaf
                    } else {
                        Ty::Struct(message)
                    }
                }
                _ => Ty::Leaf,
            },
        }
    }

    /// The type of one item of a list or entry of a map field.
    pub fn item_type(&self, field: &'s Field) -> Ty<'s> {
        match field.shape {
            Shape::Map(_, value) => self.element(value),
            _ => self.element(field.ty),
        }
    }

    /// The field named `key` of a struct (looking through fields embedded inline).
    pub fn lookup(&self, message: &'s Message, key: &str) -> Option<&'s Field> {
        for field in &message.fields {
            if field.inline {
                if let FieldType::Message(i) = field.ty
                    && let Some(found) = self.lookup(self.schema.message(i), key)
                {
                    return Some(found);
                }
            } else if field.name == key {
                return Some(field);
            }
        }
        None
    }

    /// The type of the child `key` of a value of type `ty` (maps: the entry type).
    pub fn child(&self, ty: Ty<'s>, key: &str) -> Ty<'s> {
        match ty {
            Ty::Struct(message) => self
                .lookup(message, key)
                .map_or(Ty::Leaf, |f| self.field_type(f)),
            Ty::Map(field) => self.item_type(field),
            Ty::Leaf | Ty::List(_) => Ty::Leaf,
        }
    }

    /// The path element naming `item` in a list of `field`.
    pub fn item_element(&self, field: &Field, item: &Value) -> Result<PathElement, Error> {
        match &field.list_type {
            ListType::Set => Ok(PathElement::Value(canonical(item))),
            ListType::Map(keys) => {
                let mut named = Vec::with_capacity(keys.len());
                for key in keys {
                    let value = item.get(key).or_else(|| {
                        let FieldType::Message(i) = field.ty else {
                            return None;
                        };
                        self.lookup(self.schema.message(i), key)
                            .and_then(|f| f.default.as_ref())
                    });
                    // A key field left out (and without a default) is left out of the
                    // item's key, as upstream v1.36 does: validation reports it where it is
                    // required (a container's name), and optional keys (a device status's
                    // `shareID`) may be absent.
                    if let Some(value) = value {
                        named.push((key.as_str(), value));
                    }
                }
                Ok(PathElement::Key(canonical_object(named)))
            }
            ListType::Atomic => Err(Error::Invalid(format!(
                "{}: an atomic list has no item paths",
                field.name
            ))),
        }
    }

    /// The items of a list value with their path elements (later duplicates dropped).
    fn items<'v>(
        &self,
        field: &Field,
        list: Option<&'v Value>,
    ) -> Result<Vec<(PathElement, &'v Value)>, Error> {
        let mut out: Vec<(PathElement, &Value)> = Vec::new();
        for item in list.and_then(Value::as_array).into_iter().flatten() {
            let element = self.item_element(field, item)?;
            if !out.iter().any(|(e, _)| *e == element) {
                out.push((element, item));
            }
        }
        Ok(out)
    }

    /// The paths a value sets (what an applier owns for applying it).
    pub fn field_set(&self, ty: Ty<'s>, value: &Value) -> Result<FieldSet, Error> {
        let mut out = FieldSet::new();
        self.collect(ty, value, &mut out)?;
        Ok(out)
    }

    fn collect(&self, ty: Ty<'s>, value: &Value, out: &mut FieldSet) -> Result<(), Error> {
        match ty {
            Ty::Leaf => {}
            Ty::Struct(_) | Ty::Map(_) => {
                let Some(map) = value.as_object() else {
                    return Ok(());
                };
                for (key, child) in map {
                    let child_ty = self.child(ty, key);
                    let node = out.entry(PathElement::Field(key.clone()));
                    self.collect(child_ty, child, &mut node.children)?;
                    let empty = child.is_null() || child.as_object().is_some_and(Map::is_empty);
                    if matches!(ty, Ty::Map(_)) || matches!(child_ty, Ty::Leaf) || empty {
                        node.member = true;
                    }
                    if !node.member && node.children.is_empty() {
                        out.remove_subtree(&[PathElement::Field(key.clone())]);
                    }
                }
            }
            Ty::List(field) => {
                let item_ty = self.item_type(field);
                for (element, item) in self.items(field, Some(value))? {
                    let node = out.entry(element);
                    node.member = true;
                    self.collect(item_ty, item, &mut node.children)?;
                }
            }
        }
        Ok(())
    }

    /// What changed from `old` to `new`.
    pub fn compare(&self, old: &Value, new: &Value) -> Result<Comparison, Error> {
        let mut out = Comparison::default();
        let mut path = Vec::new();
        self.compare_at(self.root(), Some(old), Some(new), &mut path, &mut out)?;
        Ok(out)
    }

    fn compare_at(
        &self,
        ty: Ty<'s>,
        old: Option<&Value>,
        new: Option<&Value>,
        path: &mut Vec<PathElement>,
        out: &mut Comparison,
    ) -> Result<(), Error> {
        let empty = |v: Option<&Value>| v.is_none_or(is_empty);
        let leaf = matches!(ty, Ty::Leaf) || (empty(old) && empty(new));
        if leaf {
            match (old, new) {
                (None, Some(_)) => out.added.insert(path),
                (Some(_), None) => out.removed.insert(path),
                (Some(a), Some(b)) if a != b => out.modified.insert(path),
                _ => {}
            }
            return Ok(());
        }
        if let (Some(old), Some(new)) = (old, new)
            && old == new
        {
            // Nothing below changed: an equality test walks it without building paths.
            return Ok(());
        }
        if let (None, Some(new)) = (old, new) {
            // A whole new struct, map or list: everything in it is added, built in one walk.
            let node = out.added.node_mut(path);
            node.member = true;
            self.added_below(ty, new, &mut node.children)?;
            return Ok(());
        }
        match ty {
            Ty::Struct(_) | Ty::Map(_) => {
                let no_map = Map::new();
                let old_map = old.and_then(Value::as_object).unwrap_or(&no_map);
                let new_map = new.and_then(Value::as_object).unwrap_or(&no_map);
                for (key, old_child) in old_map {
                    path.push(PathElement::Field(key.clone()));
                    let child_ty = self.child(ty, key);
                    self.compare_at(child_ty, Some(old_child), new_map.get(key), path, out)?;
                    path.pop();
                }
                for (key, new_child) in new_map {
                    if old_map.contains_key(key) {
                        continue;
                    }
                    path.push(PathElement::Field(key.clone()));
                    self.compare_at(self.child(ty, key), None, Some(new_child), path, out)?;
                    path.pop();
                }
            }
            Ty::List(field) => {
                let item_ty = self.item_type(field);
                let old_items = self.items(field, old)?;
                let new_items = self.items(field, new)?;
                for (element, old_item) in &old_items {
                    let new_item = new_items
                        .iter()
                        .find(|(e, _)| e == element)
                        .map(|(_, v)| *v);
                    path.push(element.clone());
                    self.compare_at(item_ty, Some(old_item), new_item, path, out)?;
                    path.pop();
                }
                for (element, new_item) in &new_items {
                    if old_items.iter().any(|(e, _)| e == element) {
                        continue;
                    }
                    path.push(element.clone());
                    self.compare_at(item_ty, None, Some(new_item), path, out)?;
                    path.pop();
                }
            }
            Ty::Leaf => unreachable!("leaves return above"),
        }
        // A struct, map or list that appears or disappears as a whole.
        match (old, new) {
            (None, Some(_)) => out.added.insert(path),
            (Some(_), None) => out.removed.insert(path),
            _ => {}
        }
        Ok(())
    }

    /// What `compare` reports as added below a new value of type `ty`: every leaf, and every
    /// struct, map, list item or empty value in it.
    fn added_below(&self, ty: Ty<'s>, value: &Value, out: &mut FieldSet) -> Result<(), Error> {
        match ty {
            Ty::Leaf => {}
            Ty::Struct(_) | Ty::Map(_) => {
                for (key, child) in value.as_object().into_iter().flatten() {
                    let child_ty = self.child(ty, key);
                    let node = out.entry(PathElement::Field(key.clone()));
                    node.member = true;
                    if !matches!(child_ty, Ty::Leaf) && !is_empty(child) {
                        self.added_below(child_ty, child, &mut node.children)?;
                    }
                }
            }
            Ty::List(field) => {
                let item_ty = self.item_type(field);
                for (element, item) in self.items(field, Some(value))? {
                    let node = out.entry(element);
                    node.member = true;
                    if !matches!(item_ty, Ty::Leaf) && !is_empty(item) {
                        self.added_below(item_ty, item, &mut node.children)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// [`Self::added_below`] written straight in `FieldsV1` form (the paths below a new value
    /// of type `ty`, every one a member), without the set between.
    pub(crate) fn added_fields_v1(
        &self,
        ty: Ty<'s>,
        value: &Value,
        out: &mut Map<String, Value>,
    ) -> Result<(), Error> {
        let add = |out: &mut Map<String, Value>, key: String, child_ty, child: &Value| {
            let mut inner = Map::new();
            if !matches!(child_ty, Ty::Leaf) && !is_empty(child) {
                self.added_fields_v1(child_ty, child, &mut inner)?;
            }
            if !inner.is_empty() {
                inner.insert(".".into(), Value::Object(Map::new()));
            }
            out.insert(key, Value::Object(inner));
            Ok(())
        };
        match ty {
            Ty::Leaf => {}
            Ty::Struct(_) | Ty::Map(_) => {
                for (key, child) in value.as_object().into_iter().flatten() {
                    add(out, prefixed("f:", key), self.child(ty, key), child)?;
                }
            }
            Ty::List(field) => {
                let item_ty = self.item_type(field);
                for (element, item) in self.items(field, Some(value))? {
                    add(out, element.encode(), item_ty, item)?;
                }
            }
        }
        Ok(())
    }

    /// `live` with `config` applied over it: the config's values win, structs and maps merge
    /// by field, associative lists and sets by item (the live order kept, new items after).
    /// Also returns the paths whose value the merge changed or added (what `compare` of live
    /// and merged would call modified or added), found on the way.
    pub fn merge(
        &self,
        ty: Ty<'s>,
        live: Option<Value>,
        config: &Value,
    ) -> Result<(Value, FieldSet), Error> {
        let mut changed = FieldSet::new();
        let mut path = Vec::new();
        let merged = self.merge_at(ty, live, config, &mut path, &mut changed)?;
        Ok((merged, changed))
    }

    fn merge_at(
        &self,
        ty: Ty<'s>,
        live: Option<Value>,
        config: &Value,
        path: &mut Vec<PathElement>,
        changed: &mut FieldSet,
    ) -> Result<Value, Error> {
        let leaf = match ty {
            Ty::Leaf => true,
            Ty::Struct(_) | Ty::Map(_) => !config.is_object(),
            Ty::List(_) => !config.is_array(),
        } || (is_empty(config) && live.as_ref().is_none_or(is_empty));
        if leaf {
            if live.as_ref() != Some(config) {
                changed.insert(path);
            }
            return Ok(config.clone());
        }
        if live.is_none() && !path.is_empty() {
            changed.insert(path);
        }
        match ty {
            Ty::Struct(_) | Ty::Map(_) => {
                let config_map = config.as_object().expect("checked above");
                let mut out = match live {
                    Some(Value::Object(map)) => map,
                    _ => Map::new(),
                };
                for (key, value) in config_map {
                    if value.is_null() {
                        out.remove(key);
                        continue;
                    }
                    path.push(PathElement::Field(key.clone()));
                    let current = out.get_mut(key).map(Value::take);
                    let merged =
                        self.merge_at(self.child(ty, key), current, value, path, changed)?;
                    path.pop();
                    out.insert(key.clone(), merged);
                }
                Ok(Value::Object(out))
            }
            Ty::List(field) => {
                let item_ty = self.item_type(field);
                let mut config_items = self.items(field, Some(config))?;
                let mut out = Vec::new();
                let live_items = match live {
                    Some(Value::Array(items)) => items,
                    _ => Vec::new(),
                };
                for item in live_items {
                    let element = self.item_element(field, &item)?;
                    match config_items.iter().position(|(e, _)| *e == element) {
                        Some(i) => {
                            let (element, applied) = config_items.swap_remove(i);
                            path.push(element);
                            out.push(self.merge_at(item_ty, Some(item), applied, path, changed)?);
                            path.pop();
                        }
                        None => out.push(item),
                    }
                }
                for (element, item) in config_items {
                    path.push(element);
                    out.push(self.merge_at(item_ty, None, item, path, changed)?);
                    path.pop();
                }
                Ok(Value::Array(out))
            }
            Ty::Leaf => unreachable!("leaves return above"),
        }
    }

    /// Removes every member path of `set` from `value` (a removed struct, map entry or list
    /// item takes what is below it along).
    pub fn remove(&self, ty: Ty<'s>, value: &mut Value, set: &FieldSet) -> Result<(), Error> {
        match ty {
            Ty::Leaf => {}
            Ty::Struct(_) | Ty::Map(_) => {
                let Some(map) = value.as_object_mut() else {
                    return Ok(());
                };
                for (element, node) in set.entries() {
                    let PathElement::Field(key) = element else {
                        continue;
                    };
                    if node.member {
                        map.remove(key);
                    } else if let Some(child) = map.get_mut(key) {
                        self.remove(self.child(ty, key), child, &node.children)?;
                    }
                }
            }
            Ty::List(field) => {
                let item_ty = self.item_type(field);
                let Some(items) = value.as_array_mut() else {
                    return Ok(());
                };
                let mut kept = Vec::with_capacity(items.len());
                for mut item in items.drain(..) {
                    let element = self.item_element(field, &item)?;
                    match set.get(&element) {
                        Some(node) if node.member => continue,
                        Some(node) => self.remove(item_ty, &mut item, &node.children)?,
                        None => {}
                    }
                    kept.push(item);
                }
                *items = kept;
            }
        }
        Ok(())
    }
}

/// Null, or an empty object or list: what upstream treats as an unset struct, map or list.
pub(crate) fn is_empty(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Object(m) => m.is_empty(),
        Value::Array(a) => a.is_empty(),
        _ => false,
    }
}

/// The paths that differ between two values.
#[derive(Debug, Default, Clone)]
pub struct Comparison {
    /// Set in the new value only.
    pub added: FieldSet,
    /// Set in both, with different values.
    pub modified: FieldSet,
    /// Set in the old value only.
    pub removed: FieldSet,
}

impl Comparison {
    /// The paths the new value sets differently (added or modified), and the removed ones;
    /// the sets are taken apart rather than copied (a create's added set is the whole object).
    pub fn into_changed(self) -> (FieldSet, FieldSet) {
        let mut changed = self.added;
        changed.union_with(&self.modified);
        (changed, self.removed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod() -> Typed<'static> {
        Typed::for_kind(Schema::upstream(), "v1", "Pod").unwrap()
    }

    #[test]
    fn field_sets_follow_the_list_types() {
        let t = pod();
        let set = t
            .field_set(
                t.root(),
                &json!({
                    "metadata": {"labels": {"app": "web"}, "finalizers": ["a"]},
                    "spec": {"containers": [{"name": "web", "image": "nginx", "args": ["-x"],
                              "ports": [{"containerPort": 80}]}],
                             "securityContext": {}}
                }),
            )
            .unwrap();
        assert_eq!(
            set.to_fields_v1(),
            json!({
                "f:metadata": {"f:labels": {"f:app": {}}, "f:finalizers": {"v:\"a\"": {}}},
                "f:spec": {
                    "f:containers": {"k:{\"name\":\"web\"}": {".": {}, "f:name": {}, "f:image": {}, "f:args": {},
                        "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}}}},
                    "f:securityContext": {}
                }
            })
        );
        // A key left out is left out of the item's key (validation reports required ones).
        let set = t
            .field_set(t.root(), &json!({"spec": {"containers": [{"image": "x"}]}}))
            .unwrap();
        assert_eq!(
            set.to_fields_v1(),
            json!({"f:spec": {"f:containers": {"k:{}": {".": {}, "f:image": {}}}}})
        );
    }

    #[test]
    fn compare_finds_added_modified_removed() {
        let t = pod();
        let old = json!({"metadata": {"labels": {"a": "1", "b": "2"}},
                         "spec": {"containers": [{"name": "c", "image": "v1"}]}});
        let new = json!({"metadata": {"labels": {"a": "1", "c": "3"}},
                         "spec": {"containers": [{"name": "c", "image": "v2"}, {"name": "d", "image": "v1"}]}});
        let cmp = t.compare(&old, &new).unwrap();
        let strings =
            |s: &FieldSet| -> Vec<String> { s.paths().iter().map(ToString::to_string).collect() };
        assert_eq!(strings(&cmp.removed), [".metadata.labels.b"]);
        assert_eq!(
            strings(&cmp.modified),
            [r#".spec.containers[name="c"].image"#]
        );
        assert_eq!(
            strings(&cmp.added),
            [
                ".metadata.labels.c",
                r#".spec.containers[name="d"]"#,
                r#".spec.containers[name="d"].image"#,
                r#".spec.containers[name="d"].name"#
            ]
        );
    }

    #[test]
    fn merge_and_remove() {
        let t = pod();
        let live = json!({"metadata": {"labels": {"a": "1"}, "finalizers": ["x"]},
                          "spec": {"containers": [{"name": "c", "image": "v1", "imagePullPolicy": "Always"}, {"name": "e", "image": "v1"}]}});
        let config = json!({"metadata": {"labels": {"b": "2"}, "finalizers": ["y"]},
                            "spec": {"containers": [{"name": "d", "image": "v9"}, {"name": "c", "image": "v2"}]}});
        let (mut merged, changed) = t.merge(t.root(), Some(live.clone()), &config).unwrap();
        let paths: Vec<String> = changed.paths().iter().map(ToString::to_string).collect();
        assert_eq!(
            paths,
            [
                ".metadata.finalizers[=\"y\"]",
                ".metadata.labels.b",
                r#".spec.containers[name="c"].image"#,
                r#".spec.containers[name="d"]"#,
                r#".spec.containers[name="d"].image"#,
                r#".spec.containers[name="d"].name"#,
            ]
        );
        assert_eq!(
            merged,
            json!({"metadata": {"labels": {"a": "1", "b": "2"}, "finalizers": ["x", "y"]},
                   "spec": {"containers": [{"name": "c", "image": "v2", "imagePullPolicy": "Always"}, {"name": "e", "image": "v1"}, {"name": "d", "image": "v9"}]}})
        );
        let mut gone = FieldSet::new();
        gone.insert(&[
            PathElement::Field("metadata".into()),
            PathElement::Field("labels".into()),
            PathElement::Field("a".into()),
        ]);
        gone.insert(&[
            PathElement::Field("spec".into()),
            PathElement::Field("containers".into()),
            PathElement::Key(r#"{"name":"e"}"#.into()),
        ]);
        gone.insert(&[
            PathElement::Field("spec".into()),
            PathElement::Field("containers".into()),
            PathElement::Key(r#"{"name":"c"}"#.into()),
            PathElement::Field("imagePullPolicy".into()),
        ]);
        t.remove(t.root(), &mut merged, &gone).unwrap();
        assert_eq!(
            merged,
            json!({"metadata": {"labels": {"b": "2"}, "finalizers": ["x", "y"]},
                   "spec": {"containers": [{"name": "c", "image": "v2"}, {"name": "d", "image": "v9"}]}})
        );
    }
}
