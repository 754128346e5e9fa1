//! A `session/prompt`'s content blocks as a turn's input, and the slash commands a session
//! advertises (`available_commands_update`).
//!
//! Text is the user's message; a resource link names a file or URI the model can open with
//! its tools; an embedded resource's text goes in as context under its URI; an image goes
//! to the model when the model takes images (checked by its bytes and size, as `-i` files
//! are). What the model cannot be given is refused with the reason, never dropped silently.

use crate::schema::{
    AvailableCommand, AvailableCommandInput, ContentBlock, EmbeddedResourceResource,
    UnstructuredCommandInput,
};
use base64::Engine;
use oi_protocol::user_input::UserInput;

/// A prompt the session runs.
#[derive(Debug, Clone, PartialEq)]
pub enum PromptTurn {
    /// The user's input, for a turn that answers it.
    Input(Vec<UserInput>),
    /// `/compact`: summarize the conversation so far.
    Compact,
}

/// The commands every session has.
pub fn commands() -> Vec<AvailableCommand> {
    vec![
        AvailableCommand::new(
            "compact",
            "Summarize the conversation so far, to free the model's context window",
        ),
        AvailableCommand::new(
            "review",
            "Review the uncommitted changes in the working tree and report problems",
        )
        .input(AvailableCommandInput::Unstructured(
            UnstructuredCommandInput::new("what to focus on (optional)"),
        )),
    ]
}

/// What `/review [focus]` asks the model.
fn review_prompt(focus: &str) -> String {
    let mut p = String::from(
        "Review the uncommitted changes in this repository (run `git status` and `git diff`, \
         including untracked files). Report bugs, risky changes and missing tests, most \
         serious first, each with its file and line. Do not change any file.",
    );
    if !focus.trim().is_empty() {
        p.push_str("\nFocus on: ");
        p.push_str(focus.trim());
    }
    p
}

/// Why a prompt cannot be sent to the model.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum PromptError {
    /// The prompt had no content blocks.
    #[error("the prompt is empty; send at least one content block")]
    Empty,
    /// Block `block` (from 0) cannot be sent; `why` says why and what to send instead.
    #[error("prompt block {block}: {why}")]
    Block {
        /// The block's index, from 0.
        block: usize,
        /// Why it was refused and what to send instead.
        why: String,
    },
}

impl PromptError {
    fn block(block: usize, why: impl Into<String>) -> Self {
        Self::Block {
            block,
            why: why.into(),
        }
    }
}

/// The turn `blocks` ask for, for `model`. The error names the block that cannot be sent
/// and why.
pub fn turn_of(blocks: &[ContentBlock], model: &str) -> Result<PromptTurn, PromptError> {
    if blocks.is_empty() {
        return Err(PromptError::Empty);
    }
    if let [ContentBlock::Text(t)] = blocks
        && let Some(command) = t.text.trim().strip_prefix('/')
    {
        let (name, rest) = command
            .split_once(char::is_whitespace)
            .unwrap_or((command, ""));
        match name {
            "compact" => return Ok(PromptTurn::Compact),
            "review" => {
                return Ok(PromptTurn::Input(vec![UserInput::text(review_prompt(
                    rest,
                ))]));
            }
            _ => {}
        }
    }
    let mut items = Vec::new();
    for (i, block) in blocks.iter().enumerate() {
        match block {
            ContentBlock::Text(t) => items.push(UserInput::text(t.text.clone())),
            ContentBlock::ResourceLink(link) => {
                let target = file_path(&link.uri).unwrap_or_else(|| link.uri.clone());
                items.push(UserInput::text(format!("@{target}")));
            }
            ContentBlock::Resource(res) => match &res.resource {
                EmbeddedResourceResource::TextResourceContents(t) => {
                    let at = file_path(&t.uri).unwrap_or_else(|| t.uri.clone());
                    items.push(UserInput::text(format!(
                        "<context ref=\"{at}\">\n{}\n</context>",
                        t.text
                    )));
                }
                EmbeddedResourceResource::BlobResourceContents(b) => {
                    let mime = b.mime_type.as_deref().unwrap_or("");
                    if mime.starts_with("image/") {
                        items.push(image(i, &b.blob, model)?);
                    } else {
                        return Err(PromptError::block(
                            i,
                            format!(
                                "the embedded resource {} is binary ({}); only text and images can be sent to the model",
                                b.uri,
                                if mime.is_empty() {
                                    "no MIME type"
                                } else {
                                    mime
                                }
                            ),
                        ));
                    }
                }
                _ => return Err(PromptError::block(i, "an unknown kind of resource")),
            },
            ContentBlock::Image(img) => items.push(image(i, &img.data, model)?),
            ContentBlock::Audio(_) => {
                return Err(PromptError::block(
                    i,
                    "audio is not supported (the agent does not advertise it); send text instead",
                ));
            }
            _ => return Err(PromptError::block(i, "an unknown kind of content")),
        }
    }
    Ok(PromptTurn::Input(items))
}

/// An image block as the model's input, after the checks `-i` files get.
fn image(i: usize, data: &str, model: &str) -> Result<UserInput, PromptError> {
    if let Some(why) = oi_core::image_input::vision_refusal(model) {
        return Err(PromptError::block(i, why));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| PromptError::block(i, format!("the image data is not base64 ({e})")))?;
    let max = oi_core::image_input::MAX_IMAGE_BYTES;
    if bytes.len() as u64 > max {
        return Err(PromptError::block(
            i,
            format!(
                "the image is {} MiB; the limit is {} MiB — scale it down or crop it first",
                (bytes.len() as u64).div_ceil(1024 * 1024),
                max / (1024 * 1024)
            ),
        ));
    }
    // Judged by the bytes, not the MIME type the client claims.
    let mime = oi_core::image_input::sniff_image_type(&bytes).ok_or_else(|| {
        PromptError::block(
            i,
            "the image is not a PNG, JPEG, GIF or WebP (judged by its content)",
        )
    })?;
    let b64 = base64::engine::general_purpose::STANDARD.encode(&bytes);
    Ok(UserInput::Image {
        image_url: format!("data:{mime};base64,{b64}"),
    })
}

/// The path of a `file://` URI.
fn file_path(uri: &str) -> Option<String> {
    let rest = uri.strip_prefix("file://")?;
    Some(percent_decode(rest))
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let hex = |b: u8| (b as char).to_digit(16);
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let (Some(hi), Some(lo)) = (
                bytes.get(i + 1).copied().and_then(hex),
                bytes.get(i + 2).copied().and_then(hex),
            )
        {
            out.push((hi * 16 + lo) as u8);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn blocks(v: serde_json::Value) -> Vec<ContentBlock> {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn text_links_and_embedded_text_become_the_message() {
        let b = blocks(json!([
            {"type": "text", "text": "explain"},
            {"type": "resource_link", "name": "a b.rs", "uri": "file:///w/a%20b.rs"},
            {"type": "resource", "resource": {"uri": "file:///w/c.rs", "text": "fn c() {}"}}
        ]));
        let PromptTurn::Input(items) = turn_of(&b, "m").unwrap() else {
            panic!("not input")
        };
        assert_eq!(
            items,
            vec![
                UserInput::text("explain"),
                UserInput::text("@/w/a b.rs"),
                UserInput::text("<context ref=\"/w/c.rs\">\nfn c() {}\n</context>"),
            ]
        );
    }

    #[test]
    fn images_are_checked_by_their_bytes() {
        let png = base64::engine::general_purpose::STANDARD.encode(b"\x89PNG\r\n\x1a\nrest");
        let b = blocks(json!([{"type": "image", "data": png, "mimeType": "image/jpeg"}]));
        let PromptTurn::Input(items) = turn_of(&b, "m").unwrap() else {
            panic!()
        };
        assert!(
            matches!(&items[0], UserInput::Image { image_url } if image_url.starts_with("data:image/png;base64,"))
        );
        let text = base64::engine::general_purpose::STANDARD.encode(b"hello");
        let b = blocks(json!([{"type": "image", "data": text, "mimeType": "image/png"}]));
        assert!(
            turn_of(&b, "m")
                .unwrap_err()
                .to_string()
                .contains("not a PNG")
        );
        let b = blocks(json!([{"type": "image", "data": "%%%", "mimeType": "image/png"}]));
        assert!(turn_of(&b, "m").unwrap_err().to_string().contains("base64"));
    }

    #[test]
    fn commands_and_refusals() {
        let b = blocks(json!([{"type": "text", "text": "/compact"}]));
        assert_eq!(turn_of(&b, "m").unwrap(), PromptTurn::Compact);
        let b = blocks(json!([{"type": "text", "text": "/review the parser"}]));
        let PromptTurn::Input(items) = turn_of(&b, "m").unwrap() else {
            panic!()
        };
        assert!(oi_protocol::user_input::joined_text(&items).contains("Focus on: the parser"));
        assert!(turn_of(&[], "m").unwrap_err().to_string().contains("empty"));
        let b = blocks(json!([{"type": "audio", "data": "AA==", "mimeType": "audio/wav"}]));
        assert!(turn_of(&b, "m").unwrap_err().to_string().contains("audio"));
    }
}
