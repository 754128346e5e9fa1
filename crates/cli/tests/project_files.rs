//! Files the agent reads because the repository contains them (AGENTS.md, project config) are
//! read with bounds, through the real binary and the mock model: a FIFO does not hang the
//! process, a symlink to /dev/zero does not eat memory, an oversize file is cut to the cap.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use common::*;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};
use std::time::{Duration, Instant};

fn mkfifo(p: &std::path::Path) {
    let st = std::process::Command::new("mkfifo")
        .arg(p)
        .status()
        .unwrap();
    assert!(st.success(), "mkfifo {p:?}");
}

#[tokio::test]
async fn agents_md_as_a_fifo_does_not_hang_exec() {
    let env = TestEnv::new(
        MockScript::turns([MockTurn::text("answered")]),
        WireApi::Chat,
    )
    .await;
    mkfifo(&env.work().join("AGENTS.md"));
    // `run` fails the test if the binary has not finished within its deadline.
    let out = env.run(&["exec", "hi"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(stdout(&out).contains("answered"), "{}", stdout(&out));
    assert!(
        err.contains("AGENTS.md not used") && err.contains("FIFO"),
        "the refusal is explained: {err}"
    );
    let sent = env.mock.requests()[0].all_text();
    assert!(!sent.contains("<project_instructions"), "{sent}");
}

#[tokio::test]
async fn agents_md_linked_to_dev_zero_is_refused_quickly_with_bounded_memory() {
    let env = TestEnv::new(
        MockScript::turns([MockTurn::text("answered")]),
        WireApi::Chat,
    )
    .await;
    std::os::unix::fs::symlink("/dev/zero", env.work().join("AGENTS.md")).unwrap();
    // Address space capped at 4 GiB: reading /dev/zero to the end would hit it and abort.
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg("ulimit -v 4194304; exec \"$0\" \"$@\"")
        .arg(env!("CARGO_BIN_EXE_interpreter"))
        .args(["exec", "hi"])
        .current_dir(env.work.path())
        .env("OPENINTERPRETER_HOME", env.home.path())
        .env_remove("RUST_LOG")
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let started = Instant::now();
    let out = tokio::time::timeout(Duration::from_secs(60), cmd.output())
        .await
        .expect("interpreter finished")
        .unwrap();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(err.contains("character device"), "{err}");
    assert!(stdout(&out).contains("answered"));
}

#[tokio::test]
async fn an_oversize_agents_md_is_cut_to_the_cap() {
    let env = TestEnv::new(
        MockScript::turns([MockTurn::text("answered")]),
        WireApi::Chat,
    )
    .await;
    let text: String = (0..100_000).map(|i| format!("rule {i}\n")).collect();
    std::fs::write(env.work().join("AGENTS.md"), &text).unwrap();
    let out = env
        .run(&["-c", "project_doc_max_bytes=2000", "exec", "hi"])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let sent = env.mock.requests()[0].all_text();
    let start = sent
        .find("<project_instructions")
        .expect("project doc sent");
    let end = sent
        .find("</project_instructions>")
        .expect("project doc closed");
    let doc = &sent[start..end];
    assert!(doc.contains("rule 0\n"), "{doc}");
    assert!(doc.contains("rule 99999\n"), "{doc}");
    assert!(!doc.contains("rule 50000\n"), "the middle is left out");
    assert!(
        doc.contains(&format!("of {} bytes omitted", text.len())),
        "{doc}"
    );
    assert!(doc.len() < 2300, "{} bytes", doc.len());
}

#[tokio::test]
async fn a_fifo_as_project_config_is_an_error_not_a_hang() {
    let env = TestEnv::new(
        MockScript::turns([MockTurn::text("answered")]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&["trust"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    std::fs::create_dir(env.work().join(".openinterpreter")).unwrap();
    let file = env.work().join(".openinterpreter/config.toml");
    mkfifo(&file);
    let out = env.run(&["exec", "hi"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains(&file.display().to_string()), "{err}");
    assert!(err.contains("not a regular file"), "{err}");
}

#[tokio::test]
async fn agents_md_as_a_fifo_does_not_stall_the_mcp_server() {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
    let env = TestEnv::new(
        MockScript::turns([MockTurn::text("answered")]),
        WireApi::Chat,
    )
    .await;
    mkfifo(&env.work().join("AGENTS.md"));
    let mut child = env
        .command(&["mcp-server"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let work = env.work();
    for msg in [
        serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"}}}),
        serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        serde_json::json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "codex", "arguments": {"prompt": "hi", "cwd": work}}}),
    ] {
        let mut line = serde_json::to_vec(&msg).unwrap();
        line.push(b'\n');
        stdin.write_all(&line).await.unwrap();
    }
    stdin.flush().await.unwrap();
    let answer = tokio::time::timeout(Duration::from_secs(60), async {
        loop {
            let line = lines
                .next_line()
                .await
                .unwrap()
                .expect("server closed stdout");
            let v: serde_json::Value = serde_json::from_str(&line).unwrap();
            if v["id"] == 2 && v.get("method").is_none() {
                return v;
            }
        }
    })
    .await
    .expect("the codex call was answered");
    assert!(answer.to_string().contains("answered"), "{answer}");
    // End of input still ends the server.
    drop(stdin);
    let status = tokio::time::timeout(Duration::from_secs(30), child.wait())
        .await
        .expect("mcp-server exited on stdin EOF")
        .unwrap();
    assert!(status.success(), "{status}");
}
