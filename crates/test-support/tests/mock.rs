//! The mock model server as its users see it: over HTTP, and through the `mock-model` binary.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use oi_protocol::config_types::WireApi;
use oi_test_support::{MockModelServer, MockResponse, MockScript, MockTurn, RecordedRequest};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(10);

async fn post(base: &str, path: &str, body: Value) -> (u16, String, String) {
    let resp = reqwest::Client::new()
        .post(format!("{base}{path}"))
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = resp.status().as_u16();
    let ct = resp
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    (status, ct, resp.text().await.unwrap())
}

fn chat_body(user: &str) -> Value {
    json!({"model": "m", "stream": true, "messages": [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": user}
    ]})
}

/// `data:` payloads of an SSE body.
fn data_lines(body: &str) -> Vec<String> {
    body.lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(str::to_string)
        .collect()
}

fn chat_text(body: &str) -> String {
    data_lines(body)
        .iter()
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .filter_map(|v| {
            v.pointer("/choices/0/delta/content")
                .and_then(Value::as_str)
                .map(str::to_string)
        })
        .collect()
}

#[test]
fn scripts_are_plain_json() {
    let script: MockScript = serde_json::from_str(
        r#"{"responses":[
              {"type":"turn","text":"hi","chunk_size":1},
              {"type":"turn","tool_calls":[{"name":"shell","arguments":"{\"command\":[\"ls\"]}"}]},
              {"type":"error","status":429,"body":"slow down","retry_after":"1"},
              {"type":"not_sse","status":200,"content_type":"text/html","body":"<p>"}
            ],
            "fallback":{"type":"cycle","responses":[{"type":"turn","text":"a"}]}}"#,
    )
    .unwrap();
    assert_eq!(script.responses.len(), 4);
    assert_eq!(
        script.responses[0],
        MockResponse::Turn(MockTurn::text("hi").chunked(1))
    );
    let back: MockScript = serde_json::from_value(serde_json::to_value(&script).unwrap()).unwrap();
    assert_eq!(back, script);
}

#[tokio::test]
async fn chat_turns_stream_in_order_then_exhaust() {
    let server = MockModelServer::start(MockScript::turns([
        MockTurn::text("first").chunked(2),
        MockTurn::tool_call("shell", json!({"command": ["ls"]})),
    ]))
    .await
    .unwrap();
    let base = server.base_url();
    assert!(base.starts_with("http://127.0.0.1:") && base.ends_with("/v1"));

    let (status, ct, body) = post(&base, "/chat/completions", chat_body("one")).await;
    assert_eq!((status, ct.as_str()), (200, "text/event-stream"));
    assert_eq!(chat_text(&body), "first");
    assert_eq!(data_lines(&body).last().map(String::as_str), Some("[DONE]"));

    let (_, _, body) = post(&base, "/chat/completions", chat_body("two")).await;
    let chunks: Vec<Value> = data_lines(&body)
        .iter()
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect();
    let header = chunks
        .iter()
        .find_map(|c| c.pointer("/choices/0/delta/tool_calls/0"))
        .unwrap();
    assert_eq!(header["function"]["name"], "shell");
    assert_eq!(header["id"], "call_mock_2_0");
    assert!(
        chunks
            .iter()
            .any(|c| c["choices"][0]["finish_reason"] == "tool_calls")
    );

    let (status, _, body) = post(&base, "/chat/completions", chat_body("three")).await;
    assert_eq!(status, 500);
    assert!(body.contains("mock script exhausted"), "{body}");

    let reqs = server.requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!(reqs[1].last_user_text().as_deref(), Some("two"));
    assert_eq!(reqs[1].wire_api(), WireApi::Chat);
    assert!(reqs[0].all_text().contains("sys"));
}

#[tokio::test]
async fn responses_turns_use_responses_events() {
    let server = MockModelServer::start(MockScript::always(
        MockTurn::text("hello").with_reasoning("hmm").chunked(2),
    ))
    .await
    .unwrap();
    let body = json!({"model": "m", "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "q"}]},
        {"type": "function_call_output", "call_id": "c9", "output": "result text"}
    ], "tools": [{"type": "function", "name": "shell"}]});
    let (status, _, text) = post(&server.base_url(), "/responses", body).await;
    assert_eq!(status, 200);
    let events: Vec<&str> = text
        .lines()
        .filter_map(|l| l.strip_prefix("event: "))
        .collect();
    assert_eq!(events.first(), Some(&"response.created"));
    assert_eq!(events.last(), Some(&"response.completed"));
    assert!(events.contains(&"response.reasoning_summary_text.delta"));
    assert_eq!(
        events
            .iter()
            .filter(|e| **e == "response.output_text.delta")
            .count(),
        3
    );
    let req = &server.requests()[0];
    assert_eq!(req.wire_api(), WireApi::Responses);
    assert_eq!(
        req.tool_outputs(),
        [("c9".to_string(), "result text".to_string())]
    );
    assert_eq!(req.tool_names(), ["shell"]);
    assert_eq!(req.last_user_text().as_deref(), Some("q"));
}

#[tokio::test]
async fn a_responses_tool_call_names_its_namespace_when_scripted() {
    // Codex lists an MCP server's tools as a namespace tool and routes calls by namespace.
    let script: MockScript = serde_json::from_value(json!({"responses": [{"type": "turn",
        "tool_calls": [{"name": "codex", "namespace": "mcp__srv", "arguments": "{}"}]}]}))
    .unwrap();
    let server = MockModelServer::start(script).await.unwrap();
    let body = json!({"model": "m", "input": [
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "q"}]}]});
    let (_, _, text) = post(&server.base_url(), "/responses", body).await;
    let done: Vec<Value> = text
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str::<Value>(d).unwrap())
        .filter(|v| v["type"] == "response.output_item.done")
        .collect();
    assert_eq!(done.len(), 1, "{text}");
    assert_eq!(done[0]["item"]["type"], "function_call");
    assert_eq!(done[0]["item"]["name"], "codex");
    assert_eq!(done[0]["item"]["namespace"], "mcp__srv");
}

#[tokio::test]
async fn cycle_round_robins_forever_and_text_deltas_counts() {
    let server = MockModelServer::start(MockScript::cycle(vec![
        MockTurn::text("a").into(),
        MockTurn::text_deltas(25).into(),
    ]))
    .await
    .unwrap();
    let base = server.base_url();
    let mut texts = Vec::new();
    for _ in 0..3 {
        let (_, _, body) = post(&base, "/chat/completions", chat_body("x")).await;
        texts.push(body);
    }
    assert_eq!(chat_text(&texts[0]), "a");
    assert_eq!(chat_text(&texts[2]), "a");
    let deltas = data_lines(&texts[1])
        .iter()
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .filter(|v| {
            v.pointer("/choices/0/delta/content")
                .and_then(Value::as_str)
                .is_some_and(|s| !s.is_empty())
        })
        .count();
    assert_eq!(deltas, 25);
}

#[tokio::test]
async fn control_routes_and_models() {
    let server = MockModelServer::start(MockScript::always(MockTurn::text("one")))
        .await
        .unwrap();
    let base = server.base_url();
    let http = reqwest::Client::new();
    let models: Value = http
        .get(format!("{base}/models"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(models["object"], "list");
    assert_eq!(models["data"][0]["id"], "mock-model");

    post(&base, "/chat/completions", chat_body("q")).await;
    let root = base.trim_end_matches("/v1");
    let recorded: Vec<RecordedRequest> = http
        .get(format!("{root}/__mock/requests"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(recorded.len(), 1, "GET /models is not recorded");
    assert_eq!(recorded[0].path, "/v1/chat/completions");

    // Replace the script over HTTP.
    let (status, _, _) = post(
        root,
        "/__mock/script",
        json!({"responses": [{"type": "turn", "text": "two"}]}),
    )
    .await;
    assert_eq!(status, 200);
    let (_, _, body) = post(&base, "/chat/completions", chat_body("q")).await;
    assert_eq!(chat_text(&body), "two");
    let (status, _, body) = post(root, "/__mock/script", json!({"responses": 5})).await;
    assert_eq!(status, 400);
    assert!(body.contains("not valid"), "{body}");

    http.delete(format!("{root}/__mock/requests"))
        .send()
        .await
        .unwrap();
    assert!(server.requests().is_empty());

    let (status, _, body) = post(&base, "/completions", json!({})).await;
    assert_eq!(status, 404);
    assert!(body.contains("no route"), "{body}");
}

#[tokio::test]
async fn error_and_non_sse_responses() {
    let server = MockModelServer::start(MockScript::new(vec![
        MockResponse::rate_limited("7"),
        MockResponse::not_sse(200, "text/html", "<html/>"),
        MockResponse::error(502, "bad gateway"),
    ]))
    .await
    .unwrap();
    let http = reqwest::Client::new();
    let url = format!("{}/chat/completions", server.base_url());
    let r = http.post(&url).json(&chat_body("q")).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 429);
    assert_eq!(r.headers()["retry-after"], "7");
    assert_eq!(r.headers()["content-type"], "application/json");
    let r = http.post(&url).json(&chat_body("q")).send().await.unwrap();
    assert_eq!(
        (
            r.status().as_u16(),
            r.headers()["content-type"].to_str().unwrap()
        ),
        (200, "text/html")
    );
    let r = http.post(&url).json(&chat_body("q")).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 502);
    assert_eq!(r.headers()["content-type"], "text/plain; charset=utf-8");
    assert_eq!(r.text().await.unwrap(), "bad gateway");
}

#[tokio::test]
async fn wait_for_requests_is_event_driven() {
    let server = MockModelServer::start(MockScript::always(MockTurn::text("ok")))
        .await
        .unwrap();
    // Nothing arrives: returns what there is once the timeout passes.
    assert!(
        server
            .wait_for_requests(1, Duration::from_millis(20))
            .await
            .is_empty()
    );
    let base = server.base_url();
    let sender = tokio::spawn(async move {
        for i in 0..3 {
            post(&base, "/chat/completions", chat_body(&format!("m{i}"))).await;
        }
    });
    let reqs = server.wait_for_requests(3, WAIT).await;
    assert_eq!(reqs.len(), 3);
    assert_eq!(reqs[2].last_user_text().as_deref(), Some("m2"));
    sender.await.unwrap();
}

#[tokio::test]
async fn dropping_the_server_closes_stalled_streams() {
    let server =
        MockModelServer::start(MockScript::always(MockTurn::text("forever").stall_after(1)))
            .await
            .unwrap();
    let url = format!("{}/chat/completions", server.base_url());
    let mut resp = reqwest::Client::new()
        .post(&url)
        .json(&chat_body("q"))
        .send()
        .await
        .unwrap();
    assert!(resp.chunk().await.unwrap().is_some(), "first event arrives");
    drop(server);
    // The stalled stream ends (with an error) instead of hanging.
    let next = tokio::time::timeout(WAIT, resp.chunk()).await;
    assert!(matches!(next, Ok(Err(_)) | Ok(Ok(None))), "{next:?}");
}

#[test]
fn provider_and_config_helpers() {
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let server = MockModelServer::start(MockScript::default()).await.unwrap();
        let p = server.provider(WireApi::Responses);
        assert_eq!(p.base_url.as_deref(), Some(server.base_url().as_str()));
        assert_eq!(p.request_max_retries(), 0);
        let toml = server.config_toml("mock_provider", WireApi::Chat);
        assert!(toml.contains("[model_providers.mock_provider]"));
        assert!(toml.contains(&format!("base_url = \"{}\"", server.base_url())));
        assert!(toml.contains("wire_api = \"chat\""));
    });
}

#[test]
fn binary_serves_until_stdin_closes() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(
        &script,
        r#"{"responses":[{"type":"turn","text":"from the binary"}]}"#,
    )
    .unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_mock-model"))
        .arg("--script")
        .arg(&script)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let base = line
        .trim()
        .strip_prefix("listening ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_string();
    assert!(base.starts_with("http://127.0.0.1:") && base.ends_with("/v1"));

    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let (_, _, body) = post(&base, "/chat/completions", chat_body("hello bin")).await;
        assert_eq!(chat_text(&body), "from the binary");
        let root = base.trim_end_matches("/v1");
        let recorded: Vec<RecordedRequest> = reqwest::get(format!("{root}/__mock/requests"))
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(recorded[0].last_user_text().as_deref(), Some("hello bin"));
    });

    let mut stdin = child.stdin.take().unwrap();
    stdin.flush().unwrap();
    drop(stdin);
    let deadline = Instant::now() + WAIT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        assert!(
            Instant::now() < deadline,
            "mock-model did not exit after stdin closed"
        );
        std::thread::sleep(Duration::from_millis(10));
    };
    assert!(status.success(), "{status}");
}

#[test]
fn binary_rejects_a_bad_script_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("bad.json");
    std::fs::write(&script, r#"{"responses":[{"type":"nope"}]}"#).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_mock-model"))
        .arg("--script")
        .arg(&script)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("bad.json") && err.contains("not a valid mock script"),
        "{err}"
    );
    assert!(out.stdout.is_empty());

    let out = Command::new(env!("CARGO_BIN_EXE_mock-model"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage"));
}

#[tokio::test]
async fn context_window_rejects_big_requests_without_using_up_the_script() {
    let mock = MockModelServer::start(
        MockScript::turns([MockTurn::text("first"), MockTurn::text("second")])
            .with_context_window(300)
            .reporting_usage(),
    )
    .await
    .unwrap();
    let base = mock.base_url();
    let (status, ct, body) = post(&base, "/chat/completions", chat_body(&"x".repeat(2000))).await;
    assert_eq!(status, 400);
    assert!(ct.starts_with("application/json"), "{ct}");
    let err: Value = serde_json::from_str(&body).unwrap();
    let message = err["message"].as_str().unwrap();
    assert!(
        message.contains("maximum context length is 300 tokens"),
        "{message}"
    );
    // The refused request did not use up "first"; the small one reports its size as usage.
    let (status, _, body) = post(&base, "/chat/completions", chat_body("small")).await;
    assert_eq!(status, 200);
    assert_eq!(chat_text(&body), "first");
    let requests = mock.requests();
    assert_eq!(requests.len(), 2);
    assert!(requests[0].approx_tokens() > 300);
    let usage = data_lines(&body)
        .iter()
        .filter_map(|d| serde_json::from_str::<Value>(d).ok())
        .find_map(|v| v.get("usage").filter(|u| u.is_object()).cloned())
        .expect("a usage chunk");
    assert_eq!(usage["prompt_tokens"], json!(requests[1].approx_tokens()));
}

#[tokio::test]
async fn rules_answer_matching_requests_without_advancing_the_script() {
    let mock = MockModelServer::start(
        MockScript::turns([MockTurn::text("scripted")])
            .with_rule("SUMMARIZE", MockTurn::text("a summary")),
    )
    .await
    .unwrap();
    let base = mock.base_url();
    let (_, _, body) = post(&base, "/chat/completions", chat_body("please SUMMARIZE")).await;
    assert_eq!(chat_text(&body), "a summary");
    let (_, _, body) = post(&base, "/chat/completions", chat_body("go on")).await;
    assert_eq!(chat_text(&body), "scripted");
}
