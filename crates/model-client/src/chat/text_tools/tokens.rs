//! Tool calls written with a model's special tokens, left in the text by a server that prints
//! them (its tool parser off). Spellings from the models' own templates and parsers:
//!
//! * Mistral: `[TOOL_CALLS][{"name": …, "arguments": {…}}]` (tokenizer before v11) and
//!   `[TOOL_CALLS]NAME[ARGS]{…}` (v11 and later, optionally `[CALL_ID]ID` before `[ARGS]`);
//!   vLLM `tool_parsers/mistral_tool_parser.py`, Mistral chat templates.
//! * Llama 3.1–3.3: `<|python_tag|>{"name": …, "parameters": {…}}`, several joined by `;`,
//!   ending with `<|eom_id|>`; Meta's llama3 prompt format docs, vLLM `llama_tool_parser.py`.
//! * DeepSeek V3: `<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>NAME\n```json
//!   \n{…}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>`; V3.1 drops `function` and the fence:
//!   `<｜tool▁call▁begin｜>NAME<｜tool▁sep｜>{…}<｜tool▁call▁end｜>` (fullwidth `｜` and `▁`);
//!   vLLM `deepseekv3_tool_parser.py` and `deepseekv31_tool_parser.py`.
//! * gpt-oss harmony: `<|start|>assistant<|channel|>commentary to=functions.NAME
//!   <|constrain|>json<|message|>{…}<|call|>` (the recipient may also come before
//!   `<|channel|>`); OpenAI cookbook "OpenAI harmony response format".

use serde_json::Value;

use super::TextToolCall;
use crate::chat::text_tools::json_calls;

pub(super) const MISTRAL: &str = "[TOOL_CALLS]";
pub(super) const PYTHON_TAG: &str = "<|python_tag|>";
pub(super) const DEEPSEEK_CALLS_BEGIN: &str = "<｜tool▁calls▁begin｜>";
pub(super) const DEEPSEEK_CALL_BEGIN: &str = "<｜tool▁call▁begin｜>";
pub(super) const DEEPSEEK_CALL_END: &str = "<｜tool▁call▁end｜>";
pub(super) const DEEPSEEK_CALLS_END: &str = "<｜tool▁calls▁end｜>";
const DEEPSEEK_SEP: &str = "<｜tool▁sep｜>";
/// Where a harmony call's header starts, longest first so the whole header is taken.
pub(super) const HARMONY_STARTS: [&str; 3] = [
    "<|start|>assistant<|channel|>commentary to=functions.",
    "<|start|>assistant to=functions.",
    "<|channel|>commentary to=functions.",
];
pub(super) const HARMONY_CALL: &str = "<|call|>";

/// Every call of a `[TOOL_CALLS]` block, or none when any part is not a call.
pub(super) fn parse_mistral(block: &str) -> Vec<TextToolCall> {
    let body = block.trim_end();
    let body = body.strip_suffix("</s>").unwrap_or(body);
    let mut calls = Vec::new();
    for part in body.split(MISTRAL).skip(1) {
        let part = part.trim();
        if part.starts_with('[') {
            let Some(Value::Array(items)) = json_calls::lenient_json(part) else {
                return Vec::new();
            };
            for item in &items {
                match named_call(item, "arguments") {
                    Some(call) => calls.push(call),
                    None => return Vec::new(),
                }
            }
            continue;
        }
        let Some(name_end) = part.find(['[', '{']) else {
            return Vec::new();
        };
        let name = part[..name_end].trim();
        let mut rest = &part[name_end..];
        if let Some(after) = rest.strip_prefix("[CALL_ID]") {
            rest = after.find("[ARGS]").map_or("", |i| &after[i..]);
        }
        let args = rest.strip_prefix("[ARGS]").unwrap_or(rest).trim();
        match (is_name(name), json_calls::lenient_json(args)) {
            (true, Some(v)) => calls.push(TextToolCall {
                name: name.to_string(),
                arguments: v.to_string(),
            }),
            _ => return Vec::new(),
        }
    }
    calls
}

/// The JSON calls after `<|python_tag|>`.
pub(super) fn parse_llama(block: &str) -> Vec<TextToolCall> {
    let mut body = block.strip_prefix(PYTHON_TAG).unwrap_or(block).trim();
    for end in ["<|eom_id|>", "<|eot_id|>"] {
        body = body.strip_suffix(end).unwrap_or(body).trim_end();
    }
    json_calls::parse_calls(body)
        .unwrap_or_default()
        .into_iter()
        .map(|(name, args)| TextToolCall {
            name,
            arguments: args.to_string(),
        })
        .collect()
}

/// Every call between DeepSeek's call tokens (V3 and V3.1 forms).
pub(super) fn parse_deepseek(block: &str) -> Vec<TextToolCall> {
    let mut calls = Vec::new();
    let mut rest = block;
    while let Some((_, after)) = rest.split_once(DEEPSEEK_CALL_BEGIN) {
        let (inner, tail) = after.split_once(DEEPSEEK_CALL_END).unwrap_or((after, ""));
        rest = tail;
        let inner = inner.split(DEEPSEEK_CALLS_END).next().unwrap_or(inner);
        let Some((left, right)) = inner.split_once(DEEPSEEK_SEP) else {
            return Vec::new();
        };
        let (name, args) = if right.trim_start().starts_with('{') {
            (left.trim(), right.trim())
        } else {
            // V3: the name on the line after the separator, the arguments in a json fence.
            let (name, fenced) = right.split_once('\n').unwrap_or((right, ""));
            let body = fenced.trim();
            let body = body
                .strip_prefix("```json")
                .or_else(|| body.strip_prefix("```"));
            let body = body.map(|b| b.trim_end().strip_suffix("```").unwrap_or(b));
            (name.trim(), body.unwrap_or("").trim())
        };
        match (is_name(name), json_calls::lenient_json(args)) {
            (true, Some(v)) => calls.push(TextToolCall {
                name: name.to_string(),
                arguments: v.to_string(),
            }),
            _ => return Vec::new(),
        }
    }
    calls
}

/// The call of one harmony message addressed to `functions.NAME`.
pub(super) fn parse_harmony(block: &str) -> Option<TextToolCall> {
    let (_, after) = block.split_once("to=functions.")?;
    let name_end = after.find([' ', '<', '\n']).unwrap_or(after.len());
    let name = after[..name_end].trim();
    let (_, body) = after.split_once("<|message|>")?;
    let body = body.split(HARMONY_CALL).next().unwrap_or(body);
    let body = body.split("<|end|>").next().unwrap_or(body).trim();
    let args = json_calls::lenient_json(body)?;
    is_name(name).then(|| TextToolCall {
        name: name.to_string(),
        arguments: args.to_string(),
    })
}

fn named_call(item: &Value, args_key: &str) -> Option<TextToolCall> {
    let name = item.get("name")?.as_str()?.trim();
    if !is_name(name) {
        return None;
    }
    let arguments = match item.get(args_key) {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Null) | None => "{}".to_string(),
        Some(other) => other.to_string(),
    };
    Some(TextToolCall {
        name: name.to_string(),
        arguments,
    })
}

fn is_name(name: &str) -> bool {
    !name.is_empty() && !name.contains(char::is_whitespace)
}
