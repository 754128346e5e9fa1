//! The window the server really runs: read from its metadata before the first request
//! (recorded llama.cpp, Ollama answers), learned when it silently cuts a prompt (and
//! remembered for the next session), and "context full" when prompt and answer fill it.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use common::{compactions, errors, last_message, noisy_call, stream_errors, user, warnings};

use oi_core::{Thread, ThreadManager, ThreadManagerOptions};
use oi_protocol::config_types::WireApi;
use oi_protocol::protocol::{Event, EventMsg, Op};
use oi_test_support::{MockModelServer, MockResponse, MockScript, MockTurn, fixture};
use serde_json::{Value, json};
use std::path::Path;

const COMPACT_MARKER: &str = "Your context window is nearly full";
const SUMMARY: &str = "SUMMARY-OF-WORK: the commands ran.";

fn server_fixture(name: &str) -> Value {
    serde_json::from_str(&fixture(&format!("servers/{name}"))).unwrap()
}

fn config(
    mock: &MockModelServer,
    home: &Path,
    provider: &str,
    model: &str,
    wire: WireApi,
) -> oi_config::Config {
    let toml = mock
        .config_toml(provider, wire)
        .replace("model = \"mock-model\"", &format!("model = {model:?}"));
    common::load_unconfined(home, &toml)
}

fn manager() -> ThreadManager {
    ThreadManager::new(ThreadManagerOptions {
        source: oi_thread_store::SessionSource::Exec,
        persist: true,
    })
}

async fn run_turn(thread: &Thread, op: Op) -> Vec<Event> {
    common::run_op(thread, op).await
}

/// The window and its source as `task_started` announced them.
fn started_window(evs: &[Event]) -> (Option<i64>, String) {
    evs.iter()
        .find_map(|e| match &e.msg {
            EventMsg::TaskStarted(s) => Some((
                s.model_context_window,
                s.model_context_window_source.clone().unwrap_or_default(),
            )),
            _ => None,
        })
        .expect("task_started")
}

/// llama-server's recorded `/v1/models` and `/props` (started with `-c 2048`).
fn llama_cpp(script: MockScript) -> MockScript {
    script
        .with_endpoint(
            "GET",
            "/v1/models",
            server_fixture("llamacpp-v1-models.json"),
        )
        .with_endpoint("GET", "/props", server_fixture("llamacpp-props.json"))
}

/// A shell call printing about 1.3 KB.
fn small_call(i: usize) -> MockTurn {
    let script = format!("for n in $(seq 1 25); do echo \"out-{i:02}-line-$n ........ end\"; done");
    MockTurn::tool_call("shell", json!({"command": ["bash", "-c", script]}))
        .with_call_id(format!("call-{i}"))
}

async fn llama_cpp_window_beats_the_table(wire: WireApi) {
    let home = tempfile::tempdir().unwrap();
    // A server that really runs 2048 tokens: it refuses anything bigger.
    let mut turns: Vec<MockTurn> = (0..6).map(small_call).collect();
    turns.push(MockTurn::text("all done"));
    let script = llama_cpp(MockScript::turns(turns))
        .with_context_window(2048)
        .with_rule(COMPACT_MARKER, MockTurn::text(SUMMARY));
    let mock = MockModelServer::start(script).await.unwrap();
    let m = manager();
    // The table says 32768 for qwen2.5-coder models: the server's 2048 wins.
    let cfg = config(
        &mock,
        home.path(),
        "llamacpp",
        "qwen2.5-coder-1.5b-instruct",
        wire,
    );
    let t = m.start_thread(cfg).await.unwrap();
    let evs = run_turn(&t.thread, user("run the numbered commands")).await;
    let (window, source) = started_window(&evs);
    assert_eq!(window, Some(2048));
    assert_eq!(source, "llama.cpp /props n_ctx");
    assert!(errors(&evs).is_empty(), "{:?}", errors(&evs));
    assert_eq!(last_message(&evs).as_deref(), Some("all done"));
    // The session outgrew the window and was compacted before the server refused anything.
    assert!(compactions(&evs) >= 1, "no compaction");
    let refused: Vec<u64> = mock
        .requests()
        .iter()
        .map(|r| r.approx_tokens())
        .filter(|t| *t > 2048)
        .collect();
    assert!(refused.is_empty(), "requests over the window: {refused:?}");
    let sources: Vec<String> = evs
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::TokenCount(c) => c.info.as_ref()?.model_context_window_source.clone(),
            _ => None,
        })
        .collect();
    assert!(!sources.is_empty());
    assert!(
        sources.iter().all(|s| s == "llama.cpp /props n_ctx"),
        "{sources:?}"
    );
    m.shutdown_all().await;
}

#[tokio::test]
async fn llama_cpp_window_beats_the_table_chat() {
    llama_cpp_window_beats_the_table(WireApi::Chat).await;
}

#[tokio::test]
async fn llama_cpp_window_beats_the_table_responses() {
    llama_cpp_window_beats_the_table(WireApi::Responses).await;
}

async fn first_window(
    script: MockScript,
    provider: &str,
    model: &str,
) -> ((Option<i64>, String), MockModelServer) {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(script.with_fallback(MockTurn::text("ok")))
        .await
        .unwrap();
    let m = manager();
    let t = m
        .start_thread(config(&mock, home.path(), provider, model, WireApi::Chat))
        .await
        .unwrap();
    let evs = run_turn(&t.thread, user("hi")).await;
    assert!(errors(&evs).is_empty(), "{:?}", errors(&evs));
    m.shutdown_all().await;
    (started_window(&evs), mock)
}

#[tokio::test]
async fn ollama_loaded_model_window_comes_from_api_ps() {
    // mistral is loaded with 4096 (the table says 32768).
    let script = MockScript::default()
        .with_endpoint("GET", "/v1/models", server_fixture("ollama-v1-models.json"))
        .with_endpoint("GET", "/api/ps", server_fixture("ollama-api-ps.json"));
    let ((window, source), _) = first_window(script, "ollama", "mistral").await;
    assert_eq!(window, Some(4096));
    assert!(source.contains("/api/ps"), "{source}");
}

#[tokio::test]
async fn ollama_model_num_ctx_applies_when_not_loaded() {
    let script = MockScript::default()
        .with_endpoint("GET", "/v1/models", server_fixture("ollama-v1-models.json"))
        .with_endpoint("GET", "/api/ps", json!({"models": []}))
        .with_endpoint("POST", "/api/show", server_fixture("ollama-api-show.json"));
    let ((window, source), mock) = first_window(script, "ollama", "qwen3-coder:30b").await;
    assert_eq!(
        window,
        Some(8192),
        "the Modelfile's num_ctx, not the native 262144"
    );
    assert!(source.contains("num_ctx"), "{source}");
    assert!(
        !mock
            .requests()
            .iter()
            .any(|r| r.path.ends_with("/api/generate")),
        "no need to load the model"
    );
}

#[tokio::test]
async fn ollama_server_default_is_read_after_loading_the_model() {
    // No num_ctx in the model: the window is the server's default, which only the loaded
    // runner shows. The client loads the model before its first request.
    let mut show = server_fixture("ollama-api-show.json");
    show["parameters"] = json!("temperature 0.7\ntop_p 0.8");
    let mut ps = server_fixture("ollama-api-ps.json");
    ps["models"][0]["context_length"] = json!(32768);
    let script = MockScript::default()
        .with_endpoint("GET", "/v1/models", server_fixture("ollama-v1-models.json"))
        .with_endpoint("GET", "/api/ps", json!({"models": []}))
        .with_endpoint("POST", "/api/show", show)
        .with_endpoint(
            "POST",
            "/api/generate",
            json!({"model": "qwen3-coder:30b", "created_at": "2026-12-01T00:00:00Z", "response": "", "done": true}),
        )
        .with_endpoint_after("GET", "/api/ps", ps, "/api/generate");
    let ((window, source), _) = first_window(script, "ollama", "qwen3-coder:30b").await;
    assert_eq!(
        window,
        Some(32768),
        "the loaded runner's window, not the table's 262144"
    );
    assert!(source.contains("/api/ps"), "{source}");
}

#[tokio::test]
async fn a_prompt_the_server_cut_is_detected_compacted_and_remembered_chat() {
    a_prompt_the_server_cut_is_detected_compacted_and_remembered(WireApi::Chat).await;
}

#[tokio::test]
async fn a_prompt_the_server_cut_is_detected_compacted_and_remembered_responses() {
    a_prompt_the_server_cut_is_detected_compacted_and_remembered(WireApi::Responses).await;
}

#[tokio::test]
async fn a_prompt_the_server_cut_is_detected_compacted_and_remembered_messages() {
    a_prompt_the_server_cut_is_detected_compacted_and_remembered(WireApi::Messages).await;
}

/// The Messages wire counts the prompt read from the cache apart from `input_tokens`: a
/// thread whose every request is mostly a cache hit (the mock reports the previous request
/// as the cached prefix, as llama-server does) is a whole prompt each time, not a prompt the
/// server cut.
#[tokio::test]
async fn cache_hits_on_the_messages_wire_are_not_taken_for_a_cut_prompt() {
    let home = tempfile::tempdir().unwrap();
    let mut turns: Vec<MockTurn> = (0..8).map(noisy_call).collect();
    turns.push(MockTurn::text("all done"));
    // A llama-server with a 32k window: the thread never needs compacting.
    let script = MockScript::turns(turns)
        .reporting_usage()
        .with_endpoint(
            "GET",
            "/v1/models",
            json!({"data": [{"id": "my-finetune", "meta": {"n_ctx": 32768, "n_ctx_train": 32768}}]}),
        )
        .with_endpoint(
            "GET",
            "/props",
            json!({"default_generation_settings": {"n_ctx": 32768}}),
        )
        .with_rule(COMPACT_MARKER, MockTurn::text(SUMMARY));
    let mock = MockModelServer::start(script).await.unwrap();
    let m = manager();
    let cfg = config(
        &mock,
        home.path(),
        "llamacpp",
        "my-finetune",
        WireApi::Messages,
    );
    let t = m.start_thread(cfg).await.unwrap();
    let evs = run_turn(&t.thread, user("run the numbered commands")).await;
    m.shutdown_all().await;
    assert!(errors(&evs).is_empty(), "{:?}", errors(&evs));
    assert_eq!(last_message(&evs).as_deref(), Some("all done"));
    assert!(
        !warnings(&evs)
            .iter()
            .any(|w| w.contains("cut the conversation")),
        "{:?}",
        warnings(&evs)
    );
    let usages: Vec<_> = evs
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::TokenCount(c) => c.info.as_ref().map(|i| i.last_token_usage),
            _ => None,
        })
        .collect();
    let sizes: Vec<u64> = mock.requests().iter().map(|r| r.approx_tokens()).collect();
    assert_eq!(usages.len(), sizes.len());
    // Each request counted whole (the mock's count of its body), the earlier prompt as cached.
    for (i, (u, size)) in usages.iter().zip(&sizes).enumerate() {
        assert_eq!(u.input_tokens as u64, *size, "request {i}: {u:?}");
        if i > 0 {
            assert_eq!(u.cached_input_tokens as u64, sizes[i - 1], "request {i}");
        }
    }
    assert!(*sizes.last().unwrap() > 6000, "{sizes:?}");
    assert_eq!(compactions(&evs), 0);
}

/// `pause_turn`: the engine sends the conversation again, the paused part included, and the
/// model finishes the answer in the next response.
#[tokio::test]
async fn a_paused_answer_is_continued() {
    let home = tempfile::tempdir().unwrap();
    let script = MockScript::new(vec![
        MockResponse::recorded(fixture("anthropic/pause-turn.sse")),
        MockTurn::text("Found it: part two.").into(),
    ]);
    let mock = MockModelServer::start(script).await.unwrap();
    let m = manager();
    let cfg = config(&mock, home.path(), "mock", "claude-x", WireApi::Messages);
    let t = m.start_thread(cfg).await.unwrap();
    let evs = run_turn(&t.thread, user("search the web")).await;
    m.shutdown_all().await;
    assert!(errors(&evs).is_empty(), "{:?}", errors(&evs));
    assert_eq!(last_message(&evs).as_deref(), Some("Found it: part two."));
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    let second = requests[1].items();
    let last = second.last().unwrap();
    assert_eq!(last["role"], "assistant", "{second:?}");
    assert_eq!(last["content"][0]["text"], "Searching, part one.");
}

async fn a_prompt_the_server_cut_is_detected_compacted_and_remembered(wire: WireApi) {
    let home = tempfile::tempdir().unwrap();
    let mut turns: Vec<MockTurn> = (0..8).map(noisy_call).collect();
    turns.push(MockTurn::text("all done"));
    // Ollama with a 3,000-token window it does not report: it cuts bigger prompts.
    let script = MockScript::turns(turns)
        .silently_truncating_at(3000)
        .with_rule(COMPACT_MARKER, MockTurn::text(SUMMARY));
    let mock = MockModelServer::start(script.clone()).await.unwrap();
    let m = manager();
    let cfg = config(&mock, home.path(), "ollama", "my-finetune", wire);
    let t = m.start_thread(cfg.clone()).await.unwrap();
    let evs = run_turn(&t.thread, user("run the numbered commands")).await;
    assert_eq!(
        started_window(&evs).0,
        Some(32_768),
        "nothing known at first"
    );
    assert!(errors(&evs).is_empty(), "{:?}", errors(&evs));
    assert_eq!(last_message(&evs).as_deref(), Some("all done"));
    let cut: Vec<String> = warnings(&evs)
        .into_iter()
        .filter(|w| w.contains("cut the conversation"))
        .collect();
    assert_eq!(cut.len(), 1, "warned once: {cut:?}");
    assert!(cut[0].contains("OLLAMA_CONTEXT_LENGTH"), "{}", cut[0]);
    assert!(compactions(&evs) >= 1);
    assert!(
        stream_errors(&evs)
            .iter()
            .any(|e| e.contains("cut the prompt"))
    );
    // Once learned, nothing bigger than the server's window was sent again.
    let sizes: Vec<u64> = mock.requests().iter().map(|r| r.approx_tokens()).collect();
    let first_cut = sizes.iter().position(|t| *t > 6000).expect("a cut request");
    assert!(
        sizes[first_cut + 1..].iter().all(|t| *t <= 3000),
        "after learning: {sizes:?}"
    );
    m.shutdown_all().await;

    // One cut is no evidence (a proxy's wrong count looks the same): the next session for
    // this provider and model does not start from it. Cut again there, it is confirmed.
    mock.set_script(script.clone());
    let evs2 = session(&cfg, "run the numbered commands").await;
    let (window, source) = started_window(&evs2);
    assert_eq!(window, Some(32_768), "{source}");
    assert_eq!(last_message(&evs2).as_deref(), Some("all done"));
    mock.set_script(MockScript::turns([MockTurn::text("hello")]));
    let evs3 = session(&cfg, "hi").await;
    let (window, source) = started_window(&evs3);
    assert!(
        window.is_some_and(|w| (1024..=3100).contains(&w)),
        "{window:?}"
    );
    assert!(source.contains("remembered"), "{source}");
}

/// A new session (same provider, model and home as `cfg`, so the memory of learned windows
/// applies) running one turn.
async fn session(cfg: &oi_config::Config, text: &str) -> Vec<Event> {
    let m = manager();
    let t = m.start_thread(cfg.clone()).await.unwrap();
    let evs = run_turn(&t.thread, user(text)).await;
    m.shutdown_all().await;
    evs
}

async fn context_full_compacts_and_retries(wire: WireApi, recorded: &str) {
    let home = tempfile::tempdir().unwrap();
    let script = llama_cpp(MockScript::new(vec![
        MockResponse::Turn(small_call(0)),
        MockResponse::recorded(fixture(recorded)),
        MockResponse::Turn(MockTurn::text("done after compacting")),
    ]))
    .with_rule(COMPACT_MARKER, MockTurn::text(SUMMARY));
    let mock = MockModelServer::start(script).await.unwrap();
    let m = manager();
    let cfg = config(
        &mock,
        home.path(),
        "llamacpp",
        "qwen2.5-coder-1.5b-instruct",
        wire,
    );
    let t = m.start_thread(cfg).await.unwrap();
    let evs = run_turn(&t.thread, user("recite the lines")).await;
    assert!(errors(&evs).is_empty(), "{:?}", errors(&evs));
    assert!(
        stream_errors(&evs)
            .iter()
            .any(|e| e.starts_with("context full")),
        "{:?}",
        stream_errors(&evs)
    );
    assert_eq!(compactions(&evs), 1);
    assert_eq!(last_message(&evs).as_deref(), Some("done after compacting"));
    // Not blamed on the output limit.
    assert!(
        !warnings(&evs)
            .iter()
            .any(|w| w.contains("model_max_output_tokens")),
        "{:?}",
        warnings(&evs)
    );
    m.shutdown_all().await;
}

#[tokio::test]
async fn context_full_compacts_and_retries_chat() {
    context_full_compacts_and_retries(WireApi::Chat, "llamacpp/context-full.sse").await;
}

#[tokio::test]
async fn context_full_compacts_and_retries_responses() {
    context_full_compacts_and_retries(WireApi::Responses, "llamacpp/responses-context-full.sse")
        .await;
}

#[tokio::test]
async fn context_full_with_nothing_to_compact_says_so() {
    let home = tempfile::tempdir().unwrap();
    let script = llama_cpp(MockScript::new(vec![MockResponse::recorded(fixture(
        "llamacpp/context-full.sse",
    ))]));
    let mock = MockModelServer::start(script).await.unwrap();
    let m = manager();
    let cfg = config(
        &mock,
        home.path(),
        "llamacpp",
        "qwen2.5-coder-1.5b-instruct",
        WireApi::Chat,
    );
    let t = m.start_thread(cfg).await.unwrap();
    let evs = run_turn(&t.thread, user("recite the lines")).await;
    let errs = errors(&evs);
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert!(errs[0].starts_with("context full"), "{}", errs[0]);
    assert!(errs[0].contains("2048 of 2048"), "{}", errs[0]);
    assert!(
        errs[0].contains("-c"),
        "names the llama.cpp setting: {}",
        errs[0]
    );
    m.shutdown_all().await;
}

/// The learned windows in `home`'s `model-windows.json` (`{}` when there are none).
fn remembered_windows(home: &Path) -> Value {
    std::fs::read_to_string(home.join("model-windows.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v.get("windows").cloned())
        .unwrap_or_else(|| json!({}))
}

/// Issue 43 item 4: a server (or a proxy in front of it) that reports a low prompt count
/// once made the agent learn, and keep for good, a 1,024-token window. A llama.cpp server
/// that says it runs 16,384 tokens does not cut prompts: the count is wrong, not the prompt.
#[tokio::test]
async fn a_low_count_reported_once_is_not_taken_for_a_cut_prompt() {
    let home = tempfile::tempdir().unwrap();
    let low = oi_protocol::models::TokenUsage {
        input_tokens: 300,
        output_tokens: 5,
        total_tokens: 305,
        ..Default::default()
    };
    let script = MockScript::turns([MockTurn::text("read it").with_usage(low)])
        .with_endpoint(
            "GET",
            "/v1/models",
            json!({"data": [{"id": "my-finetune", "meta": {"n_ctx": 16384, "n_ctx_train": 32768}}]}),
        )
        .with_endpoint(
            "GET",
            "/props",
            json!({"default_generation_settings": {"n_ctx": 16384}}),
        )
        .with_rule(COMPACT_MARKER, MockTurn::text(SUMMARY));
    let mock = MockModelServer::start(script).await.unwrap();
    let m = manager();
    let cfg = config(&mock, home.path(), "llamacpp", "my-finetune", WireApi::Chat);
    let t = m.start_thread(cfg).await.unwrap();
    // About 3,000 tokens: big enough for the cut check.
    let long = format!(
        "Read this log and say ok.\n{}",
        "a log line of words\n".repeat(600)
    );
    let evs = run_turn(&t.thread, user(&long)).await;
    m.shutdown_all().await;
    assert!(errors(&evs).is_empty(), "{:?}", errors(&evs));
    assert!(
        !warnings(&evs)
            .iter()
            .any(|w| w.contains("cut the conversation")),
        "{:?}",
        warnings(&evs)
    );
    assert_eq!(compactions(&evs), 0);
    assert_eq!(remembered_windows(home.path()), json!({}));
}

/// Issue 43 item 4: tool output full of digits made the estimate ~2.6 times a bytes/4
/// count, and a server counting three digits to a token (Llama 3, gpt-oss) looked like it
/// had cut the prompt.
#[tokio::test]
async fn digits_in_a_tool_output_are_not_read_as_a_cut_prompt() {
    let home = tempfile::tempdir().unwrap();
    // The mock counts bytes / 4, as such a tokenizer roughly does for digits.
    let digits = "for i in $(seq 100000 102000); do printf '%s ' $i; done";
    let script = MockScript::turns([
        MockTurn::tool_call("shell", json!({"command": ["bash", "-c", digits]})),
        MockTurn::text("the numbers run from 100000 to 102000"),
    ])
    .reporting_usage()
    .with_rule(COMPACT_MARKER, MockTurn::text(SUMMARY));
    let mock = MockModelServer::start(script).await.unwrap();
    let m = manager();
    let cfg = config(&mock, home.path(), "ollama", "my-finetune", WireApi::Chat);
    let t = m.start_thread(cfg).await.unwrap();
    let evs = run_turn(&t.thread, user("print the numbers")).await;
    m.shutdown_all().await;
    assert!(errors(&evs).is_empty(), "{:?}", errors(&evs));
    assert!(
        !warnings(&evs)
            .iter()
            .any(|w| w.contains("cut the conversation")),
        "{:?}",
        warnings(&evs)
    );
    assert_eq!(compactions(&evs), 0);
    assert_eq!(remembered_windows(home.path()), json!({}));
}

/// Issue 43 item 4: a window learned from a refusal of a thread's first request was not
/// saved, so `resume` (or the next session) hit the same refusal.
#[tokio::test]
async fn a_refusal_of_the_first_request_is_remembered() {
    let home = tempfile::tempdir().unwrap();
    let script = MockScript::turns([MockTurn::text("never sent")]).with_context_window(2000);
    let mock = MockModelServer::start(script).await.unwrap();
    let m = manager();
    let cfg = config(&mock, home.path(), "vllm", "my-finetune", WireApi::Chat);
    let t = m.start_thread(cfg.clone()).await.unwrap();
    let long = format!("Summarize:\n{}", "some words of text\n".repeat(800));
    let evs = run_turn(&t.thread, user(&long)).await;
    m.shutdown_all().await;
    let err = errors(&evs).join("\n");
    assert!(
        err.contains("does not fit the model's context window"),
        "{err}"
    );
    let windows = remembered_windows(home.path());
    let learned: Vec<i64> = windows
        .as_object()
        .unwrap()
        .values()
        .filter_map(|e| e["tokens"].as_i64())
        .collect();
    assert_eq!(learned, [2000], "{windows}");
    // The next session starts from it.
    let m2 = manager();
    let t2 = m2.start_thread(cfg).await.unwrap();
    let evs2 = run_turn(&t2.thread, user("hi")).await;
    m2.shutdown_all().await;
    let (window, source) = started_window(&evs2);
    assert_eq!(window, Some(2000), "{source}");
    assert!(source.contains("remembered"), "{source}");
}
