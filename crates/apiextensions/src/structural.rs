//! Whether a CRD version's `openAPIV3Schema` is structural, as `apiextensions.k8s.io/v1`
//! requires: every field and array item has a type (or is int-or-string or preserved),
//! value validations (`allOf`, `anyOf`, `oneOf`, `not`) only constrain what is already
//! specified, `metadata` is restricted to `name` and `generateName`, and the `x-kubernetes-*`
//! extensions are used consistently. Defaults are checked against their own schema.

use capstan_meta::{FieldError, FieldErrors};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};

use crate::schema::Schema;

/// Where in the schema a node sits; the messages for a missing type differ.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

fn key(path: &str, name: &str) -> String {
    format!("{path}.properties[{name}]")
}

/// The problems of `props`, the schema at `path` (`spec.versions[0].schema.openAPIV3Schema`),
/// sorted as upstream reports them.
pub fn check(props: &JSONSchemaProps, path: &str) -> FieldErrors {
    let mut errs = Vec::new();
    node(props, Level::Root, path, &mut errs);
    errs.sort_by_key(ToString::to_string);
    errs
}

const TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];

fn node(s: &JSONSchemaProps, level: Level, path: &str, errs: &mut FieldErrors) {
    let ty = s.type_.as_deref().unwrap_or("");
    let preserve = s.x_kubernetes_preserve_unknown_fields == Some(true);
    let int_or_string = s.x_kubernetes_int_or_string == Some(true);
    let embedded = s.x_kubernetes_embedded_resource == Some(true);
    if s.ref_path.is_some() {
        errs.push(FieldError::forbidden(
            format!("{path}.$ref"),
            "$ref is not supported",
        ));
    }
    if !ty.is_empty() && !TYPES.contains(&ty) {
        errs.push(FieldError::not_supported(
            format!("{path}.type"),
            ty,
            &TYPES,
        ));
    }
    if s.x_kubernetes_preserve_unknown_fields == Some(false) {
        errs.push(FieldError::invalid_raw(
            format!("{path}.x-kubernetes-preserve-unknown-fields"),
            "false",
            "must be true or undefined",
        ));
    }
    // Types.
    if embedded && ty != "object" {
        let detail = "must be object if x-kubernetes-embedded-resource is true";
        errs.push(if ty.is_empty() {
            FieldError::required(format!("{path}.type"), detail)
        } else {
            FieldError::invalid(format!("{path}.type"), ty, detail)
        });
    } else if ty.is_empty() && !int_or_string && !preserve {
        let detail = match level {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        errs.push(FieldError::required(format!("{path}.type"), detail));
    }
    if level == Level::Root && !ty.is_empty() && ty != "object" {
        errs.push(FieldError::invalid(
            format!("{path}.type"),
            ty,
            "must be object at the root",
        ));
    }
    // Extensions.
    if int_or_string && preserve {
        errs.push(FieldError::invalid_raw(
            format!("{path}.x-kubernetes-preserve-unknown-fields"),
            "true",
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if int_or_string && embedded {
        errs.push(FieldError::invalid_raw(
            format!("{path}.x-kubernetes-embedded-resource"),
            "true",
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if int_or_string && !ty.is_empty() {
        errs.push(FieldError::invalid(
            format!("{path}.type"),
            ty,
            "must be empty if x-kubernetes-int-or-string is true",
        ));
    }
    if embedded && !preserve && s.properties.as_ref().is_none_or(|p| p.is_empty()) {
        errs.push(FieldError::required(
            format!("{path}.properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        ));
    }
    list_and_map_types(s, ty, path, errs);
    // Items.
    match &s.items {
        Some(JSONSchemaPropsOrArray::Schema(items)) => {
            node(items, Level::Item, &format!("{path}.items"), errs)
        }
        Some(JSONSchemaPropsOrArray::Schemas(_)) => errs.push(FieldError::forbidden(
            format!("{path}.items"),
            "items must be a schema object and not an array",
        )),
        None if ty == "array" => {
            errs.push(FieldError::required(
                format!("{path}.items"),
                "must be specified",
            ));
        }
        None => {}
    }
    // Properties and additionalProperties.
    let has_properties = s.properties.as_ref().is_some_and(|p| !p.is_empty());
    match &s.additional_properties {
        Some(JSONSchemaPropsOrBool::Schema(additional)) => {
            if level == Level::Root {
                errs.push(FieldError::forbidden(
                    format!("{path}.additionalProperties"),
                    "must not be used at the root",
                ));
            }
            if has_properties {
                errs.push(FieldError::forbidden(
                    format!("{path}.additionalProperties"),
                    "additionalProperties and properties are mutual exclusive",
                ));
            }
            if embedded {
                errs.push(FieldError::forbidden(
                    format!("{path}.additionalProperties"),
                    "must not be used if x-kubernetes-embedded-resource is set",
                ));
            }
            node(
                additional,
                Level::Field,
                &format!("{path}.additionalProperties"),
                errs,
            );
        }
        Some(JSONSchemaPropsOrBool::Bool(false)) if has_properties => {}
        Some(JSONSchemaPropsOrBool::Bool(_)) => errs.push(FieldError::forbidden(
            format!("{path}.additionalProperties"),
            "must not be used at the root or with a boolean other than false alongside properties",
        )),
        None => {}
    }
    for (name, sub) in s.properties.iter().flatten() {
        node(sub, Level::Field, &key(path, name), errs);
    }
    if level == Level::Root || embedded {
        type_meta(s, level, path, errs);
    }
    // Value validations.
    let int_or_string_any_of = is_int_or_string_pattern(s.any_of.as_deref());
    let int_or_string_all_of = s
        .all_of
        .as_ref()
        .and_then(|a| a.first())
        .is_some_and(|first| is_int_or_string_pattern(first.any_of.as_deref()));
    for (name, list) in [
        ("allOf", &s.all_of),
        ("anyOf", &s.any_of),
        ("oneOf", &s.one_of),
    ] {
        if name == "anyOf" && int_or_string_any_of {
            // The int-or-string pattern itself: allowed as it is.
            continue;
        }
        for (i, v) in list.iter().flatten().enumerate() {
            let skip_any_of = name == "allOf" && i == 0 && int_or_string_all_of;
            nested(v, skip_any_of, &format!("{path}.{name}[{i}]"), errs);
        }
    }
    if let Some(not) = &s.not {
        nested(not, false, &format!("{path}.not"), errs);
    }
    if let Some(pattern) = &s.pattern
        && let Err(e) = regex::Regex::new(pattern)
    {
        errs.push(FieldError::invalid(
            format!("{path}.pattern"),
            pattern,
            format!("must be a valid regular expression, but isn't: {e}"),
        ));
    }
    if let Some(default) = &s.default {
        check_default(s, &default.0, path, errs);
    }
    for (i, rule) in s.x_kubernetes_validations.iter().flatten().enumerate() {
        let at = format!("{path}.x-kubernetes-validations[{i}]");
        if let Err(e) = crate::rules::Rule::compile(rule, &at) {
            errs.extend(e);
        }
    }
}

/// The `anyOf: [{type: integer}, {type: string}]` of an int-or-string.
fn is_int_or_string_pattern(any_of: Option<&[JSONSchemaProps]>) -> bool {
    let Some([a, b]) = any_of else {
        return false;
    };
    let only_type = |s: &JSONSchemaProps, t: &str| {
        s.type_.as_deref() == Some(t)
            && JSONSchemaProps {
                type_: None,
                ..s.clone()
            } == JSONSchemaProps::default()
    };
    only_type(a, "integer") && only_type(b, "string")
}

/// `apiVersion`, `kind` and `metadata` where an object's type meta sits.
fn type_meta(s: &JSONSchemaProps, level: Level, path: &str, errs: &mut FieldErrors) {
    let Some(props) = &s.properties else {
        return;
    };
    for (name, want) in [
        ("kind", "string"),
        ("apiVersion", "string"),
        ("metadata", "object"),
    ] {
        if let Some(p) = props.get(name)
            && p.type_.as_deref() != Some(want)
        {
            errs.push(FieldError::invalid(
                format!("{}.type", key(path, name)),
                p.type_.as_deref().unwrap_or(""),
                format!("must be {want}"),
            ));
        }
    }
    if level != Level::Root {
        return;
    }
    if let Some(metadata) = props.get("metadata") {
        let names_only = metadata
            .properties
            .iter()
            .flatten()
            .all(|(k, _)| k == "name" || k == "generateName");
        let rest = JSONSchemaProps {
            type_: None,
            properties: None,
            default: None,
            ..metadata.clone()
        };
        if !names_only || rest != JSONSchemaProps::default() {
            errs.push(FieldError::forbidden(
                key(path, "metadata"),
                "must not specify anything other than name and generateName, but metadata is implicitly specified",
            ));
        }
    }
}

/// `x-kubernetes-list-type`, `-list-map-keys` and `-map-type`.
fn list_and_map_types(s: &JSONSchemaProps, ty: &str, path: &str, errs: &mut FieldErrors) {
    if let Some(list_type) = s.x_kubernetes_list_type.as_deref() {
        let at = format!("{path}.x-kubernetes-list-type");
        if ty != "array" {
            errs.push(FieldError::invalid(
                &at,
                list_type,
                "must only be used on type=array",
            ));
        }
        match list_type {
            "atomic" => {}
            "set" => {
                if let Some(JSONSchemaPropsOrArray::Schema(items)) = &s.items
                    && !matches!(
                        items.type_.as_deref(),
                        Some("string" | "integer" | "number" | "boolean")
                    )
                    && items.x_kubernetes_int_or_string != Some(true)
                    && !(items.type_.as_deref() == Some("object")
                        && items.x_kubernetes_map_type.as_deref() == Some("atomic"))
                {
                    errs.push(FieldError::invalid(
                        format!("{path}.items.x-kubernetes-map-type"),
                        items.x_kubernetes_map_type.as_deref().unwrap_or(""),
                        "must be atomic as item of a list with x-kubernetes-list-type=set",
                    ));
                }
            }
            "map" => {
                let keys = s.x_kubernetes_list_map_keys.as_deref().unwrap_or_default();
                if keys.is_empty() {
                    errs.push(FieldError::required(
                        format!("{path}.x-kubernetes-list-map-keys"),
                        "must not be empty if x-kubernetes-list-type is map",
                    ));
                }
                if let Some(JSONSchemaPropsOrArray::Schema(items)) = &s.items {
                    if items.type_.as_deref() != Some("object") {
                        errs.push(FieldError::invalid(
                            format!("{path}.items.type"),
                            items.type_.as_deref().unwrap_or(""),
                            "must be object if parent array's x-kubernetes-list-type is map",
                        ));
                    }
                    for (i, k) in keys.iter().enumerate() {
                        let Some(prop) = items.properties.as_ref().and_then(|p| p.get(k)) else {
                            errs.push(FieldError::invalid(
                                format!("{path}.x-kubernetes-list-map-keys[{i}]"),
                                k,
                                "entries must all be names of item properties",
                            ));
                            continue;
                        };
                        let required = items.required.iter().flatten().any(|r| r == k);
                        if !required && prop.default.is_none() {
                            errs.push(FieldError::required(
                                format!("{path}.items.properties[{k}].default"),
                                "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
                            ));
                        }
                    }
                }
            }
            other => errs.push(FieldError::not_supported(
                at,
                other,
                &["atomic", "set", "map"],
            )),
        }
    }
    if s.x_kubernetes_list_map_keys.is_some() && s.x_kubernetes_list_type.as_deref() != Some("map")
    {
        errs.push(FieldError::invalid(
            format!("{path}.x-kubernetes-list-type"),
            s.x_kubernetes_list_type.as_deref().unwrap_or(""),
            "must be map if x-kubernetes-list-map-keys is non-empty",
        ));
    }
    if let Some(map_type) = s.x_kubernetes_map_type.as_deref() {
        if !["granular", "atomic"].contains(&map_type) {
            errs.push(FieldError::not_supported(
                format!("{path}.x-kubernetes-map-type"),
                map_type,
                &["granular", "atomic"],
            ));
        } else if ty != "object" {
            errs.push(FieldError::invalid(
                format!("{path}.type"),
                ty,
                "must be object if x-kubernetes-map-type is specified",
            ));
        }
    }
}

/// A schema under `allOf`/`anyOf`/`oneOf`/`not`: it may constrain values, not specify them.
fn nested(v: &JSONSchemaProps, skip_any_of: bool, path: &str, errs: &mut FieldErrors) {
    const EMPTY: &str = "must be empty to be structural";
    const UNDEFINED: &str = "must be undefined to be structural";
    const FALSE: &str = "must be false to be structural";
    let specified = [
        ("type", v.type_.is_some(), EMPTY),
        (
            "additionalProperties",
            v.additional_properties.is_some(),
            UNDEFINED,
        ),
        ("default", v.default.is_some(), UNDEFINED),
        ("title", v.title.is_some(), EMPTY),
        ("description", v.description.is_some(), EMPTY),
        ("nullable", v.nullable == Some(true), FALSE),
        (
            "x-kubernetes-preserve-unknown-fields",
            v.x_kubernetes_preserve_unknown_fields == Some(true),
            FALSE,
        ),
        (
            "x-kubernetes-embedded-resource",
            v.x_kubernetes_embedded_resource == Some(true),
            FALSE,
        ),
        (
            "x-kubernetes-int-or-string",
            v.x_kubernetes_int_or_string == Some(true),
            FALSE,
        ),
        (
            "x-kubernetes-list-map-keys",
            v.x_kubernetes_list_map_keys
                .as_ref()
                .is_some_and(|k| !k.is_empty()),
            EMPTY,
        ),
        (
            "x-kubernetes-list-type",
            v.x_kubernetes_list_type.is_some(),
            UNDEFINED,
        ),
    ];
    for (field, set, detail) in specified {
        if set {
            errs.push(FieldError::forbidden(format!("{path}.{field}"), detail));
        }
    }
    if v.properties
        .as_ref()
        .is_some_and(|p| p.contains_key("metadata"))
    {
        errs.push(FieldError::forbidden(
            key(path, "metadata"),
            "must not be specified in a nested context",
        ));
    }
    for (name, sub) in v.properties.iter().flatten() {
        nested(sub, false, &key(path, name), errs);
    }
    if let Some(JSONSchemaPropsOrArray::Schema(items)) = &v.items {
        nested(items, false, &format!("{path}.items"), errs);
    }
    if !skip_any_of {
        for (i, a) in v.any_of.iter().flatten().enumerate() {
            nested(a, false, &format!("{path}.anyOf[{i}]"), errs);
        }
    }
    for (i, a) in v.all_of.iter().flatten().enumerate() {
        nested(a, false, &format!("{path}.allOf[{i}]"), errs);
    }
    for (i, a) in v.one_of.iter().flatten().enumerate() {
        nested(a, false, &format!("{path}.oneOf[{i}]"), errs);
    }
    if let Some(not) = &v.not {
        nested(not, false, &format!("{path}.not"), errs);
    }
}

/// A default must pass its own schema and survive pruning unchanged.
fn check_default(
    s: &JSONSchemaProps,
    default: &serde_json::Value,
    path: &str,
    errs: &mut FieldErrors,
) {
    let schema = Schema::compile(s);
    let mut pruned = default.clone();
    let mut unknown = Vec::new();
    if default.is_object() {
        schema.prune_object(&mut pruned, &mut unknown);
    }
    if !unknown.is_empty() {
        errs.push(FieldError::invalid_raw(
            format!("{path}.default"),
            default.to_string(),
            format!("must not have unknown fields: {}", unknown.join(", ")),
        ));
    }
    let mut found = Vec::new();
    schema.validate(default, "", false, &mut found);
    for e in found {
        let at = if e.field.is_empty() {
            format!("{path}.default")
        } else {
            format!("{path}.default.{}", e.field)
        };
        errs.push(FieldError {
            field: at,
            detail: e.detail.replace("<root> in body", "in body"),
            ..e
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn problems(doc: Value) -> Vec<String> {
        let props: JSONSchemaProps = serde_json::from_value(doc).unwrap();
        check(&props, "spec.versions[0].schema.openAPIV3Schema")
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn a_structural_schema_passes() {
        let ok = problems(json!({
            "type": "object",
            "properties": {
                "metadata": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 10}}},
                "spec": {"type": "object", "properties": {
                    "port": {"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]},
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                    "size": {"type": "integer", "default": 3, "minimum": 1},
                    "mode": {"type": "string", "oneOf": [{"pattern": "^a"}, {"pattern": "^b"}]},
                    "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port"],
                              "items": {"type": "object", "required": ["port"], "properties": {"port": {"type": "integer"}}}}
                }}
            }
        }));
        assert!(ok.is_empty(), "{ok:?}");
    }

    #[test]
    fn non_structural_schemas_are_refused_with_upstream_paths() {
        let p = "spec.versions[0].schema.openAPIV3Schema";
        assert_eq!(
            problems(
                json!({"type": "object", "properties": {"spec": {"properties": {"a": {"type": "string"}}}}})
            ),
            [format!(
                "{p}.properties[spec].type: Required value: must not be empty for specified object fields"
            )]
        );
        assert_eq!(
            problems(json!({"type": "object", "properties": {
                "list": {"type": "array"},
                "spec": {"type": "object", "anyOf": [{"type": "string"}], "additionalProperties": {"type": "string"}, "properties": {"a": {"type": "string"}}},
                "metadata": {"type": "object", "properties": {"labels": {"type": "object"}}},
                "size": {"type": "integer", "default": "big"}
            }})),
            [
                format!("{p}.properties[list].items: Required value: must be specified"),
                format!(
                    "{p}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"
                ),
                format!(
                    "{p}.properties[size].default: Invalid value: \"string\": in body must be of type integer: \"string\""
                ),
                format!(
                    "{p}.properties[spec].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"
                ),
                format!(
                    "{p}.properties[spec].anyOf[0].type: Forbidden: must be empty to be structural"
                ),
            ]
        );
        assert_eq!(
            problems(json!({"type": "string"})),
            [format!(
                "{p}.type: Invalid value: \"string\": must be object at the root"
            )]
        );
        assert_eq!(
            problems(
                json!({"type": "object", "properties": {"l": {"type": "array", "items": {"type": "object", "properties": {"k": {"type": "string"}}}, "x-kubernetes-list-type": "map"}}})
            ),
            [format!(
                "{p}.properties[l].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map"
            )]
        );
    }
}
