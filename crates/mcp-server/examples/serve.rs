//! Development entry point for the MCP tools alone (no v2 API):
//! `cargo run -p oi-mcp-server --example serve [mcp-server]` (the optional word lets it
//! stand in for `interpreter mcp-server` in client configs and test scripts).

#[tokio::main]
async fn main() {
    let options = oi_host::HostOptions::new(oi_core::SessionSource::Mcp);
    // The key sealing what 2026-07-28 clients hold (approval states, task ids).
    match oi_config::find_home() {
        Ok(home) => match oi_mcp_server::check_state_key(&home) {
            Ok(None) => {}
            Ok(Some(warning)) => eprintln!("warning: {warning}"),
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(2);
            }
        },
        Err(e) => eprintln!("warning: {e}"),
    }
    let code = oi_host::run_stdio(options, oi_host::Services::new(oi_mcp_server::methods)).await;
    // Exit explicitly: tokio's stdin reader thread may still be blocked in read(2).
    std::process::exit(code);
}
