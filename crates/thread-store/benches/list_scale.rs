//! `thread/list` at fleet scale: 100,000 threads in PostgreSQL and in the local store.
//!
//! Run with a PostgreSQL test server (`eval "$(scripts/test-postgres.sh start)"`), then
//! `cargo bench -p oi-thread-store --bench list_scale`. `OI_BENCH_THREADS` changes the count.
//! Without `OI_TEST_PG_URL` only the local store is measured.
//!
//! The PostgreSQL threads are bulk-loaded with SQL (the benchmark measures listing, not
//! creation); the local ones are created through the store's API, since its index can only
//! be filled from rollout files.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use oi_protocol::protocol::{EventMsg, UserMessageEvent};
use oi_thread_store::{
    ListQuery, RolloutItem, SessionMeta, SessionSource, SortKey, StoreLocation, ThreadStore,
};
use std::time::{Duration, Instant};

const RUNS: usize = 30;

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    samples[((samples.len() as f64 - 1.0) * p).round() as usize]
}

fn measure(backend: &str, name: &str, mut f: impl FnMut() -> usize) {
    let mut samples = Vec::with_capacity(RUNS);
    let mut rows = 0;
    for _ in 0..RUNS {
        let t = Instant::now();
        rows = f();
        samples.push(t.elapsed());
    }
    let p50 = percentile(&mut samples, 0.5);
    let p95 = percentile(&mut samples, 0.95);
    println!(
        "{backend:<9} {name:<40} p50 {:>8.3} ms   p95 {:>8.3} ms   ({rows} rows)",
        p50.as_secs_f64() * 1e3,
        p95.as_secs_f64() * 1e3
    );
}

fn queries(backend: &str, store: &ThreadStore) {
    measure(backend, "first page (25, updated_at desc)", || {
        store.list(&ListQuery::default()).expect("list").data.len()
    });
    measure(backend, "first page (100, created_at asc)", || {
        let q = ListQuery {
            sort_key: SortKey::CreatedAt,
            descending: false,
            limit: 100,
            ..ListQuery::default()
        };
        store.list(&q).expect("list").data.len()
    });
    let mut deep = ListQuery::default();
    for _ in 0..200 {
        deep.cursor = store.list(&deep).expect("list").next_cursor;
    }
    measure(backend, "page 201 via cursor", || {
        store.list(&deep).expect("list").data.len()
    });
    measure(backend, "filtered (cwd + provider)", || {
        let q = ListQuery {
            cwd: Some(vec!["/home/u/proj3".into()]),
            model_providers: Some(vec!["ollama".into()]),
            ..ListQuery::default()
        };
        store.list(&q).expect("list").data.len()
    });
    measure(backend, "search common term (\"parser\")", || {
        let q = ListQuery {
            search: Some("parser".into()),
            ..ListQuery::default()
        };
        store.list(&q).expect("search").data.len()
    });
    measure(backend, "search rare term (\"task 99999)\")", || {
        let q = ListQuery {
            search: Some("task 99999)".into()),
            ..ListQuery::default()
        };
        store.list(&q).expect("search").data.len()
    });
}

const TOPICS: [&str; 5] = ["parser", "sandbox", "login flow", "flaky test", "docs"];

fn local(threads: usize) {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = ThreadStore::open(dir.path()).expect("open");
    let start_ms = chrono::Utc::now().timestamp_millis() - threads as i64 * 60_000;
    let t = Instant::now();
    for i in 0..threads {
        let mut meta = SessionMeta::new(
            format!("/home/u/proj{}", i % 10),
            ["ollama", "openrouter", "lmstudio"][i % 3],
            "qwen3-coder",
            SessionSource::Exec,
        );
        meta.timestamp = chrono::DateTime::from_timestamp_millis(start_ms + i as i64 * 60_000)
            .expect("time")
            .format("%Y-%m-%dT%H:%M:%S%.3fZ")
            .to_string();
        let mut w = store.create(meta).expect("create");
        w.append(&RolloutItem::EventMsg(EventMsg::UserMessage(
            UserMessageEvent {
                message: format!("Fix the {} (task {i})", TOPICS[i % TOPICS.len()]),
                images: None,
                local_images: Vec::new(),
                text_elements: Vec::new(),
            },
        )))
        .expect("append");
    }
    println!(
        "local     created {threads} threads through the API in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    queries("local", &store);
}

fn postgres(url: String, threads: usize) {
    let home = tempfile::tempdir().expect("temp dir");
    let location = StoreLocation::Postgres(url.clone());
    // Opening migrates the new database.
    let store = ThreadStore::open_at(home.path(), &location).expect("open");
    let t = Instant::now();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
            .await
            .expect("connect");
        tokio::spawn(conn);
        let n = threads as i64;
        client
            .execute(
                "INSERT INTO oi_threads (id, created_at_ms, updated_at_ms, cwd, model_provider,
                    model, source, preview, cli_version)
                 SELECT gen_random_uuid()::text,
                        1767225600000 + i * 60000,
                        1767225600000 + i * 60000 + (i * 7919 % 36000000),
                        '/home/u/proj' || (i % 10),
                        (ARRAY['ollama','openrouter','lmstudio'])[1 + i % 3],
                        'qwen3-coder', 'exec',
                        'Fix the ' || (ARRAY['parser','sandbox','login flow','flaky test','docs'])[1 + i % 5]
                            || ' (task ' || i || ')',
                        '0.1.0'
                 FROM generate_series(0::BIGINT, $1::BIGINT - 1) AS i",
                &[&n],
            )
            .await
            .expect("bulk insert");
        client.batch_execute("ANALYZE oi_threads").await.expect("analyze");
    });
    println!(
        "postgres  bulk-loaded {threads} threads in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    queries("postgres", &store);
}

fn main() {
    let threads: usize = std::env::var("OI_BENCH_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100_000);
    match oi_thread_store::test_db::fresh_database("list_scale benchmark") {
        Some(url) => postgres(url, threads),
        None => println!("postgres  skipped: OI_TEST_PG_URL is not set"),
    }
    local(threads);
}
