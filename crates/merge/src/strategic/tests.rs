//! Table-driven cases written from the upstream rules of strategic merge patch.

use capstan_negotiation::schema::Schema;
use serde_json::{Value, json};

use super::apply;
use crate::Error;
use crate::typed::Typed;

fn patch_pod(original: Value, patch: Value) -> Result<Value, Error> {
    let typed = Typed::for_kind(Schema::upstream(), "v1", "Pod").unwrap();
    let mut doc = original;
    apply(Some(&typed), &mut doc, &serde_json::to_vec(&patch).unwrap())?;
    Ok(doc)
}

/// (case, original, patch, expected)
fn cases() -> Vec<(&'static str, Value, Value, Value)> {
    vec![
        (
            "containers merge by name; fields not in the patch stay",
            json!({"spec": {"containers": [{"name": "a", "image": "x:1", "imagePullPolicy": "Always"}, {"name": "b", "image": "y:1"}]}}),
            json!({"spec": {"containers": [{"name": "a", "image": "x:2"}]}}),
            json!({"spec": {"containers": [{"name": "a", "image": "x:2", "imagePullPolicy": "Always"}, {"name": "b", "image": "y:1"}]}}),
        ),
        (
            // Upstream's order (its merge of patch and stored items): a new item comes
            // before the stored ones, as the subresource differential showed.
            "a new item goes first",
            json!({"spec": {"containers": [{"name": "a", "image": "x"}]}}),
            json!({"spec": {"containers": [{"name": "c", "image": "z"}]}}),
            json!({"spec": {"containers": [{"name": "c", "image": "z"}, {"name": "a", "image": "x"}]}}),
        ),
        (
            // The patch's items in its order, interleaved with the others by stored position.
            "patched items take the patch's order among the stored ones",
            json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}}),
            json!({"spec": {"containers": [{"name": "c", "image": "z"}, {"name": "n"}, {"name": "a", "image": "y"}]}}),
            json!({"spec": {"containers": [{"name": "b"}, {"name": "c", "image": "z"}, {"name": "n"}, {"name": "a", "image": "y"}]}}),
        ),
        (
            "$patch: delete removes the item with that key",
            json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}]}}),
            json!({"spec": {"containers": [{"name": "a", "$patch": "delete"}]}}),
            json!({"spec": {"containers": [{"name": "b"}]}}),
        ),
        (
            "$patch: replace as a list item replaces the list",
            json!({"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "b"}]}}),
            json!({"spec": {"containers": [{"name": "c"}, {"$patch": "replace"}]}}),
            json!({"spec": {"containers": [{"name": "c"}]}}),
        ),
        (
            "env merges by name inside a merged container",
            json!({"spec": {"containers": [{"name": "a", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}]}]}}),
            json!({"spec": {"containers": [{"name": "a", "env": [{"name": "B", "value": "3"}, {"name": "C", "value": "4"}]}]}}),
            json!({"spec": {"containers": [{"name": "a", "env": [{"name": "A", "value": "1"}, {"name": "B", "value": "3"}, {"name": "C", "value": "4"}]}]}}),
        ),
        (
            "lists without a strategy are replaced (args)",
            json!({"spec": {"containers": [{"name": "a", "args": ["1", "2"]}]}}),
            json!({"spec": {"containers": [{"name": "a", "args": ["3"]}]}}),
            json!({"spec": {"containers": [{"name": "a", "args": ["3"]}]}}),
        ),
        (
            "finalizers are a merged set of scalars",
            json!({"metadata": {"finalizers": ["a", "b"]}}),
            json!({"metadata": {"finalizers": ["b", "c"]}}),
            json!({"metadata": {"finalizers": ["a", "b", "c"]}}),
        ),
        (
            "$deleteFromPrimitiveList removes values",
            json!({"metadata": {"finalizers": ["a", "b", "c"]}}),
            json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["b"]}}),
            json!({"metadata": {"finalizers": ["a", "c"]}}),
        ),
        (
            "$setElementOrder orders the merged items",
            json!({"spec": {"containers": [{"name": "a"}, {"name": "b"}]}}),
            json!({"spec": {"$setElementOrder/containers": [{"name": "c"}, {"name": "b"}, {"name": "a"}], "containers": [{"name": "c"}]}}),
            json!({"spec": {"containers": [{"name": "c"}, {"name": "b"}, {"name": "a"}]}}),
        ),
        (
            "volumes merge by name; $retainKeys clears the other source",
            json!({"spec": {"volumes": [{"name": "v", "emptyDir": {}}, {"name": "w", "emptyDir": {}}]}}),
            json!({"spec": {"volumes": [{"name": "v", "$retainKeys": ["name", "hostPath"], "hostPath": {"path": "/x"}}]}}),
            json!({"spec": {"volumes": [{"name": "v", "hostPath": {"path": "/x"}}, {"name": "w", "emptyDir": {}}]}}),
        ),
        (
            "maps merge by key; null deletes; $patch: replace replaces a map",
            json!({"metadata": {"labels": {"a": "1", "b": "2"}, "annotations": {"x": "1"}}}),
            json!({"metadata": {"labels": {"a": null, "c": "3"}, "annotations": {"$patch": "replace", "y": "2"}}}),
            json!({"metadata": {"labels": {"b": "2", "c": "3"}, "annotations": {"y": "2"}}}),
        ),
        (
            "$patch: delete on a map removes it",
            json!({"spec": {"securityContext": {"runAsUser": 1}, "hostname": "h"}}),
            json!({"spec": {"securityContext": {"$patch": "delete"}}}),
            json!({"spec": {"hostname": "h"}}),
        ),
        (
            "container ports merge by containerPort",
            json!({"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80, "name": "http"}]}]}}),
            json!({"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80, "name": "web"}, {"containerPort": 443}]}]}}),
            json!({"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80, "name": "web"}, {"containerPort": 443}]}]}}),
        ),
        (
            "ownerReferences merge by uid",
            json!({"metadata": {"ownerReferences": [{"uid": "1", "name": "a"}]}}),
            json!({"metadata": {"ownerReferences": [{"uid": "2", "name": "b"}]}}),
            json!({"metadata": {"ownerReferences": [{"uid": "2", "name": "b"}, {"uid": "1", "name": "a"}]}}),
        ),
    ]
}

#[test]
fn upstream_rules() {
    for (case, original, patch, expected) in cases() {
        let got = patch_pod(original, patch).unwrap_or_else(|e| panic!("{case}: {e}"));
        assert_eq!(got, expected, "{case}");
    }
}

#[test]
fn bad_patches() {
    let missing_key = patch_pod(
        json!({"spec": {"containers": []}}),
        json!({"spec": {"containers": [{"image": "x"}]}}),
    )
    .unwrap_err();
    assert!(
        matches!(missing_key, Error::Invalid(ref m) if m.contains("merge key: name")),
        "{missing_key}"
    );
    let unknown = patch_pod(json!({}), json!({"$patch": "explode"})).unwrap_err();
    assert!(matches!(unknown, Error::Invalid(_)));
    let typed = Typed::for_kind(Schema::upstream(), "v1", "Pod").unwrap();
    let mut doc = json!({});
    assert!(matches!(
        apply(Some(&typed), &mut doc, b"[1]"),
        Err(Error::BadPatch(_))
    ));
    assert!(matches!(
        apply(Some(&typed), &mut doc, b"{"),
        Err(Error::BadPatch(_))
    ));
}

#[test]
fn unknown_kinds_merge_maps_and_replace_lists() {
    let mut doc = json!({"spec": {"items": [1, 2], "m": {"a": 1}}});
    apply(
        None,
        &mut doc,
        br#"{"spec": {"items": [3], "m": {"b": 2}}}"#,
    )
    .unwrap();
    assert_eq!(doc, json!({"spec": {"items": [3], "m": {"a": 1, "b": 2}}}));
}
