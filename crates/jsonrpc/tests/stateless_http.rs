//! The stateless path of MCP 2026-07-28 over real sockets: requests without a session, the
//! standard headers checked against the body, one JSON body or an SSE stream per request,
//! the status each refusal calls for, a closed stream cancelling its request, and every
//! refusal a JSON-RPC body. Sessions (`initialize`) keep working beside it.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use oi_jsonrpc::http::{HttpOptions, MethodsFactory, Tables, serve_http};
use oi_jsonrpc::{Answer, Execution, INVALID_PARAMS, MethodTable, RpcError};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// Generous: only reached when the behaviour under test is missing.
const DEADLINE: Duration = Duration::from_secs(30);

struct Server {
    addr: SocketAddr,
    stop: CancellationToken,
    /// What the `slow` method saw when it was cancelled: whether the client did it.
    cancelled: mpsc::UnboundedReceiver<bool>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

fn stateless_table(cancelled: mpsc::UnboundedSender<bool>) -> MethodTable {
    let mut t = MethodTable::new();
    t.request("echo", Execution::Inline, |_ctx, p: Value| async move {
        Ok(json!({ "echo": p }))
    });
    t.request("bad", Execution::Inline, |_ctx, _p: Value| async {
        Err::<Value, _>(RpcError::new(INVALID_PARAMS, "bad params"))
    });
    t.request("stream", Execution::Spawn, |ctx, _p: Value| async move {
        for n in 0..2 {
            ctx.outgoing
                .notify(
                    "notifications/progress",
                    json!({"progressToken": 1, "progress": n}),
                )
                .await;
        }
        Ok(json!({"done": true}))
    });
    t.request("slow", Execution::Spawn, move |ctx, _p: Value| {
        let cancelled = cancelled.clone();
        async move {
            ctx.outgoing
                .notify(
                    "notifications/progress",
                    json!({"progressToken": 1, "progress": 0}),
                )
                .await;
            ctx.cancel.cancelled().await;
            let _ = cancelled.send(ctx.cancelled_by_client());
            Ok(json!({"stopped": true}))
        }
    });
    t.request("asks", Execution::Spawn, |ctx, _p: Value| async move {
        let never = CancellationToken::new();
        let (_, answer) = ctx
            .outgoing
            .ask(
                "elicitation/create",
                json!({}),
                Duration::from_secs(600),
                &never,
            )
            .await;
        Ok(json!({ "answered": !matches!(answer, Answer::NoAnswer(_)) }))
    });
    t
}

async fn start(configure: impl FnOnce(&mut HttpOptions)) -> Server {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let mut opts = HttpOptions::new(addr);
    configure(&mut opts);
    let sessions: MethodsFactory = Arc::new(|_conn| {
        let mut table = MethodTable::new();
        table.request("initialize", Execution::Inline, |_ctx, _p: Value| async {
            Ok(json!({"session": true}))
        });
        table.request("echo", Execution::Inline, |_ctx, _p: Value| async {
            Ok(json!({"in": "session"}))
        });
        table
    });
    let (tx, cancelled) = mpsc::unbounded_channel();
    let tables = Tables {
        sessions,
        stateless: Some(stateless_table(tx)),
    };
    let stop = CancellationToken::new();
    tokio::spawn(serve_http(listener, opts, tables, stop.clone()));
    Server {
        addr,
        stop,
        cancelled,
    }
}

fn modern(method: &str, id: i64) -> String {
    json!({
        "jsonrpc": "2.0", "id": id, "method": method,
        "params": {"x": 1, "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        }}
    })
    .to_string()
}

fn standard(method: &str) -> Vec<(String, String)> {
    vec![
        ("MCP-Protocol-Version".into(), "2026-07-28".into()),
        ("Mcp-Method".into(), method.into()),
    ]
}

fn request(verb: &str, headers: &[(String, String)], body: &str) -> String {
    let mut text = format!(
        "{verb} /mcp HTTP/1.1\r\nhost: 127.0.0.1\r\naccept: application/json, text/event-stream\r\ncontent-type: application/json\r\nconnection: close\r\ncontent-length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        text.push_str(&format!("{k}: {v}\r\n"));
    }
    text.push_str("\r\n");
    text.push_str(body);
    text
}

/// One exchange on a fresh connection, read to its end: (status, head, body).
async fn exchange(
    server: &Server,
    verb: &str,
    headers: &[(String, String)],
    body: &str,
) -> (u16, String, String) {
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(request(verb, headers, body).as_bytes())
        .await
        .unwrap();
    let mut all = Vec::new();
    tokio::time::timeout(DEADLINE, stream.read_to_end(&mut all))
        .await
        .expect("no complete response")
        .unwrap();
    let text = String::from_utf8_lossy(&all).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    let status = head[9..12].parse().unwrap();
    (status, head.to_lowercase(), body.to_string())
}

fn json_body(head: &str, body: &str) -> Value {
    assert!(head.contains("content-type: application/json"), "{head}");
    serde_json::from_str(body.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {body}"))
}

#[tokio::test]
async fn a_request_with_its_version_in_meta_needs_no_session() {
    let server = start(|_| {}).await;
    let (status, head, body) =
        exchange(&server, "POST", &standard("echo"), &modern("echo", 7)).await;
    assert_eq!(status, 200, "{body}");
    let v = json_body(&head, &body);
    assert_eq!(v["id"], 7);
    assert_eq!(v["result"]["echo"]["x"], 1);
    assert!(!head.contains("mcp-session-id"), "{head}");
    // A session id the client sends anyway is ignored.
    let mut headers = standard("echo");
    headers.push(("mcp-session-id".into(), "nonsense".into()));
    let (status, _, body) = exchange(&server, "POST", &headers, &modern("echo", 8)).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn headers_that_disagree_with_the_body_are_refused_before_anything_runs() {
    let server = start(|_| {}).await;
    let cases: Vec<Vec<(String, String)>> = vec![
        vec![("MCP-Protocol-Version".into(), "2026-07-28".into())],
        vec![
            ("MCP-Protocol-Version".into(), "2026-07-28".into()),
            ("Mcp-Method".into(), "ECHO".into()),
        ],
        vec![("Mcp-Method".into(), "echo".into())],
    ];
    for headers in cases {
        let (status, head, body) = exchange(&server, "POST", &headers, &modern("echo", 3)).await;
        assert_eq!(status, 400, "{headers:?}: {body}");
        let v = json_body(&head, &body);
        assert_eq!(v["id"], 3);
        assert_eq!(v["error"]["code"], -32020, "{v}");
    }
    // Header names are case-insensitive, values trimmed.
    let headers = vec![
        ("mcp-protocol-version".into(), " 2026-07-28 ".into()),
        ("MCP-METHOD".into(), "echo".into()),
    ];
    let (status, _, body) = exchange(&server, "POST", &headers, &modern("echo", 4)).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn errors_get_the_status_their_code_calls_for() {
    let server = start(|_| {}).await;
    let (status, head, body) = exchange(&server, "POST", &standard("bad"), &modern("bad", 5)).await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(json_body(&head, &body)["error"]["code"], -32602);
    let (status, head, body) = exchange(
        &server,
        "POST",
        &standard("nope/nope"),
        &modern("nope/nope", 6),
    )
    .await;
    assert_eq!(status, 404, "{body}");
    let v = json_body(&head, &body);
    assert_eq!(
        (v["id"].clone(), v["error"]["code"].clone()),
        (json!(6), json!(-32601))
    );
}

#[tokio::test]
async fn notifications_first_make_an_event_stream_ending_with_the_answer() {
    let server = start(|_| {}).await;
    let (status, head, body) =
        exchange(&server, "POST", &standard("stream"), &modern("stream", 9)).await;
    assert_eq!(status, 200, "{body}");
    assert!(head.contains("content-type: text/event-stream"), "{head}");
    assert!(head.contains("x-accel-buffering: no"), "{head}");
    let data: Vec<Value> = body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(data.len(), 3, "{body}");
    assert_eq!(data[0]["method"], "notifications/progress");
    assert_eq!(data[2]["result"], json!({"done": true}));
    // 2026-07-28 streams are not resumable: no event ids.
    assert!(!body.lines().any(|l| l.starts_with("id:")), "{body}");
}

#[tokio::test]
async fn closing_the_stream_cancels_the_request_as_the_client() {
    let mut server = start(|o| o.idle_timeout = Duration::from_millis(300)).await;
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    stream
        .write_all(request("POST", &standard("slow"), &modern("slow", 10)).as_bytes())
        .await
        .unwrap();
    // Wait for the stream's first event, then hang up.
    let mut seen = Vec::new();
    tokio::time::timeout(DEADLINE, async {
        let mut chunk = [0u8; 1024];
        while !String::from_utf8_lossy(&seen).contains("notifications/progress") {
            let n = stream.read(&mut chunk).await.unwrap();
            assert!(n > 0, "closed before the first event");
            seen.extend_from_slice(&chunk[..n]);
        }
    })
    .await
    .expect("no first event");
    drop(stream);
    let by_client = tokio::time::timeout(DEADLINE, server.cancelled.recv())
        .await
        .expect("the request was not cancelled")
        .unwrap();
    assert!(by_client, "cancelled, but not as the client's cancellation");
}

#[tokio::test]
async fn a_server_to_client_request_fails_at_once() {
    let server = start(|_| {}).await;
    let (status, head, body) =
        exchange(&server, "POST", &standard("asks"), &modern("asks", 11)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(
        json_body(&head, &body)["result"],
        json!({"answered": false})
    );
}

#[tokio::test]
async fn sessions_still_open_with_initialize_and_everything_else_is_told_what_it_lacks() {
    let server = start(|_| {}).await;
    let init = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}"#;
    let (status, head, body) = exchange(&server, "POST", &[], init).await;
    assert_eq!(status, 200, "{body}");
    let session = head
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id:"))
        .expect("no session id")
        .trim()
        .to_string();
    let legacy = r#"{"jsonrpc":"2.0","id":2,"method":"echo","params":{}}"#;
    let (status, _, body) = exchange(
        &server,
        "POST",
        &[("mcp-session-id".into(), session)],
        legacy,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#""in":"session""#), "{body}");
    // No session and no version: the stateless table answers (here: the test table has no
    // check of its own, so the request simply runs).
    let (status, _, _) = exchange(&server, "POST", &[], legacy).await;
    assert_eq!(status, 200);
    // Notifications are accepted; GET and DELETE need a session.
    let note = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#;
    let (status, _, _) = exchange(&server, "POST", &[], note).await;
    assert_eq!(status, 202);
    for verb in ["GET", "DELETE"] {
        let (status, head, body) = exchange(&server, verb, &[], "").await;
        assert_eq!(status, 405, "{verb}: {body}");
        assert!(head.contains("allow: post"), "{head}");
        let v = json_body(&head, &body);
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("subscriptions/listen")
        );
    }
}

#[tokio::test]
async fn refusals_are_json_rpc_bodies_never_plain_text() {
    let server = start(|o| {
        o.auth_token = Some("t".repeat(40));
        o.max_body_bytes = 1024;
    })
    .await;
    let (status, head, body) =
        exchange(&server, "POST", &standard("echo"), &modern("echo", 1)).await;
    assert_eq!(status, 401, "{body}");
    assert!(head.contains("www-authenticate: bearer"), "{head}");
    assert_eq!(json_body(&head, &body)["error"]["code"], -32600);
    let auth = (
        "authorization".to_string(),
        format!("Bearer {}", "t".repeat(40)),
    );
    let mut headers = standard("echo");
    headers.push(auth.clone());
    headers.push(("origin".into(), "http://evil.example".into()));
    let (status, head, body) = exchange(&server, "POST", &headers, &modern("echo", 1)).await;
    assert_eq!(status, 403, "{body}");
    assert!(
        json_body(&head, &body)["error"]["message"]
            .as_str()
            .unwrap()
            .contains("--allowed-origin")
    );
    let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(4096));
    let (status, head, body) = exchange(&server, "POST", std::slice::from_ref(&auth), &big).await;
    assert_eq!(status, 413, "{body}");
    assert!(
        json_body(&head, &body)["error"]["message"]
            .as_str()
            .unwrap()
            .contains("1024 bytes")
    );
    let (status, head, body) =
        exchange(&server, "POST", std::slice::from_ref(&auth), "not json").await;
    assert_eq!(status, 400, "{body}");
    assert_eq!(json_body(&head, &body)["error"]["code"], -32700);
    // Other verbs and paths too.
    let (status, head, body) = exchange(&server, "PUT", std::slice::from_ref(&auth), "{}").await;
    assert_eq!(status, 405, "{body}");
    assert!(
        json_body(&head, &body)["error"]["message"]
            .as_str()
            .unwrap()
            .contains("POST")
    );
    let mut stream = TcpStream::connect(server.addr).await.unwrap();
    let req = format!(
        "GET /other HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: {}\r\nconnection: close\r\n\r\n",
        auth.1
    );
    stream.write_all(req.as_bytes()).await.unwrap();
    let mut all = Vec::new();
    stream.read_to_end(&mut all).await.unwrap();
    let text = String::from_utf8_lossy(&all).to_lowercase();
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("http/1.1 404"), "{head}");
    assert!(
        json_body(head, body)["error"]["message"]
            .as_str()
            .unwrap()
            .contains("/mcp")
    );
}
