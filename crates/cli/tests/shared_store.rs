//! Two `interpreter` processes on one PostgreSQL thread store (`OI_THREAD_STORE_URL`), each
//! with its own home and model: a thread started on A is listed and continued on B with
//! its history; B is refused while A runs a turn on it; after A is killed with -9, B takes
//! the thread over (its lease died with A's database connection).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::*;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};
use serde_json::json;
use std::time::Duration;
use tokio::io::AsyncBufReadExt;

const URL_ENV: &str = "OI_THREAD_STORE_URL";

async fn run_on(env: &TestEnv, url: &str, args: &[&str]) -> std::process::Output {
    let fut = env.command(args).env(URL_ENV, url).output();
    tokio::time::timeout(Duration::from_secs(60), fut)
        .await
        .expect("interpreter did not finish within 60s")
        .expect("spawn interpreter")
}

#[tokio::test]
async fn a_thread_moves_between_processes_with_one_writer_at_a_time() {
    let Some(url) = oi_thread_store::test_db::fresh_database(
        "a_thread_moves_between_processes_with_one_writer_at_a_time",
    ) else {
        return;
    };
    let a = TestEnv::new(
        MockScript::turns([
            MockTurn::text("the word is pelican"),
            MockTurn::text("noted"),
        ]),
        WireApi::Chat,
    )
    .await;
    let b = TestEnv::new(
        MockScript::turns([
            MockTurn::text("you said pelican"),
            MockTurn::tool_call(
                "shell",
                json!({"command": ["sh", "-c", "echo $$ > slow.pid && exec sleep 30"]}),
            ),
        ]),
        WireApi::Chat,
    )
    .await;

    // Started on A.
    let out = run_on(&a, &url, &["exec", "remember the word pelican"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "the word is pelican");

    // B sees it and continues it with its history.
    let list = run_on(&b, &url, &["sessions", "list", "--json"]).await;
    let threads: serde_json::Value = serde_json::from_str(&stdout(&list)).unwrap();
    assert_eq!(threads.as_array().map(Vec::len), Some(1), "{threads}");
    let id = threads[0]["id"].as_str().unwrap().to_string();
    assert_eq!(threads[0]["preview"], "remember the word pelican");
    let out = run_on(&b, &url, &["resume", &id, "what was the word?"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "you said pelican");
    let seen = b.mock.requests()[0].all_text();
    assert!(seen.contains("remember the word pelican"), "{seen}");
    assert!(seen.contains("the word is pelican"), "{seen}");

    // B runs a long turn on it; A is refused meanwhile.
    let mut slow = b
        .command(&[
            "resume",
            "-s",
            "danger-full-access",
            "-a",
            "never",
            "--json",
            &id,
            "run the slow thing",
        ])
        .env(URL_ENV, &url)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(slow.stdout.take().unwrap()).lines();
    let started = tokio::time::timeout(Duration::from_secs(60), async {
        while let Ok(Some(line)) = lines.next_line().await {
            if line.contains("\"exec_command_begin\"") {
                return true;
            }
        }
        false
    })
    .await
    .unwrap_or(false);
    assert!(started, "the slow command never started");
    let out = run_on(&a, &url, &["resume", &id, "are you there?"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stdout(&out));
    assert!(
        stderr(&out).contains("is open for writing by another session"),
        "{}",
        stderr(&out)
    );
    assert_eq!(a.mock.requests().len(), 1, "A never asked its model");

    // kill -9 B mid-turn: its lease goes with its connection, and A takes the thread.
    slow.start_kill().unwrap();
    let _ = slow.wait().await;
    if let Ok(pid) = std::fs::read_to_string(b.work().join("slow.pid")) {
        let _ = std::process::Command::new("kill")
            .args(["-9", pid.trim()])
            .status();
    }
    // The server notices the closed socket at once; poll briefly for the session to end.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let out = loop {
        let out = run_on(&a, &url, &["resume", &id, "still there?"]).await;
        if out.status.code() == Some(0) || tokio::time::Instant::now() > deadline {
            break out;
        }
        assert!(
            stderr(&out).contains("is open for writing by another session"),
            "{}",
            stderr(&out)
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "noted");
    let req = a.mock.requests().last().unwrap().clone();
    let all = req.all_text();
    assert!(all.contains("pelican"), "{all}");
    assert!(all.contains("run the slow thing"), "{all}");
    // The call B never finished has an output, so the history is valid for the API.
    assert_eq!(req.tool_outputs().len(), 1, "{:?}", req.tool_outputs());
}
