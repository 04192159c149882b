//! The admin kubeconfig written by `--write-admin-kubeconfig`.

use std::path::Path;

use base64::Engine;
use serde_json::json;

use crate::error::{Error, Result};

/// A kubeconfig (JSON, which every kubeconfig reader accepts) for `server` trusting `ca_pem`
/// and authenticating with `token`.
pub fn render(server: &str, ca_pem: &str, token: &str) -> String {
    let ca = base64::engine::general_purpose::STANDARD.encode(ca_pem);
    let doc = json!({
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "capstan", "cluster": {"server": server, "certificate-authority-data": ca}}],
        "users": [{"name": "capstan-admin", "user": {"token": token}}],
        "contexts": [{"name": "capstan", "context": {"cluster": "capstan", "user": "capstan-admin"}}],
        "current-context": "capstan",
        "preferences": {},
    });
    serde_json::to_string_pretty(&doc).unwrap_or_default()
}

/// Writes the kubeconfig to `path`, readable by its owner only (replaced atomically).
pub fn write(path: &Path, contents: &str) -> Result<()> {
    write_private(
        path,
        contents.as_bytes(),
        "writing --write-admin-kubeconfig",
    )
}

fn write_private(path: &Path, contents: &[u8], what: &'static str) -> Result<()> {
    capstan_serving::files::replace(path, contents, 0o600).map_err(|source| Error::File {
        what,
        path: path.into(),
        source,
    })
}

/// The admin token kept in `data_dir/admin-token`: read when there, else made and stored, so
/// kubeconfigs handed out keep working after a restart.
pub fn admin_token(data_dir: &Path, make: impl FnOnce() -> String) -> Result<String> {
    let path = data_dir.join("admin-token");
    match std::fs::read_to_string(&path) {
        Ok(token) if !token.trim().is_empty() => Ok(token.trim().to_string()),
        Ok(_) => store_token(&path, make()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => store_token(&path, make()),
        Err(source) => Err(Error::File {
            what: "reading the admin token",
            path,
            source,
        }),
    }
}

fn store_token(path: &Path, token: String) -> Result<String> {
    write_private(path, token.as_bytes(), "storing the admin token")?;
    Ok(token)
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn a_kubeconfig_replaces_a_looser_file_whole_with_mode_0600() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("admin.conf");
        std::fs::write(&path, "old and longer contents").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        write(&path, "new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(mode(&path), 0o600);
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "no temporary left"
        );
    }

    #[test]
    fn the_admin_token_is_made_once_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let first = admin_token(dir.path(), || "made-once".into()).unwrap();
        let again = admin_token(dir.path(), || panic!("made twice")).unwrap();
        assert_eq!((first.as_str(), again.as_str()), ("made-once", "made-once"));
        assert_eq!(mode(&dir.path().join("admin-token")), 0o600);
    }
}
