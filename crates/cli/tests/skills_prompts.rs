//! Skills and custom prompts end to end, with skills and prompt files written for Codex and
//! Claude Code (tests/fixtures/agents, in those agents' own formats) loaded unchanged: the
//! model loads a skill through `load_skill` on every harness profile and runs its script
//! (judged by the file it leaves), `exec --json` announces the load, `/skills` and
//! `/prompts:` in a real pseudo-terminal, and v2 `skills/list`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common::*;
use crate::tui_pty::{Tui, command, quit};
use crate::v2_stdio;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};
use serde_json::json;
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/agents")
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// A user's home (`HOME`) with Codex's and Claude Code's skill folders, copied from the
/// fixtures.
fn user_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    copy_tree(
        &fixtures().join("codex/skills"),
        &home.path().join(".codex/skills"),
    );
    copy_tree(
        &fixtures().join("claude/skills"),
        &home.path().join(".claude/skills"),
    );
    home
}

const OPT_IN: &str = "\n[skills]\nother_agents = [\"codex\", \"claude\"]\n";

/// A mock-backed env whose config also has `tables` (appended: they are tables, and the
/// generated top-level keys must stay above them).
async fn env_with(script: MockScript, tables: &str) -> TestEnv {
    let env = TestEnv::new(script, WireApi::Chat).await;
    append_config(&env, tables);
    env
}

fn append_config(env: &TestEnv, text: &str) {
    let path = env.home.path().join("config.toml");
    let config = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{config}\n{text}")).unwrap();
}
const NOTES: &str =
    "The state-of-the-art parser handles 42 cases, and it's fast.\nSecond line here 7.\n";

/// The `interpreter` command of `env` with `HOME` (and no `CODEX_HOME`) set to `home`.
async fn run(env: &TestEnv, home: &Path, args: &[&str]) -> std::process::Output {
    let fut = env
        .command(args)
        .env("HOME", home)
        .env_remove("CODEX_HOME")
        .output();
    tokio::time::timeout(std::time::Duration::from_secs(60), fut)
        .await
        .expect("interpreter did not finish within 60s")
        .expect("spawn interpreter")
}

#[tokio::test]
async fn a_claude_code_skill_is_loaded_by_the_model_and_its_script_runs_in_the_sandbox() {
    let home = user_home();
    let skill_dir = home.path().join(".claude/skills/word-count");
    let count = format!(
        "cd {} && bash scripts/count.sh \"$OLDPWD/notes.txt\" > \"$OLDPWD/count.txt\"",
        skill_dir.display()
    );
    let env = env_with(
        MockScript::turns([
            MockTurn::tool_call("load_skill", json!({"name": "word-count"})),
            MockTurn::tool_call("shell", json!({"command": ["bash", "-lc", count]})),
            MockTurn::text("The count is in count.txt."),
        ]),
        OPT_IN,
    )
    .await;
    std::fs::write(env.work().join("notes.txt"), NOTES).unwrap();
    let out = run(
        &env,
        home.path(),
        &[
            "exec",
            "--json",
            "-s",
            "workspace-write",
            "-a",
            "never",
            "count the words of notes.txt",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The skill's rules (letters only, hyphenated words once), not `wc -w`'s 13.
    assert_eq!(read(&env.work().join("count.txt")).trim(), "11");

    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 3);
    // The first request lists both agents' skills by name and description, not their bodies.
    let first = reqs[0].all_text();
    assert!(first.contains("<skills>"), "{first}");
    assert!(
        first.contains("- word-count: Count the words of a text file"),
        "{first}"
    );
    assert!(
        first.contains("- release-notes: Draft release notes"),
        "{first}"
    );
    assert!(
        !first.contains("never use `wc -w`"),
        "the body is loaded only on demand"
    );
    assert!(reqs[0].tool_names().contains(&"load_skill".to_string()));
    // The tool's output is the body, the folder and its files, and the missing MCP server.
    let outputs = reqs[1].tool_outputs();
    let loaded = &outputs[0].1;
    assert!(loaded.contains("never use `wc -w`"), "{loaded}");
    assert!(
        loaded.contains(&format!("folder {}", skill_dir.display())),
        "{loaded}"
    );
    assert!(
        loaded.contains("Files: reference.md, scripts/count.sh"),
        "{loaded}"
    );
    assert!(
        loaded.contains("MCP server `wordbank`, which is not configured"),
        "{loaded}"
    );

    // `exec --json` announces the load, and warns about the missing server.
    let evs = events(&out);
    let loaded_ev = evs
        .iter()
        .find(|e| e["msg"]["type"] == "skill_loaded")
        .unwrap_or_else(|| panic!("no skill_loaded in {:?}", event_types(&evs)));
    assert_eq!(loaded_ev["msg"]["name"], "word-count");
    assert_eq!(loaded_ev["msg"]["scope"], "claude");
    assert_eq!(
        loaded_ev["msg"]["path"],
        skill_dir.join("SKILL.md").display().to_string()
    );
    assert!(
        evs.iter().any(|e| e["msg"]["type"] == "warning"
            && e["msg"]["message"]
                .as_str()
                .unwrap_or("")
                .contains("`wordbank`")),
        "{:?}",
        event_types(&evs)
    );
}

#[tokio::test]
async fn every_harness_profile_offers_load_skill_and_other_agents_need_the_opt_in() {
    let home = user_home();
    let env = TestEnv::new(MockScript::always(MockTurn::text("ok")), WireApi::Chat).await;
    // Without the opt-in, Codex's and Claude Code's folders are not read: no skill, no tool.
    let out = run(&env, home.path(), &["exec", "hi"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let req = env.mock.requests().pop().unwrap();
    assert!(!req.all_text().contains("<skills>"));
    assert!(!req.tool_names().contains(&"load_skill".to_string()));
    // The home's own skills folder needs none.
    copy_tree(
        &fixtures().join("codex/skills/release-notes"),
        &env.home.path().join("skills/release-notes"),
    );
    for harness in [
        "codex",
        "claude-code",
        "claude-code-bare",
        "zcode",
        "qwen-code",
        "kimi-code",
        "kimi-cli",
        "deepseek-tui",
        "swe-agent",
        "minimal",
    ] {
        env.mock.clear_requests();
        let h = format!("harness=\"{harness}\"");
        let out = run(&env, home.path(), &["exec", "-c", &h, "hi"]).await;
        assert_eq!(out.status.code(), Some(0), "{harness}: {}", stderr(&out));
        let req = env.mock.requests().pop().unwrap();
        assert!(
            req.tool_names().contains(&"load_skill".to_string()),
            "{harness}: {:?}",
            req.tool_names()
        );
        assert!(req.all_text().contains("- release-notes: "), "{harness}");
    }
}

/// Under `minimal`, the skill a request names is loaded when the turn starts, as `load_skill`
/// would: the model, which never calls `load_skill` here, is sent the body with the
/// request, `exec --json` announces the load, and the script the body names does the job.
/// Other profiles leave the load to the model.
#[tokio::test]
async fn under_minimal_the_skill_a_request_names_is_loaded_up_front() {
    let home = tempfile::tempdir().unwrap();
    for (harness, preloads) in [("minimal", true), ("codex", false)] {
        let env = env_with(MockScript::always(MockTurn::text("done")), "").await;
        let skill_dir = env.home.path().join("skills/word-count");
        copy_tree(&fixtures().join("claude/skills/word-count"), &skill_dir);
        let count = format!(
            "bash {}/scripts/count.sh notes.txt > count.txt",
            skill_dir.display()
        );
        let call = if preloads {
            MockTurn::tool_call("bash", json!({"command": count}))
        } else {
            MockTurn::tool_call("shell", json!({"command": ["bash", "-lc", count]}))
        };
        env.mock.set_script(MockScript::turns([
            call,
            MockTurn::text("The count is in count.txt."),
            MockTurn::text("The count is in count.txt."),
        ]));
        std::fs::write(env.work().join("notes.txt"), NOTES).unwrap();
        let h = format!("harness=\"{harness}\"");
        let out = run(
            &env,
            home.path(),
            &[
                "exec",
                "--json",
                "-c",
                &h,
                "-s",
                "workspace-write",
                "-a",
                "never",
                "count the words of notes.txt",
            ],
        )
        .await;
        assert_eq!(out.status.code(), Some(0), "{harness}: {}", stderr(&out));
        let first = env.mock.requests()[0].all_text();
        let evs = events(&out);
        let loaded: Vec<_> = evs
            .iter()
            .filter(|e| e["msg"]["type"] == "skill_loaded")
            .collect();
        if !preloads {
            assert!(!first.contains("never use `wc -w`"), "{harness}: {first}");
            assert!(loaded.is_empty(), "{harness}: {loaded:?}");
            continue;
        }
        // The body, its folder and its files, after the request, with the tool still offered.
        let at_request = first.find("count the words of notes.txt").unwrap();
        let at_note = first
            .find("<skill_loaded>")
            .unwrap_or_else(|| panic!("no skill note in {first}"));
        assert!(at_note > at_request, "{first}");
        assert!(first.contains("never use `wc -w`"), "{first}");
        // The note starts as docs/skills.md shows it.
        let docs = std::fs::read_to_string(
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/skills.md"),
        )
        .unwrap();
        let shown = docs
            .split("```text\n<skill_loaded>\n")
            .nth(1)
            .and_then(|rest| rest.lines().next())
            .expect("docs/skills.md shows the note");
        let head = format!(
            "<skill_loaded>\n{shown}\nSkill `word-count` (folder {}).",
            skill_dir.display()
        );
        assert!(first.contains(&head), "{head}\nnot in\n{first}");
        assert!(
            env.mock.requests()[0]
                .tool_names()
                .contains(&"load_skill".to_string())
        );
        // Announced like a load by the model, once.
        assert_eq!(loaded.len(), 1, "{:?}", event_types(&evs));
        assert_eq!(loaded[0]["msg"]["name"], "word-count");
        assert_eq!(loaded[0]["msg"]["call_id"], "preload:word-count");
        assert_eq!(
            loaded[0]["msg"]["path"],
            skill_dir.join("SKILL.md").display().to_string()
        );
        assert_eq!(read(&env.work().join("count.txt")).trim(), "11");
    }
}

/// A skill already loaded in the thread is not loaded again when a later request names it.
#[tokio::test]
async fn a_skill_loaded_up_front_is_not_loaded_again_in_the_same_thread() {
    let home = tempfile::tempdir().unwrap();
    let env = TestEnv::with_config(
        MockScript::always(MockTurn::text("Numbers do not count.")),
        WireApi::Chat,
        "harness = \"minimal\"\n",
    )
    .await;
    copy_tree(
        &fixtures().join("claude/skills/word-count"),
        &env.home.path().join("skills/word-count"),
    );
    let loads = |out: &std::process::Output| {
        events(out)
            .iter()
            .filter(|e| e["msg"]["type"] == "skill_loaded")
            .count()
    };
    let out = run(
        &env,
        home.path(),
        &["exec", "--json", "how does word-count treat numbers?"],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(loads(&out), 1);
    let thread_id = events(&out)
        .iter()
        .find(|e| e["msg"]["type"] == "session_configured")
        .and_then(|e| e["msg"]["session_id"].as_str().map(str::to_string))
        .expect("session_configured");
    let out = run(
        &env,
        home.path(),
        &[
            "exec",
            "--json",
            "resume",
            &thread_id,
            "and how does word-count treat hyphens?",
        ],
    )
    .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(loads(&out), 0, "{:?}", event_types(&events(&out)));
    let second = env.mock.requests().last().unwrap().all_text();
    assert_eq!(second.matches("<skill_loaded>").count(), 1, "{second}");
}

/// A project the user trusts, with the Claude Code command as a project prompt, and the
/// Codex prompt in the home.
fn with_prompts(env: &TestEnv) {
    let work = env.work();
    std::fs::create_dir_all(work.join(".openinterpreter/prompts")).unwrap();
    std::fs::copy(
        fixtures().join("claude/commands/commit-msg.md"),
        work.join(".openinterpreter/prompts/commit-msg.md"),
    )
    .unwrap();
    std::fs::create_dir_all(env.home.path().join("prompts")).unwrap();
    std::fs::copy(
        fixtures().join("codex/prompts/fix-issue.md"),
        env.home.path().join("prompts/fix-issue.md"),
    )
    .unwrap();
    append_config(
        env,
        &format!(
            "[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
            work.display()
        ),
    );
}

/// What `/prompts:fix-issue 42 "src/a b.rs" be careful` sends (docs/prompts.md shows it).
const FIX_ISSUE_SENT: &str = "Fix issue #42 in the file src/a b.rs. Keep the change small and add a test. Everything the user typed: 42 \"src/a b.rs\" be careful";

#[test]
fn the_docs_show_the_files_the_tests_load() {
    let docs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs");
    for (doc, fixture) in [
        ("skills.md", "claude/skills/word-count/SKILL.md"),
        ("skills.md", "codex/skills/release-notes/SKILL.md"),
        ("prompts.md", "codex/prompts/fix-issue.md"),
        ("prompts.md", "claude/commands/commit-msg.md"),
    ] {
        let text = std::fs::read_to_string(docs.join(doc)).unwrap();
        let file = std::fs::read_to_string(fixtures().join(fixture)).unwrap();
        assert!(
            text.contains(&format!("```markdown\n{file}```")),
            "docs/{doc} must show {fixture} verbatim"
        );
    }
    let prompts = std::fs::read_to_string(docs.join("prompts.md")).unwrap();
    assert!(prompts.contains(&format!("```text\n{FIX_ISSUE_SENT}\n```")));
}

#[tokio::test(flavor = "multi_thread")]
async fn prompts_expand_their_arguments_in_the_tui() {
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::text("fixed it"),
            MockTurn::text("message written"),
        ]),
        WireApi::Chat,
    )
    .await;
    with_prompts(&env);
    let tui = Tui::spawn(&env, &[]);
    tui.wait_for("Ask anything");
    // The popup offers the prompt files as commands, with their descriptions.
    tui.type_text("/prompts:");
    tui.wait_for("/prompts:fix-issue");
    tui.wait_for("prompt · Fix a numbered issue in one file (ISSUE FILE [notes])");
    tui.wait_for("/prompts:commit-msg");
    tui.send("\x15"); // Ctrl+U: clear the composer.
    command(&tui, "/prompts:fix-issue 42 \"src/a b.rs\" be careful");
    tui.wait_for("fixed it");
    tui.wait_until("the turn to end", |t| !t.contains("Esc to interrupt"));
    command(&tui, "/prompts:commit-msg the parser");
    tui.wait_for("message written");
    tui.wait_until("the turn to end", |t| !t.contains("Esc to interrupt"));
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(
        reqs[0].last_user_text().as_deref(),
        Some(
            "Fix issue #42 in the file src/a b.rs. Keep the change small and add a test. Everything the user typed: 42 \"src/a b.rs\" be careful\n"
        )
    );
    assert_eq!(
        reqs[1].last_user_text().as_deref(),
        Some("Write a one-line commit message for the staged changes. Focus on: the parser\n")
    );
    // An unknown prompt is an error naming the ones there are, and nothing is sent.
    command(&tui, "/prompts:nope");
    tui.wait_for("unknown prompt `nope`; the prompts are: commit-msg, fix-issue");
    assert_eq!(env.mock.requests().len(), 2);
    quit(tui);
}

#[tokio::test(flavor = "multi_thread")]
async fn slash_skills_lists_what_the_model_can_load() {
    let home = user_home();
    let env = env_with(
        MockScript::turns([
            MockTurn::tool_call("load_skill", json!({"name": "release-notes"})),
            MockTurn::text("notes drafted"),
        ]),
        OPT_IN,
    )
    .await;
    // A broken skill in the home is listed as not loaded, with the reason.
    let broken = env.home.path().join("skills/broken/SKILL.md");
    std::fs::create_dir_all(broken.parent().unwrap()).unwrap();
    std::fs::write(&broken, "---\nname: broken\n---\nno description\n").unwrap();
    let home_var = home.path().display().to_string();
    let tui = Tui::spawn_with(&env, &[], &[("HOME", &home_var)]);
    tui.wait_for("Ask anything");
    command(&tui, "/skills");
    tui.wait_for("Skills (2 the model can load with load_skill)");
    tui.wait_for("release-notes · codex · Draft release notes");
    tui.wait_for("word-count · claude · Count the words");
    tui.wait_for("needs the MCP server `wordbank`, which is not configured");
    tui.wait_for("has no `description` in its front matter");
    assert!(
        env.mock.requests().is_empty(),
        "listing skills asks the model nothing"
    );
    // A skill the model loads is shown as such.
    command(&tui, "draft the release notes");
    tui.wait_for("Loaded skill release-notes (codex)");
    tui.wait_for("notes drafted");
    quit(tui);
}

#[tokio::test]
async fn v2_skills_list_reports_each_cwds_skills_and_errors() {
    let home = user_home();
    let env = env_with(MockScript::always(MockTurn::text("ok")), OPT_IN).await;
    let work = env.work();
    copy_tree(
        &fixtures().join("claude/skills/word-count"),
        &work.join(".openinterpreter/skills/project-count"),
    );
    // The project's copy is renamed in its front matter, and the project is trusted.
    let md = work.join(".openinterpreter/skills/project-count/SKILL.md");
    let text = std::fs::read_to_string(&md)
        .unwrap()
        .replace("name: word-count", "name: project-count");
    std::fs::write(&md, text).unwrap();
    append_config(
        &env,
        &format!(
            "[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
            work.display()
        ),
    );
    let mut s = v2_stdio::spawn_with_home(&env, home.path());
    s.ok(
        "initialize",
        json!({"protocolVersion": "2025-06-18", "capabilities": {},
               "clientInfo": {"name": "skills-test", "version": "1"}}),
    )
    .await;
    let r = s.ok("skills/list", json!({"cwds": [work]})).await;
    let entry = &r["data"][0];
    assert_eq!(entry["cwd"], work.display().to_string());
    let skills = entry["skills"].as_array().unwrap();
    let names: Vec<&str> = skills.iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["project-count", "release-notes", "word-count"]);
    assert_eq!(skills[0]["scope"], "repo");
    assert_eq!(skills[1]["scope"], "user");
    assert_eq!(
        skills[1]["shortDescription"],
        "Release notes from git history"
    );
    // Codex's agents/openai.yaml names the MCP server it needs.
    assert_eq!(skills[1]["dependencies"]["tools"][0]["value"], "github");
    assert_eq!(skills[2]["enabled"], true);
    assert_eq!(
        skills[2]["path"],
        home.path()
            .join(".claude/skills/word-count/SKILL.md")
            .display()
            .to_string()
    );
    let dep = &skills[2]["dependencies"]["tools"][0];
    assert_eq!(
        (dep["type"].as_str(), dep["value"].as_str()),
        (Some("mcp"), Some("wordbank"))
    );
    assert!(
        dep["description"]
            .as_str()
            .unwrap()
            .contains("not configured"),
        "{dep}"
    );
    assert_eq!(entry["errors"], json!([]));
}
