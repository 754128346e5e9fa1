//! The [`Recorder`] of persisted threads: records go to a writer thread through a bounded
//! channel, so the engine's `send()` never writes files or waits on a database while it
//! holds the session's locks.
//!
//! Order and durability: records are written in the order they were recorded, batched when
//! several are waiting. Events are queued and written in the background, with two waits
//! where a crash or a reader must find them:
//! * history items (one batch per model response) are written before `record_item`
//!   returns, so a call the engine is about to run is in the rollout even if the process is
//!   killed during it (resume then gives it an "aborted" output);
//! * a record that ends a turn (`task_complete`, `turn_aborted`, a fatal `error`) is flushed
//!   (fsync, index) before `record_event` returns, so it is durable by the time the engine
//!   emits the event: readers of a rollout right after a turn see the whole turn.
//!
//! A failed write is not the end of its records: they stay queued, in order, and are
//! written again before anything newer, on the next record, at the next flush, and every
//! few seconds while any wait ([`RETRY_FIRST`] doubling up to [`RETRY_MAX`]), so a store
//! that comes back (a restarted database, a disk with space again) gets the whole thread.
//! What is not in the store is always known ([`SaveState`]): front ends read it at the end
//! of a turn and tell the client, rather than report a turn as saved that is not. Records
//! the store refuses for good (the thread's lease was taken over by another process) are
//! dropped and counted as lost; so are records beyond [`MAX_PENDING`], and those still
//! queued when the recorder is dropped and a last try fails.
//!
//! The first failure after a success is returned by the next call, which the engine
//! reports as a warning; a flush that leaves records unsaved returns an error too.
//!
//! The engine awaits those two waits (`start_written`, `start_flush`: the writer answers on
//! a oneshot) with no lock held, so a slow store stalls the turn that writes and nothing
//! else. The blocking forms remain for a full queue and for the flush at shutdown; they hand
//! the worker's other tasks to another thread meanwhile (`block_in_place`).
//!
//! A store with a bound on its operations (PostgreSQL's `statement_timeout_sec`) that does
//! not answer within it is *stalled* ([`SaveState::stalled`]) until a write succeeds again.
//! Waits then stop stacking: every wait is bounded by one statement timeout plus
//! [`STALL_MARGIN`], and while stalled nothing waits at all — waits answer at once, the writer
//! retries only on its background schedule, the turn that writes is stopped by the engine,
//! and dropping the recorder does not wait for the writer, which keeps trying for
//! [`RETRY_AFTER_CLOSE`] on its own (and holds the thread's lease meanwhile, so no other
//! process takes a thread whose records are not all saved).

use crate::recorder::{FlushWait, RecordError, Recorder, SaveState, Unsaved, not_answering};
use oi_protocol::config_types::{AskForApproval, ReasoningEffort, SandboxPolicy};
use oi_protocol::models::ResponseItem;
use oi_protocol::protocol::EventMsg;
use oi_thread_store::{CompactedItem, RolloutItem, RolloutWriter, StoreError, TurnContextItem};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// Records waiting for the writer before `record_*` blocks (back-pressure on a slow disk or
/// database rather than unbounded memory).
const QUEUE_DEPTH: usize = 1024;
/// Records kept for retry at most; past this, new ones are counted as lost.
const MAX_PENDING: usize = 50_000;
/// First wait before retrying unsaved records in the background, doubled after each
/// failed try up to [`RETRY_MAX`].
const RETRY_FIRST: Duration = Duration::from_secs(1);
const RETRY_MAX: Duration = Duration::from_secs(30);
/// What a wait for a bounded store may take beyond its bound (the writer's own work).
const STALL_MARGIN: Duration = Duration::from_secs(2);
/// How long a writer whose recorder was dropped keeps retrying unsaved records.
const RETRY_AFTER_CLOSE: Duration = Duration::from_secs(600);

enum Command {
    Append(Box<RolloutItem>),
    /// Write everything queued (to the OS: survives a killed process) and answer.
    Written(SyncSender<()>),
    /// Write everything queued, make it durable (fsync, index), and answer.
    Flush(SyncSender<Result<(), RecordError>>),
    /// [`Command::Written`] answered to an async waiter.
    WrittenAsync(tokio::sync::oneshot::Sender<Result<(), RecordError>>),
    /// [`Command::Flush`] answered to an async waiter.
    FlushAsync(tokio::sync::oneshot::Sender<Result<(), RecordError>>),
}

/// Persists a thread through its [`RolloutWriter`], owned by a dedicated writer thread.
pub(crate) struct StoreRecorder {
    tx: Option<SyncSender<Command>>,
    /// The first failure (after a success) not yet reported.
    failed: Arc<Mutex<Option<RecordError>>>,
    state: Arc<SaveState>,
    path: Option<PathBuf>,
    worker: Option<JoinHandle<()>>,
    /// Answered when the writer thread is done (its writer dropped: lock or lease released).
    finished: Receiver<()>,
    /// How long a wait for the writer may take: the store's bound plus [`STALL_MARGIN`];
    /// `None` for a store without one (local files).
    bound: Option<Duration>,
}

impl StoreRecorder {
    pub(crate) fn new(writer: RolloutWriter) -> Result<Self, RecordError> {
        let path = Some(writer.path().to_path_buf()).filter(|p| !p.as_os_str().is_empty());
        let bound = writer.answer_bound().map(|b| b + STALL_MARGIN);
        let (tx, rx) = sync_channel(QUEUE_DEPTH);
        let (done_tx, finished) = sync_channel(1);
        let failed = Arc::new(Mutex::new(None));
        let state = Arc::new(SaveState::default());
        let mut worker = Worker {
            writer,
            pending: Vec::new(),
            lost: 0,
            failed: failed.clone(),
            state: state.clone(),
        };
        let worker = std::thread::Builder::new()
            .name(format!("oi-rollout-{}", worker.writer.thread_id()))
            .spawn(move || {
                worker.run(rx);
                drop(worker);
                let _ = done_tx.send(());
            })
            .map_err(|e| RecordError::Start(e.to_string()))?;
        Ok(StoreRecorder {
            tx: Some(tx),
            failed,
            state,
            path,
            worker: Some(worker),
            finished,
            bound,
        })
    }

    /// `Err` at once while the store is not answering (nothing waits for it then).
    fn not_stalled(&self) -> Result<(), RecordError> {
        match self.state.stalled() {
            Some(why) => Err(RecordError::NotAnswering(why)),
            None => Ok(()),
        }
    }

    /// Waits for the writer's answer on `rx`, at most [`StoreRecorder::bound`].
    fn answer<T>(&self, rx: &Receiver<T>) -> Result<T, RecordError> {
        match self.bound {
            None => rx.recv().map_err(|_| writer_gone()),
            Some(bound) => match rx.recv_timeout(bound) {
                Ok(v) => Ok(v),
                Err(RecvTimeoutError::Timeout) => Err(not_answering(&self.state, bound)),
                Err(RecvTimeoutError::Disconnected) => Err(writer_gone()),
            },
        }
    }

    fn failure(&self) -> Result<(), RecordError> {
        match self.failed.lock().unwrap_or_else(|p| p.into_inner()).take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn enqueue(&mut self, item: RolloutItem) -> Result<(), RecordError> {
        let tx = self.tx.as_ref().ok_or_else(writer_gone)?;
        match tx.try_send(Command::Append(Box::new(item))) {
            Ok(()) => {}
            // A full queue means the writer is stuck on the store: wait off the async worker.
            Err(TrySendError::Full(cmd)) => {
                wait_off_worker(|| tx.send(cmd)).map_err(|_| writer_gone())?;
            }
            Err(TrySendError::Disconnected(_)) => return Err(writer_gone()),
        }
        self.failure()
    }
}

impl StoreRecorder {
    /// Waits until everything queued so far is written (not fsynced).
    fn wait_written(&mut self) -> Result<(), RecordError> {
        self.not_stalled()?;
        let tx = self.tx.as_ref().ok_or_else(writer_gone)?;
        let (done_tx, done_rx) = sync_channel(1);
        wait_off_worker(|| {
            tx.send(Command::Written(done_tx))
                .map_err(|_| writer_gone())?;
            self.answer(&done_rx)
        })?;
        self.failure()
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

fn writer_gone() -> RecordError {
    RecordError::WriterGone
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
        self.start_wait(Command::FlushAsync)
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
        if self.state.stalled().is_some() {
            // What is missing, and why: the records wait in memory for the store.
            return match self.state.unsaved() {
                Some(u) => Err(RecordError::Unsaved(u.describe())),
                None => self.not_stalled(),
            };
        }
        let tx = self.tx.as_ref().ok_or_else(writer_gone)?;
        let (done_tx, done_rx) = sync_channel(1);
        let flushed = wait_off_worker(|| {
            tx.send(Command::Flush(done_tx))
                .map_err(|_| writer_gone())?;
            self.answer(&done_rx)
        })?;
        let reported = self.failure();
        flushed?;
        reported
    }

    fn path(&self) -> Option<PathBuf> {
        self.path.clone()
    }

    fn save_state(&self) -> Arc<SaveState> {
        self.state.clone()
    }
}

impl StoreRecorder {
    /// Queues `command` with a fresh answer channel, for a wait that holds no lock.
    fn start_wait(
        &mut self,
        command: impl FnOnce(tokio::sync::oneshot::Sender<Result<(), RecordError>>) -> Command,
    ) -> FlushWait {
        if let Err(e) = self.not_stalled() {
            return FlushWait::Done(Err(e));
        }
        let Some(tx) = self.tx.as_ref() else {
            return FlushWait::Done(Err(writer_gone()));
        };
        let (done_tx, done_rx) = tokio::sync::oneshot::channel();
        let cmd = command(done_tx);
        // The queue only blocks when the writer is stuck on the store (then wait for room
        // off the worker, as `enqueue` does).
        let sent = match tx.try_send(cmd) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(cmd)) => wait_off_worker(|| tx.send(cmd)).map_err(drop),
            Err(TrySendError::Disconnected(_)) => Err(()),
        };
        match (sent, self.bound) {
            (Ok(()), None) => FlushWait::Pending(done_rx),
            (Ok(()), Some(bound)) => FlushWait::Bounded {
                rx: done_rx,
                bound,
                state: self.state.clone(),
            },
            (Err(()), _) => FlushWait::Done(Err(writer_gone())),
        }
    }
}

impl Drop for StoreRecorder {
    /// Closes the queue and waits for the writer to finish: everything recorded is written
    /// (records the store misses are retried), and the thread's writer lock or lease is
    /// released, before the recorder is gone. Not while the store does not answer, nor
    /// longer than one bound: the writer then goes on alone (see the module docs).
    fn drop(&mut self) {
        self.tx.take();
        let Some(worker) = self.worker.take() else {
            return;
        };
        let finished = match (self.state.stalled(), self.bound) {
            (Some(_), _) => self.finished.try_recv().is_ok(),
            (None, Some(bound)) => wait_off_worker(|| self.finished.recv_timeout(bound).is_ok()),
            (None, None) => true,
        };
        if !finished {
            tracing::info!(
                "the thread's store is not answering; its writer keeps trying in the background"
            );
            return;
        }
        if wait_off_worker(|| worker.join()).is_err() {
            oi_thread_store::notice!("the thread's writer panicked; its last records may be lost");
        }
    }
}

/// The writer thread's side: the store's writer and the records it has not saved.
struct Worker {
    writer: RolloutWriter,
    /// Recorded, not yet in the store, in order.
    pending: Vec<RolloutItem>,
    /// Given up on.
    lost: usize,
    failed: Arc<Mutex<Option<RecordError>>>,
    state: Arc<SaveState>,
}

impl Worker {
    fn run(&mut self, rx: Receiver<Command>) {
        let mut retry_in = RETRY_FIRST;
        loop {
            let first = if self.pending.is_empty() {
                match rx.recv() {
                    Ok(c) => c,
                    Err(_) => break,
                }
            } else {
                match rx.recv_timeout(retry_in) {
                    Ok(c) => c,
                    Err(RecvTimeoutError::Timeout) => {
                        self.write();
                        retry_in = (retry_in * 2).min(RETRY_MAX);
                        continue;
                    }
                    Err(RecvTimeoutError::Disconnected) => break,
                }
            };
            let mut next = Some(first);
            // Drain what is already queued into one write.
            while let Some(cmd) = next.take() {
                // While the store does not answer, a wait is answered at once: records are
                // retried on the background schedule only (each try costs a whole timeout).
                match cmd {
                    Command::Append(item) => self.push(*item),
                    Command::Written(done) => {
                        self.write_unless_stalled();
                        let _ = done.send(());
                    }
                    Command::Flush(done) => {
                        self.write_unless_stalled();
                        let _ = done.send(self.flush());
                    }
                    Command::WrittenAsync(done) => {
                        self.write_unless_stalled();
                        let _ = done.send(Ok(()));
                    }
                    Command::FlushAsync(done) => {
                        self.write_unless_stalled();
                        let _ = done.send(self.flush());
                    }
                }
                next = rx.try_recv().ok();
            }
            self.write_unless_stalled();
            if self.pending.is_empty() {
                retry_in = RETRY_FIRST;
            }
        }
        self.write();
        // Closed with records a store that stopped answering missed: nobody waits for this
        // thread any more, so keep trying for a while (a server goes on running; the thread's
        // lease stays here until they are saved or given up). Other failures (a full disk)
        // get the one last try above, as the recorder's drop waits for it.
        let closed = std::time::Instant::now();
        while !self.pending.is_empty()
            && self.state.stalled().is_some()
            && closed.elapsed() < RETRY_AFTER_CLOSE
        {
            std::thread::sleep(retry_in);
            retry_in = (retry_in * 2).min(RETRY_MAX);
            self.write();
        }
        if !self.pending.is_empty() {
            self.lost += std::mem::take(&mut self.pending).len();
            self.publish(None);
            oi_thread_store::notice!(
                "thread {}: {}",
                self.writer.thread_id(),
                self.state
                    .unsaved()
                    .map(|u| u.describe())
                    .unwrap_or_default()
            );
        }
        // Dropping the writer flushes it and gives back its lock or lease.
    }

    fn push(&mut self, item: RolloutItem) {
        if self.pending.len() >= MAX_PENDING {
            self.lost += 1;
            self.publish(Some(RecordError::Backlog(MAX_PENDING).to_string()));
            return;
        }
        self.pending.push(item);
        // Something is unsaved already: keep the count current for front ends (no write is
        // tried while the store does not answer, and the count is published by writes).
        if self.state.unsaved().is_some() {
            self.publish(None);
        }
    }

    /// Tries to write every pending record.
    fn write(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        match self.writer.append_all(&self.pending) {
            Ok(()) => {
                self.pending.clear();
                self.state.set_stalled(None);
                self.publish(None);
            }
            Err(e) => self.failed_with(&e),
        }
    }

    /// [`Worker::write`], unless the store is not answering (see the module docs).
    fn write_unless_stalled(&mut self) {
        if self.state.stalled().is_none() {
            self.write();
        }
    }

    fn flush(&mut self) -> Result<(), RecordError> {
        if let Err(e) = self.writer.flush_index() {
            self.failed_with(&e);
        }
        match self.state.unsaved() {
            Some(u) => Err(RecordError::Unsaved(u.describe())),
            None => Ok(()),
        }
    }

    fn failed_with(&mut self, e: &StoreError) {
        if matches!(e, StoreError::Timeout(_)) {
            self.state.set_stalled(Some(e.to_string()));
        }
        let was_saved = self.state.unsaved().is_none();
        if !e.is_transient() {
            self.lost += std::mem::take(&mut self.pending).len();
        }
        let text = e.to_string();
        self.publish(Some(text.clone()));
        if was_saved || !e.is_transient() {
            oi_thread_store::notice!("thread {}: {text}", self.writer.thread_id());
            self.failed
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .get_or_insert(RecordError::Store(text));
        }
    }

    /// Updates the shared state; `error` replaces the last one (kept when `None`).
    fn publish(&self, error: Option<String>) {
        if self.pending.is_empty() && self.lost == 0 {
            self.state.set(None);
            return;
        }
        let error = error
            .or_else(|| self.state.unsaved().map(|u| u.error))
            .unwrap_or_default();
        self.state.set(Some(Unsaved {
            pending: self.pending.len(),
            lost: self.lost,
            error,
        }));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oi_protocol::protocol::{AgentMessageEvent, TaskCompleteEvent};
    use oi_thread_store::{SessionMeta, SessionSource, ThreadStore};

    fn agent(text: &str) -> EventMsg {
        EventMsg::AgentMessage(AgentMessageEvent {
            message: text.into(),
            phase: None,
            memory_citation: None,
        })
    }

    #[test]
    fn a_turn_end_is_on_disk_when_record_event_returns_and_order_is_kept() {
        let home = tempfile::tempdir().unwrap();
        let store = ThreadStore::open(home.path()).unwrap();
        let meta = SessionMeta::new("/w", "p", "m", SessionSource::Exec);
        let id = meta.id;
        let mut rec = StoreRecorder::new(store.create(meta).unwrap()).unwrap();
        let path = rec.path().unwrap();
        for i in 0..200 {
            rec.record_event(&agent(&format!("line {i}"))).unwrap();
        }
        rec.record_event(&EventMsg::TaskComplete(TaskCompleteEvent {
            turn_id: "t1".into(),
            last_agent_message: None,
            completed_at: None,
            duration_ms: None,
        }))
        .unwrap();
        // No flush, no drop: the turn's end (and all before it) is already in the file.
        let text = std::fs::read_to_string(&path).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines.len(),
            202,
            "session_meta + 200 messages + task_complete"
        );
        assert!(lines[201].contains("\"task_complete\""), "{}", lines[201]);
        for (i, line) in lines[1..201].iter().enumerate() {
            assert!(line.contains(&format!("\"line {i}\"")), "{line}");
        }
        // While the recorder lives, the thread is busy for everyone else.
        assert!(store.resume(&id).is_err());
        drop(rec);
        // Dropping it wrote everything and released the thread.
        let (_w, loaded) = store.resume(&id).unwrap();
        assert_eq!(loaded.items.len(), 201);
    }

    #[test]
    fn records_the_database_missed_are_kept_and_written_when_it_is_back() {
        use oi_thread_store::test_db::PrivateServer;
        use oi_thread_store::{StoreLocation, StoreTimeouts};
        use std::time::{Duration, Instant};
        let Some(pg) = PrivateServer::start("records_the_database_missed_are_kept") else {
            return;
        };
        let home = tempfile::tempdir().unwrap();
        let timeouts = StoreTimeouts {
            connect: Duration::from_secs(3),
            statement: Duration::from_secs(3),
        };
        let location = StoreLocation::Postgres(pg.url(None));
        let store = ThreadStore::open_with(home.path(), &location, timeouts).unwrap();
        let meta = SessionMeta::new("/w", "p", "m", SessionSource::Exec);
        let id = meta.id;
        let mut rec = StoreRecorder::new(store.create(meta).unwrap()).unwrap();
        let state = rec.save_state();
        rec.record_event(&agent("before")).unwrap();
        rec.flush().unwrap();

        // The database goes away mid-turn: the answer and the turn's end are not saved, and
        // the turn's end says so.
        pg.stop().unwrap();
        let _ = rec.record_event(&agent("the answer"));
        let end = rec.record_event(&EventMsg::TaskComplete(TaskCompleteEvent {
            turn_id: "t1".into(),
            last_agent_message: None,
            completed_at: None,
            duration_ms: None,
        }));
        let err = end.unwrap_err();
        assert!(
            matches!(&err, RecordError::Unsaved(text) if text.contains("not saved yet")),
            "{err}"
        );
        let unsaved = state.unsaved().unwrap();
        assert_eq!((unsaved.pending, unsaved.lost), (2, 0), "{unsaved:?}");

        // Back: the writer retries on its own, nothing newer needed.
        pg.start_again().unwrap();
        let deadline = Instant::now() + Duration::from_secs(120);
        while state.unsaved().is_some() {
            assert!(
                Instant::now() < deadline,
                "never retried: {:?}",
                state.unsaved()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        rec.flush().unwrap();
        drop(rec);
        let loaded = store.load(&id).unwrap();
        let texts: Vec<String> = loaded.items.iter().map(|i| format!("{i:?}")).collect();
        assert_eq!(texts.len(), 3, "{texts:?}");
        assert!(texts[0].contains("before"), "{texts:?}");
        assert!(texts[1].contains("the answer"), "{texts:?}");
        assert!(texts[2].contains("TaskComplete"), "{texts:?}");
    }
}

#[cfg(test)]
mod frozen_tests {
    use super::*;
    use oi_protocol::protocol::AgentMessageEvent;
    use oi_thread_store::test_db::PrivateServer;
    use oi_thread_store::{SessionMeta, SessionSource, StoreLocation, StoreTimeouts, ThreadStore};

    fn agent(text: &str) -> EventMsg {
        EventMsg::AgentMessage(AgentMessageEvent {
            message: text.into(),
            phase: None,
            memory_citation: None,
        })
    }

    /// A frozen database (SIGSTOP): the first wait ends after one bound with the store
    /// marked as not answering; from then on nothing waits for it, and once it answers the
    /// records kept meanwhile are written and the mark is gone.
    #[test]
    fn waits_do_not_stack_on_a_frozen_database() {
        let Some(pg) = PrivateServer::start("waits_do_not_stack_on_a_frozen_database") else {
            return;
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        let home = tempfile::tempdir().unwrap();
        let timeouts = StoreTimeouts {
            connect: Duration::from_secs(2),
            statement: Duration::from_secs(2),
        };
        let location = StoreLocation::Postgres(pg.url(None));
        let store = ThreadStore::open_with(home.path(), &location, timeouts).unwrap();
        let meta = SessionMeta::new("/w", "p", "m", SessionSource::Exec);
        let id = meta.id;
        let mut rec = StoreRecorder::new(store.create(meta).unwrap()).unwrap();
        let state = rec.save_state();
        rec.record_event(&agent("before")).unwrap();
        rec.flush().unwrap();

        pg.pause().unwrap();
        rec.record_event_unflushed(&agent("during")).unwrap();
        let first = rt.block_on(rec.start_flush().wait());
        assert!(first.is_err(), "{first:?}");
        let why = state.stalled().expect("marked as not answering");
        assert!(why.contains("did not answer within"), "{why}");
        // Nothing waits any more: the waits answer at once. (Queuing reports the failure
        // not reported yet, once.)
        let _ = rec.record_event_unflushed(&agent("after"));
        assert!(matches!(
            rec.start_written(),
            FlushWait::Done(Err(RecordError::NotAnswering(_)))
        ));
        assert!(matches!(rec.flush(), Err(RecordError::Unsaved(_))));
        // Both records are kept, counted as the writer takes them off the queue.
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while state.unsaved().map(|u| u.pending) != Some(2) {
            assert!(
                std::time::Instant::now() < deadline,
                "{:?}",
                state.unsaved()
            );
            std::thread::sleep(Duration::from_millis(10));
        }

        pg.resume();
        let deadline = std::time::Instant::now() + Duration::from_secs(120);
        while state.unsaved().is_some() || state.stalled().is_some() {
            assert!(
                std::time::Instant::now() < deadline,
                "never written: {:?}",
                state.unsaved()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        rec.flush().unwrap();
        drop(rec);
        let texts: Vec<String> = store
            .load(&id)
            .unwrap()
            .items
            .iter()
            .map(|i| format!("{i:?}"))
            .collect();
        assert_eq!(texts.len(), 3, "{texts:?}");
        assert!(
            texts[1].contains("during") && texts[2].contains("after"),
            "{texts:?}"
        );
    }
}
