//! The `Turn` object, its error, and the results and notifications of the turn methods.

use super::item::ThreadItem;
use super::{V2SandboxPolicy, V2UserInput, tri_state};
use oi_protocol::config_types::{AskForApproval, ReasoningEffort};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// How much of a turn's `items` a response carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TurnItemsView {
    /// `items` is empty on purpose.
    NotLoaded,
    /// The user's input and the final agent message.
    Summary,
    /// Every item.
    Full,
}

/// Where a turn is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum TurnStatus {
    /// Running: items are still coming.
    InProgress,
    /// Ended with the agent's answer.
    Completed,
    /// Stopped by `turn/interrupt` (or by the thread's end).
    Interrupted,
    /// Ended by an error: see the turn's `error`.
    Failed,
}

/// A turn. `items` follows `itemsView`; without `itemsView` it is empty in `turn/start`
/// results and `turn/started`, and complete in `thread/read` and `thread/resume`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Turn {
    /// The turn's id, unique within its thread.
    pub id: String,
    /// What happened in the turn, in order, as far as `itemsView` says.
    pub items: Vec<ThreadItem>,
    /// How much of `items` this response carries; absent where the method's rule applies
    /// (see the type's doc).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items_view: Option<TurnItemsView>,
    /// Where the turn is.
    pub status: TurnStatus,
    /// Set when `status` is `failed`.
    #[serde(default)]
    pub error: Option<TurnError>,
    /// Unix seconds.
    #[serde(default)]
    pub started_at: Option<i64>,
    /// Unix seconds.
    #[serde(default)]
    pub completed_at: Option<i64>,
    /// How long it ran, once it ended.
    #[serde(default)]
    pub duration_ms: Option<u64>,
}

impl Turn {
    /// A turn that has just started: no items, no end.
    pub fn in_progress(id: impl Into<String>, started_at: i64) -> Self {
        Turn {
            id: id.into(),
            items: Vec::new(),
            items_view: None,
            status: TurnStatus::InProgress,
            error: None,
            started_at: Some(started_at),
            completed_at: None,
            duration_ms: None,
        }
    }
}

/// Why a turn failed (also the `error` of the `error` notification).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnError {
    /// What went wrong, for the user to read.
    pub message: String,
    /// The error's class, when known: what a client may act on (compact the thread, retry
    /// later, fix the credentials).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codex_error_info: Option<CodexErrorInfo>,
    /// More about a stream error the engine retries.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub additional_details: Option<String>,
}

impl TurnError {
    /// An error with only a message.
    pub fn new(message: impl Into<String>) -> Self {
        TurnError {
            message: message.into(),
            codex_error_info: None,
            additional_details: None,
        }
    }
}

/// The class of a turn's error: a plain string, or an object naming the class with the
/// HTTP status that caused it (`{"httpConnectionFailed": {"httpStatusCode": 502}}`).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CodexErrorInfo {
    /// The history no longer fits the model's context window.
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
    HttpConnectionFailed(HttpStatus),
    /// The response stream could not be opened.
    ResponseStreamConnectionFailed(HttpStatus),
    /// The response stream broke off.
    ResponseStreamDisconnected(HttpStatus),
    /// Every retry failed.
    ResponseTooManyFailedAttempts(HttpStatus),
}

/// The HTTP status of an error, when there was one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HttpStatus {
    /// The status code; `null` when the failure came before a response.
    pub http_status_code: Option<u16>,
}

impl From<&oi_protocol::protocol::ErrorInfo> for CodexErrorInfo {
    fn from(info: &oi_protocol::protocol::ErrorInfo) -> Self {
        use oi_protocol::protocol::ErrorInfo as E;
        let status = |code: &Option<u16>| HttpStatus {
            http_status_code: *code,
        };
        match info {
            E::ContextWindowExceeded => CodexErrorInfo::ContextWindowExceeded,
            E::UsageLimitExceeded => CodexErrorInfo::UsageLimitExceeded,
            E::ServerOverloaded => CodexErrorInfo::ServerOverloaded,
            E::InternalServerError => CodexErrorInfo::InternalServerError,
            E::Unauthorized => CodexErrorInfo::Unauthorized,
            E::BadRequest => CodexErrorInfo::BadRequest,
            E::SandboxError => CodexErrorInfo::SandboxError,
            E::Other => CodexErrorInfo::Other,
            E::HttpConnectionFailed { http_status_code } => {
                CodexErrorInfo::HttpConnectionFailed(status(http_status_code))
            }
            E::ResponseStreamConnectionFailed { http_status_code } => {
                CodexErrorInfo::ResponseStreamConnectionFailed(status(http_status_code))
            }
            E::ResponseStreamDisconnected { http_status_code } => {
                CodexErrorInfo::ResponseStreamDisconnected(status(http_status_code))
            }
            E::ResponseTooManyFailedAttempts { http_status_code } => {
                CodexErrorInfo::ResponseTooManyFailedAttempts(status(http_status_code))
            }
        }
    }
}

/// `turn/start`'s result.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct TurnStartResponse {
    /// The turn just started: in progress, no items yet.
    pub turn: Turn,
}

/// `turn/steer`'s result: the turn the input joined.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnSteerResponse {
    /// The running turn that received the input.
    pub turn_id: String,
}

/// `turn/started`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnStartedNotification {
    /// The thread the turn runs on.
    pub thread_id: String,
    /// The turn, in progress, with no items.
    pub turn: Turn,
}

/// `turn/completed`: the turn with its summary items (`itemsView: "summary"`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnCompletedNotification {
    /// The thread the turn ran on.
    pub thread_id: String,
    /// The turn as it ended: status, error, times and summary items.
    pub turn: Turn,
}

/// `turn/start` params: the input, and settings that apply from this turn on.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnStartParams {
    /// The loaded thread to run the turn on.
    pub thread_id: String,
    /// What the user says: text, images, skills and mentions, in order.
    pub input: Vec<V2UserInput>,
    /// The working directory from this turn on (an existing folder).
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// `untrusted`, `on-failure`, `on-request` or `never`, from this turn on.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub approval_policy: Option<AskForApproval>,
    /// The sandbox from this turn on.
    #[serde(default)]
    pub sandbox_policy: Option<V2SandboxPolicy>,
    /// The model from this turn on.
    #[serde(default)]
    pub model: Option<String>,
    /// The reasoning effort from this turn on (`minimal`, `low`, `medium`, `high`, …).
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub effort: Option<ReasoningEffort>,
    /// Codex's collaboration mode: its settings apply to this turn; `plan` without an
    /// effort asks for `medium`.
    #[serde(default)]
    pub collaboration_mode: Option<CollaborationMode>,
}

/// A collaboration mode as `turn/start` sends it.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct CollaborationMode {
    /// The mode's name (`default` or `plan`, as `collaborationMode/list` lists them).
    #[serde(default)]
    pub mode: Option<String>,
    /// The model and effort the mode asks for.
    #[serde(default)]
    pub settings: Option<ModeSettings>,
}

/// Tri-state fields: absent keeps the current value, `null` means "the mode's default",
/// a value sets it.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct ModeSettings {
    /// The model for the turn (wins over the params' `model`).
    #[serde(default)]
    pub model: Option<String>,
    /// The effort for the turn; `null` is the mode's default.
    #[serde(default, deserialize_with = "tri_state", alias = "reasoningEffort")]
    #[schemars(with = "Option<String>")]
    pub reasoning_effort: Option<Option<ReasoningEffort>>,
}

/// `turn/steer` params: input for the running turn `expected_turn_id`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnSteerParams {
    /// The thread whose turn receives the input.
    pub thread_id: String,
    /// The input to add, read by the model at its next step.
    pub input: Vec<V2UserInput>,
    /// The turn the client means: refused when it is not the running one, so input meant
    /// for an ended turn does not land in the next.
    pub expected_turn_id: String,
}

/// `turn/interrupt` params.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnInterruptParams {
    /// The thread whose turn to stop.
    pub thread_id: String,
    /// The running turn to stop.
    pub turn_id: String,
}
