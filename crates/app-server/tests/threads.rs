//! thread/start|resume|fork|read|list against the real engine and thread store.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use common::*;
use oi_test_support::{MockScript, MockTurn};
use serde_json::{Value, json};

#[tokio::test]
async fn thread_start_returns_the_thread_then_announces_it() {
    let env = Env::new(MockScript::default(), "").await;
    let mut c = env.client();
    let id = c
        .request(
            "thread/start",
            json!({"cwd": env.work, "approvalPolicy": "never", "sandbox": "workspace-write"}),
        )
        .await;
    let r = c.response(id).await["result"].clone();
    let t = &r["thread"];
    assert!(t["id"].as_str().unwrap().len() >= 36, "{r}");
    assert_eq!(t["status"], json!({"type": "idle"}));
    assert_eq!(t["source"], "appServer");
    assert_eq!(t["ephemeral"], false);
    assert_eq!(t["turns"], json!([]));
    assert!(t["path"].as_str().unwrap().ends_with(".jsonl"));
    assert_eq!(t["cwd"], json!(env.work));
    assert_eq!(r["model"], "mock-model");
    assert_eq!(r["modelProvider"], "mock");
    assert_eq!(r["approvalPolicy"], "never");
    assert_eq!(r["sandbox"]["type"], "workspaceWrite");
    assert_eq!(r["sandbox"]["networkAccess"], false);
    let started = c.notification("thread/started").await;
    assert_eq!(started["thread"]["id"], t["id"]);
    // The result comes before the notification.
    let resp_at = position(&c.log, |v| v["id"] == id && v.get("result").is_some());
    let note_at = position(&c.log, |v| v["method"] == "thread/started");
    assert!(resp_at < note_at);
    assert_eq!(c.shutdown().await, 0);
}

#[tokio::test]
async fn thread_start_with_bad_overrides_names_the_problem() {
    let env = Env::new(MockScript::default(), "").await;
    let mut c = env.client();
    let e = c
        .err("thread/start", json!({"approvalPolicy": "sometimes"}))
        .await;
    assert_eq!(e["code"], -32602, "{e}");
    assert!(e["message"].as_str().unwrap().contains("sometimes"), "{e}");
    let e = c
        .err(
            "thread/start",
            json!({"modelProvider": "nope", "cwd": env.work}),
        )
        .await;
    assert_eq!(e["code"], -32600);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("unknown provider `nope`"),
        "{e}"
    );
}

#[tokio::test]
async fn thread_list_pages_filters_and_rejects_bad_cursors() {
    let env = Env::new(MockScript::default(), "").await;
    let mut c = env.client();
    let mut ids = Vec::new();
    for _ in 0..3 {
        ids.push(c.start_thread(&env.work).await["thread"]["id"].clone());
    }
    let eph = c
        .ok("thread/start", json!({"cwd": env.work, "ephemeral": true}))
        .await;
    assert_eq!(eph["thread"]["ephemeral"], true);
    assert_eq!(eph["thread"]["path"], Value::Null);

    let p1 = c
        .ok("thread/list", json!({"limit": 2, "sortKey": "created_at"}))
        .await;
    assert_eq!(p1["data"].as_array().unwrap().len(), 2, "{p1}");
    let cursor = p1["nextCursor"].clone();
    assert!(cursor.is_string(), "{p1}");
    let p2 = c
        .ok(
            "thread/list",
            json!({"limit": 2, "sortKey": "created_at", "cursor": cursor}),
        )
        .await;
    assert_eq!(p2["data"].as_array().unwrap().len(), 1);
    assert_eq!(p2["nextCursor"], Value::Null);
    let listed: Vec<Value> = p1["data"]
        .as_array()
        .unwrap()
        .iter()
        .chain(p2["data"].as_array().unwrap())
        .map(|t| t["id"].clone())
        .collect();
    // Newest first; the ephemeral thread is not stored.
    let mut want = ids.clone();
    want.reverse();
    assert_eq!(listed, want);
    assert_eq!(p1["data"][0]["status"], json!({"type": "idle"}));

    let asc = c
        .ok(
            "thread/list",
            json!({"sortKey": "created_at", "sortDirection": "asc"}),
        )
        .await;
    assert_eq!(asc["data"][0]["id"], ids[0]);
    let none = c
        .ok("thread/list", json!({"modelProviders": ["other"]}))
        .await;
    assert_eq!(none["data"], json!([]));
    let by_cwd = c.ok("thread/list", json!({"cwd": env.work})).await;
    assert_eq!(by_cwd["data"].as_array().unwrap().len(), 3);
    let kinds = c.ok("thread/list", json!({"sourceKinds": ["cli"]})).await;
    assert_eq!(kinds["data"], json!([]));

    let e = c.err("thread/list", json!({"cursor": "garbage"})).await;
    assert_eq!(e["code"], -32600);
    assert!(
        e["message"].as_str().unwrap().contains("invalid cursor"),
        "{e}"
    );
    let e = c.err("thread/list", json!({"sortKey": "size"})).await;
    assert!(e["message"].as_str().unwrap().contains("sortKey"), "{e}");
}

#[tokio::test]
async fn thread_read_and_resume_rebuild_turns_from_storage() {
    let script = MockScript::turns([MockTurn::text("hello there").chunked(4)]);
    let env = Env::new(script, "").await;
    let mut c = env.client();
    let tid = c.start_thread(&env.work).await["thread"]["id"].clone();
    let turn = c.start_turn(&tid, "say hello").await;
    c.turn_notifications(&turn).await;

    let r = c
        .ok(
            "thread/read",
            json!({"threadId": tid, "includeTurns": true}),
        )
        .await;
    let turns = r["thread"]["turns"].as_array().unwrap().clone();
    assert_eq!(turns.len(), 1, "{r}");
    assert_eq!(turns[0]["id"], turn);
    assert_eq!(turns[0]["status"], "completed");
    let items = turns[0]["items"].as_array().unwrap();
    assert_eq!(items[0]["type"], "userMessage");
    assert_eq!(items[0]["content"][0]["text"], "say hello");
    assert_eq!(items[1]["type"], "agentMessage");
    assert_eq!(items[1]["text"], "hello there");
    assert_eq!(r["thread"]["preview"], "say hello");
    let bare = c.ok("thread/read", json!({"threadId": tid})).await;
    assert_eq!(bare["thread"]["turns"], json!([]));

    let missing = "0199a3f0-7c1e-7d52-9a55-3c5b9f0d2e11";
    let e = c.err("thread/read", json!({"threadId": missing})).await;
    assert_eq!(e["code"], -32600);
    assert_eq!(e["message"], format!("thread not found: {missing}"));
    let e = c.err("thread/read", json!({"threadId": "nope"})).await;
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .starts_with("invalid thread id: "),
        "{e}"
    );
    assert_eq!(c.shutdown().await, 0);

    // A new server process (same home) resumes it from disk.
    let mut c = env.client();
    let r = c.ok("thread/read", json!({"threadId": tid})).await;
    assert_eq!(r["thread"]["status"], json!({"type": "notLoaded"}));
    let r = c.ok("thread/resume", json!({"threadId": tid})).await;
    assert_eq!(r["thread"]["id"], tid);
    assert_eq!(r["thread"]["turns"].as_array().unwrap().len(), 1);
    assert_eq!(r["thread"]["turns"][0]["items"][1]["text"], "hello there");
    assert_eq!(r["model"], "mock-model");
    let r = c
        .ok(
            "thread/resume",
            json!({"threadId": tid, "excludeTurns": true}),
        )
        .await;
    assert_eq!(r["thread"]["turns"], json!([]));
    let e = c.err("thread/resume", json!({"threadId": missing})).await;
    assert_eq!(e["message"], format!("thread not found: {missing}"));
    let loaded = c.ok("thread/loaded/list", json!({})).await;
    assert_eq!(loaded["data"], json!([tid]));
}

#[tokio::test]
async fn thread_fork_copies_history_under_a_new_id() {
    let script = MockScript::turns([MockTurn::text("first answer"), MockTurn::text("forked")]);
    let env = Env::new(script, "").await;
    let mut c = env.client();
    let tid = c.start_thread(&env.work).await["thread"]["id"].clone();
    let turn = c.start_turn(&tid, "question one").await;
    c.turn_notifications(&turn).await;
    c.notification("thread/started").await;

    let r = c.ok("thread/fork", json!({"threadId": tid})).await;
    let fid = r["thread"]["id"].clone();
    assert_ne!(fid, tid);
    assert_eq!(r["thread"]["forkedFromId"], tid);
    assert_eq!(r["thread"]["turns"].as_array().unwrap().len(), 1, "{r}");
    let started = c.notification("thread/started").await;
    assert_eq!(started["thread"]["id"], fid);

    // The fork continues with the copied history.
    let turn = c.start_turn(&fid, "question two").await;
    c.turn_notifications(&turn).await;
    let last = env.model.requests().last().unwrap().all_text();
    assert!(
        last.contains("question one") && last.contains("question two"),
        "{last}"
    );

    let e = c
        .err("thread/fork", json!({"threadId": tid, "ephemeral": true}))
        .await;
    assert!(e["message"].as_str().unwrap().contains("ephemeral"), "{e}");
}

#[tokio::test]
async fn archive_and_name_round_trip() {
    let env = Env::new(MockScript::default(), "").await;
    let mut c = env.client();
    let tid = c.start_thread(&env.work).await["thread"]["id"].clone();
    c.ok(
        "thread/name/set",
        json!({"threadId": tid, "name": "my thread"}),
    )
    .await;
    let n = c.notification("thread/name/updated").await;
    assert_eq!(n["threadName"], "my thread");
    c.ok("thread/archive", json!({"threadId": tid})).await;
    let listed = c.ok("thread/list", json!({})).await;
    assert_eq!(listed["data"], json!([]));
    let archived = c.ok("thread/list", json!({"archived": true})).await;
    assert_eq!(archived["data"][0]["name"], "my thread");
    let back = c.ok("thread/unarchive", json!({"threadId": tid})).await;
    assert_eq!(
        back["thread"]["id"], tid,
        "unarchive answers with the thread"
    );
    assert_eq!(back["thread"]["name"], "my thread");
    assert_eq!(back["thread"]["status"]["type"], "idle");
    assert_eq!(c.ok("thread/list", json!({})).await["data"][0]["id"], tid);
}
