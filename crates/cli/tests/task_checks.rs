//! The answer checks of issue 43 item 1, end to end through `interpreter exec` and the mock
//! model: an answer that claims a task the directory shows unfinished is sent back with what
//! is missing, then fails with the reason; an honest answer after a retry note is kept (a
//! question's answer succeeds, a change not made fails), and stdout always carries what the
//! model said.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use common::*;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn, RecordedRequest};
use serde_json::{Value, json};

const WRITE: &[&str] = &["-s", "workspace-write", "-a", "never"];

fn exec(prompt: &str) -> Vec<&str> {
    let mut v = vec!["exec"];
    v.extend_from_slice(WRITE);
    v.push(prompt);
    v
}

fn bash(script: &str) -> Value {
    json!({"command": ["bash", "-lc", script]})
}

/// The notes the engine added to the request (chat: user messages in `<system_note>`).
fn notes(req: &RecordedRequest) -> Vec<String> {
    req.items()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .filter(|t| t.starts_with("<system_note>"))
        .map(str::to_string)
        .collect()
}

#[tokio::test]
async fn a_script_claimed_executable_that_is_not_is_sent_back_then_finished() {
    let request = "Write a shell script greet.sh that prints hello, and make it executable.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", bash("printf 'echo hello\\n' > greet.sh")),
            // Recorded shape: the script written, the rest claimed.
            MockTurn::text("I created greet.sh and made it executable."),
            MockTurn::tool_call("shell", json!({"command": ["chmod", "+x", "greet.sh"]})),
            MockTurn::text("greet.sh prints hello and is executable."),
        ]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&exec(request)).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(
        stdout(&out).trim(),
        "greet.sh prints hello and is executable."
    );
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 4);
    let sent = notes(&reqs[2]);
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert!(
        sent[0].contains(
            "The task is not finished: `greet.sh` is not executable (it needs `chmod +x greet.sh`)"
        ),
        "{}",
        sent[0]
    );
    assert!(
        err.contains("[warning] the task is not finished: `greet.sh` is not executable"),
        "{err}"
    );
}

#[tokio::test]
async fn partial_work_claimed_done_fails_with_what_is_missing_and_prints_the_answer() {
    let request = "Create the directories logs, data and tmp.";
    let claim = "I have created the directories logs, data and tmp.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", json!({"command": ["mkdir", "logs"]})),
            MockTurn::text(claim),
            MockTurn::text(claim),
            MockTurn::text(claim),
        ]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&exec(request)).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(env.work().join("logs").is_dir());
    assert!(!env.work().join("data").exists());
    // The model's answer is on stdout; the reason on stderr.
    assert_eq!(stdout(&out).trim(), claim);
    assert!(
        err.contains("[error] the task is not done: the folder `data` does not exist; the folder `tmp` does not exist"),
        "{err}"
    );
    assert_eq!(
        env.mock.requests().len(),
        4,
        "two retries, then the turn fails"
    );
}

#[tokio::test]
async fn a_file_written_with_other_content_than_asked_is_not_done() {
    let request = "Create a file hello.txt containing the text 'hello world'.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", bash("echo 'print(\"hello\")' > hello.txt")),
            MockTurn::text("hello.txt now contains hello world."),
            MockTurn::tool_call("shell", bash("echo 'hello world' > hello.txt")),
            MockTurn::text("Fixed: hello.txt says hello world."),
        ]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&exec(request)).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(read(&env.work().join("hello.txt")), "hello world\n");
    let reqs = env.mock.requests();
    assert!(
        notes(&reqs[2])[0].contains("`hello.txt` does not contain `hello world`"),
        "{:?}",
        notes(&reqs[2])
    );
}

#[tokio::test]
async fn lines_said_deleted_that_are_still_there_are_not_done() {
    let request = "Delete the lines containing 'TODO' from notes.txt.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", json!({"command": ["cat", "notes.txt"]})),
            MockTurn::text("I deleted the TODO lines from notes.txt."),
            MockTurn::text("Done: the TODO lines are gone."),
            MockTurn::text("Done."),
        ]),
        WireApi::Chat,
    )
    .await;
    std::fs::write(env.work().join("notes.txt"), "keep\nTODO: one\nkeep too\n").unwrap();
    let out = env.run(&exec(request)).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        read(&env.work().join("notes.txt")),
        "keep\nTODO: one\nkeep too\n"
    );
    assert!(err.contains("`notes.txt` still contains `TODO`"), "{err}");
    assert!(!stdout(&out).trim().is_empty());
}

/// The regression of issue 43 item 1: after a retry note, an honest answer to a question
/// was failed with nothing on stdout.
#[tokio::test]
async fn a_questions_honest_answer_after_a_note_is_printed_and_succeeds() {
    let honest = "I cannot look up the weather here: there is no web search tool.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::text(
                "```json\n{\"name\": \"web_search\", \"arguments\": {\"query\": \"weather Paris\"}}\n```",
            ),
            MockTurn::text(honest),
        ]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&exec("What is the weather in Paris today?")).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(stdout(&out).trim(), honest);
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 2);
    assert!(notes(&reqs[1])[0].contains("There is no tool named `web_search`"));
}

#[tokio::test]
async fn a_change_not_made_after_a_note_fails_and_still_prints_the_answer() {
    let honest = "I could not create hello.txt: I do not have a file tool.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::text(
                "```json\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"hello.txt\", \"content\": \"hi\"}}\n```",
            ),
            MockTurn::text(honest),
        ]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&exec("Create hello.txt containing hi")).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(
        stdout(&out).trim(),
        honest,
        "what the model said is printed"
    );
    assert!(err.contains("[error]"), "{err}");
    assert!(!env.work().join("hello.txt").exists());
}

#[tokio::test]
async fn a_named_test_is_run_after_the_fix_before_the_answer_counts() {
    let request = "Fix the bug in calc.py so that test_calc.py passes.";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", bash("sed -i 's/a - b/a + b/' calc.py")),
            MockTurn::text("I fixed the bug in calc.py."),
            MockTurn::tool_call("shell", json!({"command": ["python3", "test_calc.py"]})),
            MockTurn::text("The test passes now."),
        ]),
        WireApi::Chat,
    )
    .await;
    std::fs::write(
        env.work().join("calc.py"),
        "def add(a, b):\n    return a - b\n",
    )
    .unwrap();
    std::fs::write(
        env.work().join("test_calc.py"),
        "from calc import add\nassert add(2, 3) == 5\nprint('ok')\n",
    )
    .unwrap();
    let out = env.run(&exec(request)).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 4);
    assert!(
        notes(&reqs[2])[0].contains("`test_calc.py` was not run to check the result"),
        "{:?}",
        notes(&reqs[2])
    );
}

/// Issue 43 item 3: "add" inside `test_add.py` is no request to change anything, so the
/// model's report with the test's output is the answer.
#[tokio::test]
async fn a_verb_inside_a_file_name_is_no_change_request() {
    let report = "test_add.py passes:\n```\nok\n```";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", json!({"command": ["python3", "test_add.py"]})),
            MockTurn::text(report),
        ]),
        WireApi::Chat,
    )
    .await;
    std::fs::write(env.work().join("test_add.py"), "print('ok')\n").unwrap();
    let out = env
        .run(&exec("Run test_add.py and tell me if it passes"))
        .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("[warning]"), "{err}");
    assert_eq!(env.mock.requests().len(), 2);
}
