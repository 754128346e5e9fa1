//! Setup shared by the engine's integration tests: a config that points at the mock model
//! with no sandbox and no approvals, and running one op to the end of its turn.
#![allow(dead_code)] // each test file uses a different subset
#![allow(unreachable_pub)] // helpers shared by this test crate's modules; a test has no outside

use oi_core::Thread;
use oi_protocol::config_types::{AskForApproval, SandboxMode};
use oi_protocol::protocol::{Event, EventMsg, Op, TurnOverrides};
use oi_protocol::user_input::UserInput;
use std::path::Path;
use std::time::Duration;

/// Writes `toml` as `home`'s config.toml and loads it with `cwd = home`, full access and
/// `approval_policy = never` (the tests script the model, not the user).
pub fn load_unconfined(home: &Path, toml: &str) -> oi_config::Config {
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

/// `home`'s config.toml selects `mock` (chat wire); loaded with `cwd = home` and the given
/// approval policy and sandbox.
pub fn mock_config(
    mock: &oi_test_support::MockModelServer,
    home: &Path,
    approval: AskForApproval,
    sandbox: SandboxMode,
) -> oi_config::Config {
    mock_config_with(mock, home, approval, sandbox, "")
}

/// [`mock_config`] with `top_level` keys written before the mock's tables.
pub fn mock_config_with(
    mock: &oi_test_support::MockModelServer,
    home: &Path,
    approval: AskForApproval,
    sandbox: SandboxMode,
    top_level: &str,
) -> oi_config::Config {
    let toml = mock.config_toml("mock", oi_protocol::config_types::WireApi::Chat);
    std::fs::write(home.join("config.toml"), format!("{top_level}\n{toml}")).unwrap();
    oi_config::load_config(oi_config::ConfigLoadOptions {
        home: Some(home.to_path_buf()),
        overrides: oi_config::ConfigOverrides {
            cwd: Some(home.to_path_buf()),
            sandbox_mode: Some(sandbox),
            approval_policy: Some(approval),
            ..Default::default()
        },
        ..Default::default()
    })
    .unwrap()
    .config
}

/// The manager the engine tests use (source `exec`).
pub fn manager(persist: bool) -> oi_core::ThreadManager {
    oi_core::ThreadManager::new(oi_core::ThreadManagerOptions {
        source: oi_core::SessionSource::Exec,
        persist,
    })
}

/// A user message as an op.
pub fn user(text: &str) -> Op {
    Op::UserInput {
        items: vec![UserInput::text(text)],
        overrides: TurnOverrides::default(),
    }
}

/// Submits `op` and returns every event up to the end of its turn (a generous deadline per
/// event, never a fixed sleep).
pub async fn run_op(thread: &Thread, op: Op) -> Vec<Event> {
    let mut events = thread.subscribe();
    let id = thread.submit(op).await.unwrap();
    let mut out = Vec::new();
    loop {
        let ev = tokio::time::timeout(Duration::from_secs(60), events.next())
            .await
            .expect("no event within 60 s")
            .expect("thread closed");
        let end = ev.id == id && ev.msg.ends_turn();
        out.push(ev);
        if end {
            return out;
        }
    }
}

/// The messages of the turn's `error` events.
pub fn errors(evs: &[Event]) -> Vec<String> {
    evs.iter()
        .filter_map(|e| match &e.msg {
            EventMsg::Error(e) => Some(e.message.clone()),
            _ => None,
        })
        .collect()
}

/// The messages of the turn's `warning` events.
pub fn warnings(evs: &[Event]) -> Vec<String> {
    evs.iter()
        .filter_map(|e| match &e.msg {
            EventMsg::Warning(w) => Some(w.message.clone()),
            _ => None,
        })
        .collect()
}

/// The messages of the turn's `stream_error` events.
pub fn stream_errors(evs: &[Event]) -> Vec<String> {
    evs.iter()
        .filter_map(|e| match &e.msg {
            EventMsg::StreamError(e) => Some(e.message.clone()),
            _ => None,
        })
        .collect()
}

/// How many `context_compacted` events the turn had.
pub fn compactions(evs: &[Event]) -> usize {
    evs.iter()
        .filter(|e| matches!(e.msg, EventMsg::ContextCompacted(_)))
        .count()
}

/// The `last_agent_message` of the turn's `task_complete`.
pub fn last_message(evs: &[Event]) -> Option<String> {
    evs.iter().find_map(|e| match &e.msg {
        EventMsg::TaskComplete(t) => t.last_agent_message.clone(),
        _ => None,
    })
}

/// A shell call printing about 7 KB, every line tagged with the call's number.
pub fn noisy_call(i: usize) -> oi_test_support::MockTurn {
    let script = format!(
        "for n in $(seq 1 100); do echo \"out-{i:02}-line-$n ................................................ end\"; done"
    );
    oi_test_support::MockTurn::tool_call(
        "shell",
        serde_json::json!({"command": ["bash", "-c", script]}),
    )
    .with_call_id(format!("call-{i}"))
}

/// One event stream per thread for tests that read a thread across several helper calls,
/// opened on first use. Open it (e.g. with [`watch`]) before submitting what it should see.
pub fn watch(thread: &Thread) -> std::sync::Arc<tokio::sync::Mutex<oi_core::EventStream>> {
    use std::collections::HashMap;
    use std::sync::{Arc, LazyLock, Mutex};
    type Streams =
        Mutex<HashMap<oi_protocol::ThreadId, Arc<tokio::sync::Mutex<oi_core::EventStream>>>>;
    static STREAMS: LazyLock<Streams> = LazyLock::new(Streams::default);
    STREAMS
        .lock()
        .unwrap()
        .entry(thread.id())
        .or_insert_with(|| Arc::new(tokio::sync::Mutex::new(thread.subscribe())))
        .clone()
}

/// The next event of `thread` on its [`watch`] stream (`None`: the thread has shut down).
pub async fn next_watched(thread: &Thread) -> Option<Event> {
    let stream = watch(thread);
    let mut stream = stream.lock().await;
    tokio::time::timeout(Duration::from_secs(60), stream.next())
        .await
        .expect("no event within 60 s")
}
