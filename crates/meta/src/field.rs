//! Field errors: what validation finds, in the shape of upstream `field.Error`.

use std::fmt;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::StatusCause;

/// The kind of a field error; each maps to an upstream cause reason.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldErrorKind {
    /// A required field is missing.
    Required,
    /// A value is malformed or out of range.
    Invalid,
    /// A value is not one of the supported ones.
    NotSupported,
    /// A value is not allowed here (including changes to immutable fields).
    Forbidden,
    /// A value repeats one that must be unique.
    Duplicate,
    /// A value is longer than allowed.
    TooLong,
    /// A value names something that does not exist.
    NotFound,
    /// A value has the wrong JSON type.
    TypeInvalid,
    /// A list or map has more entries than allowed.
    TooMany,
}

impl FieldErrorKind {
    /// The upstream `StatusCause.reason` string.
    pub fn reason(self) -> &'static str {
        match self {
            Self::Required => "FieldValueRequired",
            Self::Invalid => "FieldValueInvalid",
            Self::NotSupported => "FieldValueNotSupported",
            Self::Forbidden => "FieldValueForbidden",
            Self::Duplicate => "FieldValueDuplicate",
            Self::TooLong => "FieldValueTooLong",
            Self::NotFound => "FieldValueNotFound",
            Self::TypeInvalid => "FieldValueTypeInvalid",
            Self::TooMany => "FieldValueTooMany",
        }
    }
}

/// One problem with one field of an object.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// What kind of problem.
    pub kind: FieldErrorKind,
    /// The field path, e.g. `metadata.name` or `allowedTopologies[0].matchLabelExpressions`.
    pub field: String,
    /// The offending value, already rendered (strings quoted), when it is worth showing.
    pub value: Option<String>,
    /// Free text explaining the problem.
    pub detail: String,
}

/// A list of field errors, as validation functions return them.
pub type FieldErrors = Vec<FieldError>;

fn quoted(value: &str) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| format!("{value:?}"))
}

impl FieldError {
    /// A required field is missing.
    pub fn required(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            kind: FieldErrorKind::Required,
            field: field.into(),
            value: None,
            detail: detail.into(),
        }
    }

    /// A string value is invalid.
    pub fn invalid(field: impl Into<String>, value: &str, detail: impl Into<String>) -> Self {
        Self {
            kind: FieldErrorKind::Invalid,
            field: field.into(),
            value: Some(quoted(value)),
            detail: detail.into(),
        }
    }

    /// A value of another type (already rendered) is invalid.
    pub fn invalid_raw(
        field: impl Into<String>,
        value: impl Into<String>,
        detail: impl Into<String>,
    ) -> Self {
        Self {
            kind: FieldErrorKind::Invalid,
            field: field.into(),
            value: Some(value.into()),
            detail: detail.into(),
        }
    }

    /// A value is not one of `supported`.
    pub fn not_supported(field: impl Into<String>, value: &str, supported: &[&str]) -> Self {
        let list: Vec<String> = supported.iter().map(|s| quoted(s)).collect();
        Self {
            kind: FieldErrorKind::NotSupported,
            field: field.into(),
            value: Some(quoted(value)),
            detail: format!("supported values: {}", list.join(", ")),
        }
    }

    /// A value (or a change of it) is not allowed.
    pub fn forbidden(field: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            kind: FieldErrorKind::Forbidden,
            field: field.into(),
            value: None,
            detail: detail.into(),
        }
    }

    /// A value repeats one that must be unique.
    pub fn duplicate(field: impl Into<String>, value: &str) -> Self {
        Self {
            kind: FieldErrorKind::Duplicate,
            field: field.into(),
            value: Some(quoted(value)),
            detail: String::new(),
        }
    }

    /// A value names something that does not exist.
    pub fn not_found(field: impl Into<String>, value: &str) -> Self {
        Self {
            kind: FieldErrorKind::NotFound,
            field: field.into(),
            value: Some(quoted(value)),
            detail: String::new(),
        }
    }

    /// A value is longer than `max` bytes.
    pub fn too_long(field: impl Into<String>, max: usize) -> Self {
        Self {
            kind: FieldErrorKind::TooLong,
            field: field.into(),
            value: None,
            detail: format!("may not be more than {max} bytes"),
        }
    }

    /// A number is negative where it may not be (upstream's `ValidateNonnegativeField`).
    pub fn negative(field: impl Into<String>, value: i64) -> Self {
        Self::invalid_raw(
            field,
            value.to_string(),
            "must be greater than or equal to 0",
        )
    }

    /// A list or map has `actual` entries, more than `max`.
    pub fn too_many(field: impl Into<String>, actual: usize, max: usize) -> Self {
        Self {
            kind: FieldErrorKind::TooMany,
            field: field.into(),
            value: Some(actual.to_string()),
            detail: format!("must have at most {max} items"),
        }
    }

    /// The message without the field path, as upstream puts it in a cause.
    pub fn body(&self) -> String {
        let head = match self.kind {
            FieldErrorKind::Required => "Required value",
            FieldErrorKind::Invalid => "Invalid value",
            FieldErrorKind::NotSupported => "Unsupported value",
            FieldErrorKind::Forbidden => "Forbidden",
            FieldErrorKind::Duplicate => "Duplicate value",
            FieldErrorKind::TooLong => "Too long",
            FieldErrorKind::NotFound => "Not found",
            FieldErrorKind::TypeInvalid => "Invalid value",
            FieldErrorKind::TooMany => "Too many",
        };
        let mut out = head.to_string();
        if let Some(value) = &self.value {
            out.push_str(": ");
            out.push_str(value);
        }
        if !self.detail.is_empty() {
            out.push_str(": ");
            out.push_str(&self.detail);
        }
        out
    }

    /// The upstream `StatusCause` for this error.
    pub fn to_cause(&self) -> StatusCause {
        StatusCause {
            field: Some(self.field.clone()),
            message: Some(self.body()),
            reason: Some(self.kind.reason().to_string()),
        }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.body())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_have_upstream_shape() {
        let e = FieldError::not_supported("reclaimPolicy", "Keep", &["Delete", "Retain"]);
        assert_eq!(
            e.to_string(),
            r#"reclaimPolicy: Unsupported value: "Keep": supported values: "Delete", "Retain""#
        );
        assert_eq!(
            FieldError::required("provisioner", "").to_string(),
            "provisioner: Required value"
        );
        assert_eq!(
            e.to_cause().reason.as_deref(),
            Some("FieldValueNotSupported")
        );
    }
}
