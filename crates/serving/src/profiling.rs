//! `/debug/pprof/`: CPU profiles in the pprof format (gzip-compressed `profile.proto`, what
//! `go tool pprof`, Pyroscope, Parca and speedscope read), the command line, and an index.
//!
//! Samples come from the `pprof` crate's SIGPROF sampler, which runs only while a profile
//! is being taken. Go's other profiles (heap, goroutine, block, mutex, ...) have no Rust
//! counterpart; asking for them gets a 404 that says so.

use std::collections::HashMap;
use std::io::Write as _;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use http::StatusCode;

/// The longest CPU profile served (upstream refuses profiles longer than its write timeout).
pub const MAX_PROFILE: Duration = Duration::from_secs(600);

/// Samples per second.
const FREQUENCY: i32 = 100;

/// A response to a `/debug/pprof/` request.
#[derive(Debug)]
pub struct Answer {
    /// The status.
    pub status: StatusCode,
    /// The Content-Type.
    pub content_type: &'static str,
    /// The body.
    pub body: Vec<u8>,
}

impl Answer {
    /// The answer as an HTTP response.
    pub fn into_response(self) -> http::Response<http_body_util::Full<bytes::Bytes>> {
        let mut resp =
            http::Response::new(http_body_util::Full::new(bytes::Bytes::from(self.body)));
        *resp.status_mut() = self.status;
        resp.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static(self.content_type),
        );
        resp
    }

    fn text(status: StatusCode, body: impl Into<String>) -> Self {
        Self {
            status,
            content_type: "text/plain; charset=utf-8",
            body: body.into().into_bytes(),
        }
    }
}

/// Answers `path` (starting with `/debug/pprof`) with `query` (without `?`).
pub async fn answer(path: &str, query: &str) -> Answer {
    let name = path
        .strip_prefix("/debug/pprof")
        .unwrap_or(path)
        .trim_matches('/');
    match name {
        "" => Answer {
            status: StatusCode::OK,
            content_type: "text/html; charset=utf-8",
            body: INDEX.as_bytes().to_vec(),
        },
        "cmdline" => {
            let args: Vec<String> = std::env::args().collect();
            Answer::text(StatusCode::OK, args.join("\0"))
        }
        "profile" => {
            let seconds = query
                .split('&')
                .filter_map(|p| p.split_once('='))
                .find(|(k, _)| *k == "seconds")
                .map(|(_, v)| v);
            let duration = match seconds {
                None => Duration::from_secs(30),
                Some(text) => match text.parse::<u64>() {
                    Ok(0) => Duration::from_secs(30),
                    Ok(s) if Duration::from_secs(s) <= MAX_PROFILE => Duration::from_secs(s),
                    Ok(s) => {
                        return Answer::text(
                            StatusCode::BAD_REQUEST,
                            format!(
                                "profile duration {s}s exceeds the limit of {}s\n",
                                MAX_PROFILE.as_secs()
                            ),
                        );
                    }
                    Err(_) => {
                        return Answer::text(
                            StatusCode::BAD_REQUEST,
                            format!("seconds={text:?} is not a number of seconds\n"),
                        );
                    }
                },
            };
            match cpu_profile(duration).await {
                Ok(body) => Answer {
                    status: StatusCode::OK,
                    content_type: "application/octet-stream",
                    body,
                },
                Err(message) => Answer::text(StatusCode::INTERNAL_SERVER_ERROR, message),
            }
        }
        "heap" | "allocs" | "goroutine" | "block" | "mutex" | "threadcreate" | "trace" => {
            Answer::text(
                StatusCode::NOT_FOUND,
                format!(
                    "the {name} profile is a Go runtime profile with no counterpart in Capstan; \
                     /debug/pprof/profile serves CPU profiles\n"
                ),
            )
        }
        _ => Answer::text(StatusCode::NOT_FOUND, "Unknown profile\n"),
    }
}

const INDEX: &str = "<html><head><title>/debug/pprof/</title></head><body>\n\
<p>/debug/pprof/</p>\n\
<p>Profile descriptions:</p>\n<ul>\n\
<li><div><a href=\"cmdline\">cmdline</a></div><div>The command line of the program, arguments separated by NUL bytes.</div></li>\n\
<li><div><a href=\"profile\">profile</a></div><div>CPU profile (pprof format). Set the duration with the seconds GET parameter (default 30); open it with go tool pprof.</div></li>\n\
</ul>\n</body></html>\n";

/// Only one CPU profile runs at a time (the sampler is process-wide).
static RUNNING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// Samples the whole process for `duration` and returns the gzip-compressed pprof profile.
pub async fn cpu_profile(duration: Duration) -> Result<Vec<u8>, String> {
    let Ok(_running) = RUNNING.try_lock() else {
        return Err("a CPU profile is already being taken; try again when it ends\n".into());
    };
    tokio::task::spawn_blocking(move || sample(duration))
        .await
        .map_err(|e| format!("the CPU profiler failed: {e}\n"))?
}

/// Runs the sampler for `duration` on this (blocking) thread.
fn sample(duration: Duration) -> Result<Vec<u8>, String> {
    let started = SystemTime::now();
    let guard = pprof::ProfilerGuardBuilder::default()
        .frequency(FREQUENCY)
        .blocklist(&["libc", "libgcc", "pthread", "vdso"])
        .build()
        .map_err(|e| format!("starting the CPU profiler: {e}\n"))?;
    std::thread::sleep(duration);
    let report = guard
        .report()
        .build()
        .map_err(|e| format!("collecting the CPU profile: {e}\n"))?;
    drop(guard);
    let elapsed = started.elapsed().unwrap_or(duration);
    let samples = report.data.iter().map(|(frames, count)| {
        let stack = frames
            .frames
            .iter()
            .map(|frame| {
                frame
                    .iter()
                    .map(|symbol| Symbol {
                        name: symbol.name(),
                        file: symbol.filename().into_owned(),
                        line: symbol.lineno(),
                    })
                    .collect()
            })
            .collect();
        (stack, frames.thread_name.clone(), *count as i64)
    });
    let profile = encode_profile(samples, started, elapsed, FREQUENCY);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&profile)
        .and_then(|()| gz.finish())
        .map_err(|e| format!("compressing the CPU profile: {e}\n"))
}

/// One symbol of a stack frame (several when functions were inlined, innermost first).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Symbol {
    /// The demangled function name.
    pub name: String,
    /// The source file, when known.
    pub file: String,
    /// The line, 0 when unknown.
    pub line: u32,
}

/// A stack, leaf frame first, each frame its symbols.
pub type Stack = Vec<Vec<Symbol>>;

/// Encodes samples (stack, thread name, count) as a `perftools.profiles.Profile` message
/// with upstream's CPU sample types: `samples/count` and `cpu/nanoseconds`.
pub fn encode_profile(
    samples: impl IntoIterator<Item = (Stack, String, i64)>,
    started: SystemTime,
    duration: Duration,
    frequency: i32,
) -> Vec<u8> {
    let period = 1_000_000_000 / i64::from(frequency.max(1));
    let mut strings = Strings::default();
    let mut functions: HashMap<(String, String), u64> = HashMap::new();
    let mut locations: HashMap<Vec<(u64, u32)>, u64> = HashMap::new();
    let mut out = Vec::new();
    // sample_type (1): samples/count, cpu/nanoseconds.
    for (kind, unit) in [("samples", "count"), ("cpu", "nanoseconds")] {
        let value_type = value_type(&mut strings, kind, unit);
        message(&mut out, 1, &value_type);
    }
    let thread_key = strings.id("thread");
    let mut location_messages = Vec::new();
    for (stack, thread, count) in samples {
        let mut ids = Vec::with_capacity(stack.len());
        for frame in stack {
            let lines: Vec<(u64, u32)> = frame
                .into_iter()
                .map(|symbol| {
                    let next = functions.len() as u64 + 1;
                    let id = *functions
                        .entry((symbol.name.clone(), symbol.file.clone()))
                        .or_insert(next);
                    (id, symbol.line)
                })
                .collect();
            let next = locations.len() as u64 + 1;
            let id = *locations.entry(lines.clone()).or_insert_with(|| {
                let mut location = Vec::new();
                varint_field(&mut location, 1, next);
                for (function, line) in &lines {
                    let mut l = Vec::new();
                    varint_field(&mut l, 1, *function);
                    varint_field(&mut l, 2, u64::from(*line));
                    message(&mut location, 4, &l);
                }
                location_messages.push(location);
                next
            });
            ids.push(id);
        }
        // sample (2): location_id (1, packed), value (2, packed), label (3).
        let mut sample = Vec::new();
        packed(&mut sample, 1, &ids);
        packed(&mut sample, 2, &[count as u64, (count * period) as u64]);
        if !thread.is_empty() {
            let mut label = Vec::new();
            varint_field(&mut label, 1, thread_key);
            varint_field(&mut label, 2, strings.id(&thread));
            message(&mut sample, 3, &label);
        }
        message(&mut out, 2, &sample);
    }
    // location (4).
    for location in &location_messages {
        message(&mut out, 4, location);
    }
    // function (5): id, name, system_name, filename.
    let mut by_id: Vec<_> = functions.into_iter().collect();
    by_id.sort_by_key(|(_, id)| *id);
    for ((name, file), id) in by_id {
        let mut function = Vec::new();
        varint_field(&mut function, 1, id);
        let name = strings.id(&name);
        varint_field(&mut function, 2, name);
        varint_field(&mut function, 3, name);
        varint_field(&mut function, 4, strings.id(&file));
        message(&mut out, 5, &function);
    }
    let since_epoch = started.duration_since(UNIX_EPOCH).unwrap_or_default();
    varint_field(&mut out, 9, since_epoch.as_nanos() as u64);
    varint_field(&mut out, 10, duration.as_nanos() as u64);
    let period_type = value_type(&mut strings, "cpu", "nanoseconds");
    message(&mut out, 11, &period_type);
    varint_field(&mut out, 12, period as u64);
    // string_table (6), last since every other field adds to it.
    for s in &strings.list {
        bytes_field(&mut out, 6, s.as_bytes());
    }
    out
}

/// The profile's string table (index 0 is the empty string).
struct Strings {
    list: Vec<String>,
    index: HashMap<String, u64>,
}

impl Default for Strings {
    fn default() -> Self {
        Self {
            list: vec![String::new()],
            index: HashMap::from([(String::new(), 0)]),
        }
    }
}

impl Strings {
    fn id(&mut self, s: &str) -> u64 {
        if let Some(id) = self.index.get(s) {
            return *id;
        }
        let id = self.list.len() as u64;
        self.list.push(s.to_string());
        self.index.insert(s.to_string(), id);
        id
    }
}

fn value_type(strings: &mut Strings, kind: &str, unit: &str) -> Vec<u8> {
    let mut m = Vec::new();
    varint_field(&mut m, 1, strings.id(kind));
    varint_field(&mut m, 2, strings.id(unit));
    m
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn varint_field(out: &mut Vec<u8>, field: u64, v: u64) {
    varint(out, field << 3);
    varint(out, v);
}

fn bytes_field(out: &mut Vec<u8>, field: u64, bytes: &[u8]) {
    varint(out, (field << 3) | 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

fn message(out: &mut Vec<u8>, field: u64, body: &[u8]) {
    bytes_field(out, field, body);
}

fn packed(out: &mut Vec<u8>, field: u64, values: &[u64]) {
    let mut body = Vec::with_capacity(values.len() * 2);
    for v in values {
        varint(&mut body, *v);
    }
    bytes_field(out, field, &body);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An independent reader of the fields the test checks (prost, from the published
    /// `profile.proto` field numbers).
    mod proto {
        #[derive(Clone, PartialEq, prost::Message)]
        pub struct Profile {
            #[prost(message, repeated, tag = "1")]
            pub sample_type: Vec<ValueType>,
            #[prost(message, repeated, tag = "2")]
            pub sample: Vec<Sample>,
            #[prost(message, repeated, tag = "4")]
            pub location: Vec<Location>,
            #[prost(message, repeated, tag = "5")]
            pub function: Vec<Function>,
            #[prost(string, repeated, tag = "6")]
            pub string_table: Vec<String>,
            #[prost(int64, tag = "10")]
            pub duration_nanos: i64,
            #[prost(message, optional, tag = "11")]
            pub period_type: Option<ValueType>,
            #[prost(int64, tag = "12")]
            pub period: i64,
        }
        #[derive(Clone, PartialEq, prost::Message)]
        pub struct ValueType {
            #[prost(int64, tag = "1")]
            pub r#type: i64,
            #[prost(int64, tag = "2")]
            pub unit: i64,
        }
        #[derive(Clone, PartialEq, prost::Message)]
        pub struct Sample {
            #[prost(uint64, repeated, tag = "1")]
            pub location_id: Vec<u64>,
            #[prost(int64, repeated, tag = "2")]
            pub value: Vec<i64>,
        }
        #[derive(Clone, PartialEq, prost::Message)]
        pub struct Location {
            #[prost(uint64, tag = "1")]
            pub id: u64,
            #[prost(message, repeated, tag = "4")]
            pub line: Vec<Line>,
        }
        #[derive(Clone, PartialEq, prost::Message)]
        pub struct Line {
            #[prost(uint64, tag = "1")]
            pub function_id: u64,
            #[prost(int64, tag = "2")]
            pub line: i64,
        }
        #[derive(Clone, PartialEq, prost::Message)]
        pub struct Function {
            #[prost(uint64, tag = "1")]
            pub id: u64,
            #[prost(int64, tag = "2")]
            pub name: i64,
            #[prost(int64, tag = "4")]
            pub filename: i64,
        }
    }

    fn symbol(name: &str, line: u32) -> Symbol {
        Symbol {
            name: name.into(),
            file: "src/lib.rs".into(),
            line,
        }
    }

    #[test]
    fn an_encoded_profile_reads_back() {
        let main = vec![symbol("main", 3)];
        let work = vec![symbol("work", 10), symbol("inlined_helper", 20)];
        let samples = vec![
            (vec![work.clone(), main.clone()], "worker-1".to_string(), 7),
            (vec![main.clone()], String::new(), 2),
        ];
        let bytes = encode_profile(samples, UNIX_EPOCH, Duration::from_secs(2), 100);
        let p = <proto::Profile as prost::Message>::decode(bytes.as_slice()).unwrap();
        let s = |i: i64| p.string_table[i as usize].as_str();
        assert_eq!(s(0), "");
        let types: Vec<_> = p
            .sample_type
            .iter()
            .map(|t| (s(t.r#type), s(t.unit)))
            .collect();
        assert_eq!(types, [("samples", "count"), ("cpu", "nanoseconds")]);
        assert_eq!(p.period, 10_000_000);
        assert_eq!(p.duration_nanos, 2_000_000_000);
        assert_eq!(s(p.period_type.as_ref().unwrap().unit), "nanoseconds");
        assert_eq!(p.sample.len(), 2);
        assert_eq!(p.sample[0].value, [7, 70_000_000]);
        assert_eq!(p.location.len(), 2, "main's location is shared");
        let names = |location_id: u64| -> Vec<String> {
            let location = p.location.iter().find(|l| l.id == location_id).unwrap();
            location
                .line
                .iter()
                .map(|line| {
                    let f = p
                        .function
                        .iter()
                        .find(|f| f.id == line.function_id)
                        .unwrap();
                    format!("{}@{}:{}", s(f.name), s(f.filename), line.line)
                })
                .collect()
        };
        assert_eq!(
            names(p.sample[0].location_id[0]),
            ["work@src/lib.rs:10", "inlined_helper@src/lib.rs:20"]
        );
        assert_eq!(p.sample[0].location_id[1], p.sample[1].location_id[0]);
        assert_eq!(names(p.sample[1].location_id[0]), ["main@src/lib.rs:3"]);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_endpoints() {
        assert_eq!(answer("/debug/pprof/", "").await.status, StatusCode::OK);
        let cmdline = answer("/debug/pprof/cmdline", "").await;
        assert!(!cmdline.body.is_empty());
        assert_eq!(
            answer("/debug/pprof/heap", "").await.status,
            StatusCode::NOT_FOUND
        );
        assert_eq!(
            answer("/debug/pprof/profile", "seconds=x").await.status,
            StatusCode::BAD_REQUEST
        );
        assert_eq!(
            answer("/debug/pprof/profile", "seconds=100000")
                .await
                .status,
            StatusCode::BAD_REQUEST
        );
    }
}
