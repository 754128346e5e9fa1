//! The writer task's side: the store's writer and the records it has not saved (see the
//! parent module for the rules it keeps).

use super::{Command, MAX_PENDING, RETRY_AFTER_CLOSE, RETRY_FIRST, RETRY_MAX, Shared, lock};
use crate::recorder::{RecordError, Unsaved};
use oi_thread_store::{RolloutItem, RolloutWriter, StoreError};
use std::sync::Arc;
use std::sync::atomic::Ordering;
use tokio::sync::mpsc::UnboundedReceiver;

pub(super) struct Worker {
    thread: oi_protocol::ThreadId,
    writer: RolloutWriter,
    /// Recorded, not yet in the store, in order.
    pending: Vec<RolloutItem>,
    /// Given up on.
    lost: usize,
    shared: Arc<Shared>,
}

impl Worker {
    pub(super) fn new(writer: RolloutWriter, shared: Arc<Shared>) -> Self {
        Worker {
            thread: writer.thread_id(),
            writer,
            pending: Vec::new(),
            lost: 0,
            shared,
        }
    }

    /// Takes commands until the recorder closes its queue, then writes what is left and
    /// closes the store's writer (flushed, its lock or lease given back).
    pub(super) async fn run(mut self, mut rx: UnboundedReceiver<Command>) {
        let mut retry_in = RETRY_FIRST;
        loop {
            let first = if self.pending.is_empty() {
                match rx.recv().await {
                    Some(c) => c,
                    None => break,
                }
            } else {
                match tokio::time::timeout(retry_in, rx.recv()).await {
                    Ok(Some(c)) => c,
                    Ok(None) => break,
                    Err(_elapsed) => {
                        self.write().await;
                        retry_in = (retry_in * 2).min(RETRY_MAX);
                        continue;
                    }
                }
            };
            let mut next = Some(first);
            // Take what is already queued into one write.
            while let Some(cmd) = next.take() {
                // While the store does not answer, a wait is answered at once: records are
                // retried on the background schedule only (each try costs a whole timeout).
                match cmd {
                    Command::Append(item) => {
                        self.shared.queued.fetch_sub(1, Ordering::Relaxed);
                        self.push(*item);
                    }
                    Command::Written(done) => {
                        self.write_unless_stalled().await;
                        let _ = done.send(());
                    }
                    Command::Flush(done) => {
                        self.write_unless_stalled().await;
                        let _ = done.send(self.flush().await);
                    }
                    Command::WrittenAsync(done) => {
                        self.write_unless_stalled().await;
                        let _ = done.send(Ok(()));
                    }
                    Command::FlushAsync(done) => {
                        self.write_unless_stalled().await;
                        let _ = done.send(self.flush().await);
                    }
                }
                next = rx.try_recv().ok();
            }
            self.write_unless_stalled().await;
            if self.pending.is_empty() {
                retry_in = RETRY_FIRST;
            }
        }
        self.finish(retry_in).await;
    }

    /// The queue is closed: a last try for what is unsaved, then the store's writer is
    /// closed. Records a store that stopped answering missed: nobody waits for this task
    /// any more, so it keeps trying for a while (a server goes on running; the thread's
    /// lease stays here until they are saved or given up). Other failures (a full disk) get
    /// the one last try, as the recorder's close waits for it.
    async fn finish(mut self, mut retry_in: std::time::Duration) {
        self.write().await;
        let closed = tokio::time::Instant::now();
        while !self.pending.is_empty()
            && self.shared.state.stalled().is_some()
            && closed.elapsed() < RETRY_AFTER_CLOSE
        {
            tokio::time::sleep(retry_in).await;
            retry_in = (retry_in * 2).min(RETRY_MAX);
            self.write().await;
        }
        if !self.pending.is_empty() {
            self.lost += std::mem::take(&mut self.pending).len();
            self.publish(None);
            oi_thread_store::notice!(
                "thread {}: {}",
                self.thread,
                self.shared
                    .state
                    .unsaved()
                    .map(|u| u.describe())
                    .unwrap_or_default()
            );
        }
        // Flushes the writer and gives back its lock or lease, off this runtime's worker.
        let Worker { writer, thread, .. } = self;
        if let Err(e) = writer.close_async().await {
            oi_thread_store::notice!("thread {thread}: closing its writer: {e}");
        }
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
        if self.shared.state.unsaved().is_some() {
            self.publish(None);
        }
    }

    /// Tries to write every pending record.
    async fn write(&mut self) {
        let refused = self.shared.refused.swap(0, Ordering::Relaxed);
        if refused > 0 {
            self.lost += refused;
            self.publish(Some(RecordError::Backlog(MAX_PENDING).to_string()));
        }
        if self.pending.is_empty() {
            return;
        }
        match self.writer.append_all_async(&self.pending).await {
            Ok(()) => {
                self.pending.clear();
                self.shared.state.set_stalled(None);
                self.publish(None);
            }
            Err(e) => self.failed_with(&e),
        }
    }

    /// [`Worker::write`], unless the store is not answering (see the module docs).
    async fn write_unless_stalled(&mut self) {
        if self.shared.state.stalled().is_none() {
            self.write().await;
        }
    }

    async fn flush(&mut self) -> Result<(), RecordError> {
        if let Err(e) = self.writer.flush_index_async().await {
            self.failed_with(&e);
        }
        match self.shared.state.unsaved() {
            Some(u) => Err(RecordError::Unsaved(u.describe())),
            None => Ok(()),
        }
    }

    fn failed_with(&mut self, e: &StoreError) {
        let state = &self.shared.state;
        if matches!(e, StoreError::Timeout(_)) {
            state.set_stalled(Some(e.to_string()));
        }
        let was_saved = state.unsaved().is_none();
        if !e.is_transient() {
            self.lost += std::mem::take(&mut self.pending).len();
        }
        let text = e.to_string();
        self.publish(Some(text.clone()));
        if was_saved || !e.is_transient() {
            oi_thread_store::notice!("thread {}: {text}", self.thread);
            lock(&self.shared.failed).get_or_insert(RecordError::Store(text));
        }
    }

    /// Updates the shared state; `error` replaces the last one (kept when `None`).
    fn publish(&self, error: Option<String>) {
        let state = &self.shared.state;
        if self.pending.is_empty() && self.lost == 0 {
            state.set(None);
            return;
        }
        let error = error
            .or_else(|| state.unsaved().map(|u| u.error))
            .unwrap_or_default();
        state.set(Some(Unsaved {
            pending: self.pending.len(),
            lost: self.lost,
            error,
        }));
    }
}
