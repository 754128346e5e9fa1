//! The MCP wire of `interpreter mcp-server`, declared as types (rmcp's model types plus the
//! few shapes that are ours), apart from any transport and from what the methods do.
//!
//! * [`era`]: which protocol era a request belongs to — the `initialize` handshake
//!   (2025-11-25 and earlier) or per-request `_meta` (2026-07-28) — and the checks of that
//!   `_meta` (`-32602`, `-32022`).
//! * [`reply`]: how a typed result goes on the wire in each era (`resultType`, server
//!   identity in `_meta`, caching hints; the older shape for the older era).
//! * [`log`]: log messages a request asked for with its `_meta` log level.
//! * [`codex`]: the Codex-compatible shapes: `codex/event` params, the approval
//!   elicitation, the tool result with `structuredContent {threadId, content}`.
//! * [`client_requests`]: the requests we send the client (`elicitation/create`), each
//!   declared with its method, params and result.
//! * [`input`]: approvals as 2026-07-28 input requests, and tasks as `tasks/get` reports
//!   them.
//!
//! The server's identity and capabilities per era are here too.

pub(crate) mod client_requests;
pub(crate) mod codex;
pub(crate) mod era;
pub(crate) mod input;
pub mod log;
pub(crate) mod reply;

use rmcp::model::{
    ExtensionCapabilities, Implementation, JsonObject, PromptsCapability, ResourcesCapability,
    ServerCapabilities, TASKS_EXTENSION_ID, ToolsCapability,
};

/// The server's name in `initialize` results and `serverInfo`.
pub const SERVER_NAME: &str = "openinterpreter-mcp-server";

/// Versions served with the `initialize` handshake, newest first. The older two are what
/// Codex-era clients still send.
pub const HANDSHAKE_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// Versions served per request, with no handshake (what `server/discover` lists, and an
/// unsupported version's error names).
pub const STATELESS_VERSIONS: &[&str] = &["2026-07-28"];

/// The `instructions` given to clients: how the tools are meant to be used.
pub const INSTRUCTIONS: &str = "Use the `codex` tool to start an Open Interpreter agent session with a prompt; \
it returns the agent's final message and a threadId. Continue the same session with `codex-reply` \
and that threadId. Progress streams as `codex/event` notifications; approval prompts arrive as \
elicitation requests. Stored sessions are resources (interpreter://threads/{threadId}).";

/// Who we are, in `initialize` results and every 2026-07-28 result's `_meta`.
pub fn server_implementation() -> Implementation {
    Implementation::new(SERVER_NAME, env!("CARGO_PKG_VERSION")).with_title("Open Interpreter")
}

/// What the server offers. Both eras have the tools, the stored threads as resources (with
/// subscriptions to one thread's updates) and the prompt files. The `initialize` era keeps
/// the `tools.listChanged` it always declared (the list never changes); 2026-07-28 declares
/// only what it does: list changes of threads and prompts on `subscriptions/listen`, log
/// messages on request (the `_meta` log level), and the extensions it speaks (Tasks).
pub fn capabilities(stateless: bool) -> ServerCapabilities {
    let mut tools = ToolsCapability::default();
    let mut resources = ResourcesCapability::default();
    resources.subscribe = Some(true);
    let mut prompts = PromptsCapability::default();
    let mut caps = ServerCapabilities::default();
    if stateless {
        resources.list_changed = Some(true);
        prompts.list_changed = Some(true);
        caps.logging = Some(Default::default());
        caps.extensions = Some(extensions());
    } else {
        tools.list_changed = Some(true);
    }
    caps.tools = Some(tools);
    caps.resources = Some(resources);
    caps.prompts = Some(prompts);
    caps
}

/// The extensions `server/discover` lists: Tasks (`io.modelcontextprotocol/tasks`, no
/// settings): a `codex` / `codex-reply` call whose request declares it returns a task.
pub fn extensions() -> ExtensionCapabilities {
    let mut extensions = ExtensionCapabilities::default();
    extensions.insert(TASKS_EXTENSION_ID.to_string(), JsonObject::new());
    extensions
}
