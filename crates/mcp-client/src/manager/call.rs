//! `tools/call`: send the request, wait for the reply (or the server's death, the timeout,
//! the user's interrupt), answer what a multi round-trip reply asks and retry, follow a reply
//! that is a task (`task`), and turn what happened into the result or a message that says
//! what to do.

use super::McpConnectionManager;
use super::entry::ServerEntry;
mod task;

use crate::connection::Connection;
use crate::mrtr::MAX_INPUT_ROUNDS;
use crate::{McpCallObserver, McpProgress, McpRequestError};
use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientRequest, InputRequiredResult, ServerResult,
};
use rmcp::service::{PeerRequestOptions, RequestHandle};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use task::TaskSite;
use tokio::sync::{mpsc, watch};
use tokio_util::sync::CancellationToken;

/// How long a reply may still arrive after the server's process exited (it may be in the pipe).
const LATE_REPLY_GRACE: Duration = Duration::from_millis(200);

/// How a call ended, before it is turned into a result.
pub(super) enum Outcome {
    /// The reply, or `None` when the server died without one.
    Response(Option<Box<Result<ServerResult, rmcp::ServiceError>>>),
    Cancelled,
    TimedOut,
}

/// The call being made, for messages.
pub(super) struct CallSite<'a> {
    pub(super) entry: &'a ServerEntry,
    pub(super) server: &'a str,
    pub(super) tool: &'a str,
    pub(super) timeout: Duration,
}

impl McpConnectionManager {
    /// Calls the tool (waits for its server to be ready, restarts a crashed server), honouring
    /// `tool_timeout_sec` and `cancel` (both send `notifications/cancelled` to the server) and
    /// forwarding progress notifications to `progress`.
    ///
    /// Ok = the raw `CallToolResult` JSON; Err = what failed, as one line by `Display`.
    pub async fn call_tool(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<serde_json::Map<String, Value>>,
        progress: Option<mpsc::UnboundedSender<McpProgress>>,
        cancel: CancellationToken,
    ) -> Result<Value, McpRequestError> {
        let observer = McpCallObserver {
            progress,
            task: None,
        };
        self.call_tool_observed(server, tool, arguments, observer, cancel)
            .await
    }

    /// [`McpConnectionManager::call_tool`], telling `observer` the progress and, when the
    /// server runs the call as a task, the task's id. The call's questions (a multi
    /// round-trip result's `inputRequests`, a task's) go to the session's elicitation and
    /// sampling handlers and the call is retried with the answers, at most
    /// [`crate::MAX_INPUT_ROUNDS`] times; a task is polled at the server's interval until it
    /// ends. `tool_timeout_sec` covers all of it, except the time the user takes to answer;
    /// an interrupt or the timeout cancels the request (`notifications/cancelled`) or the
    /// task (`tasks/cancel`).
    pub async fn call_tool_observed(
        &self,
        server: &str,
        tool: &str,
        arguments: Option<serde_json::Map<String, Value>>,
        observer: McpCallObserver,
        cancel: CancellationToken,
    ) -> Result<Value, McpRequestError> {
        let entry = self.enabled_tool_entry(server, tool)?;
        let conn = self.inner.ready_connection(entry, &cancel).await?;
        let call = CallSite {
            entry,
            server,
            tool,
            timeout: entry.config.tool_timeout_or_default(),
        };
        let called = self
            .call_on(&call, &conn, arguments.clone(), &observer, &cancel)
            .await;
        // The server no longer speaks the version this connection negotiated (it was
        // upgraded, or a load balancer moved us to a newer instance): it refused the call
        // before running it, so a new connection (a new probe) gets it once more.
        if let Err(McpRequestError::ErrorReply { code, .. }) = &called
            && *code == rmcp::model::ErrorCode::UNSUPPORTED_PROTOCOL_VERSION.0
        {
            tracing::info!(
                "MCP server `{server}` refused protocol {} for `{tool}`; reconnecting",
                conn.negotiated.version
            );
            conn.mark_broken();
            let conn = self.inner.ready_connection(entry, &cancel).await?;
            return self
                .call_on(&call, &conn, arguments, &observer, &cancel)
                .await;
        }
        called
    }

    /// One call on `conn`: its rounds, and the task it may become.
    async fn call_on(
        &self,
        call: &CallSite<'_>,
        conn: &Arc<Connection>,
        arguments: Option<serde_json::Map<String, Value>>,
        observer: &McpCallObserver,
        cancel: &CancellationToken,
    ) -> Result<Value, McpRequestError> {
        let CallSite {
            entry,
            server,
            tool,
            ..
        } = *call;
        let (conn, cancel) = (conn.clone(), cancel.clone());
        let mut clock = CallClock::new(call.timeout, &entry.pending_elicitations);
        let mut params = CallToolRequestParams::new(tool.to_string());
        if let Some(args) = arguments {
            params = params.with_arguments(args);
        }
        let mut state_only_rounds = 0;
        for round in 1.. {
            let mut handle = send_call(&conn, server, params.clone()).await?;
            let _registration = observer
                .progress
                .clone()
                .map(|tx| conn.progress.register(handle.progress_token.clone(), tx));
            let outcome = wait_for_reply(&mut clock, &conn, &mut handle, &cancel).await;
            let asked = match outcome {
                Outcome::Response(Some(reply)) => match *reply {
                    Ok(ServerResult::InputRequiredResult(asked)) => asked,
                    Ok(ServerResult::CreateTaskResult(created)) => {
                        let task = TaskSite::new(call, &conn, observer);
                        return self
                            .follow_task(&task, created.task, false, &mut clock, &cancel)
                            .await;
                    }
                    reply => {
                        return self
                            .finish_call(
                                call,
                                &conn,
                                handle,
                                Outcome::Response(Some(Box::new(reply))),
                            )
                            .await;
                    }
                },
                other => return self.finish_call(call, &conn, handle, other).await,
            };
            if round >= MAX_INPUT_ROUNDS {
                return Err(McpRequestError::InputRoundsExceeded {
                    server: server.to_string(),
                    request: format!("tools/call `{tool}`"),
                    rounds: round,
                });
            }
            let retry = self
                .answer_round(
                    call,
                    &conn,
                    asked,
                    &mut state_only_rounds,
                    &mut clock,
                    &cancel,
                )
                .await?;
            params.input_responses = retry.responses;
            params.request_state = retry.request_state;
        }
        unreachable!("the rounds loop returns")
    }

    /// Answers one `input_required` result of a tool call: its questions to the user (the
    /// clock stopped meanwhile), or a short pause when it only handed back its state.
    async fn answer_round(
        &self,
        call: &CallSite<'_>,
        conn: &Connection,
        asked: InputRequiredResult,
        state_only_rounds: &mut usize,
        clock: &mut CallClock,
        cancel: &CancellationToken,
    ) -> Result<Retry, McpRequestError> {
        let requests = asked.input_requests.unwrap_or_default();
        if requests.is_empty() && asked.request_state.is_none() {
            return Err(McpRequestError::Unreadable {
                server: call.server.to_string(),
                method: format!("tools/call `{}`", call.tool),
                reason: "an input_required result with neither inputRequests nor requestState"
                    .to_string(),
            });
        }
        let pause = if requests.is_empty() {
            *state_only_rounds += 1;
            crate::mrtr::state_only_pause(*state_only_rounds - 1)
        } else {
            *state_only_rounds = 0;
            Duration::ZERO
        };
        let skip = Default::default();
        let answering = async {
            tokio::time::sleep(pause).await;
            crate::mrtr::answer(&conn.responder, requests, &skip, cancel).await
        };
        let responses = match clock.wait(answering, conn, cancel).await {
            Waited::Done(Ok(responses)) => responses,
            Waited::Done(Err(unanswered)) => {
                return Err(McpRequestError::InputRefused {
                    server: call.server.to_string(),
                    request: format!("tools/call `{}`", call.tool),
                    asked: unanswered.request,
                    reason: unanswered.reason,
                });
            }
            Waited::Exited => {
                return Err(McpRequestError::ServerStopped {
                    server: call.server.to_string(),
                    tool: call.tool.to_string(),
                    detail: conn.death_detail().await,
                });
            }
            Waited::Cancelled => {
                return Err(McpRequestError::CallInterrupted {
                    server: call.server.to_string(),
                    tool: call.tool.to_string(),
                });
            }
            Waited::TimedOut => {
                return Err(McpRequestError::CallTimedOut {
                    server: call.server.to_string(),
                    tool: call.tool.to_string(),
                    timeout: call.timeout,
                });
            }
        };
        Ok(Retry {
            responses: (!responses.is_empty()).then_some(responses),
            // Echoed exactly as given, and only when given.
            request_state: asked.request_state,
        })
    }

    /// The entry of `server`, if it is configured and lets the model call `tool`.
    fn enabled_tool_entry(
        &self,
        server: &str,
        tool: &str,
    ) -> Result<&Arc<ServerEntry>, McpRequestError> {
        let entry =
            self.inner
                .servers
                .get(server)
                .ok_or_else(|| McpRequestError::ServerNotEnabled {
                    server: server.to_string(),
                })?;
        if !entry.config.is_tool_enabled(tool) {
            return Err(McpRequestError::ToolDisabled {
                server: server.to_string(),
                tool: tool.to_string(),
            });
        }
        Ok(entry)
    }

    /// The result (or message) for how the call ended; a timed-out or interrupted call is
    /// cancelled on the server.
    async fn finish_call(
        &self,
        call: &CallSite<'_>,
        conn: &Connection,
        handle: RequestHandle<RoleClient>,
        outcome: Outcome,
    ) -> Result<Value, McpRequestError> {
        let CallSite { server, tool, .. } = *call;
        match outcome {
            Outcome::Response(Some(reply))
                if !matches!(*reply, Err(rmcp::ServiceError::TransportClosed)) =>
            {
                self.read_reply(call, conn, *reply)
            }
            Outcome::Response(_) => {
                let detail = conn.death_detail().await;
                Err(McpRequestError::ServerStopped {
                    server: server.to_string(),
                    tool: tool.to_string(),
                    detail,
                })
            }
            Outcome::TimedOut => {
                let _ = handle.cancel(Some("timed out".to_string())).await;
                if conn.is_http() {
                    // An HTTP session that stops answering (e.g. the server restarted and
                    // forgot it) is replaced; a fresh handshake is cheap.
                    conn.mark_broken();
                }
                Err(McpRequestError::CallTimedOut {
                    server: server.to_string(),
                    tool: tool.to_string(),
                    timeout: call.timeout,
                })
            }
            Outcome::Cancelled => {
                let _ = handle
                    .cancel(Some("interrupted by the user".to_string()))
                    .await;
                Err(McpRequestError::CallInterrupted {
                    server: server.to_string(),
                    tool: tool.to_string(),
                })
            }
        }
    }

    /// The server's answer: the result JSON, or a message for an error reply.
    pub(super) fn read_reply(
        &self,
        call: &CallSite<'_>,
        conn: &Connection,
        reply: Result<ServerResult, rmcp::ServiceError>,
    ) -> Result<Value, McpRequestError> {
        let CallSite {
            entry,
            server,
            tool,
            ..
        } = *call;
        match reply {
            Ok(result) => {
                let json = call_result_json(result);
                let failed = json.get("isError").and_then(Value::as_bool) == Some(true);
                if failed && is_task_required_refusal(&json.to_string()) {
                    self.stop_offering_task_tool(entry, tool);
                }
                if failed && conn.negotiated.era == crate::McpProtocolEra::Discover {
                    self.warn_if_asked_the_old_way(entry, &json);
                }
                Ok(json)
            }
            Err(rmcp::ServiceError::McpError(e)) if is_task_required_refusal(&e.message) => {
                self.stop_offering_task_tool(entry, tool);
                Err(McpRequestError::TaskRequired {
                    server: server.to_string(),
                    tool: tool.to_string(),
                })
            }
            Err(rmcp::ServiceError::McpError(e)) => Err(McpRequestError::ErrorReply {
                server: server.to_string(),
                request: format!("tools/call `{tool}`"),
                code: e.code.0,
                message: e.message.to_string(),
            }),
            Err(e) => {
                // The transport failed (not the tool): reconnect on the next call.
                conn.mark_broken();
                if let Some(ours) = crate::oauth_session::user_message(&e.to_string()) {
                    return Err(McpRequestError::Authorization(ours));
                }
                let url = crate::connection::server_url(&entry.config);
                Err(McpRequestError::ConnectionLost {
                    server: server.to_string(),
                    reason: crate::connection::describe_service_error(server, url, &e),
                })
            }
        }
    }

    /// A tool that failed because it tried to ask a question through a server-initiated
    /// request, which 2026-07-28 connections do not have (fastmcp's `ctx.elicit` says
    /// "elicitation via server-initiated requests is unavailable on 2026-07-28 connections"):
    /// the user is told once which setting lets it ask.
    fn warn_if_asked_the_old_way(&self, entry: &ServerEntry, result: &Value) {
        let text = result.to_string();
        let asked_old_way =
            text.contains("server-initiated request") && text.contains("2026-07-28");
        if !asked_old_way
            || entry
                .warned_about_era
                .swap(true, std::sync::atomic::Ordering::SeqCst)
        {
            return;
        }
        let message = format!(
            "MCP server `{0}` tried to ask a question through a server-initiated request, which protocol 2026-07-28 does not have; to let its tools ask you, set `protocol_version = \"2025-11-25\"` in [mcp_servers.{0}]",
            entry.name
        );
        let _ = self
            .inner
            .events
            .send(oi_protocol::protocol::EventMsg::Warning(
                oi_protocol::protocol::WarningEvent { message },
            ));
    }

    /// A server refused a tool because it needs task augmentation: stop offering it.
    fn stop_offering_task_tool(&self, entry: &ServerEntry, tool: &str) {
        tracing::info!(
            "MCP server `{}`: `{tool}` needs task augmentation (SEP-1686); no longer offered",
            entry.name
        );
        entry.learn_task_required(tool);
        self.inner.rebuild_catalog();
    }
}

/// What the next round of a multi round-trip call sends besides the call itself.
struct Retry {
    responses: Option<rmcp::model::InputResponses>,
    request_state: Option<String>,
}

/// Send `tools/call` (each round a new request, so a new JSON-RPC id); the handle receives
/// the reply and can cancel the request.
async fn send_call(
    conn: &Connection,
    server: &str,
    params: CallToolRequestParams,
) -> Result<RequestHandle<RoleClient>, McpRequestError> {
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    conn.peer
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .map_err(|e| McpRequestError::Send {
            server: server.to_string(),
            method: "tools/call".to_string(),
            reason: crate::connection::describe_service_error(server, None, &e),
        })
}

/// The reply to one round, or how waiting for it ended.
async fn wait_for_reply(
    clock: &mut CallClock,
    conn: &Connection,
    handle: &mut RequestHandle<RoleClient>,
    cancel: &CancellationToken,
) -> Outcome {
    match clock.wait(&mut handle.rx, conn, cancel).await {
        Waited::Done(r) => Outcome::Response(r.ok().map(Box::new)),
        Waited::Exited => {
            let late = tokio::time::timeout(LATE_REPLY_GRACE, &mut handle.rx).await;
            Outcome::Response(late.ok().and_then(Result::ok).map(Box::new))
        }
        Waited::Cancelled => Outcome::Cancelled,
        Waited::TimedOut => Outcome::TimedOut,
    }
}

/// How waiting for something during a call ended.
pub(crate) enum Waited<T> {
    Done(T),
    /// The stdio server's process exited.
    Exited,
    /// The user interrupted.
    Cancelled,
    /// `tool_timeout_sec` ran out.
    TimedOut,
}

/// A call's deadline: `tool_timeout_sec` from its start, across every round of a multi
/// round-trip request and the whole of a task. The clock stops for as long as the server
/// waits on us (an elicitation, a sample): all of that time is added to the deadline, not
/// only what falls after it.
pub(crate) struct CallClock {
    deadline: tokio::time::Instant,
    paused_since: Option<tokio::time::Instant>,
    pending: watch::Receiver<usize>,
}

impl CallClock {
    pub(crate) fn new(timeout: Duration, pending: &watch::Sender<usize>) -> Self {
        let mut pending = pending.subscribe();
        let paused_since = (*pending.borrow_and_update() > 0).then(tokio::time::Instant::now);
        Self {
            deadline: tokio::time::Instant::now() + timeout,
            paused_since,
            pending,
        }
    }

    /// Runs `work` until it is done, the server's process exits, the user interrupts or the
    /// deadline passes, whichever comes first.
    pub(crate) async fn wait<F: std::future::Future>(
        &mut self,
        work: F,
        conn: &Connection,
        cancel: &CancellationToken,
    ) -> Waited<F::Output> {
        tokio::pin!(work);
        loop {
            tokio::select! {
                biased;
                r = &mut work => return Waited::Done(r),
                _ = conn.process_exited() => return Waited::Exited,
                _ = cancel.cancelled() => return Waited::Cancelled,
                Ok(()) = self.pending.changed() => {
                    let waiting_on_us = *self.pending.borrow_and_update() > 0;
                    match (self.paused_since, waiting_on_us) {
                        (None, true) => self.paused_since = Some(tokio::time::Instant::now()),
                        (Some(since), false) => {
                            self.deadline += since.elapsed();
                            self.paused_since = None;
                        }
                        _ => {}
                    }
                }
                _ = tokio::time::sleep_until(self.deadline), if self.paused_since.is_none() => {
                    return Waited::TimedOut;
                }
            }
        }
    }
}

/// True when a server refused a call because the tool needs task augmentation (SEP-1686).
fn is_task_required_refusal(text: &str) -> bool {
    text.contains("task augmentation") || text.contains("taskSupport")
}

/// The reply as raw JSON. A reply that parsed as another result type is still a
/// `CallToolResult` on the wire (e.g. `{}`), so it is passed on as-is.
fn call_result_json(result: ServerResult) -> Value {
    match result {
        ServerResult::CallToolResult(r) => serde_json::to_value(r),
        other => serde_json::to_value(other),
    }
    .unwrap_or_else(|e| serde_json::json!({"content":[{"type":"text","text":format!("unreadable tool result: {e}")}],"isError":true}))
}
