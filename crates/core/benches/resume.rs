//! Resuming a long stored thread (`cargo bench -p oi-core --bench resume`), against a `cat`
//! of its rollout: the floor any resume pays to read the bytes.
//!
//! The thread is made by the engine itself against the scripted mock (2,000 turns, each a
//! `shell` call running `true` and an answer: turn context, messages, the call and its
//! output, the command's end, token counts, the turn's end), so its records are what a real
//! session writes. Reports, p50 / p95 over `OI_BENCH_RUNS` (default 20):
//!
//! * `cat` of the rollout (a process, its output read through a pipe) and the file read in
//!   process;
//! * the store alone: `load_async` (every record parsed), and `resume_async` + `close_async`
//!   (the writer's lock taken and given back besides);
//! * the engine: `ThreadManager::resume_thread` on a manager whose store is open (a live
//!   thread with the whole history, ready for its next turn), then shut down untimed.
//!
//! Env: `OI_BENCH_TURNS` (default 2000), `OI_BENCH_HOME` (keep the generated home there and
//! reuse it on the next run, e.g. under a profiler), `OI_BENCH_ONLY=engine` (only the engine
//! resume, e.g. `OI_BENCH_RUNS=3` under `valgrind --tool=callgrind`).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use oi_core::{ThreadManager, ThreadManagerOptions};
use oi_protocol::ThreadId;
use oi_protocol::config_types::WireApi;
use oi_protocol::protocol::{EventMsg, Op, TurnOverrides};
use oi_protocol::user_input::UserInput;
use oi_test_support::{MockModelServer, MockScript, MockTurn};
use oi_thread_store::ThreadStore;
use serde_json::json;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn stats(mut d: Vec<Duration>) -> (f64, String) {
    d.sort();
    let ms = |x: Duration| x.as_secs_f64() * 1000.0;
    let p = |q: f64| ms(d[((d.len() as f64 - 1.0) * q).round() as usize]);
    (
        p(0.5),
        format!(
            "p50 {:8.2} ms  p95 {:8.2} ms  (n={})",
            p(0.5),
            p(0.95),
            d.len()
        ),
    )
}

async fn run_turn(thread: &oi_core::Thread, prompt: &str) {
    let mut events = thread.subscribe();
    let id = thread
        .submit(Op::UserInput {
            items: vec![UserInput::text(prompt)],
            overrides: TurnOverrides::default(),
        })
        .await
        .expect("submit");
    loop {
        let ev = events.next().await.expect("event");
        match ev.msg {
            EventMsg::TaskComplete(_) if ev.id == id => return,
            EventMsg::Error(e) => panic!("turn failed: {}", e.message),
            _ => {}
        }
    }
}

fn config(home: &Path) -> oi_config::Config {
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

/// The thread of `home/bench-thread`, made by the engine when it is not there yet.
async fn long_thread(home: &Path, turns: usize) -> (ThreadId, PathBuf) {
    let marker = home.join("bench-thread");
    if let Ok(text) = std::fs::read_to_string(&marker)
        && let Some((id, path)) = text.trim().split_once('\t')
    {
        return (id.parse().expect("thread id"), PathBuf::from(path));
    }
    let mock = MockModelServer::start(MockScript::cycle(vec![
        MockTurn::tool_call("shell", json!({"command": ["true"]})).into(),
        MockTurn::text("Ran it; the tests pass and nothing else changed.").into(),
    ]))
    .await
    .expect("mock");
    // A window large enough that the thread is never compacted.
    std::fs::write(
        home.join("config.toml"),
        format!(
            "model_context_window = 100000000\n{}",
            mock.config_toml("mock", WireApi::Chat)
        ),
    )
    .expect("config");
    let manager = ThreadManager::new(ThreadManagerOptions {
        source: oi_thread_store::SessionSource::Exec,
        persist: true,
    });
    let t = Instant::now();
    let new = manager.start_thread(config(home)).await.expect("thread");
    drop(new.events);
    for i in 0..turns {
        run_turn(
            &new.thread,
            &format!("step {i}: run the tests and fix what fails"),
        )
        .await;
    }
    let path = new.thread.rollout_path().expect("a stored thread");
    manager.shutdown_all().await;
    println!(
        "generated a {turns}-turn thread through the engine in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    std::fs::write(&marker, format!("{}\t{}", new.thread_id, path.display())).expect("marker");
    (new.thread_id, path)
}

#[tokio::main]
async fn main() {
    let runs = env_usize("OI_BENCH_RUNS", 20);
    let turns = env_usize("OI_BENCH_TURNS", 2000);
    let only_engine = std::env::var("OI_BENCH_ONLY").is_ok_and(|o| o == "engine");
    let temp;
    let home = match std::env::var("OI_BENCH_HOME") {
        Ok(h) => {
            std::fs::create_dir_all(&h).expect("home");
            PathBuf::from(h)
        }
        Err(_) => {
            temp = tempfile::tempdir().expect("tempdir");
            temp.path().to_path_buf()
        }
    };
    let (id, path) = long_thread(&home, turns).await;
    let size = std::fs::metadata(&path).expect("rollout").len();
    let lines = std::fs::read_to_string(&path)
        .expect("rollout")
        .lines()
        .count();
    println!(
        "rollout: {turns} turns, {lines} records, {:.1} MiB",
        size as f64 / (1 << 20) as f64
    );
    let cfg = config(&home);

    let mut cat_p50 = None;
    if !only_engine {
        let cat: Vec<Duration> = (0..runs)
            .map(|_| {
                let t = Instant::now();
                let mut child = Command::new("cat")
                    .arg(&path)
                    .stdout(Stdio::piped())
                    .spawn()
                    .expect("cat");
                let mut out = Vec::new();
                child
                    .stdout
                    .take()
                    .expect("stdout")
                    .read_to_end(&mut out)
                    .expect("read");
                child.wait().expect("cat");
                assert_eq!(out.len() as u64, size);
                t.elapsed()
            })
            .collect();
        let (p50, line) = stats(cat);
        cat_p50 = Some(p50);
        println!("cat of the rollout (a process, read through a pipe)   {line}");
        let read: Vec<Duration> = (0..runs)
            .map(|_| {
                let t = Instant::now();
                assert_eq!(std::fs::read(&path).expect("read").len() as u64, size);
                t.elapsed()
            })
            .collect();
        println!(
            "the file read in process                             {}",
            stats(read).1
        );

        let store = ThreadStore::open_with_async(
            &home,
            &oi_thread_store::StoreLocation::Local,
            oi_thread_store::StoreTimeouts::default(),
        )
        .await
        .expect("store");
        let mut load = Vec::new();
        let mut resume = Vec::new();
        for _ in 0..runs {
            let t = Instant::now();
            let loaded = store.load_async(&id).await.expect("load");
            load.push(t.elapsed());
            assert_eq!(loaded.items.len() + 1, lines);
            let t = Instant::now();
            let (writer, loaded) = store.resume_async(&id).await.expect("resume");
            writer.close_async().await.expect("close");
            resume.push(t.elapsed());
            drop(loaded);
        }
        println!(
            "store: load_async (every record parsed)              {}",
            stats(load).1
        );
        println!(
            "store: resume_async + close_async                    {}",
            stats(resume).1
        );
    }

    let mut engine = Vec::new();
    for _ in 0..runs {
        let manager = ThreadManager::new(ThreadManagerOptions {
            source: oi_thread_store::SessionSource::Exec,
            persist: true,
        });
        manager.open_store(&home).await.expect("store");
        let t = Instant::now();
        let new = manager
            .resume_thread(id, cfg.clone())
            .await
            .expect("resume");
        engine.push(t.elapsed());
        assert!(new.thread.history().len() >= 2 * turns);
        drop(new.events);
        manager.shutdown_all().await;
    }
    let (p50, line) = stats(engine);
    println!("engine: ThreadManager::resume_thread                 {line}");
    if let Some(cat) = cat_p50 {
        println!("engine resume / cat: {:.1}×", p50 / cat);
    }
}
