//! The model's plan end to end: `update_plan` on the codex profile (and `include_plan_tool`),
//! the `plan_update` line of `exec --json`, and the TUI's checklist with `/plan`, with the
//! examples of docs/plans.md.

use crate::common::*;
use crate::tui_pty::*;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};
use serde_json::{Value, json};

fn doc() -> String {
    read(&std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/plans.md"))
}

/// The `n`th fenced block of `lang` in docs/plans.md.
fn block(lang: &str, n: usize) -> String {
    let doc = doc();
    let fence = format!("```{lang}\n");
    let mut at = 0;
    for _ in 0..=n {
        at += doc[at..].find(&fence).expect("block") + fence.len();
    }
    let len = doc[at..].find("```").expect("block end");
    doc[at..at + len].to_string()
}

#[tokio::test]
async fn update_plan_from_the_docs_reaches_exec_json() {
    let call: Value = serde_json::from_str(&block("json", 0)).unwrap();
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("update_plan", call.clone()),
            MockTurn::text("planned"),
        ]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&["exec", "--json", "fix the test"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let reqs = env.mock.requests();
    assert!(
        reqs[0].tool_names().contains(&"update_plan".to_string()),
        "{:?}",
        reqs[0].tool_names()
    );
    assert_eq!(
        reqs[1].tool_outputs()[0].1,
        "Plan updated (1 of 2 steps completed)."
    );
    let line = events(&out)
        .into_iter()
        .find(|e| e["msg"]["type"] == "plan_update")
        .expect("plan_update line");
    // The line is the one docs/plans.md shows, but for the turn id.
    let mut documented: Value = serde_json::from_str(&block("json", 1)).unwrap();
    documented["id"] = line["id"].clone();
    assert_eq!(line, documented);
}

#[tokio::test]
async fn include_plan_tool_false_leaves_the_plan_tool_out_on_every_profile() {
    assert_eq!(block("toml", 0).trim(), "include_plan_tool = false");
    for (harness, tool) in [("codex", "update_plan"), ("claude-code", "TodoWrite")] {
        let env = TestEnv::with_config(
            MockScript::always(MockTurn::text("ok")),
            WireApi::Chat,
            &block("toml", 0),
        )
        .await;
        let setting = format!("harness={harness}");
        let out = env.run(&["exec", "-c", &setting, "hi"]).await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let tools = env.mock.requests()[0].tool_names();
        assert!(!tools.contains(&tool.to_string()), "{harness}: {tools:?}");
        // Control: without the setting the tool is offered.
        let env = TestEnv::new(MockScript::always(MockTurn::text("ok")), WireApi::Chat).await;
        let out = env.run(&["exec", "-c", &setting, "hi"]).await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
        let tools = env.mock.requests()[0].tool_names();
        assert!(tools.contains(&tool.to_string()), "{harness}: {tools:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_tui_shows_the_plan_as_a_checklist_and_slash_plan_shows_it_again() {
    let env = env([
        MockTurn::tool_call(
            "update_plan",
            json!({"plan": [
                {"step": "read the failing test", "status": "completed"},
                {"step": "fix calc.py", "status": "in_progress"},
                {"step": "run the tests", "status": "pending"},
            ]}),
        ),
        MockTurn::text("working on it"),
    ])
    .await;
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    command(&tui, "/plan");
    tui.wait_for("No plan yet in this thread");
    turn(&tui, "fix the test", "working on it");
    tui.wait_for("Plan (1/3 done)");
    command(&tui, "/plan");
    // Printed again: the checklist is on the screen twice now.
    let screen = tui.wait_until("/plan to print the plan again", |t| {
        t.matches("Plan (1/3 done)").count() >= 2
    });
    for line in [
        "✔ read the failing test",
        "▶ fix calc.py",
        "○ run the tests",
    ] {
        assert!(screen.contains(line), "{line} missing:\n{screen}");
    }
    // `/plan` is local: it sent nothing to the model.
    assert_eq!(env.mock.requests().len(), 2);
    quit(tui);
}
