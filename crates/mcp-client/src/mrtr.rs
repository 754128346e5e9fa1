//! Multi round-trip requests (2026-07-28): a server that needs something from us before it
//! can answer `tools/call`, `prompts/get` or `resources/read` returns `input_required` with
//! `inputRequests` (elicitations, sampling, `roots/list`) and/or an opaque `requestState`; a
//! task does the same through `tasks/get`. The questions go to the same [`Responder`] that
//! answers server-initiated requests of the handshake era: the user (TUI), `exec`'s policy,
//! a v2 client, or the MCP client driving us. The request loops retry with the answers and
//! the `requestState` echoed unchanged, at most [`MAX_INPUT_ROUNDS`] times.

use crate::handler::Responder;
use rmcp::model::{InputRequest, InputRequests, InputResponses};
use serde_json::Value;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How many `input_required` results one request may get before we give up on it.
pub const MAX_INPUT_ROUNDS: usize = 10;

/// A question of the server's that could not be answered.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Unanswered {
    /// What was asked (`sampling/createMessage`), for the message.
    pub request: String,
    pub reason: String,
}

/// Answers one round's questions, one at a time (a person answers them), in the server's
/// key order. Keys in `skip` were answered before (a task repeats its outstanding requests
/// until it has processed `tasks/update`).
pub(crate) async fn answer(
    responder: &Responder,
    requests: InputRequests,
    skip: &std::collections::HashSet<String>,
    cancel: &CancellationToken,
) -> Result<InputResponses, Unanswered> {
    let mut responses = InputResponses::new();
    for (key, request) in requests {
        if skip.contains(&key) {
            continue;
        }
        let response = match request {
            InputRequest::Elicitation(request) => {
                let id = responder.question_id(&key);
                let result = responder.elicit(id, request.params, cancel).await;
                to_json(&result)
            }
            InputRequest::CreateMessage(request) => {
                let result = responder
                    .sample(request.params, cancel.child_token())
                    .await
                    .map_err(|e| Unanswered {
                        request: "sampling/createMessage".into(),
                        reason: e.message.to_string(),
                    })?;
                to_json(&result)
            }
            InputRequest::ListRoots(_) => to_json(&responder.list_roots()),
            // A kind of question this version of rmcp does not know.
            #[allow(unreachable_patterns)]
            _ => {
                return Err(Unanswered {
                    request: key,
                    reason: "a kind of input this client does not provide".into(),
                });
            }
        };
        responses.insert(key, response);
    }
    Ok(responses)
}

fn to_json<T: serde::Serialize>(value: &T) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

/// The pause before retrying a round that asked nothing (only `requestState`): the server is
/// working, and says so by handing back its state. Grows with each such round in a row.
pub(crate) fn state_only_pause(rounds_in_a_row: usize) -> Duration {
    Duration::from_millis((50u64 << rounds_in_a_row.min(3)).min(400))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_only_rounds_back_off_and_stay_short() {
        assert_eq!(state_only_pause(0), Duration::from_millis(50));
        assert_eq!(state_only_pause(1), Duration::from_millis(100));
        assert_eq!(state_only_pause(9), Duration::from_millis(400));
    }
}
