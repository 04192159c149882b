use std::path::PathBuf;

use thiserror::Error;

/// Configuration errors of authentication and authorization.
#[derive(Debug, Error)]
pub enum Error {
    /// The token file could not be read.
    #[error("reading token file {path}: {source}")]
    TokenFileRead {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A line of the token file is malformed.
    #[error("token file {path}, line {line}: {reason}")]
    TokenFileLine {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        reason: String,
    },
    /// A file an option names could not be read.
    #[error("{option}: reading {path}: {source}")]
    File {
        /// The option.
        option: &'static str,
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// An option's value (or the file it names) is not usable.
    #[error("{option}: {reason}")]
    Invalid {
        /// The option.
        option: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// An authorization mode this server does not know.
    #[error(
        "unknown authorization mode {0:?} (supported: AlwaysAllow, AlwaysDeny, ABAC, Webhook, RBAC)"
    )]
    UnknownMode(String),
    /// An authorization mode given twice.
    #[error("authorization mode {0:?} is given more than once")]
    DuplicateMode(String),
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
