//! [`McpRequestError`]: why a request to one MCP server (`tools/call`, `resources/*`,
//! `prompts/*`) got no result — the server is unknown or not ready, the request could not be
//! sent, the server answered with an error, the connection failed, the call timed out or was
//! interrupted.
//!
//! Its `Display` is the one line the model or the user reads: it names the server and, where
//! there is one, the fix. No rmcp type name is in it (transport errors are worded by
//! `wire_error`, through `connection::describe_service_error`), and it carries no prefix of its own, so a caller
//! that adds one (`tool call error: …`) adds the only one.

use std::time::Duration;

/// A request to an MCP server that got no result. Its `Display` is the one-line message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum McpRequestError {
    /// No configured server has this name.
    #[error(
        "unknown MCP server `{server}`; configured servers: {}",
        list_or_none(.configured)
    )]
    UnknownServer {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The names of the configured servers.
        configured: Vec<String>,
    },
    /// The model named a server that is not configured or not enabled.
    #[error("unknown MCP server `{server}`; it is not configured or not enabled")]
    ServerNotEnabled {
        /// The server's name in `[mcp_servers]`.
        server: String,
    },
    /// The tool is filtered out by the server's `enabled_tools`/`disabled_tools`.
    #[error("tool '{tool}' is disabled for MCP server '{server}'")]
    ToolDisabled {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The tool's name on the server.
        tool: String,
    },
    /// The server has no live connection: it failed to start or restart, is not running, the
    /// manager was shut down, or the wait for it was interrupted.
    #[error("{0}")]
    NotReady(String),
    /// The request could not be built from its parameters.
    #[error("cannot build {method} for MCP server `{server}`: {reason}")]
    Build {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The MCP method, e.g. `resources/read`.
        method: String,
        /// Why, in words.
        reason: String,
    },
    /// The request could not be sent.
    #[error("could not send {method} to MCP server `{server}`: {reason}")]
    Send {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The MCP method, e.g. `resources/read`.
        method: String,
        /// Why, in words.
        reason: String,
    },
    /// The server answered with a JSON-RPC error; `request` is the method (with the tool
    /// for `tools/call`).
    #[error("MCP server `{server}` answered {request} with error {code}: {message}")]
    ErrorReply {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The request, e.g. `tools/call search`.
        request: String,
        /// The JSON-RPC error code.
        code: i32,
        /// The server's error message.
        message: String,
    },
    /// The server runs this tool only as a task (SEP-1686), which this client does not do.
    #[error(
        "MCP server `{server}` runs `{tool}` only as a task (SEP-1686 `taskSupport: required`), which this client does not support; the tool is no longer offered"
    )]
    TaskRequired {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The tool's name on the server.
        tool: String,
    },
    /// The server's process ended during a tool call.
    #[error(
        "MCP server `{server}` stopped during the call to `{tool}`: {detail}. It will be restarted on the next call."
    )]
    ServerStopped {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The tool's name on the server.
        tool: String,
        /// What ended it, in words.
        detail: String,
    },
    /// The transport failed during a tool call; the next call reconnects.
    #[error(
        "{reason}. The connection to MCP server `{server}` will be re-established on the next call."
    )]
    ConnectionLost {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// Why, in words.
        reason: String,
    },
    /// The server needs (more) OAuth authorization: the OAuth line, naming the fix.
    #[error("{0}")]
    Authorization(String),
    /// A request other than a tool call failed on the server's side or the transport.
    #[error("{method} on MCP server `{server}` failed: {reason}")]
    Failed {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The MCP method, e.g. `resources/read`.
        method: String,
        /// Why, in words.
        reason: String,
    },
    /// The connection closed before the answer.
    #[error("MCP server `{server}` closed the connection during {method}")]
    Closed {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The MCP method, e.g. `resources/read`.
        method: String,
    },
    /// The answer is not the result the method has.
    #[error("unreadable {method} result from MCP server `{server}`: {reason}")]
    Unreadable {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The MCP method, e.g. `resources/read`.
        method: String,
        /// Why, in words.
        reason: String,
    },
    /// A tool call took longer than `tool_timeout_sec` (the server was told to cancel it).
    #[error(
        "timed out awaiting tools/call `{tool}` on MCP server `{server}` after {}s (the server was sent notifications/cancelled). If the tool needs longer, raise `tool_timeout_sec` in [mcp_servers.{server}].",
        .timeout.as_secs_f64()
    )]
    CallTimedOut {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The tool's name on the server.
        tool: String,
        /// The time it was given.
        timeout: Duration,
    },
    /// Another request took longer than `tool_timeout_sec`.
    #[error(
        "timed out awaiting {method} on MCP server `{server}` after {}s; raise `tool_timeout_sec` in [mcp_servers.{server}] if it needs longer",
        .timeout.as_secs_f64()
    )]
    TimedOut {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The MCP method, e.g. `resources/read`.
        method: String,
        /// The time it was given.
        timeout: Duration,
    },
    /// The user interrupted a tool call.
    #[error("the call to `{tool}` on MCP server `{server}` was interrupted")]
    CallInterrupted {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The tool's name on the server.
        tool: String,
    },
    /// The user interrupted another request.
    #[error("{method} on MCP server `{server}` was interrupted")]
    Interrupted {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The MCP method, e.g. `resources/read`.
        method: String,
    },
    /// The server asked for something before answering (a multi round-trip request or a
    /// task's `inputRequests`) that could not be given.
    #[error(
        "MCP server `{server}` asked for {asked} during {request}, which was refused: {reason}"
    )]
    InputRefused {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The request, e.g. `tools/call search`.
        request: String,
        /// What the server asked for.
        asked: String,
        /// Why, in words.
        reason: String,
    },
    /// The server kept asking for more input without ever answering.
    #[error(
        "MCP server `{server}` asked for more input {rounds} times during {request} without answering; gave up"
    )]
    InputRoundsExceeded {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The request, e.g. `tools/call search`.
        request: String,
        /// How many times it asked.
        rounds: usize,
    },
    /// A tool call the server ran as a task failed on the server's side.
    #[error(
        "the task `{task_id}` of `{tool}` on MCP server `{server}` failed with error {code}: {message}"
    )]
    TaskFailed {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The tool's name on the server.
        tool: String,
        /// The server's id of the task.
        task_id: String,
        /// The JSON-RPC error code.
        code: i32,
        /// The server's error message.
        message: String,
    },
    /// The server cancelled the task behind a tool call.
    #[error("MCP server `{server}` cancelled the task `{task_id}` of `{tool}`")]
    TaskCancelled {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The tool's name on the server.
        tool: String,
        /// The server's id of the task.
        task_id: String,
    },
    /// The server no longer knows the task (it expired, or the server restarted).
    #[error(
        "MCP server `{server}` no longer knows the task `{task_id}` of `{tool}` ({message}); call the tool again if its result is still needed"
    )]
    TaskLost {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The tool's name on the server.
        tool: String,
        /// The server's id of the task.
        task_id: String,
        /// The server's error message.
        message: String,
    },
    /// A task ran longer than `tool_timeout_sec` (the server was sent `tasks/cancel`).
    #[error(
        "timed out awaiting the task `{task_id}` of `{tool}` on MCP server `{server}` after {}s (the server was sent tasks/cancel). If the tool needs longer, raise `tool_timeout_sec` in [mcp_servers.{server}].",
        .timeout.as_secs_f64()
    )]
    TaskTimedOut {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The tool's name on the server.
        tool: String,
        /// The server's id of the task.
        task_id: String,
        /// The time it was given.
        timeout: Duration,
    },
    /// The session ended while the server still ran the task; it was left running, and the
    /// thread names it, so resuming the thread fetches its result.
    #[error(
        "the session ended while MCP server `{server}` was still running `{tool}` as the task `{task_id}`; the task was left running and its result is fetched when the thread is resumed"
    )]
    TaskLeftRunning {
        /// The server's name in `[mcp_servers]`.
        server: String,
        /// The tool's name on the server.
        tool: String,
        /// The server's id of the task.
        task_id: String,
    },
}

/// `a, b`, or `none`.
fn list_or_none(names: &[String]) -> String {
    if names.is_empty() {
        "none".to_string()
    } else {
        names.join(", ")
    }
}

impl McpRequestError {
    /// Whether the user's interrupt ended the request.
    pub fn is_interrupted(&self) -> bool {
        matches!(
            self,
            McpRequestError::CallInterrupted { .. } | McpRequestError::Interrupted { .. }
        )
    }

    /// The task a call left running on the server when the session ended, if that is how it
    /// ended.
    pub fn task_left_running(&self) -> Option<&str> {
        match self {
            McpRequestError::TaskLeftRunning { task_id, .. } => Some(task_id),
            _ => None,
        }
    }
}
