//! `fuzzyFileSearch` and its session variant (`fuzzyFileSearch/sessionStart|Update|Stop`
//! with `fuzzyFileSearch/sessionUpdated|sessionCompleted` notifications).
//!
//! Files are found with `ignore`'s parallel walker (`.gitignore` and friends respected,
//! `.git` skipped) and scored with `nucleo-matcher` as paths relative to their root. Each
//! walker thread keeps its own top-50, so a search never holds the whole tree in memory;
//! match indices are computed for the winners only. A path whose file name alone matches
//! gets a bonus, so basename hits rank first. Results: score descending, then path
//! ascending. A newer request with the same `cancellationToken` stops the older one (which
//! answers with no files). Sessions walk their roots once and match each update against
//! that index.

use crate::{Conn, invalid, lock, method};
use ignore::{WalkBuilder, WalkState};
use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};
use oi_mcp_server::dispatch::{Execution, MethodTable, RequestContext};
use oi_mcp_server::jsonrpc::RpcError;
use serde::Deserialize;
use serde_json::{Value, json};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::OnceCell;

/// Most matches returned.
pub const MATCH_LIMIT: usize = 50;
const MAX_THREADS: usize = 12;
/// Added to the score of paths whose file name alone matches the query.
pub const NAME_BONUS: u32 = 1 << 16;

pub(crate) fn register(t: &mut MethodTable, conn: &Arc<Conn>) {
    method(t, conn, "fuzzyFileSearch", Execution::Spawn, search_once);
    method(
        t,
        conn,
        "fuzzyFileSearch/sessionStart",
        Execution::Inline,
        session_start,
    );
    method(
        t,
        conn,
        "fuzzyFileSearch/sessionUpdate",
        Execution::Inline,
        session_update,
    );
    method(
        t,
        conn,
        "fuzzyFileSearch/sessionStop",
        Execution::Inline,
        session_stop,
    );
}

#[derive(Default)]
pub(crate) struct FuzzyState {
    /// Running one-shot searches by cancellation token.
    tokens: Mutex<HashMap<String, Arc<AtomicBool>>>,
    sessions: Mutex<HashMap<String, Arc<Session>>>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct SearchParams {
    query: String,
    roots: Vec<String>,
    #[serde(default)]
    cancellation_token: Option<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StartParams {
    session_id: String,
    roots: Vec<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct UpdateParams {
    session_id: String,
    query: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct StopParams {
    session_id: String,
}

/// One result, in the reference's (snake_case) shape.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileMatch {
    pub root: String,
    pub path: String,
    pub is_dir: bool,
    pub score: u32,
    pub indices: Vec<u32>,
}

impl FileMatch {
    pub fn to_json(&self) -> Value {
        let file_name = self.path.rsplit('/').next().unwrap_or(&self.path);
        json!({
            "root": self.root,
            "path": self.path,
            "match_type": if self.is_dir { "directory" } else { "file" },
            "file_name": file_name,
            "score": self.score,
            "indices": self.indices,
        })
    }
}

/// A candidate kept in a top-K heap. Ordered so the heap's top is the worst kept match:
/// lowest score, then greatest path.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Ranked {
    key: (Reverse<u32>, String, usize),
    is_dir: bool,
}

struct TopK {
    k: usize,
    heap: BinaryHeap<Ranked>,
}

impl TopK {
    fn new(k: usize) -> Self {
        Self {
            k,
            heap: BinaryHeap::with_capacity(k + 1),
        }
    }

    /// Worth building the entry for? (Avoids allocating paths that would lose.)
    fn admits(&self, score: u32) -> bool {
        self.heap.len() < self.k || self.heap.peek().is_some_and(|w| score >= w.key.0.0)
    }

    fn push(&mut self, score: u32, path: String, root: usize, is_dir: bool) {
        self.heap.push(Ranked {
            key: (Reverse(score), path, root),
            is_dir,
        });
        if self.heap.len() > self.k {
            self.heap.pop();
        }
    }

    fn merge(&mut self, other: TopK) {
        for r in other.heap {
            self.push(r.key.0.0, r.key.1, r.key.2, r.is_dir);
        }
    }

    /// Best first.
    fn into_sorted(self) -> Vec<Ranked> {
        let mut v = self.heap.into_vec();
        v.sort();
        v
    }
}

struct Scorer {
    pattern: Pattern,
    matcher: Matcher,
    buf: Vec<char>,
}

impl Scorer {
    fn new(query: &str) -> Self {
        Self {
            pattern: Pattern::parse(query, CaseMatching::Smart, Normalization::Smart),
            matcher: Matcher::new(Config::DEFAULT.match_paths()),
            buf: Vec::new(),
        }
    }

    /// The path's score, plus [`NAME_BONUS`] when the whole query also matches within the
    /// file name (a file picker should prefer `src/main.rs` to `domain/ai/nothing.rs`).
    fn score(&mut self, path: &str) -> Option<u32> {
        let score = self
            .pattern
            .score(Utf32Str::new(path, &mut self.buf), &mut self.matcher)?;
        let name = path.rsplit('/').next().unwrap_or(path);
        let in_name = name.len() < path.len()
            && self
                .pattern
                .score(Utf32Str::new(name, &mut self.buf), &mut self.matcher)
                .is_some();
        Some(if in_name { score + NAME_BONUS } else { score })
    }

    fn indices(&mut self, path: &str) -> Vec<u32> {
        let mut idx = Vec::new();
        self.pattern.indices(
            Utf32Str::new(path, &mut self.buf),
            &mut self.matcher,
            &mut idx,
        );
        idx.sort_unstable();
        idx.dedup();
        idx
    }
}

fn threads() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, MAX_THREADS)
}

fn walker(root: &Path, threads: usize) -> WalkBuilder {
    let mut b = WalkBuilder::new(root);
    b.hidden(false)
        .follow_links(false)
        .require_git(false)
        .threads(threads)
        .filter_entry(|e| e.file_name() != ".git");
    b
}

/// The path of `entry` under `root`, with `/` separators; `None` for the root itself.
fn relative(root: &Path, path: &Path) -> Option<String> {
    let rel = path.strip_prefix(root).ok()?;
    let s = rel.to_string_lossy();
    (!s.is_empty()).then(|| s.replace('\\', "/"))
}

/// Flushes a walker thread's local top-K into the shared one when the thread is done.
struct Local {
    top: TopK,
    shared: Arc<Mutex<TopK>>,
}

impl Drop for Local {
    fn drop(&mut self) {
        let top = std::mem::replace(&mut self.top, TopK::new(0));
        lock(&self.shared).merge(top);
    }
}

/// Walks `roots` and returns the best matches (empty if `cancel` fires).
pub fn search(query: &str, roots: &[PathBuf], limit: usize, cancel: &AtomicBool) -> Vec<FileMatch> {
    if query.trim().is_empty() || roots.is_empty() {
        return Vec::new();
    }
    let threads = threads();
    let shared = Arc::new(Mutex::new(TopK::new(limit)));
    for (root_idx, root) in roots.iter().enumerate() {
        let per_root = (threads / roots.len()).max(1);
        walker(root, per_root).build_parallel().run(|| {
            let mut local = Local {
                top: TopK::new(limit),
                shared: shared.clone(),
            };
            let mut scorer = Scorer::new(query);
            Box::new(move |entry| {
                if cancel.load(Ordering::Relaxed) {
                    return WalkState::Quit;
                }
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                if let Some(rel) = relative(root, entry.path())
                    && let Some(score) = scorer.score(&rel)
                    && local.top.admits(score)
                {
                    let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
                    local.top.push(score, rel, root_idx, is_dir);
                }
                WalkState::Continue
            })
        });
    }
    if cancel.load(Ordering::Relaxed) {
        return Vec::new();
    }
    let top = std::mem::replace(&mut *lock(&shared), TopK::new(0));
    finish(query, roots, top)
}

fn finish(query: &str, roots: &[PathBuf], top: TopK) -> Vec<FileMatch> {
    let mut scorer = Scorer::new(query);
    top.into_sorted()
        .into_iter()
        .map(|r| {
            let (Reverse(score), path, root) = r.key;
            FileMatch {
                root: roots[root].to_string_lossy().into_owned(),
                indices: scorer.indices(&path),
                path,
                is_dir: r.is_dir,
                score,
            }
        })
        .collect()
}

/// Every entry under `roots`: (root index, relative path, is directory).
pub fn index_roots(roots: &[PathBuf], cancel: &AtomicBool) -> Vec<(usize, String, bool)> {
    let all = Arc::new(Mutex::new(Vec::new()));
    let threads = threads();
    for (root_idx, root) in roots.iter().enumerate() {
        walker(root, (threads / roots.len()).max(1))
            .build_parallel()
            .run(|| {
                let all = all.clone();
                let mut local = LocalVec(Vec::new(), all);
                Box::new(move |entry| {
                    if cancel.load(Ordering::Relaxed) {
                        return WalkState::Quit;
                    }
                    if let Ok(entry) = entry
                        && let Some(rel) = relative(root, entry.path())
                    {
                        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
                        local.0.push((root_idx, rel, is_dir));
                    }
                    WalkState::Continue
                })
            });
    }
    std::mem::take(&mut *lock(&all))
}

struct LocalVec(
    Vec<(usize, String, bool)>,
    Arc<Mutex<Vec<(usize, String, bool)>>>,
);

impl Drop for LocalVec {
    fn drop(&mut self) {
        lock(&self.1).append(&mut self.0);
    }
}

/// Matches `query` against an index built by [`index_roots`], in parallel chunks.
pub fn search_index(
    query: &str,
    roots: &[PathBuf],
    index: &[(usize, String, bool)],
    limit: usize,
) -> Vec<FileMatch> {
    if query.trim().is_empty() || index.is_empty() {
        return Vec::new();
    }
    let chunk = index.len().div_ceil(threads());
    let tops: Vec<TopK> = std::thread::scope(|s| {
        let handles: Vec<_> = index
            .chunks(chunk)
            .map(|part| {
                s.spawn(move || {
                    let mut scorer = Scorer::new(query);
                    let mut top = TopK::new(limit);
                    for (root, path, is_dir) in part {
                        if let Some(score) = scorer.score(path)
                            && top.admits(score)
                        {
                            top.push(score, path.clone(), *root, *is_dir);
                        }
                    }
                    top
                })
            })
            .collect();
        handles.into_iter().filter_map(|h| h.join().ok()).collect()
    });
    let mut top = TopK::new(limit);
    for t in tops {
        top.merge(t);
    }
    finish(query, roots, top)
}

async fn search_once(
    conn: Arc<Conn>,
    _ctx: RequestContext,
    p: SearchParams,
) -> Result<Value, RpcError> {
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
    let files: Vec<Value> = if flag.load(Ordering::Relaxed) {
        Vec::new()
    } else {
        files.iter().map(FileMatch::to_json).collect()
    };
    Ok(json!({ "files": files }))
}

pub(crate) struct Session {
    roots: Vec<PathBuf>,
    index: OnceCell<Arc<Vec<(usize, String, bool)>>>,
    /// Bumped by every update; only the latest query's results are sent.
    generation: AtomicU64,
    stopped: Arc<AtomicBool>,
}

impl Session {
    async fn index(&self) -> Arc<Vec<(usize, String, bool)>> {
        self.index
            .get_or_init(|| async {
                let roots = self.roots.clone();
                let stop = self.stopped.clone();
                Arc::new(
                    tokio::task::spawn_blocking(move || index_roots(&roots, &stop))
                        .await
                        .unwrap_or_default(),
                )
            })
            .await
            .clone()
    }
}

async fn session_start(
    conn: Arc<Conn>,
    _ctx: RequestContext,
    p: StartParams,
) -> Result<Value, RpcError> {
    if p.session_id.is_empty() {
        return Err(invalid("sessionId must not be empty"));
    }
    let session = Arc::new(Session {
        roots: p.roots.iter().map(PathBuf::from).collect(),
        index: OnceCell::new(),
        generation: AtomicU64::new(0),
        stopped: Arc::new(AtomicBool::new(false)),
    });
    if let Some(old) = lock(&conn.fuzzy.sessions).insert(p.session_id, session.clone()) {
        old.stopped.store(true, Ordering::Relaxed);
    }
    // Start indexing now so the first update is fast.
    tokio::spawn(async move {
        session.index().await;
    });
    Ok(json!({}))
}

async fn session_update(
    conn: Arc<Conn>,
    _ctx: RequestContext,
    p: UpdateParams,
) -> Result<Value, RpcError> {
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
        let index = session.index().await;
        let roots = session.roots.clone();
        let query = p.query.clone();
        let files = if query.trim().is_empty() {
            Vec::new()
        } else {
            tokio::task::spawn_blocking(move || search_index(&query, &roots, &index, MATCH_LIMIT))
                .await
                .unwrap_or_default()
        };
        let latest = session.generation.load(Ordering::SeqCst) == generation;
        if !latest || session.stopped.load(Ordering::Relaxed) {
            return;
        }
        let files: Vec<Value> = files.iter().map(FileMatch::to_json).collect();
        let out = &conn.outgoing;
        out.notify(
            "fuzzyFileSearch/sessionUpdated",
            json!({"sessionId": p.session_id, "query": p.query, "files": files}),
        )
        .await;
        out.notify(
            "fuzzyFileSearch/sessionCompleted",
            json!({"sessionId": p.session_id}),
        )
        .await;
    });
    Ok(json!({}))
}

async fn session_stop(
    conn: Arc<Conn>,
    _ctx: RequestContext,
    p: StopParams,
) -> Result<Value, RpcError> {
    if let Some(s) = lock(&conn.fuzzy.sessions).remove(&p.session_id) {
        s.stopped.store(true, Ordering::Relaxed);
    }
    Ok(json!({}))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(files: &[&str]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        for f in files {
            let p = dir.path().join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, "x").unwrap();
        }
        dir
    }

    #[test]
    fn finds_ranks_and_respects_gitignore() {
        let dir = tree(&[
            "src/main.rs",
            "src/lib.rs",
            "docs/manual.md",
            "target/debug/main.rs",
            ".gitignore",
        ]);
        std::fs::write(dir.path().join(".gitignore"), "target/\n").unwrap();
        let roots = vec![dir.path().to_path_buf()];
        let never = AtomicBool::new(false);
        let r = search("main", &roots, MATCH_LIMIT, &never);
        let paths: Vec<&str> = r.iter().map(|m| m.path.as_str()).collect();
        assert!(paths.contains(&"src/main.rs"), "{paths:?}");
        assert!(!paths.iter().any(|p| p.starts_with("target")), "{paths:?}");
        for w in r.windows(2) {
            assert!(w[0].score > w[1].score || (w[0].score == w[1].score && w[0].path < w[1].path));
        }
        let m = r.iter().find(|m| m.path == "src/main.rs").unwrap();
        let chars: Vec<char> = m.path.chars().collect();
        let hit: String = m.indices.iter().map(|i| chars[*i as usize]).collect();
        assert_eq!(hit, "main");
        assert_eq!(m.to_json()["file_name"], "main.rs");
        assert_eq!(m.to_json()["match_type"], "file");

        let index = index_roots(&roots, &never);
        assert_eq!(search_index("main", &roots, &index, MATCH_LIMIT), r);
        assert!(search("", &roots, MATCH_LIMIT, &never).is_empty());
    }

    #[test]
    fn limit_keeps_the_best_and_cancel_stops() {
        let names: Vec<String> = (0..120).map(|i| format!("d{i}/file{i}.txt")).collect();
        let refs: Vec<&str> = names.iter().map(String::as_str).collect();
        let dir = tree(&refs);
        let roots = vec![dir.path().to_path_buf()];
        let r = search("file", &roots, MATCH_LIMIT, &AtomicBool::new(false));
        assert_eq!(r.len(), MATCH_LIMIT);
        assert!(search("file", &roots, MATCH_LIMIT, &AtomicBool::new(true)).is_empty());
    }
}
