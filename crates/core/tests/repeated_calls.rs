//! A model that answers every result with the very same call is stopped: the same calls run
//! at most three responses in a row, the fourth time they are refused with a note telling the
//! model to answer or change course, and a fifth ends the turn as failed.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use oi_core::{StartTurn, TurnHandle};
use oi_protocol::config_types::{AskForApproval, SandboxMode};
use oi_protocol::protocol::{Event, EventMsg};
use oi_protocol::user_input::UserInput;
use oi_test_support::{MockModelServer, MockScript, MockTurn};
use serde_json::json;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(60);

async fn run(thread: &std::sync::Arc<oi_core::Thread>) -> Vec<Event> {
    let mut turn: TurnHandle = thread
        .start_turn(StartTurn::input(vec![UserInput::text("go")]))
        .await
        .unwrap();
    let mut out = Vec::new();
    while let Some(ev) = tokio::time::timeout(WAIT, turn.next())
        .await
        .expect("stuck")
    {
        out.push(ev);
    }
    out
}

fn append() -> MockTurn {
    // Each run leaves a mark, so the directory shows how often it really ran.
    MockTurn::tool_call(
        "shell",
        json!({"command": ["bash", "-c", "echo x >> runs.txt"]}),
    )
}

async fn turn_with(turns: Vec<MockTurn>) -> (Vec<Event>, MockModelServer, tempfile::TempDir) {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns(turns))
        .await
        .unwrap();
    let m = common::manager(false);
    let config = common::mock_config(
        &mock,
        home.path(),
        AskForApproval::Never,
        SandboxMode::DangerFullAccess,
    );
    let new = m.start_thread(config).await.unwrap();
    let evs = run(&new.thread).await;
    m.shutdown_all().await;
    (evs, mock, home)
}

fn runs(home: &tempfile::TempDir) -> usize {
    std::fs::read_to_string(home.path().join("runs.txt"))
        .unwrap_or_default()
        .lines()
        .count()
}

#[tokio::test]
async fn the_same_call_five_times_in_a_row_ends_the_turn_after_three_runs() {
    let (evs, mock, home) = turn_with(vec![append(); 5]).await;
    assert_eq!(
        runs(&home),
        3,
        "the same call ran more than three times in a row"
    );
    let error = evs
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::Error(err) => Some(err.message.clone()),
            _ => None,
        })
        .expect("the turn failed");
    assert!(error.contains("5 times in a row"), "{error}");
    // The fourth time the model was told, in the call's output, why it did not run.
    let outputs = mock.requests()[4].tool_outputs();
    assert!(
        outputs
            .last()
            .unwrap()
            .1
            .contains("not run: this is the 4th time in a row"),
        "{outputs:?}"
    );
    assert!(matches!(evs.last().unwrap().msg, EventMsg::TaskComplete(_)));
}

#[tokio::test]
async fn a_model_that_answers_after_the_refusal_completes_the_turn() {
    let mut turns = vec![append(); 4];
    turns.push(MockTurn::text("Done: the line is in runs.txt."));
    let (evs, _mock, home) = turn_with(turns).await;
    assert_eq!(runs(&home), 3);
    assert!(
        !evs.iter().any(|e| matches!(e.msg, EventMsg::Error(_))),
        "{evs:?}"
    );
    match &evs.last().unwrap().msg {
        EventMsg::TaskComplete(t) => assert_eq!(
            t.last_agent_message.as_deref(),
            Some("Done: the line is in runs.txt.")
        ),
        other => panic!("{other:?}"),
    }
}
