//! A cached object's selectable fields: only the values, beside the field names every object
//! of the resource shares (a pod's ten names would otherwise be copied into each pod's entry).

use std::sync::Arc;

/// The names of a resource's selectable fields, shared by its cached objects.
pub type FieldNames = Arc<[String]>;

/// Values for a resource's [`FieldNames`]; a name may have no value.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct Fields {
    names: FieldNames,
    /// Every value, concatenated.
    text: Box<str>,
    /// Where each name's value ends in `text`.
    ends: Box<[u32]>,
    /// Bit `i` set: `names[i]` has no value.
    absent: u64,
}

/// At most this many names: `absent` is one bit per name.
pub const MAX_FIELDS: usize = 64;

impl Fields {
    /// The values of `names`, in their order (`None`: no value). Names beyond
    /// [`MAX_FIELDS`] have no value.
    pub fn new<V: AsRef<str>>(
        names: &FieldNames,
        values: impl IntoIterator<Item = Option<V>>,
    ) -> Self {
        let mut text = String::new();
        let mut ends = Vec::with_capacity(names.len());
        let mut absent = 0u64;
        let mut values = values.into_iter();
        for i in 0..names.len() {
            match values.next().flatten() {
                Some(value) if i < MAX_FIELDS => text.push_str(value.as_ref()),
                _ => absent |= 1u64.checked_shl(i as u32).unwrap_or(0),
            }
            ends.push(u32::try_from(text.len()).unwrap_or(u32::MAX));
        }
        Fields {
            names: names.clone(),
            text: text.into_boxed_str(),
            ends: ends.into_boxed_slice(),
            absent,
        }
    }

    /// The value of the field `name`.
    pub fn get(&self, name: &str) -> Option<&str> {
        let i = self.names.iter().position(|n| n == name)?;
        if i >= MAX_FIELDS || self.absent & (1 << i) != 0 {
            return None;
        }
        let start = if i == 0 { 0 } else { self.ends[i - 1] as usize };
        self.text.get(start..self.ends[i] as usize)
    }

    /// The fields that have a value, in the names' order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.names
            .iter()
            .filter_map(|name| Some((name.as_str(), self.get(name)?)))
    }
}

impl std::fmt::Debug for Fields {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_found_by_their_shared_names() {
        let names: FieldNames = ["metadata.name", "spec.nodeName", "status.phase", "spec.x"]
            .map(String::from)
            .into();
        let pod = Fields::new(&names, [Some("web"), Some(""), Some("Running"), None]);
        assert_eq!(pod.get("metadata.name"), Some("web"));
        assert_eq!(pod.get("spec.nodeName"), Some(""));
        assert_eq!(pod.get("status.phase"), Some("Running"));
        assert_eq!(pod.get("spec.x"), None);
        assert_eq!(pod.get("spec.y"), None);
        assert_eq!(
            format!("{pod:?}"),
            r#"{"metadata.name": "web", "spec.nodeName": "", "status.phase": "Running"}"#
        );
        // Fewer values than names: the rest have none.
        let short = Fields::new(&names, [Some("db")]);
        assert_eq!(short.get("metadata.name"), Some("db"));
        assert_eq!(short.get("status.phase"), None);
        assert!(Arc::ptr_eq(&pod.names, &short.names));
        assert_eq!(Fields::default().get("metadata.name"), None);
    }
}
