//! Params and results of the catalog methods: `model/list`, `collaborationMode/list`,
//! `app/list`.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One reasoning effort a model supports, with what it means.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ReasoningEffortOption {
    /// The effort's name (`low`, `medium`, `high`, …), as `effort` takes it.
    pub reasoning_effort: String,
    /// What it means for this model.
    pub description: String,
}

/// One model a configured provider serves.
#[derive(Clone, Debug, PartialEq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct Model {
    /// The model id as the provider names it (also `model`).
    pub id: String,
    /// The model id again (Codex sends both).
    pub model: String,
    /// The config id of the provider that serves it (pass as `modelProvider` to
    /// `thread/start`).
    pub model_provider: String,
    /// The name to show.
    pub display_name: String,
    /// One line about the model, for pickers.
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
    /// The models of this page.
    pub data: Vec<Model>,
    /// Pass as `cursor` for the next page; `null` at the end.
    pub next_cursor: Option<String>,
}

/// `collaborationMode/list` takes no params.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
pub struct CollaborationModeListParams {}

/// Which built-in collaboration mode a preset is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ModeKind {
    /// Plan first: the model thinks harder (`medium` effort) before it acts.
    Plan,
    /// The thread's own settings.
    Default,
}

/// A collaboration-mode preset: what it changes in a thread's settings. `model` is always
/// sent (`null`: the preset clears no model choice and picks none); `reasoning_effort` is
/// absent when the preset keeps the current effort.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
pub struct CollaborationModeMask {
    /// The name to show.
    pub name: String,
    /// Which mode it is.
    pub mode: ModeKind,
    /// The model it picks; `null`: none.
    pub model: Option<String>,
    /// The effort it sets, when it sets one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning_effort: Option<String>,
}

/// The result of `collaborationMode/list`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct CollaborationModeListResponse {
    /// The presets: `plan` and `default`.
    pub data: Vec<CollaborationModeMask>,
}

/// `app/list` (ChatGPT apps): accepted for compatibility; we have no apps.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AppsListParams {
    /// Accepted; the page is empty.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Accepted; the page is empty.
    #[serde(default)]
    pub limit: Option<u32>,
    /// Accepted; the page is empty.
    #[serde(default)]
    pub thread_id: Option<String>,
    /// Accepted; the page is empty.
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
    /// Where to continue: a previous page's `nextCursor`.
    #[serde(default)]
    pub cursor: Option<String>,
    /// Models per page.
    #[serde(default)]
    pub limit: Option<u32>,
    /// Also list the hidden models (embedding and other non-chat models).
    #[serde(default)]
    pub include_hidden: bool,
    /// Only this provider's models (a provider id of config.toml).
    #[serde(default)]
    pub model_provider: Option<String>,
}
