//! `tool_call_format = "text"`: the tools are described in the system prompt in the markup
//! the model family was trained on, and its calls are parsed from the answer text.
//!
//! For servers and models whose native tool calls fail: a server whose template parser does
//! not catch the shapes a small model writes, or a model that was fine-tuned on its own
//! markup. The request carries no `tools`; calls and results in the history go back as text
//! in the same markup, so the model sees one consistent format. The markup is Hermes'
//! `<tool_call>{"name": …, "arguments": …}</tool_call>` with results in `<tool_response>`:
//! the format of Qwen2.5/Qwen3's own chat templates and of many open fine-tunes, and the
//! first one the text-tool parser knows.

use oi_protocol::models::{ContentItem, ResponseItem, Role, ToolSpec};
use serde_json::Value;

use crate::Prompt;

/// The prompt as sent in text mode: tools in the instructions, none in the request, calls
/// and their outputs as plain messages.
pub(crate) fn render(prompt: &Prompt) -> Prompt {
    let mut out = prompt.clone();
    if prompt.tools.is_empty() {
        return out;
    }
    out.tools = Vec::new();
    out.parallel_tool_calls = false;
    let mut instructions = prompt.instructions.trim_end().to_string();
    instructions.push_str("\n\n");
    instructions.push_str(&tool_section(&prompt.tools));
    out.instructions = instructions;
    out.input = history_as_text(&prompt.input);
    out
}

/// The tools section of the system prompt.
pub(crate) fn tool_section(tools: &[ToolSpec]) -> String {
    let mut s = String::from(
        "# Calling tools\nYou run tools by writing a call in your answer. The tools, as JSON signatures:\n<tools>\n",
    );
    for t in tools {
        // Written out by hand so the name comes first whatever serde_json's key order.
        s.push_str(&format!(
            "{{\"type\": \"function\", \"function\": {{\"name\": {}, \"description\": {}, \"parameters\": {}}}}}\n",
            Value::String(t.name.clone()),
            Value::String(t.description.clone()),
            t.parameters
        ));
    }
    s.push_str(
        "</tools>\nTo call a tool, write a block like this, with the tool's name and its arguments as a JSON object, and then stop:\n<tool_call>\n{\"name\": \"<tool name>\", \"arguments\": {<arguments>}}\n</tool_call>\nThe result comes back in a <tool_response> message. Write several blocks one after another to run several calls in order. A tool runs only when you write the block; describing a call does not run it. When the task is done, answer without a block.",
    );
    s
}

/// A call as the model is taught to write it.
pub(crate) fn call_text(name: &str, arguments: &str) -> String {
    let args: Value = crate::chat::text_tools::json_calls::lenient_json(arguments)
        .unwrap_or_else(|| Value::String(arguments.to_string()));
    format!(
        "<tool_call>\n{{\"name\": {}, \"arguments\": {}}}\n</tool_call>",
        Value::String(name.to_string()),
        args
    )
}

/// Calls become assistant text and their outputs user messages, each run of them merged
/// into one message, so the history alternates as every chat template expects.
fn history_as_text(items: &[ResponseItem]) -> Vec<ResponseItem> {
    let mut out: Vec<ResponseItem> = Vec::new();
    // Whether the last item pushed is text that the next piece of the same role may join.
    let mut open: Option<Role> = None;
    for item in items {
        let (role, text) = match item {
            ResponseItem::FunctionCall {
                name, arguments, ..
            } => (Role::Assistant, call_text(name, arguments)),
            ResponseItem::FunctionCallOutput { output, .. } => {
                let mut text = output.text_content();
                let images = output.images().count();
                if images > 0 {
                    text.push_str(&format!("\n[{images} image(s) left out]"));
                }
                (
                    Role::User,
                    format!("<tool_response>\n{}\n</tool_response>", text.trim_end()),
                )
            }
            // Text messages may be merged with the calls around them; one with an image is
            // kept whole.
            ResponseItem::Message {
                role: role @ (Role::Assistant | Role::User),
                content,
            } if content
                .iter()
                .all(|c| !matches!(c, ContentItem::InputImage { .. })) =>
            {
                let text = item.message_text().unwrap_or_default();
                if open == Some(*role) && append(&mut out, &text) {
                    continue;
                }
                out.push(item.clone());
                open = Some(*role);
                continue;
            }
            ResponseItem::Reasoning { .. } => continue,
            other => {
                out.push(other.clone());
                open = None;
                continue;
            }
        };
        if open == Some(role) && append(&mut out, &text) {
            continue;
        }
        out.push(match role {
            Role::Assistant => ResponseItem::assistant_text(text),
            _ => ResponseItem::user_text(text),
        });
        open = Some(role);
    }
    out
}

/// Appends `text` to the last message, which has only text; false when it cannot.
fn append(out: &mut [ResponseItem], text: &str) -> bool {
    let Some(ResponseItem::Message { content, .. }) = out.last_mut() else {
        return false;
    };
    match content.last_mut() {
        Some(ContentItem::InputText { text: t } | ContentItem::OutputText { text: t }) => {
            if !t.is_empty() {
                t.push_str("\n\n");
            }
            t.push_str(text);
            true
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use oi_protocol::models::FunctionCallOutput;
    use serde_json::json;

    fn prompt() -> Prompt {
        Prompt {
            model: "m".into(),
            instructions: "Be brief.".into(),
            input: vec![
                ResponseItem::developer_text("ctx"),
                ResponseItem::user_text("make a file"),
                ResponseItem::assistant_text("Creating it."),
                ResponseItem::FunctionCall {
                    call_id: "c1".into(),
                    name: "shell".into(),
                    arguments: r#"{"command":["touch","a"]}"#.into(),
                },
                ResponseItem::FunctionCall {
                    call_id: "c2".into(),
                    name: "shell".into(),
                    arguments: r#"{"command":["ls"]}"#.into(),
                },
                ResponseItem::FunctionCallOutput {
                    call_id: "c1".into(),
                    output: FunctionCallOutput::text("exit code 0", true),
                },
                ResponseItem::FunctionCallOutput {
                    call_id: "c2".into(),
                    output: FunctionCallOutput::text("a", true),
                },
                ResponseItem::assistant_text("Done."),
            ],
            tools: vec![ToolSpec {
                name: "shell".into(),
                description: "Runs a command.".into(),
                parameters: json!({"type":"object","properties":{"command":{"type":"array"}}}),
            }],
            parallel_tool_calls: true,
            ..Prompt::default()
        }
    }

    #[test]
    fn tools_move_into_the_instructions_and_calls_into_text() {
        let p = render(&prompt());
        assert!(p.tools.is_empty());
        assert!(p.instructions.starts_with("Be brief.\n\n# Calling tools"));
        assert!(
            p.instructions.contains(
                "{\"type\": \"function\", \"function\": {\"name\": \"shell\", \"description\": \"Runs a command.\", \"parameters\": {"
            ),
            "{}",
            p.instructions
        );
        let texts: Vec<(String, String)> = p
            .input
            .iter()
            .map(|i| match i {
                ResponseItem::Message { role, .. } => {
                    (format!("{role:?}"), i.message_text().unwrap_or_default())
                }
                other => panic!("unexpected {other:?}"),
            })
            .collect();
        assert_eq!(
            texts,
            [
                ("Developer".to_string(), "ctx".to_string()),
                ("User".into(), "make a file".into()),
                (
                    "Assistant".into(),
                    "Creating it.\n\n<tool_call>\n{\"name\": \"shell\", \"arguments\": {\"command\":[\"touch\",\"a\"]}}\n</tool_call>\n\n<tool_call>\n{\"name\": \"shell\", \"arguments\": {\"command\":[\"ls\"]}}\n</tool_call>".into()
                ),
                (
                    "User".into(),
                    "<tool_response>\nexit code 0\n</tool_response>\n\n<tool_response>\na\n</tool_response>".into()
                ),
                ("Assistant".into(), "Done.".into()),
            ]
        );
    }

    #[test]
    fn a_prompt_without_tools_is_unchanged() {
        let mut p = prompt();
        p.tools.clear();
        let r = render(&p);
        assert_eq!(r.input, p.input);
        assert_eq!(r.instructions, p.instructions);
    }
}
