//! One listener per connection and thread (as codex-rs's app-server keeps one per thread):
//! subscribed to the thread once, it follows the turns this connection reports — those it
//! started (`turn/start`, `thread/compact/start`, `review/start`), the one running when it
//! resumed the thread, and any that its late steering input started — one after another,
//! each mapped by a [`Pump`] on `oi_core::drive`. Other turns' events are read and dropped.
//!
//! A listener starts with the connection's first turn on the thread and ends when the
//! thread shuts down, the connection unsubscribes from it (after the turn it reports) or
//! the connection closes.

use super::Pump;
use crate::{Conn, lock};
use oi_core::{EventStream, Thread};
use oi_protocol::ThreadId;
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// A turn for a listener to follow.
pub(crate) struct Follow {
    pub turn_id: String,
    pub start: Start,
    /// This connection answers the turn's approvals (it started the turn).
    pub answers: bool,
    /// Nothing is reported before the request that led to the turn is answered.
    pub response_sent: CancellationToken,
}

/// How a listener learns that the turn it is asked to follow runs.
pub(crate) enum Start {
    /// The turn is being started: its start time when it did, `None` when it was refused.
    Starting(oneshot::Receiver<Option<i64>>),
    /// The turn was running when asked: followed from here if it still runs.
    Running { since: i64 },
}

/// This connection's listeners, by thread.
#[derive(Default)]
pub(crate) struct Listeners {
    by_thread: Mutex<HashMap<ThreadId, Listener>>,
    /// Ids of this connection's `turn/steer` inputs: one that arrives as its turn ends
    /// starts a turn of its own, which the listener then follows (nobody else would).
    steered: Mutex<HashSet<String>>,
}

struct Listener {
    follows: mpsc::UnboundedSender<Follow>,
    /// The listener follows a turn now.
    busy: Arc<AtomicBool>,
}

impl Listeners {
    /// Asks the listener of `thread` (started now if there is none) to follow a turn.
    pub(crate) fn follow(&self, conn: &Arc<Conn>, thread: &Arc<Thread>, follow: Follow) {
        let mut by_thread = lock(&self.by_thread);
        let listener = match by_thread.get(&thread.id()) {
            Some(l) if !l.follows.is_closed() => l,
            _ => {
                let listener = spawn(conn.clone(), thread.clone());
                by_thread.insert(thread.id(), listener);
                &by_thread[&thread.id()]
            }
        };
        if listener.follows.send(follow).is_err() {
            tracing::warn!("thread {}: its listener has stopped", thread.id());
        }
    }

    /// Whether this connection follows a turn of `thread` now.
    pub(crate) fn follows(&self, thread: ThreadId) -> bool {
        lock(&self.by_thread)
            .get(&thread)
            .is_some_and(|l| l.busy.load(Ordering::SeqCst))
    }

    pub(crate) fn steered(&self, input_id: String) {
        let mut steered = lock(&self.steered);
        // Ids of inputs that joined their turn are never asked for again; keep few.
        if steered.len() > 64 {
            steered.clear();
        }
        steered.insert(input_id);
    }

    /// Whether turn `id` was started by a steering input of this connection.
    pub(crate) fn take_steered(&self, id: &str) -> bool {
        lock(&self.steered).remove(id)
    }

    /// This connection no longer listens to `thread` (it unsubscribed): its listener ends
    /// once the turn it follows (if any) is reported.
    pub(crate) fn stop(&self, thread: ThreadId) {
        lock(&self.by_thread).remove(&thread);
    }

    fn forget(&self, thread: ThreadId, follows: &mpsc::UnboundedSender<Follow>) {
        let mut by_thread = lock(&self.by_thread);
        if by_thread
            .get(&thread)
            .is_some_and(|l| l.follows.same_channel(follows))
        {
            by_thread.remove(&thread);
        }
    }
}

/// Subscribes to `thread` now (so no turn started after this is missed) and listens.
fn spawn(conn: Arc<Conn>, thread: Arc<Thread>) -> Listener {
    let (tx, rx) = mpsc::unbounded_channel();
    let busy = Arc::new(AtomicBool::new(false));
    let events = thread.subscribe();
    let me = tx.clone();
    let listening = listen(conn.clone(), thread.clone(), events, rx, busy.clone());
    tokio::spawn(async move {
        listening.await;
        conn.listeners.forget(thread.id(), &me);
    });
    Listener { follows: tx, busy }
}

async fn listen(
    conn: Arc<Conn>,
    thread: Arc<Thread>,
    mut events: EventStream,
    mut follows: mpsc::UnboundedReceiver<Follow>,
    busy: Arc<AtomicBool>,
) {
    loop {
        // Asked before the turn it names publishes anything: read first, so none of that
        // turn's events is dropped.
        let follow = tokio::select! {
            biased;
            _ = conn.shutdown.cancelled() => return,
            follow = follows.recv() => match follow {
                Some(f) => f,
                None => return,
            },
            event = events.next() => match event {
                // A turn this connection does not report.
                Some(_) => continue,
                None => return,
            },
        };
        let started_at = match follow.start {
            Start::Starting(started) => match started.await {
                Ok(Some(at)) => at,
                _ => continue,
            },
            // The turn may have ended before the listener read this; its end is then
            // behind us, and following it would wait for another turn's end.
            Start::Running { since } => {
                if thread.active_turn_id().as_deref() != Some(follow.turn_id.as_str()) {
                    continue;
                }
                since
            }
        };
        busy.store(true, Ordering::SeqCst);
        let turn = thread.follow_turn(events, follow.turn_id.clone());
        let mut pump = Pump::new(&conn, thread.clone(), follow.turn_id, started_at);
        pump.answers = follow.answers;
        events = pump.follow(turn, follow.response_sent).await;
        busy.store(false, Ordering::SeqCst);
    }
}
