//! A thread read back from disk, and the views front ends need of it.

use crate::outline::{Mark, StoredTurn, TurnSpan, TurnStatus, turn_spans};
use crate::types::parked::TurnParkedItem;
use crate::types::{RolloutItem, SessionMeta, ThreadSummary};
use oi_protocol::models::{FunctionCallOutput, ResponseItem};
use oi_protocol::protocol::{EventMsg, TurnAbortReason, TurnAbortedEvent};
use std::collections::HashSet;

/// What the model sees in place of the output of a call that never finished.
pub const ABORTED_CALL_OUTPUT: &str = "aborted: the process stopped before this call finished";

/// A stored thread: its index summary, its `session_meta`, and every later record.
#[derive(Clone, Debug)]
pub struct LoadedThread {
    /// The thread as the index lists it.
    pub summary: ThreadSummary,
    /// Its first record: who created it, where, with what.
    pub meta: SessionMeta,
    /// Every readable record after the leading `session_meta`, in file order.
    pub items: Vec<RolloutItem>,
    /// The line timestamp of each entry of `items` (same length, same order).
    pub timestamps: Vec<String>,
    /// One message per skipped line (torn last line, corrupt line, unknown record type).
    pub warnings: Vec<String>,
}

/// Whether a resumed thread is rebuilt from events of `kind`: its turn boundaries
/// ([`LoadedThread::turn_spans`]), its preview, and the MCP tasks it left
/// ([`LoadedThread::pending_mcp_tasks`]). The other events only report what happened, and
/// make most of a long thread's bytes (a command's output is in its `exec_command_end` as
/// well as in the call's output): [`ThreadStore::resume`](crate::ThreadStore::resume)
/// leaves them unread.
pub(crate) fn rebuilt_from(kind: &str) -> bool {
    matches!(
        kind,
        "task_started"
            | "task_complete"
            | "turn_aborted"
            | "user_message"
            | "error"
            | "agent_message"
            | "mcp_tool_call_progress"
    )
}

/// An MCP tool call whose task a resumed thread should fetch (see
/// [`LoadedThread::pending_mcp_tasks`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PendingMcpTask {
    /// The id of the model's tool call.
    pub call_id: String,
    /// The call's tool name as the model wrote it (`mcp__server__tool`).
    pub name: String,
    /// The call's arguments (JSON text).
    pub arguments: String,
    /// The MCP server's id of the task the call started.
    pub task_id: String,
    /// The session ended with the task running (rather than dying during it).
    pub left_running: bool,
}

/// A fork gets an id of its own (both backends check this the same way).
pub(crate) fn check_fork_id(
    source: &oi_protocol::ThreadId,
    new_meta: &SessionMeta,
) -> Result<(), crate::error::StoreError> {
    if new_meta.id == *source {
        return Err(crate::error::StoreError::Invalid(format!(
            "a fork needs a new thread id; {source} is the source thread's id"
        )));
    }
    Ok(())
}

impl LoadedThread {
    /// The records a fork of this thread starts with: everything after the session meta,
    /// and, if a turn is still open, a marker closing it as interrupted.
    pub(crate) fn fork_lines(&self) -> Vec<crate::types::RolloutLine> {
        // A parked turn is closed in the copy too: its approvals belong to the source
        // thread, and an approved command must not run once per fork.
        let mut lines: Vec<crate::types::RolloutLine> = self
            .timestamps
            .iter()
            .zip(&self.items)
            .filter(|(_, item)| !matches!(item, RolloutItem::SessionMeta(_)))
            .map(|(ts, item)| crate::types::RolloutLine {
                timestamp: ts.clone(),
                item: item.clone(),
            })
            .collect();
        let parked = self
            .turn_spans()
            .pop()
            .filter(|t| t.status == TurnStatus::Parked)
            .map(|t| t.id);
        if let Some(turn_id) = self.open_turn_id().or(parked) {
            lines.push(crate::types::RolloutLine {
                timestamp: crate::record::format_timestamp(chrono::Utc::now()),
                item: interrupted_marker(turn_id),
            });
        }
        lines
    }

    /// The conversation history to send to the model on resume: every `ResponseItem` in
    /// order, restarting from the replacement history of the last `compacted` record. Each
    /// function call's output follows the run of calls and outputs it belongs to, so chat APIs
    /// accept the history: a call recorded with several outputs (a later one replaces the
    /// placeholder of an MCP task fetched on resume) shows the last one where the first was;
    /// a call whose output came later in the file shows it after its run; and a call without
    /// an output (the process died during the call) gets a synthetic failed output
    /// [`ABORTED_CALL_OUTPUT`] there. The calls a parked turn waits on
    /// ([`LoadedThread::parked_turn`]) are left without output: the turn's continuation (or
    /// its end) gives them theirs before the model is asked again.
    pub fn history(&self) -> Vec<ResponseItem> {
        let mut last_output: std::collections::HashMap<&str, &FunctionCallOutput> =
            std::collections::HashMap::new();
        for item in &self.items {
            if let RolloutItem::ResponseItem(ResponseItem::FunctionCallOutput { call_id, output }) =
                item
            {
                last_output.insert(call_id.as_str(), output);
            }
        }
        // The calls a parked turn waits on that have no output yet.
        let waiting: HashSet<&str> = self
            .parked_turn()
            .iter()
            .flat_map(|p| p.calls.iter().map(|c| c.call_id.as_str()))
            .filter(|call_id| !last_output.contains_key(call_id))
            .collect();
        let mut out = Vec::new();
        // Calls of the current run still without their output, and calls given one.
        let mut open: Vec<String> = Vec::new();
        let mut placed: HashSet<String> = HashSet::new();
        let output_of = |call_id: &str| match last_output.get(call_id) {
            Some(output) => (*output).clone(),
            None => FunctionCallOutput::text(ABORTED_CALL_OUTPUT, false),
        };
        let flush =
            |out: &mut Vec<ResponseItem>, open: &mut Vec<String>, placed: &mut HashSet<String>| {
                for call_id in open.drain(..) {
                    if !waiting.contains(call_id.as_str()) && placed.insert(call_id.clone()) {
                        out.push(ResponseItem::FunctionCallOutput {
                            output: output_of(&call_id),
                            call_id,
                        });
                    }
                }
            };
        for item in &self.items {
            let ri = match item {
                RolloutItem::ResponseItem(ri) => ri,
                // Compaction replaced everything before it; calls left open before it are
                // gone with the rest (and so are outputs recorded for them later).
                RolloutItem::Compacted(c) => {
                    open.clear();
                    out = c.replacement_history.clone().unwrap_or_else(|| {
                        vec![ResponseItem::Message {
                            role: oi_protocol::models::Role::User,
                            content: vec![oi_protocol::models::ContentItem::InputText {
                                text: c.message.clone(),
                            }],
                        }]
                    });
                    placed = out
                        .iter()
                        .filter_map(|i| match i {
                            ResponseItem::FunctionCall { call_id, .. } => Some(call_id.clone()),
                            _ => None,
                        })
                        .collect();
                    continue;
                }
                _ => continue,
            };
            match ri {
                ResponseItem::FunctionCall { call_id, .. } => {
                    open.push(call_id.clone());
                    out.push(ri.clone());
                }
                ResponseItem::FunctionCallOutput { call_id, .. } => {
                    if open.contains(call_id) && placed.insert(call_id.clone()) {
                        open.retain(|c| c != call_id);
                        out.push(ResponseItem::FunctionCallOutput {
                            call_id: call_id.clone(),
                            output: output_of(call_id),
                        });
                    }
                }
                _ => {
                    flush(&mut out, &mut open, &mut placed);
                    out.push(ri.clone());
                }
            }
        }
        flush(&mut out, &mut open, &mut placed);
        out
    }

    /// The MCP tool calls of this thread whose tasks are still to be fetched: a task left
    /// running when its session ended, or one whose call never got an output (the process
    /// died). A task already fetched, or ended in its session, is not listed.
    pub fn pending_mcp_tasks(&self) -> Vec<PendingMcpTask> {
        use oi_protocol::protocol::McpCallTaskState;
        let mut tasks: Vec<PendingMcpTask> = Vec::new();
        let mut answered: HashSet<&str> = HashSet::new();
        for item in &self.items {
            match item {
                RolloutItem::EventMsg(EventMsg::McpToolCallProgress(p)) => {
                    let Some(task) = &p.task else { continue };
                    tasks.retain(|t| t.call_id != p.call_id);
                    if task.state != McpCallTaskState::Fetched {
                        tasks.push(PendingMcpTask {
                            call_id: p.call_id.clone(),
                            task_id: task.task_id.clone(),
                            left_running: task.state == McpCallTaskState::LeftRunning,
                            name: String::new(),
                            arguments: String::new(),
                        });
                    }
                }
                RolloutItem::ResponseItem(ResponseItem::FunctionCallOutput { call_id, .. }) => {
                    answered.insert(call_id);
                }
                _ => {}
            }
        }
        // A task that got its output in its own session ended there, unless it was left
        // running (its output then only says so).
        tasks.retain(|t| t.left_running || !answered.contains(t.call_id.as_str()));
        for item in &self.items {
            if let RolloutItem::ResponseItem(ResponseItem::FunctionCall {
                call_id,
                name,
                arguments,
                ..
            }) = item
                && let Some(task) = tasks.iter_mut().find(|t| &t.call_id == call_id)
            {
                task.name = name.clone();
                task.arguments = arguments.clone();
            }
        }
        tasks.retain(|t| !t.name.is_empty());
        tasks
    }

    /// Turns rebuilt from `task_started` / `task_complete` / `turn_aborted` / `error` events.
    /// Records before a turn's `task_started` (e.g. its `turn_context`) belong to that turn;
    /// a `user_message` outside any turn starts an implicit one (older or foreign writers).
    pub fn turns(&self) -> Vec<StoredTurn> {
        self.turn_spans()
            .iter()
            .map(|span| self.stored_turn(span))
            .collect()
    }

    /// The turn `span` (one of [`LoadedThread::turn_spans`]) with its records.
    pub fn stored_turn(&self, span: &TurnSpan) -> StoredTurn {
        let items = self
            .items
            .get(span.lines.clone())
            .unwrap_or_default()
            .iter()
            .filter(|i| !matches!(i, RolloutItem::SessionMeta(_)))
            .cloned()
            .collect();
        span.with_items(items)
    }

    /// The turns without their records: each names its range of [`LoadedThread::items`].
    pub fn turn_spans(&self) -> Vec<TurnSpan> {
        let marks: Vec<Mark> = self
            .items
            .iter()
            .enumerate()
            .map(|(i, item)| Mark::of_item(item, self.timestamps.get(i).map_or("", String::as_str)))
            .collect();
        turn_spans(&marks)
    }

    /// The park of the last turn, if that turn is parked ([`TurnStatus::Parked`]): what it
    /// waits for and what its continuation needs.
    pub fn parked_turn(&self) -> Option<&TurnParkedItem> {
        let span = self
            .turn_spans()
            .pop()
            .filter(|t| t.status == TurnStatus::Parked)?;
        self.items
            .get(span.lines)?
            .iter()
            .rev()
            .find_map(|i| match i {
                RolloutItem::TurnParked(p) if p.turn_id == span.id => Some(p),
                _ => None,
            })
    }

    /// The id of the last turn if it began with `task_started` and has no end record.
    /// (Implicit turns of writers that do not record turn events are left alone.)
    pub(crate) fn open_turn_id(&self) -> Option<String> {
        self.turn_spans()
            .pop()
            .filter(|t| t.status == TurnStatus::InProgress && t.opened_by_task_started)
            .map(|t| t.id)
    }
}

/// The record that closes a turn whose process died.
pub(crate) fn interrupted_marker(turn_id: String) -> RolloutItem {
    RolloutItem::EventMsg(EventMsg::TurnAborted(TurnAbortedEvent {
        turn_id: Some(turn_id),
        reason: TurnAbortReason::Interrupted,
        completed_at: Some(chrono::Utc::now().timestamp()),
        duration_ms: None,
    }))
}
