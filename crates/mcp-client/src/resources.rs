//! Resources and prompts: what a ready server lists (for status displays) and the requests
//! behind the model's `list_mcp_resources`, `list_mcp_resource_templates` and
//! `read_mcp_resource` tools.

use crate::McpRequestError;
use crate::connection::Connection;
use crate::manager::{McpConnectionManager, ServerEntry};
use rmcp::model::ClientRequest;
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
                matches!(*e.state.borrow(), crate::manager::ConnState::Ready(_))
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
    /// `notifications/cancelled`). The error is a one-line message for the model.
    pub(crate) async fn request(
        &self,
        server: &str,
        method: &str,
        params: Value,
        cancel: CancellationToken,
    ) -> Result<Value, McpRequestError> {
        let entry = self.entry(server)?;
        let conn = self.connection(entry, &cancel).await?;
        let request: ClientRequest =
            serde_json::from_value(json!({"method": method, "params": params})).map_err(|e| {
                McpRequestError::Build {
                    server: server.to_string(),
                    method: method.to_string(),
                    reason: e.to_string(),
                }
            })?;
        let mut handle = conn
            .peer
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .map_err(|e| McpRequestError::Send {
                server: server.to_string(),
                method: method.to_string(),
                reason: crate::connection::describe_service_error(
                    server,
                    crate::connection::server_url(&entry.config),
                    &e,
                ),
            })?;
        let timeout = entry.config.tool_timeout_or_default();
        tokio::select! {
            reply = &mut handle.rx => match reply {
                Ok(Ok(result)) => serde_json::to_value(result)
                    .map_err(|e| McpRequestError::Unreadable {
                        server: server.to_string(),
                        method: method.to_string(),
                        reason: e.to_string(),
                    }),
                Ok(Err(rmcp::ServiceError::McpError(e))) => Err(McpRequestError::ErrorReply {
                    server: server.to_string(),
                    request: method.to_string(),
                    code: e.code.0,
                    message: e.message.to_string(),
                }),
                Ok(Err(e)) => Err(McpRequestError::Failed {
                    server: server.to_string(),
                    method: method.to_string(),
                    reason: crate::connection::describe_service_error(
                        server,
                        crate::connection::server_url(&entry.config),
                        &e,
                    ),
                }),
                Err(_) => Err(McpRequestError::Closed {
                    server: server.to_string(),
                    method: method.to_string(),
                }),
            },
            _ = cancel.cancelled() => {
                let _ = handle.cancel(Some("interrupted by the user".to_string())).await;
                Err(McpRequestError::Interrupted {
                    server: server.to_string(),
                    method: method.to_string(),
                })
            }
            _ = tokio::time::sleep(timeout) => {
                let _ = handle.cancel(Some("timed out".to_string())).await;
                Err(McpRequestError::TimedOut {
                    server: server.to_string(),
                    method: method.to_string(),
                    timeout,
                })
            }
        }
    }
}
