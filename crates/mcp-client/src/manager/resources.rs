//! Resources and prompts: what a ready server lists (for status displays) and the requests
//! behind the model's `list_mcp_resources`, `list_mcp_resource_templates` and
//! `read_mcp_resource` tools.

use super::{CallClock, McpConnectionManager, ServerEntry, Waited};
use crate::McpRequestError;
use crate::connection::Connection;
use rmcp::model::{ClientRequest, ServerResult};
use rmcp::service::PeerRequestOptions;
use serde_json::{Value, json};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

fn to_values<T: serde::Serialize>(items: Vec<T>) -> Vec<Value> {
    items
        .into_iter()
        .filter_map(|x| serde_json::to_value(x).ok())
        .collect()
}

/// List a ready server's resources, templates and prompts in the background (bounded by its
/// `tool_timeout_sec`), for [`McpConnectionManager::status`].
pub(crate) fn fetch_details(entry: Arc<ServerEntry>, conn: Arc<Connection>) {
    let Some(info) = conn.peer.peer_info() else {
        return;
    };
    let (has_resources, has_prompts) = (
        info.capabilities.resources.is_some(),
        info.capabilities.prompts.is_some(),
    );
    if !has_resources && !has_prompts {
        return;
    }
    let timeout = entry.config.tool_timeout_or_default();
    tokio::spawn(async move {
        let peer = &conn.peer;
        let (mut resources, mut templates, mut prompts) = (Vec::new(), Vec::new(), Vec::new());
        let listed = tokio::time::timeout(timeout, async {
            if has_resources {
                match peer.list_all_resources().await {
                    Ok(r) => resources = to_values(r),
                    Err(e) => {
                        tracing::debug!("MCP server `{}`: resources/list failed: {e}", entry.name)
                    }
                }
                match peer.list_all_resource_templates().await {
                    Ok(t) => templates = to_values(t),
                    Err(e) => tracing::debug!(
                        "MCP server `{}`: resources/templates/list failed: {e}",
                        entry.name
                    ),
                }
            }
            if has_prompts {
                match peer.list_all_prompts().await {
                    Ok(p) => prompts = to_values(p),
                    Err(e) => {
                        tracing::debug!("MCP server `{}`: prompts/list failed: {e}", entry.name)
                    }
                }
            }
        })
        .await;
        if listed.is_err() {
            tracing::debug!(
                "MCP server `{}`: listing resources/prompts timed out",
                entry.name
            );
        }
        let mut details = entry.details.write().unwrap_or_else(|e| e.into_inner());
        details.resources = resources;
        details.resource_templates = templates;
        details.prompts = prompts;
    });
}

impl McpConnectionManager {
    /// Ready servers that advertise the `resources` capability, in name order.
    pub fn servers_with_resources(&self) -> Vec<String> {
        self.entries()
            .filter(|e| {
                matches!(*e.state.borrow(), super::ConnState::Ready(_))
                    && e.details.read().map(|d| d.has_resources).unwrap_or(false)
            })
            .map(|e| e.name.clone())
            .collect()
    }

    /// `resources/list` on one server: the raw result (`{resources, nextCursor?}`).
    pub async fn list_resources(
        &self,
        server: &str,
        cursor: Option<String>,
        cancel: CancellationToken,
    ) -> Result<Value, McpRequestError> {
        let params = cursor.map_or_else(|| json!({}), |c| json!({"cursor": c}));
        self.request(server, "resources/list", params, cancel).await
    }

    /// `resources/templates/list` on one server: `{resourceTemplates, nextCursor?}`.
    pub async fn list_resource_templates(
        &self,
        server: &str,
        cursor: Option<String>,
        cancel: CancellationToken,
    ) -> Result<Value, McpRequestError> {
        let params = cursor.map_or_else(|| json!({}), |c| json!({"cursor": c}));
        self.request(server, "resources/templates/list", params, cancel)
            .await
    }

    /// `resources/read` on one server: `{contents: [...]}`.
    pub async fn read_resource(
        &self,
        server: &str,
        uri: &str,
        cancel: CancellationToken,
    ) -> Result<Value, McpRequestError> {
        self.request(server, "resources/read", json!({"uri": uri}), cancel)
            .await
    }

    /// One request with the server's `tool_timeout_sec` and `cancel` (both send
    /// `notifications/cancelled`). A `prompts/get` or `resources/read` answered with
    /// `input_required` (2026-07-28) gets its questions answered and is sent again, at most
    /// [`crate::MAX_INPUT_ROUNDS`] times. The error is a one-line message for the model.
    pub(crate) async fn request(
        &self,
        server: &str,
        method: &str,
        mut params: Value,
        cancel: CancellationToken,
    ) -> Result<Value, McpRequestError> {
        let entry = self.entry(server)?;
        let conn = self.connection(entry, &cancel).await?;
        let timeout = entry.config.tool_timeout_or_default();
        let mut clock = CallClock::new(timeout, &entry.pending_elicitations);
        let site = RequestSite {
            server,
            url: crate::connection::server_url(&entry.config),
            method,
            timeout,
        };
        for round in 1.. {
            let asked = match send_once(&site, &conn, &params, &mut clock, &cancel).await? {
                ServerResult::InputRequiredResult(asked) if MRTR_METHODS.contains(&method) => asked,
                result => {
                    return serde_json::to_value(result).map_err(|e| McpRequestError::Unreadable {
                        server: server.to_string(),
                        method: method.to_string(),
                        reason: e.to_string(),
                    });
                }
            };
            if round >= crate::MAX_INPUT_ROUNDS {
                return Err(McpRequestError::InputRoundsExceeded {
                    server: server.to_string(),
                    request: method.to_string(),
                    rounds: round,
                });
            }
            let none_yet = std::collections::HashSet::new();
            let answering = crate::mrtr::answer(
                &conn.responder,
                asked.input_requests.unwrap_or_default(),
                &none_yet,
                &cancel,
            );
            let responses = match clock.wait(answering, &conn, &cancel).await {
                Waited::Done(Ok(r)) => r,
                Waited::Done(Err(unanswered)) => {
                    return Err(McpRequestError::InputRefused {
                        server: server.to_string(),
                        request: method.to_string(),
                        asked: unanswered.request,
                        reason: unanswered.reason,
                    });
                }
                waited => return Err(site.ended(waited)),
            };
            if let Value::Object(map) = &mut params {
                map.remove("inputResponses");
                map.remove("requestState");
                if !responses.is_empty() {
                    map.insert("inputResponses".into(), json!(responses));
                }
                if let Some(state) = asked.request_state {
                    map.insert("requestState".into(), Value::String(state));
                }
            }
        }
        unreachable!("the rounds loop returns")
    }
}

/// The requests a server may answer with `input_required` (besides `tools/call`).
const MRTR_METHODS: &[&str] = &["prompts/get", "resources/read"];

/// The request being made, for messages.
struct RequestSite<'a> {
    server: &'a str,
    /// The server's URL (`None` for stdio), for messages.
    url: Option<&'a str>,
    method: &'a str,
    timeout: std::time::Duration,
}

impl RequestSite<'_> {
    /// The error for a wait that ended without an answer.
    fn ended<T>(&self, waited: Waited<T>) -> McpRequestError {
        let (server, method) = (self.server.to_string(), self.method.to_string());
        match waited {
            Waited::Cancelled => McpRequestError::Interrupted { server, method },
            Waited::TimedOut => McpRequestError::TimedOut {
                server,
                method,
                timeout: self.timeout,
            },
            Waited::Exited | Waited::Done(_) => McpRequestError::Closed { server, method },
        }
    }
}

/// Sends one request (a new JSON-RPC id) and waits for its result.
async fn send_once(
    site: &RequestSite<'_>,
    conn: &Connection,
    params: &Value,
    clock: &mut CallClock,
    cancel: &CancellationToken,
) -> Result<ServerResult, McpRequestError> {
    let (server, method) = (site.server.to_string(), site.method.to_string());
    let request: ClientRequest =
        serde_json::from_value(json!({"method": method, "params": params})).map_err(|e| {
            McpRequestError::Build {
                server: server.clone(),
                method: method.clone(),
                reason: e.to_string(),
            }
        })?;
    let mut handle = conn
        .peer
        .send_cancellable_request(request, PeerRequestOptions::no_options())
        .await
        .map_err(|e| McpRequestError::Send {
            server: server.clone(),
            method: method.clone(),
            reason: crate::connection::describe_service_error(site.server, site.url, &e),
        })?;
    let reply = match clock.wait(&mut handle.rx, conn, cancel).await {
        Waited::Done(reply) => reply,
        waited @ (Waited::Cancelled | Waited::TimedOut) => {
            let reason = if matches!(waited, Waited::Cancelled) {
                "interrupted by the user"
            } else {
                "timed out"
            };
            let _ = handle.cancel(Some(reason.to_string())).await;
            return Err(site.ended(waited));
        }
        waited => return Err(site.ended(waited)),
    };
    match reply {
        Ok(Ok(result)) => Ok(result),
        Ok(Err(rmcp::ServiceError::McpError(e))) => Err(McpRequestError::ErrorReply {
            server,
            request: method,
            code: e.code.0,
            message: e.message.to_string(),
        }),
        Ok(Err(e)) => Err(McpRequestError::Failed {
            reason: crate::connection::describe_service_error(site.server, site.url, &e),
            server,
            method,
        }),
        Err(_) => Err(McpRequestError::Closed { server, method }),
    }
}
