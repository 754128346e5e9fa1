//! From the layered `mcp_servers` table to typed [`McpServerConfig`]s.
//!
//! Each server table is read by serde into [`McpServerToml`], with `serde_path_to_error`
//! tracking where a bad value sits (`mcp_servers.fx.args[1]`) and `serde_ignored` collecting
//! the keys nothing reads. What serde cannot check — which transport a table describes, keys
//! of the other transport, empty commands, `${VAR}` syntax — is checked afterwards.

use super::env_refs::check_env_refs;
use super::schema::{McpServerToml, McpToolToml};
use super::{McpServerConfig, McpServerTransportConfig, McpToolConfig, is_valid_server_name};
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Keys that belong to stdio servers, in the order errors mention them.
const STDIO_ONLY: &[&str] = &["command", "args", "env", "env_vars", "cwd"];
/// Keys that belong to streamable HTTP servers, in the order errors mention them.
const HTTP_ONLY: &[&str] = &[
    "url",
    "bearer_token_env_var",
    "http_headers",
    "env_http_headers",
    "oauth_resource",
    "scopes",
    "oauth",
];
/// Keys of both transports.
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
    "sampling",
    "protocol_version",
    // Legacy / Codex-only keys accepted without effect.
    "name",
    "experimental_environment",
];

/// A key of a server table that has no effect (unknown, or a value we cannot honour),
/// reported as a warning.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct IgnoredKey {
    /// The server's name (the `<name>` of `[mcp_servers.<name>]`).
    pub server: String,
    /// The key's path inside the server table, ending with the key itself
    /// (`["foo"]`, `["tools", "search", "mode"]`), for finding its line in a file.
    pub path: Vec<String>,
    /// The warning, e.g. ``mcp_servers.s: unknown key `foo` (ignored)``.
    pub message: String,
}

/// A value of `[mcp_servers]` that cannot be used. Shown as `key: message`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct McpConfigError {
    /// The dotted key of the bad value: `mcp_servers.docs`, `mcp_servers.docs.args[1]`.
    pub key: String,
    /// What is wrong and how to fix it.
    pub message: String,
}

impl std::fmt::Display for McpConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.key, self.message)
    }
}

impl std::error::Error for McpConfigError {}

/// An error inside one server's table, as `(dotted key, message)`.
type Bad = (String, String);

fn bad(key: &str, message: String) -> McpConfigError {
    McpConfigError {
        key: key.to_string(),
        message,
    }
}

/// Parse and validate the (layered) `mcp_servers` table.
///
/// Errors name the server and the field, e.g. `mcp_servers.docs: url is not supported for stdio`
/// or `mcp_servers.docs.args[1]: expected a string, got an integer`. Unknown keys are pushed to
/// `warnings` (with a suggestion when one is close).
pub fn parse_mcp_servers(
    value: &toml::Value,
    warnings: &mut Vec<String>,
) -> Result<BTreeMap<String, McpServerConfig>, McpConfigError> {
    let (servers, ignored) = parse_servers(value)?;
    warnings.extend(ignored.into_iter().map(|k| k.message));
    Ok(servers)
}

/// [`parse_mcp_servers`], with each ignored key's location for the loader to find its line.
pub(crate) fn parse_servers(
    value: &toml::Value,
) -> Result<(BTreeMap<String, McpServerConfig>, Vec<IgnoredKey>), McpConfigError> {
    let table = value.as_table().ok_or_else(|| McpConfigError {
        key: "mcp_servers".into(),
        message: format!(
            "expected a table of servers like `[mcp_servers.docs]`, got {}",
            type_name(value)
        ),
    })?;
    let mut servers = BTreeMap::new();
    let mut ignored = Vec::new();
    for (name, entry) in table {
        let (server, keys) = parse_server_table(name, entry)?;
        servers.insert(name.clone(), server);
        ignored.extend(keys);
    }
    Ok((servers, ignored))
}

/// Parse one `[mcp_servers.<name>]` table (used by `interpreter mcp add` to check an entry
/// before writing it).
pub fn parse_server(
    name: &str,
    entry: &toml::Value,
    warnings: &mut Vec<String>,
) -> Result<McpServerConfig, McpConfigError> {
    let (server, ignored) = parse_server_table(name, entry)?;
    warnings.extend(ignored.into_iter().map(|k| k.message));
    Ok(server)
}

fn parse_server_table(
    name: &str,
    entry: &toml::Value,
) -> Result<(McpServerConfig, Vec<IgnoredKey>), McpConfigError> {
    let p = format!("mcp_servers.{name}");
    if !is_valid_server_name(name) {
        return Err(bad(
            &p,
            format!(
                "invalid server name '{name}': use printable ASCII without spaces or slashes, e.g. letters, numbers, '-', '_' and '.' (the name becomes part of tool names like mcp__<server>__<tool>)"
            ),
        ));
    }
    if !entry.is_table() {
        return Err(bad(
            &p,
            format!(
                "expected a table (`[mcp_servers.{name}]` with `command = ...` or `url = ...`), got {}",
                type_name(entry)
            ),
        ));
    }
    let mut unread: Vec<Vec<String>> = Vec::new();
    let mut on_ignored = |path: serde_ignored::Path| unread.push(crate::key_path::segments(&path));
    let de = serde_ignored::Deserializer::new(entry.clone(), &mut on_ignored);
    let raw: McpServerToml =
        serde_path_to_error::deserialize(de).map_err(|e| describe_error(&p, &e))?;
    let mut ignored: Vec<IgnoredKey> = unread
        .into_iter()
        .filter_map(|path| ignored_key(name, &p, path))
        .collect();
    if let Some(w) = experimental_environment_warning(name, &p, &raw) {
        ignored.push(w);
    }
    let config = into_config(&p, raw).map_err(|(key, message)| McpConfigError { key, message })?;
    Ok((config, ignored))
}

/// The typed config of a server table serde has read.
fn into_config(p: &str, raw: McpServerToml) -> Result<McpServerConfig, Bad> {
    if raw.bearer_token.is_some() {
        return Err((
            format!("{p}.bearer_token"),
            "not supported; set `bearer_token_env_var` to the name of an environment variable holding the token instead (secrets never go in config.toml)".into(),
        ));
    }
    let transport = transport(p, &raw)?;
    check_transport_refs(p, &transport)?;
    let strings = |s: Option<super::schema::Strings>| s.map(|s| s.0);
    Ok(McpServerConfig {
        transport,
        enabled: raw.enabled.unwrap_or(true),
        required: raw.required.unwrap_or(false),
        // `startup_timeout_sec` wins over the legacy `startup_timeout_ms`.
        startup_timeout: raw
            .startup_timeout_sec
            .map(|s| s.0)
            .or(raw.startup_timeout_ms.map(|ms| ms.0)),
        tool_timeout: raw.tool_timeout_sec.map(|s| s.0),
        enabled_tools: strings(raw.enabled_tools),
        disabled_tools: strings(raw.disabled_tools),
        default_tools_approval_mode: raw.default_tools_approval_mode,
        tools: tool_configs(raw.tools),
        supports_parallel_tool_calls: raw.supports_parallel_tool_calls.unwrap_or(false),
        roots: strings(raw.roots),
        sampling: raw.sampling.unwrap_or_default(),
        protocol_version: raw.protocol_version.unwrap_or_default(),
        launch_pins: None,
    })
}

/// `command` makes a stdio server, `url` a streamable HTTP one; keys of the other transport
/// are errors.
fn transport(p: &str, raw: &McpServerToml) -> Result<McpServerTransportConfig, Bad> {
    let stdio_keys = [
        raw.command.is_some(),
        raw.args.is_some(),
        raw.env.is_some(),
        raw.env_vars.is_some(),
        raw.cwd.is_some(),
    ];
    let http_keys = [
        raw.url.is_some(),
        raw.bearer_token_env_var.is_some(),
        raw.http_headers.is_some(),
        raw.env_http_headers.is_some(),
        raw.oauth_resource.is_some(),
        raw.scopes.is_some(),
        raw.oauth.is_some(),
    ];
    if let Some(command) = &raw.command {
        if let Some(key) = first_set(HTTP_ONLY, &http_keys) {
            return Err((p.into(), format!("{key} is not supported for stdio")));
        }
        stdio_transport(p, command, raw)
    } else if let Some(url) = &raw.url {
        if let Some(key) = first_set(STDIO_ONLY, &stdio_keys) {
            return Err((
                p.into(),
                format!("{key} is not supported for streamable_http"),
            ));
        }
        http_transport(p, url, raw)
    } else {
        Err((
            p.into(),
            "invalid transport: set `command` (a stdio server, e.g. `command = \"npx\"`) or `url` (a streamable HTTP server)".into(),
        ))
    }
}

/// The first of `keys` whose flag in `set` is true.
fn first_set(keys: &[&'static str], set: &[bool]) -> Option<&'static str> {
    keys.iter()
        .zip(set)
        .find(|(_, set)| **set)
        .map(|(key, _)| *key)
}

fn stdio_transport(
    p: &str,
    command: &str,
    raw: &McpServerToml,
) -> Result<McpServerTransportConfig, Bad> {
    if command.trim().is_empty() {
        return Err((
            format!("{p}.command"),
            "must not be empty; set it to the program that runs the server".into(),
        ));
    }
    Ok(McpServerTransportConfig::Stdio {
        command: command.to_string(),
        args: raw.args.as_ref().map(|a| a.0.clone()).unwrap_or_default(),
        env: raw.env.as_ref().map(|e| e.0.clone()).unwrap_or_default(),
        env_vars: raw
            .env_vars
            .as_ref()
            .map(|v| v.0.clone())
            .unwrap_or_default(),
        cwd: raw.cwd.as_ref().map(PathBuf::from),
    })
}

fn http_transport(
    p: &str,
    url: &str,
    raw: &McpServerToml,
) -> Result<McpServerTransportConfig, Bad> {
    if !(url.starts_with("http://") || url.starts_with("https://") || url.contains("${")) {
        return Err((
            format!("{p}.url"),
            format!("`{url}` is not an http(s) URL; use e.g. `https://mcp.example.com/mcp`"),
        ));
    }
    Ok(McpServerTransportConfig::StreamableHttp {
        url: url.to_string(),
        bearer_token_env_var: raw.bearer_token_env_var.clone(),
        http_headers: raw
            .http_headers
            .as_ref()
            .map(|h| h.0.clone())
            .unwrap_or_default(),
        env_http_headers: raw
            .env_http_headers
            .as_ref()
            .map(|h| h.0.clone())
            .unwrap_or_default(),
        oauth_resource: raw.oauth_resource.clone(),
        scopes: raw.scopes.as_ref().map(|s| s.0.clone()),
        oauth: oauth_config(p, raw.oauth.as_ref())?,
    })
}

/// The keys of `[mcp_servers.<name>.oauth]`, in the order messages list them.
const OAUTH_KEYS: &[&str] = &[
    "client_id",
    "issuer",
    "client_secret_env_var",
    "token_endpoint_auth_method",
    "client_metadata_url",
    "grant_type",
    "private_key_env_var",
    "idp_token_endpoint",
    "idp_client_id",
    "id_token_env_var",
];

/// `[mcp_servers.<name>.oauth]`, typed, with the combinations a grant needs checked now so
/// the user hears about a missing key at load time rather than at the first 401.
fn oauth_config(
    p: &str,
    raw: Option<&super::schema::OAuthToml>,
) -> Result<super::McpOAuthConfig, Bad> {
    use super::{McpOAuthGrant, McpTokenEndpointAuth};
    let Some(raw) = raw else {
        return Ok(Default::default());
    };
    let p = format!("{p}.oauth");
    if raw.client_secret.is_some() {
        return Err((
            format!("{p}.client_secret"),
            "not supported; set `client_secret_env_var` to the name of an environment variable holding the secret instead (secrets never go in config.toml)".into(),
        ));
    }
    let grant_type = match raw.grant_type.as_deref() {
        None => McpOAuthGrant::default(),
        Some(g) => McpOAuthGrant::parse(g).ok_or_else(|| {
            (
                format!("{p}.grant_type"),
                format!("unknown grant `{g}`; use \"authorization_code\", \"client_credentials\" or \"token_exchange\""),
            )
        })?,
    };
    let token_endpoint_auth_method = match raw.token_endpoint_auth_method.as_deref() {
        None => None,
        Some(m) => Some(McpTokenEndpointAuth::parse(m).ok_or_else(|| {
            (
                format!("{p}.token_endpoint_auth_method"),
                format!("unknown method `{m}`; use \"client_secret_basic\", \"client_secret_post\", \"private_key_jwt\" or \"none\""),
            )
        })?),
    };
    if let Some(url) = &raw.client_metadata_url {
        let https = url
            .strip_prefix("https://")
            .and_then(|rest| rest.split_once('/'))
            .is_some_and(|(host, path)| !host.is_empty() && !path.is_empty());
        if !https {
            return Err((
                format!("{p}.client_metadata_url"),
                "must be an https URL with a path, e.g. \"https://example.com/oauth/client.json\""
                    .into(),
            ));
        }
    }
    if let Some(issuer) = &raw.issuer {
        let usable = issuer
            .strip_prefix("https://")
            .or_else(|| issuer.strip_prefix("http://"))
            .is_some_and(|rest| !rest.is_empty() && !rest.starts_with('/'));
        if !usable {
            return Err((
                format!("{p}.issuer"),
                "must be the authorization server's issuer URL, e.g. \"https://auth.example.com\""
                    .into(),
            ));
        }
        if raw.client_id.is_none() {
            return Err((
                format!("{p}.issuer"),
                "names the authorization server of `client_id`; set `client_id` too, or remove `issuer`".into(),
            ));
        }
    }
    let needs = |key: &str, set: bool, why: &str| -> Result<(), Bad> {
        if set {
            Ok(())
        } else {
            Err((format!("{p}.{key}"), format!("required {why}")))
        }
    };
    let private_key_jwt = token_endpoint_auth_method == Some(McpTokenEndpointAuth::PrivateKeyJwt);
    if private_key_jwt {
        needs(
            "private_key_env_var",
            raw.private_key_env_var.is_some(),
            "with token_endpoint_auth_method = \"private_key_jwt\" (the variable holding the PEM key)",
        )?;
    }
    match grant_type {
        McpOAuthGrant::AuthorizationCode => {}
        McpOAuthGrant::ClientCredentials => {
            needs(
                "client_id",
                raw.client_id.is_some(),
                "with grant_type = \"client_credentials\"",
            )?;
            needs(
                "client_secret_env_var",
                raw.client_secret_env_var.is_some() || private_key_jwt,
                "with grant_type = \"client_credentials\" (or token_endpoint_auth_method = \"private_key_jwt\" with private_key_env_var)",
            )?;
        }
        McpOAuthGrant::TokenExchange => {
            let why = "with grant_type = \"token_exchange\"";
            needs("client_id", raw.client_id.is_some(), why)?;
            needs("idp_token_endpoint", raw.idp_token_endpoint.is_some(), why)?;
            needs("idp_client_id", raw.idp_client_id.is_some(), why)?;
            needs("id_token_env_var", raw.id_token_env_var.is_some(), why)?;
        }
    }
    Ok(super::McpOAuthConfig {
        client_id: raw.client_id.clone(),
        issuer: raw.issuer.clone(),
        client_secret_env_var: raw.client_secret_env_var.clone(),
        token_endpoint_auth_method,
        client_metadata_url: raw.client_metadata_url.clone(),
        grant_type,
        private_key_env_var: raw.private_key_env_var.clone(),
        idp_token_endpoint: raw.idp_token_endpoint.clone(),
        idp_client_id: raw.idp_client_id.clone(),
        id_token_env_var: raw.id_token_env_var.clone(),
    })
}

fn tool_configs(tools: Option<BTreeMap<String, McpToolToml>>) -> BTreeMap<String, McpToolConfig> {
    tools
        .unwrap_or_default()
        .into_iter()
        .map(|(tool, t)| {
            let config = McpToolConfig {
                approval_mode: t.approval_mode,
            };
            (tool, config)
        })
        .collect()
}

/// Reject malformed `${...}` references now, so the user hears about them at load time.
fn check_transport_refs(p: &str, transport: &McpServerTransportConfig) -> Result<(), Bad> {
    let check = |field: String, v: &str| {
        check_env_refs(v).map_err(|e| (format!("{p}.{field}"), e.to_string()))
    };
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

fn experimental_environment_warning(
    name: &str,
    p: &str,
    raw: &McpServerToml,
) -> Option<IgnoredKey> {
    let v = raw.experimental_environment.as_ref()?;
    (v.as_str() != Some("local")).then(|| IgnoredKey {
        server: name.to_string(),
        path: vec!["experimental_environment".into()],
        message: format!(
            "{p}.experimental_environment: only \"local\" is supported; the server runs locally"
        ),
    })
}

/// The warning for an unread key at `path` inside server `name` (prefix `p`).
fn ignored_key(name: &str, p: &str, path: Vec<String>) -> Option<IgnoredKey> {
    let (key, parents) = path.split_last()?;
    let message = match parents {
        [] => {
            let mut msg = format!("{p}: unknown key `{key}` (ignored)");
            if let Some(s) = suggest(key) {
                msg.push_str(&format!("; did you mean `{s}`?"));
            }
            msg
        }
        [oauth] if oauth == "oauth" => {
            format!(
                "{p}.oauth: unknown key `{key}` (ignored; the keys are {})",
                OAUTH_KEYS
                    .iter()
                    .map(|k| format!("`{k}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
        [tools, tool] if tools == "tools" => format!(
            "{p}.tools.{tool}: unknown key `{key}` (ignored; the only key is `approval_mode`)"
        ),
        _ => format!("{p}.{}: unknown key `{key}` (ignored)", parents.join(".")),
    };
    Some(IgnoredKey {
        server: name.to_string(),
        path,
        message,
    })
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

/// A serde error at `<p>.<path>`, in TOML's words: "expected an array of strings,
/// got a string" (never the offending string itself, which may be a secret).
fn describe_error(p: &str, e: &serde_path_to_error::Error<toml::de::Error>) -> McpConfigError {
    let mut at = p.to_string();
    for segment in e.path().iter() {
        match segment {
            serde_path_to_error::Segment::Seq { index } => at.push_str(&format!("[{index}]")),
            serde_path_to_error::Segment::Map { key } => {
                at.push('.');
                at.push_str(key);
            }
            serde_path_to_error::Segment::Enum { variant } => {
                at.push('.');
                at.push_str(variant);
            }
            serde_path_to_error::Segment::Unknown => {}
        }
    }
    let message = crate::de_error::toml_message(e.inner());
    let hint = match e.path().iter().next_back() {
        Some(serde_path_to_error::Segment::Map { key }) if key == "tools" => {
            " (write `[mcp_servers.<name>.tools.<tool>]` tables with `approval_mode = \"prompt\"`)"
        }
        _ => "",
    };
    McpConfigError {
        key: at,
        message: format!("{message}{hint}"),
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::tests::fields_of;

    /// The suggestion lists and the serde schema must agree, or a typo of a real key would
    /// get no hint (or a hint to a key that is then ignored).
    #[test]
    fn the_key_lists_are_the_schema_fields() {
        let mut listed: Vec<&str> = STDIO_ONLY
            .iter()
            .chain(HTTP_ONLY)
            .chain(SHARED)
            .copied()
            .chain(["bearer_token"])
            .collect();
        listed.sort_unstable();
        assert_eq!(fields_of::<McpServerToml>(), listed);
    }

    #[test]
    fn the_oauth_keys_are_the_schema_fields() {
        let mut listed: Vec<&str> = OAUTH_KEYS
            .iter()
            .copied()
            .chain(["client_secret"])
            .collect();
        listed.sort_unstable();
        assert_eq!(fields_of::<super::super::schema::OAuthToml>(), listed);
    }
}
