//! `mcp list` and `mcp get`: tables, detail lines and `--json`, secrets masked.

use super::oauth::{AuthStatus, auth_status};
use super::{EXIT_FAILURE, EXIT_OK};
use crate::out::{out, outln};
use oi_config::OAuthCredentialsStoreMode;
use oi_config::mcp::{McpServerConfig, McpServerTransportConfig};
use oi_mcp_client::{DeclineElicitations, McpConnectionManager, McpStartOptions};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

const MASK: &str = "*****";

/// What `--probe` found for one server.
enum Probe {
    /// Started: the tools offered, the protocol version spoken, and what the start warned
    /// about (tools it skipped).
    Ready {
        tools: usize,
        protocol: String,
        warnings: Vec<String>,
    },
    Failed(String),
}

pub(super) async fn list(
    servers: &BTreeMap<String, McpServerConfig>,
    home: &Path,
    store: OAuthCredentialsStoreMode,
    json: bool,
    probe: bool,
) -> i32 {
    let probes = if probe {
        run_probe(servers, home, store).await
    } else {
        BTreeMap::new()
    };
    // Each HTTP server may be asked about OAuth (5 s at most): ask them all at once.
    let statuses =
        futures::future::join_all(servers.iter().map(|(n, c)| auth_status(n, c, home, store)))
            .await;
    let auth: BTreeMap<String, AuthStatus> = servers.keys().cloned().zip(statuses).collect();
    if json {
        let arr: Vec<Value> = servers
            .iter()
            .map(|(name, cfg)| server_json(name, cfg, &auth[name], probes.get(name)))
            .collect();
        outln!(
            "{}",
            serde_json::to_string_pretty(&arr).unwrap_or_else(|_| "[]".into())
        );
        return EXIT_OK;
    }
    if servers.is_empty() {
        outln!("No MCP servers configured yet. Try `interpreter mcp add my-tool -- my-command`.");
        return EXIT_OK;
    }
    let mut out = tables(servers, &auth, probe.then_some(&probes));
    out.push_str(&probe_details(&probes));
    out!("{out}");
    EXIT_OK
}

/// One server of `mcp list --json`, with what `--probe` found when it was asked.
fn server_json(
    name: &str,
    cfg: &McpServerConfig,
    auth: &AuthStatus,
    probe: Option<&Probe>,
) -> Value {
    let mut v = json!({
        "name": name,
        "enabled": cfg.enabled,
        "disabled_reason": Value::Null,
        "transport": transport_json(cfg),
        "startup_timeout_sec": cfg.startup_timeout.map(|d| d.as_secs_f64()),
        "tool_timeout_sec": cfg.tool_timeout.map(|d| d.as_secs_f64()),
        "auth_status": auth.json(),
    });
    if let Some(p) = probe {
        v["probe"] = match p {
            Probe::Ready {
                tools,
                protocol,
                warnings,
            } if warnings.is_empty() => {
                json!({"ok": true, "tools": tools, "protocol": protocol})
            }
            Probe::Ready {
                tools,
                protocol,
                warnings,
            } => {
                json!({"ok": true, "tools": tools, "protocol": protocol, "warnings": warnings})
            }
            Probe::Failed(e) => json!({"ok": false, "error": e}),
        };
    }
    v
}

/// `mcp list`'s tables: stdio servers, then HTTP servers, each with a Probe column when
/// `probes` is given (`--probe`).
fn tables(
    servers: &BTreeMap<String, McpServerConfig>,
    auth: &BTreeMap<String, AuthStatus>,
    probes: Option<&BTreeMap<String, Probe>>,
) -> String {
    let mut stdio_rows = vec![];
    let mut http_rows = vec![];
    for (name, cfg) in servers {
        let mut row = server_row(name, cfg, &auth[name]);
        if let Some(probes) = probes {
            row.push(probe_cell(probes.get(name)));
        }
        match cfg.transport {
            McpServerTransportConfig::Stdio { .. } => stdio_rows.push(row),
            McpServerTransportConfig::StreamableHttp { .. } => http_rows.push(row),
        }
    }
    let mut out = String::new();
    if !stdio_rows.is_empty() {
        let mut header = vec!["Name", "Command", "Args", "Env", "Cwd", "Status", "Auth"];
        if probes.is_some() {
            header.push("Probe");
        }
        out.push_str(&table(&header, &stdio_rows));
    }
    if !http_rows.is_empty() {
        if !out.is_empty() {
            out.push('\n');
        }
        let mut header = vec!["Name", "Url", "Bearer Token Env Var", "Status", "Auth"];
        if probes.is_some() {
            header.push("Probe");
        }
        out.push_str(&table(&header, &http_rows));
    }
    out
}

/// A server's row in its transport's table (without the Probe column).
fn server_row(name: &str, cfg: &McpServerConfig, auth: &AuthStatus) -> Vec<String> {
    let status = if cfg.enabled { "enabled" } else { "disabled" }.to_string();
    match &cfg.transport {
        McpServerTransportConfig::Stdio {
            command, args, cwd, ..
        } => vec![
            name.to_string(),
            command.clone(),
            if args.is_empty() {
                "-".into()
            } else {
                args.join(" ")
            },
            masked_env(cfg),
            cwd.as_ref().map_or("-".into(), |c| c.display().to_string()),
            status,
            auth.label().to_string(),
        ],
        McpServerTransportConfig::StreamableHttp {
            url,
            bearer_token_env_var,
            ..
        } => vec![
            name.to_string(),
            url.clone(),
            bearer_token_env_var.clone().unwrap_or_else(|| "-".into()),
            status,
            auth.label().to_string(),
        ],
    }
}

/// The Probe column: what the probe found, in one line.
fn probe_cell(probe: Option<&Probe>) -> String {
    match probe {
        Some(Probe::Ready {
            tools,
            protocol,
            warnings,
        }) if warnings.is_empty() => format!("ok, {tools} tools, {protocol}"),
        Some(Probe::Ready {
            tools, protocol, ..
        }) => format!("ok, {tools} tools, {protocol} (see below)"),
        Some(Probe::Failed(e)) => format!("failed: {}", e.lines().next().unwrap_or_default()),
        None => "-".to_string(),
    }
}

/// What follows the tables: each probe's warnings, and the whole of each multi-line error.
fn probe_details(probes: &BTreeMap<String, Probe>) -> String {
    let mut out = String::new();
    // A table cell holds one line; an error's later lines (the config to add, the server's
    // stderr) are what says how to fix it, so they follow the table whole.
    for (name, p) in probes {
        if let Probe::Ready { warnings, .. } = p {
            let ours = format!("MCP server `{name}`: ");
            for w in warnings {
                let w = w.strip_prefix(&ours).unwrap_or(w);
                out.push_str(&format!("\n{name}: {w}\n"));
            }
        }
        if let Probe::Failed(e) = p
            && e.lines().nth(1).is_some()
        {
            let mut lines = e.lines();
            out.push_str(&format!("\n{name}: {}\n", lines.next().unwrap_or_default()));
            for l in lines {
                out.push_str(&format!("  {l}\n"));
            }
        }
    }
    out
}

pub(super) async fn get(
    servers: &BTreeMap<String, McpServerConfig>,
    home: &Path,
    store: OAuthCredentialsStoreMode,
    name: &str,
    json: bool,
) -> i32 {
    let Some(cfg) = servers.get(name) else {
        eprintln!("error: No MCP server named '{name}' found.");
        return EXIT_FAILURE;
    };
    if json {
        let v = server_detail_json(name, cfg, home, store).await;
        outln!(
            "{}",
            serde_json::to_string_pretty(&v).unwrap_or_else(|_| "{}".into())
        );
        return EXIT_OK;
    }
    if !cfg.enabled {
        outln!("{name} (disabled)");
        return EXIT_OK;
    }
    let mut lines = vec![name.to_string(), "  enabled: true".to_string()];
    if cfg.required {
        lines.push("  required: true".into());
    }
    if let Some(list) = &cfg.enabled_tools {
        lines.push(format!("  enabled_tools: {}", join_or_brackets(list)));
    }
    if let Some(list) = &cfg.disabled_tools {
        lines.push(format!("  disabled_tools: {}", join_or_brackets(list)));
    }
    lines.push(format!("  transport: {}", cfg.transport.kind()));
    lines.extend(transport_lines(cfg));
    if let Some(d) = cfg.startup_timeout {
        lines.push(format!("  startup_timeout_sec: {}", d.as_secs_f64()));
    }
    if let Some(d) = cfg.tool_timeout {
        lines.push(format!("  tool_timeout_sec: {}", d.as_secs_f64()));
    }
    if let Some(m) = cfg.default_tools_approval_mode {
        lines.push(format!("  default_tools_approval_mode: {m}"));
    }
    let per_tool: Vec<String> = cfg
        .tools
        .iter()
        .filter_map(|(t, c)| c.approval_mode.map(|m| format!("{t}={m}")))
        .collect();
    if !per_tool.is_empty() {
        lines.push(format!("  tool_approval_modes: {}", per_tool.join(", ")));
    }
    if cfg.sampling.is_enabled() {
        lines.push(format!("  sampling: {}", cfg.sampling));
    }
    // The setting, and what the server negotiated when it last started.
    let last = oi_mcp_client::last_negotiated(home, name, cfg).await;
    lines.push(format!(
        "  protocol_version: {}{}",
        cfg.protocol_version,
        last.map(|n| format!(" (last negotiated: {})", n.version))
            .unwrap_or_default()
    ));
    lines.push(format!("  remove: interpreter mcp remove {name}"));
    outln!("{}", lines.join("\n"));
    EXIT_OK
}

/// `mcp get --json`: the server's whole configuration (secrets masked), its OAuth status and
/// the protocol it last negotiated.
async fn server_detail_json(
    name: &str,
    cfg: &McpServerConfig,
    home: &Path,
    store: OAuthCredentialsStoreMode,
) -> Value {
    let tools: BTreeMap<&String, Value> = cfg
        .tools
        .iter()
        .map(|(t, c)| {
            (
                t,
                json!({"approval_mode": c.approval_mode.map(|m| m.as_str())}),
            )
        })
        .collect();
    json!({
        "name": name,
        "enabled": cfg.enabled,
        "disabled_reason": Value::Null,
        "required": cfg.required,
        "transport": transport_json(cfg),
        "enabled_tools": cfg.enabled_tools,
        "disabled_tools": cfg.disabled_tools,
        "startup_timeout_sec": cfg.startup_timeout.map(|d| d.as_secs_f64()),
        "tool_timeout_sec": cfg.tool_timeout.map(|d| d.as_secs_f64()),
        "default_tools_approval_mode": cfg.default_tools_approval_mode.map(|m| m.as_str()),
        "tools": tools,
        "auth_status": auth_status(name, cfg, home, store).await.json(),
        "protocol_version": cfg.protocol_version.as_str(),
        "last_negotiated_protocol": oi_mcp_client::last_negotiated(home, name, cfg)
            .await
            .map(|n| n.version),
    })
}

/// `mcp get`'s lines about how the server is reached (secrets masked).
fn transport_lines(cfg: &McpServerConfig) -> Vec<String> {
    match &cfg.transport {
        McpServerTransportConfig::Stdio {
            command, args, cwd, ..
        } => vec![
            format!("  command: {command}"),
            format!(
                "  args: {}",
                if args.is_empty() {
                    "-".into()
                } else {
                    args.join(" ")
                }
            ),
            format!(
                "  cwd: {}",
                cwd.as_ref().map_or("-".into(), |c| c.display().to_string())
            ),
            format!("  env: {}", masked_env(cfg)),
        ],
        McpServerTransportConfig::StreamableHttp {
            url,
            bearer_token_env_var,
            http_headers,
            env_http_headers,
            ..
        } => vec![
            format!("  url: {url}"),
            format!(
                "  bearer_token_env_var: {}",
                bearer_token_env_var.as_deref().unwrap_or("-")
            ),
            format!(
                "  http_headers: {}",
                pairs(http_headers.keys().map(|k| format!("{k}={MASK}")))
            ),
            format!(
                "  env_http_headers: {}",
                pairs(env_http_headers.iter().map(|(k, v)| format!("{k}={v}")))
            ),
        ],
    }
}

fn join_or_brackets(list: &[String]) -> String {
    if list.is_empty() {
        "[]".into()
    } else {
        list.join(", ")
    }
}

fn pairs(items: impl Iterator<Item = String>) -> String {
    let v: Vec<String> = items.collect();
    if v.is_empty() {
        "-".into()
    } else {
        v.join(", ")
    }
}

/// `KEY=*****` for sorted `env` keys, then `NAME=*****` for each `env_vars` entry.
fn masked_env(cfg: &McpServerConfig) -> String {
    let McpServerTransportConfig::Stdio { env, env_vars, .. } = &cfg.transport else {
        return "-".into();
    };
    pairs(
        env.keys()
            .map(|k| format!("{k}={MASK}"))
            .chain(env_vars.iter().map(|v| format!("{}={MASK}", v.name))),
    )
}

/// The transport as JSON, with secret values (env values, static header values) masked.
fn transport_json(cfg: &McpServerConfig) -> Value {
    match &cfg.transport {
        McpServerTransportConfig::Stdio {
            command,
            args,
            env,
            env_vars,
            cwd,
        } => json!({
            "type": "stdio",
            "command": command,
            "args": args,
            "env": env.keys().map(|k| (k.clone(), MASK)).collect::<BTreeMap<_, _>>(),
            "env_vars": env_vars.iter().map(|v| match v.source {
                None => json!(v.name),
                Some(s) => json!({"name": v.name, "source": s.as_str()}),
            }).collect::<Vec<_>>(),
            "cwd": cwd,
        }),
        McpServerTransportConfig::StreamableHttp {
            url,
            bearer_token_env_var,
            http_headers,
            env_http_headers,
            oauth_resource,
            scopes,
            oauth,
        } => json!({
            "type": "streamable_http",
            "url": url,
            "bearer_token_env_var": bearer_token_env_var,
            "http_headers": http_headers.keys().map(|k| (k.clone(), MASK)).collect::<BTreeMap<_, _>>(),
            "env_http_headers": env_http_headers,
            "oauth_resource": oauth_resource,
            "scopes": scopes,
            "oauth_client_id": oauth.client_id,
            // Variable names only: the secrets they hold are never read here.
            "oauth": {
                "grant_type": oauth.grant_type.as_str(),
                "client_secret_env_var": oauth.client_secret_env_var,
                "token_endpoint_auth_method": oauth.token_endpoint_auth_method.map(|m| m.as_str()),
                "client_metadata_url": oauth.client_metadata_url,
                "private_key_env_var": oauth.private_key_env_var,
                "idp_token_endpoint": oauth.idp_token_endpoint,
                "idp_client_id": oauth.idp_client_id,
                "id_token_env_var": oauth.id_token_env_var,
            },
        }),
    }
}

/// Columns separated by two spaces, each as wide as its widest cell.
fn table(header: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (i, cell) in row.iter().enumerate() {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i + 1 == cells.len() {
                s.push_str(c);
            } else {
                s.push_str(c);
                s.push_str(&" ".repeat(widths[i] - c.chars().count() + 2));
            }
        }
        s.push('\n');
        s
    };
    let mut out = line(header.to_vec());
    for row in rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    out
}

async fn run_probe(
    servers: &BTreeMap<String, McpServerConfig>,
    home: &Path,
    store: OAuthCredentialsStoreMode,
) -> BTreeMap<String, Probe> {
    let enabled: BTreeMap<String, McpServerConfig> = servers
        .iter()
        .filter(|(_, c)| c.enabled)
        .map(|(n, c)| {
            let mut c = c.clone();
            // A probe reports failures; it must not abort on the first required one.
            c.required = false;
            (n.clone(), c)
        })
        .collect();
    let cwd = std::env::current_dir().unwrap_or_else(|_| home.to_path_buf());
    let (tx, mut events) = tokio::sync::mpsc::unbounded_channel();
    let opts = McpStartOptions {
        cwd,
        home: home.to_path_buf(),
        elicitation: Arc::new(DeclineElicitations),
        startup_wait: oi_mcp_client::StartupWait::UpTo(Duration::ZERO),
        // A probe has no model: sampling is offered to no server.
        sampling: None,
        oauth_browser: None,
        oauth_store: store,
    };
    let mut out = BTreeMap::new();
    let manager = match McpConnectionManager::start(enabled.clone(), opts, tx).await {
        Ok(m) => m,
        Err(e) => {
            for name in enabled.keys() {
                out.insert(name.clone(), Probe::Failed(e.to_string()));
            }
            return out;
        }
    };
    manager.wait_until_started().await;
    // What the starts warned about (tools a server listed but that cannot be offered).
    let mut warned = Vec::new();
    while let Ok(event) = events.try_recv() {
        if let oi_protocol::protocol::EventMsg::Warning(w) = event {
            warned.push(w.message);
        }
    }
    let tools = manager.tools();
    let status = manager.status();
    for name in enabled.keys() {
        let protocol = status
            .iter()
            .find(|s| &s.name == name)
            .and_then(|s| s.protocol.as_ref())
            .map_or_else(|| "-".to_string(), |p| p.version.clone());
        let probe = match manager.server_error(name) {
            Some(e) => Probe::Failed(e),
            None => Probe::Ready {
                tools: tools.iter().filter(|t| &t.server == name).count(),
                protocol,
                warnings: warned
                    .iter()
                    .filter(|w| w.starts_with(&format!("MCP server `{name}`:")))
                    .cloned()
                    .collect(),
            },
        };
        out.insert(name.clone(), probe);
    }
    manager.shutdown().await;
    out
}

impl AuthStatus {
    fn label(&self) -> &'static str {
        match self {
            AuthStatus::Unsupported => "Unsupported",
            AuthStatus::NotLoggedIn => "Not logged in",
            AuthStatus::BearerToken => "Bearer token",
            AuthStatus::OAuth => "OAuth",
        }
    }

    fn json(&self) -> &'static str {
        match self {
            AuthStatus::Unsupported => "unsupported",
            AuthStatus::NotLoggedIn => "not_logged_in",
            AuthStatus::BearerToken => "bearer_token",
            AuthStatus::OAuth => "o_auth",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_aligns_columns_with_two_spaces() {
        let t = table(
            &["Name", "Command"],
            &[
                vec!["a".into(), "x".into()],
                vec!["long-name".into(), "y".into()],
            ],
        );
        assert_eq!(t, "Name       Command\na          x\nlong-name  y\n");
    }
}
