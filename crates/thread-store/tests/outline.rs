//! Thread outlines (`ThreadStore::outline`): the turns a paged history reads without parsing
//! every record. They must be the turns `load` gives, on both backends, for rollouts of any
//! writer, and catch up with records appended after they were read.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use oi_protocol::ThreadId;
use oi_protocol::protocol::{ErrorEvent, EventMsg, TurnAbortReason, TurnAbortedEvent};
use oi_thread_store::{
    RolloutItem, SessionMeta, SessionSource, StoreLocation, StoredTurn, ThreadOutline, ThreadStore,
    TurnStatus,
};
use serde_json::{Value, json};
use std::io::Write;

/// A store per backend (PostgreSQL when the test server is configured); `.1` keeps the
/// temporary home alive.
fn backends(test: &str) -> Vec<(&'static str, tempfile::TempDir, ThreadStore)> {
    let home = tempfile::tempdir().unwrap();
    let mut out = vec![("local", ThreadStore::open(home.path()).unwrap(), home)];
    if let Some(url) = oi_thread_store::test_db::fresh_database(test) {
        let home = tempfile::tempdir().unwrap();
        let store = ThreadStore::open_at(home.path(), &StoreLocation::Postgres(url)).unwrap();
        out.push(("postgres", store, home));
    }
    out.into_iter().map(|(n, s, h)| (n, h, s)).collect()
}

/// Everything observable of a turn, comparable.
fn view(t: &StoredTurn) -> Value {
    json!({
        "id": t.id,
        "status": format!("{:?}", t.status),
        "startedAt": t.started_at,
        "completedAt": t.completed_at,
        "durationMs": t.duration_ms,
        "error": t.error,
        "items": serde_json::to_value(&t.items).unwrap(),
    })
}

fn outline_turns(o: &ThreadOutline) -> Vec<Value> {
    o.turns().iter().map(|s| view(&o.stored_turn(s))).collect()
}

fn loaded_turns(store: &ThreadStore, id: &ThreadId) -> Vec<Value> {
    store.load(id).unwrap().turns().iter().map(view).collect()
}

fn error(message: &str) -> RolloutItem {
    RolloutItem::EventMsg(EventMsg::Error(ErrorEvent {
        message: message.into(),
        codex_error_info: None,
    }))
}

fn aborted(turn_id: &str) -> RolloutItem {
    RolloutItem::EventMsg(EventMsg::TurnAborted(TurnAbortedEvent {
        turn_id: Some(turn_id.into()),
        reason: TurnAbortReason::Interrupted,
        completed_at: Some(1_767_225_700),
        duration_ms: Some(5),
    }))
}

/// Every boundary case the turn rules know: a completed turn, a failed one, an aborted one,
/// a user message recorded before its turn's task_started, a turn cut off by the next one,
/// and conversation after the last turn (an implicit turn).
fn varied_records() -> Vec<RolloutItem> {
    vec![
        task_started("t1"),
        user_message("first"),
        call("c1"),
        output("c1", "ok"),
        agent_message("done"),
        task_complete("t1"),
        user_message("second"),
        task_started("t2"),
        error("model unreachable"),
        task_complete("t2"),
        task_started("t3"),
        agent_message("partial"),
        aborted("t3"),
        task_started("t4"),
        agent_message("cut off"),
        task_started("t5"),
        task_complete("t5"),
        agent_message("left after the last turn"),
    ]
}

#[test]
fn outline_turns_are_the_loaded_turns_on_every_backend_and_catch_up_with_appends() {
    for (name, _home, store) in
        backends("outline_turns_are_the_loaded_turns_on_every_backend_and_catch_up_with_appends")
    {
        let meta = SessionMeta::new("/work/a", "mock", "m", SessionSource::Cli);
        let id = meta.id;
        let mut w = store.create(meta).unwrap();
        w.append_all(&varied_records()).unwrap();
        w.flush_index().unwrap();

        let outline = store.outline(&id).unwrap();
        let expected = loaded_turns(&store, &id);
        assert_eq!(outline_turns(&outline), expected, "{name}");
        let statuses: Vec<TurnStatus> = outline.turns().iter().map(|t| t.status).collect();
        assert_eq!(
            statuses,
            [
                TurnStatus::Completed,
                TurnStatus::Interrupted, // the user message before t2's task_started
                TurnStatus::Failed,
                TurnStatus::Interrupted,
                TurnStatus::Interrupted, // t4, cut off by t5
                TurnStatus::Completed,
                TurnStatus::InProgress, // the trailing agent message
            ],
            "{name}"
        );
        assert!(store.outline_update(&outline).unwrap().is_none(), "{name}");

        // The thread is written on while its outline is held: an update reads the new
        // records only, and gives the turns a fresh load gives.
        w.append_all(&[
            task_started("t6"),
            user_message("third"),
            agent_message("more"),
        ])
        .unwrap();
        w.flush_index().unwrap();
        let grown = store
            .outline_update(&outline)
            .unwrap()
            .expect("records were appended");
        assert_eq!(outline_turns(&grown), loaded_turns(&store, &id), "{name}");
        assert_eq!(grown.turns().last().unwrap().id, "t6", "{name}");
        assert_eq!(
            grown.turns().last().unwrap().status,
            TurnStatus::InProgress,
            "{name}"
        );
        w.append(&task_complete("t6")).unwrap();
        w.flush_index().unwrap();
        let done = store.outline_update(&grown).unwrap().expect("a turn ended");
        assert_eq!(done.turns().last().unwrap().status, TurnStatus::Completed);
        assert_eq!(outline_turns(&done), loaded_turns(&store, &id), "{name}");
        assert!(store.outline_update(&done).unwrap().is_none(), "{name}");
    }
}

#[test]
fn outline_of_an_unknown_thread_is_not_found() {
    for (name, _home, store) in backends("outline_of_an_unknown_thread_is_not_found") {
        let id = ThreadId::new();
        let err = store.outline(&id).unwrap_err();
        assert!(err.to_string().contains(&id.to_string()), "{name}: {err}");
    }
}

/// A rollout as an earlier version (or another writer) left it in the sessions directory.
fn write_rollout(home: &std::path::Path, id: &ThreadId, lines: &[String]) -> std::path::PathBuf {
    let dir = home.join("sessions/2026/01/01");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(format!("rollout-2026-01-01T00-00-00-{id}.jsonl"));
    std::fs::write(&path, lines.join("\n") + "\n").unwrap();
    path
}

fn line(secs: i64, kind: &str, payload: Value) -> String {
    json!({"timestamp": ts(secs), "type": kind, "payload": payload}).to_string()
}

#[test]
fn rollouts_of_earlier_writers_read_the_same_through_an_outline() {
    let home = tempfile::tempdir().unwrap();
    let id = ThreadId::new();
    // Written without turn events (user messages and response items only, as older writers
    // did), with a turn_context naming the turn, a corrupt line, a record type this version
    // does not know, and an event type it does not know.
    let lines = vec![
        line(
            0,
            "session_meta",
            json!({"id": id, "timestamp": ts(0), "cwd": "/w",
            "originator": "old", "cli_version": "0.0.1", "source": "cli",
            "model_provider": "mock"}),
        ),
        line(
            1,
            "turn_context",
            json!({"turn_id": "ctx-1", "cwd": "/w",
            "approval_policy": "never", "sandbox_policy": {"type": "read-only"},
            "model": "m"}),
        ),
        line(
            2,
            "event_msg",
            json!({"type": "user_message", "message": "hello"}),
        ),
        line(
            3,
            "response_item",
            json!({"type": "message", "role": "assistant",
            "content": [{"type": "output_text", "text": "hi"}]}),
        ),
        "{not json".to_string(),
        line(4, "future_record", json!({"x": 1})),
        line(
            5,
            "event_msg",
            json!({"type": "future_event", "turn_id": 7}),
        ),
        line(
            6,
            "event_msg",
            json!({"type": "user_message", "message": "again"}),
        ),
        line(
            7,
            "event_msg",
            json!({"type": "agent_message", "message": "ok"}),
        ),
    ];
    write_rollout(home.path(), &id, &lines);
    let store = ThreadStore::open(home.path()).unwrap();
    let loaded = store.load(&id).unwrap();
    assert!(!loaded.warnings.is_empty(), "the corrupt line is reported");
    let outline = store.outline(&id).unwrap();
    assert_eq!(outline_turns(&outline), loaded_turns(&store, &id));
    assert_eq!(outline.turns()[0].id, "ctx-1");
    assert!(
        outline.warnings().iter().any(|w| w.contains("record 4")),
        "{:?}",
        outline.warnings()
    );
}

#[test]
fn a_torn_last_line_waits_until_its_writer_finishes_it() {
    let (home, store) = {
        let home = tempfile::tempdir().unwrap();
        let store = ThreadStore::open(home.path()).unwrap();
        (home, store)
    };
    let meta = SessionMeta::new("/work/a", "mock", "m", SessionSource::Cli);
    let id = meta.id;
    let mut w = store.create(meta).unwrap();
    w.append_all(&[task_started("t1"), user_message("hi")])
        .unwrap();
    w.flush_index().unwrap();
    let path = w.path().to_path_buf();
    drop(w);
    // Half of a task_complete line, as a writer mid-write leaves it.
    let end = line(
        9,
        "event_msg",
        json!({"type": "task_complete", "turn_id": "t1",
        "last_agent_message": null}),
    );
    let (head, tail) = end.split_at(end.len() / 2);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(head.as_bytes()).unwrap();
    let outline = store.outline(&id).unwrap();
    assert_eq!(outline.turns().len(), 1);
    assert_eq!(outline.turns()[0].status, TurnStatus::InProgress);
    assert!(outline.warnings().is_empty(), "{:?}", outline.warnings());
    f.write_all(format!("{tail}\n").as_bytes()).unwrap();
    let done = store
        .outline_update(&outline)
        .unwrap()
        .expect("the line was finished");
    assert_eq!(done.turns()[0].status, TurnStatus::Completed);
    assert_eq!(outline_turns(&done), loaded_turns(&store, &id));
    drop(home);
}

#[test]
fn outlines_follow_resume_cutting_a_torn_line_and_a_file_that_shrank() {
    let home = tempfile::tempdir().unwrap();
    let store = ThreadStore::open(home.path()).unwrap();
    let meta = SessionMeta::new("/work/a", "mock", "m", SessionSource::Cli);
    let id = meta.id;
    let mut w = store.create(meta).unwrap();
    w.append_all(&[task_started("t1"), user_message("hi")])
        .unwrap();
    w.flush_index().unwrap();
    let path = w.path().to_path_buf();
    drop(w);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(b"{\"timestamp\":\"2026-01-01T00:00:09.000Z\",\"type\":\"event_msg\",\"payload\":{\"type\":\"task_compl")
        .unwrap();
    drop(f);
    let outline = store.outline(&id).unwrap();
    // Resuming cuts the torn line off and closes the open turn as interrupted.
    let (w, _) = store.resume(&id).unwrap();
    drop(w);
    let after = store
        .outline_update(&outline)
        .unwrap()
        .expect("the file changed");
    assert_eq!(after.turns()[0].status, TurnStatus::Interrupted);
    assert_eq!(outline_turns(&after), loaded_turns(&store, &id));
    // A file cut shorter than what the outline read (rewritten behind the store's back) is
    // read again whole rather than trusted.
    let text = std::fs::read_to_string(&path).unwrap();
    let two_lines: usize = text.split_inclusive('\n').take(2).map(str::len).sum();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(two_lines as u64)
        .unwrap();
    let cut = store
        .outline_update(&after)
        .unwrap()
        .expect("the file shrank");
    assert_eq!(cut.record_count(), 1);
    assert_eq!(cut.turns()[0].status, TurnStatus::InProgress);
    assert_eq!(outline_turns(&cut), loaded_turns(&store, &id));
}
