//! v2 `hooks/list` with the hooks a config really has (a user's, a project's before and after
//! its acceptance), and `update_plan` as `turn/plan/updated`.

use crate::common;

use common::*;
use oi_test_support::{MockScript, MockTurn};
use serde_json::json;

const USER_HOOKS: &str = r#"
[[hooks.PreToolUse]]
matcher = "Bash|apply_patch"
[[hooks.PreToolUse.hooks]]
type = "command"
command = "python3 guard.py"
timeout = 30
statusMessage = "checking"

[[hooks.UserPromptSubmit]]
[[hooks.UserPromptSubmit.hooks]]
type = "command"
command = "true"
"#;

#[tokio::test]
async fn hooks_list_shows_the_users_hooks_and_a_projects_as_untrusted_until_accepted() {
    let env = Env::new(MockScript::always(MockTurn::text("ok")), "").await;
    let project = env.work.join(".openinterpreter");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::write(
        project.join("config.toml"),
        "[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"echo done\"\n",
    )
    .unwrap();
    let user_config = env.home.join("config.toml");
    let config = format!(
        "{}\n{USER_HOOKS}\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
        env.config_text(),
        env.work.display()
    );
    std::fs::write(&user_config, config).unwrap();

    let mut c = env.client();
    let listed = c.ok("hooks/list", json!({"cwds": [env.work]})).await;
    let entry = &listed["data"][0];
    assert_eq!(entry["cwd"], json!(env.work));
    assert_eq!(entry["errors"], json!([]));
    let hooks = entry["hooks"].as_array().unwrap();
    assert_eq!(hooks.len(), 2, "{entry}");
    let guard = &hooks[0];
    let key = format!("{}:pre_tool_use:0:0", user_config.display());
    for (field, want) in [
        ("key", json!(key)),
        ("eventName", json!("preToolUse")),
        ("handlerType", json!("command")),
        ("command", json!("python3 guard.py")),
        ("matcher", json!("Bash|apply_patch")),
        ("timeoutSec", json!(30)),
        ("statusMessage", json!("checking")),
        ("source", json!("user")),
        ("sourcePath", json!(user_config)),
        ("enabled", json!(true)),
        ("isManaged", json!(false)),
        ("trustStatus", json!("trusted")),
        ("displayOrder", json!(0)),
    ] {
        assert_eq!(guard[field], want, "{field}: {guard}");
    }
    assert_eq!(guard["currentHash"].as_str().unwrap().len(), 64, "{guard}");
    // The project's hook is listed, untrusted (it does not run), and the warnings say why.
    let stop = &hooks[1];
    assert_eq!(stop["eventName"], "stop");
    assert_eq!(stop["source"], "project");
    assert_eq!(stop["trustStatus"], "untrusted");
    let warnings = entry["warnings"].to_string();
    assert!(warnings.contains("hooks.UserPromptSubmit"), "{warnings}");
    assert!(
        warnings.contains("runs Stop hook `echo done` outside the sandbox"),
        "{warnings}"
    );

    // Accepted, the same hook is trusted.
    let loaded = oi_config::load_config(oi_config::ConfigLoadOptions {
        home: Some(env.home.clone()),
        cli_overrides: Vec::new(),
        overrides: oi_config::ConfigOverrides {
            cwd: Some(env.work.clone()),
            ..Default::default()
        },
    })
    .unwrap();
    let review = loaded.config.project_config_review.expect("a review");
    oi_config::project_consent::accept(&env.home, &review).unwrap();
    let listed = c.ok("hooks/list", json!({"cwds": [env.work]})).await;
    let hooks = listed["data"][0]["hooks"].as_array().unwrap().clone();
    assert_eq!(hooks[1]["trustStatus"], "trusted", "{hooks:?}");

    // A loaded thread's hooks are its session's.
    let tid = c.start_thread(&env.work).await["thread"]["id"].clone();
    let listed = c.ok("hooks/list", json!({"threadId": tid})).await;
    assert_eq!(listed["data"][0]["hooks"].as_array().unwrap().len(), 2);
}

#[tokio::test]
async fn update_plan_becomes_turn_plan_updated() {
    let env = Env::new(
        MockScript::turns([
            MockTurn::tool_call(
                "update_plan",
                json!({"explanation": "two steps", "plan": [
                    {"step": "read the test", "status": "completed"},
                    {"step": "fix calc.py", "status": "in_progress"},
                ]}),
            ),
            MockTurn::text("planned"),
        ]),
        "",
    )
    .await;
    let mut c = env.client();
    let tid = c.start_thread(&env.work).await["thread"]["id"].clone();
    let turn_id = c.start_turn(&tid, "fix it").await;
    let notes = c.turn_notifications(&turn_id).await;
    let plan = notes
        .iter()
        .find(|n| n["method"] == "turn/plan/updated")
        .expect("turn/plan/updated");
    assert_eq!(
        plan["params"],
        json!({
            "threadId": tid,
            "turnId": turn_id,
            "explanation": "two steps",
            "plan": [
                {"step": "read the test", "status": "completed"},
                {"step": "fix calc.py", "status": "inProgress"},
            ]
        })
    );
    assert!(
        env.model.requests()[0]
            .tool_names()
            .contains(&"update_plan".to_string())
    );
    let outputs = env.model.requests()[1].tool_outputs();
    assert_eq!(outputs[0].1, "Plan updated (1 of 2 steps completed).");
}

/// A hook that blocks a call: `hook/started`, then `hook/completed` with Codex's
/// `HookRunSummary` saying it blocked and why; the call never ran.
#[tokio::test]
async fn a_blocking_hook_run_becomes_hook_started_and_hook_completed() {
    let env = Env::new(
        MockScript::turns([
            MockTurn::tool_call(
                "shell",
                json!({"command": ["bash", "-lc", "echo ran > ran.txt"]}),
            ),
            MockTurn::text("stopped"),
        ]),
        "",
    )
    .await;
    let config = format!(
        "{}\n[[hooks.PreToolUse]]\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\n\
         command = \"echo not today >&2; exit 2\"\nstatusMessage = \"checking\"\n",
        env.config_text()
    );
    std::fs::write(env.home.join("config.toml"), config).unwrap();
    let mut c = env.client();
    let tid = c.start_thread(&env.work).await["thread"]["id"].clone();
    let turn_id = c.start_turn(&tid, "go").await;
    let notes = c.turn_notifications(&turn_id).await;
    let runs = |method: &str| -> Vec<serde_json::Value> {
        notes
            .iter()
            .filter(|n| n["method"] == method)
            .map(|n| n["params"].clone())
            .collect()
    };
    let (started, completed) = (runs("hook/started"), runs("hook/completed"));
    assert_eq!(started.len(), 1, "{notes:?}");
    assert_eq!(completed.len(), 1, "{notes:?}");
    assert_eq!(started[0]["run"]["status"], "running");
    assert_eq!(started[0]["run"]["id"], completed[0]["run"]["id"]);
    let done = &completed[0];
    assert_eq!(done["threadId"], tid);
    assert_eq!(done["turnId"], json!(turn_id));
    let run = &done["run"];
    for (field, want) in [
        ("eventName", json!("preToolUse")),
        ("handlerType", json!("command")),
        ("executionMode", json!("sync")),
        ("scope", json!("turn")),
        ("source", json!("user")),
        ("status", json!("blocked")),
        ("statusMessage", json!("checking")),
        ("entries", json!([{"kind": "stop", "text": "not today"}])),
    ] {
        assert_eq!(run[field], want, "{field}: {run}");
    }
    assert!(run["durationMs"].is_i64(), "{run}");
    assert!(!env.work.join("ran.txt").exists());
}
