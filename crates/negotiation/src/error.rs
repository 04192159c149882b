/// What can go wrong turning one representation into another.
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
}

/// The crate's result type.
pub type Result<T> = std::result::Result<T, Error>;
