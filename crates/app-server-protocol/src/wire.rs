//! Typed v2 messages: params, results and notifications as serde types that also describe
//! themselves as JSON Schema (`interpreter app-server generate-json-schema`). Field names
//! and required sets follow Codex app-server 0.171 (`tests/schema_facts.rs` checks them).
//! `Thread`, `Turn`, items and turn notifications live in the sibling modules and are
//! re-exported here, so this is the one place to import the wire from.
#![allow(missing_docs)] // TODO(issue 49): document this module's fields and variants

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::PathBuf;

pub use super::account::*;
pub use super::approval::*;
pub use super::catalog::*;
pub use super::config::*;
pub use super::fuzzy::*;
pub use super::item::*;
pub use super::notification::*;
pub use super::thread::*;
pub use super::turn::*;
pub use super::{V2SandboxPolicy, V2UserInput};

// ---- initialize -------------------------------------------------------------------------

/// `initialize` in app-server form (no `protocolVersion`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    pub client_info: ClientInfo,
    #[serde(default)]
    pub capabilities: Option<InitializeCapabilities>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientInfo {
    pub name: String,
    #[serde(default)]
    pub title: Option<String>,
    pub version: String,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeCapabilities {
    /// Opt into experimental methods and fields.
    #[serde(default)]
    pub experimental_api: bool,
    /// Exact notification method names this connection does not want.
    #[serde(default)]
    pub opt_out_notification_methods: Option<Vec<String>>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResponse {
    /// `<name>/<version> (<os>; <arch>) <client name>/<client version>`.
    pub user_agent: String,
    /// Our home directory (`$OPENINTERPRETER_HOME`, `~/.openinterpreter`).
    pub codex_home: PathBuf,
    /// `"unix"` or `"windows"`.
    pub platform_family: String,
    /// `"linux"`, `"macos"` or `"windows"`.
    pub platform_os: String,
}

// ---- turns and history ------------------------------------------------------------------

/// Pagination direction of `thread/turns/list` and `thread/items/list`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum SortDirection {
    Asc,
    Desc,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadTurnsListParams {
    pub thread_id: String,
    #[serde(default)]
    pub cursor: Option<String>,
    #[serde(default)]
    pub limit: Option<u32>,
    /// Default: `desc` (newest first).
    #[serde(default)]
    pub sort_direction: Option<SortDirection>,
    /// Default: `summary`.
    #[serde(default)]
    pub items_view: Option<TurnItemsView>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadTurnsListResponse {
    pub data: Vec<Turn>,
    /// Continue in the same direction; `null` at the end.
    pub next_cursor: Option<String>,
    /// Pass as `cursor` with the opposite `sortDirection` to walk back (includes this
    /// page's first entry again).
    pub backwards_cursor: Option<String>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadItemsListParams {
    pub thread_id: String,
    /// Only this turn's items.
    #[serde(default)]
    pub turn_id: Option<String>,
    #[serde(default)]
    pub cursor: Option<String>,
    #[serde(default)]
    pub limit: Option<u32>,
    /// Default: `asc` (oldest first).
    #[serde(default)]
    pub sort_direction: Option<SortDirection>,
}

/// One item with the turn it belongs to.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadItemEntry {
    pub turn_id: String,
    pub item: ThreadItem,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadItemsListResponse {
    pub data: Vec<ThreadItemEntry>,
    pub next_cursor: Option<String>,
    pub backwards_cursor: Option<String>,
}

// ---- thread lifecycle -------------------------------------------------------------------

/// Params of methods that only name a thread (`thread/delete`, `thread/unsubscribe`,
/// `thread/compact/start`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadIdParams {
    pub thread_id: String,
}

/// An empty result (`{}`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
pub struct EmptyResponse {}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ThreadUnsubscribeStatus {
    NotLoaded,
    NotSubscribed,
    Unsubscribed,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadUnsubscribeResponse {
    pub status: ThreadUnsubscribeStatus,
}

/// `thread/closed`, `thread/deleted`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadIdNotification {
    pub thread_id: String,
}

/// `thread/compacted`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContextCompactedNotification {
    pub thread_id: String,
    pub turn_id: String,
}

/// `turn/plan/updated`: the model's plan (a harness profile's todo list), whole each time.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnPlanUpdatedNotification {
    pub thread_id: String,
    pub turn_id: String,
    pub explanation: Option<String>,
    pub plan: Vec<TurnPlanStep>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnPlanStep {
    pub step: String,
    pub status: TurnPlanStepStatus,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum TurnPlanStepStatus {
    Pending,
    InProgress,
    Completed,
}

impl From<oi_protocol::protocol::PlanStepStatus> for TurnPlanStepStatus {
    fn from(s: oi_protocol::protocol::PlanStepStatus) -> Self {
        use oi_protocol::protocol::PlanStepStatus as S;
        match s {
            S::Pending => TurnPlanStepStatus::Pending,
            S::InProgress => TurnPlanStepStatus::InProgress,
            S::Completed => TurnPlanStepStatus::Completed,
        }
    }
}

/// Sent once per connection when a client uses a form we keep only for compatibility.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DeprecationNoticeNotification {
    pub summary: String,
    #[serde(default)]
    pub details: Option<String>,
}

// ---- MCP servers ------------------------------------------------------------------------

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListMcpServerStatusParams {
    #[serde(default)]
    pub cursor: Option<String>,
    #[serde(default)]
    pub limit: Option<u32>,
    /// Report the servers of this loaded thread (default: a loaded thread, else the config).
    #[serde(default)]
    pub thread_id: Option<String>,
    /// Only this server.
    #[serde(default)]
    pub server_name: Option<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum McpAuthStatus {
    Unknown,
    Unsupported,
    NotLoggedIn,
    BearerToken,
    OAuth,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum McpServerConnectionStatus {
    NotStarted,
    Starting,
    Connected,
    AuthenticationRequired,
    Failed,
    Cancelled,
    Disabled,
}

/// One configured MCP server. Tools, resources and templates are the server's own MCP JSON.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerStatus {
    pub name: String,
    /// Tool name → MCP `Tool`.
    pub tools: BTreeMap<String, Value>,
    pub resources: Vec<Value>,
    pub resource_templates: Vec<Value>,
    pub auth_status: McpAuthStatus,
    /// `null` when no thread has started the server yet.
    pub runtime_status: Option<McpServerConnectionStatus>,
    /// Why tool discovery failed, when it did.
    #[serde(default)]
    pub tools_error: Option<String>,
    /// The MCP protocol version the live connection negotiated (`2026-07-28`, `2025-11-25`,
    /// …); absent until the server is connected. Not a Codex field.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub protocol_version: Option<String>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListMcpServerStatusResponse {
    pub data: Vec<McpServerStatus>,
    pub next_cursor: Option<String>,
}

/// `mcpServer/startupStatus/updated`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerStatusUpdatedNotification {
    pub name: String,
    /// `starting`, `ready`, `failed` or `cancelled`.
    pub status: String,
    #[serde(default)]
    pub error: Option<String>,
    /// Omitted: our startup updates are not tied to one thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
}

// ---- command/exec -----------------------------------------------------------------------

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecParams {
    /// Program and arguments (not a shell string); must not be empty.
    pub command: Vec<String>,
    /// Default: the server's working directory (the config's `cwd`).
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// Default: 10 000 ms. Cannot be combined with `disableTimeout`.
    #[serde(default)]
    pub timeout_ms: Option<u64>,
    #[serde(default)]
    pub disable_timeout: bool,
    /// Bytes kept of each of stdout and stderr. Default: 1 MiB. Cannot be combined with
    /// `disableOutputCap`.
    #[serde(default)]
    pub output_bytes_cap: Option<usize>,
    #[serde(default)]
    pub disable_output_cap: bool,
    /// Environment changes: a string sets a variable, `null` removes it.
    #[serde(default)]
    pub env: Option<BTreeMap<String, Option<String>>>,
    /// Default: the configured sandbox (`sandbox_mode`).
    #[serde(default)]
    pub sandbox_policy: Option<Value>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecResponse {
    /// 124 after a timeout, 128+N after signal N.
    pub exit_code: i32,
    pub stdout: String,
    pub stderr: String,
}

// ---- approvals --------------------------------------------------------------------------

/// What a command approval is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CommandExecutionApprovalKind {
    Command,
    WriteStdin,
}

/// `item/commandExecution/requestApproval`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecutionRequestApprovalParams {
    pub thread_id: String,
    pub turn_id: String,
    pub item_id: String,
    /// When the engine asked (Unix ms).
    pub started_at_ms: i64,
    pub kind: CommandExecutionApprovalKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub command: Option<String>,
    pub cwd: Option<PathBuf>,
    pub command_actions: Option<Vec<CommandAction>>,
    /// The decisions to offer, in order.
    pub available_decisions: Option<Vec<CommandExecutionApprovalDecision>>,
}

/// `item/fileChange/requestApproval`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileChangeRequestApprovalParams {
    pub thread_id: String,
    pub turn_id: String,
    pub item_id: String,
    pub started_at_ms: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_root: Option<PathBuf>,
}

/// `serverRequest/resolved`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerRequestResolvedNotification {
    pub thread_id: String,
    pub request_id: Value,
}

/// Serializes a wire type; our types always serialize (no maps with non-string keys).
pub fn to_value<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}
