//! `fuzzyFileSearch` and its session variant (`fuzzyFileSearch/sessionStart|Update|Stop`
//! with `fuzzyFileSearch/sessionUpdated|sessionCompleted` notifications).
//!
//! The search itself (walk, score, rank) is `oi-file-search`, shared with the TUI's `@`
//! picker; this module is its wire surface. A newer request with the same
//! `cancellationToken` stops the older one (which answers with no files). Sessions walk
//! their roots once and match each update against that index.

use crate::items::Note;
use crate::protocol::methods as m;
use crate::protocol::wire::{
    EmptyResponse, FuzzyFileSearchMatchType, FuzzyFileSearchParams, FuzzyFileSearchResponse,
    FuzzyFileSearchResult, FuzzyFileSearchSessionCompletedNotification,
    FuzzyFileSearchSessionStartParams, FuzzyFileSearchSessionStopParams,
    FuzzyFileSearchSessionUpdateParams, FuzzyFileSearchSessionUpdatedNotification,
};
use crate::{Conn, invalid, lock, method};
use oi_file_search::FileIndex;
use oi_file_search::{FileMatch, MATCH_LIMIT, Search, search};

/// How often a session's results are refreshed while the index's first walk runs.
const REFRESH: std::time::Duration = std::time::Duration::from_millis(100);
use oi_jsonrpc::RpcError;
use oi_jsonrpc::{Execution, MethodTable, RequestContext};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

pub(crate) fn register(t: &mut MethodTable, conn: &Arc<Conn>) {
    method::<m::FuzzyFileSearch, _, _>(t, conn, Execution::Spawn, search_once);
    method::<m::FuzzyFileSearchSessionStart, _, _>(t, conn, Execution::Inline, session_start);
    method::<m::FuzzyFileSearchSessionUpdate, _, _>(t, conn, Execution::Inline, session_update);
    method::<m::FuzzyFileSearchSessionStop, _, _>(t, conn, Execution::Inline, session_stop);
}

#[derive(Default)]
pub(crate) struct FuzzyState {
    /// Running one-shot searches by cancellation token.
    tokens: Mutex<HashMap<String, Arc<AtomicBool>>>,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
}

/// One match on the wire.
pub(crate) fn wire_match(m: &FileMatch) -> FuzzyFileSearchResult {
    let file_name = m.path.rsplit('/').next().unwrap_or(&m.path);
    FuzzyFileSearchResult {
        root: m.root.clone(),
        path: m.path.clone(),
        match_type: if m.is_dir {
            FuzzyFileSearchMatchType::Directory
        } else {
            FuzzyFileSearchMatchType::File
        },
        file_name: file_name.to_string(),
        score: m.score,
        indices: m.indices.clone(),
    }
}

async fn search_once(
    conn: Arc<Conn>,
    _ctx: RequestContext,
    p: FuzzyFileSearchParams,
) -> Result<FuzzyFileSearchResponse, RpcError> {
    let flag = Arc::new(AtomicBool::new(false));
    if let Some(token) = &p.cancellation_token
        && let Some(older) = lock(&conn.fuzzy.tokens).insert(token.clone(), flag.clone())
    {
        older.store(true, Ordering::Relaxed);
    }
    let roots: Vec<PathBuf> = p.roots.iter().map(PathBuf::from).collect();
    let query = p.query.clone();
    let f = flag.clone();
    let files = tokio::task::spawn_blocking(move || search(&query, &roots, MATCH_LIMIT, &f))
        .await
        .unwrap_or_default();
    if let Some(token) = &p.cancellation_token {
        let mut tokens = lock(&conn.fuzzy.tokens);
        if tokens.get(token).is_some_and(|f| Arc::ptr_eq(f, &flag)) {
            tokens.remove(token);
        }
    }
    let files = if flag.load(Ordering::Relaxed) {
        Vec::new()
    } else {
        files.iter().map(wire_match).collect()
    };
    Ok(FuzzyFileSearchResponse { files })
}

pub(crate) struct Session {
    /// Built in the background when the session starts and kept fresh by a watcher (the
    /// same index the TUI's `@` picker uses), so each update only matches.
    index: Arc<FileIndex>,
    /// Bumped by every update; only the latest query's results are sent.
    generation: AtomicU64,
    stopped: Arc<AtomicBool>,
}

async fn session_start(
    conn: Arc<Conn>,
    _ctx: RequestContext,
    p: FuzzyFileSearchSessionStartParams,
) -> Result<EmptyResponse, RpcError> {
    if p.session_id.is_empty() {
        return Err(invalid("sessionId must not be empty"));
    }
    let roots: Vec<PathBuf> = p.roots.iter().map(PathBuf::from).collect();
    // Starting the index only spawns its indexing thread.
    let index = FileIndex::start(roots);
    let session = Arc::new(Session {
        index: Arc::new(index),
        generation: AtomicU64::new(0),
        stopped: Arc::new(AtomicBool::new(false)),
    });
    if let Some(old) = lock(&conn.fuzzy.sessions).insert(p.session_id, session) {
        old.stopped.store(true, Ordering::Relaxed);
    }
    Ok(EmptyResponse {})
}

async fn session_update(
    conn: Arc<Conn>,
    _ctx: RequestContext,
    p: FuzzyFileSearchSessionUpdateParams,
) -> Result<EmptyResponse, RpcError> {
    let session = lock(&conn.fuzzy.sessions)
        .get(&p.session_id)
        .cloned()
        .ok_or_else(|| {
            invalid(format!(
                "fuzzy file search session not found: {}",
                p.session_id
            ))
        })?;
    let generation = session.generation.fetch_add(1, Ordering::SeqCst) + 1;
    tokio::spawn(async move {
        let out = &conn.outgoing;
        let current = |s: &Session| {
            s.generation.load(Ordering::SeqCst) == generation && !s.stopped.load(Ordering::Relaxed)
        };
        let ticket = session.index.ticket();
        // While the index's first walk runs, each refresh sends what it has found so far;
        // `completed` follows the answer over the whole tree.
        loop {
            let (index, query) = (session.index.clone(), p.query.clone());
            let found = if query.trim().is_empty() {
                Some(Search {
                    matches: Vec::new(),
                    complete: true,
                })
            } else {
                tokio::task::spawn_blocking(move || index.search_as(ticket, &query, MATCH_LIMIT))
                    .await
                    .ok()
                    .flatten()
            };
            // `None`: a newer update superseded this one while it ran.
            let Some(found) = found else { return };
            if !current(&session) {
                return;
            }
            let updated = FuzzyFileSearchSessionUpdatedNotification {
                session_id: p.session_id.clone(),
                query: p.query.clone(),
                files: found.matches.iter().map(wire_match).collect(),
            };
            out.send(Note::of::<m::FuzzyFileSearchSessionUpdated>(&updated))
                .await;
            if found.complete {
                break;
            }
            let index = session.index.clone();
            let _ = tokio::task::spawn_blocking(move || index.wait_for_complete(REFRESH)).await;
        }
        let completed = FuzzyFileSearchSessionCompletedNotification {
            session_id: p.session_id,
        };
        out.send(Note::of::<m::FuzzyFileSearchSessionCompleted>(&completed))
            .await;
    });
    Ok(EmptyResponse {})
}

async fn session_stop(
    conn: Arc<Conn>,
    _ctx: RequestContext,
    p: FuzzyFileSearchSessionStopParams,
) -> Result<EmptyResponse, RpcError> {
    if let Some(s) = lock(&conn.fuzzy.sessions).remove(&p.session_id) {
        s.stopped.store(true, Ordering::Relaxed);
    }
    Ok(EmptyResponse {})
}
#[cfg(test)]
mod tests {
    use crate::protocol::wire::to_value;
    // Ranking, gitignore, limits and cancellation are tested in oi-file-search; here only
    // the wire shape of a match.
    use super::*;

    #[test]
    fn a_match_goes_on_the_wire_with_its_file_name_and_type() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/main.rs"), "x").unwrap();
        let roots = vec![dir.path().to_path_buf()];
        let r = search("main", &roots, MATCH_LIMIT, &AtomicBool::new(false));
        let m = r.iter().find(|m| m.path == "src/main.rs").unwrap();
        let wire = to_value(&wire_match(m));
        assert_eq!(wire["path"], "src/main.rs");
        assert_eq!(wire["file_name"], "main.rs");
        assert_eq!(wire["match_type"], "file");
        assert_eq!(wire["indices"].as_array().unwrap().len(), 4);
    }
}
