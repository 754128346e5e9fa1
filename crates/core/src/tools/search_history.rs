//! What a stored history says about `tool_search`: its name, and the MCP tools the history
//! loaded with it. A leaf, so a session resuming a thread reads it without the tool.

/// The tool's name.
pub(crate) const TOOL_SEARCH: &str = "tool_search";

/// The MCP tools a stored history had loaded through `tool_search` (or called), so a
/// resumed thread offers them again: the model saw them and may call them.
pub(crate) fn loaded_in_history(
    history: &[oi_protocol::models::ResponseItem],
) -> std::collections::HashSet<String> {
    use oi_protocol::models::ResponseItem;
    let mut searches = std::collections::HashSet::new();
    let mut loaded = std::collections::HashSet::new();
    for item in history {
        match item {
            ResponseItem::FunctionCall { call_id, name, .. } if name == TOOL_SEARCH => {
                searches.insert(call_id.as_str());
            }
            ResponseItem::FunctionCall { name, .. } if name.starts_with("mcp__") => {
                loaded.insert(name.clone());
            }
            ResponseItem::FunctionCallOutput { call_id, output }
                if searches.contains(call_id.as_str()) =>
            {
                for line in output.text_content().lines() {
                    if let Some((name, _)) =
                        line.strip_prefix("- ").and_then(|l| l.split_once(": "))
                        && name.starts_with("mcp__")
                    {
                        loaded.insert(name.to_string());
                    }
                }
            }
            _ => {}
        }
    }
    loaded
}
