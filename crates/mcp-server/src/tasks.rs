//! Long turns as tasks: the Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663).
//!
//! A 2026-07-28 `codex` / `codex-reply` call whose request declares the extension gets a
//! task at once (`resultType: "task"`): the thread and its turn are started, the turn's
//! start is made durable (so any server sharing the store finds it), and the turn runs on
//! in this process, followed by nothing but the server itself: it outlives the request and
//! the connection. The task id is sealed ([`crate::sealing`]): it names the thread, the
//! turn and the principal it was given to, so any server of a fleet that shares the key and
//! the store answers for it, and nobody else's id can be guessed or changed.
//!
//! What a task is comes from its turn's state in the store ([`TurnState`]), never from
//! memory, so every server reports the same:
//!
//! | turn | task |
//! |---|---|
//! | running (on a server that holds its thread) | `working`, the status message says what it does |
//! | parked at approvals | `input_required`, the approvals as input requests |
//! | completed, or failed (a model error) | `completed`: the result a plain call returns (`isError` for a failure) |
//! | interrupted (`tasks/cancel`), replaced, expired at its park | `cancelled` |
//! | orphaned (its server died mid-turn) | `failed` (-32603) |
//!
//! `tasks/update` answers the approvals (all of a park at once) and resumes the turn on the
//! server that gets it; `tasks/cancel` interrupts it (a parked or orphaned turn anywhere; a
//! running one on the server that runs it).

use crate::engine::{Engine, ResumeError, TurnParkedEvent, TurnState};
use crate::mrtr::{self, InputResponses};
use crate::protocol::codex::tool_result;
use crate::protocol::input::{TaskError, TaskView};
use crate::sealing::{OpenError, Sealer, TASK_TTL, TaskHandle};
use crate::tool_runner::{CallEnd, CallEnv, Started, rfc3339, settled};
use oi_jsonrpc::{INTERNAL_ERROR, RpcError};
use oi_protocol::protocol::{EventMsg, Op, Submission};
use rmcp::model::{Task, TaskStatus};
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// How often a client should poll `tasks/get`.
pub(crate) const POLL_INTERVAL_MS: u64 = 1000;

/// How long `tasks/cancel` waits for a parked turn it interrupted to end.
const CANCEL_GRACE: Duration = Duration::from_secs(30);

/// What starting a task came to.
pub(crate) enum Created {
    /// The task, its turn running here.
    Task(Task),
    /// No task: the call ended before one could be made (bad arguments, an unknown thread,
    /// a turn the store could not save), with this end.
    Ended(CallEnd),
}

/// Starts the call's turn (`start`: its `codex` or `codex-reply` start on `env`) as a
/// task: returns once the turn is in the store, and follows it in the background. A turn
/// whose start the store does not have is followed here instead, as a plain call.
pub(crate) async fn create<F>(mut env: CallEnv, sealer: &Sealer, start: F) -> Created
where
    F: AsyncFnOnce(&mut CallEnv) -> Result<Started, rmcp::model::CallToolResult>,
{
    let mut started = match start(&mut env).await {
        Ok(s) => s,
        Err(result) => return Created::Ended(CallEnd::Result(result)),
    };
    let thread = started.thread.id();
    if !started.until_stored().await {
        tracing::warn!(
            "thread {thread}: the turn's start is not in the store; answering the call without a task"
        );
        let end = env.follow(started).await;
        return Created::Ended(env.finish(end).await);
    }
    let now = chrono::Utc::now();
    let handle = TaskHandle {
        thread,
        turn: started.sub_id.clone(),
        created_at_ms: now.timestamp_millis(),
        call: env.ctx.id.to_string(),
    };
    let task_id = sealer.seal_task(&handle);
    tracing::info!("thread {thread}: turn {} runs as a task", handle.turn);
    follow_in_background(env, started);
    let at = iso(now.timestamp_millis());
    Created::Task(
        Task::new(task_id, TaskStatus::Working, at.clone(), at)
            .with_status_message("the turn has started")
            .with_ttl_ms(TASK_TTL.as_millis() as u64)
            .with_poll_interval_ms(POLL_INTERVAL_MS),
    )
}

/// Follows a task's turn to its end or park, telling nobody (the request that started it
/// has its answer), then lets the thread go so any server can resume or continue it.
pub(crate) fn follow_in_background(mut env: CallEnv, started: Started) {
    env.quiet = true;
    // The turn outlives its request: only the server's shutdown (which interrupts every
    // turn) or `tasks/cancel` ends it.
    env.ctx.cancel = CancellationToken::new();
    tokio::spawn(async move {
        let end = env.follow(started).await;
        env.finish(end).await;
    });
}

/// The task behind `task_id`, or the error a client gets for an id that is not one.
fn open(sealer: &Sealer, method: &str, task_id: &str) -> Result<TaskHandle, RpcError> {
    sealer.open_task(task_id).map_err(|e| {
        let why = match e {
            OpenError::Expired => "Task has expired (task ids are valid for 7 days)",
            OpenError::OtherPrincipal => {
                "Task not found: it belongs to another client (another token, or another user's server)"
            }
            OpenError::Forged | OpenError::OtherRequest => {
                "Task not found: the id was not issued by this server, or by a server sharing its state key (mcp_state_key_file), or it was changed"
            }
        };
        RpcError::invalid_params(method, format!("Failed to retrieve task: {why}"))
    })
}

fn iso(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .map(|t| t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true))
        .unwrap_or_default()
}

/// The state of `handle`'s turn, or `None` when the store has no such turn.
async fn state_of(
    engine: &dyn Engine,
    method: &str,
    handle: &TaskHandle,
) -> Result<Option<TurnState>, RpcError> {
    match engine.turn_state(handle.thread, handle.turn.clone()).await {
        Ok(s) => Ok(s),
        Err(crate::engine::CatalogError::NotFound(_)) => Ok(None),
        Err(e) => Err(RpcError::new(
            INTERNAL_ERROR,
            format!("{method}: cannot read the task's thread from its store: {e:?}"),
        )),
    }
}

fn not_found(method: &str, handle: &TaskHandle) -> RpcError {
    RpcError::invalid_params(
        method,
        format!(
            "Failed to retrieve task: Task not found (thread {} has no turn {}; was the thread deleted?)",
            handle.thread, handle.turn
        ),
    )
}

/// `tasks/get`: the task as its turn's store says it is now.
pub(crate) async fn get(
    engine: &dyn Engine,
    sealer: &Sealer,
    task_id: &str,
) -> Result<TaskView, RpcError> {
    const METHOD: &str = "tasks/get";
    let handle = open(sealer, METHOD, task_id)?;
    let state = match state_of(engine, METHOD, &handle).await? {
        Some(s) => s,
        None => return Err(not_found(METHOD, &handle)),
    };
    Ok(view(task_id, &handle, state))
}

/// What a task whose turn is in `state` looks like.
pub(crate) fn view(task_id: &str, handle: &TaskHandle, state: TurnState) -> TaskView {
    let created = iso(handle.created_at_ms);
    let now = iso(chrono::Utc::now().timestamp_millis());
    let task = |status: TaskStatus, message: String, updated: String| {
        Task::new(task_id, status, created.clone(), updated)
            .with_status_message(message)
            .with_ttl_ms(TASK_TTL.as_millis() as u64)
            .with_poll_interval_ms(POLL_INTERVAL_MS)
    };
    let mut v = TaskView {
        task: task(TaskStatus::Working, String::new(), now.clone()),
        input_requests: None,
        result: None,
        error: None,
    };
    match state {
        TurnState::Running { activity } => {
            v.task = task(
                TaskStatus::Working,
                activity.unwrap_or_else(|| "working".into()),
                now,
            );
        }
        TurnState::Parked(parked) => {
            v.task = task(
                TaskStatus::InputRequired,
                waiting_message(&parked),
                iso(parked.parked_at.saturating_mul(1000)),
            );
            v.input_requests = Some(mrtr::input_requests(&parked, handle.thread, &handle.call));
        }
        state @ (TurnState::Completed { .. } | TurnState::Failed { .. }) => {
            let result = match settled(handle.thread, state) {
                CallEnd::Result(r) => r,
                CallEnd::Parked { .. } | CallEnd::NeedsElicitation { .. } => {
                    tool_result(Some(handle.thread), String::new(), true)
                }
            };
            v.task = task(TaskStatus::Completed, "the turn is over".into(), now);
            v.result = Some(result);
        }
        TurnState::Aborted { reason } => {
            let why = match reason {
                oi_protocol::protocol::TurnAbortReason::Interrupted => "the turn was interrupted",
                oi_protocol::protocol::TurnAbortReason::Replaced => {
                    "another turn of the thread replaced it"
                }
            };
            v.task = task(TaskStatus::Cancelled, why.into(), now);
        }
        TurnState::Expired { expires_at } => {
            v.task = task(
                TaskStatus::Cancelled,
                format!(
                    "nobody answered its approval before {}; nothing it asked for ran",
                    rfc3339(expires_at)
                ),
                iso(expires_at.saturating_mul(1000)),
            );
        }
        TurnState::Orphaned => {
            let message = "the server running the turn stopped before the turn finished; the thread is kept: continue it with codex-reply".to_string();
            v.task = task(TaskStatus::Failed, message.clone(), now);
            v.error = Some(TaskError {
                code: INTERNAL_ERROR,
                message,
            });
        }
    }
    v
}

/// The status message of a task waiting at `parked`.
fn waiting_message(parked: &TurnParkedEvent) -> String {
    let what: Vec<String> = parked
        .requests
        .iter()
        .map(|r| match r {
            oi_protocol::protocol::ParkedRequest::Exec(e) => format!(
                "`{}`",
                oi_protocol::parse_command::display_command(&e.command)
            ),
            oi_protocol::protocol::ParkedRequest::Patch(p) => {
                format!("changes to {} file(s)", p.changes.len())
            }
        })
        .collect();
    format!("waiting for approval: {}", what.join(", "))
}

/// `tasks/update`: answers the task's approvals and resumes its turn here. Answers to
/// anything the task does not wait for now are ignored, as the spec asks; an answer that
/// leaves some of a park's requests unanswered is refused (a park resumes with all of its
/// answers at once).
pub(crate) async fn update(
    env: CallEnv,
    sealer: &Sealer,
    task_id: &str,
    responses: &InputResponses,
) -> Result<(), RpcError> {
    const METHOD: &str = "tasks/update";
    let engine = env.engine.clone();
    let handle = open(sealer, METHOD, task_id)?;
    let Some(state) = state_of(engine.as_ref(), METHOD, &handle).await? else {
        return Err(not_found(METHOD, &handle));
    };
    let TurnState::Parked(parked) = state else {
        tracing::debug!(
            "{METHOD}: task of turn {} waits for nothing; ignored",
            handle.turn
        );
        return Ok(());
    };
    let ids = mrtr::request_ids(&parked);
    let answers = match mrtr::answers(&parked.park_id, &ids, responses) {
        Ok(a) => a,
        Err(missing) if missing.len() == ids.len() => {
            tracing::debug!("{METHOD}: no answer to the current park; ignored");
            return Ok(());
        }
        Err(missing) => {
            return Err(RpcError::invalid_params(
                METHOD,
                format!(
                    "the task waits for every one of its input requests to be answered at once; missing: {}",
                    missing.join(", ")
                ),
            ));
        }
    };
    let resumed = engine
        .resume_parked(handle.thread, handle.turn.clone(), parked.park_id, answers)
        .await;
    match resumed {
        Ok(resumed) => {
            let started = Started {
                thread: resumed.handle.thread,
                approval_timeout: resumed.handle.approval_timeout,
                events: resumed.turn,
                sub_id: handle.turn,
            };
            follow_in_background(env, started);
            Ok(())
        }
        // Answered already (here or elsewhere): nothing outstanding was answered.
        Err(ResumeError::NotParked(why)) => {
            tracing::debug!("{METHOD}: {why}; ignored");
            Ok(())
        }
        Err(ResumeError::Expired(why)) | Err(ResumeError::BadAnswers(why)) => {
            Err(RpcError::invalid_params(METHOD, why))
        }
        Err(ResumeError::NotFound(_)) => Err(not_found(METHOD, &handle)),
        Err(ResumeError::Busy(why)) => Err(RpcError::new(
            INTERNAL_ERROR,
            format!(
                "{METHOD}: another server is working on the task's thread right now ({why}); send the answers again"
            ),
        )),
        Err(ResumeError::Failed(why)) => Err(RpcError::new(
            INTERNAL_ERROR,
            format!("{METHOD}: could not resume the task's turn: {why}"),
        )),
    }
}

/// `tasks/cancel`: interrupts the task's turn. A running turn is interrupted by the server
/// that runs it; a parked (or orphaned) one by whichever server gets the request: it loads
/// the thread, ends the turn, and lets the thread go.
pub(crate) async fn cancel(
    engine: Arc<dyn Engine>,
    sealer: &Sealer,
    task_id: &str,
) -> Result<(), RpcError> {
    const METHOD: &str = "tasks/cancel";
    let handle = open(sealer, METHOD, task_id)?;
    let Some(state) = state_of(engine.as_ref(), METHOD, &handle).await? else {
        return Err(not_found(METHOD, &handle));
    };
    if !matches!(
        state,
        TurnState::Running { .. } | TurnState::Parked(_) | TurnState::Orphaned
    ) {
        // Over already: nothing to cancel (the spec lets a task end otherwise).
        return Ok(());
    }
    let thread = handle.thread;
    let opened = match engine.open_thread(thread).await {
        Ok(h) => h,
        Err(crate::engine::EngineError::Busy(why)) => {
            return Err(RpcError::new(
                INTERNAL_ERROR,
                format!(
                    "{METHOD}: the task's turn runs on another server of the fleet, which holds its thread ({why}); send tasks/cancel to that server (route tasks/* by their Mcp-Name header), or cancel once the turn waits for approval"
                ),
            ));
        }
        Err(crate::engine::EngineError::NotFound(_)) => return Err(not_found(METHOD, &handle)),
        Err(e) => {
            return Err(RpcError::new(
                INTERNAL_ERROR,
                format!("{METHOD}: cannot open the task's thread: {e}"),
            ));
        }
    };
    let running_here = opened.thread.active_turn().as_deref() == Some(handle.turn.as_str());
    let parked = matches!(state, TurnState::Parked(_));
    if !running_here && !parked {
        // Orphaned: loading the thread closed the turn as interrupted. Or it ended
        // meanwhile. Either way the thread was loaded for this alone.
        engine.release_thread(thread).await;
        return Ok(());
    }
    // Watching from before the interrupt, so its end is not missed.
    let mut events = engine.watch_thread(thread);
    let sub = Submission {
        id: handle.turn.clone(),
        op: Op::Interrupt,
    };
    opened.thread.submit(sub).await.map_err(|e| {
        RpcError::new(
            INTERNAL_ERROR,
            format!("{METHOD}: could not interrupt the turn: {e}"),
        )
    })?;
    if running_here {
        // The task's follower sees the turn end and lets the thread go.
        return Ok(());
    }
    // A parked turn ends now (its end recorded before it is published); the thread was
    // loaded for this and is let go again.
    if let Some(events) = events.as_mut() {
        let ended = tokio::time::timeout(CANCEL_GRACE, async {
            while let Some(ev) = events.next_event().await {
                if let EventMsg::TurnAborted(a) = &ev.msg
                    && a.turn_id.as_deref() == Some(handle.turn.as_str())
                {
                    return true;
                }
            }
            false
        })
        .await;
        if !matches!(ended, Ok(true)) {
            tracing::warn!("thread {thread}: the cancelled task's turn did not report its end");
        }
    }
    engine.release_thread(thread).await;
    Ok(())
}
