//! Patch types and their application to a JSON document.
//!
//! Strategic merge patch is applied here without per-field patch strategies: every list is
//! replaced, which is exactly upstream's behaviour for the fields of the types served so far
//! (they declare no merge keys). The directives (`$patch`, `$retainKeys`,
//! `$deleteFromPrimitiveList/…`, `$setElementOrder/…`) are honoured as upstream defines them.

use capstan_meta::{ApiError, Reason};
use serde_json::{Map, Value};

/// The patch media types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// `application/json-patch+json` (RFC 6902).
    Json,
    /// `application/merge-patch+json` (RFC 7386).
    Merge,
    /// `application/strategic-merge-patch+json`.
    Strategic,
}

impl PatchType {
    /// The patch media types accepted, as named in a 415 answer.
    pub const MEDIA_TYPES: &'static [&'static str] = &[
        "application/json-patch+json",
        "application/merge-patch+json",
        "application/strategic-merge-patch+json",
    ];

    /// The patch type of a `Content-Type` (parameters ignored).
    pub fn from_content_type(content_type: &str) -> Option<Self> {
        let essence = content_type.split(';').next().unwrap_or("").trim();
        match essence.to_ascii_lowercase().as_str() {
            "application/json-patch+json" => Some(Self::Json),
            "application/merge-patch+json" => Some(Self::Merge),
            "application/strategic-merge-patch+json" => Some(Self::Strategic),
            _ => None,
        }
    }
}

fn unprocessable(message: impl Into<String>) -> ApiError {
    ApiError::new(Reason::Invalid, message)
}

/// Applies `patch` (the request body) of type `kind` to `doc`.
pub fn apply(kind: PatchType, doc: &mut Value, patch: &[u8]) -> Result<(), ApiError> {
    match kind {
        PatchType::Json => {
            let ops: json_patch::Patch = serde_json::from_slice(patch)
                .map_err(|e| ApiError::bad_request(format!("the JSON patch is malformed: {e}")))?;
            json_patch::patch(doc, &ops.0).map_err(|e| unprocessable(e.to_string()))
        }
        PatchType::Merge => {
            let p: Value = serde_json::from_slice(patch)
                .map_err(|e| ApiError::bad_request(format!("the merge patch is malformed: {e}")))?;
            if !p.is_object() {
                return Err(ApiError::bad_request("a merge patch must be a JSON object"));
            }
            json_patch::merge(doc, &p);
            Ok(())
        }
        PatchType::Strategic => {
            let p: Value = serde_json::from_slice(patch).map_err(|e| {
                ApiError::bad_request(format!("the strategic merge patch is malformed: {e}"))
            })?;
            let Value::Object(p) = p else {
                return Err(ApiError::bad_request(
                    "a strategic merge patch must be a JSON object",
                ));
            };
            let Value::Object(target) = doc else {
                return Err(unprocessable("the object to patch is not a JSON object"));
            };
            strategic_merge(target, p)
        }
    }
}

/// Whether the patch itself sets `metadata.resourceVersion` (a precondition: such a patch is
/// not retried when it loses a race). A malformed patch says no; applying it will say why.
pub fn sets_resource_version(kind: PatchType, patch: &[u8]) -> bool {
    let Ok(p) = serde_json::from_slice::<Value>(patch) else {
        return false;
    };
    match kind {
        PatchType::Json => p.as_array().is_some_and(|ops| {
            ops.iter().any(|op| {
                op.get("path").and_then(Value::as_str) == Some("/metadata/resourceVersion")
            })
        }),
        PatchType::Merge | PatchType::Strategic => p
            .get("metadata")
            .and_then(|m| m.get("resourceVersion"))
            .is_some_and(|v| !v.is_null()),
    }
}

const DIRECTIVE: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const DELETE_FROM_PRIMITIVE: &str = "$deleteFromPrimitiveList/";
const SET_ELEMENT_ORDER: &str = "$setElementOrder/";

/// Merges `patch` into `target` with strategic-merge semantics for maps.
fn strategic_merge(
    target: &mut Map<String, Value>,
    mut patch: Map<String, Value>,
) -> Result<(), ApiError> {
    match patch.remove(DIRECTIVE) {
        None => {}
        Some(Value::String(d)) if d == "merge" => {}
        Some(Value::String(d)) if d == "replace" => {
            strip_directives(&mut patch)?;
            *target = patch;
            return Ok(());
        }
        Some(Value::String(d)) if d == "delete" => {
            target.clear();
            return Ok(());
        }
        Some(other) => return Err(unprocessable(format!("unknown patch type: {other}"))),
    }
    let retain = match patch.remove(RETAIN_KEYS) {
        None => None,
        Some(Value::Array(keys)) => Some(
            keys.into_iter()
                .map(|k| match k {
                    Value::String(s) => Ok(s),
                    other => Err(unprocessable(format!(
                        "$retainKeys must list strings, found {other}"
                    ))),
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
        Some(other) => {
            return Err(unprocessable(format!(
                "$retainKeys must be a list, found {other}"
            )));
        }
    };
    for (key, value) in patch {
        if key.starts_with(SET_ELEMENT_ORDER) {
            // Only orders lists merged by key; lists here are replaced whole.
            continue;
        }
        if let Some(field) = key.strip_prefix(DELETE_FROM_PRIMITIVE) {
            let Value::Array(remove) = value else {
                return Err(unprocessable(format!("{key} must be a list")));
            };
            if let Some(Value::Array(list)) = target.get_mut(field) {
                list.retain(|v| !remove.contains(v));
            }
            continue;
        }
        match value {
            Value::Null => {
                target.remove(&key);
            }
            Value::Object(mut sub) => {
                if sub.get(DIRECTIVE) == Some(&Value::String("delete".into())) {
                    target.remove(&key);
                    continue;
                }
                match target.get_mut(&key) {
                    Some(Value::Object(existing)) => strategic_merge(existing, sub)?,
                    _ => {
                        strip_directives(&mut sub)?;
                        target.insert(key, Value::Object(sub));
                    }
                }
            }
            Value::Array(items) => {
                let items = items
                    .into_iter()
                    .filter(|item| !matches!(item, Value::Object(m) if m.len() == 1 && m.contains_key(DIRECTIVE)))
                    .collect();
                target.insert(key, Value::Array(items));
            }
            scalar => {
                target.insert(key, scalar);
            }
        }
    }
    if let Some(keep) = retain {
        target.retain(|k, _| keep.iter().any(|r| r == k));
    }
    Ok(())
}

/// Removes directives (and null values) from a map that is inserted as it is.
fn strip_directives(map: &mut Map<String, Value>) -> Result<(), ApiError> {
    map.retain(|k, v| !k.starts_with('$') && !v.is_null());
    for value in map.values_mut() {
        if let Value::Object(sub) = value {
            strip_directives(sub)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(kind: PatchType, doc: Value, patch: Value) -> Result<Value, ApiError> {
        let mut doc = doc;
        apply(kind, &mut doc, &serde_json::to_vec(&patch).unwrap())?;
        Ok(doc)
    }

    #[test]
    fn json_patch_with_test_op() {
        let doc = json!({"a": 1, "b": [1, 2]});
        let out = run(PatchType::Json, doc.clone(), json!([{"op": "test", "path": "/a", "value": 1}, {"op": "add", "path": "/b/-", "value": 3}])).unwrap();
        assert_eq!(out, json!({"a": 1, "b": [1, 2, 3]}));
        let err = run(
            PatchType::Json,
            doc,
            json!([{"op": "test", "path": "/a", "value": 2}]),
        )
        .unwrap_err();
        assert_eq!(err.code(), 422);
        assert_eq!(
            run(PatchType::Json, json!({}), json!({"op": "nope"}))
                .unwrap_err()
                .code(),
            400
        );
    }

    #[test]
    fn merge_patch_removes_nulls() {
        let out = run(
            PatchType::Merge,
            json!({"a": {"x": 1, "y": 2}, "l": [1]}),
            json!({"a": {"x": null, "z": 3}, "l": [2]}),
        )
        .unwrap();
        assert_eq!(out, json!({"a": {"y": 2, "z": 3}, "l": [2]}));
    }

    #[test]
    fn strategic_directives() {
        let doc = json!({"metadata": {"labels": {"a": "1", "b": "2"}, "annotations": {"x": "1"}}, "mountOptions": ["ro", "soft", "hard"], "parameters": {"p": "1", "q": "2"}});
        let out = run(
            PatchType::Strategic,
            doc,
            json!({
                "metadata": {"labels": {"a": null, "c": "3"}, "annotations": {"$patch": "replace", "y": "2"}},
                "$deleteFromPrimitiveList/mountOptions": ["soft"],
                "$setElementOrder/mountOptions": ["hard", "ro"],
                "parameters": {"$retainKeys": ["q", "r"], "r": "3"}
            }),
        )
        .unwrap();
        assert_eq!(
            out,
            json!({"metadata": {"labels": {"b": "2", "c": "3"}, "annotations": {"y": "2"}}, "mountOptions": ["ro", "hard"], "parameters": {"q": "2", "r": "3"}})
        );
        let deleted = run(
            PatchType::Strategic,
            json!({"m": {"a": 1}, "k": 1}),
            json!({"m": {"$patch": "delete"}}),
        )
        .unwrap();
        assert_eq!(deleted, json!({"k": 1}));
        assert_eq!(
            run(
                PatchType::Strategic,
                json!({}),
                json!({"$patch": "explode"})
            )
            .unwrap_err()
            .code(),
            422
        );
    }

    #[test]
    fn resource_version_preconditions() {
        assert!(sets_resource_version(
            PatchType::Merge,
            br#"{"metadata":{"resourceVersion":"5"}}"#
        ));
        assert!(!sets_resource_version(
            PatchType::Merge,
            br#"{"metadata":{"annotations":{"resourceVersion":"x"}}}"#
        ));
        assert!(sets_resource_version(
            PatchType::Json,
            br#"[{"op":"replace","path":"/metadata/resourceVersion","value":"5"}]"#
        ));
        assert!(!sets_resource_version(PatchType::Strategic, b"not json"));
    }

    #[test]
    fn content_types() {
        assert_eq!(
            PatchType::from_content_type("application/merge-patch+json; charset=utf-8"),
            Some(PatchType::Merge)
        );
        assert_eq!(
            PatchType::from_content_type("application/apply-patch+yaml"),
            None
        );
    }
}
