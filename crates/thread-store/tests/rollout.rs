//! Rollout files: format, crash tolerance, resume, fork, history and turns.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

use common::*;
use oi_protocol::ThreadId;
use oi_protocol::config_types::{AskForApproval, ReasoningEffort, SandboxPolicy};
use oi_protocol::models::{ContentItem, FunctionCallOutput, ResponseItem, Role, TokenUsage};
use oi_protocol::protocol::{
    ErrorEvent, EventMsg, McpCallTask, McpCallTaskState, McpToolCallProgressEvent, TokenCountEvent,
    TokenUsageInfo, TurnAbortReason, TurnAbortedEvent,
};
use oi_thread_store::{
    ABORTED_CALL_OUTPUT, CompactedItem, GitInfo, RolloutItem, SessionMeta, SessionSource,
    StoreError, ThreadStore, TurnContextItem, TurnStatus,
};
use std::io::Write;

fn open() -> (tempfile::TempDir, ThreadStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = ThreadStore::open(dir.path()).unwrap();
    (dir, store)
}

fn json(item: &RolloutItem) -> serde_json::Value {
    serde_json::to_value(item).unwrap()
}

fn every_kind() -> Vec<RolloutItem> {
    vec![
        RolloutItem::TurnContext(TurnContextItem {
            turn_id: "t1".into(),
            cwd: "/work/a".into(),
            approval_policy: AskForApproval::OnRequest,
            sandbox_policy: SandboxPolicy::workspace_write(),
            model: "qwen3".into(),
            effort: Some(ReasoningEffort::High),
        }),
        task_started("t1"),
        user_message("list the files"),
        RolloutItem::ResponseItem(ResponseItem::developer_text("be brief")),
        RolloutItem::ResponseItem(ResponseItem::Message {
            role: Role::User,
            content: vec![
                ContentItem::InputText {
                    text: "list the files".into(),
                },
                ContentItem::InputImage {
                    image_url: "data:image/png;base64,AAAA".into(),
                },
            ],
        }),
        RolloutItem::ResponseItem(ResponseItem::Reasoning {
            text: "I should run ls".into(),
            encrypted_content: Some("opaque".into()),
        }),
        call("c1"),
        RolloutItem::ResponseItem(ResponseItem::FunctionCallOutput {
            call_id: "c1".into(),
            output: FunctionCallOutput {
                content: vec![ContentItem::InputText {
                    text: "a.txt\nb.txt".into(),
                }],
                success: Some(true),
            },
        }),
        RolloutItem::ResponseItem(ResponseItem::assistant_text("two files")),
        agent_message("two files"),
        RolloutItem::EventMsg(EventMsg::AgentReasoning(
            oi_protocol::protocol::AgentReasoningEvent {
                text: "I should run ls".into(),
            },
        )),
        RolloutItem::EventMsg(EventMsg::TokenCount(TokenCountEvent {
            info: Some(TokenUsageInfo {
                total_token_usage: TokenUsage {
                    input_tokens: 10,
                    total_tokens: 12,
                    output_tokens: 2,
                    ..TokenUsage::default()
                },
                last_token_usage: TokenUsage::default(),
                model_context_window: Some(32768),
                model_context_window_source: None,
            }),
            rate_limits: None,
        })),
        task_complete("t1"),
        task_started("t2"),
        RolloutItem::EventMsg(EventMsg::TurnAborted(TurnAbortedEvent {
            turn_id: Some("t2".into()),
            reason: TurnAbortReason::Interrupted,
            completed_at: Some(1_767_225_600),
            duration_ms: Some(5),
        })),
        RolloutItem::SessionMeta(SessionMeta::new("/x", "p", "m", SessionSource::Exec)),
    ]
}

#[test]
fn every_record_kind_round_trips_and_lines_have_the_reference_shape() {
    let (_dir, store) = open();
    let mut meta = SessionMeta::new("/work/a", "ollama", "qwen3", SessionSource::Mcp);
    meta.originator = "open_interpreter".into();
    meta.cli_version = "0.1.0".into();
    meta.base_instructions = Some("You are a coding agent.".into());
    meta.git = Some(GitInfo {
        commit_hash: Some("abc123".into()),
        branch: Some("main".into()),
        repository_url: None,
    });
    let id = meta.id;
    let items = every_kind();
    let path = {
        let mut w = store.create(meta.clone()).unwrap();
        for item in &items[..3] {
            w.append(item).unwrap();
        }
        w.append_all(&items[3..]).unwrap();
        w.path().to_path_buf()
    };

    let loaded = store.load(&id).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(loaded.meta, meta);
    assert_eq!(loaded.items.len(), items.len());
    for (got, want) in loaded.items.iter().zip(&items) {
        assert_eq!(json(got), json(want));
    }
    assert_eq!(loaded.timestamps.len(), items.len());

    // File name: sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<uuid>.jsonl (local time).
    let rel = path.strip_prefix(store.home().join("sessions")).unwrap();
    let parts: Vec<&str> = rel.iter().map(|p| p.to_str().unwrap()).collect();
    assert_eq!(parts.len(), 4, "{rel:?}");
    let name = parts[3];
    assert!(name.starts_with(&format!("rollout-{}-{}-{}T", parts[0], parts[1], parts[2])));
    assert!(name.ends_with(&format!("-{id}.jsonl")), "{name}");
    assert_eq!(
        name.len(),
        "rollout-2026-04-25T12-00-00-".len() + 36 + ".jsonl".len()
    );

    // Lines: {"timestamp":"…Z","type":…,"payload":…} in that key order, session_meta first.
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), items.len() + 1);
    assert!(lines[0].starts_with(r#"{"timestamp":""#));
    assert!(lines[0].contains(r#"","type":"session_meta","payload":{"id":""#));
    for line in &lines {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let ts = v["timestamp"].as_str().unwrap();
        assert_eq!(ts.len(), "2026-04-25T12:00:00.123Z".len(), "{ts}");
        assert!(ts.ends_with('Z') && ts.as_bytes()[19] == b'.', "{ts}");
        assert_eq!(v.as_object().unwrap().len(), 3);
    }
    let first: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
    assert_eq!(first["payload"]["source"], "mcp");
    assert_eq!(first["payload"]["git"]["branch"], "main");
    assert_eq!(first["payload"]["model_provider"], "ollama");
}

#[test]
fn session_source_reads_foreign_values_leniently() {
    let parse = |v: serde_json::Value| serde_json::from_value::<SessionSource>(v).unwrap();
    assert_eq!(parse("mcp".into()), SessionSource::Mcp);
    assert_eq!(parse("appServer".into()), SessionSource::AppServer);
    assert_eq!(parse("vscode".into()), SessionSource::Unknown);
    assert_eq!(
        parse(serde_json::json!({"subagent": "review"})),
        SessionSource::Unknown
    );
    assert_eq!(SessionSource::Mcp.as_v2_str(), "appServer");
    assert!(
        "nope"
            .parse::<SessionSource>()
            .unwrap_err()
            .contains("cli, exec")
    );
}

fn thread_with(store: &ThreadStore, items: &[RolloutItem]) -> (ThreadId, std::path::PathBuf) {
    let meta = SessionMeta::new("/work/a", "ollama", "qwen3", SessionSource::Cli);
    let id = meta.id;
    let mut w = store.create(meta).unwrap();
    w.append_all(items).unwrap();
    (id, w.path().to_path_buf())
}

#[test]
fn torn_last_line_is_skipped_with_a_warning_and_resume_cleans_it() {
    let (_dir, store) = open();
    let (id, path) = thread_with(
        &store,
        &[
            task_started("t1"),
            user_message("one"),
            agent_message("two"),
        ],
    );
    // Simulate kill -9 in the middle of writing the last line.
    let len = std::fs::metadata(&path).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&path)
        .unwrap()
        .set_len(len - 12)
        .unwrap();

    let loaded = store.load(&id).unwrap();
    assert_eq!(loaded.items.len(), 2);
    assert_eq!(json(&loaded.items[1]), json(&user_message("one")));
    assert_eq!(loaded.warnings.len(), 1);
    assert!(
        loaded.warnings[0].contains("line 4: incomplete last line"),
        "{:?}",
        loaded.warnings
    );

    // Resume cuts the fragment off, closes the dead turn, and appends on a clean line.
    let (mut w, resumed) = store.resume(&id).unwrap();
    assert_eq!(resumed.warnings.len(), 1);
    w.append(&agent_message("after resume")).unwrap();
    drop(w);
    let again = store.load(&id).unwrap();
    assert!(again.warnings.is_empty(), "{:?}", again.warnings);
    assert_eq!(again.items.len(), 4);
    assert!(matches!(
        &again.items[2],
        RolloutItem::EventMsg(EventMsg::TurnAborted(e)) if e.turn_id.as_deref() == Some("t1")
    ));
    assert_eq!(json(&again.items[3]), json(&agent_message("after resume")));
}

#[test]
fn corrupt_middle_line_and_unknown_record_types_are_skipped_with_warnings() {
    let (_dir, store) = open();
    let (id, path) = thread_with(&store, &[user_message("one")]);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(b"{\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"type\":\"event_msg\",\"pay\n")
        .unwrap();
    f.write_all(b"\xff\xfe not utf8\n").unwrap();
    f.write_all(
        b"{\"timestamp\":\"2026-01-01T00:00:00.000Z\",\"type\":\"ghost_snapshot\",\"payload\":{\"message\":\"x\"}}\n",
    )
    .unwrap();
    drop(f);
    {
        let (mut w, _) = store.resume(&id).unwrap();
        w.append(&agent_message("two")).unwrap();
    }
    let loaded = store.load(&id).unwrap();
    assert_eq!(loaded.items.len(), 2, "{:?}", loaded.items);
    assert_eq!(json(&loaded.items[1]), json(&agent_message("two")));
    assert_eq!(loaded.warnings.len(), 3, "{:?}", loaded.warnings);
    assert!(loaded.warnings[0].contains("line 3:"));
    assert!(loaded.warnings[1].contains("line 4: not UTF-8"));
    assert!(loaded.warnings[2].contains("unknown record type `ghost_snapshot`"));
}

#[test]
fn complete_last_line_without_newline_is_kept_and_resume_starts_a_new_line() {
    let (_dir, store) = open();
    let (id, path) = thread_with(&store, &[user_message("one")]);
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(
        br#"{"timestamp":"2026-01-01T00:00:00.000Z","type":"event_msg","payload":{"type":"agent_message","message":"no newline"}}"#,
    )
    .unwrap();
    drop(f);
    assert_eq!(store.load(&id).unwrap().items.len(), 2);
    {
        let (mut w, _) = store.resume(&id).unwrap();
        w.append(&agent_message("next")).unwrap();
    }
    let loaded = store.load(&id).unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(loaded.items.len(), 3);
}

#[test]
fn unreadable_first_line_makes_the_file_unusable_with_a_clear_error() {
    let (dir, store) = open();
    let path = dir.path().join("bad.jsonl");
    std::fs::write(&path, "garbage\n").unwrap();
    let err = store.load_path(&path).unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }));
    assert!(err.to_string().contains("session_meta"), "{err}");
}

#[test]
fn unknown_id_is_not_found_and_names_the_id() {
    let (_dir, store) = open();
    let id = ThreadId::new();
    let err = store.load(&id).unwrap_err();
    assert!(matches!(err, StoreError::NotFound(_)));
    assert!(err.to_string().contains(&id.to_string()), "{err}");
    assert!(matches!(store.resume(&id), Err(StoreError::NotFound(_))));
    assert!(matches!(
        store.set_name(&id, Some("x".into())),
        Err(StoreError::NotFound(_))
    ));
}

#[test]
fn history_gives_dangling_calls_a_failed_output() {
    let (_dir, store) = open();
    let (id, _) = thread_with(
        &store,
        &[
            task_started("t1"),
            user_message("go"),
            RolloutItem::ResponseItem(ResponseItem::user_text("go")),
            call("a"),
            call("b"),
            output("a", "done a"),
            RolloutItem::ResponseItem(ResponseItem::assistant_text("next")),
            call("c"),
        ],
    );
    let history = store.load(&id).unwrap().history();
    let synthetic = |id: &str| ResponseItem::FunctionCallOutput {
        call_id: id.into(),
        output: FunctionCallOutput::text(ABORTED_CALL_OUTPUT, false),
    };
    let expected = vec![
        ResponseItem::user_text("go"),
        match call("a") {
            RolloutItem::ResponseItem(r) => r,
            _ => unreachable!(),
        },
        match call("b") {
            RolloutItem::ResponseItem(r) => r,
            _ => unreachable!(),
        },
        match output("a", "done a") {
            RolloutItem::ResponseItem(r) => r,
            _ => unreachable!(),
        },
        synthetic("b"),
        ResponseItem::assistant_text("next"),
        match call("c") {
            RolloutItem::ResponseItem(r) => r,
            _ => unreachable!(),
        },
        synthetic("c"),
    ];
    assert_eq!(history, expected);
}

/// The progress event that names the task behind an MCP call.
fn task_note(call_id: &str, task_id: &str, state: McpCallTaskState) -> RolloutItem {
    RolloutItem::EventMsg(EventMsg::McpToolCallProgress(McpToolCallProgressEvent {
        call_id: call_id.into(),
        progress: 1.0,
        total: None,
        message: None,
        task: Some(McpCallTask {
            task_id: task_id.into(),
            state,
        }),
    }))
}

fn response(item: RolloutItem) -> ResponseItem {
    match item {
        RolloutItem::ResponseItem(r) => r,
        _ => unreachable!(),
    }
}

#[test]
fn a_later_output_takes_its_calls_place_and_pending_tasks_are_named() {
    let (_dir, store) = open();
    let (id, _) = thread_with(
        &store,
        &[
            task_started("t1"),
            RolloutItem::ResponseItem(ResponseItem::user_text("go")),
            // Left running when its session ended: a placeholder output, then (resumed) the
            // fetched one, recorded at the end of the file.
            call("left"),
            task_note("left", "task-1", McpCallTaskState::Started),
            task_note("left", "task-1", McpCallTaskState::LeftRunning),
            output("left", "left running"),
            RolloutItem::ResponseItem(ResponseItem::assistant_text("later")),
            // The process died during this one: no output in its session.
            call("died"),
            task_note("died", "task-2", McpCallTaskState::Started),
            RolloutItem::ResponseItem(ResponseItem::user_text("resumed")),
            // Ended in its own session: not pending.
            call("done"),
            task_note("done", "task-3", McpCallTaskState::Started),
            output("done", "its result"),
        ],
    );
    let loaded = store.load(&id).unwrap();
    let pending = loaded.pending_mcp_tasks();
    let named: Vec<(&str, &str, bool)> = pending
        .iter()
        .map(|t| (t.call_id.as_str(), t.task_id.as_str(), t.left_running))
        .collect();
    assert_eq!(
        named,
        vec![("left", "task-1", true), ("died", "task-2", false)]
    );
    assert_eq!(pending[0].name, "shell");
    assert_eq!(pending[0].arguments, r#"{"command":["ls"]}"#);

    // The resumed thread records what it fetched, and says so.
    let mut writer = store.resume(&id).unwrap().0;
    for item in [
        output("left", "the report"),
        task_note("left", "task-1", McpCallTaskState::Fetched),
        output("died", "gone"),
        task_note("died", "task-2", McpCallTaskState::Fetched),
    ] {
        writer.append(&item).unwrap();
    }
    drop(writer);
    let loaded = store.load(&id).unwrap();
    assert!(loaded.pending_mcp_tasks().is_empty());
    let expected = vec![
        ResponseItem::user_text("go"),
        response(call("left")),
        response(output("left", "the report")),
        ResponseItem::assistant_text("later"),
        response(call("died")),
        response(output("died", "gone")),
        ResponseItem::user_text("resumed"),
        response(call("done")),
        response(output("done", "its result")),
    ];
    assert_eq!(loaded.history(), expected);
}

#[test]
fn turns_are_rebuilt_with_status_and_times() {
    let (_dir, store) = open();
    let (id, _) = thread_with(
        &store,
        &[
            task_started("t1"),
            user_message("one"),
            agent_message("reply"),
            task_complete("t1"),
            task_started("t2"),
            user_message("two"),
            RolloutItem::EventMsg(EventMsg::TurnAborted(TurnAbortedEvent {
                turn_id: Some("t2".into()),
                reason: TurnAbortReason::Interrupted,
                completed_at: None,
                duration_ms: None,
            })),
            task_started("t3"),
            RolloutItem::EventMsg(EventMsg::Error(ErrorEvent {
                message: "model unreachable".into(),
                codex_error_info: None,
            })),
            task_complete("t3"),
            task_started("t4"),
            user_message("four"),
        ],
    );
    let turns = store.load(&id).unwrap().turns();
    let summary: Vec<(&str, TurnStatus)> =
        turns.iter().map(|t| (t.id.as_str(), t.status)).collect();
    assert_eq!(
        summary,
        vec![
            ("t1", TurnStatus::Completed),
            ("t2", TurnStatus::Interrupted),
            ("t3", TurnStatus::Failed),
            ("t4", TurnStatus::InProgress),
        ]
    );
    assert_eq!(turns[0].items.len(), 4);
    assert_eq!(turns[2].error.as_deref(), Some("model unreachable"));
    let now = chrono::Utc::now().timestamp();
    let started = turns[0].started_at.unwrap();
    assert!((now - started).abs() < 600, "{started} vs {now}");
    assert!(turns[0].completed_at.is_some());
    assert!(turns[3].completed_at.is_none());
}

#[test]
fn resume_closes_the_dead_turn_and_continues_the_same_file() {
    let (_dir, store) = open();
    let (id, path) = thread_with(&store, &[task_started("t1"), user_message("go"), call("a")]);
    let (mut w, loaded) = store.resume(&id).unwrap();
    assert_eq!(w.path(), path);
    assert_eq!(w.thread_id(), id);
    assert_eq!(loaded.turns()[0].status, TurnStatus::Interrupted);
    assert_eq!(loaded.history().len(), 2, "call plus its synthetic output");
    w.append_all(&[
        task_started("t2"),
        user_message("again"),
        task_complete("t2"),
    ])
    .unwrap();
    drop(w);
    let turns = store.load(&id).unwrap().turns();
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[1].status, TurnStatus::Completed);
    // The preview stays the first user message.
    assert_eq!(store.get(&id).unwrap().unwrap().preview, "go");
}

#[test]
fn a_thread_has_one_writer_at_a_time() {
    let (_dir, store) = open();
    let meta = SessionMeta::new("/w", "p", "m", SessionSource::Cli);
    let id = meta.id;
    let w = store.create(meta).unwrap();
    let err = store.resume(&id).unwrap_err();
    assert!(matches!(err, StoreError::Busy { .. }), "{err}");
    assert!(err.to_string().contains("fork"), "{err}");
    // Reading and forking a live thread is fine.
    store.load(&id).unwrap();
    store
        .fork(&id, SessionMeta::new("/w", "p", "m", SessionSource::Cli))
        .unwrap();
    drop(w);
    store.resume(&id).unwrap();
}

#[test]
fn fork_copies_history_sets_forked_from_and_then_diverges() {
    let (_dir, store) = open();
    let src = make_thread(
        &store,
        Spec {
            prompt: "original question",
            ..Spec::default()
        },
    );
    let new_meta = SessionMeta::new("/work/a", "ollama", "qwen3", SessionSource::Cli);
    let fork_id = new_meta.id;
    let (mut fw, forked) = store.fork(&src, new_meta).unwrap();
    assert_eq!(forked.meta.forked_from_id, Some(src));
    assert_eq!(forked.summary.forked_from_id, Some(src));
    assert_eq!(forked.summary.id, fork_id);
    let src_loaded = store.load(&src).unwrap();
    assert_eq!(forked.history(), src_loaded.history());
    assert_eq!(forked.items.len(), src_loaded.items.len());
    assert_eq!(forked.timestamps, src_loaded.timestamps);

    fw.append(&user_message("only in the fork")).unwrap();
    drop(fw);
    {
        let (mut sw, _) = store.resume(&src).unwrap();
        sw.append(&user_message("only in the source")).unwrap();
    }
    let f = store.load(&fork_id).unwrap();
    let s = store.load(&src).unwrap();
    assert_eq!(
        json(f.items.last().unwrap()),
        json(&user_message("only in the fork"))
    );
    assert_eq!(
        json(s.items.last().unwrap()),
        json(&user_message("only in the source"))
    );
    let row = store.get(&fork_id).unwrap().unwrap();
    assert_eq!(row.forked_from_id, Some(src));
    assert_eq!(row.preview, "original question");
    assert!(matches!(
        store.fork(
            &src,
            SessionMeta {
                id: src,
                ..f.meta.clone()
            }
        ),
        Err(StoreError::Invalid(_))
    ));
}

#[test]
fn forking_a_thread_mid_turn_closes_the_turn_in_the_copy() {
    let (_dir, store) = open();
    let (src, _) = thread_with(&store, &[task_started("t1"), user_message("go")]);
    let (_w, forked) = store
        .fork(&src, SessionMeta::new("/w", "p", "m", SessionSource::Cli))
        .unwrap();
    assert_eq!(forked.turns()[0].status, TurnStatus::Interrupted);
    // The source itself is untouched.
    assert_eq!(
        store.load(&src).unwrap().turns()[0].status,
        TurnStatus::InProgress
    );
}

#[test]
fn create_rejects_a_bad_timestamp_and_a_duplicate_id() {
    let (_dir, store) = open();
    let mut meta = SessionMeta::new("/w", "p", "m", SessionSource::Cli);
    meta.timestamp = "yesterday".into();
    let err = store.create(meta.clone()).unwrap_err();
    assert!(
        err.to_string().contains("`yesterday` is not RFC 3339"),
        "{err}"
    );
    meta.timestamp = String::new();
    drop(store.create(meta.clone()).unwrap());
    let err = store.create(meta).unwrap_err();
    assert!(err.to_string().contains("already exists"), "{err}");
}

#[test]
fn load_path_reads_a_copied_rollout() {
    let (dir, store) = open();
    let id = make_thread(&store, Spec::default());
    let src = store.get(&id).unwrap().unwrap().path;
    let copy = dir.path().join("copy.jsonl");
    std::fs::copy(&src, &copy).unwrap();
    let loaded = store.load_path(&copy).unwrap();
    assert_eq!(loaded.meta.id, id);
    assert_eq!(loaded.summary.path, copy);
    assert_eq!(loaded.summary.preview, "hello");
}

#[test]
fn collect_git_info_outside_a_repo_is_none() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(oi_thread_store::collect_git_info(dir.path()), None);
}

#[test]
fn collect_git_info_reads_a_repo() {
    let dir = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(dir.path())
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
    };
    if git(&["init", "-q", "-b", "trunk"]).is_err() {
        eprintln!("git not installed; skipping");
        return;
    }
    git(&["commit", "-q", "--allow-empty", "-m", "x"]).unwrap();
    git(&["remote", "add", "origin", "https://example.com/r.git"]).unwrap();
    let info = oi_thread_store::collect_git_info(dir.path()).unwrap();
    assert_eq!(info.branch.as_deref(), Some("trunk"));
    assert_eq!(info.commit_hash.as_ref().map(String::len), Some(40));
    assert_eq!(
        info.repository_url.as_deref(),
        Some("https://example.com/r.git")
    );
}

fn compacted(summary: &str, replacement: Option<Vec<ResponseItem>>) -> RolloutItem {
    RolloutItem::Compacted(CompactedItem {
        message: summary.into(),
        replacement_history: replacement,
    })
}

#[test]
fn compacted_record_has_codex_shape_and_restarts_history_on_resume_and_fork() {
    let (_dir, store) = open();
    let replacement = vec![
        ResponseItem::user_text("first question"),
        ResponseItem::user_text("SUMMARY: did a lot"),
    ];
    let (id, path) = thread_with(
        &store,
        &[
            RolloutItem::ResponseItem(ResponseItem::user_text("first question")),
            call("a"),
            output("a", &"x".repeat(5000)),
            // A call left dangling before the compaction is gone with the rest.
            call("dangling"),
            compacted("SUMMARY: did a lot", Some(replacement.clone())),
            RolloutItem::ResponseItem(ResponseItem::assistant_text("after")),
        ],
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let line: serde_json::Value = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|v| v["type"] == "compacted")
        .expect("a compacted line");
    assert_eq!(line["payload"]["message"], "SUMMARY: did a lot");
    assert_eq!(line["payload"]["replacement_history"][1]["role"], "user");

    let mut expected = replacement.clone();
    expected.push(ResponseItem::assistant_text("after"));
    assert_eq!(store.load(&id).unwrap().history(), expected);

    let (_w, forked) = store
        .fork(&id, SessionMeta::new("/w", "p", "m", SessionSource::Cli))
        .unwrap();
    assert_eq!(
        forked.history(),
        expected,
        "a fork starts from the compacted history"
    );
}

#[test]
fn compacted_record_without_replacement_history_keeps_the_summary() {
    let (_dir, store) = open();
    let (id, _) = thread_with(
        &store,
        &[
            RolloutItem::ResponseItem(ResponseItem::user_text("old")),
            compacted("the summary", None),
        ],
    );
    let history = store.load(&id).unwrap().history();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].message_text().as_deref(), Some("the summary"));
}

/// A resume leaves the report-only events unread (most of a long thread's bytes); what the
/// engine rebuilds a thread from must come out the same as from a full read.
#[test]
fn a_resume_rebuilds_what_a_full_read_does_without_the_report_only_events() {
    let (_dir, store) = open();
    let mut items = every_kind();
    items.pop(); // its stray session_meta: a record a rollout never holds after the first
    items.extend([
        RolloutItem::Compacted(CompactedItem {
            message: "summary of t1 and t2".into(),
            replacement_history: None,
        }),
        task_started("t3"),
        user_message("fetch it"),
        call("left"),
        task_note("left", "task-1", McpCallTaskState::Started),
        task_note("left", "task-1", McpCallTaskState::LeftRunning),
        output("left", "left running"),
        RolloutItem::EventMsg(EventMsg::Error(ErrorEvent {
            message: "the model server went away".into(),
            codex_error_info: None,
        })),
        task_complete("t3"),
        task_started("t4"),
        user_message("and then"),
        call("c9"),
    ]);
    let (id, path) = thread_with(&store, &items);
    let full = store.load(&id).unwrap();
    let (writer, resumed) = store.resume(&id).unwrap();
    drop(writer);

    let full_history = full.history();
    assert_eq!(resumed.history(), full_history);
    assert_eq!(full_history.len(), 5, "{full_history:?}");
    assert_eq!(resumed.pending_mcp_tasks(), full.pending_mcp_tasks());
    assert_eq!(resumed.pending_mcp_tasks().len(), 1);
    assert_eq!(resumed.summary.preview, full.summary.preview);
    let spans = |l: &oi_thread_store::LoadedThread| -> Vec<(String, TurnStatus, Option<String>)> {
        l.turn_spans()
            .into_iter()
            .map(|t| (t.id, t.status, t.error))
            .collect()
    };
    // The resume closed the open turn t4; the full read, taken before, sees it running.
    let mut expected = spans(&full);
    expected.last_mut().unwrap().1 = TurnStatus::Interrupted;
    assert_eq!(spans(&resumed), expected);
    assert_eq!(expected.len(), 4, "{expected:?}");
    // Left unread: the reasoning and token-count events.
    let kinds = |l: &oi_thread_store::LoadedThread| -> Vec<&'static str> {
        l.items
            .iter()
            .filter_map(|i| match i {
                RolloutItem::EventMsg(e) => Some(e.kind()),
                _ => None,
            })
            .collect()
    };
    assert!(kinds(&full).contains(&"token_count"));
    assert!(!kinds(&resumed).contains(&"token_count"));
    assert!(!kinds(&resumed).contains(&"agent_reasoning"));
    assert!(resumed.warnings.is_empty(), "{:?}", resumed.warnings);

    // A torn last line is still found when its event would be left unread.
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    f.write_all(br#"{"timestamp":"2026-01-01T00:00:00.000Z","type":"event_msg","payload":{"type":"token_count","info":nu"#)
        .unwrap();
    drop(f);
    let (writer, resumed) = store.resume(&id).unwrap();
    drop(writer);
    assert_eq!(resumed.warnings.len(), 1, "{:?}", resumed.warnings);
    assert!(resumed.warnings[0].contains("incomplete last line"));
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.ends_with("}\n"), "the fragment was not cut: {text:?}");
}
