//! A thread publishes its events: every subscriber sees every event published after it
//! subscribed, between turns too, in the order they were published. Nobody "owns" a
//! thread's stream, so several front ends (two v2 connections, the TUI and a notifier)
//! can watch one thread, and a subscriber that goes away costs the others nothing.
//!
//! Each subscriber has its own unbounded queue: a slow subscriber never makes the engine
//! wait nor another subscriber lose events. The queues are unbounded for the same reason
//! the single stream was: an event a front end misses (an approval request, a turn's end)
//! would leave its client waiting forever.

use oi_protocol::protocol::Event;
use std::sync::{Mutex, MutexGuard, PoisonError};
use tokio::sync::mpsc;

#[derive(Default)]
pub(crate) struct EventBus {
    state: Mutex<BusState>,
}

#[derive(Default)]
struct BusState {
    subscribers: Vec<mpsc::UnboundedSender<Event>>,
    /// After the thread has shut down: new subscribers get a stream that ends at once.
    closed: bool,
}

impl EventBus {
    /// Sends `event` to every subscriber, dropping the ones that went away.
    pub(crate) fn publish(&self, event: Event) {
        let mut st = self.lock();
        match st.subscribers.len() {
            0 => {}
            // The common case (one front end) moves the event instead of cloning it.
            1 => {
                if st.subscribers[0].send(event).is_err() {
                    st.subscribers.clear();
                }
            }
            _ => st.subscribers.retain(|tx| tx.send(event.clone()).is_ok()),
        }
    }

    /// A stream of every event published from now on.
    pub(crate) fn subscribe(&self) -> EventStream {
        let (tx, rx) = mpsc::unbounded_channel();
        let mut st = self.lock();
        if !st.closed {
            st.subscribers.push(tx);
        }
        EventStream { rx }
    }

    /// The thread has stopped: each stream ends once its subscriber has read what was
    /// already published.
    pub(crate) fn close(&self) {
        let mut st = self.lock();
        st.closed = true;
        st.subscribers.clear();
    }

    /// How many streams are open (for tests and `/status`-style diagnostics).
    pub(crate) fn subscriber_count(&self) -> usize {
        let mut st = self.lock();
        st.subscribers.retain(|tx| !tx.is_closed());
        st.subscribers.len()
    }

    fn lock(&self) -> MutexGuard<'_, BusState> {
        // Poisoning only means a publisher panicked mid-send; the list is still valid.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// One subscriber's view of a thread's events. Dropping it unsubscribes.
pub struct EventStream {
    rx: mpsc::UnboundedReceiver<Event>,
}

impl EventStream {
    /// The next event; `None` once the thread has shut down and every event published
    /// before that has been read.
    pub async fn next(&mut self) -> Option<Event> {
        self.rx.recv().await
    }

    /// An event that is already waiting, without waiting for one.
    pub fn try_next(&mut self) -> Option<Event> {
        self.rx.try_recv().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oi_protocol::protocol::{EventMsg, WarningEvent};

    fn warning(text: &str) -> Event {
        Event {
            id: String::new(),
            msg: EventMsg::Warning(WarningEvent {
                message: text.into(),
            }),
        }
    }

    fn text(ev: Option<Event>) -> Option<String> {
        match ev?.msg {
            EventMsg::Warning(w) => Some(w.message),
            _ => None,
        }
    }

    #[tokio::test]
    async fn every_subscriber_sees_every_event_after_it_subscribed() {
        let bus = EventBus::default();
        let mut early = bus.subscribe();
        bus.publish(warning("one"));
        let mut late = bus.subscribe();
        bus.publish(warning("two"));
        assert_eq!(text(early.next().await).as_deref(), Some("one"));
        assert_eq!(text(early.next().await).as_deref(), Some("two"));
        assert_eq!(text(late.next().await).as_deref(), Some("two"));
        assert!(late.try_next().is_none());
    }

    #[tokio::test]
    async fn a_dropped_subscriber_is_forgotten_and_costs_the_others_nothing() {
        let bus = EventBus::default();
        let kept = bus.subscribe();
        let gone = bus.subscribe();
        assert_eq!(bus.subscriber_count(), 2);
        drop(gone);
        bus.publish(warning("x"));
        assert_eq!(bus.subscriber_count(), 1);
        drop(kept);
        bus.publish(warning("y"));
        assert_eq!(bus.subscriber_count(), 0);
    }

    #[tokio::test]
    async fn streams_end_after_close_once_drained() {
        let bus = EventBus::default();
        let mut s = bus.subscribe();
        bus.publish(warning("last"));
        bus.close();
        assert_eq!(text(s.next().await).as_deref(), Some("last"));
        assert!(s.next().await.is_none());
        let mut after = bus.subscribe();
        assert!(
            after.next().await.is_none(),
            "a stream opened after close ends at once"
        );
    }
}
