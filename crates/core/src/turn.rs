//! One turn: stream the model, run the tools it calls, repeat until it answers.

use crate::prompt::{base_instructions, context_items};
use crate::session::{ActiveTurn, Session};
use crate::tools::{PendingCall, run_calls, tool_specs};
use futures::StreamExt;
use oi_model_client::{ModelError, Prompt, ResponseEvent, RetryNotice};
use oi_protocol::models::{ResponseItem, Role, TokenUsage};
use oi_protocol::protocol::{
    AgentMessageDeltaEvent, AgentMessageEvent, AgentReasoningDeltaEvent, AgentReasoningEvent,
    ErrorEvent, ErrorInfo, EventMsg, StreamErrorEvent, TaskCompleteEvent, TaskStartedEvent,
    TokenCountEvent, TokenUsageInfo, TurnAbortReason, TurnAbortedEvent, UserMessageEvent,
};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

enum TurnFailure {
    Interrupted,
    Failed {
        message: String,
        info: Option<ErrorInfo>,
    },
}

struct Sampled {
    items: Vec<ResponseItem>,
    usage: Option<TokenUsage>,
}

fn now_unix() -> i64 {
    chrono::Utc::now().timestamp()
}

/// Start a turn (the caller has already installed `ActiveTurn`).
pub(crate) async fn run_turn(
    sess: Arc<Session>,
    turn_id: String,
    cancel: CancellationToken,
    user_message: UserMessageEvent,
) {
    let started = Instant::now();
    sess.record_turn_context(&turn_id);
    let window = sess.config().model_context_window;
    sess.send(
        &turn_id,
        EventMsg::TaskStarted(TaskStartedEvent {
            turn_id: turn_id.clone(),
            started_at: Some(now_unix()),
            model_context_window: window,
            collaboration_mode_kind: "default".into(),
        }),
    );
    sess.send(&turn_id, EventMsg::UserMessage(user_message));
    let result = turn_loop(&sess, &turn_id, &cancel).await;
    let duration_ms = Some(started.elapsed().as_millis() as u64);
    match result {
        // Completed: `turn_loop` already emitted task_complete while holding the state lock.
        Ok(()) => {}
        Err(TurnFailure::Interrupted) => {
            finish(&sess, &turn_id, |sess| {
                sess.send(
                    &turn_id,
                    EventMsg::TurnAborted(TurnAbortedEvent {
                        turn_id: Some(turn_id.clone()),
                        reason: TurnAbortReason::Interrupted,
                        completed_at: Some(now_unix()),
                        duration_ms,
                    }),
                )
            });
        }
        Err(TurnFailure::Failed { message, info }) => {
            finish(&sess, &turn_id, |sess| {
                sess.send(
                    &turn_id,
                    EventMsg::Error(ErrorEvent {
                        message,
                        codex_error_info: info,
                    }),
                );
                sess.send(
                    &turn_id,
                    EventMsg::TaskComplete(TaskCompleteEvent {
                        turn_id: turn_id.clone(),
                        last_agent_message: None,
                        completed_at: Some(now_unix()),
                        duration_ms,
                    }),
                );
            });
        }
    }
    sess.flush(&turn_id);
}

/// Clear the active turn and emit the terminal events under the state lock, so a new turn
/// cannot start (and emit `task_started`) before this one's end is in the stream.
fn finish(sess: &Session, turn_id: &str, emit: impl FnOnce(&Session)) {
    let mut st = sess.state();
    if st.active_turn.as_ref().is_some_and(|t| t.id == turn_id) {
        st.active_turn = None;
    }
    // Drain pending approvals of this turn: their waiters are gone.
    st.pending_approvals.clear();
    emit(sess);
}

async fn turn_loop(
    sess: &Arc<Session>,
    turn_id: &str,
    cancel: &CancellationToken,
) -> Result<(), TurnFailure> {
    let started = Instant::now();
    let max_steps = sess.config().max_turn_steps;
    let mut last_agent_message: Option<String> = None;
    let mut steps = 0usize;
    loop {
        take_pending_input(sess, turn_id);
        steps += 1;
        if steps > max_steps {
            return Err(TurnFailure::Failed {
                message: format!(
                    "stopped this turn: the model made {max_steps} requests without finishing its answer (it kept calling tools). Raise `max_turn_steps` in config.toml if the task really needs more steps."
                ),
                info: Some(ErrorInfo::Other),
            });
        }
        let sampled = sample(sess, turn_id, cancel).await?;
        if let Some(usage) = sampled.usage {
            report_usage(sess, turn_id, usage);
        }
        let calls: Vec<PendingCall> = sampled
            .items
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
        for item in &sampled.items {
            if let ResponseItem::Message {
                role: Role::Assistant,
                ..
            } = item
            {
                last_agent_message = item.message_text();
            }
        }
        sess.push_history(turn_id, sampled.items);

        if calls.is_empty() {
            // Done, unless the user steered while the model was answering.
            let mut st = sess.state();
            let has_pending = st
                .active_turn
                .as_ref()
                .is_some_and(|t| !t.pending_input.is_empty());
            if has_pending {
                continue;
            }
            if st.active_turn.as_ref().is_some_and(|t| t.id == turn_id) {
                st.active_turn = None;
            }
            st.pending_approvals.clear();
            sess.send(
                turn_id,
                EventMsg::TaskComplete(TaskCompleteEvent {
                    turn_id: turn_id.to_string(),
                    last_agent_message: last_agent_message.clone(),
                    completed_at: Some(now_unix()),
                    duration_ms: Some(started.elapsed().as_millis() as u64),
                }),
            );
            return Ok(());
        }

        // Every call gets an output, even when the turn stops, so the history stays valid
        // for the next request (independent MCP calls run concurrently: see tools::parallel).
        let abort = run_calls(sess, turn_id, calls, cancel).await;
        if abort || cancel.is_cancelled() {
            return Err(TurnFailure::Interrupted);
        }
    }
}

/// Move steering input into history (and tell front ends about it).
fn take_pending_input(sess: &Session, turn_id: &str) {
    let pending = {
        let mut st = sess.state();
        match st.active_turn.as_mut() {
            Some(ActiveTurn { pending_input, .. }) => std::mem::take(pending_input),
            None => Vec::new(),
        }
    };
    sess.push_history(turn_id, pending);
}

fn report_usage(sess: &Session, turn_id: &str, usage: TokenUsage) {
    let total = {
        let mut st = sess.state();
        st.total_usage.add_assign(&usage);
        st.total_usage
    };
    let window = sess.config().model_context_window;
    sess.send(
        turn_id,
        EventMsg::TokenCount(TokenCountEvent {
            info: Some(TokenUsageInfo {
                total_token_usage: total,
                last_token_usage: usage,
                model_context_window: window,
            }),
            rate_limits: sess.client.rate_limits(),
        }),
    );
}

fn build_prompt(sess: &Session) -> Prompt {
    let tools = tool_specs(sess);
    let st = sess.state();
    let cfg = &st.config;
    let mut input = context_items(cfg);
    input.extend(st.history.iter().cloned());
    Prompt {
        model: cfg.model.clone(),
        instructions: base_instructions(cfg),
        input,
        tools,
        reasoning_effort: cfg.model_reasoning_effort,
        parallel_tool_calls: false,
    }
}

fn classify(e: &ModelError) -> Option<ErrorInfo> {
    match e.http_status() {
        Some(401) | Some(403) => Some(ErrorInfo::Unauthorized),
        Some(400) => Some(ErrorInfo::BadRequest),
        Some(429) => Some(ErrorInfo::ResponseTooManyFailedAttempts {
            http_status_code: Some(429),
        }),
        Some(s) if s >= 500 => Some(ErrorInfo::ResponseTooManyFailedAttempts {
            http_status_code: Some(s),
        }),
        Some(s) => Some(ErrorInfo::HttpConnectionFailed {
            http_status_code: Some(s),
        }),
        None if e.is_retryable_stream_error() => Some(ErrorInfo::ResponseStreamDisconnected {
            http_status_code: None,
        }),
        None => Some(ErrorInfo::Other),
    }
}

/// One model request, with retries for streams that drop mid-way.
async fn sample(
    sess: &Arc<Session>,
    turn_id: &str,
    cancel: &CancellationToken,
) -> Result<Sampled, TurnFailure> {
    let max_stream_retries = sess.config().model_provider.stream_max_retries();
    let mut attempt = 0u64;
    let mut stale_retry_used = false;
    loop {
        let prompt = build_prompt(sess);
        let on_retry = |n: RetryNotice| {
            sess.send(
                turn_id,
                EventMsg::StreamError(StreamErrorEvent {
                    message: format!(
                        "Reconnecting... {}/{} in {:.1}s ({})",
                        n.attempt,
                        n.max_attempts,
                        n.delay.as_secs_f64(),
                        n.reason
                    ),
                    codex_error_info: None,
                    additional_details: None,
                }),
            )
        };
        let stream = tokio::select! {
            _ = cancel.cancelled() => return Err(TurnFailure::Interrupted),
            r = sess.client.stream(&prompt, &on_retry) => r,
        };
        let mut stream = match stream {
            Ok(s) => s,
            // A connection that dies right after a dropped stream (a stale keep-alive
            // socket) is part of the same disconnect: retry it like one.
            Err(e @ ModelError::Connect(_)) if attempt > 0 && !stale_retry_used => {
                stale_retry_used = true;
                sess.send(
                    turn_id,
                    EventMsg::StreamError(StreamErrorEvent {
                        message: format!("Reconnecting... ({e})"),
                        codex_error_info: Some(ErrorInfo::ResponseStreamConnectionFailed {
                            http_status_code: None,
                        }),
                        additional_details: None,
                    }),
                );
                continue;
            }
            Err(e) => {
                return Err(TurnFailure::Failed {
                    info: classify(&e),
                    message: e.to_string(),
                });
            }
        };
        let mut items = Vec::new();
        let mut failure: Option<ModelError> = None;
        let mut usage = None;
        let mut completed = false;
        loop {
            let ev = tokio::select! {
                _ = cancel.cancelled() => return Err(TurnFailure::Interrupted),
                ev = stream.next() => ev,
            };
            match ev {
                Some(Ok(ResponseEvent::Created)) => {}
                Some(Ok(ResponseEvent::OutputTextDelta(delta))) => sess.send(
                    turn_id,
                    EventMsg::AgentMessageDelta(AgentMessageDeltaEvent { delta }),
                ),
                Some(Ok(ResponseEvent::ReasoningDelta(delta))) => sess.send(
                    turn_id,
                    EventMsg::AgentReasoningDelta(AgentReasoningDeltaEvent { delta }),
                ),
                Some(Ok(ResponseEvent::OutputItemDone(item))) => {
                    match &item {
                        ResponseItem::Message {
                            role: Role::Assistant,
                            ..
                        } => {
                            let text = item.message_text().unwrap_or_default();
                            if !text.is_empty() {
                                sess.send(
                                    turn_id,
                                    EventMsg::AgentMessage(AgentMessageEvent {
                                        message: text,
                                        phase: None,
                                        memory_citation: None,
                                    }),
                                );
                            }
                        }
                        ResponseItem::Reasoning { text, .. } if !text.is_empty() => sess.send(
                            turn_id,
                            EventMsg::AgentReasoning(AgentReasoningEvent { text: text.clone() }),
                        ),
                        _ => {}
                    }
                    items.push(item);
                }
                Some(Ok(ResponseEvent::Completed { token_usage, .. })) => {
                    usage = token_usage;
                    completed = true;
                    break;
                }
                Some(Err(e)) => {
                    failure = Some(e);
                    break;
                }
                None => break,
            }
        }
        if completed {
            return Ok(Sampled { items, usage });
        }
        let err = failure.unwrap_or_else(|| {
            ModelError::StreamDisconnected("the stream ended before the response completed".into())
        });
        if err.is_retryable_stream_error() && attempt < max_stream_retries {
            attempt += 1;
            let delay = Duration::from_millis(200 * (1 << attempt.min(6)));
            sess.send(
                turn_id,
                EventMsg::StreamError(StreamErrorEvent {
                    message: format!("Reconnecting... {attempt}/{max_stream_retries} ({err})"),
                    codex_error_info: Some(ErrorInfo::ResponseStreamDisconnected {
                        http_status_code: None,
                    }),
                    additional_details: None,
                }),
            );
            tokio::select! {
                _ = cancel.cancelled() => return Err(TurnFailure::Interrupted),
                _ = tokio::time::sleep(delay) => {}
            }
            continue;
        }
        return Err(TurnFailure::Failed {
            info: classify(&err),
            message: err.to_string(),
        });
    }
}
