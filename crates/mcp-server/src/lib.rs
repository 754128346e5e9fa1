//! `interpreter mcp-server`: a Codex-compatible MCP server over stdio.
//!
//! Clients start agent sessions with the `codex` tool, continue them with `codex-reply`,
//! receive every engine event as a `codex/event` notification, and answer approval
//! prompts sent as `elicitation/create` requests. Wire shapes follow `codex mcp-server`
//! (Codex 0.153) so existing clients keep working; its spec violations are fixed (bad
//! params get `-32602`, every request gets an answer, approvals never hang).
//!
//! Public surface:
//! * [`run_main`]: serve stdin/stdout with the real engine (`oi-core`) until stdin closes.
//! * [`serve`] / [`serve_with`]: the same over any byte streams and any [`engine::Engine`]
//!   (tests use in-memory pipes); `serve_with` lets another API (the v2 thread/turn API)
//!   register more methods on the same connection.
//! * [`dispatch::MethodTable`], [`outgoing::OutgoingSender`]: the seams for such APIs.
//! * [`ServerExtension`] / [`serve_options`]: another API registered on the same
//!   connection, sharing the real engine's `ThreadManager` and thread-reader registry.
//!
//! Layers: [`jsonrpc`] (message types) → [`transport`] (framing) → [`dispatch`]
//! (method table, cancellation, reply routing) → [`server`] (MCP methods) →
//! [`tool_runner`] / [`approvals`] (one tool call) → [`engine`] (the engine seam).
//! This crate must not know how the engine runs turns; it only relays ops and events.

pub mod approvals;
pub mod core_engine;
pub mod dispatch;
pub mod engine;
pub mod jsonrpc;
pub mod outgoing;
pub mod progress;
pub mod server;
pub mod tool_runner;
pub mod tools;
pub mod transport;

use crate::dispatch::{Inbound, MethodTable};
use crate::engine::Engine;
use crate::jsonrpc::{RpcError, parse_incoming};
use crate::outgoing::OutgoingSender;
use crate::transport::{Frame, LineReader, sniff_id};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite, BufReader};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

pub use core_engine::CoreEngine;

/// Messages read ahead of the processor. When full, reading stops (backpressure).
pub const INCOMING_QUEUE: usize = 128;
const OUTGOING_QUEUE: usize = 1024;
/// On shutdown: how long running calls get to end their turns and answer.
const CALLS_GRACE: Duration = Duration::from_secs(5);
/// On shutdown: how long the engine gets to flush threads and stop children.
const ENGINE_GRACE: Duration = Duration::from_secs(10);

/// Another API served on the same connection (e.g. the v2 thread/turn API). `register`
/// runs once per connection, when its method table is built.
pub trait ServerExtension: Send + Sync + std::fmt::Debug {
    fn register(&self, table: &mut MethodTable, ctx: &ExtensionContext);
}

/// What an extension shares with the MCP tools on its connection.
#[derive(Clone)]
pub struct ExtensionContext {
    /// The manager the `codex`/`codex-reply` tools use, so threads cross between APIs.
    pub manager: oi_core::ThreadManager,
    pub options: McpServerOptions,
    pub outgoing: OutgoingSender,
    /// Who reads which thread's events; claim a thread before reading it.
    pub readers: Arc<tool_runner::Readers>,
    /// Fires when the connection is closing.
    pub shutdown: CancellationToken,
    /// The MCP methods of this connection (empty when [`McpServerOptions::without_mcp`]),
    /// so an extension that replaces one (e.g. `initialize`) can still call it.
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
    /// More APIs on the same connection.
    pub extensions: Vec<Arc<dyn ServerExtension>>,
    /// Serve only the extensions' methods: no MCP lifecycle, tools, resources or prompts
    /// (`interpreter app-server`).
    pub without_mcp: bool,
}

/// Serves MCP on stdin/stdout until stdin closes. Logs go to stderr (`RUST_LOG`).
/// Returns the process exit code: 0 after a clean shutdown.
///
/// SIGINT, SIGTERM and SIGHUP end the server like the end of input does (running turns are
/// interrupted, their commands killed, threads flushed), then the code is 130 / 143 / 129.
pub async fn run_main(opts: McpServerOptions) -> i32 {
    init_stderr_logging();
    let mut signals = oi_process::TerminationSignals::listen();
    let stop = CancellationToken::new();
    let serve = serve_options_until(
        transport::ThreadStdin::spawn(),
        tokio::io::stdout(),
        opts,
        stop.clone(),
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

/// Serves over `reader`/`writer` with the real engine and `opts.extensions` registered.
pub async fn serve_options<R, W>(reader: R, writer: W, opts: McpServerOptions) -> i32
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_options_until(reader, writer, opts, CancellationToken::new()).await
}

/// Like [`serve_options`], and cancelling `stop` ends the connection as end of input would.
pub async fn serve_options_until<R, W>(
    reader: R,
    writer: W,
    opts: McpServerOptions,
    stop: CancellationToken,
) -> i32
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let engine = Arc::new(CoreEngine::new(opts.clone()));
    let manager = engine.manager().clone();
    let with_mcp = !opts.without_mcp;
    serve_conn(
        reader,
        writer,
        engine,
        stop,
        with_mcp,
        move |outgoing, readers, shutdown, mcp_methods| {
            let ctx = ExtensionContext {
                manager,
                outgoing: outgoing.clone(),
                readers: readers.clone(),
                shutdown: shutdown.clone(),
                options: opts,
                mcp_methods: mcp_methods.clone(),
            };
            let mut table = MethodTable::new();
            for ext in &ctx.options.extensions {
                ext.register(&mut table, &ctx);
            }
            table
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

/// Serves the MCP methods over `reader`/`writer` with `engine`.
pub async fn serve<R, W>(reader: R, writer: W, engine: Arc<dyn Engine>) -> i32
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_with(reader, writer, engine, |_| MethodTable::new()).await
}

/// Like [`serve`], plus the methods `extra` returns (given the connection's sender, for
/// notifications outside a request). On a name clash the extra method wins.
pub async fn serve_with<R, W, F>(reader: R, writer: W, engine: Arc<dyn Engine>, extra: F) -> i32
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
    F: FnOnce(&OutgoingSender) -> MethodTable,
{
    serve_conn(
        reader,
        writer,
        engine,
        CancellationToken::new(),
        true,
        |outgoing, _, _, _| extra(outgoing),
    )
    .await
}

async fn serve_conn<R, W, F>(
    reader: R,
    writer: W,
    engine: Arc<dyn Engine>,
    stop: CancellationToken,
    with_mcp: bool,
    extra: F,
) -> i32
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
    F: FnOnce(
        &OutgoingSender,
        &Arc<tool_runner::Readers>,
        &CancellationToken,
        &MethodTable,
    ) -> MethodTable,
{
    let shutdown = CancellationToken::new();
    let (in_tx, in_rx) = mpsc::channel::<Inbound>(INCOMING_QUEUE);
    let (out_tx, out_rx) = mpsc::channel(OUTGOING_QUEUE);
    let outgoing = OutgoingSender::new(out_tx);

    let writer_done = CancellationToken::new();
    let writer_task = {
        let shutdown = shutdown.clone();
        let done = writer_done.clone();
        tokio::spawn(async move {
            if let Err(e) = transport::write_loop(out_rx, writer, done).await {
                // The client stopped reading: nobody is left to serve.
                tracing::info!("output closed ({e}); shutting down");
                shutdown.cancel();
            }
        })
    };
    // The reader stops at end of input, or when the server is told to stop (a signal); the
    // rest of the shutdown is the same either way.
    let reader_stop = shutdown.child_token();
    {
        let reader_stop = reader_stop.clone();
        tokio::spawn(async move {
            stop.cancelled().await;
            reader_stop.cancel();
        });
    }
    let reader_task = tokio::spawn(read_loop(reader, in_tx, reader_stop));

    let readers = Arc::new(tool_runner::Readers::default());
    let service = server::McpService::with_readers(
        engine.clone(),
        std::env::current_dir().unwrap_or_default(),
        readers.clone(),
    );
    let mcp_methods = if with_mcp {
        service.methods()
    } else {
        MethodTable::new()
    };
    let mut table = mcp_methods.clone();
    table.merge(extra(&outgoing, &readers, &shutdown, &mcp_methods));

    let mut tasks = dispatch::process(in_rx, table, outgoing.clone(), shutdown.clone()).await;
    shutdown.cancel();
    tracing::info!("input closed; ending {} running call(s)", tasks.len());

    let drain = async { while tasks.join_next().await.is_some() {} };
    if tokio::time::timeout(CALLS_GRACE, drain).await.is_err() {
        tracing::warn!("running calls did not end within {CALLS_GRACE:?}; stopping them");
        tasks.abort_all();
        while tasks.join_next().await.is_some() {}
    }
    if tokio::time::timeout(ENGINE_GRACE, engine.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("engine shutdown did not finish within {ENGINE_GRACE:?}");
    }
    outgoing.fail_all_pending();
    drop(outgoing);
    writer_done.cancel();
    let _ = tokio::time::timeout(Duration::from_secs(5), writer_task).await;
    reader_task.abort();
    0
}

/// Reads frames, parses them, and queues them for the processor. Stops at EOF, on a read
/// error, or when `shutdown` fires.
async fn read_loop<R: AsyncRead + Unpin>(
    reader: R,
    tx: mpsc::Sender<Inbound>,
    shutdown: CancellationToken,
) {
    let mut lines = LineReader::new(
        BufReader::with_capacity(64 * 1024, reader),
        transport::DEFAULT_MAX_LINE_BYTES,
    );
    loop {
        let frame = tokio::select! {
            f = lines.next_frame() => f,
            _ = shutdown.cancelled() => return,
        };
        let inbound = match frame {
            Ok(Some(Frame::Line(bytes))) => parse_incoming(&bytes),
            Ok(Some(Frame::TooLong { len, head })) => Err(jsonrpc::Rejected {
                id: sniff_id(&head),
                error: RpcError::invalid_request(format!(
                    "message of {len} bytes exceeds the {} MiB limit; send large inputs as files and pass their paths",
                    transport::DEFAULT_MAX_LINE_BYTES / (1024 * 1024)
                )),
            }),
            Ok(None) => return,
            Err(e) => {
                tracing::warn!("reading input failed ({e}); treating it as end of input");
                return;
            }
        };
        if tx.send(inbound).await.is_err() {
            return;
        }
    }
}
