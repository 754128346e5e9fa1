//! App-server compatibility on one connection: both `initialize` forms, experimental
//! gating, a repeated handshake, thread/unsubscribe, history pagination in both
//! directions, and bad input to the new methods.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::*;
use oi_test_support::{MockScript, MockTurn};
use serde_json::json;

#[tokio::test]
async fn app_server_initialize_gates_experimental_api_and_refuses_a_repeat() {
    let env = Env::new(MockScript::default(), "").await;
    let mut c = env.client();
    let r = c
        .ok(
            "initialize",
            json!({"clientInfo": {"name": "ide", "version": "2.0"}, "capabilities": {}}),
        )
        .await;
    assert!(r["userAgent"].as_str().unwrap().ends_with("ide/2.0"), "{r}");
    assert_eq!(r["codexHome"], json!(env.home));
    assert!(r.get("protocolVersion").is_none(), "{r}");
    let e = c.err("collaborationMode/list", json!({})).await;
    assert_eq!(e["code"], -32600);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .starts_with("collaborationMode/list requires experimentalApi capability"),
        "{e}"
    );
    let e = c
        .err(
            "initialize",
            json!({"clientInfo": {"name": "ide", "version": "2.0"}}),
        )
        .await;
    assert_eq!(e["message"], "Already initialized");
    // clientInfo is required in the app-server form.
    let mut c2 = env.client();
    let e = c2.err("initialize", json!({"capabilities": {}})).await;
    assert_eq!(e["code"], -32602, "{e}");
    assert!(e["message"].as_str().unwrap().contains("clientInfo"), "{e}");
}

#[tokio::test]
async fn mcp_initialize_stays_mcp_on_the_shared_connection() {
    let env = Env::new(MockScript::default(), "").await;
    let mut c = env.client();
    let r = c.initialize().await;
    assert!(r["protocolVersion"].is_string(), "{r}");
    assert!(r["serverInfo"]["name"].is_string(), "{r}");
    // Without the app-server handshake, experimental methods stay available.
    c.ok("collaborationMode/list", json!({})).await;
}

#[tokio::test]
async fn history_pages_walk_both_ways_and_unsubscribe_unloads() {
    let env = Env::new(
        MockScript::turns([
            MockTurn::text("one"),
            MockTurn::text("two"),
            MockTurn::text("three"),
        ]),
        "",
    )
    .await;
    let mut c = env.client();
    let t = c.start_thread(&env.work).await;
    let tid = t["thread"]["id"].clone();
    let mut turn_ids = Vec::new();
    for text in ["a", "b", "c"] {
        let id = c.start_turn(&tid, text).await;
        let done = c
            .take(|v| v["method"] == "turn/completed" && v["params"]["turn"]["id"] == json!(id))
            .await;
        assert_eq!(done["params"]["turn"]["itemsView"], "summary");
        turn_ids.push(id);
    }
    // Newest first by default, two per page.
    let p1 = c
        .ok("thread/turns/list", json!({"threadId": tid, "limit": 2}))
        .await;
    let ids: Vec<_> = p1["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].clone())
        .collect();
    assert_eq!(ids, [json!(turn_ids[2]), json!(turn_ids[1])]);
    assert_eq!(p1["data"][0]["items"][1]["text"], "three", "{p1}");
    let p2 = c
        .ok(
            "thread/turns/list",
            json!({"threadId": tid, "limit": 2, "cursor": p1["nextCursor"]}),
        )
        .await;
    assert_eq!(p2["data"][0]["id"], json!(turn_ids[0]));
    assert_eq!(p2["nextCursor"], json!(null));
    let back = c
        .ok(
            "thread/turns/list",
            json!({"threadId": tid, "sortDirection": "asc", "cursor": p2["backwardsCursor"],
                   "itemsView": "notLoaded"}),
        )
        .await;
    assert_eq!(back["data"].as_array().unwrap().len(), 3, "{back}");
    assert_eq!(back["data"][0]["items"], json!([]));

    // Items of one turn, newest first.
    let items = c
        .ok(
            "thread/items/list",
            json!({"threadId": tid, "turnId": turn_ids[1], "sortDirection": "desc"}),
        )
        .await;
    let data = items["data"].as_array().unwrap();
    assert_eq!(data[0]["item"]["type"], "agentMessage", "{items}");
    assert!(data.iter().all(|e| e["turnId"] == json!(turn_ids[1])));

    let e = c
        .err(
            "thread/items/list",
            json!({"threadId": tid, "cursor": "nope"}),
        )
        .await;
    assert!(
        e["message"].as_str().unwrap().contains("invalid cursor"),
        "{e}"
    );

    let r = c.ok("thread/unsubscribe", json!({"threadId": tid})).await;
    assert_eq!(r, json!({"status": "unsubscribed"}));
    c.notification("thread/closed").await;
    let r = c.ok("thread/unsubscribe", json!({"threadId": tid})).await;
    assert_eq!(r, json!({"status": "notLoaded"}));
    let read = c.ok("thread/read", json!({"threadId": tid})).await;
    assert_eq!(read["thread"]["status"]["type"], "notLoaded");
}

#[tokio::test]
async fn history_pages_catch_up_with_a_thread_written_after_the_first_read() {
    let env = Env::new(
        MockScript::turns([MockTurn::text("one"), MockTurn::text("two")]),
        "",
    )
    .await;
    let mut c = env.client();
    let t = c.start_thread(&env.work).await;
    let tid = t["thread"]["id"].clone();
    let first = c.start_turn(&tid, "a").await;
    c.take(|v| v["method"] == "turn/completed" && v["params"]["turn"]["id"] == json!(first))
        .await;
    // The first read outlines the thread; the next turn is appended after it.
    let p = c
        .ok(
            "thread/turns/list",
            json!({"threadId": tid, "itemsView": "full"}),
        )
        .await;
    assert_eq!(p["data"].as_array().unwrap().len(), 1, "{p}");
    let second = c.start_turn(&tid, "b").await;
    c.take(|v| v["method"] == "turn/completed" && v["params"]["turn"]["id"] == json!(second))
        .await;
    let p = c
        .ok(
            "thread/turns/list",
            json!({"threadId": tid, "itemsView": "full", "sortDirection": "asc"}),
        )
        .await;
    let ids: Vec<_> = p["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].clone())
        .collect();
    assert_eq!(ids, [json!(first), json!(second)], "{p}");
    assert_eq!(p["data"][1]["status"], "completed", "{p}");
    // Pages show the turns thread/read shows (read through the whole-thread load).
    let read = c
        .ok(
            "thread/read",
            json!({"threadId": tid, "includeTurns": true}),
        )
        .await;
    let mut paged = p["data"].clone();
    for t in paged.as_array_mut().unwrap() {
        assert_eq!(t["itemsView"], "full");
        t.as_object_mut().unwrap().remove("itemsView");
    }
    assert_eq!(read["thread"]["turns"], paged, "{read}");
    let items = c
        .ok(
            "thread/items/list",
            json!({"threadId": tid, "turnId": second}),
        )
        .await;
    let texts: Vec<_> = items["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["item"]["type"] == "agentMessage")
        .map(|e| e["item"]["text"].clone())
        .collect();
    assert_eq!(texts, [json!("two")], "{items}");
}

#[tokio::test]
async fn command_exec_rejects_bad_requests_and_enforces_timeout() {
    let env = Env::new(MockScript::default(), "").await;
    let mut c = env.client();
    let e = c.err("command/exec", json!({"command": []})).await;
    assert!(
        e["message"].as_str().unwrap().contains("must not be empty"),
        "{e}"
    );
    let e = c
        .err(
            "command/exec",
            json!({"command": ["true"], "timeoutMs": 5, "disableTimeout": true}),
        )
        .await;
    assert!(
        e["message"].as_str().unwrap().contains("disableTimeout"),
        "{e}"
    );
    let r = c
        .ok(
            "command/exec",
            json!({"command": ["sleep", "30"], "timeoutMs": 100, "cwd": env.work,
                   "sandboxPolicy": {"type": "dangerFullAccess"}}),
        )
        .await;
    assert_eq!(r["exitCode"], 124, "{r}");
    let r = c
        .ok(
            "command/exec",
            json!({"command": ["sh", "-c", "printf 0123456789"], "outputBytesCap": 4,
                   "sandboxPolicy": {"type": "dangerFullAccess"}, "cwd": env.work}),
        )
        .await;
    assert_eq!(r["stdout"], "0123");
}
