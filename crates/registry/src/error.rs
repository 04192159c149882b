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
    /// A `--runtime-config` key names nothing, or turns off the core group.
    #[error("--runtime-config: {0}")]
    RuntimeConfig(String),
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
    /// Failures the client caused keep their upstream form. Failures of the server are
    /// logged in full and answered without internal detail: no storage keys, paths or
    /// database messages reach the client.
    fn from(err: Error) -> Self {
        use capstan_meta::Reason;
        use capstan_storage::Error as S;
        let public = match &err {
            Error::Api(_) => None,
            // The backend is down or slow: the client may retry (upstream answers the same).
            Error::Storage(S::Unavailable(message)) => {
                return ApiError::new(Reason::ServiceUnavailable, message.clone());
            }
            Error::Storage(S::Timeout(message)) => {
                return ApiError::new(Reason::Timeout, message.clone());
            }
            Error::Storage(S::TooLarge { .. }) => {
                return ApiError::new(Reason::RequestEntityTooLarge, err.to_string());
            }
            Error::Storage(S::Fenced(_)) => {
                tracing::error!(error = %err, "refusing a write");
                return ApiError::new(
                    Reason::ServiceUnavailable,
                    "the storage refuses writes after a failed commit; the server needs a restart",
                );
            }
            Error::Storage(S::Indeterminate(_)) => {
                Some("the write failed and its outcome is unknown".to_string())
            }
            Error::Storage(S::Io { source, .. }) => {
                Some(format!("storage I/O failed: {}", source.kind()))
            }
            Error::Storage(_) => Some("storage error".to_string()),
            // The reason (a decryption failure names the key prefix it lacks), not the
            // storage key.
            Error::Unreadable { message, .. } => {
                Some(format!("a stored object could not be read: {message}"))
            }
            Error::Decode { source, .. } => {
                Some(format!("a stored object could not be decoded: {source}"))
            }
            Error::Encode(_) => Some("an object could not be encoded".to_string()),
            // A start-up error; no request sees it.
            Error::RuntimeConfig(why) => Some(why.clone()),
        };
        match (err, public) {
            (Error::Api(api), _) => api,
            (err, public) => {
                tracing::error!(error = %err, "internal error");
                ApiError::internal(public.unwrap_or_default())
            }
        }
    }
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
