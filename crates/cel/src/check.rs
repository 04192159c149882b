//! The static check of a device selector, as upstream's CEL compiler checks one when a
//! DeviceClass or a claim is written: names that are not declared (only `device` is), fields
//! a device does not have, `==` and `!=` between values of two different known types, and a
//! result that cannot be a boolean. Types are followed only as far as they are known (the
//! device and its fields, literals, operators and a few functions); anything else is
//! dynamic, and a dynamic value passes, as upstream's `dyn` does.

use cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue, SourceInfo};

/// A static type, as far as the check follows it.
#[derive(Debug, Clone, PartialEq)]
enum Type {
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    Null,
    /// The `device` variable.
    Device,
    /// A map to values of the type (keys are strings wherever the check follows one).
    Map(Box<Type>),
    List,
    Quantity,
    Dyn,
}

impl Type {
    /// Upstream's name of a type a result cannot be.
    fn name(&self) -> &'static str {
        match self {
            Type::Bool => "bool",
            Type::Int => "int",
            Type::Uint => "uint",
            Type::Double => "double",
            Type::String => "string",
            Type::Bytes => "bytes",
            Type::Null => "null_type",
            Type::Device => "Device",
            Type::Map(_) => "map",
            Type::List => "list",
            Type::Quantity => "kubernetes.Quantity",
            Type::Dyn => "dyn",
        }
    }

    /// A type whose equality with another such type has no overload.
    fn is_primitive(&self) -> bool {
        matches!(
            self,
            Type::Bool
                | Type::Int
                | Type::Uint
                | Type::Double
                | Type::String
                | Type::Bytes
                | Type::Quantity
        )
    }

    fn is_number(&self) -> bool {
        matches!(self, Type::Int | Type::Uint | Type::Double)
    }
}

/// The type of a device field.
fn device_field(name: &str) -> Option<Type> {
    Some(match name {
        "driver" => Type::String,
        "allowMultipleAllocations" => Type::Bool,
        "attributes" => Type::Map(Box::new(Type::Map(Box::new(Type::Dyn)))),
        "capacity" => Type::Map(Box::new(Type::Map(Box::new(Type::Quantity)))),
        _ => return None,
    })
}

struct Checker<'a> {
    source: &'a SourceInfo,
    /// Names bound by comprehensions (macros), innermost last.
    scope: Vec<String>,
    errors: Vec<String>,
}

impl Checker<'_> {
    /// Records `message` at node `id`, in upstream's form: the position, the line, and a
    /// caret under the column.
    fn error(&mut self, id: u64, message: String) {
        let start = self.source.offset_for(id).map_or(0, |(s, _)| s as usize);
        let text = &self.source.source;
        let before = &text[..start.min(text.len())];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        let snippet = text[line_start..].lines().next().unwrap_or("");
        self.errors.push(format!(
            "ERROR: <input>:{line}:{column}: {message}\n | {snippet}\n | {}^",
            ".".repeat(column - 1)
        ));
    }

    fn check(&mut self, e: &IdedExpr) -> Type {
        match &e.expr {
            Expr::Literal(l) => match l {
                LiteralValue::Boolean(_) => Type::Bool,
                LiteralValue::Int(_) => Type::Int,
                LiteralValue::UInt(_) => Type::Uint,
                LiteralValue::Double(_) => Type::Double,
                LiteralValue::String(_) => Type::String,
                LiteralValue::Bytes(_) => Type::Bytes,
                LiteralValue::Null => Type::Null,
            },
            Expr::Ident(name) => {
                if self.scope.iter().any(|n| n == name) {
                    Type::Dyn
                } else if name == "device" {
                    Type::Device
                } else if is_type_name(name) {
                    Type::Dyn
                } else {
                    self.error(
                        e.id,
                        format!("undeclared reference to '{name}' (in container '')"),
                    );
                    Type::Dyn
                }
            }
            Expr::Select(select) => {
                let operand = self.check(&select.operand);
                if select.test {
                    return Type::Bool;
                }
                match operand {
                    Type::Device => device_field(&select.field).unwrap_or_else(|| {
                        self.error(e.id, format!("undefined field '{}'", select.field));
                        Type::Dyn
                    }),
                    Type::Map(value) => *value,
                    _ => Type::Dyn,
                }
            }
            Expr::Call(call) => {
                let target = call.target.as_ref().map(|t| self.check(t));
                let args: Vec<Type> = call.args.iter().map(|a| self.check(a)).collect();
                self.call(e.id, &call.func_name, target, &args)
            }
            Expr::List(list) => {
                for element in &list.elements {
                    self.check(element);
                }
                Type::List
            }
            Expr::Map(map) => {
                for entry in &map.entries {
                    if let EntryExpr::MapEntry(m) = &entry.expr {
                        self.check(&m.key);
                        self.check(&m.value);
                    }
                }
                Type::Map(Box::new(Type::Dyn))
            }
            Expr::Struct(s) => {
                for entry in &s.entries {
                    if let EntryExpr::StructField(f) = &entry.expr {
                        self.check(&f.value);
                    }
                }
                Type::Dyn
            }
            Expr::Comprehension(c) => {
                self.check(&c.iter_range);
                let accu = self.check(&c.accu_init);
                let bound = 1 + usize::from(c.iter_var2.is_some());
                self.scope.push(c.iter_var.clone());
                self.scope.extend(c.iter_var2.clone());
                self.scope.push(c.accu_var.clone());
                self.check(&c.loop_cond);
                self.check(&c.loop_step);
                let result = match &c.result.expr {
                    Expr::Ident(name) if *name == c.accu_var => accu,
                    _ => self.check(&c.result),
                };
                self.scope.truncate(self.scope.len() - bound - 1);
                result
            }
            Expr::Unspecified => Type::Dyn,
        }
    }

    /// The result type of a call, recording an equality between two known, different types.
    fn call(&mut self, id: u64, function: &str, target: Option<Type>, args: &[Type]) -> Type {
        match function {
            "_==_" | "_!=_" => {
                if let [a, b] = args
                    && a.is_primitive()
                    && b.is_primitive()
                    && a != b
                    && !(a.is_number() && b.is_number())
                {
                    self.error(
                        id,
                        format!(
                            "found no matching overload for '{function}' applied to '({}, {})'",
                            a.name(),
                            b.name()
                        ),
                    );
                }
                Type::Bool
            }
            "_<_"
            | "_<=_"
            | "_>_"
            | "_>=_"
            | "_&&_"
            | "_||_"
            | "!_"
            | "@in"
            | "@not_strictly_false"
            | "startsWith"
            | "endsWith"
            | "contains"
            | "matches"
            | "isGreaterThan"
            | "isLessThan"
            | "has" => Type::Bool,
            "size" | "compareTo" | "asApproximateFloat" | "major" | "minor" | "patch" => {
                match function {
                    "asApproximateFloat" => Type::Double,
                    _ => Type::Int,
                }
            }
            "quantity" => Type::Quantity,
            "string" | "lowerAscii" | "upperAscii" | "trim" | "replace" => Type::String,
            "int" => Type::Int,
            "uint" => Type::Uint,
            "double" => Type::Double,
            "bool" => Type::Bool,
            "_+_" | "_-_" | "_*_" | "_/_" | "_%_" => match args {
                [a, b] if a == b && (a.is_number() || *a == Type::String) => a.clone(),
                _ => Type::Dyn,
            },
            "-_" => args
                .first()
                .filter(|a| a.is_number())
                .cloned()
                .unwrap_or(Type::Dyn),
            "_?_:_" => match args {
                [_, a, b] if a == b => a.clone(),
                _ => Type::Dyn,
            },
            "_[_]" => match args {
                [Type::Map(value), _] => (**value).clone(),
                _ => Type::Dyn,
            },
            _ => {
                let _ = target;
                Type::Dyn
            }
        }
    }
}

/// Names of types an expression may use as values (`type(x) == int`).
fn is_type_name(name: &str) -> bool {
    matches!(
        name,
        "int"
            | "uint"
            | "double"
            | "bool"
            | "string"
            | "bytes"
            | "list"
            | "map"
            | "null_type"
            | "type"
    )
}

/// Syntax errors in upstream's form: each with its position, its line and a caret.
fn syntax_errors(expression: &str, e: &cel::ParseErrors) -> String {
    let errors: Vec<String> = e
        .errors
        .iter()
        .map(|p| {
            let (line, column) = (p.pos.0.max(1) as usize, p.pos.1.max(1) as usize);
            let snippet = expression.lines().nth(line - 1).unwrap_or("");
            format!(
                "ERROR: <input>:{line}:{column}: {}\n | {snippet}\n | {}^",
                p.msg,
                ".".repeat(column - 1)
            )
        })
        .collect();
    if errors.is_empty() {
        return format!("compilation failed: {e}");
    }
    format!("compilation failed: {}", errors.join("\n"))
}

/// Checks device selector `expression`: `Err` with upstream's detail (`compilation failed:
/// ERROR: ...`, or `must evaluate to bool or the unknown type, not string`).
pub fn check_device_selector(expression: &str) -> Result<(), String> {
    let parsed =
        std::panic::catch_unwind(|| cel::parser::Parser::new().parse_with_source_info(expression))
            .map_err(|_| "compilation failed: the expression cannot be parsed".to_string())?;
    let (expr, source) = parsed.map_err(|e| syntax_errors(expression, &e))?;
    let mut checker = Checker {
        source: &source,
        scope: Vec::new(),
        errors: Vec::new(),
    };
    let result = checker.check(&expr);
    if !checker.errors.is_empty() {
        return Err(format!("compilation failed: {}", checker.errors.join("\n")));
    }
    match result {
        Type::Bool | Type::Dyn => Ok(()),
        other => Err(format!(
            "must evaluate to bool or the unknown type, not {}",
            other.name()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn detail(expression: &str) -> Option<String> {
        check_device_selector(expression).err()
    }

    #[test]
    fn selectors_of_known_fields_and_dynamic_values_pass() {
        for ok in [
            "device.driver == 'gpu.example.com'",
            "device.attributes['gpu.example.com'].model == 'a100'",
            "device.attributes['gpu.example.com'].model",
            "device.capacity['gpu.example.com'].memory.compareTo(quantity('1Gi')) >= 0",
            "device.allowMultipleAllocations",
            "device.driver.startsWith('gpu')",
            "size(device.attributes) > 0",
            "'gpu.example.com' in device.attributes",
            "device.attributes.exists(d, d == 'x')",
            "device.attributes['x'].all(k, k != '')",
        ] {
            assert_eq!(detail(ok), None, "{ok}");
        }
    }

    #[test]
    fn mistakes_are_reported_where_upstream_reports_them() {
        assert_eq!(
            detail("device.driver").as_deref(),
            Some("must evaluate to bool or the unknown type, not string")
        );
        assert_eq!(
            detail("1 + 2").as_deref(),
            Some("must evaluate to bool or the unknown type, not int")
        );
        assert_eq!(
            detail("driver == 'x'").as_deref(),
            Some(
                "compilation failed: ERROR: <input>:1:1: undeclared reference to 'driver' (in container '')\n | driver == 'x'\n | ^"
            )
        );
        assert_eq!(
            detail("device.nosuch == 'x'").as_deref(),
            Some(
                "compilation failed: ERROR: <input>:1:7: undefined field 'nosuch'\n | device.nosuch == 'x'\n | ......^"
            )
        );
        assert_eq!(
            detail("device.capacity['x'].memory == 1").as_deref(),
            Some(
                "compilation failed: ERROR: <input>:1:29: found no matching overload for '_==_' applied to '(kubernetes.Quantity, int)'\n | device.capacity['x'].memory == 1\n | ............................^"
            )
        );
        assert_eq!(
            detail("device.driver ==").as_deref(),
            Some(
                "compilation failed: ERROR: <input>:1:17: Syntax error: mismatched input '<EOF>' expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}\n | device.driver ==\n | ................^"
            )
        );
        assert_eq!(
            detail("device.driver == 1").as_deref(),
            Some(
                "compilation failed: ERROR: <input>:1:15: found no matching overload for '_==_' applied to '(string, int)'\n | device.driver == 1\n | ..............^"
            )
        );
    }
}
