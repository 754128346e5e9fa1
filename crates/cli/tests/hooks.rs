//! `[hooks]` end to end through `interpreter exec` and the mock model, with the examples of
//! docs/hooks.md: a `PreToolUse` hook blocks a call and the model reads why, every hook gets
//! its event as JSON, a hook past its timeout is killed, a project's hooks wait for the
//! project config's acceptance (and its pinned scripts), `SessionStart` output is context in
//! the first request, and a `Stop` hook sends the model back to work (at most 3 times).

use crate::common::*;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

const FULL: &[&str] = &["-s", "workspace-write", "-a", "never"];

fn doc() -> String {
    read(&PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/hooks.md"))
}

/// The first fenced block of `lang` in docs/hooks.md.
fn block(lang: &str) -> String {
    let doc = doc();
    let start = doc.find(&format!("```{lang}\n")).expect("block") + lang.len() + 4;
    let len = doc[start..].find("```").expect("block end");
    doc[start..start + len].to_string()
}

fn shell(script: &str) -> MockTurn {
    MockTurn::tool_call("shell", json!({"command": ["bash", "-lc", script]}))
}

/// A test env whose config is the mock's plus `tables` (TOML tables, after the provider's).
async fn env_with_tables(script: MockScript, tables: &str) -> TestEnv {
    let env = TestEnv::new(script, WireApi::Chat).await;
    let config = format!(
        "{}\n{tables}\n",
        env.mock.config_toml("mock", WireApi::Chat)
    );
    std::fs::write(env.home.path().join("config.toml"), config).unwrap();
    env
}

fn jsonl(path: &Path) -> Vec<Value> {
    read(path)
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not JSON: {l}: {e}")))
        .collect()
}

fn warnings(out: &std::process::Output) -> Vec<String> {
    events(out)
        .iter()
        .filter(|e| e["msg"]["type"] == "warning")
        .map(|e| e["msg"]["message"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test]
async fn the_docs_guard_blocks_rm_rf_the_model_reads_why_and_every_hook_gets_its_event() {
    let env = env_with_tables(
        MockScript::turns([
            shell("rm -rf data"),
            shell("echo ok > done.txt"),
            MockTurn::text("all done"),
        ]),
        "",
    )
    .await;
    let home = env.home.path().canonicalize().unwrap();
    let hooks_dir = home.join("hooks");
    std::fs::create_dir_all(&hooks_dir).unwrap();
    std::fs::write(hooks_dir.join("guard.py"), block("python")).unwrap();
    let tables = block("toml").replace("~/.openinterpreter", &home.display().to_string());
    let config = format!(
        "{}\n{tables}\n",
        env.mock.config_toml("mock", WireApi::Chat)
    );
    std::fs::write(home.join("config.toml"), config).unwrap();
    let data = env.work().join("data");
    std::fs::create_dir(&data).unwrap();
    std::fs::write(data.join("keep.txt"), "precious").unwrap();

    let out = env
        .run(&[&["exec", "--json"], FULL, &["clean up"]].concat())
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    // The guard blocked the first call: nothing was deleted, the second call ran.
    assert_eq!(read(&data.join("keep.txt")), "precious");
    assert_eq!(read(&env.work().join("done.txt")), "ok\n");
    let reqs = env.mock.requests();
    let outputs = reqs[1].tool_outputs();
    let (_, blocked) = outputs.last().expect("the blocked call's output");
    assert!(
        blocked.starts_with("blocked by a PreToolUse hook: rm -rf is not allowed here"),
        "{blocked}"
    );
    let warned = warnings(&out);
    assert!(
        warned
            .iter()
            .any(|w| w.contains("PreToolUse hook") && w.contains("blocked `shell`")),
        "{warned:?}"
    );

    // Each run in the turn is told to front ends: started, then how it ended and why.
    let runs = |kind: &str| -> Vec<Value> {
        events(&out)
            .into_iter()
            .filter(|e| e["msg"]["type"] == kind)
            .map(|e| e["msg"].clone())
            .filter(|m| m["event_name"] != "sessionStart" && m["event_name"] != "stop")
            .collect()
    };
    let (started, completed) = (runs("hook_started"), runs("hook_completed"));
    let summary: Vec<(&str, &str)> = completed
        .iter()
        .map(|m| {
            (
                m["event_name"].as_str().unwrap_or_default(),
                m["status"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            // The logger, then the guard, for each call; only the first call ran past them.
            ("preToolUse", "completed"),
            ("preToolUse", "blocked"),
            ("preToolUse", "completed"),
            ("preToolUse", "completed"),
            ("postToolUse", "completed")
        ],
        "{completed:?}"
    );
    let ids = |v: &[Value]| -> Vec<Value> { v.iter().map(|m| m["id"].clone()).collect() };
    assert_eq!(ids(&started), ids(&completed));
    assert!(
        started.iter().all(|m| m["status"] == "running"),
        "{started:?}"
    );
    let guard = &completed[1];
    assert!(
        guard["command"]
            .as_str()
            .unwrap_or_default()
            .contains("guard.py"),
        "{guard}"
    );
    assert_eq!(guard["status_message"], "checking the command", "{guard}");
    assert_eq!(guard["entries"][0]["kind"], "stop", "{guard}");
    assert!(
        guard["entries"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .contains("rm -rf is not allowed here"),
        "{guard}"
    );
    assert_eq!(guard["source"], "user");
    assert!(guard["turn_id"].is_string(), "{guard}");
    assert!(guard["duration_ms"].is_u64(), "{guard}");

    // Every event reached the log, as JSON with Codex's fields.
    let thread_id = events(&out)
        .iter()
        .find(|e| e["msg"]["type"] == "session_configured")
        .map(|e| e["msg"]["session_id"].clone())
        .expect("session_configured");
    let log = jsonl(&hooks_dir.join("events.jsonl"));
    let names: Vec<&str> = log
        .iter()
        .map(|e| e["hook_event_name"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(names.first(), Some(&"SessionStart"), "{names:?}");
    assert_eq!(names.last(), Some(&"Stop"), "{names:?}");
    for e in &log {
        assert_eq!(e["session_id"], thread_id, "{e}");
        assert_eq!(e["cwd"], json!(env.work()), "{e}");
        assert_eq!(e["permission_mode"], "bypassPermissions", "{e}");
    }
    assert_eq!(log[0]["source"], "startup");
    let pre: Vec<&Value> = log
        .iter()
        .filter(|e| e["hook_event_name"] == "PreToolUse")
        .collect();
    assert_eq!(pre.len(), 2, "{log:?}");
    assert_eq!(pre[0]["tool_name"], "Bash");
    assert_eq!(pre[0]["tool_input"]["command"], "rm -rf data");
    assert!(pre[0]["tool_use_id"].is_string());
    // The blocked call has no PostToolUse; the one that ran has its output.
    let post: Vec<&Value> = log
        .iter()
        .filter(|e| e["hook_event_name"] == "PostToolUse")
        .collect();
    assert_eq!(post.len(), 1, "{log:?}");
    assert_eq!(post[0]["tool_input"]["command"], "echo ok > done.txt");
    assert!(post[0]["tool_response"].is_string(), "{}", post[0]);
    assert_eq!(
        log.last().unwrap()["last_assistant_message"],
        "all done",
        "{log:?}"
    );
}

#[tokio::test]
async fn a_hook_past_its_timeout_is_killed_and_blocks_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let tables = format!(
        "[[hooks.PreToolUse]]\n[[hooks.PreToolUse.hooks]]\ntype = \"command\"\n\
         command = \"echo $$ > '{}'; exec sleep 30\"\ntimeout = 1\n",
        pid_file.display()
    );
    let env = env_with_tables(
        MockScript::turns([shell("echo ran > done.txt"), MockTurn::text("done")]),
        &tables,
    )
    .await;
    let out = env
        .run(&[&["exec", "--json"], FULL, &["go"]].concat())
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // A failed hook blocks nothing: the call ran.
    assert_eq!(read(&env.work().join("done.txt")), "ran\n");
    let warned = warnings(&out);
    assert!(
        warned
            .iter()
            .any(|w| w.contains("did not finish within 1 s and was stopped")),
        "{warned:?}"
    );
    // The hook's process is gone: killed at its timeout, not left to sleep.
    let pid: i32 = read(&pid_file)
        .trim()
        .parse()
        .expect("the hook wrote its pid");
    // SAFETY: kill(2) with signal 0 only checks that the process exists.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    assert!(!alive, "hook process {pid} still runs");
}

#[tokio::test]
async fn a_projects_hooks_wait_for_the_project_config_to_be_accepted() {
    let env = TestEnv::new(MockScript::always(MockTurn::text("done")), WireApi::Chat).await;
    let work = env.work();
    let marks = work.join("marks.txt");
    std::fs::create_dir_all(work.join(".openinterpreter")).unwrap();
    std::fs::create_dir_all(work.join("tools")).unwrap();
    std::fs::write(
        work.join("tools/mark.sh"),
        format!("echo ran >> '{}'\n", marks.display()),
    )
    .unwrap();
    let project_config = work.join(".openinterpreter/config.toml");
    std::fs::write(
        &project_config,
        "[[hooks.SessionStart]]\n[[hooks.SessionStart.hooks]]\ntype = \"command\"\ncommand = \"sh tools/mark.sh\"\n",
    )
    .unwrap();
    let out = env.run(&["trust"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));

    // Trusted but not accepted: refused, and the hook did not run.
    let out = env.run(&["exec", "go"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("runs SessionStart hook `sh tools/mark.sh` outside the sandbox"),
        "{err}"
    );
    assert!(err.contains("--accept-project-config"), "{err}");
    assert!(!marks.exists(), "an unaccepted project hook ran");

    // Accepted: it runs.
    let out = env.run(&["exec", "--accept-project-config", "go"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(read(&marks), "ran\n");

    // The script it runs is pinned: changed, the acceptance no longer holds.
    std::fs::write(work.join("tools/mark.sh"), "echo changed\n").unwrap();
    let out = env.run(&["exec", "go"]).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("tools/mark.sh"), "{err}");
    assert_eq!(read(&marks), "ran\n", "the changed script ran");
}

/// The fenced blocks of `lang` in docs/hooks.md's section `heading`, in order.
fn section_blocks(heading: &str, lang: &str) -> Vec<String> {
    let doc = doc();
    let start = doc.find(&format!("\n## {heading}")).expect("section");
    let section = &doc[start + 1..];
    let section = &section[..section[3..].find("\n## ").map_or(section.len(), |i| i + 3)];
    section
        .split(&format!("```{lang}\n"))
        .skip(1)
        .map(|b| b[..b.find("```").expect("block end")].to_string())
        .collect()
}

/// Writes the section's scripts (each `python` block to the hooks folder under the name its
/// `toml` names) and returns its `toml`, with `~/.openinterpreter` made the test's home.
fn docs_section_config(home: &Path, heading: &str, scripts: &[&str]) -> String {
    let hooks_dir = home.join("hooks");
    std::fs::create_dir_all(&hooks_dir).unwrap();
    for (name, text) in scripts.iter().zip(section_blocks(heading, "python")) {
        std::fs::write(hooks_dir.join(name), text).unwrap();
    }
    section_blocks(heading, "toml")
        .concat()
        .replace("~/.openinterpreter", &home.display().to_string())
}

#[tokio::test]
async fn the_docs_session_start_hooks_give_the_model_context_in_its_first_request() {
    let env = env_with_tables(MockScript::always(MockTurn::text("ok")), "").await;
    let home = env.home.path().canonicalize().unwrap();
    let tables = docs_section_config(&home, "Context at the start", &["branch.py"]);
    let config = format!(
        "{}\n{tables}\n",
        env.mock.config_toml("mock", WireApi::Chat)
    );
    std::fs::write(home.join("config.toml"), config).unwrap();

    let out = env
        .run(&[&["exec", "--json"], FULL, &["which package manager?"]].concat())
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 1);
    let text = reqs[0].all_text();
    // Plain text, and the JSON form's additionalContext (the work dir is no git branch).
    assert!(
        text.contains("In this repository use pnpm, never npm."),
        "{text}"
    );
    assert!(
        text.contains("The current git branch is (not a git branch)."),
        "{text}"
    );
    assert!(!text.contains("hookSpecificOutput"), "{text}");
    // What the user typed is still the user's message.
    assert_eq!(
        reqs[0].last_user_text().as_deref(),
        Some("which package manager?")
    );
    // Both runs are told, inside the turn, with the context they gave.
    let completed: Vec<Value> = events(&out)
        .into_iter()
        .filter(|e| e["msg"]["type"] == "hook_completed")
        .map(|e| e["msg"].clone())
        .collect();
    assert_eq!(completed.len(), 2, "{completed:?}");
    for run in &completed {
        assert_eq!(run["event_name"], "sessionStart", "{run}");
        assert_eq!(run["status"], "completed", "{run}");
        assert_eq!(run["entries"][0]["kind"], "context", "{run}");
        assert!(run["turn_id"].is_string(), "{run}");
    }
}

#[tokio::test]
async fn a_failing_session_start_hook_adds_no_context_and_warns() {
    let tables = "[[hooks.SessionStart]]\n[[hooks.SessionStart.hooks]]\ntype = \"command\"\n\
                  command = \"echo secret-context; exit 3\"\n";
    let env = env_with_tables(MockScript::always(MockTurn::text("ok")), tables).await;
    let out = env
        .run(&[&["exec", "--json"], FULL, &["go"]].concat())
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let reqs = env.mock.requests();
    assert!(!reqs[0].all_text().contains("secret-context"));
    let warned = warnings(&out);
    assert!(
        warned
            .iter()
            .any(|w| w.contains("SessionStart hook") && w.contains("exited with 3")),
        "{warned:?}"
    );
}

/// A logger of `Stop` events next to `tables`.
fn with_stop_log(tables: &str, log: &Path) -> String {
    format!(
        "[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\n\
         command = \"(cat; echo) >> '{}'\"\n\n{tables}",
        log.display()
    )
}

#[tokio::test]
async fn the_docs_stop_hook_sends_the_model_back_until_the_changelog_exists() {
    let env = env_with_tables(
        MockScript::turns([
            MockTurn::text("fixed the bug"),
            shell("echo '- fixed the bug' > CHANGELOG.md"),
            MockTurn::text("fixed the bug and wrote the changelog"),
        ]),
        "",
    )
    .await;
    let home = env.home.path().canonicalize().unwrap();
    let stops = home.join("stops.jsonl");
    let tables = with_stop_log(
        &docs_section_config(&home, "Keep working", &["changelog.py"]),
        &stops,
    );
    let config = format!(
        "{}\n{tables}\n",
        env.mock.config_toml("mock", WireApi::Chat)
    );
    std::fs::write(home.join("config.toml"), config).unwrap();

    let out = env.run(&[&["exec"], FULL, &["fix the bug"]].concat()).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The hook sent the model back once: it wrote the file, and its final answer is printed.
    assert_eq!(read(&env.work().join("CHANGELOG.md")), "- fixed the bug\n");
    assert_eq!(
        stdout(&out).trim(),
        "fixed the bug and wrote the changelog",
        "{}",
        stderr(&out)
    );
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 3);
    let sent_back = reqs[1].last_user_text().unwrap_or_default();
    assert!(
        sent_back.contains("CHANGELOG.md is missing: add it with one line about your change"),
        "{sent_back}"
    );
    // Two Stop events: the second one knows a Stop hook is already at work.
    let log = jsonl(&stops);
    let active: Vec<&Value> = log.iter().map(|e| &e["stop_hook_active"]).collect();
    assert_eq!(active, [&json!(false), &json!(true)], "{log:?}");
    assert_eq!(log[0]["last_assistant_message"], "fixed the bug");
    assert_eq!(log[0]["turn_id"], log[1]["turn_id"]);
}

#[tokio::test]
async fn a_stop_hook_that_always_blocks_ends_the_turn_after_three_continuations() {
    let dir = tempfile::tempdir().unwrap();
    let stops = dir.path().join("stops.jsonl");
    let tables = with_stop_log(
        "[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\n\
         command = \"echo 'never done' >&2; exit 2\"\n",
        &stops,
    );
    let env = env_with_tables(MockScript::always(MockTurn::text("done")), &tables).await;
    let out = env
        .run(&[&["exec", "--json"], FULL, &["go"]].concat())
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    // The first answer, then three more after being sent back; then the turn ended.
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 4);
    for r in &reqs[1..] {
        let sent_back = r.last_user_text().unwrap_or_default();
        assert!(sent_back.contains("never done"), "{sent_back}");
    }
    let log = jsonl(&stops);
    let active: Vec<&Value> = log.iter().map(|e| &e["stop_hook_active"]).collect();
    assert_eq!(
        active,
        [&json!(false), &json!(true), &json!(true), &json!(true)]
    );
    let warned = warnings(&out);
    assert!(
        warned
            .iter()
            .any(|w| w.contains("Stop hook blocked") && w.contains("3 times")),
        "{warned:?}"
    );
    let done = events(&out)
        .into_iter()
        .find(|e| e["msg"]["type"] == "task_complete")
        .expect("task_complete");
    assert_eq!(done["msg"]["last_agent_message"], "done");
}

#[tokio::test]
async fn a_resumed_thread_runs_session_start_again_with_source_resume() {
    let tables = "[[hooks.SessionStart]]\n[[hooks.SessionStart.hooks]]\ntype = \"command\"\n\
                  command = \"python3 -c 'import json, sys; print(\\\"started by \\\" + json.load(sys.stdin)[\\\"source\\\"])'\"\n";
    let env = env_with_tables(MockScript::always(MockTurn::text("ok")), tables).await;
    let out = env.run(&["exec", "--json", "first"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let thread_id = events(&out)
        .iter()
        .find(|e| e["msg"]["type"] == "session_configured")
        .and_then(|e| e["msg"]["session_id"].as_str().map(str::to_string))
        .expect("session_configured");
    let out = env.run(&["resume", &thread_id, "second"]).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 2);
    assert!(reqs[0].all_text().contains("started by startup"));
    // The context is the session's, not the history's: the resumed one has its own only.
    let resumed = reqs[1].all_text();
    assert!(resumed.contains("started by resume"), "{resumed}");
    assert!(!resumed.contains("started by startup"), "{resumed}");
    assert_eq!(reqs[1].last_user_text().as_deref(), Some("second"));
}
