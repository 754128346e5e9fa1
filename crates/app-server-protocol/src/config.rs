//! `config/read`, `config/value/write` and `config/batchWrite`: params, results and the
//! layer shapes inside them (Codex 0.171's names).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// `config/read`.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigReadParams {
    /// Also return every layer with its own table.
    #[serde(default)]
    pub include_layers: bool,
    /// Read as a thread in this folder would (its trusted project config included).
    #[serde(default)]
    pub cwd: Option<PathBuf>,
}

/// Which layer a value comes from.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(tag = "type", rename_all = "camelCase")]
pub enum ConfigLayerSource {
    /// The user's `config.toml`.
    User {
        /// The file's path.
        file: PathBuf,
    },
    /// A trusted project's `.openinterpreter/config.toml`.
    #[serde(rename_all = "camelCase")]
    Project {
        /// The project's `.openinterpreter` folder (Codex's name for its `.codex` folder).
        dot_codex_folder: Option<PathBuf>,
    },
    /// `-c key=value` and the server's typed flags (`--model`, …).
    SessionFlags,
}

/// A layer's name and the version a write can be conditioned on (`sha256:` of the
/// layer's canonical JSON).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct ConfigLayerMetadata {
    /// Which layer.
    pub name: ConfigLayerSource,
    /// Its version: `sha256:` of its canonical JSON.
    pub version: String,
}

/// One layer with its own table (`config/read` with `includeLayers`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct ConfigLayer {
    /// Which layer.
    pub name: ConfigLayerSource,
    /// Its version, as in [`ConfigLayerMetadata`].
    pub version: String,
    /// What the layer itself sets.
    pub config: Map<String, Value>,
}

/// The result of `config/read`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct ConfigReadResponse {
    /// The effective config: the layers merged, plus what the engine resolved (model,
    /// provider, policies) where no layer says.
    pub config: Map<String, Value>,
    /// For each dotted leaf key, the highest layer that sets it.
    pub origins: BTreeMap<String, ConfigLayerMetadata>,
    /// Highest precedence first; only with `includeLayers`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub layers: Option<Vec<ConfigLayer>>,
}

/// How a write combines a table value with what is there.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum MergeStrategy {
    /// The value replaces the key's old value.
    #[default]
    Replace,
    /// A table value is merged key by key into the existing table.
    Upsert,
}

/// One edit of the user config.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigEdit {
    /// Dotted key, e.g. `model_providers.local.base_url`.
    pub key_path: String,
    /// The new value; `null` removes the key.
    pub value: Value,
    /// How a table value combines with the one there.
    #[serde(default)]
    pub merge_strategy: MergeStrategy,
}

/// `config/value/write`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigValueWriteParams {
    /// Dotted key, e.g. `model_providers.local.base_url`.
    pub key_path: String,
    /// The new value; `null` removes the key.
    pub value: Value,
    /// How a table value combines with the one there.
    #[serde(default)]
    pub merge_strategy: MergeStrategy,
    /// Must be the user config when given (the only file we write).
    #[serde(default)]
    pub file_path: Option<PathBuf>,
    /// Refuse the write unless the user layer still has this version.
    #[serde(default)]
    pub expected_version: Option<String>,
}

/// `config/batchWrite`: all edits are applied, or none.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigBatchWriteParams {
    /// The edits, applied in order.
    pub edits: Vec<ConfigEdit>,
    /// Must be the user config when given (the only file we write).
    #[serde(default)]
    pub file_path: Option<PathBuf>,
    /// Refuse the edits unless the user layer still has this version.
    #[serde(default)]
    pub expected_version: Option<String>,
    /// Accepted for compatibility: loaded threads keep their config; new threads read
    /// the new file.
    #[serde(default)]
    pub reload_user_config: Option<bool>,
}

/// Whether the written value is the effective one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum WriteStatus {
    /// Written, and it is the effective value.
    Ok,
    /// Written, but a higher layer still decides the key (see `overriddenMetadata`).
    OkOverridden,
}

/// The higher layer that still decides a written key.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OverriddenMetadata {
    /// Which layer decides the key, for the user to read.
    pub message: String,
    /// That layer.
    pub overriding_layer: ConfigLayerMetadata,
    /// The value that layer gives the key.
    pub effective_value: Value,
}

/// The result of `config/value/write` and `config/batchWrite`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigWriteResponse {
    /// Whether the written value is the effective one.
    pub status: WriteStatus,
    /// The user layer's version after the write.
    pub version: String,
    /// The file written (the user config).
    pub file_path: PathBuf,
    /// The layer that still decides the key, with `okOverridden`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overridden_metadata: Option<OverriddenMetadata>,
}
