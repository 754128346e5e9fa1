//! Test harness: an in-memory connection to the server, a line-level JSON-RPC client,
//! and a scripted fake engine whose behaviour is chosen by the prompt text.

#![allow(dead_code)]

use oi_jsonrpc::BoxFuture;
use oi_mcp_server::engine::{
    Engine, EngineError, EngineThread, EngineTurn, PromptFolders, SessionRequest, StartTurnError,
    ThreadHandle,
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

/// Behaviour by prompt:
/// * `hello` → "hi there" (3 deltas first); `deltas:N` → N deltas then "done"
/// * `approve` → an exec approval request; the answer decides the final message
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
}

impl FakeEngine {
    pub fn new() -> Arc<Self> {
        Self::with_timeout(Duration::from_secs(600))
    }

    pub fn with_timeout(approval_timeout: Duration) -> Arc<Self> {
        Arc::new(Self {
            threads: Mutex::default(),
            approval_timeout,
            shutdown_called: AtomicBool::new(false),
            started: AtomicUsize::new(0),
            on_disk: Mutex::default(),
            last_request: Mutex::default(),
            prompts: Mutex::default(),
        })
    }

    fn new_handle(&self, id: ThreadId) -> ThreadHandle {
        let thread = FakeThread::spawn(id);
        self.threads.lock().unwrap().insert(id, thread.clone());
        ThreadHandle {
            thread,
            session_configured: Some(session_configured(id)),
            approval_timeout: self.approval_timeout,
            warnings: vec![],
        }
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
            Err(EngineError::NotFound(id))
        })
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
                let _ = t.ops.send(Submission {
                    id: String::new(),
                    op: Op::Shutdown,
                });
            }
        })
    }
}

pub struct FakeThread {
    id: ThreadId,
    ops: mpsc::UnboundedSender<Submission>,
    events: Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<Event>>>,
    busy: Arc<AtomicBool>,
}

impl FakeThread {
    fn spawn(id: ThreadId) -> Arc<Self> {
        let (op_tx, op_rx) = mpsc::unbounded_channel();
        let (ev_tx, ev_rx) = mpsc::unbounded_channel();
        let busy = Arc::new(AtomicBool::new(false));
        tokio::spawn(actor(op_rx, ev_tx, busy.clone()));
        Arc::new(Self {
            id,
            ops: op_tx,
            events: Arc::new(tokio::sync::Mutex::new(ev_rx)),
            busy,
        })
    }
}

impl EngineThread for FakeThread {
    fn id(&self) -> ThreadId {
        self.id
    }
    fn submit(&self, sub: Submission) -> BoxFuture<'_, Result<(), String>> {
        Box::pin(async move { self.ops.send(sub).map_err(|_| "thread closed".to_string()) })
    }
    fn start_turn(
        &self,
        id: String,
        prompt: String,
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
            let sub = Submission {
                id: id.clone(),
                op: Op::UserInput {
                    items: vec![oi_protocol::user_input::UserInput::text(prompt)],
                    overrides: Default::default(),
                },
            };
            self.ops
                .send(sub)
                .map_err(|_| StartTurnError::Closed("thread closed".into()))?;
            Ok(Box::new(FakeTurn {
                id,
                events: self.events.clone(),
                ended: false,
            }) as Box<dyn EngineTurn>)
        })
    }
    fn is_busy(&self) -> bool {
        self.busy.load(Ordering::SeqCst)
    }
}

/// A fake turn reads the fake thread's one event queue up to its terminal event.
struct FakeTurn {
    id: String,
    events: Arc<tokio::sync::Mutex<mpsc::UnboundedReceiver<Event>>>,
    ended: bool,
}

impl EngineTurn for FakeTurn {
    fn next_event(&mut self) -> BoxFuture<'_, Option<Event>> {
        Box::pin(async move {
            if self.ended {
                return None;
            }
            let ev = self.events.lock().await.recv().await?;
            let terminal = ev.id == self.id && ev.msg.ends_turn();
            if terminal || matches!(ev.msg, EventMsg::ShutdownComplete) {
                self.ended = true;
            }
            Some(ev)
        })
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

async fn actor(
    mut ops: mpsc::UnboundedReceiver<Submission>,
    events: mpsc::UnboundedSender<Event>,
    busy: Arc<AtomicBool>,
) {
    // The turn waiting for an op, if any: (turn id, what it waits for).
    let mut waiting: Option<(String, String)> = None;
    while let Some(sub) = ops.recv().await {
        let send = |id: &str, msg: EventMsg| {
            let _ = events.send(ev(id, msg));
        };
        match sub.op {
            Op::UserInput { items, .. } => {
                let id = sub.id.clone();
                let prompt = joined_text(&items);
                busy.store(true, Ordering::SeqCst);
                send(
                    &id,
                    EventMsg::TaskStarted(TaskStartedEvent {
                        turn_id: id.clone(),
                        started_at: None,
                        model_context_window: None,
                        model_context_window_source: None,
                        collaboration_mode_kind: "default".into(),
                    }),
                );
                let finish = |text: &str| {
                    send(
                        &id,
                        EventMsg::AgentMessage(AgentMessageEvent {
                            message: text.into(),
                            phase: None,
                            memory_citation: None,
                        }),
                    );
                    busy.store(false, Ordering::SeqCst);
                    send(&id, complete(&id, Some(text.into())));
                };
                if prompt == "hello" {
                    for d in ["hi", " ", "there"] {
                        send(
                            &id,
                            EventMsg::AgentMessageDelta(AgentMessageDeltaEvent { delta: d.into() }),
                        );
                    }
                    finish("hi there");
                } else if let Some(n) = prompt.strip_prefix("deltas:") {
                    for _ in 0..n.parse::<usize>().unwrap() {
                        send(
                            &id,
                            EventMsg::AgentMessageDelta(AgentMessageDeltaEvent {
                                delta: "x".into(),
                            }),
                        );
                    }
                    finish("done");
                } else if prompt == "approve" {
                    let command: Vec<String> = ["touch", "x"].map(String::from).to_vec();
                    send(
                        &id,
                        EventMsg::ExecApprovalRequest(ExecApprovalRequestEvent {
                            call_id: "call-1".into(),
                            approval_id: None,
                            turn_id: id.clone(),
                            parsed_cmd: parse_command(&command),
                            command,
                            cwd: PathBuf::from("/tmp"),
                            reason: None,
                        }),
                    );
                    waiting = Some((id, "exec".into()));
                } else if prompt == "patch" {
                    let mut changes = std::collections::BTreeMap::new();
                    changes.insert(
                        PathBuf::from("/tmp/a.txt"),
                        FileChange::Add {
                            content: "a\n".into(),
                        },
                    );
                    send(
                        &id,
                        EventMsg::ApplyPatchApprovalRequest(ApplyPatchApprovalRequestEvent {
                            call_id: "patch-1".into(),
                            turn_id: id.clone(),
                            changes,
                            reason: Some("adds a file".into()),
                            grant_root: None,
                        }),
                    );
                    waiting = Some((id, "patch".into()));
                } else if prompt == "elicit" {
                    send(
                        &id,
                        EventMsg::ElicitationRequest(ElicitationRequestEvent {
                            turn_id: Some(id.clone()),
                            server_name: "peer".into(),
                            id: json!(7),
                            request: json!({"message":"Your name?","requestedSchema":{"type":"object","properties":{"name":{"type":"string"}}}}),
                        }),
                    );
                    waiting = Some((id, "elicit".into()));
                } else if prompt == "hang" {
                    waiting = Some((id, "interrupt".into()));
                } else if prompt == "fail" {
                    send(
                        &id,
                        EventMsg::Error(ErrorEvent {
                            message: "model exploded: HTTP 500".into(),
                            codex_error_info: None,
                        }),
                    );
                    busy.store(false, Ordering::SeqCst);
                    send(&id, complete(&id, None));
                } else {
                    finish(&format!("echo: {prompt}"));
                }
            }
            Op::ExecApproval { id: call, decision } | Op::PatchApproval { id: call, decision } => {
                if let Some((turn, _)) = waiting.take() {
                    let text = format!(
                        "{call}: {}",
                        serde_json::to_value(decision).unwrap().as_str().unwrap()
                    );
                    send(
                        &turn,
                        EventMsg::AgentMessage(AgentMessageEvent {
                            message: text.clone(),
                            phase: None,
                            memory_citation: None,
                        }),
                    );
                    busy.store(false, Ordering::SeqCst);
                    send(&turn, complete(&turn, Some(text)));
                }
            }
            Op::ResolveElicitation {
                server_name,
                request_id,
                response,
            } => {
                if let Some((turn, _)) = waiting.take() {
                    let text = format!(
                        "{server_name}/{request_id}: {:?} {}",
                        response.action,
                        response.content.unwrap_or_default()
                    );
                    busy.store(false, Ordering::SeqCst);
                    send(&turn, complete(&turn, Some(text)));
                }
            }
            Op::Interrupt => {
                if let Some((turn, _)) = waiting.take() {
                    busy.store(false, Ordering::SeqCst);
                    send(
                        &turn,
                        EventMsg::TurnAborted(TurnAbortedEvent {
                            turn_id: Some(turn.clone()),
                            reason: TurnAbortReason::Interrupted,
                            completed_at: None,
                            duration_ms: None,
                        }),
                    );
                }
            }
            Op::Compact => {}
            Op::Shutdown => {
                if let Some((turn, _)) = waiting.take() {
                    send(
                        &turn,
                        EventMsg::TurnAborted(TurnAbortedEvent {
                            turn_id: Some(turn.clone()),
                            reason: TurnAbortReason::Interrupted,
                            completed_at: None,
                            duration_ms: None,
                        }),
                    );
                }
                send("", EventMsg::ShutdownComplete);
                return;
            }
        }
    }
}
