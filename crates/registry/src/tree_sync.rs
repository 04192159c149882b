//! Bringing a JSON tree made earlier up to date with a typed object, in place.
//!
//! A write's object goes from typed to tree more than once (managedFields, mutating
//! admission, validating admission, the stored encoding) with little changing in between.
//! [`sync_tree`] walks the object with serde beside the tree it had, and allocates only for
//! what differs: the result is exactly `serde_json::to_value(value)`, for a fraction of its
//! cost when the tree is close. A tree holding members the object no longer has is refused
//! (found by counting, which is what keeps the walk cheap): it is made again then.

use serde::ser::{self, Serialize, Serializer};
use serde_json::value::Serializer as Build;
use serde_json::{Map, Value};

type Error = serde_json::Error;

/// Makes `tree` equal to `serde_json::to_value(value)`, keeping the parts that already are.
/// An error (also when an object in `tree` has a member `value` does not write) leaves `tree`
/// partly updated: make it again.
pub fn sync_tree<T: Serialize + ?Sized>(value: &T, tree: &mut Value) -> Result<(), Error> {
    value.serialize(Sync(tree))
}

/// Replaces `tree` with `new` unless they are equal (a scalar: nothing to keep).
fn set(tree: &mut Value, new: Value) {
    if *tree != new {
        *tree = new;
    }
}

/// The map `tree` holds, which it becomes (empty) when it held anything else.
fn map_of(tree: &mut Value) -> &mut Map<String, Value> {
    if !tree.is_object() {
        *tree = Value::Object(Map::new());
    }
    match tree {
        Value::Object(map) => map,
        _ => unreachable!("made an object above"),
    }
}

/// The serializer that syncs one node.
struct Sync<'a>(&'a mut Value);

impl<'a> Serializer for Sync<'a> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = SyncSeq<'a>;
    type SerializeTuple = SyncSeq<'a>;
    type SerializeTupleStruct = SyncSeq<'a>;
    type SerializeTupleVariant = Built<'a, <Build as Serializer>::SerializeTupleVariant>;
    type SerializeMap = SyncMap<'a>;
    type SerializeStruct = SyncStruct<'a>;
    type SerializeStructVariant = Built<'a, <Build as Serializer>::SerializeStructVariant>;

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        set(self.0, Value::Bool(v));
        Ok(())
    }

    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.serialize_i64(v.into())
    }

    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.serialize_i64(v.into())
    }

    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.serialize_i64(v.into())
    }

    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        set(self.0, Build.serialize_i64(v)?);
        Ok(())
    }

    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        set(self.0, Build.serialize_i128(v)?);
        Ok(())
    }

    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.serialize_u64(v.into())
    }

    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.serialize_u64(v.into())
    }

    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.serialize_u64(v.into())
    }

    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        set(self.0, Build.serialize_u64(v)?);
        Ok(())
    }

    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        set(self.0, Build.serialize_u128(v)?);
        Ok(())
    }

    fn serialize_f32(self, v: f32) -> Result<(), Error> {
        set(self.0, Build.serialize_f32(v)?);
        Ok(())
    }

    fn serialize_f64(self, v: f64) -> Result<(), Error> {
        set(self.0, Build.serialize_f64(v)?);
        Ok(())
    }

    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.serialize_str(v.encode_utf8(&mut [0; 4]))
    }

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        if self.0.as_str() != Some(v) {
            *self.0 = Value::String(v.to_owned());
        }
        Ok(())
    }

    fn serialize_bytes(self, v: &[u8]) -> Result<(), Error> {
        set(self.0, Build.serialize_bytes(v)?);
        Ok(())
    }

    fn serialize_none(self) -> Result<(), Error> {
        self.serialize_unit()
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_unit(self) -> Result<(), Error> {
        set(self.0, Value::Null);
        Ok(())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        self.serialize_unit()
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        *self.0 = Build.serialize_newtype_variant(name, index, variant, value)?;
        Ok(())
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<SyncSeq<'a>, Error> {
        if !self.0.is_array() {
            *self.0 = Value::Array(Vec::new());
        }
        let Value::Array(items) = self.0 else {
            unreachable!("made an array above")
        };
        Ok(SyncSeq { items, next: 0 })
    }

    fn serialize_tuple(self, len: usize) -> Result<SyncSeq<'a>, Error> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_struct(self, _name: &'static str, len: usize) -> Result<SyncSeq<'a>, Error> {
        self.serialize_seq(Some(len))
    }

    fn serialize_tuple_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        let inner = Build.serialize_tuple_variant(name, index, variant, len)?;
        Ok(Built {
            tree: self.0,
            inner,
        })
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<SyncMap<'a>, Error> {
        Ok(SyncMap {
            map: map_of(self.0),
            seen: 0,
            key: String::new(),
        })
    }

    fn serialize_struct(self, name: &'static str, len: usize) -> Result<SyncStruct<'a>, Error> {
        // serde_json's own markers (raw values) are made as serde_json makes them.
        if name.starts_with("$serde_json::") {
            let inner = Build.serialize_struct(name, len)?;
            return Ok(SyncStruct::Built(Built {
                tree: self.0,
                inner,
            }));
        }
        Ok(SyncStruct::Fields {
            map: map_of(self.0),
            seen: 0,
        })
    }

    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        let inner = Build.serialize_struct_variant(name, index, variant, len)?;
        Ok(Built {
            tree: self.0,
            inner,
        })
    }
}

/// A sequence synced item by item (by position); items past the new end are dropped.
struct SyncSeq<'a> {
    items: &'a mut Vec<Value>,
    next: usize,
}

impl SyncSeq<'_> {
    fn item<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        if self.next == self.items.len() {
            self.items.push(Value::Null);
        }
        let item = &mut self.items[self.next];
        self.next += 1;
        value.serialize(Sync(item))
    }

    fn finish(self) -> Result<(), Error> {
        self.items.truncate(self.next);
        Ok(())
    }
}

impl ser::SerializeSeq for SyncSeq<'_> {
    type Ok = ();
    type Error = Error;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.item(value)
    }

    fn end(self) -> Result<(), Error> {
        self.finish()
    }
}

impl ser::SerializeTuple for SyncSeq<'_> {
    type Ok = ();
    type Error = Error;

    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.item(value)
    }

    fn end(self) -> Result<(), Error> {
        self.finish()
    }
}

impl ser::SerializeTupleStruct for SyncSeq<'_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.item(value)
    }

    fn end(self) -> Result<(), Error> {
        self.finish()
    }
}

/// A struct synced field by field. The fields written are counted: the tree's object must
/// have no others.
enum SyncStruct<'a> {
    Fields {
        map: &'a mut Map<String, Value>,
        seen: usize,
    },
    Built(Built<'a, <Build as Serializer>::SerializeStruct>),
}

/// The error of a tree with members the object does not write.
fn stale() -> Error {
    ser::Error::custom("the tree has members the object does not write")
}

impl ser::SerializeStruct for SyncStruct<'_> {
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        match self {
            SyncStruct::Fields { map, seen } => {
                *seen += 1;
                match map.get_mut(key) {
                    Some(node) => value.serialize(Sync(node)),
                    None => {
                        map.insert(key.to_owned(), serde_json::to_value(value)?);
                        Ok(())
                    }
                }
            }
            SyncStruct::Built(built) => built.inner.serialize_field(key, value),
        }
    }

    fn end(self) -> Result<(), Error> {
        match self {
            SyncStruct::Fields { map, seen } if map.len() == seen => Ok(()),
            SyncStruct::Fields { .. } => Err(stale()),
            SyncStruct::Built(Built { tree, inner }) => {
                *tree = ser::SerializeStruct::end(inner)?;
                Ok(())
            }
        }
    }
}

/// A map synced entry by entry. The entries written are counted: the tree's object must have
/// no others.
struct SyncMap<'a> {
    map: &'a mut Map<String, Value>,
    seen: usize,
    /// The key of the entry whose value comes next (one buffer for them all).
    key: String,
}

/// Writes a map key as serde_json writes it (a string, or a number or bool as its text) into
/// a buffer.
struct KeyText<'a>(&'a mut String);

impl KeyText<'_> {
    fn text(self, text: impl std::fmt::Display) -> Result<(), Error> {
        use std::fmt::Write;
        write!(self.0, "{text}").map_err(ser::Error::custom)
    }
}

impl Serializer for KeyText<'_> {
    type Ok = ();
    type Error = Error;
    type SerializeSeq = ser::Impossible<(), Error>;
    type SerializeTuple = ser::Impossible<(), Error>;
    type SerializeTupleStruct = ser::Impossible<(), Error>;
    type SerializeTupleVariant = ser::Impossible<(), Error>;
    type SerializeMap = ser::Impossible<(), Error>;
    type SerializeStruct = ser::Impossible<(), Error>;
    type SerializeStructVariant = ser::Impossible<(), Error>;

    fn serialize_str(self, v: &str) -> Result<(), Error> {
        self.0.push_str(v);
        Ok(())
    }

    fn serialize_char(self, v: char) -> Result<(), Error> {
        self.0.push(v);
        Ok(())
    }

    fn serialize_bool(self, v: bool) -> Result<(), Error> {
        self.text(v)
    }

    fn serialize_i8(self, v: i8) -> Result<(), Error> {
        self.text(v)
    }

    fn serialize_i16(self, v: i16) -> Result<(), Error> {
        self.text(v)
    }

    fn serialize_i32(self, v: i32) -> Result<(), Error> {
        self.text(v)
    }

    fn serialize_i64(self, v: i64) -> Result<(), Error> {
        self.text(v)
    }

    fn serialize_i128(self, v: i128) -> Result<(), Error> {
        self.text(v)
    }

    fn serialize_u8(self, v: u8) -> Result<(), Error> {
        self.text(v)
    }

    fn serialize_u16(self, v: u16) -> Result<(), Error> {
        self.text(v)
    }

    fn serialize_u32(self, v: u32) -> Result<(), Error> {
        self.text(v)
    }

    fn serialize_u64(self, v: u64) -> Result<(), Error> {
        self.text(v)
    }

    fn serialize_u128(self, v: u128) -> Result<(), Error> {
        self.text(v)
    }

    fn serialize_f32(self, _v: f32) -> Result<(), Error> {
        Err(key_error())
    }

    fn serialize_f64(self, _v: f64) -> Result<(), Error> {
        Err(key_error())
    }

    fn serialize_bytes(self, _v: &[u8]) -> Result<(), Error> {
        Err(key_error())
    }

    fn serialize_none(self) -> Result<(), Error> {
        Err(key_error())
    }

    fn serialize_some<T: Serialize + ?Sized>(self, _value: &T) -> Result<(), Error> {
        Err(key_error())
    }

    fn serialize_unit(self) -> Result<(), Error> {
        Err(key_error())
    }

    fn serialize_unit_struct(self, _name: &'static str) -> Result<(), Error> {
        Err(key_error())
    }

    fn serialize_unit_variant(
        self,
        _name: &'static str,
        _index: u32,
        variant: &'static str,
    ) -> Result<(), Error> {
        self.serialize_str(variant)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        value.serialize(self)
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _value: &T,
    ) -> Result<(), Error> {
        Err(key_error())
    }

    fn serialize_seq(self, _len: Option<usize>) -> Result<Self::SerializeSeq, Error> {
        Err(key_error())
    }

    fn serialize_tuple(self, _len: usize) -> Result<Self::SerializeTuple, Error> {
        Err(key_error())
    }

    fn serialize_tuple_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleStruct, Error> {
        Err(key_error())
    }

    fn serialize_tuple_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeTupleVariant, Error> {
        Err(key_error())
    }

    fn serialize_map(self, _len: Option<usize>) -> Result<Self::SerializeMap, Error> {
        Err(key_error())
    }

    fn serialize_struct(
        self,
        _name: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStruct, Error> {
        Err(key_error())
    }

    fn serialize_struct_variant(
        self,
        _name: &'static str,
        _index: u32,
        _variant: &'static str,
        _len: usize,
    ) -> Result<Self::SerializeStructVariant, Error> {
        Err(key_error())
    }
}

fn key_error() -> Error {
    ser::Error::custom("key must be a string")
}

impl ser::SerializeMap for SyncMap<'_> {
    type Ok = ();
    type Error = Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Error> {
        self.key.clear();
        key.serialize(KeyText(&mut self.key))
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.seen += 1;
        match self.map.get_mut(self.key.as_str()) {
            Some(node) => value.serialize(Sync(node)),
            None => {
                self.map
                    .insert(self.key.clone(), serde_json::to_value(value)?);
                Ok(())
            }
        }
    }

    fn end(self) -> Result<(), Error> {
        if self.map.len() == self.seen {
            Ok(())
        } else {
            Err(stale())
        }
    }
}

/// A node serde_json makes whole (enum variants with fields, its own markers): made, then
/// put in place.
struct Built<'a, S> {
    tree: &'a mut Value,
    inner: S,
}

impl<S> ser::SerializeTupleVariant for Built<'_, S>
where
    S: ser::SerializeTupleVariant<Ok = Value, Error = Error>,
{
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Error> {
        self.inner.serialize_field(value)
    }

    fn end(self) -> Result<(), Error> {
        let Built { tree, inner } = self;
        *tree = inner.end()?;
        Ok(())
    }
}

impl<S> ser::SerializeStructVariant for Built<'_, S>
where
    S: ser::SerializeStructVariant<Ok = Value, Error = Error>,
{
    type Ok = ();
    type Error = Error;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Error> {
        self.inner.serialize_field(key, value)
    }

    fn end(self) -> Result<(), Error> {
        let Built { tree, inner } = self;
        *tree = inner.end()?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::Pod;
    use serde_json::json;

    fn pod() -> Pod {
        serde_json::from_value(json!({
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {
                "name": "web-0",
                "namespace": "default",
                "labels": {"app": "web", "tier": "front"},
                "annotations": {"note": "x"},
                "managedFields": [{
                    "manager": "kubectl",
                    "operation": "Update",
                    "apiVersion": "v1",
                    "time": "2026-12-06T00:00:00Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}}
                }]
            },
            "spec": {
                "containers": [
                    {
                        "name": "app",
                        "image": "nginx:1.27",
                        "ports": [{"containerPort": 80, "protocol": "TCP"}],
                        "resources": {"limits": {"cpu": "500m"}, "requests": {"memory": "64Mi"}},
                        "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]
                    },
                    {"name": "sidecar", "image": "busybox", "args": ["sleep", "1h"]}
                ],
                "terminationGracePeriodSeconds": 30,
                "activeDeadlineSeconds": -5,
                "tolerations": [{"key": "k", "operator": "Exists", "tolerationSeconds": 300}],
                "securityContext": {}
            },
            "status": {"phase": "Pending", "qosClass": "Burstable"}
        }))
        .unwrap()
    }

    /// Syncs `start` with `obj` and checks it against a tree made anew.
    fn check<T: Serialize>(obj: &T, mut start: Value) {
        sync_tree(obj, &mut start).unwrap();
        assert_eq!(start, serde_json::to_value(obj).unwrap());
    }

    /// A tree with a member `obj` does not write is refused.
    fn refused<T: Serialize>(obj: &T, mut start: Value) {
        assert!(sync_tree(obj, &mut start).is_err(), "{start}");
    }

    #[test]
    fn a_tree_synced_from_anything_equals_one_made_anew() {
        let pod = pod();
        let made = serde_json::to_value(&pod).unwrap();
        check(&pod, made.clone());
        check(&pod, Value::Null);
        check(&pod, json!([1, 2]));
        check(&pod, json!({}));
        // Wrong types, longer and shorter lists, other numbers.
        let mut other = made.clone();
        other["metadata"]["labels"]["app"] = json!(7);
        other["spec"]["containers"][0]["ports"][0]["containerPort"] = json!(80.0);
        other["spec"]["containers"][0]["env"] = json!([{"name": "A"}]);
        other["spec"]["containers"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "third"}));
        other["spec"]["activeDeadlineSeconds"] = json!(5);
        other["spec"]["tolerations"] = json!({"not": "a list"});
        other["status"] = json!(null);
        check(&pod, other);
        // A shorter tree grows.
        let mut short = made.clone();
        short["spec"]["containers"]
            .as_array_mut()
            .unwrap()
            .truncate(1);
        short["metadata"].as_object_mut().unwrap().remove("labels");
        check(&pod, short);
        // Members the object does not write, in a struct or a map, at any depth.
        let extra = |path: &[&str], key: &str| {
            let mut tree = made.clone();
            let mut node = &mut tree;
            for step in path {
                node = &mut node[*step];
            }
            node[key] = json!("stale");
            tree
        };
        refused(&pod, extra(&[], "unknown"));
        refused(&pod, extra(&["metadata"], "uid"));
        refused(&pod, extra(&["metadata", "labels"], "gone"));
        refused(&pod, extra(&["spec", "securityContext"], "runAsUser"));
    }

    #[test]
    fn a_changed_object_is_synced_into_its_old_tree() {
        let mut pod = pod();
        let tree = serde_json::to_value(&pod).unwrap();
        pod.metadata.uid = Some("4c0a".into());
        let labels = pod.metadata.labels.as_mut().unwrap();
        labels.insert("tier".into(), "back".into());
        labels.insert("zone".into(), "a".into());
        let spec = pod.spec.as_mut().unwrap();
        spec.containers.pop();
        spec.containers[0].image = Some("nginx:1.28".into());
        spec.node_name = Some("node-1".into());
        pod.status.as_mut().unwrap().phase = Some("Running".into());
        check(&pod, tree.clone());
        // What the object no longer sets is refused.
        pod.spec.as_mut().unwrap().termination_grace_period_seconds = None;
        refused(&pod, tree.clone());
        pod = self::pod();
        pod.metadata.labels.as_mut().unwrap().remove("tier");
        refused(&pod, tree);
    }

    #[derive(serde::Serialize)]
    enum Shape {
        Unit,
        Newtype(u8),
        Tuple(u8, String),
        Struct { side: f64 },
    }

    #[derive(serde::Serialize)]
    struct Odd {
        shapes: Vec<Shape>,
        by_number: std::collections::BTreeMap<u32, bool>,
        by_flag: std::collections::BTreeMap<bool, char>,
        bytes: serde_bytes_like::Bytes,
        big: i128,
        nan: f64,
        tuple: (i8, u16),
        raw: Box<serde_json::value::RawValue>,
        none: Option<String>,
    }

    mod serde_bytes_like {
        /// Serialized with `serialize_bytes`.
        pub struct Bytes(pub Vec<u8>);

        impl serde::Serialize for Bytes {
            fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_bytes(&self.0)
            }
        }
    }

    #[test]
    fn every_serde_shape_comes_out_as_serde_json_makes_it() {
        let odd = Odd {
            shapes: vec![
                Shape::Unit,
                Shape::Newtype(3),
                Shape::Tuple(1, "t".into()),
                Shape::Struct { side: 1.5 },
            ],
            by_number: [(1, true), (20, false)].into(),
            by_flag: [(true, 'y')].into(),
            bytes: serde_bytes_like::Bytes(vec![1, 2, 255]),
            big: -(1 << 40),
            nan: f64::NAN,
            tuple: (-1, 2),
            raw: serde_json::value::RawValue::from_string(r#"{"b":[1,{"c":null}]}"#.into())
                .unwrap(),
            none: None,
        };
        check(&odd, Value::Null);
        let mut made = serde_json::to_value(&odd).unwrap();
        check(&odd, made.clone());
        made["by_number"]["1"] = json!(false);
        made["by_flag"]["true"] = json!("n");
        made["shapes"][3] = json!({"Struct": {"side": 2.5, "extra": 1}});
        made["raw"] = json!({"b": 1});
        check(&odd, made.clone());
        made["by_number"]["3"] = json!(true);
        refused(&odd, made);
    }
}
