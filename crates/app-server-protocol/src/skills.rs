//! `skills/list`: the skills each working directory sees (`SKILL.md` folders; see the
//! engine's `skills` module), with the files that could not be used.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// `skills/list` params.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillsListParams {
    /// Working directories to list skills for; none: the server's.
    #[serde(default)]
    pub cwds: Vec<String>,
    /// Accepted; skills are always read from disk afresh here (nothing is cached).
    #[serde(default)]
    pub force_reload: bool,
}

/// `skills/list`'s result: one entry per working directory asked about.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
pub struct SkillsListResponse {
    /// One entry per working directory.
    pub data: Vec<SkillsListEntry>,
}

/// The skills of one working directory.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
pub struct SkillsListEntry {
    /// The directory.
    pub cwd: String,
    /// The skills it sees.
    pub skills: Vec<SkillMetadata>,
    /// `SKILL.md` files that were not used, and why.
    pub errors: Vec<SkillErrorInfo>,
}

/// One skill.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillMetadata {
    /// The skill's name, from its `SKILL.md`.
    pub name: String,
    /// What it is for, from its `SKILL.md`.
    pub description: String,
    /// A shorter description, when its `SKILL.md` gives one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub short_description: Option<String>,
    /// Its `SKILL.md`.
    pub path: String,
    /// `repo` (the trusted project's) or `user` (the home's, or another agent's).
    pub scope: String,
    /// `false` when a `[[skills.config]]` entry turned it off.
    pub enabled: bool,
    /// The MCP servers it needs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dependencies: Option<SkillDependencies>,
}

/// What a skill needs.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct SkillDependencies {
    /// The tools it needs.
    pub tools: Vec<SkillToolDependency>,
}

/// One tool a skill needs: here an MCP server (`type: "mcp"`, `value`: its name).
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct SkillToolDependency {
    /// Always `mcp`.
    #[serde(rename = "type")]
    pub kind: String,
    /// The MCP server's name.
    pub value: String,
    /// Why it matters: here, whether the server is configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A `SKILL.md` not used.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
pub struct SkillErrorInfo {
    /// The file.
    pub path: String,
    /// Why it was not used.
    pub message: String,
}
