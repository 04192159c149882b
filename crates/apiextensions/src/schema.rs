//! A CRD version's OpenAPI v3 schema, compiled once when the CRD is served, and what it does
//! to custom objects: pruning of undeclared fields, defaulting, and value validation with
//! upstream's messages (`spec.replicas in body should be less than or equal to 10`).

use std::collections::BTreeMap;

use capstan_meta::{FieldError, FieldErrors};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use serde_json::Value;

use crate::rules::Rule;
use std::sync::Arc;

/// The JSON types a schema names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Type {
    /// `object`
    Object,
    /// `array`
    Array,
    /// `string`
    String,
    /// `integer`
    Integer,
    /// `number`
    Number,
    /// `boolean`
    Boolean,
}

impl Type {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "object" => Self::Object,
            "array" => Self::Array,
            "string" => Self::String,
            "integer" => Self::Integer,
            "number" => Self::Number,
            "boolean" => Self::Boolean,
            _ => return None,
        })
    }

    /// The name the schema uses.
    pub fn name(self) -> &'static str {
        match self {
            Self::Object => "object",
            Self::Array => "array",
            Self::String => "string",
            Self::Integer => "integer",
            Self::Number => "number",
            Self::Boolean => "boolean",
        }
    }

    fn admits(self, value: &Value) -> bool {
        match self {
            Self::Object => value.is_object(),
            Self::Array => value.is_array(),
            Self::String => value.is_string(),
            Self::Integer => is_integer(value),
            Self::Number => value.is_number(),
            Self::Boolean => value.is_boolean(),
        }
    }
}

fn is_integer(value: &Value) -> bool {
    value.is_i64() || value.is_u64() || value.as_f64().is_some_and(|f| f.fract() == 0.0)
}

/// The JSON type name of a value, as upstream reports a type mismatch.
fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) if is_integer(value) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A schema compiled for objects: every node of the CRD's `openAPIV3Schema`.
#[derive(Debug, Clone, Default)]
pub struct Schema {
    /// `type`; none for int-or-string and preserved values.
    pub ty: Option<Type>,
    /// `properties`.
    pub properties: BTreeMap<String, Schema>,
    /// `additionalProperties` given as a schema (a map's values).
    pub additional: Option<Box<Schema>>,
    /// `items`.
    pub items: Option<Box<Schema>>,
    /// `required`.
    pub required: Vec<String>,
    /// `enum`.
    pub enumeration: Vec<Value>,
    /// `default`.
    pub default: Option<Value>,
    /// `nullable`.
    pub nullable: bool,
    /// `x-kubernetes-preserve-unknown-fields`.
    pub preserve_unknown: bool,
    /// `x-kubernetes-int-or-string`.
    pub int_or_string: bool,
    /// `x-kubernetes-embedded-resource`.
    pub embedded: bool,
    /// `x-kubernetes-list-type`.
    pub list_type: Option<String>,
    /// `x-kubernetes-list-map-keys`.
    pub list_map_keys: Vec<String>,
    /// `x-kubernetes-map-type`.
    pub map_type: Option<String>,
    /// `format`.
    pub format: Option<String>,
    pattern: Option<(String, regex::Regex)>,
    maximum: Option<(f64, bool)>,
    minimum: Option<(f64, bool)>,
    multiple_of: Option<f64>,
    max_length: Option<i64>,
    min_length: Option<i64>,
    max_items: Option<i64>,
    min_items: Option<i64>,
    unique_items: bool,
    max_properties: Option<i64>,
    min_properties: Option<i64>,
    all_of: Vec<Schema>,
    any_of: Vec<Schema>,
    one_of: Vec<Schema>,
    not: Option<Box<Schema>>,
    /// `x-kubernetes-validations`, compiled.
    rules: Vec<Arc<Rule>>,
    /// Whether this node or one below it has rules.
    has_rules: bool,
    /// Whether a node below this one has a default.
    has_defaults: bool,
}

/// The properties every object has, kept by pruning at the root and in embedded resources.
const TYPE_META: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// Joins a field path: `spec` + `replicas` is `spec.replicas`.
fn child(path: &str, name: &str) -> String {
    if path.is_empty() {
        name.to_string()
    } else {
        format!("{path}.{name}")
    }
}

impl Schema {
    /// Compiles `props` (already checked by [`crate::structural::check`]: a pattern that
    /// does not compile is dropped here).
    pub fn compile(props: &JSONSchemaProps) -> Self {
        let many = |list: &Option<Vec<JSONSchemaProps>>| -> Vec<Schema> {
            list.iter().flatten().map(Schema::compile).collect()
        };
        let mut compiled = Self {
            ty: props.type_.as_deref().and_then(Type::parse),
            properties: props
                .properties
                .iter()
                .flatten()
                .map(|(k, v)| (k.clone(), Schema::compile(v)))
                .collect(),
            additional: match &props.additional_properties {
                Some(JSONSchemaPropsOrBool::Schema(s)) => Some(Box::new(Schema::compile(s))),
                Some(JSONSchemaPropsOrBool::Bool(true)) => Some(Box::new(Schema {
                    preserve_unknown: true,
                    ..Schema::default()
                })),
                _ => None,
            },
            items: match &props.items {
                Some(JSONSchemaPropsOrArray::Schema(s)) => Some(Box::new(Schema::compile(s))),
                _ => None,
            },
            required: props.required.clone().unwrap_or_default(),
            enumeration: props.enum_.iter().flatten().map(|j| j.0.clone()).collect(),
            default: props.default.as_ref().map(|j| j.0.clone()),
            nullable: props.nullable == Some(true),
            preserve_unknown: props.x_kubernetes_preserve_unknown_fields == Some(true),
            int_or_string: props.x_kubernetes_int_or_string == Some(true),
            embedded: props.x_kubernetes_embedded_resource == Some(true),
            list_type: props.x_kubernetes_list_type.clone(),
            list_map_keys: props.x_kubernetes_list_map_keys.clone().unwrap_or_default(),
            map_type: props.x_kubernetes_map_type.clone(),
            format: props.format.clone(),
            pattern: props
                .pattern
                .as_ref()
                .and_then(|p| Some((p.clone(), regex::Regex::new(p).ok()?))),
            maximum: props
                .maximum
                .map(|m| (m, props.exclusive_maximum == Some(true))),
            minimum: props
                .minimum
                .map(|m| (m, props.exclusive_minimum == Some(true))),
            multiple_of: props.multiple_of,
            max_length: props.max_length,
            min_length: props.min_length,
            max_items: props.max_items,
            min_items: props.min_items,
            unique_items: props.unique_items == Some(true),
            max_properties: props.max_properties,
            min_properties: props.min_properties,
            all_of: many(&props.all_of),
            any_of: many(&props.any_of),
            one_of: many(&props.one_of),
            not: props.not.as_ref().map(|n| Box::new(Schema::compile(n))),
            rules: props
                .x_kubernetes_validations
                .iter()
                .flatten()
                .filter_map(|r| Rule::compile(r, "").ok().map(Arc::new))
                .collect(),
            has_rules: false,
            has_defaults: false,
        };
        compiled.has_rules = !compiled.rules.is_empty()
            || compiled.properties.values().any(|p| p.has_rules)
            || compiled.additional.as_ref().is_some_and(|a| a.has_rules)
            || compiled.items.as_ref().is_some_and(|i| i.has_rules);
        let defaults = |s: &Schema| s.default.is_some() || s.has_defaults;
        compiled.has_defaults = compiled.properties.values().any(defaults)
            || compiled.additional.as_deref().is_some_and(defaults)
            || compiled.items.as_deref().is_some_and(defaults);
        compiled
    }

    /// Evaluates the CEL rules at and below this node over `value`; `old` is the stored
    /// value at the same place (on updates, where it correlates: same field, same map key,
    /// same keys of a map list), for transition rules.
    pub fn check_rules(
        &self,
        value: &Value,
        old: Option<&Value>,
        path: &str,
        errs: &mut FieldErrors,
    ) {
        if !self.has_rules {
            return;
        }
        let ty = match self.ty {
            Some(ty) => ty.name(),
            None if self.int_or_string => "integer",
            None => "object",
        };
        for rule in &self.rules {
            rule.check(value, old, path, ty, errs);
        }
        match value {
            Value::Object(map) => {
                self.check_rules_in(map, old.and_then(Value::as_object), path, errs)
            }
            Value::Array(items) => {
                let Some(item) = self.items.as_deref().filter(|i| i.has_rules) else {
                    return;
                };
                let olds = old.and_then(Value::as_array);
                for (i, v) in items.iter().enumerate() {
                    let old_item = match (self.list_type.as_deref(), olds) {
                        (Some("map"), Some(olds)) => olds
                            .iter()
                            .find(|o| self.list_map_keys.iter().all(|k| o.get(k) == v.get(k))),
                        _ => None,
                    };
                    item.check_rules(v, old_item, &format!("{path}[{i}]"), errs);
                }
            }
            _ => {}
        }
    }

    /// [`Schema::check_rules`] for the fields of an object.
    fn check_rules_in(
        &self,
        map: &serde_json::Map<String, Value>,
        old: Option<&serde_json::Map<String, Value>>,
        path: &str,
        errs: &mut FieldErrors,
    ) {
        for (k, v) in map {
            if let Some(sub) = self.properties.get(k).or(self.additional.as_deref()) {
                sub.check_rules(v, old.and_then(|o| o.get(k)), &child(path, k), errs);
            }
        }
    }

    /// Whether any field below the root has a default.
    pub fn has_defaults(&self) -> bool {
        self.has_defaults
    }

    /// Whether any rule sits anywhere in the schema.
    pub fn has_rules(&self) -> bool {
        self.has_rules
    }

    /// Evaluates the rules over an object (`old`: the stored object, on updates). Root rules
    /// see the object as given: the caller decides what of its type meta and metadata they
    /// read.
    pub fn check_object_rules(&self, object: &Value, old: Option<&Value>) -> FieldErrors {
        let mut errs = Vec::new();
        if !self.has_rules {
            return errs;
        }
        for rule in &self.rules {
            rule.check(object, old, "", "object", &mut errs);
        }
        if let Some(fields) = object.as_object() {
            self.check_rules_in(fields, old.and_then(Value::as_object), "", &mut errs);
        }
        errs
    }

    /// Removes from `value` (an object at the root) what the schema does not declare, and
    /// adds each removed field's path to `unknown`.
    pub fn prune_object(&self, value: &mut Value, unknown: &mut Vec<String>) {
        let from = unknown.len();
        self.prune(value, "", true, unknown);
        unknown[from..].sort();
    }

    fn prune(
        &self,
        value: &mut Value,
        path: &str,
        keep_type_meta: bool,
        unknown: &mut Vec<String>,
    ) {
        match value {
            Value::Object(map) => {
                let keep_meta = keep_type_meta || self.embedded;
                if !self.preserve_unknown {
                    map.retain(|k, _| {
                        let known = self.properties.contains_key(k)
                            || self.additional.is_some()
                            || (keep_meta && TYPE_META.contains(&k.as_str()));
                        if !known {
                            unknown.push(child(path, k));
                        }
                        known
                    });
                }
                for (k, v) in map.iter_mut() {
                    if keep_meta && k == "metadata" && !self.properties.contains_key(k) {
                        continue;
                    }
                    let sub = self.properties.get(k).or(self.additional.as_deref());
                    if let Some(sub) = sub {
                        sub.prune(v, &child(path, k), false, unknown);
                    }
                }
            }
            Value::Array(items) => {
                if let Some(item) = &self.items {
                    for (i, v) in items.iter_mut().enumerate() {
                        item.prune(v, &format!("{path}[{i}]"), false, unknown);
                    }
                }
            }
            _ => {}
        }
    }

    /// Fills in the defaults of absent fields (and of `null` ones that may not be null).
    pub fn apply_defaults(&self, value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (k, sub) in &self.properties {
                    match map.get_mut(k) {
                        Some(Value::Null) if !sub.nullable && sub.default.is_some() => {
                            map.insert(k.clone(), sub.default.clone().unwrap_or_default());
                        }
                        None if sub.default.is_some() => {
                            map.insert(k.clone(), sub.default.clone().unwrap_or_default());
                        }
                        _ => {}
                    }
                    if let Some(v) = map.get_mut(k) {
                        sub.apply_defaults(v);
                    }
                }
                if let Some(additional) = &self.additional {
                    for (k, v) in map.iter_mut() {
                        if !self.properties.contains_key(k) {
                            additional.apply_defaults(v);
                        }
                    }
                }
            }
            Value::Array(items) => {
                if let Some(item) = &self.items {
                    for v in items {
                        item.apply_defaults(v);
                    }
                }
            }
            _ => {}
        }
    }

    /// Checks `value` (the object at the root: `apiVersion`, `kind` and `metadata` are the
    /// store's to check) against the schema.
    pub fn validate_object(&self, value: &Value) -> FieldErrors {
        let mut errs = Vec::new();
        self.validate(value, "", true, &mut errs);
        errs
    }

    /// Checks an object's fields (all but `apiVersion`, `kind` and `metadata`, which the
    /// store checks) against the root schema.
    pub fn validate_fields(&self, fields: &serde_json::Map<String, Value>) -> FieldErrors {
        let mut errs = Vec::new();
        self.validate_map(fields, "", true, "<root>", &mut errs);
        let junctors = !self.all_of.is_empty()
            || !self.any_of.is_empty()
            || !self.one_of.is_empty()
            || self.not.is_some();
        if junctors {
            let value = Value::Object(fields.clone());
            self.validate_junctors(&value, "", true, "<root>", &mut errs);
        }
        errs
    }

    /// Checks `value` at `path`.
    pub fn validate(&self, value: &Value, path: &str, root: bool, errs: &mut FieldErrors) {
        let shown = if path.is_empty() { "<root>" } else { path };
        if value.is_null() {
            if self.nullable || self.ty.is_none() && !self.int_or_string {
                return;
            }
            let want = self.ty.map_or("string", Type::name);
            errs.push(type_invalid(path, "null", want, shown));
            return;
        }
        if self.int_or_string {
            if !(is_integer(value) || value.is_string()) {
                errs.push(type_invalid(path, type_of(value), "integer", shown));
                return;
            }
        } else if let Some(ty) = self.ty
            && !ty.admits(value)
        {
            errs.push(type_invalid(path, type_of(value), ty.name(), shown));
            return;
        }
        if !self.enumeration.is_empty() && !self.enumeration.contains(value) {
            let supported: Vec<String> = self.enumeration.iter().map(render).collect();
            errs.push(FieldError {
                kind: capstan_meta::FieldErrorKind::NotSupported,
                field: path.to_string(),
                value: Some(render(value)),
                detail: format!("supported values: {}", supported.join(", ")),
            });
        }
        match value {
            Value::Object(map) => self.validate_map(map, path, root, shown, errs),
            Value::Array(items) => self.validate_list(items, path, shown, errs),
            Value::String(s) => self.validate_string(s, path, shown, errs),
            Value::Number(_) => self.validate_number(value, path, shown, errs),
            _ => {}
        }
        self.validate_junctors(value, path, root, shown, errs);
    }

    fn validate_map(
        &self,
        map: &serde_json::Map<String, Value>,
        path: &str,
        root: bool,
        shown: &str,
        errs: &mut FieldErrors,
    ) {
        for name in &self.required {
            if !map.contains_key(name) {
                errs.push(FieldError::required(child(path, name), ""));
            }
        }
        let bounds = (self.min_properties, self.max_properties);
        count_within(map.len(), bounds, "properties", path, shown, errs);
        for (k, v) in map {
            if (root || self.embedded) && TYPE_META.contains(&k.as_str()) {
                continue;
            }
            if let Some(sub) = self.properties.get(k).or(self.additional.as_deref()) {
                sub.validate(v, &child(path, k), false, errs);
            }
        }
    }

    fn validate_list(&self, items: &[Value], path: &str, shown: &str, errs: &mut FieldErrors) {
        let bounds = (self.min_items, self.max_items);
        count_within(items.len(), bounds, "items", path, shown, errs);
        let set = self.unique_items || self.list_type.as_deref() == Some("set");
        if set {
            for (i, v) in items.iter().enumerate() {
                if items[..i].contains(v) {
                    errs.push(FieldError {
                        kind: capstan_meta::FieldErrorKind::Duplicate,
                        field: format!("{path}[{i}]"),
                        value: Some(render(v)),
                        detail: String::new(),
                    });
                }
            }
        }
        if self.list_type.as_deref() == Some("map") && !self.list_map_keys.is_empty() {
            let key = |v: &Value| -> Vec<Value> {
                self.list_map_keys
                    .iter()
                    .map(|k| v.get(k).cloned().unwrap_or(Value::Null))
                    .collect()
            };
            let keys: Vec<Vec<Value>> = items.iter().map(key).collect();
            for (i, k) in keys.iter().enumerate() {
                if keys[..i].contains(k) {
                    let shown_key: Vec<String> = self
                        .list_map_keys
                        .iter()
                        .zip(k)
                        .map(|(name, v)| format!("\"{name}\"={}", render(v)))
                        .collect();
                    errs.push(FieldError {
                        kind: capstan_meta::FieldErrorKind::Duplicate,
                        field: format!("{path}[{i}]"),
                        value: Some(format!("map[{}]", shown_key.join(" "))),
                        detail: String::new(),
                    });
                }
            }
        }
        if let Some(item) = &self.items {
            for (i, v) in items.iter().enumerate() {
                item.validate(v, &format!("{path}[{i}]"), false, errs);
            }
        }
    }

    fn validate_string(&self, s: &str, path: &str, shown: &str, errs: &mut FieldErrors) {
        let chars = s.chars().count() as i64;
        if let Some(max) = self.max_length
            && chars > max
        {
            errs.push(FieldError::too_long(path, max as usize));
        }
        if let Some(min) = self.min_length
            && chars < min
        {
            errs.push(FieldError::invalid(
                path,
                s,
                format!("{shown} in body should be at least {min} chars long"),
            ));
        }
        if let Some((source, re)) = &self.pattern
            && !re.is_match(s)
        {
            errs.push(FieldError::invalid(
                path,
                s,
                format!("{shown} in body should match '{source}'"),
            ));
        }
        if let Some(format) = &self.format
            && !crate::formats::valid(format, s)
        {
            errs.push(FieldError::invalid(
                path,
                s,
                format!(
                    "{shown} in body must be of type {format}: {}",
                    render(&Value::from(s))
                ),
            ));
        }
    }

    fn validate_number(&self, value: &Value, path: &str, shown: &str, errs: &mut FieldErrors) {
        let Some(n) = value.as_f64() else {
            return;
        };
        let raw = value.to_string();
        if let Some((max, exclusive)) = self.maximum {
            if exclusive && n >= max {
                errs.push(FieldError::invalid_raw(
                    path,
                    raw.clone(),
                    format!("{shown} in body should be less than {}", number(max)),
                ));
            } else if !exclusive && n > max {
                errs.push(FieldError::invalid_raw(
                    path,
                    raw.clone(),
                    format!(
                        "{shown} in body should be less than or equal to {}",
                        number(max)
                    ),
                ));
            }
        }
        if let Some((min, exclusive)) = self.minimum {
            if exclusive && n <= min {
                errs.push(FieldError::invalid_raw(
                    path,
                    raw.clone(),
                    format!("{shown} in body should be greater than {}", number(min)),
                ));
            } else if !exclusive && n < min {
                errs.push(FieldError::invalid_raw(
                    path,
                    raw.clone(),
                    format!(
                        "{shown} in body should be greater than or equal to {}",
                        number(min)
                    ),
                ));
            }
        }
        if let Some(m) = self.multiple_of
            && m != 0.0
            && (n / m).fract() != 0.0
        {
            errs.push(FieldError::invalid_raw(
                path,
                raw,
                format!("{shown} in body should be a multiple of {}", number(m)),
            ));
        }
    }

    /// `allOf`, `anyOf`, `oneOf` and `not`: value validations over the same value.
    fn validate_junctors(
        &self,
        value: &Value,
        path: &str,
        root: bool,
        shown: &str,
        errs: &mut FieldErrors,
    ) {
        for s in &self.all_of {
            s.validate(value, path, root, errs);
        }
        let passes = |s: &Schema| {
            let mut e = Vec::new();
            s.validate(value, path, root, &mut e);
            e.is_empty()
        };
        if !self.any_of.is_empty() && !self.any_of.iter().any(passes) {
            errs.push(FieldError::invalid_raw(
                path,
                render(value),
                format!("{shown} in body must be of one of the types allowed by anyOf"),
            ));
        }
        if !self.one_of.is_empty() {
            let matched = self.one_of.iter().filter(|s| passes(s)).count();
            if matched != 1 {
                errs.push(FieldError::invalid_raw(
                    path,
                    render(value),
                    format!("{shown} in body must validate one and only one schema (oneOf)"),
                ));
            }
        }
        if let Some(not) = &self.not
            && passes(not)
        {
            errs.push(FieldError::invalid_raw(
                path,
                render(value),
                format!("{shown} in body must not validate the schema (not)"),
            ));
        }
    }
}

/// A number as upstream prints it: `10`, not `10.0`.
fn number(n: f64) -> String {
    if n.fract() == 0.0 && n.abs() < 1e15 {
        format!("{}", n as i64)
    } else {
        n.to_string()
    }
}

/// A value as upstream prints it in a cause: strings quoted, others as JSON.
fn render(value: &Value) -> String {
    value.to_string()
}

fn type_invalid(path: &str, found: &str, want: &str, shown: &str) -> FieldError {
    FieldError {
        kind: capstan_meta::FieldErrorKind::TypeInvalid,
        field: path.to_string(),
        value: Some(render(&Value::from(found))),
        detail: format!("{shown} in body must be of type {want}: \"{found}\""),
    }
}

/// Checks a map's property count or a list's item count against `(min, max)`.
fn count_within(
    count: usize,
    (min, max): (Option<i64>, Option<i64>),
    unit: &str,
    path: &str,
    shown: &str,
    errs: &mut FieldErrors,
) {
    let count = count as i64;
    if let Some(max) = max
        && count > max
    {
        errs.push(FieldError {
            kind: capstan_meta::FieldErrorKind::TooMany,
            field: path.to_string(),
            value: Some(count.to_string()),
            detail: format!("must have at most {max} items"),
        });
    }
    if let Some(min) = min
        && count < min
    {
        errs.push(FieldError::invalid_raw(
            path,
            count.to_string(),
            format!("{shown} in body should have at least {min} {unit}"),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(doc: Value) -> Schema {
        let props: JSONSchemaProps = serde_json::from_value(doc).unwrap();
        Schema::compile(&props)
    }

    fn shop() -> Schema {
        schema(json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "required": ["size"],
                    "properties": {
                        "size": {"type": "integer", "minimum": 1, "maximum": 10},
                        "color": {"type": "string", "enum": ["red", "blue"], "default": "red"},
                        "name": {"type": "string", "pattern": "^[a-z]+$", "maxLength": 5},
                        "tags": {"type": "array", "maxItems": 2, "items": {"type": "string"}, "x-kubernetes-list-type": "set"},
                        "port": {"x-kubernetes-int-or-string": true},
                        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                        "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port"],
                                  "items": {"type": "object", "properties": {"port": {"type": "integer"}, "proto": {"type": "string", "default": "TCP"}}}}
                    }
                },
                "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}
            }
        }))
    }

    fn messages(errs: &FieldErrors) -> Vec<String> {
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn pruning_keeps_declared_fields_and_reports_the_rest() {
        let mut obj = json!({
            "apiVersion": "x.io/v1", "kind": "Shop", "metadata": {"name": "a"},
            "spec": {"size": 1, "extra": 1, "labels": {"a": "b"}, "free": {"any": {"deep": 1}},
                     "ports": [{"port": 80, "junk": true}]},
            "top": 1
        });
        let mut unknown = Vec::new();
        shop().prune_object(&mut obj, &mut unknown);
        assert_eq!(unknown, ["spec.extra", "spec.ports[0].junk", "top"]);
        assert_eq!(obj["spec"]["free"], json!({"any": {"deep": 1}}));
        assert_eq!(obj["spec"]["labels"], json!({"a": "b"}));
        assert_eq!(obj["metadata"], json!({"name": "a"}));
    }

    #[test]
    fn defaults_fill_absent_fields_at_every_depth() {
        let mut obj =
            json!({"spec": {"size": 1, "ports": [{"port": 80}, {"port": 81, "proto": "UDP"}]}});
        shop().apply_defaults(&mut obj);
        assert_eq!(obj["spec"]["color"], "red");
        assert_eq!(obj["spec"]["ports"][0]["proto"], "TCP");
        assert_eq!(obj["spec"]["ports"][1]["proto"], "UDP");
        // An absent parent gets no defaults of its children.
        assert!(obj.get("status").is_none());
    }

    #[test]
    fn validation_speaks_upstream() {
        let s = shop();
        let obj = json!({"spec": {"size": 20, "color": "pink", "name": "ABCDEFG", "tags": ["a", "a", "b"],
                                  "port": true, "labels": {"x": 1}, "ports": [{"port": 1}, {"port": 1}]},
                         "status": {"ready": "yes"}});
        assert_eq!(
            messages(&s.validate_object(&obj)),
            [
                "spec.color: Unsupported value: \"pink\": supported values: \"red\", \"blue\"",
                "spec.labels.x: Invalid value: \"integer\": spec.labels.x in body must be of type string: \"integer\"",
                "spec.name: Too long: may not be more than 5 bytes",
                "spec.name: Invalid value: \"ABCDEFG\": spec.name in body should match '^[a-z]+$'",
                "spec.port: Invalid value: \"boolean\": spec.port in body must be of type integer: \"boolean\"",
                "spec.ports[1]: Duplicate value: map[\"port\"=1]",
                "spec.size: Invalid value: 20: spec.size in body should be less than or equal to 10",
                "spec.tags: Too many: 3: must have at most 2 items",
                "spec.tags[1]: Duplicate value: \"a\"",
                "status.ready: Invalid value: \"string\": status.ready in body must be of type boolean: \"string\"",
            ]
        );
        assert_eq!(
            messages(&s.validate_object(&json!({"spec": {"port": "http"}}))),
            ["spec.size: Required value"]
        );
        assert!(
            s.validate_object(&json!({"spec": {"size": 3, "port": 8080}}))
                .is_empty()
        );
    }
}
