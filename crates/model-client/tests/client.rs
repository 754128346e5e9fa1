//! The client against the scripted mock model, over both wire APIs.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

use std::time::Duration;

use common::{WAIT, WIRES, prompt, run, run_with};
use futures::StreamExt;
use oi_model_client::{ModelClient, ModelError, ResponseEvent};
use oi_protocol::config_types::WireApi;
use oi_protocol::models::{ContentItem, FunctionCallOutput, ResponseItem, Role, TokenUsage};
use oi_test_support::{MockModelServer, MockResponse, MockScript, MockTurn};
use serde_json::json;

#[tokio::test]
async fn streams_text() {
    for wire in WIRES {
        let (out, server) = run(
            MockScript::turns([MockTurn::text("Hello there, world").chunked(3)]),
            wire,
            |_| {},
        )
        .await;
        out.ok();
        assert_eq!(
            out.events.first(),
            Some(&ResponseEvent::Created),
            "{wire:?}"
        );
        assert_eq!(out.text_deltas(), "Hello there, world", "{wire:?}");
        let deltas = out
            .events
            .iter()
            .filter(|e| matches!(e, ResponseEvent::OutputTextDelta(_)))
            .count();
        assert_eq!(deltas, 6, "{wire:?}: one delta per 3-char chunk");
        assert_eq!(
            out.items(),
            vec![ResponseItem::assistant_text("Hello there, world")],
            "{wire:?}"
        );
        assert_eq!(server.requests().len(), 1);
    }
}

#[tokio::test]
async fn tool_call_split_across_chunks() {
    let args = json!({"command": ["ls", "-la"], "workdir": "/tmp"}).to_string();
    for wire in WIRES {
        let turn = MockTurn::tool_call("shell", serde_json::from_str(&args).unwrap())
            .with_call_id("call_abc")
            .chunked(4);
        let (out, _server) = run(MockScript::turns([turn]), wire, |_| {}).await;
        out.ok();
        assert_eq!(
            out.calls(),
            vec![("call_abc".to_string(), "shell".to_string(), args.clone())],
            "{wire:?}"
        );
    }
}

#[tokio::test]
async fn whole_tool_calls_in_one_chunk_each() {
    for wire in WIRES {
        let turn = MockTurn::text("Running both.")
            .with_tool_call("shell", json!({"command": ["pwd"]}))
            .with_tool_call("apply_patch", json!({"input": "*** Begin Patch"}))
            .whole_calls();
        let (out, _server) = run(MockScript::turns([turn]), wire, |_| {}).await;
        out.ok();
        let calls = out.calls();
        let names: Vec<&str> = calls.iter().map(|c| c.1.as_str()).collect();
        assert_eq!(names, ["shell", "apply_patch"], "{wire:?}");
        assert_eq!(calls[0].2, r#"{"command":["pwd"]}"#);
        // Text message first, then the calls in order.
        assert!(matches!(
            out.items()[0],
            ResponseItem::Message {
                role: Role::Assistant,
                ..
            }
        ));
    }
}

#[tokio::test]
async fn missing_ids_are_synthesized() {
    for wire in WIRES {
        let turn = MockTurn::tool_call("shell", json!({"command": ["a"]}))
            .with_tool_call("shell", json!({"command": ["b"]}))
            .without_call_ids()
            .chunked(5);
        let (out, _server) = run(MockScript::turns([turn]), wire, |_| {}).await;
        out.ok();
        let calls = out.calls();
        assert_eq!(calls.len(), 2, "{wire:?}");
        for (id, _, _) in &calls {
            assert!(common::portable_id(id), "{wire:?}: {id}");
        }
        assert_ne!(calls[0].0, calls[1].0);
        assert_eq!(calls[1].2, r#"{"command":["b"]}"#);
    }
}

#[tokio::test]
async fn chat_calls_without_index_or_id() {
    for whole in [false, true] {
        let mut turn = MockTurn::tool_call("shell", json!({"command": ["ls"]}))
            .without_call_ids()
            .without_call_index()
            .chunked(3);
        turn.whole_tool_calls = whole;
        let (out, _server) = run(MockScript::turns([turn]), WireApi::Chat, |_| {}).await;
        out.ok();
        let calls = out.calls();
        assert_eq!(calls.len(), 1, "whole={whole}");
        assert_eq!(calls[0].1, "shell");
        assert_eq!(calls[0].2, r#"{"command":["ls"]}"#);
        assert!(common::portable_id(&calls[0].0));
    }
}

#[tokio::test]
async fn invalid_json_arguments_pass_through_verbatim() {
    let raw = r#"{"command": ["ls", "-la"], oops"#;
    for wire in WIRES {
        let (out, _server) = run(
            MockScript::turns([MockTurn::tool_call_raw("shell", raw).chunked(6)]),
            wire,
            |_| {},
        )
        .await;
        out.ok();
        assert_eq!(out.calls()[0].2, raw, "{wire:?}");
    }
}

#[tokio::test]
async fn reasoning_deltas_become_reasoning_items() {
    let cases = [
        (WireApi::Chat, Some("reasoning_content")),
        (WireApi::Chat, Some("reasoning")),
        (WireApi::Responses, None),
    ];
    for (wire, field) in cases {
        let mut turn = MockTurn::text("The answer is 4.")
            .with_reasoning("2 plus 2 is 4.")
            .chunked(5);
        turn.reasoning_field = field.map(str::to_string);
        let (out, _server) = run(MockScript::turns([turn]), wire, |_| {}).await;
        out.ok();
        assert_eq!(
            out.reasoning_deltas(),
            "2 plus 2 is 4.",
            "{wire:?} {field:?}"
        );
        let items = out.items();
        assert_eq!(
            items[0],
            ResponseItem::Reasoning {
                text: "2 plus 2 is 4.".into(),
                encrypted_content: None
            }
        );
        assert_eq!(items[1], ResponseItem::assistant_text("The answer is 4."));
        // Reasoning deltas come before text deltas.
        let first_reasoning = out
            .events
            .iter()
            .position(|e| matches!(e, ResponseEvent::ReasoningDelta(_)));
        let first_text = out
            .events
            .iter()
            .position(|e| matches!(e, ResponseEvent::OutputTextDelta(_)));
        assert!(first_reasoning < first_text);
    }
}

#[tokio::test]
async fn usage_is_parsed() {
    let usage = TokenUsage {
        input_tokens: 120,
        cached_input_tokens: 100,
        output_tokens: 30,
        reasoning_output_tokens: 7,
        total_tokens: 150,
    };
    for wire in WIRES {
        let (out, _server) = run(
            MockScript::turns([MockTurn::text("ok").with_usage(usage)]),
            wire,
            |_| {},
        )
        .await;
        out.ok();
        match out.completed() {
            Some(ResponseEvent::Completed {
                response_id,
                token_usage,
            }) => {
                assert_eq!(token_usage.as_ref(), Some(&usage), "{wire:?}");
                assert!(response_id.as_deref().is_some_and(|id| id.contains("mock")));
            }
            other => panic!("{other:?}"),
        }
    }
}

#[tokio::test]
async fn retries_429_honouring_retry_after() {
    for wire in WIRES {
        let script = MockScript::new(vec![
            MockResponse::rate_limited("0"),
            MockTurn::text("after retry").into(),
        ]);
        let (out, server) = run(script, wire, |p| p.request_max_retries = Some(3)).await;
        out.ok();
        assert_eq!(out.text_deltas(), "after retry");
        assert_eq!(server.requests().len(), 2, "{wire:?}");
        assert_eq!(out.retries.len(), 1);
        let notice = &out.retries[0];
        assert_eq!((notice.attempt, notice.max_attempts), (1, 3));
        // `Retry-After: 0` replaces the (≥180 ms) backoff.
        assert_eq!(notice.delay, Duration::ZERO);
        assert!(notice.reason.contains("429"), "{}", notice.reason);
        assert!(
            notice.reason.contains("Rate limit reached"),
            "{}",
            notice.reason
        );
    }
}

#[tokio::test]
async fn server_errors_exhaust_retries() {
    let script = MockScript::default().with_fallback(MockResponse::error(
        503,
        r#"{"error":{"message":"backend exploded"}}"#,
    ));
    let (out, server) = run(script, WireApi::Chat, |p| p.request_max_retries = Some(1)).await;
    let err = out.err();
    assert_eq!(err.http_status(), Some(503));
    let msg = err.to_string();
    assert!(msg.contains("backend exploded"), "{msg}");
    assert!(msg.contains("503"), "{msg}");
    assert!(msg.contains("retries"), "{msg}");
    assert!(!err.is_retryable_stream_error());
    assert_eq!(server.requests().len(), 2);
    assert_eq!(out.retries.len(), 1);
    assert!(
        out.retries[0].delay > Duration::ZERO,
        "backoff without Retry-After"
    );
}

#[tokio::test]
async fn exhausted_script_is_a_clear_http_error() {
    let (out, _server) = run(MockScript::default(), WireApi::Responses, |_| {}).await;
    let msg = out.err().to_string();
    assert!(msg.contains("mock script exhausted"), "{msg}");
}

#[tokio::test]
async fn client_errors_are_not_retried() {
    let script = MockScript::default().with_fallback(MockResponse::error(
        404,
        r#"{"error":{"message":"model 'nope' not found"}}"#,
    ));
    let (out, server) = run(script, WireApi::Chat, |p| p.request_max_retries = Some(3)).await;
    let msg = out.err().to_string();
    assert_eq!(out.err().http_status(), Some(404));
    assert!(
        msg.contains("not found") && msg.contains("base_url"),
        "{msg}"
    );
    assert_eq!(server.requests().len(), 1);
    assert!(out.retries.is_empty());
}

#[tokio::test]
async fn unreachable_endpoint_is_a_connect_error() {
    // A port that was free a moment ago and has no listener now.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    for wire in WIRES {
        let server = MockModelServer::start(MockScript::default()).await.unwrap();
        let mut provider = server.provider(wire);
        provider.base_url = Some(format!("http://127.0.0.1:{port}/v1"));
        provider.request_max_retries = Some(1);
        let client = ModelClient::new(
            provider,
            "local".into(),
            std::path::Path::new(common::NO_HOME),
        )
        .unwrap();
        let out = run_with(&client, &prompt()).await;
        let err = out.err();
        assert!(matches!(err, ModelError::Connect(_)), "{err:?}");
        let msg = err.to_string();
        let path = match wire {
            WireApi::Chat => "chat/completions",
            WireApi::Responses => "responses",
            WireApi::Messages => "messages",
        };
        assert!(
            msg.contains(&format!("http://127.0.0.1:{port}/v1/{path}")),
            "{msg}"
        );
        assert!(msg.contains("running"), "{msg}");
        assert_eq!(out.retries.len(), 1, "connect errors are retried");
    }
}

#[tokio::test]
async fn non_sse_answer_is_a_bad_response() {
    for wire in WIRES {
        let script = MockScript::new(vec![MockResponse::not_sse(
            200,
            "text/html; charset=utf-8",
            "<html><body>Welcome to nginx!</body></html>",
        )]);
        let (out, _server) = run(script, wire, |_| {}).await;
        let err = out.err();
        assert!(matches!(err, ModelError::BadResponse(_)), "{err:?}");
        let msg = err.to_string();
        assert!(msg.contains("text/html") && msg.contains("nginx"), "{msg}");
        assert!(msg.contains("base_url"), "{msg}");
    }
}

/// A `data:` line that is not JSON ends the stream with a clear error (it is not skipped:
/// skipping could silently lose part of an answer).
#[tokio::test]
async fn malformed_data_line_is_a_clear_error() {
    for wire in WIRES {
        let turn = MockTurn::text("hello").with_malformed_line();
        let (out, _server) = run(MockScript::turns([turn]), wire, |_| {}).await;
        let err = out.err();
        assert!(matches!(err, ModelError::BadResponse(_)), "{err:?}");
        assert!(err.to_string().contains("not valid JSON"), "{err}");
        assert!(out.completed().is_none());
    }
}

#[tokio::test]
async fn mid_stream_disconnect() {
    for wire in WIRES {
        let turn = MockTurn::text("a long answer that gets cut")
            .chunked(2)
            .disconnect_after(4);
        let (out, _server) = run(MockScript::turns([turn]), wire, |_| {}).await;
        let err = out.err();
        assert!(
            matches!(err, ModelError::StreamDisconnected(_)),
            "{wire:?}: {err:?}"
        );
        assert!(err.is_retryable_stream_error());
        assert!(
            !out.text_deltas().is_empty(),
            "deltas before the cut arrive"
        );
    }
}

#[tokio::test]
async fn chat_end_after_finish_reason_without_done_is_fine() {
    let turn = MockTurn::text("done").without_done();
    let (out, _server) = run(MockScript::turns([turn]), WireApi::Chat, |_| {}).await;
    out.ok();
    assert_eq!(out.items(), vec![ResponseItem::assistant_text("done")]);
}

#[tokio::test]
async fn responses_end_without_completed_is_a_disconnect() {
    let turn = MockTurn::text("done").without_done();
    let (out, _server) = run(MockScript::turns([turn]), WireApi::Responses, |_| {}).await;
    assert!(matches!(out.err(), ModelError::StreamDisconnected(_)));
}

#[tokio::test]
async fn idle_stream_times_out() {
    for wire in WIRES {
        let turn = MockTurn::text("never finished").chunked(2).stall_after(2);
        let (out, _server) = run(MockScript::turns([turn]), wire, |p| {
            p.stream_idle_timeout_ms = Some(150)
        })
        .await;
        let err = out.err();
        assert!(matches!(err, ModelError::IdleTimeout(_)), "{err:?}");
        assert!(err.is_retryable_stream_error());
        assert!(err.to_string().contains("stream_idle_timeout_ms"), "{err}");
    }
}

#[tokio::test]
async fn dropping_the_stream_interrupts_and_the_client_stays_usable() {
    let script = MockScript::turns([
        MockTurn::text("endless").chunked(1).stall_after(3),
        MockTurn::text("second"),
    ]);
    let server = MockModelServer::start(script).await.unwrap();
    let client = ModelClient::new(
        server.provider(WireApi::Chat),
        "mock".into(),
        std::path::Path::new(common::NO_HOME),
    )
    .unwrap();
    let mut stream = client.stream(&prompt(), &|_| {}).await.unwrap();
    assert_eq!(
        stream.next().await.unwrap().unwrap(),
        ResponseEvent::Created
    );
    drop(stream);
    let out = run_with(&client, &prompt()).await;
    out.ok();
    assert_eq!(out.text_deltas(), "second");
}

#[tokio::test]
async fn dropping_the_request_future_cancels_a_pending_retry() {
    // The server asks for a 100 s pause; aborting must not wait for it.
    let server = MockModelServer::start(
        MockScript::default().with_fallback(MockResponse::rate_limited("100")),
    )
    .await
    .unwrap();
    let mut provider = server.provider(WireApi::Chat);
    provider.request_max_retries = Some(5);
    let client = ModelClient::new(
        provider,
        "mock".into(),
        std::path::Path::new(common::NO_HOME),
    )
    .unwrap();
    let (retry_tx, retry_rx) = tokio::sync::oneshot::channel();
    let retry_tx = std::sync::Mutex::new(Some(retry_tx));
    let task = tokio::spawn(async move {
        let on_retry = move |n: oi_model_client::RetryNotice| {
            if let Some(tx) = retry_tx.lock().unwrap().take() {
                let _ = tx.send(n);
            }
        };
        client.stream(&prompt(), &on_retry).await.map(|_| ())
    });
    let notice = retry_rx.await.unwrap();
    assert_eq!(notice.delay, Duration::from_secs(100));
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    assert_eq!(server.requests().len(), 1);
}

#[tokio::test]
async fn rate_limit_headers_are_recorded() {
    let turn = MockTurn::text("ok")
        .with_header("x-ratelimit-limit-requests", "200")
        .with_header("x-ratelimit-remaining-requests", "150")
        .with_header("x-ratelimit-limit-tokens", "1000")
        .with_header("x-ratelimit-remaining-tokens", "900");
    let server = MockModelServer::start(MockScript::turns([turn]))
        .await
        .unwrap();
    let client = ModelClient::new(
        server.provider(WireApi::Chat),
        "mock".into(),
        std::path::Path::new(common::NO_HOME),
    )
    .unwrap();
    assert!(client.rate_limits().is_none());
    run_with(&client, &prompt()).await.ok();
    let snap = client.rate_limits().unwrap();
    assert_eq!(snap.primary.unwrap().used_percent, 25.0);
    assert!((snap.secondary.unwrap().used_percent - 10.0).abs() < 1e-9);
    assert_eq!(snap.headers.len(), 4);
    assert_eq!(client.provider_id(), "mock");
}

fn history() -> Vec<ResponseItem> {
    vec![
        ResponseItem::developer_text("Follow the repo rules."),
        ResponseItem::user_text("list and show the logo"),
        ResponseItem::Reasoning {
            text: "I should list.".into(),
            encrypted_content: None,
        },
        ResponseItem::FunctionCall {
            call_id: "call_1".into(),
            name: "shell".into(),
            arguments: r#"{"command":["ls"]}"#.into(),
        },
        ResponseItem::FunctionCall {
            call_id: "call_2".into(),
            name: "view_image".into(),
            arguments: r#"{"path":"logo.png"}"#.into(),
        },
        ResponseItem::FunctionCallOutput {
            call_id: "call_1".into(),
            output: FunctionCallOutput::text("logo.png\nREADME.md", true),
        },
        ResponseItem::FunctionCallOutput {
            call_id: "call_2".into(),
            output: FunctionCallOutput {
                content: vec![ContentItem::InputImage {
                    image_url: "data:image/png;base64,iVBOR".into(),
                }],
                success: Some(true),
            },
        },
    ]
}

#[tokio::test]
async fn chat_request_shape() {
    let server = MockModelServer::start(MockScript::always(MockTurn::text("ok")))
        .await
        .unwrap();
    let mut provider = server.provider(WireApi::Chat);
    provider.http_headers = Some([("X-Static".to_string(), "yes".to_string())].into());
    provider.query_params = Some([("api-version".to_string(), "2025-01".to_string())].into());
    let client = ModelClient::new(
        provider,
        "mock".into(),
        std::path::Path::new(common::NO_HOME),
    )
    .unwrap();
    let mut p = prompt();
    p.input = history();
    p.reasoning_effort = Some(oi_protocol::config_types::ReasoningEffort::Low);
    run_with(&client, &p).await.ok();

    let reqs = server.wait_for_requests(1, WAIT).await;
    let req = &reqs[0];
    assert_eq!(req.path, "/v1/chat/completions");
    assert_eq!(req.query.as_deref(), Some("api-version=2025-01"));
    assert_eq!(req.header("x-static"), Some("yes"));
    assert_eq!(req.header("accept"), Some("text/event-stream"));
    assert_eq!(
        req.header("authorization"),
        None,
        "no env_key, no auth header"
    );
    let body = &req.body;
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"]["include_usage"], true);
    assert_eq!(body["reasoning_effort"], "low");
    assert_eq!(body["model"], "mock-model");
    assert_eq!(req.tool_names(), ["shell"]);
    assert_eq!(body["tools"][0]["type"], "function");
    assert_eq!(body["tools"][0]["function"]["parameters"]["type"], "object");

    let msgs = body["messages"].as_array().unwrap();
    let roles: Vec<&str> = msgs.iter().map(|m| m["role"].as_str().unwrap()).collect();
    // Exactly one system message: the instructions, then the developer context.
    assert_eq!(
        roles,
        ["system", "user", "assistant", "tool", "tool", "user"]
    );
    assert_eq!(
        msgs[0]["content"],
        "You are a test.\n\nFollow the repo rules."
    );
    assert_eq!(
        msgs[2]["tool_calls"].as_array().unwrap().len(),
        2,
        "calls grouped"
    );
    assert_eq!(msgs[2]["tool_calls"][1]["id"], "call_2");
    assert_eq!(
        msgs[5]["content"][1]["image_url"]["url"],
        "data:image/png;base64,iVBOR"
    );
    assert!(
        !req.all_text().contains("I should list."),
        "reasoning not sent"
    );
    let outputs = req.tool_outputs();
    assert_eq!(
        outputs[0],
        ("call_1".to_string(), "logo.png\nREADME.md".to_string())
    );
    assert_eq!(outputs.len(), 2);
    // The tool text marks the image's place; the image follows with the same label.
    assert_eq!(
        outputs[1],
        (
            "call_2".to_string(),
            "[image 1 of call_2] (in the next user message)".to_string()
        )
    );
    assert_eq!(
        req.last_user_text().as_deref(),
        Some("[image 1 of call_2]:")
    );
}

#[tokio::test]
async fn responses_request_shape() {
    let server = MockModelServer::start(MockScript::always(MockTurn::text("ok")))
        .await
        .unwrap();
    let client = ModelClient::new(
        server.provider(WireApi::Responses),
        "mock".into(),
        std::path::Path::new(common::NO_HOME),
    )
    .unwrap();
    let mut p = prompt();
    p.input = history();
    p.input.push(ResponseItem::Reasoning {
        text: "kept".into(),
        encrypted_content: Some("opaque".into()),
    });
    p.input.push(ResponseItem::assistant_text("Here it is."));
    p.reasoning_effort = Some(oi_protocol::config_types::ReasoningEffort::High);
    run_with(&client, &p).await.ok();

    let req = &server.requests()[0];
    assert_eq!(req.path, "/v1/responses");
    assert_eq!(req.query, None, "no stray `?` without query_params");
    let body = &req.body;
    assert_eq!(body["instructions"], "You are a test.");
    assert_eq!(body["store"], false);
    assert_eq!(body["stream"], true);
    assert_eq!(body["reasoning"]["effort"], "high");
    assert_eq!(body["tools"][0]["name"], "shell");
    assert_eq!(body["tools"][0]["strict"], false);
    let types: Vec<&str> = body["input"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        [
            "message",
            "message",
            "function_call",
            "function_call",
            "function_call_output",
            "function_call_output",
            "reasoning",
            "message"
        ],
        "reasoning without encrypted_content is skipped"
    );
    let input = body["input"].as_array().unwrap();
    assert_eq!(input[0]["role"], "developer");
    assert_eq!(input[1]["content"][0]["type"], "input_text");
    assert_eq!(input[4]["output"], "logo.png\nREADME.md");
    assert_eq!(input[5]["output"][0]["type"], "input_image");
    assert_eq!(input[6]["encrypted_content"], "opaque");
    assert_eq!(input[7]["content"][0]["type"], "output_text");
    assert_eq!(req.tool_outputs()[0].1, "logo.png\nREADME.md");
    assert_eq!(
        req.last_user_text().as_deref(),
        Some("list and show the logo")
    );
    assert_eq!(req.function_calls()[1].1, "view_image");
}
