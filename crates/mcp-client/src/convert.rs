//! `CallToolResult` JSON → what the model sees.

use oi_protocol::models::{ContentItem, FunctionCallOutput};
use serde_json::Value;

/// Default text budget for one tool result sent to the model.
pub const DEFAULT_RESULT_BUDGET_BYTES: usize = 64 * 1024;

/// Convert a raw MCP `CallToolResult` (`{content, structuredContent?, isError?}`) for the model.
///
/// * `structuredContent` (when present and not null) comes first as compact JSON text; text
///   blocks are kept too, except one that merely repeats the structured JSON.
/// * Blocks keep the server's order (text, image, text stays so).
/// * Images become [`ContentItem::InputImage`] with a `data:` URL.
/// * Audio, embedded resources and links become short text descriptions (resource text is kept).
/// * If the text exceeds `budget_bytes`, it is cut head + tail with `[… N bytes omitted …]`
///   (each run of text between images keeps its share of the budget).
/// * `success` is `false` when `isError` is true.
pub fn call_result_to_output(result: &Value, budget_bytes: usize) -> FunctionCallOutput {
    let success = result.get("isError").and_then(Value::as_bool) != Some(true);
    let structured = result
        .get("structuredContent")
        .filter(|v| !v.is_null())
        .cloned();

    // The server's order is kept: a text that explains the image after it must stay there.
    let mut parts: Vec<Part> = Vec::new();
    if let Some(s) = &structured {
        parts.push(Part::Text(s.to_string()));
    }
    let blocks = result
        .get("content")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    for block in &blocks {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => {
                let text = block
                    .get("text")
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string();
                let repeats_structured = structured.as_ref().is_some_and(|s| {
                    serde_json::from_str::<Value>(&text).is_ok_and(|parsed| &parsed == s)
                });
                if !repeats_structured {
                    parts.push(Part::Text(text));
                }
            }
            Some("image") => {
                let mime = block
                    .get("mimeType")
                    .and_then(Value::as_str)
                    .unwrap_or("image/png");
                match block.get("data").and_then(Value::as_str) {
                    Some(data) => parts.push(Part::Image(format!("data:{mime};base64,{data}"))),
                    None => parts.push(Part::Text(format!("[image ({mime}) without data]"))),
                }
            }
            Some("audio") => {
                let mime = block
                    .get("mimeType")
                    .and_then(Value::as_str)
                    .unwrap_or("audio");
                let len = block
                    .get("data")
                    .and_then(Value::as_str)
                    .map_or(0, str::len);
                parts.push(Part::Text(format!(
                    "[audio content ({mime}, {len} base64 bytes) omitted: audio input is not supported]"
                )));
            }
            Some("resource") => {
                let res = block.get("resource").cloned().unwrap_or(Value::Null);
                let uri = res.get("uri").and_then(Value::as_str).unwrap_or("?");
                if let Some(text) = res.get("text").and_then(Value::as_str) {
                    parts.push(Part::Text(format!("Resource {uri}:\n{text}")));
                } else {
                    let mime = res
                        .get("mimeType")
                        .and_then(Value::as_str)
                        .unwrap_or("application/octet-stream");
                    parts.push(Part::Text(format!(
                        "[binary resource {uri} ({mime}) omitted]"
                    )));
                }
            }
            Some("resource_link") => {
                let uri = block.get("uri").and_then(Value::as_str).unwrap_or("?");
                let name = block.get("name").and_then(Value::as_str).unwrap_or(uri);
                let mut line = format!("Resource link: {name} <{uri}>");
                if let Some(d) = block.get("description").and_then(Value::as_str) {
                    line.push_str(&format!(" — {d}"));
                }
                parts.push(Part::Text(line));
            }
            _ => parts.push(Part::Text(block.to_string())),
        }
    }

    if parts.is_empty() {
        parts.push(Part::Text(if success {
            "(the tool returned no content)".to_string()
        } else {
            "(the tool reported an error without details)".to_string()
        }));
    }

    FunctionCallOutput {
        content: within_budget(parts, budget_bytes),
        success: Some(success),
    }
}

/// One block of a result, in the server's order.
enum Part {
    Text(String),
    Image(String),
}

/// The parts as content items, the text cut to about `budget` bytes. Each run of text between
/// images is joined with newlines; when the whole text is over budget, every run keeps a share
/// of the budget proportional to its size (head and tail), so the order survives the cut.
fn within_budget(parts: Vec<Part>, budget: usize) -> Vec<ContentItem> {
    /// Consecutive texts, or one image.
    enum Run {
        Texts(Vec<String>),
        Image(String),
    }
    let mut runs: Vec<Run> = Vec::new();
    for part in parts {
        match part {
            Part::Text(t) => match runs.last_mut() {
                Some(Run::Texts(texts)) => texts.push(t),
                _ => runs.push(Run::Texts(vec![t])),
            },
            Part::Image(url) => runs.push(Run::Image(url)),
        }
    }
    let text_len = |texts: &Vec<String>| {
        texts.iter().map(String::len).sum::<usize>() + texts.len().saturating_sub(1)
    };
    let total: usize = runs
        .iter()
        .filter_map(|r| match r {
            Run::Texts(texts) => Some(text_len(texts)),
            Run::Image(_) => None,
        })
        .sum();
    let over = total > budget;
    let mut content = Vec::new();
    for run in runs {
        match run {
            Run::Image(image_url) => content.push(ContentItem::InputImage { image_url }),
            Run::Texts(texts) if over => {
                let share = budget.saturating_mul(text_len(&texts)) / total.max(1);
                content.push(ContentItem::InputText {
                    text: truncate_middle(&texts.join("\n"), share),
                });
            }
            Run::Texts(texts) => content.extend(
                texts
                    .into_iter()
                    .map(|text| ContentItem::InputText { text }),
            ),
        }
    }
    content
}

/// Keep about `budget` bytes: the head and the tail, with a note saying how much was cut
/// (the same cut as command output, see [`oi_protocol::truncate`]).
pub fn truncate_middle(text: &str, budget: usize) -> String {
    oi_protocol::truncate::truncate_head_tail(text, budget)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn texts(o: &FunctionCallOutput) -> Vec<String> {
        o.content
            .iter()
            .filter_map(|c| match c {
                ContentItem::InputText { text } => Some(text.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn text_result() {
        let o = call_result_to_output(
            &json!({"content":[{"type":"text","text":"Echo: hi"}]}),
            1000,
        );
        assert_eq!(texts(&o), vec!["Echo: hi"]);
        assert_eq!(o.success, Some(true));
    }

    #[test]
    fn error_result_is_unsuccessful() {
        let o = call_result_to_output(
            &json!({"content":[{"type":"text","text":"Access denied"}],"isError":true}),
            1000,
        );
        assert_eq!(o.success, Some(false));
        assert_eq!(o.text_content(), "Access denied");
    }

    #[test]
    fn structured_content_comes_first_and_text_is_kept() {
        let o = call_result_to_output(
            &json!({"content":[{"type":"text","text":"Weather is sunny"}],
                    "structuredContent":{"temperature":22.5,"conditions":"sunny"}}),
            1000,
        );
        let t = texts(&o);
        assert_eq!(t.len(), 2);
        let parsed: Value = serde_json::from_str(&t[0]).unwrap();
        assert_eq!(parsed["temperature"], 22.5);
        assert_eq!(t[1], "Weather is sunny");
    }

    #[test]
    fn text_that_repeats_structured_json_is_not_duplicated() {
        let s = json!({"a":1,"b":[2]});
        let o = call_result_to_output(
            &json!({"content":[{"type":"text","text":serde_json::to_string_pretty(&s).unwrap()}],
                    "structuredContent":s}),
            1000,
        );
        assert_eq!(texts(&o).len(), 1);
    }

    #[test]
    fn images_become_data_urls() {
        let o = call_result_to_output(
            &json!({"content":[{"type":"text","text":"here"},
                               {"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"}]}),
            1000,
        );
        assert_eq!(
            o.images().collect::<Vec<_>>(),
            vec!["data:image/png;base64,iVBORw0KGgo="]
        );
        assert_eq!(o.text_content(), "here");
    }

    #[test]
    fn text_image_text_keeps_the_servers_order() {
        let o = call_result_to_output(
            &json!({"content":[{"type":"text","text":"before"},
                               {"type":"image","data":"AAAA","mimeType":"image/png"},
                               {"type":"text","text":"after"}]}),
            1000,
        );
        assert_eq!(
            o.content,
            vec![
                ContentItem::InputText {
                    text: "before".into()
                },
                ContentItem::InputImage {
                    image_url: "data:image/png;base64,AAAA".into()
                },
                ContentItem::InputText {
                    text: "after".into()
                },
            ]
        );
        // Over budget, both texts are cut but stay on their side of the image.
        let big = "x".repeat(5000);
        let o = call_result_to_output(
            &json!({"content":[{"type":"text","text":format!("A{big}")},
                               {"type":"image","data":"AAAA","mimeType":"image/png"},
                               {"type":"text","text":format!("B{big}")}]}),
            1000,
        );
        assert_eq!(o.content.len(), 3);
        assert!(
            matches!(&o.content[0], ContentItem::InputText { text } if text.starts_with('A') && text.len() < 700)
        );
        assert!(matches!(&o.content[1], ContentItem::InputImage { .. }));
        assert!(
            matches!(&o.content[2], ContentItem::InputText { text } if text.starts_with('B') && text.len() < 700)
        );
    }

    #[test]
    fn resources_and_links_are_described() {
        let o = call_result_to_output(
            &json!({"content":[
                {"type":"resource","resource":{"uri":"demo://a","text":"hello","mimeType":"text/plain"}},
                {"type":"resource","resource":{"uri":"demo://b","blob":"AAAA","mimeType":"application/zip"}},
                {"type":"resource_link","uri":"demo://c","name":"C"},
                {"type":"audio","data":"AAAA","mimeType":"audio/wav"}]}),
            1000,
        );
        let t = o.text_content();
        assert!(t.contains("Resource demo://a:\nhello"));
        assert!(t.contains("[binary resource demo://b (application/zip) omitted]"));
        assert!(t.contains("Resource link: C <demo://c>"));
        assert!(t.contains("audio content (audio/wav"));
    }

    #[test]
    fn oversize_text_is_cut_head_and_tail_with_note() {
        let big = format!("HEAD{}TAIL", "x".repeat(10_000));
        let o = call_result_to_output(&json!({"content":[{"type":"text","text":big}]}), 1000);
        let t = o.text_content();
        assert!(t.starts_with("HEAD"));
        assert!(t.ends_with("TAIL"));
        assert!(t.contains("bytes omitted"), "{t}");
        assert!(t.len() < 1200);
        let omitted: usize = t
            .split("[... ")
            .nth(1)
            .and_then(|r| r.split(' ').next())
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(omitted, big.len() - 1000);
    }

    #[test]
    fn truncation_respects_char_boundaries() {
        let s = "é".repeat(1000);
        let t = truncate_middle(&s, 101);
        assert!(t.contains("omitted"));
    }

    #[test]
    fn empty_result_says_so() {
        let o = call_result_to_output(&json!({"content":[]}), 100);
        assert_eq!(o.text_content(), "(the tool returned no content)");
        let o = call_result_to_output(&json!({}), 100);
        assert_eq!(o.success, Some(true));
    }
}
