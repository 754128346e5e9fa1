//! Typed v2 messages: params, results and notifications as serde types that also describe
//! themselves as JSON Schema (`interpreter app-server generate-json-schema`). Field names
//! and required sets follow Codex app-server 0.171 (`tests/schema_facts.rs` checks them).
//! `Thread`, `Turn`, items and turn notifications live in the sibling modules and are
//! re-exported here, so this is the one place to import the wire from.

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
    /// Who the client is (it joins our `userAgent`).
    pub client_info: ClientInfo,
    /// What the client opts into or out of.
    #[serde(default)]
    pub capabilities: Option<InitializeCapabilities>,
}

/// The client's name and version, as `initialize` sends them.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ClientInfo {
    /// The client's name, e.g. `codex_vscode`.
    pub name: String,
    /// A display name.
    #[serde(default)]
    pub title: Option<String>,
    /// The client's version.
    pub version: String,
}

/// What a connection opts into (experimental API) or out of (notifications).
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

/// `initialize`'s result: who we are and where we keep our files.
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
    /// Oldest first.
    Asc,
    /// Newest first.
    Desc,
}

/// `thread/turns/list` params: a page of a thread's turns.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadTurnsListParams {
    /// The thread (loaded or stored).
    pub thread_id: String,
    /// Where to continue: a previous page's `nextCursor` (or `backwardsCursor`).
    #[serde(default)]
    pub cursor: Option<String>,
    /// Turns per page.
    #[serde(default)]
    pub limit: Option<u32>,
    /// Default: `desc` (newest first).
    #[serde(default)]
    pub sort_direction: Option<SortDirection>,
    /// Default: `summary`.
    #[serde(default)]
    pub items_view: Option<TurnItemsView>,
}

/// `thread/turns/list`'s result.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadTurnsListResponse {
    /// The turns of this page, with items as `itemsView` asked.
    pub data: Vec<Turn>,
    /// Continue in the same direction; `null` at the end.
    pub next_cursor: Option<String>,
    /// Pass as `cursor` with the opposite `sortDirection` to walk back (includes this
    /// page's first entry again).
    pub backwards_cursor: Option<String>,
}

/// `thread/items/list` params: a page of a thread's items.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadItemsListParams {
    /// The thread (loaded or stored).
    pub thread_id: String,
    /// Only this turn's items.
    #[serde(default)]
    pub turn_id: Option<String>,
    /// Where to continue: a previous page's `nextCursor` (or `backwardsCursor`).
    #[serde(default)]
    pub cursor: Option<String>,
    /// Items per page.
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
    /// The turn the item belongs to.
    pub turn_id: String,
    /// The item.
    pub item: ThreadItem,
}

/// `thread/items/list`'s result.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadItemsListResponse {
    /// The items of this page, each with its turn.
    pub data: Vec<ThreadItemEntry>,
    /// Continue in the same direction; `null` at the end.
    pub next_cursor: Option<String>,
    /// Pass as `cursor` with the opposite `sortDirection` to walk back.
    pub backwards_cursor: Option<String>,
}

// ---- thread lifecycle -------------------------------------------------------------------

/// Params of methods that only name a thread (`thread/delete`, `thread/unsubscribe`,
/// `thread/compact/start`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadIdParams {
    /// The thread.
    pub thread_id: String,
}

/// An empty result (`{}`).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
pub struct EmptyResponse {}

/// What `thread/unsubscribe` did.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ThreadUnsubscribeStatus {
    /// The thread was not loaded in this server: nothing to do.
    NotLoaded,
    /// This connection was not subscribed (Codex's status; not reported here: a loaded
    /// thread's unsubscribe always succeeds).
    NotSubscribed,
    /// This connection no longer gets the thread's events; the thread is closed when no
    /// other connection uses it.
    Unsubscribed,
}

/// `thread/unsubscribe`'s result.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadUnsubscribeResponse {
    /// What it did.
    pub status: ThreadUnsubscribeStatus,
}

/// `thread/closed`, `thread/deleted`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadIdNotification {
    /// The thread closed or deleted.
    pub thread_id: String,
}

/// `thread/compacted`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContextCompactedNotification {
    /// The thread whose history was compacted.
    pub thread_id: String,
    /// The turn that compacted it.
    pub turn_id: String,
}

/// `turn/plan/updated`: the model's plan (a harness profile's todo list), whole each time.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnPlanUpdatedNotification {
    /// The thread the plan belongs to.
    pub thread_id: String,
    /// The turn that updated it.
    pub turn_id: String,
    /// The model's note about the change, when it gave one.
    pub explanation: Option<String>,
    /// Every step, in order.
    pub plan: Vec<TurnPlanStep>,
}

/// One step of a plan.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TurnPlanStep {
    /// What the step is.
    pub step: String,
    /// Where it is.
    pub status: TurnPlanStepStatus,
}

/// Where a plan step is.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub enum TurnPlanStepStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
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
    /// What is deprecated.
    pub summary: String,
    /// What to use instead.
    #[serde(default)]
    pub details: Option<String>,
}

// ---- MCP servers ------------------------------------------------------------------------

/// `mcpServerStatus/list` params: a page of the configured MCP servers.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListMcpServerStatusParams {
    /// Where to continue: a previous page's `nextCursor`.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Servers per page.
    #[serde(default)]
    pub limit: Option<u32>,
    /// Report the servers of this loaded thread (default: a loaded thread, else the config).
    #[serde(default)]
    pub thread_id: Option<String>,
    /// Only this server.
    #[serde(default)]
    pub server_name: Option<String>,
}

/// How an MCP server authenticates, as far as the config tells.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum McpAuthStatus {
    /// Not known (an HTTP server without a bearer token: it may use OAuth).
    Unknown,
    /// No authentication (a stdio server).
    Unsupported,
    /// OAuth, not logged in (Codex's status).
    NotLoggedIn,
    /// A bearer token from an environment variable.
    BearerToken,
    /// OAuth, logged in (Codex's status).
    OAuth,
}

/// Where a thread's connection to an MCP server is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum McpServerConnectionStatus {
    /// Not started yet (Codex's status).
    NotStarted,
    /// Starting: initializing and listing its tools.
    Starting,
    /// Ready: its tools are offered.
    Connected,
    /// It needs a login first (Codex's status).
    AuthenticationRequired,
    /// It failed to start (`toolsError` says why).
    Failed,
    /// It was stopped.
    Cancelled,
    /// Disabled in the config (`enabled = false`).
    Disabled,
}

/// One configured MCP server. Tools, resources and templates are the server's own MCP JSON.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerStatus {
    /// The server's name (its key under `mcp_servers`).
    pub name: String,
    /// Tool name → MCP `Tool`.
    pub tools: BTreeMap<String, Value>,
    /// Its MCP resources.
    pub resources: Vec<Value>,
    /// Its MCP resource templates.
    pub resource_templates: Vec<Value>,
    /// How it authenticates.
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

/// `mcpServerStatus/list`'s result.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ListMcpServerStatusResponse {
    /// The servers of this page.
    pub data: Vec<McpServerStatus>,
    /// Pass as `cursor` for the next page; `null` at the end.
    pub next_cursor: Option<String>,
}

/// `mcpServer/startupStatus/updated`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerStatusUpdatedNotification {
    /// The server's name.
    pub name: String,
    /// `starting`, `ready`, `failed` or `cancelled`.
    pub status: String,
    /// Why it failed, when it did.
    #[serde(default)]
    pub error: Option<String>,
    /// Omitted: our startup updates are not tied to one thread.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
}

// ---- command/exec -----------------------------------------------------------------------

/// `command/exec` params: run one command outside any thread.
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
    /// Run without a time limit.
    #[serde(default)]
    pub disable_timeout: bool,
    /// Bytes kept of each of stdout and stderr. Default: 1 MiB. Cannot be combined with
    /// `disableOutputCap`.
    #[serde(default)]
    pub output_bytes_cap: Option<usize>,
    /// Keep all of stdout and stderr.
    #[serde(default)]
    pub disable_output_cap: bool,
    /// Environment changes: a string sets a variable, `null` removes it.
    #[serde(default)]
    pub env: Option<BTreeMap<String, Option<String>>>,
    /// Default: the configured sandbox (`sandbox_mode`).
    #[serde(default)]
    pub sandbox_policy: Option<Value>,
}

/// `command/exec`'s result: how the command ended and what it printed.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecResponse {
    /// 124 after a timeout, 128+N after signal N.
    pub exit_code: i32,
    /// Its stdout, up to the cap.
    pub stdout: String,
    /// Its stderr, up to the cap.
    pub stderr: String,
}

// ---- approvals --------------------------------------------------------------------------

/// What a command approval is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CommandExecutionApprovalKind {
    /// Running a command.
    Command,
    /// Writing to a running command's stdin (Codex's kind; not asked here: commands are not
    /// interactive).
    WriteStdin,
}

/// `item/commandExecution/requestApproval`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct CommandExecutionRequestApprovalParams {
    /// The thread whose turn asks.
    pub thread_id: String,
    /// The turn that asks.
    pub turn_id: String,
    /// The `commandExecution` item the approval is for.
    pub item_id: String,
    /// When the engine asked (Unix ms).
    pub started_at_ms: i64,
    /// What the approval is about.
    pub kind: CommandExecutionApprovalKind,
    /// The engine's id of this approval, when it differs from the item's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<String>,
    /// Why the agent asks (e.g. to run outside the sandbox).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The command line.
    pub command: Option<String>,
    /// Where it would run.
    pub cwd: Option<PathBuf>,
    /// What the command does, as far as its words tell.
    pub command_actions: Option<Vec<CommandAction>>,
    /// The decisions to offer, in order.
    pub available_decisions: Option<Vec<CommandExecutionApprovalDecision>>,
}

/// `item/fileChange/requestApproval`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FileChangeRequestApprovalParams {
    /// The thread whose turn asks.
    pub thread_id: String,
    /// The turn that asks.
    pub turn_id: String,
    /// The `fileChange` item the approval is for.
    pub item_id: String,
    /// When the engine asked (Unix ms).
    pub started_at_ms: i64,
    /// Why the agent asks, when it said.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// A folder the patch would make writable for the rest of the session, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grant_root: Option<PathBuf>,
}

/// `serverRequest/resolved`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServerRequestResolvedNotification {
    /// The thread the request belonged to.
    pub thread_id: String,
    /// The JSON-RPC id of the server request that no longer waits (answered, timed out, or
    /// cancelled with its turn).
    pub request_id: Value,
}

/// Serializes a wire type; our types always serialize (no maps with non-string keys).
pub fn to_value<T: Serialize>(v: &T) -> Value {
    serde_json::to_value(v).unwrap_or(Value::Null)
}
