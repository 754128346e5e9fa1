//! `config/read`, `config/value/write` and `config/batchWrite`: params, results and the
//! layer shapes inside them (Codex 0.171's names).
#![allow(missing_docs)] // TODO(issue 49): document this module's fields and variants

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
    User { file: PathBuf },
    /// A trusted project's `.openinterpreter/config.toml`.
    #[serde(rename_all = "camelCase")]
    Project { dot_codex_folder: Option<PathBuf> },
    /// `-c key=value` and the server's typed flags (`--model`, …).
    SessionFlags,
}

/// A layer's name and the version a write can be conditioned on (`sha256:` of the
/// layer's canonical JSON).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct ConfigLayerMetadata {
    pub name: ConfigLayerSource,
    pub version: String,
}

/// One layer with its own table (`config/read` with `includeLayers`).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct ConfigLayer {
    pub name: ConfigLayerSource,
    pub version: String,
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
    pub value: Value,
    #[serde(default)]
    pub merge_strategy: MergeStrategy,
}

/// `config/value/write`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigValueWriteParams {
    pub key_path: String,
    pub value: Value,
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
    pub edits: Vec<ConfigEdit>,
    #[serde(default)]
    pub file_path: Option<PathBuf>,
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
    Ok,
    /// Written, but a higher layer still decides the key (see `overriddenMetadata`).
    OkOverridden,
}

/// The higher layer that still decides a written key.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct OverriddenMetadata {
    pub message: String,
    pub overriding_layer: ConfigLayerMetadata,
    pub effective_value: Value,
}

/// The result of `config/value/write` and `config/batchWrite`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ConfigWriteResponse {
    pub status: WriteStatus,
    /// The user layer's version after the write.
    pub version: String,
    pub file_path: PathBuf,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub overridden_metadata: Option<OverriddenMetadata>,
}
