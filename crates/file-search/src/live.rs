//! A file index kept for a whole session: built once in the background, refreshed when the
//! tree changes (an inotify/FSEvents watcher), and searched per keystroke without walking.
//!
//! Walking a 100k-file tree per keystroke costs seconds; matching 100k indexed paths costs
//! milliseconds. Changes are batched: events are collected for a short quiet period, then
//! the tree is walked again off the keystroke path. Events under directories the last walk
//! left out (gitignored ones such as `target/`, which builds keep busy) are dropped, so a
//! running build does not keep the index rebuilding.

use crate::{FileMatch, Scorer, TopK, finish, index_roots, search, threads};
use notify::{RecursiveMode, Watcher};
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::Duration;

/// How long the tree must be quiet after a change before it is walked again.
const SETTLE: Duration = Duration::from_millis(200);
/// A tree that keeps changing is still walked after this many settle periods.
const MAX_SETTLES: u32 = 10;

type Entries = Arc<Vec<(usize, String, bool)>>;

struct Shared {
    roots: Vec<PathBuf>,
    /// `None` until the first walk finished.
    entries: RwLock<Option<Entries>>,
    /// Directories the last walk included (absolute), to drop events under ignored ones.
    dirs: RwLock<HashSet<PathBuf>>,
    /// Bumped after every walk; [`FileIndex::wait_for_generation`] waits on it.
    generation: Mutex<u64>,
    walked: Condvar,
    /// A change was seen since the last walk.
    dirty: Mutex<bool>,
    changed: Condvar,
    stop: AtomicBool,
    /// The newest query; an older one still running gives up.
    latest_query: AtomicU64,
    /// The last query and every entry it matched: a query that extends it (the next
    /// keystroke) only needs to look at those.
    last: Mutex<Option<LastQuery>>,
}

struct LastQuery {
    generation: u64,
    query: String,
    matched: Arc<Vec<u32>>,
}

/// Whether every match of `next` is a match of `prev`: typing one more character of a
/// plain query (no spaces or operators, whose atoms match independently).
fn narrows(prev: &str, next: &str) -> bool {
    let plain = |q: &str| !q.contains([' ', '^', '$', '!', '\'', '\\']);
    !prev.is_empty() && next.starts_with(prev) && plain(prev) && plain(next)
}

/// See the module docs. Dropping it stops the watcher and the refresh thread.
pub struct FileIndex {
    shared: Arc<Shared>,
    _watcher: Option<notify::RecommendedWatcher>,
}

impl FileIndex {
    /// Starts indexing `roots` in the background. Without a watcher (the platform refused
    /// one) the index is built once and searches stay correct for what existed then.
    pub fn start(roots: Vec<PathBuf>) -> Self {
        let shared = Arc::new(Shared {
            roots,
            entries: RwLock::new(None),
            dirs: RwLock::new(HashSet::new()),
            generation: Mutex::new(0),
            walked: Condvar::new(),
            dirty: Mutex::new(true),
            changed: Condvar::new(),
            stop: AtomicBool::new(false),
            latest_query: AtomicU64::new(0),
            last: Mutex::new(None),
        });
        let watcher = watch(&shared);
        let refresher = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("file-index".into())
            .spawn(move || refresh_loop(&refresher));
        if spawned.is_err() {
            // No thread: searches fall back to walking.
            shared.stop.store(true, Ordering::Relaxed);
        }
        Self {
            shared,
            _watcher: watcher,
        }
    }

    /// The best matches for `query`. Uses the index once it is built (walking the tree
    /// until then). Returns `None` when a newer query started meanwhile: its answer is the
    /// one the picker wants.
    pub fn search(&self, query: &str, limit: usize) -> Option<Vec<FileMatch>> {
        let seq = self.shared.latest_query.fetch_add(1, Ordering::SeqCst) + 1;
        let entries = self
            .shared
            .entries
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let found = match entries {
            Some(entries) => self.search_entries(query, limit, &entries),
            None => {
                let superseded = Superseded {
                    shared: &self.shared,
                    seq,
                };
                search(query, &self.shared.roots, limit, &superseded.flag())
            }
        };
        (self.shared.latest_query.load(Ordering::SeqCst) == seq).then_some(found)
    }

    /// Scores the entries (only the last query's matches when `query` extends it) in
    /// parallel chunks, and remembers what matched for the next keystroke.
    fn search_entries(&self, query: &str, limit: usize, entries: &Entries) -> Vec<FileMatch> {
        if query.trim().is_empty() || entries.is_empty() {
            return Vec::new();
        }
        let generation = self.generation();
        let candidates = self
            .shared
            .last
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .as_ref()
            .filter(|l| l.generation == generation && narrows(&l.query, query))
            .map(|l| l.matched.clone());
        let all: Vec<u32>;
        let ids: &[u32] = match &candidates {
            Some(c) => c,
            None => {
                all = (0..entries.len() as u32).collect();
                &all
            }
        };
        let chunk = ids.len().div_ceil(threads()).max(1);
        let parts: Vec<(TopK, Vec<u32>)> = std::thread::scope(|s| {
            let handles: Vec<_> = ids
                .chunks(chunk)
                .map(|part| {
                    s.spawn(move || {
                        let mut scorer = Scorer::new(query);
                        let mut top = TopK::new(limit);
                        let mut matched = Vec::new();
                        for &i in part {
                            let (root, path, is_dir) = &entries[i as usize];
                            if let Some(score) = scorer.score(path) {
                                matched.push(i);
                                if top.admits(score) {
                                    top.push(score, path.clone(), *root, *is_dir);
                                }
                            }
                        }
                        (top, matched)
                    })
                })
                .collect();
            handles.into_iter().filter_map(|h| h.join().ok()).collect()
        });
        let mut top = TopK::new(limit);
        let mut matched = Vec::new();
        for (t, m) in parts {
            top.merge(t);
            matched.extend(m);
        }
        *self.shared.last.lock().unwrap_or_else(|e| e.into_inner()) = Some(LastQuery {
            generation,
            query: query.to_string(),
            matched: Arc::new(matched),
        });
        finish(query, &self.shared.roots, top)
    }

    /// How many walks have finished.
    pub fn generation(&self) -> u64 {
        *self
            .shared
            .generation
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// Waits (at most `timeout`) until more than `after` walks have finished; returns the
    /// generation reached.
    pub fn wait_for_generation(&self, after: u64, timeout: Duration) -> u64 {
        let g = self
            .shared
            .generation
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let (g, _) = self
            .shared
            .walked
            .wait_timeout_while(g, timeout, |g| *g <= after)
            .unwrap_or_else(|e| e.into_inner());
        *g
    }
}

impl Drop for FileIndex {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Relaxed);
        self.shared.changed.notify_all();
    }
}

/// A cancel flag for the walking fallback that turns true once a newer query started.
struct Superseded<'a> {
    shared: &'a Shared,
    seq: u64,
}

impl Superseded<'_> {
    fn flag(&self) -> AtomicBool {
        // The walk checks its flag per entry; a plain snapshot is enough for the first
        // keystrokes before the index exists.
        AtomicBool::new(self.shared.latest_query.load(Ordering::SeqCst) != self.seq)
    }
}

fn watch(shared: &Arc<Shared>) -> Option<notify::RecommendedWatcher> {
    let weak = Arc::downgrade(shared);
    let mut watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let (Some(shared), Ok(event)) = (weak.upgrade(), event) else {
            return;
        };
        if event.paths.iter().any(|p| shared.matters(p)) {
            *shared.dirty.lock().unwrap_or_else(|e| e.into_inner()) = true;
            shared.changed.notify_all();
        }
    })
    .ok()?;
    for root in &shared.roots {
        if watcher.watch(root, RecursiveMode::Recursive).is_err() {
            return None;
        }
    }
    Some(watcher)
}

impl Shared {
    /// Whether a change at `path` can change the index: its directory was walked (a change
    /// inside `target/` or `.git/` cannot).
    fn matters(&self, path: &Path) -> bool {
        let Some(parent) = path.parent() else {
            return false;
        };
        if path.components().any(|c| c.as_os_str() == ".git") {
            return false;
        }
        self.roots.iter().any(|r| r == parent)
            || self
                .dirs
                .read()
                .unwrap_or_else(|e| e.into_inner())
                .contains(parent)
    }
}

fn refresh_loop(shared: &Shared) {
    loop {
        {
            let mut dirty = shared.dirty.lock().unwrap_or_else(|e| e.into_inner());
            while !*dirty && !shared.stop.load(Ordering::Relaxed) {
                dirty = shared
                    .changed
                    .wait(dirty)
                    .unwrap_or_else(|e| e.into_inner());
            }
            if shared.stop.load(Ordering::Relaxed) {
                return;
            }
            // Let a burst of changes (a checkout, an editor's save) settle first, but not
            // forever: a tree that never goes quiet is walked every few settle periods.
            let first = *shared.generation.lock().unwrap_or_else(|e| e.into_inner()) == 0;
            let mut waits = if first { MAX_SETTLES } else { 0 };
            *dirty = false;
            while waits < MAX_SETTLES {
                waits += 1;
                *dirty = false;
                let (d, timeout) = shared
                    .changed
                    .wait_timeout_while(dirty, SETTLE, |d| !*d)
                    .unwrap_or_else(|e| e.into_inner());
                dirty = d;
                if timeout.timed_out() || shared.stop.load(Ordering::Relaxed) {
                    break;
                }
            }
            *dirty = false;
        }
        let never = AtomicBool::new(false);
        let entries = index_roots(&shared.roots, &never);
        let dirs: HashSet<PathBuf> = entries
            .iter()
            .filter(|(_, _, is_dir)| *is_dir)
            .map(|(root, rel, _)| shared.roots[*root].join(rel))
            .collect();
        *shared.dirs.write().unwrap_or_else(|e| e.into_inner()) = dirs;
        *shared.entries.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(entries));
        *shared.generation.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        shared.walked.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WAIT: Duration = Duration::from_secs(30);

    fn paths(found: Option<Vec<FileMatch>>) -> Vec<String> {
        found
            .unwrap_or_default()
            .into_iter()
            .map(|m| m.path)
            .collect()
    }

    #[test]
    fn the_index_follows_the_tree_and_skips_ignored_paths() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(root.join("target")).unwrap();
        std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
        std::fs::write(root.join("src/main.rs"), "x").unwrap();
        let index = FileIndex::start(vec![root.clone()]);
        let g = index.wait_for_generation(0, WAIT);
        assert!(g >= 1, "the first walk never finished");
        assert_eq!(paths(index.search("main", 10)), vec!["src/main.rs"]);

        // A new file is found once the watcher's walk is done; a deleted one is gone.
        std::fs::write(root.join("src/parser.rs"), "x").unwrap();
        std::fs::remove_file(root.join("src/main.rs")).unwrap();
        let mut g2 = g;
        for _ in 0..10 {
            g2 = index.wait_for_generation(g2, WAIT);
            if paths(index.search("parser", 10)) == vec!["src/parser.rs"] {
                break;
            }
        }
        assert!(g2 > g, "the change never caused a walk");
        assert_eq!(paths(index.search("parser", 10)), vec!["src/parser.rs"]);
        assert!(paths(index.search("main", 10)).is_empty());
        // Ignored paths never enter the index, and changes under them are not walks.
        assert!(!index.shared.matters(&root.join("target/debug/main.rs")));
        assert!(index.shared.matters(&root.join("src/new.rs")));
        assert!(!index.shared.matters(&root.join(".git/index")));
    }

    #[test]
    fn typing_on_narrows_to_the_last_matches_with_the_same_results() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..300 {
            let d = dir.path().join(format!("m{}", i % 7));
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join(format!("f{i}_Handler.rs")), "x").unwrap();
        }
        let roots = vec![dir.path().to_path_buf()];
        let index = FileIndex::start(roots.clone());
        index.wait_for_generation(0, WAIT);
        let entries = index.shared.entries.read().unwrap().clone().unwrap();
        for q in ["4", "42", "42h", "42ha", "42H", "42Hand", "m3 f1", "m3 f12"] {
            let fast = index.search(q, 20).unwrap();
            let full = crate::search_index(q, &roots, &entries, 20);
            assert_eq!(fast, full, "{q}");
        }
        assert!(narrows("42", "42h") && !narrows("42h", "42H"));
        assert!(!narrows("m3", "m3 f1"), "atoms match independently");
    }

    #[test]
    fn an_older_query_gives_way_to_a_newer_one() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("a.txt"), "x").unwrap();
        let index = FileIndex::start(vec![dir.path().to_path_buf()]);
        index.wait_for_generation(0, WAIT);
        // Simulate a newer keystroke arriving while this query runs.
        let seq = index.shared.latest_query.load(Ordering::SeqCst);
        assert!(index.search("a", 10).is_some());
        index.shared.latest_query.store(seq + 5, Ordering::SeqCst);
        let superseded = Superseded {
            shared: &index.shared,
            seq: seq + 1,
        };
        assert!(superseded.flag().load(Ordering::Relaxed));
    }
}
