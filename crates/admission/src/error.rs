//! Configuration errors of the chain.

use thiserror::Error;

/// Why a chain could not be built; each message is one line naming the option or file.
#[derive(Debug, Error)]
pub enum Error {
    /// A plugin name no one knows.
    #[error("{option}: unknown admission plugin {name:?}")]
    UnknownPlugin {
        /// The option that named it.
        option: &'static str,
        /// The name.
        name: String,
    },
    /// The configuration file (or a plugin's configuration) is not usable.
    #[error("--admission-control-config-file {path}: {reason}")]
    Config {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// A plugin's configuration is not usable.
    #[error("admission plugin {plugin}: {reason}")]
    Plugin {
        /// The plugin.
        plugin: &'static str,
        /// What is wrong.
        reason: String,
    },
}

/// Result with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
