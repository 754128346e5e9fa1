//! `tools/call`: send the request, wait for the reply (or the server's death, the timeout,
//! the user's interrupt), and turn what happened into the result or a message that says what
//! to do.

use super::McpConnectionManager;
use super::entry::ServerEntry;
use crate::McpProgress;
use crate::McpRequestError;
use crate::connection::Connection;
use rmcp::RoleClient;
use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest, ServerResult};
use rmcp::service::{PeerRequestOptions, RequestHandle};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// How long a reply may still arrive after the server's process exited (it may be in the pipe).
const LATE_REPLY_GRACE: Duration = Duration::from_millis(200);

/// How a call ended, before it is turned into a result.
enum Outcome {
    /// The reply, or `None` when the server died without one.
    Response(Option<Box<Result<ServerResult, rmcp::ServiceError>>>),
    Cancelled,
    TimedOut,
}

/// The call being made, for messages.
struct CallSite<'a> {
    entry: &'a ServerEntry,
    server: &'a str,
    tool: &'a str,
    timeout: Duration,
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
        let entry = self.enabled_tool_entry(server, tool)?;
        let conn = self.inner.ready_connection(entry, &cancel).await?;
        let mut handle = send_call(&conn, server, tool, arguments).await?;
        let _registration =
            progress.map(|tx| conn.progress.register(handle.progress_token.clone(), tx));
        let call = CallSite {
            entry,
            server,
            tool,
            timeout: entry.config.tool_timeout_or_default(),
        };
        let outcome = wait_for_outcome(&call, &conn, &mut handle, &cancel).await;
        self.finish_call(&call, &conn, handle, outcome).await
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
    fn read_reply(
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
                let refused = json.get("isError").and_then(Value::as_bool) == Some(true)
                    && is_task_required_refusal(&json.to_string());
                if refused {
                    self.stop_offering_task_tool(entry, tool);
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

/// Send `tools/call`; the handle receives the reply and can cancel the request.
async fn send_call(
    conn: &Connection,
    server: &str,
    tool: &str,
    arguments: Option<serde_json::Map<String, Value>>,
) -> Result<RequestHandle<RoleClient>, McpRequestError> {
    let mut params = CallToolRequestParams::new(tool.to_string());
    if let Some(args) = arguments {
        params = params.with_arguments(args);
    }
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

/// Wait for the reply, the server's exit, the user's interrupt or the timeout, whichever comes
/// first. Time spent waiting for the user to answer the server's question (an elicitation)
/// does not count against the timeout.
async fn wait_for_outcome(
    call: &CallSite<'_>,
    conn: &Connection,
    handle: &mut RequestHandle<RoleClient>,
    cancel: &CancellationToken,
) -> Outcome {
    let mut deadline = tokio::time::Instant::now() + call.timeout;
    let mut pending = call.entry.pending_elicitations.subscribe();
    // The clock stops for as long as the server waits on us (an elicitation, a sample): all
    // of that time is added to the deadline, not only what falls after it.
    let mut paused_since = (*pending.borrow_and_update() > 0).then(tokio::time::Instant::now);
    loop {
        tokio::select! {
            biased;
            r = &mut handle.rx => return Outcome::Response(r.ok().map(Box::new)),
            _ = conn.process_exited() => {
                let late = tokio::time::timeout(LATE_REPLY_GRACE, &mut handle.rx).await;
                return Outcome::Response(late.ok().and_then(Result::ok).map(Box::new));
            }
            _ = cancel.cancelled() => return Outcome::Cancelled,
            Ok(()) = pending.changed() => {
                let waiting_on_us = *pending.borrow_and_update() > 0;
                match (paused_since, waiting_on_us) {
                    (None, true) => paused_since = Some(tokio::time::Instant::now()),
                    (Some(since), false) => {
                        deadline += since.elapsed();
                        paused_since = None;
                    }
                    _ => {}
                }
            }
            _ = tokio::time::sleep_until(deadline), if paused_since.is_none() => {
                return Outcome::TimedOut;
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
