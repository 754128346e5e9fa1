//! Approvals and tasks on the 2026-07-28 wire: an approval as an input request (an
//! `elicitation/create` form with the same prompt and `codex_*` correlation keys the
//! `initialize` era sends), the `input_required` result that carries approvals, and a task's
//! state as `tasks/get` reports it.
//!
//! rmcp's `InputRequiredResult` and `GetTaskResult` type their input requests with its own
//! elicitation params, which drop the correlation keys; these shapes keep them, and are
//! otherwise the spec's.

use super::client_requests::{ClientRequest, CreateElicitation};
use super::codex::ApprovalPrompt;
use rmcp::model::{CallToolResult, ResultType, Task};
use serde::Serialize;
use std::collections::BTreeMap;

/// One approval as an input request.
#[derive(Clone, Debug, Serialize)]
pub(crate) struct ApprovalInput {
    /// Always `elicitation/create` ([`CreateElicitation`]): the same question the
    /// `initialize` era sends as a request.
    pub method: &'static str,
    pub params: FormElicitation,
}

/// `ElicitRequestFormParams`: a form (with nothing to fill in: the answer is the action).
#[derive(Clone, Debug, Serialize)]
pub(crate) struct FormElicitation {
    /// Always `form`.
    pub mode: &'static str,
    #[serde(flatten)]
    pub prompt: ApprovalPrompt,
}

impl ApprovalInput {
    pub(crate) fn new(prompt: ApprovalPrompt) -> Self {
        Self {
            method: CreateElicitation::METHOD,
            params: FormElicitation {
                mode: "form",
                prompt,
            },
        }
    }
}

/// Input requests by key.
pub(crate) type ApprovalInputs = BTreeMap<String, ApprovalInput>;

/// The result of a `tools/call` whose turn waits for approvals (`resultType:
/// "input_required"`): the approvals, and the sealed state the retry hands back.
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ApprovalsRequired {
    pub result_type: ResultType,
    pub input_requests: ApprovalInputs,
    pub request_state: String,
}

impl ApprovalsRequired {
    pub(crate) fn new(input_requests: ApprovalInputs, request_state: String) -> Self {
        Self {
            result_type: ResultType::INPUT_REQUIRED,
            input_requests,
            request_state,
        }
    }
}

/// The JSON-RPC error of a failed task.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub(crate) struct TaskError {
    pub code: i64,
    pub message: String,
}

/// A task as `tasks/get` (and `notifications/tasks`) report it: the task and what its
/// status carries (`inputRequests`, `result` or `error`).
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct TaskView {
    #[serde(flatten)]
    pub task: Task,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<ApprovalInputs>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<CallToolResult>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<TaskError>,
}
