//! `mcpServer/oauth/login`: the browser login of a configured streamable HTTP MCP server,
//! over the engine's MCP OAuth flow (the one `interpreter mcp login` runs). The answer is
//! the authorization URL for the user to open; the flow waits for the browser's redirect
//! on a loopback port of this machine, saves the tokens to the credentials file, and
//! `mcpServer/oauthLogin/completed` reports how it ended.

use crate::items::Note;
use crate::protocol::ThreadOverrides;
use crate::protocol::methods as m;
use crate::protocol::session::{
    McpServerOauthLoginCompletedNotification, McpServerOauthLoginParams,
    McpServerOauthLoginResponse,
};
use crate::{Conn, internal, invalid, method};
use oi_config::mcp::{McpOAuthGrant, McpServerTransportConfig};
use oi_core::mcp::oauth::{self, DEFAULT_LOGIN_TIMEOUT, LoginOptions};
use oi_jsonrpc::{Execution, MethodTable, RequestContext, RpcError};
use std::sync::Arc;
use std::time::Duration;

pub(crate) fn register(t: &mut MethodTable, conn: &Arc<Conn>) {
    method::<m::McpServerOauthLogin, _, _>(t, conn, Execution::Spawn, login);
}

async fn login(
    conn: Arc<Conn>,
    ctx: RequestContext,
    p: McpServerOauthLoginParams,
) -> Result<McpServerOauthLoginResponse, RpcError> {
    let loaded = conn.load_config(&ThreadOverrides::default()).await?;
    let name = p.name.clone();
    let Some(cfg) = loaded.config.mcp_servers.get(&name) else {
        let known: Vec<&str> = loaded
            .config
            .mcp_servers
            .keys()
            .map(String::as_str)
            .collect();
        return Err(invalid(format!(
            "no MCP server named `{name}` in the config (configured: {}); add it with `interpreter mcp add`",
            if known.is_empty() {
                "none".to_string()
            } else {
                known.join(", ")
            }
        )));
    };
    let McpServerTransportConfig::StreamableHttp {
        url,
        oauth_resource,
        scopes,
        oauth,
        ..
    } = &cfg.transport
    else {
        return Err(invalid(format!(
            "OAuth login is only for streamable HTTP servers; `{name}` is a stdio server"
        )));
    };
    if oauth.grant_type != McpOAuthGrant::AuthorizationCode {
        return Err(invalid(format!(
            "`{name}` uses grant_type = \"{}\": there is no browser login; sessions get their tokens with the configured client credentials (`interpreter mcp login {name}` checks them)",
            oauth.grant_type.as_str()
        )));
    }
    // A confidential client's secret comes from the variable the config names.
    let client_secret = oauth::client_secret(&name, oauth).map_err(|e| invalid(e.to_string()))?;
    // The server's challenge names where its metadata is and the scope it wants.
    let challenge = oauth::login_challenge(&name, cfg)
        .await
        .map_err(|e| invalid(format!("OAuth login for `{name}` failed: {e}")))?;
    let opts = LoginOptions {
        challenge,
        client_issuer: oauth.issuer.clone(),
        client_id: oauth.client_id.clone(),
        client_secret,
        client_metadata_url: oauth.client_metadata_url.clone(),
        // The request's scopes, else the configured ones, else what the server advertises.
        scopes: p
            .scopes
            .clone()
            .filter(|s| !s.is_empty())
            .or_else(|| scopes.clone())
            .unwrap_or_default(),
        resource: oauth_resource.clone(),
        callback_port: 0,
        timeout: p
            .timeout_secs
            .map_or(DEFAULT_LOGIN_TIMEOUT, Duration::from_secs),
        // Saved where the user's `mcp_oauth_credentials_store` says, like `interpreter mcp login`.
        store: loaded.config.mcp_oauth_credentials_store,
        ..LoginOptions::new(&name, url, &conn.home()?)
    };
    let (url_tx, url_rx) = tokio::sync::oneshot::channel::<String>();
    let flow = tokio::spawn(oauth::login(opts, move |auth_url| {
        let _ = url_tx.send(auth_url.to_string());
    }));
    let Ok(authorization_url) = url_rx.await else {
        // The flow ended before it had a URL: discovery or registration failed.
        return Err(match flow.await {
            Ok(Err(e)) => invalid(format!("OAuth login for `{name}` failed: {e}")),
            Ok(Ok(())) => internal(format!("OAuth login for `{name}` ended without a URL")),
            Err(e) => internal(format!("OAuth login for `{name}` stopped: {e}")),
        });
    };
    let sent = ctx.response_sent();
    let out = conn.outgoing.clone();
    let thread_id = p.thread_id.clone();
    tokio::spawn(async move {
        let result = flow.await;
        sent.cancelled().await;
        let error = match result {
            Ok(Ok(())) => None,
            Ok(Err(e)) => Some(e.to_string()),
            Err(e) => Some(format!("the login stopped: {e}")),
        };
        let note = McpServerOauthLoginCompletedNotification {
            name,
            success: error.is_none(),
            error,
            thread_id,
        };
        out.send(Note::of::<m::McpServerOauthLoginCompleted>(&note))
            .await;
    });
    Ok(McpServerOauthLoginResponse { authorization_url })
}
