//! `interpreter mcp-server` and `interpreter app-server`: the host (`oi-host`) serving
//! the MCP tools (`oi-mcp-server`, on `mcp-server` only) and the v2/v1 API
//! (`oi-app-server`) side by side, over stdio or, with `--listen`, over streamable HTTP
//! (`HOST:PORT`) or, for the app server, WebSocket (`ws://HOST:PORT`, as Codex's remote
//! clients expect). The two services are siblings; this is the one place that puts their
//! method tables on the same connection.

use crate::listen_token;
use oi_app_server::AppServerContext;
use oi_core::SessionSource;
use oi_host::{HostOptions, ServiceContext, Services};
use oi_jsonrpc::MethodTable;
use oi_jsonrpc::http::{HttpOptions, Protocol};
use std::net::{SocketAddr, ToSocketAddrs};
use std::path::PathBuf;
use std::time::Duration;

/// Flags of `interpreter mcp-server` (and `interpreter app-server`).
#[derive(clap::Args, Debug)]
pub(crate) struct McpServerArgs {
    /// Serve MCP streamable HTTP at http://HOST:PORT/mcp instead of stdio; `app-server`
    /// also takes ws://HOST:PORT (JSON-RPC over WebSocket, what `codex --remote` speaks)
    /// and stdio:// (the default). Port 0 picks a free one; the address is printed on
    /// stderr. Clients must send a bearer token: the one in --auth-token-env, else one kept
    /// in $OPENINTERPRETER_HOME/listen-token.
    #[arg(long, value_name = "HOST:PORT")]
    pub listen: Option<String>,
    /// Environment variable holding the bearer token clients must send
    /// (`Authorization: Bearer …`). Required when HOST is not a loopback address (then at
    /// least 32 characters).
    #[arg(long, value_name = "VAR", requires = "listen")]
    pub auth_token_env: Option<String>,
    /// On a loopback address, accept clients without a token. Every local user (and every
    /// process of theirs) can then drive the agent with your permissions.
    #[arg(long, requires = "listen", conflicts_with = "auth_token_env")]
    pub no_auth_on_loopback: bool,
    /// Also accept browser requests from this origin (e.g. https://app.example.com);
    /// loopback origins are always accepted. Repeatable.
    #[arg(long, value_name = "ORIGIN", requires = "listen")]
    pub allowed_origin: Vec<String>,
    /// End a session no client used for this many seconds (no request, no open stream);
    /// 0 keeps sessions until DELETE or shutdown.
    #[arg(long, value_name = "SECS", default_value_t = 3600)]
    pub session_idle_timeout: u64,
    /// Most sessions open at once.
    #[arg(long, value_name = "N", default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_sessions: u32,
    /// Most connections open at once from one IP address once a request on them passed the
    /// token check (local clients share one address); connections without one have a small
    /// budget of their own.
    #[arg(long, value_name = "N", default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..))]
    pub max_connections_per_peer: u32,
    /// Seconds a client has to send a request's headers; slower ones are disconnected.
    #[arg(long, value_name = "SECS", default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..))]
    pub header_timeout: u64,
    /// Seconds a connection may sit idle (no request, nothing sent) before it is closed.
    #[arg(long, value_name = "SECS", default_value_t = 60, value_parser = clap::value_parser!(u64).range(1..))]
    pub idle_timeout: u64,
    /// A file holding the bearer token (Codex's `--ws-auth capability-token
    /// --ws-token-file`); set from those flags, not a flag of its own.
    #[arg(skip)]
    pub auth_token_file: Option<PathBuf>,
}

/// The global flags a server takes: `-c key=value` (parsed) and the typed ones.
pub(crate) struct HostSettings {
    pub cli_overrides: Vec<(String, toml::Value)>,
    pub overrides: oi_config::ConfigOverrides,
}

/// Which server the command is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Server {
    /// `interpreter mcp-server`: the MCP tools, with the v2 API beside them.
    Mcp,
    /// `interpreter app-server`: the v2/v1 API alone.
    App,
}

/// Serves until input ends (stdio) or a termination signal arrives; returns the exit code.
pub(crate) async fn run(server: Server, cli: HostSettings, args: McpServerArgs) -> i32 {
    let app_server = server == Server::App;
    // Threads are stamped with the server that made them (`sessions list`, v2 filters).
    let opts = HostOptions {
        cli_overrides: cli.cli_overrides,
        overrides: cli.overrides,
        ..HostOptions::new(if app_server {
            SessionSource::AppServer
        } else {
            SessionSource::Mcp
        })
    };
    if !app_server {
        // The key that seals what MCP 2026-07-28 clients hold (approval states, task ids):
        // a configured one that cannot be used stops the server here, not at the first
        // approval.
        let home = match &opts.home {
            Some(h) => Ok(h.clone()),
            None => oi_config::find_home().map_err(|e| e.to_string()),
        };
        match home.and_then(|h| oi_mcp_server::check_state_key(&h).map_err(|e| e.to_string())) {
            Ok(None) => {}
            Ok(Some(warning)) => eprintln!(
                "warning: {warning}; MCP 2026-07-28 approvals are denied and tasks are not offered"
            ),
            Err(message) => {
                eprintln!("error: {message}");
                return 2;
            }
        }
    }
    let services = Services::new(move |ctx: &ServiceContext| {
        let mcp = if app_server {
            MethodTable::new()
        } else {
            oi_mcp_server::methods(ctx)
        };
        let mut table = mcp.clone();
        table.merge(oi_app_server::methods(AppServerContext::new(ctx, mcp)));
        table
    });
    // MCP 2026-07-28 requests over HTTP come without a session: the MCP methods alone
    // answer them (the v2 API has sessions only).
    let services = if app_server {
        services
    } else {
        services.with_stateless(oi_mcp_server::stateless_methods)
    };
    let target = match listen_target(args.listen.as_deref(), app_server) {
        Ok(t) => t,
        Err(message) => {
            eprintln!("error: {message}");
            return 2;
        }
    };
    let Some((listen, protocol)) = target else {
        return oi_host::run_stdio(opts, services).await;
    };
    let home = || match &opts.home {
        Some(h) => Ok(h.clone()),
        None => oi_config::find_home().map_err(|e| e.to_string()),
    };
    match http_options(listen, &args, home).map(|mut http| {
        http.protocol = protocol;
        http
    }) {
        Ok(http) => oi_host::run_http(opts, http, services).await,
        Err(message) => {
            eprintln!("error: {message}");
            2
        }
    }
}

/// What `--listen` asks for: `None` for stdio, else the `HOST:PORT` and the protocol.
/// Codex's spellings are taken (`stdio://`, `ws://HOST:PORT`); WebSocket only carries the
/// app server's API (there is no MCP over WebSocket).
fn listen_target(
    listen: Option<&str>,
    app_server: bool,
) -> Result<Option<(&str, Protocol)>, String> {
    let Some(listen) = listen else {
        return Ok(None);
    };
    if listen == "stdio://" || listen == "stdio" {
        return Ok(None);
    }
    if let Some(rest) = listen.strip_prefix("ws://") {
        if !app_server {
            return Err(format!(
                "--listen {listen}: WebSocket serves the v2 API of `interpreter app-server`; for MCP use --listen HOST:PORT (streamable HTTP)"
            ));
        }
        return Ok(Some((rest.trim_end_matches('/'), Protocol::WebSocket)));
    }
    if let Some(scheme) = ["wss://", "unix://", "http://", "https://"]
        .iter()
        .find(|s| listen.starts_with(**s))
    {
        return Err(format!(
            "--listen {listen}: {scheme} is not served here; use HOST:PORT (streamable HTTP at /mcp){}",
            if app_server {
                ", ws://HOST:PORT (WebSocket) or stdio://"
            } else {
                ""
            }
        ));
    }
    if listen == "off" {
        return Err(
            "--listen off: a server with no transport serves nobody; use stdio:// or ws://HOST:PORT"
                .to_string(),
        );
    }
    Ok(Some((listen, Protocol::StreamableHttp)))
}

/// Checks the network flags: a parseable address, and a token — the given one (long enough
/// when the address is not loopback), else on loopback the one kept in the home directory,
/// unless `--no-auth-on-loopback`. Refuses to start rather than serve an agent
/// unauthenticated to anyone who did not opt in.
fn http_options(
    listen: &str,
    args: &McpServerArgs,
    home: impl FnOnce() -> Result<PathBuf, String>,
) -> Result<HttpOptions, String> {
    let addr: SocketAddr = listen
        .to_socket_addrs()
        .map_err(|e| format!("--listen {listen}: {e}; use HOST:PORT, e.g. 127.0.0.1:8765"))?
        .next()
        .ok_or_else(|| format!("--listen {listen}: the host resolves to no address"))?;
    let loopback = addr.ip().is_loopback();
    if args.no_auth_on_loopback && !loopback {
        return Err(format!(
            "--no-auth-on-loopback applies only to a loopback address, and --listen {listen} is reachable from other machines; drop the flag and use --auth-token-env VAR"
        ));
    }
    let auth_token = match (
        args.auth_token_file.as_deref(),
        args.auth_token_env.as_deref(),
    ) {
        (Some(path), _) => {
            let text = std::fs::read_to_string(path).map_err(|e| {
                format!(
                    "--ws-token-file {}: {e}; the file holds the token clients send",
                    path.display()
                )
            })?;
            let t = text.trim().to_string();
            if t.is_empty() || (!loopback && t.chars().count() < listen_token::MIN_LEN) {
                return Err(format!(
                    "--ws-token-file {}: the token must not be empty, and on an address other machines can reach it must be at least {} characters (e.g. openssl rand -hex 32 > FILE)",
                    path.display(),
                    listen_token::MIN_LEN
                ));
            }
            Some(t)
        }
        (None, Some(var)) => match std::env::var(var) {
            Ok(t) if !t.trim().is_empty() => {
                let t = t.trim().to_string();
                if !loopback && t.chars().count() < listen_token::MIN_LEN {
                    return Err(format!(
                        "--auth-token-env {var}: the token is {} characters; on an address other machines can reach it must be at least {}. Use e.g. export {var}=$(openssl rand -hex 32)",
                        t.chars().count(),
                        listen_token::MIN_LEN
                    ));
                }
                Some(t)
            }
            _ => {
                return Err(format!(
                    "--auth-token-env {var}: the variable is not set or empty; export {var}=<a long random token>"
                ));
            }
        },
        (None, None) if !loopback => {
            return Err(format!(
                "--listen {listen} is reachable from other machines; refusing to start without a token. Add --auth-token-env VAR with VAR holding a random token of at least {} characters (e.g. $(openssl rand -hex 32)), or listen on 127.0.0.1",
                listen_token::MIN_LEN
            ));
        }
        (None, None) if args.no_auth_on_loopback => {
            eprintln!(
                "warning: --no-auth-on-loopback: any local user can use this server, with your permissions"
            );
            None
        }
        (None, None) => {
            let (token, path) =
                listen_token::load_or_create(&home()?).map_err(|e| e.to_string())?;
            eprintln!(
                "clients must send `Authorization: Bearer <token>`; the token is in {} (readable only by you; --auth-token-env VAR sets your own)",
                path.display()
            );
            Some(token)
        }
    };
    for origin in &args.allowed_origin {
        if !(origin.starts_with("http://") || origin.starts_with("https://")) {
            return Err(format!(
                "--allowed-origin {origin}: an origin is scheme://host[:port], e.g. https://app.example.com"
            ));
        }
    }
    let mut http = HttpOptions::new(addr);
    http.auth_token = auth_token;
    http.allowed_origins = args.allowed_origin.clone();
    http.session_idle_timeout =
        (args.session_idle_timeout > 0).then(|| Duration::from_secs(args.session_idle_timeout));
    http.max_sessions = args.max_sessions as usize;
    http.max_connections_per_peer = args.max_connections_per_peer as usize;
    http.header_timeout = Duration::from_secs(args.header_timeout);
    http.idle_timeout = Duration::from_secs(args.idle_timeout);
    Ok(http)
}

#[cfg(test)]
mod tests {
    use super::*;

    use clap::Parser;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        args: McpServerArgs,
    }

    fn args(flags: &[&str]) -> McpServerArgs {
        Cli::try_parse_from(std::iter::once("x").chain(flags.iter().copied()))
            .unwrap()
            .args
    }

    fn options(listen: &str, flags: &[&str]) -> Result<HttpOptions, String> {
        let home = tempfile::tempdir().unwrap();
        let home = home.path().to_path_buf();
        let mut all = vec!["--listen", listen];
        all.extend_from_slice(flags);
        http_options(listen, &args(&all), move || Ok(home))
    }

    #[test]
    fn a_public_address_needs_a_token() {
        let err = options("0.0.0.0:8765", &[]).unwrap_err();
        assert!(err.contains("--auth-token-env"), "{err}");
        let err = options(
            "127.0.0.1:0",
            &["--auth-token-env", "OI_TEST_SURELY_UNSET_VAR"],
        )
        .unwrap_err();
        assert!(err.contains("not set"), "{err}");
        let err = options("nonsense", &[]).unwrap_err();
        assert!(err.contains("HOST:PORT"), "{err}");
        let err = options("127.0.0.1:0", &["--allowed-origin", "example.com"]).unwrap_err();
        assert!(err.contains("scheme://"), "{err}");
    }

    #[test]
    fn loopback_gets_a_token_unless_opted_out() {
        let http = options("127.0.0.1:0", &[]).unwrap();
        assert_eq!(http.auth_token.as_deref().map(str::len), Some(64));
        let http = options("127.0.0.1:0", &["--no-auth-on-loopback"]).unwrap();
        assert_eq!(http.auth_token, None);
        let err = options("0.0.0.0:0", &["--no-auth-on-loopback"]).unwrap_err();
        assert!(err.contains("only to a loopback address"), "{err}");
    }

    #[test]
    fn listen_takes_codex_spellings() {
        assert_eq!(listen_target(None, true), Ok(None));
        assert_eq!(listen_target(Some("stdio://"), true), Ok(None));
        assert_eq!(
            listen_target(Some("ws://127.0.0.1:0"), true),
            Ok(Some(("127.0.0.1:0", Protocol::WebSocket)))
        );
        assert_eq!(
            listen_target(Some("127.0.0.1:8765"), false),
            Ok(Some(("127.0.0.1:8765", Protocol::StreamableHttp)))
        );
        let err = listen_target(Some("ws://127.0.0.1:0"), false).unwrap_err();
        assert!(err.contains("app-server"), "{err}");
        let err = listen_target(Some("unix:///tmp/s.sock"), true).unwrap_err();
        assert!(err.contains("ws://HOST:PORT"), "{err}");
    }

    #[test]
    fn limits_come_from_the_flags() {
        let http = options("127.0.0.1:0", &[]).unwrap();
        assert_eq!(http.session_idle_timeout, Some(Duration::from_secs(3600)));
        assert_eq!(http.max_sessions, 256);
        let http = options(
            "127.0.0.1:0",
            &[
                "--session-idle-timeout",
                "0",
                "--max-sessions",
                "3",
                "--max-connections-per-peer",
                "4",
                "--header-timeout",
                "5",
                "--idle-timeout",
                "6",
            ],
        )
        .unwrap();
        assert_eq!(http.session_idle_timeout, None);
        assert_eq!(http.max_sessions, 3);
        assert_eq!(http.max_connections_per_peer, 4);
        assert_eq!(http.header_timeout, Duration::from_secs(5));
        assert_eq!(http.idle_timeout, Duration::from_secs(6));
        assert!(Cli::try_parse_from(["x", "--header-timeout", "0"]).is_err());
    }
}
