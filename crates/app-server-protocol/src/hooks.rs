//! `hooks/list`: the configured hooks of a session (Codex 0.171's shapes: `HooksListEntry`,
//! `HookMetadata` with `handlerType = "command"`).
#![allow(missing_docs)] // TODO(issue 49): document this module's fields and variants

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
    pub data: Vec<HooksListEntry>,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
pub struct HooksListEntry {
    pub cwd: String,
    pub hooks: Vec<HookMetadata>,
    /// Hooks the config names that do not run (an event without hooks here, a prompt hook),
    /// and why a project's hooks are not trusted.
    pub warnings: Vec<String>,
    /// A config that could not be read: its path and the error.
    pub errors: Vec<HookErrorInfo>,
}

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct HookErrorInfo {
    pub path: String,
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
    pub command: String,
    /// Always `false`: every hook here runs to its end (or its timeout).
    pub r#async: bool,
    pub matcher: Option<String>,
    pub timeout_sec: u64,
    pub status_message: Option<String>,
    /// `user`, `project` or `sessionFlags`.
    pub source: String,
    pub source_path: String,
    pub plugin_id: Option<String>,
    pub display_order: i64,
    pub enabled: bool,
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
    pub thread_id: String,
    pub turn_id: Option<String>,
    pub run: HookRunSummary,
}

/// Codex 0.171's `HookRunSummary`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct HookRunSummary {
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
    pub source_path: String,
    pub display_order: i64,
    pub status_message: Option<String>,
    /// `running`, then `completed`, `blocked` or `failed`.
    pub status: String,
    pub entries: Vec<HookOutputEntry>,
    /// Unix milliseconds.
    pub started_at: i64,
    pub completed_at: Option<i64>,
    pub duration_ms: Option<i64>,
}

/// What a hook said: `kind` is `stop` (the reason it blocked with), `feedback`, `context`
/// (given to the model) or `error` (why it failed).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct HookOutputEntry {
    pub kind: String,
    pub text: String,
}
