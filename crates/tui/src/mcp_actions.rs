//! The MCP requests behind `/mcp__server__prompt` and `@server:uri` mentions, kept out of
//! the app state so it stays pure: the catalog from the thread's status snapshot,
//! `prompts/get`, and reading the mentioned resources into the message.

use crate::app::McpCatalog;
use oi_core::Thread;
use oi_protocol::user_input::UserInput;
use tokio_util::sync::CancellationToken;

/// What the thread's MCP servers offer the user now.
pub(crate) fn catalog(thread: &Thread) -> McpCatalog {
    McpCatalog::from_status(&thread.mcp_status())
}

/// What the thread's ready MCP servers offer, asked of them now (`prompts/list`,
/// `resources/list`, every page); the status snapshot's lists for servers that do not
/// answer (a server without prompts answers "method not found").
pub(crate) async fn live_catalog(thread: &Thread) -> McpCatalog {
    let status = thread.mcp_status();
    let mut catalog = McpCatalog::from_status(&status);
    let Some(manager) = thread.mcp_manager() else {
        return catalog;
    };
    for s in status
        .iter()
        .filter(|s| s.state == oi_core::mcp::McpServerState::Ready)
    {
        let prompts = all_pages(
            |cursor| manager.list_prompts(&s.name, cursor, CancellationToken::new()),
            "prompts",
        )
        .await;
        let resources = all_pages(
            |cursor| manager.list_resources(&s.name, cursor, CancellationToken::new()),
            "resources",
        )
        .await;
        catalog.add_server(
            &s.name,
            prompts.as_deref().unwrap_or(&s.prompts),
            resources.as_deref().unwrap_or(&s.resources),
        );
    }
    catalog
}

/// Pages of a list method, following `nextCursor` (at most 20 pages); `None` if the first
/// page fails.
async fn all_pages<F, Fut, E>(mut list: F, key: &str) -> Option<Vec<serde_json::Value>>
where
    F: FnMut(Option<String>) -> Fut,
    Fut: std::future::Future<Output = Result<serde_json::Value, E>>,
{
    let mut out = Vec::new();
    let mut cursor = None;
    for page in 0..20 {
        let result = match list(cursor.take()).await {
            Ok(r) => r,
            Err(_) if page == 0 => return None,
            Err(_) => break,
        };
        out.extend(
            result
                .get(key)
                .and_then(|v| v.as_array())
                .cloned()
                .unwrap_or_default(),
        );
        match result.get("nextCursor").and_then(|c| c.as_str()) {
            Some(c) if !c.is_empty() => cursor = Some(c.to_string()),
            _ => break,
        }
    }
    Some(out)
}

/// `prompts/get`, as the text and images to send.
pub(crate) async fn get_prompt(
    thread: &Thread,
    server: &str,
    prompt: &str,
    arguments: serde_json::Map<String, serde_json::Value>,
) -> Result<oi_core::mcp::prompts::PromptInput, String> {
    let manager = thread.mcp_manager().ok_or_else(|| {
        format!("no MCP servers run in this session, so `{server}` has no prompts")
    })?;
    let result = manager
        .get_prompt(server, prompt, arguments, CancellationToken::new())
        .await
        .map_err(|e| e.to_string())?;
    Ok(oi_core::mcp::prompts::prompt_input(&result))
}

/// Each mentioned resource read, as one text item per resource after the message's own
/// items: `Resource @server:uri:` and its contents. The first failure is the error.
pub(crate) async fn read_mentions(
    thread: &Thread,
    mentions: &[(String, String)],
) -> Result<Vec<UserInput>, String> {
    let manager = thread
        .mcp_manager()
        .ok_or_else(|| "no MCP servers run in this session to read resources from".to_string())?;
    let mut items = Vec::new();
    for (server, uri) in mentions {
        let result = manager
            .read_resource(server, uri, CancellationToken::new())
            .await
            .map_err(|e| format!("cannot read @{server}:{uri}: {e}; nothing was sent"))?;
        let text = oi_core::mcp::prompts::resource_text(&result);
        items.push(UserInput::text(format!(
            "Resource @{server}:{uri}:\n{text}"
        )));
    }
    Ok(items)
}
