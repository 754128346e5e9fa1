//! Fuzzy file search for file pickers: the `@` picker of the TUI and the v2
//! `fuzzyFileSearch` methods.
//!
//! Files are found with `ignore`'s parallel walker (`.gitignore` and friends respected,
//! `.git` skipped) and scored with `nucleo-matcher` as paths relative to their root. Each
//! walker thread keeps its own top-K, so a search never holds the whole tree in memory;
//! match indices are computed for the winners only. A path whose file name alone matches
//! gets a bonus, so basename hits rank first. Results: score descending, then path
//! ascending. [`index_roots`] + [`search_index`] walk once and match many queries.

mod live;

pub use live::{FileIndex, Search, Ticket};

use ignore::{WalkBuilder, WalkState};
use nucleo_matcher::pattern::{CaseMatching, Normalization, Pattern};
use nucleo_matcher::{Config, Matcher, Utf32Str};
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// Most matches a picker usually wants.
pub const MATCH_LIMIT: usize = 50;
const MAX_THREADS: usize = 12;
/// Added to the score of paths whose file name alone matches the query.
pub const NAME_BONUS: u32 = 1 << 16;

/// A poisoned lock only means another search thread panicked; its data is still usable.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// One match: a path relative to `root` (`/`-separated), its score and matched char indices.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileMatch {
    /// The search root the path is relative to.
    pub root: String,
    /// The path under the root, `/`-separated.
    pub path: String,
    /// Whether the path names a directory.
    pub is_dir: bool,
    /// The fuzzy-match score; higher is better.
    pub score: u32,
    /// Indices of the matched characters in `path`, for highlighting.
    pub indices: Vec<u32>,
}

/// A candidate kept in a top-K heap. Ordered so the heap's top is the worst kept match:
/// lowest score, then greatest path.
#[derive(PartialEq, Eq, PartialOrd, Ord)]
struct Ranked {
    key: (Reverse<u32>, String, usize),
    is_dir: bool,
}

pub(crate) struct TopK {
    k: usize,
    heap: BinaryHeap<Ranked>,
}

impl TopK {
    pub(crate) fn new(k: usize) -> Self {
        Self {
            k,
            heap: BinaryHeap::with_capacity(k + 1),
        }
    }

    /// Worth building the entry for? (Avoids allocating paths that would lose.)
    pub(crate) fn admits(&self, score: u32) -> bool {
        self.heap.len() < self.k || self.heap.peek().is_some_and(|w| score >= w.key.0.0)
    }

    pub(crate) fn push(&mut self, score: u32, path: String, root: usize, is_dir: bool) {
        self.heap.push(Ranked {
            key: (Reverse(score), path, root),
            is_dir,
        });
        if self.heap.len() > self.k {
            self.heap.pop();
        }
    }

    pub(crate) fn merge(&mut self, other: TopK) {
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

pub(crate) struct Scorer {
    pattern: Pattern,
    matcher: Matcher,
    buf: Vec<char>,
}

impl Scorer {
    pub(crate) fn new(query: &str) -> Self {
        Self {
            pattern: Pattern::parse(query, CaseMatching::Smart, Normalization::Smart),
            matcher: Matcher::new(Config::DEFAULT.match_paths()),
            buf: Vec::new(),
        }
    }

    /// The path's score, plus [`NAME_BONUS`] when the whole query also matches within the
    /// file name (a file picker should prefer `src/main.rs` to `domain/ai/nothing.rs`).
    pub(crate) fn score(&mut self, path: &str) -> Option<u32> {
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

pub(crate) fn threads() -> usize {
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

pub(crate) fn finish(query: &str, roots: &[PathBuf], top: TopK) -> Vec<FileMatch> {
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
    let all = Mutex::new(Vec::new());
    walk_in_batches(roots, cancel, &|mut batch| lock(&all).append(&mut batch));
    all.into_inner().unwrap_or_else(|e| e.into_inner())
}

/// Entries a walker thread collects before handing them on: small enough that a picker
/// sees the first matches of a large tree within milliseconds, large enough that the
/// hand-over costs nothing next to the walk.
const BATCH: usize = 512;
const FIRST_BATCH: usize = 16;

/// Walks `roots` and hands every entry to `sink`, in batches of at most [`BATCH`] from
/// each walker thread, as the walk goes (the order of batches is the walk's, not sorted).
pub(crate) fn walk_in_batches(
    roots: &[PathBuf],
    cancel: &AtomicBool,
    sink: &(dyn Fn(Vec<(usize, String, bool)>) + Sync),
) {
    let threads = threads();
    for (root_idx, root) in roots.iter().enumerate() {
        // At least two walkers even on one core: the walk waits on the disk more than on
        // the processor, and one directory that stalls (a network mount, a pipe where a
        // `.gitignore` should be) must not stall the rest.
        walker(root, (threads / roots.len()).max(2))
            .build_parallel()
            .run(|| {
                let mut local = Batch(Vec::new(), sink);
                // Small first batches, so the first matches come at once; larger ones later.
                let mut size = FIRST_BATCH;
                Box::new(move |entry| {
                    if cancel.load(Ordering::Relaxed) {
                        return WalkState::Quit;
                    }
                    if let Ok(entry) = entry
                        && let Some(rel) = relative(root, entry.path())
                    {
                        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
                        local.0.push((root_idx, rel, is_dir));
                        if local.0.len() >= size {
                            (local.1)(std::mem::take(&mut local.0));
                            size = (size * 2).min(BATCH);
                        }
                    }
                    WalkState::Continue
                })
            });
    }
}

/// A walker thread's unsent entries, handed on when the thread is done.
struct Batch<'a>(
    Vec<(usize, String, bool)>,
    &'a (dyn Fn(Vec<(usize, String, bool)>) + Sync),
);

impl Drop for Batch<'_> {
    fn drop(&mut self) {
        if !self.0.is_empty() {
            (self.1)(std::mem::take(&mut self.0));
        }
    }
}

/// Matches `query` against an index built by [`index_roots`], in parallel chunks.
pub fn search_index(
    query: &str,
    roots: &[PathBuf],
    index: &[(usize, String, bool)],
    limit: usize,
) -> Vec<FileMatch> {
    let chunk = index.len().div_ceil(threads()).max(1);
    let parts: Vec<&[(usize, String, bool)]> = index.chunks(chunk).collect();
    search_parts(query, roots, &parts, limit)
}

/// Matches `query` against `parts` of an index, each part on a thread of its own (as many
/// parts as threads, for a whole index; the batches a running walk handed on, for a partial
/// one).
pub(crate) fn search_parts(
    query: &str,
    roots: &[PathBuf],
    parts: &[&[(usize, String, bool)]],
    limit: usize,
) -> Vec<FileMatch> {
    if query.trim().is_empty() || parts.iter().all(|p| p.is_empty()) {
        return Vec::new();
    }
    let per_thread = parts.len().div_ceil(threads()).max(1);
    let tops: Vec<TopK> = std::thread::scope(|s| {
        let handles: Vec<_> = parts
            .chunks(per_thread)
            .map(|group| {
                s.spawn(move || {
                    let mut scorer = Scorer::new(query);
                    let mut top = TopK::new(limit);
                    for (root, path, is_dir) in group.iter().flat_map(|p| p.iter()) {
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
