//! `exec --experimental-json`: the event lines of Codex's own `codex exec --experimental-json`
//! (`thread.started`, `turn.started`, `item.started|updated|completed`, `turn.completed`,
//! `turn.failed`, `error`), which the Codex TypeScript SDK (`@openai/codex-sdk`) reads from
//! the binary it spawns. Built from the same engine events as `--json`; field names follow
//! the SDK's published types.

use oi_protocol::models::TokenUsage;
use oi_protocol::parse_command::shell_join;
use oi_protocol::protocol::{
    EventMsg, ExecCommandStatus, FileChange, McpToolCallEndEvent, PatchApplyEndEvent,
    PatchApplyStatus, PlanStepStatus, PlanUpdateEvent,
};
use serde_json::{Value, json};
use std::collections::HashMap;

/// Turns the events of one run into Codex exec's lines. One per process: item ids count up
/// from `item_0` across the run.
#[derive(Default)]
pub(crate) struct CodexExecLines {
    next_item: usize,
    /// Engine call id → the item id it was announced with.
    items: HashMap<String, String>,
    /// The todo list's item id, once the model wrote a plan this turn.
    todo: Option<(String, Value)>,
    /// The turn's token usage, summed over its model responses.
    usage: TokenUsage,
    /// The message of the error that failed the turn, if one did.
    failure: Option<String>,
}

impl CodexExecLines {
    fn new_id(&mut self) -> String {
        let id = format!("item_{}", self.next_item);
        self.next_item += 1;
        id
    }

    fn started(&mut self, call_id: &str, item: Value) -> Value {
        let id = self.new_id();
        self.items.insert(call_id.to_string(), id.clone());
        json!({"type": "item.started", "item": with_id(id, item)})
    }

    fn completed(&mut self, call_id: Option<&str>, item: Value) -> Value {
        let id = match call_id.and_then(|c| self.items.remove(c)) {
            Some(id) => id,
            None => self.new_id(),
        };
        json!({"type": "item.completed", "item": with_id(id, item)})
    }

    /// The lines `msg` becomes (most events become none).
    pub(crate) fn lines(&mut self, msg: &EventMsg) -> Vec<Value> {
        match msg {
            EventMsg::SessionConfigured(s) => {
                vec![json!({"type": "thread.started", "thread_id": s.thread_id.to_string()})]
            }
            EventMsg::TaskStarted(_) => {
                self.usage = TokenUsage::default();
                self.failure = None;
                self.todo = None;
                vec![json!({"type": "turn.started"})]
            }
            EventMsg::AgentMessage(m) => {
                vec![self.completed(None, json!({"type": "agent_message", "text": m.message}))]
            }
            EventMsg::AgentReasoning(r) => {
                vec![self.completed(None, json!({"type": "reasoning", "text": r.text}))]
            }
            EventMsg::ExecCommandBegin(b) => vec![self.started(
                &b.call_id,
                json!({"type": "command_execution", "command": shell_join(&b.command),
                       "aggregated_output": "", "status": "in_progress"}),
            )],
            EventMsg::ExecCommandEnd(e) => {
                let status = match e.status {
                    ExecCommandStatus::Completed if e.exit_code == 0 => "completed",
                    _ => "failed",
                };
                vec![self.completed(
                    Some(&e.call_id),
                    json!({"type": "command_execution", "command": shell_join(&e.command),
                           "aggregated_output": e.aggregated_output, "exit_code": e.exit_code,
                           "status": status}),
                )]
            }
            EventMsg::PatchApplyEnd(p) => {
                vec![self.completed(Some(&p.call_id), file_change_item(p))]
            }
            EventMsg::McpToolCallBegin(b) => vec![self.started(
                &b.call_id,
                json!({"type": "mcp_tool_call", "server": b.invocation.server,
                       "tool": b.invocation.tool, "arguments": b.invocation.arguments,
                       "status": "in_progress"}),
            )],
            EventMsg::McpToolCallEnd(e) => {
                vec![self.completed(Some(&e.call_id), mcp_tool_call_item(e))]
            }
            EventMsg::PlanUpdate(p) => vec![self.todo_list(p)],
            EventMsg::Warning(w) => {
                vec![self.completed(None, json!({"type": "error", "message": w.message}))]
            }
            EventMsg::TokenCount(t) => {
                if let Some(info) = &t.info {
                    self.usage.add_assign(&info.last_token_usage);
                }
                Vec::new()
            }
            EventMsg::Error(e) => {
                self.failure = Some(e.message.clone());
                Vec::new()
            }
            EventMsg::TaskComplete(_) => self.turn_end(None),
            EventMsg::TurnAborted(a) => {
                let reason = serde_json::to_value(a.reason)
                    .ok()
                    .and_then(|v| v.as_str().map(str::to_string))
                    .unwrap_or_else(|| "aborted".into());
                self.turn_end(Some(format!("the turn was stopped ({reason})")))
            }
            _ => Vec::new(),
        }
    }

    /// The plan as Codex's todo list: started at the first update, updated after.
    fn todo_list(&mut self, p: &PlanUpdateEvent) -> Value {
        let items: Vec<Value> = p
            .plan
            .iter()
            .map(|s| json!({"text": s.step, "completed": s.status == PlanStepStatus::Completed}))
            .collect();
        let (kind, id) = match &self.todo {
            Some((id, _)) => ("item.updated", id.clone()),
            None => ("item.started", self.new_id()),
        };
        let item = with_id(id.clone(), json!({"type": "todo_list", "items": items}));
        self.todo = Some((id, item.clone()));
        json!({"type": kind, "item": item})
    }

    fn turn_end(&mut self, aborted: Option<String>) -> Vec<Value> {
        let mut out = Vec::new();
        if let Some((_, item)) = self.todo.take() {
            out.push(json!({"type": "item.completed", "item": item}));
        }
        match self.failure.take().or(aborted) {
            Some(message) => {
                out.push(json!({"type": "turn.failed", "error": {"message": message}}));
            }
            None => {
                let u = &self.usage;
                out.push(json!({"type": "turn.completed", "usage": {
                    "input_tokens": u.input_tokens,
                    "cached_input_tokens": u.cached_input_tokens,
                    "cache_write_input_tokens": 0,
                    "output_tokens": u.output_tokens,
                    "reasoning_output_tokens": u.reasoning_output_tokens,
                }}));
            }
        }
        out
    }
}

fn with_id(id: String, mut item: Value) -> Value {
    if let Value::Object(map) = &mut item {
        let mut with = serde_json::Map::new();
        with.insert("id".into(), Value::String(id));
        with.extend(std::mem::take(map));
        *map = with;
    }
    item
}

/// A finished patch as Codex's `file_change` item.
fn file_change_item(p: &PatchApplyEndEvent) -> Value {
    let changes: Vec<Value> = p
        .changes
        .iter()
        .map(|(path, change)| {
            let kind = match change {
                FileChange::Add { .. } => "add",
                FileChange::Delete { .. } => "delete",
                FileChange::Update { .. } => "update",
            };
            json!({"path": path, "kind": kind})
        })
        .collect();
    let status = match p.status {
        PatchApplyStatus::Completed => "completed",
        PatchApplyStatus::Failed | PatchApplyStatus::Declined => "failed",
    };
    json!({"type": "file_change", "changes": changes, "status": status})
}

/// A finished MCP tool call as Codex's `mcp_tool_call` item: its result, or its error.
fn mcp_tool_call_item(e: &McpToolCallEndEvent) -> Value {
    let mut item = json!({"type": "mcp_tool_call", "server": e.invocation.server,
                          "tool": e.invocation.tool,
                          "arguments": e.invocation.arguments});
    let failed = match &e.result {
        Ok(r) => r.get("isError").and_then(Value::as_bool) == Some(true),
        Err(_) => true,
    };
    match &e.result {
        Ok(r) => {
            item["result"] = json!({
                "content": r.get("content").cloned().unwrap_or_else(|| json!([])),
                "structured_content": r.get("structuredContent").cloned().unwrap_or(Value::Null),
            });
        }
        Err(message) => item["error"] = json!({"message": message}),
    }
    item["status"] = json!(if failed { "failed" } else { "completed" });
    item
}
