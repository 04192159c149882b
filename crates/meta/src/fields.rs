//! Field selectors: `field=value`, `field==value`, `field!=value`, joined by commas. Which
//! fields a resource supports is the registry's business; this module parses and matches.

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

#[cfg(test)]
mod tests {
    use super::*;

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
