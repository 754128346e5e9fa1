//! The agent's own faults found on a real small model (issue 43 item 3), each against the
//! mock: a patch that would have replaced a file, a complete call not run because made-up
//! output followed it, argv lists with options around or inside them, and an answer that
//! loops until its output bound.

use crate::common;

use common::{errors, last_message, manager, run_op, user, warnings};
use oi_protocol::protocol::Event;
use oi_test_support::{MockModelServer, MockScript, MockTurn, RecordedRequest};
use serde_json::json;
use std::path::Path;

async fn run(home: &Path, script: MockScript, request: &str) -> (Vec<Event>, Vec<RecordedRequest>) {
    let mock = MockModelServer::start(script).await.unwrap();
    let cfg = common::load_unconfined(
        home,
        &mock.config_toml("mock", oi_protocol::config_types::WireApi::Chat),
    );
    let m = manager(false);
    let t = m.start_thread(cfg).await.unwrap();
    let evs = run_op(&t.thread, user(request)).await;
    m.shutdown_all().await;
    (evs, mock.requests())
}

#[tokio::test]
async fn an_add_file_patch_over_an_existing_file_is_refused_and_the_file_kept() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("notes.txt"), "first line\nsecond line\n").unwrap();
    let add = "*** Begin Patch\n*** Add File: notes.txt\n+third line\n*** End Patch";
    let update =
        "*** Begin Patch\n*** Update File: notes.txt\n@@\n second line\n+third line\n*** End Patch";
    let (evs, reqs) = run(
        home.path(),
        MockScript::turns([
            MockTurn::tool_call("apply_patch", json!({ "input": add })),
            MockTurn::tool_call("apply_patch", json!({ "input": update })),
            MockTurn::text("notes.txt ends with third line now."),
        ]),
        "Add the line 'third line' to notes.txt",
    )
    .await;
    assert!(errors(&evs).is_empty(), "{:?}", errors(&evs));
    // Before: exit 0 with the file holding only "third line".
    assert_eq!(
        std::fs::read_to_string(home.path().join("notes.txt")).unwrap(),
        "first line\nsecond line\nthird line\n",
        "the user's two lines are kept"
    );
    let outputs = reqs[1].tool_outputs();
    assert!(
        outputs[0].1.contains(
            "notes.txt already exists (2 lines), and '*** Add File: ' only creates new files"
        ),
        "{outputs:?}"
    );
}

#[tokio::test]
async fn a_complete_call_followed_by_made_up_output_is_run() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("secret.txt"), "token-9f8e7d\n").unwrap();
    let answer = "```json\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"cat\", \"secret.txt\"]}}\n```\n<tool_response>\n{\"output\": \"token-000000\"}\n</tool_response>\nThe secret is token-000000.";
    let (evs, reqs) = run(
        home.path(),
        MockScript::turns([
            MockTurn::text(answer),
            MockTurn::text("secret.txt says token-9f8e7d."),
        ]),
        "Run `cat secret.txt` and tell me exactly what it printed.",
    )
    .await;
    assert!(errors(&evs).is_empty(), "{:?}", errors(&evs));
    assert_eq!(reqs.len(), 2);
    let outputs = reqs[1].tool_outputs();
    assert_eq!(outputs.len(), 1, "the call ran");
    assert!(outputs[0].1.contains("token-9f8e7d"), "{outputs:?}");
    assert!(
        !reqs[1].all_text().contains("token-000000"),
        "the made-up output is not kept in the history"
    );
    assert_eq!(
        last_message(&evs).as_deref(),
        Some("secret.txt says token-9f8e7d.")
    );
}

#[tokio::test]
async fn argv_lists_with_options_around_or_inside_them_run() {
    let home = tempfile::tempdir().unwrap();
    std::fs::create_dir(home.path().join("src")).unwrap();
    std::fs::write(home.path().join("src/mark.txt"), "").unwrap();
    let (evs, reqs) = run(
        home.path(),
        MockScript::turns([
            MockTurn::tool_call_raw("shell", r#"{"command": ["ls", {"workdir": "src"}]}"#),
            MockTurn::tool_call_raw("shell", r#"{"command": ["ls", "-1", "workdir": "src"]}"#),
            MockTurn::tool_call_raw("shell", r#"["ls", "-1"], {"workdir": "src"}"#),
            MockTurn::text("src holds mark.txt."),
        ]),
        "List the files in src",
    )
    .await;
    assert!(errors(&evs).is_empty(), "{:?}", errors(&evs));
    let outputs = reqs[3].tool_outputs();
    assert_eq!(outputs.len(), 3);
    for (_, text) in &outputs {
        assert!(text.contains("mark.txt"), "{text}");
        assert!(!text.contains("untagged enum"), "{text}");
    }
}

#[tokio::test]
async fn a_looping_answer_is_stopped_and_the_loop_cut() {
    let home = tempfile::tempdir().unwrap();
    let looping = format!(
        "Here is the plan.\n{}",
        "I will now check the file again.\n".repeat(400)
    );
    let (evs, _) = run(
        home.path(),
        MockScript::turns([MockTurn::text(looping).chunked(16)]),
        "What does this project do?",
    )
    .await;
    let answer = last_message(&evs).unwrap();
    assert!(answer.len() < 200, "cut to one copy: {answer}");
    assert!(answer.starts_with("Here is the plan."), "{answer}");
    let warned = warnings(&evs);
    assert!(
        warned
            .iter()
            .any(|w| w.contains("started repeating itself")),
        "{warned:?}"
    );
    assert!(
        !warned.iter().any(|w| w.contains("output token limit")),
        "{warned:?}"
    );
}

#[tokio::test]
async fn a_written_call_of_a_command_runner_that_is_not_offered_runs_in_the_shell() {
    // Recorded on Qwen2.5-Coder-1.5B: `python` and `terminal` are not tools here; before,
    // the turn failed with "a tool that does not exist" and nothing ran.
    let home = tempfile::tempdir().unwrap();
    let python = "```json\n{\"name\": \"python\", \"arguments\": {\"code\": \"open('count.py', 'w').write('print(1)\\\\n')\"}}\n```";
    let terminal =
        "{\"name\": \"terminal\", \"arguments\": {\"command\": \"python3 count.py > out.txt\"}}";
    let (evs, reqs) = run(
        home.path(),
        MockScript::turns([
            MockTurn::text(python),
            MockTurn::text(terminal),
            MockTurn::text("count.py prints 1; its output is in out.txt."),
        ]),
        "Write count.py that prints 1, run it and save its output to out.txt.",
    )
    .await;
    assert!(errors(&evs).is_empty(), "{:?}", errors(&evs));
    assert_eq!(
        std::fs::read_to_string(home.path().join("count.py")).unwrap(),
        "print(1)\n"
    );
    assert_eq!(
        std::fs::read_to_string(home.path().join("out.txt")).unwrap(),
        "1\n"
    );
    assert_eq!(reqs.len(), 3, "one request per call and one for the answer");
}

#[tokio::test]
async fn a_note_ends_with_the_request_still_to_be_done() {
    // Recorded in rounds 15 to 17: the 1.5B model answered a note with its last sentence
    // ("answer with only the call, with no explanation around it."). The note now ends
    // with the request, which is what the model should go on with.
    let home = tempfile::tempdir().unwrap();
    let request = "Create hello.txt containing hi.";
    let (evs, reqs) = run(
        home.path(),
        MockScript::turns([
            MockTurn::text("I have created hello.txt."),
            MockTurn::tool_call(
                "shell",
                json!({"command": ["bash", "-lc", "echo hi > hello.txt"]}),
            ),
            MockTurn::text("hello.txt holds hi."),
        ]),
        request,
    )
    .await;
    assert!(errors(&evs).is_empty(), "{:?}", errors(&evs));
    assert_eq!(
        std::fs::read_to_string(home.path().join("hello.txt")).unwrap(),
        "hi\n"
    );
    let second = serde_json::to_string(&reqs[1].items()).unwrap();
    let note_end = format!("\\n\\nThe user's request, still to be done: {request}");
    let at = second.find(&note_end).unwrap_or_else(|| panic!("{second}"));
    assert!(
        second[..at].contains("no tool ran in this turn"),
        "the note says what went wrong first: {second}"
    );
}
