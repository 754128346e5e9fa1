//! `interpreter app-server`: the v2 and v1 methods alone on a stdio JSON-RPC connection
//! (no MCP lifecycle or tools). The connection plumbing is the MCP server's; this module
//! only chooses what is served on it.

use crate::AppServerExtension;
use oi_mcp_server::McpServerOptions;
use std::sync::Arc;

/// The options of an app-server connection: our extension, without MCP.
pub fn options(
    cli_overrides: Vec<(String, toml::Value)>,
    overrides: oi_config::ConfigOverrides,
) -> McpServerOptions {
    McpServerOptions {
        cli_overrides,
        overrides,
        home: None,
        extensions: vec![Arc::new(AppServerExtension)],
        without_mcp: true,
    }
}

/// Serves stdin/stdout until stdin closes or a termination signal; returns the exit code.
pub async fn run_main(
    cli_overrides: Vec<(String, toml::Value)>,
    overrides: oi_config::ConfigOverrides,
) -> i32 {
    oi_mcp_server::run_main(options(cli_overrides, overrides)).await
}
