//! `tools/list`, read one tool at a time. rmcp's typed list fails as a whole when one tool
//! is unreadable (a tool without `inputSchema`, or with a string where the schema object
//! belongs), which used to cost the whole server; here the pages are taken as JSON and every
//! tool is kept as the server sent it. Whether a tool can be offered is decided per tool by
//! [`crate::tool_schema::unusable`], and the catalog withholds the bad ones with the reason.
//! The pages' freshness hints (`ttlMs`, 2026-07-28) are read from the same JSON.

use rmcp::ServiceError;
use rmcp::model::{ClientRequest, ListToolsRequest, PaginatedRequestParams, ServerResult};
use rmcp::service::{Peer, RoleClient};
use serde_json::Value;
use std::time::{Duration, Instant};

/// A server that pages forever (a cursor that never ends) stops being read here.
const MAX_PAGES: usize = 100;

/// A server's whole tool list.
#[derive(Debug)]
pub(crate) struct ToolList {
    /// Every tool, as the server sent it.
    pub tools: Vec<Value>,
    /// How long the list stays fresh (`ttlMs`): until the first of its pages expires, counted
    /// from now; `None` when a page gave no hint (a server of the handshake era).
    pub ttl: Option<Duration>,
}

/// Every tool the server lists, as raw JSON, following `nextCursor`.
pub(crate) async fn list_tools(peer: &Peer<RoleClient>) -> Result<ToolList, ServiceError> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    // The earliest expiry of the pages so far; `None` inside once a page had no hint.
    let mut expires: Option<Option<Instant>> = None;
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
        let page_expires = page_ttl(&page).and_then(|ttl| Instant::now().checked_add(ttl));
        expires = Some(match expires {
            None => page_expires,
            Some(earlier) => earlier.zip(page_expires).map(|(a, b)| a.min(b)),
        });
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(next) if !next.is_empty() => cursor = Some(next.to_string()),
            _ => break,
        }
    }
    let ttl = expires
        .flatten()
        .map(|at| at.saturating_duration_since(Instant::now()));
    Ok(ToolList { tools, ttl })
}

/// A page's `ttlMs`; a negative one counts as 0 (stale at once), as the revision says.
fn page_ttl(page: &Value) -> Option<Duration> {
    let ttl = page.get("ttlMs")?;
    let ms = ttl
        .as_u64()
        .or_else(|| ttl.as_i64().map(|_| 0))
        .or_else(|| ttl.as_f64().map(|f| f.max(0.0) as u64))?;
    Some(Duration::from_millis(ms))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_ttl_is_read_and_a_negative_one_is_stale() {
        let ttl = |v: Value| page_ttl(&serde_json::json!({ "tools": [], "ttlMs": v }));
        assert_eq!(ttl(1500.into()), Some(Duration::from_millis(1500)));
        assert_eq!(ttl((-5).into()), Some(Duration::ZERO));
        assert_eq!(ttl("soon".into()), None);
        assert_eq!(page_ttl(&serde_json::json!({ "tools": [] })), None);
    }
}
