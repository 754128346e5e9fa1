//! Approvals as `session/request_permission`: allow once, allow always (for the session),
//! reject. Fails closed: an error reply, garbage, `cancelled`, no reply within the approval
//! timeout, or the client going away all count as a rejection; a question whose turn ended
//! meanwhile is withdrawn (`$/cancel_request`).

use crate::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SessionId, ToolCallUpdate, ToolCallUpdateFields,
};
use oi_jsonrpc::{OutgoingSender, RequestId};
use oi_protocol::protocol::ReviewDecision;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The method asked.
pub const REQUEST_PERMISSION: &str = "session/request_permission";
/// How ACP withdraws a request.
pub const CANCEL_REQUEST: &str = "$/cancel_request";

const ALLOW_ONCE: &str = "allow-once";
const ALLOW_ALWAYS: &str = "allow-always";
const REJECT: &str = "reject";

/// The options offered for every approval.
pub fn options() -> Vec<PermissionOption> {
    vec![
        PermissionOption::new(ALLOW_ONCE, "Allow", PermissionOptionKind::AllowOnce),
        PermissionOption::new(
            ALLOW_ALWAYS,
            "Always allow in this session",
            PermissionOptionKind::AllowAlways,
        ),
        PermissionOption::new(REJECT, "Reject", PermissionOptionKind::RejectOnce),
    ]
}

/// What the client's answer decides; anything unreadable is a denial.
pub fn decision_of(reply: &serde_json::Value) -> ReviewDecision {
    let Ok(response) = serde_json::from_value::<RequestPermissionResponse>(reply.clone()) else {
        return ReviewDecision::Denied;
    };
    match response.outcome {
        RequestPermissionOutcome::Selected(s) => match &*s.option_id.0 {
            ALLOW_ONCE => ReviewDecision::Approved,
            ALLOW_ALWAYS => ReviewDecision::ApprovedForSession,
            _ => ReviewDecision::Denied,
        },
        // The client cancelled the question (its prompt was cancelled): the turn is being
        // interrupted, nothing runs.
        RequestPermissionOutcome::Cancelled => ReviewDecision::Abort,
        _ => ReviewDecision::Denied,
    }
}

/// Asks the client about tool call `call_id` (already announced) with `title` and the
/// call's `fields`; returns the decision, failing closed.
pub async fn ask(
    outgoing: &OutgoingSender,
    session_id: &SessionId,
    call_id: &str,
    fields: ToolCallUpdateFields,
    timeout: Duration,
    turn_over: &CancellationToken,
) -> ReviewDecision {
    let request = RequestPermissionRequest::new(
        session_id.clone(),
        ToolCallUpdate::new(call_id.to_string(), fields),
        options(),
    );
    let params = match serde_json::to_value(&request) {
        Ok(p) => p,
        Err(e) => {
            tracing::warn!("could not encode a permission request: {e}");
            return ReviewDecision::Denied;
        }
    };
    let (id, reply) = outgoing.request(REQUEST_PERMISSION, params).await;
    tokio::select! {
        reply = reply => match reply {
            Ok(Ok(v)) => decision_of(&v),
            Ok(Err(e)) => {
                tracing::info!("permission for {call_id}: the client answered with an error ({}); denied", e.message);
                ReviewDecision::Denied
            }
            Err(_) => {
                tracing::info!("permission for {call_id}: the connection closed; denied");
                ReviewDecision::Denied
            }
        },
        _ = tokio::time::sleep(timeout) => {
            tracing::info!("permission for {call_id}: no answer within {} s; denied", timeout.as_secs());
            withdraw(outgoing, &id).await;
            ReviewDecision::TimedOut
        }
        _ = turn_over.cancelled() => {
            withdraw(outgoing, &id).await;
            ReviewDecision::Abort
        }
    }
}

async fn withdraw(outgoing: &OutgoingSender, id: &RequestId) {
    if outgoing.forget(id) {
        outgoing
            .notify(CANCEL_REQUEST, serde_json::json!({ "requestId": id }))
            .await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_map_to_decisions_and_anything_else_denies() {
        let selected = |id: &str| json!({"outcome": {"outcome": "selected", "optionId": id}});
        assert_eq!(
            decision_of(&selected("allow-once")),
            ReviewDecision::Approved
        );
        assert_eq!(
            decision_of(&selected("allow-always")),
            ReviewDecision::ApprovedForSession
        );
        assert_eq!(decision_of(&selected("reject")), ReviewDecision::Denied);
        assert_eq!(decision_of(&selected("made-up")), ReviewDecision::Denied);
        assert_eq!(
            decision_of(&json!({"outcome": {"outcome": "cancelled"}})),
            ReviewDecision::Abort
        );
        assert_eq!(decision_of(&json!({"nonsense": 1})), ReviewDecision::Denied);
        assert_eq!(decision_of(&json!(null)), ReviewDecision::Denied);
    }

    #[tokio::test]
    async fn no_answer_in_time_is_a_denial_and_the_question_is_withdrawn() {
        let (tx, mut rx) = tokio::sync::mpsc::channel(8);
        let out = OutgoingSender::new(tx);
        let d = ask(
            &out,
            &SessionId::new("s"),
            "call",
            ToolCallUpdateFields::new().title("rm -rf /".to_string()),
            Duration::from_millis(50),
            &CancellationToken::new(),
        )
        .await;
        assert_eq!(d, ReviewDecision::TimedOut);
        let asked = rx.recv().await.unwrap();
        let withdrawn = rx.recv().await.unwrap();
        let asked: serde_json::Value = serde_json::from_slice(&asked.msg.to_line()).unwrap();
        let withdrawn: serde_json::Value =
            serde_json::from_slice(&withdrawn.msg.to_line()).unwrap();
        assert_eq!(asked["method"], REQUEST_PERMISSION, "{asked}");
        assert_eq!(withdrawn["method"], CANCEL_REQUEST, "{withdrawn}");
        assert_eq!(withdrawn["params"]["requestId"], asked["id"]);
    }
}
