//! A turn parked at an approval: what it waits for, and the answers that resume it.
//!
//! A turn started with approvals parked does not wait for the user when a command, a patch
//! or an MCP tool call needs approval: it records the request in its thread's rollout and
//! stops, and any process sharing the thread store can resume it later with the answers.
//! These are the shapes the engine, the store and front ends share; how parking works is
//! `oi-core`'s (see its `Thread::resume_parked`).

use super::{ApplyPatchApprovalRequestEvent, ExecApprovalRequestEvent, ReviewDecision};
use serde::{Deserialize, Serialize};

/// One approval a parked turn waits for: the same payload a front end gets in an
/// `exec_approval_request` or `apply_patch_approval_request` event. Tagged `type`
/// (`exec` / `patch`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ParkedRequest {
    /// A command (or an MCP tool call: its `command` is `[qualified tool name, arguments]`).
    Exec(ExecApprovalRequestEvent),
    /// A file change.
    Patch(ApplyPatchApprovalRequestEvent),
}

impl ParkedRequest {
    /// The id an answer names ([`ParkedAnswer::request_id`]): the approval id of a command
    /// (else its call id), the call id of a patch. The same id answers the live request
    /// (`Op::ExecApproval` / `Op::PatchApproval`).
    pub fn id(&self) -> &str {
        match self {
            ParkedRequest::Exec(r) => r.effective_approval_id(),
            ParkedRequest::Patch(r) => &r.call_id,
        }
    }

    /// The model's call the request is about.
    pub fn call_id(&self) -> &str {
        match self {
            ParkedRequest::Exec(r) => &r.call_id,
            ParkedRequest::Patch(r) => &r.call_id,
        }
    }

    /// The turn that asks.
    pub fn turn_id(&self) -> &str {
        match self {
            ParkedRequest::Exec(r) => &r.turn_id,
            ParkedRequest::Patch(r) => &r.turn_id,
        }
    }

    /// Whether `other` asks the same thing: the same command in the same directory, or the
    /// same changes to the same files. An answer given to one request applies to the call
    /// only if the call still asks the same (a file that changed since makes a new diff).
    pub fn asks_the_same_as(&self, other: &ParkedRequest) -> bool {
        match (self, other) {
            (ParkedRequest::Exec(a), ParkedRequest::Exec(b)) => {
                a.command == b.command && a.cwd == b.cwd && a.call_id == b.call_id
            }
            (ParkedRequest::Patch(a), ParkedRequest::Patch(b)) => {
                a.changes == b.changes && a.call_id == b.call_id
            }
            _ => false,
        }
    }

    /// The event a live turn would have sent for this request.
    pub fn to_event(&self) -> crate::protocol::EventMsg {
        match self {
            ParkedRequest::Exec(r) => crate::protocol::EventMsg::ExecApprovalRequest(r.clone()),
            ParkedRequest::Patch(r) => {
                crate::protocol::EventMsg::ApplyPatchApprovalRequest(r.clone())
            }
        }
    }
}

/// `turn_parked`: the turn stopped at approvals and waits to be resumed (or abandoned). It
/// has not ended: its continuation ends it with `task_complete` or `turn_aborted`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnParkedEvent {
    /// The parked turn.
    pub turn_id: String,
    /// This park of the turn (a turn may park again after it is resumed): answers are for
    /// one park, so a replayed answer never resumes a later one.
    pub park_id: String,
    /// What the turn waits for, in call order.
    pub requests: Vec<ParkedRequest>,
    /// Unix seconds.
    pub parked_at: i64,
    /// Unix seconds: after this the turn cannot be resumed; it ends as expired.
    pub expires_at: i64,
}

/// The answer to one request of a parked turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParkedAnswer {
    /// [`ParkedRequest::id`] of the request answered.
    pub request_id: String,
    /// `approved` and `approved_for_session` run the call without asking again, `denied`
    /// (or `timed_out`) gives the model the usual refusal, `abort` ends the turn.
    pub decision: ReviewDecision,
}

impl ParkedAnswer {
    /// An answer to request `request_id`.
    pub fn new(request_id: impl Into<String>, decision: ReviewDecision) -> Self {
        Self {
            request_id: request_id.into(),
            decision,
        }
    }
}
