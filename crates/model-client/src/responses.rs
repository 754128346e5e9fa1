//! Responses API wire: request body from history, and the streaming event decoder.

use std::collections::VecDeque;

use oi_protocol::models::{ContentItem, ResponseItem, Role, TokenUsage, ToolSpec};
use serde_json::{Value, json};

use crate::chat::text_tools::{self, TextToolCall};
use crate::chat::think::{Piece, ThinkSplitter};
use crate::chat::{error_text, route_piece};
use crate::sse::{Decoder, Step, typed_event};
use crate::{ModelError, Prompt, ResponseEvent, synthesize_call_id};

/// The JSON body for `POST {base_url}/responses`. `reasoning_text`: reasoning without
/// `encrypted_content` that led to a tool call goes back as raw chain of thought (gpt-oss
/// servers; see `quirks`).
pub(crate) fn request_body(prompt: &Prompt, quirks: crate::quirks::Quirks) -> Value {
    let reasoning_text = quirks.responses_reasoning_text;
    let tools: Vec<Value> = prompt
        .tools
        .iter()
        .map(|t| {
            json!({
                "type": "function",
                "name": t.name,
                "description": t.description,
                "parameters": t.parameters,
                "strict": false,
            })
        })
        .collect();
    let mut body = json!({
        "model": prompt.model,
        "instructions": prompt.instructions,
        "input": input_items(&prompt.input, reasoning_text),
        "store": false,
        "stream": true,
    });
    if !tools.is_empty() {
        body["tools"] = Value::Array(tools);
        body["tool_choice"] = json!("auto");
        body["parallel_tool_calls"] =
            json!(prompt.parallel_tool_calls && quirks.parallel_tool_calls);
    }
    if let Some(effort) = prompt.reasoning_effort {
        body["reasoning"] = json!({ "effort": effort.as_str() });
        // With `store: false` the reasoning can only be continued from its encrypted form.
        body["include"] = json!(["reasoning.encrypted_content"]);
    }
    if let Some(summary) = &prompt.reasoning_summary {
        body["reasoning"]["summary"] = json!(summary);
    }
    if let Some(verbosity) = &prompt.verbosity {
        body["text"] = json!({ "verbosity": verbosity });
    }
    if let Some(max) = prompt.max_output_tokens {
        body["max_output_tokens"] = json!(max);
    }
    if let Some(t) = prompt.temperature {
        body["temperature"] = json!(t);
    }
    body
}

fn input_items(items: &[ResponseItem], reasoning_text: bool) -> Vec<Value> {
    items
        .iter()
        .enumerate()
        .filter_map(|(i, item)| match item {
            ResponseItem::Message { role, content } => {
                let (role, text_type) = match role {
                    Role::System => ("system", "input_text"),
                    Role::Developer => ("developer", "input_text"),
                    Role::User => ("user", "input_text"),
                    Role::Assistant => ("assistant", "output_text"),
                };
                let parts: Vec<Value> = content
                    .iter()
                    .map(|c| match c {
                        ContentItem::InputText { text } | ContentItem::OutputText { text } => {
                            json!({ "type": text_type, "text": text })
                        }
                        ContentItem::InputImage { image_url } => {
                            json!({ "type": "input_image", "image_url": image_url })
                        }
                    })
                    .collect();
                Some(json!({ "type": "message", "role": role, "content": parts }))
            }
            ResponseItem::FunctionCall {
                call_id,
                name,
                arguments,
            } => Some(json!({
                "type": "function_call",
                "call_id": call_id,
                "name": name,
                "arguments": arguments,
            })),
            ResponseItem::FunctionCallOutput { call_id, output } => {
                let has_image = output.images().next().is_some();
                let output = if has_image {
                    Value::Array(
                        output
                            .content
                            .iter()
                            .map(|c| match c {
                                ContentItem::InputText { text }
                                | ContentItem::OutputText { text } => {
                                    json!({ "type": "input_text", "text": text })
                                }
                                ContentItem::InputImage { image_url } => {
                                    json!({ "type": "input_image", "image_url": image_url })
                                }
                            })
                            .collect(),
                    )
                } else {
                    Value::String(output.text_content())
                };
                Some(json!({ "type": "function_call_output", "call_id": call_id, "output": output }))
            }
            // A Messages-wire thinking signature means nothing to this API.
            ResponseItem::Reasoning {
                encrypted_content: Some(enc),
                ..
            } if crate::messages::is_messages_payload(enc) => None,
            ResponseItem::Reasoning {
                text,
                encrypted_content: Some(enc),
            } => Some(json!({
                "type": "reasoning",
                "summary": if text.is_empty() { json!([]) } else { json!([{ "type": "summary_text", "text": text }]) },
                "encrypted_content": enc,
            })),
            // The raw chain of thought of a tool-calling turn, as gpt-oss servers take it back
            // (one `reasoning_text` part: vLLM reads exactly one). The item `id` is required
            // by the schema vLLM validates against.
            ResponseItem::Reasoning {
                text,
                encrypted_content: None,
            } if reasoning_text && !text.is_empty() && leads_to_call(&items[i + 1..]) => {
                Some(json!({
                    "type": "reasoning",
                    "id": format!("rs_{}", crate::call_ids::stable(text)),
                    "summary": [],
                    "content": [{ "type": "reasoning_text", "text": text }],
                }))
            }
            // Elsewhere the server cannot use a reasoning item without its opaque payload.
            ResponseItem::Reasoning {
                encrypted_content: None,
                ..
            } => None,
        })
        .collect()
}

/// Whether the items after a reasoning item start with a tool call of the same response (its
/// text may come first). The reasoning of a turn that ended in an answer is not needed again.
fn leads_to_call(rest: &[ResponseItem]) -> bool {
    rest.iter()
        .find(|item| {
            !matches!(
                item,
                ResponseItem::Message {
                    role: Role::Assistant,
                    ..
                } | ResponseItem::Reasoning { .. }
            )
        })
        .is_some_and(|item| matches!(item, ResponseItem::FunctionCall { .. }))
}

#[derive(Debug, Default)]
pub(crate) struct ResponsesDecoder {
    created: bool,
    /// Deltas not yet covered by a finished item. A server that streams deltas but never
    /// sends the matching `response.output_item.done` still yields the item at completion.
    pending_text: String,
    pending_reasoning: String,
    /// Thinking tags in the output text (open-model servers without a reasoning parser).
    think: ThinkSplitter,
    /// Whether the server sent reasoning of its own (then the text is all answer).
    server_reasoning: bool,
    /// The tools offered in the request: only their calls are recovered from text.
    tools: Vec<ToolSpec>,
    /// Tool calls already recovered from text in this response (one warning per response).
    recovered_calls: bool,
    /// Everything the model writes, watched for a loop.
    guard: crate::looping::LoopGuard,
}

impl ResponsesDecoder {
    /// A decoder for the answer to a request that offered `tools`.
    pub(crate) fn new(tools: Vec<ToolSpec>) -> Self {
        Self {
            tools,
            ..Self::default()
        }
    }

    /// A finished message as the server sent it, with thinking and tool-call markup that a
    /// server without parsers left in the text taken out.
    fn on_message_done(
        &mut self,
        text: String,
        split_thinking: bool,
        out: &mut VecDeque<ResponseEvent>,
    ) {
        let (mut answer, mut reasoning) = (String::new(), String::new());
        if self.server_reasoning || !split_thinking {
            answer = text;
        } else {
            // Deltas were already split while streaming; the whole text is split again so
            // the item matches, without events.
            let mut scratch = VecDeque::new();
            let mut splitter = ThinkSplitter::default();
            let mut route =
                |p: Piece<'_>| route_piece(p, &mut answer, &mut reasoning, &mut scratch);
            splitter.feed(&text, &mut route);
            splitter.finish(&mut route);
        }
        if !reasoning.is_empty() {
            out.push_back(ResponseEvent::OutputItemDone(ResponseItem::Reasoning {
                text: reasoning,
                encrypted_content: None,
            }));
        }
        let mut calls = Vec::new();
        if let Some(found) = text_tools::extract(&answer, &self.tools) {
            if !self.recovered_calls {
                out.push_back(found.recovered_event());
            }
            self.recovered_calls = true;
            answer = found.text;
            calls = found.calls;
        }
        if !answer.is_empty() {
            out.push_back(ResponseEvent::OutputItemDone(ResponseItem::assistant_text(
                answer,
            )));
        }
        out.extend(calls.into_iter().map(TextToolCall::into_done));
    }
}

impl Decoder for ResponsesDecoder {
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
            "response.created" if !self.created => {
                self.created = true;
                out.push_back(ResponseEvent::Created);
            }
            "response.output_text.delta" => {
                if let Some(d) = v.get("delta").and_then(Value::as_str) {
                    self.guard.feed(d);
                    let (text, reasoning) = (&mut self.pending_text, &mut self.pending_reasoning);
                    self.think
                        .feed(d, &mut |p| route_piece(p, text, reasoning, out));
                }
                if self.guard.tripped() {
                    return Ok(self.stop_loop(out));
                }
            }
            "response.function_call_arguments.delta" => {
                if let Some(d) = v.get("delta").and_then(Value::as_str)
                    && self.guard.feed(d)
                {
                    return Ok(self.stop_loop(out));
                }
            }
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                self.server_reasoning = true;
                let (text, reasoning) = (&mut self.pending_text, &mut self.pending_reasoning);
                self.think
                    .disable(&mut |p| route_piece(p, text, reasoning, out));
                if let Some(d) = v.get("delta").and_then(Value::as_str) {
                    self.pending_reasoning.push_str(d);
                    out.push_back(ResponseEvent::ReasoningDelta(d.to_string()));
                }
            }
            "response.output_item.done" => {
                if let Some(item) = v.get("item").and_then(parse_output_item) {
                    match item {
                        ResponseItem::Message { .. } => {
                            self.pending_text.clear();
                            // Thinking split from these deltas is part of this message.
                            if !self.server_reasoning {
                                self.pending_reasoning.clear();
                            }
                            self.think = ThinkSplitter::default();
                            let text = item.message_text().unwrap_or_default();
                            self.on_message_done(text, true, out);
                        }
                        ResponseItem::Reasoning { .. } => {
                            self.server_reasoning = true;
                            self.pending_reasoning.clear();
                            out.push_back(ResponseEvent::OutputItemDone(item));
                        }
                        _ => out.push_back(ResponseEvent::OutputItemDone(item)),
                    }
                }
            }
            "response.completed" => {
                self.flush_pending(out);
                out.push_back(completed(&v));
                return Ok(Step::Done);
            }
            "response.failed" => {
                let msg = v
                    .pointer("/response/error")
                    .filter(|e| !e.is_null())
                    .map(error_text)
                    .unwrap_or_else(|| "the response failed without an error message".into());
                return Err(ModelError::Provider(msg));
            }
            "response.incomplete" => {
                let reason = v
                    .pointer("/response/incomplete_details/reason")
                    .and_then(Value::as_str)
                    .unwrap_or("unknown");
                if reason != "max_output_tokens" {
                    return Err(ModelError::Provider(format!(
                        "the response is incomplete (reason: {reason})"
                    )));
                }
                // Cut off at the output limit: what arrived is kept, and the engine decides
                // what to tell the user and the model.
                self.flush_pending(out);
                out.push_back(ResponseEvent::OutputLimitReached);
                out.push_back(completed(&v));
                return Ok(Step::Done);
            }
            "error" => {
                let err = v.get("error").filter(|e| !e.is_null()).unwrap_or(&v);
                return Err(ModelError::Provider(error_text(err)));
            }
            // Added/in-progress/argument-delta and future event types carry nothing the
            // finished items do not.
            _ => {}
        }
        Ok(Step::Continue)
    }

    fn on_eof(&mut self, _out: &mut VecDeque<ResponseEvent>) -> Result<(), ModelError> {
        Err(ModelError::StreamDisconnected(
            "the server closed the connection before `response.completed`".to_string(),
        ))
    }
}

impl ResponsesDecoder {
    /// The output fell into a loop: what arrived, without the repeated tail, and the end
    /// (ending the stream closes the connection, so the server stops generating).
    fn stop_loop(&mut self, out: &mut VecDeque<ResponseEvent>) -> Step {
        crate::looping::cut_loop(&mut self.pending_text);
        crate::looping::cut_loop(&mut self.pending_reasoning);
        self.flush_pending(out);
        out.push_back(ResponseEvent::RepetitionStopped);
        out.push_back(ResponseEvent::Completed {
            response_id: None,
            token_usage: None,
        });
        Step::Done
    }

    /// Items for deltas that no `response.output_item.done` covered.
    fn flush_pending(&mut self, out: &mut VecDeque<ResponseEvent>) {
        let (text, reasoning) = (&mut self.pending_text, &mut self.pending_reasoning);
        self.think
            .finish(&mut |p| route_piece(p, text, reasoning, out));
        if !self.pending_reasoning.is_empty() {
            out.push_back(ResponseEvent::OutputItemDone(ResponseItem::Reasoning {
                text: std::mem::take(&mut self.pending_reasoning),
                encrypted_content: None,
            }));
        }
        let text = std::mem::take(&mut self.pending_text);
        if !text.is_empty() {
            // Already split while streaming: only tool-call markup is left to find.
            self.on_message_done(text, false, out);
        }
    }
}

/// `Completed` from a `response.completed`/`response.incomplete` event.
fn completed(v: &Value) -> ResponseEvent {
    let response = v.get("response");
    ResponseEvent::Completed {
        response_id: response
            .and_then(|r| r.get("id"))
            .and_then(Value::as_str)
            .map(str::to_string),
        token_usage: response
            .and_then(|r| r.get("usage"))
            .filter(|u| u.is_object())
            .map(parse_usage),
    }
}

fn parse_output_item(item: &Value) -> Option<ResponseItem> {
    let str_field = |k: &str| item.get(k).and_then(Value::as_str);
    match str_field("type")? {
        "message" => {
            let mut text = String::new();
            for part in item.get("content").and_then(Value::as_array)? {
                if let Some(t) = part
                    .get("text")
                    .or_else(|| part.get("refusal"))
                    .and_then(Value::as_str)
                {
                    text.push_str(t);
                }
            }
            Some(ResponseItem::Message {
                role: Role::Assistant,
                content: vec![ContentItem::OutputText { text }],
            })
        }
        "function_call" => Some(ResponseItem::FunctionCall {
            call_id: str_field("call_id")
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .unwrap_or_else(synthesize_call_id),
            name: crate::chat::clean_tool_name(str_field("name").unwrap_or_default()),
            arguments: match item.get("arguments") {
                Some(Value::String(s)) => s.clone(),
                Some(Value::Null) | None => String::new(),
                Some(other) => other.to_string(),
            },
        }),
        "reasoning" => {
            let join = |key: &str| -> String {
                item.get(key)
                    .and_then(Value::as_array)
                    .map(|parts| {
                        parts
                            .iter()
                            .filter_map(|p| p.get("text").and_then(Value::as_str))
                            .collect::<Vec<_>>()
                            .join("\n\n")
                    })
                    .unwrap_or_default()
            };
            let mut text = join("summary");
            if text.is_empty() {
                text = join("content");
            }
            Some(ResponseItem::Reasoning {
                text,
                encrypted_content: str_field("encrypted_content").map(str::to_string),
            })
        }
        _ => None,
    }
}

fn parse_usage(u: &Value) -> TokenUsage {
    let num = |p: &str| u.pointer(p).and_then(Value::as_i64).unwrap_or(0);
    let input = num("/input_tokens");
    let output = num("/output_tokens");
    TokenUsage {
        input_tokens: input,
        cached_input_tokens: num("/input_tokens_details/cached_tokens"),
        output_tokens: output,
        reasoning_output_tokens: num("/output_tokens_details/reasoning_tokens"),
        total_tokens: u
            .get("total_tokens")
            .and_then(Value::as_i64)
            .unwrap_or(input + output),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(events: &[&str]) -> (Vec<ResponseEvent>, Result<Step, ModelError>) {
        let mut d = ResponsesDecoder::default();
        let mut out = VecDeque::new();
        let mut last = Ok(Step::Continue);
        for e in events {
            last = d.on_event("message", e, &mut out);
            if last.is_err() {
                break;
            }
        }
        (out.into(), last)
    }

    #[test]
    fn failed_response_carries_the_provider_message() {
        let (_, r) = feed(&[
            r#"{"type":"response.created","response":{"id":"r"}}"#,
            r#"{"type":"response.failed","response":{"error":{"code":"context_length_exceeded","message":"Your input exceeds the context window"}}}"#,
        ]);
        let err = r.unwrap_err();
        assert!(matches!(err, ModelError::Provider(_)));
        assert!(
            err.to_string().contains("exceeds the context window"),
            "{err}"
        );
        assert!(err.to_string().contains("context_length_exceeded"), "{err}");
    }

    #[test]
    fn error_event_and_unknown_events() {
        let (ev, r) = feed(&[
            r#"{"type":"response.in_progress"}"#,
            r#"{"type":"response.some_future_event","x":1}"#,
            r#"{"type":"error","code":"server_error","message":"try again"}"#,
        ]);
        assert!(ev.is_empty());
        assert!(r.unwrap_err().to_string().contains("try again"));
    }

    #[test]
    fn event_name_is_used_when_json_has_no_type() {
        let mut d = ResponsesDecoder::default();
        let mut out = VecDeque::new();
        d.on_event("response.output_text.delta", r#"{"delta":"hi"}"#, &mut out)
            .unwrap();
        assert_eq!(
            out.pop_front(),
            Some(ResponseEvent::OutputTextDelta("hi".into()))
        );
    }

    #[test]
    fn reasoning_item_with_encrypted_content() {
        let (ev, r) = feed(&[
            r#"{"type":"response.output_item.done","item":{"type":"reasoning","summary":[{"type":"summary_text","text":"a"},{"type":"summary_text","text":"b"}],"encrypted_content":"xyz"}}"#,
            r#"{"type":"response.output_item.done","item":{"type":"web_search_call"}}"#,
            r#"{"type":"response.completed","response":{"id":"r1","usage":null}}"#,
        ]);
        assert_eq!(r.unwrap(), Step::Done);
        assert_eq!(
            ev,
            vec![
                ResponseEvent::OutputItemDone(ResponseItem::Reasoning {
                    text: "a\n\nb".into(),
                    encrypted_content: Some("xyz".into())
                }),
                ResponseEvent::Completed {
                    response_id: Some("r1".into()),
                    token_usage: None
                }
            ]
        );
    }

    #[test]
    fn deltas_without_item_done_still_yield_items() {
        let (ev, _) = feed(&[
            r#"{"type":"response.reasoning_text.delta","delta":"think"}"#,
            r#"{"type":"response.output_text.delta","delta":"Hel"}"#,
            r#"{"type":"response.output_text.delta","delta":"lo"}"#,
            r#"{"type":"response.completed","response":{"id":"r"}}"#,
        ]);
        assert_eq!(
            ev[3..],
            [
                ResponseEvent::OutputItemDone(ResponseItem::Reasoning {
                    text: "think".into(),
                    encrypted_content: None
                }),
                ResponseEvent::OutputItemDone(ResponseItem::assistant_text("Hello")),
                ResponseEvent::Completed {
                    response_id: Some("r".into()),
                    token_usage: None
                }
            ]
        );
    }

    #[test]
    fn no_tools_means_no_tool_fields() {
        let body = request_body(
            &Prompt {
                model: "m".into(),
                ..Prompt::default()
            },
            Default::default(),
        );
        assert!(body.get("tools").is_none() && body.get("tool_choice").is_none());
        assert!(body.get("reasoning").is_none() && body.get("include").is_none());
        assert!(body.get("text").is_none());
    }

    #[test]
    fn summary_and_verbosity_are_sent_when_configured() {
        let body = request_body(
            &Prompt {
                model: "m".into(),
                reasoning_effort: Some(oi_protocol::config_types::ReasoningEffort::High),
                reasoning_summary: Some("detailed".into()),
                verbosity: Some("low".into()),
                ..Prompt::default()
            },
            Default::default(),
        );
        assert_eq!(
            body["reasoning"],
            json!({"effort": "high", "summary": "detailed"})
        );
        assert_eq!(body["text"], json!({"verbosity": "low"}));
        let chat = crate::chat::request_body(
            &Prompt {
                model: "m".into(),
                reasoning_summary: Some("detailed".into()),
                verbosity: Some("low".into()),
                ..Prompt::default()
            },
            crate::chat::ChatRequestOptions::default(),
        );
        assert_eq!(chat["verbosity"], "low");
        assert!(chat.get("reasoning").is_none(), "{chat}");
    }

    #[test]
    fn temperature_and_stop_are_sent_only_when_set() {
        let sampled = Prompt {
            model: "m".into(),
            temperature: Some(0.5),
            stop: (1..=6).map(|i| format!("S{i}")).collect(),
            ..Prompt::default()
        };
        let chat = crate::chat::request_body(&sampled, Default::default());
        assert_eq!(chat["temperature"], json!(0.5));
        // OpenAI takes at most four.
        assert_eq!(chat["stop"], json!(["S1", "S2", "S3", "S4"]));
        let responses = request_body(&sampled, Default::default());
        assert_eq!(responses["temperature"], json!(0.5));
        assert!(responses.get("stop").is_none(), "{responses}");
        let plain = Prompt {
            model: "m".into(),
            ..Prompt::default()
        };
        let chat = crate::chat::request_body(&plain, Default::default());
        assert!(chat.get("temperature").is_none() && chat.get("stop").is_none());
        let responses = request_body(&plain, Default::default());
        assert!(responses.get("temperature").is_none(), "{responses}");
    }
}
