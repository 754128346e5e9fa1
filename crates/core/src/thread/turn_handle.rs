//! What a front end holds while a turn it started runs: the turn's events up to its own
//! terminal event, the answers to what the turn asks, and an interrupt with a grace.
//!
//! Every front end used to re-implement "read until this turn's `task_complete` or
//! `turn_aborted`, answer approvals with the right id and op, interrupt and wait a while";
//! [`TurnHandle`] and [`PendingRequest`] are that code, once, and [`drive`] is the loop
//! over them: a front end implements [`TurnFrontEnd`] (map an event, answer a request, say
//! when to stop) and nothing else. [`drive`] follows any [`DrivenTurn`], so a front end that
//! reaches the engine through a seam of its own (the MCP server) runs the same loop.

use super::Thread;
use crate::error::CoreError;
use crate::events::EventStream;
use oi_protocol::protocol::{
    ApplyPatchApprovalRequestEvent, ElicitationAction, ElicitationRequestEvent,
    ElicitationResponse, Event, EventMsg, ExecApprovalRequestEvent, Op, ReviewDecision,
    TurnAbortReason, TurnParkedEvent,
};
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;

/// How a turn ended, as its handle saw it.
#[derive(Clone, Debug, PartialEq)]
pub enum TurnEnd {
    /// `task_complete`. `failed` when the turn reported an `error` first.
    Completed {
        /// The model's last message, if it wrote one.
        last_agent_message: Option<String>,
        /// The turn failed (an `error` event with this turn's id came before the end).
        failed: bool,
    },
    /// `turn_aborted` (interrupted, or replaced).
    Aborted(TurnAbortReason),
    /// `turn_parked`: the turn stopped at approvals (it was started with
    /// [`crate::TurnOptions::park_approvals`]). It has not ended: resume it with
    /// [`Thread::resume_parked`] (here or on another process), which returns a new handle.
    Parked(TurnParkedEvent),
    /// The thread shut down before the turn ended.
    ThreadClosed,
    /// [`TurnHandle::interrupt`] was asked and the engine did not end the turn within the
    /// grace (a tool ignoring cancellation). The turn may still end later.
    Unresponsive,
}

/// A turn started by [`Thread::start_turn`]. Dropping it stops following the turn; it
/// does not stop the turn (use [`TurnHandle::interrupt`]).
pub struct TurnHandle {
    thread: Arc<Thread>,
    id: String,
    events: EventStream,
    failed: bool,
    end: Option<TurnEnd>,
    interrupt_deadline: Option<Instant>,
}

impl TurnHandle {
    pub(crate) fn new(thread: Arc<Thread>, id: String, events: EventStream) -> Self {
        Self {
            thread,
            id,
            events,
            failed: false,
            end: None,
            interrupt_deadline: None,
        }
    }

    /// The turn's id (its submission id; every event it causes carries it).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The thread the turn runs on.
    pub fn thread(&self) -> &Arc<Thread> {
        &self.thread
    }

    /// The next event the thread published while this turn runs: the turn's own, and any
    /// other the thread publishes meanwhile (warnings, MCP startup progress). The turn's
    /// terminal event (or its `turn_parked`) is returned, then `None`; [`TurnHandle::end`]
    /// says how it ended.
    /// Cancel-safe: a `next` dropped in a `select!` loses no event.
    pub async fn next(&mut self) -> Option<Event> {
        if self.end.is_some() {
            return None;
        }
        let event = match self.interrupt_deadline {
            None => self.events.next().await,
            Some(deadline) => match tokio::time::timeout_at(deadline, self.events.next()).await {
                Ok(ev) => ev,
                Err(_) => {
                    self.end = Some(TurnEnd::Unresponsive);
                    return None;
                }
            },
        };
        let Some(event) = event else {
            self.end = Some(TurnEnd::ThreadClosed);
            return None;
        };
        if event.id == self.id {
            match &event.msg {
                EventMsg::Error(_) => self.failed = true,
                EventMsg::TaskComplete(done) => {
                    self.end = Some(TurnEnd::Completed {
                        last_agent_message: done.last_agent_message.clone(),
                        failed: self.failed,
                    });
                }
                EventMsg::TurnAborted(aborted) => {
                    self.end = Some(TurnEnd::Aborted(aborted.reason));
                }
                EventMsg::TurnParked(parked) => {
                    self.end = Some(TurnEnd::Parked(parked.clone()));
                }
                _ => {}
            }
        }
        Some(event)
    }

    /// The stream the handle read, to follow the thread after the turn (or to start the
    /// next turn on with [`Thread::start_turn_on`]) without missing what comes between.
    pub fn into_events(self) -> EventStream {
        self.events
    }

    /// How the turn ended; `None` while it runs.
    pub fn end(&self) -> Option<&TurnEnd> {
        self.end.as_ref()
    }

    /// Asks the engine to stop the turn. [`TurnHandle::next`] keeps returning the turn's
    /// last events (its `turn_aborted`); if none arrives within `grace`, it returns `None`
    /// with [`TurnEnd::Unresponsive`]. Asking again does not extend the grace.
    pub async fn interrupt(&mut self, grace: Duration) -> Result<(), CoreError> {
        if self.interrupt_deadline.is_none() {
            self.interrupt_deadline = Some(Instant::now() + grace);
        }
        self.thread.submit(Op::Interrupt).await.map(drop)
    }

    /// Answers something the turn asked (see [`PendingRequest`]).
    pub async fn answer(
        &self,
        request: &PendingRequest,
        decision: ReviewDecision,
    ) -> Result<(), CoreError> {
        self.thread.answer(request, decision).await
    }
}

/// What a front end asks of the turn it drives (see [`TurnFrontEnd`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stop {
    /// Interrupt the turn and keep following it to its end: at most `grace` after the
    /// interrupt (then it ends [`TurnEnd::Unresponsive`]), or as long as it takes (`None`).
    Interrupt(Option<Duration>),
    /// Stop following the turn now: the front end has seen the end it waits for, or (asked
    /// twice to stop) the caller shuts the thread down, which ends the turn.
    Abandon,
}

/// A turn [`drive`] can follow: a [`TurnHandle`], or a front end's own view of a turn
/// behind a seam of its own (the MCP server reaches the engine through one, so its tests
/// can script the engine).
pub trait DrivenTurn: Send + Sync {
    /// Why an interrupt could not be asked.
    type Error: std::fmt::Display;

    /// The turn's id (its submission id).
    fn turn_id(&self) -> &str;

    /// The next event; the turn's terminal event (or its park) is the last, then `None`
    /// (also when the thread ended first, or an interrupt's grace ran out). Cancel-safe.
    fn next_event(&mut self) -> impl Future<Output = Option<Event>> + Send;

    /// Asks the engine to stop the turn. With a `grace`, [`DrivenTurn::next_event`]
    /// returns `None` once it passes without the turn's end; asking again does not extend
    /// it.
    fn interrupt_within(
        &mut self,
        grace: Option<Duration>,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send;
}

impl DrivenTurn for TurnHandle {
    type Error = CoreError;

    fn turn_id(&self) -> &str {
        &self.id
    }

    fn next_event(&mut self) -> impl Future<Output = Option<Event>> + Send {
        self.next()
    }

    async fn interrupt_within(&mut self, grace: Option<Duration>) -> Result<(), CoreError> {
        match grace {
            Some(grace) => self.interrupt(grace).await,
            None => self.thread.interrupt().await,
        }
    }
}

/// A front end driving one turn with [`drive`] (or [`TurnHandle::drive`]): what it shows
/// of each event, how it answers what the turn asks, and when it wants the turn stopped.
/// The loop itself (reading to the terminal event, the interrupt and its grace) is
/// [`drive`]'s.
pub trait TurnFrontEnd<T: DrivenTurn = TurnHandle>: Send {
    /// Resolves when the front end wants the turn stopped (a signal, a cancel, the client
    /// gone). Must be cancel-safe: it is dropped whenever an event arrives first, and
    /// asked again after it. A front end that asks only once stays pending afterwards.
    fn stop_requested(&mut self) -> impl Future<Output = Stop> + Send;

    /// One event the thread published while the turn runs (the turn's own, its terminal
    /// event included, and any other the thread publishes meanwhile). `Some` stops the
    /// turn as [`TurnFrontEnd::stop_requested`] would (the client can no longer be told).
    fn on_event(&mut self, turn: &T, event: &Event) -> impl Future<Output = Option<Stop>> + Send;

    /// `event`, already given to [`TurnFrontEnd::on_event`], asks `request` of the user:
    /// answer it (through `turn`), or refuse it ([`PendingRequest::refusal`]); approvals
    /// fail closed.
    fn on_request(
        &mut self,
        turn: &T,
        request: PendingRequest,
        event: &Event,
    ) -> impl Future<Output = ()> + Send;
}

impl TurnHandle {
    /// Follows the turn to its end for `front_end` (see [`drive`]). Returns how the turn
    /// ended ([`TurnHandle::end`]), or `None` when the front end abandoned it.
    pub async fn drive<F: TurnFrontEnd>(&mut self, front_end: &mut F) -> Option<TurnEnd> {
        match drive(self, front_end).await {
            Driven::Ended => self.end.clone(),
            Driven::Abandoned => None,
        }
    }
}

/// How [`drive`] stopped following a turn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Driven {
    /// The turn's events ran out: its terminal event (or park) was the last, the thread
    /// ended, or an interrupt's grace passed; the turn says which.
    Ended,
    /// The front end stopped following it ([`Stop::Abandon`]).
    Abandoned,
}

/// Follows `turn` to its end for `front_end`: each event to [`TurnFrontEnd::on_event`],
/// each request to [`TurnFrontEnd::on_request`], the front end's stop as an interrupt
/// (with its grace) or as abandoning the turn. The one turn loop every front end uses.
pub async fn drive<T: DrivenTurn, F: TurnFrontEnd<T>>(turn: &mut T, front_end: &mut F) -> Driven {
    loop {
        let event = tokio::select! {
            event = turn.next_event() => event,
            stop = front_end.stop_requested() => {
                if !act_on(turn, stop).await {
                    return Driven::Abandoned;
                }
                continue;
            }
        };
        let Some(event) = event else {
            return Driven::Ended;
        };
        if let Some(stop) = front_end.on_event(turn, &event).await
            && !act_on(turn, stop).await
        {
            return Driven::Abandoned;
        }
        if let Some(request) = PendingRequest::of(&event.msg) {
            front_end.on_request(turn, request, &event).await;
        }
    }
}

/// Acts on a front end's stop; `false` when it abandons the turn.
async fn act_on<T: DrivenTurn>(turn: &mut T, stop: Stop) -> bool {
    let grace = match stop {
        Stop::Abandon => return false,
        Stop::Interrupt(grace) => grace,
    };
    if let Err(e) = turn.interrupt_within(grace).await {
        tracing::warn!("could not interrupt turn {}: {e}", turn.turn_id());
    }
    true
}

/// Something a running turn waits for from the user: a command or a patch to approve, or
/// an MCP server's question (elicitation). Built from the event that asks, it knows which
/// op answers it and with which id.
#[derive(Clone, Debug, PartialEq)]
pub enum PendingRequest {
    /// `exec_approval_request`.
    Exec {
        /// The id the answer carries (the approval id, else the call id).
        approval_id: String,
    },
    /// `apply_patch_approval_request`.
    Patch {
        /// The patch call's id.
        call_id: String,
    },
    /// `elicitation_request`.
    Elicitation {
        /// The MCP server that asked.
        server_name: String,
        /// The server's request id.
        request_id: serde_json::Value,
    },
}

impl PendingRequest {
    /// The request `msg` makes, if it asks anything.
    pub fn of(msg: &EventMsg) -> Option<Self> {
        match msg {
            EventMsg::ExecApprovalRequest(r) => Some(Self::exec(r)),
            EventMsg::ApplyPatchApprovalRequest(r) => Some(Self::patch(r)),
            EventMsg::ElicitationRequest(r) => Some(Self::elicitation(r)),
            _ => None,
        }
    }

    /// A command waiting for approval.
    pub fn exec(r: &ExecApprovalRequestEvent) -> Self {
        Self::Exec {
            approval_id: r.effective_approval_id().to_string(),
        }
    }

    /// A patch waiting for approval.
    pub fn patch(r: &ApplyPatchApprovalRequestEvent) -> Self {
        Self::Patch {
            call_id: r.call_id.clone(),
        }
    }

    /// An MCP server's question.
    pub fn elicitation(r: &ElicitationRequestEvent) -> Self {
        Self::Elicitation {
            server_name: r.server_name.clone(),
            request_id: r.id.clone(),
        }
    }

    /// The op that answers an approval with `decision`. For an elicitation, an approving
    /// decision accepts without content and any other declines; answer with
    /// [`PendingRequest::elicitation_answer`] to send content.
    pub fn answer(&self, decision: ReviewDecision) -> Op {
        match self {
            Self::Exec { approval_id } => Op::ExecApproval {
                id: approval_id.clone(),
                decision,
            },
            Self::Patch { call_id } => Op::PatchApproval {
                id: call_id.clone(),
                decision,
            },
            Self::Elicitation { .. } => {
                let action = if is_approval(decision) {
                    ElicitationAction::Accept
                } else {
                    ElicitationAction::Decline
                };
                self.elicitation_answer(ElicitationResponse {
                    action,
                    content: None,
                })
            }
        }
    }

    /// The op that answers an elicitation with `response`; for an approval, `response`'s
    /// action decides (accept approves once, anything else denies).
    pub fn elicitation_answer(&self, response: ElicitationResponse) -> Op {
        match self {
            Self::Elicitation {
                server_name,
                request_id,
            } => Op::ResolveElicitation {
                server_name: server_name.clone(),
                request_id: request_id.clone(),
                response,
            },
            _ => self.answer(match response.action {
                ElicitationAction::Accept => ReviewDecision::Approved,
                _ => ReviewDecision::Denied,
            }),
        }
    }

    /// The answer when nobody can answer (headless runs, a prompt that timed out): deny,
    /// or decline the question. Approvals fail closed.
    pub fn refusal(&self) -> Op {
        self.answer(ReviewDecision::Denied)
    }
}

fn is_approval(decision: ReviewDecision) -> bool {
    matches!(
        decision,
        ReviewDecision::Approved | ReviewDecision::ApprovedForSession
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exec_answers_carry_the_approval_id_when_there_is_one() {
        let mut req = ExecApprovalRequestEvent {
            call_id: "call".into(),
            approval_id: Some("appr".into()),
            turn_id: "t".into(),
            command: vec!["ls".into()],
            cwd: "/".into(),
            reason: None,
            parsed_cmd: Vec::new(),
        };
        let p = PendingRequest::of(&EventMsg::ExecApprovalRequest(req.clone()));
        let op = p.map(|p| p.answer(ReviewDecision::Approved));
        assert!(matches!(op, Some(Op::ExecApproval { id, .. }) if id == "appr"));
        req.approval_id = None;
        let p = PendingRequest::of(&EventMsg::ExecApprovalRequest(req));
        assert!(matches!(p.map(|p| p.refusal()),
            Some(Op::ExecApproval { id, decision: ReviewDecision::Denied }) if id == "call"));
    }

    #[test]
    fn a_refused_elicitation_is_declined_not_accepted() {
        let p = PendingRequest::of(&EventMsg::ElicitationRequest(ElicitationRequestEvent {
            turn_id: None,
            server_name: "srv".into(),
            id: serde_json::json!(7),
            request: serde_json::json!({}),
        }));
        match p.map(|p| p.refusal()) {
            Some(Op::ResolveElicitation {
                server_name,
                request_id,
                response,
            }) => {
                assert_eq!(server_name, "srv");
                assert_eq!(request_id, serde_json::json!(7));
                assert_eq!(response.action, ElicitationAction::Decline);
            }
            other => panic!("expected a declined elicitation, got {other:?}"),
        }
    }

    #[test]
    fn events_that_ask_nothing_make_no_request() {
        assert!(PendingRequest::of(&EventMsg::ShutdownComplete).is_none());
    }
}
