use super::*;
use serde_json::json;

fn tools() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "shell".into(),
            description: String::new(),
            parameters: json!({"type":"object","properties":{
                "command":{"type":"array"},"timeout_ms":{"type":"number"}}}),
        },
        ToolSpec {
            name: "write_note".into(),
            description: String::new(),
            parameters: json!({"type":"object","properties":{"text":{"type":"string"}}}),
        },
    ]
}

fn one(text: &str) -> (String, Value, TextToolFormat, String) {
    let e = extract(text, &tools()).expect("calls expected");
    assert_eq!(e.calls.len(), 1, "{e:?}");
    let args: Value = serde_json::from_str(&e.calls[0].arguments).unwrap();
    (e.calls[0].name.clone(), args, e.format, e.text)
}

#[test]
fn hermes() {
    let (name, args, format, text) = one(
        "Let me look.\n<tool_call>\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"ls\"]}}\n</tool_call>",
    );
    assert_eq!((name.as_str(), format), ("shell", TextToolFormat::Hermes));
    assert_eq!(args, json!({"command": ["ls"]}));
    assert_eq!(text, "Let me look.");
}

#[test]
fn qwen3_coder_with_and_without_wrapper() {
    let block = "<function=shell>\n<parameter=command>\n[\"ls\", \"-la\"]\n</parameter>\n<parameter=timeout_ms>\n5000\n</parameter>\n</function>";
    for text in [
        format!("<tool_call>\n{block}\n</tool_call>"),
        block.to_string(),
    ] {
        let (name, args, format, rest) = one(&text);
        assert_eq!(name, "shell");
        assert_eq!(args, json!({"command": ["ls", "-la"], "timeout_ms": 5000}));
        assert_eq!(format, TextToolFormat::Qwen3Coder);
        assert_eq!(rest, "");
    }
    // A string parameter stays a string even when it looks like JSON.
    let (_, args, _, _) =
        one("<function=write_note>\n<parameter=text>\n42\n</parameter>\n</function>");
    assert_eq!(args, json!({"text": "42"}));
}

#[test]
fn glm() {
    let (name, args, format, _) = one(
        "<tool_call>shell\n<arg_key>command</arg_key>\n<arg_value>[\"pwd\"]</arg_value>\n</tool_call>",
    );
    assert_eq!((name.as_str(), format), ("shell", TextToolFormat::Glm));
    assert_eq!(args, json!({"command": ["pwd"]}));
}

#[test]
fn kimi_two_calls() {
    let e = extract(
        "<|tool_calls_section_begin|><|tool_call_begin|>functions.shell:0<|tool_call_argument_begin|>{\"command\":[\"ls\"]}<|tool_call_end|><|tool_call_begin|>functions.write_note:1<|tool_call_argument_begin|>{\"text\":\"hi\"}<|tool_call_end|><|tool_calls_section_end|>",
        &tools(),
    )
    .unwrap();
    assert_eq!(e.format, TextToolFormat::Kimi);
    let names: Vec<&str> = e.calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["shell", "write_note"]);
}

#[test]
fn quoted_formats_and_unknown_tools_are_not_calls() {
    for text in [
        "Models write:\n```\n<tool_call>\n{\"name\": \"shell\", \"arguments\": {}}\n</tool_call>\n```\nlike that.",
        "Inline: `<tool_call>{\"name\": \"shell\", \"arguments\": {}}</tool_call>` is the format.",
        "~~~xml\n<function=shell>\n<parameter=command>\n[\"rm\"]\n</parameter>\n</function>\n~~~",
        "<tool_call>\n{\"name\": \"delete_everything\", \"arguments\": {}}\n</tool_call>",
        "<tool_call>\nnot json at all, just prose\n</tool_call>",
        "no markup here",
    ] {
        assert_eq!(extract(text, &tools()), None, "{text}");
    }
    assert_eq!(
        extract(
            "<tool_call>{\"name\":\"shell\",\"arguments\":{}}</tool_call>",
            &[]
        ),
        None
    );
}

#[test]
fn call_after_a_code_block_still_counts() {
    let (name, _, _, text) = one(
        "```sh\nls\n```\nRunning it:\n<tool_call>{\"name\":\"shell\",\"arguments\":{\"command\":[\"ls\"]}}</tool_call>",
    );
    assert_eq!(name, "shell");
    assert_eq!(text, "```sh\nls\n```\nRunning it:");
}

#[test]
fn unterminated_call_at_the_end() {
    let (name, args, _, _) =
        one("<tool_call>\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"ls\"]}}");
    assert_eq!(name, "shell");
    assert_eq!(args, json!({"command": ["ls"]}));
}

#[test]
fn mistral_both_forms() {
    let (name, args, format, text) =
        one("[TOOL_CALLS][{\"name\": \"shell\", \"arguments\": {\"command\": [\"ls\"]}}]</s>");
    assert_eq!((name.as_str(), format), ("shell", TextToolFormat::Mistral));
    assert_eq!((args, text.as_str()), (json!({"command": ["ls"]}), ""));
    let (name, args, _, text) =
        one("Listing.[TOOL_CALLS]shell[ARGS]{\"command\": [\"ls\", \"-a\"]}");
    assert_eq!(name, "shell");
    assert_eq!(args, json!({"command": ["ls", "-a"]}));
    assert_eq!(text, "Listing.");
    let e = extract(
        "[TOOL_CALLS]shell[CALL_ID]a1b2c3d4e[ARGS]{\"command\":[\"ls\"]}[TOOL_CALLS]write_note[ARGS]{\"text\":\"hi\"}",
        &tools(),
    )
    .unwrap();
    let names: Vec<&str> = e.calls.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["shell", "write_note"]);
}

#[test]
fn llama3_python_tag_and_bare_json() {
    let e = extract(
        "<|python_tag|>{\"name\": \"shell\", \"parameters\": {\"command\": [\"ls\"]}}; {\"name\": \"write_note\", \"parameters\": {\"text\": \"x\"}}<|eom_id|>",
        &tools(),
    )
    .unwrap();
    assert_eq!(e.format, TextToolFormat::Llama);
    assert_eq!(e.calls.len(), 2);
    assert_eq!(e.text, "");
    // Llama 3.x without the tag: JSON with `parameters`, as `json_calls` takes it.
    let (name, args, format, _) =
        one("{\"name\": \"shell\", \"parameters\": {\"command\": [\"pwd\"]}}");
    assert_eq!((name.as_str(), format), ("shell", TextToolFormat::Json));
    assert_eq!(args, json!({"command": ["pwd"]}));
}

#[test]
fn deepseek_v3_and_v31() {
    let (name, args, format, text) = one(
        "Let me check.<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>shell\n```json\n{\"command\": [\"ls\"]}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    );
    assert_eq!((name.as_str(), format), ("shell", TextToolFormat::DeepSeek));
    assert_eq!(args, json!({"command": ["ls"]}));
    assert_eq!(text, "Let me check.");
    let (name, args, _, _) = one(
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>shell<｜tool▁sep｜>{\"command\": [\"pwd\"]}<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    );
    assert_eq!(
        (name.as_str(), args),
        ("shell", json!({"command": ["pwd"]}))
    );
}

#[test]
fn harmony_commentary_call() {
    for text in [
        "<|start|>assistant<|channel|>commentary to=functions.shell <|constrain|>json<|message|>{\"command\":[\"ls\"]}<|call|>",
        "<|start|>assistant to=functions.shell<|channel|>commentary json<|message|>{\"command\":[\"ls\"]}<|call|>",
        "<|channel|>commentary to=functions.shell <|constrain|>json<|message|>{\"command\":[\"ls\"]}",
    ] {
        let (name, args, format, rest) = one(text);
        assert_eq!(
            (name.as_str(), format),
            ("shell", TextToolFormat::Harmony),
            "{text}"
        );
        assert_eq!(args, json!({"command": ["ls"]}));
        assert_eq!(rest, "", "{text}");
    }
}

#[test]
fn token_formats_in_explanations_are_not_calls() {
    for text in [
        "Mistral writes `[TOOL_CALLS]shell[ARGS]{\"command\":[\"ls\"]}` to call.",
        "```\n<|python_tag|>{\"name\": \"shell\", \"parameters\": {}}\n```",
        "Format: `<｜tool▁call▁begin｜>shell<｜tool▁sep｜>{}<｜tool▁call▁end｜>`",
        "```text\n<|start|>assistant<|channel|>commentary to=functions.shell <|constrain|>json<|message|>{}<|call|>\n```",
        // Not offered.
        "[TOOL_CALLS]rm_rf[ARGS]{}",
        "<|channel|>commentary to=functions.rm_rf <|constrain|>json<|message|>{}<|call|>",
    ] {
        assert_eq!(extract(text, &tools()), None, "{text}");
    }
}

#[test]
fn function_tags_small_models_invent_are_calls() {
    // Recorded: Qwen2.5-Coder-1.5B under the kimi-code profile, llama.cpp 7e4c0a9.
    let text = "<tools>\n  <function name=\"WriteFile\" arguments='{\"path\": \"/w/hello.txt\", \"content\": \"hi\", \"mode\": \"overwrite\"}'/>\n</tools>";
    let tools = [ToolSpec {
        name: "WriteFile".into(),
        description: String::new(),
        parameters: serde_json::json!({"type": "object", "properties": {"path": {"type": "string"}, "content": {"type": "string"}, "mode": {"type": "string"}}}),
    }];
    let e = extract(text, &tools).expect("a call");
    assert_eq!(e.format, TextToolFormat::FunctionTag);
    assert_eq!(e.calls.len(), 1);
    assert_eq!(e.calls[0].name, "WriteFile");
    let args: serde_json::Value = serde_json::from_str(&e.calls[0].arguments).unwrap();
    assert_eq!(args["content"], "hi");
    // The body form, and a `/>` inside the JSON does not cut the tag.
    let body = "<function name=\"WriteFile\">{\"path\": \"a\", \"content\": \"x/>y\"}</function>";
    let e = extract(body, &tools).expect("a call");
    let args: serde_json::Value = serde_json::from_str(&e.calls[0].arguments).unwrap();
    assert_eq!(args["content"], "x/>y");
    let quoted =
        "<function name=\"WriteFile\" arguments='{\"path\": \"a\", \"content\": \"x/>y\"}'/>";
    let args: serde_json::Value =
        serde_json::from_str(&extract(quoted, &tools).expect("a call").calls[0].arguments).unwrap();
    assert_eq!(args["content"], "x/>y");
    // A tool nobody offered is no call, but it is noticed as one nobody ran.
    assert!(extract("<function name=\"Other\" arguments='{}'/>", &tools).is_none());
    assert_eq!(
        unrun_call("<function name=\"Other\" arguments='{}'/>", &tools).as_deref(),
        Some("Other")
    );
}
