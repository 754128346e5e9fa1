//! `SessionStart` and `Stop` hooks: observers of a thread, run by a subscriber of its events
//! (as `notify` is), so the turn never waits for them. `SessionStart` runs when the thread
//! starts (`source`: `startup`, or `resume` for a thread with history), `Stop` after each
//! turn that completed, with the model's last answer. A thread that shuts down waits for the
//! hooks still running, each at most its own `timeout` (under `exec` the process exits right
//! after the turn, and a `Stop` hook must get to run).

use super::{HookEnv, HookResult, RunReport, payload, run};
use crate::session::Session;
use oi_config::hooks::{HookCommand, HookEvent};
use oi_protocol::protocol::{EventMsg, HookOutputKind, HookRunStatus};
use serde_json::{Value, json};
use std::sync::{Arc, Weak};
use tokio_util::sync::CancellationToken;

/// Starts the watcher when the session has `SessionStart` or `Stop` hooks.
pub(crate) fn watch(sess: &Arc<Session>) -> Option<tokio::task::JoinHandle<()>> {
    let config = sess.settings();
    if !config.hooks.has(HookEvent::SessionStart) && !config.hooks.has(HookEvent::Stop) {
        return None;
    }
    let source = if sess.state().history.is_empty() {
        "startup"
    } else {
        "resume"
    };
    let mut events = sess.subscribe();
    let session_id = sess.id.to_string();
    // Weak: the watcher reports runs while the session lives, and never keeps it alive.
    let sess = Arc::downgrade(sess);
    Some(tokio::spawn(async move {
        let cancel = CancellationToken::new();
        let mut start = payload::common(&session_id, &config, HookEvent::SessionStart);
        start.insert("source".into(), json!(source));
        run_all(
            &sess,
            None,
            &config,
            HookEvent::SessionStart,
            Value::Object(start),
            &cancel,
        )
        .await;
        while let Some(ev) = events.next().await {
            match ev.msg {
                EventMsg::ShutdownComplete => break,
                EventMsg::TaskComplete(done) => {
                    // Settings may change between turns; hooks are the session's own.
                    let mut stop = payload::common(&session_id, &config, HookEvent::Stop);
                    stop.insert("turn_id".into(), json!(done.turn_id));
                    stop.insert("stop_hook_active".into(), json!(false));
                    stop.insert(
                        "last_assistant_message".into(),
                        json!(done.last_agent_message),
                    );
                    let turn = Some(done.turn_id.as_str());
                    run_all(
                        &sess,
                        turn,
                        &config,
                        HookEvent::Stop,
                        Value::Object(stop),
                        &cancel,
                    )
                    .await;
                }
                _ => {}
            }
        }
    }))
}

async fn run_all(
    sess: &Weak<Session>,
    turn_id: Option<&str>,
    config: &oi_config::Config,
    event: HookEvent,
    payload: Value,
    cancel: &CancellationToken,
) {
    let hooks: Vec<&HookCommand> = config.hooks.matching(event, None).collect();
    if hooks.is_empty() {
        return;
    }
    let env = HookEnv::from_config(config);
    for hook in hooks {
        let report = sess.upgrade().map(|s| RunReport::start(&s, turn_id, hook));
        let (status, said) = match run(hook, &payload, &env, cancel).await {
            HookResult::Ok { .. } => (HookRunStatus::Completed, None),
            // An observer has nothing to block.
            HookResult::Block { reason } => {
                tracing::warn!(
                    "{} exited with 2 (nothing to block): {reason}",
                    hook.describe()
                );
                (
                    HookRunStatus::Completed,
                    Some((HookOutputKind::Feedback, reason)),
                )
            }
            HookResult::Failed { warning } => {
                tracing::warn!("{warning}");
                (
                    HookRunStatus::Failed,
                    Some((HookOutputKind::Error, warning)),
                )
            }
        };
        if let (Some(report), Some(s)) = (report, sess.upgrade()) {
            report.finish(&s, status, said);
        }
    }
}
