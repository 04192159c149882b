//! Custom objects and their strategy: an object of a CRD is its type meta, standard
//! metadata and whatever else the schema declares; writes are pruned, defaulted and
//! validated by the storage version's schema.

use std::borrow::Cow;
use std::sync::Arc;

use capstan_meta::v1::ObjectMeta;
use capstan_meta::{FieldError, FieldErrors, ResourceDescriptor, Strategy};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::schema::Schema;

/// An object of a custom resource.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct CustomObject {
    /// `apiVersion`.
    #[serde(
        rename = "apiVersion",
        default,
        skip_serializing_if = "String::is_empty"
    )]
    pub api_version: String,
    /// `kind`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub kind: String,
    /// Standard object metadata.
    #[serde(default)]
    pub metadata: ObjectMeta,
    /// Every other field (`spec`, `status`, ...).
    #[serde(flatten)]
    pub content: Map<String, Value>,
}

impl capstan_meta::HasMetadata for CustomObject {
    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl schemars::JsonSchema for CustomObject {
    fn schema_name() -> Cow<'static, str> {
        "CustomObject".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
    }
}

/// Where a CRD's `scale` subresource finds replicas and the selector.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScalePaths {
    /// `.spec.replicas`
    pub spec_replicas: String,
    /// `.status.replicas`
    pub status_replicas: String,
    /// `.status.selector`, when set.
    pub label_selector: Option<String>,
}

/// The scale of a custom object, at the paths its CRD names (absent replicas count as 0, as
/// upstream counts them).
pub struct CustomScale(pub ScalePaths);

impl capstan_registry::subresources::ScaleAccess<CustomObject> for CustomScale {
    fn desired(&self, obj: &CustomObject) -> i32 {
        replicas(lookup(&obj.content, &self.0.spec_replicas))
    }

    fn set_desired(&self, obj: &mut CustomObject, replicas: i32) {
        let mut parts: Vec<&str> = self
            .0
            .spec_replicas
            .trim_start_matches('.')
            .split('.')
            .collect();
        let Some(last) = parts.pop() else {
            return;
        };
        let mut map = &mut obj.content;
        for part in parts {
            let entry = map
                .entry(part.to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            if !entry.is_object() {
                *entry = Value::Object(Map::new());
            }
            let Value::Object(inner) = entry else {
                return;
            };
            map = inner;
        }
        map.insert(last.to_string(), Value::from(replicas));
    }

    fn current(&self, obj: &CustomObject) -> i32 {
        replicas(lookup(&obj.content, &self.0.status_replicas))
    }

    fn selector(&self, obj: &CustomObject) -> String {
        self.0
            .label_selector
            .as_deref()
            .and_then(|p| lookup(&obj.content, p))
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    }
}

fn replicas(value: Option<&Value>) -> i32 {
    value
        .and_then(Value::as_i64)
        .and_then(|r| i32::try_from(r).ok())
        .unwrap_or(0)
}

/// Reads the value at a simple JSON path (`.spec.replicas`) of an object's fields.
pub fn lookup<'a>(content: &'a Map<String, Value>, path: &str) -> Option<&'a Value> {
    let mut parts = path.trim_start_matches('.').split('.');
    let mut value = content.get(parts.next()?)?;
    for part in parts {
        value = value.get(part)?;
    }
    Some(value)
}

/// The strategy of one custom resource (its storage version).
#[derive(Debug, Clone)]
pub struct CustomStrategy {
    descriptor: ResourceDescriptor,
    schema: Arc<Schema>,
    status: bool,
}

impl CustomStrategy {
    /// The strategy of the resource `descriptor` names, with objects of `schema`; `status`
    /// when the version has the status subresource.
    pub fn new(descriptor: ResourceDescriptor, schema: Arc<Schema>, status: bool) -> Self {
        Self {
            descriptor,
            schema,
            status,
        }
    }
}

impl CustomStrategy {
    /// Type meta, the schema, then (when those pass) the CEL rules; `old` on updates.
    fn check(&self, obj: &CustomObject, old: Option<&CustomObject>) -> FieldErrors {
        let mut errs = Vec::new();
        let want = self.descriptor.api_version();
        if obj.api_version != want {
            errs.push(FieldError::invalid(
                "apiVersion",
                &obj.api_version,
                format!("must be {want}"),
            ));
        }
        if obj.kind != self.descriptor.kind {
            errs.push(FieldError::invalid(
                "kind",
                &obj.kind,
                format!("must be {}", self.descriptor.kind),
            ));
        }
        errs.extend(self.schema.validate_fields(&obj.content));
        if errs.is_empty() && self.schema.has_rules() {
            let old = old.map(rule_view);
            errs.extend(
                self.schema
                    .check_object_rules(&rule_view(obj), old.as_ref()),
            );
        }
        errs
    }
}

/// What root rules see as `self`: the fields, type meta, and of the metadata only `name` and
/// `generateName`, as upstream.
fn rule_view(obj: &CustomObject) -> Value {
    let mut view = obj.content.clone();
    view.insert("apiVersion".into(), obj.api_version.clone().into());
    view.insert("kind".into(), obj.kind.clone().into());
    let mut meta = Map::new();
    if let Some(name) = &obj.metadata.name {
        meta.insert("name".into(), name.clone().into());
    }
    if let Some(prefix) = &obj.metadata.generate_name {
        meta.insert("generateName".into(), prefix.clone().into());
    }
    view.insert("metadata".into(), Value::Object(meta));
    Value::Object(view)
}

impl Strategy for CustomStrategy {
    type Object = CustomObject;

    fn descriptor(&self) -> ResourceDescriptor {
        self.descriptor.clone()
    }

    fn strategic_merge(&self) -> bool {
        false
    }

    fn prune(&self, obj: &mut CustomObject) -> Vec<String> {
        let mut value = Value::Object(std::mem::take(&mut obj.content));
        let mut unknown = Vec::new();
        self.schema.prune_object(&mut value, &mut unknown);
        if let Value::Object(map) = value {
            obj.content = map;
        }
        unknown
    }

    fn default(&self, obj: &mut CustomObject) {
        let mut value = Value::Object(std::mem::take(&mut obj.content));
        self.schema.apply_defaults(&mut value);
        if let Value::Object(map) = value {
            obj.content = map;
        }
    }

    fn on_read(&self, obj: &mut CustomObject) {
        if self.schema.has_defaults() {
            self.default(obj);
        }
    }

    fn prepare_for_create(&self, obj: &mut CustomObject) {
        if obj.api_version.is_empty() {
            obj.api_version = self.descriptor.api_version();
        }
        if obj.kind.is_empty() {
            obj.kind = self.descriptor.kind.clone();
        }
        if self.status {
            obj.content.remove("status");
        }
        obj.metadata.generation = Some(1);
    }

    fn prepare_for_update(&self, new: &mut CustomObject, old: &CustomObject) {
        if new.api_version.is_empty() {
            new.api_version = self.descriptor.api_version();
        }
        if new.kind.is_empty() {
            new.kind = self.descriptor.kind.clone();
        }
        // The store keeps the stored status on writes of the resource (`copy_status`).
        let changed = if self.status {
            let without_status = |m: &Map<String, Value>| {
                m.iter()
                    .filter(|(k, _)| *k != "status")
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect::<Map<String, Value>>()
            };
            without_status(&new.content) != without_status(&old.content)
        } else {
            new.content != old.content
        };
        let before = old.metadata.generation.unwrap_or(1);
        new.metadata.generation = Some(if changed { before + 1 } else { before });
    }

    fn validate(&self, obj: &CustomObject) -> FieldErrors {
        self.check(obj, None)
    }

    fn validate_update(&self, new: &CustomObject, old: &CustomObject) -> FieldErrors {
        self.check(new, Some(old))
    }

    fn field(&self, obj: &CustomObject, field: &str) -> Option<String> {
        match lookup(&obj.content, field)? {
            Value::String(s) => Some(s.clone()),
            Value::Bool(b) => Some(b.to_string()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        }
    }

    fn has_status(&self) -> bool {
        self.status
    }

    /// A custom resource's `status` writes only the status, as upstream's.
    fn status_metadata(
        &self,
        _sent: &capstan_meta::v1::ObjectMeta,
        stored: &capstan_meta::v1::ObjectMeta,
    ) -> capstan_meta::v1::ObjectMeta {
        stored.clone()
    }

    fn copy_status(&self, to: &mut CustomObject, from: &CustomObject) {
        match from.content.get("status") {
            Some(status) => to.content.insert("status".into(), status.clone()),
            None => to.content.remove("status"),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn strategy(status: bool) -> CustomStrategy {
        let props = serde_json::from_value(json!({
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": {
                    "size": {"type": "integer", "maximum": 5},
                    "color": {"type": "string", "default": "red"}
                }},
                "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}
            }
        }))
        .unwrap();
        let descriptor = ResourceDescriptor {
            group: "example.com".into(),
            version: "v1".into(),
            kind: "Shop".into(),
            resource: "shops".into(),
            namespaced: true,
            ..Default::default()
        };
        CustomStrategy::new(descriptor, Arc::new(Schema::compile(&props)), status)
    }

    fn object(doc: Value) -> CustomObject {
        serde_json::from_value(doc).unwrap()
    }

    #[test]
    fn objects_keep_their_type_meta_and_fields_round_trip() {
        let doc = json!({"apiVersion": "example.com/v1", "kind": "Shop", "metadata": {"name": "a"}, "spec": {"size": 1}});
        let o = object(doc.clone());
        assert_eq!(o.metadata.name.as_deref(), Some("a"));
        assert_eq!(serde_json::to_value(&o).unwrap(), doc);
    }

    #[test]
    fn writes_are_pruned_defaulted_and_validated() {
        let s = strategy(true);
        let mut o = object(
            json!({"metadata": {"name": "a"}, "spec": {"size": 9, "junk": 1}, "status": {"ready": true}}),
        );
        assert_eq!(s.prune(&mut o), ["spec.junk"]);
        s.default(&mut o);
        s.prepare_for_create(&mut o);
        assert_eq!(o.api_version, "example.com/v1");
        assert_eq!(o.content["spec"]["color"], "red");
        assert!(
            !o.content.contains_key("status"),
            "status comes through its subresource"
        );
        let errs: Vec<String> = s.validate(&o).iter().map(ToString::to_string).collect();
        assert_eq!(
            errs,
            ["spec.size: Invalid value: 9: spec.size in body should be less than or equal to 5"]
        );
    }

    #[test]
    fn generation_counts_spec_changes_not_status_ones() {
        let s = strategy(true);
        let old = object(
            json!({"apiVersion": "example.com/v1", "kind": "Shop", "metadata": {"name": "a", "generation": 1}, "spec": {"size": 1}, "status": {"ready": false}}),
        );
        let mut new = old.clone();
        new.content.insert("status".into(), json!({"ready": true}));
        s.prepare_for_update(&mut new, &old);
        assert_eq!(new.metadata.generation, Some(1));
        new.content.insert("spec".into(), json!({"size": 2}));
        s.prepare_for_update(&mut new, &old);
        assert_eq!(new.metadata.generation, Some(2));
        assert_eq!(s.field(&new, "spec.size").as_deref(), Some("2"));
    }

    #[test]
    fn scale_reads_and_writes_the_crd_paths() {
        use capstan_registry::subresources::ScaleAccess;
        let scale = CustomScale(ScalePaths {
            spec_replicas: ".spec.replicas".into(),
            status_replicas: ".status.replicas".into(),
            label_selector: Some(".status.selector".into()),
        });
        let mut o = object(
            json!({"metadata": {"name": "a"}, "status": {"replicas": 2, "selector": "app=a"}}),
        );
        assert_eq!((scale.desired(&o), scale.current(&o)), (0, 2));
        assert_eq!(scale.selector(&o), "app=a");
        scale.set_desired(&mut o, 4);
        assert_eq!(o.content["spec"], json!({"replicas": 4}));
        assert_eq!(scale.desired(&o), 4);
    }

    #[test]
    fn root_rules_see_type_meta_and_the_name_but_no_other_metadata() {
        let props = serde_json::from_value(json!({
            "type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.metadata.name.startsWith('shop-')", "message": "names start with shop-"},
                {"rule": "self.kind == 'Shop' && self.apiVersion == 'example.com/v1'"},
                {"rule": "!has(self.metadata.labels)", "message": "labels are not seen"},
                {"rule": "self.metadata.name != 'shop-x'", "fieldPath": ".spec"}
            ],
            "properties": {"spec": {"type": "object"}}
        }))
        .unwrap();
        let descriptor = ResourceDescriptor {
            group: "example.com".into(),
            version: "v1".into(),
            kind: "Shop".into(),
            resource: "shops".into(),
            ..Default::default()
        };
        let s = CustomStrategy::new(descriptor, Arc::new(Schema::compile(&props)), false);
        let shop = |name: &str| {
            object(json!({"apiVersion": "example.com/v1", "kind": "Shop",
                          "metadata": {"name": name, "labels": {"a": "b"}}, "spec": {}}))
        };
        let messages = |name: &str| -> Vec<String> {
            s.validate(&shop(name))
                .iter()
                .map(ToString::to_string)
                .collect()
        };
        assert!(messages("shop-1").is_empty());
        assert_eq!(
            messages("store"),
            ["<nil>: Invalid value: \"object\": names start with shop-"]
        );
        assert_eq!(
            messages("shop-x"),
            ["spec: Invalid value: \"object\": failed rule: self.metadata.name != 'shop-x'"]
        );
    }

    #[test]
    fn reads_fill_the_defaults_the_schema_has_now() {
        let s = strategy(false);
        let mut stored = object(json!({"metadata": {"name": "a"}, "spec": {"size": 1}}));
        s.on_read(&mut stored);
        assert_eq!(stored.content["spec"], json!({"size": 1, "color": "red"}));
    }
}
