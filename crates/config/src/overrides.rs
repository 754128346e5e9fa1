//! Front-end overrides: the typed [`ConfigOverrides`] and their one merge rule, `-c key=value`
//! pairs, and JSON↔TOML conversion (the MCP tool's and v2's `config` arguments are JSON).

use crate::{ConfigError, ConfigLoadOptions};
use oi_protocol::config_types::{AskForApproval, SandboxMode};
use std::path::PathBuf;

/// Typed overrides from a front end (CLI flags, MCP tool arguments, v2 params).
/// They win over every file and `-c` override.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConfigOverrides {
    /// The model to use.
    pub model: Option<String>,
    /// The provider id (a key of `model_providers`).
    pub model_provider: Option<String>,
    /// The `[profiles.<name>]` to apply.
    pub profile: Option<String>,
    /// The working directory.
    pub cwd: Option<PathBuf>,
    /// When the agent asks before acting.
    pub approval_policy: Option<AskForApproval>,
    /// The sandbox commands run in.
    pub sandbox_mode: Option<SandboxMode>,
    /// A system prompt replacing the built-in one.
    pub base_instructions: Option<String>,
    /// Instructions added to the system prompt.
    pub developer_instructions: Option<String>,
    /// The prompt used to compact the history.
    pub compact_prompt: Option<String>,
}

impl ConfigOverrides {
    /// `self` with `over` layered on top: every field `over` sets wins, every field it leaves
    /// unset keeps `self`'s value. This is the one precedence rule between the server's own
    /// flags (`interpreter mcp-server -m ...`) and what a request asks for (the MCP `codex`
    /// tool's arguments, v2 `thread/start` params).
    pub fn merge(self, over: ConfigOverrides) -> ConfigOverrides {
        // Destructured so a new field cannot be forgotten here.
        let ConfigOverrides {
            model,
            model_provider,
            profile,
            cwd,
            approval_policy,
            sandbox_mode,
            base_instructions,
            developer_instructions,
            compact_prompt,
        } = over;
        ConfigOverrides {
            model: model.or(self.model),
            model_provider: model_provider.or(self.model_provider),
            profile: profile.or(self.profile),
            cwd: cwd.or(self.cwd),
            approval_policy: approval_policy.or(self.approval_policy),
            sandbox_mode: sandbox_mode.or(self.sandbox_mode),
            base_instructions: base_instructions.or(self.base_instructions),
            developer_instructions: developer_instructions.or(self.developer_instructions),
            compact_prompt: compact_prompt.or(self.compact_prompt),
        }
    }
}

impl ConfigLoadOptions {
    /// These options with one request's settings on top: its typed `overrides` win over the
    /// current ones ([`ConfigOverrides::merge`]), and its dotted `config` keys (JSON values)
    /// apply after the current `-c` pairs, so they win over them too.
    pub fn with_request<'a>(
        mut self,
        overrides: ConfigOverrides,
        config: impl IntoIterator<Item = (&'a String, &'a serde_json::Value)>,
    ) -> Self {
        self.overrides = std::mem::take(&mut self.overrides).merge(overrides);
        self.cli_overrides.extend(
            config
                .into_iter()
                .map(|(k, v)| (k.clone(), json_to_toml(v))),
        );
        self
    }
}

/// Parse `key=value`. The value is parsed as TOML (`-c model_reasoning_effort="high"`,
/// `-c sandbox_workspace_write.network_access=true`); if that fails it is taken as a string,
/// so `-c model=qwen3` works without quotes.
pub fn parse_cli_override(raw: &str) -> Result<(String, toml::Value), ConfigError> {
    let Some((key, value)) = raw.split_once('=') else {
        return Err(ConfigError::Override {
            raw: raw.to_string(),
            message: "expected key=value, e.g. -c model=\"qwen3-coder\"".into(),
        });
    };
    let key = key.trim();
    if key.is_empty() || key.split('.').any(|s| s.trim().is_empty()) {
        return Err(ConfigError::Override {
            raw: raw.to_string(),
            message: "the key is empty; use a dotted key such as `model` or `profiles.fast.model`"
                .into(),
        });
    }
    let value = value.trim();
    let parsed = format!("v = {value}")
        .parse::<toml::Table>()
        .ok()
        .and_then(|mut t| t.remove("v"))
        .unwrap_or_else(|| toml::Value::String(value.to_string()));
    Ok((key.to_string(), parsed))
}

/// Set `dotted` (e.g. `a.b.c`) in `root`, creating tables along the way. A non-table value
/// in the way is replaced.
pub fn apply_dotted(root: &mut toml::Table, dotted: &str, value: toml::Value) {
    let parts: Vec<&str> = dotted.split('.').map(str::trim).collect();
    let mut cur = root;
    for (i, part) in parts.iter().enumerate() {
        if i + 1 == parts.len() {
            cur.insert((*part).to_string(), value);
            return;
        }
        let entry = cur
            .entry((*part).to_string())
            .or_insert_with(|| toml::Value::Table(toml::Table::new()));
        if !entry.is_table() {
            *entry = toml::Value::Table(toml::Table::new());
        }
        match entry {
            toml::Value::Table(t) => cur = t,
            _ => return,
        }
    }
}

/// JSON → TOML. `null` has no TOML form: it becomes an empty string inside arrays and is
/// dropped from tables.
pub fn json_to_toml(v: &serde_json::Value) -> toml::Value {
    match v {
        serde_json::Value::Null => toml::Value::String(String::new()),
        serde_json::Value::Bool(b) => toml::Value::Boolean(*b),
        serde_json::Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                toml::Value::Integer(i)
            } else {
                toml::Value::Float(n.as_f64().unwrap_or(0.0))
            }
        }
        serde_json::Value::String(s) => toml::Value::String(s.clone()),
        serde_json::Value::Array(a) => toml::Value::Array(a.iter().map(json_to_toml).collect()),
        serde_json::Value::Object(o) => {
            let mut t = toml::Table::new();
            for (k, v) in o {
                if !v.is_null() {
                    t.insert(k.clone(), json_to_toml(v));
                }
            }
            toml::Value::Table(t)
        }
    }
}

/// TOML → JSON (datetimes become strings).
pub fn toml_to_json(v: &toml::Value) -> serde_json::Value {
    match v {
        toml::Value::String(s) => serde_json::Value::String(s.clone()),
        toml::Value::Integer(i) => serde_json::Value::from(*i),
        toml::Value::Float(f) => serde_json::Number::from_f64(*f)
            .map(serde_json::Value::Number)
            .unwrap_or(serde_json::Value::Null),
        toml::Value::Boolean(b) => serde_json::Value::Bool(*b),
        toml::Value::Datetime(d) => serde_json::Value::String(d.to_string()),
        toml::Value::Array(a) => serde_json::Value::Array(a.iter().map(toml_to_json).collect()),
        toml::Value::Table(t) => serde_json::Value::Object(
            t.iter()
                .map(|(k, v)| (k.clone(), toml_to_json(v)))
                .collect(),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn override_values_parse_as_toml_or_string() {
        let (k, v) = parse_cli_override("model=qwen3-coder:30b").unwrap();
        assert_eq!(k, "model");
        assert_eq!(v.as_str(), Some("qwen3-coder:30b"));
        let (_, v) = parse_cli_override("sandbox_workspace_write.network_access=true").unwrap();
        assert_eq!(v.as_bool(), Some(true));
        let (_, v) = parse_cli_override("x=[1, 2]").unwrap();
        assert_eq!(v.as_array().map(|a| a.len()), Some(2));
        assert!(parse_cli_override("novalue").is_err());
        assert!(parse_cli_override("=1").is_err());
        assert!(parse_cli_override("a..b=1").is_err());
    }

    #[test]
    fn merge_lets_every_field_the_request_sets_win() {
        let server = ConfigOverrides {
            model: Some("server-model".into()),
            profile: Some("server-profile".into()),
            approval_policy: Some(AskForApproval::Never),
            sandbox_mode: Some(SandboxMode::ReadOnly),
            compact_prompt: Some("server prompt".into()),
            ..Default::default()
        };
        let request = ConfigOverrides {
            model: Some("request-model".into()),
            model_provider: Some("lmstudio".into()),
            sandbox_mode: Some(SandboxMode::WorkspaceWrite),
            cwd: Some("/req".into()),
            ..Default::default()
        };
        let merged = server.clone().merge(request);
        assert_eq!(
            merged,
            ConfigOverrides {
                model: Some("request-model".into()),
                model_provider: Some("lmstudio".into()),
                profile: Some("server-profile".into()),
                cwd: Some("/req".into()),
                approval_policy: Some(AskForApproval::Never),
                sandbox_mode: Some(SandboxMode::WorkspaceWrite),
                base_instructions: None,
                developer_instructions: None,
                compact_prompt: Some("server prompt".into()),
            }
        );
        assert_eq!(server.clone().merge(ConfigOverrides::default()), server);
    }

    #[test]
    fn dotted_keys_create_tables() {
        let mut t = toml::Table::new();
        apply_dotted(&mut t, "a.b.c", toml::Value::Integer(1));
        assert_eq!(t["a"]["b"]["c"].as_integer(), Some(1));
    }
}
