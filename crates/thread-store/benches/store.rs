//! Thread-store benchmark: 10,000 stored threads in a temporary home.
//!
//! Run with `cargo bench -p oi-thread-store`. Reports generation time, list / search /
//! filtered-list latency (p50 of 50 runs), full index rebuild time, and `open()` time with a
//! fresh index and with no index.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use oi_protocol::config_types::{AskForApproval, SandboxPolicy};
use oi_protocol::models::{FunctionCallOutput, ResponseItem, TokenUsage};
use oi_protocol::protocol::{
    AgentMessageEvent, EventMsg, TaskCompleteEvent, TaskStartedEvent, TokenCountEvent,
    TokenUsageInfo, UserMessageEvent,
};
use oi_thread_store::{
    ListQuery, RolloutItem, SessionMeta, SessionSource, SortKey, ThreadStore, TurnContextItem,
};
use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

const THREADS: usize = 10_000;
const PER_DAY: usize = 50;
const RUNS: usize = 50;

const TOPICS: [&str; 20] = [
    "parser",
    "sandbox",
    "login flow",
    "flaky test",
    "release notes",
    "memory leak",
    "CLI flags",
    "config loader",
    "README",
    "benchmarks",
    "MCP server",
    "retry logic",
    "error messages",
    "CI pipeline",
    "database index",
    "TUI layout",
    "docs",
    "logging",
    "token counting",
    "file watcher",
];
const VERBS: [&str; 8] = [
    "Fix",
    "Refactor",
    "Explain",
    "Add tests for",
    "Speed up",
    "Document",
    "Review",
    "Port",
];

/// xorshift64*: deterministic, dependency-free.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn turn(prompt: &str, i: usize) -> Vec<RolloutItem> {
    let turn_id = format!("turn-{i}");
    vec![
        RolloutItem::TurnContext(TurnContextItem {
            turn_id: turn_id.clone(),
            cwd: "/work".into(),
            approval_policy: AskForApproval::OnRequest,
            sandbox_policy: SandboxPolicy::workspace_write(),
            model: "qwen3-coder".into(),
            effort: None,
        }),
        RolloutItem::EventMsg(EventMsg::TaskStarted(TaskStartedEvent {
            turn_id: turn_id.clone(),
            started_at: None,
            model_context_window: Some(131_072),
            model_context_window_source: None,
            collaboration_mode_kind: "default".into(),
        })),
        RolloutItem::EventMsg(EventMsg::UserMessage(UserMessageEvent {
            message: prompt.into(),
            images: None,
            local_images: Vec::new(),
            text_elements: Vec::new(),
        })),
        RolloutItem::ResponseItem(ResponseItem::user_text(prompt)),
        RolloutItem::ResponseItem(ResponseItem::Reasoning {
            text: "Look at the code first.".repeat(10),
            encrypted_content: None,
        }),
        RolloutItem::ResponseItem(ResponseItem::FunctionCall {
            call_id: format!("call-{i}"),
            name: "shell".into(),
            arguments: r#"{"command":["rg","-n","TODO"]}"#.into(),
        }),
        RolloutItem::ResponseItem(ResponseItem::FunctionCallOutput {
            call_id: format!("call-{i}"),
            output: FunctionCallOutput::text("src/lib.rs:10: TODO\n".repeat(50), true),
        }),
        RolloutItem::ResponseItem(ResponseItem::assistant_text("Done. ".repeat(40))),
        RolloutItem::EventMsg(EventMsg::AgentMessage(AgentMessageEvent {
            message: "Done. ".repeat(40),
            phase: None,
            memory_citation: None,
        })),
        RolloutItem::EventMsg(EventMsg::TokenCount(TokenCountEvent {
            info: Some(TokenUsageInfo {
                total_token_usage: TokenUsage {
                    input_tokens: 4_000,
                    output_tokens: 300,
                    total_tokens: 4_300,
                    ..TokenUsage::default()
                },
                last_token_usage: TokenUsage::default(),
                model_context_window: Some(131_072),
                model_context_window_source: None,
            }),
            rate_limits: None,
        })),
        RolloutItem::EventMsg(EventMsg::TaskComplete(TaskCompleteEvent {
            turn_id,
            last_agent_message: Some("Done.".into()),
            completed_at: None,
            duration_ms: Some(1234),
        })),
    ]
}

fn percentile(samples: &mut [Duration], p: f64) -> Duration {
    samples.sort();
    let idx = ((samples.len() as f64 - 1.0) * p).round() as usize;
    samples[idx]
}

fn measure(name: &str, mut f: impl FnMut() -> usize) {
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
        "{name:<44} p50 {:>8.3} ms   p95 {:>8.3} ms   ({rows} rows)",
        p50.as_secs_f64() * 1e3,
        p95.as_secs_f64() * 1e3
    );
}

fn main() {
    let dir = tempfile::tempdir().expect("temp dir");
    let home = dir.path();
    let store = ThreadStore::open(home).expect("open");
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let base_instructions = "You are a coding agent. Follow the repository rules. ".repeat(40);
    let cwds: Vec<PathBuf> = (0..10).map(|i| format!("/home/u/proj{i}").into()).collect();
    let providers = ["ollama", "openrouter", "lmstudio"];
    let sources = [SessionSource::Cli, SessionSource::Exec, SessionSource::Mcp];
    let now_ms = chrono::Utc::now().timestamp_millis();
    let first_ms = now_ms - (THREADS / PER_DAY) as i64 * 86_400_000;

    let t = Instant::now();
    let mut paths = Vec::with_capacity(THREADS);
    let mut total_bytes = 0u64;
    for i in 0..THREADS {
        let created_ms = first_ms + (i as i64) * (86_400_000 / PER_DAY as i64);
        let mut meta = SessionMeta::new(
            cwds[rng.below(cwds.len())].clone(),
            providers[rng.below(providers.len())],
            "qwen3-coder",
            sources[rng.below(sources.len())],
        );
        meta.timestamp = chrono::DateTime::from_timestamp_millis(created_ms)
            .expect("valid time")
            .format("%Y-%m-%dT%H:%M:%S%.3fZ")
            .to_string();
        meta.cli_version = "0.1.0".into();
        meta.base_instructions = Some(base_instructions.clone());
        let prompt = format!(
            "{} the {} in module {} (task {i})",
            VERBS[rng.below(VERBS.len())],
            TOPICS[rng.below(TOPICS.len())],
            rng.below(1000)
        );
        let mut w = store.create(meta).expect("create");
        for k in 0..(1 + rng.below(3)) {
            w.append_all(&turn(&prompt, k)).expect("append");
        }
        paths.push((w.path().to_path_buf(), created_ms));
    }
    let generate = t.elapsed();
    // Realistic activity times: each thread last touched some minutes after it started.
    for (path, created_ms) in &paths {
        let touched = *created_ms + 60_000 * (1 + rng.below(600)) as i64;
        let f = std::fs::OpenOptions::new()
            .append(true)
            .open(path)
            .expect("open rollout");
        total_bytes += f.metadata().map(|m| m.len()).unwrap_or(0);
        f.set_modified(SystemTime::UNIX_EPOCH + Duration::from_millis(touched as u64))
            .expect("set mtime");
    }
    println!(
        "generated {THREADS} threads ({:.1} MB of rollouts, {} day directories) in {:.2} s",
        total_bytes as f64 / 1e6,
        THREADS / PER_DAY,
        generate.as_secs_f64()
    );

    let mut rebuilds = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        let n = store.rebuild_index().expect("rebuild");
        rebuilds.push(t.elapsed());
        assert_eq!(n, THREADS);
    }
    let median_rebuild = percentile(&mut rebuilds, 0.5);
    println!(
        "{:<44} {:>8.1} ms (median of 3)",
        "full index rebuild (10k rollouts)",
        median_rebuild.as_secs_f64() * 1e3
    );

    measure("list first page (25, updated_at desc)", || {
        store.list(&ListQuery::default()).expect("list").data.len()
    });
    measure("list first page (25, created_at asc)", || {
        let q = ListQuery {
            sort_key: SortKey::CreatedAt,
            descending: false,
            ..ListQuery::default()
        };
        store.list(&q).expect("list").data.len()
    });
    let mut deep = ListQuery::default();
    for _ in 0..40 {
        deep.cursor = store.list(&deep).expect("list").next_cursor;
    }
    measure("list page 41 via cursor", || {
        store.list(&deep).expect("list").data.len()
    });
    measure("search common term (\"parser\")", || {
        let q = ListQuery {
            search: Some("parser".into()),
            ..ListQuery::default()
        };
        store.list(&q).expect("search").data.len()
    });
    measure("search rare term (\"task 9999)\")", || {
        let q = ListQuery {
            search: Some("task 9999)".into()),
            ..ListQuery::default()
        };
        store.list(&q).expect("search").data.len()
    });
    measure("search with no match", || {
        let q = ListQuery {
            search: Some("no such words anywhere".into()),
            ..ListQuery::default()
        };
        store.list(&q).expect("search").data.len()
    });
    measure("filtered list (cwd + provider + source)", || {
        let q = ListQuery {
            cwd: Some(vec![cwds[3].clone()]),
            model_providers: Some(vec!["ollama".into()]),
            sources: Some(vec![SessionSource::Cli, SessionSource::Exec]),
            ..ListQuery::default()
        };
        store.list(&q).expect("filtered").data.len()
    });
    let some_id = store.list(&ListQuery::default()).expect("list").data[7].id;
    measure("load one thread (all records)", || {
        store.load(&some_id).expect("load").items.len()
    });
    drop(store);

    let mut opens = Vec::new();
    for _ in 0..10 {
        let t = Instant::now();
        let s = ThreadStore::open(home).expect("open");
        opens.push(t.elapsed());
        drop(s);
    }
    let p50 = percentile(&mut opens, 0.5);
    println!(
        "{:<44} {:>8.3} ms (p50 of 10)",
        "open() with a fresh index",
        p50.as_secs_f64() * 1e3
    );

    for name in ["state.sqlite", "state.sqlite-wal", "state.sqlite-shm"] {
        let _ = std::fs::remove_file(home.join(name));
    }
    let t = Instant::now();
    let s = ThreadStore::open(home).expect("open");
    println!(
        "{:<44} {:>8.1} ms",
        "open() with the index deleted (rebuilds)",
        t.elapsed().as_secs_f64() * 1e3
    );
    assert_eq!(
        s.list(&ListQuery {
            limit: 100,
            ..ListQuery::default()
        })
        .expect("list")
        .data
        .len(),
        100
    );
}
