//! The record format both backends share: one `{"timestamp","type","payload"}` JSON line per
//! [`RolloutItem`] (a rollout file's line, or a row of `oi_rollout_lines` in PostgreSQL),
//! reading a file of them (a local rollout, or one exported from any store), and the facts
//! a thread's summary takes from its records (timestamps, creation time, preview).
//!
//! Neutral ground: neither backend's files live here, so the PostgreSQL backend never
//! imports the local one (checked by `cargo xtask tidy`).

use crate::error::StoreError;
use crate::types::{RolloutItem, RolloutLine, SessionMeta};
use chrono::{DateTime, Utc};
use oi_protocol::ThreadId;
use oi_protocol::protocol::EventMsg;
use serde::Serialize;
use serde::ser::SerializeStruct;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

/// Longest preview kept in the index (characters).
pub(crate) const PREVIEW_MAX_CHARS: usize = 1000;

pub(crate) use crate::types::format_timestamp;

pub(crate) fn parse_timestamp_ms(s: &str) -> Option<i64> {
    DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|t| t.timestamp_millis())
}

/// A new thread's creation time in milliseconds, from its `session_meta` timestamp; an empty
/// one is first stamped with the current time. Both backends' `create` start here.
pub(crate) fn stamp_created(meta: &mut SessionMeta) -> Result<i64, StoreError> {
    if meta.timestamp.is_empty() {
        meta.timestamp = format_timestamp(Utc::now());
    }
    parse_timestamp_ms(&meta.timestamp).ok_or_else(|| {
        StoreError::Invalid(format!(
            "session_meta timestamp `{}` is not RFC 3339 (expected e.g. 2026-04-25T12:00:00.123Z)",
            meta.timestamp
        ))
    })
}

/// A thread's records split as a [`crate::LoadedThread`] holds them: its `session_meta`
/// (which must come first, else the thread at `path` is corrupt), then the timestamps and
/// the items of the rest. Both backends load through it.
pub(crate) fn split_meta(
    lines: Vec<RolloutLine>,
    path: &Path,
) -> Result<(SessionMeta, Vec<String>, Vec<RolloutItem>), StoreError> {
    let mut lines = lines.into_iter();
    let meta = match lines.next() {
        Some(RolloutLine {
            item: RolloutItem::SessionMeta(meta),
            ..
        }) => meta,
        _ => {
            return Err(StoreError::Corrupt {
                path: path.to_path_buf(),
                reason: "it has no session_meta record at its start".into(),
            });
        }
    };
    let (timestamps, items) = lines.map(|l| (l.timestamp, l.item)).unzip();
    Ok((meta, timestamps, items))
}

pub(crate) fn system_time_ms(t: SystemTime) -> i64 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_millis()).unwrap_or(i64::MAX),
    }
}

/// Milliseconds embedded in a UUID v7 (0 for other versions).
pub(crate) fn thread_id_ms(id: &ThreadId) -> i64 {
    id.as_uuid()
        .get_timestamp()
        .map(|ts| {
            let (secs, nanos) = ts.to_unix();
            i64::try_from(secs).unwrap_or(0) * 1000 + i64::from(nanos / 1_000_000)
        })
        .unwrap_or(0)
}

/// Creation time of a thread: its meta timestamp, else the id's time, else `fallback`.
pub(crate) fn created_ms(meta: &SessionMeta, fallback: i64) -> i64 {
    parse_timestamp_ms(&meta.timestamp)
        .or_else(|| Some(thread_id_ms(&meta.id)).filter(|ms| *ms > 0))
        .unwrap_or(fallback)
}

/// The text a record contributes as the thread's preview: only `user_message` events count,
/// because user-role response items also carry injected context (instructions, environment).
pub(crate) fn preview_text(item: &RolloutItem) -> Option<&str> {
    match item {
        RolloutItem::EventMsg(EventMsg::UserMessage(m)) if !m.message.trim().is_empty() => {
            Some(&m.message)
        }
        _ => None,
    }
}

pub(crate) fn truncate_preview(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(PREVIEW_MAX_CHARS) {
        Some((cut, _)) => text[..cut].to_string(),
        None => text.to_string(),
    }
}

/// A line borrowed for serialization; same shape as [`RolloutLine`].
pub(crate) struct LineRef<'a> {
    pub timestamp: &'a str,
    pub item: &'a RolloutItem,
}

impl Serialize for LineRef<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut st = s.serialize_struct("RolloutLine", 3)?;
        st.serialize_field("timestamp", self.timestamp)?;
        st.serialize_field("type", self.item.kind())?;
        match self.item {
            RolloutItem::SessionMeta(p) => st.serialize_field("payload", p)?,
            RolloutItem::ResponseItem(p) => st.serialize_field("payload", p)?,
            RolloutItem::TurnContext(p) => st.serialize_field("payload", p)?,
            RolloutItem::EventMsg(p) => st.serialize_field("payload", p)?,
            RolloutItem::Compacted(p) => st.serialize_field("payload", p)?,
            RolloutItem::TurnParked(p) => st.serialize_field("payload", p)?,
            RolloutItem::TurnUnparked(p) => st.serialize_field("payload", p)?,
        }
        st.end()
    }
}

/// Appends `{"timestamp","type","payload"}\n` to `buf`.
pub(crate) fn encode_line(
    buf: &mut Vec<u8>,
    timestamp: &str,
    item: &RolloutItem,
) -> Result<(), StoreError> {
    serde_json::to_writer(&mut *buf, &LineRef { timestamp, item }).map_err(|e| {
        StoreError::Invalid(format!(
            "cannot serialize a `{}` record: {e} (paths in records must be valid UTF-8)",
            item.kind()
        ))
    })?;
    buf.push(b'\n');
    Ok(())
}

/// How a rollout file ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tail {
    /// Empty, or the last byte is `\n`.
    Clean,
    /// The last line is whole JSON but lacks its `\n`.
    MissingNewline,
    /// The last line is a fragment; the valid part of the file is `valid_len` bytes.
    Torn { valid_len: u64 },
}

pub(crate) struct ParsedRollout {
    pub lines: Vec<RolloutLine>,
    pub warnings: Vec<String>,
    pub tail: Tail,
}

/// Reads every record. Unreadable lines are skipped with a warning; a file whose first
/// readable record is not `session_meta` is [`StoreError::Corrupt`].
pub(crate) fn read_rollout(path: &Path) -> Result<ParsedRollout, StoreError> {
    read_rollout_events(path, None)
}

/// [`read_rollout`], keeping only the events whose kind `events` accepts (every other record
/// is kept): the others are neither parsed nor checked. The last line is always parsed
/// whole, so a torn one is still found.
pub(crate) fn read_rollout_events(
    path: &Path,
    events: Option<fn(&str) -> bool>,
) -> Result<ParsedRollout, StoreError> {
    let bytes = crate::files::read(path).map_err(|e| StoreError::io(path, e))?;
    let mut lines = Vec::new();
    let mut warnings = Vec::new();
    let mut tail = Tail::Clean;
    let mut offset = 0usize;
    let mut line_no = 0usize;
    while offset < bytes.len() {
        line_no += 1;
        let (raw, next, last_unterminated) = match bytes[offset..].iter().position(|b| *b == b'\n')
        {
            Some(i) => (&bytes[offset..offset + i], offset + i + 1, false),
            None => (&bytes[offset..], bytes.len(), true),
        };
        let start = offset;
        offset = next;
        if raw.iter().all(|b| b.is_ascii_whitespace()) {
            continue;
        }
        let parsed = std::str::from_utf8(raw)
            .map_err(|e| format!("not UTF-8 ({e})"))
            .and_then(|s| {
                match events {
                    Some(wanted) if !last_unterminated => RolloutLine::parse_if(s, wanted),
                    _ => RolloutLine::parse(s).map(Some),
                }
                .map_err(|e| e.to_string())
            });
        match parsed {
            Ok(None) => {}
            Ok(Some(line)) => {
                if last_unterminated {
                    tail = Tail::MissingNewline;
                }
                lines.push(line);
            }
            Err(reason) if last_unterminated => {
                tail = Tail::Torn {
                    valid_len: start as u64,
                };
                warnings.push(format!(
                    "{} line {line_no}: incomplete last line (the writing process probably \
                     stopped mid-write: {reason}); skipped",
                    path.display()
                ));
            }
            Err(reason) => warnings.push(format!(
                "{} line {line_no}: {reason}; skipped",
                path.display()
            )),
        }
    }
    for w in &warnings {
        crate::notice!("{w}");
    }
    match lines.first() {
        Some(RolloutLine {
            item: RolloutItem::SessionMeta(_),
            ..
        }) => Ok(ParsedRollout {
            lines,
            warnings,
            tail,
        }),
        _ => Err(StoreError::Corrupt {
            path: path.to_path_buf(),
            reason: "it has no readable session_meta record at its start; it was not written \
                     by this program, or its first line is damaged"
                .into(),
        }),
    }
}

impl Serialize for RolloutLine {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        // One writer of the on-disk shape (timestamp, type, payload, in that order: readers
        // that only probe the start of a line rely on it being cheap to find).
        LineRef {
            timestamp: &self.timestamp,
            item: &self.item,
        }
        .serialize(s)
    }
}
