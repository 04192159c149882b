//! The columns of the server-side Tables kubectl prints (`kubectl get`). Each resource declares
//! its columns in its [`ResourceDescriptor`](crate::ResourceDescriptor); a resource without
//! columns gets the default table (Name, Created At).

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::Value;

/// Computes one cell from an object's JSON; `now` is the Unix time in seconds (for ages).
pub type CellFn = fn(obj: &Value, now: i64) -> Value;

/// How a column computes its cells.
#[derive(Clone)]
pub enum Cell {
    /// A function of the object (the built-in resources' columns).
    Fn(CellFn),
    /// The value at a JSONPath (a custom resource's `additionalPrinterColumns`).
    Path(Arc<JsonPath>),
}

/// One column of a resource's table.
#[derive(Clone)]
pub struct Column {
    /// The header, e.g. `Provisioner`.
    pub name: Cow<'static, str>,
    /// The OpenAPI type of the cells: `string`, `integer`, `number`, `boolean` or `date`.
    pub type_: Cow<'static, str>,
    /// An OpenAPI format hint, e.g. `name` for the column identifying the object.
    pub format: Cow<'static, str>,
    /// What the column shows.
    pub description: Cow<'static, str>,
    /// 0 for the columns always shown, higher for those of `-o wide`.
    pub priority: i32,
    /// The cell of an object.
    pub cell: Cell,
}

impl Column {
    /// A column shown by default.
    pub const fn new(
        name: &'static str,
        type_: &'static str,
        description: &'static str,
        cell: CellFn,
    ) -> Self {
        Self {
            name: Cow::Borrowed(name),
            type_: Cow::Borrowed(type_),
            format: Cow::Borrowed(""),
            description: Cow::Borrowed(description),
            priority: 0,
            cell: Cell::Fn(cell),
        }
    }

    /// A column of cells found at `path` (a custom resource's printer column).
    pub fn at_path(
        name: String,
        type_: String,
        format: String,
        description: String,
        priority: i32,
        path: JsonPath,
    ) -> Self {
        Self {
            name: Cow::Owned(name),
            type_: Cow::Owned(type_),
            format: Cow::Owned(format),
            description: Cow::Owned(description),
            priority,
            cell: Cell::Path(Arc::new(path)),
        }
    }

    /// The cell of `obj` at `now` (Unix seconds).
    pub fn cell(&self, obj: &Value, now: i64) -> Value {
        match &self.cell {
            Cell::Fn(f) => f(obj, now),
            Cell::Path(path) => path.cell(obj),
        }
    }

    /// The same column, shown only with `-o wide`.
    pub const fn wide(mut self) -> Self {
        self.priority = 1;
        self
    }

    /// The `Name` column.
    pub const fn name() -> Self {
        Self {
            name: Cow::Borrowed("Name"),
            type_: Cow::Borrowed("string"),
            format: Cow::Borrowed("name"),
            description: Cow::Borrowed("The object's name, unique within its namespace."),
            priority: 0,
            cell: Cell::Fn(|obj, _| obj.pointer("/metadata/name").cloned().unwrap_or_default()),
        }
    }

    /// The `Age` column: the time since creation, as kubectl prints it.
    pub const fn age() -> Self {
        Self::new(
            "Age",
            "string",
            "How long ago the object was created.",
            |obj, now| Value::String(age(obj, now)),
        )
    }

    /// The columns of a resource that declares none: Name and Created At.
    pub fn defaults() -> Vec<Column> {
        vec![
            Self::name(),
            Self::new(
                "Created At",
                "date",
                "When the object was created.",
                |obj, _| {
                    obj.pointer("/metadata/creationTimestamp")
                        .cloned()
                        .unwrap_or_default()
                },
            ),
        ]
    }
}

impl std::fmt::Debug for Column {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Column")
            .field("name", &self.name)
            .field("type", &self.type_)
            .field("priority", &self.priority)
            .finish_non_exhaustive()
    }
}

impl PartialEq for Column {
    /// Columns are equal when they print the same header the same way (the cell function
    /// is not compared).
    fn eq(&self, other: &Self) -> bool {
        (&self.name, &self.type_, &self.format, self.priority)
            == (&other.name, &other.type_, &other.format, other.priority)
    }
}

impl Eq for Column {}

/// The object's age at `now` (Unix seconds), or `<unknown>` without a creation time.
pub fn age(obj: &Value, now: i64) -> String {
    since(obj.pointer("/metadata/creationTimestamp"), now)
}

/// An RFC 3339 timestamp as seconds since the epoch.
pub fn epoch_seconds(timestamp: Option<&Value>) -> Option<i64> {
    timestamp
        .and_then(Value::as_str)
        .and_then(|s| s.parse::<jiff::Timestamp>().ok())
        .map(|t| t.as_second())
}

/// The time from an RFC 3339 `timestamp` to `now`, as kubectl prints ages; `<unknown>` when
/// absent or unreadable.
pub fn since(timestamp: Option<&Value>, now: i64) -> String {
    let Some(ts) = timestamp
        .and_then(Value::as_str)
        .and_then(|s| s.parse::<jiff::Timestamp>().ok())
    else {
        return "<unknown>".into();
    };
    human_duration(now - ts.as_second())
}

/// A duration in seconds the way kubectl shows ages: `45s`, `5m10s`, `3h`, `2d5h`, `3y`; more
/// precision for short spans, less for long ones.
pub fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        return "<invalid>".into();
    }
    let s = seconds.max(0);
    if s < 120 {
        return format!("{s}s");
    }
    let minutes = s / 60;
    if minutes < 10 {
        return match s % 60 {
            0 => format!("{minutes}m"),
            rest => format!("{minutes}m{rest}s"),
        };
    }
    if minutes < 180 {
        return format!("{minutes}m");
    }
    let hours = s / 3600;
    if hours < 8 {
        return match minutes % 60 {
            0 => format!("{hours}h"),
            rest => format!("{hours}h{rest}m"),
        };
    }
    if hours < 48 {
        return format!("{hours}h");
    }
    if hours < 24 * 8 {
        return match hours % 24 {
            0 => format!("{}d", hours / 24),
            rest => format!("{}d{rest}h", hours / 24),
        };
    }
    if hours < 24 * 365 * 2 {
        return format!("{}d", hours / 24);
    }
    let years = hours / 24 / 365;
    if hours < 24 * 365 * 8 {
        return match (hours / 24) % 365 {
            0 => format!("{years}y"),
            days => format!("{years}y{days}d"),
        };
    }
    format!("{years}y")
}

/// The string at `pointer`, or `default` when absent.
pub fn text_or(obj: &Value, pointer: &str, default: &str) -> Value {
    Value::String(
        obj.pointer(pointer)
            .and_then(Value::as_str)
            .unwrap_or(default)
            .to_string(),
    )
}

/// The value at `pointer`, or `<none>` as kubectl prints missing values.
pub fn or_none(obj: &Value, pointer: &str) -> Value {
    match obj.pointer(pointer) {
        Some(Value::String(s)) if !s.is_empty() => Value::String(s.clone()),
        Some(v @ (Value::Number(_) | Value::Bool(_))) => Value::String(v.to_string()),
        _ => Value::String("<none>".into()),
    }
}

/// The number of entries of the object or array at `pointer` (0 when absent).
pub fn count(obj: &Value, pointer: &str) -> Value {
    Value::from(match obj.pointer(pointer) {
        Some(Value::Object(m)) => m.len(),
        Some(Value::Array(a)) => a.len(),
        _ => 0,
    })
}

/// A JSONPath as printer columns use them: fields (`.spec.replicas`), indexes
/// (`.spec.containers[0].image`), every item (`[*]`) and equality filters
/// (`.status.conditions[?(@.type=="Ready")].status`), optionally in braces.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct JsonPath(Vec<Step>);

/// One step of a [`JsonPath`].
#[derive(Debug, Clone, PartialEq, Eq)]
enum Step {
    Field(String),
    Index(usize),
    All,
    Filter { field: Vec<String>, value: String },
}

impl JsonPath {
    /// Parses `text`; the error says what is wrong.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        let text = text
            .strip_prefix('{')
            .and_then(|t| t.strip_suffix('}'))
            .unwrap_or(text);
        if !text.starts_with('.') {
            return Err("must be a simple json path starting with .".into());
        }
        let mut steps = Vec::new();
        let mut rest = text;
        while !rest.is_empty() {
            if let Some(r) = rest.strip_prefix('.') {
                let end = r.find(['.', '[']).unwrap_or(r.len());
                if end == 0 {
                    return Err(format!("unexpected character after '.' in {text:?}"));
                }
                steps.push(Step::Field(r[..end].to_string()));
                rest = &r[end..];
            } else if let Some(r) = rest.strip_prefix('[') {
                let end = r
                    .find(']')
                    .ok_or_else(|| format!("unclosed [ in {text:?}"))?;
                let inside = &r[..end];
                rest = &r[end + 1..];
                if inside == "*" {
                    steps.push(Step::All);
                } else if let Ok(i) = inside.parse::<usize>() {
                    steps.push(Step::Index(i));
                } else if let Some(filter) = inside
                    .strip_prefix("?(@.")
                    .and_then(|f| f.strip_suffix(')'))
                {
                    let (field, value) = filter
                        .split_once("==")
                        .ok_or_else(|| format!("unsupported filter in {text:?}"))?;
                    let value = value.trim().trim_matches(|c| c == '"' || c == '\'');
                    steps.push(Step::Filter {
                        field: field.trim().split('.').map(str::to_string).collect(),
                        value: value.to_string(),
                    });
                } else {
                    return Err(format!("unsupported subscript [{inside}] in {text:?}"));
                }
            } else {
                return Err(format!("unexpected character in {text:?}"));
            }
        }
        Ok(Self(steps))
    }

    /// Every value at the path.
    pub fn find<'a>(&self, root: &'a Value) -> Vec<&'a Value> {
        let mut current = vec![root];
        for step in &self.0 {
            let mut next = Vec::new();
            for v in current {
                match step {
                    Step::Field(f) => next.extend(v.get(f)),
                    Step::Index(i) => next.extend(v.get(*i)),
                    Step::All => match v {
                        Value::Array(items) => next.extend(items),
                        Value::Object(map) => next.extend(map.values()),
                        _ => {}
                    },
                    Step::Filter { field, value } => {
                        for item in v.as_array().into_iter().flatten() {
                            let mut found = Some(item);
                            for f in field {
                                found = found.and_then(|x| x.get(f));
                            }
                            let matches = match found {
                                Some(Value::String(s)) => s == value,
                                Some(other) => {
                                    *other
                                        == serde_json::from_str::<Value>(value)
                                            .unwrap_or(Value::Null)
                                }
                                None => false,
                            };
                            if matches {
                                next.push(item);
                            }
                        }
                    }
                }
            }
            current = next;
        }
        current
    }

    /// The cell of `obj`: the value found (several joined with commas), `null` when none.
    pub fn cell(&self, obj: &Value) -> Value {
        let found = self.find(obj);
        match found.as_slice() {
            [] => Value::Null,
            [one] => match one {
                Value::Object(_) | Value::Array(_) => Value::String(one.to_string()),
                v => (*v).clone(),
            },
            many => Value::String(
                many.iter()
                    .map(|v| match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(","),
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_print_as_kubectl_prints_them() {
        let cases = [
            (0, "0s"),
            (-1, "0s"),
            (-5, "<invalid>"),
            (119, "119s"),
            (120, "2m"),
            (310, "5m10s"),
            (600, "10m"),
            (179 * 60, "179m"),
            (3 * 3600, "3h"),
            (5 * 3600 + 30 * 60, "5h30m"),
            (47 * 3600, "47h"),
            (2 * 86400 + 5 * 3600, "2d5h"),
            (8 * 86400, "8d"),
            (730 * 86400, "2y"),
            (3 * 365 * 86400 + 10 * 86400, "3y10d"),
            (9 * 365 * 86400, "9y"),
        ];
        for (secs, text) in cases {
            assert_eq!(human_duration(secs), text, "{secs}s");
        }
        let obj = serde_json::json!({"metadata": {"creationTimestamp": "2026-11-22T07:00:00Z"}});
        assert_eq!(age(&obj, 1_795_330_800 + 65), "65s");
        assert_eq!(age(&serde_json::json!({}), 0), "<unknown>");
    }

    #[test]
    fn json_paths_find_fields_items_and_filtered_items() {
        let obj = serde_json::json!({
            "spec": {"replicas": 3, "containers": [{"image": "a"}, {"image": "b"}]},
            "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}]}
        });
        let cell = |p: &str| JsonPath::parse(p).unwrap().cell(&obj);
        assert_eq!(cell(".spec.replicas"), 3);
        assert_eq!(cell("{.spec.containers[1].image}"), "b");
        assert_eq!(cell(".spec.containers[*].image"), "a,b");
        assert_eq!(
            cell(".status.conditions[?(@.type==\"Ready\")].status"),
            "True"
        );
        assert_eq!(cell(".spec.missing"), Value::Null);
        assert!(JsonPath::parse("spec.replicas").is_err());
        assert!(JsonPath::parse(".spec[").is_err());
    }
}
