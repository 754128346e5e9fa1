//! The PostgreSQL backend: threads, their records and their index rows in one database that
//! several processes (and machines) share.
//!
//! Tables (see `db.rs` for the migrations): `oi_threads` holds one row per thread with the
//! same fields as the local SQLite index; `oi_rollout_lines` holds every record as the same
//! JSON line a rollout file would contain, keyed by `(thread_id, seq)`. Records are only
//! ever inserted (append-only), each append in one transaction, so a reader sees whole
//! records and a finished append is durable. One writer per thread across processes is
//! enforced by `lease.rs`.

mod db;
mod lease;
mod list;
mod writer;

use crate::error::StoreError;
use crate::loaded::{LoadedThread, interrupted_marker};
use crate::outline::{Origin, ThreadOutline};
use crate::record::{
    created_ms, encode_line, format_timestamp, preview_text, read_rollout, split_meta,
    stamp_created, system_time_ms, truncate_preview,
};
use crate::types::{ListQuery, RolloutItem, RolloutLine, SessionMeta, ThreadPage, ThreadSummary};
use db::Db;
pub use db::StoreTimeouts;
pub(crate) use db::redact_url;
use lease::Leases;
use oi_protocol::ThreadId;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;
pub(crate) use writer::PgWriter;

/// Threads kept in PostgreSQL. Cheap to clone.
#[derive(Clone)]
pub(crate) struct PgStore {
    inner: Arc<Inner>,
}

struct Inner {
    home: PathBuf,
    db: Arc<Db>,
    leases: Arc<Leases>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("database", &self.inner.db.display)
            .finish_non_exhaustive()
    }
}

pub(super) fn now_ms() -> i64 {
    system_time_ms(SystemTime::now())
}

impl PgStore {
    /// Connects to `url` and migrates the schema, on the caller's runtime.
    pub(crate) async fn connect(
        home: &Path,
        url: &str,
        timeouts: StoreTimeouts,
    ) -> Result<Self, StoreError> {
        let db = Db::open(url, timeouts).await?;
        Ok(Self::with_db(home, db))
    }

    /// [`PgStore::connect`] for a sync caller (see [`Db::open_blocking`]).
    pub(crate) fn connect_blocking(
        home: &Path,
        url: &str,
        timeouts: StoreTimeouts,
    ) -> Result<Self, StoreError> {
        let db = Db::open_blocking(url, timeouts)?;
        Ok(Self::with_db(home, db))
    }

    fn with_db(home: &Path, db: Arc<Db>) -> Self {
        PgStore {
            inner: Arc::new(Inner {
                home: home.to_path_buf(),
                db,
                leases: Arc::new(Leases::default()),
            }),
        }
    }

    pub(crate) fn home(&self) -> &Path {
        &self.inner.home
    }

    /// Creates the thread row and its `session_meta` record, holding the thread's lease.
    pub(crate) fn create(&self, meta: SessionMeta) -> Result<PgWriter, StoreError> {
        futures::executor::block_on(self.create_async(meta))
    }

    /// [`PgStore::create`] for async callers.
    pub(crate) async fn create_async(&self, mut meta: SessionMeta) -> Result<PgWriter, StoreError> {
        let created = stamp_created(&mut meta)?;
        let mut first = Vec::new();
        encode_line(
            &mut first,
            &meta.timestamp,
            &RolloutItem::SessionMeta(meta.clone()),
        )?;
        let first = line_text(first)?;
        let writer = self.lease(meta.id, 1, false).await?;
        let db = self.inner.db.clone();
        let generation = writer.generation;
        let inserted = self
            .inner
            .db
            .run_async(async move {
                let mut conn = db.conn().await?;
                let tx = conn.transaction().await?;
                lease::check_generation(&tx, &meta.id, generation).await?;
                let git = meta.git.as_ref();
                let inserted = tx
                .execute(
                    "INSERT INTO oi_threads (id, created_at_ms, updated_at_ms, cwd, model_provider,
                        model, source, forked_from_id, cli_version, git_sha, git_branch,
                        git_origin_url)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)
                     ON CONFLICT (id) DO NOTHING",
                    &[
                        &meta.id.to_string(),
                        &created,
                        &now_ms(),
                        &meta.cwd.to_string_lossy().into_owned(),
                        &meta.model_provider,
                        &meta.model,
                        &meta.source.as_str(),
                        &meta.forked_from_id.map(|id| id.to_string()),
                        &meta.cli_version,
                        &git.and_then(|g| g.commit_hash.clone()),
                        &git.and_then(|g| g.branch.clone()),
                        &git.and_then(|g| g.repository_url.clone()),
                    ],
                )
                .await?;
                if inserted == 0 {
                    return Err(StoreError::Invalid(format!(
                        "thread {} already exists; use resume to continue it or fork to copy it",
                        meta.id
                    )));
                }
                tx.execute(
                    "INSERT INTO oi_rollout_lines (thread_id, seq, line) VALUES ($1, 0, $2)",
                    &[&meta.id.to_string(), &first],
                )
                .await?;
                tx.commit().await?;
                Ok(())
            })
            .await;
        match inserted {
            Ok(()) => Ok(writer),
            Err(e) => {
                // Given back before answering, so the caller may take it again at once.
                writer.close().await;
                Err(e)
            }
        }
    }

    /// Takes the lease of `id` and returns the writer that holds it (and gives it back when
    /// dropped, whatever happens after this).
    async fn lease(
        &self,
        id: ThreadId,
        next_seq: i64,
        has_preview: bool,
    ) -> Result<PgWriter, StoreError> {
        let db = self.inner.db.clone();
        let leases = self.inner.leases.clone();
        let generation = self
            .inner
            .db
            .run_async(async move { leases.acquire(&db, id).await })
            .await?;
        Ok(PgWriter {
            db: self.inner.db.clone(),
            leases: self.inner.leases.clone(),
            id,
            generation,
            next_seq,
            has_preview,
            released: false,
        })
    }

    /// The thread's index row and every record, in order.
    pub(crate) fn load(&self, id: &ThreadId) -> Result<LoadedThread, StoreError> {
        futures::executor::block_on(self.load_async(id))
    }

    /// [`PgStore::load`] for async callers (no thread waits on the database).
    pub(crate) async fn load_async(&self, id: &ThreadId) -> Result<LoadedThread, StoreError> {
        let id = *id;
        let db = self.inner.db.clone();
        let (summary, rows) = self
            .inner
            .db
            .run_async(async move {
                let conn = db.conn().await?;
                let summary = list::get(&conn, &id)
                    .await?
                    .ok_or(StoreError::NotFound(id))?;
                let rows: Vec<String> = conn
                    .query(
                        "SELECT line FROM oi_rollout_lines WHERE thread_id = $1 ORDER BY seq",
                        &[&id.to_string()],
                    )
                    .await?
                    .iter()
                    .map(|r| r.get(0))
                    .collect();
                Ok((summary, rows))
            })
            .await?;
        let shown = format!("{}/{id}", self.inner.db.display);
        let mut warnings = Vec::new();
        let mut lines = Vec::with_capacity(rows.len());
        for (n, raw) in rows.iter().enumerate() {
            match RolloutLine::parse(raw) {
                Ok(l) => lines.push(l),
                Err(e) => {
                    let w = format!("{shown} record {n}: {e}; skipped");
                    crate::notice!("{w}");
                    warnings.push(w);
                }
            }
        }
        assemble(summary, lines, warnings, &shown)
    }

    /// The thread's turns without its records parsed (see [`ThreadOutline`]).
    pub(crate) fn outline(&self, id: &ThreadId) -> Result<ThreadOutline, StoreError> {
        futures::executor::block_on(self.outline_async(id))
    }

    /// [`PgStore::outline`] for async callers (no thread waits on the database).
    pub(crate) async fn outline_async(&self, id: &ThreadId) -> Result<ThreadOutline, StoreError> {
        let id = *id;
        let db = self.inner.db.clone();
        let rows = self
            .inner
            .db
            .run_async(async move {
                let conn = db.conn().await?;
                list::get(&conn, &id)
                    .await?
                    .ok_or(StoreError::NotFound(id))?;
                lines_from(&conn, &id, 0).await
            })
            .await?;
        let shown = format!("{}/{id}", self.inner.db.display);
        let mut rows = rows.into_iter();
        let first = rows.next().map(|(_, line)| line).unwrap_or_default();
        crate::outline::check_first_line(&id, first.as_bytes(), &shown)?;
        let mut outline = ThreadOutline::new(id, Origin::Database { next_seq: 0 }, shown);
        let next_seq = push_rows(&mut outline, rows).unwrap_or(1);
        outline.origin = Origin::Database { next_seq };
        outline.finish();
        Ok(outline)
    }

    /// `outline` with the records appended since it was read; `None` when there are none.
    pub(crate) fn outline_update(
        &self,
        outline: &ThreadOutline,
    ) -> Result<Option<ThreadOutline>, StoreError> {
        futures::executor::block_on(self.outline_update_async(outline))
    }

    /// [`PgStore::outline_update`] for async callers (no thread waits on the database).
    pub(crate) async fn outline_update_async(
        &self,
        outline: &ThreadOutline,
    ) -> Result<Option<ThreadOutline>, StoreError> {
        let Origin::Database { next_seq } = outline.origin else {
            return Ok(None);
        };
        let id = outline.thread_id();
        let db = self.inner.db.clone();
        let rows = self
            .inner
            .db
            .run_async(async move {
                let conn = db.conn().await?;
                lines_from(&conn, &id, next_seq).await
            })
            .await?;
        if rows.is_empty() {
            return Ok(None);
        }
        let mut next = outline.clone();
        if let Some(seq) = push_rows(&mut next, rows.into_iter()) {
            next.origin = Origin::Database { next_seq: seq };
        }
        next.finish();
        Ok(Some(next))
    }

    /// Reads a rollout file (e.g. one exported from a local store). Its summary comes from
    /// the file itself: it is not looked up in the database.
    pub(crate) fn load_path(&self, path: &Path) -> Result<LoadedThread, StoreError> {
        let parsed = read_rollout(path)?;
        let mtime = std::fs::metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .map(system_time_ms);
        let Some(RolloutLine {
            item: RolloutItem::SessionMeta(meta),
            ..
        }) = parsed.lines.first()
        else {
            return Err(StoreError::Corrupt {
                path: path.to_path_buf(),
                reason: "it has no session_meta record at its start".into(),
            });
        };
        let created = created_ms(meta, mtime.unwrap_or(0));
        let summary = ThreadSummary {
            id: meta.id,
            path: path.to_path_buf(),
            created_at: created.div_euclid(1000),
            updated_at: mtime.unwrap_or(created).div_euclid(1000),
            cwd: meta.cwd.clone(),
            model_provider: meta.model_provider.clone(),
            model: meta.model.clone(),
            source: meta.source,
            preview: parsed
                .lines
                .iter()
                .find_map(|l| preview_text(&l.item))
                .map(truncate_preview)
                .unwrap_or_default(),
            name: None,
            archived: false,
            forked_from_id: meta.forked_from_id,
            cli_version: meta.cli_version.clone(),
            git: meta.git.clone(),
        };
        assemble(
            summary,
            parsed.lines,
            parsed.warnings,
            &path.display().to_string(),
        )
    }

    /// Takes the thread's lease and loads it; a turn left open by a process that died gets
    /// its `turn_aborted(interrupted)` record.
    pub(crate) fn resume(&self, id: &ThreadId) -> Result<(PgWriter, LoadedThread), StoreError> {
        futures::executor::block_on(self.resume_async(id))
    }

    /// [`PgStore::resume`] for async callers.
    pub(crate) async fn resume_async(
        &self,
        id: &ThreadId,
    ) -> Result<(PgWriter, LoadedThread), StoreError> {
        if self.get_async(id).await?.is_none() {
            return Err(StoreError::NotFound(*id));
        }
        let mut writer = self.lease(*id, 0, false).await?;
        match self.continue_thread(&mut writer).await {
            Ok(loaded) => Ok((writer, loaded)),
            Err(e) => {
                writer.close().await;
                Err(e)
            }
        }
    }

    /// After taking the lease: the thread's records, where its writer continues, and the
    /// close of a turn the last process left open.
    async fn continue_thread(&self, writer: &mut PgWriter) -> Result<LoadedThread, StoreError> {
        let id = writer.id;
        let mut loaded = self.load_async(&id).await?;
        let db = self.inner.db.clone();
        let key = id.to_string();
        writer.next_seq = self
            .inner
            .db
            .run_async(async move {
                let conn = db.conn().await?;
                let row = conn
                    .query_one(
                        "SELECT COALESCE(MAX(seq), -1) + 1 FROM oi_rollout_lines WHERE thread_id = $1",
                        &[&key],
                    )
                    .await?;
                Ok(row.get::<_, i64>(0))
            })
            .await?;
        writer.has_preview = !loaded.summary.preview.is_empty()
            || loaded.items.iter().any(|i| preview_text(i).is_some());
        if let Some(turn_id) = loaded.open_turn_id() {
            let marker = interrupted_marker(turn_id);
            writer
                .append_all_async(std::slice::from_ref(&marker))
                .await?;
            loaded.items.push(marker);
            loaded.timestamps.push(format_timestamp(chrono::Utc::now()));
        }
        Ok(loaded)
    }

    /// A new thread holding a copy of `source`'s records (see `ThreadStore::fork`).
    pub(crate) fn fork(
        &self,
        source: &ThreadId,
        new_meta: SessionMeta,
    ) -> Result<(PgWriter, LoadedThread), StoreError> {
        futures::executor::block_on(self.fork_async(source, new_meta))
    }

    /// [`PgStore::fork`] for async callers.
    pub(crate) async fn fork_async(
        &self,
        source: &ThreadId,
        mut new_meta: SessionMeta,
    ) -> Result<(PgWriter, LoadedThread), StoreError> {
        crate::loaded::check_fork_id(source, &new_meta)?;
        let src = self.load_async(source).await?;
        new_meta.forked_from_id = Some(*source);
        let mut writer = self.create_async(new_meta.clone()).await?;
        let lines = src.fork_lines();
        let copied = match writer.append_lines(&lines).await {
            Ok(()) => self.get_async(&new_meta.id).await,
            Err(e) => Err(e),
        };
        let summary = match copied {
            Ok(Some(summary)) => summary,
            Ok(None) => {
                writer.close().await;
                return Err(StoreError::NotFound(new_meta.id));
            }
            Err(e) => {
                writer.close().await;
                return Err(e);
            }
        };
        let (timestamps, items) = lines.into_iter().map(|l| (l.timestamp, l.item)).unzip();
        Ok((
            writer,
            LoadedThread {
                summary,
                meta: new_meta,
                items,
                timestamps,
                warnings: src.warnings,
            },
        ))
    }

    pub(crate) fn list(&self, q: &ListQuery) -> Result<ThreadPage, StoreError> {
        futures::executor::block_on(self.list_async(q))
    }

    /// [`PgStore::list`] for async callers (no thread waits on the database).
    pub(crate) async fn list_async(&self, q: &ListQuery) -> Result<ThreadPage, StoreError> {
        let cursor = crate::paging::Cursor::parse(q)?;
        let q = q.clone();
        let db = self.inner.db.clone();
        self.inner
            .db
            .run_async(async move {
                let conn = db.conn().await?;
                list::list(&conn, &q, cursor.as_ref()).await
            })
            .await
    }

    pub(crate) fn get(&self, id: &ThreadId) -> Result<Option<ThreadSummary>, StoreError> {
        futures::executor::block_on(self.get_async(id))
    }

    /// [`PgStore::get`] for async callers (no thread waits on the database).
    pub(crate) async fn get_async(
        &self,
        id: &ThreadId,
    ) -> Result<Option<ThreadSummary>, StoreError> {
        let id = *id;
        let db = self.inner.db.clone();
        self.inner
            .db
            .run_async(async move {
                let conn = db.conn().await?;
                list::get(&conn, &id).await
            })
            .await
    }

    /// Whether a writer holds the thread's lease now, in any process: its advisory lock
    /// is granted to some database session. Read from `pg_locks`, so the probe takes
    /// nothing and never makes a writer wait.
    pub(crate) async fn is_held_async(&self, id: &ThreadId) -> Result<bool, StoreError> {
        let id = *id;
        let db = self.inner.db.clone();
        self.inner
            .db
            .run_async(async move {
                let conn = db.conn().await?;
                if list::get(&conn, &id).await?.is_none() {
                    return Err(StoreError::NotFound(id));
                }
                lease::is_held(&conn, &id).await
            })
            .await
    }

    pub(crate) fn set_archived(&self, id: &ThreadId, archived: bool) -> Result<(), StoreError> {
        futures::executor::block_on(self.set_archived_async(id, archived))
    }

    /// [`PgStore::set_archived`] for async callers.
    pub(crate) async fn set_archived_async(
        &self,
        id: &ThreadId,
        archived: bool,
    ) -> Result<(), StoreError> {
        self.update(
            id,
            "UPDATE oi_threads SET archived = $2 WHERE id = $1",
            archived,
        )
        .await
    }

    /// Deletes the thread row; its rollout lines go with it (`ON DELETE CASCADE`).
    pub(crate) fn delete(&self, id: &ThreadId) -> Result<(), StoreError> {
        futures::executor::block_on(self.delete_async(id))
    }

    /// [`PgStore::delete`] for async callers (no thread waits on the database).
    pub(crate) async fn delete_async(&self, id: &ThreadId) -> Result<(), StoreError> {
        let id = *id;
        let db = self.inner.db.clone();
        self.inner
            .db
            .run_async(async move {
                let conn = db.conn().await?;
                let key = id.to_string();
                let deleted = conn
                    .execute("DELETE FROM oi_threads WHERE id = $1", &[&key])
                    .await?;
                conn.execute("DELETE FROM oi_thread_leases WHERE thread_id = $1", &[&key])
                    .await?;
                match deleted {
                    0 => Err(StoreError::NotFound(id)),
                    _ => Ok(()),
                }
            })
            .await
    }

    pub(crate) fn set_name(&self, id: &ThreadId, name: Option<String>) -> Result<(), StoreError> {
        futures::executor::block_on(self.set_name_async(id, name))
    }

    /// [`PgStore::set_name`] for async callers.
    pub(crate) async fn set_name_async(
        &self,
        id: &ThreadId,
        name: Option<String>,
    ) -> Result<(), StoreError> {
        self.update(id, "UPDATE oi_threads SET name = $2 WHERE id = $1", name)
            .await
    }

    async fn update<V: tokio_postgres::types::ToSql + Sync + Send + 'static>(
        &self,
        id: &ThreadId,
        sql: &'static str,
        value: V,
    ) -> Result<(), StoreError> {
        let id = *id;
        let db = self.inner.db.clone();
        self.inner
            .db
            .run_async(async move {
                let conn = db.conn().await?;
                match conn.execute(sql, &[&id.to_string(), &value]).await? {
                    0 => Err(StoreError::NotFound(id)),
                    _ => Ok(()),
                }
            })
            .await
    }

    /// How many threads the database holds.
    pub(crate) fn count(&self) -> Result<usize, StoreError> {
        futures::executor::block_on(self.count_async())
    }

    /// [`PgStore::count`] for async callers.
    pub(crate) async fn count_async(&self) -> Result<usize, StoreError> {
        let db = self.inner.db.clone();
        self.inner
            .db
            .run_async(async move {
                let conn = db.conn().await?;
                let n: i64 = conn
                    .query_one("SELECT count(*) FROM oi_threads", &[])
                    .await?
                    .get(0);
                Ok(usize::try_from(n).unwrap_or(0))
            })
            .await
    }
}

/// The thread's records from sequence number `from` on, in order.
async fn lines_from(
    conn: &tokio_postgres::Client,
    id: &ThreadId,
    from: i64,
) -> Result<Vec<(i64, String)>, StoreError> {
    Ok(conn
        .query(
            "SELECT seq, line FROM oi_rollout_lines WHERE thread_id = $1 AND seq >= $2 ORDER BY seq",
            &[&id.to_string(), &from],
        )
        .await?
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect())
}

/// Adds rows to an outline; returns the sequence number after the last one.
fn push_rows(
    outline: &mut ThreadOutline,
    rows: impl Iterator<Item = (i64, String)>,
) -> Option<i64> {
    let mut next = None;
    for (seq, line) in rows {
        outline.push_line(line.as_bytes());
        next = Some(seq + 1);
    }
    next
}

/// A JSON line without its `\n`, as stored in `oi_rollout_lines.line`.
pub(super) fn line_text(mut buf: Vec<u8>) -> Result<String, StoreError> {
    if buf.last() == Some(&b'\n') {
        buf.pop();
    }
    String::from_utf8(buf).map_err(|e| StoreError::Invalid(format!("record is not UTF-8: {e}")))
}

/// A [`LoadedThread`] from its records, the first of which must be `session_meta`.
fn assemble(
    summary: ThreadSummary,
    lines: Vec<RolloutLine>,
    warnings: Vec<String>,
    shown: &str,
) -> Result<LoadedThread, StoreError> {
    let (meta, timestamps, items) = split_meta(lines, Path::new(shown))?;
    if meta.id != summary.id {
        return Err(StoreError::Corrupt {
            path: PathBuf::from(shown),
            reason: format!(
                "its session_meta names thread {} instead of {}",
                meta.id, summary.id
            ),
        });
    }
    Ok(LoadedThread {
        summary,
        meta,
        items,
        timestamps,
        warnings,
    })
}
