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

/// Writes the kubeconfig to `path`, readable by its owner only.
pub fn write(path: &Path, contents: &str) -> Result<()> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let err = |source| Error::File {
        what: "writing --write-admin-kubeconfig",
        path: path.into(),
        source,
    };
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent).map_err(err)?;
    }
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)
        .map_err(err)?;
    f.write_all(contents.as_bytes()).map_err(err)?;
    f.sync_all().map_err(err)
}
