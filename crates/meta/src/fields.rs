//! Field selectors: `field=value`, `field==value`, `field!=value`, joined by commas. This
//! module parses and matches them, and [`FieldLabels`] says which labels a resource accepts
//! (upstream's per-kind field label conversion: the names, their aliases and the refusal).

use crate::error::{Error, Result};

/// One term of a field selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRequirement {
    /// The field path, e.g. `metadata.name`.
    pub field: String,
    /// The value compared against.
    pub value: String,
    /// `true` for `!=`.
    pub negated: bool,
}

/// A parsed field selector; the empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector {
    /// The terms, all of which must hold.
    pub requirements: Vec<FieldRequirement>,
}

/// Splits on unescaped `sep`, keeping escapes for the next stage.
fn split_unescaped(input: &str, sep: char) -> Vec<String> {
    let mut parts = vec![String::new()];
    let mut escaped = false;
    for c in input.chars() {
        if escaped {
            parts.last_mut().expect("non-empty").push('\\');
            parts.last_mut().expect("non-empty").push(c);
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == sep {
            parts.push(String::new());
        } else {
            parts.last_mut().expect("non-empty").push(c);
        }
    }
    if escaped {
        parts.last_mut().expect("non-empty").push('\\');
    }
    parts
}

fn unescape(s: &str, selector: &str) -> Result<String> {
    let mut out = String::new();
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(e @ ('\\' | ',' | '=' | '!')) => out.push(e),
                Some(e) => {
                    return Err(Error::InvalidFieldSelector {
                        selector: selector.to_string(),
                        reason: format!("invalid escape sequence '\\{e}'"),
                    });
                }
                None => {
                    return Err(Error::InvalidFieldSelector {
                        selector: selector.to_string(),
                        reason: "unterminated escape sequence".to_string(),
                    });
                }
            }
        } else {
            out.push(c);
        }
    }
    Ok(out)
}

impl FieldSelector {
    /// Parses the upstream string form.
    pub fn parse(input: &str) -> Result<Self> {
        let mut requirements = Vec::new();
        if input.trim().is_empty() {
            return Ok(Self::default());
        }
        for term in split_unescaped(input, ',') {
            let bad = |reason: &str| Error::InvalidFieldSelector {
                selector: input.to_string(),
                reason: reason.to_string(),
            };
            // Find the first unescaped operator.
            let bytes = term.as_bytes();
            let mut i = 0;
            let mut found = None;
            while i < bytes.len() {
                match bytes[i] {
                    b'\\' => i += 2,
                    b'!' if bytes.get(i + 1) == Some(&b'=') => {
                        found = Some((i, 2, true));
                        break;
                    }
                    b'=' if bytes.get(i + 1) == Some(&b'=') => {
                        found = Some((i, 2, false));
                        break;
                    }
                    b'=' => {
                        found = Some((i, 1, false));
                        break;
                    }
                    _ => i += 1,
                }
            }
            let Some((at, len, negated)) = found else {
                return Err(bad(&format!(
                    "invalid selector: '{term}'; can't understand '{term}'"
                )));
            };
            let field = term[..at].trim();
            if field.is_empty() {
                return Err(bad("a field name is required before the operator"));
            }
            requirements.push(FieldRequirement {
                field: unescape(field, input)?,
                value: unescape(&term[at + len..], input)?,
                negated,
            });
        }
        Ok(Self { requirements })
    }

    /// The value a non-negated term requires `field` to equal (the first such term), as
    /// upstream's `RequiresExactMatch`: a selector with it matches at most that value.
    pub fn requires_exact(&self, field: &str) -> Option<&str> {
        self.requirements
            .iter()
            .find(|r| !r.negated && r.field == field)
            .map(|r| r.value.as_str())
    }

    /// Whether the selector matches everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Whether an object whose fields are looked up by `field` matches. `field` returns
    /// `None` for a field the resource does not support.
    pub fn matches(&self, field: impl Fn(&str) -> Option<String>) -> bool {
        self.requirements.iter().all(|r| {
            let value = field(&r.field).unwrap_or_default();
            (value == r.value) != r.negated
        })
    }
}

/// How a resource words its refusal of a field label it does not support. Upstream's kinds
/// word it in four ways, and clients that compare messages see the difference.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Refusal {
    /// `"x" is not a known field selector: only "metadata.name", "metadata.namespace"`: kinds
    /// with no field label conversion of their own.
    #[default]
    ObjectMeta,
    /// `field label not supported: x`.
    NotSupported,
    /// `field label "x" not supported for Job`.
    NotSupportedForKind,
    /// `field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: x`.
    NotSupportedForGroupVersionKind,
}

/// The field selector labels a resource accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldLabels {
    /// The kind's own fields beyond `metadata.name` and `metadata.namespace`, whose values
    /// the strategy gives.
    pub fields: Vec<String>,
    /// Whether `metadata.namespace` is accepted (upstream refuses it for Nodes, Namespaces,
    /// CertificateSigningRequests and ResourceSlices).
    pub namespace: bool,
    /// Other labels accepted for a field: `(label, field)`.
    pub aliases: Vec<(String, String)>,
    /// How an unsupported label is refused.
    pub refusal: Refusal,
}

impl Default for FieldLabels {
    /// `metadata.name` and `metadata.namespace` only.
    fn default() -> Self {
        Self {
            fields: Vec::new(),
            namespace: true,
            aliases: Vec::new(),
            refusal: Refusal::ObjectMeta,
        }
    }
}

impl FieldLabels {
    /// A kind with field labels of its own: `metadata.*` and `fields`, refused with `field
    /// label not supported: x`.
    pub fn of_kind(fields: &[&str]) -> Self {
        Self {
            fields: fields.iter().map(|f| f.to_string()).collect(),
            refusal: Refusal::NotSupported,
            ..Self::default()
        }
    }

    /// Refuses `metadata.namespace`.
    pub fn without_namespace(mut self) -> Self {
        self.namespace = false;
        self
    }

    /// Accepts `label` as another name of `field`.
    pub fn alias(mut self, label: &str, field: &str) -> Self {
        self.aliases.push((label.into(), field.into()));
        self
    }

    /// Words refusals as `refusal`.
    pub fn refused_as(mut self, refusal: Refusal) -> Self {
        self.refusal = refusal;
        self
    }

    /// The field `label` selects, or `None` when it is not supported.
    pub fn field<'a>(&'a self, label: &'a str) -> Option<&'a str> {
        match label {
            "metadata.name" => Some(label),
            "metadata.namespace" if self.namespace => Some(label),
            _ if self.fields.iter().any(|f| f == label) => Some(label),
            _ => self
                .aliases
                .iter()
                .find(|(alias, _)| alias == label)
                .map(|(_, field)| field.as_str()),
        }
    }

    /// The refusal of `label` for objects of `kind` in `api_version`.
    pub fn refusal_message(&self, label: &str, api_version: &str, kind: &str) -> String {
        match self.refusal {
            Refusal::ObjectMeta => format!(
                "{label:?} is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
            ),
            Refusal::NotSupported => format!("field label not supported: {label}"),
            Refusal::NotSupportedForKind => {
                format!("field label {label:?} not supported for {kind}")
            }
            Refusal::NotSupportedForGroupVersionKind => {
                let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
                format!("field label not supported for {group}/{version}, Kind={kind}: {label}")
            }
        }
    }

    /// `selector` with every label replaced by the field it selects (`None` when nothing
    /// changes), or the refusal of the first label not supported.
    pub fn resolve<'a>(
        &self,
        selector: &'a FieldSelector,
    ) -> std::result::Result<Option<FieldSelector>, &'a str> {
        let mut resolved: Option<FieldSelector> = None;
        for (i, r) in selector.requirements.iter().enumerate() {
            match self.field(&r.field) {
                None => return Err(r.field.as_str()),
                Some(field) if field != r.field => {
                    resolved
                        .get_or_insert_with(|| selector.clone())
                        .requirements[i]
                        .field = field.to_string();
                }
                Some(_) => {}
            }
        }
        Ok(resolved)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_resolve_to_fields_or_are_refused_in_the_kinds_words() {
        let pods = FieldLabels::of_kind(&["spec.nodeName"]).alias("spec.host", "spec.nodeName");
        let sel = FieldSelector::parse("spec.host=n1,metadata.namespace=a").unwrap();
        let resolved = pods.resolve(&sel).unwrap().unwrap();
        assert_eq!(resolved.requirements[0].field, "spec.nodeName");
        assert_eq!(resolved.requirements[1].field, "metadata.namespace");
        let plain = FieldSelector::parse("spec.nodeName=n1").unwrap();
        assert_eq!(pods.resolve(&plain), Ok(None));
        assert_eq!(
            pods.resolve(&FieldSelector::parse("spec.nodeName=a,x=1").unwrap()),
            Err("x")
        );
        assert_eq!(
            pods.refusal_message("x", "v1", "Pod"),
            "field label not supported: x"
        );
        let nodes = FieldLabels::of_kind(&["spec.unschedulable"]).without_namespace();
        assert_eq!(nodes.field("metadata.namespace"), None);
        assert_eq!(
            FieldLabels::default().refusal_message("a", "v1", "ConfigMap"),
            r#""a" is not a known field selector: only "metadata.name", "metadata.namespace""#
        );
        let jobs = FieldLabels::of_kind(&[]).refused_as(Refusal::NotSupportedForKind);
        assert_eq!(
            jobs.refusal_message("a", "batch/v1", "Job"),
            r#"field label "a" not supported for Job"#
        );
        let slices = FieldLabels::of_kind(&[]).refused_as(Refusal::NotSupportedForGroupVersionKind);
        assert_eq!(
            slices.refusal_message("a", "resource.k8s.io/v1", "ResourceSlice"),
            "field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: a"
        );
    }

    #[test]
    fn parses_and_matches() {
        let s = FieldSelector::parse("metadata.name=fast,metadata.namespace!=x").unwrap();
        assert_eq!(s.requirements.len(), 2);
        assert!(s.requirements[1].negated);
        let lookup = |f: &str| match f {
            "metadata.name" => Some("fast".to_string()),
            "metadata.namespace" => Some(String::new()),
            _ => None,
        };
        assert!(s.matches(lookup));
        assert!(
            !FieldSelector::parse("metadata.name==slow")
                .unwrap()
                .matches(lookup)
        );
        let escaped = FieldSelector::parse(r"metadata.name=a\,b").unwrap();
        assert_eq!(escaped.requirements[0].value, "a,b");
    }

    #[test]
    fn malformed() {
        for s in ["metadata.name", "=x", r"metadata.name=a\q"] {
            assert!(FieldSelector::parse(s).is_err(), "{s}");
        }
    }
}
