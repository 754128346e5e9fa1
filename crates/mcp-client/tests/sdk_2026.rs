//! Protocol 2026-07-28 against a server built with the official Python SDK (PyPI `mcp` 2.3.0,
//! tests/fixtures/mcp/sdk_server.py): a modern-only server and a dual-era one, over stdio and
//! streamable HTTP. The handshake (probe and fall back, or pinned by `protocol_version`), tool
//! calls, a confirmation asked through a multi round-trip request (accepted and declined; judged
//! by the file it leaves), tasks (progress, an approval through `tasks/update`, `tasks/cancel`
//! on an interrupt and on the timeout, a task left running at the end of a session and fetched
//! by a new one), list changes over `subscriptions/listen`, and `ttlMs`.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::*;
use oi_config::mcp::{McpProtocolVersion, McpServerConfig};
use oi_mcp_client::{McpCallObserver, McpProgress, McpProtocolEra, McpRequestError};
use serde_json::json;
use std::path::Path;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

fn never() -> CancellationToken {
    CancellationToken::new()
}

/// The two transports of one fixture flavour; `marks` is where its tools leave evidence.
fn stdio_and_http(flags: &[&str], marks: &Path) -> (McpServerConfig, HttpPeer) {
    let marks = marks.display().to_string();
    let mut with_marks: Vec<&str> = flags.to_vec();
    with_marks.extend(["--marks", &marks]);
    (sdk_stdio(&with_marks), HttpPeer::sdk(&with_marks))
}

fn requests_logged(marks: &Path) -> Vec<String> {
    std::fs::read_to_string(marks.join("requests.log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_modern_only_server_is_reached_over_stdio_and_http() {
    let marks = tempfile::tempdir().unwrap();
    let (stdio, peer) = stdio_and_http(&["--modern-only"], marks.path());
    let s = start(vec![("local", stdio), ("remote", http(&peer.url))]).await;
    s.manager.wait_until_started().await;
    for server in ["local", "remote"] {
        assert_eq!(s.manager.server_error(server), None);
        let status = s.manager.status();
        let st = status.iter().find(|st| st.name == server).unwrap();
        let protocol = st.protocol.as_ref().unwrap();
        assert_eq!(protocol.version, "2026-07-28");
        assert_eq!(protocol.era, McpProtocolEra::Discover);
        let r = s
            .manager
            .call_tool(server, "add", args(json!({"a": 2, "b": 40})), None, never())
            .await
            .unwrap();
        assert_eq!(text_of(&r), "42", "{r}");
        // Offered, since the server offers the Tasks extension.
        assert!(
            s.manager
                .lookup(&format!("mcp__{server}__report"))
                .is_some(),
            "{:?}",
            st.withheld_tools
        );
    }
    // No handshake was ever sent: the server saw server/discover, never initialize.
    let log = requests_logged(marks.path());
    assert!(log.iter().any(|m| m == "server/discover"), "{log:?}");
    assert!(!log.iter().any(|m| m == "initialize"), "{log:?}");
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_protocol_setting_pins_the_era_and_a_mismatch_names_the_fix() {
    let marks = tempfile::tempdir().unwrap();
    let (dual, _) = stdio_and_http(&[], marks.path());
    let mut legacy = dual.clone();
    legacy.protocol_version = McpProtocolVersion::V2025_11_25;
    let mut modern = dual.clone();
    modern.protocol_version = McpProtocolVersion::V2026_07_28;
    let mut refused = sdk_stdio(&["--modern-only"]);
    refused.protocol_version = McpProtocolVersion::V2025_11_25;
    let mut old = fixture_server(&[]);
    old.protocol_version = McpProtocolVersion::V2026_07_28;
    let s = start(vec![
        ("auto", dual),
        ("legacy", legacy),
        ("modern", modern),
        ("refused", refused),
        ("old", old),
    ])
    .await;
    s.manager.wait_until_started().await;
    let status = s.manager.status();
    let version = |name: &str| {
        status
            .iter()
            .find(|st| st.name == name)
            .and_then(|st| st.protocol.clone())
            .map(|p| p.version)
    };
    assert_eq!(version("auto").as_deref(), Some("2026-07-28"));
    assert_eq!(version("legacy").as_deref(), Some("2025-11-25"));
    assert_eq!(version("modern").as_deref(), Some("2026-07-28"));
    let e = s.manager.server_error("refused").unwrap();
    assert!(
        e.contains("does not speak protocol 2025-11-25 (it supports 2026-07-28)")
            && e.contains("protocol_version = \"auto\""),
        "{e}"
    );
    let e = s.manager.server_error("old").unwrap();
    assert!(
        e.contains("does not speak protocol 2026-07-28") && e.contains("[mcp_servers.old]"),
        "{e}"
    );
    // The pinned handshake-era connection still calls tools.
    let r = s
        .manager
        .call_tool(
            "legacy",
            "add",
            args(json!({"a": 1, "b": 1})),
            None,
            never(),
        )
        .await
        .unwrap();
    assert_eq!(text_of(&r), "2");
    s.manager.shutdown().await;
}

/// `delete_file` asks to confirm: through a multi round-trip result on 2026-07-28, through
/// `elicitation/create` on 2025-11-25. The file is gone only when the user accepted.
async fn confirmation(server: McpServerConfig, victim: &Path) {
    std::fs::write(victim, "precious").unwrap();
    let path = victim.display().to_string();
    let decline = TestElicitation::declining();
    let s = start_with(vec![("s", server.clone())], decline.clone()).await;
    s.manager.wait_until_started().await;
    let r = s
        .manager
        .call_tool(
            "s",
            "delete_file",
            args(json!({"path": path})),
            None,
            never(),
        )
        .await
        .unwrap();
    assert!(text_of(&r).contains("kept"), "{r}");
    assert!(victim.exists(), "declined: the file stays");
    let seen = decline.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert_eq!(seen[0].0, "s");
    assert_eq!(seen[0].2["message"], format!("Delete {path}?"));
    s.manager.shutdown().await;

    let accept = TestElicitation::accepting(json!({"confirm": true}));
    let s = start_with(vec![("s", server)], accept.clone()).await;
    s.manager.wait_until_started().await;
    let r = s
        .manager
        .call_tool(
            "s",
            "delete_file",
            args(json!({"path": path})),
            None,
            never(),
        )
        .await
        .unwrap();
    assert_eq!(text_of(&r), format!("deleted {path}"), "{r}");
    assert!(!victim.exists(), "accepted: the file is gone");
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_multi_round_trip_confirmation_is_accepted_or_declined_over_stdio_and_http() {
    let dir = tempfile::tempdir().unwrap();
    let (stdio, peer) = stdio_and_http(&["--modern-only"], dir.path());
    confirmation(stdio, &dir.path().join("a.txt")).await;
    confirmation(http(&peer.url), &dir.path().join("b.txt")).await;
    // The same tool on the handshake era asks with a server-initiated elicitation/create.
    let mut legacy = sdk_stdio(&[]);
    legacy.protocol_version = McpProtocolVersion::V2025_11_25;
    confirmation(legacy, &dir.path().join("c.txt")).await;
}

/// Calls `tool` on `server` while collecting its progress and the task it became.
async fn call_observed(
    manager: &oi_mcp_client::McpConnectionManager,
    server: &str,
    tool: &str,
    arguments: serde_json::Value,
    cancel: CancellationToken,
) -> (
    Result<serde_json::Value, McpRequestError>,
    Vec<McpProgress>,
    Vec<String>,
) {
    let (ptx, mut prx) = mpsc::unbounded_channel();
    let (ttx, mut trx) = mpsc::unbounded_channel();
    let observer = McpCallObserver {
        progress: Some(ptx),
        task: Some(ttx),
    };
    let r = manager
        .call_tool_observed(server, tool, args(arguments), observer, cancel)
        .await;
    let mut progress = Vec::new();
    while let Ok(p) = prx.try_recv() {
        progress.push(p);
    }
    let mut tasks = Vec::new();
    while let Ok(t) = trx.try_recv() {
        assert_eq!((t.server.as_str(), t.tool.as_str()), (server, tool));
        tasks.push(t.task_id);
    }
    (r, progress, tasks)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_reports_progress_and_ends_with_its_result() {
    let marks = tempfile::tempdir().unwrap();
    let (stdio, peer) = stdio_and_http(&[], marks.path());
    let s = start(vec![("local", stdio), ("remote", http(&peer.url))]).await;
    s.manager.wait_until_started().await;
    for server in ["local", "remote"] {
        let (r, progress, tasks) =
            call_observed(&s.manager, server, "report", json!({"steps": 3}), never()).await;
        let r = r.unwrap();
        assert_eq!(text_of(&r), "report done after 3 steps", "{r}");
        assert_eq!(tasks.len(), 1, "told once which task");
        let messages: Vec<String> = progress.iter().filter_map(|p| p.message.clone()).collect();
        for step in ["step 1 of 3", "step 2 of 3", "step 3 of 3"] {
            assert!(messages.iter().any(|m| m == step), "{messages:?}");
        }
        // Each status change once, in order.
        let first = messages.iter().position(|m| m == "step 1 of 3").unwrap();
        let last = messages.iter().position(|m| m == "step 3 of 3").unwrap();
        assert!(first < last, "{messages:?}");
    }
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tasks_approval_is_answered_through_tasks_update() {
    let marks = tempfile::tempdir().unwrap();
    let (stdio, peer) = stdio_and_http(&["--modern-only"], marks.path());
    let accept = TestElicitation::accepting(json!({"confirm": true}));
    let s = start_with(
        vec![("local", stdio), ("remote", http(&peer.url))],
        accept.clone(),
    )
    .await;
    s.manager.wait_until_started().await;
    for (server, target) in [("local", "staging"), ("remote", "prod"), ("local", "qa")] {
        let (r, progress, _) = call_observed(
            &s.manager,
            server,
            "deploy",
            json!({"target": target}),
            never(),
        )
        .await;
        assert_eq!(text_of(&r.unwrap()), format!("deployed {target}"));
        assert!(marks.path().join(format!("deployed-{target}")).exists());
        assert!(
            progress.iter().any(|p| p.message.as_deref()
                == Some(&format!("waiting for approval to deploy {target}"))),
            "{progress:?}"
        );
    }
    let seen = accept.seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3, "asked once per task: {seen:?}");
    assert_eq!(seen[0].2["message"], "Deploy to staging?");
    // Two questions the server keyed alike got distinct ids for the front end.
    assert_eq!((seen[0].0.as_str(), seen[2].0.as_str()), ("local", "local"));
    assert_ne!(seen[0].1, seen[2].1);
    s.manager.shutdown().await;

    let decline = TestElicitation::declining();
    let (stdio, _peer) = stdio_and_http(&["--modern-only"], marks.path());
    let s = start_with(vec![("local", stdio)], decline).await;
    s.manager.wait_until_started().await;
    let (r, _, _) = call_observed(
        &s.manager,
        "local",
        "deploy",
        json!({"target": "dev"}),
        never(),
    )
    .await;
    assert!(text_of(&r.unwrap()).contains("declined"));
    assert!(!marks.path().join("deployed-dev").exists());
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interrupt_or_the_timeout_cancels_the_task_on_the_server() {
    let marks = tempfile::tempdir().unwrap();
    let (stdio, peer) = stdio_and_http(&[], marks.path());
    let mut slow_http = http(&peer.url);
    slow_http.tool_timeout = Some(Duration::from_millis(800));
    let s = start(vec![("local", stdio), ("remote", slow_http)]).await;
    s.manager.wait_until_started().await;

    // Interrupted once the task runs.
    let cancel = CancellationToken::new();
    let (ptx, mut prx) = mpsc::unbounded_channel::<McpProgress>();
    let (ttx, mut trx) = mpsc::unbounded_channel();
    let interrupt = cancel.clone();
    tokio::spawn(async move {
        let _ = prx.recv().await;
        interrupt.cancel();
    });
    let observer = McpCallObserver {
        progress: Some(ptx),
        task: Some(ttx),
    };
    let e = s
        .manager
        .call_tool_observed("local", "endless", None, observer, cancel)
        .await
        .unwrap_err();
    assert!(e.is_interrupted(), "{e}");
    let task = trx.recv().await.unwrap().task_id;
    assert!(
        marks.path().join(format!("cancelled-{task}")).exists(),
        "tasks/cancel reached the server"
    );

    // Out of time: the timeout covers the whole task.
    let (r, _, tasks) = call_observed(&s.manager, "remote", "endless", json!({}), never()).await;
    let e = r.unwrap_err();
    assert!(
        matches!(e, McpRequestError::TaskTimedOut { .. }) && e.to_string().contains("tasks/cancel"),
        "{e}"
    );
    assert!(
        marks
            .path()
            .join(format!("cancelled-{}", tasks[0]))
            .exists()
    );
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_left_running_at_the_end_of_a_session_is_fetched_by_the_next() {
    let marks = tempfile::tempdir().unwrap();
    let (_, peer) = stdio_and_http(&[], marks.path());
    let s = start(vec![("remote", http(&peer.url))]).await;
    s.manager.wait_until_started().await;
    let cancel = CancellationToken::new();
    let (ttx, mut trx) = mpsc::unbounded_channel();
    let manager = s.manager.clone();
    let ending = cancel.clone();
    // The session ends once the server runs the call as a task.
    let observer_task = tokio::spawn(async move {
        let started: oi_mcp_client::McpTaskStarted = trx.recv().await.unwrap();
        manager.leave_tasks_running();
        ending.cancel();
        started.task_id
    });
    let observer = McpCallObserver {
        progress: None,
        task: Some(ttx),
    };
    let e = s
        .manager
        .call_tool_observed(
            "remote",
            "report",
            args(json!({"steps": 4})),
            observer,
            cancel,
        )
        .await
        .unwrap_err();
    let task = observer_task.await.unwrap();
    assert_eq!(e.task_left_running(), Some(task.as_str()), "{e}");
    s.manager.shutdown().await;
    assert!(!marks.path().join(format!("cancelled-{task}")).exists());

    // A new session asks the server for the task's result.
    let s = start(vec![("remote", http(&peer.url))]).await;
    let r = s
        .manager
        .task_result("remote", "report", &task, Default::default(), never())
        .await
        .unwrap();
    assert_eq!(text_of(&r), "report done after 4 steps");
    // An id the server does not know says so.
    let e = s
        .manager
        .task_result(
            "remote",
            "report",
            "no-such-task",
            Default::default(),
            never(),
        )
        .await
        .unwrap_err();
    assert!(matches!(e, McpRequestError::TaskLost { .. }), "{e}");
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn list_changes_arrive_over_subscriptions_listen() {
    // Each server logs to its own folder: a change published before that server's
    // subscription exists reaches nobody (there is no replay), so the test waits for it.
    let (local_marks, remote_marks) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let (stdio, _) = stdio_and_http(&["--modern-only"], local_marks.path());
    let (_, peer) = stdio_and_http(&["--modern-only"], remote_marks.path());
    let s = start(vec![("local", stdio), ("remote", http(&peer.url))]).await;
    s.manager.wait_until_started().await;
    for (server, name, marks) in [
        ("local", "fresh", &local_marks),
        ("remote", "newer", &remote_marks),
    ] {
        let m = marks.path().to_path_buf();
        wait_until("subscriptions/listen", || {
            requests_logged(&m)
                .iter()
                .any(|r| r == "subscriptions/listen")
        })
        .await;
        let r = s
            .manager
            .call_tool(
                server,
                "add_tool",
                args(json!({"name": name})),
                None,
                never(),
            )
            .await
            .unwrap();
        assert_eq!(text_of(&r), format!("added {name}"));
        let m = s.manager.clone();
        let qualified = format!("mcp__{server}__{name}");
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        while m.lookup(&qualified).is_none() {
            assert!(
                std::time::Instant::now() < deadline,
                "{qualified} did not arrive; the servers saw {:?}",
                requests_logged(marks.path())
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_list_is_trusted_for_its_ttl_and_listed_again_after() {
    let marks = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    let cwd = tempfile::tempdir().unwrap();
    let marks_arg = marks.path().display().to_string();
    let run = |ttl: &str| {
        let server = sdk_stdio(&["--marks", &marks_arg, "--tools-ttl-ms", ttl]);
        let (tx, rx) = mpsc::unbounded_channel();
        let opts = options(
            home.path(),
            cwd.path(),
            TestElicitation::accepting(json!({})),
        );
        (
            oi_mcp_client::McpConnectionManager::start(
                std::collections::BTreeMap::from([("s".to_string(), server)]),
                opts,
                tx,
            ),
            rx,
        )
    };
    let lists = || {
        requests_logged(marks.path())
            .iter()
            .filter(|m| *m == "tools/list")
            .count()
    };
    // Fresh for an hour: the second start takes the cached list without asking.
    let (m, _rx) = run("3600000");
    let m = m.await.unwrap();
    m.wait_until_started().await;
    assert_eq!(lists(), 1);
    m.shutdown().await;
    let (m, _rx) = run("3600000");
    let m = m.await.unwrap();
    m.wait_until_started().await;
    assert!(m.lookup("mcp__s__add").is_some());
    assert_eq!(lists(), 1, "{:?}", requests_logged(marks.path()));
    m.shutdown().await;

    // Immediately stale (ttlMs 0): listed at start, and again when the catalog is next used
    // (at most once a second).
    let (m, _rx) = run("0");
    let m = m.await.unwrap();
    m.wait_until_started().await;
    assert_eq!(lists(), 2);
    wait_until("a fresh tools/list", || {
        let _ = m.tools();
        lists() == 3
    })
    .await;
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_refused_as_an_unsupported_version_is_made_again_on_a_new_connection() {
    let marks = tempfile::tempdir().unwrap();
    let (_, peer) = stdio_and_http(&[], marks.path());
    let s = start(vec![("remote", http(&peer.url))]).await;
    s.manager.wait_until_started().await;
    std::fs::write(marks.path().join("refuse-once"), "").unwrap();
    let r = s
        .manager
        .call_tool(
            "remote",
            "add",
            args(json!({"a": 20, "b": 22})),
            None,
            never(),
        )
        .await
        .unwrap();
    assert_eq!(text_of(&r), "42");
    let log = requests_logged(marks.path());
    let count = |m: &str| log.iter().filter(|r| *r == m).count();
    assert_eq!(count("tools/call"), 2, "{log:?}");
    assert_eq!(count("server/discover"), 2, "probed again: {log:?}");
    s.manager.shutdown().await;
}
