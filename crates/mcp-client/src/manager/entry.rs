//! One configured server's entry: its connection state, its tool list (cached or live) and
//! what it has learned about its tools.

use crate::cache;
use crate::connection::Connection;
use crate::protocol::{Era, Negotiated, Prior};
use crate::sniff::TaskRequiredTools;
use oi_config::mcp::McpServerConfig;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, RwLock};
use std::time::Duration;
use tokio::sync::watch;

/// Where a server is in its life.
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

/// One configured server: its config, connection state and what it offers.
pub(crate) struct ServerEntry {
    pub(crate) name: String,
    pub(crate) config: McpServerConfig,
    pub(super) cache_path: PathBuf,
    /// A startup failure of this configuration remembered from a recent run.
    pub(super) recent_failure: Option<cache::RecentFailure>,
    pub(crate) state: watch::Sender<ConnState>,
    pub(crate) tools: RwLock<ToolSet>,
    /// Resources, templates and prompts listed when the server became ready.
    pub(crate) details: RwLock<ServerDetails>,
    /// Tools found to run only as tasks; offered only while the server offers the Tasks
    /// extension (2026-07-28), which this client follows.
    pub(crate) task_required: TaskRequiredTools,
    /// `tools/list_changed` refreshes in flight; the next request waits briefly for them.
    pub(crate) refreshing: watch::Sender<usize>,
    /// Serializes restarts so concurrent calls after a crash start one new process.
    pub(super) restart: tokio::sync::Mutex<()>,
    /// Set once the server has been ready; only such servers are restarted on demand.
    pub(super) was_ready: AtomicBool,
    pub(crate) pending_elicitations: watch::Sender<usize>,
    /// What this server negotiated in an earlier run (`<digest>.protocol.json`).
    pub(super) remembered: std::sync::Mutex<Option<Negotiated>>,
    /// When the live tool list was fetched and how long the server said it stays fresh
    /// (`ttlMs`, 2026-07-28); `None`: no freshness hint (kept until `list_changed`).
    pub(super) tools_freshness: std::sync::Mutex<Option<(std::time::Instant, Duration)>>,
    /// How long the cached catalog read at start is still fresh by its `ttlMs`: its first
    /// start then skips `tools/list`.
    pub(super) cached_fresh_for: std::sync::Mutex<Option<Duration>>,
    /// The live server offers the Tasks extension (`io.modelcontextprotocol/tasks`), so its
    /// task-only tools can be called.
    pub(crate) runs_tasks: AtomicBool,
    /// Said once: a tool of this server tried to ask a question the 2025-11-25 way on a
    /// 2026-07-28 connection.
    pub(super) warned_about_era: AtomicBool,
    /// Tools already reported as unusable (no usable `inputSchema`), so a restart or a list
    /// refresh does not repeat the warning.
    reported_unusable: std::sync::Mutex<std::collections::HashSet<String>>,
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

impl ServerEntry {
    /// A server about to start, showing `tools` (its cached catalog, if any) meanwhile.
    pub(super) fn new(
        name: String,
        config: McpServerConfig,
        cache_path: PathBuf,
        tools: ToolSet,
        recent_failure: Option<cache::RecentFailure>,
    ) -> Self {
        Self {
            name,
            config,
            cache_path,
            recent_failure,
            state: watch::channel(ConnState::Starting).0,
            tools: RwLock::new(tools),
            details: RwLock::new(ServerDetails::default()),
            task_required: TaskRequiredTools::default(),
            refreshing: watch::channel(0).0,
            restart: tokio::sync::Mutex::new(()),
            was_ready: AtomicBool::new(false),
            pending_elicitations: watch::channel(0).0,
            remembered: std::sync::Mutex::new(None),
            tools_freshness: std::sync::Mutex::new(None),
            cached_fresh_for: std::sync::Mutex::new(None),
            runs_tasks: AtomicBool::new(false),
            warned_about_era: AtomicBool::new(false),
            reported_unusable: Default::default(),
        }
    }

    pub(super) fn has_cached_tools(&self) -> bool {
        self.tools
            .read()
            .map(|t| matches!(*t, ToolSet::Cached(_)))
            .unwrap_or(false)
    }

    /// Why the model is not offered this tool (`None`: it is offered).
    pub(crate) fn withheld_reason(&self, name: &str, tool: &Value) -> Option<String> {
        if let Some(why) = crate::tool_schema::unusable(tool) {
            return Some(why);
        }
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
        let runs_tasks = self.runs_tasks.load(std::sync::atomic::Ordering::SeqCst);
        ((declared || learned) && !runs_tasks).then(|| {
            "it runs only as a task, and the server does not offer the Tasks extension of protocol 2026-07-28 (`io.modelcontextprotocol/tasks`); the tasks of 2025-11-25 (SEP-1686 task augmentation) are not supported".to_string()
        })
    }

    /// The warning for tools of the live list that cannot be offered (no usable
    /// `inputSchema`, no name) and were not reported before; `None` when there are none.
    pub(super) fn unusable_tools_warning(&self) -> Option<String> {
        let tools = self.tools.read().unwrap_or_else(|e| e.into_inner());
        let ToolSet::Live(list) = &*tools else {
            return None;
        };
        // (how the user is told which tool, why, what identifies it across lists)
        let bad: Vec<(String, String, String)> = list
            .iter()
            .enumerate()
            .filter_map(|(i, t)| {
                let why = crate::tool_schema::unusable(t)?;
                let name = t
                    .get("name")
                    .and_then(Value::as_str)
                    .filter(|n| !n.trim().is_empty())
                    .map(|n| format!("`{n}`"))
                    .unwrap_or_else(|| format!("number {} in its list", i + 1));
                Some((name, why, t.to_string()))
            })
            .collect();
        let offered = list.len() - bad.len();
        drop(tools);
        let mut reported = self
            .reported_unusable
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let fresh: Vec<&(String, String, String)> = bad
            .iter()
            .filter(|(_, _, identity)| reported.insert(identity.clone()))
            .collect();
        if fresh.is_empty() {
            return None;
        }
        let skipped = fresh
            .iter()
            .map(|(name, why, _)| format!("tool {name} ({why})"))
            .collect::<Vec<_>>()
            .join("; ");
        Some(format!(
            "MCP server `{}`: skipped {skipped}; its other {offered} tool{} {} available. The server's tool list is at fault: tell its maintainer.",
            self.name,
            if offered == 1 { "" } else { "s" },
            if offered == 1 { "is" } else { "are" },
        ))
    }

    /// Forget the tools of a server that failed (cached ones included).
    pub(super) fn clear_tools(&self) {
        *self.tools.write().unwrap_or_else(|e| e.into_inner()) = ToolSet::None;
    }

    pub(super) fn learn_task_required(&self, tool: &str) {
        self.task_required
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(tool.to_string());
    }

    /// The server's tools as it just listed them, with the list's freshness hint (`ttlMs`).
    pub(super) async fn set_live_tools(&self, tools: Vec<Value>, ttl: Option<Duration>) {
        let changed = match &*self.tools.read().unwrap_or_else(|e| e.into_inner()) {
            ToolSet::Cached(old) | ToolSet::Live(old) => old != &tools,
            ToolSet::None => true,
        };
        let hinted = ttl.is_some();
        *self
            .tools_freshness
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = ttl.map(|ttl| (std::time::Instant::now(), ttl));
        // A list with a freshness hint is stored every time: its age counts from now.
        if changed || hinted {
            cache::store(
                self.cache_path.clone(),
                self.name.clone(),
                tools.clone(),
                ttl,
            )
            .await;
        }
        *self.tools.write().unwrap_or_else(|e| e.into_inner()) = ToolSet::Live(tools);
    }

    /// Whether the live tool list is past the freshness the server gave it (`ttlMs`), and
    /// at least `min` old.
    pub(crate) fn tools_stale_for(&self, min: Duration) -> bool {
        self.tools_freshness
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_some_and(|(listed, ttl)| listed.elapsed() >= ttl.max(min))
    }

    /// What earlier runs learned of this server: the era it negotiated, and its cached
    /// catalog while that is still fresh by its `ttlMs` (used once, for the first start).
    pub(super) fn prior(&self) -> Prior {
        let fresh_for = self
            .cached_fresh_for
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let fresh_tools = fresh_for.and_then(|ttl| {
            match &*self.tools.read().unwrap_or_else(|e| e.into_inner()) {
                ToolSet::Cached(tools) => Some((tools.clone(), ttl)),
                _ => None,
            }
        });
        Prior {
            era: self.remembered_era(),
            fresh_tools,
        }
    }

    pub(super) fn remembered_era(&self) -> Option<Era> {
        self.remembered
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .map(|n| n.era)
    }

    /// What an earlier run learned, set before the server starts: its era, and whether it
    /// runs tasks (so its task-only tools are in the cached catalog served meanwhile).
    pub(super) fn set_remembered(&self, remembered: Option<Negotiated>) {
        self.runs_tasks.store(
            remembered.as_ref().is_some_and(|n| n.tasks),
            std::sync::atomic::Ordering::SeqCst,
        );
        *self.remembered.lock().unwrap_or_else(|e| e.into_inner()) = remembered;
    }

    /// Keeps what the server negotiated for its next start.
    pub(super) async fn remember_protocol(&self, negotiated: &Negotiated) {
        let before = self
            .remembered
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .replace(negotiated.clone());
        crate::protocol::remember(
            crate::protocol::memory_path(&self.cache_path),
            negotiated.clone(),
            before,
        )
        .await;
    }
}

/// Counts one `tools/list_changed` refresh as in flight until dropped.
pub(super) struct RefreshInFlight(watch::Sender<usize>);

impl RefreshInFlight {
    pub(super) fn new(counter: &watch::Sender<usize>) -> Self {
        counter.send_modify(|n| *n += 1);
        Self(counter.clone())
    }
}

impl Drop for RefreshInFlight {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}
