//! `$HOME/session_index.jsonl`: the durable record of thread names and archive flags.
//!
//! These are the only thread attributes that do not live in the rollout file, so they are
//! logged here (append-only, one JSON line per change, the newest line wins) and an index
//! rebuild replays them. Lines: `{"id","thread_name":string|null,"updated_at"}` (the
//! reference's shape for names; `null` clears) and `{"id","archived":bool,"updated_at"}`.

use crate::error::StoreError;
use crate::record::format_timestamp;
use oi_protocol::ThreadId;
use serde_json::{Map, Value};
use std::collections::HashMap;
use std::fs::OpenOptions;
use std::io::Write;
use std::path::Path;

/// The latest logged attributes of one thread. `None` = never set.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct SidecarEntry {
    pub name: Option<Option<String>>,
    pub archived: Option<bool>,
}

#[derive(Clone, Debug, Default)]
pub(crate) struct SidecarState {
    entries: HashMap<ThreadId, SidecarEntry>,
}

impl SidecarState {
    pub(crate) fn get(&self, id: &ThreadId) -> Option<&SidecarEntry> {
        self.entries.get(id)
    }

    pub(crate) fn ids(&self) -> impl Iterator<Item = &ThreadId> {
        self.entries.keys()
    }
}

/// Reads the log; a missing file is an empty log, unreadable lines are skipped with a warning.
pub(crate) fn read(path: &Path) -> Result<SidecarState, StoreError> {
    let text = match crate::files::read(path) {
        Ok(bytes) => String::from_utf8_lossy(&bytes).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(SidecarState::default()),
        Err(e) => return Err(StoreError::io(path, e)),
    };
    let mut state = SidecarState::default();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let parsed = serde_json::from_str::<Map<String, Value>>(line)
            .ok()
            .and_then(|obj| {
                let id: ThreadId = obj.get("id")?.as_str()?.parse().ok()?;
                Some((id, obj))
            });
        let Some((id, obj)) = parsed else {
            crate::notice!(
                "{} line {}: not a thread index entry; skipped",
                path.display(),
                n + 1
            );
            continue;
        };
        let entry = state.entries.entry(id).or_default();
        match obj.get("thread_name") {
            Some(Value::String(s)) => entry.name = Some(Some(s.clone())),
            Some(Value::Null) => entry.name = Some(None),
            _ => {}
        }
        if let Some(Value::Bool(b)) = obj.get("archived") {
            entry.archived = Some(*b);
        }
    }
    Ok(state)
}

fn append(path: &Path, mut obj: Map<String, Value>, id: &ThreadId) -> Result<(), StoreError> {
    obj.insert("id".into(), Value::String(id.to_string()));
    obj.insert(
        "updated_at".into(),
        Value::String(format_timestamp(chrono::Utc::now())),
    );
    let mut line = Value::Object(obj).to_string();
    line.push('\n');
    let mut file = crate::private::open(OpenOptions::new().create(true).append(true), path)
        .map_err(|e| StoreError::io(path, e))?;
    // One write of a whole line, like the rollouts: concurrent appenders never interleave.
    file.write_all(line.as_bytes())
        .and_then(|()| file.sync_data())
        .map_err(|e| StoreError::io(path, e))
}

pub(crate) fn append_name(
    path: &Path,
    id: &ThreadId,
    name: Option<&str>,
) -> Result<(), StoreError> {
    let mut obj = Map::new();
    obj.insert(
        "thread_name".into(),
        name.map_or(Value::Null, |n| Value::String(n.to_string())),
    );
    append(path, obj, id)
}

pub(crate) fn append_archived(
    path: &Path,
    id: &ThreadId,
    archived: bool,
) -> Result<(), StoreError> {
    let mut obj = Map::new();
    obj.insert("archived".into(), Value::Bool(archived));
    append(path, obj, id)
}
