//! No false success through the `codex` MCP tool, with the real engine and the mock model: an
//! answer holding a tool call nobody ran is retried once, and when the model repeats it the
//! call's result is an error that names the tool, not the model's text as if it had worked.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

use common::*;
use oi_mcp_server::{CoreEngine, McpServerOptions};
use oi_test_support::{MockModelServer, MockScript, MockTurn};
use serde_json::json;
use std::path::PathBuf;
use std::sync::Arc;

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    work: PathBuf,
    model: MockModelServer,
}

async fn env(script: MockScript) -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let model = MockModelServer::start(script).await.unwrap();
    let config = format!(
        "approval_policy = \"never\"\nsandbox_mode = \"danger-full-access\"\n{}",
        model.config_toml("mock", oi_protocol::config_types::WireApi::Chat)
    );
    std::fs::write(home.join("config.toml"), config).unwrap();
    Env {
        _tmp: tmp,
        home,
        work,
        model,
    }
}

fn server(e: &Env) -> Client {
    start(Arc::new(CoreEngine::new(McpServerOptions {
        home: Some(e.home.clone()),
        ..Default::default()
    })))
}

/// A call explained in prose: not a call to run.
fn explained_call() -> MockTurn {
    MockTurn::text(format!(
        "You can create it like this:\n```json\n{}\n```\nThat writes the file.",
        json!({"name": "shell", "arguments": {"command": ["bash", "-lc", "echo hi > made.txt"]}})
    ))
}

#[tokio::test]
async fn codex_reports_an_unrun_call_as_an_error_naming_the_tool() {
    let e = env(MockScript::turns([explained_call(), explained_call()])).await;
    let mut c = server(&e);
    c.initialize(false).await;
    let id = c
        .tool("codex", json!({"prompt": "create made.txt", "cwd": e.work}))
        .await;
    let r = c.response(id).await;
    assert!(is_error(&r), "{r}");
    assert!(
        text(&r).contains("`shell` call that was not run"),
        "{}",
        text(&r)
    );
    assert!(!e.work.join("made.txt").exists(), "the call must not run");
    assert_eq!(e.model.requests().len(), 2, "asked exactly once more");
    let types = c.event_types(id);
    assert!(types.iter().any(|t| t == "warning"), "{types:?}");
    assert!(types.iter().any(|t| t == "error"), "{types:?}");
    assert_eq!(types.last().map(String::as_str), Some("task_complete"));
}

#[tokio::test]
async fn codex_succeeds_when_the_retry_makes_the_call() {
    // The same first answer, then a real call: the task is done and the result is no error.
    let e = env(MockScript::turns([
        explained_call(),
        MockTurn::tool_call(
            "shell",
            json!({"command": ["bash", "-lc", "echo hi > made.txt"]}),
        ),
        MockTurn::text("made.txt holds hi."),
    ]))
    .await;
    let mut c = server(&e);
    c.initialize(false).await;
    let r = c
        .call_tool("codex", json!({"prompt": "create made.txt", "cwd": e.work}))
        .await;
    assert!(!is_error(&r), "{r}");
    assert_eq!(text(&r), "made.txt holds hi.");
    assert_eq!(
        std::fs::read_to_string(e.work.join("made.txt")).unwrap(),
        "hi\n"
    );
    assert_eq!(e.model.requests().len(), 3);
}
