//! Following a call's turn: the turn loop is `oi_core::drive`'s; this module only maps
//! each event to the client (`codex/event`, progress, log messages), hands approvals to
//! [`crate::approvals`], asks for an interrupt when the call is cancelled, and turns the
//! turn's end into the call's result.

use super::{CallEnd, CallEnv, Started, TurnEnd, ended_early_text};
use crate::approvals::{self, ApprovalContext, Asker};
use crate::engine::{EngineThread, EngineTurn, SubmitError};
use crate::protocol::codex::tool_result;
use oi_core::{DrivenTurn, PendingRequest, Stop, TurnFrontEnd, drive};
use oi_jsonrpc::RequestContext;
use oi_protocol::ThreadId;
use oi_protocol::protocol::{Event, EventMsg, Op, Submission, TurnAbortReason};
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// After an interrupt, how long to wait for the engine to end the turn.
const INTERRUPT_GRACE: Duration = Duration::from_secs(30);

impl CallEnv {
    /// Relays the turn's events until its end (or its park): interrupts it when the call is
    /// cancelled, routes its approvals, and makes its end the call's result.
    pub(crate) async fn follow(&mut self, started: Started) -> TurnEnd {
        let Started {
            thread,
            approval_timeout,
            events,
            sub_id,
        } = started;
        let thread_id = thread.id();
        let turn_over = CancellationToken::new();
        let _withdraw_prompts = turn_over.clone().drop_guard();
        let watch = TurnWatch {
            sub_id: sub_id.clone(),
            thread_id,
            approvals: ApprovalContext {
                outgoing: self.ctx.outgoing.clone(),
                thread: thread.clone(),
                thread_id,
                tool_call_id: self.ctx.id.clone(),
                asker: self.asker.clone(),
                timeout: approval_timeout,
                turn_over: turn_over.clone(),
            },
            last_error: None,
            last_message: None,
            refused: None,
        };
        let mut turn = CallTurn {
            thread,
            events,
            sub_id,
            interrupt_deadline: None,
            cut_short: None,
        };
        let mut front_end = CallFrontEnd {
            env: self,
            watch,
            stop_asked: false,
            end: None,
        };
        drive(&mut turn, &mut front_end).await;
        // The terminal event is held back until the thread is released (see `finish`).
        if let Some((result, terminal)) = front_end.end {
            return TurnEnd {
                thread: thread_id,
                result,
                terminal: Some(terminal),
            };
        }
        let text = match turn.cut_short {
            Some(CutShort::InterruptFailed(e)) => format!("Could not interrupt the turn: {e}"),
            Some(CutShort::Unresponsive) => format!(
                "The turn did not stop within {} s of being interrupted.",
                INTERRUPT_GRACE.as_secs()
            ),
            None => {
                "The session ended unexpectedly: the thread shut down before the turn finished."
                    .into()
            }
        };
        TurnEnd {
            thread: thread_id,
            result: CallEnd::Result(tool_result(Some(thread_id), text, true)),
            terminal: None,
        }
    }
}

/// Why a call stopped following its turn before the turn's end.
enum CutShort {
    /// The interrupt could not be submitted (the text says why).
    InterruptFailed(String),
    /// The turn did not end within [`INTERRUPT_GRACE`] of the interrupt.
    Unresponsive,
}

/// A call's turn as [`drive`] follows it: the engine seam's events, cut off when the
/// interrupt's grace passes or the interrupt could not be asked.
struct CallTurn {
    thread: Arc<dyn EngineThread>,
    events: Box<dyn EngineTurn>,
    sub_id: String,
    interrupt_deadline: Option<Instant>,
    cut_short: Option<CutShort>,
}

impl DrivenTurn for CallTurn {
    type Error = SubmitError;

    fn turn_id(&self) -> &str {
        &self.sub_id
    }

    async fn next_event(&mut self) -> Option<Event> {
        if self.cut_short.is_some() {
            return None;
        }
        let Some(deadline) = self.interrupt_deadline else {
            return self.events.next_event().await;
        };
        match tokio::time::timeout_at(deadline, self.events.next_event()).await {
            Ok(event) => event,
            Err(_) => {
                self.cut_short = Some(CutShort::Unresponsive);
                None
            }
        }
    }

    async fn interrupt_within(&mut self, grace: Option<Duration>) -> Result<(), SubmitError> {
        if let Some(grace) = grace
            && self.interrupt_deadline.is_none()
        {
            self.interrupt_deadline = Some(Instant::now() + grace);
        }
        let sub = Submission {
            id: self.sub_id.clone(),
            op: Op::Interrupt,
        };
        let asked = self.thread.submit(sub).await;
        if let Err(e) = &asked {
            self.cut_short = Some(CutShort::InterruptFailed(e.to_string()));
        }
        asked
    }
}

/// What a call shows of its turn, and how it answers it.
struct CallFrontEnd<'a> {
    env: &'a mut CallEnv,
    watch: TurnWatch,
    /// The cancel was turned into an interrupt already (it is asked once).
    stop_asked: bool,
    /// The call's result and the terminal event, once the turn reached its end.
    end: Option<(CallEnd, Event)>,
}

impl TurnFrontEnd<CallTurn> for CallFrontEnd<'_> {
    async fn stop_requested(&mut self) -> Stop {
        if self.stop_asked {
            return std::future::pending().await;
        }
        self.env.ctx.cancel.cancelled().await;
        self.stop_asked = true;
        Stop::Interrupt(Some(INTERRUPT_GRACE))
    }

    async fn on_event(&mut self, _turn: &CallTurn, event: &Event) -> Option<Stop> {
        if let Some(result) = self.watch.at_end(event, &self.env.ctx) {
            self.end = Some((result, event.clone()));
            return Some(Stop::Abandon);
        }
        self.env.emit(self.watch.thread_id, event).await;
        self.watch.on_event(event);
        None
    }

    async fn on_request(&mut self, _turn: &CallTurn, _request: PendingRequest, event: &Event) {
        // Each prompt runs on its own: the turn goes on (its other events are relayed)
        // while the client decides.
        let approvals = self.watch.approvals.clone();
        let id = event.id.clone();
        match &event.msg {
            EventMsg::ExecApprovalRequest(req) => {
                tokio::spawn(approvals::handle_exec(approvals, req.clone(), id));
            }
            EventMsg::ApplyPatchApprovalRequest(req) => {
                tokio::spawn(approvals::handle_patch(approvals, req.clone(), id));
            }
            EventMsg::ElicitationRequest(req) => {
                tokio::spawn(approvals::handle_nested(approvals, req.clone(), id));
            }
            _ => {}
        }
    }
}

/// What one turn of a call remembers between events, and how each event moves it on.
struct TurnWatch {
    sub_id: String,
    thread_id: ThreadId,
    approvals: ApprovalContext,
    /// The turn failed: returned as an error result at its end.
    last_error: Option<String>,
    last_message: Option<String>,
    /// What the turn wanted approved when its approval was refused for want of the
    /// elicitation capability ([`Asker::Refuse`]).
    refused: Option<String>,
}

impl TurnWatch {
    /// Remembers the turn's error and last message, and what a refused approval wanted.
    fn on_event(&mut self, event: &Event) {
        let ours = event.id == self.sub_id;
        let thread_id = self.thread_id;
        if self.approvals.asker == Asker::Refuse && self.refused.is_none() {
            self.refused = match &event.msg {
                EventMsg::ExecApprovalRequest(req) => Some(format!(
                    "running `{}`",
                    oi_protocol::parse_command::display_command(&req.command)
                )),
                EventMsg::ApplyPatchApprovalRequest(_) => Some("changing files".to_string()),
                _ => None,
            };
        }
        match &event.msg {
            EventMsg::Error(e) if ours => {
                tracing::warn!("thread {thread_id}: turn failed: {}", e.message);
                self.last_error = Some(e.message.clone());
            }
            EventMsg::AgentMessage(m) if ours => self.last_message = Some(m.message.clone()),
            _ => {}
        }
    }

    /// At the turn's terminal event, the call's result.
    fn at_end(&mut self, event: &Event, call: &RequestContext) -> Option<CallEnd> {
        let ours = event.id == self.sub_id;
        let sub_id = self.sub_id.as_str();
        let thread_id = self.thread_id;
        let result = |text: String, is_error: bool| {
            Some(CallEnd::Result(tool_result(
                Some(thread_id),
                text,
                is_error,
            )))
        };
        let terminal = match &event.msg {
            EventMsg::TaskComplete(done) => ours || done.turn_id == sub_id,
            EventMsg::TurnAborted(aborted) => ours || aborted.turn_id.as_deref() == Some(sub_id),
            _ => false,
        };
        if terminal && let Some(what) = self.refused.take() {
            return Some(CallEnd::NeedsElicitation {
                thread: thread_id,
                what,
            });
        }
        match &event.msg {
            EventMsg::TaskComplete(done) if ours || done.turn_id == sub_id => {
                if let Some(err) = self.last_error.take() {
                    return result(err, true);
                }
                let text = done
                    .last_agent_message
                    .clone()
                    .or(self.last_message.take())
                    .unwrap_or_default();
                // A turn whose end is not in the store is not a success to report: the
                // client would continue a thread that lacks it (here or on another server).
                if let Some(unsaved) = self.approvals.thread.unsaved() {
                    tracing::warn!("thread {thread_id}: turn finished unsaved: {unsaved}");
                    return result(unsaved_text(thread_id, &unsaved, &text), true);
                }
                result(text, false)
            }
            EventMsg::TurnAborted(aborted)
                if ours || aborted.turn_id.as_deref() == Some(sub_id) =>
            {
                let why = if call.cancel.is_cancelled() && !call.cancelled_by_client() {
                    "the server is shutting down".to_string()
                } else {
                    match aborted.reason {
                        TurnAbortReason::Interrupted => "it was interrupted".to_string(),
                        TurnAbortReason::Replaced => "another turn replaced it".to_string(),
                    }
                };
                // For a client-cancelled call this result is never sent (MCP rule).
                result(ended_early_text(&why), true)
            }
            // A turn that parks its approvals stops here; the call ends with the park.
            EventMsg::TurnParked(parked) if parked.turn_id == sub_id => Some(CallEnd::Parked {
                thread: thread_id,
                parked: parked.clone(),
            }),
            EventMsg::ShutdownComplete => result("The session was shut down.".into(), true),
            _ => None,
        }
    }
}

/// The error result of a turn that finished but is not (completely) in the thread store:
/// what is missing, and the answer itself, which the store may not have.
fn unsaved_text(thread_id: ThreadId, unsaved: &str, answer: &str) -> String {
    format!(
        "The turn finished, but thread {thread_id} is not saved completely in its thread \
         store: {unsaved}. Until it is, continuing the thread (here after a restart, or on \
         another server) would not see this turn. The answer was:\n\n{answer}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{StartTurnError, TurnOptions};
    use oi_jsonrpc::BoxFuture;
    use std::sync::Mutex;

    /// A thread that records what is submitted, or refuses it once it has closed.
    struct Recorder {
        submitted: Mutex<Vec<Submission>>,
        closed: bool,
    }

    impl EngineThread for Recorder {
        fn id(&self) -> ThreadId {
            ThreadId::new()
        }
        fn start_turn(
            &self,
            _id: String,
            _prompt: String,
            _options: TurnOptions,
        ) -> BoxFuture<'_, Result<Box<dyn EngineTurn>, StartTurnError>> {
            Box::pin(async { Err(StartTurnError::Closed("not in this test".into())) })
        }
        fn submit(&self, sub: Submission) -> BoxFuture<'_, Result<(), SubmitError>> {
            Box::pin(async move {
                if self.closed {
                    return Err(SubmitError("the thread has shut down".into()));
                }
                self.submitted.lock().unwrap().push(sub);
                Ok(())
            })
        }
        fn is_busy(&self) -> bool {
            true
        }
    }

    /// A turn that never ends (a tool ignoring cancellation).
    struct Stuck;

    impl EngineTurn for Stuck {
        fn next_event(&mut self) -> BoxFuture<'_, Option<Event>> {
            Box::pin(std::future::pending())
        }
    }

    fn turn(closed: bool) -> (CallTurn, Arc<Recorder>) {
        let thread = Arc::new(Recorder {
            submitted: Mutex::new(Vec::new()),
            closed,
        });
        let turn = CallTurn {
            thread: thread.clone(),
            events: Box::new(Stuck),
            sub_id: "turn-1".into(),
            interrupt_deadline: None,
            cut_short: None,
        };
        (turn, thread)
    }

    #[tokio::test]
    async fn a_turn_that_ignores_its_interrupt_is_cut_off_after_the_grace() {
        let (mut turn, thread) = turn(false);
        turn.interrupt_within(Some(Duration::from_millis(20)))
            .await
            .unwrap();
        let submitted = thread.submitted.lock().unwrap().clone();
        assert!(
            matches!(submitted.as_slice(), [Submission { id, op: Op::Interrupt }] if id == "turn-1"),
            "the interrupt carries the call's turn id: {submitted:?}"
        );
        assert!(turn.next_event().await.is_none());
        assert!(matches!(turn.cut_short, Some(CutShort::Unresponsive)));
    }

    #[tokio::test]
    async fn an_interrupt_the_thread_refuses_ends_the_call() {
        let (mut turn, _) = turn(true);
        assert!(turn.interrupt_within(Some(INTERRUPT_GRACE)).await.is_err());
        assert!(turn.next_event().await.is_none());
        match &turn.cut_short {
            Some(CutShort::InterruptFailed(why)) => assert!(why.contains("shut down"), "{why}"),
            _ => panic!("expected the failed interrupt to end the call"),
        }
    }
}
