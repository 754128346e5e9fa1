//! One configured server's entry: its connection state, its tool list (cached or live) and
//! what it has learned about its tools.

use crate::cache;
use crate::connection::Connection;
use crate::sniff::TaskRequiredTools;
use oi_config::mcp::McpServerConfig;
use serde_json::Value;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, RwLock};
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
    /// Tools found to need SEP-1686 task augmentation, which this client does not do.
    pub(crate) task_required: TaskRequiredTools,
    /// `tools/list_changed` refreshes in flight; the next request waits briefly for them.
    pub(super) refreshing: watch::Sender<usize>,
    /// Serializes restarts so concurrent calls after a crash start one new process.
    pub(super) restart: tokio::sync::Mutex<()>,
    /// Set once the server has been ready; only such servers are restarted on demand.
    pub(super) was_ready: AtomicBool,
    pub(super) pending_elicitations: watch::Sender<usize>,
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
        (declared || learned).then(|| {
            "it needs MCP task augmentation (SEP-1686 `taskSupport: required`), which this client does not support".to_string()
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

    pub(super) async fn set_live_tools(&self, tools: Vec<Value>) {
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
