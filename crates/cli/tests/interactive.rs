//! `interpreter [PROMPT]`: the line-based interactive session, driven through stdin.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use common::*;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};
use serde_json::json;
use tokio::io::AsyncWriteExt;

async fn session(env: &TestEnv, args: &[&str], input: &str) -> std::process::Output {
    let mut child = env
        .command(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).await.unwrap();
    drop(stdin);
    tokio::time::timeout(std::time::Duration::from_secs(60), child.wait_with_output())
        .await
        .expect("interactive session did not end")
        .unwrap()
}

#[tokio::test]
async fn two_turns_then_end_of_input() {
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::text("first answer").chunked(3),
            MockTurn::text("second answer"),
        ]),
        WireApi::Chat,
    )
    .await;
    let out = session(&env, &[], "hello\nand again\n").await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "first answer\nsecond answer\n");
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 2);
    assert!(reqs[1].all_text().contains("first answer"));
}

#[tokio::test]
async fn approvals_are_asked_on_stdin() {
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", json!({"command": ["touch", "yes.txt"]})),
            MockTurn::text("made it"),
            MockTurn::tool_call("shell", json!({"command": ["touch", "no.txt"]})),
            MockTurn::text("skipped"),
        ]),
        WireApi::Chat,
    )
    .await;
    let out = session(
        &env,
        &["-s", "danger-full-access", "-a", "untrusted", "make yes"],
        "y\nmake no\nn\n/exit\n",
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(env.work().join("yes.txt").exists());
    assert!(!env.work().join("no.txt").exists());
    assert!(
        stderr(&out).contains("Run `touch yes.txt`"),
        "{}",
        stderr(&out)
    );
}
