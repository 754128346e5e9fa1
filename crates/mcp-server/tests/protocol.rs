//! Base protocol and lifecycle over an in-memory connection (fake engine).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

use common::*;
use serde_json::{Value, json};
use std::sync::atomic::Ordering;

#[tokio::test]
async fn initialize_echoes_supported_versions_and_describes_the_server() {
    let mut c = start(FakeEngine::new());
    let r = c.initialize(true).await;
    let res = &r["result"];
    assert_eq!(res["protocolVersion"], "2025-06-18");
    assert_eq!(res["capabilities"]["tools"], json!({"listChanged": true}));
    assert_eq!(res["serverInfo"]["name"], "openinterpreter-mcp-server");
    assert_eq!(res["serverInfo"]["title"], "Open Interpreter");
    assert_eq!(res["serverInfo"]["version"], env!("CARGO_PKG_VERSION"));
    // Exactly once.
    let again = c
        .call("initialize", json!({"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"x","version":"1"}}))
        .await;
    assert_eq!(again["error"]["code"], -32600);
    assert_eq!(
        again["error"]["message"],
        "initialize called more than once"
    );
}

#[tokio::test]
async fn old_codex_versions_are_accepted_and_unknown_ones_get_a_counter_offer() {
    for (asked, got) in [
        ("2025-03-26", "2025-03-26"),
        ("2024-11-05", "2024-11-05"),
        ("2025-11-25", "2025-11-25"),
        ("2026-07-28", "2025-11-25"),
        ("banana", "2025-11-25"),
    ] {
        let mut c = start(FakeEngine::new());
        let r = c
            .call("initialize", json!({"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name":"t","version":"0"}}))
            .await;
        assert_eq!(r["result"]["protocolVersion"], got, "asked {asked}");
    }
}

#[tokio::test]
async fn server_discover_answers_and_the_old_handshake_still_works_after_it() {
    let mut c = start(FakeEngine::new());
    // The probe of a dual-era client (the Python SDK's `auto`), then a legacy client's
    // handshake on the same connection: both are served.
    let r = c
        .call(
            "server/discover",
            json!({"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}),
        )
        .await;
    assert_eq!(r["result"]["supportedVersions"], json!(["2026-07-28"]));
    // A discover without `_meta` is malformed, not unknown.
    let r = c.call("server/discover", json!({})).await;
    assert_eq!(r["error"]["code"], -32602);
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("has no `_meta`"),
        "{r}"
    );
    let init = c.initialize(false).await;
    assert!(init["result"]["serverInfo"].is_object());
    assert!(init["result"].get("resultType").is_none(), "{init}");
    assert_eq!(c.call("ping", json!({})).await["result"], json!({}));
}

#[tokio::test]
async fn unknown_methods_and_bad_params_get_specific_errors() {
    let mut c = start(FakeEngine::new());
    let r = c.call("tasks/list", json!({})).await;
    assert_eq!(
        (
            r["error"]["code"].clone(),
            r["error"]["data"]["method"].clone()
        ),
        (json!(-32601), json!("tasks/list"))
    );
    // The Tasks extension's methods exist only in 2026-07-28 (with their `_meta`).
    let r = c.call("tasks/get", json!({"taskId": "x"})).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("exists only in MCP 2026-07-28"),
        "{r}"
    );

    // A known method with bad params is -32602 naming the problem, not -32601.
    let r = c.call("tools/call", json!({"arguments": {}})).await;
    assert_eq!(r["error"]["code"], -32602);
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("missing field `name`"),
        "{r}"
    );
    let r = c.call("tools/call", json!({"name": 5})).await;
    assert_eq!(r["error"]["code"], -32602);
    let r = c.call("initialize", json!({"capabilities": {}})).await;
    assert_eq!(r["error"]["code"], -32602);
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("protocolVersion"),
        "{r}"
    );
    let id = c.request("ping", json!([1, 2])).await;
    let r = c.response(id).await;
    assert_eq!(r["error"]["code"], -32602);
    let r = c.call("tools/call", json!({"name": "nope"})).await;
    assert_eq!(r["error"]["code"], -32602);
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("unknown tool `nope`"),
        "{r}"
    );
    // The failed initialize did not count: a real one still works.
    assert!(c.initialize(false).await["result"].is_object());
}

#[tokio::test]
async fn garbage_lines_get_parse_errors_with_null_id() {
    let mut c = start(FakeEngine::new());
    c.send_raw(b"this is not json\n").await;
    let r = c.read().await.unwrap();
    assert_eq!(r["id"], Value::Null);
    assert_eq!(r["error"]["code"], -32700);

    c.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"pi\xffng\"}\n")
        .await;
    let r = c.read().await.unwrap();
    assert_eq!(r["error"]["code"], -32700);
    assert!(
        r["error"]["message"].as_str().unwrap().contains("UTF-8"),
        "{r}"
    );

    c.send_raw(b"[1,2]\n").await;
    assert_eq!(c.read().await.unwrap()["error"]["code"], -32600);
    c.send_raw(b"{\"jsonrpc\":\"2.0\",\"id\":true,\"method\":\"ping\"}\n")
        .await;
    assert_eq!(c.read().await.unwrap()["error"]["code"], -32600);

    // A missing "jsonrpc" member is tolerated; the reply always has it.
    c.send_raw(b"{\"id\":\"s-1\",\"method\":\"ping\"}\n").await;
    let r = c.read().await.unwrap();
    assert_eq!(
        (r["id"].clone(), r["result"].clone()),
        (json!("s-1"), json!({}))
    );
}

#[tokio::test]
async fn a_ten_megabyte_line_is_refused_without_losing_the_connection() {
    let mut c = start(FakeEngine::new());
    let mut line = br#"{"jsonrpc":"2.0","id":77,"method":"tools/call","params":{"name":"codex","arguments":{"prompt":""#.to_vec();
    line.extend(std::iter::repeat_n(b'a', 10 * 1024 * 1024));
    line.extend_from_slice(b"\"}}}\n");
    // Write and read concurrently: the duplex buffer is smaller than the line.
    let (r, _) = tokio::join!(c.read_until_id_after_write(line), async {});
    assert_eq!(r["id"], 77);
    assert_eq!(r["error"]["code"], -32600);
    assert!(
        r["error"]["message"].as_str().unwrap().contains("exceeds"),
        "{r}"
    );
    assert_eq!(c.call("ping", json!({})).await["result"], json!({}));
}

#[tokio::test]
async fn resources_and_prompts_answer_in_the_old_shape_never_silence() {
    let mut c = start(FakeEngine::new());
    c.initialize(false).await;
    // An engine that stores nothing and has no prompt files: empty lists, no caching
    // hints or result types in this era.
    assert_eq!(
        c.call("resources/list", json!({})).await["result"],
        json!({"resources": []})
    );
    let templates = c.call("resources/templates/list", json!({})).await;
    let uris: Vec<&str> = templates["result"]["resourceTemplates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["uriTemplate"].as_str().unwrap())
        .collect();
    assert_eq!(
        uris,
        [
            "interpreter://threads/{threadId}",
            "interpreter://threads/{threadId}/items"
        ]
    );
    assert!(templates["result"].get("ttlMs").is_none(), "{templates}");
    assert_eq!(
        c.call("prompts/list", json!({})).await["result"],
        json!({"prompts": []})
    );
    let missing = c.call("resources/read", json!({"uri":"file:///x"})).await;
    assert_eq!(missing["error"]["code"], -32002);
    assert_eq!(missing["error"]["data"], json!({"uri": "file:///x"}));
    let thread = format!("interpreter://threads/{}", oi_protocol::ThreadId::new());
    let missing = c.call("resources/read", json!({ "uri": thread })).await;
    assert_eq!(missing["error"]["code"], -32002, "{missing}");
    assert_eq!(
        c.call("prompts/get", json!({"name":"x"})).await["error"]["code"],
        -32602
    );
    assert_eq!(
        c.call("logging/setLevel", json!({"level":"debug"})).await["result"],
        json!({})
    );
}

#[tokio::test]
async fn tools_list_has_codex_and_codex_reply() {
    let mut c = start(FakeEngine::new());
    c.initialize(false).await;
    let r = c.call("tools/list", json!({})).await;
    let tools = r["result"]["tools"].as_array().unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["codex", "codex-reply"]);
    assert!(r["result"].get("nextCursor").is_none());
    assert_eq!(
        tools[0]["inputSchema"]["properties"]["approval-policy"]["enum"],
        json!(["untrusted", "on-failure", "on-request", "never"])
    );
}

#[tokio::test]
async fn tools_list_describes_open_interpreter_not_codex() {
    let mut c = start(FakeEngine::new());
    c.initialize(false).await;
    let r = c.call("tools/list", json!({})).await;
    // Every human-readable string of both tools, schema descriptions included.
    fn strings(v: &serde_json::Value, out: &mut Vec<String>) {
        match v {
            serde_json::Value::String(s) => out.push(s.clone()),
            serde_json::Value::Array(a) => a.iter().for_each(|v| strings(v, out)),
            serde_json::Value::Object(o) => o.values().for_each(|v| strings(v, out)),
            _ => {}
        }
    }
    let mut text = Vec::new();
    strings(&r["result"]["tools"], &mut text);
    let text = text.join("\n");
    for wrong in ["Codex session", "Codex conversation", "CODEX_HOME", "gpt-"] {
        assert!(
            !text.contains(wrong),
            "tools/list still says `{wrong}`:\n{text}"
        );
    }
    let codex = &r["result"]["tools"][0];
    let description = codex["description"].as_str().unwrap();
    assert!(description.contains("Open Interpreter"), "{description}");
    assert!(
        description.contains("OPENINTERPRETER_HOME"),
        "{description}"
    );
    let config = codex["inputSchema"]["properties"]["config"]["description"]
        .as_str()
        .unwrap();
    assert!(
        config.contains("OPENINTERPRETER_HOME/config.toml"),
        "{config}"
    );
    let model = codex["inputSchema"]["properties"]["model"]["description"]
        .as_str()
        .unwrap();
    assert!(model.contains("qwen3-coder"), "{model}");
}

#[tokio::test]
async fn a_request_flood_is_answered_completely() {
    let mut c = start(FakeEngine::new());
    c.initialize(false).await;
    let mut batch = Vec::new();
    for i in 0..2000 {
        batch.extend_from_slice(
            format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}}\n",
                10_000 + i
            )
            .as_bytes(),
        );
    }
    let writer = c.take_writer();
    let feeder = tokio::spawn(async move {
        let mut w = writer;
        tokio::io::AsyncWriteExt::write_all(&mut w, &batch)
            .await
            .unwrap();
        w
    });
    let mut ids = Vec::new();
    while ids.len() < 2000 {
        let v = c.read().await.unwrap();
        assert_eq!(v["result"], json!({}), "{v}");
        ids.push(v["id"].as_i64().unwrap());
    }
    ids.sort_unstable();
    assert_eq!(ids, (10_000..12_000).collect::<Vec<_>>());
    c.put_writer(feeder.await.unwrap());
    assert_eq!(c.call("ping", json!({})).await["result"], json!({}));
}

#[tokio::test]
async fn duplicate_in_flight_ids_are_rejected() {
    let mut c = start(FakeEngine::new());
    c.initialize(true).await;
    c.send(json!({"jsonrpc":"2.0","id":500,"method":"tools/call","params":{"name":"codex","arguments":{"prompt":"hang"}}})).await;
    c.read_until(|v| v["params"]["msg"]["type"] == "task_started")
        .await;
    c.send(json!({"jsonrpc":"2.0","id":500,"method":"ping"}))
        .await;
    let r = c.response(500).await;
    assert_eq!(r["error"]["code"], -32600);
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already in use"),
        "{r}"
    );
}

#[tokio::test]
async fn eof_on_stdin_shuts_down_cleanly_even_mid_turn() {
    let engine = FakeEngine::new();
    let mut c = start(engine.clone());
    c.initialize(true).await;
    let id = c.tool("codex", json!({"prompt": "hang"})).await;
    c.read_until(|v| v["params"]["msg"]["type"] == "task_started")
        .await;
    c.close_stdin().await;
    // The running call still gets an answer: the turn was interrupted by the shutdown.
    let r = c.response(id).await;
    assert!(is_error(&r), "{r}");
    assert!(text(&r).contains("shutting down"), "{r}");
    while c.read().await.is_some() {}
    assert_eq!(c.exit_code().await, 0);
    assert!(engine.shutdown_called.load(Ordering::SeqCst));
}

#[tokio::test]
async fn eof_when_idle_exits_zero() {
    let engine = FakeEngine::new();
    let mut c = start(engine.clone());
    c.initialize(false).await;
    c.close_stdin().await;
    assert!(c.read().await.is_none());
    assert_eq!(c.exit_code().await, 0);
    assert!(engine.shutdown_called.load(Ordering::SeqCst));
}

/// An output that fails like a pipe whose reader went away.
struct GoneClient;

impl tokio::io::AsyncWrite for GoneClient {
    fn poll_write(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
        _: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::task::Poll::Ready(Err(std::io::ErrorKind::BrokenPipe.into()))
    }
    fn poll_flush(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
    fn poll_shutdown(
        self: std::pin::Pin<&mut Self>,
        _: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::task::Poll::Ready(Ok(()))
    }
}

#[tokio::test]
async fn a_client_that_stops_reading_mid_turn_ends_the_server_cleanly() {
    let engine = FakeEngine::new();
    let (mut client_in, server_in) = tokio::io::duplex(1 << 16);
    let server = tokio::spawn(oi_mcp_server::serve(server_in, GoneClient, engine.clone()));
    let call = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"codex","arguments":{"prompt":"hang"}}}"#;
    tokio::io::AsyncWriteExt::write_all(&mut client_in, call)
        .await
        .unwrap();
    tokio::io::AsyncWriteExt::write_all(&mut client_in, b"\n")
        .await
        .unwrap();
    // stdin stays open; the failed write alone must shut the server down.
    let code = tokio::time::timeout(WAIT, server)
        .await
        .expect("server kept running")
        .unwrap();
    assert_eq!(code, 0);
    assert!(engine.shutdown_called.load(Ordering::SeqCst));
    drop(client_in);
}

#[tokio::test]
async fn a_handler_that_panics_answers_internal_error_and_the_server_lives_on() {
    let mut c = start(FakeEngine::new());
    c.initialize(false).await;
    let r = c
        .call(
            "tools/call",
            json!({"name": "codex", "arguments": {"prompt": "x", "model": "panic-model"}}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
    assert_eq!(c.call("ping", json!({})).await["result"], json!({}));
}
