//! Configuration errors.

use thiserror::Error;

/// Why an authenticator could not be built; messages start with the option at fault.
#[derive(Debug, Error)]
pub enum Error {
    /// An option (or the file it names) is not usable.
    #[error("{option}: {reason}")]
    Invalid {
        /// The option.
        option: &'static str,
        /// What is wrong.
        reason: String,
    },
}

impl Error {
    pub(crate) fn invalid(option: &'static str, reason: impl Into<String>) -> Self {
        Self::Invalid {
            option,
            reason: reason.into(),
        }
    }
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
