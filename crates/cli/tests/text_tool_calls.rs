//! Tool calls written as text, end to end through `interpreter exec` and the mock model:
//! JSON calls recovered from the answer, answers that hold a call nobody ran or claim work
//! no tool did (retried once, then the turn fails), `tool_call_format = "text"`, the output
//! bound every request carries, and shell operators given as argv words.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use common::*;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn, RecordedRequest};
use serde_json::{Value, json};

const BOTH: [WireApi; 2] = [WireApi::Chat, WireApi::Responses];
/// Commands run sandboxed in the workspace, without asking.
const WRITE: &[&str] = &["-s", "workspace-write", "-a", "never"];

/// The warning shown (once per session) when calls were recovered from the answer text.
const RECOVERED: &str = "tool calls arrived as plain text";

fn exec<'a>(extra: &[&'a str], prompt: &'a str) -> Vec<&'a str> {
    let mut v = vec!["exec"];
    v.extend_from_slice(WRITE);
    v.extend_from_slice(extra);
    v.push(prompt);
    v
}

/// A call as a small model writes it: a fenced JSON block.
fn fenced(name: &str, arguments: Value) -> String {
    format!(
        "```json\n{}\n```",
        json!({"name": name, "arguments": arguments})
    )
}

fn shell_script(script: &str) -> Value {
    json!({"command": ["bash", "-lc", script]})
}

/// The system prompt as sent: the chat system message, or Responses `instructions`.
fn system_prompt(req: &RecordedRequest) -> String {
    match req.wire_api() {
        WireApi::Chat => req
            .items()
            .iter()
            .find(|m| m["role"] == "system")
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_string(),
        WireApi::Responses => req.body["instructions"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
        WireApi::Messages => req.body["system"][0]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string(),
    }
}

/// `(role, text)` of every message in the request's history (text parts joined).
fn messages(req: &RecordedRequest) -> Vec<(String, String)> {
    req.items()
        .iter()
        .filter(|m| m.get("type").and_then(Value::as_str).unwrap_or("message") == "message")
        .map(|m| {
            let text = match &m["content"] {
                Value::String(s) => s.clone(),
                Value::Array(parts) => parts
                    .iter()
                    .filter_map(|p| p["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
                _ => String::new(),
            };
            (m["role"].as_str().unwrap_or_default().to_string(), text)
        })
        .collect()
}

/// The developer notes the engine added mid-history, as the chat wire carries them: user
/// messages wrapped in `<system_note>`.
fn system_notes(req: &RecordedRequest) -> Vec<String> {
    messages(req)
        .into_iter()
        .filter(|(role, text)| role == "user" && text.starts_with("<system_note>"))
        .map(|(_, text)| text)
        .collect()
}

/// The answer bound of a request: Chat `max_tokens`, Responses `max_output_tokens`.
fn output_bound(req: &RecordedRequest) -> Option<&Value> {
    match req.wire_api() {
        WireApi::Chat | WireApi::Messages => req.body.get("max_tokens"),
        WireApi::Responses => req.body.get("max_output_tokens"),
    }
}

// ------------------------------------------------------------ recovered JSON calls

#[tokio::test]
async fn a_fenced_json_call_as_the_whole_answer_is_run() {
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::text(fenced("shell", shell_script("echo one > one.txt"))),
            // The argv as a bare list, as small models write it: it goes under `command`.
            MockTurn::text(format!(
                "Next file.\n{}",
                fenced("shell", json!(["bash", "-lc", "echo two > two.txt"]))
            )),
            MockTurn::text("Both files are there."),
        ]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&exec(&[], "make two files")).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(stdout(&out).trim(), "Both files are there.");
    assert_eq!(read(&env.work().join("one.txt")), "one\n");
    assert_eq!(read(&env.work().join("two.txt")), "two\n");
    // Plain JSON is a shape no server parser catches: no warning blames the server's parser
    // (issue 43 item 5; template markup still warns, see `open_models` and `served_now`).
    assert_eq!(err.matches(RECOVERED).count(), 0, "{err}");

    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 3);
    // The recovered call goes back as a real call with its output as a `tool` message.
    let calls = reqs[1].function_calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].1, "shell");
    let args: Value = serde_json::from_str(&calls[0].2).unwrap();
    assert_eq!(args, shell_script("echo one > one.txt"));
    let tool_msgs: Vec<&Value> = reqs[1]
        .body
        .pointer("/messages")
        .and_then(Value::as_array)
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    assert_eq!(tool_msgs.len(), 1, "{}", reqs[1].body);
    assert_eq!(tool_msgs[0]["tool_call_id"], json!(calls[0].0));
    assert!(
        tool_msgs[0]["content"]
            .as_str()
            .unwrap()
            .contains("Exit code: 0"),
        "{}",
        tool_msgs[0]
    );
    // The bare list arrived as `{"command": [...]}`; the lead-in stayed as text.
    let calls = reqs[2].function_calls();
    assert_eq!(calls.len(), 2, "{calls:?}");
    let args: Value = serde_json::from_str(&calls[1].2).unwrap();
    assert_eq!(args, shell_script("echo two > two.txt"));
    assert!(
        messages(&reqs[2])
            .iter()
            .any(|(role, text)| role == "assistant" && text == "Next file."),
        "{:?}",
        messages(&reqs[2])
    );
    // Nothing was wrong with these answers: no retry note, tools still native.
    assert!(
        system_notes(&reqs[2]).is_empty(),
        "{:?}",
        messages(&reqs[2])
    );
    assert!(reqs[2].tool_names().contains(&"shell".to_string()));
}

#[tokio::test]
async fn two_fenced_calls_in_one_answer_run_in_order() {
    // The second call reads the first one's file; it has a raw newline inside a JSON string
    // and a trailing comma, as small models write them.
    let second = "```json\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"bash\", \"-lc\", \"cp a.txt b.txt\necho two >> b.txt\"]},}\n```";
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::text(format!(
                "I'll write both.\n\n{}\n\n{second}\n",
                fenced("shell", shell_script("echo one > a.txt"))
            )),
            MockTurn::text("done"),
        ]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&exec(&[], "two steps")).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(read(&env.work().join("a.txt")), "one\n");
    assert_eq!(read(&env.work().join("b.txt")), "one\ntwo\n");
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 2);
    let calls = reqs[1].function_calls();
    assert_eq!(calls.len(), 2, "{calls:?}");
    let outputs = reqs[1].tool_outputs();
    assert_eq!(
        outputs.iter().map(|o| o.0.clone()).collect::<Vec<_>>(),
        calls.iter().map(|c| c.0.clone()).collect::<Vec<_>>(),
        "outputs in call order"
    );
    for (_, text) in &outputs {
        assert!(text.contains("Exit code: 0"), "{text}");
    }
}

#[tokio::test]
async fn bare_and_tagged_json_calls_are_run_on_both_wires() {
    for wire in BOTH {
        let env = TestEnv::new(
            MockScript::turns([
                // Bare JSON, `"parameters"` instead of `"arguments"`.
                MockTurn::text(
                    json!({"name": "shell", "parameters": shell_script("echo bare > bare.txt")})
                        .to_string(),
                ),
                MockTurn::text(format!(
                    "<function_call>{}</function_call>",
                    json!({"name": "shell", "arguments": shell_script("echo tagged > tagged.txt")})
                )),
                MockTurn::text(format!(
                    "<tools>\n{}\n</tools>",
                    json!({"name": "shell", "arguments": shell_script("echo tools > tools.txt")})
                )),
                MockTurn::text("three files"),
            ]),
            wire,
        )
        .await;
        let out = env.run(&exec(&[], "three files")).await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{wire:?}: {err}");
        for (file, text) in [
            ("bare.txt", "bare\n"),
            ("tagged.txt", "tagged\n"),
            ("tools.txt", "tools\n"),
        ] {
            assert_eq!(read(&env.work().join(file)), text, "{wire:?} {file}");
        }
        assert_eq!(err.matches(RECOVERED).count(), 0, "{wire:?}: {err}");
        let reqs = env.mock.requests();
        assert_eq!(reqs.len(), 4, "{wire:?}");
        assert_eq!(reqs[3].function_calls().len(), 3, "{wire:?}");
        assert_eq!(reqs[3].tool_outputs().len(), 3, "{wire:?}");
    }
}

// ------------------------------------------------------------ no false success

/// An explanation: the call is followed by prose, so it is not a call to run.
fn explained_call() -> String {
    format!(
        "To create the file you would run:\n{}\nThis writes hi into c.txt.",
        fenced("shell", shell_script("echo hi > c.txt"))
    )
}

/// An explained call too broken to parse (its argv list is never closed): it names `shell`,
/// so it is a call nobody ran, and there is nothing to run.
fn broken_call() -> String {
    "To create the file you would run:\n```json\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"bash\", \"-lc\", \"echo hi > c.txt\"}}\n```\nThis writes hi into c.txt.".to_string()
}

/// A change request answered with its one call explained instead of made: the call runs
/// (as the note would have asked), under the approval policy like any call, and the turn
/// goes on. The same explanation answering a question is the answer, and nothing runs.
#[tokio::test]
async fn an_explained_call_runs_for_a_change_and_not_for_a_question() {
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::text(explained_call()),
            MockTurn::text("c.txt holds hi."),
        ]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&exec(&[], "create c.txt")).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(read(&env.work().join("c.txt")), "hi\n");
    assert!(
        err.contains("[warning] the model wrote a call in its answer instead of calling `shell`; running it as that call"),
        "{err}"
    );
    assert_eq!(env.mock.requests().len(), 2);

    let env = TestEnv::new(
        MockScript::turns([MockTurn::text(explained_call())]),
        WireApi::Chat,
    )
    .await;
    let out = env
        .run(&exec(&[], "How would I create c.txt with a tool call?"))
        .await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(!env.work().join("c.txt").exists());
    assert_eq!(env.mock.requests().len(), 1);
}

#[tokio::test]
async fn a_broken_call_inside_an_explanation_is_not_run_and_the_turn_fails_when_repeated() {
    for json_mode in [false, true] {
        let env = TestEnv::new(
            MockScript::turns([MockTurn::text(broken_call()), MockTurn::text(broken_call())]),
            WireApi::Chat,
        )
        .await;
        let extra: &[&str] = if json_mode { &["--json"] } else { &[] };
        let out = env.run(&exec(extra, "create c.txt")).await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "json {json_mode}: {err}");
        assert!(!env.work().join("c.txt").exists(), "the call must not run");

        let reqs = env.mock.requests();
        assert_eq!(reqs.len(), 2, "asked exactly once more");
        assert!(reqs[0].function_calls().is_empty());
        let notes = system_notes(&reqs[1]);
        assert_eq!(notes.len(), 1, "{:?}", messages(&reqs[1]));
        assert!(
            notes[0].contains("`shell` call written as text. It was NOT run"),
            "{}",
            notes[0]
        );
        assert!(notes[0].ends_with("</system_note>"), "{}", notes[0]);

        if json_mode {
            let evs = events(&out);
            let of_type = |t: &str| -> Vec<String> {
                evs.iter()
                    .filter(|e| e["msg"]["type"] == t)
                    .map(|e| e["msg"]["message"].as_str().unwrap_or_default().to_string())
                    .collect()
            };
            let warnings = of_type("warning");
            assert!(
                warnings
                    .iter()
                    .any(|w| w.contains("wrote a `shell` call inside its answer text")),
                "{warnings:?}"
            );
            let errors = of_type("error");
            assert_eq!(errors.len(), 1, "{errors:?}");
            assert!(
                errors[0].contains("`shell` call that was not run"),
                "{}",
                errors[0]
            );
            assert_eq!(
                event_types(&evs).last().map(String::as_str),
                Some("task_complete")
            );
        } else {
            assert!(
                err.contains("[warning] the model wrote a `shell` call inside its answer text"),
                "{err}"
            );
            assert!(
                err.contains("[error] the model's answer contains a `shell` call that was not run"),
                "{err}"
            );
        }
    }
}

#[tokio::test]
async fn a_call_of_a_tool_that_was_not_offered_is_not_run() {
    let call = fenced("write_file", json!({"path": "w.txt", "content": "hi"}));
    let env = TestEnv::new(
        MockScript::turns([MockTurn::text(call.clone()), MockTurn::text(call)]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&exec(&[], "write w.txt")).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!env.work().join("w.txt").exists());
    assert!(!err.contains(RECOVERED), "nothing was recovered: {err}");
    assert!(
        err.contains("a call of `write_file`, a tool that does not exist"),
        "{err}"
    );
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 2);
    let notes = system_notes(&reqs[1]);
    assert_eq!(notes.len(), 1, "{:?}", messages(&reqs[1]));
    assert!(
        notes[0].contains("There is no tool named `write_file`."),
        "{}",
        notes[0]
    );
    assert!(
        notes[0].contains("shell"),
        "the note lists the tools: {}",
        notes[0]
    );
}

#[tokio::test]
async fn a_false_claim_is_retried_and_a_real_call_then_finishes_the_task() {
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::text("I have created hello.txt."),
            MockTurn::tool_call("shell", shell_script("echo hi > hello.txt")),
            MockTurn::text("hello.txt now holds hi."),
        ]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&exec(&[], "create hello.txt")).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(read(&env.work().join("hello.txt")), "hi\n");
    assert_eq!(stdout(&out).trim(), "hello.txt now holds hi.");
    assert_eq!(
        err.matches("claims work (\"I have created hello.txt\")")
            .count(),
        1,
        "{err}"
    );
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 3);
    let notes = system_notes(&reqs[1]);
    assert_eq!(notes.len(), 1, "{:?}", messages(&reqs[1]));
    assert!(
        notes[0].contains(
            "Your last answer says \"I have created hello.txt\", but no tool ran in this turn"
        ),
        "{}",
        notes[0]
    );
    // The answer after the tool ran is not held against the turn.
    assert_eq!(system_notes(&reqs[2]).len(), 1);
}

/// `tool_call_format = "auto"` is documented to switch to text calls "when the model writes
/// calls that were not run" (docs/configuration.md, `ToolCallFormat::Auto`). A false claim
/// holds no call, so it is no sign that native calls fail.
#[tokio::test]
async fn a_false_claim_does_not_switch_to_text_calls() {
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::text("I have created hello.txt."),
            MockTurn::tool_call("shell", shell_script("echo hi > hello.txt")),
            MockTurn::text("hello.txt now holds hi."),
        ]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&exec(&[], "create hello.txt")).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("switching this session"), "{err}");
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 3);
    for r in &reqs {
        assert!(r.tool_names().contains(&"shell".to_string()), "{}", r.body);
    }
}

#[tokio::test]
async fn a_false_claim_made_again_fails_the_turn() {
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::text("I have created hello.txt."),
            MockTurn::text("I've created the file hello.txt for you!"),
        ]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&exec(&[], "create hello.txt")).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!env.work().join("hello.txt").exists());
    assert!(
        err.contains(
            "[error] the model's answer claims work (\"I've created the file hello.txt for you\")"
        ),
        "{err}"
    );
    assert_eq!(env.mock.requests().len(), 2);
}

#[tokio::test]
async fn a_plain_answer_without_tools_is_not_a_false_success() {
    // Control for the checks above: an answer that claims nothing and calls nothing ends
    // the turn at once, with no warning.
    let env = TestEnv::new(
        MockScript::turns([MockTurn::text(
            "I would create it with `echo hi > hello.txt`; say if you want me to.",
        )]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&exec(&[], "how would you do it?")).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!err.contains("[warning]"), "{err}");
    assert_eq!(env.mock.requests().len(), 1);
}

#[tokio::test]
async fn an_empty_answer_after_tools_ran_is_asked_for_once() {
    const NOTE: &str = "Your last answer was empty. If the task is done, say in one or two sentences what you did; otherwise continue with the next step.";
    // (the answers after the command, the request, exit code, stdout)
    let cases: [(Vec<MockTurn>, &str, i32, &str); 4] = [
        (
            vec![MockTurn::default(), MockTurn::text("Made e.txt.")],
            "make e.txt",
            0,
            "Made e.txt.",
        ),
        // Silent twice, but e.txt is there as the request says: the work stands.
        (
            vec![MockTurn::default(), MockTurn::default()],
            "make e.txt",
            0,
            "",
        ),
        // Recorded: the note repeated as the answer is no answer, and never printed.
        (
            vec![MockTurn::default(), MockTurn::text(NOTE)],
            "make e.txt",
            0,
            "",
        ),
        // Silent twice on a request that names nothing to check: a failure.
        (
            vec![MockTurn::default(), MockTurn::default()],
            "tidy up",
            1,
            "",
        ),
    ];
    for (script_tail, request, code, said) in cases {
        let mut turns = vec![MockTurn::tool_call("shell", shell_script("echo e > e.txt"))];
        turns.extend(script_tail);
        let env = TestEnv::new(MockScript::turns(turns), WireApi::Chat).await;
        let out = env.run(&exec(&[], request)).await;
        assert_eq!(out.status.code(), Some(code), "{request}: {}", stderr(&out));
        assert_eq!(read(&env.work().join("e.txt")), "e\n");
        let reqs = env.mock.requests();
        assert_eq!(reqs.len(), 3, "one more request after the empty answer");
        let notes = system_notes(&reqs[2]);
        assert_eq!(notes.len(), 1, "{:?}", messages(&reqs[2]));
        assert!(
            notes[0].contains("Your last answer was empty"),
            "{}",
            notes[0]
        );
        assert_eq!(stdout(&out).trim(), said, "{request}");
    }
}

// ------------------------------------------------------------ tool_call_format

const TEXT_CALL: &str = "<tool_call>\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"bash\", \"-lc\", \"echo hi > t.txt\"]}}\n</tool_call>";

#[tokio::test]
async fn text_format_describes_the_tools_in_the_prompt_and_sends_calls_back_as_text() {
    for wire in BOTH {
        let env = TestEnv::new(
            MockScript::turns([MockTurn::text(TEXT_CALL), MockTurn::text("t.txt made.")]),
            wire,
        )
        .await;
        let out = env
            .run(&exec(&["-c", "tool_call_format=\"text\""], "make t.txt"))
            .await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(0), "{wire:?}: {err}");
        assert_eq!(read(&env.work().join("t.txt")), "hi\n", "{wire:?}");
        assert_eq!(stdout(&out).trim(), "t.txt made.");

        let reqs = env.mock.requests();
        assert_eq!(reqs.len(), 2, "{wire:?}");
        for r in &reqs {
            assert!(r.body.get("tools").is_none(), "{wire:?}: {}", r.body);
        }
        let system = system_prompt(&reqs[0]);
        assert!(system.contains("# Calling tools"), "{system}");
        assert!(system.contains("<tools>\n"), "{system}");
        assert!(
            system.contains("{\"type\": \"function\", \"function\": {\"name\": \"shell\""),
            "{system}"
        );
        assert!(system.contains("<tool_call>"), "{system}");

        // The call and its output went back as text, not as structured items.
        assert!(reqs[1].function_calls().is_empty(), "{wire:?}");
        assert!(reqs[1].tool_outputs().is_empty(), "{wire:?}");
        let msgs = messages(&reqs[1]);
        let call = msgs
            .iter()
            .find(|(role, text)| role == "assistant" && text.contains("<tool_call>"))
            .unwrap_or_else(|| panic!("{wire:?}: no call as text in {msgs:?}"));
        let inner = call
            .1
            .split("<tool_call>\n")
            .nth(1)
            .and_then(|r| r.split("\n</tool_call>").next())
            .unwrap();
        let inner: Value = serde_json::from_str(inner).unwrap();
        assert_eq!(
            inner,
            json!({"name": "shell", "arguments": shell_script("echo hi > t.txt")})
        );
        let response = msgs
            .iter()
            .find(|(role, text)| role == "user" && text.starts_with("<tool_response>\n"))
            .unwrap_or_else(|| panic!("{wire:?}: no tool response in {msgs:?}"));
        assert!(response.1.contains("Exit code: 0"), "{}", response.1);
        assert!(response.1.ends_with("\n</tool_response>"), "{}", response.1);
    }
}

/// In text mode calls in the answer text are the format we asked for, so the warning that
/// "the server's tool-call parser is off" (with a server flag to fix it) is wrong there.
#[tokio::test]
async fn text_format_does_not_blame_the_server_parser() {
    let env = TestEnv::new(
        MockScript::turns([MockTurn::text(TEXT_CALL), MockTurn::text("t.txt made.")]),
        WireApi::Chat,
    )
    .await;
    let out = env
        .run(&exec(&["-c", "tool_call_format=\"text\""], "make t.txt"))
        .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(read(&env.work().join("t.txt")), "hi\n");
    assert!(!err.contains(RECOVERED), "{err}");
}

#[tokio::test]
async fn auto_switches_to_text_calls_after_an_unrun_call() {
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::text(broken_call()),
            MockTurn::text(
                "<tool_call>\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"bash\", \"-lc\", \"echo hi > c.txt\"]}}\n</tool_call>",
            ),
            MockTurn::text("c.txt made."),
        ]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&exec(&[], "create c.txt")).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(read(&env.work().join("c.txt")), "hi\n");
    assert_eq!(
        err.matches("switching this session to `tool_call_format = \"text\"`")
            .count(),
        1,
        "{err}"
    );
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 3);
    assert!(reqs[0].tool_names().contains(&"shell".to_string()));
    assert!(!system_prompt(&reqs[0]).contains("# Calling tools"));
    for r in &reqs[1..] {
        assert!(r.body.get("tools").is_none(), "{}", r.body);
        let system = system_prompt(r);
        assert!(system.contains("# Calling tools"), "{system}");
    }
    // The note speaks the new format.
    let notes = system_notes(&reqs[1]);
    assert!(
        notes
            .iter()
            .any(|n| n.contains("write the <tool_call> block itself")),
        "{notes:?}"
    );
}

#[tokio::test]
async fn native_format_does_not_switch_after_an_unrun_call() {
    let env = TestEnv::new(
        MockScript::turns([MockTurn::text(broken_call()), MockTurn::text(broken_call())]),
        WireApi::Chat,
    )
    .await;
    let out = env
        .run(&exec(
            &["-c", "tool_call_format=\"native\""],
            "create c.txt",
        ))
        .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(!err.contains("switching this session"), "{err}");
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 2);
    assert!(reqs[1].tool_names().contains(&"shell".to_string()));
    assert!(!system_prompt(&reqs[1]).contains("# Calling tools"));
}

// ------------------------------------------------------------ output bound

#[tokio::test]
async fn every_request_carries_the_output_bound() {
    for wire in BOTH {
        for (setting, want) in [
            (None, Some(json!(4096))),
            (Some("model_max_output_tokens=100"), Some(json!(100))),
            (Some("model_max_output_tokens=0"), None),
        ] {
            let env = TestEnv::new(
                MockScript::turns([
                    MockTurn::tool_call("shell", json!({"command": ["true"]})),
                    MockTurn::text("ok"),
                ]),
                wire,
            )
            .await;
            let mut extra = vec!["-c", "model_context_window=16384"];
            if let Some(s) = setting {
                extra.extend(["-c", s]);
            }
            let out = env.run(&exec(&extra, "go")).await;
            assert_eq!(
                out.status.code(),
                Some(0),
                "{wire:?} {setting:?}: {}",
                stderr(&out)
            );
            let reqs = env.mock.requests();
            assert_eq!(reqs.len(), 2);
            for r in &reqs {
                assert_eq!(output_bound(r), want.as_ref(), "{wire:?} {setting:?}");
                // Only the wire's own key.
                let other = match wire {
                    WireApi::Chat | WireApi::Messages => "max_output_tokens",
                    WireApi::Responses => "max_tokens",
                };
                assert!(r.body.get(other).is_none(), "{wire:?}: {}", r.body);
            }
        }
    }
}

// ------------------------------------------------------------ shell operators in argv

#[tokio::test]
async fn shell_operators_as_argv_words_run_through_bash() {
    let env = TestEnv::new(
        MockScript::turns([
            MockTurn::tool_call("shell", json!({"command": ["echo", "hi", ">", "out.txt"]})),
            MockTurn::tool_call(
                "shell",
                json!({"command": ["cat out.txt | tr a-z A-Z > up.txt"]}),
            ),
            MockTurn::text("done"),
        ]),
        WireApi::Chat,
    )
    .await;
    let out = env.run(&exec(&[], "write out.txt")).await;
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(read(&env.work().join("out.txt")), "hi\n");
    assert_eq!(read(&env.work().join("up.txt")), "HI\n");
    let outputs = env.mock.requests()[2].tool_outputs();
    assert_eq!(outputs.len(), 2);
    for (_, text) in &outputs {
        assert!(text.contains("Exit code: 0"), "{text}");
    }
}
