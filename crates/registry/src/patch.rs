//! Patch types and their application to a JSON document. Strategic merge patch follows the
//! patch strategies of the served types (`capstan-merge`); server-side apply is applied by the
//! store itself, since it needs the object's managedFields.

use capstan_merge::Typed;
use capstan_meta::{ApiError, Reason};
use serde_json::Value;

/// The patch media types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// `application/json-patch+json` (RFC 6902).
    Json,
    /// `application/merge-patch+json` (RFC 7386).
    Merge,
    /// `application/strategic-merge-patch+json`.
    Strategic,
    /// `application/apply-patch+yaml`: server-side apply.
    Apply,
}

impl PatchType {
    /// The patch media types accepted, as named in a 415 answer.
    pub const MEDIA_TYPES: &'static [&'static str] = &[
        "application/json-patch+json",
        "application/merge-patch+json",
        "application/strategic-merge-patch+json",
        "application/apply-patch+yaml",
    ];

    /// The media types of the patches a custom resource takes (no strategic merge patch).
    pub const CUSTOM_MEDIA_TYPES: &'static [&'static str] = &[
        "application/json-patch+json",
        "application/merge-patch+json",
        "application/apply-patch+yaml",
    ];

    /// The patch type of a `Content-Type` (parameters ignored).
    pub fn from_content_type(content_type: &str) -> Option<Self> {
        let essence = content_type.split(';').next().unwrap_or("").trim();
        match essence.to_ascii_lowercase().as_str() {
            "application/json-patch+json" => Some(Self::Json),
            "application/merge-patch+json" => Some(Self::Merge),
            "application/strategic-merge-patch+json" => Some(Self::Strategic),
            "application/apply-patch+yaml" => Some(Self::Apply),
            _ => None,
        }
    }
}

fn unprocessable(message: impl Into<String>) -> ApiError {
    ApiError::new(Reason::Invalid, message)
}

/// Applies `patch` (the request body) of type `kind` to `doc`; `typed` gives strategic merge
/// patch the kind's patch strategies. An apply patch is not applied here (the store applies
/// it with the object's managedFields). A refused JSON patch leaves `doc` as it was.
pub fn apply(
    kind: PatchType,
    typed: Option<&Typed<'_>>,
    doc: &mut Value,
    patch: &[u8],
) -> Result<(), ApiError> {
    match kind {
        PatchType::Json => {
            let ops: json_patch::Patch = serde_json::from_slice(patch)
                .map_err(|e| ApiError::bad_request(format!("the JSON patch is malformed: {e}")))?;
            apply_json_patch(doc, &ops.0)
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
            capstan_merge::strategic::apply(typed, doc, patch).map_err(crate::managed::merge_error)
        }
        PatchType::Apply => Err(ApiError::internal(
            "an apply patch is applied by the store, not as a patch",
        )),
    }
}

/// The most operations a JSON patch may have, as upstream.
pub const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

/// How much `copy` operations may grow a document in all, in bytes of JSON: upstream's
/// limit, the largest request body (a patch of a few copies could otherwise double a
/// document again and again).
pub const MAX_JSON_PATCH_COPY_BYTES: usize = 3 * 1024 * 1024;

/// Applies a JSON patch with upstream's bounds: at most [`MAX_JSON_PATCH_OPERATIONS`]
/// operations (413 beyond), copies adding at most [`MAX_JSON_PATCH_COPY_BYTES`] (422 beyond).
fn apply_json_patch(doc: &mut Value, ops: &[json_patch::PatchOperation]) -> Result<(), ApiError> {
    if ops.len() > MAX_JSON_PATCH_OPERATIONS {
        return Err(ApiError::new(
            Reason::RequestEntityTooLarge,
            format!(
                "The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {}",
                ops.len()
            ),
        ));
    }
    // A refused patch changes nothing (see `capstan_merge::json_patch`).
    if !ops
        .iter()
        .any(|op| matches!(op, json_patch::PatchOperation::Copy(_)))
    {
        return capstan_merge::json_patch::apply(doc, ops)
            .map_err(|e| unprocessable(e.to_string()));
    }
    let original = doc.clone();
    let result = apply_counting_copies(doc, ops);
    if result.is_err() {
        *doc = original;
    }
    result
}

/// With copies, one operation at a time, each copy's size counted before it is made.
fn apply_counting_copies(
    doc: &mut Value,
    ops: &[json_patch::PatchOperation],
) -> Result<(), ApiError> {
    let mut copied = 0usize;
    for op in ops {
        if let json_patch::PatchOperation::Copy(copy) = op
            && let Some(value) = doc.pointer(copy.from.as_str())
        {
            copied = copied.saturating_add(json_size(value));
            if copied > MAX_JSON_PATCH_COPY_BYTES {
                return Err(unprocessable(format!(
                    "Unable to complete the copy, the accumulated size increase of copy is {copied}, exceeding the limit {MAX_JSON_PATCH_COPY_BYTES}"
                )));
            }
        }
        json_patch::patch_unsafe(doc, std::slice::from_ref(op))
            .map_err(|e| unprocessable(e.to_string()))?;
    }
    Ok(())
}

/// The length of `value`'s compact JSON, without building it.
fn json_size(value: &Value) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    // Counting cannot fail.
    let _ = serde_json::to_writer(&mut count, value);
    count.0
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
        PatchType::Merge | PatchType::Strategic | PatchType::Apply => p
            .get("metadata")
            .and_then(|m| m.get("resourceVersion"))
            .is_some_and(|v| !v.is_null()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(kind: PatchType, doc: Value, patch: Value) -> Result<Value, ApiError> {
        let mut doc = doc;
        apply(kind, None, &mut doc, &serde_json::to_vec(&patch).unwrap())?;
        Ok(doc)
    }

    #[test]
    fn json_patch_bombs_are_refused() {
        // Each copy doubles the list: 40 of them would ask for terabytes.
        let ops: Vec<Value> = (0..40)
            .map(|_| json!({"op": "copy", "from": "/a", "path": "/a/-"}))
            .collect();
        let doc = json!({"a": ["x".repeat(1000)]});
        let err = run(PatchType::Json, doc.clone(), Value::Array(ops)).unwrap_err();
        assert_eq!(err.code(), 422);
        assert!(
            err.message.contains("accumulated size increase of copy"),
            "{}",
            err.message
        );
        // A few copies are fine.
        let ops = json!([{"op": "copy", "from": "/a/0", "path": "/b"}]);
        assert_eq!(
            run(PatchType::Json, doc, ops).unwrap()["b"],
            "x".repeat(1000)
        );
        // Too many operations: 413 before anything is applied.
        let ops: Vec<Value> = (0..=MAX_JSON_PATCH_OPERATIONS)
            .map(|_| json!({"op": "test", "path": "/a", "value": 1}))
            .collect();
        let err = run(PatchType::Json, json!({}), Value::Array(ops)).unwrap_err();
        assert_eq!(err.code(), 413);
        assert_eq!(
            err.message,
            "The allowed maximum operations in a JSON patch is 10000, got 10001"
        );
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
            Some(PatchType::Apply)
        );
        assert_eq!(PatchType::from_content_type("application/json"), None);
    }
}
