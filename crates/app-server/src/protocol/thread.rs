//! The `Thread` object, its status, and the results and notifications of the thread
//! methods (`thread/start|resume|fork|read|list|loaded/list`, `thread/started`, …).

use super::V2SandboxPolicy;
use super::turn::Turn;
use oi_config::Config;
use oi_core::ThreadSummary;
use oi_protocol::ThreadId;
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

impl From<&oi_core::GitInfo> for GitInfo {
    fn from(g: &oi_core::GitInfo) -> Self {
        GitInfo {
            sha: g.commit_hash.clone(),
            branch: g.branch.clone(),
            origin_url: g.repository_url.clone(),
        }
    }
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

impl Thread {
    /// A thread from its index row; `turns` stays empty.
    pub fn from_summary(s: &ThreadSummary, status: ThreadStatus) -> Self {
        Thread {
            id: s.id.to_string(),
            session_id: s.id.to_string(),
            project_id: None,
            forked_from_id: s.forked_from_id.map(|i| i.to_string()),
            preview: s.preview.clone(),
            ephemeral: false,
            model_provider: s.model_provider.clone(),
            created_at: s.created_at,
            updated_at: s.updated_at,
            status,
            // Threads kept in PostgreSQL have no rollout file.
            path: (!s.path.as_os_str().is_empty()).then(|| s.path.clone()),
            cwd: s.cwd.clone(),
            cli_version: s.cli_version.clone(),
            source: s.source.as_v2_str().to_string(),
            agent_nickname: None,
            agent_role: None,
            git_info: s.git.as_ref().map(GitInfo::from),
            name: s.name.clone(),
            turns: Vec::new(),
        }
    }

    /// A thread that exists only in memory.
    pub fn ephemeral(
        id: ThreadId,
        forked_from: Option<ThreadId>,
        config: &Config,
        created_at: i64,
        status: ThreadStatus,
    ) -> Self {
        Thread {
            id: id.to_string(),
            session_id: id.to_string(),
            project_id: None,
            forked_from_id: forked_from.map(|i| i.to_string()),
            preview: String::new(),
            ephemeral: true,
            model_provider: config.model_provider_id.clone(),
            created_at,
            updated_at: created_at,
            status,
            path: None,
            cwd: config.cwd.clone(),
            cli_version: env!("CARGO_PKG_VERSION").to_string(),
            source: "appServer".to_string(),
            agent_nickname: None,
            agent_role: None,
            git_info: None,
            name: None,
            turns: Vec::new(),
        }
    }
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

impl ThreadSessionResponse {
    /// The response for `thread` running with `config`.
    pub fn new(thread: Thread, config: &Config) -> Self {
        ThreadSessionResponse {
            thread,
            model: config.model.clone(),
            model_provider: config.model_provider_id.clone(),
            service_tier: None,
            cwd: config.cwd.clone(),
            instruction_sources: Vec::new(),
            approval_policy: config.approval_policy,
            approvals_reviewer: "user".to_string(),
            sandbox: V2SandboxPolicy::from(&config.sandbox_policy),
            reasoning_effort: config.model_reasoning_effort,
        }
    }
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
