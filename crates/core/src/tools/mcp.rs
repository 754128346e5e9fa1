//! Calling a tool of a configured MCP server: approval by the server's mode and the tool's
//! annotations, `mcp_tool_call_begin/progress/end` events, timeout/interrupt (handled by the
//! connection manager), and conversion of the result for the model.

use super::call::{ToolCall, ToolOutcome};
use crate::approval::{Asked, ExecApprovalAsk, ask_exec_approval};
use crate::session::Session;
use oi_mcp_client::{McpToolInfo, call_result_to_output, needs_approval};
use oi_protocol::protocol::{
    EventMsg, McpCallTask, McpCallTaskState, McpInvocation, McpToolCallBeginEvent,
    McpToolCallEndEvent, McpToolCallProgressEvent, ReviewDecision,
};
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

pub(crate) async fn handle(
    sess: &Arc<Session>,
    call: &ToolCall<'_>,
    info: McpToolInfo,
    cancel: &CancellationToken,
) -> ToolOutcome {
    let Some(manager) = sess.mcp.clone() else {
        return ToolOutcome::err("MCP servers are not available in this thread");
    };
    let raw = call.arguments.trim();
    let arguments = match parse_arguments(call.name, raw) {
        Ok(a) => a,
        Err(e) => return e,
    };
    let invocation = McpInvocation {
        server: info.server.clone(),
        tool: info.tool.clone(),
        arguments: arguments.clone().map(serde_json::Value::Object),
    };
    sess.send(
        call.turn_id,
        EventMsg::McpToolCallBegin(McpToolCallBeginEvent {
            call_id: call.call_id.to_string(),
            invocation: invocation.clone(),
        }),
    );
    let started = Instant::now();
    let end = |result: Result<serde_json::Value, String>| {
        sess.send(
            call.turn_id,
            EventMsg::McpToolCallEnd(McpToolCallEndEvent {
                call_id: call.call_id.to_string(),
                invocation: invocation.clone(),
                duration: started.elapsed().into(),
                result,
            }),
        );
    };

    let ctx = sess.turn_context();

    let config = &ctx.config;
    match approve(sess, call, &info, raw, config, cancel).await {
        Ok(()) => {}
        // No end event: the call has not ended, it waits (its continuation begins it again).
        Err(Refusal::Parked(request)) => return ToolOutcome::parked(request, None),
        Err(Refusal::Refused(msg, abort)) => {
            end(Err(msg.to_string()));
            let mut o = ToolOutcome::err(msg);
            o.abort_turn = abort;
            return o;
        }
    }

    let (ptx, prx) = tokio::sync::mpsc::unbounded_channel();
    let (ttx, trx) = tokio::sync::mpsc::unbounded_channel();
    let forward = forward_progress(sess.clone(), call, prx, trx);
    let observer = oi_mcp_client::McpCallObserver {
        progress: Some(ptx),
        task: Some(ttx),
    };
    let result = manager
        .call_tool_observed(
            &info.server,
            &info.tool,
            arguments,
            observer,
            cancel.child_token(),
        )
        .await;
    let _ = forward.await;
    if let Err(e) = &result
        && let Some(task_id) = e.task_left_running()
    {
        note_task(
            sess,
            call.turn_id,
            call.call_id,
            task_id,
            McpCallTaskState::LeftRunning,
        );
    }
    match result {
        Ok(value) => {
            let mut output = call_result_to_output(&value, config.tool_output_max_bytes);
            let is_error = value.get("isError").and_then(|v| v.as_bool()) == Some(true);
            output.success = Some(!is_error);
            end(Ok(value));
            ToolOutcome::with_output(output)
        }
        Err(e) => {
            // The event and the model get the error's one line; the prefix is added here only.
            let msg = e.to_string();
            end(Err(msg.clone()));
            ToolOutcome::err(format!("tool call error: {msg}"))
        }
    }
}

/// The call's arguments: a JSON object, or none (empty or `null`). Anything else is the
/// model's mistake, explained.
fn parse_arguments(
    tool: &str,
    raw: &str,
) -> Result<Option<serde_json::Map<String, serde_json::Value>>, ToolOutcome> {
    if raw.is_empty() {
        return Ok(None);
    }
    match serde_json::from_str::<serde_json::Value>(raw) {
        Ok(serde_json::Value::Object(m)) => Ok(Some(m)),
        Ok(serde_json::Value::Null) => Ok(None),
        Ok(other) => Err(ToolOutcome::err(format!(
            "arguments for `{tool}` must be a JSON object, got {other}"
        ))),
        Err(e) => Err(ToolOutcome::err(format!(
            "invalid arguments for `{tool}`: {e}. Send a JSON object matching the tool's schema."
        ))),
    }
}

/// Why an MCP tool call does not run now.
enum Refusal {
    /// The message for the model, and whether the user stopped the whole turn.
    Refused(&'static str, bool),
    /// The turn parks this approval.
    Parked(oi_protocol::protocol::ParkedRequest),
}

/// Asks the user when the server's approval mode and the tool's annotations say so. The
/// exact call approved "for this session" is not asked again.
async fn approve(
    sess: &Arc<Session>,
    call: &ToolCall<'_>,
    info: &McpToolInfo,
    raw: &str,
    config: &oi_config::Config,
    cancel: &CancellationToken,
) -> Result<(), Refusal> {
    let session_key = (vec![info.qualified_name.clone(), raw.to_string()], true);
    let approved_before = sess.state().approved_commands.contains(&session_key);
    if approved_before || !needs_approval(info, config.approval_policy, &config.sandbox_policy) {
        return Ok(());
    }
    let argv = vec![info.qualified_name.clone(), raw.to_string()];
    let asked = ask_exec_approval(
        sess,
        ExecApprovalAsk {
            turn_id: call.turn_id,
            call_id: call.call_id,
            approval_id: None,
            argv: &argv,
            cwd: &config.cwd,
            reason: Some(format!(
                "Call the MCP tool `{}` of server `{}`?",
                info.tool, info.server
            )),
        },
        cancel,
    )
    .await;
    let d = match asked {
        Asked::Decided(d) => d,
        Asked::Parked(request) => return Err(Refusal::Parked(request)),
    };
    match d {
        ReviewDecision::Approved => Ok(()),
        ReviewDecision::ApprovedForSession => {
            sess.state().approved_commands.insert(session_key);
            Ok(())
        }
        ReviewDecision::Abort => Err(Refusal::Refused("user cancelled MCP tool call", true)),
        ReviewDecision::TimedOut => Err(Refusal::Refused(
            super::call::REFUSED_MCP_CALL_IN_TIME,
            false,
        )),
        _ => Err(Refusal::Refused(super::call::REFUSED_MCP_CALL, false)),
    }
}

/// Turns the server's progress notifications into `mcp_tool_call_progress` events until the
/// call ends (its senders are dropped); the one that says the server runs the call as a task
/// names the task, and is kept in the thread.
fn forward_progress(
    sess: Arc<Session>,
    call: &ToolCall<'_>,
    mut progress: tokio::sync::mpsc::UnboundedReceiver<oi_mcp_client::McpProgress>,
    mut tasks: tokio::sync::mpsc::UnboundedReceiver<oi_mcp_client::McpTaskStarted>,
) -> tokio::task::JoinHandle<()> {
    let turn_id = call.turn_id.to_string();
    let call_id = call.call_id.to_string();
    tokio::spawn(async move {
        let mut tasks_open = true;
        loop {
            tokio::select! {
                p = progress.recv() => {
                    let Some(p) = p else { break };
                    sess.send(
                        &turn_id,
                        EventMsg::McpToolCallProgress(McpToolCallProgressEvent {
                            call_id: call_id.clone(),
                            progress: p.progress,
                            total: p.total,
                            message: p.message,
                            task: None,
                        }),
                    );
                }
                t = tasks.recv(), if tasks_open => match t {
                    Some(t) => note_task(&sess, &turn_id, &call_id, &t.task_id, McpCallTaskState::Started),
                    None => tasks_open = false,
                },
            }
        }
    })
}

/// The progress event that names the task behind a call, and where it stands (kept in the
/// thread: see `oi_thread_store::LoadedThread::pending_mcp_tasks`).
fn note_task(sess: &Session, turn_id: &str, call_id: &str, task_id: &str, state: McpCallTaskState) {
    let message = match state {
        McpCallTaskState::Started => format!("running as the task {task_id}"),
        McpCallTaskState::LeftRunning => {
            format!("the task {task_id} was left running; resuming the thread fetches its result")
        }
        McpCallTaskState::Fetched => format!("fetched the result of the task {task_id}"),
    };
    sess.send(
        turn_id,
        EventMsg::McpToolCallProgress(McpToolCallProgressEvent {
            call_id: call_id.to_string(),
            progress: 0.0,
            total: None,
            message: Some(message),
            task: Some(McpCallTask {
                task_id: task_id.to_string(),
                state,
            }),
        }),
    );
}

/// Before a resumed thread's first request: the results of the MCP tasks its earlier session
/// left, fetched from their servers (as tool calls of this turn: begin, progress, end) and put
/// in place of the calls' placeholder outputs, so the model sees the results rather than
/// calling the tools again. A task the server no longer knows, or a server no longer
/// configured, gets an output that says so.
pub(crate) async fn fetch_pending_tasks(
    sess: &Arc<Session>,
    turn_id: &str,
    cancel: &CancellationToken,
) {
    let pending = std::mem::take(&mut sess.state().pending_mcp_tasks);
    if pending.is_empty() {
        return;
    }
    let Some(manager) = sess.mcp.clone() else {
        return;
    };
    // Their tools are known once their servers are up (a task-only tool is offered only by a
    // server that said it runs tasks).
    tokio::select! {
        _ = manager.wait_until_started() => {}
        _ = cancel.cancelled() => {
            sess.state().pending_mcp_tasks = pending;
            return;
        }
    }
    for task in pending {
        if cancel.is_cancelled() {
            // Still pending: the next resume tries again.
            return;
        }
        let arguments = serde_json::from_str::<serde_json::Value>(&task.arguments).ok();
        let Some(info) = manager.lookup(&task.name) else {
            let output = format!(
                "the task {} of `{}` was left running, but no configured MCP server offers that tool now, so its result could not be fetched",
                task.task_id, task.name
            );
            sess.replace_call_output(turn_id, &task.call_id, ToolOutcome::err(output).output)
                .await;
            note_task(
                sess,
                turn_id,
                &task.call_id,
                &task.task_id,
                McpCallTaskState::Fetched,
            );
            continue;
        };
        let invocation = McpInvocation {
            server: info.server.clone(),
            tool: info.tool.clone(),
            arguments,
        };
        sess.send(
            turn_id,
            EventMsg::McpToolCallBegin(McpToolCallBeginEvent {
                call_id: task.call_id.clone(),
                invocation: invocation.clone(),
            }),
        );
        let started = Instant::now();
        let (ptx, prx) = tokio::sync::mpsc::unbounded_channel();
        let (_ttx, trx) = tokio::sync::mpsc::unbounded_channel();
        let call = ToolCall {
            turn_id,
            call_id: &task.call_id,
            name: &task.name,
            arguments: &task.arguments,
        };
        let forward = forward_progress(sess.clone(), &call, prx, trx);
        let observer = oi_mcp_client::McpCallObserver {
            progress: Some(ptx),
            task: None,
        };
        let result = manager
            .task_result(
                &info.server,
                &info.tool,
                &task.task_id,
                observer,
                cancel.child_token(),
            )
            .await;
        let _ = forward.await;
        let interrupted = matches!(&result, Err(e) if e.is_interrupted());
        let config = sess.turn_context().config.clone();
        let output = match &result {
            Ok(value) => {
                let mut output = call_result_to_output(value, config.tool_output_max_bytes);
                let is_error = value.get("isError").and_then(|v| v.as_bool()) == Some(true);
                output.success = Some(!is_error);
                output
            }
            Err(e) => ToolOutcome::err(format!("tool call error: {e}")).output,
        };
        sess.send(
            turn_id,
            EventMsg::McpToolCallEnd(McpToolCallEndEvent {
                call_id: task.call_id.clone(),
                invocation,
                duration: started.elapsed().into(),
                result: result.map_err(|e| e.to_string()),
            }),
        );
        if interrupted {
            // Not fetched: kept pending for the next resume.
            return;
        }
        sess.replace_call_output(turn_id, &task.call_id, output)
            .await;
        note_task(
            sess,
            turn_id,
            &task.call_id,
            &task.task_id,
            McpCallTaskState::Fetched,
        );
    }
}
