//! Approvals for v2 turns: `item/commandExecution/requestApproval` and
//! `item/fileChange/requestApproval` server→client requests (plus
//! `mcpServer/elicitation/request` for MCP servers we are a client of).
//!
//! Each is asked as its declaration in `oi_app_server_protocol::methods` says, and the
//! client's reply is read as that declaration's result type. Fail-closed like the MCP
//! tools: a reply not in that shape, a JSON-RPC error reply, or no reply within the thread's
//! `approval_timeout` is a decline. After the answer (or when
//! the turn ends first) `serverRequest/resolved` is sent, then the decision goes to the
//! engine, so the client sees `item/started` → request → `serverRequest/resolved` →
//! `item/completed`.

use crate::Conn;
use crate::items::Note;
use crate::items::command_actions;
use crate::notify::Reply;
use crate::protocol::methods::{self as m, ServerRequest};
use crate::protocol::wire::{
    CommandExecutionApprovalDecision, CommandExecutionApprovalKind,
    CommandExecutionRequestApprovalParams, CommandExecutionRequestApprovalResponse,
    FileChangeApprovalDecision, FileChangeRequestApprovalParams, FileChangeRequestApprovalResponse,
    McpServerElicitationRequestParams, NetworkPolicyRuleAction, ServerRequestResolvedNotification,
    ThreadActiveFlag, ThreadStatus, ThreadStatusChangedNotification, to_value,
};
use oi_core::{PendingRequest, Thread};
use oi_protocol::ThreadId;
use oi_protocol::parse_command::display_command;
use oi_protocol::protocol::{
    ApplyPatchApprovalRequestEvent, ElicitationAction, ElicitationRequestEvent,
    ElicitationResponse, ExecApprovalRequestEvent, Op, ReviewDecision, Submission,
};
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

#[derive(Clone)]
pub(crate) struct ApprovalCtx {
    pub conn: Arc<Conn>,
    pub thread: Arc<Thread>,
    pub thread_id: ThreadId,
    pub turn_id: String,
    pub timeout: Duration,
    /// Fired when the turn ends: a pending request is withdrawn.
    pub turn_over: CancellationToken,
}

/// A command approval's answer → the engine's decision.
fn command_decision(reply: CommandExecutionRequestApprovalResponse) -> ReviewDecision {
    match reply.decision {
        CommandExecutionApprovalDecision::Accept => ReviewDecision::Approved,
        CommandExecutionApprovalDecision::AcceptForSession => ReviewDecision::ApprovedForSession,
        CommandExecutionApprovalDecision::Decline => ReviewDecision::Denied,
        CommandExecutionApprovalDecision::Cancel => ReviewDecision::Abort,
        // We keep no exec-policy rules; approving with an amendment approves this command.
        CommandExecutionApprovalDecision::AcceptWithExecpolicyAmendment { .. } => {
            ReviewDecision::Approved
        }
        CommandExecutionApprovalDecision::ApplyNetworkPolicyAmendment {
            network_policy_amendment,
        } => match network_policy_amendment.action {
            NetworkPolicyRuleAction::Allow => ReviewDecision::Approved,
            NetworkPolicyRuleAction::Deny => ReviewDecision::Denied,
        },
    }
}

/// A file-change approval's answer → the engine's decision.
fn file_change_decision(reply: FileChangeRequestApprovalResponse) -> ReviewDecision {
    match reply.decision {
        FileChangeApprovalDecision::Accept => ReviewDecision::Approved,
        FileChangeApprovalDecision::AcceptForSession => ReviewDecision::ApprovedForSession,
        FileChangeApprovalDecision::Decline => ReviewDecision::Denied,
        FileChangeApprovalDecision::Cancel => ReviewDecision::Abort,
    }
}

/// Counts the thread's open approval requests; the first one flags the thread
/// `waitingOnApproval` and the last answer clears the flag (`thread/status/changed`).
async fn set_waiting(ctx: &ApprovalCtx, waiting: bool) {
    let flip = {
        let mut map = crate::lock(&ctx.conn.approvals_waiting);
        let n = map.entry(ctx.thread_id).or_insert(0);
        let before = *n;
        *n = if waiting {
            before + 1
        } else {
            before.saturating_sub(1)
        };
        let after = *n;
        if after == 0 {
            map.remove(&ctx.thread_id);
        }
        (before == 0) != (after == 0)
    };
    if !flip {
        return;
    }
    let flags = if waiting {
        vec![ThreadActiveFlag::WaitingOnApproval]
    } else {
        Vec::new()
    };
    let note = ThreadStatusChangedNotification {
        thread_id: ctx.thread_id.to_string(),
        status: ThreadStatus::Active {
            active_flags: flags,
        },
    };
    ctx.conn
        .outgoing
        .send(Note::of::<m::ThreadStatusChanged>(&note))
        .await;
}

/// Asks the client `M` while the thread is flagged `waitingOnApproval`, then tells it the
/// request is settled (`serverRequest/resolved`), so the client sees request → resolved →
/// the item's completion, in that order.
async fn ask<M: ServerRequest>(ctx: &ApprovalCtx, params: &M::Params) -> Reply<M::Result> {
    set_waiting(ctx, true).await;
    let out = &ctx.conn.outgoing;
    let (id, reply) = out.ask::<M>(params, ctx.timeout, &ctx.turn_over).await;
    if let Some(id) = id {
        out.send(Note::of::<m::ServerRequestResolved>(
            &ServerRequestResolvedNotification {
                thread_id: ctx.thread_id.to_string(),
                request_id: to_value(&id),
            },
        ))
        .await;
    }
    set_waiting(ctx, false).await;
    reply
}

/// Asks for an approval and reads the answer as a decision (`None`: withdrawn, the turn
/// is over). Whatever is not an answer in `M`'s shape declines.
async fn decide<M: ServerRequest>(
    ctx: &ApprovalCtx,
    params: &M::Params,
    decision: fn(M::Result) -> ReviewDecision,
) -> Option<ReviewDecision> {
    let method = M::NAME;
    match ask::<M>(ctx, params).await {
        Reply::Answered(r) => Some(decision(r)),
        Reply::Unreadable { reply, error } => {
            tracing::info!("{method}: unreadable reply {reply} ({error}); declining");
            Some(ReviewDecision::Denied)
        }
        Reply::NoAnswer(why) => {
            tracing::info!("{method}: declined because {why}");
            Some(ReviewDecision::Denied)
        }
        Reply::Withdrawn => None,
    }
}

async fn submit(ctx: &ApprovalCtx, op: Op) {
    let sub = Submission {
        id: ctx.turn_id.clone(),
        op,
    };
    if let Err(e) = ctx.thread.submit_with_id(sub).await {
        tracing::warn!(
            "could not deliver an approval decision to thread {}: {e}",
            ctx.thread_id
        );
    }
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// The decisions a command prompt offers, in display order (all of them map to an engine
/// decision in [`decision`]).
fn command_decisions() -> Vec<CommandExecutionApprovalDecision> {
    vec![
        CommandExecutionApprovalDecision::Accept,
        CommandExecutionApprovalDecision::AcceptForSession,
        CommandExecutionApprovalDecision::Decline,
        CommandExecutionApprovalDecision::Cancel,
    ]
}

pub(crate) fn exec_params(
    ctx: &ApprovalCtx,
    ev: &ExecApprovalRequestEvent,
) -> CommandExecutionRequestApprovalParams {
    CommandExecutionRequestApprovalParams {
        thread_id: ctx.thread_id.to_string(),
        turn_id: ctx.turn_id.clone(),
        item_id: ev.call_id.clone(),
        started_at_ms: now_ms(),
        kind: CommandExecutionApprovalKind::Command,
        approval_id: ev.approval_id.clone(),
        reason: ev.reason.clone(),
        command: Some(display_command(&ev.command)),
        cwd: Some(ev.cwd.clone()),
        command_actions: Some(command_actions(&ev.parsed_cmd)),
        available_decisions: Some(command_decisions()),
    }
}

pub(crate) async fn exec(ctx: ApprovalCtx, ev: ExecApprovalRequestEvent) {
    let params = exec_params(&ctx, &ev);
    if let Some(decision) =
        decide::<m::CommandExecutionRequestApproval>(&ctx, &params, command_decision).await
    {
        submit(&ctx, PendingRequest::exec(&ev).answer(decision)).await;
    }
}

pub(crate) async fn patch(ctx: ApprovalCtx, ev: ApplyPatchApprovalRequestEvent) {
    let p = FileChangeRequestApprovalParams {
        thread_id: ctx.thread_id.to_string(),
        turn_id: ctx.turn_id.clone(),
        item_id: ev.call_id.clone(),
        started_at_ms: now_ms(),
        reason: ev.reason.clone(),
        grant_root: ev.grant_root.clone(),
    };
    if let Some(decision) =
        decide::<m::FileChangeRequestApproval>(&ctx, &p, file_change_decision).await
    {
        submit(&ctx, PendingRequest::patch(&ev).answer(decision)).await;
    }
}

/// An MCP server we are a client of asks the user something.
pub(crate) async fn elicitation(ctx: ApprovalCtx, ev: ElicitationRequestEvent) {
    let req = ev.request.as_object().cloned().unwrap_or_default();
    let message = req
        .get("message")
        .and_then(Value::as_str)
        .map(str::to_string)
        .unwrap_or_else(|| format!("The MCP server `{}` asks for input.", ev.server_name));
    let params = McpServerElicitationRequestParams {
        thread_id: ctx.thread_id.to_string(),
        turn_id: ev.turn_id.clone().or(Some(ctx.turn_id.clone())),
        server_name: ev.server_name.clone(),
        mode: "form".to_string(),
        message,
        requested_schema: req
            .get("requestedSchema")
            .cloned()
            .unwrap_or_else(|| json!({"type": "object", "properties": {}})),
        meta: req.get("_meta").cloned(),
    };
    // An answer not in the declared shape is a decline: it never counts as consent.
    let response = match ask::<m::McpServerElicitationRequest>(&ctx, &params).await {
        Reply::Answered(r) => ElicitationResponse::from(r),
        Reply::Unreadable { .. } | Reply::NoAnswer(_) => ElicitationResponse {
            action: ElicitationAction::Decline,
            content: None,
        },
        Reply::Withdrawn => return,
    };
    let op = PendingRequest::elicitation(&ev).elicitation_answer(response);
    submit(&ctx, op).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A command approval's reply as `decide` reads it (`None`: not in the declared shape,
    /// which `decide` declines).
    fn command_reply(reply: Value) -> Option<ReviewDecision> {
        match Reply::<CommandExecutionRequestApprovalResponse>::read(reply) {
            Reply::Answered(r) => Some(command_decision(r)),
            _ => None,
        }
    }

    #[test]
    fn v2_decisions_and_fail_closed_replies() {
        let cases = [
            (
                json!({"decision": "accept"}),
                Some(ReviewDecision::Approved),
            ),
            (
                json!({"decision": "acceptForSession"}),
                Some(ReviewDecision::ApprovedForSession),
            ),
            (json!({"decision": "decline"}), Some(ReviewDecision::Denied)),
            (json!({"decision": "cancel"}), Some(ReviewDecision::Abort)),
            (
                json!({"decision": {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": ["ls"]}}}),
                Some(ReviewDecision::Approved),
            ),
            (
                json!({"decision": {"applyNetworkPolicyAmendment": {"network_policy_amendment": {"host": "x", "action": "deny"}}}}),
                Some(ReviewDecision::Denied),
            ),
            (
                json!({"decision": {"applyNetworkPolicyAmendment": {"network_policy_amendment": {"host": "x", "action": "allow"}}}}),
                Some(ReviewDecision::Approved),
            ),
            // An amendment without its host is not Codex's shape: declined.
            (
                json!({"decision": {"applyNetworkPolicyAmendment": {"network_policy_amendment": {"action": "allow"}}}}),
                None,
            ),
            (json!({"decision": "approved"}), None),
            (json!({"action": "accept"}), None),
            (json!("accept"), None),
        ];
        for (reply, want) in cases {
            assert_eq!(command_reply(reply.clone()), want, "{reply}");
        }
    }

    /// The offered decisions are plain strings on the wire, in display order, and each
    /// one reads back as a decision.
    #[test]
    fn offered_decisions_are_strings_that_read_back() {
        let offered = to_value(&command_decisions());
        assert_eq!(
            offered,
            json!(["accept", "acceptForSession", "decline", "cancel"])
        );
        for d in offered.as_array().unwrap() {
            assert!(command_reply(json!({ "decision": d })).is_some(), "{d}");
        }
    }

    /// File-change and elicitation replies are read as their declarations say: a
    /// file-change decision Codex does not have for file changes, or an elicitation without
    /// a known action, is not an answer (declined); content counts only with an accept.
    #[test]
    fn file_change_and_elicitation_replies_read_as_declared() {
        let file = |v: Value| match Reply::<FileChangeRequestApprovalResponse>::read(v) {
            Reply::Answered(r) => Some(file_change_decision(r)),
            _ => None,
        };
        assert_eq!(
            file(json!({"decision": "accept"})),
            Some(ReviewDecision::Approved)
        );
        assert_eq!(
            file(json!({"decision": "acceptForSession"})),
            Some(ReviewDecision::ApprovedForSession)
        );
        assert_eq!(
            file(json!({"decision": "decline"})),
            Some(ReviewDecision::Denied)
        );
        assert_eq!(
            file(json!({"decision": "cancel"})),
            Some(ReviewDecision::Abort)
        );
        assert_eq!(
            file(
                json!({"decision": {"acceptWithExecpolicyAmendment": {"execpolicy_amendment": []}}})
            ),
            None
        );
        type Elicit = crate::protocol::approval::McpServerElicitationRequestResponse;
        let elicit = |v: Value| match Reply::<Elicit>::read(v) {
            Reply::Answered(r) => Some(ElicitationResponse::from(r)),
            _ => None,
        };
        let accepted = elicit(json!({"action": "accept", "content": {"name": "x"}})).unwrap();
        assert_eq!(accepted.action, ElicitationAction::Accept);
        assert_eq!(accepted.content, Some(json!({"name": "x"})));
        let declined = elicit(json!({"action": "decline", "content": {"name": "x"}})).unwrap();
        assert_eq!(
            (declined.action, declined.content),
            (ElicitationAction::Decline, None)
        );
        assert!(elicit(json!({"action": "maybe"})).is_none());
        assert!(elicit(json!({"content": {}})).is_none());
    }

    /// The elicitation request keeps its wire: `_meta` only when the server sent one.
    #[test]
    fn elicitation_params_wire() {
        let mut p = McpServerElicitationRequestParams {
            thread_id: "t".into(),
            turn_id: Some("u".into()),
            server_name: "srv".into(),
            mode: "form".into(),
            message: "Name?".into(),
            requested_schema: json!({"type": "object", "properties": {}}),
            meta: None,
        };
        assert_eq!(
            to_value(&p),
            json!({"threadId": "t", "turnId": "u", "serverName": "srv", "mode": "form",
                   "message": "Name?", "requestedSchema": {"type": "object", "properties": {}}})
        );
        p.meta = Some(json!({"k": 1}));
        assert_eq!(to_value(&p)["_meta"], json!({"k": 1}));
    }
}
