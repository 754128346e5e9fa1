//! The store seam: [`ThreadStore`] and [`RolloutWriter`] are handles over a backend, the
//! local files (rollout JSONL + SQLite index) or a PostgreSQL database. Callers see one API
//! whichever backend holds the threads; the backend is picked once, when the store opens.

use crate::error::StoreError;
use crate::loaded::LoadedThread;
use crate::outline::ThreadOutline;
use crate::postgres::{PgStore, PgWriter, StoreTimeouts};
use crate::rollout::LocalWriter;
use crate::store::LocalStore;
use crate::types::{ListQuery, RolloutItem, SessionMeta, ThreadPage, ThreadSummary};
use oi_protocol::ThreadId;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Where threads are kept: the `[thread_store]` section of config.toml.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum StoreLocation {
    /// Rollout files under `$OPENINTERPRETER_HOME/sessions` plus `state.sqlite` (the default).
    #[default]
    Local,
    /// A PostgreSQL database (`postgresql://user@host:port/db`), shared by every process
    /// configured with the same URL.
    Postgres(String),
}

impl StoreLocation {
    /// `None` or an empty string: the local store; a `postgres://` / `postgresql://` URL: that
    /// database. Anything else is an error naming the accepted forms.
    pub fn from_url(url: Option<&str>) -> Result<Self, StoreError> {
        match url.map(str::trim).filter(|u| !u.is_empty()) {
            None => Ok(StoreLocation::Local),
            Some(u) if u.starts_with("postgresql://") || u.starts_with("postgres://") => {
                Ok(StoreLocation::Postgres(u.to_string()))
            }
            Some(u) => Err(StoreError::Invalid(format!(
                "thread_store.url `{}` is not supported: use postgresql://USER@HOST:PORT/DATABASE, \
                 or remove the key to keep threads in local files",
                crate::postgres::redact_url(u)
            ))),
        }
    }
}

/// Stored threads. Cheap to clone; safe to share across threads and with other processes
/// using the same home (local) or the same database (PostgreSQL).
#[derive(Clone, Debug)]
pub struct ThreadStore {
    backend: Backend,
}

#[derive(Clone, Debug)]
enum Backend {
    Local(LocalStore),
    Postgres(PgStore),
}

impl ThreadStore {
    /// Opens the local store in `home`, creating `home/sessions` if needed. See
    /// [`ThreadStore::open_at`] for other backends.
    ///
    /// Index freshness: a missing, corrupt (not a database) or other-schema-version
    /// `state.sqlite` is rebuilt from every rollout. Otherwise only recent files are checked:
    /// the index remembers the newest rollout mtime it has seen (the mark); day directories
    /// are visited newest first, files newer than the mark or absent from the index are
    /// (re)indexed from their first lines, and the walk stops after the first day directory
    /// with nothing newer than the mark. Files changed behind the store's back in older day
    /// directories are only picked up by [`ThreadStore::rebuild_index`].
    ///
    /// When the index file cannot be created or updated (disk full, read-only home), the
    /// store falls back to an index in memory, rebuilt from the rollouts: listing and
    /// resuming keep working on what is readable; nothing is written to the index.
    pub fn open(home: &Path) -> Result<Self, StoreError> {
        Ok(ThreadStore {
            backend: Backend::Local(LocalStore::open(home)?),
        })
    }

    /// Opens the store at `location`. For PostgreSQL this connects, and creates or upgrades
    /// the tables (migrations are versioned and run once, whichever process starts first).
    /// Waits on the database at most the default [`StoreTimeouts`].
    ///
    /// The sync forms are for callers off any async worker (a blocking-pool thread, a plain
    /// thread, a program without a runtime); async code uses the `_async` forms
    /// ([`ThreadStore::open_with_async`]). A database store runs its operations on the
    /// runtime it was opened on: a multi-thread runtime the opening thread belongs to, or
    /// else one shared runtime kept for sync programs that have none.
    pub fn open_at(home: &Path, location: &StoreLocation) -> Result<Self, StoreError> {
        Self::open_with(home, location, StoreTimeouts::default())
    }

    /// [`ThreadStore::open_at`] with how long to wait on the database (PostgreSQL only):
    /// connecting (handshake included) and each operation. A server that does not answer
    /// in time gives [`StoreError::Timeout`] rather than a hang.
    pub fn open_with(
        home: &Path,
        location: &StoreLocation,
        timeouts: StoreTimeouts,
    ) -> Result<Self, StoreError> {
        match location {
            StoreLocation::Local => Self::open(home),
            StoreLocation::Postgres(url) => Ok(ThreadStore {
                backend: Backend::Postgres(PgStore::connect_blocking(home, url, timeouts)?),
            }),
        }
    }

    /// [`ThreadStore::open_with`] for async callers: a database is connected to and
    /// migrated on the caller's runtime, and its operations run there from then on; the
    /// local index is opened on the blocking pool.
    pub async fn open_with_async(
        home: &Path,
        location: &StoreLocation,
        timeouts: StoreTimeouts,
    ) -> Result<Self, StoreError> {
        let backend = match location {
            StoreLocation::Local => {
                let h = home.to_path_buf();
                Backend::Local(on_blocking_pool(home, move || LocalStore::open(&h)).await?)
            }
            StoreLocation::Postgres(url) => {
                Backend::Postgres(PgStore::connect(home, url, timeouts).await?)
            }
        };
        Ok(ThreadStore { backend })
    }

    /// The home directory this store was opened for.
    pub fn home(&self) -> &Path {
        match &self.backend {
            Backend::Local(s) => s.home(),
            Backend::Postgres(s) => s.home(),
        }
    }

    /// Whether threads live in a shared database rather than this machine's files.
    pub fn is_shared(&self) -> bool {
        matches!(self.backend, Backend::Postgres(_))
    }

    /// Creates a thread: writes its `session_meta` record and its index row, and takes the
    /// thread's writer lease. An empty `meta.timestamp` is filled with the current time.
    pub fn create(&self, meta: SessionMeta) -> Result<RolloutWriter, StoreError> {
        match &self.backend {
            Backend::Local(s) => s.create(meta).map(RolloutWriter::local),
            Backend::Postgres(s) => s.create(meta).map(RolloutWriter::postgres),
        }
    }

    /// Loads a stored thread: metadata and every readable record. Unreadable records are
    /// skipped and reported in `warnings`.
    pub fn load(&self, id: &ThreadId) -> Result<LoadedThread, StoreError> {
        match &self.backend {
            Backend::Local(s) => s.load(id),
            Backend::Postgres(s) => s.load(id),
        }
    }

    /// A stored thread's turns without its records parsed: cheap to build for a long
    /// thread, and each turn's records are parsed only when asked for
    /// ([`ThreadOutline::stored_turn`]). The turns are those of [`LoadedThread::turns`].
    pub fn outline(&self, id: &ThreadId) -> Result<ThreadOutline, StoreError> {
        match &self.backend {
            Backend::Local(s) => s.outline(id),
            Backend::Postgres(s) => s.outline(id),
        }
    }

    /// `outline` with the records appended to its thread since it was read (only those are
    /// read); `None` when nothing was appended.
    pub fn outline_update(
        &self,
        outline: &ThreadOutline,
    ) -> Result<Option<ThreadOutline>, StoreError> {
        match &self.backend {
            Backend::Local(_) => crate::outline::update_file(outline),
            Backend::Postgres(s) => s.outline_update(outline),
        }
    }

    /// Loads a rollout file by path (it need not be under this home, nor in this backend).
    pub fn load_path(&self, path: &Path) -> Result<LoadedThread, StoreError> {
        match &self.backend {
            Backend::Local(s) => s.load_path(path),
            Backend::Postgres(s) => s.load_path(path),
        }
    }

    /// Reopens a stored thread for appending (same id) and returns its records. Fails with
    /// [`StoreError::Busy`] while another session (in this or another process) writes it.
    ///
    /// A last turn with no end record gets a `turn_aborted(interrupted)` record, since the
    /// process running it is gone (a parked last turn is left parked: it waits for its
    /// answers, not for a process); a torn last line of a local rollout is cut off.
    pub fn resume(&self, id: &ThreadId) -> Result<(RolloutWriter, LoadedThread), StoreError> {
        match &self.backend {
            Backend::Local(s) => s.resume(id).map(|(w, l)| (RolloutWriter::local(w), l)),
            Backend::Postgres(s) => s.resume(id).map(|(w, l)| (RolloutWriter::postgres(w), l)),
        }
    }

    /// Starts a new thread whose records are a copy of `source`'s (after its session_meta),
    /// with `new_meta.forked_from_id = source`. The two threads are independent afterwards.
    /// If `source` is mid-turn, the copy closes that turn as interrupted.
    pub fn fork(
        &self,
        source: &ThreadId,
        new_meta: SessionMeta,
    ) -> Result<(RolloutWriter, LoadedThread), StoreError> {
        match &self.backend {
            Backend::Local(s) => s
                .fork(source, new_meta)
                .map(|(w, l)| (RolloutWriter::local(w), l)),
            Backend::Postgres(s) => s
                .fork(source, new_meta)
                .map(|(w, l)| (RolloutWriter::postgres(w), l)),
        }
    }

    /// One page of threads. See [`ListQuery`] for filters; pages are keyset-paginated, so
    /// threads created while paging never shift or repeat later pages.
    pub fn list(&self, q: &ListQuery) -> Result<ThreadPage, StoreError> {
        match &self.backend {
            Backend::Local(s) => s.list(q),
            Backend::Postgres(s) => s.list(q),
        }
    }

    /// The most recently updated thread (not archived), optionally only in `cwd`: what
    /// `resume --last` continues.
    pub fn latest(&self, cwd: Option<&Path>) -> Result<Option<ThreadSummary>, StoreError> {
        let q = ListQuery {
            limit: 1,
            sort_key: crate::types::SortKey::UpdatedAt,
            cwd: cwd.map(|c| vec![c.to_path_buf()]),
            ..ListQuery::default()
        };
        Ok(self.list(&q)?.data.into_iter().next())
    }

    /// The index row of a thread (no record is read).
    pub fn get(&self, id: &ThreadId) -> Result<Option<ThreadSummary>, StoreError> {
        match &self.backend {
            Backend::Local(s) => s.get(id),
            Backend::Postgres(s) => s.get(id),
        }
    }

    /// Whether a writer holds the thread now, in this process or another (a local rollout
    /// file's lock, a PostgreSQL lease): a turn with no end record whose thread nobody
    /// holds is not running anywhere (its process died). Takes nothing a writer waits for
    /// more than an instant. [`StoreError::NotFound`] for an unknown thread.
    pub fn is_held(&self, id: &ThreadId) -> Result<bool, StoreError> {
        match &self.backend {
            Backend::Local(s) => s.is_held(id),
            Backend::Postgres(s) => futures::executor::block_on(s.is_held_async(id)),
        }
    }

    /// [`ThreadStore::is_held`] for async callers.
    pub async fn is_held_async(&self, id: &ThreadId) -> Result<bool, StoreError> {
        match &self.backend {
            Backend::Local(s) => {
                let (s, id) = (s.clone(), *id);
                self.local(move || s.is_held(&id)).await
            }
            Backend::Postgres(s) => s.is_held_async(id).await,
        }
    }

    /// Archived threads are hidden from `list` unless asked for.
    pub fn set_archived(&self, id: &ThreadId, archived: bool) -> Result<(), StoreError> {
        match &self.backend {
            Backend::Local(s) => s.set_archived(id, archived),
            Backend::Postgres(s) => s.set_archived(id, archived),
        }
    }

    /// Deletes a thread for good (v2 `thread/delete`): its records and its index entry.
    pub fn delete(&self, id: &ThreadId) -> Result<(), StoreError> {
        match &self.backend {
            Backend::Local(s) => s.delete(id),
            Backend::Postgres(s) => s.delete(id),
        }
    }

    /// Sets (or with `None` / blank, clears) the thread's name.
    pub fn set_name(&self, id: &ThreadId, name: Option<String>) -> Result<(), StoreError> {
        let name = name.map(|n| n.trim().to_string()).filter(|n| !n.is_empty());
        match &self.backend {
            Backend::Local(s) => s.set_name(id, name),
            Backend::Postgres(s) => s.set_name(id, name),
        }
    }

    // The async seam, for callers on a runtime (the engine, the servers): every operation.
    // PostgreSQL: the caller's task awaits the database and no thread is held; local: the
    // files and SQLite are read and written on the blocking pool.

    /// [`ThreadStore::create`] for async callers.
    pub async fn create_async(&self, meta: SessionMeta) -> Result<RolloutWriter, StoreError> {
        match &self.backend {
            Backend::Local(s) => {
                let s = s.clone();
                self.local(move || s.create(meta))
                    .await
                    .map(RolloutWriter::local)
            }
            Backend::Postgres(s) => s.create_async(meta).await.map(RolloutWriter::postgres),
        }
    }

    /// [`ThreadStore::resume`] for async callers.
    pub async fn resume_async(
        &self,
        id: &ThreadId,
    ) -> Result<(RolloutWriter, LoadedThread), StoreError> {
        match &self.backend {
            Backend::Local(s) => {
                let (s, id) = (s.clone(), *id);
                let (w, l) = self.local(move || s.resume(&id)).await?;
                Ok((RolloutWriter::local(w), l))
            }
            Backend::Postgres(s) => {
                let (w, l) = s.resume_async(id).await?;
                Ok((RolloutWriter::postgres(w), l))
            }
        }
    }

    /// [`ThreadStore::fork`] for async callers.
    pub async fn fork_async(
        &self,
        source: &ThreadId,
        new_meta: SessionMeta,
    ) -> Result<(RolloutWriter, LoadedThread), StoreError> {
        match &self.backend {
            Backend::Local(s) => {
                let (s, source) = (s.clone(), *source);
                let (w, l) = self.local(move || s.fork(&source, new_meta)).await?;
                Ok((RolloutWriter::local(w), l))
            }
            Backend::Postgres(s) => {
                let (w, l) = s.fork_async(source, new_meta).await?;
                Ok((RolloutWriter::postgres(w), l))
            }
        }
    }

    /// [`ThreadStore::latest`] for async callers.
    pub async fn latest_async(
        &self,
        cwd: Option<&Path>,
    ) -> Result<Option<ThreadSummary>, StoreError> {
        let q = ListQuery {
            limit: 1,
            sort_key: crate::types::SortKey::UpdatedAt,
            cwd: cwd.map(|c| vec![c.to_path_buf()]),
            ..ListQuery::default()
        };
        Ok(self.list_async(&q).await?.data.into_iter().next())
    }

    /// [`ThreadStore::rebuild_index`] for async callers.
    pub async fn rebuild_index_async(&self) -> Result<usize, StoreError> {
        match &self.backend {
            Backend::Local(s) => {
                let s = s.clone();
                self.local(move || s.rebuild_index()).await
            }
            Backend::Postgres(s) => s.count_async().await,
        }
    }

    /// [`ThreadStore::load`] for async callers.
    pub async fn load_async(&self, id: &ThreadId) -> Result<LoadedThread, StoreError> {
        match &self.backend {
            Backend::Local(s) => {
                let (s, id) = (s.clone(), *id);
                self.local(move || s.load(&id)).await
            }
            Backend::Postgres(s) => s.load_async(id).await,
        }
    }

    /// [`ThreadStore::outline`] for async callers.
    pub async fn outline_async(&self, id: &ThreadId) -> Result<ThreadOutline, StoreError> {
        match &self.backend {
            Backend::Local(s) => {
                let (s, id) = (s.clone(), *id);
                self.local(move || s.outline(&id)).await
            }
            Backend::Postgres(s) => s.outline_async(id).await,
        }
    }

    /// [`ThreadStore::outline_update`] for async callers.
    pub async fn outline_update_async(
        &self,
        outline: &ThreadOutline,
    ) -> Result<Option<ThreadOutline>, StoreError> {
        match &self.backend {
            Backend::Local(_) => {
                let outline = outline.clone();
                self.local(move || crate::outline::update_file(&outline))
                    .await
            }
            Backend::Postgres(s) => s.outline_update_async(outline).await,
        }
    }

    /// [`ThreadStore::list`] for async callers.
    pub async fn list_async(&self, q: &ListQuery) -> Result<ThreadPage, StoreError> {
        match &self.backend {
            Backend::Local(s) => {
                let (s, q) = (s.clone(), q.clone());
                self.local(move || s.list(&q)).await
            }
            Backend::Postgres(s) => s.list_async(q).await,
        }
    }

    /// [`ThreadStore::get`] for async callers.
    pub async fn get_async(&self, id: &ThreadId) -> Result<Option<ThreadSummary>, StoreError> {
        match &self.backend {
            Backend::Local(s) => {
                let (s, id) = (s.clone(), *id);
                self.local(move || s.get(&id)).await
            }
            Backend::Postgres(s) => s.get_async(id).await,
        }
    }

    /// [`ThreadStore::set_archived`] for async callers.
    pub async fn set_archived_async(
        &self,
        id: &ThreadId,
        archived: bool,
    ) -> Result<(), StoreError> {
        match &self.backend {
            Backend::Local(s) => {
                let (s, id) = (s.clone(), *id);
                self.local(move || s.set_archived(&id, archived)).await
            }
            Backend::Postgres(s) => s.set_archived_async(id, archived).await,
        }
    }

    /// [`ThreadStore::delete`] for async callers.
    pub async fn delete_async(&self, id: &ThreadId) -> Result<(), StoreError> {
        match &self.backend {
            Backend::Local(s) => {
                let (s, id) = (s.clone(), *id);
                self.local(move || s.delete(&id)).await
            }
            Backend::Postgres(s) => s.delete_async(id).await,
        }
    }

    /// [`ThreadStore::set_name`] for async callers.
    pub async fn set_name_async(
        &self,
        id: &ThreadId,
        name: Option<String>,
    ) -> Result<(), StoreError> {
        let name = name.map(|n| n.trim().to_string()).filter(|n| !n.is_empty());
        match &self.backend {
            Backend::Local(s) => {
                let (s, id) = (s.clone(), *id);
                self.local(move || s.set_name(&id, name)).await
            }
            Backend::Postgres(s) => s.set_name_async(id, name).await,
        }
    }

    /// Runs a local-backend operation on the blocking pool.
    async fn local<T: Send + 'static>(
        &self,
        op: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
    ) -> Result<T, StoreError> {
        on_blocking_pool(self.home(), op).await
    }

    /// Local backend: rebuilds the whole index from the rollout files (first lines only) and
    /// the names/archive log; unusable files are skipped with a warning. PostgreSQL: the
    /// database is the record itself, nothing to rebuild. Returns how many threads are indexed.
    pub fn rebuild_index(&self) -> Result<usize, StoreError> {
        match &self.backend {
            Backend::Local(s) => s.rebuild_index(),
            Backend::Postgres(s) => s.count(),
        }
    }
}

/// Runs a local-backend operation (files, SQLite) on the blocking pool.
async fn on_blocking_pool<T: Send + 'static>(
    home: &Path,
    op: impl FnOnce() -> Result<T, StoreError> + Send + 'static,
) -> Result<T, StoreError> {
    tokio::task::spawn_blocking(op)
        .await
        .map_err(|e| StoreError::Io {
            path: home.to_path_buf(),
            source: std::io::Error::other(format!("the thread store's task failed: {e}")),
        })?
}

/// Appends records to one thread and keeps its index row current. While it lives, no other
/// session (in any process sharing the store) can write the thread: a file lock for the
/// local backend, a PostgreSQL advisory lock for the database. Dropping it flushes and
/// releases the thread ([`RolloutWriter::close_async`] does the same and returns once the
/// thread is free).
///
/// Like the store, it has sync forms for a thread off the runtime's workers and `_async`
/// forms for async code (the engine's writer tasks), which write local files on the
/// blocking pool.
#[derive(Debug)]
pub struct RolloutWriter {
    backend: WriterBackend,
    thread_id: ThreadId,
    /// The rollout file; empty for a thread kept in PostgreSQL.
    path: PathBuf,
}

#[derive(Debug)]
enum WriterBackend {
    /// Shared with the blocking-pool task of an async append, one at a time (`&mut self`).
    Local(Arc<Mutex<LocalWriter>>),
    Postgres(PgWriter),
}

impl RolloutWriter {
    fn local(w: LocalWriter) -> Self {
        RolloutWriter {
            thread_id: w.thread_id(),
            path: w.path().to_path_buf(),
            backend: WriterBackend::Local(Arc::new(Mutex::new(w))),
        }
    }

    fn postgres(w: PgWriter) -> Self {
        RolloutWriter {
            thread_id: w.thread_id(),
            path: PathBuf::new(),
            backend: WriterBackend::Postgres(w),
        }
    }

    /// Writes one record (one whole line of the rollout). The local backend updates the index
    /// when the record changes what listing shows (first user message, turn end) and in
    /// batches otherwise; index failures are logged, since the record itself is safe.
    pub fn append(&mut self, item: &RolloutItem) -> Result<(), StoreError> {
        self.append_all(std::slice::from_ref(item))
    }

    /// Writes several records at once (one write, or one database transaction).
    pub fn append_all(&mut self, items: &[RolloutItem]) -> Result<(), StoreError> {
        match &mut self.backend {
            WriterBackend::Local(w) => lock(w).append_all(items),
            WriterBackend::Postgres(w) => w.append_all(items),
        }
    }

    /// Makes every appended record durable and the thread's `updated_at` current (fsync and
    /// index update for local files; PostgreSQL commits every append already). Called when
    /// a turn ends and on drop.
    pub fn flush_index(&mut self) -> Result<(), StoreError> {
        match &mut self.backend {
            WriterBackend::Local(w) => lock(w).flush_index(),
            WriterBackend::Postgres(_) => Ok(()),
        }
    }

    /// [`RolloutWriter::append`] for async callers.
    pub async fn append_async(&mut self, item: &RolloutItem) -> Result<(), StoreError> {
        self.append_all_async(std::slice::from_ref(item)).await
    }

    /// [`RolloutWriter::append_all`] for async callers.
    pub async fn append_all_async(&mut self, items: &[RolloutItem]) -> Result<(), StoreError> {
        match &mut self.backend {
            WriterBackend::Local(w) => {
                let (w, items) = (w.clone(), items.to_vec());
                on_blocking_pool(&self.path, move || lock(&w).append_all(&items)).await
            }
            WriterBackend::Postgres(w) => w.append_all_async(items).await,
        }
    }

    /// [`RolloutWriter::flush_index`] for async callers.
    pub async fn flush_index_async(&mut self) -> Result<(), StoreError> {
        match &mut self.backend {
            WriterBackend::Local(w) => {
                let w = w.clone();
                on_blocking_pool(&self.path, move || lock(&w).flush_index()).await
            }
            WriterBackend::Postgres(_) => Ok(()),
        }
    }

    /// Flushes and gives the thread back, returning once another session (here or in
    /// another process) can take it: what dropping the writer does, awaited.
    pub async fn close_async(self) -> Result<(), StoreError> {
        let RolloutWriter { backend, path, .. } = self;
        match backend {
            WriterBackend::Local(w) => {
                // The last handle: dropping it flushes and unlocks the file.
                on_blocking_pool(&path, move || lock(&w).flush_index()).await
            }
            WriterBackend::Postgres(w) => {
                w.close().await;
                Ok(())
            }
        }
    }

    /// The rollout file; empty for a thread kept in PostgreSQL.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// How long one append may wait for the store before it fails with
    /// [`StoreError::Timeout`]: the database's `statement_timeout_sec`; `None` for local
    /// files, which have no such bound.
    pub fn answer_bound(&self) -> Option<std::time::Duration> {
        match &self.backend {
            WriterBackend::Local(_) => None,
            WriterBackend::Postgres(w) => Some(w.statement_timeout()),
        }
    }

    /// The thread this writer appends to.
    pub fn thread_id(&self) -> ThreadId {
        self.thread_id
    }
}

fn lock(w: &Mutex<LocalWriter>) -> std::sync::MutexGuard<'_, LocalWriter> {
    // A panic while appending leaves the writer as usable as any failed append does.
    w.lock().unwrap_or_else(|p| p.into_inner())
}
