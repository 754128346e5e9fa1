//! `/export`: the thread as a Markdown document — who said what, and the tools the model
//! ran with what they returned — in the order it happened.

use super::*;
use oi_protocol::models::{ContentItem, ResponseItem, Role};

/// A tool's output longer than this is cut in the export (head kept, the cut said).
const OUTPUT_MAX_CHARS: usize = 20_000;

impl App {
    /// The Markdown of `items` (the thread's history), headed by the thread's title and
    /// facts; `exported_at` is the time to print.
    pub fn export_markdown(&self, items: &[ResponseItem], exported_at: &str) -> String {
        let s = &self.status;
        let title = s
            .thread_name
            .clone()
            .or_else(|| first_user_line(items))
            .unwrap_or_else(|| "Thread".into());
        let mut out = format!("# {title}\n\n");
        out.push_str(&format!("- Thread: `{}`\n", s.thread_id));
        out.push_str(&format!("- Model: {} via {}\n", s.model, s.provider));
        out.push_str(&format!("- Directory: `{}`\n", s.cwd.display()));
        out.push_str(&format!("- Exported: {exported_at}\n"));
        for item in items {
            match item {
                ResponseItem::Message { role, content } => {
                    let text = message_text(content);
                    if text.trim().is_empty() || text.trim_start().starts_with('<') {
                        continue;
                    }
                    match role {
                        Role::User => {
                            out.push_str("\n## You\n\n");
                            out.push_str(Self::shown_user_text(&text).trim_end());
                        }
                        Role::Assistant => {
                            out.push_str("\n## Assistant\n\n");
                            out.push_str(text.trim_end());
                        }
                        _ => continue,
                    }
                    out.push('\n');
                }
                ResponseItem::FunctionCall {
                    name, arguments, ..
                } => {
                    out.push_str(&format!("\n**Tool call** `{name}`\n\n"));
                    out.push_str(&fenced("json", arguments));
                }
                ResponseItem::FunctionCallOutput { output, .. } => {
                    let text = message_text(&output.content);
                    let failed = output.success == Some(false);
                    out.push_str(if failed {
                        "\n**Output** (failed)\n\n"
                    } else {
                        "\n**Output**\n\n"
                    });
                    out.push_str(&fenced("text", &cut(&text)));
                }
                ResponseItem::Reasoning { .. } => {}
            }
        }
        out
    }
}

fn message_text(content: &[ContentItem]) -> String {
    content
        .iter()
        .map(|c| match c {
            ContentItem::InputText { text } | ContentItem::OutputText { text } => text.clone(),
            _ => "[image]".to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

fn first_user_line(items: &[ResponseItem]) -> Option<String> {
    items.iter().find_map(|item| match item {
        ResponseItem::Message {
            role: Role::User,
            content,
        } => {
            let text = message_text(content);
            let line = text.lines().next()?.trim().to_string();
            (!line.is_empty() && !line.starts_with('<')).then_some(line)
        }
        _ => None,
    })
}

/// `text` in a fence longer than any run of backticks inside it.
fn fenced(lang: &str, text: &str) -> String {
    let longest = text.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}{lang}\n{}\n{fence}\n", text.trim_end())
}

fn cut(text: &str) -> String {
    if text.chars().count() <= OUTPUT_MAX_CHARS {
        return text.to_string();
    }
    let head: String = text.chars().take(OUTPUT_MAX_CHARS).collect();
    format!(
        "{head}\n… ({} more characters not exported)",
        text.chars().count() - OUTPUT_MAX_CHARS
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use oi_protocol::models::FunctionCallOutput;

    #[test]
    fn the_export_has_the_messages_and_tool_calls_in_order_and_leaves_context_out() {
        let mut app = App::new(crate::composer::Composer::default());
        app.status.thread_id = "t1".into();
        app.status.model = "m".into();
        app.status.provider = "p".into();
        let items = vec![
            ResponseItem::Message {
                role: Role::User,
                content: vec![ContentItem::InputText {
                    text: "<environment_context>cwd</environment_context>".into(),
                }],
            },
            ResponseItem::user_text("list the files"),
            ResponseItem::FunctionCall {
                call_id: "c1".into(),
                name: "shell".into(),
                arguments: r#"{"command":["ls"]}"#.into(),
            },
            ResponseItem::FunctionCallOutput {
                call_id: "c1".into(),
                output: FunctionCallOutput::text("a.txt\nb.txt", true),
            },
            ResponseItem::FunctionCallOutput {
                call_id: "c2".into(),
                output: FunctionCallOutput::text("no such file", false),
            },
            ResponseItem::Message {
                role: Role::Assistant,
                content: vec![ContentItem::OutputText {
                    text: "Two files.".into(),
                }],
            },
        ];
        let md = app.export_markdown(&items, "now");
        assert!(
            md.starts_with("# list the files\n\n- Thread: `t1`\n- Model: m via p\n"),
            "{md}"
        );
        assert!(!md.contains("environment_context"), "{md}");
        let want = "## You\n\nlist the files\n\n**Tool call** `shell`\n\n```json\n{\"command\":[\"ls\"]}\n```\n\n\
                    **Output**\n\n```text\na.txt\nb.txt\n```\n\n**Output** (failed)\n\n```text\nno such file\n```\n\n\
                    ## Assistant\n\nTwo files.\n";
        assert!(md.ends_with(want), "{md}");
        app.status.thread_name = Some("Named".into());
        assert!(app.export_markdown(&items, "now").starts_with("# Named\n"));
    }

    #[test]
    fn fences_outlast_the_backticks_inside() {
        assert_eq!(fenced("text", "a"), "```text\na\n```\n");
        assert_eq!(fenced("", "x ```` y"), "`````\nx ```` y\n`````\n");
    }
}
