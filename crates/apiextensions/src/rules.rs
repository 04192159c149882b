//! CEL validation rules (`x-kubernetes-validations`): compiled with the CRD, evaluated with
//! `self` bound to the value at the rule's place and, for transition rules, `oldSelf` to
//! the stored value there; failures reported as upstream reports them (the rule's message,
//! its `messageExpression`, or `failed rule: <rule>`, with its `reason` and `fieldPath`).

use capstan_cel::{Activation, Program};
use capstan_meta::{FieldError, FieldErrorKind, FieldErrors};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::ValidationRule;
use serde_json::Value;

/// The reasons a rule may give its failures.
const REASONS: [&str; 4] = [
    "FieldValueInvalid",
    "FieldValueForbidden",
    "FieldValueRequired",
    "FieldValueDuplicate",
];

/// One compiled rule.
#[derive(Debug)]
pub struct Rule {
    text: String,
    program: Program,
    message: Option<String>,
    message_expression: Option<Program>,
    reason: Option<String>,
    field_path: Option<String>,
    /// Whether the rule reads `oldSelf` (evaluated on updates only, when there is an old
    /// value to compare with).
    transition: bool,
}

impl Rule {
    /// Compiles `rule`, or says why it cannot be, as causes under `path` (the rule's place
    /// in the CRD: `...x-kubernetes-validations[0]`).
    pub fn compile(rule: &ValidationRule, path: &str) -> Result<Self, FieldErrors> {
        let mut errs = Vec::new();
        if rule.rule.trim().is_empty() {
            errs.push(FieldError::required(format!("{path}.rule"), ""));
        }
        let program = Program::compile(&rule.rule).map_err(|e| {
            FieldError::invalid(
                format!("{path}.rule"),
                &rule.rule,
                format!("compilation failed: {e}"),
            )
        });
        let message_expression = rule
            .message_expression
            .as_deref()
            .filter(|m| !m.is_empty())
            .map(|m| {
                Program::compile(m).map_err(|e| {
                    FieldError::invalid(
                        format!("{path}.messageExpression"),
                        m,
                        format!("messageExpression compilation failed: {e}"),
                    )
                })
            })
            .transpose();
        if let Some(reason) = &rule.reason
            && !REASONS.contains(&reason.as_str())
        {
            errs.push(FieldError::not_supported(
                format!("{path}.reason"),
                reason,
                &REASONS,
            ));
        }
        if let Some(message) = &rule.message
            && message.contains(['\n', '\r'])
        {
            errs.push(FieldError::invalid(
                format!("{path}.message"),
                message,
                "message must not contain line breaks",
            ));
        }
        if let Some(fp) = &rule.field_path
            && !fp.is_empty()
            && !fp.starts_with('.')
        {
            errs.push(FieldError::invalid(
                format!("{path}.fieldPath"),
                fp,
                "must be a valid path: must start with a '.'",
            ));
        }
        let program = program.map_err(|e| {
            errs.push(e);
        });
        let message_expression = message_expression.map_err(|e| {
            errs.push(e);
        });
        match (program, message_expression) {
            (Ok(program), Ok(message_expression)) if errs.is_empty() => Ok(Self {
                transition: program.references_variable("oldSelf"),
                text: rule.rule.clone(),
                program,
                message: rule.message.clone().filter(|m| !m.is_empty()),
                message_expression,
                reason: rule.reason.clone(),
                field_path: rule.field_path.clone().filter(|p| !p.is_empty()),
            }),
            _ => Err(errs),
        }
    }

    /// Whether the rule reads `oldSelf`.
    pub fn is_transition(&self) -> bool {
        self.transition
    }

    /// Evaluates the rule on `value` (and `old`, for a transition rule) at `path`; `ty` is
    /// the schema type named in failures.
    pub fn check(
        &self,
        value: &Value,
        old: Option<&Value>,
        path: &str,
        ty: &str,
        errs: &mut FieldErrors,
    ) {
        if self.transition && old.is_none() {
            return;
        }
        let mut activation = Activation::new();
        if activation.bind("self", value).is_err() {
            return;
        }
        if let Some(old) = old
            && activation.bind("oldSelf", old).is_err()
        {
            return;
        }
        // Upstream names the root `<nil>`.
        let at = match &self.field_path {
            Some(fp) if path.is_empty() => fp.trim_start_matches('.').to_string(),
            Some(fp) => format!("{path}{fp}"),
            None if path.is_empty() => "<nil>".to_string(),
            None => path.to_string(),
        };
        let shown_type = serde_json::to_string(ty).unwrap_or_default();
        match self.program.run_bool(&activation) {
            Ok(true) => {}
            Ok(false) => {
                let message = self
                    .message_expression
                    .as_ref()
                    .and_then(|m| m.run(&activation).ok())
                    .and_then(|v| match v {
                        capstan_cel::CelValue::String(s) if !s.trim().is_empty() => {
                            Some(s.to_string())
                        }
                        _ => None,
                    })
                    .or_else(|| self.message.clone())
                    .unwrap_or_else(|| format!("failed rule: {}", self.text));
                errs.push(match self.reason.as_deref() {
                    Some("FieldValueForbidden") => FieldError::forbidden(at, message),
                    Some("FieldValueRequired") => FieldError::required(at, message),
                    Some("FieldValueDuplicate") => FieldError {
                        kind: FieldErrorKind::Duplicate,
                        field: at,
                        value: Some(shown_type),
                        detail: message,
                    },
                    _ => FieldError::invalid_raw(at, shown_type, message),
                });
            }
            Err(e) => errs.push(FieldError::invalid_raw(
                at,
                shown_type,
                format!("{e} evaluating rule: {}", self.text),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rule(doc: Value) -> Result<Rule, Vec<String>> {
        let r: ValidationRule = serde_json::from_value(doc).unwrap();
        Rule::compile(&r, "spec.x-kubernetes-validations[0]")
            .map_err(|e| e.iter().map(ToString::to_string).collect())
    }

    fn failures(r: &Rule, value: Value, old: Option<Value>) -> Vec<String> {
        let mut errs = Vec::new();
        r.check(&value, old.as_ref(), "spec", "object", &mut errs);
        errs.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn rules_report_their_message_reason_and_path() {
        let r = rule(json!({"rule": "self.min <= self.max"})).unwrap();
        assert!(failures(&r, json!({"min": 1, "max": 2}), None).is_empty());
        assert_eq!(
            failures(&r, json!({"min": 3, "max": 2}), None),
            ["spec: Invalid value: \"object\": failed rule: self.min <= self.max"]
        );
        let r = rule(json!({"rule": "self.min <= self.max", "messageExpression": "'min ' + string(self.min) + ' is above max'",
                            "reason": "FieldValueForbidden", "fieldPath": ".min"}))
        .unwrap();
        assert_eq!(
            failures(&r, json!({"min": 3, "max": 2}), None),
            ["spec.min: Forbidden: min 3 is above max"]
        );
    }

    #[test]
    fn transition_rules_need_an_old_value() {
        let r =
            rule(json!({"rule": "self.size >= oldSelf.size", "message": "cannot shrink"})).unwrap();
        assert!(r.is_transition());
        assert!(failures(&r, json!({"size": 1}), None).is_empty());
        assert_eq!(
            failures(&r, json!({"size": 1}), Some(json!({"size": 2}))),
            ["spec: Invalid value: \"object\": cannot shrink"]
        );
    }

    #[test]
    fn bad_rules_are_refused_at_the_crd() {
        let errs = rule(json!({"rule": "self.a ==", "reason": "Oops"})).unwrap_err();
        assert!(
            errs[0].starts_with(
                "spec.x-kubernetes-validations[0].reason: Unsupported value: \"Oops\""
            ),
            "{errs:?}"
        );
        assert!(
            errs[1].starts_with("spec.x-kubernetes-validations[0].rule: Invalid value: \"self.a ==\": compilation failed: "),
            "{errs:?}"
        );
        // An evaluation error is a failure of the object, not a crash.
        let r = rule(json!({"rule": "self.missing == 1"})).unwrap();
        let got = failures(&r, json!({}), None);
        assert_eq!(got.len(), 1);
        assert!(
            got[0].ends_with("evaluating rule: self.missing == 1"),
            "{got:?}"
        );
    }
}
