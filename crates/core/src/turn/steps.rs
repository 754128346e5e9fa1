//! The turn's loop: sample, run the calls, repeat until the model answers.

use super::answer::{Answer, EMPTY_ANSWER_NOTE_START, Verdict};
use super::calls::{after_calls, answer_unrun, run_response_calls};
use super::end::{Ended, TurnOutcome, end_turn};
use super::sample::{Sampled, report_usage, sample};
use super::{LoopState, TurnFailure, compact_failure, store_stalled};
use crate::compact::compact_if_needed;
use crate::prompt::build_sized_prompt;
use crate::session::{ActiveTurn, Session};
use crate::tools::call::PendingCall;
use crate::tools::run_calls;
use oi_protocol::models::{ResponseItem, Role};
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// The turn's loop. `Ok` when the turn ended (or parked) here; `Err` for the caller to end
/// it. A resumed turn starts with the calls it waited on (`resumed_calls`) and the loop's
/// state from before its park.
pub(super) async fn turn_loop(
    sess: &Arc<Session>,
    turn_id: &str,
    cancel: &CancellationToken,
    started: Instant,
    mut state: LoopState,
    resumed_calls: Option<Vec<PendingCall>>,
) -> Result<(), TurnFailure> {
    if let Some(calls) = resumed_calls {
        let run = run_calls(sess, turn_id, calls, cancel).await;
        if after_calls(sess, turn_id, cancel, run, &state, started).await? {
            return Ok(());
        }
    }
    let max_steps = sess.turn_context().config.max_turn_steps;
    loop {
        state.steps += 1;
        let sampled = next_response(sess, turn_id, cancel, state.steps, max_steps).await?;
        // The request is in the history now, and no call of the response has run yet.
        state.answers.remember_files(sess).await;
        let Sampled {
            items,
            truncated,
            looped,
            paused,
            max_output_tokens,
            ..
        } = sampled;
        let reply = read_reply(&items, &mut state.last_agent_message);
        sess.push_history(turn_id, items).await;
        // The store stopped answering: the calls are not run (a call must be stored before
        // it runs), and the turn ends now instead of waiting for the store at every step.
        if let Some(why) = sess.store_stalled() {
            let output = "not run: the thread store stopped answering, so the turn was stopped";
            answer_unrun(sess, turn_id, reply.calls, output).await;
            return Err(store_stalled(&why));
        }
        if !reply.calls.is_empty() {
            let calls = reply.calls;
            if run_response_calls(sess, turn_id, cancel, calls, truncated, &mut state, started)
                .await?
            {
                return Ok(());
            }
            continue;
        }
        // A paused answer is not finished: the same conversation, this part included, is
        // sent again and the model goes on where it stopped (bounded by `max_turn_steps`).
        if paused {
            continue;
        }
        let answer = Answer {
            text: state
                .last_agent_message
                .as_deref()
                .map(crate::answer_check::without_note_wrapper),
            answered: reply.answered,
            truncated,
            looped,
            thought: reply.thought,
            max_output_tokens,
        };
        let last_agent_message = match state.answers.judge(sess, turn_id, answer).await? {
            Verdict::AskAgain => continue,
            Verdict::Complete { last_agent_message } => last_agent_message,
            Verdict::RunShownCalls(calls) => {
                let items = calls
                    .iter()
                    .map(|(call_id, name, arguments)| ResponseItem::FunctionCall {
                        call_id: call_id.clone(),
                        name: name.clone(),
                        arguments: arguments.clone(),
                    })
                    .collect();
                sess.push_history(turn_id, items).await;
                if run_response_calls(sess, turn_id, cancel, calls, false, &mut state, started)
                    .await?
                {
                    return Ok(());
                }
                continue;
            }
        };
        // A `Stop` hook may send the model back to work, with its reason as the user's word.
        if let Some(message) = crate::hooks::lifecycle::stop(
            sess,
            turn_id,
            last_agent_message.as_deref(),
            state.stop_continuations,
            cancel,
        )
        .await
        {
            if cancel.is_cancelled() {
                return Err(TurnFailure::Interrupted);
            }
            state.stop_continuations += 1;
            sess.push_history(turn_id, vec![ResponseItem::user_text(message)])
                .await;
            continue;
        }
        if cancel.is_cancelled() {
            return Err(TurnFailure::Interrupted);
        }
        // Done, unless the user steered while the model was answering.
        let outcome = TurnOutcome::Completed { last_agent_message };
        if end_turn(sess, turn_id, outcome, Some(started)).await == Ended::Ended {
            return Ok(());
        }
    }
}

/// Step `step` of the turn: the user's steering input into history, then the model's
/// response to the conversation so far (compacted first when it nears the window).
async fn next_response(
    sess: &Arc<Session>,
    turn_id: &str,
    cancel: &CancellationToken,
    step: usize,
    max_steps: usize,
) -> Result<Sampled, TurnFailure> {
    take_pending_input(sess, turn_id).await;
    if let Some(why) = sess.store_stalled() {
        return Err(store_stalled(&why));
    }
    if step > max_steps {
        return Err(TurnFailure::other(format!(
            "stopped this turn: the model made {max_steps} requests without finishing its answer (it kept calling tools). Raise `max_turn_steps` in config.toml if the task really needs more steps."
        )));
    }
    // Before a request would cross the auto-compact limit (at the start of a turn, and
    // between tool calls), summarize the history so far.
    // The request is built once: the check and the send share it (unless compaction
    // replaced the history it was built from).
    let mut built = build_sized_prompt(sess);
    if compact_if_needed(sess, turn_id, cancel, built.1)
        .await
        .map_err(compact_failure)?
    {
        built = build_sized_prompt(sess);
    }
    let sampled = sample(sess, turn_id, cancel, built).await?;
    report_usage(sess, turn_id, &sampled);
    Ok(sampled)
}

/// What one response holds besides its items.
struct Reply {
    calls: Vec<PendingCall>,
    /// The model said something (not just the note about an empty answer, repeated).
    answered: bool,
    /// The model reasoned.
    thought: bool,
}

/// Reads a response; its last words become the turn's answer so far.
fn read_reply(items: &[ResponseItem], last_agent_message: &mut Option<String>) -> Reply {
    let calls = items
        .iter()
        .filter_map(|i| match i {
            ResponseItem::FunctionCall {
                call_id,
                name,
                arguments,
            } => Some((call_id.clone(), name.clone(), arguments.clone())),
            _ => None,
        })
        .collect();
    let mut answered = false;
    for item in items {
        if let ResponseItem::Message {
            role: Role::Assistant,
            ..
        } = item
        {
            *last_agent_message = item.message_text();
            answered |= last_agent_message
                .as_deref()
                .is_some_and(|t| !t.trim().is_empty());
        }
    }
    // Small models answer the note about an empty answer by repeating it: that is no
    // answer either (recorded: exec printed the note as the model's answer).
    if answered
        && last_agent_message
            .as_deref()
            .is_some_and(|t| t.contains(EMPTY_ANSWER_NOTE_START))
    {
        answered = false;
        *last_agent_message = None;
    }
    let thought = items
        .iter()
        .any(|i| matches!(i, ResponseItem::Reasoning { text, .. } if !text.is_empty()));
    Reply {
        calls,
        answered,
        thought,
    }
}

/// Move steering input into history (and tell front ends about it).
async fn take_pending_input(sess: &Session, turn_id: &str) {
    let pending = {
        let mut st = sess.state();
        match st.active_turn.as_mut() {
            Some(ActiveTurn { pending_input, .. }) => std::mem::take(pending_input),
            None => Vec::new(),
        }
    };
    let request = pending.iter().any(|i| {
        matches!(
            i,
            ResponseItem::Message {
                role: Role::User,
                ..
            }
        )
    });
    sess.push_history(turn_id, pending).await;
    // A new request (the turn's, or steering): the files it names and the skill it names,
    // for the profiles that show them up front.
    if request {
        crate::named_files::attach(sess, turn_id).await;
        crate::skills::preload::attach(sess, turn_id).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::repeats::RepeatedCalls;
    use crate::turn::answer::AnswerPolicy;
    use serde_json::json;

    /// A park record keeps the loop's state; the answer policy is stored flat, under the
    /// names the loop's flags had, so records written before it still resume.
    #[test]
    fn the_stored_loop_state_keeps_its_flat_shape() {
        let state = LoopState {
            steps: 3,
            answers: AnswerPolicy {
                nudged: true,
                nudged_for_path: false,
                not_done_nudges: 1,
                ran_calls: true,
                commands_from_text: 0,
                files_before: Default::default(),
                ran_named_tests: true,
                restored_tests: false,
            },
            last_agent_message: Some("done".into()),
            repeats: RepeatedCalls::default(),
            stop_continuations: 0,
        };
        let stored = serde_json::to_value(&state).unwrap();
        assert_eq!(stored["steps"], json!(3));
        assert_eq!(stored["nudged"], json!(true));
        assert_eq!(stored["nudged_for_path"], json!(false));
        assert_eq!(stored["not_done_nudges"], json!(1));
        assert_eq!(stored["ran_calls"], json!(true));
        assert_eq!(stored["last_agent_message"], json!("done"));
        assert!(stored.get("answers").is_none(), "{stored}");

        assert_eq!(stored["ran_named_tests"], json!(true));

        // Written before `not_done_nudges` and `ran_named_tests` existed.
        let mut older = stored.clone();
        older.as_object_mut().unwrap().remove("not_done_nudges");
        older.as_object_mut().unwrap().remove("ran_named_tests");
        let read: LoopState = serde_json::from_value(older).unwrap();
        assert_eq!(read.answers.not_done_nudges, 0);
        assert!(!read.answers.ran_named_tests);
        assert!(read.answers.nudged && read.answers.ran_calls);
        assert_eq!(read.steps, 3);
    }
}
