//! One `tools/call` of `codex` / `codex-reply`: open the thread, submit the prompt, relay
//! every event as `codex/event` (and `notifications/progress`, and the log messages a
//! 2026-07-28 request asked for), route approvals to the client (or deny them when it
//! cannot be asked), and turn the end of the turn into the call's result. In both eras the
//! notifications go with the request: on its own stream over HTTP.
//!
//! The loop ends on the turn's own terminal event (`task_complete` / `turn_aborted`
//! carrying our submission id), so the next call on the thread starts with a clean
//! queue. A failed turn reports `error` then `task_complete`; the error is remembered
//! and returned as an `isError` result at the terminal event.

use crate::approvals::{self, ApprovalContext, Asker};
use crate::engine::{Engine, EngineError, EngineThread, StartTurnError, ThreadHandle};
use crate::progress::{PROGRESS, Progress};
use crate::protocol::codex::{CODEX_EVENT, CodexEventMeta, CodexEventParams, tool_result};
use crate::protocol::log::{LOG_MESSAGE, LogLevel, LogMessage};
use crate::tools::{CodexArgs, ReplyArgs};
use oi_jsonrpc::RequestContext;
use oi_protocol::ThreadId;
use oi_protocol::protocol::{Event, EventMsg, Op, Submission, TurnAbortReason, WarningEvent};
use rmcp::model::CallToolResult;
use serde::Serialize;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

/// After an interrupt, how long to wait for the engine to end the turn.
const INTERRUPT_GRACE: Duration = Duration::from_secs(30);

/// Everything one call needs.
pub struct CallEnv {
    pub engine: Arc<dyn Engine>,
    pub ctx: RequestContext,
    pub progress: Option<Progress>,
    /// How the turn's approvals are asked.
    pub asker: Asker,
    /// Log messages at or above this level go to the client (a 2026-07-28 request that
    /// asked for them).
    pub log_level: Option<LogLevel>,
    /// A 2026-07-28 request: once the client cancels it, nothing more is sent for it (the
    /// `initialize` era still gets the turn's last events, as Codex sent them).
    pub silent_after_cancel: bool,
}

fn busy_result(thread_id: ThreadId, why: &str) -> CallToolResult {
    tracing::debug!("thread {thread_id}: {why}");
    tool_result(
        Some(thread_id),
        format!(
            "thread {thread_id} is busy with another turn; wait for it to finish or cancel it, then call codex-reply again"
        ),
        true,
    )
}

/// The level an event is logged at, if it is logged: failures as errors, trouble as
/// warnings, the turn's milestones as info, its steps as debug.
fn log_level_of(msg: &EventMsg) -> Option<LogLevel> {
    Some(match msg {
        EventMsg::Error(_) => LogLevel::Error,
        EventMsg::Warning(_) | EventMsg::StreamError(_) => LogLevel::Warning,
        EventMsg::TurnAborted(_) => LogLevel::Notice,
        EventMsg::SessionConfigured(_) | EventMsg::TaskStarted(_) | EventMsg::TaskComplete(_) => {
            LogLevel::Info
        }
        EventMsg::AgentMessageDelta(_) | EventMsg::AgentReasoningDelta(_) => return None,
        _ => LogLevel::Debug,
    })
}

impl CallEnv {
    pub async fn codex(mut self, args: CodexArgs) -> CallToolResult {
        let started = tokio::select! {
            r = self.engine.start_thread(args.session) => r,
            _ = self.ctx.cancel.cancelled() => return cancelled_before_start(),
        };
        let handle = match started {
            Ok(h) => h,
            Err(e) => return tool_result(None, engine_error_text(&e), true),
        };
        let thread_id = handle.thread.id();
        // The reference uses the MCP request id as the first turn's id, so clients can
        // correlate events with their call without looking at _meta.
        let sub_id = self.ctx.id.to_string();
        let end = self.run_turn(handle, args.prompt, sub_id).await;
        self.finish(thread_id, end).await
    }

    pub async fn reply(mut self, args: ReplyArgs) -> CallToolResult {
        let thread_id = args.thread_id;
        let opened = tokio::select! {
            r = self.engine.open_thread(thread_id) => r,
            _ = self.ctx.cancel.cancelled() => return cancelled_before_start(),
        };
        let handle = match opened {
            Ok(h) => h,
            Err(EngineError::NotFound(id)) => {
                return tool_result(
                    Some(id),
                    format!(
                        "Session not found for thread_id: {id}. It is neither running in this server nor stored on disk; start a new session with the `codex` tool."
                    ),
                    true,
                );
            }
            Err(e) => return tool_result(Some(thread_id), engine_error_text(&e), true),
        };
        let end = self
            .run_turn(handle, args.prompt, oi_protocol::ids::new_id())
            .await;
        self.finish(thread_id, end).await
    }

    /// Lets the thread go (for a store shared with other servers), then tells the client
    /// the turn is over: the terminal event waits for the release because a client that
    /// sends `codex-reply` as soon as it sees `task_complete` / `turn_aborted` — here or on
    /// another server — must find the thread in the store, not still held by this call.
    async fn finish(&mut self, thread_id: ThreadId, end: TurnEnd) -> CallToolResult {
        self.engine.release_thread(thread_id).await;
        if let Some(event) = end.terminal {
            self.emit(thread_id, &event).await;
        }
        end.result
    }

    async fn emit(&mut self, thread_id: ThreadId, event: &Event) {
        if self.silent_after_cancel && self.ctx.cancelled_by_client() {
            return;
        }
        let params = CodexEventParams {
            meta: CodexEventMeta {
                request_id: &self.ctx.id,
                thread_id,
            },
            id: &event.id,
            msg: &event.msg,
        };
        self.notify(CODEX_EVENT, &params).await;
        if let Some(p) = self.progress.as_mut().and_then(|p| p.on_event(&event.msg)) {
            self.notify(PROGRESS, &p).await;
        }
        if let Some(min) = self.log_level
            && let Some(level) = log_level_of(&event.msg).filter(|l| *l >= min)
            && let Some(data) = crate::progress::summarize(&event.msg)
        {
            let message = LogMessage {
                level,
                logger: "openinterpreter",
                data: format!("thread {thread_id}: {data}"),
            };
            self.notify(LOG_MESSAGE, &message).await;
        }
    }

    async fn notify(&self, method: &str, params: &impl Serialize) {
        match serde_json::to_value(params) {
            Ok(params) => {
                self.ctx.outgoing.notify(method, params).await;
            }
            Err(e) => tracing::warn!("could not encode a {method} notification: {e}"),
        }
    }

    async fn run_turn(&mut self, handle: ThreadHandle, prompt: String, sub_id: String) -> TurnEnd {
        let thread: Arc<dyn EngineThread> = handle.thread.clone();
        let thread_id = thread.id();
        let mut events = match thread.start_turn(sub_id.clone(), prompt).await {
            Ok(turn) => turn,
            Err(StartTurnError::Busy(why)) => return TurnEnd::early(busy_result(thread_id, &why)),
            Err(StartTurnError::Closed(e)) => {
                return TurnEnd::early(tool_result(
                    Some(thread_id),
                    format!("Could not start the turn: {e}"),
                    true,
                ));
            }
        };
        if let Some(sc) = handle.session_configured {
            let ev = Event {
                id: String::new(),
                msg: EventMsg::SessionConfigured(sc),
            };
            self.emit(thread_id, &ev).await;
        }
        for message in handle.warnings {
            let ev = Event {
                id: String::new(),
                msg: EventMsg::Warning(WarningEvent { message }),
            };
            self.emit(thread_id, &ev).await;
        }
        let turn_over = CancellationToken::new();
        let _withdraw_prompts = turn_over.clone().drop_guard();
        let mut turn = TurnState {
            sub_id: sub_id.clone(),
            thread_id,
            approvals: ApprovalContext {
                outgoing: self.ctx.outgoing.clone(),
                thread: thread.clone(),
                thread_id,
                tool_call_id: self.ctx.id.clone(),
                asker: self.asker.clone(),
                timeout: handle.approval_timeout,
                turn_over: turn_over.clone(),
            },
            last_error: None,
            last_message: None,
        };
        let mut interrupt_deadline: Option<Instant> = None;
        loop {
            let cancel = self.ctx.cancel.clone();
            let event = tokio::select! {
                biased;
                _ = cancel.cancelled(), if interrupt_deadline.is_none() => {
                    interrupt_deadline = Some(Instant::now() + INTERRUPT_GRACE);
                    let sub = Submission { id: sub_id.clone(), op: Op::Interrupt };
                    if let Err(e) = thread.submit(sub).await {
                        return TurnEnd::early(tool_result(Some(thread_id), format!("Could not interrupt the turn: {e}"), true));
                    }
                    continue;
                }
                _ = sleep_until_opt(interrupt_deadline) => {
                    return TurnEnd::early(tool_result(
                        Some(thread_id),
                        format!("The turn did not stop within {} s of being interrupted.", INTERRUPT_GRACE.as_secs()),
                        true,
                    ));
                }
                ev = events.next_event() => ev,
            };
            let Some(event) = event else {
                return TurnEnd::early(tool_result(
                    Some(thread_id),
                    "The session ended unexpectedly: the thread shut down before the turn finished.".into(),
                    true,
                ));
            };
            // The terminal event is held back until the thread is released (see `finish`).
            if let Some(result) = turn.at_end(&event, &self.ctx) {
                return TurnEnd {
                    result,
                    terminal: Some(event),
                };
            }
            self.emit(thread_id, &event).await;
            turn.on_event(&event);
        }
    }
}

/// How a call's turn ended: its result and, for a turn that reached its end, the terminal
/// event still to be sent to the client.
struct TurnEnd {
    result: CallToolResult,
    terminal: Option<Event>,
}

impl TurnEnd {
    fn early(result: CallToolResult) -> Self {
        Self {
            result,
            terminal: None,
        }
    }
}

/// What one turn of a call remembers between events, and how each event moves it on.
struct TurnState {
    sub_id: String,
    thread_id: ThreadId,
    approvals: ApprovalContext,
    /// The turn failed: returned as an error result at its end.
    last_error: Option<String>,
    last_message: Option<String>,
}

impl TurnState {
    /// Starts approval tasks for approval requests; remembers the turn's error and last
    /// message.
    fn on_event(&mut self, event: &Event) {
        let ours = event.id == self.sub_id;
        let thread_id = self.thread_id;
        match &event.msg {
            EventMsg::ExecApprovalRequest(req) => {
                tokio::spawn(approvals::handle_exec(
                    self.approvals.clone(),
                    req.clone(),
                    event.id.clone(),
                ));
            }
            EventMsg::ApplyPatchApprovalRequest(req) => {
                tokio::spawn(approvals::handle_patch(
                    self.approvals.clone(),
                    req.clone(),
                    event.id.clone(),
                ));
            }
            EventMsg::ElicitationRequest(req) => {
                tokio::spawn(approvals::handle_nested(
                    self.approvals.clone(),
                    req.clone(),
                    event.id.clone(),
                ));
            }
            EventMsg::Error(e) if ours => {
                tracing::warn!("thread {thread_id}: turn failed: {}", e.message);
                self.last_error = Some(e.message.clone());
            }
            EventMsg::AgentMessage(m) if ours => self.last_message = Some(m.message.clone()),
            _ => {}
        }
    }

    /// At the turn's terminal event, the call's result.
    fn at_end(&mut self, event: &Event, call: &RequestContext) -> Option<CallToolResult> {
        let ours = event.id == self.sub_id;
        let sub_id = self.sub_id.as_str();
        let thread_id = self.thread_id;
        match &event.msg {
            EventMsg::TaskComplete(done) if ours || done.turn_id == sub_id => {
                if let Some(err) = self.last_error.take() {
                    return Some(tool_result(Some(thread_id), err, true));
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
                    return Some(tool_result(
                        Some(thread_id),
                        unsaved_text(thread_id, &unsaved, &text),
                        true,
                    ));
                }
                return Some(tool_result(Some(thread_id), text, false));
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
                return Some(tool_result(
                    Some(thread_id),
                    format!(
                        "The turn ended before finishing because {why}. The thread is kept: continue it with codex-reply."
                    ),
                    true,
                ));
            }
            EventMsg::ShutdownComplete => {
                return Some(tool_result(
                    Some(thread_id),
                    "The session was shut down.".into(),
                    true,
                ));
            }
            _ => {}
        }
        None
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

async fn sleep_until_opt(deadline: Option<Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}

fn cancelled_before_start() -> CallToolResult {
    tool_result(
        None,
        "The call was cancelled before the session started.".into(),
        true,
    )
}

/// The tool result text for an engine error; also logged, since a client may show tool
/// results to nobody.
fn engine_error_text(e: &EngineError) -> String {
    tracing::warn!("tool call failed: {e:?}");
    match e {
        EngineError::Config(msg) => format!("Failed to load configuration: {msg}"),
        EngineError::Start(msg) => format!("Failed to start the session: {msg}"),
        EngineError::NotFound(id) => format!("Session not found for thread_id: {id}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_have_the_output_schema_shape() {
        use serde_json::json;
        let id = ThreadId::new();
        assert_eq!(
            serde_json::to_value(tool_result(Some(id), "done".into(), false)).unwrap(),
            json!({"resultType":"complete","content":[{"type":"text","text":"done"}],"structuredContent":{"threadId":id.to_string(),"content":"done"}})
        );
        assert_eq!(
            serde_json::to_value(tool_result(None, "bad".into(), true)).unwrap(),
            json!({"resultType":"complete","content":[{"type":"text","text":"bad"}],"isError":true})
        );
    }

    #[test]
    fn log_levels_by_event() {
        use oi_protocol::protocol::{ErrorEvent, WarningEvent};
        let warning = EventMsg::Warning(WarningEvent {
            message: "w".into(),
        });
        assert_eq!(log_level_of(&warning), Some(LogLevel::Warning));
        let error = EventMsg::Error(ErrorEvent {
            message: "e".into(),
            codex_error_info: None,
        });
        assert_eq!(log_level_of(&error), Some(LogLevel::Error));
        assert!(LogLevel::Error > LogLevel::Warning && LogLevel::Debug < LogLevel::Info);
    }
}
