//! Thread items: what a turn is made of on the v2 wire (`item/started`, `item/completed`,
//! `Turn.items`, `thread/items/list`). Variant and field names follow Codex 0.171's
//! `ThreadItem`; we produce the variants our engine has events for.

use super::V2UserInput;
use oi_protocol::parse_command::ParsedCommand;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::PathBuf;

/// One item of a turn, tagged by `type`.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
// Items are built once per event and serialized at once; boxing would only add allocations.
#[allow(clippy::large_enum_variant)]
pub enum ThreadItem {
    /// The user's input that opened (or steered) the turn.
    UserMessage {
        id: String,
        content: Vec<V2UserInput>,
    },
    /// A message from the model; `text` grows with `item/agentMessage/delta`.
    #[serde(rename_all = "camelCase")]
    AgentMessage {
        id: String,
        text: String,
        /// The engine's phase label of the message, when the model gave one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        phase: Option<String>,
    },
    /// The model's reasoning: `content` is the raw text, `summary` stays empty (open
    /// models stream no separate summary).
    Reasoning {
        id: String,
        #[serde(default)]
        summary: Vec<String>,
        #[serde(default)]
        content: Vec<String>,
    },
    /// A shell command the agent runs (or wants to run, while its approval waits).
    #[serde(rename_all = "camelCase")]
    CommandExecution {
        /// The tool call's id, also the `itemId` of its deltas and approval request.
        id: String,
        /// The command as a user would type it.
        command: String,
        cwd: PathBuf,
        /// Always `null`: commands are not interactive processes.
        process_id: Option<String>,
        source: CommandExecutionSource,
        status: CommandExecutionStatus,
        command_actions: Vec<CommandAction>,
        aggregated_output: Option<String>,
        exit_code: Option<i32>,
        duration_ms: Option<u64>,
    },
    /// A patch the agent applies.
    FileChange {
        id: String,
        changes: Vec<FileUpdateChange>,
        status: PatchApplyStatus,
    },
    /// A call of a tool of a configured MCP server.
    #[serde(rename_all = "camelCase")]
    McpToolCall {
        id: String,
        server: String,
        tool: String,
        status: McpToolCallStatus,
        /// The arguments the model passed (`null` when none).
        arguments: Value,
        result: Option<McpToolCallResult>,
        error: Option<McpToolCallError>,
        duration_ms: Option<u64>,
    },
    /// The history was summarized to fit the context window.
    ContextCompaction { id: String },
}

impl ThreadItem {
    /// The item's id.
    pub fn id(&self) -> &str {
        match self {
            ThreadItem::UserMessage { id, .. }
            | ThreadItem::AgentMessage { id, .. }
            | ThreadItem::Reasoning { id, .. }
            | ThreadItem::CommandExecution { id, .. }
            | ThreadItem::FileChange { id, .. }
            | ThreadItem::McpToolCall { id, .. }
            | ThreadItem::ContextCompaction { id } => id,
        }
    }

    /// Marks a tool item that the end of its turn cut off: `completed` when the turn
    /// completed, else `failed`. Other items are left as they are.
    pub fn settle(&mut self, turn_completed: bool) {
        match self {
            ThreadItem::CommandExecution { status, .. } => {
                *status = if turn_completed {
                    CommandExecutionStatus::Completed
                } else {
                    CommandExecutionStatus::Failed
                }
            }
            ThreadItem::FileChange { status, .. } => {
                *status = if turn_completed {
                    PatchApplyStatus::Completed
                } else {
                    PatchApplyStatus::Failed
                }
            }
            ThreadItem::McpToolCall { status, .. } => {
                *status = if turn_completed {
                    McpToolCallStatus::Completed
                } else {
                    McpToolCallStatus::Failed
                }
            }
            _ => {}
        }
    }
}

/// Who ran a command.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CommandExecutionSource {
    Agent,
    UserShell,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CommandExecutionStatus {
    InProgress,
    Completed,
    Failed,
    /// The user declined the approval; the command never ran.
    Declined,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum PatchApplyStatus {
    InProgress,
    Completed,
    Failed,
    Declined,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum McpToolCallStatus {
    InProgress,
    Completed,
    Failed,
}

/// What a command does, as far as the engine could tell from its words.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum CommandAction {
    Read {
        command: String,
        name: String,
        path: String,
    },
    ListFiles {
        command: String,
        path: Option<String>,
    },
    Search {
        command: String,
        query: Option<String>,
        path: Option<String>,
    },
    Unknown {
        command: String,
    },
}

impl From<&ParsedCommand> for CommandAction {
    fn from(p: &ParsedCommand) -> Self {
        match p.clone() {
            ParsedCommand::Read { cmd, name, path } => CommandAction::Read {
                command: cmd,
                name,
                path,
            },
            ParsedCommand::ListFiles { cmd, path } => {
                CommandAction::ListFiles { command: cmd, path }
            }
            ParsedCommand::Search { cmd, query, path } => CommandAction::Search {
                command: cmd,
                query,
                path,
            },
            ParsedCommand::Unknown { cmd } => CommandAction::Unknown { command: cmd },
        }
    }
}

/// `CommandAction`s of the engine's parsed command.
pub fn command_actions(parsed: &[ParsedCommand]) -> Vec<CommandAction> {
    parsed.iter().map(CommandAction::from).collect()
}

/// One file of a patch.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct FileUpdateChange {
    pub path: PathBuf,
    pub kind: PatchChangeKind,
    /// The new file's content (add), the old one's (delete), or a unified diff (update).
    pub diff: String,
}

/// How a patch changes a file. `move_path` is snake_case on Codex's wire too.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum PatchChangeKind {
    Add,
    Delete,
    Update { move_path: Option<PathBuf> },
}

/// A finished MCP tool call's result: the server's own MCP content.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpToolCallResult {
    pub content: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// Why an MCP tool call failed before the server answered.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct McpToolCallError {
    pub message: String,
}
