//! A per-server status snapshot for front ends (`/mcp verbose`, `mcpServerStatus/list`):
//! state, transport, the negotiated protocol, tools, resources, resource templates, prompts
//! and the last error.

use crate::manager::{ConnState, McpConnectionManager, ServerEntry, ToolSet};
use oi_config::mcp::McpServerTransportConfig;
use serde::Serialize;
use serde_json::Value;

/// Where a server is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum McpServerState {
    /// Connecting and initializing.
    Starting,
    /// Connected; its tools are offered.
    Ready,
    /// Did not start, or its restart failed.
    Failed,
    /// Shut down with the session.
    Stopped,
}

/// One server as a front end shows it. Lists are the raw MCP JSON objects (`Tool`,
/// `Resource`, `ResourceTemplate`, `Prompt`), so a front end can render any field.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct McpServerStatus {
    /// The config key (`[mcp_servers.<name>]`).
    pub name: String,
    /// Where it is in its life.
    pub state: McpServerState,
    /// `"stdio"` or `"streamable_http"`.
    pub transport: &'static str,
    /// The tools the server lists (live, or from the catalog cache while it starts), before
    /// `enabled_tools`/`disabled_tools` filtering.
    pub tools: Vec<Value>,
    /// Tools the model is not offered, with the reason (filtered by config, or needing a
    /// protocol feature this client does not have).
    pub withheld_tools: Vec<(String, String)>,
    /// The resources it lists.
    pub resources: Vec<Value>,
    /// The resource templates it lists.
    pub resource_templates: Vec<Value>,
    /// The prompts it lists.
    pub prompts: Vec<Value>,
    /// The startup (or restart) error, if the server failed.
    pub last_error: Option<String>,
    /// The protocol version and era the live connection negotiated (`None` until ready).
    pub protocol: Option<crate::protocol::Negotiated>,
}

impl McpConnectionManager {
    /// A snapshot of every configured (enabled) server, in name order. Resources and prompts
    /// are those listed when the server became ready.
    pub fn status(&self) -> Vec<McpServerStatus> {
        self.entries().map(entry_status).collect()
    }

    /// One line per server whose tools the model is not offered now, with the reason — what a
    /// headless run prints before its first request.
    pub fn unavailable_servers(&self) -> Vec<(String, String)> {
        self.status()
            .into_iter()
            .filter_map(|s| match s.state {
                McpServerState::Failed => Some((
                    s.name,
                    s.last_error.unwrap_or_else(|| "it failed to start".into()),
                )),
                McpServerState::Starting if s.tools.is_empty() => Some((
                    s.name,
                    "it is still starting and has no cached tool list yet".into(),
                )),
                _ => None,
            })
            .collect()
    }
}

fn entry_status(entry: &std::sync::Arc<ServerEntry>) -> McpServerStatus {
    let (state, last_error, protocol) = match &*entry.state.borrow() {
        ConnState::Starting => (McpServerState::Starting, None, None),
        ConnState::Ready(conn) => (McpServerState::Ready, None, Some(conn.negotiated.clone())),
        ConnState::Failed(e) => (McpServerState::Failed, Some(e.clone()), None),
        ConnState::Stopped => (McpServerState::Stopped, None, None),
    };
    let tools = match &*entry.tools.read().unwrap_or_else(|e| e.into_inner()) {
        ToolSet::None => Vec::new(),
        ToolSet::Cached(t) | ToolSet::Live(t) => t.clone(),
    };
    let withheld_tools = tools
        .iter()
        .filter_map(|t| {
            let name = t.get("name").and_then(Value::as_str)?;
            entry
                .withheld_reason(name, t)
                .map(|why| (name.to_string(), why))
        })
        .collect();
    let details = entry
        .details
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .clone();
    McpServerStatus {
        name: entry.name.clone(),
        state,
        transport: match entry.config.transport {
            McpServerTransportConfig::Stdio { .. } => "stdio",
            McpServerTransportConfig::StreamableHttp { .. } => "streamable_http",
        },
        tools,
        withheld_tools,
        resources: details.resources,
        resource_templates: details.resource_templates,
        prompts: details.prompts,
        last_error,
        protocol,
    }
}
