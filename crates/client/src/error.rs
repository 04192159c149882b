use k8s_openapi::apimachinery::pkg::apis::meta::v1::Status;

/// What can go wrong talking to the API server.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The configuration (or kubeconfig) is unusable.
    #[error("configuration: {0}")]
    Config(String),
    /// The connection failed or broke.
    #[error("connection to {server}: {message}")]
    Connection {
        /// The server.
        server: String,
        /// What happened.
        message: String,
    },
    /// The server answered with an error Status.
    #[error("{} ({}): {}", .0.reason.as_deref().unwrap_or("Failure"), .0.code.unwrap_or(0), .0.message.as_deref().unwrap_or(""))]
    Api(Box<Status>),
    /// A body that does not decode (JSON or protobuf).
    #[error("decoding the response: {0}")]
    Decode(String),
}

impl Error {
    /// The HTTP status code of an API error.
    pub fn code(&self) -> Option<u16> {
        match self {
            Error::Api(s) => s.code.and_then(|c| u16::try_from(c).ok()),
            _ => None,
        }
    }
}

/// The crate's result type.
pub type Result<T> = std::result::Result<T, Error>;
