//! Startup waiting, result order, task-only tools, resources and the status snapshot, against
//! third-party servers: fastmcp (PyPI) over stdio and server-everything.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

mod common;

use common::*;
use oi_mcp_client::{McpConnectionManager, McpServerState, StartupWait, call_result_to_output};
use oi_protocol::models::ContentItem;
use serde_json::json;
use std::collections::BTreeMap;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_start_waits_for_a_cold_server_without_a_cache() {
    let home = tempfile::tempdir().unwrap();
    let (tx, _rx) = mpsc::unbounded_channel();
    let mut opts = options(
        home.path(),
        home.path(),
        TestElicitation::accepting(json!({})),
    );
    opts.startup_wait = StartupWait::UntilReadyOrFailed;
    let servers = BTreeMap::from([(
        "cold".to_string(),
        fastmcp_stdio(&["--startup-delay", "2.5"]),
    )]);
    let m = McpConnectionManager::start(servers, opts, tx)
        .await
        .unwrap();
    // No polling: when start() returns, the cold server's tools are already offered.
    assert!(
        m.lookup("mcp__cold__sleep_then_echo").is_some(),
        "{:?}",
        m.tools()
    );
    assert!(m.unavailable_servers().is_empty());
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_interactive_start_does_not_block_and_says_what_is_missing() {
    let home = tempfile::tempdir().unwrap();
    let (tx, _rx) = mpsc::unbounded_channel();
    let mut opts = options(
        home.path(),
        home.path(),
        TestElicitation::accepting(json!({})),
    );
    opts.startup_wait = StartupWait::UpTo(std::time::Duration::ZERO);
    let servers = BTreeMap::from([(
        "cold".to_string(),
        fastmcp_stdio(&["--startup-delay", "2.5"]),
    )]);
    let m = McpConnectionManager::start(servers, opts, tx)
        .await
        .unwrap();
    let missing = m.unavailable_servers();
    assert_eq!(missing.len(), 1, "{missing:?}");
    assert_eq!(missing[0].0, "cold");
    assert!(missing[0].1.contains("still starting"), "{missing:?}");
    // The tools join when the server is ready.
    m.wait_until_started().await;
    assert!(m.lookup("mcp__cold__sleep_then_echo").is_some());
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_image_text_comes_back_in_the_servers_order() {
    let s = start(vec![("fm", fastmcp_stdio(&[]))]).await;
    s.manager.wait_until_started().await;
    let raw = s
        .manager
        .call_tool("fm", "mixed_content", None, None, CancellationToken::new())
        .await
        .unwrap();
    let out = call_result_to_output(&raw, 10_000);
    let kinds: Vec<String> = out
        .content
        .iter()
        .map(|c| match c {
            ContentItem::InputText { text } | ContentItem::OutputText { text } => text.clone(),
            ContentItem::InputImage { image_url } => image_url[..22].to_string(),
        })
        .collect();
    // fastmcp also sends structuredContent for list results; the blocks keep their order.
    let blocks: Vec<&String> = kinds.iter().filter(|k| !k.starts_with('{')).collect();
    assert_eq!(
        blocks,
        vec![
            "before the image",
            "data:image/png;base64,",
            "after the image"
        ],
        "{kinds:?}"
    );
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_to_one_server_overlap_and_answer_out_of_order() {
    let s = start(vec![("fm", fastmcp_stdio(&[]))]).await;
    s.manager.wait_until_started().await;
    let (done_tx, mut done_rx) = mpsc::unbounded_channel();
    let call = |text: &'static str, seconds: f64| {
        let (m, done_tx) = (s.manager.clone(), done_tx.clone());
        async move {
            let r = m
                .call_tool(
                    "fm",
                    "sleep_then_echo",
                    args(json!({"text": text, "seconds": seconds})),
                    None,
                    CancellationToken::new(),
                )
                .await
                .unwrap();
            let _ = done_tx.send(text);
            text_of(&r)
        }
    };
    let (slow, fast) = tokio::join!(call("slow", 1.5), call("fast", 0.05));
    assert_eq!((slow.as_str(), fast.as_str()), ("slow", "fast"));
    // The later request finished first: the calls were in flight together.
    assert_eq!(done_rx.recv().await, Some("fast"));
    assert_eq!(done_rx.recv().await, Some("slow"));
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_list_changed_refresh_is_settled_before_the_next_request() {
    let s = start(vec![("fm", fastmcp_stdio(&[]))]).await;
    s.manager.wait_until_started().await;
    s.manager
        .call_tool(
            "fm",
            "add_tool",
            args(json!({"name": "fresh"})),
            None,
            CancellationToken::new(),
        )
        .await
        .unwrap();
    s.manager
        .settle_tool_list_refresh(std::time::Duration::from_secs(10))
        .await;
    assert!(
        s.manager.lookup("mcp__fm__fresh").is_some(),
        "{:?}",
        s.manager.tools()
    );
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_only_tools_are_not_offered() {
    task_only_tools_are_withheld(everything_stdio()).await;
}

/// The same over streamable HTTP: the tool list is the server's either way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn task_only_tools_are_not_offered_over_http() {
    let peer = HttpPeer::everything();
    task_only_tools_are_withheld(http(&peer.url)).await;
}

async fn task_only_tools_are_withheld(server: oi_config::mcp::McpServerConfig) {
    let s = start(vec![("everything", server)]).await;
    s.manager.wait_until_started().await;
    assert!(s.manager.lookup("mcp__everything__echo").is_some());
    assert!(
        s.manager
            .lookup("mcp__everything__simulate_research_query")
            .is_none(),
        "a taskSupport: required tool must not be offered"
    );
    let status = s.manager.status();
    let withheld = &status[0].withheld_tools;
    assert!(
        withheld
            .iter()
            .any(|(name, why)| name == "simulate-research-query" && why.contains("SEP-1686")),
        "{withheld:?}"
    );
    s.manager.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_are_listed_read_and_shown_in_the_status() {
    let s = start(vec![("fm", fastmcp_stdio(&[]))]).await;
    s.manager.wait_until_started().await;
    let m = &s.manager;
    assert_eq!(m.servers_with_resources(), vec!["fm".to_string()]);

    let listed = m
        .list_resources("fm", None, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(listed["resources"][0]["uri"], "notes://readme", "{listed}");
    let templates = m
        .list_resource_templates("fm", None, CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(
        templates["resourceTemplates"][0]["uriTemplate"], "notes://by-id/{note_id}",
        "{templates}"
    );
    let read = m
        .read_resource("fm", "notes://by-id/42", CancellationToken::new())
        .await
        .unwrap();
    assert_eq!(read["contents"][0]["text"], "note 42", "{read}");
    let missing = m
        .read_resource("nope", "notes://readme", CancellationToken::new())
        .await
        .unwrap_err()
        .to_string();
    assert!(
        missing.contains("unknown MCP server `nope`") && missing.contains("fm"),
        "{missing}"
    );

    // Listed in the background once the server is ready.
    let m2 = m.clone();
    wait_until("resources and prompts in the status", || {
        let st = &m2.status()[0];
        !st.resources.is_empty() && !st.prompts.is_empty()
    })
    .await;
    let st = &m.status()[0];
    assert_eq!(st.state, McpServerState::Ready);
    assert_eq!(st.transport, "stdio");
    assert_eq!(st.prompts[0]["name"], "review");
    assert_eq!(st.resource_templates.len(), 1);
    assert!(st.tools.iter().any(|t| t["name"] == "mixed_content"));
    s.manager.shutdown().await;
}

/// A server that never answers `initialize` (a bare `sleep` holding stdin), given up on after
/// `startup_timeout_sec` seconds.
fn never_initializes(startup_timeout_sec: u64) -> oi_config::mcp::McpServerConfig {
    let mut cfg = oi_config::mcp::McpServerConfig::stdio("sleep".to_string(), vec!["600".into()]);
    cfg.startup_timeout = Some(std::time::Duration::from_secs(startup_timeout_sec));
    cfg
}

async fn headless_start(
    home: &std::path::Path,
    startup_timeout_sec: u64,
) -> (
    std::sync::Arc<McpConnectionManager>,
    mpsc::UnboundedReceiver<oi_protocol::protocol::EventMsg>,
) {
    let (tx, rx) = mpsc::unbounded_channel();
    let mut opts = options(home, home, TestElicitation::accepting(json!({})));
    opts.startup_wait = StartupWait::UntilReadyOrFailed;
    let servers = BTreeMap::from([("stuck".to_string(), never_initializes(startup_timeout_sec))]);
    // Far shorter than a 600 s startup timeout: a start that waits for it fails here.
    let started = tokio::time::timeout(
        std::time::Duration::from_secs(120),
        McpConnectionManager::start(servers, opts, tx),
    )
    .await
    .expect("start() waited for the server's whole startup timeout");
    (started.unwrap(), rx)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_failed_recently_is_not_waited_for_again() {
    let home = tempfile::tempdir().unwrap();
    // First headless start: waited for until its startup timeout, then failed.
    let (m, _rx) = headless_start(home.path(), 2).await;
    let first = m
        .server_error("stuck")
        .expect("failed at its startup timeout");
    assert!(first.contains("timed out"), "{first}");
    m.shutdown().await;

    // Second, with a startup timeout of 600 s (the failure is remembered per command, not per
    // timeout): start() returns after the short grace while the server is still starting, and
    // says why it did not wait.
    let (m, mut rx) = headless_start(home.path(), 600).await;
    assert!(
        m.server_error("stuck").is_none(),
        "start() waited for the whole startup timeout again"
    );
    let mut warnings = Vec::new();
    while let Ok(ev) = rx.try_recv() {
        if let oi_protocol::protocol::EventMsg::Warning(w) = ev {
            warnings.push(w.message);
        }
    }
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("`stuck` is not waited for"),
        "{}",
        warnings[0]
    );
    assert!(
        warnings[0].contains("timed out"),
        "says why: {}",
        warnings[0]
    );
    m.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_required_server_is_always_waited_for() {
    let home = tempfile::tempdir().unwrap();
    let mut cfg = never_initializes(2);
    cfg.required = true;
    for _ in 0..2 {
        let (tx, _rx) = mpsc::unbounded_channel();
        let mut opts = options(
            home.path(),
            home.path(),
            TestElicitation::accepting(json!({})),
        );
        opts.startup_wait = StartupWait::UntilReadyOrFailed;
        let servers = BTreeMap::from([("stuck".to_string(), cfg.clone())]);
        let err = McpConnectionManager::start(servers, opts, tx)
            .await
            .err()
            .expect("required fails");
        assert!(err.message.contains("timed out"), "{}", err.message);
    }
}

/// A server an accepted project config adds runs only the script that was accepted: its
/// pinned files are checked at launch (every launch, not only when the session starts).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_server_whose_script_changed_is_not_launched() {
    let project = tempfile::tempdir().unwrap();
    let root = project.path().canonicalize().unwrap();
    let script = root.join("server.py");
    std::fs::copy(fixture("fixture_server.py"), &script).unwrap();
    let pinned = |root: &std::path::Path| {
        let argv = vec![venv_python(), script.display().to_string()];
        let mut cfg = oi_config::mcp::McpServerConfig::stdio(argv[0].clone(), argv[1..].to_vec());
        // What the acceptance pinned: every file the command line names (the interpreter too).
        let files = oi_config::launch_pins::named_files(&argv, root)
            .into_iter()
            .map(|path| oi_config::launch_pins::PinnedFile {
                sha256: sha256_of(&path),
                path,
            })
            .collect::<Vec<_>>();
        assert!(files.iter().any(|f| f.path == script), "{files:?}");
        cfg.launch_pins = Some(oi_config::launch_pins::LaunchPins {
            project_dir: root.to_path_buf(),
            files,
        });
        cfg
    };
    let start = |cfg: oi_config::mcp::McpServerConfig| async {
        let home = tempfile::tempdir().unwrap();
        let (tx, _rx) = mpsc::unbounded_channel();
        let mut opts = options(
            home.path(),
            home.path(),
            TestElicitation::accepting(json!({})),
        );
        opts.startup_wait = StartupWait::UntilReadyOrFailed;
        let servers = BTreeMap::from([("helper".to_string(), cfg)]);
        McpConnectionManager::start(servers, opts, tx)
            .await
            .unwrap()
    };
    // As accepted: it starts.
    let m = start(pinned(&root)).await;
    assert_eq!(m.server_error("helper"), None);
    assert!(!m.tools().is_empty());
    m.shutdown().await;

    // Rewritten after the acceptance: refused before anything runs, naming the file and the fix.
    let cfg = pinned(&root);
    std::fs::write(&script, "import sys; sys.exit(3)\n").unwrap();
    let m = start(cfg).await;
    let err = m.server_error("helper").expect("refused");
    assert!(
        err.contains(&format!(
            "{} changed since you accepted the project config",
            script.display()
        )),
        "{err}"
    );
    assert!(err.contains("interpreter accept-project-config"), "{err}");
    m.shutdown().await;
}

fn sha256_of(path: &std::path::Path) -> String {
    oi_config::project_file::sha256_capped(path, oi_config::launch_pins::PINNED_FILE_MAX_BYTES)
        .unwrap()
}
