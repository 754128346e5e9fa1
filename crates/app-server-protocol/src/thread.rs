//! The `Thread` object, its status, and the params, results and notifications of the
//! thread methods (`thread/start|resume|fork|read|list|loaded/list|name/set`,
//! `thread/started`, …).

use super::turn::Turn;
use super::{ThreadOverrides, V2SandboxPolicy};
use oi_protocol::config_types::{AskForApproval, ReasoningEffort};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// Flags of an active thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ThreadActiveFlag {
    WaitingOnApproval,
    WaitingOnUserInput,
}

/// A thread's status.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ThreadStatus {
    /// Stored, not running in this server.
    NotLoaded,
    /// Loaded, no turn running.
    Idle,
    SystemError,
    /// A turn is running.
    #[serde(rename_all = "camelCase")]
    Active {
        active_flags: Vec<ThreadActiveFlag>,
    },
}

impl ThreadStatus {
    /// `active` with no flags.
    pub fn active() -> Self {
        ThreadStatus::Active {
            active_flags: Vec::new(),
        }
    }
}

/// The git state of a thread's working directory when it started.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GitInfo {
    pub sha: Option<String>,
    pub branch: Option<String>,
    pub origin_url: Option<String>,
}

/// A thread. `turns` is filled only where the method says so (`thread/resume`,
/// `thread/fork`, `thread/read` with `includeTurns`).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Thread {
    pub id: String,
    /// The id shared by a tree of threads; without sub-agents, every thread is its own
    /// tree, so this is `id`.
    pub session_id: String,
    /// Always `null`: no projects.
    pub project_id: Option<String>,
    pub forked_from_id: Option<String>,
    /// The first user message, shortened.
    pub preview: String,
    /// True for threads that live only in memory (`ephemeral: true`).
    pub ephemeral: bool,
    pub model_provider: String,
    /// Unix seconds.
    pub created_at: i64,
    /// Unix seconds.
    pub updated_at: i64,
    pub status: ThreadStatus,
    /// The rollout file; `null` for ephemeral threads and threads kept in PostgreSQL.
    pub path: Option<PathBuf>,
    pub cwd: PathBuf,
    pub cli_version: String,
    /// `cli`, `exec`, `appServer` or `unknown`.
    pub source: String,
    /// Always `null`: no sub-agents.
    pub agent_nickname: Option<String>,
    /// Always `null`: no sub-agents.
    pub agent_role: Option<String>,
    pub git_info: Option<GitInfo>,
    pub name: Option<String>,
    pub turns: Vec<Turn>,
}

/// The result of `thread/start`, `thread/resume` and `thread/fork`: the thread and the
/// settings it runs with.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSessionResponse {
    pub thread: Thread,
    pub model: String,
    pub model_provider: String,
    /// Always `null`: OpenAI service tiers do not apply to open-model endpoints.
    pub service_tier: Option<String>,
    pub cwd: PathBuf,
    /// Always empty: instructions come from the config and AGENTS.md.
    pub instruction_sources: Vec<PathBuf>,
    /// `untrusted`, `on-failure`, `on-request` or `never`.
    #[schemars(with = "String")]
    pub approval_policy: AskForApproval,
    /// Always `user`.
    pub approvals_reviewer: String,
    pub sandbox: V2SandboxPolicy,
    #[schemars(with = "Option<String>")]
    pub reasoning_effort: Option<ReasoningEffort>,
}

/// `thread/read`'s result.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct ThreadReadResponse {
    pub thread: Thread,
}

/// `thread/list`'s result: a page of threads, newest first by default.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadListResponse {
    pub data: Vec<Thread>,
    /// Pass as `cursor` for the next page; `null` at the end.
    pub next_cursor: Option<String>,
}

/// `thread/unarchive`'s result: the thread, back in the default list.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct ThreadUnarchiveResponse {
    pub thread: Thread,
}

/// `thread/loaded/list`'s result: ids of the threads running in this server.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadLoadedListResponse {
    pub data: Vec<String>,
    pub next_cursor: Option<String>,
}

/// `thread/started`: a new thread (started or forked) with no turns.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct ThreadStartedNotification {
    pub thread: Thread,
}

/// `thread/name/updated`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadNameUpdatedNotification {
    pub thread_id: String,
    /// `null` when the name was cleared.
    pub thread_name: Option<String>,
}

/// `thread/status/changed`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadStatusChangedNotification {
    pub thread_id: String,
    pub status: ThreadStatus,
}

/// `thread/start` params.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadStartParams {
    #[serde(flatten)]
    pub overrides: ThreadOverrides,
    /// Keep nothing on disk: the thread lives in this server's memory only.
    #[serde(default)]
    pub ephemeral: Option<bool>,
}

/// `thread/resume` params.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadResumeParams {
    pub thread_id: String,
    #[serde(flatten)]
    pub overrides: ThreadOverrides,
    /// Answer without the thread's turns (`thread/turns/list` pages them).
    #[serde(default)]
    pub exclude_turns: bool,
}

/// `thread/fork` params.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadForkParams {
    pub thread_id: String,
    #[serde(flatten)]
    pub overrides: ThreadOverrides,
    #[serde(default)]
    pub ephemeral: Option<bool>,
    #[serde(default)]
    pub exclude_turns: bool,
}

/// `thread/read` params.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadReadParams {
    pub thread_id: String,
    #[serde(default)]
    pub include_turns: bool,
}

/// A `cwd` filter of `thread/list`: one folder or several.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    One(PathBuf),
    Many(Vec<PathBuf>),
}

/// `thread/list` params. The enum-like fields stay strings here, so an unknown value is
/// refused by the method with the accepted ones named.
#[derive(Clone, Debug, Deserialize, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadListParams {
    #[serde(default)]
    pub cursor: Option<String>,
    #[serde(default)]
    pub limit: Option<u32>,
    #[serde(default)]
    pub sort_key: Option<String>,
    #[serde(default)]
    pub sort_direction: Option<String>,
    #[serde(default)]
    pub model_providers: Option<Vec<String>>,
    #[serde(default)]
    pub source_kinds: Option<Vec<String>>,
    #[serde(default)]
    pub archived: Option<bool>,
    #[serde(default)]
    pub cwd: Option<OneOrMany>,
    #[serde(default)]
    pub search_term: Option<String>,
}

/// `thread/loaded/list` params.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadLoadedListParams {
    #[serde(default)]
    pub cursor: Option<String>,
    #[serde(default)]
    pub limit: Option<u32>,
}

/// `thread/name/set` params.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSetNameParams {
    pub thread_id: String,
    /// `null` or absent clears the name.
    #[serde(default)]
    pub name: Option<String>,
}
