//! Development entry point for the MCP tools alone (no v2 API):
//! `cargo run -p oi-mcp-server --example serve [mcp-server]` (the optional word lets it
//! stand in for `interpreter mcp-server` in client configs and test scripts).

#[tokio::main]
async fn main() {
    let code = oi_mcp_server::run_main(oi_mcp_server::McpServerOptions::default(), |_| {
        oi_jsonrpc::MethodTable::new()
    })
    .await;
    // Exit explicitly: tokio's stdin reader thread may still be blocked in read(2).
    std::process::exit(code);
}
