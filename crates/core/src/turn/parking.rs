//! Turns parked at approvals, and resumed on any process.
//!
//! A turn started with [`TurnOptions::park_approvals`] does not wait when a call of the model
//! needs approval (a command, a patch, an MCP tool call): the calls of that response that
//! have no output yet, the requests and how far the turn's loop got are recorded in the
//! thread's rollout (`turn_parked`, made durable first), `turn_parked` is published, the turn
//! task stops and the thread is idle: it can be released, and any process sharing the store
//! can load it and resume the turn with the answers ([`crate::Thread::resume_parked`]). The
//! continuation records `turn_unparked` (durable before anything runs, so an approved command
//! runs at most once: a second resume, here or elsewhere, finds the turn no longer parked),
//! runs the calls through the normal tool path with the answers given (approved calls are not
//! asked again, denied ones get the usual refusal, `abort` ends the turn), and goes on with
//! the turn's loop under the same turn id: it ends the turn, or parks again at the next
//! approval.
//!
//! What stays in-process: an MCP server's questions (elicitations) and its sampling requests
//! arrive inside a running tool call of that server, which cannot be suspended; they are
//! asked and waited for as in any turn (and fail closed after `approval_timeout_sec`).
//!
//! A parked turn ends without its continuation when a new turn starts on the thread
//! (`turn_aborted`, `replaced`), when it is interrupted (`interrupted`), or when a resume
//! comes after its expiry (`parked_turn_timeout_sec`; `interrupted`, recorded as expired):
//! its waiting calls then get a "not run" output, so the history stays valid.

use super::{LoopState, TurnOutcome, end_turn_gated};
use crate::error::CoreError;
use crate::session::{ActiveTurn, Session};
use crate::tools::ParkedCalls;
use crate::tools::call::PendingCall;
use oi_protocol::models::{FunctionCallOutput, ResponseItem};
use oi_protocol::protocol::{
    EventMsg, ParkedAnswer, ParkedRequest, ReviewDecision, TurnParkedEvent,
};
use oi_thread_store::{
    ParkedCall, RolloutItem, TurnContextItem, TurnParkedItem, TurnUnparkedItem, Unparked,
};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// How a turn runs, beyond what it does ([`crate::StartTurn`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TurnOptions {
    /// Approvals of the model's calls (commands, patches, MCP tool calls) park the turn
    /// instead of being waited for: the turn publishes `turn_parked` and stops, and is
    /// resumed with [`crate::Thread::resume_parked`], on this process or another one that
    /// shares the thread store. Its continuations park too.
    pub park_approvals: bool,
}

impl TurnOptions {
    /// Options of a turn that parks its approvals.
    pub fn parking() -> Self {
        Self {
            park_approvals: true,
        }
    }
}

/// Why a parked turn was not resumed. The turn stays parked unless the variant says it
/// ended.
#[derive(Debug, thiserror::Error)]
pub enum ParkError {
    /// The turn is not parked on this thread: it was already resumed (here or by another
    /// process), it ended, or it never parked.
    #[error(
        "turn {turn_id} is not parked: it was already resumed, it ended, or it never waited for approval"
    )]
    NotParked {
        /// The turn asked for.
        turn_id: String,
    },
    /// The answers are for an earlier park of the turn; it now waits at another one.
    #[error(
        "the answers are for park {given} of turn {turn_id}, which is over; the turn now waits at park {current}"
    )]
    StalePark {
        /// The turn.
        turn_id: String,
        /// The park the answers name.
        given: String,
        /// The park the turn waits at.
        current: String,
    },
    /// The park expired before the answers came; the turn has ended (`turn_aborted`), its
    /// waiting calls not run.
    #[error(
        "turn {turn_id} waited for approval until {expires_at} (unix seconds) and has expired: nothing it asked for ran; start a new turn"
    )]
    Expired {
        /// The turn.
        turn_id: String,
        /// When it expired (unix seconds).
        expires_at: i64,
    },
    /// An answer names a request the turn does not wait for.
    #[error(
        "turn {turn_id} does not wait for request `{request_id}`; it waits for: {}",
        pending.join(", ")
    )]
    UnknownRequest {
        /// The turn.
        turn_id: String,
        /// The id answered.
        request_id: String,
        /// The ids it waits for.
        pending: Vec<String>,
    },
    /// A request is answered twice.
    #[error("request `{request_id}` of turn {turn_id} is answered more than once")]
    DuplicateAnswer {
        /// The turn.
        turn_id: String,
        /// The id answered twice.
        request_id: String,
    },
    /// Some requests have no answer: every request of a park is answered at once.
    #[error("turn {turn_id} also waits for: {}; answer every request", missing.join(", "))]
    MissingAnswers {
        /// The turn.
        turn_id: String,
        /// The ids without an answer.
        missing: Vec<String>,
    },
    /// The answers could not be saved, so nothing ran: the turn has ended (`turn_aborted`),
    /// since what the store will hold of it is not known.
    #[error(
        "the answers to turn {turn_id} could not be saved, so nothing ran and the turn ended: {message}"
    )]
    NotSaved {
        /// The turn.
        turn_id: String,
        /// Why.
        message: String,
    },
    /// The thread could not take the request (it shut down, another turn runs, ...).
    #[error(transparent)]
    Thread(#[from] CoreError),
}

/// An answer a resumed turn was given, for the approval that asks exactly `request`.
#[derive(Debug)]
pub(crate) struct Preanswer {
    pub request: ParkedRequest,
    pub decision: ReviewDecision,
}

/// The engine's part of a `turn_parked` record (opaque to the store).
#[derive(Debug, Default, Serialize, Deserialize)]
struct EngineState {
    #[serde(default, rename = "loop")]
    loop_state: LoopState,
    /// When the turn started (unix milliseconds), for its duration.
    #[serde(default)]
    started_at_ms: Option<i64>,
    /// Steering input that came while the turn ran, which the model has not seen yet.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pending_input: Vec<ResponseItem>,
    /// Per call id, the sandboxed run of a command whose park asks to run it again outside
    /// the sandbox (what the model gets if the answer is no).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    sandboxed_outputs: BTreeMap<String, FunctionCallOutput>,
}

/// What a resumed turn's continuation starts with.
pub(crate) struct Resumed {
    pub loop_state: LoopState,
    pub calls: Vec<PendingCall>,
    pub started: Instant,
}

fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// The moment a turn started `started_at_ms` (unix milliseconds) is, on this process's
/// clock (for the duration of a turn that parked, maybe elsewhere).
fn instant_of(started_at_ms: Option<i64>) -> Option<Instant> {
    let ago = now_ms().checked_sub(started_at_ms?)?;
    Instant::now().checked_sub(Duration::from_millis(u64::try_from(ago).ok()?))
}

/// Parks turn `turn_id` (the turn task calls this and stops): records the park, makes it
/// durable, then publishes `turn_parked`. Like the end of a turn, under the turn-end gate:
/// the turn stops being active and its park is recorded under the state lock, so no other
/// turn starts or resumes before the park is published.
pub(crate) async fn park(
    sess: &Session,
    turn_id: &str,
    parked: ParkedCalls,
    loop_state: LoopState,
    started: Instant,
) {
    let _gate = sess.turn_end_gate().await;
    let ctx = sess.turn_context();
    let config = &ctx.config;
    let now = now_ms();
    let ttl = i64::try_from(config.parked_turn_timeout.as_secs()).unwrap_or(i64::MAX);
    let mut sandboxed_outputs = BTreeMap::new();
    let mut requests = Vec::new();
    for ((call_id, _, _), ask) in parked.waiting {
        if let Some(output) = ask.sandboxed_output {
            sandboxed_outputs.insert(call_id, output);
        }
        requests.push(ask.request);
    }
    let item = {
        let mut st = sess.state();
        let pending_input = match st.active_turn.as_ref() {
            Some(t) if t.id == turn_id => st
                .active_turn
                .take()
                .map(|t| t.pending_input)
                .unwrap_or_default(),
            _ => Vec::new(),
        };
        st.pending_approvals.clear();
        st.preanswers.clear();
        st.sandboxed_runs.clear();
        let engine = EngineState {
            loop_state,
            started_at_ms: Some(now - i64::try_from(started.elapsed().as_millis()).unwrap_or(0)),
            pending_input,
            sandboxed_outputs,
        };
        let item = TurnParkedItem {
            turn_id: turn_id.to_string(),
            park_id: oi_protocol::ids::new_id(),
            parked_at: now.div_euclid(1000),
            expires_at: now.div_euclid(1000).saturating_add(ttl),
            requests,
            calls: parked
                .unanswered
                .into_iter()
                .map(|(call_id, name, arguments)| ParkedCall {
                    call_id,
                    name,
                    arguments,
                })
                .collect(),
            settings: Some(TurnContextItem {
                turn_id: turn_id.to_string(),
                cwd: config.cwd.clone(),
                approval_policy: config.approval_policy,
                sandbox_policy: config.sandbox_policy.clone(),
                model: config.model.clone(),
                effort: config.model_reasoning_effort,
            }),
            engine: serde_json::to_value(&engine).unwrap_or_default(),
        };
        st.parked = Some(item.clone());
        sess.record_park(turn_id, RolloutItem::TurnParked(item.clone()));
        item
    };
    sess.flush_async(turn_id).await;
    sess.publish(turn_id, EventMsg::TurnParked(event_of(&item)));
}

/// The `turn_parked` event of a park record.
pub(crate) fn event_of(item: &TurnParkedItem) -> TurnParkedEvent {
    TurnParkedEvent {
        turn_id: item.turn_id.clone(),
        park_id: item.park_id.clone(),
        requests: item.requests.clone(),
        parked_at: item.parked_at,
        expires_at: item.expires_at,
    }
}

/// Checks that `answers` answer exactly the requests of `parked`, once each.
fn check_answers(parked: &TurnParkedItem, answers: &[ParkedAnswer]) -> Result<(), ParkError> {
    let turn_id = || parked.turn_id.clone();
    let pending: Vec<String> = parked.requests.iter().map(|r| r.id().to_string()).collect();
    let mut seen = HashSet::new();
    for a in answers {
        if !pending.contains(&a.request_id) {
            return Err(ParkError::UnknownRequest {
                turn_id: turn_id(),
                request_id: a.request_id.clone(),
                pending,
            });
        }
        if !seen.insert(a.request_id.as_str()) {
            return Err(ParkError::DuplicateAnswer {
                turn_id: turn_id(),
                request_id: a.request_id.clone(),
            });
        }
    }
    let missing: Vec<String> = pending
        .into_iter()
        .filter(|id| !seen.contains(id.as_str()))
        .collect();
    if !missing.is_empty() {
        return Err(ParkError::MissingAnswers {
            turn_id: turn_id(),
            missing,
        });
    }
    Ok(())
}

/// Resumes parked turn `turn_id` (park `park_id`) with `answers`, as the thread's actor
/// does before it spawns the continuation: checks them, records `turn_unparked` and makes it
/// durable, makes the turn active again with the answers installed. An expired park ends
/// the turn here.
pub(crate) async fn resume(
    sess: &Arc<Session>,
    turn_id: &str,
    park_id: &str,
    answers: Vec<ParkedAnswer>,
    cancel: CancellationToken,
) -> Result<Resumed, ParkError> {
    let _gate = sess.turn_end_gate().await;
    let parked = {
        let st = sess.state();
        if let Some(active) = st.active_turn.as_ref() {
            return Err(CoreError::TurnRunning {
                id: sess.id,
                turn_id: active.id.clone(),
            }
            .into());
        }
        match st.parked.as_ref() {
            Some(p) if p.turn_id == turn_id => p.clone(),
            _ => {
                return Err(ParkError::NotParked {
                    turn_id: turn_id.to_string(),
                });
            }
        }
    };
    if parked.park_id != park_id {
        return Err(ParkError::StalePark {
            turn_id: turn_id.to_string(),
            given: park_id.to_string(),
            current: parked.park_id,
        });
    }
    if now_ms().div_euclid(1000) >= parked.expires_at {
        settle_gated(sess, Unparked::Expired).await;
        return Err(ParkError::Expired {
            turn_id: turn_id.to_string(),
            expires_at: parked.expires_at,
        });
    }
    check_answers(&parked, &answers)?;
    let engine: EngineState = serde_json::from_value(parked.engine.clone()).unwrap_or_default();
    // The answers are durable before anything they allow runs: a resume racing this one
    // (another process, once this one lets the thread go) finds the turn no longer parked.
    sess.state().parked = None;
    sess.record_park(
        turn_id,
        RolloutItem::TurnUnparked(TurnUnparkedItem {
            turn_id: turn_id.to_string(),
            park_id: parked.park_id.clone(),
            outcome: Unparked::Answered {
                answers: answers.clone(),
            },
        }),
    );
    if !sess.flush_saved(turn_id).await {
        let message = sess
            .unsaved()
            .map(|u| u.describe())
            .unwrap_or_else(|| "the thread store did not confirm the write".into());
        let calls = parked.calls.iter().map(|c| c.call_id.clone());
        close_calls(
            sess,
            turn_id,
            calls,
            "not run: the answer to its approval could not be saved, so nothing ran",
        )
        .await;
        let started = instant_of(engine.started_at_ms);
        end_turn_gated(sess, turn_id, TurnOutcome::Interrupted, started).await;
        return Err(ParkError::NotSaved {
            turn_id: turn_id.to_string(),
            message,
        });
    }
    let active = ActiveTurn {
        id: turn_id.to_string(),
        cancel,
        pending_input: engine.pending_input,
        park_approvals: true,
    };
    install(sess, &parked, &answers, engine.sandboxed_outputs, active);
    Ok(Resumed {
        loop_state: engine.loop_state,
        calls: parked
            .calls
            .into_iter()
            .map(|c| (c.call_id, c.name, c.arguments))
            .collect(),
        started: instant_of(engine.started_at_ms).unwrap_or_else(Instant::now),
    })
}

/// Makes the resumed turn active again: with the settings it parked with, the answers its
/// approvals will find, and the sandboxed runs its re-run questions were about.
fn install(
    sess: &Session,
    parked: &TurnParkedItem,
    answers: &[ParkedAnswer],
    sandboxed_outputs: BTreeMap<String, FunctionCallOutput>,
    active: ActiveTurn,
) {
    let by_id: HashMap<&str, ReviewDecision> = answers
        .iter()
        .map(|a| (a.request_id.as_str(), a.decision))
        .collect();
    let mut st = sess.state();
    if let Some(s) = &parked.settings {
        let cfg = Arc::make_mut(&mut st.config);
        cfg.cwd = s.cwd.clone();
        cfg.approval_policy = s.approval_policy;
        cfg.sandbox_mode = s.sandbox_policy.mode();
        cfg.sandbox_policy = s.sandbox_policy.clone();
        cfg.model = s.model.clone();
        cfg.model_reasoning_effort = s.effort;
    }
    st.preanswers = parked
        .requests
        .iter()
        .filter_map(|r| {
            let decision = *by_id.get(r.id())?;
            let answer = Preanswer {
                request: r.clone(),
                decision,
            };
            Some((r.id().to_string(), answer))
        })
        .collect();
    st.sandboxed_runs = sandboxed_outputs.into_iter().collect();
    st.active_turn = Some(active);
}

/// Ends the thread's parked turn without running what it waits for (a new turn starts, an
/// interrupt, an expired park): records how, gives every waiting call a "not run" output,
/// and ends the turn with `turn_aborted`. The caller holds the turn-end gate. Returns
/// whether a turn was parked.
pub(crate) async fn settle_gated(sess: &Session, how: Unparked) -> bool {
    let Some(parked) = sess.state().parked.take() else {
        return false;
    };
    let turn_id = parked.turn_id.clone();
    let (why, outcome) = match how {
        Unparked::Replaced => (
            "not run: a new turn started before its approval was answered",
            TurnOutcome::Replaced,
        ),
        Unparked::Expired => (
            "not run: nobody answered its approval before the request expired, so it was denied",
            TurnOutcome::Interrupted,
        ),
        Unparked::Interrupted | Unparked::Answered { .. } => (
            "not run: the turn was interrupted while it waited for approval",
            TurnOutcome::Interrupted,
        ),
    };
    sess.record_park(
        &turn_id,
        RolloutItem::TurnUnparked(TurnUnparkedItem {
            turn_id: turn_id.clone(),
            park_id: parked.park_id.clone(),
            outcome: how,
        }),
    );
    close_calls(
        sess,
        &turn_id,
        parked.calls.iter().map(|c| c.call_id.clone()),
        why,
    )
    .await;
    let engine: EngineState = serde_json::from_value(parked.engine).unwrap_or_default();
    end_turn_gated(sess, &turn_id, outcome, instant_of(engine.started_at_ms)).await;
    true
}

/// Gives each of `calls` the output `why` (the history stays valid for the next turn).
async fn close_calls(
    sess: &Session,
    turn_id: &str,
    calls: impl Iterator<Item = String>,
    why: &str,
) {
    let outputs: Vec<ResponseItem> = calls
        .map(|call_id| ResponseItem::FunctionCallOutput {
            call_id,
            output: FunctionCallOutput::text(why, false),
        })
        .collect();
    sess.push_history(turn_id, outputs).await;
}
