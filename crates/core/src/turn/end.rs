//! The one end of every turn (completed, failed, interrupted, compaction, crashed).

use super::{TurnFailure, now_unix};
use crate::session::Session;
use oi_protocol::models::{ResponseItem, Role};
use oi_protocol::protocol::{
    ErrorEvent, ErrorInfo, EventMsg, TaskCompleteEvent, TurnAbortReason, TurnAbortedEvent,
};
use std::time::Instant;

/// Ends the turn as its loop's result says.
pub(super) async fn finish(
    sess: &Session,
    turn_id: &str,
    result: Result<(), TurnFailure>,
    started: Instant,
) {
    let outcome = match result {
        // Completed or parked: `turn_loop` already ended (or parked) the turn (it decides
        // that where it sees late steering input).
        Ok(()) => return,
        Err(TurnFailure::Interrupted) => TurnOutcome::Interrupted,
        // What the model last said stays the turn's answer: a turn that failed for work
        // not done still shows it (exec prints it on stdout).
        Err(TurnFailure::Failed { message, info }) => TurnOutcome::Failed {
            message,
            info,
            last_agent_message: answer_of_this_turn(sess),
        },
    };
    end_turn(sess, turn_id, outcome, Some(started)).await;
}

/// How a turn ends.
pub(crate) enum TurnOutcome {
    /// `task_complete`.
    Completed { last_agent_message: Option<String> },
    /// `error`, then `task_complete` (with the model's last answer, if it gave one).
    Failed {
        message: String,
        info: Option<ErrorInfo>,
        last_agent_message: Option<String>,
    },
    /// `turn_aborted` (interrupted).
    Interrupted,
    /// `turn_aborted` (replaced: a parked turn ended by a new turn).
    Replaced,
}

impl TurnOutcome {
    fn into_events(self, turn_id: &str, duration_ms: Option<u64>) -> Vec<EventMsg> {
        let complete = |last_agent_message| {
            EventMsg::TaskComplete(TaskCompleteEvent {
                turn_id: turn_id.to_string(),
                last_agent_message,
                completed_at: Some(now_unix()),
                duration_ms,
            })
        };
        match self {
            TurnOutcome::Completed { last_agent_message } => vec![complete(last_agent_message)],
            TurnOutcome::Failed {
                message,
                info,
                last_agent_message,
            } => vec![
                EventMsg::Error(ErrorEvent {
                    message,
                    codex_error_info: info,
                }),
                complete(last_agent_message),
            ],
            TurnOutcome::Interrupted | TurnOutcome::Replaced => {
                let reason = match self {
                    TurnOutcome::Replaced => TurnAbortReason::Replaced,
                    _ => TurnAbortReason::Interrupted,
                };
                vec![EventMsg::TurnAborted(TurnAbortedEvent {
                    turn_id: Some(turn_id.to_string()),
                    reason,
                    completed_at: Some(now_unix()),
                    duration_ms,
                })]
            }
        }
    }
}

/// Whether [`end_turn`] ended the turn.
#[derive(PartialEq)]
pub(crate) enum Ended {
    Ended,
    /// A completing turn has steering input the model has not seen: it goes on.
    GoOn,
}

/// The one end of every turn (completed, failed, interrupted, compaction, crashed).
///
/// Under the state lock the turn stops being active (a completing turn with unseen
/// steering input goes on instead) and its terminal records are queued; then they are
/// made durable with no lock held and no worker blocked, and only then published, so a
/// reader of the store who reacts to the event finds the whole turn. The turn-end gate,
/// held throughout, keeps the next turn's `task_started` after these events.
pub(crate) async fn end_turn(
    sess: &Session,
    turn_id: &str,
    outcome: TurnOutcome,
    started: Option<Instant>,
) -> Ended {
    let _gate = sess.turn_end_gate().await;
    end_turn_gated(sess, turn_id, outcome, started).await
}

/// [`end_turn`] for a caller that holds the turn-end gate already (the end of a parked
/// turn, decided where turns start).
pub(crate) async fn end_turn_gated(
    sess: &Session,
    turn_id: &str,
    outcome: TurnOutcome,
    started: Option<Instant>,
) -> Ended {
    let duration_ms = started.map(|s| s.elapsed().as_millis() as u64);
    let events = {
        let mut st = sess.state();
        let ours = st.active_turn.as_ref().filter(|t| t.id == turn_id);
        let steered = ours.is_some_and(|t| !t.pending_input.is_empty());
        if steered && matches!(outcome, TurnOutcome::Completed { .. }) {
            return Ended::GoOn;
        }
        if ours.is_some() {
            st.active_turn = None;
        }
        // Pending approvals of this turn: their waiters are gone; answers given to it when
        // it was resumed are its own.
        st.pending_approvals.clear();
        st.preanswers.clear();
        st.sandboxed_runs.clear();
        let events = outcome.into_events(turn_id, duration_ms);
        for e in &events {
            sess.record_unflushed(turn_id, e);
        }
        events
    };
    sess.flush_async(turn_id).await;
    for e in events {
        sess.publish(turn_id, e);
    }
    Ended::Ended
}

/// The last thing the model said in the current turn, if anything.
fn answer_of_this_turn(sess: &Session) -> Option<String> {
    let st = sess.state();
    st.history
        .iter()
        .rev()
        .take_while(|i| {
            !matches!(
                i,
                ResponseItem::Message {
                    role: Role::User,
                    ..
                }
            )
        })
        .find_map(|i| match i {
            ResponseItem::Message {
                role: Role::Assistant,
                ..
            } => i.message_text().filter(|t| !t.trim().is_empty()),
            _ => None,
        })
}
