use super::*;
use oi_protocol::models::ToolSpec;

fn decode(chunks: &[&str]) -> Vec<ResponseEvent> {
    let mut d = ChatDecoder::default();
    let mut out = VecDeque::new();
    for c in chunks {
        if d.on_event("message", c, &mut out).unwrap() == Step::Done {
            return out.into();
        }
    }
    d.on_eof(&mut out).unwrap();
    out.into()
}

fn calls(events: &[ResponseEvent]) -> Vec<(String, String, String)> {
    events
        .iter()
        .filter_map(|e| match e {
            ResponseEvent::OutputItemDone(ResponseItem::FunctionCall {
                call_id,
                name,
                arguments,
            }) => Some((call_id.clone(), name.clone(), arguments.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn history_becomes_chat_messages() {
    let prompt = Prompt {
        model: "m".into(),
        instructions: "be brief".into(),
        input: vec![
            ResponseItem::developer_text("dev note"),
            ResponseItem::user_text("list files"),
            ResponseItem::Reasoning {
                text: "thinking".into(),
                encrypted_content: None,
            },
            ResponseItem::assistant_text("Sure."),
            ResponseItem::FunctionCall {
                call_id: "c1".into(),
                name: "shell".into(),
                arguments: r#"{"command":["ls"]}"#.into(),
            },
            ResponseItem::FunctionCall {
                call_id: "c2".into(),
                name: "shell".into(),
                arguments: "{not json".into(),
            },
            ResponseItem::FunctionCallOutput {
                call_id: "c1".into(),
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
            ResponseItem::user_text("thanks"),
        ],
        tools: vec![ToolSpec {
            name: "shell".into(),
            description: "run".into(),
            parameters: json!({"type":"object"}),
        }],
        reasoning_effort: None,
        reasoning_summary: None,
        verbosity: None,
        parallel_tool_calls: true,
        ..Prompt::default()
    };
    let body = request_body(&prompt, ChatRequestOptions::default());
    let msgs = body["messages"].as_array().unwrap();
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(
        roles,
        [
            "system",
            "user",
            "assistant",
            "tool",
            "tool",
            "user",
            "user"
        ]
    );
    // Instructions and the developer context travel as one system message.
    assert_eq!(msgs[0]["content"], "be brief\n\ndev note");
    // Text and both calls of one response travel as one assistant message, without the
    // reasoning (this provider does not take it back).
    assert_eq!(msgs[2]["content"], "Sure.");
    assert!(msgs[2].get("reasoning_content").is_none());
    let tool_calls = msgs[2]["tool_calls"].as_array().unwrap();
    assert_eq!(tool_calls.len(), 2);
    assert_eq!(tool_calls[0]["id"], "c1");
    assert_eq!(
        tool_calls[0]["function"]["arguments"],
        r#"{"command":["ls"]}"#
    );
    // Invalid arguments go back as valid JSON that still shows the raw text.
    let wrapped: Value =
        serde_json::from_str(tool_calls[1]["function"]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(wrapped["invalid_json_arguments"], "{not json");
    assert_eq!(msgs[3]["tool_call_id"], "c1");
    assert!(msgs[3]["content"].as_str().unwrap().contains("image"));
    assert_eq!(msgs[4]["content"], "bad args");
    // The image follows the run of tool messages as a user message.
    assert_eq!(msgs[5]["content"][1]["type"], "image_url");
    assert_eq!(
        msgs[5]["content"][1]["image_url"]["url"],
        "data:image/png;base64,AAAA"
    );
    assert_eq!(msgs[6]["content"], "thanks");
    assert_eq!(body["tools"][0]["function"]["name"], "shell");
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert!(body.get("reasoning_effort").is_none());
}

#[test]
fn calls_without_preceding_text_get_their_own_message() {
    let prompt = Prompt {
        input: vec![
            ResponseItem::user_text("go"),
            ResponseItem::FunctionCall {
                call_id: "a".into(),
                name: "x".into(),
                arguments: String::new(),
            },
        ],
        reasoning_effort: Some(oi_protocol::config_types::ReasoningEffort::High),
        ..Prompt::default()
    };
    let body = request_body(&prompt, ChatRequestOptions::default());
    let msgs = body["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 2);
    assert_eq!(msgs[1]["content"], Value::Null);
    assert_eq!(msgs[1]["tool_calls"][0]["function"]["arguments"], "{}");
    assert_eq!(body["reasoning_effort"], "high");
    assert!(body.get("tools").is_none());
}

#[test]
fn calls_numbered_zero_with_distinct_ids_stay_apart() {
    let ev = decode(&[
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"x","arguments":"{}"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"b","function":{"name":"y","arguments":"{\"k\":1}"}}]}}]}"#,
        r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
    ]);
    let c = calls(&ev);
    assert_eq!(c.len(), 2);
    assert_eq!((c[0].0.as_str(), c[0].1.as_str()), ("a", "x"));
    assert_eq!((c[1].0.as_str(), c[1].2.as_str()), ("b", r#"{"k":1}"#));
}

#[test]
fn calls_without_index_or_id_are_told_apart() {
    let ev = decode(&[
        // Two whole calls in one chunk, no index, no id.
        r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"x","arguments":"{}"}},{"function":{"name":"y","arguments":"{}"}}]}}]}"#,
        // A third whole call in its own chunk, no index (position 0), no id.
        r#"{"choices":[{"delta":{"tool_calls":[{"function":{"name":"z","arguments":"{\"a\":1}"}}]}}]}"#,
        "[DONE]",
    ]);
    let c = calls(&ev);
    let names: Vec<&str> = c.iter().map(|c| c.1.as_str()).collect();
    assert_eq!(names, ["x", "y", "z"]);
    assert!(c.iter().all(|c| crate::call_ids::is_portable(&c.0)));
    assert_ne!(c[0].0, c[1].0);
}

#[test]
fn object_arguments_and_repeated_names_are_tolerated() {
    let ev = decode(&[
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"x","arguments":{"k":[1,2]}}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"name":"y","arguments":"{\"p\":"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"function":{"name":"y","arguments":"2}"}}]}}]}"#,
        r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#,
    ]);
    let c = calls(&ev);
    assert_eq!(c[0].2, r#"{"k":[1,2]}"#);
    assert_eq!((c[1].1.as_str(), c[1].2.as_str()), ("y", r#"{"p":2}"#));
}

#[test]
fn in_stream_error_object_is_a_provider_error() {
    let mut d = ChatDecoder::default();
    let mut out = VecDeque::new();
    let err = d
        .on_event(
            "message",
            r#"{"error":{"message":"model overloaded","code":503}}"#,
            &mut out,
        )
        .unwrap_err();
    assert!(matches!(err, ModelError::Provider(ref m) if m.contains("model overloaded")));
}

#[test]
fn end_without_finish_reason_is_a_disconnect() {
    let mut d = ChatDecoder::default();
    let mut out = VecDeque::new();
    d.on_event(
        "message",
        r#"{"choices":[{"delta":{"content":"partial"}}]}"#,
        &mut out,
    )
    .unwrap();
    assert!(matches!(
        d.on_eof(&mut out),
        Err(ModelError::StreamDisconnected(_))
    ));
}

#[test]
fn usage_names() {
    let u = parse_usage(&json!({
        "prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15,
        "prompt_tokens_details": {"cached_tokens": 4},
        "completion_tokens_details": {"reasoning_tokens": 2}
    }));
    assert_eq!(
        u,
        TokenUsage {
            input_tokens: 10,
            cached_input_tokens: 4,
            output_tokens: 5,
            reasoning_output_tokens: 2,
            total_tokens: 15
        }
    );
    assert_eq!(
        parse_usage(&json!({"prompt_tokens": 3, "completion_tokens": 4})).total_tokens,
        7
    );
}

#[test]
fn exactly_one_system_message_and_never_developer() {
    let prompt = Prompt {
        instructions: "You are a coding agent.".into(),
        input: vec![
            ResponseItem::developer_text("<environment_context>cwd</environment_context>"),
            ResponseItem::developer_text(
                "<developer_instructions>be terse</developer_instructions>",
            ),
            ResponseItem::user_text("hi"),
            ResponseItem::assistant_text("hello"),
            ResponseItem::developer_text("late note"),
            ResponseItem::user_text("again"),
        ],
        ..Prompt::default()
    };
    let body = request_body(&prompt, ChatRequestOptions::default());
    let msgs = body["messages"].as_array().unwrap();
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "user", "user"]);
    assert_eq!(
        msgs[0]["content"],
        "You are a coding agent.\n\n<environment_context>cwd</environment_context>\n\n<developer_instructions>be terse</developer_instructions>"
    );
    assert_eq!(
        msgs[3]["content"],
        "<system_note>\nlate note\n</system_note>"
    );
}

/// Issue 43 item 6: what differs between runs goes after the system prompt (and the tool
/// schemas a template appends to it), at the head of the first user message: never a second
/// user message in a row, which templates that want roles to alternate reject.
#[test]
fn the_runs_context_leads_the_first_user_message() {
    let ctx = "<environment_context>\n  <cwd>/w</cwd>\n</environment_context>";
    let prompt = Prompt {
        instructions: "You are a coding agent.".into(),
        input: vec![
            ResponseItem::developer_text("<environment>static</environment>"),
            ResponseItem::user_text(ctx),
            ResponseItem::user_text("hi"),
            ResponseItem::assistant_text("hello"),
            ResponseItem::user_text("again"),
        ],
        ..Prompt::default()
    };
    let body = request_body(&prompt, ChatRequestOptions::default());
    let msgs = body["messages"].as_array().unwrap();
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    assert_eq!(roles, ["system", "user", "assistant", "user"]);
    assert_eq!(
        msgs[0]["content"],
        "You are a coding agent.\n\n<environment>static</environment>"
    );
    assert_eq!(msgs[1]["content"], format!("{ctx}\n\nhi"));
    assert_eq!(msgs[3]["content"], "again");
    // With an image, the context is the first part.
    let with_image = Prompt {
        input: vec![
            ResponseItem::user_text(ctx),
            ResponseItem::Message {
                role: Role::User,
                content: vec![
                    ContentItem::InputText {
                        text: "what is this?".into(),
                    },
                    ContentItem::InputImage {
                        image_url: "data:image/png;base64,AA".into(),
                    },
                ],
            },
        ],
        ..Prompt::default()
    };
    let body = request_body(&with_image, ChatRequestOptions::default());
    let parts = body["messages"][0]["content"].as_array().unwrap().clone();
    assert_eq!(parts[0]["text"], ctx);
    assert_eq!(parts[1]["text"], "what is this?");
    // Alone (a history that starts with the model's turn), it is a user message of its own.
    let alone = Prompt {
        input: vec![
            ResponseItem::user_text(ctx),
            ResponseItem::assistant_text("hello"),
        ],
        ..Prompt::default()
    };
    let body = request_body(&alone, ChatRequestOptions::default());
    assert_eq!(body["messages"][0]["content"], ctx);
    assert_eq!(body["messages"][1]["role"], "assistant");
    // A user message that only looks like context later in the conversation is left alone.
    let later = Prompt {
        input: vec![
            ResponseItem::user_text("hi"),
            ResponseItem::assistant_text("hello"),
            ResponseItem::user_text(ctx),
        ],
        ..Prompt::default()
    };
    let body = request_body(&later, ChatRequestOptions::default());
    assert_eq!(body["messages"].as_array().unwrap().len(), 3);
}

#[test]
fn reasoning_goes_back_with_tool_calls_when_the_provider_needs_it() {
    let prompt = Prompt {
        input: vec![
            ResponseItem::user_text("go"),
            ResponseItem::Reasoning {
                text: "I need ls".into(),
                encrypted_content: None,
            },
            ResponseItem::FunctionCall {
                call_id: "a".into(),
                name: "shell".into(),
                arguments: "{}".into(),
            },
            ResponseItem::FunctionCallOutput {
                call_id: "a".into(),
                output: FunctionCallOutput::text("x", true),
            },
            ResponseItem::Reasoning {
                text: "done thinking".into(),
                encrypted_content: None,
            },
            ResponseItem::assistant_text("answer"),
        ],
        ..Prompt::default()
    };
    let on = request_body(
        &prompt,
        ChatRequestOptions {
            quirks: Quirks {
                reasoning_fields: &["reasoning_content"],
                ..Quirks::default()
            },
        },
    );
    let msgs = on["messages"].as_array().unwrap();
    assert_eq!(msgs[1]["reasoning_content"], "I need ls");
    // A final answer without tool calls does not need its reasoning back.
    assert!(msgs[3].get("reasoning_content").is_none());
    let off = request_body(&prompt, ChatRequestOptions::default());
    assert!(
        off["messages"]
            .as_array()
            .unwrap()
            .iter()
            .all(|m| m.get("reasoning_content").is_none())
    );
}

fn decode_with_tools(chunks: &[&str]) -> Vec<ResponseEvent> {
    let mut d = ChatDecoder::new(vec![ToolSpec {
        name: "shell".into(),
        description: String::new(),
        parameters: json!({"type":"object"}),
    }]);
    let mut out = VecDeque::new();
    for c in chunks {
        d.on_event("message", c, &mut out).unwrap();
    }
    d.on_eof(&mut out).unwrap();
    out.into()
}

fn content_chunk(text: &str) -> String {
    json!({"choices":[{"delta":{"content": text}}]}).to_string()
}

#[test]
fn think_tags_in_content_become_reasoning_items() {
    let chunks = [
        content_chunk("<thi"),
        content_chunk("nk>plan</th"),
        content_chunk("ink>\n\nDone."),
        r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#.to_string(),
    ];
    let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
    let ev = decode_with_tools(&refs);
    assert!(
        ev.contains(&ResponseEvent::OutputItemDone(ResponseItem::Reasoning {
            text: "plan".into(),
            encrypted_content: None
        }))
    );
    assert!(ev.contains(&ResponseEvent::OutputItemDone(
        ResponseItem::assistant_text("Done.")
    )));
}

#[test]
fn reasoning_field_turns_tag_parsing_off() {
    let chunks = [
        r#"{"choices":[{"delta":{"reasoning_content":"real"}}]}"#.to_string(),
        content_chunk("Tags like </think> are text here."),
        r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#.to_string(),
    ];
    let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
    let ev = decode_with_tools(&refs);
    assert!(ev.contains(&ResponseEvent::OutputItemDone(
        ResponseItem::assistant_text("Tags like </think> are text here.")
    )));
}

#[test]
fn text_tool_calls_are_recovered_once_with_a_hint() {
    let chunks = [
        content_chunk(
            "<tool_call>\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"ls\"]}}\n</tool_call>",
        ),
        r#"{"choices":[{"delta":{},"finish_reason":"stop"}]}"#.to_string(),
    ];
    let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
    let ev = decode_with_tools(&refs);
    assert!(matches!(
        &ev[ev.len() - 3],
        ResponseEvent::ToolCallsRecoveredFromText { server_hint, .. } if server_hint.contains("--tool-call-parser hermes")
    ));
    let c = calls(&ev);
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].1, "shell");
    assert_eq!(c[0].2, r#"{"command":["ls"]}"#);
    // The markup is not kept as answer text.
    assert!(!ev.iter().any(|e| matches!(
        e,
        ResponseEvent::OutputItemDone(ResponseItem::Message { .. })
    )));
}

#[test]
fn length_finish_and_moonshot_usage() {
    let ev = decode(&[
        r#"{"choices":[{"delta":{"content":"half an ans"}}]}"#,
        r#"{"choices":[{"delta":{},"finish_reason":"length","usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}]}"#,
        "[DONE]",
    ]);
    let n = ev.len();
    assert_eq!(ev[n - 2], ResponseEvent::OutputLimitReached);
    match &ev[n - 1] {
        ResponseEvent::Completed {
            token_usage: Some(u),
            ..
        } => assert_eq!(
            (u.input_tokens, u.output_tokens, u.total_tokens),
            (7, 3, 10)
        ),
        other => panic!("expected usage, got {other:?}"),
    }
}

#[test]
fn tool_text_marks_where_each_image_was() {
    let output = FunctionCallOutput {
        content: vec![
            ContentItem::InputText {
                text: "before".into(),
            },
            ContentItem::InputImage {
                image_url: "data:image/png;base64,AAAA".into(),
            },
            ContentItem::InputText {
                text: "after".into(),
            },
        ],
        success: Some(true),
    };
    let (text, images) = tool_text_and_images("call_9", &output);
    assert_eq!(
        text,
        "before\n[image 1 of call_9] (in the next user message)\nafter"
    );
    assert_eq!(images[0]["text"], "[image 1 of call_9]:");
    assert_eq!(images[1]["image_url"]["url"], "data:image/png;base64,AAAA");
}

/// Parallel calls that share an id but not an index (seen from DeepSeek, GLM and Kimi behind
/// some proxies) are two calls, each with its own id.
#[test]
fn same_id_with_different_indices_is_two_calls() {
    let ev = decode(&[
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"shell","arguments":""}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"call_1","function":{"arguments":"{\"command\":[\"ls\"]}"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"call_1","type":"function","function":{"name":"shell","arguments":""}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":1,"id":"call_1","function":{"arguments":"{\"command\":[\"pwd\"]}"}}]}}]}"#,
        r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
    ]);
    let c = calls(&ev);
    assert_eq!(c.len(), 2, "{c:?}");
    assert_eq!(c[0].2, r#"{"command":["ls"]}"#);
    assert_eq!(c[1].2, r#"{"command":["pwd"]}"#);
    assert_eq!(c[0].0, "call_1");
    assert_ne!(c[1].0, c[0].0);
}

/// vLLM's GLM-4.7 parser sends the complete arguments again as the last delta.
#[test]
fn a_final_delta_that_resends_the_whole_arguments_is_taken_alone() {
    let ev = decode(&[
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"shell","arguments":"{\"command\": "}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"[\"ls\", \"-a\"]"}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"command\": [\"ls\", \"-a\"]}"}}]}}]}"#,
        r#"{"choices":[{"delta":{},"finish_reason":"tool_calls"}]}"#,
    ]);
    assert_eq!(calls(&ev)[0].2, r#"{"command": ["ls", "-a"]}"#);
    // Arguments cut off at the output limit stay as they are.
    let ev = decode(&[
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"a","function":{"name":"shell","arguments":"{\"command\": "}}]}}]}"#,
        r#"{"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"x\": 1}"}}]}}]}"#,
        r#"{"choices":[{"delta":{},"finish_reason":"length"}]}"#,
    ]);
    assert_eq!(calls(&ev)[0].2, r#"{"command": {"x": 1}"#);
}

#[test]
fn mistral_history_gets_ids_its_template_accepts() {
    let prompt = Prompt {
        model: "mistralai/Devstral-Small-2507".into(),
        input: vec![
            ResponseItem::user_text("go"),
            ResponseItem::FunctionCall {
                call_id: "call_0198c1f2a3b4".into(),
                name: "shell".into(),
                arguments: "{}".into(),
            },
            ResponseItem::FunctionCallOutput {
                call_id: "call_0198c1f2a3b4".into(),
                output: FunctionCallOutput::text("x", true),
            },
        ],
        ..Prompt::default()
    };
    let quirks = Quirks {
        portable_call_ids: true,
        ..Quirks::default()
    };
    let body = request_body(&prompt, ChatRequestOptions { quirks });
    let msgs = body["messages"].as_array().unwrap();
    let id = msgs[1]["tool_calls"][0]["id"].as_str().unwrap();
    assert!(crate::call_ids::is_portable(id), "{id}");
    assert_eq!(msgs[2]["tool_call_id"], id);
    // Other providers get the ids as they were.
    let body = request_body(&prompt, ChatRequestOptions::default());
    assert_eq!(
        body["messages"][1]["tool_calls"][0]["id"],
        "call_0198c1f2a3b4"
    );
}

#[test]
fn a_placeholder_stands_in_for_missing_reasoning() {
    let prompt = Prompt {
        model: "kimi-k2.5".into(),
        input: vec![
            ResponseItem::user_text("go"),
            // From another model: no reasoning before the calls.
            ResponseItem::FunctionCall {
                call_id: "a".into(),
                name: "shell".into(),
                arguments: "{}".into(),
            },
            ResponseItem::FunctionCall {
                call_id: "b".into(),
                name: "shell".into(),
                arguments: "{}".into(),
            },
        ],
        ..Prompt::default()
    };
    let quirks = Quirks {
        reasoning_fields: &["reasoning_content"],
        missing_reasoning: Some(" "),
        ..Quirks::default()
    };
    let body = request_body(&prompt, ChatRequestOptions { quirks });
    let msgs = body["messages"].as_array().unwrap();
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    assert_eq!(msgs[1]["reasoning_content"], " ");
    assert_eq!(msgs[1]["tool_calls"].as_array().unwrap().len(), 2);
}
