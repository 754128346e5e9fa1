//! Anthropic Messages wire (`wire_api = "messages"`): the request body from history, and the
//! streaming event decoder ([`decode`]).
//!
//! Anthropic's own API and the Anthropic-compatible endpoints of Z.ai, Moonshot, DeepSeek,
//! MiniMax and llama.cpp's `llama-server` speak it. What differs from Chat Completions:
//!
//! * The system prompt is a top-level `system` field; tool calls are `tool_use` blocks of
//!   the assistant message and their results `tool_result` blocks that open the next user
//!   message; roles alternate, so neighbouring items of one role share a message.
//! * `max_tokens` is required.
//! * Thinking comes back as `thinking` blocks with a `signature` (or `redacted_thinking`
//!   with opaque `data`), which the API wants back unchanged with the tool calls they led
//!   to. They are stored as [`ResponseItem::Reasoning`] whose `encrypted_content` carries the
//!   signature behind a marker ([`thinking_payload`]), so a Responses-wire payload is never
//!   mistaken for one and vice versa.
//! * Prompt caching is asked for with `cache_control` markers on the system prompt, the last
//!   tool and the last two user messages (four, the API's maximum), where the provider caches
//!   by them (Anthropic's API; see `quirks`). The compatible servers cache prefixes on their
//!   own and get none.
//! * Usage counts `input_tokens` without the cached prefix (`cache_read_input_tokens`) and
//!   the prefix written to the cache (`cache_creation_input_tokens`). The decoder reports the
//!   whole prompt as `input_tokens`, as the other wires do, so the engine's window
//!   accounting does not read a cache hit as a prompt the server cut.

mod decode;

pub(crate) use decode::MessagesDecoder;

use oi_protocol::config_types::ReasoningEffort;
use oi_protocol::models::{ContentItem, FunctionCallOutput, ResponseItem, Role};
use serde_json::{Value, json};

use crate::Prompt;
use crate::chat::{system_text, text_of};

/// The version every Anthropic-compatible endpoint accepts (the Messages API's only one).
pub(crate) const ANTHROPIC_VERSION: &str = "2023-06-01";

/// `max_tokens` when the engine sends no bound (`model_max_output_tokens = 0`): the API
/// requires one, and every model that speaks it takes at least this many.
const DEFAULT_MAX_TOKENS: u32 = 8192;

/// Marker of an Anthropic thinking signature in `Reasoning.encrypted_content`.
const SIGNATURE_MARKER: &str = "messages-signature:";
/// Marker of a `redacted_thinking` block's `data` in `Reasoning.encrypted_content`.
const REDACTED_MARKER: &str = "messages-redacted:";

/// Where requests go: `{base_url}/messages` when `base_url` ends in `/v1` (this project's
/// convention, and llama.cpp's `http://host:8080/v1`), else `{base_url}/v1/messages` (how
/// Anthropic's SDKs read `ANTHROPIC_BASE_URL`, e.g. `https://api.z.ai/api/anthropic`).
pub(crate) fn url(base: &str) -> String {
    let base = base.trim_end_matches('/');
    if base.ends_with("/v1") {
        format!("{base}/messages")
    } else {
        format!("{base}/v1/messages")
    }
}

/// A thinking block's opaque part as stored: the signature of a `thinking` block, or the
/// `data` of a `redacted_thinking` one.
pub(crate) enum Thinking<'a> {
    Signed(&'a str),
    Redacted(&'a str),
}

/// How a thinking block's opaque part is kept in `Reasoning.encrypted_content`.
pub(crate) fn thinking_payload(thinking: Thinking<'_>) -> String {
    match thinking {
        Thinking::Signed(signature) => format!("{SIGNATURE_MARKER}{signature}"),
        Thinking::Redacted(data) => format!("{REDACTED_MARKER}{data}"),
    }
}

/// The thinking block an `encrypted_content` holds, if it came from this wire.
pub(crate) fn stored_thinking(encrypted: &str) -> Option<Thinking<'_>> {
    if let Some(sig) = encrypted.strip_prefix(SIGNATURE_MARKER) {
        Some(Thinking::Signed(sig))
    } else {
        encrypted
            .strip_prefix(REDACTED_MARKER)
            .map(Thinking::Redacted)
    }
}

/// Whether an `encrypted_content` came from this wire (and means nothing to the Responses
/// API).
pub(crate) fn is_messages_payload(encrypted: &str) -> bool {
    stored_thinking(encrypted).is_some()
}

/// How a request is shaped beyond the prompt.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RequestOptions {
    /// The model may make several calls in one answer (else `disable_parallel_tool_use`).
    pub parallel: bool,
    /// Put `cache_control` markers on the system prompt, the last tool and the last two user
    /// messages.
    pub cache_markers: bool,
}

/// The JSON body for `POST …/messages`.
pub(crate) fn request_body(prompt: &Prompt, options: RequestOptions) -> Value {
    let RequestOptions {
        parallel,
        cache_markers,
    } = options;
    let max_tokens = prompt
        .max_output_tokens
        .filter(|n| *n > 0)
        .unwrap_or(DEFAULT_MAX_TOKENS);
    let (system, consumed) = system_text(prompt);
    let mut messages = messages(&prompt.input[consumed..]);
    if cache_markers {
        mark_last_user_messages(&mut messages);
    }
    let mut body = json!({
        "model": prompt.model,
        "max_tokens": max_tokens,
        "messages": messages,
        "stream": true,
    });
    if !system.is_empty() {
        let mut block = json!({ "type": "text", "text": system });
        if cache_markers {
            block["cache_control"] = json!({ "type": "ephemeral" });
        }
        body["system"] = json!([block]);
    }
    if !prompt.tools.is_empty() {
        let last = prompt.tools.len() - 1;
        let tools: Vec<Value> = prompt
            .tools
            .iter()
            .enumerate()
            .map(|(i, t)| {
                let mut tool = json!({
                    "name": t.name,
                    "description": t.description,
                    "input_schema": t.parameters,
                });
                if cache_markers && i == last {
                    tool["cache_control"] = json!({ "type": "ephemeral" });
                }
                tool
            })
            .collect();
        body["tools"] = Value::Array(tools);
        let mut choice = json!({ "type": "auto" });
        if !parallel {
            choice["disable_parallel_tool_use"] = json!(true);
        }
        body["tool_choice"] = choice;
    }
    let thinking = thinking_param(prompt.reasoning_effort, max_tokens);
    let thinks = thinking
        .as_ref()
        .is_some_and(|t| t["type"] == json!("enabled"));
    if let Some(t) = thinking {
        body["thinking"] = t;
    }
    // The API refuses a temperature other than 1 while thinking.
    if let Some(t) = prompt.temperature.filter(|_| !thinks) {
        body["temperature"] = json!(t);
    }
    if !prompt.stop.is_empty() {
        body["stop_sequences"] = json!(prompt.stop);
    }
    body
}

/// `thinking` for a reasoning effort: a budget by level, at most half of `max_tokens` (the
/// budget counts against it and the answer needs room), at least the API's minimum of 1024;
/// `none` turns thinking off (models that think by default take `disabled`).
fn thinking_param(effort: Option<ReasoningEffort>, max_tokens: u32) -> Option<Value> {
    let wanted: u32 = match effort? {
        ReasoningEffort::None => return Some(json!({ "type": "disabled" })),
        ReasoningEffort::Minimal => 1024,
        ReasoningEffort::Low => 2048,
        ReasoningEffort::Medium => 8192,
        ReasoningEffort::High => 16_384,
        ReasoningEffort::Xhigh => 32_768,
    };
    let budget = wanted.min(max_tokens / 2);
    (budget >= 1024).then(|| json!({ "type": "enabled", "budget_tokens": budget }))
}

/// Builds alternating user/assistant messages: an item joins the last message when that
/// message has its role, so a response's thinking, text and calls stay one assistant
/// message and a round of tool results (and anything the engine said after them) one user
/// message, results first as the API requires.
fn messages(items: &[ResponseItem]) -> Vec<Value> {
    let mut out: Vec<(&'static str, Vec<Value>)> = Vec::new();
    let mut push = |role: &'static str, blocks: Vec<Value>| {
        if blocks.is_empty() {
            return;
        }
        match out.last_mut() {
            Some((last, content)) if *last == role => content.extend(blocks),
            _ => out.push((role, blocks)),
        }
    };
    for item in items {
        match item {
            ResponseItem::Message { role, content } => match role {
                Role::Assistant => push("assistant", content_blocks(content)),
                Role::User => push("user", content_blocks(content)),
                // Later instructions go as user text that says what it is (the system
                // prompt is fixed for the prompt cache's sake).
                Role::System | Role::Developer => {
                    let text = text_of(content);
                    if !text.trim().is_empty() {
                        push(
                            "user",
                            vec![text_block(&format!(
                                "<system_note>\n{text}\n</system_note>"
                            ))],
                        );
                    }
                }
            },
            ResponseItem::Reasoning {
                text,
                encrypted_content: Some(enc),
            } => match stored_thinking(enc) {
                Some(Thinking::Signed(signature)) => push(
                    "assistant",
                    vec![json!({ "type": "thinking", "thinking": text, "signature": signature })],
                ),
                Some(Thinking::Redacted(data)) => push(
                    "assistant",
                    vec![json!({ "type": "redacted_thinking", "data": data })],
                ),
                // Another API's payload: nothing this one can verify.
                None => {}
            },
            // Reasoning without a signature (another wire, another model) cannot be sent
            // as a thinking block; the API does not need it.
            ResponseItem::Reasoning { .. } => {}
            ResponseItem::FunctionCall {
                call_id,
                name,
                arguments,
            } => push(
                "assistant",
                vec![json!({
                    "type": "tool_use",
                    "id": wire_id(call_id),
                    "name": name,
                    "input": input_object(arguments),
                })],
            ),
            ResponseItem::FunctionCallOutput { call_id, output } => {
                push("user", vec![tool_result(&wire_id(call_id), output)]);
            }
        }
    }
    out.into_iter()
        .map(|(role, mut content)| {
            if role == "user" {
                // Tool results must open a user message.
                content.sort_by_key(|b| b["type"] != json!("tool_result"));
            }
            json!({ "role": role, "content": content })
        })
        .collect()
}

fn text_block(text: &str) -> Value {
    json!({ "type": "text", "text": text })
}

/// Text and image blocks; empty text is left out (the API refuses an empty text block).
fn content_blocks(content: &[ContentItem]) -> Vec<Value> {
    content
        .iter()
        .filter_map(|c| match c {
            ContentItem::InputText { text } | ContentItem::OutputText { text } => {
                (!text.is_empty()).then(|| text_block(text))
            }
            ContentItem::InputImage { image_url } => Some(image_block(image_url)),
        })
        .collect()
}

/// An image as the API takes it: a `data:` URL as base64 with its media type, anything
/// else as a URL source.
fn image_block(image_url: &str) -> Value {
    if let Some((media_type, data)) = image_url
        .strip_prefix("data:")
        .and_then(|rest| rest.split_once(";base64,"))
    {
        return json!({
            "type": "image",
            "source": { "type": "base64", "media_type": media_type, "data": data },
        });
    }
    json!({ "type": "image", "source": { "type": "url", "url": image_url } })
}

fn tool_result(tool_use_id: &str, output: &FunctionCallOutput) -> Value {
    let has_image = output.images().next().is_some();
    let content = if has_image {
        let blocks = content_blocks(&output.content);
        Value::Array(blocks)
    } else {
        Value::String(output.text_content())
    };
    let mut block =
        json!({ "type": "tool_result", "tool_use_id": tool_use_id, "content": content });
    if output.success == Some(false) {
        block["is_error"] = json!(true);
    }
    block
}

/// A call's arguments as the `input` object the API requires. Invalid JSON goes back
/// wrapped so the model still sees what it wrote; a value that is not an object is wrapped
/// too.
fn input_object(arguments: &str) -> Value {
    if arguments.trim().is_empty() {
        return json!({});
    }
    match serde_json::from_str::<Value>(arguments) {
        Ok(v @ Value::Object(_)) => v,
        Ok(other) => json!({ "arguments": other }),
        Err(_) => json!({ "invalid_json_arguments": arguments }),
    }
}

/// A call id the API accepts (`[A-Za-z0-9_-]+`): ids other servers made (`functions.shell:0`)
/// have the other characters replaced, the same way for a call and its result.
fn wire_id(id: &str) -> String {
    let mapped: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if mapped.is_empty() {
        "call".to_string()
    } else {
        mapped
    }
}

/// Marks the last block of the last two user messages for the prompt cache: the newest
/// writes the conversation so far, the one before reads what the previous request wrote.
fn mark_last_user_messages(messages: &mut [Value]) {
    let mut marked = 0;
    for message in messages.iter_mut().rev() {
        if marked == 2 {
            break;
        }
        if message["role"] != json!("user") {
            continue;
        }
        if let Some(last) = message["content"]
            .as_array_mut()
            .and_then(|blocks| blocks.last_mut())
            .and_then(Value::as_object_mut)
        {
            last.insert("cache_control".into(), json!({ "type": "ephemeral" }));
            marked += 1;
        }
    }
}

#[cfg(test)]
mod tests;
