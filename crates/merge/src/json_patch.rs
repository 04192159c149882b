//! JSON patches (RFC 6902) applied all or nothing.

use serde_json::Value;

pub use ::json_patch::{PatchError, PatchOperation};

/// Applies `operations` to `doc` in order; on an error `doc` is left as it was. The
/// `json_patch` crate's own `patch` takes a failed patch back one operation at a time and
/// panics when one of those fails (a `move` whose inverse cannot be applied): a copy of the
/// document is put back instead.
pub fn apply(doc: &mut Value, operations: &[PatchOperation]) -> Result<(), PatchError> {
    let before = doc.clone();
    let result = ::json_patch::patch_unsafe(doc, operations);
    if result.is_err() {
        *doc = before;
    }
    result
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn operations(ops: Value) -> Vec<PatchOperation> {
        serde_json::from_value(ops).unwrap()
    }

    /// The input on which the crate's own `patch` panics (found by `fuzz_patch`): a move of
    /// an item over the whole document, whose inverse would move the document into itself,
    /// then an operation that fails.
    #[test]
    fn a_failed_patch_whose_moves_cannot_be_taken_back_leaves_the_document() {
        let doc = json!([null]);
        let ops = operations(json!([
            {"op": "move", "from": "/0", "path": ""},
            {"op": "remove", "path": ""}
        ]));
        let mut patched = doc.clone();
        assert!(apply(&mut patched, &ops).is_err());
        assert_eq!(patched, doc);
    }

    #[test]
    fn a_patch_applies_in_order_and_a_failed_test_changes_nothing() {
        let mut doc = json!({"a": 1});
        let ops = operations(json!([
            {"op": "add", "path": "/b", "value": 2},
            {"op": "test", "path": "/b", "value": 2},
            {"op": "remove", "path": "/a"}
        ]));
        apply(&mut doc, &ops).unwrap();
        assert_eq!(doc, json!({"b": 2}));
        let failing = operations(json!([
            {"op": "add", "path": "/c", "value": 3},
            {"op": "test", "path": "/b", "value": 9}
        ]));
        let err = apply(&mut doc, &failing).unwrap_err();
        assert_eq!(err.operation, 1);
        assert_eq!(doc, json!({"b": 2}));
    }
}
