//! Prompt files as MCP prompts: `*.md` in `$OPENINTERPRETER_HOME/prompts/` and in the
//! trusted project's `.openinterpreter/prompts/` (the project's wins on a name clash), the
//! same files Codex reads as custom prompts.
//!
//! A file's name without `.md` is the prompt's name; an optional front matter gives its
//! `description` and `argument-hint`. In the body, `$NAME` (capitals, digits, `_`) is an
//! argument the client must give, `$ARGUMENTS` an optional one, `$$` a literal `$`.
//! `prompts/get` returns the body with the arguments filled in, as one user message.
//!
//! Files are read with the bounded reader (a FIFO or device is refused, never waited on),
//! at most [`PROMPT_MAX_BYTES`] each, on the blocking pool.

use crate::engine::PromptFolders;
use crate::protocol::reply::Caching;
use oi_config::project_file::{ProjectFileError, read_text_capped};
use oi_jsonrpc::RpcError;
use rmcp::model::{
    GetPromptResult, ListPromptsResult, Prompt, PromptArgument, PromptMessage, Role,
};
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::SystemTime;

/// The largest prompt file read.
pub const PROMPT_MAX_BYTES: u64 = 64 * 1024;
/// Prompt files listed at most (per folder).
const MAX_FILES: usize = 500;
const OPTIONAL_ARGUMENT: &str = "ARGUMENTS";

/// One prompt file found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptFile {
    pub name: String,
    pub path: PathBuf,
    /// Size and modification time: what changes when the file does.
    pub stamp: (u64, Option<SystemTime>),
}

/// The prompt files of `folders`, by name (the first folder's wins), in name order.
/// Blocking.
pub fn scan_folders(folders: &PromptFolders) -> Vec<PromptFile> {
    let mut found: BTreeMap<String, PromptFile> = BTreeMap::new();
    for folder in &folders.folders {
        let entries = match std::fs::read_dir(folder) {
            Ok(e) => e,
            Err(e) => {
                tracing::debug!("cannot list {}: {e}", folder.display());
                continue;
            }
        };
        let mut names: Vec<(String, PathBuf)> = entries
            .filter_map(Result::ok)
            .filter_map(|e| {
                let path = e.path();
                let name = path.file_name()?.to_str()?.strip_suffix(".md")?.to_string();
                valid_name(&name).then_some((name, path))
            })
            .collect();
        names.sort();
        if names.len() > MAX_FILES {
            tracing::warn!(
                "{} has {} prompt files; serving the first {MAX_FILES} by name",
                folder.display(),
                names.len()
            );
            names.truncate(MAX_FILES);
        }
        for (name, path) in names {
            // `metadata` follows symlinks without opening: a FIFO is seen, not waited on.
            let Ok(meta) = std::fs::metadata(&path) else {
                continue;
            };
            if !meta.is_file() {
                continue;
            }
            let stamp = (meta.len(), meta.modified().ok());
            found
                .entry(name.clone())
                .or_insert(PromptFile { name, path, stamp });
        }
    }
    found.into_values().collect()
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A prompt file read and understood.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptText {
    pub name: String,
    pub description: Option<String>,
    pub argument_hint: Option<String>,
    pub body: String,
    /// The `$NAME`s of the body (required), in order of first use.
    pub required: Vec<String>,
    /// Whether the body uses `$ARGUMENTS`.
    pub takes_arguments: bool,
}

/// Reads and parses `file`. Blocking.
pub fn read_prompt_file(file: &PromptFile) -> Result<PromptText, ProjectFileError> {
    let text = read_text_capped(&file.path, PROMPT_MAX_BYTES)?;
    Ok(parse(&file.name, &text))
}

/// `text` of the prompt file `name`.
pub fn parse(name: &str, text: &str) -> PromptText {
    let (front, body) = split_front_matter(text);
    let mut description = None;
    let mut argument_hint = None;
    for line in front.lines() {
        if let Some((key, value)) = line.split_once(':') {
            let value = value.trim().trim_matches(['"', '\'']).to_string();
            match key.trim() {
                "description" if !value.is_empty() => description = Some(value),
                "argument-hint" | "argument_hint" if !value.is_empty() => {
                    argument_hint = Some(value)
                }
                _ => {}
            }
        }
    }
    let mut required = Vec::new();
    let mut takes_arguments = false;
    for token in placeholders(body) {
        if token == OPTIONAL_ARGUMENT {
            takes_arguments = true;
        } else if !required.contains(&token) {
            required.push(token);
        }
    }
    PromptText {
        name: name.to_string(),
        description,
        argument_hint,
        body: body.to_string(),
        required,
        takes_arguments,
    }
}

/// `(front matter, body)`: the front matter is the lines between a first line `---` and
/// the next `---` line.
fn split_front_matter(text: &str) -> (&str, &str) {
    let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    else {
        return ("", text);
    };
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        if line.trim_end() == "---" {
            return (&rest[..offset], &rest[offset + line.len()..]);
        }
        offset += line.len();
    }
    ("", text)
}

/// The placeholder names of `body`, in order (with repeats).
fn placeholders(body: &str) -> Vec<String> {
    let mut out = Vec::new();
    expand(body, |name| {
        out.push(name.to_string());
        None
    });
    out
}

/// `body` with each `$NAME` replaced by `value(NAME)` (kept as written when it gives
/// `None`), and `$$` by `$`.
fn expand(body: &str, mut value: impl FnMut(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '$' {
            out.push(c);
            continue;
        }
        if matches!(chars.peek(), Some((_, '$'))) {
            chars.next();
            out.push('$');
            continue;
        }
        let start = i + 1;
        let mut end = start;
        let mut first = true;
        while let Some(&(j, n)) = chars.peek() {
            let ok = if first {
                n.is_ascii_uppercase()
            } else {
                n.is_ascii_uppercase() || n.is_ascii_digit() || n == '_'
            };
            if !ok {
                break;
            }
            first = false;
            end = j + n.len_utf8();
            chars.next();
        }
        let name = &body[start..end];
        if name.is_empty() {
            out.push('$');
            continue;
        }
        match value(name) {
            Some(v) => out.push_str(&v),
            None => {
                out.push('$');
                out.push_str(name);
            }
        }
    }
    out
}

/// The prompt as `prompts/list` shows it.
pub fn describe(p: &PromptText) -> Prompt {
    let mut arguments: Vec<PromptArgument> = p
        .required
        .iter()
        .map(|name| PromptArgument::new(name.clone()).with_required(true))
        .collect();
    if p.takes_arguments {
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
    let description = p.description.clone().or_else(|| {
        p.body
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .map(|l| l.trim_start_matches('#').trim().chars().take(120).collect())
    });
    Prompt::new(
        p.name.clone(),
        description,
        (!arguments.is_empty()).then_some(arguments),
    )
}

/// `prompts/list`: every prompt file that reads. Blocking.
pub fn list_prompts(folders: &PromptFolders) -> ListPromptsResult {
    let prompts = scan_folders(folders)
        .iter()
        .filter_map(|f| match read_prompt_file(f) {
            Ok(p) => Some(describe(&p)),
            Err(e) => {
                tracing::warn!("skipping prompt file: {e}");
                None
            }
        })
        .collect();
    let c = Caching::PROMPTS;
    ListPromptsResult::with_all_items(prompts)
        .with_ttl_ms(c.ttl_ms)
        .with_cache_scope(c.scope)
}

/// `prompts/get`: prompt `name` with `arguments` filled in. Blocking.
pub fn get_prompt(
    folders: &PromptFolders,
    name: &str,
    arguments: &Map<String, Value>,
) -> Result<GetPromptResult, RpcError> {
    let files = scan_folders(folders);
    let Some(file) = files.iter().find(|f| f.name == name) else {
        let known: Vec<&str> = files.iter().map(|f| f.name.as_str()).collect();
        return Err(RpcError::invalid_params(
            "prompts/get",
            if known.is_empty() {
                format!(
                    "unknown prompt `{name}`: there are no prompt files (add *.md files to $OPENINTERPRETER_HOME/prompts/)"
                )
            } else {
                format!(
                    "unknown prompt `{name}`; the prompts are: {}",
                    known.join(", ")
                )
            },
        ));
    };
    let prompt = read_prompt_file(file).map_err(|e| {
        RpcError::invalid_params(
            "prompts/get",
            format!("prompt `{name}` cannot be read: {e}"),
        )
    })?;
    let text = fill(&prompt, arguments)?;
    let mut result = GetPromptResult::new(vec![PromptMessage::new_text(Role::User, text)]);
    result.description = describe(&prompt).description;
    Ok(result)
}

/// The body with `arguments` in place: every required one must be given (a string), and
/// nothing else may be.
fn fill(prompt: &PromptText, arguments: &Map<String, Value>) -> Result<String, RpcError> {
    let mut known: BTreeSet<&str> = prompt.required.iter().map(String::as_str).collect();
    if prompt.takes_arguments {
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
    Ok(expand(&prompt.body, |name| {
        if name == OPTIONAL_ARGUMENT {
            return Some(
                arguments
                    .get(name)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string(),
            );
        }
        arguments
            .get(name)
            .and_then(Value::as_str)
            .map(str::to_string)
    }))
}

/// What changes when a prompt file is added, removed or edited. Blocking.
pub fn prompt_fingerprint(
    folders: &PromptFolders,
) -> Vec<(String, PathBuf, (u64, Option<SystemTime>))> {
    scan_folders(folders)
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
        // No placeholders: no arguments, and the body as written (lowercase `$x` is text).
        let plain = parse("plain", "Say $hello to $ and $1.\n");
        assert!(plain.required.is_empty() && !plain.takes_arguments);
        assert_eq!(
            fill(&plain, &Map::new()).unwrap(),
            "Say $hello to $ and $1.\n"
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
        let names: Vec<String> = scan_folders(&folders).into_iter().map(|f| f.name).collect();
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
