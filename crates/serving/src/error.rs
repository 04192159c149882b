//! The serving crate's errors.

use std::path::PathBuf;

/// What can go wrong setting up serving.
#[derive(Debug, thiserror::Error)]
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
    /// Certificates or keys are unusable.
    #[error("TLS: {0}")]
    Tls(String),
}

/// This crate's results.
pub type Result<T, E = Error> = std::result::Result<T, E>;
