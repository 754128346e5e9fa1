//! Context compaction: ask the model for a summary of the work so far and replace the
//! history with the user's recent messages and that summary.
//!
//! Runs automatically before a request would cross `model_auto_compact_token_limit` (between
//! turns and between tool calls), after a context-length error (then the request is retried
//! once), and on `Op::Compact`. The summarization request must itself fit the window, so the
//! oldest tool outputs, then the oldest items, are left out of it when needed (and the
//! summary says so).
//!
//! Two entry points for a turn: [`compact_if_needed`] before a request, and [`recover`]
//! after the server refused a request, cut its prompt, or ran out of window while
//! answering. Neither calls back into the turn: they report a [`CompactError`], which the
//! turn maps to its failure.

pub(crate) mod recover;

use crate::context_window::{
    auto_compact_limit, budget_tool_outputs, estimate_tokens, prompt_size, text_size,
    tool_output_budget,
};
use crate::prompt::{base_instructions, context_items};
use crate::prompt::{build_prompt, estimate_with_history};
use crate::session::Session;
use futures::StreamExt;
use oi_model_client::{ModelError, Prompt, ResponseEvent};
use oi_protocol::models::{ResponseItem, Role};
use oi_protocol::protocol::{ContextCompactedEvent, EventMsg};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// What the model is asked when `compact_prompt` is not set. Written for small models:
/// short, concrete, with a fixed outline they can fill in.
pub const BUILTIN_COMPACT_PROMPT: &str = "\
Your context window is nearly full, so this conversation will be replaced by a summary that you write now. \
Write it for yourself: after this, you will only see the user's messages and this summary.

Use these headings, and keep it under 400 words:
## Goal
What the user asked for, in their words where it matters.
## Done so far
The steps taken and their results: files read or changed (with paths), commands run and what they showed, decisions made.
## Current state
What works, what fails (exact error messages), what is half-done.
## Next steps
What remains to do, in order.

Do not call tools. Do not add anything that did not happen.";

/// Starts the message that carries the summary in the new history.
pub const SUMMARY_PREFIX: &str =
    "Summary of the earlier conversation (it was compacted to fit the model's context window):";

/// Share of the window the summarization request may use; the rest is for the summary.
const SUMMARY_REQUEST_PERCENT: i64 = 75;
/// The summary's output bound: this share of the window, within the bounds below. The
/// prompt asks for under 400 words; a model that keeps going would otherwise fill the
/// window and leave a summary too big for the new history.
const SUMMARY_OUTPUT_PERCENT: i64 = 20;
const SUMMARY_OUTPUT_MIN_TOKENS: i64 = 256;
const SUMMARY_OUTPUT_MAX_TOKENS: i64 = 2048;
/// Share of the window kept for the user's earlier messages in the new history.
const RECENT_USER_PERCENT: i64 = 15;
/// Share of the window the user's current message may take and still be kept whole.
const CURRENT_USER_PERCENT: i64 = 50;

/// Why a compaction did not happen.
pub(crate) enum CompactError {
    Interrupted,
    Failed(String),
}

/// Compact when the next request (`prompt_size` big, already built by the caller) would
/// cross the auto-compact limit. Does nothing when there is nothing to summarize (the
/// history is only user messages, e.g. right after a compaction). `Ok(true)`: compacted, so
/// the request must be built again.
pub(crate) async fn compact_if_needed(
    sess: &Arc<Session>,
    turn_id: &str,
    cancel: &CancellationToken,
    prompt_size: usize,
) -> Result<bool, CompactError> {
    let window = sess.context_window();
    let limit = auto_compact_limit(
        window,
        sess.turn_context().config.model_auto_compact_token_limit,
    );
    let (tokens, ratio) = {
        let st = sess.state();
        (st.estimator.tokens(prompt_size), st.estimator.ratio())
    };
    tracing::debug!(
        prompt_size,
        tokens,
        ratio,
        limit,
        window,
        "auto-compact check"
    );
    if tokens <= limit || !has_model_output(&sess.state().history) {
        return Ok(false);
    }
    compact(sess, turn_id, cancel, true).await.map(|()| true)
}

/// Whether the history holds anything but user messages, i.e. something a summary could
/// replace.
pub(crate) fn has_model_output(history: &[ResponseItem]) -> bool {
    history.iter().any(|i| {
        !matches!(
            i,
            ResponseItem::Message {
                role: Role::User,
                ..
            }
        )
    })
}

/// Estimated tokens of `prompt` for this session's model.
pub(crate) fn estimate_prompt(sess: &Session, prompt: &Prompt) -> i64 {
    sess.state().estimator.tokens(prompt_size(prompt))
}

/// Summarize the history and replace it. Emits `context_compacted` on success.
pub(crate) async fn compact(
    sess: &Arc<Session>,
    turn_id: &str,
    cancel: &CancellationToken,
    automatic: bool,
) -> Result<(), CompactError> {
    let tokens_before = estimate_prompt(sess, &build_prompt(sess));
    let history = sess.state().history.clone();
    let mut target = sess.context_window() * SUMMARY_REQUEST_PERCENT / 100;
    // One more try with half the room if the server still says the request is too long
    // (our estimate was off, or the window is smaller than we knew).
    let mut attempts = 0;
    let (summary, left_out) = loop {
        attempts += 1;
        let (prompt, left_out) = summary_request(sess, &history, target);
        match request_summary(sess, &prompt, cancel).await {
            Ok(summary) => break (summary, left_out),
            Err(SummaryError::Interrupted) => return Err(CompactError::Interrupted),
            Err(SummaryError::Model(e)) => {
                if let (Some(overflow), true) = (e.context_overflow(), attempts < 2) {
                    if let Some(w) = overflow.window {
                        sess.learn_window(w, crate::window::LearnedFrom::Overflow)
                            .await;
                    }
                    target =
                        (target / 2).min(sess.context_window() * SUMMARY_REQUEST_PERCENT / 100);
                    continue;
                }
                return Err(CompactError::Failed(format!(
                    "could not compact the conversation: the summary request failed: {e}"
                )));
            }
        }
    };
    let summary = summary.trim().to_string();
    #[cfg(test)]
    if summary == crate::supervisor::tests::PANICKING_SUMMARY {
        panic!("compaction test panic");
    }
    if summary.is_empty() {
        return Err(CompactError::Failed(
            "could not compact the conversation: the model answered the summary request with no text"
                .into(),
        ));
    }
    let mut message = format!("{SUMMARY_PREFIX}\n\n{summary}");
    if let Some(note) = left_out.note() {
        message.push_str(&format!("\n\n({note})"));
    }
    // The summary goes before the user's current message, so the message the model answers
    // is still the last thing it reads.
    let window = sess.context_window();
    let (mut new_history, current) = recent_user_messages(&history, window);
    new_history.push(ResponseItem::user_text(message));
    // Whole when it fits: the next request must stay under the auto-compact limit, or the
    // server refuses it and there is nothing left to compact.
    let limit = auto_compact_limit(
        window,
        sess.turn_context().config.model_auto_compact_token_limit,
    );
    let current = current.map(|c| fit_current_message(sess, &new_history, c, limit));
    new_history.extend(current);
    sess.replace_history(turn_id, summary, new_history);
    let tokens_after = estimate_prompt(sess, &build_prompt(sess));
    sess.send(
        turn_id,
        EventMsg::ContextCompacted(ContextCompactedEvent {
            tokens_before: Some(tokens_before),
            tokens_after: Some(tokens_after),
            automatic,
        }),
    );
    Ok(())
}

/// What had to be left out of the summarization request to make it fit.
#[derive(Default, Debug, PartialEq)]
struct LeftOut {
    outputs: usize,
    items: usize,
}

impl LeftOut {
    fn note(&self) -> Option<String> {
        if self.outputs == 0 && self.items == 0 {
            return None;
        }
        Some(format!(
            "to fit the context window, {} older tool outputs and {} older conversation items were left out when this summary was written",
            self.outputs, self.items
        ))
    }
}

const OMITTED_OUTPUT: &str = "[output left out to fit the summary request]";

/// The summarization request: the history (tool outputs cut to the window's budget), then
/// the compaction prompt as the last user message; no tools. Shrunk to `target` tokens by
/// blanking the oldest tool outputs, then dropping the oldest items.
fn summary_request(sess: &Session, history: &[ResponseItem], target: i64) -> (Prompt, LeftOut) {
    let ctx = sess.turn_context();
    let cfg = &ctx.config;
    let budget = tool_output_budget(sess.context_window(), cfg.tool_output_max_bytes);
    let mut items = history.to_vec();
    budget_tool_outputs(&mut items, budget);
    let instruction = cfg
        .compact_prompt
        .clone()
        .filter(|p| !p.trim().is_empty())
        .unwrap_or_else(|| BUILTIN_COMPACT_PROMPT.to_string());
    let session_context = sess.state().session_context.clone();
    let mut prompt = Prompt {
        model: cfg.model.clone(),
        instructions: base_instructions(cfg),
        input: context_items(
            cfg,
            ctx.project_doc.as_ref(),
            &ctx.skills,
            session_context.as_deref(),
        ),
        tools: Vec::new(),
        reasoning_effort: cfg.model_reasoning_effort,
        parallel_tool_calls: false,
        reasoning_summary: None,
        verbosity: None,
        max_output_tokens: None,
        tools_as_text: false,
        temperature: None,
        stop: Vec::new(),
    };
    let fixed = prompt_size(&prompt) + text_size(&instruction) + 200;
    let estimator = sess.state().estimator;
    let sizes: Vec<usize> = items.iter().map(item_size).collect();
    let mut total: usize = fixed + sizes.iter().sum::<usize>();
    let fits = |total: usize| estimator.tokens(total) <= target;
    let mut left_out = LeftOut::default();
    let mut sizes = sizes;
    // Blank the oldest tool outputs first: they are the bulk, and the calls still show
    // what was done.
    for (i, item) in items.iter_mut().enumerate() {
        if fits(total) {
            break;
        }
        if let ResponseItem::FunctionCallOutput { output, .. } = item {
            *output = oi_protocol::models::FunctionCallOutput::text(OMITTED_OUTPUT, true);
            let new = item_size(item);
            total = total - sizes[i] + new;
            sizes[i] = new;
            left_out.outputs += 1;
        }
    }
    // Then drop the oldest items, never leaving an output whose call is gone.
    let mut start = 0;
    while start < items.len() && (!fits(total) || is_output(&items[start])) {
        total -= sizes[start];
        start += 1;
        left_out.items += 1;
    }
    prompt.input.extend(items.drain(start..));
    let mut ask = instruction;
    if let Some(note) = left_out.note() {
        ask.push_str(&format!(
            "\n\nNote: {note}; say in the summary that the earliest part is missing."
        ));
    }
    prompt.input.push(ResponseItem::user_text(ask));
    let window = sess.context_window();
    let room = window - estimator.tokens(total);
    // `model_max_output_tokens = 0`: the user wants no bound sent at all.
    prompt.max_output_tokens = (cfg.model_max_output_tokens != Some(0))
        .then(|| {
            u32::try_from(
                (window * SUMMARY_OUTPUT_PERCENT / 100)
                    .clamp(SUMMARY_OUTPUT_MIN_TOKENS, SUMMARY_OUTPUT_MAX_TOKENS)
                    .min(room.max(SUMMARY_OUTPUT_MIN_TOKENS)),
            )
            .ok()
        })
        .flatten();
    (prompt, left_out)
}

fn is_output(item: &ResponseItem) -> bool {
    matches!(item, ResponseItem::FunctionCallOutput { .. })
}

fn item_size(item: &ResponseItem) -> usize {
    serde_json::to_string(item).map_or(0, |s| text_size(&s))
}

/// The user's messages for the new history: earlier ones, newest first until
/// [`RECENT_USER_PERCENT`] of the window is used, back in their original order; and the
/// current (last) one, whole when it fits [`CURRENT_USER_PERCENT`] of the window, else cut
/// head and tail to that. Earlier summaries are not kept: the new summary covers them.
fn recent_user_messages(
    history: &[ResponseItem],
    window: i64,
) -> (Vec<ResponseItem>, Option<ResponseItem>) {
    let to_size = |percent: i64| (window.max(0) * percent / 100 * 4) as usize;
    let mut users = history.iter().rev().filter(|item| {
        matches!(
            item,
            ResponseItem::Message {
                role: Role::User,
                ..
            }
        ) && !item
            .message_text()
            .unwrap_or_default()
            .starts_with(SUMMARY_PREFIX)
    });
    let current = users.next().map(|item| {
        let text = item.message_text().unwrap_or_default();
        let room = to_size(CURRENT_USER_PERCENT);
        if text_size(&text) > room {
            ResponseItem::user_text(oi_protocol::truncate::truncate_head_tail(&text, room))
        } else {
            item.clone()
        }
    });
    let mut room = to_size(RECENT_USER_PERCENT);
    let mut kept = Vec::new();
    for item in users {
        let size = text_size(&item.message_text().unwrap_or_default());
        if size > room {
            break;
        }
        room -= size;
        kept.push(item.clone());
    }
    kept.reverse();
    (kept, current)
}

/// `current` as it is when the history `before` + it fits `limit` tokens, else cut head
/// and tail to the room left (never below 1 KB: the task must stay recognisable).
fn fit_current_message(
    sess: &Session,
    before: &[ResponseItem],
    current: ResponseItem,
    limit: i64,
) -> ResponseItem {
    let mut with = before.to_vec();
    with.push(current.clone());
    let total = estimate_with_history(sess, &with);
    if total <= limit {
        return current;
    }
    let text = current.message_text().unwrap_or_default();
    // Cutting as many plain bytes as the excess's size removes at least that many tokens.
    let over = sess.state().estimator.size_for(total - limit);
    let room = text.len().saturating_sub(over + 64).max(1024);
    if room >= text.len() {
        return current;
    }
    ResponseItem::user_text(oi_protocol::truncate::truncate_head_tail(&text, room))
}

enum SummaryError {
    Interrupted,
    Model(ModelError),
}

/// Send the summarization request and collect the assistant's text (nothing is streamed to
/// the user: the result shows as `context_compacted`).
async fn request_summary(
    sess: &Session,
    prompt: &Prompt,
    cancel: &CancellationToken,
) -> Result<String, SummaryError> {
    let no_notice = |_| {};
    let stream = tokio::select! {
        _ = cancel.cancelled() => return Err(SummaryError::Interrupted),
        r = sess.client.stream(prompt, &no_notice) => r,
    };
    let mut stream = stream.map_err(SummaryError::Model)?;
    let mut text = String::new();
    let mut deltas = String::new();
    loop {
        let ev = tokio::select! {
            _ = cancel.cancelled() => return Err(SummaryError::Interrupted),
            ev = stream.next() => ev,
        };
        match ev {
            Some(Ok(ResponseEvent::OutputItemDone(
                item @ ResponseItem::Message {
                    role: Role::Assistant,
                    ..
                },
            ))) => {
                if let Some(t) = item.message_text() {
                    text.push_str(&t);
                }
            }
            Some(Ok(ResponseEvent::OutputTextDelta(d))) => deltas.push_str(&d),
            Some(Ok(ResponseEvent::Completed { .. })) => break,
            Some(Ok(_)) => {}
            Some(Err(e)) => return Err(SummaryError::Model(e)),
            None => {
                return Err(SummaryError::Model(ModelError::StreamDisconnected(
                    "the stream ended before the summary was complete".into(),
                )));
            }
        }
    }
    Ok(if text.is_empty() { deltas } else { text })
}

/// Tokens a failed request took, for learning a window from an error that does not state
/// it: the window is smaller than this request.
pub(crate) fn implied_window(prompt: &Prompt) -> i64 {
    (estimate_tokens(prompt_size(prompt)) * 9 / 10).max(1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(items: &[ResponseItem]) -> Vec<String> {
        items.iter().filter_map(|i| i.message_text()).collect()
    }

    #[test]
    fn earlier_messages_are_bounded_and_skip_old_summaries() {
        let history = vec![
            ResponseItem::user_text("first".repeat(1000)),
            ResponseItem::assistant_text("ok"),
            ResponseItem::user_text(format!("{SUMMARY_PREFIX}\nold")),
            ResponseItem::user_text("second"),
            ResponseItem::user_text("third"),
        ];
        // 15% of 8000 tokens = 4800 bytes: "first…" (5000 bytes) does not fit.
        let (earlier, current) = recent_user_messages(&history, 8000);
        assert_eq!(texts(&earlier), vec!["second"]);
        assert_eq!(
            current.and_then(|c| c.message_text()).as_deref(),
            Some("third")
        );
        let (earlier, _) = recent_user_messages(&history, 100_000);
        assert_eq!(earlier.len(), 2);
    }

    #[test]
    fn the_current_message_is_kept_whole_when_it_fits() {
        // 10,000 bytes: more than 15% of an 8000-token window, less than half of it.
        let task = format!("TASK START {} TASK END", "y".repeat(10_000));
        let history = vec![
            ResponseItem::user_text("earlier"),
            ResponseItem::assistant_text("ok"),
            ResponseItem::user_text(task.clone()),
            ResponseItem::assistant_text("working"),
        ];
        let (earlier, current) = recent_user_messages(&history, 8000);
        assert_eq!(texts(&earlier), vec!["earlier"]);
        assert_eq!(current.and_then(|c| c.message_text()), Some(task));
    }

    #[test]
    fn a_current_message_too_big_for_half_the_window_is_cut_not_dropped() {
        let history = vec![ResponseItem::user_text("x".repeat(100_000))];
        let (earlier, current) = recent_user_messages(&history, 8000);
        assert!(earlier.is_empty());
        let text = current.and_then(|c| c.message_text()).unwrap();
        assert!(text.len() <= 16_000 + 200, "{}", text.len());
    }
}
