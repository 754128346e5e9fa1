//! `swe-agent`: SWE-agent's viewer and line-range editor on the engine. The open file and
//! its window are the session's (they carry from one turn to the next), every edit is a
//! patch with its diff and its approval, searches and `bash` are commands, and the task is
//! judged by the files left on disk.

use super::{commands, config, read, turn};
use crate::common;
use oi_protocol::config_types::{AskForApproval, Harness, SandboxMode};
use oi_protocol::protocol::{EventMsg, FileChange, ReviewDecision};
use oi_test_support::{MockModelServer, MockScript, MockTurn};
use serde_json::json;

const TOOLS: [&str; 12] = [
    "bash",
    "open",
    "goto",
    "scroll_down",
    "scroll_up",
    "create",
    "edit",
    "search_dir",
    "search_file",
    "find_file",
    "submit",
    "update_plan",
];

/// A 150-line module whose line 120 holds the bug.
fn module() -> String {
    (1..=150)
        .map(|i| match i {
            120 => "    return a - b  # the bug\n".to_string(),
            119 => "def add(a, b):\n".to_string(),
            _ => format!("# line {i}\n"),
        })
        .collect()
}

#[tokio::test]
async fn swe_agent_views_edits_and_searches_on_the_engine_primitives() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(home.path().join("pkg")).unwrap();
    std::fs::write(home.path().join("pkg/calc.py"), module()).unwrap();
    let script = MockScript::turns([
        // Turn 1: find the file, open it, move around, search it.
        MockTurn::text("")
            .with_tool_call("find_file", json!({"file_name": "calc.py"}))
            .with_tool_call("search_dir", json!({"search_term": "def add"}))
            .with_tool_call("open", json!({"path": "pkg/calc.py"}))
            .with_tool_call("scroll_down", json!({}))
            .with_tool_call("search_file", json!({"search_term": "the bug"})),
        MockTurn::text("found it"),
        // Turn 2: the open file carried over; go to the bug, fix it, write a test file.
        MockTurn::text("")
            .with_tool_call("goto", json!({"line_number": 120}))
            .with_tool_call(
                "edit",
                json!({"start_line": 120, "end_line": 120, "replacement_text": "    return a + b\n"}),
            )
            .with_tool_call("create", json!({"filename": "test_calc.py"}))
            .with_tool_call(
                "edit",
                json!({"start_line": 1, "end_line": 1, "replacement_text": "from pkg.calc import add\nassert add(2, 3) == 5\nprint('ok')\n"}),
            )
            .with_tool_call(
                "update_plan",
                json!({"plan": [{"step": "fix add", "status": "completed"}]}),
            )
            .with_tool_call("bash", json!({"command": "python3 test_calc.py > result.txt"}))
            .with_tool_call("submit", json!({})),
        MockTurn::text("Fixed `add` and checked it."),
    ]);
    let mock = MockModelServer::start(script).await.unwrap();
    let m = common::manager(false);
    let new = m
        .start_thread(config(
            &mock,
            home.path(),
            Harness::SweAgent,
            AskForApproval::OnRequest,
            SandboxMode::WorkspaceWrite,
        ))
        .await
        .unwrap();
    let first = turn(
        &new.thread,
        "fix add in pkg/calc.py",
        ReviewDecision::Denied,
    )
    .await;
    let second = turn(&new.thread, "now fix it", ReviewDecision::Denied).await;

    // Offered: SWE-agent's tools and `update_plan`; told: its prompt.
    let request = &mock.requests()[0];
    assert_eq!(request.tool_names(), TOOLS);
    assert!(request.all_text().contains("the way SWE-agent works"));
    assert!(!request.all_text().contains("*** Begin Patch"));

    // Judged on disk: the bug fixed in place, the rest of the file untouched, the new test
    // written and run.
    let fixed = read(home.path(), "pkg/calc.py").unwrap();
    let expected = module().replace("    return a - b  # the bug\n", "    return a + b\n");
    assert_eq!(fixed, expected);
    assert_eq!(
        read(home.path(), "test_calc.py").as_deref(),
        Some("from pkg.calc import add\nassert add(2, 3) == 5\nprint('ok')\n")
    );
    assert_eq!(
        read(home.path(), "result.txt")
            .map(|r| r.trim().to_string())
            .as_deref(),
        Some("ok")
    );

    // Searches are commands; views are not. The three read-only searches run alongside
    // each other, so they end in any order.
    let cmds = commands(&first);
    assert_eq!(cmds.len(), 3, "{cmds:?}");
    let on_file = |c: &Vec<String>| c.contains(&"pkg/calc.py".to_string());
    assert_eq!(
        cmds.iter().filter(|c| c[0] == "find").count(),
        1,
        "{cmds:?}"
    );
    assert_eq!(
        cmds.iter()
            .filter(|c| c[0] == "grep" && !on_file(c))
            .count(),
        1,
        "{cmds:?}"
    );
    assert_eq!(cmds.iter().filter(|c| on_file(c)).count(), 1, "{cmds:?}");

    // What the model saw in turn 1: the first window, the next one, the search.
    let outputs: Vec<String> = mock.requests()[1]
        .tool_outputs()
        .into_iter()
        .map(|(_, o)| o)
        .collect();
    assert!(outputs[0].contains("pkg/calc.py"), "{outputs:?}");
    assert!(outputs[1].contains("pkg/calc.py"), "{outputs:?}");
    assert!(
        outputs[2].starts_with("[File: pkg/calc.py (150 lines total)]\n1:# line 1\n")
            && outputs[2].ends_with("100:# line 100\n(50 more lines below)\n"),
        "{}",
        outputs[2]
    );
    assert!(
        outputs[3].contains("(50 more lines above)\n51:# line 51\n")
            && outputs[3].contains("150:# line 150\n"),
        "{}",
        outputs[3]
    );
    assert!(
        outputs[4].contains("120:    return a - b  # the bug"),
        "{}",
        outputs[4]
    );

    // Turn 2: `goto` used the file opened in turn 1; the edits are patches with real
    // diffs, shown back as the window; the plan is a plan update.
    // (The request holds the whole history: turn 1's five outputs come first.)
    let outputs: Vec<String> = mock.requests()[3]
        .tool_outputs()
        .into_iter()
        .skip(5)
        .map(|(_, o)| o)
        .collect();
    assert!(
        outputs[0].contains("120:    return a - b  # the bug"),
        "{}",
        outputs[0]
    );
    assert!(
        outputs[1].contains("120:    return a + b\n"),
        "{}",
        outputs[1]
    );
    assert!(
        outputs[2].contains("[File: test_calc.py (0 lines total)]"),
        "{}",
        outputs[2]
    );
    assert!(
        outputs[3].contains("[File: test_calc.py (3 lines total)]"),
        "{}",
        outputs[3]
    );
    assert!(outputs[6].contains("Submitted"), "{}", outputs[6]);
    let diffs: Vec<String> = second
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
            .any(|d| d.contains("-    return a - b  # the bug") && d.contains("+    return a + b")),
        "{diffs:?}"
    );
    assert!(
        second
            .iter()
            .any(|e| matches!(&e.msg, EventMsg::PlanUpdate(p) if p.plan[0].step == "fix add")),
        "no plan_update"
    );
    assert!(
        !first
            .iter()
            .chain(&second)
            .any(|e| matches!(e.msg, EventMsg::Error(_))),
        "{second:?}"
    );
    m.shutdown_all().await;
}

/// A line edit asks like any patch, and a denial leaves the file as it was; moving the
/// window without a file open, or past the end, says what to do instead.
#[tokio::test]
async fn swe_agent_edits_ask_and_a_denial_changes_nothing() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("a.txt"), "one\ntwo\n").unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        MockTurn::text("")
            .with_tool_call("goto", json!({"line_number": 1}))
            .with_tool_call(
                "edit",
                json!({"start_line": 1, "end_line": 1, "replacement_text": "x\n"}),
            )
            .with_tool_call("open", json!({"path": "a.txt"}))
            .with_tool_call("goto", json!({"line_number": 9}))
            .with_tool_call(
                "edit",
                json!({"start_line": 2, "end_line": 2, "replacement_text": "TWO\n"}),
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
            Harness::SweAgent,
            AskForApproval::Untrusted,
            SandboxMode::WorkspaceWrite,
        ))
        .await
        .unwrap();
    let evs = turn(&new.thread, "change a.txt", ReviewDecision::Denied).await;
    let asks = evs
        .iter()
        .filter(|e| matches!(e.msg, EventMsg::ApplyPatchApprovalRequest(_)))
        .count();
    assert_eq!(asks, 1, "the one edit of an open file asks");
    assert_eq!(read(home.path(), "a.txt").as_deref(), Some("one\ntwo\n"));
    let outputs = mock.requests()[1].tool_outputs();
    assert!(outputs[0].1.contains("No file is open"), "{outputs:?}");
    assert!(outputs[1].1.contains("No file is open"), "{outputs:?}");
    assert!(outputs[2].1.contains("1:one\n2:two\n"), "{outputs:?}");
    assert!(
        outputs[3].1.contains("line 9 is outside a.txt"),
        "{outputs:?}"
    );
    assert!(outputs[4].1.contains("not applied"), "{outputs:?}");
    m.shutdown_all().await;
}
