//! Label selectors in the upstream string syntax: `a=b`, `a==b`, `a!=b`, `a in (x,y)`,
//! `a notin (x)`, `a`, `!a`, `a>1`, `a<1`, joined by commas (all must hold).

use std::collections::BTreeMap;

use crate::error::{Error, Result};
use crate::validation;

/// How one requirement compares a label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Operator {
    /// The label exists and equals one of the values (`=`, `==`, `in`).
    In(Vec<String>),
    /// The label is absent or differs from every value (`!=`, `notin`).
    NotIn(Vec<String>),
    /// The label exists.
    Exists,
    /// The label does not exist.
    DoesNotExist,
    /// The label exists and, as an integer, is greater.
    Gt(i64),
    /// The label exists and, as an integer, is smaller.
    Lt(i64),
}

/// One requirement of a selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Requirement {
    /// The label key.
    pub key: String,
    /// The comparison.
    pub op: Operator,
}

impl Requirement {
    /// Whether `labels` satisfy this requirement.
    pub fn matches(&self, labels: Option<&BTreeMap<String, String>>) -> bool {
        self.matches_value(labels.and_then(|l| l.get(&self.key)).map(String::as_str))
    }

    /// Whether a label whose value is `value` (`None`: absent) satisfies this requirement.
    pub fn matches_value(&self, value: Option<&str>) -> bool {
        match (&self.op, value) {
            (Operator::Exists, v) => v.is_some(),
            (Operator::DoesNotExist, v) => v.is_none(),
            (Operator::In(set), Some(v)) => set.iter().any(|s| s == v),
            (Operator::In(_), None) => false,
            (Operator::NotIn(set), Some(v)) => !set.iter().any(|s| s == v),
            (Operator::NotIn(_), None) => true,
            (Operator::Gt(n), Some(v)) => v.parse::<i64>().is_ok_and(|v| v > *n),
            (Operator::Lt(n), Some(v)) => v.parse::<i64>().is_ok_and(|v| v < *n),
            (Operator::Gt(_) | Operator::Lt(_), None) => false,
        }
    }
}

/// A parsed label selector; the empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector {
    /// The requirements, all of which must hold.
    pub requirements: Vec<Requirement>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Word(String),
    Eq,
    DoubleEq,
    NotEq,
    Bang,
    Gt,
    Lt,
    Open,
    Close,
    Comma,
}

fn lex(input: &str) -> Result<Vec<Token>> {
    let mut out = Vec::new();
    let mut chars = input.chars().peekable();
    while let Some(&c) = chars.peek() {
        match c {
            c if c.is_whitespace() => {
                chars.next();
            }
            ',' => {
                chars.next();
                out.push(Token::Comma);
            }
            '(' => {
                chars.next();
                out.push(Token::Open);
            }
            ')' => {
                chars.next();
                out.push(Token::Close);
            }
            '>' => {
                chars.next();
                out.push(Token::Gt);
            }
            '<' => {
                chars.next();
                out.push(Token::Lt);
            }
            '=' => {
                chars.next();
                if chars.peek() == Some(&'=') {
                    chars.next();
                    out.push(Token::DoubleEq);
                } else {
                    out.push(Token::Eq);
                }
            }
            '!' => {
                chars.next();
                if chars.peek() == Some(&'=') {
                    chars.next();
                    out.push(Token::NotEq);
                } else {
                    out.push(Token::Bang);
                }
            }
            _ => {
                let mut word = String::new();
                while let Some(&c) = chars.peek() {
                    if c.is_whitespace() || ",()=!<>".contains(c) {
                        break;
                    }
                    word.push(c);
                    chars.next();
                }
                out.push(Token::Word(word));
            }
        }
    }
    Ok(out)
}

fn invalid(reason: impl Into<String>) -> Error {
    Error::InvalidLabelSelector {
        reason: reason.into(),
    }
}

struct Parser {
    tokens: Vec<Token>,
    pos: usize,
}

impl Parser {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn next(&mut self) -> Option<Token> {
        let t = self.tokens.get(self.pos).cloned();
        self.pos += 1;
        t
    }

    fn key(&mut self) -> Result<String> {
        match self.next() {
            Some(Token::Word(w)) => {
                let errs = validation::qualified_name(&w);
                if let Some(e) = errs.first() {
                    return Err(invalid(format!("key {w:?}: {e}")));
                }
                Ok(w)
            }
            other => Err(invalid(format!(
                "expected a label key, found {}",
                describe(other.as_ref())
            ))),
        }
    }

    fn value(&mut self) -> Result<String> {
        match self.peek() {
            Some(Token::Word(_)) => {
                let Some(Token::Word(w)) = self.next() else {
                    unreachable!()
                };
                if let Some(e) = validation::label_value(&w).first() {
                    return Err(invalid(format!("value {w:?}: {e}")));
                }
                Ok(w)
            }
            // An empty value: `a=` or `a in (,x)`.
            Some(Token::Comma | Token::Close) | None => Ok(String::new()),
            other => Err(invalid(format!(
                "expected a label value, found {}",
                describe(other)
            ))),
        }
    }

    fn set(&mut self) -> Result<Vec<String>> {
        if self.next() != Some(Token::Open) {
            return Err(invalid("expected '(' after 'in' or 'notin'"));
        }
        let mut values = vec![self.value()?];
        loop {
            match self.next() {
                Some(Token::Comma) => values.push(self.value()?),
                Some(Token::Close) => return Ok(values),
                other => {
                    return Err(invalid(format!(
                        "expected ',' or ')', found {}",
                        describe(other.as_ref())
                    )));
                }
            }
        }
    }

    fn integer(&mut self) -> Result<i64> {
        match self.next() {
            Some(Token::Word(w)) => w.parse().map_err(|_| {
                invalid(format!(
                    "for 'Gt', 'Lt' operators, the value must be an integer, found {w:?}"
                ))
            }),
            other => Err(invalid(format!(
                "expected an integer, found {}",
                describe(other.as_ref())
            ))),
        }
    }

    fn requirement(&mut self) -> Result<Requirement> {
        if self.peek() == Some(&Token::Bang) {
            self.next();
            let key = self.key()?;
            return Ok(Requirement {
                key,
                op: Operator::DoesNotExist,
            });
        }
        let key = self.key()?;
        let op = match self.peek() {
            None | Some(Token::Comma) => Operator::Exists,
            Some(Token::Eq | Token::DoubleEq) => {
                self.next();
                Operator::In(vec![self.value()?])
            }
            Some(Token::NotEq) => {
                self.next();
                Operator::NotIn(vec![self.value()?])
            }
            Some(Token::Gt) => {
                self.next();
                Operator::Gt(self.integer()?)
            }
            Some(Token::Lt) => {
                self.next();
                Operator::Lt(self.integer()?)
            }
            Some(Token::Word(w)) if w == "in" => {
                self.next();
                Operator::In(self.set()?)
            }
            Some(Token::Word(w)) if w == "notin" => {
                self.next();
                Operator::NotIn(self.set()?)
            }
            other => {
                return Err(invalid(format!(
                    "found {}, expected: in, notin, =, ==, !=, gt, lt",
                    describe(other)
                )));
            }
        };
        Ok(Requirement { key, op })
    }
}

fn describe(token: Option<&Token>) -> String {
    match token {
        None => "end of string".to_string(),
        Some(Token::Word(w)) => format!("{w:?}"),
        Some(Token::Eq) => "'='".into(),
        Some(Token::DoubleEq) => "'=='".into(),
        Some(Token::NotEq) => "'!='".into(),
        Some(Token::Bang) => "'!'".into(),
        Some(Token::Gt) => "'>'".into(),
        Some(Token::Lt) => "'<'".into(),
        Some(Token::Open) => "'('".into(),
        Some(Token::Close) => "')'".into(),
        Some(Token::Comma) => "','".into(),
    }
}

impl LabelSelector {
    /// Parses the upstream string form; the empty string is the selector that matches all.
    pub fn parse(input: &str) -> Result<Self> {
        let mut parser = Parser {
            tokens: lex(input)?,
            pos: 0,
        };
        let mut requirements = Vec::new();
        if parser.peek().is_none() {
            return Ok(Self::default());
        }
        loop {
            requirements.push(parser.requirement()?);
            match parser.next() {
                None => break,
                Some(Token::Comma) => continue,
                other => {
                    return Err(invalid(format!(
                        "expected ',' between requirements, found {}",
                        describe(other.as_ref())
                    )));
                }
            }
        }
        Ok(Self { requirements })
    }

    /// Reads the structured form objects carry (`matchLabels` and `matchExpressions`); an
    /// unknown operator, or values where none belong, is an error.
    pub fn from_api(
        selector: &k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector,
    ) -> Result<Self> {
        let mut requirements: Vec<Requirement> = selector
            .match_labels
            .iter()
            .flatten()
            .map(|(k, v)| Requirement {
                key: k.clone(),
                op: Operator::In(vec![v.clone()]),
            })
            .collect();
        for e in selector.match_expressions.iter().flatten() {
            let values = e.values.clone().unwrap_or_default();
            let op = match e.operator.as_str() {
                "In" | "NotIn" if values.is_empty() => {
                    return Err(invalid(format!(
                        "{}: values must be non-empty for operator {}",
                        e.key, e.operator
                    )));
                }
                "In" => Operator::In(values),
                "NotIn" => Operator::NotIn(values),
                "Exists" | "DoesNotExist" if !values.is_empty() => {
                    return Err(invalid(format!(
                        "{}: values must be empty for operator {}",
                        e.key, e.operator
                    )));
                }
                "Exists" => Operator::Exists,
                "DoesNotExist" => Operator::DoesNotExist,
                other => return Err(invalid(format!("{other:?} is not a valid operator"))),
            };
            requirements.push(Requirement {
                key: e.key.clone(),
                op,
            });
        }
        Ok(Self { requirements })
    }

    /// Whether the selector matches everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Whether `labels` satisfy every requirement.
    pub fn matches(&self, labels: Option<&BTreeMap<String, String>>) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }

    /// Whether the labels `label` looks up satisfy every requirement.
    pub fn matches_lookup<'a>(&self, label: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.requirements
            .iter()
            .all(|r| r.matches_value(label(&r.key)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_structured_form_reads_labels_and_expressions() {
        use k8s_openapi::apimachinery::pkg::apis::meta::v1 as api;
        let selector = api::LabelSelector {
            match_labels: Some([("app".to_string(), "web".to_string())].into()),
            match_expressions: Some(vec![api::LabelSelectorRequirement {
                key: "tier".into(),
                operator: "NotIn".into(),
                values: Some(vec!["db".into()]),
            }]),
        };
        let s = LabelSelector::from_api(&selector).unwrap();
        assert!(s.matches(Some(&labels(&[("app", "web")]))));
        assert!(!s.matches(Some(&labels(&[("app", "web"), ("tier", "db")]))));
        assert!(!s.matches(Some(&labels(&[("app", "api")]))));
        assert!(
            LabelSelector::from_api(&Default::default())
                .unwrap()
                .is_empty()
        );
        let bad = api::LabelSelector {
            match_expressions: Some(vec![api::LabelSelectorRequirement {
                key: "tier".into(),
                operator: "Like".into(),
                values: None,
            }]),
            ..Default::default()
        };
        assert!(LabelSelector::from_api(&bad).is_err());
    }

    #[test]
    fn every_operator() {
        let l = labels(&[("tier", "fast"), ("zone", "a"), ("size", "10")]);
        let yes = [
            "",
            "tier=fast",
            "tier==fast",
            "tier!=slow",
            "missing!=x",
            "tier in (fast, slow)",
            "zone notin (b,c)",
            "missing notin (a)",
            "tier",
            "!missing",
            "size>5",
            "size<11",
            "tier=fast,zone=a",
            " tier = fast , zone in ( a ) ",
        ];
        for s in yes {
            assert!(LabelSelector::parse(s).unwrap().matches(Some(&l)), "{s}");
        }
        let no = [
            "tier=slow",
            "tier!=fast",
            "tier in (slow)",
            "zone notin (a)",
            "missing",
            "!tier",
            "size>10",
            "missing>1",
            "tier=fast,zone=b",
        ];
        for s in no {
            assert!(!LabelSelector::parse(s).unwrap().matches(Some(&l)), "{s}");
        }
        assert!(LabelSelector::parse("!tier").unwrap().matches(None));
    }

    #[test]
    fn malformed_selectors_are_errors() {
        for s in [
            "tier in fast",
            "tier in (a",
            "=x",
            "a b",
            "bad key=1",
            "a=b=c",
            "a>x",
            "a=@@",
            "a,",
            "x notin",
        ] {
            assert!(LabelSelector::parse(s).is_err(), "{s}");
        }
    }
}
