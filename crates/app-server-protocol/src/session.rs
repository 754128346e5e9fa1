//! Params and results of the methods Codex's TUI calls during a session, beyond the thread
//! and turn basics: `review/start` (`/review`), `thread/settings/update` (`/model`,
//! `/permissions`) and its notification, `thread/shellCommand` (`!command`),
//! `permissionProfile/list` (`/permissions`) and `experimentalFeature/list`
//! (`/experimental`).

use super::{Turn, V2SandboxPolicy};
use oi_protocol::config_types::{AskForApproval, ReasoningEffort};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::PathBuf;

/// What `review/start` reviews.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ReviewTarget {
    /// Staged, unstaged and untracked changes of the working tree.
    UncommittedChanges,
    /// The current branch against `branch`.
    BaseBranch {
        /// The branch to compare with, e.g. `main`.
        branch: String,
    },
    /// One commit.
    Commit {
        /// The commit's id.
        sha: String,
        /// Its subject line, for the review's heading.
        #[serde(default)]
        title: Option<String>,
    },
    /// The user's own review instructions.
    Custom {
        /// What to review and how, in the user's words.
        instructions: String,
    },
}

/// Where a review's findings go: only `inline` (in the thread itself) exists.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ReviewDelivery {
    /// In the thread the review was asked on.
    #[default]
    Inline,
}

/// `review/start` params.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewStartParams {
    /// The loaded thread to review on.
    pub thread_id: String,
    /// What to review.
    pub target: ReviewTarget,
    /// Where the findings go (only `inline`).
    #[serde(default)]
    pub delivery: Option<ReviewDelivery>,
}

/// `review/start`'s result: the review turn, run on the thread itself.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewStartResponse {
    /// The review turn, just started.
    pub turn: Turn,
    /// The thread the review runs on: the same thread (reviews are delivered inline).
    pub review_thread_id: String,
}

/// A collaboration mode as `thread/settings/update` sends and `thread/settings/updated`
/// reports it.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct SettingsCollaborationMode {
    /// The mode's name: `default` or `plan`.
    pub mode: String,
    /// The model and effort it runs with.
    pub settings: CollaborationModeSettings,
}

/// A collaboration mode's settings (snake_case on Codex's wire).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct CollaborationModeSettings {
    /// The model.
    pub model: String,
    /// The reasoning effort; `null` for the model's default.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub reasoning_effort: Option<ReasoningEffort>,
    /// Not applied: a mode's developer instructions are not sent to the model here.
    #[serde(default)]
    pub developer_instructions: Option<String>,
}

/// `thread/settings/update` params: what later turns of the thread run with.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSettingsUpdateParams {
    /// The loaded thread.
    pub thread_id: String,
    /// The model.
    #[serde(default)]
    pub model: Option<String>,
    /// The reasoning effort.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub effort: Option<ReasoningEffort>,
    /// The working directory (an existing folder).
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    /// `untrusted`, `on-failure`, `on-request` or `never`.
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub approval_policy: Option<AskForApproval>,
    /// The sandbox (not with `permissions`).
    #[serde(default)]
    pub sandbox_policy: Option<V2SandboxPolicy>,
    /// A profile id from `permissionProfile/list`.
    #[serde(default)]
    pub permissions: Option<String>,
    /// The collaboration mode; its model and effort apply when the params give none.
    #[serde(default)]
    pub collaboration_mode: Option<SettingsCollaborationMode>,
}

/// The settings later turns of a thread run with.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSettings {
    /// The model.
    pub model: String,
    /// The id of the provider that serves it.
    pub model_provider: String,
    /// The working directory.
    pub cwd: PathBuf,
    /// `untrusted`, `on-failure`, `on-request` or `never`.
    #[schemars(with = "String")]
    pub approval_policy: AskForApproval,
    /// Always `user`.
    pub approvals_reviewer: String,
    /// The sandbox.
    pub sandbox_policy: V2SandboxPolicy,
    /// The reasoning effort; `null` for the model's default.
    #[schemars(with = "Option<String>")]
    pub effort: Option<ReasoningEffort>,
    /// The collaboration mode (`default` unless one was set).
    pub collaboration_mode: SettingsCollaborationMode,
    /// Always `null`: OpenAI service tiers do not apply to open-model endpoints.
    pub service_tier: Option<String>,
    /// Always `null`: reasoning summaries are whatever the model streams.
    pub summary: Option<String>,
}

/// `thread/settings/updated`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSettingsUpdatedNotification {
    /// The thread whose settings changed.
    pub thread_id: String,
    /// What its later turns run with.
    pub thread_settings: ThreadSettings,
}

/// `thread/shellCommand` params: a command the user typed (`!command` in Codex's TUI).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadShellCommandParams {
    /// The loaded thread to run it in (its cwd and sandbox).
    pub thread_id: String,
    /// The command line, run by `bash -c`.
    pub command: String,
    /// How long it may run (default: 10 minutes).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// `permissionProfile/list` params.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionProfileListParams {
    /// Where to continue: a previous page's `nextCursor`.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Profiles per page.
    #[serde(default)]
    pub limit: Option<u32>,
    /// Codex's project folder (accepted; the profiles are the same everywhere).
    #[serde(default)]
    pub cwd: Option<PathBuf>,
}

/// One permission profile: here the three sandbox modes.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct PermissionProfileSummary {
    /// The profile's id, to pass as `permissions`.
    pub id: String,
    /// What commands may do under it.
    pub description: Option<String>,
    /// Whether it may be chosen (always `true`).
    pub allowed: bool,
}

/// `permissionProfile/list`'s result.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionProfileListResponse {
    /// The profiles of this page.
    pub data: Vec<PermissionProfileSummary>,
    /// Pass as `cursor` for the next page; `null` at the end.
    pub next_cursor: Option<String>,
}

/// `experimentalFeature/list` params.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExperimentalFeatureListParams {
    /// Where to continue: a previous page's `nextCursor`.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Features per page.
    #[serde(default)]
    pub limit: Option<u32>,
    /// The thread asking (accepted; there are no features either way).
    #[serde(default)]
    pub thread_id: Option<String>,
}

/// `experimentalFeature/list`'s result.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExperimentalFeatureListResponse {
    /// Always empty: this server has no feature flags to toggle.
    pub data: Vec<Value>,
    /// Always `null`.
    pub next_cursor: Option<String>,
}

/// `mcpServer/oauth/login` params.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerOauthLoginParams {
    /// The configured MCP server (`[mcp_servers.<name>]`, streamable HTTP).
    pub name: String,
    /// Scopes to ask for (default: the configured ones, else what the server advertises).
    #[serde(default)]
    pub scopes: Option<Vec<String>>,
    /// How long to wait for the browser's redirect (default 300).
    #[serde(default)]
    pub timeout_secs: Option<u64>,
    /// Echoed in `mcpServer/oauthLogin/completed`.
    #[serde(default)]
    pub thread_id: Option<String>,
}

/// `mcpServer/oauth/login`'s result: the URL the user opens to authorize.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerOauthLoginResponse {
    /// The authorization URL, with its PKCE challenge and redirect to our listener.
    pub authorization_url: String,
}

/// `mcpServer/oauthLogin/completed`: how a login ended (tokens saved, or why not).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerOauthLoginCompletedNotification {
    /// The server logged in to.
    pub name: String,
    /// Whether the tokens were saved.
    pub success: bool,
    /// Why not, when the login failed.
    pub error: Option<String>,
    /// The login's `threadId`, when it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
}
