use super::*;
use serde_json::json;

fn tools() -> Vec<ToolSpec> {
    vec![ToolSpec {
        name: "shell".into(),
        description: String::new(),
        parameters: json!({"type":"object","properties":{"command":{"type":"array"}},"required":["command"]}),
    }]
}

fn ran(tool_ran_in_thread: bool) -> TurnSoFar<'static> {
    TurnSoFar {
        request: "do it",
        calls: Vec::new(),
        outputs: Vec::new(),
        tool_ran_in_thread,
        change_failed: false,
    }
}

#[test]
fn unrun_calls_are_found_with_whether_the_tool_exists() {
    assert_eq!(
        check(
            "Run it like this: {\"name\": \"shell\", \"arguments\": {\"command\": [\"ls\"]}} and see.",
            &tools(),
            &ran(true)
        ),
        Some(Unfinished::UnrunCall {
            name: "shell".into(),
            offered: true
        })
    );
    assert_eq!(
        check(
            "```json\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"a\"}}\n```",
            &tools(),
            &ran(false)
        ),
        Some(Unfinished::UnrunCall {
            name: "write_file".into(),
            offered: false
        })
    );
}

#[test]
fn claims_count_only_when_no_tool_ever_ran() {
    let answer = "I have created the file `hello.txt` with the content \"hi\". Let me know!";
    assert_eq!(
        check(answer, &tools(), &ran(false)),
        Some(Unfinished::Claim {
            quote: "I have created the file `hello.txt` with the content \"hi\"".into()
        })
    );
    assert_eq!(check(answer, &tools(), &ran(true)), None);
    assert_eq!(
        check("The file was successfully created.", &tools(), &ran(false)),
        Some(Unfinished::Claim {
            quote: "successfully created".into()
        })
    );
}

fn patch_tools() -> Vec<ToolSpec> {
    let mut t = tools();
    t.push(ToolSpec {
        name: "apply_patch".into(),
        description: String::new(),
        parameters: json!({"type":"object","properties":{"input":{"type":"string"}}}),
    });
    t
}

#[test]
fn an_answer_that_relays_a_failed_change_is_not_done() {
    // Recorded: Qwen2.5-Coder-1.5B under claude-code, after an Edit that matched twice.
    let answer = "To change all 2, send the call again with `\"replace_all\": true`; to change one, include more of its surrounding lines so it appears once. No file was changed.";
    let turn = TurnSoFar {
        request: "In notes.txt, replace the word apple with banana everywhere.",
        calls: vec![],
        outputs: vec![],
        tool_ran_in_thread: true,
        change_failed: false,
    };
    assert_eq!(
        check(answer, &patch_tools(), &turn),
        Some(Unfinished::GaveUpOnError)
    );
    // Once a change went through, a mention of an earlier failure is a recap.
    let turn = TurnSoFar {
        calls: vec![("Edit", "{}")],
        ..turn
    };
    assert_eq!(check(answer, &patch_tools(), &turn), None);
}

#[test]
fn a_failed_change_then_an_answer_is_not_done_however_it_is_worded() {
    // Recorded: Qwen2.5-Coder-1.5B under codex, after an apply_patch whose context line
    // matched nothing; the answer paraphrases the error and the run exited 0.
    let answer = "The patch was not applied because the `@@` line in the patch does not match any line in the file `notes.txt`.";
    let turn = TurnSoFar {
        request: "In notes.txt, replace the word apple with banana everywhere.",
        calls: vec![],
        outputs: vec![],
        tool_ran_in_thread: true,
        change_failed: true,
    };
    assert_eq!(
        check(answer, &patch_tools(), &turn),
        Some(Unfinished::GaveUpOnError)
    );
    // A question is answered, whatever failed on the way.
    let asked = TurnSoFar {
        request: "Why does this patch not apply to notes.txt?",
        ..turn
    };
    assert_eq!(check(answer, &patch_tools(), &asked), None);
}

#[test]
fn only_failed_file_changes_count_as_failed_changes() {
    use oi_protocol::models::{FunctionCallOutput, ResponseItem};
    let call = |id: &str, name: &str, args: &str| ResponseItem::FunctionCall {
        call_id: id.into(),
        name: name.into(),
        arguments: args.into(),
    };
    let out = |id: &str, ok: bool| ResponseItem::FunctionCallOutput {
        call_id: id.into(),
        output: FunctionCallOutput::text("x", ok),
    };
    let user = ResponseItem::user_text("fix the test");
    // A failing test run is work, not a failed change.
    let history = vec![
        user.clone(),
        call("a", "shell", r#"{"command":["python3","test_calc.py"]}"#),
        out("a", false),
    ];
    assert!(!TurnRecord::of_history(&history).change_failed);
    let history = vec![
        user,
        call("b", "apply_patch", r#"{"input":"*** Begin Patch"}"#),
        out("b", false),
    ];
    assert!(TurnRecord::of_history(&history).change_failed);
}

#[test]
fn a_question_answered_with_a_bare_path_names_the_path() {
    let q = "Which file in this project defines the function load_settings? Answer with the file's path.";
    // Recorded answers of Qwen2.5-Coder-1.5B that named files it never looked for.
    for (answer, path) in [
        ("`src/load_settings.ts`", "src/load_settings.ts"),
        (
            "```\n/tmp/x/work/load_settings.py\n```",
            "/tmp/x/work/load_settings.py",
        ),
        ("app/store/cache.py.", "app/store/cache.py"),
        // Round 21: the path in a made-up tag.
        (
            "<tools>/tmp/x/work/tools/build/steps.py</tools>",
            "/tmp/x/work/tools/build/steps.py",
        ),
    ] {
        assert_eq!(answered_path(answer, q).as_deref(), Some(path), "{answer}");
    }
    for answer in [
        "It is defined in `app/store/cache.py`.",
        "https://example.com/a.py",
        "Nothing defines it.",
    ] {
        assert_eq!(answered_path(answer, q), None, "{answer}");
    }
    // Only questions: a request to do something is judged by the other checks.
    assert_eq!(answered_path("`notes.txt`", "Create notes.txt"), None);
}

#[test]
fn a_question_answered_with_only_a_call_is_an_unrun_call() {
    let q = TurnSoFar {
        request: "Which file in this project defines the function load_settings?",
        calls: vec![],
        outputs: vec![],
        tool_ran_in_thread: false,
        change_failed: false,
    };
    let answer = "```json\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"grep\", \"-rl\", \"load_settings\", \".\"]}}\n```";
    assert_eq!(
        check(answer, &tools(), &q),
        Some(Unfinished::UnrunCall {
            name: "shell".into(),
            offered: true
        })
    );
    // Asked what a call looks like, quoting one is the answer.
    let how = TurnSoFar {
        request: "What does a shell tool call look like in JSON?",
        ..q
    };
    assert_eq!(check(answer, &tools(), &how), None);
}

#[test]
fn a_patch_in_the_answer_is_an_unrun_apply_patch() {
    // Recorded: the second turn of a resumed thread "used apply_patch" only in words.
    let answer = "To add a second line, I used the `apply_patch` function with the following input:\n```\n*** Begin Patch\n*** Update File: hello.txt\n@@ -1,1 +1,2 @@\n hi\n+bye\n*** End Patch\n```\nThis updated the file.";
    assert_eq!(
        check(answer, &patch_tools(), &ran(true)),
        Some(Unfinished::UnrunCall {
            name: "apply_patch".into(),
            offered: true
        })
    );
}

/// The skill trial without the skill: "record … in deploys.log" answered with a command in a
/// fence that nothing ran. "Record" asks for a change, so the shown command is not the end.
#[test]
fn a_command_shown_for_a_record_request_is_unfinished() {
    let turn = TurnSoFar {
        request: "Record the deploy of version 2.4.1 in deploys.log the way this team does it.",
        calls: vec![("shell", r#"{"command":["bash","-lc","ls"]}"#)],
        outputs: vec![],
        tool_ran_in_thread: true,
        change_failed: false,
    };
    let answer = "```bash\necho '2.4.1 deployed' >> deploys.log\n```";
    assert_eq!(
        check(answer, &patch_tools(), &turn),
        Some(Unfinished::WorkShown)
    );
}

#[test]
fn code_shown_for_a_requested_change_is_unfinished_unless_a_tool_wrote() {
    // Recorded: asked to write a script, the model answered with the script.
    let answer = "```python\n# count.py\nfor i in range(1, 6):\n    print(i)\n```";
    let request = "Write a Python script count.py that prints the numbers 1 to 5, one per line.";
    let turn = |calls: Vec<(&'static str, &'static str)>| TurnSoFar {
        request,
        calls,
        outputs: vec![],
        tool_ran_in_thread: true,
        change_failed: false,
    };
    assert_eq!(
        check(answer, &patch_tools(), &turn(vec![])),
        Some(Unfinished::WorkShown)
    );
    // Recorded: the test was run (a read), the fix only shown.
    assert_eq!(
        check(
            answer,
            &patch_tools(),
            &turn(vec![("shell", r#"{"command":["python3","test_calc.py"]}"#)])
        ),
        Some(Unfinished::WorkShown)
    );
    // A tool that writes ran: the code in the answer is a report.
    for call in [
        ("apply_patch", r#"{"input":"*** Begin Patch..."}"#),
        (
            "shell",
            r#"{"command":["bash","-lc","cat > count.py <<EOF"]}"#,
        ),
        ("mcp__fs__write_file", "{}"),
    ] {
        assert_eq!(
            check(answer, &patch_tools(), &turn(vec![call])),
            None,
            "{call:?}"
        );
    }
    // Questions and requests that change nothing may be answered with code.
    for request in [
        "How would I write a script that counts to 5?",
        "Show me a script that counts to 5",
        "Run the tests and tell me the output",
    ] {
        let t = TurnSoFar {
            request,
            calls: vec![],
            outputs: vec![],
            tool_ran_in_thread: true,
            change_failed: false,
        };
        assert_eq!(check(answer, &patch_tools(), &t), None, "{request}");
    }
}

#[test]
fn claimed_use_of_a_tool_that_did_not_run_is_unfinished() {
    // Recorded: only `shell` ran, the answer says apply_patch made the fix.
    let answer =
        "I ran the tests. I then used the `apply_patch` function to modify the `calc.py` file.";
    let turn = TurnSoFar {
        request: "Fix the bug",
        calls: vec![("shell", r#"{"command":["python3","test_calc.py"]}"#)],
        outputs: vec![],
        tool_ran_in_thread: true,
        change_failed: false,
    };
    assert!(matches!(
        check(answer, &patch_tools(), &turn),
        Some(Unfinished::Claim { .. })
    ));
    let turn = TurnSoFar {
        calls: vec![("apply_patch", "{}")],
        ..turn
    };
    assert_eq!(check(answer, &patch_tools(), &turn), None);
}

#[test]
fn quoted_calls_answer_a_question() {
    let answer = "They look like this:\n```json\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"rm\", \"x\"]}}\n```";
    for request in [
        "how do tool calls look?",
        "Show me a shell call",
        "What is a patch like",
    ] {
        let t = TurnSoFar {
            request,
            calls: vec![],
            outputs: vec![],
            tool_ran_in_thread: true,
            change_failed: false,
        };
        assert_eq!(check(answer, &patch_tools(), &t), None, "{request}");
    }
    // A request phrased as a question still asks for the work.
    let t = TurnSoFar {
        request: "Can you delete x?",
        calls: vec![],
        outputs: vec![],
        tool_ran_in_thread: true,
        change_failed: false,
    };
    assert!(matches!(
        check(answer, &patch_tools(), &t),
        Some(Unfinished::UnrunCall { .. })
    ));
}

#[test]
fn a_recap_of_a_call_that_ran_is_fine() {
    // Recorded: after a successful patch, the answer quotes it.
    let answer = "To create a file `hello.txt` containing the text `hi`, I used the `apply_patch` function with the following input:\n```\n*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\n```\nThis command added the text `hi` to the file `hello.txt`.";
    let turn = TurnSoFar {
        request: "Create a file hello.txt containing hi",
        calls: vec![("apply_patch", "{}")],
        outputs: vec![],
        tool_ran_in_thread: true,
        change_failed: false,
    };
    assert_eq!(check(answer, &patch_tools(), &turn), None);
    let json_recap = "I ran:\n```json\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"ls\"]}}\n```\nIt listed one file.";
    let turn = TurnSoFar {
        request: "List the files",
        calls: vec![("shell", r#"{"command":["ls"]}"#)],
        outputs: vec![],
        tool_ran_in_thread: true,
        change_failed: false,
    };
    assert_eq!(check(json_recap, &patch_tools(), &turn), None);
}

#[test]
fn an_output_asked_for_must_be_reported() {
    let turn = |answer_request: &'static str| TurnSoFar {
        request: answer_request,
        calls: vec![("shell", r#"{"command":["cat","secret.txt"]}"#)],
        outputs: vec!["token-1a2b3c4d\n"],
        tool_ran_in_thread: true,
        change_failed: false,
    };
    let asked = turn("Run the command `cat secret.txt` and tell me exactly what it printed.");
    // Recorded: the answer after running it.
    let vague = "To run the command `cat secret.txt` and get the output, you can use the following command:\n\n```bash\ncat secret.txt\n```";
    assert_eq!(
        check(vague, &patch_tools(), &asked),
        Some(Unfinished::OutputNotReported {
            output: "token-1a2b3c4d".into()
        })
    );
    assert_eq!(
        check("It printed `token-1a2b3c4d`.", &patch_tools(), &asked),
        None
    );
    // Not asked for: a summary is fine.
    assert_eq!(
        check(vague, &patch_tools(), &turn("Run cat secret.txt")),
        None
    );
}

#[test]
fn an_announcement_with_nothing_run_is_unfinished() {
    let turn = |calls: Vec<(&'static str, &'static str)>| TurnSoFar {
        request: "The test test_calc.py fails. Fix the bug in calc.py.",
        calls,
        outputs: vec![],
        tool_ran_in_thread: false,
        change_failed: false,
    };
    // Recorded: nothing ran.
    let answer = "I will run the command to execute `python3 test_calc.py` and fix the bug in `calc.py` as needed.";
    assert_eq!(
        check(answer, &patch_tools(), &turn(vec![])),
        Some(Unfinished::Announced)
    );
    assert_eq!(
        check("Let me look at it.", &patch_tools(), &turn(vec![])),
        Some(Unfinished::Announced)
    );
    // After work, "I'll" is about what is left, and words like "till" are no announcement.
    assert_eq!(
        check(answer, &patch_tools(), &turn(vec![("apply_patch", "{}")])),
        None
    );
    assert_eq!(
        check("It fails until the fix.", &patch_tools(), &turn(vec![])),
        None
    );
}

#[test]
fn no_change_after_a_note_is_told_apart() {
    let turn = |calls: Vec<(&'static str, &'static str)>| TurnSoFar {
        request: "Create a file hello.txt containing hi",
        calls,
        outputs: vec![],
        tool_ran_in_thread: true,
        change_failed: false,
    };
    assert!(made_no_change(&turn(vec![(
        "shell",
        r#"{"command":["bash","-lc","echo $SHELL"]}"#
    )])));
    assert!(!made_no_change(&turn(vec![("apply_patch", "{}")])));
    let question = TurnSoFar {
        request: "How do I create a file?",
        ..turn(vec![])
    };
    assert!(!made_no_change(&question));
}

#[test]
fn the_turn_record_keeps_this_turns_successful_calls_and_what_they_printed() {
    use oi_protocol::models::FunctionCallOutput;
    let call = |id: &str, name: &str| ResponseItem::FunctionCall {
        call_id: id.into(),
        name: name.into(),
        arguments: "{}".into(),
    };
    let out = |id: &str, text: &str, ok: bool| ResponseItem::FunctionCallOutput {
        call_id: id.into(),
        output: FunctionCallOutput::text(text, ok),
    };
    let history = vec![
        ResponseItem::user_text("earlier request"),
        call("a", "apply_patch"),
        out("a", "ok", true),
        ResponseItem::user_text("Run cat x and tell me what it printed"),
        call("b", "apply_patch"),
        out("b", "patch did not apply", false),
        call("c", "shell"),
        out(
            "c",
            "Exit code: 0\nWall time: 0.0 seconds\nOutput:\ntoken-1\n",
            true,
        ),
        ResponseItem::developer_text("a note"),
    ];
    let record = TurnRecord::of_history(&history);
    let view = record.view();
    assert_eq!(view.request, "Run cat x and tell me what it printed");
    assert_eq!(
        view.calls,
        [("shell", "{}")],
        "the failed patch does not count"
    );
    assert_eq!(view.outputs, ["token-1\n"]);
    assert!(view.tool_ran_in_thread);
}

#[test]
fn a_parroted_note_is_unfinished() {
    // Recorded: the 1.5B model answered the retry note with the note itself.
    let answer = "<system_note>\nYour last answer contains a `apply_patch` call written as text. It was NOT run: nothing happened. To run a tool, write the <tool_call> block itself";
    assert_eq!(
        check(answer, &tools(), &ran(true)),
        Some(Unfinished::Parroted)
    );
}

#[test]
fn the_tail_of_a_note_repeated_as_the_answer_is_a_parroted_note() {
    // Recorded in round 15 (read-then-write, twice): the answer was the end of the note.
    for answer in [
        "answer with only the call, with no explanation around it.",
        "answer with only the call, with no explanation around it. If you cannot, say plainly what was not done.",
        // edit-file: the note's start, then a command that only printed the file.
        "The task is not finished: `notes.txt` still contains `apple`; `notes.txt` does not contain `banana`. Finish it now with the tools (bash).\n\n```bash\nbash -c \"echo 'Exit Code: $?' && cat notes.txt\"\n```",
    ] {
        assert_eq!(
            check(answer, &tools(), &ran(true)),
            Some(Unfinished::Parroted),
            "{answer}"
        );
    }
}

/// Recorded in round 13: the task done, and the model's own answer wrapped in the notes'
/// tags. Its words are the answer; a wrapped copy of a note is still a parroted note.
#[test]
fn an_answer_wrapped_in_note_tags_is_its_own_words() {
    let wrapped = "<system_note>\nThe lines containing TODO have been deleted from notes.txt.\n</system_note>";
    let inner = without_note_wrapper(wrapped);
    assert_eq!(
        inner,
        "The lines containing TODO have been deleted from notes.txt."
    );
    assert_eq!(check(inner, &tools(), &ran(true)), None);
    let note = "<system_note>\nYour last answer contains a `shell` call written as text. It was NOT run: nothing happened.\n</system_note>";
    assert_eq!(
        check(without_note_wrapper(note), &tools(), &ran(true)),
        Some(Unfinished::Parroted)
    );
    // Recorded on implement-function runs: the closing tag never written, and the note's
    // context block echoed first.
    assert_eq!(without_note_wrapper("<system_note>\nhalf"), "half");
    assert_eq!(
        without_note_wrapper(
            "<environment_context>\n  <cwd>/tmp/w</cwd>\n</environment_context>\n<system_note>\nThe test passes.\n</system_note>"
        ),
        "The test passes."
    );
    // Not wrapped whole: left as it is.
    for answer in [
        "<system_note>\na\n</system_note>\nmore",
        "Done.\n<system_note>\na\n</system_note>",
        "<system_note>\n</system_note>",
    ] {
        assert_eq!(without_note_wrapper(answer), answer);
    }
}

#[test]
fn plain_answers_and_intentions_are_fine() {
    for answer in [
        "This repository is a parser for TOML files.",
        "I would create a file with `echo hi > hello.txt`.",
        "To fix it, I randomly picked nothing; here is the plan.",
        "Paris is the capital of France.",
    ] {
        assert_eq!(check(answer, &tools(), &ran(false)), None, "{answer}");
    }
    assert_eq!(
        check("I have created it.", &[], &ran(false)),
        None,
        "no tools"
    );
}

/// Recorded in round 14: `sed … && pytest test_greet.py` without pytest installed (exit 127)
/// is no run of the test; a run that found its program and failed is one.
#[test]
fn a_test_run_whose_program_was_missing_did_not_run_the_test() {
    use oi_protocol::models::FunctionCallOutput;
    let history = |exit: u8| {
        vec![
            ResponseItem::user_text("Fix the typo in greet.py so that test_greet.py passes."),
            ResponseItem::FunctionCall {
                call_id: "a".into(),
                name: "shell".into(),
                arguments: r#"{"command":["bash","-lc","sed -i 's/Helo/Hello/' greet.py && pytest test_greet.py"]}"#.into(),
            },
            ResponseItem::FunctionCallOutput {
                call_id: "a".into(),
                output: FunctionCallOutput::text(
                    format!("Exit code: {exit}\nWall time: 0.0 seconds\nOutput:\nx\n"),
                    false,
                ),
            },
        ]
    };
    assert_eq!(
        TurnRecord::of_history(&history(127)).unrun_tests(),
        ["test_greet.py"]
    );
    assert!(TurnRecord::of_history(&history(1)).unrun_tests().is_empty());
    // A question names no test to run.
    let mut question = history(127);
    question[0] = ResponseItem::user_text("Does test_greet.py pass?");
    assert!(TurnRecord::of_history(&question).unrun_tests().is_empty());
}
