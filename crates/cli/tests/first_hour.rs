//! What a new user meets first: global flags in any position, help that lists values and
//! examples, and `sessions list` that stays truthful.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use common::*;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};

#[tokio::test]
async fn global_flags_work_before_and_after_the_subcommand() {
    let env = TestEnv::new(
        MockScript::cycle(vec![MockTurn::text("done").into()]),
        WireApi::Chat,
    )
    .await;
    let config = env.home.path().join("config.toml");
    let text = read(&config) + "\n[profiles.local]\nmodel = \"profile-model\"\n";
    std::fs::write(&config, text).unwrap();
    // The docs/configuration.md example: profile before the subcommand.
    let out = env.run(&["-p", "local", "exec", "first"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // Model before, sandbox after: both apply.
    let out = env
        .run(&["-m", "flag-model", "exec", "-s", "read-only", "second"])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].model(), Some("profile-model"));
    assert_eq!(reqs[0].last_user_text().as_deref(), Some("first"));
    assert_eq!(reqs[1].model(), Some("flag-model"));
    assert_eq!(reqs[1].last_user_text().as_deref(), Some("second"));
}

#[tokio::test]
async fn a_subcommand_name_after_a_flag_is_never_a_prompt() {
    let env = TestEnv::new(MockScript::always(MockTurn::text("hi")), WireApi::Chat).await;
    // Before the fix this started an interactive session that sent "sessions" to the model.
    let out = env.run(&["-m", "x", "sessions", "list"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("No stored threads yet"),
        "{}",
        stdout(&out)
    );
    // `exec` without a prompt and with stdin closed: a usage error, not a prompt "exec".
    let out = env.run(&["-m", "x", "exec"]).await;
    assert_ne!(out.status.code(), Some(0));
    assert!(
        env.mock
            .requests()
            .iter()
            .all(|r| r.last_user_text().as_deref() != Some("exec")),
        "a subcommand name reached the model"
    );
}

#[tokio::test]
async fn every_help_lists_values_config_location_and_examples() {
    let env = TestEnv::new(MockScript::turns([]), WireApi::Chat).await;
    let commands: &[&[&str]] = &[
        &[],
        &["exec"],
        &["resume"],
        &["sandbox"],
        &["mcp-server"],
        &["sessions"],
        &["sessions", "list"],
        &["mcp"],
        &["mcp", "add"],
        &["mcp", "list"],
        &["mcp", "get"],
        &["mcp", "remove"],
        &["mcp", "login"],
        &["mcp", "logout"],
    ];
    for cmd in commands {
        let mut args = cmd.to_vec();
        args.push("--help");
        let out = env.run(&args).await;
        assert_eq!(out.status.code(), Some(0), "{cmd:?}: {}", stderr(&out));
        let help = stdout(&out);
        for value in [
            "read-only",
            "workspace-write",
            "danger-full-access",
            "untrusted",
            "on-failure",
            "on-request",
            "never",
        ] {
            assert!(
                help.contains(value),
                "{cmd:?} help lacks `{value}`:\n{help}"
            );
        }
        assert!(
            help.contains("~/.openinterpreter/config.toml"),
            "{cmd:?} help does not say where the config lives:\n{help}"
        );
        let examples = help
            .split("Examples:\n")
            .nth(1)
            .unwrap_or_else(|| panic!("{cmd:?} help has no examples:\n{help}"));
        assert!(
            examples
                .lines()
                .filter(|l| l.contains("interpreter"))
                .count()
                >= 2,
            "{cmd:?}: {examples}"
        );
        // Every argument and option has a description: no bare `<NAME>` / `--flag` lines.
        for line in help.lines() {
            let t = line.trim_start();
            let is_item = t.starts_with('-') || t.starts_with('<') || t.starts_with('[');
            if is_item && line.starts_with("  ") && !line.starts_with("      ") {
                let (item, rest) = t.split_once("  ").unwrap_or((t, ""));
                let next_has_text = help
                    .lines()
                    .skip_while(|l| *l != line)
                    .nth(1)
                    .is_some_and(|n| n.starts_with("          ") && !n.trim().is_empty());
                assert!(
                    !rest.trim().is_empty() || next_has_text,
                    "{cmd:?}: `{item}` has no description:\n{help}"
                );
            }
        }
    }
    let out = env.run(&["sessions", "list", "--help"]).await;
    let help = stdout(&out);
    assert!(!help.contains("Include archived threads only"), "{help}");
    assert!(help.contains("0 shows them all"), "{help}");
}

#[tokio::test]
async fn sessions_list_prunes_deleted_rollouts_and_says_when_nothing_matches() {
    let env = TestEnv::new(
        MockScript::cycle(vec![MockTurn::text("ok").into()]),
        WireApi::Chat,
    )
    .await;
    for p in ["fix the parser", "write docs", "fix the lexer"] {
        let out = env.run(&["exec", p]).await;
        assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    }
    let list_json = |out: &std::process::Output| -> Vec<serde_json::Value> {
        serde_json::from_str::<serde_json::Value>(&stdout(out))
            .unwrap()
            .as_array()
            .cloned()
            .unwrap()
    };
    let threads = list_json(&env.run(&["sessions", "list", "--json"]).await);
    assert_eq!(threads.len(), 3);
    let lexer = threads
        .iter()
        .find(|t| t["preview"] == "fix the lexer")
        .unwrap();
    std::fs::remove_file(lexer["path"].as_str().unwrap()).unwrap();

    let out = env.run(&["sessions", "list"]).await;
    assert!(!stdout(&out).contains("fix the lexer"), "{}", stdout(&out));
    assert_eq!(stdout(&out).lines().count(), 2, "{}", stdout(&out));
    // `resume --last` now picks the newest thread that still exists.
    let threads = list_json(
        &env.run(&["sessions", "list", "--json", "--limit", "0"])
            .await,
    );
    let previews: Vec<_> = threads.iter().map(|t| t["preview"].clone()).collect();
    assert_eq!(previews, ["write docs", "fix the parser"]);

    let out = env
        .run(&["sessions", "list", "--search", "no-such-words"])
        .await;
    assert_eq!(out.status.code(), Some(0));
    let text = stdout(&out);
    assert!(
        text.contains("No thread matches \"no-such-words\""),
        "{text}"
    );
    assert!(!text.contains("No stored threads yet"), "{text}");

    let out = env.run(&["sessions", "list", "--archived"]).await;
    assert!(
        stdout(&out).contains("No archived threads"),
        "{}",
        stdout(&out)
    );
}

#[tokio::test]
async fn sessions_list_limit_zero_lists_past_one_page() {
    let env = TestEnv::new(MockScript::turns([]), WireApi::Chat).await;
    // More threads than one index page (100), created through the store directly: 105 model
    // turns would only slow the test down.
    let store = oi_thread_store::ThreadStore::open(env.home.path()).unwrap();
    for _ in 0..105 {
        let meta = oi_thread_store::SessionMeta::new(
            env.work(),
            "mock",
            "test-model",
            oi_thread_store::SessionSource::Exec,
        );
        drop(store.create(meta).unwrap());
    }
    drop(store);
    let out = env.run(&["sessions", "list", "--limit", "0"]).await;
    assert_eq!(stdout(&out).lines().count(), 105, "{}", stderr(&out));
    let out = env.run(&["sessions", "list"]).await;
    assert_eq!(stdout(&out).lines().count(), 25);
}

/// docs/exec-json.md documents the line shape and every event type a real run prints.
#[tokio::test]
async fn exec_json_output_matches_the_documented_format() {
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", serde_json::json!({"command": ["ls"]}))
                .with_reasoning("look first"),
            MockTurn::text("There are 0 files."),
        ]),
        WireApi::Chat,
    )
    .await;
    let out = env
        .run(&["exec", "--json", "-a", "never", "how many files?"])
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let doc =
        read(&std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/exec-json.md"));
    let evs = events(&out);
    assert_eq!(evs[0]["id"], "");
    assert_eq!(evs[0]["msg"]["type"], "session_configured");
    assert_eq!(evs.last().unwrap()["msg"]["type"], "task_complete");
    let mut missing = Vec::new();
    for ev in &evs {
        let obj = ev.as_object().unwrap();
        assert_eq!(obj.len(), 2, "a line is {{id, msg}}: {ev}");
        assert!(ev["id"].is_string(), "{ev}");
        let kind = ev["msg"]["type"].as_str().unwrap();
        assert!(
            doc.contains(&format!("| `{kind}` |")),
            "docs/exec-json.md does not document `{kind}`"
        );
        // The fields the doc's table lists for this type are really there.
        let row = doc
            .lines()
            .find(|l| l.starts_with(&format!("| `{kind}` |")))
            .unwrap();
        let fields_cell = row.split('|').nth(2).unwrap_or_default();
        // `name?` marks a field that is left out when it has no value.
        for field in fields_cell
            .split(',')
            .filter_map(|f| f.trim().split('`').nth(1))
        {
            if !field.ends_with('?') && ev["msg"].get(field).is_none() {
                missing.push(format!("`{kind}` lacks documented field `{field}`: {ev}"));
            }
        }
    }
    assert!(missing.is_empty(), "{missing:#?}");
}
