//! Benchmarks of the v2 API through a real server process over stdio (this binary re-runs
//! itself with `--serve HOME` as the server, so no release build of the CLI is needed):
//!
//! * `thread/list` first page over 10,000 stored threads (target < 50 ms);
//! * `fuzzyFileSearch` over a generated 100,000-file tree, p50 of a 3-letter and an
//!   8-letter query, warm (target < 100 ms), side by side with `codex app-server` when
//!   `CODEX_BIN` points at a codex binary (e.g. `@openai/codex@0.169.0` from npm).
//!
//! * `interpreter app-server` (the v2 methods without MCP): `initialize` answered after
//!   spawn (target < 5 ms), and `thread/turns/list` / `thread/items/list` first page over a
//!   1,000-turn thread (target < 10 ms), cold (the first read of the thread in a new server
//!   process) and warm (the thread read before).
//!
//! * `loaded`: 2,000 threads started on one `interpreter app-server`, with the server's OS
//!   thread count (`/proc/<pid>/status`) as they load: it must stay flat.
//! * `resume`: `thread/resume` of a 2,000-turn thread (made through the v2 API against the
//!   scripted mock: a `shell` call and an answer per turn) in a new server process, with and
//!   without its turns, against a `cat` of its rollout.
//!
//! `cargo bench -p oi-app-server --bench v2`. Env: `OI_BENCH_TREE` (where the tree is
//! generated; default a directory under the temp dir, reused across runs),
//! `OI_BENCH_RUNS` (timed requests per case, default 20), `OI_BENCH_ONLY` (one of
//! `app-server`, `thread-list`, `fuzzy`, `loaded`, `resume`), `OI_BENCH_HOME` (`resume`:
//! keep the long thread's home there and reuse it on the next run).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use oi_app_server::AppServerContext;
use oi_host::{HostOptions, ServiceContext, Services};
use oi_thread_store::{RolloutItem, SessionMeta, SessionSource, ThreadStore};
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

const THREADS: usize = 10_000;
const WORDS: [&str; 10] = [
    "controller",
    "handler",
    "service",
    "model",
    "view",
    "router",
    "config",
    "utils",
    "parser",
    "client",
];

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("--serve") {
        serve(PathBuf::from(&args[2]));
        return;
    }
    if args.get(1).map(String::as_str) == Some("--serve-app") {
        serve_app(PathBuf::from(&args[2]));
        return;
    }
    let runs: usize = std::env::var("OI_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20);
    let only = std::env::var("OI_BENCH_ONLY").ok();
    let wanted = |name: &str| only.as_deref().is_none_or(|o| o == name);
    if wanted("app-server") {
        bench_app_server(runs);
    }
    if wanted("thread-list") {
        bench_thread_list(runs);
    }
    if wanted("fuzzy") {
        bench_fuzzy(runs);
    }
    if wanted("loaded") {
        bench_loaded_threads();
    }
    if wanted("resume") {
        bench_resume(runs);
    }
}

/// A config whose model nobody answers: enough for methods that reach no model.
const NO_MODEL_CONFIG: &str = "model = \"mock-model\"\nmodel_provider = \"mock\"\n[model_providers.mock]\nname = \"Mock\"\nbase_url = \"http://127.0.0.1:9/v1\"\n";

/// The OS threads of process `pid` now.
fn os_threads(pid: u32) -> usize {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse().ok())
        .expect("Threads line")
}

/// 2,000 threads loaded on one server: its OS threads as they load.
fn bench_loaded_threads() {
    const LOADED: usize = 2_000;
    let home = tempfile::tempdir().expect("home");
    std::fs::write(home.path().join("config.toml"), NO_MODEL_CONFIG).expect("config");
    let exe = std::env::current_exe().expect("bench exe");
    let mut cmd = Command::new(&exe);
    cmd.arg("--serve-app").arg(home.path());
    let mut peer = Peer::spawn(cmd, false);
    let pid = peer.child.id();
    peer.call("thread/list", json!({"limit": 1}));
    let mut counts = vec![(0, os_threads(pid))];
    let mut starts = Vec::with_capacity(LOADED);
    let t = Instant::now();
    for i in 1..=LOADED {
        let (r, took) = peer.call(
            "thread/start",
            json!({"cwd": home.path(), "approvalPolicy": "never"}),
        );
        assert!(r["thread"]["id"].is_string(), "{r}");
        starts.push(took);
        if [100, 250, 500, 1000, 1500, 2000].contains(&i) {
            counts.push((i, os_threads(pid)));
        }
    }
    let total = t.elapsed();
    let (loaded, _) = peer.call("thread/loaded/list", json!({}));
    assert_eq!(
        loaded["data"].as_array().map(Vec::len),
        Some(LOADED),
        "{loaded}"
    );
    println!(
        "loaded threads: {LOADED} thread/start on one server in {:.1} s, each {}",
        total.as_secs_f64(),
        stats(starts)
    );
    let shown: Vec<String> = counts
        .iter()
        .map(|(n, threads)| format!("{n} loaded: {threads}"))
        .collect();
    println!("  server OS threads  {}", shown.join(", "));
}

const LONG_TURNS: usize = 2_000;

/// A thread of `LONG_TURNS` turns made through the v2 API against the scripted mock (a
/// `shell` call running `true`, then an answer, per turn); returns its id and rollout. The
/// window is set large enough that the thread is never compacted. A home that has it
/// already (`OI_BENCH_HOME`, from an earlier run) is reused.
fn long_thread(home: &Path) -> (String, PathBuf) {
    use oi_test_support::{MockModelServer, MockScript, MockTurn};
    let marker = home.join("bench-thread");
    if let Ok(text) = std::fs::read_to_string(&marker)
        && let Some((id, path)) = text.trim().split_once('\t')
    {
        return (id.to_string(), PathBuf::from(path));
    }
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let mock = rt
        .block_on(MockModelServer::start(MockScript::cycle(vec![
            MockTurn::tool_call("shell", json!({"command": ["true"]})).into(),
            MockTurn::text("Ran it; the tests pass and nothing else changed.").into(),
        ])))
        .expect("mock");
    std::fs::write(
        home.join("config.toml"),
        format!(
            "model_context_window = 100000000\n{}",
            mock.config_toml("mock", oi_protocol::config_types::WireApi::Chat)
        ),
    )
    .expect("config");
    let exe = std::env::current_exe().expect("bench exe");
    let mut cmd = Command::new(&exe);
    cmd.arg("--serve-app").arg(home);
    let mut peer = Peer::spawn(cmd, false);
    let (started, _) = peer.call(
        "thread/start",
        json!({"cwd": home, "approvalPolicy": "never", "sandbox": "danger-full-access"}),
    );
    let id = started["thread"]["id"].as_str().expect("id").to_string();
    let path = PathBuf::from(started["thread"]["path"].as_str().expect("path"));
    let t = Instant::now();
    for i in 0..LONG_TURNS {
        peer.call(
            "turn/start",
            json!({"threadId": id, "input": [
                {"type": "text", "text": format!("step {i}: run the tests and fix what fails")}
            ]}),
        );
        peer.wait_for("turn/completed");
    }
    drop(peer);
    println!(
        "resume: made a {LONG_TURNS}-turn thread through the v2 API in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    // The server is gone; the config stays (a resume only loads it).
    drop(mock);
    std::fs::write(&marker, format!("{id}\t{}", path.display())).expect("marker");
    (id, path)
}

/// `thread/resume` of a long thread in a new server, against `cat` of its rollout.
fn bench_resume(runs: usize) {
    let temp = tempfile::tempdir().expect("home");
    let home = match std::env::var("OI_BENCH_HOME") {
        Ok(h) => {
            std::fs::create_dir_all(&h).expect("home");
            PathBuf::from(h)
        }
        Err(_) => temp.path().to_path_buf(),
    };
    let (id, path) = long_thread(&home);
    let size = std::fs::metadata(&path).expect("rollout").len();
    println!(
        "resume: rollout of {} records, {:.1} MiB",
        std::fs::read_to_string(&path)
            .expect("rollout")
            .lines()
            .count(),
        size as f64 / (1 << 20) as f64
    );
    let cat: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            let out = Command::new("cat").arg(&path).output().expect("cat");
            assert_eq!(out.stdout.len() as u64, size);
            t.elapsed()
        })
        .collect();
    println!("  cat of the rollout                       {}", stats(cat));
    let exe = std::env::current_exe().expect("bench exe");
    for (what, exclude) in [("with its turns", false), ("excludeTurns", true)] {
        let mut times = Vec::new();
        for _ in 0..runs.clamp(1, 10) {
            let mut cmd = Command::new(&exe);
            cmd.arg("--serve-app").arg(&home);
            let mut peer = Peer::spawn(cmd, false);
            peer.call("thread/list", json!({"limit": 1}));
            let (r, t) = peer.call(
                "thread/resume",
                json!({"threadId": id, "excludeTurns": exclude}),
            );
            let turns = r["thread"]["turns"].as_array().map_or(0, Vec::len);
            assert_eq!(turns, if exclude { 0 } else { LONG_TURNS }, "{what}");
            times.push(t);
        }
        println!("  thread/resume, {what:<15} (new process) {}", stats(times));
    }
}

/// `interpreter app-server`'s connection: the v2 methods without MCP, as the CLI assembles it.
fn serve_app(home: PathBuf) {
    let options = HostOptions {
        home: Some(home),
        ..HostOptions::new(SessionSource::AppServer)
    };
    let services = Services::new(|ctx: &ServiceContext| {
        oi_app_server::methods(AppServerContext::new(ctx, oi_jsonrpc::MethodTable::new()))
    });
    serve_stdio(options, services);
}

/// Serves stdin/stdout on the host until input ends, then exits with its code.
fn serve_stdio(options: HostOptions, services: Services) {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let code = rt.block_on(oi_host::serve_stream(
        options,
        tokio::io::stdin(),
        tokio::io::stdout(),
        tokio_util::sync::CancellationToken::new(),
        services,
    ));
    std::process::exit(code);
}

const TURNS: usize = 1_000;

/// A stored thread of `TURNS` turns (input, a command, an answer each); returns its id.
fn thousand_turn_thread(home: &Path) -> String {
    use oi_protocol::protocol::{
        AgentMessageEvent, EventMsg, TaskCompleteEvent, TaskStartedEvent, UserMessageEvent,
    };
    let store = ThreadStore::open(home).expect("store");
    let meta = SessionMeta::new("/work/project", "mock", "mock-model", SessionSource::Mcp);
    let mut w = store.create(meta).expect("create");
    for i in 0..TURNS {
        let turn_id = format!("turn-{i:04}");
        let items = [
            EventMsg::UserMessage(UserMessageEvent {
                message: format!("task {i}: fix the {} module", WORDS[i % 10]),
                images: None,
                local_images: Vec::new(),
                text_elements: Vec::new(),
            }),
            EventMsg::TaskStarted(TaskStartedEvent {
                turn_id: turn_id.clone(),
                started_at: None,
                model_context_window: None,
                model_context_window_source: None,
                collaboration_mode_kind: "default".into(),
            }),
            EventMsg::AgentMessage(AgentMessageEvent {
                message: format!("fixed the {} module; all tests pass", WORDS[i % 10]),
                phase: None,
                memory_citation: None,
            }),
            EventMsg::TaskComplete(TaskCompleteEvent {
                turn_id,
                last_agent_message: None,
                completed_at: None,
                duration_ms: Some(1200),
            }),
        ];
        for m in items {
            w.append(&RolloutItem::EventMsg(m)).expect("append");
        }
    }
    w.flush_index().expect("flush");
    w.thread_id().to_string()
}

fn bench_app_server(runs: usize) {
    let home = tempfile::tempdir().expect("home");
    std::fs::write(
        home.path().join("config.toml"),
        "model = \"mock-model\"\nmodel_provider = \"mock\"\n[model_providers.mock]\nname = \"Mock\"\nbase_url = \"http://127.0.0.1:9/v1\"\n",
    )
    .expect("config");
    let exe = std::env::current_exe().expect("bench exe");
    let mut init = Vec::new();
    for _ in 0..runs.min(20) {
        let mut cmd = Command::new(&exe);
        cmd.arg("--serve-app").arg(home.path());
        let t = Instant::now();
        let peer = Peer::spawn(cmd, false);
        init.push(t.elapsed());
        drop(peer);
    }
    println!("app-server: spawn → initialize answered  {}", stats(init));

    let thread_id = thousand_turn_thread(home.path());
    store_reads(home.path(), &thread_id, runs);
    let turns_page = json!({"threadId": thread_id, "limit": 25});
    let items_page = json!({"threadId": thread_id, "limit": 50});
    for (method, params, size) in [
        ("thread/turns/list", &turns_page, 25),
        ("thread/items/list", &items_page, 50),
    ] {
        // Cold: a new server process each time, so nothing of the thread is cached; the
        // store is opened first (thread/list), so the time is the history read alone.
        let mut cold = Vec::new();
        for _ in 0..runs.clamp(1, 10) {
            let mut cmd = Command::new(&exe);
            cmd.arg("--serve-app").arg(home.path());
            let mut peer = Peer::spawn(cmd, false);
            peer.call("thread/list", json!({"limit": 1}));
            let (page, t) = peer.call(method, params.clone());
            assert_eq!(page["data"].as_array().map(Vec::len), Some(size));
            cold.push(t);
        }
        println!(
            "{method} first page ({size}) of {TURNS} turns, cold (new process)  {}",
            stats(cold)
        );
        let mut cmd = Command::new(&exe);
        cmd.arg("--serve-app").arg(home.path());
        let mut peer = Peer::spawn(cmd, false);
        peer.call(method, params.clone());
        let warm: Vec<Duration> = (0..runs)
            .map(|_| peer.call(method, params.clone()).1)
            .collect();
        println!(
            "{method} first page ({size}) of {TURNS} turns, warm            {}",
            stats(warm)
        );
    }
}

/// In-process, the two ways to read the newest 25 turns of the thread: the whole thread
/// parsed (`load` + `turns`, what history pages did first) and its outline with only the
/// page's turns parsed (what they do now).
fn store_reads(home: &Path, thread_id: &str, runs: usize) {
    let store = ThreadStore::open(home).expect("store");
    let id: oi_protocol::ThreadId = thread_id.parse().expect("thread id");
    let mut whole = Vec::new();
    let mut outlined = Vec::new();
    for _ in 0..runs {
        let t = Instant::now();
        // The store sees each user message, recorded just before its turn's task_started,
        // as a turn of its own (the v2 layer merges the two): 2 store turns per turn.
        let turns = store.load(&id).expect("load").turns();
        assert_eq!(turns.len(), 2 * TURNS);
        whole.push(t.elapsed());
        let t = Instant::now();
        let outline = store.outline(&id).expect("outline");
        let spans = outline.turns();
        let page: Vec<_> = spans[spans.len() - 50..]
            .iter()
            .map(|s| outline.stored_turn(s))
            .collect();
        assert_eq!(page.len(), 50);
        outlined.push(t.elapsed());
    }
    println!(
        "store: whole {TURNS}-turn thread parsed (load + turns)      {}",
        stats(whole)
    );
    println!(
        "store: outline + the newest 25 turns parsed              {}",
        stats(outlined)
    );
}

/// `interpreter mcp-server`'s connection: the MCP tools and the v2 and v1 methods.
fn serve(home: PathBuf) {
    let options = HostOptions {
        home: Some(home),
        ..HostOptions::new(SessionSource::Mcp)
    };
    let services = Services::new(|ctx: &ServiceContext| {
        let mcp = oi_mcp_server::methods(ctx);
        let mut table = mcp.clone();
        table.merge(oi_app_server::methods(AppServerContext::new(ctx, mcp)));
        table
    });
    serve_stdio(options, services);
}

/// A JSONL client of a server process.
struct Peer {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    jsonrpc: bool,
    next_id: i64,
}

impl Peer {
    fn ours(home: &Path) -> Peer {
        let exe = std::env::current_exe().expect("bench exe");
        let mut cmd = Command::new(exe);
        cmd.arg("--serve").arg(home);
        Peer::spawn(cmd, true)
    }

    fn codex(bin: &str, home: &Path) -> Peer {
        let mut cmd = Command::new(bin);
        cmd.arg("app-server").env("CODEX_HOME", home);
        Peer::spawn(cmd, false)
    }

    fn spawn(mut cmd: Command, jsonrpc: bool) -> Peer {
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn server");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut p = Peer {
            child,
            stdin,
            stdout,
            jsonrpc,
            next_id: 0,
        };
        let init = if jsonrpc {
            json!({"protocolVersion": "2025-06-18", "capabilities": {},
                   "clientInfo": {"name": "bench", "version": "1"}})
        } else {
            json!({"clientInfo": {"name": "bench", "version": "1"}})
        };
        p.call("initialize", init);
        let method = if jsonrpc {
            "notifications/initialized"
        } else {
            "initialized"
        };
        p.send(json!({"method": method}));
        p
    }

    fn send(&mut self, mut v: Value) {
        if self.jsonrpc {
            v["jsonrpc"] = json!("2.0");
        }
        let mut line = serde_json::to_vec(&v).expect("json");
        line.push(b'\n');
        self.stdin.write_all(&line).expect("write");
        self.stdin.flush().expect("flush");
    }

    /// Reads messages until a notification of `method`; returns its params.
    fn wait_for(&mut self, method: &str) -> Value {
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).expect("read");
            assert!(n > 0, "server closed its output waiting for {method}");
            let v: Value = serde_json::from_str(&line).expect("json line");
            if v["method"] == method {
                return v["params"].clone();
            }
            assert!(
                v.get("id").is_none() || v.get("method").is_none(),
                "a request: {v}"
            );
        }
    }

    /// Sends a request and waits for its response; returns it and the round-trip time.
    fn call(&mut self, method: &str, params: Value) -> (Value, Duration) {
        self.next_id += 1;
        let id = self.next_id;
        let t = Instant::now();
        self.send(json!({"id": id, "method": method, "params": params}));
        loop {
            let mut line = String::new();
            let n = self.stdout.read_line(&mut line).expect("read");
            assert!(n > 0, "server closed its output during {method}");
            let v: Value = serde_json::from_str(&line).expect("json line");
            if v["id"] == id && v.get("method").is_none() {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return (v["result"].clone(), t.elapsed());
            }
        }
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn stats(mut d: Vec<Duration>) -> String {
    d.sort();
    let ms = |x: Duration| x.as_secs_f64() * 1000.0;
    let p = |q: f64| ms(d[((d.len() as f64 - 1.0) * q).round() as usize]);
    format!(
        "p50 {:7.2} ms  p95 {:7.2} ms  min {:7.2} ms  (n={})",
        p(0.5),
        p(0.95),
        ms(d[0]),
        d.len()
    )
}

fn bench_thread_list(runs: usize) {
    let home = tempfile::tempdir().expect("home");
    let t = Instant::now();
    let store = ThreadStore::open(home.path()).expect("store");
    for i in 0..THREADS {
        let meta = SessionMeta::new(
            format!("/work/project-{}", i % 50),
            "mock",
            "mock-model",
            SessionSource::Mcp,
        );
        let mut w = store.create(meta).expect("create");
        let msg =
            oi_protocol::protocol::EventMsg::UserMessage(oi_protocol::protocol::UserMessageEvent {
                message: format!("task number {i}: fix the {} module", WORDS[i % 10]),
                images: None,
                local_images: Vec::new(),
                text_elements: Vec::new(),
            });
        w.append(&RolloutItem::EventMsg(msg)).expect("append");
        w.flush_index().expect("flush");
    }
    drop(store);
    println!(
        "thread/list: generated {THREADS} stored threads in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    std::fs::write(
        home.path().join("config.toml"),
        "model = \"mock-model\"\nmodel_provider = \"mock\"\n[model_providers.mock]\nname = \"Mock\"\nbase_url = \"http://127.0.0.1:9/v1\"\n",
    )
    .expect("config");
    let mut peer = Peer::ours(home.path());
    let (first, cold) = peer.call("thread/list", json!({}));
    assert_eq!(first["data"].as_array().map(Vec::len), Some(25));
    let cursor = first["nextCursor"].clone();
    let mut page1 = Vec::new();
    let mut page2 = Vec::new();
    let mut search = Vec::new();
    for _ in 0..runs {
        page1.push(peer.call("thread/list", json!({})).1);
        page2.push(peer.call("thread/list", json!({"cursor": cursor})).1);
        search.push(
            peer.call("thread/list", json!({"searchTerm": "router", "limit": 25}))
                .1,
        );
    }
    println!(
        "thread/list over {THREADS} threads: first call right after initialize {:.2} ms (waits for the store to open)",
        cold.as_secs_f64() * 1000.0
    );
    // The server opens the store in the background when the connection starts.
    let mut later = Peer::ours(home.path());
    std::thread::sleep(Duration::from_secs(1));
    let (_, first_later) = later.call("thread/list", json!({}));
    println!(
        "  first call 1 s after start            {:.2} ms",
        first_later.as_secs_f64() * 1000.0
    );
    drop(later);
    println!("  first page (25)        {}", stats(page1));
    println!("  second page (cursor)   {}", stats(page2));
    println!("  searchTerm page        {}", stats(search));
}

/// 50 × 20 directories × 100 files = 100,000 files, generated once.
fn tree() -> PathBuf {
    let root = std::env::var("OI_BENCH_TREE")
        .map(PathBuf::from)
        .unwrap_or_else(|_| std::env::temp_dir().join("oi-bench-tree-100k"));
    let marker = root.join(".complete");
    if marker.exists() {
        return root;
    }
    let t = Instant::now();
    for a in 0..50 {
        for b in 0..20 {
            let dir = root
                .join(format!("{}_{a}", WORDS[a % 10]))
                .join(format!("{}_{b}", WORDS[(a + b) % 10]));
            std::fs::create_dir_all(&dir).expect("mkdir");
            for c in 0..100 {
                let ext = ["rs", "ts", "py", "md"][c % 4];
                let name = format!("{}_{c}.{ext}", WORDS[(a * 7 + b * 3 + c) % 10]);
                std::fs::write(dir.join(name), b"").expect("write");
            }
        }
    }
    std::fs::write(&marker, b"").expect("marker");
    println!(
        "fuzzyFileSearch: generated 100,000 files in {:.1} s at {}",
        t.elapsed().as_secs_f64(),
        root.display()
    );
    root
}

fn fuzzy_case(peer: &mut Peer, root: &str, query: &str, runs: usize) -> (Vec<Duration>, usize) {
    let params = json!({"query": query, "roots": [root]});
    let mut hits = 0;
    for _ in 0..3 {
        hits = peer.call("fuzzyFileSearch", params.clone()).0["files"]
            .as_array()
            .map(Vec::len)
            .unwrap_or(0);
    }
    let times = (0..runs)
        .map(|_| peer.call("fuzzyFileSearch", params.clone()).1)
        .collect();
    (times, hits)
}

fn bench_fuzzy(runs: usize) {
    let root = tree();
    let root_s = root.to_string_lossy().to_string();
    let home = tempfile::tempdir().expect("home");
    let mut ours = Peer::ours(home.path());
    let codex_bin = std::env::var("CODEX_BIN").ok();
    let codex_home = tempfile::tempdir().expect("codex home");
    let mut codex = codex_bin
        .as_deref()
        .map(|b| Peer::codex(b, codex_home.path()));
    for query in ["cfg", "ctrlview"] {
        let (ours_t, ours_hits) = fuzzy_case(&mut ours, &root_s, query, runs);
        let ours_p50 = median(&ours_t);
        println!(
            "fuzzyFileSearch {query:>9} ({} letters)  ours:  {}  hits {ours_hits}",
            query.len(),
            stats(ours_t)
        );
        if let Some(codex) = codex.as_mut() {
            let (codex_t, codex_hits) = fuzzy_case(codex, &root_s, query, runs);
            let codex_p50 = median(&codex_t);
            println!(
                "fuzzyFileSearch {query:>9} ({} letters)  codex: {}  hits {codex_hits}",
                query.len(),
                stats(codex_t)
            );
            println!(
                "  ratio codex/ours (p50): {:.2}x",
                codex_p50.as_secs_f64() / ours_p50.as_secs_f64()
            );
        }
    }
    if codex.is_none() {
        println!("(set CODEX_BIN to a `codex` binary for the side-by-side comparison)");
    }
}

fn median(d: &[Duration]) -> Duration {
    let mut v = d.to_vec();
    v.sort();
    v[v.len() / 2]
}
