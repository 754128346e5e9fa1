//! The stored threads of one home, as front ends reach them: through the engine, over the
//! store it opened for that home (one open, one database connection, shared with the
//! threads it runs), never through `oi-thread-store` themselves. Every operation is awaited
//! on the store's async seam: the local backend works on the blocking pool, PostgreSQL on
//! the caller's runtime; no async worker is blocked.

use crate::error::CoreError;
use crate::turn_state::TurnState;
use oi_protocol::ThreadId;
use oi_thread_store::{
    ListQuery, LoadedThread, StoreError, ThreadOutline, ThreadPage, ThreadStore, ThreadSummary,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The stored threads of one home (from [`crate::ThreadManager::stored_threads`]): list,
/// read, rename, archive, delete, and the outlines paged history reads. Cheap to clone.
///
/// Errors keep their kind: an unknown id is [`CoreError::ThreadNotFound`], a thread another
/// session writes [`CoreError::ThreadBusy`], a request the store refuses as asked (a bad
/// cursor, an invalid value) [`CoreError::StoreRequest`], anything else
/// [`CoreError::Store`].
#[derive(Clone)]
pub struct StoredThreads {
    store: ThreadStore,
}

impl StoredThreads {
    pub(crate) fn new(store: ThreadStore) -> Self {
        Self { store }
    }

    /// One page of the stored threads (see [`ListQuery`]).
    pub async fn list(&self, query: &ListQuery) -> Result<ThreadPage, CoreError> {
        stored(self.store.list_async(query).await)
    }

    /// The most recently updated stored thread (not archived), only in `cwd` when given.
    pub async fn latest(&self, cwd: Option<&Path>) -> Result<Option<ThreadSummary>, CoreError> {
        stored(self.store.latest_async(cwd).await)
    }

    /// A stored thread's summary (its index row; no record is read), `None` if unknown.
    pub async fn get(&self, id: &ThreadId) -> Result<Option<ThreadSummary>, CoreError> {
        stored(self.store.get_async(id).await)
    }

    /// A stored thread with all its records.
    pub async fn load(&self, id: &ThreadId) -> Result<LoadedThread, CoreError> {
        stored(self.store.load_async(id).await)
    }

    /// A rollout file read by its path (it need not be under this home, nor in this
    /// store's backend): its summary comes from the file itself.
    pub async fn load_path(&self, path: &Path) -> Result<LoadedThread, CoreError> {
        let (store, path): (ThreadStore, PathBuf) = (self.store.clone(), path.to_path_buf());
        // The store has no async form of this read of one local file: the blocking pool.
        let read = tokio::task::spawn_blocking(move || store.load_path(&path))
            .await
            .map_err(|e| CoreError::Store(format!("reading the rollout file failed: {e}")))?;
        stored(read)
    }

    /// A stored thread's turns without its records parsed, for paged history.
    pub async fn outline(&self, id: &ThreadId) -> Result<ThreadOutline, CoreError> {
        stored(self.store.outline_async(id).await)
    }

    /// `outline` caught up with what was appended since it was read (only the new records
    /// are read); `None` when nothing was. The outline is shared with the blocking pool,
    /// not copied: a long thread's outline holds all its records' text.
    pub async fn outline_update(
        &self,
        outline: &Arc<ThreadOutline>,
    ) -> Result<Option<ThreadOutline>, CoreError> {
        let (store, outline) = (self.store.clone(), outline.clone());
        let updated = tokio::task::spawn_blocking(move || store.outline_update(&outline))
            .await
            .map_err(|e| {
                CoreError::Store(format!("reading the thread's new records failed: {e}"))
            })?;
        stored(updated)
    }

    /// What turn `turn_id` of thread `thread` is now (see [`TurnState`]), read from the
    /// store: any process sharing it answers the same. `None` when the thread has no such
    /// turn. Reads the thread's outline; to ask about a thread again and again, keep its
    /// outline and use [`StoredThreads::turn_state_in`].
    pub async fn turn_state(
        &self,
        thread: &ThreadId,
        turn_id: &str,
    ) -> Result<Option<TurnState>, CoreError> {
        let outline = self.outline(thread).await?;
        self.turn_state_in(&outline, turn_id).await
    }

    /// [`StoredThreads::turn_state`] from an outline the caller keeps (caught up with
    /// [`StoredThreads::outline_update`]): parses only the records the answer needs, and
    /// for a turn with no end record asks the store whether a process holds the thread.
    ///
    /// "Nobody holds the thread" is asked after the outline was read, and a process that
    /// parks or ends the turn writes its last records before it lets the thread go: so a
    /// turn that looks orphaned is read again, and it is only if the thread's records did
    /// not grow meanwhile (else the newer outline answers, e.g. parked or completed).
    pub async fn turn_state_in(
        &self,
        outline: &ThreadOutline,
        turn_id: &str,
    ) -> Result<Option<TurnState>, CoreError> {
        let state = self.turn_state_of(outline, turn_id).await?;
        if state != Some(TurnState::Orphaned) {
            return Ok(state);
        }
        let mut seen = outline.record_count();
        // Bounded: each round needs another process to have written (a resume, a park).
        for _ in 0..ORPHAN_REREADS {
            let fresh = self.outline(&outline.thread_id()).await?;
            if fresh.record_count() == seen {
                return Ok(state);
            }
            seen = fresh.record_count();
            let state = self.turn_state_of(&fresh, turn_id).await?;
            if state != Some(TurnState::Orphaned) {
                return Ok(state);
            }
        }
        Ok(state)
    }

    /// [`StoredThreads::turn_state_in`] as `outline` alone says (with the holder asked now).
    async fn turn_state_of(
        &self,
        outline: &ThreadOutline,
        turn_id: &str,
    ) -> Result<Option<TurnState>, CoreError> {
        let Some(span) = outline.turns().iter().rev().find(|t| t.id == turn_id) else {
            return Ok(None);
        };
        let thread = outline.thread_id();
        let held = async || stored(self.store.is_held_async(&thread).await);
        let now = chrono::Utc::now().timestamp();
        crate::turn_state::turn_state(outline, span, now, held)
            .await
            .map(Some)
    }

    /// Sets the thread's name; `None` or a blank name clears it (names are trimmed).
    pub async fn set_name(&self, id: &ThreadId, name: Option<String>) -> Result<(), CoreError> {
        stored(self.store.set_name_async(id, name).await)
    }

    /// Archives the thread (hidden from [`StoredThreads::list`] unless asked for) or
    /// unarchives it.
    pub async fn set_archived(&self, id: &ThreadId, archived: bool) -> Result<(), CoreError> {
        stored(self.store.set_archived_async(id, archived).await)
    }

    /// Deletes the thread for good: its records and its index entry. Stop it first if it
    /// is loaded.
    pub async fn delete(&self, id: &ThreadId) -> Result<(), CoreError> {
        stored(self.store.delete_async(id).await)
    }
}

/// How many times a turn that looks orphaned is read again while its thread keeps growing.
const ORPHAN_REREADS: usize = 4;

/// A store operation's result in the engine's terms: a missing or busy thread keeps its
/// kind, a request the store refuses as asked is the caller's, anything else is a store
/// failure.
pub(crate) fn stored<T>(r: Result<T, StoreError>) -> Result<T, CoreError> {
    match r {
        Ok(v) => Ok(v),
        Err(StoreError::NotFound(id)) => Err(CoreError::ThreadNotFound(id)),
        Err(StoreError::Busy { id, path }) => Err(CoreError::ThreadBusy {
            id,
            message: StoreError::Busy { id, path }.to_string(),
        }),
        Err(e @ (StoreError::BadCursor(_) | StoreError::Invalid(_))) => {
            Err(CoreError::StoreRequest(e.to_string()))
        }
        Err(e) => Err(CoreError::Store(e.to_string())),
    }
}
