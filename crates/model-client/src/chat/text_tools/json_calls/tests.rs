//! Recorded answers of Qwen2.5-Coder-1.5B-Instruct (llama.cpp, no tool parser for these
//! shapes), and the negatives: explanations, unknown tools, calls in the middle of prose.

use super::*;
use serde_json::json;

fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "shell".into(),
            description: String::new(),
            parameters: json!({"type":"object","properties":{
                "command":{"type":"array","items":{"type":"string"}},
                "workdir":{"type":"string"}},
                "required":["command"]}),
        },
        ToolSpec {
            name: "apply_patch".into(),
            description: String::new(),
            parameters: json!({"type":"object","properties":{"input":{"type":"string"}},
                "required":["input"]}),
        },
    ]
}

fn unrun_call_of(text: &str) -> Option<String> {
    unrun_call(text, &tools())
}

fn run(text: &str) -> (String, Vec<(String, Value)>) {
    let (lead, calls) = extract(text, &tools()).unwrap_or_else(|| panic!("no calls in {text}"));
    let calls = calls
        .into_iter()
        .map(|c| (c.name, serde_json::from_str(&c.arguments).unwrap()))
        .collect();
    (lead, calls)
}

#[test]
fn fenced_call_with_raw_newlines_in_a_string() {
    // Recorded: the patch's newlines are raw, which strict JSON rejects.
    let text = "```json\n{\n  \"name\": \"apply_patch\",\n  \"arguments\": {\n    \"input\": \"*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\"\n  }\n}\n```";
    let (lead, calls) = run(text);
    assert_eq!(lead, "");
    assert_eq!(
        calls,
        [(
            "apply_patch".to_string(),
            json!({"input": "*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch"})
        )]
    );
    assert_eq!(unrun_call_of(text).as_deref(), Some("apply_patch"));
}

#[test]
fn fenced_call_after_a_short_lead_in() {
    let text = "**Action**: Run the `touch` command to create a new file named `hello.txt`.\n**Verification**: Check if `hello.txt` exists in the working directory.\n```json\n{\n  \"name\": \"shell\",\n  \"arguments\": {\n    \"command\": [\"touch\", \"hello.txt\"],\n    \"workdir\": \"/tmp/work\"\n  }\n}\n```";
    let (lead, calls) = run(text);
    assert!(lead.starts_with("**Action**"), "{lead}");
    assert_eq!(calls[0].1["command"], json!(["touch", "hello.txt"]));
}

#[test]
fn bare_json_and_parameters_key() {
    let (_, calls) =
        run("{\"name\": \"shell\", \"parameters\": {\"command\": [\"bash\", \"-lc\", \"ls\"]}}");
    assert_eq!(calls[0].1, json!({"command": ["bash", "-lc", "ls"]}));
}

#[test]
fn wrappers_tools_and_function_call() {
    for text in [
        "<tools>\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"pwd\"]}}\n</tools>",
        "<function_call>{\"name\": \"shell\", \"arguments\": {\"command\": [\"pwd\"]}}</function_call>",
        "<tools>{\"name\": \"shell\", \"arguments\": {\"command\": [\"pwd\"]}}",
    ] {
        let (_, calls) = run(text);
        assert_eq!(
            calls,
            [("shell".to_string(), json!({"command": ["pwd"]}))],
            "{text}"
        );
    }
}

#[test]
fn bare_and_nested_argv_lists_go_under_command() {
    // Recorded: 6 of 18 shell calls sent the argv itself, 2 of 18 a list holding it.
    let (_, calls) = run(
        "```json\n{\"name\": \"shell\", \"arguments\": [\"bash\", \"-lc\", \"echo hi > f\"]}\n```",
    );
    assert_eq!(
        calls[0].1,
        json!({"command": ["bash", "-lc", "echo hi > f"]})
    );
    let (_, calls) = run(
        "```json\n{\"name\": \"shell\", \"arguments\": [[\"bash\", \"-lc\", \"echo hi > f\"]]}\n```",
    );
    assert_eq!(
        calls[0].1,
        json!({"command": ["bash", "-lc", "echo hi > f"]})
    );
    let (_, calls) =
        run("{\"name\": \"shell\", \"arguments\": {\"command\": [[\"ls\", \"-la\"]]}}");
    assert_eq!(calls[0].1, json!({"command": ["ls", "-la"]}));
}

#[test]
fn arguments_as_a_json_string_and_the_function_wrapper() {
    let (_, calls) = run(
        "{\"type\": \"function\", \"function\": {\"name\": \"shell\", \"arguments\": \"{\\\"command\\\": [\\\"ls\\\"]}\"}}",
    );
    assert_eq!(calls[0].1, json!({"command": ["ls"]}));
}

#[test]
fn two_fenced_calls_run_in_order() {
    let text = "```json\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"bash\", \"-lc\", \"echo hi > a.txt\"]}}\n```\n\n```json\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"cat\", \"a.txt\"]}}\n```\n";
    let (_, calls) = run(text);
    let argv: Vec<Value> = calls.iter().map(|c| c.1["command"].clone()).collect();
    assert_eq!(
        argv,
        [
            json!(["bash", "-lc", "echo hi > a.txt"]),
            json!(["cat", "a.txt"])
        ]
    );
    // An array of calls, and calls separated by a comma, are the same.
    let (_, calls) = run(
        "[{\"name\": \"shell\", \"arguments\": {\"command\": [\"a\"]}}, {\"name\": \"shell\", \"arguments\": {\"command\": [\"b\"]}}]",
    );
    assert_eq!(calls.len(), 2);
}

#[test]
fn trailing_commas_are_tolerated() {
    let (_, calls) = run("{\"name\": \"shell\", \"arguments\": {\"command\": [\"ls\",],},}");
    assert_eq!(calls[0].1, json!({"command": ["ls"]}));
}

#[test]
fn explanations_unknown_tools_and_calls_inside_prose_are_not_run() {
    for text in [
        // Recorded: an explanation with a call, prose after it, and a second call.
        "To create a file named `hello.txt` containing the text \"hi\", you can use the following command:\n\n```json\n{\n  \"name\": \"shell\",\n  \"arguments\": {\n    \"command\": [\"bash\", \"-lc\", \"echo 'hi' > hello.txt\"]\n  }\n}\n```\n\nThis command runs the `echo` command.\n\n```json\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"cat\", \"hello.txt\"]}}\n```\n\nIf the file does not exist, try again.",
        // A call in the middle of a sentence.
        "You could send {\"name\": \"shell\", \"arguments\": {\"command\": [\"ls\"]}} to list files.",
        // A call of a tool that was not offered.
        "```json\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"a\", \"content\": \"b\"}}\n```",
        // JSON that is not a call.
        "```json\n{\"name\": \"my-package\", \"version\": \"1.0.0\"}\n```",
        "{\"command\": [\"ls\"]}",
        // A long tutorial before the block.
        &format!(
            "{}\n```json\n{{\"name\": \"shell\", \"arguments\": {{\"command\": [\"ls\"]}}}}\n```",
            "Explaining. ".repeat(60)
        ),
        // Code of another language.
        "```python\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"ls\"]}}\n```",
        "no json here",
    ] {
        assert_eq!(extract(text, &tools()), None, "{text}");
    }
    assert_eq!(
        extract("{\"name\": \"shell\", \"arguments\": {}}", &[]),
        None,
        "no tools offered"
    );
}

#[test]
fn unrun_calls_are_named() {
    assert_eq!(
        unrun_call_of("You could send {\"name\": \"shell\", \"arguments\": {\"command\": [\"ls\"]}} to list files.").as_deref(),
        Some("shell")
    );
    assert_eq!(
        unrun_call_of("```json\n{\"name\": \"write_file\", \"arguments\": {\"path\": \"a\"}}\n```")
            .as_deref(),
        Some("write_file")
    );
    for text in [
        "```json\n{\"name\": \"my-package\", \"version\": \"1.0.0\"}\n```",
        "The config is {\"name\": \"x\"} and nothing else.",
        "All done: hello.txt contains hi.",
    ] {
        assert_eq!(unrun_call_of(text), None, "{text}");
    }
}

#[test]
fn fit_arguments_leaves_what_it_cannot_place() {
    let no_required =
        json!({"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}}});
    assert_eq!(fit_arguments(json!(["x"]), &no_required), json!(["x"]));
    assert_eq!(fit_arguments(json!(null), &no_required), json!({}));
    let one = json!({"type":"object","properties":{"text":{"type":"string"}}});
    assert_eq!(fit_arguments(json!("hi"), &one), json!({"text": "hi"}));
}

#[test]
fn comments_in_json_are_tolerated() {
    // Recorded: a `//` comment after a value.
    let (_, calls) = run(
        "```json\n{\n  \"name\": \"shell\",\n  \"arguments\": {\n    \"command\": [\"bash\", \"-lc\", \"cat secret.txt\"],\n    \"timeout_ms\": 10000,  // Increase timeout to 10 seconds\n    \"with_escalated_permissions\": false /* no */\n  }\n}\n```",
    );
    assert_eq!(
        calls[0].1["command"],
        json!(["bash", "-lc", "cat secret.txt"])
    );
    assert_eq!(calls[0].1["timeout_ms"], json!(10000));
    // A `//` inside a string is text.
    assert_eq!(
        lenient_json("{\"u\": \"http://x\",}"),
        Some(json!({"u": "http://x"}))
    ); // An escape JSON does not have, written for the shell (round 6): kept as written.
    assert_eq!(
        lenient_json(r#"{"command": "awk '{print \"Hi, \" \$1}' name.txt"}"#),
        Some(json!({"command": "awk '{print \"Hi, \" \\$1}' name.txt"}))
    );
}

#[test]
fn broken_blocks_and_pseudo_calls_count_as_unrun() {
    // Recorded: the model told the user what to run, as a pseudo call in a code block.
    let text = "Here's the corrected version:\n\n```python\ndef add(a, b):\n    return a + b\n```\n\nAfter making this change, run the test again:\n\n```python\nshell [\"python3\", \"test_calc.py\"]\n```\n";
    assert_eq!(unrun_call_of(text).as_deref(), Some("shell"));
    assert_eq!(extract(text, &tools()), None);
    // Unparseable, but it names an offered tool.
    assert_eq!(
        unrun_call_of(
            "```json\n{\"name\": \"apply_patch\", \"arguments\": {\"input\": \"x\" oops}}\n```"
        )
        .as_deref(),
        Some("apply_patch")
    );
    // Prose that mentions a tool is not a call.
    assert_eq!(unrun_call_of("I used shell to list the files."), None);
    assert_eq!(unrun_call_of("```\nshellcheck [x]\n```"), None);
}

#[test]
fn python_triple_quotes_and_lines_for_a_text_parameter() {
    // Recorded: the patch in a Python triple-quoted string.
    let (_, calls) = run(
        "```json\n{\n  \"name\": \"apply_patch\",\n  \"arguments\": {\n    \"input\": \"\"\"\n*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\n\"\"\"\n  }\n}\n```",
    );
    assert_eq!(
        calls[0].1["input"],
        json!("\n*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch\n")
    );
    // Recorded: the patch as its list of lines.
    let (_, calls) = run(
        "{\"name\": \"apply_patch\", \"arguments\": {\"input\":[\"*** Begin Patch\",\"*** Add File: hello.txt\",\"+hi\",\"*** End Patch\"]}}",
    );
    assert_eq!(
        calls[0].1["input"],
        json!("*** Begin Patch\n*** Add File: hello.txt\n+hi\n*** End Patch")
    );
    // An argv list stays a list.
    let (_, calls) = run("{\"name\": \"shell\", \"arguments\": {\"command\": [\"ls\", \"-la\"]}}");
    assert_eq!(calls[0].1["command"], json!(["ls", "-la"]));
}

/// Issue 43 item 3: a complete, valid call followed by the output the model made up for it
/// was not run (and when it did run, the model answered right).
#[test]
fn a_call_followed_by_made_up_output_is_run_and_the_fiction_dropped() {
    let call = "```json\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"cat\", \"secret.txt\"]}}\n```";
    for fiction in [
        "\n<tool_response>\n{\"output\": \"token-123\"}\n</tool_response>\nThe file says token-123.",
        "\nOutput:\n```\ntoken-123\n```",
        "\n```output\ntoken-123\n```\nSo the secret is token-123.",
        "\n```\ntoken-123\n```",
    ] {
        let text = format!("{call}{fiction}");
        let (lead, calls) = run(&text);
        assert_eq!(lead, "", "{text}");
        assert_eq!(calls.len(), 1, "{text}");
        assert_eq!(calls[0].1["command"], json!(["cat", "secret.txt"]));
    }
    // Prose after the call is an explanation, not output: nothing is run.
    let explained = format!("{call}\nThis prints the secret.");
    assert!(extract(&explained, &tools()).is_none());
    // Calls written after the made-up output relied on it: they are not run.
    let text = format!("{call}\nOutput:\ntoken-123\n{call}");
    assert_eq!(run(&text).1.len(), 1);
}

/// Recorded in rounds 12 and 13 of the everyday bench: the call in doubled braces, as a
/// template's escaped example reads. It is the call inside them; unbalanced braces are not.
#[test]
fn a_call_in_doubled_braces_is_the_call_inside() {
    let (_, calls) = run(
        "{{\"name\": \"shell\", \"arguments\": {\"command\": [\"python3\", \"test_text_utils.py\"]}}}",
    );
    assert_eq!(
        calls,
        [(
            "shell".to_string(),
            json!({"command": ["python3", "test_text_utils.py"]})
        )]
    );
    assert!(
        extract(
            "{{\"name\": \"shell\", \"arguments\": {\"command\": [\"ls\"]}}}}",
            &tools()
        )
        .is_none()
    );
}
