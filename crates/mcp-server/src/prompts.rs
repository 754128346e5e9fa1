//! Prompt files as MCP prompts: the custom prompts of `oi_core::custom_prompts` (the one
//! loader, shared with the TUI's `/prompts:`), served by `prompts/list` and `prompts/get`.
//!
//! In `prompts/list`, each `$NAME` of a body is a required argument and `$ARGUMENTS` (or
//! `$1`…`$9`, which are its words) an optional one. `prompts/get` returns the body with the
//! arguments filled in, as one user message. Files are read on the blocking pool.

use crate::engine::PromptFolders;
use crate::protocol::reply::Caching;
use oi_core::custom_prompts::{self as loader, ALL_ARGUMENTS as OPTIONAL_ARGUMENT, PromptText};
use oi_jsonrpc::RpcError;
use rmcp::model::{
    GetPromptResult, ListPromptsResult, Prompt, PromptArgument, PromptMessage, Role,
};
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::time::SystemTime;

#[cfg(test)]
use loader::{PROMPT_MAX_BYTES, parse, scan_folders as scan};

/// Whether `$ARGUMENTS` is offered: the body uses it or its words (`$1`…`$9`).
fn takes_arguments(p: &PromptText) -> bool {
    p.takes_arguments || p.positional > 0
}

/// The prompt as `prompts/list` shows it.
pub(crate) fn describe(p: &PromptText) -> Prompt {
    let mut arguments: Vec<PromptArgument> = p
        .required
        .iter()
        .map(|name| PromptArgument::new(name.clone()).with_required(true))
        .collect();
    if takes_arguments(p) {
        arguments.push(
            PromptArgument::new(OPTIONAL_ARGUMENT)
                .with_description(
                    p.argument_hint
                        .clone()
                        .unwrap_or_else(|| "Anything to add to the prompt".to_string()),
                )
                .with_required(false),
        );
    }
    let description = p.summary();
    Prompt::new(
        p.name.clone(),
        description,
        (!arguments.is_empty()).then_some(arguments),
    )
}

/// `prompts/list`: every prompt file that reads. Blocking.
pub(crate) fn list_prompts(folders: &PromptFolders) -> ListPromptsResult {
    let (found, errors) = loader::load_all(&folders.folders);
    for (path, e) in errors {
        tracing::warn!("skipping the prompt file {}: {e}", path.display());
    }
    let prompts = found.iter().map(describe).collect();
    let c = Caching::PROMPTS;
    ListPromptsResult::with_all_items(prompts)
        .with_ttl_ms(c.ttl_ms)
        .with_cache_scope(c.scope)
}

/// `prompts/get`: prompt `name` with `arguments` filled in. Blocking.
pub(crate) fn get_prompt(
    folders: &PromptFolders,
    name: &str,
    arguments: &Map<String, Value>,
) -> Result<GetPromptResult, RpcError> {
    let prompt = loader::find(&folders.folders, name)
        .map_err(|e| RpcError::invalid_params("prompts/get", e.to_string()))?;
    let text = fill(&prompt, arguments)?;
    let mut result = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]);
    result.description = describe(&prompt).description;
    Ok(result)
}

/// The body with `arguments` in place: every required one must be given (a string), and
/// nothing else may be.
fn fill(prompt: &PromptText, arguments: &Map<String, Value>) -> Result<String, RpcError> {
    let mut known: BTreeSet<&str> = prompt.required.iter().map(String::as_str).collect();
    if takes_arguments(prompt) {
        known.insert(OPTIONAL_ARGUMENT);
    }
    let mut problems = Vec::new();
    for (key, v) in arguments {
        if !known.contains(key.as_str()) {
            problems.push(format!("unknown argument `{key}`"));
        } else if !v.is_string() {
            problems.push(format!("`{key}` must be a string"));
        }
    }
    for name in &prompt.required {
        if !arguments.contains_key(name) {
            problems.push(format!("the argument `{name}` is required"));
        }
    }
    if !problems.is_empty() {
        let valid: Vec<&str> = known.into_iter().collect();
        return Err(RpcError::invalid_params(
            "prompts/get",
            format!(
                "prompt `{}`: {}. Its arguments: {}.",
                prompt.name,
                problems.join("; "),
                if valid.is_empty() {
                    "none".to_string()
                } else {
                    valid.join(", ")
                }
            ),
        ));
    }
    let all = arguments
        .get(OPTIONAL_ARGUMENT)
        .and_then(Value::as_str)
        .unwrap_or_default();
    // `$1`…`$9` are the words of `ARGUMENTS`, split as the TUI splits them.
    let words = loader::Invocation::parse(all)
        .map(|i| i.positional)
        .unwrap_or_else(|_| all.split_whitespace().map(str::to_string).collect());
    Ok(loader::expand(&prompt.body, |name| {
        if name == OPTIONAL_ARGUMENT {
            return Some(all.to_string());
        }
        if let Ok(n) = name.parse::<usize>() {
            return Some(words.get(n - 1).cloned().unwrap_or_default());
        }
        arguments
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_string)
    }))
}

/// What changes when a prompt file is added, removed or edited. Blocking.
pub(crate) fn prompt_fingerprint(
    folders: &PromptFolders,
) -> Vec<(String, PathBuf, (u64, Option<SystemTime>))> {
    loader::scan_folders(&folders.folders)
        .into_iter()
        .map(|f| (f.name, f.path, f.stamp))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const REVIEW: &str = "---\ndescription: Review a branch\nargument-hint: BRANCH=<name> [notes]\n---\nReview $BRANCH against $BASE. Cost: $$5. $ARGUMENTS\nAgain $BRANCH.\n";

    #[test]
    fn front_matter_and_placeholders() {
        let p = parse("review", REVIEW);
        assert_eq!(p.description.as_deref(), Some("Review a branch"));
        assert_eq!(p.argument_hint.as_deref(), Some("BRANCH=<name> [notes]"));
        assert_eq!(p.required, ["BRANCH", "BASE"]);
        assert!(p.takes_arguments);
        let shown = serde_json::to_value(describe(&p)).unwrap();
        assert_eq!(shown["name"], "review");
        assert_eq!(
            shown["arguments"][0],
            json!({"name": "BRANCH", "required": true})
        );
        assert_eq!(shown["arguments"][2]["required"], false);
    }

    #[test]
    fn filling_checks_every_argument() {
        let p = parse("review", REVIEW);
        let args = json!({"BRANCH": "main", "BASE": "v1", "ARGUMENTS": "be brief"});
        assert_eq!(
            fill(&p, args.as_object().unwrap()).unwrap(),
            "Review main against v1. Cost: $5. be brief\nAgain main.\n"
        );
        let err = fill(&p, json!({"BRANCH": 3, "OTHER": "x"}).as_object().unwrap()).unwrap_err();
        for part in [
            "`BRANCH` must be a string",
            "unknown argument `OTHER`",
            "`BASE` is required",
        ] {
            assert!(err.message.contains(part), "{}", err.message);
        }
        // Lowercase `$x` and a lone `$` are text; `$1` is a word of `ARGUMENTS` (Codex's
        // positional argument), empty when not given.
        let plain = parse("plain", "Say $hello to $ and $1/$2.\n");
        assert!(plain.required.is_empty() && takes_arguments(&plain));
        assert_eq!(
            fill(&plain, &Map::new()).unwrap(),
            "Say $hello to $ and /.\n"
        );
        let args = json!({"ARGUMENTS": "a 'b c'"});
        assert_eq!(
            fill(&plain, args.as_object().unwrap()).unwrap(),
            "Say $hello to $ and a/b c.\n"
        );
    }

    #[test]
    fn folders_are_scanned_in_order_and_with_bounds() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        std::fs::write(a.path().join("same.md"), "from a").unwrap();
        std::fs::write(b.path().join("same.md"), "from b").unwrap();
        std::fs::write(b.path().join("other.md"), "# Other\nbody").unwrap();
        std::fs::write(b.path().join("notes.txt"), "not a prompt").unwrap();
        std::fs::write(b.path().join("bad name.md"), "skipped").unwrap();
        std::fs::write(
            b.path().join("big.md"),
            "x".repeat(PROMPT_MAX_BYTES as usize + 1),
        )
        .unwrap();
        let folders = PromptFolders {
            folders: vec![a.path().to_path_buf(), b.path().to_path_buf()],
        };
        let names: Vec<String> = scan(&folders.folders).into_iter().map(|f| f.name).collect();
        assert_eq!(names, ["big", "other", "same"]);
        let listed = list_prompts(&folders);
        let listed: Vec<&str> = listed.prompts.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(listed, ["other", "same"], "the oversized file is left out");
        let got = get_prompt(&folders, "same", &Map::new()).unwrap();
        assert_eq!(
            serde_json::to_value(&got.messages[0]).unwrap()["content"]["text"],
            "from a"
        );
        let err = get_prompt(&folders, "nope", &Map::new()).unwrap_err();
        assert!(
            err.message.contains("the prompts are: big, other, same"),
            "{}",
            err.message
        );
    }
}
