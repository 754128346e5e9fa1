//! When a request did not fit the server's window: it refused it (a context-length error),
//! cut it without a word (far fewer prompt tokens counted than sent), or ran out of window
//! while answering (`finish_reason: length` with the window full). Each time: learn the
//! window, compact, and retry the request once.

use super::{CompactError, compact, has_model_output, implied_window};
use crate::context_window::WindowSignal;
use crate::session::Session;
use crate::window::LearnedFrom;
use oi_model_client::{ModelError, Prompt};
use oi_protocol::protocol::{ErrorInfo, EventMsg, StreamErrorEvent};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// A context-length error: learn the window, compact, and let the caller retry the request
/// once (`Ok(true)`). `Ok(false)` when this is not an overflow or the one retry is used up.
pub(crate) async fn recover_from_overflow(
    sess: &Arc<Session>,
    turn_id: &str,
    cancel: &CancellationToken,
    err: &ModelError,
    prompt: &Prompt,
    already_compacted: &mut bool,
) -> Result<bool, CompactError> {
    let Some(overflow) = err.context_overflow() else {
        return Ok(false);
    };
    // The server is right about its window. When it does not say, it is smaller than the
    // request it refused. Learned (and remembered) even when nothing can be compacted: a
    // resumed thread must not be sent the same refused request again.
    let learned = overflow
        .window
        .unwrap_or_else(|| implied_window(prompt).min(sess.context_window()));
    sess.learn_window(learned, LearnedFrom::Overflow).await;
    // Only user messages so far: a summary cannot make the request smaller, so the error
    // goes to the user as it is (with what to do about it).
    if *already_compacted || !has_model_output(&sess.state().history) {
        return Ok(false);
    }
    *already_compacted = true;
    sess.send(
        turn_id,
        EventMsg::StreamError(StreamErrorEvent {
            message: format!(
                "the request did not fit the model's context window ({learned} tokens); compacting the conversation and retrying"
            ),
            codex_error_info: Some(ErrorInfo::ContextWindowExceeded),
            additional_details: None,
        }),
    );
    compact(sess, turn_id, cancel, true).await?;
    Ok(true)
}

/// What to do with a completed response after [`crate::context_window::window_signal`].
pub(crate) enum SignalOutcome {
    /// Keep the response.
    Keep,
    /// The conversation was compacted: send the request again.
    Retry,
}

/// A response that shows the window is smaller than we knew (the server cut the prompt) or
/// full (the answer was cut off for lack of room): learn, compact, and retry once. When no
/// compaction can help (only user messages, or the retry is used up), a cut prompt keeps
/// its answer with a warning and a full window fails the turn with what to change.
pub(crate) async fn recover_from_signal(
    sess: &Arc<Session>,
    turn_id: &str,
    cancel: &CancellationToken,
    signal: WindowSignal,
    already_compacted: &mut bool,
) -> Result<SignalOutcome, CompactError> {
    let can_compact = !*already_compacted && has_model_output(&sess.state().history);
    let (message, info) = match signal {
        WindowSignal::SilentTruncation { sent, used, output } => {
            // The server fit what it kept and the answer in its window: at least that much.
            let learned = (used + output).max(1024);
            if !sess
                .learn_window(learned, LearnedFrom::SilentTruncation)
                .await
            {
                // The server says it runs a bigger window: the count was wrong, not the
                // prompt cut (a proxy's count, or cached tokens left out). Keep the answer.
                tracing::debug!(
                    "the server counted {used} of about {sent} prompt tokens, but it runs a bigger window; not taken as a cut"
                );
                return Ok(SignalOutcome::Keep);
            }
            sess.state().estimator.distrust_low_reports();
            let hint = raise_window_hint(sess);
            sess.warn_once(turn_id, "silent_truncation", || {
                format!(
                    "the model server counted only {used} of the about {sent} prompt tokens sent: it cut the conversation to fit a smaller context window instead of refusing it, so the model did not see all of it (the oldest part first). Using a {learned}-token window from now on and compacting. To give the model more room: {hint}."
                )
            });
            if !can_compact {
                return Ok(SignalOutcome::Keep);
            }
            (
                format!(
                    "the server cut the prompt to about {used} tokens; compacting the conversation and retrying"
                ),
                ErrorInfo::ContextWindowExceeded,
            )
        }
        WindowSignal::ContextFull { used } => {
            let window = sess.context_window();
            if !can_compact {
                let hint = raise_window_hint(sess);
                return Err(CompactError::Failed(format!(
                    "context full: the answer was cut off because the conversation and the answer filled the model's context window ({used} of {window} tokens){}. Start a new thread, ask for a shorter answer, or {hint}.",
                    if *already_compacted {
                        ", even after compacting"
                    } else {
                        ""
                    }
                )));
            }
            (
                format!(
                    "context full: the answer was cut off at {used} of {window} tokens; compacting the conversation and retrying"
                ),
                ErrorInfo::ContextWindowExceeded,
            )
        }
    };
    *already_compacted = true;
    sess.send(
        turn_id,
        EventMsg::StreamError(StreamErrorEvent {
            message,
            codex_error_info: Some(info),
            additional_details: None,
        }),
    );
    compact(sess, turn_id, cancel, true).await?;
    Ok(SignalOutcome::Retry)
}

/// What the user can change to give the model a bigger window, for this provider.
pub(crate) fn raise_window_hint(sess: &Session) -> String {
    let ctx = sess.turn_context();
    let cfg = &ctx.config;
    let base = cfg.model_provider.base_url.as_deref().unwrap_or("");
    let id = cfg.model_provider_id.as_str();
    let server = if id == "ollama" || base.contains(":11434") {
        "start Ollama with a larger default (`OLLAMA_CONTEXT_LENGTH=32768 ollama serve`) or set `PARAMETER num_ctx 32768` in the model's Modelfile"
    } else if id == "llamacpp" || base.contains(":8080") {
        "start llama-server with a larger `-c` (context size)"
    } else if id == "vllm" || base.contains(":8000") {
        "start vLLM with a larger `--max-model-len`"
    } else if id == "lmstudio" || base.contains(":1234") {
        "load the model in LM Studio with a larger context length"
    } else {
        "raise the server's context length"
    };
    format!(
        "{server}; if the server cannot give more, set `model_context_window` to its window so compaction starts in time"
    )
}

/// The failure of a request that does not fit the window (after the one compaction, or
/// when none could help); the turn reports it as `ContextWindowExceeded`.
pub(crate) fn overflow_failure(err: &ModelError, overflow_compacted: bool) -> CompactError {
    let what = if overflow_compacted {
        "even after compacting the conversation, the request does not fit the model's context window"
    } else {
        "the request does not fit the model's context window"
    };
    CompactError::Failed(format!(
        "{err}\n{what}. Start a new thread, ask for less output at once, or give the model a bigger window (start the server with a larger context, e.g. vLLM `--max-model-len`, llama.cpp `-c`, Ollama `num_ctx`) and set `model_context_window` to match."
    ))
}
