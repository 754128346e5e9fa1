//! What a turn is, read from the store (`cargo bench -p oi-core --bench turn_state`): the
//! read an MCP `tasks/get` poll makes, on a long thread (2,000 finished turns, then a
//! parked one). Reports the cold read (`StoredThreads::turn_state`: the whole outline) and
//! the poll that keeps the outline (`outline_update` + `turn_state_in`: only appended
//! records are read), for local files and, when `OI_TEST_PG_URL` is set, PostgreSQL.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use oi_core::{ThreadManager, ThreadManagerOptions, TurnState};
use oi_protocol::models::{FunctionCallOutput, ResponseItem};
use oi_protocol::protocol::{
    AgentMessageEvent, EventMsg, ExecApprovalRequestEvent, ParkedRequest, TaskCompleteEvent,
    TaskStartedEvent, UserMessageEvent,
};
use oi_thread_store::{
    ParkedCall, RolloutItem, SessionMeta, SessionSource, StoreLocation, StoreTimeouts, ThreadStore,
    TurnParkedItem,
};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

const TURNS: usize = 2_000;

fn percentile(v: &mut [Duration], p: f64) -> Duration {
    v.sort();
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn turn(i: usize) -> Vec<RolloutItem> {
    let id = format!("turn-{i}");
    vec![
        RolloutItem::EventMsg(EventMsg::TaskStarted(TaskStartedEvent {
            turn_id: id.clone(),
            started_at: Some(1_767_225_600),
            model_context_window: None,
            model_context_window_source: None,
            collaboration_mode_kind: "default".into(),
        })),
        RolloutItem::EventMsg(EventMsg::UserMessage(UserMessageEvent {
            message: format!("step {i}: run the tests and fix what fails"),
            images: None,
            local_images: Vec::new(),
            text_elements: Vec::new(),
        })),
        RolloutItem::ResponseItem(ResponseItem::FunctionCall {
            call_id: format!("c{i}"),
            name: "shell".into(),
            arguments: r#"{"command":["cargo","test"]}"#.into(),
        }),
        RolloutItem::ResponseItem(ResponseItem::FunctionCallOutput {
            call_id: format!("c{i}"),
            output: FunctionCallOutput::text("test result: ok. 42 passed".repeat(8), true),
        }),
        RolloutItem::EventMsg(EventMsg::AgentMessage(AgentMessageEvent {
            message: format!("All tests pass after step {i}."),
            phase: None,
            memory_citation: None,
        })),
        RolloutItem::EventMsg(EventMsg::TaskComplete(TaskCompleteEvent {
            turn_id: id,
            last_agent_message: Some(format!("All tests pass after step {i}.")),
            completed_at: Some(1_767_225_601),
            duration_ms: Some(1000),
        })),
    ]
}

fn parked_turn() -> Vec<RolloutItem> {
    let mut items = turn(TURNS);
    items.truncate(3);
    items.push(RolloutItem::TurnParked(TurnParkedItem {
        turn_id: format!("turn-{TURNS}"),
        park_id: "park".into(),
        parked_at: chrono_now(),
        expires_at: chrono_now() + 86_400,
        requests: vec![ParkedRequest::Exec(ExecApprovalRequestEvent {
            call_id: format!("c{TURNS}"),
            approval_id: None,
            turn_id: format!("turn-{TURNS}"),
            command: vec!["cargo".into(), "test".into()],
            cwd: "/work".into(),
            reason: None,
            parsed_cmd: Vec::new(),
        })],
        calls: vec![ParkedCall {
            call_id: format!("c{TURNS}"),
            name: "shell".into(),
            arguments: r#"{"command":["cargo","test"]}"#.into(),
        }],
        settings: None,
        engine: serde_json::json!({}),
    }));
    items
}

fn chrono_now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

async fn bench(name: &str, home: &Path, location: StoreLocation) {
    if let StoreLocation::Postgres(url) = &location {
        std::fs::write(
            home.join("config.toml"),
            format!("[thread_store]\nurl = \"{url}\"\n"),
        )
        .unwrap();
    }
    let store = ThreadStore::open_with_async(home, &location, StoreTimeouts::default())
        .await
        .unwrap();
    let meta = SessionMeta::new(home, "mock", "mock-model", SessionSource::Exec);
    let id = meta.id;
    let mut writer = store.create_async(meta).await.unwrap();
    for chunk in (0..TURNS).collect::<Vec<_>>().chunks(100) {
        let items: Vec<RolloutItem> = chunk.iter().flat_map(|i| turn(*i)).collect();
        writer.append_all_async(&items).await.unwrap();
    }
    writer.append_all_async(&parked_turn()).await.unwrap();
    writer.close_async().await.unwrap();

    let manager = ThreadManager::new(ThreadManagerOptions {
        source: SessionSource::Mcp,
        persist: true,
    });
    let stored = manager.stored_threads(home).await.unwrap();
    let parked = format!("turn-{TURNS}");
    let mut cold = Vec::new();
    for _ in 0..20 {
        let t = Instant::now();
        let s = stored.turn_state(&id, &parked).await.unwrap();
        cold.push(t.elapsed());
        assert!(matches!(s, Some(TurnState::Parked(_))), "{s:?}");
    }
    let mut outline = Arc::new(stored.outline(&id).await.unwrap());
    let mut poll = Vec::new();
    for _ in 0..200 {
        let t = Instant::now();
        if let Some(next) = stored.outline_update(&outline).await.unwrap() {
            outline = Arc::new(next);
        }
        let s = stored.turn_state_in(&outline, &parked).await.unwrap();
        poll.push(t.elapsed());
        assert!(matches!(s, Some(TurnState::Parked(_))), "{s:?}");
    }
    // A finished turn from the middle: its answer is parsed from its last records only.
    let t = Instant::now();
    let s = stored.turn_state_in(&outline, "turn-1000").await.unwrap();
    let middle = t.elapsed();
    assert!(matches!(s, Some(TurnState::Completed { .. })), "{s:?}");
    println!(
        "{name}: {} records; cold turn_state p50 {:.2} ms p95 {:.2} ms; \
         kept-outline poll p50 {:.3} ms p95 {:.3} ms; a finished turn {:.3} ms",
        outline.record_count(),
        ms(percentile(&mut cold, 0.5)),
        ms(percentile(&mut cold, 0.95)),
        ms(percentile(&mut poll, 0.5)),
        ms(percentile(&mut poll, 0.95)),
        ms(middle),
    );
}

#[tokio::main]
async fn main() {
    let home = tempfile::tempdir().unwrap();
    bench("local", home.path(), StoreLocation::Local).await;
    match std::env::var("OI_TEST_PG_URL") {
        Ok(_) => {
            let url = oi_thread_store::test_db::fresh_database("turn_state bench").unwrap();
            let home = tempfile::tempdir().unwrap();
            bench("postgres", home.path(), StoreLocation::Postgres(url)).await;
        }
        Err(_) => println!("postgres: skipped (set OI_TEST_PG_URL, see scripts/test-postgres.sh)"),
    }
}
