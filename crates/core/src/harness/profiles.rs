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
const CLAUDE_CODE_BARE_PROMPT: &str = include_str!("prompts/claude_code_bare.md");
const ZCODE_PROMPT: &str = include_str!("prompts/zcode.md");
const KIMI_CLI_PROMPT: &str = include_str!("prompts/kimi_cli.md");
const DEEPSEEK_TUI_PROMPT: &str = include_str!("prompts/deepseek_tui.md");
const SWE_AGENT_PROMPT: &str = include_str!("prompts/swe_agent.md");

/// The default system prompt of `harness` (a resolved one; `auto` reads as `codex`).
pub(crate) fn instructions(harness: Harness) -> &'static str {
    match harness {
        Harness::ClaudeCode => CLAUDE_CODE_PROMPT,
        Harness::ClaudeCodeBare => CLAUDE_CODE_BARE_PROMPT,
        Harness::Zcode => ZCODE_PROMPT,
        Harness::QwenCode => QWEN_CODE_PROMPT,
        Harness::KimiCode => KIMI_CODE_PROMPT,
        Harness::KimiCli => KIMI_CLI_PROMPT,
        Harness::DeepseekTui => DEEPSEEK_TUI_PROMPT,
        Harness::SweAgent => SWE_AGENT_PROMPT,
        Harness::Minimal => MINIMAL_PROMPT,
        Harness::Codex | Harness::Auto => CODEX_PROMPT,
    }
}

/// The tools `harness` offers, or `None` for `codex` (whose tools are the engine's own).
pub(crate) fn tool_specs(harness: Harness) -> Option<Vec<ToolSpec>> {
    match harness {
        // Z.AI's harness and the bare variant offer Claude Code's tools; only the prompt differs.
        Harness::ClaudeCode | Harness::ClaudeCodeBare | Harness::Zcode => Some(claude_code()),
        Harness::QwenCode => Some(qwen_code()),
        // kimi-cli's tool set is the one `kimi-code` offers; the prompts differ.
        Harness::KimiCode | Harness::KimiCli => Some(kimi_code()),
        Harness::DeepseekTui => Some(deepseek_tui()),
        Harness::SweAgent => Some(swe_agent()),
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

/// DeepSeek TUI's file, search, shell and checklist tools (its agents, automations, web
/// and git tools are left out: they are not what a coding task needs, and our MCP tools
/// cover the rest).
fn deepseek_tui() -> Vec<ToolSpec> {
    let path = |what: &str| json!({"type": "string", "description": what});
    vec![
        spec(
            "exec_shell",
            "Runs a shell command in the workspace and returns its exit code and output. Use it for tests, builds and git.",
            json!({
                "command": {"type": "string", "description": "The command line to run."},
                "timeout_ms": {"type": "integer", "description": "Milliseconds before the command is stopped (optional)."},
                "cwd": {"type": "string", "description": "Folder to run in, relative to the workspace (optional)."}
            }),
            &["command"],
        ),
        spec(
            "read_file",
            "Returns the text of a file.",
            json!({"path": path("Path of the file, relative to the workspace.")}),
            &["path"],
        ),
        spec(
            "write_file",
            "Creates a file, or replaces all of its text, with `content`. Folders are created as needed.",
            json!({
                "path": path("Path of the file."),
                "content": {"type": "string", "description": "The file's complete new text."}
            }),
            &["path", "content"],
        ),
        spec(
            "edit_file",
            "Replaces the exact text `search` with `replace` in one file. `search` is copied from the file, spaces, indentation and line breaks included, and must appear exactly once.",
            json!({
                "path": path("Path of the file."),
                "search": {"type": "string", "description": "The exact text to replace."},
                "replace": {"type": "string", "description": "The text to put in its place."}
            }),
            &["path", "search", "replace"],
        ),
        spec(
            "list_dir",
            "Lists the entries of a folder (folders end with `/`).",
            json!({"path": path("The folder (default: the workspace).")}),
            &[],
        ),
        spec(
            "grep_files",
            "Searches file contents for a regular expression; returns matching lines with their file and line number.",
            json!({
                "pattern": {"type": "string", "description": "The regular expression."},
                "path": path("File or folder to search (default: the workspace).")
            }),
            &["pattern"],
        ),
        spec(
            "file_search",
            "Finds files whose name contains `query` (or matches it, if it is a glob such as `*.py`).",
            json!({
                "query": {"type": "string", "description": "Part of the file name."},
                "path": path("Folder to search in (default: the workspace).")
            }),
            &["query"],
        ),
        spec(
            "checklist_write",
            "Replaces the checklist of steps for the current task. Send the whole list each time.",
            todo_schema("content", &["pending", "in_progress", "completed"], None),
            &["todos"],
        ),
    ]
}

/// SWE-agent's tools: its windowed file viewer and line-range editor, its searches,
/// `submit`, and `bash`. The viewer's state (the open file, the window) is the session's.
fn swe_agent() -> Vec<ToolSpec> {
    let line = |what: &str| json!({"type": "integer", "description": what});
    vec![
        spec(
            "bash",
            "Runs a bash command in the repository and returns its exit code and output. Use it to run code and tests.",
            json!({"command": {"type": "string", "description": "The command line to run."}}),
            &["command"],
        ),
        spec(
            "open",
            "Opens a file in the viewer and shows a window of 100 numbered lines. With `line_number`, the window shows that line.",
            json!({
                "path": {"type": "string", "description": "Path of the file."},
                "line_number": line("A line to show (optional).")
            }),
            &["path"],
        ),
        spec(
            "goto",
            "Moves the window of the open file to show `line_number`.",
            json!({"line_number": line("The line to show.")}),
            &["line_number"],
        ),
        spec(
            "scroll_down",
            "Moves the window of the open file down by almost a window.",
            json!({}),
            &[],
        ),
        spec(
            "scroll_up",
            "Moves the window of the open file up by almost a window.",
            json!({}),
            &[],
        ),
        spec(
            "create",
            "Creates a new empty file and opens it in the viewer.",
            json!({"filename": {"type": "string", "description": "Path of the new file."}}),
            &["filename"],
        ),
        spec(
            "edit",
            "Replaces lines `start_line` to `end_line` (inclusive, numbered as the viewer shows them) of the open file with `replacement_text`, then shows the changed window. Indent the new lines as the file needs.",
            json!({
                "start_line": line("First line to replace."),
                "end_line": line("Last line to replace."),
                "replacement_text": {"type": "string", "description": "The new lines (empty to delete the range)."}
            }),
            &["start_line", "end_line", "replacement_text"],
        ),
        spec(
            "search_dir",
            "Lists the files under a folder that contain `search_term` (a regular expression).",
            json!({
                "search_term": {"type": "string", "description": "The text to look for."},
                "dir": {"type": "string", "description": "Folder to search (default: the repository)."}
            }),
            &["search_term"],
        ),
        spec(
            "search_file",
            "Shows the lines, with their numbers, of the open file (or `file`) that contain `search_term`.",
            json!({
                "search_term": {"type": "string", "description": "The text to look for."},
                "file": {"type": "string", "description": "Another file to search (default: the open file)."}
            }),
            &["search_term"],
        ),
        spec(
            "find_file",
            "Finds files by name (a glob such as `*.py` works) under a folder.",
            json!({
                "file_name": {"type": "string", "description": "The file name or glob."},
                "dir": {"type": "string", "description": "Folder to search (default: the repository)."}
            }),
            &["file_name"],
        ),
        spec(
            "submit",
            "Says your change is complete. Call it once the fix is made and checked.",
            json!({}),
            &[],
        ),
    ]
}
