//! Finding, reading, layering and typing the configuration.

use crate::ConfigError;
use crate::keys::{
    CODEX_ONLY_PROFILE_KEYS, CODEX_ONLY_TOP_LEVEL_KEYS, HISTORY_KEYS, KeyKind, PROFILE_KEYS,
    SANDBOX_WW_KEYS, TOP_LEVEL_KEYS, classify,
};
use crate::mcp::{McpServerConfig, parse_mcp_servers};
use crate::overrides::{ConfigOverrides, apply_dotted};
use crate::provider::{
    DEFAULT_OLLAMA_MODEL, DEFAULT_PROVIDER_ID, ModelProviderInfo, builtin_providers,
};
use crate::value::{get_bool, get_enum, get_str, get_uint, parse_effort};
use oi_protocol::config_types::{AskForApproval, ReasoningEffort, SandboxMode, SandboxPolicy};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What [`load_config`] needs besides the files: where home is and the front end's overrides.
#[derive(Clone, Debug, Default)]
pub struct ConfigLoadOptions {
    /// `None`: `$OPENINTERPRETER_HOME`, else `~/.openinterpreter`.
    pub home: Option<PathBuf>,
    /// `-c key=value` pairs, in command-line order (later wins).
    pub cli_overrides: Vec<(String, toml::Value)>,
    pub overrides: ConfigOverrides,
}

/// One source of settings, for `config/read` and diagnostics.
#[derive(Clone, Debug)]
pub struct ConfigLayer {
    /// `user`, `project` or `session_flags`.
    pub name: &'static str,
    pub path: Option<PathBuf>,
    pub value: toml::Table,
}

/// The effective configuration the engine runs with.
#[derive(Clone, Debug)]
pub struct Config {
    pub home: PathBuf,
    pub cwd: PathBuf,
    pub model: String,
    pub model_provider_id: String,
    pub model_provider: ModelProviderInfo,
    pub model_providers: BTreeMap<String, ModelProviderInfo>,
    pub model_reasoning_effort: Option<ReasoningEffort>,
    /// `model_context_window`: the model's window in tokens, when the user knows it better
    /// than the built-in table or the server.
    pub model_context_window: Option<i64>,
    /// `model_auto_compact_token_limit`: compact the history once a request would carry this
    /// many tokens (default: a share of the window, decided by the engine).
    pub model_auto_compact_token_limit: Option<i64>,
    pub approval_policy: AskForApproval,
    pub sandbox_mode: SandboxMode,
    pub sandbox_policy: SandboxPolicy,
    /// `[sandbox_workspace_write] allow_git_writes`: let commands write inside `.git`.
    pub allow_git_writes: bool,
    pub base_instructions: Option<String>,
    pub developer_instructions: Option<String>,
    pub compact_prompt: Option<String>,
    pub mcp_servers: BTreeMap<String, McpServerConfig>,
    /// How long an approval request may stay unanswered before it counts as denied.
    pub approval_timeout: Duration,
    /// Model requests per turn before the turn is stopped (a model that never stops calling tools).
    pub max_turn_steps: usize,
    /// Bytes of tool output the model sees; longer output is cut head+tail.
    pub tool_output_max_bytes: usize,
    /// Default timeout for a shell command when the model gives none.
    pub shell_timeout: Duration,
    /// `model_reasoning_summary`: `auto`, `concise`, `detailed` or `none` (Responses API
    /// `reasoning.summary`). `None`: not sent.
    pub model_reasoning_summary: Option<String>,
    /// `model_verbosity`: `low`, `medium` or `high` (`text.verbosity` / `verbosity`). `None`: not sent.
    pub model_verbosity: Option<String>,
    /// `hide_agent_reasoning`: front ends do not show the model's reasoning.
    pub hide_agent_reasoning: bool,
    /// `show_raw_agent_reasoning`: front ends show the whole reasoning text, not a one-line gist.
    pub show_raw_agent_reasoning: bool,
    /// `project_doc_max_bytes`: how much of AGENTS.md the model sees; 0 leaves it out.
    pub project_doc_max_bytes: usize,
    /// `notify`: a program and its arguments, run with one more argument (a JSON object) when a
    /// turn completes.
    pub notify: Option<Vec<String>>,
    /// `[history] persistence`: whether prompts typed interactively are saved to
    /// `$OPENINTERPRETER_HOME/history.jsonl`.
    pub history_persistence: HistoryPersistence,
    pub profile: Option<String>,
    pub user_config_path: PathBuf,
    pub project_config_path: Option<PathBuf>,
    /// A project config that exists but was skipped because its folder is not trusted.
    pub untrusted_project_config: Option<PathBuf>,
    /// `[shell_environment_policy]`: the environment of commands the model runs.
    pub shell_environment_policy: crate::ShellEnvironmentPolicy,
    pub layers: Vec<ConfigLayer>,
}

/// `[history] persistence`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HistoryPersistence {
    /// Append each prompt to `history.jsonl` (the default).
    #[default]
    SaveAll,
    /// Keep no prompt history on disk.
    None,
}

/// Default of `project_doc_max_bytes`.
pub const DEFAULT_PROJECT_DOC_MAX_BYTES: usize = 32 * 1024;

#[derive(Clone, Debug)]
pub struct LoadedConfig {
    pub config: Config,
    pub warnings: Vec<String>,
}

/// `$OPENINTERPRETER_HOME`, else `~/.openinterpreter`.
pub fn find_home() -> Result<PathBuf, ConfigError> {
    if let Ok(h) = std::env::var("OPENINTERPRETER_HOME")
        && !h.trim().is_empty()
    {
        return Ok(PathBuf::from(h));
    }
    dirs::home_dir()
        .map(|h| h.join(".openinterpreter"))
        .ok_or_else(|| {
            ConfigError::Other(
                "cannot find your home directory; set OPENINTERPRETER_HOME to a writable directory"
                    .into(),
            )
        })
}

fn read_layer(path: &Path) -> Result<Option<(toml::Table, String)>, ConfigError> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(ConfigError::Read {
                path: path.to_path_buf(),
                source: e,
            });
        }
    };
    let table = text
        .parse::<toml::Table>()
        .map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.to_string().trim().replace('\n', " ").replace("  ", " "),
        })?;
    Ok(Some((table, text)))
}

/// Best-effort 1-based line of a key's definition, for warnings.
fn line_of(text: &str, key: &str) -> Option<usize> {
    text.lines()
        .position(|l| {
            let l = l.trim_start();
            l.starts_with(&format!("{key} "))
                || l.starts_with(&format!("{key}="))
                || l.starts_with(&format!("[{key}"))
                || l.starts_with(&format!("\"{key}\""))
        })
        .map(|i| i + 1)
}

/// Warn about keys of `table` that are neither honoured nor Codex-only (with `file:line` and
/// the closest known key); log Codex-only keys at debug level, once each.
pub(crate) fn warn_unknown(
    table: &toml::Table,
    known: (&[&'static str], &[&'static str]),
    prefix: &str,
    origin: &str,
    text: Option<&str>,
    warnings: &mut Vec<String>,
) {
    let (honoured, codex_only) = known;
    for key in table.keys() {
        let at = || {
            text.and_then(|t| line_of(t, key))
                .map(|l| format!(":{l}"))
                .unwrap_or_default()
        };
        match classify(key, honoured, codex_only) {
            KeyKind::Honoured => {}
            KeyKind::CodexOnly => tracing::debug!(
                "{origin}{}: `{prefix}{key}` is a Codex setting Open Interpreter does not use; ignored",
                at()
            ),
            KeyKind::Unknown { suggestion } => {
                let hint = match suggestion {
                    Some(s) => format!("did you mean `{prefix}{s}`?"),
                    None => "check the spelling".to_string(),
                };
                warnings.push(format!(
                    "{origin}{}: unknown key `{prefix}{key}` is ignored ({hint} See docs/configuration.md)",
                    at()
                ));
            }
        }
    }
}

/// Prefix a `mcp_servers.<name>: unknown key `k`` warning with `file:line` where that key is
/// written (best effort: the first config file, project then user, that has it).
fn locate_mcp_warning(warning: &str, files: &[&Path]) -> String {
    let Some((table, rest)) = warning.split_once(": ") else {
        return warning.to_string();
    };
    let Some(key) = rest.split('`').nth(1) else {
        return warning.to_string();
    };
    let Some(path) = table.strip_prefix("mcp_servers.") else {
        return warning.to_string();
    };
    // `[mcp_servers.docs]`, `[mcp_servers."a.b"]`, `[mcp_servers.docs.tools.x]`...
    // The server name may itself contain dots when quoted: try every split.
    let mut headers = vec![format!("[mcp_servers.{path}]")];
    headers.extend(
        path.char_indices()
            .filter(|(_, c)| *c == '.')
            .map(|(i, _)| format!("[mcp_servers.\"{}\"{}]", &path[..i], &path[i..]))
            .chain(std::iter::once(format!("[mcp_servers.\"{path}\"]"))),
    );
    for file in files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        let mut inside = false;
        for (i, line) in text.lines().enumerate() {
            let l = line.trim();
            if l.starts_with('[') {
                inside = headers
                    .iter()
                    .any(|h| l.replace(' ', "") == h.replace(' ', ""));
                continue;
            }
            let defines = l
                .strip_prefix(key)
                .is_some_and(|r| r.trim_start().starts_with('='));
            if inside && defines {
                return format!("{}:{}: {warning}", file.display(), i + 1);
            }
        }
    }
    warning.to_string()
}

/// Merge `over` into `base`, recursing into tables.
fn deep_merge(base: &mut toml::Table, over: &toml::Table) {
    for (k, v) in over {
        match (base.get_mut(k), v) {
            (Some(toml::Value::Table(b)), toml::Value::Table(o)) => deep_merge(b, o),
            _ => {
                base.insert(k.clone(), v.clone());
            }
        }
    }
}

/// The nearest `.openinterpreter/config.toml` at or above `cwd`, excluding the user config.
fn find_project_config(cwd: &Path, user_config: &Path) -> Option<PathBuf> {
    for dir in cwd.ancestors() {
        let candidate = dir.join(".openinterpreter").join("config.toml");
        if candidate.is_file() && candidate != user_config {
            return Some(candidate);
        }
    }
    None
}

/// Check `-c` keys up front: a typo on the command line is an error, not a warning.
fn validate_cli_key(key: &str) -> Result<(), ConfigError> {
    let mut parts = key.split('.');
    let first = parts.next().unwrap_or_default();
    let unknown = |table: &str, sub: &str, suggestion: Option<&str>| {
        let hint = match suggestion {
            Some(s) => format!("did you mean `{s}`?"),
            None => "see docs/configuration.md for the known keys".to_string(),
        };
        ConfigError::Override {
            raw: key.to_string(),
            message: format!("unknown config key `{table}{sub}`; {hint}"),
        }
    };
    match classify(first, TOP_LEVEL_KEYS, CODEX_ONLY_TOP_LEVEL_KEYS) {
        KeyKind::Unknown { suggestion } => return Err(unknown("", first, suggestion)),
        KeyKind::CodexOnly => {
            tracing::debug!("-c {first}: a Codex setting Open Interpreter does not use; ignored");
            return Ok(());
        }
        KeyKind::Honoured => {}
    }
    let sub_keys: &[&'static str] = match first {
        "sandbox_workspace_write" => SANDBOX_WW_KEYS,
        "history" => HISTORY_KEYS,
        _ => return Ok(()),
    };
    if let Some(sub) = parts.next()
        && let KeyKind::Unknown { suggestion } = classify(sub, sub_keys, &[])
    {
        return Err(unknown(&format!("{first}."), sub, suggestion));
    }
    Ok(())
}

/// Load the effective configuration.
pub fn load_config(opts: ConfigLoadOptions) -> Result<LoadedConfig, ConfigError> {
    let home = match opts.home.clone() {
        Some(h) => h,
        None => find_home()?,
    };
    let mut warnings = Vec::new();
    let process_cwd = std::env::current_dir()
        .map_err(|e| ConfigError::Other(format!("cannot read the current directory: {e}")))?;
    let cwd = match &opts.overrides.cwd {
        Some(c) if c.is_absolute() => c.clone(),
        Some(c) => process_cwd.join(c),
        None => process_cwd,
    };
    let cwd = cwd.canonicalize().map_err(|e| {
        ConfigError::Other(format!(
            "working directory {} is not usable: {e}; pass an existing directory with -C/--cd or `cwd`",
            cwd.display()
        ))
    })?;

    let user_path = home.join("config.toml");
    let mut merged = toml::Table::new();
    let mut layers = Vec::new();
    let mut user_table = toml::Table::new();
    if let Some((t, text)) = read_layer(&user_path)? {
        user_table = t.clone();
        let origin = user_path.display().to_string();
        warn_unknown(
            &t,
            (TOP_LEVEL_KEYS, CODEX_ONLY_TOP_LEVEL_KEYS),
            "",
            &origin,
            Some(&text),
            &mut warnings,
        );
        deep_merge(&mut merged, &t);
        layers.push(ConfigLayer {
            name: "user",
            path: Some(user_path.clone()),
            value: t,
        });
    }
    let (project_path, untrusted_project_config) =
        crate::trust::gate_project_config(find_project_config(&cwd, &user_path), &user_table);
    if let Some(p) = &untrusted_project_config {
        warnings.push(crate::trust::untrusted_notice(p));
    }
    if let Some(p) = &project_path
        && let Some((t, text)) = read_layer(p)?
    {
        let origin = p.display().to_string();
        warn_unknown(
            &t,
            (TOP_LEVEL_KEYS, CODEX_ONLY_TOP_LEVEL_KEYS),
            "",
            &origin,
            Some(&text),
            &mut warnings,
        );
        deep_merge(&mut merged, &t);
        layers.push(ConfigLayer {
            name: "project",
            path: Some(p.clone()),
            value: t,
        });
    }

    // -c overrides apply after the files (and after the profile, below).
    let mut flags = toml::Table::new();
    for (k, v) in &opts.cli_overrides {
        validate_cli_key(k)?;
        apply_dotted(&mut flags, k, v.clone());
    }

    // Profile: typed override > -c profile > file `profile`.
    let profile_name = opts
        .overrides
        .profile
        .clone()
        .or_else(|| {
            flags
                .get("profile")
                .and_then(|v| v.as_str().map(str::to_string))
        })
        .or_else(|| {
            merged
                .get("profile")
                .and_then(|v| v.as_str().map(str::to_string))
        });
    let mut effective = merged.clone();
    if let Some(name) = &profile_name {
        let profile = merged
            .get("profiles")
            .and_then(|p| p.as_table())
            .and_then(|p| p.get(name))
            .and_then(|p| p.as_table())
            .cloned()
            .ok_or_else(|| {
                let known: Vec<String> = merged
                    .get("profiles")
                    .and_then(|p| p.as_table())
                    .map(|t| t.keys().cloned().collect())
                    .unwrap_or_default();
                ConfigError::Other(format!(
                    "profile `{name}` is not defined; add a [profiles.{name}] table to {} (defined profiles: {})",
                    user_path.display(),
                    if known.is_empty() { "none".to_string() } else { known.join(", ") }
                ))
            })?;
        warn_unknown(
            &profile,
            (PROFILE_KEYS, CODEX_ONLY_PROFILE_KEYS),
            &format!("profiles.{name}."),
            &user_path.display().to_string(),
            None,
            &mut warnings,
        );
        deep_merge(&mut effective, &profile);
    }
    deep_merge(&mut effective, &flags);
    if !flags.is_empty() {
        layers.push(ConfigLayer {
            name: "session_flags",
            path: None,
            value: flags,
        });
    }

    let typed = build_config(TypedInputs {
        effective: &effective,
        opts: &opts,
        home,
        cwd,
        user_path,
        project_path,
        profile_name,
        warnings: &mut warnings,
    });
    match typed {
        Ok(mut config) => {
            config.layers = layers;
            config.untrusted_project_config = untrusted_project_config;
            Ok(LoadedConfig { config, warnings })
        }
        Err(ConfigError::Invalid {
            origin,
            key,
            message,
        }) => Err(ConfigError::Invalid {
            origin: origin_for(&layers, &key, &message).unwrap_or(origin),
            key,
            message,
        }),
        Err(e) => Err(e),
    }
}

/// Which layer set `key` (the highest-priority one wins), to name it in errors:
/// `-c` overrides, then the project file, then the user file.
fn origin_for(layers: &[ConfigLayer], key: &str, message: &str) -> Option<String> {
    // `mcp_servers` errors name the server in their message: `mcp_servers.<name>: ...`.
    let key = match message.strip_prefix("mcp_servers.") {
        Some(rest) if key == "mcp_servers" => {
            let name = rest.split([':', '.']).next().unwrap_or_default();
            format!("mcp_servers.{name}")
        }
        _ => key.to_string(),
    };
    let defines = |t: &toml::Table| {
        let mut cur = t;
        let parts: Vec<&str> = key.split('.').collect();
        for (i, part) in parts.iter().enumerate() {
            match cur.get(*part) {
                None => return false,
                Some(_) if i + 1 == parts.len() => return true,
                Some(toml::Value::Table(next)) => cur = next,
                Some(_) => return true,
            }
        }
        false
    };
    layers
        .iter()
        .rev()
        .find(|l| defines(&l.value))
        .map(|l| match &l.path {
            Some(p) => p.display().to_string(),
            None => "-c override".to_string(),
        })
}

struct TypedInputs<'a> {
    effective: &'a toml::Table,
    opts: &'a ConfigLoadOptions,
    home: PathBuf,
    cwd: PathBuf,
    user_path: PathBuf,
    project_path: Option<PathBuf>,
    profile_name: Option<String>,
    warnings: &'a mut Vec<String>,
}

/// Turn the merged TOML into a typed [`Config`] (`layers` is filled in by the caller).
fn build_config(inputs: TypedInputs<'_>) -> Result<Config, ConfigError> {
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
    let origin = "config";
    let t = effective;

    // Providers: built-ins, replaced by configured tables of the same id.
    let mut providers = builtin_providers();
    if let Some(v) = t.get("model_providers") {
        let table = v.as_table().ok_or_else(|| ConfigError::Invalid {
            origin: origin.into(),
            key: "model_providers".into(),
            message: "expected a table of [model_providers.<id>] entries".into(),
        })?;
        for (id, pv) in table {
            // A table named like a built-in provider adjusts it: keys it sets win, the rest
            // (name, base_url, env_key...) keep their built-in values.
            let merged = match (providers.get(id), pv) {
                (Some(builtin), toml::Value::Table(over)) => match toml::Value::try_from(builtin) {
                    Ok(toml::Value::Table(mut base)) => {
                        deep_merge(&mut base, over);
                        toml::Value::Table(base)
                    }
                    _ => pv.clone(),
                },
                _ => pv.clone(),
            };
            let p: ModelProviderInfo =
                merged
                    .try_into()
                    .map_err(|e: toml::de::Error| ConfigError::Invalid {
                        origin: origin.into(),
                        key: format!("model_providers.{id}"),
                        message: format!(
                            "{}; a provider needs at least `name` and `base_url` (optional: env_key, wire_api = \"chat\" | \"responses\", query_params, http_headers, env_http_headers, request_max_retries, stream_max_retries, stream_idle_timeout_ms, send_reasoning_content)",
                            e.message()
                        ),
                    })?;
            if p.base_url.as_deref().is_none_or(|u| u.trim().is_empty()) {
                return Err(ConfigError::Invalid {
                    origin: origin.into(),
                    key: format!("model_providers.{id}.base_url"),
                    message: "missing; set it to the API root, e.g. \"http://localhost:11434/v1\""
                        .into(),
                });
            }
            providers.insert(id.clone(), p);
        }
    }

    let provider_id = opts
        .overrides
        .model_provider
        .clone()
        .map(Some)
        .unwrap_or(get_str(t, "model_provider", origin)?)
        .unwrap_or_else(|| DEFAULT_PROVIDER_ID.to_string());
    let model_provider = providers.get(&provider_id).cloned().ok_or_else(|| {
        ConfigError::Invalid {
            origin: origin.into(),
            key: "model_provider".into(),
            message: format!(
                "unknown provider `{provider_id}`; use one of {} or define [model_providers.{provider_id}] with name and base_url",
                providers.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
        }
    })?;

    let model = match opts
        .overrides
        .model
        .clone()
        .map(Some)
        .unwrap_or(get_str(t, "model", origin)?)
    {
        Some(m) if !m.trim().is_empty() => m,
        _ if provider_id == DEFAULT_PROVIDER_ID => DEFAULT_OLLAMA_MODEL.to_string(),
        _ => {
            return Err(ConfigError::Invalid {
                origin: origin.into(),
                key: "model".into(),
                message: format!(
                    "no model is set for provider `{provider_id}`; add `model = \"<name>\"` to {} or pass -m <name>",
                    user_path.display()
                ),
            });
        }
    };

    let approval_policy = match opts.overrides.approval_policy {
        Some(a) => a,
        None => get_enum::<AskForApproval>(t, "approval_policy", origin)?.unwrap_or_default(),
    };
    let sandbox_mode = match opts.overrides.sandbox_mode {
        Some(s) => s,
        None => get_enum::<SandboxMode>(t, "sandbox_mode", origin)?.unwrap_or_default(),
    };

    let ww = match t.get("sandbox_workspace_write") {
        None => toml::Table::new(),
        Some(toml::Value::Table(w)) => w.clone(),
        Some(_) => {
            return Err(ConfigError::Invalid {
                origin: origin.into(),
                key: "sandbox_workspace_write".into(),
                message: "expected a table: [sandbox_workspace_write] writable_roots = [...], network_access = false".into(),
            });
        }
    };
    warn_unknown(
        &ww,
        (SANDBOX_WW_KEYS, &[]),
        "sandbox_workspace_write.",
        origin,
        None,
        warnings,
    );
    let ww_origin = "config [sandbox_workspace_write]";
    let writable_roots = match ww.get("writable_roots") {
        None => Vec::new(),
        Some(toml::Value::Array(a)) => {
            let mut roots = Vec::new();
            for v in a {
                let s = v.as_str().ok_or_else(|| ConfigError::Invalid {
                    origin: ww_origin.into(),
                    key: "writable_roots".into(),
                    message: "expected an array of path strings".into(),
                })?;
                let p = PathBuf::from(s);
                roots.push(if p.is_absolute() { p } else { cwd.join(p) });
            }
            roots
        }
        Some(_) => {
            return Err(ConfigError::Invalid {
                origin: ww_origin.into(),
                key: "writable_roots".into(),
                message: "expected an array of path strings".into(),
            });
        }
    };
    let sandbox_policy = match sandbox_mode {
        SandboxMode::ReadOnly => SandboxPolicy::ReadOnly,
        SandboxMode::DangerFullAccess => SandboxPolicy::DangerFullAccess,
        SandboxMode::WorkspaceWrite => SandboxPolicy::WorkspaceWrite {
            writable_roots,
            network_access: get_bool(&ww, "network_access", ww_origin)?.unwrap_or(false),
            exclude_tmpdir_env_var: get_bool(&ww, "exclude_tmpdir_env_var", ww_origin)?
                .unwrap_or(false),
            exclude_slash_tmp: get_bool(&ww, "exclude_slash_tmp", ww_origin)?.unwrap_or(false),
        },
    };
    let allow_git_writes = get_bool(&ww, "allow_git_writes", ww_origin)?.unwrap_or(false);

    let model_reasoning_effort = match get_str(t, "model_reasoning_effort", origin)? {
        None => None,
        Some(s) => Some(parse_effort(&s).map_err(|m| ConfigError::Invalid {
            origin: origin.into(),
            key: "model_reasoning_effort".into(),
            message: m,
        })?),
    };

    let mut mcp_warnings = Vec::new();
    let mcp_servers = match t.get("mcp_servers") {
        None => BTreeMap::new(),
        Some(v) => parse_mcp_servers(v, &mut mcp_warnings).map_err(|m| ConfigError::Invalid {
            origin: origin.into(),
            key: "mcp_servers".into(),
            message: m,
        })?,
    };
    let files: Vec<&Path> = project_path
        .iter()
        .map(PathBuf::as_path)
        .chain(std::iter::once(user_path.as_path()))
        .collect();
    for w in mcp_warnings {
        warnings.push(locate_mcp_warning(&w, &files));
    }

    let base_instructions = opts
        .overrides
        .base_instructions
        .clone()
        .map(Some)
        .unwrap_or(match get_str(t, "base_instructions", origin)? {
            Some(s) => Some(s),
            None => get_str(t, "instructions", origin)?,
        });
    let developer_instructions = opts
        .overrides
        .developer_instructions
        .clone()
        .map(Some)
        .unwrap_or(get_str(t, "developer_instructions", origin)?);
    let compact_prompt = opts
        .overrides
        .compact_prompt
        .clone()
        .map(Some)
        .unwrap_or(get_str(t, "compact_prompt", origin)?);

    let approval_timeout = Duration::from_secs(
        get_uint(t, "approval_timeout_sec", origin)?
            .unwrap_or(600)
            .max(1),
    );
    let max_turn_steps = get_uint(t, "max_turn_steps", origin)?.unwrap_or(100).max(1) as usize;
    let tool_output_max_bytes = get_uint(t, "tool_output_max_bytes", origin)?
        .unwrap_or(32 * 1024)
        .max(1024) as usize;
    let shell_timeout = Duration::from_millis(
        get_uint(t, "shell_timeout_ms", origin)?
            .unwrap_or(300_000)
            .max(1),
    );
    let model_context_window = get_uint(t, "model_context_window", origin)?.map(|v| v as i64);
    let shell_environment_policy = crate::shell_env::parse_policy(t, origin, warnings)?;
    let one_of = |key: &str, allowed: &[&str]| -> Result<Option<String>, ConfigError> {
        match get_str(t, key, origin)? {
            Some(v) if !allowed.contains(&v.as_str()) => Err(ConfigError::Invalid {
                origin: origin.into(),
                key: key.into(),
                message: format!(
                    "unknown value `{v}`; expected one of: {}",
                    allowed.join(", ")
                ),
            }),
            v => Ok(v),
        }
    };
    let model_reasoning_summary = one_of(
        "model_reasoning_summary",
        &["auto", "concise", "detailed", "none"],
    )?;
    let model_verbosity = one_of("model_verbosity", &["low", "medium", "high"])?;
    let notify = match t.get("notify") {
        None => None,
        Some(toml::Value::Array(a)) if !a.is_empty() => Some(
            a.iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<Vec<_>>>()
                .ok_or_else(|| notify_error(origin))?,
        ),
        Some(_) => return Err(notify_error(origin)),
    };
    let history = match t.get("history") {
        None => toml::Table::new(),
        Some(toml::Value::Table(h)) => h.clone(),
        Some(_) => {
            return Err(ConfigError::Invalid {
                origin: origin.into(),
                key: "history".into(),
                message: "expected a table: [history] persistence = \"save-all\" | \"none\"".into(),
            });
        }
    };
    warn_unknown(
        &history,
        (HISTORY_KEYS, &[]),
        "history.",
        origin,
        None,
        warnings,
    );
    let history_persistence = match get_str(&history, "persistence", "config [history]")?.as_deref()
    {
        None | Some("save-all") => HistoryPersistence::SaveAll,
        Some("none") => HistoryPersistence::None,
        Some(other) => {
            return Err(ConfigError::Invalid {
                origin: "config [history]".into(),
                key: "persistence".into(),
                message: format!("unknown value `{other}`; expected \"save-all\" or \"none\""),
            });
        }
    };
    let model_auto_compact_token_limit =
        get_uint(t, "model_auto_compact_token_limit", origin)?.map(|v| v as i64);

    Ok(Config {
        home,
        cwd,
        model,
        model_provider_id: provider_id,
        model_provider,
        model_providers: providers,
        model_reasoning_effort,
        model_context_window,
        model_auto_compact_token_limit,
        approval_policy,
        sandbox_mode,
        sandbox_policy,
        allow_git_writes,
        base_instructions,
        developer_instructions,
        compact_prompt,
        mcp_servers,
        approval_timeout,
        max_turn_steps,
        tool_output_max_bytes,
        shell_timeout,
        model_reasoning_summary,
        model_verbosity,
        hide_agent_reasoning: get_bool(t, "hide_agent_reasoning", origin)?.unwrap_or(false),
        show_raw_agent_reasoning: get_bool(t, "show_raw_agent_reasoning", origin)?.unwrap_or(false),
        project_doc_max_bytes: get_uint(t, "project_doc_max_bytes", origin)?
            .map(|v| v as usize)
            .unwrap_or(DEFAULT_PROJECT_DOC_MAX_BYTES),
        notify,
        history_persistence,
        profile: profile_name,
        user_config_path: user_path,
        project_config_path: project_path,
        untrusted_project_config: None,
        shell_environment_policy,
        layers: Vec::new(),
    })
}

fn notify_error(origin: &str) -> ConfigError {
    ConfigError::Invalid {
        origin: origin.into(),
        key: "notify".into(),
        message: "expected the program and its arguments as an array of strings, e.g. notify = [\"notify-send\", \"Open Interpreter\"]".into(),
    }
}

#[cfg(test)]
#[path = "load_tests.rs"]
mod tests;
