//! account/*, and the v1 methods: getConversationSummary, getAuthStatus,
//! gitDiffToRemote, fuzzyFileSearch (one-shot and sessions).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use common::*;
use oi_test_support::{MockScript, MockTurn};
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;

/// A variable nobody sets, so keys can only come from the credentials file.
const KEY_VAR: &str = "OI_APP_SERVER_TEST_KEY_NEVER_SET";

async fn keyed_env() -> Env {
    let env = Env::new(MockScript::default(), "").await;
    let text = env.config_text().replace(
        "name = \"Mock\"",
        &format!("name = \"Mock\"\nenv_key = \"{KEY_VAR}\""),
    );
    std::fs::write(env.home.join("config.toml"), text).unwrap();
    env
}

#[tokio::test]
async fn api_key_login_read_and_logout() {
    let env = keyed_env().await;
    let mut c = env.client();
    let r = c.ok("account/read", json!({})).await;
    assert_eq!(r["account"], Value::Null);
    assert_eq!(r["requiresOpenaiAuth"], true);
    assert_eq!(r["modelProvider"], "mock");
    assert_eq!(r["apiKeyEnvVar"], KEY_VAR);
    let s = c.ok("getAuthStatus", json!({"includeToken": true})).await;
    assert_eq!(
        s,
        json!({"authMethod": null, "authToken": null, "requiresOpenaiAuth": true})
    );
    let notice = c.notification("deprecationNotice").await;
    assert!(
        notice["summary"].as_str().unwrap().contains("account/read"),
        "{notice}"
    );

    let e = c
        .err("account/login/start", json!({"type": "chatgpt"}))
        .await;
    assert!(e["message"].as_str().unwrap().contains("apiKey"), "{e}");
    let e = c
        .err(
            "account/login/start",
            json!({"type": "apiKey", "apiKey": " "}),
        )
        .await;
    assert_eq!(e["message"], "apiKey must not be empty");

    let r = c
        .ok(
            "account/login/start",
            json!({"type": "apiKey", "apiKey": "sk-test-v2"}),
        )
        .await;
    assert_eq!(r, json!({"type": "apiKey"}));
    let done = c.notification("account/login/completed").await;
    assert_eq!(done["success"], true);
    let upd = c.notification("account/updated").await;
    assert_eq!(upd["authMode"], "apikey");
    assert!(
        position(&c.log, |v| v["method"] == "account/login/completed")
            < position(&c.log, |v| v["method"] == "account/updated")
    );
    let creds = env.home.join(".credentials.json");
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&creds).unwrap()).unwrap();
    assert_eq!(stored["api_keys"][KEY_VAR], "sk-test-v2");
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&creds).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    let r = c.ok("account/read", json!({})).await;
    assert_eq!(r["account"], json!({"type": "apiKey"}));
    assert_eq!(r["apiKeySource"], "credentialsFile");
    assert!(!r.to_string().contains("sk-test-v2"), "never the key: {r}");
    let s = c.ok("getAuthStatus", json!({})).await;
    assert_eq!(s["authMethod"], "apikey");
    assert_eq!(s["authToken"], Value::Null);
    let s = c.ok("getAuthStatus", json!({"includeToken": true})).await;
    assert_eq!(s["authToken"], "sk-test-v2");

    let r = c
        .ok("account/login/cancel", json!({"loginId": "nope"}))
        .await;
    assert_eq!(r["status"], "notFound");
    c.ok("account/logout", json!({})).await;
    assert_eq!(
        c.notification("account/updated").await["authMode"],
        Value::Null
    );
    assert_eq!(
        c.ok("account/read", json!({})).await["account"],
        Value::Null
    );
}

#[tokio::test]
async fn providers_without_keys_need_no_login() {
    let env = Env::new(MockScript::default(), "").await;
    let mut c = env.client();
    let r = c.ok("account/read", json!({})).await;
    assert_eq!(r["account"], Value::Null);
    assert_eq!(r["requiresOpenaiAuth"], false);
    let s = c.ok("getAuthStatus", json!({})).await;
    assert_eq!(
        s,
        json!({"authMethod": null, "authToken": null, "requiresOpenaiAuth": false})
    );
    let e = c
        .err(
            "account/login/start",
            json!({"type": "apiKey", "apiKey": "k"}),
        )
        .await;
    assert!(
        e["message"].as_str().unwrap().contains("takes no API key"),
        "{e}"
    );
}

#[tokio::test]
async fn conversation_summary_by_id_and_by_rollout_path() {
    let env = Env::new(MockScript::turns([MockTurn::text("ok")]), "").await;
    let mut c = env.client();
    let t = c.start_thread(&env.work).await["thread"].clone();
    let turn = c.start_turn(&t["id"], "summarize me").await;
    c.turn_notifications(&turn).await;
    let by_id = c
        .ok("getConversationSummary", json!({"conversationId": t["id"]}))
        .await;
    let s = &by_id["summary"];
    assert_eq!(s["conversationId"], t["id"]);
    assert_eq!(s["preview"], "summarize me");
    assert_eq!(s["modelProvider"], "mock");
    assert_eq!(s["cwd"], json!(env.work));
    assert_eq!(s["source"], "appServer");
    assert!(s["timestamp"].as_str().unwrap().ends_with('Z'));
    let by_path = c
        .ok("getConversationSummary", json!({"rolloutPath": t["path"]}))
        .await;
    assert_eq!(by_path["summary"]["conversationId"], t["id"]);

    let missing = "0199a3f0-7c1e-7d52-9a55-3c5b9f0d2e11";
    let e = c
        .err("getConversationSummary", json!({"conversationId": missing}))
        .await;
    assert_eq!(e["message"], format!("conversation not found: {missing}"));
    let e = c.err("getConversationSummary", json!({})).await;
    assert!(
        e["message"].as_str().unwrap().contains("conversationId"),
        "{e}"
    );
    let e = c
        .err(
            "getConversationSummary",
            json!({"rolloutPath": env.work.join("nope.jsonl")}),
        )
        .await;
    assert!(e["message"].as_str().unwrap().contains("nope.jsonl"), "{e}");
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn git_out(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

#[tokio::test]
async fn git_diff_to_remote_diffs_from_the_closest_remote_commit() {
    let env = Env::new(MockScript::default(), "").await;
    let root = env.tmp.path();
    git(root, &["init", "-q", "--bare", "-b", "main", "remote.git"]);
    git(root, &["clone", "-q", "remote.git", "repo"]);
    let repo = root.join("repo");
    std::fs::write(repo.join("a.txt"), "one\n").unwrap();
    git(&repo, &["add", "a.txt"]);
    git(&repo, &["commit", "-q", "-m", "first"]);
    git(&repo, &["push", "-q", "origin", "HEAD:main"]);
    let pushed = git_out(&repo, &["rev-parse", "HEAD"]);
    // A local commit, an edit and an untracked file on top of the pushed commit.
    std::fs::write(repo.join("b.txt"), "local\n").unwrap();
    git(&repo, &["add", "b.txt"]);
    git(&repo, &["commit", "-q", "-m", "local"]);
    std::fs::write(repo.join("a.txt"), "one\ntwo\n").unwrap();
    std::fs::write(repo.join("new.txt"), "untracked\n").unwrap();

    let mut c = env.client();
    let r = c.ok("gitDiffToRemote", json!({"cwd": repo})).await;
    assert_eq!(r["sha"], pushed);
    let diff = r["diff"].as_str().unwrap();
    assert!(diff.contains("+two"), "{diff}");
    assert!(diff.contains("b.txt") && diff.contains("+local"), "{diff}");
    assert!(
        diff.contains("new.txt") && diff.contains("+untracked"),
        "{diff}"
    );

    let e = c.err("gitDiffToRemote", json!({"cwd": env.work})).await;
    assert_eq!(e["code"], -32600);
    assert_eq!(
        e["message"],
        format!(
            "failed to compute git diff to remote for cwd: {:?}",
            env.work
        )
    );
    assert!(e["data"]["reason"].is_string());
}

fn make_tree(root: &Path) {
    for f in [
        "src/main.rs",
        "src/lib.rs",
        "src/server/handler.rs",
        "docs/main_page.md",
        "build/out/main.o",
    ] {
        let p = root.join(f);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, "x").unwrap();
    }
    std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
}

#[tokio::test]
async fn fuzzy_file_search_ranks_files_and_respects_gitignore() {
    let env = Env::new(MockScript::default(), "").await;
    make_tree(&env.work);
    let mut c = env.client();
    let root = env.work.to_string_lossy().to_string();
    let r = c
        .ok("fuzzyFileSearch", json!({"query": "main", "roots": [root]}))
        .await;
    let files = r["files"].as_array().unwrap();
    let paths: Vec<&str> = files.iter().map(|f| f["path"].as_str().unwrap()).collect();
    assert!(paths.contains(&"src/main.rs"), "{paths:?}");
    assert!(paths.contains(&"docs/main_page.md"), "{paths:?}");
    assert!(!paths.iter().any(|p| p.starts_with("build")), "{paths:?}");
    let f = files.iter().find(|f| f["path"] == "src/main.rs").unwrap();
    assert_eq!(f["root"], root);
    assert_eq!(f["file_name"], "main.rs");
    assert_eq!(f["match_type"], "file");
    assert!(f["score"].as_u64().unwrap() > 0);
    assert_eq!(f["indices"], json!([4, 5, 6, 7]));
    let scores: Vec<u64> = files.iter().map(|f| f["score"].as_u64().unwrap()).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");

    let r = c
        .ok("fuzzyFileSearch", json!({"query": "", "roots": [root]}))
        .await;
    assert_eq!(r["files"], json!([]));
    // Two searches with one cancellation token both answer; the newer one has results.
    let a = c
        .request(
            "fuzzyFileSearch",
            json!({"query": "hand", "roots": [root], "cancellationToken": "t"}),
        )
        .await;
    let b = c
        .request(
            "fuzzyFileSearch",
            json!({"query": "handler", "roots": [root], "cancellationToken": "t"}),
        )
        .await;
    c.response(a).await;
    let rb = c.response(b).await;
    assert_eq!(rb["result"]["files"][0]["path"], "src/server/handler.rs");
}

/// The `sessionUpdated` params up to the next `sessionCompleted` (which must name the same
/// session): one per refresh while the index's first walk runs, the last over the whole tree.
async fn session_updates(c: &mut Client) -> Vec<Value> {
    let mut updates = Vec::new();
    loop {
        let v = c
            .take(|v| {
                v.get("id").is_none()
                    && (v["method"] == "fuzzyFileSearch/sessionUpdated"
                        || v["method"] == "fuzzyFileSearch/sessionCompleted")
            })
            .await;
        if v["method"] == "fuzzyFileSearch/sessionCompleted" {
            assert!(!updates.is_empty(), "completed before any update");
            assert_eq!(v["params"], json!({"sessionId": "s1"}));
            return updates;
        }
        updates.push(v["params"].clone());
    }
}

#[tokio::test]
async fn fuzzy_file_search_sessions_notify_updates() {
    let env = Env::new(MockScript::default(), "").await;
    make_tree(&env.work);
    let mut c = env.client();
    let root = env.work.to_string_lossy().to_string();
    let e = c
        .err(
            "fuzzyFileSearch/sessionStart",
            json!({"sessionId": "", "roots": [root]}),
        )
        .await;
    assert_eq!(e["message"], "sessionId must not be empty");
    c.ok(
        "fuzzyFileSearch/sessionStart",
        json!({"sessionId": "s1", "roots": [root]}),
    )
    .await;
    c.ok(
        "fuzzyFileSearch/sessionUpdate",
        json!({"sessionId": "s1", "query": "lib"}),
    )
    .await;
    let updates = session_updates(&mut c).await;
    let last = updates.last().unwrap();
    assert_eq!(last["sessionId"], "s1");
    assert_eq!(last["query"], "lib");
    assert_eq!(last["files"][0]["path"], "src/lib.rs");
    c.ok(
        "fuzzyFileSearch/sessionUpdate",
        json!({"sessionId": "s1", "query": ""}),
    )
    .await;
    let updates = session_updates(&mut c).await;
    assert_eq!(
        updates,
        vec![json!({"sessionId": "s1", "query": "", "files": []})]
    );

    let e = c
        .err(
            "fuzzyFileSearch/sessionUpdate",
            json!({"sessionId": "nope", "query": "x"}),
        )
        .await;
    assert_eq!(e["message"], "fuzzy file search session not found: nope");
    c.ok("fuzzyFileSearch/sessionStop", json!({"sessionId": "s1"}))
        .await;
    c.ok("fuzzyFileSearch/sessionStop", json!({"sessionId": "s1"}))
        .await;
    let e = c
        .err(
            "fuzzyFileSearch/sessionUpdate",
            json!({"sessionId": "s1", "query": "x"}),
        )
        .await;
    assert!(e["message"].as_str().unwrap().contains("not found"));
}
