//! Threads publish their events: every subscriber sees every event; a turn is started
//! through a `TurnHandle` that ends at its own terminal event; "busy" is an active turn.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use oi_core::{
    CoreError, EventStream, PendingRequest, StartTurn, Stop, ThreadManager, TurnEnd, TurnFrontEnd,
    TurnHandle,
};
use oi_protocol::config_types::{AskForApproval, SandboxMode};
use oi_protocol::protocol::{Event, EventMsg, ReviewDecision, TurnAbortReason};
use oi_protocol::user_input::UserInput;
use oi_test_support::{MockModelServer, MockScript, MockTurn};
use serde_json::json;
use std::path::Path;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(60);

fn config(mock: &MockModelServer, home: &Path, approval: AskForApproval) -> oi_config::Config {
    common::mock_config(mock, home, approval, SandboxMode::DangerFullAccess)
}

fn manager() -> ThreadManager {
    common::manager(false)
}

fn input(text: &str) -> StartTurn {
    StartTurn::input(vec![UserInput::text(text)])
}

/// Everything the handle returns, to its end.
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

/// The first thing the turn asks (its events up to it are skipped).
async fn first_request(turn: &mut TurnHandle) -> PendingRequest {
    loop {
        let ev = tokio::time::timeout(WAIT, turn.next())
            .await
            .expect("no event in time")
            .expect("the turn ended before asking");
        if let Some(r) = PendingRequest::of(&ev.msg) {
            return r;
        }
    }
}

/// Events from `stream` up to and including the end of turn `id`.
async fn until_end(stream: &mut EventStream, id: &str) -> Vec<Event> {
    let mut out = Vec::new();
    loop {
        let ev = tokio::time::timeout(WAIT, stream.next())
            .await
            .expect("no event in time")
            .expect("thread closed");
        let end = ev.id == id && ev.msg.ends_turn();
        out.push(ev);
        if end {
            return out;
        }
    }
}

fn kinds(evs: &[Event]) -> Vec<String> {
    evs.iter()
        .map(|e| {
            serde_json::to_value(&e.msg).unwrap()["type"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect()
}

#[tokio::test]
async fn every_subscriber_sees_the_whole_turn_in_order() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([MockTurn::text("seen by all")]))
        .await
        .unwrap();
    let m = manager();
    let mut new = m
        .start_thread(config(&mock, home.path(), AskForApproval::Never))
        .await
        .unwrap();
    let mut watcher = new.thread.subscribe();
    let mut turn = new.thread.start_turn(input("hi")).await.unwrap();
    let id = turn.id().to_string();
    let by_handle = drain(&mut turn).await;
    assert_eq!(
        turn.end(),
        Some(&TurnEnd::Completed {
            last_agent_message: Some("seen by all".into()),
            failed: false
        })
    );
    let by_watcher = until_end(&mut watcher, &id).await;
    let by_creator = until_end(&mut new.events, &id).await;
    assert_eq!(kinds(&by_handle), kinds(&by_watcher));
    // The creator's stream also holds what came before the turn (none here but the turn).
    assert!(kinds(&by_creator).ends_with(&kinds(&by_handle)));
    assert_eq!(
        kinds(&by_handle).first().map(String::as_str),
        Some("task_started")
    );
    m.shutdown_all().await;
}

#[tokio::test]
async fn a_turn_is_refused_while_one_runs_and_the_handle_answers_its_approval() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        MockTurn::tool_call("shell", json!({"command": ["touch", "approved.txt"]})),
        MockTurn::text("first done"),
        MockTurn::text("second done"),
    ]))
    .await
    .unwrap();
    let m = manager();
    let new = m
        .start_thread(config(&mock, home.path(), AskForApproval::Untrusted))
        .await
        .unwrap();
    let mut first = new.thread.start_turn(input("touch it")).await.unwrap();
    let request = first_request(&mut first).await;
    assert!(new.thread.is_busy());
    match new.thread.start_turn(input("meanwhile")).await {
        Err(CoreError::TurnRunning { turn_id, .. }) => assert_eq!(turn_id, first.id()),
        Err(e) => panic!("expected TurnRunning, got {e}"),
        Ok(_) => panic!("a second turn started while one runs"),
    }
    first
        .answer(&request, ReviewDecision::Approved)
        .await
        .unwrap();
    drain(&mut first).await;
    assert!(home.path().join("approved.txt").exists());
    assert!(!new.thread.is_busy(), "busy after the terminal event");
    let mut second = new.thread.start_turn(input("again")).await.unwrap();
    drain(&mut second).await;
    assert!(
        matches!(second.end(), Some(TurnEnd::Completed { last_agent_message: Some(m), .. }) if m == "second done")
    );
    m.shutdown_all().await;
}

#[tokio::test]
async fn an_interrupted_turn_ends_aborted_and_a_dropped_subscriber_is_forgotten() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([MockTurn::tool_call(
        "shell",
        json!({"command": ["touch", "never.txt"]}),
    )]))
    .await
    .unwrap();
    let m = manager();
    let new = m
        .start_thread(config(&mock, home.path(), AskForApproval::Untrusted))
        .await
        .unwrap();
    let base = new.thread.subscriber_count();
    let extra = new.thread.subscribe();
    assert_eq!(new.thread.subscriber_count(), base + 1);
    drop(extra);
    assert_eq!(new.thread.subscriber_count(), base);

    let mut turn = new.thread.start_turn(input("touch")).await.unwrap();
    first_request(&mut turn).await;
    turn.interrupt(WAIT).await.unwrap();
    drain(&mut turn).await;
    assert_eq!(
        turn.end(),
        Some(&TurnEnd::Aborted(TurnAbortReason::Interrupted))
    );
    assert!(!home.path().join("never.txt").exists());
    // The handle's stream is returned to follow the thread after the turn.
    let mut after = turn.into_events();
    assert!(new.thread.shutdown(WAIT).await);
    let mut saw_shutdown = false;
    while let Some(ev) = after.next().await {
        saw_shutdown |= matches!(ev.msg, EventMsg::ShutdownComplete);
    }
    assert!(saw_shutdown, "the stream ends after shutdown_complete");
}

/// Answers every approval of `turn` with `Approved` and follows it to its end.
async fn approve_all(turn: &mut TurnHandle) {
    while let Some(ev) = tokio::time::timeout(WAIT, turn.next())
        .await
        .expect("stuck turn")
    {
        if let Some(r) = PendingRequest::of(&ev.msg) {
            turn.answer(&r, ReviewDecision::Approved).await.unwrap();
        }
    }
}

#[tokio::test]
async fn an_override_sent_mid_turn_applies_from_the_next_turn() {
    let home = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let other_dir = other.path().canonicalize().unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        MockTurn::tool_call("shell", json!({"command": ["touch", "first.txt"]})),
        MockTurn::tool_call("shell", json!({"command": ["touch", "also.txt"]})),
        MockTurn::text("first done"),
        MockTurn::tool_call("shell", json!({"command": ["touch", "second.txt"]})),
        MockTurn::text("second done"),
    ]))
    .await
    .unwrap();
    let m = manager();
    let new = m
        .start_thread(config(&mock, home.path(), AskForApproval::Untrusted))
        .await
        .unwrap();
    let mut first = new.thread.start_turn(input("touch first")).await.unwrap();
    let request = first_request(&mut first).await;
    // While the command waits for approval, input arrives that moves the thread elsewhere.
    new.thread
        .submit(oi_protocol::protocol::Op::UserInput {
            items: vec![UserInput::text("and then elsewhere")],
            overrides: oi_protocol::protocol::TurnOverrides {
                cwd: Some(other_dir.clone()),
                ..Default::default()
            },
        })
        .await
        .unwrap();
    first
        .answer(&request, ReviewDecision::Approved)
        .await
        .unwrap();
    approve_all(&mut first).await;
    // The turn's later command still runs where the turn started.
    assert!(home.path().join("first.txt").exists());
    assert!(
        home.path().join("also.txt").exists(),
        "ran in the turn's cwd"
    );
    assert!(!other_dir.join("also.txt").exists());
    let mut second = new.thread.start_turn(input("touch second")).await.unwrap();
    approve_all(&mut second).await;
    assert!(
        other_dir.join("second.txt").exists(),
        "the next turn has the new cwd"
    );
    m.shutdown_all().await;
}

/// A front end for `TurnHandle::drive` that records what it is given and answers every
/// request with `decision`, or, with `stop_at_request`, asks for that stop instead.
struct Recording {
    events: Vec<String>,
    requests: usize,
    decision: ReviewDecision,
    stop_at_request: Option<Stop>,
    stops: tokio::sync::mpsc::UnboundedReceiver<Stop>,
    stop_tx: tokio::sync::mpsc::UnboundedSender<Stop>,
}

impl Recording {
    fn new(decision: ReviewDecision, stop_at_request: Option<Stop>) -> Self {
        let (stop_tx, stops) = tokio::sync::mpsc::unbounded_channel();
        Self {
            events: Vec::new(),
            requests: 0,
            decision,
            stop_at_request,
            stops,
            stop_tx,
        }
    }
}

impl TurnFrontEnd for Recording {
    async fn stop_requested(&mut self) -> Stop {
        match self.stops.recv().await {
            Some(stop) => stop,
            None => std::future::pending().await,
        }
    }

    async fn on_event(&mut self, _turn: &TurnHandle, event: &Event) -> Option<Stop> {
        self.events
            .push(kinds(std::slice::from_ref(event)).remove(0));
        None
    }

    async fn on_request(&mut self, turn: &TurnHandle, request: PendingRequest, _event: &Event) {
        self.requests += 1;
        match self.stop_at_request {
            Some(stop) => self.stop_tx.send(stop).unwrap(),
            None => turn.answer(&request, self.decision).await.unwrap(),
        }
    }
}

#[tokio::test]
async fn drive_gives_a_front_end_each_event_and_request_and_stops_when_it_asks() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        MockTurn::tool_call("shell", json!({"command": ["touch", "approved.txt"]})),
        MockTurn::text("done"),
        MockTurn::tool_call("shell", json!({"command": ["touch", "never.txt"]})),
        MockTurn::tool_call("shell", json!({"command": ["touch", "left.txt"]})),
    ]))
    .await
    .unwrap();
    let m = manager();
    let new = m
        .start_thread(config(&mock, home.path(), AskForApproval::Untrusted))
        .await
        .unwrap();

    // Answered: the command ran, and the terminal event was the last one given.
    let mut turn = new.thread.start_turn(input("touch it")).await.unwrap();
    let mut front_end = Recording::new(ReviewDecision::Approved, None);
    let end = tokio::time::timeout(WAIT, turn.drive(&mut front_end))
        .await
        .expect("stuck turn");
    assert!(
        matches!(&end, Some(TurnEnd::Completed { last_agent_message: Some(m), failed: false }) if m == "done"),
        "{end:?}"
    );
    assert_eq!(front_end.requests, 1);
    assert_eq!(
        front_end.events.last().map(String::as_str),
        Some("task_complete")
    );
    assert!(home.path().join("approved.txt").exists());

    // A stop asked at the request interrupts the turn: it ends aborted, the command unrun.
    let mut turn = new.thread.start_turn(input("touch never")).await.unwrap();
    let mut front_end = Recording::new(ReviewDecision::Approved, Some(Stop::Interrupt(Some(WAIT))));
    let end = tokio::time::timeout(WAIT, turn.drive(&mut front_end))
        .await
        .expect("stuck turn");
    assert_eq!(end, Some(TurnEnd::Aborted(TurnAbortReason::Interrupted)));
    assert!(!home.path().join("never.txt").exists());

    // Abandoned: drive returns at once, the turn still waiting for its answer.
    let mut turn = new.thread.start_turn(input("touch left")).await.unwrap();
    let mut front_end = Recording::new(ReviewDecision::Approved, Some(Stop::Abandon));
    let end = tokio::time::timeout(WAIT, turn.drive(&mut front_end))
        .await
        .expect("stuck turn");
    assert_eq!(end, None);
    assert_eq!(turn.end(), None);
    assert!(new.thread.is_busy(), "an abandoned turn is not stopped");
    m.shutdown_all().await;
    assert!(!home.path().join("left.txt").exists());
}

#[tokio::test]
async fn a_second_front_end_follows_a_running_turn_to_its_end() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        MockTurn::tool_call("shell", json!({"command": ["touch", "followed.txt"]})),
        MockTurn::text("followed to the end"),
    ]))
    .await
    .unwrap();
    let m = manager();
    let new = m
        .start_thread(config(&mock, home.path(), AskForApproval::Untrusted))
        .await
        .unwrap();
    let mut started = new.thread.start_turn(input("touch it")).await.unwrap();
    let request = first_request(&mut started).await;
    // Subscribed before asking which turn runs, as a front end resuming the thread does.
    let events = new.thread.subscribe();
    let running = new
        .thread
        .active_turn_id()
        .expect("the turn waits for approval");
    assert_eq!(running, started.id());
    let mut follower = new.thread.follow_turn(events, running);
    started
        .answer(&request, ReviewDecision::Approved)
        .await
        .unwrap();
    let seen = drain(&mut follower).await;
    assert!(
        matches!(seen.last().map(|e| &e.msg), Some(EventMsg::TaskComplete(_))),
        "the follower's last event is the turn's end"
    );
    assert_eq!(
        follower.end(),
        Some(&TurnEnd::Completed {
            last_agent_message: Some("followed to the end".into()),
            failed: false
        })
    );
    drain(&mut started).await;
    assert!(home.path().join("followed.txt").exists());
    m.shutdown_all().await;
}
