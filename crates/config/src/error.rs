use std::path::PathBuf;

/// A configuration problem. Every variant's message says where and how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// Invalid TOML: the message carries line and column.
    #[error("{path}: invalid TOML: {message}")]
    Parse { path: PathBuf, message: String },
    /// A key has a value of the wrong kind.
    #[error("{origin}: `{key}`: {message}")]
    Invalid {
        origin: String,
        key: String,
        message: String,
    },
    /// A `-c key=value` override that cannot be used.
    #[error("invalid -c override `{raw}`: {message}")]
    Override { raw: String, message: String },
    /// A file that is not a regular file, too large, or unreadable (the bounded reader's
    /// refusal, which names the file).
    #[error(transparent)]
    File(#[from] crate::project_file::ProjectFileError),
    #[error("{0}")]
    Other(String),
}
