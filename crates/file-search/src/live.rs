//! A file index kept for a whole session: built in the background, refreshed when the
//! tree changes (an inotify/FSEvents watcher), and searched per keystroke without walking.
//!
//! Walking a 100k-file tree per keystroke costs seconds; matching 100k indexed paths costs
//! milliseconds. Nothing here runs on the caller's thread but the matching: [`FileIndex::start`]
//! only spawns the indexing thread, so a picker opened on a huge tree keeps drawing. While
//! the first walk runs, searches match what it found so far and say so ([`Search::complete`]),
//! so the first results of a 100k-file tree come within milliseconds rather than after the
//! walk. The watcher is set up after the first walk and watches only the directories the
//! walk included, one by one: ignored trees (`target/`, `node_modules/`) cost no watch and
//! their changes (a running build) never cause a walk. Changes are batched: events are
//! collected for a short quiet period, then the tree is walked again off the keystroke path.

use crate::{FileMatch, Scorer, TopK, finish, search_parts, threads, walk_in_batches};
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

type Entry = (usize, String, bool);
type Entries = Arc<Vec<Entry>>;

struct Shared {
    roots: Vec<PathBuf>,
    /// `None` until the first walk finished.
    entries: RwLock<Option<Entries>>,
    /// What the first walk has found so far, in the batches its threads handed on.
    partial: Mutex<Vec<Entries>>,
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
    /// Set up by the indexing thread after the first walk.
    watcher: Mutex<Option<Watch>>,
}

struct Watch {
    watcher: notify::RecommendedWatcher,
    /// The directories watched now.
    dirs: HashSet<PathBuf>,
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

/// The answer to one query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Search {
    /// Best first.
    pub matches: Vec<FileMatch>,
    /// `false` while the first walk runs: the matches are among what it found so far, and
    /// asking again later (see [`FileIndex::wait_for_complete`]) may give better ones.
    pub complete: bool,
}

/// Which query is the newest one; an older one's answer is dropped. From
/// [`FileIndex::ticket`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticket(u64);

/// See the module docs. Dropping it stops the walk, the watcher and the indexing thread.
pub struct FileIndex {
    shared: Arc<Shared>,
}

impl FileIndex {
    /// Starts indexing `roots` in the background and returns at once. Without a watcher
    /// (the platform refused one) the index is built once and searches stay correct for
    /// what existed then.
    pub fn start(roots: Vec<PathBuf>) -> Self {
        let shared = Arc::new(Shared {
            roots,
            entries: RwLock::new(None),
            partial: Mutex::new(Vec::new()),
            dirs: RwLock::new(HashSet::new()),
            generation: Mutex::new(0),
            walked: Condvar::new(),
            dirty: Mutex::new(true),
            changed: Condvar::new(),
            stop: AtomicBool::new(false),
            latest_query: AtomicU64::new(0),
            last: Mutex::new(None),
            watcher: Mutex::new(None),
        });
        let indexer = shared.clone();
        let spawned = std::thread::Builder::new()
            .name("file-index".into())
            .spawn(move || refresh_loop(&indexer));
        if spawned.is_err() {
            // No thread, no index: every search says it found nothing yet, so a picker
            // shows an empty list rather than freezing on a walk.
            shared.stop.store(true, Ordering::Relaxed);
        }
        Self { shared }
    }

    /// The best matches for `query`, among what is indexed so far. Returns `None` when a
    /// newer query started meanwhile: its answer is the one the picker wants.
    pub fn search(&self, query: &str, limit: usize) -> Option<Vec<FileMatch>> {
        self.search_as(self.ticket(), query, limit)
            .map(|found| found.matches)
    }

    /// Makes the next query the newest; every older one's answer becomes `None`.
    pub fn ticket(&self) -> Ticket {
        Ticket(self.shared.latest_query.fetch_add(1, Ordering::SeqCst) + 1)
    }

    /// Whether `ticket` is still the newest query.
    pub fn is_latest(&self, ticket: Ticket) -> bool {
        self.shared.latest_query.load(Ordering::SeqCst) == ticket.0
    }

    /// Answers `query` for `ticket`, which may ask again (a picker refreshing its list
    /// while the first walk runs) without making itself newer than a later keystroke.
    /// `None` when a newer ticket was taken.
    pub fn search_as(&self, ticket: Ticket, query: &str, limit: usize) -> Option<Search> {
        if !self.is_latest(ticket) {
            return None;
        }
        let entries = self
            .shared
            .entries
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let found = match entries {
            Some(entries) => Search {
                matches: self.search_entries(query, limit, &entries),
                complete: true,
            },
            None => {
                let batches = self
                    .shared
                    .partial
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone();
                Search {
                    matches: search_batches(query, &self.shared.roots, &batches, limit),
                    // A stopped index (no indexing thread) will find nothing more.
                    complete: self.shared.stop.load(Ordering::Relaxed),
                }
            }
        };
        self.is_latest(ticket).then_some(found)
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

    /// Whether the first walk finished (searches are then [`Search::complete`]).
    pub fn is_complete(&self) -> bool {
        self.generation() > 0
    }

    /// Waits (at most `timeout`) for the first walk to finish; returns whether it has.
    pub fn wait_for_complete(&self, timeout: Duration) -> bool {
        self.wait_for_generation(0, timeout) > 0
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
            .wait_timeout_while(g, timeout, |g| {
                *g <= after && !self.shared.stop.load(Ordering::Relaxed)
            })
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

/// Matches `query` against the batches a running walk has handed on so far.
fn search_batches(
    query: &str,
    roots: &[PathBuf],
    batches: &[Entries],
    limit: usize,
) -> Vec<FileMatch> {
    let parts: Vec<&[Entry]> = batches.iter().map(|b| b.as_slice()).collect();
    search_parts(query, roots, &parts, limit)
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

    /// Watches the roots and `dirs` (the directories the last walk included), each on its
    /// own, and stops watching those that are gone. Without a watcher the index stays as
    /// the walks left it.
    fn watch(self: &Arc<Self>, dirs: &HashSet<PathBuf>) {
        let mut slot = self.watcher.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            let weak = Arc::downgrade(self);
            let watcher =
                notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                    let (Some(shared), Ok(event)) = (weak.upgrade(), event) else {
                        return;
                    };
                    if event.paths.iter().any(|p| shared.matters(p)) {
                        *shared.dirty.lock().unwrap_or_else(|e| e.into_inner()) = true;
                        shared.changed.notify_all();
                    }
                });
            let Ok(watcher) = watcher else { return };
            *slot = Some(Watch {
                watcher,
                dirs: HashSet::new(),
            });
        }
        let Some(watch) = slot.as_mut() else { return };
        let wanted: HashSet<&PathBuf> = self.roots.iter().chain(dirs.iter()).collect();
        watch.dirs.retain(|d| {
            let keep = wanted.contains(d);
            if !keep {
                // A deleted directory's watch is already gone; the error says only that.
                let _ = watch.watcher.unwatch(d);
            }
            keep
        });
        for dir in wanted {
            if self.stop.load(Ordering::Relaxed) {
                return;
            }
            if !watch.dirs.contains(dir)
                && watch
                    .watcher
                    .watch(dir, RecursiveMode::NonRecursive)
                    .is_ok()
            {
                watch.dirs.insert(dir.clone());
            }
        }
    }
}

fn refresh_loop(shared: &Arc<Shared>) {
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
        let first = shared
            .entries
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .is_none();
        let collected = Mutex::new(Vec::new());
        walk_in_batches(&shared.roots, &shared.stop, &|batch| {
            if first {
                // Searches during the first walk match what it has found so far.
                let batch = Arc::new(batch);
                collected
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(batch.clone());
                shared
                    .partial
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(batch);
            } else {
                collected
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(Arc::new(batch));
            }
        });
        if shared.stop.load(Ordering::Relaxed) {
            // A cancelled walk is incomplete: keep what the last whole walk found.
            shared.walked.notify_all();
            return;
        }
        let batches = collected.into_inner().unwrap_or_else(|e| e.into_inner());
        let mut entries = Vec::with_capacity(batches.iter().map(|b| b.len()).sum());
        for batch in batches {
            match Arc::try_unwrap(batch) {
                Ok(mut owned) => entries.append(&mut owned),
                Err(shared_batch) => entries.extend(shared_batch.iter().cloned()),
            }
        }
        let dirs: HashSet<PathBuf> = entries
            .iter()
            .filter(|(_, _, is_dir)| *is_dir)
            .map(|(root, rel, _)| shared.roots[*root].join(rel))
            .collect();
        // After the walk, not before: only the directories it included are watched. And
        // before the walk is published, so a change made by someone who saw it is seen. A
        // file created in the moment between a new directory's walk and its watch is found
        // by the next walk any change causes.
        *shared.dirs.write().unwrap_or_else(|e| e.into_inner()) = dirs.clone();
        shared.watch(&dirs);
        *shared.entries.write().unwrap_or_else(|e| e.into_inner()) = Some(Arc::new(entries));
        shared
            .partial
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
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
        assert!(index.wait_for_complete(WAIT));
        let older = index.ticket();
        assert!(index.search_as(older, "a", 10).is_some());
        // A newer keystroke: the older query's answers (and its refreshes) are dropped,
        // and asking again as the older one does not take the lead back.
        let newer = index.ticket();
        assert!(index.search_as(older, "a", 10).is_none());
        assert!(index.is_latest(newer));
        let found = index.search_as(newer, "a", 10).unwrap();
        assert!(found.complete);
        assert_eq!(paths(Some(found.matches)), vec!["a.txt"]);
    }

    /// Opens `fifo` for writing (which waits for its reader) and closes it: the reader
    /// then reads an empty file. On a thread of its own, since nobody may be reading.
    fn release(fifo: PathBuf) {
        std::thread::spawn(move || drop(std::fs::OpenOptions::new().write(true).open(fifo)));
    }

    #[test]
    fn start_returns_at_once_and_searches_see_a_walk_in_progress() {
        // A `.gitignore` that is a named pipe holds the walk inside `blocked/` until it is
        // written: the walk is provably unfinished while the test looks.
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        for i in 0..200 {
            std::fs::write(root.join(format!("visible_{i:03}.txt")), "x").unwrap();
        }
        std::fs::create_dir_all(root.join("blocked")).unwrap();
        std::fs::write(root.join("blocked/hidden_until_walked.txt"), "x").unwrap();
        let fifo = root.join("blocked/.gitignore");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());

        let index = FileIndex::start(vec![root.clone()]);
        let mut partial = None;
        for _ in 0..600 {
            let found = index.search_as(index.ticket(), "visible", 10).unwrap();
            assert!(
                !found.complete,
                "the walk cannot be done: blocked/ is unread"
            );
            if !found.matches.is_empty() {
                partial = Some(found);
                break;
            }
            index.wait_for_complete(Duration::from_millis(50));
        }
        let partial = partial.expect("no match while the walk ran");
        assert!(
            partial
                .matches
                .iter()
                .all(|m| m.path.starts_with("visible_"))
        );
        assert!(!index.is_complete());
        assert!(index.search("hidden_until", 10).unwrap().is_empty());

        release(fifo);
        assert!(index.wait_for_complete(WAIT), "the walk never finished");
        let found = index.search_as(index.ticket(), "hidden_until", 10).unwrap();
        assert!(found.complete);
        assert_eq!(
            paths(Some(found.matches)),
            vec!["blocked/hidden_until_walked.txt"]
        );
        assert_eq!(index.search("visible", 500).unwrap().len(), 200);
    }

    #[test]
    fn only_the_walked_directories_are_watched() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        std::fs::create_dir_all(root.join("node_modules/pkg/lib")).unwrap();
        std::fs::write(root.join(".gitignore"), "node_modules/\n").unwrap();
        let index = FileIndex::start(vec![root.clone()]);
        assert!(index.wait_for_complete(WAIT));
        let watched = index.shared.watcher.lock().unwrap();
        let mut dirs: Vec<_> = watched.as_ref().unwrap().dirs.iter().cloned().collect();
        dirs.sort();
        assert_eq!(
            dirs,
            vec![root.clone(), root.join("src"), root.join("src/deep")]
        );
    }
}
