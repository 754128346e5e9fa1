//! The events of MCP servers and their tool calls: startup, calls and their tasks, and the
//! elicitations a server asks of the user.

use super::WireDuration;
use serde::{Deserialize, Serialize};

/// Where an MCP server's startup is.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "snake_case")]
pub enum McpStartupStatus {
    /// Starting.
    Starting,
    /// Ready; its tools are offered.
    Ready,
    /// It did not start.
    Failed {
        /// Why.
        error: String,
    },
    /// Its start was cancelled.
    Cancelled,
}

/// An MCP server's startup moved on.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct McpStartupUpdateEvent {
    /// The server's name in `[mcp_servers]`.
    pub server: String,
    /// Where its startup is.
    pub status: McpStartupStatus,
}

/// An MCP server that did not start.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct McpStartupFailure {
    /// The server's name in `[mcp_servers]`.
    pub server: String,
    /// Why.
    pub error: String,
}

/// Every MCP server has started or failed.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct McpStartupCompleteEvent {
    /// The servers that started.
    pub ready: Vec<String>,
    /// The servers that failed, and why.
    pub failed: Vec<McpStartupFailure>,
    /// The servers whose start was cancelled.
    pub cancelled: Vec<String>,
}

/// Which MCP tool a call calls, with what.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct McpInvocation {
    /// The server's name in `[mcp_servers]`.
    pub server: String,
    /// The tool's name on the server.
    pub tool: String,
    /// The call's arguments.
    pub arguments: Option<serde_json::Value>,
}

/// An MCP tool call began.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct McpToolCallBeginEvent {
    /// The id of the model's tool call.
    pub call_id: String,
    /// The server, tool and arguments.
    pub invocation: McpInvocation,
}

/// Progress reported by an MCP server during a tool call.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct McpToolCallProgressEvent {
    /// The id of the model's tool call.
    pub call_id: String,
    /// How far the call is.
    pub progress: f64,
    /// The total `progress` counts towards, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<f64>,
    /// What the server says it is doing.
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
    /// Where it stands.
    pub state: McpCallTaskState,
}

/// Where the task behind an MCP tool call stands for the thread.
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
    /// The id of the model's tool call.
    pub call_id: String,
    /// The server, tool and arguments.
    pub invocation: McpInvocation,
    /// How long the call took.
    pub duration: WireDuration,
    /// The server's `CallToolResult` (raw MCP JSON), or why the call failed.
    pub result: Result<serde_json::Value, String>,
}

/// An MCP server asked the user something (`elicitation/create`). Answer with
/// [`Op::ResolveElicitation`].
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ElicitationRequestEvent {
    /// The turn it arrived in, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn_id: Option<String>,
    /// The server's name in `[mcp_servers]`.
    pub server_name: String,
    /// The id of its request.
    pub id: serde_json::Value,
    /// The MCP `ElicitRequestParams` (`message`, `requestedSchema`, ...).
    pub request: serde_json::Value,
}
