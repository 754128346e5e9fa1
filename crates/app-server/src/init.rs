//! `initialize` in both forms, and the `initialized` notification.
//!
//! An `initialize` with `protocolVersion` is MCP's and goes to the MCP method of the same
//! connection (on `interpreter app-server` there is none: -32602 says what to send).
//! Without it, it is the app-server form: `{clientInfo, capabilities?}` →
//! `{userAgent, codexHome, platformFamily, platformOs}`. Its capabilities decide, for this
//! connection, whether experimental methods and fields are served and which notifications
//! are dropped.

use crate::protocol::methods::{Initialize, WireMethod};
use crate::protocol::wire::{InitializeParams, InitializeResponse};
use crate::{Conn, invalid, method_decoding};
use oi_jsonrpc::RpcError;
use oi_jsonrpc::{Execution, MethodTable, RequestContext};
use serde_json::{Map, Value};
use std::sync::{Arc, OnceLock};

/// The app-server-form handshake of this connection, once it happened.
#[derive(Debug, Default)]
pub(crate) struct ClientState {
    session: OnceLock<Session>,
}

#[derive(Debug)]
struct Session {
    experimental_api: bool,
}

impl ClientState {
    /// Whether experimental methods and fields may be used. Clients that never sent the
    /// app-server form (older clients of our v2 API on `mcp-server`) keep everything.
    pub(crate) fn experimental_allowed(&self) -> bool {
        self.session.get().is_none_or(|s| s.experimental_api)
    }
}

pub(crate) fn register(t: &mut MethodTable, conn: &Arc<Conn>) {
    method_decoding::<Initialize, _, _, _, _>(t, conn, Execution::Inline, initialize);
    t.notification("initialized", |_: Value| async {});
}

/// `-32600 "<descriptor> requires experimentalApi capability"` unless the client opted in.
pub(crate) fn require_experimental(conn: &Conn, descriptor: &str) -> Result<(), RpcError> {
    if conn.client.experimental_allowed() {
        Ok(())
    } else {
        Err(invalid(format!(
            "{descriptor} requires experimentalApi capability; send `capabilities: {{experimentalApi: true}}` in initialize"
        )))
    }
}

/// What `initialize` answers: the app-server form's typed result, or MCP's as it gave it.
#[derive(serde::Serialize)]
#[serde(untagged)]
enum Reply {
    App(InitializeResponse),
    Mcp(Value),
}

async fn initialize(
    conn: Arc<Conn>,
    ctx: RequestContext,
    raw: Map<String, Value>,
) -> Result<Reply, RpcError> {
    // The MCP handshake has the same method name; `protocolVersion` tells them apart.
    if raw.contains_key("protocolVersion") {
        return match conn
            .mcp_methods
            .call(Initialize::NAME, ctx, Some(Value::Object(raw)))
        {
            Some(mcp) => mcp.await.map(Reply::Mcp),
            None => Err(RpcError::invalid_params(
                Initialize::NAME,
                "this is the app server, which does not speak MCP: send `{clientInfo, capabilities?}` without `protocolVersion`, or use `interpreter mcp-server` for MCP",
            )),
        };
    }
    let p: InitializeParams = serde_json::from_value(Value::Object(raw))
        .map_err(|e| RpcError::invalid_params(Initialize::NAME, e))?;
    let caps = p.capabilities.unwrap_or_default();
    let session = Session {
        experimental_api: caps.experimental_api,
    };
    if conn.client.session.set(session).is_err() {
        return Err(invalid("Already initialized"));
    }
    conn.outgoing
        .opt_out(caps.opt_out_notification_methods.unwrap_or_default());
    let home = conn.home()?;
    tracing::info!(
        "initialize: {} {} (experimentalApi: {})",
        p.client_info.name,
        p.client_info.version,
        caps.experimental_api
    );
    Ok(Reply::App(InitializeResponse {
        user_agent: format!(
            "openinterpreter/{} ({}; {}) {}/{}",
            env!("CARGO_PKG_VERSION"),
            std::env::consts::OS,
            std::env::consts::ARCH,
            p.client_info.name,
            p.client_info.version
        ),
        codex_home: home,
        platform_family: std::env::consts::FAMILY.to_string(),
        platform_os: std::env::consts::OS.to_string(),
    }))
}
