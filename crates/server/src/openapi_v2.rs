//! `/openapi/v2`: the definitions of the served types as a Swagger 2.0 document, in JSON or in
//! the protobuf form (gnostic's `openapi.v2.Document`) that Go clients ask for. kubectl
//! before 1.27 validates manifests and explains fields with it. Paths are described in the
//! v3 documents only.

use bytes::Bytes;
use std::sync::Arc;

use capstan_registry::RestStorage;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use crate::KUBERNETES_VERSION;

/// The protobuf media type of the response (clients ask with `@v1.0` or `.v1.0`).
pub const PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// The document in both encodings.
pub struct OpenApiV2 {
    /// JSON.
    pub json: Bytes,
    /// Protobuf (`openapi.v2.Document`).
    pub protobuf: Bytes,
    /// The entity tag of both (unquoted): the JSON's SHA-512 in upper-case hex, as upstream's.
    pub etag: String,
    /// When the document was built (its `Last-Modified`).
    pub built: jiff::Timestamp,
}

impl OpenApiV2 {
    /// Builds the document from every registered type.
    pub fn build(resources: &[Arc<dyn RestStorage>]) -> Self {
        let mut settings = SchemaSettings::draft07();
        settings.definitions_path = "#/definitions/".into();
        settings.meta_schema = None;
        let mut generator = settings.into_generator();
        let mut kinds = Vec::new();
        for storage in resources {
            let schema = storage.schema(&mut generator);
            if let Some(name) = schema
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/definitions/"))
            {
                kinds.push((name.to_string(), storage.descriptor().clone()));
            }
        }
        generator.subschema_for::<capstan_meta::v1::Status>();
        generator.subschema_for::<capstan_meta::v1::DeleteOptions>();
        let mut definitions: Map<String, Value> =
            generator.take_definitions(true).into_iter().collect();
        crate::openapi::add_merge_extensions(&mut definitions);
        for (name, d) in &kinds {
            if let Some(Value::Object(def)) = definitions.get_mut(name) {
                def.insert(
                    "x-kubernetes-group-version-kind".into(),
                    json!([{"group": d.group, "kind": d.kind, "version": d.version}]),
                );
            }
        }
        for schema in definitions.values_mut() {
            direct_refs(schema);
        }
        Self::from_definitions(&definitions)
    }

    /// The document of `local` with `extra` definitions (an extension server's) added; a
    /// definition `local` has already is kept as it is (the shared meta types).
    pub fn with_definitions<'a>(
        local: &OpenApiV2,
        extra: impl IntoIterator<Item = (&'a String, &'a Value)>,
    ) -> Self {
        let mut definitions = serde_json::from_slice::<Value>(&local.json)
            .ok()
            .and_then(|mut doc| match doc["definitions"].take() {
                Value::Object(map) => Some(map),
                _ => None,
            })
            .unwrap_or_default();
        for (name, schema) in extra {
            if !definitions.contains_key(name) {
                definitions.insert(name.clone(), schema.clone());
            }
        }
        Self::from_definitions(&definitions)
    }

    /// The document holding `definitions`, in both encodings.
    fn from_definitions(definitions: &Map<String, Value>) -> Self {
        let (major, minor, patch) = KUBERNETES_VERSION;
        let version = format!("v{major}.{minor}.{patch}");
        let doc = json!({
            "swagger": "2.0",
            "info": {"title": "Kubernetes", "version": version},
            "paths": {},
            "definitions": definitions,
        });
        let mut pb = Writer::default();
        pb.string(1, "2.0");
        pb.message(2, |info| {
            info.string(1, "Kubernetes");
            info.string(2, &version);
        });
        pb.message(8, |_| {});
        pb.message(9, |defs| {
            for (name, schema) in definitions {
                defs.message(1, |named| {
                    named.string(1, name);
                    named.message(2, |s| write_schema(s, schema));
                });
            }
        });
        let json = serde_json::to_vec(&doc).unwrap_or_default();
        let digest = ring::digest::digest(&ring::digest::SHA512, &json);
        let etag = digest.as_ref().iter().map(|b| format!("{b:02X}")).collect();
        Self {
            json: Bytes::from(json),
            protobuf: Bytes::from(pb.buf),
            etag,
            built: jiff::Timestamp::now(),
        }
    }
}

/// Rewrites every `{"allOf": [{"$ref": r}], ...}` under `schema` as `{"$ref": r, ...}`: the
/// form Swagger 2.0 documents use for a described reference, and the only one kubectl's
/// OpenAPI v2 reader follows (it shows an `allOf` as an untyped field with no fields below).
fn direct_refs(schema: &mut Value) {
    match schema {
        Value::Object(map) => {
            let single_ref = match map.get("allOf") {
                Some(Value::Array(all)) if all.len() == 1 => all[0].get("$ref").cloned(),
                _ => None,
            };
            if let Some(reference) = single_ref {
                map.remove("allOf");
                map.remove("default");
                map.insert("$ref".into(), reference);
            }
            map.values_mut().for_each(direct_refs);
        }
        Value::Array(items) => items.iter_mut().for_each(direct_refs),
        _ => {}
    }
}

/// A protobuf writer for the few wire types this document uses.
#[derive(Default)]
struct Writer {
    buf: Vec<u8>,
}

impl Writer {
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.buf.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.buf.push(v as u8);
    }

    fn key(&mut self, field: u32, wire: u8) {
        self.varint(u64::from(field) << 3 | u64::from(wire));
    }

    fn string(&mut self, field: u32, s: &str) {
        self.key(field, 2);
        self.varint(s.len() as u64);
        self.buf.extend_from_slice(s.as_bytes());
    }

    fn boolean(&mut self, field: u32, b: bool) {
        self.key(field, 0);
        self.varint(u64::from(b));
    }

    fn int64(&mut self, field: u32, v: i64) {
        self.key(field, 0);
        self.varint(v as u64);
    }

    fn double(&mut self, field: u32, v: f64) {
        self.key(field, 1);
        self.buf.extend_from_slice(&v.to_le_bytes());
    }

    fn message(&mut self, field: u32, body: impl FnOnce(&mut Writer)) {
        let mut inner = Writer::default();
        body(&mut inner);
        self.key(field, 2);
        self.varint(inner.buf.len() as u64);
        self.buf.extend_from_slice(&inner.buf);
    }

    /// An `openapi.v2.Any` holding a value as YAML (JSON text is YAML).
    fn any(&mut self, field: u32, value: &Value) {
        let text = serde_json::to_string(value).unwrap_or_default();
        self.message(field, |a| a.string(2, &text));
    }
}

/// Writes a JSON schema as `openapi.v2.Schema`.
fn write_schema(w: &mut Writer, schema: &Value) {
    let Value::Object(s) = schema else {
        return;
    };
    let str_field = |w: &mut Writer, key: &str, field: u32| {
        if let Some(v) = s.get(key).and_then(Value::as_str) {
            w.string(field, v);
        }
    };
    str_field(w, "$ref", 1);
    str_field(w, "format", 2);
    str_field(w, "title", 3);
    str_field(w, "description", 4);
    if let Some(v) = s.get("default") {
        w.any(5, v);
    }
    for (key, field) in [("multipleOf", 6), ("maximum", 7), ("minimum", 9)] {
        if let Some(v) = s.get(key).and_then(Value::as_f64) {
            w.double(field, v);
        }
    }
    for (key, field) in [
        ("exclusiveMaximum", 8),
        ("exclusiveMinimum", 10),
        ("uniqueItems", 16),
        ("readOnly", 27),
    ] {
        if let Some(v) = s.get(key).and_then(Value::as_bool) {
            w.boolean(field, v);
        }
    }
    for (key, field) in [
        ("maxLength", 11),
        ("minLength", 12),
        ("maxItems", 14),
        ("minItems", 15),
        ("maxProperties", 17),
        ("minProperties", 18),
    ] {
        if let Some(v) = s.get(key).and_then(Value::as_i64) {
            w.int64(field, v);
        }
    }
    str_field(w, "pattern", 13);
    for r in s
        .get("required")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(r) = r.as_str() {
            w.string(19, r);
        }
    }
    for e in s
        .get("enum")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        w.any(20, e);
    }
    match s.get("additionalProperties") {
        Some(Value::Bool(b)) => w.message(21, |a| a.boolean(2, *b)),
        Some(v @ Value::Object(_)) => w.message(21, |a| a.message(1, |x| write_schema(x, v))),
        _ => {}
    }
    match s.get("type") {
        Some(Value::String(t)) => w.message(22, |ti| ti.string(1, t)),
        Some(Value::Array(ts)) => w.message(22, |ti| {
            for t in ts.iter().filter_map(Value::as_str).filter(|t| *t != "null") {
                ti.string(1, t);
            }
        }),
        _ => {}
    }
    match s.get("items") {
        Some(v @ Value::Object(_)) => {
            w.message(23, |items| items.message(1, |x| write_schema(x, v)))
        }
        Some(Value::Array(vs)) => w.message(23, |items| {
            for v in vs {
                items.message(1, |x| write_schema(x, v));
            }
        }),
        _ => {}
    }
    for v in s
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        w.message(24, |x| write_schema(x, v));
    }
    if let Some(Value::Object(props)) = s.get("properties") {
        w.message(25, |p| {
            for (name, v) in props {
                p.message(1, |named| {
                    named.string(1, name);
                    named.message(2, |x| write_schema(x, v));
                });
            }
        });
    }
    if let Some(v) = s.get("example") {
        w.any(30, v);
    }
    for (key, v) in s.iter().filter(|(k, _)| k.starts_with("x-")) {
        w.message(31, |named| {
            named.string(1, key);
            named.any(2, v);
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn described_references_are_direct() {
        let mut schema = json!({"properties": {
            "spec": {"allOf": [{"$ref": "#/definitions/Spec"}], "description": "d", "default": {}},
            "both": {"allOf": [{"$ref": "#/definitions/A"}, {"$ref": "#/definitions/B"}]},
            "items": {"type": "array", "items": {"allOf": [{"$ref": "#/definitions/I"}]}}}});
        direct_refs(&mut schema);
        assert_eq!(
            schema["properties"]["spec"],
            json!({"$ref": "#/definitions/Spec", "description": "d"})
        );
        assert_eq!(
            schema["properties"]["both"]["allOf"]
                .as_array()
                .unwrap()
                .len(),
            2
        );
        assert_eq!(
            schema["properties"]["items"]["items"],
            json!({"$ref": "#/definitions/I"})
        );
    }

    #[test]
    fn varints_and_nesting() {
        let mut w = Writer::default();
        w.varint(300);
        assert_eq!(w.buf, [0xac, 0x02]);
        let mut w = Writer::default();
        w.message(9, |m| m.string(1, "ab"));
        assert_eq!(w.buf, [0x4a, 4, 0x0a, 2, b'a', b'b']);
    }
}
