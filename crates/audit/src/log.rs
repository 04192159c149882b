//! The log file of the log backend: appended to, rotated by size into time-stamped backups
//! (`audit-2026-11-25T10-00-00.000.log`), old backups removed by count and age and
//! optionally gzipped, as upstream's rotation does. `-` writes to standard output. Only a
//! regular file rotates: a device or a pipe (`/dev/null`, a FIFO read by a collector) is
//! written without ever being renamed.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};

use jiff::Timestamp;

use crate::error::{Error, Result};

/// `--audit-log-maxage`, `-maxbackup`, `-maxsize`, `-compress`.
#[derive(Debug, Clone, Default)]
pub struct Rotation {
    /// Days a backup is kept (by the time in its name); 0 keeps them.
    pub max_age_days: u32,
    /// Backups kept; 0 keeps them all.
    pub max_backups: u32,
    /// Megabytes at which the file rotates; 0 means 100, as upstream.
    pub max_size_mb: u32,
    /// Gzip backups.
    pub compress: bool,
}

/// Where log lines go.
pub struct LogFile {
    target: Target,
}

enum Target {
    Stdout,
    File {
        path: PathBuf,
        file: File,
        size: u64,
        /// `None` for a path that is not a regular file: it never rotates.
        rotation: Option<Rotation>,
    },
}

/// A [`LogFile`] written by a thread of its own: a slow or stalled disk holds up the requests
/// whose events wait to be written, never the async workers serving the others. Writes queued
/// while one runs go to the file together.
pub struct LogThread {
    queue: std::sync::mpsc::Sender<Pending>,
}

/// Lines to write, and who waits for them.
type Pending = (
    Vec<u8>,
    tokio::sync::oneshot::Sender<std::result::Result<(), String>>,
);

/// Most bytes the thread gathers into one write.
const GATHER: usize = 4 << 20;

impl LogThread {
    /// Starts the thread that owns `file`; it ends when the handle is dropped.
    pub fn start(mut file: LogFile) -> Result<Self> {
        let (queue, waiting) = std::sync::mpsc::channel::<Pending>();
        std::thread::Builder::new()
            .name("audit-log".into())
            .spawn(move || {
                while let Ok((mut bytes, reply)) = waiting.recv() {
                    let mut replies = vec![reply];
                    while bytes.len() < GATHER {
                        let Ok((more, reply)) = waiting.try_recv() else {
                            break;
                        };
                        bytes.extend_from_slice(&more);
                        replies.push(reply);
                    }
                    let written = file.write(&bytes).map_err(|e| e.to_string());
                    for reply in replies {
                        let _ = reply.send(written.clone());
                    }
                }
            })
            .map_err(|e| io(Path::new("audit-log thread"), e))?;
        Ok(Self { queue })
    }

    /// Appends `bytes` (whole lines) and waits until they are written.
    pub async fn write(&self, bytes: Vec<u8>) -> std::result::Result<(), String> {
        let stopped = || "the audit log thread stopped".to_string();
        let (reply, written) = tokio::sync::oneshot::channel();
        self.queue.send((bytes, reply)).map_err(|_| stopped())?;
        written.await.map_err(|_| stopped())?
    }
}

/// The time format in backup names.
const BACKUP_TIME: &str = "%Y-%m-%dT%H-%M-%S%.3f";

impl LogFile {
    /// Opens (creating with mode 0600) `path` for appending; `-` is standard output.
    pub fn open(path: &Path, rotation: Rotation) -> Result<Self> {
        if path == Path::new("-") {
            return Ok(Self {
                target: Target::Stdout,
            });
        }
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| io(path, e))?;
        }
        let file = open_append(path)?;
        let metadata = file.metadata().map_err(|e| io(path, e))?;
        let rotation = metadata.is_file().then_some(rotation);
        let size = metadata.len();
        Ok(Self {
            target: Target::File {
                path: path.to_path_buf(),
                file,
                size,
                rotation,
            },
        })
    }

    /// Appends `bytes` (whole lines), rotating first when they would pass the size limit.
    pub fn write(&mut self, bytes: &[u8]) -> Result<()> {
        match &mut self.target {
            Target::Stdout => std::io::stdout()
                .lock()
                .write_all(bytes)
                .map_err(|e| io(Path::new("-"), e)),
            Target::File {
                path,
                file,
                size,
                rotation,
            } => {
                if let Some(rotation) = rotation {
                    let limit = u64::from(if rotation.max_size_mb == 0 {
                        100
                    } else {
                        rotation.max_size_mb
                    }) * 1024
                        * 1024;
                    if *size > 0 && *size + bytes.len() as u64 > limit {
                        *file = rotate(path, rotation)?;
                        *size = 0;
                    }
                }
                file.write_all(bytes).map_err(|e| io(path, e))?;
                *size += bytes.len() as u64;
                Ok(())
            }
        }
    }
}

fn open_append(path: &Path) -> Result<File> {
    let mut options = OpenOptions::new();
    options.create(true).append(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path).map_err(|e| io(path, e))
}

fn io(path: &Path, e: std::io::Error) -> Error {
    Error::Io {
        path: path.display().to_string(),
        source: e,
    }
}

/// The name stem and extension of `path` (`audit`, `.log`).
fn stem_and_ext(path: &Path) -> (String, String) {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match name.rfind('.') {
        Some(i) if i > 0 => (name[..i].to_string(), name[i..].to_string()),
        _ => (name, String::new()),
    }
}

/// Moves the full file aside under a time-stamped name, starts a new one, and tidies the
/// backups (compressing and removing in the background).
fn rotate(path: &Path, rotation: &Rotation) -> Result<File> {
    let (stem, ext) = stem_and_ext(path);
    let now = Timestamp::now();
    let backup = path.with_file_name(format!("{stem}-{}{ext}", now.strftime(BACKUP_TIME)));
    std::fs::rename(path, &backup).map_err(|e| io(path, e))?;
    let file = open_append(path)?;
    let path = path.to_path_buf();
    let rotation = rotation.clone();
    std::thread::Builder::new()
        .name("audit-log-tidy".into())
        .spawn(move || {
            if let Err(e) = tidy(&path, &rotation, now) {
                tracing::warn!(error = %e, "tidying rotated audit logs failed");
            }
        })
        .map_err(|e| io(Path::new("audit-log-tidy"), e))?;
    Ok(file)
}

/// The backups of `path`, newest first, with the time in their names.
pub fn backups(path: &Path) -> Vec<(PathBuf, Timestamp)> {
    let (stem, ext) = stem_and_ext(path);
    let dir = match path.parent().filter(|d| !d.as_os_str().is_empty()) {
        Some(d) => d.to_path_buf(),
        None => PathBuf::from("."),
    };
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return vec![];
    };
    let prefix = format!("{stem}-");
    let mut found: Vec<(PathBuf, Timestamp)> = entries
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let rest = name.strip_prefix(&prefix)?;
            let rest = rest.strip_suffix(".gz").unwrap_or(rest);
            let time = rest.strip_suffix(ext.as_str())?;
            let civil = jiff::civil::DateTime::strptime(BACKUP_TIME, time).ok()?;
            let ts = civil.to_zoned(jiff::tz::TimeZone::UTC).ok()?.timestamp();
            Some((entry.path(), ts))
        })
        .collect();
    found.sort_by_key(|b| std::cmp::Reverse(b.1));
    found
}

fn tidy(path: &Path, rotation: &Rotation, now: Timestamp) -> std::io::Result<()> {
    // One tidy at a time: two must not compress or remove the same backup.
    static TIDYING: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = TIDYING.lock().unwrap_or_else(|e| e.into_inner());
    let mut keep = Vec::new();
    for (i, (backup, time)) in backups(path).into_iter().enumerate() {
        let too_many = rotation.max_backups > 0 && i >= rotation.max_backups as usize;
        let too_old = rotation.max_age_days > 0
            && now.duration_since(time)
                > jiff::SignedDuration::from_secs(i64::from(rotation.max_age_days) * 86_400);
        if too_many || too_old {
            std::fs::remove_file(&backup)?;
        } else {
            keep.push(backup);
        }
    }
    if rotation.compress {
        for backup in keep {
            if backup.extension().is_some_and(|e| e == "gz") {
                continue;
            }
            let mut gz_name = backup.clone().into_os_string();
            gz_name.push(".gz");
            let gz_path = PathBuf::from(gz_name);
            let mut input = File::open(&backup)?;
            // Created, never opened: a link planted at the name is not followed.
            match std::fs::remove_file(&gz_path) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
                _ => {}
            }
            let output = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&gz_path)?;
            let mut encoder = flate2::write::GzEncoder::new(output, flate2::Compression::default());
            std::io::copy(&mut input, &mut encoder)?;
            encoder.finish()?.sync_all()?;
            std::fs::remove_file(&backup)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::io::Read;
    use std::time::Duration;

    use super::*;

    /// A named pipe `audit.log` in a new directory (kept alive by the returned guard).
    fn fifo() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.log");
        let made = std::process::Command::new("mkfifo")
            .arg(&path)
            .status()
            .unwrap();
        assert!(made.success());
        (dir, path)
    }

    fn wait_for(what: &str, mut done: impl FnMut() -> bool) {
        for _ in 0..500 {
            if done() {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        panic!("timed out waiting for {what}");
    }

    #[test]
    fn files_rotate_by_size_keep_backups_and_compress() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.log");
        let rotation = Rotation {
            max_backups: 2,
            max_size_mb: 1,
            compress: true,
            ..Rotation::default()
        };
        let mut log = LogFile::open(&path, rotation).unwrap();
        let line = [b'x'; 1023]
            .iter()
            .copied()
            .chain([b'\n'])
            .collect::<Vec<_>>();
        // 1024 lines of 1 KiB fill a file; four files' worth makes three rotations.
        for round in 0..4 {
            for _ in 0..1024 {
                log.write(&line).unwrap();
            }
            // Backup names have millisecond precision.
            std::thread::sleep(Duration::from_millis(5));
            let _ = round;
        }
        log.write(b"last\n").unwrap();
        wait_for("two compressed backups", || {
            let b = backups(&path);
            b.len() == 2 && b.iter().all(|(p, _)| p.extension().unwrap() == "gz")
        });
        let mut text = String::new();
        File::open(&path)
            .unwrap()
            .read_to_string(&mut text)
            .unwrap();
        assert_eq!(text, "last\n");
        let (newest, _) = &backups(&path)[0];
        let mut unzipped = Vec::new();
        flate2::read::GzDecoder::new(File::open(newest).unwrap())
            .read_to_end(&mut unzipped)
            .unwrap();
        assert_eq!(unzipped.len(), 1024 * 1024);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
    }

    /// `--audit-log-path=/dev/null` once renamed the machine's /dev/null after 100 MB: a
    /// path that is not a regular file is written but never rotated.
    #[cfg(unix)]
    #[test]
    fn a_pipe_is_never_rotated() {
        use std::os::unix::fs::FileTypeExt;
        let (dir, path) = fifo();
        let reader_path = path.clone();
        let reader = std::thread::spawn(move || {
            let mut all = Vec::new();
            File::open(reader_path)
                .unwrap()
                .read_to_end(&mut all)
                .unwrap();
            all.len()
        });
        let rotation = Rotation {
            max_size_mb: 1,
            ..Rotation::default()
        };
        let mut log = LogFile::open(&path, rotation).unwrap();
        let line = [b'y'; 1023]
            .iter()
            .copied()
            .chain([b'\n'])
            .collect::<Vec<_>>();
        // Three times the size limit.
        for _ in 0..3 * 1024 {
            log.write(&line).unwrap();
        }
        drop(log);
        assert_eq!(reader.join().unwrap(), 3 * 1024 * 1024);
        assert!(std::fs::metadata(&path).unwrap().file_type().is_fifo());
        assert!(backups(&path).is_empty());
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn old_backups_are_removed_by_age() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.log");
        let stale = dir.path().join("audit-2020-01-01T00-00-00.000.log");
        std::fs::write(&stale, "old\n").unwrap();
        let other = dir.path().join("unrelated.log");
        std::fs::write(&other, "keep\n").unwrap();
        assert_eq!(backups(&path).len(), 1);
        tidy(
            &path,
            &Rotation {
                max_age_days: 30,
                ..Rotation::default()
            },
            Timestamp::now(),
        )
        .unwrap();
        assert!(!stale.exists());
        assert!(other.exists());
    }

    /// A log that blocks (a pipe nobody reads yet) holds up only the writes waiting for it:
    /// the single-threaded runtime awaiting one goes on running its other tasks, which here
    /// tell the reader to drain the pipe. Were the write done on the runtime's thread, the
    /// reader would never hear from it and drain after its 20 s deadline instead.
    #[tokio::test(flavor = "current_thread")]
    async fn a_blocked_log_does_not_block_the_runtime() {
        let (_dir, path) = fifo();
        let (alive, heard) = std::sync::mpsc::channel::<()>();
        let reader = std::thread::spawn({
            let path = path.clone();
            move || {
                let mut pipe = File::open(&path).unwrap();
                let in_time = heard.recv_timeout(Duration::from_secs(20)).is_ok();
                let mut all = Vec::new();
                pipe.read_to_end(&mut all).unwrap();
                (in_time, all.len())
            }
        });
        let log = LogThread::start(LogFile::open(&path, Rotation::default()).unwrap()).unwrap();
        // More than a pipe holds: the log thread blocks in the write.
        let line = [b"x".repeat(1023), b"\n".to_vec()].concat();
        let writing = tokio::spawn(async move {
            let written = log.write(line.repeat(256)).await;
            drop(log);
            written
        });
        tokio::time::sleep(Duration::from_millis(50)).await;
        alive.send(()).unwrap();
        writing.await.unwrap().unwrap();
        let (in_time, read) = reader.join().unwrap();
        assert!(in_time, "the runtime was blocked by the log's write");
        assert_eq!(read, 256 * 1024);
    }
}
