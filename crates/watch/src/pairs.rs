//! A compact string map for what every cached object carries (labels, selectable fields): two
//! allocations however many entries, instead of a tree node plus two strings per entry.

/// A small read-only map from strings to strings, in key order.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Pairs {
    /// Every key and value, concatenated.
    text: Box<str>,
    /// Where each key and each value ends in `text` (key, value, key, value, ...).
    ends: Box<[u32]>,
}

impl Pairs {
    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.iter().find(|(k, _)| *k == key).map(|(_, v)| v)
    }

    /// The entries in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        let mut start = 0;
        self.ends.chunks_exact(2).map(move |pair| {
            let (k_end, v_end) = (pair[0] as usize, pair[1] as usize);
            let entry = (&self.text[start..k_end], &self.text[k_end..v_end]);
            start = v_end;
            entry
        })
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.ends.len() / 2
    }

    /// Whether there are no entries.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }
}

impl<K: AsRef<str>, V: AsRef<str>> FromIterator<(K, V)> for Pairs {
    /// Builds the map; a repeated key keeps its last value.
    fn from_iter<I: IntoIterator<Item = (K, V)>>(entries: I) -> Self {
        let mut sorted: Vec<(K, V)> = entries.into_iter().collect();
        sorted.sort_by(|a, b| a.0.as_ref().cmp(b.0.as_ref()));
        // A stable sort keeps equal keys in order: keep the last of each run.
        let mut unique: Vec<(K, V)> = Vec::with_capacity(sorted.len());
        for entry in sorted {
            match unique.last_mut() {
                Some(last) if last.0.as_ref() == entry.0.as_ref() => *last = entry,
                _ => unique.push(entry),
            }
        }
        let mut text = String::new();
        let mut ends = Vec::with_capacity(unique.len() * 2);
        for (k, v) in &unique {
            text.push_str(k.as_ref());
            ends.push(offset(text.len()));
            text.push_str(v.as_ref());
            ends.push(offset(text.len()));
        }
        Pairs {
            text: text.into_boxed_str(),
            ends: ends.into_boxed_slice(),
        }
    }
}

/// Offsets are u32: one object's labels or fields are far below 4 GiB (bodies are limited to
/// a few MiB).
fn offset(len: usize) -> u32 {
    u32::try_from(len).unwrap_or(u32::MAX)
}

impl std::fmt::Debug for Pairs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups_order_and_repeated_keys() {
        let p: Pairs = [
            ("tier", "gold"),
            ("app", "web"),
            ("", "empty key"),
            ("tier", "silver"),
        ]
        .into_iter()
        .collect();
        assert_eq!(p.len(), 3);
        assert_eq!(p.get("tier"), Some("silver"));
        assert_eq!(p.get("app"), Some("web"));
        assert_eq!(p.get(""), Some("empty key"));
        assert_eq!(p.get("ap"), None);
        let keys: Vec<&str> = p.iter().map(|(k, _)| k).collect();
        assert_eq!(keys, ["", "app", "tier"]);
        assert_eq!(
            format!("{p:?}"),
            r#"{"": "empty key", "app": "web", "tier": "silver"}"#
        );
    }

    #[test]
    fn empty_values_and_no_entries() {
        let p: Pairs = [("a", ""), ("b", "x\u{0}y")].into_iter().collect();
        assert_eq!(p.get("a"), Some(""));
        assert_eq!(p.get("b"), Some("x\u{0}y"));
        let none: Pairs = Vec::<(String, String)>::new().into_iter().collect();
        assert!(none.is_empty());
        assert_eq!(none.get("a"), None);
    }
}
