//! Capstan's etcd v3 backend of [`Store`](capstan_storage::Store).
//!
//! Keys are stored as they are given (the registry builds upstream's layout,
//! `<prefix>/<resource>/<namespace>/<name>`), so Capstan and an upstream API server see the
//! same keys. Guarded writes are transactions comparing `create_revision` (create) or
//! `mod_revision` (update, delete); range reads run at a revision with a limit; watches start
//! after a revision, with the previous value of deleted keys, and report progress: etcd's
//! periodic notifications, and on demand whenever a consistent read asks for the current
//! revision (so that a watch cache can prove it is up to date). Compaction is etcd's,
//! physical.
//!
//! [`testing`] starts a real etcd process for tests.

mod store;
pub mod testing;

use std::path::PathBuf;
use std::time::Duration;

pub use store::EtcdStore;

/// How to reach etcd.
#[derive(Debug, Clone)]
pub struct EtcdConfig {
    /// Client URLs (`https://10.0.0.1:2379`, ...).
    pub endpoints: Vec<String>,
    /// CA bundle that signed the servers' certificates (`--etcd-cafile`).
    pub ca_file: Option<PathBuf>,
    /// Client certificate (`--etcd-certfile`), with `key_file`.
    pub cert_file: Option<PathBuf>,
    /// Client key (`--etcd-keyfile`).
    pub key_file: Option<PathBuf>,
    /// How long one request may take before it fails.
    pub request_timeout: Duration,
    /// How long connecting may take.
    pub dial_timeout: Duration,
}

impl EtcdConfig {
    /// A configuration for `endpoints` without TLS files and upstream's timeouts.
    pub fn new(endpoints: Vec<String>) -> Self {
        Self {
            endpoints,
            ca_file: None,
            cert_file: None,
            key_file: None,
            request_timeout: Duration::from_secs(60),
            dial_timeout: Duration::from_secs(20),
        }
    }
}

/// Errors of setting up the etcd backend (request errors are the storage crate's).
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The configuration is unusable.
    #[error("etcd configuration: {0}")]
    Config(String),
    /// A TLS file cannot be read.
    #[error("reading {path}: {source}")]
    File {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The client could not be set up.
    #[error("connecting to etcd at {endpoints}: {message}")]
    Connect {
        /// The endpoints tried.
        endpoints: String,
        /// Why.
        message: String,
    },
}
