//! Commands of one model response that cannot write and need no approval run at once;
//! commands that write, or ask, keep running one at a time, in order.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use oi_core::{StartTurn, TurnHandle};
use oi_protocol::config_types::{AskForApproval, SandboxMode};
use oi_protocol::protocol::{Event, EventMsg};
use oi_protocol::user_input::UserInput;
use oi_test_support::{MockModelServer, MockScript, MockTurn};
use serde_json::json;
use std::path::Path;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(60);

fn config(mock: &MockModelServer, home: &Path, sandbox: SandboxMode) -> oi_config::Config {
    common::mock_config(mock, home, AskForApproval::Never, sandbox)
}

/// `n` commands that each take a while (so a sequential run cannot overlap them).
fn slow_commands(n: usize, script: &str) -> MockTurn {
    let mut turn = MockTurn::text("");
    for i in 0..n {
        turn = turn.with_tool_call(
            "shell",
            json!({"command": ["bash", "-c", format!("{script}; echo call-{i}")]}),
        );
    }
    turn
}

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

/// How many commands had begun, at most, while another was still running.
fn most_at_once(evs: &[Event]) -> usize {
    let (mut now, mut most) = (0usize, 0usize);
    for e in evs {
        match e.msg {
            EventMsg::ExecCommandBegin(_) => {
                now += 1;
                most = most.max(now);
            }
            EventMsg::ExecCommandEnd(_) => now -= 1,
            _ => {}
        }
    }
    most
}

#[tokio::test]
async fn read_only_commands_of_one_response_run_at_once_outputs_in_call_order() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        slow_commands(3, "sleep 1"),
        MockTurn::text("looked"),
    ]))
    .await
    .unwrap();
    let m = common::manager(false);
    let new = m
        .start_thread(config(&mock, home.path(), SandboxMode::ReadOnly))
        .await
        .unwrap();
    let evs = run(&new.thread).await;
    // Each command sleeps a second; spawning the next takes milliseconds, so three in a row
    // could never overlap and three at once always do.
    assert_eq!(
        most_at_once(&evs),
        3,
        "the read-only commands ran one at a time"
    );
    // The engine offers several calls per response, since it can run them.
    assert_eq!(mock.requests()[0].body["parallel_tool_calls"], true);
    let outputs = mock.requests()[1].tool_outputs();
    let order: Vec<bool> = (0..3)
        .map(|i| outputs[i].1.contains(&format!("call-{i}")))
        .collect();
    assert_eq!(
        order,
        [true, true, true],
        "outputs in call order: {outputs:?}"
    );
    m.shutdown_all().await;
}

#[tokio::test]
async fn commands_that_can_write_keep_running_one_at_a_time() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        slow_commands(2, "sleep 1"),
        MockTurn::text("done"),
    ]))
    .await
    .unwrap();
    let m = common::manager(false);
    // Full access: `bash -c` is not on the read-only list, so these could write.
    let new = m
        .start_thread(config(&mock, home.path(), SandboxMode::DangerFullAccess))
        .await
        .unwrap();
    let evs = run(&new.thread).await;
    assert_eq!(most_at_once(&evs), 1, "commands that may write overlapped");
    m.shutdown_all().await;
}
