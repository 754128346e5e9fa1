//! Params and results of the methods Codex's TUI calls during a session, beyond the thread
//! and turn basics: `review/start` (`/review`), `thread/settings/update` (`/model`,
//! `/permissions`) and its notification, `thread/shellCommand` (`!command`),
//! `permissionProfile/list` (`/permissions`) and `experimentalFeature/list`
//! (`/experimental`).
#![allow(missing_docs)] // TODO(issue 49): document this module's fields and variants

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
    BaseBranch { branch: String },
    /// One commit.
    Commit {
        sha: String,
        #[serde(default)]
        title: Option<String>,
    },
    /// The user's own review instructions.
    Custom { instructions: String },
}

/// Where a review's findings go: only `inline` (in the thread itself) exists.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum ReviewDelivery {
    #[default]
    Inline,
}

/// `review/start` params.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewStartParams {
    pub thread_id: String,
    pub target: ReviewTarget,
    #[serde(default)]
    pub delivery: Option<ReviewDelivery>,
}

/// `review/start`'s result: the review turn, run on the thread itself.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReviewStartResponse {
    pub turn: Turn,
    /// The thread the review runs on: the same thread (reviews are delivered inline).
    pub review_thread_id: String,
}

/// A collaboration mode as `thread/settings/update` sends and `thread/settings/updated`
/// reports it.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct SettingsCollaborationMode {
    pub mode: String,
    pub settings: CollaborationModeSettings,
}

/// A collaboration mode's settings (snake_case on Codex's wire).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct CollaborationModeSettings {
    pub model: String,
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
    pub thread_id: String,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub effort: Option<ReasoningEffort>,
    #[serde(default)]
    pub cwd: Option<PathBuf>,
    #[serde(default)]
    #[schemars(with = "Option<String>")]
    pub approval_policy: Option<AskForApproval>,
    #[serde(default)]
    pub sandbox_policy: Option<V2SandboxPolicy>,
    /// A profile id from `permissionProfile/list`.
    #[serde(default)]
    pub permissions: Option<String>,
    #[serde(default)]
    pub collaboration_mode: Option<SettingsCollaborationMode>,
}

/// The settings later turns of a thread run with.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadSettings {
    pub model: String,
    pub model_provider: String,
    pub cwd: PathBuf,
    #[schemars(with = "String")]
    pub approval_policy: AskForApproval,
    /// Always `user`.
    pub approvals_reviewer: String,
    pub sandbox_policy: V2SandboxPolicy,
    #[schemars(with = "Option<String>")]
    pub effort: Option<ReasoningEffort>,
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
    pub thread_id: String,
    pub thread_settings: ThreadSettings,
}

/// `thread/shellCommand` params: a command the user typed (`!command` in Codex's TUI).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadShellCommandParams {
    pub thread_id: String,
    pub command: String,
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// `permissionProfile/list` params.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionProfileListParams {
    #[serde(default)]
    pub cursor: Option<String>,
    #[serde(default)]
    pub limit: Option<u32>,
    #[serde(default)]
    pub cwd: Option<PathBuf>,
}

/// One permission profile: here the three sandbox modes.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct PermissionProfileSummary {
    pub id: String,
    pub description: Option<String>,
    pub allowed: bool,
}

/// `permissionProfile/list`'s result.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PermissionProfileListResponse {
    pub data: Vec<PermissionProfileSummary>,
    pub next_cursor: Option<String>,
}

/// `experimentalFeature/list` params.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExperimentalFeatureListParams {
    #[serde(default)]
    pub cursor: Option<String>,
    #[serde(default)]
    pub limit: Option<u32>,
    #[serde(default)]
    pub thread_id: Option<String>,
}

/// `experimentalFeature/list`'s result.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ExperimentalFeatureListResponse {
    /// Always empty: this server has no feature flags to toggle.
    pub data: Vec<Value>,
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
    #[serde(default)]
    pub thread_id: Option<String>,
}

/// `mcpServer/oauth/login`'s result: the URL the user opens to authorize.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerOauthLoginResponse {
    pub authorization_url: String,
}

/// `mcpServer/oauthLogin/completed`: how a login ended (tokens saved, or why not).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct McpServerOauthLoginCompletedNotification {
    pub name: String,
    pub success: bool,
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thread_id: Option<String>,
}
