//! One turn: stream the model, run the tools it calls, repeat until it answers.
//!
//! Read top to bottom: [`start`] announces the turn and hands it to [`steps`], the loop
//! (build the request with `prompt`, [`sample`] the model, run its [`calls`], or judge its
//! answer under the [`answer`] policy); [`end`] is the one way every turn ends, and
//! [`parking`] the way a turn waits for approvals across processes and goes on. Compaction
//! and window recovery (`compact`) are called from here and never call back.

mod answer;
mod calls;
mod end;
pub(crate) mod parking;
mod sample;
mod start;
mod steps;

use crate::compact::CompactError;
use crate::repeats::RepeatedCalls;
use answer::AnswerPolicy;
pub(crate) use end::{TurnOutcome, end_turn, end_turn_gated};
use oi_protocol::protocol::ErrorInfo;
pub(crate) use sample::count_usage;
use serde::{Deserialize, Serialize};
pub(crate) use start::{run_compact_turn, run_resumed_turn, run_turn};

/// How far a turn's loop got: kept in the park record (see `parking`), so the continuation
/// goes on where the turn stopped (its step count, how its answers were judged so far, the
/// calls it keeps repeating...).
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub(crate) struct LoopState {
    pub steps: usize,
    #[serde(flatten)]
    pub answers: AnswerPolicy,
    pub last_agent_message: Option<String>,
    pub repeats: RepeatedCalls,
    /// How many times `Stop` hooks sent this turn back to work (bounded, see
    /// `hooks::lifecycle`).
    #[serde(default)]
    pub stop_continuations: usize,
}

/// Why a turn's loop stopped without ending the turn itself (the caller ends it).
pub(crate) enum TurnFailure {
    Interrupted,
    Failed {
        message: String,
        info: Option<ErrorInfo>,
    },
}

impl TurnFailure {
    /// A failure that is no error of the model or the server (`ErrorInfo::Other`).
    fn other(message: impl Into<String>) -> Self {
        TurnFailure::Failed {
            message: message.into(),
            info: Some(ErrorInfo::Other),
        }
    }
}

pub(crate) fn compact_failure(e: CompactError) -> TurnFailure {
    match e {
        CompactError::Interrupted => TurnFailure::Interrupted,
        CompactError::Failed(message) => TurnFailure::Failed {
            message,
            info: Some(ErrorInfo::ContextWindowExceeded),
        },
    }
}

/// The failure of a turn whose store stopped answering.
fn store_stalled(why: &str) -> TurnFailure {
    TurnFailure::other(format!(
        "stopped this turn: the thread store is not answering ({why}); what the thread \
         recorded since is kept in memory and saved once the store answers again, while \
         this process runs"
    ))
}

fn now_unix() -> i64 {
    chrono::Utc::now().timestamp()
}
