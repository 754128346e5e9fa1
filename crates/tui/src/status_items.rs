//! What the status line shows: the items `/statusline` chooses among, their ids (kept in
//! `[tui] status_line`, named like Codex's where the item is the same) and their text.

use oi_protocol::config_types::{AskForApproval, ReasoningEffort, SandboxMode};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Instant;

/// One item of the status line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StatusItem {
    ModelWithReasoning,
    ModelName,
    Provider,
    ContextRemaining,
    UsedTokens,
    Mcp,
    Approvals,
    CurrentDir,
    ThreadTitle,
    ThreadId,
}

/// `(item, id, description)`, in the order `/statusline` lists them.
pub(crate) const STATUS_ITEMS: &[(StatusItem, &str, &str)] = &[
    (
        StatusItem::ModelWithReasoning,
        "model-with-reasoning",
        "the model and its reasoning effort",
    ),
    (StatusItem::ModelName, "model-name", "the model alone"),
    (StatusItem::Provider, "provider", "the model provider"),
    (
        StatusItem::ContextRemaining,
        "context-remaining",
        "how much of the context window is left",
    ),
    (
        StatusItem::UsedTokens,
        "used-tokens",
        "tokens used in this thread",
    ),
    (StatusItem::Mcp, "mcp", "MCP servers ready / configured"),
    (
        StatusItem::Approvals,
        "approvals",
        "the sandbox and approval policy",
    ),
    (
        StatusItem::CurrentDir,
        "current-dir",
        "the working directory",
    ),
    (
        StatusItem::ThreadTitle,
        "thread-title",
        "the thread's title (/title)",
    ),
    (StatusItem::ThreadId, "thread-id", "the thread's id"),
];

/// What the status line shows when `[tui] status_line` is not set.
pub(crate) const DEFAULT_ITEMS: &[StatusItem] = &[
    StatusItem::ModelWithReasoning,
    StatusItem::Provider,
    StatusItem::ContextRemaining,
    StatusItem::Mcp,
    StatusItem::Approvals,
    StatusItem::CurrentDir,
];

impl StatusItem {
    pub fn parse(id: &str) -> Option<Self> {
        STATUS_ITEMS
            .iter()
            .find(|(_, n, _)| *n == id.trim())
            .map(|(i, _, _)| *i)
    }

    pub fn id(self) -> &'static str {
        STATUS_ITEMS
            .iter()
            .find(|(i, _, _)| *i == self)
            .map_or("", |(_, n, _)| n)
    }

    /// The item's text now; `None` when there is nothing to show (no MCP servers, a window
    /// of unknown size, an untitled thread).
    pub fn text(self, s: &StatusInfo) -> Option<String> {
        match self {
            StatusItem::ModelWithReasoning => Some(match s.effort {
                Some(e) => format!("{} {}", s.model, e.as_str()),
                None => s.model.clone(),
            }),
            StatusItem::ModelName => Some(s.model.clone()),
            StatusItem::Provider => Some(s.provider.clone()),
            StatusItem::ContextRemaining => s
                .context_left_percent()
                .map(|p| format!("{p}% context left")),
            StatusItem::UsedTokens => Some(format!("{} tokens used", s.total_tokens)),
            StatusItem::Mcp => (!s.mcp.is_empty()).then(|| {
                let ready = s.mcp.values().filter(|m| **m == McpState::Ready).count();
                format!("MCP {ready}/{}", s.mcp.len())
            }),
            StatusItem::Approvals => match (s.sandbox, s.approval) {
                (Some(sb), Some(ap)) => Some(format!("{sb} · {ap}")),
                _ => None,
            },
            StatusItem::CurrentDir => Some(short_path(&s.cwd)),
            StatusItem::ThreadTitle => s.thread_name.clone(),
            StatusItem::ThreadId => Some(s.thread_id.clone()),
        }
    }
}

/// The ids of `[tui] status_line`, read: the items known, and the ids that are not.
pub(crate) fn parse_items(ids: &[String]) -> (Vec<StatusItem>, Vec<String>) {
    let mut items = Vec::new();
    let mut unknown = Vec::new();
    for id in ids {
        match StatusItem::parse(id) {
            Some(i) if !items.contains(&i) => items.push(i),
            Some(_) => {}
            None => unknown.push(id.clone()),
        }
    }
    (items, unknown)
}

/// The status line's facts, joined as the line shows them.
pub(crate) fn facts(items: &[StatusItem], s: &StatusInfo) -> String {
    items
        .iter()
        .filter_map(|i| i.text(s))
        .filter(|t| !t.is_empty())
        .collect::<Vec<_>>()
        .join(" · ")
}

/// `~/…` for paths under the home directory.
fn short_path(p: &std::path::Path) -> String {
    if let Some(home) = std::env::var_os("HOME").map(std::path::PathBuf::from)
        && let Ok(rest) = p.strip_prefix(&home)
    {
        return format!("~/{}", rest.display());
    }
    p.display().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_round_trip_and_unknown_ids_are_named() {
        for (item, id, _) in STATUS_ITEMS {
            assert_eq!(StatusItem::parse(id), Some(*item));
            assert_eq!(item.id(), *id);
        }
        let (items, unknown) = parse_items(&[
            "model-name".into(),
            "five-hour-limit".into(),
            "model-name".into(),
        ]);
        assert_eq!(items, [StatusItem::ModelName]);
        assert_eq!(unknown, ["five-hour-limit"]);
    }

    #[test]
    fn the_default_line_reads_as_before() {
        let s = StatusInfo {
            model: "m".into(),
            provider: "p".into(),
            cwd: "/w".into(),
            context_window: Some(100),
            context_used: Some(25),
            ..StatusInfo::default()
        };
        assert_eq!(facts(DEFAULT_ITEMS, &s), "m · p · 75% context left · /w");
        assert_eq!(
            facts(&[StatusItem::UsedTokens, StatusItem::ThreadTitle], &s),
            "0 tokens used"
        );
    }
}

/// Per-server MCP state from startup events.
#[derive(Clone, Debug, PartialEq)]
pub enum McpState {
    /// Connecting.
    Starting,
    /// Connected; its tools are offered.
    Ready,
    /// Did not start, with why.
    Failed(String),
    /// Its start was cancelled.
    Cancelled,
}

/// What the status line shows.
#[derive(Clone, Debug, Default)]
pub struct StatusInfo {
    /// The model in use.
    pub model: String,
    /// The config's id of its provider.
    pub provider: String,
    /// The reasoning effort asked for, if any.
    pub effort: Option<ReasoningEffort>,
    /// The thread's working directory.
    pub cwd: PathBuf,
    /// The sandbox commands run in.
    pub sandbox: Option<SandboxMode>,
    /// When the agent asks before acting.
    pub approval: Option<AskForApproval>,
    /// The thread's id.
    pub thread_id: String,
    /// The thread's title (`/title`), when it has one.
    pub thread_name: Option<String>,
    /// The model's context window in tokens, when known.
    pub context_window: Option<i64>,
    /// Where the window figure came from (e.g. "llama.cpp /props n_ctx").
    pub context_window_source: Option<String>,
    /// Tokens the last request put in the window.
    pub context_used: Option<i64>,
    /// Tokens the thread has used in all.
    pub total_tokens: i64,
    /// Each MCP server's state, by name.
    pub mcp: BTreeMap<String, McpState>,
    /// When the running turn started.
    pub turn_started: Option<Instant>,
}
