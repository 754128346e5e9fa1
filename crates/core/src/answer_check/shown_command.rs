//! A shell command the model wrote as its answer instead of calling the shell tool.
//!
//! Offered a single `bash` tool, the 1.5B model on the real tier wrote its command as text in
//! four of nine unfinished runs (`bash "grep -rn load_settings ."`, a ```` ```bash ```` fence
//! holding `mkdir logs data tmp`), and a retry note rarely turned the text into a call. When
//! such an answer would be sent back anyway (the answer check found the task unfinished),
//! the engine runs the command as the call it names instead: through the same approvals and
//! sandbox as any call, and the model sees its output. This module only reads the answer.

use super::is_question;
use crate::tools::call::is_shell_tool;
use oi_protocol::models::ToolSpec;
use serde_json::{Value, json};

/// Longest lead-in (bytes) before the command: a sentence or two.
const MAX_LEAD_IN: usize = 600;
/// Longest text after the command ("This creates the three folders.").
const MAX_TRAILER: usize = 400;
/// Longest command taken from an answer.
const MAX_COMMAND: usize = 4096;

/// Fence info strings that say "this is shell".
const SHELL_FENCES: &[&str] = &[
    "bash",
    "sh",
    "shell",
    "zsh",
    "console",
    "terminal",
    "shellscript",
];

/// Names models write a shell call under, besides the offered tool's own.
const SHELL_NAMES: &[&str] = &["bash", "shell", "sh"];

/// Commands that start a line of shell (for a fence without an info string, which may hold
/// any language).
const COMMON_COMMANDS: &[&str] = &[
    "awk", "bash", "cat", "cd", "chmod", "cp", "echo", "find", "git", "grep", "head", "ls",
    "mkdir", "mv", "perl", "printf", "python", "python3", "rm", "sed", "sh", "sort", "tail", "tee",
    "touch", "wc",
];

/// The call an answer shows instead of making: the shell tool's name and its arguments
/// (JSON text), or `None` when the answer is not just a command (see the module doc).
///
/// Two shapes count: a pseudo call of the shell (`bash "…"`, `bash('…')`, `shell: […]`,
/// alone or in a fence), which says plainly it meant to call; and a shell fence holding
/// commands — for a question only commands that read (a question's answer may show the
/// user a command to run, and the caller takes one only when the answer was found
/// unfinished).
pub(crate) fn shown_command(
    answer: &str,
    request: &str,
    tools: &[ToolSpec],
) -> Option<(String, String)> {
    let tool = tools
        .iter()
        .find(|t| is_shell_tool(&t.name) && command_key(t).is_some())?;
    // A question answered with nothing but one inline code span holding a command that
    // only reads (recorded in round 16: "`grep -rn load_settings .`" for "which file
    // defines load_settings?"): run to answer it, as such a fence is. A shell's name first
    // is a pseudo call, taken below.
    if let Some(command) = whole_inline_code(answer.trim())
        && is_question(request)
        && starts_with_command(command)
        && only_reads(command)
        && !SHELL_NAMES.contains(&command.split_whitespace().next().unwrap_or_default())
        && command.len() <= MAX_COMMAND
    {
        return Some((tool.name.clone(), arguments(tool, command)?.to_string()));
    }
    let (lead_in, block, trailer) = split_block(answer.trim())?;
    if lead_in.len() > MAX_LEAD_IN || trailer.len() > MAX_TRAILER || trailer.contains("```") {
        return None;
    }
    let command = match block {
        Block::Fence { info, body } => {
            let command = match pseudo_call(body.trim(), &tool.name) {
                Some(command) => command,
                None if SHELL_FENCES.contains(&info.as_str()) => {
                    json_call(body.trim(), &tool.name).or_else(|| commands(body))?
                }
                None if info.is_empty() => commands(body).filter(|c| starts_with_command(c))?,
                None => return None,
            };
            // A question's answer may show a command for the user to run; one that only
            // reads is what the agent runs to answer it (recorded: `grep -rn load_settings .`
            // shown, not run, for "which file defines load_settings?").
            if is_question(request)
                && pseudo_call(body.trim(), &tool.name).is_none()
                && !only_reads(&command)
            {
                return None;
            }
            command
        }
        Block::Line(line) => pseudo_call(line, &tool.name)?,
    };
    let command = command.trim();
    // A bare shell name is the tool's name, not a command (recorded: a fence holding
    // `bash`, run twice, did nothing).
    let bare_shell = command
        .lines()
        .all(|l| SHELL_NAMES.contains(&l.trim()) || l.trim() == tool.name);
    if bare_shell || command.len() > MAX_COMMAND || command.contains("*** Begin Patch") {
        return None;
    }
    Some((tool.name.clone(), arguments(tool, command)?.to_string()))
}

/// A call of the offered shell tool running `command`: the tool's name and arguments.
pub(crate) fn shell_call(tools: &[ToolSpec], command: &str) -> Option<(String, String)> {
    let tool = tools
        .iter()
        .find(|t| is_shell_tool(&t.name) && command_key(t).is_some())?;
    Some((tool.name.clone(), arguments(tool, command)?.to_string()))
}

/// Where a tool takes its command, and whether as a string (else an argv array).
fn command_key(tool: &ToolSpec) -> Option<(&'static str, bool)> {
    let props = tool.parameters.get("properties")?.as_object()?;
    ["command", "cmd"].into_iter().find_map(|key| {
        let ty = props.get(key)?.get("type")?.as_str()?;
        match ty {
            "string" => Some((key, true)),
            "array" => Some((key, false)),
            _ => None,
        }
    })
}

/// The tool's arguments for one command line.
fn arguments(tool: &ToolSpec, command: &str) -> Option<Value> {
    let (key, as_string) = command_key(tool)?;
    let value = if as_string {
        json!(command)
    } else {
        json!(["bash", "-lc", command])
    };
    Some(json!({ key: value }))
}

enum Block<'a> {
    /// A fenced block: its lower-case info string and body.
    Fence { info: String, body: &'a str },
    /// One line outside any fence.
    Line(&'a str),
}

/// The text of an answer that is nothing but one single-backtick code span on one line.
fn whole_inline_code(answer: &str) -> Option<&str> {
    let inner = answer.strip_prefix('`')?.strip_suffix('`')?.trim();
    (!inner.is_empty() && !inner.contains('`') && !inner.contains('\n')).then_some(inner)
}

/// The answer as lead-in, one block, trailer. `None` when it holds more than one fence, or
/// no candidate. Without a fence, the block is the one line that starts with a shell name.
fn split_block(answer: &str) -> Option<(&str, Block<'_>, &str)> {
    if let Some(open) = answer.find("```") {
        let line_end = answer[open..].find('\n').map(|n| open + n)?;
        let info = answer[open + 3..line_end].trim().to_ascii_lowercase();
        let body_start = line_end + 1;
        let close = answer[body_start..].find("```").map(|n| body_start + n);
        let (body, after) = match close {
            Some(c) => (&answer[body_start..c], &answer[c + 3..]),
            None => (&answer[body_start..], ""),
        };
        if info.contains(char::is_whitespace) {
            return None;
        }
        let after = without_made_up_output(after)?;
        return Some((answer[..open].trim(), Block::Fence { info, body }, after));
    }
    let mut at = 0;
    for line in answer.split_inclusive('\n') {
        let t = line.trim();
        if SHELL_NAMES.iter().any(|n| t.starts_with(n)) || t.starts_with('`') {
            let inner = t.trim_matches('`').trim();
            if pseudo_call_shape(inner) {
                let end = at + line.len();
                return Some((
                    answer[..at].trim(),
                    Block::Line(inner),
                    answer[end..].trim(),
                ));
            }
        }
        at += line.len();
    }
    None
}

/// Longest made-up output fence after the command's.
const MAX_SHOWN_OUTPUT: usize = 2000;

/// Fence info strings of shown output.
const OUTPUT_FENCES: &[&str] = &["", "text", "txt", "plaintext", "output"];

/// The text after the command's fence, without one fence of output the model made up for
/// it ("This prints:" and a block of plain text, or a shell fence that holds no command;
/// recorded: `grep -rn load_settings .` then a fence of invented `grep` lines). `None` when
/// more follows than that: another command, code, a second block.
fn without_made_up_output(after: &str) -> Option<&str> {
    let after = after.trim();
    let Some(open) = after.find("```") else {
        return Some(after);
    };
    let rest = &after[open + 3..];
    let (info, body) = rest.split_once('\n')?;
    let info = info.trim().to_ascii_lowercase();
    let (body, tail) = body.split_once("```").unwrap_or((body, ""));
    let output = OUTPUT_FENCES.contains(&info.as_str()) || SHELL_FENCES.contains(&info.as_str());
    let commands = starts_with_command(body.trim()) || body.trim().starts_with("$ ");
    let ok = output && !commands && body.len() <= MAX_SHOWN_OUTPUT && !tail.contains("```");
    // The lead-in of the output ("This prints:") stays the trailer; what follows the block
    // must be short (the trailer's own bound is checked by the caller on the first part).
    (ok && tail.trim().len() <= MAX_TRAILER).then(|| after[..open].trim())
}

/// A line that looks like `name "…"`, `name(…)`, `name: …` or `name grep …` for a shell
/// name.
fn pseudo_call_shape(line: &str) -> bool {
    SHELL_NAMES.iter().any(|n| {
        line.strip_prefix(n).is_some_and(|rest| {
            let rest = rest.trim_start_matches(':').trim_start();
            matches!(rest.chars().next(), Some('"' | '\'' | '(' | '[' | '{'))
                || (rest.len() < line.len() - n.len() && starts_with_command(rest))
        })
    })
}

/// The command of a pseudo call of the shell: `bash "ls -la"`, `bash('ls')`,
/// `shell: ["bash", "-lc", "ls"]`, `bash {"command": "ls"}`. The whole text must be the
/// one call.
fn pseudo_call(text: &str, tool: &str) -> Option<String> {
    if text.contains('\n') {
        return None;
    }
    let rest = std::iter::once(tool)
        .chain(SHELL_NAMES.iter().copied())
        .find_map(|n| text.strip_prefix(n))?;
    // `bash grep -rn x .`: the shell's name before a command (recorded, in backticks, as
    // the whole answer). `bash run.sh` is a command of its own and not this.
    if rest.starts_with(' ') && starts_with_command(rest.trim()) {
        return Some(rest.trim().to_string());
    }
    let mut rest = rest.trim_start_matches(':').trim();
    if let Some(inner) = rest.strip_prefix('(').and_then(|r| r.strip_suffix(')')) {
        rest = inner.trim();
    }
    // `command="…"` inside the parentheses.
    if let Some((key, value)) = rest.split_once('=')
        && matches!(key.trim(), "command" | "cmd")
    {
        rest = value.trim();
    }
    argument_command(rest)
}

/// The command of a whole JSON call of the shell in a shell fence,
/// `{"name": "bash", "arguments": {"command": "…"}}` (recorded: run as a script, it was
/// `bash`'s own syntax error).
fn json_call(text: &str, tool: &str) -> Option<String> {
    let Value::Object(call) = serde_json::from_str::<Value>(text).ok()? else {
        return None;
    };
    let name = call.get("name")?.as_str()?;
    if name != tool && !SHELL_NAMES.contains(&name) {
        return None;
    }
    match call.get("arguments")? {
        Value::String(s) => argument_command(s),
        args => argument_command(&args.to_string()),
    }
}

/// A quoted string, an argv array or an object holding either, as one command line.
fn argument_command(text: &str) -> Option<String> {
    if let Some(inner) = text.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')) {
        return Some(inner.to_string());
    }
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        // Double quotes inside double quotes, unescaped: what is between the outer ones is
        // the command (recorded on the real tier, round 22: `bash "echo "Hello, $(cat
        // name.txt)!" > greeting.txt"`, the note's command copied, and not run).
        return text
            .strip_prefix('"')
            .and_then(|t| t.strip_suffix('"'))
            .filter(|inner| inner.contains('"') && !inner.contains('\n'))
            .map(str::to_string);
    };
    match value {
        Value::String(s) => Some(s),
        Value::Array(items) => argv_command(&items),
        Value::Object(obj) => match obj.get("command").or_else(|| obj.get("cmd"))? {
            Value::String(s) => Some(s.clone()),
            Value::Array(items) => argv_command(items),
            _ => None,
        },
        _ => None,
    }
}

/// An argv list as one command line: `["bash", "-lc", X]` is `X`, anything else is joined
/// with shell quoting.
fn argv_command(items: &[Value]) -> Option<String> {
    let words: Vec<&str> = items.iter().map(Value::as_str).collect::<Option<_>>()?;
    match words.as_slice() {
        [] => None,
        [shell, flag, script]
            if matches!(*shell, "bash" | "sh") && matches!(*flag, "-c" | "-lc") =>
        {
            Some((*script).to_string())
        }
        _ => shlex::try_join(words.iter().copied()).ok(),
    }
}

/// A fence body as the command lines it holds, verbatim (a heredoc's blank lines and `#`
/// lines are content), with `$ ` prompts dropped when every line has one. `None` when only
/// some lines have one: a console fence showing commands and their output.
fn commands(body: &str) -> Option<String> {
    let body = body.trim_matches('\n').trim_end();
    let lines: Vec<&str> = body.lines().filter(|l| !l.trim().is_empty()).collect();
    if lines.is_empty() {
        return None;
    }
    let prompted = lines.iter().filter(|l| l.starts_with("$ ")).count();
    if prompted == 0 {
        // A first line that only names the shell is the fence's language copied into it
        // (recorded: ```` ```bash ```` then `bash`, then `chmod +x run.sh`).
        return Some(match body.split_once('\n') {
            Some((first, rest)) if SHELL_NAMES.contains(&first.trim()) => rest.to_string(),
            _ => body.to_string(),
        });
    }
    if prompted < lines.len() {
        return None;
    }
    Some(
        lines
            .iter()
            .map(|l| l.strip_prefix("$ ").unwrap_or(l))
            .collect::<Vec<_>>()
            .join("\n"),
    )
}

/// Programs that only read (without `-exec`, `-delete` or a redirection). Not `sed` or
/// `awk`: their scripts can write files and run commands.
const READING_PROGRAMS: &[&str] = &[
    "grep", "rg", "find", "ls", "cat", "head", "tail", "wc", "file", "stat", "du", "pwd", "tree",
    "sort", "uniq", "cut", "which", "echo",
];

/// Whether every simple command of `command` runs a program that only reads, with no
/// redirection and no option that writes or runs something else.
fn only_reads(command: &str) -> bool {
    if command.contains('>') || command.contains("$(") || command.contains('`') {
        return false;
    }
    // `bash -c "grep -rn load_settings ."` reads what its script reads (recorded in round
    // 15: that fence, shown for "which file defines load_settings?", was never run).
    if let Some(script) = shell_script(command) {
        return only_reads(script);
    }
    command
        .split(['\n', ';', '&', '|'])
        .map(str::trim)
        .filter(|part| !part.is_empty() && !part.starts_with('#'))
        .all(|part| {
            let mut words = part.split_whitespace();
            let program = words.next().unwrap_or_default();
            READING_PROGRAMS.contains(&program)
                && !words.any(|w| {
                    w.starts_with("-i")
                        || matches!(
                            w,
                            "-exec"
                                | "-execdir"
                                | "-delete"
                                | "-ok"
                                | "-okdir"
                                | "-fprint"
                                | "-fprintf"
                                | "-fls"
                                | "-fprint0"
                        )
                })
        })
}

/// The script of `bash -c "…"` / `sh -lc '…'`, when `command` is only that.
fn shell_script(command: &str) -> Option<&str> {
    let rest = command.trim();
    let rest = ["bash ", "sh "].iter().find_map(|s| rest.strip_prefix(s))?;
    let rest = ["-c ", "-lc "]
        .iter()
        .find_map(|f| rest.trim_start().strip_prefix(f))?;
    let rest = rest.trim();
    let quote = rest.chars().next().filter(|c| matches!(c, '"' | '\''))?;
    let script = rest.strip_prefix(quote)?.strip_suffix(quote)?;
    (!script.contains(quote)).then_some(script)
}

/// Whether a command line starts with a common command.
fn starts_with_command(command: &str) -> bool {
    command
        .lines()
        .next()
        .and_then(|l| l.split_whitespace().next())
        .is_some_and(|w| COMMON_COMMANDS.contains(&w))
}

#[cfg(test)]
mod tests;
