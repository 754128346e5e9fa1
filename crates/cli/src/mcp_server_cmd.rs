//! `interpreter mcp-server` and `interpreter app-server`: one JSON-RPC connection serving
//! the MCP tools (`oi-mcp-server`, unless [`McpServerOptions::without_mcp`]) and the v2/v1
//! API (`oi-app-server`) side by side. The two services are siblings; this is the one place
//! that puts their method tables on the same connection.

use oi_app_server::AppServerContext;
use oi_jsonrpc::MethodTable;
use oi_mcp_server::{ConnectionContext, McpServerOptions};

/// Serves both APIs on stdin/stdout until stdin closes or a termination signal arrives;
/// returns the exit code.
pub async fn run(opts: McpServerOptions) -> i32 {
    oi_mcp_server::run_main(opts, v2_methods).await
}

/// The v2 and v1 methods, sharing the MCP tools' thread manager and reader registry so
/// threads cross between the APIs and each thread has one reader.
fn v2_methods(ctx: &ConnectionContext) -> MethodTable {
    oi_app_server::methods(AppServerContext {
        manager: ctx.manager.clone(),
        config: ctx.options.config_load(),
        connection: ctx.connection.clone(),
        readers: ctx.readers.clone(),
        mcp_methods: ctx.mcp_methods.clone(),
    })
}
