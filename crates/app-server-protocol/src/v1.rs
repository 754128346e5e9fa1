//! The legacy v1 methods still served for old clients (`getConversationSummary`,
//! `getAuthStatus`, `gitDiffToRemote`): params and results. Codex 0.171 no longer has
//! these methods, so there are no Codex facts to compare them with; their shapes are the
//! ones earlier Codex releases used.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// `getConversationSummary`: by thread id or by rollout file.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GetConversationSummaryParams {
    /// The thread's id.
    #[serde(default)]
    pub conversation_id: Option<String>,
    /// Or its rollout file.
    #[serde(default)]
    pub rollout_path: Option<PathBuf>,
}

/// The git state a v1 summary reports (snake_case keys, as v1 had them).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct V1GitInfo {
    /// The commit checked out, if any.
    pub sha: Option<String>,
    /// The branch checked out; `null` when detached.
    pub branch: Option<String>,
    /// The URL of the `origin` remote, if any.
    pub origin_url: Option<String>,
}

/// One conversation as v1 describes it.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConversationSummary {
    /// The thread's id.
    pub conversation_id: String,
    /// The rollout file.
    pub path: PathBuf,
    /// The first user message, shortened.
    pub preview: String,
    /// Creation time, RFC 3339.
    pub timestamp: Option<String>,
    /// Last update, RFC 3339.
    pub updated_at: Option<String>,
    /// The id of the model provider it ran on.
    pub model_provider: String,
    /// Its working directory.
    pub cwd: PathBuf,
    /// The version of the program that started it.
    pub cli_version: String,
    /// Where the thread came from (`cli`, `vscode`, `exec`, `mcp`, …).
    pub source: String,
    /// The git state of `cwd` when it started.
    pub git_info: Option<V1GitInfo>,
}

/// The result of `getConversationSummary`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct GetConversationSummaryResponse {
    /// The conversation.
    pub summary: ConversationSummary,
}

/// `getAuthStatus`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GetAuthStatusParams {
    /// Also return the API key itself.
    #[serde(default)]
    pub include_token: Option<bool>,
    /// Accepted and ignored: API keys do not refresh.
    #[serde(default)]
    pub refresh_token: Option<bool>,
}

/// How the provider is authenticated (v1 knows only API keys here).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum V1AuthMethod {
    /// An API key (from the environment or the credentials store).
    Apikey,
}

/// The result of `getAuthStatus`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GetAuthStatusResponse {
    /// `null` when no key is configured or none is needed.
    pub auth_method: Option<V1AuthMethod>,
    /// The key, only with `includeToken`.
    pub auth_token: Option<String>,
    /// Whether the provider needs a key at all.
    pub requires_openai_auth: bool,
}

/// `gitDiffToRemote`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct GitDiffToRemoteParams {
    /// A folder inside the repository.
    pub cwd: PathBuf,
}

/// The result of `gitDiffToRemote`: the closest remote commit and the diff from it to the
/// working tree (untracked files included).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct GitDiffToRemoteResponse {
    /// The closest commit that a remote branch has.
    pub sha: String,
    /// The unified diff from it to the working tree.
    pub diff: String,
}
