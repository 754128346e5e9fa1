//! Harness profiles through the engine and the mock model: each profile offers its own tools
//! and prompt, and every tool lands on the engine's primitives — files really written and
//! edited (judged on disk), commands really run, approvals asked and honoured, the sandbox
//! enforced, the rollout resumable under another profile.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

mod swe_agent;

use oi_core::{NewThread, StartTurn, Thread};
use oi_protocol::config_types::{AskForApproval, Harness, SandboxMode};
use oi_protocol::protocol::{Event, EventMsg, FileChange, Op, PlanStepStatus, ReviewDecision};
use oi_protocol::user_input::UserInput;
use oi_test_support::{MockModelServer, MockScript, MockTurn};
use serde_json::json;
use std::path::Path;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(60);

fn config(
    mock: &MockModelServer,
    home: &Path,
    harness: Harness,
    approval: AskForApproval,
    sandbox: SandboxMode,
) -> oi_config::Config {
    common::mock_config_with(
        mock,
        home,
        approval,
        sandbox,
        &format!("harness = \"{harness}\""),
    )
}

/// Runs one turn, answering every approval with `decision`; returns its events.
async fn turn(
    thread: &std::sync::Arc<Thread>,
    prompt: &str,
    decision: ReviewDecision,
) -> Vec<Event> {
    let mut turn = thread
        .start_turn(StartTurn::input(vec![UserInput::text(prompt)]))
        .await
        .unwrap();
    let mut out = Vec::new();
    while let Some(ev) = tokio::time::timeout(WAIT, turn.next())
        .await
        .expect("stuck")
    {
        match &ev.msg {
            EventMsg::ExecApprovalRequest(req) => thread
                .submit(Op::ExecApproval {
                    id: req.effective_approval_id().to_string(),
                    decision,
                })
                .await
                .map(|_| ())
                .unwrap(),
            EventMsg::ApplyPatchApprovalRequest(req) => thread
                .submit(Op::PatchApproval {
                    id: req.call_id.clone(),
                    decision,
                })
                .await
                .map(|_| ())
                .unwrap(),
            _ => {}
        }
        out.push(ev);
    }
    out
}

fn read(home: &Path, name: &str) -> Option<String> {
    std::fs::read_to_string(home.join(name)).ok()
}

fn commands(evs: &[Event]) -> Vec<Vec<String>> {
    evs.iter()
        .filter_map(|e| match &e.msg {
            EventMsg::ExecCommandEnd(end) => Some(end.command.clone()),
            _ => None,
        })
        .collect()
}

/// The tool calls of one profile that, run in order, create `notes.txt`, read it, edit it,
/// find it, search it, run a command over it and keep a todo list.
struct Profile {
    harness: Harness,
    tools: &'static [&'static str],
    /// A phrase only this profile's prompt has.
    prompt: &'static str,
    calls: Vec<(&'static str, serde_json::Value)>,
}

fn profiles() -> Vec<Profile> {
    vec![
        Profile {
            harness: Harness::ClaudeCode,
            tools: &["Bash", "Read", "Write", "Edit", "Glob", "Grep", "TodoWrite"],
            prompt: "Read a file before you Edit",
            calls: vec![
                (
                    "TodoWrite",
                    json!({"todos": [{"content": "write notes", "status": "in_progress", "activeForm": "writing"}]}),
                ),
                (
                    "Write",
                    json!({"file_path": "notes.txt", "content": "The apple is red.\nI like apple pie.\n"}),
                ),
                ("Read", json!({"file_path": "notes.txt"})),
                (
                    "Edit",
                    json!({"file_path": "notes.txt", "old_string": "apple", "new_string": "banana", "replace_all": true}),
                ),
                ("Glob", json!({"pattern": "**/*.txt"})),
                (
                    "Grep",
                    json!({"pattern": "banana", "output_mode": "content"}),
                ),
                ("Bash", json!({"command": "wc -l < notes.txt > count.txt"})),
            ],
        },
        Profile {
            harness: Harness::QwenCode,
            tools: &[
                "run_shell_command",
                "read_file",
                "write_file",
                "replace",
                "glob",
                "search_file_content",
                "list_directory",
                "todo_write",
            ],
            prompt: "read it with `read_file` first",
            calls: vec![
                (
                    "todo_write",
                    json!({"todos": [{"id": "1", "content": "write notes", "status": "in_progress"}]}),
                ),
                (
                    "write_file",
                    json!({"file_path": "notes.txt", "content": "The apple is red.\nI like apple pie.\n"}),
                ),
                ("read_file", json!({"absolute_path": "notes.txt"})),
                (
                    "replace",
                    json!({"file_path": "notes.txt", "old_string": "apple", "new_string": "banana", "expected_replacements": 2}),
                ),
                ("glob", json!({"pattern": "*.txt"})),
                ("search_file_content", json!({"pattern": "banana"})),
                ("list_directory", json!({"path": "."})),
                (
                    "run_shell_command",
                    json!({"command": "wc -l < notes.txt > count.txt"}),
                ),
            ],
        },
        Profile {
            harness: Harness::KimiCode,
            tools: &[
                "Shell",
                "ReadFile",
                "WriteFile",
                "StrReplaceFile",
                "Glob",
                "Grep",
                "SetTodoList",
            ],
            prompt: "Change files with `StrReplaceFile`",
            calls: vec![
                (
                    "SetTodoList",
                    json!({"todos": [{"title": "write notes", "status": "in_progress"}]}),
                ),
                (
                    "WriteFile",
                    json!({"path": "notes.txt", "content": "The apple is red.\n"}),
                ),
                (
                    "WriteFile",
                    json!({"path": "notes.txt", "content": "I like apple pie.\n", "mode": "append"}),
                ),
                (
                    "ReadFile",
                    json!({"path": "notes.txt", "line_offset": 1, "n_lines": 2}),
                ),
                (
                    "StrReplaceFile",
                    json!({"path": "notes.txt", "edit": [{"old": "apple is", "new": "banana is"}, {"old": "apple pie", "new": "banana pie"}]}),
                ),
                ("Glob", json!({"pattern": "*.txt", "directory": "."})),
                (
                    "Grep",
                    json!({"pattern": "banana", "output_mode": "content"}),
                ),
                (
                    "Shell",
                    json!({"command": "wc -l < notes.txt > count.txt", "timeout": 30}),
                ),
            ],
        },
        // Claude Code's tools under a prompt of a few lines.
        Profile {
            harness: Harness::ClaudeCodeBare,
            tools: &["Bash", "Read", "Write", "Edit", "Glob", "Grep", "TodoWrite"],
            prompt: "Do the user's task with your tools",
            calls: vec![
                (
                    "TodoWrite",
                    json!({"todos": [{"content": "write notes", "status": "in_progress", "activeForm": "writing"}]}),
                ),
                (
                    "Write",
                    json!({"file_path": "notes.txt", "content": "The apple is red.\nI like apple pie.\n"}),
                ),
                ("Read", json!({"file_path": "notes.txt"})),
                (
                    "Edit",
                    json!({"file_path": "notes.txt", "old_string": "apple", "new_string": "banana", "replace_all": true}),
                ),
                ("Glob", json!({"pattern": "**/*.txt"})),
                (
                    "Grep",
                    json!({"pattern": "banana", "output_mode": "content"}),
                ),
                ("Bash", json!({"command": "wc -l < notes.txt > count.txt"})),
            ],
        },
        // Z.AI's harness for GLM: Claude Code's tools, its own prompt.
        Profile {
            harness: Harness::Zcode,
            tools: &["Bash", "Read", "Write", "Edit", "Glob", "Grep", "TodoWrite"],
            prompt: "the way Z.AI's coding harness sets up GLM",
            calls: vec![
                (
                    "TodoWrite",
                    json!({"todos": [{"content": "write notes", "status": "in_progress", "activeForm": "writing"}]}),
                ),
                (
                    "Write",
                    json!({"file_path": "notes.txt", "content": "The apple is red.\nI like apple pie.\n"}),
                ),
                ("Read", json!({"file_path": "notes.txt"})),
                (
                    "Edit",
                    json!({"file_path": "notes.txt", "old_string": "apple", "new_string": "banana", "replace_all": true}),
                ),
                ("Glob", json!({"pattern": "**/*.txt"})),
                (
                    "Grep",
                    json!({"pattern": "banana", "output_mode": "content"}),
                ),
                ("Bash", json!({"command": "wc -l < notes.txt > count.txt"})),
            ],
        },
        Profile {
            harness: Harness::KimiCli,
            tools: &[
                "Shell",
                "ReadFile",
                "WriteFile",
                "StrReplaceFile",
                "Glob",
                "Grep",
                "SetTodoList",
            ],
            prompt: "in the manner of Moonshot's kimi-cli",
            calls: vec![
                (
                    "SetTodoList",
                    json!({"todos": [{"title": "write notes", "status": "in_progress"}]}),
                ),
                (
                    "WriteFile",
                    json!({"path": "notes.txt", "content": "The apple is red.\nI like apple pie.\n"}),
                ),
                ("ReadFile", json!({"path": "notes.txt"})),
                (
                    "StrReplaceFile",
                    json!({"path": "notes.txt", "edit": {"old": "apple", "new": "banana", "replace_all": true}}),
                ),
                ("Glob", json!({"pattern": "*.txt"})),
                (
                    "Grep",
                    json!({"pattern": "banana", "output_mode": "content"}),
                ),
                ("Shell", json!({"command": "wc -l < notes.txt > count.txt"})),
            ],
        },
        Profile {
            harness: Harness::DeepseekTui,
            tools: &[
                "exec_shell",
                "read_file",
                "write_file",
                "edit_file",
                "list_dir",
                "grep_files",
                "file_search",
                "checklist_write",
            ],
            prompt: "the way DeepSeek's terminal harness does",
            calls: vec![
                (
                    "checklist_write",
                    json!({"todos": [{"content": "write notes", "status": "in_progress"}]}),
                ),
                (
                    "write_file",
                    json!({"path": "notes.txt", "content": "The apple is red.\nI like apple pie.\n"}),
                ),
                ("read_file", json!({"path": "notes.txt"})),
                (
                    "edit_file",
                    json!({"path": "notes.txt", "search": "apple is", "replace": "banana is"}),
                ),
                (
                    "edit_file",
                    json!({"path": "notes.txt", "search": "apple pie", "replace": "banana pie"}),
                ),
                ("file_search", json!({"query": "notes"})),
                ("grep_files", json!({"pattern": "banana"})),
                ("list_dir", json!({"path": "."})),
                (
                    "exec_shell",
                    json!({"command": "wc -l < notes.txt > count.txt", "timeout_ms": 30000}),
                ),
            ],
        },
    ]
}

#[tokio::test]
async fn every_profile_tool_runs_on_the_engine_primitives() {
    for p in profiles() {
        let home = tempfile::tempdir().unwrap();
        let mut script = Vec::new();
        for (name, args) in &p.calls {
            script.push(MockTurn::text("").with_tool_call(*name, args.clone()));
        }
        script.push(MockTurn::text("done"));
        let mock = MockModelServer::start(MockScript::turns(script))
            .await
            .unwrap();
        let m = common::manager(false);
        let new = m
            .start_thread(config(
                &mock,
                home.path(),
                p.harness,
                AskForApproval::OnRequest,
                SandboxMode::WorkspaceWrite,
            ))
            .await
            .unwrap();
        let evs = turn(&new.thread, "make notes", ReviewDecision::Denied).await;
        let h = p.harness;

        // Offered: exactly the profile's tools; told: its prompt.
        let first = &mock.requests()[0];
        assert_eq!(first.tool_names(), p.tools, "{h}");
        assert!(first.all_text().contains(p.prompt), "{h}: prompt");
        assert!(
            !first.all_text().contains("*** Begin Patch"),
            "{h}: the codex prompt leaked"
        );

        // Judged on disk.
        assert_eq!(
            read(home.path(), "notes.txt").as_deref(),
            Some("The banana is red.\nI like banana pie.\n"),
            "{h}"
        );
        assert_eq!(
            read(home.path(), "count.txt")
                .map(|c| c.trim().to_string())
                .as_deref(),
            Some("2"),
            "{h}"
        );

        // File changes are patches with real diffs; reads are commands.
        let diffs: Vec<String> = evs
            .iter()
            .filter_map(|e| match &e.msg {
                EventMsg::PatchApplyEnd(end) if end.success => Some(
                    end.changes
                        .values()
                        .map(|c| match c {
                            FileChange::Update { unified_diff, .. } => unified_diff.clone(),
                            FileChange::Add { content } => format!("+{content}"),
                            FileChange::Delete { .. } => "deleted".into(),
                        })
                        .collect::<String>(),
                ),
                _ => None,
            })
            .collect();
        assert!(
            diffs
                .iter()
                .any(|d| d.contains("-The apple is red.") && d.contains("+The banana is red.")),
            "{h}: {diffs:?}"
        );
        let cmds = commands(&evs);
        assert!(
            cmds.iter().any(|c| c[0] == "cat" || c[0] == "sed"),
            "{h}: {cmds:?}"
        );
        assert!(cmds.iter().any(|c| c[0] == "find"), "{h}: {cmds:?}");
        assert!(cmds.iter().any(|c| c[0] == "grep"), "{h}: {cmds:?}");
        let plan = evs.iter().find_map(|e| match &e.msg {
            EventMsg::PlanUpdate(p) => Some(p.clone()),
            _ => None,
        });
        let plan = plan.unwrap_or_else(|| panic!("{h}: no plan_update"));
        assert_eq!(plan.plan[0].step, "write notes");
        assert_eq!(plan.plan[0].status, PlanStepStatus::InProgress);

        // What the model saw: the read returned the file, the search found the line.
        let outputs: Vec<String> = mock
            .requests()
            .last()
            .unwrap()
            .tool_outputs()
            .into_iter()
            .map(|(_, o)| o)
            .collect();
        assert!(
            outputs.iter().any(|o| o.contains("I like apple pie.")),
            "{h}: {outputs:?}"
        );
        assert!(
            outputs
                .iter()
                .any(|o| o.contains("notes.txt:1:The banana is red.")),
            "{h}: {outputs:?}"
        );
        assert!(
            !evs.iter().any(|e| matches!(e.msg, EventMsg::Error(_))),
            "{h}: {evs:?}"
        );
        m.shutdown_all().await;
    }
}

#[tokio::test]
async fn profile_changes_and_commands_ask_and_a_denial_changes_nothing() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("notes.txt"), "keep me\n").unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        MockTurn::text("")
            .with_tool_call("Read", json!({"file_path": "notes.txt"}))
            .with_tool_call(
                "Edit",
                json!({"file_path": "notes.txt", "old_string": "keep", "new_string": "lose"}),
            )
            .with_tool_call("Write", json!({"file_path": "new.txt", "content": "x"}))
            .with_tool_call("Bash", json!({"command": "touch made.txt"})),
        MockTurn::text("tried"),
    ]))
    .await
    .unwrap();
    let m = common::manager(false);
    let new = m
        .start_thread(config(
            &mock,
            home.path(),
            Harness::ClaudeCode,
            AskForApproval::Untrusted,
            SandboxMode::WorkspaceWrite,
        ))
        .await
        .unwrap();
    let evs = turn(&new.thread, "change things", ReviewDecision::Denied).await;
    let patch_asks = evs
        .iter()
        .filter(|e| matches!(e.msg, EventMsg::ApplyPatchApprovalRequest(_)))
        .count();
    let exec_asks: Vec<Vec<String>> = evs
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::ExecApprovalRequest(r) => Some(r.command.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(patch_asks, 2, "Edit and Write each ask under untrusted");
    // The read is on the known read-only list; only the shell command asks.
    assert_eq!(
        exec_asks,
        [vec![
            "bash".to_string(),
            "-lc".into(),
            "touch made.txt".into()
        ]]
    );
    assert_eq!(read(home.path(), "notes.txt").as_deref(), Some("keep me\n"));
    assert!(read(home.path(), "new.txt").is_none());
    assert!(read(home.path(), "made.txt").is_none());
    let outputs = mock.requests()[1].tool_outputs();
    assert!(outputs[0].1.contains("keep me"), "{outputs:?}");
    assert!(outputs[1].1.contains("not applied"), "{outputs:?}");
    m.shutdown_all().await;
}

#[tokio::test]
async fn the_sandbox_holds_for_profile_tools() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        MockTurn::text("")
            .with_tool_call(
                "run_shell_command",
                json!({"command": "echo hi > shell.txt"}),
            )
            .with_tool_call(
                "write_file",
                json!({"file_path": "written.txt", "content": "x"}),
            ),
        MockTurn::text("tried"),
    ]))
    .await
    .unwrap();
    let m = common::manager(false);
    let new = m
        .start_thread(config(
            &mock,
            home.path(),
            Harness::QwenCode,
            AskForApproval::Never,
            SandboxMode::ReadOnly,
        ))
        .await
        .unwrap();
    turn(&new.thread, "write", ReviewDecision::Denied).await;
    assert!(
        read(home.path(), "shell.txt").is_none(),
        "the read-only sandbox let a command write"
    );
    assert!(
        read(home.path(), "written.txt").is_none(),
        "a write went around the sandbox"
    );
    let outputs = mock.requests()[1].tool_outputs();
    assert!(outputs[1].1.contains("No file was changed"), "{outputs:?}");
    m.shutdown_all().await;
}

#[tokio::test]
async fn an_edit_the_model_gets_wrong_explains_and_changes_nothing() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("a.txt"), "x = 1\nx = 1\n").unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        MockTurn::text("")
            .with_tool_call(
                "Edit",
                json!({"file_path": "a.txt", "old_string": "x = 1", "new_string": "x = 2"}),
            )
            .with_tool_call(
                "Edit",
                json!({"file_path": "a.txt", "old_string": "y = 1", "new_string": "x = 2"}),
            )
            .with_tool_call(
                "Edit",
                json!({"file_path": "missing.txt", "old_string": "a", "new_string": "b"}),
            ),
        MockTurn::text("gave up"),
    ]))
    .await
    .unwrap();
    let m = common::manager(false);
    let new = m
        .start_thread(config(
            &mock,
            home.path(),
            Harness::ClaudeCode,
            AskForApproval::Never,
            SandboxMode::WorkspaceWrite,
        ))
        .await
        .unwrap();
    turn(&new.thread, "edit", ReviewDecision::Denied).await;
    assert_eq!(
        read(home.path(), "a.txt").as_deref(),
        Some("x = 1\nx = 1\n")
    );
    let outputs = mock.requests()[1].tool_outputs();
    assert!(outputs[0].1.contains("appears 2 times"), "{outputs:?}");
    assert!(
        outputs[1].1.contains("was not found in a.txt"),
        "{outputs:?}"
    );
    assert!(outputs[2].1.contains("does not exist"), "{outputs:?}");
    m.shutdown_all().await;
}

#[tokio::test]
async fn a_thread_resumes_under_another_profile() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        MockTurn::text("")
            .with_tool_call("Write", json!({"file_path": "a.txt", "content": "one\n"})),
        MockTurn::text("wrote it"),
        MockTurn::text("").with_tool_call(
            "replace",
            json!({"file_path": "a.txt", "old_string": "one", "new_string": "two"}),
        ),
        MockTurn::text("changed it"),
    ]))
    .await
    .unwrap();
    let m = common::manager(true);
    let NewThread {
        thread, thread_id, ..
    } = m
        .start_thread(config(
            &mock,
            home.path(),
            Harness::ClaudeCode,
            AskForApproval::Never,
            SandboxMode::WorkspaceWrite,
        ))
        .await
        .unwrap();
    turn(&thread, "write a.txt", ReviewDecision::Denied).await;
    m.shutdown_all().await;
    drop(thread);

    let m = common::manager(true);
    let resumed = m
        .resume_thread(
            thread_id,
            config(
                &mock,
                home.path(),
                Harness::QwenCode,
                AskForApproval::Never,
                SandboxMode::WorkspaceWrite,
            ),
        )
        .await
        .unwrap();
    turn(&resumed.thread, "now change it", ReviewDecision::Denied).await;
    assert_eq!(read(home.path(), "a.txt").as_deref(), Some("two\n"));
    let third = &mock.requests()[2];
    assert!(
        third.tool_names().contains(&"replace".to_string()),
        "{:?}",
        third.tool_names()
    );
    // The earlier turn's Write call and its output are still in the history.
    assert!(
        third
            .function_calls()
            .iter()
            .any(|(_, name, _)| name == "Write")
    );
    m.shutdown_all().await;
}

/// `minimal`: one `bash` tool and a short prompt. Its command runs on the `shell` path (the
/// sandbox, approvals, `exec_command_*` events) and the file it writes is judged on disk.
#[tokio::test]
async fn the_minimal_profile_offers_one_shell_tool_that_runs_on_the_engine() {
    let home = tempfile::tempdir().unwrap();
    let script = MockScript::turns([
        MockTurn::text("").with_tool_call(
            "bash",
            json!({"command": "printf 'hi\\n' > hello.txt && wc -c < hello.txt"}),
        ),
        MockTurn::text("done"),
    ]);
    let mock = MockModelServer::start(script).await.unwrap();
    let m = common::manager(false);
    let new = m
        .start_thread(config(
            &mock,
            home.path(),
            Harness::Minimal,
            AskForApproval::OnRequest,
            SandboxMode::WorkspaceWrite,
        ))
        .await
        .unwrap();
    let evs = turn(&new.thread, "make hello.txt", ReviewDecision::Denied).await;
    let first = &mock.requests()[0];
    assert_eq!(first.tool_names(), ["bash"]);
    assert!(first.all_text().contains("You have one tool, `bash`"));
    assert!(!first.all_text().contains("*** Begin Patch"));
    assert_eq!(read(home.path(), "hello.txt").as_deref(), Some("hi\n"));
    let cmds = commands(&evs);
    assert_eq!(cmds.len(), 1, "{cmds:?}");
    let outputs = mock.requests().last().unwrap().tool_outputs();
    assert!(outputs[0].1.contains('3'), "{outputs:?}");
    assert!(
        !evs.iter().any(|e| matches!(e.msg, EventMsg::Error(_))),
        "{evs:?}"
    );
    m.shutdown_all().await;
}
