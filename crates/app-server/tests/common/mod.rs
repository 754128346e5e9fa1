//! Test harness: the real server (the host, `oi-host`, serving the MCP tools and the v2
//! methods over the real engine, assembled as `interpreter mcp-server` does) over an
//! in-memory pipe, the scripted mock model on loopback, and a JSON-RPC client that keeps
//! every message it has not consumed yet.
#![allow(unreachable_pub)] // helpers shared by this test crate's modules; a test has no outside
#![allow(dead_code)]

use oi_app_server::AppServerContext;
use oi_host::{Host, HostOptions, ServiceContext, Services};
use oi_test_support::{MockModelServer, MockScript};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

pub const WAIT: Duration = Duration::from_secs(30);

pub struct Env {
    pub tmp: tempfile::TempDir,
    pub home: PathBuf,
    pub work: PathBuf,
    pub model: MockModelServer,
}

impl Env {
    /// A home whose config.toml selects the mock model (`extra` goes first, top level).
    pub async fn new(script: MockScript, extra: &str) -> Env {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        let work = tmp.path().join("work");
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&work).unwrap();
        let work = work.canonicalize().unwrap();
        let model = MockModelServer::start(script).await.unwrap();
        let config = format!(
            "{extra}\n{}",
            model.config_toml("mock", oi_protocol::config_types::WireApi::Chat)
        );
        std::fs::write(home.join("config.toml"), config).unwrap();
        Env {
            tmp,
            home,
            work,
            model,
        }
    }

    pub fn options(&self) -> HostOptions {
        HostOptions {
            home: Some(self.home.clone()),
            ..HostOptions::new(oi_core::SessionSource::Mcp)
        }
    }

    /// A server process's engine: several clients can connect to it ([`Client::on_host`]).
    pub fn host(&self) -> Host {
        Host::new(self.options())
    }

    pub fn client(&self) -> Client {
        Client::start(self.options())
    }

    pub fn config_text(&self) -> String {
        std::fs::read_to_string(self.home.join("config.toml")).unwrap()
    }
}

/// The MCP tools and the v2 and v1 methods on one connection, as the CLI assembles them
/// for `interpreter mcp-server`.
pub fn services() -> Services {
    Services::new(|ctx: &ServiceContext| {
        let mcp = oi_mcp_server::methods(ctx);
        let mut table = mcp.clone();
        table.merge(oi_app_server::methods(AppServerContext::new(ctx, mcp)));
        table
    })
}

pub struct Client {
    writer: Option<WriteHalf<DuplexStream>>,
    reader: BufReader<ReadHalf<DuplexStream>>,
    next_id: i64,
    /// Messages read but not consumed yet, in arrival order.
    pub pending: Vec<Value>,
    /// Every message read, in arrival order.
    pub log: Vec<Value>,
    pub server: JoinHandle<i32>,
}

impl Client {
    /// A client of a server of its own (its engine shuts down when the client hangs up).
    pub fn start(opts: HostOptions) -> Client {
        let (client_side, server_side) = tokio::io::duplex(1 << 20);
        let (sr, sw) = tokio::io::split(server_side);
        let server = tokio::spawn(oi_host::serve_stream(
            opts,
            sr,
            sw,
            CancellationToken::new(),
            services(),
        ));
        Self::over(client_side, server)
    }

    /// One more client of `host`, as a second HTTP session or WebSocket connection is: all
    /// of them see the same live threads.
    pub fn on_host(host: &Host) -> Client {
        let (client_side, server_side) = tokio::io::duplex(1 << 20);
        let (sr, sw) = tokio::io::split(server_side);
        let host = host.clone();
        let server = tokio::spawn(async move {
            host.serve(sr, sw, CancellationToken::new(), &services())
                .await
        });
        Self::over(client_side, server)
    }

    fn over(client_side: DuplexStream, server: JoinHandle<i32>) -> Client {
        let (cr, cw) = tokio::io::split(client_side);
        Client {
            writer: Some(cw),
            reader: BufReader::new(cr),
            next_id: 0,
            pending: Vec::new(),
            log: Vec::new(),
            server,
        }
    }

    pub async fn send(&mut self, msg: Value) {
        let mut line = serde_json::to_vec(&msg).unwrap();
        line.push(b'\n');
        let w = self.writer.as_mut().expect("input closed");
        w.write_all(&line).await.unwrap();
        w.flush().await.unwrap();
    }

    pub async fn request(&mut self, method: &str, params: Value) -> i64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        id
    }

    /// Answers a server→client request.
    pub async fn reply(&mut self, id: &Value, result: Value) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "result": result}))
            .await;
    }

    pub async fn reply_error(&mut self, id: &Value, code: i64, message: &str) {
        self.send(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
            .await;
    }

    async fn read(&mut self) -> Value {
        let mut line = String::new();
        let n = match tokio::time::timeout(WAIT, self.reader.read_line(&mut line)).await {
            Ok(n) => n.unwrap(),
            Err(_) => {
                let tail: Vec<String> = self
                    .log
                    .iter()
                    .rev()
                    .take(10)
                    .map(|v| v.to_string().chars().take(400).collect())
                    .collect();
                panic!("timed out waiting for the server; last messages (newest first): {tail:#?}");
            }
        };
        assert!(n > 0, "server closed its output");
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["jsonrpc"], "2.0", "{v}");
        self.log.push(v.clone());
        v
    }

    /// The first unconsumed message matching `pred` (reading more as needed).
    pub async fn take(&mut self, mut pred: impl FnMut(&Value) -> bool) -> Value {
        if let Some(i) = self.pending.iter().position(&mut pred) {
            return self.pending.remove(i);
        }
        loop {
            let v = self.read().await;
            if pred(&v) {
                return v;
            }
            self.pending.push(v);
        }
    }

    pub async fn response(&mut self, id: i64) -> Value {
        self.take(|v| v["id"] == id && v.get("method").is_none())
            .await
    }

    /// Sends a request and returns its whole response message.
    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params).await;
        self.response(id).await
    }

    /// A request that must succeed: its `result`.
    pub async fn ok(&mut self, method: &str, params: Value) -> Value {
        let r = self.call(method, params).await;
        assert!(r.get("error").is_none(), "{method} failed: {r}");
        r["result"].clone()
    }

    /// A request that must fail: its `error`.
    pub async fn err(&mut self, method: &str, params: Value) -> Value {
        let r = self.call(method, params).await;
        assert!(r.get("result").is_none(), "{method} should fail: {r}");
        r["error"].clone()
    }

    /// The params of the next unconsumed notification `method`.
    pub async fn notification(&mut self, method: &str) -> Value {
        self.take(|v| v["method"] == method && v.get("id").is_none())
            .await["params"]
            .clone()
    }

    /// The next unconsumed server→client request `method` (whole message).
    pub async fn server_request(&mut self, method: &str) -> Value {
        self.take(|v| v["method"] == method && v.get("id").is_some())
            .await
    }

    /// Thread-scoped notifications (those with `params.threadId`) up to the
    /// `turn/completed` of `turn_id`, consumed, in order.
    pub async fn turn_notifications(&mut self, turn_id: &str) -> Vec<Value> {
        let mut out = Vec::new();
        loop {
            let v = self
                .take(|v| v.get("id").is_none() && v["params"]["threadId"].is_string())
                .await;
            let done = v["method"] == "turn/completed" && v["params"]["turn"]["id"] == turn_id;
            out.push(v);
            if done {
                return out;
            }
        }
    }

    /// Sends `initialize` (with the elicitation capability) as MCP clients do.
    pub async fn initialize(&mut self) -> Value {
        let r = self
            .ok(
                "initialize",
                json!({"protocolVersion": "2025-06-18", "capabilities": {"elicitation": {}},
                       "clientInfo": {"name": "v2-test", "version": "1"}}),
            )
            .await;
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        r
    }

    /// `thread/start` in `cwd`; returns the result.
    pub async fn start_thread(&mut self, cwd: &Path) -> Value {
        self.ok("thread/start", json!({"cwd": cwd})).await
    }

    /// `turn/start` with one text input; returns the turn id.
    pub async fn start_turn(&mut self, thread_id: &Value, text: &str) -> String {
        let r = self
            .ok(
                "turn/start",
                json!({"threadId": thread_id, "input": [{"type": "text", "text": text}]}),
            )
            .await;
        assert_eq!(r["turn"]["status"], "inProgress", "{r}");
        r["turn"]["id"].as_str().unwrap().to_string()
    }

    /// Closes input and waits for the server to exit.
    pub async fn shutdown(mut self) -> i32 {
        if let Some(mut w) = self.writer.take() {
            w.shutdown().await.unwrap();
        }
        tokio::time::timeout(WAIT, self.server)
            .await
            .expect("server did not exit")
            .unwrap()
    }
}

pub fn methods(notes: &[Value]) -> Vec<String> {
    notes
        .iter()
        .map(|n| n["method"].as_str().unwrap_or("").to_string())
        .collect()
}

/// The `item` of each `item/completed` in `notes`.
pub fn completed_items(notes: &[Value]) -> Vec<Value> {
    notes
        .iter()
        .filter(|n| n["method"] == "item/completed")
        .map(|n| n["params"]["item"].clone())
        .collect()
}

/// Position of the first message in `log` matching `pred`.
pub fn position(log: &[Value], pred: impl Fn(&Value) -> bool) -> usize {
    log.iter()
        .position(pred)
        .unwrap_or_else(|| panic!("not in log"))
}
