//! The sending half of the connection: responses, notifications, and server→client
//! requests whose replies are routed back by id; [`OutgoingSender::ask`] waits for such a
//! reply with a deadline and a way to withdraw the question.

use crate::message::{Outgoing, RequestId, RpcError};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

/// A reply to one of our requests; `Err` also when the connection closed first.
pub type ClientReply = Result<Value, RpcError>;

/// How a question asked with [`OutgoingSender::ask`] ended.
///
/// Only [`Answer::Replied`] carries a decision from the client; callers deciding an
/// approval treat [`Answer::NoAnswer`] as a denial (fail closed) and [`Answer::Withdrawn`]
/// as "nothing to decide any more".
#[derive(Clone, Debug, PartialEq)]
pub enum Answer {
    /// The client's `result`.
    Replied(Value),
    /// An error reply, the deadline passed, or the connection closed; the text says which
    /// in words fit for a log line ("no answer within 30 s").
    NoAnswer(String),
    /// `cancel` fired first (e.g. the turn ended); the client was told the request is void.
    Withdrawn,
}

/// An outgoing message and the client request it belongs to (if it was sent while handling
/// one), so a transport with several streams can deliver it on that request's stream.
#[derive(Clone, Debug, PartialEq)]
pub struct Routed {
    /// The client request whose handler sent the message.
    pub origin: Option<RequestId>,
    /// The message.
    pub msg: Outgoing,
}

/// The sending half of one connection. Cheap to clone; every clone feeds the same writer
/// and shares the table of requests waiting for a reply.
#[derive(Clone)]
pub struct OutgoingSender {
    tx: mpsc::Sender<Routed>,
    pending: Arc<Mutex<HashMap<RequestId, oneshot::Sender<ClientReply>>>>,
    next_id: Arc<AtomicI64>,
    origin: Option<RequestId>,
}

impl OutgoingSender {
    /// A sender feeding `tx` (the writer's queue).
    pub fn new(tx: mpsc::Sender<Routed>) -> Self {
        Self {
            tx,
            pending: Arc::default(),
            // Our request ids count from 0, as the reference's do.
            next_id: Arc::new(AtomicI64::new(0)),
            origin: None,
        }
    }

    /// The same connection, with everything sent through the copy tagged as belonging to
    /// client request `id` (the dispatcher hands each handler such a copy).
    pub fn for_request(&self, id: RequestId) -> Self {
        Self {
            origin: Some(id),
            ..self.clone()
        }
    }

    /// Queues a message. Returns false once the writer has stopped (peer gone).
    pub async fn send(&self, msg: Outgoing) -> bool {
        let routed = Routed {
            origin: self.origin.clone(),
            msg,
        };
        self.tx.send(routed).await.is_ok()
    }

    /// Answers request `id` with `result`.
    pub async fn respond(&self, id: RequestId, result: Value) -> bool {
        self.send(Outgoing::Response { id, result }).await
    }

    /// Answers request `id` with an error (`None`: the id could not be read → `id: null`).
    pub async fn respond_error(&self, id: Option<RequestId>, error: RpcError) -> bool {
        self.send(Outgoing::Error { id, error }).await
    }

    /// Sends a notification.
    pub async fn notify(&self, method: &str, params: Value) -> bool {
        self.send(Outgoing::Notification {
            method: method.to_string(),
            params,
            emitted_at_ms: None,
        })
        .await
    }

    /// Sends a notification stamped with the time it is sent (`emittedAtMs`, Unix
    /// milliseconds), as Codex's app server stamps its own.
    pub async fn notify_stamped(&self, method: &str, params: Value) -> bool {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        self.send(Outgoing::Notification {
            method: method.to_string(),
            params,
            emitted_at_ms: Some(now),
        })
        .await
    }

    /// Sends a request to the client. The receiver yields its reply, or an error if the
    /// connection closes first (the sender is dropped).
    pub async fn request(
        &self,
        method: &str,
        params: Value,
    ) -> (RequestId, oneshot::Receiver<ClientReply>) {
        let id = RequestId::Integer(self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        self.lock().insert(id.clone(), tx);
        let sent = self
            .send(Outgoing::Request {
                id: id.clone(),
                method: method.to_string(),
                params,
            })
            .await;
        if !sent {
            self.lock().remove(&id);
        }
        (id, rx)
    }

    /// Asks the client `method` and waits for its reply, at most `timeout`, or until
    /// `cancel` fires. On the deadline or `cancel` the question is withdrawn
    /// (`notifications/cancelled` with the reason), so a late reply is ignored. Returns the
    /// id the request went out with, for follow-ups that name it (e.g.
    /// `serverRequest/resolved`).
    pub async fn ask(
        &self,
        method: &str,
        params: Value,
        timeout: Duration,
        cancel: &CancellationToken,
    ) -> (RequestId, Answer) {
        let (id, rx) = self.request(method, params).await;
        let answer = tokio::select! {
            reply = rx => match reply {
                Ok(Ok(v)) => Answer::Replied(v),
                Ok(Err(e)) => Answer::NoAnswer(format!("the client answered with an error: {}", e.message)),
                Err(_) => Answer::NoAnswer("the connection closed before an answer".into()),
            },
            _ = tokio::time::sleep(timeout) => {
                let why = format!("no answer within {} s", timeout.as_secs());
                self.cancel_request(&id, &why).await;
                Answer::NoAnswer(why)
            }
            _ = cancel.cancelled() => {
                self.cancel_request(&id, "the turn ended").await;
                Answer::Withdrawn
            }
        };
        (id, answer)
    }

    /// Stops waiting for a reply and tells the client the request is void.
    pub async fn cancel_request(&self, id: &RequestId, reason: &str) {
        if self.lock().remove(id).is_some() {
            self.notify(
                "notifications/cancelled",
                serde_json::json!({ "requestId": id, "reason": reason }),
            )
            .await;
        }
    }

    /// Stops waiting for a reply without telling the client (a protocol with its own way to
    /// withdraw a request tells it). True if the request was still waiting.
    pub fn forget(&self, id: &RequestId) -> bool {
        self.lock().remove(id).is_some()
    }

    /// Delivers a client's reply. False if nobody waits for that id.
    pub fn route_response(&self, id: &RequestId, reply: ClientReply) -> bool {
        match self.lock().remove(id) {
            Some(tx) => tx.send(reply).is_ok(),
            None => false,
        }
    }

    /// Fails every outstanding request (connection is closing).
    pub fn fail_all_pending(&self) {
        self.lock().clear();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, oneshot::Sender<ClientReply>>> {
        // A poisoned map only means another task panicked mid-insert; the map is still
        // structurally valid, so keep serving.
        self.pending
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn routes_replies_by_id_and_counts_from_zero() {
        let (tx, mut rx) = mpsc::channel(8);
        let out = OutgoingSender::new(tx);
        let (id0, r0) = out.request("a", Value::Null).await;
        let (id1, r1) = out.request("b", Value::Null).await;
        assert_eq!(
            (id0.clone(), id1.clone()),
            (RequestId::Integer(0), RequestId::Integer(1))
        );
        assert!(out.route_response(&id1, Ok(serde_json::json!(1))));
        assert!(!out.route_response(&RequestId::Integer(9), Ok(Value::Null)));
        assert_eq!(r1.await.unwrap().unwrap(), serde_json::json!(1));
        out.fail_all_pending();
        assert!(r0.await.is_err());
        assert!(matches!(
            rx.recv().await.map(|r| r.msg),
            Some(Outgoing::Request { .. })
        ));
    }

    /// The client's side of the pipe: the question that went out.
    async fn question(rx: &mut mpsc::Receiver<Routed>) -> RequestId {
        match rx.recv().await.map(|r| r.msg) {
            Some(Outgoing::Request { id, .. }) => id,
            other => panic!("expected a request, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn ask_returns_the_reply() {
        let (tx, mut rx) = mpsc::channel(8);
        let out = OutgoingSender::new(tx);
        let never = CancellationToken::new();
        let asking = tokio::spawn({
            let out = out.clone();
            async move {
                out.ask("q", Value::Null, Duration::from_secs(600), &never)
                    .await
            }
        });
        let id = question(&mut rx).await;
        assert!(out.route_response(&id, Ok(serde_json::json!({"ok": true}))));
        let (asked_id, answer) = asking.await.unwrap();
        assert_eq!(asked_id, id);
        assert_eq!(answer, Answer::Replied(serde_json::json!({"ok": true})));
    }

    #[tokio::test]
    async fn ask_fails_closed_on_error_reply_timeout_and_closed_connection() {
        let (tx, mut rx) = mpsc::channel(8);
        let out = OutgoingSender::new(tx);
        let never = CancellationToken::new();

        let asking = tokio::spawn({
            let out = out.clone();
            let never = never.clone();
            async move {
                out.ask("q", Value::Null, Duration::from_secs(600), &never)
                    .await
            }
        });
        let id = question(&mut rx).await;
        out.route_response(&id, Err(RpcError::internal("nope")));
        let (_, answer) = asking.await.unwrap();
        assert!(
            matches!(&answer, Answer::NoAnswer(why) if why.contains("error")),
            "{answer:?}"
        );

        let (_, answer) = out.ask("q", Value::Null, Duration::ZERO, &never).await;
        assert_eq!(answer, Answer::NoAnswer("no answer within 0 s".into()));
        question(&mut rx).await;
        // The timed-out question is withdrawn on the wire.
        match rx.recv().await.map(|r| r.msg) {
            Some(Outgoing::Notification { method, params, .. }) => {
                assert_eq!(method, "notifications/cancelled");
                assert_eq!(params["reason"], "no answer within 0 s");
            }
            other => panic!("expected notifications/cancelled, got {other:?}"),
        }

        let asking = tokio::spawn({
            let out = out.clone();
            async move {
                out.ask("q", Value::Null, Duration::from_secs(600), &never)
                    .await
            }
        });
        question(&mut rx).await;
        out.fail_all_pending();
        let (_, answer) = asking.await.unwrap();
        assert!(
            matches!(&answer, Answer::NoAnswer(why) if why.contains("closed")),
            "{answer:?}"
        );
    }

    #[tokio::test]
    async fn ask_is_withdrawn_when_cancelled() {
        let (tx, mut rx) = mpsc::channel(8);
        let out = OutgoingSender::new(tx);
        let cancel = CancellationToken::new();
        let asking = tokio::spawn({
            let out = out.clone();
            let cancel = cancel.clone();
            async move {
                out.ask("q", Value::Null, Duration::from_secs(600), &cancel)
                    .await
            }
        });
        let id = question(&mut rx).await;
        cancel.cancel();
        let (_, answer) = asking.await.unwrap();
        assert_eq!(answer, Answer::Withdrawn);
        // A reply arriving after the withdrawal has nobody to go to.
        assert!(!out.route_response(&id, Ok(Value::Null)));
    }
}
