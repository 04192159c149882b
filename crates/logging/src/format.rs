//! Log lines in klog's text form or upstream's JSON form.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::Context;

use crate::sink::Sinks;
use crate::{BacktraceAt, Severity};

/// How lines are written.
#[derive(Debug, Clone, Default)]
pub(crate) struct Format {
    pub json: bool,
    pub skip_headers: bool,
    pub add_dir_header: bool,
    pub backtrace_at: Option<BacktraceAt>,
    pub sanitize: bool,
}

/// The tracing layer that formats events and hands them to the sinks.
pub(crate) struct KlogLayer {
    format: Format,
    sinks: Arc<Sinks>,
    pid: u32,
}

impl KlogLayer {
    pub fn new(format: Format, sinks: Arc<Sinks>) -> Self {
        Self {
            format,
            sinks,
            pid: std::process::id(),
        }
    }
}

impl<S: Subscriber> tracing_subscriber::Layer<S> for KlogLayer {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        let meta = event.metadata();
        let mut fields = Fields {
            sanitize: self.format.sanitize,
            ..Fields::default()
        };
        event.record(&mut fields);
        let severity = Severity::of(meta.level());
        let file = meta.file().unwrap_or("???");
        let short = file.rsplit('/').next().unwrap_or(file);
        let line_no = meta.line().unwrap_or(0);
        let backtrace = self
            .format
            .backtrace_at
            .as_ref()
            .filter(|at| at.line == line_no && at.file == short)
            .map(|_| std::backtrace::Backtrace::force_capture().to_string());
        let shown_file = if self.format.add_dir_header {
            file
        } else {
            short
        };
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let mut line = String::with_capacity(160);
        if self.format.json {
            let mut doc = serde_json::Map::new();
            doc.insert("ts".into(), serde_json::json!(now.as_secs_f64()));
            doc.insert(
                "caller".into(),
                serde_json::Value::String(format!("{shown_file}:{line_no}")),
            );
            doc.insert("msg".into(), serde_json::Value::String(fields.message));
            if severity != Severity::Error {
                doc.insert("v".into(), serde_json::json!(klog_v(meta.level())));
            }
            for (key, value) in fields.json {
                doc.entry(key).or_insert(value);
            }
            if let Some(trace) = backtrace {
                doc.insert("stacktrace".into(), serde_json::Value::String(trace));
            }
            line.push_str(&serde_json::Value::Object(doc).to_string());
            line.push('\n');
        } else {
            if !self.format.skip_headers {
                let time = jiff::Timestamp::from_second(now.as_secs() as i64)
                    .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
                    .to_zoned(jiff::tz::TimeZone::UTC);
                let _ = write!(
                    line,
                    "{}{:02}{:02} {:02}:{:02}:{:02}.{:06} {:>7} {}:{}] ",
                    ['I', 'W', 'E'][severity as usize],
                    time.month(),
                    time.day(),
                    time.hour(),
                    time.minute(),
                    time.second(),
                    now.subsec_micros(),
                    self.pid,
                    shown_file,
                    line_no,
                );
            }
            let _ = write!(line, "{:?}{}", fields.message, fields.text);
            line.push('\n');
            if let Some(trace) = backtrace {
                line.push_str(&trace);
                if !trace.ends_with('\n') {
                    line.push('\n');
                }
            }
        }
        self.sinks.write(severity, line.as_bytes());
    }
}

/// klog's verbosity of an event level (for JSON's `v`).
fn klog_v(level: &Level) -> u8 {
    match *level {
        Level::DEBUG => 4,
        Level::TRACE => 6,
        _ => 0,
    }
}

/// Field names whose values `--experimental-logging-sanitization` keeps out.
fn sensitive(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    [
        "password",
        "passwd",
        "token",
        "secret",
        "credential",
        "authorization",
        "bearer",
    ]
    .iter()
    .any(|word| name.contains(word))
        || name == "key"
        || name.ends_with("_key")
        || name.ends_with("key_data")
}

const REDACTED: &str = "[redacted]";

/// An event's message and fields, in both forms.
#[derive(Default)]
struct Fields {
    sanitize: bool,
    message: String,
    /// ` key=value` pairs for the text form.
    text: String,
    json: Vec<(String, serde_json::Value)>,
}

impl Fields {
    fn push(&mut self, field: &Field, text: String, json: serde_json::Value) {
        let name = field.name();
        if self.sanitize && sensitive(name) {
            let _ = write!(self.text, " {name}={REDACTED:?}");
            self.json.push((name.to_string(), REDACTED.into()));
            return;
        }
        let _ = write!(self.text, " {name}={text}");
        self.json.push((name.to_string(), json));
    }
}

impl Visit for Fields {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message = value.to_string();
        } else {
            self.push(field, format!("{value:?}"), value.into());
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let shown = format!("{value:?}");
        if field.name() == "message" {
            self.message = shown;
            return;
        }
        // Bare when unambiguous (numbers, addresses, names), quoted otherwise.
        let text = if shown.is_empty()
            || shown
                .chars()
                .any(|c| c.is_whitespace() || c == '"' || c == '=')
        {
            format!("{shown:?}")
        } else {
            shown.clone()
        };
        self.push(field, text, shown.into());
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.push(field, value.to_string(), value.into());
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.push(field, value.to_string(), value.into());
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        self.push(field, value.to_string(), value.into());
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.push(field, value.to_string(), value.into());
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        let shown = value.to_string();
        self.push(field, format!("{shown:?}"), shown.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sensitive_names() {
        for name in [
            "token",
            "bearer_token",
            "password",
            "client_secret",
            "key",
            "private_key",
            "Authorization",
        ] {
            assert!(sensitive(name), "{name}");
        }
        for name in ["keys_total", "monkey", "uri", "user"] {
            assert!(!sensitive(name), "{name}");
        }
    }
}
