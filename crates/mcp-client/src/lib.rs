//! MCP client: connects to the servers configured under `[mcp_servers.*]` and exposes their tools.
//!
//! Public surface:
//! * [`McpConnectionManager`] — one per session: starts every enabled server in parallel
//!   (stdio children in their own process group with a cleared environment; streamable HTTP),
//!   reports `mcp_startup_update` / `mcp_startup_complete` events, serves the merged tool
//!   catalog ([`McpToolInfo`], names `mcp__<server>__<tool>`) including cached catalogs of
//!   servers still starting, calls tools with timeouts, cancellation, progress and crash
//!   recovery, and kills every child on [`McpConnectionManager::shutdown`].
//! * [`needs_approval`] — the approval decision for one call from the tool's approval mode,
//!   its annotations and the session's policy.
//! * [`call_result_to_output`] — a raw `CallToolResult` turned into what the model sees.
//! * [`ElicitationHandler`] — how server-initiated `elicitation/create` reaches the user.
//! * [`SamplingHandler`] — how `sampling/createMessage` of a server whose `sampling` setting
//!   allows it reaches the session's model ([`SamplingRequest`], checked and bounded here).
//!
//! This crate knows nothing about turns, models or front ends: the engine owns approvals,
//! `mcp_tool_call_*` events and the elicitation UI; this crate only reports through the
//! `EventMsg` channel it is given and the handler it is passed.

mod approval;
mod cache;
mod connect_error;
mod connection;
mod convert;
mod elicit_defaults;
mod handler;
mod http;
mod login_probe;
mod manager;
mod mrtr;
pub mod naming;
pub mod oauth;
mod oauth_error;
mod oauth_grants;
pub mod oauth_session;
pub mod oauth_store;
pub mod prompts;
mod protocol;
mod request_error;
mod sampling;
mod sniff;
mod status;
mod stdio;
mod tool_list;
mod tool_schema;
mod wire_error;

pub use approval::{annotations_need_approval, needs_approval};
pub use convert::{DEFAULT_RESULT_BUDGET_BYTES, call_result_to_output, truncate_middle};
pub use manager::McpConnectionManager;
pub use mrtr::MAX_INPUT_ROUNDS;
pub use oauth_error::OAuthError;
pub use oi_config::mcp::{McpApprovalMode, McpSamplingMode, McpServerConfig};
pub use protocol::{Era as McpProtocolEra, Negotiated as McpNegotiatedProtocol, last_negotiated};
pub use request_error::McpRequestError;
pub use sampling::{
    MAX_SAMPLING_REQUEST_BYTES, SamplingContent, SamplingError, SamplingHandler, SamplingMessage,
    SamplingReply, SamplingRequest, SamplingRole, SamplingStop,
};
pub use status::{McpServerState, McpServerStatus};
pub use stdio::BASE_ENV_VARS;

use futures::future::BoxFuture;
use oi_protocol::protocol::ElicitationResponse;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// How long [`McpConnectionManager::start`] waits for optional servers that have no cached
/// catalog before returning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartupWait {
    /// At most this long; `Duration::ZERO` never blocks (an interactive session: the tools of
    /// late servers join the catalog when they are ready, and the UI shows their progress).
    UpTo(Duration),
    /// Until each such server is ready or has failed, which its own `startup_timeout_sec`
    /// bounds (headless runs — `exec`, the MCP `codex` tool, v2 turns — whose single model
    /// request would otherwise go out without the tools of a slow server).
    UntilReadyOrFailed,
}

/// Session settings the manager needs.
#[derive(Clone)]
pub struct McpStartOptions {
    /// Session cwd: default child cwd, and what `roots = ["."]` means.
    pub cwd: PathBuf,
    /// The Open Interpreter home (`$HOME/cache/mcp/` holds cached catalogs).
    pub home: PathBuf,
    /// Answers servers' `elicitation/create` requests.
    pub elicitation: Arc<dyn ElicitationHandler>,
    /// How long `start()` waits for optional servers without a cached catalog.
    pub startup_wait: StartupWait,
    /// Serves `sampling/createMessage`; `None` (probes, tools without a model): sampling is
    /// offered to no server, whatever its `sampling` setting.
    pub sampling: Option<Arc<dyn SamplingHandler>>,
    /// Shows the user an OAuth authorization URL when a server asks for a login (or more
    /// scopes) during the session; `None` (headless) fails with the `mcp login` command.
    pub oauth_browser: Option<Arc<dyn oauth_session::OAuthBrowser>>,
    /// Where OAuth tokens are read and refreshed (`mcp_oauth_credentials_store`).
    pub oauth_store: oi_config::OAuthCredentialsStoreMode,
}

/// Answers `elicitation/create` requests from servers (the engine asks the user, or passes
/// the question up to our own MCP client under `mcp-server`).
pub trait ElicitationHandler: Send + Sync {
    /// The user's answer to `server`'s request `request_id` (its `params` as sent).
    fn elicit(
        &self,
        server: String,
        request_id: serde_json::Value,
        params: serde_json::Value,
    ) -> BoxFuture<'static, ElicitationResponse>;
}

/// Declines every elicitation (for contexts with nobody to ask, e.g. `mcp list --probe`).
pub struct DeclineElicitations;

impl ElicitationHandler for DeclineElicitations {
    fn elicit(
        &self,
        _server: String,
        _request_id: serde_json::Value,
        _params: serde_json::Value,
    ) -> BoxFuture<'static, ElicitationResponse> {
        Box::pin(async {
            ElicitationResponse {
                action: oi_protocol::protocol::ElicitationAction::Decline,
                content: None,
            }
        })
    }
}

/// A required server failed to start.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("required MCP server `{server}` failed to start: {message}")]
pub struct McpStartupError {
    /// The server's name in `[mcp_servers]`.
    pub server: String,
    /// Why it did not start.
    pub message: String,
}

/// One tool the model may call.
#[derive(Clone, Debug, PartialEq)]
pub struct McpToolInfo {
    /// `mcp__<server>__<tool>`, sanitized, ≤ 64 bytes, unique.
    pub qualified_name: String,
    /// Raw server name (config key).
    pub server: String,
    /// Raw tool name, as sent on the wire.
    pub tool: String,
    /// What the server says the tool does.
    pub description: String,
    /// The tool's JSON Schema as every provider takes it: an object schema with `properties`,
    /// cleaned of what strict providers refuse (see `tool_schema`).
    pub input_schema: serde_json::Value,
    /// MCP `ToolAnnotations` (`readOnlyHint`, `destructiveHint`, ...), if any.
    pub annotations: Option<serde_json::Value>,
    /// Whether a call asks the user first.
    pub approval_mode: McpApprovalMode,
}

impl McpToolInfo {
    /// As a model function tool.
    pub fn to_tool_spec(&self) -> oi_protocol::models::ToolSpec {
        oi_protocol::models::ToolSpec {
            name: self.qualified_name.clone(),
            description: self.description.clone(),
            parameters: self.input_schema.clone(),
        }
    }
}

/// A `notifications/progress` from a server during a call.
#[derive(Clone, Debug, PartialEq)]
pub struct McpProgress {
    /// How far the call is.
    pub progress: f64,
    /// The total `progress` counts towards, when known.
    pub total: Option<f64>,
    /// What the server says it is doing.
    pub message: Option<String>,
}

/// What the caller of [`McpConnectionManager::call_tool_observed`] hears while the call runs.
#[derive(Clone, Debug, Default)]
pub struct McpCallObserver {
    /// The server's progress, and the status of a call that became a task.
    pub progress: Option<tokio::sync::mpsc::UnboundedSender<McpProgress>>,
    /// Told once, when the call became a task (Tasks extension, 2026-07-28): a thread names
    /// the task, so a resumed thread fetches its result instead of calling the tool again.
    pub task: Option<tokio::sync::mpsc::UnboundedSender<McpTaskStarted>>,
}

/// A tool call that the server runs as a task.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpTaskStarted {
    /// The server's name in `[mcp_servers]`.
    pub server: String,
    /// The tool's name on the server.
    pub tool: String,
    /// The server's id of the task (`tasks/get`, `tasks/update`, `tasks/cancel`).
    pub task_id: String,
}
