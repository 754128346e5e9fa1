//! Params and results of the methods of Codex features this server does not have
//! (managed requirements, plugins, Bedrock): Codex's clients call them at
//! startup, and a true empty answer lets them go on where "method not found" stops them.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `configRequirements/read` takes no params.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
pub struct ConfigRequirementsReadParams {}

/// `configRequirements/read`'s result.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigRequirementsReadResponse {
    /// Always `null`: there is no administrator-managed requirements file here.
    pub requirements: Option<Value>,
}

/// `plugin/installed` params.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PluginInstalledParams {
    /// Accepted; there are no plugins.
    #[serde(default)]
    pub cwds: Option<Vec<String>>,
    /// Accepted; there are no plugins.
    #[serde(default)]
    pub install_suggestion_plugin_names: Option<Vec<String>>,
}

/// `plugin/installed`'s result.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PluginInstalledResponse {
    /// Always empty: there are no plugins here.
    pub marketplaces: Vec<Value>,
    /// Always empty.
    pub marketplace_load_errors: Vec<Value>,
}

/// `account/bedrock/checkGovCloudRequirements` takes no params.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
pub struct BedrockCheckGovCloudRequirementsParams {}

/// `account/bedrock/checkGovCloudRequirements`'s result.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct BedrockCheckGovCloudRequirementsResponse {
    /// Always false: accounts here are model providers' API keys, never Bedrock
    /// authentication, so there is no GovCloud region to warn about.
    pub is_gov_cloud: bool,
    /// Always false, for the same reason.
    pub should_warn: bool,
}

/// What `thread/readState/update` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ThreadReadStateOperation {
    /// Mark the thread read.
    Read,
    /// Mark it unread (accepted; threads here are always read).
    Unread,
}

/// `thread/readState/update` params.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadReadStateUpdateParams {
    /// The thread.
    pub thread_id: String,
    /// The revision the client saw, echoed back.
    pub expected_revision: String,
    /// What to mark.
    pub operation: ThreadReadStateOperation,
}

/// A thread's read state: here always read (`firstUnread: null`), at the revision the
/// client saw.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadReadState {
    /// The revision the client sent.
    pub revision: String,
    /// Always `null`: nothing unread.
    pub first_unread: Option<Value>,
}

/// `thread/readState/update`'s result.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadReadStateUpdateResponse {
    /// The thread's read state.
    pub read_state: ThreadReadState,
}

/// `thread/goal/get` params.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadGoalGetParams {
    /// The thread.
    pub thread_id: String,
}

/// `thread/goal/get`'s result.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
pub struct ThreadGoalGetResponse {
    /// Always `null`: this server keeps no goals (Codex's `/goal`).
    pub goal: Option<Value>,
}

/// `thread/backgroundTerminals/list` params.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadBackgroundTerminalsListParams {
    /// The thread.
    pub thread_id: String,
    /// Accepted; the page is empty.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Accepted; the page is empty.
    #[serde(default)]
    pub limit: Option<u32>,
}

/// `thread/backgroundTerminals/list`'s result.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadBackgroundTerminalsListResponse {
    /// Always empty: no command outlives its tool call here, so none runs in the background.
    pub data: Vec<Value>,
    /// Always `null`.
    pub next_cursor: Option<String>,
}
