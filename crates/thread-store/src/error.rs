//! Errors of the thread store. Every message names the thing that is wrong and what to do.

use oi_protocol::ThreadId;
use std::path::PathBuf;

/// Why a store operation failed; the message names what is wrong and what to do.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error(
        "no stored thread with id {0}; run `interpreter sessions list` to see the stored threads"
    )]
    /// No thread with this id is stored.
    NotFound(ThreadId),

    /// A list cursor that no page handed out.
    #[error("invalid cursor `{0}`: pass back the nextCursor from a previous page")]
    BadCursor(String),

    /// Reading or writing a store file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why the operating system refused.
        #[source]
        source: std::io::Error,
    },

    /// The SQLite index failed in a way a rebuild did not fix (e.g. the disk is full or
    /// read-only). Rollout files are not affected.
    #[error("thread index error: {0}")]
    Index(String),

    /// A rollout file that cannot be used as a thread at all (no readable `session_meta`).
    #[error("rollout file {path} is unusable: {reason}")]
    Corrupt {
        /// The rollout file.
        path: PathBuf,
        /// What makes it unusable.
        reason: String,
    },

    /// Another writer (this or another process) has the thread open for appending.
    #[error(
        "thread {id} is open for writing by another session ({path}); close that session first, or fork the thread"
    )]
    Busy {
        /// The thread.
        id: ThreadId,
        /// Its rollout file.
        path: PathBuf,
    },

    /// The PostgreSQL thread store failed (connection, query, schema).
    #[error("PostgreSQL thread store: {0}")]
    Postgres(String),

    /// The PostgreSQL server did not answer in time (stopped, overloaded, unreachable).
    /// Nothing was written by the operation that timed out; retrying later may succeed.
    #[error("PostgreSQL thread store: {0}")]
    Timeout(String),

    /// This writer's lease on the thread is gone (the database restarted, or its connection
    /// broke) and another session has written the thread since: records are refused rather
    /// than interleaved with that session's. Retrying cannot succeed; resume the thread.
    #[error(
        "thread {id}: this session lost its writer lease on the thread (the database restarted \
         or the connection broke) and another session has taken the thread over; records from \
         here on are not saved. Resume the thread to continue from what is stored"
    )]
    LeaseLost {
        /// The thread.
        id: ThreadId,
    },

    /// A caller passed something the store cannot accept.
    #[error("{0}")]
    Invalid(String),
}

impl StoreError {
    /// Whether trying the same operation again later may succeed (the database was down or
    /// slow), as opposed to a failure that will repeat (lease lost, bad input).
    pub fn is_transient(&self) -> bool {
        match self {
            StoreError::Timeout(_) | StoreError::Io { .. } | StoreError::Index(_) => true,
            StoreError::Postgres(_) => true,
            StoreError::LeaseLost { .. }
            | StoreError::NotFound(_)
            | StoreError::BadCursor(_)
            | StoreError::Corrupt { .. }
            | StoreError::Busy { .. }
            | StoreError::Invalid(_) => false,
        }
    }

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
            None => StoreError::Postgres(driver_message(&e)),
        }
    }
}

/// The driver's error with its causes ("error connecting to server: Connection refused"):
/// its `Display` alone is only the first part.
pub(crate) fn driver_message(e: &tokio_postgres::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}
