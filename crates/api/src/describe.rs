//! Building resource descriptors.

use capstan_meta::ResourceDescriptor;
use capstan_meta::resource::STANDARD_VERBS;

/// How a resource is named and scoped.
pub(crate) struct Names<'a> {
    pub group: &'a str,
    pub kind: &'a str,
    pub resource: &'a str,
    pub short_names: &'a [&'a str],
    pub namespaced: bool,
}

impl Names<'_> {
    /// The descriptor of a `v1` resource serving every standard verb; the singular name is
    /// the lower-cased kind.
    pub(crate) fn v1(&self) -> ResourceDescriptor {
        ResourceDescriptor {
            group: self.group.into(),
            version: "v1".into(),
            kind: self.kind.into(),
            resource: self.resource.into(),
            singular: self.kind.to_ascii_lowercase(),
            short_names: self.short_names.iter().map(|s| s.to_string()).collect(),
            namespaced: self.namespaced,
            verbs: STANDARD_VERBS.iter().map(|v| v.to_string()).collect(),
            columns: crate::printers::for_kind(self.group, self.kind),
            ..Default::default()
        }
    }

    /// [`Names::v1`] in the `all` category (what `kubectl get all` lists).
    pub(crate) fn v1_in_all(&self) -> ResourceDescriptor {
        let mut d = self.v1();
        d.categories = vec!["all".into()];
        d
    }
}
