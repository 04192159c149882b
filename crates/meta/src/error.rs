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
    /// A field selector that does not parse; the reason alone is the message, as upstream's
    /// (`invalid selector: 'a>1'; can't understand 'a>1'`).
    #[error("{reason}")]
    InvalidFieldSelector {
        /// The selector as given.
        selector: String,
        /// What is wrong.
        reason: String,
    },
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
