//! The model's view of MCP resources: `list_mcp_resources`, `list_mcp_resource_templates`
//! and `read_mcp_resource` (Codex's names and argument shapes), offered while at least one
//! ready server advertises the `resources` capability. Each call is reported with
//! `mcp_tool_call_begin/end` like any MCP call; results are JSON text for the model.

use super::call::{ToolCall, ToolOutcome, parse_args};
use crate::session::Session;
use oi_mcp_client::{McpConnectionManager, truncate_middle};
use oi_protocol::models::ToolSpec;
use oi_protocol::protocol::{EventMsg, McpInvocation, McpToolCallBeginEvent, McpToolCallEndEvent};
use serde::Deserialize;
use serde_json::{Value, json};
use std::sync::Arc;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

const LIST_RESOURCES: &str = "list_mcp_resources";
const LIST_TEMPLATES: &str = "list_mcp_resource_templates";
const READ_RESOURCE: &str = "read_mcp_resource";

/// Pages read per server when listing every server's resources at once.
const MAX_PAGES_PER_SERVER: usize = 10;

pub(crate) fn is_resource_tool(name: &str) -> bool {
    matches!(name, LIST_RESOURCES | LIST_TEMPLATES | READ_RESOURCE)
}

/// The three tool specs; `servers` (those with resources) are named in the descriptions so
/// the model knows what to pass.
pub(crate) fn specs(servers: &[String]) -> Vec<ToolSpec> {
    let names = servers.join(", ");
    let list_params = |what: &str| {
        json!({
            "type": "object",
            "properties": {
                "server": {"type": "string", "description": format!("Only this MCP server's {what}; omit to list every server's.")},
                "cursor": {"type": "string", "description": "The nextCursor of a previous call, to get the next page (needs `server`)."}
            },
            "additionalProperties": false
        })
    };
    vec![
        ToolSpec {
            name: LIST_RESOURCES.into(),
            description: format!(
                "Lists the resources (files, documents, data) that MCP servers offer as context. Read one with read_mcp_resource. Servers with resources: {names}."
            ),
            parameters: list_params("resources"),
        },
        ToolSpec {
            name: LIST_TEMPLATES.into(),
            description: format!(
                "Lists MCP resource templates: URI patterns such as `notes://{{id}}` that read_mcp_resource accepts once filled in. Servers with resources: {names}."
            ),
            parameters: list_params("resource templates"),
        },
        ToolSpec {
            name: READ_RESOURCE.into(),
            description: format!(
                "Reads one MCP resource by its URI (from list_mcp_resources or a filled-in template). Servers with resources: {names}."
            ),
            parameters: json!({
                "type": "object",
                "properties": {
                    "server": {"type": "string", "description": "The MCP server that has the resource."},
                    "uri": {"type": "string", "description": "The resource URI."}
                },
                "required": ["server", "uri"],
                "additionalProperties": false
            }),
        },
    ]
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    server: Option<String>,
    cursor: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReadArgs {
    server: String,
    uri: String,
}

pub(crate) async fn handle(
    sess: &Arc<Session>,
    call: &ToolCall<'_>,
    cancel: &CancellationToken,
) -> ToolOutcome {
    let Some(manager) = sess.mcp.clone() else {
        return ToolOutcome::err("MCP servers are not available in this thread");
    };
    let parsed: Result<(Option<String>, Request), ToolOutcome> = match call.name {
        READ_RESOURCE => parse_args::<ReadArgs>(
            call.name,
            call.arguments,
            r#"{"server": "docs", "uri": "notes://readme"}"#,
        )
        .map(|a| (Some(a.server.clone()), Request::Read(a))),
        _ => parse_args::<ListArgs>(call.name, call.arguments, r#"{"server": "docs"}"#).map(|a| {
            let templates = call.name == LIST_TEMPLATES;
            (a.server.clone(), Request::List { args: a, templates })
        }),
    };
    let (server, request) = match parsed {
        Ok(p) => p,
        Err(outcome) => return outcome,
    };
    let invocation = McpInvocation {
        server: server.unwrap_or_default(),
        tool: call.name.to_string(),
        arguments: serde_json::from_str(call.arguments).ok(),
    };
    sess.send(
        call.turn_id,
        EventMsg::McpToolCallBegin(McpToolCallBeginEvent {
            call_id: call.call_id.to_string(),
            invocation: invocation.clone(),
        }),
    );
    let started = Instant::now();
    let result = match request {
        Request::List { args, templates } => list(&manager, args, templates, cancel).await,
        Request::Read(args) => read(&manager, args, cancel).await,
    };
    sess.send(
        call.turn_id,
        EventMsg::McpToolCallEnd(McpToolCallEndEvent {
            call_id: call.call_id.to_string(),
            invocation,
            duration: started.elapsed().into(),
            result: result
                .as_ref()
                .map(|v| json!({"content": [{"type": "text", "text": v.to_string()}]}))
                .map_err(Clone::clone),
        }),
    );
    let budget = sess.turn_context().config.tool_output_max_bytes;
    match result {
        Ok(v) => ToolOutcome::ok(truncate_middle(&v.to_string(), budget)),
        Err(e) => ToolOutcome::err(e),
    }
}

enum Request {
    List { args: ListArgs, templates: bool },
    Read(ReadArgs),
}

async fn list(
    manager: &McpConnectionManager,
    args: ListArgs,
    templates: bool,
    cancel: &CancellationToken,
) -> Result<Value, String> {
    let key = if templates {
        "resourceTemplates"
    } else {
        "resources"
    };
    let page = |server: String, cursor: Option<String>| async move {
        let result = if templates {
            manager
                .list_resource_templates(&server, cursor, cancel.child_token())
                .await
        } else {
            manager
                .list_resources(&server, cursor, cancel.child_token())
                .await
        };
        // What the model reads: the error's one line.
        result.map_err(|e| e.to_string())
    };
    if let Some(server) = args.server {
        let result = page(server.clone(), args.cursor).await?;
        let mut out = json!({"server": server, key: result.get(key).cloned().unwrap_or(json!([]))});
        if let Some(next) = result.get("nextCursor").filter(|c| !c.is_null()) {
            out["nextCursor"] = next.clone();
        }
        return Ok(out);
    }
    if args.cursor.is_some() {
        return Err(
            "`cursor` needs `server`: pass the server whose nextCursor it is, e.g. {\"server\": \"docs\", \"cursor\": \"...\"}".to_string(),
        );
    }
    // Every server with resources; each item says which server it came from.
    let mut items = Vec::new();
    let mut errors = Vec::new();
    for server in manager.servers_with_resources() {
        let mut cursor = None;
        for _ in 0..MAX_PAGES_PER_SERVER {
            match page(server.clone(), cursor.take()).await {
                Ok(result) => {
                    for item in result
                        .get(key)
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        let mut item = item.clone();
                        if let Some(obj) = item.as_object_mut() {
                            obj.insert("server".into(), json!(server));
                        }
                        items.push(item);
                    }
                    cursor = result
                        .get("nextCursor")
                        .and_then(Value::as_str)
                        .map(str::to_string);
                    if cursor.is_none() {
                        break;
                    }
                }
                Err(e) => {
                    errors.push(json!({"server": server, "error": e}));
                    break;
                }
            }
        }
    }
    let mut out = json!({ key: items });
    if !errors.is_empty() {
        out["errors"] = Value::Array(errors);
    }
    Ok(out)
}

async fn read(
    manager: &McpConnectionManager,
    args: ReadArgs,
    cancel: &CancellationToken,
) -> Result<Value, String> {
    let result = manager
        .read_resource(&args.server, &args.uri, cancel.child_token())
        .await
        .map_err(|e| e.to_string())?;
    let mut contents = result.get("contents").cloned().unwrap_or(json!([]));
    // Base64 blobs mean nothing to the model as text; say what was there instead.
    for item in contents.as_array_mut().into_iter().flatten() {
        if let Some(obj) = item.as_object_mut()
            && let Some(blob) = obj.remove("blob")
        {
            let len = blob.as_str().map_or(0, str::len);
            obj.insert(
                "blob".into(),
                json!(format!("[binary content, {len} base64 bytes, omitted]")),
            );
        }
    }
    Ok(json!({"server": args.server, "uri": args.uri, "contents": contents}))
}
