//! Approvals and nested elicitations, asked of the client as `elicitation/create`.
//!
//! Params follow the MCP `ElicitRequest` shape (`message` + `requestedSchema`) plus the
//! reference's `codex_*` correlation keys ([`ApprovalPrompt`]). Replies are accepted both
//! in the reference's `{decision}` form and in the MCP spec's `{action}` form. Every
//! failure mode (no way to ask, an error reply, garbage, no reply in time, the connection
//! closing) resolves to *denied*, so a turn never waits forever.
//!
//! Whether the client can be asked at all is the call's [`Asker`]: on a connection of the
//! `initialize` era that declared elicitation, it is asked; otherwise the approval is
//! denied at once, and the model is told (the engine's denial). A 2026-07-28 request has no
//! server→client requests: when it declares elicitation, its turn parks at approvals
//! instead and they are asked as multi round-trip results ([`crate::mrtr`]); questions of
//! the MCP servers the agent uses, which cannot wait parked, are declined.

use crate::asking::{self, AskError};
use crate::engine::EngineThread;
use crate::protocol::client_requests::{
    ClientRequest, CreateElicitation, ElicitationPrompt, ElicitationReply, NestedElicitation,
};
use crate::protocol::codex::{ApprovalPrompt, ApprovalSubject, EmptyForm};
use oi_core::PendingRequest;
use oi_jsonrpc::{OutgoingSender, RequestId};
use oi_protocol::ThreadId;
use oi_protocol::parse_command::display_command;
use oi_protocol::protocol::{
    ApplyPatchApprovalRequestEvent, ElicitationAction, ElicitationRequestEvent,
    ElicitationResponse, ExecApprovalRequestEvent, Op, ReviewDecision, Submission,
};
use serde::Deserialize;
use serde_json::{Map, Value};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How a call's approvals are asked.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Asker {
    /// With `elicitation/create` on the call's connection.
    Elicit,
    /// Not at all: every approval is denied, for the reason given (logged).
    Deny(&'static str),
    /// Not at all, and the request fails: a 2026-07-28 request that did not declare
    /// elicitation, which the spec says must get `-32021` rather than a server relying on
    /// what it did not declare. The approval stops the turn (nothing it asked for runs).
    Refuse,
}

/// Why a client of the `initialize` era is not asked.
pub(crate) const NO_ELICITATION: &str = "the client did not declare the elicitation capability";
/// Why a 2026-07-28 request that did not declare elicitation is not asked.
pub(crate) const STATELESS_NO_ELICITATION: &str = "the MCP 2026-07-28 request did not declare the elicitation capability, so approvals cannot be asked of it; declare it (approvals then come back as `input_required` results), or run with approval-policy `never` and a sandbox";
/// Why the question of an MCP server the agent uses is not passed on to a 2026-07-28 client.
pub(crate) const STATELESS_NESTED: &str = "MCP 2026-07-28 has no server-to-client requests, and a question an MCP server asks inside a running tool call cannot wait for a retry";

/// What an approval task needs to know about its surroundings.
#[derive(Clone)]
pub(crate) struct ApprovalContext {
    pub outgoing: OutgoingSender,
    pub thread: Arc<dyn EngineThread>,
    pub thread_id: ThreadId,
    /// The `tools/call` request this turn belongs to.
    pub tool_call_id: RequestId,
    pub asker: Asker,
    pub timeout: Duration,
    /// Fired when the turn ends; a pending prompt is then withdrawn.
    pub turn_over: CancellationToken,
}

/// The message line of an approval: the reason, if any, then the question.
fn message(reason: Option<&str>, question: String) -> String {
    match reason {
        Some(reason) => format!("{reason}\n{question}"),
        None => question,
    }
}

pub(crate) fn exec_params(
    ev: &ExecApprovalRequestEvent,
    event_id: &str,
    thread_id: ThreadId,
    tool_call_id: &str,
) -> ApprovalPrompt {
    let command = display_command(&ev.command);
    ApprovalPrompt {
        message: message(
            ev.reason.as_deref(),
            format!(
                "Allow Open Interpreter to run `{command}` in `{}`?",
                ev.cwd.display()
            ),
        ),
        requested_schema: EmptyForm::default(),
        thread_id,
        kind: "exec-approval",
        tool_call_id: tool_call_id.to_string(),
        event_id: event_id.to_string(),
        call_id: ev.call_id.clone(),
        subject: ApprovalSubject::Exec {
            codex_command: ev.command.clone(),
            codex_cwd: ev.cwd.clone(),
            codex_parsed_cmd: ev.parsed_cmd.clone(),
            codex_reason: ev.reason.clone(),
        },
    }
}

pub(crate) fn patch_params(
    ev: &ApplyPatchApprovalRequestEvent,
    event_id: &str,
    thread_id: ThreadId,
    tool_call_id: &str,
) -> ApprovalPrompt {
    ApprovalPrompt {
        message: message(
            ev.reason.as_deref(),
            "Allow Open Interpreter to apply proposed code changes?".into(),
        ),
        requested_schema: EmptyForm::default(),
        thread_id,
        kind: "patch-approval",
        tool_call_id: tool_call_id.to_string(),
        event_id: event_id.to_string(),
        call_id: ev.call_id.clone(),
        subject: ApprovalSubject::Patch {
            codex_reason: ev.reason.clone(),
            codex_grant_root: ev.grant_root.clone(),
            codex_changes: ev.changes.clone(),
        },
    }
}

pub(crate) fn nested_elicitation_params(
    ev: &ElicitationRequestEvent,
    thread_id: ThreadId,
) -> NestedElicitation {
    let mut request = match &ev.request {
        Value::Object(o) => o.clone(),
        _ => Map::new(),
    };
    request.entry("message").or_insert_with(|| {
        Value::String(format!(
            "The MCP server `{}` asks for input.",
            ev.server_name
        ))
    });
    if !request.contains_key("requestedSchema") {
        request.insert(
            "requestedSchema".into(),
            serde_json::to_value(EmptyForm::default()).unwrap_or(Value::Null),
        );
    }
    // Our keys win over anything of the same name the server sent.
    request.remove("threadId");
    request.remove("codex_elicitation");
    request.remove("codex_mcp_server");
    NestedElicitation {
        request,
        thread_id,
        codex_elicitation: "mcp-elicitation",
        codex_mcp_server: ev.server_name.clone(),
    }
}

/// Maps a reply (here, or an input response of the 2026-07-28 wire) to a decision, as
/// [`ElicitationReply::review_decision`]; a reply that is not an `ElicitResult` denies.
pub(crate) fn review_decision(reply: &Value) -> ReviewDecision {
    ElicitationReply::deserialize(reply).map_or(ReviewDecision::Denied, |r| r.review_decision())
}

/// Asks the client `M` and waits for the reply, the timeout, or the end of the turn. A
/// call whose client cannot be asked gets [`AskError::NotAsked`] at once.
pub(crate) async fn ask<M: ClientRequest>(
    ctx: &ApprovalContext,
    params: &M::Params,
) -> Result<M::Result, AskError> {
    match &ctx.asker {
        Asker::Deny(why) => return Err(AskError::NotAsked((*why).to_string())),
        Asker::Refuse => return Err(AskError::NotAsked(STATELESS_NO_ELICITATION.to_string())),
        Asker::Elicit => {}
    }
    asking::ask::<M>(&ctx.outgoing, params, ctx.timeout, &ctx.turn_over).await
}

async fn decide(
    ctx: &ApprovalContext,
    prompt: ApprovalPrompt,
    what: &str,
) -> Option<ReviewDecision> {
    if ctx.asker == Asker::Refuse {
        tracing::info!("{what}: the turn stops because {STATELESS_NO_ELICITATION}");
        return Some(ReviewDecision::Abort);
    }
    let params = ElicitationPrompt::Approval(prompt);
    match ask::<CreateElicitation>(ctx, &params).await {
        Ok(reply) => {
            let d = reply.review_decision();
            tracing::info!("{what}: client replied {reply:?} → {d:?}");
            Some(d)
        }
        Err(AskError::Withdrawn) => None,
        Err(why) => {
            tracing::info!("{what}: denied because {why}");
            Some(ReviewDecision::Denied)
        }
    }
}

async fn submit(ctx: &ApprovalContext, event_id: &str, op: Op) {
    let sub = Submission {
        id: event_id.to_string(),
        op,
    };
    if let Err(e) = ctx.thread.submit(sub).await {
        tracing::warn!(
            "could not deliver an approval decision to thread {}: {e}",
            ctx.thread_id
        );
    }
}

pub(crate) async fn handle_exec(
    ctx: ApprovalContext,
    ev: ExecApprovalRequestEvent,
    event_id: String,
) {
    let params = exec_params(&ev, &event_id, ctx.thread_id, &ctx.tool_call_id.to_string());
    if let Some(decision) = decide(&ctx, params, "exec approval").await {
        let op = PendingRequest::exec(&ev).answer(decision);
        submit(&ctx, &event_id, op).await;
    }
}

pub(crate) async fn handle_patch(
    ctx: ApprovalContext,
    ev: ApplyPatchApprovalRequestEvent,
    event_id: String,
) {
    let params = patch_params(&ev, &event_id, ctx.thread_id, &ctx.tool_call_id.to_string());
    if let Some(decision) = decide(&ctx, params, "patch approval").await {
        let op = PendingRequest::patch(&ev).answer(decision);
        submit(&ctx, &event_id, op).await;
    }
}

pub(crate) async fn handle_nested(
    ctx: ApprovalContext,
    ev: ElicitationRequestEvent,
    event_id: String,
) {
    let params = ElicitationPrompt::Nested(nested_elicitation_params(&ev, ctx.thread_id));
    let response = match ask::<CreateElicitation>(&ctx, &params).await {
        Ok(reply) => reply.elicitation_response(),
        Err(AskError::Withdrawn) => return,
        Err(why) => {
            tracing::info!(
                "elicitation from `{}` declined because {why}",
                ev.server_name
            );
            ElicitationResponse {
                action: ElicitationAction::Decline,
                content: None,
            }
        }
    };
    let op = PendingRequest::elicitation(&ev).elicitation_answer(response);
    submit(&ctx, &event_id, op).await;
}

#[cfg(test)]
mod tests {
    use super::*;
    use oi_protocol::parse_command::parse_command;
    use oi_protocol::protocol::FileChange;
    use serde_json::json;
    use std::collections::BTreeMap;
    use std::path::PathBuf;

    #[test]
    fn decisions_from_both_reply_styles() {
        let cases = [
            (json!({"decision":"approved"}), ReviewDecision::Approved),
            (
                json!({"decision":"approved_for_session"}),
                ReviewDecision::ApprovedForSession,
            ),
            (json!({"decision":"denied"}), ReviewDecision::Denied),
            (json!({"decision":"abort"}), ReviewDecision::Abort),
            (
                json!({"decision":{"approved_execpolicy_amendment":{"proposed_execpolicy_amendment":["ls"]}}}),
                ReviewDecision::Approved,
            ),
            (json!({"decision":"yes please"}), ReviewDecision::Denied),
            (json!({"action":"accept"}), ReviewDecision::Approved),
            (
                json!({"action":"accept","content":{"decision":"approved_for_session"}}),
                ReviewDecision::ApprovedForSession,
            ),
            (json!({"action":"decline"}), ReviewDecision::Denied),
            (json!({"action":"cancel"}), ReviewDecision::Abort),
            (json!({}), ReviewDecision::Denied),
            (json!("approved"), ReviewDecision::Denied),
            // A `decision` that is there decides, even as null: `action` cannot overrule it.
            (
                json!({"decision":null,"action":"accept"}),
                ReviewDecision::Denied,
            ),
            (json!({"action":"maybe"}), ReviewDecision::Denied),
            (
                json!({"action":"accept","content":{"decision":"sure"}}),
                ReviewDecision::Approved,
            ),
        ];
        for (reply, want) in cases {
            assert_eq!(review_decision(&reply), want, "{reply}");
        }
    }

    #[test]
    fn exec_params_carry_reference_fields() {
        let command: Vec<String> = ["bash", "-lc", "touch x"].map(String::from).to_vec();
        let ev = ExecApprovalRequestEvent {
            call_id: "call1".into(),
            approval_id: None,
            turn_id: "1".into(),
            parsed_cmd: parse_command(&command),
            command,
            cwd: PathBuf::from("/tmp/x"),
            reason: None,
        };
        let tid = ThreadId::new();
        let p = serde_json::to_value(exec_params(
            &ev,
            "1",
            tid,
            &RequestId::Integer(7).to_string(),
        ))
        .unwrap();
        assert_eq!(
            p,
            json!({
                "message": "Allow Open Interpreter to run `touch x` in `/tmp/x`?",
                "requestedSchema": {"type":"object","properties":{}},
                "threadId": tid.to_string(),
                "codex_elicitation": "exec-approval",
                "codex_mcp_tool_call_id": "7",
                "codex_event_id": "1",
                "codex_call_id": "call1",
                "codex_command": ["bash","-lc","touch x"],
                "codex_cwd": "/tmp/x",
                "codex_parsed_cmd": [{"type":"unknown","cmd":"touch x"}]
            })
        );
    }

    #[test]
    fn patch_params_carry_changes_and_optional_fields() {
        let mut changes = BTreeMap::new();
        changes.insert(
            PathBuf::from("/w/a.txt"),
            FileChange::Update {
                unified_diff: "@@ -1 +1 @@\n-a\n+b\n".into(),
                move_path: None,
            },
        );
        let ev = ApplyPatchApprovalRequestEvent {
            call_id: "c".into(),
            turn_id: "t".into(),
            changes,
            reason: Some("needs write".into()),
            grant_root: None,
        };
        let p = serde_json::to_value(patch_params(&ev, "t", ThreadId::new(), "r")).unwrap();
        assert_eq!(
            p["message"],
            "needs write\nAllow Open Interpreter to apply proposed code changes?"
        );
        assert_eq!(p["codex_reason"], "needs write");
        assert!(p.get("codex_grant_root").is_none());
        assert_eq!(p["codex_changes"]["/w/a.txt"]["type"], "update");
        assert_eq!(p["codex_changes"]["/w/a.txt"]["move_path"], Value::Null);
    }

    #[test]
    fn nested_elicitation_replies() {
        let nested = |reply: Value| {
            ElicitationReply::deserialize(&reply)
                .unwrap()
                .elicitation_response()
        };
        let r = nested(json!({"action":"accept","content":{"name":"x"}}));
        assert_eq!(r.action, ElicitationAction::Accept);
        assert_eq!(r.content, Some(json!({"name":"x"})));
        assert_eq!(
            nested(json!({"decision":"approved"})).action,
            ElicitationAction::Decline
        );
        assert_eq!(
            nested(json!({"action":"cancel"})),
            ElicitationResponse {
                action: ElicitationAction::Cancel,
                content: None
            }
        );
    }
}
