//! Provider quirks against recorded streams (`oi-test-support` fixtures, each citing its
//! source): what a follow-up request must carry back (reasoning, ids) and tool calls that
//! servers stream in broken ways.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

use common::{portable_id, prompt, run, run_with};
use oi_config::provider::ModelProviderInfo;
use oi_model_client::ModelClient;
use oi_protocol::config_types::WireApi;
use oi_protocol::models::{FunctionCallOutput, ResponseItem};
use oi_test_support::{MockModelServer, MockResponse, MockScript, RecordedRequest, fixture};
use serde_json::{Value, json};

/// Replays `first` for a prompt to `model`, sends the history back with an output for each
/// call (after `history` items, e.g. calls made by another model), and returns the first
/// outcome and the follow-up request as the server got it.
async fn follow_up(
    first: &str,
    wire: WireApi,
    provider_id: &str,
    model: &str,
    history: Vec<ResponseItem>,
    tweak: impl FnOnce(&mut ModelProviderInfo),
) -> (common::Outcome, RecordedRequest) {
    let second = match wire {
        WireApi::Chat => "moonshot/usage-in-choice.sse",
        WireApi::Responses | WireApi::Messages => first,
    };
    let server = MockModelServer::start(MockScript::new(vec![
        MockResponse::recorded(fixture(first)),
        MockResponse::recorded(fixture(second)),
    ]))
    .await
    .unwrap();
    let mut provider = server.provider(wire);
    tweak(&mut provider);
    let client = ModelClient::new(
        provider,
        provider_id.into(),
        std::path::Path::new(common::NO_HOME),
    )
    .unwrap();
    let mut p = prompt();
    p.model = model.into();
    p.input.extend(history);
    let out = run_with(&client, &p).await;
    out.ok();
    p.input.extend(out.items());
    for (call_id, _, _) in out.calls() {
        p.input.push(ResponseItem::FunctionCallOutput {
            call_id,
            output: FunctionCallOutput::text("a.txt", true),
        });
    }
    run_with(&client, &p).await.ok();
    let req = server
        .requests()
        .into_iter()
        .nth(1)
        .expect("a follow-up request");
    (out, req)
}

/// Chat assistant messages that carry tool calls, in order.
fn tool_call_messages(req: &RecordedRequest) -> Vec<Value> {
    req.items()
        .into_iter()
        .filter(|m| m.get("tool_calls").is_some())
        .collect()
}

fn foreign_call() -> Vec<ResponseItem> {
    vec![
        ResponseItem::FunctionCall {
            call_id: "call_0198c1f2a3b4c5d6".into(),
            name: "shell".into(),
            arguments: r#"{"command":["pwd"]}"#.into(),
        },
        ResponseItem::FunctionCallOutput {
            call_id: "call_0198c1f2a3b4c5d6".into(),
            output: FunctionCallOutput::text("/work", true),
        },
    ]
}

/// kimi-k2.5 thinks without saying so in its name; Moonshot rejects a tool-call message
/// without `reasoning_content`, also one from another model's history.
#[tokio::test]
async fn moonshot_thinking_models_get_reasoning_on_every_tool_call_message() {
    let (_, req) = follow_up(
        "moonshot/kimi-k25-thinking-tool-call.sse",
        WireApi::Chat,
        "moonshot",
        "kimi-k2.5",
        foreign_call(),
        |_| {},
    )
    .await;
    let msgs = tool_call_messages(&req);
    assert_eq!(msgs.len(), 2, "{msgs:?}");
    // History from another model: the placeholder Moonshot accepts.
    assert_eq!(msgs[0]["reasoning_content"], " ");
    assert_eq!(
        msgs[1]["reasoning_content"],
        "The user wants the files, so I list them."
    );
    assert_eq!(msgs[1]["tool_calls"][0]["id"], "functions.shell:0");

    // The override turns it off.
    let (_, req) = follow_up(
        "moonshot/kimi-k25-thinking-tool-call.sse",
        WireApi::Chat,
        "moonshot",
        "kimi-k2.5",
        foreign_call(),
        |p| p.send_reasoning_content = Some(false),
    )
    .await;
    assert!(
        tool_call_messages(&req)
            .iter()
            .all(|m| m.get("reasoning_content").is_none())
    );
}

/// Z.ai's interleaved thinking (GLM-4.5 and later) wants the reasoning back with the calls,
/// but does not require it: no placeholder.
#[tokio::test]
async fn zai_glm_gets_its_reasoning_back() {
    let (_, req) = follow_up(
        "zai/glm46-interleaved-thinking-tool-call.sse",
        WireApi::Chat,
        "zhipu",
        "glm-4.6",
        foreign_call(),
        |_| {},
    )
    .await;
    let msgs = tool_call_messages(&req);
    assert!(msgs[0].get("reasoning_content").is_none(), "{:?}", msgs[0]);
    assert_eq!(
        msgs[1]["reasoning_content"],
        "I should look at the files first."
    );
}

/// gpt-oss needs the chain of thought of a tool-calling turn: Chat `reasoning` (Ollama, vLLM)
/// and `reasoning_content` (llama.cpp); Responses `reasoning_text` content (vLLM), which was
/// dropped before because the item has no `encrypted_content`.
#[tokio::test]
async fn gpt_oss_reasoning_goes_back_on_both_wires() {
    let (_, req) = follow_up(
        "ollama/gpt-oss-reasoning-tool-call.sse",
        WireApi::Chat,
        "ollama",
        "gpt-oss:20b",
        Vec::new(),
        |_| {},
    )
    .await;
    let msgs = tool_call_messages(&req);
    assert_eq!(msgs[0]["reasoning"], "We need to list files. Use shell.");
    assert_eq!(
        msgs[0]["reasoning_content"],
        "We need to list files. Use shell."
    );

    let (out, req) = follow_up(
        "vllm/gpt-oss-responses-reasoning-tool-call.sse",
        WireApi::Responses,
        "vllm",
        "openai/gpt-oss-20b",
        Vec::new(),
        |_| {},
    )
    .await;
    assert_eq!(out.calls()[0].0, "call_9f2e4d1a");
    let items = req.items();
    let at = items
        .iter()
        .position(|i| i["type"] == "reasoning")
        .expect("the reasoning item goes back");
    assert_eq!(
        items[at]["content"],
        json!([{ "type": "reasoning_text", "text": "User wants the files. Call shell with ls." }])
    );
    assert!(items[at]["id"].as_str().unwrap().starts_with("rs_"));
    assert_eq!(items[at + 1]["type"], "function_call");

    // Another family on the same server: nothing it cannot use.
    let (_, req) = follow_up(
        "vllm/gpt-oss-responses-reasoning-tool-call.sse",
        WireApi::Responses,
        "vllm",
        "Qwen/Qwen3-Coder-30B-A3B-Instruct",
        Vec::new(),
        |_| {},
    )
    .await;
    assert!(req.items().iter().all(|i| i["type"] != "reasoning"));
}

/// Replays a fixture whole-event-per-write and in small byte writes.
async fn replay(name: &str) -> Vec<common::Outcome> {
    let body = fixture(name);
    let mut outcomes = Vec::new();
    for response in [
        MockResponse::recorded(body.clone()),
        MockResponse::recorded_in_writes_of(body.clone(), 7),
        MockResponse::recorded_in_writes_of(body.clone(), 1),
    ] {
        let (out, _server) = run(MockScript::new(vec![response]), WireApi::Chat, |_| {}).await;
        outcomes.push(out);
    }
    outcomes
}

#[tokio::test]
async fn parallel_calls_sharing_an_id_both_run_with_their_own_ids() {
    for out in replay("proxy/same-id-parallel-calls.sse").await {
        out.ok();
        let calls = out.calls();
        assert_eq!(calls.len(), 2, "{calls:?}");
        assert_eq!(calls[0].2, r#"{"command": ["ls"]}"#);
        assert_eq!(calls[1].2, r#"{"command": ["pwd"]}"#);
        assert_ne!(calls[0].0, calls[1].0);
    }
}

#[tokio::test]
async fn glm47_arguments_resent_whole_are_run_once() {
    for out in replay("vllm/glm47-final-delta-resend.sse").await {
        out.ok();
        let calls = out.calls();
        assert_eq!(calls.len(), 1);
        let args: Value = serde_json::from_str(&calls[0].2).expect("valid JSON arguments");
        assert_eq!(args, json!({"command": ["ls", "-a"]}));
    }
}

/// Ids we make up, and ids another provider made, reach a Mistral model as 9 alphanumerics,
/// each call still paired with its output.
#[tokio::test]
async fn mistral_models_get_ids_their_templates_accept() {
    let (out, req) = follow_up(
        "generic/tool-call-without-id.sse",
        WireApi::Chat,
        "vllm",
        "mistralai/Devstral-Small-2507",
        foreign_call(),
        |_| {},
    )
    .await;
    assert!(portable_id(&out.calls()[0].0), "{:?}", out.calls());
    let call_ids: Vec<String> = tool_call_messages(&req)
        .iter()
        .map(|m| m["tool_calls"][0]["id"].as_str().unwrap().to_string())
        .collect();
    let output_ids: Vec<String> = req.tool_outputs().into_iter().map(|(id, _)| id).collect();
    assert_eq!(call_ids.len(), 2);
    assert!(call_ids.iter().all(|id| portable_id(id)), "{call_ids:?}");
    assert_eq!(call_ids, output_ids);
}

/// Several calls per response are offered (the OpenAI default, and what llama.cpp only
/// allows when asked), on both wires, unless the provider says it handles them badly.
#[tokio::test]
async fn several_calls_per_response_are_offered_unless_the_provider_declines() {
    for wire in [WireApi::Chat, WireApi::Responses] {
        for (setting, sent) in [(None, true), (Some(true), true), (Some(false), false)] {
            let server =
                MockModelServer::start(MockScript::turns([oi_test_support::MockTurn::text("ok")]))
                    .await
                    .unwrap();
            let mut provider = server.provider(wire);
            provider.supports_parallel_tool_calls = setting;
            let client = ModelClient::new(
                provider,
                "custom".into(),
                std::path::Path::new(common::NO_HOME),
            )
            .unwrap();
            run_with(&client, &prompt()).await.ok();
            let body = &server.requests()[0].body;
            assert_eq!(
                body["parallel_tool_calls"],
                json!(sent),
                "{wire:?} with supports_parallel_tool_calls = {setting:?}"
            );
        }
    }
}
