use std::path::PathBuf;

/// A configuration problem. Every variant's message says where and how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A config file exists but cannot be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// Why the operating system refused.
        source: std::io::Error,
    },
    /// Invalid TOML: the message carries line and column.
    #[error("{path}: invalid TOML: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message, with line and column.
        message: String,
    },
    /// A key has a value of the wrong kind.
    #[error("{origin}: `{key}`: {message}")]
    Invalid {
        /// Where the value came from: a file, a profile or `-c`.
        origin: String,
        /// The dotted key.
        key: String,
        /// What is wrong with the value and what it takes.
        message: String,
    },
    /// A `-c key=value` override that cannot be used.
    #[error("invalid -c override `{raw}`: {message}")]
    Override {
        /// The override as given.
        raw: String,
        /// What is wrong with it.
        message: String,
    },
    /// A file that is not a regular file, too large, or unreadable (the bounded reader's
    /// refusal, which names the file).
    #[error(transparent)]
    File(#[from] crate::project_file::ProjectFileError),
    /// Any other problem, its message complete.
    #[error("{0}")]
    Other(String),
}
