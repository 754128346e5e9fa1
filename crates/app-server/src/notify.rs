//! The connection's sender as the v2 handlers use it: notifications the client opted out
//! of (`initialize.capabilities.optOutNotificationMethods`) are dropped here, once, so no
//! handler has to check, and every notification gets Codex's `emittedAtMs` stamp. It
//! offers nothing untyped: a notification goes out only as a declared [`Note`], a
//! request to the client only as a declared server request ([`Outgoing::ask`]), whose
//! reply comes back decoded into the declaration's result type.

use crate::items::Note;
use oi_app_server_protocol::methods::ServerRequest;
use oi_jsonrpc::{Answer, OutgoingSender, RequestId};
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::HashSet;
use std::sync::{Arc, OnceLock};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

#[derive(Clone)]
pub(crate) struct Outgoing {
    inner: OutgoingSender,
    opted_out: Arc<OnceLock<HashSet<String>>>,
}

impl Outgoing {
    pub(crate) fn new(inner: OutgoingSender) -> Self {
        Self {
            inner,
            opted_out: Arc::default(),
        }
    }

    /// Records the exact method names the client does not want (set once, at `initialize`).
    pub(crate) fn opt_out(&self, methods: impl IntoIterator<Item = String>) {
        let _ = self.opted_out.set(methods.into_iter().collect());
    }

    /// Sends a declared notification ([`Note::of`]), stamped with `emittedAtMs` as Codex's
    /// are, unless the client opted out of its method. Returns false when the connection is
    /// gone.
    pub(crate) async fn send(&self, note: Note) -> bool {
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

    /// Asks the client the declared request `M` (an approval, an MCP server's question),
    /// failing closed as [`OutgoingSender::ask`] does: no answer by `timeout`, an error
    /// reply or a closed connection is [`Reply::NoAnswer`]; `cancel` withdraws the request.
    /// Returns the request's id (`None` when nothing could be sent) and the reply.
    pub(crate) async fn ask<M: ServerRequest>(
        &self,
        params: &M::Params,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> (Option<RequestId>, Reply<M::Result>) {
        let params = match serde_json::to_value(params) {
            Ok(p) => p,
            Err(e) => {
                let why = format!("the {} request could not be encoded ({e})", M::NAME);
                return (None, Reply::NoAnswer(why));
            }
        };
        let (id, answer) = self.inner.ask(M::NAME, params, timeout, cancel).await;
        let reply = match answer {
            Answer::Replied(v) => Reply::read(v),
            Answer::NoAnswer(why) => Reply::NoAnswer(why),
            Answer::Withdrawn => Reply::Withdrawn,
        };
        (Some(id), reply)
    }
}

/// What came of asking the client a declared request.
#[derive(Debug, PartialEq)]
pub(crate) enum Reply<R> {
    /// The client answered in the declared shape.
    Answered(R),
    /// The client answered something else: its reply, and why it is not the declared
    /// shape. Callers treat it as no consent.
    Unreadable { reply: Value, error: String },
    /// An error reply, the deadline passed, or the connection closed; the text says which.
    NoAnswer(String),
    /// The request was withdrawn first (the turn ended); the client was told.
    Withdrawn,
}

impl<R: DeserializeOwned> Reply<R> {
    /// A client's `result`, decoded into the declared result type.
    pub(crate) fn read(reply: Value) -> Self {
        match R::deserialize(&reply) {
            Ok(r) => Reply::Answered(r),
            Err(e) => Reply::Unreadable {
                error: e.to_string(),
                reply,
            },
        }
    }
}
