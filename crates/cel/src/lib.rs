//! CEL for Capstan: an expression is compiled once ([`Program::compile`]), when the object
//! that holds it is validated or loaded, and evaluated per request over JSON variables
//! (`object`, `oldObject`, `request`, ...). The engine is the `cel` crate (cel-rust).

use serde_json::Value;
use thiserror::Error;

/// Why an expression could not be compiled or evaluated.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum Error {
    /// The expression does not parse.
    #[error("{0}")]
    Compile(String),
    /// Evaluation failed (no such key, a type mismatch, ...).
    #[error("{0}")]
    Evaluate(String),
    /// The expression evaluated to something else than the type asked for.
    #[error("expression must evaluate to {expected}, not {found}")]
    Type {
        /// What was asked for.
        expected: &'static str,
        /// What came out.
        found: String,
    },
}

/// A compiled expression.
pub struct Program {
    program: cel::Program,
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Program")
    }
}

impl Program {
    /// Parses `expression`; the error names the position and what was expected.
    pub fn compile(expression: &str) -> Result<Self, Error> {
        // The parser may panic on some malformed input; an expression is user data.
        let parsed = std::panic::catch_unwind(|| cel::Program::compile(expression))
            .map_err(|_| Error::Compile("the expression cannot be parsed".into()))?;
        let program = parsed.map_err(|e| {
            let messages: Vec<String> = e
                .errors
                .iter()
                .map(|p| format!("{}:{}: {}", p.pos.0, p.pos.1, p.msg))
                .collect();
            Error::Compile(if messages.is_empty() {
                e.to_string()
            } else {
                messages.join("; ")
            })
        })?;
        Ok(Self { program })
    }

    /// Evaluates the program with `variables` bound (JSON `null` for absent objects).
    pub fn evaluate(&self, variables: &[(&str, &Value)]) -> Result<cel::Value, Error> {
        let mut context = cel::Context::default();
        for (name, value) in variables {
            context
                .add_variable(*name, *value)
                .map_err(|e| Error::Evaluate(e.to_string()))?;
        }
        self.program
            .execute(&context)
            .map_err(|e| Error::Evaluate(e.to_string()))
    }

    /// Evaluates a program that must answer true or false.
    pub fn evaluate_bool(&self, variables: &[(&str, &Value)]) -> Result<bool, Error> {
        match self.evaluate(variables)? {
            cel::Value::Bool(b) => Ok(b),
            other => Err(Error::Type {
                expected: "bool",
                found: format!("{:?}", other.type_of()),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn evaluates_over_json_objects() {
        let p = Program::compile(
            "object.metadata.name.startsWith('web') && request.operation == 'CREATE'",
        )
        .unwrap();
        let object = json!({"metadata": {"name": "web-1"}});
        let create = json!({"operation": "CREATE"});
        let update = json!({"operation": "UPDATE"});
        assert!(
            p.evaluate_bool(&[("object", &object), ("request", &create)])
                .unwrap()
        );
        assert!(
            !p.evaluate_bool(&[("object", &object), ("request", &update)])
                .unwrap()
        );
    }

    #[test]
    fn has_sees_absent_fields() {
        let p = Program::compile("has(object.metadata.labels) && 'app' in object.metadata.labels")
            .unwrap();
        let bare = json!({"metadata": {}});
        let labelled = json!({"metadata": {"labels": {"app": "x"}}});
        assert!(!p.evaluate_bool(&[("object", &bare)]).unwrap());
        assert!(p.evaluate_bool(&[("object", &labelled)]).unwrap());
    }

    #[test]
    fn a_syntax_error_names_its_position() {
        let e = Program::compile("object.metadata.name ==").unwrap_err();
        assert!(
            matches!(&e, Error::Compile(m) if m.starts_with("1:")),
            "{e}"
        );
    }

    #[test]
    fn a_missing_key_and_a_non_bool_are_errors() {
        let p = Program::compile("object.spec.replicas").unwrap();
        let object = json!({"metadata": {}});
        assert!(matches!(
            p.evaluate(&[("object", &object)]),
            Err(Error::Evaluate(_))
        ));
        let p = Program::compile("'text'").unwrap();
        assert!(matches!(p.evaluate_bool(&[]), Err(Error::Type { .. })));
    }
}
