//! Opening the local store at scale: what every process start pays before its first page.
//!
//! Four homes, written directly as rollout files (creating them through the API takes minutes
//! per 10k): 10,000 and 100,000 threads, all in one day directory or spread over a year.
//! For each: a cold open (no index: full rebuild), then warm `open()` + first page of
//! `list` (p50 / p95 of 20), then the same after one thread was added behind the store's back.
//! The homes are left alone for 3.5 s after writing, as day directories of a real home are
//! older than the store's 3 s "too recent to trust" window.
//!
//! `cargo bench -p oi-thread-store --bench open_scale`; `OI_BENCH_SIZES=10000` limits the
//! sizes (comma-separated). Run by `scripts/bench-scale.sh`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use oi_protocol::ThreadId;
use oi_protocol::protocol::{EventMsg, UserMessageEvent};
use oi_thread_store::{
    ListQuery, RolloutItem, RolloutLine, SessionMeta, SessionSource, ThreadStore,
};
use std::io::Write;
use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

const RUNS: usize = 20;
/// 2026-01-01T00:00:00Z.
const START_MS: i64 = 1_767_225_600_000;
const DAY_MS: i64 = 86_400_000;

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    samples[((samples.len() as f64 - 1.0) * p).round() as usize]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn timestamp(ms: i64) -> String {
    chrono::DateTime::from_timestamp_millis(ms)
        .expect("valid time")
        .format("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

/// Writes one rollout (session_meta + a user message) the way the store lays it out.
fn write_thread(sessions: &Path, created_ms: i64, n: usize) {
    let secs = u64::try_from(created_ms / 1000).expect("positive");
    let ts = uuid::Timestamp::from_unix(uuid::NoContext, secs, (n % 1000) as u32 * 1_000_000);
    let id: ThreadId = uuid::Uuid::new_v7(ts).to_string().parse().expect("uuid");
    let mut meta = SessionMeta::new(
        format!("/home/u/proj{}", n % 10),
        "ollama",
        "qwen3-coder",
        SessionSource::Mcp,
    );
    meta.id = id;
    meta.timestamp = timestamp(created_ms);
    meta.cli_version = "0.1.0".into();
    let lines = [
        RolloutLine {
            timestamp: meta.timestamp.clone(),
            item: RolloutItem::SessionMeta(meta.clone()),
        },
        RolloutLine {
            timestamp: meta.timestamp.clone(),
            item: RolloutItem::EventMsg(EventMsg::UserMessage(UserMessageEvent {
                message: format!("Fix the parser in module {n}"),
                images: None,
                local_images: Vec::new(),
                text_elements: Vec::new(),
            })),
        },
    ];
    let local = chrono::DateTime::from_timestamp_millis(created_ms)
        .expect("valid time")
        .with_timezone(&chrono::Local);
    let dir = sessions
        .join(local.format("%Y").to_string())
        .join(local.format("%m").to_string())
        .join(local.format("%d").to_string());
    std::fs::create_dir_all(&dir).expect("day dir");
    let path = dir.join(format!(
        "rollout-{}-{id}.jsonl",
        local.format("%Y-%m-%dT%H-%M-%S")
    ));
    let mut f = std::fs::File::create(&path).expect("create rollout");
    for l in &lines {
        let mut s = serde_json::to_string(l).expect("encode");
        s.push('\n');
        f.write_all(s.as_bytes()).expect("write");
    }
    f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_millis(created_ms as u64 + 60_000))
        .expect("mtime");
}

fn open_and_first_page(home: &Path) -> usize {
    let store = ThreadStore::open(home).expect("open");
    store.list(&ListQuery::default()).expect("list").data.len()
}

fn scenario(threads: usize, one_day: bool) {
    let dir = tempfile::tempdir().expect("temp dir");
    let home = dir.path();
    let sessions = home.join("sessions");
    // One day: every thread at noon of one day (1 s apart would cross midnight at 100k).
    let step = if one_day {
        (DAY_MS / 2) / threads as i64
    } else {
        (365 * DAY_MS) / threads as i64
    };
    let base = if one_day {
        START_MS + DAY_MS / 4
    } else {
        START_MS
    };
    let t = Instant::now();
    for n in 0..threads {
        write_thread(&sessions, base + n as i64 * step, n);
    }
    let label = format!(
        "{threads} threads {}",
        if one_day { "in one day" } else { "over a year" }
    );
    println!("{label}: written in {:.1} s", t.elapsed().as_secs_f64());
    // A real home's day directories were last changed a while ago: the store does not trust
    // a directory mtime younger than 3 s (it lists such a directory again next time).
    std::thread::sleep(Duration::from_millis(3_500));

    let t = Instant::now();
    let rows = open_and_first_page(home);
    println!(
        "  {:<46} {:>9.1} ms ({rows} rows)",
        "cold open (no index) + first page",
        ms(t.elapsed())
    );

    let mut warm = Vec::new();
    for _ in 0..RUNS {
        let t = Instant::now();
        open_and_first_page(home);
        warm.push(t.elapsed());
    }
    println!(
        "  {:<46} p50 {:>8.2} ms  p95 {:>8.2} ms",
        "warm open + first page",
        ms(percentile(&mut warm, 0.5)),
        ms(percentile(&mut warm, 0.95))
    );

    // One thread appears behind the store's back, in the newest day directory.
    write_thread(&sessions, base + threads as i64 * step, threads);
    let t = Instant::now();
    let rows = open_and_first_page(home);
    println!(
        "  {:<46} {:>9.2} ms ({rows} rows)",
        "open + first page after 1 file added",
        ms(t.elapsed())
    );
    let store = ThreadStore::open(home).expect("open");
    let total = store
        .list(&ListQuery {
            limit: ListQuery::MAX_LIMIT,
            ..ListQuery::default()
        })
        .expect("list");
    assert!(total.data.len() == ListQuery::MAX_LIMIT.min(threads + 1));
}

fn main() {
    let sizes: Vec<usize> = std::env::var("OI_BENCH_SIZES")
        .ok()
        .map(|v| v.split(',').filter_map(|s| s.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![10_000, 100_000]);
    for &n in &sizes {
        scenario(n, true);
        scenario(n, false);
    }
}
