//! The calls of one response: run them (or answer them unrun when the model repeats itself
//! or wrote them past its output limit), then stop, park, or go on.

use super::LoopState;
use super::TurnFailure;
use crate::repeats::Repeat;
use crate::session::Session;
use crate::tools::call::{PendingCall, ToolOutcome};
use crate::tools::{CallsRun, run_calls};
use oi_protocol::models::ResponseItem;
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// The output of a call whose arguments were cut off by the output token limit.
const TRUNCATED_CALL_OUTPUT: &str = "not run: your output hit the output token limit (finish_reason \"length\") while you were writing this call, so its arguments are incomplete. Make the call again with shorter arguments, e.g. write a big file in several smaller steps.";

/// Runs the calls of a response (`truncated`: it stopped at the output token limit).
/// `Ok(true)`: the turn parked.
pub(super) async fn run_response_calls(
    sess: &Arc<Session>,
    turn_id: &str,
    cancel: &CancellationToken,
    calls: Vec<PendingCall>,
    truncated: bool,
    state: &mut LoopState,
    started: Instant,
) -> Result<bool, TurnFailure> {
    // A call cut off at the output token limit is not run: its arguments are incomplete.
    // The model is told to retry with shorter arguments.
    let (calls, cut_off): (Vec<PendingCall>, Vec<PendingCall>) = calls
        .into_iter()
        .partition(|(_, _, arguments)| !truncated || is_json(arguments));
    // Every call gets an output, even when the turn stops, so the history stays valid
    // for the next request (independent MCP calls run concurrently: see tools::parallel).
    let mut parked = None;
    let mut repeat_failure = None;
    let abort = match state.repeats.observe(&calls) {
        Repeat::Run => {
            state.answers.ran_calls |= !calls.is_empty();
            let run = run_calls(sess, turn_id, calls, cancel).await;
            parked = run.parked;
            run.abort
        }
        Repeat::Refuse(n) => {
            sess.warn(
                turn_id,
                format!("the model asked for the same call {n} times in a row; it was not run again, and the model was told to answer or do something different"),
            );
            answer_unrun(sess, turn_id, calls, &crate::repeats::nudge(n)).await;
            false
        }
        Repeat::Stop(n) => {
            let names: Vec<String> = calls
                .iter()
                .map(|(_, name, _)| format!("`{name}`"))
                .collect();
            repeat_failure = Some(crate::repeats::failure(n, &names.join(", ")));
            answer_unrun(sess, turn_id, calls, "not run: the turn was stopped").await;
            false
        }
    };
    for (call_id, name, _) in cut_off {
        sess.warn(
            turn_id,
            format!("the model hit its output token limit while writing a `{name}` call; the call was not run and the model was told to retry with shorter arguments"),
        );
        answer_unrun(
            sess,
            turn_id,
            vec![(call_id, name, String::new())],
            TRUNCATED_CALL_OUTPUT,
        )
        .await;
    }
    if let Some(message) = repeat_failure {
        return Err(TurnFailure::other(message));
    }
    let run = CallsRun { abort, parked };
    after_calls(sess, turn_id, cancel, run, state, started).await
}

/// After a response's calls ran: stop when the user aborted or the turn was interrupted
/// (calls left waiting get the interrupted output first), park when calls wait for
/// approvals. `Ok(true)`: the turn parked.
pub(super) async fn after_calls(
    sess: &Session,
    turn_id: &str,
    cancel: &CancellationToken,
    run: CallsRun,
    state: &LoopState,
    started: Instant,
) -> Result<bool, TurnFailure> {
    if run.abort || cancel.is_cancelled() {
        if let Some(parked) = run.parked {
            answer_unrun(
                sess,
                turn_id,
                parked.unanswered,
                "not run: the turn was interrupted",
            )
            .await;
        }
        return Err(TurnFailure::Interrupted);
    }
    match run.parked {
        Some(parked) => {
            super::parking::park(sess, turn_id, parked, state.clone(), started).await;
            Ok(true)
        }
        None => Ok(false),
    }
}

/// Records `output` as the output of each of `calls`, which did not run (a call in history
/// needs an output for the next request to be valid).
pub(super) async fn answer_unrun(
    sess: &Session,
    turn_id: &str,
    calls: Vec<PendingCall>,
    output: &str,
) {
    let outputs = calls
        .into_iter()
        .map(|(call_id, _, _)| ResponseItem::FunctionCallOutput {
            call_id,
            output: ToolOutcome::err(output).output,
        })
        .collect();
    sess.push_history(turn_id, outputs).await;
}

fn is_json(s: &str) -> bool {
    serde_json::from_str::<serde::de::IgnoredAny>(s).is_ok()
}
