//! A tool call the server runs as a task (the Tasks extension, `io.modelcontextprotocol/tasks`,
//! of 2026-07-28): poll `tasks/get` at the server's interval, report its status as progress,
//! answer its questions through `tasks/update`, and end with its result — or send
//! `tasks/cancel` on an interrupt or when `tool_timeout_sec` runs out. When the session ends
//! (not an interrupt) the task is left running: the thread names it, and a resumed thread
//! fetches its result with [`McpConnectionManager::task_result`].

use super::{CallClock, CallSite, Waited};
use crate::connection::Connection;
use crate::manager::McpConnectionManager;
use crate::{McpCallObserver, McpProgress, McpRequestError, McpTaskStarted};
use rmcp::model::{
    CancelTaskParams, GetTaskParams, Task, TaskPayload, TaskStatus, UpdateTaskParams,
};
use rmcp::service::ServiceError;
use serde_json::Value;
use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Polling interval when the server suggests none.
const DEFAULT_POLL: Duration = Duration::from_secs(1);
/// The server's interval, kept within these bounds (a zero interval would spin; an
/// interval of minutes would hide the end of a short task).
const MIN_POLL: Duration = Duration::from_millis(50);
const MAX_POLL: Duration = Duration::from_secs(30);

/// The task being followed and who hears about it.
pub(super) struct TaskSite<'a> {
    call: &'a CallSite<'a>,
    conn: &'a Arc<Connection>,
    observer: &'a McpCallObserver,
}

impl<'a> TaskSite<'a> {
    pub(super) fn new(
        call: &'a CallSite<'a>,
        conn: &'a Arc<Connection>,
        observer: &'a McpCallObserver,
    ) -> Self {
        Self {
            call,
            conn,
            observer,
        }
    }

    fn server(&self) -> String {
        self.call.server.to_string()
    }

    fn tool(&self) -> String {
        self.call.tool.to_string()
    }
}

/// What has been shown of the task's status, so each change is reported once.
#[derive(Default)]
struct Shown {
    updates: u32,
    last: Option<(TaskStatus, Option<String>)>,
}

impl Shown {
    /// Reports the task's status as progress when it changed.
    fn report(&mut self, site: &TaskSite<'_>, task: &Task) {
        let now = (task.status, task.status_message.clone());
        if self.last.as_ref() == Some(&now) {
            return;
        }
        self.last = Some(now);
        self.updates += 1;
        let Some(tx) = &site.observer.progress else {
            return;
        };
        let message = match (&task.status_message, task.status) {
            (Some(m), _) => m.clone(),
            (None, TaskStatus::InputRequired) => "task waiting for input".to_string(),
            (None, _) => format!("task {}", status_word(task.status)),
        };
        let _ = tx.send(McpProgress {
            progress: f64::from(self.updates),
            total: None,
            message: Some(message),
        });
    }
}

fn status_word(status: TaskStatus) -> &'static str {
    match status {
        TaskStatus::Working => "working",
        TaskStatus::InputRequired => "waiting for input",
        TaskStatus::Completed => "completed",
        TaskStatus::Failed => "failed",
        TaskStatus::Cancelled => "cancelled",
        _ => "in an unknown state",
    }
}

fn poll_interval(task: &Task) -> Duration {
    task.poll_interval_ms
        .map_or(DEFAULT_POLL, Duration::from_millis)
        .clamp(MIN_POLL, MAX_POLL)
}

impl McpConnectionManager {
    /// Follows the task `task` (just created by a `tools/call`, or named by a stored thread:
    /// `known`, so asked about at once) to its end; its result is the call's.
    pub(super) async fn follow_task(
        &self,
        site: &TaskSite<'_>,
        mut task: Task,
        known: bool,
        clock: &mut CallClock,
        cancel: &CancellationToken,
    ) -> Result<Value, McpRequestError> {
        let task_id = task.task_id.clone();
        tracing::info!(
            "MCP server `{}` runs `{}` as the task `{task_id}`",
            site.call.server,
            site.call.tool
        );
        if let Some(tx) = &site.observer.task {
            let _ = tx.send(McpTaskStarted {
                server: site.server(),
                tool: site.tool(),
                task_id: task_id.clone(),
            });
        }
        let mut shown = Shown::default();
        if !known {
            shown.report(site, &task);
        }
        let mut answered = HashSet::new();
        let mut first = true;
        loop {
            // A task named by a stored thread is asked about at once; a new one after the
            // server's interval.
            let pause = if first && known {
                Duration::ZERO
            } else {
                poll_interval(&task)
            };
            first = false;
            let got = clock
                .wait(
                    async {
                        tokio::time::sleep(pause).await;
                        site.conn
                            .peer
                            .get_task(GetTaskParams::new(task_id.clone()))
                            .await
                    },
                    site.conn,
                    cancel,
                )
                .await;
            let detailed = match got {
                Waited::Done(Ok(got)) => got.task,
                Waited::Done(Err(e)) => {
                    return Err(self.task_request_failed(site, &task_id, e).await);
                }
                waited => return Err(self.stop_task(site, &task_id, waited).await),
            };
            task = detailed.task;
            shown.report(site, &task);
            match detailed.payload {
                TaskPayload::Working => {}
                TaskPayload::InputRequired { input_requests } => {
                    self.answer_task(site, &task_id, input_requests, &mut answered, clock, cancel)
                        .await?;
                }
                TaskPayload::Completed { result } => return Ok(Value::Object(result)),
                TaskPayload::Failed { error } => {
                    return Err(McpRequestError::TaskFailed {
                        server: site.server(),
                        tool: site.tool(),
                        task_id,
                        code: error
                            .get("code")
                            .and_then(Value::as_i64)
                            .and_then(|c| i32::try_from(c).ok())
                            .unwrap_or(-32603),
                        message: error
                            .get("message")
                            .and_then(Value::as_str)
                            .unwrap_or("no message")
                            .to_string(),
                    });
                }
                TaskPayload::Cancelled => {
                    return Err(McpRequestError::TaskCancelled {
                        server: site.server(),
                        tool: site.tool(),
                        task_id,
                    });
                }
                _ => {}
            }
        }
    }

    /// Answers the task's new questions and delivers the answers with `tasks/update`.
    async fn answer_task(
        &self,
        site: &TaskSite<'_>,
        task_id: &str,
        requests: rmcp::model::InputRequests,
        answered: &mut HashSet<String>,
        clock: &mut CallClock,
        cancel: &CancellationToken,
    ) -> Result<(), McpRequestError> {
        let responder = &site.conn.responder;
        let answering = crate::mrtr::answer(responder, requests, answered, cancel);
        let responses = match clock.wait(answering, site.conn, cancel).await {
            Waited::Done(Ok(r)) => r,
            Waited::Done(Err(unanswered)) => {
                // The task cannot go on without it.
                let _ = site
                    .conn
                    .peer
                    .cancel_task(CancelTaskParams::new(task_id))
                    .await;
                return Err(McpRequestError::InputRefused {
                    server: site.server(),
                    request: format!("the task `{task_id}` of `{}`", site.call.tool),
                    asked: unanswered.request,
                    reason: unanswered.reason,
                });
            }
            waited => return Err(self.stop_task(site, task_id, waited).await),
        };
        if responses.is_empty() {
            return Ok(());
        }
        answered.extend(responses.keys().cloned());
        let update = UpdateTaskParams::new(task_id, responses);
        match clock
            .wait(site.conn.peer.update_task(update), site.conn, cancel)
            .await
        {
            Waited::Done(Ok(())) => Ok(()),
            Waited::Done(Err(e)) => Err(self.task_request_failed(site, task_id, e).await),
            waited => Err(self.stop_task(site, task_id, waited).await),
        }
    }

    /// The task's end when we stop following it: the user's interrupt or the timeout send
    /// `tasks/cancel`; the end of the session leaves it running (the thread names it).
    async fn stop_task<T>(
        &self,
        site: &TaskSite<'_>,
        task_id: &str,
        waited: Waited<T>,
    ) -> McpRequestError {
        let (server, tool, task_id) = (site.server(), site.tool(), task_id.to_string());
        match waited {
            Waited::Exited | Waited::Done(_) => McpRequestError::ServerStopped {
                server,
                tool,
                detail: site.conn.death_detail().await,
            },
            Waited::Cancelled if self.inner.leaving_tasks.load(Ordering::SeqCst) => {
                McpRequestError::TaskLeftRunning {
                    server,
                    tool,
                    task_id,
                }
            }
            Waited::Cancelled => {
                self.cancel_task(site.conn, &task_id).await;
                McpRequestError::CallInterrupted { server, tool }
            }
            Waited::TimedOut => {
                self.cancel_task(site.conn, &task_id).await;
                McpRequestError::TaskTimedOut {
                    server,
                    tool,
                    task_id,
                    timeout: site.call.timeout,
                }
            }
        }
    }

    /// `tasks/cancel`, bounded: cancellation is cooperative, and the answer says nothing.
    async fn cancel_task(&self, conn: &Connection, task_id: &str) {
        let sent = tokio::time::timeout(
            Duration::from_secs(5),
            conn.peer.cancel_task(CancelTaskParams::new(task_id)),
        )
        .await;
        match sent {
            Ok(Ok(())) => tracing::info!("sent tasks/cancel for the task `{task_id}`"),
            Ok(Err(e)) => tracing::warn!("tasks/cancel for the task `{task_id}` failed: {e}"),
            Err(_) => tracing::warn!("tasks/cancel for the task `{task_id}` got no answer"),
        }
    }

    /// A `tasks/get` or `tasks/update` that failed, as the call's error.
    async fn task_request_failed(
        &self,
        site: &TaskSite<'_>,
        task_id: &str,
        error: ServiceError,
    ) -> McpRequestError {
        let (server, tool) = (site.server(), site.tool());
        match error {
            // An unknown task id is -32602 (invalid params).
            ServiceError::McpError(e) if e.code == rmcp::model::ErrorCode::INVALID_PARAMS => {
                McpRequestError::TaskLost {
                    server,
                    tool,
                    task_id: task_id.to_string(),
                    message: e.message.to_string(),
                }
            }
            ServiceError::McpError(e) => McpRequestError::ErrorReply {
                server,
                request: format!("the task `{task_id}` of `{tool}`"),
                code: e.code.0,
                message: e.message.to_string(),
            },
            ServiceError::TransportClosed => McpRequestError::ServerStopped {
                server,
                tool,
                detail: site.conn.death_detail().await,
            },
            e => {
                site.conn.mark_broken();
                McpRequestError::ConnectionLost {
                    reason: crate::connection::describe_service_error(
                        &server,
                        crate::connection::server_url(&site.call.entry.config),
                        &e,
                    ),
                    server,
                }
            }
        }
    }

    /// The result of a task an earlier session left running (a stored thread names it):
    /// polled as [`McpConnectionManager::call_tool_observed`] polls a new one, with the same
    /// timeout, questions and cancellation.
    pub async fn task_result(
        &self,
        server: &str,
        tool: &str,
        task_id: &str,
        observer: McpCallObserver,
        cancel: CancellationToken,
    ) -> Result<Value, McpRequestError> {
        let entry = self.entry(server)?;
        let conn = self.inner.ready_connection(entry, &cancel).await?;
        let call = CallSite {
            entry,
            server,
            tool,
            timeout: entry.config.tool_timeout_or_default(),
        };
        let mut clock = CallClock::new(call.timeout, &entry.pending_elicitations);
        // The observer is not told again: the thread already names the task.
        let quiet = McpCallObserver {
            progress: observer.progress,
            task: None,
        };
        let site = TaskSite::new(&call, &conn, &quiet);
        let task = Task::new(task_id, TaskStatus::Working, "", "");
        self.follow_task(&site, task, true, &mut clock, &cancel)
            .await
    }

    /// The session is ending: tasks still running are left running rather than cancelled
    /// (their threads name them). Call before cancelling the calls in flight.
    pub fn leave_tasks_running(&self) {
        self.inner.leaving_tasks.store(true, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_servers_interval_is_kept_within_bounds() {
        let mut task = Task::new("t", TaskStatus::Working, "", "");
        assert_eq!(poll_interval(&task), DEFAULT_POLL);
        task.poll_interval_ms = Some(250);
        assert_eq!(poll_interval(&task), Duration::from_millis(250));
        task.poll_interval_ms = Some(0);
        assert_eq!(poll_interval(&task), MIN_POLL);
        task.poll_interval_ms = Some(3_600_000);
        assert_eq!(poll_interval(&task), MAX_POLL);
    }
}
