//! Params and results of the methods of Codex features this server does not have
//! (managed requirements, plugins, Bedrock): Codex's clients call them at
//! startup, and a true empty answer lets them go on where "method not found" stops them.
#![allow(missing_docs)] // TODO(issue 49): document this module's fields and variants

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
    #[serde(default)]
    pub cwds: Option<Vec<String>>,
    #[serde(default)]
    pub install_suggestion_plugin_names: Option<Vec<String>>,
}

/// `plugin/installed`'s result.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PluginInstalledResponse {
    /// Always empty: there are no plugins here.
    pub marketplaces: Vec<Value>,
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
    pub should_warn: bool,
}

/// What `thread/readState/update` does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ThreadReadStateOperation {
    Read,
    Unread,
}

/// `thread/readState/update` params.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadReadStateUpdateParams {
    pub thread_id: String,
    pub expected_revision: String,
    pub operation: ThreadReadStateOperation,
}

/// A thread's read state: here always read (`firstUnread: null`), at the revision the
/// client saw.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadReadState {
    pub revision: String,
    pub first_unread: Option<Value>,
}

/// `thread/readState/update`'s result.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadReadStateUpdateResponse {
    pub read_state: ThreadReadState,
}

/// `thread/goal/get` params.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadGoalGetParams {
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
    pub thread_id: String,
    #[serde(default)]
    pub cursor: Option<String>,
    #[serde(default)]
    pub limit: Option<u32>,
}

/// `thread/backgroundTerminals/list`'s result.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ThreadBackgroundTerminalsListResponse {
    /// Always empty: no command outlives its tool call here, so none runs in the background.
    pub data: Vec<Value>,
    pub next_cursor: Option<String>,
}
