//! The [`Recorder`] of persisted threads: records go to the thread's writer, a task on the
//! process's store-writer runtime, through a channel, so the engine's `send()` never writes
//! files or waits on a database while it holds the session's locks, and a loaded thread
//! costs no OS thread of its own (see [`writers`]).
//!
//! Order and durability: records are written in the order they were recorded, batched when
//! several are waiting. Events are queued and written in the background, with two waits
//! where a crash or a reader must find them:
//! * history items (one batch per model response) are written before they join the history
//!   (`start_written`, or `record_item`), so a call the engine is about to run is in the
//!   rollout even if the process is killed during it (resume then gives it an "aborted"
//!   output);
//! * a record that ends a turn (`task_complete`, `turn_aborted`, a fatal `error`) is flushed
//!   (fsync and index, or committed) before the engine publishes it (`start_flush`, or
//!   `record_event`): readers of a rollout right after a turn see the whole turn.
//!
//! A failed write is not the end of its records: they stay queued, in order, and are
//! written again before anything newer, on the next record, at the next flush, and every
//! few seconds while any wait ([`RETRY_FIRST`] doubling up to [`RETRY_MAX`]), so a store
//! that comes back (a restarted database, a disk with space again) gets the whole thread.
//! What is not in the store is always known ([`SaveState`]): front ends read it at the end
//! of a turn and tell the client, rather than report a turn as saved that is not. Records
//! the store refuses for good (the thread's lease was taken over by another process) are
//! dropped and counted as lost; so are records beyond [`MAX_PENDING`], and those still
//! queued when the recorder is closed and a last try fails.
//!
//! The first failure after a success is returned by the next call, which the engine
//! reports as a warning; a flush that leaves records unsaved returns an error too.
//!
//! The engine awaits those two waits (`start_written`, `start_flush`: the writer answers on
//! a oneshot) with no lock held, so a slow store stalls the turn that writes and nothing
//! else, and closes the recorder with [`Recorder::close`], awaited. The blocking forms
//! remain (`flush`, dropping a recorder not closed) for code off the runtime; they hand the
//! worker's other tasks to another thread meanwhile (`block_in_place`), and never wait for
//! themselves: the writers run on their own runtime.
//!
//! A store with a bound on its operations (PostgreSQL's `statement_timeout_sec`) that does
//! not answer within it is *stalled* ([`SaveState::stalled`]) until a write succeeds again.
//! Waits then stop stacking: every wait is bounded by one statement timeout plus
//! [`STALL_MARGIN`], and while stalled nothing waits at all — waits answer at once, the writer
//! retries only on its background schedule, the turn that writes is stopped by the engine,
//! and closing the recorder does not wait for the writer, which keeps trying for
//! [`RETRY_AFTER_CLOSE`] on its own (and holds the thread's lease meanwhile, so no other
//! process takes a thread whose records are not all saved).

mod worker;

use crate::recorder::{CloseWait, FlushWait, RecordError, Recorder, SaveState, not_answering};
use oi_protocol::config_types::{AskForApproval, ReasoningEffort, SandboxPolicy};
use oi_protocol::models::ResponseItem;
use oi_protocol::protocol::EventMsg;
use oi_thread_store::{CompactedItem, RolloutItem, RolloutWriter, TurnContextItem};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, sync_channel};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use worker::Worker;

/// Records kept for the store at most, queued for the writer or waiting for a retry; past
/// this, new ones are counted as lost (memory stays bounded while the store is stuck).
const MAX_PENDING: usize = 50_000;
/// First wait before retrying unsaved records in the background, doubled after each
/// failed try up to [`RETRY_MAX`].
const RETRY_FIRST: Duration = Duration::from_secs(1);
const RETRY_MAX: Duration = Duration::from_secs(30);
/// What a wait for a bounded store may take beyond its bound (the writer's own work).
const STALL_MARGIN: Duration = Duration::from_secs(2);
/// How long a writer whose recorder was closed keeps retrying unsaved records.
const RETRY_AFTER_CLOSE: Duration = Duration::from_secs(600);
/// Threads of the writers' blocking pool at most (local files are written there): the
/// number of rollouts written or fsynced at the same moment, whatever the number of threads.
const MAX_WRITING_THREADS: usize = 16;

/// The runtime every thread's writer is a task on: one worker (writers mostly wait) and a
/// bounded blocking pool for the local files, whose threads end when idle.
///
/// Apart from the engine's runtime, so that a blocking wait for a writer (a recorder
/// dropped, a sync flush, a task of a current-thread runtime) can never be the thread the
/// writer needed, and a burst of turn ends on thousands of threads cannot grow the
/// process's threads beyond [`MAX_WRITING_THREADS`]. A PostgreSQL writer's operations still
/// run on the store's own runtime; the writer task only awaits them.
fn writers() -> Result<&'static tokio::runtime::Handle, RecordError> {
    static RUNTIME: OnceLock<std::io::Result<tokio::runtime::Runtime>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .max_blocking_threads(MAX_WRITING_THREADS)
                .thread_name("oi-store-writer")
                .enable_all()
                .build()
        })
        .as_ref()
        .map(tokio::runtime::Runtime::handle)
        .map_err(|e| RecordError::Start(e.to_string()))
}

enum Command {
    Append(Box<RolloutItem>),
    /// Write everything queued (to the OS: survives a killed process) and answer.
    Written(SyncSender<()>),
    /// Write everything queued, make it durable (fsync, index), and answer.
    Flush(SyncSender<Result<(), RecordError>>),
    /// [`Command::Written`] answered to an async waiter.
    WrittenAsync(oneshot::Sender<Result<(), RecordError>>),
    /// [`Command::Flush`] answered to an async waiter.
    FlushAsync(oneshot::Sender<Result<(), RecordError>>),
}

/// What the recorder and its writer task share.
struct Shared {
    /// The first failure (after a success) not yet reported.
    failed: Mutex<Option<RecordError>>,
    state: Arc<SaveState>,
    /// Records queued for the writer and not yet taken by it.
    queued: AtomicUsize,
    /// Records refused because [`MAX_PENDING`] were queued already (counted as lost by the
    /// writer).
    refused: AtomicUsize,
}

/// Persists a thread through its [`RolloutWriter`], owned by a writer task.
pub(crate) struct StoreRecorder {
    tx: Option<mpsc::UnboundedSender<Command>>,
    shared: Arc<Shared>,
    path: Option<PathBuf>,
    /// Answered when the writer is done (its writer closed: lock or lease released).
    finished: Receiver<()>,
    /// The writer task, until it is closed.
    task: Option<tokio::task::JoinHandle<()>>,
    /// How long a wait for the writer may take: the store's bound plus [`STALL_MARGIN`];
    /// `None` for a store without one (local files).
    bound: Option<Duration>,
}

impl StoreRecorder {
    pub(crate) fn new(writer: RolloutWriter) -> Result<Self, RecordError> {
        let runtime = writers()?;
        let path = Some(writer.path().to_path_buf()).filter(|p| !p.as_os_str().is_empty());
        let bound = writer.answer_bound().map(|b| b + STALL_MARGIN);
        let (tx, rx) = mpsc::unbounded_channel();
        let (done_tx, finished) = sync_channel(1);
        let shared = Arc::new(Shared {
            failed: Mutex::new(None),
            state: Arc::new(SaveState::default()),
            queued: AtomicUsize::new(0),
            refused: AtomicUsize::new(0),
        });
        let worker = Worker::new(writer, shared.clone());
        let task = runtime.spawn(async move {
            worker.run(rx).await;
            let _ = done_tx.send(());
        });
        Ok(StoreRecorder {
            tx: Some(tx),
            shared,
            path,
            finished,
            task: Some(task),
            bound,
        })
    }

    fn state(&self) -> &SaveState {
        &self.shared.state
    }

    /// `Err` at once while the store is not answering (nothing waits for it then).
    fn not_stalled(&self) -> Result<(), RecordError> {
        match self.state().stalled() {
            Some(why) => Err(RecordError::NotAnswering(why)),
            None => Ok(()),
        }
    }

    /// Waits for the writer's answer on `rx`, at most [`StoreRecorder::bound`].
    fn answer<T>(&self, rx: &Receiver<T>) -> Result<T, RecordError> {
        match self.bound {
            None => rx.recv().map_err(|_| RecordError::WriterGone),
            Some(bound) => match rx.recv_timeout(bound) {
                Ok(v) => Ok(v),
                Err(RecvTimeoutError::Timeout) => Err(not_answering(self.state(), bound)),
                Err(RecvTimeoutError::Disconnected) => Err(RecordError::WriterGone),
            },
        }
    }

    fn failure(&self) -> Result<(), RecordError> {
        match lock(&self.shared.failed).take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn send(&self, command: Command) -> Result<(), RecordError> {
        let tx = self.tx.as_ref().ok_or(RecordError::WriterGone)?;
        tx.send(command).map_err(|_| RecordError::WriterGone)
    }

    /// Queues `item` for the writer; never waits. Past [`MAX_PENDING`] queued records the
    /// record is refused and counted as lost (the writer publishes it).
    fn enqueue(&mut self, item: RolloutItem) -> Result<(), RecordError> {
        if self.shared.queued.load(Ordering::Relaxed) >= MAX_PENDING {
            self.shared.refused.fetch_add(1, Ordering::Relaxed);
            return self.failure();
        }
        self.shared.queued.fetch_add(1, Ordering::Relaxed);
        if let Err(e) = self.send(Command::Append(Box::new(item))) {
            self.shared.queued.fetch_sub(1, Ordering::Relaxed);
            return Err(e);
        }
        self.failure()
    }

    /// A flush's answer while the store is not answering (nothing waits then): what is
    /// missing, and why; the records wait in memory for the store. `None` otherwise.
    fn stalled_flush(&self) -> Option<Result<(), RecordError>> {
        self.state().stalled()?;
        Some(match self.state().unsaved() {
            Some(u) => Err(RecordError::Unsaved(u.describe())),
            None => self.not_stalled(),
        })
    }

    /// Waits until everything queued so far is written (not fsynced).
    fn wait_written(&mut self) -> Result<(), RecordError> {
        self.not_stalled()?;
        let (done_tx, done_rx) = sync_channel(1);
        self.send(Command::Written(done_tx))?;
        wait_off_worker(|| self.answer(&done_rx))?;
        self.failure()
    }

    /// Queues `command` with a fresh answer channel, for a wait that holds no lock.
    fn start_wait(
        &mut self,
        command: impl FnOnce(oneshot::Sender<Result<(), RecordError>>) -> Command,
    ) -> FlushWait {
        if let Err(e) = self.not_stalled() {
            return FlushWait::Done(Err(e));
        }
        let (done_tx, done_rx) = oneshot::channel();
        match (self.send(command(done_tx)), self.bound) {
            (Ok(()), None) => FlushWait::Pending(done_rx),
            (Ok(()), Some(bound)) => FlushWait::Bounded {
                rx: done_rx,
                bound,
                state: self.shared.state.clone(),
            },
            (Err(e), _) => FlushWait::Done(Err(e)),
        }
    }
}

/// Runs a blocking wait; on a worker of a multi-threaded runtime, hands the worker's other
/// tasks to another thread meanwhile.
fn wait_off_worker<T>(f: impl FnOnce() -> T) -> T {
    match tokio::runtime::Handle::try_current() {
        Ok(h) if h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(f)
        }
        _ => f(),
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Recorder for StoreRecorder {
    fn record_item(&mut self, item: &ResponseItem) -> Result<(), RecordError> {
        self.enqueue(RolloutItem::ResponseItem(item.clone()))?;
        self.wait_written()
    }

    fn record_event(&mut self, event: &EventMsg) -> Result<(), RecordError> {
        self.enqueue(RolloutItem::EventMsg(event.clone()))?;
        if event.ends_turn() {
            self.flush()?;
        }
        Ok(())
    }

    fn take_failure(&mut self) -> Result<(), RecordError> {
        self.failure()
    }

    fn record_park(&mut self, item: &RolloutItem) -> Result<(), RecordError> {
        self.enqueue(item.clone())
    }

    fn record_event_unflushed(&mut self, event: &EventMsg) -> Result<(), RecordError> {
        self.enqueue(RolloutItem::EventMsg(event.clone()))
    }

    fn record_item_unwaited(&mut self, item: &ResponseItem) -> Result<(), RecordError> {
        self.enqueue(RolloutItem::ResponseItem(item.clone()))
    }

    fn start_written(&mut self) -> FlushWait {
        self.start_wait(Command::WrittenAsync)
    }

    fn start_flush(&mut self) -> FlushWait {
        match self.stalled_flush() {
            Some(r) => FlushWait::Done(r),
            None => self.start_wait(Command::FlushAsync),
        }
    }

    fn record_turn_context(
        &mut self,
        turn_id: &str,
        cwd: &Path,
        approval_policy: AskForApproval,
        sandbox_policy: &SandboxPolicy,
        model: &str,
        effort: Option<ReasoningEffort>,
    ) -> Result<(), RecordError> {
        self.enqueue(RolloutItem::TurnContext(TurnContextItem {
            turn_id: turn_id.to_string(),
            cwd: cwd.to_path_buf(),
            approval_policy,
            sandbox_policy: sandbox_policy.clone(),
            model: model.to_string(),
            effort,
        }))
    }

    fn record_compacted(&mut self, item: &CompactedItem) -> Result<(), RecordError> {
        self.enqueue(RolloutItem::Compacted(item.clone()))
    }

    fn flush(&mut self) -> Result<(), RecordError> {
        if let Some(r) = self.stalled_flush() {
            return r;
        }
        let (done_tx, done_rx) = sync_channel(1);
        self.send(Command::Flush(done_tx))?;
        let flushed = wait_off_worker(|| self.answer(&done_rx))?;
        let reported = self.failure();
        flushed?;
        reported
    }

    /// Stops the writer: once the wait ends, everything recorded is written and the store's
    /// writer closed (its lock or lease given back). Not while the store does not answer,
    /// nor longer than one bound: the writer then goes on alone (see the module docs).
    fn close(&mut self) -> CloseWait {
        self.tx.take();
        let Some(task) = self.task.take() else {
            return CloseWait::Done;
        };
        if self.state().stalled().is_some() {
            return CloseWait::Done;
        }
        CloseWait::Pending {
            task,
            bound: self.bound,
        }
    }

    fn path(&self) -> Option<PathBuf> {
        self.path.clone()
    }

    fn save_state(&self) -> Arc<SaveState> {
        self.shared.state.clone()
    }
}

impl Drop for StoreRecorder {
    /// A recorder not closed ([`Recorder::close`]) closes its queue and waits for the
    /// writer to finish, as closing does, blocking: everything recorded is written (records
    /// the store misses are retried), and the thread's writer lock or lease is released,
    /// before the recorder is gone. Not while the store does not answer, nor longer than
    /// one bound: the writer then goes on alone (see the module docs).
    fn drop(&mut self) {
        self.tx.take();
        if self.task.take().is_none() {
            return;
        }
        let finished = match (self.state().stalled(), self.bound) {
            (Some(_), _) => self
                .finished
                .try_recv()
                .map_err(|_| RecvTimeoutError::Timeout),
            (None, Some(bound)) => wait_off_worker(|| self.finished.recv_timeout(bound)),
            (None, None) => {
                wait_off_worker(|| self.finished.recv()).map_err(|_| RecvTimeoutError::Disconnected)
            }
        };
        match finished {
            Ok(()) => {}
            Err(RecvTimeoutError::Timeout) => tracing::info!(
                "the thread's store is not answering; its writer keeps trying in the background"
            ),
            Err(RecvTimeoutError::Disconnected) => oi_thread_store::notice!(
                "the thread's writer stopped abnormally; its last records may be lost"
            ),
        }
    }
}

#[cfg(test)]
mod tests;
