//! The sandbox through the real binary: `interpreter sandbox` and the agent's own commands.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use common::*;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};
use serde_json::json;

#[tokio::test]
async fn sandbox_command_enforces_the_policy() {
    let env = TestEnv::new(MockScript::turns([]), WireApi::Chat).await;
    let work = env.work();
    // read-only: writing in cwd fails.
    let out = env
        .run(&[
            "sandbox",
            "-s",
            "read-only",
            "--",
            "sh",
            "-c",
            "echo x > ro.txt",
        ])
        .await;
    assert_ne!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!work.join("ro.txt").exists());
    // workspace-write: cwd is writable, a directory outside the roots is not.
    let out = env
        .run(&[
            "sandbox",
            "-s",
            "workspace-write",
            "--",
            "sh",
            "-c",
            "echo x > ww.txt",
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(read(&work.join("ww.txt")), "x\n");
    let outside = outside_dir();
    let target = outside.path().join("escape.txt");
    let script = format!("echo x > {}", target.display());
    let out = env
        .run(&[
            "sandbox",
            "-s",
            "workspace-write",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .await;
    assert_ne!(out.status.code(), Some(0));
    assert!(!target.exists());
    // danger-full-access writes where the user can.
    let out = env
        .run(&[
            "sandbox",
            "-s",
            "danger-full-access",
            "--",
            "sh",
            "-c",
            &script,
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(target.exists());
    // The command's exit code is passed through.
    let out = env
        .run(&["sandbox", "-s", "read-only", "--", "sh", "-c", "exit 5"])
        .await;
    assert_eq!(out.status.code(), Some(5));
}

#[tokio::test]
async fn a_write_outside_the_workspace_fails_and_the_model_sees_why() {
    let env = TestEnv::new(MockScript::turns([]), WireApi::Chat).await;
    let outside = outside_dir();
    let target = outside.path().join("nope.txt");
    env.mock.set_script(MockScript::turns([
        MockTurn::tool_call(
            "shell",
            json!({"command": ["bash", "-lc", format!("echo hi > {} && echo inside > ok.txt", target.display())]}),
        ),
        MockTurn::tool_call("shell", json!({"command": ["bash", "-lc", "echo inside > ok.txt"]})),
        MockTurn::text("done"),
    ]));
    let out = env
        .run(&[
            "exec",
            "-s",
            "workspace-write",
            "-a",
            "never",
            "write things",
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!target.exists(), "the sandbox let a write escape");
    assert_eq!(read(&env.work().join("ok.txt")), "inside\n");
    let reqs = env.mock.requests();
    let first = &reqs[1].tool_outputs()[0].1;
    assert!(!first.contains("Exit code: 0"), "{first}");
    assert!(
        first.contains("Permission denied")
            || first.contains("Read-only")
            || first.contains("not permitted"),
        "{first}"
    );
}

#[tokio::test]
async fn on_failure_offers_an_unsandboxed_rerun() {
    let env = TestEnv::new(MockScript::turns([]), WireApi::Chat).await;
    let outside = outside_dir();
    let target = outside.path().join("retry.txt");
    env.mock.set_script(MockScript::turns([
        MockTurn::tool_call(
            "shell",
            json!({"command": ["bash", "-lc", format!("echo hi > {}", target.display())]}),
        ),
        MockTurn::text("done"),
    ]));
    let out = env
        .run(&[
            "exec",
            "-s",
            "workspace-write",
            "-a",
            "on-failure",
            "--json",
            "write",
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // exec denies the re-run, so the write never happens; the request must have been made.
    assert!(!target.exists());
    let evs = events(&out);
    let req = evs
        .iter()
        .find(|e| e["msg"]["type"] == "exec_approval_request")
        .expect("an approval request for the unsandboxed re-run");
    assert!(
        req["msg"]["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("sandbox"),
        "{req}"
    );
}

#[tokio::test]
async fn escalation_request_becomes_an_approval_request() {
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call(
                "shell",
                json!({"command": ["true"], "with_escalated_permissions": true, "justification": "needs the network"}),
            ),
            MockTurn::text("ok"),
        ]),
        WireApi::Chat,
    )
    .await;
    let out = env
        .run(&[
            "exec",
            "-s",
            "workspace-write",
            "-a",
            "on-request",
            "--json",
            "go",
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let evs = events(&out);
    let req = evs
        .iter()
        .find(|e| e["msg"]["type"] == "exec_approval_request")
        .expect("approval request");
    assert_eq!(req["msg"]["reason"], "needs the network");
}
