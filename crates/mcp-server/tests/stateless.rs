//! MCP 2026-07-28 over an in-memory stdio connection (fake engine): requests that carry
//! their version and capabilities in `_meta`, served on their own beside the `initialize`
//! era.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

use common::*;
use serde_json::{Value, json};

const SERVER_INFO: &str = "io.modelcontextprotocol/serverInfo";
const SUBSCRIPTION_ID: &str = "io.modelcontextprotocol/subscriptionId";

fn meta_with(extra: Value) -> Value {
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    for (k, v) in extra.as_object().unwrap() {
        meta[k] = v.clone();
    }
    meta
}

#[tokio::test]
async fn discover_describes_the_server_with_its_identity_and_caching() {
    let mut c = start(FakeEngine::new());
    let r = c.modern_call("server/discover", json!({})).await["result"].clone();
    assert_eq!(r["resultType"], "complete");
    assert_eq!(r["supportedVersions"], json!(["2026-07-28"]));
    assert_eq!(
        r["capabilities"],
        json!({
            "extensions": {"io.modelcontextprotocol/tasks": {}},
            "logging": {},
            "prompts": {"listChanged": true},
            "resources": {"subscribe": true, "listChanged": true},
            "tools": {}
        })
    );
    assert!(r["instructions"].as_str().unwrap().contains("codex-reply"));
    assert_eq!(r["ttlMs"], 3_600_000);
    assert_eq!(r["cacheScope"], "public");
    assert_eq!(
        r["_meta"][SERVER_INFO]["name"],
        "openinterpreter-mcp-server"
    );
    assert_eq!(
        r["_meta"][SERVER_INFO]["version"],
        env!("CARGO_PKG_VERSION")
    );
}

#[tokio::test]
async fn a_bad_meta_gets_the_specs_errors() {
    let mut c = start(FakeEngine::new());
    let r = c
        .call(
            "tools/list",
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602);
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("io.modelcontextprotocol/clientCapabilities"),
        "{r}"
    );
    let r = c
        .call(
            "tools/list",
            json!({"_meta": meta_with(json!({"io.modelcontextprotocol/protocolVersion": "v999.0.0"}))}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32022);
    assert_eq!(
        r["error"]["data"],
        json!({"supported": ["2026-07-28"], "requested": "v999.0.0"})
    );
    let r = c
        .call(
            "tools/list",
            json!({"_meta": meta_with(json!({"io.modelcontextprotocol/logLevel": "loud"}))}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602);
    // The connection lives on.
    assert_eq!(
        c.modern_call("tools/list", json!({})).await["result"]["resultType"],
        "complete"
    );
}

#[tokio::test]
async fn removed_methods_are_not_found_and_say_what_replaced_them() {
    let mut c = start(FakeEngine::new());
    for (method, hint) in [
        ("initialize", "server/discover"),
        ("ping", "server/discover"),
        ("logging/setLevel", "logLevel"),
        ("resources/subscribe", "subscriptions/listen"),
        ("resources/unsubscribe", "subscriptions/listen"),
    ] {
        let r = c
            .modern_call(
                method,
                json!({"uri": "interpreter://threads/x", "level": "info"}),
            )
            .await;
        assert_eq!(r["error"]["code"], -32601, "{method}: {r}");
        let msg = r["error"]["message"].as_str().unwrap();
        assert!(
            msg.contains("removed in MCP 2026-07-28") && msg.contains(hint),
            "{msg}"
        );
    }
    let r = c.modern_call("completion/complete", json!({})).await;
    assert_eq!(r["error"]["code"], -32601);
}

#[tokio::test]
async fn tools_list_has_a_fixed_order_and_caching_hints() {
    let mut c = start(FakeEngine::new());
    let r = c.modern_call("tools/list", json!({})).await["result"].clone();
    let names: Vec<&str> = r["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["codex", "codex-reply"]);
    assert_eq!(r["ttlMs"], 3_600_000);
    assert_eq!(r["cacheScope"], "public");
    assert_eq!(r["resultType"], "complete");
    assert_eq!(
        r["_meta"][SERVER_INFO]["name"],
        "openinterpreter-mcp-server"
    );
}

#[tokio::test]
async fn a_codex_turn_streams_its_events_then_codex_reply_continues() {
    let mut c = start(FakeEngine::new());
    let id = c
        .modern(
            "tools/call",
            json!({"name": "codex", "arguments": {"prompt": "hello"}}),
            json!({}),
        )
        .await;
    let r = c.response(id).await;
    assert_eq!(text(&r), "hi there");
    assert_eq!(r["result"]["resultType"], "complete");
    assert_eq!(
        r["result"]["_meta"][SERVER_INFO]["name"],
        "openinterpreter-mcp-server"
    );
    let types = c.event_types(id);
    assert_eq!(
        types.first().map(String::as_str),
        Some("session_configured")
    );
    for kind in [
        "task_started",
        "agent_message_delta",
        "agent_message",
        "task_complete",
    ] {
        assert!(types.iter().any(|t| t == kind), "{kind} in {types:?}");
    }
    let thread = r["result"]["structuredContent"]["threadId"].clone();
    let id = c
        .modern(
            "tools/call",
            json!({"name": "codex-reply", "arguments": {"threadId": thread, "prompt": "again"}}),
            json!({}),
        )
        .await;
    let r = c.response(id).await;
    assert_eq!(text(&r), "echo: again");
    assert_eq!(r["result"]["structuredContent"]["threadId"], thread);
}

#[tokio::test]
async fn approvals_are_denied_without_a_request_to_the_client() {
    let mut c = start(FakeEngine::new());
    // A client that did not declare elicitation cannot be asked: denied, the model told.
    let id = c
        .modern(
            "tools/call",
            json!({"name": "codex", "arguments": {"prompt": "approve"}}),
            json!({}),
        )
        .await;
    let r = c.response(id).await;
    assert_eq!(text(&r), "call-1: denied");
    assert!(
        c.seen
            .iter()
            .all(|v| v.get("id").is_none() || v.get("method").is_none()),
        "a server-to-client request was sent: {:?}",
        c.seen
    );
    // Nested elicitations from other MCP servers are declined (they cannot wait parked),
    // even for a client that declares elicitation.
    let id = c
        .modern(
            "tools/call",
            json!({"name": "codex", "arguments": {"prompt": "elicit"}}),
            json!({"elicitation": {}}),
        )
        .await;
    assert_eq!(text(&c.response(id).await), "peer/7: Decline null");
}

#[tokio::test]
async fn cancelling_a_call_interrupts_its_turn_and_sends_nothing_more_for_it() {
    let mut c = start(FakeEngine::new());
    let id = c
        .modern(
            "tools/call",
            json!({"name": "codex", "arguments": {"prompt": "hang"}}),
            json!({}),
        )
        .await;
    let started = c
        .read_until(|v| {
            v["method"] == "codex/event" && v["params"]["msg"]["type"] == "task_started"
        })
        .await;
    let thread = started["params"]["_meta"]["threadId"].clone();
    c.notify(
        "notifications/cancelled",
        json!({"requestId": id, "reason": "user"}),
    )
    .await;
    // The thread is free again once the interrupted turn ended: until then a reply is told
    // it is busy (each answer comes at once).
    let r = loop {
        let next = c
            .modern(
                "tools/call",
                json!({"name": "codex-reply", "arguments": {"threadId": thread, "prompt": "still there?"}}),
                json!({}),
            )
            .await;
        let r = c
            .read_until(|v| v.get("id").is_some() && v.get("method").is_none())
            .await;
        assert_eq!(r["id"], next, "the cancelled request was answered: {r}");
        if !text(&r).contains("busy") {
            break r;
        }
    };
    assert_eq!(text(&r), "echo: still there?");
    // 2026-07-28: nothing more was sent for the cancelled request, not even its turn's end.
    assert!(
        !c.event_types(id).iter().any(|t| t == "turn_aborted"),
        "{:?}",
        c.event_types(id)
    );
}

#[tokio::test]
async fn log_messages_go_only_to_a_request_that_asked_at_or_above_its_level() {
    let mut c = start(FakeEngine::new());
    let quiet = c
        .modern(
            "tools/call",
            json!({"name": "codex", "arguments": {"prompt": "fail"}}),
            json!({}),
        )
        .await;
    c.response(quiet).await;
    assert!(
        c.seen
            .iter()
            .all(|v| v["method"] != "notifications/message"),
        "{:?}",
        c.seen
    );
    let params = json!({
        "name": "codex",
        "arguments": {"prompt": "fail"},
        "_meta": {"io.modelcontextprotocol/logLevel": "info", "progressToken": "p1"},
    });
    let loud = c.modern("tools/call", params, json!({})).await;
    let r = c.response(loud).await;
    assert!(is_error(&r), "{r}");
    let logs: Vec<&Value> = c
        .seen
        .iter()
        .filter(|v| v["method"] == "notifications/message")
        .map(|v| &v["params"])
        .collect();
    let levels: Vec<&str> = logs.iter().map(|p| p["level"].as_str().unwrap()).collect();
    assert!(
        levels.contains(&"error") && levels.contains(&"info"),
        "{levels:?}"
    );
    assert!(!levels.contains(&"debug"), "{levels:?}");
    assert!(
        logs.iter()
            .any(|p| p["data"].as_str().unwrap().contains("model exploded")),
        "{logs:?}"
    );
    // Progress with a token works in this era too.
    assert!(
        c.seen.iter().any(
            |v| v["method"] == "notifications/progress" && v["params"]["progressToken"] == "p1"
        )
    );
}

#[tokio::test]
async fn prompt_files_are_prompts_and_a_listen_stream_reports_their_changes() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("review.md"),
        "---\ndescription: Review a branch\n---\nReview $BRANCH carefully.\n",
    )
    .unwrap();
    let engine = FakeEngine::new();
    *engine.prompts.lock().unwrap() = vec![dir.path().to_path_buf()];
    let mut c = start(engine);
    let list = c.modern_call("prompts/list", json!({})).await["result"].clone();
    assert_eq!(list["prompts"][0]["name"], "review");
    assert_eq!(list["prompts"][0]["description"], "Review a branch");
    assert_eq!(
        list["prompts"][0]["arguments"][0],
        json!({"name": "BRANCH", "required": true})
    );
    assert_eq!(list["cacheScope"], "private");
    let got = c
        .modern_call(
            "prompts/get",
            json!({"name": "review", "arguments": {"BRANCH": "main"}}),
        )
        .await;
    assert_eq!(
        got["result"]["messages"][0],
        json!({"role": "user", "content": {"type": "text", "text": "Review main carefully.\n"}})
    );
    let missing = c
        .modern_call("prompts/get", json!({"name": "review"}))
        .await;
    assert!(
        missing["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`BRANCH` is required"),
        "{missing}"
    );

    let listen = c
        .modern(
            "subscriptions/listen",
            json!({"notifications": {"promptsListChanged": true, "toolsListChanged": true}}),
            json!({}),
        )
        .await;
    let ack = c
        .read_until(|v| v["method"] == "notifications/subscriptions/acknowledged")
        .await;
    assert_eq!(ack["params"]["_meta"][SUBSCRIPTION_ID], listen);
    // The tool list never changes: that part is not acknowledged.
    assert_eq!(
        ack["params"]["notifications"],
        json!({"promptsListChanged": true})
    );
    std::fs::write(dir.path().join("explain.md"), "Explain $ARGUMENTS\n").unwrap();
    let changed = c
        .read_until(|v| v["method"] == "notifications/prompts/list_changed")
        .await;
    assert_eq!(changed["params"]["_meta"][SUBSCRIPTION_ID], listen);
    // Cancelled by the client: no answer, and the connection goes on.
    c.notify("notifications/cancelled", json!({"requestId": listen}))
        .await;
    let r = c.modern_call("prompts/list", json!({})).await;
    assert_eq!(r["result"]["prompts"].as_array().unwrap().len(), 2);
    assert!(
        c.seen
            .iter()
            .all(|v| v["id"] != listen || v.get("method").is_some()),
        "{:?}",
        c.seen
    );
}

#[tokio::test]
async fn a_listen_stream_the_server_ends_gets_a_completion_result() {
    let mut c = start(FakeEngine::new());
    let listen = c
        .modern(
            "subscriptions/listen",
            json!({"notifications": {"resourcesListChanged": true}}),
            json!({}),
        )
        .await;
    c.read_until(|v| v["method"] == "notifications/subscriptions/acknowledged")
        .await;
    c.close_stdin().await;
    let r = c.response(listen).await;
    assert_eq!(r["result"]["resultType"], "complete");
    assert_eq!(r["result"]["_meta"][SUBSCRIPTION_ID], listen);
    assert_eq!(c.exit_code().await, 0);
}
