//! `hooks/list`: the configured hooks of a session (Codex 0.171's shapes: `HooksListEntry`,
//! `HookMetadata` with `handlerType = "command"`).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `hooks/list` params: a loaded thread's hooks, or those of each working directory.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HooksListParams {
    /// Working directories to inspect when no thread is named; empty: the server's own.
    #[serde(default)]
    pub cwds: Vec<String>,
    /// A loaded thread: its hooks, as its session runs them.
    #[serde(default)]
    pub thread_id: Option<String>,
}

/// `hooks/list`'s result: one entry per directory (or the thread's).
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
pub struct HooksListResponse {
    /// One entry per directory asked about (or the thread's).
    pub data: Vec<HooksListEntry>,
}

/// The hooks that apply in one working directory.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
pub struct HooksListEntry {
    /// The directory.
    pub cwd: String,
    /// Its hooks, in the order they run.
    pub hooks: Vec<HookMetadata>,
    /// Hooks the config names that do not run (an event without hooks here, a prompt hook),
    /// and why a project's hooks are not trusted.
    pub warnings: Vec<String>,
    /// A config that could not be read: its path and the error.
    pub errors: Vec<HookErrorInfo>,
}

/// A config file whose hooks could not be read.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct HookErrorInfo {
    /// The file.
    pub path: String,
    /// What is wrong in it.
    pub message: String,
}

/// One hook command.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HookMetadata {
    /// `[hooks.state."<key>"]` names it: `<file>:<event>:<group>:<handler>`.
    pub key: String,
    /// `sessionStart`, `preToolUse`, `postToolUse` or `stop`.
    pub event_name: String,
    /// Always `command`.
    pub handler_type: String,
    /// The command line it runs.
    pub command: String,
    /// Always `false`: every hook here runs to its end (or its timeout).
    pub r#async: bool,
    /// For tool events: which tools it applies to (`null`: all).
    pub matcher: Option<String>,
    /// How long it may run before it is stopped.
    pub timeout_sec: u64,
    /// What a front end shows while it runs.
    pub status_message: Option<String>,
    /// `user`, `project` or `sessionFlags`.
    pub source: String,
    /// The config file that declares it.
    pub source_path: String,
    /// Always `null`: no plugins.
    pub plugin_id: Option<String>,
    /// Its place among all hooks (the order they run in).
    pub display_order: i64,
    /// `false` when `[hooks.state."<key>"] enabled = false` turns it off.
    pub enabled: bool,
    /// Always `false`: no managed (administrator) configs.
    pub is_managed: bool,
    /// Hex SHA-256 of what the hook is (event, matcher, command, timeout).
    pub current_hash: String,
    /// `trusted` (the user's, or an accepted project config's), `untrusted` (a project
    /// config not accepted: never run) or `modified` (changed since it was accepted).
    pub trust_status: String,
}

/// `hook/started` and `hook/completed`: one run of a hook, the same `run.id` at both ends.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HookRunNotification {
    /// The thread whose session ran it.
    pub thread_id: String,
    /// The turn it ran in; `null` for `sessionStart`.
    pub turn_id: Option<String>,
    /// The run: what ran, its status and what it said.
    pub run: HookRunSummary,
}

/// Codex 0.171's `HookRunSummary`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HookRunSummary {
    /// The run's id, the same in `hook/started` and `hook/completed`.
    pub id: String,
    /// `sessionStart`, `preToolUse`, `postToolUse` or `stop`.
    pub event_name: String,
    /// Always `command`.
    pub handler_type: String,
    /// Always `sync`: every hook here runs to its end (or its timeout).
    pub execution_mode: String,
    /// `thread` (`sessionStart`) or `turn`.
    pub scope: String,
    /// `user`, `project` or `sessionFlags`.
    pub source: String,
    /// The config file that declares the hook.
    pub source_path: String,
    /// The hook's place among all hooks.
    pub display_order: i64,
    /// What a front end shows while it runs.
    pub status_message: Option<String>,
    /// `running`, then `completed`, `blocked` or `failed`.
    pub status: String,
    /// What the hook said, in order.
    pub entries: Vec<HookOutputEntry>,
    /// Unix milliseconds.
    pub started_at: i64,
    /// Unix milliseconds; `null` while it runs.
    pub completed_at: Option<i64>,
    /// How long it ran; `null` while it runs.
    pub duration_ms: Option<i64>,
}

/// What a hook said: `kind` is `stop` (the reason it blocked with), `feedback`, `context`
/// (given to the model) or `error` (why it failed).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct HookOutputEntry {
    /// `stop`, `feedback`, `context` or `error`.
    pub kind: String,
    /// What it said.
    pub text: String,
}
