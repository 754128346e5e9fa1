//! Test harness: an in-memory connection to the server, a line-level JSON-RPC client,
//! and a scripted fake engine whose behaviour is chosen by the prompt text.
#![allow(unreachable_pub)] // helpers shared by this test crate's modules; a test has no outside
#![allow(dead_code)]

use oi_jsonrpc::BoxFuture;
use oi_mcp_server::engine::{
    CatalogError, Engine, EngineError, EngineThread, EngineTurn, ParkedAnswer, ParkedRequest,
    PromptFolders, ResumeError, ResumedTurn, SessionRequest, StartTurnError, SubmitError,
    ThreadHandle, TurnOptions, TurnParkedEvent, TurnState,
};
use oi_protocol::ThreadId;
use oi_protocol::config_types::{AskForApproval, SandboxPolicy};
use oi_protocol::parse_command::parse_command;
use oi_protocol::protocol::*;
use oi_protocol::user_input::joined_text;
use serde_json::{Value, json};
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, ReadHalf, WriteHalf};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

pub const WAIT: Duration = Duration::from_secs(20);

// ---------------------------------------------------------------- client

pub struct Client {
    writer: Option<WriteHalf<DuplexStream>>,
    reader: BufReader<ReadHalf<DuplexStream>>,
    next_id: i64,
    /// Everything read that was not what a helper waited for, in order.
    pub seen: Vec<Value>,
    pub server: JoinHandle<i32>,
}

impl Client {
    pub async fn send_raw(&mut self, bytes: &[u8]) {
        let w = self.writer.as_mut().expect("stdin already closed");
        w.write_all(bytes).await.unwrap();
        w.flush().await.unwrap();
    }

    pub async fn send(&mut self, msg: Value) {
        let mut line = serde_json::to_vec(&msg).unwrap();
        line.push(b'\n');
        self.send_raw(&line).await;
    }

    pub async fn request(&mut self, method: &str, params: Value) -> i64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}))
            .await;
        id
    }

    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc":"2.0","method":method,"params":params}))
            .await;
    }

    pub fn take_writer(&mut self) -> WriteHalf<DuplexStream> {
        self.writer.take().expect("stdin already closed")
    }

    pub fn put_writer(&mut self, w: WriteHalf<DuplexStream>) {
        self.writer = Some(w);
    }

    /// Writes `bytes` while reading, and returns the first message that has an id.
    pub async fn read_until_id_after_write(&mut self, bytes: Vec<u8>) -> Value {
        let mut w = self.take_writer();
        let feeder = tokio::spawn(async move {
            w.write_all(&bytes).await.unwrap();
            w.flush().await.unwrap();
            w
        });
        let v = self.read_until(|v| v.get("id").is_some()).await;
        self.put_writer(feeder.await.unwrap());
        v
    }

    /// Closes the server's stdin.
    pub async fn close_stdin(&mut self) {
        if let Some(mut w) = self.writer.take() {
            w.shutdown().await.unwrap();
        }
    }

    /// The next message, or None at EOF. Panics after [`WAIT`].
    pub async fn read(&mut self) -> Option<Value> {
        let mut line = String::new();
        let Ok(n) = tokio::time::timeout(WAIT, self.reader.read_line(&mut line)).await else {
            let tail: Vec<String> = self
                .seen
                .iter()
                .rev()
                .take(8)
                .map(|v| v.to_string().chars().take(300).collect())
                .collect();
            panic!(
                "timed out waiting for the server; last messages seen (newest first): {tail:#?}"
            );
        };
        let n = n.unwrap();
        if n == 0 {
            return None;
        }
        assert!(line.ends_with('\n'), "unterminated line: {line}");
        let v: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("bad JSON from server ({e}): {line}"));
        assert_eq!(v["jsonrpc"], "2.0", "{v}");
        Some(v)
    }

    /// Reads until `pred` matches; everything else goes to `seen`.
    pub async fn read_until(&mut self, mut pred: impl FnMut(&Value) -> bool) -> Value {
        loop {
            let v = self.read().await.expect("server closed its output");
            if pred(&v) {
                return v;
            }
            self.seen.push(v);
        }
    }

    pub async fn response(&mut self, id: impl Into<Value>) -> Value {
        let id = id.into();
        self.read_until(|v| v["id"] == id && v.get("method").is_none())
            .await
    }

    pub async fn call(&mut self, method: &str, params: Value) -> Value {
        let id = self.request(method, params).await;
        self.response(id).await
    }

    pub async fn server_request(&mut self, method: &str) -> Value {
        self.read_until(|v| v["method"] == method && v.get("id").is_some())
            .await
    }

    pub async fn initialize(&mut self, elicitation: bool) -> Value {
        let caps = if elicitation {
            json!({"elicitation": {}})
        } else {
            json!({})
        };
        let r = self
            .call(
                "initialize",
                json!({"protocolVersion":"2025-06-18","capabilities":caps,"clientInfo":{"name":"test","version":"1"}}),
            )
            .await;
        self.notify("notifications/initialized", json!({})).await;
        r
    }

    /// A 2026-07-28 request: `params` with the `_meta` of a client that declared `caps`.
    pub async fn modern(&mut self, method: &str, params: Value, caps: Value) -> i64 {
        let mut params = params;
        let meta = params
            .as_object_mut()
            .unwrap()
            .entry("_meta")
            .or_insert_with(|| json!({}));
        meta["io.modelcontextprotocol/protocolVersion"] = json!("2026-07-28");
        meta["io.modelcontextprotocol/clientCapabilities"] = caps;
        meta["io.modelcontextprotocol/clientInfo"] = json!({"name": "test", "version": "1"});
        self.request(method, params).await
    }

    pub async fn modern_call(&mut self, method: &str, params: Value) -> Value {
        let id = self.modern(method, params, json!({})).await;
        self.response(id).await
    }

    pub async fn tool(&mut self, name: &str, args: Value) -> i64 {
        self.request("tools/call", json!({"name": name, "arguments": args}))
            .await
    }

    pub async fn call_tool(&mut self, name: &str, args: Value) -> Value {
        let id = self.tool(name, args).await;
        self.response(id).await
    }

    /// `codex/event` notifications seen so far for request `id`.
    pub fn events_for(&self, id: i64) -> Vec<Value> {
        self.seen
            .iter()
            .filter(|v| v["method"] == "codex/event" && v["params"]["_meta"]["requestId"] == id)
            .cloned()
            .collect()
    }

    pub fn event_types(&self, id: i64) -> Vec<String> {
        self.events_for(id)
            .iter()
            .map(|v| {
                v["params"]["msg"]["type"]
                    .as_str()
                    .unwrap_or("")
                    .to_string()
            })
            .collect()
    }

    /// Waits for the server to exit and returns its exit code.
    pub async fn exit_code(self) -> i32 {
        tokio::time::timeout(WAIT, self.server)
            .await
            .expect("server did not exit")
            .unwrap()
    }
}

pub fn start(engine: Arc<dyn Engine>) -> Client {
    let (client_side, server_side) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_side);
    let (client_read, client_write) = tokio::io::split(client_side);
    let server = tokio::spawn(oi_mcp_server::serve(server_read, server_write, engine));
    client(client_read, client_write, server)
}

/// A key every test server of a "fleet" shares.
pub fn fleet_key() -> Arc<oi_mcp_server::sealing::StateKey> {
    Arc::new(
        oi_mcp_server::sealing::StateKey::new(
            b"a key shared by the test fleet, 32+ bytes",
            oi_mcp_server::sealing::KeySource::Ephemeral,
        )
        .unwrap(),
    )
}

/// A server whose handles `key` seals for `principal`.
pub fn start_sealed(
    engine: Arc<dyn Engine>,
    key: Arc<oi_mcp_server::sealing::StateKey>,
    principal: &str,
) -> Client {
    let (client_side, server_side) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_side);
    let (client_read, client_write) = tokio::io::split(client_side);
    let sealing = Ok(oi_mcp_server::sealing::Sealer::new(key, principal));
    let server = tokio::spawn(oi_mcp_server::serve_sealed(
        server_read,
        server_write,
        engine,
        sealing,
    ));
    client(client_read, client_write, server)
}

/// A server with `additions` in its tables.
pub fn start_with(
    engine: Arc<dyn Engine>,
    additions: Arc<oi_mcp_server::additions::Additions>,
) -> Client {
    let (client_side, server_side) = tokio::io::duplex(1 << 20);
    let (server_read, server_write) = tokio::io::split(server_side);
    let (client_read, client_write) = tokio::io::split(client_side);
    let sealing = Ok(oi_mcp_server::sealing::Sealer::new(fleet_key(), "tester"));
    let server = tokio::spawn(oi_mcp_server::serve_with(
        server_read,
        server_write,
        engine,
        sealing,
        additions,
    ));
    client(client_read, client_write, server)
}

fn client(
    client_read: ReadHalf<DuplexStream>,
    client_write: WriteHalf<DuplexStream>,
    server: JoinHandle<i32>,
) -> Client {
    Client {
        writer: Some(client_write),
        reader: BufReader::new(client_read),
        next_id: 0,
        seen: Vec::new(),
        server,
    }
}

pub fn text(result: &Value) -> &str {
    result["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

pub fn is_error(result: &Value) -> bool {
    result["result"]["isError"] == json!(true)
}

// ---------------------------------------------------------------- fake engine

/// A parked turn in the fake store: the park, the answers before it (`call: decision`
/// lines), and the call ids still to ask after it.
type Park = (TurnParkedEvent, Vec<String>, Vec<String>);

/// What a fake "thread store" keeps that every fake engine sharing it sees: turns' states
/// and parks, so two engines on one store stand for two servers of a fleet.
#[derive(Default)]
pub struct FakeStore {
    pub states: Mutex<HashMap<(ThreadId, String), TurnState>>,
    /// Parks by turn: the park, the answers before it (`call: decision` lines), and the call
    /// ids still to ask after it.
    parks: Mutex<HashMap<(ThreadId, String), Park>>,
    /// How many times a park was resumed (a park resumes once).
    pub resumes: AtomicUsize,
    /// Seconds a park waits before it expires.
    pub park_secs: Mutex<i64>,
}

impl FakeStore {
    pub fn new() -> Arc<Self> {
        let s = Self::default();
        *s.park_secs.lock().unwrap() = 3600;
        Arc::new(s)
    }

    fn set(&self, thread: ThreadId, turn: &str, state: TurnState) {
        self.states
            .lock()
            .unwrap()
            .insert((thread, turn.to_string()), state);
    }

    pub fn state(&self, thread: ThreadId, turn: &str) -> Option<TurnState> {
        self.states
            .lock()
            .unwrap()
            .get(&(thread, turn.to_string()))
            .cloned()
    }
}

/// Behaviour by prompt:
/// * `hello` → "hi there" (3 deltas first); `deltas:N` → N deltas then "done"
/// * `approve` → an exec approval request; the answer decides the final message
///   (a turn that parks its approvals parks instead; `approve-twice` parks twice)
/// * `patch` → a patch approval request, likewise
/// * `elicit` → a nested elicitation; the answer's action is the final message
/// * `hang` → waits for an interrupt, then `turn_aborted`
/// * `fail` → `error` then `task_complete` with no message
/// * anything else → echoes the prompt
pub struct FakeEngine {
    threads: Mutex<HashMap<ThreadId, Arc<FakeThread>>>,
    pub approval_timeout: Duration,
    pub shutdown_called: AtomicBool,
    pub started: AtomicUsize,
    /// Thread ids `open_thread` treats as stored on disk.
    pub on_disk: Mutex<Vec<ThreadId>>,
    pub last_request: Mutex<Option<SessionRequest>>,
    /// Where `prompt_folders` says prompt files are.
    pub prompts: Mutex<Vec<PathBuf>>,
    pub store: Arc<FakeStore>,
    /// Threads released to the store (`release_thread`), in order.
    pub released: Mutex<Vec<ThreadId>>,
}

impl FakeEngine {
    pub fn new() -> Arc<Self> {
        Self::with_timeout(Duration::from_secs(600))
    }

    pub fn with_timeout(approval_timeout: Duration) -> Arc<Self> {
        Self::build(approval_timeout, FakeStore::new())
    }

    /// An engine on `store`, which another engine may share (another server of a fleet).
    pub fn on_store(store: Arc<FakeStore>) -> Arc<Self> {
        Self::build(Duration::from_secs(600), store)
    }

    fn build(approval_timeout: Duration, store: Arc<FakeStore>) -> Arc<Self> {
        Arc::new(Self {
            threads: Mutex::default(),
            approval_timeout,
            shutdown_called: AtomicBool::new(false),
            started: AtomicUsize::new(0),
            on_disk: Mutex::default(),
            last_request: Mutex::default(),
            prompts: Mutex::default(),
            store,
            released: Mutex::default(),
        })
    }

    fn new_handle(&self, id: ThreadId) -> ThreadHandle {
        let thread = FakeThread::spawn(id, self.store.clone());
        self.threads.lock().unwrap().insert(id, thread.clone());
        ThreadHandle {
            thread,
            session_configured: Some(session_configured(id)),
            approval_timeout: self.approval_timeout,
            warnings: vec![],
        }
    }

    /// The thread, loaded here (from the shared store if another engine has it).
    fn load(&self, id: ThreadId) -> Option<Arc<FakeThread>> {
        if let Some(t) = self.threads.lock().unwrap().get(&id) {
            return Some(t.clone());
        }
        let known = self.on_disk.lock().unwrap().contains(&id)
            || self
                .store
                .states
                .lock()
                .unwrap()
                .keys()
                .any(|(t, _)| *t == id);
        if !known {
            return None;
        }
        self.new_handle(id);
        self.threads.lock().unwrap().get(&id).cloned()
    }
}

fn session_configured(id: ThreadId) -> SessionConfiguredEvent {
    SessionConfiguredEvent {
        session_id: id,
        thread_id: id,
        forked_from_id: None,
        thread_name: None,
        model: "fake".into(),
        model_provider_id: "fake".into(),
        approval_policy: AskForApproval::OnRequest,
        approvals_reviewer: "user".into(),
        sandbox_policy: SandboxPolicy::ReadOnly,
        cwd: PathBuf::from("/tmp"),
        reasoning_effort: None,
        history_log_id: 0,
        history_entry_count: 0,
        initial_messages: None,
        rollout_path: None,
    }
}

impl Engine for FakeEngine {
    fn start_thread(
        &self,
        req: SessionRequest,
    ) -> BoxFuture<'_, Result<ThreadHandle, EngineError>> {
        Box::pin(async move {
            if req.model.as_deref() == Some("panic-model") {
                panic!("simulated engine bug");
            }
            if req.model.as_deref() == Some("bad-model") {
                return Err(EngineError::Config("model `bad-model` is not served by provider `fake`; set `model` in config.toml".into()));
            }
            *self.last_request.lock().unwrap() = Some(req);
            self.started.fetch_add(1, Ordering::SeqCst);
            Ok(self.new_handle(ThreadId::new()))
        })
    }

    fn open_thread(&self, id: ThreadId) -> BoxFuture<'_, Result<ThreadHandle, EngineError>> {
        Box::pin(async move {
            if let Some(t) = self.threads.lock().unwrap().get(&id) {
                return Ok(ThreadHandle {
                    thread: t.clone(),
                    session_configured: None,
                    approval_timeout: self.approval_timeout,
                    warnings: vec![],
                });
            }
            if self.on_disk.lock().unwrap().contains(&id) {
                return Ok(self.new_handle(id));
            }
            if let Some(t) = self.load(id) {
                return Ok(ThreadHandle {
                    thread: t,
                    session_configured: None,
                    approval_timeout: self.approval_timeout,
                    warnings: vec![],
                });
            }
            Err(EngineError::NotFound(id))
        })
    }

    fn release_thread(&self, id: ThreadId) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            // Like a shared store: an idle thread is let go, so another server can load it.
            let idle = self
                .threads
                .lock()
                .unwrap()
                .get(&id)
                .is_some_and(|t| !t.is_busy());
            if idle {
                if let Some(t) = self.threads.lock().unwrap().remove(&id) {
                    let _ = t.ops.send(Cmd::Op(Submission {
                        id: String::new(),
                        op: Op::Shutdown,
                    }));
                }
                self.released.lock().unwrap().push(id);
            }
        })
    }

    fn resume_parked(
        &self,
        thread: ThreadId,
        turn_id: String,
        park_id: String,
        answers: Vec<ParkedAnswer>,
    ) -> BoxFuture<'_, Result<ResumedTurn, ResumeError>> {
        Box::pin(async move {
            let key = (thread, turn_id.clone());
            let (parked, mut decided, rest) = {
                let parks = self.store.parks.lock().unwrap();
                match parks.get(&key) {
                    Some(p) if p.0.park_id == park_id => p.clone(),
                    _ => {
                        return Err(ResumeError::NotParked(format!(
                            "turn {turn_id} is not parked at {park_id}"
                        )));
                    }
                }
            };
            if chrono::Utc::now().timestamp() >= parked.expires_at {
                self.store.parks.lock().unwrap().remove(&key);
                self.store.set(
                    thread,
                    &turn_id,
                    TurnState::Expired {
                        expires_at: parked.expires_at,
                    },
                );
                return Err(ResumeError::Expired(format!(
                    "turn {turn_id} waited for approval until {} and has expired",
                    parked.expires_at
                )));
            }
            if answers.len() != parked.requests.len()
                || answers
                    .iter()
                    .zip(&parked.requests)
                    .any(|(a, r)| a.request_id != r.id())
            {
                return Err(ResumeError::BadAnswers(format!(
                    "answers {answers:?} do not fit"
                )));
            }
            self.store.parks.lock().unwrap().remove(&key);
            self.store.resumes.fetch_add(1, Ordering::SeqCst);
            let Some(t) = self.load(thread) else {
                return Err(ResumeError::NotFound(thread));
            };
            for (request, answer) in parked.requests.iter().zip(&answers) {
                let d = serde_json::to_value(answer.decision).unwrap();
                decided.push(format!("{}: {}", request.call_id(), d.as_str().unwrap()));
            }
            let turn = t.follow(turn_id.clone());
            t.ops
                .send(Cmd::Resume {
                    turn: turn_id,
                    decided,
                    rest,
                })
                .unwrap();
            Ok(ResumedTurn {
                handle: ThreadHandle {
                    thread: t,
                    session_configured: None,
                    approval_timeout: self.approval_timeout,
                    warnings: vec![],
                },
                turn,
            })
        })
    }

    fn turn_state(
        &self,
        thread: ThreadId,
        turn_id: String,
    ) -> BoxFuture<'_, Result<Option<TurnState>, CatalogError>> {
        Box::pin(async move { Ok(self.store.state(thread, &turn_id)) })
    }

    fn watch_thread(&self, id: ThreadId) -> Option<Box<dyn EngineTurn>> {
        let t = self.threads.lock().unwrap().get(&id).cloned()?;
        Some(Box::new(FakeWatch(t.events.subscribe())))
    }

    fn prompt_folders(&self) -> BoxFuture<'_, PromptFolders> {
        let folders = self.prompts.lock().unwrap().clone();
        Box::pin(async move { PromptFolders { folders } })
    }

    fn shutdown(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            self.shutdown_called.store(true, Ordering::SeqCst);
            let threads: Vec<_> = self
                .threads
                .lock()
                .unwrap()
                .drain()
                .map(|(_, t)| t)
                .collect();
            for t in threads {
                let _ = t.ops.send(Cmd::Op(Submission {
                    id: String::new(),
                    op: Op::Shutdown,
                }));
            }
        })
    }
}

/// What the fake thread's actor is told.
enum Cmd {
    Op(Submission),
    Start {
        sub: Submission,
        park: bool,
    },
    /// A parked turn resumed with `decided` (one line per answer); `rest` are the calls it
    /// will still ask about.
    Resume {
        turn: String,
        decided: Vec<String>,
        rest: Vec<String>,
    },
}

pub struct FakeThread {
    id: ThreadId,
    ops: mpsc::UnboundedSender<Cmd>,
    events: tokio::sync::broadcast::Sender<Event>,
    busy: Arc<AtomicBool>,
    active: Arc<Mutex<Option<String>>>,
}

impl FakeThread {
    fn spawn(id: ThreadId, store: Arc<FakeStore>) -> Arc<Self> {
        let (op_tx, op_rx) = mpsc::unbounded_channel();
        let (ev_tx, _) = tokio::sync::broadcast::channel(4096);
        let busy = Arc::new(AtomicBool::new(false));
        let active = Arc::new(Mutex::new(None));
        let actor = Actor {
            thread: id,
            events: ev_tx.clone(),
            busy: busy.clone(),
            active: active.clone(),
            store,
            waiting: None,
        };
        tokio::spawn(actor.run(op_rx));
        Arc::new(Self {
            id,
            ops: op_tx,
            events: ev_tx,
            busy,
            active,
        })
    }

    /// Turn `id`'s events from now on.
    fn follow(&self, id: String) -> Box<dyn EngineTurn> {
        Box::new(FakeTurn {
            id,
            events: self.events.subscribe(),
            ended: false,
        })
    }
}

impl EngineThread for FakeThread {
    fn id(&self) -> ThreadId {
        self.id
    }
    fn submit(&self, sub: Submission) -> BoxFuture<'_, Result<(), SubmitError>> {
        Box::pin(async move {
            self.ops
                .send(Cmd::Op(sub))
                .map_err(|_| SubmitError("thread closed".to_string()))
        })
    }
    fn start_turn(
        &self,
        id: String,
        prompt: String,
        options: TurnOptions,
    ) -> BoxFuture<'_, Result<Box<dyn EngineTurn>, StartTurnError>> {
        Box::pin(async move {
            // Like the engine: starting is refused, not queued, while a turn runs.
            if self
                .busy
                .compare_exchange(false, true, Ordering::SeqCst, Ordering::SeqCst)
                .is_err()
            {
                return Err(StartTurnError::Busy(format!(
                    "a turn is already running on thread {}",
                    self.id
                )));
            }
            *self.active.lock().unwrap() = Some(id.clone());
            let sub = Submission {
                id: id.clone(),
                op: Op::UserInput {
                    items: vec![oi_protocol::user_input::UserInput::text(prompt)],
                    overrides: Default::default(),
                },
            };
            let turn = self.follow(id);
            self.ops
                .send(Cmd::Start {
                    sub,
                    park: options.park_approvals,
                })
                .map_err(|_| StartTurnError::Closed("thread closed".into()))?;
            Ok(turn)
        })
    }
    fn is_busy(&self) -> bool {
        self.busy.load(Ordering::SeqCst)
    }
    fn active_turn(&self) -> Option<String> {
        self.active.lock().unwrap().clone()
    }
}

/// A fake turn reads the fake thread's events up to its terminal event (or its park).
struct FakeTurn {
    id: String,
    events: tokio::sync::broadcast::Receiver<Event>,
    ended: bool,
}

impl EngineTurn for FakeTurn {
    fn next_event(&mut self) -> BoxFuture<'_, Option<Event>> {
        Box::pin(async move {
            if self.ended {
                return None;
            }
            let ev = self.events.recv().await.ok()?;
            let parked = matches!(&ev.msg, EventMsg::TurnParked(p) if p.turn_id == self.id);
            let terminal = ev.id == self.id && ev.msg.ends_turn();
            if terminal || parked || matches!(ev.msg, EventMsg::ShutdownComplete) {
                self.ended = true;
            }
            Some(ev)
        })
    }
}

struct FakeWatch(tokio::sync::broadcast::Receiver<Event>);

impl EngineTurn for FakeWatch {
    fn next_event(&mut self) -> BoxFuture<'_, Option<Event>> {
        Box::pin(async move { self.0.recv().await.ok() })
    }
}

fn ev(id: &str, msg: EventMsg) -> Event {
    Event {
        id: id.to_string(),
        msg,
    }
}

fn complete(id: &str, text: Option<String>) -> EventMsg {
    EventMsg::TaskComplete(TaskCompleteEvent {
        turn_id: id.to_string(),
        last_agent_message: text,
        completed_at: None,
        duration_ms: None,
    })
}

fn exec_request(turn: &str, call: &str) -> ExecApprovalRequestEvent {
    let command: Vec<String> = ["touch", "x"].map(String::from).to_vec();
    ExecApprovalRequestEvent {
        call_id: call.into(),
        approval_id: None,
        turn_id: turn.to_string(),
        parsed_cmd: parse_command(&command),
        command,
        cwd: PathBuf::from("/tmp"),
        reason: None,
    }
}

struct Actor {
    thread: ThreadId,
    events: tokio::sync::broadcast::Sender<Event>,
    busy: Arc<AtomicBool>,
    active: Arc<Mutex<Option<String>>>,
    store: Arc<FakeStore>,
    /// The turn waiting for an op, if any: (turn id, what it waits for).
    waiting: Option<(String, String)>,
}

impl Actor {
    fn send(&self, id: &str, msg: EventMsg) {
        let _ = self.events.send(ev(id, msg));
    }

    fn end(&self, id: &str, msg: EventMsg, state: TurnState) {
        self.busy.store(false, Ordering::SeqCst);
        *self.active.lock().unwrap() = None;
        self.store.set(self.thread, id, state);
        self.send(id, msg);
    }

    fn finish(&self, id: &str, text: &str) {
        self.send(
            id,
            EventMsg::AgentMessage(AgentMessageEvent {
                message: text.into(),
                phase: None,
                memory_citation: None,
            }),
        );
        self.end(
            id,
            complete(id, Some(text.into())),
            TurnState::Completed {
                last_agent_message: Some(text.into()),
            },
        );
    }

    fn abort(&self, turn: &str) {
        self.end(
            turn,
            EventMsg::TurnAborted(TurnAbortedEvent {
                turn_id: Some(turn.to_string()),
                reason: TurnAbortReason::Interrupted,
                completed_at: None,
                duration_ms: None,
            }),
            TurnState::Aborted {
                reason: TurnAbortReason::Interrupted,
            },
        );
    }

    /// Parks turn `id` at an approval of `call`; `decided` are the answers so far, `rest`
    /// the calls it asks about after this one.
    fn park(&self, id: &str, call: &str, decided: Vec<String>, rest: Vec<String>) {
        let now = chrono::Utc::now().timestamp();
        let parked = TurnParkedEvent {
            turn_id: id.to_string(),
            park_id: oi_protocol::ids::new_id(),
            requests: vec![ParkedRequest::Exec(exec_request(id, call))],
            parked_at: now,
            expires_at: now + *self.store.park_secs.lock().unwrap(),
        };
        self.store.parks.lock().unwrap().insert(
            (self.thread, id.to_string()),
            (parked.clone(), decided, rest),
        );
        self.end(
            id,
            EventMsg::TurnParked(parked.clone()),
            TurnState::Parked(parked),
        );
    }

    async fn run(mut self, mut ops: mpsc::UnboundedReceiver<Cmd>) {
        while let Some(cmd) = ops.recv().await {
            match cmd {
                Cmd::Start { sub, park } => self.start(sub, park),
                Cmd::Resume {
                    turn,
                    decided,
                    rest,
                } => {
                    self.busy.store(true, Ordering::SeqCst);
                    *self.active.lock().unwrap() = Some(turn.clone());
                    self.store.set(
                        self.thread,
                        &turn,
                        TurnState::Running {
                            activity: Some("resumed".into()),
                        },
                    );
                    // The calls asked so far have their answers; the next one parks again.
                    match rest.split_first() {
                        Some((next, rest)) => self.park(&turn, next, decided, rest.to_vec()),
                        None => self.finish(&turn, &decided.join(", ")),
                    }
                }
                Cmd::Op(sub) => {
                    if !self.op(sub) {
                        return;
                    }
                }
            }
        }
    }

    fn start(&mut self, sub: Submission, park: bool) {
        let Op::UserInput { items, .. } = sub.op else {
            return;
        };
        let id = sub.id.clone();
        let prompt = joined_text(&items);
        self.busy.store(true, Ordering::SeqCst);
        self.store
            .set(self.thread, &id, TurnState::Running { activity: None });
        self.send(
            &id,
            EventMsg::TaskStarted(TaskStartedEvent {
                turn_id: id.clone(),
                started_at: None,
                model_context_window: None,
                model_context_window_source: None,
                collaboration_mode_kind: "default".into(),
            }),
        );
        if prompt == "hello" {
            for d in ["hi", " ", "there"] {
                self.send(
                    &id,
                    EventMsg::AgentMessageDelta(AgentMessageDeltaEvent { delta: d.into() }),
                );
            }
            self.finish(&id, "hi there");
        } else if let Some(n) = prompt.strip_prefix("deltas:") {
            for _ in 0..n.parse::<usize>().unwrap() {
                self.send(
                    &id,
                    EventMsg::AgentMessageDelta(AgentMessageDeltaEvent { delta: "x".into() }),
                );
            }
            self.finish(&id, "done");
        } else if (prompt == "approve" || prompt == "approve-twice") && park {
            let rest = if prompt == "approve-twice" {
                vec!["call-2".to_string()]
            } else {
                vec![]
            };
            self.park(&id, "call-1", vec![], rest);
        } else if prompt == "approve" {
            self.send(
                &id,
                EventMsg::ExecApprovalRequest(exec_request(&id, "call-1")),
            );
            self.waiting = Some((id, "exec".into()));
        } else if prompt == "patch" {
            let mut changes = std::collections::BTreeMap::new();
            changes.insert(
                PathBuf::from("/tmp/a.txt"),
                FileChange::Add {
                    content: "a\n".into(),
                },
            );
            self.send(
                &id,
                EventMsg::ApplyPatchApprovalRequest(ApplyPatchApprovalRequestEvent {
                    call_id: "patch-1".into(),
                    turn_id: id.clone(),
                    changes,
                    reason: Some("adds a file".into()),
                    grant_root: None,
                }),
            );
            self.waiting = Some((id, "patch".into()));
        } else if prompt == "elicit" {
            self.send(
                &id,
                EventMsg::ElicitationRequest(ElicitationRequestEvent {
                    turn_id: Some(id.clone()),
                    server_name: "peer".into(),
                    id: json!(7),
                    request: json!({"message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}),
                }),
            );
            self.waiting = Some((id, "elicit".into()));
        } else if prompt == "hang" {
            self.waiting = Some((id, "interrupt".into()));
        } else if prompt == "fail" {
            self.send(
                &id,
                EventMsg::Error(ErrorEvent {
                    message: "model exploded: HTTP 500".into(),
                    codex_error_info: None,
                }),
            );
            self.end(
                &id,
                complete(&id, None),
                TurnState::Failed {
                    error: "model exploded: HTTP 500".into(),
                },
            );
        } else {
            self.finish(&id, &format!("echo: {prompt}"));
        }
    }

    /// Handles an op; false once the thread shut down.
    fn op(&mut self, sub: Submission) -> bool {
        match sub.op {
            Op::ExecApproval { id: call, decision } | Op::PatchApproval { id: call, decision } => {
                if let Some((turn, _)) = self.waiting.take() {
                    let text = format!(
                        "{call}: {}",
                        serde_json::to_value(decision).unwrap().as_str().unwrap()
                    );
                    self.finish(&turn, &text);
                }
            }
            Op::ResolveElicitation {
                server_name,
                request_id,
                response,
            } => {
                if let Some((turn, _)) = self.waiting.take() {
                    let text = format!(
                        "{server_name}/{request_id}: {:?} {}",
                        response.action,
                        response.content.unwrap_or_default()
                    );
                    self.end(
                        &turn,
                        complete(&turn, Some(text.clone())),
                        TurnState::Completed {
                            last_agent_message: Some(text),
                        },
                    );
                }
            }
            Op::Interrupt => {
                if let Some((turn, _)) = self.waiting.take() {
                    self.abort(&turn);
                } else {
                    // A parked turn of this thread ends.
                    let parked: Vec<String> = self
                        .store
                        .parks
                        .lock()
                        .unwrap()
                        .keys()
                        .filter(|(t, _)| *t == self.thread)
                        .map(|(_, turn)| turn.clone())
                        .collect();
                    for turn in parked {
                        self.store
                            .parks
                            .lock()
                            .unwrap()
                            .remove(&(self.thread, turn.clone()));
                        self.abort(&turn);
                    }
                }
            }
            Op::Compact => {}
            Op::Shutdown => {
                if let Some((turn, _)) = self.waiting.take() {
                    self.abort(&turn);
                }
                self.send("", EventMsg::ShutdownComplete);
                return false;
            }
            _ => {}
        }
        true
    }
}
