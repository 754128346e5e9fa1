//! `interpreter acp`: the Agent Client Protocol (ACP) over the engine, for editors (Zed,
//! JetBrains IDEs, Neovim, Emacs) that drive agents over stdio.
//!
//! A method table of the host ([`methods`]), like the MCP server and the v2 API: the host
//! serves it over stdio with one engine, `oi-jsonrpc` frames and dispatches, and this crate
//! only says what each ACP method means. The wire types are the official
//! `agent-client-protocol` crate's (protocol v1).
//!
//! * Sessions are threads: `session/new` starts one (stored, so `session/load` replays its
//!   history as updates and `session/resume` continues it without), `session/list` lists
//!   them, `session/close` lets one go ([`agent`]).
//! * Prompts are turns: text, resource links, embedded resources and images become the
//!   turn's input ([`prompt`]); the turn's events become `session/update`s — message and
//!   thought chunks, tool calls with kind, title, status, locations and diffs, plans, usage
//!   ([`updates`]); `session/cancel` interrupts it and the prompt ends `cancelled`.
//! * Approvals are `session/request_permission` (allow once, always, reject); no answer in
//!   the approval timeout, an error, or a client that goes away is a rejection
//!   ([`permission`]).
//! * The client's `fs/*` and `terminal/*`, when it offers them, do the engine's file reads
//!   and writes and run its commands, through `oi-core`'s client-tools seam
//!   ([`client_tools`]); a sandboxed command runs in the client's terminal inside our sandbox
//!   (the [`SandboxLauncher`] the binary provides).
//! * Modes are our approval/sandbox presets; model, harness and mode are also session config
//!   options ([`settings`]). MCP servers the client passes join the configured ones.
//!
//! Must not know: how a turn works (it drives `oi-core`'s threads), JSON-RPC framing and
//! serving (`oi-jsonrpc`, `oi-host`), the binary's command line.

pub mod agent;
pub mod client_tools;
pub mod permission;
pub mod prompt;
pub mod settings;
pub mod updates;

use oi_host::ServiceContext;
use oi_jsonrpc::MethodTable;
use oi_protocol::config_types::SandboxPolicy;
use std::path::Path;
use std::sync::Arc;

/// The ACP wire types this crate speaks (protocol v1).
pub use agent_client_protocol::v1::schema;

/// Turns a command and the policy that must confine it into the argv that runs it confined
/// when another program (the client's terminal) starts it: the binary's own
/// `interpreter sandbox` invocation. Arguments: the policy, the working directory, the home
/// directory of the config, the command.
pub type SandboxLauncher =
    Arc<dyn Fn(&SandboxPolicy, &Path, &Path, &[String]) -> Vec<String> + Send + Sync>;

/// What the binary gives the ACP service.
#[derive(Clone, Default)]
pub struct AcpOptions {
    /// How a sandboxed command runs in the client's terminal; `None`: sandboxed commands run
    /// in the engine's own sandbox, not in the client's terminal.
    pub sandbox_launcher: Option<SandboxLauncher>,
}

/// The ACP method table of one connection.
pub fn methods(ctx: &ServiceContext, options: AcpOptions) -> MethodTable {
    agent::Agent::new(ctx, options).table()
}
