use super::*;
use oi_protocol::models::ToolSpec;

fn shell_tool() -> ToolSpec {
    ToolSpec {
        name: "shell".into(),
        description: "run".into(),
        parameters: json!({"type":"object"}),
    }
}

#[test]
fn urls_follow_base_url_or_the_sdk_convention() {
    assert_eq!(
        url("http://127.0.0.1:8080/v1"),
        "http://127.0.0.1:8080/v1/messages"
    );
    assert_eq!(
        url("https://api.z.ai/api/anthropic/"),
        "https://api.z.ai/api/anthropic/v1/messages"
    );
}

#[test]
fn history_becomes_alternating_messages_with_results_first() {
    let signed = thinking_payload(Thinking::Signed("sig=="));
    let prompt = Prompt {
        model: "m".into(),
        instructions: "be brief".into(),
        input: vec![
            ResponseItem::developer_text("dev note"),
            ResponseItem::user_text("list files"),
            ResponseItem::Reasoning {
                text: "look first".into(),
                encrypted_content: Some(signed),
            },
            // Another wire's reasoning: not a thinking block this API can verify.
            ResponseItem::Reasoning {
                text: "foreign".into(),
                encrypted_content: None,
            },
            ResponseItem::assistant_text("Sure."),
            ResponseItem::FunctionCall {
                call_id: "functions.shell:0".into(),
                name: "shell".into(),
                arguments: r#"{"command":["ls"]}"#.into(),
            },
            ResponseItem::FunctionCall {
                call_id: "c2".into(),
                name: "shell".into(),
                arguments: "{not json".into(),
            },
            ResponseItem::developer_text("a later note"),
            ResponseItem::FunctionCallOutput {
                call_id: "functions.shell:0".into(),
                output: FunctionCallOutput {
                    content: vec![ContentItem::InputImage {
                        image_url: "data:image/png;base64,AAAA".into(),
                    }],
                    success: Some(true),
                },
            },
            ResponseItem::FunctionCallOutput {
                call_id: "c2".into(),
                output: FunctionCallOutput::text("bad args", false),
            },
        ],
        tools: vec![shell_tool()],
        parallel_tool_calls: false,
        max_output_tokens: Some(1000),
        ..Prompt::default()
    };
    let body = request_body(
        &prompt,
        RequestOptions {
            parallel: false,
            cache_markers: true,
        },
    );
    assert_eq!(body["max_tokens"], 1000);
    assert_eq!(body["stream"], true);
    assert_eq!(body["system"][0]["text"], "be brief\n\ndev note");
    assert_eq!(body["system"][0]["cache_control"]["type"], "ephemeral");
    assert_eq!(body["tools"][0]["input_schema"]["type"], "object");
    assert_eq!(body["tools"][0]["cache_control"]["type"], "ephemeral");
    assert_eq!(body["tool_choice"]["disable_parallel_tool_use"], true);
    let msgs = body["messages"].as_array().unwrap();
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
    let assistant = msgs[1]["content"].as_array().unwrap();
    let kinds: Vec<&str> = assistant
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["thinking", "text", "tool_use", "tool_use"]);
    assert_eq!(assistant[0]["signature"], "sig==");
    assert_eq!(assistant[2]["id"], "functions_shell_0");
    assert_eq!(assistant[2]["input"]["command"][0], "ls");
    assert_eq!(assistant[3]["input"]["invalid_json_arguments"], "{not json");
    let results = msgs[2]["content"].as_array().unwrap();
    // Tool results open the user message; the later note follows them.
    assert_eq!(results[0]["type"], "tool_result");
    assert_eq!(results[0]["tool_use_id"], "functions_shell_0");
    assert_eq!(results[0]["content"][0]["type"], "image");
    assert_eq!(
        results[0]["content"][0]["source"]["media_type"],
        "image/png"
    );
    assert_eq!(results[1]["tool_use_id"], "c2");
    assert_eq!(results[1]["is_error"], true);
    assert_eq!(results[1]["content"], "bad args");
    assert!(
        results[2]["text"]
            .as_str()
            .unwrap()
            .contains("a later note")
    );
    // The last block of the last user messages carries the cache marker.
    assert_eq!(results[2]["cache_control"]["type"], "ephemeral");
    assert_eq!(msgs[0]["content"][0]["cache_control"]["type"], "ephemeral");
}

#[test]
fn redacted_thinking_goes_back_as_data() {
    let prompt = Prompt {
        input: vec![
            ResponseItem::user_text("hi"),
            ResponseItem::Reasoning {
                text: String::new(),
                encrypted_content: Some(thinking_payload(Thinking::Redacted("opaque"))),
            },
            ResponseItem::assistant_text("hello"),
        ],
        ..Prompt::default()
    };
    let body = request_body(
        &prompt,
        RequestOptions {
            parallel: true,
            cache_markers: false,
        },
    );
    assert_eq!(
        body["messages"][1]["content"][0]["type"],
        "redacted_thinking"
    );
    assert_eq!(body["messages"][1]["content"][0]["data"], "opaque");
    // No tools: no tool_choice; no bound given: the default max_tokens.
    assert!(body.get("tool_choice").is_none());
    assert_eq!(body["max_tokens"], DEFAULT_MAX_TOKENS);
}

#[test]
fn thinking_budget_and_temperature() {
    let mut prompt = Prompt {
        input: vec![ResponseItem::user_text("hi")],
        reasoning_effort: Some(ReasoningEffort::High),
        max_output_tokens: Some(8000),
        temperature: Some(0.2),
        stop: vec!["END".into()],
        ..Prompt::default()
    };
    let body = request_body(
        &prompt,
        RequestOptions {
            parallel: true,
            cache_markers: false,
        },
    );
    assert_eq!(body["thinking"]["type"], "enabled");
    assert_eq!(body["thinking"]["budget_tokens"], 4000);
    // The API refuses a temperature while thinking.
    assert!(body.get("temperature").is_none());
    assert_eq!(body["stop_sequences"][0], "END");
    prompt.reasoning_effort = Some(ReasoningEffort::None);
    let body = request_body(
        &prompt,
        RequestOptions {
            parallel: true,
            cache_markers: false,
        },
    );
    assert_eq!(body["thinking"]["type"], "disabled");
    assert!((body["temperature"].as_f64().unwrap() - 0.2).abs() < 1e-6);
}

#[test]
fn images_by_url_and_data() {
    let prompt = Prompt {
        input: vec![ResponseItem::Message {
            role: Role::User,
            content: vec![
                ContentItem::InputText {
                    text: "what is this".into(),
                },
                ContentItem::InputImage {
                    image_url: "https://example.com/a.png".into(),
                },
                ContentItem::InputImage {
                    image_url: "data:image/jpeg;base64,/9j/".into(),
                },
            ],
        }],
        ..Prompt::default()
    };
    let body = request_body(
        &prompt,
        RequestOptions {
            parallel: true,
            cache_markers: false,
        },
    );
    let blocks = body["messages"][0]["content"].as_array().unwrap();
    assert_eq!(blocks[1]["source"]["type"], "url");
    assert_eq!(blocks[2]["source"]["type"], "base64");
    assert_eq!(blocks[2]["source"]["data"], "/9j/");
}

#[test]
fn payload_markers_round_trip() {
    let s = thinking_payload(Thinking::Signed("abc"));
    assert!(is_messages_payload(&s));
    assert!(matches!(stored_thinking(&s), Some(Thinking::Signed("abc"))));
    assert!(!is_messages_payload("gAAAAABencrypted"));
}

#[test]
fn no_cache_markers_where_the_provider_does_not_cache_by_them() {
    let prompt = Prompt {
        instructions: "sys".into(),
        input: vec![ResponseItem::user_text("hi")],
        tools: vec![shell_tool()],
        ..Prompt::default()
    };
    let body = request_body(&prompt, RequestOptions::default()).to_string();
    assert!(!body.contains("cache_control"), "{body}");
}
