//! Thread persistence for Open Interpreter.
//!
//! Owns everything under `$OPENINTERPRETER_HOME` that records conversations:
//!
//! * **Rollout files** `sessions/YYYY/MM/DD/rollout-<local time>-<uuid v7>.jsonl`: one JSON
//!   line per [`RolloutItem`] (`{"timestamp","type","payload"}`), `session_meta` first.
//!   Append-only; each line is written whole, so a killed process loses at most the line in
//!   flight, and readers skip a torn or corrupt line with a warning.
//! * **Index** `state.sqlite`: one row per thread for fast [`ThreadStore::list`] and search.
//!   A cache: rebuilt from the rollouts when missing, corrupt or of another schema version.
//! * **Names and archive flags** `session_index.jsonl`: append-only log replayed on rebuild.
//!
//! Or, with [`StoreLocation::Postgres`] (`[thread_store] url`), everything in a PostgreSQL
//! database shared by several processes: the same records as rows of `oi_rollout_lines`, the
//! index as `oi_threads`, and one writer per thread across processes through advisory-lock
//! leases (module `postgres`).
//!
//! Entry point: [`ThreadStore`] (create / load / resume / fork / list / archive / name) and
//! the [`RolloutWriter`] it hands out for appending; both are handles over the backend. [`LoadedThread::history`] gives what to
//! send to a model on resume; [`LoadedThread::turns`] the per-turn view for v2 `thread/read`;
//! [`ThreadStore::outline`] the same turns without parsing every record, for paged history.
//!
//! This crate knows the item and event types of `oi-protocol` but nothing about the engine,
//! models or front ends: it never decides *what* is recorded, only how it is stored.

/// The tracing target of the store's messages for the user (a fallback it took, a file it
/// skipped, a write that failed): front ends print them as one plain sentence rather than
/// as a log line (see the CLI's log format). Emit them with [`notice!`].
pub const NOTICE_TARGET: &str = "oi_notice";

/// A message for the user, at `warn` level under [`NOTICE_TARGET`].
#[macro_export]
macro_rules! notice {
    ($($arg:tt)*) => {
        ::tracing::warn!(target: $crate::NOTICE_TARGET, $($arg)*)
    };
}

mod error;
mod files;
mod git;
mod handle;
mod index;
mod loaded;
mod outline;
mod paging;
mod postgres;
mod private;
mod record;
mod rollout;
mod scan;
mod sidecar;
mod store;
#[doc(hidden)]
pub mod test_db;
mod types;

pub use error::StoreError;
pub use git::collect_git_info;
pub use handle::{RolloutWriter, StoreLocation, ThreadStore};
pub use loaded::{ABORTED_CALL_OUTPUT, LoadedThread, PendingMcpTask};
pub use outline::{StoredTurn, ThreadOutline, TurnSpan, TurnStatus};
pub use postgres::StoreTimeouts;
pub use types::parked::{ParkedCall, TurnParkedItem, TurnUnparkedItem, Unparked};
pub use types::{
    CompactedItem, GitInfo, ListQuery, RolloutItem, RolloutLine, SessionMeta, SessionSource,
    SortKey, ThreadPage, ThreadSummary, TurnContextItem, should_persist_event,
};

#[cfg(test)]
mod tests;
