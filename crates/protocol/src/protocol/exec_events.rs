//! The events of a command the agent runs: its start, its output as it streams, its end,
//! and the approval it may need first.

use super::*;

/// Who ran a command.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecCommandSource {
    /// The model, through a tool.
    #[default]
    Agent,
    /// The user, with `!cmd` or `thread/shellCommand`.
    UserShell,
}

/// A command is about to run.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExecCommandBeginEvent {
    /// The id of the tool call.
    pub call_id: String,
    /// The turn it runs in.
    pub turn_id: String,
    /// The program and its arguments.
    pub command: Vec<String>,
    /// The working directory.
    pub cwd: PathBuf,
    /// What the command does, as far as its words tell.
    pub parsed_cmd: Vec<ParsedCommand>,
    /// Who ran it.
    #[serde(default)]
    pub source: ExecCommandSource,
}

/// Which output stream a chunk came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecOutputStream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// A chunk of command output. `chunk` is base64 (output need not be UTF-8).
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExecCommandOutputDeltaEvent {
    /// The id of the tool call.
    pub call_id: String,
    /// Which stream it came from.
    pub stream: ExecOutputStream,
    /// The output, lossily decoded.
    pub chunk: String,
}

/// Rust's default `Duration` JSON shape, kept for wire compatibility.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireDuration {
    /// Whole seconds.
    pub secs: u64,
    /// Nanoseconds beyond them.
    pub nanos: u32,
}

impl From<std::time::Duration> for WireDuration {
    fn from(d: std::time::Duration) -> Self {
        Self {
            secs: d.as_secs(),
            nanos: d.subsec_nanos(),
        }
    }
}

impl WireDuration {
    /// The duration in whole milliseconds.
    pub fn as_millis(&self) -> u64 {
        self.secs * 1000 + u64::from(self.nanos / 1_000_000)
    }
}

/// How a command ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExecCommandStatus {
    /// It ran and exited 0.
    Completed,
    /// It ran and failed, or could not run.
    Failed,
    /// The user declined it.
    Declined,
}

/// A command ended.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ExecCommandEndEvent {
    /// The id of the tool call.
    pub call_id: String,
    /// The turn it ran in.
    pub turn_id: String,
    /// The program and its arguments.
    pub command: Vec<String>,
    /// The working directory.
    pub cwd: PathBuf,
    /// What the command does, as far as its words tell.
    pub parsed_cmd: Vec<ParsedCommand>,
    /// Who ran it.
    #[serde(default)]
    pub source: ExecCommandSource,
    /// Its standard output.
    pub stdout: String,
    /// Its standard error.
    pub stderr: String,
    /// Both streams as they interleaved.
    pub aggregated_output: String,
    /// Its exit code.
    pub exit_code: i32,
    /// How long it ran.
    pub duration: WireDuration,
    /// The output as the model saw it.
    pub formatted_output: String,
    /// How it ended.
    pub status: ExecCommandStatus,
}

/// A command waits for the user's approval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExecApprovalRequestEvent {
    /// The id of the tool call.
    pub call_id: String,
    /// The id to answer with, when it is not `call_id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approval_id: Option<String>,
    /// The turn it would run in.
    pub turn_id: String,
    /// The program and its arguments.
    pub command: Vec<String>,
    /// The working directory.
    pub cwd: PathBuf,
    /// Why it needs approval, when there is a reason.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// What the command does, as far as its words tell.
    pub parsed_cmd: Vec<ParsedCommand>,
}

impl ExecApprovalRequestEvent {
    /// The id to answer with in [`Op::ExecApproval`].
    pub fn effective_approval_id(&self) -> &str {
        self.approval_id.as_deref().unwrap_or(&self.call_id)
    }
}
