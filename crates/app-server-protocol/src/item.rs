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
        /// The item's id, unique within its thread: `item/*` notifications name it.
        id: String,
        /// The input as the client sent it.
        content: Vec<V2UserInput>,
    },
    /// A message from the model; `text` grows with `item/agentMessage/delta`.
    #[serde(rename_all = "camelCase")]
    AgentMessage {
        /// The item's id, unique within its thread: `item/*` notifications name it.
        id: String,
        /// The message's text so far.
        text: String,
        /// The engine's phase label of the message, when the model gave one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        phase: Option<String>,
    },
    /// The model's reasoning: `content` is the raw text, `summary` stays empty (open
    /// models stream no separate summary).
    Reasoning {
        /// The item's id, unique within its thread: `item/*` notifications name it.
        id: String,
        /// Summary parts (empty: open models stream none).
        #[serde(default)]
        summary: Vec<String>,
        /// The reasoning text, in parts as it streamed.
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
        /// The folder it runs in.
        cwd: PathBuf,
        /// Always `null`: commands are not interactive processes.
        process_id: Option<String>,
        /// Whether the agent or the user ran it.
        source: CommandExecutionSource,
        /// Where the command is.
        status: CommandExecutionStatus,
        /// What the command does, as far as its words tell (reads, listings, searches).
        command_actions: Vec<CommandAction>,
        /// Its stdout and stderr as they interleaved; `null` until it ends.
        aggregated_output: Option<String>,
        /// Its exit code; `null` until it ends (or when it never ran).
        exit_code: Option<i32>,
        /// How long it ran; `null` until it ends.
        duration_ms: Option<u64>,
    },
    /// A patch the agent applies.
    FileChange {
        /// The tool call's id, also the `itemId` of its approval request.
        id: String,
        /// Each file the patch touches.
        changes: Vec<FileUpdateChange>,
        /// Where the patch is.
        status: PatchApplyStatus,
    },
    /// A call of a tool of a configured MCP server.
    #[serde(rename_all = "camelCase")]
    McpToolCall {
        /// The tool call's id.
        id: String,
        /// The configured server's name (its key under `mcp_servers`).
        server: String,
        /// The tool's name as the server lists it.
        tool: String,
        /// Where the call is.
        status: McpToolCallStatus,
        /// The arguments the model passed (`null` when none).
        arguments: Value,
        /// The server's answer, once it came (also when it reports a tool error).
        result: Option<McpToolCallResult>,
        /// Why the call failed before the server answered.
        error: Option<McpToolCallError>,
        /// How long the call took; `null` until it ends.
        duration_ms: Option<u64>,
    },
    /// The history was summarized to fit the context window.
    ContextCompaction {
        /// The item's id, unique within its thread.
        id: String,
    },
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
    /// The agent, through a tool call.
    Agent,
    /// The user, directly (Codex's `!command`; `thread/shellCommand`).
    UserShell,
}

/// Where a command is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CommandExecutionStatus {
    /// Waiting for approval or running.
    InProgress,
    /// Ran to its end (whatever its exit code).
    Completed,
    /// Could not run, or was cut off with its turn.
    Failed,
    /// The user declined the approval; the command never ran.
    Declined,
}

/// Where a patch is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum PatchApplyStatus {
    /// Waiting for approval or being applied.
    InProgress,
    /// Applied.
    Completed,
    /// Not applied (a hunk did not match, a file could not be written), or cut off with its
    /// turn.
    Failed,
    /// The user declined the approval; nothing was written.
    Declined,
}

/// Where an MCP tool call is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum McpToolCallStatus {
    /// Waiting for approval or for the server.
    InProgress,
    /// The server answered (its result may still be a tool error).
    Completed,
    /// No answer: the call failed, was declined, or was cut off with its turn.
    Failed,
}

/// What a command does, as far as the engine could tell from its words.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum CommandAction {
    /// Reads a file.
    Read {
        /// The part of the command line that does it.
        command: String,
        /// The file's name.
        name: String,
        /// The file's path as written.
        path: String,
    },
    /// Lists files.
    ListFiles {
        /// The part of the command line that does it.
        command: String,
        /// The folder listed, when named.
        path: Option<String>,
    },
    /// Searches file contents or names.
    Search {
        /// The part of the command line that does it.
        command: String,
        /// What it searches for, when it could be read.
        query: Option<String>,
        /// Where it searches, when named.
        path: Option<String>,
    },
    /// Anything else.
    Unknown {
        /// The command line (or its part).
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
    /// The file (its path before a move).
    pub path: PathBuf,
    /// Added, deleted, or updated (and maybe moved).
    pub kind: PatchChangeKind,
    /// The new file's content (add), the old one's (delete), or a unified diff (update).
    pub diff: String,
}

/// How a patch changes a file. `move_path` is snake_case on Codex's wire too.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum PatchChangeKind {
    /// A new file.
    Add,
    /// A file removed.
    Delete,
    /// A file changed.
    Update {
        /// Where the file moves, if it does.
        move_path: Option<PathBuf>,
    },
}

/// A finished MCP tool call's result: the server's own MCP content.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpToolCallResult {
    /// The result's content blocks (text, images, resources), as the server sent them.
    pub content: Value,
    /// The tool's structured result, when it has an output schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// The result's `_meta`, passed through.
    #[serde(default, rename = "_meta", skip_serializing_if = "Option::is_none")]
    pub meta: Option<Value>,
}

/// Why an MCP tool call failed before the server answered.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct McpToolCallError {
    /// What went wrong, for the user to read.
    pub message: String,
}
