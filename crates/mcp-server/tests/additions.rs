//! The extension point (`oi_mcp_server::additions`): tools, prompts and resources a program
//! adds are served by the same tables and answered through the server's own machinery — its
//! `-32021`, its sealed `requestState`, its logging, its list-change subscriptions.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

use common::*;
use oi_jsonrpc::RpcError;
use oi_mcp_server::additions::{AddedRequest, Additions, Outcome};
use oi_mcp_server::protocol::log::LogLevel;
use rmcp::model::{CallToolResult, ClientCapabilities, Tool};
use serde_json::{Value, json};
use std::sync::{Arc, OnceLock};

fn tool(name: &str) -> Tool {
    serde_json::from_value(
        json!({"name": name, "description": name, "inputSchema": {"type": "object"}}),
    )
    .unwrap()
}

fn done(text: &str) -> Result<Outcome<CallToolResult>, RpcError> {
    Ok(Outcome::Complete(
        serde_json::from_value(json!({"content": [{"type": "text", "text": text}]})).unwrap(),
    ))
}

fn additions(me: Arc<OnceLock<Arc<Additions>>>) -> Arc<Additions> {
    let a = Additions::default()
        .with_tool(tool("needs_sampling"), |r: AddedRequest| async move {
            let needed: ClientCapabilities =
                serde_json::from_value(json!({"sampling": {}})).unwrap();
            r.require(&needed, "it samples")?;
            done("sampled")
        })
        .with_tool(tool("ask"), |r: AddedRequest| async move {
            if let Some(state) = r.state::<Value>()?
                && let Some(answer) = r.response("a")
            {
                return done(&format!("{} {}", state["n"], answer["content"]["x"]));
            }
            let inputs = [("a".to_string(), json!({"method": "elicitation/create", "params": {"mode": "form", "message": "x?", "requestedSchema": {"type": "object", "properties": {}}}}))].into();
            Ok(Outcome::InputRequired(
                r.input_required(inputs, Some(&json!({"n": 1})))?,
            ))
        })
        .with_tool(tool("logs"), |r: AddedRequest| async move {
            r.log(LogLevel::Debug, "a detail").await;
            r.log(LogLevel::Info, "a milestone").await;
            done("logged")
        })
        .with_tool(tool("toggle"), move |_| {
            let me = me.clone();
            async move {
                let a = me.get().unwrap();
                if !a.remove_tool("extra") {
                    a.set_tool(tool("extra"), |_| async { done("extra") });
                }
                done("toggled")
            }
        });
    Arc::new(a)
}

fn start_added() -> Client {
    let me = Arc::new(OnceLock::new());
    let a = additions(me.clone());
    me.set(a.clone()).unwrap();
    start_with(FakeEngine::new(), a)
}

fn names(r: &Value) -> Vec<String> {
    r["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn added_tools_follow_ours_and_ours_cannot_be_shadowed() {
    let mut c = start_added();
    let r = c.modern_call("tools/list", json!({})).await;
    assert_eq!(
        names(&r),
        [
            "codex",
            "codex-reply",
            "needs_sampling",
            "ask",
            "logs",
            "toggle"
        ]
    );
    let d = c.modern_call("server/discover", json!({})).await;
    assert_eq!(d["result"]["capabilities"]["tools"]["listChanged"], true);
    // The product adds nothing, and its list never changes.
    let mut plain = start(FakeEngine::new());
    let d = plain.modern_call("server/discover", json!({})).await;
    assert!(
        d["result"]["capabilities"]["tools"]
            .get("listChanged")
            .is_none(),
        "{d}"
    );
}

#[tokio::test]
async fn a_capability_an_addition_requires_is_the_servers_32021() {
    let mut c = start_added();
    let id = c
        .modern(
            "tools/call",
            json!({"name": "needs_sampling", "arguments": {}}),
            json!({}),
        )
        .await;
    let r = c.response(id).await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
    assert_eq!(
        r["error"]["data"],
        json!({"requiredCapabilities": {"sampling": {}}})
    );
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("it samples"),
        "{r}"
    );
    let id = c
        .modern(
            "tools/call",
            json!({"name": "needs_sampling", "arguments": {}}),
            json!({"sampling": {}}),
        )
        .await;
    assert_eq!(text(&c.response(id).await), "sampled");
}

#[tokio::test]
async fn input_is_asked_with_a_sealed_state_that_only_its_own_retry_may_bring_back() {
    let mut c = start_added();
    let ask = |args: Value, extra: Value| {
        let mut p = json!({"name": "ask", "arguments": args});
        for (k, v) in extra.as_object().unwrap() {
            p[k] = v.clone();
        }
        p
    };
    let r = c.modern_call("tools/call", ask(json!({}), json!({}))).await;
    let result = &r["result"];
    assert_eq!(result["resultType"], "input_required", "{r}");
    assert_eq!(result["inputRequests"]["a"]["method"], "elicitation/create");
    let state = result["requestState"].as_str().unwrap().to_string();
    let answer = json!({"a": {"action": "accept", "content": {"x": "yes"}}});
    // Changed, or brought to another call: refused.
    let changed = format!("{state}x");
    let r = c
        .modern_call(
            "tools/call",
            ask(
                json!({}),
                json!({"inputResponses": answer, "requestState": changed}),
            ),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(
        r["error"]["message"].as_str().unwrap().contains("changed"),
        "{r}"
    );
    let r = c
        .modern_call(
            "tools/call",
            ask(
                json!({"other": 1}),
                json!({"inputResponses": answer, "requestState": state}),
            ),
        )
        .await;
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("another request"),
        "{r}"
    );
    // An answer that is not an object is refused before the tool sees it.
    let r = c
        .modern_call(
            "tools/call",
            ask(
                json!({}),
                json!({"inputResponses": {"a": 5}, "requestState": state}),
            ),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // The untouched state, with the answer, completes.
    let r = c
        .modern_call(
            "tools/call",
            ask(
                json!({}),
                json!({"inputResponses": answer, "requestState": state}),
            ),
        )
        .await;
    assert_eq!(text(&r), "1 \"yes\"", "{r}");
    // The initialize era has no multi round-trip requests.
    c.initialize(true).await;
    let r = c.call_tool("ask", json!({})).await;
    assert_eq!(r["error"]["code"], -32600, "{r}");
}

#[tokio::test]
async fn an_addition_logs_only_to_a_request_that_asked_at_its_level() {
    let mut c = start_added();
    let id = c
        .modern(
            "tools/call",
            json!({"name": "logs", "arguments": {}}),
            json!({}),
        )
        .await;
    assert_eq!(text(&c.response(id).await), "logged");
    let id = c
        .modern(
            "tools/call",
            json!({"name": "logs", "arguments": {}, "_meta": {"io.modelcontextprotocol/logLevel": "info"}}),
            json!({}),
        )
        .await;
    assert_eq!(text(&c.response(id).await), "logged");
    let logs: Vec<&Value> = c
        .seen
        .iter()
        .filter(|v| v["method"] == "notifications/message")
        .collect();
    assert_eq!(logs.len(), 1, "{logs:?}");
    assert_eq!(logs[0]["params"]["level"], "info");
    assert_eq!(logs[0]["params"]["data"], "a milestone");
}

#[tokio::test]
async fn a_changed_tool_list_reaches_the_listen_streams_that_asked() {
    let mut c = start_added();
    let listen = c
        .modern(
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
            json!({}),
        )
        .await;
    let ack = c
        .read_until(|v| v["method"] == "notifications/subscriptions/acknowledged")
        .await;
    assert_eq!(
        ack["params"]["notifications"]["toolsListChanged"], true,
        "{ack}"
    );
    let id = c
        .modern(
            "tools/call",
            json!({"name": "toggle", "arguments": {}}),
            json!({}),
        )
        .await;
    let changed = c
        .read_until(|v| v["method"] == "notifications/tools/list_changed")
        .await;
    assert_eq!(
        changed["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        json!(listen)
    );
    // The call's answer may come before or after the notification.
    if !c.seen.iter().any(|v| v["id"] == json!(id)) {
        assert_eq!(text(&c.response(id).await), "toggled");
    }
    let r = c.modern_call("tools/list", json!({})).await;
    assert!(names(&r).contains(&"extra".to_string()), "{r}");
}
