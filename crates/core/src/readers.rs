//! Who reads which thread's events. A thread's event stream has one reader at a time;
//! front ends on one connection (the MCP tools, the v2 API) share one registry, so a
//! thread driven by one of them is reported busy to the other instead of losing events
//! to two competing readers.
//!
//! A reader whose turn has ended but that still has notifications to send marks itself
//! [`ReaderGuard::ending`]: a client that reacts to "turn completed" at once must find the
//! thread free, so [`ThreadReaders::claim_after_ending`] waits for such a reader instead of
//! calling the thread busy.

use oi_protocol::ThreadId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;
use tokio::sync::Notify;

/// How long a claim waits for an ending reader before calling the thread busy. An ending
/// reader only has a few notifications left to write; this bounds a stuck client pipe.
const ENDING_GRACE: Duration = Duration::from_secs(5);

struct Reader {
    owner: String,
    ending: bool,
}

/// The registry: thread → a description of its current reader (e.g. the request id that
/// reads it), for "busy" messages.
#[derive(Default)]
pub struct ThreadReaders {
    map: Mutex<HashMap<ThreadId, Reader>>,
    released: Notify,
}

impl ThreadReaders {
    /// Marks `thread` as read by `owner` until the guard drops; `Err(current owner)` if
    /// someone already reads it.
    pub fn claim(
        self: &Arc<Self>,
        thread: ThreadId,
        owner: impl Into<String>,
    ) -> Result<ReaderGuard, String> {
        let mut map = self.lock();
        if let Some(current) = map.get(&thread) {
            return Err(current.owner.clone());
        }
        Ok(self.insert(&mut map, thread, owner.into()))
    }

    /// Like [`ThreadReaders::claim`], but a reader whose turn has ended (it is only sending
    /// its last notifications) is waited for rather than reported.
    pub async fn claim_after_ending(
        self: &Arc<Self>,
        thread: ThreadId,
        owner: impl Into<String>,
    ) -> Result<ReaderGuard, String> {
        let owner = owner.into();
        let deadline = tokio::time::Instant::now() + ENDING_GRACE;
        loop {
            let released = self.released.notified();
            tokio::pin!(released);
            // Registered before the map is read, so a release in between is not missed.
            released.as_mut().enable();
            {
                let mut map = self.lock();
                match map.get(&thread) {
                    None => return Ok(self.insert(&mut map, thread, owner)),
                    Some(current) if !current.ending => return Err(current.owner.clone()),
                    Some(_) => {}
                }
            }
            if tokio::time::timeout_at(deadline, released).await.is_err() {
                let map = self.lock();
                return match map.get(&thread) {
                    Some(current) => Err(current.owner.clone()),
                    None => {
                        drop(map);
                        self.claim(thread, owner)
                    }
                };
            }
        }
    }

    fn insert(
        self: &Arc<Self>,
        map: &mut HashMap<ThreadId, Reader>,
        thread: ThreadId,
        owner: String,
    ) -> ReaderGuard {
        map.insert(
            thread,
            Reader {
                owner,
                ending: false,
            },
        );
        ReaderGuard {
            readers: self.clone(),
            thread,
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<ThreadId, Reader>> {
        // A poisoned map only means another task panicked mid-update; the map is still
        // structurally valid.
        self.map.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The right to read one thread's events; released on drop.
pub struct ReaderGuard {
    readers: Arc<ThreadReaders>,
    thread: ThreadId,
}

impl ReaderGuard {
    /// The turn this reader followed has ended; it only sends its last notifications
    /// before dropping the guard. Claims made with
    /// [`ThreadReaders::claim_after_ending`] now wait for the release.
    pub fn ending(&self) {
        if let Some(r) = self.readers.lock().get_mut(&self.thread) {
            r.ending = true;
        }
    }
}

impl Drop for ReaderGuard {
    fn drop(&mut self) {
        self.readers.lock().remove(&self.thread);
        self.readers.released.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_reader_per_thread_until_the_guard_drops() {
        let readers = Arc::new(ThreadReaders::default());
        let (a, b) = (ThreadId::new(), ThreadId::new());
        let guard = readers.claim(a, "request 1").unwrap();
        assert_eq!(
            readers.claim(a, "request 2").err().as_deref(),
            Some("request 1")
        );
        let _other = readers.claim(b, "request 2").unwrap();
        drop(guard);
        assert!(readers.claim(a, "request 3").is_ok());
    }

    #[tokio::test]
    async fn a_claim_waits_for_an_ending_reader_but_not_for_a_busy_one() {
        let readers = Arc::new(ThreadReaders::default());
        let a = ThreadId::new();
        let guard = readers.claim(a, "turn 1").unwrap();
        // Busy: refused at once.
        assert_eq!(
            readers
                .claim_after_ending(a, "turn 2")
                .await
                .err()
                .as_deref(),
            Some("turn 1")
        );
        // Ending: the claim waits for the release, which happens while it waits.
        guard.ending();
        assert_eq!(readers.claim(a, "x").err().as_deref(), Some("turn 1"));
        let waiting = tokio::spawn({
            let readers = readers.clone();
            async move { readers.claim_after_ending(a, "turn 2").await.is_ok() }
        });
        tokio::task::yield_now().await;
        drop(guard);
        assert!(waiting.await.unwrap());
    }
}
