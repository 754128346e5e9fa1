//! `interpreter mcp-server`: a Codex-compatible MCP server, in both protocol eras.
//!
//! Clients start agent sessions with the `codex` tool, continue them with `codex-reply`,
//! receive every engine event as a `codex/event` notification, and answer approval
//! prompts sent as `elicitation/create` requests. Wire shapes follow `codex mcp-server`
//! (Codex 0.153) so existing clients keep working; its spec violations are fixed (bad
//! params get `-32602`, every request gets an answer, approvals never hang). Stored
//! threads are resources (`interpreter://threads/{id}`), prompt files are prompts.
//!
//! Both MCP eras are served: the `initialize` handshake (2025-11-25 and earlier) and
//! 2026-07-28, where every request carries its version and capabilities in `_meta` and is
//! served on its own (`server/discover`, `subscriptions/listen`, `resultType`, caching
//! hints); each request's era comes from its own `_meta`.
//!
//! Public surface:
//! * [`methods`]: the MCP method table of one connection over the real engine (`oi-core`),
//!   as [`oi_host`] serves it — stdio, a streamable HTTP session, beside other tables.
//! * [`stateless_methods`]: the table of HTTP requests that come without a session.
//! * [`methods_with`] / [`stateless_methods_with`]: the same with tools, prompts and
//!   resources a program adds ([`additions`]: the extension point; the conformance host,
//!   `examples/conformance-host.rs`, adds the MCP conformance suite's fixtures).
//! * [`serve`]: the MCP methods alone over any byte streams and any [`engine::Engine`]
//!   (tests script a fake engine).
//! * [`server::McpService::methods`]: the MCP method table itself.
//!
//! Layers: JSON-RPC framing, dispatch, the outgoing sender and the HTTP transport are
//! `oi-jsonrpc`'s; here are [`protocol`] (the MCP wire as types: eras, results, the Codex
//! shapes) → [`server`] (MCP methods) → [`tool_runner`] / [`approvals`] (one tool call),
//! [`resources`] / [`transcript`] (threads as resources), [`prompts`], [`subscriptions`]
//! → [`engine`] (the engine seam). This crate must not know how the engine runs turns; it
//! only relays ops and events.

pub mod additions;
mod approvals;
mod asking;
mod core_engine;
pub mod engine;
mod mrtr;
mod progress;
mod prompts;
pub mod protocol;
mod resources;
pub mod sealing;
mod server;
mod subscriptions;
mod tasks;
mod tool_runner;
mod tools;
mod transcript;

use crate::additions::Additions;
use crate::engine::Engine;
use oi_host::ServiceContext;
use oi_jsonrpc::MethodTable;
use oi_jsonrpc::connection::serve_connection;
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::sync::CancellationToken;

pub use core_engine::CoreEngine;

/// The MCP methods (lifecycle, tools, resources, prompts, tasks) of one connection, over
/// the host's engine: the `codex` tool's threads are the host's, so other APIs on the same
/// host see them.
pub fn methods(ctx: &ServiceContext) -> MethodTable {
    methods_with(ctx, Additions::none())
}

/// [`methods`] with what a program adds to the tables (tools, prompts, resources: see
/// [`additions`]); `interpreter mcp-server` adds nothing.
pub fn methods_with(ctx: &ServiceContext, additions: Arc<Additions>) -> MethodTable {
    let engine = Arc::new(CoreEngine::new(ctx.host.clone()));
    server::McpService::sealed_with(engine, ctx.host.cwd().clone(), sealing(ctx), additions)
        .methods(Some(&ctx.connection))
}

/// The MCP methods of requests that arrive without a session (MCP 2026-07-28 over HTTP),
/// over the host's engine: built once per listener; each request is served on its own.
pub fn stateless_methods(ctx: &ServiceContext) -> MethodTable {
    stateless_methods_with(ctx, Additions::none())
}

/// [`stateless_methods`] with what a program adds to the tables.
pub fn stateless_methods_with(ctx: &ServiceContext, additions: Arc<Additions>) -> MethodTable {
    let engine = Arc::new(CoreEngine::new(ctx.host.clone()));
    server::McpService::stateless_with(engine, ctx.host.cwd().clone(), sealing(ctx), additions)
        .methods(None)
}

/// The server's home (`--home`, `$OPENINTERPRETER_HOME`, `~/.openinterpreter`).
fn home(ctx: &ServiceContext) -> Result<std::path::PathBuf, sealing::KeyError> {
    match &ctx.host.options().home {
        Some(h) => Ok(h.clone()),
        None => oi_config::find_home().map_err(|e| sealing::KeyError::Config(e.to_string())),
    }
}

/// What seals the handles of `ctx`'s clients: the server's key (loaded at start, shared by a
/// fleet, see [`sealing`]) and the principal the transport let in.
fn sealing(ctx: &ServiceContext) -> server::Sealing {
    let home = home(ctx)?;
    let key = sealing::loaded_key(&home).ok_or(sealing::KeyError::NotLoaded { home })?;
    Ok(sealing::Sealer::new(key, ctx.principal.name()))
}

/// Loads, before a server starts serving, the key sealing what 2026-07-28 clients hold
/// (making it, on a first start). A key the user configured (`OI_MCP_STATE_KEY`,
/// `mcp_state_key_file`) that cannot be used is an error, which says what to fix; a default
/// key that cannot be made is a warning (returned): the server runs, and denies 2026-07-28
/// approvals and offers no tasks. Blocking.
pub fn check_state_key(
    home: &std::path::Path,
) -> Result<Option<sealing::KeyError>, sealing::KeyError> {
    match sealing::shared_key(home) {
        Ok(_) => Ok(None),
        Err(e) if e.is_configured() => Err(e),
        Err(e) => Ok(Some(e)),
    }
}

/// Serves the MCP methods alone over `reader`/`writer` with `engine`, and shuts the engine
/// down when the connection ends. Handles are sealed with a key of this process.
pub async fn serve<R, W>(reader: R, writer: W, engine: Arc<dyn Engine>) -> i32
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let key = Arc::new(sealing::StateKey::ephemeral());
    let sealing = Ok(sealing::Sealer::new(
        key,
        oi_host::Principal::local().name(),
    ));
    serve_sealed(reader, writer, engine, sealing).await
}

/// [`serve`] with handles sealed by `sealing` (tests of a fleet give two services one key).
pub async fn serve_sealed<R, W>(
    reader: R,
    writer: W,
    engine: Arc<dyn Engine>,
    sealing: server::Sealing,
) -> i32
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    serve_with(reader, writer, engine, sealing, Additions::none()).await
}

/// [`serve_sealed`] with what a program adds to the tables ([`additions`]).
pub async fn serve_with<R, W>(
    reader: R,
    writer: W,
    engine: Arc<dyn Engine>,
    sealing: server::Sealing,
    additions: Arc<Additions>,
) -> i32
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let service = server::McpService::sealed_with(
        engine.clone(),
        std::env::current_dir().unwrap_or_default(),
        sealing,
        additions,
    );
    serve_connection(
        reader,
        writer,
        CancellationToken::new(),
        |conn| service.methods(Some(conn)),
        move || {
            Box::pin(async move {
                if tokio::time::timeout(oi_host::ENGINE_GRACE, engine.shutdown())
                    .await
                    .is_err()
                {
                    tracing::warn!(
                        "engine shutdown did not finish within {:?}",
                        oi_host::ENGINE_GRACE
                    );
                }
            })
        },
    )
    .await;
    0
}
