//! The SQLite index at `$HOME/state.sqlite`: one row per thread, for listing and search.
//!
//! The index is a cache. Everything in it can be rebuilt from the rollout files plus the
//! names/archive log (`session_index.jsonl`), so any doubt about it (missing, corrupt, other
//! schema version) is answered by rebuilding. WAL mode and a busy timeout let several
//! processes share it.

use crate::error::StoreError;
use crate::paging::{Cursor, escape_like};
use crate::sidecar::SidecarState;
use crate::types::{
    GitInfo, ListQuery, SessionMeta, SessionSource, SortKey, ThreadPage, ThreadSummary,
};
use oi_protocol::ThreadId;
use rusqlite::types::Value;
use rusqlite::{Connection, ErrorCode, OptionalExtension, Row, params};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// Bump when the table layout changes: an index with another version is rebuilt.
const SCHEMA_VERSION: i64 = 2;
const BUSY_TIMEOUT: Duration = Duration::from_secs(5);

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value);
CREATE TABLE IF NOT EXISTS threads (
    id TEXT PRIMARY KEY,
    path BLOB NOT NULL,
    created_at_ms INTEGER NOT NULL,
    updated_at_ms INTEGER NOT NULL,
    cwd BLOB NOT NULL,
    model_provider TEXT NOT NULL,
    model TEXT NOT NULL,
    source TEXT NOT NULL,
    preview TEXT NOT NULL,
    name TEXT,
    archived INTEGER NOT NULL DEFAULT 0,
    forked_from_id TEXT,
    cli_version TEXT NOT NULL,
    git_sha TEXT,
    git_branch TEXT,
    git_origin_url TEXT
);
CREATE INDEX IF NOT EXISTS threads_by_created ON threads(archived, created_at_ms, id);
CREATE INDEX IF NOT EXISTS threads_by_updated ON threads(archived, updated_at_ms, id);
CREATE INDEX IF NOT EXISTS threads_by_path ON threads(path);
CREATE TABLE IF NOT EXISTS dirs (path BLOB PRIMARY KEY, mtime_ns INTEGER NOT NULL);
";

const COLUMNS: &str = "id, path, created_at_ms, updated_at_ms, cwd, model_provider, model, \
    source, preview, name, archived, forked_from_id, cli_version, git_sha, git_branch, git_origin_url";

/// What the index stores about one rollout file (everything except name and archived).
pub(crate) struct FileRow<'a> {
    pub meta: &'a SessionMeta,
    pub path: &'a Path,
    pub created_ms: i64,
    pub updated_ms: i64,
    pub preview: &'a str,
}

/// What one reconcile pass found (see [`Index::apply_scan`]).
pub(crate) struct Scan<'a> {
    pub rows: &'a [FileRow<'a>],
    pub gone: &'a [PathBuf],
    pub dirs: &'a [(PathBuf, i64)],
    pub dirs_gone: &'a [PathBuf],
}

pub(crate) struct Index {
    path: PathBuf,
    conn: Mutex<Connection>,
}

/// The database is locked by another connection: wait, never recreate.
fn is_contention(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked)
    )
}

/// [`open_conn`], tried again while another connection holds the database, for as long
/// as the busy timeout: switching to WAL can fail at once with "database is locked"
/// without SQLite waiting, while another process creates the same index.
fn open_waiting(path: &Path) -> rusqlite::Result<(Connection, bool)> {
    let start = std::time::Instant::now();
    let mut pause = Duration::from_millis(5);
    loop {
        match open_conn(path) {
            Err(e) if is_contention(&e) && start.elapsed() < BUSY_TIMEOUT => {
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(200));
            }
            other => return other,
        }
    }
}

pub(crate) fn is_corruption(e: &rusqlite::Error) -> bool {
    matches!(
        e.sqlite_error_code(),
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase)
    )
}

#[cfg(unix)]
fn path_bytes(p: &Path) -> Vec<u8> {
    use std::os::unix::ffi::OsStrExt;
    p.as_os_str().as_bytes().to_vec()
}

#[cfg(unix)]
fn bytes_path(b: Vec<u8>) -> PathBuf {
    use std::os::unix::ffi::OsStringExt;
    PathBuf::from(std::ffi::OsString::from_vec(b))
}

#[cfg(not(unix))]
fn path_bytes(p: &Path) -> Vec<u8> {
    p.to_string_lossy().into_owned().into_bytes()
}

#[cfg(not(unix))]
fn bytes_path(b: Vec<u8>) -> PathBuf {
    PathBuf::from(String::from_utf8_lossy(&b).into_owned())
}

/// Opens the database and makes sure it has the current schema. Returns whether the
/// tables were (re)created, i.e. the index is empty and must be filled by a rebuild.
fn open_conn(path: &Path) -> rusqlite::Result<(Connection, bool)> {
    // Owner-only before SQLite touches it; a failure here resurfaces from `open` with a message.
    let _ = crate::private::prepare_database(path);
    let conn = Connection::open(path)?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    // The first statements touch the file header, so a garbage file fails here.
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "NORMAL")?;
    let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
    if version == SCHEMA_VERSION {
        conn.query_row("SELECT count(*) FROM meta", [], |r| r.get::<_, i64>(0))?;
        return Ok((conn, false));
    }
    // Another process may be doing the same: take the write lock, then look again.
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let result = (|| {
        let version: i64 = conn.pragma_query_value(None, "user_version", |r| r.get(0))?;
        if version == SCHEMA_VERSION {
            return Ok(false);
        }
        conn.execute_batch(
            "DROP INDEX IF EXISTS threads_by_created;
             DROP INDEX IF EXISTS threads_by_updated;
             DROP INDEX IF EXISTS threads_by_path;
             DROP TABLE IF EXISTS dirs;
             DROP TABLE IF EXISTS threads;
             DROP TABLE IF EXISTS meta;",
        )?;
        conn.execute_batch(SCHEMA)?;
        conn.pragma_update(None, "user_version", SCHEMA_VERSION)?;
        Ok(true)
    })();
    match result {
        Ok(created) => {
            conn.execute_batch("COMMIT")?;
            Ok((conn, created))
        }
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

fn remove_db_files(path: &Path) -> Result<(), StoreError> {
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.as_os_str().to_os_string();
        p.push(suffix);
        match std::fs::remove_file(&p) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(StoreError::io(PathBuf::from(p), e)),
        }
    }
    Ok(())
}

/// SQLite's name for a database that lives in memory only.
const IN_MEMORY: &str = ":memory:";

impl Index {
    /// Opens (or creates) the index. A file that is not a usable database is deleted and
    /// recreated. The flag is true when the index starts empty and needs a rebuild.
    pub(crate) fn open(path: &Path) -> Result<(Index, bool), StoreError> {
        let existed = path.exists();
        let (conn, created) = match open_waiting(path) {
            Ok(ok) => ok,
            // Another process holds the database (opening or creating it too): that is no
            // damage, and deleting the file under it would leave it without its tables
            // (recorded in a test run: "database is locked", the file recreated, and the
            // other process's next query failed with "no such table: threads").
            Err(e) if is_contention(&e) => {
                return Err(StoreError::Index(format!(
                    "{} is busy in another process: {e}",
                    path.display()
                )));
            }
            Err(e) => {
                crate::notice!(
                    "thread index {} is unusable ({e}); recreating it from the rollout files",
                    path.display()
                );
                remove_db_files(path)?;
                open_conn(path).map_err(|e| {
                    StoreError::Index(format!("cannot create {}: {e}", path.display()))
                })?
            }
        };
        let index = Index {
            path: path.to_path_buf(),
            conn: Mutex::new(conn),
        };
        Ok((index, created || !existed))
    }

    /// An index that lives in memory only (starts empty, needs a rebuild): for when the
    /// file cannot be written.
    pub(crate) fn in_memory() -> Result<Index, StoreError> {
        let path = Path::new(IN_MEMORY);
        let (conn, _) = open_conn(path)
            .map_err(|e| StoreError::Index(format!("cannot create an in-memory index: {e}")))?;
        Ok(Index {
            path: path.to_path_buf(),
            conn: Mutex::new(conn),
        })
    }

    /// Throws the database away and starts an empty one (after corruption was detected).
    pub(crate) fn reset(&self) -> Result<(), StoreError> {
        let mut guard = self.lock();
        // Close our handle before deleting, then open the fresh file in its place.
        let placeholder = Connection::open_in_memory()?;
        drop(std::mem::replace(&mut *guard, placeholder));
        if self.path != Path::new(IN_MEMORY) {
            remove_db_files(&self.path)?;
        }
        let (conn, _) = open_conn(&self.path).map_err(|e| {
            StoreError::Index(format!("cannot create {}: {e}", self.path.display()))
        })?;
        *guard = conn;
        Ok(())
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic while holding the lock leaves the connection itself usable.
        self.conn.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Every day directory the index has listed, with the directory mtime (ns) it had then
    /// (`UNSEEN` when it was too recent to trust).
    pub(crate) fn dirs(&self) -> rusqlite::Result<Vec<(PathBuf, i64)>> {
        let conn = self.lock();
        let mut st = conn.prepare_cached("SELECT path, mtime_ns FROM dirs")?;
        st.query_map([], |r| Ok((bytes_path(r.get(0)?), r.get(1)?)))?
            .collect()
    }

    /// Paths of the indexed rollouts directly in `dir` (a range of the path index).
    pub(crate) fn paths_under(&self, dir: &Path) -> rusqlite::Result<Vec<PathBuf>> {
        let (lo, hi) = children_range(dir);
        let conn = self.lock();
        let mut st =
            conn.prepare_cached("SELECT path FROM threads WHERE path >= ?1 AND path < ?2")?;
        let rows = st
            .query_map(params![lo, hi], |r| Ok(bytes_path(r.get(0)?)))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        // The range also holds deeper paths (`dir/x/…`): keep direct children only.
        Ok(rows
            .into_iter()
            .filter(|p| p.parent() == Some(dir))
            .collect())
    }

    /// Applies what a scan of some day directories found, in one transaction: rows of files
    /// new (or changed) on disk, paths that are gone, directories listed (with their mtime)
    /// and directories that are gone (with every row under them).
    pub(crate) fn apply_scan(
        &self,
        scan: &Scan<'_>,
        sidecar: &SidecarState,
    ) -> rusqlite::Result<()> {
        let mut conn = self.lock();
        let tx = conn.transaction()?;
        for dir in scan.dirs_gone {
            let (lo, hi) = children_range(dir);
            tx.prepare_cached("DELETE FROM threads WHERE path >= ?1 AND path < ?2")?
                .execute(params![lo, hi])?;
            tx.prepare_cached("DELETE FROM dirs WHERE path = ?1")?
                .execute([path_bytes(dir)])?;
        }
        for path in scan.gone {
            tx.prepare_cached("DELETE FROM threads WHERE path = ?1")?
                .execute([path_bytes(path)])?;
        }
        upsert_rows(&tx, scan.rows, Some(sidecar))?;
        record_dirs(&tx, scan.dirs)?;
        tx.commit()
    }

    pub(crate) fn contains(&self, id: &ThreadId) -> rusqlite::Result<bool> {
        let conn = self.lock();
        let mut st = conn.prepare_cached("SELECT 1 FROM threads WHERE id = ?1")?;
        st.exists([id.to_string()])
    }

    /// Inserts a brand-new thread; fails if the id is taken.
    pub(crate) fn insert_new(&self, row: &FileRow<'_>) -> rusqlite::Result<()> {
        let conn = self.lock();
        insert_row(&conn, row, false)?;
        note_dir(&conn, row)
    }

    /// Inserts or refreshes the file-derived columns of several threads in one transaction,
    /// keeping names and archive flags. New rows take those from `sidecar`.
    pub(crate) fn upsert_files(
        &self,
        rows: &[FileRow<'_>],
        sidecar: Option<&SidecarState>,
    ) -> rusqlite::Result<()> {
        let mut conn = self.lock();
        let tx = conn.transaction()?;
        upsert_rows(&tx, rows, sidecar)?;
        tx.commit()
    }

    /// Replaces the whole index with `rows` plus the names/archive flags of `sidecar`, and
    /// the listed directories with `dirs`.
    pub(crate) fn replace_all(
        &self,
        rows: &[FileRow<'_>],
        sidecar: &SidecarState,
        dirs: &[(PathBuf, i64)],
    ) -> rusqlite::Result<()> {
        let mut conn = self.lock();
        let tx = conn.transaction()?;
        tx.execute("DELETE FROM threads", [])?;
        tx.execute("DELETE FROM dirs", [])?;
        for row in rows {
            insert_row(&tx, row, true)?;
        }
        for id in sidecar.ids() {
            apply_sidecar_one(&tx, sidecar, id)?;
        }
        record_dirs(&tx, dirs)?;
        tx.commit()
    }

    pub(crate) fn set_preview(
        &self,
        id: &ThreadId,
        preview: &str,
        mtime_ms: i64,
    ) -> rusqlite::Result<()> {
        let conn = self.lock();
        conn.prepare_cached("UPDATE threads SET preview = ?2, updated_at_ms = ?3 WHERE id = ?1")?
            .execute(params![id.to_string(), preview, mtime_ms])?;
        Ok(())
    }

    pub(crate) fn touch(&self, id: &ThreadId, mtime_ms: i64) -> rusqlite::Result<()> {
        let conn = self.lock();
        conn.prepare_cached("UPDATE threads SET updated_at_ms = ?2 WHERE id = ?1")?
            .execute(params![id.to_string(), mtime_ms])?;
        Ok(())
    }

    pub(crate) fn remove(&self, id: &ThreadId) -> rusqlite::Result<()> {
        let conn = self.lock();
        conn.prepare_cached("DELETE FROM threads WHERE id = ?1")?
            .execute([id.to_string()])?;
        Ok(())
    }

    /// Returns whether the thread exists.
    pub(crate) fn set_archived(&self, id: &ThreadId, archived: bool) -> rusqlite::Result<bool> {
        let conn = self.lock();
        let n = conn
            .prepare_cached("UPDATE threads SET archived = ?2 WHERE id = ?1")?
            .execute(params![id.to_string(), archived])?;
        Ok(n > 0)
    }

    /// Returns whether the thread exists.
    pub(crate) fn set_name(&self, id: &ThreadId, name: Option<&str>) -> rusqlite::Result<bool> {
        let conn = self.lock();
        let n = conn
            .prepare_cached("UPDATE threads SET name = ?2 WHERE id = ?1")?
            .execute(params![id.to_string(), name])?;
        Ok(n > 0)
    }

    pub(crate) fn get(&self, id: &ThreadId) -> rusqlite::Result<Option<ThreadSummary>> {
        let conn = self.lock();
        let mut st =
            conn.prepare_cached(&format!("SELECT {COLUMNS} FROM threads WHERE id = ?1"))?;
        st.query_row([id.to_string()], summary_from_row).optional()
    }

    /// One page, with each row's stored `updated_at` in milliseconds (the rollout's mtime
    /// when it was indexed).
    pub(crate) fn list(
        &self,
        q: &ListQuery,
        after: Option<&Cursor>,
    ) -> rusqlite::Result<(ThreadPage, Vec<i64>)> {
        let col = sort_column(q.sort_key);
        let dir = if q.descending { "DESC" } else { "ASC" };
        let limit = q.limit.clamp(1, ListQuery::MAX_LIMIT);
        let mut sql = format!("SELECT {COLUMNS} FROM threads WHERE archived = ?");
        let mut args: Vec<Value> = vec![Value::Integer(i64::from(q.archived == Some(true)))];
        let mut any_of = |sql: &mut String, column: &str, values: Vec<Value>| {
            if values.is_empty() {
                return;
            }
            let marks = vec!["?"; values.len()].join(",");
            sql.push_str(&format!(" AND {column} IN ({marks})"));
            args.extend(values);
        };
        if let Some(cwds) = &q.cwd {
            any_of(
                &mut sql,
                "cwd",
                cwds.iter().map(|p| Value::Blob(path_bytes(p))).collect(),
            );
        }
        if let Some(providers) = &q.model_providers {
            any_of(
                &mut sql,
                "model_provider",
                providers.iter().map(|p| Value::Text(p.clone())).collect(),
            );
        }
        if let Some(sources) = &q.sources {
            any_of(
                &mut sql,
                "source",
                sources
                    .iter()
                    .map(|s| Value::Text(s.as_str().to_string()))
                    .collect(),
            );
        }
        if let Some(term) = q.search.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
            let pattern = format!("%{}%", escape_like(term));
            sql.push_str(" AND (preview LIKE ? ESCAPE '\\' OR name LIKE ? ESCAPE '\\')");
            args.push(Value::Text(pattern.clone()));
            args.push(Value::Text(pattern));
        }
        if let Some(c) = after {
            let op = if q.descending { "<" } else { ">" };
            sql.push_str(&format!(" AND ({col}, id) {op} (?, ?)"));
            args.push(Value::Integer(c.value));
            args.push(Value::Text(c.id.clone()));
        }
        sql.push_str(&format!(" ORDER BY {col} {dir}, id {dir} LIMIT ?"));
        args.push(Value::Integer(i64::try_from(limit + 1).unwrap_or(i64::MAX)));

        let conn = self.lock();
        let mut st = conn.prepare_cached(&sql)?;
        let sort_index = match q.sort_key {
            SortKey::CreatedAt => 2,
            SortKey::UpdatedAt => 3,
        };
        let mut rows = st
            .query_map(rusqlite::params_from_iter(args), |r| {
                Ok((
                    summary_from_row(r)?,
                    r.get::<_, i64>(sort_index)?,
                    r.get::<_, i64>(3)?,
                ))
            })?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        // The cursor keeps the exact stored milliseconds: summaries only carry seconds.
        let next_cursor = if rows.len() > limit {
            rows.truncate(limit);
            rows.last().map(|(last, value, _)| {
                Cursor {
                    value: *value,
                    id: last.id.to_string(),
                }
                .encode(q)
            })
        } else {
            None
        };
        let (data, updated): (Vec<_>, Vec<_>) = rows.into_iter().map(|(s, _, u)| (s, u)).unzip();
        Ok((ThreadPage { data, next_cursor }, updated))
    }

    #[cfg(test)]
    pub(crate) fn explain(&self, sql: &str) -> Vec<String> {
        let conn = self.lock();
        let mut st = conn.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
        st.query_map([], |r| r.get::<_, String>(3))
            .unwrap()
            .map(|r| r.unwrap())
            .collect()
    }
}

fn insert_row(conn: &Connection, row: &FileRow<'_>, upsert: bool) -> rusqlite::Result<()> {
    let m = row.meta;
    let git = m.git.as_ref();
    let sql = if upsert {
        "INSERT INTO threads (id, path, created_at_ms, updated_at_ms, cwd, model_provider, model,
            source, preview, forked_from_id, cli_version, git_sha, git_branch, git_origin_url)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
         ON CONFLICT(id) DO UPDATE SET path = excluded.path, created_at_ms = excluded.created_at_ms,
            updated_at_ms = excluded.updated_at_ms, cwd = excluded.cwd,
            model_provider = excluded.model_provider, model = excluded.model,
            source = excluded.source, preview = excluded.preview,
            forked_from_id = excluded.forked_from_id, cli_version = excluded.cli_version,
            git_sha = excluded.git_sha, git_branch = excluded.git_branch,
            git_origin_url = excluded.git_origin_url"
    } else {
        "INSERT INTO threads (id, path, created_at_ms, updated_at_ms, cwd, model_provider, model,
            source, preview, forked_from_id, cli_version, git_sha, git_branch, git_origin_url)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)"
    };
    conn.prepare_cached(sql)?.execute(params![
        m.id.to_string(),
        path_bytes(row.path),
        row.created_ms,
        row.updated_ms,
        path_bytes(&m.cwd),
        m.model_provider,
        m.model,
        m.source.as_str(),
        row.preview,
        m.forked_from_id.map(|id| id.to_string()),
        m.cli_version,
        git.and_then(|g| g.commit_hash.as_deref()),
        git.and_then(|g| g.branch.as_deref()),
        git.and_then(|g| g.repository_url.as_deref()),
    ])?;
    Ok(())
}

/// Makes the row's directory known to the index (as not listed yet, if it is new), so its
/// removal is noticed at open and a directory not listed yet is listed at the next open.
/// A rebuild records every directory it lists instead.
fn note_dir(conn: &Connection, row: &FileRow<'_>) -> rusqlite::Result<()> {
    if let Some(dir) = row.path.parent() {
        conn.prepare_cached("INSERT OR IGNORE INTO dirs (path, mtime_ns) VALUES (?1, -1)")?
            .execute([path_bytes(dir)])?;
    }
    Ok(())
}

fn apply_sidecar_one(
    conn: &Connection,
    sidecar: &SidecarState,
    id: &ThreadId,
) -> rusqlite::Result<()> {
    let Some(entry) = sidecar.get(id) else {
        return Ok(());
    };
    if let Some(name) = &entry.name {
        conn.prepare_cached("UPDATE threads SET name = ?2 WHERE id = ?1")?
            .execute(params![id.to_string(), name.as_deref()])?;
    }
    if let Some(archived) = entry.archived {
        conn.prepare_cached("UPDATE threads SET archived = ?2 WHERE id = ?1")?
            .execute(params![id.to_string(), archived])?;
    }
    Ok(())
}

fn upsert_rows(
    conn: &Connection,
    rows: &[FileRow<'_>],
    sidecar: Option<&SidecarState>,
) -> rusqlite::Result<()> {
    for row in rows {
        let is_new = !conn
            .prepare_cached("SELECT 1 FROM threads WHERE id = ?1")?
            .exists([row.meta.id.to_string()])?;
        insert_row(conn, row, true)?;
        note_dir(conn, row)?;
        if is_new && let Some(sidecar) = sidecar {
            apply_sidecar_one(conn, sidecar, &row.meta.id)?;
        }
    }
    Ok(())
}

fn record_dirs(conn: &Connection, dirs: &[(PathBuf, i64)]) -> rusqlite::Result<()> {
    for (dir, mtime_ns) in dirs {
        conn.prepare_cached(
            "INSERT INTO dirs (path, mtime_ns) VALUES (?1, ?2)
             ON CONFLICT(path) DO UPDATE SET mtime_ns = excluded.mtime_ns",
        )?
        .execute(params![path_bytes(dir), mtime_ns])?;
    }
    Ok(())
}

/// `[dir/, dir0)`: every path below `dir` sorts in this byte range (`0` follows `/`).
fn children_range(dir: &Path) -> (Vec<u8>, Vec<u8>) {
    let mut lo = path_bytes(dir);
    lo.push(b'/');
    let mut hi = lo.clone();
    if let Some(last) = hi.last_mut() {
        *last = b'0';
    }
    (lo, hi)
}

fn sort_column(key: SortKey) -> &'static str {
    match key {
        SortKey::CreatedAt => "created_at_ms",
        SortKey::UpdatedAt => "updated_at_ms",
    }
}

fn summary_from_row(r: &Row<'_>) -> rusqlite::Result<ThreadSummary> {
    let bad_id = |i: usize, s: &str| {
        rusqlite::Error::FromSqlConversionFailure(
            i,
            rusqlite::types::Type::Text,
            format!("invalid thread id `{s}`").into(),
        )
    };
    let id_text: String = r.get(0)?;
    let id: ThreadId = id_text.parse().map_err(|_| bad_id(0, &id_text))?;
    let forked: Option<String> = r.get(11)?;
    let forked_from_id = match forked {
        Some(s) => Some(s.parse().map_err(|_| bad_id(11, &s))?),
        None => None,
    };
    let created_ms: i64 = r.get(2)?;
    let updated_ms: i64 = r.get(3)?;
    let source: String = r.get(7)?;
    let git_sha: Option<String> = r.get(13)?;
    let git_branch: Option<String> = r.get(14)?;
    let git_origin: Option<String> = r.get(15)?;
    let git = GitInfo::from_columns(git_sha, git_branch, git_origin);
    Ok(ThreadSummary {
        id,
        path: bytes_path(r.get(1)?),
        created_at: created_ms.div_euclid(1000),
        updated_at: updated_ms.div_euclid(1000),
        cwd: bytes_path(r.get(4)?),
        model_provider: r.get(5)?,
        model: r.get(6)?,
        source: source.parse().unwrap_or(SessionSource::Unknown),
        preview: r.get(8)?,
        name: r.get(9)?,
        archived: r.get(10)?,
        forked_from_id,
        cli_version: r.get(12)?,
        git,
    })
}
