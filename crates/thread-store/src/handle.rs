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
use std::path::Path;

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
                backend: Backend::Postgres(PgStore::connect(home, url, timeouts)?),
            }),
        }
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
    /// process running it is gone; a torn last line of a local rollout is cut off.
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

    // Async variants of the reads and small updates, for callers on a runtime (the servers).
    // PostgreSQL: the caller's task awaits the database and no thread is held; local: the
    // files and SQLite are read on the blocking pool.

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
        tokio::task::spawn_blocking(op)
            .await
            .map_err(|e| StoreError::Io {
                path: self.home().to_path_buf(),
                source: std::io::Error::other(format!("the thread store's task failed: {e}")),
            })?
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

/// Appends records to one thread and keeps its index row current. While it lives, no other
/// session (in any process sharing the store) can write the thread: a file lock for the
/// local backend, a PostgreSQL advisory lock for the database. Dropping it flushes and
/// releases the thread.
#[derive(Debug)]
pub struct RolloutWriter {
    backend: WriterBackend,
}

#[derive(Debug)]
enum WriterBackend {
    Local(LocalWriter),
    Postgres(PgWriter),
}

impl RolloutWriter {
    fn local(w: LocalWriter) -> Self {
        RolloutWriter {
            backend: WriterBackend::Local(w),
        }
    }

    fn postgres(w: PgWriter) -> Self {
        RolloutWriter {
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
            WriterBackend::Local(w) => w.append_all(items),
            WriterBackend::Postgres(w) => w.append_all(items),
        }
    }

    /// Makes every appended record durable and the thread's `updated_at` current (fsync and
    /// index update for local files; PostgreSQL commits every append already). Called when
    /// a turn ends and on drop.
    pub fn flush_index(&mut self) -> Result<(), StoreError> {
        match &mut self.backend {
            WriterBackend::Local(w) => w.flush_index(),
            WriterBackend::Postgres(_) => Ok(()),
        }
    }

    /// The rollout file; empty for a thread kept in PostgreSQL.
    pub fn path(&self) -> &Path {
        match &self.backend {
            WriterBackend::Local(w) => w.path(),
            WriterBackend::Postgres(_) => Path::new(""),
        }
    }

    /// The thread this writer appends to.
    pub fn thread_id(&self) -> ThreadId {
        match &self.backend {
            WriterBackend::Local(w) => w.thread_id(),
            WriterBackend::Postgres(w) => w.thread_id(),
        }
    }
}
