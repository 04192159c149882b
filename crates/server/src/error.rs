use std::path::PathBuf;

use thiserror::Error;

/// Why the server could not start.
#[derive(Debug, Error)]
pub enum Error {
    /// A file could not be read or written.
    #[error("{what} {path}: {source}")]
    File {
        /// What the file is for.
        what: &'static str,
        /// The path.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The serving certificate could not be set up.
    #[error(transparent)]
    Serving(#[from] capstan_serving::Error),
    /// The listening socket could not be opened.
    #[error("binding {addr}: {source}")]
    Bind {
        /// The address.
        addr: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The storage could not be opened.
    #[error("storage: {0}")]
    Storage(#[from] capstan_storage::Error),
    /// A start-up step failed for another reason.
    #[error("starting: {0}")]
    Startup(String),
    /// Authentication or authorization configuration is invalid.
    #[error(transparent)]
    Auth(#[from] capstan_auth::Error),
    /// The OIDC or token-webhook configuration is invalid.
    #[error(transparent)]
    RemoteAuth(#[from] capstan_auth_remote::Error),
    /// The admission options or configuration file are invalid.
    #[error(transparent)]
    Admission(#[from] capstan_admission::Error),
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
