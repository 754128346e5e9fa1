//! The legacy v1 methods still served for old clients (`getConversationSummary`,
//! `getAuthStatus`, `gitDiffToRemote`): params and results. Codex 0.171 no longer has
//! these methods, so there are no Codex facts to compare them with; their shapes are the
//! ones earlier Codex releases used.
#![allow(missing_docs)] // TODO(issue 49): document this module's fields and variants

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// `getConversationSummary`: by thread id or by rollout file.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GetConversationSummaryParams {
    #[serde(default)]
    pub conversation_id: Option<String>,
    #[serde(default)]
    pub rollout_path: Option<PathBuf>,
}

/// The git state a v1 summary reports (snake_case keys, as v1 had them).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct V1GitInfo {
    pub sha: Option<String>,
    pub branch: Option<String>,
    pub origin_url: Option<String>,
}

/// One conversation as v1 describes it.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConversationSummary {
    pub conversation_id: String,
    /// The rollout file.
    pub path: PathBuf,
    pub preview: String,
    /// Creation time, RFC 3339.
    pub timestamp: Option<String>,
    /// Last update, RFC 3339.
    pub updated_at: Option<String>,
    pub model_provider: String,
    pub cwd: PathBuf,
    pub cli_version: String,
    /// Where the thread came from (`cli`, `vscode`, `exec`, `mcp`, …).
    pub source: String,
    pub git_info: Option<V1GitInfo>,
}

/// The result of `getConversationSummary`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct GetConversationSummaryResponse {
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
    pub cwd: PathBuf,
}

/// The result of `gitDiffToRemote`: the closest remote commit and the diff from it to the
/// working tree (untracked files included).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct GitDiffToRemoteResponse {
    pub sha: String,
    pub diff: String,
}
