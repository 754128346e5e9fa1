//! Supervision of turn tasks: a turn that panics (a bug in a tool, in the engine, or in a
//! dependency) must still end, with `error` + `task_complete`, and free its thread.
//!
//! Without this a panic would kill the turn task silently: `active_turn` would stay set, every
//! later input would be queued as steering for a turn that no longer runs, and a front end
//! waiting for the turn's end (e.g. `interpreter exec`) would wait forever.

use crate::session::Session;
use oi_protocol::models::{FunctionCallOutput, ResponseItem};
use oi_protocol::protocol::{ErrorInfo, UserMessageEvent};
use std::collections::HashSet;
use std::sync::Arc;
use tokio::task::{JoinError, JoinHandle};
use tokio_util::sync::CancellationToken;

/// Output recorded for a call the crashed turn started but never answered, so the history
/// stays valid (every call has an output) for the next request.
const CRASHED_CALL_OUTPUT: &str = "not run: the turn stopped because of an internal error";

/// Spawn the turn and a supervisor that turns a crash into a proper end of turn. The returned
/// handle completes after the turn *and* its cleanup, so a shutdown that awaits it sees a
/// closed turn either way.
pub(crate) fn spawn_turn(
    sess: Arc<Session>,
    turn_id: String,
    cancel: CancellationToken,
    user_message: UserMessageEvent,
) -> JoinHandle<()> {
    let turn = crate::turn::run_turn(sess.clone(), turn_id.clone(), cancel, user_message);
    spawn_supervised(sess, turn_id, turn)
}

/// Spawn any task that holds the thread's active turn (a turn, `Op::Compact`) under the
/// same supervision: a crash ends the turn properly and frees the thread.
pub(crate) fn spawn_supervised(
    sess: Arc<Session>,
    turn_id: String,
    task: impl std::future::Future<Output = ()> + Send + 'static,
) -> JoinHandle<()> {
    let turn = tokio::spawn(task);
    tokio::spawn(async move {
        if let Err(e) = turn.await {
            end_crashed_turn(&sess, &turn_id, e).await;
        }
    })
}

async fn end_crashed_turn(sess: &Session, turn_id: &str, e: JoinError) {
    let reason = describe(e);
    tracing::error!(turn_id, "turn task stopped unexpectedly: {reason}");
    let still_active = sess
        .state()
        .active_turn
        .as_ref()
        .is_some_and(|t| t.id == turn_id);
    if !still_active {
        // It crashed after emitting its own end (e.g. while flushing): nothing to close.
        return;
    }
    let unanswered = unanswered_calls(&sess.state().history);
    sess.push_history(
        turn_id,
        unanswered
            .into_iter()
            .map(|call_id| ResponseItem::FunctionCallOutput {
                call_id,
                output: FunctionCallOutput::text(CRASHED_CALL_OUTPUT, false),
            })
            .collect(),
    )
    .await;
    let outcome = crate::turn::TurnOutcome::Failed {
        message: format!(
            "internal error: this turn stopped unexpectedly ({reason}). The thread is still \
             usable; please report this as a bug."
        ),
        info: Some(ErrorInfo::Other),
        last_agent_message: None,
    };
    // The crash lost the turn's start time: no duration rather than an invented one.
    crate::turn::end_turn(sess, turn_id, outcome, None).await;
}

/// The panic message, when the payload is a string (it almost always is).
fn describe(e: JoinError) -> String {
    if !e.is_panic() {
        return "the task was cancelled".into();
    }
    let payload = e.into_panic();
    if let Some(s) = payload.downcast_ref::<&str>() {
        format!("panic: {s}")
    } else if let Some(s) = payload.downcast_ref::<String>() {
        format!("panic: {s}")
    } else {
        "panic".into()
    }
}

/// Call ids of function calls in `history` that have no output.
fn unanswered_calls(history: &[ResponseItem]) -> Vec<String> {
    let answered: HashSet<&str> = history
        .iter()
        .filter_map(|i| match i {
            ResponseItem::FunctionCallOutput { call_id, .. } => Some(call_id.as_str()),
            _ => None,
        })
        .collect();
    history
        .iter()
        .filter_map(|i| match i {
            ResponseItem::FunctionCall { call_id, .. } if !answered.contains(call_id.as_str()) => {
                Some(call_id.clone())
            }
            _ => None,
        })
        .collect()
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::{Thread, ThreadManager, ThreadManagerOptions};
    use oi_protocol::config_types::{AskForApproval, SandboxMode, WireApi};
    use oi_protocol::models::ResponseItem;
    use oi_protocol::protocol::{Event, EventMsg, Op, TurnOverrides};
    use oi_protocol::user_input::UserInput;
    use oi_test_support::{MockModelServer, MockResponse, MockScript, MockTurn};
    use std::time::Duration;

    /// Name of a tool that exists only in unit tests and panics with its arguments.
    pub(crate) const PANICKING_TOOL: &str = "__test_panic";

    fn config(mock: &MockModelServer, home: &std::path::Path) -> oi_config::Config {
        std::fs::write(
            home.join("config.toml"),
            mock.config_toml("mock", WireApi::Chat),
        )
        .unwrap();
        oi_config::load_config(oi_config::ConfigLoadOptions {
            home: Some(home.to_path_buf()),
            overrides: oi_config::ConfigOverrides {
                cwd: Some(home.to_path_buf()),
                sandbox_mode: Some(SandboxMode::DangerFullAccess),
                approval_policy: Some(AskForApproval::Never),
                ..Default::default()
            },
            ..Default::default()
        })
        .unwrap()
        .config
    }

    async fn run_turn(thread: &Thread, text: &str) -> Vec<Event> {
        run_op(
            thread,
            Op::UserInput {
                items: vec![UserInput::text(text)],
                overrides: TurnOverrides::default(),
            },
        )
        .await
    }

    /// Submits `op` and collects its events up to the end of its turn.
    async fn run_op(thread: &Thread, op: Op) -> Vec<Event> {
        let mut events = thread.subscribe();
        let id = thread.submit(op).await.unwrap();
        let mut out = Vec::new();
        loop {
            let ev = tokio::time::timeout(Duration::from_secs(60), events.next())
                .await
                .expect("the turn never ended")
                .expect("thread closed");
            let end = ev.id == id && ev.msg.ends_turn();
            out.push(ev);
            if end {
                return out;
            }
        }
    }

    fn errors(events: &[Event]) -> Vec<String> {
        events
            .iter()
            .filter_map(|e| match &e.msg {
                EventMsg::Error(err) => Some(err.message.clone()),
                _ => None,
            })
            .collect()
    }

    #[tokio::test]
    async fn a_panicking_tool_ends_the_turn_and_frees_the_thread() {
        let mock = MockModelServer::start(MockScript::turns([
            MockTurn::tool_call(PANICKING_TOOL, serde_json::json!({"boom": 1})),
            MockTurn::text("still here"),
        ]))
        .await
        .unwrap();
        let home = tempfile::tempdir().unwrap();
        let m = ThreadManager::new(ThreadManagerOptions {
            source: oi_thread_store::SessionSource::Exec,
            persist: false,
        });
        let t = m.start_thread(config(&mock, home.path())).await.unwrap();
        let events = run_turn(&t.thread, "crash please").await;
        let last = events.last().unwrap();
        assert!(matches!(last.msg, EventMsg::TaskComplete(_)), "{last:?}");
        let errs = errors(&events);
        assert_eq!(errs.len(), 1, "{events:?}");
        assert!(errs[0].contains("internal error"), "{errs:?}");
        assert!(
            errs[0].contains("boom"),
            "the panic message is reported: {errs:?}"
        );
        assert!(
            !t.thread.is_busy(),
            "the crashed turn still holds the thread"
        );
        // The unanswered call got an output, so the next request has a valid history.
        let history = t.thread.history();
        let answered = history.iter().any(|i| {
            matches!(i, ResponseItem::FunctionCallOutput { output, .. }
                if output.success == Some(false))
        });
        assert!(answered, "{history:?}");

        let events = run_turn(&t.thread, "again").await;
        assert!(errors(&events).is_empty(), "{events:?}");
        let done = events.iter().find_map(|e| match &e.msg {
            EventMsg::TaskComplete(c) => c.last_agent_message.clone(),
            _ => None,
        });
        assert_eq!(done.as_deref(), Some("still here"));
        m.shutdown_all().await;
    }

    #[tokio::test]
    async fn a_compaction_that_panics_ends_and_frees_the_thread() {
        let mock = MockModelServer::start(MockScript::turns([
            MockTurn::text("first answer"),
            // The summary: a test-only marker makes compaction panic after receiving it.
            MockTurn::text(PANICKING_SUMMARY),
            MockTurn::text("still here"),
        ]))
        .await
        .unwrap();
        let home = tempfile::tempdir().unwrap();
        let m = ThreadManager::new(ThreadManagerOptions {
            source: oi_thread_store::SessionSource::Exec,
            persist: false,
        });
        let t = m.start_thread(config(&mock, home.path())).await.unwrap();
        run_turn(&t.thread, "hello").await;
        let events = run_op(&t.thread, Op::Compact).await;
        let errs = errors(&events);
        assert!(
            errs.iter().any(|e| e.contains("internal error")),
            "{events:?}"
        );
        assert!(
            !t.thread.is_busy(),
            "the crashed compaction still holds the thread"
        );
        let events = run_turn(&t.thread, "again").await;
        assert!(errors(&events).is_empty(), "{events:?}");
        m.shutdown_all().await;
    }

    /// A summary text that makes compaction panic (unit tests only).
    pub(crate) const PANICKING_SUMMARY: &str = "__test_panic_in_compaction";

    /// A 429 whose `retry-after-ms` cannot be represented as a `Duration` used to panic the
    /// turn task and leave the thread busy forever.
    #[tokio::test]
    async fn an_absurd_retry_after_ms_fails_the_turn_cleanly() {
        let mock = MockModelServer::start(MockScript::new(vec![
            MockResponse::rate_limited_ms("1e30"),
            MockTurn::text("after").into(),
        ]))
        .await
        .unwrap();
        let home = tempfile::tempdir().unwrap();
        let m = ThreadManager::new(ThreadManagerOptions {
            source: oi_thread_store::SessionSource::Exec,
            persist: false,
        });
        let t = m.start_thread(config(&mock, home.path())).await.unwrap();
        let events = run_turn(&t.thread, "hi").await;
        assert!(matches!(
            events.last().unwrap().msg,
            EventMsg::TaskComplete(_)
        ));
        let errs = errors(&events);
        assert_eq!(errs.len(), 1, "{events:?}");
        assert!(errs[0].contains("429"), "{errs:?}");
        assert!(!errs[0].contains("internal error"), "{errs:?}");
        assert!(!t.thread.is_busy());
        let events = run_turn(&t.thread, "again").await;
        assert!(errors(&events).is_empty(), "{events:?}");
        m.shutdown_all().await;
    }
}
