//! Chat Completions wire: request body from history, and the streaming chunk decoder.
//!
//! Open-model servers differ in small ways; the decoder accepts all of these: tool calls
//! streamed in pieces or whole in one chunk, with or without `index` and `id`, arguments as a
//! string or (non-standard) a JSON object, reasoning in `reasoning_content` or `reasoning`,
//! usage in a final chunk with no choices, and a stream that ends after `finish_reason`
//! without `data: [DONE]`, usage inside `choices[0]` (Moonshot).
//!
//! Servers started without their reasoning or tool-call parser leave thinking
//! ([`think`]) and tool calls ([`text_tools`]) in the answer text; the decoder takes them out.

mod calls;
pub(crate) use calls::clean_tool_name;
pub(crate) mod text_tools;
use text_tools::TextToolCall;
pub(crate) mod think;

use std::collections::VecDeque;

use oi_protocol::models::{
    ContentItem, FunctionCallOutput, ResponseItem, Role, TokenUsage, ToolSpec,
};
use serde_json::{Map, Value, json};

use crate::call_ids::PortableIds;
use crate::quirks::Quirks;
use crate::sse::{Decoder, Step, parse_json};
use crate::{ModelError, Prompt, ResponseEvent};
use calls::Calls;
use think::{Piece, ThinkSplitter};

/// How a request is written for this provider and model.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct ChatRequestOptions {
    /// Reasoning fields and call ids the provider needs in the history.
    pub quirks: Quirks,
}

/// The JSON body for `POST {base_url}/chat/completions`.
pub(crate) fn request_body(prompt: &Prompt, options: ChatRequestOptions) -> Value {
    let mut body = json!({
        "model": prompt.model,
        "messages": messages(prompt, options),
        "stream": true,
        "stream_options": { "include_usage": true },
    });
    if !prompt.tools.is_empty() {
        let tools: Vec<Value> = prompt
            .tools
            .iter()
            .map(|t| {
                json!({
                    "type": "function",
                    "function": {
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters,
                    }
                })
            })
            .collect();
        body["tools"] = Value::Array(tools);
        body["parallel_tool_calls"] =
            Value::Bool(prompt.parallel_tool_calls && options.quirks.parallel_tool_calls);
    }
    if let Some(effort) = prompt.reasoning_effort {
        body["reasoning_effort"] = Value::String(effort.as_str().to_string());
    }
    if let Some(verbosity) = &prompt.verbosity {
        body["verbosity"] = Value::String(verbosity.clone());
    }
    if let Some(max) = prompt.max_output_tokens {
        body["max_tokens"] = json!(max);
    }
    if let Some(t) = prompt.temperature {
        body["temperature"] = json!(t);
    }
    if !prompt.stop.is_empty() {
        let stop: Vec<&String> = prompt.stop.iter().take(crate::MAX_STOP_SEQUENCES).collect();
        body["stop"] = json!(stop);
    }
    body
}

/// Joins the instructions and the system/developer messages that open the history into the
/// one system message every chat template accepts (several keep only the first system
/// message, some reject a second). Sections are separated by a blank line; the context
/// items carry their own tags (`<environment_context>`, `<project_instructions>`…).
fn system_message(prompt: &Prompt) -> (Option<Value>, usize) {
    let (text, consumed) = system_text(prompt);
    let message = (!text.is_empty()).then(|| json!({ "role": "system", "content": text }));
    (message, consumed)
}

/// The instructions and the system/developer messages that open the history, joined by blank
/// lines, and how many history items that took. Shared with the Messages wire, whose
/// top-level `system` carries the same text.
pub(crate) fn system_text(prompt: &Prompt) -> (String, usize) {
    let mut sections: Vec<String> = Vec::new();
    if !prompt.instructions.trim().is_empty() {
        sections.push(prompt.instructions.trim_end().to_string());
    }
    let mut consumed = 0;
    for item in &prompt.input {
        match item {
            ResponseItem::Message {
                role: Role::System | Role::Developer,
                content,
            } => {
                let text = text_of(content);
                if !text.trim().is_empty() {
                    sections.push(text.trim_end().to_string());
                }
                consumed += 1;
            }
            _ => break,
        }
    }
    (sections.join("\n\n"), consumed)
}

/// The text parts of a message, one per line (images are sent apart).
pub(crate) fn text_of(content: &[ContentItem]) -> String {
    let texts: Vec<&str> = content
        .iter()
        .filter_map(|c| match c {
            ContentItem::InputText { text } | ContentItem::OutputText { text } => {
                Some(text.as_str())
            }
            ContentItem::InputImage { .. } => None,
        })
        .collect();
    texts.join("\n")
}

fn messages(prompt: &Prompt, options: ChatRequestOptions) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let (system, consumed) = system_message(prompt);
    out.extend(system);
    // Images from tool outputs cannot go in `tool` messages; they are sent in one `user`
    // message after the run of tool messages (a user message between two tool messages of
    // the same assistant turn breaks many chat templates).
    let mut pending_images: Vec<Value> = Vec::new();
    // Whether the last message pushed is an assistant message that tool calls may join: the
    // model's text and its calls came from one response, so they go back as one message.
    let mut assistant_open = false;
    // Reasoning of the response being replayed, for the assistant message that follows it.
    let mut reasoning: Option<&str> = None;
    let mut ids = options.quirks.portable_call_ids.then(PortableIds::default);
    let mut wire_id = |id: &str| match ids.as_mut() {
        Some(ids) => ids.id_for(id),
        None => id.to_string(),
    };

    // The engine's per-run context (a user item right after the system prompt), held to go
    // at the head of the next user message: two user messages in a row break templates
    // that want roles to alternate (Mistral's).
    let mut context: Option<String> = None;
    for item in &prompt.input[consumed..] {
        if !matches!(item, ResponseItem::FunctionCallOutput { .. }) {
            flush_images(&mut out, &mut pending_images);
        }
        if let ResponseItem::Message {
            role: Role::User,
            content,
        } = item
        {
            let text = text_of(content);
            if out.len() <= 1 && context.is_none() && is_run_context(&text) {
                context = Some(text);
                continue;
            }
        }
        if let Some(ctx) = context.take() {
            match item {
                ResponseItem::Message {
                    role: Role::User,
                    content,
                } => {
                    out.push(json!({ "role": "user", "content": with_context(&ctx, content) }));
                    assistant_open = false;
                    reasoning = None;
                    continue;
                }
                _ => out.push(json!({ "role": "user", "content": ctx })),
            }
        }
        match item {
            ResponseItem::Message { role, content } => {
                let msg = match role {
                    // A system message after the conversation started breaks templates that
                    // require it first, and `developer` is unknown to many servers: later
                    // instructions go as a user message that says what it is.
                    Role::System | Role::Developer => json!({
                        "role": "user",
                        "content": format!("<system_note>\n{}\n</system_note>", text_of(content)),
                    }),
                    Role::User => json!({ "role": "user", "content": message_content(content) }),
                    Role::Assistant => {
                        json!({ "role": "assistant", "content": message_content(content) })
                    }
                };
                out.push(msg);
                assistant_open = *role == Role::Assistant;
                if *role != Role::Assistant {
                    reasoning = None;
                }
            }
            ResponseItem::FunctionCall {
                call_id,
                name,
                arguments,
            } => {
                let call = json!({
                    "id": wire_id(call_id),
                    "type": "function",
                    "function": { "name": name, "arguments": arguments_for_history(arguments) },
                });
                let joined = assistant_open
                    && out
                        .last_mut()
                        .and_then(Value::as_object_mut)
                        .map(|m| push_tool_call(m, call.clone()))
                        .unwrap_or(false);
                if !joined {
                    out.push(json!({ "role": "assistant", "content": null, "tool_calls": [call] }));
                }
                assistant_open = true;
                if let Some(msg) = out.last_mut().and_then(Value::as_object_mut) {
                    attach_reasoning(msg, reasoning.take(), &options.quirks);
                }
            }
            ResponseItem::FunctionCallOutput { call_id, output } => {
                let call_id = wire_id(call_id);
                let (text, images) = tool_text_and_images(&call_id, output);
                out.push(json!({ "role": "tool", "tool_call_id": call_id, "content": text }));
                pending_images.extend(images);
                assistant_open = false;
                reasoning = None;
            }
            // Sent back only where the provider needs it (with the tool calls it led to);
            // most servers reject or ignore it.
            ResponseItem::Reasoning { text, .. } => {
                reasoning = (!text.is_empty()).then_some(text.as_str());
                assistant_open = false;
            }
        }
    }
    flush_images(&mut out, &mut pending_images);
    if let Some(ctx) = context {
        out.push(json!({ "role": "user", "content": ctx }));
    }
    out
}

/// Tags the engine's per-run context starts with (see `oi_core`'s `context_items`, whose
/// tests hold every section it can start with to this list).
const RUN_CONTEXT_STARTS: [&str; 3] =
    ["<project_instructions", "<skills>", "<environment_context>"];

/// Whether a user item is the engine's per-run context, which the chat wire joins to the
/// first user message.
pub fn is_run_context(text: &str) -> bool {
    RUN_CONTEXT_STARTS.iter().any(|t| text.starts_with(t))
}

/// A user message's content with the run context before it: one string for text, or the
/// context as the first text part next to images.
fn with_context(context: &str, content: &[ContentItem]) -> Value {
    match message_content(content) {
        Value::String(text) => Value::String(format!("{context}\n\n{text}")),
        Value::Array(mut parts) => {
            parts.insert(0, json!({ "type": "text", "text": context }));
            Value::Array(parts)
        }
        other => other,
    }
}

/// Puts the reasoning behind an assistant message's tool calls in the fields the provider
/// reads, or the placeholder it accepts when there is none (the first call of a message
/// brings the reasoning; later calls keep it).
fn attach_reasoning(msg: &mut Map<String, Value>, reasoning: Option<&str>, quirks: &Quirks) {
    for field in quirks.reasoning_fields {
        match (reasoning, quirks.missing_reasoning) {
            (Some(r), _) => {
                msg.insert((*field).to_string(), Value::String(r.to_string()));
            }
            (None, Some(placeholder)) if !msg.contains_key(*field) => {
                msg.insert((*field).to_string(), Value::String(placeholder.to_string()));
            }
            _ => {}
        }
    }
}

fn push_tool_call(msg: &mut Map<String, Value>, call: Value) -> bool {
    if msg.get("role").and_then(Value::as_str) != Some("assistant") {
        return false;
    }
    match msg
        .entry("tool_calls")
        .or_insert_with(|| Value::Array(Vec::new()))
    {
        Value::Array(calls) => {
            calls.push(call);
            true
        }
        _ => false,
    }
}

/// A tool message is text only on this wire, so images follow in a user message. The text
/// keeps the result's order by marking where each image was (`[image 1 of call_x]`), and the
/// user message labels every image with the same marker.
fn tool_text_and_images(call_id: &str, output: &FunctionCallOutput) -> (String, Vec<Value>) {
    let image_count = output.images().count();
    if image_count == 0 {
        return (output.text_content(), Vec::new());
    }
    let mut lines: Vec<String> = Vec::new();
    let mut images = Vec::new();
    let mut n = 0;
    for c in &output.content {
        match c {
            ContentItem::InputText { text } | ContentItem::OutputText { text } => {
                lines.push(text.clone())
            }
            ContentItem::InputImage { image_url } => {
                n += 1;
                let marker = format!("[image {n} of {call_id}]");
                lines.push(format!("{marker} (in the next user message)"));
                images.push(json!({ "type": "text", "text": format!("{marker}:") }));
                images.push(json!({ "type": "image_url", "image_url": { "url": image_url } }));
            }
        }
    }
    (lines.join("\n"), images)
}

fn flush_images(out: &mut Vec<Value>, pending: &mut Vec<Value>) {
    if !pending.is_empty() {
        out.push(json!({ "role": "user", "content": std::mem::take(pending) }));
    }
}

/// Plain text as a string (what every server accepts); parts only when there are images.
fn message_content(content: &[ContentItem]) -> Value {
    let has_image = content
        .iter()
        .any(|c| matches!(c, ContentItem::InputImage { .. }));
    if !has_image {
        return Value::String(text_of(content));
    }
    Value::Array(
        content
            .iter()
            .map(|c| match c {
                ContentItem::InputText { text } | ContentItem::OutputText { text } => {
                    json!({ "type": "text", "text": text })
                }
                ContentItem::InputImage { image_url } => {
                    json!({ "type": "image_url", "image_url": { "url": image_url } })
                }
            })
            .collect(),
    )
}

/// Arguments of a past call as sent back to the server. Some servers (vLLM, templates that
/// iterate over the arguments) parse them and fail the whole request on invalid JSON, so
/// invalid arguments go back wrapped in a valid object that still shows the model what it
/// wrote; empty arguments become `{}`.
fn arguments_for_history(arguments: &str) -> String {
    if arguments.trim().is_empty() {
        return "{}".to_string();
    }
    if serde_json::from_str::<Value>(arguments).is_ok() {
        return arguments.to_string();
    }
    json!({ "invalid_json_arguments": arguments }).to_string()
}

#[derive(Debug, Default)]
pub(crate) struct ChatDecoder {
    created: bool,
    response_id: Option<String>,
    text: String,
    reasoning: String,
    calls: Calls,
    finish_reason: Option<String>,
    usage: Option<TokenUsage>,
    /// Thinking tags in the content, for servers without a reasoning parser.
    think: ThinkSplitter,
    /// The tools offered in the request: only their calls are recovered from text.
    tools: Vec<ToolSpec>,
    /// Everything the model writes, watched for a loop.
    guard: crate::looping::LoopGuard,
}

impl ChatDecoder {
    /// A decoder for the answer to a request that offered `tools`.
    pub(crate) fn new(tools: Vec<ToolSpec>) -> Self {
        Self {
            tools,
            ..Self::default()
        }
    }
}

impl Decoder for ChatDecoder {
    fn on_event(
        &mut self,
        event: &str,
        data: &str,
        out: &mut VecDeque<ResponseEvent>,
    ) -> Result<Step, ModelError> {
        let data = data.trim();
        if data.is_empty() {
            return Ok(Step::Continue);
        }
        if data == "[DONE]" {
            self.aborted()?;
            self.finish(out);
            return Ok(Step::Done);
        }
        if event == "error" {
            let msg = match serde_json::from_str::<Value>(data) {
                Ok(v) => error_text(v.get("error").filter(|e| !e.is_null()).unwrap_or(&v)),
                Err(_) => crate::sse::truncate(data, 500),
            };
            return Err(ModelError::Provider(msg));
        }
        let chunk = parse_json(data)?;
        if let Some(err) = chunk.get("error").filter(|e| !e.is_null()) {
            return Err(ModelError::Provider(error_text(err)));
        }
        if !self.created {
            self.created = true;
            out.push_back(ResponseEvent::Created);
        }
        if self.response_id.is_none() {
            self.response_id = chunk.get("id").and_then(Value::as_str).map(str::to_string);
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(parse_usage(usage));
        }
        let Some(choice) = chunk
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|c| c.first())
        else {
            return Ok(Step::Continue);
        };
        // Moonshot reports usage inside the last choice instead of at the top level.
        if let Some(usage) = choice.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(parse_usage(usage));
        }
        if let Some(delta) = choice.get("delta").or_else(|| choice.get("message")) {
            self.on_delta(delta, out);
            if self.guard.tripped() {
                // Ending here closes the connection: the server stops generating.
                self.finish(out);
                return Ok(Step::Done);
            }
        }
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_string());
        }
        Ok(Step::Continue)
    }

    fn on_eof(&mut self, out: &mut VecDeque<ResponseEvent>) -> Result<(), ModelError> {
        // Some servers close right after the finish_reason chunk without `[DONE]`; that
        // response is complete. Without a finish_reason the answer may be cut off.
        if self.finish_reason.is_some() {
            self.aborted()?;
            self.finish(out);
            Ok(())
        } else {
            Err(ModelError::StreamDisconnected(
                "the server closed the connection before `finish_reason` or `data: [DONE]`"
                    .to_string(),
            ))
        }
    }
}

impl ChatDecoder {
    /// vLLM ends a request the engine aborted (shutdown, a pause, an abort request) like a
    /// finished one, with `finish_reason: "abort"` and `[DONE]` (vllm-project/vllm#57082):
    /// the answer is cut mid-sentence, so it is a dropped stream (retried), not an answer.
    fn aborted(&self) -> Result<(), ModelError> {
        match self.finish_reason.as_deref() {
            Some(reason @ ("abort" | "error")) => Err(ModelError::StreamDisconnected(format!(
                "the server stopped the answer part-way (finish_reason \"{reason}\")"
            ))),
            _ => Ok(()),
        }
    }

    fn on_delta(&mut self, delta: &Value, out: &mut VecDeque<ResponseEvent>) {
        for key in ["reasoning_content", "reasoning"] {
            if let Some(r) = delta.get(key).and_then(Value::as_str)
                && !r.is_empty()
            {
                // The server parses reasoning itself, so the content is all answer.
                let (text, reasoning) = (&mut self.text, &mut self.reasoning);
                self.think
                    .disable(&mut |piece| route_piece(piece, text, reasoning, out));
                self.reasoning.push_str(r);
                out.push_back(ResponseEvent::ReasoningDelta(r.to_string()));
                break;
            }
        }
        if let Some(content) = delta.get("content").and_then(Value::as_str)
            && !content.is_empty()
        {
            self.guard.feed(content);
            let (text, reasoning) = (&mut self.text, &mut self.reasoning);
            self.think.feed(content, &mut |piece| {
                route_piece(piece, text, reasoning, out)
            });
        }
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for (position, call) in calls.iter().enumerate() {
                if let Some(args) = call.pointer("/function/arguments").and_then(Value::as_str) {
                    self.guard.feed(args);
                }
                self.calls.merge(position, call);
            }
        }
    }

    fn finish(&mut self, out: &mut VecDeque<ResponseEvent>) {
        let (text, reasoning) = (&mut self.text, &mut self.reasoning);
        self.think
            .finish(&mut |piece| route_piece(piece, text, reasoning, out));
        let looped = self.guard.tripped();
        if looped {
            crate::looping::cut_loop(&mut self.text);
            crate::looping::cut_loop(&mut self.reasoning);
        }
        // Calls the server left in the text (its tool parser is off) become real calls, but
        // only when it sent no structured ones: then the text is the only record of them.
        let mut recovered = Vec::new();
        if self.calls.is_empty()
            && let Some(found) = text_tools::extract(&self.text, &self.tools)
        {
            out.push_back(found.recovered_event());
            self.text = found.text;
            recovered = found.calls;
        }
        // A server that parsed the calls may still leak their markup into the text (vLLM's
        // Kimi-K2 parser, vllm-project/vllm#31207): the calls are in `tool_calls`, so the
        // markup is dropped, from the answer and from the history it becomes.
        if !self.calls.is_empty() {
            self.text = text_tools::without_call_markup(&self.text);
            self.reasoning = text_tools::without_call_markup(&self.reasoning);
        }
        if !self.reasoning.is_empty() {
            out.push_back(ResponseEvent::OutputItemDone(ResponseItem::Reasoning {
                text: std::mem::take(&mut self.reasoning),
                encrypted_content: None,
            }));
        }
        if !self.text.is_empty() {
            out.push_back(ResponseEvent::OutputItemDone(ResponseItem::assistant_text(
                std::mem::take(&mut self.text),
            )));
        }
        let cut_off = looped || self.finish_reason.as_deref() == Some("length");
        for (call_id, name, arguments) in self.calls.finish(cut_off) {
            out.push_back(ResponseEvent::OutputItemDone(ResponseItem::FunctionCall {
                call_id,
                name,
                arguments,
            }));
        }
        out.extend(recovered.into_iter().map(TextToolCall::into_done));
        if looped {
            out.push_back(ResponseEvent::RepetitionStopped);
        } else if self.finish_reason.as_deref() == Some("length") {
            out.push_back(ResponseEvent::OutputLimitReached);
        }
        out.push_back(ResponseEvent::Completed {
            response_id: self.response_id.take(),
            token_usage: self.usage.take(),
        });
    }
}

/// Sends one piece of split content where it belongs: answer text or reasoning.
pub(crate) fn route_piece(
    piece: Piece<'_>,
    text: &mut String,
    reasoning: &mut String,
    out: &mut VecDeque<ResponseEvent>,
) {
    match piece {
        Piece::Text(t) => {
            text.push_str(t);
            out.push_back(ResponseEvent::OutputTextDelta(t.to_string()));
        }
        Piece::Reasoning(r) => {
            reasoning.push_str(r);
            out.push_back(ResponseEvent::ReasoningDelta(r.to_string()));
        }
        Piece::EarlierTextWasReasoning => {
            let earlier = std::mem::take(text);
            reasoning.push_str(earlier.trim_end());
        }
    }
}

/// Token usage from a chat `usage` object (OpenAI names, with Responses names as fallback).
fn parse_usage(u: &Value) -> TokenUsage {
    let num = |v: Option<&Value>| v.and_then(Value::as_i64).unwrap_or(0);
    let input = num(u.get("prompt_tokens").or_else(|| u.get("input_tokens")));
    let output = num(u
        .get("completion_tokens")
        .or_else(|| u.get("output_tokens")));
    let cached = num(u
        .pointer("/prompt_tokens_details/cached_tokens")
        .or_else(|| u.get("prompt_cache_hit_tokens")));
    let reasoning = num(u.pointer("/completion_tokens_details/reasoning_tokens"));
    let total = u
        .get("total_tokens")
        .and_then(Value::as_i64)
        .unwrap_or(input + output);
    TokenUsage {
        input_tokens: input,
        cached_input_tokens: cached,
        output_tokens: output,
        reasoning_output_tokens: reasoning,
        total_tokens: total,
    }
}

/// The human message inside a provider error object.
pub(crate) fn error_text(err: &Value) -> String {
    if let Some(s) = err.as_str() {
        return s.to_string();
    }
    let message = err
        .get("message")
        .or_else(|| err.pointer("/error/message"))
        .and_then(Value::as_str);
    let code = err
        .get("code")
        .or_else(|| err.get("type"))
        .and_then(|c| match c {
            Value::String(s) => Some(s.clone()),
            Value::Number(n) => Some(n.to_string()),
            _ => None,
        });
    match (message, code) {
        (Some(m), Some(c)) => format!("{m} ({c})"),
        (Some(m), None) => m.to_string(),
        (None, _) => crate::sse::truncate(&err.to_string(), 500),
    }
}

#[cfg(test)]
mod tests;
