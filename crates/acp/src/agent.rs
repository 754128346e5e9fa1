//! The agent side of one ACP connection: its method table and its sessions.
//!
//! A session is a thread of the host's engine, stored like any other (`sessions list`,
//! `resume` and the v2 API see it). The connection holds the threads of its sessions
//! (`ThreadManager::hold`); closing a session, or the connection, lets them go.

mod sessions;
mod turn;

use crate::AcpOptions;
use crate::schema::{
    AgentCapabilities, CancelNotification, ClientCapabilities, Implementation, InitializeRequest,
    InitializeResponse, McpCapabilities, PromptCapabilities, SessionCapabilities,
    SessionCloseCapabilities, SessionListCapabilities, SessionResumeCapabilities,
};
use oi_host::{Host, ServiceContext};
use oi_jsonrpc::{Execution, MethodTable, OutgoingSender, RpcError};
use serde::Serialize;
use serde_json::Value;
use sessions::AcpSession;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// The ACP error for an unknown session (`-32002`, resource not found).
pub const RESOURCE_NOT_FOUND: i64 = -32002;

/// One connection's agent.
#[derive(Clone)]
pub struct Agent {
    inner: Arc<Inner>,
}

struct Inner {
    host: Host,
    outgoing: OutgoingSender,
    options: AcpOptions,
    /// What the client declared in `initialize`; `None` before it.
    client: Mutex<Option<ClientCapabilities>>,
    sessions: Mutex<HashMap<String, Arc<AcpSession>>>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        // The client is gone: its files and terminals can no longer serve the threads.
        for s in self
            .sessions
            .get_mut()
            .unwrap_or_else(|p| p.into_inner())
            .values()
        {
            s.thread.set_client_tools(None);
        }
    }
}

impl Agent {
    /// The agent of the connection `ctx` describes.
    pub fn new(ctx: &ServiceContext, options: AcpOptions) -> Self {
        Self {
            inner: Arc::new(Inner {
                host: ctx.host.clone(),
                outgoing: ctx.connection.outgoing.clone(),
                options,
                client: Mutex::new(None),
                sessions: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// Every ACP method this agent answers.
    pub fn table(self) -> MethodTable {
        let mut t = MethodTable::new();
        let a = self.clone();
        t.request(
            "initialize",
            Execution::Inline,
            move |_ctx, p: InitializeRequest| {
                let a = a.clone();
                async move { a.initialize(p) }
            },
        );
        t.request(
            "authenticate",
            Execution::Inline,
            |_ctx, _p: serde_json::Map<String, Value>| async {
                Err(RpcError::invalid_request(
                    "this agent needs no authentication; its model provider is set in config.toml",
                ))
            },
        );
        let a = self.clone();
        t.request("session/new", Execution::Spawn, move |ctx, p| {
            let a = a.clone();
            async move { a.new_session(ctx, p).await }
        });
        let a = self.clone();
        t.request("session/load", Execution::Spawn, move |ctx, p| {
            let a = a.clone();
            async move { a.load_session(ctx, p, true).await }
        });
        let a = self.clone();
        t.request("session/resume", Execution::Spawn, move |ctx, p| {
            let a = a.clone();
            async move { a.load_session(ctx, p, false).await }
        });
        let a = self.clone();
        t.request("session/list", Execution::Spawn, move |_ctx, p| {
            let a = a.clone();
            async move { a.list_sessions(p).await }
        });
        let a = self.clone();
        t.request("session/close", Execution::Spawn, move |_ctx, p| {
            let a = a.clone();
            async move { a.close_session(p).await }
        });
        let a = self.clone();
        t.request("session/prompt", Execution::Spawn, move |ctx, p| {
            let a = a.clone();
            async move { a.prompt(ctx, p).await }
        });
        let a = self.clone();
        t.request("session/set_mode", Execution::Inline, move |_ctx, p| {
            let a = a.clone();
            async move { a.set_mode(p).await }
        });
        let a = self.clone();
        t.request(
            "session/set_config_option",
            Execution::Inline,
            move |_ctx, p| {
                let a = a.clone();
                async move { a.set_config_option(p).await }
            },
        );
        let a = self;
        t.notification("session/cancel", move |p: CancelNotification| {
            let a = a.clone();
            async move { a.cancel(&p.session_id.0) }
        });
        t
    }

    fn initialize(&self, p: InitializeRequest) -> Result<Value, RpcError> {
        *lock(&self.inner.client) = Some(p.client_capabilities);
        let caps = AgentCapabilities::new()
            .load_session(true)
            .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
            .mcp_capabilities(McpCapabilities::new().http(true))
            .session_capabilities(
                SessionCapabilities::new()
                    .list(SessionListCapabilities::new())
                    .resume(SessionResumeCapabilities::new())
                    .close(SessionCloseCapabilities::new()),
            );
        // ACP v1 is the version this agent speaks; a client asking for a newer one reads
        // this and decides.
        let response = InitializeResponse::new(agent_client_protocol::schema::ProtocolVersion::V1)
            .agent_capabilities(caps)
            .agent_info(
                Implementation::new("open-interpreter", env!("CARGO_PKG_VERSION"))
                    .title("Open Interpreter".to_string()),
            );
        to_value(&response)
    }

    /// The client's capabilities; an error before `initialize`.
    fn client(&self) -> Result<ClientCapabilities, RpcError> {
        lock(&self.inner.client).clone().ok_or_else(|| {
            RpcError::invalid_request("the connection is not initialized; send `initialize` first")
        })
    }

    /// The session called `id` on this connection.
    fn session(&self, id: &str) -> Result<Arc<AcpSession>, RpcError> {
        lock(&self.inner.sessions).get(id).cloned().ok_or_else(|| {
            RpcError::new(
                RESOURCE_NOT_FOUND,
                format!(
                    "unknown session `{id}`; start one with session/new, or open a stored one with session/load"
                ),
            )
        })
    }

    fn cancel(&self, id: &str) {
        match lock(&self.inner.sessions).get(id) {
            Some(s) => s.cancel_prompt(),
            None => tracing::debug!("session/cancel for unknown session {id}"),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn to_value(v: &impl Serialize) -> Result<Value, RpcError> {
    serde_json::to_value(v).map_err(|e| RpcError::internal(format!("could not encode: {e}")))
}
