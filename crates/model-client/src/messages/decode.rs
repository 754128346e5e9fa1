//! The Messages stream: `message_start`, `content_block_start` / `_delta` / `_stop` per
//! block, `message_delta` (stop reason, usage), `message_stop`, `ping` and `error` events.
//!
//! Blocks are kept by their `index` and turned into items when the message ends: thinking
//! (with its signature), the answer text, then the calls. A tool call's JSON may arrive in
//! any number of `input_json_delta` pieces, or whole in `content_block_start` (some
//! compatible servers send it so). Answer text goes through the same thinking-tag splitter
//! and text-call recovery as the chat wire, for servers that leave a model's markup in it.

use std::collections::{BTreeMap, VecDeque};

use oi_protocol::models::{ResponseItem, TokenUsage, ToolSpec};
use serde_json::Value;

use super::{Thinking, thinking_payload};
use crate::chat::text_tools::{self, TextToolCall};
use crate::chat::think::{Piece, ThinkSplitter};
use crate::chat::{error_text, route_piece};
use crate::sse::{Decoder, Step, typed_event};
use crate::{ModelError, ResponseEvent, synthesize_call_id};

/// Error types that say the server could not finish now, not that the request is wrong:
/// like a dropped stream, the request is worth sending again.
const TRANSIENT_ERRORS: &[&str] = &[
    "overloaded_error",
    "api_error",
    "rate_limit_error",
    "timeout_error",
];

#[derive(Debug)]
enum Block {
    Text,
    Thinking {
        text: String,
        signature: String,
    },
    Redacted {
        data: String,
    },
    ToolUse(ToolUse),
    /// A block this client does not use (server tools, citations).
    Other,
}

#[derive(Debug, Default)]
struct ToolUse {
    id: String,
    name: String,
    /// `input` of `content_block_start`, used when no JSON pieces follow.
    start_input: Option<Value>,
    json: String,
    pieces: usize,
}

impl ToolUse {
    fn arguments(&self) -> String {
        if self.pieces > 0 {
            return self.json.clone();
        }
        match &self.start_input {
            Some(v) if !v.is_null() => v.to_string(),
            _ => "{}".to_string(),
        }
    }
}

#[derive(Debug, Default)]
pub(crate) struct MessagesDecoder {
    created: bool,
    response_id: Option<String>,
    /// Blocks by their `index`, in the order the server numbered them.
    blocks: BTreeMap<u64, Block>,
    /// Answer text of every text block, in order.
    text: String,
    /// Thinking split out of the text (servers without a reasoning parser).
    split_reasoning: String,
    think: ThinkSplitter,
    /// The server sends thinking blocks itself: the text is all answer.
    server_thinking: bool,
    /// A text block already contributed text (the next one is set off by a blank line).
    text_seen: bool,
    stop_reason: Option<String>,
    usage: Usage,
    tools: Vec<ToolSpec>,
}

/// Usage as the API counts it: the uncached prompt, the prompt written to the cache and
/// the prompt read from it are three numbers.
#[derive(Debug, Default, Clone, Copy)]
struct Usage {
    seen: bool,
    input: i64,
    cache_creation: i64,
    cache_read: i64,
    output: i64,
}

impl Usage {
    /// Takes what `u` states; `message_delta` restates the final counts.
    fn merge(&mut self, u: &Value) {
        let num = |k: &str| u.get(k).and_then(Value::as_i64);
        if let Some(n) = num("input_tokens") {
            self.input = n;
            self.seen = true;
        }
        if let Some(n) = num("cache_creation_input_tokens") {
            self.cache_creation = n;
        }
        if let Some(n) = num("cache_read_input_tokens") {
            self.cache_read = n;
        }
        if let Some(n) = num("output_tokens") {
            self.output = n;
            self.seen = true;
        }
    }

    /// The whole prompt is the input, as on the other wires; the part read from the cache
    /// is the cached part.
    fn token_usage(self) -> Option<TokenUsage> {
        if !self.seen {
            return None;
        }
        let input = self.input + self.cache_creation + self.cache_read;
        Some(TokenUsage {
            input_tokens: input,
            cached_input_tokens: self.cache_read,
            output_tokens: self.output,
            reasoning_output_tokens: 0,
            total_tokens: input + self.output,
        })
    }
}

impl MessagesDecoder {
    /// A decoder for the answer to a request that offered `tools`.
    pub(crate) fn new(tools: Vec<ToolSpec>) -> Self {
        Self {
            tools,
            ..Self::default()
        }
    }

    fn on_block_start(&mut self, v: &Value, out: &mut VecDeque<ResponseEvent>) {
        let Some(index) = v.get("index").and_then(Value::as_u64) else {
            return;
        };
        let block = v.get("content_block").unwrap_or(&Value::Null);
        let str_field = |k: &str| {
            block
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        let new = match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                if self.text_seen {
                    self.push_text("\n\n", out);
                }
                let initial = str_field("text");
                if !initial.is_empty() {
                    self.push_text(&initial, out);
                }
                Block::Text
            }
            Some("thinking") => {
                self.server_thinks(out);
                let text = str_field("thinking");
                if !text.is_empty() {
                    out.push_back(ResponseEvent::ReasoningDelta(text.clone()));
                }
                Block::Thinking {
                    text,
                    signature: str_field("signature"),
                }
            }
            Some("redacted_thinking") => {
                self.server_thinks(out);
                Block::Redacted {
                    data: str_field("data"),
                }
            }
            Some("tool_use") => Block::ToolUse(ToolUse {
                id: str_field("id"),
                name: str_field("name"),
                start_input: block.get("input").cloned(),
                ..ToolUse::default()
            }),
            _ => Block::Other,
        };
        self.blocks.insert(index, new);
    }

    fn on_block_delta(&mut self, v: &Value, out: &mut VecDeque<ResponseEvent>) {
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0);
        let delta = v.get("delta").unwrap_or(&Value::Null);
        let text_of = |k: &str| delta.get(k).and_then(Value::as_str).unwrap_or_default();
        match delta.get("type").and_then(Value::as_str) {
            Some("text_delta") => {
                // A server that skipped `content_block_start` still gets its text kept.
                self.blocks.entry(index).or_insert(Block::Text);
                let t = text_of("text").to_string();
                if !t.is_empty() {
                    self.push_text(&t, out);
                }
            }
            Some("thinking_delta") => {
                self.server_thinks(out);
                let t = text_of("thinking").to_string();
                if let Block::Thinking { text, .. } =
                    self.blocks.entry(index).or_insert(Block::Thinking {
                        text: String::new(),
                        signature: String::new(),
                    })
                {
                    text.push_str(&t);
                }
                if !t.is_empty() {
                    out.push_back(ResponseEvent::ReasoningDelta(t));
                }
            }
            Some("signature_delta") => {
                if let Some(Block::Thinking { signature, .. }) = self.blocks.get_mut(&index) {
                    signature.push_str(text_of("signature"));
                }
            }
            Some("input_json_delta") => {
                if let Some(Block::ToolUse(call)) = self.blocks.get_mut(&index) {
                    call.json.push_str(text_of("partial_json"));
                    call.pieces += 1;
                }
            }
            _ => {}
        }
    }

    fn push_text(&mut self, t: &str, out: &mut VecDeque<ResponseEvent>) {
        self.text_seen = true;
        let (text, reasoning) = (&mut self.text, &mut self.split_reasoning);
        self.think
            .feed(t, &mut |p: Piece<'_>| route_piece(p, text, reasoning, out));
    }

    /// The server parses thinking itself: what the text holds is answer.
    fn server_thinks(&mut self, out: &mut VecDeque<ResponseEvent>) {
        if !self.server_thinking {
            self.server_thinking = true;
            let (text, reasoning) = (&mut self.text, &mut self.split_reasoning);
            self.think
                .disable(&mut |p: Piece<'_>| route_piece(p, text, reasoning, out));
        }
    }

    /// The items of the finished message, then its end.
    fn finish(&mut self, out: &mut VecDeque<ResponseEvent>) -> Result<(), ModelError> {
        let (text, reasoning) = (&mut self.text, &mut self.split_reasoning);
        self.think
            .finish(&mut |p: Piece<'_>| route_piece(p, text, reasoning, out));
        if self.stop_reason.as_deref() == Some("refusal") {
            return Err(ModelError::Provider(
                "the model declined to continue this answer (stop_reason \"refusal\"); what it wrote of it was not kept. Rephrase the request, or start a new thread".to_string(),
            ));
        }
        let blocks = std::mem::take(&mut self.blocks);
        let mut calls: Vec<ResponseItem> = Vec::new();
        let mut seen_ids: Vec<String> = Vec::new();
        for block in blocks.into_values() {
            match block {
                Block::Thinking { text, signature } => {
                    out.push_back(ResponseEvent::OutputItemDone(ResponseItem::Reasoning {
                        text,
                        encrypted_content: Some(thinking_payload(Thinking::Signed(&signature))),
                    }));
                }
                Block::Redacted { data } => {
                    out.push_back(ResponseEvent::OutputItemDone(ResponseItem::Reasoning {
                        text: String::new(),
                        encrypted_content: Some(thinking_payload(Thinking::Redacted(&data))),
                    }));
                }
                Block::ToolUse(call) => {
                    // A missing or repeated id would tie two results to one call.
                    let id = if call.id.is_empty() || seen_ids.contains(&call.id) {
                        synthesize_call_id()
                    } else {
                        call.id.clone()
                    };
                    seen_ids.push(id.clone());
                    calls.push(ResponseItem::FunctionCall {
                        call_id: id,
                        name: call.name.clone(),
                        arguments: call.arguments(),
                    });
                }
                Block::Text | Block::Other => {}
            }
        }
        let mut recovered = Vec::new();
        if calls.is_empty()
            && let Some(found) = text_tools::extract(&self.text, &self.tools)
        {
            out.push_back(found.recovered_event());
            self.text = found.text;
            recovered = found.calls;
        }
        if !self.split_reasoning.is_empty() {
            out.push_back(ResponseEvent::OutputItemDone(ResponseItem::Reasoning {
                text: std::mem::take(&mut self.split_reasoning),
                encrypted_content: None,
            }));
        }
        if !self.text.is_empty() {
            out.push_back(ResponseEvent::OutputItemDone(ResponseItem::assistant_text(
                std::mem::take(&mut self.text),
            )));
        }
        out.extend(calls.into_iter().map(ResponseEvent::OutputItemDone));
        out.extend(recovered.into_iter().map(TextToolCall::into_done));
        match self.stop_reason.as_deref() {
            // The window filling up stops an answer the same way the output bound does.
            Some("max_tokens" | "model_context_window_exceeded") => {
                out.push_back(ResponseEvent::OutputLimitReached)
            }
            Some("pause_turn") => out.push_back(ResponseEvent::Paused),
            _ => {}
        }
        out.push_back(ResponseEvent::Completed {
            response_id: self.response_id.take(),
            token_usage: self.usage.token_usage(),
        });
        Ok(())
    }
}

impl Decoder for MessagesDecoder {
    fn on_event(
        &mut self,
        event: &str,
        data: &str,
        out: &mut VecDeque<ResponseEvent>,
    ) -> Result<Step, ModelError> {
        let Some((v, kind)) = typed_event(event, data)? else {
            return Ok(Step::Continue);
        };
        match kind.as_str() {
            "message_start" => {
                if !self.created {
                    self.created = true;
                    out.push_back(ResponseEvent::Created);
                }
                let message = v.get("message").unwrap_or(&Value::Null);
                self.response_id = message
                    .get("id")
                    .and_then(Value::as_str)
                    .map(str::to_string);
                if let Some(u) = message.get("usage").filter(|u| u.is_object()) {
                    self.usage.merge(u);
                }
            }
            "content_block_start" => self.on_block_start(&v, out),
            "content_block_delta" => self.on_block_delta(&v, out),
            "message_delta" => {
                if let Some(reason) = v.pointer("/delta/stop_reason").and_then(Value::as_str) {
                    self.stop_reason = Some(reason.to_string());
                }
                if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
                    self.usage.merge(u);
                }
            }
            "message_stop" => {
                self.finish(out)?;
                return Ok(Step::Done);
            }
            "error" => return Err(stream_error(&v)),
            // `ping`, `content_block_stop` (blocks are read when the message ends) and
            // event types added later carry nothing needed.
            _ => {}
        }
        Ok(Step::Continue)
    }

    fn on_eof(&mut self, out: &mut VecDeque<ResponseEvent>) -> Result<(), ModelError> {
        // A server that closes after `message_delta` without `message_stop` said how the
        // answer ended: it is whole.
        if self.stop_reason.is_some() {
            return self.finish(out);
        }
        Err(ModelError::StreamDisconnected(
            "the server closed the connection before `message_stop`".to_string(),
        ))
    }
}

/// An `error` event: the API's `{"type": "error", "error": {"type", "message"}}`, or the
/// bare error object other servers send.
fn stream_error(v: &Value) -> ModelError {
    let err = v.get("error").filter(|e| !e.is_null()).unwrap_or(v);
    let kind = err.get("type").and_then(Value::as_str).unwrap_or_default();
    if TRANSIENT_ERRORS.contains(&kind) {
        return ModelError::StreamDisconnected(format!(
            "the server stopped the answer with `{kind}`: {}",
            err.get("message")
                .and_then(Value::as_str)
                .unwrap_or("no message")
        ));
    }
    ModelError::Provider(error_text(err))
}
