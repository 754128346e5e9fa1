//! `mcp login` / `mcp logout` and the auth column of `mcp list`.
//!
//! OAuth login is not implemented yet: `login` says so plainly and points at
//! `bearer_token_env_var`, which works today.

use super::{EXIT_FAILURE, EXIT_USAGE};
use oi_config::mcp::{McpServerConfig, McpServerTransportConfig};
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuthStatus {
    Unsupported,
    NotLoggedIn,
    BearerToken,
    OAuth,
}

/// How a server authenticates, from its config alone (no network).
pub async fn auth_status(_name: &str, cfg: &McpServerConfig, _home: &Path) -> AuthStatus {
    match &cfg.transport {
        McpServerTransportConfig::Stdio { .. } => AuthStatus::Unsupported,
        McpServerTransportConfig::StreamableHttp {
            bearer_token_env_var,
            http_headers,
            ..
        } => {
            let has_auth_header = http_headers
                .keys()
                .any(|k| k.eq_ignore_ascii_case("authorization"));
            if bearer_token_env_var.is_some() || has_auth_header {
                AuthStatus::BearerToken
            } else {
                AuthStatus::Unsupported
            }
        }
    }
}

pub async fn login(
    servers: &BTreeMap<String, McpServerConfig>,
    _home: &Path,
    name: &str,
    _scopes: &[String],
) -> i32 {
    let Some(cfg) = servers.get(name) else {
        eprintln!("error: No MCP server named '{name}' found.");
        return EXIT_FAILURE;
    };
    if !matches!(
        cfg.transport,
        McpServerTransportConfig::StreamableHttp { .. }
    ) {
        eprintln!("error: OAuth login is only supported for streamable HTTP servers.");
        return EXIT_USAGE;
    }
    eprintln!(
        "error: OAuth login is not supported yet in this version of interpreter. \
         If the server accepts a token, put it in an environment variable and set \
         `bearer_token_env_var = \"VAR\"` in [mcp_servers.{name}]."
    );
    EXIT_FAILURE
}

pub fn logout(servers: &BTreeMap<String, McpServerConfig>, _home: &Path, name: &str) -> i32 {
    let Some(cfg) = servers.get(name) else {
        eprintln!("error: No MCP server named '{name}' found in configuration.");
        return EXIT_FAILURE;
    };
    if !matches!(
        cfg.transport,
        McpServerTransportConfig::StreamableHttp { .. }
    ) {
        eprintln!("error: OAuth logout is only supported for streamable_http transports.");
        return EXIT_USAGE;
    }
    println!("No OAuth credentials stored for '{name}'.");
    super::EXIT_OK
}
