//! How a turn starts: a new turn, the continuation of a parked one, and `Op::Compact`.

use super::LoopState;
use super::end::{TurnOutcome, end_turn, finish};
use super::now_unix;
use super::steps::turn_loop;
use crate::compact::{CompactError, compact};
use crate::session::Session;
use oi_protocol::protocol::{ErrorInfo, EventMsg, TaskStartedEvent, UserMessageEvent};
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

/// Start a turn (the caller has already installed `ActiveTurn`).
pub(crate) async fn run_turn(
    sess: Arc<Session>,
    turn_id: String,
    cancel: CancellationToken,
    user_message: UserMessageEvent,
) {
    let started = Instant::now();
    sess.record_turn_context(&turn_id);
    prepare(&sess, &cancel).await;
    announce_start(&sess, &turn_id);
    sess.send(&turn_id, EventMsg::UserMessage(user_message));
    // The first turn of a thread waits for its `SessionStart` hooks: what they say is
    // context for its first request.
    crate::hooks::lifecycle::session_start(&sess, &turn_id, &cancel).await;
    crate::tools::fetch_pending_tasks(&sess, &turn_id, &cancel).await;
    let result = turn_loop(
        &sess,
        &turn_id,
        &cancel,
        started,
        LoopState::default(),
        None,
    )
    .await;
    finish(&sess, &turn_id, result, started).await;
}

/// The continuation of a parked turn that was resumed (`parking::resume` made it active
/// again with its answers): runs the calls it waited on, then goes on with its loop under
/// the same turn id. It announces nothing of its own: the turn started long ago.
pub(crate) async fn run_resumed_turn(
    sess: Arc<Session>,
    turn_id: String,
    cancel: CancellationToken,
    resumed: super::parking::Resumed,
) {
    prepare(&sess, &cancel).await;
    let started = resumed.started;
    crate::hooks::lifecycle::session_start(&sess, &turn_id, &cancel).await;
    // MCP tasks an earlier session left are fetched here too: the turn may have called
    // one before it parked.
    crate::tools::fetch_pending_tasks(&sess, &turn_id, &cancel).await;
    let result = turn_loop(
        &sess,
        &turn_id,
        &cancel,
        started,
        resumed.loop_state,
        Some(resumed.calls),
    )
    .await;
    finish(&sess, &turn_id, result, started).await;
}

/// `Op::Compact`: a turn of its own that only compacts (`task_started`,
/// `context_compacted`, `task_complete`; `error` first when it fails).
pub(crate) async fn run_compact_turn(
    sess: Arc<Session>,
    turn_id: String,
    cancel: CancellationToken,
) {
    let started = Instant::now();
    prepare(&sess, &cancel).await;
    announce_start(&sess, &turn_id);
    let has_history = !sess.state().history.is_empty();
    let result = if has_history {
        compact(&sess, &turn_id, &cancel, false).await
    } else {
        Err(CompactError::Failed(
            "nothing to compact: the conversation is empty".into(),
        ))
    };
    let outcome = match result {
        Err(CompactError::Interrupted) => TurnOutcome::Interrupted,
        Err(CompactError::Failed(message)) => TurnOutcome::Failed {
            message,
            info: Some(ErrorInfo::Other),
            last_agent_message: None,
        },
        Ok(()) => TurnOutcome::Completed {
            last_agent_message: None,
        },
    };
    end_turn(&sess, &turn_id, outcome, Some(started)).await;
}

/// What every turn reads before its first request: the project doc and the skills, the
/// context it runs with (fixed from here on), and the server's window when the server
/// tells it.
async fn prepare(sess: &Session, cancel: &CancellationToken) {
    sess.load_project_doc().await;
    crate::skills::refresh::for_turn(sess).await;
    sess.begin_turn_context();
    sess.lookup_server_window(cancel).await;
}

/// `task_started`, with the window the turn works in.
fn announce_start(sess: &Session, turn_id: &str) {
    let (window, source) = sess.context_window_and_source();
    sess.send(
        turn_id,
        EventMsg::TaskStarted(TaskStartedEvent {
            turn_id: turn_id.to_string(),
            started_at: Some(now_unix()),
            model_context_window: Some(window),
            model_context_window_source: Some(source),
            collaboration_mode_kind: "default".into(),
        }),
    );
}
