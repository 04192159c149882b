use capstan_meta::ApiError;

/// What can go wrong choosing or converting a representation.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The body does not start with the protobuf envelope's magic bytes.
    #[error("the body is not a Kubernetes protobuf message: it does not start with \"k8s\\x00\"")]
    NoMagic,
    /// The protobuf bytes do not parse.
    #[error("the protobuf message does not decode: {0}")]
    Decode(String),
    /// No protobuf schema is known for this kind.
    #[error("no protobuf schema for {api_version}, Kind={kind}")]
    UnknownKind {
        /// The object's apiVersion.
        api_version: String,
        /// The object's kind.
        kind: String,
    },
    /// A JSON value does not fit the protobuf field it maps to.
    #[error("{field}: {reason}")]
    Field {
        /// The JSON path of the field.
        field: String,
        /// What is wrong with it.
        reason: String,
    },
    /// YAML that does not parse, or a document YAML cannot hold.
    #[error("YAML: {0}")]
    Yaml(String),
    /// No acceptable representation; the offered media types.
    #[error("none of the accepted media types can be served; offered: {0:?}")]
    NotAcceptable(Vec<String>),
    /// A request body in a media type that is not decoded.
    #[error("unsupported media type {content_type:?}")]
    UnsupportedMediaType {
        /// The request's Content-Type.
        content_type: String,
        /// What is decoded.
        supported: Vec<String>,
    },
    /// A bad request parameter.
    #[error("{0}")]
    BadRequest(String),
}

impl From<Error> for ApiError {
    fn from(err: Error) -> Self {
        match err {
            Error::NotAcceptable(offered) => {
                let offered: Vec<&str> = offered.iter().map(String::as_str).collect();
                ApiError::not_acceptable(&offered)
            }
            Error::UnsupportedMediaType { supported, .. } => {
                let supported: Vec<&str> = supported.iter().map(String::as_str).collect();
                ApiError::unsupported_media_type(&supported)
            }
            Error::BadRequest(message) => ApiError::bad_request(message),
            other => ApiError::bad_request(format!("the request body is invalid: {other}")),
        }
    }
}

/// The crate's result type.
pub type Result<T> = std::result::Result<T, Error>;
