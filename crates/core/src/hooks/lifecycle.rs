//! `SessionStart` and `Stop` hooks, run by the turn itself.
//!
//! * `SessionStart` runs once per thread, when its first turn starts and before that turn's
//!   first request (`source`: `startup`, or `resume` for a thread with history). What it
//!   prints — plain text, or `{"hookSpecificOutput":{"additionalContext":…}}` — is context
//!   the model reads with every request of the session (bounded head+tail).
//! * `Stop` runs when a turn has its answer, before `task_complete`. A hook that blocks (exit
//!   2 with a reason on stderr, or `{"decision":"block","reason":…}`) sends the model back to
//!   work with the reason as a user message, at most [`MAX_STOP_CONTINUATIONS`] times a turn.
//!
//! Each run is bounded by its own `timeout`, and an interrupt stops it with the turn.

use super::{HookEnv, HookResult, RunReport, answer_of, payload, run, warn};
use crate::session::Session;
use oi_config::hooks::{HookCommand, HookEvent};
use oi_protocol::protocol::{HookOutputKind, HookRunStatus};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

/// How much `SessionStart` context (all hooks together) reaches the model.
pub(crate) const SESSION_CONTEXT_MAX_BYTES: usize = 4 * 1024;
/// How many times `Stop` hooks may send one turn back to work; then the turn ends.
pub(crate) const MAX_STOP_CONTINUATIONS: usize = 3;

/// Runs the `SessionStart` hooks if this thread has not run them yet, and keeps what they
/// said for the model (`SessionState::session_context`). Called at the start of a turn,
/// before its first request.
pub(crate) async fn session_start(sess: &Session, turn_id: &str, cancel: &CancellationToken) {
    let Some(source) = sess.state().session_start.take() else {
        return;
    };
    let ctx = sess.turn_context();
    let config = &ctx.config;
    let hooks: Vec<HookCommand> = config
        .hooks
        .matching(HookEvent::SessionStart, None)
        .cloned()
        .collect();
    if hooks.is_empty() {
        return;
    }
    let env = HookEnv::from_config(config);
    let mut event = payload::common(&sess.id.to_string(), config, HookEvent::SessionStart);
    event.insert("source".into(), json!(source));
    let event = Value::Object(event);
    let mut contexts = Vec::new();
    for hook in &hooks {
        let report = RunReport::start(sess, Some(turn_id), hook);
        match run(hook, &event, &env, cancel).await {
            HookResult::Ok { stdout } => {
                let context = context_of(&stdout);
                let said: Vec<_> = context
                    .iter()
                    .map(|c| (HookOutputKind::Context, c.clone()))
                    .collect();
                contexts.extend(context);
                report.finish(sess, HookRunStatus::Completed, said);
            }
            // Nothing to block at the start: what it said is only shown.
            HookResult::Block { reason } => {
                warn(
                    sess,
                    turn_id,
                    format!(
                        "{} exited with 2 (nothing to block; its output is not added): {reason}",
                        hook.describe()
                    ),
                );
                report.finish(
                    sess,
                    HookRunStatus::Completed,
                    [(HookOutputKind::Feedback, reason)],
                );
            }
            HookResult::Failed { warning } => super::failed(sess, turn_id, report, warning),
        }
    }
    if !contexts.is_empty() {
        let text = oi_protocol::truncate::truncate_head_tail(
            &contexts.join("\n\n"),
            SESSION_CONTEXT_MAX_BYTES,
        );
        sess.state().session_context = Some(text);
    }
}

/// The context a `SessionStart` hook's stdout gives: `additionalContext` of a JSON answer,
/// else the text itself (a JSON answer without it gives none).
fn context_of(stdout: &str) -> Option<String> {
    let text = match answer_of(stdout) {
        Some(answer) => answer
            .get("hookSpecificOutput")
            .and_then(|s| s.get("additionalContext"))
            .and_then(Value::as_str)?
            .to_string(),
        None => stdout.to_string(),
    };
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// Runs the `Stop` hooks of a turn that has its answer. `continuations` is how many times
/// Stop hooks sent this turn back to work already. `Some` is the message that sends it back
/// again (the hooks' reasons); `None` lets the turn end.
pub(crate) async fn stop(
    sess: &Session,
    turn_id: &str,
    last_agent_message: Option<&str>,
    continuations: usize,
    cancel: &CancellationToken,
) -> Option<String> {
    let ctx = sess.turn_context();
    let config = &ctx.config;
    let hooks: Vec<HookCommand> = config
        .hooks
        .matching(HookEvent::Stop, None)
        .cloned()
        .collect();
    if hooks.is_empty() {
        return None;
    }
    let env = HookEnv::from_config(config);
    let mut event = payload::common(&sess.id.to_string(), config, HookEvent::Stop);
    event.insert("turn_id".into(), json!(turn_id));
    event.insert("stop_hook_active".into(), json!(continuations > 0));
    event.insert("last_assistant_message".into(), json!(last_agent_message));
    let event = Value::Object(event);
    let mut reasons = Vec::new();
    for hook in &hooks {
        let report = RunReport::start(sess, Some(turn_id), hook);
        let reason = match run(hook, &event, &env, cancel).await {
            HookResult::Ok { stdout } => answer_of(&stdout).and_then(|a| {
                (a.get("decision").and_then(Value::as_str) == Some("block")).then(|| {
                    a.get("reason")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_string()
                })
            }),
            HookResult::Block { reason } => Some(reason),
            HookResult::Failed { warning } => {
                super::failed(sess, turn_id, report, warning);
                continue;
            }
        };
        let Some(reason) = reason else {
            report.finish(sess, HookRunStatus::Completed, []);
            continue;
        };
        let reason = if reason.trim().is_empty() {
            format!("{} asked you to keep working", hook.describe())
        } else {
            super::bounded(&reason)
        };
        report.finish(
            sess,
            HookRunStatus::Blocked,
            [(HookOutputKind::Feedback, reason.clone())],
        );
        reasons.push(reason);
    }
    if reasons.is_empty() {
        return None;
    }
    if continuations >= MAX_STOP_CONTINUATIONS {
        warn(
            sess,
            turn_id,
            format!(
                "a Stop hook blocked the end of this turn again; it already sent the model back \
                 to work {MAX_STOP_CONTINUATIONS} times, so the turn ends now: {}",
                reasons.join("; ")
            ),
        );
        return None;
    }
    Some(format!(
        "A Stop hook did not let this turn end yet: {}",
        reasons.join("\n")
    ))
}

#[cfg(test)]
mod tests {
    use super::context_of;

    #[test]
    fn session_start_context_is_the_text_or_the_json_additional_context() {
        assert_eq!(
            context_of("use pnpm, not npm\n").as_deref(),
            Some("use pnpm, not npm")
        );
        assert_eq!(
            context_of(r#"{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"branch: main"}}"#)
                .as_deref(),
            Some("branch: main")
        );
        assert_eq!(context_of(r#"{"continue": true}"#), None);
        assert_eq!(context_of("  \n"), None);
    }
}
