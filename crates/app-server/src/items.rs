//! Engine events → v2 items and notifications, for one turn.
//!
//! [`ItemMapper`] is a pure state machine: feed it a turn's events in order and it returns
//! the notifications to send (`item/started`, `item/*/delta`, `item/completed`,
//! `thread/tokenUsage/updated`, `error`, `turn/completed`, …). The same mapper rebuilds
//! the items of stored turns for `thread/read` / `thread/resume`.

use crate::protocol::{TurnView, turn, turn_error};
use oi_protocol::models::TokenUsage;
use oi_protocol::parse_command::ParsedCommand;
use oi_protocol::parse_command::display_command;
use oi_protocol::protocol::{
    ApplyPatchApprovalRequestEvent, ErrorInfo, Event, EventMsg, ExecApprovalRequestEvent,
    ExecCommandSource, FileChange, McpInvocation, McpStartupStatus,
};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

/// One notification to send.
#[derive(Clone, Debug, PartialEq)]
pub struct Note {
    pub method: &'static str,
    pub params: Value,
}

/// How a turn ended, once it has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TurnEnd {
    Completed,
    Failed,
    Interrupted,
}

impl TurnEnd {
    pub fn as_str(&self) -> &'static str {
        match self {
            TurnEnd::Completed => "completed",
            TurnEnd::Failed => "failed",
            TurnEnd::Interrupted => "interrupted",
        }
    }
}

pub struct ItemMapper {
    thread_id: String,
    turn_id: String,
    /// Stored turns get ids derived from the turn id, so repeated reads agree.
    stable_ids: bool,
    seq: u64,
    agent: Option<(String, String)>,
    reasoning: Option<(String, String)>,
    /// Tool items started and not yet completed, by call id.
    open: HashMap<String, Value>,
    /// Bytes of a UTF-8 character split across output chunks, by call id.
    carry: HashMap<String, Vec<u8>>,
    error: Option<Value>,
    pub started_at: Option<i64>,
    pub ended: Option<TurnEnd>,
}

impl ItemMapper {
    pub fn new(thread_id: impl Into<String>, turn_id: impl Into<String>) -> Self {
        Self {
            thread_id: thread_id.into(),
            turn_id: turn_id.into(),
            stable_ids: false,
            seq: 0,
            agent: None,
            reasoning: None,
            open: HashMap::new(),
            carry: HashMap::new(),
            error: None,
            started_at: None,
            ended: None,
        }
    }

    /// A mapper for a turn read back from disk.
    pub fn for_stored(thread_id: impl Into<String>, turn_id: impl Into<String>) -> Self {
        Self {
            stable_ids: true,
            ..Self::new(thread_id, turn_id)
        }
    }

    pub fn turn_id(&self) -> &str {
        &self.turn_id
    }

    fn new_item_id(&mut self) -> String {
        self.seq += 1;
        if self.stable_ids {
            format!("{}-item-{}", self.turn_id, self.seq)
        } else {
            oi_protocol::ids::new_id()
        }
    }

    fn note(&self, method: &'static str, mut params: Value) -> Note {
        params["threadId"] = json!(self.thread_id);
        params["turnId"] = json!(self.turn_id);
        Note { method, params }
    }

    fn started(&self, item: &Value) -> Note {
        self.note("item/started", json!({ "item": item }))
    }

    fn completed(&self, item: &Value) -> Note {
        self.note("item/completed", json!({ "item": item }))
    }

    /// Maps one event. Events of other turns yield only thread-level notifications.
    pub fn on_event(&mut self, ev: &Event) -> Vec<Note> {
        let ours = ev.id == self.turn_id;
        let mut out = Vec::new();
        match &ev.msg {
            EventMsg::Warning(w) => out.push(Note {
                method: "warning",
                params: json!({"threadId": self.thread_id, "message": w.message}),
            }),
            EventMsg::McpStartupUpdate(u) => {
                let (status, error) = match &u.status {
                    McpStartupStatus::Starting => ("starting", None),
                    McpStartupStatus::Ready => ("ready", None),
                    McpStartupStatus::Failed { error } => ("failed", Some(error.clone())),
                    McpStartupStatus::Cancelled => ("cancelled", None),
                };
                out.push(Note {
                    method: "mcpServer/startupStatus/updated",
                    params: json!({"name": u.server, "status": status, "error": error}),
                });
            }
            _ if !ours => {}
            msg => self.on_turn_event(msg, &mut out),
        }
        out
    }

    /// Maps an event of this turn, by kind: messages, commands, file changes, MCP calls,
    /// and the turn's own state (usage, errors, its end).
    fn on_turn_event(&mut self, msg: &EventMsg, out: &mut Vec<Note>) {
        match msg {
            EventMsg::TaskStarted(e) => {
                self.started_at = self.started_at.or(e.started_at);
            }
            EventMsg::UserMessage(_)
            | EventMsg::AgentMessageDelta(_)
            | EventMsg::AgentMessage(_)
            | EventMsg::AgentReasoningDelta(_)
            | EventMsg::AgentReasoning(_) => self.on_message_event(msg, out),
            EventMsg::ExecCommandBegin(_)
            | EventMsg::ExecCommandOutputDelta(_)
            | EventMsg::ExecCommandEnd(_) => self.on_command_event(msg, out),
            EventMsg::PatchApplyBegin(_) | EventMsg::PatchApplyEnd(_) => {
                self.on_file_change_event(msg, out)
            }
            EventMsg::McpToolCallBegin(_)
            | EventMsg::McpToolCallProgress(_)
            | EventMsg::McpToolCallEnd(_) => self.on_mcp_call_event(msg, out),
            _ => self.on_turn_state_event(msg, out),
        }
    }

    /// User, agent and reasoning messages → message items and their deltas.
    fn on_message_event(&mut self, msg: &EventMsg, out: &mut Vec<Note>) {
        match msg {
            EventMsg::UserMessage(m) => {
                let mut content = Vec::new();
                if !m.message.is_empty() {
                    content.push(json!({"type": "text", "text": m.message, "text_elements": []}));
                }
                for url in m.images.iter().flatten() {
                    content.push(json!({"type": "image", "url": url}));
                }
                for path in &m.local_images {
                    content.push(json!({"type": "localImage", "path": path}));
                }
                let item =
                    json!({"type": "userMessage", "id": self.new_item_id(), "content": content});
                out.push(self.started(&item));
                out.push(self.completed(&item));
            }
            EventMsg::AgentMessageDelta(d) => {
                let id = self.open_agent(out);
                if let Some((_, text)) = self.agent.as_mut() {
                    text.push_str(&d.delta);
                }
                out.push(self.note(
                    "item/agentMessage/delta",
                    json!({"itemId": id, "delta": d.delta}),
                ));
            }
            EventMsg::AgentMessage(m) => {
                let id = self.open_agent(out);
                self.agent = None;
                let mut item = json!({"type": "agentMessage", "id": id, "text": m.message});
                if let Some(phase) = &m.phase {
                    item["phase"] = json!(phase);
                }
                out.push(self.completed(&item));
            }
            EventMsg::AgentReasoningDelta(d) => {
                let id = self.open_reasoning(out);
                if let Some((_, text)) = self.reasoning.as_mut() {
                    text.push_str(&d.delta);
                }
                out.push(self.note(
                    "item/reasoning/textDelta",
                    json!({"itemId": id, "delta": d.delta, "contentIndex": 0}),
                ));
            }
            EventMsg::AgentReasoning(r) => {
                let id = self.open_reasoning(out);
                self.reasoning = None;
                let item =
                    json!({"type": "reasoning", "id": id, "summary": [], "content": [r.text]});
                out.push(self.completed(&item));
            }
            _ => {}
        }
    }

    /// A command's begin, output and end → a `commandExecution` item.
    fn on_command_event(&mut self, msg: &EventMsg, out: &mut Vec<Note>) {
        match msg {
            EventMsg::ExecCommandBegin(b) => {
                let item = command_item(
                    &b.call_id,
                    &b.command,
                    &b.cwd,
                    &b.parsed_cmd,
                    b.source,
                    "inProgress",
                );
                self.start_tool(&b.call_id, item, out);
            }
            EventMsg::ExecCommandOutputDelta(d) => {
                let delta = self.decode_chunk(&d.call_id, &d.chunk);
                if !delta.is_empty() {
                    out.push(self.note(
                        "item/commandExecution/outputDelta",
                        json!({"itemId": d.call_id, "delta": delta}),
                    ));
                }
            }
            EventMsg::ExecCommandEnd(e) => {
                self.carry.remove(&e.call_id);
                let status = match e.status {
                    oi_protocol::protocol::ExecCommandStatus::Completed => "completed",
                    oi_protocol::protocol::ExecCommandStatus::Failed => "failed",
                    oi_protocol::protocol::ExecCommandStatus::Declined => "declined",
                };
                let mut item = command_item(
                    &e.call_id,
                    &e.command,
                    &e.cwd,
                    &e.parsed_cmd,
                    e.source,
                    status,
                );
                if status != "declined" {
                    item["aggregatedOutput"] = json!(e.aggregated_output);
                    item["exitCode"] = json!(e.exit_code);
                    item["durationMs"] = json!(e.duration.as_millis());
                }
                self.complete_tool(&e.call_id, item, out);
            }
            _ => {}
        }
    }

    /// A patch's begin and end → a `fileChange` item.
    fn on_file_change_event(&mut self, msg: &EventMsg, out: &mut Vec<Note>) {
        match msg {
            EventMsg::PatchApplyBegin(b) => {
                let item = file_change_item(&b.call_id, &b.changes, "inProgress");
                self.start_tool(&b.call_id, item, out);
            }
            EventMsg::PatchApplyEnd(e) => {
                let status = match e.status {
                    oi_protocol::protocol::PatchApplyStatus::Completed => "completed",
                    oi_protocol::protocol::PatchApplyStatus::Failed => "failed",
                    oi_protocol::protocol::PatchApplyStatus::Declined => "declined",
                };
                let item = file_change_item(&e.call_id, &e.changes, status);
                self.complete_tool(&e.call_id, item, out);
            }
            _ => {}
        }
    }

    /// An MCP tool call's begin, progress and end → an `mcpToolCall` item.
    fn on_mcp_call_event(&mut self, msg: &EventMsg, out: &mut Vec<Note>) {
        match msg {
            EventMsg::McpToolCallBegin(b) => {
                let item = mcp_item(&b.call_id, &b.invocation, "inProgress");
                self.start_tool(&b.call_id, item, out);
            }
            EventMsg::McpToolCallProgress(p) => {
                let message = p.message.clone().unwrap_or_else(|| match p.total {
                    Some(t) => format!("{}/{t}", p.progress),
                    None => format!("{}", p.progress),
                });
                out.push(self.note(
                    "item/mcpToolCall/progress",
                    json!({"itemId": p.call_id, "message": message}),
                ));
            }
            EventMsg::McpToolCallEnd(e) => {
                let failed = match &e.result {
                    Ok(v) => v.get("isError").and_then(Value::as_bool).unwrap_or(false),
                    Err(_) => true,
                };
                let mut item = mcp_item(
                    &e.call_id,
                    &e.invocation,
                    if failed { "failed" } else { "completed" },
                );
                match &e.result {
                    Ok(v) => {
                        let mut result =
                            json!({"content": v.get("content").cloned().unwrap_or(json!([]))});
                        if let Some(s) = v.get("structuredContent") {
                            result["structuredContent"] = s.clone();
                        }
                        if let Some(m) = v.get("_meta") {
                            result["_meta"] = m.clone();
                        }
                        item["result"] = result;
                    }
                    Err(message) => item["error"] = json!({"message": message}),
                }
                item["durationMs"] = json!(e.duration.as_millis());
                self.complete_tool(&e.call_id, item, out);
            }
            _ => {}
        }
    }

    /// Token usage, errors, compaction and the turn's end.
    fn on_turn_state_event(&mut self, msg: &EventMsg, out: &mut Vec<Note>) {
        match msg {
            EventMsg::TokenCount(t) => {
                if let Some(info) = &t.info {
                    out.push(self.note(
                        "thread/tokenUsage/updated",
                        json!({"tokenUsage": {
                            "total": usage(&info.total_token_usage),
                            "last": usage(&info.last_token_usage),
                            "modelContextWindow": info.model_context_window,
                        }}),
                    ));
                }
            }
            EventMsg::Error(e) => {
                let err = turn_error(&e.message, error_info(e.codex_error_info.as_ref()));
                self.error = Some(err.clone());
                out.push(self.note("error", json!({"error": err, "willRetry": false})));
            }
            EventMsg::StreamError(e) => {
                let mut err = turn_error(&e.message, error_info(e.codex_error_info.as_ref()));
                if let Some(d) = &e.additional_details {
                    err["additionalDetails"] = json!(d);
                }
                out.push(self.note("error", json!({"error": err, "willRetry": true})));
            }
            EventMsg::TaskComplete(c) => {
                let end = if self.error.is_some() {
                    TurnEnd::Failed
                } else {
                    TurnEnd::Completed
                };
                self.end(end, c.completed_at, c.duration_ms, out);
            }
            EventMsg::TurnAborted(a) => {
                self.end(TurnEnd::Interrupted, a.completed_at, a.duration_ms, out);
            }
            EventMsg::ContextCompacted(_) => {
                let item = json!({"type": "contextCompaction", "id": self.new_item_id()});
                out.push(self.started(&item));
                out.push(self.completed(&item));
                // Deprecated in the reference, still sent for clients that listen for it.
                out.push(self.note("thread/compacted", json!({})));
            }
            _ => {}
        }
    }

    /// Shows the pending command before its approval request (the reference's order).
    pub fn exec_approval_pending(&mut self, ev: &ExecApprovalRequestEvent) -> Vec<Note> {
        let mut out = Vec::new();
        let item = command_item(
            &ev.call_id,
            &ev.command,
            &ev.cwd,
            &ev.parsed_cmd,
            ExecCommandSource::Agent,
            "inProgress",
        );
        self.start_tool(&ev.call_id, item, &mut out);
        out
    }

    pub fn patch_approval_pending(&mut self, ev: &ApplyPatchApprovalRequestEvent) -> Vec<Note> {
        let mut out = Vec::new();
        let item = file_change_item(&ev.call_id, &ev.changes, "inProgress");
        self.start_tool(&ev.call_id, item, &mut out);
        out
    }

    /// Ends the turn without a terminal event from the engine (the thread went away).
    pub fn abandon(&mut self, message: &str) -> Vec<Note> {
        let mut out = Vec::new();
        if self.ended.is_none() {
            self.error = Some(turn_error(message, None));
            self.end(TurnEnd::Failed, None, None, &mut out);
        }
        out
    }

    fn end(
        &mut self,
        end: TurnEnd,
        completed_at: Option<i64>,
        duration_ms: Option<u64>,
        out: &mut Vec<Note>,
    ) {
        if let Some((id, text)) = self.agent.take() {
            let item = json!({"type": "agentMessage", "id": id, "text": text});
            out.push(self.completed(&item));
        }
        if let Some((id, text)) = self.reasoning.take() {
            let item = json!({"type": "reasoning", "id": id, "summary": [], "content": [text]});
            out.push(self.completed(&item));
        }
        // Tool calls cut off by the end of the turn.
        let mut open: Vec<(String, Value)> = self.open.drain().collect();
        open.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, mut item) in open {
            item["status"] = json!(if end == TurnEnd::Completed {
                "completed"
            } else {
                "failed"
            });
            out.push(self.completed(&item));
        }
        self.ended = Some(end);
        let t = turn(TurnView {
            id: &self.turn_id,
            status: end.as_str(),
            error: if end == TurnEnd::Failed {
                self.error.clone()
            } else {
                None
            },
            started_at: self.started_at,
            completed_at,
            duration_ms,
            items: Vec::new(),
        });
        out.push(Note {
            method: "turn/completed",
            params: json!({"threadId": self.thread_id, "turn": t}),
        });
    }

    /// The turn's error, once one was reported.
    pub fn error(&self) -> Option<&Value> {
        self.error.as_ref()
    }

    fn open_agent(&mut self, out: &mut Vec<Note>) -> String {
        if let Some((id, _)) = &self.agent {
            return id.clone();
        }
        let id = self.new_item_id();
        out.push(self.started(&json!({"type": "agentMessage", "id": id, "text": ""})));
        self.agent = Some((id.clone(), String::new()));
        id
    }

    fn open_reasoning(&mut self, out: &mut Vec<Note>) -> String {
        if let Some((id, _)) = &self.reasoning {
            return id.clone();
        }
        let id = self.new_item_id();
        out.push(
            self.started(&json!({"type": "reasoning", "id": id, "summary": [], "content": []})),
        );
        self.reasoning = Some((id.clone(), String::new()));
        id
    }

    fn start_tool(&mut self, call_id: &str, item: Value, out: &mut Vec<Note>) {
        if self.open.contains_key(call_id) {
            return;
        }
        out.push(self.started(&item));
        self.open.insert(call_id.to_string(), item);
    }

    fn complete_tool(&mut self, call_id: &str, item: Value, out: &mut Vec<Note>) {
        if self.open.remove(call_id).is_none() {
            out.push(self.started(&item));
        }
        out.push(self.completed(&item));
    }

    /// Base64 chunk → text, holding back a UTF-8 character split across chunks.
    fn decode_chunk(&mut self, call_id: &str, chunk: &str) -> String {
        use base64::Engine;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(chunk)
            .unwrap_or_else(|_| chunk.as_bytes().to_vec());
        let mut buf = self.carry.remove(call_id).unwrap_or_default();
        buf.extend_from_slice(&bytes);
        let keep = incomplete_utf8_tail(&buf);
        let tail = buf.split_off(buf.len() - keep);
        if !tail.is_empty() {
            self.carry.insert(call_id.to_string(), tail);
        }
        String::from_utf8_lossy(&buf).into_owned()
    }
}

/// How many trailing bytes of `b` start a UTF-8 character that is not complete yet.
fn incomplete_utf8_tail(b: &[u8]) -> usize {
    for back in 1..=3.min(b.len()) {
        let byte = b[b.len() - back];
        if byte & 0b1100_0000 == 0b1000_0000 {
            continue; // continuation byte: keep looking for the lead byte
        }
        let need = match byte {
            0xC0..=0xDF => 2,
            0xE0..=0xEF => 3,
            0xF0..=0xF7 => 4,
            _ => return 0,
        };
        return if need > back { back } else { 0 };
    }
    0
}

fn usage(u: &TokenUsage) -> Value {
    json!({
        "totalTokens": u.total_tokens,
        "inputTokens": u.input_tokens,
        "cachedInputTokens": u.cached_input_tokens,
        "outputTokens": u.output_tokens,
        "reasoningOutputTokens": u.reasoning_output_tokens,
    })
}

/// `ErrorInfo` in the v2 spelling (camelCase tags).
fn error_info(info: Option<&ErrorInfo>) -> Option<Value> {
    let info = info?;
    let code = |name: &str, status: &Option<u16>| json!({ name: {"httpStatusCode": status} });
    Some(match info {
        ErrorInfo::ContextWindowExceeded => json!("contextWindowExceeded"),
        ErrorInfo::UsageLimitExceeded => json!("usageLimitExceeded"),
        ErrorInfo::ServerOverloaded => json!("serverOverloaded"),
        ErrorInfo::InternalServerError => json!("internalServerError"),
        ErrorInfo::Unauthorized => json!("unauthorized"),
        ErrorInfo::BadRequest => json!("badRequest"),
        ErrorInfo::SandboxError => json!("sandboxError"),
        ErrorInfo::Other => json!("other"),
        ErrorInfo::HttpConnectionFailed { http_status_code } => {
            code("httpConnectionFailed", http_status_code)
        }
        ErrorInfo::ResponseStreamConnectionFailed { http_status_code } => {
            code("responseStreamConnectionFailed", http_status_code)
        }
        ErrorInfo::ResponseStreamDisconnected { http_status_code } => {
            code("responseStreamDisconnected", http_status_code)
        }
        ErrorInfo::ResponseTooManyFailedAttempts { http_status_code } => {
            code("responseTooManyFailedAttempts", http_status_code)
        }
    })
}

/// `CommandAction`s from the engine's parsed command.
pub fn command_actions(parsed: &[ParsedCommand]) -> Value {
    Value::Array(
        parsed
            .iter()
            .map(|p| match p {
                ParsedCommand::Read { cmd, name, path } => {
                    json!({"type": "read", "command": cmd, "name": name, "path": path})
                }
                ParsedCommand::ListFiles { cmd, path } => {
                    json!({"type": "listFiles", "command": cmd, "path": path})
                }
                ParsedCommand::Search { cmd, query, path } => {
                    json!({"type": "search", "command": cmd, "query": query, "path": path})
                }
                ParsedCommand::Unknown { cmd } => json!({"type": "unknown", "command": cmd}),
            })
            .collect(),
    )
}

fn command_item(
    call_id: &str,
    argv: &[String],
    cwd: &Path,
    parsed: &[ParsedCommand],
    source: ExecCommandSource,
    status: &str,
) -> Value {
    json!({
        "type": "commandExecution",
        "id": call_id,
        "command": display_command(argv),
        "cwd": cwd,
        "processId": null,
        "source": match source {
            ExecCommandSource::Agent => "agent",
            ExecCommandSource::UserShell => "userShell",
        },
        "status": status,
        "commandActions": command_actions(parsed),
        "aggregatedOutput": null,
        "exitCode": null,
        "durationMs": null,
    })
}

fn file_change_item(call_id: &str, changes: &BTreeMap<PathBuf, FileChange>, status: &str) -> Value {
    let changes: Vec<Value> = changes
        .iter()
        .map(|(path, change)| match change {
            FileChange::Add { content } => {
                json!({"path": path, "kind": {"type": "add"}, "diff": content})
            }
            FileChange::Delete { content } => {
                json!({"path": path, "kind": {"type": "delete"}, "diff": content})
            }
            FileChange::Update {
                unified_diff,
                move_path,
            } => json!({
                "path": path,
                "kind": {"type": "update", "move_path": move_path},
                "diff": unified_diff,
            }),
        })
        .collect();
    json!({"type": "fileChange", "id": call_id, "changes": changes, "status": status})
}

fn mcp_item(call_id: &str, inv: &McpInvocation, status: &str) -> Value {
    json!({
        "type": "mcpToolCall",
        "id": call_id,
        "server": inv.server,
        "tool": inv.tool,
        "status": status,
        "arguments": inv.arguments.clone().unwrap_or(Value::Null),
        "result": null,
        "error": null,
        "durationMs": null,
    })
}

/// The completed items of a stored turn, rebuilt from its recorded events.
pub fn stored_turn_items(
    thread_id: &str,
    turn: &oi_thread_store::StoredTurn,
) -> (Vec<Value>, Option<Value>) {
    let mut m = ItemMapper::for_stored(thread_id, turn.id.clone());
    let mut items = Vec::new();
    for item in &turn.items {
        if let oi_thread_store::RolloutItem::EventMsg(msg) = item {
            let ev = Event {
                id: turn.id.clone(),
                msg: msg.clone(),
            };
            for n in m.on_event(&ev) {
                if n.method == "item/completed" {
                    items.push(n.params["item"].clone());
                }
            }
        }
    }
    let error = turn
        .error
        .as_deref()
        .map(|e| turn_error(e, None))
        .or_else(|| m.error().cloned());
    (items, error)
}

#[cfg(test)]
mod tests {
    use super::*;
    use oi_protocol::protocol::*;

    fn ev(msg: EventMsg) -> Event {
        Event {
            id: "t1".into(),
            msg,
        }
    }

    fn methods(notes: &[Note]) -> Vec<&str> {
        notes.iter().map(|n| n.method).collect()
    }

    #[test]
    fn agent_message_deltas_share_one_item() {
        let mut m = ItemMapper::new("th", "t1");
        let a = m.on_event(&ev(EventMsg::AgentMessageDelta(AgentMessageDeltaEvent {
            delta: "Hel".into(),
        })));
        let b = m.on_event(&ev(EventMsg::AgentMessageDelta(AgentMessageDeltaEvent {
            delta: "lo".into(),
        })));
        let c = m.on_event(&ev(EventMsg::AgentMessage(AgentMessageEvent {
            message: "Hello".into(),
            phase: None,
            memory_citation: None,
        })));
        assert_eq!(methods(&a), ["item/started", "item/agentMessage/delta"]);
        assert_eq!(methods(&b), ["item/agentMessage/delta"]);
        assert_eq!(methods(&c), ["item/completed"]);
        let id = &a[0].params["item"]["id"];
        assert_eq!(&b[0].params["itemId"], id);
        assert_eq!(&c[0].params["item"]["id"], id);
        assert_eq!(c[0].params["item"]["text"], "Hello");
        assert_eq!(c[0].params["threadId"], "th");
        assert_eq!(c[0].params["turnId"], "t1");
    }

    #[test]
    fn commands_map_with_output_and_split_utf8() {
        use base64::Engine;
        let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
        let mut m = ItemMapper::new("th", "t1");
        let argv: Vec<String> = ["bash", "-lc", "echo é"].map(String::from).to_vec();
        let begin = m.on_event(&ev(EventMsg::ExecCommandBegin(ExecCommandBeginEvent {
            call_id: "c1".into(),
            turn_id: "t1".into(),
            command: argv.clone(),
            cwd: "/w".into(),
            parsed_cmd: vec![],
            source: ExecCommandSource::Agent,
        })));
        assert_eq!(begin[0].params["item"]["command"], "echo é");
        let e = "é".as_bytes();
        let d1 = m.on_event(&ev(EventMsg::ExecCommandOutputDelta(
            ExecCommandOutputDeltaEvent {
                call_id: "c1".into(),
                stream: ExecOutputStream::Stdout,
                chunk: b64(&e[..1]),
            },
        )));
        assert!(d1.is_empty(), "half a character is held back");
        let d2 = m.on_event(&ev(EventMsg::ExecCommandOutputDelta(
            ExecCommandOutputDeltaEvent {
                call_id: "c1".into(),
                stream: ExecOutputStream::Stdout,
                chunk: b64(&[e[1], b'\n']),
            },
        )));
        assert_eq!(d2[0].params["delta"], "é\n");
        let end = m.on_event(&ev(EventMsg::ExecCommandEnd(ExecCommandEndEvent {
            call_id: "c1".into(),
            turn_id: "t1".into(),
            command: argv,
            cwd: "/w".into(),
            parsed_cmd: vec![],
            source: ExecCommandSource::Agent,
            stdout: "é\n".into(),
            stderr: String::new(),
            aggregated_output: "é\n".into(),
            exit_code: 0,
            duration: std::time::Duration::from_millis(12).into(),
            formatted_output: String::new(),
            status: ExecCommandStatus::Completed,
        })));
        assert_eq!(methods(&end), ["item/completed"]);
        let item = &end[0].params["item"];
        assert_eq!(item["status"], "completed");
        assert_eq!(item["exitCode"], 0);
        assert_eq!(item["durationMs"], 12);
    }

    #[test]
    fn errors_fail_the_turn_and_aborts_interrupt_it() {
        let mut m = ItemMapper::new("th", "t1");
        m.on_event(&ev(EventMsg::Error(ErrorEvent {
            message: "boom".into(),
            codex_error_info: Some(ErrorInfo::HttpConnectionFailed {
                http_status_code: Some(500),
            }),
        })));
        let done = m.on_event(&ev(EventMsg::TaskComplete(TaskCompleteEvent {
            turn_id: "t1".into(),
            last_agent_message: None,
            completed_at: None,
            duration_ms: None,
        })));
        let t = &done.last().unwrap().params["turn"];
        assert_eq!(t["status"], "failed");
        assert_eq!(t["error"]["message"], "boom");
        assert_eq!(
            t["error"]["codexErrorInfo"]["httpConnectionFailed"]["httpStatusCode"],
            500
        );

        let mut m = ItemMapper::new("th", "t1");
        m.on_event(&ev(EventMsg::AgentMessageDelta(AgentMessageDeltaEvent {
            delta: "partial".into(),
        })));
        let done = m.on_event(&ev(EventMsg::TurnAborted(TurnAbortedEvent {
            turn_id: Some("t1".into()),
            reason: TurnAbortReason::Interrupted,
            completed_at: None,
            duration_ms: None,
        })));
        assert_eq!(methods(&done), ["item/completed", "turn/completed"]);
        assert_eq!(done[0].params["item"]["text"], "partial");
        assert_eq!(done[1].params["turn"]["status"], "interrupted");
        assert_eq!(m.ended, Some(TurnEnd::Interrupted));
    }

    #[test]
    fn compaction_is_an_item_and_a_thread_compacted_note() {
        let mut m = ItemMapper::new("th", "t1");
        let notes = m.on_event(&ev(EventMsg::ContextCompacted(
            oi_protocol::protocol::ContextCompactedEvent {
                tokens_before: Some(5000),
                tokens_after: Some(900),
                automatic: true,
            },
        )));
        assert_eq!(
            methods(&notes),
            ["item/started", "item/completed", "thread/compacted"]
        );
        assert_eq!(notes[1].params["item"]["type"], "contextCompaction");
        assert!(notes[1].params["item"]["id"].is_string());
        assert_eq!(notes[2].params["threadId"], "th");
        assert_eq!(notes[2].params["turnId"], "t1");
    }

    #[test]
    fn other_turns_only_yield_thread_level_notes() {
        let mut m = ItemMapper::new("th", "t1");
        let other = Event {
            id: "t0".into(),
            msg: EventMsg::AgentMessageDelta(AgentMessageDeltaEvent { delta: "x".into() }),
        };
        assert!(m.on_event(&other).is_empty());
        let warn = Event {
            id: String::new(),
            msg: EventMsg::Warning(WarningEvent {
                message: "careful".into(),
            }),
        };
        assert_eq!(methods(&m.on_event(&warn)), ["warning"]);
    }

    #[test]
    fn utf8_tail_detection() {
        assert_eq!(incomplete_utf8_tail(b"abc"), 0);
        assert_eq!(incomplete_utf8_tail(&[b'a', 0xC3]), 1);
        assert_eq!(incomplete_utf8_tail(&[0xE2, 0x82]), 2);
        assert_eq!(incomplete_utf8_tail(&[0xE2, 0x82, 0xAC]), 0);
        assert_eq!(incomplete_utf8_tail(&[0xF0, 0x9F, 0x98]), 3);
    }
}
