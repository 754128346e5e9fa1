//! Renders a [`MockTurn`] as the SSE events of each wire API.

use oi_protocol::config_types::WireApi;
use oi_protocol::models::TokenUsage;
use serde_json::{Value, json};

use crate::script::MockTurn;

/// The SSE events (each a complete `...\n\n` frame) for one turn.
pub(crate) fn render(turn: &MockTurn, wire: WireApi, model: &str, seq: u64) -> Vec<String> {
    let mut frames = match wire {
        WireApi::Chat => chat(turn, model, seq),
        WireApi::Responses => responses(turn, model, seq),
        WireApi::Messages => messages(turn, model, seq),
    };
    if turn.malformed_line {
        let at = frames.len().min(1);
        frames.insert(at, "data: {this is not json\n\n".to_string());
    }
    frames
}

/// `s` in pieces of `size` chars (one piece when `size` is unset or 0).
fn pieces(s: &str, size: Option<usize>) -> Vec<String> {
    match size {
        Some(n) if n > 0 => {
            let chars: Vec<char> = s.chars().collect();
            chars.chunks(n).map(|c| c.iter().collect()).collect()
        }
        _ if s.is_empty() => Vec::new(),
        _ => vec![s.to_string()],
    }
}

fn call_id(turn: &MockTurn, i: usize, seq: u64) -> Option<String> {
    if turn.omit_tool_call_ids {
        return None;
    }
    Some(
        turn.tool_calls[i]
            .id
            .clone()
            .unwrap_or_else(|| format!("call_mock_{seq}_{i}")),
    )
}

fn chat(turn: &MockTurn, model: &str, seq: u64) -> Vec<String> {
    let id = format!("chatcmpl-mock-{seq}");
    let chunk = |delta: Value, finish: Value| {
        let v = json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [{ "index": 0, "delta": delta, "finish_reason": finish }],
        });
        format!("data: {v}\n\n")
    };
    let mut frames = vec![chunk(
        json!({ "role": "assistant", "content": "" }),
        Value::Null,
    )];
    let reasoning_field = turn
        .reasoning_field
        .as_deref()
        .unwrap_or("reasoning_content");
    for piece in pieces(turn.reasoning.as_deref().unwrap_or(""), turn.chunk_size) {
        let mut delta = serde_json::Map::new();
        delta.insert(reasoning_field.to_string(), Value::String(piece));
        frames.push(chunk(Value::Object(delta), Value::Null));
    }
    for piece in pieces(turn.text.as_deref().unwrap_or(""), turn.chunk_size) {
        frames.push(chunk(json!({ "content": piece }), Value::Null));
    }
    for (i, call) in turn.tool_calls.iter().enumerate() {
        let tool_call = |function: Value, with_header: bool| {
            let mut tc = json!({ "function": function });
            if !turn.omit_tool_call_index {
                tc["index"] = json!(i);
            }
            if with_header {
                tc["type"] = json!("function");
                if let Some(id) = call_id(turn, i, seq) {
                    tc["id"] = json!(id);
                }
            }
            json!({ "tool_calls": [tc] })
        };
        if turn.whole_tool_calls {
            frames.push(chunk(
                tool_call(
                    json!({ "name": call.name, "arguments": call.arguments }),
                    true,
                ),
                Value::Null,
            ));
            continue;
        }
        frames.push(chunk(
            tool_call(json!({ "name": call.name, "arguments": "" }), true),
            Value::Null,
        ));
        for piece in pieces(&call.arguments, turn.chunk_size) {
            frames.push(chunk(
                tool_call(json!({ "arguments": piece }), false),
                Value::Null,
            ));
        }
    }
    let finish = if turn.tool_calls.is_empty() {
        "stop"
    } else {
        "tool_calls"
    };
    frames.push(chunk(json!({}), json!(finish)));
    if let Some(u) = &turn.usage {
        let v = json!({
            "id": id,
            "object": "chat.completion.chunk",
            "created": 0,
            "model": model,
            "choices": [],
            "usage": {
                "prompt_tokens": u.input_tokens,
                "completion_tokens": u.output_tokens,
                "total_tokens": u.total_tokens,
                "prompt_tokens_details": { "cached_tokens": u.cached_input_tokens },
                "completion_tokens_details": { "reasoning_tokens": u.reasoning_output_tokens },
            },
        });
        frames.push(format!("data: {v}\n\n"));
    }
    if !turn.omit_done {
        frames.push("data: [DONE]\n\n".to_string());
    }
    frames
}

fn responses(turn: &MockTurn, model: &str, seq: u64) -> Vec<String> {
    let resp_id = format!("resp_mock_{seq}");
    let mut frames = Vec::new();
    let mut push = |v: Value| {
        let kind = v["type"].as_str().unwrap_or("unknown").to_string();
        frames.push(format!("event: {kind}\ndata: {v}\n\n"));
    };
    push(json!({
        "type": "response.created",
        "response": { "id": resp_id, "object": "response", "status": "in_progress", "model": model },
    }));
    let mut output_index = 0;
    if let Some(reasoning) = &turn.reasoning {
        let item_id = format!("rs_mock_{seq}");
        push(
            json!({ "type": "response.output_item.added", "output_index": output_index,
            "item": { "type": "reasoning", "id": item_id, "summary": [] } }),
        );
        for piece in pieces(reasoning, turn.chunk_size) {
            push(
                json!({ "type": "response.reasoning_summary_text.delta", "item_id": item_id,
                "output_index": output_index, "summary_index": 0, "delta": piece }),
            );
        }
        push(
            json!({ "type": "response.output_item.done", "output_index": output_index,
            "item": { "type": "reasoning", "id": item_id,
                "summary": [{ "type": "summary_text", "text": reasoning }] } }),
        );
        output_index += 1;
    }
    if let Some(text) = &turn.text {
        let item_id = format!("msg_mock_{seq}");
        push(
            json!({ "type": "response.output_item.added", "output_index": output_index,
            "item": { "type": "message", "id": item_id, "role": "assistant", "status": "in_progress", "content": [] } }),
        );
        for piece in pieces(text, turn.chunk_size) {
            push(
                json!({ "type": "response.output_text.delta", "item_id": item_id,
                "output_index": output_index, "content_index": 0, "delta": piece }),
            );
        }
        push(
            json!({ "type": "response.output_item.done", "output_index": output_index,
            "item": { "type": "message", "id": item_id, "role": "assistant", "status": "completed",
                "content": [{ "type": "output_text", "text": text, "annotations": [] }] } }),
        );
        output_index += 1;
    }
    for (i, call) in turn.tool_calls.iter().enumerate() {
        let item_id = format!("fc_mock_{seq}_{i}");
        let mut item = json!({ "type": "function_call", "id": item_id, "name": call.name,
            "arguments": "", "status": "in_progress" });
        if let Some(id) = call_id(turn, i, seq) {
            item["call_id"] = json!(id);
        }
        if let Some(ns) = &call.namespace {
            item["namespace"] = json!(ns);
        }
        push(
            json!({ "type": "response.output_item.added", "output_index": output_index, "item": item }),
        );
        if !turn.whole_tool_calls {
            for piece in pieces(&call.arguments, turn.chunk_size) {
                push(
                    json!({ "type": "response.function_call_arguments.delta", "item_id": item_id,
                    "output_index": output_index, "delta": piece }),
                );
            }
        }
        item["arguments"] = json!(call.arguments);
        item["status"] = json!("completed");
        push(
            json!({ "type": "response.output_item.done", "output_index": output_index, "item": item }),
        );
        output_index += 1;
    }
    if !turn.omit_done {
        push(json!({
            "type": "response.completed",
            "response": { "id": resp_id, "object": "response", "status": "completed", "model": model,
                "usage": turn.usage.as_ref().map(responses_usage) },
        }));
    }
    frames
}

fn responses_usage(u: &TokenUsage) -> Value {
    json!({
        "input_tokens": u.input_tokens,
        "input_tokens_details": { "cached_tokens": u.cached_input_tokens },
        "output_tokens": u.output_tokens,
        "output_tokens_details": { "reasoning_tokens": u.reasoning_output_tokens },
        "total_tokens": u.total_tokens,
    })
}

/// Anthropic Messages events: `message_start`, a block per reasoning/text/call
/// (`content_block_start`, deltas, `content_block_stop`), `message_delta` with the stop reason
/// and usage, `message_stop`. Reasoning is a `thinking` block signed with a mock signature.
/// Usage is split the Anthropic way: `input_tokens` leaves out what was read from the cache.
fn messages(turn: &MockTurn, model: &str, seq: u64) -> Vec<String> {
    let mut frames = Vec::new();
    let mut push = |v: Value| {
        let kind = v["type"].as_str().unwrap_or("unknown").to_string();
        frames.push(format!("event: {kind}\ndata: {v}\n\n"));
    };
    let usage = turn.usage.as_ref().map(messages_usage);
    let mut start_usage = usage.clone().unwrap_or_else(|| json!({}));
    start_usage["output_tokens"] = json!(1);
    push(json!({
        "type": "message_start",
        "message": { "id": format!("msg_mock_{seq}"), "type": "message", "role": "assistant",
            "model": model, "content": [], "stop_reason": null, "stop_sequence": null,
            "usage": start_usage },
    }));
    let mut index = 0;
    if let Some(reasoning) = &turn.reasoning {
        push(json!({ "type": "content_block_start", "index": index,
            "content_block": { "type": "thinking", "thinking": "", "signature": "" } }));
        for piece in pieces(reasoning, turn.chunk_size) {
            push(json!({ "type": "content_block_delta", "index": index,
                "delta": { "type": "thinking_delta", "thinking": piece } }));
        }
        push(json!({ "type": "content_block_delta", "index": index,
            "delta": { "type": "signature_delta", "signature": format!("mock-signature-{seq}") } }));
        push(json!({ "type": "content_block_stop", "index": index }));
        index += 1;
    }
    if let Some(text) = &turn.text {
        push(json!({ "type": "content_block_start", "index": index,
            "content_block": { "type": "text", "text": "" } }));
        for piece in pieces(text, turn.chunk_size) {
            push(json!({ "type": "content_block_delta", "index": index,
                "delta": { "type": "text_delta", "text": piece } }));
        }
        push(json!({ "type": "content_block_stop", "index": index }));
        index += 1;
    }
    for (i, call) in turn.tool_calls.iter().enumerate() {
        let id = call_id(turn, i, seq).unwrap_or_default().replace(
            |c: char| !c.is_ascii_alphanumeric() && c != '_' && c != '-',
            "_",
        );
        let input = if turn.whole_tool_calls {
            serde_json::from_str(&call.arguments).unwrap_or_else(|_| json!({}))
        } else {
            json!({})
        };
        push(json!({ "type": "content_block_start", "index": index,
            "content_block": { "type": "tool_use", "id": id, "name": call.name, "input": input } }));
        if !turn.whole_tool_calls {
            for piece in pieces(&call.arguments, turn.chunk_size) {
                push(json!({ "type": "content_block_delta", "index": index,
                    "delta": { "type": "input_json_delta", "partial_json": piece } }));
            }
        }
        push(json!({ "type": "content_block_stop", "index": index }));
        index += 1;
    }
    let stop = if turn.tool_calls.is_empty() {
        "end_turn"
    } else {
        "tool_use"
    };
    let output = turn.usage.as_ref().map_or(0, |u| u.output_tokens);
    push(json!({ "type": "message_delta",
        "delta": { "stop_reason": stop, "stop_sequence": null },
        "usage": { "output_tokens": output } }));
    if !turn.omit_done {
        push(json!({ "type": "message_stop" }));
    }
    frames
}

fn messages_usage(u: &TokenUsage) -> Value {
    json!({
        "input_tokens": u.input_tokens - u.cached_input_tokens,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": u.cached_input_tokens,
        "output_tokens": u.output_tokens,
    })
}
