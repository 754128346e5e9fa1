//! What the mock model answers: a script of responses, consumed one per model request.
//!
//! Everything here is plain serde data so Python tests and bench scripts can write the same
//! scripts as JSON, e.g.
//! `{"responses":[{"type":"turn","text":"hi"},{"type":"error","status":429,"body":"slow down","retry_after":"0"}]}`.

use std::collections::BTreeMap;

use oi_protocol::models::TokenUsage;
use serde::{Deserialize, Serialize};

/// Responses are used in order, one per model request; after the last one every request gets
/// `fallback`, or HTTP 500 "mock script exhausted" when there is none.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MockScript {
    /// The answers, one per request, in order.
    #[serde(default)]
    pub responses: Vec<MockResponse>,
    /// The answer to every request after the last of `responses`.
    #[serde(default)]
    pub fallback: Option<MockResponse>,
    /// Behave like a server with this context window (tokens counted as body bytes / 4, see
    /// [`crate::approx_tokens`]): a larger request gets HTTP 400 with vLLM's
    /// "maximum context length" error and does not use up a scripted response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context_window: Option<u64>,
    /// Report usage on every turn that has none scripted: `input_tokens` = the request's
    /// approximate tokens, like a server that counts the prompt.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub report_usage: bool,
    /// List `context_window` in `GET …/models` as vLLM does (`max_model_len`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub list_context_window: bool,
    /// Requests whose body contains a rule's text get the rule's response instead of the
    /// next scripted one (the script does not advance), e.g. to answer a client's
    /// summarization requests whenever they come.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rules: Vec<MockRule>,
    /// Canned answers to a server's metadata requests (`GET /props`, `GET /api/ps`,
    /// `POST /api/show`...), e.g. the recorded bodies in `fixtures/servers/`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub endpoints: Vec<MockEndpoint>,
    /// Behave like Ollama with a window of this many tokens: a larger request is not
    /// refused but cut, and the usage reported counts only what was kept (this many
    /// prompt tokens). Usage is reported on every turn that has none scripted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub silently_truncate_at: Option<u64>,
}

/// See [`MockScript::endpoints`]. The last matching entry wins.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MockEndpoint {
    /// `GET` or `POST`.
    pub method: String,
    /// Matched against the end of the request path, e.g. `/api/ps`.
    pub path: String,
    /// The JSON body answered with 200.
    pub body: serde_json::Value,
    /// Only answer once a request whose path ends with this was made (e.g. `/api/ps`
    /// lists the model only after `/api/generate` loaded it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after: Option<String>,
}

/// See [`MockScript::rules`].
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MockRule {
    /// Matched against the raw request body (JSON text, so quotes and newlines are escaped).
    pub contains: String,
    /// The answer given to a request the rule matches.
    pub response: MockResponse,
}

impl MockScript {
    /// These responses in order, then "mock script exhausted" errors.
    pub fn new(responses: Vec<MockResponse>) -> Self {
        Self {
            responses,
            ..Self::default()
        }
    }

    /// One turn per request, in order.
    pub fn turns(turns: impl IntoIterator<Item = MockTurn>) -> Self {
        Self::new(turns.into_iter().map(MockResponse::Turn).collect())
    }

    /// These responses round-robin, forever (benchmarks, long sessions).
    pub fn cycle(responses: Vec<MockResponse>) -> Self {
        Self {
            fallback: Some(MockResponse::Cycle { responses }),
            ..Self::default()
        }
    }

    /// The same turn for every request, forever.
    pub fn always(turn: MockTurn) -> Self {
        Self {
            fallback: Some(MockResponse::Turn(turn)),
            ..Self::default()
        }
    }

    /// Rejects requests over `tokens` (see [`MockScript::context_window`]).
    pub fn with_context_window(mut self, tokens: u64) -> Self {
        self.context_window = Some(tokens);
        self
    }

    /// Lists the context window in `GET …/models` (see [`MockScript::list_context_window`]).
    pub fn listing_context_window(mut self) -> Self {
        self.list_context_window = true;
        self
    }

    /// Reports prompt usage on every turn (see [`MockScript::report_usage`]).
    pub fn reporting_usage(mut self) -> Self {
        self.report_usage = true;
        self
    }

    /// Answers requests whose body contains `contains` with `response` (see
    /// [`MockScript::rules`]).
    pub fn with_rule(
        mut self,
        contains: impl Into<String>,
        response: impl Into<MockResponse>,
    ) -> Self {
        self.rules.push(MockRule {
            contains: contains.into(),
            response: response.into(),
        });
        self
    }

    /// Answers `method path` with `body` (see [`MockScript::endpoints`]).
    pub fn with_endpoint(mut self, method: &str, path: &str, body: serde_json::Value) -> Self {
        self.endpoints.push(MockEndpoint {
            method: method.into(),
            path: path.into(),
            body,
            after: None,
        });
        self
    }

    /// Answers `method path` with `body` once a request to `after` was made.
    pub fn with_endpoint_after(
        mut self,
        method: &str,
        path: &str,
        body: serde_json::Value,
        after: &str,
    ) -> Self {
        self.endpoints.push(MockEndpoint {
            method: method.into(),
            path: path.into(),
            body,
            after: Some(after.into()),
        });
        self
    }

    /// Cuts requests over `tokens` instead of refusing them (see
    /// [`MockScript::silently_truncate_at`]).
    pub fn silently_truncating_at(mut self, tokens: u64) -> Self {
        self.silently_truncate_at = Some(tokens);
        self
    }

    /// Sets what every request after the scripted ones gets.
    pub fn with_fallback(mut self, fallback: impl Into<MockResponse>) -> Self {
        self.fallback = Some(fallback.into());
        self
    }
}

/// One answer to one model request.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum MockResponse {
    /// A streamed model turn, rendered in the wire format of the request path
    /// (`/chat/completions` or `/responses`).
    Turn(MockTurn),
    /// An HTTP error: JSON content type when `body` is JSON, else text/plain.
    Error {
        /// The HTTP status.
        status: u16,
        /// The response body (JSON or text).
        #[serde(default)]
        body: String,
        /// Sent as the `Retry-After` header, verbatim.
        #[serde(default)]
        retry_after: Option<String>,
        /// Sent as `retry-after-ms` (the OpenAI-style millisecond hint), verbatim.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        retry_after_ms: Option<String>,
    },
    /// A non-SSE answer, e.g. 200 `text/html` from a misconfigured base URL.
    NotSse {
        /// The HTTP status.
        status: u16,
        /// The `Content-Type` header sent.
        content_type: String,
        /// The response body.
        #[serde(default)]
        body: String,
    },
    /// Round-robin over `responses` (each use of this entry takes the next one). Meant as the
    /// script's `fallback`; see [`MockScript::cycle`].
    Cycle {
        /// The answers taken in turn, starting over after the last.
        responses: Vec<MockResponse>,
    },
    /// A recorded event stream replayed byte for byte as `text/event-stream`, whatever the
    /// request path: the exact bytes a real server sent (see [`crate::fixture`]).
    Recorded {
        /// The recorded stream's bytes.
        body: String,
        /// Send the body in writes of this many bytes (default: one write per SSE event),
        /// so lines and UTF-8 characters get cut the way a network can cut them.
        #[serde(default)]
        write_bytes: Option<usize>,
    },
}

impl MockResponse {
    /// An HTTP error with `status` and `body`, no retry hint.
    pub fn error(status: u16, body: impl Into<String>) -> Self {
        MockResponse::Error {
            status,
            body: body.into(),
            retry_after: None,
            retry_after_ms: None,
        }
    }

    /// HTTP 429 with a `Retry-After` header.
    pub fn rate_limited(retry_after: impl Into<String>) -> Self {
        MockResponse::Error {
            status: 429,
            body: r#"{"error":{"message":"Rate limit reached","type":"rate_limit_error"}}"#.into(),
            retry_after: Some(retry_after.into()),
            retry_after_ms: None,
        }
    }

    /// HTTP 429 with a `retry-after-ms` header, sent verbatim (e.g. `"1e30"`, `"NaN"`).
    pub fn rate_limited_ms(retry_after_ms: impl Into<String>) -> Self {
        MockResponse::Error {
            status: 429,
            body: r#"{"error":{"message":"Rate limit reached","type":"rate_limit_error"}}"#.into(),
            retry_after: None,
            retry_after_ms: Some(retry_after_ms.into()),
        }
    }

    /// Replays a recorded stream (one write per SSE event).
    pub fn recorded(body: impl Into<String>) -> Self {
        MockResponse::Recorded {
            body: body.into(),
            write_bytes: None,
        }
    }

    /// Replays a recorded stream in writes of `n` bytes.
    pub fn recorded_in_writes_of(body: impl Into<String>, n: usize) -> Self {
        MockResponse::Recorded {
            body: body.into(),
            write_bytes: Some(n),
        }
    }

    /// A non-SSE answer: `status`, `content_type` and `body` as given.
    pub fn not_sse(status: u16, content_type: impl Into<String>, body: impl Into<String>) -> Self {
        MockResponse::NotSse {
            status,
            content_type: content_type.into(),
            body: body.into(),
        }
    }
}

impl From<MockTurn> for MockResponse {
    fn from(turn: MockTurn) -> Self {
        MockResponse::Turn(turn)
    }
}

/// A model turn: optional reasoning, optional text, tool calls, plus knobs that reproduce the
/// quirks of real servers. Every field has a default, so `{"text":"hi"}` is a whole turn.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MockTurn {
    /// Reasoning text streamed before the answer.
    pub reasoning: Option<String>,
    /// The answer's text.
    pub text: Option<String>,
    /// Tool calls streamed after the text, in order.
    pub tool_calls: Vec<MockToolCall>,
    /// Split text, reasoning and arguments into deltas of this many chars (default: whole).
    pub chunk_size: Option<usize>,
    /// Pause between SSE events.
    pub delay_ms_between_chunks: Option<u64>,
    /// Send this many SSE events, then cut the connection (no clean end of the body).
    pub disconnect_after_chunks: Option<usize>,
    /// Send this many SSE events, then keep the connection open and silent (idle timeouts).
    pub stall_after_chunks: Option<usize>,
    /// Chat: no `id` on tool-call deltas. Responses: no `call_id` on function calls.
    pub omit_tool_call_ids: bool,
    /// Chat: no `index` on tool-call deltas.
    pub omit_tool_call_index: bool,
    /// Chat: each call in one chunk with its full arguments (many open-model servers).
    pub whole_tool_calls: bool,
    /// Chat: sent as a final chunk with empty `choices`. Responses: in `response.completed`.
    pub usage: Option<TokenUsage>,
    /// Insert a `data:` line that is not JSON after the first event.
    pub malformed_line: bool,
    /// Chat: end after the `finish_reason` chunk without `data: [DONE]`.
    /// Responses: end without `response.completed`.
    pub omit_done: bool,
    /// Chat: the delta field carrying reasoning, `reasoning_content` (default) or `reasoning`.
    pub reasoning_field: Option<String>,
    /// Extra response headers, e.g. `x-ratelimit-*`.
    pub headers: BTreeMap<String, String>,
}

impl MockTurn {
    /// A plain text answer.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: Some(text.into()),
            ..Self::default()
        }
    }

    /// A text answer streamed as exactly `n` deltas of 8 chars (`"t000000 "`, `"t000001 "`, ...).
    pub fn text_deltas(n: usize) -> Self {
        let pieces: Vec<String> = (0..n).map(|i| format!("t{:06} ", i % 1_000_000)).collect();
        Self {
            chunk_size: Some(8),
            ..Self::text(pieces.concat())
        }
    }

    /// One tool call with JSON arguments.
    pub fn tool_call(name: impl Into<String>, arguments: serde_json::Value) -> Self {
        Self::default().with_tool_call(name, arguments)
    }

    /// One tool call with raw arguments (may be invalid JSON).
    pub fn tool_call_raw(name: impl Into<String>, arguments: impl Into<String>) -> Self {
        Self::default().with_tool_call_raw(name, arguments)
    }

    /// This turn answering `text`.
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.text = Some(text.into());
        self
    }

    /// This turn reasoning `reasoning` first.
    pub fn with_reasoning(mut self, reasoning: impl Into<String>) -> Self {
        self.reasoning = Some(reasoning.into());
        self
    }

    /// This turn with one more tool call, its arguments as JSON.
    pub fn with_tool_call(self, name: impl Into<String>, arguments: serde_json::Value) -> Self {
        self.with_tool_call_raw(name, arguments.to_string())
    }

    /// This turn with one more tool call, its argument string as given (may be invalid JSON).
    pub fn with_tool_call_raw(
        mut self,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        self.tool_calls.push(MockToolCall {
            id: None,
            name: name.into(),
            arguments: arguments.into(),
            namespace: None,
        });
        self
    }

    /// Sets the id of the last added tool call.
    pub fn with_call_id(mut self, id: impl Into<String>) -> Self {
        if let Some(call) = self.tool_calls.last_mut() {
            call.id = Some(id.into());
        }
        self
    }

    /// This turn streamed in deltas of `chars` characters.
    pub fn chunked(mut self, chars: usize) -> Self {
        self.chunk_size = Some(chars);
        self
    }

    /// This turn with `ms` milliseconds between SSE events.
    pub fn with_delay_ms(mut self, ms: u64) -> Self {
        self.delay_ms_between_chunks = Some(ms);
        self
    }

    /// This turn cut off after `events` SSE events.
    pub fn disconnect_after(mut self, events: usize) -> Self {
        self.disconnect_after_chunks = Some(events);
        self
    }

    /// This turn going silent after `events` SSE events, connection kept open.
    pub fn stall_after(mut self, events: usize) -> Self {
        self.stall_after_chunks = Some(events);
        self
    }

    /// This turn's tool calls sent without ids.
    pub fn without_call_ids(mut self) -> Self {
        self.omit_tool_call_ids = true;
        self
    }

    /// This turn's tool-call deltas sent without `index` (Chat).
    pub fn without_call_index(mut self) -> Self {
        self.omit_tool_call_index = true;
        self
    }

    /// This turn sending each tool call whole in one chunk (Chat).
    pub fn whole_calls(mut self) -> Self {
        self.whole_tool_calls = true;
        self
    }

    /// This turn reporting `usage`.
    pub fn with_usage(mut self, usage: TokenUsage) -> Self {
        self.usage = Some(usage);
        self
    }

    /// This turn with a `data:` line that is not JSON after its first event.
    pub fn with_malformed_line(mut self) -> Self {
        self.malformed_line = true;
        self
    }

    /// This turn ending without its end marker (`[DONE]` or `response.completed`).
    pub fn without_done(mut self) -> Self {
        self.omit_done = true;
        self
    }

    /// This turn sending reasoning in the delta field `field` (Chat).
    pub fn with_reasoning_field(mut self, field: impl Into<String>) -> Self {
        self.reasoning_field = Some(field.into());
        self
    }

    /// This turn's response with one more header.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.insert(name.into(), value.into());
        self
    }
}

/// One scripted tool call.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct MockToolCall {
    /// Sent as the call id; `None` → `call_mock_<n>` (unless the turn omits ids).
    #[serde(default)]
    pub id: Option<String>,
    /// The function called.
    pub name: String,
    /// Raw argument string; may be invalid JSON on purpose.
    #[serde(default)]
    pub arguments: String,
    /// Responses wire only: the namespace the called function belongs to (Codex lists each
    /// MCP server's tools as a namespace tool, `mcp__<server>`, and routes a call by
    /// namespace and name).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}
