//! Turns parked at approvals: parked durably instead of waited for, resumed with answers on
//! the same or another `ThreadManager` sharing the store (two managers in one test process
//! stand for two server processes; local files and PostgreSQL), refused when the answers
//! are not for what waits, expired, abandoned; and every turn's state read from the store.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use oi_core::{
    CoreError, ParkError, ParkedAnswer, ParkedRequest, StartTurn, ThreadManager, TurnEnd,
    TurnHandle, TurnOptions, TurnParkedEvent, TurnState,
};
use oi_protocol::ThreadId;
use oi_protocol::config_types::{AskForApproval, SandboxMode, WireApi};
use oi_protocol::protocol::{Event, EventMsg, ReviewDecision, TurnAbortReason};
use oi_protocol::user_input::UserInput;
use oi_test_support::{MockModelServer, MockResponse, MockScript, MockTurn};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(60);

/// `home`'s config: the mock model, `cwd = home`, no sandbox, approvals asked for every
/// command that is not known to be safe (`untrusted`), threads stored in `home` or, with
/// `pg`, in that database.
fn config(mock: &MockModelServer, home: &Path, pg: Option<&str>) -> oi_config::Config {
    config_with(mock, home, pg, AskForApproval::Untrusted)
}

fn config_with(
    mock: &MockModelServer,
    home: &Path,
    pg: Option<&str>,
    approval: AskForApproval,
) -> oi_config::Config {
    let mut toml = mock.config_toml("mock", WireApi::Chat);
    if let Some(url) = pg {
        toml.push_str(&format!("\n[thread_store]\nurl = \"{url}\"\n"));
    }
    std::fs::write(home.join("config.toml"), toml).unwrap();
    oi_config::load_config(oi_config::ConfigLoadOptions {
        home: Some(home.to_path_buf()),
        overrides: oi_config::ConfigOverrides {
            cwd: Some(home.to_path_buf()),
            sandbox_mode: Some(SandboxMode::DangerFullAccess),
            approval_policy: Some(approval),
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap()
    .config
}

fn input(text: &str) -> StartTurn {
    StartTurn::input(vec![UserInput::text(text)])
}

fn touch(file: &str) -> MockTurn {
    MockTurn::tool_call("shell", json!({"command": ["touch", file]}))
}

/// A command that appends a line to `file` each time it runs.
fn append_line(file: &str) -> MockTurn {
    MockTurn::tool_call(
        "shell",
        json!({"command": ["bash", "-c", format!("echo ran >> {file}")]}),
    )
}

/// Starts a turn that parks its approvals.
async fn start_parking(thread: &Arc<oi_core::Thread>, text: &str) -> TurnHandle {
    thread
        .start_turn_with(
            thread.subscribe(),
            oi_protocol::ids::new_id(),
            input(text),
            TurnOptions::parking(),
        )
        .await
        .unwrap()
}

/// Everything the handle returns, to its end (or its park).
async fn drain(turn: &mut TurnHandle) -> Vec<Event> {
    let mut out = Vec::new();
    while let Some(ev) = tokio::time::timeout(WAIT, turn.next())
        .await
        .expect("stuck turn")
    {
        out.push(ev);
    }
    out
}

/// Follows `turn` to its park and returns it.
async fn parked(turn: &mut TurnHandle) -> (TurnParkedEvent, Vec<Event>) {
    let events = drain(turn).await;
    match turn.end() {
        Some(TurnEnd::Parked(p)) => (p.clone(), events),
        other => panic!("the turn did not park: {other:?}; events: {events:?}"),
    }
}

/// Follows `turn` to its end; the last agent message of a completed turn.
async fn completed(turn: &mut TurnHandle) -> Option<String> {
    let events = drain(turn).await;
    match turn.end() {
        Some(TurnEnd::Completed {
            last_agent_message,
            failed: false,
        }) => last_agent_message.clone(),
        other => panic!("the turn did not complete: {other:?}; events: {events:?}"),
    }
}

fn answer_all(p: &TurnParkedEvent, decision: ReviewDecision) -> Vec<ParkedAnswer> {
    p.requests
        .iter()
        .map(|r| ParkedAnswer::new(r.id(), decision))
        .collect()
}

fn command_of(r: &ParkedRequest) -> Vec<String> {
    match r {
        ParkedRequest::Exec(e) => e.command.clone(),
        other => panic!("expected a command, got {other:?}"),
    }
}

/// The state of turn `turn` of thread `id`, read from `home`'s store by `m`.
async fn state(m: &ThreadManager, home: &Path, id: &ThreadId, turn: &str) -> TurnState {
    m.stored_threads(home)
        .await
        .unwrap()
        .turn_state(id, turn)
        .await
        .unwrap()
        .expect("no such turn")
}

/// How many records of each turn-ending kind thread `id`'s store holds for `turn`.
async fn ends_recorded(m: &ThreadManager, home: &Path, id: &ThreadId, turn: &str) -> usize {
    let loaded = m
        .stored_threads(home)
        .await
        .unwrap()
        .load(id)
        .await
        .unwrap();
    loaded
        .items
        .iter()
        .filter(|i| match i {
            oi_core::RolloutItem::EventMsg(EventMsg::TaskComplete(t)) => t.turn_id == turn,
            oi_core::RolloutItem::EventMsg(EventMsg::TurnAborted(t)) => {
                t.turn_id.as_deref() == Some(turn)
            }
            _ => false,
        })
        .count()
}

fn persisted() -> ThreadManager {
    common::manager(true)
}

#[tokio::test]
async fn a_parked_turn_resumed_with_approval_runs_the_command_and_completes() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        touch("approved.txt").with_call_id("call-1"),
        MockTurn::text("done"),
    ]))
    .await
    .unwrap();
    let m = persisted();
    let t = m
        .start_thread(config(&mock, home.path(), None))
        .await
        .unwrap();
    let mut turn = start_parking(&t.thread, "make the file").await;
    let turn_id = turn.id().to_string();
    let (park, events) = parked(&mut turn).await;

    // Parked, not asked: no approval event, nothing ran, the thread is idle.
    assert!(
        !events.iter().any(|e| matches!(
            e.msg,
            EventMsg::ExecApprovalRequest(_) | EventMsg::TaskComplete(_)
        )),
        "{events:?}"
    );
    assert_eq!(park.turn_id, turn_id);
    assert_eq!(park.requests.len(), 1);
    assert_eq!(park.requests[0].id(), "call-1");
    assert_eq!(command_of(&park.requests[0]), ["touch", "approved.txt"]);
    assert!(park.expires_at > park.parked_at);
    assert!(!home.path().join("approved.txt").exists());
    assert!(!t.thread.is_busy());
    assert_eq!(t.thread.parked_turn().as_ref(), Some(&park));
    assert_eq!(
        state(&m, home.path(), &t.thread_id, &turn_id).await,
        TurnState::Parked(park.clone())
    );

    let mut resumed = t
        .thread
        .resume_parked(
            &turn_id,
            &park.park_id,
            answer_all(&park, ReviewDecision::Approved),
        )
        .await
        .unwrap();
    assert_eq!(resumed.id(), turn_id);
    assert_eq!(completed(&mut resumed).await.as_deref(), Some("done"));
    assert!(home.path().join("approved.txt").exists());
    // The model saw the call's real output, once; and the turn ended once.
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 2);
    let outputs = reqs[1].tool_outputs();
    assert_eq!(outputs.len(), 1, "{outputs:?}");
    assert!(outputs[0].1.contains("Exit code: 0"), "{outputs:?}");
    assert_eq!(
        state(&m, home.path(), &t.thread_id, &turn_id).await,
        TurnState::Completed {
            last_agent_message: Some("done".into())
        }
    );
    assert_eq!(
        ends_recorded(&m, home.path(), &t.thread_id, &turn_id).await,
        1
    );
    assert!(t.thread.parked_turn().is_none());
    m.shutdown_all().await;
}

#[tokio::test]
async fn a_denied_parked_call_is_not_run_and_the_model_is_told() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        touch("denied.txt"),
        MockTurn::text("ok, not made"),
    ]))
    .await
    .unwrap();
    let m = persisted();
    let t = m
        .start_thread(config(&mock, home.path(), None))
        .await
        .unwrap();
    let mut turn = start_parking(&t.thread, "make the file").await;
    let (park, _) = parked(&mut turn).await;
    let mut resumed = t
        .thread
        .resume_parked(
            turn.id(),
            &park.park_id,
            answer_all(&park, ReviewDecision::Denied),
        )
        .await
        .unwrap();
    let events = drain(&mut resumed).await;
    assert!(
        matches!(resumed.end(), Some(TurnEnd::Completed { last_agent_message: Some(m), .. }) if m == "ok, not made"),
        "{events:?}"
    );
    assert!(!home.path().join("denied.txt").exists());
    let out = &mock.requests()[1].tool_outputs()[0].1;
    assert!(out.contains("the user denied it"), "{out}");
    m.shutdown_all().await;
}

#[tokio::test]
async fn abort_as_an_answer_ends_the_turn_without_running_anything() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([touch("never.txt")]))
        .await
        .unwrap();
    let m = persisted();
    let t = m
        .start_thread(config(&mock, home.path(), None))
        .await
        .unwrap();
    let mut turn = start_parking(&t.thread, "make the file").await;
    let (park, _) = parked(&mut turn).await;
    let mut resumed = t
        .thread
        .resume_parked(
            turn.id(),
            &park.park_id,
            answer_all(&park, ReviewDecision::Abort),
        )
        .await
        .unwrap();
    drain(&mut resumed).await;
    assert_eq!(
        resumed.end(),
        Some(&TurnEnd::Aborted(TurnAbortReason::Interrupted))
    );
    assert!(!home.path().join("never.txt").exists());
    assert_eq!(mock.requests().len(), 1, "the model is not asked again");
    assert_eq!(
        state(&m, home.path(), &t.thread_id, turn.id()).await,
        TurnState::Aborted {
            reason: TurnAbortReason::Interrupted
        }
    );
    m.shutdown_all().await;
}

/// Lets the thread go from `m` as a server does between requests: stopped, its writer
/// (file lock or lease) released once nothing holds it.
async fn let_go(m: &ThreadManager, id: &ThreadId, shared: bool) {
    if shared {
        assert!(m.release_if_shared(id).await, "the parked thread is idle");
    } else {
        let thread = m.remove_thread(id).unwrap();
        assert!(thread.shutdown(WAIT).await);
    }
}

/// Parks a turn on one manager, lets the thread go, and resumes it with an approval on a
/// second manager of the same store: the command runs there, once, and the turn completes
/// with its answer; both managers read the same state.
async fn resumed_on_another_manager(pg: Option<String>) {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        append_line("ran.txt").with_call_id("call-x"),
        MockTurn::text("ran it"),
    ]))
    .await
    .unwrap();
    let cfg = config(&mock, home.path(), pg.as_deref());
    let (first, second) = (persisted(), persisted());
    let (thread_id, turn_id, park) = {
        let t = first.start_thread(cfg.clone()).await.unwrap();
        let mut turn = start_parking(&t.thread, "append a line").await;
        let (park, _) = parked(&mut turn).await;
        (t.thread_id, turn.id().to_string(), park)
    };
    let_go(&first, &thread_id, pg.is_some()).await;

    // Any process reads the park.
    assert_eq!(
        state(&second, home.path(), &thread_id, &turn_id).await,
        TurnState::Parked(park.clone())
    );
    let mut resumed = second
        .resume_parked_turn(
            thread_id,
            cfg.clone(),
            &turn_id,
            &park.park_id,
            answer_all(&park, ReviewDecision::Approved),
        )
        .await
        .unwrap();
    assert_eq!(completed(&mut resumed).await.as_deref(), Some("ran it"));
    let ran = std::fs::read_to_string(home.path().join("ran.txt")).unwrap();
    assert_eq!(ran, "ran\n");
    // The history the second manager loaded left the parked call alone: the model saw
    // the call's real output, not a repair.
    let outputs = mock.requests()[1].tool_outputs();
    assert_eq!(outputs.len(), 1, "{outputs:?}");
    assert_eq!(outputs[0].0, "call-x");
    assert!(outputs[0].1.contains("Exit code: 0"), "{outputs:?}");
    let done = TurnState::Completed {
        last_agent_message: Some("ran it".into()),
    };
    assert_eq!(
        state(&second, home.path(), &thread_id, &turn_id).await,
        done
    );
    assert_eq!(state(&first, home.path(), &thread_id, &turn_id).await, done);
    assert_eq!(
        ends_recorded(&second, home.path(), &thread_id, &turn_id).await,
        1
    );

    // The same answers again, on the first manager, once the second lets the thread go:
    // refused, and nothing runs again.
    drop(resumed);
    let_go(&second, &thread_id, pg.is_some()).await;
    let again = first
        .resume_parked_turn(
            thread_id,
            cfg,
            &turn_id,
            &park.park_id,
            answer_all(&park, ReviewDecision::Approved),
        )
        .await;
    assert!(
        matches!(again, Err(ParkError::NotParked { .. })),
        "{:?}",
        again.err()
    );
    let ran = std::fs::read_to_string(home.path().join("ran.txt")).unwrap();
    assert_eq!(ran, "ran\n");
    first.shutdown_all().await;
    second.shutdown_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parked_turn_resumes_on_another_manager_with_local_files() {
    resumed_on_another_manager(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_parked_turn_resumes_on_another_manager_with_postgres() {
    let Some(url) = oi_thread_store::test_db::fresh_database(
        "a_parked_turn_resumes_on_another_manager_with_postgres",
    ) else {
        return;
    };
    resumed_on_another_manager(Some(url)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_managers_racing_to_resume_one_park_run_it_once() {
    let Some(url) =
        oi_thread_store::test_db::fresh_database("two_managers_racing_to_resume_one_park")
    else {
        return;
    };
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        append_line("ran.txt"),
        MockTurn::text("ran it"),
    ]))
    .await
    .unwrap();
    let cfg = config(&mock, home.path(), Some(&url));
    let (first, a, b) = (persisted(), persisted(), persisted());
    let (thread_id, turn_id, park) = {
        let t = first.start_thread(cfg.clone()).await.unwrap();
        let mut turn = start_parking(&t.thread, "append a line").await;
        let (park, _) = parked(&mut turn).await;
        (t.thread_id, turn.id().to_string(), park)
    };
    let_go(&first, &thread_id, true).await;
    let answers = answer_all(&park, ReviewDecision::Approved);
    let (ra, rb) = tokio::join!(
        a.resume_parked_turn(
            thread_id,
            cfg.clone(),
            &turn_id,
            &park.park_id,
            answers.clone()
        ),
        b.resume_parked_turn(
            thread_id,
            cfg.clone(),
            &turn_id,
            &park.park_id,
            answers.clone()
        ),
    );
    let (mut winner, winner_manager, loser, loser_manager) = match (ra, rb) {
        (Ok(h), Err(e)) => (h, &a, e, &b),
        (Err(e), Ok(h)) => (h, &b, e, &a),
        (ra, rb) => panic!(
            "exactly one resume must win: {:?} / {:?}",
            ra.map(|h| h.id().to_string()),
            rb.map(|h| h.id().to_string())
        ),
    };
    // The loser found the thread held by the winner (or, had the winner been quicker,
    // the park already answered).
    assert!(
        matches!(
            loser,
            ParkError::Thread(CoreError::ThreadBusy { .. }) | ParkError::NotParked { .. }
        ),
        "{loser:?}"
    );
    assert_eq!(completed(&mut winner).await.as_deref(), Some("ran it"));
    drop(winner);
    let_go(winner_manager, &thread_id, true).await;
    let late = loser_manager
        .resume_parked_turn(thread_id, cfg, &turn_id, &park.park_id, answers)
        .await;
    assert!(
        matches!(late, Err(ParkError::NotParked { .. })),
        "{:?}",
        late.err()
    );
    let ran = std::fs::read_to_string(home.path().join("ran.txt")).unwrap();
    assert_eq!(ran, "ran\n", "the approved command ran exactly once");
    for m in [&first, &a, &b] {
        m.shutdown_all().await;
    }
}

#[tokio::test]
async fn answers_that_are_not_for_what_waits_are_refused_and_the_turn_stays_parked() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        touch("made.txt").with_call_id("call-1"),
        MockTurn::text("done"),
    ]))
    .await
    .unwrap();
    let m = persisted();
    let t = m
        .start_thread(config(&mock, home.path(), None))
        .await
        .unwrap();
    let mut turn = start_parking(&t.thread, "make the file").await;
    let (park, _) = parked(&mut turn).await;
    let id = turn.id().to_string();
    let approve = |request: &str| ParkedAnswer::new(request, ReviewDecision::Approved);

    let r = t
        .thread
        .resume_parked(&id, &park.park_id, vec![approve("call-2")])
        .await;
    assert!(
        matches!(&r, Err(ParkError::UnknownRequest { request_id, pending, .. })
            if request_id == "call-2" && pending == &["call-1"]),
        "{:?}",
        r.err()
    );
    let r = t.thread.resume_parked(&id, &park.park_id, vec![]).await;
    assert!(
        matches!(&r, Err(ParkError::MissingAnswers { missing, .. }) if missing == &["call-1"]),
        "{:?}",
        r.err()
    );
    let twice = vec![approve("call-1"), approve("call-1")];
    let r = t.thread.resume_parked(&id, &park.park_id, twice).await;
    assert!(
        matches!(r, Err(ParkError::DuplicateAnswer { .. })),
        "{:?}",
        r.err()
    );
    let r = t
        .thread
        .resume_parked(&id, "another-park", vec![approve("call-1")])
        .await;
    assert!(
        matches!(r, Err(ParkError::StalePark { .. })),
        "{:?}",
        r.err()
    );
    let r = t
        .thread
        .resume_parked("another-turn", &park.park_id, vec![approve("call-1")])
        .await;
    assert!(
        matches!(r, Err(ParkError::NotParked { .. })),
        "{:?}",
        r.err()
    );
    assert!(!home.path().join("made.txt").exists());
    assert_eq!(
        state(&m, home.path(), &t.thread_id, &id).await,
        TurnState::Parked(park.clone())
    );

    // Still parked: the right answer resumes it, once.
    let mut resumed = t
        .thread
        .resume_parked(&id, &park.park_id, vec![approve("call-1")])
        .await
        .unwrap();
    let again = t
        .thread
        .resume_parked(&id, &park.park_id, vec![approve("call-1")])
        .await;
    assert!(
        matches!(
            again,
            Err(ParkError::Thread(CoreError::TurnRunning { .. }) | ParkError::NotParked { .. })
        ),
        "{:?}",
        again.err()
    );
    assert_eq!(completed(&mut resumed).await.as_deref(), Some("done"));
    let again = t
        .thread
        .resume_parked(&id, &park.park_id, vec![approve("call-1")])
        .await;
    assert!(
        matches!(again, Err(ParkError::NotParked { .. })),
        "{:?}",
        again.err()
    );
    assert!(home.path().join("made.txt").exists());
    m.shutdown_all().await;
}

#[tokio::test]
async fn a_park_past_its_expiry_ends_the_turn_and_nothing_runs() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([touch("late.txt")]))
        .await
        .unwrap();
    let m = persisted();
    let mut cfg = config(&mock, home.path(), None);
    // Expired the moment it parks (the setting's smallest value, 1 s, would need a wait).
    cfg.parked_turn_timeout = Duration::ZERO;
    let t = m.start_thread(cfg).await.unwrap();
    let mut turn = start_parking(&t.thread, "make the file").await;
    let (park, _) = parked(&mut turn).await;
    let id = turn.id().to_string();
    // The state read says so before anyone records it.
    let expired = TurnState::Expired {
        expires_at: park.expires_at,
    };
    assert_eq!(state(&m, home.path(), &t.thread_id, &id).await, expired);

    let mut events = t.thread.subscribe();
    let r = t
        .thread
        .resume_parked(
            &id,
            &park.park_id,
            answer_all(&park, ReviewDecision::Approved),
        )
        .await;
    assert!(
        matches!(&r, Err(ParkError::Expired { expires_at, .. }) if *expires_at == park.expires_at),
        "{:?}",
        r.err()
    );
    let end = tokio::time::timeout(WAIT, events.next())
        .await
        .unwrap()
        .unwrap();
    assert!(
        matches!(&end.msg, EventMsg::TurnAborted(a) if a.turn_id.as_deref() == Some(id.as_str())),
        "{end:?}"
    );
    assert!(!home.path().join("late.txt").exists());
    assert_eq!(state(&m, home.path(), &t.thread_id, &id).await, expired);
    assert!(t.thread.parked_turn().is_none());
    assert_eq!(ends_recorded(&m, home.path(), &t.thread_id, &id).await, 1);
    m.shutdown_all().await;
}

#[tokio::test]
async fn a_new_turn_abandons_the_parked_one_and_the_history_stays_valid() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        touch("abandoned.txt").with_call_id("call-p"),
        MockTurn::text("something else done"),
    ]))
    .await
    .unwrap();
    let m = persisted();
    let t = m
        .start_thread(config(&mock, home.path(), None))
        .await
        .unwrap();
    let mut turn = start_parking(&t.thread, "make the file").await;
    let (park, _) = parked(&mut turn).await;
    let parked_id = turn.id().to_string();

    let mut watch = t.thread.subscribe();
    let mut next = t
        .thread
        .start_turn(input("do something else"))
        .await
        .unwrap();
    assert_eq!(
        completed(&mut next).await.as_deref(),
        Some("something else done")
    );
    // The parked turn ended first, as replaced.
    let first_end = loop {
        let ev = tokio::time::timeout(WAIT, watch.next())
            .await
            .unwrap()
            .unwrap();
        if ev.msg.ends_turn() {
            break ev;
        }
    };
    assert_eq!(first_end.id, parked_id);
    assert!(
        matches!(&first_end.msg, EventMsg::TurnAborted(a) if a.reason == TurnAbortReason::Replaced),
        "{first_end:?}"
    );
    // The model got an output for the abandoned call before the new input.
    let outputs = mock.requests()[1].tool_outputs();
    assert_eq!(outputs.len(), 1, "{outputs:?}");
    assert_eq!(outputs[0].0, "call-p");
    assert!(outputs[0].1.contains("a new turn started"), "{outputs:?}");
    assert!(!home.path().join("abandoned.txt").exists());
    assert_eq!(
        state(&m, home.path(), &t.thread_id, &parked_id).await,
        TurnState::Aborted {
            reason: TurnAbortReason::Replaced
        }
    );
    let r = t
        .thread
        .resume_parked(
            &parked_id,
            &park.park_id,
            answer_all(&park, ReviewDecision::Approved),
        )
        .await;
    assert!(
        matches!(r, Err(ParkError::NotParked { .. })),
        "{:?}",
        r.err()
    );
    m.shutdown_all().await;
}

#[tokio::test]
async fn interrupting_a_parked_turn_ends_it() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([touch("x.txt")]))
        .await
        .unwrap();
    let m = persisted();
    let t = m
        .start_thread(config(&mock, home.path(), None))
        .await
        .unwrap();
    let mut turn = start_parking(&t.thread, "make the file").await;
    parked(&mut turn).await;
    let mut watch = t.thread.subscribe();
    t.thread.interrupt().await.unwrap();
    let end = tokio::time::timeout(WAIT, watch.next())
        .await
        .unwrap()
        .unwrap();
    assert!(
        matches!(&end.msg, EventMsg::TurnAborted(a) if a.reason == TurnAbortReason::Interrupted && a.turn_id.as_deref() == Some(turn.id())),
        "{end:?}"
    );
    assert_eq!(
        state(&m, home.path(), &t.thread_id, turn.id()).await,
        TurnState::Aborted {
            reason: TurnAbortReason::Interrupted
        }
    );
    m.shutdown_all().await;
}

#[tokio::test]
async fn later_calls_of_the_response_wait_with_the_parked_one_and_park_again_in_order() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        touch("first.txt")
            .with_call_id("c1")
            .with_tool_call("shell", json!({"command": ["touch", "second.txt"]})),
        MockTurn::text("both made"),
    ]))
    .await
    .unwrap();
    let m = persisted();
    let t = m
        .start_thread(config(&mock, home.path(), None))
        .await
        .unwrap();
    let mut turn = start_parking(&t.thread, "make two files").await;
    let (first, _) = parked(&mut turn).await;
    assert_eq!(first.requests.len(), 1, "{first:?}");
    assert_eq!(command_of(&first.requests[0]), ["touch", "first.txt"]);

    let mut resumed = t
        .thread
        .resume_parked(
            turn.id(),
            &first.park_id,
            answer_all(&first, ReviewDecision::Approved),
        )
        .await
        .unwrap();
    // The first ran; the second asks now, in a park of its own.
    let (second, _) = parked(&mut resumed).await;
    assert!(home.path().join("first.txt").exists());
    assert!(!home.path().join("second.txt").exists());
    assert_ne!(second.park_id, first.park_id);
    assert_eq!(second.turn_id, first.turn_id);
    assert_eq!(command_of(&second.requests[0]), ["touch", "second.txt"]);
    assert_eq!(mock.requests().len(), 1, "the model waits for both outputs");

    let mut resumed = t
        .thread
        .resume_parked(
            turn.id(),
            &second.park_id,
            answer_all(&second, ReviewDecision::Approved),
        )
        .await
        .unwrap();
    assert_eq!(completed(&mut resumed).await.as_deref(), Some("both made"));
    assert!(home.path().join("second.txt").exists());
    let outputs = mock.requests()[1].tool_outputs();
    assert_eq!(outputs.len(), 2, "{outputs:?}");
    assert_eq!(
        ends_recorded(&m, home.path(), &t.thread_id, turn.id()).await,
        1
    );
    m.shutdown_all().await;
}

#[tokio::test]
async fn a_patch_approval_parks_and_a_diff_that_changed_meanwhile_is_asked_again() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("notes.txt"), "one\n").unwrap();
    let patch = "*** Begin Patch\n*** Update File: notes.txt\n@@\n-one\n+two\n*** End Patch";
    let mock = MockModelServer::start(MockScript::turns([
        MockTurn::tool_call("apply_patch", json!({"input": patch})).with_call_id("p1"),
        MockTurn::text("patched"),
    ]))
    .await
    .unwrap();
    let m = persisted();
    let t = m
        .start_thread(config(&mock, home.path(), None))
        .await
        .unwrap();
    let mut turn = start_parking(&t.thread, "change one to two").await;
    let (park, _) = parked(&mut turn).await;
    assert!(
        matches!(&park.requests[0], ParkedRequest::Patch(p) if p.call_id == "p1"),
        "{park:?}"
    );
    // The file changes while the turn waits: the approved diff is not what would apply.
    std::fs::write(home.path().join("notes.txt"), "zero\none\n").unwrap();
    let mut resumed = t
        .thread
        .resume_parked(
            turn.id(),
            &park.park_id,
            answer_all(&park, ReviewDecision::Approved),
        )
        .await
        .unwrap();
    let (again, events) = parked(&mut resumed).await;
    assert!(
        events.iter().any(|e| matches!(&e.msg, EventMsg::Warning(w) if w.message.contains("changed since it was asked"))),
        "{events:?}"
    );
    assert_ne!(again.park_id, park.park_id);
    assert_eq!(again.requests[0].id(), "p1");
    assert_eq!(
        std::fs::read_to_string(home.path().join("notes.txt")).unwrap(),
        "zero\none\n",
        "nothing applied without an approval of this diff"
    );
    let mut resumed = t
        .thread
        .resume_parked(
            turn.id(),
            &again.park_id,
            answer_all(&again, ReviewDecision::Approved),
        )
        .await
        .unwrap();
    assert_eq!(completed(&mut resumed).await.as_deref(), Some("patched"));
    assert_eq!(
        std::fs::read_to_string(home.path().join("notes.txt")).unwrap(),
        "zero\ntwo\n"
    );
    m.shutdown_all().await;
}

/// A turn's state for each way it can be: running (with what it runs), failed, and one
/// whose process died mid-turn (records without an end, nobody holding the thread).
async fn turn_states(pg: Option<String>) {
    let home = tempfile::tempdir().unwrap();
    let wait_for_go = "while [ ! -e go ]; do sleep 0.02; done";
    let mock = MockModelServer::start(MockScript::new(vec![
        MockTurn::tool_call("shell", json!({"command": ["bash", "-c", wait_for_go]})).into(),
        MockTurn::text("went").into(),
        MockResponse::error(400, "the model refuses"),
    ]))
    .await
    .unwrap();
    let cfg = config_with(&mock, home.path(), pg.as_deref(), AskForApproval::Never);
    let (runner, reader) = (persisted(), persisted());
    let t = runner.start_thread(cfg.clone()).await.unwrap();

    // Running: read by another manager while the command waits.
    let mut turn = t.thread.start_turn(input("wait for go")).await.unwrap();
    loop {
        let ev = tokio::time::timeout(WAIT, turn.next())
            .await
            .unwrap()
            .unwrap();
        if matches!(ev.msg, EventMsg::ExecCommandBegin(_)) {
            break;
        }
    }
    let running = state(&reader, home.path(), &t.thread_id, turn.id()).await;
    assert_eq!(
        running,
        TurnState::Running {
            activity: Some(format!("running `{wait_for_go}`"))
        }
    );
    std::fs::write(home.path().join("go"), "").unwrap();
    assert_eq!(completed(&mut turn).await.as_deref(), Some("went"));

    // Failed.
    let mut turn = t.thread.start_turn(input("fail")).await.unwrap();
    drain(&mut turn).await;
    match state(&reader, home.path(), &t.thread_id, turn.id()).await {
        TurnState::Failed { error } => assert!(error.contains("the model refuses"), "{error}"),
        other => panic!("expected a failed turn, got {other:?}"),
    }
    assert_eq!(
        reader
            .stored_threads(home.path())
            .await
            .unwrap()
            .turn_state(&t.thread_id, "no-such-turn")
            .await
            .unwrap(),
        None
    );
    drop((t, turn));
    runner.shutdown_all().await;

    // A process died mid-turn: its records end without the turn's end, and nothing holds
    // the thread any more.
    let store = reader.stored_threads(home.path()).await.unwrap();
    let dead = dead_process_thread(home.path(), pg.as_deref()).await;
    assert_eq!(
        store.turn_state(&dead, "dead-turn").await.unwrap(),
        Some(TurnState::Orphaned)
    );
    // An outline read before the turn's end was written, asked after its holder let the
    // thread go (a server parks or ends a turn, then releases it, between another server's
    // read and its question "is it held?"): the turn is read again, not called orphaned.
    let stale = store.outline(&dead).await.unwrap();
    let loaded = reader.resume_thread(dead, cfg.clone()).await.unwrap();
    drop(loaded);
    let thread = reader.remove_thread(&dead).unwrap();
    assert!(thread.shutdown(WAIT).await);
    match store.turn_state_in(&stale, "dead-turn").await.unwrap() {
        Some(TurnState::Aborted { .. }) => {}
        other => panic!("a turn ended after the outline was read: {other:?}"),
    }
    reader.shutdown_all().await;
}

/// A thread whose last turn began and never ended, written the way a killed process
/// leaves it (records appended, then the writer gone), straight through the store.
async fn dead_process_thread(home: &Path, pg: Option<&str>) -> ThreadId {
    use oi_thread_store::{
        RolloutItem, SessionMeta, SessionSource, StoreLocation, StoreTimeouts, ThreadStore,
    };
    let location = StoreLocation::from_url(pg).unwrap();
    let store = ThreadStore::open_with_async(home, &location, StoreTimeouts::default())
        .await
        .unwrap();
    let meta = SessionMeta::new(home, "mock", "mock-model", SessionSource::Exec);
    let id = meta.id;
    let mut writer = store.create_async(meta).await.unwrap();
    let started = EventMsg::TaskStarted(oi_protocol::protocol::TaskStartedEvent {
        turn_id: "dead-turn".into(),
        started_at: Some(chrono_now()),
        model_context_window: None,
        model_context_window_source: None,
        collaboration_mode_kind: "default".into(),
    });
    let call = oi_protocol::models::ResponseItem::FunctionCall {
        call_id: "c".into(),
        name: "shell".into(),
        arguments: r#"{"command":["sleep","100"]}"#.into(),
    };
    writer
        .append_all_async(&[
            RolloutItem::EventMsg(started),
            RolloutItem::ResponseItem(call),
        ])
        .await
        .unwrap();
    writer.close_async().await.unwrap();
    // Closed, the thread is free once no process holds a copy of its lock: a command that
    // another test of this process spawned while the rollout was open holds one until it
    // execs (local files; `lock` waits such windows out the same way).
    let deadline = tokio::time::Instant::now() + WAIT;
    while store.is_held_async(&id).await.unwrap() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the dead thread stays held"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    id
}

fn chrono_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turn_states_read_from_local_files() {
    turn_states(None).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn turn_states_read_from_postgres() {
    let Some(url) = oi_thread_store::test_db::fresh_database("turn_states_read_from_postgres")
    else {
        return;
    };
    turn_states(Some(url)).await;
}

/// A directory outside every writable root of the workspace-write sandbox (not under /tmp).
fn outside_dir() -> tempfile::TempDir {
    let base = std::env::var_os("HOME")
        .map(std::path::PathBuf::from)
        .filter(|h| h.is_dir() && !h.starts_with("/tmp"))
        .unwrap_or_else(|| std::path::PathBuf::from("/var/tmp"));
    tempfile::Builder::new()
        .prefix("oi-outside-")
        .tempdir_in(base)
        .unwrap()
}

/// `on-failure`: the sandbox stops a command, and the question whether to run it again
/// outside the sandbox parks. Resumed, the command is not run in the sandbox a second time:
/// approved, it runs once more, unconfined; denied, the model gets the sandboxed run's output.
#[tokio::test]
async fn a_parked_rerun_outside_the_sandbox_does_not_run_the_command_in_it_again() {
    for (decision, runs, written) in [
        (ReviewDecision::Approved, "ran\nran\n", true),
        (ReviewDecision::Denied, "ran\n", false),
    ] {
        let home = tempfile::tempdir().unwrap();
        let outside = outside_dir();
        let target = outside.path().join("target.txt");
        let script = format!("echo ran >> runs.txt; echo hi > {}", target.display());
        let mock = MockModelServer::start(MockScript::turns([
            MockTurn::tool_call("shell", json!({"command": ["bash", "-c", script]}))
                .with_call_id("s1"),
            MockTurn::text("done"),
        ]))
        .await
        .unwrap();
        let mut toml = mock.config_toml("mock", WireApi::Chat);
        toml.push('\n');
        std::fs::write(home.path().join("config.toml"), toml).unwrap();
        let cfg = oi_config::load_config(oi_config::ConfigLoadOptions {
            home: Some(home.path().to_path_buf()),
            overrides: oi_config::ConfigOverrides {
                cwd: Some(home.path().to_path_buf()),
                sandbox_mode: Some(SandboxMode::WorkspaceWrite),
                approval_policy: Some(AskForApproval::OnFailure),
                ..Default::default()
            },
            ..Default::default()
        })
        .unwrap()
        .config;
        let m = persisted();
        let t = m.start_thread(cfg).await.unwrap();
        let mut turn = start_parking(&t.thread, "write outside").await;
        let (park, _) = parked(&mut turn).await;
        let runs_file = home.path().join("runs.txt");
        assert_eq!(std::fs::read_to_string(&runs_file).unwrap(), "ran\n");
        assert_eq!(park.requests[0].id(), "s1-retry", "{park:?}");
        assert!(!target.exists());
        let mut resumed = t
            .thread
            .resume_parked(turn.id(), &park.park_id, answer_all(&park, decision))
            .await
            .unwrap();
        assert_eq!(completed(&mut resumed).await.as_deref(), Some("done"));
        assert_eq!(
            std::fs::read_to_string(&runs_file).unwrap(),
            runs,
            "{decision:?}"
        );
        assert_eq!(target.exists(), written, "{decision:?}");
        let outputs = mock.requests()[1].tool_outputs();
        assert_eq!(outputs.len(), 1, "{outputs:?}");
        let expected_exit = if written {
            "Exit code: 0"
        } else {
            "Exit code: 1"
        };
        assert!(
            outputs[0].1.contains(expected_exit),
            "{decision:?}: {outputs:?}"
        );
        m.shutdown_all().await;
    }
}

/// Servers await these on their tasks: the futures must be `Send` (checked when compiled).
#[allow(dead_code, clippy::needless_pass_by_value)]
fn parking_futures_are_send(
    m: ThreadManager,
    stored: oi_core::StoredThreads,
    thread: Arc<oi_core::Thread>,
    cfg: oi_config::Config,
    outline: oi_core::ThreadOutline,
) {
    fn send<T: Send>(_: T) {}
    let id = ThreadId::new();
    send(stored.turn_state(&id, "t"));
    send(stored.turn_state_in(&outline, "t"));
    send(thread.resume_parked("t", "p", Vec::new()));
    send(thread.start_turn_with(
        thread.subscribe(),
        "t".into(),
        input("x"),
        TurnOptions::parking(),
    ));
    send(m.resume_parked_turn(id, cfg, "t", "p", Vec::new()));
}
