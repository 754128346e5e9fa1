//! One model request: stream the answer to front ends as it comes, retry a stream that
//! drops, recover when the window was too small, and account for the tokens used.

use super::{TurnFailure, compact_failure};
use crate::compact::recover::{
    SignalOutcome, overflow_failure, recover_from_overflow, recover_from_signal,
};
use crate::context_window::{WindowSignal, window_signal};
use crate::prompt::{build_sized_prompt, prompt_has_images};
use crate::session::Session;
use futures::StreamExt;
use oi_model_client::{ModelError, Prompt, ResponseEvent, RetryNotice};
use oi_protocol::models::{ResponseItem, Role, TokenUsage};
use oi_protocol::protocol::{
    AgentMessageDeltaEvent, AgentMessageEvent, AgentReasoningDeltaEvent, AgentReasoningEvent,
    ErrorInfo, EventMsg, StreamErrorEvent, TokenCountEvent, TokenUsageInfo,
};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// A whole answer of the model.
pub(super) struct Sampled {
    pub items: Vec<ResponseItem>,
    pub usage: Option<TokenUsage>,
    /// The model stopped at its output token limit.
    pub truncated: bool,
    /// Size of the request that produced this answer, to correct the token estimate.
    pub prompt_size: usize,
    /// The output bound the request carried.
    pub max_output_tokens: Option<u32>,
    /// The server counted far fewer prompt tokens than were sent (it cut the prompt).
    pub cut_by_server: bool,
    /// The answer was stopped because the model repeated itself (already warned about).
    pub looped: bool,
    /// The server paused the answer (Messages `pause_turn`): sending the conversation again
    /// lets the model continue it.
    pub paused: bool,
}

/// The retries one request has used.
struct Retries {
    /// Streams that dropped and were sent again.
    attempt: u64,
    max_stream_retries: u64,
    /// A connection refused right after a dropped stream was retried once.
    stale_retry_used: bool,
    /// The conversation was compacted to fit the window (once per request).
    overflow_compacted: bool,
}

/// What one attempt at a request came to.
enum Attempt {
    Answered(Sampled),
    /// Send the request again (built anew: a compaction may have replaced the history).
    Retry,
}

/// One model request, with retries for streams that drop mid-way.
pub(super) async fn sample(
    sess: &Arc<Session>,
    turn_id: &str,
    cancel: &CancellationToken,
    first: (Prompt, usize),
) -> Result<Sampled, TurnFailure> {
    let mut retries = Retries {
        attempt: 0,
        max_stream_retries: sess
            .turn_context()
            .config
            .model_provider
            .stream_max_retries(),
        stale_retry_used: false,
        overflow_compacted: false,
    };
    let mut first = Some(first);
    loop {
        let built = first.take().unwrap_or_else(|| build_sized_prompt(sess));
        if let Attempt::Answered(sampled) =
            attempt(sess, turn_id, cancel, built, &mut retries).await?
        {
            return Ok(sampled);
        }
    }
}

/// Sends the request once and reads its answer.
async fn attempt(
    sess: &Arc<Session>,
    turn_id: &str,
    cancel: &CancellationToken,
    (prompt, prompt_size): (Prompt, usize),
    retries: &mut Retries,
) -> Result<Attempt, TurnFailure> {
    let estimated_prompt = sess.state().estimator.uncut_tokens(prompt_size);
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
        Err(e @ ModelError::Connect(_)) if retries.attempt > 0 && !retries.stale_retry_used => {
            retries.stale_retry_used = true;
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
            return Ok(Attempt::Retry);
        }
        Err(e) => return compact_or_fail(sess, turn_id, cancel, &e, &prompt, retries).await,
    };
    let drained = drain(sess, turn_id, cancel, &mut stream).await?;
    if drained.completed {
        let sized = SizedPrompt {
            prompt: &prompt,
            size: prompt_size,
            estimated_tokens: estimated_prompt,
        };
        return check_window(sess, turn_id, cancel, sized, drained, retries).await;
    }
    let err = drained.failure.unwrap_or_else(|| {
        ModelError::StreamDisconnected("the stream ended before the response completed".into())
    });
    if err.is_retryable_stream_error() && retries.attempt < retries.max_stream_retries {
        retries.attempt += 1;
        let attempt = retries.attempt;
        let delay = Duration::from_millis(200 * (1 << attempt.min(6)));
        sess.send(
            turn_id,
            EventMsg::StreamError(StreamErrorEvent {
                message: format!(
                    "Reconnecting... {attempt}/{} ({err})",
                    retries.max_stream_retries
                ),
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
        return Ok(Attempt::Retry);
    }
    // Some servers report a too-long prompt inside the stream.
    if drained.items.is_empty() {
        return compact_or_fail(sess, turn_id, cancel, &err, &prompt, retries).await;
    }
    Err(model_failure(&err, retries.overflow_compacted))
}

/// A request refused: when it did not fit the window, compact and retry once; else fail.
async fn compact_or_fail(
    sess: &Arc<Session>,
    turn_id: &str,
    cancel: &CancellationToken,
    err: &ModelError,
    prompt: &Prompt,
    retries: &mut Retries,
) -> Result<Attempt, TurnFailure> {
    if recover_from_overflow(
        sess,
        turn_id,
        cancel,
        err,
        prompt,
        &mut retries.overflow_compacted,
    )
    .await
    .map_err(compact_failure)?
    {
        return Ok(Attempt::Retry);
    }
    Err(model_failure(err, retries.overflow_compacted))
}

/// The request an answer came from, measured.
struct SizedPrompt<'a> {
    prompt: &'a Prompt,
    size: usize,
    estimated_tokens: i64,
}

/// A completed answer: keep it, unless the server's count shows the window was too small
/// for it (then compact and retry, or fail).
async fn check_window(
    sess: &Arc<Session>,
    turn_id: &str,
    cancel: &CancellationToken,
    sent: SizedPrompt<'_>,
    drained: Drained,
    retries: &mut Retries,
) -> Result<Attempt, TurnFailure> {
    let Drained {
        items,
        usage,
        truncated,
        looped,
        paused,
        ..
    } = drained;
    // The plain-bytes count costs a serialization: only when the report is low.
    let least_prompt = match &usage {
        Some(u) if u.input_tokens * 2 < sent.estimated_tokens => sess
            .state()
            .estimator
            .least_tokens(crate::context_window::plain_prompt_size(sent.prompt)),
        _ => sent.estimated_tokens,
    };
    let signal = window_signal(
        sent.estimated_tokens,
        least_prompt,
        usage.as_ref(),
        truncated,
        sess.context_window(),
        sent.prompt.max_output_tokens,
        prompt_has_images(sent.prompt),
    );
    if let Some(signal) = signal {
        let outcome = recover_from_signal(
            sess,
            turn_id,
            cancel,
            signal,
            &mut retries.overflow_compacted,
        )
        .await
        .map_err(compact_failure)?;
        if let SignalOutcome::Retry = outcome {
            return Ok(Attempt::Retry);
        }
    }
    Ok(Attempt::Answered(Sampled {
        items,
        usage,
        truncated,
        prompt_size: sent.size,
        max_output_tokens: sent.prompt.max_output_tokens,
        cut_by_server: matches!(signal, Some(WindowSignal::SilentTruncation { .. })),
        looped,
        paused,
    }))
}

/// What one model stream produced before it completed, failed or ended.
struct Drained {
    items: Vec<ResponseItem>,
    usage: Option<TokenUsage>,
    /// The server sent `completed`: the answer is whole.
    completed: bool,
    /// The model stopped at its output token limit.
    truncated: bool,
    /// The answer was stopped because the model repeated itself.
    looped: bool,
    /// The server paused the answer to be continued (Messages `pause_turn`).
    paused: bool,
    failure: Option<ModelError>,
}

/// Reads one model stream to its end, emitting deltas, messages and reasoning as they come.
async fn drain(
    sess: &Arc<Session>,
    turn_id: &str,
    cancel: &CancellationToken,
    stream: &mut oi_model_client::ResponseStream,
) -> Result<Drained, TurnFailure> {
    let mut out = Drained {
        items: Vec::new(),
        usage: None,
        completed: false,
        truncated: false,
        looped: false,
        paused: false,
        failure: None,
    };
    // Calls in this answer came from its text, not from the server's parser.
    let mut recovered = false;
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
                announce_item(sess, turn_id, &item);
                out.items.push(item);
            }
            Some(Ok(ResponseEvent::ToolCallsRecoveredFromText {
                format,
                server_hint,
                parser_off,
            })) => {
                recovered = true;
                warn_calls_in_text(sess, turn_id, &format, &server_hint, parser_off);
            }
            Some(Ok(ResponseEvent::OutputLimitReached)) => out.truncated = true,
            Some(Ok(ResponseEvent::Paused)) => out.paused = true,
            Some(Ok(ResponseEvent::RepetitionStopped)) => {
                out.truncated = true;
                out.looped = true;
                sess.warn(
                    turn_id,
                    "the model started repeating itself (the same text over and over), so its answer was stopped there and the repeated part dropped".to_string(),
                );
            }
            Some(Ok(ResponseEvent::Completed { token_usage, .. })) => {
                out.usage = token_usage;
                out.completed = true;
                let parsed = out
                    .items
                    .iter()
                    .any(|i| matches!(i, ResponseItem::FunctionCall { .. }));
                if parsed && !recovered && !sess.tools_as_text() {
                    sess.state().server_parses_calls = true;
                }
                return Ok(out);
            }
            Some(Err(e)) => {
                out.failure = Some(e);
                return Ok(out);
            }
            None => return Ok(out),
        }
    }
}

/// Calls recovered from the answer's text while the server's tool-call parser is off.
fn warn_calls_in_text(
    sess: &Session,
    turn_id: &str,
    format: &str,
    server_hint: &str,
    parser_off: bool,
) {
    // In text mode calls in the text are what was asked for: nothing to warn about.
    // Nor when the parser is on: it parsed calls before, or the model wrote a
    // shape no parser catches (plain JSON).
    let parser_on = !parser_off || sess.state().server_parses_calls;
    if !sess.tools_as_text() && !parser_on {
        sess.warn_once(turn_id, "tool_calls_in_text", || {
            format!(
                "the model's tool calls arrived as plain text ({format} format): the server's tool-call parser is off. They are recognised and run anyway, but the server should parse them itself. Fix: {server_hint}. See docs/providers.md, \"Server settings\"."
            )
        });
    }
}

/// The events of a finished output item: an assistant message or reasoning, in full.
fn announce_item(sess: &Session, turn_id: &str, item: &ResponseItem) {
    match item {
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
}

fn model_failure(err: &ModelError, overflow_compacted: bool) -> TurnFailure {
    if err.context_overflow().is_some() {
        return compact_failure(overflow_failure(err, overflow_compacted));
    }
    TurnFailure::Failed {
        info: classify(err),
        message: err.to_string(),
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

/// Account for one model response and emit `token_count`. Servers that report no usage get
/// an estimate (the request's size, the answer's size), so the count is never missing.
pub(super) fn report_usage(sess: &Session, turn_id: &str, sampled: &Sampled) {
    let usage = match sampled.usage {
        Some(usage) => {
            // A count of a prompt the server cut says nothing about the tokenizer.
            if usage.input_tokens > 0 && !sampled.cut_by_server {
                sess.state()
                    .estimator
                    .observe(sampled.prompt_size, usage.input_tokens);
                sess.remember_ratio_if_changed();
            }
            usage
        }
        None => {
            let input = sess.state().estimator.tokens(sampled.prompt_size);
            let out_size: usize = sampled
                .items
                .iter()
                .map(|i| {
                    serde_json::to_string(i).map_or(0, |s| crate::context_window::text_size(&s))
                })
                .sum();
            let output = crate::context_window::estimate_tokens(out_size);
            TokenUsage {
                input_tokens: input,
                cached_input_tokens: 0,
                output_tokens: output,
                reasoning_output_tokens: 0,
                total_tokens: input + output,
            }
        }
    };
    count_usage(sess, turn_id, usage);
}

/// Adds one model request to the thread's token usage and says so with a `token_count`
/// event (the turn's samples and the MCP servers' sampling requests alike).
pub(crate) fn count_usage(sess: &Session, turn_id: &str, usage: TokenUsage) {
    let total = {
        let mut st = sess.state();
        st.total_usage.add_assign(&usage);
        st.total_usage
    };
    let (window, source) = sess.context_window_and_source();
    sess.send(
        turn_id,
        EventMsg::TokenCount(TokenCountEvent {
            info: Some(TokenUsageInfo {
                total_token_usage: total,
                last_token_usage: usage,
                model_context_window: Some(window),
                model_context_window_source: Some(source),
            }),
            rate_limits: sess.client.rate_limits(),
        }),
    );
}
