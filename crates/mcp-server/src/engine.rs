//! The seam between the MCP front end and the agent engine. The server only needs to
//! start/open threads, submit ops and read events, resume turns parked at approvals and
//! read what a turn is now (for 2026-07-28 approvals and tasks, on any process sharing the
//! store), and (for resources and prompts) read stored threads and find prompt folders;
//! [`crate::core_engine`] implements this over `oi-core`, and tests can script a fake engine
//! to exercise protocol edge cases.

use oi_core::{StoredTurn, ThreadSummary};
pub use oi_core::{TurnOptions, TurnState};
use oi_jsonrpc::BoxFuture;
use oi_protocol::ThreadId;
use oi_protocol::config_types::{AskForApproval, SandboxMode};
use oi_protocol::protocol::{Event, SessionConfiguredEvent, Submission};
pub use oi_protocol::protocol::{ParkedAnswer, ParkedRequest, TurnParkedEvent};
use serde_json::Value;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// What a `codex` tool call asks for, on top of config.toml and the server's own flags.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SessionRequest {
    /// The model to use instead of the configured one.
    pub model: Option<String>,
    /// The `[profiles.<name>]` to apply.
    pub profile: Option<String>,
    /// Already absolute (resolved against the server's working directory).
    pub cwd: Option<PathBuf>,
    /// When the agent asks before acting.
    pub approval_policy: Option<AskForApproval>,
    /// The sandbox commands run in.
    pub sandbox: Option<SandboxMode>,
    /// Dotted config keys with JSON values, applied like `-c key=value`.
    pub config: Vec<(String, Value)>,
    /// A system prompt replacing the built-in one.
    pub base_instructions: Option<String>,
    /// Instructions added to the system prompt.
    pub developer_instructions: Option<String>,
    /// The prompt used to compact the history.
    pub compact_prompt: Option<String>,
}

/// A thread ready to take a turn.
pub struct ThreadHandle {
    /// The thread.
    pub thread: Arc<dyn EngineThread>,
    /// Present when the thread was just created or loaded from disk.
    pub session_configured: Option<SessionConfiguredEvent>,
    /// How long an approval prompt may stay unanswered before it counts as denied.
    pub approval_timeout: Duration,
    /// Config problems worth telling the user (unknown keys, deprecated spellings).
    pub warnings: Vec<String>,
}

/// Why a thread could not be had.
#[derive(Clone, Debug, PartialEq)]
pub enum EngineError {
    /// config.toml or the call's overrides are invalid; the text names key and fix.
    Config(String),
    /// The thread could not be started or loaded.
    Start(String),
    /// No thread with that id, in memory or on disk.
    NotFound(ThreadId),
    /// Another server sharing the store drives the thread now (the text names it).
    Busy(String),
}

impl std::fmt::Display for EngineError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EngineError::Config(msg) => write!(f, "Failed to load configuration: {msg}"),
            EngineError::Start(msg) => write!(f, "Failed to start the session: {msg}"),
            EngineError::NotFound(id) => write!(f, "Session not found for thread_id: {id}"),
            EngineError::Busy(msg) => f.write_str(msg),
        }
    }
}

/// A parked turn, resumed here: its thread, and the turn from its continuation on.
pub struct ResumedTurn {
    /// The thread.
    pub handle: ThreadHandle,
    /// The turn, from its continuation on.
    pub turn: Box<dyn EngineTurn>,
}

/// Why a parked turn was not resumed.
#[derive(Clone, Debug, PartialEq)]
pub enum ResumeError {
    /// Another server drives the thread right now; the same answers may be sent again.
    Busy(String),
    /// The turn no longer waits at that park: it was resumed already (here or elsewhere),
    /// it parked again since, or it ended.
    NotParked(String),
    /// The park expired before the answers came; the turn ended without running its calls.
    Expired(String),
    /// The answers do not fit what the turn waits for (unknown, missing, repeated).
    BadAnswers(String),
    /// No such thread.
    NotFound(ThreadId),
    /// Anything else (the answers could not be saved, the thread could not be loaded).
    Failed(String),
}

/// One page of stored threads, newest first.
#[derive(Clone, Debug, Default)]
pub struct ThreadList {
    /// The page's threads.
    pub threads: Vec<ThreadSummary>,
    /// Where the next page starts; `None` on the last page.
    pub next_cursor: Option<String>,
}

/// Some turns of a stored thread: the `count` turns before turn `before` (all the latest
/// ones when `None`), oldest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TurnWindow {
    /// The turn index the window ends before; `None`: after the last turn.
    pub before: Option<usize>,
    /// How many turns at most.
    pub count: usize,
}

/// What [`Engine::thread_turns`] read.
#[derive(Clone, Debug)]
pub struct ThreadTurns {
    /// The thread as the store lists it.
    pub summary: ThreadSummary,
    /// The index (from 0, oldest) of the first turn in `turns`.
    pub first: usize,
    /// How many turns the thread has.
    pub total: usize,
    /// The turns read, oldest first.
    pub turns: Vec<StoredTurn>,
    /// A turn is running in this process now.
    pub running: bool,
}

/// Why stored threads could not be read.
#[derive(Clone, Debug, PartialEq)]
pub enum CatalogError {
    /// No stored thread with that id.
    NotFound(ThreadId),
    /// A cursor this server did not give out (or one that expired).
    BadCursor(String),
    /// The store failed (the text says how).
    Store(String),
}

/// Folders prompt files are read from, in precedence order (the first of two files with
/// the same name wins).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PromptFolders {
    /// The folders, first wins.
    pub folders: Vec<PathBuf>,
}

/// What the MCP server needs of an engine: threads to start, open, list and read, and turns to run on them.
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
    /// A page of the stored threads, newest activity first. An engine that stores
    /// nothing has none.
    fn list_threads(
        &self,
        _cursor: Option<String>,
    ) -> BoxFuture<'_, Result<ThreadList, CatalogError>> {
        Box::pin(async { Ok(ThreadList::default()) })
    }
    /// Some turns of a stored thread.
    fn thread_turns(
        &self,
        id: ThreadId,
        _window: TurnWindow,
    ) -> BoxFuture<'_, Result<ThreadTurns, CatalogError>> {
        Box::pin(async move { Err(CatalogError::NotFound(id)) })
    }
    /// A stored thread's summary, `None` if there is no such thread.
    fn thread_summary(
        &self,
        _id: ThreadId,
    ) -> BoxFuture<'_, Result<Option<ThreadSummary>, CatalogError>> {
        Box::pin(async { Ok(None) })
    }
    /// Resumes turn `turn_id` of `thread`, parked at `park_id`, with `answers` (one per
    /// request it waits for), on this process whichever process parked it (loading the
    /// thread from the store). A park is resumed once.
    fn resume_parked(
        &self,
        _thread: ThreadId,
        _turn_id: String,
        _park_id: String,
        _answers: Vec<ParkedAnswer>,
    ) -> BoxFuture<'_, Result<ResumedTurn, ResumeError>> {
        Box::pin(async {
            Err(ResumeError::Failed(
                "this engine cannot resume parked turns".into(),
            ))
        })
    }
    /// What turn `turn_id` of `thread` is now, as its store says (any process sharing the
    /// store answers the same); `None` when the thread has no such turn (yet).
    fn turn_state(
        &self,
        _thread: ThreadId,
        _turn_id: String,
    ) -> BoxFuture<'_, Result<Option<TurnState>, CatalogError>> {
        Box::pin(async { Ok(None) })
    }
    /// The events a thread running in this process publishes from now on; `None` when it
    /// is not loaded here.
    fn watch_thread(&self, _id: ThreadId) -> Option<Box<dyn EngineTurn>> {
        None
    }
    /// Where prompt files are: `$OPENINTERPRETER_HOME/prompts/`, and the prompt folder of
    /// the project the server runs in when that project is trusted.
    fn prompt_folders(&self) -> BoxFuture<'_, PromptFolders> {
        Box::pin(async { PromptFolders::default() })
    }
}

/// One thread of the engine, as the MCP server drives it.
pub trait EngineThread: Send + Sync {
    /// The thread's id.
    fn id(&self) -> ThreadId;
    /// Starts turn `id` answering `prompt`, and follows it: the returned turn yields what
    /// the thread publishes from the turn's start to its terminal event (or, for a turn
    /// whose `options` park approvals, to its `turn_parked`). Refused (not queued) when a
    /// turn is already running.
    fn start_turn(
        &self,
        id: String,
        prompt: String,
        options: TurnOptions,
    ) -> BoxFuture<'_, Result<Box<dyn EngineTurn>, StartTurnError>>;
    /// Queues an op (an answer, an interrupt); all events it causes carry `sub.id`.
    fn submit(&self, sub: Submission) -> BoxFuture<'_, Result<(), SubmitError>>;
    /// A turn is running.
    fn is_busy(&self) -> bool;
    /// The turn running now, if any.
    fn active_turn(&self) -> Option<String> {
        None
    }
    /// Makes everything the thread recorded so far durable; `false` when the store does not
    /// have all of it.
    fn flush(&self) -> BoxFuture<'_, bool> {
        Box::pin(async { true })
    }
    /// What this thread recorded that is not in its store right now (records kept for retry
    /// while the database is down, or lost), as one sentence; `None` when all is saved.
    fn unsaved(&self) -> Option<String> {
        None
    }
}

/// One running turn, as its caller follows it (with `oi_core::drive`).
pub trait EngineTurn: Send + Sync {
    /// The next event; the turn's terminal event (`task_complete` / `turn_aborted` with its
    /// id, or its `turn_parked`) is the last. `None` after it, or when the thread ended
    /// first. Cancel-safe.
    fn next_event(&mut self) -> BoxFuture<'_, Option<Event>>;
}

/// Why an op was not queued: the thread no longer takes ops (the text says why).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct SubmitError(pub String);

/// Why a turn did not start.
#[derive(Clone, Debug, PartialEq)]
pub enum StartTurnError {
    /// A turn is running on the thread (the text names it).
    Busy(String),
    /// The thread has shut down (or is shutting down).
    Closed(String),
}
