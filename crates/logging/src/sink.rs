//! Where lines go: standard error, one file, or one file per severity; rotation by size and
//! buffered writes flushed on a period.

use std::fs::{File, OpenOptions};
use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use crate::{Error, LogOptions, Severity};

/// The destinations of log lines.
pub(crate) struct Sinks {
    /// Lines at or above this severity go to standard error (`None`: none do).
    stderr_from: Option<Severity>,
    files: Files,
}

enum Files {
    None,
    /// `--log-file`: every line.
    Single(Mutex<LogFile>),
    /// `--log-dir`: INFO, WARNING and ERROR files.
    PerSeverity {
        files: Box<[Mutex<LogFile>; 3]>,
        one_output: bool,
    },
}

impl Sinks {
    pub fn open(program: &str, o: &LogOptions) -> Result<Self, Error> {
        if o.logtostderr {
            return Ok(Self {
                stderr_from: Some(Severity::Info),
                files: Files::None,
            });
        }
        let stderr_from = if o.alsologtostderr {
            Some(Severity::Info)
        } else {
            Severity::ALL.get(o.stderrthreshold as usize).copied()
        };
        let max_bytes = o.log_file_max_size.saturating_mul(1024 * 1024);
        let header = !o.skip_log_headers;
        let files = match (&o.log_file, &o.log_dir) {
            (Some(path), _) => {
                let place = Place::File(path.clone());
                Files::Single(Mutex::new(LogFile::open(
                    place, program, max_bytes, header,
                )?))
            }
            (None, dir) => {
                let dir = dir.clone().unwrap_or_else(std::env::temp_dir);
                let open = |severity| {
                    let place = Place::Dir {
                        dir: dir.clone(),
                        severity,
                    };
                    LogFile::open(place, program, max_bytes, header).map(Mutex::new)
                };
                Files::PerSeverity {
                    files: Box::new([
                        open(Severity::Info)?,
                        open(Severity::Warning)?,
                        open(Severity::Error)?,
                    ]),
                    one_output: o.one_output,
                }
            }
        };
        Ok(Self { stderr_from, files })
    }

    pub fn uses_files(&self) -> bool {
        !matches!(self.files, Files::None)
    }

    /// Writes one formatted line (errors reach the disk at once).
    pub fn write(&self, severity: Severity, line: &[u8]) {
        if self.stderr_from.is_some_and(|from| severity >= from) {
            let _ = std::io::stderr().lock().write_all(line);
        }
        let urgent = severity == Severity::Error;
        match &self.files {
            Files::None => {}
            Files::Single(file) => lock(file).write(line, urgent),
            Files::PerSeverity { files, one_output } => {
                for (i, file) in files.iter().enumerate() {
                    let own = i == severity as usize;
                    if own || (!one_output && i < severity as usize) {
                        lock(file).write(line, urgent);
                    }
                }
            }
        }
    }

    /// Writes out everything buffered.
    pub fn flush(&self) {
        let _ = std::io::stderr().flush();
        match &self.files {
            Files::None => {}
            Files::Single(file) => lock(file).flush(),
            Files::PerSeverity { files, .. } => files.iter().for_each(|f| lock(f).flush()),
        }
    }
}

fn lock(file: &Mutex<LogFile>) -> std::sync::MutexGuard<'_, LogFile> {
    file.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Flushes the files every `period` until the sinks are dropped.
pub(crate) fn spawn_flusher(sinks: &Arc<Sinks>, period: Duration) {
    if !sinks.uses_files() {
        return;
    }
    let weak: Weak<Sinks> = Arc::downgrade(sinks);
    let period = period.max(Duration::from_millis(10));
    let _ = std::thread::Builder::new()
        .name("log-flush".into())
        .spawn(move || {
            loop {
                std::thread::sleep(period);
                match weak.upgrade() {
                    Some(sinks) => sinks.flush(),
                    None => return,
                }
            }
        });
}

/// Where a log file lives.
#[derive(Debug, Clone)]
enum Place {
    /// `--log-file`: this path; rotation keeps the previous file as `path.1`.
    File(PathBuf),
    /// `--log-dir`: a time-stamped file per severity, with a `program.SEVERITY` link.
    Dir { dir: PathBuf, severity: Severity },
}

/// One open log file with its rotation state.
struct LogFile {
    place: Place,
    program: String,
    writer: BufWriter<File>,
    written: u64,
    max_bytes: u64,
    header: bool,
    broken: bool,
}

impl LogFile {
    fn open(place: Place, program: &str, max_bytes: u64, header: bool) -> Result<Self, Error> {
        let (writer, written) = create(&place, program, header, true)?;
        // A device or a pipe (`--log-file=/dev/null`) is written but never renamed aside.
        let regular = writer.get_ref().metadata().is_ok_and(|m| m.is_file());
        Ok(Self {
            place,
            program: program.to_string(),
            writer,
            written,
            max_bytes: if regular { max_bytes } else { 0 },
            header,
            broken: false,
        })
    }

    fn write(&mut self, line: &[u8], urgent: bool) {
        if self.max_bytes > 0
            && self.written > 0
            && self.written + line.len() as u64 > self.max_bytes
        {
            self.rotate();
        }
        match self.writer.write_all(line) {
            Ok(()) => self.written += line.len() as u64,
            Err(e) => self.report(&e),
        }
        if urgent {
            self.flush();
        }
    }

    fn flush(&mut self) {
        if let Err(e) = self.writer.flush() {
            self.report(&e);
        }
    }

    /// Says once on standard error that a log file cannot be written (logging must not stop
    /// the server).
    fn report(&mut self, e: &std::io::Error) {
        if !self.broken {
            self.broken = true;
            let _ = writeln!(std::io::stderr(), "{}: writing the log: {e}", self.program);
        }
    }

    fn rotate(&mut self) {
        self.flush();
        if let Place::File(path) = &self.place {
            let mut old = path.clone().into_os_string();
            old.push(".1");
            if let Err(e) = std::fs::rename(path, &old) {
                self.report(&e);
            }
        }
        match create(&self.place, &self.program, self.header, false) {
            Ok((writer, written)) => {
                self.writer = writer;
                self.written = written;
            }
            Err(e) => {
                let _ = writeln!(std::io::stderr(), "{}: {e}", self.program);
                // Keep writing to the old file rather than lose lines.
                self.written = 0;
            }
        }
    }
}

/// Opens (appending) or creates the file for `place`, with klog's header lines.
fn create(
    place: &Place,
    program: &str,
    header: bool,
    startup: bool,
) -> Result<(BufWriter<File>, u64), Error> {
    let now = jiff::Timestamp::now().to_zoned(jiff::tz::TimeZone::UTC);
    let (path, option) = match place {
        Place::File(path) => (path.clone(), "--log-file"),
        Place::Dir { dir, severity } => {
            let name = format!(
                "{program}.{}.{}.log.{}.{}.{}",
                host_name(),
                user_name(),
                severity.name(),
                now.strftime("%Y%m%d-%H%M%S"),
                std::process::id()
            );
            (dir.join(name), "--log-dir")
        }
    };
    let error = |source| Error::Open {
        option,
        path: path.clone(),
        source,
    };
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(&path)
        .map_err(error)?;
    let mut written = if startup {
        file.metadata().map(|m| m.len()).unwrap_or(0)
    } else {
        0
    };
    if let Place::Dir { dir, severity } = place {
        let link = dir.join(format!("{program}.{}", severity.name()));
        let _ = std::fs::remove_file(&link);
        let target = path.file_name().map(Path::new).unwrap_or(&path);
        let _ = std::os::unix::fs::symlink(target, &link);
    }
    let mut writer = BufWriter::with_capacity(64 * 1024, file);
    if header {
        let text = format!(
            "Log file created at: {}\nRunning on machine: {}\nBinary: {program} {}\n\
             Log line format: [IWE]mmdd hh:mm:ss.uuuuuu pid file:line] msg\n",
            now.strftime("%Y/%m/%d %H:%M:%S"),
            host_name(),
            env!("CARGO_PKG_VERSION"),
        );
        writer.write_all(text.as_bytes()).map_err(error)?;
        written += text.len() as u64;
    }
    Ok((writer, written))
}

fn host_name() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknownhost".into())
}

fn user_name() -> String {
    std::env::var("USER")
        .ok()
        .filter(|u| !u.is_empty() && !u.contains('/'))
        .unwrap_or_else(|| "unknownuser".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{Format, KlogLayer};
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;

    use crate::tests::options;

    /// Runs `body` with a logger made from `args` (format from `format`) and returns the
    /// sinks for flushing.
    fn with_logger(args: &[&str], format: Format, body: impl FnOnce()) -> Arc<Sinks> {
        let o = options(args);
        let sinks = Arc::new(Sinks::open("capstan-test", &o).unwrap());
        let verbosity = crate::Verbosity::new(o.verbosity, o.vmodule.0.clone());
        let layer = KlogLayer::new(format, sinks.clone()).with_filter(
            tracing_subscriber::filter::filter_fn(move |m| verbosity.enabled(m)),
        );
        let subscriber = tracing_subscriber::registry().with(layer);
        tracing::subscriber::with_default(subscriber, body);
        sinks.flush();
        sinks
    }

    #[test]
    fn a_log_file_gets_klog_lines_and_rotates() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("server.log");
        let file = format!("--log-file={}", path.display());
        with_logger(
            &["--logtostderr=false", &file, "--log-file-max-size=1"],
            Format::default(),
            || {
                tracing::info!(target: "capstan::test", address = "127.0.0.1:6443", "serving");
                tracing::debug!(target: "capstan::test", "not at -v=0");
                for i in 0..12_000 {
                    tracing::warn!(target: "capstan::test", i, padding = "x".repeat(80), "filler");
                }
            },
        );
        let text = std::fs::read_to_string(&path).unwrap();
        let previous = std::fs::read_to_string(dir.path().join("server.log.1")).unwrap();
        assert!(
            previous.starts_with("Log file created at: "),
            "{previous:.200}"
        );
        assert!(previous.len() <= 1024 * 1024, "{}", previous.len());
        assert!(text.starts_with("Log file created at: "));
        let first = previous
            .lines()
            .find(|l| l.contains("serving"))
            .expect("the first line is in the rotated file");
        let header = regex::Regex::new(
            r#"^I\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ sink\.rs:\d+\] "serving" address="127\.0\.0\.1:6443"$"#,
        )
        .unwrap();
        assert!(header.is_match(first), "{first}");
        assert!(!previous.contains("not at -v=0") && !text.contains("not at -v=0"));
        assert!(
            text.contains(" i=11999 "),
            "the last line is in the new file"
        );
    }

    /// `--log-file=/dev/null` must not rename the device after the size limit: a path that
    /// is not a regular file is written but never rotated.
    #[cfg(unix)]
    #[test]
    fn a_pipe_log_file_is_never_rotated() {
        use std::io::Read as _;
        use std::os::unix::fs::FileTypeExt as _;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("server.log");
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        let reader_path = path.clone();
        let reader = std::thread::spawn(move || {
            let mut text = String::new();
            std::fs::File::open(reader_path)
                .unwrap()
                .read_to_string(&mut text)
                .unwrap();
            text
        });
        let file = format!("--log-file={}", path.display());
        let sinks = with_logger(
            &["--logtostderr=false", &file, "--log-file-max-size=1"],
            Format::default(),
            || {
                for i in 0..24_000 {
                    tracing::warn!(target: "capstan::test", i, padding = "x".repeat(80), "filler");
                }
            },
        );
        drop(sinks);
        let text = reader.join().unwrap();
        assert!(text.len() > 2 * 1024 * 1024, "{}", text.len());
        assert!(text.contains(" i=23999 "));
        assert!(std::fs::metadata(&path).unwrap().file_type().is_fifo());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn a_log_dir_gets_a_file_per_severity() {
        let dir = tempfile::tempdir().unwrap();
        let log_dir = format!("--log-dir={}", dir.path().display());
        let read = |dir: &tempfile::TempDir, severity: &str| {
            std::fs::read_to_string(dir.path().join(format!("capstan-test.{severity}"))).unwrap()
        };
        with_logger(
            &["--logtostderr=false", &log_dir, "--skip-log-headers"],
            Format::default(),
            || {
                tracing::info!(target: "capstan::test", "an info");
                tracing::warn!(target: "capstan::test", "a warning");
                tracing::error!(target: "capstan::test", "an error");
            },
        );
        let (info, warning, error) = (
            read(&dir, "INFO"),
            read(&dir, "WARNING"),
            read(&dir, "ERROR"),
        );
        assert_eq!(info.lines().count(), 3, "{info}");
        assert_eq!(warning.lines().count(), 2, "{warning}");
        assert_eq!(error.lines().count(), 1, "{error}");
        assert!(error.starts_with('E') && warning.starts_with('W'));

        let dir = tempfile::tempdir().unwrap();
        let log_dir = format!("--log-dir={}", dir.path().display());
        with_logger(
            &[
                "--logtostderr=false",
                &log_dir,
                "--one-output",
                "--skip-log-headers",
            ],
            Format::default(),
            || {
                tracing::info!(target: "capstan::test", "an info");
                tracing::error!(target: "capstan::test", "an error");
            },
        );
        assert_eq!(read(&dir, "INFO").lines().count(), 1);
        assert_eq!(read(&dir, "ERROR").lines().count(), 1);
    }

    #[test]
    fn json_lines_vmodule_and_sanitization() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.json");
        let file = format!("--log-file={}", path.display());
        let format = Format {
            json: true,
            sanitize: true,
            ..Format::default()
        };
        with_logger(
            &[
                "--logtostderr=false",
                &file,
                "--skip-log-headers",
                "--vmodule=sink=4",
            ],
            format,
            || {
                tracing::debug!(target: "capstan::test", token = "s3cr3t", user = "alice", status = 200, "login");
                tracing::trace!(target: "capstan::test", "too fine for 4");
            },
        );
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(!text.contains("s3cr3t"), "{text}");
        assert_eq!(text.lines().count(), 1, "{text}");
        let doc: serde_json::Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(doc["msg"], "login");
        assert_eq!(doc["v"], 4);
        assert_eq!(doc["user"], "alice");
        assert_eq!(doc["status"], 200);
        assert_eq!(doc["token"], "[redacted]");
        assert!(doc["caller"].as_str().unwrap().starts_with("sink.rs:"));
        assert!(doc["ts"].as_f64().unwrap() > 1.7e9);
    }

    fn traced() {
        tracing::info!(target: "capstan::test", "with a trace");
    }

    #[test]
    fn headers_backtraces_and_libraries() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log.txt");
        let file = format!("--log-file={}", path.display());
        let args = ["--logtostderr=false", &file, "--skip-log-headers"];
        let json = Format {
            json: true,
            ..Format::default()
        };
        with_logger(&args, json, traced);
        let doc: serde_json::Value =
            serde_json::from_str(std::fs::read_to_string(&path).unwrap().trim()).unwrap();
        let line = doc["caller"]
            .as_str()
            .unwrap()
            .rsplit(':')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        std::fs::remove_file(&path).unwrap();

        let format = Format {
            skip_headers: true,
            backtrace_at: Some(crate::BacktraceAt {
                file: "sink.rs".into(),
                line,
            }),
            ..Format::default()
        };
        with_logger(&args, format, || {
            tracing::info!(target: "capstan::test", "plain");
            traced();
            tracing::info!(target: "h2::proto", "a library's information, hidden at -v=0");
            tracing::warn!(target: "h2::proto", "a library's warning");
        });
        let text = std::fs::read_to_string(&path).unwrap();
        let mut lines = text.lines();
        assert_eq!(lines.next(), Some("\"plain\""));
        assert_eq!(lines.next(), Some("\"with a trace\""));
        assert!(text.contains("traced"), "a backtrace follows: {text}");
        assert!(!text.contains("hidden at -v=0"));
        assert!(text.contains("\"a library's warning\""));
        assert_eq!(
            text.matches("plain").count(),
            1,
            "no backtrace on other lines"
        );
    }
}
