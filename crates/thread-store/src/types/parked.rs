//! The records of a parked turn: `turn_parked` (the turn stopped at approvals; what it
//! waits for and what its continuation needs) and `turn_unparked` (how the park ended:
//! answered, expired, replaced by a new turn, interrupted).
//!
//! Both are plain appended records, like every other: a reader that predates them skips
//! them as an unknown record type, and then sees the parked turn as a turn whose process
//! died (its resume closes it as interrupted, and gives the waiting calls the usual
//! "aborted" output): nothing breaks, the park is just abandoned.
//!
//! A turn is parked when its last `turn_parked` has no later `turn_unparked` and the turn
//! has no end record ([`crate::TurnStatus::Parked`]). While it is, the calls it waits on
//! have no output in the rollout, and [`crate::LoadedThread::history`] leaves them so
//! instead of repairing them as dangling: the continuation gives them their outputs.

use super::TurnContextItem;
use oi_protocol::protocol::{ParkedAnswer, ParkedRequest};
use serde::{Deserialize, Serialize};

/// Payload of a `turn_parked` record.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct TurnParkedItem {
    /// The turn that parked.
    pub turn_id: String,
    /// This park (a turn parks again when its continuation reaches another approval).
    pub park_id: String,
    /// Unix seconds.
    pub parked_at: i64,
    /// Unix seconds: the park cannot be resumed after this.
    pub expires_at: i64,
    /// What the turn waits for, in call order.
    pub requests: Vec<ParkedRequest>,
    /// Every call of the model's last response that has no output yet, in order: those
    /// the requests are about and those after them, which have not run. The continuation
    /// runs them (the answered ones without asking again).
    pub calls: Vec<ParkedCall>,
    /// The settings the turn runs with; its continuation, wherever it runs, keeps them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<TurnContextItem>,
    /// The engine's own state of the turn (how far its loop got), opaque to the store.
    #[serde(default)]
    pub engine: serde_json::Value,
}

/// A function call waiting in a parked turn.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParkedCall {
    /// The id of the model's tool call.
    pub call_id: String,
    /// The tool the model called.
    pub name: String,
    /// The call's arguments (JSON text, as the model wrote them).
    pub arguments: String,
}

/// Payload of a `turn_unparked` record: the park `park_id` of turn `turn_id` is over.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TurnUnparkedItem {
    /// The turn that was parked.
    pub turn_id: String,
    /// The park that is over.
    pub park_id: String,
    /// How it ended.
    pub outcome: Unparked,
}

/// How a park ended. Tagged `how`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "how", rename_all = "snake_case")]
pub enum Unparked {
    /// Resumed with these answers: the continuation follows in the same turn.
    Answered {
        /// The answers, one per parked request.
        answers: Vec<ParkedAnswer>,
    },
    /// Nobody answered before `expires_at`; the turn ends (`turn_aborted`).
    Expired,
    /// A new turn started instead; the parked one ends (`turn_aborted`, `replaced`).
    Replaced,
    /// Interrupted while parked; the turn ends (`turn_aborted`, `interrupted`).
    Interrupted,
}
