//! Engine events as ACP `session/update`s, live (a prompt's turn) and replayed (a loaded
//! session's stored events).
//!
//! A turn's tool call is announced once (`tool_call`) and then updated (`tool_call_update`)
//! under the engine's call id: an approval announces it `pending`, its begin event makes it
//! `in_progress`, its end `completed` or `failed`. A stored thread keeps only the end events,
//! which then announce the call with its final status. Every update of a session goes out
//! through one [`SessionOut`], in order, whoever sends it (the prompt's event pump, the
//! client tools that attach a terminal to a call).

use crate::schema::{
    ContentBlock, ContentChunk, Diff, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus,
    SessionId, SessionNotification, SessionUpdate, Terminal, ToolCall, ToolCallContent,
    ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind, UsageUpdate,
};
use oi_core::PlannedFile;
use oi_jsonrpc::OutgoingSender;
use oi_protocol::parse_command::{ParsedCommand, display_command};
use oi_protocol::protocol::{
    EventMsg, ExecCommandEndEvent, ExecCommandStatus, FileChange, McpToolCallEndEvent,
    PatchApplyStatus, PlanStepStatus,
};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// The notification every update goes out as.
pub const SESSION_UPDATE: &str = "session/update";

/// Bytes of a command's output or a tool's result shown in a tool call.
const OUTPUT_MAX_BYTES: usize = 16 * 1024;

/// How events become updates for one session: which calls were announced, whether the
/// current message came in chunks, the files of planned changes, the terminals of calls.
#[derive(Default)]
pub struct Translator {
    /// Replaying a stored thread: the user's messages are shown too.
    replay: bool,
    announced: HashSet<String>,
    message_streamed: bool,
    reasoning_streamed: bool,
    terminals: HashMap<String, String>,
    /// Planned changes by call id, with their whole texts (from the client tools).
    planned: Arc<Mutex<HashMap<String, Vec<PlannedFile>>>>,
}

impl Translator {
    /// A translator for a live session; `planned` is shared with its client tools.
    pub fn live(planned: Arc<Mutex<HashMap<String, Vec<PlannedFile>>>>) -> Self {
        Self {
            planned,
            ..Self::default()
        }
    }

    /// A translator for replaying stored events.
    pub fn replay() -> Self {
        Self {
            replay: true,
            ..Self::default()
        }
    }

    /// The updates `msg` makes (often none).
    pub fn updates(&mut self, msg: &EventMsg) -> Vec<SessionUpdate> {
        match msg {
            EventMsg::UserMessage(m) if self.replay && !m.message.is_empty() => {
                vec![SessionUpdate::UserMessageChunk(chunk(&m.message))]
            }
            EventMsg::AgentMessageDelta(d) => {
                self.message_streamed = true;
                vec![SessionUpdate::AgentMessageChunk(chunk(&d.delta))]
            }
            EventMsg::AgentMessage(m) => {
                if std::mem::take(&mut self.message_streamed) || m.message.is_empty() {
                    return vec![];
                }
                vec![SessionUpdate::AgentMessageChunk(chunk(&m.message))]
            }
            EventMsg::AgentReasoningDelta(d) => {
                self.reasoning_streamed = true;
                vec![SessionUpdate::AgentThoughtChunk(chunk(&d.delta))]
            }
            EventMsg::AgentReasoning(r) => {
                if std::mem::take(&mut self.reasoning_streamed) || r.text.is_empty() {
                    return vec![];
                }
                vec![SessionUpdate::AgentThoughtChunk(chunk(&r.text))]
            }
            EventMsg::ExecApprovalRequest(r) => {
                let call = command_call(&r.call_id, &r.command, &r.cwd, &r.parsed_cmd)
                    .status(ToolCallStatus::Pending);
                self.announce(call)
            }
            EventMsg::ExecCommandBegin(b) => {
                let mut call = command_call(&b.call_id, &b.command, &b.cwd, &b.parsed_cmd)
                    .status(ToolCallStatus::InProgress);
                if let Some(t) = self.terminals.get(&b.call_id) {
                    call = call.content(vec![ToolCallContent::Terminal(Terminal::new(t.clone()))]);
                }
                self.announce_or_update(call)
            }
            EventMsg::ExecCommandEnd(e) => self.command_end(e),
            EventMsg::ApplyPatchApprovalRequest(r) => {
                let call = self
                    .edit_call(&r.call_id, &r.changes)
                    .status(ToolCallStatus::Pending);
                self.announce(call)
            }
            EventMsg::PatchApplyBegin(b) => {
                let call = self
                    .edit_call(&b.call_id, &b.changes)
                    .status(ToolCallStatus::InProgress);
                self.announce_or_update(call)
            }
            EventMsg::PatchApplyEnd(e) => {
                let status = match e.status {
                    PatchApplyStatus::Completed => ToolCallStatus::Completed,
                    PatchApplyStatus::Failed | PatchApplyStatus::Declined => ToolCallStatus::Failed,
                };
                let mut call = self.edit_call(&e.call_id, &e.changes).status(status);
                let note = match e.status {
                    PatchApplyStatus::Completed => None,
                    PatchApplyStatus::Declined => Some("Not applied: declined.".to_string()),
                    PatchApplyStatus::Failed => Some(format!("Not applied: {}", e.stderr.trim())),
                };
                if let Some(note) = note {
                    call.content.push(ToolCallContent::from(note));
                }
                self.planned_lock().remove(&e.call_id);
                self.announce_or_update(call)
            }
            EventMsg::McpToolCallBegin(b) => {
                let call = ToolCall::new(
                    b.call_id.clone(),
                    format!("{}: {}", b.invocation.server, b.invocation.tool),
                )
                .kind(ToolKind::Other)
                .status(ToolCallStatus::InProgress)
                .raw_input(b.invocation.arguments.clone());
                self.announce_or_update(call)
            }
            EventMsg::McpToolCallEnd(e) => self.mcp_end(e),
            EventMsg::PlanUpdate(p) => {
                let entries = p
                    .plan
                    .iter()
                    .map(|s| {
                        let status = match s.status {
                            PlanStepStatus::Pending => PlanEntryStatus::Pending,
                            PlanStepStatus::InProgress => PlanEntryStatus::InProgress,
                            PlanStepStatus::Completed => PlanEntryStatus::Completed,
                        };
                        PlanEntry::new(s.step.clone(), PlanEntryPriority::Medium, status)
                    })
                    .collect();
                vec![SessionUpdate::Plan(Plan::new(entries))]
            }
            EventMsg::TokenCount(t) => {
                let Some(info) = &t.info else {
                    return vec![];
                };
                let Some(size) = info.model_context_window.filter(|w| *w > 0) else {
                    return vec![];
                };
                let used = info.last_token_usage.total_tokens.max(0);
                vec![SessionUpdate::UsageUpdate(UsageUpdate::new(
                    u64::try_from(used).unwrap_or(0),
                    u64::try_from(size).unwrap_or(0),
                ))]
            }
            // A turn that starts while a message was half streamed (an interrupted one)
            // starts a new message.
            EventMsg::TaskStarted(_) | EventMsg::TaskComplete(_) | EventMsg::TurnAborted(_) => {
                self.message_streamed = false;
                self.reasoning_streamed = false;
                vec![]
            }
            _ => vec![],
        }
    }

    /// A client terminal runs call `call_id`: shown in the call, announced if it was not.
    pub fn terminal(&mut self, call_id: &str, terminal_id: &str) -> Vec<SessionUpdate> {
        self.terminals
            .insert(call_id.to_string(), terminal_id.to_string());
        let content = vec![ToolCallContent::Terminal(Terminal::new(
            terminal_id.to_string(),
        ))];
        if self.announced.contains(call_id) {
            return vec![SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                call_id.to_string(),
                ToolCallUpdateFields::new().content(content),
            ))];
        }
        self.announce(
            ToolCall::new(call_id.to_string(), "Run a command")
                .kind(ToolKind::Execute)
                .status(ToolCallStatus::InProgress)
                .content(content),
        )
    }

    fn planned_lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Vec<PlannedFile>>> {
        self.planned.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn announce(&mut self, call: ToolCall) -> Vec<SessionUpdate> {
        if self.announced.insert(call.tool_call_id.0.to_string()) {
            vec![SessionUpdate::ToolCall(call)]
        } else {
            vec![SessionUpdate::ToolCallUpdate(update_of(call))]
        }
    }

    fn announce_or_update(&mut self, call: ToolCall) -> Vec<SessionUpdate> {
        self.announce(call)
    }

    fn command_end(&mut self, e: &ExecCommandEndEvent) -> Vec<SessionUpdate> {
        let status = match e.status {
            ExecCommandStatus::Completed => ToolCallStatus::Completed,
            ExecCommandStatus::Failed | ExecCommandStatus::Declined => ToolCallStatus::Failed,
        };
        let mut call = command_call(&e.call_id, &e.command, &e.cwd, &e.parsed_cmd)
            .status(status)
            .raw_output(serde_json::json!({
                "exitCode": e.exit_code,
                "output": oi_core::truncate_head_tail(&e.aggregated_output, OUTPUT_MAX_BYTES),
            }));
        match self.terminals.remove(&e.call_id) {
            // The client shows its terminal; the output is there.
            Some(t) => call = call.content(vec![ToolCallContent::Terminal(Terminal::new(t))]),
            None => {
                let text = match e.status {
                    ExecCommandStatus::Declined => "Not run: declined.".to_string(),
                    _ => fenced(&oi_core::truncate_head_tail(
                        &e.aggregated_output,
                        OUTPUT_MAX_BYTES,
                    )),
                };
                call = call.content(vec![ToolCallContent::from(text)]);
            }
        }
        self.announce(call)
    }

    fn mcp_end(&mut self, e: &McpToolCallEndEvent) -> Vec<SessionUpdate> {
        let (status, text) = match &e.result {
            Ok(v) => {
                let failed = v.get("isError").and_then(|b| b.as_bool()) == Some(true);
                let status = if failed {
                    ToolCallStatus::Failed
                } else {
                    ToolCallStatus::Completed
                };
                (status, mcp_text(v))
            }
            Err(e) => (ToolCallStatus::Failed, e.clone()),
        };
        let call = ToolCall::new(
            e.call_id.clone(),
            format!("{}: {}", e.invocation.server, e.invocation.tool),
        )
        .kind(ToolKind::Other)
        .status(status)
        .raw_input(e.invocation.arguments.clone())
        .content(vec![ToolCallContent::from(oi_core::truncate_head_tail(
            &text,
            OUTPUT_MAX_BYTES,
        ))]);
        self.announce(call)
    }

    /// An edit's tool call: whole-text diffs where the change was planned here (the client
    /// tools saw it), else what the event carries (a new file's text, a unified diff).
    fn edit_call(&self, call_id: &str, changes: &BTreeMap<PathBuf, FileChange>) -> ToolCall {
        let planned = self.planned_lock().get(call_id).cloned();
        let mut content = Vec::new();
        match planned {
            Some(files) => {
                for f in files {
                    let target = f.move_to.clone().unwrap_or_else(|| f.path.clone());
                    match f.new_text {
                        Some(new) => content.push(ToolCallContent::Diff(
                            Diff::new(target, new).old_text(f.old_text),
                        )),
                        None => content.push(ToolCallContent::Diff(
                            Diff::new(f.path.clone(), String::new()).old_text(f.old_text),
                        )),
                    }
                }
            }
            None => {
                for (path, change) in changes {
                    content.push(match change {
                        FileChange::Add { content } => {
                            ToolCallContent::Diff(Diff::new(path.clone(), content.clone()))
                        }
                        FileChange::Delete { content } => ToolCallContent::Diff(
                            Diff::new(path.clone(), String::new()).old_text(content.clone()),
                        ),
                        FileChange::Update { unified_diff, .. } => ToolCallContent::from(format!(
                            "{}\n```diff\n{unified_diff}```",
                            path.display()
                        )),
                    });
                }
            }
        }
        let kind = if changes.is_empty()
            || changes
                .values()
                .any(|c| !matches!(c, FileChange::Delete { .. }))
        {
            if changes.values().any(|c| {
                matches!(
                    c,
                    FileChange::Update {
                        move_path: Some(_),
                        ..
                    }
                )
            }) {
                ToolKind::Move
            } else {
                ToolKind::Edit
            }
        } else {
            ToolKind::Delete
        };
        let names: Vec<String> = changes.keys().map(|p| file_name(p)).collect();
        let title = match kind {
            ToolKind::Delete => format!("Delete {}", names.join(", ")),
            ToolKind::Move => format!("Move {}", names.join(", ")),
            _ => format!("Edit {}", names.join(", ")),
        };
        ToolCall::new(call_id.to_string(), title)
            .kind(kind)
            .content(content)
            .locations(
                changes
                    .iter()
                    .map(|(p, c)| match c {
                        FileChange::Update {
                            move_path: Some(dest),
                            ..
                        } => ToolCallLocation::new(dest.clone()),
                        _ => ToolCallLocation::new(p.clone()),
                    })
                    .collect(),
            )
    }
}

/// A command's tool call: what it reads or searches, or what it runs.
fn command_call(call_id: &str, argv: &[String], cwd: &Path, parsed: &[ParsedCommand]) -> ToolCall {
    let command = display_command(argv);
    let (kind, locations) = match parsed {
        [ParsedCommand::Read { path, .. }] => (
            ToolKind::Read,
            vec![ToolCallLocation::new(resolve(cwd, Path::new(path)))],
        ),
        [ParsedCommand::Search { path, .. }] | [ParsedCommand::ListFiles { path, .. }] => (
            ToolKind::Search,
            path.iter()
                .map(|p| ToolCallLocation::new(resolve(cwd, Path::new(p))))
                .collect(),
        ),
        _ => (ToolKind::Execute, vec![]),
    };
    ToolCall::new(call_id.to_string(), command.clone())
        .kind(kind)
        .locations(locations)
        .raw_input(serde_json::json!({"command": argv, "cwd": cwd}))
}

fn resolve(cwd: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    }
}

/// An announced call's later state, as an update of every field it sets.
fn update_of(call: ToolCall) -> ToolCallUpdate {
    let mut fields = ToolCallUpdateFields::new()
        .title(call.title)
        .kind(call.kind)
        .status(call.status);
    if !call.content.is_empty() {
        fields = fields.content(call.content);
    }
    if !call.locations.is_empty() {
        fields = fields.locations(call.locations);
    }
    if call.raw_input.is_some() {
        fields = fields.raw_input(call.raw_input);
    }
    if call.raw_output.is_some() {
        fields = fields.raw_output(call.raw_output);
    }
    ToolCallUpdate::new(call.tool_call_id, fields)
}

fn chunk(text: &str) -> ContentChunk {
    ContentChunk::new(ContentBlock::from(text.to_string()))
}

fn fenced(text: &str) -> String {
    if text.is_empty() {
        return "(no output)".into();
    }
    let fence = if text.contains("```") { "````" } else { "```" };
    let nl = if text.ends_with('\n') { "" } else { "\n" };
    format!("{fence}\n{text}{nl}{fence}")
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.display().to_string())
}

/// The text of an MCP tool result (its text parts), else its JSON.
fn mcp_text(v: &serde_json::Value) -> String {
    let texts: Vec<&str> = v
        .get("content")
        .and_then(|c| c.as_array())
        .map(|parts| {
            parts
                .iter()
                .filter_map(|p| p.get("text").and_then(|t| t.as_str()))
                .collect()
        })
        .unwrap_or_default();
    if texts.is_empty() {
        v.to_string()
    } else {
        texts.join("\n")
    }
}

/// Where one session's updates go, in order.
pub struct SessionOut {
    /// The session the updates belong to.
    pub session_id: SessionId,
    outgoing: OutgoingSender,
    translator: tokio::sync::Mutex<Translator>,
}

impl SessionOut {
    /// Sends `session_id`'s updates on `outgoing`, translated from engine events by `translator`.
    pub fn new(session_id: SessionId, outgoing: OutgoingSender, translator: Translator) -> Self {
        Self {
            session_id,
            outgoing,
            translator: tokio::sync::Mutex::new(translator),
        }
    }

    /// Sends what `msg` makes. False once the client is gone.
    pub async fn event(&self, msg: &EventMsg) -> bool {
        let mut t = self.translator.lock().await;
        let updates = t.updates(msg);
        self.send_all(updates).await
    }

    /// Shows terminal `terminal_id` in call `call_id`.
    pub async fn terminal(&self, call_id: &str, terminal_id: &str) -> bool {
        let mut t = self.translator.lock().await;
        let updates = t.terminal(call_id, terminal_id);
        self.send_all(updates).await
    }

    /// Sends one update.
    pub async fn send(&self, update: SessionUpdate) -> bool {
        let _t = self.translator.lock().await;
        self.send_all(vec![update]).await
    }

    async fn send_all(&self, updates: Vec<SessionUpdate>) -> bool {
        for update in updates {
            let note = SessionNotification::new(self.session_id.clone(), update);
            match serde_json::to_value(&note) {
                Ok(params) => {
                    if !self.outgoing.notify(SESSION_UPDATE, params).await {
                        return false;
                    }
                }
                Err(e) => tracing::warn!("could not encode a session update: {e}"),
            }
        }
        true
    }
}

#[cfg(test)]
mod tests;
