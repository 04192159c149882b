//! Logging for Capstan's daemons, with the options and behaviour of upstream's klog:
//! `-v` and `--vmodule` verbosity, the `text` (klog header) and `json` formats, standard
//! error or files (`--log-file`, or one file per severity in `--log-dir`), size-based
//! rotation, `--stderrthreshold`, periodic flushing and sanitization of sensitive fields.
//!
//! Events come from `tracing`. Their levels map to klog's: `error` is ERROR, `warn` is
//! WARNING, `info` is INFO at verbosity 0, `debug` INFO at 4 and `trace` INFO at 6.
//! Libraries' events (targets outside `capstan*`) are quieter: warnings and errors always,
//! their `info` from `-v=2`, their `debug` and `trace` only when `--vmodule` names them.

mod filter;
mod format;
mod sink;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tracing_subscriber::Layer as _;
use tracing_subscriber::layer::SubscriberExt as _;

pub use filter::{Verbosity, parse_vmodule};

/// A log line's severity, as klog names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// INFO (`I`).
    Info = 0,
    /// WARNING (`W`).
    Warning = 1,
    /// ERROR (`E`).
    Error = 2,
}

impl Severity {
    /// The severities that have files of their own in `--log-dir`.
    pub const ALL: [Severity; 3] = [Severity::Info, Severity::Warning, Severity::Error];

    /// The upper-case name used in file names.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Info => "INFO",
            Severity::Warning => "WARNING",
            Severity::Error => "ERROR",
        }
    }

    fn of(level: &tracing::Level) -> Self {
        match *level {
            tracing::Level::ERROR => Severity::Error,
            tracing::Level::WARN => Severity::Warning,
            _ => Severity::Info,
        }
    }
}

/// What can go wrong setting up logging.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A log file or directory could not be opened.
    #[error("{option} {path}: {source}")]
    Open {
        /// The option naming the place.
        option: &'static str,
        /// The path.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// `RUST_LOG` is not a valid filter.
    #[error("RUST_LOG: {0}")]
    Filter(String),
}

/// The logging options of both daemons (upstream's names, types and defaults).
#[derive(Debug, Clone, clap::Args)]
pub struct LogOptions {
    /// Verbosity: 0 and up logs information (2 and up adds libraries' information and a line
    /// per request), 4 and up debugging messages, 6 and up traces. RUST_LOG, when set,
    /// replaces -v and --vmodule with a tracing filter.
    #[arg(
        short = 'v',
        long = "v",
        default_value_t = 0,
        help_heading = "Logs flags"
    )]
    pub verbosity: u8,

    /// Per-module verbosity: comma-separated pattern=N, where a pattern (with * and ?)
    /// matches a source file's name without .rs or a module path segment (e.g.
    /// access_log=2,h2=6).
    #[arg(long, value_parser = parse_vmodule_option, default_value = "", hide_default_value = true,
          help_heading = "Logs flags")]
    pub vmodule: Vmodule,

    /// The log format: text (klog's header, then the message and key="value" pairs) or json
    /// (one object per line: ts, caller, msg, v, then the fields).
    #[arg(long, default_value = "text", value_parser = ["text", "json"], help_heading = "Logs flags")]
    pub logging_format: String,

    /// Log to standard error instead of files; --log-file and --log-dir take effect only when
    /// this is false.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true", help_heading = "Logs flags")]
    pub logtostderr: bool,

    /// With --logtostderr=false, also log everything to standard error.
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true", help_heading = "Logs flags")]
    pub alsologtostderr: bool,

    /// With --logtostderr=false, lines at or above this severity also go to standard error
    /// (0 INFO, 1 WARNING, 2 ERROR, 3 FATAL).
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(0..=3),
          help_heading = "Logs flags")]
    pub stderrthreshold: u8,

    /// With --logtostderr=false, the directory of the log files: one per severity,
    /// PROGRAM.HOST.USER.log.SEVERITY.DATE-TIME.PID, with a PROGRAM.SEVERITY link to the
    /// newest (the system's temporary directory when neither this nor --log-file is given).
    #[arg(long, help_heading = "Logs flags")]
    pub log_dir: Option<PathBuf>,

    /// With --logtostderr=false, the one file every line goes to (before --log-dir).
    #[arg(long, help_heading = "Logs flags")]
    pub log_file: Option<PathBuf>,

    /// Megabytes a log file may reach before it is rotated (0: unlimited). --log-file keeps
    /// the previous file as FILE.1; --log-dir starts a new time-stamped file.
    #[arg(long, default_value_t = 1800, help_heading = "Logs flags")]
    pub log_file_max_size: u64,

    /// The longest time log lines wait in the file buffers before they are written (errors
    /// are written at once).
    #[arg(long, default_value = "5s", value_parser = parse_duration, help_heading = "Logs flags")]
    pub log_flush_frequency: Duration,

    /// When a line is logged at this source position (file.rs:N), add a backtrace to it.
    #[arg(long, default_value = ":0", value_parser = parse_backtrace_at, help_heading = "Logs flags")]
    pub log_backtrace_at: BacktraceAt,

    /// Show the source file's directory in the text header, not just its name.
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true", help_heading = "Logs flags")]
    pub add_dir_header: bool,

    /// Leave out the header (severity, time, thread, position) of text lines.
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true", help_heading = "Logs flags")]
    pub skip_headers: bool,

    /// Leave out the lines (time, machine, program, line format) written at the top of each
    /// new log file.
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true", help_heading = "Logs flags")]
    pub skip_log_headers: bool,

    /// With --log-dir, write each line only to its own severity's file (not also to the
    /// files of lower severities).
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true", help_heading = "Logs flags")]
    pub one_output: bool,

    /// Replace the values of fields whose names mark them sensitive (password, token,
    /// secret, key, credential, authorization, bearer) with "[redacted]". Capstan never logs
    /// request bodies or credentials to begin with.
    #[arg(long, default_value_t = false, action = clap::ArgAction::Set, num_args = 0..=1,
          default_missing_value = "true", help_heading = "Logs flags")]
    pub experimental_logging_sanitization: bool,
}

/// `--vmodule`'s parsed value.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Vmodule(pub Vec<(String, u8)>);

/// `--log-backtrace-at`'s parsed value: a file name and line (line 0: off).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BacktraceAt {
    /// The source file's name (e.g. `server.rs`).
    pub file: String,
    /// The line; 0 turns the option off.
    pub line: u32,
}

fn parse_vmodule_option(value: &str) -> Result<Vmodule, String> {
    parse_vmodule(value).map(Vmodule)
}

fn parse_backtrace_at(value: &str) -> Result<BacktraceAt, String> {
    let (file, line) = value
        .rsplit_once(':')
        .ok_or_else(|| format!("{value:?} is not file:N"))?;
    let line = line
        .parse()
        .map_err(|_| format!("{value:?} is not file:N ({line:?} is not a line number)"))?;
    if line > 0 && file.is_empty() {
        return Err(format!("{value:?} names no file"));
    }
    Ok(BacktraceAt {
        file: file.to_string(),
        line,
    })
}

/// Parses a duration option as Go's flags do (`5s`, `1m30s`, `1.5h`, `300ms`, `0`); negative
/// durations are refused.
pub fn parse_duration(value: &str) -> Result<Duration, String> {
    match capstan_meta::duration::parse_go_duration(value) {
        Some(nanos) if nanos >= 0 => Ok(Duration::from_nanos(nanos as u64)),
        Some(_) => Err(format!("invalid duration {value:?}: negative")),
        None => Err(format!("time: invalid duration {value:?}")),
    }
}

impl LogOptions {
    /// The verbosity in effect for a module or file name (`--vmodule` before `-v`), e.g. to
    /// decide whether a per-request line is wanted at all.
    pub fn verbosity_for(&self, name: &str) -> u8 {
        self.verbosity().for_names(&[name])
    }

    fn verbosity(&self) -> Verbosity {
        Verbosity::new(self.verbosity, self.vmodule.0.clone())
    }
}

/// Keeps the file writers alive; dropping it writes out what is still buffered.
#[must_use = "dropping the guard stops flushing the log files"]
pub struct LogGuard {
    sinks: Arc<sink::Sinks>,
}

impl Drop for LogGuard {
    fn drop(&mut self) {
        self.sinks.flush();
    }
}

impl std::fmt::Debug for LogGuard {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LogGuard").finish_non_exhaustive()
    }
}

/// Installs the process's logger for `program` (the name in log file names) as the options
/// say. Call once, before anything logs.
pub fn init(program: &str, options: &LogOptions) -> Result<LogGuard, Error> {
    let (subscriber, guard) = subscriber(program, options)?;
    tracing::subscriber::set_global_default(subscriber)
        .map_err(|e| Error::Filter(format!("a logger is already installed: {e}")))?;
    Ok(guard)
}

/// The logger the options describe, without installing it (for embedding, tests and
/// benchmarks: `tracing::subscriber::with_default`).
pub fn subscriber(
    program: &str,
    options: &LogOptions,
) -> Result<(Box<dyn tracing::Subscriber + Send + Sync>, LogGuard), Error> {
    let sinks = Arc::new(sink::Sinks::open(program, options)?);
    if !sinks.uses_files() && (options.log_file.is_some() || options.log_dir.is_some()) {
        eprintln!(
            "{program}: --log-file and --log-dir take effect only with --logtostderr=false; \
             logging to standard error"
        );
    }
    sink::spawn_flusher(&sinks, options.log_flush_frequency);
    let layer = format::KlogLayer::new(
        format::Format {
            json: options.logging_format == "json",
            skip_headers: options.skip_headers,
            add_dir_header: options.add_dir_header,
            backtrace_at: (options.log_backtrace_at.line > 0)
                .then(|| options.log_backtrace_at.clone()),
            sanitize: options.experimental_logging_sanitization,
        },
        sinks.clone(),
    );
    let registry = tracing_subscriber::registry();
    let subscriber: Box<dyn tracing::Subscriber + Send + Sync> = match std::env::var("RUST_LOG") {
        Ok(directives) if !directives.is_empty() => {
            let filter = tracing_subscriber::EnvFilter::try_new(&directives)
                .map_err(|e| Error::Filter(e.to_string()))?;
            Box::new(registry.with(layer.with_filter(filter)))
        }
        _ => {
            let verbosity = options.verbosity();
            let filter = tracing_subscriber::filter::filter_fn(move |meta| verbosity.enabled(meta));
            Box::new(registry.with(layer.with_filter(filter)))
        }
    };
    Ok((subscriber, LogGuard { sinks }))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        log: LogOptions,
    }

    /// The options a command line of only logging options gives.
    pub(crate) fn options(args: &[&str]) -> LogOptions {
        Cli::try_parse_from(std::iter::once("x").chain(args.iter().copied()))
            .unwrap()
            .log
    }

    #[test]
    fn options_parse_as_upstream_writes_them() {
        let cli = Cli::try_parse_from([
            "x",
            "-v=3",
            "--vmodule=server=5,h2*=6",
            "--logtostderr=false",
            "--alsologtostderr",
            "--log-flush-frequency=1m30s",
            "--log-backtrace-at=server.rs:120",
            "--stderrthreshold=1",
        ])
        .unwrap();
        assert_eq!(cli.log.verbosity, 3);
        assert_eq!(
            cli.log.vmodule.0,
            [("server".to_string(), 5), ("h2*".to_string(), 6)]
        );
        assert!(!cli.log.logtostderr && cli.log.alsologtostderr);
        assert_eq!(cli.log.log_flush_frequency, Duration::from_secs(90));
        assert_eq!(cli.log.log_backtrace_at.line, 120);
        assert_eq!(cli.log.verbosity_for("server"), 5);
        assert_eq!(cli.log.verbosity_for("other"), 3);
        let defaults = Cli::try_parse_from(["x"]).unwrap().log;
        assert!(defaults.logtostderr);
        assert_eq!(defaults.stderrthreshold, 2);
        assert_eq!(defaults.log_file_max_size, 1800);
        assert_eq!(defaults.log_backtrace_at.line, 0);
        for bad in [
            "--vmodule=server",
            "--vmodule=server=x",
            "--stderrthreshold=4",
            "--log-flush-frequency=soon",
            "--log-backtrace-at=server.rs",
            "--log-backtrace-at=:12",
            "--logging-format=xml",
        ] {
            let err = Cli::try_parse_from(["x", bad]).unwrap_err().to_string();
            assert!(err.contains("invalid value"), "{bad}: {err}");
        }
    }
}
