//! The protobuf schemas and the JSON (OpenAPI) schemas describe the same objects: for every
//! served kind, each JSON property has a protobuf field of the same name (directly or through
//! a struct embedded inline) and the other way round. This is what makes the transcoder
//! lossless, and what catches an inline struct missing from the schema module's list.

use std::collections::{BTreeSet, HashSet};

use capstan_negotiation::schema::{FieldType, Schema};
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value};

fn definitions() -> Map<String, Value> {
    use k8s_openapi::api::{coordination, core, events, policy, scheduling, storage};
    let mut g = SchemaSettings::openapi3().into_generator();
    g.subschema_for::<core::v1::Pod>();
    g.subschema_for::<core::v1::Node>();
    g.subschema_for::<core::v1::Namespace>();
    g.subschema_for::<core::v1::ConfigMap>();
    g.subschema_for::<core::v1::Secret>();
    g.subschema_for::<core::v1::ServiceAccount>();
    g.subschema_for::<core::v1::Event>();
    g.subschema_for::<core::v1::PersistentVolume>();
    g.subschema_for::<core::v1::PersistentVolumeClaim>();
    g.subschema_for::<core::v1::Binding>();
    g.subschema_for::<events::v1::Event>();
    g.subschema_for::<coordination::v1::Lease>();
    g.subschema_for::<storage::v1::StorageClass>();
    g.subschema_for::<storage::v1::CSINode>();
    g.subschema_for::<scheduling::v1::PriorityClass>();
    g.subschema_for::<policy::v1::PodDisruptionBudget>();
    g.subschema_for::<k8s_openapi::apimachinery::pkg::apis::meta::v1::Status>();
    g.take_definitions(true).into_iter().collect()
}

/// The definition a property schema points at (directly, as list items or map values).
fn target(prop: &Value) -> Option<String> {
    let r = prop
        .get("$ref")
        .or_else(|| prop.pointer("/items/$ref"))
        .or_else(|| prop.pointer("/additionalProperties/$ref"))
        .or_else(|| prop.pointer("/allOf/0/$ref"))?;
    r.as_str()?.rsplit('/').next().map(str::to_string)
}

/// The JSON names a message's fields give, inline structs expanded.
fn proto_names(schema: &Schema, index: usize, out: &mut Vec<(String, Option<usize>)>) {
    for f in &schema.message(index).fields {
        let nested = match f.ty {
            FieldType::Message(i) => Some(i),
            _ => None,
        };
        if f.inline {
            proto_names(schema, nested.expect("inline fields are messages"), out);
        } else {
            out.push((f.name.clone(), nested));
        }
    }
}

/// Where the protobuf schemas (v1.35, the newest k8s-rs-pb carries) and the JSON schemas
/// (k8s-openapi's v1.36) differ: v1.36 added these JSON properties, left out of protobuf
/// bodies, and renamed v1.35's alpha `workloadRef` (`schedulingGroup`). All belong to alpha
/// features (off by default upstream) but `ResourceHealth.message` (ResourceHealthStatusMessage,
/// beta and on): a device's health message a kubelet writes in protobuf is lost.
const V1_36_CHANGES: &[&str] = &[
    "io.k8s.api.core.v1.PodSpec: JSON property schedulingGroup has no protobuf field",
    "io.k8s.api.core.v1.PodSpec: protobuf field workloadRef is not in JSON",
    "io.k8s.api.core.v1.PodStatus: JSON property nodeAllocatableResourceClaimStatuses has no protobuf field",
    "io.k8s.api.core.v1.ResourceHealth: JSON property message has no protobuf field",
    "io.k8s.api.core.v1.VolumeMountStatus: JSON property volumeStatus has no protobuf field",
    "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta: JSON property shardInfo has no protobuf field",
];

#[test]
fn every_served_kind_has_the_same_fields_in_both_schemas() {
    let defs = definitions();
    let schema = Schema::upstream();
    let mut problems = BTreeSet::new();
    let mut seen = HashSet::new();
    let mut queue: Vec<(String, usize)> = defs
        .keys()
        .filter_map(|name| {
            let proto = name.strip_prefix("io.k8s.")?;
            Some((name.clone(), schema.index(proto)?))
        })
        .collect();
    assert!(queue.len() > 50, "definitions map to messages");
    while let Some((def_name, index)) = queue.pop() {
        if !seen.insert(def_name.clone()) || schema.message(index).special.is_some() {
            continue;
        }
        let Some(props) = defs[&def_name].get("properties").and_then(Value::as_object) else {
            continue;
        };
        let mut fields = Vec::new();
        proto_names(schema, index, &mut fields);
        for (name, nested) in &fields {
            match props.get(name) {
                None => {
                    problems.insert(format!("{def_name}: protobuf field {name} is not in JSON"));
                }
                Some(prop) => {
                    if let (Some(nested), Some(t)) = (nested, target(prop))
                        && defs.contains_key(&t)
                    {
                        queue.push((t, *nested));
                    }
                }
            }
        }
        for name in props.keys() {
            let known = fields.iter().any(|(f, _)| f == name);
            if !known && name != "apiVersion" && name != "kind" {
                problems.insert(format!(
                    "{def_name}: JSON property {name} has no protobuf field"
                ));
            }
        }
    }
    for known in V1_36_CHANGES {
        assert!(problems.remove(*known), "no longer differs: {known}");
    }
    assert!(problems.is_empty(), "{problems:#?}");
    assert!(seen.len() > 100, "walked {} definitions", seen.len());
}
