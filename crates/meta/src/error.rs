use thiserror::Error;

/// Errors of parsing the wire forms this crate understands (selectors, timestamps).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum Error {
    /// A label selector that does not parse.
    #[error("unable to parse requirement: {reason}")]
    InvalidLabelSelector {
        /// What is wrong, naming the offending part.
        reason: String,
    },
    /// A field selector that does not parse.
    #[error("invalid field selector {selector:?}: {reason}")]
    InvalidFieldSelector {
        /// The selector as given.
        selector: String,
        /// What is wrong.
        reason: String,
    },
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
