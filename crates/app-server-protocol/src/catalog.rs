//! Params and results of the catalog methods: `model/list`, `collaborationMode/list`,
//! `app/list`.
#![allow(missing_docs)] // TODO(issue 49): document this module's fields and variants

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One reasoning effort a model supports, with what it means.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningEffortOption {
    pub reasoning_effort: String,
    pub description: String,
}

/// One model a configured provider serves.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Model {
    /// The model id as the provider names it (also `model`).
    pub id: String,
    pub model: String,
    /// The config id of the provider that serves it (pass as `modelProvider` to
    /// `thread/start`).
    pub model_provider: String,
    pub display_name: String,
    pub description: String,
    /// Embedding and other non-chat models; listed only with `includeHidden`.
    pub hidden: bool,
    /// The configured model.
    pub is_default: bool,
    /// Never empty (Codex's clients refuse the whole list otherwise): the model's default,
    /// or `none` when we know of no effort knob (we then send no effort to the model).
    pub default_reasoning_effort: String,
    /// In the model's own order; empty when the model has no effort knob (or we do not
    /// know it).
    pub supported_reasoning_efforts: Vec<ReasoningEffortOption>,
    /// `text`, and `image` when the model takes images.
    pub input_modalities: Vec<String>,
    /// Tokens; `null` when neither the server nor our built-in metadata says.
    pub context_window: Option<i64>,
    /// Always `false`: no personalities.
    pub supports_personality: bool,
    /// Always `null`: no upgrade paths between open models.
    pub upgrade: Option<String>,
    /// Always `null`.
    pub upgrade_info: Option<Value>,
}

/// `model/list`'s result.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelListResponse {
    pub data: Vec<Model>,
    pub next_cursor: Option<String>,
}

/// `collaborationMode/list` takes no params.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
pub struct CollaborationModeListParams {}

/// Which built-in collaboration mode a preset is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ModeKind {
    Plan,
    Default,
}

/// A collaboration-mode preset: what it changes in a thread's settings. `model` is always
/// sent (`null`: the preset clears no model choice and picks none); `reasoning_effort` is
/// absent when the preset keeps the current effort.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct CollaborationModeMask {
    pub name: String,
    pub mode: ModeKind,
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
}

/// The result of `collaborationMode/list`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct CollaborationModeListResponse {
    pub data: Vec<CollaborationModeMask>,
}

/// `app/list` (ChatGPT apps): accepted for compatibility; we have no apps.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppsListParams {
    #[serde(default)]
    pub cursor: Option<String>,
    #[serde(default)]
    pub limit: Option<u32>,
    #[serde(default)]
    pub thread_id: Option<String>,
    #[serde(default)]
    pub force_refetch: Option<bool>,
}

/// The result of `app/list`: always an empty page.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppsListResponse {
    /// Always empty (Codex's `AppInfo` objects; we have no apps).
    pub data: Vec<Value>,
    /// Always `null`.
    pub next_cursor: Option<String>,
}

/// `model/list` params.
#[derive(Clone, Debug, Default, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ModelListParams {
    #[serde(default)]
    pub cursor: Option<String>,
    #[serde(default)]
    pub limit: Option<u32>,
    #[serde(default)]
    pub include_hidden: bool,
    /// Only this provider's models (a provider id of config.toml).
    #[serde(default)]
    pub model_provider: Option<String>,
}
