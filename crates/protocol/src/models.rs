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
    /// Text the user, the developer or a tool gave the model.
    InputText {
        /// The text.
        text: String,
    },
    /// `image_url` is an `https:` or `data:<mime>;base64,...` URL.
    InputImage {
        /// The image's URL.
        image_url: String,
    },
    /// Text the model wrote.
    OutputText {
        /// The text.
        text: String,
    },
}

/// Who said a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// The system prompt.
    System,
    /// Instructions from the program, beside the system prompt.
    Developer,
    /// The user.
    User,
    /// The model.
    Assistant,
}

/// One item of conversation history.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResponseItem {
    /// A message of one role.
    Message {
        /// Who said it.
        role: Role,
        /// What it says, in parts.
        content: Vec<ContentItem>,
    },
    /// Model reasoning. `text` is the raw reasoning text (chat `reasoning_content` or
    /// Responses reasoning summary/content joined).
    Reasoning {
        /// The reasoning text.
        text: String,
        /// Opaque provider payload to send back unchanged (Responses `encrypted_content`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        encrypted_content: Option<String>,
    },
    /// A tool call the model made.
    FunctionCall {
        /// The call's id; its output names it.
        call_id: String,
        /// The tool called.
        name: String,
        /// The raw argument string exactly as the model produced it (may be invalid JSON).
        arguments: String,
    },
    /// What a tool call returned.
    FunctionCallOutput {
        /// The id of the call it answers.
        call_id: String,
        /// The result.
        output: FunctionCallOutput,
    },
}

impl ResponseItem {
    /// A user message of `text`.
    pub fn user_text(text: impl Into<String>) -> Self {
        ResponseItem::Message {
            role: Role::User,
            content: vec![ContentItem::InputText { text: text.into() }],
        }
    }

    /// A model message of `text`.
    pub fn assistant_text(text: impl Into<String>) -> Self {
        ResponseItem::Message {
            role: Role::Assistant,
            content: vec![ContentItem::OutputText { text: text.into() }],
        }
    }

    /// A developer message of `text`.
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
    /// A text result; `success` false when the tool failed.
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

    /// The URLs of the result's images.
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
    /// The name the model calls it by.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON Schema of the arguments object.
    pub parameters: serde_json::Value,
}

/// Token accounting as reported by the provider.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenUsage {
    /// Tokens the request carried.
    pub input_tokens: i64,
    /// Of those, tokens the provider had cached.
    pub cached_input_tokens: i64,
    /// Tokens the model wrote.
    pub output_tokens: i64,
    /// Of those, reasoning tokens.
    pub reasoning_output_tokens: i64,
    /// All tokens, as the provider counts them.
    pub total_tokens: i64,
}

impl TokenUsage {
    /// Adds `other`'s counts to these.
    pub fn add_assign(&mut self, other: &TokenUsage) {
        self.input_tokens += other.input_tokens;
        self.cached_input_tokens += other.cached_input_tokens;
        self.output_tokens += other.output_tokens;
        self.reasoning_output_tokens += other.reasoning_output_tokens;
        self.total_tokens += other.total_tokens;
    }
}
