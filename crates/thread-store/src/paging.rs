//! List paging both backends share: the keyset cursor a page hands out, and the escaping of
//! a search term inside a `LIKE` pattern (the same `\` escape in SQLite and PostgreSQL).

use crate::error::StoreError;
use crate::types::{ListQuery, SortKey};
use oi_protocol::ThreadId;

/// `term` with `LIKE`'s wildcards (`%`, `_`) and the escape character itself escaped by `\`.
pub(crate) fn escape_like(term: &str) -> String {
    let mut out = String::with_capacity(term.len());
    for c in term.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// A keyset position: the sort value and id of the last row of a page. Encoded as
/// `<c|u><a|d>:<ms>:<id>` so a cursor is only accepted with the sort it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cursor {
    pub(crate) value: i64,
    pub(crate) id: String,
}

impl Cursor {
    fn tag(q: &ListQuery) -> &'static str {
        match (q.sort_key, q.descending) {
            (SortKey::CreatedAt, true) => "cd",
            (SortKey::CreatedAt, false) => "ca",
            (SortKey::UpdatedAt, true) => "ud",
            (SortKey::UpdatedAt, false) => "ua",
        }
    }

    pub(crate) fn encode(&self, q: &ListQuery) -> String {
        format!("{}:{}:{}", Self::tag(q), self.value, self.id)
    }

    pub(crate) fn parse(q: &ListQuery) -> Result<Option<Cursor>, StoreError> {
        let Some(raw) = q.cursor.as_deref() else {
            return Ok(None);
        };
        let bad = || StoreError::BadCursor(raw.to_string());
        let mut parts = raw.splitn(3, ':');
        let (Some(tag), Some(value), Some(id)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(bad());
        };
        if tag != Self::tag(q) || id.parse::<ThreadId>().is_err() {
            return Err(bad());
        }
        let value = value.parse::<i64>().map_err(|_| bad())?;
        Ok(Some(Cursor {
            value,
            id: id.to_string(),
        }))
    }
}
