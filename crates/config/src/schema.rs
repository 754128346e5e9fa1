//! The shape of `config.toml` as serde reads it: the top-level keys and their small tables.
//!
//! [`ConfigToml`] is deserialized from the layered table (user, project, profile, `-c`); the
//! loader turns it into the typed [`crate::Config`]. Only `[mcp_servers]` keeps its raw TOML
//! here: `crate::mcp` reads it with its own serde schema, which knows the transports.
//!
//! Unknown keys are found with `serde_ignored` while each file is read ([`unknown_keys`]), so
//! the field list below and [`crate::keys::TOP_LEVEL_KEYS`] must agree: a test checks that
//! every honoured key is a field here and that nothing else is.

use crate::shell_env::ShellEnvironmentPolicyToml;
use oi_protocol::config_types::WireApi;
use serde::{Deserialize, Deserializer};
use std::collections::BTreeMap;

/// The top-level keys Open Interpreter honours (see `keys.rs` for their documentation).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ConfigToml {
    pub model: Option<String>,
    pub model_provider: Option<String>,
    pub model_reasoning_effort: Option<String>,
    pub model_reasoning_summary: Option<String>,
    pub model_verbosity: Option<String>,
    pub model_context_window: Option<NonNegative>,
    pub model_auto_compact_token_limit: Option<NonNegative>,
    pub model_max_output_tokens: Option<NonNegative>,
    pub tool_call_format: Option<String>,
    pub harness: Option<oi_protocol::config_types::Harness>,
    pub approval_policy: Option<String>,
    pub sandbox_mode: Option<String>,
    pub sandbox_workspace_write: Option<Table<SandboxWorkspaceWriteToml>>,
    pub profile: Option<String>,
    pub profiles: Option<BTreeMap<String, Table<ProfileToml>>>,
    pub model_providers: Option<BTreeMap<String, Table<ModelProviderToml>>>,
    pub mcp_servers: Option<toml::Value>,
    pub base_instructions: Option<String>,
    pub instructions: Option<String>,
    pub developer_instructions: Option<String>,
    pub compact_prompt: Option<String>,
    pub approval_timeout_sec: Option<NonNegative>,
    pub parked_turn_timeout_sec: Option<NonNegative>,
    pub max_turn_steps: Option<NonNegative>,
    pub tool_output_max_bytes: Option<NonNegative>,
    pub shell_timeout_ms: Option<NonNegative>,
    pub hide_agent_reasoning: Option<bool>,
    pub show_raw_agent_reasoning: Option<bool>,
    pub project_doc_max_bytes: Option<NonNegative>,
    pub project_doc_fallback_filenames: Option<Vec<String>>,
    pub notify: Option<Vec<String>>,
    pub skills: Option<Table<SkillsToml>>,
    /// Read per layer by `crate::hooks` (each layer's hooks all run); here so that the key
    /// is known and its type checked.
    #[allow(dead_code)]
    pub hooks: Option<toml::Table>,
    pub include_plan_tool: Option<bool>,
    pub history: Option<Table<HistoryToml>>,
    pub projects: Option<BTreeMap<String, Table<ProjectToml>>>,
    pub shell_environment_policy: Option<Table<ShellEnvironmentPolicyToml>>,
    /// Read by [`crate::thread_store_url`] from the user config only; here so that its keys
    /// are checked like the others.
    pub thread_store: Option<Table<ThreadStoreToml>>,
    /// Read by [`crate::mcp_state_key_file`] from the user config only; here so that its type
    /// is checked like the others.
    pub mcp_state_key_file: Option<String>,
    pub mcp_oauth_credentials_store: Option<crate::OAuthCredentialsStoreMode>,
    pub tui: Option<Table<TuiToml>>,
}

/// `[profiles.<name>]`: the keys a profile may set, with the types of the top-level ones.
/// The chosen profile is layered over the files as a table (see `load.rs`); this struct is
/// what checks every profile's types and finds its unknown keys.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
#[allow(dead_code)] // Read for its checks; the values reach `Config` through the layering.
pub(crate) struct ProfileToml {
    pub model: Option<String>,
    pub model_provider: Option<String>,
    pub model_reasoning_effort: Option<String>,
    pub model_reasoning_summary: Option<String>,
    pub model_verbosity: Option<String>,
    pub model_context_window: Option<NonNegative>,
    pub model_auto_compact_token_limit: Option<NonNegative>,
    pub model_max_output_tokens: Option<NonNegative>,
    pub tool_call_format: Option<String>,
    pub harness: Option<oi_protocol::config_types::Harness>,
    pub approval_policy: Option<String>,
    pub sandbox_mode: Option<String>,
    pub sandbox_workspace_write: Option<Table<SandboxWorkspaceWriteToml>>,
    pub base_instructions: Option<String>,
    pub developer_instructions: Option<String>,
    pub compact_prompt: Option<String>,
    pub approval_timeout_sec: Option<NonNegative>,
    pub max_turn_steps: Option<NonNegative>,
    pub hide_agent_reasoning: Option<bool>,
    pub show_raw_agent_reasoning: Option<bool>,
}

/// `[model_providers.<id>]` as written: every key optional, because a table named like a
/// built-in provider only adjusts the keys it sets (`resolve::model_providers` applies it).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ModelProviderToml {
    pub name: Option<String>,
    pub base_url: Option<String>,
    pub env_key: Option<String>,
    pub env_key_instructions: Option<String>,
    pub wire_api: Option<WireApi>,
    pub query_params: Option<BTreeMap<String, String>>,
    pub http_headers: Option<BTreeMap<String, String>>,
    pub env_http_headers: Option<BTreeMap<String, String>>,
    pub request_max_retries: Option<NonNegative>,
    pub stream_max_retries: Option<NonNegative>,
    pub stream_idle_timeout_ms: Option<NonNegative>,
    pub requires_openai_auth: Option<bool>,
    pub send_reasoning_content: Option<bool>,
    pub harness: Option<oi_protocol::config_types::Harness>,
    pub supports_parallel_tool_calls: Option<bool>,
    pub auth_header: Option<oi_protocol::config_types::AuthHeader>,
}

/// `[projects."/abs/path"]`: whether that folder's project config is honoured.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ProjectToml {
    pub trust_level: Option<TrustLevel>,
}

/// `trust_level = "trusted" | "untrusted"`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TrustLevel {
    Trusted,
    Untrusted,
}

impl<'de> Deserialize<'de> for TrustLevel {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = TrustLevel;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("\"trusted\" or \"untrusted\"")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<TrustLevel, E> {
                match v {
                    "trusted" => Ok(TrustLevel::Trusted),
                    "untrusted" => Ok(TrustLevel::Untrusted),
                    other => Err(E::custom(format!(
                        "unknown value `{other}`; expected \"trusted\" or \"untrusted\""
                    ))),
                }
            }
        }
        d.deserialize_str(Visitor)
    }
}

/// `[thread_store]`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct ThreadStoreToml {
    pub url: Option<String>,
    /// Seconds to wait for a PostgreSQL connection, handshake and login included.
    pub connect_timeout_sec: Option<NonNegative>,
    /// Seconds to wait for one store operation (query, append, lease).
    pub statement_timeout_sec: Option<NonNegative>,
}

/// `[sandbox_workspace_write]`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct SandboxWorkspaceWriteToml {
    pub writable_roots: Vec<String>,
    pub network_access: bool,
    pub exclude_tmpdir_env_var: bool,
    pub exclude_slash_tmp: bool,
    pub allow_git_writes: bool,
}

/// `[skills]`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct SkillsToml {
    pub other_agents: Option<Vec<String>>,
    pub max_prompt_tokens: Option<NonNegative>,
    pub config: Option<Vec<Table<SkillConfigToml>>>,
}

/// One `[[skills.config]]` entry: a skill chosen by `name` or by the `path` of its
/// `SKILL.md`, turned on or off.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct SkillConfigToml {
    pub name: Option<String>,
    pub path: Option<String>,
    pub enabled: Option<bool>,
}

/// `[history]`.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct HistoryToml {
    pub persistence: Option<String>,
    /// Accepted (Codex writes it) and not used: the prompt history is not size-capped.
    #[allow(dead_code)]
    pub max_bytes: Option<toml::Value>,
}

/// `[tui]`: the terminal UI's settings (which themes and items exist is the TUI's business).
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub(crate) struct TuiToml {
    pub theme: Option<String>,
    pub status_line: Option<Vec<String>>,
}

/// A TOML table read as `T`. A derived struct would also accept an array of its values in
/// field order (`history = ["none"]`), which no one means; this accepts only a table.
#[derive(Debug, Default)]
pub(crate) struct Table<T>(pub T);

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Table<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> serde::de::Visitor<'de> for Visitor<T> {
            type Value = Table<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a table")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Table<T>, A::Error> {
                T::deserialize(serde::de::value::MapAccessDeserializer::new(map)).map(Table)
            }
        }
        d.deserialize_map(Visitor(std::marker::PhantomData))
    }
}

/// A count or a duration: a non-negative integer (a float is accepted and truncated, as
/// `approval_timeout_sec = 1.5` has always been).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct NonNegative(pub u64);

impl<'de> Deserialize<'de> for NonNegative {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = NonNegative;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a non-negative number")
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<NonNegative, E> {
                Ok(NonNegative(v))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<NonNegative, E> {
                u64::try_from(v)
                    .map(NonNegative)
                    .map_err(|_| E::custom(format!("expected a non-negative number, found {v}")))
            }
            fn visit_f64<E: serde::de::Error>(self, v: f64) -> Result<NonNegative, E> {
                if v.is_finite() && v >= 0.0 {
                    // Truncation is the documented meaning of a fractional value.
                    Ok(NonNegative(v as u64))
                } else {
                    Err(E::custom(format!(
                        "expected a non-negative number, found {v}"
                    )))
                }
            }
        }
        d.deserialize_any(Visitor)
    }
}

/// The key paths (table names, then the key) of the keys in `text` (one config file) that
/// [`ConfigToml`] does not read, each with the 1-based line it is written on. `[mcp_servers]`
/// is not looked into (its parser reports its own keys). `None` when the file does not fit
/// the schema at all; the loader reports that error itself.
pub(crate) fn unknown_keys(text: &str) -> Option<Vec<(Vec<String>, Option<usize>)>> {
    let mut paths = Vec::new();
    let de = toml::de::Deserializer::parse(text).ok()?;
    let _: ConfigToml = serde_ignored::deserialize(de, |path| paths.push(segments(&path))).ok()?;
    Some(
        paths
            .into_iter()
            .map(|parts| {
                let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
                let line = line_of_key(text, &refs);
                (parts, line)
            })
            .collect(),
    )
}

use crate::key_path::segments;

/// The 1-based line where the key at `parts` (table names, then the key) is written in the
/// TOML `text`, from the parser's spans; `None` if the text does not parse or has no such key.
pub(crate) fn line_of_key(text: &str, parts: &[&str]) -> Option<usize> {
    let doc = toml_edit::Document::parse(text).ok()?;
    let mut table: &dyn toml_edit::TableLike = doc.as_table();
    let (last, parents) = parts.split_last()?;
    for part in parents {
        table = table.get(part)?.as_table_like()?;
    }
    let (key, _) = table.get_key_value(last)?;
    let start = key.span()?.start;
    Some(text.get(..start)?.matches('\n').count() + 1)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::key_path::dotted;
    use crate::keys::{
        HISTORY_KEYS, PROFILE_KEYS, PROJECT_KEYS, PROVIDER_KEYS, SANDBOX_WW_KEYS, SHELL_ENV_KEYS,
        THREAD_STORE_KEYS, TOP_LEVEL_KEYS,
    };

    pub(crate) use crate::serde_fields::fields_of;

    fn sorted(keys: &[&'static str]) -> Vec<&'static str> {
        let mut keys = keys.to_vec();
        keys.sort_unstable();
        keys
    }

    #[test]
    fn the_schema_reads_exactly_the_known_keys() {
        assert_eq!(fields_of::<ConfigToml>(), sorted(TOP_LEVEL_KEYS));
        assert_eq!(
            fields_of::<SandboxWorkspaceWriteToml>(),
            sorted(SANDBOX_WW_KEYS)
        );
        assert_eq!(fields_of::<HistoryToml>(), sorted(HISTORY_KEYS));
        assert_eq!(fields_of::<TuiToml>(), sorted(crate::keys::TUI_KEYS));
        assert_eq!(fields_of::<SkillsToml>(), sorted(crate::keys::SKILLS_KEYS));
        assert_eq!(
            fields_of::<SkillConfigToml>(),
            sorted(crate::keys::SKILL_CONFIG_KEYS)
        );
        assert_eq!(fields_of::<ThreadStoreToml>(), sorted(THREAD_STORE_KEYS));
        assert_eq!(fields_of::<ProfileToml>(), sorted(PROFILE_KEYS));
        assert_eq!(fields_of::<ModelProviderToml>(), sorted(PROVIDER_KEYS));
        assert_eq!(fields_of::<ProjectToml>(), sorted(PROJECT_KEYS));
        assert_eq!(
            fields_of::<ShellEnvironmentPolicyToml>(),
            sorted(SHELL_ENV_KEYS)
        );
        assert_eq!(ignored("model = \"m\"\nnot_a_key = 1\n"), ["not_a_key"]);
    }

    fn ignored(text: &str) -> Vec<String> {
        let mut paths = Vec::new();
        let value: toml::Value = toml::from_str(text).unwrap();
        // Types do not matter here: only which keys the schema visits.
        let _ = serde_ignored::deserialize(value, |p| paths.push(dotted(&segments(&p))))
            .map(|_: ConfigToml| ());
        paths
    }

    #[test]
    fn the_small_tables_read_exactly_their_keys() {
        for (table, keys) in [
            ("sandbox_workspace_write", SANDBOX_WW_KEYS),
            ("history", HISTORY_KEYS),
            ("thread_store", THREAD_STORE_KEYS),
        ] {
            let mut text = format!("[{table}]\n");
            for k in keys {
                text.push_str(&format!("{k} = {}\n", sample(k)));
            }
            text.push_str("zzz = 1\n");
            assert_eq!(ignored(&text), [format!("{table}.zzz")], "{text}");
        }
    }

    fn sample(key: &str) -> &'static str {
        match key {
            "writable_roots" => "[]",
            "persistence" => "\"none\"",
            "url" => "\"postgresql://oi@db/oi\"",
            "connect_timeout_sec" | "statement_timeout_sec" => "5",
            _ => "true",
        }
    }

    #[test]
    fn tables_are_only_tables() {
        for text in [
            "history = [\"none\"]",
            "shell_environment_policy = [\"core\"]",
            "[profiles]\np = [\"m\"]",
        ] {
            let e = toml::from_str::<ConfigToml>(text).unwrap_err();
            assert!(e.message().contains("expected a table"), "{text}: {e}");
        }
    }

    #[test]
    fn quoted_names_stay_whole_in_dotted_keys() {
        assert_eq!(
            dotted(&["projects", "/src/my.app", "trust_level"]),
            "projects.\"/src/my.app\".trust_level"
        );
        assert_eq!(
            dotted(&["model_providers", "gpu-box"]),
            "model_providers.gpu-box"
        );
    }

    #[test]
    fn unknown_keys_come_with_their_line() {
        let text = "model = \"m\"\n\n[sandbox_workspace_write]\nnetwork_acces = true\n";
        assert_eq!(
            unknown_keys(text).unwrap(),
            [(
                vec![
                    "sandbox_workspace_write".to_string(),
                    "network_acces".to_string()
                ],
                Some(4)
            )]
        );
    }

    #[test]
    fn non_negative_numbers() {
        let t: ConfigToml =
            toml::from_str("max_turn_steps = 3\napproval_timeout_sec = 1.5").unwrap();
        assert_eq!(t.max_turn_steps, Some(NonNegative(3)));
        assert_eq!(t.approval_timeout_sec, Some(NonNegative(1)));
        let e = toml::from_str::<ConfigToml>("max_turn_steps = -1").unwrap_err();
        let message = e.message();
        assert!(message.contains("non-negative"), "{message}");
    }
}
