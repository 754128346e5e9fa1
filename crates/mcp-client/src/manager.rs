//! [`McpConnectionManager`]: every enabled server of one session, started in parallel, their
//! merged tool catalog, and tool calls routed to them.
//!
//! The parts: each server's state (`entry`), the merged catalog (`catalog`), starting and
//! restarting servers (`connect`) and `tools/call` (`call`).

mod call;
mod catalog;
mod connect;
mod entry;
mod listen;
// Resource and prompt reads are the manager's methods on a connected server.
mod resources;

use crate::cache;
use crate::connection::Connection;
use crate::{McpStartOptions, McpStartupError, McpToolInfo, StartupWait};
pub(crate) use call::{CallClock, Waited};
use catalog::Catalog;
pub(crate) use entry::{ConnState, ServerEntry, ToolSet};
use oi_config::mcp::McpServerConfig;
use oi_protocol::protocol::{
    EventMsg, McpStartupCompleteEvent, McpStartupFailure, McpStartupStatus, McpStartupUpdateEvent,
};
use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The state shared by the manager, its servers' handlers and its startup tasks.
struct Inner {
    servers: BTreeMap<String, Arc<ServerEntry>>,
    catalog: RwLock<Arc<Catalog>>,
    opts: McpStartOptions,
    events: mpsc::UnboundedSender<EventMsg>,
    shutdown: CancellationToken,
    /// Set when the session ends: a task still running is left running, not cancelled.
    leaving_tasks: std::sync::atomic::AtomicBool,
}

/// All MCP servers of one session.
pub struct McpConnectionManager {
    inner: Arc<Inner>,
}

fn send_update(events: &mpsc::UnboundedSender<EventMsg>, server: &str, status: McpStartupStatus) {
    let _ = events.send(EventMsg::McpStartupUpdate(McpStartupUpdateEvent {
        server: server.to_string(),
        status,
    }));
}

impl McpConnectionManager {
    /// Starts every enabled server in parallel. Sends `McpStartupUpdate` per server and one
    /// `McpStartupComplete` through `events` (when all finished — possibly after `start`
    /// returned). Waits for every `required` server (an error names the server and reason if
    /// one fails) and, as `startup_wait` says, for optional servers that have no cached catalog;
    /// cached catalogs are served for servers still starting.
    pub async fn start(
        servers: BTreeMap<String, McpServerConfig>,
        opts: McpStartOptions,
        events: mpsc::UnboundedSender<EventMsg>,
    ) -> Result<Arc<Self>, McpStartupError> {
        let began = tokio::time::Instant::now();
        let mut entries = BTreeMap::new();
        for (name, config) in servers.into_iter().filter(|(_, c)| c.enabled) {
            let cache_path = cache::cache_path(&opts.home, &name, &config);
            let cached = cache::load(cache_path.clone(), name.clone()).await;
            let fresh_for = cached.as_ref().and_then(|c| c.fresh_for);
            let tools = match cached {
                Some(c) => ToolSet::Cached(c.tools),
                None => ToolSet::None,
            };
            let remembered =
                crate::protocol::remembered(crate::protocol::memory_path(&cache_path)).await;
            let recent_failure = match tools {
                // A server with a catalog came up before: it is waited for as usual.
                ToolSet::None if !config.required => {
                    cache::recent_failure(cache::failure_path(&cache_path)).await
                }
                _ => None,
            };
            let entry = ServerEntry::new(name.clone(), config, cache_path, tools, recent_failure);
            entry.set_remembered(remembered);
            *entry
                .cached_fresh_for
                .lock()
                .unwrap_or_else(|e| e.into_inner()) = fresh_for;
            entries.insert(name, Arc::new(entry));
        }
        let inner = Arc::new(Inner {
            servers: entries,
            catalog: RwLock::new(Arc::new(Catalog::default())),
            opts,
            events,
            shutdown: CancellationToken::new(),
            leaving_tasks: Default::default(),
        });
        inner.rebuild_catalog();

        inner.spawn_startups();
        let manager = Arc::new(Self { inner });
        manager.wait_for_startup(began).await?;
        Ok(manager)
    }

    /// Wait for every `required` server (shutting everything down if one failed) and, as
    /// `startup_wait` says, for optional servers that have no cached catalog.
    async fn wait_for_startup(&self, began: tokio::time::Instant) -> Result<(), McpStartupError> {
        // Without a cached catalog, a server's tools only reach the model if we wait for it.
        let grace_deadline = match self.inner.opts.startup_wait {
            StartupWait::UpTo(grace) => Some(began + grace),
            // Each startup is bounded by the server's own startup_timeout_sec.
            StartupWait::UntilReadyOrFailed => None,
        };
        for entry in self.inner.servers.values() {
            let mut rx = entry.state.subscribe();
            if entry.config.required {
                let _ = rx.wait_for(|s| !matches!(s, ConnState::Starting)).await;
                // Copy the message out: a watch borrow must not live across the await below.
                let failed = match &*rx.borrow() {
                    ConnState::Failed(message) => Some(message.clone()),
                    _ => None,
                };
                if let Some(message) = failed {
                    let err = McpStartupError {
                        server: entry.name.clone(),
                        message,
                    };
                    self.shutdown().await;
                    return Err(err);
                }
            } else if !entry.has_cached_tools() {
                let started = rx.wait_for(|s| !matches!(s, ConnState::Starting));
                // It failed in a recent run: a short grace, not its whole startup timeout
                // again (a broken optional server must not cost every headless start 30 s).
                let grace_deadline = match (&entry.recent_failure, grace_deadline) {
                    (Some(_), None) => Some(began + cache::RECENT_FAILURE_GRACE),
                    (_, deadline) => deadline,
                };
                match grace_deadline {
                    Some(deadline) => {
                        let _ = tokio::time::timeout_at(deadline, started).await;
                    }
                    None => {
                        let _ = started.await;
                    }
                }
                let still_starting = matches!(*entry.state.borrow(), ConnState::Starting);
                if let (Some(failure), true) = (&entry.recent_failure, still_starting) {
                    self.warn_skipped(entry, failure);
                }
            }
        }
        Ok(())
    }

    /// Says once, at start, that a server that failed recently is not waited for.
    fn warn_skipped(&self, entry: &ServerEntry, failure: &cache::RecentFailure) {
        let first_line = failure.message.lines().next().unwrap_or_default();
        let message = format!(
            "MCP server `{}` is not waited for: it failed to start {} s ago ({first_line}). Its tools join if it starts now; it is waited for in full again {} minutes after that failure. Fix or disable it (`enabled = false` in [mcp_servers.{}]), or set `required = true` to always wait.",
            entry.name,
            failure.age_secs(),
            cache::FAILURE_MEMORY.as_secs() / 60,
            entry.name,
        );
        let _ = self
            .inner
            .events
            .send(EventMsg::Warning(oi_protocol::protocol::WarningEvent {
                message,
            }));
    }

    /// The current model-visible catalog (ready servers + cached catalogs of starting ones),
    /// filtered by `enabled_tools` / `disabled_tools`.
    pub fn tools(&self) -> Vec<McpToolInfo> {
        // A list past its `ttlMs` is re-listed for the next request.
        self.refresh_stale_catalogs();
        self.inner.catalog_snapshot().tools.clone()
    }

    /// The tool the model knows as `qualified_name` (`mcp__<server>__<tool>`), if any.
    pub fn lookup(&self, qualified_name: &str) -> Option<McpToolInfo> {
        let catalog = self.inner.catalog_snapshot();
        catalog
            .by_name
            .get(qualified_name)
            .map(|i| catalog.tools[*i].clone())
    }

    pub(crate) fn entries(&self) -> impl Iterator<Item = &Arc<ServerEntry>> {
        self.inner.servers.values()
    }

    pub(crate) fn entry(&self, server: &str) -> Result<&Arc<ServerEntry>, crate::McpRequestError> {
        self.inner
            .servers
            .get(server)
            .ok_or_else(|| crate::McpRequestError::UnknownServer {
                server: server.to_string(),
                configured: self.inner.servers.keys().cloned().collect(),
            })
    }

    /// The live connection of a server (waiting while it starts, restarting a crashed one).
    pub(crate) async fn connection(
        &self,
        entry: &Arc<ServerEntry>,
        cancel: &CancellationToken,
    ) -> Result<Arc<Connection>, crate::McpRequestError> {
        self.inner.ready_connection(entry, cancel).await
    }

    /// After tool calls, wait (at most `max`) for `tools/list_changed` refreshes they caused,
    /// so the next model request already carries the new catalog.
    pub async fn settle_tool_list_refresh(&self, max: Duration) {
        // The notification is handled on a task the session loop spawned just before it
        // delivered the call's reply: let it run and register itself.
        for _ in 0..4 {
            tokio::task::yield_now().await;
        }
        let waits = self.inner.servers.values().map(|e| {
            let mut rx = e.refreshing.subscribe();
            async move {
                let _ = rx.wait_for(|n| *n == 0).await;
            }
        });
        let _ = tokio::time::timeout(max, futures::future::join_all(waits)).await;
    }

    /// Names of the configured (enabled) servers.
    pub fn server_names(&self) -> Vec<String> {
        self.inner.servers.keys().cloned().collect()
    }

    /// The startup error of a server that failed, if it did.
    pub fn server_error(&self, server: &str) -> Option<String> {
        match &*self.inner.servers.get(server)?.state.borrow() {
            ConnState::Failed(e) => Some(e.clone()),
            _ => None,
        }
    }

    /// Wait until every server has finished starting (ready or failed).
    pub async fn wait_until_started(&self) {
        for entry in self.inner.servers.values() {
            let mut rx = entry.state.subscribe();
            let _ = rx.wait_for(|s| !matches!(s, ConnState::Starting)).await;
        }
    }

    /// The pid of a stdio server's process, while it runs (for diagnostics and tests).
    pub fn server_pid(&self, server: &str) -> Option<u32> {
        match &*self.inner.servers.get(server)?.state.borrow() {
            ConnState::Ready(conn) => conn
                .child
                .as_ref()
                .filter(|c| c.exit_status().is_none())
                .map(|c| c.pid()),
            _ => None,
        }
    }

    /// TERM then KILL every stdio child's process group; close HTTP sessions. Servers still
    /// starting are cancelled.
    pub async fn shutdown(&self) {
        self.inner.shutdown.cancel();
        let mut closing = Vec::new();
        for entry in self.inner.servers.values() {
            if let ConnState::Ready(conn) = entry.state.send_replace(ConnState::Stopped) {
                closing.push(async move { conn.close().await });
            }
        }
        futures::future::join_all(closing).await;
    }
}

impl Inner {
    /// Start every server on its own task, reporting each one's status as it settles and one
    /// `McpStartupComplete` when all have.
    fn spawn_startups(self: &Arc<Self>) {
        let mut tasks = Vec::new();
        for entry in self.servers.values() {
            send_update(&self.events, &entry.name, McpStartupStatus::Starting);
            let (inner, entry) = (self.clone(), entry.clone());
            tasks.push(tokio::spawn(async move {
                let status = inner.connect(&entry).await;
                send_update(&inner.events, &entry.name, status.clone());
                (entry.name.clone(), status)
            }));
        }
        let events = self.events.clone();
        tokio::spawn(async move {
            let mut done = McpStartupCompleteEvent::default();
            for (name, status) in futures::future::join_all(tasks).await.into_iter().flatten() {
                match status {
                    McpStartupStatus::Ready => done.ready.push(name),
                    McpStartupStatus::Failed { error } => done.failed.push(McpStartupFailure {
                        server: name,
                        error,
                    }),
                    McpStartupStatus::Cancelled | McpStartupStatus::Starting => {
                        done.cancelled.push(name)
                    }
                }
            }
            let _ = events.send(EventMsg::McpStartupComplete(done));
        });
    }
}

impl Drop for McpConnectionManager {
    fn drop(&mut self) {
        // Stops startups in flight; their children are killed when their handles drop.
        self.inner.shutdown.cancel();
    }
}
