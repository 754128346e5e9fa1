//! Startup, failure, restart and shutdown behaviour, driven by the scriptable fixture server
//! (tests/fixtures/mcp/fixture_server.py) so each misbehaviour is deterministic.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

use common::*;
use oi_config::mcp::{McpApprovalMode, McpServerConfig, McpServerTransportConfig, McpToolConfig};
use oi_mcp_client::{McpConnectionManager, McpProgress};
use oi_protocol::protocol::{EventMsg, McpStartupStatus};
use serde_json::json;
use std::collections::BTreeMap;
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

fn never() -> CancellationToken {
    CancellationToken::new()
}

#[tokio::test]
async fn required_server_failure_fails_start_with_reason() {
    let home = tempfile::tempdir().unwrap();
    let mut bad = fixture_server(&["--fail-init", "cannot open database"]);
    bad.required = true;
    let servers = BTreeMap::from([
        ("db".to_string(), bad),
        ("ok".to_string(), fixture_server(&[])),
    ]);
    let (tx, mut rx) = mpsc::unbounded_channel();
    let err = match McpConnectionManager::start(
        servers,
        options(
            home.path(),
            home.path(),
            TestElicitation::accepting(json!({})),
        ),
        tx,
    )
    .await
    {
        Err(e) => e,
        Ok(_) => panic!("a failing required server must fail start()"),
    };
    assert_eq!(err.server, "db");
    let msg = err.to_string();
    assert!(
        msg.starts_with("required MCP server `db` failed to start:"),
        "{msg}"
    );
    assert!(
        msg.contains("cannot open database"),
        "stderr is shown: {msg}"
    );
    assert!(msg.contains("exit code 1"), "{msg}");
    // Every server still gets a final status.
    let events = startup_events(&mut rx).await;
    let EventMsg::McpStartupComplete(done) = events.last().unwrap() else {
        panic!()
    };
    assert_eq!(done.failed[0].server, "db");
}

#[tokio::test]
async fn startup_timeout_names_the_step_and_the_fix() {
    let mut slow = fixture_server(&["--init-delay", "30"]);
    slow.startup_timeout = Some(Duration::from_millis(800));
    let mut s = start(vec![("slow", slow)]).await;
    let events = startup_events(&mut s.events).await;
    let EventMsg::McpStartupComplete(done) = events.last().unwrap() else {
        panic!()
    };
    let e = &done.failed[0].error;
    assert!(
        e.contains(
            "MCP client for `slow` timed out after 0.8 seconds during the initialize handshake"
        ),
        "{e}"
    );
    assert!(
        e.contains("[mcp_servers.slow]\nstartup_timeout_sec = "),
        "{e}"
    );

    let mut slow_list = fixture_server(&["--list-delay", "30"]);
    slow_list.startup_timeout = Some(Duration::from_millis(800));
    let mut s = start(vec![("slowlist", slow_list)]).await;
    let events = startup_events(&mut s.events).await;
    let EventMsg::McpStartupComplete(done) = events.last().unwrap() else {
        panic!()
    };
    assert!(
        done.failed[0].error.contains("during the first tools/list"),
        "{}",
        done.failed[0].error
    );

    let mut missing = McpServerConfig::stdio("definitely-not-a-real-program-oi", vec![]);
    missing.startup_timeout = Some(Duration::from_secs(5));
    let mut s = start(vec![("missing", missing)]).await;
    let events = startup_events(&mut s.events).await;
    let EventMsg::McpStartupComplete(done) = events.last().unwrap() else {
        panic!()
    };
    assert!(
        done.failed[0].error.contains("program not found"),
        "{}",
        done.failed[0].error
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn optional_slow_server_does_not_block_and_joins_later() {
    let s = start(vec![
        ("fast", fixture_server(&[])),
        ("slow", fixture_server(&["--init-delay", "3"])),
    ])
    .await;
    // start() returned after the grace period, before the slow server was ready.
    assert!(s.manager.lookup("mcp__fast__echo").is_some());
    assert!(s.manager.lookup("mcp__slow__echo").is_none());
    // A call to the slow server waits for it instead of failing.
    let r = s
        .manager
        .call_tool(
            "slow",
            "echo",
            args(json!({"message": "late"})),
            None,
            never(),
        )
        .await
        .unwrap();
    assert_eq!(text_of(&r), "Echo: late");
    assert!(
        s.manager.lookup("mcp__slow__echo").is_some(),
        "its tools joined"
    );
    s.manager.shutdown().await;
}

async fn run_once(
    home: &std::path::Path,
    cfg: McpServerConfig,
    grace: Duration,
) -> (
    std::sync::Arc<McpConnectionManager>,
    mpsc::UnboundedReceiver<EventMsg>,
) {
    let (tx, rx) = mpsc::unbounded_channel();
    let mut opts = options(home, home, TestElicitation::accepting(json!({})));
    opts.startup_wait = oi_mcp_client::StartupWait::UpTo(grace);
    let m = McpConnectionManager::start(BTreeMap::from([("c".to_string(), cfg)]), opts, tx)
        .await
        .unwrap();
    (m, rx)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cached_catalog_is_served_while_the_server_starts() {
    let home = tempfile::tempdir().unwrap();
    let delay_file = home.path().join("delay");
    let delay_arg = delay_file.display().to_string();
    let cfg = fixture_server(&["--tools", "from_cache", "--delay-file", &delay_arg]);

    // First run: live listing, written to $HOME/cache/mcp/.
    let (m, _rx) = run_once(home.path(), cfg.clone(), Duration::from_secs(1)).await;
    m.wait_until_started().await;
    assert!(m.lookup("mcp__c__from_cache").is_some());
    m.shutdown().await;
    // The catalog, and the protocol the server negotiated (the handshake era: the fixture
    // answers server/discover with "method not found").
    let files: Vec<String> = std::fs::read_dir(home.path().join("cache/mcp"))
        .unwrap()
        .map(|f| f.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files.len(), 2, "{files:?}");
    let memory = files
        .iter()
        .find(|f| f.ends_with(".protocol.json"))
        .unwrap();
    let memory = std::fs::read_to_string(home.path().join("cache/mcp").join(memory)).unwrap();
    assert!(memory.contains("\"initialize\""), "{memory}");

    // Second run, same config, but the handshake now takes 3 s. A huge grace proves start()
    // did not wait: the cached tools are visible while the server is still starting.
    std::fs::write(&delay_file, "3").unwrap();
    let (m, _rx) = run_once(home.path(), cfg, Duration::from_secs(600)).await;
    assert!(m.server_pid("c").is_none(), "still starting");
    let cached = m
        .lookup("mcp__c__from_cache")
        .expect("served from the cache");
    assert_eq!(cached.tool, "from_cache");
    // A call to a cached tool waits for the live server.
    let r = m
        .call_tool("c", "echo", args(json!({"message": "live"})), None, never())
        .await
        .unwrap();
    assert_eq!(text_of(&r), "Echo: live");
    assert!(m.server_pid("c").is_some());
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_server_drops_its_cached_tools() {
    let home = tempfile::tempdir().unwrap();
    let delay_file = home.path().join("delay");
    let delay_arg = delay_file.display().to_string();
    let cfg = fixture_server(&["--tools", "cached_only", "--delay-file", &delay_arg]);
    let (m, _rx) = run_once(home.path(), cfg.clone(), Duration::from_secs(1)).await;
    m.wait_until_started().await;
    m.shutdown().await;

    // Same cache key; now the handshake outlasts the startup timeout.
    std::fs::write(&delay_file, "30").unwrap();
    let mut failing = cfg;
    failing.startup_timeout = Some(Duration::from_millis(500));
    let (m, _rx) = run_once(home.path(), failing, Duration::from_secs(600)).await;
    assert!(
        m.lookup("mcp__c__cached_only").is_some(),
        "cached while starting"
    );
    m.wait_until_started().await;
    assert!(m.server_error("c").unwrap().contains("timed out"));
    assert!(m.tools().is_empty(), "a failed server contributes no tools");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_changed_updates_the_catalog() {
    let s = start(vec![("fx", fixture_server(&[]))]).await;
    s.manager.wait_until_started().await;
    assert!(s.manager.lookup("mcp__fx__brand_new").is_none());
    s.manager
        .call_tool(
            "fx",
            "add_tool",
            args(json!({"name": "brand-new"})),
            None,
            never(),
        )
        .await
        .unwrap();
    let m = s.manager.clone();
    wait_until("the new tool to appear", || {
        m.lookup("mcp__fx__brand_new").is_some()
    })
    .await;
    let t = s.manager.lookup("mcp__fx__brand_new").unwrap();
    assert_eq!(t.tool, "brand-new");
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn filters_and_approval_modes_apply_before_the_model_sees_tools() {
    let mut cfg = fixture_server(&[]);
    cfg.enabled_tools = Some(vec!["echo".into(), "env".into(), "annotated".into()]);
    cfg.disabled_tools = Some(vec!["env".into()]);
    cfg.default_tools_approval_mode = Some(McpApprovalMode::Prompt);
    cfg.tools.insert(
        "annotated".into(),
        McpToolConfig {
            approval_mode: Some(McpApprovalMode::Approve),
        },
    );
    let mut off = fixture_server(&[]);
    off.enabled = false;
    let s = start(vec![("fx", cfg), ("off", off)]).await;
    s.manager.wait_until_started().await;
    let mut names: Vec<_> = s
        .manager
        .tools()
        .into_iter()
        .map(|t| t.qualified_name)
        .collect();
    names.sort();
    assert_eq!(names, vec!["mcp__fx__annotated", "mcp__fx__echo"]);
    assert_eq!(
        s.manager.lookup("mcp__fx__echo").unwrap().approval_mode,
        McpApprovalMode::Prompt
    );
    let annotated = s.manager.lookup("mcp__fx__annotated").unwrap();
    assert_eq!(annotated.approval_mode, McpApprovalMode::Approve);
    assert_eq!(annotated.annotations.unwrap()["readOnlyHint"], true);
    let e = s
        .manager
        .call_tool("fx", "env", None, None, never())
        .await
        .unwrap_err();
    assert!(
        matches!(e, oi_mcp_client::McpRequestError::ToolDisabled { .. }),
        "{e:?}"
    );
    assert_eq!(e.to_string(), "tool 'env' is disabled for MCP server 'fx'");
    let e = s
        .manager
        .call_tool("off", "echo", None, None, never())
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown MCP server `off`"), "{e}");
    assert_eq!(s.manager.server_names(), vec!["fx"]);
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn child_environment_is_cleared_and_rebuilt() {
    // Cargo sets CARGO_MANIFEST_DIR and CARGO_PKG_NAME for test processes.
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    let mut cfg = fixture_server(&[]);
    if let McpServerTransportConfig::Stdio { env, env_vars, .. } = &mut cfg.transport {
        env_vars.push(oi_config::mcp::McpEnvVar {
            name: "CARGO_MANIFEST_DIR".into(),
            source: None,
        });
        env.insert("FROM_HOST".into(), "env:CARGO_PKG_NAME".into());
        env.insert(
            "LITERAL".into(),
            "x-${CARGO_PKG_NAME}-${NOT_SET_ANYWHERE:-dflt}".into(),
        );
    }
    let s = start(vec![("fx", cfg)]).await;
    s.manager.wait_until_started().await;
    let r = s
        .manager
        .call_tool("fx", "env", None, None, never())
        .await
        .unwrap();
    let env: serde_json::Value = serde_json::from_str(&text_of(&r)).unwrap();
    assert_eq!(env["CARGO_MANIFEST_DIR"], manifest.as_str());
    assert_eq!(env["FROM_HOST"], "oi-mcp-client");
    assert_eq!(env["LITERAL"], "x-oi-mcp-client-dflt");
    assert!(
        env.get("CARGO_PKG_NAME").is_none(),
        "not whitelisted, not passed: {env}"
    );
    assert!(env.get("PATH").is_some());
    let allowed = [
        "HOME",
        "LOGNAME",
        "PATH",
        "SHELL",
        "USER",
        "LANG",
        "LC_ALL",
        "TERM",
        "TMPDIR",
        "TZ",
        "CARGO_MANIFEST_DIR",
        "FROM_HOST",
        "LITERAL",
    ];
    for k in env.as_object().unwrap().keys() {
        // Python itself may add LC_CTYPE when coercing the locale.
        assert!(
            allowed.contains(&k.as_str()) || k == "LC_CTYPE",
            "unexpected variable {k}"
        );
    }
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crash_mid_call_is_a_tool_error_and_the_next_call_restarts() {
    // The grandchild inherits the server's stdout, so the pipe stays open after the crash:
    // the client must notice the exit itself, not wait for EOF.
    let mut s = start(vec![("fx", fixture_server(&["--grandchild"]))]).await;
    s.manager.wait_until_started().await;
    let _ = startup_events(&mut s.events).await;
    let old_pid = s.manager.server_pid("fx").unwrap();
    let r = s
        .manager
        .call_tool("fx", "pid", None, None, never())
        .await
        .unwrap();
    let grandchild = r["structuredContent"]["grandchild"].as_u64().unwrap() as u32;
    assert!(pid_alive(grandchild));
    let e = s
        .manager
        .call_tool("fx", "crash", None, None, never())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("MCP server `fx` stopped during the call to `crash`"),
        "{e}"
    );
    assert!(e.contains("exit code 3"), "{e}");
    assert!(e.contains("crashing on purpose"), "stderr tail: {e}");
    assert!(e.contains("restarted on the next call"), "{e}");
    wait_until("the crashed server's group to be killed", || {
        !pid_alive(grandchild)
    })
    .await;
    let r = s
        .manager
        .call_tool(
            "fx",
            "echo",
            args(json!({"message": "back"})),
            None,
            never(),
        )
        .await
        .unwrap();
    assert_eq!(text_of(&r), "Echo: back");
    let new_pid = s.manager.server_pid("fx").unwrap();
    assert_ne!(old_pid, new_pid);
    // The restart is reported like a startup.
    let mut updates = Vec::new();
    while let Ok(ev) = s.events.try_recv() {
        if let EventMsg::McpStartupUpdate(u) = ev {
            updates.push(u.status);
        }
    }
    assert_eq!(
        updates,
        vec![McpStartupStatus::Starting, McpStartupStatus::Ready]
    );

    // Killed from outside between calls: also restarted.
    // SAFETY: kill takes no pointers; `new_pid` is the MCP server the manager spawned.
    unsafe { libc::kill(new_pid as i32, libc::SIGKILL) };
    // The manager learns of the exit a moment after the kernel reaps the process; a call in
    // that window still goes to the old session. Between calls means after it has noticed.
    wait_until("the manager to see the killed server exit", || {
        s.manager.server_pid("fx").is_none()
    })
    .await;
    assert!(!pid_alive(new_pid));
    let r = s
        .manager
        .call_tool(
            "fx",
            "echo",
            args(json!({"message": "again"})),
            None,
            never(),
        )
        .await
        .unwrap();
    assert_eq!(text_of(&r), "Echo: again");
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_kills_children_that_ignore_eof_and_term_and_their_group() {
    let s = start(vec![
        (
            "stubborn",
            fixture_server(&["--ignore-term", "--grandchild"]),
        ),
        ("everything", everything_stdio()),
    ])
    .await;
    s.manager.wait_until_started().await;
    let r = s
        .manager
        .call_tool("stubborn", "pid", None, None, never())
        .await
        .unwrap();
    let pid = r["structuredContent"]["pid"].as_u64().unwrap() as u32;
    let grandchild = r["structuredContent"]["grandchild"].as_u64().unwrap() as u32;
    let everything = s.manager.server_pid("everything").unwrap();
    for p in [pid, grandchild, everything] {
        assert!(pid_alive(p));
    }
    s.manager.shutdown().await;
    for p in [pid, grandchild, everything] {
        wait_until("every child and grandchild to be gone", || !pid_alive(p)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_manager_kills_children() {
    let s = start(vec![("fx", fixture_server(&["--ignore-term"]))]).await;
    s.manager.wait_until_started().await;
    let pid = s.manager.server_pid("fx").unwrap();
    drop(s);
    wait_until("the child to be killed on drop", || !pid_alive(pid)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupt_and_timeout_send_notifications_cancelled() {
    let mut cfg = fixture_server(&[]);
    cfg.tool_timeout = Some(Duration::from_millis(600));
    let s = start(vec![("fx", cfg)]).await;
    s.manager.wait_until_started().await;

    let cancel = CancellationToken::new();
    let (ptx, mut prx) = mpsc::unbounded_channel::<McpProgress>();
    let m = s.manager.clone();
    let c2 = cancel.clone();
    let call = tokio::spawn(async move {
        m.call_tool("fx", "sleep", args(json!({"seconds": 20})), Some(ptx), c2)
            .await
    });
    // Interrupt once the server is demonstrably working on it.
    let first = tokio::time::timeout(Duration::from_secs(10), prx.recv())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(first.message.as_deref(), Some("step 1"));
    cancel.cancel();
    let e = call.await.unwrap().unwrap_err().to_string();
    assert!(e.contains("was interrupted"), "{e}");

    let e = s
        .manager
        .call_tool("fx", "sleep", args(json!({"seconds": 20})), None, never())
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("timed out"), "{e}");

    let m = s.manager.clone();
    let mut cancelled = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while cancelled.len() < 2 && std::time::Instant::now() < deadline {
        let r = m
            .call_tool("fx", "cancelled", None, None, never())
            .await
            .unwrap();
        cancelled = serde_json::from_str::<Vec<serde_json::Value>>(&text_of(&r)).unwrap();
    }
    assert_eq!(
        cancelled.len(),
        2,
        "the server saw both cancellations: {cancelled:?}"
    );
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_start_in_parallel() {
    // Five servers that each take 1.5 s to answer initialize, with a 4 s startup timeout:
    // sequential startup would time out the later ones.
    let mut servers = Vec::new();
    let names: Vec<String> = (0..5).map(|i| format!("s{i}")).collect();
    for n in &names {
        let mut c = fixture_server(&["--init-delay", "1.5"]);
        c.startup_timeout = Some(Duration::from_secs(4));
        c.required = true;
        servers.push((n.as_str(), c));
    }
    let s = start(servers).await;
    for n in &names {
        assert!(
            s.manager.lookup(&format!("mcp__{n}__echo")).is_some(),
            "{n} ready"
        );
    }
    s.manager.shutdown().await;
}
