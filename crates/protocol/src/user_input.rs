//! What a user sends to start or steer a turn.

use serde::{Deserialize, Serialize};
use std::path::PathBuf;

/// One part of what the user sends.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum UserInput {
    /// Text.
    Text {
        /// The text.
        text: String,
    },
    /// An image by URL (`https:` or `data:`).
    Image {
        /// The image's URL.
        image_url: String,
    },
    /// An image file on disk, read and inlined as a data URL when sent.
    LocalImage {
        /// The image file.
        path: PathBuf,
    },
}

impl UserInput {
    /// Text `s`.
    pub fn text(s: impl Into<String>) -> Self {
        UserInput::Text { text: s.into() }
    }
}

/// The text of all text items, joined by newlines.
pub fn joined_text(items: &[UserInput]) -> String {
    items
        .iter()
        .filter_map(|i| match i {
            UserInput::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n")
}
