//! What a turn is, read from the thread store by any process: running, parked at approvals,
//! completed, failed, aborted, expired, or orphaned by a process that died. For front ends
//! that report a turn they may not run (MCP `tasks/get` on any server of a fleet).
//!
//! Read from the thread's outline ([`oi_thread_store::ThreadOutline`]: record types and turn
//! boundaries, nothing parsed but the few records the answer needs: the turn's park record,
//! its end, its last few records). A caller that asks again and again keeps the outline and
//! catches it up with [`crate::StoredThreads::outline_update`], which reads only what was
//! appended, then asks [`crate::StoredThreads::turn_state_in`].
//!
//! A turn with no end record is running only while some process holds its thread (the
//! rollout file's lock, the PostgreSQL lease): a process that runs a turn holds its thread
//! for the whole turn, and the lock or lease ends with the process. Nobody holding it means
//! the process died mid-turn: [`TurnState::Orphaned`], never "running" forever (the next
//! process to load the thread closes the turn as interrupted).

use oi_protocol::models::ResponseItem;
use oi_protocol::protocol::{EventMsg, TurnAbortReason, TurnParkedEvent};
use oi_thread_store::{RolloutItem, ThreadOutline, TurnSpan, TurnStatus, Unparked};
use std::collections::HashSet;

/// What a turn is now, as its thread's store says.
#[derive(Clone, Debug, PartialEq)]
pub enum TurnState {
    /// Running on a process that holds its thread. `activity`: what it is doing, from its
    /// last records (the command it runs, the tool it calls, or waiting for the model).
    Running {
        /// A short line, e.g. ``running `cargo test` `` or `waiting for the model`.
        activity: Option<String>,
    },
    /// Stopped at approvals; waits to be resumed with the answers.
    Parked(TurnParkedEvent),
    /// Ended with `task_complete`.
    Completed {
        /// The turn's answer (what the MCP `codex` tool returns): the model's last message.
        last_agent_message: Option<String>,
    },
    /// Ended after an `error`.
    Failed {
        /// The error's message.
        error: String,
    },
    /// Ended with `turn_aborted`: interrupted, or replaced (a parked turn a new turn ended),
    /// or cut off by a newer turn after its process died.
    Aborted {
        /// Why.
        reason: TurnAbortReason,
    },
    /// Parked, and nobody answered before its expiry (whether or not a process has
    /// recorded its end yet): nothing it waited for ran.
    Expired {
        /// When (unix seconds).
        expires_at: i64,
    },
    /// No end record and no process holds its thread: the process that ran it stopped
    /// before the turn ended. It will not end by itself; loading the thread closes it as
    /// interrupted.
    Orphaned,
}

/// How many of a turn's last records are read for its answer or its activity.
const TAIL_RECORDS: usize = 32;

/// The state of turn `span` of `outline`, where `held` says whether a process holds the
/// thread (asked only for a turn with no end record) and `now` is unix seconds.
pub(crate) async fn turn_state(
    outline: &ThreadOutline,
    span: &TurnSpan,
    now: i64,
    held: impl AsyncFnOnce() -> Result<bool, crate::CoreError>,
) -> Result<TurnState, crate::CoreError> {
    Ok(match span.status {
        TurnStatus::Parked => match outline.park_record(span) {
            Some(p) if now >= p.expires_at => TurnState::Expired {
                expires_at: p.expires_at,
            },
            Some(p) => TurnState::Parked(crate::parking::event_of(&p)),
            // A park whose record cannot be read: as unknown as a dead process's turn.
            None => TurnState::Orphaned,
        },
        TurnStatus::Completed => TurnState::Completed {
            last_agent_message: answer(&tail(outline, span)),
        },
        TurnStatus::Failed => TurnState::Failed {
            error: span.error.clone().unwrap_or_default(),
        },
        TurnStatus::Interrupted => {
            let expired = outline
                .unpark_record(span)
                .is_some_and(|u| u.outcome == Unparked::Expired);
            match outline.park_record(span) {
                Some(p) if expired => TurnState::Expired {
                    expires_at: p.expires_at,
                },
                _ => TurnState::Aborted {
                    reason: abort_reason(&tail(outline, span)),
                },
            }
        }
        TurnStatus::InProgress => {
            if held().await? {
                TurnState::Running {
                    activity: activity(&tail(outline, span)),
                }
            } else {
                TurnState::Orphaned
            }
        }
    })
}

/// The last records of the turn, parsed.
fn tail(outline: &ThreadOutline, span: &TurnSpan) -> Vec<RolloutItem> {
    let start = span
        .lines
        .end
        .saturating_sub(TAIL_RECORDS)
        .max(span.lines.start);
    outline.records(start..span.lines.end)
}

/// The turn's answer: its `task_complete`'s, else its last agent message.
fn answer(tail: &[RolloutItem]) -> Option<String> {
    let mut last_message = None;
    for item in tail.iter().rev() {
        match item {
            RolloutItem::EventMsg(EventMsg::TaskComplete(done)) => {
                if let Some(m) = &done.last_agent_message {
                    return Some(m.clone());
                }
            }
            RolloutItem::EventMsg(EventMsg::AgentMessage(m)) if last_message.is_none() => {
                last_message = Some(m.message.clone());
            }
            _ => {}
        }
    }
    last_message
}

fn abort_reason(tail: &[RolloutItem]) -> TurnAbortReason {
    tail.iter()
        .rev()
        .find_map(|item| match item {
            RolloutItem::EventMsg(EventMsg::TurnAborted(a)) => Some(a.reason),
            _ => None,
        })
        .unwrap_or(TurnAbortReason::Interrupted)
}

/// What a running turn does: the call it made last that has no output yet, else waiting
/// for the model (its last records are outputs, or its input).
fn activity(tail: &[RolloutItem]) -> Option<String> {
    let mut answered: HashSet<&str> = HashSet::new();
    for item in tail.iter().rev() {
        match item {
            RolloutItem::ResponseItem(ResponseItem::FunctionCallOutput { call_id, .. }) => {
                answered.insert(call_id);
            }
            RolloutItem::ResponseItem(ResponseItem::FunctionCall {
                call_id,
                name,
                arguments,
            }) if !answered.contains(call_id.as_str()) => {
                return Some(describe_call(name, arguments));
            }
            RolloutItem::ResponseItem(
                ResponseItem::FunctionCall { .. } | ResponseItem::Message { .. },
            ) => return Some("waiting for the model".into()),
            RolloutItem::EventMsg(EventMsg::TaskStarted(_) | EventMsg::UserMessage(_)) => {
                return Some("waiting for the model".into());
            }
            _ => {}
        }
    }
    None
}

/// Longest command shown in an activity line.
const ACTIVITY_MAX_CHARS: usize = 200;

/// ``running `<command>` `` for a command, ``calling `<tool>` `` for any other tool.
fn describe_call(name: &str, arguments: &str) -> String {
    let args: serde_json::Value = serde_json::from_str(arguments).unwrap_or_default();
    let command = ["command", "cmd"]
        .iter()
        .find_map(|key| args.get(key))
        .and_then(|c| match c {
            serde_json::Value::String(s) => Some(s.clone()),
            serde_json::Value::Array(words) => {
                let argv: Option<Vec<String>> = words
                    .iter()
                    .map(|w| w.as_str().map(str::to_string))
                    .collect();
                argv.map(|argv| oi_protocol::parse_command::display_command(&argv))
            }
            _ => None,
        });
    match command {
        Some(c) if crate::tools::call::is_shell_tool(name) => {
            let shown: String = c.chars().take(ACTIVITY_MAX_CHARS).collect();
            let cut = if shown.len() < c.len() { "…" } else { "" };
            format!("running `{shown}{cut}`")
        }
        _ => format!("calling `{name}`"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_without_output_is_what_runs() {
        let call = |id: &str, args: &str| {
            RolloutItem::ResponseItem(ResponseItem::FunctionCall {
                call_id: id.into(),
                name: "shell".into(),
                arguments: args.into(),
            })
        };
        let output = |id: &str| {
            RolloutItem::ResponseItem(ResponseItem::FunctionCallOutput {
                call_id: id.into(),
                output: oi_protocol::models::FunctionCallOutput::text("ok", true),
            })
        };
        let tail = vec![
            call("a", r#"{"command":["ls"]}"#),
            output("a"),
            call("b", r#"{"command":["bash","-lc","cargo test"]}"#),
        ];
        assert_eq!(activity(&tail).as_deref(), Some("running `cargo test`"));
        let tail = vec![call("a", r#"{"command":["ls"]}"#), output("a")];
        assert_eq!(activity(&tail).as_deref(), Some("waiting for the model"));
        assert_eq!(
            describe_call("mcp__srv__tool", "{}"),
            "calling `mcp__srv__tool`"
        );
    }
}
