//! `interpreter mcp-server`: a Codex-compatible MCP server.
//!
//! Clients start agent sessions with the `codex` tool, continue them with `codex-reply`,
//! receive every engine event as a `codex/event` notification, and answer approval
//! prompts sent as `elicitation/create` requests. Wire shapes follow `codex mcp-server`
//! (Codex 0.153) so existing clients keep working; its spec violations are fixed (bad
//! params get `-32602`, every request gets an answer, approvals never hang).
//!
//! Public surface:
//! * [`run_main`]: serve stdin/stdout with the real engine (`oi-core`) until stdin closes.
//! * [`serve_options`] / [`serve_options_until`]: the same over any byte streams.
//!   Each takes `more_methods`, which builds further method tables on the same connection
//!   from a [`ConnectionContext`] (the CLI adds the v2 API from `oi-app-server` this way).
//! * [`serve`]: the MCP methods alone over any byte streams and any [`engine::Engine`]
//!   (tests script a fake engine).
//! * [`server::McpService::methods`]: the MCP method table itself.
//!
//! Layers: JSON-RPC framing, dispatch and the outgoing sender are `oi-jsonrpc`'s; here are
//! [`server`] (MCP methods) → [`tool_runner`] / [`approvals`] (one tool call) →
//! [`engine`] (the engine seam). This crate must not know how the engine runs turns; it
//! only relays ops and events.

pub mod approvals;
pub mod core_engine;
pub mod engine;
pub mod progress;
pub mod server;
pub mod tool_runner;
pub mod tools;

use crate::engine::Engine;
use oi_jsonrpc::connection::serve_connection;
use oi_jsonrpc::transport::ThreadStdin;
use oi_jsonrpc::{Connection, MethodTable};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

pub use core_engine::CoreEngine;

/// On shutdown: how long the engine gets to flush threads and stop children.
const ENGINE_GRACE: Duration = Duration::from_secs(10);

/// What the MCP tools share with other APIs served on the same connection.
#[derive(Clone)]
pub struct ConnectionContext {
    /// The manager the `codex`/`codex-reply` tools use, so threads cross between APIs.
    pub manager: oi_core::ThreadManager,
    /// The server's command-line settings.
    pub options: McpServerOptions,
    /// The connection: its sender and its shutdown signal.
    pub connection: Connection,
    /// The MCP methods of this connection (empty when [`McpServerOptions::without_mcp`]),
    /// so a method that replaces one of them (the v2 `initialize`) can still call it.
    pub mcp_methods: MethodTable,
}

/// Server-wide settings from the command line.
#[derive(Clone, Debug, Default)]
pub struct McpServerOptions {
    /// `-c key=value` overrides, parsed, in command-line order.
    pub cli_overrides: Vec<(String, toml::Value)>,
    /// Typed overrides from global flags (`-m`, `-p`, `-s`, `-a`, `-C`).
    pub overrides: oi_config::ConfigOverrides,
    /// `None`: `$OPENINTERPRETER_HOME`, else `~/.openinterpreter`.
    pub home: Option<PathBuf>,
    /// Serve only what `more_methods` adds: no MCP lifecycle, tools, resources or prompts
    /// (`interpreter app-server`).
    pub without_mcp: bool,
}

impl McpServerOptions {
    /// How to load the config with these settings (before any per-call overrides).
    pub fn config_load(&self) -> oi_config::ConfigLoadOptions {
        oi_config::ConfigLoadOptions {
            home: self.home.clone(),
            cli_overrides: self.cli_overrides.clone(),
            overrides: self.overrides.clone(),
        }
    }
}

/// Serves MCP (plus whatever `more_methods` adds) on stdin/stdout until stdin closes.
/// Logs go to stderr (`RUST_LOG`). Returns the process exit code: 0 after a clean shutdown.
///
/// SIGINT, SIGTERM and SIGHUP end the server like the end of input does (running turns are
/// interrupted, their commands killed, threads flushed), then the code is 130 / 143 / 129.
pub async fn run_main<F>(opts: McpServerOptions, more_methods: F) -> i32
where
    F: FnOnce(&ConnectionContext) -> MethodTable,
{
    init_stderr_logging();
    let mut signals = oi_process::TerminationSignals::listen();
    let stop = CancellationToken::new();
    let serve = serve_options_until(
        ThreadStdin::spawn(),
        tokio::io::stdout(),
        opts,
        stop.clone(),
        more_methods,
    );
    tokio::pin!(serve);
    let sig = tokio::select! {
        code = &mut serve => return code,
        sig = signals.recv() => sig,
    };
    tracing::info!("{}: shutting down", sig.name());
    stop.cancel();
    tokio::select! {
        _ = &mut serve => {}
        again = signals.recv() => tracing::warn!("{} again: exiting without a clean shutdown", again.name()),
    }
    sig.exit_code()
}

/// Serves over `reader`/`writer` with the real engine and the methods `more_methods`
/// builds (on a name clash those win).
pub async fn serve_options<R, W, F>(
    reader: R,
    writer: W,
    opts: McpServerOptions,
    more_methods: F,
) -> i32
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
    F: FnOnce(&ConnectionContext) -> MethodTable,
{
    serve_options_until(reader, writer, opts, CancellationToken::new(), more_methods).await
}

/// Like [`serve_options`], and cancelling `stop` ends the connection as end of input would.
pub async fn serve_options_until<R, W, F>(
    reader: R,
    writer: W,
    opts: McpServerOptions,
    stop: CancellationToken,
    more_methods: F,
) -> i32
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
    F: FnOnce(&ConnectionContext) -> MethodTable,
{
    let engine = Arc::new(CoreEngine::new(opts.clone()));
    let manager = engine.manager().clone();
    let with_mcp = !opts.without_mcp;
    serve_engine(
        reader,
        writer,
        engine,
        stop,
        with_mcp,
        move |connection, mcp_methods| {
            more_methods(&ConnectionContext {
                manager,
                options: opts,
                connection: connection.clone(),
                mcp_methods: mcp_methods.clone(),
            })
        },
    )
    .await
}

fn init_stderr_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    // Fails only when the binary already installed a subscriber; keep that one.
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

/// Serves the MCP methods alone over `reader`/`writer` with `engine`.
pub async fn serve<R, W>(reader: R, writer: W, engine: Arc<dyn Engine>) -> i32
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_engine(
        reader,
        writer,
        engine,
        CancellationToken::new(),
        true,
        |_, _| MethodTable::new(),
    )
    .await
}

async fn serve_engine<R, W, F>(
    reader: R,
    writer: W,
    engine: Arc<dyn Engine>,
    stop: CancellationToken,
    with_mcp: bool,
    more_methods: F,
) -> i32
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
    F: FnOnce(&Connection, &MethodTable) -> MethodTable,
{
    let service =
        server::McpService::new(engine.clone(), std::env::current_dir().unwrap_or_default());
    serve_connection(
        reader,
        writer,
        stop,
        |connection| {
            let mcp_methods = if with_mcp {
                service.methods()
            } else {
                MethodTable::new()
            };
            let mut table = mcp_methods.clone();
            table.merge(more_methods(connection, &mcp_methods));
            table
        },
        move || {
            Box::pin(async move {
                if tokio::time::timeout(ENGINE_GRACE, engine.shutdown())
                    .await
                    .is_err()
                {
                    tracing::warn!("engine shutdown did not finish within {ENGINE_GRACE:?}");
                }
            })
        },
    )
    .await;
    0
}

/// Serves MCP (plus whatever `more_methods` adds, once per session) as streamable HTTP at
/// `/mcp` on `http.addr` until a termination signal; returns the exit code. One engine
/// serves every session, so a thread started in one session can be continued in another.
pub async fn run_http<F>(
    opts: McpServerOptions,
    http: oi_jsonrpc::http::HttpOptions,
    more_methods: F,
) -> i32
where
    F: Fn(&ConnectionContext) -> MethodTable + Send + Sync + 'static,
{
    init_stderr_logging();
    // Every connection is a file descriptor: let the administrator's hard limit, not the
    // soft default (often 1024), decide how many clients fit.
    match oi_process::raise_open_file_limit() {
        Ok((before, after)) if after > before => {
            tracing::info!("raised the open-file limit from {before} to {after}")
        }
        Ok(_) => {}
        Err(e) => tracing::warn!("cannot raise the open-file limit: {e}"),
    }
    let listener = match tokio::net::TcpListener::bind(http.addr).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: cannot listen on {}: {e}", http.addr);
            return 1;
        }
    };
    match listener.local_addr() {
        // Tests and scripts read this line to learn the port of `--listen 127.0.0.1:0`.
        Ok(addr) => eprintln!("listening on {}", http.url(addr)),
        Err(e) => tracing::warn!("cannot read the listening address: {e}"),
    }
    let mut signals = oi_process::TerminationSignals::listen();
    let stop = CancellationToken::new();
    let serve = serve_http(listener, opts, http, stop.clone(), more_methods);
    tokio::pin!(serve);
    let sig = tokio::select! {
        r = &mut serve => {
            return match r {
                Ok(()) => 0,
                Err(e) => {
                    eprintln!("error: the HTTP server failed: {e}");
                    1
                }
            };
        }
        sig = signals.recv() => sig,
    };
    tracing::info!("{}: shutting down", sig.name());
    stop.cancel();
    tokio::select! {
        _ = &mut serve => {}
        again = signals.recv() => tracing::warn!("{} again: exiting without a clean shutdown", again.name()),
    }
    sig.exit_code()
}

/// Serves streamable HTTP on `listener` with the real engine until `stop` fires, then ends
/// every session and shuts the engine down.
pub async fn serve_http<F>(
    listener: tokio::net::TcpListener,
    opts: McpServerOptions,
    http: oi_jsonrpc::http::HttpOptions,
    stop: CancellationToken,
    more_methods: F,
) -> std::io::Result<()>
where
    F: Fn(&ConnectionContext) -> MethodTable + Send + Sync + 'static,
{
    let engine = Arc::new(CoreEngine::new(opts.clone()));
    let manager = engine.manager().clone();
    let server_cwd = std::env::current_dir().unwrap_or_default();
    let shared_engine: Arc<dyn Engine> = engine.clone();
    let factory: oi_jsonrpc::http::MethodsFactory = Arc::new(move |connection: &Connection| {
        let service = server::McpService::new(shared_engine.clone(), server_cwd.clone());
        let mcp_methods = if opts.without_mcp {
            MethodTable::new()
        } else {
            service.methods()
        };
        let mut table = mcp_methods.clone();
        table.merge(more_methods(&ConnectionContext {
            manager: manager.clone(),
            options: opts.clone(),
            connection: connection.clone(),
            mcp_methods,
        }));
        table
    });
    let served = oi_jsonrpc::http::serve_http(listener, http, factory, stop).await;
    if tokio::time::timeout(ENGINE_GRACE, engine.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("engine shutdown did not finish within {ENGINE_GRACE:?}");
    }
    served
}
