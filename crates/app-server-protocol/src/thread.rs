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
    /// A turn waits for the client to answer an approval request.
    WaitingOnApproval,
    /// A turn waits for the user's answer to a question (Codex's flag; never set here: the
    /// agent asks no questions mid-turn).
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
    /// The thread failed to load or run (Codex's status; never reported here: a failure ends
    /// the turn with an error instead).
    SystemError,
    /// A turn is running.
    #[serde(rename_all = "camelCase")]
    Active {
        /// What the running turn waits for, if anything.
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
    /// The commit checked out (`HEAD`), if any.
    pub sha: Option<String>,
    /// The branch checked out; `null` when detached.
    pub branch: Option<String>,
    /// The URL of the `origin` remote, if there is one.
    pub origin_url: Option<String>,
}

/// A thread. `turns` is filled only where the method says so (`thread/resume`,
/// `thread/fork`, `thread/read` with `includeTurns`).
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Thread {
    /// The thread's id (a UUID), the one every thread method takes.
    pub id: String,
    /// The id shared by a tree of threads; without sub-agents, every thread is its own
    /// tree, so this is `id`.
    pub session_id: String,
    /// Always `null`: no projects.
    pub project_id: Option<String>,
    /// The thread this one was forked from (`thread/fork`), if any.
    pub forked_from_id: Option<String>,
    /// The first user message, shortened.
    pub preview: String,
    /// True for threads that live only in memory (`ephemeral: true`).
    pub ephemeral: bool,
    /// The id of the model provider the thread runs on (a key of `model_providers`).
    pub model_provider: String,
    /// Unix seconds.
    pub created_at: i64,
    /// Unix seconds.
    pub updated_at: i64,
    /// Whether it runs in this server, and what a running turn waits for.
    pub status: ThreadStatus,
    /// The rollout file; `null` for ephemeral threads and threads kept in PostgreSQL.
    pub path: Option<PathBuf>,
    /// The working directory its commands run in.
    pub cwd: PathBuf,
    /// The version of the program that started it.
    pub cli_version: String,
    /// `cli`, `exec`, `appServer` or `unknown`.
    pub source: String,
    /// Always `null`: no sub-agents.
    pub agent_nickname: Option<String>,
    /// Always `null`: no sub-agents.
    pub agent_role: Option<String>,
    /// The git state of `cwd` when it started; `null` outside a repository.
    pub git_info: Option<GitInfo>,
    /// The name the user gave it (`thread/name/set`); `null` when unnamed.
    pub name: Option<String>,
    /// Its turns, oldest first, where the method fills them; else empty.
    pub turns: Vec<Turn>,
}

/// The result of `thread/start`, `thread/resume` and `thread/fork`: the thread and the
/// settings it runs with.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSessionResponse {
    /// The thread (with its turns unless `excludeTurns`).
    pub thread: Thread,
    /// The model its turns use.
    pub model: String,
    /// The id of the model provider that serves `model`.
    pub model_provider: String,
    /// Always `null`: OpenAI service tiers do not apply to open-model endpoints.
    pub service_tier: Option<String>,
    /// The working directory its commands run in.
    pub cwd: PathBuf,
    /// Always empty: instructions come from the config and AGENTS.md.
    pub instruction_sources: Vec<PathBuf>,
    /// `untrusted`, `on-failure`, `on-request` or `never`.
    #[schemars(with = "String")]
    pub approval_policy: AskForApproval,
    /// Always `user`.
    pub approvals_reviewer: String,
    /// The sandbox its commands run in.
    pub sandbox: V2SandboxPolicy,
    /// The reasoning effort asked of the model; `null` when the model's default.
    #[schemars(with = "Option<String>")]
    pub reasoning_effort: Option<ReasoningEffort>,
}

/// `thread/read`'s result.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct ThreadReadResponse {
    /// The thread, with its turns when `includeTurns` was asked.
    pub thread: Thread,
}

/// `thread/list`'s result: a page of threads, newest first by default.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadListResponse {
    /// The threads of this page, without their turns.
    pub data: Vec<Thread>,
    /// Pass as `cursor` for the next page; `null` at the end.
    pub next_cursor: Option<String>,
}

/// `thread/unarchive`'s result: the thread, back in the default list.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct ThreadUnarchiveResponse {
    /// The thread, without its turns.
    pub thread: Thread,
}

/// `thread/loaded/list`'s result: ids of the threads running in this server.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadLoadedListResponse {
    /// Thread ids of this page.
    pub data: Vec<String>,
    /// Pass as `cursor` for the next page; `null` at the end.
    pub next_cursor: Option<String>,
}

/// `thread/started`: a new thread (started or forked) with no turns.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct ThreadStartedNotification {
    /// The new thread.
    pub thread: Thread,
}

/// `thread/name/updated`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadNameUpdatedNotification {
    /// The renamed thread.
    pub thread_id: String,
    /// `null` when the name was cleared.
    pub thread_name: Option<String>,
}

/// `thread/status/changed`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadStatusChangedNotification {
    /// The thread whose status changed.
    pub thread_id: String,
    /// Its new status.
    pub status: ThreadStatus,
}

/// `thread/start` params.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadStartParams {
    /// Settings that override the config for this thread.
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
    /// The stored thread to load.
    pub thread_id: String,
    /// Settings that override the stored ones and the config.
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
    /// The thread to copy (loaded or stored); the copy gets a new id.
    pub thread_id: String,
    /// Settings that override the original's and the config.
    #[serde(flatten)]
    pub overrides: ThreadOverrides,
    /// Keep the fork in this server's memory only.
    #[serde(default)]
    pub ephemeral: Option<bool>,
    /// Answer without the fork's turns.
    #[serde(default)]
    pub exclude_turns: bool,
}

/// `thread/read` params.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadReadParams {
    /// The thread to read (loaded or stored).
    pub thread_id: String,
    /// Fill `thread.turns` (read from the store: it may be long).
    #[serde(default)]
    pub include_turns: bool,
}

/// A `cwd` filter of `thread/list`: one folder or several.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(untagged)]
pub enum OneOrMany {
    /// Threads started in this folder.
    One(PathBuf),
    /// Threads started in any of these folders.
    Many(Vec<PathBuf>),
}

/// `thread/list` params. The enum-like fields stay strings here, so an unknown value is
/// refused by the method with the accepted ones named.
#[derive(Clone, Debug, Deserialize, Default, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadListParams {
    /// Where to continue: a previous page's `nextCursor`.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Threads per page: 25 when absent, at most 100.
    #[serde(default)]
    pub limit: Option<u32>,
    /// `created_at` or `updated_at` (the default); Codex's `recency_at` is `updated_at`, and
    /// `section_position` (we have no sections) sorts as it.
    #[serde(default)]
    pub sort_key: Option<String>,
    /// `desc` (the default) or `asc`.
    #[serde(default)]
    pub sort_direction: Option<String>,
    /// Only threads of these model providers.
    #[serde(default)]
    pub model_providers: Option<Vec<String>>,
    /// Only threads started from these sources (`cli`, `exec`, `appServer`, `vscode`,
    /// `unknown`, Codex's `subAgent*`); `vscode` is the v2 API's own threads, as Codex records
    /// them.
    #[serde(default)]
    pub source_kinds: Option<Vec<String>>,
    /// `true`: only archived threads; `false` or absent: only the rest.
    #[serde(default)]
    pub archived: Option<bool>,
    /// Only threads started in this folder (or these folders).
    #[serde(default)]
    pub cwd: Option<OneOrMany>,
    /// Only threads whose name or preview contains this text (ASCII letters in either case).
    #[serde(default)]
    pub search_term: Option<String>,
}

/// `thread/loaded/list` params.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadLoadedListParams {
    /// Where to continue: a previous page's `nextCursor`.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Ids per page.
    #[serde(default)]
    pub limit: Option<u32>,
}

/// `thread/name/set` params.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSetNameParams {
    /// The thread to name (loaded or stored).
    pub thread_id: String,
    /// `null` or absent clears the name.
    #[serde(default)]
    pub name: Option<String>,
}
