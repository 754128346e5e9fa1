//! `interpreter mcp-server` and `interpreter app-server`: one JSON-RPC connection serving
//! the MCP tools (`oi-mcp-server`, unless [`McpServerOptions::without_mcp`]) and the v2/v1
//! API (`oi-app-server`) side by side, over stdio or, with `--listen`, over streamable
//! HTTP. The two services are siblings; this is the one place
//! that puts their method tables on the same connection.

use oi_app_server::AppServerContext;
use oi_jsonrpc::MethodTable;
use oi_jsonrpc::http::HttpOptions;
use oi_mcp_server::{ConnectionContext, McpServerOptions};
use std::net::{SocketAddr, ToSocketAddrs};

/// Flags of `interpreter mcp-server`.
#[derive(clap::Args, Debug, Default)]
pub struct McpServerArgs {
    /// Serve MCP streamable HTTP at http://HOST:PORT/mcp instead of stdio (port 0 picks a
    /// free one; the address is printed on stderr).
    #[arg(long, value_name = "HOST:PORT")]
    pub listen: Option<String>,
    /// Environment variable holding the bearer token clients must send
    /// (`Authorization: Bearer …`). Required when HOST is not a loopback address.
    #[arg(long, value_name = "VAR", requires = "listen")]
    pub auth_token_env: Option<String>,
    /// Also accept browser requests from this origin (e.g. https://app.example.com);
    /// loopback origins are always accepted. Repeatable.
    #[arg(long, value_name = "ORIGIN", requires = "listen")]
    pub allowed_origin: Vec<String>,
}

/// Serves both APIs until input ends (stdio) or a termination signal arrives; returns the
/// exit code.
pub async fn run(opts: McpServerOptions, args: McpServerArgs) -> i32 {
    let Some(listen) = args.listen.as_deref() else {
        return oi_mcp_server::run_main(opts, v2_methods).await;
    };
    match http_options(listen, args.auth_token_env.as_deref(), args.allowed_origin) {
        Ok(http) => oi_mcp_server::run_http(opts, http, v2_methods).await,
        Err(message) => {
            eprintln!("error: {message}");
            2
        }
    }
}

/// Checks the network flags: a parseable address, and a token whenever the address is not
/// loopback (refusing to start rather than serving an agent to the network unauthenticated).
fn http_options(
    listen: &str,
    token_env: Option<&str>,
    allowed_origins: Vec<String>,
) -> Result<HttpOptions, String> {
    let addr: SocketAddr = listen
        .to_socket_addrs()
        .map_err(|e| format!("--listen {listen}: {e}; use HOST:PORT, e.g. 127.0.0.1:8765"))?
        .next()
        .ok_or_else(|| format!("--listen {listen}: the host resolves to no address"))?;
    let auth_token = match token_env {
        Some(var) => match std::env::var(var) {
            Ok(t) if !t.trim().is_empty() => Some(t.trim().to_string()),
            _ => {
                return Err(format!(
                    "--auth-token-env {var}: the variable is not set or empty; export {var}=<a long random token>"
                ));
            }
        },
        None => None,
    };
    if auth_token.is_none() && !addr.ip().is_loopback() {
        return Err(format!(
            "--listen {listen} is reachable from other machines; refusing to start without a token. Add --auth-token-env VAR with VAR holding a long random token, or listen on 127.0.0.1"
        ));
    }
    for origin in &allowed_origins {
        if !(origin.starts_with("http://") || origin.starts_with("https://")) {
            return Err(format!(
                "--allowed-origin {origin}: an origin is scheme://host[:port], e.g. https://app.example.com"
            ));
        }
    }
    let mut http = HttpOptions::new(addr);
    http.auth_token = auth_token;
    http.allowed_origins = allowed_origins;
    Ok(http)
}

/// The v2 and v1 methods, sharing the MCP tools' thread manager and reader registry so
/// threads cross between the APIs and each thread has one reader.
fn v2_methods(ctx: &ConnectionContext) -> MethodTable {
    oi_app_server::methods(AppServerContext {
        manager: ctx.manager.clone(),
        config: ctx.options.config_load(),
        connection: ctx.connection.clone(),
        readers: ctx.readers.clone(),
        mcp_methods: ctx.mcp_methods.clone(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_public_address_needs_a_token() {
        let err = http_options("0.0.0.0:8765", None, vec![]).unwrap_err();
        assert!(err.contains("--auth-token-env"), "{err}");
        assert!(http_options("127.0.0.1:0", None, vec![]).is_ok());
        let err =
            http_options("127.0.0.1:0", Some("OI_TEST_SURELY_UNSET_VAR"), vec![]).unwrap_err();
        assert!(err.contains("not set"), "{err}");
        let err = http_options("nonsense", None, vec![]).unwrap_err();
        assert!(err.contains("HOST:PORT"), "{err}");
        let err = http_options("127.0.0.1:0", None, vec!["example.com".into()]).unwrap_err();
        assert!(err.contains("scheme://"), "{err}");
    }
}
