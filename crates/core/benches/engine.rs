//! Engine overhead against a zero-latency mock model (`cargo bench -p oi-core`).
//!
//! Reports, per model round-trip, the wall time of a whole turn through the engine (HTTP on
//! loopback, SSE parsing, event emission) and, separately, the bare HTTP round-trip of the
//! same request straight to the mock, so the difference is the engine's own overhead. Also
//! streams a 2,000-delta answer and checks that every delta event arrives.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use oi_core::{ThreadManager, ThreadManagerOptions};
use oi_protocol::config_types::WireApi;
use oi_protocol::protocol::{EventMsg, Op, TurnOverrides};
use oi_protocol::user_input::UserInput;
use oi_test_support::{MockModelServer, MockScript, MockTurn};
use serde_json::json;
use std::time::{Duration, Instant};

fn percentile(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

async fn run_turn(thread: &oi_core::Thread, prompt: &str) -> usize {
    let mut events = thread.subscribe();
    let id = thread
        .submit(Op::UserInput {
            items: vec![UserInput::text(prompt)],
            overrides: TurnOverrides::default(),
        })
        .await
        .expect("submit");
    let mut deltas = 0;
    loop {
        let ev = events.next().await.expect("event");
        match ev.msg {
            EventMsg::AgentMessageDelta(_) => deltas += 1,
            EventMsg::TaskComplete(_) if ev.id == id => return deltas,
            EventMsg::Error(e) => panic!("turn failed: {}", e.message),
            _ => {}
        }
    }
}

async fn config_for(mock: &MockModelServer, home: &std::path::Path) -> oi_config::Config {
    std::fs::write(
        home.join("config.toml"),
        mock.config_toml("mock", WireApi::Chat),
    )
    .expect("config");
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

#[tokio::main]
async fn main() {
    let home = tempfile::tempdir().expect("tempdir");
    let manager = ThreadManager::new(ThreadManagerOptions {
        source: oi_thread_store::SessionSource::Exec,
        persist: false,
    });
    const N: usize = 200;

    // 1. Text-only turns: one model round-trip each.
    let mock = MockModelServer::start(MockScript::always(MockTurn::text("ok")))
        .await
        .expect("mock");
    let cfg = config_for(&mock, home.path()).await;
    let new = manager.start_thread(cfg.clone()).await.expect("thread");
    // Followed through `run_turn`'s own subscription; the creator's stream is not read.
    drop(new.events);
    for _ in 0..10 {
        run_turn(&new.thread, "warm up").await;
    }
    let mut turns = Vec::with_capacity(N);
    for _ in 0..N {
        let t = Instant::now();
        run_turn(&new.thread, "hi").await;
        turns.push(t.elapsed());
    }
    // The same request straight to the mock, for the HTTP+server baseline.
    let body = mock.requests().last().expect("a request").body.clone();
    let http = reqwest_baseline(&mock.base_url(), &body, N).await;
    let (t50, h50) = (
        percentile(&mut turns, 0.5),
        percentile(&mut http.clone(), 0.5),
    );
    println!(
        "text turn (1 round-trip):      p50 {:>8.3} ms   p90 {:>8.3} ms",
        ms(t50),
        ms(percentile(&mut turns, 0.9))
    );
    println!("bare HTTP+SSE to the mock:     p50 {:>8.3} ms", ms(h50));
    println!(
        "engine overhead per round-trip: p50 {:>8.3} ms  (target < 5 ms)",
        ms(t50.saturating_sub(h50))
    );

    // 2. Tool turns: model → shell `true` → model (two round-trips).
    let mock2 = MockModelServer::start(MockScript::cycle(vec![
        MockTurn::tool_call("shell", json!({"command": ["true"]})).into(),
        MockTurn::text("done").into(),
    ]))
    .await
    .expect("mock");
    let cfg2 = config_for(&mock2, home.path()).await;
    let new2 = manager.start_thread(cfg2).await.expect("thread");
    // Followed through `run_turn`'s own subscription; the creator's stream is not read.
    drop(new2.events);
    let mut tool_turns = Vec::with_capacity(N / 2);
    for _ in 0..N / 2 {
        let t = Instant::now();
        run_turn(&new2.thread, "run true").await;
        tool_turns.push(t.elapsed());
    }
    println!(
        "tool turn (2 round-trips + `true`): p50 {:>8.3} ms",
        ms(percentile(&mut tool_turns, 0.5))
    );

    // 3. Streaming throughput: 2,000 deltas in one answer, none lost.
    const DELTAS: usize = 2000;
    let mock3 = MockModelServer::start(MockScript::always(MockTurn::text_deltas(DELTAS)))
        .await
        .expect("mock");
    let cfg3 = config_for(&mock3, home.path()).await;
    let new3 = manager.start_thread(cfg3).await.expect("thread");
    // Followed through `run_turn`'s own subscription; the creator's stream is not read.
    drop(new3.events);
    run_turn(&new3.thread, "warm").await;
    let t = Instant::now();
    let got = run_turn(&new3.thread, "stream").await;
    let el = t.elapsed();
    assert_eq!(got, DELTAS, "lost delta events");
    println!(
        "streaming: {DELTAS} deltas in {:.1} ms = {:.0} events/s, {got}/{DELTAS} delivered (target >= 1000/s, none lost)",
        ms(el),
        DELTAS as f64 / el.as_secs_f64()
    );

    // 4. A second subscriber reading the same stream: its cost on throughput.
    let watcher = {
        let mut events = new3.thread.subscribe();
        tokio::spawn(async move {
            let mut deltas = 0usize;
            while let Some(ev) = events.next().await {
                match ev.msg {
                    EventMsg::AgentMessageDelta(_) => deltas += 1,
                    EventMsg::TaskComplete(_) => return deltas,
                    _ => {}
                }
            }
            deltas
        })
    };
    let t = Instant::now();
    let got = run_turn(&new3.thread, "stream").await;
    let el = t.elapsed();
    let watched = watcher.await.expect("watcher");
    assert_eq!((got, watched), (DELTAS, DELTAS), "lost delta events");
    println!(
        "streaming, 2 subscribers: {DELTAS} deltas in {:.1} ms = {:.0} events/s, {watched}/{DELTAS} to the second",
        ms(el),
        DELTAS as f64 / el.as_secs_f64()
    );

    // 5. Turn end with the thread stored (local rollout + SQLite index): text turns on a
    // persisted thread, so each turn's end includes writing its records.
    let persisted = ThreadManager::new(ThreadManagerOptions {
        source: oi_thread_store::SessionSource::Exec,
        persist: true,
    });
    let new5 = persisted.start_thread(cfg.clone()).await.expect("thread");
    // Followed through `run_turn`'s own subscription; the creator's stream is not read.
    drop(new5.events);
    for _ in 0..10 {
        run_turn(&new5.thread, "warm up").await;
    }
    let mut stored = Vec::with_capacity(N);
    for _ in 0..N {
        let t = Instant::now();
        run_turn(&new5.thread, "hi").await;
        stored.push(t.elapsed());
    }
    println!(
        "text turn, stored thread:      p50 {:>8.3} ms   p90 {:>8.3} ms",
        ms(percentile(&mut stored, 0.5)),
        ms(percentile(&mut stored, 0.9))
    );
    persisted.shutdown_all().await;

    // 6. Twenty read-only commands in one response (read-only sandbox, no approvals).
    let mut twenty = MockTurn::text("");
    for _ in 0..20 {
        twenty = twenty.with_tool_call("shell", json!({"command": ["ls", "-la"]}));
    }
    let mock6 = MockModelServer::start(MockScript::cycle(vec![
        twenty.into(),
        MockTurn::text("listed").into(),
    ]))
    .await
    .expect("mock");
    let mut cfg6 = config_for(&mock6, home.path()).await;
    cfg6.sandbox_mode = oi_protocol::config_types::SandboxMode::ReadOnly;
    cfg6.sandbox_policy = oi_protocol::config_types::SandboxPolicy::ReadOnly;
    let new6 = manager.start_thread(cfg6).await.expect("thread");
    // Followed through `run_turn`'s own subscription; the creator's stream is not read.
    drop(new6.events);
    run_turn(&new6.thread, "warm up").await;
    let mut listing = Vec::with_capacity(10);
    for _ in 0..10 {
        let t = Instant::now();
        run_turn(&new6.thread, "list").await;
        listing.push(t.elapsed());
    }
    println!(
        "20 read-only commands in one response: p50 {:>8.3} ms",
        ms(percentile(&mut listing, 0.5))
    );
    manager.shutdown_all().await;
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Time the bare request (same body) with a plain HTTP client reading the whole SSE body.
async fn reqwest_baseline(base: &str, body: &serde_json::Value, n: usize) -> Vec<Duration> {
    let url = format!("{base}/chat/completions");
    let addr = url
        .trim_start_matches("http://")
        .split('/')
        .next()
        .unwrap_or_default()
        .to_string();
    let path = format!(
        "/{}",
        url.trim_start_matches("http://")
            .split_once('/')
            .map(|x| x.1)
            .unwrap_or_default()
    );
    let payload = serde_json::to_vec(body).expect("body");
    let mut out = Vec::with_capacity(n);
    for _ in 0..n {
        let t = Instant::now();
        let mut s = tokio::net::TcpStream::connect(&addr)
            .await
            .expect("connect");
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let req = format!(
            "POST {path} HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            payload.len()
        );
        s.write_all(req.as_bytes()).await.expect("write");
        s.write_all(&payload).await.expect("write");
        let mut buf = Vec::new();
        s.read_to_end(&mut buf).await.expect("read");
        out.push(t.elapsed());
    }
    out
}
