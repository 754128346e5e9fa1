//! What front ends see of the MCP servers a thread runs, through the engine: their status
//! ([`crate::Thread::mcp_status`]), the prompts and resources the user asks for
//! ([`crate::Thread::mcp_manager`]), and the browser login of a streamable HTTP server
//! (v2 `mcpServer/oauth/login`). Re-exported from `oi-mcp-client` with their wire shapes
//! unchanged, so a front end depends on the engine only.

/// A server's connection state and what it offers.
pub use oi_mcp_client::{
    McpConnectionManager, McpNegotiatedProtocol, McpProtocolEra, McpServerState, McpServerStatus,
    McpToolInfo,
};

/// A prompt (`prompts/get`) or resource (`resources/read`) as the input to send.
pub mod prompts {
    pub use oi_mcp_client::prompts::{PromptInput, prompt_input, resource_text};
}

/// The OAuth authorization-code login of a configured streamable HTTP server: its
/// challenge, the client secret the config names, and the flow that waits for the
/// browser's redirect and saves the tokens.
pub mod oauth {
    pub use oi_mcp_client::oauth::{
        DEFAULT_LOGIN_TIMEOUT, LoginOptions, client_secret, login, login_challenge,
    };
}
