//! The `codex` / `codex-reply` tools over an in-memory connection (fake engine):
//! events, results, approvals, cancellation, concurrency, failures.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

use common::*;
use oi_protocol::ThreadId;
use serde_json::{Value, json};
use std::time::Duration;

#[tokio::test]
async fn codex_streams_events_and_returns_the_last_message() {
    let mut c = start(FakeEngine::new());
    c.initialize(true).await;
    let id = c.tool("codex", json!({"prompt": "hello"})).await;
    let r = c.response(id).await;
    assert!(!is_error(&r), "{r}");
    assert_eq!(text(&r), "hi there");
    let thread_id = r["result"]["structuredContent"]["threadId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(r["result"]["structuredContent"]["content"], "hi there");
    assert_eq!(
        c.event_types(id),
        [
            "session_configured",
            "task_started",
            "agent_message_delta",
            "agent_message_delta",
            "agent_message_delta",
            "agent_message",
            "task_complete"
        ]
    );
    let events = c.events_for(id);
    // session_configured has id ""; the turn's events carry the request id as a string.
    assert_eq!(events[0]["params"]["id"], "");
    assert_eq!(events[1]["params"]["id"], id.to_string());
    for e in &events {
        assert_eq!(e["params"]["_meta"]["threadId"], thread_id.as_str());
        // requestId keeps the JSON type of the call's id.
        assert_eq!(e["params"]["_meta"]["requestId"], json!(id));
    }

    // codex-reply continues the same thread.
    let id2 = c
        .tool(
            "codex-reply",
            json!({"threadId": thread_id, "prompt": "again"}),
        )
        .await;
    let r2 = c.response(id2).await;
    assert_eq!(text(&r2), "echo: again");
    assert_eq!(
        r2["result"]["structuredContent"]["threadId"],
        thread_id.as_str()
    );
    assert!(
        !c.event_types(id2)
            .contains(&"session_configured".to_string())
    );
}

#[tokio::test]
async fn string_request_ids_stay_strings_in_meta() {
    let mut c = start(FakeEngine::new());
    c.initialize(false).await;
    c.send(json!({"jsonrpc":"2.0","id":"call-a","method":"tools/call","params":{"name":"codex","arguments":{"prompt":"hello"}}})).await;
    let r = c.response("call-a").await;
    assert_eq!(text(&r), "hi there");
    let ev = c
        .seen
        .iter()
        .find(|v| v["method"] == "codex/event")
        .unwrap();
    assert_eq!(ev["params"]["_meta"]["requestId"], "call-a");
}

#[tokio::test]
async fn progress_notifications_follow_the_token() {
    let mut c = start(FakeEngine::new());
    c.initialize(false).await;
    let id = c
        .request("tools/call", json!({"name":"codex","arguments":{"prompt":"deltas:200"},"_meta":{"progressToken":"p1"}}))
        .await;
    let r = c.response(id).await;
    assert_eq!(text(&r), "done");
    let progress: Vec<&Value> = c
        .seen
        .iter()
        .filter(|v| v["method"] == "notifications/progress")
        .collect();
    assert!(progress.len() >= 3, "{progress:?}");
    let mut last = 0.0;
    for p in &progress {
        assert_eq!(p["params"]["progressToken"], "p1");
        let n = p["params"]["progress"].as_f64().unwrap();
        assert!(n > last, "progress must increase");
        last = n;
        assert!(
            p["params"]["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty())
        );
    }
    // 200 deltas do not become 200 progress notifications.
    assert!(progress.len() < 20, "{}", progress.len());
    assert_eq!(c.events_for(id).len(), 2 + 200 + 2);
}

#[tokio::test]
async fn argument_problems_are_tool_errors_that_say_what_to_fix() {
    let engine = FakeEngine::new();
    let mut c = start(engine.clone());
    c.initialize(false).await;
    let r = c.call_tool("codex", json!({"prompt": 5})).await;
    assert!(is_error(&r));
    assert!(text(&r).contains("`prompt` must be a string"), "{r}");
    let r = c
        .call_tool("codex", json!({"prompt": "x", "aproval-policy": "never"}))
        .await;
    assert!(text(&r).contains("did you mean `approval-policy`"), "{r}");
    let id = c.request("tools/call", json!({"name":"codex"})).await;
    let r = c.response(id).await;
    assert!(is_error(&r) && text(&r).contains("`prompt`"), "{r}");
    let r = c.call_tool("codex-reply", json!({"prompt": "x"})).await;
    assert!(
        is_error(&r) && text(&r).contains("`threadId` is required"),
        "{r}"
    );
    let r = c
        .call_tool("codex-reply", json!({"prompt": "x", "threadId": "abc"}))
        .await;
    assert!(is_error(&r) && text(&r).contains("not a thread id"), "{r}");
    let r = c
        .call_tool("codex", json!({"prompt": "x", "model": "bad-model"}))
        .await;
    assert!(
        is_error(&r) && text(&r).starts_with("Failed to load configuration: model `bad-model`"),
        "{r}"
    );
    assert_eq!(engine.started.load(std::sync::atomic::Ordering::SeqCst), 0);
}

#[tokio::test]
async fn overrides_reach_the_engine() {
    let engine = FakeEngine::new();
    let mut c = start(engine.clone());
    c.initialize(false).await;
    let id = c
        .tool("codex", json!({
            "prompt": "hi", "model": "m1", "profile": "p", "approval-policy": "untrusted",
            "sandbox": "danger-full-access", "config": {"model_reasoning_effort": "high", "shell_timeout_sec": 5},
            "base-instructions": "B", "developer-instructions": "D", "compact-prompt": "C", "cwd": "."
        }))
        .await;
    assert!(!is_error(&c.response(id).await));
    let req = engine.last_request.lock().unwrap().clone().unwrap();
    assert_eq!(req.model.as_deref(), Some("m1"));
    assert_eq!(req.profile.as_deref(), Some("p"));
    assert_eq!(
        req.approval_policy,
        Some(oi_protocol::config_types::AskForApproval::Untrusted)
    );
    assert_eq!(
        req.sandbox,
        Some(oi_protocol::config_types::SandboxMode::DangerFullAccess)
    );
    assert_eq!(
        req.config,
        vec![
            ("model_reasoning_effort".to_string(), json!("high")),
            ("shell_timeout_sec".to_string(), json!(5))
        ]
    );
    assert_eq!(
        (
            req.base_instructions.as_deref(),
            req.developer_instructions.as_deref(),
            req.compact_prompt.as_deref()
        ),
        (Some("B"), Some("D"), Some("C"))
    );
    assert!(req.cwd.unwrap().is_absolute());
}

#[tokio::test]
async fn unknown_thread_is_a_tool_error_naming_the_id_and_stored_threads_resume() {
    let engine = FakeEngine::new();
    let mut c = start(engine.clone());
    c.initialize(false).await;
    let missing = ThreadId::new();
    let id = c
        .tool(
            "codex-reply",
            json!({"threadId": missing.to_string(), "prompt": "x"}),
        )
        .await;
    let r = c.response(id).await;
    assert!(is_error(&r));
    assert!(text(&r).contains(&missing.to_string()), "{r}");
    assert_eq!(
        r["result"]["structuredContent"]["threadId"],
        missing.to_string()
    );

    let stored = ThreadId::new();
    engine.on_disk.lock().unwrap().push(stored);
    let id = c
        .tool(
            "codex-reply",
            json!({"conversationId": stored.to_string(), "prompt": "back"}),
        )
        .await;
    let r = c.response(id).await;
    assert_eq!(text(&r), "echo: back");
    // A resumed thread announces its configuration.
    assert_eq!(c.event_types(id)[0], "session_configured");
}

#[tokio::test]
async fn a_failed_turn_returns_the_error() {
    let mut c = start(FakeEngine::new());
    c.initialize(false).await;
    let id = c.tool("codex", json!({"prompt": "fail"})).await;
    let r = c.response(id).await;
    assert!(is_error(&r));
    assert_eq!(text(&r), "model exploded: HTTP 500");
    assert!(r["result"]["structuredContent"]["threadId"].is_string());
    // The terminal task_complete was consumed by this call: the thread is reusable.
    let tid = r["result"]["structuredContent"]["threadId"].clone();
    let id = c
        .tool("codex-reply", json!({"threadId": tid, "prompt": "ok?"}))
        .await;
    assert_eq!(text(&c.response(id).await), "echo: ok?");
}

#[tokio::test]
async fn concurrent_calls_run_side_by_side_and_a_busy_thread_says_so() {
    let mut c = start(FakeEngine::new());
    c.initialize(true).await;
    let hang = c.tool("codex", json!({"prompt": "hang"})).await;
    let started = c
        .read_until(|v| v["params"]["msg"]["type"] == "task_started")
        .await;
    let tid = started["params"]["_meta"]["threadId"].clone();
    // Another thread answers while the first is still running.
    let quick = c.tool("codex", json!({"prompt": "hello"})).await;
    let r = c.response(quick).await;
    assert_eq!(text(&r), "hi there");
    // A second turn on the busy thread is refused, not queued or interleaved.
    let busy = c
        .tool("codex-reply", json!({"threadId": tid, "prompt": "x"}))
        .await;
    let r = c.response(busy).await;
    assert!(is_error(&r));
    assert!(text(&r).contains("is busy with another turn"), "{r}");
    c.notify(
        "notifications/cancelled",
        json!({"requestId": hang, "reason": "test"}),
    )
    .await;
    c.read_until(|v| v["params"]["msg"]["type"] == "turn_aborted")
        .await;
}

#[tokio::test]
async fn cancellation_interrupts_sends_no_response_and_keeps_the_thread() {
    let mut c = start(FakeEngine::new());
    c.initialize(true).await;
    let id = c.tool("codex", json!({"prompt": "hang"})).await;
    let started = c
        .read_until(|v| v["params"]["msg"]["type"] == "task_started")
        .await;
    let tid = started["params"]["_meta"]["threadId"].clone();
    c.notify("notifications/cancelled", json!({"requestId": id}))
        .await;
    let aborted = c
        .read_until(|v| v["params"]["msg"]["type"] == "turn_aborted")
        .await;
    assert_eq!(aborted["params"]["_meta"]["requestId"], id);
    // No response for the cancelled call: the next response we see is for the ping.
    let ping = c.request("ping", json!({})).await;
    let next = c.read_until(|v| v.get("id").is_some()).await;
    assert_eq!(next["id"], ping, "unexpected {next}");
    // The thread is usable afterwards.
    let again = c
        .tool(
            "codex-reply",
            json!({"threadId": tid, "prompt": "still there?"}),
        )
        .await;
    assert_eq!(text(&c.response(again).await), "echo: still there?");
    assert!(
        c.seen.iter().all(|v| v["id"] != id),
        "the cancelled call was answered"
    );
}

#[tokio::test]
async fn exec_approval_accepts_spec_and_codex_replies() {
    for (reply, want) in [
        (json!({"action": "accept"}), "call-1: approved"),
        (
            json!({"action": "accept", "content": {"decision": "approved_for_session"}}),
            "call-1: approved_for_session",
        ),
        (json!({"action": "decline"}), "call-1: denied"),
        (json!({"action": "cancel"}), "call-1: abort"),
        (json!({"decision": "approved"}), "call-1: approved"),
        (json!({"decision": "denied"}), "call-1: denied"),
        (json!({"something": "else"}), "call-1: denied"),
    ] {
        let mut c = start(FakeEngine::new());
        c.initialize(true).await;
        let id = c.tool("codex", json!({"prompt": "approve"})).await;
        let req = c.server_request("elicitation/create").await;
        let p = &req["params"];
        assert_eq!(p["codex_elicitation"], "exec-approval");
        assert_eq!(p["codex_mcp_tool_call_id"], id.to_string());
        assert_eq!(p["codex_event_id"], id.to_string());
        assert_eq!(p["codex_call_id"], "call-1");
        assert_eq!(p["codex_command"], json!(["touch", "x"]));
        assert_eq!(p["codex_cwd"], "/tmp");
        assert_eq!(
            p["codex_parsed_cmd"],
            json!([{"type":"unknown","cmd":"touch x"}])
        );
        assert_eq!(
            p["requestedSchema"],
            json!({"type":"object","properties":{}})
        );
        assert!(p["threadId"].is_string());
        assert!(p["message"].as_str().unwrap().contains("`touch x`"));
        c.send(json!({"jsonrpc":"2.0","id": req["id"], "result": reply}))
            .await;
        let r = c.response(id).await;
        assert_eq!(text(&r), want, "reply {reply}");
    }
}

#[tokio::test]
async fn an_error_reply_or_no_capability_means_denied() {
    let mut c = start(FakeEngine::new());
    c.initialize(true).await;
    let id = c.tool("codex", json!({"prompt": "approve"})).await;
    let req = c.server_request("elicitation/create").await;
    c.send(json!({"jsonrpc":"2.0","id": req["id"], "error": {"code": -32601, "message": "no UI"}}))
        .await;
    assert_eq!(text(&c.response(id).await), "call-1: denied");

    // A client without the elicitation capability is never asked.
    let mut c = start(FakeEngine::new());
    c.initialize(false).await;
    let id = c.tool("codex", json!({"prompt": "approve"})).await;
    let r = c.response(id).await;
    assert_eq!(text(&r), "call-1: denied");
    assert!(c.seen.iter().all(|v| v["method"] != "elicitation/create"));
}

#[tokio::test]
async fn an_unanswered_approval_times_out_as_denied_and_is_withdrawn() {
    let mut c = start(FakeEngine::with_timeout(Duration::from_millis(200)));
    c.initialize(true).await;
    let id = c.tool("codex", json!({"prompt": "approve"})).await;
    let req = c.server_request("elicitation/create").await;
    // Never answered.
    let r = c.response(id).await;
    assert_eq!(text(&r), "call-1: denied");
    let withdrawn = c
        .seen
        .iter()
        .find(|v| v["method"] == "notifications/cancelled")
        .expect("prompt withdrawn");
    assert_eq!(withdrawn["params"]["requestId"], req["id"]);
    // A late answer is harmless.
    c.send(json!({"jsonrpc":"2.0","id": req["id"], "result": {"decision":"approved"}}))
        .await;
    assert_eq!(c.call("ping", json!({})).await["result"], json!({}));
}

#[tokio::test]
async fn patch_approval_carries_changes() {
    let mut c = start(FakeEngine::new());
    c.initialize(true).await;
    let id = c.tool("codex", json!({"prompt": "patch"})).await;
    let req = c.server_request("elicitation/create").await;
    let p = &req["params"];
    assert_eq!(p["codex_elicitation"], "patch-approval");
    assert_eq!(p["codex_call_id"], "patch-1");
    assert_eq!(p["codex_reason"], "adds a file");
    assert_eq!(
        p["codex_changes"]["/tmp/a.txt"],
        json!({"type":"add","content":"a\n"})
    );
    assert!(p["message"].as_str().unwrap().starts_with("adds a file\n"));
    c.send(json!({"jsonrpc":"2.0","id": req["id"], "result": {"action":"accept"}}))
        .await;
    assert_eq!(text(&c.response(id).await), "patch-1: approved");
}

#[tokio::test]
async fn nested_elicitations_are_relayed_and_answered() {
    let mut c = start(FakeEngine::new());
    c.initialize(true).await;
    let id = c.tool("codex", json!({"prompt": "elicit"})).await;
    let req = c.server_request("elicitation/create").await;
    assert_eq!(req["params"]["message"], "Your name?");
    assert_eq!(
        req["params"]["requestedSchema"]["properties"]["name"]["type"],
        "string"
    );
    assert_eq!(req["params"]["codex_mcp_server"], "peer");
    c.send(json!({"jsonrpc":"2.0","id": req["id"], "result": {"action":"accept","content":{"name":"Ada"}}})).await;
    let r = c.response(id).await;
    assert_eq!(text(&r), r#"peer/7: Accept {"name":"Ada"}"#);

    let mut c = start(FakeEngine::new());
    c.initialize(false).await;
    let id = c.tool("codex", json!({"prompt": "elicit"})).await;
    assert_eq!(text(&c.response(id).await), "peer/7: Decline null");
}

#[tokio::test]
async fn a_turn_ending_withdraws_its_pending_prompt() {
    let mut c = start(FakeEngine::new());
    c.initialize(true).await;
    let id = c.tool("codex", json!({"prompt": "approve"})).await;
    let req = c.server_request("elicitation/create").await;
    c.notify("notifications/cancelled", json!({"requestId": id}))
        .await;
    // The fake turn only aborts on interrupt while waiting; the prompt is withdrawn.
    let withdrawn = c
        .read_until(|v| {
            v["method"] == "notifications/cancelled" && v["params"]["requestId"] == req["id"]
        })
        .await;
    assert_eq!(withdrawn["params"]["reason"], "the turn ended");
}
