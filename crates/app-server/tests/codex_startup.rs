//! What Codex 0.171's TUI sends while it starts (`codex --remote`), in its order: every
//! call is answered, with what is true here (issue #25, item 2).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use common::*;
use oi_test_support::MockScript;
use serde_json::{Value, json};

#[tokio::test]
async fn codex_tui_startup_calls_are_all_answered() {
    let env = Env::new(MockScript::default(), "").await;
    let mut c = env.client();
    c.ok(
        "initialize",
        json!({"clientInfo": {"name": "codex-tui", "version": "0.171.0"},
               "capabilities": {"experimentalApi": true}}),
    )
    .await;
    c.send(json!({"method": "initialized"})).await;

    c.ok("account/read", json!({"refreshToken": false})).await;
    let models = c.ok("model/list", json!({"includeHidden": true})).await;
    for m in models["data"].as_array().unwrap() {
        let effort = m["defaultReasoningEffort"].as_str().unwrap_or_default();
        assert!(
            !effort.is_empty(),
            "a null or empty effort fails Codex's decode: {m}"
        );
    }
    let hooks = c.ok("hooks/list", json!({"cwds": [env.work]})).await;
    // One entry for the directory, in Codex's shape, with no hook configured.
    assert_eq!(
        hooks,
        json!({"data": [{"cwd": env.work, "hooks": [], "warnings": [], "errors": []}]})
    );
    let bedrock = c
        .ok("account/bedrock/checkGovCloudRequirements", json!({}))
        .await;
    assert_eq!(bedrock, json!({"isGovCloud": false, "shouldWarn": false}));
    c.ok(
        "config/read",
        json!({"includeLayers": false, "cwd": env.work}),
    )
    .await;
    // Codex sends no params at all here.
    let id = c.request("configRequirements/read", Value::Null).await;
    let r = c.response(id).await;
    assert_eq!(r["result"], json!({"requirements": null}), "{r}");
    c.ok("collaborationMode/list", json!({})).await;

    // An auxiliary thread whose config carries Codex-only and unknown keys starts anyway.
    let started = c
        .ok(
            "thread/start",
            json!({"cwd": env.work, "dynamicTools": [],
                   "config": {"cloud.skills.enabled": false, "features.apps": false}}),
        )
        .await;
    let tid = started["thread"]["id"].clone();
    assert!(tid.is_string(), "{started}");

    for key in ["recency_at", "section_position", "updated_at", "created_at"] {
        let page = c
            .ok("thread/list", json!({"limit": 10, "sortKey": key}))
            .await;
        assert!(page["data"].is_array(), "{key}: {page}");
    }
    let e = c
        .err("thread/list", json!({"sortKey": "alphabetical"}))
        .await;
    assert_eq!(
        e["code"], -32602,
        "an unknown enum value is a params error: {e}"
    );
    c.ok("thread/loaded/list", json!({})).await;
    c.ok(
        "thread/read",
        json!({"threadId": tid, "includeTurns": false}),
    )
    .await;
    // No skills folder here: one entry for the cwd asked about, with no skills.
    let skills = c.ok("skills/list", json!({"cwds": [env.work]})).await;
    assert_eq!(skills["data"][0]["skills"], json!([]), "{skills}");
    assert_eq!(skills["data"][0]["errors"], json!([]), "{skills}");
    assert_eq!(skills["data"].as_array().map(Vec::len), Some(1), "{skills}");
    let plugins = c.ok("plugin/installed", json!({"cwds": [env.work]})).await;
    assert_eq!(
        plugins,
        json!({"marketplaces": [], "marketplaceLoadErrors": []})
    );
    let read = c
        .ok(
            "thread/readState/update",
            json!({"threadId": tid, "expectedRevision": "r1", "operation": {"type": "read"}}),
        )
        .await;
    assert_eq!(
        read,
        json!({"readState": {"revision": "r1", "firstUnread": null}})
    );
    let e = c
        .err(
            "thread/readState/update",
            json!({"threadId": tid, "expectedRevision": "r1", "operation": {"type": "unread"}}),
        )
        .await;
    assert!(e["message"].as_str().unwrap().contains("unread"), "{e}");
    // On resume the TUI also asks for the thread's goal and background terminals.
    let goal = c.ok("thread/goal/get", json!({"threadId": tid})).await;
    assert_eq!(goal, json!({"goal": null}));
    let terminals = c
        .ok(
            "thread/backgroundTerminals/list",
            json!({"threadId": tid, "cursor": null, "limit": null}),
        )
        .await;
    assert_eq!(terminals, json!({"data": [], "nextCursor": null}));
    let e = c
        .err(
            "thread/goal/get",
            json!({"threadId": "01a23743-4d38-72bf-bdad-0f022b068dc9"}),
        )
        .await;
    assert!(e["message"].as_str().unwrap().contains("not found"), "{e}");
    c.ok("thread/name/set", json!({"threadId": tid, "name": "aux"}))
        .await;
    c.ok("thread/unsubscribe", json!({"threadId": tid})).await;
}
