//! Streaming client for model servers: OpenAI-compatible and Anthropic Messages.
//!
//! Owns: turning a [`Prompt`] (instructions, history as `ResponseItem`s, function tools) into
//! one streaming HTTP request in the provider's wire format (`wire_api = "chat"` →
//! `POST {base_url}/chat/completions`, `"responses"` → `POST {base_url}/responses`,
//! `"messages"` → Anthropic Messages at `POST {base_url}/messages`), request
//! retries with backoff on 429/5xx/connect errors (honouring `Retry-After`), and decoding the
//! SSE answer into a [`ResponseStream`] of [`ResponseEvent`]s, with an idle timeout.
//!
//! Does not know about turns, tools or approval: the engine decides what to do with the
//! events, when to retry a stream that dropped ([`ModelError::is_retryable_stream_error`]),
//! and interrupts a turn by dropping the stream (no background task outlives it).
//!
//! Public surface: [`ModelClient`], [`Prompt`], [`RetryNotice`], [`ResponseStream`],
//! [`ResponseEvent`], [`ModelError`] (with [`ModelError::context_overflow`] to recognise
//! context-length errors, [`classify_overflow`]).

mod call_ids;
pub mod catalog;
mod chat;
mod error;
mod http;
mod looping;
mod messages;
mod overflow;
mod quirks;
mod responses;
mod retry;
mod sse;
mod text_harness;
pub mod vision;
mod window;

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use futures::Stream;
use oi_config::provider::ModelProviderInfo;
use oi_protocol::config_types::{ReasoningEffort, WireApi};
use oi_protocol::models::{ResponseItem, TokenUsage, ToolSpec};
use oi_protocol::protocol::RateLimitSnapshot;
use reqwest::StatusCode;
use reqwest::header::{CONTENT_TYPE, HeaderMap};

pub use chat::is_run_context;
pub use error::ModelError;
pub use overflow::{ContextOverflow, classify_overflow};
pub use window::{
    ServerWindow, num_ctx_in_ollama_show, trained_in_ollama_show, window_in_llama_cpp_props,
    window_in_lm_studio_models, window_in_model_list, window_in_ollama_ps,
};

/// A tool call left in a final answer that was not run (written inside prose, of a tool
/// that was not offered, or in markup that could not be parsed): the tool it names, `"?"`
/// when the name could not be read. `None` when the text holds no call.
pub fn unrun_tool_call(text: &str, tools: &[ToolSpec]) -> Option<String> {
    chat::text_tools::unrun_call(text, tools)
}

/// The calls of offered tools an answer wrote as JSON instead of making them (fenced, bare,
/// or inside prose), as tool name and arguments (JSON text, shaped for the tool). For an
/// answer whose calls were not taken as calls (see [`unrun_tool_call`]).
pub fn written_tool_calls(text: &str, tools: &[ToolSpec]) -> Vec<(String, String)> {
    chat::text_tools::json_calls::written_calls(text, tools)
        .into_iter()
        .map(|c| (c.name, c.arguments))
        .collect()
}

/// The end (exclusive) of the JSON object or array that opens at byte `start` of `text`, by
/// bracket matching outside strings: how model-written JSON that does not parse is cut
/// apart. `None` when it does not close.
pub fn json_value_end(text: &str, start: usize) -> Option<usize> {
    chat::text_tools::json_calls::object_end(text, start)
}

/// A fresh call id every provider accepts (9 alphanumerics), for a call the engine makes on
/// the model's behalf.
pub fn new_call_id() -> String {
    call_ids::synthesize()
}

/// The tools section a text-mode prompt (`tool_call_format = "text"`) adds to the
/// instructions, so callers can count its size in their estimates.
pub fn text_tools_section(tools: &[ToolSpec]) -> String {
    text_harness::tool_section(tools)
}

use http::ErrorContext;

/// Everything one model request needs.
#[derive(Clone, Debug, Default)]
pub struct Prompt {
    /// The model name sent to the provider.
    pub model: String,
    /// System prompt (chat: the first `system` message; responses: `instructions`).
    pub instructions: String,
    /// Full history, oldest first.
    pub input: Vec<ResponseItem>,
    /// Function tools offered to the model.
    pub tools: Vec<ToolSpec>,
    /// How hard a reasoning model thinks; `None` leaves it to the provider.
    pub reasoning_effort: Option<ReasoningEffort>,
    /// `auto`, `concise`, `detailed` or `none`: Responses `reasoning.summary` (Chat has no
    /// equivalent, so it is not sent there).
    pub reasoning_summary: Option<String>,
    /// `low`, `medium` or `high`: Responses `text.verbosity`, Chat `verbosity`.
    pub verbosity: Option<String>,
    /// The engine can take several calls in one response (it runs the ones that cannot
    /// write concurrently, the rest in order). Sent as `parallel_tool_calls` unless the
    /// provider says `supports_parallel_tool_calls = false`.
    pub parallel_tool_calls: bool,
    /// The most tokens the answer may take (Chat `max_tokens`, Responses
    /// `max_output_tokens`). `None`: no bound is sent.
    pub max_output_tokens: Option<u32>,
    /// Describe the tools in the instructions and parse calls from the answer text instead
    /// of sending `tools` (`tool_call_format = "text"`; see `text_harness`).
    pub tools_as_text: bool,
    /// Sampling temperature; `None`: the server's default (only MCP sampling sets it).
    pub temperature: Option<f32>,
    /// Sequences that end the answer: sent as Chat `stop` (at most [`MAX_STOP_SEQUENCES`],
    /// what OpenAI accepts); Responses has no such field, so callers also cut the text.
    pub stop: Vec<String>,
}

/// The most stop sequences a Chat request carries.
pub const MAX_STOP_SEQUENCES: usize = 4;

/// Passed to `on_retry` before each retry of a failed request.
#[derive(Clone, Debug, PartialEq)]
pub struct RetryNotice {
    /// 1-based number of the retry about to happen.
    pub attempt: u64,
    /// `request_max_retries` of the provider.
    pub max_attempts: u64,
    /// How long the client waits before this retry.
    pub delay: Duration,
    /// Why the previous attempt failed, e.g. "HTTP 429 ...".
    pub reason: String,
}

/// One event of a model response, in arrival order.
#[derive(Clone, Debug, PartialEq)]
pub enum ResponseEvent {
    /// The provider accepted the request and began its response.
    Created,
    /// A piece of the answer's text.
    OutputTextDelta(String),
    /// A piece of the model's reasoning text.
    ReasoningDelta(String),
    /// A finished item: assistant `Message`, `Reasoning`, or `FunctionCall` (call_id
    /// synthesized as 9 random alphanumerics when the model omitted it or reused one;
    /// arguments kept verbatim even if not valid JSON).
    OutputItemDone(ResponseItem),
    /// The server left tool calls in the answer text (its tool-call parser is off, or the
    /// model wrote a shape no parser catches); they were recovered and follow as
    /// `FunctionCall` items. Comes before those items.
    ToolCallsRecoveredFromText {
        /// The markup family, e.g. "Hermes/Qwen `<tool_call>`".
        format: String,
        /// The server settings that make the server parse these calls itself.
        server_hint: String,
        /// The calls are in the template's own markup, which the server's tool-call parser
        /// would have caught: it is off. `false` for shapes no parser catches (plain JSON).
        parser_off: bool,
    },
    /// The model stopped at its output token limit (chat `finish_reason: "length"`,
    /// Responses `incomplete` for `max_output_tokens`, Messages `max_tokens`): the last text
    /// or tool call is cut off. Comes just before `Completed`.
    OutputLimitReached,
    /// The server paused a long answer (Messages `stop_reason: "pause_turn"`): sending the
    /// conversation again, this answer included, lets the model continue it. Comes just
    /// before `Completed`.
    Paused,
    /// The model fell into a loop (the end of its output was one piece repeated over and
    /// over): the stream was ended there and the repeated tail cut from the answer; the last
    /// text or tool call is cut off, as at the output limit. Comes just before `Completed`
    /// (which carries no usage: the server never finished).
    RepetitionStopped,
    /// The last event of a successful response.
    Completed {
        /// The provider's id for the response, when it sends one.
        response_id: Option<String>,
        /// Tokens the request used, when the provider reported them.
        token_usage: Option<TokenUsage>,
    },
}

/// The events of one response. Ends after `Completed` or after the first error. Dropping it
/// closes the connection.
pub struct ResponseStream {
    inner: Pin<Box<dyn Stream<Item = Result<ResponseEvent, ModelError>> + Send>>,
}

impl ResponseStream {
    pub(crate) fn new(
        inner: Pin<Box<dyn Stream<Item = Result<ResponseEvent, ModelError>> + Send>>,
    ) -> Self {
        Self { inner }
    }
}

impl Stream for ResponseStream {
    type Item = Result<ResponseEvent, ModelError>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        self.inner.as_mut().poll_next(cx)
    }
}

impl std::fmt::Debug for ResponseStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ResponseStream")
    }
}

/// A client for one provider. Cheap to clone; clones share the connection pool and the
/// rate-limit snapshot.
#[derive(Clone)]
pub struct ModelClient {
    inner: Arc<Inner>,
}

struct Inner {
    provider: ModelProviderInfo,
    provider_id: String,
    http: reqwest::Client,
    /// Includes the bearer key; never logged.
    headers: HeaderMap,
    url: String,
    rate_limits: Mutex<Option<RateLimitSnapshot>>,
}

impl std::fmt::Debug for ModelClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModelClient")
            .field("provider_id", &self.inner.provider_id)
            .field("url", &self.inner.url)
            .finish_non_exhaustive()
    }
}

/// Upper bound for reading an error body, which is only shown to the user.
const ERROR_BODY_LIMIT: usize = 64 * 1024;
const CONNECT_TIMEOUT: Duration = Duration::from_secs(30);

impl ModelClient {
    /// A client for `provider`. Its API key comes from the `env_key` variable, else from the
    /// credentials file under `home` (the configuration's home directory).
    ///
    /// Fails with [`ModelError::MissingApiKey`] (the provider's message) when `env_key` is set
    /// but neither has a key, and with [`ModelError::Config`] when the provider has no
    /// `base_url` or an invalid header.
    pub fn new(
        provider: ModelProviderInfo,
        provider_id: String,
        home: &std::path::Path,
    ) -> Result<Self, ModelError> {
        let api_key = provider.api_key(home).map_err(ModelError::MissingApiKey)?;
        let base = provider
            .base_url
            .as_deref()
            .map(str::trim)
            .filter(|b| !b.is_empty())
            .ok_or_else(|| {
                ModelError::Config(format!(
                    "model provider `{provider_id}` has no `base_url`; set `base_url` in [model_providers.{provider_id}], e.g. \"http://localhost:11434/v1\""
                ))
            })?;
        if !url::Url::parse(base).is_ok_and(|u| matches!(u.scheme(), "http" | "https")) {
            return Err(ModelError::Config(format!(
                "`model_providers.{provider_id}.base_url` = \"{base}\" is not an http(s) URL; write it like \"http://localhost:11434/v1\""
            )));
        }
        let url = match provider.wire_api {
            WireApi::Chat => format!("{}/chat/completions", base.trim_end_matches('/')),
            WireApi::Responses => format!("{}/responses", base.trim_end_matches('/')),
            WireApi::Messages => messages::url(base),
        };
        let headers = http::build_headers(&provider, &provider_id, api_key.as_deref())?;
        let mut builder = oi_http::client_builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .user_agent(concat!("open-interpreter/", env!("CARGO_PKG_VERSION")));
        // A local model server is never behind the user's HTTP proxy.
        if is_loopback(base) {
            builder = builder.no_proxy();
        }
        let http = builder
            .build()
            .map_err(|e| ModelError::Config(format!("cannot create the HTTP client: {e}")))?;
        Ok(Self {
            inner: Arc::new(Inner {
                provider,
                provider_id,
                http,
                headers,
                url,
                rate_limits: Mutex::new(None),
            }),
        })
    }

    /// The config's id of the provider this client talks to.
    pub fn provider_id(&self) -> &str {
        &self.inner.provider_id
    }

    /// Latest rate-limit snapshot from `x-ratelimit-*` headers seen so far.
    pub fn rate_limits(&self) -> Option<RateLimitSnapshot> {
        self.inner
            .rate_limits
            .lock()
            .map(|g| g.clone())
            .unwrap_or_else(|poisoned| poisoned.into_inner().clone())
    }

    /// Sends the request, retrying 429/5xx/connect errors up to `request_max_retries` with
    /// exponential backoff + jitter, honouring `Retry-After`. Calls `on_retry` before each
    /// retry. Returns once the response headers are in and the stream is open.
    ///
    /// Waiting for the response headers is bounded by `stream_idle_timeout`
    /// ([`ModelError::IdleTimeout`]). Dropping the future cancels the request.
    pub async fn stream(
        &self,
        prompt: &Prompt,
        on_retry: &(dyn Fn(RetryNotice) + Send + Sync),
    ) -> Result<ResponseStream, ModelError> {
        let inner = &*self.inner;
        let provider = &inner.provider;
        // The decoder still gets the real tools: it parses the calls out of the text.
        let rendered;
        let wire_prompt = if prompt.tools_as_text {
            rendered = text_harness::render(prompt);
            &rendered
        } else {
            prompt
        };
        let quirks = quirks::for_model(provider, &inner.provider_id, &prompt.model);
        let body = match provider.wire_api {
            WireApi::Chat => chat::request_body(wire_prompt, chat::ChatRequestOptions { quirks }),
            WireApi::Responses => responses::request_body(wire_prompt, quirks),
            WireApi::Messages => messages::request_body(
                wire_prompt,
                messages::RequestOptions {
                    parallel: wire_prompt.parallel_tool_calls && quirks.parallel_tool_calls,
                    cache_markers: quirks.cache_markers,
                },
            ),
        };
        let max_retries = provider.request_max_retries();
        let idle = provider.stream_idle_timeout();
        let query: Vec<(&String, &String)> = provider.query_params.iter().flatten().collect();
        let mut attempt: u64 = 0;
        loop {
            let cx = ErrorContext {
                url: &inner.url,
                provider,
                provider_id: &inner.provider_id,
                model: &prompt.model,
                retries: attempt,
            };
            // Never the headers: they carry the API key.
            tracing::debug!(
                provider = %inner.provider_id,
                model = %prompt.model,
                url = %inner.url,
                items = prompt.input.len(),
                attempt,
                "model request"
            );
            let request = inner
                .http
                .post(&inner.url)
                .headers(inner.headers.clone())
                .query(&query)
                .json(&body)
                .send();
            let (reason, server_delay) = match tokio::time::timeout(idle, request).await {
                Err(_) => return Err(ModelError::IdleTimeout(idle)),
                Ok(Err(e)) => {
                    if attempt >= max_retries {
                        let e = http::connect_error(&e, &cx);
                        // Debug, not warn: the engine reports it to the user as an `error` event.
                        tracing::debug!(provider = %inner.provider_id, "model request failed: {e}");
                        return Err(e);
                    }
                    let reason =
                        format!("could not reach {}: {}", inner.url, http::error_chain(&e));
                    (reason, None)
                }
                Ok(Ok(resp)) => {
                    self.record_rate_limits(resp.headers());
                    let status = resp.status();
                    if status.is_success() {
                        return open_stream(resp, provider.wire_api, idle, &prompt.tools).await;
                    }
                    let server_delay = retry::retry_after(resp.headers());
                    let text = http::read_body_limited(resp, ERROR_BODY_LIMIT, idle).await;
                    // What retrying cannot fix (a server flag, an account, memory) is said
                    // at once instead of after four retries.
                    let retryable = (status == StatusCode::TOO_MANY_REQUESTS
                        || status.is_server_error())
                        && http::permanent_failure(&text).is_none();
                    if !retryable || attempt >= max_retries {
                        let e = http::http_error(status, &text, &cx);
                        // Debug, not warn: the engine reports it to the user as an `error` event.
                        tracing::debug!(provider = %inner.provider_id, "model request failed: {e}");
                        return Err(e);
                    }
                    let reason = format!("HTTP {status}: {}", http::provider_message(&text));
                    (reason, server_delay)
                }
            };
            attempt += 1;
            let delay = server_delay.unwrap_or_else(|| retry::backoff(attempt));
            // `on_retry` is how the user hears about it (a `stream_error` event); the log line
            // is for debugging only, so it does not print the same thing twice.
            tracing::debug!(
                provider = %inner.provider_id,
                attempt,
                max_retries,
                ?delay,
                "model request failed, retrying: {reason}"
            );
            on_retry(RetryNotice {
                attempt,
                max_attempts: max_retries,
                delay,
                reason,
            });
            tokio::time::sleep(delay).await;
        }
    }

    fn record_rate_limits(&self, headers: &HeaderMap) {
        if let Some(snapshot) = http::rate_limit_snapshot(headers) {
            let mut guard = self
                .inner
                .rate_limits
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            *guard = Some(snapshot);
        }
    }
}

/// Checks that a 2xx answer is an event stream and wraps it in the wire's decoder.
async fn open_stream(
    resp: reqwest::Response,
    wire: WireApi,
    idle: Duration,
    tools: &[ToolSpec],
) -> Result<ResponseStream, ModelError> {
    let content_type = resp
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase();
    // A missing content type is tolerated (some minimal servers omit it); anything else must
    // be an event stream.
    if !content_type.is_empty() && !content_type.contains("event-stream") {
        let url = resp.url().to_string();
        let status = resp.status();
        let text = http::read_body_limited(resp, ERROR_BODY_LIMIT, idle).await;
        return Err(ModelError::BadResponse(format!(
            "{url} answered HTTP {status} with `{content_type}` instead of a `text/event-stream` stream: {}. Check that `base_url` points at the model API (usually ending in /v1) and that `wire_api` matches what the server speaks",
            sse::truncate(text.trim(), 300)
        )));
    }
    let body = sse::error_lines_as_events(resp.bytes_stream());
    Ok(match wire {
        WireApi::Chat => sse::response_stream(body, chat::ChatDecoder::new(tools.to_vec()), idle),
        WireApi::Responses => {
            sse::response_stream(body, responses::ResponsesDecoder::new(tools.to_vec()), idle)
        }
        WireApi::Messages => {
            sse::response_stream(body, messages::MessagesDecoder::new(tools.to_vec()), idle)
        }
    })
}

/// Whether `base_url` points at this machine (`localhost` or a loopback address): such a
/// server is never reached through the user's HTTP proxy.
pub(crate) fn is_loopback(base_url: &str) -> bool {
    match url::Url::parse(base_url)
        .ok()
        .as_ref()
        .and_then(url::Url::host)
    {
        Some(url::Host::Domain(host)) => host.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}

/// An id for a tool call the model sent without one: 9 alphanumerics, the one shape every
/// server accepts (see `call_ids`).
pub(crate) fn synthesize_call_id() -> String {
    call_ids::synthesize()
}

#[cfg(test)]
mod tests {
    #[test]
    fn loopback_hosts() {
        for url in [
            "http://localhost:11434/v1",
            "http://127.0.0.1:8000/v1",
            "http://[::1]:1234/v1",
            "http://user:pw@127.0.0.2/v1",
        ] {
            assert!(super::is_loopback(url), "{url}");
        }
        for url in ["https://api.openai.com/v1", "http://10.0.0.5:8000/v1"] {
            assert!(!super::is_loopback(url), "{url}");
        }
    }
}
