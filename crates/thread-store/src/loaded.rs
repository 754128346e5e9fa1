//! A thread read back from disk, and the views front ends need of it.

use crate::rollout::parse_timestamp_ms;
use crate::types::{RolloutItem, SessionMeta, ThreadSummary};
use oi_protocol::models::{FunctionCallOutput, ResponseItem};
use oi_protocol::protocol::{EventMsg, TurnAbortReason, TurnAbortedEvent};
use std::collections::HashSet;

/// What the model sees in place of the output of a call that never finished.
pub const ABORTED_CALL_OUTPUT: &str = "aborted: the process stopped before this call finished";

/// A stored thread: its index summary, its `session_meta`, and every later record.
#[derive(Clone, Debug)]
pub struct LoadedThread {
    pub summary: ThreadSummary,
    pub meta: SessionMeta,
    /// Every readable record after the leading `session_meta`, in file order.
    pub items: Vec<RolloutItem>,
    /// The line timestamp of each entry of `items` (same length, same order).
    pub timestamps: Vec<String>,
    /// One message per skipped line (torn last line, corrupt line, unknown record type).
    pub warnings: Vec<String>,
}

/// How a stored turn ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TurnStatus {
    Completed,
    /// Aborted (`turn_aborted`), or cut off by a newer turn starting after a crash.
    Interrupted,
    /// Ended after an `error` event.
    Failed,
    /// No end record (yet): running now, or its process was killed.
    InProgress,
}

/// One turn rebuilt from the rollout's events (for v2 `thread/read` / `thread/resume`).
#[derive(Clone, Debug)]
pub struct StoredTurn {
    pub id: String,
    pub status: TurnStatus,
    /// The raw records of this turn, in order, from `task_started` to its end record.
    pub items: Vec<RolloutItem>,
    /// Unix seconds.
    pub started_at: Option<i64>,
    /// Unix seconds.
    pub completed_at: Option<i64>,
    pub duration_ms: Option<u64>,
    /// The message of the turn's `error` event, if any.
    pub error: Option<String>,
}

impl StoredTurn {
    fn new(id: String, started_at: Option<i64>, items: Vec<RolloutItem>) -> Self {
        StoredTurn {
            id,
            status: TurnStatus::InProgress,
            items,
            started_at,
            completed_at: None,
            duration_ms: None,
            error: None,
        }
    }
}

fn is_conversation(item: &RolloutItem) -> bool {
    matches!(
        item,
        RolloutItem::ResponseItem(_)
            | RolloutItem::EventMsg(EventMsg::UserMessage(_) | EventMsg::AgentMessage(_))
    )
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
        if let Some(turn_id) = self.open_turn_id() {
            lines.push(crate::types::RolloutLine {
                timestamp: crate::rollout::format_timestamp(chrono::Utc::now()),
                item: interrupted_marker(turn_id),
            });
        }
        lines
    }

    /// The conversation history to send to the model on resume: every `ResponseItem` in
    /// order, restarting from the replacement history of the last `compacted` record. A function call without an output (the process died during the call) gets a
    /// synthetic failed output [`ABORTED_CALL_OUTPUT`], placed after the run of calls and
    /// outputs it belongs to, so chat APIs accept the history.
    pub fn history(&self) -> Vec<ResponseItem> {
        let answered: HashSet<&str> = self
            .items
            .iter()
            .filter_map(|i| match i {
                RolloutItem::ResponseItem(ResponseItem::FunctionCallOutput { call_id, .. }) => {
                    Some(call_id.as_str())
                }
                _ => None,
            })
            .collect();
        let mut out = Vec::new();
        let mut dangling: Vec<String> = Vec::new();
        let flush = |out: &mut Vec<ResponseItem>, dangling: &mut Vec<String>| {
            for call_id in dangling.drain(..) {
                out.push(ResponseItem::FunctionCallOutput {
                    call_id,
                    output: FunctionCallOutput::text(ABORTED_CALL_OUTPUT, false),
                });
            }
        };
        for item in &self.items {
            let ri = match item {
                RolloutItem::ResponseItem(ri) => ri,
                // Compaction replaced everything before it; calls left dangling before it
                // are gone with the rest.
                RolloutItem::Compacted(c) => {
                    dangling.clear();
                    out = c.replacement_history.clone().unwrap_or_else(|| {
                        vec![ResponseItem::Message {
                            role: oi_protocol::models::Role::User,
                            content: vec![oi_protocol::models::ContentItem::InputText {
                                text: c.message.clone(),
                            }],
                        }]
                    });
                    continue;
                }
                _ => continue,
            };
            match ri {
                ResponseItem::FunctionCall { call_id, .. } => {
                    if !answered.contains(call_id.as_str()) {
                        dangling.push(call_id.clone());
                    }
                }
                ResponseItem::FunctionCallOutput { .. } => {}
                _ => flush(&mut out, &mut dangling),
            }
            out.push(ri.clone());
        }
        flush(&mut out, &mut dangling);
        out
    }

    /// Turns rebuilt from `task_started` / `task_complete` / `turn_aborted` / `error` events.
    /// Records before a turn's `task_started` (e.g. its `turn_context`) belong to that turn;
    /// a `user_message` outside any turn starts an implicit one (older or foreign writers).
    pub fn turns(&self) -> Vec<StoredTurn> {
        let mut turns: Vec<StoredTurn> = Vec::new();
        let mut current: Option<StoredTurn> = None;
        let mut pending: Vec<RolloutItem> = Vec::new();
        let mut last_turn_context_id: Option<String> = None;
        for (i, item) in self.items.iter().enumerate() {
            let at = self
                .timestamps
                .get(i)
                .and_then(|t| parse_timestamp_ms(t))
                .map(|ms| ms.div_euclid(1000));
            match item {
                RolloutItem::SessionMeta(_) => {}
                RolloutItem::TurnContext(tc) if current.is_none() => {
                    if !tc.turn_id.is_empty() {
                        last_turn_context_id = Some(tc.turn_id.clone());
                    }
                    pending.push(item.clone());
                }
                RolloutItem::EventMsg(EventMsg::TaskStarted(e)) => {
                    if let Some(mut t) = current.take() {
                        t.status = TurnStatus::Interrupted;
                        turns.push(t);
                    }
                    let mut items = std::mem::take(&mut pending);
                    items.push(item.clone());
                    current = Some(StoredTurn::new(
                        e.turn_id.clone(),
                        e.started_at.or(at),
                        items,
                    ));
                }
                RolloutItem::EventMsg(
                    ev @ (EventMsg::TaskComplete(_) | EventMsg::TurnAborted(_)),
                ) => {
                    let mut t = current.take().unwrap_or_else(|| {
                        let id = match ev {
                            EventMsg::TaskComplete(e) => e.turn_id.clone(),
                            EventMsg::TurnAborted(e) => e.turn_id.clone().unwrap_or_default(),
                            _ => String::new(),
                        };
                        StoredTurn::new(id, None, std::mem::take(&mut pending))
                    });
                    t.items.push(item.clone());
                    match ev {
                        EventMsg::TaskComplete(e) => {
                            t.completed_at = e.completed_at.or(at);
                            t.duration_ms = e.duration_ms;
                            t.status = if t.error.is_some() {
                                TurnStatus::Failed
                            } else {
                                TurnStatus::Completed
                            };
                        }
                        EventMsg::TurnAborted(e) => {
                            t.completed_at = e.completed_at.or(at);
                            t.duration_ms = e.duration_ms;
                            t.status = TurnStatus::Interrupted;
                        }
                        _ => {}
                    }
                    turns.push(t);
                }
                RolloutItem::EventMsg(EventMsg::UserMessage(_)) if current.is_none() => {
                    let id = last_turn_context_id
                        .take()
                        .unwrap_or_else(|| format!("turn-{}", turns.len() + 1));
                    let mut items = std::mem::take(&mut pending);
                    items.push(item.clone());
                    current = Some(StoredTurn::new(id, at, items));
                }
                _ => {
                    if let RolloutItem::EventMsg(EventMsg::Error(e)) = item
                        && let Some(t) = current.as_mut()
                    {
                        t.error = Some(e.message.clone());
                    }
                    match current.as_mut() {
                        Some(t) => t.items.push(item.clone()),
                        None => pending.push(item.clone()),
                    }
                }
            }
        }
        if let Some(t) = current.take() {
            turns.push(t);
        }
        if !pending.is_empty() {
            if pending.iter().any(is_conversation) {
                let id = format!("turn-{}", turns.len() + 1);
                turns.push(StoredTurn::new(id, None, pending));
            } else if let Some(last) = turns.last_mut() {
                last.items.extend(pending);
            }
        }
        turns
    }

    /// The id of the last turn if it began with `task_started` and has no end record.
    /// (Implicit turns of writers that do not record turn events are left alone.)
    pub(crate) fn open_turn_id(&self) -> Option<String> {
        self.turns()
            .pop()
            .filter(|t| {
                t.status == TurnStatus::InProgress
                    && t.items
                        .iter()
                        .any(|i| matches!(i, RolloutItem::EventMsg(EventMsg::TaskStarted(_))))
            })
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
