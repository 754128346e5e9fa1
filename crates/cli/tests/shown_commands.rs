//! A shell command the model writes as its answer instead of calling the shell (issue 43,
//! item 2: the real tier's 1.5B model did it in four of nine unfinished runs of the everyday
//! bench), end to end through `interpreter exec` and the mock model: taken as the call when
//! the answer leaves the task unfinished, under the same approval policy as any call, and
//! never for a question's answer that shows a command to the user. Judged by the directory.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use common::*;
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockScript, MockTurn};

fn providers_doc() -> String {
    read(&std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/providers.md"))
}

/// The mock model under the one-tool `minimal` harness, answering with `turns`.
async fn minimal(turns: impl IntoIterator<Item = MockTurn>) -> TestEnv {
    TestEnv::with_config(
        MockScript::turns(turns),
        WireApi::Chat,
        "harness = \"minimal\"\n",
    )
    .await
}

fn exec<'a>(prompt: &'a str, approval: &'a str) -> Vec<&'a str> {
    vec!["exec", "-s", "workspace-write", "-a", approval, prompt]
}

/// The implement-function task of the real-model bench.
const IMPLEMENT: &str =
    "Implement the function is_palindrome in text_utils.py so that test_text_utils.py passes.";

/// Runs [`IMPLEMENT`] with `text_utils.py` holding the unimplemented function and
/// `test_text_utils.py` holding `test`.
async fn implement(env: &TestEnv, test: &str) -> std::process::Output {
    std::fs::write(
        env.work().join("text_utils.py"),
        "def is_palindrome(text):\n    raise NotImplementedError\n",
    )
    .unwrap();
    std::fs::write(env.work().join("test_text_utils.py"), test).unwrap();
    env.run(&exec(IMPLEMENT, "never")).await
}

/// The recorded make-dirs run: the command in a bash fence, not called. It runs, and the
/// model's next answer ends the turn with the folders made.
#[tokio::test]
async fn a_command_written_in_a_fence_for_a_change_request_is_run() {
    let env = minimal([
        MockTurn::text("```bash\nmkdir logs data tmp\n```"),
        MockTurn::text("I made the folders logs, data and tmp."),
    ])
    .await;
    let out = env
        .run(&exec(
            "Make three directories: logs, data and tmp.",
            "never",
        ))
        .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    for dir in ["logs", "data", "tmp"] {
        assert!(env.work().join(dir).is_dir(), "{dir} missing; {err}");
    }
    assert_eq!(
        stdout(&out).trim(),
        "I made the folders logs, data and tmp."
    );
    let warning = "[warning] the model wrote a command in its answer instead of calling `bash`; running it as that call";
    assert!(err.contains(warning), "{err}");
    // docs/providers.md shows the warning as it is printed.
    assert!(providers_doc().contains(warning));
    // The model saw the command's result as the output of its call.
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 2);
    let second = serde_json::to_string(&reqs[1].items()).unwrap();
    assert!(second.contains("mkdir logs data tmp"), "{second}");
    assert!(second.contains("\"role\":\"tool\""), "{second}");
}

/// The recorded search-tree run: a pseudo call `bash "grep …"` as the answer to a question
/// about where a function lives. It runs, and the answer that names the file ends the turn.
#[tokio::test]
async fn a_pseudo_call_answering_a_question_is_run() {
    // The pseudo call of round 3, and round 6's plain fence holding a command that reads.
    for shown in [
        "```\nbash \"grep -rln 'def load_settings' .\"\n```",
        "```bash\ngrep -rln 'def load_settings' .\n```",
    ] {
        a_question_answered_with(shown).await;
    }
}

async fn a_question_answered_with(shown: &str) {
    let env = minimal([
        MockTurn::text(shown),
        MockTurn::text("`app/settings.py` defines load_settings."),
    ])
    .await;
    std::fs::create_dir_all(env.work().join("app")).unwrap();
    std::fs::write(
        env.work().join("app/settings.py"),
        "def load_settings():\n    return {}\n",
    )
    .unwrap();
    let out = env
        .run(&exec(
            "Which file defines the function load_settings?",
            "never",
        ))
        .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let reqs = env.mock.requests();
    assert_eq!(reqs.len(), 2, "{err}");
    let second = serde_json::to_string(&reqs[1].items()).unwrap();
    assert!(
        second.contains("./app/settings.py"),
        "the grep ran: {second}"
    );
}

/// Shown to answer "how do I…", a command is the answer: nothing runs.
#[tokio::test]
async fn a_command_shown_to_answer_a_how_question_is_not_run() {
    let env = minimal([MockTurn::text("Run this:\n```bash\ntouch marker.txt\n```")]).await;
    let out = env
        .run(&exec(
            "How do I create an empty file named marker.txt?",
            "never",
        ))
        .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(!env.work().join("marker.txt").exists());
    assert!(stdout(&out).contains("touch marker.txt"));
    assert_eq!(env.mock.requests().len(), 1);
}

/// The command goes through the approval policy like any call: under `untrusted` with no
/// one to ask, a writing command is refused and nothing is made; after the refusal nothing
/// more is taken from the answers (the user's decision is not worked around), so the
/// model's next answer, showing the command, is what the user gets.
#[tokio::test]
async fn a_command_taken_from_an_answer_is_approved_like_any_call() {
    let env = minimal([
        MockTurn::text("```bash\nmkdir logs data tmp\n```"),
        MockTurn::text("```bash\nmkdir logs data tmp\n```"),
        MockTurn::text("```bash\nmkdir logs data tmp\n```"),
        MockTurn::text("```bash\nmkdir logs data tmp\n```"),
        MockTurn::text("```bash\nmkdir logs data tmp\n```"),
    ])
    .await;
    let out = env
        .run(&exec(
            "Make three directories: logs, data and tmp.",
            "untrusted",
        ))
        .await;
    let err = stderr(&out);
    assert!(!env.work().join("logs").exists(), "{err}");
    assert!(
        err.contains("needs approval; nobody can approve in exec mode, so it is denied"),
        "{err}"
    );
    assert_eq!(err.matches("running it as that call").count(), 1, "{err}");
    assert_eq!(env.mock.requests().len(), 2, "{err}");
    assert!(stdout(&out).contains("mkdir logs data tmp"));
}

/// A model that keeps writing its command as text gets it run a bounded number of times,
/// then the usual notes, then the turn fails: it never loops.
#[tokio::test]
async fn commands_taken_from_answers_are_bounded() {
    let turns: Vec<MockTurn> = (0..12)
        .map(|i| MockTurn::text(format!("```bash\necho try{i} >> tries.txt\n```")))
        .collect();
    let env = minimal(turns).await;
    let out = env
        .run(&exec(
            "Make three directories: logs, data and tmp.",
            "never",
        ))
        .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    let tries = std::fs::read_to_string(env.work().join("tries.txt")).unwrap();
    assert_eq!(tries.lines().count(), 3, "{tries}");
}

/// The recorded implement-function run (round 5): a correct function shown in a python
/// block, no call. It is written over the file's function of that name (the rest of the
/// file kept), the model runs the test, and the turn ends with the test passing.
#[tokio::test]
async fn a_function_shown_for_the_named_file_is_written_into_it() {
    let shown = "To implement it:\n\n```python\ndef is_palindrome(text):\n    t = text.replace(\" \", \"\").lower()\n    return t == t[::-1]\n```\n\nThis compares the text with its reverse.";
    let env = minimal([
        MockTurn::text(shown),
        MockTurn::tool_call(
            "bash",
            serde_json::json!({"command": "python3 test_text_utils.py"}),
        ),
        MockTurn::text("is_palindrome is implemented and the test passes."),
    ])
    .await;
    std::fs::write(
        env.work().join("text_utils.py"),
        "def is_palindrome(text):\n    raise NotImplementedError\n\n\ndef shout(text):\n    return text.upper()\n",
    )
    .unwrap();
    std::fs::write(
        env.work().join("test_text_utils.py"),
        "from text_utils import is_palindrome\nassert is_palindrome('Never odd or even')\nassert not is_palindrome('abc')\n",
    )
    .unwrap();
    let out = env.run(&exec(IMPLEMENT, "never")).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(
        read(&env.work().join("text_utils.py")),
        "def is_palindrome(text):\n    t = text.replace(\" \", \"\").lower()\n    return t == t[::-1]\n\n\ndef shout(text):\n    return text.upper()\n"
    );
    let warning = "[warning] the model showed code for `is_palindrome` in its answer instead of writing it; writing it into `text_utils.py` with a `bash` call";
    assert!(err.contains(warning), "{err}");
    assert!(providers_doc().contains(warning));
    assert_eq!(env.mock.requests().len(), 3);
}

/// The recorded implement-function run of round 18: the model read the file, then answered
/// with the note's tags echoed around a correct `is_palindrome`. A note never holds a
/// function of the file, so the function is written; the test then passes.
#[tokio::test]
async fn a_function_shown_inside_a_parroted_note_is_written() {
    let parroted = "<environment_context>\n  <cwd>/tmp/work</cwd>\n</environment_context>\n<system_note>\nThe `is_palindrome` function is still not implemented. Here is the corrected implementation:\n\n```python\nfrom text_utils import is_palindrome\ndef is_palindrome(text):\n    return text == text[::-1]\n```\n\nNow run `python3 test_text_utils.py` again.\n</system_note>";
    let env = minimal([
        MockTurn::tool_call("bash", serde_json::json!({"command": "cat text_utils.py"})),
        MockTurn::text(parroted),
        MockTurn::tool_call(
            "bash",
            serde_json::json!({"command": "python3 test_text_utils.py"}),
        ),
        MockTurn::text("is_palindrome is implemented and the test passes."),
    ])
    .await;
    let out = implement(&env, "from text_utils import is_palindrome\nassert is_palindrome('noon')\nassert not is_palindrome('abc')\n").await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    // Written without the block's import of the file's own module.
    assert_eq!(
        read(&env.work().join("text_utils.py")),
        "def is_palindrome(text):\n    return text == text[::-1]\n"
    );
    assert!(
        err.contains(
            "the model showed code for `is_palindrome` in its answer instead of writing it"
        ),
        "{err}"
    );
    assert_eq!(env.mock.requests().len(), 4);
}

/// The recorded implement-function run of round 19: the function the request names called
/// as a tool. The note says it is the function to write and where, and the model writes it.
#[tokio::test]
async fn a_function_called_as_a_tool_is_named_as_the_function_to_write() {
    let call = "```json\n{\n  \"name\": \"is_palindrome\",\n  \"arguments\": {\n    \"text\": \"racecar\"\n  }\n}\n```";
    let write =
        "cat > text_utils.py <<'EOF'\ndef is_palindrome(text):\n    return text == text[::-1]\nEOF";
    let env = minimal([
        MockTurn::text(call),
        MockTurn::tool_call("bash", serde_json::json!({"command": write})),
        MockTurn::tool_call(
            "bash",
            serde_json::json!({"command": "python3 test_text_utils.py"}),
        ),
        MockTurn::text("is_palindrome is implemented and the test passes."),
    ])
    .await;
    let out = implement(
        &env,
        "from text_utils import is_palindrome\nassert is_palindrome('noon')\n",
    )
    .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let told = env.mock.requests()[1].body.to_string();
    assert!(
        told.contains("`is_palindrome` is not a tool: it is the function the request asks you to write. Write the whole new `text_utils.py` with `bash`."),
        "{told}"
    );
    assert_eq!(
        read(&env.work().join("text_utils.py")),
        "def is_palindrome(text):\n    return text == text[::-1]\n"
    );
}

/// Sent back because the named test still fails, the model is told it may answer with the
/// function in a python block; it does, the function is written, and the test passes.
#[tokio::test]
async fn the_note_on_an_unfinished_function_offers_a_python_block() {
    let env = minimal([
        MockTurn::tool_call(
            "bash",
            serde_json::json!({"command": "python3 test_text_utils.py"}),
        ),
        MockTurn::text("The test runs."),
        MockTurn::text("```python\ndef is_palindrome(text):\n    return text == text[::-1]\n```"),
        MockTurn::tool_call(
            "bash",
            serde_json::json!({"command": "python3 test_text_utils.py"}),
        ),
        MockTurn::text("is_palindrome is implemented and the test passes."),
    ])
    .await;
    let out = implement(
        &env,
        "from text_utils import is_palindrome\nassert is_palindrome('noon')\n",
    )
    .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let told = env.mock.requests()[2].body.to_string();
    let hint = "Or answer with the whole corrected `is_palindrome` function in a ```python block: it is written into `text_utils.py` for you.";
    assert!(told.contains(hint), "{told}");
    assert!(providers_doc().contains(hint));
    assert_eq!(
        read(&env.work().join("text_utils.py")),
        "def is_palindrome(text):\n    return text == text[::-1]\n"
    );
}

/// Code the agent writes for the model is tested at once: the tests the request names run
/// right after the write, so the model's next answer has their output in front of it and
/// can end the turn (recorded: a right function written, the test never run again).
#[tokio::test]
async fn a_written_function_is_tested_at_once() {
    let env = minimal([
        MockTurn::text("```python\ndef is_palindrome(text):\n    return text == text[::-1]\n```"),
        MockTurn::text("is_palindrome is implemented and the test passes."),
    ])
    .await;
    let out = implement(&env, "from text_utils import is_palindrome\nassert is_palindrome('noon')\nprint('palindromes pass')\n").await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(env.mock.requests().len(), 2);
    let told = env.mock.requests()[1].body.to_string();
    assert!(told.contains("palindromes pass"), "{told}");
}

/// The recorded implement-function run of this session: the model wrote over the test the
/// request says must pass (its import moved to the end), then wrote a right function. The
/// agent puts the test back as it was (byte for byte, here with no final line break) and
/// runs it; the task is done with the user's test intact.
#[tokio::test]
async fn a_test_the_request_keeps_is_put_back_and_run() {
    let test = "from text_utils import is_palindrome\nassert is_palindrome('noon')\nprint('palindromes pass')";
    let env = minimal([
        MockTurn::tool_call(
            "bash",
            serde_json::json!({"command": "echo -e 'assert is_palindrome(\"noon\")\nfrom text_utils import is_palindrome' > test_text_utils.py"}),
        ),
        MockTurn::tool_call(
            "bash",
            serde_json::json!({"command": "printf 'def is_palindrome(text):\\n    return text == text[::-1]\\n' > text_utils.py"}),
        ),
        MockTurn::text("is_palindrome is implemented."),
        MockTurn::text("is_palindrome is implemented and the test passes."),
    ])
    .await;
    let out = implement(&env, test).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(read(&env.work().join("test_text_utils.py")), test);
    let warning = "[warning] the model changed `test_text_utils.py`, which the request says must pass as it is; putting it back as it was and running it";
    assert!(err.contains(warning), "{err}");
    assert!(providers_doc().contains(warning));
    let told = env.mock.requests()[3].body.to_string();
    assert!(told.contains("palindromes pass"), "{told}");
}

/// Recorded implement-function runs of this session: the function written and its test
/// passing, the model then answered with its report in a `<system_note>` tag it never
/// closed, with the note's last words, or with a call of a tool that does not exist. The
/// report is the answer; the others are none, but the directory shows the task done, so the
/// turn ends. With the test failing, the echo still fails the turn.
#[tokio::test]
async fn an_answer_in_the_notes_form_after_checked_work_ends_the_turn() {
    let report = "<system_note>\nThe implementation of `is_palindrome` passes the tests.";
    let echo = "answer with only the call, with no explanation around it.";
    let stray_call =
        "```json\n{\"name\": \"text_utils.py\", \"arguments\": {\"text\": \"noon\"}}\n```";
    let cases = [
        (
            "text == text[::-1]",
            report,
            0,
            "The implementation of `is_palindrome` passes the tests.",
        ),
        ("text == text[::-1]", echo, 0, ""),
        ("False", echo, 1, echo),
        ("text == text[::-1]", stray_call, 0, ""),
    ];
    for (body, answer, code, printed) in cases {
        let shown = format!("```python\ndef is_palindrome(text):\n    return {body}\n```");
        let env = minimal([
            MockTurn::text(shown),
            MockTurn::text(answer),
            MockTurn::text(answer),
            MockTurn::text(answer),
            MockTurn::text(answer),
        ])
        .await;
        let out = implement(
            &env,
            "from text_utils import is_palindrome\nassert is_palindrome('noon')\n",
        )
        .await;
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(code), "{err}");
        assert_eq!(stdout(&out).trim(), printed, "{err}");
        let warning = "[warning] the model repeated the agent's note as its answer; the task checks out in the working directory, so the turn ends";
        assert_eq!(err.contains(warning), answer == echo && code == 0, "{err}");
        assert!(providers_doc().contains(warning));
        let warning = "[warning] the model answered with a call of `text_utils.py`, a tool that does not exist; the task checks out in the working directory, so the turn ends";
        assert_eq!(err.contains(warning), answer == stray_call, "{err}");
        assert!(providers_doc().contains(warning));
    }
}

/// Round 21's write-script run: asked for a script that does not exist, the model
/// announced it and was sent back with the offer of a python block; it answered with the
/// script between a `touch` and a `chmod` fence. The script is written as the new file. An
/// existing file is never written over whole.
#[tokio::test]
async fn a_new_file_shown_whole_is_written() {
    let request = "Write a Python script count.py that prints the numbers 1 to 5.";
    let shown = "You can create it:\n\n```\ntouch count.py\n```\n\nThen write:\n\n```\n#!/usr/bin/env python3\n\nfor i in range(1, 6):\n    print(i)\n```\n\nFinally:\n\n```\nchmod +x count.py\n```";
    let env = minimal([
        MockTurn::text("I will write the script count.py now."),
        MockTurn::text(shown),
        MockTurn::text("count.py prints the numbers 1 to 5."),
    ])
    .await;
    let out = env.run(&exec(request, "never")).await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(
        read(&env.work().join("count.py")),
        "#!/usr/bin/env python3\n\nfor i in range(1, 6):\n    print(i)\n"
    );
    let told = env.mock.requests()[1].body.to_string();
    let hint =
        "Or answer with the whole of `count.py` in a ```python block: it is written for you.";
    assert!(told.contains(hint), "{told}");
    assert!(providers_doc().contains(hint));
    let warning = "[warning] the model showed the code of `count.py` in its answer instead of writing it; writing it with a `bash` call";
    assert!(err.contains(warning), "{err}");
    assert!(providers_doc().contains(warning));

    // The same answer for a file that exists (and holds no function): nothing is written.
    let env = minimal([
        MockTurn::text(shown),
        MockTurn::text(shown),
        MockTurn::text(shown),
    ])
    .await;
    std::fs::write(env.work().join("count.py"), "print('mine')\n").unwrap();
    let out = env.run(&exec(request, "never")).await;
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(read(&env.work().join("count.py")), "print('mine')\n");
}

/// The recorded fix-typo run (round 15): the typo fixed with `sed -i`, then the function
/// shown as it was before the fix. That is a quote of the file, not a change: it is not
/// written back over the fix, and the test the request names passes.
#[tokio::test]
async fn a_function_shown_as_it_was_before_the_turn_is_not_written_back() {
    let original = "def greet(name):\n    return f\"Helo, {name}!\"\n";
    let quoted = format!("```python\n{original}```");
    let env = minimal([
        MockTurn::tool_call(
            "bash",
            serde_json::json!({"command": "sed -i 's/Helo/Hello/g' greet.py"}),
        ),
        MockTurn::text(quoted),
        MockTurn::text("The typo is fixed: greet.py says Hello."),
    ])
    .await;
    std::fs::write(env.work().join("greet.py"), original).unwrap();
    std::fs::write(
        env.work().join("test_greet.py"),
        "from greet import greet\nassert greet(\"Ada\") == \"Hello, Ada!\", greet(\"Ada\")\n",
    )
    .unwrap();
    let out = env
        .run(&exec(
            "Fix the typo in greet.py so that test_greet.py passes.",
            "never",
        ))
        .await;
    let err = stderr(&out);
    assert_eq!(
        read(&env.work().join("greet.py")),
        "def greet(name):\n    return f\"Hello, {name}!\"\n",
        "{err}"
    );
    assert!(!err.contains("showed code for"), "{err}");
    assert_eq!(out.status.code(), Some(0), "{err}");
}

/// The same command written again is not run again (recorded: a broken `awk` taken from
/// three answers in a row): the model gets the note saying what is missing instead.
#[tokio::test]
async fn the_same_command_written_again_runs_once() {
    let again = "```bash\necho once >> runs.txt\n```";
    let env = minimal([
        MockTurn::text(again),
        MockTurn::text(again),
        MockTurn::text(again),
        MockTurn::text(again),
    ])
    .await;
    let out = env
        .run(&exec(
            "Make three directories: logs, data and tmp.",
            "never",
        ))
        .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert_eq!(read(&env.work().join("runs.txt")), "once\n");
    assert_eq!(err.matches("running it as that call").count(), 1, "{err}");
    assert!(err.contains("the folder `logs` does not exist"), "{err}");
}

/// The recorded make-executable run (round 7): two JSON calls written in the answer, the
/// change and a check of it. Both run, in order, and the model answers from their output.
#[tokio::test]
async fn calls_written_as_json_run_in_order() {
    let answer = "To make `run.sh` executable, run:\n```json\n{\n  \"name\": \"bash\",\n  \"arguments\": {\"command\": \"chmod +x ./run.sh\"}\n}\n```\n\nTo verify that the script is executable, run:\n```json\n{\n  \"name\": \"bash\",\n  \"arguments\": {\"command\": \"test -x run.sh && echo runnable >> checks.txt\"}\n}\n```";
    let env = minimal([
        MockTurn::text(answer),
        MockTurn::text("run.sh is executable now."),
    ])
    .await;
    std::fs::write(env.work().join("run.sh"), "echo hi\n").unwrap();
    let out = env
        .run(&exec("Make the script run.sh executable.", "never"))
        .await;
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(0), "{err}");
    // The check ran after the change: the order held.
    assert_eq!(read(&env.work().join("checks.txt")), "runnable\n");
    assert!(
        err.contains("[warning] the model wrote calls in its answer instead of calling `bash`; running them as those calls"),
        "{err}"
    );
    assert_eq!(env.mock.requests().len(), 2);
}
