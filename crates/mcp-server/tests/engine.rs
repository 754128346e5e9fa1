//! End to end with the real engine (`oi-core`) and the scripted mock model: the server
//! runs over in-memory pipes, the model on loopback.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

use common::*;
use oi_host::{Host, HostOptions};
use oi_mcp_server::CoreEngine;
use oi_test_support::{MockModelServer, MockScript, MockTurn};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;

struct Env {
    _tmp: tempfile::TempDir,
    home: PathBuf,
    work: PathBuf,
    model: MockModelServer,
}

async fn env(script: MockScript, policy: &str) -> Env {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let work = tmp.path().join("work");
    std::fs::create_dir_all(&home).unwrap();
    std::fs::create_dir_all(&work).unwrap();
    let model = MockModelServer::start(script).await.unwrap();
    std::fs::write(
        home.join("config.toml"),
        format!(
            r#"model = "mock-model"
model_provider = "mock"
approval_policy = "{policy}"
sandbox_mode = "danger-full-access"

[model_providers.mock]
name = "mock"
base_url = "{}"
wire_api = "chat"
request_max_retries = 0
stream_max_retries = 0
"#,
            model.base_url()
        ),
    )
    .unwrap();
    Env {
        _tmp: tmp,
        home,
        work,
        model,
    }
}

fn server(e: &Env) -> Client {
    let opts = HostOptions {
        home: Some(e.home.clone()),
        ..HostOptions::new(oi_core::SessionSource::Mcp)
    };
    start(Arc::new(CoreEngine::new(Host::new(opts))))
}

fn touch_then_answer(file: &str, answer: &str) -> Vec<MockTurn> {
    vec![
        MockTurn::tool_call("shell", json!({"command": ["touch", file]})),
        MockTurn::text(answer),
    ]
}

fn rollouts(home: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![home.join("sessions")];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten().flatten() {
            let p = entry.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "jsonl") {
                out.push(p);
            }
        }
    }
    out
}

#[tokio::test]
async fn codex_runs_a_shell_call_then_answers_and_codex_reply_continues() {
    let mut turns = touch_then_answer("made.txt", "File created!");
    turns.push(MockTurn::text("second turn ok"));
    let e = env(MockScript::turns(turns), "never").await;
    let mut c = server(&e);
    c.initialize(true).await;
    let id = c
        .tool("codex", json!({"prompt": "create made.txt", "cwd": e.work}))
        .await;
    let r = c.response(id).await;
    assert!(!is_error(&r), "{r}");
    assert_eq!(text(&r), "File created!");
    assert!(e.work.join("made.txt").exists());
    let types = c.event_types(id);
    for t in [
        "session_configured",
        "task_started",
        "exec_command_begin",
        "exec_command_end",
        "agent_message",
        "task_complete",
    ] {
        assert!(types.iter().any(|x| x == t), "missing {t} in {types:?}");
    }
    assert_eq!(
        types.first().map(String::as_str),
        Some("session_configured")
    );
    assert_eq!(types.last().map(String::as_str), Some("task_complete"));
    // The first turn's events carry the request id.
    let complete = c.events_for(id).into_iter().last().unwrap();
    assert_eq!(complete["params"]["id"], id.to_string());

    let tid = r["result"]["structuredContent"]["threadId"].clone();
    let id2 = c
        .tool("codex-reply", json!({"threadId": tid, "prompt": "again"}))
        .await;
    let r2 = c.response(id2).await;
    assert_eq!(text(&r2), "second turn ok");
    // The model saw the whole conversation on the second turn.
    let reqs = e.model.requests();
    assert_eq!(reqs.len(), 3);
    let last = reqs[2].body.to_string();
    assert!(
        last.contains("create made.txt") && last.contains("again"),
        "{last}"
    );
}

#[tokio::test]
async fn approval_accept_runs_the_command_and_decline_does_not() {
    for (reply, should_exist) in [
        (json!({"action": "accept"}), true),
        (json!({"action": "decline"}), false),
    ] {
        let e = env(
            MockScript::turns(touch_then_answer("approved.txt", "finished")),
            "untrusted",
        )
        .await;
        let mut c = server(&e);
        c.initialize(true).await;
        let id = c
            .tool("codex", json!({"prompt": "touch it", "cwd": e.work}))
            .await;
        let req = c.server_request("elicitation/create").await;
        assert_eq!(req["params"]["codex_elicitation"], "exec-approval");
        assert_eq!(
            req["params"]["codex_command"],
            json!(["touch", "approved.txt"])
        );
        assert_eq!(req["params"]["codex_cwd"], json!(e.work));
        assert_eq!(req["params"]["codex_mcp_tool_call_id"], id.to_string());
        c.send(json!({"jsonrpc": "2.0", "id": req["id"], "result": reply}))
            .await;
        let r = c.response(id).await;
        assert!(!is_error(&r), "{r}");
        assert_eq!(text(&r), "finished");
        assert_eq!(
            e.work.join("approved.txt").exists(),
            should_exist,
            "reply {reply}"
        );
    }
}

#[tokio::test]
async fn an_unanswered_approval_times_out_as_denied() {
    let e = env(
        MockScript::turns(touch_then_answer("late.txt", "gave up")),
        "untrusted",
    )
    .await;
    let mut cfg = std::fs::read_to_string(e.home.join("config.toml")).unwrap();
    cfg.insert_str(0, "approval_timeout_sec = 1\n");
    std::fs::write(e.home.join("config.toml"), cfg).unwrap();
    let mut c = server(&e);
    c.initialize(true).await;
    let id = c
        .tool("codex", json!({"prompt": "touch it", "cwd": e.work}))
        .await;
    let _ignored = c.server_request("elicitation/create").await;
    let r = c.response(id).await;
    assert_eq!(text(&r), "gave up");
    assert!(!e.work.join("late.txt").exists());
}

#[tokio::test]
async fn cancel_interrupts_a_streaming_turn_and_the_thread_stays_usable() {
    let script = MockScript::turns([
        MockTurn::text("never finishes").chunked(2).stall_after(2),
        MockTurn::text("after cancel"),
    ]);
    let e = env(script, "never").await;
    let mut c = server(&e);
    c.initialize(true).await;
    let id = c
        .tool("codex", json!({"prompt": "long", "cwd": e.work}))
        .await;
    let started = c
        .read_until(|v| v["params"]["msg"]["type"] == "task_started")
        .await;
    let tid = started["params"]["_meta"]["threadId"].clone();
    // Cancel only once the model is streaming, so the stalled response is the one cut off.
    c.read_until(|v| v["params"]["msg"]["type"] == "agent_message_delta")
        .await;
    c.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "user"}),
    )
    .await;
    c.read_until(|v| v["params"]["msg"]["type"] == "turn_aborted")
        .await;
    let id2 = c
        .tool("codex-reply", json!({"threadId": tid, "prompt": "again"}))
        .await;
    let r = c.response(id2).await;
    assert_eq!(text(&r), "after cancel", "{r}");
    assert!(
        c.seen.iter().all(|v| v["id"] != id),
        "cancelled call got a response"
    );
}

#[tokio::test]
async fn stdin_eof_mid_turn_exits_cleanly_and_the_thread_resumes_from_disk() {
    let script = MockScript::turns([
        MockTurn::text("stuck").stall_after(1),
        MockTurn::text("resumed fine"),
    ]);
    let e = env(script, "never").await;
    let mut c = server(&e);
    c.initialize(true).await;
    let id = c
        .tool("codex", json!({"prompt": "first", "cwd": e.work}))
        .await;
    let started = c
        .read_until(|v| v["params"]["msg"]["type"] == "task_started")
        .await;
    let tid = started["params"]["_meta"]["threadId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(e.model.wait_for_requests(1, WAIT).await.len(), 1);
    c.close_stdin().await;
    let r = c.response(id).await;
    assert!(is_error(&r), "{r}");
    while c.read().await.is_some() {}
    assert_eq!(c.exit_code().await, 0);
    let files = rollouts(&e.home);
    assert_eq!(files.len(), 1, "{files:?}");
    assert!(files[0].to_string_lossy().contains(&tid));

    // A new server process (same home) continues the stored thread.
    let mut c = server(&e);
    c.initialize(true).await;
    let id = c
        .tool("codex-reply", json!({"threadId": tid, "prompt": "second"}))
        .await;
    let r = c.response(id).await;
    assert!(!is_error(&r), "{r}");
    assert_eq!(text(&r), "resumed fine");
    assert_eq!(c.event_types(id)[0], "session_configured");
    let body = e.model.requests()[1].body.to_string();
    assert!(body.contains("first") && body.contains("second"), "{body}");
}

#[tokio::test]
async fn config_errors_and_model_errors_are_tool_errors() {
    let e = env(
        MockScript::new(vec![oi_test_support::MockResponse::error(
            400,
            r#"{"error":{"message":"bad model"}}"#,
        )]),
        "never",
    )
    .await;
    let mut c = server(&e);
    c.initialize(false).await;
    let r = c
        .call_tool(
            "codex",
            json!({"prompt": "x", "config": {"approval_policy": "sometimes"}, "cwd": e.work}),
        )
        .await;
    assert!(is_error(&r), "{r}");
    assert!(text(&r).starts_with("Failed to load configuration"), "{r}");
    assert!(text(&r).contains("approval_policy"), "{r}");
    let r = c
        .call_tool("codex", json!({"prompt": "x", "cwd": e.work}))
        .await;
    assert!(is_error(&r), "{r}");
    assert!(
        text(&r).contains("400") || text(&r).contains("bad model"),
        "{r}"
    );
}

#[tokio::test]
async fn codex_tool_honours_project_config_only_trusted_and_accepted() {
    let marker_dir = tempfile::tempdir().unwrap();
    let marker = marker_dir.path().join("unconfined");
    let m = marker.display().to_string();
    let mut turns = touch_then_answer(&m, "first");
    turns.extend(touch_then_answer(&m, "second"));
    let e = env(MockScript::turns(turns), "never").await;
    // The user config leaves the default read-only sandbox; the project tries to lift it.
    let config = std::fs::read_to_string(e.home.join("config.toml"))
        .unwrap()
        .replace("sandbox_mode = \"danger-full-access\"\n", "");
    std::fs::write(e.home.join("config.toml"), &config).unwrap();
    std::fs::create_dir(e.work.join(".openinterpreter")).unwrap();
    std::fs::write(
        e.work.join(".openinterpreter/config.toml"),
        "sandbox_mode = \"danger-full-access\"\n",
    )
    .unwrap();
    let mut c = server(&e);
    c.initialize(true).await;
    let r = c
        .call_tool("codex", json!({"prompt": "touch it", "cwd": e.work}))
        .await;
    assert_eq!(text(&r), "first", "{r}");
    assert!(
        !marker.exists(),
        "untrusted project config lifted the sandbox"
    );

    let work = e.work.canonicalize().unwrap();
    std::fs::write(
        e.home.join("config.toml"),
        format!(
            "{config}\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
            work.display()
        ),
    )
    .unwrap();
    // Trusted but not accepted: the tool refuses, naming the file and how to accept it.
    let r = c
        .call_tool("codex", json!({"prompt": "touch it", "cwd": e.work}))
        .await;
    assert!(is_error(&r), "{r}");
    let project_config = work.join(".openinterpreter/config.toml");
    for part in [
        project_config.display().to_string(),
        "sandbox danger-full-access instead of read-only".to_string(),
        format!("interpreter accept-project-config {}", work.display()),
    ] {
        assert!(text(&r).contains(&part), "`{part}` missing: {r}");
    }
    assert!(
        !marker.exists(),
        "an unaccepted project config lifted the sandbox"
    );

    // Accepted (what `interpreter accept-project-config` records), the file applies.
    let loaded = oi_config::load_config(oi_config::ConfigLoadOptions {
        home: Some(e.home.clone()),
        cli_overrides: Vec::new(),
        overrides: oi_config::ConfigOverrides {
            cwd: Some(work.clone()),
            ..Default::default()
        },
    })
    .unwrap();
    let review = loaded.config.project_config_review.unwrap();
    oi_config::project_consent::accept(&e.home, &review).unwrap();
    let r = c
        .call_tool("codex", json!({"prompt": "touch it", "cwd": e.work}))
        .await;
    assert_eq!(text(&r), "second", "{r}");
    assert!(marker.exists(), "accepted project config not applied");
}

// No false success through the `codex` tool: an answer holding a call nobody ran is retried
// once; when the model repeats it, the result is an error naming the tool.

/// A call explained in prose and too broken to parse (its argv list is never closed): a
/// call nobody ran, and nothing the engine could run in its place.
fn explained_call() -> MockTurn {
    MockTurn::text(
        "You can create it like this:\n```json\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"bash\", \"-lc\", \"echo hi > made.txt\"}}\n```\nThat writes the file.",
    )
}

#[tokio::test]
async fn codex_reports_an_unrun_call_as_an_error_naming_the_tool() {
    let e = env(
        MockScript::turns([explained_call(), explained_call()]),
        "never",
    )
    .await;
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
    let e = env(
        MockScript::turns([
            explained_call(),
            MockTurn::tool_call(
                "shell",
                json!({"command": ["bash", "-lc", "echo hi > made.txt"]}),
            ),
            MockTurn::text("made.txt holds hi."),
        ]),
        "never",
    )
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

#[tokio::test]
async fn the_codex_tools_config_chooses_a_harness_profile() {
    let e = env(
        MockScript::turns([
            MockTurn::text("")
                .with_tool_call("TodoWrite", json!({"todos": [{"content": "write it", "status": "in_progress", "activeForm": "writing"}]}))
                .with_tool_call("Write", json!({"file_path": "made.txt", "content": "made\n"})),
            MockTurn::text("Wrote made.txt"),
        ]),
        "never",
    )
    .await;
    let mut c = server(&e);
    c.initialize(true).await;
    let id = c
        .tool(
            "codex",
            json!({"prompt": "create made.txt", "cwd": e.work, "config": {"harness": "claude-code"}}),
        )
        .await;
    let r = c.response(id).await;
    assert!(!is_error(&r), "{r}");
    assert_eq!(
        std::fs::read_to_string(e.work.join("made.txt")).unwrap(),
        "made\n"
    );
    assert!(
        e.model.requests()[0]
            .tool_names()
            .contains(&"Edit".to_string())
    );
    let types = c.event_types(id);
    for t in ["plan_update", "patch_apply_end"] {
        assert!(types.iter().any(|x| x == t), "missing {t} in {types:?}");
    }
}
