//! One bad part of a server costs only itself, and what fails is said in our words: each test
//! here runs the hostile server it names — a tool list with unreadable tools, a process that
//! exits at start, HTTP endpoints that refuse, 404, 500 or answer with a web page.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

use axum::http::StatusCode;
use axum::response::IntoResponse;
use common::*;
use oi_config::mcp::McpServerConfig;
use oi_protocol::protocol::EventMsg;
use serde_json::json;
use tokio_util::sync::CancellationToken;

/// No rmcp, reqwest or OS phrasing, no Rust type names.
fn in_our_words(message: &str) {
    for library in [
        "rmcp",
        "Transport",
        "error sending request",
        "Client error",
        "os error",
        "Broken pipe",
        "Send message error",
        "ServerJsonRpcMessage",
        "::",
    ] {
        assert!(
            !message.contains(library),
            "`{library}` in the message: {message}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_without_a_usable_schema_costs_only_itself() {
    let mut s = start(vec![("fx", fixture_server(&["--bad-tools"]))]).await;
    s.manager.wait_until_started().await;
    assert_eq!(s.manager.server_error("fx"), None, "the server stays");
    let names: Vec<String> = s.manager.tools().iter().map(|t| t.tool.clone()).collect();
    assert!(names.contains(&"echo".to_string()), "{names:?}");
    assert!(names.contains(&"messy".to_string()), "{names:?}");
    assert!(!names.contains(&"no_schema".to_string()), "{names:?}");
    assert!(!names.contains(&"string_schema".to_string()), "{names:?}");

    // Said once, naming each bad tool and why.
    let warnings: Vec<String> = {
        let mut seen = Vec::new();
        while let Ok(e) = s.events.try_recv() {
            if let EventMsg::Warning(w) = e {
                seen.push(w.message);
            }
        }
        seen
    };
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let w = &warnings[0];
    assert!(w.starts_with("MCP server `fx`: skipped tool `no_schema` (it has no `inputSchema`); tool `string_schema` (its `inputSchema` is a string (\"object\"), not a JSON Schema object); tool number"), "{w}");
    assert!(w.contains("(it has no name)"), "{w}");
    assert!(w.contains("its other 10 tools are available"), "{w}");

    // The status shows why they are not offered.
    let status = s.manager.status();
    let withheld = &status[0].withheld_tools;
    assert!(
        withheld.contains(&(
            "no_schema".to_string(),
            "it has no `inputSchema`".to_string()
        )),
        "{withheld:?}"
    );
    assert!(
        withheld.iter().any(|(n, _)| n == "string_schema"),
        "{withheld:?}"
    );

    // The messy schema reaches the model cleaned, and the tool works.
    let messy = s
        .manager
        .tools()
        .into_iter()
        .find(|t| t.tool == "messy")
        .unwrap();
    assert_eq!(
        messy.input_schema,
        json!({
            "type": "object",
            "properties": {
                "tags": {"type": "array", "items": {}},
                "count": {"type": "integer"},
                "note": {"type": "string"}
            },
            "required": ["count"]
        })
    );
    let r = s
        .manager
        .call_tool(
            "fx",
            "messy",
            args(json!({"count": 2, "tags": ["a"]})),
            None,
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(text_of(&r), r#"messy got {"count": 2, "tags": ["a"]}"#);

    // A tools/list_changed refresh keeps the good tools and does not warn again.
    s.manager
        .call_tool(
            "fx",
            "add_tool",
            args(json!({"name": "fresh"})),
            None,
            CancellationToken::new(),
        )
        .await
        .unwrap();
    wait_until("the new tool", || {
        s.manager.tools().iter().any(|t| t.tool == "fresh")
    })
    .await;
    assert!(s.manager.tools().iter().any(|t| t.tool == "messy"));
    while let Ok(e) = s.events.try_recv() {
        assert!(!matches!(e, EventMsg::Warning(_)), "warned twice: {e:?}");
    }
    s.manager.shutdown().await;
}

/// The server of the issue: it prints why it cannot run and exits at once, usually before
/// our first request (`server/discover`) reaches it (a broken pipe on our side) and sometimes
/// just after.
fn exits_at_start() -> McpServerConfig {
    McpServerConfig::stdio(
        "sh",
        vec![
            "-c".into(),
            "echo 'fatal: API_KEY is not set' >&2; exit 7".into(),
        ],
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_exits_at_start_shows_its_stderr_and_exit() {
    // Several at once, so both orders (our write first, its exit first) are likely seen.
    let servers: Vec<(String, McpServerConfig)> = (0..6)
        .map(|i| (format!("svc{i}"), exits_at_start()))
        .collect();
    let s = start(
        servers
            .iter()
            .map(|(n, c)| (n.as_str(), c.clone()))
            .collect(),
    )
    .await;
    s.manager.wait_until_started().await;
    for (name, _) in &servers {
        let e = s.manager.server_error(name).unwrap();
        assert_eq!(
            e,
            format!(
                "MCP client for `{name}` failed to start: the server process exited during server/discover (exit code 7)\nServer stderr:\nfatal: API_KEY is not set"
            )
        );
        in_our_words(&e);
    }
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_answers_tools_list_with_an_error_is_not_said_to_have_exited() {
    // Like the fixture, it answers an unknown method (our probe's `server/discover`) with
    // -32601; here tools/list is refused by a server that otherwise works, and closing it
    // afterwards is our doing, not a crash.
    let script = r#"
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if msg.get("method") == "initialize":
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": {"protocolVersion": "2025-06-18", "capabilities": {"tools": {}}, "serverInfo": {"name": "refuser", "version": "1"}}}), flush=True)
    elif msg.get("method") == "tools/list":
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32603, "message": "database locked"}}), flush=True)
    elif "id" in msg:
        # As every server of the handshake era does (our probe's server/discover included).
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "Method not found"}}), flush=True)
"#;
    let cfg = McpServerConfig::stdio(venv_python(), vec!["-c".into(), script.into()]);
    let s = start(vec![("refuser", cfg)]).await;
    s.manager.wait_until_started().await;
    let e = s.manager.server_error("refuser").unwrap();
    assert_eq!(
        e,
        "MCP client for `refuser` failed to start: the server answered tools/list with error -32603: database locked"
    );
    s.manager.shutdown().await;
}

/// A loopback HTTP server answering every request with `status`, `content_type` and `body`.
async fn answering(status: StatusCode, content_type: &'static str, body: &'static str) -> String {
    let app = axum::Router::new().fallback(move || async move {
        (
            status,
            [(axum::http::header::CONTENT_TYPE, content_type)],
            body,
        )
            .into_response()
    });
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let _ = axum::serve(listener, app).await;
    });
    format!("http://{addr}/mcp")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_failures_are_said_in_our_words() {
    let missing = answering(StatusCode::NOT_FOUND, "text/plain", "Not Found").await;
    let broken = answering(
        StatusCode::INTERNAL_SERVER_ERROR,
        "text/plain",
        "upstream exploded",
    )
    .await;
    let page = answering(
        StatusCode::OK,
        "text/html; charset=utf-8",
        "<html><body>Welcome</body></html>",
    )
    .await;
    // A port nobody listens on, taken after the servers above hold theirs: freed first, it
    // was once handed to the 404 server (the kernel gives a just-freed port out again).
    let refused = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        drop(listener);
        url
    };
    let s = start(vec![
        ("refused", http(&refused)),
        ("missing", http(&missing)),
        ("broken", http(&broken)),
        ("page", http(&page)),
    ])
    .await;
    s.manager.wait_until_started().await;
    let error = |name: &str| {
        let e = s.manager.server_error(name).unwrap();
        in_our_words(&e);
        e
    };
    assert_eq!(
        error("refused"),
        format!(
            "MCP client for `refused` failed to start: cannot connect to {refused}: connection refused (is the server running, and are the host and port in `url` right?)"
        )
    );
    assert_eq!(
        error("missing"),
        format!(
            "MCP client for `missing` failed to start: the server at {missing} answered HTTP 404 Not Found: no MCP endpoint there; check `url` in [mcp_servers.missing] (it usually ends in `/mcp`)"
        )
    );
    assert_eq!(
        error("broken"),
        format!(
            "MCP client for `broken` failed to start: the server at {broken} answered HTTP 500 Internal Server Error: the server failed; try again later or check its logs"
        )
    );
    assert_eq!(
        error("page"),
        format!(
            "MCP client for `page` failed to start: the server at {page} answered with `text/html; charset=utf-8`, not MCP (JSON or an event stream); check `url` in [mcp_servers.page]"
        )
    );
    s.manager.shutdown().await;
}
