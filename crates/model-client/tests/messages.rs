//! The Anthropic Messages wire (`wire_api = "messages"`) against recorded event streams
//! (`oi-test-support` fixtures `anthropic/` from the API's documented shapes, `llamacpp/messages-*`
//! recorded from the real `llama-server`) and the mock's Messages mode: every event and stop
//! reason, calls split across deltas, thinking passed back, usage counted the Anthropic way,
//! and errors in that API's shapes.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

use common::{NO_HOME, Outcome, prompt, run, run_with};
use oi_model_client::{ModelClient, ModelError, ResponseEvent};
use oi_protocol::config_types::WireApi;
use oi_protocol::models::{FunctionCallOutput, ResponseItem, TokenUsage};
use oi_test_support::{MockModelServer, MockResponse, MockScript, MockTurn, fixture};
use serde_json::{Value, json};

const WIRE: WireApi = WireApi::Messages;

/// Replays `name` twice: written one event at a time, and in 7-byte pieces that split events,
/// lines and UTF-8 anywhere. Both must give the same events; returns the first outcome.
async fn replay(name: &str) -> Outcome {
    let body = fixture(name);
    let (whole, server) = run(
        MockScript::new(vec![MockResponse::recorded(body.clone())]),
        WIRE,
        |_| {},
    )
    .await;
    let (pieces, _) = run(
        MockScript::new(vec![MockResponse::recorded_in_writes_of(body, 7)]),
        WIRE,
        |_| {},
    )
    .await;
    assert_eq!(
        strip_ids(&whole.events),
        strip_ids(&pieces.events),
        "{name}: byte-split replay differs"
    );
    assert_eq!(
        whole.error.as_ref().map(ToString::to_string),
        pieces.error.as_ref().map(ToString::to_string)
    );
    let req = &server.requests()[0];
    assert!(req.path.ends_with("/v1/messages"), "{}", req.path);
    assert_eq!(req.header("anthropic-version"), Some("2023-06-01"));
    whole
}

/// Events with synthesized call ids blanked (they are random per run).
fn strip_ids(events: &[ResponseEvent]) -> Vec<ResponseEvent> {
    events
        .iter()
        .cloned()
        .map(|e| match e {
            ResponseEvent::OutputItemDone(ResponseItem::FunctionCall {
                call_id,
                name,
                arguments,
            }) if !call_id.starts_with("toolu_") => {
                ResponseEvent::OutputItemDone(ResponseItem::FunctionCall {
                    call_id: String::new(),
                    name,
                    arguments,
                })
            }
            other => other,
        })
        .collect()
}

fn usage(out: &Outcome) -> TokenUsage {
    match out.completed() {
        Some(ResponseEvent::Completed {
            token_usage: Some(u),
            ..
        }) => *u,
        other => panic!("no usage: {other:?}"),
    }
}

#[tokio::test]
async fn tool_use_split_across_json_deltas_with_a_ping_and_cache_usage() {
    let out = replay("anthropic/tool-use-split-json.sse").await;
    out.ok();
    assert_eq!(out.text_deltas(), "I'll list the files.");
    let calls = out.calls();
    assert_eq!(calls.len(), 1);
    let (id, name, args) = &calls[0];
    assert_eq!(
        (id.as_str(), name.as_str()),
        ("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "shell")
    );
    let args: Value = serde_json::from_str(args).unwrap();
    assert_eq!(args, json!({"command": ["ls", "-la", "dir \"x\""]}));
    // The prompt is the uncached part, the part written to the cache and the part read
    // from it: 472 + 123 + 1500. Reading `input_tokens` alone would take a cache hit for a
    // prompt the server cut.
    let u = usage(&out);
    assert_eq!(u.input_tokens, 2095);
    assert_eq!(u.cached_input_tokens, 1500);
    assert_eq!(u.output_tokens, 89);
    assert_eq!(u.total_tokens, 2095 + 89);
    // Text comes before the call, and the stream ends with Completed.
    let kinds: Vec<&str> = out
        .items()
        .iter()
        .map(|i| match i {
            ResponseItem::Message { .. } => "message",
            ResponseItem::FunctionCall { .. } => "call",
            _ => "other",
        })
        .collect();
    assert_eq!(kinds, ["message", "call"]);
}

#[tokio::test]
async fn thinking_with_signature_goes_back_unchanged_with_the_tool_result() {
    let body = fixture("anthropic/thinking-signature-tool-use.sse");
    let server = MockModelServer::start(MockScript::new(vec![
        MockResponse::recorded(body),
        MockTurn::text("done").into(),
    ]))
    .await
    .unwrap();
    let client = ModelClient::new(server.provider(WIRE), "mock".into(), NO_HOME.as_ref()).unwrap();
    let mut p = prompt();
    let first = run_with(&client, &p).await;
    first.ok();
    assert_eq!(
        first.reasoning_deltas(),
        "I should look at the files first."
    );
    let items = first.items();
    assert!(
        matches!(&items[0], ResponseItem::Reasoning { text, encrypted_content: Some(_) } if text == "I should look at the files first."),
        "{items:?}"
    );
    p.input.extend(items);
    for (call_id, _, _) in first.calls() {
        p.input.push(ResponseItem::FunctionCallOutput {
            call_id,
            output: FunctionCallOutput::text("a.txt", true),
        });
    }
    // The mock refuses what the API refuses (roles out of turn, a result without its call).
    run_with(&client, &p).await.ok();
    let req = &server.requests()[1];
    let thinking = req.blocks("thinking");
    assert_eq!(thinking.len(), 1);
    assert_eq!(thinking[0]["thinking"], "I should look at the files first.");
    assert_eq!(
        thinking[0]["signature"],
        "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pk"
    );
    let redacted = req.blocks("redacted_thinking");
    assert_eq!(
        redacted[0]["data"],
        "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"
    );
    // Thinking opens the assistant message that holds the call.
    let assistant = &req.items()[1];
    assert_eq!(assistant["content"][0]["type"], "thinking");
    assert_eq!(assistant["content"][2]["type"], "tool_use");
    assert_eq!(
        req.tool_outputs(),
        vec![("toolu_01ThinkCall".to_string(), "a.txt".to_string())]
    );
}

#[tokio::test]
async fn an_overloaded_error_mid_stream_is_a_retryable_disconnect() {
    let out = replay("anthropic/overloaded-mid-stream.sse").await;
    assert_eq!(out.text_deltas(), "Let me");
    let err = out.err();
    assert!(err.is_retryable_stream_error(), "{err:?}");
    assert!(err.to_string().contains("overloaded_error"), "{err}");
    assert!(out.completed().is_none());
}

#[tokio::test]
async fn max_tokens_cuts_off_a_call() {
    let out = replay("anthropic/max-tokens-in-tool-use.sse").await;
    out.ok();
    assert!(out.events.contains(&ResponseEvent::OutputLimitReached));
    let calls = out.calls();
    // The cut-off arguments are kept verbatim (the engine answers them "not run").
    assert!(calls[0].2.starts_with("{\"command\""), "{calls:?}");
    assert!(serde_json::from_str::<Value>(&calls[0].2).is_err());
}

#[tokio::test]
async fn a_refusal_is_an_error_and_keeps_nothing() {
    let out = replay("anthropic/refusal.sse").await;
    let err = out.err();
    assert!(matches!(err, ModelError::Provider(_)), "{err:?}");
    assert!(err.to_string().contains("refusal"), "{err}");
    assert!(out.items().is_empty(), "{:?}", out.items());
}

#[tokio::test]
async fn pause_turn_asks_for_the_conversation_again() {
    let out = replay("anthropic/pause-turn.sse").await;
    out.ok();
    let n = out.events.len();
    assert_eq!(out.events[n - 2], ResponseEvent::Paused);
    assert_eq!(out.text_deltas(), "Searching, part one.");
}

#[tokio::test]
async fn a_too_long_prompt_in_the_stream_is_a_context_overflow() {
    let out = replay("anthropic/prompt-too-long-error-event.sse").await;
    let overflow = out.err().context_overflow().expect("an overflow");
    assert_eq!(overflow.window, Some(200_000));
}

#[tokio::test]
async fn llama_server_cache_hit_counts_the_whole_prompt_and_its_text_call_is_recovered() {
    let out = replay("llamacpp/messages-cache-hit-text-tool-call.sse").await;
    out.ok();
    let u = usage(&out);
    // Recorded: input_tokens 1, cache_read_input_tokens 179.
    assert_eq!((u.input_tokens, u.cached_input_tokens), (180, 179));
    assert!(
        out.events
            .iter()
            .any(|e| matches!(e, ResponseEvent::ToolCallsRecoveredFromText { .. }))
    );
    let calls = out.calls();
    assert_eq!(calls.len(), 1, "{calls:?}");
    assert_eq!(calls[0].1, "shell");
    let args: Value = serde_json::from_str(&calls[0].2).unwrap();
    assert_eq!(args["command"], json!(["ls"]));
}

#[tokio::test]
async fn llama_server_text_answer() {
    let out = replay("llamacpp/messages-text.sse").await;
    out.ok();
    assert_eq!(out.text_deltas(), "Hello.");
    assert_eq!(usage(&out).input_tokens, 23);
    assert_eq!(out.items(), vec![ResponseItem::assistant_text("Hello.")]);
}

#[tokio::test]
async fn rate_limit_error_is_retried_after_retry_after() {
    let limited = MockResponse::Error {
        status: 429,
        body: r#"{"type":"error","error":{"type":"rate_limit_error","message":"Number of request tokens has exceeded your per-minute rate limit"}}"#.into(),
        retry_after: Some("0".into()),
        retry_after_ms: None,
    };
    let overloaded = MockResponse::error(
        529,
        r#"{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}"#,
    );
    let script = MockScript::new(vec![limited, overloaded, MockTurn::text("after").into()]);
    let (out, server) = run(script, WIRE, |p| p.request_max_retries = Some(3)).await;
    out.ok();
    assert_eq!(out.text_deltas(), "after");
    assert_eq!(server.requests().len(), 3);
    assert_eq!(out.retries[0].delay, std::time::Duration::ZERO);
    assert!(
        out.retries[0].reason.contains("rate limit"),
        "{:?}",
        out.retries
    );
    assert!(
        out.retries[1].reason.contains("Overloaded"),
        "{:?}",
        out.retries
    );
}

#[tokio::test]
async fn context_too_long_answer_is_an_overflow_with_the_window() {
    // The mock answers an over-window request as the API does (HTTP 400
    // invalid_request_error, "prompt is too long: N tokens > 300 maximum").
    let server = MockModelServer::start(MockScript::default().with_context_window(300))
        .await
        .unwrap();
    let client = ModelClient::new(server.provider(WIRE), "mock".into(), NO_HOME.as_ref()).unwrap();
    let mut p = prompt();
    p.input.push(ResponseItem::user_text("word ".repeat(400)));
    let out = run_with(&client, &p).await;
    let err = out.err();
    assert_eq!(err.http_status(), Some(400));
    assert_eq!(
        err.context_overflow().and_then(|o| o.window),
        Some(300),
        "{err}"
    );
}

#[tokio::test]
async fn mock_turns_stream_as_messages_events() {
    let turn = MockTurn {
        chunk_size: Some(3),
        usage: Some(TokenUsage {
            input_tokens: 1000,
            cached_input_tokens: 900,
            output_tokens: 20,
            reasoning_output_tokens: 0,
            total_tokens: 1020,
        }),
        ..MockTurn::tool_call("shell", json!({"command": ["echo", "hi there"]}))
            .with_reasoning("plan it")
            .with_text("On it.")
    };
    let (out, server) = run(MockScript::turns([turn]), WIRE, |_| {}).await;
    out.ok();
    assert_eq!(out.reasoning_deltas(), "plan it");
    assert_eq!(out.text_deltas(), "On it.");
    let args: Value = serde_json::from_str(&out.calls()[0].2).unwrap();
    assert_eq!(args["command"][1], "hi there");
    let u = usage(&out);
    assert_eq!((u.input_tokens, u.cached_input_tokens), (1000, 900));
    let req = &server.requests()[0];
    assert_eq!(req.body["system"][0]["text"], "You are a test.");
    assert_eq!(req.body["tools"][0]["name"], "shell");
    assert_eq!(req.last_user_text().as_deref(), Some("hello"));
}

#[tokio::test]
async fn the_mock_refuses_a_result_without_its_call_as_the_api_does() {
    let server = MockModelServer::start(MockScript::turns([MockTurn::text("x")]))
        .await
        .unwrap();
    let client = ModelClient::new(server.provider(WIRE), "mock".into(), NO_HOME.as_ref()).unwrap();
    let mut p = prompt();
    p.input.push(ResponseItem::FunctionCallOutput {
        call_id: "nowhere".into(),
        output: FunctionCallOutput::text("x", true),
    });
    let out = run_with(&client, &p).await;
    let err = out.err();
    assert_eq!(err.http_status(), Some(400));
    assert!(err.to_string().contains("tool_use_id"), "{err}");
}
