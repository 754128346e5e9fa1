//! The v2 thread/turn JSON-RPC API and the legacy v1 methods: what `interpreter
//! app-server` serves, and what `interpreter mcp-server` serves beside the MCP
//! `codex`/`codex-reply` tools.
//!
//! Public surface: [`methods`], the method table of these APIs for one connection of the
//! host (`oi-host`), which the CLI merges with the MCP tools' table (`oi-mcp-server`) on
//! `interpreter mcp-server`; [`AppServerContext`] is what that connection shares with it.
//! Nothing else is public: the wire itself — `thread/*`, `turn/*`, `model/list`,
//! `collaborationMode/list`, `app/list`, `config/*`, `account/*` and the v1
//! `getConversationSummary`, `getAuthStatus`, `gitDiffToRemote`, `fuzzyFileSearch*`
//! methods (docs/v2-api.md), their declarations and their schema — is
//! `oi-app-server-protocol`.
//!
//! Layout: `threads` · `turns` (turn methods and the per-turn event pump) · `items`
//! (engine events → v2 items and notifications) · `approvals` (typed requests to the
//! client) · `catalog` · `config_rpc` · `accounts` · `v1` · `fuzzy` · `session` (what
//! Codex's TUI calls mid-session) · `mcp_oauth` · `convert` (engine and config values as
//! wire values). The engine is reached only through the host's `ThreadManager`, shared
//! with the MCP tools and every other connection; threads publish their events to every
//! subscriber.
//!
//! This crate must not know how turns run inside the engine, nor the JSON-RPC framing.

mod absent;
mod accounts;
mod approvals;
mod catalog;
mod command_exec;
mod config_rpc;
mod convert;
mod fuzzy;
mod history;
mod hooks;
mod init;
mod items;
mod lifecycle;
mod mcp_oauth;
mod mcp_status;
mod notify;
mod session;
mod skills;
mod threads;
mod turns;
mod v1;

// The wire, under the name the handlers have always used for it.
use oi_app_server_protocol as protocol;

use crate::items::Note;
use crate::protocol::methods as m;
use oi_config::{ConfigLoadOptions, ConfigOverrides, LoadedConfig, load_config};
use oi_core::{StoredThreads, Thread, ThreadManager, ThreadManagerOptions};
use oi_host::{Host, ServiceContext};
use oi_jsonrpc::{Connection, Execution, INVALID_REQUEST, MethodTable, RequestContext, RpcError};
use oi_protocol::ThreadId;
use oi_protocol::protocol::RateLimitSnapshot;
use protocol::methods::ClientRequest;
use serde::de::DeserializeOwned;
use serde_json::Value;
use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio_util::sync::CancellationToken;

/// What the connection the v2 API is served on shares with it.
#[derive(Clone)]
pub struct AppServerContext {
    /// The host: its thread manager (persisted threads, shared with the MCP tools and with
    /// every other connection, so threads cross between the APIs) and its config settings
    /// (home, `-c` overrides, flags; each thread's config is loaded from these plus its own
    /// overrides).
    pub host: Host,
    /// The connection's sender and shutdown signal.
    pub connection: Connection,
    /// The MCP methods on the same connection (empty on `interpreter app-server`), so the
    /// v2 `initialize` can hand an MCP-form call to MCP's.
    pub mcp_methods: MethodTable,
}

impl AppServerContext {
    /// The v2 API on `ctx`'s connection, beside `mcp_methods`.
    pub fn new(ctx: &ServiceContext, mcp_methods: MethodTable) -> Self {
        Self {
            host: ctx.host.clone(),
            connection: ctx.connection.clone(),
            mcp_methods,
        }
    }
}

/// The v2 and v1 methods for one connection. Starts opening the thread store in the
/// background, and stops this connection's ephemeral threads when it closes.
pub fn methods(ctx: AppServerContext) -> MethodTable {
    let mut table = MethodTable::new();
    let conn = Arc::new(Conn::new(ctx));
    conn.background_setup();
    init::register(&mut table, &conn);
    threads::register(&mut table, &conn);
    history::register(&mut table, &conn);
    lifecycle::register(&mut table, &conn);
    mcp_status::register(&mut table, &conn);
    mcp_oauth::register(&mut table, &conn);
    command_exec::register(&mut table, &conn);
    turns::register(&mut table, &conn);
    catalog::register(&mut table, &conn);
    config_rpc::register(&mut table, &conn);
    accounts::register(&mut table, &conn);
    v1::register(&mut table, &conn);
    fuzzy::register(&mut table, &conn);
    skills::register(&mut table, &conn);
    absent::register(&mut table, &conn);
    hooks::register(&mut table, &conn);
    session::register(&mut table, &conn);
    table
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct EphemeralInfo {
    pub created_at: i64,
    pub forked_from: Option<ThreadId>,
}

/// Per-connection state shared by every handler.
pub(crate) struct Conn {
    /// Shared with the MCP tools (persisted threads).
    pub manager: ThreadManager,
    /// Threads started with `ephemeral: true`: nothing written to disk.
    pub ephemeral: ThreadManager,
    ephemeral_threads: Mutex<HashMap<ThreadId, EphemeralInfo>>,
    pub opts: ConfigLoadOptions,
    /// Notifications honour the client's `optOutNotificationMethods`.
    pub outgoing: notify::Outgoing,
    /// What the client declared in an app-server-form `initialize`.
    pub client: init::ClientState,
    /// The MCP methods of this connection, for the MCP-form `initialize`.
    pub mcp_methods: MethodTable,
    /// Approval requests waiting for an answer, per thread (`activeFlags`).
    pub approvals_waiting: Mutex<HashMap<ThreadId, usize>>,
    /// The last thread history read for `thread/turns/list` and `thread/items/list`.
    pub history: history::HistoryCache,
    /// Old forms this connection was already told about (`deprecationNotice`).
    deprecations_sent: Mutex<std::collections::HashSet<&'static str>>,
    pub shutdown: CancellationToken,
    /// This connection's listener of each thread it runs turns on.
    pub(crate) listeners: turns::listener::Listeners,
    /// Stored threads this connection started or resumed: they stay loaded while any
    /// connection holds them (released when the connection closes or unsubscribes).
    holds: Mutex<HashMap<ThreadId, oi_core::ThreadHold>>,
    /// Latest rate-limit headers a v2 turn saw: (provider id, snapshot).
    pub rate_limits: Mutex<Option<(String, RateLimitSnapshot)>>,
    pub fuzzy: fuzzy::FuzzyState,
    pub models: catalog::ModelsCache,
}

impl Conn {
    fn new(ctx: AppServerContext) -> Self {
        Self {
            manager: ctx.host.manager().clone(),
            ephemeral: ThreadManager::new(ThreadManagerOptions {
                source: ctx.host.options().source,
                persist: false,
            }),
            ephemeral_threads: Mutex::default(),
            opts: ctx.host.config_load(),
            outgoing: notify::Outgoing::new(ctx.connection.outgoing),
            client: init::ClientState::default(),
            mcp_methods: ctx.mcp_methods,
            approvals_waiting: Mutex::default(),
            deprecations_sent: Mutex::default(),
            history: history::HistoryCache::default(),
            shutdown: ctx.connection.shutdown,
            listeners: turns::listener::Listeners::default(),
            holds: Mutex::default(),
            rate_limits: Mutex::default(),
            fuzzy: fuzzy::FuzzyState::default(),
            models: catalog::ModelsCache::default(),
        }
    }

    /// Opens the thread store ahead of the first `thread/list` (opening checks the index
    /// against recent rollouts), and stops ephemeral threads when the connection closes
    /// (the MCP server only shuts down the shared manager).
    fn background_setup(self: &Arc<Self>) {
        if let Ok(home) = self.home() {
            let manager = self.manager.clone();
            tokio::spawn(async move {
                if let Err(e) = manager.stored_threads(&home).await {
                    tracing::warn!("cannot open the thread store: {e}");
                }
            });
        }
        let shutdown = self.shutdown.clone();
        let ephemeral = self.ephemeral.clone();
        tokio::spawn(async move {
            shutdown.cancelled().await;
            ephemeral.shutdown_all().await;
        });
    }

    /// `--home`, else `$OPENINTERPRETER_HOME`, else `~/.openinterpreter`.
    pub(crate) fn home(&self) -> Result<PathBuf, RpcError> {
        match &self.opts.home {
            Some(h) => Ok(h.clone()),
            None => oi_config::find_home().map_err(|e| invalid(e.to_string())),
        }
    }

    /// The stored threads of this server's home, through the engine (the first open checks
    /// the index or connects to PostgreSQL, off the async workers).
    pub(crate) async fn stored_threads(&self) -> Result<StoredThreads, RpcError> {
        let home = self.home()?;
        self.manager
            .stored_threads(&home)
            .await
            .map_err(|e| internal(format!("cannot open the thread store: {e}")))
    }

    /// This connection keeps stored thread `id` loaded (started, resumed or forked here).
    pub(crate) fn hold(&self, id: ThreadId) {
        lock(&self.holds)
            .entry(id)
            .or_insert_with(|| self.manager.hold(id));
    }

    /// Lets go of `id`; whether another connection still holds it.
    pub(crate) fn release(&self, id: &ThreadId) -> bool {
        lock(&self.holds).remove(id);
        self.manager.holders(id) > 0
    }

    /// A live thread, persisted or ephemeral.
    pub(crate) fn live_thread(&self, id: &ThreadId) -> Option<Arc<Thread>> {
        self.manager
            .get_thread(id)
            .or_else(|| self.ephemeral.get_thread(id))
    }

    /// Creation facts of an ephemeral thread (nothing about it is on disk).
    pub(crate) fn ephemeral_info(&self, id: &ThreadId) -> Option<EphemeralInfo> {
        lock(&self.ephemeral_threads).get(id).copied()
    }

    pub(crate) fn mark_ephemeral(&self, id: ThreadId, info: EphemeralInfo) {
        lock(&self.ephemeral_threads).insert(id, info);
    }

    /// The config with the server's flags plus `o` applied (typed overrides win). A widening
    /// project layer the user did not accept is left out (see `oi_config::project_consent`).
    /// Loaded on the blocking pool: it reads the user's and the project's files.
    pub(crate) async fn load_config(
        &self,
        o: &protocol::ThreadOverrides,
    ) -> Result<LoadedConfig, RpcError> {
        let load = self.load_options(o);
        blocking(move || {
            let loaded =
                load_config(load).map_err(|e| invalid(format!("invalid configuration: {e}")))?;
            for w in &loaded.warnings {
                tracing::warn!("config: {w}");
            }
            Ok(loaded)
        })
        .await
    }

    /// What [`Conn::load_config`] loads: the server's settings with the request's on top.
    fn load_options(&self, o: &protocol::ThreadOverrides) -> ConfigLoadOptions {
        let request = ConfigOverrides {
            model: o.model.clone(),
            model_provider: o.model_provider.clone(),
            cwd: o.cwd.clone(),
            approval_policy: o.approval_policy,
            sandbox_mode: o.sandbox,
            base_instructions: o.base_instructions.clone(),
            developer_instructions: o.developer_instructions.clone(),
            ..Default::default()
        };
        ConfigLoadOptions {
            home: self.opts.home.clone(),
            cli_overrides: self.opts.cli_overrides.clone(),
            overrides: self.opts.overrides.clone(),
        }
        .with_request(request, request_config(o))
    }

    /// [`Conn::load_config`] for a request that starts a session or runs a command: a trusted
    /// project layer that widens the session and was not accepted refuses the request (the
    /// loader already left it out; a session must not start quietly without the settings the
    /// project asked for, nor with them unreviewed).
    pub(crate) async fn load_session_config(
        &self,
        o: &protocol::ThreadOverrides,
    ) -> Result<LoadedConfig, RpcError> {
        let loaded = self.load_config(o).await?;
        refuse_unaccepted(&loaded)?;
        Ok(loaded)
    }

    /// Sends `deprecationNotice {summary}` after `ctx`'s response, once per `key` and
    /// connection.
    pub(crate) fn deprecated(&self, ctx: &RequestContext, key: &'static str, summary: String) {
        if !lock(&self.deprecations_sent).insert(key) {
            return;
        }
        let note = protocol::wire::DeprecationNoticeNotification {
            summary,
            details: None,
        };
        self.notify_after_response(ctx, vec![Note::of::<m::DeprecationNotice>(&note)]);
    }

    /// Sends `notes` in order once `ctx`'s response is out, so clients see the result
    /// first, then the notifications.
    pub(crate) fn notify_after_response(&self, ctx: &RequestContext, notes: Vec<items::Note>) {
        let out = self.outgoing.clone();
        let sent = ctx.response_sent();
        tokio::spawn(async move {
            sent.cancelled().await;
            for note in notes {
                out.send(note).await;
            }
        });
    }
}

/// Registers the declared request `M` (its name and params type come from
/// [`protocol::methods`]); the handler gets the connection state and returns `M`'s typed
/// result, serialized here.
pub(crate) fn method<M, F, Fut>(table: &mut MethodTable, conn: &Arc<Conn>, exec: Execution, f: F)
where
    M: ClientRequest,
    M::Params: DeserializeOwned + Send + 'static,
    F: Fn(Arc<Conn>, RequestContext, M::Params) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<M::Result, RpcError>> + Send + 'static,
{
    method_decoding::<M, M::Params, M::Result, F, Fut>(table, conn, exec, f)
}

/// [`method`] for a request whose params and result have a second form besides the declared
/// one: `initialize`, whose MCP form (params with `protocolVersion`) goes to MCP's method.
pub(crate) fn method_decoding<M, P, R, F, Fut>(
    table: &mut MethodTable,
    conn: &Arc<Conn>,
    exec: Execution,
    f: F,
) where
    M: ClientRequest,
    P: DeserializeOwned + Send + 'static,
    R: serde::Serialize,
    F: Fn(Arc<Conn>, RequestContext, P) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<R, RpcError>> + Send + 'static,
{
    let conn = conn.clone();
    let f = Arc::new(f);
    table.request(M::NAME, exec, move |ctx, p: P| {
        let conn = conn.clone();
        let f = f.clone();
        async move {
            let result = f(conn, ctx, p).await?;
            serde_json::to_value(&result)
                .map_err(|e| internal(format!("cannot encode the {} result: {e}", M::NAME)))
        }
    });
}

/// Offset pagination over an in-memory list: `(start, end, nextCursor)`. The cursor is the
/// decimal offset handed out as `nextCursor`; anything else is a clear -32600.
pub(crate) fn offset_page(
    len: usize,
    cursor: Option<&str>,
    limit: Option<u32>,
) -> Result<(usize, usize, Option<String>), RpcError> {
    let start = match cursor {
        None => 0,
        Some(c) => c
            .parse::<usize>()
            .ok()
            .filter(|n| *n <= len)
            .ok_or_else(|| {
                invalid(format!(
                    "invalid cursor `{c}`: pass back the nextCursor from a previous page"
                ))
            })?,
    };
    let limit = limit.map(|l| l.max(1) as usize).unwrap_or(len.max(1));
    let end = (start + limit).min(len);
    Ok((start, end, (end < len).then(|| end.to_string())))
}

/// The keys of a request's `config` that mean something here. Codex's clients send keys of
/// Codex features we do not have (e.g. `cloud.skills.enabled`); Codex ignores what it does
/// not read, so the same request must not fail here: such keys are dropped with a log line.
fn request_config(o: &protocol::ThreadOverrides) -> impl Iterator<Item = (&String, &Value)> {
    o.config
        .iter()
        .flatten()
        .filter(|(key, _)| match oi_config::validate_cli_key(key) {
            Ok(()) => true,
            Err(e) => {
                tracing::info!("request config: ignoring {e}");
                false
            }
        })
}

/// An engine error as the answer to a request: the caller's to fix, or internal.
pub(crate) fn core_error(e: oi_core::CoreError) -> RpcError {
    use oi_core::CoreError;
    match e {
        CoreError::ThreadNotFound(id) => thread_not_found(id),
        CoreError::Config(m) | CoreError::Mcp(m) => invalid(m),
        // A bad page cursor, a value the store does not take: the caller's to fix.
        CoreError::StoreRequest(m) => invalid(m),
        // Same class as the other busy answers (`turn/start` on a running thread).
        CoreError::ThreadBusy { message, .. } => invalid(message),
        other => internal(other.to_string()),
    }
}

/// `-32600` with the message as is (the v2 API's validation errors).
pub(crate) fn invalid(message: impl Into<String>) -> RpcError {
    RpcError::new(INVALID_REQUEST, message)
}

pub(crate) fn internal(message: impl Into<String>) -> RpcError {
    RpcError::new(oi_jsonrpc::INTERNAL_ERROR, message)
}

/// Parses a v2 thread id: `invalid thread id: …` when it is not a UUID.
pub(crate) fn parse_thread_id(raw: &str) -> Result<ThreadId, RpcError> {
    raw.parse::<ThreadId>()
        .map_err(|e| invalid(format!("invalid thread id: {e}")))
}

pub(crate) fn thread_not_found(id: impl std::fmt::Display) -> RpcError {
    invalid(format!("thread not found: {id}"))
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Runs blocking work (disk, SQLite, git) off the async workers.
pub(crate) async fn blocking<T, F>(f: F) -> Result<T, RpcError>
where
    T: Send + 'static,
    F: FnOnce() -> Result<T, RpcError> + Send + 'static,
{
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| internal(format!("background task failed: {e}")))?
}

/// The error for a session whose project config widens it without the user's consent.
pub(crate) fn refuse_unaccepted(loaded: &LoadedConfig) -> Result<(), RpcError> {
    match &loaded.config.project_config_review {
        Some(review) if !review.is_accepted() => Err(invalid(review.refusal())),
        _ => Ok(()),
    }
}
