//! Files the daemons write for themselves (certificates, keys, tokens, kubeconfigs).

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Replaces `path` with `contents` atomically, with permissions `mode`: a new file (synced)
/// renamed over the old one, then its directory synced. A crash leaves the old file or the
/// new one, never part of either, and an old file's looser mode does not survive. The
/// directory is created when missing.
pub fn replace(path: &Path, contents: &[u8], mode: u32) -> std::io::Result<()> {
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)?;
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(format!(".tmp-{}", std::process::id()));
    let temporary = PathBuf::from(temporary);
    let written = (|| {
        // A stale temporary (or a link someone planted in its place) goes; the new one is
        // created, never opened: a link is not followed and the mode is the one asked for.
        match std::fs::remove_file(&temporary) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e),
            _ => {}
        }
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&temporary)?;
        f.write_all(contents)?;
        f.sync_all()?;
        std::fs::rename(&temporary, path)?;
        std::fs::File::open(parent)?.sync_all()
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    written
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn a_file_is_replaced_whole_with_its_new_mode() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("admin.conf");
        replace(&path, b"old and longer contents", 0o644).unwrap();
        replace(&path, b"new", 0o600).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let left = std::fs::read_dir(path.parent().unwrap()).unwrap().count();
        assert_eq!(left, 1, "no temporary left");
    }

    #[test]
    fn a_link_planted_at_the_temporary_path_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("admin-token");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "untouched").unwrap();
        let temporary = format!("{}.tmp-{}", path.display(), std::process::id());
        std::os::unix::fs::symlink(&victim, &temporary).unwrap();
        replace(&path, b"secret", 0o600).unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "untouched");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "secret");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
}
