use super::shown_command;
use oi_protocol::models::ToolSpec;
use serde_json::{Value, json};

/// The minimal harness's one tool: the command as a string.
fn bash() -> ToolSpec {
    ToolSpec {
        name: "bash".into(),
        description: "Runs a bash command.".into(),
        parameters: json!({
            "type": "object",
            "properties": {"command": {"type": "string"}},
            "required": ["command"]
        }),
    }
}

/// The built-in `shell`: the command as an argv array.
fn shell() -> ToolSpec {
    ToolSpec {
        name: "shell".into(),
        description: "Runs a command.".into(),
        parameters: json!({
            "type": "object",
            "properties": {"command": {"type": "array", "items": {"type": "string"}}},
            "required": ["command"]
        }),
    }
}

fn apply_patch() -> ToolSpec {
    ToolSpec {
        name: "apply_patch".into(),
        description: "Edits files.".into(),
        parameters: json!({"type": "object", "properties": {"input": {"type": "string"}}}),
    }
}

/// The command `shown_command` takes from the answer, as the tool's `command` argument.
fn taken(answer: &str, request: &str, tools: &[ToolSpec]) -> Option<Value> {
    let (name, args) = shown_command(answer, request, tools)?;
    let args: Value = serde_json::from_str(&args).unwrap();
    assert!(tools.iter().any(|t| t.name == name), "{name}");
    Some(args["command"].clone())
}

const MAKE_DIRS: &str = "Make three directories: logs, data and tmp.";
const WHERE: &str = "Which file defines the function load_settings?";

/// The answers recorded on the real tier (round 3 of the everyday bench), each of which
/// ended a change request or question with the command written instead of called.
#[test]
fn recorded_commands_written_as_text_are_taken_as_the_call() {
    let tools = [bash()];
    assert_eq!(
        taken("```bash\nmkdir logs data tmp\n```", MAKE_DIRS, &tools),
        Some(json!("mkdir logs data tmp"))
    );
    assert_eq!(
        taken(
            "To find it, search the tree:\n```bash\nbash \"grep -rn load_settings .\"\n```",
            WHERE,
            &tools
        ),
        Some(json!("grep -rn load_settings ."))
    );
    assert_eq!(
        taken(
            "bash \"sed -i '/TODO/d' notes.txt\"",
            "Delete every line containing TODO from notes.txt.",
            &tools
        ),
        Some(json!("sed -i '/TODO/d' notes.txt"))
    );
    // The shell's name copied in as the first line (recorded on make-executable).
    assert_eq!(
        taken(
            "```bash\nbash\nchmod +x run.sh\n```",
            "Make the script run.sh executable.",
            &tools
        ),
        Some(json!("chmod +x run.sh"))
    );
    // The shell's name before a command, in backticks, as the whole answer (round 5).
    assert_eq!(
        taken("`bash grep -rn load_settings .`", WHERE, &tools),
        Some(json!("grep -rn load_settings ."))
    );
    // A command that only reads as the whole answer, in backticks (round 16).
    assert_eq!(
        taken("`grep -rn load_settings .`", WHERE, &tools),
        Some(json!("grep -rn load_settings ."))
    );
    // One that writes, for a question, is not run; a name in backticks is no command.
    assert_eq!(taken("`rm -rf lib`", WHERE, &tools), None);
    assert_eq!(taken("`lib/io/files.py`", WHERE, &tools), None);
    // A fence of `bash -c "…"` that only reads, for a question (round 15).
    assert_eq!(
        taken(
            "```\nbash -c \"grep -rn load_settings .\"\n```",
            WHERE,
            &tools
        ),
        Some(json!("bash -c \"grep -rn load_settings .\""))
    );
    // One that writes is the user's to run.
    assert_eq!(
        taken("```\nbash -c \"sed -i s/a/b/ x.py\"\n```", WHERE, &tools),
        None
    );
    // Lead-in and a short trailer around the fence; `$ ` prompts dropped.
    assert_eq!(
        taken(
            "Here is the command:\n\n```sh\n$ chmod +x run.sh\n```\n\nThis makes it executable.",
            "Make run.sh executable.",
            &tools
        ),
        Some(json!("chmod +x run.sh"))
    );
}

#[test]
fn pseudo_calls_in_every_written_shape_give_one_command() {
    let tools = [bash()];
    let req = "Create hello.txt containing hi.";
    for (answer, want) in [
        ("bash('echo hi > hello.txt')", "echo hi > hello.txt"),
        ("bash: \"echo hi > hello.txt\"", "echo hi > hello.txt"),
        ("`bash \"echo hi > hello.txt\"`", "echo hi > hello.txt"),
        (
            "bash(command=\"echo hi > hello.txt\")",
            "echo hi > hello.txt",
        ),
        (
            "bash {\"command\": \"echo hi > hello.txt\"}",
            "echo hi > hello.txt",
        ),
        (
            "bash [\"bash\", \"-lc\", \"echo hi > hello.txt\"]",
            "echo hi > hello.txt",
        ),
        ("shell [\"touch\", \"my file.txt\"]", "touch 'my file.txt'"),
        // Round 22: double quotes inside, unescaped.
        (
            "bash \"echo \"Hello, $(cat name.txt)!\" > greeting.txt\"",
            "echo \"Hello, $(cat name.txt)!\" > greeting.txt",
        ),
    ] {
        assert_eq!(taken(answer, req, &tools), Some(json!(want)), "{answer}");
    }
}

/// A heredoc is content: its blank lines and `#` lines are kept as written.
#[test]
fn a_fence_is_run_as_written() {
    let script = "cat > count.py <<'EOF'\n#!/usr/bin/env python3\n\nimport sys\n# count lines\nprint(len(open(sys.argv[1]).readlines()))\nEOF\nchmod +x count.py";
    let answer = format!("```bash\n{script}\n```");
    assert_eq!(
        taken(
            &answer,
            "Write a script count.py that counts lines.",
            &[bash()]
        ),
        Some(json!(script))
    );
}

/// A whole JSON call of the shell in a shell fence is that call (recorded: run as a
/// script); in a JSON fence it is left to the written-calls path.
#[test]
fn a_json_call_in_a_shell_fence_runs_its_command() {
    let call = r#"{"name": "bash", "arguments": {"command": "python3 count.py"}}"#;
    let request = "Write a script count.py that prints 1 to 5.";
    assert_eq!(
        taken(&format!("```bash\n{call}\n```"), request, &[bash()]),
        Some(json!("python3 count.py"))
    );
    assert_eq!(
        taken(&format!("```json\n{call}\n```"), request, &[bash()]),
        None
    );
}

/// A command's fence followed by output the model made up for it: the command is taken
/// (recorded in round 8: a `grep` fence, then a bash fence of invented `grep` lines).
#[test]
fn a_fence_of_made_up_output_after_the_command_is_not_a_second_command() {
    let grep = "grep -rn load_settings .";
    for output in [
        "```bash\ngrep: can't open file\n```",
        "This prints:\n```\nlib/util/text.py:3:def load_settings():\n```\nSo it is there.",
        "```text\nlib/util/text.py:3:def load_settings():\n```",
    ] {
        let answer = format!("```bash\n{grep}\n```\n{output}");
        assert_eq!(
            taken(&answer, WHERE, &[bash()]),
            Some(json!(grep)),
            "{answer}"
        );
    }
    // A second block of commands or code, or a third block, is more than one command.
    for more in [
        "```bash\nls -la\n```",
        "```python\nprint(1)\n```",
        "```\n$ grep x .\n```",
        "```\na\n```\n```\nb\n```",
    ] {
        let answer = format!("```bash\n{grep}\n```\n{more}");
        assert_eq!(taken(&answer, WHERE, &[bash()]), None, "{answer}");
    }
}

/// The built-in `shell` takes an argv array: the command runs through `bash -lc`.
#[test]
fn an_argv_tool_gets_the_command_through_bash() {
    let tools = [shell(), apply_patch()];
    assert_eq!(
        taken("```bash\nmkdir logs data tmp\n```", MAKE_DIRS, &tools),
        Some(json!(["bash", "-lc", "mkdir logs data tmp"]))
    );
    assert_eq!(
        taken(
            "shell: [\"bash\", \"-lc\", \"sed -i 's/8000/8080/' config.toml\"]",
            "Change the port in config.toml to 8080.",
            &tools
        ),
        Some(json!(["bash", "-lc", "sed -i 's/8000/8080/' config.toml"]))
    );
}

/// What is not a command the model meant to run stays an answer.
#[test]
fn shown_code_that_is_no_command_is_left_alone() {
    let tools = [bash()];
    // A question's answer may show a command for the user to run: one that writes is left
    // alone; one that only reads is run (only ever when the answer was found unfinished).
    assert_eq!(
        taken(
            "```bash\ntouch marker.txt\n```",
            "How do I create marker.txt?",
            &tools
        ),
        None
    );
    assert_eq!(
        taken(
            "```bash\ngrep -rln 'def load_settings' .\n```",
            WHERE,
            &tools
        ),
        Some(json!("grep -rln 'def load_settings' ."))
    );
    for writes in [
        "find . -name '*.py' -delete",
        "sed -i 's/a/b/' f.py",
        "grep -rn x . > out.txt",
        "ls; rm -rf build",
        "cat $(touch x)",
    ] {
        let answer = format!("```bash\n{writes}\n```");
        assert_eq!(taken(&answer, WHERE, &tools), None, "{writes}");
    }
    // Another language, or no language and no command.
    assert_eq!(
        taken(
            "```python\nprint('hi')\n```",
            "Write hello.py that prints hi.",
            &tools
        ),
        None
    );
    assert_eq!(
        taken(
            "```\ndef add(a, b):\n    return a + b\n```",
            "Implement add in calc.py.",
            &tools
        ),
        None
    );
    // Two fences, prose around a command, a patch, a console with output.
    assert_eq!(
        taken(
            "```bash\nmkdir logs\n```\nthen\n```bash\nmkdir data\n```",
            MAKE_DIRS,
            &tools
        ),
        None
    );
    let long = format!("{}\n```bash\nmkdir logs\n```", "Some words. ".repeat(60));
    assert_eq!(taken(&long, MAKE_DIRS, &tools), None);
    assert_eq!(
        taken("```bash\n$ ls\nlogs data\n```", MAKE_DIRS, &tools),
        None
    );
    assert_eq!(
        taken(
            "```bash\n*** Begin Patch\n*** Add File: a.txt\n+hi\n*** End Patch\n```",
            "Create a.txt.",
            &tools
        ),
        None
    );
    // The shell's name alone (recorded).
    assert_eq!(taken("```bash\nbash\n```", MAKE_DIRS, &tools), None);
    assert_eq!(taken("```bash\nbash\nbash\n```", MAKE_DIRS, &tools), None);
    // Prose alone, or a line that only mentions bash.
    assert_eq!(taken("I made the directories.", MAKE_DIRS, &tools), None);
    assert_eq!(taken("bash is the shell here.", MAKE_DIRS, &tools), None);
    assert_eq!(
        taken(
            "`bash run.sh`",
            "Run run.sh and tell me what it says.",
            &tools
        ),
        None
    );
    // No shell tool offered.
    assert_eq!(
        taken(
            "```bash\nmkdir logs data tmp\n```",
            MAKE_DIRS,
            &[apply_patch()]
        ),
        None
    );
}
