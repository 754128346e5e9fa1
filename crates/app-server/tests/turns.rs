//! turn/start|steer|interrupt, the event pump's notifications, v2 approvals, and sharing
//! threads with the MCP `codex`/`codex-reply` tools.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use common::*;
use oi_test_support::{MockResponse, MockScript, MockTurn, TokenUsage};
use serde_json::{Value, json};

const UNTRUSTED: &str = "approval_policy = \"untrusted\"\nsandbox_mode = \"danger-full-access\"\n";

fn shell(script: &str) -> MockTurn {
    MockTurn::tool_call("shell", json!({"command": ["bash", "-lc", script]}))
}

#[tokio::test]
async fn every_v2_notification_is_stamped_with_when_it_was_sent() {
    let env = Env::new(MockScript::turns([MockTurn::text("stamped")]), "").await;
    let mut c = env.client();
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let tid = c.start_thread(&env.work).await["thread"]["id"].clone();
    let turn = c.start_turn(&tid, "hi").await;
    let notes = c.turn_notifications(&turn).await;
    assert!(notes.len() >= 3, "{notes:#?}");
    let stamps: Vec<i64> = c
        .log
        .iter()
        .filter(|m| m.get("method").is_some() && m.get("id").is_none())
        .map(|m| {
            m["emittedAtMs"]
                .as_i64()
                .unwrap_or_else(|| panic!("no emittedAtMs: {m}"))
        })
        .collect();
    // Stamped when handed to the connection: tasks sending at the same moment may reach the
    // wire in either order, so only the bounds are checked, not the order.
    let after = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    assert!(
        stamps.iter().all(|t| (before..=after).contains(t)),
        "{stamps:?} outside {before}..={after}"
    );
    // Responses carry no stamp (Codex puts it on notifications only).
    assert!(
        c.log
            .iter()
            .filter(|m| m.get("result").is_some())
            .all(|m| m.get("emittedAtMs").is_none())
    );
}

#[tokio::test]
async fn a_turn_streams_items_usage_and_completes() {
    let usage = TokenUsage {
        input_tokens: 10,
        cached_input_tokens: 2,
        output_tokens: 5,
        reasoning_output_tokens: 0,
        total_tokens: 15,
    };
    let turn = MockTurn::text("Hello world")
        .chunked(3)
        .with_usage(usage)
        .with_header("x-ratelimit-limit-requests", "100")
        .with_header("x-ratelimit-remaining-requests", "75");
    let env = Env::new(MockScript::turns([turn]), "").await;
    let mut c = env.client();
    let before = c.ok("account/rateLimits/read", json!({})).await;
    assert_eq!(before["rateLimits"]["primary"], Value::Null);
    let tid = c.start_thread(&env.work).await["thread"]["id"].clone();
    let req = c
        .request(
            "turn/start",
            json!({"threadId": tid, "input": [{"type": "text", "text": "hi"}]}),
        )
        .await;
    let r = c.response(req).await["result"].clone();
    let turn_id = r["turn"]["id"].as_str().unwrap().to_string();
    assert_eq!(r["turn"]["items"], json!([]));
    let notes = c.turn_notifications(&turn_id).await;
    let m = methods(&notes);
    assert_eq!(m[0], "turn/started", "{m:?}");
    let resp_at = position(&c.log, |v| v["id"] == req && v.get("result").is_some());
    let started_at = position(&c.log, |v| v["method"] == "turn/started");
    assert!(resp_at < started_at, "the result comes first");
    let deltas: Vec<&Value> = notes
        .iter()
        .filter(|n| n["method"] == "item/agentMessage/delta")
        .collect();
    assert!(deltas.len() >= 3, "{m:?}");
    let text: String = deltas
        .iter()
        .map(|d| d["params"]["delta"].as_str().unwrap())
        .collect();
    assert_eq!(text, "Hello world");
    let items = completed_items(&notes);
    assert_eq!(items[0]["type"], "userMessage");
    assert_eq!(
        items[0]["content"],
        json!([{"type": "text", "text": "hi", "text_elements": []}])
    );
    assert_eq!(items[1]["type"], "agentMessage");
    assert_eq!(items[1]["text"], "Hello world");
    assert_eq!(deltas[0]["params"]["itemId"], items[1]["id"]);
    let usage = notes
        .iter()
        .find(|n| n["method"] == "thread/tokenUsage/updated")
        .expect("token usage");
    assert_eq!(usage["params"]["tokenUsage"]["total"]["totalTokens"], 15);
    assert_eq!(
        usage["params"]["tokenUsage"]["last"]["cachedInputTokens"],
        2
    );
    let done = notes.last().unwrap();
    assert_eq!(done["params"]["turn"]["status"], "completed");
    assert_eq!(done["params"]["turn"]["error"], Value::Null);
    // As Codex orders them: the thread is idle, then its turn is reported complete.
    let idle = &notes[notes.len() - 2];
    assert_eq!(idle["method"], "thread/status/changed", "{notes:#?}");
    assert_eq!(idle["params"]["status"]["type"], "idle");
    let limits = c.ok("account/rateLimits/read", json!({})).await;
    assert_eq!(limits["rateLimits"]["limitId"], "mock");
    assert_eq!(limits["rateLimits"]["primary"]["usedPercent"], 25.0);
    assert_eq!(
        limits["rateLimits"]["headers"]["x-ratelimit-remaining-requests"],
        "75"
    );
}

#[tokio::test]
async fn command_approval_accept_runs_it_and_reports_the_item() {
    let script = MockScript::turns([shell("echo hi; touch made.txt"), MockTurn::text("done")]);
    let env = Env::new(script, UNTRUSTED).await;
    let mut c = env.client();
    let tid = c.start_thread(&env.work).await["thread"]["id"].clone();
    let turn = c.start_turn(&tid, "make it").await;
    let req = c
        .server_request("item/commandExecution/requestApproval")
        .await;
    let p = &req["params"];
    assert_eq!(p["threadId"], tid);
    assert_eq!(p["turnId"], turn);
    assert_eq!(p["command"], "echo hi; touch made.txt");
    assert_eq!(p["cwd"], json!(env.work));
    let item_id = p["itemId"].clone();
    c.reply(&req["id"], json!({"decision": "accept"})).await;
    let notes = c.turn_notifications(&turn).await;
    let resolved = notes
        .iter()
        .find(|n| n["method"] == "serverRequest/resolved")
        .expect("resolved");
    assert_eq!(resolved["params"]["requestId"], req["id"]);
    let item = completed_items(&notes)
        .into_iter()
        .find(|i| i["type"] == "commandExecution")
        .expect("command item");
    assert_eq!(item["id"], item_id);
    assert_eq!(item["status"], "completed");
    assert_eq!(item["exitCode"], 0);
    assert!(item["aggregatedOutput"].as_str().unwrap().contains("hi"));
    let output: String = notes
        .iter()
        .filter(|n| n["method"] == "item/commandExecution/outputDelta")
        .map(|n| n["params"]["delta"].as_str().unwrap().to_string())
        .collect();
    assert!(output.contains("hi"), "{output:?}");
    // item/started → request → serverRequest/resolved → item/completed.
    let started = position(&c.log, |v| {
        v["method"] == "item/started" && v["params"]["item"]["id"] == item_id
    });
    let asked = position(&c.log, |v| {
        v["id"] == req["id"] && v.get("method").is_some()
    });
    let res = position(&c.log, |v| v["method"] == "serverRequest/resolved");
    let completed = position(&c.log, |v| {
        v["method"] == "item/completed" && v["params"]["item"]["id"] == item_id
    });
    assert!(started < asked && asked < res && res < completed);
    assert!(env.work.join("made.txt").exists());
    assert_eq!(
        notes.last().unwrap()["params"]["turn"]["status"],
        "completed"
    );
}

#[tokio::test]
async fn declines_error_replies_and_garbage_all_fail_closed() {
    let mut turns = Vec::new();
    for f in ["a", "b", "c"] {
        turns.push(shell(&format!("touch {f}.txt")));
        turns.push(MockTurn::text("ok"));
    }
    let env = Env::new(MockScript::turns(turns), UNTRUSTED).await;
    let mut c = env.client();
    let tid = c.start_thread(&env.work).await["thread"]["id"].clone();
    for (i, file) in ["a", "b", "c"].into_iter().enumerate() {
        let turn = c.start_turn(&tid, &format!("touch {file}")).await;
        let req = c
            .server_request("item/commandExecution/requestApproval")
            .await;
        match i {
            0 => c.reply(&req["id"], json!({"decision": "decline"})).await,
            1 => c.reply_error(&req["id"], -32603, "client broke").await,
            _ => c.reply(&req["id"], json!({"decision": "approved"})).await,
        }
        let notes = c.turn_notifications(&turn).await;
        let item = completed_items(&notes)
            .into_iter()
            .find(|i| i["type"] == "commandExecution")
            .expect("command item");
        assert_eq!(item["status"], "declined", "reply {i}: {item}");
        assert!(!env.work.join(format!("{file}.txt")).exists());
    }
}

#[tokio::test]
async fn an_unanswered_approval_is_declined_after_the_timeout() {
    let script = MockScript::turns([shell("touch late.txt"), MockTurn::text("ok")]);
    let env = Env::new(script, &format!("{UNTRUSTED}approval_timeout_sec = 1\n")).await;
    let mut c = env.client();
    let tid = c.start_thread(&env.work).await["thread"]["id"].clone();
    let turn = c.start_turn(&tid, "touch").await;
    c.server_request("item/commandExecution/requestApproval")
        .await;
    // No reply.
    let notes = c.turn_notifications(&turn).await;
    let item = completed_items(&notes)
        .into_iter()
        .find(|i| i["type"] == "commandExecution")
        .unwrap();
    assert_eq!(item["status"], "declined");
    assert!(!env.work.join("late.txt").exists());
}

#[tokio::test]
async fn steering_adds_input_to_the_running_turn_and_errors_are_specific() {
    let script = MockScript::turns([
        shell("touch s.txt"),
        MockTurn::text("steered"),
        shell("touch never.txt"),
    ]);
    let env = Env::new(script, UNTRUSTED).await;
    let mut c = env.client();
    let tid = c.start_thread(&env.work).await["thread"]["id"].clone();
    let e = c
        .err(
            "turn/steer",
            json!({"threadId": tid, "input": [{"type": "text", "text": "x"}], "expectedTurnId": "t"}),
        )
        .await;
    assert_eq!(e["message"], "no active turn to steer");
    let turn = c.start_turn(&tid, "start").await;
    // While it waits for approval, the turn is running.
    let req = c
        .server_request("item/commandExecution/requestApproval")
        .await;
    let input = json!([{"type": "text", "text": "also mention bananas"}]);
    let e = c
        .err(
            "turn/steer",
            json!({"threadId": tid, "input": input, "expectedTurnId": ""}),
        )
        .await;
    assert_eq!(e["code"], -32600);
    assert_eq!(e["message"], "expectedTurnId must not be empty");
    let e = c
        .err(
            "turn/steer",
            json!({"threadId": tid, "input": input, "expectedTurnId": "bogus"}),
        )
        .await;
    assert_eq!(
        e["message"],
        format!("expected active turn id `bogus` but found `{turn}`")
    );
    let e = c
        .err(
            "turn/steer",
            json!({"threadId": tid, "input": [], "expectedTurnId": turn}),
        )
        .await;
    assert_eq!(e["message"], "input must not be empty");
    let e = c
        .err(
            "turn/start",
            json!({"threadId": tid, "input": [{"type": "text", "text": "second"}]}),
        )
        .await;
    assert!(
        e["message"].as_str().unwrap().contains("already running"),
        "{e}"
    );
    let r = c
        .ok(
            "turn/steer",
            json!({"threadId": tid, "input": input, "expectedTurnId": turn}),
        )
        .await;
    assert_eq!(r["turnId"], turn);
    c.reply(&req["id"], json!({"decision": "accept"})).await;
    let notes = c.turn_notifications(&turn).await;
    assert_eq!(
        notes.last().unwrap()["params"]["turn"]["status"],
        "completed"
    );
    let users: Vec<Value> = completed_items(&notes)
        .into_iter()
        .filter(|i| i["type"] == "userMessage")
        .collect();
    assert_eq!(
        users.len(),
        2,
        "the steered input is an item of the same turn"
    );
    let reqs = env.model.requests();
    assert_eq!(reqs.len(), 2);
    assert!(reqs[1].all_text().contains("also mention bananas"));

    // Interrupt: the next turn stops while waiting for its approval.
    let turn = c.start_turn(&tid, "again").await;
    c.server_request("item/commandExecution/requestApproval")
        .await;
    let e = c
        .err(
            "turn/interrupt",
            json!({"threadId": tid, "turnId": "other"}),
        )
        .await;
    assert!(
        e["message"].as_str().unwrap().contains("not running"),
        "{e}"
    );
    c.ok("turn/interrupt", json!({"threadId": tid, "turnId": turn}))
        .await;
    let notes = c.turn_notifications(&turn).await;
    assert_eq!(
        notes.last().unwrap()["params"]["turn"]["status"],
        "interrupted"
    );
    assert!(methods(&notes).contains(&"serverRequest/resolved".to_string()));
    assert!(!env.work.join("never.txt").exists());
}

#[tokio::test]
async fn a_failed_model_request_fails_the_turn_with_its_error() {
    let script = MockScript::new(vec![MockResponse::error(500, "upstream exploded")]);
    let env = Env::new(script, "").await;
    let mut c = env.client();
    let tid = c.start_thread(&env.work).await["thread"]["id"].clone();
    let turn = c.start_turn(&tid, "hi").await;
    let notes = c.turn_notifications(&turn).await;
    let err = notes
        .iter()
        .find(|n| n["method"] == "error")
        .expect("error");
    assert_eq!(err["params"]["willRetry"], false);
    let done = &notes.last().unwrap()["params"]["turn"];
    assert_eq!(done["status"], "failed");
    assert!(
        done["error"]["message"]
            .as_str()
            .unwrap()
            .contains("upstream exploded"),
        "{done}"
    );
}

#[tokio::test]
async fn turn_start_on_an_unknown_thread_is_an_error() {
    let env = Env::new(MockScript::default(), "").await;
    let mut c = env.client();
    let missing = "0199a3f0-7c1e-7d52-9a55-3c5b9f0d2e11";
    let e = c
        .err(
            "turn/start",
            json!({"threadId": missing, "input": [{"type": "text", "text": "x"}]}),
        )
        .await;
    assert_eq!(e["code"], -32600);
    assert_eq!(e["message"], format!("thread not found: {missing}"));
    let e = c
        .err("turn/start", json!({"threadId": missing, "input": "x"}))
        .await;
    assert_eq!(e["code"], -32602, "{e}");
}

#[tokio::test]
async fn threads_cross_between_the_v2_api_and_the_mcp_tools() {
    let script = MockScript::turns([
        MockTurn::text("v2 first"),
        MockTurn::text("reply via mcp"),
        shell("touch blocked.txt"),
        MockTurn::text("mcp done"),
        MockTurn::text("v2 after mcp"),
    ]);
    let env = Env::new(script, UNTRUSTED).await;
    let mut c = env.client();
    c.initialize().await;
    // v2 thread, continued by codex-reply.
    let tid = c.start_thread(&env.work).await["thread"]["id"].clone();
    let turn = c.start_turn(&tid, "one").await;
    c.turn_notifications(&turn).await;
    let r = c
        .ok(
            "tools/call",
            json!({"name": "codex-reply", "arguments": {"threadId": tid, "prompt": "two"}}),
        )
        .await;
    assert_eq!(r["structuredContent"]["content"], "reply via mcp", "{r}");

    // An MCP codex call's turn waits for approval: the thread is busy, so v2 is refused.
    let call = c
        .request(
            "tools/call",
            json!({"name": "codex", "arguments": {"prompt": "touch", "cwd": env.work}}),
        )
        .await;
    let elicit = c.server_request("elicitation/create").await;
    let mcp_thread = elicit["params"]["threadId"].clone();
    let e = c
        .err(
            "turn/start",
            json!({"threadId": mcp_thread, "input": [{"type": "text", "text": "x"}]}),
        )
        .await;
    let msg = e["message"].as_str().unwrap();
    // The running turn is named: the MCP call's request id is its turn id.
    assert!(msg.contains("already running"), "{e}");
    assert!(msg.contains(&format!("(turn {call})")), "{e}");
    c.reply(&elicit["id"], json!({"decision": "denied"})).await;
    let done = c.response(call).await;
    assert_eq!(done["result"]["structuredContent"]["content"], "mcp done");
    // Free again: the v2 API can continue the thread the MCP tool started.
    let turn = c.start_turn(&mcp_thread, "continue").await;
    let notes = c.turn_notifications(&turn).await;
    assert_eq!(completed_items(&notes)[1]["text"], "v2 after mcp");
}

#[tokio::test]
async fn file_change_approval_round_trip() {
    let patch = "*** Begin Patch\n*** Add File: hello.txt\n+hello\n*** End Patch";
    let script = MockScript::turns([
        MockTurn::tool_call("apply_patch", json!({"input": patch})),
        MockTurn::text("patched"),
    ]);
    let env = Env::new(script, UNTRUSTED).await;
    let mut c = env.client();
    let tid = c.start_thread(&env.work).await["thread"]["id"].clone();
    let turn = c.start_turn(&tid, "add hello").await;
    let req = c.server_request("item/fileChange/requestApproval").await;
    assert_eq!(req["params"]["threadId"], tid);
    assert_eq!(req["params"]["turnId"], turn);
    let started = c
        .take(|v| v["method"] == "item/started" && v["params"]["item"]["type"] == "fileChange")
        .await;
    let change = &started["params"]["item"]["changes"][0];
    assert!(change["path"].as_str().unwrap().ends_with("hello.txt"));
    assert_eq!(change["kind"]["type"], "add");
    assert_eq!(started["params"]["item"]["id"], req["params"]["itemId"]);
    c.reply(&req["id"], json!({"decision": "acceptForSession"}))
        .await;
    let notes = c.turn_notifications(&turn).await;
    let item = completed_items(&notes)
        .into_iter()
        .find(|i| i["type"] == "fileChange")
        .unwrap();
    assert_eq!(item["status"], "completed");
    assert_eq!(
        std::fs::read_to_string(env.work.join("hello.txt")).unwrap(),
        "hello\n"
    );
}

#[tokio::test]
async fn thread_compact_start_runs_a_compaction_turn() {
    let script = MockScript::turns([MockTurn::text("a long answer")]).with_rule(
        "Your context window is nearly full",
        MockTurn::text("SUMMARY of the work"),
    );
    let env = Env::new(script, "").await;
    let mut c = env.client();
    let tid = c.start_thread(&env.work).await["thread"]["id"].clone();
    let r = c
        .ok(
            "turn/start",
            json!({"threadId": tid, "input": [{"type": "text", "text": "hi"}]}),
        )
        .await;
    let first = r["turn"]["id"].as_str().unwrap().to_string();
    c.turn_notifications(&first).await;

    let r = c.ok("thread/compact/start", json!({"threadId": tid})).await;
    assert_eq!(r, json!({}));
    let started = c.notification("turn/started").await;
    let turn_id = started["turn"]["id"].as_str().unwrap().to_string();
    let notes = c.turn_notifications(&turn_id).await;
    let m = methods(&notes);
    assert!(m.contains(&"thread/compacted".to_string()), "{m:?}");
    let items = completed_items(&notes);
    assert_eq!(items.len(), 1, "{items:?}");
    assert_eq!(items[0]["type"], "contextCompaction");
    assert_eq!(
        notes.last().unwrap()["params"]["turn"]["status"],
        "completed"
    );

    let err = c
        .err("thread/compact/start", json!({"threadId": "not-a-thread"}))
        .await;
    assert!(
        err["message"]
            .as_str()
            .unwrap()
            .contains("invalid thread id"),
        "{err}"
    );
}

#[tokio::test]
async fn a_second_connection_resuming_a_running_thread_follows_its_turn_to_the_end() {
    let script = MockScript::turns([
        shell("touch shared.txt"),
        shell("touch second.txt"),
        MockTurn::text("both saw it"),
    ]);
    let env = Env::new(script, UNTRUSTED).await;
    let host = env.host();
    let mut a = Client::on_host(&host);
    a.initialize().await;
    let tid = a.start_thread(&env.work).await["thread"]["id"].clone();
    let turn = a.start_turn(&tid, "touch").await;
    // The turn waits for A's approval while B, another client of the same server, resumes.
    let req = a
        .server_request("item/commandExecution/requestApproval")
        .await;
    let mut b = Client::on_host(&host);
    b.initialize().await;
    let resumed = b.ok("thread/resume", json!({"threadId": tid})).await;
    assert_eq!(resumed["thread"]["id"], tid);
    a.reply(&req["id"], json!({"decision": "accept"})).await;
    // The next approval is asked of A, who started the turn, and not of B, who watches.
    let req = a
        .server_request("item/commandExecution/requestApproval")
        .await;
    a.reply(&req["id"], json!({"decision": "accept"})).await;
    for c in [&mut a, &mut b] {
        let notes = c.turn_notifications(&turn).await;
        let items = completed_items(&notes);
        let commands = items
            .iter()
            .filter(|i| i["type"] == "commandExecution")
            .count();
        assert!(commands >= 1, "{notes:#?}");
        assert!(
            items.iter().any(|i| i["text"] == "both saw it"),
            "{notes:#?}"
        );
    }
    let asked_b = b
        .log
        .iter()
        .chain(b.pending.iter())
        .filter(|m| m["method"] == "item/commandExecution/requestApproval")
        .count();
    assert_eq!(asked_b, 0, "a watching client is not asked to approve");
    assert!(
        env.work.join("shared.txt").exists(),
        "the approved command ran"
    );
    assert!(env.work.join("second.txt").exists());
}

#[tokio::test]
async fn one_connection_unsubscribing_leaves_the_thread_to_the_others() {
    let script = MockScript::turns([MockTurn::text("still here"), MockTurn::text("again")]);
    let env = Env::new(script, UNTRUSTED).await;
    let host = env.host();
    let mut a = Client::on_host(&host);
    a.initialize().await;
    let tid = a.start_thread(&env.work).await["thread"]["id"].clone();
    let mut b = Client::on_host(&host);
    b.initialize().await;
    b.ok("thread/resume", json!({"threadId": tid})).await;
    // B leaves; A still has the thread and runs a turn on it.
    let r = b.ok("thread/unsubscribe", json!({"threadId": tid})).await;
    assert_eq!(r["status"], "unsubscribed");
    let turn = a.start_turn(&tid, "go on").await;
    let notes = a.turn_notifications(&turn).await;
    assert!(
        completed_items(&notes)
            .iter()
            .any(|i| i["text"] == "still here"),
        "{notes:#?}"
    );
    // The last holder's unsubscribe unloads it.
    let r = a.ok("thread/unsubscribe", json!({"threadId": tid})).await;
    assert_eq!(r["status"], "unsubscribed");
    let loaded = a.ok("thread/loaded/list", json!({})).await;
    assert!(
        !loaded.to_string().contains(tid.as_str().unwrap()),
        "{loaded}"
    );
}

#[tokio::test]
async fn a_harness_profile_from_thread_start_config_runs_and_reports_its_plan() {
    let env = Env::new(
        MockScript::turns([
            MockTurn::text("")
                .with_tool_call(
                    "TodoWrite",
                    json!({"todos": [{"content": "write a.txt", "status": "in_progress", "activeForm": "writing"}]}),
                )
                .with_tool_call("Write", json!({"file_path": "a.txt", "content": "one\n"})),
            MockTurn::text("wrote it"),
        ]),
        "sandbox_mode = \"workspace-write\"\napproval_policy = \"never\"\n",
    )
    .await;
    let mut c = env.client();
    let started = c
        .ok(
            "thread/start",
            json!({"cwd": env.work, "config": {"harness": "claude-code"}}),
        )
        .await;
    let tid = started["thread"]["id"].clone();
    let turn_id = c.start_turn(&tid, "write a.txt").await;
    let notes = c.turn_notifications(&turn_id).await;
    let plan = notes
        .iter()
        .find(|n| n["method"] == "turn/plan/updated")
        .expect("turn/plan/updated");
    assert_eq!(plan["params"]["turnId"], turn_id.as_str());
    assert_eq!(
        plan["params"]["plan"],
        json!([{"step": "write a.txt", "status": "inProgress"}])
    );
    assert_eq!(
        std::fs::read_to_string(env.work.join("a.txt")).unwrap(),
        "one\n"
    );
    let items = completed_items(&notes);
    assert!(
        items
            .iter()
            .any(|i| i["type"] == "fileChange" && i["status"] == "completed"),
        "{items:?}"
    );
    assert!(
        env.model.requests()[0]
            .tool_names()
            .contains(&"Edit".to_string())
    );
}

#[tokio::test]
async fn a_connection_reports_only_its_own_turns_of_a_thread_it_listens_to() {
    let script = MockScript::turns([
        MockTurn::text("first, by A"),
        MockTurn::text("second, by B"),
        MockTurn::text("third, by A"),
    ]);
    let env = Env::new(script, UNTRUSTED).await;
    let host = env.host();
    let mut a = Client::on_host(&host);
    a.initialize().await;
    let tid = a.start_thread(&env.work).await["thread"]["id"].clone();
    let first = a.start_turn(&tid, "one").await;
    a.turn_notifications(&first).await;
    // B runs a turn on the thread A listens to; A did not start it and is not told.
    let mut b = Client::on_host(&host);
    b.initialize().await;
    b.ok("thread/resume", json!({"threadId": tid})).await;
    let second = b.start_turn(&tid, "two").await;
    let by_b = b.turn_notifications(&second).await;
    assert!(
        completed_items(&by_b)
            .iter()
            .any(|i| i["text"] == "second, by B"),
        "{by_b:#?}"
    );
    // A's next turn is reported whole, and nothing of B's came before it.
    let third = a.start_turn(&tid, "three").await;
    let by_a = a.turn_notifications(&third).await;
    assert_eq!(
        by_a.first().map(|n| n["method"].clone()),
        Some(json!("turn/started")),
        "{by_a:#?}"
    );
    assert!(
        by_a.iter().all(|n| !n.to_string().contains(&second)),
        "A was told about B's turn: {by_a:#?}"
    );
    assert!(
        completed_items(&by_a)
            .iter()
            .any(|i| i["text"] == "third, by A"),
        "{by_a:#?}"
    );
}
