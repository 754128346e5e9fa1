//! A model request as the mock received it, with helpers that read it the same way for every
//! wire API.

use oi_protocol::config_types::WireApi;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One model request as the mock received it: method, path, headers and body.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordedRequest {
    /// The HTTP method, e.g. `POST`.
    pub method: String,
    /// The path without the query string, e.g. `/v1/chat/completions`.
    pub path: String,
    /// The raw query string, if any.
    pub query: Option<String>,
    /// Lower-cased names, in arrival order.
    pub headers: Vec<(String, String)>,
    /// The JSON body (a JSON string holding the raw text when the body was not JSON).
    pub body: Value,
}

impl RecordedRequest {
    /// From the path: `/responses` → Responses, `/messages` → Messages, anything else → Chat.
    pub fn wire_api(&self) -> WireApi {
        let path = self.path.trim_end_matches('/');
        if path.ends_with("/responses") {
            WireApi::Responses
        } else if path.ends_with("/messages") {
            WireApi::Messages
        } else {
            WireApi::Chat
        }
    }

    /// The first header with this name (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// `body.model`.
    pub fn model(&self) -> Option<&str> {
        self.body.get("model").and_then(Value::as_str)
    }

    /// Chat or Messages `messages`, or Responses `input` items (a string input becomes one
    /// user message).
    pub fn items(&self) -> Vec<Value> {
        let key = match self.wire_api() {
            WireApi::Chat | WireApi::Messages => "messages",
            WireApi::Responses => "input",
        };
        match self.body.get(key) {
            Some(Value::Array(items)) => items.clone(),
            Some(Value::String(s)) => {
                vec![serde_json::json!({ "type": "message", "role": "user", "content": s })]
            }
            _ => Vec::new(),
        }
    }

    /// The request's size in the mock's tokens ([`crate::approx_tokens`] of the body).
    pub fn approx_tokens(&self) -> u64 {
        crate::approx_tokens(self.body.to_string().len())
    }

    /// Text of the last user message, without the engine's per-run context that the chat
    /// wire puts at the head of the first one (`<project_instructions …>`,
    /// `<environment_context>` and `<session_start_hook_context>` sections): what the user
    /// typed.
    pub fn last_user_text(&self) -> Option<String> {
        self.last_user_text_raw()
            .map(|t| match t.split_once("</environment_context>") {
                Some((head, rest))
                    if head.starts_with("<environment_context>")
                        || head.starts_with("<project_instructions") =>
                {
                    // What `SessionStart` hooks said follows the environment context.
                    let rest = match rest
                        .trim_start_matches('\n')
                        .split_once("</session_start_hook_context>")
                    {
                        Some((ctx, after)) if ctx.starts_with("<session_start_hook_context>") => {
                            after
                        }
                        _ => rest,
                    };
                    rest.trim_start_matches('\n').to_string()
                }
                _ => t,
            })
    }

    /// Text of the last user message, as sent.
    pub fn last_user_text_raw(&self) -> Option<String> {
        self.items()
            .iter()
            .rev()
            .find(|m| {
                m.get("role").and_then(Value::as_str) == Some("user")
                    && m.get("type").and_then(Value::as_str).unwrap_or("message") == "message"
                    // A Messages user message of tool results only is no user text.
                    && !content_text(m.get("content")).is_empty()
            })
            .map(|m| content_text(m.get("content")))
    }

    /// `(call_id, text)` of every tool result in the history (chat `tool` messages, Responses
    /// `function_call_output` items, Messages `tool_result` blocks).
    pub fn tool_outputs(&self) -> Vec<(String, String)> {
        let wire = self.wire_api();
        if wire == WireApi::Messages {
            return self
                .blocks("tool_result")
                .iter()
                .map(|b| {
                    let id = b.get("tool_use_id").and_then(Value::as_str);
                    (
                        id.unwrap_or_default().to_string(),
                        content_text(b.get("content")),
                    )
                })
                .collect();
        }
        self.items()
            .iter()
            .filter_map(|m| {
                let str_of = |k: &str| m.get(k).and_then(Value::as_str).map(str::to_string);
                match wire {
                    WireApi::Chat if str_of("role").as_deref() == Some("tool") => Some((
                        str_of("tool_call_id").unwrap_or_default(),
                        content_text(m.get("content")),
                    )),
                    WireApi::Responses
                        if str_of("type").as_deref() == Some("function_call_output") =>
                    {
                        Some((
                            str_of("call_id").unwrap_or_default(),
                            content_text(m.get("output")),
                        ))
                    }
                    _ => None,
                }
            })
            .collect()
    }

    /// `(call_id, name, arguments)` of every tool call in the history.
    pub fn function_calls(&self) -> Vec<(String, String, String)> {
        let s = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or_default().to_string();
        let mut out = Vec::new();
        for m in self.items() {
            match self.wire_api() {
                WireApi::Chat => {
                    for tc in m
                        .get("tool_calls")
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                    {
                        out.push((
                            s(tc.get("id")),
                            s(tc.pointer("/function/name")),
                            s(tc.pointer("/function/arguments")),
                        ));
                    }
                }
                WireApi::Responses => {
                    if m.get("type").and_then(Value::as_str) == Some("function_call") {
                        out.push((s(m.get("call_id")), s(m.get("name")), s(m.get("arguments"))));
                    }
                }
                WireApi::Messages => {}
            }
        }
        if self.wire_api() == WireApi::Messages {
            for b in self.blocks("tool_use") {
                let input = b.get("input").map(Value::to_string).unwrap_or_default();
                out.push((s(b.get("id")), s(b.get("name")), input));
            }
        }
        out
    }

    /// Messages: the content blocks of type `kind` in every message, in order.
    pub fn blocks(&self, kind: &str) -> Vec<Value> {
        self.items()
            .iter()
            .filter_map(|m| m.get("content").and_then(Value::as_array))
            .flatten()
            .filter(|b| b.get("type").and_then(Value::as_str) == Some(kind))
            .cloned()
            .collect()
    }

    /// Names of the tools offered to the model.
    pub fn tool_names(&self) -> Vec<String> {
        self.body
            .get("tools")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|t| {
                t.pointer("/function/name")
                    .or_else(|| t.get("name"))
                    .and_then(Value::as_str)
                    .map(str::to_string)
            })
            .collect()
    }

    /// Every text the model would see — instructions, system, user and assistant messages,
    /// tool call arguments and tool outputs — newline-joined, for `contains` assertions.
    pub fn all_text(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        if let Some(i) = self.body.get("instructions").and_then(Value::as_str) {
            parts.push(i.to_string());
        }
        // Messages: the top-level system prompt (a string or text blocks).
        let system = content_text(self.body.get("system"));
        if !system.is_empty() {
            parts.push(system);
        }
        for m in self.items() {
            for key in ["content", "output", "arguments"] {
                let t = content_text(m.get(key));
                if !t.is_empty() {
                    parts.push(t);
                }
            }
            // Messages: tool results and calls are blocks inside the content.
            for b in m
                .get("content")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                match b.get("type").and_then(Value::as_str) {
                    Some("tool_result") => parts.push(content_text(b.get("content"))),
                    Some("tool_use") => {
                        parts.push(b.get("input").map(Value::to_string).unwrap_or_default());
                    }
                    _ => {}
                }
            }
            for tc in m
                .get("tool_calls")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
            {
                if let Some(a) = tc.pointer("/function/arguments").and_then(Value::as_str) {
                    parts.push(a.to_string());
                }
            }
        }
        parts.join("\n")
    }
}

/// Text of a content value: a string, or the `text` of each part joined.
fn content_text(v: Option<&Value>) -> String {
    match v {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}
