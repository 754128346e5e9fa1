//! Streamable HTTP servers: server-everything (TypeScript SDK) and fastmcp (Python).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

use common::*;
use oi_config::mcp::McpServerTransportConfig;
use oi_mcp_client::{McpProgress, call_result_to_output};
use serde_json::json;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

fn never() -> CancellationToken {
    CancellationToken::new()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_over_streamable_http() {
    let peer = HttpPeer::everything();
    let elicit = TestElicitation::accepting(json!({"name": "Http Ada"}));
    let mut cfg = http(&peer.url);
    if let McpServerTransportConfig::StreamableHttp { http_headers, .. } = &mut cfg.transport {
        http_headers.insert("X-Client".into(), "oi-test".into());
    }
    let s = start_with(vec![("everything", cfg)], elicit.clone()).await;
    s.manager.wait_until_started().await;
    assert_eq!(s.manager.server_error("everything"), None);
    assert!(
        s.manager.server_pid("everything").is_none(),
        "no child for HTTP"
    );

    let r = s
        .manager
        .call_tool(
            "everything",
            "echo",
            args(json!({"message": "over http"})),
            None,
            never(),
        )
        .await
        .unwrap();
    assert_eq!(text_of(&r), "Echo: over http");

    let r = s
        .manager
        .call_tool("everything", "get-tiny-image", None, None, never())
        .await
        .unwrap();
    assert_eq!(call_result_to_output(&r, 10_000).images().count(), 1);

    let (ptx, mut prx) = mpsc::unbounded_channel::<McpProgress>();
    s.manager
        .call_tool(
            "everything",
            "trigger-long-running-operation",
            args(json!({"duration": 0.4, "steps": 2})),
            Some(ptx),
            never(),
        )
        .await
        .unwrap();
    let mut n = 0;
    while prx.try_recv().is_ok() {
        n += 1;
    }
    // rmcp dispatches each notification on its own task: the last one may land after the
    // reply, so require progress, not an exact count.
    assert!((1..=2).contains(&n), "progress over SSE: {n}");

    let m = s.manager.clone();
    wait_until("elicitation tool", || {
        m.lookup("mcp__everything__trigger_elicitation_request")
            .is_some()
    })
    .await;
    let r = s
        .manager
        .call_tool(
            "everything",
            "trigger-elicitation-request",
            None,
            None,
            never(),
        )
        .await
        .unwrap();
    assert!(text_of(&r).contains("- Name: Http Ada"), "{r}");
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fastmcp_over_streamable_http() {
    let peer = HttpPeer::fastmcp();
    let elicit = TestElicitation::accepting(json!({"value": "Grace"}));
    let s = start_with(vec![("py", http(&peer.url))], elicit.clone()).await;
    s.manager.wait_until_started().await;
    assert_eq!(s.manager.server_error("py"), None);
    let mut names: Vec<_> = s
        .manager
        .tools()
        .into_iter()
        .map(|t| t.qualified_name)
        .collect();
    names.sort();
    assert_eq!(
        names,
        vec!["mcp__py__add", "mcp__py__ask_name", "mcp__py__slow"]
    );

    let r = s
        .manager
        .call_tool("py", "add", args(json!({"a": 2, "b": 3})), None, never())
        .await
        .unwrap();
    assert_eq!(r["structuredContent"], json!({"result": 5}));
    let out = call_result_to_output(&r, 10_000);
    assert!(out.text_content().contains("5"));

    let (ptx, mut prx) = mpsc::unbounded_channel::<McpProgress>();
    let r = s
        .manager
        .call_tool(
            "py",
            "slow",
            args(json!({"seconds": 0.3})),
            Some(ptx),
            never(),
        )
        .await
        .unwrap();
    assert_eq!(text_of(&r), "done");
    let mut progress = Vec::new();
    while let Ok(p) = prx.try_recv() {
        progress.push(p);
    }
    assert!((1..=3).contains(&progress.len()), "{progress:?}");
    assert!(
        progress.iter().all(|p| p.total == Some(3.0)),
        "{progress:?}"
    );

    // fastmcp (on the SDK's 2.3.0) speaks 2026-07-28, where its `ctx.elicit` cannot ask: the
    // tool fails, and the user is told once which setting lets it ask.
    assert_eq!(
        s.manager.status()[0].protocol.as_ref().unwrap().version,
        "2026-07-28"
    );
    let mut events = s.events;
    let r = s
        .manager
        .call_tool("py", "ask_name", None, None, never())
        .await
        .unwrap();
    assert_eq!(r["isError"], true, "{r}");
    let warning = loop {
        match events.recv().await.unwrap() {
            oi_protocol::protocol::EventMsg::Warning(w) => break w.message,
            _ => continue,
        }
    };
    assert!(
        warning.contains("protocol_version = \"2025-11-25\"")
            && warning.contains("[mcp_servers.py]"),
        "{warning}"
    );
    s.manager.shutdown().await;

    // With the setting, it asks (elicitation/create over the session).
    let mut legacy = http(&peer.url);
    legacy.protocol_version = oi_config::mcp::McpProtocolVersion::V2025_11_25;
    let s = start_with(vec![("py", legacy)], elicit.clone()).await;
    s.manager.wait_until_started().await;
    assert_eq!(
        s.manager.status()[0].protocol.as_ref().unwrap().version,
        "2025-11-25"
    );
    let r = s
        .manager
        .call_tool("py", "ask_name", None, None, never())
        .await
        .unwrap();
    assert_eq!(text_of(&r), "accept:Grace");
    assert_eq!(
        elicit.seen.lock().unwrap()[0].2["message"],
        "What is your name?"
    );
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unreachable_http_server_fails_with_the_url() {
    // A port nobody listens on: bound (so no other test's server can take it while this
    // runs, which closing it would allow) but never listening, so connections are refused.
    let holder = tokio::net::TcpSocket::new_v4().unwrap();
    holder.bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let port = holder.local_addr().unwrap().port();
    let mut cfg = http(&format!("http://127.0.0.1:{port}/mcp"));
    cfg.startup_timeout = Some(Duration::from_secs(10));
    let s = start(vec![("gone", cfg)]).await;
    s.manager.wait_until_started().await;
    let e = s.manager.server_error("gone").unwrap();
    assert!(
        e.starts_with("MCP client for `gone` failed to start"),
        "{e}"
    );
    assert!(e.contains(&format!("127.0.0.1:{port}")), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn missing_bearer_token_variable_fails_that_server_only() {
    let mut cfg = http("http://127.0.0.1:9/mcp");
    if let McpServerTransportConfig::StreamableHttp {
        bearer_token_env_var,
        ..
    } = &mut cfg.transport
    {
        *bearer_token_env_var = Some("OI_TEST_TOKEN_THAT_IS_NOT_SET".into());
    }
    let s = start(vec![("auth", cfg), ("fx", fixture_server(&[]))]).await;
    s.manager.wait_until_started().await;
    let e = s.manager.server_error("auth").unwrap();
    assert!(
        e.contains(
            "Environment variable OI_TEST_TOKEN_THAT_IS_NOT_SET for MCP server 'auth' is not set"
        ),
        "{e}"
    );
    assert!(s.manager.lookup("mcp__fx__echo").is_some());
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http_server_restart_is_survived() {
    let mut peer = HttpPeer::everything();
    let port = peer.port();
    let mut cfg = http(&peer.url);
    cfg.tool_timeout = Some(Duration::from_secs(5));
    let s = start(vec![("web", cfg)]).await;
    s.manager.wait_until_started().await;
    let echo = |msg: &'static str| {
        let m = s.manager.clone();
        async move {
            m.call_tool("web", "echo", args(json!({"message": msg})), None, never())
                .await
        }
    };
    assert_eq!(text_of(&echo("one").await.unwrap()), "Echo: one");
    peer.kill();
    let e = echo("down").await.unwrap_err().to_string();
    // In our words: the URL, what happened, what to check.
    assert_eq!(
        e,
        format!(
            "cannot connect to {}: connection refused (is the server running, and are the host and port in `url` right?). The connection to MCP server `web` will be re-established on the next call.",
            peer.url
        )
    );
    // A new server on the same port knows nothing of our session: we reconnect.
    let _peer2 = HttpPeer::everything_on(port);
    assert_eq!(text_of(&echo("two").await.unwrap()), "Echo: two");
    s.manager.shutdown().await;
}
