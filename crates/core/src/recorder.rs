//! Where a thread's durable record goes. The engine only needs this narrow interface, so
//! storage (rollout files + index) can change without touching the turn loop.

use oi_protocol::config_types::{AskForApproval, ReasoningEffort, SandboxPolicy};
use oi_protocol::models::ResponseItem;
use oi_protocol::protocol::EventMsg;
use oi_thread_store::CompactedItem;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// What a thread's recorder has not saved (yet): read by front ends without waiting for
/// the recorder, which may be blocked on a slow store.
#[derive(Debug, Default)]
pub struct SaveState {
    inner: Mutex<Option<Unsaved>>,
    /// Why the store is not answering, from the moment a write (or a wait for one) ran out
    /// of time until a write succeeds again.
    stalled: Mutex<Option<String>>,
}

/// Records recorded but not in the store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsaved {
    /// Kept in memory and retried: they reach the store once it is back.
    pub pending: usize,
    /// Given up (the store refused them for good, e.g. the thread's lease was taken over):
    /// they are not in the store and will not be.
    pub lost: usize,
    /// The last failure.
    pub error: String,
}

impl SaveState {
    /// `None` when everything recorded so far is in the store.
    pub fn unsaved(&self) -> Option<Unsaved> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    pub(crate) fn set(&self, state: Option<Unsaved>) {
        *self.inner.lock().unwrap_or_else(|p| p.into_inner()) = state;
    }

    /// `Some(why)` while the store does not answer: nothing waits for it then (a turn stops
    /// instead of stacking one timeout on another), and records wait in memory for it.
    pub fn stalled(&self) -> Option<String> {
        self.stalled
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub(crate) fn set_stalled(&self, why: Option<String>) {
        *self.stalled.lock().unwrap_or_else(|p| p.into_inner()) = why;
    }
}

impl Unsaved {
    /// One sentence for the user: what is not saved, why, and what happens to it.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if self.pending > 0 {
            parts.push(format!(
                "{} record(s) are not saved yet and are retried while this process runs",
                self.pending
            ));
        }
        if self.lost > 0 {
            parts.push(format!(
                "{} record(s) could not be saved and are lost",
                self.lost
            ));
        }
        format!("{} ({})", parts.join("; "), self.error)
    }
}

/// Why records did not reach the thread's store. The engine shows it as a warning (the
/// thread goes on); what is still unsaved is in [`SaveState`].
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum RecordError {
    /// The store failed a write, in its words. Records it may still take stay queued and
    /// are written again; those it refuses for good are counted as lost.
    #[error("{0}")]
    Store(String),
    /// After a flush, records are still not in the store: how many, and why.
    #[error("{0}")]
    Unsaved(String),
    /// More records waited for the store than are kept; later ones are lost.
    #[error("more than {0} records are waiting for the store")]
    Backlog(usize),
    /// The thread's writer has stopped: nothing recorded from now on is saved.
    #[error("the thread's writer stopped; later records are not saved")]
    WriterGone,
    /// The thread's writer could not start.
    #[error("cannot start the thread's writer: {0}")]
    Start(String),
    /// The store did not answer in time (a frozen or unreachable database): nothing waits
    /// for it until it answers again (see [`SaveState::stalled`]).
    #[error("{0}")]
    NotAnswering(String),
}

/// Receives everything a thread must persist. Failures come back through the return value;
/// the engine turns them into warnings.
pub trait Recorder: Send {
    /// A conversation item that joined the history (what resume rebuilds it from).
    fn record_item(&mut self, item: &ResponseItem) -> Result<(), RecordError>;
    /// An event that belongs in the stored thread (see `is_persisted`).
    fn record_event(&mut self, event: &EventMsg) -> Result<(), RecordError>;
    /// The settings a turn starts with (cwd, policies, model), written before its events.
    fn record_turn_context(
        &mut self,
        turn_id: &str,
        cwd: &Path,
        approval_policy: AskForApproval,
        sandbox_policy: &SandboxPolicy,
        model: &str,
        effort: Option<ReasoningEffort>,
    ) -> Result<(), RecordError>;
    /// The history was compacted: `item.replacement_history` replaces everything before.
    fn record_compacted(&mut self, item: &CompactedItem) -> Result<(), RecordError> {
        let _ = item;
        Ok(())
    }
    /// A record of a parked turn (`turn_parked`, `turn_unparked`), queued like an event;
    /// the engine flushes before it reports the park or runs what was answered.
    fn record_park(&mut self, item: &oi_thread_store::RolloutItem) -> Result<(), RecordError> {
        let _ = item;
        Ok(())
    }
    /// Called at shutdown, and at the end of a turn by recorders that cannot
    /// [`Recorder::start_flush`].
    fn flush(&mut self) -> Result<(), RecordError>;
    /// Starts a flush whose end the caller awaits without holding the recorder (or any
    /// lock): the turn's end waits for the disk or the database on no runtime worker.
    fn start_flush(&mut self) -> FlushWait {
        FlushWait::Done(self.flush())
    }
    /// Records `item` without waiting for it to be written; the caller waits for the whole
    /// batch with [`Recorder::start_written`].
    fn record_item_unwaited(&mut self, item: &ResponseItem) -> Result<(), RecordError> {
        self.record_item(item)
    }
    /// Starts waiting until everything recorded so far is written (to the OS, not fsynced),
    /// awaited like [`Recorder::start_flush`].
    fn start_written(&mut self) -> FlushWait {
        FlushWait::Done(Ok(()))
    }
    /// The first failure since the last report, if any (after a [`Recorder::start_flush`]).
    fn take_failure(&mut self) -> Result<(), RecordError> {
        Ok(())
    }
    /// Records `event` without the flush that [`Recorder::record_event`] does for an event
    /// that ends a turn; the caller flushes with [`Recorder::start_flush`].
    fn record_event_unflushed(&mut self, event: &EventMsg) -> Result<(), RecordError> {
        self.record_event(event)
    }
    /// Stops recording (at shutdown): once the returned wait ends, everything recorded is
    /// written (one last try for records still unsaved) and the thread's writer lock or
    /// lease is given back. Nothing recorded afterwards is saved. Recorders with nothing
    /// to wait for finish when dropped.
    fn close(&mut self) -> CloseWait {
        CloseWait::Done
    }
    /// The rollout file this recorder writes, if it writes one.
    fn path(&self) -> Option<PathBuf>;
    /// What is recorded but not (yet) in the store, kept current by the recorder.
    fn save_state(&self) -> Arc<SaveState> {
        Arc::new(SaveState::default())
    }
}

/// A flush in progress (see [`Recorder::start_flush`]).
pub enum FlushWait {
    /// Already done, with this result.
    Done(Result<(), RecordError>),
    /// The writer answers on this channel when the records are durable.
    Pending(tokio::sync::oneshot::Receiver<Result<(), RecordError>>),
    /// As `Pending`, given up after `bound`: the store is then taken as not answering
    /// (recorded in `state`), so the next wait does not wait again.
    Bounded {
        rx: tokio::sync::oneshot::Receiver<Result<(), RecordError>>,
        bound: std::time::Duration,
        state: Arc<SaveState>,
    },
}

impl FlushWait {
    /// The flush's result; a writer that went away is an error.
    pub async fn wait(self) -> Result<(), RecordError> {
        match self {
            FlushWait::Done(r) => r,
            FlushWait::Pending(rx) => rx.await.unwrap_or(Err(RecordError::WriterGone)),
            FlushWait::Bounded { rx, bound, state } => {
                match tokio::time::timeout(bound, rx).await {
                    Ok(r) => r.unwrap_or(Err(RecordError::WriterGone)),
                    Err(_) => Err(not_answering(&state, bound)),
                }
            }
        }
    }
}

/// A recorder stopping (see [`Recorder::close`]).
pub enum CloseWait {
    /// Nothing to wait for.
    Done,
    /// The writer task, which ends once it has written everything and closed the store's
    /// writer; waited for at most `bound` (a store with a bound on its operations), after
    /// which it goes on alone.
    Pending {
        task: tokio::task::JoinHandle<()>,
        bound: Option<std::time::Duration>,
    },
}

impl CloseWait {
    /// Waits until the writer has stopped (or its bound ran out).
    pub async fn wait(self) {
        let CloseWait::Pending { task, bound } = self else {
            return;
        };
        let ended = match bound {
            None => task.await,
            Some(bound) => match tokio::time::timeout(bound, task).await {
                Ok(ended) => ended,
                Err(_) => {
                    tracing::info!(
                        "the thread's store is not answering; its writer keeps trying in the \
                         background"
                    );
                    return;
                }
            },
        };
        if ended.is_err() {
            oi_thread_store::notice!(
                "the thread's writer stopped abnormally; its last records may be lost"
            );
        }
    }
}

/// Marks the store as not answering after a wait of `bound` for it ran out.
pub(crate) fn not_answering(state: &SaveState, bound: std::time::Duration) -> RecordError {
    let why = state.stalled().unwrap_or_else(|| {
        format!(
            "the thread store did not answer within {} s ([thread_store] statement_timeout_sec)",
            bound.as_secs()
        )
    });
    state.set_stalled(Some(why.clone()));
    RecordError::NotAnswering(why)
}

/// For ephemeral threads.
pub struct NoopRecorder;

impl Recorder for NoopRecorder {
    fn record_item(&mut self, _: &ResponseItem) -> Result<(), RecordError> {
        Ok(())
    }
    fn record_event(&mut self, _: &EventMsg) -> Result<(), RecordError> {
        Ok(())
    }
    fn record_turn_context(
        &mut self,
        _: &str,
        _: &Path,
        _: AskForApproval,
        _: &SandboxPolicy,
        _: &str,
        _: Option<ReasoningEffort>,
    ) -> Result<(), RecordError> {
        Ok(())
    }
    fn flush(&mut self) -> Result<(), RecordError> {
        Ok(())
    }
    fn path(&self) -> Option<PathBuf> {
        None
    }
}

/// Events worth keeping in a rollout: the store decides (enough to rebuild turns, no deltas).
pub(crate) fn is_persisted(ev: &EventMsg) -> bool {
    oi_thread_store::should_persist_event(ev)
}
