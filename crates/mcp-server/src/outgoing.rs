//! The sending half of the connection: responses, notifications, and server→client
//! requests whose replies are routed back by id.

use crate::jsonrpc::{Outgoing, RequestId, RpcError};
use serde_json::Value;
use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::{mpsc, oneshot};

/// A reply to one of our requests; `Err` also when the connection closed first.
pub type ClientReply = Result<Value, RpcError>;

#[derive(Clone)]
pub struct OutgoingSender {
    tx: mpsc::Sender<Outgoing>,
    pending: Arc<Mutex<HashMap<RequestId, oneshot::Sender<ClientReply>>>>,
    next_id: Arc<AtomicI64>,
}

impl OutgoingSender {
    pub fn new(tx: mpsc::Sender<Outgoing>) -> Self {
        Self {
            tx,
            pending: Arc::default(),
            // Our request ids count from 0, as the reference's do.
            next_id: Arc::new(AtomicI64::new(0)),
        }
    }

    /// Queues a message. Returns false once the writer has stopped (peer gone).
    pub async fn send(&self, msg: Outgoing) -> bool {
        self.tx.send(msg).await.is_ok()
    }

    pub async fn respond(&self, id: RequestId, result: Value) -> bool {
        self.send(Outgoing::Response { id, result }).await
    }

    pub async fn respond_error(&self, id: Option<RequestId>, error: RpcError) -> bool {
        self.send(Outgoing::Error { id, error }).await
    }

    pub async fn notify(&self, method: &str, params: Value) -> bool {
        self.send(Outgoing::Notification {
            method: method.to_string(),
            params,
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
        assert!(matches!(rx.recv().await, Some(Outgoing::Request { .. })));
    }
}
