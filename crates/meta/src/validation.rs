//! Name, label and object-metadata validation with upstream rules and messages.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;

use crate::field::{FieldError, FieldErrors};

/// Longest DNS-1123 subdomain.
pub const DNS1123_SUBDOMAIN_MAX: usize = 253;
/// Longest DNS-1123 label.
pub const DNS1123_LABEL_MAX: usize = 63;
/// Longest name part of a qualified name, and longest label value.
pub const QUALIFIED_NAME_MAX: usize = 63;
/// Total size limit of all annotations of an object.
pub const ANNOTATIONS_MAX_BYTES: usize = 256 * 1024;

const SUBDOMAIN_MSG: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
const QUALIFIED_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

fn is_label_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.len() <= DNS1123_LABEL_MAX
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
        && b[0] != b'-'
        && b[b.len() - 1] != b'-'
}

/// The part of a label checked for its characters (its length is reported apart); the whole
/// value when the limit falls inside a multi-byte character (never a label).
fn label_head(value: &str) -> &str {
    value
        .get(..value.len().min(DNS1123_LABEL_MAX))
        .unwrap_or(value)
}

/// Problems of `value` as a DNS-1123 label (empty when valid).
pub fn dns1123_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX {
        errs.push(format!(
            "must be no more than {DNS1123_LABEL_MAX} characters"
        ));
    }
    if !is_label_part(label_head(value)) || value.is_empty() {
        // A valid subdomain fails only by its dots: upstream says so.
        if !value.is_empty() && dns1123_subdomain(value).is_empty() {
            errs.push("must not contain dots".to_string());
        } else {
            errs.push(LABEL_MSG.to_string());
        }
    }
    errs
}

const DNS1035_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/// Problems of `value` as a DNS-1035 label (a DNS-1123 label starting with a letter), as
/// Service names are; empty when valid.
pub fn dns1035_label(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_LABEL_MAX {
        errs.push(format!(
            "must be no more than {DNS1123_LABEL_MAX} characters"
        ));
    }
    if !is_label_part(label_head(value)) || !value.starts_with(|c: char| c.is_ascii_lowercase()) {
        errs.push(DNS1035_MSG.to_string());
    }
    errs
}

/// Problems of `value` as a DNS-1123 subdomain (empty when valid).
pub fn dns1123_subdomain(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > DNS1123_SUBDOMAIN_MAX {
        errs.push(format!(
            "must be no more than {DNS1123_SUBDOMAIN_MAX} characters"
        ));
    }
    let ok = !value.is_empty()
        && value.split('.').all(|part| {
            let b = part.as_bytes();
            !b.is_empty()
                && b.iter()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-')
                && b[0] != b'-'
                && b[b.len() - 1] != b'-'
        });
    if !ok {
        errs.push(SUBDOMAIN_MSG.to_string());
    }
    errs
}

fn is_qualified_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
}

/// Problems of `value` as a qualified name (`[prefix/]name`, as label keys, finalizers and
/// provisioners are), empty when valid.
pub fn qualified_name(value: &str) -> Vec<String> {
    if value.matches('/').count() > 1 {
        return vec![
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')".to_string(),
        ];
    }
    let mut errs = Vec::new();
    let (prefix, name) = match value.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, value),
    };
    if let Some(prefix) = prefix {
        if prefix.is_empty() {
            errs.push("prefix part must be non-empty".to_string());
        } else {
            errs.extend(
                dns1123_subdomain(prefix)
                    .into_iter()
                    .map(|m| format!("prefix part {m}")),
            );
        }
    }
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > QUALIFIED_NAME_MAX {
        errs.push(format!(
            "name part must be no more than {QUALIFIED_NAME_MAX} characters"
        ));
    }
    // An empty name part fails the pattern too, as upstream reports it.
    if name.is_empty() || !is_qualified_part(name) {
        errs.push(QUALIFIED_MSG.to_string());
    }
    errs
}

/// Problems of `value` as a label value (empty when valid).
pub fn label_value(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if value.len() > QUALIFIED_NAME_MAX {
        errs.push(format!(
            "must be no more than {QUALIFIED_NAME_MAX} characters"
        ));
    }
    if !value.is_empty() && !is_qualified_part(value) {
        errs.push(LABEL_VALUE_MSG.to_string());
    }
    errs
}

fn push_all(out: &mut FieldErrors, field: &str, value: &str, msgs: Vec<String>) {
    for msg in msgs {
        out.push(FieldError::invalid(field, value, msg));
    }
}

/// Validates a label map under `path` (e.g. `metadata.labels`).
pub fn labels(path: &str, labels: &BTreeMap<String, String>) -> FieldErrors {
    let mut out = Vec::new();
    for (key, value) in labels {
        push_all(&mut out, path, key, qualified_name(key));
        // Upstream names the map, not the key, for a bad value.
        push_all(&mut out, path, value, label_value(value));
    }
    out
}

/// Validates the metadata of an object being created or updated. `namespaced` says whether
/// the resource lives in namespaces; `name_rule` checks the name (e.g. [`dns1123_subdomain`]).
pub fn object_meta(
    meta: &ObjectMeta,
    namespaced: bool,
    name_rule: fn(&str) -> Vec<String>,
) -> FieldErrors {
    let mut out = Vec::new();
    let name = meta.name.as_deref().unwrap_or("");
    let generate = meta.generate_name.as_deref().unwrap_or("");
    if name.is_empty() {
        if generate.is_empty() {
            out.push(FieldError::required(
                "metadata.name",
                "name or generateName is required",
            ));
        }
    } else {
        push_all(&mut out, "metadata.name", name, name_rule(name));
    }
    if !generate.is_empty() {
        // The generated name is the prefix plus a suffix, so the prefix may end with '-'.
        let trimmed = generate.trim_end_matches('-');
        let probe = if trimmed.is_empty() {
            "a".to_string()
        } else {
            format!("{trimmed}a")
        };
        push_all(
            &mut out,
            "metadata.generateName",
            generate,
            name_rule(&probe),
        );
    }
    let namespace = meta.namespace.as_deref().unwrap_or("");
    if namespaced {
        if namespace.is_empty() {
            out.push(FieldError::required("metadata.namespace", ""));
        } else {
            push_all(
                &mut out,
                "metadata.namespace",
                namespace,
                dns1123_label(namespace),
            );
        }
    } else if !namespace.is_empty() {
        out.push(FieldError::forbidden(
            "metadata.namespace",
            "not allowed on this type",
        ));
    }
    if let Some(l) = &meta.labels {
        out.extend(labels("metadata.labels", l));
    }
    if let Some(annotations) = &meta.annotations {
        let mut total = 0;
        for (key, value) in annotations {
            push_all(
                &mut out,
                "metadata.annotations",
                key,
                qualified_name(&key.to_ascii_lowercase()),
            );
            total += key.len() + value.len();
        }
        if total > ANNOTATIONS_MAX_BYTES {
            out.push(FieldError::too_long(
                "metadata.annotations",
                ANNOTATIONS_MAX_BYTES,
            ));
        }
    }
    if let Some(finalizers) = &meta.finalizers {
        let mut seen = std::collections::HashSet::new();
        for (i, f) in finalizers.iter().enumerate() {
            let path = format!("metadata.finalizers[{i}]");
            push_all(&mut out, &path, f, qualified_name(f));
            if !f.contains('/')
                && !matches!(
                    f.as_str(),
                    "kubernetes"
                        | "orphan"
                        | "foregroundDeletion"
                        | "customresourcecleanup.apiextensions.k8s.io"
                )
            {
                out.push(FieldError::invalid(
                    &path,
                    f,
                    "name is neither a standard finalizer name nor is it fully qualified",
                ));
            }
            if !seen.insert(f) {
                out.push(FieldError::duplicate(&path, f));
            }
        }
    }
    if let Some(owners) = &meta.owner_references {
        let mut controllers = 0;
        for (i, o) in owners.iter().enumerate() {
            let path = format!("metadata.ownerReferences[{i}]");
            if o.api_version.is_empty() {
                out.push(FieldError::invalid(
                    format!("{path}.apiVersion"),
                    "",
                    "version must not be empty",
                ));
            }
            if o.kind.is_empty() {
                out.push(FieldError::invalid(
                    format!("{path}.kind"),
                    "",
                    "kind must not be empty",
                ));
            }
            if o.name.is_empty() {
                out.push(FieldError::invalid(
                    format!("{path}.name"),
                    "",
                    "name must not be empty",
                ));
            }
            if o.uid.is_empty() {
                out.push(FieldError::invalid(
                    format!("{path}.uid"),
                    "",
                    "uid must not be empty",
                ));
            }
            if o.controller == Some(true) {
                controllers += 1;
            }
        }
        if controllers > 1 {
            out.push(FieldError::invalid_raw(
                "metadata.ownerReferences",
                format!("{controllers}"),
                "Only one reference can have Controller set to true",
            ));
        }
    }
    out
}

/// Validates the metadata rules that only apply to updates: fields the server owns may not
/// change.
pub fn object_meta_update(new: &ObjectMeta, old: &ObjectMeta) -> FieldErrors {
    let mut out = Vec::new();
    if new.name != old.name {
        out.push(FieldError::invalid(
            "metadata.name",
            new.name.as_deref().unwrap_or(""),
            "field is immutable",
        ));
    }
    if new.namespace != old.namespace {
        out.push(FieldError::invalid(
            "metadata.namespace",
            new.namespace.as_deref().unwrap_or(""),
            "field is immutable",
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn dns1035_labels_start_with_a_letter_and_long_multibyte_names_do_not_panic() {
        assert!(super::dns1035_label("my-svc").is_empty());
        assert_eq!(super::dns1035_label("1abc").len(), 1);
        assert_eq!(super::dns1035_label("abc-").len(), 1);
        let long = format!("{}é", "a".repeat(62));
        assert_eq!(super::dns1035_label(&long).len(), 2);
        assert_eq!(super::dns1123_label(&long).len(), 2);
    }

    use super::*;

    #[test]
    fn subdomains() {
        assert!(dns1123_subdomain("fast.example.com").is_empty());
        assert!(dns1123_subdomain("a").is_empty());
        assert!(!dns1123_subdomain("Fast").is_empty());
        assert!(!dns1123_subdomain("-a").is_empty());
        assert!(!dns1123_subdomain("a..b").is_empty());
        assert!(!dns1123_subdomain("").is_empty());
        assert!(!dns1123_subdomain(&"a".repeat(254)).is_empty());
    }

    #[test]
    fn qualified_names() {
        assert!(qualified_name("kubernetes.io/aws-ebs").is_empty());
        assert!(qualified_name("My_Name.1").is_empty());
        assert!(!qualified_name("/x").is_empty());
        assert!(!qualified_name("a/b/c").is_empty());
        assert!(!qualified_name("Example.com/x").is_empty());
        assert!(!qualified_name("x_").is_empty());
        assert!(!qualified_name(&"a".repeat(64)).is_empty());
    }

    #[test]
    fn metadata_requires_a_name() {
        let errs = object_meta(&ObjectMeta::default(), false, dns1123_subdomain);
        assert_eq!(errs.len(), 1);
        assert_eq!(
            errs[0].to_string(),
            "metadata.name: Required value: name or generateName is required"
        );
        let generated = ObjectMeta {
            generate_name: Some("fast-".into()),
            ..Default::default()
        };
        assert!(object_meta(&generated, false, dns1123_subdomain).is_empty());
    }

    #[test]
    fn metadata_checks_labels_and_finalizers() {
        let meta = ObjectMeta {
            name: Some("x".into()),
            labels: Some([("bad key".to_string(), "v".to_string())].into()),
            finalizers: Some(vec![
                "custom".into(),
                "example.com/f".into(),
                "example.com/f".into(),
            ]),
            ..Default::default()
        };
        let errs = object_meta(&meta, false, dns1123_subdomain);
        let fields: Vec<&str> = errs.iter().map(|e| e.field.as_str()).collect();
        assert!(fields.contains(&"metadata.labels"));
        assert!(fields.contains(&"metadata.finalizers[0]"));
        assert!(fields.contains(&"metadata.finalizers[2]"));
    }
}
