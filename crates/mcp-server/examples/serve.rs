//! Development entry point for the MCP tools alone (no v2 API):
//! `cargo run -p oi-mcp-server --example serve [mcp-server]` (the optional word lets it
//! stand in for `interpreter mcp-server` in client configs and test scripts).

#[tokio::main]
async fn main() {
    let options = oi_host::HostOptions::new(oi_core::SessionSource::Mcp);
    let code = oi_host::run_stdio(options, oi_host::Services::new(oi_mcp_server::methods)).await;
    // Exit explicitly: tokio's stdin reader thread may still be blocked in read(2).
    std::process::exit(code);
}
