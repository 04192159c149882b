//! A custom resource's merge schema: what server-side apply and managedFields need to know
//! of its objects (structs merged by field, maps by entry, lists by their
//! `x-kubernetes-list-type`, atomic otherwise), built from the CRD's OpenAPI schema on top of
//! upstream's `ObjectMeta`.

use capstan_negotiation::schema::{Field, FieldType, ListType, Message, Schema, Shape};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};

const OBJECT_META: &str = "apimachinery.pkg.apis.meta.v1.ObjectMeta";

/// The merge schema of `api_version`/`kind` objects of schema `props`.
pub fn merge_schema(api_version: &str, kind: &str, props: &JSONSchemaProps) -> Schema {
    let mut schema = Schema::upstream().subset(&[OBJECT_META]);
    let meta = schema.index(OBJECT_META);
    let root = message(
        &mut schema,
        &format!("custom.{api_version}.{kind}"),
        props,
        meta,
    );
    schema.add_kind(api_version, kind, root);
    schema
}

/// Adds the message of an object schema (with `apiVersion`, `kind` and `metadata` when
/// `meta` is given: the root); returns its index.
fn message(schema: &mut Schema, name: &str, props: &JSONSchemaProps, meta: Option<usize>) -> usize {
    let mut fields = Vec::new();
    if let Some(meta) = meta {
        fields.push(field_of("apiVersion", 1, FieldType::String, Shape::Single));
        fields.push(field_of("kind", 2, FieldType::String, Shape::Single));
        fields.push(field_of(
            "metadata",
            3,
            FieldType::Message(meta),
            Shape::Single,
        ));
    }
    for (key, sub) in props.properties.iter().flatten() {
        if meta.is_some() && matches!(key.as_str(), "apiVersion" | "kind" | "metadata") {
            continue;
        }
        let number = fields.len() as u32 + 1;
        fields.push(field(schema, &format!("{name}.{key}"), key, sub, number));
    }
    schema.push(Message {
        name: name.to_string(),
        fields,
        special: None,
        atomic: props.x_kubernetes_map_type.as_deref() == Some("atomic"),
        members: Default::default(),
    })
}

fn field_of(name: &str, number: u32, ty: FieldType, shape: Shape) -> Field {
    Field {
        name: name.to_string(),
        number,
        ty,
        shape,
        inline: false,
        zero_is_unset: false,
        empty_is_set: false,
        list_type: ListType::Atomic,
        atomic: false,
        patch: Default::default(),
        default: None,
    }
}

/// The type of a value of schema `p` (a message for objects with properties; a leaf
/// otherwise).
fn value_type(schema: &mut Schema, name: &str, p: &JSONSchemaProps) -> FieldType {
    match p.type_.as_deref() {
        Some("object") if p.properties.as_ref().is_some_and(|m| !m.is_empty()) => {
            FieldType::Message(message(schema, name, p, None))
        }
        Some("string") => FieldType::String,
        Some("integer") => FieldType::Int64,
        Some("number") => FieldType::Double,
        Some("boolean") => FieldType::Bool,
        _ => FieldType::Bytes,
    }
}

fn field(
    schema: &mut Schema,
    name: &str,
    json_name: &str,
    p: &JSONSchemaProps,
    number: u32,
) -> Field {
    let mut f = field_of(json_name, number, FieldType::Bytes, Shape::Single);
    f.default = p.default.as_ref().map(|d| d.0.clone());
    match p.type_.as_deref() {
        Some("array") => {
            if let Some(JSONSchemaPropsOrArray::Schema(items)) = &p.items {
                f.ty = value_type(schema, name, items);
            }
            f.shape = Shape::Repeated;
            f.list_type = match p.x_kubernetes_list_type.as_deref() {
                Some("set") => ListType::Set,
                Some("map") => {
                    ListType::Map(p.x_kubernetes_list_map_keys.clone().unwrap_or_default())
                }
                _ => ListType::Atomic,
            };
        }
        Some("object") if p.properties.as_ref().is_none_or(|m| m.is_empty()) => {
            if let Some(JSONSchemaPropsOrBool::Schema(values)) = &p.additional_properties {
                let value = value_type(schema, name, values);
                f.shape = Shape::Map(FieldType::String, value);
                f.ty = value;
                f.atomic = p.x_kubernetes_map_type.as_deref() == Some("atomic");
            }
        }
        _ => {
            f.ty = value_type(schema, name, p);
            f.atomic = p.x_kubernetes_map_type.as_deref() == Some("atomic");
        }
    }
    f
}

#[cfg(test)]
mod tests {
    use super::*;
    use capstan_merge::{Ty, Typed};
    use serde_json::json;

    #[test]
    fn lists_maps_and_structs_follow_the_extensions() {
        let props: JSONSchemaProps = serde_json::from_value(json!({
            "type": "object",
            "properties": {"spec": {"type": "object", "properties": {
                "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port"],
                          "items": {"type": "object", "properties": {"port": {"type": "integer"}}}},
                "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                "args": {"type": "array", "items": {"type": "string"}},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
            }}}
        }))
        .unwrap();
        let schema = merge_schema("example.com/v1", "Shop", &props);
        let typed = Typed::for_kind(&schema, "example.com/v1", "Shop").unwrap();
        let Ty::Struct(root) = typed.root() else {
            panic!("the root is a struct")
        };
        let names: Vec<&str> = root.fields.iter().map(|f| f.name.as_str()).collect();
        assert_eq!(names, ["apiVersion", "kind", "metadata", "spec"]);
        let Ty::Struct(spec) = typed.field_type(&root.fields[3]) else {
            panic!("spec is a struct")
        };
        let kind_of = |name: &str| {
            let f = spec.fields.iter().find(|f| f.name == name).unwrap();
            (f.list_type.clone(), matches!(typed.field_type(f), Ty::Leaf))
        };
        assert_eq!(
            kind_of("ports"),
            (ListType::Map(vec!["port".into()]), false)
        );
        assert_eq!(kind_of("tags"), (ListType::Set, false));
        assert_eq!(kind_of("args"), (ListType::Atomic, true));
        assert!(!kind_of("labels").1, "labels merge by entry");
        assert!(kind_of("free").1, "preserved fields are one value");
        // metadata is upstream's ObjectMeta.
        let Ty::Struct(meta) = typed.field_type(&root.fields[2]) else {
            panic!("metadata is a struct")
        };
        assert!(meta.fields.iter().any(|f| f.name == "labels"));
    }
}
