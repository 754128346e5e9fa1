//! Approvals of MCP 2026-07-28 requests, which have no server→client requests: the turn
//! parks at an approval (oi-core's parked turns: recorded in the thread's store, the thread
//! let go), and the approval goes back to the client inside a result — `input_required`
//! with an `elicitation/create` input request (the prompt and `codex_*` keys the
//! `initialize` era's elicitation carries) for a plain call, or a task's `input_required`
//! status. The answers come back in `inputResponses` (the call's retry, or `tasks/update`)
//! and resume the turn on whichever server gets them.
//!
//! Input request keys are `{park id}/{n}`: the n-th request (from 1) of that park of the
//! turn, unique over a task's life since every park has its own id. An answer is an
//! `ElicitResult`: `accept` approves (`content.decision` may say `approved_for_session`),
//! `decline` denies, `cancel` aborts the turn; the `initialize` era's `{decision}` replies
//! are understood too.

use crate::approvals::{exec_params, patch_params, review_decision};
use crate::protocol::input::{ApprovalInput, ApprovalInputs};
use oi_protocol::ThreadId;
use oi_protocol::protocol::{ParkedAnswer, ParkedRequest, TurnParkedEvent};
use serde_json::Value;
use std::collections::BTreeMap;

/// The client's answers by input request key (`InputResponses`).
pub(crate) type InputResponses = BTreeMap<String, Value>;

/// The key of the `n`-th request (from 1) of park `park_id`.
pub(crate) fn input_key(park_id: &str, n: usize) -> String {
    format!("{park_id}/{n}")
}

/// The requests of `parked` (a turn of `thread`, for the `tools/call` request
/// `tool_call_id`) as input requests.
pub(crate) fn input_requests(
    parked: &TurnParkedEvent,
    thread: ThreadId,
    tool_call_id: &str,
) -> ApprovalInputs {
    parked
        .requests
        .iter()
        .enumerate()
        .map(|(i, request)| {
            let prompt = match request {
                ParkedRequest::Exec(ev) => exec_params(ev, &ev.turn_id, thread, tool_call_id),
                ParkedRequest::Patch(ev) => patch_params(ev, &ev.turn_id, thread, tool_call_id),
            };
            (
                input_key(&parked.park_id, i + 1),
                ApprovalInput::new(prompt),
            )
        })
        .collect()
}

/// The answers in `responses` to the requests `request_ids` (in order) of park `park_id`:
/// one per request, or the keys that have none (responses to other keys are ignored, as
/// the spec asks).
pub(crate) fn answers(
    park_id: &str,
    request_ids: &[String],
    responses: &InputResponses,
) -> Result<Vec<ParkedAnswer>, Vec<String>> {
    let mut answers = Vec::new();
    let mut missing = Vec::new();
    for (i, id) in request_ids.iter().enumerate() {
        let key = input_key(park_id, i + 1);
        match responses.get(&key) {
            Some(reply) => answers.push(ParkedAnswer::new(id.clone(), review_decision(reply))),
            None => missing.push(key),
        }
    }
    if missing.is_empty() {
        Ok(answers)
    } else {
        Err(missing)
    }
}

/// The ids of the requests `parked` waits for, in order.
pub(crate) fn request_ids(parked: &TurnParkedEvent) -> Vec<String> {
    parked.requests.iter().map(|r| r.id().to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use oi_protocol::parse_command::parse_command;
    use oi_protocol::protocol::{ExecApprovalRequestEvent, ReviewDecision};
    use serde_json::json;
    use std::path::PathBuf;

    fn parked() -> TurnParkedEvent {
        let command: Vec<String> = ["touch", "x"].map(String::from).to_vec();
        TurnParkedEvent {
            turn_id: "turn".into(),
            park_id: "park".into(),
            requests: vec![ParkedRequest::Exec(ExecApprovalRequestEvent {
                call_id: "call-1".into(),
                approval_id: None,
                turn_id: "turn".into(),
                parsed_cmd: parse_command(&command),
                command,
                cwd: PathBuf::from("/w"),
                reason: Some("needs a file".into()),
            })],
            parked_at: 1,
            expires_at: 2,
        }
    }

    #[test]
    fn an_approval_is_a_form_elicitation_with_the_codex_keys() {
        let thread = ThreadId::new();
        let inputs = input_requests(&parked(), thread, "9");
        let v = serde_json::to_value(&inputs).unwrap();
        assert_eq!(
            v,
            json!({"park/1": {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": "needs a file\nAllow Open Interpreter to run `touch x` in `/w`?",
                    "requestedSchema": {"type": "object", "properties": {}},
                    "threadId": thread.to_string(),
                    "codex_elicitation": "exec-approval",
                    "codex_mcp_tool_call_id": "9",
                    "codex_event_id": "turn",
                    "codex_call_id": "call-1",
                    "codex_command": ["touch", "x"],
                    "codex_cwd": "/w",
                    "codex_parsed_cmd": [{"type": "unknown", "cmd": "touch x"}],
                    "codex_reason": "needs a file"
                }
            }})
        );
    }

    #[test]
    fn answers_map_actions_to_decisions_and_name_what_is_missing() {
        let ids = vec!["a".to_string(), "b".to_string()];
        let mut responses = InputResponses::new();
        responses.insert("p/1".into(), json!({"action": "accept"}));
        responses.insert("p/9".into(), json!({"action": "accept"}));
        assert_eq!(answers("p", &ids, &responses), Err(vec!["p/2".to_string()]));
        responses.insert("p/2".into(), json!({"action": "decline"}));
        assert_eq!(
            answers("p", &ids, &responses),
            Ok(vec![
                ParkedAnswer::new("a", ReviewDecision::Approved),
                ParkedAnswer::new("b", ReviewDecision::Denied)
            ])
        );
        responses.insert("p/2".into(), json!({"action": "cancel"}));
        assert_eq!(
            answers("p", &ids, &responses).unwrap()[1].decision,
            ReviewDecision::Abort
        );
    }
}
