//! The MCP service: lifecycle (`initialize`, `ping`), the tool methods, and the empty
//! resource/prompt catalogs, declared as one method table.

use crate::engine::Engine;
use crate::progress::Progress;
use crate::tool_runner::{CallEnv, tool_result};
use crate::tools;
use oi_jsonrpc::{Execution, MethodTable, RequestContext};
use oi_jsonrpc::{RESOURCE_NOT_FOUND, RpcError};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// Protocol versions we speak, newest first. The older two are what Codex-era clients
/// still send.
pub const SUPPORTED_PROTOCOL_VERSIONS: &[&str] =
    &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

pub const SERVER_NAME: &str = "openinterpreter-mcp-server";

/// More simultaneous tool calls than this are refused (each one runs an agent turn).
pub const MAX_CONCURRENT_CALLS: usize = 64;

const INSTRUCTIONS: &str = "Use the `codex` tool to start an Open Interpreter agent session with a prompt; \
it returns the agent's final message and a threadId. Continue the same session with `codex-reply` \
and that threadId. Progress streams as `codex/event` notifications; approval prompts arrive as \
elicitation requests.";

#[derive(Debug)]
pub struct ClientSession {
    pub protocol_version: String,
    pub supports_elicitation: bool,
    pub client_name: String,
}

pub struct McpService {
    engine: Arc<dyn Engine>,
    client: OnceLock<ClientSession>,
    running_calls: AtomicUsize,
    server_cwd: PathBuf,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InitializeParams {
    protocol_version: String,
    #[serde(default)]
    capabilities: Option<Map<String, Value>>,
    #[serde(default)]
    client_info: Option<ClientInfo>,
}

#[derive(Deserialize)]
struct ClientInfo {
    name: String,
    #[serde(default)]
    version: Option<String>,
}

#[derive(Deserialize)]
struct Empty {}

#[derive(Deserialize)]
struct ListParams {
    #[serde(default)]
    #[allow(dead_code)] // accepted for spec conformance; everything fits in one page
    cursor: Option<String>,
}

#[derive(Deserialize)]
struct CallToolParams {
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
    #[serde(default, rename = "_meta")]
    meta: Option<RequestMeta>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct RequestMeta {
    #[serde(default)]
    progress_token: Option<Value>,
}

#[derive(Deserialize)]
struct ReadResourceParams {
    uri: String,
}

#[derive(Deserialize)]
struct GetPromptParams {
    name: String,
}

#[derive(Deserialize)]
struct SetLevelParams {
    #[allow(dead_code)] // nothing is logged over the wire; logs go to stderr
    level: String,
}

impl McpService {
    pub fn new(engine: Arc<dyn Engine>, server_cwd: PathBuf) -> Arc<Self> {
        Arc::new(Self {
            engine,
            client: OnceLock::new(),
            running_calls: AtomicUsize::new(0),
            server_cwd,
        })
    }

    pub fn engine(&self) -> &Arc<dyn Engine> {
        &self.engine
    }

    /// The session negotiated by `initialize`, if it happened.
    pub fn client(&self) -> Option<&ClientSession> {
        self.client.get()
    }

    /// Every method this service answers.
    pub fn methods(self: &Arc<Self>) -> MethodTable {
        let mut t = MethodTable::new();
        let s = self.clone();
        t.request(
            "initialize",
            Execution::Inline,
            move |_ctx, p: InitializeParams| {
                let s = s.clone();
                async move { s.initialize(p) }
            },
        );
        t.request("ping", Execution::Inline, |_ctx, _: Empty| async {
            Ok(json!({}))
        });
        t.request(
            "tools/list",
            Execution::Inline,
            |_ctx, _: ListParams| async { Ok(tools::tools_list()) },
        );
        let s = self.clone();
        t.request(
            "tools/call",
            Execution::Spawn,
            move |ctx, p: CallToolParams| {
                let s = s.clone();
                async move { s.call_tool(ctx, p).await }
            },
        );
        t.request(
            "resources/list",
            Execution::Inline,
            |_ctx, _: ListParams| async { Ok(json!({ "resources": [] })) },
        );
        t.request(
            "resources/templates/list",
            Execution::Inline,
            |_ctx, _: ListParams| async { Ok(json!({ "resourceTemplates": [] })) },
        );
        t.request(
            "resources/read",
            Execution::Inline,
            |_ctx, p: ReadResourceParams| async move {
                Err(RpcError::new(
                    RESOURCE_NOT_FOUND,
                    format!(
                        "Resource not found: {} (this server has no resources)",
                        p.uri
                    ),
                )
                .with_data(json!({ "uri": p.uri })))
            },
        );
        t.request(
            "prompts/list",
            Execution::Inline,
            |_ctx, _: ListParams| async { Ok(json!({ "prompts": [] })) },
        );
        t.request(
            "prompts/get",
            Execution::Inline,
            |_ctx, p: GetPromptParams| async move {
                Err(RpcError::invalid_params(
                    "prompts/get",
                    format!("unknown prompt `{}` (this server has no prompts)", p.name),
                ))
            },
        );
        t.request(
            "logging/setLevel",
            Execution::Inline,
            |_ctx, _: SetLevelParams| async { Ok(json!({})) },
        );
        t.notification("notifications/initialized", |_: Value| async {});
        t.notification("notifications/roots/list_changed", |_: Value| async {});
        t.notification("notifications/progress", |_: Value| async {});
        t
    }

    fn initialize(&self, p: InitializeParams) -> Result<Value, RpcError> {
        let version = if SUPPORTED_PROTOCOL_VERSIONS.contains(&p.protocol_version.as_str()) {
            p.protocol_version.clone()
        } else {
            // Counter-offer our newest; the client decides whether it can speak it.
            SUPPORTED_PROTOCOL_VERSIONS[0].to_string()
        };
        let supports_elicitation = p
            .capabilities
            .as_ref()
            .and_then(|c| c.get("elicitation"))
            .is_some_and(|e| !e.is_null() && e != &Value::Bool(false));
        let client_name = p
            .client_info
            .as_ref()
            .map(|c| format!("{} {}", c.name, c.version.as_deref().unwrap_or("")))
            .unwrap_or_else(|| "unnamed client".into());
        let session = ClientSession {
            protocol_version: version.clone(),
            supports_elicitation,
            client_name,
        };
        tracing::info!(
            "initialize: {session:?} (client asked for {})",
            p.protocol_version
        );
        if self.client.set(session).is_err() {
            return Err(RpcError::new(
                oi_jsonrpc::INVALID_REQUEST,
                "initialize called more than once",
            ));
        }
        Ok(json!({
            "protocolVersion": version,
            "capabilities": {
                "tools": { "listChanged": true },
                "resources": {},
                "prompts": {},
            },
            "serverInfo": {
                "name": SERVER_NAME,
                "title": "Open Interpreter",
                "version": env!("CARGO_PKG_VERSION"),
            },
            "instructions": INSTRUCTIONS,
        }))
    }

    async fn call_tool(
        self: Arc<Self>,
        ctx: RequestContext,
        p: CallToolParams,
    ) -> Result<Value, RpcError> {
        if p.name != tools::CODEX && p.name != tools::CODEX_REPLY {
            return Err(RpcError::invalid_params(
                "tools/call",
                format!(
                    "unknown tool `{}`; this server has `{}` and `{}`",
                    p.name,
                    tools::CODEX,
                    tools::CODEX_REPLY
                ),
            ));
        }
        let running = self.running_calls.fetch_add(1, Ordering::SeqCst);
        let _slot = CallSlot(&self.running_calls);
        if running >= MAX_CONCURRENT_CALLS {
            return Ok(tool_result(
                None,
                format!(
                    "Too many tool calls are running ({MAX_CONCURRENT_CALLS}); wait for some to finish and try again."
                ),
                true,
            ));
        }
        let env = CallEnv {
            engine: self.engine.clone(),
            progress: p
                .meta
                .and_then(|m| m.progress_token)
                .filter(|t| !t.is_null())
                .map(Progress::new),
            client_supports_elicitation: self.client().is_some_and(|c| c.supports_elicitation),
            ctx,
        };
        Ok(if p.name == tools::CODEX {
            match tools::parse_codex_args(p.arguments.as_ref(), &self.server_cwd) {
                Ok(args) => env.codex(args).await,
                Err(msg) => tool_result(None, msg, true),
            }
        } else {
            match tools::parse_reply_args(p.arguments.as_ref()) {
                Ok(args) => env.reply(args).await,
                Err(msg) => tool_result(None, msg, true),
            }
        })
    }
}

struct CallSlot<'a>(&'a AtomicUsize);

impl Drop for CallSlot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}
