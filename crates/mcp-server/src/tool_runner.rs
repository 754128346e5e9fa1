//! One `tools/call` of `codex` / `codex-reply`: open the thread, submit the prompt, relay
//! every event as `codex/event` (and `notifications/progress`, and the log messages a
//! 2026-07-28 request asked for), route approvals to the client (or deny them when it
//! cannot be asked), and turn the end of the turn into the call's result. In both eras the
//! notifications go with the request: on its own stream over HTTP.
//!
//! The turn loop is `oi_core::drive`'s ([`follow`] maps its events). It ends on the
//! turn's own terminal event (`task_complete` / `turn_aborted`
//! carrying our submission id), so the next call on the thread starts with a clean
//! queue. A failed turn reports `error` then `task_complete`; the error is remembered
//! and returned as an `isError` result at the terminal event. A turn whose approvals park
//! (a 2026-07-28 request that can be asked) ends the call at its `turn_parked`
//! ([`CallEnd::Parked`]); [`CallEnv::resume`] follows it again from its answers, on any
//! server sharing the store.

mod follow;

use crate::approvals::Asker;
use crate::engine::{
    Engine, EngineError, EngineThread, EngineTurn, ParkedAnswer, ResumeError, StartTurnError,
    ThreadHandle, TurnOptions, TurnParkedEvent, TurnState,
};
use crate::progress::{PROGRESS, Progress};
use crate::protocol::codex::{CODEX_EVENT, CodexEventMeta, CodexEventParams, tool_result};
use crate::protocol::log::{LOG_MESSAGE, LogLevel, LogMessage};
use crate::tools::{CodexArgs, ReplyArgs};
use oi_jsonrpc::{BoxFuture, RequestContext};
use oi_protocol::ThreadId;
use oi_protocol::protocol::{Event, EventMsg, TurnAbortReason, WarningEvent};
use rmcp::model::CallToolResult;
use serde::Serialize;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// How often a call waiting on a turn another server runs reads the turn's state again
/// (as often as subscriptions poll the store).
const SETTLE_POLL: Duration = Duration::from_secs(1);

/// One of a service's slots for a running call (or subscription): counted while it lives.
pub(crate) struct CallSlot {
    counter: Arc<AtomicUsize>,
    /// How many were taken before this one.
    pub before: usize,
}

impl CallSlot {
    pub(crate) fn take(counter: &Arc<AtomicUsize>) -> Self {
        let before = counter.fetch_add(1, Ordering::SeqCst);
        Self {
            counter: counter.clone(),
            before,
        }
    }
}

impl Drop for CallSlot {
    fn drop(&mut self) {
        self.counter.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Everything one call needs.
pub(crate) struct CallEnv {
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
    /// Nothing is sent at all (a task's turn, followed after its request was answered).
    pub quiet: bool,
    /// How the call's turns run: whether their approvals park them.
    pub options: TurnOptions,
    /// The call's slot among the service's running calls, held until its turn ends (a
    /// task's, after the request that started it).
    #[allow(dead_code)] // held, not read: dropping it frees the slot
    pub slot: Option<CallSlot>,
}

/// Sends `message` on the request of `ctx` when the request asked for log messages at its
/// level or below (`wanted`, from its `_meta` log level); nothing otherwise. The one way the
/// server logs to a client.
pub(crate) async fn send_log(ctx: &RequestContext, wanted: Option<LogLevel>, message: &LogMessage) {
    if wanted.is_none_or(|min| message.level < min) {
        return;
    }
    match serde_json::to_value(message) {
        Ok(params) => {
            ctx.outgoing.notify(LOG_MESSAGE, params).await;
        }
        Err(e) => tracing::warn!("could not encode a log message: {e}"),
    }
}

fn not_found_result(id: ThreadId) -> CallToolResult {
    tool_result(
        Some(id),
        format!(
            "Session not found for thread_id: {id}. It is neither running in this server nor stored on disk; start a new session with the `codex` tool."
        ),
        true,
    )
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
    /// Runs a `codex` call: a new thread, its first turn, followed to its end (or park).
    pub(crate) async fn codex(mut self, args: CodexArgs) -> CallEnd {
        let started = match self.start_codex(args).await {
            Ok(s) => s,
            Err(result) => return CallEnd::Result(result),
        };
        let end = self.follow(started).await;
        self.finish(end).await
    }

    /// Runs a `codex-reply` call: the thread's next turn, followed to its end (or park).
    pub(crate) async fn reply(mut self, args: ReplyArgs) -> CallEnd {
        let started = match self.start_reply(args).await {
            Ok(s) => s,
            Err(result) => return CallEnd::Result(result),
        };
        let end = self.follow(started).await;
        self.finish(end).await
    }

    /// Resumes turn `turn_id` of `thread`, parked at `park_id`, with `answers`, and follows
    /// it to its end or its next park. A park that is no longer there (answered by an
    /// earlier copy of this retry, here or on another server) is not an error: the call
    /// reports where the turn is now.
    pub(crate) async fn resume(
        mut self,
        thread: ThreadId,
        turn_id: String,
        park_id: String,
        answers: Vec<ParkedAnswer>,
    ) -> CallEnd {
        let resumed = tokio::select! {
            r = self.engine.resume_parked(thread, turn_id.clone(), park_id, answers) => r,
            _ = self.ctx.cancel.cancelled() => return CallEnd::Result(cancelled_before_start()),
        };
        let resumed = match resumed {
            Ok(r) => r,
            Err(ResumeError::NotParked(why)) => {
                tracing::debug!("thread {thread}: {why}; reporting where the turn is");
                return self.settle(thread, turn_id).await;
            }
            Err(ResumeError::Busy(why)) => return CallEnd::Result(busy_result(thread, &why)),
            Err(ResumeError::Expired(why)) => {
                return CallEnd::Result(tool_result(
                    Some(thread),
                    format!("{why}. The thread is kept: continue it with codex-reply."),
                    true,
                ));
            }
            Err(ResumeError::NotFound(id)) => return CallEnd::Result(not_found_result(id)),
            Err(ResumeError::BadAnswers(why) | ResumeError::Failed(why)) => {
                return CallEnd::Result(tool_result(
                    Some(thread),
                    format!("Could not resume the turn: {why}"),
                    true,
                ));
            }
        };
        let started = Started {
            thread: resumed.handle.thread,
            approval_timeout: resumed.handle.approval_timeout,
            events: resumed.turn,
            sub_id: turn_id,
        };
        let end = self.follow(started).await;
        self.finish(end).await
    }

    /// Where turn `turn_id` of `thread` is now, from its store, waiting while it runs (on
    /// any server): its result, or its current park.
    pub(crate) async fn settle(&self, thread: ThreadId, turn_id: String) -> CallEnd {
        loop {
            let state = tokio::select! {
                s = self.engine.turn_state(thread, turn_id.clone()) => s,
                _ = self.ctx.cancel.cancelled() => return CallEnd::Result(cancelled_before_start()),
            };
            match state {
                Ok(Some(TurnState::Running { .. })) => {}
                Ok(Some(state)) => return settled(thread, state),
                Ok(None) => {
                    return CallEnd::Result(tool_result(
                        Some(thread),
                        format!("Thread {thread} has no turn {turn_id}."),
                        true,
                    ));
                }
                Err(e) => {
                    return CallEnd::Result(tool_result(
                        Some(thread),
                        format!("Could not read the thread's store: {e:?}"),
                        true,
                    ));
                }
            }
            tokio::select! {
                _ = tokio::time::sleep(SETTLE_POLL) => {}
                _ = self.ctx.cancel.cancelled() => return CallEnd::Result(cancelled_before_start()),
            }
        }
    }

    /// Starts a `codex` call's thread and first turn.
    pub(crate) async fn start_codex(&mut self, args: CodexArgs) -> Result<Started, CallToolResult> {
        let started = tokio::select! {
            r = self.engine.start_thread(args.session) => r,
            _ = self.ctx.cancel.cancelled() => return Err(cancelled_before_start()),
        };
        let handle = started.map_err(|e| tool_result(None, engine_error_text(&e), true))?;
        // The reference uses the MCP request id as the first turn's id, so clients can
        // correlate events with their call without looking at _meta.
        let sub_id = self.ctx.id.to_string();
        self.start(handle, args.prompt, sub_id).await
    }

    /// Opens a `codex-reply` call's thread and starts its turn.
    pub(crate) async fn start_reply(&mut self, args: ReplyArgs) -> Result<Started, CallToolResult> {
        let thread_id = args.thread_id;
        let opened = tokio::select! {
            r = self.engine.open_thread(thread_id) => r,
            _ = self.ctx.cancel.cancelled() => return Err(cancelled_before_start()),
        };
        let handle = match opened {
            Ok(h) => h,
            Err(EngineError::NotFound(id)) => return Err(not_found_result(id)),
            Err(e) => return Err(tool_result(Some(thread_id), engine_error_text(&e), true)),
        };
        self.start(handle, args.prompt, oi_protocol::ids::new_id())
            .await
    }

    /// Lets the thread go (for a store shared with other servers), then tells the client
    /// the turn is over: the terminal event waits for the release because a client that
    /// sends `codex-reply` as soon as it sees `task_complete` / `turn_aborted` — here or on
    /// another server — must find the thread in the store, not still held by this call.
    /// A parked turn's thread is let go the same way, so the retry can resume it anywhere.
    pub(crate) async fn finish(&mut self, end: TurnEnd) -> CallEnd {
        self.engine.release_thread(end.thread).await;
        if let Some(event) = end.terminal {
            self.emit(end.thread, &event).await;
        }
        end.result
    }

    async fn emit(&mut self, thread_id: ThreadId, event: &Event) {
        if self.quiet || (self.silent_after_cancel && self.ctx.cancelled_by_client()) {
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
        if self.log_level.is_some()
            && let Some(level) = log_level_of(&event.msg)
            && let Some(data) = crate::progress::summarize(&event.msg)
        {
            let message = LogMessage {
                level,
                logger: "openinterpreter",
                data: format!("thread {thread_id}: {data}"),
            };
            send_log(&self.ctx, self.log_level, &message).await;
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

    /// Starts turn `sub_id` answering `prompt` on `handle`'s thread (parking at approvals
    /// when the call's options say so), and tells the client about the session first.
    async fn start(
        &mut self,
        handle: ThreadHandle,
        prompt: String,
        sub_id: String,
    ) -> Result<Started, CallToolResult> {
        let thread: Arc<dyn EngineThread> = handle.thread.clone();
        let thread_id = thread.id();
        let events = match thread
            .start_turn(sub_id.clone(), prompt, self.options)
            .await
        {
            Ok(turn) => turn,
            Err(StartTurnError::Busy(why)) => {
                self.engine.release_thread(thread_id).await;
                return Err(busy_result(thread_id, &why));
            }
            Err(StartTurnError::Closed(e)) => {
                self.engine.release_thread(thread_id).await;
                return Err(tool_result(
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
        Ok(Started {
            thread,
            approval_timeout: handle.approval_timeout,
            events,
            sub_id,
        })
    }
}

/// A turn just started (or resumed), to be followed.
pub(crate) struct Started {
    pub thread: Arc<dyn EngineThread>,
    pub approval_timeout: Duration,
    pub events: Box<dyn EngineTurn>,
    /// The turn's id.
    pub sub_id: String,
}

impl Started {
    /// Waits until the turn's start is in the thread's store (the turn has begun, and the
    /// thread's records are flushed), so any server sharing the store finds it. Events
    /// seen meanwhile are kept for whoever follows the turn. `false` when the turn could
    /// not be made durable (the store is down, the thread ended).
    pub(crate) async fn until_stored(&mut self) -> bool {
        let mut seen = Vec::new();
        let begun = loop {
            match self.events.next_event().await {
                None => break false,
                Some(ev) => {
                    let begins = matches!(ev.msg, EventMsg::TaskStarted(_))
                        || ev.msg.ends_turn()
                        || matches!(ev.msg, EventMsg::TurnParked(_));
                    seen.push(ev);
                    if begins {
                        break true;
                    }
                }
            }
        };
        let events = std::mem::replace(&mut self.events, Box::new(Replay::default()));
        self.events = Box::new(Replay {
            seen,
            then: Some(events),
        });
        begun && self.thread.flush().await
    }
}

/// Events already read, then the rest of a turn's.
#[derive(Default)]
struct Replay {
    seen: Vec<Event>,
    then: Option<Box<dyn EngineTurn>>,
}

impl EngineTurn for Replay {
    fn next_event(&mut self) -> BoxFuture<'_, Option<Event>> {
        Box::pin(async move {
            if !self.seen.is_empty() {
                return Some(self.seen.remove(0));
            }
            match &mut self.then {
                Some(t) => t.next_event().await,
                None => None,
            }
        })
    }
}

/// How a call ends: with its result, or — a call whose turn parks its approvals — with
/// the turn parked, waiting for the answers.
#[derive(Debug)]
pub(crate) enum CallEnd {
    Result(CallToolResult),
    Parked {
        thread: ThreadId,
        parked: TurnParkedEvent,
    },
    /// The turn stopped at an approval the request could not be asked (a 2026-07-28
    /// request that did not declare elicitation): `what` it wanted to do did not happen.
    NeedsElicitation {
        thread: ThreadId,
        what: String,
    },
}

/// How a call's turn ended: its result and, for a turn that reached its end (or park), the
/// event still to be sent to the client.
pub(crate) struct TurnEnd {
    thread: ThreadId,
    result: CallEnd,
    terminal: Option<Event>,
}

/// The end of a call whose turn's state `state` is not running: its result, as the call
/// that ran the turn would have returned it, or its park. For a client that comes back
/// later (a replayed retry, a task's poll), on any server.
pub(crate) fn settled(thread: ThreadId, state: TurnState) -> CallEnd {
    let text = match state {
        TurnState::Parked(parked) => return CallEnd::Parked { thread, parked },
        TurnState::Completed { last_agent_message } => {
            return CallEnd::Result(tool_result(
                Some(thread),
                last_agent_message.unwrap_or_default(),
                false,
            ));
        }
        TurnState::Failed { error } => error,
        TurnState::Aborted { reason } => ended_early_text(&match reason {
            TurnAbortReason::Interrupted => "it was interrupted".to_string(),
            TurnAbortReason::Replaced => "another turn replaced it".to_string(),
        }),
        TurnState::Expired { expires_at } => format!(
            "The turn waited for approval until {} and expired: nothing it asked for ran. The thread is kept: continue it with codex-reply.",
            rfc3339(expires_at)
        ),
        TurnState::Orphaned => "The server that ran the turn stopped before the turn finished. The thread is kept: continue it with codex-reply.".to_string(),
        TurnState::Running { .. } => "The turn is still running.".to_string(),
    };
    CallEnd::Result(tool_result(Some(thread), text, true))
}

/// Unix seconds as an RFC 3339 UTC time.
pub(crate) fn rfc3339(unix_secs: i64) -> String {
    chrono::DateTime::from_timestamp(unix_secs, 0)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true))
        .unwrap_or_else(|| unix_secs.to_string())
}

fn ended_early_text(why: &str) -> String {
    format!(
        "The turn ended before finishing because {why}. The thread is kept: continue it with codex-reply."
    )
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
    e.to_string()
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
