//! Threads persist: resume after a clean exit and after kill -9, and list/search them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use common::*;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};
use serde_json::json;
use tokio::io::AsyncBufReadExt;

#[tokio::test]
async fn resume_after_a_clean_exit_replays_history() {
    for wire in [WireApi::Chat, WireApi::Responses] {
        let env = TestEnv::new(
            MockScript::turns([
                MockTurn::text("the answer is 42"),
                MockTurn::text("still 42"),
            ]),
            wire,
        )
        .await;
        let out = env.run(&["exec", "what is the answer?"]).await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

        let list = env.run(&["sessions", "list", "--json"]).await;
        let threads: serde_json::Value = serde_json::from_str(&stdout(&list)).unwrap();
        assert_eq!(threads.as_array().map(|a| a.len()), Some(1), "{threads}");
        let id = threads[0]["id"].as_str().unwrap().to_string();
        assert_eq!(threads[0]["preview"], "what is the answer?");

        let out = env.run(&["resume", &id, "are you sure?"]).await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        assert_eq!(stdout(&out).trim(), "still 42");
        let reqs = env.mock.requests();
        let all = reqs[1].all_text();
        assert!(all.contains("what is the answer?"), "{all}");
        assert!(all.contains("the answer is 42"), "{all}");
        assert_eq!(reqs[1].last_user_text().as_deref(), Some("are you sure?"));

        // Still one thread: resume keeps the id.
        let list = env.run(&["sessions", "list", "--json"]).await;
        let threads: serde_json::Value = serde_json::from_str(&stdout(&list)).unwrap();
        assert_eq!(threads.as_array().map(|a| a.len()), Some(1));
        assert_eq!(threads[0]["id"], id.as_str());
    }
}

#[tokio::test]
async fn resume_after_kill_9_mid_turn() {
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", json!({"command": ["sleep", "60"]})),
            MockTurn::text("recovered"),
        ]),
        WireApi::Chat,
    )
    .await;
    let mut child = env
        .command(&[
            "exec",
            "-s",
            "danger-full-access",
            "-a",
            "never",
            "--json",
            "remember the word pelican",
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let child_out = child.stdout.take().unwrap();
    let mut lines = tokio::io::BufReader::new(child_out).lines();
    // Wait for the command to start, then kill the whole process without warning.
    let started = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.contains("\"exec_command_begin\"") {
                return true;
            }
        }
        false
    })
    .await
    .unwrap_or(false);
    assert!(started, "the shell call never started");
    child.start_kill().unwrap();
    let _ = child.wait().await;
    // The orphaned `sleep` is in its own process group; clean it up.
    let _ = std::process::Command::new("pkill")
        .args(["-f", "^sleep 60$"])
        .status();

    let out = env.run(&["resume", "--last", "what was the word?"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "recovered");
    let reqs = env.mock.requests();
    let all = reqs.last().unwrap().all_text();
    assert!(all.contains("pelican"), "{all}");
    // The interrupted call has an output, so the history is valid for the API.
    let outputs = reqs.last().unwrap().tool_outputs();
    assert_eq!(outputs.len(), 1, "{outputs:?}");
}

#[tokio::test]
async fn sessions_list_searches_and_resume_reports_unknown_ids() {
    let env = TestEnv::new(
        MockScript::cycle(vec![MockTurn::text("ok").into()]),
        WireApi::Chat,
    )
    .await;
    for p in ["fix the parser", "write docs", "fix the lexer"] {
        let out = env.run(&["exec", p]).await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let out = env
        .run(&["sessions", "list", "--json", "--search", "fix"])
        .await;
    let threads: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    let previews: Vec<&str> = threads
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["preview"].as_str().unwrap())
        .collect();
    assert_eq!(previews, vec!["fix the lexer", "fix the parser"]);
    let out = env.run(&["sessions", "list", "--limit", "1"]).await;
    assert_eq!(stdout(&out).lines().count(), 1);
    assert!(stdout(&out).contains("fix the lexer"));

    let out = env
        .run(&["resume", "0199a3f0-7c1e-7d52-9a55-3c5b9f0d2e11", "hi"])
        .await;
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains("thread not found"),
        "{}",
        stderr(&out)
    );
    let out = env.run(&["resume", "not-a-uuid", "hi"]).await;
    assert_eq!(out.status.code(), Some(2));
}
