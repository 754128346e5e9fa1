//! `tool_search`: when the MCP tools' schemas alone would take more than a set share of a
//! small context window, the model is offered this one tool instead of every schema. It
//! searches the MCP tools by name and description and loads the schemas of the best matches
//! into the tool list of the following requests.

use super::call::{ToolCall, ToolOutcome, parse_args};
use crate::context_window::{estimate_tokens, text_size};
use crate::session::Session;
use oi_protocol::models::ToolSpec;
use serde::Deserialize;
use serde_json::json;

/// The meta-tool's name.
pub(crate) use super::search_history::TOOL_SEARCH;

/// Share of the context window the MCP tools' schemas may take before `tool_search`
/// replaces them.
pub(crate) const MCP_SCHEMA_MAX_PERCENT: i64 = 20;

const DEFAULT_LIMIT: usize = 5;

/// The MCP tool specs to send: all of them when they fit their share of the window, else
/// `tool_search` plus the tools already loaded through it.
pub(crate) fn offered(sess: &Session, mcp: Vec<ToolSpec>, window: i64) -> Vec<ToolSpec> {
    if mcp.is_empty() {
        return mcp;
    }
    let size = serde_json::to_string(&mcp).map_or(0, |s| text_size(&s));
    if estimate_tokens(size) * 100 <= window * MCP_SCHEMA_MAX_PERCENT {
        return mcp;
    }
    let loaded = sess.state().loaded_tools.clone();
    let count = mcp.len();
    let mut out = vec![spec(count)];
    out.extend(mcp.into_iter().filter(|t| loaded.contains(&t.name)));
    out
}

fn spec(count: usize) -> ToolSpec {
    ToolSpec {
        name: TOOL_SEARCH.into(),
        description: format!(
            "Finds tools among {count} more tools from MCP servers (not listed here to save context) and makes the best matches callable from your next step. Describe what you need in a few words, e.g. \"read a web page\" or \"github issues\"."
        ),
        parameters: json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "Words describing the tool you need."},
                "limit": {"type": "number", "description": "How many tools to load (default 5)."}
            },
            "required": ["query"],
            "additionalProperties": false
        }),
    }
}

#[derive(Deserialize)]
struct Args {
    query: String,
    #[serde(default)]
    limit: Option<usize>,
}

/// Run `tool_search`: rank the MCP tools, load the best matches, list them for the model.
pub(crate) fn handle(sess: &Session, call: &ToolCall<'_>, mcp: &[ToolSpec]) -> ToolOutcome {
    let args: Args = match parse_args(TOOL_SEARCH, call.arguments, r#"{"query": "read files"}"#) {
        Ok(a) => a,
        Err(e) => return e,
    };
    let limit = args.limit.unwrap_or(DEFAULT_LIMIT).clamp(1, 20);
    let found = rank(mcp, &args.query, limit);
    if found.is_empty() {
        return ToolOutcome::err(no_match(&args.query, mcp));
    }
    let mut st = sess.state();
    let mut text = String::from("These tools are now available; call them directly:\n");
    for t in &found {
        st.loaded_tools.insert(t.name.clone());
        text.push_str(&format!("- {}: {}\n", t.name, first_line(&t.description)));
    }
    ToolOutcome::ok(text)
}

/// What a search that found nothing answers: that it found nothing, and the servers to
/// search by name (listing every tool would put the whole catalogue back in the window).
fn no_match(query: &str, mcp: &[ToolSpec]) -> String {
    let mut servers: std::collections::BTreeMap<&str, usize> = Default::default();
    for t in mcp {
        let server = t
            .name
            .strip_prefix("mcp__")
            .and_then(|rest| rest.split("__").next())
            .unwrap_or(t.name.as_str());
        *servers.entry(server).or_default() += 1;
    }
    let list: Vec<String> = servers
        .iter()
        .map(|(s, n)| format!("{s} ({n} tool{})", if *n == 1 { "" } else { "s" }))
        .collect();
    format!(
        "no tool matched \"{query}\". Search again with other words, such as what the tool acts on or a server's name: {}",
        list.join(", ")
    )
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// Tools whose name or description share words with `query`, best first: a word in the
/// name counts three times as much as one in the description.
fn rank<'a>(tools: &'a [ToolSpec], query: &str, limit: usize) -> Vec<&'a ToolSpec> {
    let words: Vec<String> = query
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| w.len() >= 2)
        .map(str::to_lowercase)
        .collect();
    let mut scored: Vec<(usize, &ToolSpec)> = tools
        .iter()
        .map(|t| {
            let name = t.name.to_lowercase();
            let desc = t.description.to_lowercase();
            let score = words
                .iter()
                .map(|w| {
                    3 * usize::from(name.contains(w.as_str()))
                        + usize::from(desc.contains(w.as_str()))
                })
                .sum();
            (score, t)
        })
        .filter(|(score, _)| *score > 0)
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.name.cmp(&b.1.name)));
    scored.into_iter().take(limit).map(|(_, t)| t).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::search_history::loaded_in_history;

    fn tool(name: &str, description: &str) -> ToolSpec {
        ToolSpec {
            name: name.into(),
            description: description.into(),
            parameters: json!({"type": "object"}),
        }
    }

    #[test]
    fn a_resumed_history_keeps_what_tool_search_loaded() {
        use oi_protocol::models::{FunctionCallOutput, ResponseItem};
        let history = vec![
            ResponseItem::FunctionCall {
                call_id: "c1".into(),
                name: TOOL_SEARCH.into(),
                arguments: r#"{"query":"issues"}"#.into(),
            },
            ResponseItem::FunctionCallOutput {
                call_id: "c1".into(),
                output: FunctionCallOutput::text(
                    "These tools are now available; call them directly:\n- mcp__gh__list_issues: List issues\n- mcp__gh__get_issue: Get one\n",
                    true,
                ),
            },
            ResponseItem::FunctionCallOutput {
                call_id: "other".into(),
                output: FunctionCallOutput::text(
                    "- mcp__x__not_loaded: printed by a command",
                    true,
                ),
            },
        ];
        let loaded = loaded_in_history(&history);
        let mut names: Vec<&str> = loaded.iter().map(String::as_str).collect();
        names.sort();
        assert_eq!(names, vec!["mcp__gh__get_issue", "mcp__gh__list_issues"]);
    }

    #[test]
    fn no_match_names_servers_not_every_tool() {
        let tools: Vec<ToolSpec> = (0..300)
            .map(|i| tool(&format!("mcp__github__tool_{i}"), "does things"))
            .chain([tool("mcp__docs__search", "search docs")])
            .collect();
        let m = no_match("weather", &tools);
        assert!(m.starts_with("no tool matched \"weather\""), "{m}");
        assert!(
            m.contains("github (300 tools)") && m.contains("docs (1 tool)"),
            "{m}"
        );
        assert!(!m.contains("tool_17"), "{m}");
    }

    #[test]
    fn ranks_name_matches_above_description_matches() {
        let tools = vec![
            tool("mcp__gh__list_issues", "List issues of a repository"),
            tool("mcp__fs__read_file", "Read a file from disk"),
            tool(
                "mcp__web__fetch",
                "Fetch a web page and read it as markdown",
            ),
        ];
        let found: Vec<&str> = rank(&tools, "read file", 5)
            .iter()
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(found, ["mcp__fs__read_file", "mcp__web__fetch"]);
        assert_eq!(rank(&tools, "issues", 1)[0].name, "mcp__gh__list_issues");
        assert!(rank(&tools, "zzz", 5).is_empty());
        assert!(
            rank(&tools, "a", 5).is_empty(),
            "one-letter words match everything"
        );
    }
}
