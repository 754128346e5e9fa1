//! Servers as they are served now (issue 43 item 5): replays of what public reports show
//! vLLM, LM Studio, llama.cpp and Ollama sending, each with what the engine must make of it.
//! The streams are in `crates/test-support/fixtures/vllm/`, each citing its report.

use crate::common;

use common::{errors, last_message, manager, run_op, stream_errors, user, warnings};
use oi_protocol::protocol::Event;
use oi_test_support::{
    MockModelServer, MockResponse, MockScript, MockTurn, RecordedRequest, fixture,
};
use std::path::Path;

/// One turn against `script`, with `retries` request and stream retries (the mock's config
/// has none).
async fn turn_with(
    home: &Path,
    script: MockScript,
    provider: &str,
    retries: u32,
    request: &str,
) -> (Vec<Event>, Vec<RecordedRequest>) {
    let mock = MockModelServer::start(script).await.unwrap();
    let toml = mock
        .config_toml(provider, oi_protocol::config_types::WireApi::Chat)
        .replace(
            "request_max_retries = 0\nstream_max_retries = 0",
            &format!("request_max_retries = {retries}\nstream_max_retries = {retries}"),
        );
    let cfg = common::load_unconfined(home, &toml);
    let m = manager(false);
    let t = m.start_thread(cfg).await.unwrap();
    let evs = run_op(&t.thread, user(request)).await;
    m.shutdown_all().await;
    (evs, mock.requests())
}

fn recorded(name: &str) -> MockResponse {
    MockResponse::recorded(fixture(name))
}

#[tokio::test]
async fn a_tool_name_with_harmony_tokens_runs_the_tool() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("marker.txt"), "").unwrap();
    let (evs, reqs) = turn_with(
        home.path(),
        MockScript::new(vec![
            recorded("vllm/gpt-oss-tool-name-channel-leak.sse"),
            MockResponse::Turn(MockTurn::text("marker.txt is there.")),
        ]),
        "vllm",
        0,
        "What files are here?",
    )
    .await;
    assert!(errors(&evs).is_empty(), "{:?}", errors(&evs));
    let calls = reqs[1].function_calls();
    assert_eq!(
        calls[0].1, "shell",
        "the name sent back is clean: {calls:?}"
    );
    let outputs = reqs[1].tool_outputs();
    assert!(outputs[0].1.contains("marker.txt"), "{outputs:?}");
}

#[tokio::test]
async fn an_argv_list_sent_as_a_json_string_runs_as_argv() {
    let home = tempfile::tempdir().unwrap();
    std::fs::write(home.path().join("marker.txt"), "").unwrap();
    let (evs, reqs) = turn_with(
        home.path(),
        MockScript::new(vec![
            recorded("vllm/qwen3-coder-argv-as-string.sse"),
            MockResponse::Turn(MockTurn::text("marker.txt is there.")),
        ]),
        "vllm",
        0,
        "What files are here?",
    )
    .await;
    assert!(errors(&evs).is_empty(), "{:?}", errors(&evs));
    let outputs = reqs[1].tool_outputs();
    // Before: run as the shell text `["ls", "-1"]`, exit 127.
    assert!(outputs[0].1.contains("Exit code: 0"), "{outputs:?}");
    assert!(outputs[0].1.contains("marker.txt"), "{outputs:?}");
}

#[tokio::test]
async fn call_markup_leaked_beside_parsed_calls_stays_out_of_the_answer_and_history() {
    let home = tempfile::tempdir().unwrap();
    let (evs, reqs) = turn_with(
        home.path(),
        MockScript::new(vec![
            recorded("vllm/kimi-k2-markers-leak-beside-tool-calls.sse"),
            MockResponse::Turn(MockTurn::text("Listed.")),
        ]),
        "vllm",
        0,
        "List the files",
    )
    .await;
    assert!(errors(&evs).is_empty(), "{:?}", errors(&evs));
    assert_eq!(
        reqs[1].function_calls().len(),
        1,
        "the parsed call ran once"
    );
    let history = reqs[1].all_text();
    assert!(!history.contains("<|tool_call"), "{history}");
    assert!(history.contains("I will list the files."), "{history}");
    let said: Vec<String> = evs
        .iter()
        .filter_map(|e| match &e.msg {
            oi_protocol::protocol::EventMsg::AgentMessage(m) => Some(m.message.clone()),
            _ => None,
        })
        .collect();
    assert!(said.iter().all(|m| !m.contains("<|tool_call")), "{said:?}");
}

#[tokio::test]
async fn an_aborted_answer_is_retried_not_printed_as_the_answer() {
    let home = tempfile::tempdir().unwrap();
    let full = "The capital of France is Paris.";
    let (evs, reqs) = turn_with(
        home.path(),
        MockScript::new(vec![
            recorded("vllm/finish-reason-abort.sse"),
            MockResponse::Turn(MockTurn::text(full)),
        ]),
        "vllm",
        2,
        "What is the capital of France?",
    )
    .await;
    assert!(errors(&evs).is_empty(), "{:?}", errors(&evs));
    assert_eq!(last_message(&evs).as_deref(), Some(full));
    assert_eq!(reqs.len(), 2);
    assert!(
        stream_errors(&evs)
            .iter()
            .any(|e| e.contains("finish_reason \"abort\"")),
        "{:?}",
        stream_errors(&evs)
    );
    // Without retries left, it fails instead of printing half a sentence with exit 0.
    let (evs, _) = turn_with(
        home.path(),
        MockScript::new(vec![recorded("vllm/finish-reason-abort.sse")]),
        "vllm",
        0,
        "What is the capital of France?",
    )
    .await;
    let err = errors(&evs).join("\n");
    assert!(err.contains("finish_reason \"abort\""), "{err}");
}

#[tokio::test]
async fn lm_studio_0_4s_overflow_message_is_a_context_overflow() {
    let home = tempfile::tempdir().unwrap();
    // As reported (Gitlawb/openclaude#353): HTTP 400 with this body.
    let body = r#"{"error":"The number of tokens to keep from the initial prompt is greater than the context length (n_keep: 13055>= n_ctx: 4096). Try to load the model with a larger context length, or provide a shorter input."}"#;
    let (evs, _) = turn_with(
        home.path(),
        MockScript::new(vec![MockResponse::error(400, body)]),
        "lmstudio",
        0,
        "hi",
    )
    .await;
    let err = errors(&evs).join("\n");
    assert!(
        err.contains("does not fit the model's context window"),
        "{err}"
    );
    let memory = std::fs::read_to_string(home.path().join("model-windows.json")).unwrap();
    assert!(memory.contains("\"tokens\": 4096"), "{memory}");
}

#[tokio::test]
async fn errors_no_retry_can_fix_are_not_retried() {
    // Bodies as reported: llama.cpp without --jinja (defilantech/LLMKube#126, ramalama#988),
    // OpenAI's out-of-quota 429, Ollama out of memory (ollama/ollama#10920).
    let cases = [
        (
            500,
            r#"{"error":{"code":500,"message":"tools param requires --jinja flag","type":"server_error"}}"#,
            "--jinja",
        ),
        (
            429,
            r#"{"error":{"message":"You exceeded your current quota, please check your plan and billing details.","type":"insufficient_quota","param":null,"code":"insufficient_quota"}}"#,
            "no quota or credit left",
        ),
        (
            500,
            r#"{"error":"model requires more system memory (7.5 GiB) than is available (5.2 GiB)"}"#,
            "not enough memory",
        ),
    ];
    for (status, body, fix) in cases {
        let home = tempfile::tempdir().unwrap();
        let script = MockScript::new(vec![MockResponse::error(status, body)])
            .with_fallback(MockTurn::text("retried"));
        let (evs, reqs) = turn_with(home.path(), script, "mock", 4, "hi").await;
        assert_eq!(reqs.len(), 1, "{body}: sent once, not retried");
        let err = errors(&evs).join("\n");
        assert!(err.contains(fix), "{body}: {err}");
        assert!(
            !stream_errors(&evs)
                .iter()
                .any(|e| e.contains("Reconnecting")),
            "{:?}",
            stream_errors(&evs)
        );
    }
    // A plain 500 is still retried.
    let home = tempfile::tempdir().unwrap();
    let script = MockScript::new(vec![MockResponse::error(500, "upstream hiccup")])
        .with_fallback(MockTurn::text("retried"));
    let (evs, reqs) = turn_with(home.path(), script, "mock", 4, "hi").await;
    assert_eq!(reqs.len(), 2);
    assert_eq!(last_message(&evs).as_deref(), Some("retried"));
}

#[tokio::test]
async fn no_parser_warning_when_the_servers_parser_is_on() {
    // A plain JSON call: the shape no parser catches, whatever the server runs.
    let home = tempfile::tempdir().unwrap();
    let json_call = "```json\n{\"name\": \"shell\", \"arguments\": {\"command\": [\"ls\"]}}\n```";
    let (evs, _) = turn_with(
        home.path(),
        MockScript::turns([MockTurn::text(json_call), MockTurn::text("done")]),
        "llamacpp",
        0,
        "list the files",
    )
    .await;
    assert!(errors(&evs).is_empty(), "{:?}", errors(&evs));
    assert!(
        !warnings(&evs).iter().any(|w| w.contains("parser is off")),
        "{:?}",
        warnings(&evs)
    );
    // Template markup after the server parsed calls itself: its parser is on.
    let home = tempfile::tempdir().unwrap();
    let (evs, _) = turn_with(
        home.path(),
        MockScript::new(vec![
            MockResponse::Turn(MockTurn::tool_call(
                "shell",
                serde_json::json!({"command": ["ls"]}),
            )),
            recorded("vllm/hermes-text-tool-call.sse"),
            MockResponse::Turn(MockTurn::text("done")),
        ]),
        "vllm",
        0,
        "list the files twice",
    )
    .await;
    assert!(errors(&evs).is_empty(), "{:?}", errors(&evs));
    assert!(
        !warnings(&evs).iter().any(|w| w.contains("parser is off")),
        "{:?}",
        warnings(&evs)
    );
    // Markup with no parsed call before: the parser is off, and the warning says so.
    let home = tempfile::tempdir().unwrap();
    let (evs, _) = turn_with(
        home.path(),
        MockScript::new(vec![
            recorded("vllm/hermes-text-tool-call.sse"),
            MockResponse::Turn(MockTurn::text("done")),
        ]),
        "vllm",
        0,
        "list the files",
    )
    .await;
    assert!(
        warnings(&evs).iter().any(|w| w.contains("parser is off")),
        "{:?}",
        warnings(&evs)
    );
}
