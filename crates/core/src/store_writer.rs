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
//! A failed background write is returned by the next call, which the engine reports as a
//! warning.

use crate::recorder::Recorder;
use oi_protocol::config_types::{AskForApproval, ReasoningEffort, SandboxPolicy};
use oi_protocol::models::ResponseItem;
use oi_protocol::protocol::EventMsg;
use oi_thread_store::{CompactedItem, RolloutItem, RolloutWriter, TurnContextItem};
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

/// Records waiting for the writer before `record_*` blocks (back-pressure on a slow disk or
/// database rather than unbounded memory).
const QUEUE_DEPTH: usize = 1024;

enum Command {
    Append(Box<RolloutItem>),
    /// Write everything queued (to the OS: survives a killed process) and answer.
    Written(SyncSender<()>),
    /// Write everything queued, make it durable (fsync, index), and answer.
    Flush(SyncSender<Result<(), String>>),
}

/// Persists a thread through its [`RolloutWriter`], owned by a dedicated writer thread.
pub(crate) struct StoreRecorder {
    tx: Option<SyncSender<Command>>,
    /// The first background write failure not yet reported.
    failed: Arc<Mutex<Option<String>>>,
    path: Option<PathBuf>,
    worker: Option<JoinHandle<()>>,
}

impl StoreRecorder {
    pub(crate) fn new(writer: RolloutWriter) -> Result<Self, String> {
        let path = Some(writer.path().to_path_buf()).filter(|p| !p.as_os_str().is_empty());
        let (tx, rx) = sync_channel(QUEUE_DEPTH);
        let failed = Arc::new(Mutex::new(None));
        let worker_failed = failed.clone();
        let worker = std::thread::Builder::new()
            .name(format!("oi-rollout-{}", writer.thread_id()))
            .spawn(move || write_loop(writer, rx, worker_failed))
            .map_err(|e| format!("cannot start the thread's writer: {e}"))?;
        Ok(StoreRecorder {
            tx: Some(tx),
            failed,
            path,
            worker: Some(worker),
        })
    }

    fn take_failure(&self) -> Result<(), String> {
        match self.failed.lock().unwrap_or_else(|p| p.into_inner()).take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }

    fn enqueue(&mut self, item: RolloutItem) -> Result<(), String> {
        let tx = self.tx.as_ref().ok_or_else(writer_gone)?;
        tx.send(Command::Append(Box::new(item)))
            .map_err(|_| writer_gone())?;
        self.take_failure()
    }
}

impl StoreRecorder {
    /// Waits until everything queued so far is written (not fsynced).
    fn wait_written(&mut self) -> Result<(), String> {
        let tx = self.tx.as_ref().ok_or_else(writer_gone)?;
        let (done_tx, done_rx) = sync_channel(1);
        tx.send(Command::Written(done_tx))
            .map_err(|_| writer_gone())?;
        done_rx.recv().map_err(|_| writer_gone())?;
        self.take_failure()
    }
}

fn writer_gone() -> String {
    "the thread's writer stopped; later records are not saved".into()
}

impl Recorder for StoreRecorder {
    fn record_item(&mut self, item: &ResponseItem) -> Result<(), String> {
        self.enqueue(RolloutItem::ResponseItem(item.clone()))?;
        self.wait_written()
    }

    fn record_event(&mut self, event: &EventMsg) -> Result<(), String> {
        self.enqueue(RolloutItem::EventMsg(event.clone()))?;
        if event.ends_turn() {
            self.flush()?;
        }
        Ok(())
    }

    fn record_turn_context(
        &mut self,
        turn_id: &str,
        cwd: &Path,
        approval_policy: AskForApproval,
        sandbox_policy: &SandboxPolicy,
        model: &str,
        effort: Option<ReasoningEffort>,
    ) -> Result<(), String> {
        self.enqueue(RolloutItem::TurnContext(TurnContextItem {
            turn_id: turn_id.to_string(),
            cwd: cwd.to_path_buf(),
            approval_policy,
            sandbox_policy: sandbox_policy.clone(),
            model: model.to_string(),
            effort,
        }))
    }

    fn record_compacted(&mut self, item: &CompactedItem) -> Result<(), String> {
        self.enqueue(RolloutItem::Compacted(item.clone()))
    }

    fn flush(&mut self) -> Result<(), String> {
        let tx = self.tx.as_ref().ok_or_else(writer_gone)?;
        let (done_tx, done_rx) = sync_channel(1);
        tx.send(Command::Flush(done_tx))
            .map_err(|_| writer_gone())?;
        done_rx.recv().map_err(|_| writer_gone())??;
        self.take_failure()
    }

    fn path(&self) -> Option<PathBuf> {
        self.path.clone()
    }
}

impl Drop for StoreRecorder {
    /// Closes the queue and waits for the writer to finish: everything recorded is written,
    /// and the thread's writer lock or lease is released, before the recorder is gone.
    fn drop(&mut self) {
        self.tx.take();
        if let Some(worker) = self.worker.take()
            && worker.join().is_err()
        {
            tracing::warn!("the thread's writer panicked; its last records may be lost");
        }
    }
}

fn write_loop(
    mut writer: RolloutWriter,
    rx: Receiver<Command>,
    failed: Arc<Mutex<Option<String>>>,
) {
    let id = writer.thread_id();
    let report = |e: String| {
        tracing::warn!("thread {id}: {e}");
        failed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_or_insert(e);
    };
    let mut batch: Vec<RolloutItem> = Vec::new();
    let write = |writer: &mut RolloutWriter, batch: &mut Vec<RolloutItem>| {
        if batch.is_empty() {
            return;
        }
        if let Err(e) = writer.append_all(batch) {
            report(e.to_string());
        }
        batch.clear();
    };
    while let Ok(first) = rx.recv() {
        let mut next = Some(first);
        // Drain what is already queued into one write.
        while let Some(cmd) = next.take() {
            match cmd {
                Command::Append(item) => batch.push(*item),
                Command::Written(done) => {
                    write(&mut writer, &mut batch);
                    let _ = done.send(());
                }
                Command::Flush(done) => {
                    write(&mut writer, &mut batch);
                    let _ = done.send(writer.flush_index().map_err(|e| e.to_string()));
                }
            }
            next = rx.try_recv().ok();
        }
        write(&mut writer, &mut batch);
    }
    write(&mut writer, &mut batch);
    // Dropping the writer flushes it and gives back its lock or lease.
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
}
