//! `thread/start|resume|fork|read|list`, `thread/loaded/list`, `thread/archive|unarchive`,
//! `thread/name/set`.
//!
//! Persisted threads live in the `ThreadManager` shared with the MCP tools (so
//! `codex-reply` can continue a v2 thread and vice versa); `ephemeral: true` threads live
//! in a second manager that writes nothing.

use crate::convert::{ephemeral_thread, now_unix, session_response, thread_from_summary};
use crate::core_error;
use crate::items::Note;
use crate::protocol::ThreadOverrides;
use crate::protocol::methods::{self as m, WireMethod};
use crate::protocol::thread::{
    OneOrMany, ThreadForkParams, ThreadListParams, ThreadLoadedListParams, ThreadReadParams,
    ThreadResumeParams, ThreadSetNameParams, ThreadStartParams,
};
use crate::protocol::wire::{
    ConfigWarningNotification, EmptyResponse, Thread as WireThread, ThreadIdNotification,
    ThreadIdParams, ThreadListResponse, ThreadLoadedListResponse, ThreadNameUpdatedNotification,
    ThreadReadResponse, ThreadSessionResponse, ThreadStartedNotification, ThreadStatus,
    ThreadTokenUsageUpdatedNotification, ThreadUnarchiveResponse, Turn,
    TurnStatus as WireTurnStatus,
};
use crate::{Conn, EphemeralInfo, internal, invalid, method, parse_thread_id, thread_not_found};
use oi_core::{
    ListQuery, LoadedThread, NewThread, RolloutItem, SessionSource, SortKey, StoredTurn, Thread,
    ThreadSummary, TurnSpan, TurnStatus,
};
use oi_jsonrpc::RpcError;
use oi_jsonrpc::{Execution, MethodTable, RequestContext};
use oi_protocol::ThreadId;
use oi_protocol::protocol::EventMsg;
use std::sync::Arc;

pub(crate) fn register(t: &mut MethodTable, conn: &Arc<Conn>) {
    method::<m::ThreadStart, _, _>(t, conn, Execution::Spawn, start);
    method::<m::ThreadResume, _, _>(t, conn, Execution::Spawn, resume);
    method::<m::ThreadFork, _, _>(t, conn, Execution::Spawn, fork);
    method::<m::ThreadRead, _, _>(t, conn, Execution::Spawn, read);
    method::<m::ThreadList, _, _>(t, conn, Execution::Spawn, list);
    method::<m::ThreadLoadedList, _, _>(t, conn, Execution::Inline, loaded_list);
    method::<m::ThreadArchive, _, _>(t, conn, Execution::Spawn, archive);
    method::<m::ThreadUnarchive, _, _>(t, conn, Execution::Spawn, unarchive);
    method::<m::ThreadNameSet, _, _>(t, conn, Execution::Spawn, set_name);
}

fn live_status(thread: &Thread) -> ThreadStatus {
    if thread.is_busy() {
        ThreadStatus::active()
    } else {
        ThreadStatus::Idle
    }
}

/// The `Thread` object of a live thread (persisted or ephemeral).
async fn live_thread_json(conn: &Arc<Conn>, thread: &Arc<Thread>) -> Result<WireThread, RpcError> {
    let id = thread.id();
    if let Some(info) = conn.ephemeral_info(&id) {
        return Ok(ephemeral_thread(
            id,
            info.forked_from,
            &thread.settings(),
            info.created_at,
            live_status(thread),
        ));
    }
    let stored = conn.stored_threads().await?;
    let summary = stored.get(&id).await.map_err(core_error)?;
    match summary {
        Some(s) => Ok(thread_from_summary(&s, live_status(thread))),
        None => Err(internal(format!(
            "thread {id} is running but missing from the thread index; run `interpreter sessions list` to rebuild it"
        ))),
    }
}

/// Warnings from loading the config, to send after the response as `configWarning`.
fn warning_notes(warnings: &[String]) -> Vec<Note> {
    warnings
        .iter()
        .map(|w| {
            let note = ConfigWarningNotification { summary: w.clone() };
            Note::of::<m::ConfigWarning>(&note)
        })
        .collect()
}

async fn start(
    conn: Arc<Conn>,
    ctx: RequestContext,
    p: ThreadStartParams,
) -> Result<ThreadSessionResponse, RpcError> {
    let loaded = conn.load_session_config(&p.overrides).await?;
    let ephemeral = p.ephemeral.unwrap_or(false);
    let manager = if ephemeral {
        &conn.ephemeral
    } else {
        &conn.manager
    };
    let new: NewThread = manager
        .start_thread(loaded.config.clone())
        .await
        .map_err(core_error)?;
    if ephemeral {
        conn.mark_ephemeral(
            new.thread_id,
            EphemeralInfo {
                created_at: now_unix(),
                forked_from: None,
            },
        );
    } else {
        conn.hold(new.thread_id);
    }
    let thread = live_thread_json(&conn, &new.thread).await?;
    let mut notes = warning_notes(&loaded.warnings);
    let started = ThreadStartedNotification {
        thread: thread.clone(),
    };
    notes.push(Note::of::<m::ThreadStarted>(&started));
    conn.notify_after_response(&ctx, notes);
    Ok(session_response(thread, &new.thread.settings()))
}

/// The stored thread's model and cwd, unless the caller picked their own.
fn reuse_stored(o: &ThreadOverrides, s: &ThreadSummary) -> ThreadOverrides {
    let mut o = o.clone();
    if !o.picks_model() && !s.model.is_empty() {
        o.model = Some(s.model.clone());
        o.model_provider = Some(s.model_provider.clone());
    }
    if o.cwd.is_none() && s.cwd.is_dir() {
        o.cwd = Some(s.cwd.clone());
    }
    o
}

/// Loads config for continuing `s`; if its stored provider/model no longer load (e.g. the
/// provider was removed from config.toml), falls back to the configured ones.
async fn config_for_stored(
    conn: &Conn,
    o: &ThreadOverrides,
    s: &ThreadSummary,
) -> Result<oi_config::LoadedConfig, RpcError> {
    match conn.load_session_config(&reuse_stored(o, s)).await {
        Ok(l) => Ok(l),
        Err(_) if !o.picks_model() => conn.load_session_config(o).await,
        Err(e) => Err(e),
    }
}

pub(crate) async fn summary_of(
    conn: &Arc<Conn>,
    id: ThreadId,
) -> Result<Option<ThreadSummary>, RpcError> {
    let stored = conn.stored_threads().await?;
    stored.get(&id).await.map_err(core_error)
}

pub(crate) async fn load_stored(conn: &Arc<Conn>, id: ThreadId) -> Result<LoadedThread, RpcError> {
    let stored = conn.stored_threads().await?;
    stored.load(&id).await.map_err(core_error)
}

/// The turns of a stored thread, as v2 `Turn`s with their items.
pub(crate) fn stored_turns(thread_id: ThreadId, loaded: &LoadedThread) -> Vec<Turn> {
    let tid = thread_id.to_string();
    turn_list(loaded)
        .iter()
        .map(|t| turn_json(&tid, t))
        .collect()
}

/// A stored thread's turns, oldest first (each user message back in the turn it opened).
pub(crate) fn turn_list(loaded: &LoadedThread) -> Vec<StoredTurn> {
    merge_leading_input(loaded.turn_spans())
        .iter()
        .map(|span| loaded.stored_turn(span))
        .collect()
}

/// One stored turn as a v2 `Turn` with its items.
pub(crate) fn turn_json(thread_id: &str, t: &StoredTurn) -> Turn {
    let (items, error) = crate::items::stored_turn_items(thread_id, t);
    let status = match t.status {
        TurnStatus::Completed => WireTurnStatus::Completed,
        TurnStatus::Interrupted => WireTurnStatus::Interrupted,
        TurnStatus::Failed => WireTurnStatus::Failed,
        // v2 has no parked turns: one waiting for approval is still in progress.
        TurnStatus::InProgress | TurnStatus::Parked => WireTurnStatus::InProgress,
    };
    Turn {
        id: t.id.clone(),
        items,
        items_view: None,
        status,
        error: if t.status == TurnStatus::Failed {
            error
        } else {
            None
        },
        started_at: t.started_at,
        completed_at: t.completed_at,
        duration_ms: t.duration_ms,
    }
}

/// The engine records a turn's `user_message` just before its `task_started`; the store
/// reads such a message as an implicit turn of its own, cut short by the real one. Put the
/// message back at the front of the turn it opened.
pub(crate) fn merge_leading_input(turns: Vec<TurnSpan>) -> Vec<TurnSpan> {
    let mut out: Vec<TurnSpan> = Vec::with_capacity(turns.len());
    let mut carry: Option<TurnSpan> = None;
    for mut t in turns {
        if let Some(lead) = carry.take() {
            if t.opened_by_task_started {
                t.lines.start = lead.lines.start;
                t.started_at = t.started_at.or(lead.started_at);
            } else {
                out.push(lead);
            }
        }
        if !t.opened_by_task_started && t.status == TurnStatus::Interrupted {
            carry = Some(t);
        } else {
            out.push(t);
        }
    }
    out.extend(carry);
    out
}

/// The last recorded token usage, for `thread/tokenUsage/updated` after a resume.
fn last_usage(thread_id: ThreadId, loaded: &LoadedThread) -> Option<Note> {
    let turn_id = loaded.turn_spans().pop().map(|t| t.id)?;
    loaded.items.iter().rev().find_map(|i| match i {
        RolloutItem::EventMsg(EventMsg::TokenCount(t)) => t.info.as_ref().map(|info| {
            Note::of::<m::ThreadTokenUsageUpdated>(&ThreadTokenUsageUpdatedNotification {
                thread_id: thread_id.to_string(),
                turn_id: turn_id.clone(),
                token_usage: info.into(),
            })
        }),
        _ => None,
    })
}

async fn resume(
    conn: Arc<Conn>,
    ctx: RequestContext,
    p: ThreadResumeParams,
) -> Result<ThreadSessionResponse, RpcError> {
    let id = parse_thread_id(&p.thread_id)?;
    // Already running here (started by this API, the MCP tools or an earlier resume).
    if let Some(thread) = conn.live_thread(&id) {
        let mut thread_json = live_thread_json(&conn, &thread).await?;
        if !p.exclude_turns && conn.ephemeral_info(&id).is_none() {
            let loaded = load_stored(&conn, id).await?;
            thread_json.turns = stored_turns(id, &loaded);
        }
        if conn.ephemeral_info(&id).is_none() {
            conn.hold(id);
        }
        crate::turns::follow_running_turn(&conn, &ctx, thread.clone());
        return Ok(session_response(thread_json, &thread.settings()));
    }
    let summary = summary_of(&conn, id)
        .await?
        .ok_or_else(|| thread_not_found(id))?;
    let loaded_config = config_for_stored(&conn, &p.overrides, &summary).await?;
    let new = conn
        .manager
        .resume_thread(id, loaded_config.config)
        .await
        .map_err(core_error)?;
    conn.hold(id);
    let mut thread_json = live_thread_json(&conn, &new.thread).await?;
    let loaded = load_stored(&conn, id).await?;
    if !p.exclude_turns {
        thread_json.turns = stored_turns(id, &loaded);
    }
    let mut notes = warning_notes(&loaded_config.warnings);
    if let Some(usage) = last_usage(id, &loaded) {
        notes.push(usage);
    }
    conn.notify_after_response(&ctx, notes);
    Ok(session_response(thread_json, &new.thread.settings()))
}

async fn fork(
    conn: Arc<Conn>,
    ctx: RequestContext,
    p: ThreadForkParams,
) -> Result<ThreadSessionResponse, RpcError> {
    let source = parse_thread_id(&p.thread_id)?;
    let ephemeral = p.ephemeral.unwrap_or(false);
    let source_is_ephemeral = conn.ephemeral_info(&source).is_some();
    let (loaded_config, manager) = if source_is_ephemeral {
        if !ephemeral {
            return Err(invalid(format!(
                "thread {source} is ephemeral (nothing of it is stored); fork it with `ephemeral: true`"
            )));
        }
        let live = conn
            .live_thread(&source)
            .ok_or_else(|| thread_not_found(source))?;
        let mut o = p.overrides.clone();
        if !o.picks_model() {
            let c = live.settings();
            o.model = Some(c.model.clone());
            o.model_provider = Some(c.model_provider_id.clone());
        }
        (conn.load_session_config(&o).await?, &conn.ephemeral)
    } else {
        if ephemeral {
            return Err(invalid(format!(
                "an ephemeral fork needs an ephemeral source; thread {source} is stored, so fork it without `ephemeral`"
            )));
        }
        let summary = summary_of(&conn, source)
            .await?
            .ok_or_else(|| thread_not_found(source))?;
        (
            config_for_stored(&conn, &p.overrides, &summary).await?,
            &conn.manager,
        )
    };
    let new = manager
        .fork_thread(source, loaded_config.config)
        .await
        .map_err(core_error)?;
    if ephemeral {
        conn.mark_ephemeral(
            new.thread_id,
            EphemeralInfo {
                created_at: now_unix(),
                forked_from: Some(source),
            },
        );
    } else {
        conn.hold(new.thread_id);
    }
    let mut thread_json = live_thread_json(&conn, &new.thread).await?;
    if !p.exclude_turns && !ephemeral {
        let loaded = load_stored(&conn, new.thread_id).await?;
        thread_json.turns = stored_turns(new.thread_id, &loaded);
    }
    let started = ThreadStartedNotification {
        thread: WireThread {
            turns: Vec::new(),
            ..thread_json.clone()
        },
    };
    let mut notes = warning_notes(&loaded_config.warnings);
    notes.push(Note::of::<m::ThreadStarted>(&started));
    conn.notify_after_response(&ctx, notes);
    Ok(session_response(thread_json, &new.thread.settings()))
}

async fn read(
    conn: Arc<Conn>,
    _ctx: RequestContext,
    p: ThreadReadParams,
) -> Result<ThreadReadResponse, RpcError> {
    let id = parse_thread_id(&p.thread_id)?;
    if conn.ephemeral_info(&id).is_some()
        && let Some(thread) = conn.live_thread(&id)
    {
        let thread = live_thread_json(&conn, &thread).await?;
        return Ok(ThreadReadResponse { thread });
    }
    let summary = summary_of(&conn, id)
        .await?
        .ok_or_else(|| thread_not_found(id))?;
    let status = match conn.live_thread(&id) {
        Some(t) => live_status(&t),
        None => ThreadStatus::NotLoaded,
    };
    let mut thread = thread_from_summary(&summary, status);
    if p.include_turns {
        let loaded = load_stored(&conn, id).await?;
        thread.turns = stored_turns(id, &loaded);
    }
    Ok(ThreadReadResponse { thread })
}

/// An enum value `thread/list` does not know: -32602, as for any params that do not fit.
fn bad_list_param(detail: String) -> RpcError {
    RpcError::invalid_params(m::ThreadList::NAME, detail)
}

/// Codex's `recency_at` is last activity, our `updated_at`. `section_position` orders
/// threads inside the user's sections, which we do not have: threads then come most
/// recently updated first, as in one unsorted section.
fn parse_sort_key(s: &str) -> Result<SortKey, RpcError> {
    match s {
        "created_at" | "createdAt" => Ok(SortKey::CreatedAt),
        "updated_at" | "updatedAt" | "recency_at" | "recencyAt" => Ok(SortKey::UpdatedAt),
        "section_position" | "sectionPosition" => Ok(SortKey::UpdatedAt),
        other => Err(bad_list_param(format!(
            "unknown sortKey `{other}`; use \"created_at\", \"updated_at\", \"recency_at\" or \"section_position\""
        ))),
    }
}

/// v2 source kinds → stored sources. `None`: a kind we never write (nothing can match).
fn sources_for(kind: &str) -> Result<&'static [SessionSource], RpcError> {
    Ok(match kind {
        "cli" => &[SessionSource::Cli],
        "exec" => &[SessionSource::Exec],
        "appServer" => &[SessionSource::AppServer, SessionSource::Mcp],
        // Codex's app server records the threads its clients start as `vscode`, and Codex's
        // TUI lists `cli` + `vscode` in its resume picker: threads started through our v2
        // API are those.
        "vscode" => &[SessionSource::AppServer, SessionSource::Acp],
        "unknown" => &[SessionSource::Unknown],
        "subAgent"
        | "subAgentReview"
        | "subAgentCompact"
        | "subAgentThreadSpawn"
        | "subAgentOther" => &[],
        other => {
            return Err(bad_list_param(format!(
                "unknown sourceKind `{other}`; use any of cli, vscode, exec, appServer, subAgent, subAgentReview, subAgentCompact, subAgentThreadSpawn, subAgentOther, unknown"
            )));
        }
    })
}

fn list_query(p: ThreadListParams) -> Result<Option<ListQuery>, RpcError> {
    let sort_key = match &p.sort_key {
        Some(k) => parse_sort_key(k)?,
        None => SortKey::default(),
    };
    let descending = match p.sort_direction.as_deref() {
        None | Some("desc") => true,
        Some("asc") => false,
        Some(other) => {
            return Err(bad_list_param(format!(
                "unknown sortDirection `{other}`; use \"asc\" or \"desc\""
            )));
        }
    };
    let sources = match p.source_kinds.filter(|k| !k.is_empty()) {
        None => None,
        Some(kinds) => {
            let mut sources = Vec::new();
            for k in &kinds {
                sources.extend_from_slice(sources_for(k)?);
            }
            if sources.is_empty() {
                // Only kinds this server never records: nothing can match.
                return Ok(None);
            }
            Some(sources)
        }
    };
    Ok(Some(ListQuery {
        cursor: p.cursor,
        limit: p
            .limit
            .map(|l| (l as usize).clamp(1, ListQuery::MAX_LIMIT))
            .unwrap_or(ListQuery::DEFAULT_LIMIT),
        sort_key,
        descending,
        cwd: p.cwd.map(|c| {
            let dirs = match c {
                OneOrMany::One(p) => vec![p],
                OneOrMany::Many(v) => v,
            };
            // Stored cwds are canonical; match `./x` or a symlinked path too.
            dirs.into_iter()
                .flat_map(|d| {
                    let canon = d.canonicalize().ok().filter(|c| *c != d);
                    std::iter::once(d).chain(canon)
                })
                .collect()
        }),
        model_providers: p.model_providers,
        sources,
        archived: p.archived,
        search: p.search_term.filter(|s| !s.is_empty()),
    }))
}

async fn list(
    conn: Arc<Conn>,
    _ctx: RequestContext,
    p: ThreadListParams,
) -> Result<ThreadListResponse, RpcError> {
    let Some(q) = list_query(p)? else {
        return Ok(ThreadListResponse {
            data: Vec::new(),
            next_cursor: None,
        });
    };
    let stored = conn.stored_threads().await?;
    let page = stored.list(&q).await.map_err(core_error)?;
    let data = page
        .data
        .iter()
        .map(|s| {
            let status = match conn.live_thread(&s.id) {
                Some(t) => live_status(&t),
                None => ThreadStatus::NotLoaded,
            };
            thread_from_summary(s, status)
        })
        .collect();
    Ok(ThreadListResponse {
        data,
        next_cursor: page.next_cursor,
    })
}

async fn loaded_list(
    conn: Arc<Conn>,
    _ctx: RequestContext,
    p: ThreadLoadedListParams,
) -> Result<ThreadLoadedListResponse, RpcError> {
    let mut ids: Vec<String> = conn
        .manager
        .loaded_thread_ids()
        .into_iter()
        .chain(conn.ephemeral.loaded_thread_ids())
        .map(|i| i.to_string())
        .collect();
    ids.sort();
    let (start, end, next) = crate::offset_page(ids.len(), p.cursor.as_deref(), p.limit)?;
    Ok(ThreadLoadedListResponse {
        data: ids[start..end].to_vec(),
        next_cursor: next,
    })
}

/// Marks the thread (un)archived in the store; returns its id.
async fn set_archived(
    conn: &Conn,
    p: &ThreadIdParams,
    archived: bool,
) -> Result<ThreadId, RpcError> {
    let id = parse_thread_id(&p.thread_id)?;
    let stored = conn.stored_threads().await?;
    stored
        .set_archived(&id, archived)
        .await
        .map_err(core_error)?;
    Ok(id)
}

async fn archive(
    conn: Arc<Conn>,
    ctx: RequestContext,
    p: ThreadIdParams,
) -> Result<EmptyResponse, RpcError> {
    let id = set_archived(&conn, &p, true).await?;
    let note = ThreadIdNotification {
        thread_id: id.to_string(),
    };
    conn.notify_after_response(&ctx, vec![Note::of::<m::ThreadArchived>(&note)]);
    Ok(EmptyResponse {})
}

async fn unarchive(
    conn: Arc<Conn>,
    ctx: RequestContext,
    p: ThreadIdParams,
) -> Result<ThreadUnarchiveResponse, RpcError> {
    let id = set_archived(&conn, &p, false).await?;
    // Like Codex, unarchiving answers with the thread, so a client can show it again
    // without a `thread/read`.
    let summary = summary_of(&conn, id)
        .await?
        .ok_or_else(|| thread_not_found(id))?;
    let status = match conn.live_thread(&id) {
        Some(t) => live_status(&t),
        None => ThreadStatus::NotLoaded,
    };
    let note = ThreadIdNotification {
        thread_id: id.to_string(),
    };
    conn.notify_after_response(&ctx, vec![Note::of::<m::ThreadUnarchived>(&note)]);
    Ok(ThreadUnarchiveResponse {
        thread: thread_from_summary(&summary, status),
    })
}

async fn set_name(
    conn: Arc<Conn>,
    ctx: RequestContext,
    p: ThreadSetNameParams,
) -> Result<EmptyResponse, RpcError> {
    let id = parse_thread_id(&p.thread_id)?;
    let stored = conn.stored_threads().await?;
    stored
        .set_name(&id, p.name.clone())
        .await
        .map_err(core_error)?;
    let name = p
        .name
        .map(|n| n.trim().to_string())
        .filter(|n| !n.is_empty());
    conn.notify_after_response(
        &ctx,
        vec![Note::of::<m::ThreadNameUpdated>(
            &ThreadNameUpdatedNotification {
                thread_id: id.to_string(),
                thread_name: name,
            },
        )],
    );
    Ok(EmptyResponse {})
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::path::PathBuf;

    #[test]
    fn list_params_map_to_store_queries() {
        let p: ThreadListParams = serde_json::from_value(json!({
            "limit": 500, "sortKey": "created_at", "sortDirection": "asc",
            "sourceKinds": ["appServer"], "cwd": "/w", "searchTerm": ""
        }))
        .unwrap();
        let q = list_query(p).unwrap().unwrap();
        assert_eq!(q.limit, 100);
        assert_eq!(q.sort_key, SortKey::CreatedAt);
        assert!(!q.descending);
        assert_eq!(
            q.sources,
            Some(vec![SessionSource::AppServer, SessionSource::Mcp])
        );
        assert_eq!(q.cwd, Some(vec![PathBuf::from("/w")]));
        assert_eq!(q.search, None);

        let p: ThreadListParams =
            serde_json::from_value(json!({"sourceKinds": ["vscode"]})).unwrap();
        assert_eq!(
            list_query(p).unwrap().unwrap().sources,
            Some(vec![SessionSource::AppServer, SessionSource::Acp])
        );
        let p: ThreadListParams =
            serde_json::from_value(json!({"sourceKinds": ["subAgent"]})).unwrap();
        assert!(list_query(p).unwrap().is_none());
        let p: ThreadListParams = serde_json::from_value(json!({"sortKey": "size"})).unwrap();
        let e = list_query(p).unwrap_err();
        assert!(e.message.contains("sortKey"), "{}", e.message);
        assert_eq!(e.code, oi_jsonrpc::INVALID_PARAMS);
        let p: ThreadListParams =
            serde_json::from_value(json!({"sourceKinds": ["robot"]})).unwrap();
        let e = list_query(p).unwrap_err();
        assert!(e.message.contains("robot"), "{}", e.message);
        assert_eq!(e.code, oi_jsonrpc::INVALID_PARAMS);
        let p: ThreadListParams = serde_json::from_value(json!({"sortDirection": "up"})).unwrap();
        assert_eq!(list_query(p).unwrap_err().code, oi_jsonrpc::INVALID_PARAMS);
        // Codex's TUI lists by these two.
        for key in ["recency_at", "section_position"] {
            let p: ThreadListParams = serde_json::from_value(json!({ "sortKey": key })).unwrap();
            assert_eq!(list_query(p).unwrap().unwrap().sort_key, SortKey::UpdatedAt);
        }
    }
}
