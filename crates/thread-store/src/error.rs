//! Errors of the thread store. Every message names the thing that is wrong and what to do.

use oi_protocol::ThreadId;
use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "no stored thread with id {0}; run `interpreter sessions list` to see the stored threads"
    )]
    NotFound(ThreadId),

    #[error("invalid cursor `{0}`: pass back the nextCursor from a previous page")]
    BadCursor(String),

    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },

    /// The SQLite index failed in a way a rebuild did not fix (e.g. the disk is full or
    /// read-only). Rollout files are not affected.
    #[error("thread index error: {0}")]
    Index(String),

    /// A rollout file that cannot be used as a thread at all (no readable `session_meta`).
    #[error("rollout file {path} is unusable: {reason}")]
    Corrupt { path: PathBuf, reason: String },

    /// Another writer (this or another process) has the thread open for appending.
    #[error(
        "thread {id} is open for writing by another session ({path}); close that session first, or fork the thread"
    )]
    Busy { id: ThreadId, path: PathBuf },

    /// The PostgreSQL thread store failed (connection, query, schema).
    #[error("PostgreSQL thread store: {0}")]
    Postgres(String),

    /// A caller passed something the store cannot accept.
    #[error("{0}")]
    Invalid(String),
}

impl StoreError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        StoreError::Io {
            path: path.into(),
            source,
        }
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        StoreError::Index(e.to_string())
    }
}

impl From<tokio_postgres::Error> for StoreError {
    fn from(e: tokio_postgres::Error) -> Self {
        // `Display` of a server error is just "db error"; the detail is in its source.
        match e.as_db_error() {
            Some(db) => StoreError::Postgres(format!("{}: {}", db.code().code(), db.message())),
            None => StoreError::Postgres(e.to_string()),
        }
    }
}
