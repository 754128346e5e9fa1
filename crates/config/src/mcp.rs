//! `[mcp_servers.<name>]` configuration: the typed [`McpServerConfig`] and its validation.
//!
//! [`parse_mcp_servers`] takes the already-layered `mcp_servers` table (project over user) and
//! returns typed configs, or one error string naming the server and field
//! (`mcp_servers.docs: url is not supported for stdio`). Unknown keys become warnings.
//!
//! Values are kept as written: `${VAR}` references and `env:VAR` values are resolved only when a
//! server is launched ([`expand_env_refs`], [`resolve_env_value`]), so a missing variable fails
//! that one server instead of the whole config, and `interpreter mcp get` shows what the user wrote.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

/// Startup timeout when `startup_timeout_sec` is not set.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(30);
/// Per-call timeout when `tool_timeout_sec` is not set.
pub const DEFAULT_TOOL_TIMEOUT: Duration = Duration::from_secs(120);

/// How calls to an MCP tool are approved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum McpApprovalMode {
    /// The active approval policy decides, using the tool's annotations.
    #[default]
    Auto,
    /// Always ask before the tool runs.
    Prompt,
    /// Never ask.
    Approve,
    /// Ask unless the tool is annotated read-only.
    Writes,
}

impl McpApprovalMode {
    pub fn as_str(&self) -> &'static str {
        match self {
            McpApprovalMode::Auto => "auto",
            McpApprovalMode::Prompt => "prompt",
            McpApprovalMode::Approve => "approve",
            McpApprovalMode::Writes => "writes",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "auto" => Some(Self::Auto),
            "prompt" => Some(Self::Prompt),
            "approve" => Some(Self::Approve),
            "writes" => Some(Self::Writes),
            _ => None,
        }
    }
}

impl std::fmt::Display for McpApprovalMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where an `env_vars` entry is read from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum McpEnvVarSource {
    /// This machine's environment.
    Local,
    /// A remote execution environment (accepted for Codex compatibility; such a server
    /// fails to start because we only run MCP servers locally).
    Remote,
}

impl McpEnvVarSource {
    pub fn as_str(&self) -> &'static str {
        match self {
            McpEnvVarSource::Local => "local",
            McpEnvVarSource::Remote => "remote",
        }
    }
}

/// One `env_vars` entry: `"NAME"` or `{ name = "NAME", source = "local" | "remote" }`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct McpEnvVar {
    pub name: String,
    /// `None` when written as a bare string.
    pub source: Option<McpEnvVarSource>,
}

/// How to reach the server.
#[derive(Clone, Debug, PartialEq)]
pub enum McpServerTransportConfig {
    /// A child process speaking newline-delimited JSON-RPC on stdin/stdout.
    Stdio {
        command: String,
        args: Vec<String>,
        /// Extra variables; a value `env:HOST_VAR` reads the host variable.
        env: BTreeMap<String, String>,
        /// Host variables passed through by name.
        env_vars: Vec<McpEnvVar>,
        /// Working directory; the session cwd when unset.
        cwd: Option<PathBuf>,
    },
    /// MCP streamable HTTP.
    StreamableHttp {
        url: String,
        /// Environment variable whose value is sent as `Authorization: Bearer <value>`.
        bearer_token_env_var: Option<String>,
        /// Static headers.
        http_headers: BTreeMap<String, String>,
        /// Header name → environment variable holding its value.
        env_http_headers: BTreeMap<String, String>,
        /// RFC 8707 `resource` for OAuth.
        oauth_resource: Option<String>,
        /// OAuth scopes to request.
        scopes: Option<Vec<String>>,
        /// `[mcp_servers.<n>.oauth] client_id`: a pre-registered OAuth client.
        oauth_client_id: Option<String>,
    },
}

impl McpServerTransportConfig {
    /// `"stdio"` or `"streamable_http"`.
    pub fn kind(&self) -> &'static str {
        match self {
            McpServerTransportConfig::Stdio { .. } => "stdio",
            McpServerTransportConfig::StreamableHttp { .. } => "streamable_http",
        }
    }
}

/// Per-tool settings: `[mcp_servers.<n>.tools.<tool>]`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct McpToolConfig {
    pub approval_mode: Option<McpApprovalMode>,
}

/// One configured MCP server.
#[derive(Clone, Debug, PartialEq)]
pub struct McpServerConfig {
    pub transport: McpServerTransportConfig,
    /// `false`: the server is not started (default `true`).
    pub enabled: bool,
    /// `true`: a server that fails to start fails the session start.
    pub required: bool,
    /// Covers spawn, `initialize` and the first `tools/list`. `None` = [`DEFAULT_STARTUP_TIMEOUT`].
    pub startup_timeout: Option<Duration>,
    /// Per `tools/call`. `None` = [`DEFAULT_TOOL_TIMEOUT`].
    pub tool_timeout: Option<Duration>,
    /// Allow-list of raw tool names (applied first).
    pub enabled_tools: Option<Vec<String>>,
    /// Deny-list of raw tool names (applied after the allow-list).
    pub disabled_tools: Option<Vec<String>>,
    pub default_tools_approval_mode: Option<McpApprovalMode>,
    /// Per-tool overrides keyed by raw tool name.
    pub tools: BTreeMap<String, McpToolConfig>,
    /// Whether the model may call this server's tools concurrently.
    pub supports_parallel_tool_calls: bool,
    /// `roots = ["..."]`: directories offered to the server as MCP roots, as written (`"."` is
    /// the session's working directory; other relative paths are resolved against it, `~/`
    /// against the home directory). `None`: the `roots` capability is not offered at all, so
    /// servers such as server-filesystem keep serving the directories in their arguments.
    pub roots: Option<Vec<String>>,
}

impl McpServerConfig {
    /// A stdio server with every other field at its default.
    pub fn stdio(command: impl Into<String>, args: Vec<String>) -> Self {
        Self::with_transport(McpServerTransportConfig::Stdio {
            command: command.into(),
            args,
            env: BTreeMap::new(),
            env_vars: Vec::new(),
            cwd: None,
        })
    }

    /// A streamable HTTP server with every other field at its default.
    pub fn http(url: impl Into<String>) -> Self {
        Self::with_transport(McpServerTransportConfig::StreamableHttp {
            url: url.into(),
            bearer_token_env_var: None,
            http_headers: BTreeMap::new(),
            env_http_headers: BTreeMap::new(),
            oauth_resource: None,
            scopes: None,
            oauth_client_id: None,
        })
    }

    pub fn with_transport(transport: McpServerTransportConfig) -> Self {
        Self {
            transport,
            enabled: true,
            required: false,
            startup_timeout: None,
            tool_timeout: None,
            enabled_tools: None,
            disabled_tools: None,
            default_tools_approval_mode: None,
            tools: BTreeMap::new(),
            supports_parallel_tool_calls: false,
            roots: None,
        }
    }

    /// The configured roots as absolute paths (see [`McpServerConfig::roots`]).
    pub fn resolved_roots(&self, session_cwd: &std::path::Path) -> Vec<PathBuf> {
        let Some(roots) = &self.roots else {
            return Vec::new();
        };
        roots
            .iter()
            .map(|r| {
                if r == "." {
                    return session_cwd.to_path_buf();
                }
                if let Some(rest) = r.strip_prefix("~/")
                    && let Some(home) = dirs::home_dir()
                {
                    return home.join(rest);
                }
                let p = PathBuf::from(r);
                if p.is_absolute() {
                    p
                } else {
                    session_cwd.join(p)
                }
            })
            .collect()
    }

    pub fn startup_timeout_or_default(&self) -> Duration {
        self.startup_timeout.unwrap_or(DEFAULT_STARTUP_TIMEOUT)
    }

    pub fn tool_timeout_or_default(&self) -> Duration {
        self.tool_timeout.unwrap_or(DEFAULT_TOOL_TIMEOUT)
    }

    /// Allow-list first, then deny-list, on the raw tool name.
    pub fn is_tool_enabled(&self, tool: &str) -> bool {
        let allowed = self
            .enabled_tools
            .as_ref()
            .is_none_or(|list| list.iter().any(|t| t == tool));
        let denied = self
            .disabled_tools
            .as_ref()
            .is_some_and(|list| list.iter().any(|t| t == tool));
        allowed && !denied
    }

    /// Per-tool override, else the server default, else `auto`.
    pub fn approval_mode_for(&self, tool: &str) -> McpApprovalMode {
        self.tools
            .get(tool)
            .and_then(|t| t.approval_mode)
            .or(self.default_tools_approval_mode)
            .unwrap_or_default()
    }
}

/// Is `name` a valid server name? Printable ASCII without spaces or slashes: besides the usual
/// `[a-zA-Z0-9_-]`, a quoted TOML key such as `[mcp_servers."a.b"]` is accepted (as Codex
/// does); tool names sanitize it (`mcp__a_b__tool`).
pub fn is_valid_server_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_graphic() && c != '/' && c != '\\')
}

const STDIO_ONLY: &[&str] = &["command", "args", "env", "env_vars", "cwd"];
const HTTP_ONLY: &[&str] = &[
    "url",
    "bearer_token_env_var",
    "http_headers",
    "env_http_headers",
    "oauth_resource",
    "scopes",
    "oauth",
];
const SHARED: &[&str] = &[
    "enabled",
    "required",
    "startup_timeout_sec",
    "startup_timeout_ms",
    "tool_timeout_sec",
    "enabled_tools",
    "disabled_tools",
    "default_tools_approval_mode",
    "tools",
    "supports_parallel_tool_calls",
    "roots",
    // Legacy / Codex-only keys accepted without effect.
    "name",
    "experimental_environment",
];

/// Parse and validate the (layered) `mcp_servers` table.
///
/// Errors name the server and the field, e.g. `mcp_servers.docs: url is not supported for stdio`.
/// Unknown keys are pushed to `warnings` (with a suggestion when one is close).
pub fn parse_mcp_servers(
    value: &toml::Value,
    warnings: &mut Vec<String>,
) -> Result<BTreeMap<String, McpServerConfig>, String> {
    let table = value.as_table().ok_or_else(|| {
        format!(
            "mcp_servers: expected a table of servers like `[mcp_servers.docs]`, got {}",
            type_name(value)
        )
    })?;
    let mut out = BTreeMap::new();
    for (name, entry) in table {
        let server = parse_server(name, entry, warnings)?;
        out.insert(name.clone(), server);
    }
    Ok(out)
}

/// Parse one `[mcp_servers.<name>]` table.
pub fn parse_server(
    name: &str,
    entry: &toml::Value,
    warnings: &mut Vec<String>,
) -> Result<McpServerConfig, String> {
    let p = format!("mcp_servers.{name}");
    if !is_valid_server_name(name) {
        return Err(format!(
            "{p}: invalid server name '{name}': use printable ASCII without spaces or slashes, e.g. letters, numbers, '-', '_' and '.' (the name becomes part of tool names like mcp__<server>__<tool>)"
        ));
    }
    let t = entry.as_table().ok_or_else(|| {
        format!(
            "{p}: expected a table (`[mcp_servers.{name}]` with `command = ...` or `url = ...`), got {}",
            type_name(entry)
        )
    })?;
    if t.contains_key("bearer_token") {
        return Err(format!(
            "{p} uses unsupported `bearer_token`; set `bearer_token_env_var` to the name of an environment variable holding the token instead (secrets never go in config.toml)"
        ));
    }

    let transport = parse_transport(&p, name, t, warnings)?;
    warn_unknown_server_keys(&p, t, warnings);
    let startup_timeout = startup_timeout(&p, t)?;
    let tool_timeout = t
        .get("tool_timeout_sec")
        .map(|v| seconds(&p, "tool_timeout_sec", v))
        .transpose()?;
    let default_tools_approval_mode = t
        .get("default_tools_approval_mode")
        .map(|v| approval_mode(&p, "default_tools_approval_mode", v))
        .transpose()?;
    let tools = tool_configs(&p, name, t, warnings)?;
    if let Some(v) = t.get("experimental_environment")
        && v.as_str() != Some("local")
    {
        warnings.push(format!(
            "{p}.experimental_environment: only \"local\" is supported; the server runs locally"
        ));
    }
    check_transport_refs(&p, &transport)?;

    Ok(McpServerConfig {
        transport,
        enabled: opt_bool(&p, t, "enabled")?.unwrap_or(true),
        required: opt_bool(&p, t, "required")?.unwrap_or(false),
        startup_timeout,
        tool_timeout,
        enabled_tools: opt_str_array(&p, t, "enabled_tools")?,
        disabled_tools: opt_str_array(&p, t, "disabled_tools")?,
        default_tools_approval_mode,
        tools,
        supports_parallel_tool_calls: opt_bool(&p, t, "supports_parallel_tool_calls")?
            .unwrap_or(false),
        roots: opt_str_array(&p, t, "roots")?,
    })
}

/// `command` makes a stdio server, `url` a streamable HTTP one; keys of the other transport
/// are errors.
fn parse_transport(
    p: &str,
    name: &str,
    t: &toml::Table,
    warnings: &mut Vec<String>,
) -> Result<McpServerTransportConfig, String> {
    if let Some(command) = t.get("command") {
        reject_keys_of_other_transport(p, t, HTTP_ONLY, "stdio")?;
        stdio_transport(p, command, t)
    } else if let Some(url) = t.get("url") {
        reject_keys_of_other_transport(p, t, STDIO_ONLY, "streamable_http")?;
        http_transport(p, name, url, t, warnings)
    } else {
        Err(format!(
            "{p}: invalid transport: set `command` (a stdio server, e.g. `command = \"npx\"`) or `url` (a streamable HTTP server)"
        ))
    }
}

fn reject_keys_of_other_transport(
    p: &str,
    t: &toml::Table,
    other: &[&str],
    kind: &str,
) -> Result<(), String> {
    match other.iter().find(|key| t.contains_key(**key)) {
        Some(key) => Err(format!("{p}: {key} is not supported for {kind}")),
        None => Ok(()),
    }
}

fn stdio_transport(
    p: &str,
    command: &toml::Value,
    t: &toml::Table,
) -> Result<McpServerTransportConfig, String> {
    let command = str_field(p, "command", command)?;
    if command.trim().is_empty() {
        return Err(format!(
            "{p}.command: must not be empty; set it to the program that runs the server"
        ));
    }
    Ok(McpServerTransportConfig::Stdio {
        command,
        args: opt_str_array(p, t, "args")?.unwrap_or_default(),
        env: opt_str_map(p, t, "env")?.unwrap_or_default(),
        env_vars: parse_env_vars(p, t)?,
        cwd: opt_str(p, t, "cwd")?.map(PathBuf::from),
    })
}

fn http_transport(
    p: &str,
    name: &str,
    url: &toml::Value,
    t: &toml::Table,
    warnings: &mut Vec<String>,
) -> Result<McpServerTransportConfig, String> {
    let url = str_field(p, "url", url)?;
    if !(url.starts_with("http://") || url.starts_with("https://") || url.contains("${")) {
        return Err(format!(
            "{p}.url: `{url}` is not an http(s) URL; use e.g. `https://mcp.example.com/mcp`"
        ));
    }
    let oauth_client_id = match t.get("oauth") {
        None => None,
        Some(v) => {
            let ot = v.as_table().ok_or_else(|| {
                format!(
                    "{p}.oauth: expected a table like `[mcp_servers.{name}.oauth] client_id = \"...\"`, got {}",
                    type_name(v)
                )
            })?;
            for k in ot.keys().filter(|k| *k != "client_id") {
                warnings.push(format!(
                    "{p}.oauth: unknown key `{k}` (ignored; the only key is `client_id`)"
                ));
            }
            opt_str(&format!("{p}.oauth"), ot, "client_id")?
        }
    };
    Ok(McpServerTransportConfig::StreamableHttp {
        url,
        bearer_token_env_var: opt_str(p, t, "bearer_token_env_var")?,
        http_headers: opt_str_map(p, t, "http_headers")?.unwrap_or_default(),
        env_http_headers: opt_str_map(p, t, "env_http_headers")?.unwrap_or_default(),
        oauth_resource: opt_str(p, t, "oauth_resource")?,
        scopes: opt_str_array(p, t, "scopes")?,
        oauth_client_id,
    })
}

fn warn_unknown_server_keys(p: &str, t: &toml::Table, warnings: &mut Vec<String>) {
    for key in t.keys() {
        let k = key.as_str();
        if STDIO_ONLY.contains(&k) || HTTP_ONLY.contains(&k) || SHARED.contains(&k) {
            continue;
        }
        let mut msg = format!("{p}: unknown key `{k}` (ignored)");
        if let Some(s) = suggest(k) {
            msg.push_str(&format!("; did you mean `{s}`?"));
        }
        warnings.push(msg);
    }
}

/// `startup_timeout_sec`, else the legacy `startup_timeout_ms`.
fn startup_timeout(p: &str, t: &toml::Table) -> Result<Option<Duration>, String> {
    match (t.get("startup_timeout_sec"), t.get("startup_timeout_ms")) {
        (Some(v), _) => Ok(Some(seconds(p, "startup_timeout_sec", v)?)),
        (None, Some(v)) => {
            let ms = v.as_integer().filter(|ms| *ms > 0).ok_or_else(|| {
                format!(
                    "{p}.startup_timeout_ms: expected a positive integer of milliseconds, got {}; prefer `startup_timeout_sec`",
                    show(v)
                )
            })?;
            Ok(Some(Duration::from_millis(ms.unsigned_abs())))
        }
        (None, None) => Ok(None),
    }
}

/// `[mcp_servers.<name>.tools.<tool>]` tables.
fn tool_configs(
    p: &str,
    name: &str,
    t: &toml::Table,
    warnings: &mut Vec<String>,
) -> Result<BTreeMap<String, McpToolConfig>, String> {
    let mut tools = BTreeMap::new();
    let Some(v) = t.get("tools") else {
        return Ok(tools);
    };
    let tt = v.as_table().ok_or_else(|| {
        format!(
            "{p}.tools: expected a table like `[mcp_servers.{name}.tools.<tool>] approval_mode = \"prompt\"`, got {}",
            type_name(v)
        )
    })?;
    for (tool, tv) in tt {
        let tp = format!("{p}.tools.{tool}");
        let tool_table = tv.as_table().ok_or_else(|| {
            format!(
                "{tp}: expected a table with `approval_mode`, got {}",
                type_name(tv)
            )
        })?;
        let mut cfg = McpToolConfig::default();
        for (k, kv) in tool_table {
            if k == "approval_mode" {
                cfg.approval_mode = Some(approval_mode(&tp, "approval_mode", kv)?);
            } else {
                warnings.push(format!(
                    "{tp}: unknown key `{k}` (ignored; the only key is `approval_mode`)"
                ));
            }
        }
        tools.insert(tool.clone(), cfg);
    }
    Ok(tools)
}

/// Reject malformed `${...}` references now, so the user hears about them at load time.
fn check_transport_refs(p: &str, transport: &McpServerTransportConfig) -> Result<(), String> {
    let check = |field: String, v: &str| check_env_refs(v).map_err(|e| format!("{p}.{field}: {e}"));
    match transport {
        McpServerTransportConfig::Stdio {
            command, args, env, ..
        } => {
            check("command".into(), command)?;
            for (i, a) in args.iter().enumerate() {
                check(format!("args[{i}]"), a)?;
            }
            for (k, v) in env {
                if !v.starts_with("env:") {
                    check(format!("env.{k}"), v)?;
                }
            }
        }
        McpServerTransportConfig::StreamableHttp {
            url, http_headers, ..
        } => {
            check("url".into(), url)?;
            for (k, v) in http_headers {
                check(format!("http_headers.{k}"), v)?;
            }
        }
    }
    Ok(())
}

fn parse_env_vars(p: &str, t: &toml::Table) -> Result<Vec<McpEnvVar>, String> {
    let Some(v) = t.get("env_vars") else {
        return Ok(Vec::new());
    };
    let arr = v.as_array().ok_or_else(|| {
        format!(
            "{p}.env_vars: expected an array of variable names like [\"PATH\", \"HOME\"], got {}",
            type_name(v)
        )
    })?;
    let mut out = Vec::new();
    for (i, item) in arr.iter().enumerate() {
        let ip = format!("{p}.env_vars[{i}]");
        let var = match item {
            toml::Value::String(name) => McpEnvVar {
                name: name.clone(),
                source: None,
            },
            toml::Value::Table(it) => {
                let name = opt_str(&ip, it, "name")?.ok_or_else(|| {
                    format!("{ip}: missing `name` (write {{ name = \"VAR\", source = \"local\" }})")
                })?;
                let source = match opt_str(&ip, it, "source")?.as_deref() {
                    None => None,
                    Some("local") => Some(McpEnvVarSource::Local),
                    Some("remote") => Some(McpEnvVarSource::Remote),
                    Some(other) => {
                        return Err(format!(
                            "{ip}: unsupported env_vars source `{other}`; expected `local` or `remote`"
                        ));
                    }
                };
                for k in it.keys() {
                    if k != "name" && k != "source" {
                        return Err(format!(
                            "{ip}: unknown key `{k}`; an entry has only `name` and `source`"
                        ));
                    }
                }
                McpEnvVar { name, source }
            }
            other => {
                return Err(format!(
                    "{ip}: expected a variable name or {{ name, source }}, got {}",
                    type_name(other)
                ));
            }
        };
        if !is_env_name(&var.name) {
            return Err(format!(
                "{ip}: `{}` is not a valid environment variable name",
                var.name
            ));
        }
        out.push(var);
    }
    Ok(out)
}

fn is_env_name(s: &str) -> bool {
    !s.is_empty() && !s.contains('=') && !s.contains('\0')
}

fn approval_mode(p: &str, key: &str, v: &toml::Value) -> Result<McpApprovalMode, String> {
    v.as_str()
        .and_then(McpApprovalMode::parse)
        .ok_or_else(|| {
            format!(
                "{p}.{key}: unknown approval mode {}; expected one of \"auto\", \"prompt\", \"approve\", \"writes\"",
                show(v)
            )
        })
}

fn seconds(p: &str, key: &str, v: &toml::Value) -> Result<Duration, String> {
    let secs = match v {
        toml::Value::Integer(i) => *i as f64,
        toml::Value::Float(f) => *f,
        _ => f64::NAN,
    };
    if !secs.is_finite() || secs <= 0.0 || secs > 86_400.0 * 365.0 {
        return Err(format!(
            "{p}.{key}: expected a positive number of seconds (e.g. `{key} = 30`), got {}",
            show(v)
        ));
    }
    Ok(Duration::from_secs_f64(secs))
}

fn str_field(p: &str, key: &str, v: &toml::Value) -> Result<String, String> {
    v.as_str()
        .map(str::to_string)
        .ok_or_else(|| format!("{p}.{key}: expected a string, got {}", type_name(v)))
}

fn opt_str(p: &str, t: &toml::Table, key: &str) -> Result<Option<String>, String> {
    t.get(key).map(|v| str_field(p, key, v)).transpose()
}

fn opt_bool(p: &str, t: &toml::Table, key: &str) -> Result<Option<bool>, String> {
    t.get(key)
        .map(|v| {
            v.as_bool()
                .ok_or_else(|| format!("{p}.{key}: expected true or false, got {}", show(v)))
        })
        .transpose()
}

fn opt_str_array(p: &str, t: &toml::Table, key: &str) -> Result<Option<Vec<String>>, String> {
    let Some(v) = t.get(key) else {
        return Ok(None);
    };
    let arr = v.as_array().ok_or_else(|| {
        format!(
            "{p}.{key}: expected an array of strings, got {}",
            type_name(v)
        )
    })?;
    arr.iter()
        .enumerate()
        .map(|(i, item)| {
            item.as_str().map(str::to_string).ok_or_else(|| {
                format!("{p}.{key}[{i}]: expected a string, got {}", type_name(item))
            })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

fn opt_str_map(
    p: &str,
    t: &toml::Table,
    key: &str,
) -> Result<Option<BTreeMap<String, String>>, String> {
    let Some(v) = t.get(key) else {
        return Ok(None);
    };
    let map = v.as_table().ok_or_else(|| {
        format!(
            "{p}.{key}: expected a table of strings like {{ NAME = \"value\" }}, got {}",
            type_name(v)
        )
    })?;
    let mut out = BTreeMap::new();
    for (k, item) in map {
        let s = item
            .as_str()
            .ok_or_else(|| format!("{p}.{key}.{k}: expected a string, got {}", type_name(item)))?;
        out.insert(k.clone(), s.to_string());
    }
    Ok(Some(out))
}

fn type_name(v: &toml::Value) -> &'static str {
    match v {
        toml::Value::String(_) => "a string",
        toml::Value::Integer(_) => "an integer",
        toml::Value::Float(_) => "a float",
        toml::Value::Boolean(_) => "a boolean",
        toml::Value::Datetime(_) => "a datetime",
        toml::Value::Array(_) => "an array",
        toml::Value::Table(_) => "a table",
    }
}

fn show(v: &toml::Value) -> String {
    match v {
        toml::Value::String(s) => format!("\"{s}\""),
        toml::Value::Array(_) | toml::Value::Table(_) => type_name(v).to_string(),
        other => other.to_string(),
    }
}

/// The closest known key within edit distance 2, for "did you mean" hints.
fn suggest(key: &str) -> Option<&'static str> {
    STDIO_ONLY
        .iter()
        .chain(HTTP_ONLY)
        .chain(SHARED)
        .map(|k| (strsim::levenshtein(key, k), *k))
        .filter(|(d, _)| *d <= 2)
        .min_by_key(|(d, _)| *d)
        .map(|(_, k)| k)
}

/// Expand `${VAR}` and `${VAR:-default}` in `s` using `lookup`. `$` not followed by `{` is kept.
///
/// A variable that is unset (or empty, for the `:-` form) and has no default is an error naming it.
pub fn expand_env_refs(s: &str, lookup: &dyn Fn(&str) -> Option<String>) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(pos) = rest.find("${") {
        out.push_str(&rest[..pos]);
        let after = &rest[pos + 2..];
        let end = after.find('}').ok_or_else(|| {
            format!("unterminated `${{` in `{s}`; write `${{VAR}}` or `${{VAR:-default}}`")
        })?;
        let inner = &after[..end];
        let (name, default) = match inner.split_once(":-") {
            Some((n, d)) => (n, Some(d)),
            None => (inner, None),
        };
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
            return Err(format!(
                "`${{{inner}}}` in `{s}` is not a valid variable reference; write `${{VAR}}` or `${{VAR:-default}}`"
            ));
        }
        match (
            lookup(name).filter(|v| default.is_none() || !v.is_empty()),
            default,
        ) {
            (Some(v), _) => out.push_str(&v),
            (None, Some(d)) => out.push_str(d),
            (None, None) => {
                return Err(format!(
                    "environment variable `{name}` is not set (referenced as `${{{name}}}`); export it or write `${{{name}:-default}}`"
                ));
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// Check that `s` has only well-formed `${...}` references (no lookup).
pub fn check_env_refs(s: &str) -> Result<(), String> {
    expand_env_refs(s, &|_| Some(String::new())).map(|_| ())
}

/// Resolve one `env` value: `env:HOST_VAR` reads the host variable (an error if unset),
/// anything else gets `${VAR}` expansion.
pub fn resolve_env_value(
    value: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<String, String> {
    if let Some(var) = value.strip_prefix("env:") {
        return lookup(var).ok_or_else(|| {
            format!("environment variable `{var}` is not set (the value is `env:{var}`); export it before starting")
        });
    }
    expand_env_refs(value, lookup)
}

#[cfg(test)]
#[path = "mcp_tests.rs"]
mod tests;
