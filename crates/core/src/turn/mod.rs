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

pub(crate) use end::{TurnOutcome, end_turn, end_turn_gated};
pub(crate) use sample::count_usage;
pub(crate) use start::{run_compact_turn, run_resumed_turn, run_turn};
pub(crate) use steps::LoopState;

use crate::compact::CompactError;
use oi_protocol::protocol::ErrorInfo;

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
