//! `interpreter exec` end to end against the scripted mock model, in both wire APIs.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use common::*;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockResponse, MockScript, MockTurn};
use serde_json::json;

const BOTH: [WireApi; 2] = [WireApi::Chat, WireApi::Responses];
const FULL: &[&str] = &["-s", "danger-full-access", "-a", "never"];

fn args<'a>(extra: &[&'a str], tail: &[&'a str]) -> Vec<&'a str> {
    let mut v = vec!["exec"];
    v.extend_from_slice(extra);
    v.extend_from_slice(tail);
    v
}

#[tokio::test]
async fn text_only_turn_prints_the_answer() {
    for wire in BOTH {
        let env = TestEnv::new(
            MockScript::turns([MockTurn::text("Hello from the mock").chunked(4)]),
            wire,
        )
        .await;
        let out = env.run(&["exec", "say hello"]).await;
        assert_eq!(out.status.code(), Some(0), "{wire:?}: {}", stderr(&out));
        assert_eq!(stdout(&out).trim(), "Hello from the mock");
        let reqs = env.mock.requests();
        assert_eq!(reqs.len(), 1);
        assert_eq!(reqs[0].wire_api(), wire);
        assert_eq!(reqs[0].last_user_text().as_deref(), Some("say hello"));
        // The model is told where it runs and under which policies.
        let all = reqs[0].all_text();
        assert!(all.contains(&env.work().display().to_string()), "{all}");
        assert!(all.contains("sandbox_mode"), "{all}");
        assert!(all.contains("approval_policy"), "{all}");
    }
}

#[tokio::test]
async fn json_mode_prints_every_event() {
    let env = TestEnv::new(
        MockScript::turns([MockTurn::text("abc")
            .chunked(1)
            .with_reasoning("thinking hard")]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&["exec", "--json", "hi"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let evs = events(&out);
    let types = event_types(&evs);
    assert_eq!(
        types.first().map(String::as_str),
        Some("session_configured")
    );
    assert!(types.contains(&"task_started".to_string()));
    assert_eq!(
        types.iter().filter(|t| *t == "agent_message_delta").count(),
        3,
        "{types:?}"
    );
    assert!(types.contains(&"agent_reasoning_delta".to_string()));
    assert!(types.contains(&"agent_reasoning".to_string()));
    assert_eq!(types.last().map(String::as_str), Some("task_complete"));
    let last = evs.last().unwrap();
    assert_eq!(last["msg"]["last_agent_message"], "abc");
    assert_eq!(last["id"], last["msg"]["turn_id"]);
}

#[tokio::test]
async fn shell_call_then_answer() {
    for wire in BOTH {
        let env = TestEnv::new(
            MockScript::turns([
                MockTurn::tool_call("shell", json!({"command": ["bash", "-lc", "echo made > out.txt && echo listing && ls"]})),
                MockTurn::text("Created out.txt"),
            ]),
            wire,
        )
        .await;
        let out = env.run(&args(FULL, &["--json", "make a file"])).await;
        assert_eq!(out.status.code(), Some(0), "{wire:?}: {}", stderr(&out));
        assert_eq!(read(&env.work().join("out.txt")), "made\n");
        let reqs = env.mock.requests();
        assert_eq!(reqs.len(), 2);
        let outputs = reqs[1].tool_outputs();
        assert_eq!(outputs.len(), 1, "{outputs:?}");
        assert!(outputs[0].1.contains("Exit code: 0"), "{}", outputs[0].1);
        assert!(outputs[0].1.contains("listing"), "{}", outputs[0].1);
        assert!(outputs[0].1.contains("out.txt"), "{}", outputs[0].1);
        let types = event_types(&events(&out));
        for t in [
            "exec_command_begin",
            "exec_command_output_delta",
            "exec_command_end",
        ] {
            assert!(types.contains(&t.to_string()), "{t} missing: {types:?}");
        }
    }
}

#[tokio::test]
async fn shell_command_as_a_string_and_failing_exit_code() {
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", json!({"command": "echo oops >&2; exit 7"})),
            MockTurn::text("it failed"),
        ]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&args(FULL, &["run it"])).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let outputs = env.mock.requests()[1].tool_outputs();
    assert!(outputs[0].1.contains("Exit code: 7"), "{}", outputs[0].1);
    assert!(outputs[0].1.contains("oops"), "{}", outputs[0].1);
}

#[tokio::test]
async fn apply_patch_adds_updates_and_deletes() {
    for wire in BOTH {
        let env = TestEnv::new(MockScript::turns([]), wire).await;
        let work = env.work();
        std::fs::write(work.join("keep.txt"), "one\ntwo\nthree\n").unwrap();
        std::fs::write(work.join("gone.txt"), "bye\n").unwrap();
        let patch = "*** Begin Patch\n*** Add File: new/added.txt\n+fresh\n*** Update File: keep.txt\n@@\n one\n-two\n+TWO\n three\n*** Delete File: gone.txt\n*** End Patch\n";
        env.mock.set_script(MockScript::turns([
            MockTurn::tool_call("apply_patch", json!({"input": patch})),
            MockTurn::text("patched"),
        ]));
        let out = env
            .run(&[
                "exec",
                "-s",
                "workspace-write",
                "-a",
                "on-request",
                "--json",
                "edit",
            ])
            .await;
        // workspace-write needs the sandbox only for commands; patches inside the
        // workspace are applied by the engine without asking.
        assert_eq!(out.status.code(), Some(0), "{wire:?}: {}", stderr(&out));
        assert_eq!(read(&work.join("new/added.txt")), "fresh\n");
        assert_eq!(read(&work.join("keep.txt")), "one\nTWO\nthree\n");
        assert!(!work.join("gone.txt").exists());
        let outputs = env.mock.requests()[1].tool_outputs();
        assert!(outputs[0].1.contains("Success"), "{}", outputs[0].1);
        let evs = events(&out);
        let end = evs
            .iter()
            .find(|e| e["msg"]["type"] == "patch_apply_end")
            .expect("patch_apply_end");
        assert_eq!(end["msg"]["success"], true);
        assert_eq!(end["msg"]["status"], "completed");
    }
}

#[tokio::test]
async fn a_patch_that_does_not_apply_changes_nothing() {
    let env = TestEnv::new(MockScript::turns([]), WireApi::Chat).await;
    let work = env.work();
    std::fs::write(work.join("a.txt"), "alpha\n").unwrap();
    std::fs::write(work.join("b.txt"), "beta\n").unwrap();
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n-alpha\n+ALPHA\n*** Update File: b.txt\n@@\n-not in the file\n+x\n*** End Patch";
    env.mock.set_script(MockScript::turns([
        MockTurn::tool_call("apply_patch", json!({"input": patch})),
        MockTurn::text("sorry"),
        MockTurn::text("sorry again"),
    ]));
    let out = env.run(&args(FULL, &["edit"])).await;
    // The edit was asked for and did not happen: after one retry the run fails, saying so.
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no file was changed"),
        "{}",
        stderr(&out)
    );
    assert_eq!(read(&work.join("a.txt")), "alpha\n");
    assert_eq!(read(&work.join("b.txt")), "beta\n");
    let outputs = env.mock.requests()[1].tool_outputs();
    assert!(outputs[0].1.contains("b.txt"), "{}", outputs[0].1);
    assert!(
        outputs[0].1.contains("No file was changed"),
        "{}",
        outputs[0].1
    );
}

#[tokio::test]
async fn rate_limit_then_success() {
    let env = TestEnv::with_config(
        MockScript::new(vec![
            MockResponse::rate_limited("0"),
            MockTurn::text("after retry").into(),
        ]),
        WireApi::Chat,
        "",
    )
    .await;
    // The generated config disables retries; allow one.
    let out = env
        .run(&[
            "exec",
            "-c",
            "model_providers.mock.request_max_retries=2",
            "--json",
            "hi",
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(env.mock.requests().len(), 2);
    let evs = events(&out);
    assert!(event_types(&evs).contains(&"stream_error".to_string()));
    assert_eq!(
        evs.last().unwrap()["msg"]["last_agent_message"],
        "after retry"
    );
}

#[tokio::test]
async fn stream_cut_midway_is_retried_or_reported() {
    for wire in BOTH {
        // Retried: the second attempt completes.
        let env = TestEnv::new(
            MockScript::turns([
                MockTurn::text("partial answer that will be cut")
                    .chunked(3)
                    .disconnect_after(3),
                MockTurn::text("complete"),
            ]),
            wire,
        )
        .await;
        let out = env
            .run(&[
                "exec",
                "-c",
                "model_providers.mock.stream_max_retries=1",
                "hi",
            ])
            .await;
        assert_eq!(out.status.code(), Some(0), "{wire:?}: {}", stderr(&out));
        assert_eq!(stdout(&out).trim(), "complete");
        assert!(stderr(&out).contains("Reconnecting"), "{}", stderr(&out));

        // Not retried: a clear error and exit code 1.
        let env = TestEnv::new(
            MockScript::turns([MockTurn::text("cut").chunked(1).disconnect_after(2)]),
            wire,
        )
        .await;
        let out = env.run(&["exec", "hi"]).await;
        assert_eq!(out.status.code(), Some(1), "{wire:?}: {}", stderr(&out));
        assert!(
            stderr(&out).to_lowercase().contains("stream"),
            "{}",
            stderr(&out)
        );
    }
}

#[tokio::test]
async fn invalid_and_unknown_tool_calls_go_back_to_the_model() {
    for wire in BOTH {
        let env = TestEnv::new(
            MockScript::turns([
                MockTurn::tool_call_raw("shell", "{\"command\": [\"ls\""),
                MockTurn::tool_call("teleport", json!({"to": "mars"})),
                MockTurn::text("gave up"),
            ]),
            wire,
        )
        .await;
        let out = env.run(&args(FULL, &["go"])).await;
        assert_eq!(out.status.code(), Some(0), "{wire:?}: {}", stderr(&out));
        let reqs = env.mock.requests();
        assert_eq!(reqs.len(), 3);
        let first = &reqs[1].tool_outputs()[0].1;
        assert!(first.contains("invalid arguments for `shell`"), "{first}");
        let second = &reqs[2].tool_outputs().last().unwrap().1.clone();
        assert!(second.contains("unknown tool `teleport`"), "{second}");
    }
}

#[tokio::test]
async fn a_model_that_never_stops_calling_tools_is_capped() {
    let env = TestEnv::new(
        MockScript::always(MockTurn::tool_call("shell", json!({"command": ["true"]}))),
        WireApi::Chat,
    )
    .await;
    let out = env
        .run(&args(FULL, &["-c", "max_turn_steps=3", "loop"]))
        .await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("max_turn_steps"), "{}", stderr(&out));
    assert_eq!(env.mock.requests().len(), 3);
}

#[tokio::test]
async fn approvals_are_denied_in_exec_and_the_model_is_told() {
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", json!({"command": ["touch", "should_not_exist"]})),
            MockTurn::text("ok, not created"),
        ]),
        WireApi::Chat,
    )
    .await;
    let out = env
        .run(&[
            "exec",
            "-s",
            "danger-full-access",
            "-a",
            "untrusted",
            "--json",
            "touch it",
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!env.work().join("should_not_exist").exists());
    let types = event_types(&events(&out));
    assert!(
        types.contains(&"exec_approval_request".to_string()),
        "{types:?}"
    );
    let outputs = env.mock.requests()[1].tool_outputs();
    assert!(outputs[0].1.contains("denied"), "{}", outputs[0].1);
}

#[tokio::test]
async fn interrupt_ends_the_turn_as_aborted() {
    let env = TestEnv::new(
        MockScript::turns([MockTurn::text("never finishes").chunked(1).stall_after(2)]),
        WireApi::Chat,
    )
    .await;
    let child = env
        .command(&["exec", "--json", "wait"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Wait until the model request is in flight, then press Ctrl-C.
    env.mock
        .wait_for_requests(1, std::time::Duration::from_secs(30))
        .await;
    let pid = child.id().unwrap() as i32;
    // SAFETY: kill takes no pointers; `pid` is our own child, still running.
    unsafe { libc::kill(pid, libc::SIGINT) };
    let out = tokio::time::timeout(std::time::Duration::from_secs(30), child.wait_with_output())
        .await
        .expect("exec did not stop after SIGINT")
        .unwrap();
    // 128 + SIGINT, as a shell reports a process stopped by Ctrl-C.
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let types = event_types(&events(&out));
    assert_eq!(
        types.last().map(String::as_str),
        Some("turn_aborted"),
        "{types:?}"
    );
}

#[tokio::test]
async fn prompt_from_stdin() {
    let env = TestEnv::new(
        MockScript::turns([MockTurn::text("read it")]),
        WireApi::Chat,
    )
    .await;
    let mut child = env
        .command(&["exec", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use tokio::io::AsyncWriteExt;
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(b"prompt via stdin").await.unwrap();
    drop(stdin);
    let out = child.wait_with_output().await.unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        env.mock.requests()[0].last_user_text().as_deref(),
        Some("prompt via stdin")
    );
}

#[tokio::test]
async fn base_and_developer_instructions_reach_the_model() {
    for wire in BOTH {
        let env = TestEnv::with_config(
            MockScript::turns([MockTurn::text("ok")]),
            wire,
            "base_instructions = \"You are a pirate coding agent.\"\ndeveloper_instructions = \"Always answer in French.\"",
        )
        .await;
        let out = env.run(&["exec", "hi"]).await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let req = &env.mock.requests()[0];
        let body = &req.body;
        let system = match wire {
            WireApi::Chat => body["messages"][0]["content"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            WireApi::Responses => body["instructions"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            WireApi::Messages => body["system"][0]["text"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
        };
        assert!(
            system.starts_with("You are a pirate coding agent."),
            "{system}"
        );
        assert!(
            !system.contains("You are Open Interpreter"),
            "base instructions must replace the default"
        );
        assert!(req.all_text().contains("Always answer in French."));
    }
}

/// An answer that never came is a failure for scripts; a cut-off one is flagged.
#[tokio::test]
async fn exec_exit_codes_for_empty_and_truncated_answers() {
    let fixture = oi_test_support::fixture;
    let env = TestEnv::new(
        MockScript::new(vec![MockResponse::recorded(fixture(
            "vllm/empty-completion.sse",
        ))]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&["exec", "hi"]).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("empty answer"), "{}", stderr(&out));

    let env = TestEnv::new(
        MockScript::new(vec![MockResponse::recorded(fixture(
            "vllm/length-text.sse",
        ))]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&["exec", "explain"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stdout(&out).contains("Here is the first half"));
    assert!(stderr(&out).contains("cut off"), "{}", stderr(&out));
}
