//! The engine's queue pair: [`Submission`] (an [`Op`]) in, [`Event`] (an [`EventMsg`]) out.
//!
//! Every front end (exec, MCP server, v2 API, TUI) is an adapter over this one stream. Event
//! JSON is `{"id": <submission id>, "msg": {"type": <snake_case>, ...}}`, matching the
//! reference implementation so `codex/event` consumers keep working.

use crate::config_types::{AskForApproval, ReasoningEffort, SandboxPolicy};
use crate::ids::ThreadId;
use crate::models::TokenUsage;
pub use crate::parked::{ParkedAnswer, ParkedRequest, TurnParkedEvent};
use crate::parse_command::ParsedCommand;
use crate::user_input::UserInput;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

mod extensions;
pub use extensions::{
    HookOutputEntry, HookOutputKind, HookRunEvent, HookRunStatus, PlanStep, PlanStepStatus,
    PlanUpdateEvent, SkillLoadedEvent,
};

/// An [`Op`] with the id that every event it causes will carry.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Submission {
    pub id: String,
    pub op: Op,
}

/// Per-turn settings a front end may change. `None` keeps the thread's current value;
/// a changed value stays in effect for later turns.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TurnOverrides {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_policy: Option<AskForApproval>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_policy: Option<SandboxPolicy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub effort: Option<ReasoningEffort>,
    /// Switch the harness profile (the TUI's `/harness`); the next request offers its tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub harness: Option<crate::config_types::Harness>,
}

impl TurnOverrides {
    /// These settings with `top`'s on top, field by field (the later change wins).
    pub fn overlaid_with(self, top: TurnOverrides) -> TurnOverrides {
        TurnOverrides {
            cwd: top.cwd.or(self.cwd),
            approval_policy: top.approval_policy.or(self.approval_policy),
            sandbox_policy: top.sandbox_policy.or(self.sandbox_policy),
            model: top.model.or(self.model),
            effort: top.effort.or(self.effort),
            harness: top.harness.or(self.harness),
        }
    }
}

/// What a front end asks of a thread.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Op {
    /// Start a turn with this input; if a turn is running, the input is added to it
    /// (steering) and seen by the model at its next request.
    UserInput {
        items: Vec<UserInput>,
        #[serde(default)]
        overrides: TurnOverrides,
    },
    /// Stop the running turn. It ends with `turn_aborted { reason: "interrupted" }`.
    Interrupt,
    /// Answer an `exec_approval_request` (`id` = its `approval_id`, or `call_id`).
    ExecApproval {
        id: String,
        decision: ReviewDecision,
    },
    /// Answer an `apply_patch_approval_request` (`id` = its `call_id`).
    PatchApproval {
        id: String,
        decision: ReviewDecision,
    },
    /// Answer an `elicitation_request` that an MCP server sent us.
    ResolveElicitation {
        server_name: String,
        request_id: serde_json::Value,
        response: ElicitationResponse,
    },
    /// Summarise the thread's history so far and replace it with the summary (context
    /// compaction). Runs as a turn of its own: `task_started`, `context_compacted`,
    /// `task_complete`. Refused with an `error` while another turn runs.
    Compact,
    /// Finish the running turn (interrupted), flush, stop MCP servers, emit
    /// `shutdown_complete`, and end the thread.
    Shutdown,
}

/// The user's answer to an approval request.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewDecision {
    Approved,
    /// Approve, and do not ask again for this exact command in this thread.
    ApprovedForSession,
    /// Do not run; the model is told and continues.
    #[default]
    Denied,
    /// Do not run, and end the turn.
    Abort,
    /// Nobody answered in time. Treated like `Denied`.
    TimedOut,
}

impl ReviewDecision {
    pub fn is_approved(&self) -> bool {
        matches!(
            self,
            ReviewDecision::Approved | ReviewDecision::ApprovedForSession
        )
    }
}

/// A reply to an MCP server's `elicitation/create`, in the MCP spec's shape.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ElicitationResponse {
    pub action: ElicitationAction,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<serde_json::Value>,
}

impl ElicitationResponse {
    /// Reads a client's reply to a relayed elicitation (`{action, content}`). Anything not
    /// in the spec's shape is a decline: an unreadable answer never counts as consent.
    pub fn from_reply(reply: &serde_json::Value) -> Self {
        let action = match reply.get("action").and_then(serde_json::Value::as_str) {
            Some("accept") => ElicitationAction::Accept,
            Some("cancel") => ElicitationAction::Cancel,
            _ => ElicitationAction::Decline,
        };
        let content = match action {
            ElicitationAction::Accept => reply.get("content").cloned().filter(|c| !c.is_null()),
            _ => None,
        };
        ElicitationResponse { action, content }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitationAction {
    Accept,
    Decline,
    Cancel,
}

/// One event out of a thread. `id` is the id of the submission that caused it
/// (the turn id for turn events; `""` for `session_configured`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Event {
    pub id: String,
    pub msg: EventMsg,
}

/// Everything a thread reports. Tagged `type`, snake_case, as in the reference.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventMsg {
    Error(ErrorEvent),
    Warning(WarningEvent),
    /// A retryable problem while streaming from the model; the request is being retried.
    StreamError(StreamErrorEvent),
    SessionConfigured(SessionConfiguredEvent),
    #[serde(alias = "turn_started")]
    TaskStarted(TaskStartedEvent),
    #[serde(alias = "turn_complete")]
    TaskComplete(TaskCompleteEvent),
    TurnAborted(TurnAbortedEvent),
    TokenCount(TokenCountEvent),
    UserMessage(UserMessageEvent),
    AgentMessage(AgentMessageEvent),
    AgentMessageDelta(AgentMessageDeltaEvent),
    AgentReasoning(AgentReasoningEvent),
    AgentReasoningDelta(AgentReasoningDeltaEvent),
    ExecCommandBegin(ExecCommandBeginEvent),
    ExecCommandOutputDelta(ExecCommandOutputDeltaEvent),
    ExecCommandEnd(ExecCommandEndEvent),
    ExecApprovalRequest(ExecApprovalRequestEvent),
    ApplyPatchApprovalRequest(ApplyPatchApprovalRequestEvent),
    PatchApplyBegin(PatchApplyBeginEvent),
    PatchApplyEnd(PatchApplyEndEvent),
    McpStartupUpdate(McpStartupUpdateEvent),
    McpStartupComplete(McpStartupCompleteEvent),
    McpToolCallBegin(McpToolCallBeginEvent),
    McpToolCallProgress(McpToolCallProgressEvent),
    McpToolCallEnd(McpToolCallEndEvent),
    ElicitationRequest(ElicitationRequestEvent),
    /// The history was replaced by a summary (automatically or after `Op::Compact`).
    ContextCompacted(ContextCompactedEvent),
    /// The model's plan for the task (a harness profile's todo list), whole each time.
    PlanUpdate(PlanUpdateEvent),
    /// The turn stopped at approvals it was started to park (not to wait for): it waits,
    /// in the thread's store, to be resumed with the answers (see [`crate::parked`]).
    TurnParked(TurnParkedEvent),
    /// The model loaded a skill's instructions (`load_skill`).
    SkillLoaded(SkillLoadedEvent),
    /// A configured hook began to run (`[hooks]`).
    HookStarted(HookRunEvent),
    /// A hook ended: how, and what it said.
    HookCompleted(HookRunEvent),
    ShutdownComplete,
}

impl EventMsg {
    /// The snake_case `type` tag of this event.
    pub fn kind(&self) -> &'static str {
        match self {
            EventMsg::Error(_) => "error",
            EventMsg::Warning(_) => "warning",
            EventMsg::StreamError(_) => "stream_error",
            EventMsg::SessionConfigured(_) => "session_configured",
            EventMsg::TaskStarted(_) => "task_started",
            EventMsg::TaskComplete(_) => "task_complete",
            EventMsg::TurnAborted(_) => "turn_aborted",
            EventMsg::TokenCount(_) => "token_count",
            EventMsg::UserMessage(_) => "user_message",
            EventMsg::AgentMessage(_) => "agent_message",
            EventMsg::AgentMessageDelta(_) => "agent_message_delta",
            EventMsg::AgentReasoning(_) => "agent_reasoning",
            EventMsg::AgentReasoningDelta(_) => "agent_reasoning_delta",
            EventMsg::ExecCommandBegin(_) => "exec_command_begin",
            EventMsg::ExecCommandOutputDelta(_) => "exec_command_output_delta",
            EventMsg::ExecCommandEnd(_) => "exec_command_end",
            EventMsg::ExecApprovalRequest(_) => "exec_approval_request",
            EventMsg::ApplyPatchApprovalRequest(_) => "apply_patch_approval_request",
            EventMsg::PatchApplyBegin(_) => "patch_apply_begin",
            EventMsg::PatchApplyEnd(_) => "patch_apply_end",
            EventMsg::McpStartupUpdate(_) => "mcp_startup_update",
            EventMsg::McpStartupComplete(_) => "mcp_startup_complete",
            EventMsg::McpToolCallBegin(_) => "mcp_tool_call_begin",
            EventMsg::McpToolCallProgress(_) => "mcp_tool_call_progress",
            EventMsg::McpToolCallEnd(_) => "mcp_tool_call_end",
            EventMsg::ElicitationRequest(_) => "elicitation_request",
            EventMsg::ContextCompacted(_) => "context_compacted",
            EventMsg::PlanUpdate(_) => "plan_update",
            EventMsg::TurnParked(_) => "turn_parked",
            EventMsg::SkillLoaded(_) => "skill_loaded",
            EventMsg::HookStarted(_) => "hook_started",
            EventMsg::HookCompleted(_) => "hook_completed",
            EventMsg::ShutdownComplete => "shutdown_complete",
        }
    }

    /// True for the events that end a turn.
    pub fn ends_turn(&self) -> bool {
        matches!(self, EventMsg::TaskComplete(_) | EventMsg::TurnAborted(_))
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ErrorEvent {
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codex_error_info: Option<ErrorInfo>,
}

/// Machine-readable error category (snake_case, as in the reference).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorInfo {
    ContextWindowExceeded,
    UsageLimitExceeded,
    ServerOverloaded,
    InternalServerError,
    Unauthorized,
    BadRequest,
    SandboxError,
    Other,
    HttpConnectionFailed { http_status_code: Option<u16> },
    ResponseStreamConnectionFailed { http_status_code: Option<u16> },
    ResponseStreamDisconnected { http_status_code: Option<u16> },
    ResponseTooManyFailedAttempts { http_status_code: Option<u16> },
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WarningEvent {
    pub message: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StreamErrorEvent {
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codex_error_info: Option<ErrorInfo>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_details: Option<String>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SessionConfiguredEvent {
    pub session_id: ThreadId,
    pub thread_id: ThreadId,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from_id: Option<ThreadId>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_name: Option<String>,
    pub model: String,
    pub model_provider_id: String,
    pub approval_policy: AskForApproval,
    pub approvals_reviewer: String,
    pub sandbox_policy: SandboxPolicy,
    pub cwd: PathBuf,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<ReasoningEffort>,
    pub history_log_id: u64,
    pub history_entry_count: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_messages: Option<Vec<EventMsg>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout_path: Option<PathBuf>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TaskStartedEvent {
    pub turn_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<i64>,
    pub model_context_window: Option<i64>,
    /// Where `model_context_window` came from, in words (e.g. "llama.cpp /props n_ctx").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_context_window_source: Option<String>,
    pub collaboration_mode_kind: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TaskCompleteEvent {
    pub turn_id: String,
    pub last_agent_message: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnAbortReason {
    Interrupted,
    Replaced,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TurnAbortedEvent {
    pub turn_id: Option<String>,
    pub reason: TurnAbortReason,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TokenUsageInfo {
    pub total_token_usage: TokenUsage,
    pub last_token_usage: TokenUsage,
    pub model_context_window: Option<i64>,
    /// Where `model_context_window` came from, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_context_window_source: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RateLimitWindow {
    pub used_percent: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_minutes: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resets_at: Option<i64>,
}

/// Rate-limit state read from a provider's `x-ratelimit-*` response headers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RateLimitSnapshot {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary: Option<RateLimitWindow>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secondary: Option<RateLimitWindow>,
    /// The raw `x-ratelimit-*` headers, lower-cased names.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
}

/// The history was compacted. Fields beyond the reference's empty payload are optional so
/// `codex/event` consumers that expect `{}` keep working.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ContextCompactedEvent {
    /// Estimated tokens of the history before and after compaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_before: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_after: Option<i64>,
    /// `true` when the engine compacted on its own (window nearly full or an overflow error).
    #[serde(default)]
    pub automatic: bool,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TokenCountEvent {
    pub info: Option<TokenUsageInfo>,
    pub rate_limits: Option<RateLimitSnapshot>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UserMessageEvent {
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<Vec<String>>,
    #[serde(default)]
    pub local_images: Vec<PathBuf>,
    #[serde(default)]
    pub text_elements: Vec<serde_json::Value>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AgentMessageEvent {
    pub message: String,
    #[serde(default)]
    pub phase: Option<String>,
    #[serde(default)]
    pub memory_citation: Option<serde_json::Value>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AgentMessageDeltaEvent {
    pub delta: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AgentReasoningEvent {
    pub text: String,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AgentReasoningDeltaEvent {
    pub delta: String,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecCommandSource {
    #[default]
    Agent,
    UserShell,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExecCommandBeginEvent {
    pub call_id: String,
    pub turn_id: String,
    pub command: Vec<String>,
    pub cwd: PathBuf,
    pub parsed_cmd: Vec<ParsedCommand>,
    #[serde(default)]
    pub source: ExecCommandSource,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecOutputStream {
    Stdout,
    Stderr,
}

/// A chunk of command output. `chunk` is base64 (output need not be UTF-8).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExecCommandOutputDeltaEvent {
    pub call_id: String,
    pub stream: ExecOutputStream,
    pub chunk: String,
}

/// Rust's default `Duration` JSON shape, kept for wire compatibility.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireDuration {
    pub secs: u64,
    pub nanos: u32,
}

impl From<std::time::Duration> for WireDuration {
    fn from(d: std::time::Duration) -> Self {
        Self {
            secs: d.as_secs(),
            nanos: d.subsec_nanos(),
        }
    }
}

impl WireDuration {
    pub fn as_millis(&self) -> u64 {
        self.secs * 1000 + u64::from(self.nanos / 1_000_000)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecCommandStatus {
    Completed,
    Failed,
    Declined,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExecCommandEndEvent {
    pub call_id: String,
    pub turn_id: String,
    pub command: Vec<String>,
    pub cwd: PathBuf,
    pub parsed_cmd: Vec<ParsedCommand>,
    #[serde(default)]
    pub source: ExecCommandSource,
    pub stdout: String,
    pub stderr: String,
    pub aggregated_output: String,
    pub exit_code: i32,
    pub duration: WireDuration,
    pub formatted_output: String,
    pub status: ExecCommandStatus,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExecApprovalRequestEvent {
    pub call_id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<String>,
    pub turn_id: String,
    pub command: Vec<String>,
    pub cwd: PathBuf,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub parsed_cmd: Vec<ParsedCommand>,
}

impl ExecApprovalRequestEvent {
    /// The id to answer with in [`Op::ExecApproval`].
    pub fn effective_approval_id(&self) -> &str {
        self.approval_id.as_deref().unwrap_or(&self.call_id)
    }
}

/// One file's change in a patch, as shown for approval and in results.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FileChange {
    Add {
        content: String,
    },
    Delete {
        content: String,
    },
    Update {
        unified_diff: String,
        move_path: Option<PathBuf>,
    },
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApplyPatchApprovalRequestEvent {
    pub call_id: String,
    pub turn_id: String,
    pub changes: BTreeMap<PathBuf, FileChange>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_root: Option<PathBuf>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PatchApplyBeginEvent {
    pub call_id: String,
    pub turn_id: String,
    pub auto_approved: bool,
    pub changes: BTreeMap<PathBuf, FileChange>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PatchApplyStatus {
    Completed,
    Failed,
    Declined,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PatchApplyEndEvent {
    pub call_id: String,
    pub turn_id: String,
    pub stdout: String,
    pub stderr: String,
    pub success: bool,
    pub changes: BTreeMap<PathBuf, FileChange>,
    pub status: PatchApplyStatus,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum McpStartupStatus {
    Starting,
    Ready,
    Failed { error: String },
    Cancelled,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct McpStartupUpdateEvent {
    pub server: String,
    pub status: McpStartupStatus,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpStartupFailure {
    pub server: String,
    pub error: String,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct McpStartupCompleteEvent {
    pub ready: Vec<String>,
    pub failed: Vec<McpStartupFailure>,
    pub cancelled: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct McpInvocation {
    pub server: String,
    pub tool: String,
    pub arguments: Option<serde_json::Value>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct McpToolCallBeginEvent {
    pub call_id: String,
    pub invocation: McpInvocation,
}

/// Progress reported by an MCP server during a tool call.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct McpToolCallProgressEvent {
    pub call_id: String,
    pub progress: f64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Set when the server runs the call as a task (the MCP Tasks extension): the progress
    /// event that says so is kept in the thread, so a resumed thread fetches the task's
    /// result instead of calling the tool again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task: Option<McpCallTask>,
}

/// The task behind an MCP tool call, and where it stands for the thread.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpCallTask {
    /// The server's id of the task.
    pub task_id: String,
    pub state: McpCallTaskState,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum McpCallTaskState {
    /// The server runs the call as this task.
    Started,
    /// The session ended while the task ran; it was left running on the server, and the
    /// call's output says its result is fetched when the thread resumes.
    LeftRunning,
    /// A resumed thread fetched the task's result (or learned it is gone).
    Fetched,
}

/// `result` uses serde's `Result` encoding (`{"Ok": CallToolResult}` / `{"Err": "msg"}`)
/// as the reference does; `CallToolResult` is kept as raw MCP JSON.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct McpToolCallEndEvent {
    pub call_id: String,
    pub invocation: McpInvocation,
    pub duration: WireDuration,
    pub result: Result<serde_json::Value, String>,
}

/// An MCP server asked the user something (`elicitation/create`). Answer with
/// [`Op::ResolveElicitation`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ElicitationRequestEvent {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    pub server_name: String,
    pub id: serde_json::Value,
    /// The MCP `ElicitRequestParams` (`message`, `requestedSchema`, ...).
    pub request: serde_json::Value,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_json_matches_reference_shape() {
        let ev = Event {
            id: "1".into(),
            msg: EventMsg::TaskComplete(TaskCompleteEvent {
                turn_id: "1".into(),
                last_agent_message: Some("done".into()),
                completed_at: None,
                duration_ms: None,
            }),
        };
        let v = serde_json::to_value(&ev).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"id":"1","msg":{"type":"task_complete","turn_id":"1","last_agent_message":"done"}})
        );
        let back: Event = serde_json::from_value(v).unwrap();
        assert_eq!(back.msg.kind(), "task_complete");
    }

    #[test]
    fn sandbox_policy_json() {
        let v = serde_json::to_value(SandboxPolicy::workspace_write()).unwrap();
        assert_eq!(v["type"], "workspace-write");
        assert_eq!(
            serde_json::to_value(SandboxPolicy::ReadOnly).unwrap(),
            serde_json::json!({"type":"read-only"})
        );
    }

    #[test]
    fn mcp_end_result_uses_serde_result_encoding() {
        let ev = EventMsg::McpToolCallEnd(McpToolCallEndEvent {
            call_id: "c".into(),
            invocation: McpInvocation {
                server: "s".into(),
                tool: "t".into(),
                arguments: None,
            },
            duration: std::time::Duration::from_millis(1500).into(),
            result: Err("boom".into()),
        });
        let v = serde_json::to_value(&ev).unwrap();
        assert_eq!(v["result"], serde_json::json!({"Err":"boom"}));
        assert_eq!(
            v["duration"],
            serde_json::json!({"secs":1,"nanos":500000000})
        );
    }
}
