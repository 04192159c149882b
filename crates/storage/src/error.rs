use thiserror::Error;

use crate::store::KeyValue;

/// What a [`Store`](crate::Store) operation can fail with.
#[derive(Debug, Error)]
pub enum Error {
    /// The key does not exist.
    #[error("key {key:?} not found")]
    NotFound {
        /// The key.
        key: String,
    },
    /// A create found the key present.
    #[error("key {key:?} already exists")]
    AlreadyExists {
        /// The key.
        key: String,
    },
    /// A guarded write found another revision than expected; `current` is what is there now.
    #[error("key {key:?} was modified (now at revision {})", current.mod_revision.0)]
    Conflict {
        /// The key.
        key: String,
        /// The current value and its revisions.
        current: Box<KeyValue>,
    },
    /// The requested revision is older than the retained history.
    #[error("revision {requested} has been compacted (oldest available is {compacted})")]
    Compacted {
        /// The revision asked for.
        requested: u64,
        /// The compaction revision.
        compacted: u64,
    },
    /// The requested revision is newer than the store's current revision.
    #[error("revision {requested} is newer than the current revision {current}")]
    FutureRevision {
        /// The revision asked for.
        requested: u64,
        /// The current revision.
        current: u64,
    },
    /// A watcher fell too far behind the stream of changes and must start again.
    #[error("watcher fell behind by {missed} batches of events")]
    WatchLagged {
        /// How many batches were dropped.
        missed: u64,
    },
    /// A key and value larger than the store takes in one write.
    #[error("a write of {bytes} bytes is larger than the store's limit of {limit} bytes")]
    TooLarge {
        /// The key's and value's size.
        bytes: u64,
        /// The limit.
        limit: u64,
    },
    /// The store is shut down.
    #[error("the store is closed")]
    Closed,
    /// Reading or writing the store's files failed (a full disk included).
    #[error("storage I/O: {what}: {source}")]
    Io {
        /// What was being done.
        what: String,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// A write failed after it may have reached the disk: it may or may not be applied
    /// after a restart.
    #[error("the outcome of the write is unknown: {0}")]
    Indeterminate(String),
    /// The store stopped accepting writes after a write whose outcome is unknown; only a
    /// restart (which replays what reached the disk) brings it back.
    #[error("the store stopped accepting writes after a failed commit: {0}")]
    Fenced(String),
    /// The embedded database failed.
    #[error("embedded database: {0}")]
    Database(#[source] Box<redb::Error>),
    /// Stored data does not decode.
    #[error("corrupt stored data: {0}")]
    Corrupt(String),
    /// The backend cannot be reached (etcd down, no leader, connection lost).
    #[error("storage unavailable: {0}")]
    Unavailable(String),
    /// The backend did not answer in time.
    #[error("storage timeout: {0}")]
    Timeout(String),
    /// The backend refused the request for another reason.
    #[error("storage backend: {0}")]
    Backend(String),
}

impl<E: Into<redb::Error>> From<E> for Error {
    fn from(err: E) -> Self {
        match err.into() {
            redb::Error::Io(source) => Error::io("embedded database", source),
            // redb refuses every read and write after an I/O error until it is reopened.
            redb::Error::PreviousIo => Error::Unavailable(
                "the embedded database failed a write and is unusable until the server restarts"
                    .into(),
            ),
            other => Error::Database(Box::new(other)),
        }
    }
}

impl Error {
    /// An I/O error while doing `what`.
    pub fn io(what: impl Into<String>, source: std::io::Error) -> Self {
        Error::Io {
            what: what.into(),
            source,
        }
    }
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
