//! The audit crate's errors.

/// What can go wrong setting up audit.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The policy file is unreadable or invalid.
    #[error("audit policy file {path}: {message}")]
    Policy {
        /// The file.
        path: String,
        /// What is wrong, naming the field.
        message: String,
    },
    /// A file could not be opened or written.
    #[error("audit log {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The webhook's kubeconfig is unusable.
    #[error("audit webhook configuration {0}")]
    Webhook(String),
}

/// The crate's result.
pub type Result<T> = std::result::Result<T, Error>;
