//! Fuzzing the parsers that read what any client sends (label and field selectors, resource
//! quantities): a corpus kept beside this file, each entry also mutated, plus generated input
//! biased towards each grammar. Nothing may panic, and what parses must behave consistently.
//! The run is bounded (`PROPTEST_CASES` raises it); failures are kept beside this file
//! (`fuzz.regressions`) and replayed first.

use std::collections::BTreeMap;

use capstan_meta::fields::FieldSelector;
use capstan_meta::labels::LabelSelector;
use capstan_meta::quantity;
use proptest::prelude::*;
use proptest::test_runner::FileFailurePersistence;

fn corpus(name: &str) -> Vec<String> {
    let path = format!("{}/tests/corpus/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{path}: {e}"))
        .lines()
        .map(str::to_string)
        .collect()
}

/// A corpus entry with a few bytes changed: characters inserted, removed or replaced.
fn mutated(entries: Vec<String>, alphabet: &'static str) -> impl Strategy<Value = String> {
    let alphabet: Vec<char> = alphabet.chars().collect();
    (
        proptest::sample::select(entries),
        proptest::collection::vec(
            (
                any::<prop::sample::Index>(),
                0..3u8,
                proptest::sample::select(alphabet),
            ),
            0..6,
        ),
    )
        .prop_map(|(entry, edits)| {
            let mut chars: Vec<char> = entry.chars().collect();
            for (at, kind, c) in edits {
                let i = if chars.is_empty() {
                    0
                } else {
                    at.index(chars.len() + 1)
                };
                match kind {
                    0 => chars.insert(i.min(chars.len()), c),
                    1 if i < chars.len() => {
                        chars.remove(i);
                    }
                    _ if i < chars.len() => chars[i] = c,
                    _ => chars.push(c),
                }
            }
            chars.into_iter().collect()
        })
}

const SELECTOR_ALPHABET: &str = "ab.-_/=!,()\\ inotexys \t🦀é";

fn labels() -> impl Strategy<Value = BTreeMap<String, String>> {
    proptest::collection::btree_map("[a-c]{1,2}", "[a-c]{0,2}", 0..4)
}

#[test]
fn the_corpus_never_panics_a_parser() {
    for entry in corpus("selectors.txt") {
        if let Ok(selector) = LabelSelector::parse(&entry) {
            selector.matches(None);
        }
        if let Ok(selector) = FieldSelector::parse(&entry) {
            selector.matches(|_| Some("x".into()));
        }
    }
    for entry in corpus("quantities.txt") {
        let _ = quantity::parse(&entry);
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        // Failures are kept beside this file and replayed first.
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource("regressions"))),
        ..ProptestConfig::with_cases(1000)
    })]

    /// Label selectors: parsing never panics, parsing is deterministic, and matching any
    /// label set never panics.
    #[test]
    fn label_selectors(input in prop_oneof![
        mutated(corpus("selectors.txt"), SELECTOR_ALPHABET),
        "[a-c!=,() inotex\\\\/.-]{0,24}",
        any::<String>(),
    ], labels in labels()) {
        let first = LabelSelector::parse(&input);
        let again = LabelSelector::parse(&input);
        prop_assert_eq!(first.is_ok(), again.is_ok());
        if let Ok(selector) = first {
            let matched = selector.matches(Some(&labels));
            prop_assert_eq!(matched, again.unwrap().matches(Some(&labels)));
        }
    }

    /// Field selectors: parsing never panics; a selector that requires a name exactly
    /// matches no object of another name (what per-object authorization relies on).
    #[test]
    fn field_selectors(input in prop_oneof![
        mutated(corpus("selectors.txt"), SELECTOR_ALPHABET),
        "(metadata\\.name|spec\\.nodeName|a)(=|==|!=)[a-c\\\\,=!]{0,6}(,(metadata\\.name|a)(=|==|!=)[a-c\\\\,]{0,4}){0,2}",
        any::<String>(),
    ], other in "[a-d\\\\,]{0,4}") {
        if let Ok(selector) = FieldSelector::parse(&input)
            && let Some(name) = selector.requires_exact("metadata.name").map(str::to_string)
            && other != name
        {
            prop_assert!(!selector.matches(|field| (field == "metadata.name").then(|| other.clone())),
                "{input:?} requires {name:?} yet matches {other:?}");
        }
    }

    /// Quantities: parsing never panics, and what parses has a value whose sign is the text's.
    #[test]
    fn quantities(input in prop_oneof![
        mutated(corpus("quantities.txt"), "0123456789.+-eEinumkKMGTP "),
        "[+-]?[0-9.]{0,30}([eE][+-]?[0-9]{0,5}|[KMGTPE]i?|[munk])?",
        any::<String>(),
    ]) {
        if let Some(value) = quantity::parse(&input)
            && input.starts_with('-')
            && value.0 != 0
        {
            prop_assert!(value.0 < 0, "{input:?} parsed to {}", value.0);
        }
    }
}
