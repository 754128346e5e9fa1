//! Prompts and resources for the user (the TUI's `/mcp__server__prompt` commands and
//! `@server:uri` mentions): `prompts/get`, and the text a prompt's messages or a resource's
//! contents put into the user's message. Listing both is in `resources` (the status
//! snapshot keeps what each ready server listed).

use crate::McpRequestError;
use crate::manager::McpConnectionManager;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

/// The most text one prompt or resource adds to a message; the middle of a longer text is
/// cut (a resource can be a whole file).
pub const MAX_INSERTED_BYTES: usize = 64 * 1024;

/// What a prompt's messages add to the user's turn.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PromptInput {
    /// The messages' text, in order, separated by blank lines.
    pub text: String,
    /// Images the messages carry, as `data:` URLs.
    pub images: Vec<String>,
}

impl McpConnectionManager {
    /// `prompts/list` on one server: `{prompts, nextCursor?}`.
    pub async fn list_prompts(
        &self,
        server: &str,
        cursor: Option<String>,
        cancel: CancellationToken,
    ) -> Result<Value, McpRequestError> {
        let params = cursor.map_or_else(|| json!({}), |c| json!({"cursor": c}));
        self.request(server, "prompts/list", params, cancel).await
    }

    /// `prompts/get` on one server: `{description?, messages: [...]}`.
    pub async fn get_prompt(
        &self,
        server: &str,
        name: &str,
        arguments: Map<String, Value>,
        cancel: CancellationToken,
    ) -> Result<Value, McpRequestError> {
        let mut params = json!({ "name": name });
        if !arguments.is_empty() {
            params["arguments"] = Value::Object(arguments);
        }
        self.request(server, "prompts/get", params, cancel).await
    }
}

/// The text (and images) of a `prompts/get` result: each message's content in order; an
/// embedded resource gives its text, an image its data URL, anything else a note.
pub fn prompt_input(result: &Value) -> PromptInput {
    let mut parts = Vec::new();
    let mut images = Vec::new();
    for message in result
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let Some(content) = message.get("content") else {
            continue;
        };
        // The spec has one content block per message; some servers send a list.
        let blocks: Vec<&Value> = match content {
            Value::Array(list) => list.iter().collect(),
            one => vec![one],
        };
        for block in blocks {
            match block.get("type").and_then(Value::as_str) {
                Some("text") => {
                    if let Some(t) = block.get("text").and_then(Value::as_str) {
                        parts.push(t.to_string());
                    }
                }
                Some("image") => match (
                    block.get("mimeType").and_then(Value::as_str),
                    block.get("data").and_then(Value::as_str),
                ) {
                    (Some(mime), Some(data)) => images.push(format!("data:{mime};base64,{data}")),
                    _ => parts.push("[an image the server sent without data]".into()),
                },
                Some("resource") => {
                    if let Some(r) = block.get("resource") {
                        parts.push(resource_block(r));
                    }
                }
                Some(other) => parts.push(format!("[{other} content left out]")),
                None => {}
            }
        }
    }
    PromptInput {
        text: crate::truncate_middle(&parts.join("\n\n"), MAX_INSERTED_BYTES),
        images,
    }
}

/// A `resources/read` result as text for the user's message: every text content in order,
/// binary contents named with their type and size.
pub fn resource_text(result: &Value) -> String {
    let parts: Vec<String> = result
        .get("contents")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(resource_block)
        .collect();
    crate::truncate_middle(&parts.join("\n\n"), MAX_INSERTED_BYTES)
}

fn resource_block(r: &Value) -> String {
    if let Some(t) = r.get("text").and_then(Value::as_str) {
        return t.to_string();
    }
    let uri = r.get("uri").and_then(Value::as_str).unwrap_or("?");
    let mime = r
        .get("mimeType")
        .and_then(Value::as_str)
        .unwrap_or("application/octet-stream");
    let bytes = r
        .get("blob")
        .and_then(Value::as_str)
        .map(|b| b.len() * 3 / 4)
        .unwrap_or(0);
    format!("[binary resource {uri}: {mime}, about {bytes} bytes, left out]")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompt_messages_become_text_and_images() {
        let result = json!({"messages": [
            {"role": "user", "content": {"type": "text", "text": "What's weather in Paris?"}},
            {"role": "user", "content": {"type": "image", "mimeType": "image/png", "data": "iVBO"}},
            {"role": "user", "content": {"type": "resource", "resource": {"uri": "demo://x", "text": "resource body"}}},
            {"role": "assistant", "content": {"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}}
        ]});
        let input = prompt_input(&result);
        assert_eq!(
            input.text,
            "What's weather in Paris?\n\nresource body\n\n[audio content left out]"
        );
        assert_eq!(input.images, ["data:image/png;base64,iVBO"]);
    }

    #[test]
    fn resource_contents_become_text() {
        let result = json!({"contents": [
            {"uri": "demo://a", "mimeType": "text/markdown", "text": "# Title"},
            {"uri": "demo://b", "mimeType": "application/pdf", "blob": "AAAAAAAA"}
        ]});
        assert_eq!(
            resource_text(&result),
            "# Title\n\n[binary resource demo://b: application/pdf, about 6 bytes, left out]"
        );
    }
}
