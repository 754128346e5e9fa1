//! Servers asking our model to sample (`sampling/createMessage`), in our own terms.
//!
//! The handler turns the server's request into a [`SamplingRequest`] (checked and bounded
//! here: no tools, no audio, at most [`MAX_SAMPLING_REQUEST_BYTES`]) and hands it to the
//! [`SamplingHandler`] the engine gave the manager, which asks the user and calls the model;
//! this crate knows neither. The reply becomes a `CreateMessageResult`, an error a JSON-RPC
//! error the server can show.

// rmcp marks sampling deprecated for the 2026-07-28 protocol; we speak 2025-06-18, where it
// is current.
#![allow(deprecated)]

use futures::future::BoxFuture;
use oi_config::mcp::McpSamplingMode;
use rmcp::model::{
    CreateMessageRequestParams, CreateMessageResult, ErrorCode, Role, SamplingMessageContentBlock,
};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// The most a sampling request may carry: its system prompt, texts and (base64) images.
pub const MAX_SAMPLING_REQUEST_BYTES: usize = 4 * 1024 * 1024;

/// One message of the conversation a server wants continued.
#[derive(Clone, Debug, PartialEq)]
pub struct SamplingMessage {
    /// Who spoke it.
    pub role: SamplingRole,
    /// What it holds, in order.
    pub content: Vec<SamplingContent>,
}

/// Who spoke a sampling message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SamplingRole {
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// What a sampling message may hold (audio, tool use and tool results are refused before
/// the handler sees the request).
#[derive(Clone, Debug, PartialEq)]
pub enum SamplingContent {
    /// Text.
    Text(String),
    /// Base64 data and its MIME type, e.g. `image/png`.
    Image {
        /// The image, base64.
        data: String,
        /// Its MIME type, e.g. `image/png`.
        mime_type: String,
    },
}

/// A server's `sampling/createMessage`, checked.
#[derive(Clone, Debug)]
pub struct SamplingRequest {
    /// The server's name (its `[mcp_servers.<name>]` key).
    pub server: String,
    /// The server's `sampling` setting: `Prompt` asks the user first, `Approve` does not.
    pub mode: McpSamplingMode,
    /// The conversation to continue, oldest first.
    pub messages: Vec<SamplingMessage>,
    /// The system prompt the server asks for, if any.
    pub system_prompt: Option<String>,
    /// The server's bound on the answer; the model request carries it.
    pub max_tokens: u32,
    /// The sampling temperature the server asks for, if any.
    pub temperature: Option<f32>,
    /// Strings that end the answer.
    pub stop_sequences: Vec<String>,
    /// `modelPreferences.hints`: advisory; the session's model answers.
    pub model_hints: Vec<String>,
    /// How long the model may take (the server's `tool_timeout_sec`); the user's approval
    /// does not count.
    pub timeout: Duration,
    /// Cancelled when the server withdraws the request.
    pub cancel: CancellationToken,
}

impl SamplingRequest {
    /// Bytes of text and image data the request carries.
    pub fn size(&self) -> usize {
        let content: usize = self
            .messages
            .iter()
            .flat_map(|m| &m.content)
            .map(|c| match c {
                SamplingContent::Text(t) => t.len(),
                SamplingContent::Image { data, .. } => data.len(),
            })
            .sum();
        content + self.system_prompt.as_ref().map_or(0, String::len)
    }

    /// Whether any message carries an image.
    pub fn has_images(&self) -> bool {
        self.messages
            .iter()
            .flat_map(|m| &m.content)
            .any(|c| matches!(c, SamplingContent::Image { .. }))
    }
}

/// Why generation stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SamplingStop {
    /// The model finished its answer.
    EndTurn,
    /// The answer reached `max_tokens`.
    MaxTokens,
    /// The answer reached one of the stop sequences.
    StopSequence,
}

impl SamplingStop {
    /// The MCP `stopReason`.
    pub fn as_str(&self) -> &'static str {
        match self {
            SamplingStop::EndTurn => CreateMessageResult::STOP_REASON_END_TURN,
            SamplingStop::MaxTokens => CreateMessageResult::STOP_REASON_END_MAX_TOKEN,
            SamplingStop::StopSequence => CreateMessageResult::STOP_REASON_END_SEQUENCE,
        }
    }
}

/// The model's answer.
#[derive(Clone, Debug, PartialEq)]
pub struct SamplingReply {
    /// The answer's text.
    pub text: String,
    /// The model that answered.
    pub model: String,
    /// Why generation stopped.
    pub stop_reason: SamplingStop,
}

/// Why a sampling request got no answer; the message is what the server is told.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SamplingError {
    /// The user (or the policy, when nobody can be asked) said no.
    #[error("{0}")]
    Rejected(String),
    /// The request asks for something this client or model cannot do.
    #[error("{0}")]
    Unsupported(String),
    /// The model request failed or timed out.
    #[error("{0}")]
    Failed(String),
}

impl SamplingError {
    /// As a JSON-RPC error: a rejection is code -1, as the MCP specification's example of a
    /// user rejecting a sampling request; a request we cannot serve is invalid params.
    pub(crate) fn into_error_data(self) -> rmcp::ErrorData {
        match self {
            SamplingError::Rejected(m) => rmcp::ErrorData::new(ErrorCode(-1), m, None),
            SamplingError::Unsupported(m) => rmcp::ErrorData::invalid_params(m, None),
            SamplingError::Failed(m) => rmcp::ErrorData::internal_error(m, None),
        }
    }
}

/// Serves servers' sampling requests (the engine: approval, the session's model, token usage).
/// An implementation bounds its own waits and returns soon after `request.cancel` fires.
pub trait SamplingHandler: Send + Sync {
    /// The session model's answer to `request`, or why there is none.
    fn sample(
        &self,
        request: SamplingRequest,
    ) -> BoxFuture<'static, Result<SamplingReply, SamplingError>>;
}

/// What the handler needs besides the server's params.
pub(crate) struct SamplingSite<'a> {
    pub server: &'a str,
    pub mode: McpSamplingMode,
    pub timeout: Duration,
    pub cancel: CancellationToken,
}

/// The server's params as a [`SamplingRequest`], or what is wrong with them.
pub(crate) fn request_from_params(
    site: SamplingSite<'_>,
    params: CreateMessageRequestParams,
) -> Result<SamplingRequest, SamplingError> {
    let server = site.server;
    if params.tools.is_some() || params.tool_choice.is_some() {
        return Err(SamplingError::Unsupported(format!(
            "sampling with tools is not supported by this client (MCP server `{server}` sent `tools`/`toolChoice`; it was not offered sampling.tools)"
        )));
    }
    if params.messages.is_empty() {
        return Err(SamplingError::Unsupported(
            "sampling/createMessage needs at least one message".into(),
        ));
    }
    if params.max_tokens == 0 {
        return Err(SamplingError::Unsupported(
            "sampling/createMessage needs maxTokens of at least 1".into(),
        ));
    }
    let mut messages = Vec::with_capacity(params.messages.len());
    for (i, message) in params.messages.into_iter().enumerate() {
        let role = match message.role {
            Role::User => SamplingRole::User,
            Role::Assistant => SamplingRole::Assistant,
        };
        let mut content = Vec::new();
        for block in message.content.into_vec() {
            content.push(match block {
                SamplingMessageContentBlock::Text(t) => SamplingContent::Text(t.text),
                SamplingMessageContentBlock::Image(img) => SamplingContent::Image {
                    data: img.data,
                    mime_type: img.mime_type,
                },
                SamplingMessageContentBlock::Audio(_) => {
                    return Err(SamplingError::Unsupported(format!(
                        "messages[{i}] holds audio, which this client cannot send to a model; send text"
                    )));
                }
                SamplingMessageContentBlock::ToolUse(_)
                | SamplingMessageContentBlock::ToolResult(_) => {
                    return Err(SamplingError::Unsupported(format!(
                        "messages[{i}] holds a tool use or tool result; sampling with tools is not supported by this client"
                    )));
                }
                // A kind of content newer than this client.
                _ => {
                    return Err(SamplingError::Unsupported(format!(
                        "messages[{i}] holds content this client cannot send to a model; send text"
                    )));
                }
            });
        }
        messages.push(SamplingMessage { role, content });
    }
    let model_hints = params
        .model_preferences
        .and_then(|p| p.hints)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|h| h.name)
        .collect();
    let request = SamplingRequest {
        server: server.to_string(),
        mode: site.mode,
        messages,
        system_prompt: params.system_prompt.filter(|s| !s.is_empty()),
        max_tokens: params.max_tokens,
        temperature: params.temperature,
        stop_sequences: params.stop_sequences.unwrap_or_default(),
        model_hints,
        timeout: site.timeout,
        cancel: site.cancel,
    };
    let size = request.size();
    if size > MAX_SAMPLING_REQUEST_BYTES {
        return Err(SamplingError::Unsupported(format!(
            "the sampling request is {size} bytes; this client accepts at most {} MiB",
            MAX_SAMPLING_REQUEST_BYTES / (1024 * 1024)
        )));
    }
    Ok(request)
}

/// The model's answer as the server expects it.
pub(crate) fn result_from_reply(reply: SamplingReply) -> CreateMessageResult {
    let message = rmcp::model::SamplingMessage::new(
        Role::Assistant,
        SamplingMessageContentBlock::text(reply.text),
    );
    CreateMessageResult::new(message, reply.model).with_stop_reason(reply.stop_reason.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site() -> SamplingSite<'static> {
        SamplingSite {
            server: "s",
            mode: McpSamplingMode::Prompt,
            timeout: Duration::from_secs(1),
            cancel: CancellationToken::new(),
        }
    }

    fn params(json: serde_json::Value) -> CreateMessageRequestParams {
        serde_json::from_value(json).unwrap()
    }

    #[test]
    fn the_servers_params_become_our_request() {
        let r = request_from_params(
            site(),
            params(serde_json::json!({
                "messages": [
                    {"role": "user", "content": {"type": "text", "text": "hi"}},
                    {"role": "assistant", "content": [{"type": "text", "text": "yes?"}]},
                    {"role": "user", "content": {"type": "image", "data": "AAAA", "mimeType": "image/png"}}
                ],
                "systemPrompt": "be brief",
                "maxTokens": 42,
                "temperature": 0.5,
                "stopSequences": ["END"],
                "modelPreferences": {"hints": [{"name": "claude"}, {}]},
                "includeContext": "thisServer"
            })),
        )
        .unwrap();
        assert_eq!(r.server, "s");
        assert_eq!(r.messages.len(), 3);
        assert_eq!(r.messages[0].role, SamplingRole::User);
        assert_eq!(r.messages[1].role, SamplingRole::Assistant);
        assert_eq!(
            r.messages[1].content,
            [SamplingContent::Text("yes?".into())]
        );
        assert!(r.has_images());
        assert_eq!(r.system_prompt.as_deref(), Some("be brief"));
        assert_eq!(r.max_tokens, 42);
        assert_eq!(r.temperature, Some(0.5));
        assert_eq!(r.stop_sequences, ["END"]);
        assert_eq!(r.model_hints, ["claude"]);
        assert_eq!(r.size(), "hi".len() + "yes?".len() + 4 + "be brief".len());
    }

    #[test]
    fn what_we_cannot_serve_is_refused_with_the_reason() {
        let audio = serde_json::json!({
            "messages": [{"role": "user", "content": {"type": "audio", "data": "AA", "mimeType": "audio/wav"}}],
            "maxTokens": 5
        });
        let e = request_from_params(site(), params(audio)).unwrap_err();
        assert!(e.to_string().contains("messages[0] holds audio"), "{e}");
        let tools = serde_json::json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "x"}}],
            "maxTokens": 5,
            "tools": [{"name": "t", "inputSchema": {"type": "object"}}]
        });
        let e = request_from_params(site(), params(tools)).unwrap_err();
        assert!(e.to_string().contains("sampling with tools"), "{e}");
        let zero = serde_json::json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "x"}}],
            "maxTokens": 0
        });
        let e = request_from_params(site(), params(zero)).unwrap_err();
        assert!(e.to_string().contains("maxTokens"), "{e}");
        let big = serde_json::json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "x".repeat(MAX_SAMPLING_REQUEST_BYTES + 1)}}],
            "maxTokens": 5
        });
        let e = request_from_params(site(), params(big)).unwrap_err();
        assert!(e.to_string().contains("at most 4 MiB"), "{e}");
        assert_eq!(
            e.into_error_data().code,
            rmcp::model::ErrorCode::INVALID_PARAMS
        );
        assert_eq!(
            SamplingError::Rejected("no".into()).into_error_data().code,
            ErrorCode(-1)
        );
    }

    #[test]
    fn the_reply_is_an_assistant_message_with_model_and_stop_reason() {
        let result = result_from_reply(SamplingReply {
            text: "teal".into(),
            model: "m".into(),
            stop_reason: SamplingStop::MaxTokens,
        });
        let v = serde_json::to_value(&result).unwrap();
        assert_eq!(v["role"], "assistant");
        assert_eq!(v["content"]["type"], "text");
        assert_eq!(v["content"]["text"], "teal");
        assert_eq!(v["model"], "m");
        assert_eq!(v["stopReason"], "maxTokens");
    }
}
