//! Context management over a long session (`cargo bench -p oi-core --bench context`).
//!
//! A 200-turn session against a zero-latency mock model, each turn one shell call printing
//! about 3 KB and a short answer: the tokens sent per turn (the mock's count, body bytes / 4)
//! with a 16,384-token window and auto-compaction, and without compaction (a window so big
//! it never triggers). Then the wall time `Op::Compact` takes on a thread with a full
//! window, against the time of a plain one-request turn (the mock answers instantly, so
//! this is the engine's own cost of a compaction plus one round-trip).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use oi_core::{ThreadManager, ThreadManagerOptions};
use oi_protocol::config_types::WireApi;
use oi_protocol::protocol::{EventMsg, Op, TurnOverrides};
use oi_protocol::user_input::UserInput;
use oi_test_support::{MockModelServer, MockScript, MockTurn};
use serde_json::json;
use std::time::{Duration, Instant};

const TURNS: usize = 200;
const WINDOW: u64 = 16_384;
const MARKER: &str = "Your context window is nearly full";

/// Runs `op` as a turn; returns how many compactions it did and its wall time.
async fn run(thread: &oi_core::Thread, op: Op) -> (usize, Duration) {
    let started = Instant::now();
    let mut events = thread.subscribe();
    let id = thread.submit(op).await.expect("submit");
    let mut compactions = 0;
    loop {
        let ev = events.next().await.expect("event");
        match ev.msg {
            EventMsg::ContextCompacted(_) => compactions += 1,
            EventMsg::Error(e) => panic!("turn failed: {}", e.message),
            EventMsg::TaskComplete(_) if ev.id == id => return (compactions, started.elapsed()),
            _ => {}
        }
    }
}

fn user(text: String) -> Op {
    Op::UserInput {
        items: vec![UserInput::text(text)],
        overrides: TurnOverrides::default(),
    }
}

fn config(mock: &MockModelServer, home: &std::path::Path, window: u64) -> oi_config::Config {
    let toml = format!(
        "model_context_window = {window}\n{}",
        mock.config_toml("mock", WireApi::Chat)
    );
    std::fs::write(home.join("config.toml"), toml).expect("config");
    oi_config::load_config(oi_config::ConfigLoadOptions {
        home: Some(home.to_path_buf()),
        overrides: oi_config::ConfigOverrides {
            cwd: Some(home.to_path_buf()),
            sandbox_mode: Some(oi_protocol::config_types::SandboxMode::DangerFullAccess),
            approval_policy: Some(oi_protocol::config_types::AskForApproval::Never),
            ..Default::default()
        },
        ..Default::default()
    })
    .expect("load config")
    .config
}

fn script() -> MockScript {
    let call = MockTurn::tool_call(
        "shell",
        json!({"command": ["bash", "-c", "seq 1 600 | sed 's/$/ ..../'"]}),
    );
    MockScript::cycle(vec![
        call.into(),
        MockTurn::text("done with this step").into(),
    ])
    .with_rule(
        MARKER,
        MockTurn::text("## Goal\nsteps\n## Done so far\nmany commands\n## Next steps\nmore"),
    )
}

struct SessionNumbers {
    per_turn: Vec<u64>,
    compactions: usize,
    wall: Duration,
}

async fn session(window: u64) -> SessionNumbers {
    let home = tempfile::tempdir().expect("tempdir");
    let mock = MockModelServer::start(script()).await.expect("mock");
    let m = ThreadManager::new(ThreadManagerOptions {
        source: oi_thread_store::SessionSource::Exec,
        persist: false,
    });
    let t = m
        .start_thread(config(&mock, home.path(), window))
        .await
        .expect("thread");
    let mut per_turn = Vec::with_capacity(TURNS);
    let mut compactions = 0;
    let started = Instant::now();
    for i in 0..TURNS {
        mock.clear_requests();
        let (c, _) = run(&t.thread, user(format!("step {i}: run the next command"))).await;
        compactions += c;
        per_turn.push(mock.requests().iter().map(|r| r.approx_tokens()).sum());
    }
    let wall = started.elapsed();
    m.shutdown_all().await;
    SessionNumbers {
        per_turn,
        compactions,
        wall,
    }
}

fn mean(v: &[u64]) -> u64 {
    v.iter().sum::<u64>() / v.len().max(1) as u64
}

async fn compaction_cost() -> (Duration, Duration) {
    let home = tempfile::tempdir().expect("tempdir");
    let mock = MockModelServer::start(script()).await.expect("mock");
    let m = ThreadManager::new(ThreadManagerOptions {
        source: oi_thread_store::SessionSource::Exec,
        persist: true,
    });
    // A window so big nothing compacts on its own; fill ~12k tokens of history.
    let t = m
        .start_thread(config(&mock, home.path(), 10_000_000))
        .await
        .expect("thread");
    let mut plain = Vec::new();
    let mut compact = Vec::new();
    for round in 0..5 {
        for i in 0..6 {
            run(&t.thread, user(format!("round {round} step {i}"))).await;
        }
        // A plain turn of one request (the cycle's next answer is text).
        mock.set_script(
            MockScript::always(MockTurn::text("ok")).with_rule(MARKER, MockTurn::text("summary")),
        );
        plain.push(run(&t.thread, user("just answer".into())).await.1);
        compact.push(run(&t.thread, Op::Compact).await.1);
        mock.set_script(script());
    }
    m.shutdown_all().await;
    plain.sort();
    compact.sort();
    (plain[plain.len() / 2], compact[compact.len() / 2])
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        println!("context management, {TURNS}-turn session (1 shell call of ~3 KB per turn)");
        println!(
            "{:<28} {:>10} {:>10} {:>10} {:>10} {:>12} {:>8}",
            "mode", "turn 1", "turn 100", "turn 200", "mean/turn", "max/turn", "compacts"
        );
        for (name, window) in [
            ("auto-compact, 16k window", WINDOW),
            ("no compaction", 10_000_000),
        ] {
            let n = session(window).await;
            println!(
                "{:<28} {:>10} {:>10} {:>10} {:>10} {:>12} {:>8}   ({:.1} s)",
                name,
                n.per_turn[0],
                n.per_turn[TURNS / 2 - 1],
                n.per_turn[TURNS - 1],
                mean(&n.per_turn),
                n.per_turn.iter().max().copied().unwrap_or(0),
                n.compactions,
                n.wall.as_secs_f64()
            );
        }
        let (plain, compact) = compaction_cost().await;
        println!(
            "median plain turn: {:.2} ms; median Op::Compact turn: {:.2} ms (compaction adds {:.2} ms plus the model's time to write the summary)",
            plain.as_secs_f64() * 1e3,
            compact.as_secs_f64() * 1e3,
            (compact.saturating_sub(plain)).as_secs_f64() * 1e3
        );
    });
}
