//! Unit tests of internals the public API cannot observe directly.

use crate::index::Index;
use crate::paging::Cursor;
use crate::sidecar;
use crate::types::{ListQuery, SortKey};
use oi_protocol::ThreadId;

#[test]
fn list_queries_walk_an_index_instead_of_sorting_the_table() {
    let dir = tempfile::tempdir().unwrap();
    let (index, fresh) = Index::open(&dir.path().join("state.sqlite")).unwrap();
    assert!(fresh);
    for col in ["updated_at_ms", "created_at_ms"] {
        for dir in ["DESC", "ASC"] {
            let plan = index
                .explain(&format!(
                    "SELECT id FROM threads WHERE archived = 0 AND ({col}, id) < (1, 'x') \
                     ORDER BY {col} {dir}, id {dir} LIMIT 26"
                ))
                .join(" | ");
            let by = if col == "updated_at_ms" {
                "threads_by_updated"
            } else {
                "threads_by_created"
            };
            assert!(
                plan.contains(&format!("INDEX {by} (archived=? AND ({col},id)<")),
                "{plan}"
            );
            assert!(!plan.contains("TEMP B-TREE"), "sorts in memory: {plan}");
        }
    }
}

#[test]
fn cursor_round_trips_only_with_its_own_sort() {
    let id = ThreadId::new();
    let q = ListQuery {
        cursor: Some(format!("ud:1767225600123:{id}")),
        ..ListQuery::default()
    };
    assert!(Cursor::parse(&q).unwrap().is_some());
    let other = ListQuery {
        sort_key: SortKey::CreatedAt,
        ..q.clone()
    };
    assert!(Cursor::parse(&other).is_err());
    let asc = ListQuery {
        descending: false,
        ..q
    };
    assert!(Cursor::parse(&asc).is_err());
}

#[test]
fn sidecar_newest_entry_wins_per_attribute() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("session_index.jsonl");
    let a = ThreadId::new();
    let b = ThreadId::new();
    sidecar::append_name(&path, &a, Some("first")).unwrap();
    sidecar::append_archived(&path, &a, true).unwrap();
    sidecar::append_name(&path, &a, Some("second")).unwrap();
    sidecar::append_name(&path, &b, Some("b")).unwrap();
    sidecar::append_name(&path, &b, None).unwrap();
    std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, b"not json\n"))
        .unwrap();
    let state = sidecar::read(&path).unwrap();
    let ea = state.get(&a).unwrap();
    assert_eq!(ea.name, Some(Some("second".to_string())));
    assert_eq!(ea.archived, Some(true));
    let eb = state.get(&b).unwrap();
    assert_eq!(eb.name, Some(None));
    assert_eq!(eb.archived, None);
    // The reference's name lines read the same way.
    let text = std::fs::read_to_string(&path).unwrap();
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["thread_name"], "first");
    assert!(first["updated_at"].as_str().unwrap().ends_with('Z'));
}

#[test]
fn rollout_file_names_carry_the_id() {
    let id = ThreadId::new();
    let p = crate::rollout::rollout_path(std::path::Path::new("/s"), 1_767_225_600_000, &id);
    assert_eq!(crate::rollout::id_from_file_name(&p), Some(id));
    assert_eq!(
        crate::rollout::id_from_file_name(std::path::Path::new("/s/rollout-x.jsonl")),
        None
    );
}

#[test]
fn store_is_shareable_and_writer_is_sendable() {
    fn shareable<T: Send + Sync + Clone>() {}
    fn sendable<T: Send>() {}
    shareable::<crate::ThreadStore>();
    sendable::<crate::RolloutWriter>();
    sendable::<crate::LoadedThread>();
}

#[test]
fn deltas_and_approval_prompts_are_not_persisted() {
    use oi_protocol::protocol::{AgentMessageDeltaEvent, EventMsg, WarningEvent};
    assert!(!crate::should_persist_event(&EventMsg::AgentMessageDelta(
        AgentMessageDeltaEvent { delta: "x".into() }
    )));
    assert!(!crate::should_persist_event(&EventMsg::Warning(
        WarningEvent {
            message: "x".into()
        }
    )));
    assert!(!crate::should_persist_event(&EventMsg::ShutdownComplete));
    assert!(crate::should_persist_event(&EventMsg::TaskComplete(
        oi_protocol::protocol::TaskCompleteEvent {
            turn_id: "t".into(),
            last_agent_message: None,
            completed_at: None,
            duration_ms: None,
        }
    )));
}

/// The on-disk shape of the park records, which every process of a fleet (and the next
/// version) reads: `type` `turn_parked` / `turn_unparked`, fields as documented in
/// docs/scale.md. The outline's probe reads their turn ids without parsing the rest.
#[test]
fn park_records_have_their_documented_shape() {
    use crate::outline::Mark;
    use crate::types::parked::{ParkedCall, TurnParkedItem, TurnUnparkedItem, Unparked};
    use crate::types::{RolloutItem, RolloutLine};
    use oi_protocol::protocol::{
        ApplyPatchApprovalRequestEvent, ParkedAnswer, ParkedRequest, ReviewDecision,
    };
    let parked = RolloutItem::TurnParked(TurnParkedItem {
        turn_id: "t1".into(),
        park_id: "p1".into(),
        parked_at: 100,
        expires_at: 200,
        requests: vec![ParkedRequest::Patch(ApplyPatchApprovalRequestEvent {
            call_id: "c1".into(),
            turn_id: "t1".into(),
            changes: Default::default(),
            reason: None,
            grant_root: None,
        })],
        calls: vec![ParkedCall {
            call_id: "c1".into(),
            name: "apply_patch".into(),
            arguments: "{}".into(),
        }],
        settings: None,
        engine: serde_json::json!({}),
    });
    let line = serde_json::to_value(RolloutLine {
        timestamp: "2026-01-01T00:00:00.000Z".into(),
        item: parked,
    })
    .unwrap();
    assert_eq!(
        line,
        serde_json::json!({
            "timestamp": "2026-01-01T00:00:00.000Z",
            "type": "turn_parked",
            "payload": {
                "turn_id": "t1", "park_id": "p1", "parked_at": 100, "expires_at": 200,
                "requests": [{"type": "patch", "call_id": "c1", "turn_id": "t1", "changes": {}}],
                "calls": [{"call_id": "c1", "name": "apply_patch", "arguments": "{}"}],
                "engine": {}
            }
        })
    );
    let text = line.to_string();
    assert!(
        matches!(RolloutLine::parse(&text), Ok(RolloutLine { item: RolloutItem::TurnParked(p), .. }) if p.park_id == "p1")
    );
    assert_eq!(
        Mark::of_line(&text).unwrap(),
        Mark::Parked {
            turn_id: "t1".into()
        }
    );

    let unparked = RolloutItem::TurnUnparked(TurnUnparkedItem {
        turn_id: "t1".into(),
        park_id: "p1".into(),
        outcome: Unparked::Answered {
            answers: vec![ParkedAnswer::new("c1", ReviewDecision::Approved)],
        },
    });
    let line = serde_json::to_value(RolloutLine {
        timestamp: "2026-01-01T00:00:01.000Z".into(),
        item: unparked,
    })
    .unwrap();
    assert_eq!(
        line["payload"],
        serde_json::json!({
            "turn_id": "t1", "park_id": "p1",
            "outcome": {"how": "answered", "answers": [{"request_id": "c1", "decision": "approved"}]}
        })
    );
    assert_eq!(
        Mark::of_line(&line.to_string()).unwrap(),
        Mark::Unparked {
            turn_id: "t1".into()
        }
    );
    let expired = serde_json::to_value(Unparked::Expired).unwrap();
    assert_eq!(expired, serde_json::json!({"how": "expired"}));
}

/// An index another process holds locked is busy, not broken: it is not deleted and
/// recreated under that process (which then found "no such table: threads").
#[test]
fn an_index_locked_by_another_connection_is_not_recreated() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state.sqlite");
    let (index, _) = Index::open(&path).unwrap();
    drop(index);
    let holder = rusqlite::Connection::open(&path).unwrap();
    holder
        .execute_batch("PRAGMA locking_mode = EXCLUSIVE; BEGIN EXCLUSIVE; CREATE TABLE held (x);")
        .unwrap();
    let err = match Index::open(&path) {
        Ok(_) => panic!("opened an index another connection holds exclusively"),
        Err(e) => e.to_string(),
    };
    assert!(err.contains("is busy in another process"), "{err}");
    holder.execute_batch("COMMIT").unwrap();
    // The holder's database is the same file: nothing deleted it.
    let tables: i64 = holder
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name IN ('threads', 'held')",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(tables, 2);
    drop(holder);
    let (_, fresh) = Index::open(&path).unwrap();
    assert!(!fresh, "the index was kept");
}
