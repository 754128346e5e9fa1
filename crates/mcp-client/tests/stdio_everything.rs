//! The manager against `@modelcontextprotocol/server-everything` over stdio.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

use common::*;
use oi_mcp_client::{McpProgress, call_result_to_output};
use oi_protocol::protocol::{EventMsg, McpStartupStatus};
use serde_json::json;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn everything_catalog_calls_and_events() {
    let elicit = TestElicitation::accepting(json!({"name": "Ada", "check": true}));
    // `roots = ["."]`: the session cwd is offered as the one root (see get-roots-list below).
    let mut cfg = everything_stdio();
    cfg.roots = Some(vec![".".into()]);
    let mut s = start_with(vec![("everything", cfg)], elicit.clone()).await;
    s.manager.wait_until_started().await;

    let events = startup_events(&mut s.events).await;
    let kinds: Vec<String> = events
        .iter()
        .map(|e| match e {
            EventMsg::McpStartupUpdate(u) => format!("{}:{:?}", u.server, u.status),
            EventMsg::McpStartupComplete(c) => format!("complete:{:?}", c.ready),
            other => other.kind().to_string(),
        })
        .collect();
    assert_eq!(
        kinds,
        vec![
            "everything:Starting".to_string(),
            "everything:Ready".to_string(),
            "complete:[\"everything\"]".to_string()
        ]
    );

    // Conditional tools (roots, elicitation) may be registered right after `initialized`
    // and announced with tools/list_changed.
    let m = s.manager.clone();
    wait_until("conditional tools", || {
        m.lookup("mcp__everything__trigger-elicitation-request")
            .is_none()
            && m.lookup("mcp__everything__trigger_elicitation_request")
                .is_some()
            && m.lookup("mcp__everything__get_roots_list").is_some()
    })
    .await;
    let echo = s
        .manager
        .lookup("mcp__everything__echo")
        .expect("echo listed");
    assert_eq!(echo.server, "everything");
    assert_eq!(echo.tool, "echo");
    assert!(echo.input_schema["properties"]["message"].is_object());
    let structured = s
        .manager
        .lookup("mcp__everything__get_structured_content")
        .unwrap();
    assert_eq!(
        structured.tool, "get-structured-content",
        "raw name kept for the wire"
    );
    assert_eq!(
        structured.annotations.as_ref().unwrap()["readOnlyHint"],
        true
    );
    assert!(s.manager.tools().iter().all(|t| {
        t.qualified_name.len() <= 64
            && t.qualified_name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
    }));
    assert!(
        s.manager
            .lookup("mcp__everything__trigger_sampling_request")
            .is_none(),
        "we do not advertise sampling"
    );

    // echo
    let r = s
        .manager
        .call_tool(
            "everything",
            "echo",
            args(json!({"message": "hi"})),
            None,
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(text_of(&r), "Echo: hi");

    // structured content: kept, and the text too
    let r = s
        .manager
        .call_tool(
            "everything",
            "get-structured-content",
            args(json!({"location": "Chicago"})),
            None,
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(r["structuredContent"]["temperature"].is_number(), "{r}");
    let out = call_result_to_output(&r, 10_000);
    let first: serde_json::Value =
        serde_json::from_str(out.text_content().lines().next().unwrap()).unwrap();
    assert_eq!(first, r["structuredContent"]);

    // image
    let r = s
        .manager
        .call_tool(
            "everything",
            "get-tiny-image",
            None,
            None,
            CancellationToken::new(),
        )
        .await
        .unwrap();
    let out = call_result_to_output(&r, 10_000);
    let images: Vec<_> = out.images().collect();
    assert_eq!(images.len(), 1, "{r}");
    assert!(images[0].starts_with("data:image/png;base64,"));

    // progress
    let (ptx, mut prx) = mpsc::unbounded_channel::<McpProgress>();
    let r = s
        .manager
        .call_tool(
            "everything",
            "trigger-long-running-operation",
            args(json!({"duration": 0.6, "steps": 3})),
            Some(ptx),
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert!(text_of(&r).contains("completed"), "{r}");
    let mut progress = Vec::new();
    while let Ok(p) = prx.try_recv() {
        progress.push(p);
    }
    // rmcp dispatches each notification on its own task: the last one may land after the
    // reply, so require progress with the right totals, not an exact count.
    assert!((1..=3).contains(&progress.len()), "{progress:?}");
    assert!(
        progress
            .iter()
            .all(|p| p.total == Some(3.0) && p.progress <= 3.0),
        "{progress:?}"
    );

    // elicitation goes to our handler and the answer back to the server
    let r = s
        .manager
        .call_tool(
            "everything",
            "trigger-elicitation-request",
            None,
            None,
            CancellationToken::new(),
        )
        .await
        .unwrap();
    let t = text_of(&r);
    assert!(t.contains("User provided the requested information"), "{t}");
    assert!(t.contains("- Name: Ada"), "{t}");
    let seen = elicit.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0].0, "everything");
    assert!(
        seen[0].2["requestedSchema"]["properties"]["name"].is_object(),
        "{:?}",
        seen[0].2
    );

    // roots/list answers the configured root: the session cwd
    let r = s
        .manager
        .call_tool(
            "everything",
            "get-roots-list",
            None,
            None,
            CancellationToken::new(),
        )
        .await
        .unwrap();
    let cwd_uri = format!("file://{}", s.cwd.path().display());
    assert!(
        text_of(&r).contains(&cwd_uri),
        "{} lacks {cwd_uri}",
        text_of(&r)
    );

    // protocol-level error for an unknown tool is an Err with the server's message
    let e = s
        .manager
        .call_tool(
            "everything",
            "no-such-tool",
            None,
            None,
            CancellationToken::new(),
        )
        .await;
    match e {
        Err(e) => assert!(e.to_string().contains("no-such-tool"), "{e}"),
        Ok(r) => assert_eq!(r["isError"], true, "{r}"),
    }

    let pid = s.manager.server_pid("everything").unwrap();
    assert!(pid_alive(pid));
    s.manager.shutdown().await;
    wait_until("server-everything to exit", || !pid_alive(pid)).await;
    let e = s
        .manager
        .call_tool(
            "everything",
            "echo",
            args(json!({"message": "x"})),
            None,
            CancellationToken::new(),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("shut down"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tool_timeout_cancels_and_server_keeps_working() {
    let mut cfg = everything_stdio();
    cfg.tool_timeout = Some(std::time::Duration::from_millis(500));
    let s = start(vec![("everything", cfg)]).await;
    s.manager.wait_until_started().await;
    let e = s
        .manager
        .call_tool(
            "everything",
            "trigger-long-running-operation",
            args(json!({"duration": 20, "steps": 20})),
            None,
            CancellationToken::new(),
        )
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("timed out awaiting tools/call"), "{e}");
    assert!(e.contains("tool_timeout_sec"), "{e}");
    let r = s
        .manager
        .call_tool(
            "everything",
            "echo",
            args(json!({"message": "still here"})),
            None,
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(text_of(&r), "Echo: still here");
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filesystem_server_and_out_of_order_replies() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha").unwrap();
    std::fs::write(dir.path().join("b.txt"), "beta").unwrap();
    let root = dir.path().canonicalize().unwrap().display().to_string();
    let cfg = oi_config::mcp::McpServerConfig::stdio(node(), vec![filesystem_js(), root.clone()]);
    // No `roots` configured, so no roots capability: the server serves its argument, not the
    // session cwd (a different directory here).
    let s = start(vec![("fs", cfg)]).await;
    s.manager.wait_until_started().await;
    assert!(s.manager.lookup("mcp__fs__read_text_file").is_some());
    let m = &s.manager;
    // Several calls at once: replies may come back in any order and must still match.
    let calls = (0..6).map(|i| {
        let file = if i % 2 == 0 { "a.txt" } else { "b.txt" };
        let path = format!("{root}/{file}");
        async move {
            m.call_tool(
                "fs",
                "read_text_file",
                args(json!({"path": path})),
                None,
                CancellationToken::new(),
            )
            .await
        }
    });
    let results = futures::future::join_all(calls).await;
    for (i, r) in results.into_iter().enumerate() {
        let want = if i % 2 == 0 { "alpha" } else { "beta" };
        assert_eq!(text_of(&r.unwrap()), want);
    }
    let r = m
        .call_tool(
            "fs",
            "read_text_file",
            args(json!({"path": "/etc/hostname"})),
            None,
            CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!(r["isError"], true, "{r}");
    assert!(text_of(&r).contains("Access denied"), "{r}");
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn startup_status_is_reported_for_each_server() {
    let mut bad = fixture_server(&["--fail-init", "boom: missing license key"]);
    bad.required = false;
    let mut s = start(vec![("everything", everything_stdio()), ("broken", bad)]).await;
    let events = startup_events(&mut s.events).await;
    let EventMsg::McpStartupComplete(done) = events.last().unwrap() else {
        panic!()
    };
    assert_eq!(done.ready, vec!["everything"]);
    assert_eq!(done.failed.len(), 1);
    assert_eq!(done.failed[0].server, "broken");
    assert!(
        done.failed[0].error.contains("boom: missing license key"),
        "{}",
        done.failed[0].error
    );
    assert!(
        events
            .iter()
            .any(|e| matches!(e, EventMsg::McpStartupUpdate(u)
        if u.server == "broken" && matches!(u.status, McpStartupStatus::Failed { .. })))
    );
    assert!(s.manager.tools().iter().all(|t| t.server == "everything"));
    s.manager.shutdown().await;
}
