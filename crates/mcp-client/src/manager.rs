//! [`McpConnectionManager`]: every enabled server of one session, started in parallel, their
//! merged tool catalog, and tool calls routed to them.

use crate::cache;
use crate::connection::{Connection, establish};
use crate::handler::{Handler, ProgressRouter, ToolsChangedFn};
use crate::naming::qualify_tools;
use crate::sniff::TaskRequiredTools;
use crate::{McpProgress, McpStartOptions, McpStartupError, McpToolInfo, StartupWait};
use futures::FutureExt;
use oi_config::mcp::McpServerConfig;
use oi_protocol::protocol::{
    EventMsg, McpStartupCompleteEvent, McpStartupFailure, McpStartupStatus, McpStartupUpdateEvent,
};
use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest, ServerResult};
use rmcp::service::PeerRequestOptions;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock, Weak};
use std::time::Duration;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

#[derive(Clone)]
pub(crate) enum ConnState {
    Starting,
    Ready(Arc<Connection>),
    Failed(String),
    Stopped,
}

/// Where a server's tool list came from.
pub(crate) enum ToolSet {
    None,
    /// From the disk cache, shown while the server starts.
    Cached(Vec<Value>),
    /// From the live server.
    Live(Vec<Value>),
}

pub(crate) struct ServerEntry {
    pub(crate) name: String,
    pub(crate) config: McpServerConfig,
    cache_path: PathBuf,
    pub(crate) state: watch::Sender<ConnState>,
    pub(crate) tools: RwLock<ToolSet>,
    /// Resources, templates and prompts listed when the server became ready.
    pub(crate) details: RwLock<ServerDetails>,
    /// Tools found to need SEP-1686 task augmentation, which this client does not do.
    pub(crate) task_required: TaskRequiredTools,
    /// `tools/list_changed` refreshes in flight; the next request waits briefly for them.
    refreshing: watch::Sender<usize>,
    /// Serializes restarts so concurrent calls after a crash start one new process.
    restart: tokio::sync::Mutex<()>,
    /// Set once the server has been ready; only such servers are restarted on demand.
    was_ready: AtomicBool,
    pending_elicitations: watch::Sender<usize>,
}

/// What a ready server offers besides tools (for status displays and the resource tools).
#[derive(Clone, Default)]
pub(crate) struct ServerDetails {
    /// The server advertised the `resources` capability.
    pub(crate) has_resources: bool,
    pub(crate) resources: Vec<Value>,
    pub(crate) resource_templates: Vec<Value>,
    pub(crate) prompts: Vec<Value>,
}

#[derive(Default)]
struct Catalog {
    tools: Vec<McpToolInfo>,
    by_name: HashMap<String, usize>,
}

struct Inner {
    servers: BTreeMap<String, Arc<ServerEntry>>,
    catalog: RwLock<Arc<Catalog>>,
    opts: McpStartOptions,
    events: mpsc::UnboundedSender<EventMsg>,
    shutdown: CancellationToken,
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
            let tools = match cache::load(cache_path.clone(), name.clone()).await {
                Some(t) => ToolSet::Cached(t),
                None => ToolSet::None,
            };
            entries.insert(
                name.clone(),
                Arc::new(ServerEntry {
                    name,
                    config,
                    cache_path,
                    state: watch::channel(ConnState::Starting).0,
                    tools: RwLock::new(tools),
                    details: RwLock::new(ServerDetails::default()),
                    task_required: TaskRequiredTools::default(),
                    refreshing: watch::channel(0).0,
                    restart: tokio::sync::Mutex::new(()),
                    was_ready: AtomicBool::new(false),
                    pending_elicitations: watch::channel(0).0,
                }),
            );
        }
        let inner = Arc::new(Inner {
            servers: entries,
            catalog: RwLock::new(Arc::new(Catalog::default())),
            opts,
            events,
            shutdown: CancellationToken::new(),
        });
        inner.rebuild_catalog();

        let mut tasks = Vec::new();
        for entry in inner.servers.values() {
            send_update(&inner.events, &entry.name, McpStartupStatus::Starting);
            let (inner2, entry2) = (inner.clone(), entry.clone());
            tasks.push(tokio::spawn(async move {
                let status = inner2.connect(&entry2).await;
                send_update(&inner2.events, &entry2.name, status.clone());
                (entry2.name.clone(), status)
            }));
        }
        let events = inner.events.clone();
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

        let manager = Arc::new(Self { inner });
        // Without a cached catalog, a server's tools only reach the model if we wait for it.
        let grace_deadline = match manager.inner.opts.startup_wait {
            StartupWait::UpTo(grace) => Some(began + grace),
            // Each startup is bounded by the server's own startup_timeout_sec.
            StartupWait::UntilReadyOrFailed => None,
        };
        for entry in manager.inner.servers.values() {
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
                    manager.shutdown().await;
                    return Err(err);
                }
            } else if !entry.has_cached_tools() {
                let started = rx.wait_for(|s| !matches!(s, ConnState::Starting));
                match grace_deadline {
                    Some(deadline) => {
                        let _ = tokio::time::timeout_at(deadline, started).await;
                    }
                    None => {
                        let _ = started.await;
                    }
                }
            }
        }
        Ok(manager)
    }

    /// The current model-visible catalog (ready servers + cached catalogs of starting ones),
    /// filtered by `enabled_tools` / `disabled_tools`.
    pub fn tools(&self) -> Vec<McpToolInfo> {
        self.inner.catalog_snapshot().tools.clone()
    }

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

    pub(crate) fn entry(&self, server: &str) -> Result<&Arc<ServerEntry>, String> {
        self.inner.servers.get(server).ok_or_else(|| {
            let known: Vec<&str> = self.inner.servers.keys().map(String::as_str).collect();
            format!(
                "unknown MCP server `{server}`; configured servers: {}",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )
        })
    }

    /// The live connection of a server (waiting while it starts, restarting a crashed one).
    pub(crate) async fn connection(
        &self,
        entry: &Arc<ServerEntry>,
        cancel: &CancellationToken,
    ) -> Result<Arc<Connection>, String> {
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

    /// Calls the tool (waits for its server to be ready, restarts a crashed server), honouring
    /// `tool_timeout_sec` and `cancel` (both send `notifications/cancelled` to the server) and
    /// forwarding progress notifications to `progress`.
    ///
    /// Ok = the raw `CallToolResult` JSON; Err = a human-readable message.
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<serde_json::Map<String, Value>>,
        progress: Option<mpsc::UnboundedSender<McpProgress>>,
        cancel: CancellationToken,
    ) -> Result<Value, String> {
        let entry = self.inner.servers.get(server).ok_or_else(|| {
            format!("unknown MCP server `{server}`; it is not configured or not enabled")
        })?;
        if !entry.config.is_tool_enabled(tool) {
            return Err(format!(
                "tool '{tool}' is disabled for MCP server '{server}'"
            ));
        }
        let conn = self.inner.ready_connection(entry, &cancel).await?;

        let mut params = CallToolRequestParams::new(tool.to_string());
        if let Some(args) = arguments {
            params = params.with_arguments(args);
        }
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        let mut handle = conn
            .peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| format!("could not send tools/call to MCP server `{server}`: {e}"))?;
        let router = conn.progress.clone();
        let _registration = progress.map(|tx| router.register(handle.progress_token.clone(), tx));

        let timeout = entry.config.tool_timeout_or_default();
        let mut deadline = tokio::time::Instant::now() + timeout;
        let mut pending = entry.pending_elicitations.subscribe();
        let outcome = loop {
            tokio::select! {
                biased;
                r = &mut handle.rx => break Outcome::Response(r.ok().map(Box::new)),
                _ = conn.process_exited() => {
                    // A reply written just before the exit may still be in the pipe.
                    let late = tokio::time::timeout(Duration::from_millis(200), &mut handle.rx).await;
                    break Outcome::Response(late.ok().and_then(Result::ok).map(Box::new));
                }
                _ = cancel.cancelled() => break Outcome::Cancelled,
                _ = tokio::time::sleep_until(deadline) => {
                    if *pending.borrow() == 0 {
                        break Outcome::TimedOut;
                    }
                    // Time spent waiting for the user to answer an elicitation does not count.
                    let paused = tokio::time::Instant::now();
                    tokio::select! {
                        _ = pending.wait_for(|n| *n == 0) => {}
                        _ = cancel.cancelled() => break Outcome::Cancelled,
                    }
                    deadline += paused.elapsed();
                }
            }
        };
        match outcome {
            Outcome::Response(Some(reply))
                if !matches!(*reply, Err(rmcp::ServiceError::TransportClosed)) =>
            {
                match *reply {
                    Ok(result) => {
                        let json = call_result_json(result);
                        let refused = json.get("isError").and_then(Value::as_bool) == Some(true)
                            && is_task_required_refusal(&json.to_string());
                        if refused {
                            self.stop_offering_task_tool(entry, tool);
                        }
                        Ok(json)
                    }
                    Err(rmcp::ServiceError::McpError(e))
                        if is_task_required_refusal(&e.message) =>
                    {
                        self.stop_offering_task_tool(entry, tool);
                        Err(format!(
                            "MCP server `{server}` runs `{tool}` only as a task (SEP-1686 `taskSupport: required`), which this client does not support; the tool is no longer offered"
                        ))
                    }
                    Err(rmcp::ServiceError::McpError(e)) => Err(format!(
                        "tool call error: MCP server `{server}` answered tools/call `{tool}` with error {}: {}",
                        e.code.0, e.message
                    )),
                    Err(e) => {
                        // The transport failed (not the tool): reconnect on the next call.
                        conn.mark_broken();
                        Err(format!(
                            "tool call error: {e}. The connection to MCP server `{server}` will be re-established on the next call."
                        ))
                    }
                }
            }
            Outcome::Response(_) => {
                let detail = conn.death_detail().await;
                Err(format!(
                    "MCP server `{server}` stopped during the call to `{tool}`: {detail}. It will be restarted on the next call."
                ))
            }
            Outcome::TimedOut => {
                let _ = handle.cancel(Some("timed out".to_string())).await;
                if conn.is_http() {
                    // An HTTP session that stops answering (e.g. the server restarted and
                    // forgot it) is replaced; a fresh handshake is cheap.
                    conn.mark_broken();
                }
                Err(format!(
                    "timed out awaiting tools/call `{tool}` on MCP server `{server}` after {}s (the server was sent notifications/cancelled). If the tool needs longer, raise `tool_timeout_sec` in [mcp_servers.{server}].",
                    timeout.as_secs_f64()
                ))
            }
            Outcome::Cancelled => {
                let _ = handle
                    .cancel(Some("interrupted by the user".to_string()))
                    .await;
                Err(format!(
                    "the call to `{tool}` on MCP server `{server}` was interrupted"
                ))
            }
        }
    }

    /// A server refused a tool because it needs task augmentation: stop offering it.
    fn stop_offering_task_tool(&self, entry: &ServerEntry, tool: &str) {
        tracing::info!(
            "MCP server `{}`: `{tool}` needs task augmentation (SEP-1686); no longer offered",
            entry.name
        );
        entry.learn_task_required(tool);
        self.inner.rebuild_catalog();
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

impl Drop for McpConnectionManager {
    fn drop(&mut self) {
        // Stops startups in flight; their children are killed when their handles drop.
        self.inner.shutdown.cancel();
    }
}

/// Counts one `tools/list_changed` refresh as in flight until dropped.
struct RefreshInFlight(watch::Sender<usize>);

impl RefreshInFlight {
    fn new(counter: &watch::Sender<usize>) -> Self {
        counter.send_modify(|n| *n += 1);
        Self(counter.clone())
    }
}

impl Drop for RefreshInFlight {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// True when a server refused a call because the tool needs task augmentation (SEP-1686).
fn is_task_required_refusal(text: &str) -> bool {
    text.contains("task augmentation") || text.contains("taskSupport")
}

enum Outcome {
    Response(Option<Box<Result<ServerResult, rmcp::ServiceError>>>),
    Cancelled,
    TimedOut,
}

/// The reply as raw JSON. A reply that parsed as another result type is still a
/// `CallToolResult` on the wire (e.g. `{}`), so it is passed on as-is.
fn call_result_json(result: ServerResult) -> Value {
    match result {
        ServerResult::CallToolResult(r) => serde_json::to_value(r),
        other => serde_json::to_value(other),
    }
    .unwrap_or_else(|e| serde_json::json!({"content":[{"type":"text","text":format!("unreadable tool result: {e}")}],"isError":true}))
}

impl ServerEntry {
    fn has_cached_tools(&self) -> bool {
        self.tools
            .read()
            .map(|t| matches!(*t, ToolSet::Cached(_)))
            .unwrap_or(false)
    }

    /// Why the model is not offered this tool (`None`: it is offered).
    pub(crate) fn withheld_reason(&self, name: &str, tool: &Value) -> Option<String> {
        if !self.config.is_tool_enabled(name) {
            return Some(format!(
                "disabled by enabled_tools/disabled_tools in [mcp_servers.{}]",
                self.name
            ));
        }
        let declared = tool
            .pointer("/execution/taskSupport")
            .and_then(Value::as_str)
            == Some("required");
        let learned = self
            .task_required
            .lock()
            .map(|s| s.contains(name))
            .unwrap_or(false);
        (declared || learned).then(|| {
            "it needs MCP task augmentation (SEP-1686 `taskSupport: required`), which this client does not support".to_string()
        })
    }

    /// Forget the tools of a server that failed (cached ones included).
    fn clear_tools(&self) {
        *self.tools.write().unwrap_or_else(|e| e.into_inner()) = ToolSet::None;
    }

    fn learn_task_required(&self, tool: &str) {
        self.task_required
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(tool.to_string());
    }

    async fn set_live_tools(&self, tools: Vec<Value>) {
        let changed = match &*self.tools.read().unwrap_or_else(|e| e.into_inner()) {
            ToolSet::Cached(old) | ToolSet::Live(old) => old != &tools,
            ToolSet::None => true,
        };
        if changed {
            cache::store(self.cache_path.clone(), self.name.clone(), tools.clone()).await;
        }
        *self.tools.write().unwrap_or_else(|e| e.into_inner()) = ToolSet::Live(tools);
    }
}

impl Inner {
    fn catalog_snapshot(&self) -> Arc<Catalog> {
        self.catalog
            .read()
            .map(|c| c.clone())
            .unwrap_or_else(|e| e.into_inner().clone())
    }

    /// Recompute qualified names and filters from every server's current tool list.
    fn rebuild_catalog(&self) {
        // Hold the write lock while computing, so two servers finishing at once cannot
        // overwrite each other's newer catalog with a stale one.
        let mut slot = self.catalog.write().unwrap_or_else(|e| e.into_inner());
        let mut raw: Vec<(Arc<ServerEntry>, Value)> = Vec::new();
        for entry in self.servers.values() {
            if matches!(
                *entry.state.borrow(),
                ConnState::Failed(_) | ConnState::Stopped
            ) {
                continue;
            }
            let tools = entry.tools.read().unwrap_or_else(|e| e.into_inner());
            let list = match &*tools {
                ToolSet::None => continue,
                ToolSet::Cached(l) | ToolSet::Live(l) => l,
            };
            for t in list {
                let Some(name) = t.get("name").and_then(Value::as_str) else {
                    continue;
                };
                if entry.withheld_reason(name, t).is_none() {
                    raw.push((entry.clone(), t.clone()));
                }
            }
        }
        let pairs: Vec<(&str, &str)> = raw
            .iter()
            .map(|(e, t)| {
                (
                    e.name.as_str(),
                    t.get("name").and_then(Value::as_str).unwrap_or_default(),
                )
            })
            .collect();
        let names = qualify_tools(&pairs);
        let mut catalog = Catalog::default();
        for ((entry, t), qualified_name) in raw.iter().zip(names) {
            let tool = t.get("name").and_then(Value::as_str).unwrap_or_default();
            if catalog.by_name.contains_key(&qualified_name) {
                continue; // a server listed the same tool twice
            }
            let description = t
                .get("description")
                .and_then(Value::as_str)
                .or_else(|| t.get("title").and_then(Value::as_str))
                .unwrap_or_default()
                .to_string();
            catalog
                .by_name
                .insert(qualified_name.clone(), catalog.tools.len());
            catalog.tools.push(McpToolInfo {
                qualified_name,
                server: entry.name.clone(),
                tool: tool.to_string(),
                description,
                input_schema: model_schema(t.get("inputSchema")),
                annotations: t.get("annotations").filter(|a| !a.is_null()).cloned(),
                approval_mode: entry.config.approval_mode_for(tool),
            });
        }
        *slot = Arc::new(catalog);
    }

    /// Start (or restart) one server; returns the status to report.
    async fn connect(self: &Arc<Self>, entry: &Arc<ServerEntry>) -> McpStartupStatus {
        if self.shutdown.is_cancelled() {
            entry.state.send_replace(ConnState::Stopped);
            return McpStartupStatus::Cancelled;
        }
        entry.state.send_replace(ConnState::Starting);
        let handler = self.handler_for(entry);
        let result = tokio::select! {
            r = establish(&entry.name, &entry.config, &self.opts.cwd, &self.opts.home, handler, entry.task_required.clone()) => Some(r),
            _ = self.shutdown.cancelled() => None,
        };
        // The catalog is rebuilt before the new state is published, so whoever waits for
        // "ready" (start(), a call, a test) sees the server's tools at once.
        match result {
            None => {
                entry.state.send_replace(ConnState::Stopped);
                self.rebuild_catalog();
                McpStartupStatus::Cancelled
            }
            Some(Err(error)) => {
                entry.clear_tools();
                self.rebuild_catalog();
                entry.state.send_replace(ConnState::Failed(error.clone()));
                McpStartupStatus::Failed { error }
            }
            Some(Ok(est)) => {
                let conn = est.conn;
                entry.set_live_tools(est.tools).await;
                let has_resources = conn
                    .peer
                    .peer_info()
                    .is_some_and(|info| info.capabilities.resources.is_some());
                entry
                    .details
                    .write()
                    .unwrap_or_else(|e| e.into_inner())
                    .has_resources = has_resources;
                crate::resources::fetch_details(entry.clone(), conn.clone());
                entry.was_ready.store(true, Ordering::SeqCst);
                if self.shutdown.is_cancelled() {
                    conn.close().await;
                    entry.state.send_replace(ConnState::Stopped);
                    self.rebuild_catalog();
                    McpStartupStatus::Cancelled
                } else {
                    self.rebuild_catalog();
                    entry.state.send_replace(ConnState::Ready(conn));
                    McpStartupStatus::Ready
                }
            }
        }
    }

    fn handler_for(self: &Arc<Self>, entry: &Arc<ServerEntry>) -> Handler {
        let weak_inner: Weak<Inner> = Arc::downgrade(self);
        let weak_entry: Weak<ServerEntry> = Arc::downgrade(entry);
        let on_tools_changed: ToolsChangedFn = Arc::new(move |peer| {
            let (weak_inner, weak_entry) = (weak_inner.clone(), weak_entry.clone());
            // Counted before the refetch starts, so a request built meanwhile can wait for it.
            let in_flight = weak_entry
                .upgrade()
                .map(|e| RefreshInFlight::new(&e.refreshing));
            async move {
                let _in_flight = in_flight;
                let (Some(inner), Some(entry)) = (weak_inner.upgrade(), weak_entry.upgrade())
                else {
                    return;
                };
                let listed = tokio::time::timeout(
                    entry.config.tool_timeout_or_default(),
                    peer.list_all_tools(),
                )
                .await;
                match listed {
                    Ok(Ok(tools)) => {
                        let tools = tools
                            .iter()
                            .filter_map(|t| serde_json::to_value(t).ok())
                            .collect();
                        entry.set_live_tools(tools).await;
                        inner.rebuild_catalog();
                    }
                    Ok(Err(e)) => tracing::warn!(
                        "MCP server `{}` changed its tools but tools/list failed: {e}",
                        entry.name
                    ),
                    Err(_) => tracing::warn!(
                        "MCP server `{}` changed its tools but tools/list timed out",
                        entry.name
                    ),
                }
            }
            .boxed()
        });
        Handler {
            server: entry.name.clone(),
            roots: entry.config.resolved_roots(&self.opts.cwd),
            elicitation: self.opts.elicitation.clone(),
            progress: ProgressRouter::default(),
            pending_elicitations: entry.pending_elicitations.clone(),
            on_tools_changed,
        }
    }

    /// The server's live connection, waiting while it starts and restarting it if it died.
    async fn ready_connection(
        self: &Arc<Self>,
        entry: &Arc<ServerEntry>,
        cancel: &CancellationToken,
    ) -> Result<Arc<Connection>, String> {
        let mut rx = entry.state.subscribe();
        tokio::select! {
            _ = rx.wait_for(|s| !matches!(s, ConnState::Starting)) => {}
            _ = cancel.cancelled() => return Err(format!(
                "interrupted while waiting for MCP server `{}` to start", entry.name
            )),
        }
        let state = rx.borrow().clone();
        match state {
            ConnState::Ready(conn) if conn.is_alive() => return Ok(conn),
            ConnState::Stopped => {
                return Err("the MCP connection manager has been shut down".to_string());
            }
            ConnState::Failed(e) if !entry.was_ready.load(Ordering::SeqCst) => return Err(e),
            ConnState::Starting | ConnState::Ready(_) | ConnState::Failed(_) => {}
        }
        let _guard = entry.restart.lock().await;
        // Someone else may have restarted it while we waited for the lock.
        let current = entry.state.borrow().clone();
        if let ConnState::Ready(conn) = current {
            if conn.is_alive() {
                return Ok(conn);
            }
            conn.close().await;
        }
        tracing::info!("restarting MCP server `{}`", entry.name);
        send_update(&self.events, &entry.name, McpStartupStatus::Starting);
        let status = tokio::select! {
            s = self.connect(entry) => s,
            _ = cancel.cancelled() => {
                return Err(format!("interrupted while restarting MCP server `{}`", entry.name));
            }
        };
        send_update(&self.events, &entry.name, status.clone());
        let current = entry.state.borrow().clone();
        match (status, current) {
            (McpStartupStatus::Ready, ConnState::Ready(conn)) => Ok(conn),
            (McpStartupStatus::Failed { error }, _) => Err(format!(
                "MCP server `{}` could not be restarted: {error}",
                entry.name
            )),
            _ => Err(format!("MCP server `{}` is not running", entry.name)),
        }
    }
}

/// The input schema as the model should see it: an object schema with `properties`.
fn model_schema(schema: Option<&Value>) -> Value {
    match schema {
        Some(Value::Object(map)) => {
            let mut map = map.clone();
            map.entry("type").or_insert_with(|| Value::from("object"));
            map.entry("properties")
                .or_insert_with(|| Value::Object(Default::default()));
            Value::Object(map)
        }
        _ => serde_json::json!({"type": "object", "properties": {}}),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_gets_properties() {
        assert_eq!(
            model_schema(Some(&serde_json::json!({"type":"object"}))),
            serde_json::json!({"type":"object","properties":{}})
        );
        let full = serde_json::json!({"type":"object","properties":{"a":{"type":"string"}},"required":["a"]});
        assert_eq!(model_schema(Some(&full)), full);
        assert_eq!(
            model_schema(None),
            serde_json::json!({"type":"object","properties":{}})
        );
    }
}
