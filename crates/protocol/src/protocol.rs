//! The engine's queue pair: [`Submission`] (an [`Op`]) in, [`Event`] (an [`EventMsg`]) out.
//!
//! Every front end (exec, MCP server, v2 API, TUI) is an adapter over this one stream. Event
//! JSON is `{"id": <submission id>, "msg": {"type": <snake_case>, ...}}`, matching the
//! reference implementation so `codex/event` consumers keep working.

use crate::config_types::{AskForApproval, ReasoningEffort, SandboxPolicy};
use crate::ids::ThreadId;
use crate::models::TokenUsage;
use crate::parse_command::ParsedCommand;
use crate::user_input::UserInput;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::PathBuf;

mod exec_events;
// Parked turns' types and `EventMsg::TurnParked` hold each other: one module and its child.
pub mod parked;
pub use parked::{ParkedAnswer, ParkedRequest, TurnParkedEvent};
mod extensions;
mod mcp_events;
pub use exec_events::{
    ExecApprovalRequestEvent, ExecCommandBeginEvent, ExecCommandEndEvent,
    ExecCommandOutputDeltaEvent, ExecCommandSource, ExecCommandStatus, ExecOutputStream,
    WireDuration,
};
pub use extensions::{
    HookOutputEntry, HookOutputKind, HookRunEvent, HookRunStatus, PlanStep, PlanStepStatus,
    PlanUpdateEvent, SkillLoadedEvent,
};
pub use mcp_events::{
    ElicitationRequestEvent, McpCallTask, McpCallTaskState, McpInvocation, McpStartupCompleteEvent,
    McpStartupFailure, McpStartupStatus, McpStartupUpdateEvent, McpToolCallBeginEvent,
    McpToolCallEndEvent, McpToolCallProgressEvent,
};

/// An [`Op`] with the id that every event it causes will carry.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Submission {
    /// The id every event the op causes carries.
    pub id: String,
    /// What is asked.
    pub op: Op,
}

/// Per-turn settings a front end may change. `None` keeps the thread's current value;
/// a changed value stays in effect for later turns.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TurnOverrides {
    /// The working directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<PathBuf>,
    /// When the agent asks before acting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_policy: Option<AskForApproval>,
    /// The confinement commands run under.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox_policy: Option<SandboxPolicy>,
    /// The model turns are sent to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The reasoning effort asked of it.
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
        /// What the user sends: text and images.
        items: Vec<UserInput>,
        /// Settings changed from this turn on.
        #[serde(default)]
        overrides: TurnOverrides,
    },
    /// Stop the running turn. It ends with `turn_aborted { reason: "interrupted" }`.
    Interrupt,
    /// Answer an `exec_approval_request` (`id` = its `approval_id`, or `call_id`).
    ExecApproval {
        /// The request answered.
        id: String,
        /// The user's answer.
        decision: ReviewDecision,
    },
    /// Answer an `apply_patch_approval_request` (`id` = its `call_id`).
    PatchApproval {
        /// The request answered.
        id: String,
        /// The user's answer.
        decision: ReviewDecision,
    },
    /// Answer an `elicitation_request` that an MCP server sent us.
    ResolveElicitation {
        /// The server that asked.
        server_name: String,
        /// The id of its request.
        request_id: serde_json::Value,
        /// The user's answer.
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
    /// Run it.
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
    /// Whether it lets the action run.
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
    /// Whether the user accepted, declined or cancelled.
    pub action: ElicitationAction,
    /// The form's values, when accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<serde_json::Value>,
}

/// How the user answered an elicitation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitationAction {
    /// They filled in the form.
    Accept,
    /// They said no.
    Decline,
    /// They dismissed the question.
    Cancel,
}

/// One event out of a thread. `id` is the id of the submission that caused it
/// (the turn id for turn events; `""` for `session_configured`).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Event {
    /// The id of the submission that caused it.
    pub id: String,
    /// What happened.
    pub msg: EventMsg,
}

/// Everything a thread reports. Tagged `type`, snake_case, as in the reference.
#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum EventMsg {
    /// Something failed; the turn ends when it is the turn's error.
    Error(ErrorEvent),
    /// Something the user should know, that did not stop the turn.
    Warning(WarningEvent),
    /// A retryable problem while streaming from the model; the request is being retried.
    StreamError(StreamErrorEvent),
    /// The thread is ready: its settings (the first event of every thread).
    SessionConfigured(SessionConfiguredEvent),
    /// A turn began.
    #[serde(alias = "turn_started")]
    TaskStarted(TaskStartedEvent),
    /// A turn ended normally.
    #[serde(alias = "turn_complete")]
    TaskComplete(TaskCompleteEvent),
    /// A turn was interrupted or replaced.
    TurnAborted(TurnAbortedEvent),
    /// Tokens used so far, and the provider's rate limits.
    TokenCount(TokenCountEvent),
    /// The user's message, as the turn received it.
    UserMessage(UserMessageEvent),
    /// The model's whole answer.
    AgentMessage(AgentMessageEvent),
    /// A piece of the answer, as it streams.
    AgentMessageDelta(AgentMessageDeltaEvent),
    /// The model's whole reasoning.
    AgentReasoning(AgentReasoningEvent),
    /// A piece of the reasoning, as it streams.
    AgentReasoningDelta(AgentReasoningDeltaEvent),
    /// A command is about to run.
    ExecCommandBegin(ExecCommandBeginEvent),
    /// Output of a running command.
    ExecCommandOutputDelta(ExecCommandOutputDeltaEvent),
    /// A command ended.
    ExecCommandEnd(ExecCommandEndEvent),
    /// A command waits for the user's approval.
    ExecApprovalRequest(ExecApprovalRequestEvent),
    /// A patch waits for the user's approval.
    ApplyPatchApprovalRequest(ApplyPatchApprovalRequestEvent),
    /// A patch is about to be applied.
    PatchApplyBegin(PatchApplyBeginEvent),
    /// A patch was applied, failed or declined.
    PatchApplyEnd(PatchApplyEndEvent),
    /// An MCP server's startup moved on.
    McpStartupUpdate(McpStartupUpdateEvent),
    /// Every MCP server has started or failed.
    McpStartupComplete(McpStartupCompleteEvent),
    /// An MCP tool call began.
    McpToolCallBegin(McpToolCallBeginEvent),
    /// An MCP tool call reported progress.
    McpToolCallProgress(McpToolCallProgressEvent),
    /// An MCP tool call ended.
    McpToolCallEnd(McpToolCallEndEvent),
    /// An MCP server asks the user something.
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
    /// The thread has shut down; nothing follows.
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

/// Something failed.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ErrorEvent {
    /// What failed, and the fix where there is one.
    pub message: String,
    /// What kind of failure, in Codex's terms, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codex_error_info: Option<ErrorInfo>,
}

/// Machine-readable error category (snake_case, as in the reference).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorInfo {
    /// The history no longer fits the model's window.
    ContextWindowExceeded,
    /// The provider's usage limit is reached.
    UsageLimitExceeded,
    /// The provider is overloaded.
    ServerOverloaded,
    /// The provider failed.
    InternalServerError,
    /// The provider refused the credentials.
    Unauthorized,
    /// The provider refused the request.
    BadRequest,
    /// The sandbox refused.
    SandboxError,
    /// Anything else.
    Other,
    /// The provider could not be reached.
    HttpConnectionFailed {
        /// The HTTP status, when there was one.
        http_status_code: Option<u16>,
    },
    /// The response stream could not be opened.
    ResponseStreamConnectionFailed {
        /// The HTTP status, when there was one.
        http_status_code: Option<u16>,
    },
    /// The response stream broke off.
    ResponseStreamDisconnected {
        /// The HTTP status, when there was one.
        http_status_code: Option<u16>,
    },
    /// Every retry failed.
    ResponseTooManyFailedAttempts {
        /// The HTTP status, when there was one.
        http_status_code: Option<u16>,
    },
}

/// Something the user should know, that did not stop the turn.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct WarningEvent {
    /// The warning.
    pub message: String,
}

/// A model stream failed and is retried.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct StreamErrorEvent {
    /// What failed.
    pub message: String,
    /// What kind of failure, in Codex's terms, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codex_error_info: Option<ErrorInfo>,
    /// More about it, e.g. the retry it waits for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_details: Option<String>,
}

/// The thread is ready, with its settings.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SessionConfiguredEvent {
    /// The thread's id (Codex's older name for it).
    pub session_id: ThreadId,
    /// The thread's id.
    pub thread_id: ThreadId,
    /// The thread it was forked from, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forked_from_id: Option<ThreadId>,
    /// The name the user gave it, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_name: Option<String>,
    /// The model turns are sent to.
    pub model: String,
    /// The config's id of its provider.
    pub model_provider_id: String,
    /// When the agent asks before acting.
    pub approval_policy: AskForApproval,
    /// Who answers approvals (Codex's field; always the user here).
    pub approvals_reviewer: String,
    /// The confinement commands run under.
    pub sandbox_policy: SandboxPolicy,
    /// The working directory.
    pub cwd: PathBuf,
    /// The reasoning effort asked of the model, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Codex's prompt-history log id.
    pub history_log_id: u64,
    /// Codex's prompt-history entry count.
    pub history_entry_count: usize,
    /// The events of a resumed thread's history, to show again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_messages: Option<Vec<EventMsg>>,
    /// The thread's rollout file, when it is stored locally.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rollout_path: Option<PathBuf>,
}

/// A turn began.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TaskStartedEvent {
    /// The turn's id.
    pub turn_id: String,
    /// When it began (Unix seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<i64>,
    /// The model's context window in tokens, when known.
    pub model_context_window: Option<i64>,
    /// Where `model_context_window` came from, in words (e.g. "llama.cpp /props n_ctx").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_context_window_source: Option<String>,
    /// Codex's collaboration mode (always `default` here).
    pub collaboration_mode_kind: String,
}

/// A turn ended normally.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TaskCompleteEvent {
    /// The turn's id.
    pub turn_id: String,
    /// The model's last answer in the turn, if any.
    pub last_agent_message: Option<String>,
    /// When it ended (Unix seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<i64>,
    /// How long it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

/// Why a turn was aborted.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnAbortReason {
    /// The user interrupted it.
    Interrupted,
    /// A new turn replaced it.
    Replaced,
}

/// A turn was interrupted or replaced.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TurnAbortedEvent {
    /// The turn's id, when known.
    pub turn_id: Option<String>,
    /// Why it ended.
    pub reason: TurnAbortReason,
    /// When it ended (Unix seconds).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_at: Option<i64>,
    /// How long it ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

/// Tokens a thread has used.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TokenUsageInfo {
    /// All requests of the thread together.
    pub total_token_usage: TokenUsage,
    /// The last request.
    pub last_token_usage: TokenUsage,
    /// The model's context window in tokens, when known.
    pub model_context_window: Option<i64>,
    /// Where `model_context_window` came from, in words.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_context_window_source: Option<String>,
}

/// One rate-limit window of a provider.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RateLimitWindow {
    /// How much of the window's limit is used, in percent.
    pub used_percent: f64,
    /// The window's length in minutes, when the provider says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_minutes: Option<i64>,
    /// When it resets (Unix seconds), when the provider says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resets_at: Option<i64>,
}

/// Rate-limit state read from a provider's `x-ratelimit-*` response headers.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RateLimitSnapshot {
    /// The requests window, when the provider reports one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub primary: Option<RateLimitWindow>,
    /// The tokens window, when the provider reports one.
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
    /// Estimated tokens of the history after compaction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_after: Option<i64>,
    /// `true` when the engine compacted on its own (window nearly full or an overflow error).
    #[serde(default)]
    pub automatic: bool,
}

/// Tokens used so far, and the provider's rate limits.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TokenCountEvent {
    /// The thread's token usage, when known.
    pub info: Option<TokenUsageInfo>,
    /// The provider's rate limits, when it sends them.
    pub rate_limits: Option<RateLimitSnapshot>,
}

/// The user's message, as the turn received it.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UserMessageEvent {
    /// Its text.
    pub message: String,
    /// Image URLs it carried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<Vec<String>>,
    /// Image files it carried.
    #[serde(default)]
    pub local_images: Vec<PathBuf>,
    /// Codex's rich-text elements (always empty here).
    #[serde(default)]
    pub text_elements: Vec<serde_json::Value>,
}

/// The model's whole answer.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AgentMessageEvent {
    /// Its text.
    pub message: String,
    /// Codex's answer phase, when set.
    #[serde(default)]
    pub phase: Option<String>,
    /// Codex's memory citation, when set.
    #[serde(default)]
    pub memory_citation: Option<serde_json::Value>,
}

/// A piece of the answer, as it streams.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AgentMessageDeltaEvent {
    /// The piece.
    pub delta: String,
}

/// The model's whole reasoning.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AgentReasoningEvent {
    /// Its text.
    pub text: String,
}

/// A piece of the reasoning, as it streams.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AgentReasoningDeltaEvent {
    /// The piece.
    pub delta: String,
}

/// One file's change in a patch, as shown for approval and in results.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum FileChange {
    /// A new file.
    Add {
        /// Its content.
        content: String,
    },
    /// A deleted file.
    Delete {
        /// What it held.
        content: String,
    },
    /// A changed (or moved) file.
    Update {
        /// The change as a unified diff.
        unified_diff: String,
        /// Where it moves to, if it moves.
        move_path: Option<PathBuf>,
    },
}

/// A patch waits for the user's approval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApplyPatchApprovalRequestEvent {
    /// The id of the tool call.
    pub call_id: String,
    /// The turn it would be applied in.
    pub turn_id: String,
    /// The changes, by file.
    pub changes: BTreeMap<PathBuf, FileChange>,
    /// Why it needs approval, when there is a reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A folder the patch would make writable for the session, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_root: Option<PathBuf>,
}

/// A patch is about to be applied.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PatchApplyBeginEvent {
    /// The id of the tool call.
    pub call_id: String,
    /// The turn it is applied in.
    pub turn_id: String,
    /// Whether it runs without asking.
    pub auto_approved: bool,
    /// The changes, by file.
    pub changes: BTreeMap<PathBuf, FileChange>,
}

/// How applying a patch ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PatchApplyStatus {
    /// Every change was applied.
    Completed,
    /// It could not be applied.
    Failed,
    /// The user declined it.
    Declined,
}

/// A patch was applied, failed or declined.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PatchApplyEndEvent {
    /// The id of the tool call.
    pub call_id: String,
    /// The turn it was applied in.
    pub turn_id: String,
    /// What the patch tool reported.
    pub stdout: String,
    /// Why it failed, if it did.
    pub stderr: String,
    /// Whether it applied.
    pub success: bool,
    /// The changes, by file.
    pub changes: BTreeMap<PathBuf, FileChange>,
    /// How it ended.
    pub status: PatchApplyStatus,
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
