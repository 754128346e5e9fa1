//! Rollout files of the local backend: naming, reading just the head, and the append-only
//! writer (the line format and whole-file reading are shared: `record`).
//!
//! Durability: every record is serialized to one buffer ending in `\n` and written with a
//! single `write_all` on an `O_APPEND` file, so a killed process leaves every earlier line
//! whole and at most one torn last line. Lines are not fsynced one by one (that survives a
//! process kill, not a power loss); [`LocalWriter::flush_index`] fsyncs at turn end.

use crate::error::StoreError;
use crate::index::Index;
use crate::record::{
    encode_line, format_timestamp, preview_text, system_time_ms, truncate_preview,
};
use crate::types::{RolloutItem, RolloutLine, SessionMeta};
use chrono::{Local, TimeZone, Utc};
use oi_protocol::ThreadId;
use std::borrow::Cow;
use std::fs::File;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

/// A head scan looking for the first user message gives up after this many bytes, so a
/// rebuild never reads whole multi-MB rollouts.
const HEAD_SCAN_BYTES: u64 = 1 << 20;
/// Activity that does not end a turn (token counts, items) reaches the index at most this often.
const INDEX_TOUCH_INTERVAL: Duration = Duration::from_secs(5);

/// `sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<uuid>.jsonl`, local time of `created_ms`.
pub(crate) fn rollout_path(sessions: &Path, created_ms: i64, id: &ThreadId) -> PathBuf {
    let local = Local
        .timestamp_millis_opt(created_ms)
        .earliest()
        .unwrap_or_else(Local::now);
    sessions
        .join(local.format("%Y").to_string())
        .join(local.format("%m").to_string())
        .join(local.format("%d").to_string())
        .join(format!(
            "rollout-{}-{id}.jsonl",
            local.format("%Y-%m-%dT%H-%M-%S")
        ))
}

/// The thread id in a rollout file name, if the name has the standard shape.
#[cfg(test)]
pub(crate) fn id_from_file_name(path: &Path) -> Option<ThreadId> {
    let name = path.file_name()?.to_str()?;
    let stem = name.strip_prefix("rollout-")?.strip_suffix(".jsonl")?;
    let start = stem.len().checked_sub(36)?;
    stem.get(start..)?.parse().ok()
}

/// What the index needs from a rollout, read from its first lines only.
pub(crate) struct Head {
    pub meta: SessionMeta,
    pub preview: String,
}

#[derive(serde::Deserialize)]
struct KindProbe<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
}

/// Reads the `session_meta` line and scans on (at most [`HEAD_SCAN_BYTES`]) for the first
/// `user_message` event. Never parses the rest of the file.
pub(crate) fn read_head(path: &Path) -> Result<Head, StoreError> {
    let file = crate::files::open_read(path).map_err(|e| StoreError::io(path, e))?;
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let mut line = Vec::new();
    let corrupt = |reason: String| StoreError::Corrupt {
        path: path.to_path_buf(),
        reason,
    };
    reader
        .read_until(b'\n', &mut line)
        .map_err(|e| StoreError::io(path, e))?;
    let first = std::str::from_utf8(&line).map_err(|e| corrupt(format!("first line: {e}")))?;
    let meta = match RolloutLine::parse(first) {
        Ok(RolloutLine {
            item: RolloutItem::SessionMeta(meta),
            ..
        }) => meta,
        Ok(other) => {
            return Err(corrupt(format!(
                "first record is `{}`, expected session_meta",
                other.item.kind()
            )));
        }
        Err(e) => return Err(corrupt(format!("first line: {e}"))),
    };
    let mut preview = String::new();
    let mut limited = reader.take(HEAD_SCAN_BYTES);
    loop {
        line.clear();
        let n = limited
            .read_until(b'\n', &mut line)
            .map_err(|e| StoreError::io(path, e))?;
        if n == 0 {
            break;
        }
        // Cheap substring test first: most lines are not user messages.
        if !contains(&line, b"\"user_message\"") {
            continue;
        }
        let Ok(text) = std::str::from_utf8(&line) else {
            continue;
        };
        let Ok(raw) = serde_json::from_str::<crate::types::RawLine<'_>>(text) else {
            continue;
        };
        if raw.kind != "event_msg" {
            continue;
        }
        match serde_json::from_str::<KindProbe<'_>>(raw.payload.get()) {
            Ok(p) if p.kind == "user_message" => {}
            _ => continue,
        }
        if let Ok(line) = RolloutLine::parse(text)
            && let Some(t) = preview_text(&line.item)
        {
            preview = truncate_preview(t);
            break;
        }
    }
    Ok(Head { meta, preview })
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

/// Appends records to one thread's rollout and keeps the index row current.
///
/// Holds an exclusive advisory lock on the file for its lifetime, so two sessions cannot
/// interleave records in one thread. Dropping it flushes the index.
pub(crate) struct LocalWriter {
    file: File,
    path: PathBuf,
    id: ThreadId,
    index: Arc<Index>,
    has_preview: bool,
    /// Records written since the index last saw this file's mtime.
    dirty: bool,
    /// Records written since the last fsync.
    unsynced: bool,
    last_touch: Instant,
    buf: Vec<u8>,
}

impl LocalWriter {
    pub(crate) fn new(
        file: File,
        path: PathBuf,
        id: ThreadId,
        index: Arc<Index>,
        has_preview: bool,
    ) -> Self {
        LocalWriter {
            file,
            path,
            id,
            index,
            has_preview,
            dirty: false,
            unsynced: true,
            last_touch: Instant::now(),
            buf: Vec::with_capacity(4096),
        }
    }

    /// Writes one record as one line (a single `write_all`), then updates the index when the
    /// record changes what listing shows: the first user message sets the preview, and a
    /// turn's end records the activity time (and fsyncs). Other records reach the index in
    /// batches. Index failures are logged, not returned: the line is already safe on disk and
    /// the index can be rebuilt from it.
    pub(crate) fn append(&mut self, item: &RolloutItem) -> Result<(), StoreError> {
        self.append_all(std::slice::from_ref(item))
    }

    /// Writes several records with a single `write_all`.
    pub(crate) fn append_all(&mut self, items: &[RolloutItem]) -> Result<(), StoreError> {
        if items.is_empty() {
            return Ok(());
        }
        let ts = format_timestamp(Utc::now());
        self.buf.clear();
        for item in items {
            encode_line(&mut self.buf, &ts, item)?;
        }
        self.write_buf()?;
        self.after_write(items.iter())
    }

    /// Writes pre-timestamped lines (fork copies keep their original times).
    pub(crate) fn append_lines(&mut self, lines: &[RolloutLine]) -> Result<(), StoreError> {
        if lines.is_empty() {
            return Ok(());
        }
        self.buf.clear();
        for l in lines {
            encode_line(&mut self.buf, &l.timestamp, &l.item)?;
        }
        self.write_buf()?;
        self.after_write(lines.iter().map(|l| &l.item))
    }

    /// Appends a bare `\n` so the next record starts on its own line.
    pub(crate) fn terminate_line(&mut self) -> Result<(), StoreError> {
        self.buf.clear();
        self.buf.push(b'\n');
        self.write_buf()
    }

    /// Writes the buffer whole or not at all: after a failed write (disk full) the file is
    /// cut back to where it was, so a retry of the same records starts on a clean line.
    fn write_buf(&mut self) -> Result<(), StoreError> {
        let before = self.file.metadata().map(|m| m.len()).ok();
        let written = self
            .file
            .write_all(&self.buf)
            .and_then(|()| self.file.flush());
        if let Err(e) = written {
            if let Some(len) = before
                && let Err(cut) = self.file.set_len(len)
            {
                tracing::debug!("{}: cannot cut a partial write: {cut}", self.path.display());
            }
            return Err(StoreError::io(&self.path, e));
        }
        self.dirty = true;
        self.unsynced = true;
        Ok(())
    }

    fn after_write<'a>(
        &mut self,
        items: impl Iterator<Item = &'a RolloutItem>,
    ) -> Result<(), StoreError> {
        let mut ends_turn = false;
        for item in items {
            if !self.has_preview
                && let Some(text) = preview_text(item)
            {
                self.has_preview = true;
                let preview = truncate_preview(text);
                let mtime = self.mtime_ms();
                match self.index.set_preview(&self.id, &preview, mtime) {
                    Ok(()) => {
                        self.dirty = false;
                        self.last_touch = Instant::now();
                    }
                    Err(e) => crate::notice!("thread {}: index not updated: {e}", self.id),
                }
            }
            if let RolloutItem::EventMsg(ev) = item
                && ev.ends_turn()
            {
                ends_turn = true;
            }
        }
        if ends_turn {
            if let Err(e) = self.flush_index() {
                crate::notice!("thread {}: {e}", self.id);
            }
        } else if self.dirty && self.last_touch.elapsed() >= INDEX_TOUCH_INTERVAL {
            self.touch_index();
        }
        Ok(())
    }

    fn mtime_ms(&self) -> i64 {
        self.file
            .metadata()
            .and_then(|m| m.modified())
            .map(system_time_ms)
            .unwrap_or_else(|_| system_time_ms(SystemTime::now()))
    }

    fn touch_index(&mut self) {
        let mtime = self.mtime_ms();
        match self.index.touch(&self.id, mtime) {
            Ok(()) => self.dirty = false,
            Err(e) => crate::notice!("thread {}: index not updated: {e}", self.id),
        }
        self.last_touch = Instant::now();
    }

    /// Fsyncs the file (so a finished turn survives a power loss too) and records the file's
    /// modification time as the thread's `updated_at`. Called automatically when a turn ends
    /// and on drop.
    pub(crate) fn flush_index(&mut self) -> Result<(), StoreError> {
        if self.unsynced {
            self.file
                .sync_data()
                .map_err(|e| StoreError::io(&self.path, e))?;
            self.unsynced = false;
        }
        if self.dirty {
            let mtime = self.mtime_ms();
            self.index.touch(&self.id, mtime)?;
            self.dirty = false;
            self.last_touch = Instant::now();
        }
        Ok(())
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    pub(crate) fn thread_id(&self) -> ThreadId {
        self.id
    }
}

impl Drop for LocalWriter {
    fn drop(&mut self) {
        if let Err(e) = self.flush_index() {
            crate::notice!("thread {}: {e}", self.id);
        }
    }
}

impl std::fmt::Debug for LocalWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalWriter")
            .field("id", &self.id)
            .field("path", &self.path)
            .finish_non_exhaustive()
    }
}
