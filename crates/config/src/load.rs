//! Finding, reading, layering and typing the configuration.

use crate::ConfigError;
use crate::keys::{
    CODEX_ONLY_PROFILE_KEYS, CODEX_ONLY_TOP_LEVEL_KEYS, HISTORY_KEYS, KeyKind, PROFILE_KEYS,
    SANDBOX_WW_KEYS, THREAD_STORE_KEYS, TOP_LEVEL_KEYS, classify,
};
use crate::mcp::{McpServerConfig, parse_mcp_servers};
use crate::overrides::{ConfigOverrides, apply_dotted};
use crate::provider::{
    DEFAULT_OLLAMA_MODEL, DEFAULT_PROVIDER_ID, ModelProviderInfo, builtin_providers,
};
use crate::schema::{ConfigToml, HistoryToml, NonNegative, SandboxWorkspaceWriteToml};
use crate::value::parse_effort;
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
    for key in table.keys() {
        let line = text.and_then(|t| crate::schema::line_of_key(t, &[key]));
        warn_key(key, line, known, prefix, origin, warnings);
    }
}

/// The warning (or debug line) for one key that the schema does not read.
fn warn_key(
    key: &str,
    line: Option<usize>,
    (honoured, codex_only): (&[&'static str], &[&'static str]),
    prefix: &str,
    origin: &str,
    warnings: &mut Vec<String>,
) {
    let at = line.map(|l| format!(":{l}")).unwrap_or_default();
    match classify(key, honoured, codex_only) {
        KeyKind::Honoured => {}
        KeyKind::CodexOnly => tracing::debug!(
            "{origin}{at}: `{prefix}{key}` is a Codex setting Open Interpreter does not use; ignored"
        ),
        KeyKind::Unknown { suggestion } => {
            let hint = match suggestion {
                Some(s) => format!("did you mean `{prefix}{s}`?"),
                None => "check the spelling".to_string(),
            };
            warnings.push(format!(
                "{origin}{at}: unknown key `{prefix}{key}` is ignored ({hint} See docs/configuration.md)"
            ));
        }
    }
}

/// Honoured and Codex-only keys of one table.
type KnownKeys = (&'static [&'static str], &'static [&'static str]);

/// The known keys of the table `path` lies in (top level, `[sandbox_workspace_write]`,
/// `[history]`) and `path`'s key within it; `None` inside tables checked elsewhere.
fn known_keys_for(path: &str) -> Option<(&str, &str, KnownKeys)> {
    match path.split_once('.') {
        None => Some(("", path, (TOP_LEVEL_KEYS, CODEX_ONLY_TOP_LEVEL_KEYS))),
        Some(("sandbox_workspace_write", key)) => {
            Some(("sandbox_workspace_write.", key, (SANDBOX_WW_KEYS, &[])))
        }
        Some(("history", key)) => Some(("history.", key, (HISTORY_KEYS, &[]))),
        Some(("thread_store", key)) => Some(("thread_store.", key, (THREAD_STORE_KEYS, &[]))),
        Some(_) => None,
    }
}

/// Warn about the keys of one config file that nothing reads, with their `file:line`.
fn warn_unknown_in_file(table: &toml::Table, text: &str, origin: &str, warnings: &mut Vec<String>) {
    let Some(mut unknown) = crate::schema::unknown_keys(text) else {
        // A value of the wrong type stops the schema; the error about it comes later, and
        // the top-level keys are still checked here.
        warn_unknown(
            table,
            (TOP_LEVEL_KEYS, CODEX_ONLY_TOP_LEVEL_KEYS),
            "",
            origin,
            Some(text),
            warnings,
        );
        return;
    };
    unknown.sort();
    for (path, line) in unknown {
        if let Some((prefix, key, known)) = known_keys_for(&path) {
            warn_key(key, line, known, prefix, origin, warnings);
        }
    }
}

/// Prefix a `mcp_servers.<name>: unknown key `k`` warning with `file:line` where that key is
/// written (the first config file, project then user, that has it).
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
    for file in files {
        let Ok(text) = std::fs::read_to_string(file) else {
            continue;
        };
        // The server name may itself contain dots (`[mcp_servers."a.b"]`): take the longest
        // name the file defines that the path starts with.
        let Some(server) = crate::schema::mcp_server_names(&text)
            .into_iter()
            .filter(|n| path == n || path.starts_with(&format!("{n}.")))
            .max_by_key(String::len)
        else {
            continue;
        };
        let mut parts = vec!["mcp_servers", server.as_str()];
        if let Some(sub) = path.get(server.len() + 1..) {
            parts.extend(sub.split('.'));
        }
        parts.push(key);
        if let Some(line) = crate::schema::line_of_key(&text, &parts) {
            return format!("{}:{line}: {warning}", file.display());
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
        "thread_store" => THREAD_STORE_KEYS,
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
        warn_unknown_in_file(&t, &text, &origin, &mut warnings);
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
        warn_unknown_in_file(&t, &text, &origin, &mut warnings);
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
    let ov = &opts.overrides;
    let t = read_schema(effective, warnings)?;

    let providers = model_providers(t.model_providers.as_ref())?;
    let provider_id = ov
        .model_provider
        .clone()
        .or(t.model_provider)
        .unwrap_or_else(|| DEFAULT_PROVIDER_ID.to_string());
    let model_provider = providers.get(&provider_id).cloned().ok_or_else(|| {
        invalid(
            "model_provider",
            format!(
                "unknown provider `{provider_id}`; use one of {} or define [model_providers.{provider_id}] with name and base_url",
                providers.keys().cloned().collect::<Vec<_>>().join(", ")
            ),
        )
    })?;
    let model = choose_model(ov.model.clone().or(t.model), &provider_id, &user_path)?;

    let approval_policy = match ov.approval_policy {
        Some(a) => a,
        None => {
            parse_enum::<AskForApproval>("approval_policy", t.approval_policy)?.unwrap_or_default()
        }
    };
    let sandbox_mode = match ov.sandbox_mode {
        Some(s) => s,
        None => parse_enum::<SandboxMode>("sandbox_mode", t.sandbox_mode)?.unwrap_or_default(),
    };
    let ww = t.sandbox_workspace_write.unwrap_or_default();
    let allow_git_writes = ww.allow_git_writes;
    let sandbox_policy = sandbox_policy(sandbox_mode, ww, &cwd);

    let model_reasoning_effort = t
        .model_reasoning_effort
        .map(|s| parse_effort(&s).map_err(|m| invalid("model_reasoning_effort", m)))
        .transpose()?;
    let mcp_servers = mcp_servers(
        t.mcp_servers.as_ref(),
        project_path.as_deref(),
        &user_path,
        warnings,
    )?;
    let shell_environment_policy = crate::shell_env::parse_policy(effective, ORIGIN, warnings)?;
    let count = |v: Option<NonNegative>| v.map(|n| n.0);

    Ok(Config {
        home,
        cwd,
        model,
        model_provider_id: provider_id,
        model_provider,
        model_providers: providers,
        model_reasoning_effort,
        model_context_window: count(t.model_context_window).map(saturating_i64),
        model_auto_compact_token_limit: count(t.model_auto_compact_token_limit).map(saturating_i64),
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
        approval_timeout: Duration::from_secs(count(t.approval_timeout_sec).unwrap_or(600).max(1)),
        max_turn_steps: as_usize(count(t.max_turn_steps).unwrap_or(100).max(1)),
        tool_output_max_bytes: as_usize(
            count(t.tool_output_max_bytes)
                .unwrap_or(32 * 1024)
                .max(1024),
        ),
        shell_timeout: Duration::from_millis(count(t.shell_timeout_ms).unwrap_or(300_000).max(1)),
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
        project_doc_max_bytes: count(t.project_doc_max_bytes)
            .map(as_usize)
            .unwrap_or(DEFAULT_PROJECT_DOC_MAX_BYTES),
        notify: match t.notify {
            None => None,
            Some(argv) if argv.is_empty() => return Err(notify_error()),
            Some(argv) => Some(argv),
        },
        history_persistence: history_persistence(t.history.unwrap_or_default())?,
        profile: profile_name,
        user_config_path: user_path,
        project_config_path: project_path,
        untrusted_project_config: None,
        shell_environment_policy,
        layers: Vec::new(),
    })
}

/// Where the threads of `home` are kept: `OI_THREAD_STORE_URL`, else `[thread_store] url` of
/// the user config (`home/config.toml`); `None` (or blank) means local files under `home`.
///
/// Only the user config counts: a project's `.openinterpreter/config.toml` cannot send the
/// user's threads to another database, and every front end of one home agrees on the store.
pub fn thread_store_url(home: &Path) -> Result<Option<String>, ConfigError> {
    if let Ok(url) = std::env::var("OI_THREAD_STORE_URL") {
        return Ok(Some(url).filter(|u| !u.trim().is_empty()));
    }
    let path = home.join("config.toml");
    let Some((table, _)) = read_layer(&path)? else {
        return Ok(None);
    };
    let origin = path.display().to_string();
    let bad = |message: &str| ConfigError::Invalid {
        origin: origin.clone(),
        key: "thread_store".into(),
        message: message.into(),
    };
    match table.get("thread_store") {
        None => Ok(None),
        Some(toml::Value::Table(t)) => match t.get("url") {
            None => Ok(None),
            Some(toml::Value::String(u)) => Ok(Some(u.clone()).filter(|u| !u.trim().is_empty())),
            Some(_) => Err(bad(
                "`url` must be a string: [thread_store] url = \"postgresql://USER@HOST:PORT/DB\"",
            )),
        },
        Some(_) => Err(bad(
            "expected a table: [thread_store] url = \"postgresql://USER@HOST:PORT/DB\"",
        )),
    }
}

/// Deserialize the merged table into [`ConfigToml`]. A value of the wrong type is an error
/// naming its key; keys of the small tables that nothing reads and that no file was warned
/// about (a profile's `[sandbox_workspace_write]`...) are warnings here.
fn read_schema(
    effective: &toml::Table,
    warnings: &mut Vec<String>,
) -> Result<ConfigToml, ConfigError> {
    let mut ignored = Vec::new();
    let t: ConfigToml = serde_ignored::deserialize(toml::Value::Table(effective.clone()), |p| {
        ignored.push(crate::schema::dotted(&p))
    })
    .map_err(|e: toml::de::Error| {
        let (key, message) = crate::schema::split_error(&e);
        invalid(&key, type_hint(&key).map(str::to_string).unwrap_or(message))
    })?;
    for path in ignored {
        let already = warnings
            .iter()
            .any(|w| w.contains(&format!("unknown key `{path}`")));
        if let Some((prefix, key, known)) = known_keys_for(&path)
            && !prefix.is_empty()
            && !already
        {
            warn_key(key, None, known, prefix, ORIGIN, warnings);
        }
    }
    Ok(t)
}

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
        "thread_store" => {
            "expected a table: [thread_store] url = \"postgresql://USER@HOST:PORT/DB\""
        }
        _ => return None,
    })
}

/// Built-in providers, adjusted or extended by `[model_providers.<id>]` tables.
fn model_providers(
    configured: Option<&toml::Value>,
) -> Result<BTreeMap<String, ModelProviderInfo>, ConfigError> {
    let mut providers = builtin_providers();
    let Some(v) = configured else {
        return Ok(providers);
    };
    let table = v.as_table().ok_or_else(|| {
        invalid(
            "model_providers",
            "expected a table of [model_providers.<id>] entries",
        )
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
        let p: ModelProviderInfo = merged.try_into().map_err(|e: toml::de::Error| {
            invalid(
                &format!("model_providers.{id}"),
                format!(
                    "{}; a provider needs at least `name` and `base_url` (optional: env_key, wire_api = \"chat\" | \"responses\", query_params, http_headers, env_http_headers, request_max_retries, stream_max_retries, stream_idle_timeout_ms, send_reasoning_content)",
                    e.message()
                ),
            )
        })?;
        if p.base_url.as_deref().is_none_or(|u| u.trim().is_empty()) {
            return Err(invalid(
                &format!("model_providers.{id}.base_url"),
                "missing; set it to the API root, e.g. \"http://localhost:11434/v1\"",
            ));
        }
        providers.insert(id.clone(), p);
    }
    Ok(providers)
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
        _ => Err(invalid(
            "model",
            format!(
                "no model is set for provider `{provider_id}`; add `model = \"<name>\"` to {} or pass -m <name>",
                user_path.display()
            ),
        )),
    }
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
    let mut mcp_warnings = Vec::new();
    let servers = parse_mcp_servers(v, &mut mcp_warnings).map_err(|m| invalid("mcp_servers", m))?;
    let files: Vec<&Path> = project_path.into_iter().chain([user_path]).collect();
    for w in mcp_warnings {
        warnings.push(locate_mcp_warning(&w, &files));
    }
    Ok(servers)
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

fn saturating_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

fn as_usize(v: u64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

fn notify_error() -> ConfigError {
    invalid("notify", type_hint("notify").unwrap_or_default())
}

#[cfg(test)]
#[path = "load_tests.rs"]
mod tests;
