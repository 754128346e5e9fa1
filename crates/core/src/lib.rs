//! The agent engine.
//!
//! A [`ThreadManager`] owns many threads; each [`Thread`] is one actor that takes
//! [`Op`](oi_protocol::protocol::Op)s and emits [`Event`](oi_protocol::protocol::Event)s. A turn
//! runs in its own task: it streams the model, runs the tools the model asks for (after the
//! approvals the policy requires), feeds results back, and ends with exactly one of
//! `task_complete` or `turn_aborted` (a failed turn sends `error` first, then `task_complete`).
//!
//! A turn started with [`TurnOptions::park_approvals`] does not wait for an approval: it
//! *parks* (a `turn_parked` event; its requests recorded durably) and any process sharing
//! the thread store resumes it with the answers ([`Thread::resume_parked`]); any process
//! reads what a turn is from the store ([`StoredThreads::turn_state`]).
//!
//! Owns: turn loop, tool routing (`shell`, `apply_patch`, MCP tools), approval policy,
//! command execution and its sandbox seam, model instructions; and the façade front ends
//! reach storage, the model catalog and the working tree through ([`StoredThreads`] from
//! [`ThreadManager::stored_threads`], [`catalog`], [`working_tree_diff`]).
//! Must not know: any front end (exec, MCP server, v2 API, TUI) or wire format beyond the
//! protocol crate.
#![warn(missing_docs)]

mod answer_check;
mod approval;
mod client_tools;
mod command;
mod compact;
mod context_window;
pub mod custom_prompts;
mod elicitation;
mod error;
mod events;
mod exec;
mod git;
pub mod harness;
mod hooks;
pub mod image_input;
mod manager;
pub mod mcp;
mod mcp_sampling;
mod named_files;
mod notify;
// A parked turn is part of the turn (`turn/parking.rs`); the modules that start, resume and
// settle turns reach it by this short path.
use turn::parking;
mod project_doc;
mod prompt;
mod provider_start;
mod recorder;
mod repeats;
mod safety;
mod sandbox;
mod session;
pub mod skills;
mod store_writer;
mod stored;
mod supervisor;
mod thread;
mod tools;
mod turn;
mod turn_context;
mod turn_state;
mod window;

pub use client_tools::{
    ClientCommand, ClientCommandOutput, ClientFuture, ClientToolError, ClientTools, PlannedFile,
};
pub use command::{
    CommandError, CommandOutput, CommandRequest, USER_SHELL_CONTEXT_BYTES, run_command,
    user_shell_context,
};
pub use compact::{BUILTIN_COMPACT_PROMPT, SUMMARY_PREFIX};
pub use context_window::{
    AUTO_COMPACT_PERCENT, DEFAULT_CONTEXT_WINDOW, auto_compact_limit, builtin_context_window,
    tool_output_budget,
};
pub use error::CoreError;
pub use events::EventStream;
pub use git::{GitError, WorkingTreeBase, WorkingTreeDiff, working_tree_diff};
pub use manager::{
    NewThread, ThreadHold, ThreadManager, ThreadManagerOptions, open_thread_store,
    open_thread_store_async,
};
pub use mcp_sampling::MCP_SAMPLING_APPROVAL_COMMAND;
/// A parked turn's requests, its event and the answers that resume it.
pub use oi_protocol::protocol::{ParkedAnswer, ParkedRequest, TurnParkedEvent};
pub use oi_protocol::truncate::truncate_head_tail;
/// The `tracing` target of the store's messages for the user (a front end shows them).
pub use oi_thread_store::NOTICE_TARGET;
/// What front ends see of stored threads: the store's data types, through the engine.
pub use oi_thread_store::{
    GitInfo, ListQuery, LoadedThread, ParkedCall, RolloutItem, SessionSource, SortKey, StoredTurn,
    ThreadOutline, ThreadPage, ThreadSummary, TurnParkedItem, TurnSpan, TurnStatus,
    TurnUnparkedItem, Unparked,
};
pub use provider_start::{ProviderStarter, set_provider_starter};
pub use stored::StoredThreads;

/// The model catalog front ends list models from (v2 `model/list`, the TUI's `/model`):
/// what a provider's `GET /models` serves, which ids are not chat models, and the built-in
/// facts of well-known open models. The engine's, so front ends depend on the engine only.
pub mod catalog {
    pub use oi_model_client::catalog::{
        ModelInfo, ModelListError, RemoteModel, builtin_info, fetch_models, is_hidden, parse_models,
    };
}
pub use parking::{ParkError, TurnOptions};
pub use recorder::{NoopRecorder, RecordError, Recorder, SaveState, Unsaved};
pub use thread::turn_handle::{
    Driven, DrivenTurn, PendingRequest, Stop, TurnEnd, TurnFrontEnd, TurnHandle, drive,
};
pub use thread::{StartTurn, Thread};
pub use turn_state::TurnState;
