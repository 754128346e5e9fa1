//! Harness profiles end to end through `interpreter exec`, with the examples of
//! docs/harness.md: the profile's tools are what the model is offered, and its calls change
//! the working directory.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use common::*;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};
use serde_json::json;

const FULL: &[&str] = &["-s", "workspace-write", "-a", "never"];

fn doc() -> String {
    read(&std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/harness.md"))
}

/// The first fenced block of `lang` in docs/harness.md.
fn block(lang: &str) -> String {
    let doc = doc();
    let start = doc.find(&format!("```{lang}\n")).expect("block") + lang.len() + 4;
    let len = doc[start..].find("```").expect("block end");
    doc[start..start + len].to_string()
}

#[tokio::test]
async fn the_config_example_gives_the_model_qwen_codes_tools() {
    // The example names a real model; the mock answers to its own, so that line goes.
    let example: String = block("toml")
        .lines()
        .filter(|l| !l.starts_with("model ="))
        .collect::<Vec<_>>()
        .join("\n");
    assert!(example.contains("harness = \"qwen-code\""), "{example}");
    let env = TestEnv::with_config(
        MockScript::turns([
            MockTurn::tool_call(
                "write_file",
                json!({"file_path": "hello.txt", "content": "hi\n"}),
            ),
            MockTurn::text("wrote hello.txt"),
        ]),
        WireApi::Chat,
        &example,
    )
    .await;
    let out = env
        .run(&[&["exec"], FULL, &["create hello.txt"]].concat())
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(read(&env.work().join("hello.txt")), "hi\n");
    let tools = env.mock.requests()[0].tool_names();
    assert!(tools.contains(&"replace".to_string()), "{tools:?}");
    assert!(!tools.contains(&"apply_patch".to_string()), "{tools:?}");
}

#[tokio::test]
async fn the_command_line_example_switches_to_claude_codes_tools() {
    let line = block("bash");
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words
        .iter()
        .position(|w| *w == "-c")
        .expect("-c in the example");
    let setting = words[at + 1];
    assert_eq!(setting, "harness=claude-code");
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::text("")
                .with_tool_call("TodoWrite", json!({"todos": [{"content": "fix it", "status": "in_progress", "activeForm": "fixing"}]}))
                .with_tool_call("Write", json!({"file_path": "calc.py", "content": "def add(a, b):\n    return a + b\n"})),
            MockTurn::text("fixed"),
        ]),
        WireApi::Chat,
    )
    .await;
    std::fs::write(
        env.work().join("calc.py"),
        "def add(a, b):\n    return a - b\n",
    )
    .unwrap();
    let out = env
        .run(
            &[
                &["exec", "--json", "-c", setting],
                FULL,
                &["fix the failing test"],
            ]
            .concat(),
        )
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(read(&env.work().join("calc.py")).contains("a + b"));
    assert!(
        env.mock.requests()[0]
            .tool_names()
            .contains(&"Edit".to_string())
    );
    let evs = events(&out);
    let plan = evs
        .iter()
        .find(|e| e["msg"]["type"] == "plan_update")
        .expect("plan_update line");
    assert_eq!(
        plan["msg"]["plan"][0],
        json!({"step": "fix it", "status": "in_progress"})
    );
    let patch = evs
        .iter()
        .find(|e| e["msg"]["type"] == "patch_apply_end")
        .expect("patch_apply_end line");
    let diff = patch["msg"]["changes"].to_string();
    assert!(
        diff.contains("-    return a - b") && diff.contains("+    return a + b"),
        "{diff}"
    );
}

#[tokio::test]
async fn an_unknown_harness_is_refused_with_the_choices() {
    let env = TestEnv::new(MockScript::turns([MockTurn::text("x")]), WireApi::Chat).await;
    let out = env.run(&["exec", "-c", "harness=gemini", "hi"]).await;
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("harness") && err.contains("claude-code"),
        "{err}"
    );
    assert!(env.mock.requests().is_empty());
}

/// The fenced block of `lang` in `doc` that contains `needle`.
fn block_with(doc: &str, lang: &str, needle: &str) -> String {
    let fence = format!("```{lang}\n");
    doc.match_indices(&fence)
        .map(|(at, _)| {
            let start = at + fence.len();
            let len = doc[start..].find("```").expect("block end");
            doc[start..start + len].to_string()
        })
        .find(|b| b.contains(needle))
        .unwrap_or_else(|| panic!("no ```{lang} block with {needle}"))
}

#[tokio::test]
async fn the_swe_agent_example_fixes_a_file_through_the_viewer() {
    let line = block_with(&doc(), "bash", "harness=swe-agent");
    let words: Vec<&str> = line.split_whitespace().collect();
    let at = words.iter().position(|w| *w == "-c").expect("-c");
    let setting = words[at + 1];
    assert_eq!(setting, "harness=swe-agent");
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("open", json!({"path": "calc.py", "line_number": 2})),
            MockTurn::tool_call(
                "edit",
                json!({"start_line": 2, "end_line": 2, "replacement_text": "    return a + b\n"}),
            ),
            MockTurn::tool_call("submit", json!({})),
            MockTurn::text("Fixed the subtraction in `calc.py`."),
        ]),
        WireApi::Chat,
    )
    .await;
    std::fs::write(
        env.work().join("calc.py"),
        "def add(a, b):\n    return a - b\n",
    )
    .unwrap();
    let out = env
        .run(
            &[
                &["exec", "--json", "-c", setting],
                FULL,
                &["fix the subtraction in calc.py"],
            ]
            .concat(),
        )
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        read(&env.work().join("calc.py")),
        "def add(a, b):\n    return a + b\n"
    );
    let tools = env.mock.requests()[0].tool_names();
    for t in ["open", "goto", "edit", "submit", "bash"] {
        assert!(tools.contains(&t.to_string()), "{tools:?}");
    }
    assert!(!tools.contains(&"apply_patch".to_string()), "{tools:?}");
    // The window the model saw, then the edit as a patch with its diff.
    let window = &env.mock.requests()[1].tool_outputs()[0].1;
    assert!(
        window.contains("[File: calc.py (2 lines total)]\n1:def add(a, b):\n2:    return a - b\n"),
        "{window}"
    );
    let patch = events(&out)
        .into_iter()
        .find(|e| e["msg"]["type"] == "patch_apply_end")
        .expect("patch_apply_end line");
    let diff = patch["msg"]["changes"].to_string();
    assert!(
        diff.contains("-    return a - b") && diff.contains("+    return a + b"),
        "{diff}"
    );
}

/// docs/providers.md's example: GLM on Z.AI's Anthropic endpoint under `zcode`, where
/// `auto` would have picked `claude-code`; the same `harness` line offers Claude Code's tools
/// under Z.AI's prompt on the mock.
#[tokio::test]
async fn the_providers_example_runs_glm_under_zcode() {
    let providers =
        read(&std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/providers.md"));
    let example = block_with(&providers, "toml", "harness = \"zcode\"");
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("config.toml"), &example).unwrap();
    let config = oi_config::load_config(oi_config::ConfigLoadOptions {
        home: Some(home.path().to_path_buf()),
        cli_overrides: Vec::new(),
        overrides: oi_config::ConfigOverrides {
            cwd: Some(home.path().to_path_buf()),
            ..Default::default()
        },
    })
    .unwrap()
    .config;
    use oi_protocol::config_types::Harness;
    assert_eq!(config.model_provider.wire_api, WireApi::Messages);
    assert_eq!(oi_core::harness::resolve(&config), Harness::Zcode);
    assert_eq!(
        oi_core::harness::for_endpoint(config.model_provider.wire_api, &config.model),
        Harness::ClaudeCode
    );

    let harness_line: String = example
        .lines()
        .filter(|l| l.starts_with("harness ="))
        .collect();
    let env = TestEnv::with_config(
        MockScript::turns([
            MockTurn::tool_call(
                "Write",
                json!({"file_path": "hello.txt", "content": "hi\n"}),
            ),
            MockTurn::text("wrote hello.txt"),
        ]),
        WireApi::Chat,
        &harness_line,
    )
    .await;
    let out = env
        .run(&[&["exec"], FULL, &["create hello.txt"]].concat())
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(read(&env.work().join("hello.txt")), "hi\n");
    let first = &env.mock.requests()[0];
    assert!(first.tool_names().contains(&"Edit".to_string()));
    assert!(first.all_text().contains("Z.AI's coding harness"));
}
