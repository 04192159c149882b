use thiserror::Error;

/// What a cache read can fail with.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum Error {
    /// The requested revision is older than the window of events kept.
    #[error("too old resource version: {requested} ({oldest})")]
    Expired {
        /// The revision asked for.
        requested: u64,
        /// The oldest revision a watch can start after.
        oldest: u64,
    },
    /// The cache did not reach the requested revision in time.
    #[error("Too large resource version: {requested}, current: {current}")]
    TooLarge {
        /// The revision asked for.
        requested: u64,
        /// The cache's revision.
        current: u64,
    },
    /// The cache is (re)loading from storage.
    #[error("the watch cache is not ready")]
    NotReady,
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
