//! `thread/turns/list` and `thread/items/list`: a stored thread's history, page by page,
//! in either direction.
//!
//! Cursors are the id of the entry a page starts at (a turn id, an item id), so they stay
//! valid while the thread grows. `nextCursor` continues in the same direction;
//! `backwardsCursor` is the page's first entry, to walk back with the opposite
//! `sortDirection` (that entry is included again, so a client sees its latest state).

use crate::core_error;
use crate::protocol::methods as m;
use crate::protocol::wire::{
    SortDirection, ThreadItem, ThreadItemEntry, ThreadItemsListParams, ThreadItemsListResponse,
    ThreadTurnsListParams, ThreadTurnsListResponse, Turn, TurnItemsView,
};
use crate::threads::{merge_leading_input, summary_of, turn_json};
use crate::{Conn, invalid, lock, method, parse_thread_id, thread_not_found};
use oi_core::{StoredTurn, ThreadOutline, TurnSpan};
use oi_jsonrpc::{Execution, MethodTable, RequestContext, RpcError};
use oi_protocol::ThreadId;
use std::sync::Arc;
use std::sync::Mutex;

pub(crate) fn register(t: &mut MethodTable, conn: &Arc<Conn>) {
    method::<m::ThreadTurnsList, _, _>(t, conn, Execution::Spawn, turns_list);
    method::<m::ThreadItemsList, _, _>(t, conn, Execution::Spawn, items_list);
}

/// One page: the entries and both cursors.
#[derive(Debug, PartialEq)]
pub(crate) struct Page<T> {
    pub data: Vec<T>,
    pub next_cursor: Option<String>,
    pub backwards_cursor: Option<String>,
}

/// Pages `all` (oldest first) from the entry whose id is `cursor` (default: the first in
/// `dir`), at most `limit` entries (default: all).
pub(crate) fn paginate<'a, T: Clone>(
    all: &'a [T],
    id_of: impl Fn(&'a T) -> &'a str,
    cursor: Option<&str>,
    limit: Option<u32>,
    dir: SortDirection,
) -> Result<Page<T>, RpcError> {
    if all.is_empty() {
        return Ok(Page {
            data: Vec::new(),
            next_cursor: None,
            backwards_cursor: None,
        });
    }
    let start = match cursor {
        None => match dir {
            SortDirection::Asc => 0,
            SortDirection::Desc => all.len() - 1,
        },
        Some(c) => all.iter().position(|e| id_of(e) == c).ok_or_else(|| {
            invalid(format!(
                "invalid cursor `{c}`: it names no entry of this thread; pass back a nextCursor or backwardsCursor from a previous page"
            ))
        })?,
    };
    let limit = limit.map_or(all.len(), |l| (l as usize).max(1));
    let (data, next): (Vec<T>, Option<usize>) = match dir {
        SortDirection::Asc => {
            let end = (start + limit).min(all.len());
            (all[start..end].to_vec(), (end < all.len()).then_some(end))
        }
        SortDirection::Desc => {
            let first = (start + 1).saturating_sub(limit);
            let data = all[first..=start].iter().rev().cloned().collect();
            (data, first.checked_sub(1))
        }
    };
    Ok(Page {
        data,
        next_cursor: next.map(|i| id_of(&all[i]).to_string()),
        backwards_cursor: Some(id_of(&all[start]).to_string()),
    })
}

/// The outline of the last thread paged: clients page through one thread at a time, so the
/// next page reuses it, brought up to date with only the records appended since (a thread
/// being written while it is read shows its new turns on the next page).
#[derive(Default)]
pub(crate) struct HistoryCache {
    last: Mutex<Option<Arc<History>>>,
}

/// A stored thread's turns as history pages show them (each user message back in the turn
/// it opened), over an outline whose records are parsed only for the turns a page shows.
struct History {
    outline: Option<Arc<ThreadOutline>>,
    turns: Vec<TurnSpan>,
}

impl History {
    fn of(outline: ThreadOutline) -> History {
        History {
            turns: merge_leading_input(outline.turns().to_vec()),
            outline: Some(Arc::new(outline)),
        }
    }

    fn stored_turn(&self, span: &TurnSpan) -> StoredTurn {
        match &self.outline {
            Some(o) => o.stored_turn(span),
            None => span.with_items(Vec::new()),
        }
    }
}

/// The history of a thread (empty for an ephemeral thread: nothing of it is stored).
async fn history(conn: &Arc<Conn>, raw_id: &str) -> Result<(ThreadId, Arc<History>), RpcError> {
    let id = parse_thread_id(raw_id)?;
    if conn.ephemeral_info(&id).is_some() {
        let empty = History {
            outline: None,
            turns: Vec::new(),
        };
        return Ok((id, Arc::new(empty)));
    }
    summary_of(conn, id)
        .await?
        .ok_or_else(|| thread_not_found(id))?;
    let cached = lock(&conn.history.last)
        .as_ref()
        .filter(|h| h.outline.as_ref().is_some_and(|o| o.thread_id() == id))
        .cloned();
    let stored = conn.stored_threads().await?;
    let fresh = match cached {
        Some(h) => {
            // The outline is shared, not copied: an update reads only appended records.
            let updated = match &h.outline {
                Some(outline) => stored.outline_update(outline).await.map_err(core_error)?,
                None => None,
            };
            match updated {
                None => return Ok((id, h)),
                Some(o) => Arc::new(History::of(o)),
            }
        }
        None => {
            let outline = stored.outline(&id).await.map_err(core_error)?;
            Arc::new(History::of(outline))
        }
    };
    *lock(&conn.history.last) = Some(fresh.clone());
    Ok((id, fresh))
}

fn wire_turn(thread_id: &str, t: &StoredTurn) -> Turn {
    turn_json(thread_id, t)
}

/// The user's input and the final agent message: what a turn list shows by default.
pub(crate) fn summary_items(items: Vec<ThreadItem>) -> Vec<ThreadItem> {
    let last_agent = items
        .iter()
        .rposition(|i| matches!(i, ThreadItem::AgentMessage { .. }));
    items
        .into_iter()
        .enumerate()
        .filter(|(n, i)| matches!(i, ThreadItem::UserMessage { .. }) || Some(*n) == last_agent)
        .map(|(_, i)| i)
        .collect()
}

async fn turns_list(
    conn: Arc<Conn>,
    _ctx: RequestContext,
    p: ThreadTurnsListParams,
) -> Result<ThreadTurnsListResponse, RpcError> {
    let (id, history) = history(&conn, &p.thread_id).await?;
    let turns = &history.turns;
    let tid = id.to_string();
    let dir = p.sort_direction.unwrap_or(SortDirection::Desc);
    let indexes: Vec<usize> = (0..turns.len()).collect();
    let page = paginate(
        &indexes,
        |i| turns[*i].id.as_str(),
        p.cursor.as_deref(),
        p.limit,
        dir,
    )?;
    let view = p.items_view.unwrap_or(TurnItemsView::Summary);
    let data = page
        .data
        .into_iter()
        .map(|i| {
            let mut t = wire_turn(&tid, &history.stored_turn(&turns[i]));
            t.items = match view {
                TurnItemsView::Full => t.items,
                TurnItemsView::Summary => summary_items(t.items),
                TurnItemsView::NotLoaded => Vec::new(),
            };
            t.items_view = Some(view);
            Ok(t)
        })
        .collect::<Result<Vec<_>, RpcError>>()?;
    Ok(ThreadTurnsListResponse {
        data,
        next_cursor: page.next_cursor,
        backwards_cursor: page.backwards_cursor,
    })
}

async fn items_list(
    conn: Arc<Conn>,
    _ctx: RequestContext,
    p: ThreadItemsListParams,
) -> Result<ThreadItemsListResponse, RpcError> {
    let (id, history) = history(&conn, &p.thread_id).await?;
    let turns = &history.turns;
    if let Some(turn_id) = &p.turn_id
        && !turns.iter().any(|t| &t.id == turn_id)
    {
        return Err(invalid(format!(
            "turn `{turn_id}` is not part of thread {id}; list its turns with thread/turns/list"
        )));
    }
    let tid = id.to_string();
    let turns: Vec<&TurnSpan> = turns
        .iter()
        .filter(|t| p.turn_id.as_ref().is_none_or(|want| &t.id == want))
        .collect();
    let entries = item_window(&tid, &history, &turns, &p)?;
    let dir = p.sort_direction.unwrap_or(SortDirection::Asc);
    let keys: Vec<String> = entries.iter().map(item_cursor).collect();
    let indexes: Vec<usize> = (0..entries.len()).collect();
    let page = paginate(
        &indexes,
        |i| keys[*i].as_str(),
        p.cursor.as_deref(),
        p.limit,
        dir,
    )?;
    Ok(ThreadItemsListResponse {
        data: page.data.into_iter().map(|i| entries[i].clone()).collect(),
        next_cursor: page.next_cursor,
        backwards_cursor: page.backwards_cursor,
    })
}

/// An item's cursor: `<turn id>:<item id>` (item ids alone, e.g. tool call ids, do not say
/// which turn holds them).
fn item_cursor(e: &ThreadItemEntry) -> String {
    format!("{}:{}", e.turn_id, e.item.id())
}

/// The item entries a page can draw from, converting as few turns as possible: turns are
/// taken in the page's direction from the one holding the cursor until enough items are
/// collected past it, plus one turn more so `nextCursor` is known.
fn item_window(
    thread_id: &str,
    history: &History,
    turns: &[&TurnSpan],
    p: &ThreadItemsListParams,
) -> Result<Vec<ThreadItemEntry>, RpcError> {
    let dir = p.sort_direction.unwrap_or(SortDirection::Asc);
    let order: Vec<usize> = match dir {
        SortDirection::Asc => (0..turns.len()).collect(),
        SortDirection::Desc => (0..turns.len()).rev().collect(),
    };
    let start = match p.cursor.as_deref() {
        Some(c) => order
            .iter()
            .position(|&i| {
                c.split_once(':')
                    .is_some_and(|(turn, _)| turn == turns[i].id)
            })
            .ok_or_else(|| {
                invalid(format!(
                    "invalid cursor `{c}`: it names no entry of this thread; pass back a nextCursor or backwardsCursor from a previous page"
                ))
            })?,
        None => 0,
    };
    let want = p
        .limit
        .map_or(usize::MAX, |l| (l as usize).max(1))
        .saturating_add(1);
    let mut window: Vec<(usize, Vec<ThreadItemEntry>)> = Vec::new();
    // Items counted from the cursor's turn on; that turn may hold items before the cursor,
    // so it does not count towards the page.
    let mut after_cursor = 0usize;
    let mut first_turn = None;
    for &i in &order[start..] {
        let t = wire_turn(thread_id, &history.stored_turn(turns[i]));
        let entries: Vec<ThreadItemEntry> = t
            .items
            .into_iter()
            .map(|item| ThreadItemEntry {
                turn_id: t.id.clone(),
                item,
            })
            .collect();
        match first_turn {
            None => first_turn = Some(entries.len()),
            Some(_) => after_cursor += entries.len(),
        }
        window.push((i, entries));
        if after_cursor >= want {
            break;
        }
    }
    window.sort_by_key(|(i, _)| *i);
    Ok(window.into_iter().flat_map(|(_, e)| e).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids<'a>(p: &Page<&'a str>) -> Vec<&'a str> {
        p.data.clone()
    }

    #[test]
    fn pages_walk_both_ways_and_cursors_round_trip() {
        let all = ["t1", "t2", "t3", "t4", "t5"];
        fn id<'a>(s: &&'a str) -> &'a str {
            s
        }
        let p = paginate(&all, id, None, Some(2), SortDirection::Desc).unwrap();
        assert_eq!(ids(&p), ["t5", "t4"]);
        assert_eq!(p.next_cursor.as_deref(), Some("t3"));
        assert_eq!(p.backwards_cursor.as_deref(), Some("t5"));
        let p2 = paginate(
            &all,
            id,
            p.next_cursor.as_deref(),
            Some(2),
            SortDirection::Desc,
        )
        .unwrap();
        assert_eq!(ids(&p2), ["t3", "t2"]);
        let p3 = paginate(
            &all,
            id,
            p2.next_cursor.as_deref(),
            Some(2),
            SortDirection::Desc,
        )
        .unwrap();
        assert_eq!(ids(&p3), ["t1"]);
        assert_eq!(p3.next_cursor, None);
        // Reversing from a page's backwards cursor includes its anchor again.
        let back = paginate(
            &all,
            id,
            p2.backwards_cursor.as_deref(),
            Some(10),
            SortDirection::Asc,
        )
        .unwrap();
        assert_eq!(ids(&back), ["t3", "t4", "t5"]);
        assert_eq!(back.next_cursor, None);
        let e = paginate(&all, id, Some("nope"), None, SortDirection::Asc).unwrap_err();
        assert!(e.message.contains("invalid cursor `nope`"), "{}", e.message);
        let empty: Vec<&str> = Vec::new();
        let p = paginate(&empty, id, None, None, SortDirection::Asc).unwrap();
        assert!(p.data.is_empty() && p.next_cursor.is_none() && p.backwards_cursor.is_none());
    }

    #[test]
    fn summary_keeps_input_and_the_final_answer() {
        let agent = |id: &str| ThreadItem::AgentMessage {
            id: id.into(),
            text: String::new(),
            phase: None,
        };
        let items = vec![
            ThreadItem::UserMessage {
                id: "1".into(),
                content: Vec::new(),
            },
            agent("2"),
            ThreadItem::ContextCompaction { id: "3".into() },
            agent("4"),
        ];
        let ids: Vec<String> = summary_items(items)
            .iter()
            .map(|i| i.id().to_string())
            .collect();
        assert_eq!(ids, ["1", "4"]);
    }
}
