//! Asking the client a declared request ([`ClientRequest`]): the params go out encoded from
//! their type, and the reply comes back decoded into the declared result, or as an
//! [`AskError`] that names the method. The connection's sender does the waiting (deadline,
//! withdrawal when the turn ends); this is the only place the service touches its untyped
//! `ask`.

use crate::protocol::client_requests::ClientRequest;
use oi_jsonrpc::{Answer, OutgoingSender};
use serde_json::Value;
use std::fmt;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Why a question to the client brought no usable answer.
#[derive(Debug, PartialEq)]
pub(crate) enum AskError {
    /// Nothing was sent: the client cannot be asked, or the params could not be encoded.
    NotAsked(String),
    /// An error reply, no reply in time, or the connection closed; the text says which.
    NoAnswer(String),
    /// The client replied, but not with the declared result.
    Unreadable {
        method: &'static str,
        reply: Value,
        error: String,
    },
    /// Withdrawn before an answer (the turn ended); the client was told.
    Withdrawn,
}

impl fmt::Display for AskError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AskError::NotAsked(why) | AskError::NoAnswer(why) => f.write_str(why),
            AskError::Unreadable {
                method,
                reply,
                error,
            } => write!(
                f,
                "the client's reply to `{method}` is not a `{method}` result ({error}): {reply}"
            ),
            AskError::Withdrawn => f.write_str("the question was withdrawn (the turn ended)"),
        }
    }
}

/// Sends `M` with `params` and waits for the reply, at most `timeout`, or until `cancel`
/// fires (then the request is withdrawn with `notifications/cancelled`).
pub(crate) async fn ask<M: ClientRequest>(
    outgoing: &OutgoingSender,
    params: &M::Params,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Result<M::Result, AskError> {
    let params = serde_json::to_value(params).map_err(|e| {
        AskError::NotAsked(format!(
            "the `{}` params could not be encoded ({e})",
            M::METHOD
        ))
    })?;
    let (_, answer) = outgoing.ask(M::METHOD, params, timeout, cancel).await;
    match answer {
        Answer::Replied(reply) => read::<M>(reply),
        Answer::NoAnswer(why) => Err(AskError::NoAnswer(why)),
        Answer::Withdrawn => Err(AskError::Withdrawn),
    }
}

/// A client's `result`, decoded into `M`'s result type.
fn read<M: ClientRequest>(reply: Value) -> Result<M::Result, AskError> {
    serde_json::from_value(reply.clone()).map_err(|e| AskError::Unreadable {
        method: M::METHOD,
        reply,
        error: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::client_requests::{
        CreateElicitation, ElicitationPrompt, ElicitationReply, NestedElicitation,
    };
    use oi_jsonrpc::{Outgoing, Routed};
    use oi_protocol::ThreadId;
    use oi_protocol::protocol::{ElicitationAction, ReviewDecision};
    use serde_json::json;
    use tokio::sync::mpsc;

    fn prompt() -> ElicitationPrompt {
        let request = json!({"message": "Name?", "requestedSchema": {"type": "object"}});
        let Value::Object(request) = request else {
            unreachable!()
        };
        ElicitationPrompt::Nested(NestedElicitation {
            request,
            thread_id: ThreadId::new(),
            codex_elicitation: "mcp-elicitation",
            codex_mcp_server: "srv".into(),
        })
    }

    /// Asks with `prompt()`, answers the request that went out with `reply`, and returns
    /// what the ask made of it (and the request's method and params).
    async fn answered_with(reply: Value) -> (Result<ElicitationReply, AskError>, String, Value) {
        let (tx, mut rx) = mpsc::channel::<Routed>(8);
        let out = OutgoingSender::new(tx);
        let asking = tokio::spawn({
            let out = out.clone();
            async move {
                let never = CancellationToken::new();
                ask::<CreateElicitation>(&out, &prompt(), Duration::from_secs(600), &never).await
            }
        });
        let Some(Outgoing::Request { id, method, params }) = rx.recv().await.map(|r| r.msg) else {
            panic!("no request went out");
        };
        assert!(out.route_response(&id, Ok(reply)));
        (asking.await.unwrap(), method, params)
    }

    #[tokio::test]
    async fn a_reply_in_the_declared_shape_comes_back_typed() {
        let (got, method, params) =
            answered_with(json!({"action": "accept", "content": {"name": "x"}})).await;
        assert_eq!(method, "elicitation/create");
        assert_eq!(params["message"], "Name?");
        assert_eq!(params["codex_mcp_server"], "srv");
        let reply = got.unwrap();
        assert_eq!(reply.action, Some(ElicitationAction::Accept));
        assert_eq!(reply.review_decision(), ReviewDecision::Approved);
    }

    #[tokio::test]
    async fn a_reply_of_the_wrong_shape_is_an_error_naming_the_method() {
        for bad in [
            json!("approved"),
            json!({"action": "maybe"}),
            json!({"action": 1}),
        ] {
            let (got, _, _) = answered_with(bad.clone()).await;
            let err = got.unwrap_err();
            assert!(
                matches!(&err, AskError::Unreadable { method: "elicitation/create", reply, .. } if *reply == bad),
                "{err:?}"
            );
            let text = err.to_string();
            assert!(
                text.contains("reply to `elicitation/create` is not a `elicitation/create` result"),
                "{text}"
            );
        }
    }

    #[tokio::test]
    async fn an_error_reply_or_a_closed_connection_is_no_answer() {
        let (tx, mut rx) = mpsc::channel::<Routed>(8);
        let out = OutgoingSender::new(tx);
        let never = CancellationToken::new();
        let asking = tokio::spawn({
            let out = out.clone();
            async move {
                ask::<CreateElicitation>(&out, &prompt(), Duration::from_secs(600), &never).await
            }
        });
        assert!(rx.recv().await.is_some());
        out.fail_all_pending();
        let err = asking.await.unwrap().unwrap_err();
        assert!(matches!(err, AskError::NoAnswer(_)), "{err:?}");
    }
}
