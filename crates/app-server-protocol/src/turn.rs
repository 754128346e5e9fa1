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
    InProgress,
    Completed,
    Interrupted,
    Failed,
}

/// A turn. `items` follows `itemsView`; without `itemsView` it is empty in `turn/start`
/// results and `turn/started`, and complete in `thread/read` and `thread/resume`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Turn {
    pub id: String,
    pub items: Vec<ThreadItem>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub items_view: Option<TurnItemsView>,
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
    pub message: String,
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
    ContextWindowExceeded,
    UsageLimitExceeded,
    ServerOverloaded,
    InternalServerError,
    Unauthorized,
    BadRequest,
    SandboxError,
    Other,
    HttpConnectionFailed(HttpStatus),
    ResponseStreamConnectionFailed(HttpStatus),
    ResponseStreamDisconnected(HttpStatus),
    ResponseTooManyFailedAttempts(HttpStatus),
}

/// The HTTP status of an error, when there was one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HttpStatus {
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
    pub turn: Turn,
}

/// `turn/steer`'s result: the turn the input joined.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnSteerResponse {
    pub turn_id: String,
}

/// `turn/started`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnStartedNotification {
    pub thread_id: String,
    pub turn: Turn,
}

/// `turn/completed`: the turn with its summary items (`itemsView: "summary"`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnCompletedNotification {
    pub thread_id: String,
    pub turn: Turn,
}

/// `turn/start` params: the input, and settings that apply from this turn on.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnStartParams {
    pub thread_id: String,
    pub input: Vec<V2UserInput>,
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub approval_policy: Option<AskForApproval>,
    #[serde(default)]
    pub sandbox_policy: Option<V2SandboxPolicy>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub effort: Option<ReasoningEffort>,
    #[serde(default)]
    pub collaboration_mode: Option<CollaborationMode>,
}

/// A collaboration mode as `turn/start` sends it.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct CollaborationMode {
    #[serde(default)]
    pub mode: Option<String>,
    #[serde(default)]
    pub settings: Option<ModeSettings>,
}

/// Tri-state fields: absent keeps the current value, `null` means "the mode's default",
/// a value sets it.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
pub struct ModeSettings {
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default, deserialize_with = "tri_state", alias = "reasoningEffort")]
    #[schemars(with = "Option<String>")]
    pub reasoning_effort: Option<Option<ReasoningEffort>>,
}

/// `turn/steer` params: input for the running turn `expected_turn_id`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnSteerParams {
    pub thread_id: String,
    pub input: Vec<V2UserInput>,
    pub expected_turn_id: String,
}

/// `turn/interrupt` params.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnInterruptParams {
    pub thread_id: String,
    pub turn_id: String,
}
