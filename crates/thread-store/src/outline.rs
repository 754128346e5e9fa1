//! A thread's outline: where each turn starts and ends, found without parsing its records.
//!
//! Paged history (v2 `thread/turns/list`, `thread/items/list`) shows a few turns of a thread
//! that may hold thousands. Parsing every record to show 25 turns costs far more than the
//! page, so an outline reads only each line's record type and the few fields that decide
//! turn boundaries (turn ids, times, error messages), keeps the raw lines, and parses just
//! the lines of the turns a page shows ([`ThreadOutline::records`]).
//!
//! One set of boundary rules ([`turn_spans`]) serves both this and
//! [`LoadedThread::turns`](crate::LoadedThread::turns), which feeds it marks taken from parsed
//! records, so the two views agree. An outline is brought up to date with only the lines
//! appended since it was read ([`ThreadStore::outline_update`](crate::ThreadStore::outline_update)).
//!
//! Nothing is stored on disk: the outline is derived from the rollout (or the database rows)
//! each time a process first reads a thread, so every rollout ever written stays readable.

use crate::record::parse_timestamp_ms;
use crate::types::{RolloutItem, RolloutLine};
use oi_protocol::ThreadId;
use oi_protocol::protocol::EventMsg;
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::ops::Range;
use std::path::PathBuf;

/// How a stored turn ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TurnStatus {
    /// Ended normally (`task_complete`).
    Completed,
    /// Aborted (`turn_aborted`), or cut off by a newer turn starting after a crash.
    Interrupted,
    /// Ended after an `error` event.
    Failed,
    /// No end record (yet): running now, or its process was killed.
    InProgress,
    /// No end record: the turn stopped at approvals and waits to be resumed (its last
    /// `turn_parked` record says what for).
    Parked,
}

/// One turn rebuilt from the rollout's events (for v2 `thread/read` / `thread/resume`).
#[derive(Clone, Debug)]
pub struct StoredTurn {
    /// The turn's id.
    pub id: String,
    /// How it ended.
    pub status: TurnStatus,
    /// The raw records of this turn, in order, from `task_started` to its end record.
    pub items: Vec<RolloutItem>,
    /// Unix seconds.
    pub started_at: Option<i64>,
    /// Unix seconds.
    pub completed_at: Option<i64>,
    /// How long it ran, as its end record says.
    pub duration_ms: Option<u64>,
    /// The message of the turn's `error` event, if any.
    pub error: Option<String>,
}

/// What one record contributes to turn boundaries.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Mark {
    /// Not part of any turn: a `session_meta`, or a line that cannot be read.
    Ignored,
    TurnContext {
        turn_id: String,
    },
    TaskStarted {
        turn_id: String,
        started_at: Option<i64>,
    },
    /// `task_complete` or (`aborted`) `turn_aborted`.
    TurnEnd {
        aborted: bool,
        turn_id: String,
        completed_at: Option<i64>,
        duration_ms: Option<u64>,
    },
    UserMessage {
        at: Option<i64>,
    },
    Error {
        message: String,
    },
    /// `turn_parked`: the turn stopped at approvals.
    Parked {
        turn_id: String,
    },
    /// `turn_unparked`: the turn's park ended (its continuation or its end follows).
    Unparked {
        turn_id: String,
    },
    /// A response item or an agent message: conversation left after the last turn opens an
    /// implicit turn of its own.
    Conversation,
    Other,
}

/// Unix seconds of a line timestamp.
fn seconds(timestamp: &str) -> Option<i64> {
    parse_timestamp_ms(timestamp).map(|ms| ms.div_euclid(1000))
}

impl Mark {
    /// The mark of a parsed record written at `timestamp`.
    pub(crate) fn of_item(item: &RolloutItem, timestamp: &str) -> Mark {
        match item {
            RolloutItem::SessionMeta(_) => Mark::Ignored,
            RolloutItem::TurnContext(tc) => Mark::TurnContext {
                turn_id: tc.turn_id.clone(),
            },
            RolloutItem::ResponseItem(_) => Mark::Conversation,
            RolloutItem::Compacted(_) => Mark::Other,
            RolloutItem::TurnParked(p) => Mark::Parked {
                turn_id: p.turn_id.clone(),
            },
            RolloutItem::TurnUnparked(u) => Mark::Unparked {
                turn_id: u.turn_id.clone(),
            },
            RolloutItem::EventMsg(ev) => match ev {
                EventMsg::TaskStarted(e) => Mark::TaskStarted {
                    turn_id: e.turn_id.clone(),
                    started_at: e.started_at.or_else(|| seconds(timestamp)),
                },
                EventMsg::TaskComplete(e) => Mark::TurnEnd {
                    aborted: false,
                    turn_id: e.turn_id.clone(),
                    completed_at: e.completed_at.or_else(|| seconds(timestamp)),
                    duration_ms: e.duration_ms,
                },
                EventMsg::TurnAborted(e) => Mark::TurnEnd {
                    aborted: true,
                    turn_id: e.turn_id.clone().unwrap_or_default(),
                    completed_at: e.completed_at.or_else(|| seconds(timestamp)),
                    duration_ms: e.duration_ms,
                },
                EventMsg::UserMessage(_) => Mark::UserMessage {
                    at: seconds(timestamp),
                },
                EventMsg::Error(e) => Mark::Error {
                    message: e.message.clone(),
                },
                EventMsg::AgentMessage(_) => Mark::Conversation,
                _ => Mark::Other,
            },
        }
    }

    /// The mark of a raw rollout line, reading only the fields boundaries depend on (the
    /// rest of the line is skipped, not parsed). `Err` for a line that is not a record.
    pub(crate) fn of_line(line: &str) -> Result<Mark, serde_json::Error> {
        let probe: LineProbe<'_> = serde_json::from_str(line)?;
        let p = &probe.payload;
        let ts = probe.timestamp.as_deref().unwrap_or_default();
        // A boundary field of the wrong type makes the full parse reject the line, so the
        // line is no record at all.
        let mark = match probe.kind.as_ref() {
            "session_meta" => Mark::Ignored,
            "response_item" => Mark::Conversation,
            "compacted" => Mark::Other,
            // A park record whose turn id is unreadable is no record for the full parse.
            "turn_parked" => match field::<String>(p.turn_id) {
                Some(Ok(turn_id)) => Mark::Parked { turn_id },
                _ => Mark::Ignored,
            },
            "turn_unparked" => match field::<String>(p.turn_id) {
                Some(Ok(turn_id)) => Mark::Unparked { turn_id },
                _ => Mark::Ignored,
            },
            "turn_context" => match field::<String>(p.turn_id) {
                Some(Ok(turn_id)) => Mark::TurnContext { turn_id },
                None => Mark::TurnContext {
                    turn_id: String::new(),
                },
                Some(Err(_)) => Mark::Ignored,
            },
            "event_msg" => {
                let kind = field::<Cow<'_, str>>(p.kind).and_then(Result::ok);
                event_mark(kind.as_deref(), p, ts).unwrap_or(Mark::Ignored)
            }
            // A record type this version does not know is skipped by the full parse too.
            _ => Mark::Ignored,
        };
        Ok(mark)
    }

    fn is_conversation(&self) -> bool {
        matches!(self, Mark::Conversation | Mark::UserMessage { .. })
    }
}

/// The mark of an `event_msg` payload; `None` when a boundary field is unreadable.
fn event_mark(kind: Option<&str>, p: &PayloadProbe<'_>, ts: &str) -> Option<Mark> {
    let opt_i64 = |v: Option<&RawValue>| field::<Option<i64>>(v).transpose().map(Option::flatten);
    let opt_u64 = |v: Option<&RawValue>| field::<Option<u64>>(v).transpose().map(Option::flatten);
    Some(match kind {
        Some("task_started") => Mark::TaskStarted {
            turn_id: field::<String>(p.turn_id)?.ok()?,
            started_at: opt_i64(p.started_at).ok()?.or_else(|| seconds(ts)),
        },
        Some(k @ ("task_complete" | "turn_aborted")) => {
            let aborted = k == "turn_aborted";
            let turn_id = if aborted {
                field::<Option<String>>(p.turn_id)
                    .transpose()
                    .ok()?
                    .flatten()
                    .unwrap_or_default()
            } else {
                field::<String>(p.turn_id)?.ok()?
            };
            Mark::TurnEnd {
                aborted,
                turn_id,
                completed_at: opt_i64(p.completed_at).ok()?.or_else(|| seconds(ts)),
                duration_ms: opt_u64(p.duration_ms).ok()?,
            }
        }
        Some("user_message") => Mark::UserMessage { at: seconds(ts) },
        Some("error") => Mark::Error {
            message: field::<String>(p.message)?.ok()?,
        },
        Some("agent_message") => Mark::Conversation,
        _ => Mark::Other,
    })
}

/// Parses an optional raw field: `None` when absent.
fn field<'a, T: Deserialize<'a>>(v: Option<&'a RawValue>) -> Option<Result<T, serde_json::Error>> {
    v.map(|raw| serde_json::from_str(raw.get()))
}

/// The outer shape of a line with only the boundary fields of its payload kept (as raw
/// JSON, so a field of any type never fails the probe itself).
#[derive(Deserialize)]
struct LineProbe<'a> {
    #[serde(default, borrow)]
    timestamp: Option<Cow<'a, str>>,
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow)]
    payload: PayloadProbe<'a>,
}

#[derive(Deserialize)]
struct PayloadProbe<'a> {
    #[serde(rename = "type", default, borrow)]
    kind: Option<&'a RawValue>,
    #[serde(default, borrow)]
    turn_id: Option<&'a RawValue>,
    #[serde(default, borrow)]
    started_at: Option<&'a RawValue>,
    #[serde(default, borrow)]
    completed_at: Option<&'a RawValue>,
    #[serde(default, borrow)]
    duration_ms: Option<&'a RawValue>,
    #[serde(default, borrow)]
    message: Option<&'a RawValue>,
}

/// One turn's place in a thread: its state and the records (line numbers after the
/// `session_meta`) it spans.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TurnSpan {
    /// The turn's id.
    pub id: String,
    /// How it ended.
    pub status: TurnStatus,
    /// Unix seconds.
    pub started_at: Option<i64>,
    /// Unix seconds.
    pub completed_at: Option<i64>,
    /// How long it ran, as its end record says.
    pub duration_ms: Option<u64>,
    /// The message of the turn's `error` event, if any.
    pub error: Option<String>,
    /// The records of the turn: an index range into the thread's records.
    pub lines: Range<usize>,
    /// Whether a `task_started` record opened the turn (otherwise it is implicit: a user
    /// message outside any turn, or records an older writer left without turn events).
    pub opened_by_task_started: bool,
}

impl TurnSpan {
    fn new(id: String, started_at: Option<i64>, lines: Range<usize>, started: bool) -> Self {
        TurnSpan {
            id,
            status: TurnStatus::InProgress,
            started_at,
            completed_at: None,
            duration_ms: None,
            error: None,
            lines,
            opened_by_task_started: started,
        }
    }

    /// The turn with its records (those of [`TurnSpan::lines`], parsed).
    pub fn with_items(&self, items: Vec<RolloutItem>) -> StoredTurn {
        StoredTurn {
            id: self.id.clone(),
            status: self.status,
            items,
            started_at: self.started_at,
            completed_at: self.completed_at,
            duration_ms: self.duration_ms,
            error: self.error.clone(),
        }
    }
}

/// Records waiting for the turn they lead into (a contiguous run of lines).
struct Pending {
    start: usize,
    end: usize,
    conversation: bool,
}

fn add_pending(pending: &mut Option<Pending>, i: usize, conversation: bool) {
    match pending {
        Some(p) => {
            p.end = i + 1;
            p.conversation |= conversation;
        }
        None => {
            *pending = Some(Pending {
                start: i,
                end: i + 1,
                conversation,
            })
        }
    }
}

/// Turns from the records' marks. Records before a turn's `task_started` (e.g. its
/// `turn_context`) belong to that turn; a `user_message` outside any turn starts an implicit
/// one (older or foreign writers); a turn cut off by a newer `task_started` is interrupted.
pub(crate) fn turn_spans<'a>(marks: impl IntoIterator<Item = &'a Mark>) -> Vec<TurnSpan> {
    let mut turns: Vec<TurnSpan> = Vec::new();
    let mut current: Option<TurnSpan> = None;
    let mut pending: Option<Pending> = None;
    let mut last_turn_context_id: Option<String> = None;
    // The current turn's last `turn_parked` has no `turn_unparked` after it.
    let mut parked = false;
    for (i, mark) in marks.into_iter().enumerate() {
        match mark {
            Mark::Ignored => {}
            Mark::Parked { turn_id } | Mark::Unparked { turn_id }
                if current.as_ref().is_some_and(|t| t.id == *turn_id) =>
            {
                parked = matches!(mark, Mark::Parked { .. });
                if let Some(t) = current.as_mut() {
                    t.lines.end = i + 1;
                }
            }
            Mark::TurnContext { turn_id } if current.is_none() => {
                if !turn_id.is_empty() {
                    last_turn_context_id = Some(turn_id.clone());
                }
                add_pending(&mut pending, i, false);
            }
            Mark::TaskStarted {
                turn_id,
                started_at,
            } => {
                if let Some(mut t) = current.take() {
                    t.status = TurnStatus::Interrupted;
                    turns.push(t);
                }
                parked = false;
                let start = pending.take().map_or(i, |p| p.start);
                current = Some(TurnSpan::new(
                    turn_id.clone(),
                    *started_at,
                    start..i + 1,
                    true,
                ));
            }
            Mark::TurnEnd {
                aborted,
                turn_id,
                completed_at,
                duration_ms,
            } => {
                let mut t = current.take().unwrap_or_else(|| {
                    let start = pending.take().map_or(i, |p| p.start);
                    TurnSpan::new(turn_id.clone(), None, start..i, false)
                });
                parked = false;
                t.lines.end = i + 1;
                t.completed_at = *completed_at;
                t.duration_ms = *duration_ms;
                t.status = if *aborted {
                    TurnStatus::Interrupted
                } else if t.error.is_some() {
                    TurnStatus::Failed
                } else {
                    TurnStatus::Completed
                };
                turns.push(t);
            }
            Mark::UserMessage { at } if current.is_none() => {
                let id = last_turn_context_id
                    .take()
                    .unwrap_or_else(|| format!("turn-{}", turns.len() + 1));
                let start = pending.take().map_or(i, |p| p.start);
                parked = false;
                current = Some(TurnSpan::new(id, *at, start..i + 1, false));
            }
            other => {
                if let Mark::Error { message } = other
                    && let Some(t) = current.as_mut()
                {
                    t.error = Some(message.clone());
                }
                match current.as_mut() {
                    Some(t) => t.lines.end = i + 1,
                    None => add_pending(&mut pending, i, other.is_conversation()),
                }
            }
        }
    }
    if let Some(mut t) = current.take() {
        if parked {
            t.status = TurnStatus::Parked;
        }
        turns.push(t);
    }
    if let Some(p) = pending {
        if p.conversation {
            let id = format!("turn-{}", turns.len() + 1);
            turns.push(TurnSpan::new(id, None, p.start..p.end, false));
        } else if let Some(last) = turns.last_mut() {
            last.lines.end = p.end;
        }
    }
    turns
}

/// Where an outline's lines come from, and how far they were read.
#[derive(Clone, Debug)]
pub(crate) enum Origin {
    /// A rollout file, read up to `read_to` bytes (the end of its last whole line).
    File { path: PathBuf, read_to: u64 },
    /// Database rows; the next unread one has this sequence number.
    Database { next_seq: i64 },
}

/// A stored thread's turns without its records parsed: see the module docs.
#[derive(Clone, Debug)]
pub struct ThreadOutline {
    id: ThreadId,
    /// The raw record lines after the `session_meta`, back to back.
    text: Vec<u8>,
    /// Each record's bytes in `text`.
    lines: Vec<Range<usize>>,
    marks: Vec<Mark>,
    turns: Vec<TurnSpan>,
    warnings: Vec<String>,
    pub(crate) origin: Origin,
    /// How records are named in warnings (a file path, or `database/thread`).
    shown: String,
}

impl ThreadOutline {
    pub(crate) fn new(id: ThreadId, origin: Origin, shown: String) -> Self {
        ThreadOutline {
            id,
            text: Vec::new(),
            lines: Vec::new(),
            marks: Vec::new(),
            turns: Vec::new(),
            warnings: Vec::new(),
            origin,
            shown,
        }
    }

    /// The thread this outlines.
    pub fn thread_id(&self) -> ThreadId {
        self.id
    }

    /// The turns, oldest first (the same turns as [`crate::LoadedThread::turns`]).
    pub fn turns(&self) -> &[TurnSpan] {
        &self.turns
    }

    /// How many records follow the `session_meta` (readable or not).
    pub fn record_count(&self) -> usize {
        self.lines.len()
    }

    /// One message per line that is not a record (corrupt, not UTF-8).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The records of `lines` (e.g. a [`TurnSpan::lines`]), parsed, in order. Lines that are
    /// not records of this version, and `session_meta` records, are left out.
    pub fn records(&self, lines: Range<usize>) -> Vec<RolloutItem> {
        let end = lines.end.min(self.lines.len());
        let start = lines.start.min(end);
        (start..end)
            .filter(|&n| self.marks[n] != Mark::Ignored)
            .filter_map(|n| {
                let raw = self.text.get(self.lines[n].clone())?;
                let parsed = std::str::from_utf8(raw)
                    .map_err(|e| format!("not UTF-8 ({e})"))
                    .and_then(|s| RolloutLine::parse(s).map_err(|e| e.to_string()));
                match parsed {
                    Ok(RolloutLine {
                        item: RolloutItem::SessionMeta(_),
                        ..
                    }) => None,
                    Ok(line) => Some(line.item),
                    Err(e) => {
                        crate::notice!("{} record {}: {e}; skipped", self.shown, n + 1);
                        None
                    }
                }
            })
            .collect()
    }

    /// The turn `span` with its records parsed.
    pub fn stored_turn(&self, span: &TurnSpan) -> StoredTurn {
        span.with_items(self.records(span.lines.clone()))
    }

    /// The last `turn_parked` record of turn `span` (only that record is parsed): what the
    /// turn waits for when it is [`TurnStatus::Parked`], what it waited for otherwise.
    pub fn park_record(&self, span: &TurnSpan) -> Option<crate::types::parked::TurnParkedItem> {
        let n = self.last_mark(
            span,
            |m| matches!(m, Mark::Parked { turn_id } if *turn_id == span.id),
        )?;
        match self.records(n..n + 1).pop()? {
            RolloutItem::TurnParked(p) => Some(p),
            _ => None,
        }
    }

    /// The last `turn_unparked` record of turn `span`: how its last park ended.
    pub fn unpark_record(&self, span: &TurnSpan) -> Option<crate::types::parked::TurnUnparkedItem> {
        let n = self.last_mark(
            span,
            |m| matches!(m, Mark::Unparked { turn_id } if *turn_id == span.id),
        )?;
        match self.records(n..n + 1).pop()? {
            RolloutItem::TurnUnparked(u) => Some(u),
            _ => None,
        }
    }

    /// The line of the last record of `span` whose mark passes `wanted`.
    fn last_mark(&self, span: &TurnSpan, wanted: impl Fn(&Mark) -> bool) -> Option<usize> {
        let end = span.lines.end.min(self.marks.len());
        let start = span.lines.start.min(end);
        (start..end).rev().find(|&n| wanted(&self.marks[n]))
    }

    /// Adds one raw record line (without its `\n`) and its mark. `Err` leaves the line out
    /// of every turn and records a warning. Turns are recomputed by [`Self::finish`].
    pub(crate) fn push_line(&mut self, raw: &[u8]) {
        let start = self.text.len();
        self.text.extend_from_slice(raw);
        let mark = match std::str::from_utf8(raw) {
            Ok(s) => Mark::of_line(s).map_err(|e| format!("not a rollout record ({e})")),
            Err(e) => Err(format!("not UTF-8 ({e})")),
        };
        let mark = mark.unwrap_or_else(|reason| {
            let w = format!(
                "{} record {}: {reason}; skipped",
                self.shown,
                self.lines.len() + 1
            );
            crate::notice!("{w}");
            self.warnings.push(w);
            Mark::Ignored
        });
        self.lines.push(start..self.text.len());
        self.marks.push(mark);
    }

    /// Recomputes the turns after lines were added (cheap: marks only, nothing is parsed).
    pub(crate) fn finish(&mut self) {
        self.turns = turn_spans(&self.marks);
    }

    /// Adds the whole lines of `bytes` (a rollout's content from some offset on). Returns
    /// how many bytes were consumed: a last line without `\n` that is not a whole record
    /// yet (a writer mid-line) is left for the next read.
    pub(crate) fn push_lines(&mut self, bytes: &[u8]) -> usize {
        let mut offset = 0;
        while offset < bytes.len() {
            let rest = &bytes[offset..];
            let (raw, next) = match rest.iter().position(|b| *b == b'\n') {
                Some(i) => (&rest[..i], offset + i + 1),
                None => {
                    // Unterminated: take it only if it already reads as a record.
                    let whole = std::str::from_utf8(rest)
                        .ok()
                        .is_some_and(|s| Mark::of_line(s).is_ok());
                    if !whole {
                        break;
                    }
                    (rest, bytes.len())
                }
            };
            if !raw.iter().all(u8::is_ascii_whitespace) {
                self.push_line(raw);
            }
            offset = next;
        }
        offset
    }
}

/// Checks that `first` (a thread's first record) is the `session_meta` of thread `id`.
pub(crate) fn check_first_line(
    id: &ThreadId,
    first: &[u8],
    shown: &str,
) -> Result<(), crate::error::StoreError> {
    let corrupt = |reason: String| crate::error::StoreError::Corrupt {
        path: PathBuf::from(shown),
        reason,
    };
    let text = std::str::from_utf8(first).map_err(|e| corrupt(format!("first line: {e}")))?;
    match RolloutLine::parse(text) {
        Ok(RolloutLine {
            item: RolloutItem::SessionMeta(meta),
            ..
        }) if meta.id == *id => Ok(()),
        Ok(RolloutLine {
            item: RolloutItem::SessionMeta(meta),
            ..
        }) => Err(corrupt(format!(
            "its session_meta names thread {} instead of {id}",
            meta.id
        ))),
        _ => Err(corrupt(
            "it has no readable session_meta record at its start; it was not written by this \
             program, or its first line is damaged"
                .into(),
        )),
    }
}

/// The outline of the rollout file `path` of thread `id`.
pub(crate) fn read_file(
    id: &ThreadId,
    path: &std::path::Path,
) -> Result<ThreadOutline, crate::error::StoreError> {
    let bytes = crate::files::read(path).map_err(|e| crate::error::StoreError::io(path, e))?;
    let shown = path.display().to_string();
    let first_end = bytes
        .iter()
        .position(|b| *b == b'\n')
        .unwrap_or(bytes.len());
    check_first_line(id, &bytes[..first_end], &shown)?;
    let body_start = (first_end + 1).min(bytes.len());
    let mut outline = ThreadOutline::new(
        *id,
        Origin::File {
            path: path.to_path_buf(),
            read_to: 0,
        },
        shown,
    );
    let consumed = outline.push_lines(&bytes[body_start..]);
    outline.origin = Origin::File {
        path: path.to_path_buf(),
        read_to: (body_start + consumed) as u64,
    };
    outline.finish();
    Ok(outline)
}

/// `outline` (of a rollout file) with the lines appended since it was read; `None` when the
/// file has not grown. A file that shrank (a torn last line cut off on resume) is read
/// again whole.
pub(crate) fn update_file(
    outline: &ThreadOutline,
) -> Result<Option<ThreadOutline>, crate::error::StoreError> {
    use std::io::{Read, Seek, SeekFrom};
    let Origin::File { path, read_to } = &outline.origin else {
        return Ok(None);
    };
    let io = |e| crate::error::StoreError::io(path, e);
    let mut file = crate::files::open_read(path).map_err(io)?;
    let len = file.metadata().map_err(io)?.len();
    if len == *read_to {
        return Ok(None);
    }
    if len < *read_to {
        return read_file(&outline.id, path).map(Some);
    }
    file.seek(SeekFrom::Start(*read_to)).map_err(io)?;
    let mut fresh = Vec::new();
    file.take(len - read_to)
        .read_to_end(&mut fresh)
        .map_err(io)?;
    let mut next = outline.clone();
    let consumed = next.push_lines(&fresh);
    if consumed == 0 {
        return Ok(None);
    }
    next.origin = Origin::File {
        path: path.clone(),
        read_to: read_to + consumed as u64,
    };
    next.finish();
    Ok(Some(next))
}
