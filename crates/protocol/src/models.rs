//! Conversation history items: what the engine sends to a model and gets back.
//!
//! The shapes mirror the Responses API item types (snake_case `type` tag) because they are
//! also what rollout files store. The model client converts them to Chat Completions
//! messages when a provider speaks `wire_api = "chat"`.

use serde::{Deserialize, Serialize};

/// One piece of message content.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentItem {
    InputText {
        text: String,
    },
    /// `image_url` is an `https:` or `data:<mime>;base64,...` URL.
    InputImage {
        image_url: String,
    },
    OutputText {
        text: String,
    },
}

/// Who said a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    System,
    Developer,
    User,
    Assistant,
}

/// One item of conversation history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResponseItem {
    Message {
        role: Role,
        content: Vec<ContentItem>,
    },
    /// Model reasoning. `text` is the raw reasoning text (chat `reasoning_content` or
    /// Responses reasoning summary/content joined).
    Reasoning {
        text: String,
        /// Opaque provider payload to send back unchanged (Responses `encrypted_content`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<String>,
    },
    FunctionCall {
        call_id: String,
        name: String,
        /// The raw argument string exactly as the model produced it (may be invalid JSON).
        arguments: String,
    },
    FunctionCallOutput {
        call_id: String,
        output: FunctionCallOutput,
    },
}

impl ResponseItem {
    pub fn user_text(text: impl Into<String>) -> Self {
        ResponseItem::Message {
            role: Role::User,
            content: vec![ContentItem::InputText { text: text.into() }],
        }
    }

    pub fn assistant_text(text: impl Into<String>) -> Self {
        ResponseItem::Message {
            role: Role::Assistant,
            content: vec![ContentItem::OutputText { text: text.into() }],
        }
    }

    pub fn developer_text(text: impl Into<String>) -> Self {
        ResponseItem::Message {
            role: Role::Developer,
            content: vec![ContentItem::InputText { text: text.into() }],
        }
    }

    /// Concatenated text of a message item (input and output text parts).
    pub fn message_text(&self) -> Option<String> {
        match self {
            ResponseItem::Message { content, .. } => Some(content_text(content)),
            _ => None,
        }
    }
}

/// Joined text of content parts; images are skipped.
pub fn content_text(content: &[ContentItem]) -> String {
    let mut out = String::new();
    for c in content {
        match c {
            ContentItem::InputText { text } | ContentItem::OutputText { text } => {
                out.push_str(text)
            }
            ContentItem::InputImage { .. } => {}
        }
    }
    out
}

/// The result of a tool call as the model will see it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FunctionCallOutput {
    /// Text and images. Most tools produce a single text part.
    pub content: Vec<ContentItem>,
    /// `Some(false)` when the tool failed (shown to models that understand it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub success: Option<bool>,
}

impl FunctionCallOutput {
    pub fn text(text: impl Into<String>, success: bool) -> Self {
        Self {
            content: vec![ContentItem::InputText { text: text.into() }],
            success: Some(success),
        }
    }

    /// Text parts joined; images are described by a placeholder.
    pub fn text_content(&self) -> String {
        let mut out = String::new();
        for c in &self.content {
            match c {
                ContentItem::InputText { text } | ContentItem::OutputText { text } => {
                    if !out.is_empty() {
                        out.push('\n');
                    }
                    out.push_str(text)
                }
                ContentItem::InputImage { .. } => {}
            }
        }
        out
    }

    pub fn images(&self) -> impl Iterator<Item = &str> {
        self.content.iter().filter_map(|c| match c {
            ContentItem::InputImage { image_url } => Some(image_url.as_str()),
            _ => None,
        })
    }
}

/// A function tool offered to the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: serde_json::Value,
}

/// Token accounting as reported by the provider.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    pub input_tokens: i64,
    pub cached_input_tokens: i64,
    pub output_tokens: i64,
    pub reasoning_output_tokens: i64,
    pub total_tokens: i64,
}

impl TokenUsage {
    pub fn add_assign(&mut self, other: &TokenUsage) {
        self.input_tokens += other.input_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
        self.output_tokens += other.output_tokens;
        self.reasoning_output_tokens += other.reasoning_output_tokens;
        self.total_tokens += other.total_tokens;
    }
}
