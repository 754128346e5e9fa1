//! The connection's sender as the v2 handlers use it: notifications the client opted out
//! of (`initialize.capabilities.optOutNotificationMethods`) are dropped here, once, so no
//! handler has to check, and every notification gets Codex's `emittedAtMs` stamp. It
//! offers no untyped `notify`: a notification goes out only as a declared [`Note`].

use crate::items::Note;
use oi_jsonrpc::{Answer, OutgoingSender, RequestId};
use serde_json::Value;
use std::collections::HashSet;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

#[derive(Clone)]
pub struct Outgoing {
    inner: OutgoingSender,
    opted_out: Arc<OnceLock<HashSet<String>>>,
}

impl Outgoing {
    pub fn new(inner: OutgoingSender) -> Self {
        Self {
            inner,
            opted_out: Arc::default(),
        }
    }

    /// Records the exact method names the client does not want (set once, at `initialize`).
    pub fn opt_out(&self, methods: impl IntoIterator<Item = String>) {
        let _ = self.opted_out.set(methods.into_iter().collect());
    }

    /// Sends a declared notification ([`Note::of`]), stamped with `emittedAtMs` as Codex's
    /// are, unless the client opted out of its method. Returns false when the connection is
    /// gone.
    pub async fn send(&self, note: Note) -> bool {
        if self
            .opted_out
            .get()
            .is_some_and(|s| s.contains(note.method()))
        {
            return true;
        }
        let (method, params) = note.into_parts();
        self.inner.notify_stamped(method, params).await
    }

    /// Asks the client (an approval); see [`OutgoingSender::ask`].
    pub async fn ask(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> (RequestId, Answer) {
        self.inner.ask(method, params, timeout, cancel).await
    }
}
