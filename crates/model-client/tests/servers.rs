//! The client against the recorded streams of real servers (`oi-test-support` fixtures),
//! each replayed whole-event-per-write and cut into small byte writes (which splits lines,
//! tags and multi-byte characters the way a network can).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

use common::{prompt, run, run_with};
use oi_model_client::{ModelClient, ModelError, ResponseEvent};
use oi_protocol::config_types::WireApi;
use oi_protocol::models::{FunctionCallOutput, ResponseItem};
use oi_test_support::{MockModelServer, MockResponse, MockScript, fixture};
use serde_json::{Value, json};

/// Replays `name` over `wire`, once per write pattern, and returns every outcome.
async fn replay(name: &str, wire: WireApi) -> Vec<common::Outcome> {
    let body = fixture(name);
    let mut outcomes = Vec::new();
    for response in [
        MockResponse::recorded(body.clone()),
        MockResponse::recorded_in_writes_of(body.clone(), 7),
        MockResponse::recorded_in_writes_of(body.clone(), 1),
    ] {
        let (out, _server) = run(MockScript::new(vec![response]), wire, |_| {}).await;
        outcomes.push(out);
    }
    outcomes
}

fn answer(out: &common::Outcome) -> Option<String> {
    out.items().into_iter().find_map(|i| match i {
        ResponseItem::Message { .. } => i.message_text(),
        _ => None,
    })
}

fn reasoning(out: &common::Outcome) -> Option<String> {
    out.items().into_iter().find_map(|i| match i {
        ResponseItem::Reasoning { text, .. } => Some(text),
        _ => None,
    })
}

fn recovered_hint(out: &common::Outcome) -> Option<String> {
    out.events.iter().find_map(|e| match e {
        ResponseEvent::ToolCallsRecoveredFromText { server_hint, .. } => Some(server_hint.clone()),
        _ => None,
    })
}

fn args(call: &(String, String, String)) -> Value {
    serde_json::from_str(&call.2).expect("recovered arguments are JSON")
}

#[tokio::test]
async fn text_tool_calls_of_each_family_become_real_calls() {
    for (fixture, hint) in [
        (
            "vllm/hermes-text-tool-call.sse",
            "--tool-call-parser hermes",
        ),
        (
            "vllm/qwen3-coder-text-tool-call.sse",
            "--tool-call-parser qwen3_coder",
        ),
        ("vllm/glm45-text-tool-call.sse", "--tool-call-parser glm45"),
        (
            "vllm/kimi-k2-text-tool-call.sse",
            "--tool-call-parser kimi_k2",
        ),
        ("llamacpp/no-jinja-hermes-text-tool-call.sse", "--jinja"),
        (
            "vllm/mistral-text-tool-call.sse",
            "--tool-call-parser mistral",
        ),
        ("llamacpp/llama31-python-tag-text-tool-call.sse", "--jinja"),
        (
            "vllm/deepseek-v3-text-tool-call.sse",
            "--tool-call-parser deepseek_v3",
        ),
        (
            "llamacpp/gpt-oss-harmony-no-jinja.sse",
            "--tool-call-parser openai",
        ),
    ] {
        for out in replay(fixture, WireApi::Chat).await {
            out.ok();
            let calls = out.calls();
            assert_eq!(calls.len(), 1, "{fixture}: {:?}", out.events);
            assert_eq!(calls[0].1, "shell", "{fixture}");
            assert!(
                common::portable_id(&calls[0].0),
                "{fixture}: synthesized id"
            );
            let command = args(&calls[0])["command"].clone();
            assert!(
                command == json!(["ls", "-a"]) || command == json!(["ls"]),
                "{fixture}: {command}"
            );
            let h = recovered_hint(&out).unwrap_or_default();
            assert!(h.contains(hint), "{fixture}: hint {h:?}");
            // The markup does not stay in the answer.
            let text = answer(&out).unwrap_or_default();
            assert!(
                !text.contains("tool_call")
                    && !text.contains("<function=")
                    && !text.contains("<|")
                    && !text.contains("<｜")
                    && !text.contains("[TOOL_CALLS]"),
                "{fixture}: {text:?}"
            );
        }
    }
}

#[tokio::test]
async fn glm_thinking_and_call_in_one_content_stream() {
    for out in replay("vllm/glm45-text-tool-call.sse", WireApi::Chat).await {
        assert_eq!(
            reasoning(&out).as_deref(),
            Some("The user wants the files listed.")
        );
        assert_eq!(out.reasoning_deltas(), "The user wants the files listed.");
    }
}

#[tokio::test]
async fn a_quoted_format_is_never_a_call() {
    for out in replay("vllm/quoted-tool-call-in-code-block.sse", WireApi::Chat).await {
        out.ok();
        assert!(out.calls().is_empty(), "{:?}", out.calls());
        assert!(recovered_hint(&out).is_none());
        assert!(answer(&out).unwrap().contains("```\n<tool_call>"));
    }
}

#[tokio::test]
async fn thinking_in_the_text_becomes_reasoning() {
    for fixture in [
        "vllm/qwen3-think-in-content.sse",
        "vllm/kimi-think-markers.sse",
    ] {
        for out in replay(fixture, WireApi::Chat).await {
            out.ok();
            let r = reasoning(&out).unwrap_or_default();
            assert!(r.contains("Two plus two"), "{fixture}: {r:?}");
            assert_eq!(
                answer(&out).as_deref(),
                Some("The answer is 4."),
                "{fixture}"
            );
            // Streamed as it arrives: reasoning deltas, then answer deltas, no tags.
            assert!(out.reasoning_deltas().contains("is four."), "{fixture}");
            assert_eq!(out.text_deltas(), "The answer is 4.", "{fixture}");
        }
    }
}

#[tokio::test]
async fn a_closing_tag_alone_moves_the_earlier_text_into_reasoning() {
    for out in replay("vllm/deepseek-r1-closing-think-only.sse", WireApi::Chat).await {
        out.ok();
        assert_eq!(reasoning(&out).as_deref(), Some("Two plus two is four."));
        assert_eq!(answer(&out).as_deref(), Some("The answer is 4."));
    }
}

#[tokio::test]
async fn output_limit_is_signalled_on_both_wires() {
    for (fixture, wire) in [
        ("vllm/length-text.sse", WireApi::Chat),
        ("vllm/length-tool-arguments.sse", WireApi::Chat),
        ("vllm/responses-length.sse", WireApi::Responses),
    ] {
        for out in replay(fixture, wire).await {
            out.ok();
            let n = out.events.len();
            assert_eq!(
                out.events[n - 2],
                ResponseEvent::OutputLimitReached,
                "{fixture}"
            );
        }
    }
    let out = &replay("vllm/length-tool-arguments.sse", WireApi::Chat).await[0];
    let calls = out.calls();
    assert_eq!(calls[0].1, "shell");
    assert!(serde_json::from_str::<Value>(&calls[0].2).is_err());
    let out = &replay("vllm/responses-length.sse", WireApi::Responses).await[0];
    assert_eq!(
        answer(out).as_deref(),
        Some("The first half of a long answer")
    );
}

#[tokio::test]
async fn old_llama_cpp_error_line_is_an_error() {
    for out in replay("llamacpp/old-error-line.sse", WireApi::Chat).await {
        let err = out.err();
        assert!(matches!(err, ModelError::Provider(_)), "{err:?}");
        assert!(err.to_string().contains("context size"), "{err}");
    }
}

#[tokio::test]
async fn moonshot_usage_inside_the_choice_is_counted() {
    for out in replay("moonshot/usage-in-choice.sse", WireApi::Chat).await {
        out.ok();
        match out.completed() {
            Some(ResponseEvent::Completed {
                token_usage: Some(u),
                ..
            }) => assert_eq!(
                (u.input_tokens, u.output_tokens, u.total_tokens),
                (19, 13, 32)
            ),
            other => panic!("no usage: {other:?}"),
        }
        assert_eq!(answer(&out).as_deref(), Some("Hello! How can I help?"));
    }
}

#[tokio::test]
async fn server_parsed_reasoning_and_calls_pass_through() {
    for fixture in [
        "llamacpp/deepseek-r1-reasoning-content.sse",
        "ollama/thinking-tool-call.sse",
        "deepseek/thinking-tool-call.sse",
    ] {
        for out in replay(fixture, WireApi::Chat).await {
            out.ok();
            assert!(reasoning(&out).is_some(), "{fixture}");
            assert_eq!(out.calls().len(), 1, "{fixture}");
            assert_eq!(args(&out.calls()[0])["command"], json!(["ls"]), "{fixture}");
            assert!(recovered_hint(&out).is_none(), "{fixture}");
        }
    }
}

#[tokio::test]
async fn empty_completion_completes_with_no_items() {
    for out in replay("vllm/empty-completion.sse", WireApi::Chat).await {
        out.ok();
        assert!(out.items().is_empty(), "{:?}", out.items());
    }
}

/// DeepSeek thinking mode: after a tool call, the follow-up request carries the reasoning
/// back; the same history sent to a provider that does not need it does not.
#[tokio::test]
async fn deepseek_reasoning_goes_back_with_the_tool_call() {
    let server = MockModelServer::start(MockScript::new(vec![MockResponse::recorded(fixture(
        "deepseek/thinking-tool-call.sse",
    ))]))
    .await
    .unwrap();
    let client = ModelClient::new(
        server.provider(WireApi::Chat),
        "mock".into(),
        std::path::Path::new(common::NO_HOME),
    )
    .unwrap();
    let mut p = prompt();
    p.model = "deepseek-reasoner".into();
    let first = run_with(&client, &p).await;
    first.ok();
    let (call_id, _, _) = first.calls()[0].clone();
    p.input.extend(first.items());
    p.input.push(ResponseItem::FunctionCallOutput {
        call_id: call_id.clone(),
        output: FunctionCallOutput::text("a.txt", true),
    });
    server.set_script(MockScript::new(vec![MockResponse::recorded(fixture(
        "moonshot/usage-in-choice.sse",
    ))]));
    run_with(&client, &p).await.ok();
    let follow_up = &server.requests()[1];
    let assistant = follow_up
        .items()
        .into_iter()
        .find(|m| m.get("tool_calls").is_some())
        .expect("assistant message with the call");
    assert_eq!(
        assistant["reasoning_content"],
        "To answer I need the file list."
    );
    assert_eq!(assistant["tool_calls"][0]["id"], call_id.as_str());

    // The same history for a model that does not need it, and for DeepSeek with the
    // capability switched off in config.
    for (model, flag) in [
        ("qwen3-coder:30b", None),
        ("deepseek-reasoner", Some(false)),
    ] {
        server.clear_requests();
        server.set_script(MockScript::new(vec![MockResponse::recorded(fixture(
            "moonshot/usage-in-choice.sse",
        ))]));
        let mut provider = server.provider(WireApi::Chat);
        provider.send_reasoning_content = flag;
        let client = ModelClient::new(
            provider,
            "mock".into(),
            std::path::Path::new(common::NO_HOME),
        )
        .unwrap();
        p.model = model.into();
        run_with(&client, &p).await.ok();
        let req = &server.requests()[0];
        assert!(
            req.items()
                .iter()
                .all(|m| m.get("reasoning_content").is_none()),
            "{model}"
        );
    }
}

#[tokio::test]
async fn responses_wire_thinking_and_text_tool_calls() {
    for out in replay(
        "vllm/responses-think-and-text-tool-call.sse",
        WireApi::Responses,
    )
    .await
    {
        out.ok();
        assert_eq!(
            reasoning(&out).as_deref(),
            Some("The user wants the files.")
        );
        assert_eq!(out.reasoning_deltas(), "The user wants the files.");
        let calls = out.calls();
        assert_eq!(calls.len(), 1, "{:?}", out.events);
        assert_eq!(args(&calls[0])["command"], json!(["ls", "-a"]));
        assert!(recovered_hint(&out).unwrap().contains("hermes"));
        // Neither markup nor thinking is left as an answer.
        assert_eq!(answer(&out), None, "{:?}", out.items());
    }
}

/// gpt-oss harmony left in the text: the analysis channel is reasoning (streamed as such),
/// never the answer; the final channel is the answer without its header.
#[tokio::test]
async fn harmony_channels_split_into_reasoning_and_answer() {
    for out in replay("llamacpp/gpt-oss-harmony-final-answer.sse", WireApi::Chat).await {
        out.ok();
        assert_eq!(reasoning(&out).as_deref(), Some("Two plus two is four."));
        assert_eq!(answer(&out).as_deref(), Some("The answer is 4."));
        assert_eq!(out.text_deltas(), "The answer is 4.");
    }
    for out in replay("llamacpp/gpt-oss-harmony-no-jinja.sse", WireApi::Chat).await {
        assert_eq!(
            reasoning(&out).as_deref(),
            Some("The user wants the files. Use shell.")
        );
        assert!(
            !out.text_deltas().contains("analysis"),
            "{}",
            out.text_deltas()
        );
    }
}

#[tokio::test]
async fn responses_wire_mistral_text_tool_call() {
    for out in replay(
        "vllm/responses-mistral-text-tool-call.sse",
        WireApi::Responses,
    )
    .await
    {
        out.ok();
        let calls = out.calls();
        assert_eq!(calls.len(), 1, "{:?}", out.events);
        assert_eq!(args(&calls[0])["command"], json!(["ls", "-a"]));
        assert!(recovered_hint(&out).unwrap().contains("mistral"));
        assert_eq!(answer(&out), None, "{:?}", out.items());
    }
}
