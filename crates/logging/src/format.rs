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

/// Per-thread buffers reused across events: the line, the fields, the message.
#[derive(Default)]
struct Buffers {
    line: String,
    fields: String,
    message: String,
}

thread_local! {
    static BUFFERS: std::cell::RefCell<Buffers> = std::cell::RefCell::new(Buffers::default());
}

impl<S: Subscriber> tracing_subscriber::Layer<S> for KlogLayer {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        BUFFERS.with(|buffers| match buffers.try_borrow_mut() {
            Ok(mut buffers) => self.format(event, &mut buffers),
            // An event logged while formatting another: fresh buffers.
            Err(_) => self.format(event, &mut Buffers::default()),
        });
    }
}

impl KlogLayer {
    /// Formats `event` with `buffers` and writes the line out.
    fn format(&self, event: &Event<'_>, buffers: &mut Buffers) {
        let Buffers {
            line: out,
            fields: tail,
            message,
        } = buffers;
        out.clear();
        tail.clear();
        message.clear();
        let meta = event.metadata();
        let severity = Severity::of(meta.level());
        let file = meta.file().unwrap_or("???");
        let short = file.rsplit('/').next().unwrap_or(file);
        let line_no = meta.line().unwrap_or(0);
        let shown_file = if self.format.add_dir_header {
            file
        } else {
            short
        };
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let json = self.format.json;
        event.record(&mut Fields {
            json,
            sanitize: self.format.sanitize,
            out: tail,
            message,
        });
        let backtrace = self
            .format
            .backtrace_at
            .as_ref()
            .filter(|at| at.line == line_no && at.file == short)
            .map(|_| std::backtrace::Backtrace::force_capture().to_string());
        if json {
            let _ = write!(
                out,
                "{{\"ts\":{}.{:06},\"caller\":\"",
                now.as_secs(),
                now.subsec_micros()
            );
            escape_json(out, shown_file);
            let _ = write!(out, ":{line_no}\",\"msg\":\"");
            escape_json(out, message);
            out.push('"');
            if severity != Severity::Error {
                let _ = write!(out, ",\"v\":{}", klog_v(meta.level()));
            }
            out.push_str(tail);
            if let Some(trace) = backtrace {
                out.push_str(",\"stacktrace\":\"");
                escape_json(out, &trace);
                out.push('"');
            }
            out.push_str("}\n");
        } else {
            if !self.format.skip_headers {
                let (month, day, hour, minute, second) = civil_utc(now.as_secs());
                let _ = write!(
                    out,
                    "{}{month:02}{day:02} {hour:02}:{minute:02}:{second:02}.{:06} {:>7} {shown_file}:{line_no}] ",
                    ['I', 'W', 'E'][severity as usize],
                    now.subsec_micros(),
                    self.pid,
                );
            }
            let _ = write!(out, "{message:?}");
            out.push_str(tail);
            out.push('\n');
            if let Some(trace) = backtrace {
                out.push_str(&trace);
                if !trace.ends_with('\n') {
                    out.push('\n');
                }
            }
        }
        self.sinks.write(severity, out.as_bytes());
    }
}

/// Month, day, hour, minute and second (UTC) of a Unix time, without a time-zone database
/// (the civil-from-days algorithm).
fn civil_utc(secs: u64) -> (u32, u32, u32, u32, u32) {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (
        month,
        day,
        (rem / 3600) as u32,
        (rem / 60 % 60) as u32,
        (rem % 60) as u32,
    )
}

/// Appends `s` as the inside of a JSON string.
fn escape_json(out: &mut String, s: &str) {
    let _ = JsonEscaper(out).write_str(s);
}

/// A `fmt::Write` that escapes what passes through it for a JSON string.
struct JsonEscaper<'a>(&'a mut String);

impl std::fmt::Write for JsonEscaper<'_> {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        let mut start = 0;
        for (i, b) in s.bytes().enumerate() {
            let escaped = match b {
                b'"' => "\\\"",
                b'\\' => "\\\\",
                b'\n' => "\\n",
                b'\r' => "\\r",
                b'\t' => "\\t",
                0..=0x1f => "",
                _ => continue,
            };
            self.0.push_str(&s[start..i]);
            if escaped.is_empty() {
                let _ = write!(self.0, "\\u{b:04x}");
            } else {
                self.0.push_str(escaped);
            }
            start = i + 1;
        }
        self.0.push_str(&s[start..]);
        Ok(())
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
    let contains = |word: &str| {
        name.as_bytes()
            .windows(word.len())
            .any(|w| w.eq_ignore_ascii_case(word.as_bytes()))
    };
    let ends_with = |word: &str| {
        name.len() >= word.len()
            && name.as_bytes()[name.len() - word.len()..].eq_ignore_ascii_case(word.as_bytes())
    };
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
    .any(|word| contains(word))
        || name.eq_ignore_ascii_case("key")
        || ends_with("_key")
        || ends_with("key_data")
}

const REDACTED: &str = "[redacted]";

/// Writes an event's fields, in the text (` key=value`) or JSON (`,"key":value`) form, and
/// its message.
struct Fields<'a> {
    json: bool,
    sanitize: bool,
    out: &'a mut String,
    message: &'a mut String,
}

impl Fields<'_> {
    /// Writes the key; false when the value must be left out (sanitized).
    fn key(&mut self, field: &Field) -> bool {
        let name = field.name();
        if self.json {
            self.out.push_str(",\"");
            escape_json(self.out, name);
            self.out.push_str("\":");
        } else {
            self.out.push(' ');
            self.out.push_str(name);
            self.out.push('=');
        }
        if self.sanitize && sensitive(name) {
            self.out.push('"');
            self.out.push_str(REDACTED);
            self.out.push('"');
            return false;
        }
        true
    }

    /// A number or boolean: bare in both forms.
    fn bare(&mut self, field: &Field, value: impl std::fmt::Display) {
        if self.key(field) {
            let _ = write!(self.out, "{value}");
        }
    }
}

impl Visit for Fields<'_> {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == "message" {
            self.message.push_str(value);
        } else if self.key(field) {
            if self.json {
                self.out.push('"');
                escape_json(self.out, value);
                self.out.push('"');
            } else {
                let _ = write!(self.out, "{value:?}");
            }
        }
    }

    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.message, "{value:?}");
            return;
        }
        if !self.key(field) {
            return;
        }
        if self.json {
            self.out.push('"');
            let _ = write!(JsonEscaper(self.out), "{value:?}");
            self.out.push('"');
            return;
        }
        // Bare when unambiguous (numbers, addresses, names), quoted otherwise.
        let at = self.out.len();
        let _ = write!(self.out, "{value:?}");
        let shown = &self.out[at..];
        if shown.is_empty()
            || shown
                .chars()
                .any(|c| c.is_whitespace() || c == '"' || c == '=')
        {
            let quoted = format!("{shown:?}");
            self.out.truncate(at);
            self.out.push_str(&quoted);
        }
    }

    fn record_i64(&mut self, field: &Field, value: i64) {
        self.bare(field, value);
    }

    fn record_u64(&mut self, field: &Field, value: u64) {
        self.bare(field, value);
    }

    fn record_f64(&mut self, field: &Field, value: f64) {
        if value.is_finite() {
            self.bare(field, value);
        } else if self.key(field) {
            let _ = write!(self.out, "\"{value}\"");
        }
    }

    fn record_bool(&mut self, field: &Field, value: bool) {
        self.bare(field, value);
    }

    fn record_error(&mut self, field: &Field, value: &(dyn std::error::Error + 'static)) {
        if self.key(field) {
            if self.json {
                self.out.push('"');
                let _ = write!(JsonEscaper(self.out), "{value}");
                self.out.push('"');
            } else {
                let shown = value.to_string();
                let _ = write!(self.out, "{shown:?}");
            }
        }
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

    #[test]
    fn civil_time() {
        // 2026-11-23 18:53:09 UTC.
        assert_eq!(civil_utc(1_795_459_989), (11, 23, 18, 53, 9));
        assert_eq!(civil_utc(0), (1, 1, 0, 0, 0));
        // 2024-02-29 (a leap day) 12:00:00.
        assert_eq!(civil_utc(1_709_208_000), (2, 29, 12, 0, 0));
    }

    #[test]
    fn json_escaping() {
        let mut out = String::new();
        escape_json(&mut out, "a\"b\\c\nd\u{1}é");
        let parsed: String = serde_json::from_str(&format!("\"{out}\"")).unwrap();
        assert_eq!(parsed, "a\"b\\c\nd\u{1}é");
    }
}
