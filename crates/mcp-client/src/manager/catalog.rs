//! The merged tool catalog: every server's offered tools under their qualified names
//! (`mcp__<server>__<tool>`), rebuilt whenever a server's tool list or state changes.

use super::Inner;
use super::entry::{ConnState, ServerEntry, ToolSet};
use crate::McpToolInfo;
use crate::naming::qualify_tools;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// The model-visible tools of every server, by qualified name.
#[derive(Default)]
pub(super) struct Catalog {
    pub(super) tools: Vec<McpToolInfo>,
    pub(super) by_name: HashMap<String, usize>,
}

impl Inner {
    pub(super) fn catalog_snapshot(&self) -> Arc<Catalog> {
        self.catalog
            .read()
            .map(|c| c.clone())
            .unwrap_or_else(|e| e.into_inner().clone())
    }

    /// Recompute qualified names and filters from every server's current tool list.
    pub(super) fn rebuild_catalog(&self) {
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
                input_schema: crate::tool_schema::model_schema(t.get("inputSchema")),
                annotations: t.get("annotations").filter(|a| !a.is_null()).cloned(),
                approval_mode: entry.config.approval_mode_for(tool),
            });
        }
        *slot = Arc::new(catalog);
    }
}
