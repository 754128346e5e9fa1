//! Harness profiles (`harness = …`): the tool set and system prompt of the agent harness an
//! open-model family was post-trained in. Qwen3-Coder learned Qwen Code's tools, Kimi K2
//! Kimi CLI's, GLM and others Claude Code's; a model calls the tools it was trained on far
//! more reliably than an unfamiliar set, and string-replace edits are within reach of models
//! that cannot write a valid patch.
//!
//! A profile only changes what the model is *shown*. Every profile tool is interpreted here
//! into one of the engine's primitives ([`Action`]): a command (run by the `shell` tool's
//! path: approvals, the sandbox, `exec_command_*` events), a file change (a planned patch:
//! the same approval, atomic apply and `patch_apply_*` events with real diffs as
//! `apply_patch`) or a todo list (`plan_update`). So approvals, the sandbox, the rollout, MCP
//! tools and every front end work the same whichever profile runs.
//!
//! Tool names of every profile are understood whichever profile is active (a model may call
//! a tool it knows from elsewhere); only the active profile's tools are offered.

mod profiles;
mod read_commands;
pub(crate) mod viewer;

pub(crate) use profiles::{instructions, tool_specs};

use oi_config::Config;
use oi_protocol::config_types::{Harness, WireApi};
use oi_protocol::protocol::PlanStepStatus;
use serde::Deserialize;
use serde_json::Value;
use std::path::PathBuf;
use std::time::Duration;

/// The profile a session with `config` runs: `harness`, or for `auto` the provider's
/// `harness`, else the one for its endpoint and model family ([`for_endpoint`]). Never
/// [`Harness::Auto`].
pub fn resolve(config: &Config) -> Harness {
    match config.harness {
        Harness::Auto => config
            .model_provider
            .harness
            .filter(|h| *h != Harness::Auto)
            .unwrap_or_else(|| for_endpoint(config.model_provider.wire_api, &config.model)),
        chosen => chosen,
    }
}

/// The profile `auto` gives `model` served over `wire`: an Anthropic Messages endpoint is
/// where Claude Code's tools are at home (DeepSeek's gets the bare variant, as by family);
/// any other endpoint goes by the model family ([`for_model`]).
pub fn for_endpoint(wire: WireApi, model: &str) -> Harness {
    match (wire, for_model(model)) {
        (WireApi::Messages, Harness::ClaudeCodeBare) => Harness::ClaudeCodeBare,
        (WireApi::Messages, _) => Harness::ClaudeCode,
        (_, by_family) => by_family,
    }
}

/// The profile `auto` gives a model, by family, from its id (case-insensitive, anywhere in
/// the id, so `qwen2.5-coder:1.5b`, `Qwen/Qwen3-Coder-30B-A3B` and `hf.co/…/qwen…gguf` all
/// count). The table is docs/harness.md's, after the seed system's: the measurements there
/// decide it where a model of the family runs here.
pub fn for_model(model: &str) -> Harness {
    let id = model.to_ascii_lowercase();
    const TABLE: &[(&str, Harness)] = &[
        // Qwen3-Coder is post-trained in Qwen Code; Qwen2.5-Coder measured best there too.
        ("qwen", Harness::QwenCode),
        ("qwq", Harness::QwenCode),
        // Kimi K2 / K2.5 and Kimi-Dev: Kimi's tools.
        ("kimi", Harness::KimiCode),
        ("moonshot", Harness::KimiCode),
        // DeepSeek V3.1+ documents Claude Code as its agent harness; the seed system gives
        // it Claude Code's tools without the long prompt.
        ("deepseek", Harness::ClaudeCodeBare),
        // GLM 4.5+, MiniMax M2 and Claude itself: Claude Code.
        ("glm", Harness::ClaudeCode),
        ("minimax", Harness::ClaudeCode),
        ("claude", Harness::ClaudeCode),
        ("anthropic", Harness::ClaudeCode),
    ];
    let by_family = TABLE
        .iter()
        .find(|(family, _)| id.contains(family))
        .map_or(Harness::Codex, |(_, h)| *h);
    // Measured on Qwen2.5-Coder-1.5B (docs/harness.md): `minimal` did 57% of the everyday
    // tasks, `qwen-code` 2 of 14. The smallest Qwen models get `minimal`.
    match (by_family, billions_of_parameters(&id)) {
        (Harness::QwenCode, Some(b)) if b <= SMALL_MODEL_BILLIONS => Harness::Minimal,
        (by_family, _) => by_family,
    }
}

/// Models of at most this many billion parameters are the smallest (`minimal`'s).
const SMALL_MODEL_BILLIONS: f32 = 3.0;

/// The size an id names as its own part: `1.5b` in `qwen2.5-coder-1.5b-instruct` or
/// `qwen2.5-coder:1.5b`, `30b` in `Qwen3-Coder-30B-A3B` (not `a3b`, the active part of
/// a mixture of experts, nor `2.5` in `qwen2.5`).
fn billions_of_parameters(id: &str) -> Option<f32> {
    id.split(['-', ':', '_', '/', ' ', '@'])
        .filter_map(|part| {
            let number = part.strip_suffix('b')?;
            let digits = number.chars().all(|c| c.is_ascii_digit() || c == '.');
            let starts = number.chars().next().is_some_and(|c| c.is_ascii_digit());
            if digits && starts {
                number.parse::<f32>().ok()
            } else {
                None
            }
        })
        .next()
}

/// Whether a profile gives the model what its request names up front when a turn starts:
/// the files (`named_files`) and the one skill (`skills::preload`). Only the profile for
/// the smallest models, which rarely read a file or load a skill before acting.
pub(crate) fn gives_named_context_up_front(harness: Harness) -> bool {
    harness == Harness::Minimal
}

/// A script whose first line is only a shell's name, with commands after it, without that
/// line: small models copy a fence's language into the command (recorded on the 1.5B model:
/// `"bash\nchmod +x run.sh"`), and a bare `bash` would start a shell reading standard
/// input instead of running the rest.
fn without_language_line(script: String) -> String {
    match script.trim_start().split_once('\n') {
        Some((first, rest))
            if matches!(first.trim(), "bash" | "sh" | "shell" | "zsh")
                && !rest.trim().is_empty() =>
        {
            rest.to_string()
        }
        _ => script,
    }
}

/// What a profile tool call asks the engine to do.
#[derive(Debug, PartialEq)]
pub(crate) enum Action {
    /// Run a command (reads, searches and listings are commands too).
    Command(CommandRequest),
    /// Replace a file's whole content (creating it and its folders if needed).
    Write {
        path: PathBuf,
        content: String,
        /// Kimi's `mode = "append"`: add to the end instead.
        append: bool,
    },
    /// Replace text in a file.
    Replace {
        path: PathBuf,
        edits: Vec<Replacement>,
    },
    /// The model's todo list, shown to the user as a plan.
    Todo(Vec<TodoItem>),
    /// SWE-agent's viewer: show (and move) the window on the open file.
    View(viewer::ViewRequest),
    /// Search the open file (or `file`) for `term`.
    SearchFile { term: String, file: Option<String> },
    /// Replace lines `first..=last` (1-based) of the open file with `text`.
    LineEdit { first: u64, last: u64, text: String },
    /// Create an empty file and open it in the viewer.
    Create(PathBuf),
    /// The model says its work is done.
    Submit,
}

#[derive(Debug, PartialEq)]
pub(crate) struct CommandRequest {
    pub argv: Vec<String>,
    /// Relative to the session's cwd when not absolute.
    pub workdir: Option<String>,
    pub timeout: Option<Duration>,
    /// Asked to run outside the sandbox, with this justification.
    pub escalation: Option<String>,
}

#[derive(Debug, PartialEq)]
pub(crate) struct Replacement {
    pub old: String,
    pub new: String,
    /// How many matches there must be: `None` exactly one, `Some(0)` any number (replace
    /// all), `Some(n)` exactly n.
    pub expected: Option<usize>,
}

#[derive(Debug, PartialEq)]
pub(crate) struct TodoItem {
    pub text: String,
    pub status: PlanStepStatus,
}

/// What kind of primitive a profile tool is.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Kind {
    /// A shell command as a string; `timeout_unit` is what the tool's `timeout` counts.
    Shell {
        timeout_unit: Duration,
    },
    /// `zero_based`: the tool's `offset` counts lines from 0 (Qwen Code's `read_file`).
    Read {
        zero_based: bool,
    },
    Write,
    Edit,
    Glob,
    /// `lines`: without `output_mode`, print matching lines (else the files).
    Grep {
        lines: bool,
    },
    List,
    Todo,
    /// SWE-agent's viewer: `open`, `goto`, `scroll_up`, `scroll_down`, `search_file`.
    View,
    /// SWE-agent's `create`.
    Create,
    /// SWE-agent's `submit`.
    Submit,
}

const MS: Duration = Duration::from_millis(1);
const SECONDS: Duration = Duration::from_secs(1);

/// Every profile tool name and its kind.
fn kind_of(name: &str) -> Option<Kind> {
    Some(match name {
        // Claude Code
        "Bash" => Kind::Shell { timeout_unit: MS },
        "Read" => Kind::Read { zero_based: false },
        "Write" => Kind::Write,
        "Edit" => Kind::Edit,
        "Glob" => Kind::Glob,
        "Grep" => Kind::Grep { lines: false },
        "TodoWrite" => Kind::Todo,
        // Qwen Code
        "run_shell_command" => Kind::Shell { timeout_unit: MS },
        "read_file" => Kind::Read { zero_based: true },
        "write_file" => Kind::Write,
        "replace" | "edit" => Kind::Edit,
        "glob" => Kind::Glob,
        "search_file_content" | "grep_search" => Kind::Grep { lines: true },
        "list_directory" => Kind::List,
        "todo_write" => Kind::Todo,
        // Kimi CLI
        "Shell" => Kind::Shell {
            timeout_unit: SECONDS,
        },
        "ReadFile" => Kind::Read { zero_based: false },
        "WriteFile" => Kind::Write,
        "StrReplaceFile" => Kind::Edit,
        "SetTodoList" => Kind::Todo,
        // minimal, SWE-agent
        "bash" => Kind::Shell { timeout_unit: MS },
        // DeepSeek TUI (`read_file`, `write_file` as Qwen Code's)
        "exec_shell" => Kind::Shell { timeout_unit: MS },
        "edit_file" => Kind::Edit,
        "list_dir" => Kind::List,
        "grep_files" => Kind::Grep { lines: true },
        "file_search" => Kind::Glob,
        "checklist_write" => Kind::Todo,
        // SWE-agent (`edit` with a line range, `bash`)
        "open" | "goto" | "scroll_up" | "scroll_down" | "search_file" => Kind::View,
        "create" => Kind::Create,
        "search_dir" => Kind::Grep { lines: false },
        "find_file" => Kind::Glob,
        "submit" => Kind::Submit,
        _ => return None,
    })
}

/// The command of SWE-agent's `search_file`: the lines of `file` that contain `term`.
pub(crate) fn search_file(term: &str, file: &str) -> CommandRequest {
    read_commands::grep(
        term,
        Some(file),
        None,
        read_commands::GrepOutput::Lines,
        false,
    )
}

/// Whether `name` is a profile tool (of any profile).
pub(crate) fn is_profile_tool(name: &str) -> bool {
    kind_of(name).is_some()
}

/// Whether `name` is a profile's shell tool (its output is laid out as `shell`'s).
pub(crate) fn is_shell_tool(name: &str) -> bool {
    matches!(kind_of(name), Some(Kind::Shell { .. }))
}

/// Whether `name` is a profile's todo tool (the plan, as `update_plan` is).
pub(crate) fn is_todo_tool(name: &str) -> bool {
    matches!(kind_of(name), Some(Kind::Todo))
}

/// Whether `name` only reads (read, glob, grep, list, todo): it cannot change a file.
pub(crate) fn only_reads(name: &str) -> bool {
    matches!(
        kind_of(name),
        Some(
            Kind::Read { .. }
                | Kind::Glob
                | Kind::Grep { .. }
                | Kind::List
                | Kind::Todo
                | Kind::View
                | Kind::Submit
        )
    )
}

/// Why a profile tool call cannot run, worded for the model: what was wrong with the
/// arguments and what to send instead. It goes back to the model as the call's output.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub(crate) struct InvalidCall(pub(crate) String);

impl From<String> for InvalidCall {
    fn from(message: String) -> Self {
        Self(message)
    }
}

/// The engine action of a call to profile tool `name`, or `None` when `name` is no profile
/// tool. `Err` is a message for the model: what was wrong with the arguments and what to send.
pub(crate) fn interpret(name: &str, arguments: &str) -> Option<Result<Action, InvalidCall>> {
    let kind = kind_of(name)?;
    let raw = if arguments.trim().is_empty() {
        "{}"
    } else {
        arguments
    };
    let args: Args = match serde_json::from_str(raw) {
        Ok(a) => a,
        Err(e) => {
            return Some(Err(InvalidCall(format!(
                "invalid arguments for `{name}`: {e}. Send a JSON object with the fields its schema names."
            ))));
        }
    };
    Some(action(name, kind, args))
}

/// The arguments of every profile tool, under every name the profiles give them, so a model
/// that mixes up a neighbour's spelling (`path` for `file_path`) still gets its call run.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Args {
    command: Option<Value>,
    timeout: Option<f64>,
    timeout_ms: Option<f64>,
    description: Option<String>,
    #[serde(alias = "workdir", alias = "dir_path", alias = "cwd", alias = "dir")]
    directory: Option<String>,
    #[serde(rename = "dangerouslyDisableSandbox")]
    disable_sandbox: Option<bool>,
    #[serde(
        alias = "absolute_path",
        alias = "filePath",
        alias = "file",
        alias = "filename"
    )]
    file_path: Option<String>,
    path: Option<String>,
    #[serde(alias = "line_offset")]
    offset: Option<u64>,
    #[serde(alias = "n_lines")]
    limit: Option<u64>,
    content: Option<String>,
    mode: Option<String>,
    #[serde(alias = "old", alias = "search")]
    old_string: Option<String>,
    #[serde(alias = "new", alias = "replace")]
    new_string: Option<String>,
    replace_all: Option<bool>,
    expected_replacements: Option<usize>,
    edit: Option<Value>,
    edits: Option<Value>,
    #[serde(alias = "search_term", alias = "file_name")]
    pattern: Option<String>,
    /// DeepSeek TUI's `file_search`: part of a file name.
    query: Option<String>,
    line_number: Option<u64>,
    start_line: Option<u64>,
    end_line: Option<u64>,
    replacement_text: Option<String>,
    #[serde(alias = "include")]
    glob: Option<String>,
    output_mode: Option<String>,
    #[serde(rename = "-i")]
    ignore_case: Option<bool>,
    case_sensitive: Option<bool>,
    todos: Option<Vec<Value>>,
}

impl Args {
    /// The file or folder the call is about.
    fn target(&self) -> Option<String> {
        self.file_path
            .clone()
            .or_else(|| self.path.clone())
            .filter(|p| !p.trim().is_empty())
    }
}

fn action(name: &str, kind: Kind, a: Args) -> Result<Action, InvalidCall> {
    let need_path = || {
        a.target()
            .ok_or_else(|| format!("`{name}` needs the file's path (`{}`)", path_field(name)))
    };
    match kind {
        Kind::Shell { timeout_unit } => shell(name, timeout_unit, &a),
        Kind::Read { zero_based } => {
            let path = need_path()?;
            let first = a.offset.map(|o| if zero_based { o + 1 } else { o.max(1) });
            Ok(Action::Command(read_commands::read(&path, first, a.limit)))
        }
        Kind::Write => {
            let path = need_path()?;
            let Some(content) = a.content else {
                return Err(InvalidCall(format!(
                    "`{name}` needs `content`: the file's whole new text"
                )));
            };
            Ok(Action::Write {
                path: path.into(),
                content,
                append: a.mode.as_deref() == Some("append"),
            })
        }
        Kind::Edit if a.start_line.is_some() || a.replacement_text.is_some() => {
            // SWE-agent's `edit`: a line range of the open file.
            let (Some(first), Some(text)) = (a.start_line, a.replacement_text.clone()) else {
                return Err(InvalidCall(format!(
                    "`{name}` needs `start_line`, `end_line` and `replacement_text`: the first and last line to replace (as the viewer numbers them) and the new lines"
                )));
            };
            Ok(Action::LineEdit {
                first,
                last: a.end_line.unwrap_or(first),
                text,
            })
        }
        Kind::Edit => {
            let path = need_path()?;
            let edits = replacements(name, &a)?;
            Ok(Action::Replace {
                path: path.into(),
                edits,
            })
        }
        Kind::Glob => glob(name, &a),
        Kind::Grep { lines } => grep(name, lines, &a),
        Kind::List => {
            let dir = a.target().or(a.directory.clone());
            Ok(Action::Command(read_commands::list(dir.as_deref())))
        }
        Kind::View => viewer::request(name, &a).map_err(|e| InvalidCall(e.to_string())),
        Kind::Create => Ok(Action::Create(need_path()?.into())),
        Kind::Submit => Ok(Action::Submit),
        Kind::Todo => {
            let items = a
                .todos
                .unwrap_or_default()
                .iter()
                .filter_map(todo_item)
                .collect();
            Ok(Action::Todo(items))
        }
    }
}

/// A regex's `\b` the model wrote inside a JSON string arrives as a backspace (`"\b"` is
/// JSON's escape for U+0008), which no command means: it is put back as `\b` (recorded on
/// the real tier, round 20: `sed -i 's/\bcompute_total\b/calculate_total/g'` ran as a
/// `sed` matching backspaces, and the rename did nothing, in both runs).
pub(crate) fn word_boundaries_kept(text: String) -> String {
    if text.contains('\u{8}') {
        text.replace('\u{8}', "\\b")
    } else {
        text
    }
}

/// A shell tool's call: its command line (a string, or words to quote), its timeout in the
/// tool's unit, and whether it asks to leave the sandbox.
fn shell(name: &str, timeout_unit: Duration, a: &Args) -> Result<Action, InvalidCall> {
    // A JSON backspace is the regex `\b` it was written as (see `word_boundaries_kept`).
    let kept = |s: &str| word_boundaries_kept(s.to_string());
    let script = match &a.command {
        Some(Value::String(s)) if !s.trim().is_empty() => kept(s),
        Some(Value::Array(words)) if !words.is_empty() => words
            .iter()
            .map(|w| match w {
                Value::String(s) => {
                    let s = kept(s);
                    shlex::try_quote(&s).map_or_else(|_| s.clone(), |q| q.into_owned())
                }
                other => other.to_string(),
            })
            .collect::<Vec<_>>()
            .join(" "),
        _ => {
            return Err(InvalidCall(format!(
                "`{name}` needs `command`: the command line to run, e.g. {{\"command\": \"ls -la\"}}"
            )));
        }
    };
    let timeout = a
        .timeout_ms
        .map(|ms| (ms, MS))
        .or(a.timeout.map(|t| (t, timeout_unit)))
        .filter(|(n, _)| n.is_finite() && *n > 0.0)
        .map(|(n, unit)| unit.mul_f64(n.min(86_400_000.0)));
    Ok(Action::Command(CommandRequest {
        argv: vec!["bash".into(), "-lc".into(), without_language_line(script)],
        workdir: a.directory.clone(),
        timeout,
        escalation: a.disable_sandbox.unwrap_or(false).then(|| {
            a.description.clone().unwrap_or_else(|| {
                "The model asked to run this command outside the sandbox.".into()
            })
        }),
    }))
}

/// A file-name search: a glob, or (`file_search`) part of a name.
fn glob(name: &str, a: &Args) -> Result<Action, InvalidCall> {
    // `file_search`'s `query` is part of a name; a glob in it is taken as one.
    let query = a.query.as_deref().map(str::trim).filter(|q| !q.is_empty());
    let from_query = query.map(|q| {
        if q.contains(['*', '?', '[']) {
            q.to_string()
        } else {
            format!("*{q}*")
        }
    });
    let Some(pattern) = a
        .pattern
        .clone()
        .filter(|p| !p.trim().is_empty())
        .or(from_query)
    else {
        return Err(InvalidCall(match name {
            "find_file" => {
                "`find_file` needs `file_name`, e.g. {\"file_name\": \"setup.py\"}".into()
            }
            "file_search" => "`file_search` needs `query`: part of the file's name".into(),
            _ => format!("`{name}` needs `pattern`, e.g. {{\"pattern\": \"**/*.py\"}}"),
        }));
    };
    let dir = a.directory.clone().or_else(|| a.target());
    Ok(Action::Command(read_commands::glob(
        &pattern,
        dir.as_deref(),
    )))
}

/// A content search: the pattern, what to print (files, lines or counts), and where.
fn grep(name: &str, lines: bool, a: &Args) -> Result<Action, InvalidCall> {
    let Some(pattern) = a.pattern.clone().filter(|p| !p.is_empty()) else {
        return Err(InvalidCall(format!(
            "`{name}` needs `pattern`: the regular expression to search for"
        )));
    };
    let output = match a.output_mode.as_deref() {
        Some("content") => read_commands::GrepOutput::Lines,
        Some("count") | Some("count_matches") => read_commands::GrepOutput::Counts,
        Some(_) => read_commands::GrepOutput::Files,
        None if lines => read_commands::GrepOutput::Lines,
        None => read_commands::GrepOutput::Files,
    };
    let ignore_case = a.ignore_case.unwrap_or(false) || a.case_sensitive == Some(false);
    let dir = a.target().or(a.directory.clone());
    Ok(Action::Command(read_commands::grep(
        &pattern,
        dir.as_deref(),
        a.glob.as_deref(),
        output,
        ignore_case,
    )))
}

/// The field a profile's file tools name the path with, for error messages.
fn path_field(name: &str) -> &'static str {
    match name {
        "read_file" => "absolute_path",
        "ReadFile" | "WriteFile" | "StrReplaceFile" | "edit_file" | "open" => "path",
        "create" => "filename",
        _ => "file_path",
    }
}

/// The edits of an edit call: `old_string`/`new_string` (Claude Code, Qwen Code) or Kimi's
/// `edit` (one `{old, new, replace_all}` or a list of them).
fn replacements(name: &str, a: &Args) -> Result<Vec<Replacement>, InvalidCall> {
    let expected = |replace_all: Option<bool>| match (replace_all, a.expected_replacements) {
        (Some(true), _) => Some(0),
        (_, Some(n)) if n > 1 => Some(n),
        _ => None,
    };
    if let Some(old) = &a.old_string {
        return Ok(vec![Replacement {
            old: old.clone(),
            new: a.new_string.clone().unwrap_or_default(),
            expected: expected(a.replace_all),
        }]);
    }
    let listed = match a.edit.as_ref().or(a.edits.as_ref()) {
        Some(Value::Array(list)) => list.clone(),
        Some(one @ Value::Object(_)) => vec![one.clone()],
        _ => Vec::new(),
    };
    let edits: Vec<Replacement> = listed
        .iter()
        .filter_map(|e| {
            let text = |keys: &[&str]| {
                keys.iter()
                    .find_map(|k| e.get(*k).and_then(Value::as_str))
                    .map(str::to_string)
            };
            Some(Replacement {
                old: text(&["old", "old_string"])?,
                new: text(&["new", "new_string"]).unwrap_or_default(),
                expected: expected(e.get("replace_all").and_then(Value::as_bool)),
            })
        })
        .collect();
    if edits.is_empty() {
        return Err(InvalidCall(format!(
            "`{name}` needs the text to replace and its replacement: {}",
            if name == "StrReplaceFile" {
                "{\"path\": \"…\", \"edit\": {\"old\": \"exact old text\", \"new\": \"new text\"}}"
            } else if name == "edit_file" {
                "{\"path\": \"…\", \"search\": \"exact old text\", \"replace\": \"new text\"}"
            } else {
                "{\"file_path\": \"…\", \"old_string\": \"exact old text\", \"new_string\": \"new text\"}"
            }
        )));
    }
    Ok(edits)
}

/// One step of a todo list or plan, under any of the names the harnesses give its fields.
pub(crate) fn todo_item(v: &Value) -> Option<TodoItem> {
    let text = ["content", "title", "step", "description"]
        .iter()
        .find_map(|k| v.get(*k).and_then(Value::as_str))
        .or_else(|| v.as_str())?
        .to_string();
    let status = match v.get("status").and_then(Value::as_str) {
        Some("in_progress" | "in-progress" | "inProgress" | "doing") => PlanStepStatus::InProgress,
        Some("completed" | "done" | "complete") => PlanStepStatus::Completed,
        _ => PlanStepStatus::Pending,
    };
    Some(TodoItem { text, status })
}

#[cfg(test)]
mod tests;
