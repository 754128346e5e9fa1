//! Each profile's tool schemas and system prompt. Names, fields and their meaning follow the
//! public definitions of those harnesses' tools; the descriptions and prompts are our own
//! words, written for small models: short, one concrete habit each, no example a model could
//! copy into a real call.

use oi_protocol::config_types::Harness;
use oi_protocol::models::ToolSpec;
use serde_json::{Value, json};

const CODEX_PROMPT: &str = include_str!("../instructions.md");
const CLAUDE_CODE_PROMPT: &str = include_str!("prompts/claude_code.md");
const QWEN_CODE_PROMPT: &str = include_str!("prompts/qwen_code.md");
const KIMI_CODE_PROMPT: &str = include_str!("prompts/kimi_code.md");
const MINIMAL_PROMPT: &str = include_str!("prompts/minimal.md");

/// The default system prompt of `harness` (a resolved one; `auto` reads as `codex`).
pub(crate) fn instructions(harness: Harness) -> &'static str {
    match harness {
        Harness::ClaudeCode => CLAUDE_CODE_PROMPT,
        Harness::QwenCode => QWEN_CODE_PROMPT,
        Harness::KimiCode => KIMI_CODE_PROMPT,
        Harness::Minimal => MINIMAL_PROMPT,
        Harness::Codex | Harness::Auto => CODEX_PROMPT,
    }
}

/// The tools `harness` offers, or `None` for `codex` (whose tools are the engine's own).
pub(crate) fn tool_specs(harness: Harness) -> Option<Vec<ToolSpec>> {
    match harness {
        Harness::ClaudeCode => Some(claude_code()),
        Harness::QwenCode => Some(qwen_code()),
        Harness::KimiCode => Some(kimi_code()),
        Harness::Minimal => Some(minimal()),
        Harness::Codex | Harness::Auto => None,
    }
}

fn spec(name: &str, description: &str, properties: Value, required: &[&str]) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        parameters: json!({
            "type": "object",
            "properties": properties,
            "required": required,
            "additionalProperties": false
        }),
    }
}

fn todo_schema(text_field: &str, statuses: &[&str], extra: Option<(&str, &str)>) -> Value {
    let mut item = json!({
        text_field: {"type": "string", "description": "What the step is."},
        "status": {"type": "string", "enum": statuses}
    });
    let mut required = vec![text_field.to_string(), "status".to_string()];
    if let (Some((name, what)), Some(map)) = (extra, item.as_object_mut()) {
        map.insert(name.into(), json!({"type": "string", "description": what}));
        required.push(name.into());
    }
    json!({
        "todos": {
            "type": "array",
            "description": "The whole list, every time: steps not listed are dropped.",
            "items": {"type": "object", "properties": item, "required": required}
        }
    })
}

/// One tool: the smallest models manage one call shape far better than several.
fn minimal() -> Vec<ToolSpec> {
    vec![spec(
        "bash",
        "Runs a bash command in the working directory and returns its exit code and output. Read files with cat, find them with ls, find and grep, write them with a heredoc.",
        json!({
            "command": {"type": "string", "description": "The command line to run."}
        }),
        &["command"],
    )]
}

fn claude_code() -> Vec<ToolSpec> {
    vec![
        spec(
            "Bash",
            "Runs a bash command in the working directory and returns its exit code and output. Use it for tests, builds, git and anything the other tools do not cover; use Read, Glob and Grep to look at files.",
            json!({
                "command": {"type": "string", "description": "The command line to run."},
                "timeout": {"type": "number", "description": "Milliseconds before the command is stopped (optional)."},
                "description": {"type": "string", "description": "A few words on what the command does."},
                "dangerouslyDisableSandbox": {"type": "boolean", "description": "Ask the user to run this command outside the sandbox; say why in `description`."}
            }),
            &["command"],
        ),
        spec(
            "Read",
            "Returns the text of a file. Read a file before you edit it.",
            json!({
                "file_path": {"type": "string", "description": "Path of the file (absolute, or relative to the working directory)."},
                "offset": {"type": "number", "description": "First line to read, counting from 1 (optional)."},
                "limit": {"type": "number", "description": "How many lines to read (optional)."}
            }),
            &["file_path"],
        ),
        spec(
            "Write",
            "Creates a file, or replaces all of an existing file's text, with `content`. Folders are created as needed.",
            json!({
                "file_path": {"type": "string", "description": "Path of the file."},
                "content": {"type": "string", "description": "The file's complete new text."}
            }),
            &["file_path", "content"],
        ),
        spec(
            "Edit",
            "Replaces `old_string` with `new_string` in a file. `old_string` must be copied exactly from the file (spaces and line breaks included) and appear exactly once, unless `replace_all` is true.",
            json!({
                "file_path": {"type": "string", "description": "Path of the file."},
                "old_string": {"type": "string", "description": "The exact text to replace."},
                "new_string": {"type": "string", "description": "The text to put in its place."},
                "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)."}
            }),
            &["file_path", "old_string", "new_string"],
        ),
        spec(
            "Glob",
            "Lists the files whose path matches a glob pattern such as `**/*.py`.",
            json!({
                "pattern": {"type": "string", "description": "The glob pattern."},
                "path": {"type": "string", "description": "Folder to search in (default: the working directory)."}
            }),
            &["pattern"],
        ),
        spec(
            "Grep",
            "Searches file contents for a regular expression.",
            json!({
                "pattern": {"type": "string", "description": "The regular expression."},
                "path": {"type": "string", "description": "File or folder to search (default: the working directory)."},
                "glob": {"type": "string", "description": "Only files whose name matches this glob, e.g. `*.rs`."},
                "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count"], "description": "`content` prints matching lines, `files_with_matches` (default) the files, `count` matches per file."},
                "-i": {"type": "boolean", "description": "Ignore case."}
            }),
            &["pattern"],
        ),
        spec(
            "TodoWrite",
            "Keeps the list of steps for a task of several steps, and their status. Send the whole list each time.",
            todo_schema(
                "content",
                &["pending", "in_progress", "completed"],
                Some(("activeForm", "The step as an ongoing action.")),
            ),
            &["todos"],
        ),
    ]
}

fn qwen_code() -> Vec<ToolSpec> {
    vec![
        spec(
            "run_shell_command",
            "Runs a command with `bash -c` and returns its exit code and output.",
            json!({
                "command": {"type": "string", "description": "The exact command line to run."},
                "description": {"type": "string", "description": "A short note on what the command does."},
                "directory": {"type": "string", "description": "Folder to run in, relative to the project root (optional)."}
            }),
            &["command"],
        ),
        spec(
            "read_file",
            "Returns the text of a file.",
            json!({
                "absolute_path": {"type": "string", "description": "Path of the file."},
                "offset": {"type": "number", "description": "Line to start at, counting from 0 (optional)."},
                "limit": {"type": "number", "description": "How many lines to read (optional)."}
            }),
            &["absolute_path"],
        ),
        spec(
            "write_file",
            "Writes `content` to a file, creating it (and its folders) or replacing its whole text.",
            json!({
                "file_path": {"type": "string", "description": "Path of the file."},
                "content": {"type": "string", "description": "The complete text to write."}
            }),
            &["file_path", "content"],
        ),
        spec(
            "replace",
            "Replaces text in a file. `old_string` must match the file exactly, whitespace included, with enough surrounding lines to be unique; it is replaced `expected_replacements` times (default 1). Read the file first.",
            json!({
                "file_path": {"type": "string", "description": "Path of the file."},
                "old_string": {"type": "string", "description": "The exact text to replace."},
                "new_string": {"type": "string", "description": "The text to put in its place."},
                "expected_replacements": {"type": "number", "description": "How many occurrences to replace (default 1)."}
            }),
            &["file_path", "old_string", "new_string"],
        ),
        spec(
            "glob",
            "Finds files whose path matches a glob pattern such as `src/**/*.ts`.",
            json!({
                "pattern": {"type": "string", "description": "The glob pattern."},
                "path": {"type": "string", "description": "Folder to search in (default: the project root)."}
            }),
            &["pattern"],
        ),
        spec(
            "search_file_content",
            "Searches file contents for a regular expression and returns the matching lines with their file and line number.",
            json!({
                "pattern": {"type": "string", "description": "The regular expression."},
                "path": {"type": "string", "description": "Folder to search in (default: the project root)."},
                "include": {"type": "string", "description": "Only files matching this glob, e.g. `*.py`."}
            }),
            &["pattern"],
        ),
        spec(
            "list_directory",
            "Lists the files and folders in a folder (folders end with `/`).",
            json!({
                "path": {"type": "string", "description": "The folder."}
            }),
            &["path"],
        ),
        spec(
            "todo_write",
            "Keeps the list of steps for a task of several steps, and their status. Send the whole list each time.",
            todo_schema(
                "content",
                &["pending", "in_progress", "completed"],
                Some(("id", "A short id for the step.")),
            ),
            &["todos"],
        ),
    ]
}

fn kimi_code() -> Vec<ToolSpec> {
    vec![
        spec(
            "Shell",
            "Runs a bash command in the working directory and returns its exit code and output.",
            json!({
                "command": {"type": "string", "description": "The command line to run."},
                "timeout": {"type": "number", "description": "Seconds before the command is stopped (optional)."}
            }),
            &["command"],
        ),
        spec(
            "ReadFile",
            "Returns the text of a file. Read a file before you change it.",
            json!({
                "path": {"type": "string", "description": "Path of the file."},
                "line_offset": {"type": "number", "description": "First line to read, counting from 1 (optional)."},
                "n_lines": {"type": "number", "description": "How many lines to read (optional)."}
            }),
            &["path"],
        ),
        spec(
            "WriteFile",
            "Writes `content` to a file: replaces its text (`mode` \"overwrite\", the default) or adds to its end (\"append\"). The file and its folders are created as needed.",
            json!({
                "path": {"type": "string", "description": "Path of the file."},
                "content": {"type": "string", "description": "The text to write."},
                "mode": {"type": "string", "enum": ["overwrite", "append"]}
            }),
            &["path", "content"],
        ),
        spec(
            "StrReplaceFile",
            "Replaces exact text in a file. Each edit's `old` must be copied exactly from the file and appear once, unless `replace_all` is true.",
            json!({
                "path": {"type": "string", "description": "Path of the file."},
                "edit": {
                    "description": "One edit, or a list of edits applied in order.",
                    "anyOf": [edit_schema(), {"type": "array", "items": edit_schema()}]
                }
            }),
            &["path", "edit"],
        ),
        spec(
            "Glob",
            "Lists the files whose path matches a glob pattern such as `**/*.py`.",
            json!({
                "pattern": {"type": "string", "description": "The glob pattern."},
                "directory": {"type": "string", "description": "Folder to search in (default: the working directory)."}
            }),
            &["pattern"],
        ),
        spec(
            "Grep",
            "Searches file contents for a regular expression.",
            json!({
                "pattern": {"type": "string", "description": "The regular expression."},
                "path": {"type": "string", "description": "File or folder to search (default: the working directory)."},
                "glob": {"type": "string", "description": "Only files whose name matches this glob."},
                "output_mode": {"type": "string", "enum": ["content", "files_with_matches", "count_matches"], "description": "`content` prints matching lines, `files_with_matches` (default) the files, `count_matches` matches per file."},
                "-i": {"type": "boolean", "description": "Ignore case."}
            }),
            &["pattern"],
        ),
        spec(
            "SetTodoList",
            "Keeps the list of steps for a task of several steps, and their status. Send the whole list each time.",
            todo_schema("title", &["pending", "in_progress", "done"], None),
            &["todos"],
        ),
    ]
}

/// One `StrReplaceFile` edit.
fn edit_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "old": {"type": "string", "description": "The exact text to replace."},
            "new": {"type": "string", "description": "The text to put in its place."},
            "replace_all": {"type": "boolean", "description": "Replace every occurrence (default false)."}
        },
        "required": ["old", "new"]
    })
}
