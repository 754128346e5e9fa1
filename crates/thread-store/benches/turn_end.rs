//! Turn-end latency of the store, local files (JSONL + SQLite) and PostgreSQL.
//!
//! `cargo bench -p oi-thread-store --bench turn_end` (PostgreSQL too when `OI_TEST_PG_URL`
//! names a server, see `scripts/test-postgres.sh`). A thread gets 300 turns; each turn's
//! records are appended untimed, then its end is timed: the `task_complete` record appended
//! and made durable (fsync and index update locally; one committed transaction in the
//! database). Two ways, as the engine and the servers use the store: the sync forms from a
//! plain thread (the engine's writer thread), and the async seam awaited on a multi-thread
//! runtime (the store opened on it, as every front end does).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use oi_protocol::models::ResponseItem;
use oi_protocol::protocol::{
    AgentMessageEvent, EventMsg, TaskCompleteEvent, TaskStartedEvent, UserMessageEvent,
};
use oi_thread_store::{
    RolloutItem, RolloutWriter, SessionMeta, SessionSource, StoreLocation, StoreTimeouts,
    ThreadStore,
};
use std::time::{Duration, Instant};

const TURNS: usize = 300;

fn turn_body(turn: usize) -> Vec<RolloutItem> {
    let id = format!("t{turn}");
    let prompt = format!("turn {turn}: fix the failing test in the parser");
    vec![
        RolloutItem::EventMsg(EventMsg::TaskStarted(TaskStartedEvent {
            turn_id: id,
            started_at: None,
            model_context_window: None,
            model_context_window_source: None,
            collaboration_mode_kind: "default".into(),
        })),
        RolloutItem::EventMsg(EventMsg::UserMessage(UserMessageEvent {
            message: prompt.clone(),
            images: None,
            local_images: Vec::new(),
            text_elements: Vec::new(),
        })),
        RolloutItem::ResponseItem(ResponseItem::user_text(&prompt)),
        RolloutItem::ResponseItem(ResponseItem::assistant_text(
            "Done: the parser test passes.",
        )),
        RolloutItem::EventMsg(EventMsg::AgentMessage(AgentMessageEvent {
            message: "Done: the parser test passes.".into(),
            phase: None,
            memory_citation: None,
        })),
    ]
}

fn turn_end(turn: usize) -> RolloutItem {
    RolloutItem::EventMsg(EventMsg::TaskComplete(TaskCompleteEvent {
        turn_id: format!("t{turn}"),
        last_agent_message: Some("Done: the parser test passes.".into()),
        completed_at: None,
        duration_ms: None,
    }))
}

fn meta() -> SessionMeta {
    let mut m = SessionMeta::new("/work/bench", "ollama", "qwen3", SessionSource::Exec);
    m.cli_version = "0.1.0".into();
    m
}

fn report(label: &str, mut v: Vec<Duration>) {
    v.sort();
    let at = |p: f64| v[((v.len() as f64 - 1.0) * p).round() as usize].as_secs_f64() * 1e3;
    println!(
        "{label:<44} p50 {:>7.3} ms   p90 {:>7.3} ms   max {:>7.3} ms",
        at(0.5),
        at(0.9),
        at(1.0)
    );
}

/// The sync forms on a plain thread, as the engine's writer thread calls them.
fn writer_thread(mut w: RolloutWriter) -> Vec<Duration> {
    std::thread::spawn(move || {
        let mut times = Vec::with_capacity(TURNS);
        for turn in 0..TURNS {
            w.append_all(&turn_body(turn)).unwrap();
            let start = Instant::now();
            w.append(&turn_end(turn)).unwrap();
            w.flush_index().unwrap();
            times.push(start.elapsed());
        }
        times
    })
    .join()
    .unwrap()
}

/// The async seam, awaited by a task.
async fn async_seam(mut w: RolloutWriter) -> Vec<Duration> {
    let mut times = Vec::with_capacity(TURNS);
    for turn in 0..TURNS {
        w.append_all_async(&turn_body(turn)).await.unwrap();
        let start = Instant::now();
        w.append_async(&turn_end(turn)).await.unwrap();
        w.flush_index_async().await.unwrap();
        times.push(start.elapsed());
    }
    w.close_async().await.unwrap();
    times
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let mut backends = vec![("SQLite (local files)", StoreLocation::Local)];
    match oi_thread_store::test_db::fresh_database("turn_end benchmark") {
        Some(url) => backends.push(("PostgreSQL (loopback)", StoreLocation::Postgres(url))),
        None => println!("(PostgreSQL skipped: OI_TEST_PG_URL is not set)"),
    }
    println!("turn-end latency, {TURNS} turns on one thread");
    for (name, location) in backends {
        let home = tempfile::tempdir().unwrap();
        let store = rt
            .block_on(ThreadStore::open_with_async(
                home.path(),
                &location,
                StoreTimeouts::default(),
            ))
            .unwrap();
        let w = rt.block_on(store.create_async(meta())).unwrap();
        let sync_times = writer_thread(w);
        report(&format!("{name}, writer thread (sync forms)"), sync_times);
        let w = rt.block_on(store.create_async(meta())).unwrap();
        let async_times = rt.block_on(async_seam(w));
        report(&format!("{name}, async seam"), async_times);
    }
}
