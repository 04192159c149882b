//! Sets of field paths, and their `FieldsV1` form (the `fieldsV1` of a managedFields entry).
//!
//! A path is a list of elements: a field name (`f:name`), a list item named by its keys
//! (`k:{"name":"app"}`), a set item named by its value (`v:"x"`) or a list item named by its
//! position (`i:0`). A set is a tree of elements; a node is a *member* when its own path is
//! in the set (written `.` beside its children, or as an empty object when it has none).

use std::collections::BTreeMap;
use std::fmt;

use serde_json::{Map, Value};

use crate::Error;

/// One step of a field path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PathElement {
    /// A field of a struct, or an entry of a map.
    Field(String),
    /// An item of an associative list, named by its key fields (canonical JSON object).
    Key(String),
    /// An item of a set, named by its value (canonical JSON).
    Value(String),
    /// An item of a list named by position.
    Index(usize),
}

impl PathElement {
    /// The element's `FieldsV1` key (`f:name`, `k:{…}`, `v:…`, `i:N`).
    pub fn encode(&self) -> String {
        match self {
            PathElement::Field(name) => prefixed("f:", name),
            PathElement::Key(keys) => prefixed("k:", keys),
            PathElement::Value(value) => prefixed("v:", value),
            PathElement::Index(i) => format!("i:{i}"),
        }
    }

    /// Parses a `FieldsV1` key.
    pub fn decode(key: &str) -> Result<Self, Error> {
        let bad = || Error::FieldsV1(format!("unknown path element {key:?}"));
        let (kind, rest) = key.split_once(':').ok_or_else(bad)?;
        Ok(match kind {
            "f" => PathElement::Field(rest.to_string()),
            "k" => {
                let keys: Value = serde_json::from_str(rest).map_err(|_| bad())?;
                if !keys.is_object() {
                    return Err(bad());
                }
                PathElement::Key(canonical(&keys))
            }
            "v" => {
                let value: Value = serde_json::from_str(rest).map_err(|_| bad())?;
                PathElement::Value(canonical(&value))
            }
            "i" => PathElement::Index(rest.parse().map_err(|_| bad())?),
            _ => return Err(bad()),
        })
    }
}

impl fmt::Display for PathElement {
    /// Upstream's path notation: `.name`, `[key="value",other=1]`, `[="value"]`, `[0]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PathElement::Field(name) => write!(f, ".{name}"),
            PathElement::Key(keys) => {
                let parsed: Map<String, Value> = serde_json::from_str(keys).unwrap_or_default();
                let parts: Vec<String> = parsed
                    .iter()
                    .map(|(k, v)| format!("{k}={}", canonical(v)))
                    .collect();
                write!(f, "[{}]", parts.join(","))
            }
            PathElement::Value(value) => write!(f, "[={value}]"),
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

/// A field path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Path(pub Vec<PathElement>);

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for element in &self.0 {
            write!(f, "{element}")?;
        }
        Ok(())
    }
}

/// `prefix` then `text`, in a string of that size.
pub fn prefixed(prefix: &str, text: &str) -> String {
    let mut out = String::with_capacity(prefix.len() + text.len());
    out.push_str(prefix);
    out.push_str(text);
    out
}

/// JSON with object keys sorted and no spaces: the form keys and values take in paths.
pub fn canonical(value: &Value) -> String {
    let mut out = Vec::new();
    write_canonical(value, &mut out);
    String::from_utf8(out).expect("JSON text is UTF-8")
}

/// [`canonical`] of an object of `members`, sorted here.
pub fn canonical_object(mut members: Vec<(&str, &Value)>) -> String {
    members.sort_by_key(|(name, _)| *name);
    members.dedup_by_key(|(name, _)| *name);
    let mut out = Vec::with_capacity(32);
    write_members(members.into_iter(), &mut out);
    String::from_utf8(out).expect("JSON text is UTF-8")
}

fn write_canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        // serde_json's objects iterate in key order unless it keeps insertion order.
        Value::Object(map) if map.keys().is_sorted() => {
            write_members(map.iter().map(|(k, v)| (k.as_str(), v)), out);
        }
        Value::Object(map) => {
            let mut sorted: Vec<(&str, &Value)> =
                map.iter().map(|(k, v)| (k.as_str(), v)).collect();
            sorted.sort_unstable_by_key(|(name, _)| *name);
            write_members(sorted.into_iter(), out);
        }
        Value::Array(items) => {
            out.push(b'[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(v, out);
            }
            out.push(b']');
        }
        scalar => serde_json::to_writer(out, scalar).expect("writing JSON to memory"),
    }
}

fn write_members<'v>(members: impl Iterator<Item = (&'v str, &'v Value)>, out: &mut Vec<u8>) {
    out.push(b'{');
    for (i, (k, v)) in members.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        serde_json::to_writer(&mut *out, k).expect("writing JSON to memory");
        out.push(b':');
        write_canonical(v, out);
    }
    out.push(b'}');
}

/// The child of a `FieldsV1` node at `element`: under its own key, or (for a list item or
/// value written in another form, e.g. by a client) under the key that reads as it.
fn fields_v1_child<'v>(map: &'v Map<String, Value>, element: &PathElement) -> Option<&'v Value> {
    let found = map.get(&element.encode());
    if found.is_some() || matches!(element, PathElement::Field(_)) {
        // `f:` keys have one spelling.
        return found;
    }
    map.iter()
        .find(|(k, _)| *k != "." && PathElement::decode(k).is_ok_and(|e| e == *element))
        .map(|(_, v)| v)
}

/// How one set's members meet another's: whether any is in both, whether all of the first
/// are in the second.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Overlap {
    /// Some member is in both.
    pub any: bool,
    /// Every member of the first is in the second (true for an empty first set).
    pub all: bool,
}

/// One node of a set: whether its own path is a member, and the paths below it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Node {
    /// The node's own path is in the set.
    pub member: bool,
    /// The paths below it.
    pub children: FieldSet,
}

impl Node {
    fn is_empty(&self) -> bool {
        !self.member && self.children.is_empty()
    }
}

/// A set of field paths.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSet {
    entries: BTreeMap<PathElement, Node>,
}

impl FieldSet {
    /// The empty set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether no path is in the set.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The node at `element` directly below the root, if any.
    pub fn get(&self, element: &PathElement) -> Option<&Node> {
        self.entries.get(element)
    }

    /// The nodes directly below the root.
    pub fn entries(&self) -> impl Iterator<Item = (&PathElement, &Node)> {
        self.entries.iter()
    }

    /// The node at `element`, created when missing.
    pub fn entry(&mut self, element: PathElement) -> &mut Node {
        self.entries.entry(element).or_default()
    }

    /// Adds `path` (a non-empty path) to the set.
    pub fn insert(&mut self, path: &[PathElement]) {
        let Some((first, rest)) = path.split_first() else {
            return;
        };
        // Look up before inserting: most paths share their prefix with one already there.
        let node = match self.entries.get_mut(first) {
            Some(node) => node,
            None => self.entries.entry(first.clone()).or_default(),
        };
        if rest.is_empty() {
            node.member = true;
        } else {
            node.children.insert(rest);
        }
    }

    /// The node at `path` (non-empty), created with its parents when missing.
    pub fn node_mut(&mut self, path: &[PathElement]) -> &mut Node {
        let (first, rest) = path.split_first().expect("a non-empty path");
        if !self.entries.contains_key(first) {
            self.entries.insert(first.clone(), Node::default());
        }
        let node = self.entries.get_mut(first).expect("inserted above");
        if rest.is_empty() {
            node
        } else {
            node.children.node_mut(rest)
        }
    }

    /// Whether `path` is in the set.
    pub fn contains(&self, path: &[PathElement]) -> bool {
        let Some((first, rest)) = path.split_first() else {
            return false;
        };
        match self.entries.get(first) {
            Some(node) if rest.is_empty() => node.member,
            Some(node) => node.children.contains(rest),
            None => false,
        }
    }

    /// Keeps the entries directly below the root that `keep` accepts (with what is below
    /// them), removing the others.
    pub fn retain(&mut self, mut keep: impl FnMut(&PathElement) -> bool) {
        self.entries.retain(|element, _| keep(element));
    }

    /// Keeps the entries below field `name` (directly below the root) that `keep` accepts;
    /// the field itself stops being a member, and goes when nothing is left below it.
    pub fn retain_below(&mut self, name: &str, keep: impl FnMut(&PathElement) -> bool) {
        let element = PathElement::Field(name.to_string());
        let Some(node) = self.entries.get_mut(&element) else {
            return;
        };
        node.children.retain(keep);
        node.member = false;
        if node.is_empty() {
            self.entries.remove(&element);
        }
    }

    /// Removes `path` and everything below it.
    pub fn remove_subtree(&mut self, path: &[PathElement]) {
        let Some((first, rest)) = path.split_first() else {
            return;
        };
        if rest.is_empty() {
            self.entries.remove(first);
        } else if let Some(node) = self.entries.get_mut(first) {
            node.children.remove_subtree(rest);
            if node.is_empty() {
                self.entries.remove(first);
            }
        }
    }

    /// The paths in either set.
    pub fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.union_with(other);
        out
    }

    /// Adds every path of `other`.
    pub fn union_with(&mut self, other: &FieldSet) {
        for (element, theirs) in &other.entries {
            let ours = self.entry(element.clone());
            ours.member |= theirs.member;
            ours.children.union_with(&theirs.children);
        }
    }

    /// The paths of this set that are not in `other`.
    pub fn difference(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet::new();
        for (element, ours) in &self.entries {
            let node = match other.entries.get(element) {
                None => ours.clone(),
                Some(theirs) => Node {
                    member: ours.member && !theirs.member,
                    children: ours.children.difference(&theirs.children),
                },
            };
            if !node.is_empty() {
                out.entries.insert(element.clone(), node);
            }
        }
        out
    }

    /// The paths in both sets.
    pub fn intersection(&self, other: &FieldSet) -> FieldSet {
        let mut out = FieldSet::new();
        for (element, ours) in &self.entries {
            if let Some(theirs) = other.entries.get(element) {
                let node = Node {
                    member: ours.member && theirs.member,
                    children: ours.children.intersection(&theirs.children),
                };
                if !node.is_empty() {
                    out.entries.insert(element.clone(), node);
                }
            }
        }
        out
    }

    /// Every path in the set, in order.
    pub fn paths(&self) -> Vec<Path> {
        let mut out = Vec::new();
        let mut prefix = Vec::new();
        self.collect_paths(&mut prefix, &mut out);
        out
    }

    fn collect_paths(&self, prefix: &mut Vec<PathElement>, out: &mut Vec<Path>) {
        for (element, node) in &self.entries {
            prefix.push(element.clone());
            if node.member {
                out.push(Path(prefix.clone()));
            }
            node.children.collect_paths(prefix, out);
            prefix.pop();
        }
    }

    /// The set's `FieldsV1` form.
    pub fn to_fields_v1(&self) -> Value {
        let mut map = Map::new();
        for (element, node) in &self.entries {
            let mut inner = match node.children.to_fields_v1() {
                Value::Object(inner) => inner,
                _ => Map::new(),
            };
            if node.member && !inner.is_empty() {
                inner.insert(".".to_string(), Value::Object(Map::new()));
            }
            map.insert(element.encode(), Value::Object(inner));
        }
        Value::Object(map)
    }

    /// How this set's members meet the members of a `FieldsV1` document (`encoded`, as
    /// [`Self::to_fields_v1`] writes it; `None`: the empty set), without reading it into a set.
    pub fn overlap_fields_v1(&self, encoded: Option<&Value>) -> Overlap {
        let mut overlap = Overlap {
            any: false,
            all: true,
        };
        self.overlap_at(encoded, &mut overlap);
        overlap
    }

    fn overlap_at(&self, encoded: Option<&Value>, out: &mut Overlap) {
        let map = encoded.and_then(Value::as_object);
        for (element, node) in &self.entries {
            let child = map.and_then(|map| fields_v1_child(map, element));
            if node.member {
                let member = child
                    .and_then(Value::as_object)
                    .is_some_and(|c| c.contains_key(".") || c.keys().all(|k| k == "."));
                out.any |= member;
                out.all &= member;
            }
            node.children.overlap_at(child, out);
        }
    }

    /// Reads a `FieldsV1` document.
    pub fn from_fields_v1(value: &Value) -> Result<FieldSet, Error> {
        let Value::Object(map) = value else {
            return Err(Error::FieldsV1("a FieldsV1 node must be an object".into()));
        };
        let mut out = FieldSet::new();
        for (key, child) in map {
            if key == "." {
                continue;
            }
            let element = PathElement::decode(key)?;
            let children = FieldSet::from_fields_v1(child)?;
            let member = children.is_empty() || child.get(".").is_some();
            out.entries.insert(element, Node { member, children });
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn f(name: &str) -> PathElement {
        PathElement::Field(name.into())
    }

    #[test]
    fn fields_v1_round_trip() {
        let doc = json!({
            "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
            "f:spec": {"f:containers": {"k:{\"name\":\"web\"}": {".": {}, "f:image": {}, "f:name": {}}}},
            "f:finalizers": {"v:\"a\"": {}},
            "f:args": {"i:0": {}}
        });
        let set = FieldSet::from_fields_v1(&doc).unwrap();
        assert!(set.contains(&[f("metadata"), f("labels")]));
        assert!(set.contains(&[f("metadata"), f("labels"), f("app")]));
        assert!(!set.contains(&[f("metadata")]));
        let item = PathElement::Key(r#"{"name":"web"}"#.into());
        assert!(set.contains(&[f("spec"), f("containers"), item.clone()]));
        assert!(set.contains(&[f("spec"), f("containers"), item, f("image")]));
        assert_eq!(set.to_fields_v1(), doc);
        let paths: Vec<String> = set.paths().iter().map(ToString::to_string).collect();
        assert!(paths.contains(&r#".spec.containers[name="web"].image"#.to_string()));
        assert!(paths.contains(&r#".finalizers[="a"]"#.to_string()));
        assert!(paths.contains(&".args[0]".to_string()));
        assert!(FieldSet::from_fields_v1(&json!({"x:1": {}})).is_err());
        assert!(FieldSet::from_fields_v1(&json!([])).is_err());
    }

    #[test]
    fn set_algebra() {
        let mut a = FieldSet::new();
        a.insert(&[f("a"), f("x")]);
        a.insert(&[f("a"), f("y")]);
        a.insert(&[f("b")]);
        let mut b = FieldSet::new();
        b.insert(&[f("a"), f("y")]);
        b.insert(&[f("c")]);
        let both = a.intersection(&b);
        assert_eq!(both.paths(), vec![Path(vec![f("a"), f("y")])]);
        let only_a = a.difference(&b);
        assert!(only_a.contains(&[f("a"), f("x")]) && only_a.contains(&[f("b")]));
        assert!(!only_a.contains(&[f("a"), f("y")]));
        let all = a.union(&b);
        assert_eq!(all.paths().len(), 4);
        let mut pruned = all.clone();
        pruned.remove_subtree(&[f("a")]);
        assert_eq!(pruned.paths().len(), 2);
    }

    #[test]
    fn keys_are_canonical() {
        let key = PathElement::decode(r#"k:{"protocol":"TCP","containerPort":80}"#).unwrap();
        assert_eq!(key.encode(), r#"k:{"containerPort":80,"protocol":"TCP"}"#);
        assert_eq!(key.to_string(), r#"[containerPort=80,protocol="TCP"]"#);
    }
}
