//! From the merged TOML table (files, profile, `-c`) to the typed [`Config`]: each value
//! checked, defaulted and combined with the front end's typed overrides.

use crate::ConfigError;
use crate::mcp::{McpServerConfig, parse_servers};
use crate::provider::{
    DEFAULT_OLLAMA_MODEL, DEFAULT_PROVIDER_ID, LOCAL_MODEL, LOCAL_PROVIDER_ID, ModelProviderInfo,
    builtin_providers,
};
use crate::schema::{
    ConfigToml, HistoryToml, ModelProviderToml, NonNegative, SandboxWorkspaceWriteToml, Table,
};
use crate::typed::{Config, ConfigLoadOptions, DEFAULT_PROJECT_DOC_MAX_BYTES, HistoryPersistence};
use crate::unknown_keys::locate_mcp_key;
use crate::value::parse_effort;
use oi_protocol::config_types::{AskForApproval, SandboxMode, SandboxPolicy};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What [`build_config`] types: the merged table and where it came from.
pub(crate) struct TypedInputs<'a> {
    /// Files, profile and `-c` overrides merged.
    pub effective: &'a toml::Table,
    pub opts: &'a ConfigLoadOptions,
    pub home: PathBuf,
    pub cwd: PathBuf,
    pub user_path: PathBuf,
    pub project_path: Option<PathBuf>,
    pub profile_name: Option<String>,
    pub warnings: &'a mut Vec<String>,
}

/// Where errors about the merged table point before [`origin_for`] names the layer.
const ORIGIN: &str = "config";

fn invalid(key: &str, message: impl Into<String>) -> ConfigError {
    ConfigError::Invalid {
        origin: ORIGIN.into(),
        key: key.into(),
        message: message.into(),
    }
}

/// Turn the merged TOML into a typed [`Config`] (`layers` is filled in by the caller).
pub(crate) fn build_config(inputs: TypedInputs<'_>) -> Result<Config, ConfigError> {
    let TypedInputs {
        effective,
        opts,
        home,
        cwd,
        user_path,
        project_path,
        profile_name,
        warnings,
    } = inputs;
    let ov = &opts.overrides;
    let t = read_schema(effective)?;
    check_profile_values(t.profiles.as_ref())?;
    let limits = limits(&t);

    let providers = model_providers(t.model_providers.unwrap_or_default())?;
    let chosen_provider_id = ov.model_provider.clone().or(t.model_provider);
    let chosen_model = ov.model.clone().or(t.model);
    let model_provider_defaulted = chosen_provider_id.is_none() && chosen_model.is_none();
    let provider_id = chosen_provider_id.unwrap_or_else(|| DEFAULT_PROVIDER_ID.to_string());
    let model_provider = chosen_provider(&providers, &provider_id)?;
    let model = choose_model(chosen_model, &provider_id, &user_path)?;

    let approval_policy = or_parsed(ov.approval_policy, "approval_policy", t.approval_policy)?;
    let sandbox_mode = or_parsed(ov.sandbox_mode, "sandbox_mode", t.sandbox_mode)?;
    let ww = t.sandbox_workspace_write.unwrap_or_default().0;
    let allow_git_writes = ww.allow_git_writes;
    let sandbox_policy = sandbox_policy(sandbox_mode, ww, &cwd);

    let model_reasoning_effort = t
        .model_reasoning_effort
        .map(|s| parse_effort(&s).map_err(|m| invalid("model_reasoning_effort", m.to_string())))
        .transpose()?;
    let mcp_servers = mcp_servers(
        t.mcp_servers.as_ref(),
        project_path.as_deref(),
        &user_path,
        warnings,
    )?;
    let shell_environment_policy = t.shell_environment_policy.unwrap_or_default().0.into();
    let count = |v: Option<NonNegative>| v.map(|n| n.0);

    Ok(Config {
        home,
        cwd,
        model,
        model_provider_id: provider_id,
        model_provider,
        model_provider_defaulted,
        model_providers: providers,
        model_reasoning_effort,
        model_context_window: count(t.model_context_window).map(saturating_i64),
        model_auto_compact_token_limit: count(t.model_auto_compact_token_limit).map(saturating_i64),
        model_max_output_tokens: count(t.model_max_output_tokens).map(saturating_i64),
        tool_call_format: tool_call_format(t.tool_call_format)?,
        harness: t.harness.unwrap_or_default(),
        approval_policy,
        sandbox_mode,
        sandbox_policy,
        allow_git_writes,
        base_instructions: ov
            .base_instructions
            .clone()
            .or(t.base_instructions)
            .or(t.instructions),
        developer_instructions: ov
            .developer_instructions
            .clone()
            .or(t.developer_instructions),
        compact_prompt: ov.compact_prompt.clone().or(t.compact_prompt),
        mcp_servers,
        approval_timeout: limits.approval_timeout,
        parked_turn_timeout: limits.parked_turn_timeout,
        max_turn_steps: limits.max_turn_steps,
        tool_output_max_bytes: limits.tool_output_max_bytes,
        shell_timeout: limits.shell_timeout,
        model_reasoning_summary: one_of(
            "model_reasoning_summary",
            t.model_reasoning_summary,
            &["auto", "concise", "detailed", "none"],
        )?,
        model_verbosity: one_of(
            "model_verbosity",
            t.model_verbosity,
            &["low", "medium", "high"],
        )?,
        hide_agent_reasoning: t.hide_agent_reasoning.unwrap_or(false),
        show_raw_agent_reasoning: t.show_raw_agent_reasoning.unwrap_or(false),
        project_doc_max_bytes: limits.project_doc_max_bytes,
        project_doc_fallback_filenames: fallback_filenames(
            t.project_doc_fallback_filenames.unwrap_or_default(),
        )?,
        // `notify = []` runs nothing, as in Codex (which accepts it).
        notify: t.notify.filter(|argv| !argv.is_empty()),
        notify_pins: None,
        skills: skills_settings(t.skills.unwrap_or_default().0)?,
        // Filled from the layers by the loader (`hooks::from_layers`).
        hooks: Default::default(),
        include_plan_tool: t.include_plan_tool.unwrap_or(true),
        history_persistence: history_persistence(t.history.unwrap_or_default().0)?,
        mcp_oauth_credentials_store: t.mcp_oauth_credentials_store.unwrap_or_default(),
        profile: profile_name,
        user_config_path: user_path,
        project_config_path: project_path,
        untrusted_project_config: None,
        project_config_review: None,
        shell_environment_policy,
        layers: Vec::new(),
        flag_keys: flag_keys(&opts.overrides),
        tui_theme: t.tui.as_ref().and_then(|t| t.0.theme.clone()),
        tui_status_line: t.tui.and_then(|t| t.0.status_line),
    })
}

/// The timeouts and sizes of a turn, each with its default and its floor.
struct Limits {
    approval_timeout: Duration,
    parked_turn_timeout: Duration,
    max_turn_steps: usize,
    tool_output_max_bytes: usize,
    shell_timeout: Duration,
    project_doc_max_bytes: usize,
}

fn limits(t: &ConfigToml) -> Limits {
    let count = |v: Option<NonNegative>| v.map(|n| n.0);
    Limits {
        approval_timeout: Duration::from_secs(count(t.approval_timeout_sec).unwrap_or(600).max(1)),
        parked_turn_timeout: Duration::from_secs(
            count(t.parked_turn_timeout_sec)
                .unwrap_or(24 * 60 * 60)
                .max(1),
        ),
        max_turn_steps: as_usize(count(t.max_turn_steps).unwrap_or(100).max(1)),
        tool_output_max_bytes: as_usize(
            count(t.tool_output_max_bytes)
                .unwrap_or(32 * 1024)
                .max(1024),
        ),
        shell_timeout: Duration::from_millis(count(t.shell_timeout_ms).unwrap_or(300_000).max(1)),
        project_doc_max_bytes: count(t.project_doc_max_bytes)
            .map(as_usize)
            .unwrap_or(DEFAULT_PROJECT_DOC_MAX_BYTES),
    }
}

/// The override when there is one, else the file's value parsed (`key` names it in errors),
/// else the default.
fn or_parsed<T: std::str::FromStr<Err = String> + Default>(
    overridden: Option<T>,
    key: &str,
    value: Option<String>,
) -> Result<T, ConfigError> {
    match overridden {
        Some(v) => Ok(v),
        None => Ok(parse_enum::<T>(key, value)?.unwrap_or_default()),
    }
}

fn tool_call_format(
    value: Option<String>,
) -> Result<oi_protocol::config_types::ToolCallFormat, ConfigError> {
    use oi_protocol::config_types::ToolCallFormat;
    Ok(
        match one_of("tool_call_format", value, &["native", "text", "auto"])?.as_deref() {
            Some("native") => ToolCallFormat::Native,
            Some("text") => ToolCallFormat::Text,
            _ => ToolCallFormat::Auto,
        },
    )
}

/// Deserialize the merged table into [`ConfigToml`]. A value of the wrong type is an error
/// naming its exact key. Unknown keys are not looked for here: each file was checked on its
/// own, with lines (`unknown_keys::warn_unknown_in_file`), and `-c` keys before layering, so
/// every key in the merged table has been reported once already.
fn read_schema(effective: &toml::Table) -> Result<ConfigToml, ConfigError> {
    serde_path_to_error::deserialize(toml::Value::Table(effective.clone())).map_err(
        |e: serde_path_to_error::Error<toml::de::Error>| {
            let key = crate::de_error::key_of(e.path());
            let message = match type_hint(&key) {
                Some(hint) => hint.to_string(),
                None => crate::de_error::toml_message(e.inner()),
            };
            invalid(&key, message)
        },
    )
}

/// How `[thread_store]` is written, for errors about it.
pub(crate) const THREAD_STORE_HINT: &str =
    "expected a table: [thread_store] url = \"postgresql://USER@HOST:PORT/DB\"";

/// What to write instead, for values whose type serde's own message explains poorly.
fn type_hint(key: &str) -> Option<&'static str> {
    Some(match key {
        "notify" => {
            "expected the program and its arguments as an array of strings, e.g. notify = [\"notify-send\", \"Open Interpreter\"]"
        }
        "sandbox_workspace_write" => {
            "expected a table: [sandbox_workspace_write] writable_roots = [...], network_access = false"
        }
        "sandbox_workspace_write.writable_roots" => "expected an array of path strings",
        "history" => "expected a table: [history] persistence = \"save-all\" | \"none\"",
        "skills" => "expected a table: [skills] other_agents = [\"codex\", \"claude\"]",
        "skills.other_agents" => {
            "expected an array of agent names: other_agents = [\"codex\", \"claude\"]"
        }
        "skills.max_prompt_tokens" => {
            "expected a non-negative number of tokens, e.g. max_prompt_tokens = 600"
        }
        "thread_store" => THREAD_STORE_HINT,
        "shell_environment_policy" => {
            "expected a table: [shell_environment_policy] inherit = \"core\""
        }
        "shell_environment_policy.exclude" | "shell_environment_policy.include_only" => {
            "expected an array of name patterns like [\"AWS_*\"]"
        }
        "shell_environment_policy.set" => "expected a table like { NAME = \"value\" }",
        "model_providers" => {
            "expected a table of [model_providers.<id>] entries with name and base_url"
        }
        "profiles" => "expected a table of [profiles.<name>] entries",
        "project_doc_fallback_filenames" => {
            "expected an array of file names, e.g. project_doc_fallback_filenames = [\"CLAUDE.md\", \"QWEN.md\"]"
        }
        "projects" => {
            "expected a table of [projects.\"/abs/path\"] entries with trust_level = \"trusted\""
        }
        _ => return None,
    })
}

/// Built-in providers, adjusted or extended by `[model_providers.<id>]` tables.
fn model_providers(
    configured: BTreeMap<String, Table<ModelProviderToml>>,
) -> Result<BTreeMap<String, ModelProviderInfo>, ConfigError> {
    let mut providers = builtin_providers();
    for (id, table) in configured {
        let p = configured_provider(&id, providers.remove(&id), table.0)?;
        providers.insert(id, p);
    }
    Ok(providers)
}

/// The provider `[model_providers.<id>]` describes. A table named like a built-in provider
/// (`builtin`) adjusts it: keys it sets win, the rest (name, base_url, env_key...) keep their
/// built-in values. Any other table needs at least `name` and `base_url`.
fn configured_provider(
    id: &str,
    builtin: Option<ModelProviderInfo>,
    t: ModelProviderToml,
) -> Result<ModelProviderInfo, ConfigError> {
    let key = crate::key_path::dotted(&["model_providers", id]);
    let base = match (builtin, t.name) {
        (Some(mut b), name) => {
            if let Some(name) = name {
                b.name = name;
            }
            b
        }
        (None, Some(name)) => ModelProviderInfo::named(name),
        (None, None) => {
            return Err(invalid(
                &key,
                "missing `name`; a new provider needs at least `name` and `base_url`, e.g. [model_providers.box] name = \"GPU box\", base_url = \"http://gpu-box:8000/v1\"",
            ));
        }
    };
    let count = |v: Option<NonNegative>| v.map(|n| n.0);
    let p = ModelProviderInfo {
        base_url: t.base_url.or(base.base_url),
        env_key: t.env_key.or(base.env_key),
        env_key_instructions: t.env_key_instructions.or(base.env_key_instructions),
        wire_api: t.wire_api.unwrap_or(base.wire_api),
        query_params: t.query_params.or(base.query_params),
        http_headers: t.http_headers.or(base.http_headers),
        env_http_headers: t.env_http_headers.or(base.env_http_headers),
        request_max_retries: count(t.request_max_retries).or(base.request_max_retries),
        stream_max_retries: count(t.stream_max_retries).or(base.stream_max_retries),
        stream_idle_timeout_ms: count(t.stream_idle_timeout_ms).or(base.stream_idle_timeout_ms),
        requires_openai_auth: t.requires_openai_auth.unwrap_or(base.requires_openai_auth),
        send_reasoning_content: t.send_reasoning_content.or(base.send_reasoning_content),
        harness: t.harness.or(base.harness),
        supports_parallel_tool_calls: t
            .supports_parallel_tool_calls
            .or(base.supports_parallel_tool_calls),
        auth_header: t.auth_header.or(base.auth_header),
        name: base.name,
    };
    if p.base_url.as_deref().is_none_or(|u| u.trim().is_empty()) {
        return Err(invalid(
            &format!("{key}.base_url"),
            "missing; set it to the API root, e.g. \"http://localhost:11434/v1\"",
        ));
    }
    Ok(p)
}

/// The provider `id` names, among the built-in and configured ones.
fn chosen_provider(
    providers: &BTreeMap<String, ModelProviderInfo>,
    id: &str,
) -> Result<ModelProviderInfo, ConfigError> {
    providers.get(id).cloned().ok_or_else(|| {
        invalid(
            "model_provider",
            format!(
                "unknown provider `{id}`; use one of {} or define [model_providers.{id}] with name and base_url",
                providers.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
        )
    })
}

/// The model to use: the configured one, else the default for the default provider; other
/// providers have no default.
fn choose_model(
    configured: Option<String>,
    provider_id: &str,
    user_path: &Path,
) -> Result<String, ConfigError> {
    match configured {
        Some(m) if !m.trim().is_empty() => Ok(m),
        _ if provider_id == DEFAULT_PROVIDER_ID => Ok(DEFAULT_OLLAMA_MODEL.to_string()),
        _ if provider_id == LOCAL_PROVIDER_ID => Ok(LOCAL_MODEL.to_string()),
        _ => Err(invalid(
            "model",
            format!(
                "no model is set for provider `{provider_id}`; add `model = \"<name>\"` to {} or pass -m <name>",
                user_path.display()
            ),
        )),
    }
}

/// The values every profile sets, checked like the top-level keys they stand for, whether
/// the profile is in use or not: a typo in a profile is found when it is written, not the
/// day the profile is first chosen. (Types were checked by the schema.)
fn check_profiles_values_of(name: &str, p: &crate::schema::ProfileToml) -> Result<(), ConfigError> {
    let key = |k: &str| format!("profiles.{name}.{k}");
    parse_enum::<AskForApproval>(&key("approval_policy"), p.approval_policy.clone())?;
    parse_enum::<SandboxMode>(&key("sandbox_mode"), p.sandbox_mode.clone())?;
    if let Some(effort) = &p.model_reasoning_effort {
        parse_effort(effort).map_err(|m| invalid(&key("model_reasoning_effort"), m.to_string()))?;
    }
    one_of(
        &key("tool_call_format"),
        p.tool_call_format.clone(),
        &["native", "text", "auto"],
    )?;
    one_of(
        &key("model_reasoning_summary"),
        p.model_reasoning_summary.clone(),
        &["auto", "concise", "detailed", "none"],
    )?;
    one_of(
        &key("model_verbosity"),
        p.model_verbosity.clone(),
        &["low", "medium", "high"],
    )?;
    Ok(())
}

fn check_profile_values(
    profiles: Option<&BTreeMap<String, crate::schema::Table<crate::schema::ProfileToml>>>,
) -> Result<(), ConfigError> {
    for (name, profile) in profiles.into_iter().flatten() {
        check_profiles_values_of(name, &profile.0)?;
    }
    Ok(())
}

fn parse_enum<T: std::str::FromStr<Err = String>>(
    key: &str,
    value: Option<String>,
) -> Result<Option<T>, ConfigError> {
    value
        .map(|s| s.parse::<T>().map_err(|m| invalid(key, m)))
        .transpose()
}

/// `value`, if it is one of `allowed`.
fn one_of(
    key: &str,
    value: Option<String>,
    allowed: &[&str],
) -> Result<Option<String>, ConfigError> {
    match value {
        Some(v) if !allowed.contains(&v.as_str()) => Err(invalid(
            key,
            format!(
                "unknown value `{v}`; expected one of: {}",
                allowed.join(", ")
            ),
        )),
        v => Ok(v),
    }
}

/// The sandbox policy of `mode`; `[sandbox_workspace_write]` matters only for workspace-write.
fn sandbox_policy(mode: SandboxMode, ww: SandboxWorkspaceWriteToml, cwd: &Path) -> SandboxPolicy {
    match mode {
        SandboxMode::ReadOnly => SandboxPolicy::ReadOnly,
        SandboxMode::DangerFullAccess => SandboxPolicy::DangerFullAccess,
        SandboxMode::WorkspaceWrite => SandboxPolicy::WorkspaceWrite {
            writable_roots: ww
                .writable_roots
                .into_iter()
                .map(|r| {
                    let p = PathBuf::from(r);
                    if p.is_absolute() { p } else { cwd.join(p) }
                })
                .collect(),
            network_access: ww.network_access,
            exclude_tmpdir_env_var: ww.exclude_tmpdir_env_var,
            exclude_slash_tmp: ww.exclude_slash_tmp,
        },
    }
}

/// `[mcp_servers]`, validated; its warnings name the file and line of the key.
fn mcp_servers(
    configured: Option<&toml::Value>,
    project_path: Option<&Path>,
    user_path: &Path,
    warnings: &mut Vec<String>,
) -> Result<BTreeMap<String, McpServerConfig>, ConfigError> {
    let Some(v) = configured else {
        return Ok(BTreeMap::new());
    };
    let (servers, ignored) = parse_servers(v).map_err(|e| invalid(&e.key, e.message))?;
    let files: Vec<&Path> = project_path.into_iter().chain([user_path]).collect();
    warnings.extend(ignored.iter().map(|key| locate_mcp_key(key, &files)));
    Ok(servers)
}

/// `[skills]` typed: `other_agents` checked against the known sources, a `[[skills.config]]`
/// entry needs `name` or `path`.
fn skills_settings(
    skills: crate::schema::SkillsToml,
) -> Result<crate::SkillsSettings, ConfigError> {
    use crate::typed::{SKILL_SOURCES, SkillSelector};
    let mut other_agents = Vec::new();
    for (i, agent) in skills
        .other_agents
        .unwrap_or_default()
        .into_iter()
        .enumerate()
    {
        if !SKILL_SOURCES.contains(&agent.as_str()) {
            return Err(invalid(
                &format!("skills.other_agents[{i}]"),
                format!(
                    "`{agent}` is not an agent whose skills can be read; use \"codex\" (~/.codex/skills) or \"claude\" (~/.claude/skills)"
                ),
            ));
        }
        if !other_agents.contains(&agent) {
            other_agents.push(agent);
        }
    }
    let mut disabled = Vec::new();
    for (i, entry) in skills.config.unwrap_or_default().into_iter().enumerate() {
        let entry = entry.0;
        let selector = match (entry.name, entry.path) {
            (Some(name), _) if !name.is_empty() => SkillSelector::Name(name),
            (_, Some(path)) if !path.is_empty() => SkillSelector::Path(PathBuf::from(path)),
            _ => {
                return Err(invalid(
                    &format!("skills.config[{i}]"),
                    "choose the skill with `name = \"...\"` or `path = \"/path/to/SKILL.md\"`",
                ));
            }
        };
        if entry.enabled == Some(false) {
            disabled.push(selector);
        }
    }
    Ok(crate::SkillsSettings {
        other_agents,
        max_prompt_tokens: skills
            .max_prompt_tokens
            .map(|n| as_usize(n.0))
            .unwrap_or(crate::typed::DEFAULT_SKILLS_PROMPT_TOKENS),
        disabled,
    })
}

fn history_persistence(history: HistoryToml) -> Result<HistoryPersistence, ConfigError> {
    match history.persistence.as_deref() {
        None | Some("save-all") => Ok(HistoryPersistence::SaveAll),
        Some("none") => Ok(HistoryPersistence::None),
        Some(other) => Err(ConfigError::Invalid {
            origin: "config [history]".into(),
            key: "persistence".into(),
            message: format!("unknown value `{other}`; expected \"save-all\" or \"none\""),
        }),
    }
}

/// `project_doc_fallback_filenames` as the project-doc lookup uses it: Codex skips empty
/// entries and repeats, and so do we. A name is joined to each folder the lookup visits, so it
/// must stay in that folder: an absolute path or a `..` would name a file elsewhere.
fn fallback_filenames(names: Vec<String>) -> Result<Vec<String>, ConfigError> {
    let mut out: Vec<String> = Vec::new();
    for (i, name) in names.into_iter().enumerate() {
        if name.is_empty() || out.contains(&name) {
            continue;
        }
        let path = Path::new(&name);
        let inside = path.components().all(|c| {
            matches!(
                c,
                std::path::Component::Normal(_) | std::path::Component::CurDir
            )
        });
        let names_a_file = path
            .components()
            .any(|c| matches!(c, std::path::Component::Normal(_)));
        if !inside || !names_a_file || name.contains('\0') {
            return Err(invalid(
                &format!("project_doc_fallback_filenames[{i}]"),
                "expected a file name looked for in each folder, like \"CLAUDE.md\" (no absolute path, no `..`)",
            ));
        }
        out.push(name);
    }
    Ok(out)
}

fn saturating_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn as_usize(v: u64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

/// The top-level keys the typed overrides set, for [`Config::origin_of`].
fn flag_keys(ov: &crate::ConfigOverrides) -> Vec<&'static str> {
    [
        ("model", ov.model.is_some()),
        ("model_provider", ov.model_provider.is_some()),
        ("profile", ov.profile.is_some()),
        ("approval_policy", ov.approval_policy.is_some()),
        ("sandbox_mode", ov.sandbox_mode.is_some()),
        ("base_instructions", ov.base_instructions.is_some()),
        (
            "developer_instructions",
            ov.developer_instructions.is_some(),
        ),
        ("compact_prompt", ov.compact_prompt.is_some()),
    ]
    .into_iter()
    .filter_map(|(key, set)| set.then_some(key))
    .collect()
}
