//! A thread read back from disk, and the views front ends need of it.

use crate::outline::{Mark, TurnSpan, turn_spans};
use crate::parked::TurnParkedItem;
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
    /// No end record: the turn stopped at approvals and waits to be resumed (its last
    /// `turn_parked` record says what for).
    Parked,
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
    /// order, restarting from the replacement history of the last `compacted` record. A function call without an output (the process died during the call) gets a
    /// synthetic failed output [`ABORTED_CALL_OUTPUT`], placed after the run of calls and
    /// outputs it belongs to, so chat APIs accept the history. The calls a parked turn
    /// waits on ([`LoadedThread::parked_turn`]) are left without output: the turn's
    /// continuation (or its end) gives them theirs before the model is asked again.
    pub fn history(&self) -> Vec<ResponseItem> {
        let parked = self.parked_turn();
        let mut answered: HashSet<&str> = self
            .items
            .iter()
            .filter_map(|i| match i {
                RolloutItem::ResponseItem(ResponseItem::FunctionCallOutput { call_id, .. }) => {
                    Some(call_id.as_str())
                }
                _ => None,
            })
            .collect();
        answered.extend(
            parked
                .iter()
                .flat_map(|p| p.calls.iter().map(|c| c.call_id.as_str())),
        );
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
