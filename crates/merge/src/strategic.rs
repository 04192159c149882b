//! Strategic merge patch: a JSON merge patch whose lists follow the patch strategy of their
//! field (`+patchStrategy=merge` lists merge by their `+patchMergeKey`, or by value for
//! scalars; every other list is replaced), with the directives `$patch` (`replace`,
//! `delete`, `merge`), `$retainKeys`, `$deleteFromPrimitiveList/<field>` and
//! `$setElementOrder/<field>`.
//!
//! Structs whose type the schema does not know (and maps) are merged key by key, their lists
//! replaced: what upstream does for fields without a declared strategy.

use capstan_negotiation::schema::{Field, FieldType, Message, Shape};
use serde_json::{Map, Value};

use crate::Error;
use crate::typed::Typed;

const DIRECTIVE: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const DELETE_FROM_PRIMITIVE: &str = "$deleteFromPrimitiveList/";
const SET_ELEMENT_ORDER: &str = "$setElementOrder/";

/// The type context of a JSON object while patching.
#[derive(Clone, Copy)]
enum Context<'s> {
    /// A message of the schema.
    Struct(&'s Message),
    /// The entries of a map field, of the field's value type.
    Map(&'s Field),
    /// Not known to the schema: maps merge, lists are replaced.
    Unknown,
}

/// Applies a strategic merge patch to `target` (the object as stored, in JSON), typed by
/// `typed` when the kind is known to the schema.
pub fn apply(typed: Option<&Typed<'_>>, target: &mut Value, patch: &[u8]) -> Result<(), Error> {
    let patch: Value = serde_json::from_slice(patch)
        .map_err(|e| Error::BadPatch(format!("the strategic merge patch is malformed: {e}")))?;
    let Value::Object(patch) = patch else {
        return Err(Error::BadPatch(
            "a strategic merge patch must be a JSON object".into(),
        ));
    };
    let Value::Object(map) = target else {
        return Err(Error::Invalid(
            "the object to patch is not a JSON object".into(),
        ));
    };
    let patcher = Patcher { typed };
    let context = typed.map_or(Context::Unknown, |t| Context::Struct(t.message()));
    patcher.merge_map(context, map, patch)
}

struct Patcher<'a, 's> {
    typed: Option<&'a Typed<'s>>,
}

impl<'s> Patcher<'_, 's> {
    /// The field `key` of a struct context and the context of its value when it is an object.
    fn child(&self, context: Context<'s>, key: &str) -> (Option<&'s Field>, Context<'s>) {
        let Some(typed) = self.typed else {
            return (None, Context::Unknown);
        };
        match context {
            Context::Struct(message) => match typed.lookup(message, key) {
                Some(field) => (Some(field), self.value_context(field)),
                None => (None, Context::Unknown),
            },
            Context::Map(field) => (None, self.message_context(map_value(field))),
            Context::Unknown => (None, Context::Unknown),
        }
    }

    fn value_context(&self, field: &'s Field) -> Context<'s> {
        match field.shape {
            Shape::Map(..) => Context::Map(field),
            _ => self.message_context(field.ty),
        }
    }

    fn message_context(&self, ty: FieldType) -> Context<'s> {
        match (self.typed, ty) {
            (Some(typed), FieldType::Message(i)) => {
                let message = typed.schema().message(i);
                if message.special.is_some() {
                    Context::Unknown
                } else {
                    Context::Struct(message)
                }
            }
            _ => Context::Unknown,
        }
    }

    fn merge_map(
        &self,
        context: Context<'s>,
        target: &mut Map<String, Value>,
        mut patch: Map<String, Value>,
    ) -> Result<(), Error> {
        match patch.remove(DIRECTIVE) {
            None => {}
            Some(Value::String(d)) if d == "merge" => {}
            Some(Value::String(d)) if d == "replace" => {
                strip_directives(&mut patch);
                *target = patch;
                return Ok(());
            }
            Some(Value::String(d)) if d == "delete" => {
                target.clear();
                return Ok(());
            }
            Some(other) => return Err(Error::Invalid(format!("unknown patch type: {other}"))),
        }
        if let Some(keys) = patch.remove(RETAIN_KEYS) {
            let Value::Array(keys) = keys else {
                return Err(Error::Invalid(format!(
                    "$retainKeys must be a list, found {keys}"
                )));
            };
            let mut keep = Vec::with_capacity(keys.len());
            for key in keys {
                match key {
                    Value::String(s) => keep.push(s),
                    other => {
                        return Err(Error::Invalid(format!(
                            "$retainKeys must list strings, found {other}"
                        )));
                    }
                }
            }
            target.retain(|k, _| keep.contains(k));
        }
        let mut orders = Vec::new();
        for (key, value) in patch {
            if let Some(field) = key.strip_prefix(SET_ELEMENT_ORDER) {
                orders.push((field.to_string(), value));
                continue;
            }
            if let Some(field) = key.strip_prefix(DELETE_FROM_PRIMITIVE) {
                let Value::Array(remove) = value else {
                    return Err(Error::Invalid(format!("{key} must be a list")));
                };
                if let Some(Value::Array(list)) = target.get_mut(field) {
                    list.retain(|v| !remove.contains(v));
                }
                continue;
            }
            let (field, child) = self.child(context, &key);
            match value {
                Value::Null => {
                    target.remove(&key);
                }
                Value::Object(mut sub) => {
                    if sub.get(DIRECTIVE).and_then(Value::as_str) == Some("delete") {
                        target.remove(&key);
                        continue;
                    }
                    match target.get_mut(&key) {
                        Some(Value::Object(existing)) => self.merge_map(child, existing, sub)?,
                        _ => {
                            let mut fresh = Map::new();
                            if sub.contains_key(DIRECTIVE) || sub.contains_key(RETAIN_KEYS) {
                                self.merge_map(child, &mut fresh, sub)?;
                            } else {
                                strip_directives(&mut sub);
                                fresh = sub;
                            }
                            target.insert(key, Value::Object(fresh));
                        }
                    }
                }
                Value::Array(items) => {
                    let merged = match field.filter(|f| f.patch.merge && !f.patch.replace) {
                        Some(field) => {
                            let existing = match target.remove(&key) {
                                Some(Value::Array(list)) => list,
                                _ => Vec::new(),
                            };
                            self.merge_list(field, existing, items)?
                        }
                        None => replace_list(items),
                    };
                    target.insert(key, Value::Array(merged));
                }
                scalar => {
                    target.insert(key, scalar);
                }
            }
        }
        for (key, order) in orders {
            let (field, _) = self.child(context, &key);
            let Value::Array(order) = order else {
                return Err(Error::Invalid(format!(
                    "{SET_ELEMENT_ORDER}{key} must be a list"
                )));
            };
            if let (Some(field), Some(Value::Array(list))) = (field, target.get_mut(&key)) {
                reorder(field, list, &order);
            }
        }
        Ok(())
    }

    /// Merges the items of a `patchStrategy=merge` list.
    fn merge_list(
        &self,
        field: &'s Field,
        mut existing: Vec<Value>,
        patch: Vec<Value>,
    ) -> Result<Vec<Value>, Error> {
        let Some(key) = field.patch.merge_key.as_deref() else {
            // A set of scalars: the patch's values are added.
            let server: Vec<Value> = existing.clone();
            let patched: Vec<Value> = patch.clone();
            for item in patch {
                if !existing.contains(&item) {
                    existing.push(item);
                }
            }
            return Ok(upstream_order(existing, &patched, &server, |v| v.clone()));
        };
        let item_context = self.message_context(field.ty);
        let replace = patch.iter().any(|item| {
            item.get(DIRECTIVE).and_then(Value::as_str) == Some("replace")
                && item.as_object().is_some_and(|m| m.len() == 1)
        });
        if replace {
            return Ok(replace_list(patch));
        }
        let identity = |item: &Value| item.get(key).cloned().unwrap_or(Value::Null);
        let server: Vec<Value> = existing.iter().map(identity).collect();
        let patched: Vec<Value> = patch
            .iter()
            .filter(|item| item.get(DIRECTIVE).and_then(Value::as_str) != Some("delete"))
            .map(identity)
            .collect();
        for item in patch {
            let Value::Object(mut item) = item else {
                return Err(Error::Invalid(format!(
                    "{}: the items of a list merged by {key:?} must be objects",
                    field.name
                )));
            };
            let Some(id) = item.get(key).cloned() else {
                return Err(Error::Invalid(format!(
                    "map: {} does not contain declared merge key: {key}",
                    Value::Object(item)
                )));
            };
            let position = existing.iter().position(|e| e.get(key) == Some(&id));
            match item.get(DIRECTIVE).and_then(Value::as_str) {
                Some("delete") => {
                    if let Some(i) = position {
                        existing.remove(i);
                    }
                    continue;
                }
                Some("replace") => {
                    item.remove(DIRECTIVE);
                    strip_directives(&mut item);
                    match position {
                        Some(i) => existing[i] = Value::Object(item),
                        None => existing.push(Value::Object(item)),
                    }
                    continue;
                }
                _ => {}
            }
            match position.map(|i| &mut existing[i]) {
                Some(Value::Object(current)) => self.merge_map(item_context, current, item)?,
                _ => {
                    let mut fresh = Map::new();
                    self.merge_map(item_context, &mut fresh, item)?;
                    existing.push(Value::Object(fresh));
                }
            }
        }
        Ok(upstream_order(existing, &patched, &server, identity))
    }
}

/// A merged list in upstream's order: the items the patch names in the patch's order, the
/// others in their stored order, interleaved so that two stored items keep their stored order
/// and an item new to the list comes before the stored item it meets (a container added by a
/// patch goes first).
fn upstream_order(
    merged: Vec<Value>,
    patched: &[Value],
    server: &[Value],
    identity: impl Fn(&Value) -> Value,
) -> Vec<Value> {
    let position = |ids: &[Value], item: &Value| {
        let id = identity(item);
        ids.iter().position(|i| *i == id)
    };
    let (mut from_patch, from_server): (Vec<Value>, Vec<Value>) = merged
        .into_iter()
        .partition(|item| position(patched, item).is_some());
    from_patch.sort_by_key(|item| position(patched, item));
    let mut out = Vec::with_capacity(from_patch.len() + from_server.len());
    let mut left = from_patch.into_iter().peekable();
    let mut right = from_server.into_iter().peekable();
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(l), Some(r)) => match (position(server, l), position(server, r)) {
                (Some(li), Some(ri)) => li < ri,
                _ => true,
            },
        };
        let next = if take_left { left.next() } else { right.next() };
        out.extend(next);
    }
    out
}

/// The value type of a map field.
fn map_value(field: &Field) -> FieldType {
    match field.shape {
        Shape::Map(_, value) => value,
        _ => field.ty,
    }
}

/// A replaced list: its items as given, directive-only items dropped.
fn replace_list(items: Vec<Value>) -> Vec<Value> {
    items
        .into_iter()
        .filter(
            |item| !matches!(item, Value::Object(m) if m.len() == 1 && m.contains_key(DIRECTIVE)),
        )
        .map(|mut item| {
            if let Value::Object(m) = &mut item {
                strip_directives(m);
            }
            item
        })
        .collect()
}

/// Puts the items named in `order` first, in that order; the others follow as they were.
fn reorder(field: &Field, list: &mut Vec<Value>, order: &[Value]) {
    let identity = |item: &Value| -> Value {
        match field.patch.merge_key.as_deref() {
            Some(key) => item.get(key).cloned().unwrap_or(Value::Null),
            None => item.clone(),
        }
    };
    let wanted: Vec<Value> = order.iter().map(identity).collect();
    let mut rest = std::mem::take(list);
    for id in &wanted {
        if let Some(i) = rest.iter().position(|item| identity(item) == *id) {
            list.push(rest.remove(i));
        }
    }
    list.extend(rest);
}

/// Removes directives (and null values) from a map that is inserted as it is.
fn strip_directives(map: &mut Map<String, Value>) {
    map.retain(|k, v| !k.starts_with('$') && !v.is_null());
    for value in map.values_mut() {
        match value {
            Value::Object(sub) => strip_directives(sub),
            Value::Array(items) => {
                for item in items {
                    if let Value::Object(sub) = item {
                        strip_directives(sub);
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests;
