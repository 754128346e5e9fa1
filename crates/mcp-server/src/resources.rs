//! Stored threads as MCP resources, so a client can read (and, through subscriptions,
//! watch) a session another client started:
//!
//! * `interpreter://threads/{threadId}`: the Markdown transcript of its latest turns;
//! * `interpreter://threads/{threadId}/items`: the same turns as JSON items
//!   ([`crate::transcript`]).
//!
//! Both show at most [`PAGE_TURNS`] turns; `?before=N` reads the turns before turn `N`
//! (counted from 0), and each page names the one before it. `resources/list` pages through
//! the threads (newest activity first) with the store's cursor. Nothing about the server
//! leaks: no rollout path, no absolute path, no instructions or configuration.

use crate::engine::{CatalogError, Engine, ThreadTurns, TurnWindow};
use crate::protocol::era::Era;
use crate::protocol::era::error_data;
use crate::protocol::reply::Caching;
use crate::transcript;
use oi_core::ThreadSummary;
use oi_jsonrpc::{INVALID_PARAMS, RESOURCE_NOT_FOUND, RpcError};
use oi_protocol::ThreadId;
use rmcp::model::{
    Annotations, ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate,
};
use serde::Serialize;

/// The scheme and authority of every resource here.
pub(crate) const THREADS: &str = "interpreter://threads/";
/// Turns per page of a thread resource.
pub(crate) const PAGE_TURNS: usize = 20;

const MARKDOWN: &str = "text/markdown";
const JSON: &str = "application/json";

/// Which view of a thread a URI names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum View {
    Transcript,
    Items,
}

/// A parsed thread resource URI.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ThreadUri {
    pub id: ThreadId,
    pub view: View,
    pub before: Option<usize>,
}

impl ThreadUri {
    /// `uri` if it names a thread resource (the thread need not exist).
    pub(crate) fn parse(uri: &str) -> Option<ThreadUri> {
        let rest = uri.strip_prefix(THREADS)?;
        let (path, query) = match rest.split_once('?') {
            Some((p, q)) => (p, Some(q)),
            None => (rest, None),
        };
        let (id, view) = match path.strip_suffix("/items") {
            Some(id) => (id, View::Items),
            None => (path, View::Transcript),
        };
        let before = match query {
            None => None,
            Some(q) => Some(q.strip_prefix("before=")?.parse().ok()?),
        };
        Some(ThreadUri {
            id: id.parse().ok()?,
            view,
            before,
        })
    }

    pub(crate) fn to_uri(self) -> String {
        let mut uri = format!("{THREADS}{}", self.id);
        if self.view == View::Items {
            uri.push_str("/items");
        }
        if let Some(b) = self.before {
            uri.push_str(&format!("?before={b}"));
        }
        uri
    }

    /// The resource every page of this thread belongs to (what subscriptions name).
    pub(crate) fn base(self) -> String {
        format!("{THREADS}{}", self.id)
    }
}

/// `resources/list`: a page of stored threads.
pub(crate) async fn list(
    engine: &dyn Engine,
    cursor: Option<String>,
) -> Result<ListResourcesResult, RpcError> {
    let page = engine
        .list_threads(cursor)
        .await
        .map_err(|e| catalog_error("resources/list", None, e))?;
    let mut result =
        ListResourcesResult::with_all_items(page.threads.iter().map(thread_resource).collect());
    result.next_cursor = page.next_cursor;
    Ok(with_caching(result, Caching::LIVE))
}

fn with_caching(result: ListResourcesResult, c: Caching) -> ListResourcesResult {
    result.with_ttl_ms(c.ttl_ms).with_cache_scope(c.scope)
}

fn thread_resource(t: &ThreadSummary) -> Resource {
    let title = one_line(t.title(), 80);
    let mut annotations = Annotations::default();
    annotations.last_modified = chrono::DateTime::from_timestamp(t.updated_at, 0)
        .map(|d| d.to_rfc3339_opts(chrono::SecondsFormat::Secs, true));
    Resource::new(format!("{THREADS}{}", t.id), format!("thread {}", t.id))
        .with_title(if title.is_empty() {
            "(no messages yet)".to_string()
        } else {
            title
        })
        .with_description(format!(
            "An Open Interpreter session on {} ({}). Its items: {THREADS}{}/items; continue it with the codex-reply tool.",
            t.model, t.model_provider, t.id
        ))
        .with_mime_type(MARKDOWN)
        .with_annotations(annotations)
}

fn one_line(s: &str, max: usize) -> String {
    let line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() <= max {
        return line;
    }
    let cut: String = line.chars().take(max).collect();
    format!("{cut}…")
}

/// `resources/templates/list`.
pub(crate) fn templates() -> ListResourceTemplatesResult {
    let transcript = ResourceTemplate::new(format!("{THREADS}{{threadId}}"), "thread")
        .with_title("An Open Interpreter session")
        .with_description(format!(
            "The Markdown transcript of a session's latest {PAGE_TURNS} turns (threadId from a codex result); ?before=N reads the turns before turn N."
        ))
        .with_mime_type(MARKDOWN);
    let items = ResourceTemplate::new(format!("{THREADS}{{threadId}}/items"), "thread-items")
        .with_title("An Open Interpreter session's items")
        .with_description(format!(
            "A session's latest {PAGE_TURNS} turns as JSON: each turn's status and items (messages, commands, file changes, tool calls, errors); ?before=N reads the turns before turn N."
        ))
        .with_mime_type(JSON);
    let c = Caching::FIXED;
    ListResourceTemplatesResult::with_all_items(vec![transcript, items])
        .with_ttl_ms(c.ttl_ms)
        .with_cache_scope(c.scope)
}

/// The JSON of an items page.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ItemsPage<'a> {
    thread_id: ThreadId,
    title: &'a str,
    total_turns: usize,
    /// True while a turn runs in this server.
    running: bool,
    turns: &'a [transcript::TurnView],
    #[serde(skip_serializing_if = "Option::is_none")]
    earlier: Option<String>,
}

/// `resources/read`.
pub(crate) async fn read(
    engine: &dyn Engine,
    era: &Era,
    uri: &str,
) -> Result<ReadResourceResult, RpcError> {
    let Some(target) = ThreadUri::parse(uri) else {
        return Err(not_found(
            era,
            uri,
            "this server has thread resources only: interpreter://threads/{threadId} and interpreter://threads/{threadId}/items",
        ));
    };
    let window = TurnWindow {
        before: target.before,
        count: PAGE_TURNS,
    };
    let turns = match engine.thread_turns(target.id, window).await {
        Ok(t) => t,
        Err(CatalogError::NotFound(_)) => {
            return Err(not_found(
                era,
                uri,
                "no stored thread has this id (threads are listed by resources/list)",
            ));
        }
        Err(e) => return Err(catalog_error("resources/read", Some(uri), e)),
    };
    let text = render(target, &turns)?;
    let mime = match target.view {
        View::Transcript => MARKDOWN,
        View::Items => JSON,
    };
    let caching = Caching::LIVE;
    Ok(
        ReadResourceResult::new(vec![ResourceContents::text(text, uri).with_mime_type(mime)])
            .with_ttl_ms(caching.ttl_ms)
            .with_cache_scope(caching.scope),
    )
}

fn render(target: ThreadUri, turns: &ThreadTurns) -> Result<String, RpcError> {
    let views = transcript::turns(&turns.turns, turns.first, &turns.summary.cwd);
    let earlier = (turns.first > 0).then(|| {
        ThreadUri {
            before: Some(turns.first),
            ..target
        }
        .to_uri()
    });
    let title = turns.summary.title();
    Ok(match target.view {
        View::Transcript => transcript::markdown(title, &views, earlier.as_deref()),
        View::Items => serde_json::to_string_pretty(&ItemsPage {
            thread_id: turns.summary.id,
            title,
            total_turns: turns.total,
            running: turns.running,
            turns: &views,
            earlier,
        })
        .map_err(|e| RpcError::internal(format!("the items could not be encoded: {e}")))?,
    })
}

/// `data` naming a resource.
#[derive(Serialize)]
struct ResourceUri<'a> {
    uri: &'a str,
}

/// A resource that does not exist: `-32602` in 2026-07-28 (SEP-2164), `-32002` before;
/// `data.uri` names it either way.
pub(crate) fn not_found(era: &Era, uri: &str, why: &str) -> RpcError {
    let code = if era.is_stateless() {
        INVALID_PARAMS
    } else {
        RESOURCE_NOT_FOUND
    };
    RpcError::new(code, format!("Resource not found: {uri} ({why})"))
        .with_data(error_data(ResourceUri { uri }))
}

fn catalog_error(method: &str, uri: Option<&str>, e: CatalogError) -> RpcError {
    match e {
        CatalogError::BadCursor(why) => RpcError::invalid_params(
            method,
            format!(
                "the cursor is not one this server gave out ({why}); list again from the start"
            ),
        ),
        CatalogError::NotFound(id) => {
            RpcError::invalid_params(method, format!("no stored thread {id}"))
        }
        CatalogError::Store(why) => {
            tracing::warn!("{method}: {why}");
            let error = RpcError::internal(format!("the thread store failed: {why}"));
            match uri {
                Some(uri) => error.with_data(error_data(ResourceUri { uri })),
                None => error,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn uris_round_trip_and_strangers_are_refused() {
        let id = ThreadId::new();
        for uri in [
            format!("{THREADS}{id}"),
            format!("{THREADS}{id}/items"),
            format!("{THREADS}{id}?before=20"),
            format!("{THREADS}{id}/items?before=3"),
        ] {
            let parsed = ThreadUri::parse(&uri).unwrap();
            assert_eq!(parsed.to_uri(), uri);
            assert_eq!(parsed.base(), format!("{THREADS}{id}"));
        }
        for bad in [
            "test://nonexistent-resource-for-conformance-testing".to_string(),
            format!("{THREADS}not-an-id"),
            format!("{THREADS}{id}/other"),
            format!("{THREADS}{id}?page=2"),
            format!("file:///{id}"),
        ] {
            assert_eq!(ThreadUri::parse(&bad), None, "{bad}");
        }
    }

    #[test]
    fn not_found_is_the_eras_code_with_the_uri() {
        let e = not_found(&Era::Handshake, "x://y", "why");
        assert_eq!(e.code, RESOURCE_NOT_FOUND);
        assert_eq!(e.data, Some(json!({"uri": "x://y"})));
    }
}
