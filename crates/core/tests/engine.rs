//! The engine through its public API: concurrency, approvals, steering, fork, shutdown.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use oi_core::{NewThread, Thread};
use oi_protocol::config_types::{AskForApproval, SandboxMode};
use oi_protocol::protocol::{Event, EventMsg, Op, ReviewDecision, TurnOverrides};
use oi_protocol::user_input::UserInput;
use oi_test_support::{MockModelServer, MockScript, MockTurn};
use serde_json::json;
use std::path::Path;
use std::time::Duration;

fn config(mock: &MockModelServer, home: &Path, approval: AskForApproval) -> oi_config::Config {
    common::mock_config(mock, home, approval, SandboxMode::DangerFullAccess)
}

use common::manager;

async fn submit(thread: &Thread, text: &str) -> String {
    common::watch(thread);
    thread
        .submit(Op::UserInput {
            items: vec![UserInput::text(text)],
            overrides: TurnOverrides::default(),
        })
        .await
        .unwrap()
}

async fn next(thread: &Thread) -> Event {
    common::next_watched(thread).await.expect("thread closed")
}

/// Events until the end of turn `id` (inclusive).
async fn until_end(thread: &Thread, id: &str) -> Vec<Event> {
    let mut out = Vec::new();
    loop {
        let ev = next(thread).await;
        let end = ev.id == id && ev.msg.ends_turn();
        out.push(ev);
        if end {
            return out;
        }
    }
}

/// Run a turn, answering every command approval with `decision`. Returns the commands that
/// asked for approval.
async fn turn_answering(
    thread: &Thread,
    prompt: &str,
    decision: ReviewDecision,
) -> Vec<Vec<String>> {
    let id = submit(thread, prompt).await;
    let mut asked = Vec::new();
    loop {
        let ev = next(thread).await;
        if let EventMsg::ExecApprovalRequest(req) = &ev.msg {
            asked.push(req.command.clone());
            thread
                .submit(Op::ExecApproval {
                    id: req.effective_approval_id().to_string(),
                    decision,
                })
                .await
                .unwrap();
        }
        if ev.id == id && ev.msg.ends_turn() {
            return asked;
        }
    }
}

fn last_message(evs: &[Event]) -> Option<String> {
    evs.iter().find_map(|e| match &e.msg {
        EventMsg::TaskComplete(t) => t.last_agent_message.clone(),
        _ => None,
    })
}

#[tokio::test]
async fn many_threads_run_at_once() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::always(
        MockTurn::text("answer").chunked(2).with_delay_ms(5),
    ))
    .await
    .unwrap();
    let m = manager(false);
    let mut threads: Vec<NewThread> = Vec::new();
    for _ in 0..8 {
        threads.push(
            m.start_thread(config(&mock, home.path(), AskForApproval::Never))
                .await
                .unwrap(),
        );
    }
    let runs = threads.iter().enumerate().map(|(i, t)| {
        let thread = t.thread.clone();
        async move {
            let id = submit(&thread, &format!("question {i}")).await;
            let evs = until_end(&thread, &id).await;
            // Every event of the turn carries the turn's id.
            assert!(
                evs.iter().all(|e| e.id == id),
                "foreign events in thread {i}"
            );
            last_message(&evs)
        }
    });
    let answers = futures::future::join_all(runs).await;
    assert!(
        answers.iter().all(|a| a.as_deref() == Some("answer")),
        "{answers:?}"
    );
    let mut ids: Vec<_> = threads.iter().map(|t| t.thread_id).collect();
    ids.dedup();
    assert_eq!(ids.len(), 8);
    assert_eq!(mock.requests().len(), 8);
    m.shutdown_all().await;
}

#[tokio::test]
async fn approved_commands_run_and_denied_ones_do_not() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        MockTurn::tool_call("shell", json!({"command": ["touch", "approved.txt"]})),
        MockTurn::text("first done"),
        MockTurn::tool_call("shell", json!({"command": ["touch", "denied.txt"]})),
        MockTurn::text("second done"),
    ]))
    .await
    .unwrap();
    let m = manager(false);
    let t = m
        .start_thread(config(&mock, home.path(), AskForApproval::Untrusted))
        .await
        .unwrap();
    for (prompt, decision, file, should_exist) in [
        ("make it", ReviewDecision::Approved, "approved.txt", true),
        ("make another", ReviewDecision::Denied, "denied.txt", false),
    ] {
        let asked = turn_answering(&t.thread, prompt, decision).await;
        assert_eq!(asked, vec![vec!["touch".to_string(), file.to_string()]]);
        assert_eq!(home.path().join(file).exists(), should_exist, "{file}");
    }
    let reqs = mock.requests();
    assert!(reqs[3].tool_outputs().last().unwrap().1.contains("denied"));
}

#[tokio::test]
async fn an_unanswered_approval_times_out_as_denied() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        MockTurn::tool_call("shell", json!({"command": ["touch", "never.txt"]})),
        MockTurn::text("ok"),
    ]))
    .await
    .unwrap();
    let m = manager(false);
    let mut cfg = config(&mock, home.path(), AskForApproval::Untrusted);
    cfg.approval_timeout = Duration::from_millis(200);
    let t = m.start_thread(cfg).await.unwrap();
    let id = submit(&t.thread, "touch").await;
    let evs = until_end(&t.thread, &id).await;
    assert!(
        evs.iter()
            .any(|e| matches!(e.msg, EventMsg::ExecApprovalRequest(_)))
    );
    assert!(matches!(evs.last().unwrap().msg, EventMsg::TaskComplete(_)));
    assert!(!home.path().join("never.txt").exists());
    let out = &mock.requests()[1].tool_outputs()[0].1;
    assert!(out.contains("no approval arrived in time"), "{out}");
}

#[tokio::test]
async fn steering_input_reaches_the_running_turn() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        MockTurn::tool_call("shell", json!({"command": ["sleep", "0.5"]})),
        MockTurn::text("saw the steer"),
    ]))
    .await
    .unwrap();
    let m = manager(false);
    let t = m
        .start_thread(config(&mock, home.path(), AskForApproval::Never))
        .await
        .unwrap();
    let id = submit(&t.thread, "start").await;
    // Steer once the command is running.
    loop {
        let ev = next(&t.thread).await;
        if matches!(ev.msg, EventMsg::ExecCommandBegin(_)) {
            assert_eq!(t.thread.active_turn_id().as_deref(), Some(id.as_str()));
            submit(&t.thread, "also do this").await;
            break;
        }
    }
    let evs = until_end(&t.thread, &id).await;
    assert_eq!(last_message(&evs).as_deref(), Some("saw the steer"));
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 2, "the steer must not start a second turn");
    assert_eq!(reqs[1].last_user_text().as_deref(), Some("also do this"));
}

#[tokio::test]
async fn interrupt_then_continue_and_fork() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        MockTurn::text("stuck").chunked(1).stall_after(1),
        MockTurn::text("back"),
        MockTurn::text("fork answer"),
        MockTurn::text("original answer"),
    ]))
    .await
    .unwrap();
    let m = manager(true);
    let t = m
        .start_thread(config(&mock, home.path(), AskForApproval::Never))
        .await
        .unwrap();
    let id = submit(&t.thread, "first").await;
    mock.wait_for_requests(1, Duration::from_secs(30)).await;
    t.thread.submit(Op::Interrupt).await.unwrap();
    let evs = until_end(&t.thread, &id).await;
    assert!(matches!(evs.last().unwrap().msg, EventMsg::TurnAborted(_)));
    assert!(!t.thread.is_busy());
    let id2 = submit(&t.thread, "second").await;
    assert_eq!(
        last_message(&until_end(&t.thread, &id2).await).as_deref(),
        Some("back")
    );

    // Fork: the copy has the history and goes its own way.
    let cfg = config(&mock, home.path(), AskForApproval::Never);
    let f = m.fork_thread(t.thread_id, cfg).await.unwrap();
    assert_ne!(f.thread_id, t.thread_id);
    assert_eq!(f.session_configured.forked_from_id, Some(t.thread_id));
    let fid = submit(&f.thread, "fork question").await;
    until_end(&f.thread, &fid).await;
    let oid = submit(&t.thread, "original question").await;
    until_end(&t.thread, &oid).await;
    let reqs = mock.requests();
    let fork_req = reqs[reqs.len() - 2].all_text();
    let orig_req = reqs[reqs.len() - 1].all_text();
    assert!(fork_req.contains("second") && fork_req.contains("fork question"));
    assert!(!fork_req.contains("original question"));
    assert!(orig_req.contains("second") && !orig_req.contains("fork question"));
    m.shutdown_all().await;
}

#[tokio::test]
async fn shutdown_ends_the_event_stream() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([])).await.unwrap();
    let m = manager(false);
    let t = m
        .start_thread(config(&mock, home.path(), AskForApproval::Never))
        .await
        .unwrap();
    common::watch(&t.thread);
    t.thread.submit(Op::Shutdown).await.unwrap();
    let ev = next(&t.thread).await;
    assert!(matches!(ev.msg, EventMsg::ShutdownComplete));
    assert!(common::next_watched(&t.thread).await.is_none());
    assert!(t.thread.submit(Op::Interrupt).await.is_err());
}

#[tokio::test]
async fn approved_for_session_is_remembered_for_the_exact_command() {
    let home = tempfile::tempdir().unwrap();
    let touch = |f: &str| MockTurn::tool_call("shell", json!({"command": ["touch", f]}));
    let mock = MockModelServer::start(MockScript::turns([
        touch("a.txt"),
        MockTurn::text("one"),
        touch("a.txt"),
        MockTurn::text("two"),
        touch("b.txt"),
        MockTurn::text("three"),
    ]))
    .await
    .unwrap();
    let m = manager(false);
    let t = m
        .start_thread(config(&mock, home.path(), AskForApproval::Untrusted))
        .await
        .unwrap();
    let mut asked = Vec::new();
    for prompt in ["first", "again", "other file"] {
        for cmd in turn_answering(&t.thread, prompt, ReviewDecision::ApprovedForSession).await {
            asked.push(cmd[1].clone());
        }
    }
    // Asked once for a.txt (then remembered), and again for the different command.
    assert_eq!(asked, vec!["a.txt".to_string(), "b.txt".to_string()]);
    assert!(home.path().join("a.txt").exists() && home.path().join("b.txt").exists());
}

#[tokio::test]
async fn stored_threads_record_the_repository() {
    let home = tempfile::tempdir().unwrap();
    let git = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(home.path())
            .output()
            .unwrap()
    };
    git(&["init", "-q", "-b", "trunk"]);
    git(&[
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "commit",
        "-q",
        "--allow-empty",
        "-m",
        "x",
    ]);
    let mock = MockModelServer::start(MockScript::turns([])).await.unwrap();
    let m = manager(true);
    let t = m
        .start_thread(config(&mock, home.path(), AskForApproval::Never))
        .await
        .unwrap();
    let loaded = m.store(home.path()).unwrap().load(&t.thread_id).unwrap();
    let info = loaded.meta.git.expect("git info recorded");
    assert_eq!(info.branch.as_deref(), Some("trunk"));
    m.shutdown_all().await;
}

/// What front ends do with stored threads goes through the engine's façade, on the store
/// the engine opened: read, rename, archive, delete; a request the store refuses as asked
/// (a cursor it did not hand out) keeps that kind, an unknown id is `ThreadNotFound`.
#[tokio::test]
async fn stored_threads_are_read_renamed_archived_and_deleted_through_the_engine() {
    use oi_core::{CoreError, ListQuery};
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([])).await.unwrap();
    let m = manager(true);
    let t = m
        .start_thread(config(&mock, home.path(), AskForApproval::Never))
        .await
        .unwrap();
    let id = t.thread_id;
    m.shutdown_all().await;

    let stored = m.stored_threads(home.path()).await.unwrap();
    assert!(stored.get(&id).await.unwrap().is_some());
    assert_eq!(stored.load(&id).await.unwrap().summary.id, id);
    stored
        .set_name(&id, Some("  named  ".into()))
        .await
        .unwrap();
    let summary = stored.get(&id).await.unwrap().unwrap();
    assert_eq!(summary.name.as_deref(), Some("named"));

    let listed = |archived: Option<bool>| {
        let stored = stored.clone();
        async move {
            let q = ListQuery {
                archived,
                ..ListQuery::default()
            };
            let page = stored.list(&q).await.unwrap();
            page.data.iter().any(|s| s.id == id)
        }
    };
    assert!(listed(None).await);
    stored.set_archived(&id, true).await.unwrap();
    assert!(!listed(None).await, "an archived thread is hidden");
    assert!(listed(Some(true)).await);
    stored.set_archived(&id, false).await.unwrap();
    assert!(listed(None).await);

    let bad = ListQuery {
        cursor: Some("not a cursor".into()),
        ..ListQuery::default()
    };
    let e = stored.list(&bad).await.expect_err("a bad cursor fails");
    assert!(matches!(e, CoreError::StoreRequest(_)), "{e:?}");

    stored.delete(&id).await.unwrap();
    assert!(stored.get(&id).await.unwrap().is_none());
    let e = stored
        .load(&id)
        .await
        .expect_err("a deleted thread is gone");
    assert!(matches!(e, CoreError::ThreadNotFound(_)), "{e:?}");
}
