//! Custom prompts: `*.md` files in `$OPENINTERPRETER_HOME/prompts/` and in the trusted
//! project's `.openinterpreter/prompts/` (the project's wins on a name clash), the files
//! Codex reads from `~/.codex/prompts/` and Claude Code from `.claude/commands/`.
//!
//! The one loader of these files: the TUI runs them as `/prompts:<name> args` and the MCP
//! server serves them as MCP prompts (`prompts/list`, `prompts/get`).
//!
//! A file's name without `.md` is the prompt's name; an optional front matter gives its
//! `description` and `argument-hint`. In the body, `$1`…`$9` are the positional arguments,
//! `$ARGUMENTS` all of them, `$NAME` (capitals, digits, `_`) a named one (`NAME=value`), and
//! `$$` a literal `$`.
//!
//! Files are read with the bounded reader (a FIFO or device is refused, never waited on),
//! at most [`PROMPT_MAX_BYTES`] each. Everything here blocks: call it off async workers.

use oi_config::project_file::{ProjectFileError, read_text_capped};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// The largest prompt file read.
pub const PROMPT_MAX_BYTES: u64 = 64 * 1024;
/// Prompt files listed at most (per folder).
const MAX_FILES: usize = 500;
/// The placeholder that stands for every argument.
pub const ALL_ARGUMENTS: &str = "ARGUMENTS";

/// Where prompt files are, most specific first (see [`oi_config::prompt_folders`]).
/// Blocking.
pub fn prompt_folders(home: &Path, cwd: &Path) -> Vec<PathBuf> {
    match oi_config::prompt_folders(home, cwd) {
        Ok(folders) => folders,
        Err(e) => {
            tracing::warn!("cannot decide where prompt files are: {e}");
            Vec::new()
        }
    }
}

/// One prompt file found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PromptFile {
    /// The file's name without `.md`.
    pub name: String,
    /// Where it is.
    pub path: PathBuf,
    /// Size and modification time: what changes when the file does.
    pub stamp: (u64, Option<SystemTime>),
}

/// The prompt files of `folders`, by name (the first folder's wins), in name order.
/// Blocking.
pub fn scan_folders(folders: &[PathBuf]) -> Vec<PromptFile> {
    let mut found: BTreeMap<String, PromptFile> = BTreeMap::new();
    for folder in folders {
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
                "{} has {} prompt files; using the first {MAX_FILES} by name",
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
    /// The prompt's name (its file's, without `.md`).
    pub name: String,
    /// `description` of the front matter.
    pub description: Option<String>,
    /// `argument-hint` of the front matter.
    pub argument_hint: Option<String>,
    /// The text after the front matter.
    pub body: String,
    /// The named `$NAME`s of the body, in order of first use.
    pub required: Vec<String>,
    /// Whether the body uses `$ARGUMENTS`.
    pub takes_arguments: bool,
    /// The highest `$1`…`$9` the body uses (0: none).
    pub positional: u8,
}

impl PromptText {
    /// The description to show: the front matter's, else the body's first line.
    pub fn summary(&self) -> Option<String> {
        self.description.clone().or_else(|| {
            self.body
                .lines()
                .map(str::trim)
                .find(|l| !l.is_empty())
                .map(|l| l.trim_start_matches('#').trim().chars().take(120).collect())
        })
    }
}

/// Reads and parses `file`. Blocking.
pub fn read_prompt_file(file: &PromptFile) -> Result<PromptText, ProjectFileError> {
    let text = read_text_capped(&file.path, PROMPT_MAX_BYTES)?;
    Ok(parse(&file.name, &text))
}

/// `text` of the prompt file `name`.
pub fn parse(name: &str, text: &str) -> PromptText {
    let (front, body) = split_front_matter(text);
    let fields = front_matter_fields(front);
    let field = |keys: &[&str]| front_matter_field(&fields, keys);
    let mut required = Vec::new();
    let mut takes_arguments = false;
    let mut positional = 0;
    for token in placeholders(body) {
        if token == ALL_ARGUMENTS {
            takes_arguments = true;
        } else if let Some(n) = positional_index(&token) {
            positional = positional.max(n);
        } else if !required.contains(&token) {
            required.push(token);
        }
    }
    PromptText {
        name: name.to_string(),
        description: field(&["description"]),
        argument_hint: field(&["argument-hint", "argument_hint"]),
        body: body.to_string(),
        required,
        takes_arguments,
        positional,
    }
}

/// `1`…`9` as a number.
fn positional_index(token: &str) -> Option<u8> {
    match token.as_bytes() {
        [d @ b'1'..=b'9'] => Some(d - b'0'),
        _ => None,
    }
}

/// `(front matter, body)`: the front matter is the lines between a first line `---` and
/// the next `---` line. Shared with skills (`SKILL.md`).
pub(crate) fn split_front_matter(text: &str) -> (&str, &str) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
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

/// The first non-empty value of [`front_matter_fields`] under any of `keys` (a field's
/// spellings: `argument-hint`, `argument_hint`).
pub(crate) fn front_matter_field(fields: &[(String, String)], keys: &[&str]) -> Option<String> {
    fields
        .iter()
        .find(|(k, v)| keys.contains(&k.as_str()) && !v.is_empty())
        .map(|(_, v)| v.clone())
}

/// The `key: value` lines of a front matter, values unquoted. YAML's block scalars
/// (`key: |` or `>` and indented lines after it) are joined into one line; list items
/// (`- x` under `key:`) are joined with `, `; the keys of a nested mapping (`metadata:` then
/// indented `short-description: …`) are fields of their own. Enough YAML for what SKILL.md
/// and prompt files put there, without a YAML parser.
pub(crate) fn front_matter_fields(front: &str) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    // Whether indented lines continue a block scalar (text) or a mapping/list.
    let mut block = false;
    for line in front.lines() {
        let indented = line.starts_with([' ', '\t']);
        let trimmed = line.trim();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        if indented {
            if !block
                && !trimmed.starts_with("- ")
                && let Some((key, value)) = trimmed.split_once(':')
            {
                out.push((key.trim().to_string(), unquote(value)));
                continue;
            }
            // A continuation of the last key (a block scalar or a list).
            if let Some((_, value)) = out.last_mut() {
                let (item, sep) = match trimmed.strip_prefix("- ") {
                    Some(item) if !block => (unquote(item), ", "),
                    _ => (trimmed.to_string(), " "),
                };
                if !value.is_empty() {
                    value.push_str(sep);
                }
                value.push_str(&item);
            }
            continue;
        }
        if let Some((key, value)) = trimmed.split_once(':') {
            let value = value.trim();
            block = matches!(value, "|" | ">" | "|-" | ">-" | "|+" | ">+");
            let value = if block { String::new() } else { unquote(value) };
            out.push((key.trim().to_string(), value));
        }
    }
    out
}

fn unquote(v: &str) -> String {
    let v = v.trim();
    let stripped = v
        .strip_prefix('"')
        .and_then(|s| s.strip_suffix('"'))
        .or_else(|| v.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')));
    stripped.unwrap_or(v).to_string()
}

/// The placeholder names of `body`, in order (with repeats): `ARGUMENTS`, `NAME`s, `1`…`9`.
pub fn placeholders(body: &str) -> Vec<String> {
    let mut out = Vec::new();
    expand(body, |name| {
        out.push(name.to_string());
        None
    });
    out
}

/// `body` with each placeholder (`$NAME` or `$1`…`$9`) replaced by `value(token)` (kept as
/// written when it gives `None`), and `$$` by `$`.
pub fn expand(body: &str, mut value: impl FnMut(&str) -> Option<String>) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '$' {
            out.push(c);
            continue;
        }
        match chars.peek() {
            Some((_, '$')) => {
                chars.next();
                out.push('$');
                continue;
            }
            Some(&(j, d @ '1'..='9')) => {
                chars.next();
                let token = &body[j..j + d.len_utf8()];
                match value(token) {
                    Some(v) => out.push_str(&v),
                    None => {
                        out.push('$');
                        out.push(d);
                    }
                }
                continue;
            }
            _ => {}
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

/// Why a prompt cannot be sent; its text is the one line the user reads.
#[derive(Debug, thiserror::Error)]
pub enum PromptError {
    /// No prompt file of that name; `known` are the prompts there are.
    #[error("unknown prompt `{name}`{}", known_prompts(.known))]
    Unknown {
        /// The name asked for.
        name: String,
        /// The prompts there are.
        known: Vec<String>,
    },
    /// The file is there but cannot be read (too large, not a regular file...).
    #[error("prompt `{name}` cannot be read: {source}")]
    Unreadable {
        /// The prompt's name.
        name: String,
        /// Why the read failed.
        source: ProjectFileError,
    },
    /// The arguments have a quote that is not closed.
    #[error("cannot split the arguments `{0}`: a quote is not closed")]
    UnclosedQuote(String),
    /// `$NAME` placeholders without a `NAME=value`.
    #[error("the prompt `{name}` needs {}: type `/prompts:{name} {}`", names(.missing), examples(.missing))]
    MissingArguments {
        /// The prompt's name.
        name: String,
        /// The `NAME`s not given.
        missing: Vec<String>,
    },
    /// The blocking task reading the prompt stopped (a panic or shutdown).
    #[error("reading the prompt stopped: {0}")]
    Stopped(String),
}

fn known_prompts(known: &[String]) -> String {
    if known.is_empty() {
        ": there are no prompt files (add *.md files to $OPENINTERPRETER_HOME/prompts/)".into()
    } else {
        format!("; the prompts are: {}", known.join(", "))
    }
}

fn names(missing: &[String]) -> String {
    missing
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn examples(missing: &[String]) -> String {
    missing
        .iter()
        .map(|n| format!("{n}=…"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The arguments typed after `/prompts:<name>`: split like a shell would (quotes group
/// words), `NAME=value` words are named arguments, the others positional.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Invocation {
    /// What was typed after the name, trimmed.
    pub raw: String,
    /// The words that are not `NAME=value`.
    pub positional: Vec<String>,
    /// `NAME=value` words (a name in capitals, as the body writes `$NAME`).
    pub named: BTreeMap<String, String>,
}

impl Invocation {
    /// Splits `args`; an unbalanced quote is an error naming it.
    pub fn parse(args: &str) -> Result<Self, PromptError> {
        let raw = args.trim().to_string();
        let words = shlex::split(&raw).ok_or_else(|| PromptError::UnclosedQuote(raw.clone()))?;
        let mut out = Invocation {
            raw,
            ..Default::default()
        };
        for word in words {
            match word.split_once('=') {
                Some((k, v))
                    if !k.is_empty()
                        && k.starts_with(|c: char| c.is_ascii_uppercase())
                        && k.chars()
                            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_') =>
                {
                    out.named.insert(k.to_string(), v.to_string());
                }
                _ => out.positional.push(word),
            }
        }
        Ok(out)
    }
}

/// The prompt's body with `args` in place: `$1`…`$9` from the positional words (empty when
/// fewer were given), `$ARGUMENTS` everything typed, each `$NAME` from `NAME=value`, which
/// every named placeholder needs (an error lists what is missing and how to give it).
pub fn expand_invocation(prompt: &PromptText, args: &Invocation) -> Result<String, PromptError> {
    let missing: Vec<String> = prompt
        .required
        .iter()
        .filter(|n| !args.named.contains_key(n.as_str()))
        .cloned()
        .collect();
    if !missing.is_empty() {
        return Err(PromptError::MissingArguments {
            name: prompt.name.clone(),
            missing,
        });
    }
    Ok(expand(&prompt.body, |token| {
        if token == ALL_ARGUMENTS {
            return Some(args.raw.clone());
        }
        if let Some(n) = positional_index(token) {
            return Some(
                args.positional
                    .get(usize::from(n) - 1)
                    .cloned()
                    .unwrap_or_default(),
            );
        }
        args.named.get(token).cloned()
    }))
}

/// Every prompt of `folders` that reads, with the files that do not (and why). Blocking.
pub fn load_all(folders: &[PathBuf]) -> (Vec<PromptText>, Vec<(PathBuf, String)>) {
    let mut prompts = Vec::new();
    let mut errors = Vec::new();
    for file in scan_folders(folders) {
        match read_prompt_file(&file) {
            Ok(p) => prompts.push(p),
            Err(e) => errors.push((file.path.clone(), e.to_string())),
        }
    }
    (prompts, errors)
}

/// Finds the prompt `name` in `folders` and reads it; the error names the prompts there
/// are. Blocking.
pub fn find(folders: &[PathBuf], name: &str) -> Result<PromptText, PromptError> {
    let files = scan_folders(folders);
    let Some(file) = files.iter().find(|f| f.name == name) else {
        return Err(PromptError::Unknown {
            name: name.to_string(),
            known: files.iter().map(|f| f.name.clone()).collect(),
        });
    };
    read_prompt_file(file).map_err(|source| PromptError::Unreadable {
        name: name.to_string(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positional_named_and_all_arguments() {
        let p = parse(
            "fix",
            "---\ndescription: \"Fix an issue\"\nargument-hint: ISSUE [notes]\n---\nFix #$1 in $2 ($ARGUMENTS), owner $OWNER, $$5, $3.\n",
        );
        assert_eq!(p.description.as_deref(), Some("Fix an issue"));
        assert_eq!(p.argument_hint.as_deref(), Some("ISSUE [notes]"));
        assert_eq!(p.positional, 3);
        assert!(p.takes_arguments);
        assert_eq!(p.required, ["OWNER"]);
        let args = Invocation::parse("42 \"src/a b.rs\" OWNER=ann").unwrap();
        assert_eq!(args.positional, ["42", "src/a b.rs"]);
        assert_eq!(
            expand_invocation(&p, &args).unwrap(),
            "Fix #42 in src/a b.rs (42 \"src/a b.rs\" OWNER=ann), owner ann, $5, .\n"
        );
        let err = expand_invocation(&p, &Invocation::parse("1").unwrap())
            .unwrap_err()
            .to_string();
        assert!(err.contains("`OWNER`") && err.contains("OWNER=…"), "{err}");
        assert!(Invocation::parse("\"open").is_err());
    }

    #[test]
    fn front_matter_blocks_and_lists() {
        let fields = front_matter_fields(
            "name: pdf\ndescription: >\n  Fill PDF forms\n  when asked: forms.\nmcp-servers:\n  - docs\n  - 'github'\n# a comment\nmetadata:\n  short-description: PDFs\n",
        );
        assert_eq!(
            fields,
            [
                ("name".to_string(), "pdf".to_string()),
                (
                    "description".to_string(),
                    "Fill PDF forms when asked: forms.".to_string()
                ),
                ("mcp-servers".to_string(), "docs, github".to_string()),
                ("metadata".to_string(), String::new()),
                ("short-description".to_string(), "PDFs".to_string()),
            ]
        );
        assert_eq!(split_front_matter("no front\n"), ("", "no front\n"));
        assert_eq!(
            split_front_matter("---\na: b\n---\nbody"),
            ("a: b\n", "body")
        );
    }
}
