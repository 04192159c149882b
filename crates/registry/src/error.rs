use capstan_meta::ApiError;
use thiserror::Error;

/// What a registry operation can fail with. Everything reaches the client as a `Status`
/// through the one conversion into [`ApiError`] below.
#[derive(Debug, Error)]
pub enum Error {
    /// An error already in upstream form (not found, conflict, invalid, bad request, ...).
    #[error(transparent)]
    Api(#[from] ApiError),
    /// A storage failure the registry could not attribute to the request.
    #[error("storage: {0}")]
    Storage(#[from] capstan_storage::Error),
    /// A stored value is in no form the server reads (or an object has no stored form).
    #[error("stored object {key:?}: {message}")]
    Unreadable {
        /// The storage key (or the object's name when writing).
        key: String,
        /// Why.
        message: String,
    },
    /// An object could not be encoded.
    #[error("encoding: {0}")]
    Encode(#[source] serde_json::Error),
    /// A stored object could not be decoded.
    #[error("decoding stored object {key:?}: {source}")]
    Decode {
        /// The storage key.
        key: String,
        /// What went wrong.
        #[source]
        source: serde_json::Error,
    },
}

impl From<Error> for ApiError {
    fn from(err: Error) -> Self {
        match err {
            Error::Api(api) => api,
            // The backend is down or slow: the client may retry (upstream answers the same).
            Error::Storage(capstan_storage::Error::Unavailable(message)) => {
                ApiError::new(capstan_meta::Reason::ServiceUnavailable, message)
            }
            Error::Storage(capstan_storage::Error::Timeout(message)) => {
                ApiError::new(capstan_meta::Reason::Timeout, message)
            }
            other => ApiError::internal(other),
        }
    }
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
