//! The scheduler crate's errors.

/// What can go wrong configuring the scheduler.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The configuration file is not a `KubeSchedulerConfiguration` we can read.
    #[error("{0}")]
    Decode(String),
    /// A field has a value the scheduler refuses, named by its path.
    #[error("{field}: {message}")]
    Invalid {
        /// The field's path (`profiles[0].pluginConfig[1].args.hardPodAffinityWeight`).
        field: String,
        /// What is wrong with it.
        message: String,
    },
}

impl Error {
    /// An invalid field.
    pub fn invalid(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self::Invalid {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// This crate's results.
pub type Result<T, E = Error> = std::result::Result<T, E>;
