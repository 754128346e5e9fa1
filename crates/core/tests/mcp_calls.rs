//! The engine with a real MCP server (fastmcp, PyPI, over stdio) and the scripted mock model:
//! concurrent calls in one response, tools added mid-turn, resource tools, headless waiting.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use oi_core::{Thread, ThreadManager, ThreadManagerOptions};
use oi_protocol::config_types::WireApi;
use oi_protocol::protocol::{Event, EventMsg};
use oi_test_support::{MockModelServer, MockScript, MockTurn};
use serde_json::json;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// config.toml with the mock model and the fastmcp stdio peer as server `fm`.
fn config(mock: &MockModelServer, home: &Path, server_flags: &str) -> oi_config::Config {
    config_with(mock, home, server_flags, "")
}

/// [`config`] with more keys in the server's table.
fn config_with(
    mock: &MockModelServer,
    home: &Path,
    server_flags: &str,
    server_keys: &str,
) -> oi_config::Config {
    let python = root().join("tools/peers/venv/bin/python");
    assert!(python.exists(), "run tools/peers/install.sh (fastmcp)");
    let script = root().join("tests/fixtures/mcp/fastmcp_stdio_server.py");
    let toml = format!(
        "{}\n[mcp_servers.fm]\ncommand = {:?}\nargs = [{:?}{server_flags}]\nstartup_timeout_sec = 30\n{server_keys}\n",
        mock.config_toml("mock", WireApi::Chat),
        python.display().to_string(),
        script.display().to_string(),
    );
    common::load_unconfined(home, &toml)
}

async fn run_turn(thread: &Thread, text: &str) -> Vec<Event> {
    common::run_op(thread, common::user(text)).await
}

async fn start(
    mock: &MockModelServer,
    home: &Path,
    flags: &str,
) -> (ThreadManager, oi_core::NewThread) {
    let manager = ThreadManager::new(ThreadManagerOptions {
        source: oi_thread_store::SessionSource::Exec,
        persist: false,
    });
    let new = manager
        .start_thread(config(mock, home, flags))
        .await
        .unwrap();
    (manager, new)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_calls_of_one_response_overlap_and_outputs_keep_call_order() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        MockTurn::tool_call(
            "mcp__fm__sleep_then_echo",
            json!({"text": "slow", "seconds": 1.5}),
        )
        .with_tool_call(
            "mcp__fm__sleep_then_echo",
            json!({"text": "fast", "seconds": 0.05}),
        ),
        MockTurn::text("both done"),
    ]))
    .await
    .unwrap();
    let (manager, new) = start(&mock, home.path(), "").await;
    let events = run_turn(&new.thread, "go").await;

    // The second call finished first: both were in flight at once.
    let ends: Vec<String> = events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::McpToolCallEnd(end) => Some(
                end.invocation.arguments.as_ref().unwrap()["text"]
                    .as_str()
                    .unwrap()
                    .to_string(),
            ),
            _ => None,
        })
        .collect();
    assert_eq!(ends, vec!["fast", "slow"]);
    // The model sees the outputs in call order.
    let requests = mock.requests();
    let calls = requests[1].function_calls();
    let outputs = requests[1].tool_outputs();
    assert_eq!(outputs.len(), 2);
    assert_eq!(outputs[0].0, calls[0].0);
    assert!(outputs[0].1.contains("slow"), "{outputs:?}");
    assert!(outputs[1].1.contains("fast"), "{outputs:?}");
    manager.shutdown_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_added_by_a_call_is_in_the_very_next_request() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        MockTurn::tool_call("mcp__fm__add_tool", json!({"name": "fresh"})),
        MockTurn::text("added"),
    ]))
    .await
    .unwrap();
    let (manager, new) = start(&mock, home.path(), "").await;
    run_turn(&new.thread, "add a tool").await;
    let requests = mock.requests();
    assert!(
        !requests[0]
            .tool_names()
            .contains(&"mcp__fm__fresh".to_string())
    );
    assert!(
        requests[1]
            .tool_names()
            .contains(&"mcp__fm__fresh".to_string()),
        "{:?}",
        requests[1].tool_names()
    );
    manager.shutdown_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_lists_and_reads_resources_of_a_cold_server() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        MockTurn::tool_call("list_mcp_resources", json!({})),
        MockTurn::tool_call(
            "read_mcp_resource",
            json!({"server": "fm", "uri": "notes://readme"}),
        )
        .with_tool_call("list_mcp_resource_templates", json!({"server": "fm"})),
        MockTurn::text("read it"),
    ]))
    .await
    .unwrap();
    // A headless thread waits for a server that has no cached catalog.
    let (manager, new) = start(&mock, home.path(), ", \"--startup-delay\", \"2.5\"").await;
    run_turn(&new.thread, "what resources are there?").await;
    let requests = mock.requests();
    let first_tools = requests[0].tool_names();
    for t in [
        "mcp__fm__sleep_then_echo",
        "list_mcp_resources",
        "list_mcp_resource_templates",
        "read_mcp_resource",
    ] {
        assert!(
            first_tools.contains(&t.to_string()),
            "{t} missing: {first_tools:?}"
        );
    }
    let listed = &requests[1].tool_outputs()[0].1;
    let listed: serde_json::Value = serde_json::from_str(listed).unwrap();
    assert_eq!(listed["resources"][0]["uri"], "notes://readme");
    assert_eq!(listed["resources"][0]["server"], "fm");
    let outputs = requests[2].tool_outputs();
    let read: serde_json::Value = serde_json::from_str(&outputs[1].1).unwrap();
    assert_eq!(
        read["contents"][0]["text"], "hello from a resource",
        "{read}"
    );
    let templates: serde_json::Value = serde_json::from_str(&outputs[2].1).unwrap();
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"],
        "notes://by-id/{note_id}"
    );
    manager.shutdown_all().await;
}

/// An MCP tool call that needs approval parks a parking turn like a command does: the
/// request names the tool and its arguments, the server is not called until the answer,
/// and the approved call runs when the turn is resumed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_tool_approval_parks_the_turn_and_the_approved_call_runs_on_resume() {
    use oi_core::{ParkedAnswer, ParkedRequest, StartTurn, TurnEnd, TurnOptions};
    use oi_protocol::protocol::ReviewDecision;
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        MockTurn::tool_call(
            "mcp__fm__sleep_then_echo",
            json!({"text": "echoed after approval", "seconds": 0}),
        )
        .with_call_id("m1"),
        MockTurn::text("done"),
    ]))
    .await
    .unwrap();
    let manager = ThreadManager::new(ThreadManagerOptions {
        source: oi_thread_store::SessionSource::Exec,
        persist: false,
    });
    let cfg = config_with(
        &mock,
        home.path(),
        "",
        "default_tools_approval_mode = \"prompt\"",
    );
    let thread = manager.start_thread(cfg).await.unwrap().thread;
    let mut turn = thread
        .start_turn_with(
            thread.subscribe(),
            oi_protocol::ids::new_id(),
            StartTurn::input(vec![oi_protocol::user_input::UserInput::text("echo")]),
            TurnOptions::parking(),
        )
        .await
        .unwrap();
    while tokio::time::timeout(std::time::Duration::from_secs(60), turn.next())
        .await
        .unwrap()
        .is_some()
    {}
    let Some(TurnEnd::Parked(park)) = turn.end().cloned() else {
        panic!("not parked: {:?}", turn.end());
    };
    match &park.requests[..] {
        [ParkedRequest::Exec(r)] => {
            assert_eq!(r.call_id, "m1");
            assert_eq!(r.command[0], "mcp__fm__sleep_then_echo");
        }
        other => panic!("{other:?}"),
    }
    let answers = vec![ParkedAnswer::new("m1", ReviewDecision::Approved)];
    let mut resumed = thread
        .resume_parked(turn.id(), &park.park_id, answers)
        .await
        .unwrap();
    while tokio::time::timeout(std::time::Duration::from_secs(60), resumed.next())
        .await
        .unwrap()
        .is_some()
    {}
    assert!(
        matches!(
            resumed.end(),
            Some(TurnEnd::Completed { failed: false, .. })
        ),
        "{:?}",
        resumed.end()
    );
    let outputs = mock.requests()[1].tool_outputs();
    assert_eq!(outputs.len(), 1, "{outputs:?}");
    assert!(
        outputs[0].1.contains("echoed after approval"),
        "{outputs:?}"
    );
}
