//! Fuzzing patch documents, which any client with `patch` sends: generated JSON patches,
//! merge patches and strategic merge patches (and arbitrary bytes as each) applied to
//! generated documents. Nothing may panic; a refused patch leaves an error, never a partly
//! patched document where upstream would refuse. Bounded (`PROPTEST_CASES` raises it).

use capstan_registry::patch::{PatchType, apply};
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;
use serde_json::{Value, json};

/// A small JSON document of objects, arrays and scalars.
fn document() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        "[a-c]{0,3}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map("[a-c$]{1,2}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A JSON pointer into documents like [`document`]'s, sometimes malformed.
fn pointer() -> impl Strategy<Value = String> {
    prop_oneof![
        "(/([a-c$]{1,2}|[0-3]|-|~0|~1|~2|00|)){0,4}",
        any::<String>(),
    ]
}

fn operation() -> impl Strategy<Value = Value> {
    (
        proptest::sample::select(vec![
            "add", "remove", "replace", "move", "copy", "test", "nope",
        ]),
        pointer(),
        pointer(),
        document(),
    )
        .prop_map(
            |(op, path, from, value)| json!({"op": op, "path": path, "from": from, "value": value}),
        )
}

fn strategic() -> impl Strategy<Value = Value> {
    document().prop_map(|mut doc| {
        if let Some(map) = doc.as_object_mut() {
            map.insert("$patch".into(), json!("replace"));
        }
        doc
    })
}

proptest! {
    #![proptest_config(ProptestConfig {
        // Failures are kept beside this file and replayed first.
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("regressions"))),
        ..ProptestConfig::with_cases(500)
    })]

    #[test]
    fn json_patches(doc in document(), ops in proptest::collection::vec(operation(), 0..6)) {
        let mut patched = doc.clone();
        let body = serde_json::to_vec(&ops).unwrap();
        if apply(PatchType::Json, None, &mut patched, &body).is_err() {
            prop_assert_eq!(patched, doc, "a refused JSON patch changed the document");
        }
    }

    #[test]
    fn merge_patches(doc in document(), patch in document()) {
        let mut patched = doc;
        let _ = apply(PatchType::Merge, None, &mut patched, &serde_json::to_vec(&patch).unwrap());
    }

    #[test]
    fn strategic_merge_patches(doc in document(), patch in prop_oneof![document(), strategic()]) {
        let mut patched = doc;
        let _ = apply(PatchType::Strategic, None, &mut patched, &serde_json::to_vec(&patch).unwrap());
    }

    #[test]
    fn arbitrary_bytes_as_any_patch(doc in document(), body in proptest::collection::vec(any::<u8>(), 0..64)) {
        for kind in [PatchType::Json, PatchType::Merge, PatchType::Strategic] {
            let mut patched = doc.clone();
            let _ = apply(kind, None, &mut patched, &body);
        }
    }
}

/// Deeply nested patches are refused or applied, never a stack overflow.
#[test]
fn deep_nesting_is_refused_or_applied() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let deep_object = format!("{}1{}", r#"{"a":"#.repeat(100_000), "}".repeat(100_000));
    for body in [deep, deep_object] {
        for kind in [PatchType::Json, PatchType::Merge, PatchType::Strategic] {
            let mut doc = json!({"a": 1});
            assert!(apply(kind, None, &mut doc, body.as_bytes()).is_err());
        }
    }
}
