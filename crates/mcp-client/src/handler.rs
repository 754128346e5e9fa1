//! Our side of each MCP connection: answers the server's questions (`roots/list`,
//! `elicitation/create`, `sampling/createMessage`) through one [`Responder`], whichever way
//! they arrive, and routes server notifications (progress, `tools/list_changed`, log messages).

// rmcp marks roots, sampling and logging deprecated for the 2026-07-28 protocol; they still
// work there (deprecated, not removed), and servers such as server-everything rely on roots.
#![allow(deprecated)]

use crate::sampling::{SamplingHandler, SamplingSite, request_from_params, result_from_reply};
use crate::{ElicitationHandler, McpProgress};
use futures::future::BoxFuture;
use oi_config::mcp::McpSamplingMode;
use oi_protocol::protocol::ElicitationAction as OurAction;
use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, Implementation, ListRootsResult,
    LoggingMessageNotificationParam, ProgressNotificationParam, ProgressToken, ProtocolVersion,
    Root,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::{mpsc, watch};

/// Progress token → where that call's progress goes.
#[derive(Clone, Default)]
pub(crate) struct ProgressRouter {
    routes: Arc<Mutex<HashMap<ProgressToken, mpsc::UnboundedSender<McpProgress>>>>,
}

/// Unregisters its token when dropped.
pub(crate) struct ProgressRegistration {
    router: ProgressRouter,
    token: ProgressToken,
}

impl Drop for ProgressRegistration {
    fn drop(&mut self) {
        if let Ok(mut routes) = self.router.routes.lock() {
            routes.remove(&self.token);
        }
    }
}

impl ProgressRouter {
    pub(crate) fn register(
        &self,
        token: ProgressToken,
        tx: mpsc::UnboundedSender<McpProgress>,
    ) -> ProgressRegistration {
        if let Ok(mut routes) = self.routes.lock() {
            routes.insert(token.clone(), tx);
        }
        ProgressRegistration {
            router: self.clone(),
            token,
        }
    }

    fn dispatch(&self, p: ProgressNotificationParam) {
        let tx = self
            .routes
            .lock()
            .ok()
            .and_then(|r| r.get(&p.progress_token).cloned());
        if let Some(tx) = tx {
            let _ = tx.send(McpProgress {
                progress: p.progress,
                total: p.total,
                message: p.message,
            });
        }
    }
}

/// Called (on a fresh task) when the server says its tool list changed.
pub(crate) type ToolsChangedFn =
    Arc<dyn Fn(rmcp::Peer<RoleClient>) -> BoxFuture<'static, ()> + Send + Sync>;

/// What answers a server's questions: its elicitations, sampling and `roots/list`, whether
/// they arrive as server-initiated requests (2025-11-25) or inside a multi round-trip result
/// or a task's `inputRequests` (2026-07-28). One per connection, shared by the rmcp handler
/// and the request loops.
pub(crate) struct Responder {
    pub server: String,
    /// The server's configured roots, resolved; empty: the `roots` capability is not offered.
    pub roots: Vec<PathBuf>,
    pub elicitation: Arc<dyn ElicitationHandler>,
    /// Number of elicitations and sampling requests the server waits on us for; tool
    /// timeouts pause while it is non-zero.
    pub pending_elicitations: watch::Sender<usize>,
    /// Where `sampling/createMessage` goes; `None`: the capability is not offered.
    pub sampling: Option<Arc<dyn SamplingHandler>>,
    /// The server's `sampling` setting (whether each request asks the user).
    pub sampling_mode: McpSamplingMode,
    /// How long the model may take to answer one sampling request.
    pub sampling_timeout: Duration,
    /// Numbers the questions of multi round-trip results: their keys are unique only within
    /// one request, and two calls may ask at once.
    pub(crate) questions: std::sync::atomic::AtomicU64,
}

#[derive(Clone)]
pub(crate) struct Handler {
    pub responder: Arc<Responder>,
    pub progress: ProgressRouter,
    pub on_tools_changed: ToolsChangedFn,
}

/// Counts a request the server waits on us for, for as long as it lives.
struct PendingRequest<'a>(&'a watch::Sender<usize>);

impl<'a> PendingRequest<'a> {
    fn new(count: &'a watch::Sender<usize>) -> Self {
        count.send_modify(|n| *n += 1);
        Self(count)
    }
}

impl Drop for PendingRequest<'_> {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

/// The protocol version our `initialize` handshake asks for: the last one that has the
/// handshake. Servers that know only older versions counter-offer theirs.
pub(crate) const LEGACY_PROTOCOL_VERSION: ProtocolVersion = ProtocolVersion::V_2025_11_25;

/// What we tell servers about ourselves: elicitation (form), roots only when the server's
/// config lists some, sampling only when its config enables it, and the Tasks extension
/// (`io.modelcontextprotocol/tasks`: we follow a tool call that becomes a task). Offering
/// roots is not harmless: server-filesystem, for one, replaces the directories in its
/// arguments with the client's roots; offering sampling invites the server to spend the
/// user's tokens. The same capabilities go into `initialize` and into every 2026-07-28
/// request's `_meta`.
pub(crate) fn client_config(offer_roots: bool, offer_sampling: bool) -> ClientConfig {
    let mut capabilities = serde_json::json!({
        "elicitation": {"form": {}},
        "extensions": {rmcp::model::TASKS_EXTENSION_ID: {}},
    });
    if offer_roots {
        capabilities["roots"] = serde_json::json!({"listChanged": false});
    }
    if offer_sampling {
        // Plain sampling: no `tools` (SEP-1577) and no `context` (includeContext).
        capabilities["sampling"] = serde_json::json!({});
    }
    let capabilities: ClientCapabilities = serde_json::from_value(capabilities).unwrap_or_default();
    ClientConfig::new(
        capabilities,
        Implementation::new("open-interpreter", env!("CARGO_PKG_VERSION"))
            .with_title("Open Interpreter"),
    )
    .with_protocol_version(LEGACY_PROTOCOL_VERSION)
}

impl Responder {
    /// Sampling is offered when the server's config enables it and the engine serves it.
    pub(crate) fn offers_sampling(&self) -> bool {
        self.sampling.is_some() && self.sampling_mode.is_enabled()
    }

    /// An id for the question `key` of a multi round-trip result, unique on this connection
    /// (front ends answer by it).
    pub(crate) fn question_id(&self, key: &str) -> serde_json::Value {
        let n = self
            .questions
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        serde_json::Value::String(format!("{key}#{n}"))
    }

    /// `sampling/createMessage`: checked, bounded and handed to the engine's model; an error
    /// is what the server is told.
    pub(crate) async fn sample(
        &self,
        params: CreateMessageRequestParams,
        cancel: tokio_util::sync::CancellationToken,
    ) -> Result<CreateMessageResult, rmcp::ErrorData> {
        let Some(sampling) = self.sampling.as_ref().filter(|_| self.offers_sampling()) else {
            return Err(rmcp::ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!(
                    "sampling is not enabled for MCP server `{}` (set `sampling = \"prompt\"` in [mcp_servers.{}] to allow it)",
                    self.server, self.server
                ),
                None,
            ));
        };
        let site = SamplingSite {
            server: &self.server,
            mode: self.sampling_mode,
            timeout: self.sampling_timeout,
            cancel,
        };
        let request = request_from_params(site, params).map_err(|e| e.into_error_data())?;
        tracing::info!(
            server = %self.server,
            max_tokens = request.max_tokens,
            messages = request.messages.len(),
            "sampling/createMessage"
        );
        // The calling tool's timeout waits while the server waits on us.
        let _pending = PendingRequest::new(&self.pending_elicitations);
        // Not raced against the cancel token here: the handler watches `request.cancel` and
        // cleans up what it started (a pending approval) before it returns.
        let answer = sampling.sample(request).await;
        answer.map(result_from_reply).map_err(|e| {
            tracing::info!(server = %self.server, "sampling refused: {e}");
            e.into_error_data()
        })
    }

    /// `roots/list`: the server's configured roots.
    pub(crate) fn list_roots(&self) -> ListRootsResult {
        tracing::debug!(server = %self.server, roots = ?self.roots, "roots/list");
        ListRootsResult::new(
            self.roots
                .iter()
                .map(|root| {
                    let name = root
                        .file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_else(|| root.display().to_string());
                    Root::new(file_uri(root)).with_name(name)
                })
                .collect(),
        )
    }

    /// `elicitation/create`: the question goes to whoever answers for this session (the
    /// user, `exec`'s policy, our own MCP client); a withdrawn question is a cancel. An
    /// accepted form gets its schema's defaults for the fields left out (SEP-1034).
    pub(crate) async fn elicit(
        &self,
        id: serde_json::Value,
        request: ElicitRequestParams,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> ElicitResult {
        let params = serde_json::to_value(&request).unwrap_or(serde_json::Value::Null);
        let pending = PendingRequest::new(&self.pending_elicitations);
        let answer = tokio::select! {
            r = self.elicitation.elicit(self.server.clone(), id, params.clone()) => Some(r),
            // The server withdrew the request (notifications/cancelled), or the call it
            // belongs to ended.
            _ = cancel.cancelled() => None,
        };
        drop(pending);
        let Some(answer) = answer else {
            return ElicitResult::new(ElicitationAction::Cancel);
        };
        let action = match answer.action {
            OurAction::Accept => ElicitationAction::Accept,
            OurAction::Decline => ElicitationAction::Decline,
            OurAction::Cancel => ElicitationAction::Cancel,
        };
        let accepted = action == ElicitationAction::Accept;
        let mut result = ElicitResult::new(action);
        let schema = params.get("requestedSchema").cloned().unwrap_or_default();
        if accepted
            && let Some(content) = crate::elicit_defaults::with_defaults(&schema, answer.content)
        {
            result = result.with_content(content);
        }
        result
    }
}

/// `file://` URI for a local path (percent-encoding the bytes URIs cannot carry).
pub(crate) fn file_uri(path: &std::path::Path) -> String {
    let mut out = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        client_config(
            !self.responder.roots.is_empty(),
            self.responder.offers_sampling(),
        )
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, rmcp::ErrorData> {
        self.responder
            .sample(params, context.ct.child_token())
            .await
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, rmcp::ErrorData> {
        Ok(self.responder.list_roots())
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, rmcp::ErrorData> {
        let id = serde_json::to_value(&context.id).unwrap_or(serde_json::Value::Null);
        Ok(self.responder.elicit(id, request, &context.ct).await)
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.dispatch(params);
    }

    async fn on_tool_list_changed(&self, context: NotificationContext<RoleClient>) {
        // Refetch off the service loop: the listing is a request whose reply that loop delivers.
        tokio::spawn((self.on_tools_changed)(context.peer));
    }

    async fn on_logging_message(
        &self,
        params: LoggingMessageNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        tracing::debug!(server = %self.responder.server, level = ?params.level, "{}", params.data);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_are_encoded() {
        assert_eq!(
            file_uri(std::path::Path::new("/tmp/a b/ü")),
            "file:///tmp/a%20b/%C3%BC"
        );
    }

    #[test]
    fn elicitation_fields_reach_the_front_end_in_the_servers_order() {
        let wire = r#"{"message": "m", "requestedSchema": {"type": "object", "properties": {
            "zeta": {"type": "string"}, "alpha": {"type": "boolean"}, "mid": {"type": "number"}}}}"#;
        let request: ElicitRequestParams = serde_json::from_str(wire).unwrap();
        // What `create_elicitation` hands to the front end.
        let params = serde_json::to_value(&request).unwrap();
        let names: Vec<&String> = params["requestedSchema"]["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect();
        assert_eq!(names, ["zeta", "alpha", "mid"]);
    }

    #[test]
    fn initialize_params_pin_the_version_and_capabilities() {
        let v = serde_json::to_value(client_config(true, false)).unwrap();
        assert_eq!(v["protocolVersion"], "2025-11-25");
        assert_eq!(
            v["capabilities"]["extensions"],
            serde_json::json!({"io.modelcontextprotocol/tasks": {}})
        );
        assert_eq!(
            v["capabilities"]["elicitation"],
            serde_json::json!({"form":{}})
        );
        assert!(v["capabilities"].get("roots").is_some());
        assert!(v["capabilities"].get("sampling").is_none());
        assert_eq!(v["clientInfo"]["name"], "open-interpreter");
        let without = serde_json::to_value(client_config(false, false)).unwrap();
        assert!(without["capabilities"].get("roots").is_none(), "{without}");
        assert_eq!(
            without["capabilities"]["elicitation"],
            serde_json::json!({"form":{}})
        );
        let sampling = serde_json::to_value(client_config(false, true)).unwrap();
        assert_eq!(sampling["capabilities"]["sampling"], serde_json::json!({}));
    }
}
