//! CEL for Capstan: an expression is compiled once ([`Program::compile`]), when the object
//! that holds it is validated or loaded, and evaluated per request over JSON variables
//! (`object`, `oldObject`, `request`, ...). The engine is the `cel` crate (cel-rust).

use serde_json::Value;
use thiserror::Error;

pub mod check;
pub mod device;
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

    /// Binds `device` to a device of a ResourceSlice, as DRA selectors read it.
    pub fn bind_device(&mut self, device: &device::Device<'_>) -> Result<(), Error> {
        self.context.add_variable_as_val("device", device.to_val()?);
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
    expression: cel::IdedExpr,
}

impl std::fmt::Debug for Program {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Program")
    }
}

/// The message of a parse failure: each error with its position.
fn parse_error(e: cel::ParseErrors) -> Error {
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
}

fn parse(expression: &str) -> Result<cel::IdedExpr, Error> {
    // The parser may panic on some malformed input; an expression is user data.
    std::panic::catch_unwind(|| cel::parser::Parser::new().parse(expression))
        .map_err(|_| Error::Compile("the expression cannot be parsed".into()))?
        .map_err(parse_error)
}

/// The fields a `JSONPatch` literal may set.
const JSON_PATCH_FIELDS: [&str; 4] = ["op", "path", "from", "value"];

/// Rewrites the object literals of a mutation (`Object{...}`, `Object.spec{...}`,
/// `JSONPatch{...}`) as map literals of their fields; any other type name is unknown.
fn objects_as_maps(expr: &mut cel::IdedExpr) -> Result<(), Error> {
    use cel::common::ast::{EntryExpr, Expr, LiteralValue, MapEntryExpr, MapExpr};
    match &mut expr.expr {
        Expr::Struct(literal) => {
            let name = literal.type_name.trim_start_matches('.');
            let is_patch = name == "JSONPatch";
            if !is_patch && name != "Object" && !name.starts_with("Object.") {
                return Err(Error::Compile(format!("undeclared reference to '{name}'")));
            }
            let mut entries = Vec::with_capacity(literal.entries.len());
            for mut entry in std::mem::take(&mut literal.entries) {
                let EntryExpr::StructField(field) = &mut entry.expr else {
                    continue;
                };
                if is_patch && !JSON_PATCH_FIELDS.contains(&field.field.as_str()) {
                    return Err(Error::Compile(format!(
                        "undefined field '{}' of JSONPatch",
                        field.field
                    )));
                }
                objects_as_maps(&mut field.value)?;
                let key = cel::IdedExpr {
                    id: entry.id,
                    expr: Expr::Literal(LiteralValue::String(CelString::from(std::mem::take(
                        &mut field.field,
                    )))),
                };
                entry.expr = EntryExpr::MapEntry(MapEntryExpr {
                    key,
                    value: std::mem::take(&mut field.value),
                    optional: field.optional,
                });
                entries.push(entry);
            }
            expr.expr = Expr::Map(MapExpr { entries });
            Ok(())
        }
        Expr::Call(call) => {
            if let Some(target) = &mut call.target {
                objects_as_maps(target)?;
            }
            call.args.iter_mut().try_for_each(objects_as_maps)
        }
        Expr::Comprehension(c) => {
            for part in [
                &mut c.iter_range,
                &mut c.accu_init,
                &mut c.loop_cond,
                &mut c.loop_step,
                &mut c.result,
            ] {
                objects_as_maps(part)?;
            }
            Ok(())
        }
        Expr::List(list) => list.elements.iter_mut().try_for_each(objects_as_maps),
        Expr::Map(map) => map
            .entries
            .iter_mut()
            .try_for_each(|entry| match &mut entry.expr {
                EntryExpr::MapEntry(e) => {
                    objects_as_maps(&mut e.key)?;
                    objects_as_maps(&mut e.value)
                }
                EntryExpr::StructField(f) => objects_as_maps(&mut f.value),
            }),
        Expr::Select(select) => objects_as_maps(&mut select.operand),
        _ => Ok(()),
    }
}

impl Program {
    /// Parses `expression`; the error names the position and what was expected.
    pub fn compile(expression: &str) -> Result<Self, Error> {
        Ok(Self {
            expression: parse(expression)?,
        })
    }

    /// Parses an expression that builds objects and JSON patches, as a mutating admission
    /// policy's: `Object{...}` and `Object.<field>...{...}` literals evaluate to maps of their
    /// fields (the object's schema checks them where the result is applied), `JSONPatch{...}`
    /// literals to patch operations (`op`, `path`, `from`, `value`).
    pub fn compile_mutation(expression: &str) -> Result<Self, Error> {
        let mut expression = parse(expression)?;
        objects_as_maps(&mut expression)?;
        Ok(Self { expression })
    }

    /// Whether the expression reads the variable `name` (e.g. a transition rule's
    /// `oldSelf`).
    pub fn references_variable(&self, name: &str) -> bool {
        self.expression.references().has_variable(name)
    }

    /// Evaluates the program with `variables` bound (JSON `null` for absent objects).
    pub fn evaluate(&self, variables: &[(&str, &Value)]) -> Result<cel::Value, Error> {
        let mut context = cel::Context::with_env(environment());
        for (name, value) in variables {
            context.add_variable_as_val(*name, to_val(value));
        }
        cel::Value::resolve(&self.expression, &context).map_err(|e| Error::Evaluate(e.to_string()))
    }

    /// Evaluates the program over the variables of `activation`.
    pub fn run(&self, activation: &Activation) -> Result<cel::Value, Error> {
        cel::Value::resolve(&self.expression, &activation.context)
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

    #[test]
    fn object_and_patch_literals_become_maps() {
        let object = json!({"metadata": {"name": "web"}, "spec": {"replicas": 1}});
        let apply = Program::compile_mutation(
            "Object{spec: Object.spec{replicas: object.spec.replicas + 2, template: Object.spec.template{metadata: Object.spec.template.metadata{labels: {'a': 'b'}}}}}",
        )
        .unwrap();
        let out = to_json(&apply.evaluate(&[("object", &object)]).unwrap()).unwrap();
        assert_eq!(
            out,
            json!({"spec": {"replicas": 3, "template": {"metadata": {"labels": {"a": "b"}}}}})
        );
        let patch = Program::compile_mutation(
            "[JSONPatch{op: 'add', path: '/metadata/labels/' + jsonpatch.escapeKey('example.com/a~b'), value: [Object.spec.x{y: 1}].map(i, i)}]",
        )
        .unwrap();
        let out = to_json(&patch.evaluate(&[]).unwrap()).unwrap();
        assert_eq!(
            out,
            json!([{"op": "add", "path": "/metadata/labels/example.com~1a~0b", "value": [{"y": 1}]}])
        );
        assert!(matches!(
            Program::compile_mutation("Deployment{}"),
            Err(Error::Compile(m)) if m == "undeclared reference to 'Deployment'"
        ));
        assert!(Program::compile_mutation("JSONPatch{operation: 'add'}").is_err());
        // Plain programs keep refusing struct literals at evaluation.
        assert!(Program::compile("Object{}").unwrap().evaluate(&[]).is_err());
    }
}
