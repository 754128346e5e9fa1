//! Engine events → v2 items and notifications, for one turn.
//!
//! [`ItemMapper`] is a state machine: feed it a turn's events in order and it returns
//! the notifications to send (`item/started`, `item/*/delta`, `item/completed`,
//! `thread/tokenUsage/updated`, `error`, `turn/completed`, …), each built from its typed
//! wire struct ([`crate::protocol::wire`]) and stamped with the time it was made;
//! `turn/completed` carries the turn's input and final answer (`itemsView: "summary"`). The same
//! mapper rebuilds the items of stored turns for `thread/read` / `thread/resume`. The
//! items themselves are built in [`build`].

mod build;

use crate::protocol::methods as m;
pub(crate) use crate::protocol::wire::command_actions;
use crate::protocol::wire::{
    CodexErrorInfo, CommandExecutionStatus, ContextCompactedNotification, ErrorNotification,
    ItemCompletedNotification, ItemDeltaNotification, ItemStartedNotification,
    McpServerStatusUpdatedNotification, McpToolCallProgressNotification, McpToolCallStatus,
    PatchApplyStatus, ReasoningTextDeltaNotification, ThreadItem,
    ThreadTokenUsageUpdatedNotification, Turn, TurnCompletedNotification, TurnError, TurnItemsView,
    TurnPlanStep, TurnPlanUpdatedNotification, TurnStatus, WarningNotification, to_value,
};
use oi_app_server_protocol::hooks::{HookOutputEntry, HookRunNotification, HookRunSummary};
use oi_protocol::protocol::{
    ApplyPatchApprovalRequestEvent, Event, EventMsg, ExecApprovalRequestEvent, ExecCommandSource,
    HookRunEvent, McpStartupStatus,
};
use serde::Serialize;
use serde_json::Value;
use std::collections::HashMap;

/// One notification to send: its method and its params, serialized from the typed wire.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Note {
    // Private: `Note::of` is the only way to make one (tests below read them).
    method: &'static str,
    params: Value,
}

impl Note {
    /// The notification's method name, as declared.
    pub(crate) fn method(&self) -> &'static str {
        self.method
    }

    /// Method and params, for the sender.
    pub(crate) fn into_parts(self) -> (&'static str, Value) {
        (self.method, self.params)
    }

    /// The declared notification `N` with its params.
    pub(crate) fn of<N>(params: &N::Params) -> Self
    where
        N: crate::protocol::methods::ServerNotification,
        N::Params: Serialize,
    {
        Note {
            method: N::NAME,
            params: to_value(params),
        }
    }
}

/// How a turn ended, once it has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TurnEnd {
    Completed,
    Failed,
    Interrupted,
}

impl TurnEnd {
    /// The wire status of a turn that ended this way.
    pub(crate) fn status(&self) -> TurnStatus {
        match self {
            TurnEnd::Completed => TurnStatus::Completed,
            TurnEnd::Failed => TurnStatus::Failed,
            TurnEnd::Interrupted => TurnStatus::Interrupted,
        }
    }
}

/// Unix milliseconds now: the `startedAtMs`/`completedAtMs` of item notifications.
fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

pub(crate) struct ItemMapper {
    thread_id: String,
    turn_id: String,
    /// Stored turns get ids derived from the turn id, so repeated reads agree.
    stable_ids: bool,
    seq: u64,
    agent: Option<(String, String)>,
    reasoning: Option<(String, String)>,
    /// Tool items started and not yet completed, by call id.
    open: HashMap<String, ThreadItem>,
    /// Bytes of a UTF-8 character split across output chunks, by call id.
    carry: HashMap<String, Vec<u8>>,
    error: Option<TurnError>,
    /// Completed items, kept only when rebuilding a stored turn.
    completed: Option<Vec<ThreadItem>>,
    /// The turn's user messages and last agent message so far: `turn/completed`'s `items`
    /// (`itemsView: "summary"`).
    summary_user: Vec<ThreadItem>,
    summary_agent: Option<ThreadItem>,
    pub started_at: Option<i64>,
    pub ended: Option<TurnEnd>,
}

impl ItemMapper {
    /// Whether the turn has failed already (an `error` was mapped).
    pub(crate) fn failed(&self) -> bool {
        self.error.is_some()
    }

    pub(crate) fn new(thread_id: impl Into<String>, turn_id: impl Into<String>) -> Self {
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
            completed: None,
            summary_user: Vec::new(),
            summary_agent: None,
            started_at: None,
            ended: None,
        }
    }

    /// A mapper for a turn read back from disk: stable item ids, and it keeps the
    /// completed items ([`stored_turn_items`]).
    pub(crate) fn for_stored(thread_id: impl Into<String>, turn_id: impl Into<String>) -> Self {
        Self {
            stable_ids: true,
            completed: Some(Vec::new()),
            ..Self::new(thread_id, turn_id)
        }
    }

    pub(crate) fn turn_id(&self) -> &str {
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

    fn started(&self, item: &ThreadItem) -> Note {
        Note::of::<m::ItemStarted>(&ItemStartedNotification {
            thread_id: self.thread_id.clone(),
            turn_id: self.turn_id.clone(),
            item: item.clone(),
            started_at_ms: now_ms(),
        })
    }

    fn completed(&mut self, item: ThreadItem) -> Note {
        let note = Note::of::<m::ItemCompleted>(&ItemCompletedNotification {
            thread_id: self.thread_id.clone(),
            turn_id: self.turn_id.clone(),
            item: item.clone(),
            completed_at_ms: now_ms(),
        });
        match &item {
            ThreadItem::UserMessage { .. } => self.summary_user.push(item.clone()),
            ThreadItem::AgentMessage { .. } => self.summary_agent = Some(item.clone()),
            _ => {}
        }
        if let Some(kept) = self.completed.as_mut() {
            kept.push(item);
        }
        note
    }

    fn delta<N>(&self, item_id: &str, delta: &str) -> Note
    where
        N: crate::protocol::methods::ServerNotification<Params = ItemDeltaNotification>,
    {
        Note::of::<N>(&ItemDeltaNotification {
            thread_id: self.thread_id.clone(),
            turn_id: self.turn_id.clone(),
            item_id: item_id.to_string(),
            delta: delta.to_string(),
        })
    }

    /// Maps one event. Events of other turns yield only thread-level notifications.
    pub(crate) fn on_event(&mut self, ev: &Event) -> Vec<Note> {
        let ours = ev.id == self.turn_id;
        let mut out = Vec::new();
        match &ev.msg {
            EventMsg::Warning(w) => out.push(Note::of::<m::Warning>(&WarningNotification {
                thread_id: self.thread_id.clone(),
                message: w.message.clone(),
            })),
            EventMsg::McpStartupUpdate(u) => {
                let (status, error) = match &u.status {
                    McpStartupStatus::Starting => ("starting", None),
                    McpStartupStatus::Ready => ("ready", None),
                    McpStartupStatus::Failed { error } => ("failed", Some(error.clone())),
                    McpStartupStatus::Cancelled => ("cancelled", None),
                };
                out.push(Note::of::<m::McpServerStartupStatusUpdated>(
                    &McpServerStatusUpdatedNotification {
                        name: u.server.clone(),
                        status: status.to_string(),
                        error,
                        thread_id: None,
                    },
                ));
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
                let item = build::user_message(self.new_item_id(), m);
                out.push(self.started(&item));
                out.push(self.completed(item));
            }
            EventMsg::AgentMessageDelta(d) => {
                let id = self.open_agent(out);
                if let Some((_, text)) = self.agent.as_mut() {
                    text.push_str(&d.delta);
                }
                out.push(self.delta::<m::AgentMessageDelta>(&id, &d.delta));
            }
            EventMsg::AgentMessage(m) => {
                let id = self.open_agent(out);
                self.agent = None;
                let item = build::agent_message(id, m.message.clone(), m.phase.clone());
                out.push(self.completed(item));
            }
            EventMsg::AgentReasoningDelta(d) => {
                let id = self.open_reasoning(out);
                if let Some((_, text)) = self.reasoning.as_mut() {
                    text.push_str(&d.delta);
                }
                out.push(Note::of::<m::ReasoningTextDelta>(
                    &ReasoningTextDeltaNotification {
                        thread_id: self.thread_id.clone(),
                        turn_id: self.turn_id.clone(),
                        item_id: id,
                        delta: d.delta.clone(),
                        content_index: 0,
                    },
                ));
            }
            EventMsg::AgentReasoning(r) => {
                let id = self.open_reasoning(out);
                self.reasoning = None;
                let item = build::reasoning(id, Some(r.text.clone()));
                out.push(self.completed(item));
            }
            _ => {}
        }
    }

    /// A command's begin, output and end → a `commandExecution` item.
    fn on_command_event(&mut self, msg: &EventMsg, out: &mut Vec<Note>) {
        match msg {
            EventMsg::ExecCommandBegin(b) => {
                let item = build::command(
                    &b.call_id,
                    &b.command,
                    &b.cwd,
                    &b.parsed_cmd,
                    b.source,
                    CommandExecutionStatus::InProgress,
                );
                self.start_tool(&b.call_id, item, out);
            }
            EventMsg::ExecCommandOutputDelta(d) => {
                let delta = self.decode_chunk(&d.call_id, &d.chunk);
                if !delta.is_empty() {
                    out.push(self.delta::<m::CommandOutputDelta>(&d.call_id, &delta));
                }
            }
            EventMsg::ExecCommandEnd(e) => {
                self.carry.remove(&e.call_id);
                self.complete_tool(&e.call_id, build::command_end(e), out);
            }
            _ => {}
        }
    }

    /// A patch's begin and end → a `fileChange` item.
    fn on_file_change_event(&mut self, msg: &EventMsg, out: &mut Vec<Note>) {
        match msg {
            EventMsg::PatchApplyBegin(b) => {
                let item = build::file_change(&b.call_id, &b.changes, PatchApplyStatus::InProgress);
                self.start_tool(&b.call_id, item, out);
            }
            EventMsg::PatchApplyEnd(e) => {
                let item =
                    build::file_change(&e.call_id, &e.changes, build::patch_status(e.status));
                self.complete_tool(&e.call_id, item, out);
            }
            _ => {}
        }
    }

    /// An MCP tool call's begin, progress and end → an `mcpToolCall` item.
    fn on_mcp_call_event(&mut self, msg: &EventMsg, out: &mut Vec<Note>) {
        match msg {
            EventMsg::McpToolCallBegin(b) => {
                let item =
                    build::mcp_call(&b.call_id, &b.invocation, McpToolCallStatus::InProgress);
                self.start_tool(&b.call_id, item, out);
            }
            EventMsg::McpToolCallProgress(p) => {
                let message = p.message.clone().unwrap_or_else(|| match p.total {
                    Some(t) => format!("{}/{t}", p.progress),
                    None => format!("{}", p.progress),
                });
                out.push(Note::of::<m::McpToolCallProgress>(
                    &McpToolCallProgressNotification {
                        thread_id: self.thread_id.clone(),
                        turn_id: self.turn_id.clone(),
                        item_id: p.call_id.clone(),
                        message,
                    },
                ));
            }
            EventMsg::McpToolCallEnd(e) => {
                self.complete_tool(&e.call_id, build::mcp_call_end(e), out);
            }
            _ => {}
        }
    }

    /// A hook run as `hook/started` / `hook/completed` carry it.
    fn hook_run(&self, run: &HookRunEvent) -> HookRunNotification {
        HookRunNotification {
            thread_id: self.thread_id.clone(),
            turn_id: run.turn_id.clone(),
            run: HookRunSummary {
                id: run.id.clone(),
                event_name: run.event_name.clone(),
                handler_type: "command".into(),
                execution_mode: "sync".into(),
                scope: run.scope.clone(),
                source: run.source.clone(),
                source_path: run
                    .source_path
                    .as_ref()
                    .map(|p| p.display().to_string())
                    .unwrap_or_else(|| "/<session-flags>/config.toml".into()),
                display_order: run.display_order,
                status_message: run.status_message.clone(),
                status: snake_name(&run.status),
                entries: run
                    .entries
                    .iter()
                    .map(|e| HookOutputEntry {
                        kind: snake_name(&e.kind),
                        text: e.text.clone(),
                    })
                    .collect(),
                started_at: run.started_at,
                completed_at: run.completed_at,
                duration_ms: run
                    .duration_ms
                    .map(|d| i64::try_from(d).unwrap_or(i64::MAX)),
            },
        }
    }

    fn error_note(&self, error: TurnError, will_retry: bool) -> Note {
        Note::of::<m::Error>(&ErrorNotification {
            thread_id: self.thread_id.clone(),
            turn_id: self.turn_id.clone(),
            error,
            will_retry,
        })
    }

    /// Token usage, errors, compaction and the turn's end.
    fn on_turn_state_event(&mut self, msg: &EventMsg, out: &mut Vec<Note>) {
        match msg {
            EventMsg::TokenCount(t) => {
                if let Some(info) = &t.info {
                    out.push(Note::of::<m::ThreadTokenUsageUpdated>(
                        &ThreadTokenUsageUpdatedNotification {
                            thread_id: self.thread_id.clone(),
                            turn_id: self.turn_id.clone(),
                            token_usage: info.into(),
                        },
                    ));
                }
            }
            EventMsg::Error(e) => {
                let err = TurnError {
                    codex_error_info: e.codex_error_info.as_ref().map(CodexErrorInfo::from),
                    ..TurnError::new(e.message.clone())
                };
                self.error = Some(err.clone());
                out.push(self.error_note(err, false));
            }
            EventMsg::StreamError(e) => {
                let err = TurnError {
                    message: e.message.clone(),
                    codex_error_info: e.codex_error_info.as_ref().map(CodexErrorInfo::from),
                    additional_details: e.additional_details.clone(),
                };
                out.push(self.error_note(err, true));
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
            EventMsg::PlanUpdate(p) => out.push(Note::of::<m::TurnPlanUpdated>(
                &TurnPlanUpdatedNotification {
                    thread_id: self.thread_id.clone(),
                    turn_id: self.turn_id.clone(),
                    explanation: p.explanation.clone(),
                    plan: p
                        .plan
                        .iter()
                        .map(|s| TurnPlanStep {
                            step: s.step.clone(),
                            status: s.status.into(),
                        })
                        .collect(),
                },
            )),
            EventMsg::HookStarted(run) => out.push(Note::of::<m::HookStarted>(&self.hook_run(run))),
            EventMsg::HookCompleted(run) => {
                out.push(Note::of::<m::HookCompleted>(&self.hook_run(run)))
            }
            EventMsg::ContextCompacted(_) => {
                let item = ThreadItem::ContextCompaction {
                    id: self.new_item_id(),
                };
                out.push(self.started(&item));
                out.push(self.completed(item));
                // Deprecated in the reference, still sent for clients that listen for it.
                out.push(Note::of::<m::ThreadCompacted>(
                    &ContextCompactedNotification {
                        thread_id: self.thread_id.clone(),
                        turn_id: self.turn_id.clone(),
                    },
                ));
            }
            _ => {}
        }
    }

    /// Shows the pending command before its approval request (the reference's order).
    pub(crate) fn exec_approval_pending(&mut self, ev: &ExecApprovalRequestEvent) -> Vec<Note> {
        let mut out = Vec::new();
        let item = build::command(
            &ev.call_id,
            &ev.command,
            &ev.cwd,
            &ev.parsed_cmd,
            ExecCommandSource::Agent,
            CommandExecutionStatus::InProgress,
        );
        self.start_tool(&ev.call_id, item, &mut out);
        out
    }

    pub(crate) fn patch_approval_pending(
        &mut self,
        ev: &ApplyPatchApprovalRequestEvent,
    ) -> Vec<Note> {
        let mut out = Vec::new();
        let item = build::file_change(&ev.call_id, &ev.changes, PatchApplyStatus::InProgress);
        self.start_tool(&ev.call_id, item, &mut out);
        out
    }

    /// Ends the turn without a terminal event from the engine (the thread went away).
    pub(crate) fn abandon(&mut self, message: &str) -> Vec<Note> {
        let mut out = Vec::new();
        if self.ended.is_none() {
            self.error = Some(TurnError::new(message));
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
            let item = build::agent_message(id, text, None);
            out.push(self.completed(item));
        }
        if let Some((id, text)) = self.reasoning.take() {
            let item = build::reasoning(id, Some(text));
            out.push(self.completed(item));
        }
        // Tool calls cut off by the end of the turn.
        let mut open: Vec<(String, ThreadItem)> = self.open.drain().collect();
        open.sort_by(|a, b| a.0.cmp(&b.0));
        for (_, mut item) in open {
            item.settle(end == TurnEnd::Completed);
            out.push(self.completed(item));
        }
        self.ended = Some(end);
        let items: Vec<ThreadItem> = std::mem::take(&mut self.summary_user)
            .into_iter()
            .chain(self.summary_agent.take())
            .collect();
        let turn = Turn {
            items,
            items_view: Some(TurnItemsView::Summary),
            status: end.status(),
            error: if end == TurnEnd::Failed {
                self.error.clone()
            } else {
                None
            },
            completed_at,
            duration_ms,
            started_at: self.started_at,
            ..Turn::in_progress(self.turn_id.clone(), 0)
        };
        out.push(Note::of::<m::TurnCompleted>(&TurnCompletedNotification {
            thread_id: self.thread_id.clone(),
            turn,
        }));
    }

    /// The turn's error, once one was reported.
    pub(crate) fn error(&self) -> Option<&TurnError> {
        self.error.as_ref()
    }

    fn open_agent(&mut self, out: &mut Vec<Note>) -> String {
        if let Some((id, _)) = &self.agent {
            return id.clone();
        }
        let id = self.new_item_id();
        out.push(self.started(&build::agent_message(id.clone(), String::new(), None)));
        self.agent = Some((id.clone(), String::new()));
        id
    }

    fn open_reasoning(&mut self, out: &mut Vec<Note>) -> String {
        if let Some((id, _)) = &self.reasoning {
            return id.clone();
        }
        let id = self.new_item_id();
        out.push(self.started(&build::reasoning(id.clone(), None)));
        self.reasoning = Some((id.clone(), String::new()));
        id
    }

    fn start_tool(&mut self, call_id: &str, item: ThreadItem, out: &mut Vec<Note>) {
        if self.open.contains_key(call_id) {
            return;
        }
        out.push(self.started(&item));
        self.open.insert(call_id.to_string(), item);
    }

    fn complete_tool(&mut self, call_id: &str, item: ThreadItem, out: &mut Vec<Note>) {
        if self.open.remove(call_id).is_none() {
            out.push(self.started(&item));
        }
        out.push(self.completed(item));
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

/// The completed items of a stored turn, rebuilt from its recorded events, and its error.
pub(crate) fn stored_turn_items(
    thread_id: &str,
    turn: &oi_core::StoredTurn,
) -> (Vec<ThreadItem>, Option<TurnError>) {
    let mut m = ItemMapper::for_stored(thread_id, turn.id.clone());
    for item in &turn.items {
        if let oi_core::RolloutItem::EventMsg(msg) = item {
            let ev = Event {
                id: turn.id.clone(),
                msg: msg.clone(),
            };
            m.on_event(&ev);
        }
    }
    let error = turn
        .error
        .as_deref()
        .map(TurnError::new)
        .or_else(|| m.error().cloned());
    (m.completed.take().unwrap_or_default(), error)
}

#[cfg(test)]
mod tests;

/// The wire name of a one-word enum value of the engine's events (`running`, `stop`):
/// its serde name, the same in snake_case and camelCase.
fn snake_name<T: Serialize>(value: &T) -> String {
    serde_json::to_value(value)
        .ok()
        .and_then(|v| v.as_str().map(str::to_string))
        .unwrap_or_default()
}
