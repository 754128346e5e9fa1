//! [`LocalStore`]: the operations every front end uses (create, load, resume, fork, list…).

use crate::error::StoreError;
use crate::index::{FileRow, Index, Scan, is_corruption};
use crate::loaded::{LoadedThread, interrupted_marker};
use crate::outline::ThreadOutline;
use crate::paging::Cursor;
use crate::record::{
    Tail, created_ms, format_timestamp, preview_text, read_rollout, read_rollout_events,
    split_meta, stamp_created, system_time_ms, thread_id_ms, truncate_preview,
};
use crate::rollout::{Head, LocalWriter, read_head, rollout_path};
use crate::scan::{
    FoundFile, day_dirs_newest_first, dir_mtime_ns, files_in, rollout_names, trusted,
};
use crate::sidecar;
use crate::types::{ListQuery, RolloutItem, RolloutLine, SessionMeta, ThreadPage, ThreadSummary};
use chrono::{Local, TimeZone};
use oi_protocol::ThreadId;
use std::collections::HashSet;
use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

const SESSIONS_DIR: &str = "sessions";
const INDEX_FILE: &str = "state.sqlite";
const SIDECAR_FILE: &str = "session_index.jsonl";

/// Stored threads under one home directory. Cheap to clone; safe to share across threads
/// and with other processes using the same home.
#[derive(Clone)]
pub(crate) struct LocalStore {
    inner: Arc<Inner>,
}

struct Inner {
    home: PathBuf,
    sessions: PathBuf,
    sidecar: PathBuf,
    index: Arc<Index>,
}

impl std::fmt::Debug for LocalStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalStore")
            .field("home", &self.inner.home)
            .finish_non_exhaustive()
    }
}

impl LocalStore {
    /// Opens the store in `home`, creating `home/sessions` if needed.
    ///
    /// Index freshness: a missing, corrupt (not a database) or other-schema-version
    /// `state.sqlite` is rebuilt from every rollout. Otherwise opening costs what changed:
    /// the index records, per day directory, the directory's mtime when it last listed it.
    /// Each open reads the year and month directories and stats each day directory (no
    /// rollout file is touched); only a day directory whose mtime differs (a file was
    /// added, removed or renamed there) is listed again, its names compared with the
    /// index's: new files are indexed from their first lines (one stat and one head read
    /// each), rows of vanished files are dropped, known files are not opened or stat'ed. A
    /// directory changed less than 3 s (`scan::RACY_NS`) before it was listed is listed again on the
    /// next open (its mtime may not show a change made in the same clock tick).
    ///
    /// Appends do not change a directory's mtime: the writers of this store update the
    /// index themselves, and a rollout appended behind the store's back (another program,
    /// a writer killed before its last index update) is re-read when [`LocalStore::list`]
    /// returns it (each listed row's mtime is compared with the index's), when it is
    /// loaded, or by [`LocalStore::rebuild_index`].
    ///
    /// When the index file cannot be created or updated (disk full, read-only home), the
    /// store falls back to an index in memory, rebuilt from the rollouts: listing and
    /// resuming keep working on what is readable; nothing is written to the index.
    pub(crate) fn open(home: &Path) -> Result<Self, StoreError> {
        let sessions = home.join(SESSIONS_DIR);
        crate::private::create_dir_all(&sessions).map_err(|e| StoreError::io(&sessions, e))?;
        // The home also holds credentials and logs: owner-only like the store itself.
        crate::private::tighten(home, crate::private::DIR_MODE);
        let path = home.join(INDEX_FILE);
        let on_disk = Index::open(&path)
            .and_then(|(index, fresh)| Self::with_index(home, &sessions, index, fresh));
        match on_disk {
            Ok(store) => Ok(store),
            Err(e @ StoreError::Index(_)) => {
                crate::notice!(
                    "thread index {} cannot be written ({e}); using the rollout files \
                     directly, without saving an index",
                    path.display()
                );
                Self::with_index(home, &sessions, Index::in_memory()?, true)
            }
            Err(e) => Err(e),
        }
    }

    fn with_index(
        home: &Path,
        sessions: &Path,
        index: Index,
        fresh: bool,
    ) -> Result<Self, StoreError> {
        let sessions = sessions.to_path_buf();
        let store = LocalStore {
            inner: Arc::new(Inner {
                home: home.to_path_buf(),
                sessions,
                sidecar: home.join(SIDECAR_FILE),
                index: Arc::new(index),
            }),
        };
        if fresh {
            store.rebuild_index()?;
        } else {
            store.reconcile()?;
        }
        Ok(store)
    }

    pub(crate) fn home(&self) -> &Path {
        &self.inner.home
    }

    /// Runs an index operation; if SQLite reports the database corrupt, rebuilds it from the
    /// rollouts and tries once more.
    fn index_call<T>(&self, f: impl Fn(&Index) -> rusqlite::Result<T>) -> Result<T, StoreError> {
        match f(&self.inner.index) {
            Ok(v) => Ok(v),
            Err(e) if is_corruption(&e) => {
                crate::notice!(
                    "thread index is corrupt ({e}); rebuilding it from the rollout files"
                );
                self.inner.index.reset()?;
                self.rebuild_index()?;
                Ok(f(&self.inner.index)?)
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Creates the rollout file, writes the `session_meta` line and inserts the index row.
    /// An empty `meta.timestamp` is filled with the current time.
    pub(crate) fn create(&self, mut meta: SessionMeta) -> Result<LocalWriter, StoreError> {
        let created = stamp_created(&mut meta)?;
        if self.index_call(|i| i.contains(&meta.id))? {
            return Err(StoreError::Invalid(format!(
                "thread {} already exists; use resume to continue it or fork to copy it",
                meta.id
            )));
        }
        let path = rollout_path(&self.inner.sessions, created, &meta.id);
        if let Some(dir) = path.parent() {
            crate::private::create_dir_all(dir).map_err(|e| StoreError::io(dir, e))?;
        }
        let file = crate::private::open(OpenOptions::new().append(true).create_new(true), &path)
            .map_err(|e| StoreError::io(&path, e))?;
        lock(&file, &meta.id, &path)?;
        let mut writer =
            LocalWriter::new(file, path.clone(), meta.id, self.inner.index.clone(), false);
        let first = writer.append_lines(&[RolloutLine {
            timestamp: meta.timestamp.clone(),
            item: RolloutItem::SessionMeta(meta.clone()),
        }]);
        if let Err(e) = first {
            // No thread was created: leave no empty rollout behind to be skipped forever.
            drop(writer);
            if let Err(rm) = std::fs::remove_file(&path) {
                tracing::debug!("{}: cannot remove it: {rm}", path.display());
            }
            return Err(e);
        }
        let mtime = file_mtime_ms(&path).unwrap_or(created);
        let row = FileRow {
            meta: &meta,
            path: &path,
            created_ms: created,
            updated_ms: mtime,
            preview: "",
        };
        // The thread is safe on disk already; a broken index must not stop the conversation
        // (the next open or rebuild indexes the file).
        if let Err(e) = self.index_call(|i| i.insert_new(&row)) {
            crate::notice!("thread {}: not added to the index: {e}", meta.id);
        }
        Ok(writer)
    }

    /// Loads a stored thread: metadata and every readable record. Unreadable lines are
    /// skipped and reported in `warnings`.
    pub(crate) fn load(&self, id: &ThreadId) -> Result<LoadedThread, StoreError> {
        let path = self.resolve_path(id)?;
        let loaded = self.load_path(&path)?;
        if loaded.meta.id != *id {
            return Err(StoreError::Corrupt {
                path,
                reason: format!(
                    "its session_meta names thread {} instead of {id}",
                    loaded.meta.id
                ),
            });
        }
        Ok(loaded)
    }

    /// The thread's turns without its records parsed (see [`ThreadOutline`]).
    pub(crate) fn outline(&self, id: &ThreadId) -> Result<ThreadOutline, StoreError> {
        let path = self.resolve_path(id)?;
        crate::outline::read_file(id, &path)
    }

    /// Loads a rollout file by path (it need not be under this home).
    pub(crate) fn load_path(&self, path: &Path) -> Result<LoadedThread, StoreError> {
        let parsed = read_rollout(path)?;
        self.loaded_from(path, parsed.lines, parsed.warnings)
    }

    fn loaded_from(
        &self,
        path: &Path,
        lines: Vec<RolloutLine>,
        warnings: Vec<String>,
    ) -> Result<LoadedThread, StoreError> {
        let (meta, timestamps, items) = split_meta(lines, path)?;
        let mtime = file_mtime_ms(path);
        let indexed = self.index_call(|i| i.get(&meta.id))?;
        let summary = match indexed {
            Some(mut s) if s.path == path => {
                if let Some(ms) = mtime {
                    s.updated_at = ms.div_euclid(1000);
                }
                s
            }
            other => {
                let created = created_ms(&meta, mtime.unwrap_or(0));
                let preview = items
                    .iter()
                    .find_map(preview_text)
                    .map(truncate_preview)
                    .unwrap_or_default();
                ThreadSummary {
                    id: meta.id,
                    path: path.to_path_buf(),
                    created_at: created.div_euclid(1000),
                    updated_at: mtime.unwrap_or(created).div_euclid(1000),
                    cwd: meta.cwd.clone(),
                    model_provider: meta.model_provider.clone(),
                    model: meta.model.clone(),
                    source: meta.source,
                    preview,
                    name: other.as_ref().and_then(|s| s.name.clone()),
                    archived: other.as_ref().is_some_and(|s| s.archived),
                    forked_from_id: meta.forked_from_id,
                    cli_version: meta.cli_version.clone(),
                    git: meta.git.clone(),
                }
            }
        };
        Ok(LoadedThread {
            summary,
            meta,
            items,
            timestamps,
            warnings,
        })
    }

    /// Reopens a stored thread for appending (same file, same id) and returns its records.
    ///
    /// A torn last line (the previous process was killed mid-write) is cut off so the next
    /// record starts on a clean line; a last turn with no end record gets a
    /// `turn_aborted(interrupted)` record, since the process running it is gone.
    ///
    /// The records are those a resumed thread is rebuilt from (see
    /// [`LoadedThread::history`]): every record but the events that only report what
    /// happened (commands' output, token counts, …), which are left unread. A thread that
    /// is read rather than resumed ([`ThreadStore::load`]) has them all.
    pub(crate) fn resume(&self, id: &ThreadId) -> Result<(LocalWriter, LoadedThread), StoreError> {
        let path = self.resolve_path(id)?;
        let file = crate::private::open(OpenOptions::new().append(true), &path)
            .map_err(|e| StoreError::io(&path, e))?;
        lock(&file, id, &path)?;
        let parsed = read_rollout_events(&path, Some(crate::loaded::rebuilt_from))?;
        let tail = parsed.tail;
        let mut loaded = self.loaded_from(&path, parsed.lines, parsed.warnings)?;
        if loaded.meta.id != *id {
            return Err(StoreError::Corrupt {
                path,
                reason: format!(
                    "its session_meta names thread {} instead of {id}",
                    loaded.meta.id
                ),
            });
        }
        if let Tail::Torn { valid_len } = tail {
            crate::notice!(
                "{}: removing an incomplete last line before appending",
                path.display()
            );
            file.set_len(valid_len)
                .map_err(|e| StoreError::io(&path, e))?;
        }
        let has_preview = !loaded.summary.preview.is_empty()
            || loaded.items.iter().any(|i| preview_text(i).is_some());
        let mut writer = LocalWriter::new(file, path, *id, self.inner.index.clone(), has_preview);
        if tail == Tail::MissingNewline {
            writer.terminate_line()?;
        }
        if let Some(turn_id) = loaded.open_turn_id() {
            let marker = interrupted_marker(turn_id);
            writer.append(&marker)?;
            loaded.items.push(marker);
            loaded.timestamps.push(format_timestamp(chrono::Utc::now()));
        }
        Ok((writer, loaded))
    }

    /// Whether a writer holds the thread now (in this process or another): its rollout
    /// file is locked. The probe takes a shared lock for an instant; a writer opening the
    /// thread meanwhile waits for it (see `lock`). A filesystem without locks cannot tell,
    /// and answers "held" (a running turn is never declared dead by a guess).
    pub(crate) fn is_held(&self, id: &ThreadId) -> Result<bool, StoreError> {
        let path = self.resolve_path(id)?;
        let file = File::open(&path).map_err(|e| StoreError::io(&path, e))?;
        match file.try_lock_shared() {
            Ok(()) => {
                let _ = file.unlock();
                Ok(false)
            }
            Err(std::fs::TryLockError::WouldBlock) => Ok(true),
            Err(std::fs::TryLockError::Error(_)) => Ok(true),
        }
    }

    /// Starts a new thread whose records are a copy of `source`'s (after its session_meta),
    /// with `new_meta.forked_from_id = source`. The two threads are independent afterwards.
    /// If `source` is mid-turn, the copy closes that turn as interrupted.
    pub(crate) fn fork(
        &self,
        source: &ThreadId,
        mut new_meta: SessionMeta,
    ) -> Result<(LocalWriter, LoadedThread), StoreError> {
        crate::loaded::check_fork_id(source, &new_meta)?;
        let src = self.load(source)?;
        new_meta.forked_from_id = Some(*source);
        let mut writer = self.create(new_meta.clone())?;
        let lines = src.fork_lines();
        writer.append_lines(&lines)?;
        writer.flush_index()?;
        let path = writer.path().to_path_buf();
        let loaded = self.loaded_from(
            &path,
            std::iter::once(RolloutLine {
                timestamp: new_meta.timestamp.clone(),
                item: RolloutItem::SessionMeta(new_meta),
            })
            .chain(lines)
            .collect(),
            src.warnings,
        )?;
        Ok((writer, loaded))
    }

    /// One page of threads. See [`ListQuery`] for filters; pages are keyset-paginated, so
    /// threads created while paging never shift or repeat later pages.
    ///
    /// A thread whose rollout file was deleted is dropped from the index here, so it is not
    /// listed (and cannot be picked by `resume --last`) only to fail when opened.
    ///
    /// A listed thread whose rollout's mtime differs from the index's (appended behind the
    /// store's back) is re-read from its first lines and the page asked for again.
    pub(crate) fn list(&self, q: &ListQuery) -> Result<ThreadPage, StoreError> {
        let cursor = Cursor::parse(q)?;
        let mut refreshes = 0;
        loop {
            let (page, stored) = self.index_call(|i| i.list(q, cursor.as_ref()))?;
            let mut gone = Vec::new();
            let mut changed = Vec::new();
            for (s, stored_ms) in page.data.iter().zip(stored) {
                if s.path.as_os_str().is_empty() {
                    continue;
                }
                match std::fs::metadata(&s.path) {
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => gone.push(s.id),
                    Err(e) => tracing::debug!("{}: {e}", s.path.display()),
                    Ok(m) => {
                        let ms = m.modified().map(system_time_ms).unwrap_or(stored_ms);
                        if ms != stored_ms {
                            changed.push((
                                s.id,
                                FoundFile {
                                    path: s.path.clone(),
                                    mtime_ms: ms,
                                },
                            ));
                        }
                    }
                }
            }
            // A file changing while we look could keep this going: refresh a few times only.
            if gone.is_empty() && (changed.is_empty() || refreshes >= 3) {
                return Ok(page);
            }
            // Each removal pass removes at least one row, so this ends; the page is refilled.
            for id in gone {
                tracing::debug!("thread {id}: rollout file is gone; removing it from the index");
                self.index_call(|i| i.remove(&id))?;
            }
            if !changed.is_empty() {
                refreshes += 1;
                self.refresh(changed)?;
            }
        }
    }

    /// Re-reads the heads of indexed rollouts whose mtime changed; one that cannot be read
    /// keeps its row, with the new mtime (so it is not re-read on every page).
    fn refresh(&self, changed: Vec<(ThreadId, FoundFile)>) -> Result<(), StoreError> {
        let touched: Vec<(ThreadId, PathBuf, i64)> = changed
            .iter()
            .map(|(id, f)| (*id, f.path.clone(), f.mtime_ms))
            .collect();
        let heads = read_heads(changed.into_iter().map(|(_, f)| f).collect());
        let rows: Vec<FileRow<'_>> = heads.iter().map(file_row).collect();
        self.index_call(|i| i.upsert_files(&rows, None))?;
        for (id, path, ms) in touched {
            if !heads.iter().any(|h| h.0 == path) {
                self.index_call(|i| i.touch(&id, ms))?;
            }
        }
        Ok(())
    }

    /// The index row of a thread (no file access).
    pub(crate) fn get(&self, id: &ThreadId) -> Result<Option<ThreadSummary>, StoreError> {
        self.index_call(|i| i.get(id))
    }

    /// Archived threads are hidden from `list` unless asked for. The flag is logged in
    /// `session_index.jsonl`, so it survives an index rebuild.
    pub(crate) fn set_archived(&self, id: &ThreadId, archived: bool) -> Result<(), StoreError> {
        self.require(id)?;
        sidecar::append_archived(&self.inner.sidecar, id, archived)?;
        self.index_call(|i| i.set_archived(id, archived))?;
        Ok(())
    }

    /// Sets (or with `None` / blank, clears) the thread's name. Logged like archive flags.
    pub(crate) fn set_name(&self, id: &ThreadId, name: Option<String>) -> Result<(), StoreError> {
        let name = name.map(|n| n.trim().to_string()).filter(|n| !n.is_empty());
        self.require(id)?;
        sidecar::append_name(&self.inner.sidecar, id, name.as_deref())?;
        self.index_call(|i| i.set_name(id, name.as_deref()))?;
        Ok(())
    }

    /// Deletes a thread for good: its rollout file, then its index row (so a crash in
    /// between leaves a row whose file is gone, which the next reconcile drops).
    pub(crate) fn delete(&self, id: &ThreadId) -> Result<(), StoreError> {
        let path = self.resolve_path(id)?;
        match std::fs::remove_file(&path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(StoreError::io(path, e)),
        }
        self.index_call(|i| i.remove(id))?;
        Ok(())
    }

    fn require(&self, id: &ThreadId) -> Result<(), StoreError> {
        self.resolve_path(id).map(|_| ())
    }

    /// Rebuilds the whole index from the rollout files (first lines only) and the names/
    /// archive log. Returns how many threads were indexed. Unusable files are skipped with
    /// a warning.
    pub(crate) fn rebuild_index(&self) -> Result<usize, StoreError> {
        let mut files = Vec::new();
        let mut dirs = Vec::new();
        for day in day_dirs_newest_first(&self.inner.sessions)? {
            // The directory's mtime before its listing: a change during it shows next time.
            let Some(mtime) = dir_mtime_ns(&day) else {
                continue;
            };
            files.extend(files_in(&day)?);
            dirs.push((day, trusted(mtime)));
        }
        let heads = read_heads(files);
        let rows: Vec<FileRow<'_>> = heads.iter().map(file_row).collect();
        let sidecar = sidecar::read(&self.inner.sidecar)?;
        let index = &self.inner.index;
        match index.replace_all(&rows, &sidecar, &dirs) {
            Ok(()) => {}
            Err(e) if is_corruption(&e) => {
                index.reset()?;
                index.replace_all(&rows, &sidecar, &dirs)?;
            }
            Err(e) => return Err(e.into()),
        }
        Ok(rows.len())
    }

    /// Indexes what changed in the day directories since the index last listed them (see
    /// [`LocalStore::open`]).
    fn reconcile(&self) -> Result<(), StoreError> {
        let recorded: std::collections::HashMap<PathBuf, i64> =
            self.index_call(|i| i.dirs())?.into_iter().collect();
        let mut on_disk = HashSet::new();
        let mut new_files = Vec::new();
        let mut gone = Vec::new();
        let mut listed = Vec::new();
        for day in day_dirs_newest_first(&self.inner.sessions)? {
            let Some(mtime) = dir_mtime_ns(&day) else {
                continue;
            };
            on_disk.insert(day.clone());
            if recorded.get(&day) == Some(&mtime) {
                continue;
            }
            let known: HashSet<PathBuf> = self
                .index_call(|i| i.paths_under(&day))?
                .into_iter()
                .collect();
            let names = rollout_names(&day)?;
            for path in &names {
                if !known.contains(path) {
                    // Only new files are stat'ed (their mtime is the thread's updated_at).
                    if let Some(mtime_ms) = file_mtime_ms(path) {
                        new_files.push(FoundFile {
                            path: path.clone(),
                            mtime_ms,
                        });
                    }
                }
            }
            let names: HashSet<PathBuf> = names.into_iter().collect();
            gone.extend(known.into_iter().filter(|p| !names.contains(p)));
            listed.push((day, trusted(mtime)));
        }
        let dirs_gone: Vec<PathBuf> = recorded
            .into_keys()
            .filter(|d| !on_disk.contains(d))
            .collect();
        if listed.is_empty() && dirs_gone.is_empty() {
            return Ok(());
        }
        tracing::debug!(
            "{} day directories changed: {} new rollouts, {} gone",
            listed.len(),
            new_files.len(),
            gone.len()
        );
        let heads = read_heads(new_files);
        let rows: Vec<FileRow<'_>> = heads.iter().map(file_row).collect();
        let sidecar = sidecar::read(&self.inner.sidecar)?;
        let scan = Scan {
            rows: &rows,
            gone: &gone,
            dirs: &listed,
            dirs_gone: &dirs_gone,
        };
        self.index_call(|i| i.apply_scan(&scan, &sidecar))
    }

    /// The rollout path of a thread: from the index, else by looking in the day directories
    /// around the time in its UUID v7 (and indexing what is found). A row whose file is gone
    /// is dropped from the index.
    fn resolve_path(&self, id: &ThreadId) -> Result<PathBuf, StoreError> {
        if let Some(s) = self.index_call(|i| i.get(id))? {
            if s.path.exists() {
                return Ok(s.path);
            }
            crate::notice!(
                "thread {id}: rollout {} is gone; removing it from the index",
                s.path.display()
            );
            self.index_call(|i| i.remove(id))?;
        }
        let path = self.find_by_id(id).ok_or(StoreError::NotFound(*id))?;
        let heads = read_heads(vec![FoundFile {
            mtime_ms: file_mtime_ms(&path).unwrap_or(0),
            path: path.clone(),
        }]);
        let rows: Vec<FileRow<'_>> = heads.iter().map(file_row).collect();
        let sidecar = sidecar::read(&self.inner.sidecar)?;
        self.index_call(|i| i.upsert_files(&rows, Some(&sidecar)))?;
        Ok(path)
    }

    fn find_by_id(&self, id: &ThreadId) -> Option<PathBuf> {
        let ms = thread_id_ms(id);
        let suffix = format!("-{id}.jsonl");
        // Local midnight may fall either side of the UUID's UTC time: look a day around it.
        for delta in [0i64, -1, 1] {
            let Some(t) = Local
                .timestamp_millis_opt(ms + delta * 86_400_000)
                .earliest()
            else {
                continue;
            };
            let dir = self
                .inner
                .sessions
                .join(t.format("%Y").to_string())
                .join(t.format("%m").to_string())
                .join(t.format("%d").to_string());
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for e in entries.flatten() {
                if e.file_name().to_str().is_some_and(|n| n.ends_with(&suffix)) {
                    return Some(e.path());
                }
            }
        }
        None
    }
}

/// Takes the writer lock; another holder means another live session on this thread.
///
/// The lock belongs to the open file, and a child process forked (by any thread) while a
/// writer was alive shares it until the child's `exec` closes it. So a conflict is retried
/// for a moment before it is reported.
fn lock(file: &File, id: &ThreadId, path: &Path) -> Result<(), StoreError> {
    let deadline = Instant::now() + Duration::from_millis(500);
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) if Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5));
            }
            Err(e) => return lock_failed(e, id, path),
        }
    }
}

fn lock_failed(e: std::fs::TryLockError, id: &ThreadId, path: &Path) -> Result<(), StoreError> {
    match e {
        std::fs::TryLockError::WouldBlock => Err(StoreError::Busy {
            id: *id,
            path: path.to_path_buf(),
        }),
        // Filesystems without locks (some network mounts): carry on unprotected.
        std::fs::TryLockError::Error(e) => {
            tracing::debug!(
                "{}: cannot lock ({e}); continuing without a lock",
                path.display()
            );
            Ok(())
        }
    }
}

fn file_mtime_ms(path: &Path) -> Option<i64> {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .map(system_time_ms)
}

fn file_row(h: &(PathBuf, i64, Head)) -> FileRow<'_> {
    let (path, mtime, head) = h;
    FileRow {
        meta: &head.meta,
        path,
        created_ms: created_ms(&head.meta, *mtime),
        updated_ms: *mtime,
        preview: &head.preview,
    }
}

/// Reads the heads of `files` on a few threads; unusable files are logged and skipped.
fn read_heads(files: Vec<FoundFile>) -> Vec<(PathBuf, i64, Head)> {
    let workers = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2)
        .clamp(1, 8);
    let read_one = |f: FoundFile| match read_head(&f.path) {
        Ok(head) => Some((f.path, f.mtime_ms, head)),
        // An empty file holds no thread (a creation that failed, or one being created right
        // now): nothing to index and nothing to warn about.
        Err(_) if std::fs::metadata(&f.path).is_ok_and(|m| m.len() == 0) => {
            tracing::debug!("{}: empty; not a thread (yet)", f.path.display());
            None
        }
        Err(e) => {
            crate::notice!("skipping {}: {e}", f.path.display());
            None
        }
    };
    if files.len() < 64 || workers == 1 {
        return files.into_iter().filter_map(read_one).collect();
    }
    let chunk = files.len().div_ceil(workers);
    let mut chunks: Vec<Vec<FoundFile>> = Vec::new();
    let mut files = files.into_iter().peekable();
    while files.peek().is_some() {
        chunks.push(files.by_ref().take(chunk).collect());
    }
    std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .into_iter()
            .map(|c| s.spawn(move || c.into_iter().filter_map(read_one).collect::<Vec<_>>()))
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    })
}
