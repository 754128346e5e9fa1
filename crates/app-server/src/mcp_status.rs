//! `mcpServerStatus/list`: the configured MCP servers with their tools, resources, auth
//! and connection state. A loaded thread's connections are reported live (the thread's
//! `McpConnectionManager` snapshot); with no thread loaded, the servers come from the
//! config with `runtimeStatus: null` (nothing has started them).

use crate::protocol::ThreadOverrides;
use crate::protocol::methods as m;
use crate::protocol::wire::{
    ListMcpServerStatusParams, ListMcpServerStatusResponse, McpAuthStatus,
    McpServerConnectionStatus, McpServerStatus,
};
use crate::{Conn, method, offset_page, parse_thread_id, thread_not_found};
use oi_config::mcp::{McpServerConfig, McpServerTransportConfig};
use oi_core::mcp::{McpServerState, McpServerStatus as LiveStatus};
use oi_jsonrpc::RpcError;
use oi_jsonrpc::{Execution, MethodTable, RequestContext};
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::Arc;

pub(crate) fn register(t: &mut MethodTable, conn: &Arc<Conn>) {
    method::<m::McpServerStatusList, _, _>(t, conn, Execution::Spawn, list);
}

fn auth_status(cfg: Option<&McpServerConfig>) -> McpAuthStatus {
    match cfg.map(|c| &c.transport) {
        Some(McpServerTransportConfig::Stdio { .. }) => McpAuthStatus::Unsupported,
        Some(McpServerTransportConfig::StreamableHttp {
            bearer_token_env_var: Some(_),
            ..
        }) => McpAuthStatus::BearerToken,
        _ => McpAuthStatus::Unknown,
    }
}

fn runtime_status(state: McpServerState) -> McpServerConnectionStatus {
    match state {
        McpServerState::Starting => McpServerConnectionStatus::Starting,
        McpServerState::Ready => McpServerConnectionStatus::Connected,
        McpServerState::Failed => McpServerConnectionStatus::Failed,
        McpServerState::Stopped => McpServerConnectionStatus::Cancelled,
    }
}

/// The `_meta` key that marks a listed tool the model is not offered, with the reason.
pub(crate) const WITHHELD_META: &str = "openinterpreter/withheld";

/// The tools by name; the ones the model is not offered carry the reason in their `_meta`
/// (Codex's `Tool` has no field for it, and `_meta` is the MCP place for such facts).
fn tools_by_name(tools: Vec<Value>, withheld: &[(String, String)]) -> BTreeMap<String, Value> {
    let mut by_name: BTreeMap<String, Value> = tools
        .into_iter()
        .filter_map(|t| Some((t.get("name")?.as_str()?.to_string(), t)))
        .collect();
    for (name, why) in withheld {
        if let Some(Value::Object(tool)) = by_name.get_mut(name) {
            let meta = tool
                .entry("_meta")
                .or_insert_with(|| Value::Object(Default::default()));
            if !meta.is_object() {
                *meta = Value::Object(Default::default());
            }
            if let Value::Object(meta) = meta {
                meta.insert(WITHHELD_META.into(), Value::String(why.clone()));
            }
        }
    }
    by_name
}

fn from_live(s: LiveStatus, cfg: Option<&McpServerConfig>) -> McpServerStatus {
    let failed = s.state == McpServerState::Failed;
    McpServerStatus {
        auth_status: auth_status(cfg),
        runtime_status: Some(runtime_status(s.state)),
        tools_error: if failed && s.tools.is_empty() {
            s.last_error.clone()
        } else {
            None
        },
        name: s.name,
        tools: tools_by_name(s.tools, &s.withheld_tools),
        resources: s.resources,
        resource_templates: s.resource_templates,
        protocol_version: s.protocol.map(|p| p.version),
    }
}

fn from_config(name: &str, cfg: &McpServerConfig) -> McpServerStatus {
    McpServerStatus {
        name: name.to_string(),
        tools: BTreeMap::new(),
        resources: Vec::new(),
        resource_templates: Vec::new(),
        auth_status: auth_status(Some(cfg)),
        runtime_status: (!cfg.enabled).then_some(McpServerConnectionStatus::Disabled),
        tools_error: None,
        protocol_version: None,
    }
}

async fn list(
    conn: Arc<Conn>,
    _ctx: RequestContext,
    p: ListMcpServerStatusParams,
) -> Result<ListMcpServerStatusResponse, RpcError> {
    let thread = match &p.thread_id {
        Some(raw) => {
            let id = parse_thread_id(raw)?;
            Some(conn.live_thread(&id).ok_or_else(|| {
                thread_not_found(id).with_data(serde_json::json!({
                    "hint": "the thread is not loaded in this server; call thread/resume first, or omit threadId"
                }))
            })?)
        }
        None => conn
            .manager
            .loaded_thread_ids()
            .into_iter()
            .chain(conn.ephemeral.loaded_thread_ids())
            .find_map(|id| conn.live_thread(&id)),
    };
    let mut servers: Vec<McpServerStatus> = match thread {
        Some(t) => {
            let config = t.settings();
            let live = t.mcp_status();
            let mut out: Vec<McpServerStatus> = live
                .into_iter()
                .map(|s| {
                    let cfg = config.mcp_servers.get(&s.name);
                    from_live(s, cfg)
                })
                .collect();
            // Disabled servers are not started, so the snapshot does not list them.
            for (name, cfg) in &config.mcp_servers {
                if !out.iter().any(|s| &s.name == name) {
                    out.push(from_config(name, cfg));
                }
            }
            out
        }
        None => {
            let loaded = conn.load_config(&ThreadOverrides::default()).await?;
            loaded
                .config
                .mcp_servers
                .iter()
                .map(|(name, cfg)| from_config(name, cfg))
                .collect()
        }
    };
    servers.sort_by(|a, b| a.name.cmp(&b.name));
    if let Some(name) = &p.server_name {
        servers.retain(|s| &s.name == name);
    }
    let (start, end, next) = offset_page(servers.len(), p.cursor.as_deref(), p.limit)?;
    Ok(ListMcpServerStatusResponse {
        data: servers.drain(start..end).collect(),
        next_cursor: next,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn withheld_tools_say_why_in_their_meta_and_keep_the_servers_own() {
        let tools = vec![
            json!({"name": "echo", "inputSchema": {"type": "object"}}),
            json!({"name": "long", "inputSchema": {"type": "object"},
                   "execution": {"taskSupport": "required"}, "_meta": {"vendor/x": 1}}),
        ];
        let withheld = vec![(
            "long".to_string(),
            "it needs MCP task augmentation".to_string(),
        )];
        let by_name = tools_by_name(tools, &withheld);
        assert!(by_name["echo"].get("_meta").is_none());
        assert_eq!(
            by_name["long"]["_meta"],
            json!({"vendor/x": 1, "openinterpreter/withheld": "it needs MCP task augmentation"})
        );
    }

    #[test]
    fn a_connected_server_says_which_protocol_it_speaks() {
        let live = LiveStatus {
            name: "docs".into(),
            state: McpServerState::Ready,
            transport: "streamable_http",
            tools: vec![],
            withheld_tools: vec![],
            resources: vec![],
            resource_templates: vec![],
            prompts: vec![],
            last_error: None,
            protocol: Some(oi_core::mcp::McpNegotiatedProtocol {
                version: "2026-07-28".into(),
                era: oi_core::mcp::McpProtocolEra::Discover,
                tasks: true,
            }),
        };
        let wire = serde_json::to_value(from_live(live, None)).unwrap();
        assert_eq!(wire["protocolVersion"], "2026-07-28");
        assert_eq!(wire["runtimeStatus"], "connected");
        let cfg = McpServerConfig::stdio("x", vec![]);
        let wire = serde_json::to_value(from_config("x", &cfg)).unwrap();
        assert!(wire.get("protocolVersion").is_none(), "{wire}");
    }
}
