//! Test support shared by the workspace: a scripted OpenAI-compatible mock model server.
//!
//! [`MockModelServer`] listens on `127.0.0.1` (port 0 by default), answers
//! `POST …/chat/completions`, `POST …/responses` and `POST …/messages` (Anthropic Messages)
//! with the next [`MockResponse`] of its
//! [`MockScript`] — streamed turns rendered in the wire format of the request path, HTTP
//! errors, or non-SSE bodies — and records every model request ([`RecordedRequest`]).
//! `GET …/models` lists `mock-model`. Control routes: `GET /__mock/requests` (recorded
//! requests as JSON), `DELETE /__mock/requests` (clear them), `POST /__mock/script` (replace
//! the script). Only model requests (and model-path requests with a bad body) are recorded.
//!
//! The `mock-model` binary serves the same thing for non-Rust tests and bench scripts.
//!
//! This crate knows the wire formats only as a server would; it must not depend on the
//! model client it is used to test.

mod recorded;
mod render;
mod script;
mod server;

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use oi_config::provider::ModelProviderInfo;
use oi_protocol::config_types::WireApi;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

pub use oi_protocol::models::TokenUsage;
pub use recorded::RecordedRequest;
pub use script::{MockEndpoint, MockResponse, MockRule, MockScript, MockToolCall, MockTurn};

/// The mock's token count for a request body of `body_bytes` bytes: bytes / 4, rounded up.
/// Real tokenizers give about that for English and code; what matters in tests is that the
/// mock and the assertions agree.
pub fn approx_tokens(body_bytes: usize) -> u64 {
    (body_bytes as u64).div_ceil(4)
}

/// The recorded stream `name` from this crate's `fixtures/` directory, e.g.
/// `fixture("vllm/hermes-text-tool-call.sse")`. Each fixture is an SSE body as a real server
/// sends it, with `: ` comment lines (ignored by SSE parsers) citing the source of the format.
///
/// # Panics
/// When the fixture does not exist: a test that names a missing fixture is broken.
pub fn fixture(name: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name);
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("test fixture {} cannot be read: {e}", path.display()))
}

/// A running mock model server. Dropping it shuts it down, open streams included.
pub struct MockModelServer {
    addr: SocketAddr,
    state: Arc<server::State>,
    task: JoinHandle<()>,
}

impl MockModelServer {
    /// Starts serving `script` on `127.0.0.1` at a free port. Needs a Tokio runtime.
    pub async fn start(script: MockScript) -> std::io::Result<Self> {
        Self::bind(script, 0).await
    }

    /// Starts serving `script` on `127.0.0.1:port` (0 = any free port).
    pub async fn bind(script: MockScript, port: u16) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = listener.local_addr()?;
        let state = server::State::new(script);
        let task = tokio::spawn(server::accept_loop(listener, state.clone()));
        Ok(Self { addr, state, task })
    }

    /// `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The loopback address the mock listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every model request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.state.requests()
    }

    /// Waits until at least `n` requests have arrived or `timeout` passes, then returns all
    /// requests received (fewer than `n` on timeout; assert on the length).
    pub async fn wait_for_requests(&self, n: usize, timeout: Duration) -> Vec<RecordedRequest> {
        let mut rx = self.state.count.subscribe();
        let _ = tokio::time::timeout(timeout, rx.wait_for(|count| *count >= n)).await;
        self.requests()
    }

    /// Forgets the recorded requests.
    pub fn clear_requests(&self) {
        self.state.clear_requests();
    }

    /// Replaces the script; the next request gets its first response.
    pub fn set_script(&self, script: MockScript) {
        self.state.set_script(script);
    }

    /// A provider entry pointing at this server: no key, no retries (a failing test fails
    /// fast), default idle timeout.
    pub fn provider(&self, wire_api: WireApi) -> ModelProviderInfo {
        ModelProviderInfo {
            name: "Mock".to_string(),
            base_url: Some(self.base_url()),
            env_key: None,
            env_key_instructions: None,
            wire_api,
            query_params: None,
            http_headers: None,
            env_http_headers: None,
            request_max_retries: Some(0),
            stream_max_retries: Some(0),
            stream_idle_timeout_ms: None,
            requires_openai_auth: false,
            send_reasoning_content: None,
            harness: None,
            supports_parallel_tool_calls: None,
            auth_header: None,
        }
    }

    /// A `config.toml` fragment selecting this server as provider `provider_id` with model
    /// `mock-model`, no retries, for tests that start the real binary. It starts with
    /// top-level keys and ends inside a table: put other top-level keys before it.
    pub fn config_toml(&self, provider_id: &str, wire_api: WireApi) -> String {
        let wire = wire_api.as_str();
        format!(
            "model = \"mock-model\"\nmodel_provider = \"{provider_id}\"\n\n\
             [model_providers.{provider_id}]\nname = \"Mock\"\nbase_url = \"{}\"\n\
             wire_api = \"{wire}\"\nrequest_max_retries = 0\nstream_max_retries = 0\n",
            self.base_url()
        )
    }
}

impl Drop for MockModelServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl std::fmt::Debug for MockModelServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MockModelServer")
            .field("base_url", &self.base_url())
            .finish_non_exhaustive()
    }
}
