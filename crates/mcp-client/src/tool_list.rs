//! `tools/list`, read one tool at a time. rmcp's typed list fails as a whole when one tool
//! is unreadable (a tool without `inputSchema`, or with a string where the schema object
//! belongs), which used to cost the whole server; here the pages are taken as JSON and every
//! tool is kept as the server sent it. Whether a tool can be offered is decided per tool by
//! [`crate::tool_schema::unusable`], and the catalog withholds the bad ones with the reason.

use rmcp::ServiceError;
use rmcp::model::{ClientRequest, ListToolsRequest, PaginatedRequestParams, ServerResult};
use rmcp::service::{Peer, RoleClient};
use serde_json::Value;

/// A server that pages forever (a cursor that never ends) stops being read here.
const MAX_PAGES: usize = 100;

/// Every tool the server lists, as raw JSON, following `nextCursor`.
pub(crate) async fn list_tools(peer: &Peer<RoleClient>) -> Result<Vec<Value>, ServiceError> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let request = ListToolsRequest {
            method: Default::default(),
            params: cursor
                .take()
                .map(|c| PaginatedRequestParams::default().with_cursor(Some(c))),
            extensions: Default::default(),
        };
        let page = match peer
            .send_request(ClientRequest::ListToolsRequest(request))
            .await?
        {
            // Every tool was readable: the typed result, back as JSON.
            ServerResult::ListToolsResult(r) => serde_json::to_value(r),
            // Some tool was not: the page as the server sent it.
            ServerResult::CustomResult(raw) => Ok(raw.0),
            other => serde_json::to_value(other),
        }
        .map_err(|_| ServiceError::UnexpectedResponse)?;
        let Some(listed) = page.get("tools").and_then(Value::as_array) else {
            return Err(ServiceError::UnexpectedResponse);
        };
        tools.extend(listed.iter().cloned());
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(next) if !next.is_empty() => cursor = Some(next.to_string()),
            _ => break,
        }
    }
    Ok(tools)
}
