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
    let python = root().join("tools/peers/venv/bin/python");
    assert!(python.exists(), "run tools/peers/install.sh (fastmcp)");
    let script = root().join("tests/fixtures/mcp/fastmcp_stdio_server.py");
    let toml = format!(
        "{}\n[mcp_servers.fm]\ncommand = {:?}\nargs = [{:?}{server_flags}]\nstartup_timeout_sec = 30\n",
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
