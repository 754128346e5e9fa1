//! `mcp login` / `mcp logout`, the OAuth check after `mcp add --url`, and the Auth column.

use super::{EXIT_FAILURE, EXIT_OK, EXIT_USAGE};
use crate::out::outln;
use oi_config::OAuthCredentialsStoreMode;
use oi_config::mcp::{McpOAuthGrant, McpServerConfig, McpServerTransportConfig};
use oi_mcp_client::oauth::{self, DEFAULT_LOGIN_TIMEOUT, LoginOptions};
use oi_mcp_client::oauth_session::{self, OAuthSettings};
use oi_mcp_client::oauth_store::{OAuthTokenStore, TokenLocation};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::Path;
use std::process::Stdio;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum AuthStatus {
    Unsupported,
    NotLoggedIn,
    BearerToken,
    OAuth,
}

/// How a server authenticates: configured bearer/Authorization header, stored OAuth tokens,
/// or (asking the server, 5 s at most) whether it offers OAuth at all.
pub(super) async fn auth_status(
    name: &str,
    cfg: &McpServerConfig,
    home: &Path,
    store: OAuthCredentialsStoreMode,
) -> AuthStatus {
    let McpServerTransportConfig::StreamableHttp {
        url,
        bearer_token_env_var,
        http_headers,
        ..
    } = &cfg.transport
    else {
        return AuthStatus::Unsupported;
    };
    if !cfg.enabled {
        return AuthStatus::Unsupported;
    }
    let has_auth_header = http_headers
        .keys()
        .any(|k| k.eq_ignore_ascii_case("authorization"));
    if bearer_token_env_var.is_some() || has_auth_header {
        return AuthStatus::BearerToken;
    }
    let tokens = OAuthTokenStore::new(home, name, url, store);
    if tokio::task::spawn_blocking(move || tokens.has_tokens())
        .await
        .unwrap_or(false)
    {
        return AuthStatus::OAuth;
    }
    match oauth::discover(url).await {
        Ok(true) => AuthStatus::NotLoggedIn,
        _ => AuthStatus::Unsupported,
    }
}

/// After `mcp add --url`: offer (or, on a terminal, start) the OAuth login.
pub(super) async fn after_add(
    name: &str,
    cfg: &McpServerConfig,
    home: &Path,
    store: OAuthCredentialsStoreMode,
) {
    let McpServerTransportConfig::StreamableHttp {
        url,
        bearer_token_env_var: None,
        ..
    } = &cfg.transport
    else {
        return;
    };
    match oauth::discover(url).await {
        Ok(true) if std::io::stdout().is_terminal() && std::io::stdin().is_terminal() => {
            outln!("Detected OAuth support. Starting OAuth flow…");
            let servers = BTreeMap::from([(name.to_string(), cfg.clone())]);
            let _ = login(&servers, home, store, name, &[]).await;
        }
        Ok(true) => {
            outln!("This server supports OAuth. Run `interpreter mcp login {name}` to log in.")
        }
        Ok(false) => {}
        Err(_) => outln!(
            "MCP server may or may not require login. Run `interpreter mcp login {name}` to login."
        ),
    }
}

/// `mcp login NAME`: ask the server without credentials first — its challenge names where
/// its metadata is and the scope it wants — then log in as `grant_type` says: the browser
/// flow for `authorization_code`; for a machine grant, no browser: the grant is run once to
/// check the configuration, and sessions get their own tokens the same way.
pub(super) async fn login(
    servers: &BTreeMap<String, McpServerConfig>,
    home: &Path,
    store: OAuthCredentialsStoreMode,
    name: &str,
    scopes: &[String],
) -> i32 {
    let Some(cfg) = servers.get(name) else {
        eprintln!("error: No MCP server named '{name}' found.");
        return EXIT_FAILURE;
    };
    let McpServerTransportConfig::StreamableHttp {
        url,
        oauth_resource,
        scopes: configured_scopes,
        oauth,
        ..
    } = &cfg.transport
    else {
        eprintln!("error: OAuth login is only supported for streamable HTTP servers.");
        return EXIT_USAGE;
    };
    // --scopes, else the configured scopes, else what the server's challenge or metadata
    // asks for (rmcp picks).
    let scopes = if scopes.is_empty() {
        configured_scopes.clone().unwrap_or_default()
    } else {
        scopes.to_vec()
    };
    let challenge = match oauth::login_challenge(name, cfg).await {
        Ok(challenge) => challenge,
        Err(e) => {
            eprintln!("error: OAuth login for '{name}' failed: {e}");
            return EXIT_FAILURE;
        }
    };
    if oauth.grant_type != McpOAuthGrant::AuthorizationCode {
        return machine_login(name, url, home, store, cfg, scopes, challenge).await;
    }
    let client_secret = match oauth::client_secret(name, oauth) {
        Ok(secret) => secret,
        Err(e) => {
            eprintln!("error: {e}");
            return EXIT_USAGE;
        }
    };
    let opts = LoginOptions {
        store,
        client_id: oauth.client_id.clone(),
        client_issuer: oauth.issuer.clone(),
        scopes,
        resource: oauth_resource.clone(),
        timeout: DEFAULT_LOGIN_TIMEOUT,
        challenge,
        client_secret,
        client_metadata_url: oauth.client_metadata_url.clone(),
        ..LoginOptions::new(name, url, home)
    };
    let result = oauth::login(opts, |auth_url| {
        outln!("Authorize `{name}` by opening this URL in your browser:\n{auth_url}\n");
        if !open_browser(auth_url) {
            outln!("(Browser launch failed; please copy the URL above manually.)");
        }
    })
    .await;
    match result {
        Ok(()) => {
            outln!("Successfully logged in to MCP server '{name}'.");
            let tokens = OAuthTokenStore::new(home, name, url, store);
            match tokio::task::spawn_blocking(move || tokens.location()).await {
                Ok(Some(TokenLocation::Keyring)) => outln!("Tokens saved in the OS keyring."),
                Ok(Some(TokenLocation::File)) => outln!(
                    "Tokens saved in {} (mode 0600).",
                    oi_config::credentials::path(home).display()
                ),
                _ => {}
            }
            EXIT_OK
        }
        Err(e) => {
            eprintln!("error: OAuth login for '{name}' failed: {e}");
            EXIT_FAILURE
        }
    }
}

/// `mcp login` of a server whose `grant_type` needs no person: run the grant once, say it
/// worked (and that nothing else is needed), store no token.
async fn machine_login(
    name: &str,
    url: &str,
    home: &Path,
    store: OAuthCredentialsStoreMode,
    cfg: &McpServerConfig,
    scopes: Vec<String>,
    challenge: Option<String>,
) -> i32 {
    let McpServerTransportConfig::StreamableHttp {
        oauth,
        oauth_resource,
        ..
    } = &cfg.transport
    else {
        return EXIT_USAGE;
    };
    let grant = oauth.grant_type.as_str();
    let settings = OAuthSettings {
        server: name.to_string(),
        url: url.to_string(),
        home: home.to_path_buf(),
        config: oauth.clone(),
        scopes,
        resource: oauth_resource.clone(),
        browser: None,
        store,
    };
    match oauth_session::check_machine_grant(&settings, challenge.as_deref()).await {
        Ok(issuer) => {
            let from = issuer
                .map(|i| format!("the authorization server {i}"))
                .unwrap_or_else(|| "the authorization server".to_string());
            outln!(
                "MCP server '{name}' uses grant_type = \"{grant}\": no browser login is needed.\nChecked: {from} issued a token for client '{}'. Sessions get their own tokens the same way; no token was stored.",
                oauth.client_id.as_deref().unwrap_or_default()
            );
            EXIT_OK
        }
        Err(e) if e.is_config() => {
            eprintln!("error: OAuth login for '{name}' failed: {e}");
            EXIT_USAGE
        }
        Err(e) => {
            eprintln!("error: OAuth login for '{name}' failed: {e}");
            EXIT_FAILURE
        }
    }
}

/// `$BROWSER` (first entry) if set, else the desktop opener. True if it could be started.
pub(super) fn open_browser(url: &str) -> bool {
    let browser = std::env::var("BROWSER")
        .ok()
        .and_then(|b| b.split(':').next().map(str::to_string))
        .filter(|b| !b.trim().is_empty());
    let mut cmd = match browser {
        Some(b) => {
            let mut c = std::process::Command::new("sh");
            c.arg("-c").arg(format!("{b} \"$1\"")).arg("sh").arg(url);
            c
        }
        None if cfg!(target_os = "macos") => {
            let mut c = std::process::Command::new("open");
            c.arg(url);
            c
        }
        None => {
            let mut c = std::process::Command::new("xdg-open");
            c.arg(url);
            c
        }
    };
    cmd.stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .is_ok()
}

pub(super) fn logout(
    servers: &BTreeMap<String, McpServerConfig>,
    home: &Path,
    store: OAuthCredentialsStoreMode,
    name: &str,
) -> i32 {
    let Some(cfg) = servers.get(name) else {
        eprintln!("error: No MCP server named '{name}' found in configuration.");
        return EXIT_FAILURE;
    };
    let McpServerTransportConfig::StreamableHttp { url, .. } = &cfg.transport else {
        eprintln!("error: OAuth logout is only supported for streamable_http transports.");
        return EXIT_USAGE;
    };
    match OAuthTokenStore::new(home, name, url, store).delete() {
        Ok(true) => {
            outln!("Removed OAuth credentials for '{name}'.");
            EXIT_OK
        }
        Ok(false) => {
            outln!("No OAuth credentials stored for '{name}'.");
            EXIT_OK
        }
        Err(e) => {
            eprintln!("error: failed to delete OAuth credentials: {e}");
            EXIT_FAILURE
        }
    }
}
