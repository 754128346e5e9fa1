//! The seam between the MCP front end and the agent engine. The server only needs to
//! start/open threads, submit ops and read events; [`crate::core_engine`] implements this
//! over `oi-core`, and tests can script a fake engine to exercise protocol edge cases.

use oi_jsonrpc::BoxFuture;
use oi_protocol::ThreadId;
use oi_protocol::config_types::{AskForApproval, SandboxMode};
use oi_protocol::protocol::{Event, SessionConfiguredEvent, Submission};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// What a `codex` tool call asks for, on top of config.toml and the server's own flags.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionRequest {
    pub model: Option<String>,
    pub profile: Option<String>,
    /// Already absolute (resolved against the server's working directory).
    pub cwd: Option<PathBuf>,
    pub approval_policy: Option<AskForApproval>,
    pub sandbox: Option<SandboxMode>,
    /// Dotted config keys with JSON values, applied like `-c key=value`.
    pub config: Vec<(String, Value)>,
    pub base_instructions: Option<String>,
    pub developer_instructions: Option<String>,
    pub compact_prompt: Option<String>,
}

/// A thread ready to take a turn.
pub struct ThreadHandle {
    pub thread: Arc<dyn EngineThread>,
    /// Present when the thread was just created or loaded from disk.
    pub session_configured: Option<SessionConfiguredEvent>,
    /// How long an approval prompt may stay unanswered before it counts as denied.
    pub approval_timeout: Duration,
    /// Config problems worth telling the user (unknown keys, deprecated spellings).
    pub warnings: Vec<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub enum EngineError {
    /// config.toml or the call's overrides are invalid; the text names key and fix.
    Config(String),
    /// The thread could not be started or loaded.
    Start(String),
    /// No thread with that id, in memory or on disk.
    NotFound(ThreadId),
}

pub trait Engine: Send + Sync + 'static {
    /// Loads the config with `req` applied and starts a new thread.
    fn start_thread(&self, req: SessionRequest)
    -> BoxFuture<'_, Result<ThreadHandle, EngineError>>;
    /// A running thread, or one stored on disk (resumed).
    fn open_thread(&self, id: ThreadId) -> BoxFuture<'_, Result<ThreadHandle, EngineError>>;
    /// Interrupts running turns, flushes threads, stops child processes.
    fn shutdown(&self) -> BoxFuture<'_, ()>;
    /// Called after each tool call's turn, by the thread's reader: an engine whose threads
    /// are shared with other processes lets the thread go so another server can drive it.
    fn release_thread(&self, _id: ThreadId) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }
}

pub trait EngineThread: Send + Sync {
    fn id(&self) -> ThreadId;
    /// Starts turn `id` answering `prompt`, and follows it: the returned turn yields what
    /// the thread publishes from the turn's start to its terminal event. Refused (not
    /// queued) when a turn is already running.
    fn start_turn(
        &self,
        id: String,
        prompt: String,
    ) -> BoxFuture<'_, Result<Box<dyn EngineTurn>, StartTurnError>>;
    /// Queues an op (an answer, an interrupt); all events it causes carry `sub.id`.
    fn submit(&self, sub: Submission) -> BoxFuture<'_, Result<(), String>>;
    /// A turn is running.
    fn is_busy(&self) -> bool;
    /// What this thread recorded that is not in its store right now (records kept for retry
    /// while the database is down, or lost), as one sentence; `None` when all is saved.
    fn unsaved(&self) -> Option<String> {
        None
    }
}

/// One running turn, as its caller follows it.
pub trait EngineTurn: Send {
    /// The next event; the turn's terminal event (`task_complete` / `turn_aborted` with its
    /// id) is the last. `None` after it, or when the thread ended first. Cancel-safe.
    fn next_event(&mut self) -> BoxFuture<'_, Option<Event>>;
}

/// Why a turn did not start.
#[derive(Clone, Debug, PartialEq)]
pub enum StartTurnError {
    /// A turn is running on the thread (the text names it).
    Busy(String),
    /// The thread has shut down (or is shutting down).
    Closed(String),
}
