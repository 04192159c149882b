//! CEL for Capstan: an expression is compiled once ([`Program::compile`]), when the object
//! that holds it is validated or loaded, and evaluated per request over JSON variables
//! (`object`, `oldObject`, `request`, ...). The engine is the `cel` crate (cel-rust).

use serde_json::Value;
use thiserror::Error;

pub mod kubernetes;

/// The environment every program runs in: the standard library, the strings extension and
/// the Kubernetes libraries (built once).
fn environment() -> std::sync::Arc<cel::Env> {
    static ENV: std::sync::LazyLock<std::sync::Arc<cel::Env>> = std::sync::LazyLock::new(|| {
        std::sync::Arc::new(kubernetes::environment().unwrap_or_else(|_| cel::Env::stdlib()))
    });
    ENV.clone()
}

/// A CEL value, as programs answer.
pub use cel::Value as CelValue;
use cel::common::types::{
    CelBool, CelDouble, CelInt, CelList, CelMap, CelMapKey, CelNull, CelString, CelUInt,
};
use cel::common::value::Val;

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

/// Variables bound once and read by several programs (each binding converts its JSON value,
/// which is the costly part of an evaluation).
pub struct Activation {
    context: cel::Context<'static, 'static>,
}

impl Default for Activation {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Activation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Activation")
    }
}

impl Activation {
    /// No variables bound; the standard functions and Kubernetes' libraries available.
    pub fn new() -> Self {
        Self {
            context: cel::Context::with_env(environment()),
        }
    }

    /// Binds `name` to `value` (JSON `null` for an absent object), replacing a binding.
    pub fn bind(&mut self, name: &str, value: &Value) -> Result<(), Error> {
        self.context.add_variable_as_val(name, to_val(value));
        Ok(())
    }

    /// Binds `name` to a map of results (the `variables` of a policy).
    pub fn bind_results(&mut self, name: &str, results: &[(String, CelValue)]) {
        let map: std::collections::HashMap<CelMapKey<'static>, Box<dyn Val>> = results
            .iter()
            .filter_map(|(k, v)| {
                let v: Box<dyn Val> = v.clone().try_into().ok()?;
                Some((CelMapKey::from(k.clone()), v))
            })
            .collect();
        self.context
            .add_variable_as_val(name, Box::new(CelMap::from(map)));
    }
}

/// The CEL value of a JSON value, built in one pass into the engine's own representation:
/// integers are `int` (as upstream, whose object fields are int64), `uint` only beyond
/// `i64`, other numbers `double`.
fn to_val(value: &Value) -> Box<dyn Val> {
    match value {
        Value::Null => Box::new(CelNull),
        Value::Bool(b) => Box::new(CelBool::from(*b)),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Box::new(CelInt::from(i)),
            (None, Some(u)) => Box::new(CelUInt::from(u)),
            _ => Box::new(CelDouble::from(n.as_f64().unwrap_or(f64::NAN))),
        },
        Value::String(s) => Box::new(CelString::from(s.clone())),
        Value::Array(items) => {
            Box::new(CelList::from(items.iter().map(to_val).collect::<Vec<_>>()))
        }
        Value::Object(fields) => Box::new(CelMap::from(
            fields
                .iter()
                .map(|(k, v)| (CelMapKey::from(k.clone()), to_val(v)))
                .collect::<std::collections::HashMap<_, _>>(),
        )),
    }
}

/// The JSON form of a result (a map, list, string, number, bool or null).
pub fn to_json(value: &cel::Value) -> Result<Value, Error> {
    value.json().map_err(|e| Error::Type {
        expected: "a JSON value",
        found: e.to_string(),
    })
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

    /// Whether the expression reads the variable `name` (e.g. a transition rule's
    /// `oldSelf`).
    pub fn references_variable(&self, name: &str) -> bool {
        self.program.references().has_variable(name)
    }

    /// Evaluates the program with `variables` bound (JSON `null` for absent objects).
    pub fn evaluate(&self, variables: &[(&str, &Value)]) -> Result<cel::Value, Error> {
        let mut context = cel::Context::with_env(environment());
        for (name, value) in variables {
            context.add_variable_as_val(*name, to_val(value));
        }
        self.program
            .execute(&context)
            .map_err(|e| Error::Evaluate(e.to_string()))
    }

    /// Evaluates the program over the variables of `activation`.
    pub fn run(&self, activation: &Activation) -> Result<cel::Value, Error> {
        self.program
            .execute(&activation.context)
            .map_err(|e| Error::Evaluate(e.to_string()))
    }

    /// Evaluates, over `activation`, a program that must answer true or false.
    pub fn run_bool(&self, activation: &Activation) -> Result<bool, Error> {
        match self.run(activation)? {
            cel::Value::Bool(b) => Ok(b),
            other => Err(Error::Type {
                expected: "bool",
                found: format!("{:?}", other.type_of()),
            }),
        }
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
    fn an_activation_serves_several_programs_and_results_convert_back() {
        let mut activation = Activation::new();
        activation
            .bind("object", &json!({"spec": {"replicas": 3}}))
            .unwrap();
        let p = Program::compile("object.spec.replicas * 2").unwrap();
        assert_eq!(to_json(&p.run(&activation).unwrap()).unwrap(), json!(6));
        activation.bind("variables", &json!({"double": 6})).unwrap();
        let q = Program::compile("variables.double > object.spec.replicas").unwrap();
        assert!(q.run_bool(&activation).unwrap());
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
