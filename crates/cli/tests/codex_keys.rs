//! The cheap Codex keys do what Codex does: `notify`, `hide_agent_reasoning`,
//! `show_raw_agent_reasoning`, `model_verbosity`, `model_reasoning_summary`,
//! `project_doc_max_bytes` and `[history] persistence`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use common::*;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};

#[tokio::test]
async fn notify_runs_the_program_with_the_turn_as_json() {
    let out_dir = tempfile::tempdir().unwrap();
    let out_file = out_dir.path().join("notified.json");
    // `sh -c SCRIPT $0 $1`: $0 is the output file, $1 the JSON we append.
    let extra = format!(
        "notify = [\"sh\", \"-c\", \"printf '%s' \\\"$1\\\" > \\\"$0.tmp\\\" && mv \\\"$0.tmp\\\" \\\"$0\\\"\", {:?}]",
        out_file.display().to_string()
    );
    let env = TestEnv::with_config(
        MockScript::turns([MockTurn::text("all done")]),
        WireApi::Chat,
        &extra,
    )
    .await;
    let out = env.run(&["exec", "tidy the imports"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The thread's shutdown lets the notifier finish, so it has run by the time exec exits.
    let text = std::fs::read_to_string(&out_file).expect("the notifier ran before exec exited");
    let json: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(json["type"], "agent-turn-complete");
    assert_eq!(
        json["input-messages"],
        serde_json::json!(["tidy the imports"])
    );
    assert_eq!(json["last-assistant-message"], "all done");
    assert_eq!(json["cwd"], env.work().display().to_string());
    assert!(json["thread-id"].as_str().is_some_and(|t| !t.is_empty()));
    assert!(json["turn-id"].as_str().is_some_and(|t| !t.is_empty()));
}

#[tokio::test]
async fn reasoning_is_hidden_or_shown_whole_as_configured() {
    let turn = || MockTurn::text("answer").with_reasoning("step one\nstep two");
    let env = TestEnv::with_config(
        MockScript::turns([turn(), turn()]),
        WireApi::Chat,
        "hide_agent_reasoning = true",
    )
    .await;
    let out = env.run(&["exec", "think"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!stderr(&out).contains("step one"), "{}", stderr(&out));
    let out = env.run(&["exec", "--json", "think"]).await;
    let types = event_types(&events(&out));
    assert!(
        types.iter().all(|t| !t.starts_with("agent_reasoning")),
        "{types:?}"
    );
    assert!(types.contains(&"agent_message".to_string()), "{types:?}");

    let env = TestEnv::with_config(
        MockScript::turns([turn(), turn()]),
        WireApi::Chat,
        "show_raw_agent_reasoning = true",
    )
    .await;
    let out = env.run(&["exec", "think"]).await;
    assert!(stderr(&out).contains("step two"), "{}", stderr(&out));
    // The default shows the first line only.
    let env = TestEnv::new(MockScript::turns([turn()]), WireApi::Chat).await;
    let out = env.run(&["exec", "think"]).await;
    let err = stderr(&out);
    assert!(
        err.contains("step one") && !err.contains("step two"),
        "{err}"
    );
}

#[tokio::test]
async fn verbosity_summary_and_project_doc_limit_reach_the_request() {
    let env = TestEnv::with_config(
        MockScript::turns([MockTurn::text("ok")]),
        WireApi::Responses,
        "model_reasoning_effort = \"high\"\nmodel_reasoning_summary = \"concise\"\nmodel_verbosity = \"low\"\nproject_doc_max_bytes = 0",
    )
    .await;
    std::fs::write(env.work().join("AGENTS.md"), "PROJECT-RULES-MARKER").unwrap();
    let out = env.run(&["exec", "hi"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let req = &env.mock.requests()[0];
    assert_eq!(req.body["text"]["verbosity"], "low", "{}", req.body);
    assert_eq!(req.body["reasoning"]["summary"], "concise", "{}", req.body);
    assert!(!req.all_text().contains("PROJECT-RULES-MARKER"));

    // Without the limit set to 0, AGENTS.md is part of the context.
    let env = TestEnv::new(MockScript::turns([MockTurn::text("ok")]), WireApi::Chat).await;
    std::fs::write(env.work().join("AGENTS.md"), "PROJECT-RULES-MARKER").unwrap();
    env.run(&["exec", "hi"]).await;
    assert!(
        env.mock.requests()[0]
            .all_text()
            .contains("PROJECT-RULES-MARKER")
    );
}

#[tokio::test]
async fn interactive_prompts_are_saved_unless_history_persistence_is_none() {
    for (extra, saved) in [("", true), ("[history]\npersistence = \"none\"\n", false)] {
        let env = TestEnv::new(MockScript::turns([MockTurn::text("hi")]), WireApi::Chat).await;
        let config = env.home.path().join("config.toml");
        std::fs::write(&config, read(&config) + "\n" + extra).unwrap();
        let out = env.run(&["remember the pelican"]).await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let history = read(&env.home.path().join("history.jsonl"));
        assert_eq!(
            history.contains("remember the pelican"),
            saved,
            "{extra}: {history}"
        );
    }
}
