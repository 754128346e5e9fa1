//! Who reads which thread's events. A thread's event stream has one reader at a time;
//! front ends on one connection (the MCP tools, the v2 API) share one registry, so a
//! thread driven by one of them is reported busy to the other instead of losing events
//! to two competing readers.

use oi_protocol::ThreadId;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

/// The registry: thread → a description of its current reader (e.g. the request id that
/// reads it), for "busy" messages.
#[derive(Default)]
pub struct ThreadReaders(Mutex<HashMap<ThreadId, String>>);

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
            return Err(current.clone());
        }
        map.insert(thread, owner.into());
        Ok(ReaderGuard {
            readers: self.clone(),
            thread,
        })
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<ThreadId, String>> {
        // A poisoned map only means another task panicked mid-update; the map is still
        // structurally valid.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// The right to read one thread's events; released on drop.
pub struct ReaderGuard {
    readers: Arc<ThreadReaders>,
    thread: ThreadId,
}

impl Drop for ReaderGuard {
    fn drop(&mut self) {
        self.readers.lock().remove(&self.thread);
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
}
