//! The v2 API over WebSocket beside stdio (`cargo bench -p oi-cli --bench ws`): the real
//! `interpreter app-server` against the scripted mock model on loopback.
//!
//! * turn latency on one connection: `turn/start` sent → `turn/completed` read, for a text
//!   turn, over `--listen ws://127.0.0.1:0` and over stdio;
//! * 100 connections at once over WebSocket: each connects, initializes, starts a thread
//!   and runs one turn; the wall time of all of them and each one's turn latency.
//!
//! Env: `OI_BENCH_RUNS` (turns on the one connection, default 50), `OI_BENCH_CONNECTIONS`
//! (default 100).
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic here is a failed run, with its message

use futures::{SinkExt, StreamExt};
use oi_protocol::config_types::WireApi;
use oi_test_support::{MockModelServer, MockScript, MockTurn};
use serde_json::{Value, json};
use std::path::Path;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;

/// One JSON-RPC line transport: WebSocket text frames or stdio lines.
enum Wire {
    Ws(
        tokio_tungstenite::WebSocketStream<
            tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>,
        >,
    ),
    Stdio {
        stdin: tokio::process::ChildStdin,
        lines: tokio::io::Lines<BufReader<tokio::process::ChildStdout>>,
    },
}

struct Peer {
    wire: Wire,
    next_id: i64,
}

impl Peer {
    async fn send(&mut self, v: Value) {
        match &mut self.wire {
            Wire::Ws(ws) => ws.send(Message::text(v.to_string())).await.unwrap(),
            Wire::Stdio { stdin, .. } => {
                let mut line = v.to_string().into_bytes();
                line.push(b'\n');
                stdin.write_all(&line).await.unwrap();
                stdin.flush().await.unwrap();
            }
        }
    }

    async fn recv(&mut self) -> Value {
        loop {
            match &mut self.wire {
                Wire::Ws(ws) => match ws.next().await.unwrap().unwrap() {
                    Message::Text(t) => return serde_json::from_str(&t).unwrap(),
                    _ => continue,
                },
                Wire::Stdio { lines, .. } => {
                    let line = lines
                        .next_line()
                        .await
                        .unwrap()
                        .expect("server output ended");
                    return serde_json::from_str(&line).unwrap();
                }
            }
        }
    }

    async fn call(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"id": id, "method": method, "params": params}))
            .await;
        loop {
            let v = self.recv().await;
            if v["id"] == id && v.get("method").is_none() {
                assert!(v.get("error").is_none(), "{method}: {v}");
                return v["result"].clone();
            }
        }
    }

    /// initialize + thread/start; returns the thread id.
    async fn open_thread(&mut self, cwd: &Path) -> String {
        self.call(
            "initialize",
            json!({"clientInfo": {"name": "bench", "version": "0"},
                   "capabilities": {"experimentalApi": true,
                                    "optOutNotificationMethods": ["item/agentMessage/delta"]}}),
        )
        .await;
        self.send(json!({"method": "initialized"})).await;
        let started = self.call("thread/start", json!({"cwd": cwd})).await;
        started["thread"]["id"].as_str().unwrap().to_string()
    }

    /// One text turn: `turn/start` sent → its `turn/completed` read.
    async fn turn(&mut self, thread: &str) -> Duration {
        let t0 = Instant::now();
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"id": id, "method": "turn/start",
                         "params": {"threadId": thread, "input": [{"type": "text", "text": "hi"}]}}))
            .await;
        loop {
            let v = self.recv().await;
            if v["method"] == "turn/completed" {
                return t0.elapsed();
            }
        }
    }
}

fn stats(mut v: Vec<Duration>) -> String {
    v.sort();
    let p = |q: f64| v[((v.len() as f64 - 1.0) * q).round() as usize];
    format!(
        "p50 {:>7.2} ms · p95 {:>7.2} ms · max {:>7.2} ms ({} samples)",
        p(0.5).as_secs_f64() * 1e3,
        p(0.95).as_secs_f64() * 1e3,
        p(1.0).as_secs_f64() * 1e3,
        v.len()
    )
}

struct Env {
    home: tempfile::TempDir,
    work: tempfile::TempDir,
    _mock: MockModelServer,
}

async fn env() -> Env {
    let mock = MockModelServer::start(MockScript::always(MockTurn::text("ok")))
        .await
        .unwrap();
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let config = format!(
        "approval_policy = \"never\"\n{}",
        mock.config_toml("mock", WireApi::Chat)
    );
    std::fs::write(home.path().join("config.toml"), config).unwrap();
    Env {
        home,
        work,
        _mock: mock,
    }
}

fn server(env: &Env, args: &[&str]) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(env!("CARGO_BIN_EXE_interpreter"));
    cmd.args(["app-server"])
        .args(args)
        .current_dir(env.work.path())
        .env("OPENINTERPRETER_HOME", env.home.path())
        .env_remove("RUST_LOG")
        .kill_on_drop(true);
    cmd
}

/// `interpreter app-server --listen ws://127.0.0.1:0`; returns the child, its URL and token.
async fn ws_server(env: &Env) -> (tokio::process::Child, String, String) {
    let mut cmd = server(env, &["--listen", "ws://127.0.0.1:0"]);
    cmd.stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let url = loop {
        let line = lines
            .next_line()
            .await
            .unwrap()
            .expect("no `listening on` line");
        if let Some(url) = line.trim().strip_prefix("listening on ") {
            break url.to_string();
        }
    };
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    let token = std::fs::read_to_string(env.home.path().join("listen-token")).unwrap();
    (child, url, token.trim().to_string())
}

async fn connect(url: &str, token: &str) -> Peer {
    let mut req = url.into_client_request().unwrap();
    req.headers_mut()
        .insert("authorization", format!("Bearer {token}").parse().unwrap());
    let (ws, _) = tokio_tungstenite::connect_async(req).await.unwrap();
    Peer {
        wire: Wire::Ws(ws),
        next_id: 0,
    }
}

async fn turns_on_one_connection(peer: &mut Peer, cwd: &Path, runs: usize) -> Vec<Duration> {
    let thread = peer.open_thread(cwd).await;
    // The first turn warms the model client's connection pool; it is not counted.
    peer.turn(&thread).await;
    let mut out = Vec::with_capacity(runs);
    for _ in 0..runs {
        out.push(peer.turn(&thread).await);
    }
    out
}

fn main() {
    let runs: usize = std::env::var("OI_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(50);
    let connections: usize = std::env::var("OI_BENCH_CONNECTIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let env = env().await;
        let cwd = env.work.path().to_path_buf();

        // stdio
        let mut child = server(&env, &[])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let mut peer = Peer {
            wire: Wire::Stdio {
                stdin: child.stdin.take().unwrap(),
                lines: BufReader::new(child.stdout.take().unwrap()).lines(),
            },
            next_id: 0,
        };
        let stdio = turns_on_one_connection(&mut peer, &cwd, runs).await;
        println!("text turn, stdio:                  {}", stats(stdio));
        drop(peer);
        drop(child);

        // WebSocket, one connection
        let (_server, url, token) = ws_server(&env).await;
        let mut peer = connect(&url, &token).await;
        let ws = turns_on_one_connection(&mut peer, &cwd, runs).await;
        println!("text turn, WebSocket:              {}", stats(ws));
        drop(peer);

        // WebSocket, many connections at once
        let t0 = Instant::now();
        let mut tasks = Vec::new();
        for _ in 0..connections {
            let (url, token, cwd) = (url.clone(), token.clone(), cwd.clone());
            tasks.push(tokio::spawn(async move {
                let start = Instant::now();
                let mut peer = connect(&url, &token).await;
                let thread = peer.open_thread(&cwd).await;
                let opened = start.elapsed();
                let turn = peer.turn(&thread).await;
                (opened, turn)
            }));
        }
        let mut opened = Vec::new();
        let mut turns = Vec::new();
        for t in tasks {
            let (o, turn) = t.await.unwrap();
            opened.push(o);
            turns.push(turn);
        }
        let wall = t0.elapsed();
        println!(
            "{connections} WebSocket connections at once: all done in {:.0} ms",
            wall.as_secs_f64() * 1e3
        );
        println!("  connect + initialize + thread/start: {}", stats(opened));
        println!("  their text turn:                     {}", stats(turns));
    });
}
